/* SPDX-License-Identifier: MIT */
/*
 * test_park_wake.c - timers fire when nobody parks and when everyone
 * does (spec/core.md §11 step 1, §16, §23 tests/park_wake.rs): with eight
 * yield-spinners keeping four workers busy, a 10 ms sleep still ends
 * within 500 ms (busy-path timer firing); a 500 us sleep on an idle node
 * takes at least 400 us and well under 100 ms (the timekeeper's futex
 * wait has sub-millisecond precision). Each test runs with idle spinning
 * on (the default) and off.
 */
#include "harness.h"

/* Open a node with `workers` workers and idle spinning on (1) or off. */
static smarm_node_t *pw_open(int workers, int spin)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, workers),
			 0);
	if (!spin)
		ck_assert_int_eq(
			smarm_config_set_int(cfg, SMARM_OPT_IDLE_SPIN_NS, 0),
			0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	return node;
}

static void pw_run(smarm_node_t *node, smarm_actor_cb root, void *arg)
{
	int how = -1;
	ck_assert_int_eq(smarm_node_run(node, root, arg, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}

/* ------------------------------------------------------------ saturated */

#define PW_SPINNERS 8

struct pw_sat {
	atomic_int quit;    /* root tells the spinners to end */
	uint64_t slept_ns;  /* root only */
	int errors;	    /* root only */
	atomic_long yields; /* all spinners */
};

static void pw_spinner(void *arg)
{
	struct pw_sat *p = arg;
	while (!atomic_load(&p->quit)) {
		smarm_actor_yield();
		atomic_fetch_add_explicit(&p->yields, 1, memory_order_relaxed);
	}
}

static void pw_sat_root(void *arg)
{
	struct pw_sat *p = arg;
	smarm_pid_t pid[PW_SPINNERS];
	int n = 0;
	for (; n < PW_SPINNERS; n++)
		if (smarm_actor_spawn(&pid[n], pw_spinner, p, NULL) != 0) {
			p->errors++;
			break;
		}
	/* Let the spinners get going so the queue never empties. */
	while (atomic_load(&p->yields) < 1000)
		smarm_actor_yield();
	uint64_t t0 = smarm_now_ns();
	if (smarm_actor_sleep(MS(10)) != 0)
		p->errors++;
	p->slept_ns = harness_since(t0);
	atomic_store(&p->quit, 1);
	for (int i = 0; i < n; i++)
		if (smarm_actor_join(pid[i], NULL, NULL) != 0)
			p->errors++;
}

/* Loop: _i 0 spinning off, 1 spinning on. */
START_TEST(test_park_wake_sleep_fires_under_saturation)
{
	struct pw_sat p = { 0 };
	pw_run(pw_open(4, _i), pw_sat_root, &p);
	ck_assert_int_eq(p.errors, 0);
	ck_assert_uint_ge(p.slept_ns, MS(10));
	ck_assert_elapsed_lt(p.slept_ns, MS(500));
}
END_TEST

/* ------------------------------------------------------------- sub-ms */

struct pw_short {
	uint64_t slept_ns;
	int errors;
};

static void pw_short_root(void *arg)
{
	struct pw_short *p = arg;
	uint64_t t0 = smarm_now_ns();
	if (smarm_actor_sleep(US(500)) != 0)
		p->errors++;
	p->slept_ns = harness_since(t0);
}

/* Loop: _i 0 spinning off, 1 spinning on. */
START_TEST(test_park_wake_short_sleep_is_sub_ms_precise)
{
	struct pw_short p = { 0 };
	pw_run(pw_open(4, _i), pw_short_root, &p);
	ck_assert_int_eq(p.errors, 0);
	ck_assert_uint_ge(p.slept_ns, US(400));
	ck_assert_elapsed_lt(p.slept_ns, MS(100));
}
END_TEST

Suite *smarm_test_park_wake_suite(void)
{
	Suite *s = suite_create("park_wake");
	TCase *tc = tcase_create("timers");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_park_wake_sleep_fires_under_saturation, 0,
			    2);
	tcase_add_loop_test(tc, test_park_wake_short_sleep_is_sub_ms_precise, 0,
			    2);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(park_wake)
