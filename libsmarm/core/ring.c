/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the allocating halves of the ring buffer and of the chunked
 * queue (ring.h): the ring's growth by doubling and its release; the
 * queue's segments, linked one at a time, recycled, trimmed and
 * released, and where segments come from and go: a thread's cache of
 * free segments (QUEUE-6), or malloc; the chains of discarded queues
 * that the cache holds unread until tidied (QUEUE-7). Everything else
 * about both is inline in ring.h.
 *
 * Ownership: a buffer allocated here belongs to the ring until
 * smarm__ring_fini (or until smarm__ring_move hands back the old one);
 * a segment belongs to its queue until smarm__queue_fini, or until it is
 * released as the front drains it or a truncation cuts it off; a
 * released one belongs to the releasing thread's cache (until a queue
 * takes it or the cache is flushed) or goes back to malloc; a discarded
 * chain belongs to the discarding thread's cache, pending, until tidying
 * sorts its segments or the cache is flushed.
 * Locking: the caller holds the owner's lock. A cache is its thread's
 * alone (qc_tls): an actor is not switched out inside these calls.
 * Invariants: ring.h RING-1 and RING-2 hold on return, also on failure;
 * QUEUE-1..7 hold on return. A growth takes one segment (the spare, a
 * cached one or a new one) and copies no element (QUEUE-4). A discard
 * reads no segment when it keeps the chain pending.
 * See: ring.h.
 */
#include "ring.h"

#include <stddef.h>
#include <stdlib.h>

#include "smarm/errors.h"

int smarm__ring_grow(struct smarm__ring *r, size_t esz, uint32_t want,
		     uint32_t first)
{
	uint32_t cap;
	void *buf;
	if (want <= r->rg_cap)
		return 0;
	cap = smarm__ring_cap_for(want, r->rg_cap ? r->rg_cap * 2 : first);
	if (cap == 0)
		return SMARM_ENOMEM;
	buf = malloc((size_t)cap * esz);
	if (buf == NULL)
		return SMARM_ENOMEM;
	free(smarm__ring_move(r, esz, buf, cap));
	return 0;
}

void smarm__ring_fini(struct smarm__ring *r)
{
	free(r->rg_buf);
	r->rg_buf = NULL;
	r->rg_cap = 0;
	r->rg_head = 0;
	smarm__ring_set_len(r, 0);
}

_Static_assert(offsetof(struct smarm__qseg, sg_data) % 16 == 0,
	       "segment elements start 16-byte aligned");
_Static_assert(SMARM__QSEG_MIN << (SMARM__QSEG_CLASSES - 1) ==
		       SMARM__QSEG_BYTES,
	       "the largest class is SMARM__QSEG_BYTES");
_Static_assert(SMARM__QSEG_MIN > offsetof(struct smarm__qseg, sg_data),
	       "the smallest class has room for elements");

#define QSEG_HDR offsetof(struct smarm__qseg, sg_data)

/* The cache the calling thread lent the queues (QUEUE-6), or NULL. */
static __thread struct smarm__qseg_cache *qc_tls
	__attribute__((tls_model("initial-exec")));

void smarm__qseg_cache_use(struct smarm__qseg_cache *c)
{
	qc_tls = c;
}

static void qseg_free_list(struct smarm__qseg *s)
{
	while (s != NULL) {
		struct smarm__qseg *next = s->sg_next;
		free(s);
		s = next;
	}
}

/* Pending entry e's first segment (QUEUE-7); *alone: bit 0 was set. */
static struct smarm__qseg *pend_seg(uintptr_t e, bool *alone)
{
	*alone = (e & 1) != 0;
	return (struct smarm__qseg *)(e & ~(uintptr_t)1);
}

void smarm__qseg_cache_flush(struct smarm__qseg_cache *c)
{
	for (uint32_t i = 0; i < c->qc_npend; i++) {
		bool alone;
		struct smarm__qseg *s = pend_seg(c->qc_pend[i], &alone);
		if (alone)
			free(s);
		else
			qseg_free_list(s);
	}
	free(c->qc_pend);
	c->qc_pend = NULL;
	c->qc_npend = 0;
	c->qc_pend_cap = 0;
	c->qc_pend_bytes = 0;
	for (unsigned k = 0; k < SMARM__QSEG_CLASSES; k++) {
		qseg_free_list(c->qc_free[k]);
		c->qc_free[k] = NULL;
	}
	c->qc_bytes = 0;
}

static size_t qseg_class_bytes(uint32_t k)
{
	return SMARM__QSEG_MIN << k;
}

/*
 * The class of the smallest segment that holds want elements (want >= 1),
 * or of the largest if none does; NOCLASS if not even one element fits
 * the largest.
 */
static uint32_t qseg_class_for(size_t esz, uint32_t want)
{
	uint32_t k = 0;
	if (QSEG_HDR + esz > SMARM__QSEG_BYTES)
		return SMARM__QSEG_NOCLASS;
	while (k + 1 < SMARM__QSEG_CLASSES &&
	       qseg_class_bytes(k) < QSEG_HDR + (size_t)want * esz)
		k++;
	return k;
}

/*
 * A segment of class k (NOCLASS: for one element of esz), empty at
 * index at (lo == hi == at; at <= its capacity): from the thread's
 * cache, else malloc'd.
 */
static struct smarm__qseg *qseg_get(size_t esz, uint32_t k, bool at_back)
{
	struct smarm__qseg_cache *c = qc_tls;
	struct smarm__qseg *s;
	size_t bytes =
		k == SMARM__QSEG_NOCLASS ? QSEG_HDR + esz : qseg_class_bytes(k);
	if (k != SMARM__QSEG_NOCLASS && c != NULL && c->qc_free[k] != NULL) {
		s = c->qc_free[k];
		c->qc_free[k] = s->sg_next;
		c->qc_bytes -= bytes;
	} else {
		s = malloc(bytes);
		if (s == NULL)
			return NULL;
		s->sg_class = k;
	}
	s->sg_next = NULL;
	s->sg_cap = (uint32_t)((bytes - QSEG_HDR) / esz);
	s->sg_lo = s->sg_hi = at_back ? 0 : s->sg_cap;
	return s;
}

/* Release an unlinked segment: to cache c (or NULL) if it has room. */
static void qseg_put_to(struct smarm__qseg_cache *c, struct smarm__qseg *s)
{
	uint32_t k = s->sg_class;
	if (k != SMARM__QSEG_NOCLASS && c != NULL &&
	    c->qc_bytes + qseg_class_bytes(k) <= SMARM__QSEG_CACHE_BYTES) {
		s->sg_next = c->qc_free[k];
		c->qc_free[k] = s;
		c->qc_bytes += qseg_class_bytes(k);
		return;
	}
	free(s);
}

/* Release an unlinked segment: to the thread's cache if it has room. */
static void qseg_put(struct smarm__qseg *s)
{
	qseg_put_to(qc_tls, s);
}

/* Release a list of unlinked segments along sg_next. */
static void qseg_put_list(struct smarm__qseg *s)
{
	while (s != NULL) {
		struct smarm__qseg *next = s->sg_next;
		qseg_put(s);
		s = next;
	}
}

void *smarm__queue_push_back_grow(struct smarm__queue *q, size_t esz,
				  uint32_t first)
{
	uint32_t len = smarm__queue_len(q);
	struct smarm__qseg *s = q->qu_spare;
	if (len > UINT32_MAX - SMARM__QSEG_BYTES)
		return NULL; /* the count would not fit */
	if (s != NULL) {
		q->qu_spare = NULL;
		s->sg_next = NULL;
		s->sg_lo = 0;
		s->sg_hi = 0;
	} else {
		/* The first segment holds first; then each doubles, up to
		 * the largest class (one element each: NOCLASS stays). */
		uint32_t k = q->qu_tail == NULL ? qseg_class_for(esz, first)
						: q->qu_tail->sg_class;
		if (q->qu_tail != NULL && k < SMARM__QSEG_CLASSES - 1)
			k++; /* not past the largest, nor from NOCLASS */
		s = qseg_get(esz, k, true);
		if (s == NULL)
			return NULL;
	}
	if (q->qu_tail == NULL)
		q->qu_head = s;
	else
		q->qu_tail->sg_next = s;
	q->qu_tail = s;
	smarm__queue_set_len(q, len + 1);
	return s->sg_data + (size_t)s->sg_hi++ * esz;
}

void *smarm__queue_push_front_grow(struct smarm__queue *q, size_t esz,
				   uint32_t first)
{
	uint32_t len = smarm__queue_len(q);
	struct smarm__qseg *s;
	if (len == UINT32_MAX)
		return NULL;
	s = qseg_get(esz, qseg_class_for(esz, first), false); /* back end */
	if (s == NULL)
		return NULL;
	s->sg_next = q->qu_head;
	q->qu_head = s;
	if (q->qu_tail == NULL)
		q->qu_tail = s;
	smarm__queue_set_len(q, len + 1);
	return s->sg_data + (size_t)--s->sg_lo * esz;
}

void smarm__queue_drop_seg(struct smarm__queue *q)
{
	struct smarm__qseg *s = q->qu_head;
	q->qu_head = s->sg_next;
	if (q->qu_spare == NULL)
		q->qu_spare = s;
	else
		qseg_put(s);
}

void smarm__queue_truncate(struct smarm__queue *q, struct smarm__qcur c,
			   uint32_t len)
{
	if (c.qc_seg == NULL)
		return; /* no segment: the queue was empty */
	qseg_put_list(c.qc_seg->sg_next);
	c.qc_seg->sg_next = NULL;
	c.qc_seg->sg_hi = c.qc_i;
	q->qu_tail = c.qc_seg;
	if (len == 0) /* c is where the walk began: the head (QUEUE-2) */
		c.qc_seg->sg_lo = c.qc_seg->sg_hi = 0;
	smarm__queue_set_len(q, len);
}

void smarm__queue_fini(struct smarm__queue *q)
{
	qseg_put_list(q->qu_head);
	if (q->qu_spare != NULL)
		qseg_put(q->qu_spare);
	smarm__queue_init(q);
}

_Static_assert(_Alignof(struct smarm__qseg) > 1,
	       "bit 0 of a segment's address is free (QUEUE-7)");

/* Room in c's pending list for k more entries (QUEUE-7), or false. */
static bool pend_room(struct smarm__qseg_cache *c, uint32_t k)
{
	uint32_t cap = c->qc_pend_cap;
	uintptr_t *p;
	if (c->qc_npend + k <= cap)
		return true;
	if (c->qc_npend + k > SMARM__QSEG_PEND_MAX)
		return false;
	cap = cap == 0 ? 64 : cap * 2;
	if (cap > SMARM__QSEG_PEND_MAX)
		cap = SMARM__QSEG_PEND_MAX;
	p = realloc(c->qc_pend, (size_t)cap * sizeof *p);
	if (p == NULL)
		return false;
	c->qc_pend = p;
	c->qc_pend_cap = cap;
	return true;
}

void smarm__queue_discard(struct smarm__queue *q, size_t esz)
{
	struct smarm__qseg_cache *c = qc_tls;
	size_t bytes = (size_t)smarm__queue_len(q) * esz;
	uint32_t k = q->qu_spare != NULL ? 2 : 1;
	/* One segment (or none) is one line to read: released now. */
	if (c == NULL || q->qu_head == q->qu_tail ||
	    bytes > SMARM__QSEG_PEND_BYTES - c->qc_pend_bytes ||
	    !pend_room(c, k)) {
		smarm__queue_fini(q);
		return;
	}
	c->qc_pend[c->qc_npend++] = (uintptr_t)q->qu_head;
	if (q->qu_spare != NULL)
		c->qc_pend[c->qc_npend++] = (uintptr_t)q->qu_spare | 1;
	c->qc_pend_bytes += bytes;
	smarm__queue_init(q);
}

bool smarm__qseg_cache_tidy(struct smarm__qseg_cache *c, uint32_t max)
{
	while (c->qc_npend > 0 && max > 0) {
		bool alone;
		uintptr_t *e = &c->qc_pend[c->qc_npend - 1];
		struct smarm__qseg *s = pend_seg(*e, &alone);
		for (; s != NULL && max > 0; max--) {
			struct smarm__qseg *next = alone ? NULL : s->sg_next;
			size_t sz = s->sg_class == SMARM__QSEG_NOCLASS
					    ? 0
					    : qseg_class_bytes(s->sg_class);
			qseg_put_to(c, s);
			c->qc_pend_bytes -=
				sz < c->qc_pend_bytes ? sz : c->qc_pend_bytes;
			s = next;
		}
		if (s != NULL)
			*e = (uintptr_t)s; /* the rest of the chain, later */
		else
			c->qc_npend--;
	}
	if (c->qc_npend == 0)
		c->qc_pend_bytes = 0;
	return c->qc_npend != 0;
}
