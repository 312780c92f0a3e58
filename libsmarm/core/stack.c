/* SPDX-License-Identifier: MIT */
/*
 * stack.c - actor stacks: one anonymous mapping each, a PROT_NONE guard
 * below the usable reserve, and a LIFO pool of default-shaped stacks.
 *
 * Layout, low to high: [guard PROT_NONE][usable reserve]; the initial
 * frame is built at the top. A stack is given to an actor when the actor
 * first runs (not at spawn), so spawning is a slot claim and a queue push,
 * and a burst of spawned-then-exiting actors cycles through a handful of
 * pooled stacks instead of mapping one each.
 *
 * Ownership: a stack belongs to one slot from first run to finalize, then
 * returns to the releasing worker's small cache, else the node's pool
 * (default shape, not full), else it is unmapped. Worker caches are
 * flushed back to the pool when a run ends.
 * Locking: a worker cache is touched only by its own worker (no lock);
 * pool_lock (LEAF) guards pool and pool_len; no syscall is made under it
 * (mmap and munmap happen outside).
 * Invariants: INV-1 every pooled stack has the node's default shape.
 * See: docs/architecture.md (Stacks).
 */

#include "core.h"

#include <stdlib.h>
#include <sys/mman.h>

static void *map_stack(size_t reserve, size_t guard)
{
	void *base = mmap(
		NULL, reserve + guard, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (mprotect(base, guard, PROT_NONE) != 0) {
		munmap(base, reserve + guard);
		return NULL;
	}
	return base;
}

static bool default_shaped(struct smarm_node *n, struct smarm__slot *s)
{
	return s->stk_reserve == n->stk_reserve && s->stk_guard == n->stk_guard;
}

/* This thread's worker cache if it is a worker of n, else NULL. */
static struct smarm__worker *cache_of(struct smarm_node *n)
{
	struct smarm__worker *w = smarm__tls_worker;
	return (w != NULL && w->node == n) ? w : NULL;
}

int smarm__stack_acquire(struct smarm_node *n, struct smarm__slot *s)
{
	struct smarm__worker *w = cache_of(n);
	void *base = NULL;
	if (default_shaped(n, s) && w != NULL && w->stk_ncache > 0) {
		/* Relaxed atomic stores: SMARM_STAT_STACK_POOL reads it. */
		__atomic_store_n(&w->stk_ncache, w->stk_ncache - 1,
				 __ATOMIC_RELAXED);
		base = w->stk_cache[w->stk_ncache];
	} else if (default_shaped(n, s)) {
		smarm__lock(&n->pool_lock, SMARM__RANK_LEAF);
		if (n->pool_len > 0)
			base = n->pool[--n->pool_len];
		smarm__unlock(&n->pool_lock, SMARM__RANK_LEAF);
	}
	if (base == NULL)
		base = map_stack(s->stk_reserve, s->stk_guard);
	if (base == NULL)
		return SMARM_ENOMEM;
	SMARM_STACK_UNPOISON((char *)base + s->stk_guard, s->stk_reserve);
	s->stk_base = base;
	return 0;
}

void smarm__stack_release(struct smarm_node *n, struct smarm__slot *s)
{
	void *base = s->stk_base;
	if (base == NULL)
		return;
	s->stk_base = NULL;
	if (default_shaped(n, s)) {
		struct smarm__worker *w = cache_of(n);
		bool kept = false;
		/* The cache counts against the cap: cap 0 keeps nothing. */
		if (w != NULL && w->stk_ncache < SMARM__WORKER_STACKS &&
		    w->stk_ncache < n->pool_cap) {
			w->stk_cache[w->stk_ncache] = base;
			__atomic_store_n(&w->stk_ncache, w->stk_ncache + 1,
					 __ATOMIC_RELAXED);
			return;
		}
		smarm__lock(&n->pool_lock, SMARM__RANK_LEAF);
		if (n->pool_len < n->pool_cap) {
			n->pool[n->pool_len++] = base;
			kept = true;
		}
		smarm__unlock(&n->pool_lock, SMARM__RANK_LEAF);
		if (kept)
			return;
	}
	munmap(base, s->stk_reserve + s->stk_guard);
}

/* End of a run: hand a worker's cached stacks back to the pool. */
void smarm__stack_cache_flush(struct smarm_node *n, struct smarm__worker *w)
{
	while (w->stk_ncache > 0) {
		void *base = w->stk_cache[w->stk_ncache - 1];
		__atomic_store_n(&w->stk_ncache, w->stk_ncache - 1,
				 __ATOMIC_RELAXED);
		bool kept = false;
		smarm__lock(&n->pool_lock, SMARM__RANK_LEAF);
		if (n->pool_len < n->pool_cap) {
			n->pool[n->pool_len++] = base;
			kept = true;
		}
		smarm__unlock(&n->pool_lock, SMARM__RANK_LEAF);
		if (!kept)
			munmap(base, n->stk_reserve + n->stk_guard);
	}
}

void smarm__stack_pool_fini(struct smarm_node *n)
{
	for (uint32_t i = 0; i < n->pool_len; i++)
		munmap(n->pool[i], n->stk_reserve + n->stk_guard);
	n->pool_len = 0;
	free(n->pool);
	n->pool = NULL;
}
