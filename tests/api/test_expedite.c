/* SPDX-License-Identifier: MIT */
/*
 * test_expedite.c - system traffic goes first (issue: a shutdown must not
 * starve behind busy producers). An exit signal or a stop that reaches
 * an actor already queued moves it to run next on the stopper's worker,
 * and the wakes an exit issues (the Down its stopper awaits) run next
 * too, past the wake slot's streak limit: on one worker, none of the
 * busy actors queued meanwhile runs between a stop and the Down it
 * brings, whether the target is stopped, traps the exit, or is one of a
 * supervisor's children. SMARM_STAT_EXPEDITED counts the moves. Several
 * workers: a supervisor's shutdown among busy producers moves its
 * children too.
 *
 * The busy actors yield at every turn, so they are always queued; a tick
 * counter tells whether any of them ran. One-worker runs use a long
 * timeslice so that a descheduled test process does not use up the
 * urgent entries' budget (two timeslices) in wall time.
 */
#include "harness.h"

enum { BUSY = 4, KIDS = 20 };

static _Atomic uint64_t ticks;	  /* turns the busy actors took */
static _Atomic bool busy_stop;	  /* the busy actors end */
static _Atomic int between;	  /* ticks between a stop and its Down */
static _Atomic int64_t expedited; /* SMARM_STAT_EXPEDITED at the end */

static void busy(void *arg)
{
	(void)arg;
	while (!atomic_load(&busy_stop)) {
		atomic_fetch_add(&ticks, 1);
		smarm_actor_yield();
	}
}

/* Always queued: yields until it is stopped. */
static void spinner(void *arg)
{
	(void)arg;
	for (;;)
		smarm_actor_yield();
}

/* Traps exits; ends when the exit comes, yielding until then. */
static void trapper(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_signal_t sig;
	(void)arg;
	HARNESS_EQ(smarm_cleanup_push(harness_chan_drop_cb, ch), 0);
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	for (;;) {
		if (smarm_chan_try_recv(ch, &sig) == 0 &&
		    sig.kind == SMARM_SIGNAL_EXIT)
			return;
		smarm_actor_yield();
	}
}

static void start_busy(smarm_pid_t *pids)
{
	atomic_store(&busy_stop, false);
	for (int i = 0; i < BUSY; i++)
		HARNESS_EQ(smarm_actor_spawn(&pids[i], busy, NULL, NULL), 0);
	for (int i = 0; i < 8; i++) /* everyone queued, having run */
		smarm_actor_yield();
}

static void stop_busy(smarm_pid_t *pids)
{
	atomic_store(&busy_stop, true);
	for (int i = 0; i < BUSY; i++)
		HARNESS_EQ(smarm_actor_join(pids[i], NULL, NULL), 0);
}

/* Send target an exit (SHUTDOWN) and await its Down; count the ticks. */
static void stop_and_count(smarm_pid_t target, smarm_chan_t *downs)
{
	smarm_signal_t sig;
	uint64_t before = atomic_load(&ticks);
	HARNESS_EQ(smarm_actor_send_exit(target, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_EQ(harness_recv_sig(downs, &sig), 0);
	atomic_store(&between, (int)(atomic_load(&ticks) - before));
	HARNESS_EQ(sig.kind, SMARM_SIGNAL_DOWN);
	HARNESS_EQ(sig.from.id, target.id);
}

static void one_root(void *arg)
{
	smarm_actor_cb body = (smarm_actor_cb)arg;
	smarm_pid_t pids[BUSY], target;
	smarm_chan_t *downs = harness_sig_chan();
	start_busy(pids);
	HARNESS_EQ(smarm_actor_spawn(&target, body, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_detach(target), 0);
	HARNESS_EQ(smarm_monitor(target, downs, NULL), 0);
	for (int i = 0; i < 8; i++) /* it runs, and waits behind them */
		smarm_actor_yield();
	stop_and_count(target, downs);
	expedited = harness_actor_stat(SMARM_STAT_EXPEDITED);
	stop_busy(pids);
	harness_chan_drop(downs);
}

static void run_one(smarm_actor_cb root, smarm_actor_cb body)
{
	harness_checks_reset();
	atomic_store(&between, -1);
	atomic_store(&expedited, -1);
	ck_assert_int_eq(harness_run_opt(1, SMARM_OPT_TIMESLICE_NS, MS(100),
					 root, (void *)body, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}

/* A stop of a queued actor: it runs next, and its Down wakes us next. */
START_TEST(test_expedite_stop_overtakes_the_queue)
{
	run_one(one_root, spinner);
	ck_assert_int_eq(atomic_load(&between), 0);
	ck_assert_int_ge(atomic_load(&expedited), 1);
}
END_TEST

/* The same for an exit the target traps (a message, not a stop). */
START_TEST(test_expedite_trapped_exit_overtakes_the_queue)
{
	run_one(one_root, trapper);
	ck_assert_int_eq(atomic_load(&between), 0);
	ck_assert_int_ge(atomic_load(&expedited), 1);
}
END_TEST

/* ---------------------------------------------------------- supervisor */

static smarm_pid_t start_sup(smarm_actor_cb kid)
{
	smarm_sup_spec_t *spec = NULL;
	smarm_pid_t sup = { 0 };
	char id[16];
	HARNESS_EQ(smarm_sup_spec_alloc(&spec), 0);
	for (int i = 0; i < KIDS; i++) {
		snprintf(id, sizeof id, "k%d", i);
		HARNESS_EQ(smarm_sup_spec_add_child(spec, id, kid, NULL,
						    SMARM_SUP_PERMANENT,
						    SMARM_SUP_SHUTDOWN_DEFAULT),
			   0);
	}
	HARNESS_EQ(smarm_sup_start(spec, &sup), 0);
	smarm_sup_spec_free(spec);
	return sup;
}

static void sup_root(void *arg)
{
	smarm_actor_cb kid = (smarm_actor_cb)arg;
	smarm_pid_t pids[BUSY], sup;
	smarm_chan_t *downs = harness_sig_chan();
	sup = start_sup(kid);
	HARNESS_EQ(smarm_monitor(sup, downs, NULL), 0);
	start_busy(pids);
	stop_and_count(sup, downs);
	expedited = harness_actor_stat(SMARM_STAT_EXPEDITED);
	stop_busy(pids);
	harness_chan_drop(downs);
}

/*
 * A supervisor's shutdown of children that are always queued: no busy
 * actor runs until the whole tree is down (one worker).
 */
START_TEST(test_expedite_sup_shutdown_overtakes_the_queue)
{
	run_one(sup_root, spinner);
	ck_assert_int_eq(atomic_load(&between), 0);
	ck_assert_int_ge(atomic_load(&expedited), KIDS);
}
END_TEST

START_TEST(test_expedite_sup_shutdown_of_trapping_children)
{
	run_one(sup_root, trapper);
	ck_assert_int_eq(atomic_load(&between), 0);
	ck_assert_int_ge(atomic_load(&expedited), KIDS);
}
END_TEST

/* Several workers (oversubscribed): the shutdown ends, children moved. */
START_TEST(test_expedite_sup_shutdown_on_several_workers)
{
	for (int round = 0; round < 5; round++) {
		harness_checks_reset();
		atomic_store(&expedited, -1);
		ck_assert_int_eq(
			harness_run_ex(4, 0, sup_root, (void *)spinner, NULL),
			SMARM_EXIT_NORMAL);
		harness_checks_assert();
		ck_assert_int_ge(atomic_load(&expedited), 0);
		if (atomic_load(&expedited) > 0)
			return;
	}
	ck_abort_msg("no child was ever moved ahead in 5 shutdowns");
}
END_TEST

Suite *smarm_test_expedite_suite(void)
{
	Suite *s = suite_create("expedite");
	TCase *tc = tcase_create("expedite");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_expedite_stop_overtakes_the_queue);
	tcase_add_test(tc, test_expedite_trapped_exit_overtakes_the_queue);
	tcase_add_test(tc, test_expedite_sup_shutdown_overtakes_the_queue);
	tcase_add_test(tc, test_expedite_sup_shutdown_of_trapping_children);
	tcase_add_test(tc, test_expedite_sup_shutdown_on_several_workers);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(expedite)
