/* SPDX-License-Identifier: MIT */
/*
 * sched.c - the M:N scheduler: N workers take runnable actors, resume
 * them by a context switch, and park on per-worker futexes when there is
 * nothing to run.
 *
 * Glossary (where a runnable actor can wait, in pick order, pick_next):
 *   wake slot    per worker, one pid: the actor the running actor woke,
 *                or a timer fired here woke, run next here, warm (Go's
 *                runnext; WAKE_STREAK bounds it).
 *   pinned FIFO  per worker: actors preempted asynchronously, which must
 *                resume on the worker that preempted them (preempt.c),
 *                and actors that yielded here, which may move but wait
 *                here unless moving helps (yield_queue). Each is due
 *                once everything queued before it in the shared queue
 *                and the deque has had its turn (tickets); the wake
 *                slot goes before it by pick order.
 *   deque        per worker: work-first spawns and wake-slot entries a
 *                newer wake displaced; the owner pops the front, idle
 *                workers steal from the back, and the owner's turn
 *                takes the back once it has aged (ldq_take_aged).
 *   run queue    per node, shared: everything else (yields while a
 *                worker idles, wakes from other threads and timers,
 *                entries displaced while pinned actors wait).
 * The deques and the run queue are the one ring (ring.h); the pinned
 * FIFO is a list linked through the slots, the wake slot one atomic word.
 * System traffic (a stop, an exit signal, an exit's wakes) goes first:
 * an expedited actor leaves whichever of these it waits in for the
 * stopper's wake slot, as an urgent entry (Expedite, Urgent wakes).
 *
 * Design. The shared queue sits under a futex mutex: it is not the
 * bottleneck (smarm's queue shoot-out found lock-free rings within 10-15%
 * in the runtime); the wake path is, hence the wake slot and the deques.
 * An actor leaves its worker only by yielding, parking, ending or being
 * preempted; it switches straight to the next actor (or the scheduler),
 * taking the actor it just woke inline in the switch when that is the
 * pick (pick_woken: the request/reply hand-off), and whoever runs next
 * finishes the transition (yield_return,
 * park_return, pin_push, finalize) after the actor's sp is saved, so a
 * waker that re-queues the actor can never see a half-saved context.
 *
 * Idle protocol. An idle worker sets its bit in idle_mask,
 * issues a SeqCst fence, re-checks for work, and only then sleeps on its
 * parker (a futex word with a permit: an unpark that lands first makes the
 * park return at once). A producer publishes work (queue push), issues a
 * SeqCst fence, and reads idle_mask; if any bit is set it clears one (CAS,
 * highest bit first) and unparks that worker. Dekker: at least one side
 * sees the other's store, so no wake is lost. At most one parked worker,
 * the timekeeper, sleeps toward the earliest timer deadline; inserting an
 * earlier timer wakes it directly. Busy workers fire due timers between
 * actors (a try-lock), so timers fire under saturation too. When the last
 * actor ends, the run is over: wake_all releases every parked worker.
 * Where a layer above installed an fd poll (smarm__netpoll, io's epoll
 * set), one parked worker at a time sleeps in it instead of its futex
 * (PK_POLLING; an unpark breaks the poll), and runs the actors its fd
 * events woke without a hand-off: the poll is the parker's sleep, the
 * permit protocol the same (netpoll_park).
 *
 * Fairness under saturation. Pinned actors never move (INV-P1), so
 * they are spread while they still can be, as deque entries: at the end
 * of a slice a worker steals from the deque of a worker with a longer
 * backlog (balance_steal), and a worker holding more pinned actors than
 * another leaves its deque to thieves for up to LEAVE_DEQUE_MAX slice
 * ends (leave_deque). Then call-free spinners end up at most one apart
 * per worker, and round-robin within each. A slice end also looks at
 * the timers at once, and their wakes go to the wake slot, so an actor
 * woken by a timer or by an actor runs within about a slice; woken
 * actors in the shared queue (rq_woken) go before pinned ones, up to
 * PIN_YIELDS in a row, so a wake from another thread does too.
 *
 * Before it parks, an idle worker spins for a bounded time
 * (SMARM_OPT_IDLE_SPIN_NS) while another worker runs actors; a producer
 * wakes nobody while a spinner exists. At most half the workers spin.
 * spin_for_work states why no wake is lost. Actor-to-actor wakes go to
 * the waker's wake slot (SMARM_OPT_WAKE_SLOT) unless it is off; an entry
 * left standing behind a long-running actor is moved to the shared queue
 * by the preemption monitor (smarm__slots_scan), not by idle workers.
 * A timer inserted while nobody keeps time wakes a parked worker to
 * take the role (smarm__timer_note, has_work).
 *
 * Rejected: a wake pipe drained by one winner (lost completions, syscall
 * per wake); sleeping with poll(ms) (sub-ms deadlines became busy loops);
 * waking every idle worker on each push (thundering herd).
 *
 * Statistics. A node with SMARM_OPT_ACTOR_STATS reads the cycle counter
 * once per switch (astat_switch: the actor leaving is charged from its
 * switch-in, the one arriving starts its run) and once per wake that
 * queues an actor (astat_enq: its run-queue wait starts), into the
 * per-slot lines of slot.h. Without it each of those places costs one
 * predictable branch on a flag of the worker (or node): the counter
 * read is 30-40 ns in a VM, a third of a round trip between two actors.
 *
 * Ownership: workers belong to the node during a run; worker 0 is the
 * caller of smarm_node_run. Locking: rq_lock (RUNQ) guards the rq ring,
 * its front counters, rq_touched and rq_touch_at (the pages written ahead
 * of its pushes; rq_touching counts the writes in flight after the
 * lock, rq_touch_unlock); each ldq_lock (RUNQ, never two at once) its
 * worker's deque; the wake slot and the pinned FIFO are atomic or
 * owner-only; tm_lock (TIMERS) serialises timekeeper arm and timer
 * inserts. Invariants: INV-1 (core.h) at-most-once queued; INV-2 the
 * timekeeper disarms before it fires timers; INV-3 live==0 and empty
 * queues end the run (INV-4 in core.h makes that sound).
 * See: docs/architecture/scheduler.md (Idle workers).
 */

#include "sched.h"

#include "actor.h"
#include "causal.h"
#include "log.h"
#include "membar.h"
#include "node.h"
#include "preempt.h"
#include "slot.h"
#include "stack.h"
#include "subsys.h"
#include "timer.h"
#include "trace.h"
#include "wait.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

__thread struct smarm__worker *smarm__tls_worker
	__attribute__((tls_model("initial-exec")));
__thread bool smarm__tls_obs __attribute__((tls_model("initial-exec")));

/* ---------------------------------------------------------------- queue */

#define RQ_ESZ sizeof(uint64_t) /* run queues and deques hold pid ids */

/* Under rq_lock: k entries left the shared queue (pinned tickets). */
static inline void rq_popped(struct smarm_node *n, uint32_t k)
{
	atomic_store_explicit(
		&n->rq_pops,
		atomic_load_explicit(&n->rq_pops, memory_order_relaxed) + k,
		memory_order_relaxed);
}

/*
 * Pop up to max pids from the front of the shared queue into out[], in
 * queue order; returns how many (0: it was empty).
 */
static uint32_t rq_pop_n(struct smarm_node *n, uint64_t *out, uint32_t max)
{
	uint32_t k = 0;
	if (smarm__ring_len(&n->rq) == 0)
		return 0;
	smarm__glock(&n->rq_lock, &n->rq_lock_n, SMARM__RANK_RUNQ);
	while (k < max && smarm__ring_len(&n->rq) > 0)
		out[k++] = *(uint64_t *)smarm__ring_pop_front(&n->rq, RQ_ESZ);
	if (k > 0) {
		/* Approximate: the oldest pops consume the woken count. */
		uint32_t woken = atomic_load_explicit(&n->rq_woken,
						      memory_order_relaxed);
		atomic_store_explicit(&n->rq_woken, woken > k ? woken - k : 0,
				      memory_order_relaxed);
		rq_popped(n, k);
	}
	smarm__unlock(&n->rq_lock, SMARM__RANK_RUNQ);
	return k;
}

static bool rq_pop(struct smarm_node *n, uint64_t *pid)
{
	return rq_pop_n(n, pid, 1) == 1;
}

/*
 * Work-first spawns (docs/architecture/scheduler.md, "Work-first
 * spawns"). The actors an actor spawns are held until it leaves the CPU
 * (parks, yields, ends, is preempted) and then queued ahead of older
 * work, in spawn order: the spawn tree runs depth-first, as Cilk's
 * work-first policy, so a tree of a million actors keeps a few dozen
 * alive instead of all of them (skynet_actor: 1390 -> ~250 ns per leaf at
 * one worker, the live set fitting in cache). The batch goes to the front
 * of this worker's deque, which idle workers steal from at the back
 * (pick_next's 61st pick keeps the shared queue moving, and it wakes a
 * thief while entries remain). Spawns are held whatever the other workers
 * do: queueing them shared at once while a worker idled or spun (until
 * 0.5.0) sent a spawn tree through the FIFO breadth-first and a spawn
 * chain across workers at every hop. One worker uses its deque too, so
 * neither its spawns nor their first runs touch the node-wide run-queue
 * lock.
 */
static inline void rq_push_n(struct smarm_node *n, const uint64_t *pids,
			     uint32_t k, bool woken);

void smarm__enqueue_spawned(struct smarm_node *n, uint64_t pid)
{
	struct smarm__worker *w = smarm__tls_worker;
	if (w == NULL || w->node != n || w->cur == NULL || w->in_finish) {
		smarm__enqueue(n, pid);
		return;
	}
	if (w->sbatch_n == SMARM__SPAWN_BATCH) {
		/*
		 * More spawns than a batch holds: this run's spawns go to the
		 * back of the shared queue from now on, a full batch per lock
		 * (spawn_join: one node-wide lock per spawn before), the held
		 * ones first, so they still start in spawn order.
		 */
		rq_push_n(n, w->sbatch, w->sbatch_n, false);
		w->sbatch_n = 0;
		w->sbatch_spill = true;
	}
	w->sbatch[w->sbatch_n++] = pid;
}

/* Under v->ldq_lock: note a push or pop (spin_sees_work reads it). */
static void ldq_moved(struct smarm__worker *v)
{
	atomic_store_explicit(
		&v->ldq_ops,
		atomic_load_explicit(&v->ldq_ops, memory_order_relaxed) + 1,
		memory_order_relaxed);
}

/*
 * k pids go on v's deque, in order: at the front (v's own spawns and
 * displaced wakes, which its owner takes next) or at the back (a
 * preempted actor left to v by a fuller worker, preempt.c INV-P7: v is
 * then another worker). False: no room.
 */
static bool ldq_push(struct smarm__worker *v, const uint64_t *pids, uint32_t k,
		     bool front)
{
	smarm__lock(&v->ldq_lock, SMARM__RANK_RUNQ);
	if (smarm__ring_len(&v->ldq) + k > SMARM__LDQ_CAP) {
		smarm__unlock(&v->ldq_lock, SMARM__RANK_RUNQ);
		return false;
	}
	if (front)
		smarm__ring_push_front_n(&v->ldq, RQ_ESZ, pids, k);
	else
		for (uint32_t i = 0; i < k; i++)
			*(uint64_t *)smarm__ring_push_back(&v->ldq, RQ_ESZ) =
				pids[i];
	ldq_moved(v);
	/*
	 * No fence: the push announces nothing. The owner pops the front
	 * next, and a pop that leaves entries wakes a thief through
	 * smarm__wake_one_if_idle, whose fence pairs with idle()'s before
	 * it re-checks the deques (a seq_cst fence here, until 0.5.x, had
	 * no load after it to pair with: 10 ns per hop on two workers). A
	 * push to the back is followed by such a wake.
	 */
	smarm__unlock(&v->ldq_lock, SMARM__RANK_RUNQ);
	return true;
}

/* The held batch goes to the front of w's own deque. */
static bool ldq_push_batch(struct smarm__worker *w)
{
	return ldq_push(w, w->sbatch, w->sbatch_n, true);
}

/* Take from the front (the owner) or the back (a thief, or a balancing
 * steal at a slice end) of v's deque. */
static bool ldq_take(struct smarm__worker *v, bool back, uint64_t *pid)
{
	bool got = false;
	if (smarm__ring_len(&v->ldq) == 0)
		return false;
	smarm__lock(&v->ldq_lock, SMARM__RANK_RUNQ);
	if (smarm__ring_len(&v->ldq) > 0) {
		*pid = *(
			uint64_t *)(back ? smarm__ring_pop_back(&v->ldq, RQ_ESZ)
					 : smarm__ring_pop_front(&v->ldq,
								 RQ_ESZ));
		ldq_moved(v);
		got = true;
	}
	smarm__unlock(&v->ldq_lock, SMARM__RANK_RUNQ);
	return got;
}

/*
 * The owner's pop from the front of its deque. The spawns held for the
 * actor that just left come first: they are the front, not pushed yet
 * (pick_next pushes what it does not take). So a spawn chain's next hop
 * (one held spawn) is taken with no lock, where pushing it and popping
 * it again cost two lock holds.
 */
static bool ldq_take_own(struct smarm__worker *w, uint64_t *pid)
{
	if (w->sbatch_n == 0 || w->sbatch_spill)
		return ldq_take(w, false, pid);
	*pid = w->sbatch[0];
	w->sbatch_n--;
	memmove(w->sbatch, w->sbatch + 1, w->sbatch_n * sizeof w->sbatch[0]);
	smarm__spawns_flush(w); /* the rest: the deque's front, in order */
	return true;
}

/* Steal one actor from the back of another worker's deque. */
static bool ldq_steal(struct smarm__worker *w, uint64_t *pid)
{
	struct smarm_node *n = w->node;
	int nw = n->workers_started;
	for (int i = 1; i < nw; i++)
		if (ldq_take(&n->workers[(w->id + i) % nw], true, pid))
			return true;
	return false;
}

/*
 * The owner's fairness turn on its own deque
 * (docs/architecture/scheduler.md, Work-first spawns): take the back
 * entry once the owner has come no nearer to it for an age,
 * DEQUE_AGE_SLICES timeslices (SMARM_OPT_TIMESLICE_NS; 100 ms by
 * default), doubled at each such take until the deque next runs dry (to
 * DEQUE_AGE_SHIFT_MAX doublings).
 *
 * The owner pops the front, and the front can be fed without end: a spawn
 * chain's next link is held ahead of the deque at every pick
 * (ldq_take_own), wakes displaced from the wake slot go to the front. On
 * one worker, or with every worker busy, nothing else took the back: a
 * spawn chain kept an actor its first link's parent had spawned from ever
 * running. Entries come in at the front (but for a preempted actor moved
 * here, INV-P7), so the back is the oldest; the owner gets nearer to it
 * when the deque falls below its shortest length since the back entry
 * was first seen (the age starts again then). A spawn tree gets nearer
 * every time one of its subtrees ends, a stream that feeds the front
 * does not.
 *
 * But a tree whose subtrees outlast the age looks the same, and each take
 * opens an untouched subtree while the current path stays parked: with a
 * fixed 2 ms age the deque overflowed into the shared queue, which runs
 * its entries breadth-first (skynet_actor at 10^7 leaves: half a million
 * actors alive instead of 256), and at 100 ms so did 10^8 leaves (4
 * million, 2x slower). Doubling keeps the takes of a run logarithmic in
 * its length (10^8 leaves: 5 takes in a 16 s run, 256 alive, as fast as
 * without), and an oldest entry still runs within the current age.
 */
#define DEQUE_AGE_SLICES 50   /* 100 ms at the default timeslice */
#define DEQUE_AGE_SHIFT_MAX 6 /* 6.4 s at the default timeslice */

static bool ldq_take_aged(struct smarm__worker *w, uint64_t *pid)
{
	bool got = false;
	uint32_t len;
	if (smarm__ring_len(&w->ldq) == 0) {
		w->ldq_age_shift = 0; /* the deque ran dry: a new episode */
		return false;
	}
	smarm__lock(&w->ldq_lock, SMARM__RANK_RUNQ);
	len = smarm__ring_len(&w->ldq);
	if (len > 0) {
		uint64_t back =
			*(uint64_t *)smarm__ring_at(&w->ldq, RQ_ESZ, len - 1);
		uint64_t now = smarm__cycles_fast();
		if (back != w->ldq_old || len < w->ldq_old_len) {
			/* A new back entry, or the owner got nearer to it. */
			w->ldq_old = back;
			w->ldq_old_len = len;
			w->ldq_old_since = now;
		} else if (now - w->ldq_old_since >
			   (DEQUE_AGE_SLICES * w->node->slice_cycles)
				   << w->ldq_age_shift) {
			*pid = *(uint64_t *)smarm__ring_pop_back(&w->ldq,
								 RQ_ESZ);
			ldq_moved(w);
			w->ldq_old = 0;
			if (w->ldq_age_shift < DEQUE_AGE_SHIFT_MAX)
				w->ldq_age_shift++;
			got = true;
		}
	}
	smarm__unlock(&w->ldq_lock, SMARM__RANK_RUNQ);
	return got;
}

/* Any worker's deque holds work (idle rechecks after its seq_cst fence,
 * which pairs with the pusher's fence in ldq_push_batch). */
static bool ldq_any(struct smarm_node *n)
{
	for (int i = 0; i < n->workers_started; i++)
		if (smarm__ring_len(&n->workers[i].ldq) > 0)
			return true;
	return false;
}

/* Queue the held spawns of the actor leaving w (see above). */
void smarm__spawns_flush_slow(struct smarm__worker *w)
{
	struct smarm_node *n = w->node;
	uint32_t k = w->sbatch_n;
	bool spilled = w->sbatch_spill;
	w->sbatch_spill = false;
	if (k == 0)
		return;
	/* After a spill, the rest follow the spilled ones to the back. */
	if (spilled || !ldq_push_batch(w))
		rq_push_n(n, w->sbatch, k, false);
	w->sbatch_n = 0;
}

/*
 * The shared queue's next pages, written before its pushes reach them
 * (rq_push_n). The first write to a page of the buffer that no run has
 * reached yet costs microseconds (a fault; on the 2-vCPU VM measured, a
 * page madvise(MADV_POPULATE_WRITE) had mapped still cost as much at
 * its first write), and under rq_lock that held a worker waiting for it
 * past its spin into a futex sleep: spawn_join at two workers, in its
 * first run after the warm-up, slept once per fresh page (some 125
 * times) and ran at 119 ns per actor instead of about 80
 * (docs/benchmarks.md). A push whose tail comes within RQ_TOUCH_AHEAD
 * entries of rq_touched (to rq_touch_at: one compare on the push path)
 * claims the next RQ_TOUCH_AHEAD entries under the lock and writes one
 * word of each of their pages after it, with
 * smarm__page_touch, which changes no value: a push that gets there
 * first (under the lock) loses nothing. Only pages of the buffer's first
 * pass are touched, at most 2 * RQ_TOUCH_AHEAD entries (32 KB) past the
 * longest the queue has been; a growth that replaces the buffer waits
 * for rq_touching to be 0 before it frees the old one (slot.c,
 * rq_reserve).
 */
#define RQ_TOUCH_AHEAD 2048 /* entries: 4 pages of 4 KB */

/*
 * The rest of a push whose tail, at end (an index into the buffer, or
 * past its capacity once it wrapped), has come to rq_touch_at: claim the
 * next pages under rq_lock, release it, and write one word of each.
 */
static __attribute__((noinline, cold)) void
rq_touch_unlock(struct smarm_node *n, uint32_t end)
{
	uint32_t from = n->rq_touched > end ? n->rq_touched : end;
	uint32_t to;
	uintptr_t a;
	uintptr_t hi;
	uintptr_t pg = smarm__page_size();
	if (from >= n->rq.rg_cap) { /* wrapped: every page written */
		n->rq_touched = n->rq.rg_cap;
		n->rq_touch_at = UINT32_MAX;
		smarm__unlock(&n->rq_lock, SMARM__RANK_RUNQ);
		return;
	}
	to = n->rq.rg_cap - from > RQ_TOUCH_AHEAD ? from + RQ_TOUCH_AHEAD
						  : n->rq.rg_cap;
	n->rq_touched = to;
	n->rq_touch_at =
		to == n->rq.rg_cap ? UINT32_MAX : to - RQ_TOUCH_AHEAD + 1;
	atomic_fetch_add_explicit(&n->rq_touching, 1, memory_order_relaxed);
	a = (uintptr_t)(n->rq.rg_buf + (size_t)from * RQ_ESZ);
	hi = (uintptr_t)(n->rq.rg_buf + (size_t)to * RQ_ESZ);
	smarm__unlock(&n->rq_lock, SMARM__RANK_RUNQ);
	while (a < hi) {
		smarm__page_touch((void *)a);
		a = (a | (pg - 1)) + 1; /* the next page's first word */
	}
	/* Release: the growth that waits for 0 frees the buffer after. */
	atomic_fetch_sub_explicit(&n->rq_touching, 1, memory_order_release);
}

/*
 * Push k pids on the back of the shared queue, in one hold of its lock.
 * woken: they were parked (a wake from another thread, a timer fired
 * while idle, an exiting actor's wake, a slot entry displaced while
 * pinned actors wait),
 * which counts them in
 * rq_woken: pinned actors let such entries go first (pick_next), so a
 * wake under saturation waits about a slice, not a slice per pinned
 * actor. Spawns past a held batch come 16 at a time (not woken).
 */
static inline __attribute__((always_inline)) void
rq_push_n(struct smarm_node *n, const uint64_t *pids, uint32_t k, bool woken)
{
	struct smarm__worker *w = smarm__tls_worker;
	uint32_t end;
	smarm__glock(&n->rq_lock, &n->rq_lock_n, SMARM__RANK_RUNQ);
	if (SMARM_NEVER(smarm__ring_len(&n->rq) + k > n->rq.rg_cap))
		smarm__panic("sched: run queue overflow (double enqueue)");
	for (uint32_t i = 0; i < k; i++) {
		/* Only a QUEUED actor of this generation (INV-1). */
		SMARM_ASSERT(SMARM__W_STATE(atomic_load_explicit(
				     &smarm__slot_at(n, SMARM__PID_IDX(pids[i]))
					      ->word,
				     memory_order_relaxed)) ==
			     SMARM__ST_QUEUED);
		*(uint64_t *)smarm__ring_push_back(&n->rq, RQ_ESZ) = pids[i];
	}
	if (woken)
		atomic_store_explicit(
			&n->rq_woken,
			atomic_load_explicit(&n->rq_woken,
					     memory_order_relaxed) +
				k,
			memory_order_relaxed);
	end = n->rq.rg_head + smarm__ring_len(&n->rq);
	if (SMARM_UNLIKELY(end >= n->rq_touch_at))
		rq_touch_unlock(n, end); /* the pages ahead, after the lock */
	else
		smarm__unlock(&n->rq_lock, SMARM__RANK_RUNQ);
	/* A lone worker enqueuing for itself cannot be idle. */
	if (n->workers_n == 1 && w != NULL && w->node == n)
		return;
	smarm__wake_one_if_idle(n);
}

static void rq_push(struct smarm_node *n, uint64_t pid, bool woken)
{
	rq_push_n(n, &pid, 1, woken);
}

void smarm__enqueue(struct smarm_node *n, uint64_t pid)
{
	rq_push(n, pid, false);
}

/* --------------------------------------------------------------- parker */

enum { PK_EMPTY = 0, PK_PARKED = 1, PK_NOTIFIED = 2, PK_POLLING = 3 };

/*
 * Park w on its parker p until a permit (parker_unpark), the deadline
 * (0: none), or, for the worker that polls (np_arg not NULL: netpoll_park),
 * a poll that woke an actor (it went to this worker's wake slot:
 * fire_local). The poller sleeps in the installed np_wait in state
 * PK_POLLING, which an unpark breaks; the others on the futex in
 * PK_PARKED. A permit that came before the park is consumed at once;
 * one that comes with the deadline or the poll's wake is consumed too.
 */
static void parker_park(struct smarm__worker *w, struct smarm__parker *p,
			uint64_t deadline, void *np_arg)
{
	uint32_t st = np_arg != NULL ? PK_POLLING : PK_PARKED;
	uint32_t expect = PK_EMPTY;
	if (!__atomic_compare_exchange_n(&p->state, &expect, st, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&p->state, PK_EMPTY, __ATOMIC_RELEASE);
		return; /* a permit was waiting */
	}
	for (;;) {
		bool over;
		if (np_arg != NULL) {
			w->fire_local = true;
			over = w->node->np_ops->np_wait(np_arg, deadline) > 0;
			w->fire_local = false;
			over |= deadline != 0 && smarm__clock_ns() >= deadline;
		} else {
			uint64_t now = deadline != 0 ? smarm__clock_ns() : 0;
			over = deadline != 0 && now >= deadline;
			if (!over)
				smarm__futex_wait(&p->state, PK_PARKED,
						  deadline != 0 ? deadline - now
								: 0);
		}
		if (over) {
			__atomic_exchange_n(&p->state, PK_EMPTY,
					    __ATOMIC_ACQUIRE);
			return;
		}
		expect = PK_NOTIFIED;
		if (__atomic_compare_exchange_n(&p->state, &expect, PK_EMPTY,
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
	}
}

static void parker_unpark(struct smarm_node *n, struct smarm__parker *p)
{
	uint32_t was =
		__atomic_exchange_n(&p->state, PK_NOTIFIED, __ATOMIC_RELEASE);
	if (was == PK_PARKED)
		smarm__futex_wake(&p->state, 1);
	else if (was == PK_POLLING)
		n->np_ops->np_break(
			atomic_load_explicit(&n->np_arg, memory_order_acquire));
}

#define NP_THREAD SMARM__MAX_WORKERS /* np_owner: the layer's thread */

bool smarm__netpoll_install(struct smarm_node *n,
			    const struct smarm__netpoll *ops, void *arg)
{
	if (arg == NULL) {
		/* Run end: the thread polls for good (its stop comes so). */
		atomic_store_explicit(&n->np_arg, NULL, memory_order_release);
		atomic_store_explicit(&n->np_owner, NP_THREAD,
				      memory_order_seq_cst);
		smarm__futex_wake((uint32_t *)&n->np_owner, 1);
		return true;
	}
	/* Whether the monitor runs (smarm__monitor_start's rule): it may
	 * start after a worker's first io call. */
	if (!n->preempt_async && n->workers_n < 2)
		return false;
	n->np_ops = ops;
	atomic_store_explicit(&n->np_owner, -1, memory_order_relaxed);
	atomic_store_explicit(&n->np_arg, arg, memory_order_release);
	return true;
}

void smarm__netpoll_thread_wait(struct smarm_node *n)
{
	for (;;) {
		int o = atomic_load_explicit(&n->np_owner,
					     memory_order_acquire);
		if (o == NP_THREAD ||
		    atomic_load_explicit(&n->np_arg, memory_order_acquire) ==
			    NULL)
			return;
		smarm__futex_wait((uint32_t *)&n->np_owner, (uint32_t)o, 0);
	}
}

/*
 * The thread gives the poll back, free. A worker that went idle while
 * the thread held it parked on its futex; if every worker did, nobody
 * would poll. So, after the release (seq_cst), one idle worker is woken
 * to go round idle() again and take the poll: Dekker with idle(), whose
 * idle bit and fence come before netpoll_park reads np_owner.
 */
void smarm__netpoll_thread_done(struct smarm_node *n)
{
	int t = NP_THREAD;
	if (atomic_load_explicit(&n->np_arg, memory_order_acquire) != NULL &&
	    atomic_compare_exchange_strong_explicit(&n->np_owner, &t, -1,
						    memory_order_seq_cst,
						    memory_order_relaxed))
		smarm__wake_one_if_idle(n);
}

/*
 * The monitor's look: a poll left free (its worker away running what it
 * woke) at two looks at least a scan period apart, with no worker taking
 * it in between, goes
 * to the thread, so an fd that becomes ready while every worker computes
 * is seen within about two monitor periods (one async slice each while
 * a worker runs actors).
 */
void smarm__netpoll_look(struct smarm_node *n, uint64_t seen[2], uint64_t now)
{
	uint64_t tag;
	int none = -1;
	if (atomic_load_explicit(&n->np_arg, memory_order_acquire) == NULL ||
	    atomic_load_explicit(&n->np_owner, memory_order_relaxed) != -1) {
		seen[0] = 0;
		return;
	}
	tag = (1ull << 32) |
	      atomic_load_explicit(&n->np_seq, memory_order_relaxed);
	if (seen[0] != tag) {
		seen[0] = tag;
		seen[1] = now;
		return;
	}
	if (now - seen[1] < SMARM__SLOT_SCAN_NS)
		return; /* a poke's look soon after: not a period yet */
	seen[0] = 0;
	if (atomic_compare_exchange_strong_explicit(
		    &n->np_owner, &none, NP_THREAD, memory_order_seq_cst,
		    memory_order_relaxed))
		smarm__futex_wake((uint32_t *)&n->np_owner, 1);
}

/*
 * Park w as the node's poller if an fd poll is installed and it is free.
 * Returns false, having done nothing, otherwise. Whoever holds the poll
 * is the only waiter in the fd set, so a break (parker_unpark) reaches
 * the poller it was meant for.
 */
static bool netpoll_park(struct smarm__worker *w, uint64_t deadline)
{
	struct smarm_node *n = w->node;
	void *arg = atomic_load_explicit(&n->np_arg, memory_order_acquire);
	int none = -1;
	if (arg == NULL ||
	    atomic_load_explicit(&n->np_owner, memory_order_relaxed) != -1 ||
	    !atomic_compare_exchange_strong_explicit(&n->np_owner, &none, w->id,
						     memory_order_acquire,
						     memory_order_relaxed))
		return false;
	atomic_store_explicit(
		&n->np_seq,
		atomic_load_explicit(&n->np_seq, memory_order_relaxed) + 1,
		memory_order_relaxed);
	parker_park(w, &n->parkers[w->id], deadline, arg);
	atomic_store_explicit(&n->np_owner, -1, memory_order_release);
	return true;
}

/* ---------------------------------------------------------- coordinator */

static bool wake_one(struct smarm_node *n)
{
	uint64_t mask = atomic_fetch_or_explicit(&n->idle_mask, 0,
						 memory_order_acq_rel);
	while (mask != 0) {
		int id = 63 - __builtin_clzll(mask);
		uint64_t bit = 1ull << id;
		if (atomic_compare_exchange_weak_explicit(
			    &n->idle_mask, &mask, mask & ~bit,
			    memory_order_acq_rel, memory_order_acquire)) {
			parker_unpark(n, &n->parkers[id]);
			return true;
		}
	}
	return false;
}

/*
 * Producer side of the idle protocol, after publishing work: wake one
 * parked worker unless a spinning worker exists (it will find the work;
 * spin_for_work's comment gives the argument) or nobody is parked.
 */
void smarm__wake_one_if_idle(struct smarm_node *n)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&n->spin_mask, memory_order_relaxed) != 0)
		return;
	if (atomic_load_explicit(&n->idle_mask, memory_order_relaxed) == 0)
		return;
	wake_one(n);
}

void smarm__wake_all(struct smarm_node *n)
{
	atomic_store_explicit(&n->idle_mask, 0, memory_order_seq_cst);
	for (int i = 0; i < n->workers_n; i++)
		parker_unpark(n, &n->parkers[i]);
}

/* Called under tm_lock by every timer insert. */
void smarm__timer_note(struct smarm_node *n, uint64_t deadline)
{
	if (deadline <
	    atomic_load_explicit(&n->next_deadline, memory_order_relaxed)) {
		atomic_store_explicit(&n->next_deadline, deadline,
				      memory_order_release);
		smarm__monitor_timer(n, deadline);
	}
	int holder = atomic_load_explicit(&n->tk_holder, memory_order_seq_cst);
	if (holder >= 0) {
		if (deadline <
		    atomic_load_explicit(&n->tk_armed, memory_order_seq_cst))
			parker_unpark(n, &n->parkers[holder]);
	} else if (n->workers_n > 1 || smarm__tls_worker == NULL ||
		   smarm__tls_worker->node != n) {
		/*
		 * No timekeeper: a parked worker takes the role (idle, on its
		 * way back to the park), or nobody would fire this timer while
		 * every running worker computes (a lone worker inserting is not
		 * parked). Pairs with has_work's look at tk_holder after the
		 * idle bit's fence.
		 */
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&n->idle_mask, memory_order_relaxed))
			wake_one(n);
	}
}

static bool has_work(struct smarm__worker *w)
{
	struct smarm_node *n = w->node;
	return atomic_load_explicit(&w->next, memory_order_relaxed) != 0 ||
	       smarm__ring_len(&n->rq) > 0 || ldq_any(n) ||
	       smarm__live(n) == 0 || smarm__timers_due(n) ||
	       /* timers wait and nobody keeps time: take the role */
	       (atomic_load_explicit(&n->next_deadline, memory_order_relaxed) !=
			UINT64_MAX &&
		atomic_load_explicit(&n->tk_holder, memory_order_seq_cst) < 0);
}

/*
 * A wake slot is only ever emptied by its owner, which does so when its
 * current actor stops running. If that actor computes for long without
 * a safe point (or blocks in a foreign call), the woken actor would wait
 * behind it while other workers sit idle. So the preemption monitor,
 * while some worker idles and another is busy, calls this every
 * SMARM__SLOT_SCAN_NS: it moves to the shared queue (waking an idle
 * worker) any slot entry it saw at its previous scan and that is still
 * there (same fill sequence), so a slot entry waits at most about two
 * scan periods. Fresh entries are left alone, so a ping-pong pair keeps
 * its locality. The monitor thread is no worker: its pushes go through
 * rq_push's foreign-thread path.
 */
void smarm__slots_scan(struct smarm_node *n, struct smarm__slot_seen *seen)
{
	int nw =
		atomic_load_explicit(&n->workers_started, memory_order_relaxed);
	for (int i = 0; i < nw; i++) {
		struct smarm__worker *v = &n->workers[i];
		uint32_t seq;
		uint64_t pid;
		seq = atomic_load_explicit(&v->next_seq, memory_order_acquire);
		pid = atomic_load_explicit(&v->next, memory_order_acquire);
		if (pid != 0 && pid == seen[i].pid && seq == seen[i].seq) {
			uint64_t got;
			/* The owner's accesses are plain while nobody
			 * visits (membar.h): announce, wait them out. */
			smarm__visit_begin(&n->own_visitors);
			smarm__visit_wait(&v->own_busy);
			got = atomic_exchange_explicit(&v->next, 0,
						       memory_order_acq_rel);
			smarm__visit_end(&n->own_visitors);
			if (got != 0)
				rq_push(n, got, true);
			pid = 0;
		}
		seen[i].pid = pid;
		seen[i].seq = seq;
	}
}

/*
 * Whether any other worker is running actors: neither parked idle nor
 * spinning. Spinners must not count, or two of them would keep each
 * other spinning (and scanning) forever on a node with nothing to do.
 */
static bool others_busy(struct smarm__worker *w)
{
	struct smarm_node *n = w->node;
	uint64_t all = n->workers_started == 64
			       ? ~0ull
			       : (1ull << n->workers_started) - 1;
	uint64_t idle =
		atomic_load_explicit(&n->idle_mask, memory_order_relaxed) |
		atomic_load_explicit(&n->spin_mask, memory_order_relaxed);
	return (all & ~idle & ~(1ull << w->id)) != 0;
}

/* A per-worker statistic: owner-only, a relaxed store, no RMW. */
static inline void stat_inc(uint64_t *c)
{
	__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

/* What a spinner watches (spin_sees_work). */
/* A lone queued actor left to the busy workers: what moved, and when. */
struct spin_still {
	uint64_t mark;	/* the queue's move count at the last look */
	uint64_t since; /* cycle count when that count was first seen, 0:
			   nothing queued */
};

struct spin_view {
	struct spin_still rq; /* the shared queue: rq_pops */
	struct spin_still dq; /* the deques: their ldq_ops */
};

/*
 * Whether the lone entry of a queue (queued: it holds one) has sat
 * there, the queue not moving (mark unchanged), for the grace.
 */
static bool still_for_grace(struct spin_still *g, bool queued, uint64_t mark,
			    uint64_t now, uint64_t grace)
{
	if (!queued) {
		g->since = 0;
		return false;
	}
	if (g->since == 0 || mark != g->mark) {
		g->mark = mark;
		g->since = now;
		return false;
	}
	return now - g->since >= grace;
}

/*
 * The deques at a glance: whether any holds two entries or more
 * (*surplus), any one at all (*queued), and the sum of the non-empty
 * ones' ldq_ops, which changes whenever one is pushed or popped.
 */
static uint64_t ldq_glance(struct smarm__worker *w, bool *surplus, bool *queued)
{
	struct smarm_node *n = w->node;
	uint64_t ops = 0;
	*surplus = *queued = false;
	for (int i = 0; i < n->workers_started; i++) {
		uint32_t len = smarm__ring_len(&n->workers[i].ldq);
		if (len == 0)
			continue;
		*queued = true;
		*surplus = *surplus || len >= 2;
		ops += atomic_load_explicit(&n->workers[i].ldq_ops,
					    memory_order_relaxed);
	}
	return ops;
}

/*
 * Whether a spinner should stop spinning and take work; plain loads, the
 * exit path re-checks with the fences. Surplus (two or more queued) is
 * taken at once; a lone actor only once the queue has not moved (rq_pops,
 * the monotonic pop count that also tickets pinned actors) for
 * SMARM__SPIN_GRACE_NS (no busy worker is about to take it). now is a
 * cycle count.
 */
static bool spin_sees_work(struct smarm__worker *w, struct spin_view *v,
			   uint64_t now)
{
	struct smarm_node *n = w->node;
	uint32_t len = smarm__ring_len(&n->rq);
	bool surplus, queued;
	uint64_t ops = ldq_glance(w, &surplus, &queued);

	if (len >= 2 || surplus ||
	    atomic_load_explicit(&w->next, memory_order_relaxed) != 0 ||
	    smarm__live(n) == 0)
		return true;
	/*
	 * A lone deque entry is usually its owner's next pick (a spawn
	 * chain's next hop, pushed as its spawner left the CPU): taken, as
	 * a lone entry of the shared queue, only once it has not moved for
	 * the grace.
	 */
	return still_for_grace(&v->dq, queued, ops, now, n->spin_grace_cycles) |
	       still_for_grace(
		       &v->rq, len > 0,
		       atomic_load_explicit(&n->rq_pops, memory_order_relaxed),
		       now, n->spin_grace_cycles);
}

/*
 * Spin before parking (as Go's spinning Ms do). A worker out of
 * work polls the shared run queue, the run's end and the timers for up to
 * spin_ns before it commits to the futex park, so a producer on another
 * worker hands work over without a futex wake (~µs each in a VM). At most
 * max_spinners (workers/2, at least 1) spin at once, and only while some
 * other worker is running actors: an idle node has nobody to produce
 * work, so its workers park at once. Spinners do not take other workers'
 * wake slots: a fresh slot entry belongs to its waker for locality, and a
 * stale one is the monitor's business (smarm__slots_scan, after a period
 * far longer than a spin).
 *
 * No lost wake. A producer publishes work, issues a SeqCst fence, and
 * skips the futex wake if it then reads spin_mask != 0. A spinner leaves
 * by clearing its bit and issuing a SeqCst fence, and only then looks
 * at the queue again: either to take work (pick_next, whose chain rule
 * wakes a sleeper for any surplus) or in the park protocol's recheck
 * (idle bit, fence, has_work). If the producer's load of spin_mask read
 * a value from before the spinner's clear, the producer's fence
 * precedes the spinner's fence in the SeqCst order, so every later load
 * of the spinner sees the published work (or a later state: another
 * worker took it). Otherwise the producer saw the clear and falls
 * back on the idle-bit handshake, which is the unchanged Dekker pair
 * (publish; fence; load idle_mask) against (set bit; fence; recheck).
 * Either way some worker that will look at the queue again knows of the
 * work. A spinner that found work and then lost the race for it calls
 * idle() again and spins or parks under the same rules.
 *
 * Returns true when work (or the run's end, or a due timer) turned up.
 */
static bool spin_for_work(struct smarm__worker *w)
{
	struct smarm_node *n = w->node;
	struct spin_view v = { 0 };
	uint64_t now;
	uint64_t until;
	bool found = false;
	uint64_t bit = 1ull << w->id;
	uint64_t cur;

	if (n->spin_cycles == 0 || n->workers_started <= 1 || !others_busy(w))
		return false;
	cur = atomic_load_explicit(&n->spin_mask, memory_order_relaxed);
	do {
		if (__builtin_popcountll(cur) >= n->max_spinners)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(
		&n->spin_mask, &cur, cur | bit, memory_order_seq_cst,
		memory_order_relaxed));

	/*
	 * Poll every SMARM__SPIN_POLL_NS, not back to back: each look pulls
	 * the run queue's cache lines over to this core, and the producer
	 * then pays a transfer on its next push or pop. Timers are checked
	 * every 8th poll (a clock read).
	 */
	now = smarm__cycles_fast();
	until = now + n->spin_cycles;
	for (uint32_t polls = 1; !found && now < until; polls++) {
		uint64_t next = now + n->spin_poll_cycles;
		found = spin_sees_work(w, &v, now) ||
			((polls & 7) == 0 && smarm__timers_due(n));
		do {
			smarm__cpu_relax();
			now = smarm__cycles_fast();
		} while (!found && now < next);
	}
	found = found || smarm__timers_due(n);

	atomic_fetch_and_explicit(&n->spin_mask, ~bit, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	if (found)
		stat_inc(&n->wstats[w->id].spin_hits);
	return found;
}

/*
 * Garbage after system traffic. A server that dies under load leaves
 * the segments of its unread backlog to its worker's cache, unread
 * (ring.h QUEUE-7; chan.c INV-10), so its exit signals and Down go out
 * without that work, and a supervisor stopping its children hands the
 * CPU to the next child at once (sup_shutdown_load: reading and freeing
 * those segments was most of what the load added). The worker sorts
 * them as it takes ordinary work: up to TIDY_PICK segments each time a
 * pick gets past the wake slot (never on an urgent or a hand-off pick),
 * and all of them, TIDY_IDLE at a time, before it goes idle. The
 * pending list is bounded (ring.h); past that a discard frees at once.
 */
#define TIDY_PICK 32
#define TIDY_IDLE 256

static void idle(struct smarm__worker *w)
{
	struct smarm_node *n = w->node;
	uint64_t bit = 1ull << w->id;
	uint64_t deadline = 0;
	bool keeper = false;

	/* Garbage after system traffic: an idle worker sorts it all. */
	while (smarm__qseg_cache_pending(&w->qsegs) && !has_work(w))
		(void)smarm__qseg_cache_tidy(&w->qsegs, TIDY_IDLE);
	if (spin_for_work(w))
		return;

	smarm__glock(&n->tm_lock, &n->tm_lock_n, SMARM__RANK_TIMERS);
	uint64_t d = smarm__timers_peek(n);
	if (d != UINT64_MAX) {
		int none = -1;
		if (atomic_compare_exchange_strong_explicit(
			    &n->tk_holder, &none, w->id, memory_order_seq_cst,
			    memory_order_seq_cst)) {
			atomic_store_explicit(&n->tk_armed, d,
					      memory_order_seq_cst);
			keeper = true;
			deadline = d ? d : 1;
		}
	}
	smarm__unlock(&n->tm_lock, SMARM__RANK_TIMERS);
	atomic_fetch_or_explicit(&n->idle_mask, bit, memory_order_acq_rel);
	atomic_thread_fence(memory_order_seq_cst);
	/*
	 * After the idle bit is published and fenced: a monitor in a long
	 * nap is woken to scan the others' wake slots while this one idles
	 * (preempt.c; its own fence pairs with ours).
	 */
	if (n->workers_started > 1 && others_busy(w))
		smarm__monitor_poke(n, SMARM__MON_LONG);
	if (!has_work(w)) {
		stat_inc(&n->wstats[w->id].parks);
		if (!netpoll_park(w, deadline))
			parker_park(w, &n->parkers[w->id], deadline, NULL);
		/*
		 * Leaving a sleep: the monitor may have backed off while the
		 * node idled. Woken now, it watches this worker's next actor
		 * from its start, so a saturating one is preempted after the
		 * usual one to two slices, not after a backed-off nap too.
		 * A nap of one slice is left alone: it looks within a slice
		 * anyway, and a server woken by each request (10k a second)
		 * woke it with every one (a futex wake and a context switch).
		 */
		smarm__monitor_poke(n, SMARM__MON_BACKED);
	}
	atomic_fetch_and_explicit(&n->idle_mask, ~bit, memory_order_acq_rel);

	if (keeper) {
		/* Disarm before firing (INV-2): fired sends may insert. */
		atomic_store_explicit(&n->tk_armed, UINT64_MAX,
				      memory_order_seq_cst);
		atomic_store_explicit(&n->tk_holder, -1, memory_order_seq_cst);
		smarm__timers_fire(n, false);
		/*
		 * Leaving idle for work with timers still pending: hand the
		 * timekeeper role to an idle worker, or nobody would sleep
		 * toward the next deadline while this one computes.
		 */
		if (n->workers_started > 1 &&
		    atomic_load_explicit(&n->next_deadline,
					 memory_order_relaxed) != UINT64_MAX &&
		    smarm__ring_len(&n->rq) > 0)
			smarm__wake_one_if_idle(n);
	}
}

/* -------------------------------------------------------------- switch */

/*
 * Could anything but the running actor run on w now? Held spawns, the
 * wake slot, pinned actors, w's deque, the shared queue, or a pending
 * timer (checked without a clock read: it may be due). A yield or a
 * preemption with nothing else to run just goes on.
 */
bool smarm__other_work(struct smarm__worker *w)
{
	struct smarm_node *n = w->node;
	return w->sbatch_n > 0 ||
	       atomic_load_explicit(&w->next, memory_order_relaxed) != 0 ||
	       w->pin_head != SMARM__NO_INDEX || smarm__ring_len(&w->ldq) > 0 ||
	       smarm__ring_len(&n->rq) > 0 ||
	       atomic_load_explicit(&n->next_deadline, memory_order_relaxed) !=
		       UINT64_MAX;
}

static inline void yield_as(struct smarm__slot *s, int intent)
{
	struct smarm__worker *w = smarm__tls_worker;
	smarm__observe_stop(s);
	smarm__spawns_flush(w);
	if (!smarm__other_work(w)) {
		w->slice_start = 0;
		return;
	}
	smarm__switch_out(s, intent);
	smarm__observe_stop(s);
}

void smarm__yield(struct smarm__slot *s)
{
	yield_as(s, SMARM__INTENT_YIELD);
}

void smarm__yield_slice(struct smarm__slot *s)
{
	struct smarm__worker *w = smarm__tls_worker;
	if (SMARM_UNLIKELY(w->astat))
		SMARM__ASTAT_ADD(&smarm__astat_of(w->node, s)->as_pre_safe, 1);
	yield_as(s, SMARM__INTENT_SLICE);
}

/*
 * Put pid, a QUEUED actor, in w's wake slot (w runs an actor of its
 * node): it runs next here; the entry it displaces goes to the front of
 * w's deque (or, while pinned actors wait, to the shared queue).
 */
static inline __attribute__((always_inline)) void
slot_put(struct smarm__worker *w, uint64_t pid, bool urgent)
{
	struct smarm_node *n = w->node;
	uint64_t old;
	bool shared = atomic_load_explicit(&n->workers_started,
					   memory_order_relaxed) > 1;
	if (!shared) {
		/* One worker: the monitor never scans. */
		old = atomic_load_explicit(&w->next, memory_order_relaxed);
		atomic_store_explicit(&w->next, pid, memory_order_relaxed);
	} else if (smarm__owner_enter(&w->own_busy, &n->own_visitors)) {
		/* The monitor is not scanning: plain access. */
		old = atomic_load_explicit(&w->next, memory_order_relaxed);
		atomic_store_explicit(&w->next, pid, memory_order_relaxed);
		smarm__owner_leave(&w->own_busy);
	} else {
		old = atomic_exchange_explicit(&w->next, pid,
					       memory_order_acq_rel);
	}
	atomic_store_explicit(
		&w->next_seq,
		atomic_load_explicit(&w->next_seq, memory_order_relaxed) + 1,
		memory_order_relaxed);
	w->urgent = urgent ? pid : 0;
	if (old != 0) {
		/*
		 * Displaced: it stays on this worker, at the front of
		 * its deque, so actors that talk to each other here
		 * are not spread over the workers through the shared
		 * queue; a worker that idles is woken to steal it (from
		 * the back) rather than let it wait behind our actor.
		 * Not while pinned actors wait here: a woken actor in
		 * the shared queue goes before them (rq_woken), one in
		 * the deque would wait for their turns.
		 */
		stat_inc(&n->wstats[w->id].slot_displaced);
		if (w->pin_head != SMARM__NO_INDEX ||
		    !ldq_push(w, &old, 1, true))
			rq_push(n, old, true);
		else if (shared)
			smarm__wake_one_if_idle(n);
	}
	/* If our actor then runs long, the monitor's slot scan moves this
	 * entry (smarm__slots_scan). */
}

/*
 * Held wakes (smarm__wakes_hold). An exit's Downs and exit signals are
 * sent one watcher at a time; were each watcher queued as its signal
 * went out, an idle worker could run the first watcher while the exit
 * still sends, and a message that watcher sends on its Down could reach
 * a later watcher before that watcher's own Down. Held, they are queued
 * together when the exit's hooks are done. Only the owner touches the
 * hold. Out of memory, a wake goes out at once (false): its order is
 * lost, never the wake.
 */
static bool wakes_held_add(struct smarm__worker *w, uint64_t pid)
{
	if (w->wheld_n == w->wheld_cap) {
		uint32_t cap = w->wheld_cap ? 2 * w->wheld_cap : 16;
		uint64_t *p = realloc(w->wheld, cap * sizeof *p);
		if (p == NULL)
			return false;
		w->wheld = p;
		w->wheld_cap = cap;
	}
	w->wheld[w->wheld_n++] = pid;
	return true;
}

void smarm__wakes_hold(struct smarm__worker *w, bool on)
{
	uint32_t k;
	/* One worker: nobody runs before the exit is over anyway, and the
	 * wake slot is the faster way (enqueue_woken). */
	if (atomic_load_explicit(&w->node->workers_started,
				 memory_order_relaxed) == 1)
		return;
	if (on) {
		w->whold++;
		return;
	}
	SMARM_ASSERT(w->whold > 0);
	if (--w->whold != 0 || w->wheld_n == 0)
		return;
	/* In the order made; the woken go before spawns and yields. */
	k = w->wheld_n;
	w->wheld_n = 0;
	if (w->node->wake_slot && w->cur != NULL && !w->in_finish &&
	    atomic_load_explicit(&w->node->idle_mask, memory_order_relaxed) ==
		    0 &&
	    atomic_load_explicit(&w->node->spin_mask, memory_order_relaxed) ==
		    0) {
		/*
		 * No worker idles to take them at once: the first (a
		 * supervisor awaiting this Down, the next link of a chain)
		 * runs next here, as on one worker, not behind this worker's
		 * deque (sup_shutdown_load on two workers: 62x the quiet
		 * shutdown when it waited there). The hooks are over, so
		 * nothing it does can overtake a wake of this exit.
		 */
		if (k > 1)
			rq_push_n(w->node, w->wheld + 1, k - 1, true);
		slot_put(w, w->wheld[0], true);
		return;
	}
	rq_push_n(w->node, w->wheld, k, true);
}

/*
 * Queue an actor a wake made runnable. A wake issued by an actor running
 * on a worker of the same node goes to that worker's wake slot (Go's
 * runnext): the woken actor runs next on this worker, warm in cache, with
 * no run-queue lock on either side. A newer wake displaces the older one
 * to the front of this worker's deque (Go puts it at the tail of its
 * P's runq): through the shared queue, two ping-pong pairs per worker
 * were spread over the workers at every displacement, and each message
 * then crossed between them (send_by_name_pairs on two workers: 3x
 * slower). Wakes from scheduler context (timers, finalize) and from
 * other threads, spawns and yields use the shared queue. So do wakes by
 * an actor that is exiting (its Downs and exit signals) when there are
 * other workers: the slot would hold the woken actor (a supervisor, a
 * watcher) until the exit and its finalize are over, while an idle
 * worker can take it from the queue at once. With one worker the slot
 * is the faster way to the same order.
 */
static void enqueue_woken(struct smarm_node *n, uint64_t pid, bool urgent)
{
	struct smarm__worker *w = smarm__tls_worker;
	if (n->wake_slot && w != NULL && w->node == n &&
	    ((w->cur != NULL && !w->in_finish) || w->fire_local)) {
		bool exit_wake = w->cur != NULL && w->cur->exiting;
		if (exit_wake && atomic_load_explicit(&n->workers_started,
						      memory_order_relaxed) > 1)
			goto queue; /* an exit's wake: see above */
		slot_put(w, pid, urgent || exit_wake);
		return;
	}
queue:
	/* An exit's hooks run (no wake of theirs takes the slot path). */
	if (SMARM_UNLIKELY(w != NULL && w->whold != 0) && w->node == n &&
	    wakes_held_add(w, pid))
		return;
	rq_push(n, pid, true);
}

/* A waker made the actor in s runnable (not its own worker's switch). */
static inline void astat_enq(struct smarm_node *n, struct smarm__slot *s)
{
	if (SMARM_UNLIKELY(n->astat_on))
		__atomic_store_n(&smarm__astat_of(n, s)->as_enq,
				 smarm__cycles_fast(), __ATOMIC_RELAXED);
}

/*
 * The WAKE of a traced send in progress on w (w->tr_send, set by
 * msg/chan.c for a send that wakes a waiter other than a parked
 * receive: a select arm's actor): one record is the wake and the SEND
 * (trace.h). The mark is taken: a later wake of the same send is a
 * plain WAKE, and the send records no SEND of its own. A hand-off into
 * a parked receive records through smarm__unpark_send instead.
 */
static inline void trace_wake_send(struct smarm__worker *w, uint64_t pid,
				   uint32_t epoch)
{
	uintptr_t m = w->tr_send;
	w->tr_send = 0;
	smarm__trace_put_hot_x(smarm__tls_trace, SMARM__TR_WAKE, w->tr_pid, pid,
			       epoch, SMARM__TRF_SEND, m);
}

/*
 * A wake that queues the actor in s when the node keeps statistics or
 * traces (one flag, n->obs_on, off both): its run-queue wait starts, the
 * WAKE record, and then the enqueue, so that the record is out before
 * the woken can run. A wake
 * that finds the actor not yet parked (NOTIFIED) records nothing: its
 * park returns without a switch, so no RUN_IN would end its flow. A
 * worker of n records in its own ring, straight.
 */
static __attribute__((noinline)) void wake_obs(struct smarm_node *n,
					       struct smarm__slot *s,
					       uint64_t pid, uint32_t epoch)
{
	struct smarm__worker *w = smarm__tls_worker;
	astat_enq(n, s);
	if (w != NULL && w->node == n && smarm__tracing()) {
		if (w->tr_send != 0)
			trace_wake_send(w, pid, epoch);
		else
			smarm__trace_put_hot(smarm__tls_trace, SMARM__TR_WAKE,
					     w->cur != NULL ? w->tr_pid : 0,
					     pid, epoch);
	} else if (n->trace != NULL)
		smarm__trace_node(n, SMARM__TR_WAKE, smarm__self_pid(), pid,
				  epoch, NULL);
	enqueue_woken(n, pid, false);
}

/*
 * pid comes from a registration or a wake entry of this node's own
 * actors (never from a caller), so it is not checked against the node
 * serial: that is done where a caller's pid enters (slot.h).
 */
bool smarm__unpark_at(struct smarm_node *n, uint64_t pid, uint32_t epoch)
{
	struct smarm__slot *s = smarm__slot_at(n, SMARM__PID_IDX(pid));
	if (s == NULL)
		return false;
	int r = smarm__word_unpark(s, SMARM__PID_GEN(pid), false, epoch);
	if (r == SMARM__UNPARK_ENQUEUE) {
		/* Either call is the last: no frame for the one not taken. */
		if (SMARM_UNLIKELY(n->obs_on))
			wake_obs(n, s, pid, epoch);
		else
			enqueue_woken(n, pid, false);
	}
	return r != SMARM__UNPARK_NOOP;
}

/*
 * wake_obs for the wake of a channel send's hand-off into the parked
 * receive of the actor in s (smarm__unpark_send): the sender's own send
 * (an actor's, not a switch's finish) has its count, and traced, one
 * WAKE record that is also its SEND (tr_x the channel's handle) and the
 * woken's RECV (trace.h SMARM__TRF_SEND, _RECV), which the receive
 * learns from its wait (wt_carried: s parked, its wait live until the
 * enqueue; the switch that resumes it copies the flag to its worker,
 * trace_in and trace_switch) and does not record. Then the enqueue.
 */
static __attribute__((noinline)) void
wake_obs_send(struct smarm_node *n, struct smarm__slot *s, uint64_t pid,
	      uint32_t epoch, const void *chan)
{
	struct smarm__worker *w = smarm__tls_worker;
	astat_enq(n, s);
	if (w->cur != NULL && !w->in_finish) {
		if (SMARM_UNLIKELY(w->astat))
			smarm__msg_count_slow(w, true, 1);
		if (smarm__tracing()) {
			s->wait->wt_carried = 1;
			smarm__trace_put_hot_x(
				smarm__tls_trace, SMARM__TR_WAKE, w->tr_pid,
				pid, epoch, SMARM__TRF_SEND | SMARM__TRF_RECV,
				(uintptr_t)chan);
		}
	} else if (smarm__tracing()) {
		smarm__trace_put_hot(smarm__tls_trace, SMARM__TR_WAKE,
				     w->cur != NULL ? w->tr_pid : 0, pid,
				     epoch);
	}
	enqueue_woken(n, pid, false);
}

int smarm__unpark_send(struct smarm_node *n, uint64_t pid, uint32_t epoch,
		       const void *chan)
{
	struct smarm__slot *s = smarm__slot_at(n, SMARM__PID_IDX(pid));
	if (s != NULL && smarm__word_unpark(s, SMARM__PID_GEN(pid), false,
					    epoch) == SMARM__UNPARK_ENQUEUE) {
		wake_obs_send(n, s, pid, epoch, chan);
		return 0;
	}
	/* It queued nobody (the receiver had not parked yet: it takes the
	 * element without a switch, and records its own RECV). */
	smarm__msg_obs_slow(smarm__tls_worker, true, 1, chan);
	return 0;
}

/*
 * pid was resolved by the caller (request_stop, under the cold lock).
 * Woken as any wake: an actor stopping another (an exit signal along a
 * link) puts it in its own worker's slot.
 */
void smarm__unpark_any(struct smarm_node *n, uint64_t pid)
{
	struct smarm__slot *s = smarm__slot_at(n, SMARM__PID_IDX(pid));
	if (s != NULL && smarm__word_unpark(s, SMARM__PID_GEN(pid), true, 0) ==
				 SMARM__UNPARK_ENQUEUE) {
		astat_enq(n, s);
		enqueue_woken(n, pid, true); /* a stop's wake is urgent */
	}
}

/*
 * Expedite. An exit signal or a stop that reaches an actor already queued
 * (runnable, but waiting its turn) must not wait for that turn: a
 * supervisor shutting down children that producers keep busy waited a
 * round of every producer's timeslice per child (sup_shutdown_load on
 * one worker: 3,300x the quiet shutdown). So the stopper takes the
 * target out of the place it waits in (this worker's pinned FIFO if it
 * yielded there, this worker's deque, the shared queue, another worker's
 * deque, the first and last EXPEDITE_SCAN entries of each; another
 * worker's wake slot) and puts it in its own
 * wake slot, as an urgent entry: it runs when the stopper next leaves
 * the CPU, which a supervisor does at once to await the Down. An actor
 * that is elsewhere (pinned to its worker after an async preemption, in
 * another worker's pinned FIFO, in a held batch, or being claimed) is
 * left where it is: it runs within its turn, as before.
 * Taken out under the ring's lock, the entry is in one place at a time
 * (INV-1), and the actor stays QUEUED throughout.
 */
#define EXPEDITE_SCAN 65536

/* Under r's lock: take pid out of r if it is among the first or last
 * EXPEDITE_SCAN entries. */
static bool ring_take_pid(struct smarm__ring *r, uint64_t pid)
{
	uint32_t len = smarm__ring_len(r);
	uint32_t i;
	if (len <= 2 * EXPEDITE_SCAN) {
		i = smarm__ring_find_u64(r, 0, len, pid);
	} else {
		i = smarm__ring_find_u64(r, len - EXPEDITE_SCAN, len, pid);
		if (i == UINT32_MAX)
			i = smarm__ring_find_u64(r, 0, EXPEDITE_SCAN, pid);
	}
	if (i == UINT32_MAX)
		return false;
	smarm__ring_remove_at(r, RQ_ESZ, i);
	return true;
}

static bool ldq_take_pid(struct smarm__worker *v, uint64_t pid)
{
	bool got;
	if (smarm__ring_len(&v->ldq) == 0)
		return false;
	smarm__lock(&v->ldq_lock, SMARM__RANK_RUNQ);
	got = ring_take_pid(&v->ldq, pid);
	if (got)
		ldq_moved(v);
	smarm__unlock(&v->ldq_lock, SMARM__RANK_RUNQ);
	return got;
}

static bool rq_take_pid(struct smarm_node *n, uint64_t pid)
{
	bool got;
	if (smarm__ring_len(&n->rq) == 0)
		return false;
	smarm__glock(&n->rq_lock, &n->rq_lock_n, SMARM__RANK_RUNQ);
	got = ring_take_pid(&n->rq, pid);
	if (got) /* it had its turn: pinned actors' tickets count it */
		rq_popped(n, 1);
	smarm__unlock(&n->rq_lock, SMARM__RANK_RUNQ);
	return got;
}

/*
 * Take pid out of another worker's wake slot, where it would wait for
 * that worker's actor to leave (a whole slice, if it computes): as the
 * monitor's slot scan does, a visitor of the owner's plain accesses.
 */
static bool slot_take_pid(struct smarm__worker *v, uint64_t pid)
{
	struct smarm_node *n = v->node;
	uint64_t want = pid;
	bool got;
	if (atomic_load_explicit(&v->next, memory_order_relaxed) != pid)
		return false;
	smarm__visit_begin(&n->own_visitors);
	smarm__visit_wait(&v->own_busy);
	got = atomic_compare_exchange_strong_explicit(
		&v->next, &want, 0, memory_order_acq_rel, memory_order_relaxed);
	smarm__visit_end(&n->own_visitors);
	return got;
}

void smarm__expedite(struct smarm_node *n, uint64_t pid)
{
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm__slot *s;
	bool got;
	uint64_t word;
	if (!n->wake_slot || w == NULL || w->node != n || w->cur == NULL ||
	    w->in_finish || w->cur->exiting)
		return; /* no slot to put it in (or an exit's: held) */
	s = smarm__slot_at(n, SMARM__PID_IDX(pid));
	if (s == NULL)
		return;
	word = atomic_load_explicit(&s->word, memory_order_relaxed);
	if (SMARM__W_GEN(word) != SMARM__PID_GEN(pid) ||
	    SMARM__W_STATE(word) != SMARM__ST_QUEUED)
		return;
	if (atomic_load_explicit(&w->next, memory_order_relaxed) == pid) {
		w->urgent = pid; /* next already: now urgent too */
		return;
	}
	got = smarm__pin_take_moveable(w, SMARM__PID_IDX(pid)) ||
	      ldq_take_pid(w, pid) || rq_take_pid(n, pid);
	for (int i = 1; !got && i < n->workers_started; i++)
		got = ldq_take_pid(
			&n->workers[(w->id + i) % n->workers_started], pid);
	for (int i = 1; !got && i < n->workers_started; i++)
		got = slot_take_pid(
			&n->workers[(w->id + i) % n->workers_started], pid);
	if (got) {
		stat_inc(&n->wstats[w->id].expedited);
		slot_put(w, pid, true);
	}
}

#define WAKE_STREAK 16

/*
 * Urgent wakes. The wakes an exit issues (its Downs, exit signals and
 * joins) and an expedited actor are system traffic: a supervisor and the
 * children it stops hand the CPU to each other through the wake slot,
 * and WAKE_STREAK would give a busy producer a whole timeslice every
 * eight children (sup_shutdown_load on one worker: 370x the quiet
 * shutdown). Such an entry (w->urgent) does not count toward the streak
 * for up to URGENT_SLICES timeslices in a row; then it is a plain wake,
 * so a chain of them (two trapping actors stopping each other) gets at
 * most two thirds of a contended worker, never all of it.
 */
#define URGENT_SLICES 2

static __attribute__((noinline)) bool slot_urgent(struct smarm__worker *w)
{
	uint64_t now;
	if (w->urgent != atomic_load_explicit(&w->next, memory_order_relaxed))
		return false;
	now = smarm__cycles_fast();
	if (w->urgent_t0 == 0) {
		w->urgent_t0 = now;
		return true;
	}
	return now - w->urgent_t0 < URGENT_SLICES * w->node->slice_cycles;
}

/*
 * Take the pid in w's wake slot: a plain access, or an exchange while
 * the monitor may move an entry its owner has left standing
 * (smarm__slots_scan; membar.h's handshake).
 */
static inline __attribute__((always_inline)) bool
take_slot(struct smarm__worker *w, uint64_t *pid)
{
	*pid = atomic_load_explicit(&w->next, memory_order_relaxed);
	if (*pid == 0)
		return false;
	if (atomic_load_explicit(&w->node->workers_started,
				 memory_order_relaxed) == 1) {
		/* One worker: the monitor never scans. */
		atomic_store_explicit(&w->next, 0, memory_order_relaxed);
	} else if (smarm__owner_enter(&w->own_busy, &w->node->own_visitors)) {
		*pid = atomic_load_explicit(&w->next, memory_order_relaxed);
		atomic_store_explicit(&w->next, 0, memory_order_relaxed);
		smarm__owner_leave(&w->own_busy);
	} else {
		*pid = atomic_exchange_explicit(&w->next, 0,
						memory_order_acq_rel);
	}
	if (*pid == 0)
		return false; /* the monitor took it */
	stat_inc(&w->node->wstats[w->id].slot_hits);
	return true;
}

/* RUNNING|NOTIFIED -> QUEUED after a yield. */
static void yield_return(struct smarm__slot *s)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
	uint64_t nw;
	do {
		nw = SMARM__W_MAKE(SMARM__W_GEN(w), SMARM__W_EPOCH(w),
				   SMARM__ST_QUEUED);
	} while (!atomic_compare_exchange_weak_explicit(
		&s->word, &w, nw, memory_order_acq_rel, memory_order_relaxed));
}

/*
 * RUNNING -> PARKED, or NOTIFIED -> QUEUED and queued. Either way the
 * word takes the next epoch: parked, the round's own (smarm__begin_wait
 * opened it without writing the word), which its wake then matches;
 * notified, one past the wake's, so no registration of this round
 * matches the next. A wake that landed while the actor was parking is a
 * wake: queued as one (rq_woken), it goes before pinned actors. Queued
 * as a plain entry it waited behind every pinned one, a slice each: on
 * a loaded machine, where the kernel can take a worker's CPU between a
 * wait's registration and its switch, the fd and thread-message wakes
 * among spinners (test_fairness) waited 30-55 ms about once in 30 runs.
 */
static void park_return(struct smarm_node *n, struct smarm__slot *s)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
	for (;;) {
		bool parked = SMARM__W_STATE(w) == SMARM__ST_RUNNING;
		uint64_t nw = SMARM__W_NEXT(w, parked ? SMARM__ST_PARKED
						      : SMARM__ST_QUEUED);
		if (atomic_compare_exchange_weak_explicit(&s->word, &w, nw,
							  memory_order_acq_rel,
							  memory_order_relaxed))
			break;
	}
	if (SMARM__W_STATE(w) != SMARM__ST_RUNNING)
		rq_push(n, smarm__slot_pid(s), true);
}

/*
 * A park that gives up the stack (wait.c WAIT-10): its sp is saved and
 * nothing runs on it any more, so it goes back to the pool (stack.c)
 * and the actor is left as a never-run one is (sp NULL), whose next run
 * starts over through first_run_make at s->fn(s->arg), the wait's
 * resume. Before park_return, as a park's hook: a wake that landed
 * meanwhile on any worker found the actor RUNNING and made it NOTIFIED,
 * so nobody can claim it, and run it on the stack given back here,
 * before park_return has queued it.
 */
static __attribute__((noinline, cold)) void
hibernate_return(struct smarm_node *n, struct smarm__slot *s)
{
	smarm__stack_release_hibernated(n, s);
	s->sp = NULL;
	s->hwm = 0;
	s->stk_parks = 0;
	atomic_fetch_add_explicit(&n->hibernations, 1, memory_order_relaxed);
	park_return(n, s);
}

/*
 * QUEUED -> RUNNING, generation-checked. A plain store suffices: in
 * QUEUED nobody else writes the word (wakes and stops are no-ops there,
 * begin_wait belongs to the running actor), so no CAS is needed.
 */
static bool try_claim(struct smarm__slot *s, uint32_t gen)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
	if (SMARM__W_GEN(w) != gen)
		return false;
	if (SMARM_NEVER(SMARM__W_STATE(w) != SMARM__ST_QUEUED))
		smarm__panic("sched: claimed an actor that was not queued "
			     "(double enqueue)");
	atomic_store_explicit(
		&s->word,
		SMARM__W_MAKE(gen, SMARM__W_EPOCH(w), SMARM__ST_RUNNING),
		memory_order_relaxed);
	return true;
}

/*
 * Give s a stack and an initial frame on its first run; or, for an
 * actor whose parked stack was given back (s->sp NULL, its stack still
 * attached: parkstk.c), bring it back (the acquire answers 1). On failure the
 * actor ends as crashed with SMARM_ENOMEM, without ever running.
 */
__attribute__((noinline)) static bool first_run_make(struct smarm__worker *w,
						     struct smarm__slot *s)
{
	int rc = smarm__stack_acquire(w->node, s);
	if (rc != 0) {
		if (rc > 0) /* a parked stack given back, back now */
			return true;
		static const struct smarm__exit nomem = {
			.ex_how = SMARM_EXIT_CRASHED,
			.ex_code = SMARM_ENOMEM,
		};
		__atomic_store_n(&s->exiting, SMARM__EXITING_ENDED,
				 __ATOMIC_RELAXED);
		s->exit = nomem;
		smarm__log_crash(w->node, s);
		/* A hibernated actor's registration goes first (WAIT-4). */
		smarm__wait_undo_current(s);
		smarm__exit_hooks_run(s); /* here: it has no stack to run on */
		smarm__finalize(w, s);
		return false;
	}
	s->sp = smarm__ctx_init(
		(char *)s->stk_base + s->stk_guard + s->stk_reserve, s);
	s->hwm = (uintptr_t)s->sp;
	return true;
}

/* Every pick asks; only a first run does more than look (inline). */
static inline bool first_run_ready(struct smarm__worker *w,
				   struct smarm__slot *s)
{
	return __builtin_expect(s->sp != NULL, 1) || first_run_make(w, s);
}

/*
 * The worker holding least, if that is less than `mine` (what w holds
 * with the actor it would leave: preempt.c's moves, yield_queue). One
 * less is enough: the extra actor then moves on at each of these
 * decisions, so where the actors do not divide evenly each spends its
 * part of the time on the workers that hold one more (5 on 4 workers:
 * 0.8 of a worker each over a window, not 1, 1, 1, 1/2, 1/2). -1: stay.
 */
int smarm__lighter_worker(struct smarm__worker *w, uint32_t mine)
{
	struct smarm_node *n = w->node;
	int nw =
		atomic_load_explicit(&n->workers_started, memory_order_relaxed);
	int to = -1;
	for (int i = 1; i < nw; i++) {
		int id = (w->id + i) % nw;
		uint32_t h = smarm__worker_holds(&n->workers[id]);
		if (h < mine) {
			mine = h;
			to = id;
		}
	}
	return to;
}

/*
 * Leave an actor that is free to move (a preempted one, INV-P7, or one
 * that yielded) to the back of worker `to`'s deque: its owner takes it
 * in turn, an idle one is woken. False: that deque is full.
 */
static bool leave_to(struct smarm_node *n, int to, uint64_t pid)
{
	if (!ldq_push(&n->workers[to], &pid, 1, false))
		return false;
	smarm__wake_one_if_idle(n);
	return true;
}

/*
 * Queue an actor that yielded on w (finish_switch). It waits in w's
 * pinned FIFO, behind everything queued now (smarm__pin_push's tickets:
 * the shared queue and w's deque; the wake slot goes first anyway),
 * which takes no lock and
 * keeps it warm on this worker; it is free to move, but nothing needs
 * to move it, except:
 *   - a worker idles or spins: the shared queue, which that worker takes
 *     from at once (smarm__wake_one_if_idle);
 *   - at a slice end (smarm__yield_slice) and at every YIELD_SPREAD-th
 *     yield on w, if another worker holds less than w with it: the back
 *     of that worker's deque (as a preempted actor free to move,
 *     INV-P7), so actors that yield, or reach their slice ends at safe
 *     points, spread over the workers as call-free spinners do (3 and
 *     5 spinners with safe points on 2 workers: max/min share over a
 *     second 1.005-1.02; 1.17-1.61 moving at every 16th yield only).
 * Until 0.5.x every yield went through the shared queue: two node-wide
 * lock holds per yield, and at several workers each yielder crossed to
 * another worker about every other yield (yield, two yielders per
 * worker: 43 ns at one worker, 177 at two, Go 115).
 */
#define YIELD_SPREAD 16

static void yield_queue(struct smarm__worker *w, struct smarm__slot *p,
			bool slice_end)
{
	struct smarm_node *n = w->node;
	uint64_t pid = smarm__slot_pid(p);
	int to;
	if (n->workers_n > 1) {
		if ((atomic_load_explicit(&n->idle_mask, memory_order_relaxed) |
		     atomic_load_explicit(&n->spin_mask,
					  memory_order_relaxed)) != 0) {
			rq_push(n, pid, false);
			return;
		}
		if ((++w->yields % YIELD_SPREAD == 0 || slice_end) &&
		    (to = smarm__lighter_worker(w, smarm__worker_holds(w) +
							   1)) >= 0 &&
		    leave_to(n, to, pid))
			return;
	}
	smarm__pin_push(w, p, false);
}

/*
 * Statistics (SMARM_OPT_ACTOR_STATS), at a switch of w at cycle t: the
 * actor switched in (next, or NULL for the scheduler) starts a run, and
 * its wait since it became runnable ends. One cycle-counter read serves
 * the actor leaving and the one arriving.
 */
static void astat_in(struct smarm__worker *w, struct smarm__slot *next,
		     uint64_t t)
{
	w->run_t0 = t;
	if (next != NULL) {
		struct smarm__astat *a = smarm__astat_of(w->node, next);
		uint64_t e = __atomic_load_n(&a->as_enq, __ATOMIC_RELAXED);
		SMARM__ASTAT_ADD(&a->as_runs, 1);
		if (e != 0 && t > e)
			SMARM__ASTAT_ADD(&a->as_rqwait, t - e);
		__atomic_store_n(&a->as_enq, 0, __ATOMIC_RELAXED);
	}
}

/* ... and s leaves it, for intent: its run ends. */
static void astat_switch(struct smarm__worker *w, struct smarm__slot *s,
			 int intent, struct smarm__slot *next)
{
	uint64_t t = smarm__cycles_fast();
	struct smarm__astat *a = smarm__astat_of(w->node, s);
	if (t > w->run_t0)
		SMARM__ASTAT_ADD(&a->as_cpu, t - w->run_t0);
	/* A yield or a preemption is runnable from now; a park from the
	 * wake that ends it (smarm__unpark_at). */
	if (intent != SMARM__INTENT_PARK && intent != SMARM__INTENT_DONE &&
	    intent != SMARM__INTENT_HIBERNATE)
		__atomic_store_n(&a->as_enq, t, __ATOMIC_RELAXED);
	astat_in(w, next, t);
}

/*
 * Tracing (trace.h): s's slice on this worker begins. An actor that
 * comes back from a park (wait.c: its wait is set across the park) left
 * the wait of that epoch, the end of its waker's flow: in the record.
 * Only on a thread that traces (smarm__tracing), as trace_switch.
 */
static void trace_in(struct smarm__worker *w, struct smarm__slot *s)
{
	const struct smarm__wait *wt = s->wait;
	uint64_t pid = smarm__slot_pid(s);
	w->tr_carried = wt != NULL && wt->wt_carried != 0;
	w->tr_pid = pid;
	smarm__trace_put_hot(smarm__tls_trace, SMARM__TR_RUN_IN, pid,
			     wt != NULL, wt != NULL ? wt->wt_epoch : 0);
}

/*
 * ... the slice of w's actor (cur until now, its pid in tr_pid) ends
 * for c's intent, and next's (NULL: the scheduler) begins. A
 * park in a wait (wait.c) is recorded here, in the record of the slice
 * it ends, and not at the park's call, so that the park costs nothing
 * when nobody traces. A hibernation is a wait's park too (WAIT-10).
 * A switch from one actor straight to another is one SWITCH record
 * (half the puts of a RUN_OUT and a RUN_IN), unless the park has a
 * target (a call's server, a join's actor) that the record has no room
 * for beside the arriving pid.
 */
static __attribute__((noinline)) void trace_out_in(struct smarm__worker *w,
						   uint64_t b, uint32_t c,
						   struct smarm__slot *next)
{
	smarm__trace_put_hot(smarm__tls_trace, SMARM__TR_RUN_OUT, w->tr_pid, b,
			     c);
	if (next != NULL)
		trace_in(w, next);
}

static inline void trace_switch(struct smarm__worker *w, struct smarm__slot *p,
				int intent, struct smarm__slot *next)
{
	uint32_t c = (uint32_t)intent;
	uint64_t b = 0;
	bool parked = (intent == SMARM__INTENT_PARK ||
		       intent == SMARM__INTENT_HIBERNATE) &&
		      p->wait != NULL;
	/* wait_target is a pinned actor's ticket unless wait_on names a
	 * park with a target (slot.h): a channel's park has none. */
	if (parked && p->wait_on != SMARM__WON_NONE)
		b = p->wait_target;
	SMARM_ASSERT(w->tr_pid == smarm__slot_pid(p));
	/* Actor to actor, no park target to keep: one record, not two. */
	if (next != NULL && b == 0) {
		const struct smarm__wait *wt = next->wait;
		uint64_t a = w->tr_pid;
		bool carried = false;
		w->tr_pid = smarm__slot_pid(next);
		if (parked)
			c |= SMARM__TRACE_SW_PARKED | (uint32_t)p->wait_on << 3;
		if (wt != NULL) {
			c |= SMARM__TRACE_SW_WOKEN |
			     (wt->wt_epoch & 0xffffffu)
				     << SMARM__TRACE_SW_EPOCH_SHIFT;
			carried = wt->wt_carried != 0;
		}
		w->tr_carried = carried;
		smarm__trace_put_hot(smarm__tls_trace, SMARM__TR_SWITCH, a,
				     w->tr_pid, c);
		return;
	}
	if (parked)
		c |= SMARM__TRACE_PARKED | (uint32_t)p->wait_on << 8;
	trace_out_in(w, b, c, next);
}
/* SWITCH's c (trace.h) holds an intent and a WON_* in 3 bits each. */
_Static_assert(SMARM__INTENT_HIBERNATE < 8 && SMARM__WON_SLEEP < 8,
	       "a switch record's intent and park fit 3 bits");

/* Statistics, tracing and the causal profiler at a switch. */
static __attribute__((noinline)) void switch_obs_all(struct smarm__worker *w,
						     struct smarm__slot *p,
						     int intent,
						     struct smarm__slot *next)
{
	if (w->astat)
		astat_switch(w, p, intent, next);
	if (smarm__tracing())
		trace_switch(w, p, intent, next);
	if (w->causal)
		smarm__causal_switch(w, p, intent, next);
}

/*
 * The one test of w->obs_on at a switch. Tracing alone is a leaf (its
 * put and the two-record case are tail calls: no registers saved);
 * statistics or the profiler take the whole hook. With neither, obs_on
 * means that the node traces, so this worker has its ring (worker_thread,
 * smarm__run): not tested again.
 */
static __attribute__((noinline)) void switch_obs(struct smarm__worker *w,
						 struct smarm__slot *p,
						 int intent,
						 struct smarm__slot *next)
{
	if (SMARM_UNLIKELY(w->astat || w->causal)) {
		switch_obs_all(w, p, intent, next);
	} else {
		SMARM_ASSERT(smarm__tracing());
		trace_switch(w, p, intent, next);
	}
}

/* ... and at a resume from the scheduler. */
static __attribute__((noinline)) void run_in_obs(struct smarm__worker *w,
						 struct smarm__slot *s)
{
	if (w->astat)
		astat_in(w, s, smarm__cycles_fast());
	if (smarm__tracing())
		trace_in(w, s);
	if (w->causal)
		smarm__causal_run_in(w, s);
}

/*
 * Finish the transition of the actor that just left this worker. It runs
 * on whatever stack the worker switched to (the next actor's, or the
 * scheduler's), after the leaving actor's sp was saved by the switch, so
 * a waker that re-queues it can never resume a half-saved context.
 */
static void finish_switch(struct smarm__worker *w)
{
	struct smarm__slot *p = w->prev;
	struct smarm_node *n = w->node;
	if (p == NULL)
		return;
	if (SMARM_UNLIKELY(w->obs_on)) /* p's run ends, cur's begins */
		switch_obs(w, p, w->prev_intent, w->cur);
	w->prev = NULL;
	w->in_finish = true; /* its wakes (a joiner) go to the shared queue */
	if ((uintptr_t)p->sp < p->hwm)
		p->hwm = (uintptr_t)p->sp;
	smarm__stack_switched_out(p);
	switch (w->prev_intent) {
	case SMARM__INTENT_YIELD:
	case SMARM__INTENT_SLICE:
		yield_return(p);
		yield_queue(w, p, w->prev_intent == SMARM__INTENT_SLICE);
		break;
	case SMARM__INTENT_PARK:
		smarm__stack_park_hook(n, p);
		park_return(n, p);
		break;
	case SMARM__INTENT_HIBERNATE:
		hibernate_return(n, p);
		break;
	case SMARM__INTENT_PREEMPT:
		yield_return(p);
		smarm__pin_push(w, p, true); /* INV-P1: resumes only here */
		break;
	case SMARM__INTENT_MOVE:
		/* Free to move (INV-P7): to a lighter worker. */
		yield_return(p);
		if (leave_to(n, w->move_to, smarm__slot_pid(p)))
			__atomic_store_n(&w->n_moved, w->n_moved + 1,
					 __ATOMIC_RELAXED);
		else
			smarm__pin_push(w, p, false);
		break;
	default:
		smarm__finalize(w, p);
		break;
	}
	w->in_finish = false;
}

#define RQ_TAKE_MAX 32

/*
 * The shared queue's turn in pick_next. Several workers, w's deque
 * empty: take a block, its share (the queue's length over the workers,
 * plus one; at most RQ_TAKE_MAX), run the first and put the rest at
 * the front of w's deque in queue order, where they run next and other
 * workers can steal them. A spawner's spawns past its held batch go to
 * the shared queue (spawn_join), and taking one per lock cost the
 * consumer a node-wide lock per actor, on a line the spawner pushes to;
 * Go's globrunqget takes the same share into the local queue. Otherwise
 * one. (Steals from a deque stay one at a time: taking half of a deque
 * at once placed call-free spinners unevenly before their first run,
 * and a spinner never leaves the worker it was first preempted on.)
 */
static bool rq_take(struct smarm__worker *w, uint64_t *pid)
{
	struct smarm_node *n = w->node;
	uint64_t got[RQ_TAKE_MAX];
	uint32_t want = 1;
	uint32_t k;
	int nw = n->workers_started;
	if (nw > 1 && smarm__ring_len(&w->ldq) == 0) {
		want = smarm__ring_len(&n->rq) / (uint32_t)nw + 1;
		if (want > RQ_TAKE_MAX)
			want = RQ_TAKE_MAX;
	}
	k = rq_pop_n(n, got, want);
	if (k == 0)
		return false;
	*pid = got[0];
	if (k > 1) {
		smarm__lock(&w->ldq_lock, SMARM__RANK_RUNQ);
		smarm__ring_push_front_n(&w->ldq, RQ_ESZ, got + 1, k - 1);
		ldq_moved(w);
		smarm__unlock(&w->ldq_lock, SMARM__RANK_RUNQ);
	}
	return true;
}

/*
 * Balance at the end of a slice. Async-preempted actors never move
 * (INV-P1), so actors are spread while they still can be: before their
 * first preemption, from a deque. w, whose actor was just preempted,
 * takes one from the back of the deque of a worker with a longer
 * backlog than its own (which counts that actor: it stays here). So
 * call-free spinners spawned on one worker end up spread with at most
 * one more per worker than the others, instead of waiting behind the
 * pinned ones of the worker that spawned them.
 */
static bool balance_steal(struct smarm__worker *w, uint64_t *pid)
{
	struct smarm_node *n = w->node;
	int nw = n->workers_started;
	uint32_t mine =
		smarm__worker_backlog(w) + 1; /* + w->prev, pinned next */
	for (int i = 1; i < nw; i++) {
		struct smarm__worker *v = &n->workers[(w->id + i) % nw];
		if (smarm__ring_len(&v->ldq) > 0 &&
		    smarm__worker_backlog(v) > mine && ldq_take(v, true, pid))
			return true;
	}
	return false;
}

/*
 * At the end of a slice on w, with actors waiting in w's deque: whether
 * w should leave them to be stolen and run one of its pinned actors
 * instead. True when some other worker holds fewer actors than w would
 * keep after taking one more (its pinned ones, the one just preempted,
 * and the new one): that worker steals at its next slice end
 * (balance_steal), so a burst of spawns does not get pinned here.
 */
#define LEAVE_DEQUE_MAX 8 /* consecutive slice ends */
#define PIN_YIELDS 4	  /* woken actors let through before a pinned */

static bool leave_deque(struct smarm__worker *w)
{
	struct smarm_node *n = w->node;
	int nw = n->workers_started;
	uint32_t mine =
		atomic_load_explicit(&w->pin_count, memory_order_relaxed) + 1;
	for (int i = 1; i < nw; i++) {
		struct smarm__worker *v = &n->workers[(w->id + i) % nw];
		if (atomic_load_explicit(&v->pin_count, memory_order_relaxed) +
			    1 <
		    mine)
			return true;
	}
	return false;
}

/*
 * The next actor for this worker, claimed and ready to resume, or NULL
 * when the scheduler loop must run (nothing queued, or timers are due).
 * The wake slot comes first, but after WAKE_STREAK consecutive slot pops
 * the shared queue gets a turn: two actors handing a message back and
 * forth cannot starve the rest.
 */
static struct smarm__slot *pick_from(struct smarm__worker *w)
{
	struct smarm_node *n = w->node;
	bool preempted =
		w->prev != NULL && smarm__intent_preempted(w->prev_intent);
	bool skip_ldq = false; /* this pick leaves w's deque to thieves */
	if (preempted) {
		/*
		 * A slice ended (the slow path): due timers are looked at
		 * now, not on the 8th pick, which under saturation could be
		 * 8 slices away.
		 */
		w->due_tick |= 7;
	}
	for (;;) {
		uint64_t pid;
		struct smarm__slot *s;
		bool own, turn, urgent;
		/*
		 * Reading the clock costs ~30 ns here, more than a switch, so
		 * with a timer pending the hand-off path looks at it on every
		 * 8th pick only; the scheduler loop still checks every time.
		 */
		if (atomic_load_explicit(&n->next_deadline,
					 memory_order_relaxed) != UINT64_MAX &&
		    (++w->due_tick & 7) == 0 && smarm__timers_due(n))
			return NULL;
		if (preempted && n->workers_n > 1) {
			if (balance_steal(w, &pid)) {
				preempted = false;
				w->streak = 0;
				goto claim;
			}
			/*
			 * Bounded: a lighter worker that is never preempted
			 * never steals, so after that the deque is ours again.
			 */
			skip_ldq = smarm__ring_len(&w->ldq) > 0 &&
				   w->left_deque < LEAVE_DEQUE_MAX &&
				   leave_deque(w);
			w->left_deque = skip_ldq ? w->left_deque + 1 : 0;
		}
		preempted = false;
		/*
		 * The wake slot first (Go's runnext): an actor just woken here,
		 * by a message or a timer, runs within a slice even when every
		 * worker is saturated. WAKE_STREAK bounds it. pick_woken makes
		 * this first iteration inline for the hand-off: a change to
		 * the order above or the counts here is a change there too.
		 */
		urgent = SMARM_UNLIKELY(w->urgent != 0) && slot_urgent(w);
		if ((w->streak < WAKE_STREAK || urgent) && take_slot(w, &pid)) {
			if (SMARM_UNLIKELY(urgent) && pid == w->urgent) {
				w->urgent = 0;
			} else {
				w->streak++; /* not a local pick (pinned
						tickets) */
				w->urgent = 0;
				w->urgent_t0 = 0;
			}
			goto claim;
		}
		w->urgent_t0 = 0; /* not an urgent pick */
		if (SMARM_UNLIKELY(smarm__qseg_cache_pending(&w->qsegs)))
			(void)smarm__qseg_cache_tidy(&w->qsegs, TIDY_PICK);
		/*
		 * A woken actor in the shared queue goes before the pinned
		 * ones, up to PIN_YIELDS picks in a row (a stream of wakes
		 * must not starve them).
		 */
		if (w->pin_head != SMARM__NO_INDEX &&
		    atomic_load_explicit(&n->rq_woken, memory_order_relaxed) >
			    0 &&
		    w->pin_yields < PIN_YIELDS && rq_pop(n, &pid)) {
			w->pin_yields++;
			w->streak = 0;
			goto claim;
		}
		/*
		 * A preempted actor whose turn in FIFO order has come, or any
		 * pinned one while another worker idles: that worker can take
		 * the shared work, the pinned actor has only this one (and
		 * this worker may block in what it takes next).
		 */
		if (w->pin_head != SMARM__NO_INDEX &&
		    (s = smarm__pin_take(
			     w, atomic_load_explicit(&n->idle_mask,
						     memory_order_relaxed) ==
					0)) != NULL) {
			w->streak = 0;
			w->pin_yields = 0;
			if (smarm__ring_len(&n->rq) > 0)
				smarm__wake_one_if_idle(n);
			if (try_claim(s,
				      SMARM__W_GEN(atomic_load_explicit(
					      &s->word, memory_order_relaxed))))
				return s;
			continue;
		}
		own = !skip_ldq &&
		      (w->sbatch_n > 0 || smarm__ring_len(&w->ldq) > 0);
		turn = own && (++w->ldq_picks % 61) == 0;
		if (own && !turn && ldq_take_own(w, &pid)) {
			/*
			 * Own work-first spawns, newest first; every 61st pick
			 * the shared queue goes first, so a spawn chain cannot
			 * starve it. The deque's oldest entries are left to
			 * thieves, and to the turn once the owner has come no
			 * nearer to one for an age (ldq_take_aged): an oldest
			 * entry is a whole untouched subtree, and taking it
			 * here (every 127th pick, until 0.5.0) opened a new
			 * subtree while the current one's path stayed parked,
			 * which turned a spawn tree breadth-first (skynet_actor
			 * on two workers: some 4000 live stacks instead of a
			 * few dozen, 12000 mapped and unmapped per run).
			 */
			w->streak = 0;
			w->local_picks++;
			if (n->workers_n > 1 && smarm__ring_len(&w->ldq) > 0)
				smarm__wake_one_if_idle(n); /* thieves */
		} else if (turn && ldq_take_aged(w, &pid)) {
			/* The deque's oldest entry, aged. */
			w->streak = 0;
			w->local_picks++;
		} else if (rq_take(w, &pid)) {
			w->streak = 0;
			if (n->workers_n > 1 && smarm__ring_len(&n->rq) > 0)
				smarm__wake_one_if_idle(n); /* chain rule */
		} else if (take_slot(w, &pid)) {
			/*
			 * The shared queue ran dry (maybe emptied by another
			 * worker after the streak check): the slot's actor
			 * must not be stranded here while we go idle.
			 */
			w->streak = 0;
		} else if (!skip_ldq && ldq_take_own(w, &pid)) {
			/* The fairness turn found no shared work. */
			w->streak = 0;
			w->local_picks++;
		} else if ((s = smarm__pin_take(w, false)) != NULL) {
			if (try_claim(s,
				      SMARM__W_GEN(atomic_load_explicit(
					      &s->word, memory_order_relaxed))))
				return s;
			continue;
		} else if (n->workers_n > 1 && ldq_steal(w, &pid)) {
			w->streak = 0;
		} else {
			return NULL;
		}
	claim:
		s = smarm__slot_at(n, SMARM__PID_IDX(pid));
		if (s != NULL && try_claim(s, SMARM__PID_GEN(pid)) &&
		    first_run_ready(w, s))
			return s;
	}
}

/*
 * The hand-off: pick_from's first iteration when it takes the wake slot
 * with nothing before it to do (no slice end, no look at the clock due
 * on this pick, no urgent entry, the streak not spent), made inline in
 * the switch, without pick_from's frame: the actor the leaving one just
 * woke (a server its request, a client its reply) runs next at once.
 * Whatever else (an empty slot, a claim that fails) is pick_from's, whose
 * loop would have started over the same way; NULL sends it there. The
 * streak, the timer tick and the slot statistics count as in pick_from.
 */
static inline __attribute__((always_inline)) struct smarm__slot *
pick_woken(struct smarm__worker *w)
{
	struct smarm_node *n = w->node;
	bool timers;
	struct smarm__slot *s;
	uint64_t pid;
	/* An empty slot first: other picks (spawns, yields) pay one load. */
	if (atomic_load_explicit(&w->next, memory_order_relaxed) == 0)
		return NULL;
	timers = atomic_load_explicit(&n->next_deadline,
				      memory_order_relaxed) != UINT64_MAX;
	if (w->streak >= WAKE_STREAK || w->urgent != 0 ||
	    (timers && ((w->due_tick + 1) & 7) == 0) ||
	    (w->prev != NULL && smarm__intent_preempted(w->prev_intent)) ||
	    !take_slot(w, &pid))
		return NULL;
	if (timers)
		w->due_tick++;
	w->streak++;
	w->urgent_t0 = 0;
	s = smarm__slot_at(n, SMARM__PID_IDX(pid));
	if (s != NULL && try_claim(s, SMARM__PID_GEN(pid)) &&
	    first_run_ready(w, s))
		return s;
	return pick_from(w);
}

/*
 * pick_from, with the spawns held for the actor that just left (w->prev)
 * as the front of w's deque (ldq_take_own): whatever the pick does not
 * take is queued before it returns (spawns_flush), so no held spawn
 * outlasts it. A slice end queues them first: balancing counts the
 * deque.
 */
static inline __attribute__((always_inline)) struct smarm__slot *
pick_next(struct smarm__worker *w)
{
	struct smarm__slot *s;
	if (!SMARM_UNLIKELY(w->sbatch_n != 0 || w->sbatch_spill)) {
		/* Nothing held: the common hand-off. */
		s = pick_woken(w);
		return s != NULL ? s : pick_from(w);
	}
	if (w->prev != NULL && smarm__intent_preempted(w->prev_intent))
		smarm__spawns_flush_slow(w);
	s = pick_from(w);
	smarm__spawns_flush(w);
	return s;
}

/* The statistics' count of k messages sent (out) or taken by w->cur. */
static inline void msg_count(struct smarm__worker *w, bool out, uint64_t k)
{
	struct smarm__astat *a = smarm__astat_of(w->node, w->cur);
	if (out)
		SMARM__ASTAT_ADD(&a->as_msg_out, k);
	else
		SMARM__ASTAT_ADD(&a->as_msg_in, k);
}

void smarm__msg_count_slow(struct smarm__worker *w, bool out, uint64_t k)
{
	if (w->cur != NULL && !w->in_finish)
		msg_count(w, out, k);
}

void smarm__msg_obs_slow(struct smarm__worker *w, bool out, uint64_t k,
			 const void *chan)
{
	/* Between actors, or finishing another's switch: nobody's own. */
	if (w->cur == NULL || w->in_finish)
		return;
	if (w->astat)
		msg_count(w, out, k);
	/* A send that woke nobody (chan_send_obs), a receive that took a
	 * queued element or was not handed over by a traced send's wake
	 * (smarm__msg_obs_recv). */
	if (smarm__tracing())
		smarm__trace_put_hot(smarm__tls_trace,
				     out ? SMARM__TR_SEND : SMARM__TR_RECV,
				     w->tr_pid, (uintptr_t)chan, (uint32_t)k);
}

/*
 * Actor side: leave the CPU (yield, park or end) and switch straight to
 * the next actor of this worker, or to its scheduler when there is none.
 * One switch per hand-off instead of two.
 */
void smarm__switch_out(struct smarm__slot *s, int intent)
{
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm__slot *next;
	void *fake = NULL;
	/* A stack that is given up (an end, a hibernation) is never
	 * switched back to: ASan drops its fake frames. */
	bool dying = intent == SMARM__INTENT_DONE ||
		     intent == SMARM__INTENT_HIBERNATE;

	w->prev = s;
	w->prev_intent = intent;
	next = pick_next(w); /* it queues the held spawns (pick_next) */
	if (next != NULL) {
		w->cur = next;
		smarm__run_restart(w);
		SMARM_FIBER_START(&fake, dying,
				  (char *)next->stk_base + next->stk_guard,
				  next->stk_reserve);
		smarm__ctx_switch(&s->sp, next->sp);
	} else {
		w->cur = NULL;
		SMARM_FIBER_START(&fake, dying, w->stk_bottom, w->stk_size);
		smarm__ctx_switch(&s->sp, w->sched_sp);
	}
	SMARM_FIBER_FINISH(fake);
	/* Resumed, possibly on another worker: re-read the TLS. */
	finish_switch(smarm__tls_worker);
}

/*
 * First code of every actor, on its own stack. The actor's function is
 * called through smarm__call_actor, which notes where its frames begin
 * and clears the registers the runtime leaves: the preemption's TLS scan
 * (preempt.c INV-P7) then sees the actor's own values only, not the
 * address of the first worker's smarm__tls_worker that an -O0 or
 * sanitized build keeps in this frame and in registers.
 */
void smarm__actor_main(struct smarm__slot *s)
{
	SMARM_FIBER_FINISH(NULL);
	finish_switch(smarm__tls_worker);
	smarm__call_actor(s->fn, s->arg, &s->run_frame);
}

/* The actor's function returned (smarm__call_actor), maybe on another
 * worker than it began on. */
void smarm__actor_ended(void)
{
	smarm__terminate(smarm__current(), SMARM_EXIT_NORMAL, 0);
}

/* One plain store: only this worker writes its run_seq. */
static inline void run_seq_bump(struct smarm__worker *w)
{
	atomic_store_explicit(
		&w->run_seq,
		atomic_load_explicit(&w->run_seq, memory_order_relaxed) + 1,
		memory_order_relaxed);
}

/* Scheduler side: resume s; returns when the worker has no actor left. */
static void run_actor(struct smarm__worker *w, struct smarm__slot *s)
{
	void *fake = NULL;
	if (!first_run_ready(w, s))
		return;
	w->cur = s;
	w->slice_start = 0; /* started lazily by the first slice check */
	if (SMARM_UNLIKELY(w->obs_on))
		run_in_obs(w, s);
	run_seq_bump(w); /* odd: actor code runs */
	SMARM_FIBER_START(&fake, 0, (char *)s->stk_base + s->stk_guard,
			  s->stk_reserve);
	smarm__ctx_switch(&w->sched_sp, s->sp);
	SMARM_FIBER_FINISH(fake);
	run_seq_bump(w); /* even: back in the scheduler */
	finish_switch(w);
}

/* --------------------------------------------------------------- loop */

static void worker_loop(struct smarm__worker *w)
{
	struct smarm_node *n = w->node;

	smarm__thread_stack(&w->stk_bottom, &w->stk_size);
	smarm__altstack_enter(&w->alt);
	pthread_sigmask(SIG_SETMASK, NULL, &w->run_mask);
	if (w->causal) /* sampled scope: this thread's samples */
		smarm__causal_thread_start(w);
	for (;;) {
		struct smarm__slot *s;
		if (atomic_load_explicit(&n->next_deadline,
					 memory_order_relaxed) != UINT64_MAX &&
		    smarm__timers_due(n)) {
			/* Its wakes go to this worker's wake slot: run next. */
			w->fire_local = true;
			smarm__timers_fire(n, true);
			w->fire_local = false;
		}
		s = pick_next(w);
		if (s != NULL) {
			run_actor(w, s);
			continue;
		}
		if (w->pin_head != SMARM__NO_INDEX)
			continue; /* left for due timers: never idle past it */
		if (smarm__live(n) == 0) {
			smarm__wake_all(n); /* terminal wake */
			if (w->causal)
				smarm__causal_thread_end(w);
			smarm__altstack_leave(&w->alt);
			return;
		}
		idle(w);
	}
}

/* The tracer's ring of worker w (trace.h), or NULL: no tracing. */
static struct smarm__trace_ring *trace_ring_of(struct smarm__worker *w)
{
	struct smarm__trace *t = w->node->trace;
	return t != NULL ? &t->tc_ring[w->id] : NULL;
}

static void *worker_thread(void *arg)
{
	struct smarm__worker *w = arg;
	smarm__thread_name("w", w->id);
	smarm__tls_worker = w;
	smarm__tls_obs = w->obs_on;
	smarm__tls_trace = trace_ring_of(w);
	smarm__qseg_cache_use(&w->qsegs);
	worker_loop(w);
	smarm__qseg_cache_use(NULL);
	smarm__tls_worker = NULL;
	smarm__tls_obs = false;
	smarm__tls_trace = NULL;
	return NULL;
}

int smarm__run(struct smarm_node *n, smarm_actor_cb root, void *arg)
{
	int expect = 0;
	int started = 1;
	int rc;
	uint64_t root_pid = 0;

	if (smarm__tls_worker != NULL)
		return SMARM_ESTATE;
	if (!atomic_compare_exchange_strong(&n->running, &expect, 1))
		return SMARM_ESTATE;

	atomic_store(&n->idle_mask, 0);
	atomic_store(&n->rq_woken, 0);
	/*
	 * The shared queue is empty between runs (INV-3): every run's pushes
	 * start at its buffer's first entry, in pages an earlier run (the
	 * warm-up of a benchmark) faulted in. With the head left where the
	 * last run put it, a run's pushes went on into pages never touched,
	 * and faulted them in under rq_lock (spawn_join at two workers: 190
	 * faults in the first run after the warm-up, docs/benchmarks.md).
	 */
	smarm__lock(&n->rq_lock, SMARM__RANK_RUNQ);
	smarm__ring_rewind(&n->rq);
	smarm__unlock(&n->rq_lock, SMARM__RANK_RUNQ);
	atomic_store(&n->tk_holder, -1);
	atomic_store(&n->tk_armed, UINT64_MAX);
	atomic_store(&n->np_owner, -1);
	atomic_store(&n->spin_mask, 0);
	memset(n->wstats, 0, sizeof n->wstats);
	/* No worker runs yet: GLOBAL_LOCKS restarts (the run's caller may
	 * still race a stat reader, which only reads). */
	__atomic_store_n(&n->free_lock_n, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&n->rq_lock_n, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&n->pool_lock_n, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&n->tm_lock_n, 0, __ATOMIC_RELAXED);
	/* Both fixed since open (the tracer is enabled there). */
	n->obs_on = n->astat_on || n->trace != NULL || n->causal->cz_on;
	for (int i = 0; i < n->workers_n; i++) {
		memset(&n->workers[i], 0, sizeof n->workers[i]);
		n->workers[i].node = n;
		n->workers[i].id = i;
		n->workers[i].pin_head = SMARM__NO_INDEX;
		n->workers[i].pin_tail = SMARM__NO_INDEX;
		n->workers[i].astat = n->astat_on;
		n->workers[i].obs_on = n->obs_on;
		n->workers[i].causal = n->causal->cz_on;
		smarm__ring_init_fixed(&n->workers[i].ldq,
				       n->workers[i].ldq_buf, SMARM__LDQ_CAP);
		n->parkers[i].state = PK_EMPTY;
	}
	atomic_store(&n->stopping, 0);
	n->root_how = SMARM_EXIT_NORMAL;
	n->root_reason = 0;

	smarm__subsys_run_start(n);
	rc = smarm__spawn(n, NULL, &root_pid, root, arg, NULL, true);
	if (rc != 0) {
		smarm__subsys_run_end(n); /* every run_start has its run_end */
		atomic_store(&n->running, 0);
		return rc;
	}
	n->root = root_pid;
	atomic_store(&n->workers_started, n->workers_n);
	for (; started < n->workers_n; started++) {
		if (pthread_create(&n->workers[started].thread, NULL,
				   worker_thread, &n->workers[started]) != 0) {
			/* Run with the workers we have. */
			atomic_store(&n->workers_started, started);
			break;
		}
	}

	n->workers[0].thread = pthread_self();
	smarm__monitor_start(n);
	smarm__tls_worker = &n->workers[0];
	smarm__tls_obs = n->workers[0].obs_on;
	smarm__tls_trace = trace_ring_of(&n->workers[0]);
	smarm__qseg_cache_use(&n->workers[0].qsegs);
	worker_loop(&n->workers[0]);
	smarm__qseg_cache_use(NULL);
	smarm__tls_worker = NULL;
	smarm__tls_obs = false;
	smarm__tls_trace = NULL;
	smarm__monitor_stop(n); /* before any worker thread is joined */

	for (int i = 1; i < started; i++)
		pthread_join(n->workers[i].thread, NULL);
	for (int i = 0; i < started; i++) {
		smarm__stack_cache_flush(n, &n->workers[i]);
		smarm__slot_cache_flush(n, &n->workers[i]);
		smarm__qseg_cache_flush(&n->workers[i].qsegs);
		free(n->workers[i].wheld);
		n->workers[i].wheld = NULL;
	}

	smarm__timers_clear(n);
	smarm__subsys_run_end(n); /* io: stop and join its threads */
	smarm__release_unjoined(n);
	smarm__orphans_fini(n);
	atomic_store(&n->running, 0);
	return started == n->workers_n ? 0 : SMARM_ESYSTEM;
}
