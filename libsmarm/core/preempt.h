/* SPDX-License-Identifier: MIT */
/*
 * preempt.h - preemption: the monitor thread that signals overrunning
 * actors, the pinned FIFO that resumes a preempted actor on its worker,
 * and the runtime's no-preemption brackets around user callbacks.
 *
 * Ownership, locking, invariants: stated in preempt.c.
 * See: docs/architecture/preemption.md.
 */
#ifndef SMARM_CORE_PREEMPT_H
#define SMARM_CORE_PREEMPT_H

#include <stdbool.h>
#include <stdint.h>

struct smarm_node;
struct smarm__slot;
struct smarm__worker;

void smarm__preempt_setup(void);
void smarm__monitor_start(struct smarm_node *n);
void smarm__monitor_stop(struct smarm_node *n);
/*
 * The monitor's nap, as a poke sees it (node.h mon_deep): SHORT, no poke
 * wakes it; LONG, longer than a slot scan period: a worker that starts
 * idling while others run wakes it; BACKED, longer than an async slice
 * too (backed off while the node idled): a worker leaving a sleep wakes
 * it as well. A poke of level l wakes a nap of level l or more.
 */
enum { SMARM__MON_SHORT = 0, SMARM__MON_LONG = 1, SMARM__MON_BACKED = 2 };
void smarm__monitor_poke(struct smarm_node *n, uint32_t level);
/* A timer due at deadline was inserted (under the timer lock). */
void smarm__monitor_timer(struct smarm_node *n, uint64_t deadline);
void smarm__pin_push(struct smarm__worker *w, struct smarm__slot *s,
		     bool fixed);
struct smarm__slot *smarm__pin_take(struct smarm__worker *w, bool only_due);
bool smarm__pin_take_moveable(struct smarm__worker *w, uint32_t idx);

/*
 * Runtime code that calls user code (destructors, drop callbacks) from
 * actor context brackets it so that no async preemption or stop lands
 * inside a runtime operation. s may be NULL (not an actor).
 */
int smarm__preempt_allow_object(const void *addr);
int smarm__preempt_disallow_object(const void *addr);
void smarm__nopreempt_enter(struct smarm__slot *s);
void smarm__nopreempt_leave(struct smarm__slot *s);

/*
 * Whether pc lies in an actor's own code: text a preemption may
 * interrupt (the host executable unless libsmarm is linked into it, and
 * the objects allowed with smarm_preempt_allow_object; never libc, the
 * loader, libffi or libsmarm). Read as the SIGURG handler reads the
 * table (INV-P3, INV-P4). Async-signal-safe; smarm__preempt_setup must
 * have run for the executable to count.
 */
bool smarm__text_is_actors(uintptr_t pc);

/*
 * Whether the interrupted context uc runs with the signal mask of its
 * worker w: another means a host's signal handler was running, or the
 * actor changed its mask, which a switch (or an actor's end) would carry
 * to the next actors of w. Async-signal-safe.
 */
bool smarm__uc_mask_is_workers(const struct smarm__worker *w, const void *uc);

/*
 * Whether the interrupted context uc is in libc, called from an actor's
 * own code (as above) through libc's frames alone: abort() called by the
 * actor (fault.c); *pc is then where that call returns to. s is the
 * actor running there: a return of its patched for a preemption
 * (INV-P5) is followed to its real target. The stack is read below hi
 * only. Async-signal-safe.
 */
bool smarm__called_by_actors(const struct smarm__slot *s, const void *uc,
			     uintptr_t hi, uintptr_t *pc);

#endif /* SMARM_CORE_PREEMPT_H */
