/* SPDX-License-Identifier: MIT */
/*
 * test_stack_million.c - a million live actors on dense stacks: each is
 * spawned, runs, and parks in a long sleep; the node then reports them
 * all live and dense, and the root's exit stops every one of them.
 * Guarded stacks could not do this cheaply: each needs two mappings
 * against vm.max_map_count, or, carved from chunks with guard regions,
 * about 1 MiB of address space and a share of page tables for its
 * guard. Time and resident size go to stderr.
 */
#include "harness.h"

#include <stdio.h>
#include <unistd.h>

#define MILLION 1000000

static atomic_long mi_started;
static int64_t mi_live, mi_dense, mi_guarded;
static int mi_spawn_rc;
static long mi_rss_kib;
static double mi_park_s;

/* Resident KiB (harness.h). */
static long mi_rss(void)
{
	long b = harness_rss_bytes();
	return b < 0 ? -1 : b / 1024;
}

static void mi_sleeper(void *arg)
{
	(void)arg;
	atomic_fetch_add_explicit(&mi_started, 1, memory_order_relaxed);
	smarm_actor_sleep(3600ull * 1000000000ull); /* until stopped */
}

static void mi_root(void *arg)
{
	smarm_node_t *n = smarm_node_current();
	uint64_t t0 = smarm_now_ns();
	long rss0 = mi_rss();
	(void)arg;
	for (int i = 0; i < MILLION; i++) {
		mi_spawn_rc = smarm_actor_spawn(NULL, mi_sleeper, NULL, NULL);
		if (mi_spawn_rc != 0)
			return;
	}
	/* Every one has run and is parked (or about to be). */
	while (atomic_load(&mi_started) < MILLION)
		smarm_actor_sleep(MS(5));
	smarm_actor_sleep(MS(20));
	mi_park_s = (double)harness_since(t0) / 1e9;
	mi_rss_kib = mi_rss() - rss0;
	smarm_node_get_int(n, SMARM_STAT_LIVE_ACTORS, &mi_live);
	smarm_node_get_int(n, SMARM_STAT_STACKS_DENSE, &mi_dense);
	smarm_node_get_int(n, SMARM_STAT_STACKS_GUARDED, &mi_guarded);
	/* Returning stops them all. */
}

START_TEST(test_stack_million_dense_actors_park_and_stop)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	uint64_t t0 = smarm_now_ns();
	int how = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_MODE,
					      SMARM_STACK_DENSE),
			 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_node_run(node, mi_root, NULL, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(mi_spawn_rc, 0);
	ck_assert_int_eq(mi_live, MILLION + 1);
	ck_assert_int_eq(mi_dense, MILLION + 1);
	ck_assert_int_eq(mi_guarded, 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_STACKS_DENSE), 0);
	fprintf(stderr,
		"# stack_million: %d parked in %.2f s, +%ld MiB resident "
		"(%ld B/actor), whole run %.2f s\n",
		MILLION, mi_park_s, mi_rss_kib / 1024,
		mi_rss_kib * 1024 / MILLION, (double)harness_since(t0) / 1e9);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

Suite *smarm_test_stack_million_suite(void)
{
	Suite *s = suite_create("stack_million");
	TCase *tc = tcase_create("dense");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_stack_million_dense_actors_park_and_stop);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(stack_million)
