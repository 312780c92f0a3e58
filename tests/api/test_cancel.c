/* SPDX-License-Identifier: MIT */
/*
 * test_cancel.c - stop requests and cleanup handlers: a smarm_check loop,
 * a parked receiver, a stop flagged while QUEUED, stopping self, handler
 * order on every exit path, cleanup_pop, blocking handlers, and the
 * errors of stop/exit/crash.
 */
#include "harness.h"

#include <string.h>

static smarm_chan_t *cn_ready;

static void cn_ready_open(void)
{
	ck_assert_int_eq(smarm_chan_alloc(&cn_ready, sizeof(int), NULL), 0);
}

static void cn_ready_close(void)
{
	harness_chan_drop(cn_ready);
}

static void cn_signal_ready(void)
{
	int v = 1;
	smarm_chan_send(cn_ready, &v);
}

static void cn_wait_ready(void)
{
	int v;
	smarm_chan_recv(cn_ready, &v);
}

static atomic_int cn_cleanups;

static void cn_count_cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&cn_cleanups, 1);
}

/* ------------------------------------------------------- smarm_check loop */

static atomic_int cn_loop_exited;
static atomic_long cn_iterations;
static int cn_how, cn_join_rc, cn_stop_rc;

static void cn_check_loop(void *arg)
{
	(void)arg;
	smarm_cleanup_push(cn_count_cleanup, NULL);
	cn_signal_ready();
	for (;;) {
		atomic_fetch_add(&cn_iterations, 1);
		smarm_check();
	}
	atomic_store(&cn_loop_exited, 1); /* never reached */
}

static void cn_root_stop_check_loop(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	cn_ready_open();
	smarm_actor_spawn(&p, cn_check_loop, NULL, NULL);
	cn_wait_ready();
	cn_stop_rc = smarm_actor_stop(p);
	cn_join_rc = smarm_actor_join(p, &cn_how, NULL);
	cn_ready_close();
}

START_TEST(test_cancel_check_loop_stop_ends_stopped)
{
	atomic_store(&cn_cleanups, 0);
	atomic_store(&cn_loop_exited, 0);
	atomic_store(&cn_iterations, 0);
	cn_how = -1;
	ck_assert_int_eq(harness_run(_i ? 4 : 1, cn_root_stop_check_loop, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_stop_rc, 0);
	ck_assert_int_eq(cn_join_rc, 0);
	ck_assert_int_eq(cn_how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(atomic_load(&cn_cleanups), 1);
	ck_assert_int_eq(atomic_load(&cn_loop_exited), 0);
	ck_assert_int_gt(atomic_load(&cn_iterations), 0);
}
END_TEST

/* ----------------------------------------------------- parked in recv */

static atomic_int cn_past_recv;
static smarm_chan_t *cn_never;

static void cn_parked_receiver(void *arg)
{
	int v;
	(void)arg;
	smarm_cleanup_push(cn_count_cleanup, NULL);
	cn_signal_ready();
	smarm_chan_recv(cn_never, &v);
	atomic_store(&cn_past_recv, 1);
}

static int cn_send_after_stop_rc;

static void cn_root_stop_receiver(void *arg)
{
	smarm_pid_t p;
	int v = 5;
	(void)arg;
	cn_ready_open();
	smarm_chan_alloc(&cn_never, sizeof(int), NULL);
	smarm_actor_spawn(&p, cn_parked_receiver, NULL, NULL);
	cn_wait_ready();
	smarm_actor_yield(); /* more likely really parked */
	cn_stop_rc = smarm_actor_stop(p);
	cn_join_rc = smarm_actor_join(p, &cn_how, NULL);
	/* its registration was removed: a send does not touch the dead pid */
	cn_send_after_stop_rc = smarm_chan_send(cn_never, &v);
	harness_chan_drop(cn_never);
	cn_ready_close();
}

START_TEST(test_cancel_parked_receiver_stop_runs_cleanup)
{
	atomic_store(&cn_cleanups, 0);
	atomic_store(&cn_past_recv, 0);
	cn_how = -1;
	ck_assert_int_eq(harness_run(_i ? 4 : 1, cn_root_stop_receiver, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_stop_rc, 0);
	ck_assert_int_eq(cn_join_rc, 0);
	ck_assert_int_eq(cn_how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(atomic_load(&cn_cleanups), 1);
	ck_assert_int_eq(atomic_load(&cn_past_recv), 0);
	ck_assert_int_eq(cn_send_after_stop_rc, 0);
}
END_TEST

/* ------------------------------------------------ stop while QUEUED */

static atomic_int cn_q_started, cn_q_past_block;

static void cn_queued_target(void *arg)
{
	int v;
	(void)arg;
	atomic_store(&cn_q_started, 1);
	smarm_cleanup_push(cn_count_cleanup, NULL);
	smarm_chan_recv(cn_never, &v); /* first park: the stop lands here */
	atomic_store(&cn_q_past_block, 1);
}

static int cn_q_alive_before;

static void cn_root_stop_queued(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_chan_alloc(&cn_never, sizeof(int), NULL);
	smarm_actor_spawn(&p, cn_queued_target, NULL, NULL);
	/* 1 worker and no switch since the spawn: the target is QUEUED */
	cn_q_alive_before = atomic_load(&cn_q_started) == 0;
	cn_stop_rc = smarm_actor_stop(p);
	cn_join_rc = smarm_actor_join(p, &cn_how, NULL);
	harness_chan_drop(cn_never);
}

START_TEST(test_cancel_stop_while_queued_lands_at_first_park)
{
	atomic_store(&cn_cleanups, 0);
	atomic_store(&cn_q_started, 0);
	atomic_store(&cn_q_past_block, 0);
	cn_how = -1;
	ck_assert_int_eq(harness_run(1, cn_root_stop_queued, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_q_alive_before, 1);
	ck_assert_int_eq(cn_stop_rc, 0);
	ck_assert_int_eq(cn_join_rc, 0);
	ck_assert_int_eq(cn_how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(atomic_load(&cn_q_started), 1);
	ck_assert_int_eq(atomic_load(&cn_q_past_block), 0);
	ck_assert_int_eq(atomic_load(&cn_cleanups), 1);
}
END_TEST

/* ----------------------------------------------------- stopping self */

static atomic_int cn_self_after_stop, cn_self_after_yield;
static int cn_self_stop_rc;

static void cn_self_stopper(void *arg)
{
	(void)arg;
	smarm_cleanup_push(cn_count_cleanup, NULL);
	cn_self_stop_rc = smarm_actor_stop(smarm_actor_self());
	atomic_store(&cn_self_after_stop, 1); /* not a safe point yet */
	smarm_actor_yield();
	atomic_store(&cn_self_after_yield, 1);
}

static void cn_root_self_stop(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, cn_self_stopper, NULL, NULL);
	cn_join_rc = smarm_actor_join(p, &cn_how, NULL);
}

START_TEST(test_cancel_stop_self_ends_at_next_safe_point)
{
	atomic_store(&cn_cleanups, 0);
	atomic_store(&cn_self_after_stop, 0);
	atomic_store(&cn_self_after_yield, 0);
	cn_how = -1;
	cn_self_stop_rc = 1;
	ck_assert_int_eq(harness_run(_i ? 4 : 1, cn_root_self_stop, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_self_stop_rc, 0);
	ck_assert_int_eq(atomic_load(&cn_self_after_stop), 1);
	ck_assert_int_eq(atomic_load(&cn_self_after_yield), 0);
	ck_assert_int_eq(cn_join_rc, 0);
	ck_assert_int_eq(cn_how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(atomic_load(&cn_cleanups), 1);
}
END_TEST

static void cn_root_stops_itself(void *arg)
{
	(void)arg;
	smarm_cleanup_push(cn_count_cleanup, NULL);
	smarm_actor_stop(smarm_actor_self());
	smarm_actor_yield();
	atomic_store(&cn_self_after_yield, 1);
}

START_TEST(test_cancel_root_stop_self_reported_stopped_by_run)
{
	atomic_store(&cn_cleanups, 0);
	atomic_store(&cn_self_after_yield, 0);
	ck_assert_int_eq(harness_run(1, cn_root_stops_itself, NULL),
			 SMARM_EXIT_STOPPED);
	ck_assert_int_eq(atomic_load(&cn_self_after_yield), 0);
	ck_assert_int_eq(atomic_load(&cn_cleanups), 1);
}
END_TEST

/* --------------------------------------------- cleanup order per exit path */

enum { PATH_RETURN, PATH_EXIT, PATH_CRASH, PATH_STOP, PATH_N };

static char cn_order[PATH_N][8];
static int cn_path_how[PATH_N];
static intptr_t cn_path_reason[PATH_N];

struct cn_tag {
	int path;
	char c;
};

static void cn_log_cleanup(void *arg)
{
	struct cn_tag *t = arg;
	size_t n = strlen(cn_order[t->path]);
	cn_order[t->path][n] = t->c;
	cn_order[t->path][n + 1] = '\0';
}

static smarm_chan_t *cn_path_gate;

static void cn_path_actor(void *arg)
{
	intptr_t path = (intptr_t)arg;
	static struct cn_tag tags[PATH_N][3];
	int v;
	for (int i = 0; i < 3; i++) {
		tags[path][i].path = (int)path;
		tags[path][i].c = (char)('1' + i);
		smarm_cleanup_push(cn_log_cleanup, &tags[path][i]);
	}
	switch (path) {
	case PATH_RETURN:
		return;
	case PATH_EXIT:
		smarm_actor_exit();
		break;
	case PATH_CRASH:
		smarm_actor_crash(99);
		break;
	case PATH_STOP:
		smarm_chan_recv(cn_path_gate, &v);
		break;
	}
	cn_order[path][0] = 'X'; /* never reached */
}

static void cn_root_paths(void *arg)
{
	smarm_pid_t p[PATH_N];
	(void)arg;
	smarm_chan_alloc(&cn_path_gate, sizeof(int), NULL);
	for (intptr_t i = 0; i < PATH_N; i++)
		smarm_actor_spawn(&p[i], cn_path_actor, (void *)i, NULL);
	for (int i = 0; i < 4; i++)
		smarm_actor_yield();
	smarm_actor_stop(p[PATH_STOP]);
	for (int i = 0; i < PATH_N; i++)
		smarm_actor_join(p[i], &cn_path_how[i], &cn_path_reason[i]);
	harness_chan_drop(cn_path_gate);
}

START_TEST(test_cancel_cleanups_run_newest_first_on_every_path)
{
	memset(cn_order, 0, sizeof cn_order);
	ck_assert_int_eq(harness_run(_i ? 4 : 1, cn_root_paths, NULL),
			 SMARM_EXIT_NORMAL);
	for (int i = 0; i < PATH_N; i++)
		ck_assert_str_eq(cn_order[i], "321");
	ck_assert_int_eq(cn_path_how[PATH_RETURN], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_path_how[PATH_EXIT], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_path_how[PATH_CRASH], SMARM_EXIT_CRASHED);
	ck_assert_int_eq((int)cn_path_reason[PATH_CRASH], 99);
	ck_assert_int_eq(cn_path_how[PATH_STOP], SMARM_EXIT_STOPPED);
	ck_assert_int_eq((int)cn_path_reason[PATH_STOP], 0);
}
END_TEST

/* ------------------------------------------------------- cleanup_pop */

static char cn_pop_log[16];
static int cn_pop_rc[6];

static void cn_pop_logger(void *arg)
{
	size_t n = strlen(cn_pop_log);
	cn_pop_log[n] = *(const char *)arg;
	cn_pop_log[n + 1] = '\0';
}

static void cn_popper(void *arg)
{
	(void)arg;
	cn_pop_rc[0] = smarm_cleanup_pop(true); /* empty */
	smarm_cleanup_push(cn_pop_logger, "a");
	smarm_cleanup_push(cn_pop_logger, "b");
	smarm_cleanup_push(cn_pop_logger, "c");
	cn_pop_rc[1] = smarm_cleanup_pop(true);	 /* runs c */
	cn_pop_rc[2] = smarm_cleanup_pop(false); /* drops b */
	smarm_cleanup_push(cn_pop_logger, "d");
	cn_pop_rc[3] = smarm_cleanup_pop(false); /* drops d */
	cn_pop_rc[4] = smarm_cleanup_pop(false); /* drops a */
	cn_pop_rc[5] = smarm_cleanup_pop(false); /* empty again */
	smarm_cleanup_push(cn_pop_logger, "e");	 /* runs at return */
}

static void cn_root_pop(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, cn_popper, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
}

START_TEST(test_cancel_cleanup_pop_executes_or_drops)
{
	cn_pop_log[0] = '\0';
	ck_assert_int_eq(harness_run(1, cn_root_pop, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_pop_rc[0], SMARM_ENOENT);
	ck_assert_int_eq(cn_pop_rc[1], 0);
	ck_assert_int_eq(cn_pop_rc[2], 0);
	ck_assert_int_eq(cn_pop_rc[3], 0);
	ck_assert_int_eq(cn_pop_rc[4], 0);
	ck_assert_int_eq(cn_pop_rc[5], SMARM_ENOENT);
	ck_assert_str_eq(cn_pop_log, "ce");
}
END_TEST

/* many handlers: the cleanup stack grows past its initial capacity */
static atomic_int cn_many_seq_ok;
static int cn_many_next;

static void cn_many_handler(void *arg)
{
	int k = (int)(intptr_t)arg;
	if (k != cn_many_next)
		atomic_store(&cn_many_seq_ok, 0);
	cn_many_next--;
}

static void cn_many_pusher(void *arg)
{
	(void)arg;
	for (intptr_t i = 0; i < 100; i++)
		smarm_cleanup_push(cn_many_handler, (void *)i);
	cn_many_next = 99;
}

static void cn_root_many(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, cn_many_pusher, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
	/* a reused slot starts with an empty cleanup stack */
	smarm_actor_spawn(&p, cn_popper, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
}

START_TEST(test_cancel_hundred_cleanups_all_run_in_order)
{
	atomic_store(&cn_many_seq_ok, 1);
	cn_many_next = -5;
	cn_pop_log[0] = '\0';
	ck_assert_int_eq(harness_run(1, cn_root_many, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&cn_many_seq_ok), 1);
	ck_assert_int_eq(cn_many_next, -1);
	ck_assert_int_eq(cn_pop_rc[0], SMARM_ENOENT);
	ck_assert_str_eq(cn_pop_log, "ce");
}
END_TEST

/* ---------------------------------------------- blocking cleanup handlers */

static uint64_t cn_handler_slept;
static int cn_handler_sleep_rc;
static atomic_int cn_handler_done;

static void cn_sleeping_cleanup(void *arg)
{
	uint64_t ns = *(uint64_t *)arg;
	uint64_t t0 = smarm_now_ns();
	cn_handler_sleep_rc = smarm_actor_sleep(ns);
	cn_handler_slept = smarm_now_ns() - t0;
	atomic_store(&cn_handler_done, 1);
}

static uint64_t cn_handler_ns;

static void cn_blocking_cleanup_target(void *arg)
{
	int v;
	(void)arg;
	smarm_cleanup_push(cn_count_cleanup, NULL); /* runs second */
	smarm_cleanup_push(cn_sleeping_cleanup, &cn_handler_ns);
	cn_signal_ready();
	smarm_chan_recv(cn_never, &v);
}

static void cn_root_blocking_cleanup(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	cn_ready_open();
	smarm_chan_alloc(&cn_never, sizeof(int), NULL);
	smarm_actor_spawn(&p, cn_blocking_cleanup_target, NULL, NULL);
	cn_wait_ready();
	smarm_actor_stop(p);
	/* a second stop while the handler is blocked is harmless */
	smarm_actor_yield();
	smarm_actor_stop(p);
	cn_join_rc = smarm_actor_join(p, &cn_how, NULL);
	harness_chan_drop(cn_never);
	cn_ready_close();
}

START_TEST(test_cancel_cleanup_may_block_during_stop)
{
	atomic_store(&cn_cleanups, 0);
	atomic_store(&cn_handler_done, 0);
	cn_handler_ns = MS(1);
	cn_handler_slept = 0;
	cn_how = -1;
	ck_assert_int_eq(
		harness_run(_i ? 4 : 1, cn_root_blocking_cleanup, NULL),
		SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_join_rc, 0);
	ck_assert_int_eq(cn_how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(atomic_load(&cn_handler_done), 1);
	ck_assert_int_eq(cn_handler_sleep_rc, 0);
	ck_assert_uint_ge(cn_handler_slept, MS(1));
	ck_assert_int_eq(atomic_load(&cn_cleanups), 1);
}
END_TEST

/*
 * A stop that arrives while the target is RUNNING leaves a wake notification
 * behind; a handler that then sleeps must still sleep its full time.
 */
static void cn_self_stop_then_block(void *arg)
{
	(void)arg;
	smarm_cleanup_push(cn_sleeping_cleanup, &cn_handler_ns);
	smarm_actor_stop(smarm_actor_self());
	smarm_check(); /* the safe point: terminate, run the handler */
}

static void cn_root_self_stop_block(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, cn_self_stop_then_block, NULL, NULL);
	cn_join_rc = smarm_actor_join(p, &cn_how, NULL);
}

START_TEST(test_cancel_cleanup_sleep_after_running_stop_sleeps_full_time)
{
	atomic_store(&cn_handler_done, 0);
	cn_handler_ns = MS(20);
	cn_handler_slept = 0;
	cn_how = -1;
	ck_assert_int_eq(harness_run(1, cn_root_self_stop_block, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_join_rc, 0);
	ck_assert_int_eq(cn_how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(atomic_load(&cn_handler_done), 1);
	ck_assert_uint_ge(cn_handler_slept, MS(20));
}
END_TEST

/* ------------------------------------------------------------- errors */

static int cn_dead_stop_rc, cn_none_stop_rc;

static void cn_root_stop_dead(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, cn_count_cleanup, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
	cn_dead_stop_rc = smarm_actor_stop(p);
	cn_none_stop_rc = smarm_actor_stop(SMARM_PID_NONE);
}

START_TEST(test_cancel_stop_dead_pid_returns_enoproc)
{
	ck_assert_int_eq(harness_run(1, cn_root_stop_dead, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_dead_stop_rc, SMARM_ENOPROC);
	ck_assert_int_eq(cn_none_stop_rc, SMARM_ENOPROC);
}
END_TEST

static int cn_ended_stop_rc, cn_ended_how;

static void cn_root_stop_ended_unjoined(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, cn_count_cleanup, NULL, NULL);
	smarm_actor_yield(); /* 1 worker: it runs to its end */
	cn_ended_stop_rc = smarm_actor_stop(p);
	smarm_actor_join(p, &cn_ended_how, NULL);
}

START_TEST(test_cancel_stop_ended_unjoined_returns_enoproc)
{
	cn_ended_how = -1;
	ck_assert_int_eq(harness_run(1, cn_root_stop_ended_unjoined, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(cn_ended_stop_rc, SMARM_ENOPROC);
	ck_assert_int_eq(cn_ended_how, SMARM_EXIT_NORMAL); /* not rewritten */
}
END_TEST

START_TEST(test_cancel_exit_crash_stop_outside_actor_return_enotactor)
{
	smarm_pid_t p = { UINT64_C(0x100000000) };
	ck_assert_int_eq(smarm_actor_exit(), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_crash(1), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_stop(p), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_cleanup_push(cn_count_cleanup, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_cleanup_pop(false), SMARM_ENOTACTOR);
}
END_TEST

Suite *smarm_test_cancel_suite(void)
{
	Suite *s = suite_create("cancel");
	TCase *tc = tcase_create("stop");
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(tc, test_cancel_check_loop_stop_ends_stopped, 0, 2);
	tcase_add_loop_test(tc, test_cancel_parked_receiver_stop_runs_cleanup,
			    0, 2);
	tcase_add_test(tc, test_cancel_stop_while_queued_lands_at_first_park);
	tcase_add_loop_test(tc, test_cancel_stop_self_ends_at_next_safe_point,
			    0, 2);
	tcase_add_test(tc, test_cancel_root_stop_self_reported_stopped_by_run);
	suite_add_tcase(s, tc);

	tc = tcase_create("cleanup");
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(
		tc, test_cancel_cleanups_run_newest_first_on_every_path, 0, 2);
	tcase_add_test(tc, test_cancel_cleanup_pop_executes_or_drops);
	tcase_add_test(tc, test_cancel_hundred_cleanups_all_run_in_order);
	tcase_add_loop_test(tc, test_cancel_cleanup_may_block_during_stop, 0,
			    2);
	tcase_add_test(
		tc,
		test_cancel_cleanup_sleep_after_running_stop_sleeps_full_time);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_cancel_stop_dead_pid_returns_enoproc);
	tcase_add_test(tc, test_cancel_stop_ended_unjoined_returns_enoproc);
	tcase_add_test(
		tc, test_cancel_exit_crash_stop_outside_actor_return_enotactor);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(cancel)
