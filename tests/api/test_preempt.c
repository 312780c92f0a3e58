/* SPDX-License-Identifier: MIT */
/*
 * test_preempt.c - safe-point preemption: smarm_check() yields once the
 * actor's timeslice (SMARM_OPT_TIMESLICE_NS) is spent, so a computing
 * actor that calls it cannot starve the others on one worker.
 */
#include "harness.h"

#include <string.h>

static char pe_log[8];
static atomic_int pe_len;
static uint64_t pe_spin_ns;

static void pe_log_char(char c)
{
	int i = atomic_fetch_add(&pe_len, 1);
	if (i < (int)sizeof pe_log - 1)
		pe_log[i] = c;
}

/* Log a head letter, compute past several slices, log a tail letter. */
static void pe_spinner(void *arg)
{
	const char *letters = arg;
	uint64_t end;
	pe_log_char(letters[0]);
	end = smarm_now_ns() + pe_spin_ns;
	while (smarm_now_ns() < end)
		smarm_check();
	pe_log_char(letters[1]);
}

static void pe_root_two_spinners(void *arg)
{
	smarm_pid_t a, b;
	(void)arg;
	smarm_actor_spawn(&a, pe_spinner, "Aa", NULL);
	smarm_actor_spawn(&b, pe_spinner, "Bb", NULL);
	smarm_actor_join(a, NULL, NULL);
	smarm_actor_join(b, NULL, NULL);
}

static void pe_run_spinners(int64_t slice_ns, uint64_t spin_ns)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	memset(pe_log, 0, sizeof pe_log);
	atomic_store(&pe_len, 0);
	pe_spin_ns = spin_ns;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1), 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_TIMESLICE_NS, slice_ns), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(
		smarm_node_run(node, pe_root_two_spinners, NULL, NULL, NULL),
		0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}

START_TEST(test_preempt_check_yields_when_timeslice_expired)
{
	/* 1 ms slices, 30 ms of work each: both heads before either tail. */
	pe_run_spinners(1000000, MS(30));
	ck_assert_int_eq(atomic_load(&pe_len), 4);
	ck_assert_msg(pe_log[0] == 'A' && pe_log[1] == 'B',
		      "log %s: slice expiry did not interleave", pe_log);
}
END_TEST

START_TEST(test_preempt_check_does_not_yield_within_slice)
{
	/* A 10 s slice is never spent by 5 ms of work: no interleaving. */
	pe_run_spinners(INT64_C(10000000000), MS(5));
	ck_assert_str_eq(pe_log, "AaBb");
}
END_TEST

static atomic_uint_fast64_t pe_sleep_took;
static atomic_int pe_stop_spin;

static void pe_sleeper(void *arg)
{
	uint64_t t0 = smarm_now_ns();
	(void)arg;
	smarm_actor_sleep(MS(10));
	atomic_store(&pe_sleep_took, smarm_now_ns() - t0);
	atomic_store(&pe_stop_spin, 1);
}

static void pe_checker(void *arg)
{
	uint64_t give_up = smarm_now_ns() + MS(5000);
	(void)arg;
	while (!atomic_load(&pe_stop_spin) && smarm_now_ns() < give_up)
		smarm_check();
}

static void pe_root_sleep_vs_spin(void *arg)
{
	smarm_pid_t s, c;
	(void)arg;
	smarm_actor_spawn(&s, pe_sleeper, NULL, NULL);
	smarm_actor_spawn(&c, pe_checker, NULL, NULL);
	smarm_actor_join(s, NULL, NULL);
	smarm_actor_join(c, NULL, NULL);
}

START_TEST(test_preempt_spinning_checker_does_not_starve_sleeper)
{
	atomic_store(&pe_sleep_took, 0);
	atomic_store(&pe_stop_spin, 0);
	ck_assert_int_eq(harness_run(1, pe_root_sleep_vs_spin, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_uint_ge(atomic_load(&pe_sleep_took), MS(10));
	ck_assert_elapsed_lt(atomic_load(&pe_sleep_took), MS(500));
}
END_TEST

static atomic_int pe_yields;

static void pe_lonely(void *arg)
{
	(void)arg;
	/* Nothing else to run: each yield returns at once. */
	for (int i = 0; i < 1000; i++)
		if (smarm_actor_yield() == 0)
			atomic_fetch_add(&pe_yields, 1);
}

START_TEST(test_preempt_yield_alone_returns)
{
	atomic_store(&pe_yields, 0);
	ck_assert_int_eq(harness_run(1, pe_lonely, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&pe_yields), 1000);
}
END_TEST

static atomic_int pe_region_rc[6];

static void pe_region(void *arg)
{
	(void)arg;
	atomic_store(&pe_region_rc[0], smarm_preempt_enable());
	atomic_store(&pe_region_rc[1], smarm_preempt_disable());
	atomic_store(&pe_region_rc[2], smarm_preempt_disable());
	atomic_store(&pe_region_rc[3], smarm_preempt_enable());
	atomic_store(&pe_region_rc[4], smarm_preempt_enable());
	atomic_store(&pe_region_rc[5], smarm_preempt_enable());
}

START_TEST(test_preempt_region_nests_and_rejects_misuse)
{
	ck_assert_int_eq(smarm_preempt_disable(), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_preempt_enable(), SMARM_ENOTACTOR);
	ck_assert_int_eq(harness_run(1, pe_region, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&pe_region_rc[0]), SMARM_ESTATE);
	for (int i = 1; i < 5; i++)
		ck_assert_int_eq(atomic_load(&pe_region_rc[i]), 0);
	ck_assert_int_eq(atomic_load(&pe_region_rc[5]), SMARM_ESTATE);
}
END_TEST

Suite *smarm_test_preempt_suite(void)
{
	Suite *s = suite_create("preempt");
	TCase *tc = tcase_create("safe_point");
	tcase_add_test(tc, test_preempt_check_yields_when_timeslice_expired);
	tcase_add_test(tc, test_preempt_check_does_not_yield_within_slice);
	tcase_add_test(tc,
		       test_preempt_spinning_checker_does_not_starve_sleeper);
	tcase_add_test(tc, test_preempt_yield_alone_returns);
	tcase_add_test(tc, test_preempt_region_nests_and_rejects_misuse);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(preempt)
