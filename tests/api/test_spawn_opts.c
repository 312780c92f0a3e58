/* SPDX-License-Identifier: MIT */
/*
 * test_spawn_opts.c - per-spawn stack options: validation, a large
 * reserve that allows deep recursion, default spawns after custom ones,
 * the stack pool recycling default-shaped stacks only, the stack mode
 * option, guarded and dense stacks recycled under churn, AUTO's budget,
 * and stack introspection (smarm_actor_get_stack). meson runs it twice:
 * as is (default guarded stacks carved from chunks where the kernel has
 * guard regions) and as spawn_opts_fallback (SMARM__NO_GUARD_REGIONS: a
 * mapping of their own each); stack_probe.h tells the tests which.
 */
#include "harness.h"
#include "stack_probe.h"

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
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_MODE,
						  SMARM_STACK_DENSE),
			 0);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_MODE, 3),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_MODE, -1),
			 SMARM_EINVAL);
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

/* after a custom-shaped actor, the next default spawn gets the default
 * shape (with a LIFO pool a pooled custom stack would come out first) */
static int64_t so_next_reserve, so_next_guard;

static void so_report_shape(void *arg)
{
	(void)arg;
	smarm_actor_get_stack(smarm_actor_self(), SMARM_STACK_INFO_RESERVE,
			      &so_next_reserve);
	smarm_actor_get_stack(smarm_actor_self(), SMARM_STACK_INFO_GUARD,
			      &so_next_guard);
}

static void so_root_custom_then_default(void *arg)
{
	smarm_spawn_opts_t *o = NULL;
	smarm_pid_t p;
	(void)arg;
	smarm_spawn_opts_alloc(&o);
	smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, 128 * KIB);
	smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_GUARD, 8 * KIB);
	smarm_actor_spawn(&p, so_nop, NULL, o);
	smarm_actor_join(p, NULL, NULL);
	smarm_spawn_opts_free(o);
	smarm_actor_spawn(&p, so_report_shape, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
}

START_TEST(test_spawn_opts_custom_stack_never_pooled)
{
	so_next_reserve = so_next_guard = -1;
	ck_assert_int_eq(harness_run(1, so_root_custom_then_default, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(so_next_reserve, 64 * KIB);
	ck_assert_int_eq(so_next_guard, MIB);
}
END_TEST

START_TEST(test_spawn_opts_pool_recycles_default_stacks_only)
{
	ck_assert_int_eq(harness_run(1, so_root_pool, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_ge(so_pool_after_default, 1);
	ck_assert_int_eq(so_pool_after_custom, so_pool_before_custom);
	ck_assert_int_ge(so_pool_after_many, 8);
	/* the default cap at 1 worker; carved, the 8 carved for them */
	ck_assert_int_le(so_pool_after_many, 16);
}
END_TEST

/*
 * A pool capacity of 0 keeps no stack with a mapping of its own, and
 * actors still run. A stack carved from a chunk is never unmapped alone:
 * it waits on its chunk's free list whatever the cap.
 */
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

START_TEST(test_spawn_opts_pool_cap_zero_keeps_only_carved)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int64_t v = -1;
	int64_t kept = probe_carves_guarded() ? 1 : 0;
	so_pool_after_many = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_POOL_CAP, 0),
			 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(
		smarm_node_run(node, so_root_pool_zero, NULL, NULL, NULL), 0);
	/* the children's one stack, while the root runs */
	ck_assert_int_eq(so_pool_after_many, kept);
	/* and the root's too, after the run; all that exist */
	ck_assert_int_eq(smarm_node_get_int(node, SMARM_STAT_STACK_POOL, &v),
			 0);
	ck_assert_int_eq(v, 2 * kept);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_STACKS_GUARDED),
			 2 * kept);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ------------------------------------------------------ introspection */

enum { SI_KEYS = 6 };

struct si_report {
	int rc[SI_KEYS + 1];
	int64_t v[SI_KEYS + 1];
};

static struct si_report si_self, si_child[3];
static int si_err_null, si_err_key0, si_err_key7, si_err_stale;
static int64_t si_dense_stat;

static void si_read(smarm_pid_t p, struct si_report *r)
{
	for (int k = 1; k <= SI_KEYS; k++)
		r->rc[k] = smarm_actor_get_stack(p, k, &r->v[k]);
}

static __attribute__((noinline)) long si_deep(int depth)
{
	volatile char buf[1024];
	memset((char *)buf, depth & 0x7f, sizeof buf);
	if (depth == 0) {
		smarm_actor_sleep(US(100)); /* descheduled at depth */
		return buf[0];
	}
	return si_deep(depth - 1) + buf[depth % sizeof buf];
}

struct si_arg {
	smarm_chan_t *ready; /* child -> root: went deep, now waits */
	smarm_chan_t *hold;  /* root -> child: done reading, end */
	int64_t seen;	     /* the child's own high-water reading */
};

static void si_child_body(void *arg)
{
	struct si_arg *a = arg;
	int v = 1;
	si_deep(32); /* ~32 KiB deep, inside the 64 KiB default */
	smarm_actor_get_stack(smarm_actor_self(),
			      SMARM_STACK_INFO_DEPTH_HIGH_WATER, &a->seen);
	smarm_chan_send(a->ready, &v);
	smarm_chan_recv(a->hold, &v); /* parked while the root reads */
}

static void si_root(void *arg)
{
	static const int64_t modes[3] = { -1, SMARM_STACK_GUARDED,
					  SMARM_STACK_DENSE };
	struct si_arg a[3];
	smarm_chan_t *ready = NULL;
	smarm_pid_t p[3];
	int64_t v;
	int x = 0;
	(void)arg;
	si_read(smarm_actor_self(), &si_self);
	smarm_chan_alloc(&ready, sizeof(int), NULL);
	for (int i = 0; i < 3; i++) {
		smarm_spawn_opts_t *o = NULL;
		a[i].ready = ready;
		smarm_chan_alloc(&a[i].hold, sizeof(int), NULL);
		smarm_spawn_opts_alloc(&o);
		if (modes[i] >= 0)
			smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_MODE,
						 modes[i]);
		smarm_actor_spawn(&p[i], si_child_body, &a[i], o);
		smarm_spawn_opts_free(o);
	}
	for (int i = 0; i < 3; i++)
		smarm_chan_recv(ready, &x);
	for (int i = 0; i < 3; i++)
		si_read(p[i], &si_child[i]);
	smarm_node_get_int(smarm_node_current(), SMARM_STAT_STACKS_DENSE,
			   &si_dense_stat);
	si_err_null =
		smarm_actor_get_stack(p[0], SMARM_STACK_INFO_RESERVE, NULL);
	si_err_key0 = smarm_actor_get_stack(p[0], 0, &v);
	si_err_key7 = smarm_actor_get_stack(p[0], 7, &v);
	for (int i = 0; i < 3; i++) {
		smarm_chan_send(a[i].hold, &x);
		smarm_actor_join(p[i], NULL, NULL);
		harness_chan_drop(a[i].hold);
	}
	harness_chan_drop(ready);
	si_err_stale =
		smarm_actor_get_stack(p[0], SMARM_STACK_INFO_RESERVE, &v);
}

START_TEST(test_spawn_opts_stack_info_reports_shape_mode_and_depth)
{
	int64_t v = 0;
	ck_assert_int_eq(harness_run(2, si_root, NULL), SMARM_EXIT_NORMAL);
	/* the root: default shape, AUTO resolved to guarded */
	for (int k = 1; k <= SI_KEYS; k++)
		ck_assert_int_eq(si_self.rc[k], 0);
	ck_assert_int_eq(si_self.v[SMARM_STACK_INFO_RESERVE], 64 * KIB);
	ck_assert_int_eq(si_self.v[SMARM_STACK_INFO_GUARD], MIB);
	ck_assert_int_eq(si_self.v[SMARM_STACK_INFO_MODE], SMARM_STACK_GUARDED);
	ck_assert_int_eq(si_self.v[SMARM_STACK_INFO_SHRINKS], 0);
	for (int i = 0; i < 3; i++) {
		struct si_report *r = &si_child[i];
		for (int k = 1; k <= SI_KEYS; k++)
			ck_assert_int_eq(r->rc[k], 0);
		ck_assert_int_eq(r->v[SMARM_STACK_INFO_RESERVE], 64 * KIB);
		ck_assert_int_ge(r->v[SMARM_STACK_INFO_DEPTH_HIGH_WATER],
				 32 * KIB);
		ck_assert_int_lt(r->v[SMARM_STACK_INFO_DEPTH_HIGH_WATER],
				 64 * KIB);
		ck_assert_int_ge(r->v[SMARM_STACK_INFO_PARKS_SINCE_SHRINK], 1);
		ck_assert_int_eq(r->v[SMARM_STACK_INFO_SHRINKS], 0);
	}
	ck_assert_int_eq(si_child[0].v[SMARM_STACK_INFO_MODE],
			 SMARM_STACK_GUARDED);
	ck_assert_int_eq(si_child[1].v[SMARM_STACK_INFO_MODE],
			 SMARM_STACK_GUARDED);
	ck_assert_int_eq(si_child[1].v[SMARM_STACK_INFO_GUARD], MIB);
	ck_assert_int_eq(si_child[2].v[SMARM_STACK_INFO_MODE],
			 SMARM_STACK_DENSE);
	ck_assert_int_eq(si_child[2].v[SMARM_STACK_INFO_GUARD], 0);
	ck_assert_int_eq(si_dense_stat, 1);
	ck_assert_int_eq(si_err_null, SMARM_EINVAL);
	ck_assert_int_eq(si_err_key0, SMARM_EINVAL);
	ck_assert_int_eq(si_err_key7, SMARM_EINVAL);
	ck_assert_int_eq(si_err_stale, SMARM_ENOPROC);
	/* outside an actor */
	ck_assert_int_eq(smarm_actor_get_stack(SMARM_PID_NONE,
					       SMARM_STACK_INFO_RESERVE, &v),
			 SMARM_ENOTACTOR);
}
END_TEST

/* a node-wide dense default: every actor gets a dense stack */
static int64_t sd_mode_root, sd_mode_child, sd_guarded_stat;

static void sd_mode_child_body(void *arg)
{
	(void)arg;
	smarm_actor_get_stack(smarm_actor_self(), SMARM_STACK_INFO_MODE,
			      &sd_mode_child);
}

static void sd_mode_root_body(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_get_stack(smarm_actor_self(), SMARM_STACK_INFO_MODE,
			      &sd_mode_root);
	for (int i = 0; i < 100; i++) {
		smarm_actor_spawn(&p, sd_mode_child_body, NULL, NULL);
		smarm_actor_join(p, NULL, NULL);
	}
	smarm_node_get_int(smarm_node_current(), SMARM_STAT_STACKS_GUARDED,
			   &sd_guarded_stat);
}

START_TEST(test_spawn_opts_node_dense_mode_applies_to_all)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int64_t v = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 4), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_MODE,
					      SMARM_STACK_DENSE),
			 0);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_STACK_MODE, &v),
			 0);
	ck_assert_int_eq(v, SMARM_STACK_DENSE);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(
		smarm_node_run(node, sd_mode_root_body, NULL, NULL, NULL), 0);
	ck_assert_int_eq(sd_mode_root, SMARM_STACK_DENSE);
	ck_assert_int_eq(sd_mode_child, SMARM_STACK_DENSE);
	ck_assert_int_eq(sd_guarded_stat, 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_STACKS_DENSE), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/*
 * AUTO: guarded up to the node's budget of guarded stacks (carved or
 * with a mapping of their own), dense beyond it.
 */
static atomic_long au_started;
static int64_t au_budget, au_guarded, au_dense, au_live;
static int au_rc;

static void au_sleeper(void *arg)
{
	(void)arg;
	atomic_fetch_add(&au_started, 1);
	smarm_actor_sleep(3600ull * 1000000000ull); /* until the root ends */
}

static void au_root(void *arg)
{
	smarm_node_t *n = smarm_node_current();
	long want;
	(void)arg;
	smarm_node_get_int(n, SMARM_STAT_STACK_GUARD_BUDGET, &au_budget);
	want = (long)au_budget + 2000;
	for (long i = 0; i < want && au_rc == 0; i++)
		au_rc = smarm_actor_spawn(NULL, au_sleeper, NULL, NULL);
	while (au_rc == 0 && atomic_load(&au_started) < want)
		smarm_actor_sleep(MS(2));
	smarm_node_get_int(n, SMARM_STAT_STACKS_GUARDED, &au_guarded);
	smarm_node_get_int(n, SMARM_STAT_STACKS_DENSE, &au_dense);
	smarm_node_get_int(n, SMARM_STAT_LIVE_ACTORS, &au_live);
}

START_TEST(test_spawn_opts_auto_spills_to_dense_beyond_budget)
{
	atomic_store(&au_started, 0);
	au_rc = 0;
	ck_assert_int_eq(harness_run(2, au_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(au_rc, 0);
	ck_assert_int_gt(au_budget, 2000);
	ck_assert_int_eq(au_live, au_budget + 2001);
	/* the budget is soft by a racing spawn or two, never by much */
	ck_assert_int_ge(au_guarded, au_budget);
	ck_assert_int_le(au_guarded, au_budget + 4);
	ck_assert_int_ge(au_dense, 2000 - 4);
	ck_assert_int_eq(au_guarded + au_dense, au_budget + 2001);
}
END_TEST

/* dense stacks recycled under churn on four workers */
static atomic_long dc_ran;

static void dc_child(void *arg)
{
	(void)arg;
	smarm_actor_yield();
	atomic_fetch_add(&dc_ran, 1);
}

static int64_t dc_dense_after;

/* 500 rounds of 64 children with stacks of `mode`, each round joined. */
static void churn(int64_t mode)
{
	smarm_spawn_opts_t *o = NULL;
	smarm_pid_t p[64];
	smarm_spawn_opts_alloc(&o);
	smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_MODE, mode);
	for (int round = 0; round < 500; round++) {
		for (int i = 0; i < 64; i++)
			smarm_actor_spawn(&p[i], dc_child, NULL, o);
		for (int i = 0; i < 64; i++)
			smarm_actor_join(p[i], NULL, NULL);
	}
	smarm_spawn_opts_free(o);
}

static void dc_root(void *arg)
{
	(void)arg;
	churn(SMARM_STACK_DENSE);
	smarm_node_get_int(smarm_node_current(), SMARM_STAT_STACKS_DENSE,
			   &dc_dense_after);
}

START_TEST(test_spawn_opts_dense_stacks_recycle_under_churn)
{
	atomic_store(&dc_ran, 0);
	dc_dense_after = -1;
	ck_assert_int_eq(harness_run(4, dc_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&dc_ran), 500 * 64);
	ck_assert_int_eq(dc_dense_after, 0);
}
END_TEST

/* guarded stacks recycled under churn on four workers */
static int64_t gc_guarded_after, gc_pool_after;

static void gc_root(void *arg)
{
	(void)arg;
	churn(SMARM_STACK_GUARDED);
	gc_guarded_after = harness_actor_stat(SMARM_STAT_STACKS_GUARDED);
	gc_pool_after = harness_actor_stat(SMARM_STAT_STACK_POOL);
}

START_TEST(test_spawn_opts_guarded_stacks_recycle_under_churn)
{
	atomic_store(&dc_ran, 0);
	gc_guarded_after = gc_pool_after = -1;
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, gc_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&dc_ran), 500 * 64);
	/* only the root's stack is attached: all others came back */
	ck_assert_int_eq(gc_guarded_after - gc_pool_after, 1);
	/* reused, never more than the 64 children, the root and the
	 * workers' caches at once */
	ck_assert_int_le(gc_guarded_after, 64 + 1 + 4 * 4);
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
	tcase_add_test(tc, test_spawn_opts_pool_cap_zero_keeps_only_carved);
	tcase_add_test(tc, test_spawn_opts_custom_stack_never_pooled);
	suite_add_tcase(s, tc);

	tc = tcase_create("mode");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc,
		       test_spawn_opts_stack_info_reports_shape_mode_and_depth);
	tcase_add_test(tc, test_spawn_opts_node_dense_mode_applies_to_all);
	tcase_add_test(tc, test_spawn_opts_dense_stacks_recycle_under_churn);
	tcase_add_test(tc, test_spawn_opts_guarded_stacks_recycle_under_churn);
	suite_add_tcase(s, tc);

	tc = tcase_create("auto");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_spawn_opts_auto_spills_to_dense_beyond_budget);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(spawn_opts)
