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
 * Ownership: one process-wide flag, set once. Locking: none.
 * See: docs/architecture.md (Locks).
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

#endif
