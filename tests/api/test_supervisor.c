/* SPDX-License-Identifier: MIT */
/*
 * test_supervisor.c - supervisors (smarm_sup_*): each strategy cycles
 * the right siblings; restart kinds under OTP's reason rules (transient:
 * normal and shutdown ends are final; temporary: never restarted);
 * intensity exceeded ends the supervisor SHUTDOWN (OTP's shutdown) with
 * reason SMARM_EINTENSITY, and escalates to a parent supervisor that
 * holds it permanent (a transient one is not restarted: shutdown is no
 * abnormal end); a child's failed start fails
 * smarm_sup_start and stops the started ones; readiness orders starts
 * (a later child finds an earlier one by name); every misuse; a crash
 * storm of 10,000 children on 4 workers with exact restart counts and
 * nothing leaked; calls to a running supervisor (dynamic children,
 * which/count after restarts, timeouts). Ports the Rust smarm runtime's
 * tests/supervisor.rs and the restart cases of OTP's supervisor_SUITE,
 * named in the tests (one_for_one, one_for_all, rest_for_one,
 * one_for_one_escalation, the normal/shutdown/abnormal_termination
 * groups, multiple_restarts, sup_start_fail, child_adm_simple,
 * count_children, which_children); test_sup_otp.c has the cases of the
 * other strategies.
 */
#include "sup_kids.h"

static smarm_sup_spec_t *spec3(int strategy, struct kid **k, int mode)
{
	smarm_sup_spec_t *sp = NULL;
	static const char *ids[] = { "a", "b", "c" };
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_set_strategy(sp, strategy), 0);
	for (int i = 0; i < 3; i++) {
		k[i] = kid_new(i + 1, mode);
		HARNESS_EQ(smarm_sup_spec_add_child(sp, ids[i], kid_body, k[i],
						    SMARM_SUP_PERMANENT,
						    SMARM_SUP_SHUTDOWN_DEFAULT),
			   0);
	}
	return sp;
}

/* Crash b; check which of a, b, c ran again (want[i]: starts). */
static void run_strategy(int strategy, const int *want, const int *order,
			 int norder)
{
	struct kid *k[3];
	smarm_sup_spec_t *sp = spec3(strategy, k, KID_PARK);
	smarm_pid_t sup;
	smarm_pid_t before[3];
	HARNESS_EQ(sup_stat(SMARM_STAT_SUP_RESTARTS), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	for (int i = 0; i < 3; i++) {
		HARNESS_CHECK(kid_await(&k[i]->starts, 1));
		before[i] = kid_pid(k[i]);
	}
	kid_log_reset();
	HARNESS_EQ(smarm_actor_send_exit(before[1], SMARM_EXIT_CRASHED, 5), 0);
	for (int i = 0; i < 3; i++)
		HARNESS_CHECK(kid_await(&k[i]->starts, want[i]));
	smarm_actor_sleep(MS(20)); /* nothing more happens */
	/* one failure is one restart, however many siblings it cycled */
	HARNESS_EQ(sup_stat(SMARM_STAT_SUP_RESTARTS), 1);
	for (int i = 0; i < 3; i++) {
		HARNESS_EQ(atomic_load(&k[i]->starts), want[i]);
		HARNESS_EQ(smarm_pid_eq(kid_pid(k[i]), before[i]),
			   want[i] == 1);
	}
	HARNESS_EQ(atomic_load(&kid_log_n), norder);
	for (int i = 0; i < norder; i++)
		HARNESS_EQ(atomic_load(&kid_log[i]), order[i]);
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_CHECK(kid_await(&kid_log_n, norder + 3));
	for (int i = 0; i < 3; i++)
		free(k[i]);
}

static void root_one_for_one(void *arg)
{
	static const int want[] = { 1, 2, 1 };
	static const int order[] = { 2 };
	(void)arg;
	run_strategy(SMARM_SUP_ONE_FOR_ONE, want, order, 1);
}

static void root_one_for_all(void *arg)
{
	static const int want[] = { 2, 2, 2 };
	static const int order[] = { 2, 3, 1 }; /* b crashed; c, a stopped */
	(void)arg;
	run_strategy(SMARM_SUP_ONE_FOR_ALL, want, order, 3);
}

static void root_rest_for_one(void *arg)
{
	static const int want[] = { 1, 2, 2 };
	static const int order[] = { 2, 3 };
	(void)arg;
	run_strategy(SMARM_SUP_REST_FOR_ONE, want, order, 2);
}

START_TEST(test_supervisor_one_for_one_restarts_only_the_child)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_one_for_one, NULL), 0);
	harness_checks_assert();
}
END_TEST

START_TEST(test_supervisor_one_for_all_cycles_every_sibling)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_one_for_all, NULL), 0);
	harness_checks_assert();
}
END_TEST

START_TEST(test_supervisor_rest_for_one_cycles_later_siblings)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_rest_for_one, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* One child of mode/restart; returns its starts once it settled. */
static int run_one(int mode, int restart, int settle_starts)
{
	smarm_sup_spec_t *sp = NULL;
	struct kid *k = kid_new(1, mode);
	smarm_pid_t sup;
	int starts;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "k", kid_body, k, restart,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	kid_log_reset();
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	HARNESS_CHECK(kid_await(&k->starts, settle_starts));
	HARNESS_CHECK(kid_await(&kid_log_n, settle_starts)); /* all ended */
	smarm_actor_sleep(MS(30)); /* no further start */
	starts = atomic_load(&k->starts);
	HARNESS_CHECK(smarm_actor_is_alive(sup)); /* within intensity */
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	free(k);
	return starts;
}

static void root_kinds(void *arg)
{
	(void)arg;
	/* transient: two crashes restarted, the clean end is final */
	HARNESS_EQ(run_one(KID_CRASH_TWICE, SMARM_SUP_TRANSIENT, 3), 3);
	/* transient: a shutdown end is not abnormal */
	HARNESS_EQ(run_one(KID_SHUTDOWN_SELF, SMARM_SUP_TRANSIENT, 1), 1);
	/* temporary: never restarted, not even after a crash */
	HARNESS_EQ(run_one(KID_CRASH, SMARM_SUP_TEMPORARY, 1), 1);
	/* permanent: a normal end is restarted too */
	{
		smarm_sup_spec_t *sp = NULL;
		struct kid *k = kid_new(1, KID_NORMAL_ONCE);
		smarm_pid_t sup;
		HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
		kid_add(sp, "k", k);
		HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
		smarm_sup_spec_free(sp);
		HARNESS_CHECK(kid_await(&k->starts, 2));
		HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
			   SMARM_EXIT_SHUTDOWN);
		HARNESS_EQ(atomic_load(&k->starts), 2);
		free(k);
	}
}

START_TEST(test_supervisor_normal_shutdown_abnormal_termination_by_kind)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_kinds, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------- intensity */

/* Run the spec arg as a supervisor on a joinable actor of our own. */
static void body_run(void *arg)
{
	HARNESS_EQ(smarm_sup_run(arg), 0); /* returns only on misuse */
}

static int join_sup(smarm_sup_spec_t *sp, intptr_t *reason)
{
	smarm_pid_t pid;
	int how = -1;
	HARNESS_EQ(smarm_actor_spawn(&pid, body_run, sp, NULL), 0);
	HARNESS_EQ(smarm_actor_join(pid, &how, reason), 0);
	return how;
}

static void root_intensity(void *arg)
{
	smarm_sup_spec_t *sp = NULL;
	struct kid *k = kid_new(1, KID_CRASH);
	intptr_t reason = 0;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 2, MS(5000)), 0);
	kid_add(sp, "k", k);
	HARNESS_EQ(join_sup(sp, &reason), SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(reason, SMARM_EINTENSITY);
	HARNESS_EQ(atomic_load(&k->starts), 3); /* start + 2 restarts */

	/* intensity 0: the first restart is one too many */
	atomic_store(&k->starts, 0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 0, MS(5000)), 0);
	HARNESS_EQ(join_sup(sp, &reason), SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(reason, SMARM_EINTENSITY);
	HARNESS_EQ(atomic_load(&k->starts), 1);

	/* the default (3 in 5 s): start + 3 restarts, then it gives up */
	smarm_sup_spec_free(sp);
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	kid_add(sp, "k", k);
	atomic_store(&k->starts, 0);
	HARNESS_EQ(join_sup(sp, &reason), SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(reason, SMARM_EINTENSITY);
	HARNESS_EQ(atomic_load(&k->starts), 4);

	/* restarts spaced wider than the period never add up */
	smarm_sup_spec_free(sp);
	free(k);
}

START_TEST(test_supervisor_multiple_restarts_crash_with_eintensity)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_intensity, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* A child that crashes each time it is told to (through its pid). */
static void root_window(void *arg)
{
	smarm_sup_spec_t *sp = NULL;
	struct kid *k = kid_new(1, KID_PARK);
	smarm_pid_t sup;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 1, MS(300)), 0);
	kid_add(sp, "k", k);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	/* one restart per 350 ms: never more than 1 in 300 ms */
	for (int i = 1; i <= 4; i++) {
		HARNESS_CHECK(kid_await(&k->starts, i));
		smarm_actor_sleep(MS(350));
		HARNESS_EQ(smarm_actor_send_exit(kid_pid(k), SMARM_EXIT_CRASHED,
						 1),
			   0);
	}
	HARNESS_CHECK(kid_await(&k->starts, 5));
	HARNESS_CHECK(smarm_actor_is_alive(sup));
	/* a second restart within 300 ms of the last one: it gives up */
	{
		intptr_t reason = 0;
		smarm_chan_t *ch = sig_chan();
		smarm_signal_t s;
		HARNESS_EQ(smarm_monitor(sup, ch, NULL), 0);
		HARNESS_EQ(smarm_actor_send_exit(kid_pid(k), SMARM_EXIT_CRASHED,
						 1),
			   0);
		HARNESS_EQ(smarm_chan_recv_timeout(ch, &s, MS(10000)), 0);
		reason = s.reason;
		HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
		HARNESS_EQ(reason, SMARM_EINTENSITY);
		harness_chan_drop(ch);
	}
	HARNESS_EQ(atomic_load(&k->starts), 5);
	free(k);
}

START_TEST(test_supervisor_intensity_counts_only_the_window)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_window, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* Parent (1 in 5 s) over a child supervisor (1 in 5 s) over a crasher. */
static void root_escalation(void *arg)
{
	smarm_sup_spec_t *top = NULL;
	smarm_sup_spec_t *sub = NULL;
	struct kid *w = kid_new(1, KID_CRASH);
	struct kid *s = kid_new(2, KID_SUB);
	intptr_t reason = 0;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sub), 0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sub, 1, MS(5000)), 0);
	kid_add(sub, "w", w);
	s->sub = sub;
	HARNESS_EQ(smarm_sup_spec_alloc(&top), 0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(top, 1, MS(5000)), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(top, "sub", kid_body, s,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_INFINITY),
		   0);
	HARNESS_EQ(join_sup(top, &reason), SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(reason, SMARM_EINTENSITY);
	HARNESS_EQ(atomic_load(&s->starts), 2); /* restarted once */
	HARNESS_EQ(atomic_load(&w->starts), 4); /* 2 per child sup */
	smarm_sup_spec_free(top);

	/* A transient child supervisor that gives up ends with a shutdown,
	 * no abnormal end: it stays down and its parent lives on (OTP). */
	{
		smarm_pid_t sup;
		smarm_chan_t *ch = harness_sig_chan();
		smarm_signal_t m = { 0 };
		atomic_store(&w->starts, 0);
		atomic_store(&s->starts, 0);
		HARNESS_EQ(smarm_sup_spec_alloc(&top), 0);
		HARNESS_EQ(smarm_sup_spec_set_intensity(top, 1, MS(5000)), 0);
		HARNESS_EQ(smarm_sup_spec_add_child(top, "sub", kid_body, s,
						    SMARM_SUP_TRANSIENT,
						    SMARM_SUP_INFINITY),
			   0);
		HARNESS_EQ(smarm_sup_start(top, &sup), 0);
		HARNESS_EQ(smarm_monitor(sup, ch, NULL), 0);
		HARNESS_CHECK(kid_await(&w->starts, 2));
		HARNESS_EQ(smarm_actor_sleep(MS(50)), 0);
		HARNESS_EQ(atomic_load(&s->starts), 1);
		HARNESS_EQ(atomic_load(&w->starts), 2);
		HARNESS_CHECK(smarm_actor_is_alive(sup));
		HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0),
			   0);
		HARNESS_EQ(harness_recv_sig(ch, &m), 0);
		HARNESS_EQ(m.how, SMARM_EXIT_SHUTDOWN);
		HARNESS_EQ(m.reason, 0);
		harness_chan_drop(ch);
		smarm_sup_spec_free(top);
	}
	smarm_sup_spec_free(sub);
	free(w);
	free(s);
}

START_TEST(test_supervisor_one_for_one_escalation_reaches_the_parent)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_escalation, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------- start, readiness */

static void root_start_fail(void *arg)
{
	smarm_sup_spec_t *sp = NULL;
	struct kid *a = kid_new(1, KID_PARK);
	struct kid *b = kid_new(2, KID_FAIL);
	struct kid *c = kid_new(3, KID_PARK);
	smarm_pid_t sup = SMARM_PID_NONE;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	kid_add(sp, "a", a);
	kid_add(sp, "b", b);
	kid_add(sp, "c", c);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "b", MS(5000)), 0);
	kid_log_reset();
	HARNESS_EQ(smarm_sup_start(sp, &sup), -4242);
	HARNESS_EQ(sup.id, 0); /* untouched */
	HARNESS_EQ(atomic_load(&a->starts), 1);
	HARNESS_EQ(atomic_load(&b->starts), 1);
	HARNESS_EQ(atomic_load(&c->starts), 0); /* never started */
	HARNESS_EQ(atomic_load(&kid_log_n), 2); /* b ended, a stopped */
	HARNESS_EQ(atomic_load(&kid_log[0]), 2);
	HARNESS_EQ(atomic_load(&kid_log[1]), 1);

	/* a child that ends before it is ready */
	b->mode = KID_END_EARLY;
	HARNESS_EQ(smarm_sup_start(sp, NULL), SMARM_ESTARTFAILED);
	/* a child that is never ready in time: killed, ETIMEDOUT */
	b->mode = KID_PARK;
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "b", MS(50)), 0);
	HARNESS_EQ(smarm_sup_start(sp, NULL), SMARM_ETIMEDOUT);
	HARNESS_EQ(atomic_load(&c->starts), 0);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1)); /* only the root */
	HARNESS_CHECK(sup_await(SMARM_STAT_REG_MAILBOXES, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_MONITORS, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_LINKS, 0));
	smarm_sup_spec_free(sp);
	free(a);
	free(b);
	free(c);
}

START_TEST(test_supervisor_sup_start_fail_child_failure_fails_the_start)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_start_fail, NULL), 0);
	harness_checks_assert();
}
END_TEST

static void root_ready(void *arg)
{
	smarm_sup_spec_t *sp = NULL;
	struct kid *a = kid_new(1, KID_READY_REG);
	struct kid *b = kid_new(2, KID_FIND);
	smarm_pid_t sup;
	smarm_pid_t holder;
	(void)arg;
	a->name = b->name = "sup_ready_a";
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	kid_add(sp, "a", a);
	kid_add(sp, "b", b);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "a", SMARM_NO_TIMEOUT),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "b", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	/* smarm_sup_start returned after both were ready */
	HARNESS_EQ(atomic_load(&b->found), 1);
	HARNESS_EQ(smarm_whereis("sup_ready_a", &holder), 0);
	HARNESS_CHECK(smarm_pid_eq(holder, kid_pid(a)));
	/* a restart of a re-registers before b is cycled (rest_for_one) */
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(smarm_sup_spec_set_strategy(sp, SMARM_SUP_REST_FOR_ONE), 0);
	atomic_store(&b->found, 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	HARNESS_EQ(atomic_load(&b->found), 1);
	atomic_store(&b->found, 0);
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(a), SMARM_EXIT_CRASHED, 1), 0);
	HARNESS_CHECK(kid_await(&b->starts, 3));
	/* b counts its start before it looks the name up */
	HARNESS_CHECK(kid_await_set(&b->found));
	HARNESS_EQ(atomic_load(&b->found), 1);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	smarm_sup_spec_free(sp);
	free(a);
	free(b);
}

START_TEST(test_supervisor_readiness_orders_starts_by_name)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, root_ready, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ----------------------------------------------------------- errors */

static void body_not_supervised(void *arg)
{
	(void)arg;
	HARNESS_EQ(smarm_sup_ready(), SMARM_ESTATE);
}

static void root_errors(void *arg)
{
	smarm_sup_spec_t *sp = NULL;
	smarm_pid_t p;
	char longid[SMARM_NAME_MAX + 2];
	(void)arg;
	memset(longid, 'x', sizeof longid - 1);
	longid[sizeof longid - 1] = 0;
	HARNESS_EQ(smarm_sup_spec_alloc(NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	smarm_sup_spec_free(NULL);
	HARNESS_EQ(smarm_sup_spec_set_strategy(NULL, 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_strategy(sp, -1), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_strategy(sp, 4), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_intensity(NULL, 1, 1), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 1, 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 65537, 1), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 65536, 1), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(NULL, "a", kid_body, NULL, 0, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, NULL, kid_body, NULL, 0, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "", kid_body, NULL, 0, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, longid, kid_body, NULL, 0, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "a", NULL, NULL, 0, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "a", kid_body, NULL, -1, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "a", kid_body, NULL, 3, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "a", kid_body, NULL, 0, 0), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "a", kid_body, NULL, 1, 5),
		   SMARM_EEXIST);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(NULL, "a", 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, NULL, 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "", 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "zz", 0), SMARM_ENOENT);
	HARNESS_EQ(smarm_sup_start(NULL, &p), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_run(NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_start_failed(0), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_start_failed(1), SMARM_EINVAL);
	/* the root has no spawner; an actor of ours is no supervisor's */
	HARNESS_EQ(smarm_sup_ready(), SMARM_ESTATE);
	HARNESS_EQ(smarm_actor_spawn(&p, body_not_supervised, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
	/* an empty supervisor starts and shuts down */
	smarm_sup_spec_free(sp);
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_start(sp, &p), 0);
	HARNESS_EQ(exit_and_await(p, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	smarm_sup_spec_free(sp);
}

/* Add a temporary child of that id to sp: its status. */
static int spec_add_temp(smarm_sup_spec_t *sp, const char *id)
{
	return smarm_sup_spec_add_child(sp, id, kid_body, NULL,
					SMARM_SUP_TEMPORARY,
					SMARM_SUP_SHUTDOWN_DEFAULT);
}

/*
 * A spec of SMARM_SUP_CHILDREN_MAX children is built in linear time:
 * each add looks its id up among the children before it (SMARM_EEXIST),
 * and a scan made that 2*10^9 comparisons at the maximum (seconds of
 * CPU). Measured in this thread's CPU time, so a loaded machine does not
 * fail it; a linear build takes tens of milliseconds.
 */
START_TEST(test_supervisor_spec_of_the_most_children_builds_linearly)
{
	smarm_sup_spec_t *sp = NULL;
	char id[32];
	struct timespec a, b;
	double cpu;
	ck_assert_int_eq(smarm_sup_spec_alloc(&sp), 0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (int i = 0; i < SMARM_SUP_CHILDREN_MAX; i++) {
		snprintf(id, sizeof id, "child%d", i);
		ck_assert_int_eq(spec_add_temp(sp, id), 0);
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	cpu = (double)(b.tv_sec - a.tv_sec) +
	      (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	ck_assert_msg(cpu < 2.0 * harness_time_scale(),
		      "%d children took %.2f s of CPU", SMARM_SUP_CHILDREN_MAX,
		      cpu);
	/* every id is found: first, middle, last; a new one is not */
	ck_assert_int_eq(smarm_sup_spec_set_child_ready(sp, "child0", MS(1)),
			 0);
	ck_assert_int_eq(
		smarm_sup_spec_set_child_ready(sp, "child40000", MS(1)), 0);
	snprintf(id, sizeof id, "child%d", SMARM_SUP_CHILDREN_MAX - 1);
	ck_assert_int_eq(smarm_sup_spec_set_child_ready(sp, id, MS(1)), 0);
	ck_assert_int_eq(smarm_sup_spec_set_child_ready(sp, "child", MS(1)),
			 SMARM_ENOENT);
	/* full: even a fresh id is refused */
	ck_assert_int_eq(spec_add_temp(sp, "another"), SMARM_EINVAL);
	smarm_sup_spec_free(sp);

	/* a duplicate past the scan, before and after the index grows */
	ck_assert_int_eq(smarm_sup_spec_alloc(&sp), 0);
	for (int i = 0; i < 100; i++) {
		snprintf(id, sizeof id, "k%d", i);
		ck_assert_int_eq(spec_add_temp(sp, id), 0);
		for (int j = 0; j <= i; j += 7) {
			snprintf(id, sizeof id, "k%d", j);
			ck_assert_int_eq(spec_add_temp(sp, id), SMARM_EEXIST);
		}
	}
	smarm_sup_spec_free(sp);
}
END_TEST

START_TEST(test_supervisor_misuse_returns_errors)
{
	smarm_pid_t p;
	harness_checks_reset();
	/* outside an actor */
	ck_assert_int_eq(smarm_sup_start(NULL, &p), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_run(NULL), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_ready(), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_start_failed(-1), SMARM_ENOTACTOR);
	ck_assert_str_eq(smarm_err_name(SMARM_EINTENSITY), "SMARM_EINTENSITY");
	ck_assert_int_eq(harness_run(2, root_errors, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------------------------------- dynamic */

static int count_of(smarm_pid_t sup, size_t *active)
{
	size_t specs = 0;
	HARNESS_EQ(smarm_sup_count_children(sup, &specs, active, MS(5000)), 0);
	return (int)specs;
}

static smarm_pid_t pid_of(smarm_pid_t sup, const char *id)
{
	smarm_sup_child_t buf[16];
	size_t n = 0;
	HARNESS_EQ(smarm_sup_which_children(sup, buf, 16, &n, MS(5000)), 0);
	for (size_t i = 0; i < n && i < 16; i++)
		if (strcmp(buf[i].id, id) == 0)
			return buf[i].pid;
	return SMARM_PID_NONE;
}

static void root_dynamic(void *arg)
{
	smarm_sup_spec_t *sp = NULL;
	struct kid *a = kid_new(1, KID_PARK);
	struct kid *b = kid_new(2, KID_PARK);
	struct kid *t = kid_new(3, KID_PARK);
	smarm_pid_t sup, pb, pb2, other;
	smarm_sup_child_t buf[16];
	size_t n = 0;
	size_t active = 0;
	int rc;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "a", kid_body, a,
					    SMARM_SUP_PERMANENT, MS(3000)),
		   0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	HARNESS_EQ(count_of(sup, &active), 1);
	HARNESS_EQ(active, 1);
	HARNESS_EQ(smarm_sup_start_child(sup, "b", kid_body, b,
					 SMARM_SUP_TRANSIENT, MS(3000),
					 MS(5000), &pb),
		   0);
	HARNESS_EQ(smarm_sup_start_child(sup, "a", kid_body, b,
					 SMARM_SUP_TRANSIENT, MS(3000),
					 MS(5000), NULL),
		   SMARM_EEXIST);
	for (int i = 0; i < 3; i++) /* simple_one_for_one style */
		HARNESS_EQ(smarm_sup_start_child(
				   sup, NULL, kid_body, t, SMARM_SUP_TEMPORARY,
				   SMARM_SUP_BRUTAL_KILL, MS(5000), NULL),
			   0);
	/* which_children: truncation, then the whole list in order */
	HARNESS_EQ(smarm_sup_which_children(sup, buf, 2, &n, MS(5000)), 0);
	HARNESS_EQ(n, 5);
	HARNESS_CHECK(strcmp(buf[0].id, "a") == 0);
	HARNESS_CHECK(strcmp(buf[1].id, "b") == 0);
	HARNESS_CHECK(smarm_pid_eq(buf[1].pid, pb));
	HARNESS_EQ(buf[1].restart, SMARM_SUP_TRANSIENT);
	HARNESS_EQ(smarm_sup_which_children(sup, NULL, 0, &n, MS(5000)), 0);
	HARNESS_EQ(n, 5);
	HARNESS_EQ(smarm_sup_which_children(sup, buf, 16, &n, MS(5000)), 0);
	HARNESS_CHECK(strcmp(buf[2].id, "#1") == 0);
	HARNESS_CHECK(strcmp(buf[4].id, "#3") == 0);
	HARNESS_EQ(buf[4].restart, SMARM_SUP_TEMPORARY);
	HARNESS_CHECK(!smarm_pid_eq(buf[4].pid, SMARM_PID_NONE));
	/* after a restart: b's new pid */
	HARNESS_CHECK(kid_await(&b->starts, 1));
	HARNESS_EQ(smarm_actor_send_exit(pb, SMARM_EXIT_CRASHED, 3), 0);
	HARNESS_CHECK(kid_await(&b->starts, 2));
	pb2 = pid_of(sup, "b");
	HARNESS_CHECK(!smarm_pid_eq(pb2, pb));
	HARNESS_CHECK(smarm_pid_eq(pb2, kid_pid(b)));
	HARNESS_EQ(count_of(sup, &active), 5);
	HARNESS_EQ(active, 5);
	/* terminate, restart, delete */
	HARNESS_EQ(smarm_sup_terminate_child(sup, "b", MS(5000)), 0);
	HARNESS_CHECK(!smarm_actor_is_alive(pb2));
	HARNESS_CHECK(smarm_pid_eq(pid_of(sup, "b"), SMARM_PID_NONE));
	HARNESS_EQ(count_of(sup, &active), 5);
	HARNESS_EQ(active, 4);
	HARNESS_EQ(smarm_sup_terminate_child(sup, "b", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_restart_child(sup, "b", MS(5000), &pb), 0);
	HARNESS_CHECK(smarm_pid_eq(pid_of(sup, "b"), pb));
	HARNESS_EQ(smarm_sup_restart_child(sup, "b", MS(5000), NULL),
		   SMARM_ESTATE);
	HARNESS_EQ(smarm_sup_delete_child(sup, "b", MS(5000)), SMARM_ESTATE);
	HARNESS_EQ(smarm_sup_terminate_child(sup, "b", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_delete_child(sup, "b", MS(5000)), 0);
	HARNESS_EQ(count_of(sup, NULL), 4);
	HARNESS_EQ(smarm_sup_terminate_child(sup, "zz", MS(5000)),
		   SMARM_ENOENT);
	HARNESS_EQ(smarm_sup_restart_child(sup, "b", MS(5000), NULL),
		   SMARM_ENOENT);
	HARNESS_EQ(smarm_sup_delete_child(sup, "b", MS(5000)), SMARM_ENOENT);
	/* temporary children: terminated or crashed, their spec goes */
	HARNESS_EQ(smarm_sup_terminate_child(sup, "#1", MS(5000)), 0);
	HARNESS_EQ(count_of(sup, NULL), 3);
	other = pid_of(sup, "#2");
	HARNESS_EQ(exit_and_await(other, SMARM_EXIT_CRASHED, 1, NULL),
		   SMARM_EXIT_CRASHED);
	for (int i = 0; i < 1000 && count_of(sup, NULL) != 2; i++)
		smarm_actor_sleep(MS(1));
	HARNESS_EQ(count_of(sup, &active), 2);
	HARNESS_EQ(active, 2);
	/* a late answer (timeout 0) is dropped without a leak */
	rc = smarm_sup_which_children(sup, buf, 16, &n, 0);
	HARNESS_CHECK(rc == SMARM_ETIMEDOUT || rc == 0);
	HARNESS_EQ(count_of(sup, NULL), 2);
	/* misuse */
	HARNESS_EQ(smarm_sup_count_children(sup, NULL, NULL, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_which_children(sup, buf, 16, NULL, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_which_children(sup, NULL, 1, &n, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_start_child(sup, "x", NULL, NULL, 0, 0, MS(5000),
					 NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_start_child(sup, "x", kid_body, NULL, 3, 0,
					 MS(5000), NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_start_child(sup, "", kid_body, NULL, 0, 0,
					 MS(5000), NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_terminate_child(sup, NULL, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_delete_child(sup, "", MS(5000)), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_count_children(SMARM_PID_NONE, &n, NULL, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_count_children(smarm_actor_self(), &n, NULL,
					    MS(5000)),
		   SMARM_EINVAL);
	/* an actor that is no supervisor; a dead one */
	other = kid_pid(a);
	HARNESS_EQ(smarm_sup_count_children(other, &n, NULL, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	/* its Down may come before its exit is over (on another worker) */
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_EQ(smarm_sup_count_children(sup, &n, NULL, MS(5000)),
		   SMARM_ENOPROC);
	HARNESS_EQ(smarm_sup_start_child(sup, NULL, kid_body, t, 0, 0, MS(5000),
					 NULL),
		   SMARM_ENOPROC);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_CHECK(sup_await(SMARM_STAT_REG_MAILBOXES, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_MONITORS, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_LINKS, 0));
	free(a);
	free(b);
	free(t);
}

START_TEST(test_supervisor_child_adm_simple_which_count_children)
{
	smarm_pid_t p = SMARM_PID_NONE;
	size_t n;
	harness_checks_reset();
	ck_assert_int_eq(smarm_sup_count_children(p, &n, NULL, 0),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_which_children(p, NULL, 0, &n, 0),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(
		smarm_sup_start_child(p, NULL, NULL, NULL, 0, 0, 0, NULL),
		SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_terminate_child(p, "a", 0), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_restart_child(p, "a", 0, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_delete_child(p, "a", 0), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_start_child_spec(p, NULL, 0, NULL, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_start_child_args(p, NULL, 0, NULL, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_terminate_child_pid(p, p, 0),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_restart_child_ex(p, "a", 0, NULL, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_which_children_ex(p, NULL, 0, &n, 0),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(
		smarm_sup_count_children_ex(p, &n, NULL, NULL, NULL, 0),
		SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_ready_info(1), SMARM_ENOTACTOR);
	ck_assert_int_eq(harness_run(2, root_dynamic, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* A caller that keeps the supervisor busy: terminate a slow child. */
static void body_terminate(void *arg)
{
	smarm_pid_t sup = { (uint64_t)(uintptr_t)arg };
	HARNESS_EQ(smarm_sup_terminate_child(sup, "slow", MS(10000)), 0);
}

static void root_busy(void *arg)
{
	smarm_sup_spec_t *sp = NULL;
	struct kid *k = kid_new(1, KID_TRAP_SLOW);
	struct kid *p = kid_new(2, KID_PARK);
	smarm_pid_t sup, helper;
	size_t n = 0;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "slow", kid_body, k,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_INFINITY),
		   0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	HARNESS_CHECK(kid_await(&k->starts, 1));
	HARNESS_CHECK(kid_await(&k->trapped, 1));
	HARNESS_EQ(smarm_actor_spawn(&helper, body_terminate,
				     (void *)(uintptr_t)sup.id, NULL),
		   0);
	/* the supervisor now waits 200 ms for the slow child's end */
	HARNESS_CHECK(kid_await(&k->saw_exit, 1));
	HARNESS_EQ(smarm_sup_count_children(sup, &n, NULL, MS(50)),
		   SMARM_ETIMEDOUT);
	HARNESS_EQ(smarm_sup_count_children(sup, &n, NULL, 0), SMARM_ETIMEDOUT);
	HARNESS_EQ(smarm_actor_join(helper, NULL, NULL), 0);
	HARNESS_EQ(count_of(sup, NULL), 1); /* it still answers */
	HARNESS_EQ(smarm_sup_restart_child(sup, "slow", MS(5000), NULL), 0);
	/* the helper's and the old child's slots are free once they finish
	 * their exits, which may lag their Downs on another worker */
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 3));
	/* no actor slot for a dynamic child: nothing recorded */
	HARNESS_EQ(smarm_sup_start_child(sup, "p", kid_body, p,
					 SMARM_SUP_PERMANENT, 0, MS(5000),
					 NULL),
		   0);
	HARNESS_EQ(smarm_sup_start_child(sup, "q", kid_body, p,
					 SMARM_SUP_PERMANENT, 0, MS(5000),
					 NULL),
		   SMARM_EATCAPACITY);
	HARNESS_EQ(count_of(sup, NULL), 2);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	free(k);
	free(p);
}

START_TEST(test_supervisor_busy_supervisor_times_out_and_capacity)
{
	harness_checks_reset();
	/* 4 slots: root, supervisor, slow, helper; then root,
	 * supervisor, slow (restarted) and "p" */
	ck_assert_int_eq(harness_run_ex(2, 4, root_busy, NULL, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------------ storm */

#define STORM_SUPS 100
#define STORM_KIDS 100 /* per supervisor: 10,000 children */

struct storm_kid {
	int plan;	    /* crashes before it settles */
	_Atomic int starts; /* bodies run */
};

static struct storm_kid storm[STORM_SUPS * STORM_KIDS];
static _Atomic int storm_starts;

static void storm_body(void *arg)
{
	struct storm_kid *k = arg;
	int n = atomic_fetch_add(&k->starts, 1) + 1;
	char name[16];
	/* Every incarnation holds a name and a group membership, so the
	 * zero counts at the end show that deaths gave them back. */
	snprintf(name, sizeof name, "s%d", (int)(k - storm));
	HARNESS_EQ(smarm_register(name, NULL), 0);
	HARNESS_EQ(smarm_group_join("storm", smarm_actor_self(), NULL), 0);
	atomic_fetch_add(&storm_starts, 1);
	if (n <= k->plan) {
		smarm_actor_sleep((uint64_t)(rand() % 1000) * 1000);
		smarm_actor_crash(n);
	}
	kid_park();
}

static void root_storm(void *arg)
{
	smarm_pid_t sups[STORM_SUPS];
	int want = 0;
	unsigned seed = 12345;
	(void)arg;
	for (int i = 0; i < STORM_SUPS * STORM_KIDS; i++) {
		storm[i].plan = (int)(rand_r(&seed) % 4);
		atomic_store(&storm[i].starts, 0);
		want += storm[i].plan + 1;
	}
	atomic_store(&storm_starts, 0);
	for (int s = 0; s < STORM_SUPS; s++) {
		smarm_sup_spec_t *sp = NULL;
		HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
		HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 65536, MS(60000)),
			   0);
		for (int c = 0; c < STORM_KIDS; c++) {
			char id[16];
			snprintf(id, sizeof id, "k%d", c);
			HARNESS_EQ(smarm_sup_spec_add_child(
					   sp, id, storm_body,
					   &storm[s * STORM_KIDS + c],
					   SMARM_SUP_PERMANENT,
					   SMARM_SUP_BRUTAL_KILL),
				   0);
		}
		HARNESS_EQ(smarm_sup_start(sp, &sups[s]), 0);
		smarm_sup_spec_free(sp);
	}
	HARNESS_CHECK(kid_await(&storm_starts, want));
	for (int s = 0; s < STORM_SUPS; s++)
		HARNESS_EQ(
			smarm_actor_send_exit(sups[s], SMARM_EXIT_SHUTDOWN, 0),
			0);
	HARNESS_CHECK(harness_await_stat(smarm_node_current(),
					 SMARM_STAT_LIVE_ACTORS, 1));
	for (int i = 0; i < STORM_SUPS * STORM_KIDS; i++)
		HARNESS_EQ(atomic_load(&storm[i].starts), storm[i].plan + 1);
	HARNESS_EQ(atomic_load(&storm_starts), want);
	HARNESS_CHECK(sup_await(SMARM_STAT_TIMERS, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_REG_NAMES, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_REG_MAILBOXES, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_MONITORS, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_LINKS, 0));
	HARNESS_CHECK(sup_await(SMARM_STAT_REG_MEMBERSHIPS, 0));
	/* exact: every start after a child's first is one restart */
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_SUP_RESTARTS),
		   want - STORM_SUPS * STORM_KIDS);
	HARNESS_CHECK(sup_await(SMARM_STAT_ENDED_UNJOINED, 0));
	/* only the root's slot is held */
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_FREE_SLOTS),
		   harness_actor_stat(SMARM_STAT_SLOTS) - 1);
}

START_TEST(test_supervisor_crash_storm_counts_exactly_and_leaks_nothing)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, root_storm, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * Many dynamic children (the table grows past its first capacities,
 * and deleted temporary children are compacted away): each crash still
 * restarts exactly the child that crashed, so a Down is matched to its
 * child by pid however the table moved.
 */
#define MANY_KIDS 40

static _Atomic int many_starts[MANY_KIDS];

static void many_body(void *arg)
{
	atomic_fetch_add(&many_starts[(intptr_t)arg], 1);
	kid_park();
}

static void root_many(void *arg)
{
	smarm_sup_spec_t *sp = NULL;
	smarm_pid_t sup, pids[MANY_KIDS];
	size_t active = 0;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 65536, MS(60000)), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	for (intptr_t i = 0; i < MANY_KIDS; i++) {
		char id[16];
		atomic_store(&many_starts[i], 0);
		snprintf(id, sizeof id, "m%d", (int)i);
		/* every third one temporary: deleted when it is stopped */
		HARNESS_EQ(smarm_sup_start_child(
				   sup, id, many_body, (void *)i,
				   i % 3 == 0 ? SMARM_SUP_TEMPORARY
					      : SMARM_SUP_PERMANENT,
				   SMARM_SUP_BRUTAL_KILL, MS(5000), &pids[i]),
			   0);
	}
	/* Started is not yet run (no readiness report): a kid killed before
	 * its first instruction never counts its start. */
	for (int i = 0; i < MANY_KIDS; i++)
		HARNESS_CHECK(kid_await(&many_starts[i], 1));
	for (int i = 0; i < MANY_KIDS; i += 3) { /* holes, then compaction */
		char id[16];
		snprintf(id, sizeof id, "m%d", i);
		HARNESS_EQ(smarm_sup_terminate_child(sup, id, MS(5000)), 0);
	}
	HARNESS_EQ(count_of(sup, &active), MANY_KIDS - (MANY_KIDS + 2) / 3);
	/* Crash the permanent ones, last first: each restarts itself. */
	for (int i = MANY_KIDS - 1; i >= 0; i--) {
		if (i % 3 == 0)
			continue;
		HARNESS_EQ(exit_and_await(pids[i], SMARM_EXIT_CRASHED, i, NULL),
			   SMARM_EXIT_CRASHED);
		HARNESS_CHECK(kid_await(&many_starts[i], 2));
	}
	for (int i = 0; i < MANY_KIDS; i++)
		HARNESS_EQ(atomic_load(&many_starts[i]), i % 3 == 0 ? 1 : 2);
	HARNESS_EQ(count_of(sup, &active), MANY_KIDS - (MANY_KIDS + 2) / 3);
	HARNESS_EQ(active, MANY_KIDS - (MANY_KIDS + 2) / 3);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	/* Its own monitors go after its Down was sent: wait for them. */
	HARNESS_CHECK(harness_await_stat(smarm_node_current(),
					 SMARM_STAT_MONITORS, 0));
	HARNESS_CHECK(
		harness_await_stat(smarm_node_current(), SMARM_STAT_LINKS, 0));
}

START_TEST(test_supervisor_many_children_each_restart_finds_its_child)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, root_many, NULL), 0);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_supervisor_suite(void)
{
	Suite *s = suite_create("supervisor");
	TCase *t = tcase_create("strategy");
	tcase_add_test(t, test_supervisor_one_for_one_restarts_only_the_child);
	tcase_add_test(t, test_supervisor_one_for_all_cycles_every_sibling);
	tcase_add_test(t, test_supervisor_rest_for_one_cycles_later_siblings);
	tcase_add_test(
		t,
		test_supervisor_normal_shutdown_abnormal_termination_by_kind);
	suite_add_tcase(s, t);
	t = tcase_create("intensity");
	tcase_add_test(t,
		       test_supervisor_multiple_restarts_crash_with_eintensity);
	tcase_add_test(t, test_supervisor_intensity_counts_only_the_window);
	tcase_add_test(
		t, test_supervisor_one_for_one_escalation_reaches_the_parent);
	suite_add_tcase(s, t);
	t = tcase_create("start");
	tcase_add_test(
		t,
		test_supervisor_sup_start_fail_child_failure_fails_the_start);
	tcase_add_test(t, test_supervisor_readiness_orders_starts_by_name);
	suite_add_tcase(s, t);
	t = tcase_create("dynamic");
	tcase_add_test(t,
		       test_supervisor_child_adm_simple_which_count_children);
	tcase_add_test(
		t, test_supervisor_many_children_each_restart_finds_its_child);
	tcase_add_test(t,
		       test_supervisor_busy_supervisor_times_out_and_capacity);
	suite_add_tcase(s, t);
	t = tcase_create("errors");
	tcase_add_test(t, test_supervisor_misuse_returns_errors);
	tcase_add_test(
		t, test_supervisor_spec_of_the_most_children_builds_linearly);
	suite_add_tcase(s, t);
	t = tcase_create("storm");
	tcase_set_timeout(t, 120);
	tcase_add_test(
		t,
		test_supervisor_crash_storm_counts_exactly_and_leaks_nothing);
	suite_add_tcase(s, t);
	return s;
}

SMARM_TEST_MAIN(supervisor)
