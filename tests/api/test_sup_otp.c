/* SPDX-License-Identifier: MIT */
/*
 * test_sup_otp.c - cases of OTP's supervisor_SUITE, each under its OTP
 * name, that test_supervisor.c does not cover under one_for_one alone:
 *   one_for_all_escalation, rest_for_one_escalation - a supervisor of
 *     each cycling strategy that exceeds its intensity stops every child
 *     (reverse order) and ends SHUTDOWN with SMARM_EINTENSITY;
 *   one_for_all_other_child_fails_restart - a sibling whose start fails
 *     during a restart: the children restarted before it are stopped
 *     again and the restart is tried again (one more restart);
 *   rest_for_one_other_child_fails_restart - the same under
 *     rest_for_one: only the failed child and those after it are tried
 *     again, the ones before it keep running;
 *   child_adm under one_for_all and rest_for_one - dynamic children take
 *     part in the strategy as the spec's children do, and a terminated
 *     child is started again by a sibling's restart that cycles it (as
 *     OTP's start_children does);
 *   sup_start_restart_child_returns_error - restart_child of a child
 *     whose start fails returns that failure and leaves it not running;
 *   sup_start_fail through a nested supervisor - a failed start deep in
 *     a tree fails the top smarm_sup_start with the child's own status;
 *   count_children_supervisor - count_children_ex's four counts and
 *     which_children_ex's types and states;
 *   extra_return - a start's {ok, Pid, Extra} through start_child_spec
 *     and restart_child_ex;
 *   sup_start_child_returns_error - a start_child whose child fails
 *     returns the failure and records nothing;
 *   start_child returning once the child is set up - a supervisor child
 *     takes calls, a trapping worker sees its terminate (init_ack);
 *   count_restarting_children - children whose restarts fail are kept
 *     restarting and retried, counted as workers, not active; calls on
 *     one answer {error, restarting}; each retry counts against the
 *     intensity.
 */
#include "sup_kids.h"

/* A spec of the strategy with children "a", "b", "c" of kids k. */
static smarm_sup_spec_t *spec_of(int strategy, struct kid **k, int n,
				 uint32_t max_restarts)
{
	smarm_sup_spec_t *sp = NULL;
	static const char *ids[] = { "a", "b", "c" };
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_set_strategy(sp, strategy), 0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, max_restarts, MS(60000)),
		   0);
	for (int i = 0; i < n; i++)
		HARNESS_EQ(smarm_sup_spec_add_child(sp, ids[i], kid_body, k[i],
						    SMARM_SUP_PERMANENT,
						    SMARM_SUP_SHUTDOWN_DEFAULT),
			   0);
	return sp;
}

/*
 * Wait until each kid's first start ran: a child without a readiness
 * report counts as started once spawned, before its body has run.
 */
static void kids_await_first(struct kid **k, int n)
{
	for (int i = 0; i < n; i++)
		HARNESS_CHECK(kid_await(&k[i]->starts, 1));
}

static void kids_free(struct kid **k, int n)
{
	for (int i = 0; i < n; i++)
		free(k[i]);
}

/* ------------------------------------------------------- escalation */

/*
 * Intensity 1: b is crashed twice. The first crash is one restart (the
 * strategy's siblings cycle with b); the second is one too many: the
 * supervisor stops the running children, last started first, and ends
 * CRASHED with SMARM_EINTENSITY. want_starts: starts of a, b, c after
 * the first restart; end_order: the end log from the second crash on.
 */
static void run_escalation(int strategy, const int *want_starts,
			   const int *end_order)
{
	struct kid *k[3] = { kid_new(1, KID_PARK), kid_new(2, KID_PARK),
			     kid_new(3, KID_PARK) };
	smarm_sup_spec_t *sp = spec_of(strategy, k, 3, 1);
	smarm_chan_t *ch = sig_chan();
	smarm_signal_t s = { 0 };
	smarm_pid_t sup;
	int64_t restarts0 = sup_stat(SMARM_STAT_SUP_RESTARTS);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	HARNESS_EQ(smarm_monitor(sup, ch, NULL), 0);
	kids_await_first(k, 3);
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(k[1]), SMARM_EXIT_CRASHED, 1),
		   0);
	for (int i = 0; i < 3; i++)
		HARNESS_CHECK(kid_await(&k[i]->starts, want_starts[i]));
	HARNESS_CHECK(smarm_actor_is_alive(sup));
	kid_log_reset();
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(k[1]), SMARM_EXIT_CRASHED, 1),
		   0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(s.reason, SMARM_EINTENSITY);
	/* every child ended before the supervisor did; none restarted */
	HARNESS_EQ(atomic_load(&kid_log_n), 3);
	for (int i = 0; i < 3; i++) {
		HARNESS_EQ(atomic_load(&kid_log[i]), end_order[i]);
		HARNESS_EQ(atomic_load(&k[i]->starts), want_starts[i]);
	}
	HARNESS_EQ(sup_stat(SMARM_STAT_SUP_RESTARTS) - restarts0, 1);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_CHECK(sup_await(SMARM_STAT_LINKS, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_MONITORS, 0));
	harness_chan_drop(ch);
	kids_free(k, 3);
}

static void root_one_for_all_escalation(void *arg)
{
	static const int starts[] = { 2, 2, 2 };
	static const int order[] = { 2, 3, 1 }; /* b crashed; then c, a */
	(void)arg;
	run_escalation(SMARM_SUP_ONE_FOR_ALL, starts, order);
}

static void root_rest_for_one_escalation(void *arg)
{
	static const int starts[] = { 1, 2, 2 };
	static const int order[] = { 2, 3, 1 };
	(void)arg;
	run_escalation(SMARM_SUP_REST_FOR_ONE, starts, order);
}

START_TEST(test_sup_otp_one_for_all_escalation)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_one_for_all_escalation, NULL),
			 0);
	harness_checks_assert();
}
END_TEST

START_TEST(test_sup_otp_rest_for_one_escalation)
{
	harness_checks_reset();
	ck_assert_int_eq(
		harness_run(_i + 1, root_rest_for_one_escalation, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------- another child fails its restart */

/*
 * a parks; b's second start fails (once its gate opens). a is crashed:
 * the restart starts a again, then b, which fails. one_for_all: a's new
 * tenancy is stopped (a shutdown) and both start a third time.
 * rest_for_one: a's new tenancy keeps running; only b starts again.
 */
static void run_other_child_fails(int strategy)
{
	bool all = strategy == SMARM_SUP_ONE_FOR_ALL;
	struct kid *k[2] = { kid_new(1, KID_PARK),
			     kid_new(2, KID_FAIL_ON_SECOND) };
	smarm_sup_spec_t *sp = spec_of(strategy, k, 2, 10);
	smarm_chan_t *ch = sig_chan();
	smarm_signal_t s = { 0 };
	smarm_pid_t sup, a2;
	size_t specs = 0, active = 0;
	int64_t restarts0 = sup_stat(SMARM_STAT_SUP_RESTARTS);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "b", MS(10000)), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	kids_await_first(k, 2);
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(k[0]), SMARM_EXIT_CRASHED, 1),
		   0);
	/* a runs again; b's second start waits for its gate */
	HARNESS_CHECK(kid_await(&k[0]->starts, 2));
	HARNESS_CHECK(kid_await(&k[1]->starts, 2));
	a2 = kid_pid(k[0]);
	HARNESS_EQ(smarm_monitor(a2, ch, NULL), 0);
	atomic_store(&k[1]->gate, 1);
	HARNESS_CHECK(kid_await(&k[1]->starts, 3));
	if (all) {
		HARNESS_EQ(harness_recv_sig(ch, &s), 0);
		HARNESS_CHECK(smarm_pid_eq(s.from, a2));
		HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN); /* stopped again */
		HARNESS_CHECK(kid_await(&k[0]->starts, 3));
	} else {
		smarm_actor_sleep(MS(50));
		HARNESS_EQ(harness_chan_len(ch), 0);
		HARNESS_CHECK(smarm_actor_is_alive(a2));
		HARNESS_EQ(atomic_load(&k[0]->starts), 2);
	}
	/* the failed start was one restart more */
	HARNESS_EQ(sup_stat(SMARM_STAT_SUP_RESTARTS) - restarts0, 2);
	HARNESS_EQ(smarm_sup_count_children(sup, &specs, &active, MS(5000)), 0);
	HARNESS_EQ(specs, 2);
	HARNESS_EQ(active, 2);
	HARNESS_EQ(atomic_load(&k[1]->starts), 3);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	harness_chan_drop(ch);
	kids_free(k, 2);
}

static void root_one_for_all_other_fails(void *arg)
{
	(void)arg;
	run_other_child_fails(SMARM_SUP_ONE_FOR_ALL);
}

static void root_rest_for_one_other_fails(void *arg)
{
	(void)arg;
	run_other_child_fails(SMARM_SUP_REST_FOR_ONE);
}

START_TEST(test_sup_otp_one_for_all_other_child_fails_restart)
{
	harness_checks_reset();
	ck_assert_int_eq(
		harness_run(_i + 1, root_one_for_all_other_fails, NULL), 0);
	harness_checks_assert();
}
END_TEST

START_TEST(test_sup_otp_rest_for_one_other_child_fails_restart)
{
	harness_checks_reset();
	ck_assert_int_eq(
		harness_run(_i + 1, root_rest_for_one_other_fails, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------ child_adm, other strategies */

/* Crash the child of kid k and wait for the starts each kid then has. */
static void crash_and_await(struct kid *k, struct kid **all, const int *want,
			    int n)
{
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(k), SMARM_EXIT_CRASHED, 1), 0);
	for (int i = 0; i < n; i++)
		HARNESS_CHECK(kid_await(&all[i]->starts, want[i]));
	smarm_actor_sleep(MS(20)); /* nothing more happens */
	for (int i = 0; i < n; i++)
		HARNESS_EQ(atomic_load(&all[i]->starts), want[i]);
}

/*
 * Spec children a, b; a dynamic child d after them. Under one_for_all a
 * crash of any of them cycles all three; under rest_for_one a crash of
 * a cycles all, a crash of d only d. A terminated d is started again by
 * a restart that cycles it; a deleted one is gone for good.
 */
static void run_child_adm(int strategy)
{
	bool all = strategy == SMARM_SUP_ONE_FOR_ALL;
	struct kid *k[3] = { kid_new(1, KID_PARK), kid_new(2, KID_PARK),
			     kid_new(3, KID_PARK) };
	smarm_sup_spec_t *sp = spec_of(strategy, k, 2, 100);
	smarm_sup_child_t items[4];
	smarm_pid_t sup, d;
	size_t n = 0, active = 0;
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	kids_await_first(k, 2);
	HARNESS_EQ(smarm_sup_start_child(
			   sup, "d", kid_body, k[2], SMARM_SUP_PERMANENT,
			   SMARM_SUP_SHUTDOWN_DEFAULT, MS(5000), &d),
		   0);
	HARNESS_CHECK(kid_await(&k[2]->starts, 1));
	HARNESS_CHECK(smarm_pid_eq(d, kid_pid(k[2])));
	{
		/* the dynamic child's crash */
		const int w_all[] = { 2, 2, 2 }, w_rest[] = { 1, 1, 2 };
		crash_and_await(k[2], k, all ? w_all : w_rest, 3);
	}
	{
		/* the first spec child's crash cycles d too */
		const int w_all[] = { 3, 3, 3 }, w_rest[] = { 2, 2, 3 };
		crash_and_await(k[0], k, all ? w_all : w_rest, 3);
	}
	HARNESS_EQ(smarm_sup_which_children(sup, items, 4, &n, MS(5000)), 0);
	HARNESS_EQ(n, 3);
	HARNESS_EQ(strcmp(items[2].id, "d"), 0);
	HARNESS_CHECK(smarm_pid_eq(items[2].pid, kid_pid(k[2])));

	/* terminated: not running, still a spec; b's restart starts it */
	HARNESS_EQ(smarm_sup_terminate_child(sup, "d", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_count_children(sup, &n, &active, MS(5000)), 0);
	HARNESS_EQ(n, 3);
	HARNESS_EQ(active, 2);
	{
		const int w_all[] = { 4, 4, 4 }, w_rest[] = { 2, 3, 4 };
		crash_and_await(k[1], k, all ? w_all : w_rest, 3);
	}
	HARNESS_EQ(smarm_sup_count_children(sup, &n, &active, MS(5000)), 0);
	HARNESS_EQ(active, 3);

	/* deleted: a later restart does not bring it back */
	HARNESS_EQ(smarm_sup_delete_child(sup, "d", MS(5000)), SMARM_ESTATE);
	HARNESS_EQ(smarm_sup_terminate_child(sup, "d", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_delete_child(sup, "d", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_restart_child(sup, "d", MS(5000), NULL),
		   SMARM_ENOENT);
	{
		const int w_all[] = { 5, 5, 4 }, w_rest[] = { 3, 4, 4 };
		crash_and_await(k[0], k, all ? w_all : w_rest, 3);
	}
	HARNESS_EQ(smarm_sup_count_children(sup, &n, &active, MS(5000)), 0);
	HARNESS_EQ(n, 2);
	HARNESS_EQ(active, 2);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	kids_free(k, 3);
}

static void root_child_adm_one_for_all(void *arg)
{
	(void)arg;
	run_child_adm(SMARM_SUP_ONE_FOR_ALL);
}

static void root_child_adm_rest_for_one(void *arg)
{
	(void)arg;
	run_child_adm(SMARM_SUP_REST_FOR_ONE);
}

START_TEST(test_sup_otp_child_adm_one_for_all)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_child_adm_one_for_all, NULL),
			 0);
	harness_checks_assert();
}
END_TEST

START_TEST(test_sup_otp_child_adm_rest_for_one)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_child_adm_rest_for_one, NULL),
			 0);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------------- failed starts, other paths */

/* restart_child of a child whose start fails: its failure, not running */
static void root_restart_child_error(void *arg)
{
	struct kid *k[1] = { kid_new(1, KID_FAIL_ON_SECOND) };
	smarm_sup_spec_t *sp = spec_of(SMARM_SUP_ONE_FOR_ONE, k, 1, 3);
	smarm_sup_child_t item;
	smarm_pid_t sup, c = SMARM_PID_NONE;
	size_t n = 0, active = 9;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "a", MS(10000)), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	atomic_store(&k[0]->gate, 1);
	HARNESS_EQ(smarm_sup_terminate_child(sup, "a", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_restart_child(sup, "a", MS(10000), &c), -4243);
	HARNESS_EQ(c.id, 0); /* untouched */
	HARNESS_EQ(smarm_sup_which_children(sup, &item, 1, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	HARNESS_EQ(item.pid.id, 0); /* kept, not running */
	HARNESS_EQ(smarm_sup_count_children(sup, NULL, &active, MS(5000)), 0);
	HARNESS_EQ(active, 0);
	/* a failed restart_child is no restart: nothing counted, no retry */
	smarm_actor_sleep(MS(20));
	HARNESS_EQ(atomic_load(&k[0]->starts), 2);
	HARNESS_CHECK(smarm_actor_is_alive(sup));
	HARNESS_EQ(smarm_sup_restart_child(sup, "a", MS(10000), &c), 0);
	HARNESS_CHECK(smarm_pid_eq(c, kid_pid(k[0])));
	HARNESS_EQ(atomic_load(&k[0]->starts), 3);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	kids_free(k, 1);
}

START_TEST(test_sup_otp_sup_start_restart_child_returns_error)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_restart_child_error, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * A top supervisor over one child supervisor "mid" (mid's kid runs the
 * spec sub), shut down with no time limit, whose start waits for mid's
 * readiness with no time limit; before it, when w is not NULL, a
 * plain child "w".
 */
static smarm_sup_spec_t *top_over(struct kid *w, struct kid *mid,
				  smarm_sup_spec_t *sub)
{
	smarm_sup_spec_t *top = NULL;
	mid->sub = sub;
	HARNESS_EQ(smarm_sup_spec_alloc(&top), 0);
	if (w != NULL)
		kid_add(top, "w", w);
	HARNESS_EQ(smarm_sup_spec_add_child(top, "mid", kid_body, mid,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_INFINITY),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(top, "mid", SMARM_NO_TIMEOUT),
		   0);
	return top;
}

/*
 * top: "w" (parks), then "mid", a child supervisor (readiness reported)
 * whose children are "x" (parks) and "f", which fails its start with
 * -4242. mid stops x and reports -4242 to top, which stops w and fails
 * smarm_sup_start with -4242; nothing of the tree is left.
 */
static void root_nested_start_fail(void *arg)
{
	struct kid *w = kid_new(1, KID_PARK);
	struct kid *mid = kid_new(2, KID_SUB);
	struct kid *x = kid_new(3, KID_PARK);
	struct kid *f = kid_new(4, KID_FAIL);
	smarm_sup_spec_t *top = NULL, *sub = NULL;
	smarm_pid_t sup = SMARM_PID_NONE;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sub), 0);
	kid_add(sub, "x", x);
	kid_add(sub, "f", f);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sub, "f", MS(10000)), 0);
	top = top_over(w, mid, sub);
	kid_log_reset();
	HARNESS_EQ(smarm_sup_start(top, &sup), -4242);
	HARNESS_EQ(sup.id, 0);
	/* f failed, mid stopped x and ended, top stopped w */
	HARNESS_EQ(atomic_load(&kid_log_n), 4);
	HARNESS_EQ(atomic_load(&kid_log[0]), 4);
	HARNESS_EQ(atomic_load(&kid_log[1]), 3);
	HARNESS_EQ(atomic_load(&kid_log[2]), 2);
	HARNESS_EQ(atomic_load(&kid_log[3]), 1);
	for (int i = 0; i < 4; i++) {
		struct kid *each[] = { w, mid, x, f };
		HARNESS_EQ(atomic_load(&each[i]->starts), 1);
	}
	HARNESS_EQ(sup_stat(SMARM_STAT_SUP_RESTARTS), 0);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_CHECK(sup_await(SMARM_STAT_REG_MAILBOXES, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_LINKS, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_MONITORS, 0));
	smarm_sup_spec_free(top);
	smarm_sup_spec_free(sub);
	free(w);
	free(mid);
	free(x);
	free(f);
}

START_TEST(test_sup_otp_sup_start_fail_through_a_nested_supervisor)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_nested_start_fail, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * hanging_restart_loop: a child whose restart never reports ready (its
 * readiness wait has no bound) must not make its supervisor deaf to the
 * shutdown from its parent: the supervisor gives up the start, stops
 * that child per its policy and the others in reverse order, and ends
 * SHUTDOWN. Also when the hang is in a child supervisor's restart, two
 * levels down, in a restart_child call, and in a first start.
 */
static void run_hanging_restart(bool nested)
{
	struct kid *h = kid_new(1, KID_HANG_ON_RESTART);
	struct kid *p = kid_new(2, KID_PARK);
	struct kid *mid = kid_new(3, KID_SUB);
	struct kid *k[2] = { p, h };
	smarm_sup_spec_t *sub = spec_of(SMARM_SUP_ONE_FOR_ONE, k, 2, 10);
	smarm_sup_spec_t *top = NULL;
	smarm_chan_t *ch = sig_chan();
	smarm_signal_t s = { 0 };
	smarm_pid_t sup;
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sub, "b", SMARM_NO_TIMEOUT),
		   0);
	if (nested)
		top = top_over(NULL, mid, sub);
	HARNESS_EQ(smarm_sup_start(nested ? top : sub, &sup), 0);
	kids_await_first(k, 2);
	kid_log_reset();
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(h), SMARM_EXIT_CRASHED, 1), 0);
	HARNESS_CHECK(kid_await(&h->starts, 2)); /* the restart hangs */
	smarm_actor_sleep(MS(20));
	HARNESS_EQ(smarm_monitor(sup, ch, NULL), 0);
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
	/* h crashed, then its unready tenancy and p were stopped */
	HARNESS_EQ(atomic_load(&kid_log_n), nested ? 4 : 3);
	HARNESS_EQ(atomic_load(&kid_log[0]), 1);
	HARNESS_EQ(atomic_load(&kid_log[1]), 1);
	HARNESS_EQ(atomic_load(&kid_log[2]), 2);
	HARNESS_EQ(atomic_load(&h->starts), 2);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sub);
	smarm_sup_spec_free(top);
	harness_chan_drop(ch);
	free(h);
	free(p);
	free(mid);
}

/* The same hang in restart_child: the caller times out, the shutdown
 * still ends the supervisor. */
static void run_hanging_restart_child(void)
{
	struct kid *h = kid_new(1, KID_HANG_ON_RESTART);
	struct kid *k[1] = { h };
	smarm_sup_spec_t *sp = spec_of(SMARM_SUP_ONE_FOR_ONE, k, 1, 10);
	smarm_pid_t sup;
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "a", SMARM_NO_TIMEOUT),
		   0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	HARNESS_EQ(smarm_sup_terminate_child(sup, "a", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_restart_child(sup, "a", MS(50), NULL),
		   SMARM_ETIMEDOUT);
	HARNESS_EQ(atomic_load(&h->starts), 2);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	free(h);
}

static void start_top(void *arg)
{
	HARNESS_EQ(smarm_sup_start(arg, NULL), SMARM_ESTARTFAILED);
}

/*
 * And in a first start: top starts "mid", whose child "h" never gets
 * ready. A shutdown of mid from no actor (smarm_node_shutdown_actor)
 * makes mid give the start up and end SHUTDOWN; top's start then fails
 * with SMARM_ESTARTFAILED (mid ended before it was ready).
 */
static void run_hanging_first_start(void)
{
	struct kid *h = kid_new(1, KID_PARK);
	struct kid *mid = kid_new(2, KID_SUB);
	struct kid *k[1] = { h };
	smarm_sup_spec_t *sub = spec_of(SMARM_SUP_ONE_FOR_ONE, k, 1, 10);
	smarm_sup_spec_t *top = NULL;
	smarm_chan_t *ch = sig_chan();
	smarm_signal_t s = { 0 };
	smarm_pid_t starter;
	int how = -1;
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sub, "a", SMARM_NO_TIMEOUT),
		   0);
	top = top_over(NULL, mid, sub);
	kid_log_reset();
	HARNESS_EQ(smarm_actor_spawn(&starter, start_top, top, NULL), 0);
	HARNESS_CHECK(kid_await(&h->starts, 1));
	smarm_actor_sleep(MS(20));
	HARNESS_EQ(smarm_monitor(kid_pid(mid), ch, NULL), 0);
	HARNESS_EQ(
		smarm_node_shutdown_actor(smarm_node_current(), kid_pid(mid)),
		0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN); /* as told, not a failure */
	HARNESS_EQ(smarm_actor_join(starter, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(atomic_load(&kid_log_n), 2); /* h stopped, then mid */
	HARNESS_EQ(atomic_load(&kid_log[0]), 1);
	HARNESS_EQ(atomic_load(&kid_log[1]), 2);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sub);
	smarm_sup_spec_free(top);
	harness_chan_drop(ch);
	free(h);
	free(mid);
}

static void root_hanging_restart(void *arg)
{
	(void)arg;
	run_hanging_restart(false);
	run_hanging_restart(true);
	run_hanging_restart_child();
	run_hanging_first_start();
}

START_TEST(test_sup_otp_hanging_restart_loop_does_not_block_shutdown)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_hanging_restart, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------------------------------- ignore */

static atomic_int ig_starts; /* starts of the ignoring bodies */

/* A child whose start returns ignore (after a readiness wait or not). */
static void ignore_body(void *arg)
{
	(void)arg;
	atomic_fetch_add(&ig_starts, 1);
	smarm_sup_ignore();
	HARNESS_CHECK(0); /* not reached */
}

static size_t which(smarm_pid_t sup, smarm_sup_child_t *buf, size_t cap)
{
	size_t n = 0;
	HARNESS_EQ(smarm_sup_which_children(sup, buf, cap, &n, MS(5000)), 0);
	return n;
}

/*
 * sup_start_ignore_child, sup_start_ignore_temporary_child(_start_child):
 * a child whose start says ignore is kept with no pid, not active, not
 * restarted (with a readiness wait or without); a temporary one is not
 * kept; start_child and restart_child of one succeed with no pid.
 */
static void root_ignore(void *arg)
{
	smarm_sup_spec_t *sp = NULL;
	smarm_sup_child_t c[4];
	struct kid *k = kid_new(1, KID_PARK);
	smarm_pid_t sup, pid;
	size_t specs = 0, active = 0;
	(void)arg;
	atomic_store(&ig_starts, 0);
	HARNESS_EQ(smarm_sup_ignore(), SMARM_ESTATE); /* no supervisor */
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "ig", ignore_body, NULL,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "ig", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "tmp", ignore_body, NULL,
					    SMARM_SUP_TEMPORARY,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "tmp", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "k", kid_body, k,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	HARNESS_EQ(atomic_load(&ig_starts), 2);
	HARNESS_EQ(which(sup, c, 4), 2); /* "tmp" is not kept */
	HARNESS_EQ(strcmp(c[0].id, "ig"), 0);
	HARNESS_CHECK(smarm_pid_eq(c[0].pid, SMARM_PID_NONE));
	HARNESS_EQ(strcmp(c[1].id, "k"), 0);
	HARNESS_EQ(smarm_sup_count_children(sup, &specs, &active, MS(5000)), 0);
	HARNESS_EQ(specs, 2);
	HARNESS_EQ(active, 1);
	/* restart_child and start_child of an ignoring child: no pid */
	pid = smarm_actor_self();
	HARNESS_EQ(smarm_sup_restart_child(sup, "ig", MS(5000), &pid), 0);
	HARNESS_CHECK(smarm_pid_eq(pid, SMARM_PID_NONE));
	HARNESS_EQ(smarm_sup_start_child(
			   sup, "dyn", ignore_body, NULL, SMARM_SUP_TEMPORARY,
			   SMARM_SUP_SHUTDOWN_DEFAULT, MS(5000), &pid),
		   0);
	/* without a readiness wait: started, then it ignores; its end is
	 * no death (a permanent child is not restarted), and it is kept */
	HARNESS_EQ(smarm_sup_start_child(
			   sup, "late", ignore_body, NULL, SMARM_SUP_PERMANENT,
			   SMARM_SUP_SHUTDOWN_DEFAULT, MS(5000), &pid),
		   0);
	{
		uint64_t t0 = smarm_now_ns();
		size_t n;
		do {
			smarm_actor_sleep(MS(1));
			n = which(sup, c, 4);
			/* "dyn" and "late" ignore when they run, not when
			 * their start returns: until then they are listed */
		} while (!(n == 3 && smarm_pid_eq(c[2].pid, SMARM_PID_NONE)) &&
			 harness_since(t0) < MS(5000) * harness_time_scale());
		HARNESS_EQ(n, 3); /* ig, k, late ("dyn" was not kept) */
		HARNESS_EQ(strcmp(c[2].id, "late"), 0);
		HARNESS_CHECK(smarm_pid_eq(c[2].pid, SMARM_PID_NONE));
	}
	HARNESS_EQ(smarm_actor_sleep(MS(30)), 0);
	HARNESS_EQ(atomic_load(&ig_starts), 5); /* none restarted */
	HARNESS_EQ(sup_stat(SMARM_STAT_SUP_RESTARTS), 0);
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	free(k);
}

START_TEST(test_sup_otp_sup_start_ignore_child)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_ignore, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------ child types, extra info */

/* A spec of one child id running kid k (ready report if ready). */
static smarm_sup_spec_t *child_spec(const char *id, struct kid *k, int type,
				    bool ready)
{
	smarm_sup_spec_t *sp = NULL;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(
			   sp, id, kid_body, k, SMARM_SUP_PERMANENT,
			   type == SMARM_SUP_SUPERVISOR
				   ? SMARM_SUP_INFINITY
				   : SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_type(sp, id, type), 0);
	if (ready)
		HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, id, MS(10000)),
			   0);
	return sp;
}

/*
 * count_children, count_children_supervisor: specs, active, and the
 * children of each type, running or not; which_children shows each
 * child's type and whether it runs.
 */
static void root_count_children(void *arg)
{
	struct kid *w1 = kid_new(1, KID_PARK), *w2 = kid_new(2, KID_PARK);
	struct kid *mid = kid_new(3, KID_SUB), *x = kid_new(4, KID_PARK);
	smarm_sup_spec_t *sp = NULL, *sub = NULL;
	smarm_sup_child_info_t it[4];
	smarm_pid_t sup;
	size_t specs = 0, active = 0, sups = 0, workers = 0, n = 0;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sub), 0);
	kid_add(sub, "x", x);
	mid->sub = sub;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	kid_add(sp, "w1", w1);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "mid", kid_body, mid,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_INFINITY),
		   0);
	HARNESS_EQ(
		smarm_sup_spec_set_child_type(sp, "mid", SMARM_SUP_SUPERVISOR),
		0);
	kid_add(sp, "w2", w2);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	HARNESS_EQ(smarm_sup_count_children_ex(sup, &specs, &active, &sups,
					       &workers, MS(5000)),
		   0);
	HARNESS_EQ(specs, 3);
	HARNESS_EQ(active, 3);
	HARNESS_EQ(sups, 1);
	HARNESS_EQ(workers, 2);
	/* a stopped child still counts for its type, not as active */
	HARNESS_EQ(smarm_sup_terminate_child(sup, "mid", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_count_children_ex(sup, &specs, &active, &sups,
					       &workers, MS(5000)),
		   0);
	HARNESS_EQ(specs, 3);
	HARNESS_EQ(active, 2);
	HARNESS_EQ(sups, 1);
	HARNESS_EQ(workers, 2);
	HARNESS_EQ(smarm_sup_which_children_ex(sup, it, 4, &n, MS(5000)), 0);
	HARNESS_EQ(n, 3);
	HARNESS_EQ(strcmp(it[1].id, "mid"), 0);
	HARNESS_EQ(it[0].type, SMARM_SUP_WORKER);
	HARNESS_EQ(it[0].state, SMARM_SUP_CHILD_RUNNING);
	HARNESS_CHECK(kid_await(&w1->starts, 1)); /* spawned; now it ran */
	HARNESS_CHECK(smarm_pid_eq(it[0].pid, kid_pid(w1)));
	HARNESS_EQ(it[1].type, SMARM_SUP_SUPERVISOR);
	HARNESS_EQ(it[1].state, SMARM_SUP_CHILD_STOPPED);
	HARNESS_CHECK(smarm_pid_eq(it[1].pid, SMARM_PID_NONE));
	HARNESS_EQ(it[2].type, SMARM_SUP_WORKER);
	HARNESS_EQ(it[1].restart, SMARM_SUP_PERMANENT);
	/* cut to cap, n says how many */
	HARNESS_EQ(smarm_sup_which_children_ex(sup, it, 1, &n, MS(5000)), 0);
	HARNESS_EQ(n, 3);
	/* misuse */
	HARNESS_EQ(smarm_sup_count_children_ex(sup, NULL, NULL, NULL, NULL,
					       MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_which_children_ex(sup, NULL, 1, &n, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_child_type(sp, "w1", 2), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_child_type(sp, "zz", 0), SMARM_ENOENT);
	HARNESS_EQ(smarm_sup_spec_set_child_type(NULL, "w1", 0), SMARM_EINVAL);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sp);
	smarm_sup_spec_free(sub);
	free(w1);
	free(w2);
	free(mid);
	free(x);
}

START_TEST(test_sup_otp_count_children_supervisor)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_count_children, NULL), 0);
	harness_checks_assert();
}
END_TEST

static atomic_int info_starts;

/* Reports ready with info 1000 + its start's number, then parks. */
static void info_body(void *arg)
{
	int n = atomic_fetch_add(&info_starts, 1) + 1;
	(void)arg;
	HARNESS_EQ(smarm_sup_ready_info(1000 + n), 0);
	kid_park();
}

/*
 * extra_return: a start that reports {ok, Pid, Extra}: start_child
 * and restart_child return Extra beside the pid; an automatic restart
 * of such a child works as any other.
 */
static void root_extra_return(void *arg)
{
	smarm_sup_spec_t *sp = NULL, *one = NULL;
	smarm_pid_t sup, pid = SMARM_PID_NONE, again;
	intptr_t info = 0;
	size_t active = 0;
	(void)arg;
	atomic_store(&info_starts, 0);
	HARNESS_EQ(smarm_sup_ready_info(5), SMARM_ESTATE); /* no supervisor */
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	HARNESS_EQ(smarm_sup_spec_alloc(&one), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(one, "e", info_body, NULL,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(one, "e", MS(10000)), 0);
	HARNESS_EQ(smarm_sup_start_child_spec(sup, one, MS(10000), &pid, &info),
		   0);
	HARNESS_EQ(info, 1001);
	HARNESS_CHECK(smarm_actor_is_alive(pid));
	HARNESS_EQ(smarm_sup_terminate_child(sup, "e", MS(5000)), 0);
	HARNESS_EQ(
		smarm_sup_restart_child_ex(sup, "e", MS(10000), &again, &info),
		0);
	HARNESS_EQ(info, 1002);
	HARNESS_CHECK(!smarm_pid_eq(again, pid));
	/* an automatic restart */
	HARNESS_EQ(exit_and_await(again, SMARM_EXIT_CRASHED, 1, NULL),
		   SMARM_EXIT_CRASHED);
	HARNESS_CHECK(kid_await(&info_starts, 3));
	do
		HARNESS_EQ(
			smarm_sup_count_children(sup, NULL, &active, MS(5000)),
			0);
	while (active != 1);
	/* and a child without a report: info 0 */
	{
		struct kid *k = kid_new(1, KID_PARK);
		smarm_sup_spec_t *plain =
			child_spec("p", k, SMARM_SUP_WORKER, false);
		info = 9;
		HARNESS_EQ(smarm_sup_start_child_spec(sup, plain, MS(10000),
						      NULL, &info),
			   0);
		HARNESS_EQ(info, 0);
		HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
			   SMARM_EXIT_SHUTDOWN);
		smarm_sup_spec_free(plain);
		free(k);
	}
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sp);
	smarm_sup_spec_free(one);
}

START_TEST(test_sup_otp_extra_return)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_extra_return, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * sup_start_child_returns_error: start_child of a child whose start
 * fails returns that failure to its caller and records nothing; a
 * child spec that is not one valid child is SMARM_EBADSPEC.
 */
static void root_start_child_error(void *arg)
{
	struct kid *f = kid_new(1, KID_FAIL);
	smarm_sup_spec_t *sp = NULL, *one = child_spec("f", f, 0, true);
	smarm_sup_spec_t *none = NULL;
	smarm_pid_t sup, pid = SMARM_PID_NONE;
	size_t specs = 9;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	HARNESS_EQ(smarm_sup_start_child_spec(sup, one, MS(10000), &pid, NULL),
		   -4242);
	HARNESS_CHECK(smarm_pid_eq(pid, SMARM_PID_NONE)); /* untouched */
	HARNESS_EQ(smarm_sup_count_children(sup, &specs, NULL, MS(5000)), 0);
	HARNESS_EQ(specs, 0);
	HARNESS_EQ(smarm_sup_start_child_spec(sup, NULL, MS(5000), NULL, NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_alloc(&none), 0);
	HARNESS_EQ(smarm_sup_start_child_spec(sup, none, MS(5000), NULL, NULL),
		   SMARM_EBADSPEC);
	HARNESS_EQ(smarm_sup_spec_set_child_type(one, "f", 7), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_start_child_spec(sup, one, MS(5000), NULL, NULL),
		   SMARM_EBADSPEC); /* a setter failed on it */
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sp);
	smarm_sup_spec_free(one);
	smarm_sup_spec_free(none);
	free(f);
}

START_TEST(test_sup_otp_sup_start_child_returns_error)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_start_child_error, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------- synchronous start_child */

/*
 * start_child is synchronous (OTP's init_ack): a child supervisor added
 * by start_child takes calls as soon as start_child returns (its own
 * children started), and a worker that traps exits before it reports
 * ready sees a terminate_child sent right after start_child returned.
 */
static void root_start_child_sync(void *arg)
{
	struct kid *mid = kid_new(1, KID_SUB), *x = kid_new(2, KID_PARK);
	struct kid *t = kid_new(3, KID_TRAP_READY);
	smarm_sup_spec_t *sp = NULL, *sub = spec_of(0, &x, 1, 3);
	smarm_sup_spec_t *one =
		child_spec("mid", mid, SMARM_SUP_SUPERVISOR, false);
	smarm_sup_spec_t *trap = child_spec("t", t, SMARM_SUP_WORKER, true);
	smarm_sup_child_info_t it[2];
	smarm_pid_t sup, child;
	size_t n = 0;
	(void)arg;
	mid->sub = sub;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	for (int round = 0; round < 20; round++) {
		HARNESS_EQ(smarm_sup_start_child_spec(sup, one, MS(10000),
						      &child, NULL),
			   0);
		/* a supervisor already, its child started */
		HARNESS_EQ(
			smarm_sup_which_children_ex(child, it, 2, &n, MS(5000)),
			0);
		HARNESS_EQ(n, 1);
		HARNESS_EQ(it[0].state, SMARM_SUP_CHILD_RUNNING);
		HARNESS_EQ(smarm_sup_terminate_child(sup, "mid", MS(10000)), 0);
		HARNESS_EQ(smarm_sup_delete_child(sup, "mid", MS(5000)), 0);

		HARNESS_EQ(smarm_sup_start_child_spec(sup, trap, MS(10000),
						      NULL, NULL),
			   0);
		HARNESS_EQ(smarm_sup_terminate_child(sup, "t", MS(10000)), 0);
		HARNESS_EQ(atomic_load(&t->saw_exit), round + 1);
		HARNESS_EQ(smarm_sup_delete_child(sup, "t", MS(5000)), 0);
	}
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sp);
	smarm_sup_spec_free(sub);
	smarm_sup_spec_free(one);
	smarm_sup_spec_free(trap);
	free(mid);
	free(x);
	free(t);
}

START_TEST(test_sup_otp_start_child_returns_once_the_child_is_set_up)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_start_child_sync, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------ restarting children */

/* The state of sup's child i (which_children_ex), or -1. */
static int state_of(smarm_pid_t sup, size_t i, size_t *n)
{
	smarm_sup_child_info_t it[8];
	HARNESS_EQ(smarm_sup_which_children_ex(sup, it, 8, n, MS(5000)), 0);
	return i < *n && i < 8 ? it[i].state : -1;
}

/* Poll until sup's child i is in state want (bounded). */
static bool await_state(smarm_pid_t sup, size_t i, int want)
{
	uint64_t t0 = smarm_now_ns();
	size_t n;
	while (state_of(sup, i, &n) != want) {
		if (harness_since(t0) > MS(10000) * harness_time_scale())
			return false;
		smarm_actor_sleep(MS(1));
	}
	return true;
}

/* Poll until count_children's active is want (bounded). */
static bool await_active(smarm_pid_t sup, size_t want)
{
	uint64_t t0 = smarm_now_ns();
	size_t active = (size_t)-1;
	while (smarm_sup_count_children(sup, NULL, &active, MS(5000)) == 0 &&
	       active != want) {
		if (harness_since(t0) > MS(10000) * harness_time_scale())
			return false;
		smarm_actor_sleep(MS(1));
	}
	return active == want;
}

/*
 * count_restarting_children: instances of a simple_one_for_one whose
 * restarts fail are kept restarting and retried: count_children shows
 * them as workers, not active; once their starts succeed again, all
 * are active. The supervisor answers calls all along.
 */
static void root_count_restarting(void *arg)
{
	struct kid *k[4];
	smarm_sup_spec_t *sp = NULL;
	smarm_sup_child_info_t it[4];
	smarm_pid_t sup;
	size_t specs = 0, active = 0, workers = 0, n = 0;
	int64_t restarts0 = sup_stat(SMARM_STAT_SUP_RESTARTS);
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(
		smarm_sup_spec_set_strategy(sp, SMARM_SUP_SIMPLE_ONE_FOR_ONE),
		0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 1000, MS(60000)), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "t", kid_body, NULL,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_BRUTAL_KILL),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "t", MS(10000)), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	for (int i = 0; i < 4; i++) {
		k[i] = kid_new(i + 1, KID_FAIL_GATED);
		HARNESS_EQ(smarm_sup_start_child_args(sup, k[i], MS(10000),
						      NULL, NULL),
			   0);
	}
	HARNESS_EQ(smarm_sup_count_children_ex(sup, &specs, &active, NULL,
					       &workers, MS(5000)),
		   0);
	HARNESS_EQ(specs, 1);
	HARNESS_EQ(active, 4);
	HARNESS_EQ(workers, 4);
	for (int i = 0; i < 4; i++)
		HARNESS_EQ(smarm_actor_send_exit(kid_pid(k[i]),
						 SMARM_EXIT_STOPPED, 0),
			   0);
	HARNESS_CHECK(await_active(sup, 0));
	HARNESS_EQ(smarm_sup_count_children_ex(sup, &specs, &active, NULL,
					       &workers, MS(5000)),
		   0);
	HARNESS_EQ(specs, 1);
	HARNESS_EQ(active, 0);
	HARNESS_EQ(workers, 4);
	HARNESS_EQ(smarm_sup_which_children_ex(sup, it, 4, &n, MS(5000)), 0);
	HARNESS_EQ(n, 4);
	for (int i = 0; i < 4; i++) {
		HARNESS_EQ(it[i].state, SMARM_SUP_CHILD_RESTARTING);
		HARNESS_CHECK(smarm_pid_eq(it[i].pid, SMARM_PID_NONE));
	}
	for (int i = 0; i < 4; i++)
		atomic_store(&k[i]->gate, 1);
	HARNESS_CHECK(await_active(sup, 4));
	for (int i = 0; i < 4; i++)
		HARNESS_CHECK(atomic_load(&k[i]->starts) >= 3); /* retried */
	/* each try was a restart: 4 that failed, their retries */
	HARNESS_CHECK(sup_stat(SMARM_STAT_SUP_RESTARTS) - restarts0 >= 8);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sp);
	for (int i = 0; i < 4; i++)
		free(k[i]);
}

START_TEST(test_sup_otp_count_restarting_children)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_count_restarting, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * A restarting child: restart_child and delete_child answer {error,
 * restarting} (SMARM_ERESTARTING); terminate_child stops the retries;
 * then restart_child starts it.
 */
static void root_restarting_calls(void *arg)
{
	struct kid *k[2] = { kid_new(1, KID_FAIL_GATED), kid_new(2, KID_PARK) };
	smarm_sup_spec_t *sp = spec_of(SMARM_SUP_ONE_FOR_ONE, k, 2, 1000);
	smarm_pid_t sup, pid = SMARM_PID_NONE;
	size_t specs = 0, active = 0, workers = 0, n = 0;
	int starts;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "a", MS(10000)), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	kids_await_first(k, 2);
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(k[0]), SMARM_EXIT_CRASHED, 1),
		   0);
	HARNESS_CHECK(await_state(sup, 0, SMARM_SUP_CHILD_RESTARTING));
	HARNESS_EQ(smarm_sup_restart_child(sup, "a", MS(5000), &pid),
		   SMARM_ERESTARTING);
	HARNESS_CHECK(smarm_pid_eq(pid, SMARM_PID_NONE));
	HARNESS_EQ(smarm_sup_delete_child(sup, "a", MS(5000)),
		   SMARM_ERESTARTING);
	HARNESS_EQ(smarm_sup_count_children_ex(sup, &specs, &active, NULL,
					       &workers, MS(5000)),
		   0);
	HARNESS_EQ(specs, 2);
	HARNESS_EQ(active, 1);
	HARNESS_EQ(workers, 2);
	/* terminated: no more retries */
	HARNESS_EQ(smarm_sup_terminate_child(sup, "a", MS(5000)), 0);
	HARNESS_EQ(state_of(sup, 0, &n), SMARM_SUP_CHILD_STOPPED);
	starts = atomic_load(&k[0]->starts);
	HARNESS_CHECK(starts >= 2);
	smarm_actor_sleep(MS(100));
	HARNESS_EQ(atomic_load(&k[0]->starts), starts);
	atomic_store(&k[0]->gate, 1);
	HARNESS_EQ(smarm_sup_restart_child(sup, "a", MS(10000), &pid), 0);
	HARNESS_CHECK(smarm_pid_eq(pid, kid_pid(k[0])));
	HARNESS_EQ(state_of(sup, 0, &n), SMARM_SUP_CHILD_RUNNING);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sp);
	kids_free(k, 2);
}

START_TEST(test_sup_otp_restarting_child_answers_erestarting)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_restarting_calls, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * Each retry of a restarting child is one more restart against the
 * intensity (3 in the window): the child's first restart and two
 * retries are admitted, the third retry is one too many, and the
 * supervisor gives up, SHUTDOWN with SMARM_EINTENSITY.
 */
static void root_restarting_intensity(void *arg)
{
	struct kid *k[1] = { kid_new(1, KID_FAIL_GATED) };
	smarm_sup_spec_t *sp = spec_of(SMARM_SUP_ONE_FOR_ONE, k, 1, 3);
	smarm_chan_t *ch = sig_chan();
	smarm_signal_t s = { 0 };
	smarm_pid_t sup;
	int64_t restarts0 = sup_stat(SMARM_STAT_SUP_RESTARTS);
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "a", MS(10000)), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	HARNESS_EQ(smarm_monitor(sup, ch, NULL), 0);
	kids_await_first(k, 1);
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(k[0]), SMARM_EXIT_CRASHED, 1),
		   0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(s.reason, SMARM_EINTENSITY);
	HARNESS_EQ(sup_stat(SMARM_STAT_SUP_RESTARTS) - restarts0, 3);
	HARNESS_EQ(atomic_load(&k[0]->starts), 4);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sp);
	harness_chan_drop(ch);
	kids_free(k, 1);
}

START_TEST(test_sup_otp_restarting_child_counts_against_intensity)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i + 1, root_restarting_intensity, NULL),
			 0);
	harness_checks_assert();
}
END_TEST

/* loop values: workers - 1, so 0..1 and 3 run 1, 2 and 4 workers */
static void add_123(TCase *tc, const TTest *t)
{
	tcase_add_loop_test(tc, t, 0, 2);
	tcase_add_loop_test(tc, t, 3, 4);
}

Suite *smarm_test_sup_otp_suite(void)
{
	Suite *s = suite_create("sup_otp");
	TCase *tc = tcase_create("restart");
	tcase_set_timeout(tc, 60);
	add_123(tc, test_sup_otp_one_for_all_escalation);
	add_123(tc, test_sup_otp_rest_for_one_escalation);
	add_123(tc, test_sup_otp_one_for_all_other_child_fails_restart);
	add_123(tc, test_sup_otp_rest_for_one_other_child_fails_restart);
	add_123(tc, test_sup_otp_child_adm_one_for_all);
	add_123(tc, test_sup_otp_child_adm_rest_for_one);
	add_123(tc, test_sup_otp_hanging_restart_loop_does_not_block_shutdown);
	suite_add_tcase(s, tc);
	tc = tcase_create("start");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sup_otp_sup_start_restart_child_returns_error);
	add_123(tc, test_sup_otp_sup_start_ignore_child);
	add_123(tc, test_sup_otp_sup_start_fail_through_a_nested_supervisor);
	suite_add_tcase(s, tc);
	tc = tcase_create("child");
	tcase_set_timeout(tc, 60);
	add_123(tc, test_sup_otp_count_children_supervisor);
	add_123(tc, test_sup_otp_extra_return);
	add_123(tc, test_sup_otp_sup_start_child_returns_error);
	add_123(tc, test_sup_otp_start_child_returns_once_the_child_is_set_up);
	suite_add_tcase(s, tc);
	tc = tcase_create("restarting");
	tcase_set_timeout(tc, 60);
	add_123(tc, test_sup_otp_count_restarting_children);
	add_123(tc, test_sup_otp_restarting_child_answers_erestarting);
	add_123(tc, test_sup_otp_restarting_child_counts_against_intensity);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(sup_otp)
