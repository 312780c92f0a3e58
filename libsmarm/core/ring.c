/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the allocating half of the ring buffer (ring.h): growth by
 * doubling and release. Everything else about the ring is inline.
 *
 * Ownership: a buffer allocated here belongs to the ring until
 * smarm__ring_fini (or until smarm__ring_move hands back the old one).
 * Locking: the caller holds the owner's lock.
 * Invariants: ring.h RING-1 and RING-2 hold on return, also on failure.
 * See: ring.h.
 */
#include "ring.h"

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
