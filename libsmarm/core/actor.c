/* SPDX-License-Identifier: MIT */
/*
 * actor.c - the actor lifecycle: spawn, entry, the exit paths (return,
 * exit, crash, stop) with their cleanup handlers and exit hooks,
 * finalize, join, detach, stop requests, and the per-actor state that
 * subsystems attach (the slot's `ext`, with the sized subsystems' rooms:
 * subsys.h), and the labels the layers record for fault reports.
 *
 * Cancellation without unwinding. A stop request records its strength,
 * requester and code in the target's cold fields, sets the stop flag
 * (under its cold lock, so a reused slot is never hit) and wakes it with
 * the one wildcard wake. The target observes the flag at a safe point
 * (park entry and wake, yield, smarm_check, runtime calls, an async
 * preemption point), where by construction it holds no runtime lock.
 *
 * Exit, on the dying actor's own stack (smarm__terminate_ex):
 *   1. fix the exit record (how, code; a stop's strength and requester);
 *   2. run the undo hook of the wait it is in (wait.c WAIT-4);
 *   3. run its cleanup handlers, newest first (each may park again:
 *      wait.c WAIT-9);
 *   4. run the exit hook of each subsystem that has state on this actor,
 *      in id order (subsys.h), handing it that state;
 *   5. switch to its scheduler for good; the stack is simply abandoned.
 * A handler may itself exit; the rest then continues from where it was,
 * so every handler and every hook runs exactly once. A handler that
 * crashes makes that crash the exit record (OTP: a crash in terminate is
 * the process's exit reason), unless the actor was killed; any other
 * second exit leaves the record as step 1 fixed it.
 *
 * finalize (scheduler side, after the actor's last switch, on whatever
 * stack the worker runs next): under the cold lock, if a subsystem
 * attached state after step 4 took its look, resume the actor to run
 * step 4 again (INV-3); else recycle the stack, publish DONE and take
 * the joiner; wake the joiner; reclaim the slot if nobody owes a join;
 * if this was the root, shut down every forest root (root exit, below);
 * during a root exit, shut down the children it left; count the end
 * last, on the worker's own line (core.h INV-4).
 *
 * Root exit ("the program is done"): every forest root (a live actor
 * whose parent is no actor or has ended) gets a SHUTDOWN request, which
 * the layers above may deliver as a message (trapping exits); an actor
 * below a live parent is noted in the orphan table and shut down when
 * its parent ends. smarm_node_stop instead kills every actor.
 *
 * Ownership: a slot is owned by its spawner until published, then by
 * whichever worker holds its claim; the cold fields by the cold lock.
 * Per-actor subsystem state belongs to the subsystem that attached it
 * and is handed back to its exit hook; a slot's block of state and its
 * block of rooms (made when a tenant first takes sized state) are kept
 * across tenants and freed with the slot table. The exit payload
 * belongs to the exit record until the slot is reclaimed. A slot's
 * cleanup array is its tenant's to use and kept across tenants; it is
 * fitted to its handlers as its actor hibernates (smarm__cleanup_fit:
 * a hibernated server keeps room for its one). A slot's label block
 * is made under its cold lock, kept across tenants and freed with the slot
 * table; its text is written by whoever the labels' owners say
 * (subsys.h), cleared at reclaim. An interned label text belongs to the
 * node, is never changed once listed and is freed with the slot table.
 * Locking: cold (SLOT rank) per slot; the free list (SLOT rank) is never
 * nested in it; the stack pool (STACK rank) is, in finalize. The orphan
 * table's orph_lock and the interned labels' lbl_lock (TABLE rank) are
 * taken with no other lock held.
 * Invariants:
 *   INV-1 tenant state is set in one place (slot.h smarm__slot_install)
 *         and released in one (smarm__slot_reclaim).
 *   INV-2 death notification (joiner wake) precedes reclamation.
 *   INV-3 no per-actor state is stranded, and no fence is paid for it:
 *         state is attached under the cold lock, only to an actor that is
 *         not DONE, and finalize looks for state in the same hold of the
 *         cold lock in which it publishes DONE. State it finds was
 *         attached after step 4 looked (without the lock); the actor is
 *         then resumed inside its exit path to hand it over on its own
 *         stack (an actor that never ran has its hooks run right there).
 *   INV-4 the stop flag only grows (NONE < SHUTDOWN < KILL); a stop
 *         request wakes its target only when it raises it from NONE.
 *   INV-5 the gauge SMARM__GAUGE_UNJOINED counts the DONE slots that
 *         are still owed a join or detach: finalize adds one where it
 *         publishes DONE on a joinable slot, and reclaim_unjoined takes
 *         it off where join, detach or the run's end reclaims such a slot
 *         (both under the slot's cold lock). Detached actors never touch
 *         it; a joinable one's end and join write their workers' own
 *         lines (node.c: gauges), not a node-wide one.
 * See: docs/architecture/actors.md,
 * docs/architecture/cancellation.md, docs/architecture/subsystems.md.
 */
#include "actor.h"

#include "causal.h"
#include "log.h"
#include "membar.h"

#include "node.h"
#include "preempt.h"
#include "sched.h"
#include "slot.h"
#include "stack.h"
#include "subsys.h"
#include "trace.h"
#include "wait.h"

#include <stdlib.h>
#include <string.h>

/* The root's exit asks every forest root to shut down. */
static const struct smarm__stop_req root_stop = { 0, SMARM__STOP_SHUTDOWN, 0,
						  SMARM_EXIT_SHUTDOWN };
/* smarm_node_stop kills every actor alive. */
static const struct smarm__stop_req stop_all_kill = { 0, SMARM__STOP_KILL, 0,
						      SMARM_EXIT_STOPPED };

static void orphan_add(struct smarm_node *n, uint64_t parent, uint64_t child);
static void orphans_release(struct smarm_node *n, uint64_t parent);

/* A spawn failed in a layer's ss_spawn hook: the child ends at once. */
static void spawn_refused_body(void *arg)
{
	(void)arg;
}

/*
 * Spawns are counted per worker (plain stores by the owning worker into
 * its own line of wcount, never reset); the live count and the stat sum
 * them. An atomic add on one node-wide line per spawn and per end was
 * measurable at two workers. Before the actor is published: its end, on
 * whatever worker, is ordered after this count (smarm__live).
 */
static void count_spawn(struct smarm_node *n)
{
	struct smarm__worker *w = smarm__worker_of(n);
	if (w != NULL)
		__atomic_store_n(&n->wcount[w->id].spawned,
				 n->wcount[w->id].spawned + 1,
				 __ATOMIC_RELAXED);
	else
		atomic_fetch_add_explicit(&n->spawned, 1, memory_order_relaxed);
}

/*
 * Spawn options for the layers above: their ss_spawn hooks, before the
 * child is published, so nobody else can reach it yet (INV-1: the slot
 * is ours) and what they attach to it needs no lock (their updates of
 * it go through smarm__actor_ext_update_child). On an error the child
 * (published and queued by the caller all the same) ends at once
 * without running its body.
 */
static __attribute__((noinline, cold)) int
spawn_hooks(struct smarm_node *n, struct smarm__slot *s,
	    struct smarm__slot *parent, uint64_t pid,
	    const struct smarm_spawn_opts *opts)
{
	int rc = smarm__subsys_spawn(n, parent ? smarm__slot_pid(parent) : 0,
				     pid, opts);
	if (rc != 0) {
		s->fn = spawn_refused_body;
		s->joinable = 0;
	}
	return rc;
}

/*
 * Spawned while the run is ending (one side of the fence pair with
 * stop_all sees the other): after smarm_node_stop, kill it too; after
 * the root's exit, shut it down if it is a forest root (its spawner is
 * exiting, or is no actor), else leave it to its parent, noting it for
 * when that parent ends.
 */
static __attribute__((noinline, cold)) void
spawn_while_stopping(struct smarm_node *n, struct smarm__slot *parent,
		     uint64_t pid)
{
	if (atomic_load_explicit(&n->stopping, memory_order_relaxed) !=
	    SMARM__STOPPING_ROOT)
		smarm__request_stop(n, pid, &stop_all_kill);
	else if (parent == NULL || parent->exiting)
		smarm__request_stop(n, pid, &root_stop);
	else
		orphan_add(n, smarm__slot_pid(parent), pid);
}

int smarm__spawn(struct smarm_node *n, struct smarm__slot *parent,
		 uint64_t *out, smarm_actor_cb fn, void *arg,
		 const struct smarm_spawn_opts *opts, bool joinable)
{
	uint32_t idx;
	struct smarm__slot *s;
	uint32_t gen;
	uint64_t pid;
	int rc = smarm__slot_alloc(n, &idx);

	if (rc != 0)
		return rc;
	s = smarm__slot_at(n, idx);
	gen = SMARM__W_GEN(
		atomic_load_explicit(&s->word, memory_order_relaxed));
	pid = smarm__pid_make(gen, n->serial, idx);

	/* INV-1: the slot is VACANT and ours until published. */
	smarm__slot_install(n, s, fn, arg, parent ? smarm__slot_pid(parent) : 0,
			    opts, joinable);
	count_spawn(n);
	if (SMARM_UNLIKELY(n->link_default ||
			   (opts != NULL && (opts->so_ext | opts->link_set))))
		rc = spawn_hooks(n, s, parent, pid, opts);
	/* Published: what the hooks attached with it (lock_tenant's
	 * acquire of the word pairs with this release). */
	atomic_store_explicit(&s->word, SMARM__W_MAKE(gen, 0, SMARM__ST_QUEUED),
			      memory_order_release);
	if (out != NULL && rc == 0)
		*out = pid;
	if (SMARM_UNLIKELY(n->trace != NULL))
		smarm__trace_node(n, SMARM__TR_SPAWN,
				  parent ? smarm__slot_pid(parent) : 0, pid, 0,
				  NULL);
	smarm__enqueue_spawned(n, pid);
	if (SMARM_UNLIKELY(rc != 0))
		return rc; /* it ends at once (spawn_hooks) */
	/* Pairs with stop_all, which sets `stopping` before it scans: the
	 * publish above before this load (membar.h, the hot side). */
	smarm__membar_light();
	if (atomic_load_explicit(&n->stopping, memory_order_relaxed))
		spawn_while_stopping(n, parent, pid);
	return 0;
}

/* ------------------------------------------------------------ exit */

/*
 * A cleanup handler crashed (how CRASHED) or faulted (FAULT, a contained
 * fault: fault.c): that becomes the exit record, as a crash in OTP's
 * terminate becomes the exit reason; a kill stays a kill. Only the actor
 * writes its record before its hooks, which read it.
 */
static __attribute__((noinline, cold)) void
exit_recrash(struct smarm__slot *s, int how, intptr_t code,
	     struct smarm__exit_payload *payload)
{
	if (s->exiting != SMARM__EXITING_CLEANUP ||
	    s->exit.ex_how == SMARM_EXIT_STOPPED) {
		if (payload != NULL)
			payload->ep_free(payload);
		return;
	}
	if (s->exit.ex_payload != NULL)
		s->exit.ex_payload->ep_free(s->exit.ex_payload);
	s->exit.ex_how = how;
	s->exit.ex_code = code;
	s->exit.ex_payload = payload;
}

/*
 * An exit on a worker of a node that observes (smarm__tls_obs): Coz's
 * catch-up, the causal debt paid before its Downs, exit signals and
 * joiner's wake (core/causal.h; smarm_actor_is_alive already says
 * false meanwhile), then the tracer's EXIT record. Out of line: the
 * exit path keeps one test of the flag, as it had for the tracer.
 */
static __attribute__((noinline, cold)) void exit_obs(struct smarm__slot *s)
{
	smarm__causal_pay_exit(s);
	smarm__trace(SMARM__TR_EXIT, smarm__slot_pid(s),
		     (uint64_t)s->exit.ex_code, (uint32_t)s->exit.ex_how);
}

/*
 * The exit, steps 1-5 (see above). Step 1 happens once: a handler or
 * hook that exits again continues the sequence where it was (a crash
 * in a handler rewrites the record: exit_recrash).
 */
static inline __attribute__((noreturn, always_inline)) void
exit_path(struct smarm__slot *s, int how, intptr_t code,
	  struct smarm__exit_payload *payload)
{
	if (SMARM_UNLIKELY(s->exiting != 0)) {
		if (how == SMARM_EXIT_CRASHED || how == SMARM_EXIT_FAULT)
			exit_recrash(s, how, code, payload);
		else if (payload != NULL)
			payload->ep_free(payload);
	}
	if (!s->exiting) {
		bool stopped = how == SMARM_EXIT_STOPPED;
		__atomic_store_n(&s->exiting, SMARM__EXITING_CLEANUP,
				 __ATOMIC_RELAXED);
		s->exit.ex_how = how;
		s->exit.ex_strength = SMARM__STOP_NONE;
		s->exit.ex_code = code;
		s->exit.ex_from = 0;
		s->exit.ex_payload = payload;
		/*
		 * Later stop requests see the flag at its maximum and do not
		 * wake us (INV-4). Nor may an earlier one's wake cut a
		 * handler's wait short: request_stop wakes under the cold
		 * lock, so taking it here means any such wake has landed and
		 * is eaten now. Only handlers and the wait's undo hook (an
		 * element destructor) can wait from here on; without either,
		 * and without a stop's record to read, the lock is skipped.
		 */
		if (stopped || s->cl_len > 0 || s->wait != NULL) {
			smarm__lock(&s->cold, SMARM__RANK_SLOT);
			if (stopped) {
				s->exit.ex_how = s->stop_how;
				s->exit.ex_strength = atomic_load_explicit(
					&s->stop, memory_order_relaxed);
				s->exit.ex_from = s->stop_from;
				s->exit.ex_code = s->stop_code;
			}
			atomic_store_explicit(&s->stop, SMARM__STOP_KILL,
					      memory_order_relaxed);
			smarm__clear_notify(s);
			smarm__unlock(&s->cold, SMARM__RANK_SLOT);
		} else {
			atomic_store_explicit(&s->stop, SMARM__STOP_KILL,
					      memory_order_relaxed);
		}
	}
	if (s->wait != NULL)
		smarm__wait_undo_current(s); /* wait.c WAIT-4 */
	/* A handler may itself exit; it then finishes the rest. One that
	 * exits while it refused parking (wait.c WAIT-9) does not pass the
	 * refusal on. */
	while (s->cl_len > 0) {
		struct smarm__cleanup c = s->cl[--s->cl_len];
		s->park_fl &= (uint8_t)~SMARM__PF_NOPARK;
		c.fn(c.arg);
	}
	s->park_fl &= (uint8_t)~SMARM__PF_NOPARK;
	/* Its own crash, not a stop's or a signal's: the crash report,
	 * on its own stack with no lock held, before anyone hears of it. */
	if (SMARM_UNLIKELY(s->exit.ex_how == SMARM_EXIT_CRASHED) &&
	    s->exit.ex_strength == SMARM__STOP_NONE)
		smarm__log_crash(smarm__worker()->node, s);
	__atomic_store_n(&s->exiting, SMARM__EXITING_ENDED, __ATOMIC_RELAXED);
	if (SMARM_UNLIKELY(smarm__tls_obs)) /* traces or profiles */
		exit_obs(s);
	for (;;) {
		smarm__exit_hooks_run(s);
		smarm__switch_out(s, SMARM__INTENT_DONE);
		/* Resumed by finalize: state was attached late (INV-3). */
	}
}

void smarm__terminate_ex(struct smarm__slot *s, const struct smarm__exit *ex)
{
	exit_path(s, ex->ex_how, ex->ex_code, ex->ex_payload);
}

void smarm__terminate(struct smarm__slot *s, int how, intptr_t code)
{
	exit_path(s, how, code, NULL);
}

/* The cold half of smarm__observe_stop (the record is read there). */
void smarm__terminate_stopped(struct smarm__slot *s)
{
	smarm__terminate(s, SMARM_EXIT_STOPPED, 0);
}

/* Subsystem id's room in s's block of rooms; NULL if id is not sized or
 * the slot has no rooms yet (s->cold held, or s's owner). */
static void *ext_room(const struct smarm_node *n, const struct smarm__slot *s,
		      int id)
{
	char *rooms = s->ext->x_rooms;
	return (n->ext_sized & (1u << id)) && rooms != NULL
		       ? rooms + n->ext_room[id]
		       : NULL;
}

/*
 * Step 4 of the exit: hand each subsystem its per-actor state. ext_used
 * is read without the lock: an attach this look misses is caught by
 * finalize (INV-3). All states are taken in one hold of the cold lock,
 * then their hooks run in subsystem order; a state attached while they
 * run (by a hook) is one such late attach. Re-entrant: a state is taken
 * before its hook runs. Also called by the scheduler for an actor that
 * never ran.
 */
static __attribute__((noinline)) void exit_hooks_slow(struct smarm__slot *s)
{
	struct smarm__worker *w = smarm__worker();
	struct smarm_node *n = w->node;
	void *state[SMARM__SUB_MAX];
	unsigned mask, m, in_room = 0; /* bit id: state[id] is its room */
	char *rooms;
	smarm__lock(&s->cold, SMARM__RANK_SLOT);
	mask = s->ext->x_mask;
	s->ext->x_mask = 0;
	rooms = s->ext->x_rooms; /* NULL: no state is in a room */
	for (m = mask; m != 0; m &= m - 1) {
		int id = __builtin_ctz(m);
		state[id] = s->ext->x_state[id];
		s->ext->x_state[id] = NULL;
		/* A room is lent to the hooks until the slot's reclaim. */
		if (rooms != NULL && (n->ext_sized & (1u << id)) &&
		    state[id] == rooms + n->ext_room[id])
			in_room |= 1u << id;
	}
	s->ext->x_lent |= (uint8_t)in_room;
	smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	/* Every wake of the exit goes out at once, after its hooks. */
	smarm__wakes_hold(w, true);
	for (m = mask; m != 0; m &= m - 1) { /* in subsystem order */
		int id = __builtin_ctz(m);
		const struct smarm__subsys *ss = n->subs[id];
		if (ss == NULL)
			continue;
		if (ss->ss_actor_exit != NULL)
			ss->ss_actor_exit(s, smarm__slot_pid(s), &s->exit,
					  state[id]);
		if (ss->ss_actor_size != 0 && !(in_room & (1u << id)))
			free(state[id]); /* a late attach's block */
	}
	smarm__wakes_hold(w, false);
}

void smarm__exit_hooks_run(struct smarm__slot *s)
{
	if (!atomic_load_explicit(&s->ext_used, memory_order_relaxed))
		return; /* the common case: no subsystem state */
	exit_hooks_slow(s);
}

/* Under s->cold: does any subsystem state wait for an exit hook? */
static bool ext_left(const struct smarm__slot *s)
{
	return atomic_load_explicit(&s->ext_used, memory_order_relaxed) &&
	       s->ext->x_mask != 0;
}

/* --------------------------------------------- per-actor subsystem state */

/* n->test_ext_fail lets a test make the next such allocation fail. */
static bool ext_test_fail(struct smarm_node *n)
{
	uint32_t f =
		atomic_load_explicit(&n->test_ext_fail, memory_order_relaxed);
	if (f == 0)
		return false;
	atomic_store_explicit(&n->test_ext_fail, f - 1, memory_order_relaxed);
	return true;
}

/* Where a block of rooms made with the header block lies in it. */
#define EXT_ROOMS_AT ((sizeof(struct smarm__ext) + 15) & ~(size_t)15)

/*
 * The slot's block of per-actor state, allocated on first use (s->cold
 * held). Before the subsystem's fn runs, so that state fn creates can
 * always be attached: nothing fn did has to be undone on ENOMEM (INV-3).
 * rooms: the first state is sized, so the block of rooms is made in the
 * same allocation (one calloc for a linked or monitored actor, as when
 * the rooms were always there); else the block is the header alone.
 */
static int ext_block(struct smarm_node *n, struct smarm__slot *s, bool rooms)
{
	if (s->ext != NULL)
		return 0;
	if (SMARM_UNLIKELY(ext_test_fail(n)))
		return SMARM_ENOMEM;
	s->ext =
		calloc(1, rooms ? EXT_ROOMS_AT + n->ext_bytes : sizeof *s->ext);
	if (s->ext == NULL)
		return SMARM_ENOMEM;
	if (rooms)
		s->ext->x_rooms = (char *)s->ext + EXT_ROOMS_AT;
	return 0;
}

void smarm__ext_free(struct smarm__ext *x)
{
	if (x == NULL)
		return;
	smarm__pstk_free(x->x_pstk);
	if (x->x_rooms != (char *)x + EXT_ROOMS_AT)
		free(x->x_rooms); /* made on its own (ext_fresh) */
	free(x);
}

void *smarm__ext_pstk(struct smarm__slot *s, size_t size)
{
	struct smarm_node *n = smarm__worker()->node;
	void *p;
	smarm__lock(&s->cold, SMARM__RANK_SLOT);
	if (ext_block(n, s, false) == 0 && s->ext->x_pstk == NULL)
		s->ext->x_pstk = calloc(1, size);
	p = s->ext != NULL ? s->ext->x_pstk : NULL;
	smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	return p;
}

/*
 * A zeroed state of sized subsystem id for the actor in s, which has
 * none (s->cold held, the block made): its room, the slot's block of
 * rooms made on first use, unless the room is lent to the tenant's exit
 * hooks; then a heap block. NULL: out of memory (before fn, as above).
 */
static void *ext_fresh(struct smarm_node *n, struct smarm__slot *s, int id)
{
	size_t size = n->subs[id]->ss_actor_size;
	void *room;
	if (SMARM_UNLIKELY(s->ext->x_lent & (1u << id)))
		return calloc(1, size);
	room = ext_room(n, s, id);
	if (SMARM_UNLIKELY(room == NULL)) {		 /* the slot's first */
		SMARM_ASSERT(n->ext_sized & (1u << id)); /* laid out (node.c) */
		if (ext_test_fail(n) ||
		    (s->ext->x_rooms = calloc(1, n->ext_bytes)) == NULL)
			return NULL;
		return ext_room(n, s, id); /* zeroed */
	}
	memset(room, 0, size);
	return room;
}

/*
 * Attach subsystem id's state to the actor in s. Caller holds s->cold,
 * has allocated the block (ext_block) and has checked that the pid's
 * generation matches and the actor is not DONE: the state then reaches
 * the actor's exit hook exactly once (INV-3), with the exit record
 * final.
 */
static void ext_attach(struct smarm__slot *s, int id, void *state)
{
	SMARM_ASSERT(id >= 0 && id < SMARM__SUB_MAX && state != NULL);
	SMARM_ASSERT(SMARM__W_STATE(atomic_load_explicit(
			     &s->word, memory_order_relaxed)) !=
		     SMARM__ST_DONE);
	SMARM_ASSERT(s->ext != NULL && s->ext->x_state[id] == NULL);
	s->ext->x_state[id] = state;
	s->ext->x_mask |= (uint8_t)(1u << id);
	atomic_store_explicit(&s->ext_used, 1, memory_order_relaxed);
}

/* Subsystem id's state on s, or NULL (s->cold held, or s's owner). */
static void *ext_get(const struct smarm__slot *s, int id)
{
	return s->ext != NULL ? s->ext->x_state[id] : NULL;
}

/* Take subsystem id's state off s (s->cold held); NULL if none. */
static void *ext_detach(struct smarm__slot *s, int id)
{
	void *state = ext_get(s, id);
	if (state != NULL) {
		s->ext->x_state[id] = NULL;
		s->ext->x_mask &= (uint8_t) ~(1u << id);
	}
	return state;
}

/*
 * The slot of the tenant pid names, with its cold lock held, and the
 * state it is in (*st: anything but VACANT); NULL if pid names no
 * tenant (never issued, or reclaimed: SMARM_ENOPROC). Under the cold
 * lock the answer stays true until the caller unlocks: DONE and reclaim
 * are published under it.
 */
static struct smarm__slot *lock_tenant(struct smarm_node *n, uint64_t pid,
				       uint32_t *st)
{
	struct smarm__slot *s = smarm__slot_of(n, pid);
	uint64_t w;
	if (s == NULL || SMARM__PID_GEN(pid) == 0)
		return NULL;
	smarm__lock(&s->cold, SMARM__RANK_SLOT);
	w = atomic_load_explicit(&s->word, memory_order_acquire);
	if (SMARM__W_GEN(w) != SMARM__PID_GEN(pid) ||
	    SMARM__W_STATE(w) == SMARM__ST_VACANT) {
		smarm__unlock(&s->cold, SMARM__RANK_SLOT);
		return NULL;
	}
	*st = SMARM__W_STATE(w);
	return s;
}

/* lock_tenant, for a tenant that is still alive (not DONE). */
static struct smarm__slot *lock_live(struct smarm_node *n, uint64_t pid)
{
	uint32_t st;
	struct smarm__slot *s = lock_tenant(n, pid, &st);
	if (s != NULL && st == SMARM__ST_DONE) {
		smarm__unlock(&s->cold, SMARM__RANK_SLOT);
		return NULL;
	}
	return s;
}

/*
 * The body of smarm__actor_ext_update, on s, whose cold lock the caller
 * holds and keeps: fn's return value, or SMARM_ENOMEM with *ran false
 * if fn could not run (subsys.h).
 */
static int ext_update_locked(struct smarm_node *n, struct smarm__slot *s,
			     int id, int (*fn)(void **state, void *arg),
			     void *arg, bool *ran)
{
	const struct smarm__subsys *ss = n->subs[id];
	bool sized = ss != NULL && ss->ss_actor_size != 0;
	void *was = ext_get(s, id);
	void *state = was;
	int rc;

	*ran = false;
	if (was == NULL) {
		if (ext_block(n, s, sized) !=
		    0) /* before fn: nothing to undo */
			return SMARM_ENOMEM;
		if (sized && (state = ext_fresh(n, s, id)) == NULL)
			return SMARM_ENOMEM;
	}
	*ran = true;
	rc = fn(&state, arg);
	if (sized) {
		/* Sized: the core's block, in place (or about to be). */
		void *held = was != NULL ? was : state;
		SMARM_ASSERT(state == held);
		if (ss->ss_actor_trim(held)) {
			if (was != NULL)
				(void)ext_detach(s, id);
			if (held != ext_room(n, s, id))
				free(held);
		} else if (was == NULL) {
			ext_attach(s, id, held);
		}
	} else if (state != was) {
		/* Unsized: fn replaced or dropped its state. */
		if (was != NULL)
			(void)ext_detach(s, id);
		if (state != NULL)
			ext_attach(s, id, state);
	}
	return rc;
}

static void stop_locked(struct smarm_node *n, struct smarm__slot *s,
			uint64_t pid, const struct smarm__stop_req *req);

/*
 * The unpublished child of an ss_spawn hook: its spawner owns the slot
 * (INV-1), so no lock, and no other thread can look at the state before
 * the publishing store, whose release orders it (lock_tenant loads the
 * word with acquire).
 */
static inline bool unpublished(const struct smarm__slot *s, uint64_t pid)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
	return SMARM__W_GEN(w) == SMARM__PID_GEN(pid) &&
	       SMARM__W_STATE(w) == SMARM__ST_VACANT;
}

static struct smarm__slot *spawning_child(struct smarm_node *n, uint64_t pid)
{
	struct smarm__slot *s = smarm__slot_of(n, pid);
	/* Checked in debug builds only: no load of the word otherwise. */
	SMARM_ASSERT(s != NULL && unpublished(s, pid));
	return s;
}

/*
 * smarm__actor_ext_update (req NULL), smarm__actor_ext_update_stop and
 * (child) smarm__actor_ext_update_child: the update, then req's stop in
 * the same hold if fn asked for it or could not run. One body for the
 * three, inlined into each caller with fn known: left to itself, GCC
 * kept one shared copy once it had three callers, every fn was then
 * called from one indirect call site, and link_cascade ran 19% slower.
 */
static inline __attribute__((always_inline)) int
ext_update_pid(struct smarm_node *n, uint64_t pid, int id,
	       int (*fn)(void **state, void *arg), void *arg,
	       const struct smarm__stop_req *req, bool child)
{
	struct smarm__slot *s =
		child ? spawning_child(n, pid) : lock_live(n, pid);
	bool ran;
	int rc;
	if (s == NULL)
		return SMARM_ENOPROC;
	rc = ext_update_locked(n, s, id, fn, arg, &ran);
	if (req != NULL && (rc == SMARM__EXT_STOP || !ran)) {
		stop_locked(n, s, pid, req);
		if (rc == SMARM__EXT_STOP)
			rc = 0;
	}
	if (!child)
		smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	return rc;
}

/* ------------------------------------------------------------- labels */

/*
 * Under s->cold (the actor live): s's block of label kind, made on
 * first use; NULL: out of memory. Marks the tenant (ext_used) so that
 * reclaiming the slot clears its labels (slot.h smarm__slot_reclaim).
 */
static char *label_make(struct smarm_node *n, struct smarm__slot *s, int kind)
{
	char *lb;
	SMARM_ASSERT(kind >= 0 && kind < SMARM__LABEL_BLOCKS);
	if (ext_block(n, s, false) != 0)
		return NULL;
	lb = s->ext->x_label[kind];
	if (lb == NULL) {
		lb = calloc(1, SMARM__LABEL_MAX);
		if (lb == NULL)
			return NULL;
		/* Release: a reader that sees the pointer sees zeros. */
		__atomic_store_n(&s->ext->x_label[kind], lb, __ATOMIC_RELEASE);
	}
	atomic_store_explicit(&s->ext_used, 1, memory_order_relaxed);
	return lb;
}

/* Copy text into a label block, cut: the last byte stays NUL. */
static void label_copy(char *d, const char *text)
{
	size_t i = 0;
	for (; text != NULL && text[i] != '\0' && i < SMARM__LABEL_MAX - 1; i++)
		d[i] = text[i];
	d[i] = '\0';
}

/* An interned label text (node.h lbl_texts): immutable once listed. */
struct smarm__label_text {
	struct smarm__label_text *lt_next;
	char lt_text[]; /* NUL-terminated, < SMARM__LABEL_MAX bytes */
};

/*
 * The node's copy of text, cut as a label; made if it has none (the
 * distinct texts are few: one per behaviour). NULL: out of memory.
 * Takes lbl_lock (TABLE rank, a leaf).
 */
static char *label_intern(struct smarm_node *n, const char *text)
{
	char cut[SMARM__LABEL_MAX];
	struct smarm__label_text *t;
	size_t len;
	label_copy(cut, text);
	len = strlen(cut);
	smarm__lock(&n->lbl_lock, SMARM__RANK_TABLE);
	for (t = n->lbl_texts; t != NULL; t = t->lt_next)
		if (strcmp(t->lt_text, cut) == 0)
			break;
	if (t == NULL && (t = malloc(sizeof *t + len + 1)) != NULL) {
		memcpy(t->lt_text, cut, len + 1);
		t->lt_next = n->lbl_texts;
		n->lbl_texts = t;
	}
	smarm__unlock(&n->lbl_lock, SMARM__RANK_TABLE);
	return t != NULL ? t->lt_text : NULL;
}

void smarm__labels_fini(struct smarm_node *n)
{
	struct smarm__label_text *t = n->lbl_texts, *next;
	for (; t != NULL; t = next) {
		next = t->lt_next;
		free(t);
	}
	n->lbl_texts = NULL;
}

/* Under s->cold (the actor live): s's label kind (interned) is lb. */
static bool label_point(struct smarm_node *n, struct smarm__slot *s, int kind,
			char *lb)
{
	SMARM_ASSERT(kind >= SMARM__LABEL_BLOCKS && kind < SMARM__LABELS);
	if (lb == NULL || ext_block(n, s, false) != 0)
		return false;
	/* Release: a reader that sees the pointer sees the text. */
	__atomic_store_n(&s->ext->x_label[kind], lb, __ATOMIC_RELEASE);
	atomic_store_explicit(&s->ext_used, 1, memory_order_relaxed);
	return true;
}

int smarm__actor_label_set(struct smarm_node *n, uint64_t pid, int kind,
			   const char *text)
{
	char *in = kind >= SMARM__LABEL_BLOCKS ? label_intern(n, text) : NULL;
	struct smarm__slot *s = lock_live(n, pid);
	char *lb = NULL;
	bool ok;
	if (s == NULL)
		return SMARM_ENOPROC;
	if (kind >= SMARM__LABEL_BLOCKS) {
		ok = label_point(n, s, kind, in);
	} else {
		lb = label_make(n, s, kind);
		if ((ok = lb != NULL))
			label_copy(lb, text);
	}
	smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	if (SMARM_UNLIKELY(n->trace != NULL) && text != NULL)
		smarm__trace_node(n, SMARM__TR_LABEL, pid, 0, (uint32_t)kind,
				  text);
	return ok ? 0 : SMARM_ENOMEM;
}

void smarm__actor_label_put(struct smarm_node *n, uint64_t pid, int kind,
			    const char *text, bool make)
{
	struct smarm__slot *s = smarm__slot_of(n, pid);
	char *lb = NULL;
	if (s == NULL)
		return;
	SMARM_ASSERT(kind >= 0 && kind < SMARM__LABEL_BLOCKS);
	if (make)
		lb = label_make(n, s, kind);
	else if (s->ext != NULL)
		lb = __atomic_load_n(&s->ext->x_label[kind], __ATOMIC_ACQUIRE);
	if (lb != NULL)
		label_copy(lb, text);
	if (SMARM_UNLIKELY(n->trace != NULL) && text != NULL)
		smarm__trace_node(n, SMARM__TR_LABEL, pid, 0, (uint32_t)kind,
				  text);
}

int smarm__actor_ext_update(struct smarm_node *n, uint64_t pid, int id,
			    int (*fn)(void **state, void *arg), void *arg)
{
	return ext_update_pid(n, pid, id, fn, arg, NULL, false);
}

int smarm__actor_ext_update_child(struct smarm_node *n, uint64_t pid, int id,
				  int (*fn)(void **state, void *arg), void *arg)
{
	return ext_update_pid(n, pid, id, fn, arg, NULL, true);
}

int smarm__actor_ext_read(struct smarm_node *n, uint64_t pid, int id,
			  int (*fn)(void *state, void *arg), void *arg)
{
	struct smarm__slot *s = lock_live(n, pid);
	int rc;
	if (s == NULL)
		return SMARM_ENOPROC;
	rc = fn(ext_get(s, id), arg); /* nothing made: a look only */
	smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	return rc;
}

int smarm__actor_exit_of(struct smarm_node *n, uint64_t pid, int *how,
			 intptr_t *code)
{
	uint32_t st;
	struct smarm__slot *s = lock_tenant(n, pid, &st);
	if (s == NULL)
		return SMARM_ENOPROC;
	if (st != SMARM__ST_DONE) {
		smarm__unlock(&s->cold, SMARM__RANK_SLOT);
		return SMARM_ESTATE;
	}
	/* Final since the actor began exiting; kept until reclaim. */
	*how = s->exit.ex_how;
	*code = s->exit.ex_code;
	smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	return 0;
}

bool smarm__actor_ending(struct smarm_node *n, uint64_t pid)
{
	uint32_t st;
	bool ending;
	struct smarm__slot *s = lock_tenant(n, pid, &st);
	if (s == NULL)
		return true;
	/*
	 * Step 1 of the exit raises the flag to KILL (INV-4) before any
	 * handler or hook runs, so whoever saw the effect of one (through
	 * the lock that effect was published under) reads KILL here. A
	 * KILL request not yet observed: the actor ends at its next safe
	 * point.
	 */
	ending = st == SMARM__ST_DONE ||
		 atomic_load_explicit(&s->stop, memory_order_relaxed) ==
			 SMARM__STOP_KILL;
	smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	return ending;
}

/* ----------------------------------------------------------- peeks */

/* A peek reports the slot state as the public enum: the same numbers. */
_Static_assert((int)SMARM__ST_QUEUED == (int)SMARM_ACTOR_QUEUED &&
		       (int)SMARM__ST_RUNNING == (int)SMARM_ACTOR_RUNNING &&
		       (int)SMARM__ST_NOTIFIED == (int)SMARM_ACTOR_NOTIFIED &&
		       (int)SMARM__ST_PARKED == (int)SMARM_ACTOR_PARKED &&
		       (int)SMARM__ST_DONE == (int)SMARM_ACTOR_DONE,
	       "slot states and smarm_actor_state agree");

/*
 * Copy what the core keeps of the tenant in s (cold lock held, word w
 * loaded under it: not VACANT) into *pk. The owner-written fields (the
 * wait, the stack sample, the wait count) are read lock-free: a running
 * actor changes them as we read, and each is a snapshot of itself.
 */
static void peek_fill(struct smarm_node *n, struct smarm__slot *s, uint64_t w,
		      struct smarm__peek *pk, struct smarm__stk_resident *win,
		      bool touched)
{
	const void *base = __atomic_load_n(&s->stk_base, __ATOMIC_ACQUIRE);
	pk->pk_pid = ((uint64_t)SMARM__W_GEN(w) << 32) | s->pid_lo;
	pk->pk_parent = s->parent;
	pk->pk_state = SMARM__W_STATE(w);
	pk->pk_exiting = __atomic_load_n(&s->exiting, __ATOMIC_RELAXED);
	pk->pk_stop = atomic_load_explicit(&s->stop, memory_order_relaxed);
	pk->pk_stk_mode = (uint8_t)smarm__stack_mode_of(
		n, __atomic_load_n(&s->stk_mode, __ATOMIC_RELAXED));
	pk->pk_waits = atomic_load_explicit(&s->waits, memory_order_relaxed);
	pk->pk_stk_reserve = s->stk_reserve;
	pk->pk_stk_guard = s->stk_guard;
	pk->pk_stk_hwm = smarm__stack_depth_hwm(s, base);
	/* Asks the kernel only: the stack itself is never read. About
	 * 0.7 us an actor even by windows (the kernel's walk of the
	 * reserve's pages), so in a walk of all only a node that keeps
	 * statistics pays; a look at one actor always does. */
	pk->pk_stk_touched = touched ? smarm__stack_touched(s, base, win) : 0;
	pk->pk_stk_shrinks = __atomic_load_n(&s->stk_shrinks, __ATOMIC_RELAXED);
	pk->pk_wait_on = 0;
	pk->pk_wait_target = 0;
	if (pk->pk_state == SMARM__ST_PARKED) {
		/* Owner-written: a wait that just ended may still show. */
		pk->pk_wait_on = __atomic_load_n(&s->wait_on, __ATOMIC_RELAXED);
		if (pk->pk_wait_on != SMARM__WON_NONE)
			pk->pk_wait_target = __atomic_load_n(&s->wait_target,
							     __ATOMIC_RELAXED);
	}
	pk->pk_stats = n->astat_on;
	pk->pk_cpu = pk->pk_runs = pk->pk_rqwait = 0;
	pk->pk_msg_in = pk->pk_msg_out = 0;
	pk->pk_pre_safe = pk->pk_pre_async = 0;
	if (n->astat_on) {
		const struct smarm__astat *a = smarm__astat_of(n, s);
		pk->pk_cpu = __atomic_load_n(&a->as_cpu, __ATOMIC_RELAXED);
		pk->pk_runs = __atomic_load_n(&a->as_runs, __ATOMIC_RELAXED);
		pk->pk_rqwait =
			__atomic_load_n(&a->as_rqwait, __ATOMIC_RELAXED);
		pk->pk_msg_in =
			__atomic_load_n(&a->as_msg_in, __ATOMIC_RELAXED);
		pk->pk_msg_out =
			__atomic_load_n(&a->as_msg_out, __ATOMIC_RELAXED);
		pk->pk_pre_safe =
			__atomic_load_n(&a->as_pre_safe, __ATOMIC_RELAXED);
		pk->pk_pre_async =
			__atomic_load_n(&a->as_pre_async, __ATOMIC_RELAXED);
	}
	/*
	 * A parked actor's deadline is its wait's wake entry in the timer
	 * heap (never read from the wait on its stack: a walk of a million
	 * would miss the TLB on every stack, 88% of a snapshot's time when
	 * it did).
	 */
	pk->pk_deadline =
		pk->pk_state == SMARM__ST_PARKED
			? smarm__timer_wake_deadline(n, s, SMARM__W_EPOCH(w))
			: 0;
	pk->pk_timed = pk->pk_deadline != 0;
	for (int id = 0; id < SMARM__SUB_MAX; id++)
		pk->pk_ext[id] = ext_get(s, id);
	pk->pk_name =
		s->ext != NULL
			? __atomic_load_n(&s->ext->x_label[SMARM__LABEL_NAME],
					  __ATOMIC_ACQUIRE)
			: NULL;
	if (!atomic_load_explicit(&s->ext_used, memory_order_relaxed))
		pk->pk_name = NULL; /* a former tenant's block */
}

int smarm__actor_peek(struct smarm_node *n, uint64_t pid, smarm__peek_fn fn,
		      void *arg)
{
	struct smarm__peek pk;
	uint32_t st;
	int rc;
	struct smarm__slot *s = lock_tenant(n, pid, &st);
	if (s == NULL)
		return SMARM_ENOPROC;
	peek_fill(n, s, atomic_load_explicit(&s->word, memory_order_relaxed),
		  &pk, NULL, true);
	rc = fn(&pk, arg);
	smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	return rc;
}

int smarm__actor_peek_all(struct smarm_node *n, smarm__peek_fn fn, void *arg)
{
	/* Slots never move and the table only grows (slot.c): the count
	 * read once bounds the walk; slots added later are left out. */
	uint32_t have = atomic_load_explicit(&n->nslots, memory_order_acquire);
	struct smarm__peek pk;
	/* One residency window for the walk (NULL: a call per stack). */
	struct smarm__stk_resident *win = malloc(sizeof *win);
	int rc = 0;
	if (win != NULL)
		win->sr_lo = win->sr_hi = 0;
	for (uint32_t i = 0; i < have && rc == 0; i++) {
		struct smarm__slot *s = &n->slots[i];
		uint64_t w;
		/* A vacant slot is skipped without its lock; one that
		 * becomes occupied meanwhile was spawned during the walk. */
		if (SMARM__W_STATE(atomic_load_explicit(
			    &s->word, memory_order_relaxed)) ==
		    SMARM__ST_VACANT)
			continue;
		smarm__lock(&s->cold, SMARM__RANK_SLOT);
		w = atomic_load_explicit(&s->word, memory_order_acquire);
		if (SMARM__W_STATE(w) == SMARM__ST_VACANT) {
			smarm__unlock(&s->cold, SMARM__RANK_SLOT);
			continue;
		}
		peek_fill(n, s, w, &pk, win, n->astat_on);
		rc = fn(&pk, arg);
		smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	}
	free(win);
	return rc;
}

/* ------------------------------------------------------ finalize */

/* finalize found late state on an actor that has a stack: resume it. */
static void resume_for_hooks(struct smarm_node *n, struct smarm__slot *s)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
	uint64_t nw;
	do { /* RUNNING|NOTIFIED -> QUEUED: it switched out, nothing queued */
		nw = SMARM__W_MAKE(SMARM__W_GEN(w), SMARM__W_EPOCH(w),
				   SMARM__ST_QUEUED);
	} while (!atomic_compare_exchange_weak_explicit(
		&s->word, &w, nw, memory_order_acq_rel, memory_order_relaxed));
	smarm__enqueue(n, smarm__slot_pid(s));
}

void smarm__finalize(struct smarm__worker *w, struct smarm__slot *s)
{
	struct smarm_node *n = w->node;
	uint64_t w0 = atomic_load_explicit(&s->word, memory_order_relaxed);
	uint64_t pid = smarm__slot_pid(s);
	bool is_root = pid == n->root;
	struct smarm__waiter joiner = { NULL, 0, 0 };
	struct smarm__exit dead;
	bool free_slot;

	smarm__lock(&s->cold, SMARM__RANK_SLOT);
	while (SMARM_UNLIKELY(ext_left(s))) { /* INV-3 */
		smarm__unlock(&s->cold, SMARM__RANK_SLOT);
		atomic_fetch_add_explicit(&n->ext_late, 1,
					  memory_order_relaxed);
		if (s->sp != NULL) {
			resume_for_hooks(n, s);
			return;
		}
		smarm__exit_hooks_run(s); /* never ran: no stack to resume */
		smarm__lock(&s->cold, SMARM__RANK_SLOT);
	}
	/* Before DONE: whoever sees DONE sees the stack recycled too. */
	smarm__stack_release(n, s);
	s->sp = NULL;
	atomic_store_explicit(
		&s->word, SMARM__W_MAKE(SMARM__W_GEN(w0), 0, SMARM__ST_DONE),
		memory_order_release);
	if (is_root) {
		n->root_how = s->exit.ex_how;
		n->root_reason = s->exit.ex_code;
		s->joinable = 0;
	}
	if (s->has_joiner) {
		joiner.node = n;
		joiner.pid = s->joiner;
		joiner.epoch = s->joiner_epoch;
	}
	free_slot = !s->joinable;
	if (free_slot)
		smarm__slot_reclaim(s, &dead);
	else /* INV-5 */
		smarm__gauge_add(n, SMARM__GAUGE_UNJOINED, 1);
	smarm__unlock(&s->cold, SMARM__RANK_SLOT);

	if (joiner.node != NULL)
		smarm__unpark_at(n, joiner.pid, joiner.epoch);
	if (free_slot) {
		smarm__exit_release(&dead);
		smarm__slot_free(n, smarm__slot_index(s));
	}
	if (is_root)
		smarm__stop_all(n, SMARM__STOPPING_ROOT);
	else if (SMARM_UNLIKELY(atomic_load_explicit(&n->stopping,
						     memory_order_relaxed) ==
				SMARM__STOPPING_ROOT))
		orphans_release(n, pid); /* its children are forest roots now */
	SMARM_ASSERT(smarm__live(n) > 0); /* else: finalized twice */
	/* Last (core.h INV-4): a release store on w's own line. */
	__atomic_store_n(&n->wcount[w->id].ended, n->wcount[w->id].ended + 1,
			 __ATOMIC_RELEASE);
}

/*
 * Under t->cold, t DONE and joinable (a slot finalize kept): reclaim it,
 * leaving INV-5's count.
 */
static void reclaim_unjoined(struct smarm_node *n, struct smarm__slot *t,
			     struct smarm__exit *dead)
{
	smarm__slot_reclaim(t, dead);
	smarm__gauge_add(n, SMARM__GAUGE_UNJOINED, -1);
}

/* ---------------------------------------------------------- stops */

/*
 * A parked actor told to stop will resume and unwind on a stack nobody
 * has touched since it parked (a killed chain, a supervisor's shutdown of
 * thousands): ask for its lines now, while the stopper still runs, so the
 * resume and the exit path do not wait on a miss per frame. 512 bytes
 * below the saved sp measured best (docs/benchmarks.md); more lines stall
 * the stopper on its fill buffers. s->sp is stale if the target runs on
 * another worker: a prefetch never faults, so that costs one wasted fetch.
 */
enum { STOP_PREFETCH_BELOW = 512 }; /* bytes of frames it will push */

static void stop_prefetch(const struct smarm__slot *s)
{
	const char *sp = __atomic_load_n(&s->sp, __ATOMIC_RELAXED);
	if (sp == NULL)
		return;
	for (int off = -STOP_PREFETCH_BELOW; off < 128; off += 64)
		__builtin_prefetch(sp + off, 1, 3);
}

int smarm__request_stop(struct smarm_node *n, uint64_t pid,
			const struct smarm__stop_req *req)
{
	struct smarm__slot *s;

	/* Coz's catch-up: an actor that sends an exit signal or a stop pays
	 * its causal debt before the signal can wake its target (causal.h;
	 * a no-op outside an actor, in finalize and once exiting, where
	 * smarm__causal_pay_exit paid). */
	smarm__causal_pay();
	if (req->sr_strength == SMARM__STOP_SHUTDOWN) {
		/* Trappable: a layer may deliver it as a message instead. */
		int rc = smarm__subsys_trap(n, pid, req);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			smarm__expedite(n, pid); /* it has a signal to take */
			return 0;
		}
	}
	s = lock_live(n, pid);
	if (s == NULL)
		return SMARM_ENOPROC;
	stop_locked(n, s, pid, req);
	smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	smarm__expedite(n, pid); /* a stop to observe */
	return 0;
}

int smarm__actor_ext_update_stop(struct smarm_node *n, uint64_t pid, int id,
				 int (*fn)(void **state, void *arg), void *arg,
				 const struct smarm__stop_req *req)
{
	return ext_update_pid(n, pid, id, fn, arg, req, false);
}

/*
 * Under the live actor s's cold lock: raise its stop flag to req's
 * strength, record the request if it raised it, and wake it if it was
 * the first (INV-4).
 */
static void stop_locked(struct smarm_node *n, struct smarm__slot *s,
			uint64_t pid, const struct smarm__stop_req *req)
{
	uint8_t cur;
	bool raised = false;
	/* INV-4; the owner's own store (terminate) races only upward. */
	cur = atomic_load_explicit(&s->stop, memory_order_relaxed);
	while (req->sr_strength > cur &&
	       !(raised = atomic_compare_exchange_weak_explicit(
			 &s->stop, &cur, (uint8_t)req->sr_strength,
			 memory_order_relaxed, memory_order_relaxed)))
		;
	if (raised) {
		s->stop_from = req->sr_from;
		s->stop_code = req->sr_code;
		s->stop_how = (uint8_t)req->sr_how;
	}
	/*
	 * Wake under the cold lock: the target cannot start exiting (its
	 * terminate takes this lock to eat pending wakes) until the wake has
	 * landed, so a late wildcard wake can never cut short a wait in a
	 * cleanup handler; and a foreign-thread stopper cannot outlive the
	 * run while it still touches the node.
	 */
	if (raised && cur == SMARM__STOP_NONE) {
		stop_prefetch(s);
		smarm__unpark_any(n, pid);
	}
}

int smarm__actor_request_stop(struct smarm_node *n, uint64_t pid,
			      const struct smarm__stop_req *req)
{
	return smarm__request_stop(n, pid, req);
}

uint64_t smarm__self_pid(void)
{
	struct smarm__slot *me = smarm__current();
	return me != NULL ? smarm__slot_pid(me) : 0;
}

uint64_t smarm__self_parent(void)
{
	struct smarm__slot *me = smarm__current();
	return me != NULL ? me->parent : 0;
}

bool smarm__node_is_running(const struct smarm_node *n)
{
	return atomic_load(&((struct smarm_node *)n)->running) != 0;
}

void smarm__self_exit_info(int *how, intptr_t *code)
{
	struct smarm__slot *me = smarm__current();
	SMARM_ASSERT(me != NULL);
	*how = me->exit.ex_how;
	*code = me->exit.ex_code;
}

void smarm__self_refuse_parks(bool on)
{
	struct smarm__slot *me = smarm__current();
	SMARM_ASSERT(me != NULL);
	smarm__wait_refuse(me, on);
}

void *smarm__self_ext(int id)
{
	struct smarm__slot *me = smarm__current();
	/* ext, once set, stays for the slot's life; the actor's own update
	 * set it before (program order), so it is read without the lock. */
	if (me == NULL || me->ext == NULL)
		return NULL;
	return me->ext->x_state[id];
}

void smarm__self_exit(int how, intptr_t code)
{
	struct smarm__slot *me = smarm__current();
	SMARM_ASSERT(me != NULL);
	smarm__terminate(me, how, code);
}

/*
 * The end of a run (mode SMARM__STOPPING_*). Root exit, "the program is
 * done": every forest root (a live actor whose parent is no actor, or
 * has ended) gets a shutdown, which one that traps exits receives as a
 * message (it may drain and end when it likes); the others are left to
 * their parents, and noted so that each gets its shutdown when its
 * parent ends (orphans_release). smarm_node_stop: every actor is
 * killed. A kill after a root exit still kills; a root exit after a
 * kill adds nothing.
 */
void smarm__stop_all(struct smarm_node *n, int mode)
{
	int cur = atomic_load_explicit(&n->stopping, memory_order_relaxed);
	do {
		if (cur >= mode)
			return;
	} while (!atomic_compare_exchange_weak_explicit(
		&n->stopping, &cur, mode, memory_order_seq_cst,
		memory_order_relaxed));
	smarm__membar_heavy(); /* pairs with spawn (membar.h) */
	uint32_t count = atomic_load_explicit(&n->nslots, memory_order_acquire);
	for (uint32_t i = 0; i < count; i++) {
		struct smarm__slot *s = smarm__slot_at(n, i);
		uint64_t w =
			atomic_load_explicit(&s->word, memory_order_acquire);
		uint32_t st = SMARM__W_STATE(w);
		uint64_t pid = smarm__pid_make(SMARM__W_GEN(w), n->serial, i);
		uint64_t parent;
		if (st == SMARM__ST_VACANT || st == SMARM__ST_DONE)
			continue;
		if (mode == SMARM__STOPPING_KILL_ALL) {
			smarm__request_stop(n, pid, &stop_all_kill);
			continue;
		}
		/*
		 * The parent was written before the tenant was published
		 * (acquire above); a tenant that changed since is simply
		 * asked about under its cold lock, and found stale.
		 */
		parent = s->parent;
		if (parent == 0 || smarm__slot_live(n, parent) == NULL) {
			smarm__request_stop(n, pid, &root_stop);
			continue;
		}
		orphan_add(n, parent, pid);
		/*
		 * The parent may have ended since it was looked at. Its
		 * finalize publishes DONE before it takes the table lock, so
		 * it either finds this pair or this look finds it ended.
		 */
		if (smarm__slot_live(n, parent) == NULL)
			orphans_release(n, parent);
	}
}

/* ------------------------------------------------------ orphans */

/*
 * The orphan table, from a root exit to the run's end: (parent, child)
 * pairs in a chained hash by parent, under orph_lock (TABLE rank, taken
 * with no other lock held). A pair is added for each live actor the
 * root-exit sweep leaves to its live parent, and for each actor a live
 * parent spawns after it; when a parent ends (finalize) its pairs are
 * taken out and its children shut down, as forest roots. A child may
 * have ended long before: its shutdown then finds it stale.
 *
 * Bound: a parent that drains for long may spawn and reap many children
 * (a supervisor restarting, a pool). When the entries are used up, the
 * table is compacted first (orphan_compact): pairs taken, and pairs
 * whose child is no longer alive (it needs no shutdown), are dropped;
 * it grows only if that left it more than half full. So it holds O(live
 * actors) entries, at amortised O(1) per add.
 */
struct smarm__orphan {
	uint64_t or_parent; /* 0: taken */
	uint64_t or_child;
	uint32_t or_next; /* next entry in the bucket: index + 1, 0 none */
};

static uint32_t orphan_bucket(const struct smarm_node *n, uint64_t parent)
{
	return (uint32_t)((parent * 0x9e3779b97f4a7c15ull) >> 32) &
	       (n->orph_nb - 1);
}

/* Under orph_lock: drop the pairs nobody needs; rebuild the chains. */
static void orphan_compact(struct smarm_node *n)
{
	uint32_t keep = 0;
	memset(n->orph_heads, 0, n->orph_nb * sizeof *n->orph_heads);
	for (uint32_t i = 0; i < n->orph_len; i++) {
		struct smarm__orphan o = n->orph[i];
		uint32_t b;
		/* Lock-free look; a child found ended stays ended. */
		if (o.or_parent == 0 || smarm__slot_live(n, o.or_child) == NULL)
			continue;
		b = orphan_bucket(n, o.or_parent);
		o.or_next = n->orph_heads[b];
		n->orph[keep] = o;
		n->orph_heads[b] = ++keep;
	}
	n->orph_len = keep;
}

static void orphan_add(struct smarm_node *n, uint64_t parent, uint64_t child)
{
	smarm__lock(&n->orph_lock, SMARM__RANK_TABLE);
	if (n->orph_heads == NULL) {
		uint32_t nb = 64;
		while (nb < atomic_load(&n->nslots) && nb < (1u << 24))
			nb <<= 1;
		n->orph_heads = calloc(nb, sizeof *n->orph_heads);
		n->orph_nb = n->orph_heads != NULL ? nb : 0;
	}
	if (n->orph_len == n->orph_cap && n->orph_heads != NULL) {
		uint32_t cap = n->orph_cap ? n->orph_cap * 2 : 64;
		orphan_compact(n);
		if (n->orph_cap == 0 || n->orph_len * 2 > n->orph_cap) {
			struct smarm__orphan *o =
				realloc(n->orph, cap * sizeof *o);
			if (o != NULL) {
				n->orph = o;
				n->orph_cap = cap;
			}
		}
	}
	if (n->orph_heads != NULL && n->orph_len < n->orph_cap) {
		/* Out of memory leaves the child to its parent alone. */
		uint32_t b = orphan_bucket(n, parent);
		struct smarm__orphan *o = &n->orph[n->orph_len];
		o->or_parent = parent;
		o->or_child = child;
		o->or_next = n->orph_heads[b];
		n->orph_heads[b] = ++n->orph_len;
	}
	smarm__unlock(&n->orph_lock, SMARM__RANK_TABLE);
}

/* parent ended during a root exit: shut down the children it left. */
static void orphans_release(struct smarm_node *n, uint64_t parent)
{
	for (;;) {
		uint64_t child = 0;
		smarm__lock(&n->orph_lock, SMARM__RANK_TABLE);
		if (n->orph_heads != NULL) {
			uint32_t *link =
				&n->orph_heads[orphan_bucket(n, parent)];
			while (*link != 0) {
				struct smarm__orphan *o = &n->orph[*link - 1];
				if (o->or_parent == parent) {
					child = o->or_child;
					*link = o->or_next; /* unlink it */
					o->or_parent = 0;
					break;
				}
				link = &o->or_next;
			}
		}
		smarm__unlock(&n->orph_lock, SMARM__RANK_TABLE);
		if (child == 0)
			return;
		smarm__request_stop(n, child, &root_stop);
	}
}

/* End of a run: the orphan table goes (no actor is left). */
void smarm__orphans_fini(struct smarm_node *n)
{
	free(n->orph);
	free(n->orph_heads);
	n->orph = NULL;
	n->orph_heads = NULL;
	n->orph_len = n->orph_cap = n->orph_nb = 0;
}

/*
 * End of a run: joinable actors nobody joined can no longer be joined
 * (join needs an actor), so their slots are released; their pids become
 * stale (SMARM_ENOPROC). Without this a reused node would lose capacity.
 */
void smarm__release_unjoined(struct smarm_node *n)
{
	uint32_t count = atomic_load_explicit(&n->nslots, memory_order_acquire);
	for (uint32_t i = 0; i < count; i++) {
		struct smarm__slot *s = smarm__slot_at(n, i);
		struct smarm__exit dead;
		bool done;
		smarm__lock(&s->cold, SMARM__RANK_SLOT);
		done = SMARM__W_STATE(atomic_load_explicit(
			       &s->word, memory_order_acquire)) ==
		       SMARM__ST_DONE;
		if (done)
			reclaim_unjoined(n, s, &dead);
		smarm__unlock(&s->cold, SMARM__RANK_SLOT);
		if (done) {
			smarm__exit_release(&dead);
			smarm__slot_free(n, i);
		}
	}
}

/* ------------------------------------------------------------ join */

static void join_undo(struct smarm__wait *w)
{
	struct smarm__slot *t = w->wt_arg;
	smarm__lock(&t->cold, SMARM__RANK_SLOT);
	if (t->has_joiner && t->joiner == w->wt_pid)
		t->has_joiner = 0;
	smarm__unlock(&t->cold, SMARM__RANK_SLOT);
}

int smarm__join(struct smarm_node *n, struct smarm__slot *me, uint64_t pid,
		int *how, intptr_t *reason)
{
	struct smarm__wait w;

	if (pid == smarm__slot_pid(me))
		return SMARM_EINVAL;
	smarm__observe_stop(me); /* a safe point, also when it is DONE */
	w.wt_me = NULL;		 /* the wait starts when it first blocks */
	for (;;) {
		struct smarm__waiter reg;
		struct smarm__exit dead;
		int rc;
		uint32_t st;
		struct smarm__slot *t = lock_tenant(n, pid, &st);
		if (t == NULL)
			return SMARM_ENOPROC;
		if (!t->joinable || (t->has_joiner && t->joiner != w.wt_pid)) {
			smarm__unlock(&t->cold, SMARM__RANK_SLOT);
			return SMARM_ESTATE;
		}
		if (st == SMARM__ST_DONE) {
			if (how)
				*how = t->exit.ex_how;
			if (reason)
				*reason = t->exit.ex_code;
			reclaim_unjoined(n, t, &dead);
			smarm__unlock(&t->cold, SMARM__RANK_SLOT);
			smarm__exit_release(&dead);
			smarm__slot_free(n, smarm__slot_index(t));
			return 0;
		}
		if (w.wt_me == NULL)
			smarm__wait_init(&w, me, 0, join_undo, t);
		reg = smarm__wait_open(&w);
		t->has_joiner = 1;
		t->joiner = reg.pid;
		t->joiner_epoch = reg.epoch;
		smarm__unlock(&t->cold, SMARM__RANK_SLOT);
		__atomic_store_n(&me->wait_target, pid, __ATOMIC_RELAXED);
		__atomic_store_n(&me->wait_on, SMARM__WON_JOIN,
				 __ATOMIC_RELAXED);
		rc = smarm__wait_park(&w); /* unbounded: only WAIT-9 */
		__atomic_store_n(&me->wait_on, SMARM__WON_NONE,
				 __ATOMIC_RELAXED);
		if (rc != 0) {
			join_undo(&w);
			smarm__wait_retire(&w);
			return rc;
		}
	}
}

void smarm__wait_note(int kind, uint64_t target)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return;
	if (kind != SMARM__WON_NONE)
		__atomic_store_n(&me->wait_target, target, __ATOMIC_RELAXED);
	__atomic_store_n(&me->wait_on, (uint8_t)kind, __ATOMIC_RELAXED);
}

int smarm__detach(struct smarm_node *n, uint64_t pid)
{
	struct smarm__exit dead;
	uint32_t st;
	struct smarm__slot *t = lock_tenant(n, pid, &st);
	bool done;

	if (t == NULL)
		return SMARM_ENOPROC;
	if (!t->joinable || t->has_joiner) {
		smarm__unlock(&t->cold, SMARM__RANK_SLOT);
		return SMARM_ESTATE;
	}
	t->joinable = 0;
	done = st == SMARM__ST_DONE;
	if (done)
		reclaim_unjoined(n, t, &dead);
	smarm__unlock(&t->cold, SMARM__RANK_SLOT);
	if (done) {
		smarm__exit_release(&dead);
		smarm__slot_free(n, smarm__slot_index(t));
	}
	return 0;
}

/* --------------------------------------------------------- cleanups */

int smarm__cleanup_push(struct smarm__slot *s, smarm_cleanup_cb fn, void *arg)
{
	if (s->cl_len == s->cl_cap) {
		/* Room for two at first (a server's end and its start
		 * data's), a 48-byte chunk kept with the slot; fitted to
		 * what is left as the actor hibernates (cleanup_fit). */
		uint32_t cap = s->cl_cap ? s->cl_cap * 2 : 2;
		struct smarm__cleanup *cl = realloc(s->cl, cap * sizeof *cl);
		if (cl == NULL)
			return SMARM_ENOMEM;
		s->cl = cl;
		s->cl_cap = cap;
	}
	s->cl[s->cl_len].fn = fn;
	s->cl[s->cl_len].arg = arg;
	s->cl_len++;
	return 0;
}

void smarm__cleanup_fit(struct smarm__slot *s)
{
	struct smarm__cleanup *cl = NULL;
	if (s->cl_len >= s->cl_cap)
		return; /* full, or none: nothing to give back */
	if (s->cl_len != 0) {
		cl = malloc(s->cl_len * sizeof *cl);
		if (cl == NULL)
			return; /* kept as it is */
		memcpy(cl, s->cl, s->cl_len * sizeof *cl);
	}
	free(s->cl);
	s->cl = cl;
	s->cl_cap = s->cl_len;
}

int smarm__cleanup_pop(struct smarm__slot *s, bool execute)
{
	struct smarm__cleanup c;
	if (s->cl_len == 0)
		return SMARM_ENOENT;
	c = s->cl[--s->cl_len];
	if (execute)
		c.fn(c.arg);
	return 0;
}

int smarm__cleanup_drop(struct smarm__slot *s, smarm_cleanup_cb fn, void *arg)
{
	for (uint32_t i = s->cl_len; i-- > 0;) {
		if (s->cl[i].fn != fn || s->cl[i].arg != arg)
			continue;
		memmove(&s->cl[i], &s->cl[i + 1],
			(s->cl_len - i - 1) * sizeof *s->cl);
		s->cl_len--;
		return 0;
	}
	return SMARM_ENOENT;
}
