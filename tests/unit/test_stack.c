/* SPDX-License-Identifier: MIT */
/*
 * test_stack.c - actor stacks: geometry (guard below the usable
 * reserve), page rounding, and, in Check's forked children, death by
 * SIGSEGV for writes into the guard, both from the raw stack and from a
 * running actor; each on both paths of default guarded stacks (loop
 * index 0: carved from a chunk, guard regions; 1: the fallback, a
 * mapping of their own). The own-mapping pool; guard regions (the
 * probe, both ways of installing them); carved guarded stacks (chunk
 * geometry, one kernel mapping per chunk, free-list reuse, the pool
 * cap, AUTO's budget, chunks unmapped at close). Then the pure range and
 * fault-classification helpers, dense stacks (chunk geometry, canary, free
 * list, AUTO's budget), the recycle zap (mincore) and the park-path shrink
 * (LazyFree in /proc/self/smaps).
 */
#include "harness.h"

#include "core/node.h"
#include "core/slot.h"
#include "core/stack.h"
#include "stack_probe.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KIB 1024
#define MIB (1024 * 1024)

#if defined(__SANITIZE_ADDRESS__)
/* Let a guard-page fault kill the child with SIGSEGV, as Check expects,
 * instead of ASan reporting it and exiting with status 1. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "handle_segv=0";
}
#endif

static smarm_node_t *sk_node(int64_t reserve, int64_t guard)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *n = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1), 0);
	if (reserve)
		ck_assert_int_eq(smarm_config_set_int(
					 cfg, SMARM_OPT_STACK_RESERVE, reserve),
				 0);
	if (guard)
		ck_assert_int_eq(
			smarm_config_set_int(cfg, SMARM_OPT_STACK_GUARD, guard),
			0);
	ck_assert_int_eq(smarm_node_open(&n, cfg), 0);
	smarm_config_free(cfg);
	return n;
}

static void sk_slot(struct smarm__slot *s, size_t reserve, size_t guard)
{
	memset(s, 0, sizeof *s);
	s->stk_reserve = reserve;
	s->stk_guard = guard;
}

/* A one-worker node with one option set. */
static smarm_node_t *sk_node_opt(int opt, int64_t val)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *n = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, opt, val), 0);
	ck_assert_int_eq(smarm_node_open(&n, cfg), 0);
	smarm_config_free(cfg);
	return n;
}

static smarm_node_t *sk_node_mode(int64_t mode)
{
	return sk_node_opt(SMARM_OPT_STACK_MODE, mode);
}

static void sk_dense_slot(smarm_node_t *n, struct smarm__slot *s, int mode)
{
	sk_slot(s, n->stk_reserve, n->stk_guard);
	s->stk_mode = (uint8_t)mode;
}

/*
 * Loop tests run both paths of default guarded stacks: i 0 as the node
 * chose at open (carved where the kernel has guard regions), i 1 forced
 * to mappings of their own. Only before the node's first stack.
 */
static void sk_path(smarm_node_t *n, int i)
{
	if (i == 1)
		n->stk_guards = SMARM__GUARDS_NONE;
}

/* Whether n carves its default guarded stacks; if not, say why. */
static bool sk_carving(smarm_node_t *n)
{
	if (n->stk_guards != SMARM__GUARDS_NONE)
		return true;
	/* Only a kernel without guard regions may get here. */
	ck_assert(!probe_guard_regions());
	fprintf(stderr, "# skip: no guard regions on this kernel\n");
	return false;
}

/* Whether [p, p+len) is mapped, whatever its protection. */
static bool sk_mapped(void *p, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char vec[1];
	for (size_t off = 0; off < len; off += pg)
		if (mincore((char *)p + off, pg, vec) != 0)
			return false;
	return true;
}

/* ----------------------------------------------------------- geometry */

START_TEST(test_stack_acquire_maps_guard_and_reserve)
{
	smarm_node_t *n = sk_node(0, 0);
	struct smarm__slot s;
	char *usable, *top;
	sk_path(n, _i);
	sk_slot(&s, n->stk_reserve, n->stk_guard);
	ck_assert_uint_eq(n->stk_reserve, 65536);
	ck_assert_uint_eq(n->stk_guard, MIB);
	ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
	ck_assert_ptr_nonnull(s.stk_base);
	ck_assert_uint_eq(
		(uintptr_t)s.stk_base % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
	usable = (char *)s.stk_base + s.stk_guard;
	top = usable + s.stk_reserve;
	ck_assert(sk_mapped(s.stk_base, s.stk_guard + s.stk_reserve));
	/* the guard does not read at either end; the usable region does */
	ck_assert(!probe_readable(s.stk_base));
	ck_assert(!probe_readable(usable - 1));
	ck_assert(probe_readable(usable));
	ck_assert(probe_readable(top - 1));
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACKS_GUARDED), 1);
	/* read and write at both ends of the usable region */
	usable[0] = 0x5a;
	top[-1] = 0x5b;
	ck_assert_int_eq(usable[0], 0x5a);
	ck_assert_int_eq(top[-1], 0x5b);
	smarm__stack_release(n, &s);
	ck_assert_ptr_null(s.stk_base);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_stack_sizes_round_up_to_pages)
{
	smarm_node_t *n = sk_node(5000, 4097);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	ck_assert_uint_eq(n->stk_reserve, 2 * pg);
	ck_assert_uint_eq(n->stk_guard, 2 * pg);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_stack_small_and_large_stacks_allocate)
{
	static const size_t sizes[] = { 4 * KIB, 8 * MIB };
	smarm_node_t *n = sk_node(0, 0);
	for (size_t i = 0; i < 2; i++) {
		struct smarm__slot s;
		char *usable;
		sk_slot(&s, sizes[i], 4 * KIB);
		ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
		usable = (char *)s.stk_base + s.stk_guard;
		usable[0] = 1;
		usable[sizes[i] - 1] = 2;
		ck_assert_int_eq(usable[0] + usable[sizes[i] - 1], 3);
		smarm__stack_release(n, &s);
	}
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/* ------------------------------------------------------------------ pool */

/* The pool holds default guarded stacks with a mapping of their own. */
START_TEST(test_stack_pool_keeps_default_shape_lifo)
{
	smarm_node_t *n = sk_node(0, 0);
	struct smarm__slot a, b, c;
	void *base_a, *base_b;
	sk_path(n, 1);
	sk_slot(&a, n->stk_reserve, n->stk_guard);
	sk_slot(&b, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &a), 0);
	ck_assert_int_eq(smarm__stack_acquire(n, &b), 0);
	base_a = a.stk_base;
	base_b = b.stk_base;
	ck_assert_ptr_ne(base_a, base_b);
	ck_assert_uint_eq(n->pool_len, 0);
	smarm__stack_release(n, &a);
	smarm__stack_release(n, &b);
	ck_assert_uint_eq(n->pool_len, 2);
	/* last in, first out */
	sk_slot(&c, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &c), 0);
	ck_assert_ptr_eq(c.stk_base, base_b);
	ck_assert_uint_eq(n->pool_len, 1);
	smarm__stack_release(n, &c);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_stack_custom_shape_unmapped_not_pooled)
{
	smarm_node_t *n = sk_node(0, 0);
	struct smarm__slot s;
	void *base;
	size_t len;
	sk_slot(&s, 256 * KIB, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
	base = s.stk_base;
	len = s.stk_guard + s.stk_reserve;
	ck_assert(sk_mapped(base, len));
	smarm__stack_release(n, &s);
	ck_assert_uint_eq(n->pool_len, 0);
	ck_assert(!sk_mapped(base, (size_t)sysconf(_SC_PAGESIZE)));
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_stack_pool_full_unmaps_extra)
{
	smarm_node_t *n = sk_node_opt(SMARM_OPT_STACK_POOL_CAP, 2);
	struct smarm__slot s[3];
	void *last;
	sk_path(n, 1);
	for (int i = 0; i < 3; i++) {
		sk_slot(&s[i], n->stk_reserve, n->stk_guard);
		ck_assert_int_eq(smarm__stack_acquire(n, &s[i]), 0);
	}
	last = s[2].stk_base;
	for (int i = 0; i < 3; i++)
		smarm__stack_release(n, &s[i]);
	ck_assert_uint_eq(n->pool_len, 2);
	ck_assert(!sk_mapped(last, (size_t)sysconf(_SC_PAGESIZE)));
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/* ------------------------------------------- guard faults (raw mapping) */

static volatile char *sk_target;

START_TEST(test_stack_write_below_usable_base_segfaults)
{
	smarm_node_t *n = sk_node(0, 0);
	struct smarm__slot s;
	sk_path(n, _i);
	sk_slot(&s, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
	sk_target = (char *)s.stk_base + s.stk_guard - 1;
	*sk_target = 1; /* dies here */
}
END_TEST

START_TEST(test_stack_write_at_guard_bottom_segfaults)
{
	smarm_node_t *n = sk_node(0, 64 * KIB);
	struct smarm__slot s;
	sk_path(n, _i);
	sk_slot(&s, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
	sk_target = (char *)s.stk_base;
	*sk_target = 1;
}
END_TEST

START_TEST(test_stack_write_at_guard_top_segfaults)
{
	smarm_node_t *n = sk_node(0, 64 * KIB);
	struct smarm__slot s;
	sk_path(n, _i);
	sk_slot(&s, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
	sk_target = (char *)s.stk_base + 64 * KIB - 1;
	*sk_target = 1;
}
END_TEST

/* The guard of the second stack, right above the first one's top
 * when both are carved from one chunk. */
START_TEST(test_stack_write_in_second_stacks_guard_segfaults)
{
	smarm_node_t *n = sk_node(0, 0);
	struct smarm__slot a, b;
	sk_path(n, _i);
	sk_slot(&a, n->stk_reserve, n->stk_guard);
	sk_slot(&b, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &a), 0);
	ck_assert_int_eq(smarm__stack_acquire(n, &b), 0);
	if (_i == 0 && n->stk_guards != SMARM__GUARDS_NONE)
		ck_assert_ptr_eq(b.stk_base, (char *)a.stk_base + a.stk_guard +
						     a.stk_reserve);
	sk_target = (char *)b.stk_base + b.stk_guard / 2;
	*sk_target = 1;
}
END_TEST

/* ------------------------------------------- guard faults (live actor) */

static atomic_int sk_actor_wrote_bottom;

static void sk_actor_write_below(void *arg)
{
	struct smarm__slot *me = smarm__current();
	volatile char *usable = (char *)me->stk_base + me->stk_guard;
	(void)arg;
	usable[0] = 7; /* the lowest usable byte is fine */
	atomic_store(&sk_actor_wrote_bottom, 1);
	usable[-1] = 7; /* one below: the guard */
}

START_TEST(test_stack_actor_write_one_below_usable_segfaults)
{
	smarm_node_t *n = sk_node(0, 0);
	sk_path(n, _i);
	smarm_node_run(n, sk_actor_write_below, NULL, NULL, NULL);
}
END_TEST

static void sk_actor_write_bottom_only(void *arg)
{
	struct smarm__slot *me = smarm__current();
	volatile char *usable = (char *)me->stk_base + me->stk_guard;
	volatile char *top = usable + me->stk_reserve;
	(void)arg;
	usable[0] = 7;
	top[-1] = usable[0];
	atomic_store(&sk_actor_wrote_bottom, top[-1] == 7);
}

START_TEST(test_stack_actor_writes_inside_usable_region_survive)
{
	smarm_node_t *n = sk_node(0, 0);
	int how = -1;
	sk_path(n, _i);
	atomic_store(&sk_actor_wrote_bottom, 0);
	ck_assert_int_eq(
		smarm_node_run(n, sk_actor_write_bottom_only, NULL, &how, NULL),
		0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&sk_actor_wrote_bottom), 1);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

static __attribute__((noinline)) long sk_recurse(long depth)
{
	volatile char buf[2048];
	buf[0] = (char)depth;
	buf[sizeof buf - 1] = (char)depth;
	if (depth <= 0)
		return buf[0];
	return sk_recurse(depth - 1) + buf[sizeof buf - 1];
}

static void sk_actor_walk_off(void *arg)
{
	(void)arg;
	/* ~200 MiB of frames: far past 64 KiB reserve + 1 MiB guard */
	sk_recurse(100000);
}

START_TEST(test_stack_actor_recursion_off_the_end_segfaults)
{
	smarm_node_t *n = sk_node(0, 0);
	sk_path(n, _i);
	smarm_node_run(n, sk_actor_walk_off, NULL, NULL, NULL);
}
END_TEST

/* ---------------------------------------------------- guard regions */

/* The arch probe agrees with the suite's own, way by way. */
START_TEST(test_stack_guards_probe_matches_kernel)
{
	int how = smarm__guards_probe();
	ck_assert_int_eq(how != SMARM__GUARDS_NONE, probe_guard_regions());
	ck_assert_int_eq(how == SMARM__GUARDS_BATCH, probe_guard_batch());
	ck_assert_int_eq(smarm__guards_probe(), how); /* once per process */
}
END_TEST

/*
 * Three one-page guards every other page, installed each way the kernel
 * has (i 0: one madvise per guard, 1: batched): the guards do not read,
 * the pages between them do (a resident one keeps its data).
 */
START_TEST(test_stack_guards_install_every_other_page)
{
	static const int ways[2] = { SMARM__GUARDS_MADVISE,
				     SMARM__GUARDS_BATCH };
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int how = smarm__guards_probe();
	char *m;
	if (how < ways[_i]) {
		fprintf(stderr, "# skip: the kernel lacks this way\n");
		return;
	}
	m = mmap(NULL, 7 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	m[pg] = 1; /* a resident page between guards stays */
	ck_assert_int_eq(smarm__guards_install(ways[_i], m, pg, 2 * pg, 3), 0);
	for (int i = 0; i < 7; i++)
		ck_assert_int_eq(probe_readable(m + (size_t)i * pg),
				 i % 2 == 1 || i == 6);
	ck_assert_int_eq(m[pg], 1);
	ck_assert_int_eq(munmap(m, 7 * pg), 0);
}
END_TEST

/* ------------------------------------------------ carved guarded */

START_TEST(test_stack_node_takes_probe)
{
	smarm_node_t *n;
	if (getenv(PROBE_NO_GUARDS_ENV) != NULL)
		return; /* a run that forces the fallback */
	n = sk_node(0, 0);
	/* The node takes the process's probe, which agrees with the
	 * suite's own (test_stack_guards_probe_matches_kernel). */
	ck_assert_int_eq(n->stk_guards, smarm__guards_probe());
	ck_assert_int_eq(n->stk_guards != SMARM__GUARDS_NONE,
			 probe_guard_regions());
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_stack_probe_env_forces_own_mappings)
{
	smarm_node_t *n;
	struct smarm__slot a;
	setenv(PROBE_NO_GUARDS_ENV, "1", 1);
	n = sk_node(0, 0);
	unsetenv(PROBE_NO_GUARDS_ENV); /* read at open only */
	ck_assert_int_eq(n->stk_guards, SMARM__GUARDS_NONE);
	sk_slot(&a, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &a), 0);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACKS_GUARDED), 1);
	ck_assert_uint_eq(n->stk_gd.cv_carved, 0); /* a mapping of its own */
	smarm__stack_release(n, &a);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/* The kernel mapping (from /proc/self/maps) that contains p: [*lo, *hi). */
static bool sk_vma_of(uintptr_t p, uintptr_t *lo, uintptr_t *hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && p >= a && p < b) {
			*lo = a;
			*hi = b;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* Mapped bytes and kernel mappings of this process. */
static void sk_maps_total(size_t *bytes, size_t *vmas)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	*bytes = 0;
	*vmas = 0;
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f) != NULL) {
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx", &a, &b) == 2) {
			*bytes += b - a;
			*vmas += 1;
		}
	}
	fclose(f);
}

/*
 * Two chunks' worth of default stacks plus one: each is [guard|usable],
 * carved in address order within a chunk, none overlapping another, the
 * guard unreadable at both ends, the usable region readable at both;
 * a chunk is one kernel mapping. i 1: the guards installed one madvise
 * each, not batched.
 */
START_TEST(test_stack_carved_chunk_geometry)
{
	smarm_node_t *n = sk_node(0, 0);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct smarm__slot s[2 * 256 + 1];
	uint32_t per;
	uint32_t k;
	size_t stride;
	uintptr_t lo, hi;
	if (!sk_carving(n)) {
		ck_assert_int_eq(smarm_node_close(n), 0);
		return;
	}
	if (_i == 1)
		n->stk_guards = SMARM__GUARDS_MADVISE;
	per = n->stk_gd.cv_per;
	stride = n->stk_guard + n->stk_reserve;
	ck_assert_uint_eq(per, (16u << 20) / stride); /* 15 at the defaults */
	k = per + 1;
	for (uint32_t i = 0; i < k; i++) {
		char *base, *usable, *top;
		sk_slot(&s[i], n->stk_reserve, n->stk_guard);
		ck_assert_int_eq(smarm__stack_acquire(n, &s[i]), 0);
		ck_assert_int_eq(s[i].stk_mode, SMARM_STACK_GUARDED);
		base = s[i].stk_base;
		usable = base + s[i].stk_guard;
		top = usable + s[i].stk_reserve;
		ck_assert_uint_eq((uintptr_t)base % pg, 0);
		ck_assert(!probe_readable(base));
		ck_assert(!probe_readable(usable - 1));
		ck_assert(probe_readable(usable));
		ck_assert(probe_readable(top - 1));
		/* one chunk: back to back, in address order */
		if (i > 0 && i < per)
			ck_assert_ptr_eq(base,
					 (char *)s[i - 1].stk_base + stride);
	}
	/* no two stacks overlap, across chunks too */
	for (uint32_t i = 0; i < k; i++)
		for (uint32_t j = i + 1; j < k; j++) {
			uintptr_t a = (uintptr_t)s[i].stk_base;
			uintptr_t b = (uintptr_t)s[j].stk_base;
			ck_assert(a + stride <= b || b + stride <= a);
		}
	/* guard regions do not split the chunk: one mapping holds all of
	 * the first chunk's stacks */
	ck_assert(sk_vma_of((uintptr_t)s[0].stk_base, &lo, &hi));
	ck_assert_uint_le(lo, (uintptr_t)s[0].stk_base);
	ck_assert_uint_ge(hi, (uintptr_t)s[per - 1].stk_base + stride);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACKS_GUARDED), k);
	ck_assert_uint_eq(n->stk_gd.cv_carved, k);
	for (uint32_t i = 0; i < k; i++)
		smarm__stack_release(n, &s[i]);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/*
 * A freed carved stack goes on its chunk's free list (not the pool),
 * comes back last-in first-out, and still counts as a guarded stack
 * that exists, and as one held for reuse.
 */
START_TEST(test_stack_carved_free_list_lifo)
{
	smarm_node_t *n = sk_node(0, 0);
	struct smarm__slot a, b, c;
	void *base_b;
	if (!sk_carving(n)) {
		ck_assert_int_eq(smarm_node_close(n), 0);
		return;
	}
	sk_slot(&a, n->stk_reserve, n->stk_guard);
	sk_slot(&b, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &a), 0);
	ck_assert_int_eq(smarm__stack_acquire(n, &b), 0);
	base_b = b.stk_base;
	smarm__stack_release(n, &a);
	smarm__stack_release(n, &b);
	ck_assert_uint_eq(n->pool_len, 0);
	ck_assert_uint_eq(n->stk_gd.cv_nfree, 2);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACK_POOL), 2);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACKS_GUARDED), 2);
	sk_slot(&c, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &c), 0);
	ck_assert_ptr_eq(c.stk_base, base_b);
	ck_assert(!probe_readable(c.stk_base)); /* its guard is still there */
	ck_assert_uint_eq(n->stk_gd.cv_carved, 2); /* reused, not carved */
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACK_POOL), 1);
	smarm__stack_release(n, &c);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/* The pool cap bounds the own-mapping pool only: carved stacks are
 * never unmapped one by one, whatever the cap. */
START_TEST(test_stack_carved_pool_cap_unmaps_nothing)
{
	smarm_node_t *n = sk_node_opt(SMARM_OPT_STACK_POOL_CAP, 0);
	struct smarm__slot s[3];
	if (!sk_carving(n)) {
		ck_assert_int_eq(smarm_node_close(n), 0);
		return;
	}
	for (int i = 0; i < 3; i++) {
		sk_slot(&s[i], n->stk_reserve, n->stk_guard);
		ck_assert_int_eq(smarm__stack_acquire(n, &s[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		void *base = s[i].stk_base;
		smarm__stack_release(n, &s[i]);
		ck_assert(sk_mapped(base, n->stk_guard + n->stk_reserve));
		ck_assert(!probe_readable(base));
	}
	ck_assert_uint_eq(n->pool_len, 0);
	ck_assert_uint_eq(n->stk_gd.cv_nfree, 3);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACKS_GUARDED), 3);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/*
 * Node close unmaps every chunk, guarded and dense: the stacks' addresses
 * are no longer mapped and the process maps no more than before the
 * node was opened (within slack for libc's own arenas), after five
 * chunks (about 80 MiB) were mapped. i 1: the stacks are freed in
 * reverse, so the free lists hold them in another order.
 */
START_TEST(test_stack_close_unmaps_every_chunk)
{
	size_t bytes0, vmas0, bytes1, vmas1, bytes2, vmas2;
	smarm_node_t *n;
	struct smarm__slot g[2 * 256 + 1], d[256 + 1];
	void *gb[2 * 256 + 1], *db[256 + 1]; /* their bases */
	uint32_t kg, kd;
	sk_maps_total(&bytes0, &vmas0);
	n = sk_node_mode(SMARM_STACK_AUTO);
	if (!sk_carving(n)) {
		ck_assert_int_eq(smarm_node_close(n), 0);
		return;
	}
	kg = 2 * n->stk_gd.cv_per + 1; /* three guarded chunks */
	kd = n->stk_dn.cv_per + 1;     /* two dense ones */
	sk_maps_total(&bytes1, &vmas1);
	for (uint32_t i = 0; i < kg; i++) {
		sk_dense_slot(n, &g[i], SMARM_STACK_GUARDED);
		ck_assert_int_eq(smarm__stack_acquire(n, &g[i]), 0);
		gb[i] = g[i].stk_base;
	}
	for (uint32_t i = 0; i < kd; i++) {
		sk_dense_slot(n, &d[i], SMARM_STACK_DENSE);
		ck_assert_int_eq(smarm__stack_acquire(n, &d[i]), 0);
		db[i] = d[i].stk_base;
	}
	sk_maps_total(&bytes2, &vmas2);
	ck_assert_uint_ge(bytes2 - bytes1, (size_t)5 * (15u << 20));
	/* Five chunks, however many guards: at most five mappings more. */
	ck_assert_uint_le(vmas2, vmas1 + 5);
	for (uint32_t i = 0; i < kg; i++) {
		uint32_t at = _i == 0 ? i : kg - 1 - i;
		smarm__stack_release(n, &g[at]);
	}
	for (uint32_t i = 0; i < kd; i++) {
		uint32_t at = _i == 0 ? i : kd - 1 - i;
		smarm__stack_release(n, &d[at]);
	}
	ck_assert_int_eq(smarm_node_close(n), 0);
	for (uint32_t i = 0; i < kg; i++)
		ck_assert(!sk_mapped(gb[i], 4096));
	for (uint32_t i = 0; i < kd; i++)
		ck_assert(!sk_mapped(db[i], 4096));
	sk_maps_total(&bytes2, &vmas2);
	/* The bytes are the sharp check: chunks merge into few mappings,
	 * and ASan's allocator maps a few of its own meanwhile. */
	ck_assert_uint_le(bytes2, bytes0 + 4 * MIB);
	ck_assert_uint_le(vmas2, vmas0 + 16);
}
END_TEST

/* -------------------------------------------------------------- ranges */

#define PG ((size_t)4096)

START_TEST(test_stack_retain_range_edges)
{
	size_t len = 0;
	/* retain >= size: nothing to give back */
	ck_assert(!smarm__stack_retain_range(64 * KIB, 64 * KIB, PG, &len));
	ck_assert(!smarm__stack_retain_range(64 * KIB, 100 * KIB, PG, &len));
	/* retain 0 zaps everything */
	ck_assert(smarm__stack_retain_range(64 * KIB, 0, PG, &len));
	ck_assert_uint_eq(len, 64 * KIB);
	/* rounds retain up, so more is kept; the length stays page-aligned */
	ck_assert(smarm__stack_retain_range(4 * MIB, 5000, PG, &len));
	ck_assert_uint_eq(len, 4 * MIB - 2 * PG);
	ck_assert_uint_eq(len % PG, 0);
	ck_assert(smarm__stack_retain_range(4 * MIB, 64 * KIB, PG, &len));
	ck_assert_uint_eq(len, 4 * MIB - 64 * KIB);
	/* overflow */
	ck_assert(!smarm__stack_retain_range(SIZE_MAX, SIZE_MAX - 1, PG, &len));
}
END_TEST

START_TEST(test_stack_shrink_range_edges)
{
	uintptr_t lo = 0;
	size_t len = 0;
	uintptr_t b = 0x7f0000000000;
	/* hwm >= sp */
	ck_assert(!smarm__stack_shrink_range(b, b, PG, &lo, &len));
	ck_assert(!smarm__stack_shrink_range(b + PG, b, PG, &lo, &len));
	/* less than redzone + one page */
	ck_assert(
		!smarm__stack_shrink_range(b, b + PG + PG - 1, PG, &lo, &len));
	/* exactly two pages frees one */
	ck_assert(smarm__stack_shrink_range(b, b + 2 * PG, PG, &lo, &len));
	ck_assert_uint_eq(lo, b);
	ck_assert_uint_eq(len, PG);
	/* unaligned ends round inward, never reaching the redzone */
	ck_assert(smarm__stack_shrink_range(b + 1, b + 5 * PG + 100, PG, &lo,
					    &len));
	ck_assert_uint_eq(lo, b + PG);
	ck_assert_uint_eq(len, 3 * PG);
	ck_assert_uint_le(lo + len, b + 5 * PG + 100 - PG);
	/* underflow: sp below one page */
	ck_assert(!smarm__stack_shrink_range(0, PG - 1, PG, &lo, &len));
	ck_assert(!smarm__stack_shrink_range(UINTPTR_MAX - 10, UINTPTR_MAX, PG,
					     &lo, &len));
	/* a 4 MiB spike frees everything but the redzone page */
	ck_assert(smarm__stack_shrink_range(b, b + 4 * MIB, PG, &lo, &len));
	ck_assert_uint_eq(lo, b);
	ck_assert_uint_eq(len, 4 * MIB - PG);
}
END_TEST

START_TEST(test_stack_classify_edges)
{
	uintptr_t base = 0x7f0000100000; /* guard_lo */
	size_t guard = 64 * KIB;
	size_t reserve = 64 * KIB;
	uintptr_t below = 0;
	const uintptr_t slop = MIB;
	/* both guard edges */
	ck_assert_int_eq(
		smarm__stackdiag_classify(base, base, guard, reserve, &below),
		SMARM__FAULT_GUARD);
	ck_assert_int_eq(smarm__stackdiag_classify(base + guard - 1, base,
						   guard, reserve, &below),
			 SMARM__FAULT_GUARD);
	/* the usable region and above the top are foreign */
	ck_assert_int_eq(smarm__stackdiag_classify(base + guard, base, guard,
						   reserve, &below),
			 SMARM__FAULT_FOREIGN);
	ck_assert_int_eq(smarm__stackdiag_classify(base + guard + reserve, base,
						   guard, reserve, &below),
			 SMARM__FAULT_FOREIGN);
	/* overshoot at 1 and at exactly SLOP, foreign at SLOP + 1 */
	ck_assert_int_eq(smarm__stackdiag_classify(base - 1, base, guard,
						   reserve, &below),
			 SMARM__FAULT_OVERSHOOT);
	ck_assert_uint_eq(below, 1);
	ck_assert_int_eq(smarm__stackdiag_classify(base - slop, base, guard,
						   reserve, &below),
			 SMARM__FAULT_OVERSHOOT);
	ck_assert_uint_eq(below, slop);
	ck_assert_int_eq(smarm__stackdiag_classify(base - slop - 1, base, guard,
						   reserve, &below),
			 SMARM__FAULT_FOREIGN);
	/* a stack low in memory saturates instead of wrapping */
	ck_assert_int_eq(
		smarm__stackdiag_classify(0, 4096, guard, reserve, &below),
		SMARM__FAULT_OVERSHOOT);
	ck_assert_uint_eq(below, 4096);
	ck_assert_int_eq(smarm__stackdiag_classify(UINTPTR_MAX, 4096, guard,
						   reserve, &below),
			 SMARM__FAULT_FOREIGN);
}
END_TEST

/* --------------------------------------------------------------- dense */

START_TEST(test_stack_dense_stacks_share_pages_with_neighbours)
{
	smarm_node_t *n = sk_node_mode(SMARM_STACK_DENSE);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct smarm__slot a, b;
	uintptr_t la, lb;
	sk_dense_slot(n, &a, SMARM_STACK_DENSE);
	sk_dense_slot(n, &b, SMARM_STACK_DENSE);
	ck_assert_int_eq(smarm__stack_acquire(n, &a), 0);
	ck_assert_int_eq(smarm__stack_acquire(n, &b), 0);
	ck_assert_int_eq(a.stk_mode, SMARM_STACK_DENSE);
	ck_assert_uint_eq(a.stk_guard, 0);
	la = (uintptr_t)a.stk_base;
	lb = (uintptr_t)b.stk_base;
	/* carved in order, back to back; each top 64 bytes below a page
	 * boundary, in the page that holds the next stack's canary */
	ck_assert_uint_eq(lb, la + a.stk_reserve);
	ck_assert_uint_eq((la + a.stk_reserve) % pg, pg - 64);
	ck_assert_uint_eq(la % 16, 0);
	ck_assert_uint_ne(*(uint64_t *)la, 0);
	ck_assert_uint_ne(*(uint64_t *)lb, *(uint64_t *)la);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACKS_DENSE), 2);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACKS_GUARDED), 0);
	/* the whole stack is usable memory */
	((volatile char *)la)[a.stk_reserve - 1] = 1;
	((volatile char *)la)[64] = 1;
	/* a switched-out stack with a sane sp passes the check */
	a.sp = (void *)(la + a.stk_reserve - 80);
	smarm__stack_dense_verify(&a);
	/* freed stacks come back last-in first-out */
	smarm__stack_release(n, &a);
	smarm__stack_release(n, &b);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACKS_DENSE), 0);
	sk_dense_slot(n, &a, SMARM_STACK_DENSE);
	ck_assert_int_eq(smarm__stack_acquire(n, &a), 0);
	ck_assert_uint_eq((uintptr_t)a.stk_base, lb);
	smarm__stack_release(n, &a);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_stack_dense_custom_reserve_is_unmapped)
{
	smarm_node_t *n = sk_node_mode(SMARM_STACK_DENSE);
	struct smarm__slot s;
	void *base;
	sk_slot(&s, 256 * KIB, n->stk_guard);
	s.stk_mode = SMARM_STACK_DENSE;
	ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
	base = s.stk_base;
	ck_assert_uint_eq(s.stk_guard, 0);
	ck_assert(sk_mapped(base, 256 * KIB));
	smarm__stack_release(n, &s);
	ck_assert(!sk_mapped(base, (size_t)sysconf(_SC_PAGESIZE)));
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_stack_dense_smashed_canary_aborts)
{
	smarm_node_t *n = sk_node_mode(SMARM_STACK_DENSE);
	struct smarm__slot s;
	sk_dense_slot(n, &s, SMARM_STACK_DENSE);
	ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
	s.sp = (char *)s.stk_base + s.stk_reserve - 80;
	*(volatile uint64_t *)s.stk_base = 0; /* an overflow wrote here */
	smarm__stack_dense_verify(&s);	      /* aborts */
}
END_TEST

START_TEST(test_stack_dense_sp_below_stack_aborts)
{
	smarm_node_t *n = sk_node_mode(SMARM_STACK_DENSE);
	struct smarm__slot s;
	sk_dense_slot(n, &s, SMARM_STACK_DENSE);
	ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
	s.sp = (char *)s.stk_base - 512; /* canary intact, sp past the end */
	smarm__stack_dense_verify(&s);
}
END_TEST

/*
 * AUTO turns dense over the node's budget of guarded stacks, on both
 * paths (_i 0: carved, where the kernel has guard regions; 1: a mapping
 * each): carved stacks count too (their page tables and pages). A freed
 * guarded stack needs nothing new: AUTO takes it. A custom shape turns
 * dense over the budget as well.
 */
START_TEST(test_stack_auto_turns_dense_over_budget)
{
	smarm_node_t *n = sk_node_mode(SMARM_STACK_AUTO);
	struct smarm__slot a, b, c;
	void *a_base;
	sk_path(n, _i);
	ck_assert_int_gt(harness_stat(n, SMARM_STAT_STACK_GUARD_BUDGET), 1000);
	n->stk_budget = 1; /* as if vm.max_map_count were tiny */
	sk_dense_slot(n, &a, SMARM_STACK_AUTO);
	sk_dense_slot(n, &b, SMARM_STACK_AUTO);
	ck_assert_int_eq(smarm__stack_acquire(n, &a), 0);
	ck_assert_int_eq(smarm__stack_acquire(n, &b), 0);
	ck_assert_int_eq(a.stk_mode, SMARM_STACK_GUARDED);
	ck_assert_uint_eq(a.stk_guard, MIB);
	ck_assert_int_eq(b.stk_mode, SMARM_STACK_DENSE);
	ck_assert_uint_eq(b.stk_guard, 0);
	sk_dense_slot(n, &c, SMARM_STACK_AUTO);
	c.stk_reserve = 128 * KIB;
	ck_assert_int_eq(smarm__stack_acquire(n, &c), 0);
	ck_assert_int_eq(c.stk_mode, SMARM_STACK_DENSE);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACKS_GUARDED), 1);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACKS_DENSE), 2);
	/* the guarded one is carved where the kernel can, else its own */
	ck_assert_uint_eq(n->stk_gd.cv_carved,
			  n->stk_guards != SMARM__GUARDS_NONE ? 1 : 0);
	/* a freed guarded stack needs no new one: AUTO takes it */
	a_base = a.stk_base;
	smarm__stack_release(n, &a);
	sk_dense_slot(n, &a, SMARM_STACK_AUTO);
	ck_assert_int_eq(smarm__stack_acquire(n, &a), 0);
	ck_assert_int_eq(a.stk_mode, SMARM_STACK_GUARDED);
	ck_assert_ptr_eq(a.stk_base, a_base);
	smarm__stack_release(n, &a);
	smarm__stack_release(n, &b);
	smarm__stack_release(n, &c);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_stack_auto_turns_dense_when_mapping_fails)
{
	smarm_node_t *n = sk_node_mode(SMARM_STACK_AUTO);
	struct smarm__slot a;
	sk_dense_slot(n, &a, SMARM_STACK_AUTO);
	a.stk_guard = (size_t)1 << 48; /* no such mapping can be made */
	ck_assert_int_eq(smarm__stack_acquire(n, &a), 0);
	ck_assert_int_eq(a.stk_mode, SMARM_STACK_DENSE);
	ck_assert_uint_eq(a.stk_guard, 0);
	smarm__stack_release(n, &a);
	/* explicitly guarded, the same failure is the actor's ENOMEM */
	sk_dense_slot(n, &a, SMARM_STACK_GUARDED);
	a.stk_guard = (size_t)1 << 48;
	ck_assert_int_eq(smarm__stack_acquire(n, &a), SMARM_ENOMEM);
	ck_assert_ptr_null(a.stk_base);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_stack_explicit_guarded_ignores_budget)
{
	smarm_node_t *n = sk_node_mode(SMARM_STACK_GUARDED);
	struct smarm__slot a;
	sk_path(n, _i);
	n->stk_budget = 0;
	sk_dense_slot(n, &a, SMARM_STACK_GUARDED);
	ck_assert_int_eq(smarm__stack_acquire(n, &a), 0);
	ck_assert_int_eq(a.stk_mode, SMARM_STACK_GUARDED);
	smarm__stack_release(n, &a);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/* ------------------------------------------------------- recycle zap */

static uintptr_t rz_usable;
static size_t rz_reserve;
static int rz_resident_low = -1, rz_resident_top = -1;
static bool rz_still_mapped, rz_guard_reads = true;

/* Resident pages in [p, p+len) per mincore, or -1. */
static int sk_resident(uintptr_t p, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t npg = len / pg;
	unsigned char *vec = malloc(npg);
	int count = 0;
	if (vec == NULL || mincore((void *)p, len, vec) != 0) {
		free(vec);
		return -1;
	}
	for (size_t i = 0; i < npg; i++)
		count += vec[i] & 1;
	free(vec);
	return count;
}

/*
 * A chunk keeps no page of its own resident: its list links live off it
 * (stack.c, struct smarm__chunk). A page of links on top of each chunk
 * of 15 guarded stacks cost 264 B per parked actor.
 */
START_TEST(test_stack_carved_chunk_holds_no_page_of_its_own)
{
	smarm_node_t *n = sk_node(0, 0);
	struct smarm__slot s;
	uintptr_t chunk, usable;
	if (!sk_carving(n)) {
		ck_assert_int_eq(smarm_node_close(n), 0);
		return;
	}
	sk_slot(&s, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
	ck_assert_uint_eq(n->stk_gd.cv_carved, 1); /* a fresh chunk's first */
	chunk = (uintptr_t)s.stk_base; /* stack 0's guard is lowest */
	usable = chunk + s.stk_guard;
	/* whatever is resident in the chunk is the one stack's */
	ck_assert_int_eq(sk_resident(chunk, n->stk_gd.cv_len),
			 sk_resident(usable, s.stk_reserve));
	smarm__stack_release(n, &s);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

static void rz_dirty(void *arg)
{
	struct smarm__slot *me = smarm__current();
	(void)arg;
	rz_usable = (uintptr_t)me->stk_base + me->stk_guard;
	rz_reserve = me->stk_reserve;
	memset((void *)rz_usable, 0x5a, 3 * MIB); /* below our live frames */
}

static void rz_root(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, rz_dirty, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
	rz_resident_low = sk_resident(rz_usable, rz_reserve - 64 * KIB);
	rz_resident_top =
		sk_resident(rz_usable + rz_reserve - 64 * KIB, 64 * KIB);
	rz_still_mapped = sk_mapped((void *)rz_usable, rz_reserve);
	rz_guard_reads = probe_readable((void *)(rz_usable - 1));
}

START_TEST(test_stack_recycle_zaps_below_retained_top)
{
	smarm_node_t *n = sk_node(4 * MIB, 0);
	sk_path(n, _i);
	ck_assert_int_eq(smarm_node_run(n, rz_root, NULL, NULL, NULL), 0);
	ck_assert_uint_eq(rz_reserve, 4 * MIB);
	ck_assert_int_eq(rz_resident_low, 0);
	ck_assert_int_gt(rz_resident_top, 0); /* the entry frames stay */
	ck_assert(rz_still_mapped);	      /* pooled, not unmapped */
	ck_assert(!rz_guard_reads);	      /* the zap left the guard */
	ck_assert_int_ge(harness_stat(n, SMARM_STAT_STACK_POOL), 1);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/* ----------------------------------------------------- park-path shrink */

static uintptr_t sh_lo, sh_hi;
static int sh_intact = -1;
static int64_t sh_shrinks = -1, sh_parks = -1, sh_hwm = -1, sh_hwm_spike;
static long sh_lazy_kib = -1;

/* LazyFree (KiB) of the smaps entry that contains addr, or -1. */
static long sk_lazyfree_kib(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long kib = -1;
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		unsigned long a, b;
		char *sp = strchr(line, ' ');
		/* a header line ("lo-hi perms ..."), not a "Field: value" */
		if (sp != NULL && sp[-1] != ':' &&
		    sscanf(line, "%lx-%lx ", &a, &b) == 2) {
			in = addr >= a && addr < b;
			continue;
		}
		if (in && sscanf(line, "LazyFree: %ld kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib;
}

static __attribute__((noinline)) long sh_spike(int depth)
{
	volatile char buf[1024];
	memset((char *)buf, depth & 0x7f, sizeof buf);
	if (depth == 0) {
		smarm_actor_sleep(US(100)); /* a park at depth: sampled */
		return buf[0];
	}
	return sh_spike(depth - 1) + buf[depth % sizeof buf];
}

struct sh_chans {
	smarm_chan_t *ctl;   /* root -> child: 1 = park again, 0 = quit */
	smarm_chan_t *ready; /* child -> root: spiked, about to park */
};

static void sh_child(void *arg)
{
	struct sh_chans *c = arg;
	struct smarm__slot *me = smarm__current();
	volatile char live[64];
	int v = 1;
	bool deep = me->stk_reserve > MIB;
	sh_lo = (uintptr_t)me->stk_base + me->stk_guard;
	sh_hi = sh_lo + me->stk_reserve;
	memset((char *)live, 0x3c, sizeof live);
	if (deep)
		sh_spike(3 * 1024); /* ~3 MiB */
	smarm_actor_get_stack(smarm_actor_self(),
			      SMARM_STACK_INFO_DEPTH_HIGH_WATER, &sh_hwm_spike);
	smarm_chan_send(c->ready, &v);
	while (smarm_chan_recv(c->ctl, &v) == 0 && v != 0)
		;
	sh_intact = 1;
	for (size_t i = 0; i < sizeof live; i++)
		if (live[i] != 0x3c)
			sh_intact = 0;
}

static void sh_root(void *arg)
{
	smarm_spawn_opts_t *o = NULL;
	struct sh_chans c;
	smarm_pid_t p;
	int one = 1;
	int zero = 0;
	smarm_chan_alloc(&c.ctl, sizeof(int), NULL);
	smarm_chan_alloc(&c.ready, sizeof(int), NULL);
	smarm_spawn_opts_alloc(&o);
	if (arg != NULL)
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, 8 * MIB);
	smarm_actor_spawn(&p, sh_child, &c, o);
	smarm_spawn_opts_free(o);
	/*
	 * One worker: once the root runs again after `ready`, the child is
	 * parked in recv; and each send + yield is exactly one more park.
	 */
	smarm_chan_recv(c.ready, &one);
	for (unsigned i = 0; i < SMARM__SHRINK_COOLDOWN + 8; i++) {
		smarm_chan_send(c.ctl, &one);
		smarm_actor_yield();
	}
	sh_lazy_kib = sk_lazyfree_kib(sh_lo + 4096);
	smarm_actor_get_stack(p, SMARM_STACK_INFO_SHRINKS, &sh_shrinks);
	smarm_actor_get_stack(p, SMARM_STACK_INFO_PARKS_SINCE_SHRINK,
			      &sh_parks);
	smarm_actor_get_stack(p, SMARM_STACK_INFO_DEPTH_HIGH_WATER, &sh_hwm);
	smarm_chan_send(c.ctl, &zero);
	smarm_actor_join(p, NULL, NULL);
	harness_chan_drop(c.ctl);
	harness_chan_drop(c.ready);
}

START_TEST(test_stack_shrink_after_spike_frees_lazily)
{
	smarm_node_t *n = sk_node(0, 0);
	static int deep = 1;
	ck_assert_int_eq(smarm_node_run(n, sh_root, &deep, NULL, NULL), 0);
	ck_assert_int_ge(sh_hwm_spike, 3 * MIB);
	ck_assert_int_ge(sh_shrinks, 1);
	ck_assert_int_lt(sh_parks, SMARM__SHRINK_COOLDOWN);
	ck_assert_int_lt(sh_hwm, 256 * KIB); /* reset below the spike */
	ck_assert_int_ge(sh_lazy_kib, 2 * 1024);
	ck_assert_int_eq(sh_intact, 1);
	ck_assert_int_ge(harness_stat(n, SMARM_STAT_STACK_SHRINKS), 1);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_stack_shallow_actor_never_shrinks)
{
	smarm_node_t *n = sk_node(0, 0);
	ck_assert_int_eq(smarm_node_run(n, sh_root, NULL, NULL, NULL), 0);
	ck_assert_int_eq(sh_shrinks, 0);
	ck_assert_int_ge(sh_parks, SMARM__SHRINK_COOLDOWN + 8);
	ck_assert_int_eq(sh_lazy_kib, 0);
	ck_assert_int_eq(sh_intact, 1);
	ck_assert_int_eq(harness_stat(n, SMARM_STAT_STACK_SHRINKS), 0);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

Suite *smarm_test_stack_suite(void)
{
	Suite *s = suite_create("stack");
	TCase *tc = tcase_create("geometry");
	tcase_add_loop_test(tc, test_stack_acquire_maps_guard_and_reserve, 0,
			    2);
	tcase_add_test(tc, test_stack_sizes_round_up_to_pages);
	tcase_add_test(tc, test_stack_small_and_large_stacks_allocate);
	tcase_add_loop_test(
		tc, test_stack_actor_writes_inside_usable_region_survive, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("pool");
	tcase_add_test(tc, test_stack_pool_keeps_default_shape_lifo);
	tcase_add_test(tc, test_stack_custom_shape_unmapped_not_pooled);
	tcase_add_test(tc, test_stack_pool_full_unmaps_extra);
	suite_add_tcase(s, tc);

	tc = tcase_create("guard regions");
	tcase_add_test(tc, test_stack_guards_probe_matches_kernel);
	tcase_add_loop_test(tc, test_stack_guards_install_every_other_page, 0,
			    2);
	suite_add_tcase(s, tc);

	tc = tcase_create("carved");
	tcase_add_test(tc, test_stack_node_takes_probe);
	tcase_add_test(tc, test_stack_probe_env_forces_own_mappings);
	tcase_add_loop_test(tc, test_stack_carved_chunk_geometry, 0, 2);
	tcase_add_test(tc, test_stack_carved_chunk_holds_no_page_of_its_own);
	tcase_add_test(tc, test_stack_carved_free_list_lifo);
	tcase_add_test(tc, test_stack_carved_pool_cap_unmaps_nothing);
	tcase_add_loop_test(tc, test_stack_close_unmaps_every_chunk, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("guard");
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test_raise_signal(
		tc, test_stack_write_below_usable_base_segfaults, SIGSEGV, 0,
		2);
	tcase_add_loop_test_raise_signal(
		tc, test_stack_write_at_guard_bottom_segfaults, SIGSEGV, 0, 2);
	tcase_add_loop_test_raise_signal(
		tc, test_stack_write_at_guard_top_segfaults, SIGSEGV, 0, 2);
	tcase_add_loop_test_raise_signal(
		tc, test_stack_write_in_second_stacks_guard_segfaults, SIGSEGV,
		0, 2);
	tcase_add_loop_test_raise_signal(
		tc, test_stack_actor_write_one_below_usable_segfaults, SIGSEGV,
		0, 2);
	tcase_add_loop_test_raise_signal(
		tc, test_stack_actor_recursion_off_the_end_segfaults, SIGSEGV,
		0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("ranges");
	tcase_add_test(tc, test_stack_retain_range_edges);
	tcase_add_test(tc, test_stack_shrink_range_edges);
	tcase_add_test(tc, test_stack_classify_edges);
	suite_add_tcase(s, tc);

	tc = tcase_create("dense");
	tcase_add_test(tc, test_stack_dense_stacks_share_pages_with_neighbours);
	tcase_add_test(tc, test_stack_dense_custom_reserve_is_unmapped);
	tcase_add_test_raise_signal(tc, test_stack_dense_smashed_canary_aborts,
				    SIGABRT);
	tcase_add_test_raise_signal(tc, test_stack_dense_sp_below_stack_aborts,
				    SIGABRT);
	tcase_add_loop_test(tc, test_stack_auto_turns_dense_over_budget, 0, 2);
	tcase_add_test(tc, test_stack_auto_turns_dense_when_mapping_fails);
	tcase_add_loop_test(tc, test_stack_explicit_guarded_ignores_budget, 0,
			    2);
	suite_add_tcase(s, tc);

	tc = tcase_create("recycle");
	tcase_add_loop_test(tc, test_stack_recycle_zaps_below_retained_top, 0,
			    2);
	suite_add_tcase(s, tc);

	tc = tcase_create("shrink");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_stack_shrink_after_spike_frees_lazily);
	tcase_add_test(tc, test_stack_shallow_actor_never_shrinks);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(stack)
