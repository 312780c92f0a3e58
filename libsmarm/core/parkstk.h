/* SPDX-License-Identifier: MIT */
/*
 * parkstk.h - a parked actor's stack given back (SMARM_OPT_STACK_RELEASE,
 * issue 33): its live bytes copied to the heap and its pages released
 * while it waits, copied back before it runs (parkstk.c).
 *
 * Ownership, locking, invariants: stated in parkstk.c.
 * See: docs/architecture/stacks.md, "Parked stacks given back".
 */
#ifndef SMARM_CORE_PARKSTK_H
#define SMARM_CORE_PARKSTK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct smarm_node;
struct smarm__slot;

/*
 * The running actor me (smarm__pstk_on): its room for the records of a wait
 * that must stay off its stack, at least size bytes, or NULL when it
 * has none that large yet. Lock-free, allocates nothing (legal under a
 * primitive's lock). The room is the actor's alone and is used by one
 * wait at a time.
 */
void *smarm__pstk_room(struct smarm__slot *me, size_t size);
/* Make me's room at least size bytes (no lock held): false on ENOMEM,
 * and then the wait keeps its records on its stack and gives nothing
 * back. */
bool smarm__pstk_room_grow(struct smarm__slot *me, size_t size);
/*
 * Mark me's next park as one whose wait keeps nothing on its stack that
 * others use: the park may give the stack back (PSTK-1). Just before
 * smarm__wait_park; smarm__pstk_unmark when it returned an error (no
 * park happened). Owner only.
 */
void smarm__pstk_mark(struct smarm__slot *me);
void smarm__pstk_unmark(struct smarm__slot *me);
/*
 * The rare half of the park hook (stack.h smarm__stack_park_hook): the
 * park count read UINT32_MAX, which is either a marked park or a count
 * that saturated. The worker, after s's sp is saved, before it is
 * PARKED.
 */
void smarm__pstk_parked(struct smarm_node *n, struct smarm__slot *s);
/*
 * Before s runs again (sched.c first_run_make: s->sp is NULL and s has
 * a stack): wait for a release in progress, copy a released stack back,
 * and restore s->sp (PSTK-2).
 */
void smarm__pstk_resume(struct smarm_node *n, struct smarm__slot *s);
/* The monitor, at each look (node pk_ns > 0): release the stacks of
 * actors parked since before now - pk_ns. */
void smarm__pstk_sweep(struct smarm_node *n, uint64_t now);
/* Free a slot's record (with its block of per-actor state). */
void smarm__pstk_free(void *rec);
/* Node close: the sweep FIFO. */
void smarm__pstk_node_fini(struct smarm_node *n);

#endif /* SMARM_CORE_PARKSTK_H */
