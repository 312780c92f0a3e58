/* SPDX-License-Identifier: MIT */
/*
 * test_ring.c - the one ring buffer (core/ring.h): FIFO and deque order
 * across the wrap, batch pushes at the front, growth that keeps order
 * from any head position, the capacity limit, and a lent fixed buffer.
 */
#include "harness.h"

#include "core/ring.h"

#define U64 sizeof(uint64_t)

static void push(struct smarm__ring *r, uint64_t v)
{
	*(uint64_t *)smarm__ring_push_back(r, U64) = v;
}

static uint64_t pop(struct smarm__ring *r)
{
	return *(uint64_t *)smarm__ring_pop_front(r, U64);
}

START_TEST(test_ring_fifo_order_across_the_wrap)
{
	uint64_t buf[8];
	struct smarm__ring r;
	uint64_t next = 0, want = 0;
	smarm__ring_init_fixed(&r, buf, 8);
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 5; i++)
			push(&r, next++);
		ck_assert_uint_eq(smarm__ring_len(&r), 5);
		for (int i = 0; i < 5; i++)
			ck_assert_uint_eq(pop(&r), want++);
		ck_assert_uint_eq(smarm__ring_len(&r), 0);
	}
	ck_assert_uint_lt(r.rg_head, 8); /* the head wrapped many times */
}
END_TEST

START_TEST(test_ring_front_batch_keeps_its_order_ahead_of_older)
{
	uint64_t buf[8];
	uint64_t batch[3] = { 10, 11, 12 };
	struct smarm__ring r;
	smarm__ring_init_fixed(&r, buf, 8);
	push(&r, 1);
	push(&r, 2);
	smarm__ring_push_front_n(&r, U64, batch, 3); /* head wraps below 0 */
	ck_assert_uint_eq(smarm__ring_len(&r), 5);
	ck_assert_uint_eq(*(uint64_t *)smarm__ring_at(&r, U64, 0), 10);
	ck_assert_uint_eq(pop(&r), 10);
	ck_assert_uint_eq(pop(&r), 11);
	ck_assert_uint_eq(pop(&r), 12);
	/* the back end, as a thief takes it */
	ck_assert_uint_eq(*(uint64_t *)smarm__ring_pop_back(&r, U64), 2);
	ck_assert_uint_eq(pop(&r), 1);
	ck_assert_uint_eq(smarm__ring_len(&r), 0);
}
END_TEST

START_TEST(test_ring_grow_keeps_order_from_a_wrapped_head)
{
	struct smarm__ring r = { 0 };
	uint64_t want = 0, next = 0;
	ck_assert_int_eq(smarm__ring_grow(&r, U64, 1, 4), 0);
	ck_assert_uint_eq(r.rg_cap, 4);
	/* wrap the head, then grow while full */
	for (int i = 0; i < 3; i++)
		push(&r, next++);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(pop(&r), want++);
	for (int i = 0; i < 4; i++)
		push(&r, next++);
	ck_assert_uint_eq(r.rg_head, 3);
	for (uint32_t n = 4; n < 100; n++) {
		if (smarm__ring_len(&r) == r.rg_cap)
			ck_assert_int_eq(smarm__ring_grow(&r, U64, n + 1, 4),
					 0);
		push(&r, next++);
	}
	ck_assert_uint_eq(r.rg_cap, 128); /* doubled from 4 */
	while (smarm__ring_len(&r) > 0)
		ck_assert_uint_eq(pop(&r), want++);
	ck_assert_uint_eq(want, next);
	smarm__ring_fini(&r);
	ck_assert_ptr_null(r.rg_buf);
	ck_assert_uint_eq(r.rg_cap, 0);
}
END_TEST

START_TEST(test_ring_odd_element_size_and_in_place_compaction)
{
	struct smarm__ring r = { 0 };
	char e[24];
	uint32_t out = 0;
	ck_assert_int_eq(smarm__ring_grow(&r, sizeof e, 6, 8), 0);
	for (int i = 0; i < 6; i++) {
		memset(e, 'a' + i, sizeof e);
		memcpy(smarm__ring_push_back(&r, sizeof e), e, sizeof e);
	}
	/* drop the odd ones, keeping order (mutex.c's queue removal) */
	for (uint32_t i = 0; i < 6; i++) {
		char *p = smarm__ring_at(&r, sizeof e, i);
		if ((p[0] - 'a') % 2)
			continue;
		memmove(smarm__ring_at(&r, sizeof e, out++), p, sizeof e);
	}
	smarm__ring_set_len(&r, out);
	ck_assert_uint_eq(smarm__ring_len(&r), 3);
	ck_assert_int_eq(*(char *)smarm__ring_pop_front(&r, sizeof e), 'a');
	ck_assert_int_eq(*(char *)smarm__ring_pop_front(&r, sizeof e), 'c');
	ck_assert_int_eq(*(char *)smarm__ring_pop_front(&r, sizeof e), 'e');
	smarm__ring_fini(&r);
}
END_TEST

START_TEST(test_ring_capacity_limit_fails_unchanged)
{
	struct smarm__ring r = { 0 };
	ck_assert_uint_eq(smarm__ring_cap_for(5, 4), 8);
	ck_assert_uint_eq(smarm__ring_cap_for(8, 4), 8);
	ck_assert_uint_eq(smarm__ring_cap_for(1, 16), 16);
	ck_assert_uint_eq(smarm__ring_cap_for(UINT32_C(1) << 31, 1),
			  UINT32_C(1) << 31);
	ck_assert_uint_eq(smarm__ring_cap_for((UINT32_C(1) << 31) + 1, 1), 0);
	ck_assert_int_eq(smarm__ring_grow(&r, U64, 2, 2), 0);
	push(&r, 7);
	ck_assert_int_eq(smarm__ring_grow(&r, U64, UINT32_MAX, 2),
			 SMARM_ENOMEM);
	ck_assert_uint_eq(r.rg_cap, 2); /* unchanged */
	ck_assert_uint_eq(pop(&r), 7);
	smarm__ring_fini(&r);
}
END_TEST

START_TEST(test_ring_move_hands_back_the_old_buffer)
{
	uint64_t a[4], b[8];
	struct smarm__ring r;
	smarm__ring_init_fixed(&r, a, 4);
	for (int i = 0; i < 3; i++)
		push(&r, (uint64_t)i);
	(void)pop(&r);
	push(&r, 3);
	push(&r, 4); /* wrapped: 1 2 3 4 */
	ck_assert_ptr_eq(smarm__ring_move(&r, U64, b, 8), a);
	ck_assert_uint_eq(r.rg_head, 0);
	for (uint64_t i = 1; i <= 4; i++)
		ck_assert_uint_eq(b[i - 1], i);
	ck_assert_uint_eq(smarm__ring_len(&r), 4);
}
END_TEST

Suite *smarm_test_ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("ring");
	tcase_add_test(tc, test_ring_fifo_order_across_the_wrap);
	tcase_add_test(tc,
		       test_ring_front_batch_keeps_its_order_ahead_of_older);
	tcase_add_test(tc, test_ring_grow_keeps_order_from_a_wrapped_head);
	tcase_add_test(tc, test_ring_odd_element_size_and_in_place_compaction);
	tcase_add_test(tc, test_ring_capacity_limit_fails_unchanged);
	tcase_add_test(tc, test_ring_move_hands_back_the_old_buffer);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(ring)
