/* SPDX-License-Identifier: MIT */
/*
 * test_timer.c - smarm_actor_sleep: lower bounds, sub-ms precision, many
 * sleepers, timers firing while every worker is busy, and pending sleeps
 * never holding a run open.
 */
#include "harness.h"

/* ---------------------------------------------------------- lower bounds */

static uint64_t tm_elapsed;
static int tm_rc;

static void tm_root_sleep10(void *arg)
{
	uint64_t t0;
	(void)arg;
	t0 = smarm_now_ns();
	tm_rc = smarm_actor_sleep(MS(10));
	tm_elapsed = smarm_now_ns() - t0;
}

START_TEST(test_timer_sleep_10ms_takes_at_least_10ms)
{
	tm_rc = 1;
	ck_assert_int_eq(harness_run(_i ? 4 : 1, tm_root_sleep10, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(tm_rc, 0);
	ck_assert_uint_ge(tm_elapsed, MS(10));
	ck_assert_elapsed_lt(tm_elapsed, MS(1000));
}
END_TEST

static void tm_root_sleep500us(void *arg)
{
	uint64_t t0;
	(void)arg;
	t0 = smarm_now_ns();
	tm_rc = smarm_actor_sleep(US(500));
	tm_elapsed = smarm_now_ns() - t0;
}

START_TEST(test_timer_sleep_500us_is_sub_ms_precise)
{
	tm_rc = 1;
	ck_assert_int_eq(harness_run(_i ? 4 : 1, tm_root_sleep500us, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(tm_rc, 0);
	ck_assert_uint_ge(tm_elapsed, US(400));
	ck_assert_elapsed_lt(tm_elapsed, MS(100));
}
END_TEST

static uint64_t tm_zero_elapsed;

static void tm_root_sleep0(void *arg)
{
	uint64_t t0;
	(void)arg;
	t0 = smarm_now_ns();
	for (int i = 0; i < 100; i++)
		tm_rc |= smarm_actor_sleep(0);
	tm_zero_elapsed = smarm_now_ns() - t0;
}

START_TEST(test_timer_sleep_zero_returns_promptly)
{
	tm_rc = 0;
	ck_assert_int_eq(harness_run(1, tm_root_sleep0, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(tm_rc, 0);
	ck_assert_elapsed_lt(tm_zero_elapsed, MS(500));
}
END_TEST

/* -------------------------------------------------- sleepers wake in order */

static char tm_order[8];
static atomic_int tm_order_n;

static void tm_ordered_sleeper(void *arg)
{
	intptr_t ms = (intptr_t)arg;
	smarm_actor_sleep(MS(ms));
	tm_order[atomic_fetch_add(&tm_order_n, 1)] = (char)('0' + ms / 10);
}

static void tm_root_order(void *arg)
{
	static const intptr_t ms[4] = { 40, 10, 30, 20 };
	smarm_pid_t p[4];
	(void)arg;
	for (int i = 0; i < 4; i++)
		smarm_actor_spawn(&p[i], tm_ordered_sleeper, (void *)ms[i],
				  NULL);
	for (int i = 0; i < 4; i++)
		smarm_actor_join(p[i], NULL, NULL);
}

START_TEST(test_timer_sleepers_wake_in_deadline_order)
{
	atomic_store(&tm_order_n, 0);
	ck_assert_int_eq(harness_run(1, tm_root_order, NULL),
			 SMARM_EXIT_NORMAL);
	tm_order[4] = '\0';
	ck_assert_str_eq(tm_order, "1234");
}
END_TEST

/* ----------------------------------------------------------- many sleepers */

#define TM_SLEEPERS 200

static atomic_int tm_woke, tm_short;

static void tm_sleeper20(void *arg)
{
	uint64_t t0 = smarm_now_ns();
	(void)arg;
	smarm_actor_sleep(MS(20));
	if (smarm_now_ns() - t0 < MS(20))
		atomic_fetch_add(&tm_short, 1);
	atomic_fetch_add(&tm_woke, 1);
}

static void tm_root_many(void *arg)
{
	smarm_pid_t p[TM_SLEEPERS];
	uint64_t t0;
	(void)arg;
	t0 = smarm_now_ns();
	for (int i = 0; i < TM_SLEEPERS; i++)
		smarm_actor_spawn(&p[i], tm_sleeper20, NULL, NULL);
	for (int i = 0; i < TM_SLEEPERS; i++)
		smarm_actor_join(p[i], NULL, NULL);
	tm_elapsed = smarm_now_ns() - t0;
}

START_TEST(test_timer_many_sleepers_all_complete_promptly)
{
	atomic_store(&tm_woke, 0);
	atomic_store(&tm_short, 0);
	ck_assert_int_eq(harness_run(4, tm_root_many, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&tm_woke), TM_SLEEPERS);
	ck_assert_int_eq(atomic_load(&tm_short), 0);
	ck_assert_uint_ge(tm_elapsed, MS(20));
	ck_assert_elapsed_lt(tm_elapsed, MS(1000));
}
END_TEST

/* ------------------------------------------------ timers under saturation */

static atomic_int tm_spin_stop;
static atomic_long tm_spins;

static void tm_spinner(void *arg)
{
	(void)arg;
	while (!atomic_load(&tm_spin_stop)) {
		atomic_fetch_add(&tm_spins, 1);
		smarm_actor_yield();
	}
}

static void tm_saturated_sleeper(void *arg)
{
	uint64_t t0;
	(void)arg;
	/* let the spinners fill the run queue first */
	for (int i = 0; i < 16; i++)
		smarm_actor_yield();
	t0 = smarm_now_ns();
	smarm_actor_sleep(MS(10));
	tm_elapsed = smarm_now_ns() - t0;
	atomic_store(&tm_spin_stop, 1);
}

static void tm_root_saturated(void *arg)
{
	smarm_pid_t spin[8], sl;
	(void)arg;
	for (int i = 0; i < 8; i++)
		smarm_actor_spawn(&spin[i], tm_spinner, NULL, NULL);
	smarm_actor_spawn(&sl, tm_saturated_sleeper, NULL, NULL);
	smarm_actor_join(sl, NULL, NULL);
	for (int i = 0; i < 8; i++)
		smarm_actor_join(spin[i], NULL, NULL);
}

START_TEST(test_timer_sleep_fires_while_workers_saturated)
{
	atomic_store(&tm_spin_stop, 0);
	atomic_store(&tm_spins, 0);
	tm_elapsed = UINT64_MAX;
	ck_assert_int_eq(harness_run(4, tm_root_saturated, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_uint_ge(tm_elapsed, MS(10));
	ck_assert_elapsed_lt(tm_elapsed, MS(500));
	ck_assert_int_gt(atomic_load(&tm_spins), 8);
}
END_TEST

/* -------------------------------- pending sleeps never hold a run open */

static smarm_chan_t *tm_ready;
static int tm_stopped_how, tm_stopped_rc;

static void tm_long_sleeper(void *arg)
{
	int v = 1;
	(void)arg;
	smarm_chan_send(tm_ready, &v);
	smarm_actor_sleep(MS(60000));
}

static void tm_root_stop_sleeper(void *arg)
{
	smarm_pid_t p;
	int v;
	(void)arg;
	smarm_chan_alloc(&tm_ready, sizeof(int), NULL);
	smarm_actor_spawn(&p, tm_long_sleeper, NULL, NULL);
	smarm_chan_recv(tm_ready, &v);
	/* parked in sleep, or about to: the stop lands either way */
	smarm_actor_stop(p);
	tm_stopped_rc = smarm_actor_join(p, &tm_stopped_how, NULL);
	harness_chan_drop(tm_ready);
}

START_TEST(test_timer_stopped_long_sleeper_does_not_hold_run)
{
	uint64_t t0 = smarm_now_ns();
	tm_stopped_how = -1;
	ck_assert_int_eq(harness_run(_i ? 4 : 1, tm_root_stop_sleeper, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_elapsed_lt(smarm_now_ns() - t0, MS(2000));
	ck_assert_int_eq(tm_stopped_rc, 0);
	ck_assert_int_eq(tm_stopped_how, SMARM_EXIT_STOPPED);
}
END_TEST

static void tm_root_orphan_sleeper(void *arg)
{
	int v;
	(void)arg;
	smarm_chan_alloc(&tm_ready, sizeof(int), NULL);
	smarm_actor_spawn(NULL, tm_long_sleeper, NULL, NULL);
	smarm_chan_recv(tm_ready, &v);
	/* the root returns: its exit stops the sleeper */
}

START_TEST(test_timer_root_exit_with_long_sleeper_returns_promptly)
{
	uint64_t t0 = smarm_now_ns();
	ck_assert_int_eq(harness_run(_i ? 4 : 1, tm_root_orphan_sleeper, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_elapsed_lt(smarm_now_ns() - t0, MS(2000));
	harness_chan_drop(tm_ready);
}
END_TEST

/* ---------------------------------------------- huge durations do not wrap */

static int tm_alive_after_yields;
static int tm_huge_how;

static void tm_huge_sleeper(void *arg)
{
	(void)arg;
	smarm_actor_sleep(UINT64_MAX); /* "forever": only a stop ends it */
}

static void tm_root_huge(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, tm_huge_sleeper, NULL, NULL);
	/* 1 worker: the sleeper runs and parks; due timers fire between
	 * actors, so a deadline that wrapped into the past would wake it
	 * (and end it) during these yields. */
	for (int i = 0; i < 10; i++)
		smarm_actor_yield();
	tm_alive_after_yields = smarm_actor_is_alive(p);
	smarm_actor_stop(p);
	smarm_actor_join(p, &tm_huge_how, NULL);
}

START_TEST(test_timer_sleep_huge_duration_does_not_return_early)
{
	tm_huge_how = -1;
	ck_assert_int_eq(harness_run(1, tm_root_huge, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(tm_alive_after_yields, 1);
	ck_assert_int_eq(tm_huge_how, SMARM_EXIT_STOPPED);
}
END_TEST

/* Bounded waits that end early leave no pile of timer entries behind. */
static smarm_chan_t *tb_ping, *tb_pong;
static int64_t tb_timers_after;
static int tb_errors;

static void tb_ponger(void *arg)
{
	uint64_t v;
	(void)arg;
	while (smarm_chan_recv_timeout(tb_ping, &v, MS(60000)) == 0)
		if (smarm_chan_send(tb_pong, &v) != 0)
			tb_errors++;
}

static void tb_root(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_chan_alloc(&tb_ping, sizeof(uint64_t), NULL);
	smarm_chan_alloc(&tb_pong, sizeof(uint64_t), NULL);
	smarm_actor_spawn(&p, tb_ponger, NULL, NULL);
	for (uint64_t i = 0; i < 20000; i++) {
		uint64_t r = 0;
		smarm_chan_send(tb_ping, &i);
		if (smarm_chan_recv_timeout(tb_pong, &r, MS(60000)) != 0 ||
		    r != i)
			tb_errors++;
	}
	smarm_node_get_int(smarm_node_current(), SMARM_STAT_TIMERS,
			   &tb_timers_after);
	smarm_chan_sender_free(tb_ping); /* closes: the ponger ends */
	smarm_actor_join(p, NULL, NULL);
	harness_chan_drop(tb_pong);
	smarm_chan_receiver_free(tb_ping);
}

START_TEST(test_timer_early_ended_waits_leave_one_entry_per_actor)
{
	tb_errors = 0;
	tb_timers_after = -1;
	ck_assert_int_eq(harness_run(1, tb_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(tb_errors, 0);
	/* 40000 waits armed a 60 s timer; only the two latest remain. */
	ck_assert_int_le(tb_timers_after, 2);
	ck_assert_int_ge(tb_timers_after, 1);
}
END_TEST

Suite *smarm_test_timer_suite(void)
{
	Suite *s = suite_create("timer");
	TCase *tc = tcase_create("sleep");
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(tc, test_timer_sleep_10ms_takes_at_least_10ms, 0,
			    2);
	tcase_add_loop_test(tc, test_timer_sleep_500us_is_sub_ms_precise, 0, 2);
	tcase_add_test(tc, test_timer_sleep_zero_returns_promptly);
	tcase_add_test(tc, test_timer_sleepers_wake_in_deadline_order);
	tcase_add_test(tc,
		       test_timer_sleep_huge_duration_does_not_return_early);
	tcase_add_test(tc,
		       test_timer_early_ended_waits_leave_one_entry_per_actor);
	suite_add_tcase(s, tc);

	tc = tcase_create("load");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_timer_many_sleepers_all_complete_promptly);
	tcase_add_test(tc, test_timer_sleep_fires_while_workers_saturated);
	suite_add_tcase(s, tc);

	tc = tcase_create("shutdown");
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(
		tc, test_timer_stopped_long_sleeper_does_not_hold_run, 0, 2);
	tcase_add_loop_test(
		tc, test_timer_root_exit_with_long_sleeper_returns_promptly, 0,
		2);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(timer)
