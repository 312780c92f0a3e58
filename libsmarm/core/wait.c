/* SPDX-License-Identifier: MIT */
/*
 * wait.c - the one wait protocol (wait.h): open, park, retire and undo
 * of a blocking wait of the running actor. Every blocking primitive of
 * the runtime goes through these four calls; nothing else in the library
 * opens a wait, arms a wait's timer or parks, so refusing every park of
 * an actor (WAIT-9) is one flag checked here.
 *
 * Glossary.
 *   wait       one blocking call of an actor (struct smarm__wait), made
 *              of one or more rounds.
 *   round      one epoch: opened by smarm__wait_open, ended by a wake
 *              (the waker consumes it) or by smarm__wait_retire.
 *   registration  (node, pid, epoch) stored by the primitive under its
 *              lock; the only thing a waker needs.
 *
 * Invariants. The argument that no wake is lost and no stale wake lands
 * is made here, once, for every primitive:
 *   WAIT-1 open before register. A round's epoch is opened (slot.h
 *          smarm__begin_wait) before its registration becomes visible,
 *          so a waker holding it can only wake this round. Opening
 *          writes nothing (the epoch is the state word's next, stored
 *          when the round ends), so a round ends before the next opens.
 *   WAIT-2 one wake per round. A wake succeeds only with the open
 *          round's epoch and consumes it (slot.c); a registration left behind
 *          by a round that already ended is inert: its wake fails at one
 *          CAS. A wake that lands before the actor has parked turns
 *          RUNNING into NOTIFIED, and the park then returns at once, so
 *          registering under a lock and parking after unlocking loses
 *          nothing.
 *   WAIT-3 the timer is one more waker. A bounded round inserts a timer
 *          entry with the round's epoch after registering; entries are
 *          never cancelled, a superseded one is inert by WAIT-2 (and by
 *          the slot's wait counter across a 24-bit epoch wrap, timer.c).
 *   WAIT-4 the undo hook covers the park. It is installed before the
 *          actor leaves the CPU and removed once it is back; a stop
 *          observed at the park (actor.h smarm__park) ends the actor,
 *          and actor.c then runs the hook before any cleanup handler, so
 *          no registration of a dead actor survives (core.h INV-5).
 *   WAIT-5 woken is not ready. Park returns after the registration's
 *          wake, the timer's, or a stop's wildcard wake that a cleanup
 *          path cleared; callers re-check their condition under their
 *          own lock and remove a registration still in place.
 *   WAIT-6 retire what did not park. A round that ends without parking
 *          (the primitive became ready after the open, or the timer
 *          could not be armed) is retired: the epoch moves on and a wake
 *          that already landed is eaten, in one CAS, then a stop whose
 *          wake was eaten is observed through its flag (core.h INV-3).
 *   WAIT-7 foreign wakers hold the lock. A waker that is not a worker of
 *          the node wakes while still holding the primitive's lock, so
 *          the waiter cannot leave its wait, and the run cannot end,
 *          before the wake has landed (core.h INV-5).
 *   WAIT-8 nothing yields between open and park. A yield's return turns
 *          NOTIFIED into QUEUED (sched.c yield_return) and would drop a
 *          wake that landed in between. No primitive yields there, and
 *          async preemption never interrupts libsmarm's own text.
 *   WAIT-9 a refused park is a round that did not park. While the
 *          actor's park_fl NOPARK bit is set (smarm__wait_refuse: a
 *          behaviour's terminate on a path that must not block), park
 *          returns SMARM_EAGAIN before it arms a timer or installs the
 *          hook, and the primitive leaves the round as after a failed
 *          timer (WAIT-6): every blocking call then returns at once,
 *          while one that can answer without parking still does. This
 *          is the one check: a primitive needs none of its own.
 *   WAIT-10 a hibernation is a park whose stack is given up. The wait
 *          (struct smarm__wait) and every registration of it are off
 *          the stack (in the primitive's or the caller's memory); the
 *          actor parks with the intent HIBERNATE, and the scheduler
 *          gives its stack back once its sp is saved, before the
 *          park's state change (sched.c hibernate_return), so a wake
 *          on another worker cannot resume it in between (WAIT-2). Its
 *          body is then the caller's continuation: the next run,
 *          whatever woke it, starts there on a fresh stack, and its
 *          first call, smarm__wait_resumed, observes a stop with the
 *          wait still installed (WAIT-4: the undo hook runs) and
 *          otherwise uninstalls it; the continuation re-checks its
 *          primitive (WAIT-5). Its cleanup array is fitted to its
 *          handlers first (smarm__cleanup_fit).
 *   WAIT-11 a wait whose records could live off the stack says so:
 *          its undo arg carries SMARM__WAIT_MOVABLE (a channel
 *          receive). For an actor that gives its parked stack back
 *          (park_fl RELEASE, parkstk.c) park refuses such a round as
 *          WAIT-9 does, with SMARM__EWAIT_MOVE, in the same one test
 *          of park_fl, and the primitive leaves the round and waits
 *          again with its records off the stack, untagged (chan.c
 *          recv_off): so the choice costs other actors nothing.
 *
 * Ownership: a struct smarm__wait lives on the waiting actor's stack for
 * the duration of the call (a hibernation's, off it, until its
 * continuation is called); the slot points at it only while parked.
 * Locking: none of its own; open is legal under the primitive's lock,
 * park never is (lock.h INV-1).
 * See: docs/architecture/wait.md.
 */
#include "wait.h"

#include "actor.h"
#include "node.h"
#include "sched.h"
#include "slot.h"
#include "timer.h"

void smarm__wait_init(struct smarm__wait *w, struct smarm__slot *me,
		      uint64_t deadline, smarm__wait_undo_fn undo, void *arg)
{
	w->wt_me = me;
	w->wt_node = smarm__worker()->node;
	w->wt_pid = smarm__slot_pid(me);
	w->wt_deadline = deadline;
	w->wt_epoch = 0;
	w->wt_carried = 0;
	w->wt_undo = undo;
	w->wt_arg = arg;
	smarm__observe_stop(me);
}

struct smarm__waiter smarm__wait_open(struct smarm__wait *w)
{
	struct smarm__waiter reg;
	w->wt_epoch = smarm__begin_wait(w->wt_me); /* WAIT-1 */
	reg.node = w->wt_node;
	reg.pid = w->wt_pid;
	reg.epoch = w->wt_epoch;
	return reg;
}

bool smarm__wait_expired(const struct smarm__wait *w)
{
	return w->wt_deadline != 0 && smarm__clock_ns() >= w->wt_deadline;
}

/*
 * WAIT-3: a fresh timer entry per round; the old one is inert. Out of
 * line, so that the unbounded park keeps a light frame.
 */
static __attribute__((noinline)) int wait_arm_timer(struct smarm__wait *w)
{
	return smarm__timer_sleep(w->wt_node, w->wt_deadline, w->wt_me,
				  w->wt_epoch);
}

/* The slot's park_fl is not 0: refused (WAIT-9), or moved (WAIT-11),
 * or 0 (the actor gives its parked stack back; this wait is not
 * movable). Out of line: the common park tests one byte. */
static __attribute__((noinline, cold)) int wait_flags(struct smarm__wait *w)
{
	if (w->wt_me->park_fl & SMARM__PF_NOPARK)
		return SMARM_EAGAIN; /* WAIT-9 */
	if ((uintptr_t)w->wt_arg & SMARM__WAIT_MOVABLE)
		return SMARM__EWAIT_MOVE; /* WAIT-11 */
	return 0;
}

/* Before a park or a hibernation: refused (WAIT-9), the deadline's
 * timer armed, w installed (WAIT-4); 0 or the error. */
__attribute__((always_inline)) static inline int
wait_install(struct smarm__wait *w)
{
	struct smarm__slot *me = w->wt_me;
	if (__builtin_expect(me->park_fl, 0)) { /* one test for both */
		int rc = wait_flags(w);
		if (rc != 0)
			return rc;
	}
	if (w->wt_deadline != 0) {
		int rc = wait_arm_timer(w);
		if (rc != 0)
			return rc;
	}
	/* WAIT-4; also how the tracer, recording the park and the return
	 * from it at the switches (sched.c trace_switch), finds w. */
	me->wait = w;
	return 0;
}

/*
 * Inlined into every caller (the build links with LTO; the symbol stays
 * for any call the inliner does not see): the park is on the hot path of
 * every blocking call, and a call frame of its own cost a receive that
 * parks about a tenth of its instructions.
 */
__attribute__((always_inline)) inline int
smarm__wait_park(struct smarm__wait *w)
{
	struct smarm__slot *me = w->wt_me;
	int rc = wait_install(w);
	if (rc != 0)
		return rc;
	smarm__park(me);
	me->wait = NULL;
	return 0;
}

void smarm__wait_refuse(struct smarm__slot *me, bool on)
{
	me->park_fl =
		(uint8_t)(on ? me->park_fl | SMARM__PF_NOPARK
			     : me->park_fl & ~SMARM__PF_NOPARK); /* WAIT-9 */
}

void smarm__wait_retire(struct smarm__wait *w)
{
	smarm__retire_wait(w->wt_me); /* WAIT-6 */
}

void smarm__wait_undo_current(struct smarm__slot *s)
{
	struct smarm__wait *w = s->wait;
	if (w == NULL)
		return;
	s->wait = NULL; /* exactly once, even if the hook exits */
	if (w->wt_undo != NULL)
		w->wt_undo(w);
}

struct smarm__wait *smarm__wait_resumed(void)
{
	struct smarm__slot *me = smarm__current();
	struct smarm__wait *w = me->wait; /* WAIT-4: installed */
	smarm__observe_stop(me);	  /* a stop ends it here, undo first */
	me->wait = NULL;
	return w;
}

int smarm__wait_hibernate(struct smarm__wait *w, void (*fn)(void *), void *arg)
{
	struct smarm__slot *me = w->wt_me;
	/* Inside a runtime callback or an exit, frames that must return
	 * are on the stack. */
	int rc;
	if (me->rt_nopreempt != 0 || me->exiting)
		return SMARM_ESTATE;
	/* Its cleanup array shrinks to its handlers (actor.c), before the
	 * wait is in: a hibernated actor keeps what it needs to end. */
	smarm__cleanup_fit(me);
	if ((rc = wait_install(w)) != 0)
		return rc;
	smarm__observe_stop(me);
	/* The body's words are free once it has run: the next run starts
	 * at fn(arg), which finds w in the slot (smarm__wait_resumed), so
	 * a hibernated wait keeps no word of its own for either. */
	me->fn = fn;
	me->arg = arg;
	smarm__switch_out(me, SMARM__INTENT_HIBERNATE);
	__builtin_unreachable(); /* the stack is gone (WAIT-10) */
}

void smarm__wait_self_wake(struct smarm__wait *w)
{
	smarm__unpark_at(w->wt_node, w->wt_pid, w->wt_epoch);
}
