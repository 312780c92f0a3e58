/* SPDX-License-Identifier: MIT */
/*
 * actor.c - the actor lifecycle: spawn, entry, the exit paths (return,
 * exit, crash, stop) with their cleanup handlers, finalize, join, detach
 * and stop requests.
 *
 * Cancellation without unwinding. A stop request sets the target's stop
 * flag (under its cold lock, so a reused slot is never hit) and wakes it
 * with the one wildcard wake. The target observes the flag at a safe point
 * (park entry and wake, yield, smarm_check, runtime calls), where by
 * construction it holds no runtime lock. It then runs the undo hook of the
 * wait it is in (wait.c: unregister from a channel, a mutex queue, a
 * join), its cleanup handlers newest first, and switches to its scheduler
 * for good; the stack is simply abandoned and recycled. Every exit path
 * goes through smarm__terminate, so handlers run exactly once each.
 *
 * finalize (scheduler side, after the actor's last switch): recycle the
 * stack; under the cold lock publish DONE and take the joiner; wake the
 * joiner; reclaim the slot if nobody owes a join; if this was the root,
 * ask every remaining actor to stop; live -= 1 last (core.h INV-4).
 *
 * Ownership: a slot is owned by its spawner until published, then by
 * whichever worker holds its claim; the cold fields by the cold lock.
 * Locking: cold (LEAF) per slot; free list (LEAF) is never nested in it.
 * Invariants: INV-1 the three-place reset: fields are set at slot
 * creation, at install (spawn) and at reclaim. INV-2 death notification
 * precedes reclamation.
 * See: docs/architecture.md (Actors, Cancellation).
 */
#include "core.h"

#include <stdlib.h>

/*
 * Spawns are counted per worker (plain stores by the owning worker into a
 * per-worker total that is never reset; the stat sums them): an atomic
 * add on one node-wide line per spawn was measurable at two workers.
 */
static void count_spawn(struct smarm_node *n)
{
	struct smarm__worker *w = smarm__tls_worker;
	if (w != NULL && w->node == n)
		__atomic_store_n(&n->spawned_w[w->id], n->spawned_w[w->id] + 1,
				 __ATOMIC_RELAXED);
	else
		atomic_fetch_add_explicit(&n->spawned, 1, memory_order_relaxed);
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
	gen = W_GEN(atomic_load_explicit(&s->word, memory_order_relaxed));
	pid = smarm__pid_make(gen, idx);

	/* Install (INV-1): the slot is VACANT and ours until published. */
	atomic_store_explicit(&s->stop, 0, memory_order_relaxed);
	s->exiting = 0;
	s->nopreempt = 0;
	s->rt_nopreempt = 0;
	s->preempt_pending = 0;
	s->joinable = joinable;
	s->has_joiner = 0;
	s->cl_len = 0;
	s->fn = fn;
	s->arg = arg;
	s->parent = parent ? smarm__pid_make(W_GEN(atomic_load_explicit(
						     &parent->word,
						     memory_order_relaxed)),
					     parent->index)
			   : 0;
	s->sp = NULL;
	s->hwm = 0;
	s->stk_base = NULL;
	s->stk_reserve =
		(opts && opts->reserve) ? opts->reserve : n->stk_reserve;
	s->stk_guard = (opts && opts->guard) ? opts->guard : n->stk_guard;
	s->stk_mode = (opts && opts->mode_set) ? opts->mode : n->stk_mode;
	s->stk_parks = 0;
	s->stk_shrinks = 0;
	s->wait = NULL;
	s->how = SMARM_EXIT_NORMAL;
	s->reason = 0;

	atomic_fetch_add_explicit(&n->live, 1, memory_order_relaxed);
	count_spawn(n);
	atomic_store_explicit(&s->word, W_MAKE(gen, 0, ST_QUEUED),
			      memory_order_release);
	if (out != NULL)
		*out = pid;
	smarm__enqueue_spawned(n, pid);
	/*
	 * Spawned while the run is shutting down (by a cleanup handler, or
	 * racing the root's exit): stop it too. Pairs with stop_all, which
	 * sets `stopping` before it scans: one side sees the other.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&n->stopping, memory_order_relaxed))
		smarm__request_stop(n, pid);
	return 0;
}

void smarm__terminate(struct smarm__slot *s, int how, intptr_t reason)
{
	if (!s->exiting) {
		s->exiting = 1;
		s->how = how;
		s->reason = reason;
		/* Later stop requests see the flag set and do not wake us. */
		atomic_store_explicit(&s->stop, 1, memory_order_relaxed);
		/*
		 * Nor may an earlier one's wake cut a handler's wait short:
		 * request_stop wakes under this lock, so taking it here means
		 * any such wake has landed and is eaten now. Only handlers
		 * and the wait's undo hook (an element destructor) can wait
		 * from here on; without either this is skipped.
		 */
		if (s->cl_len > 0 || s->wait != NULL) {
			smarm__lock(&s->cold, SMARM__RANK_LEAF);
			smarm__clear_notify(s);
			smarm__unlock(&s->cold, SMARM__RANK_LEAF);
		}
	}
	smarm__wait_undo_current(s); /* wait.c WAIT-4 */
	/* A handler may itself exit; it then finishes the rest. */
	while (s->cl_len > 0) {
		struct smarm__cleanup c = s->cl[--s->cl_len];
		c.fn(c.arg);
	}
	smarm__switch_out(s, INTENT_DONE);
	smarm__panic("actor: a finished actor was resumed");
}

static void reclaim(struct smarm__slot *s)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
	uint32_t gen = W_GEN(w) + 1;
	if (gen == 0)
		gen = 1; /* generation 0 is never issued (pid 0 = none) */
	s->fn = NULL;
	s->arg = NULL;
	s->joinable = 0;
	s->has_joiner = 0;
	atomic_store_explicit(&s->word, W_MAKE(gen, 0, ST_VACANT),
			      memory_order_release);
}

void smarm__finalize(struct smarm__worker *w, struct smarm__slot *s)
{
	struct smarm_node *n = w->node;
	uint64_t w0 = atomic_load_explicit(&s->word, memory_order_relaxed);
	uint64_t pid = smarm__pid_make(W_GEN(w0), s->index);
	bool is_root = pid == n->root;
	struct smarm__waiter joiner = { NULL, 0, 0 };
	bool free_slot;

	smarm__stack_release(n, s);
	s->sp = NULL;

	smarm__lock(&s->cold, SMARM__RANK_LEAF);
	atomic_store_explicit(&s->word, W_MAKE(W_GEN(w0), 0, ST_DONE),
			      memory_order_release);
	if (is_root) {
		n->root_how = s->how;
		n->root_reason = s->reason;
		s->joinable = 0;
	}
	if (s->has_joiner) {
		joiner.node = n;
		joiner.pid = s->joiner;
		joiner.epoch = s->joiner_epoch;
	}
	free_slot = !s->joinable;
	if (free_slot)
		reclaim(s);
	smarm__unlock(&s->cold, SMARM__RANK_LEAF);

	if (joiner.node != NULL)
		smarm__unpark_at(n, joiner.pid, joiner.epoch);
	if (free_slot)
		smarm__slot_free(n, s->index);
	if (is_root)
		smarm__stop_all(n);
	int64_t before =
		atomic_fetch_sub_explicit(&n->live, 1, memory_order_seq_cst);
	SMARM_ASSERT(before > 0); /* else: an actor finalized twice */
	(void)before;
}

int smarm__request_stop(struct smarm_node *n, uint64_t pid)
{
	struct smarm__slot *s = smarm__slot_at(n, PID_IDX(pid));
	uint64_t w;
	bool wake = false;

	if (s == NULL || PID_GEN(pid) == 0)
		return SMARM_ENOPROC;
	smarm__lock(&s->cold, SMARM__RANK_LEAF);
	w = atomic_load_explicit(&s->word, memory_order_acquire);
	if (W_GEN(w) != PID_GEN(pid) || W_STATE(w) == ST_VACANT ||
	    W_STATE(w) == ST_DONE) {
		smarm__unlock(&s->cold, SMARM__RANK_LEAF);
		return SMARM_ENOPROC;
	}
	/*
	 * Wake under the cold lock: the target cannot start exiting (its
	 * terminate takes this lock to eat pending wakes) until the wake has
	 * landed, so a late wildcard wake can never cut short a wait in a
	 * cleanup handler; and a foreign-thread stopper cannot outlive the
	 * run while it still touches the node.
	 */
	wake = atomic_exchange_explicit(&s->stop, 1, memory_order_relaxed) == 0;
	if (wake)
		smarm__unpark_any(n, pid);
	smarm__unlock(&s->cold, SMARM__RANK_LEAF);
	return 0;
}

/* Root exit: the program is done; every actor still alive is stopped. */
void smarm__stop_all(struct smarm_node *n)
{
	atomic_store_explicit(&n->stopping, 1, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst); /* pairs with spawn */
	uint32_t count = atomic_load_explicit(&n->nslots, memory_order_acquire);
	for (uint32_t i = 0; i < count; i++) {
		struct smarm__slot *s = smarm__slot_at(n, i);
		uint64_t w =
			atomic_load_explicit(&s->word, memory_order_acquire);
		uint32_t st = W_STATE(w);
		if (st != ST_VACANT && st != ST_DONE)
			smarm__request_stop(n, smarm__pid_make(W_GEN(w), i));
	}
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
		bool done;
		smarm__lock(&s->cold, SMARM__RANK_LEAF);
		done = W_STATE(atomic_load_explicit(
			       &s->word, memory_order_acquire)) == ST_DONE;
		if (done)
			reclaim(s);
		smarm__unlock(&s->cold, SMARM__RANK_LEAF);
		if (done)
			smarm__slot_free(n, i);
	}
}

/* ------------------------------------------------------------ join */

static void join_undo(struct smarm__wait *w)
{
	struct smarm__slot *t = w->wt_arg;
	smarm__lock(&t->cold, SMARM__RANK_LEAF);
	if (t->has_joiner && t->joiner == w->wt_pid)
		t->has_joiner = 0;
	smarm__unlock(&t->cold, SMARM__RANK_LEAF);
}

int smarm__join(struct smarm_node *n, struct smarm__slot *me, uint64_t pid,
		int *how, intptr_t *reason)
{
	struct smarm__slot *t = smarm__slot_at(n, PID_IDX(pid));
	struct smarm__wait w;

	if (t == NULL || PID_GEN(pid) == 0)
		return SMARM_ENOPROC;
	if (pid == smarm__slot_pid(me))
		return SMARM_EINVAL;
	smarm__wait_init(&w, me, 0, join_undo, t);
	for (;;) {
		struct smarm__waiter reg;
		uint64_t word;
		smarm__lock(&t->cold, SMARM__RANK_LEAF);
		word = atomic_load_explicit(&t->word, memory_order_acquire);
		if (W_GEN(word) != PID_GEN(pid) || W_STATE(word) == ST_VACANT) {
			smarm__unlock(&t->cold, SMARM__RANK_LEAF);
			return SMARM_ENOPROC;
		}
		if (!t->joinable || (t->has_joiner && t->joiner != w.wt_pid)) {
			smarm__unlock(&t->cold, SMARM__RANK_LEAF);
			return SMARM_ESTATE;
		}
		if (W_STATE(word) == ST_DONE) {
			if (how)
				*how = t->how;
			if (reason)
				*reason = t->reason;
			reclaim(t);
			smarm__unlock(&t->cold, SMARM__RANK_LEAF);
			smarm__slot_free(n, t->index);
			return 0;
		}
		reg = smarm__wait_open(&w);
		t->has_joiner = 1;
		t->joiner = reg.pid;
		t->joiner_epoch = reg.epoch;
		smarm__unlock(&t->cold, SMARM__RANK_LEAF);
		smarm__wait_park(&w); /* unbounded: cannot fail */
	}
}

int smarm__detach(struct smarm_node *n, uint64_t pid)
{
	struct smarm__slot *t = smarm__slot_at(n, PID_IDX(pid));
	uint64_t w;
	bool done;

	if (t == NULL || PID_GEN(pid) == 0)
		return SMARM_ENOPROC;
	smarm__lock(&t->cold, SMARM__RANK_LEAF);
	w = atomic_load_explicit(&t->word, memory_order_acquire);
	if (W_GEN(w) != PID_GEN(pid) || W_STATE(w) == ST_VACANT) {
		smarm__unlock(&t->cold, SMARM__RANK_LEAF);
		return SMARM_ENOPROC;
	}
	if (!t->joinable || t->has_joiner) {
		smarm__unlock(&t->cold, SMARM__RANK_LEAF);
		return SMARM_ESTATE;
	}
	t->joinable = 0;
	done = W_STATE(w) == ST_DONE;
	if (done)
		reclaim(t);
	smarm__unlock(&t->cold, SMARM__RANK_LEAF);
	if (done)
		smarm__slot_free(n, t->index);
	return 0;
}

/* --------------------------------------------------------- cleanups */

int smarm__cleanup_push(struct smarm__slot *s, smarm_cleanup_cb fn, void *arg)
{
	if (s->cl_len == s->cl_cap) {
		uint32_t cap = s->cl_cap ? s->cl_cap * 2 : 4;
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
