/* SPDX-License-Identifier: MIT */
/*
 * test_preempt_static.c - libsmarm linked statically into the executable
 * (these unit tests link the internal archive): the runtime's own code
 * then lies in the executable's text, so asynchronous preemption must
 * allow nothing by default, or a signal could switch the scheduler out
 * under its locks. A pure loop next to yielders is signalled but never
 * switched out asynchronously, and the executable cannot be allowed.
 */
#include "harness.h"

static atomic_long ps_yields;

static void ps_yielder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200000; i++) {
		smarm_actor_yield();
		atomic_fetch_add_explicit(&ps_yields, 1, memory_order_relaxed);
	}
}

/*
 * A loop with no calls, for at least 100 ms and until the monitor has
 * signalled it (on a loaded host the monitor thread can first run later
 * than that: seen 150-225 ms after the run began), at most 30 s. Between
 * 1 ms stretches of pure arithmetic it reads the deferral count.
 */
static void ps_hog(void *arg)
{
	smarm_node_t *node = arg;
	uint64_t t0 = __builtin_ia32_rdtsc();
	uint64_t n0 = smarm_now_ns();
	volatile uint64_t x = 1;
	uint64_t per_ms;
	int64_t deferred = 0;
	while (smarm_now_ns() - n0 < MS(2))
		;
	per_ms = (__builtin_ia32_rdtsc() - t0) / 2;
	for (int ms = 0; ms < 30000; ms++) {
		if (ms >= 100 &&
		    smarm_node_get_int(node, SMARM_STAT_PREEMPT_DEFERRED,
				       &deferred) == 0 &&
		    deferred > 0)
			break;
		t0 = __builtin_ia32_rdtsc();
		while (__builtin_ia32_rdtsc() - t0 < per_ms)
			x = x * 6364136223846793005ull + 1;
	}
}

static void ps_root(void *arg)
{
	smarm_pid_t p[3];
	if (smarm_actor_spawn(&p[0], ps_hog, arg, NULL) != 0)
		abort();
	for (int i = 1; i < 3; i++)
		if (smarm_actor_spawn(&p[i], ps_yielder, NULL, NULL) != 0)
			abort();
	for (int i = 0; i < 3; i++)
		smarm_actor_join(p[i], NULL, NULL);
}

START_TEST(test_static_link_allows_no_text)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int how = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1), 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_ASYNC_SLICE_NS, 100000), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	atomic_store(&ps_yields, 0);
	ck_assert_int_eq(smarm_node_run(node, ps_root, node, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&ps_yields), 2 * 200000);
	ck_assert_int_ge(harness_stat(node, SMARM_STAT_PREEMPT_DEFERRED), 1);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_PREEMPT_ASYNC), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	/* The executable holds libsmarm itself: not allowable. */
	ck_assert_int_eq(smarm_preempt_allow_object((void *)ps_root),
			 SMARM_EINVAL);
}
END_TEST

Suite *smarm_test_preempt_static_suite(void)
{
	Suite *s = suite_create("preempt_static");
	TCase *tc = tcase_create("static");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_static_link_allows_no_text);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(preempt_static)
