/* SPDX-License-Identifier: MIT */
/*
 * test_sup_shutdown.c - how supervisors stop children and end: a
 * shutdown stops children in reverse start order and ends the
 * supervisor SHUTDOWN; a non-trapping child is simply shut down;
 * brutal_kill skips the shutdown; a straggler that ignores the shutdown
 * is killed after its timeout; infinity waits for a slow compliant
 * child; a killed supervisor takes its children along (links); nested
 * trees shut down bottom-up; sibling cycling uses the graceful
 * shutdown; the root's end shuts a tree down through its supervisor.
 * Ports the Rust smarm runtime's tests/supervisor_shutdown.rs and OTP
 * supervisor_SUITE's sup_stop_infinity, sup_stop_timeout,
 * sup_stop_brutal_kill and tree.
 */
#include "sup_kids.h"

static smarm_sup_spec_t *spec_of(struct kid **k, int n, const int *modes,
				 const uint64_t *shutdown)
{
	smarm_sup_spec_t *sp = NULL;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	for (int i = 0; i < n; i++) {
		char id[16]; /* "c" and any int: -O0 builds check the size */
		snprintf(id, sizeof id, "c%d", i);
		k[i] = kid_new(i + 1, modes[i]);
		HARNESS_EQ(smarm_sup_spec_add_child(sp, id, kid_body, k[i],
						    SMARM_SUP_PERMANENT,
						    shutdown[i]),
			   0);
	}
	return sp;
}

static smarm_pid_t start_and_settle(smarm_sup_spec_t *sp, struct kid **k, int n)
{
	smarm_pid_t sup = SMARM_PID_NONE;
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	for (int i = 0; i < n; i++)
		HARNESS_CHECK(kid_await(&k[i]->starts, 1));
	return sup;
}

static void root_order(void *arg)
{
	static const int modes[] = { KID_PARK, KID_PARK, KID_PARK };
	static const uint64_t sd[] = { SMARM_SUP_SHUTDOWN_DEFAULT,
				       SMARM_SUP_SHUTDOWN_DEFAULT,
				       SMARM_SUP_SHUTDOWN_DEFAULT };
	struct kid *k[3];
	smarm_sup_spec_t *sp = spec_of(k, 3, modes, sd);
	smarm_pid_t sup = start_and_settle(sp, k, 3);
	intptr_t reason = -1;
	smarm_chan_t *ch = sig_chan();
	smarm_pid_t kp[3];
	(void)arg;
	for (int i = 0; i < 3; i++) {
		kp[i] = kid_pid(k[i]);
		HARNESS_EQ(smarm_monitor(kp[i], ch, NULL), 0);
	}
	kid_log_reset();
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, &reason),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(reason, 0);
	HARNESS_EQ(atomic_load(&kid_log_n), 3);
	/* The order is the children's own log: [3, 2, 1]. Our Downs of
	 * different children may come in any order (only each pair's
	 * signals are ordered): each comes once. */
	bool seen[3] = { false, false, false };
	for (int i = 0; i < 3; i++) {
		smarm_signal_t s;
		HARNESS_EQ(atomic_load(&kid_log[i]), 3 - i);
		HARNESS_EQ(smarm_chan_recv_timeout(ch, &s, MS(5000)), 0);
		HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN); /* not trapping */
		for (int j = 0; j < 3; j++)
			if (smarm_pid_eq(s.from, kp[j])) {
				HARNESS_CHECK(!seen[j]);
				seen[j] = true;
			}
	}
	HARNESS_CHECK(seen[0] && seen[1] && seen[2]);
	harness_chan_drop(ch);
	smarm_sup_spec_free(sp);
	for (int i = 0; i < 3; i++)
		free(k[i]);
}

START_TEST(test_sup_shutdown_stops_children_in_reverse_order)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_order, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* One child of mode and shutdown; shut the supervisor down; how the
 * child ended and how long the supervisor took. */
static int stop_one(int mode, uint64_t shutdown, uint64_t *took, int *saw)
{
	struct kid *k[1];
	const int modes[] = { mode };
	const uint64_t sd[] = { shutdown };
	smarm_sup_spec_t *sp = spec_of(k, 1, modes, sd);
	smarm_pid_t sup = start_and_settle(sp, k, 1);
	smarm_chan_t *ch = sig_chan();
	smarm_signal_t s = { 0 };
	uint64_t t0;
	if (mode == KID_TRAP_IGNORE || mode == KID_TRAP_SLOW)
		HARNESS_CHECK(kid_await(&k[0]->trapped, 1));
	HARNESS_EQ(smarm_monitor(kid_pid(k[0]), ch, NULL), 0);
	t0 = smarm_now_ns();
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	*took = smarm_now_ns() - t0;
	HARNESS_EQ(smarm_chan_recv_timeout(ch, &s, MS(5000)), 0);
	*saw = atomic_load(&k[0]->saw_exit);
	harness_chan_drop(ch);
	smarm_sup_spec_free(sp);
	free(k[0]);
	return s.how;
}

static void root_policies(void *arg)
{
	uint64_t took;
	int saw;
	(void)arg;
	/* brutal kill: the straggler is killed, never sees a shutdown */
	HARNESS_EQ(
		stop_one(KID_TRAP_IGNORE, SMARM_SUP_BRUTAL_KILL, &took, &saw),
		SMARM_EXIT_STOPPED);
	HARNESS_EQ(saw, 0);
	HARNESS_CHECK(took < (uint64_t)(MS(2000) * harness_time_scale()));
	/* timeout: it sees the shutdown, ignores it, is killed after 100 ms */
	HARNESS_EQ(stop_one(KID_TRAP_IGNORE, MS(100), &took, &saw),
		   SMARM_EXIT_STOPPED);
	HARNESS_EQ(saw, 1);
	HARNESS_CHECK(took >= MS(100));
	HARNESS_CHECK(took < (uint64_t)(MS(2000) * harness_time_scale()));
	/* infinity: a slow compliant child is waited for, ends normally */
	HARNESS_EQ(stop_one(KID_TRAP_SLOW, SMARM_SUP_INFINITY, &took, &saw),
		   SMARM_EXIT_NORMAL);
	HARNESS_EQ(saw, 1);
	HARNESS_CHECK(took >= MS(200));
	/* a timeout longer than the child needs: it ends on its own */
	HARNESS_EQ(stop_one(KID_TRAP_SLOW, MS(3000), &took, &saw),
		   SMARM_EXIT_NORMAL);
	HARNESS_CHECK(took >= MS(200));
	/* a non-trapping child is simply shut down */
	HARNESS_EQ(stop_one(KID_PARK, MS(3000), &took, &saw),
		   SMARM_EXIT_SHUTDOWN);
}

START_TEST(test_sup_shutdown_sup_stop_brutal_kill_timeout_infinity)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_policies, NULL), 0);
	harness_checks_assert();
}
END_TEST

static void root_killed(void *arg)
{
	static const int modes[] = { KID_PARK, KID_PARK, KID_TRAP_IGNORE };
	static const uint64_t sd[] = { SMARM_SUP_SHUTDOWN_DEFAULT,
				       SMARM_SUP_SHUTDOWN_DEFAULT,
				       SMARM_SUP_SHUTDOWN_DEFAULT };
	struct kid *k[3];
	smarm_sup_spec_t *sp = spec_of(k, 3, modes, sd);
	smarm_pid_t sup = start_and_settle(sp, k, 3);
	smarm_chan_t *ch = sig_chan();
	(void)arg;
	HARNESS_CHECK(kid_await(&k[2]->trapped, 1));
	for (int i = 0; i < 3; i++)
		HARNESS_EQ(smarm_monitor(kid_pid(k[i]), ch, NULL), 0);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_STOPPED, 0, NULL),
		   SMARM_EXIT_STOPPED);
	for (int i = 0; i < 2; i++) {
		smarm_signal_t s;
		HARNESS_EQ(smarm_chan_recv_timeout(ch, &s, MS(5000)), 0);
		HARNESS_EQ(s.how, SMARM_EXIT_STOPPED); /* taken along */
	}
	/* the trapping one got the EXIT as a message: its own business */
	HARNESS_CHECK(kid_await(&k[2]->saw_exit, 1));
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(k[2]), SMARM_EXIT_STOPPED, 0),
		   0);
	{
		smarm_signal_t s;
		HARNESS_EQ(smarm_chan_recv_timeout(ch, &s, MS(5000)), 0);
	}
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_CHECK(sup_await(SMARM_STAT_LINKS, 0));
	harness_chan_drop(ch);
	smarm_sup_spec_free(sp);
	for (int i = 0; i < 3; i++)
		free(k[i]);
}

START_TEST(test_sup_shutdown_killed_supervisor_takes_its_children)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_killed, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* P: [1, S]; S: [10, 11]. A shutdown of P logs [11, 10, 1]. */
static void root_nested(void *arg)
{
	smarm_sup_spec_t *top = NULL;
	smarm_sup_spec_t *sub = NULL;
	struct kid *one = kid_new(1, KID_PARK);
	struct kid *s = kid_new(2, KID_SUB);
	struct kid *ten = kid_new(10, KID_PARK);
	struct kid *eleven = kid_new(11, KID_PARK);
	smarm_pid_t sup;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sub), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sub, "10", kid_body, ten,
					    SMARM_SUP_PERMANENT, MS(3000)),
		   0);
	HARNESS_EQ(smarm_sup_spec_add_child(sub, "11", kid_body, eleven,
					    SMARM_SUP_PERMANENT, MS(3000)),
		   0);
	s->sub = sub;
	HARNESS_EQ(smarm_sup_spec_alloc(&top), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(top, "1", kid_body, one,
					    SMARM_SUP_PERMANENT, MS(3000)),
		   0);
	HARNESS_EQ(smarm_sup_spec_add_child(top, "S", kid_body, s,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_INFINITY),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(top, "S", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_start(top, &sup), 0);
	/* S was ready: it had spawned both of its children */
	HARNESS_CHECK(kid_await(&ten->starts, 1));
	HARNESS_CHECK(kid_await(&eleven->starts, 1));
	kid_log_reset();
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(atomic_load(&kid_log_n), 4);
	HARNESS_EQ(atomic_load(&kid_log[0]), 11);
	HARNESS_EQ(atomic_load(&kid_log[1]), 10);
	HARNESS_EQ(atomic_load(&kid_log[2]), 2); /* S itself */
	HARNESS_EQ(atomic_load(&kid_log[3]), 1);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(top);
	smarm_sup_spec_free(sub);
	free(one);
	free(s);
	free(ten);
	free(eleven);
}

START_TEST(test_sup_shutdown_tree_nested_goes_bottom_up)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_nested, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * one_for_all: a's crash cycles b, a trapping child: b sees a
 * shutdown (graceful), ends, and runs again. Each step waits for what
 * it then asserts: a child's start is counted when its body runs, and
 * the supervisor does not wait for one child's body before it starts
 * the next, so b can be counted before a (at the start and at the
 * restart), and b traps only some time after its start.
 */
static void root_cycle(void *arg)
{
	static const int modes[] = { KID_PARK, KID_TRAP_SLOW };
	static const uint64_t sd[] = { MS(3000), MS(3000) };
	struct kid *k[2];
	smarm_sup_spec_t *sp = spec_of(k, 2, modes, sd);
	smarm_pid_t sup;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_set_strategy(sp, SMARM_SUP_ONE_FOR_ALL), 0);
	sup = start_and_settle(sp, k, 2);
	HARNESS_CHECK(kid_await(&k[1]->trapped, 1)); /* traps the cycle */
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(k[0]), SMARM_EXIT_CRASHED, 1),
		   0);
	HARNESS_CHECK(kid_await(&k[1]->starts, 2));
	HARNESS_EQ(atomic_load(&k[1]->saw_exit), 1);
	HARNESS_CHECK(kid_await(&k[0]->starts, 2));
	HARNESS_CHECK(kid_await(&k[1]->trapped, 2)); /* traps the shutdown */
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(atomic_load(&k[1]->saw_exit), 2); /* cycle + final */
	smarm_sup_spec_free(sp);
	free(k[0]);
	free(k[1]);
}

START_TEST(test_sup_shutdown_sibling_cycling_is_graceful)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_cycle, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* The root ends with a tree running: the tree is shut down through
 * its supervisor (children see exactly one shutdown). */
static struct kid *re_kid;

static void root_root_exit(void *arg)
{
	static const int modes[] = { KID_TRAP_SLOW };
	static const uint64_t sd[] = { MS(3000) };
	struct kid *k[1];
	smarm_sup_spec_t *sp = spec_of(k, 1, modes, sd);
	(void)arg;
	(void)start_and_settle(sp, k, 1);
	HARNESS_CHECK(kid_await(&k[0]->trapped, 1)); /* sees the shutdown */
	smarm_sup_spec_free(sp);
	re_kid = k[0];
}

START_TEST(test_sup_shutdown_root_exit_goes_through_the_supervisor)
{
	uint64_t t0 = smarm_now_ns();
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_root_exit, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&re_kid->saw_exit), 1);
	ck_assert_int_eq(atomic_load(&re_kid->starts), 1);
	ck_assert_elapsed_lt(harness_since(t0), MS(3000));
	free(re_kid);
}
END_TEST

Suite *smarm_test_sup_shutdown_suite(void)
{
	Suite *s = suite_create("sup_shutdown");
	TCase *t = tcase_create("shutdown");
	tcase_add_test(t, test_sup_shutdown_stops_children_in_reverse_order);
	tcase_add_test(t,
		       test_sup_shutdown_sup_stop_brutal_kill_timeout_infinity);
	tcase_add_test(t,
		       test_sup_shutdown_killed_supervisor_takes_its_children);
	tcase_add_test(t, test_sup_shutdown_tree_nested_goes_bottom_up);
	tcase_add_test(t, test_sup_shutdown_sibling_cycling_is_graceful);
	tcase_add_test(t,
		       test_sup_shutdown_root_exit_goes_through_the_supervisor);
	suite_add_tcase(s, t);
	return s;
}

SMARM_TEST_MAIN(sup_shutdown)
