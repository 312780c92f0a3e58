/* SPDX-License-Identifier: MIT */
/*
 * test_root_exit.c - root exit is "the program is done": when the root
 * actor ends, every forest root is shut down. A non-trapping sleeper is
 * ended (SMARM_EXIT_SHUTDOWN, promptly, its cleanups run), a trapping one
 * gets the shutdown as a message and may finish its work with timers; a
 * parked-forever daemon and a periodic timer daemon do not keep the run
 * open; actors below a live parent are left to it, and shut down when it
 * ends. Ports the Rust smarm runtime's tests/root_exit.rs.
 */
#include "harness.h"

#include <string.h>

#define SIG_SZ sizeof(smarm_signal_t)

static _Atomic int cleanups, finished, ticks;

static void count_cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&cleanups, 1);
}

static void reset(void)
{
	harness_checks_reset();
	atomic_store(&cleanups, 0);
	atomic_store(&finished, 0);
	atomic_store(&ticks, 0);
}

/* ------------------------------------------------- non-trapping */

static void body_sleeper(void *arg)
{
	(void)arg;
	smarm_cleanup_push(count_cleanup, NULL);
	smarm_actor_sleep(MS(60000));
	atomic_store(&finished, 1);
}

/* A trapping watcher monitors the sleeper and records its Down. */
static _Atomic int watched_how = -1;

static void body_watch(void *arg)
{
	smarm_pid_t target = *(smarm_pid_t *)arg;
	smarm_chan_t *ch = NULL;
	smarm_signal_t s;
	bool down = false, shut = false;
	HARNESS_EQ(smarm_chan_alloc(&ch, SIG_SZ, NULL), 0);
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	HARNESS_EQ(smarm_monitor(target, ch, NULL), 0);
	while (!(down && shut)) {
		HARNESS_EQ(smarm_chan_recv_timeout(ch, &s, MS(10000)), 0);
		if (s.kind == SMARM_SIGNAL_DOWN) {
			atomic_store(&watched_how, s.how);
			down = true;
		} else {
			HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
			HARNESS_CHECK(smarm_pid_eq(s.from, SMARM_PID_NONE));
			shut = true;
		}
	}
	HARNESS_EQ(smarm_trap_exit(NULL), 0);
	harness_chan_drop(ch);
}

static smarm_pid_t sl_pid;

static void root_sleeper(void *arg)
{
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(NULL, body_sleeper, NULL, NULL), 0);
	sl_pid = SMARM_PID_NONE;
	HARNESS_EQ(smarm_actor_spawn(&sl_pid, body_sleeper, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, body_watch, &sl_pid, NULL), 0);
	smarm_actor_yield();
	HARNESS_EQ(smarm_actor_sleep(MS(10)), 0); /* all set up */
}

START_TEST(test_root_exit_unjoined_non_trapping_sleeper_is_stopped)
{
	uint64_t t0 = smarm_now_ns();
	reset();
	atomic_store(&watched_how, -1);
	ck_assert_int_eq(harness_run(2, root_sleeper, NULL), SMARM_EXIT_NORMAL);
	ck_assert_elapsed_lt(harness_since(t0), MS(2000));
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&finished), 0);
	ck_assert_int_eq(atomic_load(&cleanups), 2);
	ck_assert_int_eq(atomic_load(&watched_how), SMARM_EXIT_SHUTDOWN);
}
END_TEST

/* ------------------------------------------------------ trapping */

static smarm_chan_t *tr_ready;

static void body_trap_then_finish(void *arg)
{
	smarm_chan_t *ch = NULL;
	smarm_signal_t s;
	int one = 1;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&ch, SIG_SZ, NULL), 0);
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	HARNESS_EQ(smarm_chan_send(tr_ready, &one), 0);
	HARNESS_EQ(smarm_chan_recv(ch, &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_EXIT);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
	/* Drain: timers still work after the root's end. */
	for (int i = 0; i < 3; i++)
		HARNESS_EQ(smarm_actor_sleep(MS(5)), 0);
	atomic_store(&finished, 1);
	HARNESS_EQ(smarm_trap_exit(NULL), 0);
	harness_chan_drop(ch);
}

static void root_trapping(void *arg)
{
	int v;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&tr_ready, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, body_trap_then_finish, NULL, NULL),
		   0);
	HARNESS_EQ(smarm_chan_recv(tr_ready, &v), 0);
	harness_chan_drop(tr_ready);
}

START_TEST(test_root_exit_trapping_actor_may_finish_after_shutdown_signal)
{
	reset();
	ck_assert_int_eq(harness_run(2, root_trapping, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&finished), 1);
}
END_TEST

/* ------------------------------------------------------ daemons */

static void body_parked_daemon(void *arg)
{
	(void)arg;
	smarm_cleanup_push(count_cleanup, NULL);
	harness_park();
}

static void body_ticker(void *arg)
{
	(void)arg;
	smarm_cleanup_push(count_cleanup, NULL);
	for (;;) {
		atomic_fetch_add(&ticks, 1);
		smarm_actor_sleep(MS(1));
	}
}

static void root_daemons(void *arg)
{
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(NULL, body_parked_daemon, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, body_ticker, NULL, NULL), 0);
	while (atomic_load(&ticks) < 3)
		smarm_actor_sleep(MS(1));
}

START_TEST(test_root_exit_parked_and_periodic_daemons_do_not_block_run)
{
	uint64_t t0 = smarm_now_ns();
	reset();
	ck_assert_int_eq(harness_run(2, root_daemons, NULL), SMARM_EXIT_NORMAL);
	ck_assert_elapsed_lt(harness_since(t0), MS(2000));
	harness_checks_assert();
	ck_assert_int_ge(atomic_load(&ticks), 3);
	ck_assert_int_eq(atomic_load(&cleanups), 2);
}
END_TEST

/* ------------------------------------------------------ the tree */

static _Atomic int child_alive_while_draining;
static smarm_pid_t tree_child;

/* A non-trapping parent with a parked child: both go, in turn. */
static void body_parent_of_parked(void *arg)
{
	(void)arg;
	smarm_cleanup_push(count_cleanup, NULL);
	HARNESS_EQ(smarm_actor_spawn(NULL, body_parked_daemon, NULL, NULL), 0);
	harness_park();
}

/* A trapping parent: its child is left to it while it drains. */
static void body_trapping_parent(void *arg)
{
	smarm_chan_t *ch = NULL;
	smarm_signal_t s;
	int one = 1;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&ch, SIG_SZ, NULL), 0);
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	HARNESS_EQ(
		smarm_actor_spawn(&tree_child, body_parked_daemon, NULL, NULL),
		0);
	HARNESS_EQ(smarm_chan_send(tr_ready, &one), 0);
	HARNESS_EQ(smarm_chan_recv(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(smarm_actor_sleep(MS(20)), 0);
	atomic_store(&child_alive_while_draining,
		     smarm_actor_is_alive(tree_child));
	HARNESS_EQ(smarm_trap_exit(NULL), 0);
	harness_chan_drop(ch);
	/* Ends normally: its child is a forest root now. */
}

static void root_tree(void *arg)
{
	int v;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&tr_ready, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, body_parent_of_parked, NULL, NULL),
		   0);
	HARNESS_EQ(smarm_actor_spawn(NULL, body_trapping_parent, NULL, NULL),
		   0);
	HARNESS_EQ(smarm_chan_recv(tr_ready, &v), 0);
	harness_chan_drop(tr_ready);
	HARNESS_EQ(smarm_actor_sleep(MS(5)), 0);
}

START_TEST(test_root_exit_children_of_live_parents_go_when_they_do)
{
	reset();
	atomic_store(&child_alive_while_draining, 0);
	ck_assert_int_eq(harness_run(4, root_tree, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	/* parent_of_parked, its child, the trapping parent's child */
	ck_assert_int_eq(atomic_load(&cleanups), 3);
	ck_assert_int_eq(atomic_load(&child_alive_while_draining), 1);
}
END_TEST

/* smarm_node_stop after the root's end kills what was left to drain. */
static void body_trap_forever(void *arg)
{
	smarm_chan_t *ch = NULL;
	int one = 1;
	(void)arg;
	smarm_cleanup_push(count_cleanup, NULL);
	HARNESS_EQ(smarm_chan_alloc(&ch, SIG_SZ, NULL), 0);
	smarm_cleanup_push(harness_chan_drop_cb, ch);
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	HARNESS_EQ(smarm_chan_send(tr_ready, &one), 0);
	for (;;) {
		smarm_signal_t s;
		smarm_chan_recv(ch, &s); /* ignores every shutdown */
		if (s.how == SMARM_EXIT_SHUTDOWN)
			smarm_node_stop(smarm_node_current());
	}
}

static void root_stubborn(void *arg)
{
	int v;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&tr_ready, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, body_trap_forever, NULL, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(tr_ready, &v), 0);
	harness_chan_drop(tr_ready);
}

START_TEST(test_root_exit_node_stop_kills_a_trapping_straggler)
{
	reset();
	ck_assert_int_eq(harness_run(2, root_stubborn, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&cleanups), 1);
}
END_TEST

Suite *smarm_test_root_exit_suite(void)
{
	Suite *s = suite_create("root_exit");
	TCase *t = tcase_create("root_exit");
	tcase_add_test(t,
		       test_root_exit_unjoined_non_trapping_sleeper_is_stopped);
	tcase_add_test(
		t,
		test_root_exit_trapping_actor_may_finish_after_shutdown_signal);
	tcase_add_test(
		t, test_root_exit_parked_and_periodic_daemons_do_not_block_run);
	tcase_add_test(t,
		       test_root_exit_children_of_live_parents_go_when_they_do);
	tcase_add_test(t, test_root_exit_node_stop_kills_a_trapping_straggler);
	suite_add_tcase(s, t);
	return s;
}

SMARM_TEST_MAIN(root_exit)
