/* SPDX-License-Identifier: MIT */
/*
 * test_stack.c - actor stacks: geometry of a mapping (guard below the
 * usable reserve), page rounding, the default-shape pool, and, in Check's
 * forked children, death by SIGSEGV for writes into the guard, both from
 * the raw mapping and from a running actor.
 */
#include "harness.h"

#include "core/core.h"

#include <signal.h>
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

START_TEST(test_stack_pool_keeps_default_shape_lifo)
{
	smarm_node_t *n = sk_node(0, 0);
	struct smarm__slot a, b, c;
	void *base_a, *base_b;
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
	smarm_config_t *cfg = NULL;
	smarm_node_t *n = NULL;
	struct smarm__slot s[3];
	void *last;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_POOL_CAP, 2),
			 0);
	ck_assert_int_eq(smarm_node_open(&n, cfg), 0);
	smarm_config_free(cfg);
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
	sk_slot(&s, n->stk_reserve, n->stk_guard);
	ck_assert_int_eq(smarm__stack_acquire(n, &s), 0);
	sk_target = (char *)s.stk_base + 64 * KIB - 1;
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
	smarm_node_run(n, sk_actor_walk_off, NULL, NULL, NULL);
}
END_TEST

Suite *smarm_test_stack_suite(void)
{
	Suite *s = suite_create("stack");
	TCase *tc = tcase_create("geometry");
	tcase_add_test(tc, test_stack_acquire_maps_guard_and_reserve);
	tcase_add_test(tc, test_stack_sizes_round_up_to_pages);
	tcase_add_test(tc, test_stack_small_and_large_stacks_allocate);
	tcase_add_test(tc,
		       test_stack_actor_writes_inside_usable_region_survive);
	suite_add_tcase(s, tc);

	tc = tcase_create("pool");
	tcase_add_test(tc, test_stack_pool_keeps_default_shape_lifo);
	tcase_add_test(tc, test_stack_custom_shape_unmapped_not_pooled);
	tcase_add_test(tc, test_stack_pool_full_unmaps_extra);
	suite_add_tcase(s, tc);

	tc = tcase_create("guard");
	tcase_set_timeout(tc, 20);
	tcase_add_test_raise_signal(
		tc, test_stack_write_below_usable_base_segfaults, SIGSEGV);
	tcase_add_test_raise_signal(
		tc, test_stack_write_at_guard_bottom_segfaults, SIGSEGV);
	tcase_add_test_raise_signal(tc, test_stack_write_at_guard_top_segfaults,
				    SIGSEGV);
	tcase_add_test_raise_signal(
		tc, test_stack_actor_write_one_below_usable_segfaults, SIGSEGV);
	tcase_add_test_raise_signal(
		tc, test_stack_actor_recursion_off_the_end_segfaults, SIGSEGV);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(stack)
