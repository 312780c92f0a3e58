/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the allocating halves of the ring buffer and of the chunked
 * queue (ring.h): the ring's growth by doubling and its release; the
 * queue's segments, linked one at a time, recycled, trimmed and freed.
 * Everything else about both is inline in ring.h.
 *
 * Ownership: a buffer allocated here belongs to the ring until
 * smarm__ring_fini (or until smarm__ring_move hands back the old one);
 * a segment belongs to its queue until smarm__queue_fini, or until it is
 * freed as the front drains it or a truncation cuts it off.
 * Locking: the caller holds the owner's lock.
 * Invariants: ring.h RING-1 and RING-2 hold on return, also on failure;
 * QUEUE-1..5 hold on return. A growth allocates one segment (or takes
 * the spare) and copies no element (QUEUE-4).
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

/* Elements a segment may hold: SMARM__QSEG_BYTES' worth, at least one. */
static uint32_t qseg_max(size_t esz)
{
	size_t n = SMARM__QSEG_BYTES / esz;
	return n == 0 ? 1 : (uint32_t)n;
}

/* A segment for cap elements, empty at index at (lo == hi == at). */
static struct smarm__qseg *qseg_alloc(size_t esz, uint32_t cap, uint32_t at)
{
	struct smarm__qseg *s =
		malloc(offsetof(struct smarm__qseg, sg_data) + cap * esz);
	if (s == NULL)
		return NULL;
	s->sg_next = NULL;
	s->sg_cap = cap;
	s->sg_lo = at;
	s->sg_hi = at;
	return s;
}

void *smarm__queue_push_back_grow(struct smarm__queue *q, size_t esz,
				  uint32_t first)
{
	uint32_t max = qseg_max(esz);
	uint32_t len = smarm__queue_len(q);
	struct smarm__qseg *s = q->qu_spare;
	if (len > UINT32_MAX - max)
		return NULL; /* the count would not fit */
	if (s != NULL) {
		q->qu_spare = NULL;
		s->sg_next = NULL;
		s->sg_lo = 0;
		s->sg_hi = 0;
	} else {
		/* Double from first, up to max; the first segment is first. */
		uint32_t cap = q->qu_tail == NULL ? first
			       : q->qu_tail->sg_cap < max / 2
				       ? q->qu_tail->sg_cap * 2
				       : max;
		s = qseg_alloc(esz, cap < max ? cap : max, 0);
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
	uint32_t max = qseg_max(esz);
	uint32_t cap = first < max ? first : max;
	uint32_t len = smarm__queue_len(q);
	struct smarm__qseg *s;
	if (len == UINT32_MAX)
		return NULL;
	s = qseg_alloc(esz, cap, cap); /* filled from its back end */
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
		free(s);
}

void smarm__queue_truncate(struct smarm__queue *q, struct smarm__qcur c,
			   uint32_t len)
{
	struct smarm__qseg *s;
	if (c.qc_seg == NULL)
		return; /* no segment: the queue was empty */
	s = c.qc_seg->sg_next;
	while (s != NULL) {
		struct smarm__qseg *next = s->sg_next;
		free(s);
		s = next;
	}
	c.qc_seg->sg_next = NULL;
	c.qc_seg->sg_hi = c.qc_i;
	q->qu_tail = c.qc_seg;
	if (len == 0) /* c is where the walk began: the head (QUEUE-2) */
		c.qc_seg->sg_lo = c.qc_seg->sg_hi = 0;
	smarm__queue_set_len(q, len);
}

void smarm__queue_fini(struct smarm__queue *q)
{
	struct smarm__qseg *s = q->qu_head;
	while (s != NULL) {
		struct smarm__qseg *next = s->sg_next;
		free(s);
		s = next;
	}
	free(q->qu_spare);
	smarm__queue_init(q);
}
