/* SPDX-License-Identifier: MIT */
/*
 * region.h - a reserved span of address space whose front is made
 * read/write on demand: the one way the core grows a table in place, so
 * that what is in it never moves and a lock-free reader can index it
 * (the handle pools, handle.c; the slot table, slot.c).
 *
 * Reserving maps the whole span PROT_NONE (no memory, no commit charge);
 * committing makes a further stretch of it read/write, whose pages the
 * kernel zero-fills on first touch. A region is never shrunk; its owner
 * unmaps it whole, if ever. The owner keeps the base, the reserved size
 * and the committed size, and publishes the committed size itself (with
 * whatever ordering its readers need).
 * See: docs/architecture/handles.md,
 * docs/architecture/slots.md.
 */
#ifndef SMARM_CORE_REGION_H
#define SMARM_CORE_REGION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "smarm/smarm.h"

/* Reserve bytes of address space; NULL if the kernel refuses. */
static inline void *smarm__region_reserve(size_t bytes)
{
	void *base = mmap(NULL, bytes, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return base == MAP_FAILED ? NULL : base;
}

/*
 * Make [base + have, base + want) read/write, both page-aligned offsets
 * within the reservation: 0, or SMARM_ENOMEM (no memory to commit).
 */
static inline int smarm__region_commit(uintptr_t base, size_t have, size_t want)
{
	if (want <= have)
		return 0;
	return mprotect((void *)(base + have), want - have,
			PROT_READ | PROT_WRITE) == 0
		       ? 0
		       : SMARM_ENOMEM;
}

#endif
