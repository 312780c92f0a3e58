/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the one ring buffer: a power-of-two array of fixed-size
 * elements used as a double-ended queue. The run queue and the work-first
 * deques (sched.c), channel elements (chan.c) and mutex waiters
 * (mutex.c) are all this ring; the element size is the caller's, passed
 * to every call as a constant so each use compiles to plain index
 * arithmetic.
 *
 * Ownership: the owner embeds the ring and decides where its buffer
 * comes from: smarm__ring_grow allocates (free it with smarm__ring_fini),
 * smarm__ring_init_fixed lends an array that is never grown or freed.
 * Locking: the owner's lock guards every call that changes the ring.
 * rg_len is atomic so that smarm__ring_len may be read without that lock
 * (a snapshot: idle checks, statistics); writers store it relaxed.
 * Invariants: RING-1 rg_cap is 0 or a power of two, and rg_len <= rg_cap.
 * RING-2 element i (0 = front) lives at index (rg_head + i) & (rg_cap - 1).
 * See: docs/architecture/ring.md.
 */
#ifndef SMARM_CORE_RING_H
#define SMARM_CORE_RING_H

#include <stdatomic.h>
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

#endif /* SMARM_CORE_RING_H */
