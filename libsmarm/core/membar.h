/* SPDX-License-Identifier: MIT */
/*
 * membar.h - asymmetric memory barriers, for a store-then-load handshake
 * (Dekker's) between a hot path and a rare one: the hot side orders its
 * store before its load with a compiler barrier alone, and the rare side
 * pays for both with membarrier(2), which runs a full barrier on every
 * CPU that runs a thread of this process. Where the kernel has no
 * private expedited membarrier, both sides are seq_cst fences.
 *
 * Use: hot side `store A; smarm__membar_light(); load B`, rare side
 * `store B; smarm__membar_heavy(); load A`: at least one side sees the
 * other's store. The node open registers the process (smarm__membar_init)
 * before any hot side of that node can run.
 *
 * Built on the pair: the owner/visitor handshake, for state that one
 * thread (its owner) changes on a hot path and other threads touch
 * rarely (a worker's slot cache and wake slot). The owner flags its
 * access (busy), then looks for visitors: with none, it may use plain
 * loads and stores until it clears the flag; with some, it clears the
 * flag and takes the shared way (a lock, an exchange), as visitors do.
 * A visitor announces itself (visitors), runs the heavy barrier, then
 * waits for busy to clear before it takes the shared way. So either the
 * owner sees the visitor, or the visitor sees the owner's access and
 * waits it out; the owner's path has no atomic read-modify-write. An
 * owner access must not nest in another on the same flag (none runs in
 * a signal handler: runtime text is never preempted).
 * Ownership: one process-wide flag, set once. Locking: none.
 * See: docs/architecture/locks.md.
 */
#ifndef SMARM_CORE_MEMBAR_H
#define SMARM_CORE_MEMBAR_H

#include <stdatomic.h>
#include <stdbool.h>

#include "../arch/arch.h"

/* Set once by smarm__membar_init: the heavy side is membarrier(2). */
extern bool smarm__membar_heavy_ok;

/* Register the process for membarrier(2), once; safe to call again. */
void smarm__membar_init(void);

/* The hot side: its store before its load. */
static inline __attribute__((always_inline)) void smarm__membar_light(void)
{
	if (__builtin_expect(smarm__membar_heavy_ok, 1))
		atomic_signal_fence(memory_order_seq_cst);
	else
		atomic_thread_fence(memory_order_seq_cst);
}

/* The rare side: a barrier on every thread of the process. */
void smarm__membar_heavy(void);

/* The owner's way in: true if it may use plain accesses until
 * smarm__owner_leave; false (busy cleared) if it must take the shared
 * way, as a visitor does. */
static inline __attribute__((always_inline)) bool
smarm__owner_enter(_Atomic uint32_t *busy, _Atomic uint32_t *visitors)
{
	atomic_store_explicit(busy, 1, memory_order_relaxed);
	smarm__membar_light();
	if (__builtin_expect(
		    atomic_load_explicit(visitors, memory_order_relaxed) == 0,
		    1))
		return true;
	atomic_store_explicit(busy, 0, memory_order_relaxed);
	return false;
}

/* The end of a plain access: its stores before the flag's end. */
static inline __attribute__((always_inline)) void
smarm__owner_leave(_Atomic uint32_t *busy)
{
	atomic_store_explicit(busy, 0, memory_order_release);
}

/* A visitor's way in: announce, then the heavy barrier. */
void smarm__visit_begin(_Atomic uint32_t *visitors);

/* Wait out an owner's plain access begun before the announcement. */
void smarm__visit_wait(_Atomic uint32_t *busy);

static inline void smarm__visit_end(_Atomic uint32_t *visitors)
{
	atomic_fetch_sub_explicit(visitors, 1, memory_order_release);
}

#endif
