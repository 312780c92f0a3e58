/* SPDX-License-Identifier: MIT */
/*
 * test_ring.c - the one ring buffer (core/ring.h): FIFO and deque order
 * across the wrap, an empty ring rewound to its first entry (sched.c
 * rewinds the run queue at a run's start), batch pushes at the front, growth
 * that keeps order from any head position, the capacity limit, a lent fixed
 * buffer, and removal from the middle and the scan for a value (sched.c,
 * Expedite); and the chunked queue: FIFO order across segments with pushes at
 * both ends, elements that never move while queued (QUEUE-4), segments of
 * bounded size, in-place compaction by two walks, reuse once empty, and
 * a thread's cache of free segments up to its cap (QUEUE-6), and the
 * chains of discarded queues it keeps unread until tidied (QUEUE-7).
 * And the tracer's rings (core/trace.h): a producer past half a ring
 * wakes the writer once until it takes the kick, a full ring drops and
 * counts, and the consumer's take makes room.
 */
#include "harness.h"

#include "core/node.h"
#include "core/ring.h"
#include "core/trace.h"

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

START_TEST(test_ring_rewind_restarts_an_empty_ring_at_its_first_entry)
{
	uint64_t buf[8];
	struct smarm__ring r;
	smarm__ring_init_fixed(&r, buf, 8);
	for (uint64_t i = 0; i < 3; i++)
		push(&r, i);
	(void)pop(&r);
	smarm__ring_rewind(&r); /* not empty: nothing moves */
	ck_assert_uint_eq(r.rg_head, 1);
	ck_assert_uint_eq(pop(&r), 1);
	ck_assert_uint_eq(pop(&r), 2);
	ck_assert_uint_eq(r.rg_head, 3);
	smarm__ring_rewind(&r); /* empty: back to the first entry */
	ck_assert_uint_eq(r.rg_head, 0);
	push(&r, 7);
	ck_assert_ptr_eq(smarm__ring_at(&r, U64, 0), &buf[0]);
	ck_assert_uint_eq(pop(&r), 7);
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

/* Walk q from the front, checking it holds lo, lo+1, ..., hi-1 (plain
 * compares in the loop: Check's asserts are slow under ASan). */
static void queue_holds(const struct smarm__queue *q, uint64_t lo, uint64_t hi)
{
	struct smarm__qcur c = smarm__queue_begin(q);
	uint64_t *e;
	uint64_t want = lo;
	size_t wrong = 0;
	while ((e = smarm__queue_next(&c, U64)) != NULL)
		wrong += *e != want++;
	ck_assert_uint_eq(wrong, 0);
	ck_assert_uint_eq(want, hi);
	ck_assert_uint_eq(smarm__queue_len(q), hi - lo);
}

START_TEST(test_queue_fifo_across_segments_and_both_ends)
{
	struct smarm__queue q;
	uint64_t *e;
	smarm__queue_init(&q);
	for (uint64_t i = 100; i < 1000; i++)
		*(uint64_t *)smarm__queue_push_back(&q, U64, 4) = i;
	/* the front batch goes ahead, newest first (chan.c's requeue) */
	for (uint64_t i = 100; i-- > 0;)
		*(uint64_t *)smarm__queue_push_front(&q, U64, 4) = i;
	queue_holds(&q, 0, 1000);
	for (uint64_t i = 0; i < 1000; i++) {
		e = smarm__queue_front(&q, U64);
		ck_assert_uint_eq(*e, i);
		smarm__queue_drop_front(&q);
	}
	ck_assert_uint_eq(smarm__queue_len(&q), 0);
	/* empty: one segment stays, reused from its start (QUEUE-2) */
	ck_assert_ptr_eq(q.qu_head, q.qu_tail);
	ck_assert_uint_eq(q.qu_head->sg_lo, 0);
	ck_assert_uint_eq(q.qu_head->sg_hi, 0);
	*(uint64_t *)smarm__queue_push_front(&q, U64, 4) = 7;
	ck_assert_uint_eq(*(uint64_t *)smarm__queue_front(&q, U64), 7);
	smarm__queue_fini(&q);
	ck_assert_ptr_null(q.qu_head);
	ck_assert_uint_eq(smarm__queue_len(&q), 0);
}
END_TEST

/*
 * QUEUE-4: filling a queue to 2^20 elements moves none of them (a
 * doubling array moves the whole backlog at each growth), and no segment
 * is bigger than SMARM__QSEG_BYTES.
 */
START_TEST(test_queue_growth_moves_no_element)
{
	enum { N = 1 << 20, SAMPLE = 4099 };
	static uint64_t *where[N / SAMPLE + 1];
	struct smarm__queue q;
	size_t segs = 0;
	size_t wrong = 0; /* pushes after which the front had moved */
	smarm__queue_init(&q);
	for (uint64_t i = 0; i < N; i++) {
		uint64_t *e = smarm__queue_push_back(&q, U64, 16);
		if (e == NULL)
			ck_abort_msg("push %llu: out of memory",
				     (unsigned long long)i);
		*e = i;
		if (i % SAMPLE == 0)
			where[i / SAMPLE] = e;
		wrong += smarm__queue_front(&q, U64) != where[0];
	}
	ck_assert_uint_eq(wrong, 0);
	for (uint64_t i = 0; i < N; i += SAMPLE)
		ck_assert_uint_eq(*where[i / SAMPLE], i);
	for (struct smarm__qseg *s = q.qu_head; s != NULL; s = s->sg_next) {
		ck_assert_uint_le((size_t)s->sg_cap * U64, SMARM__QSEG_BYTES);
		segs++;
	}
	ck_assert_uint_ge(segs, (size_t)N * U64 / SMARM__QSEG_BYTES);
	queue_holds(&q, 0, N);
	smarm__queue_fini(&q);
}
END_TEST

START_TEST(test_queue_big_elements_one_per_segment)
{
	enum { BIG = 100000 };
	static char e[BIG];
	struct smarm__queue q;
	smarm__queue_init(&q);
	for (int i = 0; i < 3; i++) {
		char *p = smarm__queue_push_back(&q, BIG, 16);
		memset(p, 'a' + i, BIG);
	}
	ck_assert_uint_eq(q.qu_head->sg_cap, 1);
	for (int i = 0; i < 3; i++) {
		memcpy(e, smarm__queue_front(&q, BIG), BIG);
		ck_assert_int_eq(e[0], 'a' + i);
		ck_assert_int_eq(e[BIG - 1], 'a' + i);
		smarm__queue_drop_front(&q);
	}
	smarm__queue_fini(&q);
}
END_TEST

/* A queue of n U64 elements (first segment 16); its segments in segs. */
static int queue_fill(struct smarm__queue *q, uint64_t n,
		      struct smarm__qseg **segs, int max)
{
	int k = 0;
	smarm__queue_init(q);
	for (uint64_t i = 0; i < n; i++)
		*(uint64_t *)smarm__queue_push_back(q, U64, 16) = i;
	for (struct smarm__qseg *s = q->qu_head; s != NULL; s = s->sg_next) {
		size_t bytes = SMARM__QSEG_MIN << s->sg_class;
		ck_assert_uint_lt(s->sg_class, SMARM__QSEG_CLASSES);
		ck_assert_uint_le(bytes, SMARM__QSEG_BYTES);
		ck_assert_uint_le(offsetof(struct smarm__qseg, sg_data) +
					  s->sg_cap * U64,
				  bytes);
		if (k < max)
			segs[k] = s;
		k++;
	}
	return k;
}

/*
 * QUEUE-6: with a cache lent to the thread, a dead queue's segments go
 * there and the next queue takes the same ones back; past the cap they
 * go to malloc; a flush empties it. With none, nothing is kept.
 */
START_TEST(test_queue_segments_cached_up_to_the_cap)
{
	struct smarm__qseg_cache c;
	struct smarm__qseg *a[32], *b[32];
	struct smarm__queue q;
	size_t sum = 0;
	int n, m;
	memset(&c, 0, sizeof c);
	smarm__qseg_cache_use(&c);
	n = queue_fill(&q, 5000, a, 32);
	ck_assert_int_le(n, 32);
	for (int i = 0; i < n; i++)
		sum += SMARM__QSEG_MIN << a[i]->sg_class;
	queue_holds(&q, 0, 5000);
	smarm__queue_fini(&q);
	ck_assert_uint_eq(c.qc_bytes, sum);
	m = queue_fill(&q, 5000, b, 32);
	ck_assert_int_eq(m, n);
	for (int i = 0; i < n; i++)
		ck_assert_ptr_eq(b[i], a[i]); /* its class's last one in */
	ck_assert_uint_eq(c.qc_bytes, 0);
	queue_holds(&q, 0, 5000);
	smarm__queue_fini(&q);
	/* 8 MiB of elements: the cache keeps its cap's worth at most */
	(void)queue_fill(&q, (uint64_t)1 << 20, a, 0);
	smarm__queue_fini(&q);
	ck_assert_uint_le(c.qc_bytes, SMARM__QSEG_CACHE_BYTES);
	ck_assert_uint_gt(c.qc_bytes,
			  SMARM__QSEG_CACHE_BYTES - SMARM__QSEG_BYTES);
	smarm__qseg_cache_flush(&c);
	ck_assert_uint_eq(c.qc_bytes, 0);
	for (int k = 0; k < SMARM__QSEG_CLASSES; k++)
		ck_assert_ptr_null(c.qc_free[k]);
	/* no cache: released segments go to malloc */
	smarm__qseg_cache_use(NULL);
	(void)queue_fill(&q, 5000, a, 0);
	smarm__queue_fini(&q);
	ck_assert_uint_eq(c.qc_bytes, 0);
}
END_TEST

/* The bytes of the segments of a queue from its head along sg_next. */
static size_t chain_bytes(const struct smarm__qseg *s)
{
	size_t sum = 0;
	for (; s != NULL; s = s->sg_next)
		sum += SMARM__QSEG_MIN << s->sg_class;
	return sum;
}

/*
 * QUEUE-7: a discarded queue of several segments (and its spare) goes
 * to the cache's pending list as it is: nothing is sorted into the
 * lists until a tidy, which takes at most its budget of segments and
 * goes on where it stopped; then the next queue reuses them. One
 * segment, a full pending list or no cache: released at once. A flush
 * frees what is pending (ASan: nothing leaks, nothing is freed twice).
 */
START_TEST(test_queue_discard_pending_until_tidied)
{
	struct smarm__qseg_cache c;
	struct smarm__qseg *a[32], *b[32];
	struct smarm__queue q;
	size_t sum, spare;
	int n, m;
	memset(&c, 0, sizeof c);
	smarm__qseg_cache_use(&c);
	n = queue_fill(&q, 5000, a, 32);
	ck_assert_int_gt(n, 2);
	ck_assert_int_le(n, 32);
	/* drain the first segment: it becomes the spare */
	for (uint32_t k = a[0]->sg_hi - a[0]->sg_lo; k > 0; k--)
		smarm__queue_drop_front(&q);
	ck_assert_ptr_eq(q.qu_spare, a[0]);
	spare = SMARM__QSEG_MIN << a[0]->sg_class;
	sum = chain_bytes(q.qu_head) + spare;
	smarm__queue_discard(&q, U64);
	ck_assert_ptr_null(q.qu_head);
	ck_assert_uint_eq(smarm__queue_len(&q), 0);
	ck_assert_uint_eq(c.qc_npend, 2); /* the chain, the spare alone */
	ck_assert_uint_eq(c.qc_bytes, 0); /* nothing sorted yet */
	ck_assert_uint_eq(c.qc_pend_bytes, (5000 - a[0]->sg_cap) * U64);
	ck_assert(smarm__qseg_cache_pending(&c));
	/* the spare first (the newest entry), then one more */
	ck_assert(smarm__qseg_cache_tidy(&c, 2));
	ck_assert_uint_eq(c.qc_npend, 1);
	ck_assert_uint_eq(c.qc_bytes,
			  spare + (SMARM__QSEG_MIN << a[1]->sg_class));
	ck_assert(!smarm__qseg_cache_tidy(&c, UINT32_MAX));
	ck_assert(!smarm__qseg_cache_pending(&c));
	ck_assert_uint_eq(c.qc_pend_bytes, 0);
	ck_assert_uint_eq(c.qc_bytes, sum);
	m = queue_fill(&q, 5000, b, 32);
	ck_assert_int_eq(m, n);
	for (int i = 0; i < n; i++)
		ck_assert_ptr_eq(b[i], a[i]); /* the same memory again */
	ck_assert_uint_eq(c.qc_bytes, 0);
	queue_holds(&q, 0, 5000);
	/* pending past the bound: released at once */
	c.qc_pend_bytes = SMARM__QSEG_PEND_BYTES - 5000 * U64 + 1;
	smarm__queue_discard(&q, U64);
	ck_assert_uint_eq(c.qc_npend, 0);
	ck_assert_uint_eq(c.qc_bytes, sum);
	c.qc_pend_bytes = 0;
	/* one segment: released at once */
	(void)queue_fill(&q, 4, a, 0);
	smarm__queue_discard(&q, U64);
	ck_assert_uint_eq(c.qc_npend, 0);
	/* pending at a flush: freed */
	(void)queue_fill(&q, 5000, a, 0);
	smarm__queue_discard(&q, U64);
	ck_assert_uint_eq(c.qc_npend, 1);
	smarm__qseg_cache_flush(&c);
	ck_assert_uint_eq(c.qc_npend, 0);
	ck_assert_ptr_null(c.qc_pend);
	ck_assert_uint_eq(c.qc_bytes, 0);
	/* no cache: released at once */
	smarm__qseg_cache_use(NULL);
	(void)queue_fill(&q, 5000, a, 0);
	smarm__queue_discard(&q, U64);
	ck_assert_ptr_null(q.qu_head);
	ck_assert_uint_eq(c.qc_npend, 0);
}
END_TEST

/* Compaction as chan.c's removal does it: a write walk behind a read
 * walk, then a truncation behind the last kept element. */
static void queue_keep_if(struct smarm__queue *q, bool (*keep)(uint64_t))
{
	struct smarm__qcur rd = smarm__queue_begin(q), wr = rd;
	uint64_t *e;
	uint32_t kept = 0;
	while ((e = smarm__queue_next(&rd, U64)) != NULL) {
		if (!keep(*e))
			continue;
		*(uint64_t *)smarm__queue_next(&wr, U64) = *e;
		kept++;
	}
	smarm__queue_truncate(q, wr, kept);
}

static bool below_50(uint64_t v)
{
	return v < 50;
}

static bool even(uint64_t v)
{
	return v % 2 == 0;
}

static bool none(uint64_t v)
{
	(void)v;
	return false;
}

START_TEST(test_queue_compaction_keeps_order_and_trims)
{
	struct smarm__queue q;
	struct smarm__qcur c;
	uint64_t *e;
	uint64_t want = 42;
	smarm__queue_init(&q);
	queue_keep_if(&q, even); /* no segment at all */
	ck_assert_uint_eq(smarm__queue_len(&q), 0);
	for (uint64_t i = 0; i < 1000; i++)
		*(uint64_t *)smarm__queue_push_back(&q, U64, 4) = i;
	for (int i = 0; i < 3; i++)
		smarm__queue_drop_front(&q); /* the head starts mid-segment */
	queue_keep_if(&q, even);
	ck_assert_uint_eq(smarm__queue_len(&q), 498); /* 4, 6, ..., 998 */
	for (uint64_t v = 4; v <= 40; v += 2) {
		ck_assert_uint_eq(*(uint64_t *)smarm__queue_front(&q, U64), v);
		smarm__queue_drop_front(&q);
	}
	queue_keep_if(&q, below_50);
	c = smarm__queue_begin(&q);
	while ((e = smarm__queue_next(&c, U64)) != NULL) {
		ck_assert_uint_eq(*e, want);
		want += 2;
	}
	ck_assert_uint_eq(want, 50);
	ck_assert_uint_eq(smarm__queue_len(&q), 4);
	ck_assert_ptr_null(q.qu_tail->sg_next); /* the rest was freed */
	/* pushes go on behind the kept ones */
	*(uint64_t *)smarm__queue_push_back(&q, U64, 4) = 50;
	ck_assert_uint_eq(smarm__queue_len(&q), 5);
	queue_keep_if(&q, none);
	ck_assert_uint_eq(smarm__queue_len(&q), 0);
	ck_assert_ptr_eq(q.qu_head, q.qu_tail);
	ck_assert_uint_eq(q.qu_head->sg_hi, 0);
	*(uint64_t *)smarm__queue_push_back(&q, U64, 4) = 9;
	queue_holds(&q, 9, 10);
	smarm__queue_fini(&q);
}
END_TEST

/*
 * Removing any element of a ring, from any head position and length,
 * keeps the others in order (the shifts cross the wrap either way), and
 * the scan finds each value at its index or says it is not there.
 */
START_TEST(test_ring_remove_at_and_find_across_the_wrap)
{
	enum { CAP = 32 };
	uint64_t buf[CAP];
	struct smarm__ring r;
	smarm__ring_init_fixed(&r, buf, CAP);
	for (uint32_t head = 0; head < CAP; head++) {
		for (uint32_t len = 1; len <= CAP; len++) {
			for (uint32_t i = 0; i < len; i++) {
				uint32_t k = 0;
				r.rg_head = head;
				smarm__ring_set_len(&r, 0);
				for (uint32_t v = 0; v < len; v++)
					push(&r, 100 + v);
				for (uint32_t v = 0; v < len; v++)
					ck_assert_uint_eq(
						smarm__ring_find_u64(&r, 0, len,
								     100 + v),
						v);
				ck_assert_uint_eq(
					smarm__ring_find_u64(&r, 0, len, 99),
					UINT32_MAX);
				ck_assert_uint_eq(
					smarm__ring_find_u64(&r, i + 1, len,
							     100 + i),
					UINT32_MAX);
				smarm__ring_remove_at(&r, U64, i);
				ck_assert_uint_eq(smarm__ring_len(&r), len - 1);
				for (uint32_t v = 0; v < len; v++) {
					if (v == i)
						continue;
					ck_assert_uint_eq(
						*(uint64_t *)smarm__ring_at(
							&r, U64, k++),
						100 + v);
				}
			}
		}
	}
}
END_TEST

/* ------------------------------------------------------- trace rings */

START_TEST(test_trace_ring_past_half_kicks_the_writer_once)
{
	struct smarm_node *n = calloc(1, sizeof *n);
	struct smarm__trace *t;
	struct smarm__trace_ring *r;
	struct smarm__trace_rec out[8];
	ck_assert_ptr_nonnull(n);
	n->workers_n = 1;
	ck_assert_int_eq(smarm__trace_enable(n, 8), 0);
	t = smarm__trace_of(n);
	r = &t->tc_ring[0];
	/* Up to half the ring and one more: nobody is woken. */
	for (int i = 0; i < 5; i++)
		smarm__trace_put_hot(r, SMARM__TR_SPAWN, 0, (uint64_t)i, 0);
	ck_assert_uint_eq(atomic_load(&t->tc_kick), 0);
	/* Past half: the writer is asked to drain now. */
	smarm__trace_put_hot(r, SMARM__TR_SPAWN, 0, 5, 0);
	ck_assert_uint_eq(atomic_load(&t->tc_kick), 1);
	/* Taken (its wait returns at once), and asked again while the ring
	 * stays past half. */
	smarm__trace_wait(t, MS(5000));
	ck_assert_uint_eq(atomic_load(&t->tc_kick), 0);
	smarm__trace_put_hot(r, SMARM__TR_SPAWN, 0, 6, 0);
	smarm__trace_put_hot(r, SMARM__TR_SPAWN, 0, 7, 0);
	ck_assert_uint_eq(atomic_load(&t->tc_kick), 1);
	/* Full: one more is dropped and counted, never blocks. */
	smarm__trace_put_hot(r, SMARM__TR_SPAWN, 0, 8, 0);
	ck_assert_uint_eq(smarm__trace_dropped(t), 1);
	/* The consumer's take makes room, oldest first. */
	ck_assert_uint_eq(smarm__trace_take(r, out, 8), 8);
	for (int i = 0; i < 8; i++)
		ck_assert_uint_eq(out[i].tr_b, (uint64_t)i);
	smarm__trace_wait(t, MS(5000));
	smarm__trace_put_hot(r, SMARM__TR_SPAWN, 0, 9, 0);
	ck_assert_uint_eq(atomic_load(&t->tc_kick), 0);
	ck_assert_uint_eq(smarm__trace_dropped(t), 1);
	smarm__trace_disable(n);
	free(n);
}
END_TEST

Suite *smarm_test_ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("ring");
	tcase_add_test(tc, test_ring_fifo_order_across_the_wrap);
	tcase_add_test(
		tc, test_ring_rewind_restarts_an_empty_ring_at_its_first_entry);
	tcase_add_test(tc,
		       test_ring_front_batch_keeps_its_order_ahead_of_older);
	tcase_add_test(tc, test_ring_grow_keeps_order_from_a_wrapped_head);
	tcase_add_test(tc, test_ring_odd_element_size_and_in_place_compaction);
	tcase_add_test(tc, test_ring_capacity_limit_fails_unchanged);
	tcase_add_test(tc, test_ring_move_hands_back_the_old_buffer);
	tcase_add_test(tc, test_ring_remove_at_and_find_across_the_wrap);
	suite_add_tcase(s, tc);
	tc = tcase_create("queue");
	tcase_add_test(tc, test_queue_fifo_across_segments_and_both_ends);
	tcase_add_test(tc, test_queue_growth_moves_no_element);
	tcase_add_test(tc, test_queue_big_elements_one_per_segment);
	tcase_add_test(tc, test_queue_segments_cached_up_to_the_cap);
	tcase_add_test(tc, test_queue_discard_pending_until_tidied);
	tcase_add_test(tc, test_queue_compaction_keeps_order_and_trims);
	suite_add_tcase(s, tc);
	tc = tcase_create("trace");
	tcase_add_test(tc, test_trace_ring_past_half_kicks_the_writer_once);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(ring)
