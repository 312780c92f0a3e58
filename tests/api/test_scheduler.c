/* SPDX-License-Identifier: MIT */
/*
 * test_scheduler.c - the scheduler's basic contract: the root runs,
 * spawn+join, deterministic yield interleaving on one worker, pid
 * identity (self, pid_eq) and liveness.
 */
#include "harness.h"

#include <string.h>

/* ------------------------------------------------------------ root runs */

static atomic_int sched_root_ran;
static atomic_int sched_root_had_pid;

static void sched_root_marks(void *arg)
{
	(void)arg;
	atomic_store(&sched_root_ran, 1);
	atomic_store(&sched_root_had_pid,
		     !smarm_pid_eq(smarm_actor_self(), SMARM_PID_NONE));
}

START_TEST(test_scheduler_root_runs_once_with_pid)
{
	atomic_store(&sched_root_ran, 0);
	ck_assert_int_eq(harness_run(1, sched_root_marks, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&sched_root_ran), 1);
	ck_assert_int_eq(atomic_load(&sched_root_had_pid), 1);
}
END_TEST

static atomic_int sched_arg_seen;

static void sched_root_arg(void *arg)
{
	atomic_store(&sched_arg_seen, *(int *)arg);
}

START_TEST(test_scheduler_root_receives_arg)
{
	int v = 4242;
	ck_assert_int_eq(harness_run(4, sched_root_arg, &v), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&sched_arg_seen), 4242);
}
END_TEST

/* ---------------------------------------------------------- spawn+join */

static atomic_int sched_child_ran;
static int sched_join_rc, sched_join_how, sched_spawn_rc;
static intptr_t sched_join_reason;

static void sched_child(void *arg)
{
	atomic_fetch_add(&sched_child_ran, *(int *)arg);
}

static void sched_root_spawn_join(void *arg)
{
	static int seven = 7;
	smarm_pid_t pid = SMARM_PID_NONE;
	(void)arg;
	sched_spawn_rc = smarm_actor_spawn(&pid, sched_child, &seven, NULL);
	sched_join_how = -1;
	sched_join_reason = -1;
	sched_join_rc =
		smarm_actor_join(pid, &sched_join_how, &sched_join_reason);
}

START_TEST(test_scheduler_spawn_join_returns_normal)
{
	atomic_store(&sched_child_ran, 0);
	ck_assert_int_eq(harness_run(_i ? 4 : 1, sched_root_spawn_join, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(sched_spawn_rc, 0);
	ck_assert_int_eq(sched_join_rc, 0);
	ck_assert_int_eq(sched_join_how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq((int)sched_join_reason, 0);
	ck_assert_int_eq(atomic_load(&sched_child_ran), 7);
}
END_TEST

/* --------------------------------------------------- yield interleaving */

static char sched_log[128];
static size_t sched_log_len;

static void sched_log_put(const char *s)
{
	size_t n = strlen(s);
	if (sched_log_len + n < sizeof sched_log) {
		memcpy(sched_log + sched_log_len, s, n);
		sched_log_len += n;
		sched_log[sched_log_len] = '\0';
	}
}

static void sched_stepper(void *arg)
{
	const char *name = arg; /* "a", "b", "c" */
	char buf[3] = { name[0], '1', '\0' };
	sched_log_put(buf);
	smarm_actor_yield();
	buf[1] = '2';
	sched_log_put(buf);
	smarm_actor_yield();
	buf[1] = '3';
	sched_log_put(buf);
}

static void sched_root_interleave(void *arg)
{
	smarm_pid_t p[3];
	static const char *names[3] = { "a", "b", "c" };
	(void)arg;
	for (int i = 0; i < 3; i++)
		smarm_actor_spawn(&p[i], sched_stepper, (void *)names[i], NULL);
	sched_log_put("R0"); /* spawn does not switch: still the root */
	smarm_actor_yield();
	sched_log_put("R1");
	for (int i = 0; i < 3; i++)
		smarm_actor_join(p[i], NULL, NULL);
	sched_log_put("R2");
}

START_TEST(test_scheduler_yield_one_worker_interleaves_in_fifo_order)
{
	sched_log_len = 0;
	sched_log[0] = '\0';
	ck_assert_int_eq(harness_run(1, sched_root_interleave, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_str_eq(sched_log, "R0a1b1c1R1a2b2c2a3b3c3R2");
}
END_TEST

/* -------------------------------------------------------- pid identity */

static smarm_pid_t sched_spawned_pid;
static atomic_int sched_self_stable, sched_self_matches_spawner;

static void sched_self_checker(void *arg)
{
	smarm_pid_t first = smarm_actor_self();
	int stable = 1;
	(void)arg;
	for (int i = 0; i < 50; i++) {
		if (i % 3 == 0)
			smarm_actor_sleep(US(50));
		else
			smarm_actor_yield();
		if (!smarm_pid_eq(first, smarm_actor_self()))
			stable = 0;
	}
	atomic_store(&sched_self_stable, stable);
}

static void sched_root_self(void *arg)
{
	smarm_pid_t p[8];
	smarm_pid_t self = smarm_actor_self();
	int stable = 1;
	(void)arg;
	for (int i = 0; i < 8; i++)
		smarm_actor_spawn(&p[i], sched_self_checker, NULL, NULL);
	sched_spawned_pid = p[0];
	for (int i = 0; i < 20; i++) {
		smarm_actor_yield();
		if (!smarm_pid_eq(self, smarm_actor_self()))
			stable = 0;
	}
	for (int i = 0; i < 8; i++)
		smarm_actor_join(p[i], NULL, NULL);
	if (!stable)
		atomic_store(&sched_self_stable, 0);
}

START_TEST(test_scheduler_self_pid_stable_across_switches)
{
	atomic_store(&sched_self_stable, 0);
	ck_assert_int_eq(harness_run(4, sched_root_self, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&sched_self_stable), 1);
}
END_TEST

static smarm_pid_t sched_child_self;

static void sched_record_self(void *arg)
{
	(void)arg;
	sched_child_self = smarm_actor_self();
}

static void sched_root_self_matches(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, sched_record_self, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
	atomic_store(&sched_self_matches_spawner,
		     smarm_pid_eq(p, sched_child_self) ? 1 : 2);
}

START_TEST(test_scheduler_self_pid_equals_spawn_out_pid)
{
	ck_assert_int_eq(harness_run(1, sched_root_self_matches, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&sched_self_matches_spawner), 1);
}
END_TEST

/* --------------------------------------------------------------- pid_eq */

static int sched_eq_same, sched_eq_diff, sched_eq_none, sched_eq_copy;

static void sched_nop(void *arg)
{
	(void)arg;
}

static void sched_root_eq(void *arg)
{
	smarm_pid_t a, b, c;
	(void)arg;
	smarm_actor_spawn(&a, sched_nop, NULL, NULL);
	smarm_actor_spawn(&b, sched_nop, NULL, NULL);
	c = a;
	sched_eq_same = smarm_pid_eq(a, a);
	sched_eq_copy = smarm_pid_eq(a, c);
	sched_eq_diff = smarm_pid_eq(a, b) || smarm_pid_eq(b, a);
	sched_eq_none = smarm_pid_eq(a, SMARM_PID_NONE) ||
			smarm_pid_eq(SMARM_PID_NONE, smarm_actor_self());
	smarm_actor_join(a, NULL, NULL);
	smarm_actor_join(b, NULL, NULL);
}

START_TEST(test_scheduler_pid_eq_distinguishes_actors)
{
	ck_assert_int_eq(harness_run(1, sched_root_eq, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(sched_eq_same, 1);
	ck_assert_int_eq(sched_eq_copy, 1);
	ck_assert_int_eq(sched_eq_diff, 0);
	ck_assert_int_eq(sched_eq_none, 0);
}
END_TEST

/* -------------------------------------------------------- actor_is_alive */

static int sched_alive_self, sched_alive_parked, sched_alive_after_join,
	sched_alive_none, sched_alive_queued;
static smarm_chan_t *sched_gate;

static void sched_gate_waiter(void *arg)
{
	int v;
	(void)arg;
	smarm_chan_recv(sched_gate, &v);
}

static void sched_root_alive(void *arg)
{
	smarm_pid_t p;
	int v = 1;
	(void)arg;
	smarm_chan_alloc(&sched_gate, sizeof(int), NULL);
	smarm_actor_spawn(&p, sched_gate_waiter, NULL, NULL);
	sched_alive_queued = smarm_actor_is_alive(p);
	smarm_actor_yield(); /* 1 worker: the child runs and parks */
	sched_alive_self = smarm_actor_is_alive(smarm_actor_self());
	sched_alive_parked = smarm_actor_is_alive(p);
	sched_alive_none = smarm_actor_is_alive(SMARM_PID_NONE);
	smarm_chan_send(sched_gate, &v);
	smarm_actor_join(p, NULL, NULL);
	sched_alive_after_join = smarm_actor_is_alive(p);
	harness_chan_drop(sched_gate);
}

START_TEST(test_scheduler_is_alive_tracks_lifetime)
{
	ck_assert_int_eq(harness_run(1, sched_root_alive, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(sched_alive_queued, 1);
	ck_assert_int_eq(sched_alive_self, 1);
	ck_assert_int_eq(sched_alive_parked, 1);
	ck_assert_int_eq(sched_alive_none, 0);
	ck_assert_int_eq(sched_alive_after_join, 0);
}
END_TEST

static int sched_alive_done_unjoined;

static void sched_root_alive_done(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, sched_nop, NULL, NULL);
	smarm_actor_yield(); /* 1 worker: the child runs to its end */
	/* Ended but not yet joined: the slot is kept, the actor is not. */
	sched_alive_done_unjoined = smarm_actor_is_alive(p);
	smarm_actor_join(p, NULL, NULL);
}

START_TEST(test_scheduler_is_alive_false_for_ended_unjoined_actor)
{
	ck_assert_int_eq(harness_run(1, sched_root_alive_done, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(sched_alive_done_unjoined, 0);
}
END_TEST

START_TEST(test_scheduler_is_alive_outside_actor_false)
{
	smarm_pid_t p = { UINT64_C(0x100000000) };
	ck_assert(!smarm_actor_is_alive(p));
	ck_assert(!smarm_actor_is_alive(SMARM_PID_NONE));
	ck_assert_ptr_null(smarm_node_current());
}
END_TEST

Suite *smarm_test_scheduler_suite(void)
{
	Suite *s = suite_create("scheduler");
	TCase *tc = tcase_create("run");
	tcase_add_test(tc, test_scheduler_root_runs_once_with_pid);
	tcase_add_test(tc, test_scheduler_root_receives_arg);
	tcase_add_loop_test(tc, test_scheduler_spawn_join_returns_normal, 0, 2);
	tcase_add_test(
		tc, test_scheduler_yield_one_worker_interleaves_in_fifo_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("pids");
	tcase_add_test(tc, test_scheduler_self_pid_stable_across_switches);
	tcase_add_test(tc, test_scheduler_self_pid_equals_spawn_out_pid);
	tcase_add_test(tc, test_scheduler_pid_eq_distinguishes_actors);
	tcase_add_test(tc, test_scheduler_is_alive_tracks_lifetime);
	tcase_add_test(tc,
		       test_scheduler_is_alive_false_for_ended_unjoined_actor);
	tcase_add_test(tc, test_scheduler_is_alive_outside_actor_false);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(scheduler)
