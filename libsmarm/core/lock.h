/* SPDX-License-Identifier: MIT */
/*
 * lock.h - the runtime's internal lock: Drepper's three-state futex mutex
 * (0 free, 1 locked, 2 contended) with a short spin, plus lock ranks.
 *
 * Ownership: locks are embedded in the objects they guard.
 * Locking: ranks form a total order, and a thread may only acquire a lock
 * whose rank is higher than every rank it already holds (so never two of
 * the same rank):
 *
 *   SLOT (slot cold lock, free list): the lowest rank, taken first;
 *        another lock may be taken under it, never it under one
 *     < STACK (the node's stack pool: finalize recycles a stack under
 *        the dying actor's cold lock)
 *     < CHANNEL (a channel's or green mutex's state, io tables)
 *     < TIMERS (the node's timer heap)
 *     < RUNQ (the node's run queue; pushing is legal under anything)
 *     < HANDLE (a handle pool's free list, handle.h: a leaf, taken
 *        under anything, nothing under it)
 *     < SCACHE (a worker's free-slot cache, slot.c: a leaf, taken alone
 *        or under the free list)
 *
 * Debug builds check the order on every acquire (a per-thread bitmask) and
 * panic with "lock order violated". Actor code never parks, yields or
 * switches while holding one of these locks; that is what makes a plain
 * per-OS-thread mask correct.
 * Invariants: INV-1 no runtime lock is held across a context switch.
 * INV-2 never call user or plugin code while holding a runtime lock.
 * See: docs/architecture.md (Locks).
 */
#ifndef SMARM_CORE_LOCK_H
#define SMARM_CORE_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "../arch/arch.h"
#include "assert.h"

enum smarm__lock_rank {
	SMARM__RANK_SLOT = 1, /* lowest: taken before (outside) any other */
	SMARM__RANK_STACK = 2,
	SMARM__RANK_CHANNEL = 3,
	SMARM__RANK_TIMERS = 4,
	SMARM__RANK_RUNQ = 5,
	SMARM__RANK_HANDLE = 6,
	SMARM__RANK_SCACHE = 7,
};

typedef struct {
	uint32_t v; /* 0 free, 1 locked, 2 locked with waiters (atomic) */
} smarm__lock_t;

void smarm__lock_slow(smarm__lock_t *l);

#ifndef NDEBUG
void smarm__rank_acquire(int rank);
void smarm__rank_release(int rank);
#else
#define smarm__rank_acquire(r) ((void)(r))
#define smarm__rank_release(r) ((void)(r))
#endif

static inline void smarm__lock(smarm__lock_t *l, int rank)
{
	uint32_t expect = 0;
	smarm__rank_acquire(rank);
	if (!__atomic_compare_exchange_n(&l->v, &expect, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		smarm__lock_slow(l);
}

static inline bool smarm__trylock(smarm__lock_t *l, int rank)
{
	uint32_t expect = 0;
	if (!__atomic_compare_exchange_n(&l->v, &expect, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	smarm__rank_acquire(rank);
	return true;
}

static inline void smarm__unlock(smarm__lock_t *l, int rank)
{
	smarm__rank_release(rank);
	if (__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2)
		smarm__futex_wake(&l->v, 1);
}

#endif /* SMARM_CORE_LOCK_H */
