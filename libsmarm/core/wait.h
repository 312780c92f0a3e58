/* SPDX-License-Identifier: MIT */
/*
 * wait.h - the one wait protocol: how the running actor blocks on
 * something another party will signal (a channel, a mutex, a join, a
 * timer, an fd, a pool job), and how that party wakes it.
 *
 * Every blocking primitive is the same loop, written once here and used
 * by chan.c, mutex.c, actor.c (join), core_api.c (sleep), select.c and
 * pool.c:
 *
 *   smarm__wait_init(&w, me, deadline, undo, arg);   a safe point
 *   for (;;) {
 *           lock the primitive;
 *           if (it can answer now) { unlock; return answer; }
 *           reg = smarm__wait_open(&w);               new epoch
 *           store reg in the primitive;               under its lock
 *           unlock;
 *           rc = smarm__wait_park(&w);                timer, hook, park
 *           if (rc != 0) { remove reg; smarm__wait_retire(&w); return rc; }
 *           (woken: remove reg if still there, loop to re-check)
 *   }
 *
 * and on the waker's side, under the primitive's lock:
 *
 *   reg = the stored registration; clear it;
 *   smarm__wake_and_unlock(reg, &lock, rank);
 *
 * The invariants (argued in wait.c) are cited as WAIT-n. Between the
 * open and the park nothing may yield (WAIT-8).
 * See: docs/architecture/wait.md.
 */
#ifndef SMARM_CORE_WAIT_H
#define SMARM_CORE_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "smarm/smarm.h"
#include "lock.h"
#include "sched.h"
#include "timer.h"

struct smarm_node;
struct smarm__slot;
struct smarm__worker;

/*
 * A registration: what a waker needs to wake one wait of one actor. Kept
 * by the primitive under its lock; node == NULL means "nobody waits".
 */
struct smarm__waiter {
	struct smarm_node *node; /* NULL: no registration */
	uint64_t pid;		 /* the waiting actor */
	uint32_t epoch;		 /* its wait (slot.h: the state word) */
};

struct smarm__wait;

/*
 * Undo hook: the actor is leaving the wait for good (a stop ended it
 * inside the park, WAIT-4). It removes every registration of the wait and
 * disposes of anything handed over that will now never be returned. It
 * runs on the actor's own stack with no runtime lock held and may take
 * the primitive's lock.
 */
typedef void (*smarm__wait_undo_fn)(struct smarm__wait *w);

/*
 * wait.c WAIT-11: a primitive whose records can move off the stack tags
 * its undo arg (at least 2-aligned) with SMARM__WAIT_MOVABLE; for an
 * actor that gives its parked stack back, park then returns
 * SMARM__EWAIT_MOVE without parking (the round is left as after any
 * park error) and the primitive waits again, its records off the stack
 * and its arg untagged. Never returned to a caller of the API.
 */
#define SMARM__WAIT_MOVABLE 1u
#define SMARM__EWAIT_MOVE (-0x7001)

/* One wait of the running actor; lives on its stack for the call (off
 * it, for a hibernation: smarm__wait_hibernate). */
struct smarm__wait {
	struct smarm__slot *wt_me;   /* the waiting actor (running) */
	struct smarm_node *wt_node;  /* its node */
	uint64_t wt_pid;	     /* its pid */
	uint64_t wt_deadline;	     /* absolute ns; 0: unbounded */
	uint32_t wt_epoch;	     /* the epoch opened last */
	uint32_t wt_carried;	     /* 1: a traced send's wake recorded
					the receive it hands over (trace.h
					SMARM__TRF_RECV; sched.c), else 0 */
	smarm__wait_undo_fn wt_undo; /* NULL: nothing to undo */
	void *wt_arg;		     /* the primitive's context for undo */
};

/*
 * The one timeout rule (smarm.h, Conventions) as a wait's deadline:
 * SMARM_NO_TIMEOUT is unbounded (0); 0 is a deadline that has always
 * passed (1), so the primitive answers from what it finds and never
 * parks (its refusals still come first); anything else is now + the
 * timeout, saturating. Every timed call converts its timeout here.
 */
#define SMARM__DEADLINE_PASSED 1
static inline uint64_t smarm__timeout_deadline(uint64_t timeout_ns)
{
	if (timeout_ns == SMARM_NO_TIMEOUT)
		return 0;
	if (timeout_ns == 0)
		return SMARM__DEADLINE_PASSED;
	return smarm__deadline_after(timeout_ns);
}

/*
 * Start a wait of the running actor me, bounded by an absolute deadline
 * (0: none). A safe point: a pending stop ends the actor here.
 */
void smarm__wait_init(struct smarm__wait *w, struct smarm__slot *me,
		      uint64_t deadline, smarm__wait_undo_fn undo, void *arg);

/*
 * Open a new round of the wait (a new epoch, WAIT-1) and return the
 * registration to store. Lock-free: legal under the primitive's lock.
 */
struct smarm__waiter smarm__wait_open(struct smarm__wait *w);

/* Has the deadline passed? (false for an unbounded wait) */
bool smarm__wait_expired(const struct smarm__wait *w);

/*
 * Block in the round opened last: arm the deadline's timer (WAIT-3),
 * install the undo hook (WAIT-4), park, remove the hook. Returns 0 once
 * woken: by the registration's waker, the timer, or nothing at all that
 * the caller may rely on (WAIT-5): the caller re-checks. Returns an
 * error without parking (SMARM_ENOMEM: no timer entry; SMARM_EAGAIN:
 * parking is refused, WAIT-9): the round is still open, the caller
 * removes its registration, retires it and returns that status.
 * No runtime lock may be held.
 */
int smarm__wait_park(struct smarm__wait *w);

/*
 * Refuse (on true) or allow again (false) every park of the running
 * actor me (WAIT-9): the behaviour layer brackets a terminate that must
 * not block with it. A wait that finds its answer without parking is
 * not affected. The exit path allows parking again before each cleanup
 * handler and before the exit hooks.
 */
void smarm__wait_refuse(struct smarm__slot *me, bool on);

/*
 * smarm__wait_park, giving up the stack (WAIT-10): the actor parks in
 * the round opened last, its stack goes back to the pool, and once woken
 * (or stopped) it starts over on a fresh stack at fn(arg), with no frame
 * of the caller left; fn returning ends the actor normally. fn's first
 * call must be smarm__wait_resumed. w, and whatever the primitive
 * stored, must not be on the stack: it lives until fn is called. A
 * caller that found its primitive ready after the open wakes its own
 * round first (smarm__wait_self_wake), and goes on at fn at once.
 * Returns only on an error, as smarm__wait_park does: SMARM_EAGAIN
 * (WAIT-9) or SMARM_ENOMEM (the deadline's timer), or SMARM_ESTATE
 * inside a runtime callback or an exit (frames there must return).
 */
int smarm__wait_hibernate(struct smarm__wait *w, void (*fn)(void *), void *arg);

/*
 * The first call of a hibernated actor's continuation (WAIT-10): a stop
 * ends the actor here, its wait's undo hook first (WAIT-4); otherwise
 * the wait it hibernated in is uninstalled and returned.
 */
struct smarm__wait *smarm__wait_resumed(void);

/* Wake w's open round from its own actor (it stays runnable: its next
 * park or hibernation returns at once). */
void smarm__wait_self_wake(struct smarm__wait *w);

/* End a round that did not park (WAIT-6); a stop may end the actor. */
void smarm__wait_retire(struct smarm__wait *w);

/*
 * Stop path (actor.c): run the undo hook of the wait the actor is
 * blocked in, if any, exactly once.
 */
void smarm__wait_undo_current(struct smarm__slot *s);

/*
 * Waker side: hand a registration taken under `held` (rank `rank`) to
 * the scheduler and drop `held`. A waker that is a worker of the
 * waiter's node unlocks first (the node cannot go away under it); any
 * other thread wakes under the lock, so the waiter, and with it the
 * node's run, cannot end in between (WAIT-7).
 */
static inline void smarm__wake_and_unlock(struct smarm__waiter wt,
					  smarm__lock_t *held, int rank)
{
	struct smarm__worker *w = smarm__tls_worker;
	if (wt.node == NULL) {
		smarm__unlock(held, rank);
	} else if (w != NULL && w->node == wt.node) {
		smarm__unlock(held, rank);
		smarm__unpark_at(wt.node, wt.pid, wt.epoch);
	} else {
		smarm__unpark_at(wt.node, wt.pid, wt.epoch); /* WAIT-7 */
		smarm__unlock(held, rank);
	}
}

#endif /* SMARM_CORE_WAIT_H */
