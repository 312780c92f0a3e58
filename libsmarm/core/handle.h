/* SPDX-License-Identifier: MIT */
/*
 * handle.h - generation-checked handles for objects the caller frees
 * (channels, green mutexes, select sets): type-stable cell pools and the
 * decode every public entry runs before it touches an object.
 *
 * A handle is the address of the object's cell with a 16-bit generation
 * in the top bits: gen<<48 | address. The cell's first word (hc_self)
 * holds the live handle while the object exists and 0 once it is freed,
 * so decoding is one mask, one load and one compare: a freed or reused
 * cell holds another value and the handle is refused (SMARM_ESTATE).
 * Cells come from one virtual region per type, reserved once per
 * process, made read/write as the pool grows and never unmapped: a
 * stale handle always points at readable memory of the right type, and
 * a value that points outside the region, or not at a cell boundary,
 * is no handle of that type (SMARM_EINVAL). Freed cells are reused
 * oldest first (a FIFO), so a handle can alias a new object only after
 * its cell was reused 65535 times; the generation skips 0, so no handle
 * equals the plain address or NULL.
 *
 * Glossary.
 *   cell    one fixed-size slot of a pool (a power of two <= a page),
 *           starting with struct smarm__hcell.
 *   pool    a type's region, its free FIFO and its bump pointer.
 *   retire  store 0 in hc_self: from then on the handle decodes to
 *           SMARM_ESTATE; done by the object's free, under the object's
 *           own lock when it has one, so that of two racing frees one
 *           wins.
 *
 * Ownership: a pool is process-wide (objects are not tied to a node);
 * its region lives until the process ends. The owner of a cell (from
 * smarm__hpool_alloc to smarm__hpool_free) initialises every field but
 * hc_self and the fields it keeps valid across tenants (a lock, which
 * a stale caller may still take: never reset it).
 * Locking: hp_lock (HANDLE rank, a leaf) guards the free FIFO, hp_used
 * and the growth of the region. hc_self is atomic: written by the
 * owner (publish, retire), read by any decode.
 * Invariants: INV-1 hc_self is 0 or the one live handle of the cell.
 * INV-2 [hp_base, hp_base + hp_committed) is mapped read/write for the
 * rest of the process. INV-3 a cell is on the FIFO only with hc_self 0.
 * See: docs/architecture/handles.md.
 */
#ifndef SMARM_CORE_HANDLE_H
#define SMARM_CORE_HANDLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smarm/smarm.h"
#include "lock.h"

#define SMARM__HANDLE_GEN_SHIFT 48
#define SMARM__HANDLE_ADDR_MASK ((UINT64_C(1) << SMARM__HANDLE_GEN_SHIFT) - 1)

/* The header of every cell; the object's first member. */
struct smarm__hcell {
	_Atomic uint64_t hc_self; /* the live handle, 0 while free */
	uint32_t hc_next;	  /* FIFO link: next cell's index (hp_lock) */
	uint16_t hc_gen;	  /* last generation issued (hp_lock) */
};

struct smarm__hpool {
	size_t hp_cell;		     /* cell bytes (constant) */
	size_t hp_reserve;	     /* region bytes (constant) */
	_Atomic uintptr_t hp_base;   /* region, 0 until first alloc */
	_Atomic size_t hp_committed; /* read/write bytes from the base */
	smarm__lock_t hp_lock;	     /* HANDLE rank: fields below */
	size_t hp_used;		     /* bytes ever handed out */
	uint32_t hp_head, hp_tail;   /* free FIFO, oldest first */
	uint64_t hp_live;	     /* cells in use */
};

#define SMARM__HPOOL_NONE UINT32_MAX

/* The smallest power of two >= n, for n <= 4096 (a cell size). */
#define SMARM__CELL_SIZE(n)                                                    \
	((n) <= 64     ? 64                                                    \
	 : (n) <= 128  ? 128                                                   \
	 : (n) <= 256  ? 256                                                   \
	 : (n) <= 512  ? 512                                                   \
	 : (n) <= 1024 ? 1024                                                  \
	 : (n) <= 2048 ? 2048                                                  \
		       : 4096)

/* A pool of objects of `size` bytes in a region of `reserve` bytes. */
#define SMARM__HPOOL_INIT(size, reserve)                                       \
	{                                                                      \
		.hp_cell = SMARM__CELL_SIZE(size), .hp_reserve = (reserve),    \
		.hp_head = SMARM__HPOOL_NONE, .hp_tail = SMARM__HPOOL_NONE,    \
	}

/*
 * Take a cell: its hc_self is 0 until smarm__handle_publish, and *handle
 * is the value to publish. Returns 0 or SMARM_ENOMEM (the region is
 * full, or could not be reserved or grown).
 */
int smarm__hpool_alloc(struct smarm__hpool *p, void **cell, uint64_t *handle);

/* Give a retired cell back (it goes to the FIFO's tail). */
void smarm__hpool_free(struct smarm__hpool *p, void *cell);

/* Cells in use now (a snapshot; tests). */
uint64_t smarm__hpool_live(struct smarm__hpool *p);

/* The object is ready: from now on handle decodes to it. */
static inline void smarm__handle_publish(void *cell, uint64_t handle)
{
	struct smarm__hcell *c = cell;
	atomic_store_explicit(&c->hc_self, handle, memory_order_release);
}

/* The object is gone: its handle decodes to SMARM_ESTATE from now on. */
static inline void smarm__handle_retire(void *cell)
{
	struct smarm__hcell *c = cell;
	atomic_store_explicit(&c->hc_self, 0, memory_order_release);
}

/*
 * Retire the object of cell if handle still names it, in one atomic
 * step: of several callers racing with the same handle exactly one gets
 * true and owns the object from then on (for objects with no lock of
 * their own: a reply token).
 */
static inline bool smarm__handle_take(void *cell, const void *handle)
{
	struct smarm__hcell *c = cell;
	uint64_t want = (uint64_t)(uintptr_t)handle;
	return atomic_compare_exchange_strong_explicit(&c->hc_self, &want, 0,
						       memory_order_acq_rel,
						       memory_order_relaxed);
}

/* Does handle still name the object in cell? (Under its lock: exact.) */
static inline bool smarm__handle_live(const void *cell, const void *handle)
{
	const struct smarm__hcell *c = cell;
	return atomic_load_explicit(&c->hc_self, memory_order_acquire) ==
	       (uint64_t)(uintptr_t)handle;
}

/*
 * smarm__handle_cell for a pool whose cell size the caller knows at
 * compile time (cell_size == p->hp_cell, SMARM__CELL_SIZE of the object):
 * the boundary check is then a test against a constant, with no load of
 * the pool's cell size. The hot channel calls use it.
 */
static inline int smarm__handle_cell_sized(struct smarm__hpool *p,
					   size_t cell_size, const void *h,
					   void **cell)
{
	uintptr_t addr = (uintptr_t)h & SMARM__HANDLE_ADDR_MASK;
	size_t committed =
		atomic_load_explicit(&p->hp_committed, memory_order_acquire);
	uintptr_t off =
		addr - atomic_load_explicit(&p->hp_base, memory_order_relaxed);
	SMARM_ASSERT(cell_size == p->hp_cell);
	if (SMARM_UNLIKELY(off >= committed || (off & (cell_size - 1)) != 0))
		return SMARM_EINVAL;
	*cell = (void *)addr;
	return 0;
}

/*
 * The cell handle h of pool p names, live or not, into *cell: safe to
 * lock (the lock outlives tenants), but nothing else may be read before
 * smarm__handle_live under that lock says it is still h's object. For
 * objects whose every call takes their lock and checks there (channels,
 * mutexes): one check, not one before the lock and its twin under it.
 * Returns 0; SMARM_EINVAL h is no handle of this type (NULL, outside the
 * region, not a cell boundary). On an error *cell is unchanged.
 */
static inline int smarm__handle_cell(struct smarm__hpool *p, const void *h,
				     void **cell)
{
	return smarm__handle_cell_sized(p, p->hp_cell, h, cell);
}

/*
 * Decode handle h of pool p into *cell (smarm__handle_cell, and the
 * object must be live now). Returns 0; SMARM_EINVAL as there;
 * SMARM_ESTATE the object was freed (or the handle is forged). On an
 * error *cell is unchanged.
 */
static inline int smarm__handle_decode(struct smarm__hpool *p, const void *h,
				       void **cell)
{
	void *c;
	int rc = smarm__handle_cell(p, h, &c);
	if (rc != 0)
		return rc;
	if (SMARM_UNLIKELY(!smarm__handle_live(c, h)))
		return SMARM_ESTATE;
	*cell = c;
	return 0;
}

#endif /* SMARM_CORE_HANDLE_H */
