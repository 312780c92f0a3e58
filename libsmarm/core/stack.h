/* SPDX-License-Identifier: MIT */
/*
 * stack.h - actor stacks: acquiring, recycling and shrinking them
 * (stack.c), their introspection, and the fault diagnostics of stack
 * overflows (stackdiag.c).
 *
 * Ownership, locking, invariants: stated in stack.c and stackdiag.c.
 * See: docs/architecture/stacks.md.
 */
#ifndef SMARM_CORE_STACK_H
#define SMARM_CORE_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node.h"
#include "parkstk.h"
#include "slot.h"

#define SMARM__SHRINK_THRESHOLD (256u * 1024u) /* sp - hwm to shrink */
#define SMARM__SHRINK_COOLDOWN 64u	       /* parks between shrinks */
#define SMARM__RECYCLE_RETAIN (64u * 1024u)    /* kept resident on recycle */

int smarm__stack_acquire(struct smarm_node *n, struct smarm__slot *s);
void smarm__stack_release(struct smarm_node *n, struct smarm__slot *s);
/* smarm__stack_release for a hibernation (sched.c hibernate_return),
 * kept out of the end of an actor's hot path. */
void smarm__stack_release_hibernated(struct smarm_node *n,
				     struct smarm__slot *s);
void smarm__stack_pool_fini(struct smarm_node *n);
void smarm__stack_cache_flush(struct smarm_node *n, struct smarm__worker *w);
void smarm__stack_node_init(struct smarm_node *n);
void smarm__stack_shrink(struct smarm_node *n, struct smarm__slot *s);
void smarm__stack_dense_verify(struct smarm__slot *s);
/* The SMARM_STACK_* mode of stk_mode value m (slot.h): a request's
 * or the attached stack's. */
int smarm__stack_mode_of(const struct smarm_node *n, unsigned m);
/* parkstk.c: the top of s's usable stack; a dense stack's canary put
 * back after its pages were released. */
uintptr_t smarm__stack_top(const struct smarm__slot *s);
void smarm__stack_canary_put(struct smarm__slot *s);
int smarm__stack_info(struct smarm_node *n, uint64_t pid, int key,
		      int64_t *out);
/*
 * A walk's window of page residency (smarm__stack_touched): stacks
 * mostly lie side by side in chunks, so one mincore(2) of a window
 * answers for many of them. Empty: sr_lo == sr_hi.
 */
#define SMARM__RESIDENT_WINDOW 2048 /* pages (8 MiB of 4 KiB pages) */
struct smarm__stk_resident {
	uintptr_t sr_lo, sr_hi; /* the pages sr_vec describes */
	unsigned char sr_vec[SMARM__RESIDENT_WINDOW];
};

/*
 * Bytes of the pages of s's usable stack resident in memory (mincore,
 * page by page; base is s->stk_base as the caller loaded it, NULL: 0;
 * a dense stack's pages at either end are shared with its neighbours).
 * Only asks the kernel: never touches the stack, so it is safe while
 * the actor runs; the caller keeps the mapping alive (s's cold lock).
 * win (may be NULL) carries a window across calls of one walk: pages
 * it already covers are answered from it (as resident as they were
 * when it was read).
 */
uint64_t smarm__stack_touched(const struct smarm__slot *s, const void *base,
			      struct smarm__stk_resident *win);
bool smarm__stack_retain_range(size_t size, size_t retain, size_t page,
			       size_t *len);
bool smarm__stack_shrink_range(uintptr_t hwm, uintptr_t sp, size_t page,
			       uintptr_t *lo, size_t *len);
void smarm__stackdiag_install(void);
/*
 * "smarm: actor I.G" and its labels (subsys.h: " (name 'N', ...)"), as
 * every report on the actor in s begins, into buf (cap bytes, not
 * NUL-terminated); returns the length. Async-signal-safe.
 */
size_t smarm__stackdiag_actor(const struct smarm__slot *s, char *buf,
			      size_t cap);
enum { SMARM__FAULT_FOREIGN = 0, SMARM__FAULT_GUARD, SMARM__FAULT_OVERSHOOT };
int smarm__stackdiag_classify(uintptr_t addr, uintptr_t base, size_t guard,
			      size_t reserve, uintptr_t *below);

/*
 * The sampled deepest use of s's stack in bytes (0: never descheduled
 * at depth, or no stack yet), from its lowest saved sp. base is
 * s->stk_base, loaded by the caller with acquire. Lock-free reads.
 */
static inline uint64_t smarm__stack_depth_hwm(const struct smarm__slot *s,
					      const void *base)
{
	uintptr_t hwm = __atomic_load_n(&s->hwm, __ATOMIC_RELAXED);
	uintptr_t top;
	if (base == NULL || hwm == 0)
		return 0;
	top = (uintptr_t)base + s->stk_guard + s->stk_reserve;
	return hwm <= top ? (uint64_t)(top - hwm) : 0;
}

/*
 * Park path (the scheduler, after the actor's sp is saved and before
 * park_return): count the park and, rarely, give back the pages of a
 * deep excursion the actor has returned from. The common case is an
 * increment, two loads and a compare.
 */
static inline void smarm__stack_park_hook(struct smarm_node *n,
					  struct smarm__slot *s)
{
	uintptr_t sp = (uintptr_t)s->sp;
	uint32_t parks = s->stk_parks;
	if (__builtin_expect(parks != UINT32_MAX, 1)) {
		__atomic_store_n(&s->stk_parks, parks + 1, __ATOMIC_RELAXED);
	} else {
		/* A marked park (it may give its stack back) or a count
		 * that saturated: parkstk.c PSTK-3. */
		smarm__pstk_parked(n, s);
		return;
	}
	if (sp >= s->hwm && sp - s->hwm >= SMARM__SHRINK_THRESHOLD)
		smarm__stack_shrink(n, s);
}

/*
 * Switch-out check of a dense stack (no guard page catches an overflow,
 * so the canary and the saved sp are checked every time it leaves the
 * CPU). Guarded stacks pay one compare.
 */
static inline void smarm__stack_switched_out(struct smarm__slot *s)
{
	if (s->stk_mode == SMARM_STACK_DENSE)
		smarm__stack_dense_verify(s);
}

#endif /* SMARM_CORE_STACK_H */
