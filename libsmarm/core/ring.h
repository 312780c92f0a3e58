/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the one ring buffer, and the chunked queue.
 *
 * The ring is a power-of-two array of fixed-size elements used as a
 * double-ended queue. The run queue and the work-first deques
 * (sched.c), mutex waiters (mutex.c) and a state machine's event lists
 * (statem.c) are all this ring; the element size is the caller's, passed
 * to every call as a constant so each use compiles to plain index
 * arithmetic. It grows by doubling (smarm__ring_grow), which moves every
 * element: fine for rings sized in advance (the run queue, before the
 * slot table grows) or bounded by what one caller does, not for a queue
 * whose backlog has no bound.
 *
 * The chunked queue (struct smarm__queue) is the FIFO for such backlogs:
 * a channel's elements (chan.c). It is a list of segments, each an array
 * filled front to back; it grows by linking one more segment, sizes
 * doubling from the caller's first capacity up to SMARM__QSEG_BYTES, so
 * a push costs at most one allocation of at most that size (or of one
 * element, if bigger), never a move of the backlog. A segment the front
 * drains is unlinked and kept as the spare for the next growth (or
 * released, if there is one), so a queue whose length stays bounded
 * allocates nothing in the steady state; the last segment is kept when
 * the queue empties.
 *
 * Segment memory. A segment's size, header included, is a power of two
 * from SMARM__QSEG_MIN to SMARM__QSEG_BYTES (its class), holding as many
 * elements as fit; only a segment for one element bigger than that is
 * sized to it (no class). A thread may lend the queue a cache of free
 * segments (smarm__qseg_cache_use: each worker its own, sched.c): a
 * segment released goes on its class's list there while the cache holds
 * less than SMARM__QSEG_CACHE_BYTES, and a new one comes from there
 * first, so a backlog that dies with its channel is a list push per
 * segment and the next backlog reuses that memory, warm, without
 * malloc, free or the heap's trimming. Past the cap, and on a thread
 * with no cache, segments go back to malloc.
 *
 * Backlogs discarded unread. A queue whose elements own nothing (a
 * channel's last receiver gone, chan.c INV-10) is released without
 * reading a segment (smarm__queue_discard): with a cache, a chain of
 * more than one segment goes on the cache's pending list as it is, and
 * its segments are sorted into the lists (or freed) later, a bounded
 * number at a time, by smarm__qseg_cache_tidy: the scheduler calls it
 * where its worker takes ordinary work and where it goes idle (sched.c,
 * "Garbage after system traffic"). So a server that dies under load
 * sends its exit signals without first reading and freeing the segments
 * of its backlog, cold by then (issue 30: most of the shutdown's cost
 * under load). The pending list is bounded (SMARM__QSEG_PEND_BYTES of
 * elements, SMARM__QSEG_PEND_MAX chains); past that a discard releases
 * at once, as smarm__queue_fini does.
 *
 * Ownership: the owner embeds the ring or queue and decides where a
 * ring's buffer comes from: smarm__ring_grow allocates (free it with
 * smarm__ring_fini), smarm__ring_init_fixed lends an array that is never
 * grown or freed. A queue's segments are its own (smarm__queue_fini).
 * Locking: the owner's lock guards every call that changes a ring or a
 * queue. rg_len and qu_len are atomic so that the lengths may be read
 * without that lock (a snapshot: idle checks, statistics); writers store
 * them relaxed.
 * Invariants: RING-1 rg_cap is 0 or a power of two, and rg_len <= rg_cap.
 * RING-2 element i (0 = front) lives at index (rg_head + i) & (rg_cap - 1).
 * QUEUE-1 qu_head and qu_tail are both NULL or both not; the segments
 * from qu_head along sg_next end at qu_tail. QUEUE-2 a segment holds the
 * elements [sg_lo, sg_hi) of its array, front first; only the tail may
 * be empty, and only when it is also the head (the queue is empty), with
 * sg_lo == sg_hi == 0. QUEUE-3 qu_len is the sum of sg_hi - sg_lo.
 * QUEUE-4 an element never moves while queued (no push copies another
 * element), and a segment is at most SMARM__QSEG_BYTES, header
 * included, or holds one element. QUEUE-5 qu_spare is NULL or an
 * unlinked segment. QUEUE-6 a cache's lists hold only unlinked segments
 * of their class, qc_bytes is the sum of their sizes and at most
 * SMARM__QSEG_CACHE_BYTES; only the thread using it touches it.
 * QUEUE-7 each of a cache's qc_npend pending entries is an unlinked
 * segment that no queue holds: with bit 0 clear, the head of a list
 * along sg_next ending in NULL (the segments of a discarded queue), with
 * bit 0 set, that one segment alone (a discarded queue's spare, whose
 * sg_next is stale); no segment is in two entries, nor on a list of
 * qc_free. qc_npend <= SMARM__QSEG_PEND_MAX, and qc_pend_bytes is 0
 * when qc_npend is.
 * See: docs/architecture/ring.md.
 */
#ifndef SMARM_CORE_RING_H
#define SMARM_CORE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct smarm__ring {
	unsigned char *rg_buf;	 /* rg_cap elements, or NULL */
	uint32_t rg_cap;	 /* power of two, or 0 (RING-1) */
	uint32_t rg_head;	 /* index of the front element */
	_Atomic uint32_t rg_len; /* elements; owner's lock writes */
};

/* Use a caller-owned array of cap (a power of two) elements. */
static inline void smarm__ring_init_fixed(struct smarm__ring *r, void *buf,
					  uint32_t cap)
{
	r->rg_buf = buf;
	r->rg_cap = cap;
	r->rg_head = 0;
	atomic_store_explicit(&r->rg_len, 0, memory_order_relaxed);
}

/* Element count; without the owner's lock, a snapshot. */
static inline uint32_t smarm__ring_len(const struct smarm__ring *r)
{
	return atomic_load_explicit(&r->rg_len, memory_order_relaxed);
}

static inline void smarm__ring_set_len(struct smarm__ring *r, uint32_t len)
{
	atomic_store_explicit(&r->rg_len, len, memory_order_relaxed);
}

/*
 * An empty ring starts again at index 0, so the next pushes reuse the
 * memory the last ones touched, from its start, rather than wherever the
 * head has wandered to (a buffer's pages are faulted in by the first
 * push to each: sched.c rewinds the run queue at a run's start).
 */
static inline void smarm__ring_rewind(struct smarm__ring *r)
{
	if (smarm__ring_len(r) == 0)
		r->rg_head = 0;
}

/* Element i, counted from the front (RING-2); i may be up to rg_cap. */
static inline void *smarm__ring_at(const struct smarm__ring *r, size_t esz,
				   uint32_t i)
{
	return r->rg_buf + (size_t)((r->rg_head + i) & (r->rg_cap - 1)) * esz;
}

/* Room for one more at the back: returns it (len < cap required). */
static inline void *smarm__ring_push_back(struct smarm__ring *r, size_t esz)
{
	uint32_t len = smarm__ring_len(r);
	smarm__ring_set_len(r, len + 1);
	return smarm__ring_at(r, esz, len);
}

/* Copy k elements in order to the front (len + k <= cap required). */
static inline void smarm__ring_push_front_n(struct smarm__ring *r, size_t esz,
					    const void *src, uint32_t k)
{
	const unsigned char *s = src;
	for (uint32_t i = k; i-- > 0;) {
		r->rg_head = (r->rg_head - 1) & (r->rg_cap - 1);
		memcpy(r->rg_buf + (size_t)r->rg_head * esz, s + i * esz, esz);
	}
	smarm__ring_set_len(r, smarm__ring_len(r) + k);
}

/*
 * Take the front (or the back) element: returns where it lies, valid
 * until the next push (len > 0 required).
 */
static inline void *smarm__ring_pop_front(struct smarm__ring *r, size_t esz)
{
	void *e = r->rg_buf + (size_t)r->rg_head * esz;
	r->rg_head = (r->rg_head + 1) & (r->rg_cap - 1);
	smarm__ring_set_len(r, smarm__ring_len(r) - 1);
	return e;
}

static inline void *smarm__ring_pop_back(struct smarm__ring *r, size_t esz)
{
	uint32_t len = smarm__ring_len(r) - 1;
	smarm__ring_set_len(r, len);
	return smarm__ring_at(r, esz, len);
}

/*
 * Move n elements within the ring from logical index from to index to
 * (overlap allowed), as memmove: in at most a few contiguous pieces.
 */
static inline void smarm__ring_shift(struct smarm__ring *r, size_t esz,
				     uint32_t to, uint32_t from, uint32_t n)
{
	uint32_t mask = r->rg_cap - 1;
	bool up = to > from; /* copy from the top down */
	while (n > 0) {
		uint32_t k = up ? n - 1 : 0; /* the next element to move */
		uint32_t ps = (r->rg_head + from + k) & mask;
		uint32_t pd = (r->rg_head + to + k) & mask;
		/* as many as stay contiguous on both sides */
		uint32_t m = up ? (ps < pd ? ps : pd) + 1
				: r->rg_cap - (ps > pd ? ps : pd);
		if (m > n)
			m = n;
		if (up) {
			ps -= m - 1;
			pd -= m - 1;
		}
		memmove(r->rg_buf + (size_t)pd * esz,
			r->rg_buf + (size_t)ps * esz, (size_t)m * esz);
		if (!up) {
			from += m;
			to += m;
		}
		n -= m;
	}
}

/*
 * Remove element i (i < len): the elements on its shorter side close the
 * gap, so the order of the rest is kept.
 */
static inline void smarm__ring_remove_at(struct smarm__ring *r, size_t esz,
					 uint32_t i)
{
	uint32_t len = smarm__ring_len(r);
	if (i < len / 2) {
		smarm__ring_shift(r, esz, 1, 0, i);
		(void)smarm__ring_pop_front(r, esz);
	} else {
		smarm__ring_shift(r, esz, i, i + 1, len - 1 - i);
		(void)smarm__ring_pop_back(r, esz);
	}
}

/*
 * The logical index of the first uint64_t element equal to v among
 * [lo, hi) of a ring of uint64_t, or UINT32_MAX. Blocks of eight are
 * compared without a branch, so the compiler vectorises the scan.
 */
static inline uint32_t smarm__ring_find_u64(const struct smarm__ring *r,
					    uint32_t lo, uint32_t hi,
					    uint64_t v)
{
	const uint64_t *a = (const uint64_t *)r->rg_buf;
	uint32_t mask = r->rg_cap - 1;
	while (lo < hi) {
		uint32_t p = (r->rg_head + lo) & mask;
		uint32_t m = r->rg_cap - p; /* contiguous from p */
		uint32_t k = 0;
		if (m > hi - lo)
			m = hi - lo;
		for (; k + 8 <= m; k += 8) {
			const uint64_t *b = a + p + k;
			if ((b[0] == v) | (b[1] == v) | (b[2] == v) |
			    (b[3] == v) | (b[4] == v) | (b[5] == v) |
			    (b[6] == v) | (b[7] == v))
				break;
		}
		for (; k < m; k++)
			if (a[p + k] == v)
				return lo + k;
		lo += m;
	}
	return UINT32_MAX;
}

/*
 * Move the elements into buf (cap elements, a power of two >= len), front
 * first, and return the old buffer for the caller to free: the owner may
 * allocate buf before taking its lock.
 */
static inline void *smarm__ring_move(struct smarm__ring *r, size_t esz,
				     void *buf, uint32_t cap)
{
	void *old = r->rg_buf;
	uint32_t len = smarm__ring_len(r);
	for (uint32_t i = 0; i < len; i++)
		memcpy((unsigned char *)buf + (size_t)i * esz,
		       smarm__ring_at(r, esz, i), esz);
	r->rg_buf = buf;
	r->rg_cap = cap;
	r->rg_head = 0;
	return old;
}

/* The power of two >= want, at least `first`; 0 if none fits 32 bits. */
static inline uint32_t smarm__ring_cap_for(uint32_t want, uint32_t first)
{
	uint64_t cap = first;
	while (cap < want)
		cap <<= 1;
	return cap > (UINT32_C(1) << 31) ? 0 : (uint32_t)cap;
}

/*
 * Make room for want elements (allocating under the owner's lock):
 * capacity doubles from `first`. Returns 0 or SMARM_ENOMEM (the ring is
 * unchanged then).
 */
int smarm__ring_grow(struct smarm__ring *r, size_t esz, uint32_t want,
		     uint32_t first);

/* Free a buffer smarm__ring_grow allocated; the ring is empty after. */
void smarm__ring_fini(struct smarm__ring *r);

/* ------------------------------------------------- the chunked queue */

/*
 * Segment sizes, header included: powers of two from SMARM__QSEG_MIN to
 * SMARM__QSEG_BYTES (SMARM__QSEG_CLASSES classes), unless one element
 * is bigger than the largest.
 */
#define SMARM__QSEG_MIN_SHIFT 7
#define SMARM__QSEG_MIN ((size_t)1 << SMARM__QSEG_MIN_SHIFT)
#define SMARM__QSEG_BYTES ((size_t)64 << 10)
#define SMARM__QSEG_CLASSES 10
#define SMARM__QSEG_NOCLASS UINT32_MAX /* sg_class of a one-element one */

/* What a thread's cache of free segments may hold (QUEUE-6). */
#define SMARM__QSEG_CACHE_BYTES ((size_t)4 << 20)

/*
 * What its pending list may hold (QUEUE-7): discarded chains, and the
 * bytes of their elements when discarded (less what tidying sorted).
 */
#define SMARM__QSEG_PEND_MAX 16384u
#define SMARM__QSEG_PEND_BYTES ((size_t)64 << 20)

/* A segment: the queue's (its owner's lock guards it). */
struct smarm__qseg {
	struct smarm__qseg *sg_next; /* toward the back, or NULL */
	uint32_t sg_cap;	     /* elements the array holds */
	uint32_t sg_lo;		     /* index of the front element */
	uint32_t sg_hi;		     /* one past the back element */
	uint32_t sg_class;	 /* size 2^(class + MIN_SHIFT), or NOCLASS */
	uint64_t sg_align;	 /* keeps sg_data 16-byte aligned */
	unsigned char sg_data[]; /* sg_cap elements */
};

/*
 * A thread's free segments (QUEUE-6): one list per class, by sg_next;
 * and the chains discarded unread, not sorted yet (QUEUE-7).
 */
struct smarm__qseg_cache {
	struct smarm__qseg *qc_free[SMARM__QSEG_CLASSES];
	size_t qc_bytes;      /* the sizes of the segments held */
	uintptr_t *qc_pend;   /* qc_pend_cap entries (QUEUE-7), or NULL */
	uint32_t qc_npend;    /* entries in use */
	uint32_t qc_pend_cap; /* entries allocated */
	size_t qc_pend_bytes; /* elements' bytes pending, an estimate */
};

/*
 * The calling thread's cache from now on (NULL: none; ring.c keeps it
 * in a thread-local pointer); c starts zeroed or flushed.
 */
void smarm__qseg_cache_use(struct smarm__qseg_cache *c);

/* Free every segment c holds (no thread may be using it). */
void smarm__qseg_cache_flush(struct smarm__qseg_cache *c);

/*
 * Sort up to max segments of c's pending chains (QUEUE-7) into its lists,
 * or to malloc past its cap; on the thread using c. True: some remain.
 */
bool smarm__qseg_cache_tidy(struct smarm__qseg_cache *c, uint32_t max);

/* Whether c has pending chains: one load, for the scheduler's checks. */
static inline bool smarm__qseg_cache_pending(const struct smarm__qseg_cache *c)
{
	return c->qc_npend != 0;
}

/* The owner's lock guards every field; qu_len is also read without it. */
struct smarm__queue {
	struct smarm__qseg *qu_head;  /* front segment, or NULL (QUEUE-1) */
	struct smarm__qseg *qu_tail;  /* back segment, or NULL */
	struct smarm__qseg *qu_spare; /* a drained segment, or NULL */
	_Atomic uint32_t qu_len;      /* elements; owner's lock writes */
};

/* Where a walk over a queue's elements stands (smarm__queue_next). */
struct smarm__qcur {
	struct smarm__qseg *qc_seg; /* segment of the next element, or NULL */
	uint32_t qc_i;		    /* its index there */
};

/* An empty queue with no segment. */
static inline void smarm__queue_init(struct smarm__queue *q)
{
	q->qu_head = NULL;
	q->qu_tail = NULL;
	q->qu_spare = NULL;
	atomic_store_explicit(&q->qu_len, 0, memory_order_relaxed);
}

/* Element count; without the owner's lock, a snapshot. */
static inline uint32_t smarm__queue_len(const struct smarm__queue *q)
{
	return atomic_load_explicit(&q->qu_len, memory_order_relaxed);
}

static inline void smarm__queue_set_len(struct smarm__queue *q, uint32_t len)
{
	atomic_store_explicit(&q->qu_len, len, memory_order_relaxed);
}

/*
 * The slow halves of the pushes below, when the end segment is full (or
 * there is none): link one more segment there and push into it; ring.c.
 */
void *smarm__queue_push_back_grow(struct smarm__queue *q, size_t esz,
				  uint32_t first);
void *smarm__queue_push_front_grow(struct smarm__queue *q, size_t esz,
				   uint32_t first);
/* Unlink the drained front segment (it is not the tail); ring.c. */
void smarm__queue_drop_seg(struct smarm__queue *q);

/*
 * Room for one more at the back: returns it, or NULL (out of memory;
 * the queue is unchanged). first: the first segment's capacity.
 */
static inline void *smarm__queue_push_back(struct smarm__queue *q, size_t esz,
					   uint32_t first)
{
	struct smarm__qseg *t = q->qu_tail;
	if (__builtin_expect(t == NULL || t->sg_hi == t->sg_cap, 0))
		return smarm__queue_push_back_grow(q, esz, first);
	smarm__queue_set_len(q, smarm__queue_len(q) + 1);
	return t->sg_data + (size_t)t->sg_hi++ * esz;
}

/* Room for one more at the front: returns it, or NULL (as above). */
static inline void *smarm__queue_push_front(struct smarm__queue *q, size_t esz,
					    uint32_t first)
{
	struct smarm__qseg *h = q->qu_head;
	if (smarm__queue_len(q) == 0)
		return smarm__queue_push_back(q, esz, first);
	if (h->sg_lo == 0)
		return smarm__queue_push_front_grow(q, esz, first);
	smarm__queue_set_len(q, smarm__queue_len(q) + 1);
	return h->sg_data + (size_t)--h->sg_lo * esz;
}

/* The front element (len > 0 required); valid until it is dropped. */
static inline void *smarm__queue_front(const struct smarm__queue *q, size_t esz)
{
	const struct smarm__qseg *h = q->qu_head;
	return (unsigned char *)h->sg_data + (size_t)h->sg_lo * esz;
}

/*
 * How many elements, at most max (max > 0, len > 0 required), lie side
 * by side from the front one in its segment: a receiver that takes a
 * batch copies them out as one block.
 */
static inline uint32_t smarm__queue_front_run(const struct smarm__queue *q,
					      uint32_t max)
{
	const struct smarm__qseg *h = q->qu_head;
	uint32_t run = h->sg_hi - h->sg_lo;
	return run < max ? run : max;
}

/* Drop the front k elements, 0 < k <= smarm__queue_front_run's. */
static inline void smarm__queue_drop_front_n(struct smarm__queue *q, uint32_t k)
{
	struct smarm__qseg *h = q->qu_head;
	smarm__queue_set_len(q, smarm__queue_len(q) - k);
	h->sg_lo += k;
	if (h->sg_lo < h->sg_hi)
		return;
	if (h == q->qu_tail)
		h->sg_lo = h->sg_hi = 0; /* empty: start over (QUEUE-2) */
	else
		smarm__queue_drop_seg(q);
}

/* Drop the front element (len > 0 required). */
static inline void smarm__queue_drop_front(struct smarm__queue *q)
{
	smarm__queue_drop_front_n(q, 1);
}

/* A walk from the front. */
static inline struct smarm__qcur
smarm__queue_begin(const struct smarm__queue *q)
{
	struct smarm__qcur c = { q->qu_head,
				 q->qu_head ? q->qu_head->sg_lo : 0 };
	return c;
}

/* The element at c, stepping c past it; NULL after the back. */
static inline void *smarm__queue_next(struct smarm__qcur *c, size_t esz)
{
	while (c->qc_seg != NULL && c->qc_i == c->qc_seg->sg_hi) {
		c->qc_seg = c->qc_seg->sg_next;
		c->qc_i = c->qc_seg != NULL ? c->qc_seg->sg_lo : 0;
	}
	if (c->qc_seg == NULL)
		return NULL;
	return c->qc_seg->sg_data + (size_t)c->qc_i++ * esz;
}

/*
 * Keep only the first len elements: c is a walk that has stepped past
 * exactly those (smarm__queue_next returned them). Frees what is behind.
 */
void smarm__queue_truncate(struct smarm__queue *q, struct smarm__qcur c,
			   uint32_t len);

/* Free every segment; the queue is empty, with no segment, after. */
void smarm__queue_fini(struct smarm__queue *q);

/*
 * As smarm__queue_fini, for a queue whose elements own nothing (nobody
 * reads them again): a chain of more than one segment goes to the
 * calling thread's cache as it is, unread, to be sorted later
 * (QUEUE-7), while the pending list has room; esz sizes the estimate.
 */
void smarm__queue_discard(struct smarm__queue *q, size_t esz);

#endif /* SMARM_CORE_RING_H */
