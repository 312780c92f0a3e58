/* SPDX-License-Identifier: MIT */
/*
 * test_spawn_opts.c - per-spawn stack options: validation, a large
 * reserve that allows deep recursion, default spawns after custom ones,
 * and the stack pool recycling default-shaped stacks only.
 */
#include "harness.h"

#include <string.h>

#define KIB 1024
#define MIB (1024 * 1024)

/* ---------------------------------------------------------- validation */

START_TEST(test_spawn_opts_set_valid_and_reject_invalid)
{
	smarm_spawn_opts_t *o = NULL;
	ck_assert_int_eq(smarm_spawn_opts_alloc(&o), 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, 4096), 0);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, 5000),
		0); /* rounded up to a page */
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE,
						  INT64_C(1) << 30),
			 0);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_GUARD, 4096), 0);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_GUARD,
						  INT64_C(1) << 30),
			 0);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, 0),
		SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, 4095),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE,
						  (INT64_C(1) << 30) + 1),
			 SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, -4096),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_GUARD, 0),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_GUARD,
						  (INT64_C(1) << 30) + 1),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_WORKERS, 4),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_MAX_ACTORS, 4),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, 42, 4096), SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(NULL, SMARM_OPT_STACK_GUARD, 4096),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_alloc(NULL), SMARM_EINVAL);
	smarm_spawn_opts_free(o);
	smarm_spawn_opts_free(NULL);
}
END_TEST

/* ------------------------------------------------------- deep recursion */

static __attribute__((noinline)) long so_recurse(int depth)
{
	volatile char buf[1024];
	long r;
	memset((char *)buf, depth & 0x7f, sizeof buf);
	if (depth == 0)
		return buf[0];
	r = so_recurse(depth - 1);
	return r + buf[depth % sizeof buf];
}

static long so_recurse_result;
static atomic_int so_recurse_done;
static uintptr_t so_stack_hi, so_stack_lo;

static __attribute__((noinline)) long so_recurse_track(int depth)
{
	volatile char buf[1024];
	long r;
	memset((char *)buf, depth & 0x7f, sizeof buf);
	if ((uintptr_t)buf < so_stack_lo)
		so_stack_lo = (uintptr_t)buf;
	if (depth == 0)
		return buf[0];
	r = so_recurse_track(depth - 1);
	return r + buf[depth % sizeof buf];
}

static void so_deep(void *arg)
{
	volatile char top;
	(void)arg;
	so_stack_hi = (uintptr_t)&top;
	so_stack_lo = so_stack_hi;
	so_recurse_result = so_recurse_track(256); /* >= 256 KiB of frames */
	smarm_actor_yield(); /* survive a switch at depth too */
	atomic_store(&so_recurse_done, 1);
}

static int so_deep_spawn_rc, so_deep_how, so_after_how, so_after_rc;
static atomic_int so_default_ran;

static void so_default_child(void *arg)
{
	(void)arg;
	/* a little recursion that fits the 64 KiB default */
	if (so_recurse(16) >= 0)
		atomic_fetch_add(&so_default_ran, 1);
}

static void so_root_deep(void *arg)
{
	smarm_spawn_opts_t *o = NULL;
	smarm_pid_t p;
	(void)arg;
	smarm_spawn_opts_alloc(&o);
	smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, MIB);
	so_deep_spawn_rc = smarm_actor_spawn(&p, so_deep, NULL, o);
	smarm_spawn_opts_free(o); /* opts are not needed after the spawn */
	smarm_actor_join(p, &so_deep_how, NULL);
	/* default-shaped spawns still work after a custom one */
	for (int i = 0; i < 8; i++) {
		so_after_rc |=
			smarm_actor_spawn(&p, so_default_child, NULL, NULL);
		smarm_actor_join(p, &so_after_how, NULL);
	}
}

START_TEST(test_spawn_opts_1mib_reserve_allows_256kib_recursion)
{
	atomic_store(&so_recurse_done, 0);
	atomic_store(&so_default_ran, 0);
	so_deep_how = so_after_how = -1;
	so_after_rc = 0;
	ck_assert_int_eq(harness_run(_i ? 4 : 1, so_root_deep, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(so_deep_spawn_rc, 0);
	ck_assert_int_eq(so_deep_how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&so_recurse_done), 1);
	ck_assert_uint_ge(so_stack_hi - so_stack_lo, 256 * KIB);
	ck_assert_uint_lt(so_stack_hi - so_stack_lo, MIB);
	ck_assert_int_eq(so_after_rc, 0);
	ck_assert_int_eq(so_after_how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&so_default_ran), 8);
}
END_TEST

/* a node-wide reserve of 1 MiB (config) allows the same */
static void so_root_config_deep(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, so_deep, NULL, NULL);
	smarm_actor_join(p, &so_deep_how, NULL);
}

START_TEST(test_spawn_opts_config_reserve_1mib_allows_256kib_recursion)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	atomic_store(&so_recurse_done, 0);
	so_deep_how = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2), 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_STACK_RESERVE, MIB), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(
		smarm_node_run(node, so_root_config_deep, NULL, NULL, NULL), 0);
	ck_assert_int_eq(so_deep_how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&so_recurse_done), 1);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* small guard and small reserve shapes run too */
static int so_shapes_how[4];

static void so_small_child(void *arg)
{
	(void)arg;
	smarm_actor_yield();
	atomic_fetch_add(&so_default_ran, 1);
}

static void so_root_shapes(void *arg)
{
	static const int64_t shape[4][2] = {
		{ 4096, 4096 }, { 8192, 65536 }, { 65536, 4096 }, { 5000, 5000 }
	};
	(void)arg;
	for (int i = 0; i < 4; i++) {
		smarm_spawn_opts_t *o = NULL;
		smarm_pid_t p;
		smarm_spawn_opts_alloc(&o);
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE,
					 shape[i][0]);
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_GUARD, shape[i][1]);
		so_shapes_how[i] = -1;
		if (smarm_actor_spawn(&p, so_small_child, NULL, o) == 0)
			smarm_actor_join(p, &so_shapes_how[i], NULL);
		smarm_spawn_opts_free(o);
	}
}

START_TEST(test_spawn_opts_small_shapes_run)
{
	atomic_store(&so_default_ran, 0);
	ck_assert_int_eq(harness_run(1, so_root_shapes, NULL),
			 SMARM_EXIT_NORMAL);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(so_shapes_how[i], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&so_default_ran), 4);
}
END_TEST

/* --------------------------------------------------------- stack pool */

static int64_t so_pool_before_custom, so_pool_after_custom,
	so_pool_after_default, so_pool_after_many;

static void so_nop(void *arg)
{
	(void)arg;
}

static void so_yield_once(void *arg)
{
	(void)arg;
	smarm_actor_yield(); /* all eight hold a stack at the same time */
}

static void so_root_pool(void *arg)
{
	smarm_node_t *n = smarm_node_current();
	smarm_spawn_opts_t *o = NULL;
	smarm_pid_t p[8];
	(void)arg;
	/* a default-shaped child that ends: its stack goes to the pool */
	smarm_actor_spawn(&p[0], so_nop, NULL, NULL);
	smarm_actor_join(p[0], NULL, NULL);
	smarm_node_get_int(n, SMARM_STAT_STACK_POOL, &so_pool_after_default);

	/* a custom-shaped one never enters the pool */
	smarm_node_get_int(n, SMARM_STAT_STACK_POOL, &so_pool_before_custom);
	smarm_spawn_opts_alloc(&o);
	smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, 256 * KIB);
	smarm_actor_spawn(&p[0], so_nop, NULL, o);
	smarm_actor_join(p[0], NULL, NULL);
	smarm_spawn_opts_free(o);
	smarm_node_get_int(n, SMARM_STAT_STACK_POOL, &so_pool_after_custom);

	/* several at once: all their stacks come back */
	for (int i = 0; i < 8; i++)
		smarm_actor_spawn(&p[i], so_yield_once, NULL, NULL);
	for (int i = 0; i < 8; i++)
		smarm_actor_join(p[i], NULL, NULL);
	smarm_node_get_int(n, SMARM_STAT_STACK_POOL, &so_pool_after_many);
}

START_TEST(test_spawn_opts_pool_recycles_default_stacks_only)
{
	ck_assert_int_eq(harness_run(1, so_root_pool, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_ge(so_pool_after_default, 1);
	ck_assert_int_eq(so_pool_after_custom, so_pool_before_custom);
	ck_assert_int_ge(so_pool_after_many, 8);
	ck_assert_int_le(so_pool_after_many, 16); /* default cap, 1 worker */
}
END_TEST

/* a pool capacity of 0 keeps nothing, and actors still run */
static void so_root_pool_zero(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	for (int i = 0; i < 4; i++) {
		smarm_actor_spawn(&p, so_nop, NULL, NULL);
		smarm_actor_join(p, NULL, NULL);
	}
	smarm_node_get_int(smarm_node_current(), SMARM_STAT_STACK_POOL,
			   &so_pool_after_many);
}

START_TEST(test_spawn_opts_pool_cap_zero_keeps_no_stack)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int64_t v = -1;
	so_pool_after_many = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_POOL_CAP, 0),
			 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(
		smarm_node_run(node, so_root_pool_zero, NULL, NULL, NULL), 0);
	ck_assert_int_eq(so_pool_after_many, 0);
	ck_assert_int_eq(smarm_node_get_int(node, SMARM_STAT_STACK_POOL, &v),
			 0);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

Suite *smarm_test_spawn_opts_suite(void)
{
	Suite *s = suite_create("spawn_opts");
	TCase *tc = tcase_create("opts");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_spawn_opts_set_valid_and_reject_invalid);
	tcase_add_loop_test(
		tc, test_spawn_opts_1mib_reserve_allows_256kib_recursion, 0, 2);
	tcase_add_test(
		tc,
		test_spawn_opts_config_reserve_1mib_allows_256kib_recursion);
	tcase_add_test(tc, test_spawn_opts_small_shapes_run);
	suite_add_tcase(s, tc);

	tc = tcase_create("pool");
	tcase_add_test(tc, test_spawn_opts_pool_recycles_default_stacks_only);
	tcase_add_test(tc, test_spawn_opts_pool_cap_zero_keeps_no_stack);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(spawn_opts)
