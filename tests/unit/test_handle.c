/* SPDX-License-Identifier: MIT */
/*
 * test_handle.c - the type-stable cell pools behind generation-checked
 * handles (core/handle.h): decode of live, freed and foreign values,
 * oldest-freed-first reuse, the 65535-reuse generation window, growth
 * past one commit step, and region exhaustion.
 */
#include "harness.h"

#include "core/handle.h"

struct obj {
	struct smarm__hcell hdr;
	uint64_t payload;
};

/* Take a cell and publish it, as an object's alloc does. */
static uint64_t take(struct smarm__hpool *p, struct obj **o)
{
	void *cell = NULL;
	uint64_t h = 0;
	ck_assert_int_eq(smarm__hpool_alloc(p, &cell, &h), 0);
	smarm__handle_publish(cell, h);
	*o = cell;
	return h;
}

static void drop(struct smarm__hpool *p, struct obj *o)
{
	smarm__handle_retire(o);
	smarm__hpool_free(p, o);
}

static int decode(struct smarm__hpool *p, uint64_t h, struct obj **o)
{
	void *c = NULL;
	int rc = smarm__handle_decode(p, (void *)(uintptr_t)h, &c);
	*o = c;
	return rc;
}

START_TEST(test_handle_decode_live_freed_and_foreign)
{
	static struct smarm__hpool p =
		SMARM__HPOOL_INIT(sizeof(struct obj), (size_t)1 << 20);
	static struct smarm__hpool q =
		SMARM__HPOOL_INIT(sizeof(struct obj), (size_t)1 << 20);
	struct obj *o, *got, *other;
	uint64_t h, hq;
	uint64_t local = 0;

	/* Before any alloc the pool has no region: nothing decodes. */
	ck_assert_int_eq(decode(&p, 0, &got), SMARM_EINVAL);
	h = take(&p, &o);
	ck_assert_uint_ne(h >> SMARM__HANDLE_GEN_SHIFT, 0); /* gen never 0 */
	ck_assert_uint_eq(h & SMARM__HANDLE_ADDR_MASK, (uintptr_t)o);
	ck_assert_int_eq(decode(&p, h, &got), 0);
	ck_assert_ptr_eq(got, o);
	/* NULL, the bare address, a misaligned one, one off the region. */
	ck_assert_int_eq(decode(&p, 0, &got), SMARM_EINVAL);
	ck_assert_int_eq(decode(&p, (uintptr_t)o, &got), SMARM_ESTATE);
	ck_assert_int_eq(decode(&p, h + 8, &got), SMARM_EINVAL);
	ck_assert_int_eq(decode(&p, (uintptr_t)&local, &got), SMARM_EINVAL);
	/* Another pool's handle is no handle of this one. */
	hq = take(&q, &other);
	ck_assert_int_eq(decode(&p, hq, &got), SMARM_EINVAL);
	ck_assert_int_eq(decode(&q, h, &got), SMARM_EINVAL);
	/* Freed: the cell stays readable and the handle is refused. */
	drop(&p, o);
	ck_assert_int_eq(decode(&p, h, &got), SMARM_ESTATE);
	ck_assert_uint_eq(smarm__hpool_live(&p), 0);
	ck_assert_uint_eq(smarm__hpool_live(&q), 1);
	drop(&q, other);
}
END_TEST

START_TEST(test_handle_reuse_is_oldest_freed_first)
{
	static struct smarm__hpool p =
		SMARM__HPOOL_INIT(sizeof(struct obj), (size_t)1 << 20);
	struct obj *a, *b, *c, *x, *y, *z;
	uint64_t ha, hb, hx;
	ha = take(&p, &a);
	hb = take(&p, &b);
	take(&p, &c);
	drop(&p, b);
	drop(&p, a);
	drop(&p, c);
	/* b was freed first, then a, then c. */
	hx = take(&p, &x);
	take(&p, &y);
	take(&p, &z);
	ck_assert_ptr_eq(x, b);
	ck_assert_ptr_eq(y, a);
	ck_assert_ptr_eq(z, c);
	ck_assert_uint_ne(hx, hb); /* same cell, next generation */
	ck_assert_int_eq(decode(&p, hb, &x), SMARM_ESTATE);
	ck_assert_int_eq(decode(&p, ha, &x), SMARM_ESTATE);
	drop(&p, a);
	drop(&p, b);
	drop(&p, c);
}
END_TEST

START_TEST(test_handle_generation_wraps_after_65535_reuses)
{
	static struct smarm__hpool p =
		SMARM__HPOOL_INIT(sizeof(struct obj), (size_t)1 << 20);
	struct obj *o, *got;
	uint64_t first = take(&p, &o);
	uint64_t h = first;
	for (int i = 1; i < 65535; i++) {
		drop(&p, o);
		h = take(&p, &o); /* the only free cell: the same one */
		ck_assert_uint_ne(h, first);
		ck_assert_uint_ne(h >> SMARM__HANDLE_GEN_SHIFT, 0);
	}
	ck_assert_int_eq(decode(&p, first, &got), SMARM_ESTATE);
	/* The 65535th reuse brings the first generation back: the limit. */
	drop(&p, o);
	h = take(&p, &o);
	ck_assert_uint_eq(h, first);
	drop(&p, o);
}
END_TEST

START_TEST(test_handle_grows_and_reports_a_full_region)
{
	/* 128 KiB of 64-byte cells: two commit steps, 2048 cells. */
	static struct smarm__hpool p =
		SMARM__HPOOL_INIT(sizeof(struct obj), (size_t)128 << 10);
	static struct obj *objs[2048];
	static uint64_t hs[2048];
	void *cell = NULL;
	uint64_t h = 0;
	ck_assert_uint_eq(p.hp_cell, 64);
	for (int i = 0; i < 2048; i++) {
		hs[i] = take(&p, &objs[i]);
		objs[i]->payload = (uint64_t)i;
	}
	ck_assert_int_eq(smarm__hpool_alloc(&p, &cell, &h), SMARM_ENOMEM);
	for (int i = 0; i < 2048; i++) {
		struct obj *got;
		ck_assert_int_eq(decode(&p, hs[i], &got), 0);
		ck_assert_uint_eq(got->payload, (uint64_t)i);
	}
	/* One back, one more out: the FIFO serves a full region. */
	drop(&p, objs[7]);
	ck_assert_int_eq(smarm__hpool_alloc(&p, &cell, &h), 0);
	ck_assert_ptr_eq(cell, objs[7]);
	smarm__handle_publish(cell, h);
	for (int i = 0; i < 2048; i++)
		drop(&p, objs[i]);
	ck_assert_uint_eq(smarm__hpool_live(&p), 0);
}
END_TEST

Suite *smarm_test_handle_suite(void)
{
	Suite *s = suite_create("handle");
	TCase *tc = tcase_create("pool");
	tcase_add_test(tc, test_handle_decode_live_freed_and_foreign);
	tcase_add_test(tc, test_handle_reuse_is_oldest_freed_first);
	tcase_add_test(tc, test_handle_generation_wraps_after_65535_reuses);
	tcase_add_test(tc, test_handle_grows_and_reports_a_full_region);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(handle)
