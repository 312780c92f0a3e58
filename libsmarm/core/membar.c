/* SPDX-License-Identifier: MIT */
/*
 * membar.c - the heavy side of membar.h: membarrier(2) with
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED, registered once per process.
 *
 * Invariant: smarm__membar_heavy_ok becomes true only after the
 * registration succeeded, and never goes back; a node is opened (and so
 * every light side of it runs) after its open called smarm__membar_init,
 * so both sides of a pair agree on which barriers they use. The
 * visitor's side of the owner/visitor handshake is here too (membar.h).
 * See: docs/architecture/locks.md.
 */
#include "membar.h"

#include "assert.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

bool smarm__membar_heavy_ok;

static pthread_once_t membar_once = PTHREAD_ONCE_INIT;

static void membar_register(void)
{
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
		return; /* seccomp, an old kernel: fences on both sides */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		    0, 0) != 0)
		return;
	__atomic_store_n(&smarm__membar_heavy_ok, true, __ATOMIC_RELEASE);
}

void smarm__membar_init(void)
{
	(void)pthread_once(&membar_once, membar_register);
}

void smarm__membar_heavy(void)
{
	if (!smarm__membar_heavy_ok) {
		atomic_thread_fence(memory_order_seq_cst);
		return;
	}
	/*
	 * The light sides rely on it: no fence here would do instead. It
	 * fails only for want of kernel memory (ENOMEM: try again) or in
	 * an unregistered process (EPERM: a child of fork on a kernel that
	 * does not carry the registration over; register it).
	 */
	for (int tries = 0; tries < 1000; tries++) {
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0,
			    0) == 0)
			return;
		if (errno == EPERM)
			(void)syscall(SYS_membarrier,
				      MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
				      0, 0);
		else
			sched_yield();
	}
	smarm__panic("membarrier(2) keeps failing");
}

void smarm__visit_begin(_Atomic uint32_t *visitors)
{
	atomic_fetch_add_explicit(visitors, 1, memory_order_seq_cst);
	smarm__membar_heavy();
}

void smarm__visit_wait(_Atomic uint32_t *busy)
{
	for (unsigned spins = 0;
	     atomic_load_explicit(busy, memory_order_acquire) != 0; spins++) {
		if (spins < 64)
			smarm__cpu_relax();
		else
			sched_yield(); /* the owner lost its CPU meanwhile */
	}
}
