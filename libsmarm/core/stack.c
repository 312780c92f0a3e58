/* SPDX-License-Identifier: MIT */
/*
 * stack.c - actor stacks: guarded stacks (a guard below the usable
 * reserve) and dense stacks (no guard, a canary instead), the chunk
 * mappings that default-shaped ones are carved from, the pools, the
 * recycle zap, the park-path shrink and the stack introspection.
 *
 * A stack is given to an actor when the actor first runs (not at spawn),
 * so spawning is a slot claim and a queue push, and a burst of
 * spawned-then-exiting actors cycles through a handful of pooled stacks
 * instead of mapping one each. The mode (SMARM_STACK_*) is fixed then.
 * AUTO becomes GUARDED while the node has fewer than stk_budget guarded
 * stacks (stk_guarded: carved or with a mapping of their own) or a freed
 * one is at hand, and memory can be mapped for it; else DENSE. The
 * budget is set by vm.max_map_count (two mappings per own stack); for
 * carved stacks, which need none, it bounds their page tables (about
 * 2 KiB each with the 1 MiB guard) and the pages they keep, so a node
 * of a million small actors still runs most of them dense.
 *
 * Chunks. A chunk is one anonymous MAP_NORESERVE mapping (no huge
 * pages) of cv_per stacks of one shape (struct smarm__carve, node.h),
 * carved in address order under pool_lock. A freed carved stack goes on
 * its kind's free list, linked through a word inside it (cv_link); it is
 * never unmapped alone: every chunk is unmapped at node close. A small
 * record off the chunk (struct smarm__chunk, malloc'd before the lock)
 * links it into its kind's list of chunks and, until carving reaches it,
 * the spare list: a thread that mapped a chunk while another thread's
 * new chunk still had room keeps its own as a spare instead of unmapping
 * it. (Two link words inside the chunk kept a page resident per chunk of
 * guarded stacks: 264 B per parked actor.) The two kinds:
 *
 * Dense (the node's default reserve R), offset so that each stack's top
 * lands 64 bytes below a page boundary:
 *
 *   chunk: [ .... |c0][ stack 0 ......|c1][ stack 1 ......|c2] ... [pad]
 *          ^page 0     ^chunk+page-64    ^+R
 *
 * Stack i spans [low_i, low_i + R) with low_i = chunk + page - 64 + i*R.
 * Its lowest word is a canary (ci), which sits in the same page as the
 * top of stack i-1, so an actor parked near its top touches one page,
 * canary included. A free stack's
 * canary word is its link word. There is no guard: an overflow runs
 * into the neighbour's stack. The canary and the saved sp are checked
 * at every switch-out (smarm__stack_dense_verify), and a violation
 * aborts with a diagnostic.
 *
 * Dense, of actors that give their parked stack back (stk_dp,
 * SMARM_OPT_STACK_RELEASE: parkstk.c), the node's default reserve R:
 * stack i spans [chunk + i*R, + R), its canary lowest, in a page of its
 * own, so releasing a stack's pages releases nobody else's canary or
 * free-list link; at twice a page resident while in use, not one.
 *
 * Guarded (the node's default reserve R and guard G), wherever the
 * kernel has guard regions (stk_guards, probed once per process by
 * arch/linux.c, read at node open):
 *
 *   chunk: [ guard 0 | stack 0 ][ guard 1 | stack 1 ] ...
 *          ^chunk     ^+G       ^+G+R
 *
 * Stack i's base (its guard's low end) is chunk + i*(G+R). Every guard
 * is a guard region (MADV_GUARD_INSTALL), installed for all the chunk's
 * stacks right after the chunk is mapped (process_madvise, up to 32 per
 * call, where the kernel takes it; else one madvise per guard); a write
 * there faults like a PROT_NONE page, at the same addresses, so
 * stackdiag.c classifies it alike. Guard regions do not split the
 * mapping, so a chunk is one kernel mapping (adjacent chunks merge), and
 * vm.max_map_count does not bound these stacks: address space and page
 * tables do (G+R reserved per stack). Stack 0's guard is the chunk's
 * lowest page, so an unprobed frame that jumps the guard of stack i
 * lands in stack i-1's reserve,
 * or for stack 0 below the chunk: as it would land in whatever lies
 * below a stack with a mapping of its own. A free stack's link word is
 * the top word of its reserve: its actor's first frame touched that
 * page, and the zap keeps it.
 *
 * Own mappings: guarded stacks of another shape, and all guarded
 * stacks where guard regions are missing or SMARM__NO_GUARD_REGIONS is
 * set in the environment at node open (tests force this fallback so),
 * are one mapping each, [guard PROT_NONE][usable reserve]: two kernel
 * mappings, which vm.max_map_count caps (stk_budget). Dense stacks of
 * another reserve are one mapping each, no guard.
 *
 * Recycle zap: a default-shaped stack going back to a pool or free list
 * keeps its top 64 KiB resident and gives the rest of its usable
 * reserve back (MADV_DONTNEED; never its guard), outside the pool lock;
 * at the default 64 KiB reserve that is no syscall at all.
 * Park-path shrink: see smarm__stack_park_hook in stack.h.
 *
 * Ownership: a stack belongs to one slot from first run to finalize
 * (or to a hibernation: sched.c hibernate_return, wait.c WAIT-10). Then
 * a default-shaped guarded one goes to the releasing worker's small
 * cache if it has room, else a carved one to its free list and one with
 * its own mapping to the node's pool (not full) or unmapped; a dense one
 * to its free list (default reserve) or unmapped. Worker caches are
 * flushed back when a run ends; chunks are unmapped at node close.
 * Locking: a worker cache is touched only by its own worker (no lock);
 * pool_lock (STACK rank) guards pool, pool_len and the state of both
 * carve kinds; no syscall is made and no fresh page is faulted under it
 * (chunk records are allocated before it, and the link words written
 * there lie in pages touched before). The stack fields of a slot (hwm,
 * stk_parks, stk_shrinks) are written by whoever holds the actor's claim
 * and read lock-free by smarm__stack_info, which re-checks the
 * generation.
 * Invariants: INV-1 every pooled guarded stack (n->pool) has the node's
 * default shape and a mapping of its own. INV-2 a stack lies in a chunk
 * iff it has the node's default shape and is dense, or guarded while
 * stk_guards is not NONE (fixed from open to close); a dense one lies
 * in a stk_dp chunk iff its actor gives its parked stack back. INV-3 a
 * dense stack attached to an actor holds canary_of(low) in its lowest
 * word (but while its pages are given back: parkstk.c), and its
 * saved sp stays within [low + DENSE_HEAD, low + reserve] while switched
 * out (else abort). INV-4 every guard of a mapped guarded chunk is
 * installed, and no guard is ever zapped, written or handed out.
 * INV-5 stk_guarded counts the guarded stacks that exist (attached,
 * cached, pooled, free in a chunk); a carved stack counts from its
 * first carving to node close (stk_gd.cv_carved of them).
 * See: docs/architecture/stacks.md.
 */

#include "stack.h"

#include "node.h"
#include "sched.h"
#include "slot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHUNK_BYTES ((size_t)16 << 20) /* aim per chunk mapping */
#define CHUNK_PER_MAX 256u	       /* stacks per chunk at most */
#define DENSE_HEAD 64u /* lowest bytes of a dense stack: canary line */
#define CANARY_MAGIC 0x736d61726d21c0deull
#define MAP_RESERVE_SLACK 8192 /* mappings left to the rest of the process */
#define NO_GUARDS_ENV "SMARM__NO_GUARD_REGIONS" /* tests: own mappings */

static size_t page_up_sz(size_t v, size_t page)
{
	return (v + page - 1) & ~(page - 1);
}

/* The canary of a dense stack depends on its address: a stale copy of
 * another stack's canary does not pass. */
static uint64_t canary_of(uintptr_t low)
{
	return CANARY_MAGIC ^ (uint64_t)low;
}

/*
 * The geometry of a carve kind: guard 0 is dense, else guarded. own:
 * dense stacks that share no page (stk_dp, parkstk.c): stack i spans
 * [chunk + i*R, + R), its canary lowest, in a page of its own.
 */
static void carve_geometry(struct smarm__carve *cv, size_t reserve,
			   size_t guard, size_t page, bool own)
{
	size_t per;
	memset(cv, 0, sizeof *cv);
	cv->cv_stride = guard + reserve;
	cv->cv_guard = guard;
	per = CHUNK_BYTES / cv->cv_stride;
	cv->cv_per = per < 1		   ? 1
		     : per > CHUNK_PER_MAX ? CHUNK_PER_MAX
					   : (uint32_t)per;
	if (guard == 0 && own) {
		cv->cv_first = 0;
		cv->cv_link = 0; /* the canary word */
		cv->cv_len = (size_t)cv->cv_per * cv->cv_stride;
	} else if (guard == 0) {
		/* Tops 64 bytes below a page boundary: a page of pad. */
		cv->cv_first = page - DENSE_HEAD;
		cv->cv_link = 0; /* the canary word */
		cv->cv_len = (size_t)cv->cv_per * cv->cv_stride + page;
	} else {
		/* Stack 0's guard lowest. */
		cv->cv_first = 0;
		cv->cv_link = cv->cv_stride - sizeof(void *);
		cv->cv_len = (size_t)cv->cv_per * cv->cv_stride;
	}
}

void smarm__stack_node_init(struct smarm_node *n)
{
	long maps = smarm__max_map_count(65530);
	size_t page = smarm__page_size();
	n->stk_budget = maps > MAP_RESERVE_SLACK
				? (int64_t)(maps - MAP_RESERVE_SLACK) / 2
				: 0;
	n->stk_guards = getenv(NO_GUARDS_ENV) != NULL ? SMARM__GUARDS_NONE
						      : smarm__guards_probe();
	carve_geometry(&n->stk_dn, n->stk_reserve, 0, page, false);
	carve_geometry(&n->stk_dp, n->stk_reserve, 0, page, true);
	carve_geometry(&n->stk_gd, n->stk_reserve, n->stk_guard, page, false);
}

/* ------------------------------------------------------------ ranges */

/*
 * The part of a stack of `size` bytes below its top `retain` bytes
 * (rounded up to a page, so more is kept, never less): [0, *len) from the
 * usable base. False when nothing is left to give back (retain >= size)
 * or on overflow.
 */
bool smarm__stack_retain_range(size_t size, size_t retain, size_t page,
			       size_t *len)
{
	size_t keep;
	if (retain > SIZE_MAX - (page - 1))
		return false;
	keep = page_up_sz(retain, page);
	if (keep >= size)
		return false;
	*len = size - keep;
	return true;
}

/*
 * The whole pages between a high-water mark and the live sp that a
 * shrink may give back: [page_up(hwm), page_down(sp - page)), the page
 * below sp being the redzone (the SysV red zone plus spill margin). False
 * when no whole page fits, hwm >= sp, or the arithmetic would wrap.
 */
bool smarm__stack_shrink_range(uintptr_t hwm, uintptr_t sp, size_t page,
			       uintptr_t *lo, size_t *len)
{
	uintptr_t a;
	uintptr_t b;
	if (hwm >= sp || sp < page || hwm > UINTPTR_MAX - (page - 1))
		return false;
	a = (hwm + page - 1) & ~(uintptr_t)(page - 1);
	b = (sp - page) & ~(uintptr_t)(page - 1);
	if (a >= b)
		return false;
	*lo = a;
	*len = b - a;
	return true;
}

/* Give back all but the top RECYCLE_RETAIN bytes of [low, low+size). */
static void zap(uintptr_t low, size_t size)
{
	size_t page = smarm__page_size();
	size_t len;
	uintptr_t a;
	uintptr_t b;
	if (!smarm__stack_retain_range(size, SMARM__RECYCLE_RETAIN, page, &len))
		return;
	/* Round inward: a dense stack's lowest page is shared. */
	a = (low + page - 1) & ~(uintptr_t)(page - 1);
	b = (low + len) & ~(uintptr_t)(page - 1);
	if (a < b)
		madvise((void *)a, b - a, MADV_DONTNEED); /* advisory */
}

/* ------------------------------------------------------------ chunks */

/* A chunk of one carve kind, on its kind's lists (pool_lock). */
struct smarm__chunk {
	char *base;		    /* the mapping, cv_len bytes */
	struct smarm__chunk *next;  /* the kind's next chunk */
	struct smarm__chunk *spare; /* next spare, while one */
};

static uintptr_t chunk_stack(const struct smarm__carve *cv, char *chunk,
			     uint32_t i)
{
	return (uintptr_t)chunk + cv->cv_first + (uintptr_t)i * cv->cv_stride;
}

/* A new chunk of kind cv with its guards installed, or NULL. */
static struct smarm__chunk *map_chunk(struct smarm_node *n,
				      const struct smarm__carve *cv)
{
	struct smarm__chunk *k = malloc(sizeof *k);
	char *c;
	if (k == NULL)
		return NULL;
	c = mmap(NULL, cv->cv_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1,
		 0);
	if (c == MAP_FAILED) {
		free(k);
		return NULL;
	}
	/* A huge page would make one parked actor cost 2 MiB. */
	madvise(c, cv->cv_len, MADV_NOHUGEPAGE);
	if (cv->cv_guard != 0 &&
	    smarm__guards_install(n->stk_guards, c + cv->cv_first, cv->cv_guard,
				  cv->cv_stride, cv->cv_per) != 0) {
		munmap(c, cv->cv_len);
		free(k);
		return NULL;
	}
	k->base = c;
	k->next = NULL;
	k->spare = NULL;
	return k;
}

/*
 * A free stack of kind cv (its base), or 0 when none can be had.
 * *fresh: it was carved just now (never handed out before). may_carve
 * false: only a freed one (AUTO over its budget).
 */
static uintptr_t carve_take(struct smarm_node *n, struct smarm__carve *cv,
			    bool may_carve, bool *fresh)
{
	struct smarm__chunk *mapped = NULL;
	uintptr_t base = 0;
	*fresh = false;
	for (;;) {
		smarm__glock(&n->pool_lock, &n->pool_lock_n, SMARM__RANK_STACK);
		if (mapped != NULL) {
			mapped->next = cv->cv_chunks;
			cv->cv_chunks = mapped;
			mapped->spare = cv->cv_spare;
			cv->cv_spare = mapped;
		}
		if (cv->cv_free != NULL) {
			base = (uintptr_t)cv->cv_free;
			cv->cv_free = *(void **)(base + cv->cv_link);
			cv->cv_nfree--;
		} else if (!may_carve) {
			smarm__unlock(&n->pool_lock, SMARM__RANK_STACK);
			return 0;
		} else {
			if ((cv->cv_carve == NULL ||
			     cv->cv_next == cv->cv_per) &&
			    cv->cv_spare != NULL) {
				cv->cv_carve = cv->cv_spare->base;
				cv->cv_spare = cv->cv_spare->spare;
				cv->cv_next = 0;
			}
			if (cv->cv_carve != NULL && cv->cv_next < cv->cv_per) {
				base = chunk_stack(cv, cv->cv_carve,
						   cv->cv_next++);
				cv->cv_carved++;
				*fresh = true;
			}
		}
		smarm__unlock(&n->pool_lock, SMARM__RANK_STACK);
		/* A chunk just mapped always has room: at most one map. */
		if (base != 0 || mapped != NULL)
			return base;
		mapped = map_chunk(n, cv);
		if (mapped == NULL)
			return 0;
	}
}

/* Put a free stack of kind cv on its free list; the page of its link
 * word is resident (see Locking). */
static void carve_put(struct smarm_node *n, struct smarm__carve *cv, void *base)
{
	smarm__glock(&n->pool_lock, &n->pool_lock_n, SMARM__RANK_STACK);
	*(void **)((char *)base + cv->cv_link) = cv->cv_free;
	cv->cv_free = base;
	cv->cv_nfree++;
	smarm__unlock(&n->pool_lock, SMARM__RANK_STACK);
}

/* Node close: unmap every chunk of kind cv and forget its stacks. */
static void carve_fini(struct smarm__carve *cv)
{
	while (cv->cv_chunks != NULL) {
		struct smarm__chunk *k = cv->cv_chunks;
		cv->cv_chunks = k->next;
		munmap(k->base, cv->cv_len);
		free(k);
	}
	cv->cv_carve = NULL;
	cv->cv_spare = NULL;
	cv->cv_next = 0;
	cv->cv_free = NULL;
	cv->cv_nfree = 0;
	cv->cv_carved = 0;
}

/* ----------------------------------------------------------- guarded */

static void *map_guarded(struct smarm_node *n, size_t reserve, size_t guard)
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
	atomic_fetch_add_explicit(&n->stk_guarded, 1, memory_order_relaxed);
	return base;
}

static void unmap_guarded(struct smarm_node *n, void *base, size_t len)
{
	munmap(base, len);
	atomic_fetch_sub_explicit(&n->stk_guarded, 1, memory_order_relaxed);
}

static bool default_shaped(struct smarm_node *n, struct smarm__slot *s)
{
	return s->stk_reserve == n->stk_reserve && s->stk_guard == n->stk_guard;
}

/* Default-shaped guarded stacks are carved from chunks (INV-2). */
static bool guarded_carved(struct smarm_node *n)
{
	return n->stk_guards != SMARM__GUARDS_NONE;
}

/* A default-shaped guarded stack that leaves a worker's hands: back to
 * its chunk's free list, or the pool, or unmapped. */
static void guarded_put(struct smarm_node *n, void *base)
{
	bool kept = false;
	if (guarded_carved(n)) {
		/* The actor's first frames may have left its top poisoned. */
		SMARM_STACK_UNPOISON((char *)base + n->stk_gd.cv_link,
				     sizeof(void *));
		carve_put(n, &n->stk_gd, base);
		return;
	}
	smarm__glock(&n->pool_lock, &n->pool_lock_n, SMARM__RANK_STACK);
	if (n->pool_len < n->pool_cap) {
		n->pool[n->pool_len++] = base;
		kept = true;
	}
	smarm__unlock(&n->pool_lock, SMARM__RANK_STACK);
	if (!kept)
		unmap_guarded(n, base, n->stk_reserve + n->stk_guard);
}

/*
 * A guarded stack for s: cached, carved or pooled if default-shaped,
 * else a new mapping. budgeted (AUTO): once the node's guarded stacks
 * reach the budget, only a cached, freed or pooled one. Returns 0,
 * SMARM_EAGAIN (over budget) or SMARM_ENOMEM.
 */
static int acquire_guarded(struct smarm_node *n, struct smarm__slot *s,
			   bool budgeted)
{
	struct smarm__worker *w = smarm__worker_of(n);
	bool deflt = default_shaped(n, s);
	bool fresh = false;
	void *base = NULL;
	if (deflt && w != NULL && w->stk_ncache > 0) {
		/* Relaxed atomic stores: SMARM_STAT_STACK_POOL reads it. */
		__atomic_store_n(&w->stk_ncache, w->stk_ncache - 1,
				 __ATOMIC_RELAXED);
		base = w->stk_cache[w->stk_ncache];
	} else if (deflt && guarded_carved(n)) {
		/* AUTO's budget counts carved stacks too: past it, only a
		 * freed one (page tables and touched pages stay bounded). */
		bool may_carve = !budgeted ||
				 atomic_load_explicit(&n->stk_guarded,
						      memory_order_relaxed) <
					 n->stk_budget;
		base = (void *)carve_take(n, &n->stk_gd, may_carve, &fresh);
		if (base == NULL)
			return may_carve ? SMARM_ENOMEM : SMARM_EAGAIN;
	} else if (deflt) {
		smarm__glock(&n->pool_lock, &n->pool_lock_n, SMARM__RANK_STACK);
		if (n->pool_len > 0)
			base = n->pool[--n->pool_len];
		smarm__unlock(&n->pool_lock, SMARM__RANK_STACK);
	}
	if (base == NULL) {
		if (budgeted &&
		    atomic_load_explicit(&n->stk_guarded,
					 memory_order_relaxed) >= n->stk_budget)
			return SMARM_EAGAIN;
		base = map_guarded(n, s->stk_reserve, s->stk_guard);
	}
	if (base == NULL)
		return SMARM_ENOMEM;
	SMARM_STACK_UNPOISON((char *)base + s->stk_guard, s->stk_reserve);
	if (fresh) {
		atomic_fetch_add_explicit(&n->stk_guarded, 1,
					  memory_order_relaxed);
		/* Fault in the page of its link word now, not when it is
		 * freed under the pool lock. */
		*(void **)((char *)base + n->stk_gd.cv_link) = NULL;
	}
	s->stk_mode = SMARM_STACK_GUARDED;
	__atomic_store_n(&s->stk_base, base, __ATOMIC_RELEASE);
	return 0;
}

static inline __attribute__((always_inline)) void
release_guarded(struct smarm_node *n, struct smarm__slot *s, void *base)
{
	struct smarm__worker *w;
	if (!default_shaped(n, s)) {
		unmap_guarded(n, base, s->stk_reserve + s->stk_guard);
		return;
	}
	w = smarm__worker_of(n);
	zap((uintptr_t)base + s->stk_guard, s->stk_reserve);
	/* The cache counts against the cap: cap 0 keeps nothing there. */
	if (w != NULL && w->stk_ncache < SMARM__WORKER_STACKS &&
	    w->stk_ncache < n->pool_cap) {
		w->stk_cache[w->stk_ncache] = base;
		__atomic_store_n(&w->stk_ncache, w->stk_ncache + 1,
				 __ATOMIC_RELAXED);
		return;
	}
	guarded_put(n, base);
}

/* ------------------------------------------------------------- dense */

/* The carve kind of s's dense stack of the default reserve: stacks of
 * actors that give theirs back while parked share no page (stk_dp). */
static struct smarm__carve *dense_kind(struct smarm_node *n,
				       const struct smarm__slot *s)
{
	return smarm__pstk_on(s) ? &n->stk_dp : &n->stk_dn;
}

static int acquire_dense(struct smarm_node *n, struct smarm__slot *s)
{
	uintptr_t low;
	bool fresh;
	if (s->stk_reserve == n->stk_reserve) {
		low = carve_take(n, dense_kind(n, s), true, &fresh);
	} else {
		void *m = mmap(NULL, s->stk_reserve, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				       MAP_STACK,
			       -1, 0);
		low = m == MAP_FAILED ? 0 : (uintptr_t)m;
	}
	if (low == 0)
		return SMARM_ENOMEM;
	SMARM_STACK_UNPOISON((void *)low, s->stk_reserve);
	*(uint64_t *)low = canary_of(low);
	s->stk_guard = 0;
	s->stk_mode = SMARM_STACK_DENSE;
	__atomic_store_n(&s->stk_base, (void *)low, __ATOMIC_RELEASE);
	atomic_fetch_add_explicit(&n->stk_dense, 1, memory_order_relaxed);
	return 0;
}

static inline __attribute__((always_inline)) void
release_dense(struct smarm_node *n, struct smarm__slot *s, void *base)
{
	atomic_fetch_sub_explicit(&n->stk_dense, 1, memory_order_relaxed);
	if (s->stk_reserve != n->stk_reserve) {
		munmap(base, s->stk_reserve);
		return;
	}
	zap((uintptr_t)base, s->stk_reserve);
	/* A frame that reached the bottom may have left it poisoned. */
	SMARM_STACK_UNPOISON(base, DENSE_HEAD);
	carve_put(n, dense_kind(n, s), base);
}

/*
 * Called from finish_switch each time a dense-stacked actor leaves the
 * CPU (INV-3). Reads the canary line that the actor's own frames may
 * have poisoned under ASan, hence the attribute.
 */
__attribute__((no_sanitize_address)) void
smarm__stack_dense_verify(struct smarm__slot *s)
{
	uintptr_t low = (uintptr_t)s->stk_base;
	uintptr_t top = low + s->stk_reserve;
	uintptr_t sp = (uintptr_t)s->sp;
	char msg[560];
	size_t len;
	int k;

	if (sp >= low + DENSE_HEAD && sp <= top &&
	    *(volatile uint64_t *)low == canary_of(low))
		return;
	len = smarm__stackdiag_actor(s, msg, sizeof msg - 1);
	if (sp > top)
		k = snprintf(msg + len, sizeof msg - len,
			     " has a corrupt dense stack: its saved stack "
			     "pointer is %zu bytes above the top",
			     (size_t)(sp - top));
	else if (sp < low + DENSE_HEAD)
		k = snprintf(msg + len, sizeof msg - len,
			     " overflowed its dense stack (no guard page): its "
			     "saved stack pointer is at depth %zu, past the "
			     "end",
			     (size_t)(top - sp));
	else
		k = snprintf(msg + len, sizeof msg - len,
			     " overflowed its dense stack (no guard page): the "
			     "canary at its low end was overwritten");
	if (k > 0)
		len += (size_t)k;
	if (len < sizeof msg - 1) {
		k = snprintf(msg + len, sizeof msg - len,
			     " (reserve=%zu). The memory below it (another "
			     "actor's stack) may be corrupt: aborting. Raise "
			     "SMARM_OPT_STACK_RESERVE or use "
			     "SMARM_STACK_GUARDED.\n",
			     s->stk_reserve);
		if (k > 0)
			len += (size_t)k;
	}
	if (len > sizeof msg - 1)
		len = sizeof msg - 1;
	if (write(2, msg, len) < 0)
		len = 0;
	abort();
}

/* parkstk.c: the top of s's usable stack. */
uintptr_t smarm__stack_top(const struct smarm__slot *s)
{
	return (uintptr_t)s->stk_base + s->stk_guard + s->stk_reserve;
}

/* parkstk.c: a released dense stack's canary, back before its bytes. */
void smarm__stack_canary_put(struct smarm__slot *s)
{
	uintptr_t low = (uintptr_t)s->stk_base;
	*(volatile uint64_t *)low = canary_of(low);
}

/* ------------------------------------------------------------ common */

/*
 * The SMARM_STACK_* mode stk_mode value m (slot.h) holds or asks for:
 * the node's where it names none.
 */
int smarm__stack_mode_of(const struct smarm_node *n, unsigned m)
{
	if (m & SMARM__STK_MODE_NODE)
		m = (unsigned)n->stk_mode;
	return (int)(m & SMARM__STK_MODE_MASK);
}

/* The first acquire of a spawn's request with flags: resolved. */
static __attribute__((noinline, cold)) unsigned
stack_request(struct smarm_node *n, struct smarm__slot *s, unsigned m)
{
	unsigned rel = (m & SMARM__STK_REL_SET) ? m : (unsigned)n->stk_mode;
	if (rel & SMARM__STK_REL)
		s->park_fl |= SMARM__PF_RELEASE;
	return (unsigned)smarm__stack_mode_of(n, m);
}

/*
 * 0, or SMARM_ENOMEM; or 1: s's parked stack was given back (or held
 * for that), and is back now (parkstk.c), its stack attached all along.
 */
int smarm__stack_acquire(struct smarm_node *n, struct smarm__slot *s)
{
	int rc;
	unsigned m = s->stk_mode;
	if (SMARM_UNLIKELY(m & SMARM__STK_FLAGS)) {
		if (m & SMARM__STK_OUT) {
			smarm__pstk_resume(n, s);
			return 1;
		}
		m = stack_request(n, s, m); /* park_fl cleared at install */
	}
	if (m != SMARM_STACK_DENSE) {
		rc = acquire_guarded(n, s, m == SMARM_STACK_AUTO);
		/* AUTO turns dense over budget, or when mapping fails. */
		if (rc == 0 || m == SMARM_STACK_GUARDED)
			return rc;
	}
	return acquire_dense(n, s);
}

/* The one release; inlined into each entry point below, so that the
 * end of an actor (smarm__finalize, hot) keeps its copy inline. */
static inline __attribute__((always_inline)) void
stack_release(struct smarm_node *n, struct smarm__slot *s)
{
	void *base = s->stk_base;
	if (base == NULL)
		return;
	__atomic_store_n(&s->stk_base, NULL, __ATOMIC_RELAXED);
	if (s->stk_mode == SMARM_STACK_DENSE)
		release_dense(n, s, base);
	else
		release_guarded(n, s, base);
}

void smarm__stack_release(struct smarm_node *n, struct smarm__slot *s)
{
	stack_release(n, s);
}

/* A second caller of smarm__stack_release would have it outlined from
 * smarm__finalize (LTO): a hibernation, rare, has its own copy. */
__attribute__((cold, noinline)) void
smarm__stack_release_hibernated(struct smarm_node *n, struct smarm__slot *s)
{
	stack_release(n, s);
}

/* End of a run: hand a worker's cached stacks back. */
void smarm__stack_cache_flush(struct smarm_node *n, struct smarm__worker *w)
{
	while (w->stk_ncache > 0) {
		void *base = w->stk_cache[w->stk_ncache - 1];
		__atomic_store_n(&w->stk_ncache, w->stk_ncache - 1,
				 __ATOMIC_RELAXED);
		guarded_put(n, base);
	}
}

void smarm__stack_pool_fini(struct smarm_node *n)
{
	for (uint32_t i = 0; i < n->pool_len; i++)
		unmap_guarded(n, n->pool[i], n->stk_reserve + n->stk_guard);
	n->pool_len = 0;
	free(n->pool);
	n->pool = NULL;
	atomic_fetch_sub_explicit(&n->stk_guarded, (int64_t)n->stk_gd.cv_carved,
				  memory_order_relaxed);
	carve_fini(&n->stk_gd);
	carve_fini(&n->stk_dn);
	carve_fini(&n->stk_dp);
}

/* ---------------------------------------------------- shrink and info */

/* The rare half of smarm__stack_park_hook: sp - hwm is over threshold. */
void smarm__stack_shrink(struct smarm_node *n, struct smarm__slot *s)
{
	uintptr_t lo;
	size_t len;
	if (s->stk_parks < SMARM__SHRINK_COOLDOWN)
		return;
	if (!smarm__stack_shrink_range(s->hwm, (uintptr_t)s->sp,
				       smarm__page_size(), &lo, &len))
		return;
	/* Errors are ignored: a kernel without MADV_FREE never shrinks. */
	madvise((void *)lo, len, MADV_FREE);
	__atomic_store_n(&s->hwm, (uintptr_t)s->sp, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stk_parks, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->stk_shrinks, s->stk_shrinks + 1, __ATOMIC_RELAXED);
	atomic_fetch_add_explicit(&n->stk_shrinks, 1, memory_order_relaxed);
}

uint64_t smarm__stack_touched(const struct smarm__slot *s, const void *base,
			      struct smarm__stk_resident *win)
{
	unsigned char vec[512]; /* without a window: 2 MiB per call */
	size_t page = smarm__page_size();
	uintptr_t lo, hi;
	uint64_t n = 0;
	if (base == NULL)
		return 0;
	lo = ((uintptr_t)base + s->stk_guard) & ~(uintptr_t)(page - 1);
	hi = ((uintptr_t)base + s->stk_guard + s->stk_reserve + page - 1) &
	     ~(uintptr_t)(page - 1);
	while (lo < hi) {
		size_t len, pages;
		if (win != NULL && lo >= win->sr_lo && lo < win->sr_hi) {
			uintptr_t end = hi < win->sr_hi ? hi : win->sr_hi;
			for (uintptr_t p = lo; p < end; p += page)
				n += win->sr_vec[(p - win->sr_lo) / page] & 1u;
			lo = end;
			continue;
		}
		/* A new window from here; past the mapping's end (a stack
		 * of its own, a chunk's last stacks): ENOMEM, and the
		 * stack alone is asked. */
		if (win != NULL &&
		    mincore((void *)lo, SMARM__RESIDENT_WINDOW * page,
			    win->sr_vec) == 0) {
			win->sr_lo = lo;
			win->sr_hi = lo + SMARM__RESIDENT_WINDOW * page;
			continue;
		}
		len = hi - lo;
		if (len > sizeof vec * page)
			len = sizeof vec * page;
		pages = len / page;
		if (mincore((void *)lo, len, vec) != 0)
			break; /* not mapped (cannot happen under the lock) */
		for (size_t i = 0; i < pages; i++)
			n += vec[i] & 1u;
		lo += len;
	}
	return n * page;
}

int smarm__stack_info(struct smarm_node *n, uint64_t pid, int key, int64_t *out)
{
	struct smarm__slot *s = smarm__slot_live(n, pid);
	void *base;
	int64_t v;

	if (key < SMARM_STACK_INFO_RESERVE || key > SMARM_STACK_INFO_SHRINKS)
		return SMARM_EINVAL;
	if (s == NULL)
		return SMARM_ENOPROC;
	/* Base first (acquire): the guard and mode it was attached with are
	 * then visible. */
	base = __atomic_load_n(&s->stk_base, __ATOMIC_ACQUIRE);
	switch (key) {
	case SMARM_STACK_INFO_RESERVE:
		v = (int64_t)__atomic_load_n(&s->stk_reserve, __ATOMIC_RELAXED);
		break;
	case SMARM_STACK_INFO_GUARD:
		v = (int64_t)__atomic_load_n(&s->stk_guard, __ATOMIC_RELAXED);
		break;
	case SMARM_STACK_INFO_MODE:
		v = smarm__stack_mode_of(
			n, __atomic_load_n(&s->stk_mode, __ATOMIC_RELAXED));
		break;
	case SMARM_STACK_INFO_DEPTH_HIGH_WATER:
		v = (int64_t)smarm__stack_depth_hwm(s, base);
		break;
	case SMARM_STACK_INFO_PARKS_SINCE_SHRINK:
		/* UINT32_MAX: a park being marked (parkstk.c PSTK-3). */
		v = __atomic_load_n(&s->stk_parks, __ATOMIC_RELAXED);
		break;
	default:
		v = __atomic_load_n(&s->stk_shrinks, __ATOMIC_RELAXED);
		break;
	}
	/* Coherent with the pid: the actor did not end meanwhile. */
	if (smarm__slot_live(n, pid) != s)
		return SMARM_ENOPROC;
	*out = v;
	return 0;
}
