/* SPDX-License-Identifier: MIT */
/*
 * lock.h - the runtime's internal locks: Drepper's three-state futex mutex
 * (0 free, 1 locked, 2 contended) with a short spin, a reader-writer lock
 * for read-mostly tables built on it, plus lock ranks.
 *
 * Ownership: locks are embedded in the objects they guard.
 * Locking: ranks form a total order, and a thread may only acquire a lock
 * whose rank is higher than every rank it already holds (so never two of
 * the same rank):
 *
 *   SLOT (slot cold lock, free list): the lowest rank, taken first;
 *        another lock may be taken under it, never it under one
 *     < REG (a node's registry of names, mailboxes and groups, a
 *        smarm__rwlock_t, and the process-wide message-type table:
 *        taken under a cold lock where state is attached to an actor,
 *        never two at once)
 *     < STACK (the node's stack pool: finalize recycles a stack under
 *        the dying actor's cold lock)
 *     < CHANNEL (a channel's or green mutex's state, io tables)
 *     < TIMERS (the node's timer heap)
 *     < RUNQ (the node's run queue; pushing is legal under anything)
 *     < HANDLE (a handle pool's free list, handle.h: a leaf, taken
 *        under anything, nothing under it)
 *     < TABLE (the root-exit orphan table, the OTP terminal records:
 *        taken with no other runtime lock held, nothing under it)
 *     < SCACHE (a worker's free-slot cache, slot.c: a leaf, taken alone
 *        or under the free list)
 *
 * Debug builds check the order on every acquire (a per-thread bitmask) and
 * panic with "lock order violated". Actor code never parks, yields or
 * switches while holding one of these locks; that is what makes a plain
 * per-OS-thread mask correct.
 * Invariants: INV-1 no runtime lock is held across a context switch.
 * INV-2 never call user or plugin code while holding a runtime lock.
 * See: docs/architecture/locks.md.
 */
#ifndef SMARM_CORE_LOCK_H
#define SMARM_CORE_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "../arch/arch.h"
#include "assert.h"

enum smarm__lock_rank {
	SMARM__RANK_SLOT = 1, /* lowest: taken before (outside) any other */
	SMARM__RANK_REG = 2,
	SMARM__RANK_STACK = 3,
	SMARM__RANK_CHANNEL = 4,
	SMARM__RANK_MBOX = 5, /* a mailbox's waiter, under a band's lock */
	SMARM__RANK_TIMERS = 6,
	SMARM__RANK_RUNQ = 7,
	SMARM__RANK_HANDLE = 8,
	SMARM__RANK_TABLE = 9,	 /* a leaf: the root-exit orphan table, the
				    OTP layer's terminal records, the
				    parked-stack FIFO (parkstk.c) */
	SMARM__RANK_SCACHE = 10, /* a leaf: a worker's free-slot cache */
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

static inline __attribute__((always_inline)) void smarm__lock(smarm__lock_t *l,
							      int rank)
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

static inline __attribute__((always_inline)) void
smarm__unlock(smarm__lock_t *l, int rank)
{
	smarm__rank_release(rank);
	if (__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2)
		smarm__futex_wake(&l->v, 1);
}

/*
 * A reader-writer lock for read-mostly tables (a node's registry).
 * Readers share it at the cost of one atomic add to enter and one
 * subtract to leave. Writers exclude each other with a mutex (rw_wlock,
 * which carries the rank), then raise the writer bit, which turns new
 * readers away, and wait for the readers inside to leave. Writers are
 * preferred: a stream of readers never starves one.
 *   rw_word  bit 0: a writer holds or wants the lock; bit 31: readers
 *            sleep on the word; bits 1..30: readers inside, times 2
 *            (a reader turned away takes its count back out).
 * Both sides follow the ranks like a mutex of the same rank.
 */
typedef struct {
	uint32_t rw_word;	/* see above (atomic) */
	smarm__lock_t rw_wlock; /* writers, one at a time */
} smarm__rwlock_t;

#define SMARM__RW_WRITER 1u
#define SMARM__RW_SLEEPERS 0x80000000u
#define SMARM__RW_READER 2u

void smarm__rw_rdlock_slow(smarm__rwlock_t *l);
void smarm__rw_wake_writer(smarm__rwlock_t *l);
void smarm__rw_wrlock(smarm__rwlock_t *l, int rank);
void smarm__rw_wrunlock(smarm__rwlock_t *l, int rank);

static inline void smarm__rw_rdlock(smarm__rwlock_t *l, int rank)
{
	smarm__rank_acquire(rank);
	if (SMARM_UNLIKELY(__atomic_fetch_add(&l->rw_word, SMARM__RW_READER,
					      __ATOMIC_ACQUIRE) &
			   SMARM__RW_WRITER))
		smarm__rw_rdlock_slow(l);
}

static inline void smarm__rw_rdunlock(smarm__rwlock_t *l, int rank)
{
	uint32_t v = __atomic_sub_fetch(&l->rw_word, SMARM__RW_READER,
					__ATOMIC_RELEASE);
	/* The last reader out while a writer waits: let it in. */
	if (SMARM_UNLIKELY((v & ~SMARM__RW_SLEEPERS) == SMARM__RW_WRITER))
		smarm__rw_wake_writer(l);
	smarm__rank_release(rank);
}

#endif /* SMARM_CORE_LOCK_H */
