/* SPDX-License-Identifier: MIT */
/*
 * handle.c - the type-stable cell pools behind generation-checked
 * handles (handle.h): reserving a type's region, growing its read/write
 * part, and the free FIFO.
 *
 * A region (region.h) is reserved PROT_NONE (no memory, no commit
 * charge) on the first alloc of its type and made read/write GROW_BYTES
 * at a time as cells are first handed out; it is never unmapped or made
 * unreadable again, which is what lets a decode read the first word of
 * any cell in [base, base + committed) without a lock. Freed cells go
 * to the tail of a FIFO and allocs take the head, so a cell comes back
 * only after every cell freed before it; new cells are cut from the
 * region only when the FIFO is empty.
 *
 * Ownership: process-wide; regions are never returned. Memory: a pool
 * keeps as many cells as were ever live at once (its peak), rounded up
 * to GROW_BYTES.
 * Locking: hp_lock (HANDLE rank, a leaf: nothing is taken under it).
 * Invariants: INV-1 (handle.h INV-2) hp_committed only grows, and only
 * after mprotect made the bytes read/write. INV-2 hp_used <= hp_committed
 * <= hp_reserve. INV-3 the region ends below 2^48, so an address fits
 * under the generation.
 * See: docs/architecture/handles.md.
 */
#include "handle.h"

#include "assert.h"
#include "region.h"

#include <sys/mman.h>

#define GROW_BYTES ((size_t)64 * 1024)

/* Under hp_lock: reserve the region on first use. */
static int pool_reserve(struct smarm__hpool *p)
{
	void *base;
	if (p->hp_base != 0)
		return 0;
	base = smarm__region_reserve(p->hp_reserve);
	if (base == NULL)
		return SMARM_ENOMEM;
	if ((uintptr_t)base + p->hp_reserve > SMARM__HANDLE_ADDR_MASK) {
		/* INV-3: never on x86-64 Linux without an explicit hint. */
		munmap(base, p->hp_reserve);
		return SMARM_ENOMEM;
	}
	atomic_store_explicit(&p->hp_base, (uintptr_t)base,
			      memory_order_release);
	return 0;
}

/* Under hp_lock: make GROW_BYTES more of the region read/write. */
static int pool_grow(struct smarm__hpool *p)
{
	size_t have = p->hp_committed;
	size_t add = GROW_BYTES;
	if (have >= p->hp_reserve)
		return SMARM_ENOMEM;
	if (add > p->hp_reserve - have)
		add = p->hp_reserve - have;
	if (smarm__region_commit(p->hp_base, have, have + add) != 0)
		return SMARM_ENOMEM;
	/* Release: a decode that sees the new size sees readable bytes. */
	atomic_store_explicit(&p->hp_committed, have + add,
			      memory_order_release);
	return 0;
}

static struct smarm__hcell *cell_at(struct smarm__hpool *p, uint32_t i)
{
	return (struct smarm__hcell *)(p->hp_base + (size_t)i * p->hp_cell);
}

static uint32_t cell_index(struct smarm__hpool *p, const void *cell)
{
	return (uint32_t)(((uintptr_t)cell - p->hp_base) / p->hp_cell);
}

int smarm__hpool_alloc(struct smarm__hpool *p, void **cell, uint64_t *handle)
{
	struct smarm__hcell *c;
	int rc = 0;
	uint16_t gen;

	smarm__lock(&p->hp_lock, SMARM__RANK_HANDLE);
	if (p->hp_head != SMARM__HPOOL_NONE) {
		c = cell_at(p, p->hp_head);
		p->hp_head = c->hc_next;
		if (p->hp_head == SMARM__HPOOL_NONE)
			p->hp_tail = SMARM__HPOOL_NONE;
	} else {
		rc = pool_reserve(p);
		if (rc == 0 && p->hp_used + p->hp_cell > p->hp_committed)
			rc = pool_grow(p);
		if (rc != 0) {
			smarm__unlock(&p->hp_lock, SMARM__RANK_HANDLE);
			return rc;
		}
		c = (struct smarm__hcell *)(p->hp_base + p->hp_used);
		p->hp_used += p->hp_cell;
	}
	SMARM_ASSERT(atomic_load_explicit(&c->hc_self, memory_order_relaxed) ==
		     0);
	gen = (uint16_t)(c->hc_gen + 1);
	if (gen == 0)
		gen = 1; /* generation 0 is never issued: no handle is 0 */
	c->hc_gen = gen;
	c->hc_next = SMARM__HPOOL_NONE;
	p->hp_live++;
	smarm__unlock(&p->hp_lock, SMARM__RANK_HANDLE);
	*cell = c;
	*handle = ((uint64_t)gen << SMARM__HANDLE_GEN_SHIFT) | (uintptr_t)c;
	return 0;
}

void smarm__hpool_free(struct smarm__hpool *p, void *cell)
{
	struct smarm__hcell *c = cell;
	uint32_t i;
	SMARM_ASSERT(atomic_load_explicit(&c->hc_self, memory_order_relaxed) ==
		     0);
	smarm__lock(&p->hp_lock, SMARM__RANK_HANDLE);
	i = cell_index(p, c);
	c->hc_next = SMARM__HPOOL_NONE;
	if (p->hp_tail == SMARM__HPOOL_NONE)
		p->hp_head = i;
	else
		cell_at(p, p->hp_tail)->hc_next = i;
	p->hp_tail = i;
	p->hp_live--;
	smarm__unlock(&p->hp_lock, SMARM__RANK_HANDLE);
}

uint64_t smarm__hpool_live(struct smarm__hpool *p)
{
	uint64_t n;
	smarm__lock(&p->hp_lock, SMARM__RANK_HANDLE);
	n = p->hp_live;
	smarm__unlock(&p->hp_lock, SMARM__RANK_HANDLE);
	return n;
}
