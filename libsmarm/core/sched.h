/* SPDX-License-Identifier: MIT */
/*
 * sched.h - the scheduler's interface: workers (struct smarm__worker),
 * the running actor (smarm__current), queueing and waking actors,
 * parking and yielding, and the run itself.
 *
 * Upper layers use smarm__current, smarm__current_node and smarm__yield;
 * the rest is the core's. The worker layout is here because the inline
 * helpers read it on hot paths; nothing outside core/ writes it.
 * Ownership and locking: stated in sched.c.
 * See: docs/architecture/scheduler.md (Idle workers).
 */
#ifndef SMARM_CORE_SCHED_H
#define SMARM_CORE_SCHED_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "smarm/smarm.h"
#include "../arch/arch.h"
#include "lock.h"
#include "ring.h"

struct smarm_node;
struct smarm__slot;

#define SMARM__MAX_WORKERS 64
#define SMARM__NO_INDEX UINT32_MAX /* no index (slots, heaps, FIFOs) */
#define SMARM__WORKER_STACKS 4	   /* per-worker stack cache in front of pool */
#define SMARM__WORKER_SLOTS 32	   /* per-worker free-slot cache (slot.c) */
#define SMARM__SLOT_BATCH 16	   /* slots moved to or from it at once */
#define SMARM__SPAWN_BATCH 16	   /* work-first spawns held per actor run */
#define SMARM__LDQ_CAP 256	   /* a worker's local deque (power of two) */
/*
 * Idle spinning (sched.c spin_for_work). A spinner looks for work every
 * POLL ns. It leaves a lone queued actor to the busy workers for GRACE
 * ns: one about to finish its actor takes the next itself, warm, within
 * ~100 ns, while moving a strictly sequential chain (chained_spawn) to
 * the spinner costs several cache-line transfers per hop (measured 3-5x
 * slower). Go leaves a running P's runnext goroutine alone for ~3 us for
 * the same reason.
 */
#define SMARM__SPIN_POLL_NS 250
/* The monitor's wake-slot scan period (smarm__slots_scan). */
#define SMARM__SLOT_SCAN_NS 1000000
#define SMARM__SPIN_GRACE_NS 3000

/* Why an actor switched back to its scheduler. */
enum {
	SMARM__INTENT_YIELD = 1,
	SMARM__INTENT_PARK = 2,
	SMARM__INTENT_DONE = 3,
	SMARM__INTENT_PREEMPT = 4, /* async preemption: pinned to this worker */
	SMARM__INTENT_MOVE = 5,	   /* async preemption, free to move
				      (preempt.c INV-P7): the deque's back */
	SMARM__INTENT_SLICE = 6,   /* a yield at a slice end (a safe point) */
	SMARM__INTENT_HIBERNATE = 7, /* a park that gives up the stack: the
					next run starts over (wait.c WAIT-10) */
};

/* Whether an actor left its worker because its slice ran out. */
static inline bool smarm__intent_preempted(int intent)
{
	return intent == SMARM__INTENT_PREEMPT || intent == SMARM__INTENT_MOVE;
}

/*
 * One per worker, in the node's workers[] array. Aligned to a cache line,
 * and the deque (the one part other workers write in the normal course:
 * thieves) starts a line of its own: the end of one worker (its slot
 * cache, written at every spawn and exit) used to share a line with the
 * start of the next (cur, prev, the wake slot, written at every switch),
 * and the deque lock one with the held spawns.
 */
struct smarm__worker {
	struct smarm_node *node;
	int id;
	void *sched_sp;		   /* scheduler context while an actor runs */
	struct smarm__slot *cur;   /* actor on this worker, or NULL */
	struct smarm__slot *prev;  /* actor that just left: its transition
				      is finished by whoever runs next */
	int prev_intent;	   /* why prev left (INTENT_*) */
	_Atomic uint64_t next;	   /* wake slot: pid woken by an actor here;
				      the owner's plain access or an
				      exchange (sched.c, take_slot) */
	_Atomic uint32_t own_busy; /* owner: in a plain access to its wake
				      slot or slot cache (membar.h) */
	_Atomic uint32_t next_seq; /* bumped by the owner at every fill */
	uint32_t streak;	   /* consecutive wake-slot pops */
	uint64_t urgent;	   /* owner: the pid slot_put put in the wake
				      slot as urgent, or 0 (sched.c) */
	uint64_t urgent_t0;	   /* owner: cycles at the first urgent pop
				      in a row, or 0 */
	uint32_t due_tick;	   /* picks since the last timer check */
	uint32_t stk_ncache;	   /* default-shaped stacks in stk_cache */
	bool in_finish;		   /* finishing another actor's switch */
	bool fire_local;	   /* firing due timers between actors: their
				      wakes go to the wake slot */
	void *stk_cache[SMARM__WORKER_STACKS]; /* lock-free, owner only */
	struct smarm__qseg_cache qsegs;	       /* free and pending queue
						  segments (ring.h QUEUE-6,
						  7): lent to the worker's
						  thread for the run, owner
						  only */
	uint64_t slice_start;		       /* cycle count at resume */
	bool astat;	   /* the node keeps actor statistics (slot.h) */
	bool obs_on;	   /* astat, or the node traces (trace.h) or
			      profiles (causal.h): the one flag the switch
			      and message paths test */
	bool causal;	   /* the node's causal profiler is on */
	uint64_t run_t0;   /* astat: cycle count at cur's switch-in */
	uintptr_t tr_send; /* tracing: the channel handle of a send in
			      progress on this worker that wakes a waiter
			      other than a parked receive (msg/chan.c),
			      until a wake records it (sched.c wake_obs
			      clears it); else 0 */
	bool tr_carried;   /* tracing: cur came back from a wait whose
			      receive a send's wake recorded (wt_carried):
			      its receive's hook records no RECV, once */
	uint64_t tr_pid;   /* tracing: cur's pid, stored by the trace
			      hooks at its switch-in (sched.c trace_in,
			      trace_switch); stale while cur is NULL */
	pthread_t thread;
	void *stk_bottom; /* OS thread stack (ASan fiber bounds) */
	size_t stk_size;
	void *fake;		    /* ASan fake-stack cookie across switch */
	struct smarm__altstack alt; /* signal stack during the run */
	/* preemption (preempt.c) */
	_Atomic uint32_t run_seq;     /* +1 entering and leaving actor code
					 (odd: an actor runs), +2 on a direct
					 actor-to-actor switch */
	_Atomic uint32_t preempt_seq; /* run_seq the monitor signalled */
	_Atomic uint32_t stay_seq;    /* run_seq signalled for a woken
					 actor: that preemption does not
					 move the runner (preempt.c) */
	uint32_t pin_head, pin_tail;  /* pinned FIFO (INV-P1), owner only */
	uint32_t pin_skips;	      /* picks that passed a pinned head */
	_Atomic uint32_t pin_count;   /* actors in the pinned FIFO (owner
					 writes; balancers read, relaxed) */
	uint64_t local_picks;	      /* owner: picks from its deque (not
					 the wake slot), for the pinned
					 tickets (preempt.c pin_push) */
	uint32_t left_deque;	      /* owner: consecutive slice ends that
					 left the deque to thieves */
	uint32_t pin_yields;	      /* owner: woken actors taken before a
					 due pinned one, in a row */
	uint32_t yields;	      /* owner: yields here (sched.c,
					 yield_queue) */
	uint64_t n_async;	      /* actors preempted by signal */
	uint64_t async_ns;	      /* when the last one was (before
					 n_async counts it; preempt.c) */
	uint64_t n_ret_taken;	      /* patched returns landed (preempt.c) */
	uint64_t n_moved;	      /* of n_async, left to other workers */
	int move_to;		      /* owner: the worker a MOVE goes to */
	uint64_t n_deferred;	      /* signals that found no safe spot */
	int defer_why;		      /* why the last one did (preempt.c) */
	sigset_t run_mask;	      /* the worker's signal mask in a run */

	/* work-first spawns (see smarm__enqueue_spawned) */
	uint64_t sbatch[SMARM__SPAWN_BATCH]; /* spawned by the running actor,
						not queued yet */
	uint32_t sbatch_n;
	bool sbatch_spill; /* this run overflowed the batch: spawns go back */
	/* wakes held while an exit's hooks run (smarm__wakes_hold) */
	uint32_t whold;	  /* nesting depth; 0: wakes go out at once */
	uint32_t wheld_n; /* pids in wheld */
	uint32_t wheld_cap;
	uint64_t *wheld; /* malloc'd, grown by doubling; freed at run end */
	/*
	 * Local deque of work-first spawns (several workers): the owner
	 * pushes and pops at the front, idle workers steal from the back.
	 * ldq_lock (RUNQ rank, never nested with another RUNQ lock).
	 */
	_Alignas(64) smarm__lock_t ldq_lock;
	struct smarm__ring ldq;	  /* of pid ids, in ldq_buf (fixed) */
	_Atomic uint32_t ldq_ops; /* pushes and pops, under ldq_lock: a
				     spinner sees the deque move */
	uint32_t ldq_picks;	/* owner: local pops, for the fairness turns */
	uint64_t ldq_old;	/* owner: the back entry at the last turn */
	uint64_t ldq_old_since; /* owner: cycle count it was first seen */
	uint32_t ldq_old_len;	/* owner: its shortest length since */
	uint32_t ldq_age_shift; /* owner: aged takes since it was empty */
	uint64_t ldq_buf[SMARM__LDQ_CAP];

	/*
	 * Free-slot cache (slot.c): slots this worker's spawns take and its
	 * finalizes return without the node's free list; refilled and
	 * spilled in batches under it. The owner uses it with no lock while
	 * no other thread visits (own_busy flags its access, slot.c INV-4);
	 * sc_lock (SCACHE rank) guards it otherwise: a spawn that finds the
	 * table full takes it, under the free list, to use another worker's
	 * cached slot.
	 */
	smarm__lock_t sc_lock;
	uint32_t sc_n;
	uint32_t sc_idx[SMARM__WORKER_SLOTS];
} __attribute__((aligned(64)));

extern __thread struct smarm__worker *smarm__tls_worker
	__attribute__((tls_model("initial-exec")));
/* This thread is a worker of a node that keeps actor statistics or
 * traces (its worker's obs_on): one byte, so the check off both is one
 * compare (sched.c). */
extern __thread bool smarm__tls_obs __attribute__((tls_model("initial-exec")));

static inline struct smarm__worker *smarm__worker(void)
{
	return smarm__tls_worker;
}

/* The calling thread's worker if it is one of n's, else NULL (a plain
 * thread, or a worker of another node): whose per-worker caches and
 * counts the caller may use. */
static inline struct smarm__worker *smarm__worker_of(const struct smarm_node *n)
{
	struct smarm__worker *w = smarm__tls_worker;
	return (w != NULL && w->node == n) ? w : NULL;
}

/* The running actor's slot, or NULL. Re-read after every switch point. */
static inline struct smarm__slot *smarm__current(void)
{
	struct smarm__worker *w = smarm__tls_worker;
	return w ? w->cur : NULL;
}

/* The node the running actor belongs to, or NULL outside an actor. */
static inline struct smarm_node *smarm__current_node(void)
{
	struct smarm__worker *w = smarm__tls_worker;
	return (w && w->cur) ? w->node : NULL;
}

void smarm__msg_obs_slow(struct smarm__worker *w, bool out, uint64_t k,
			 const void *chan);

/*
 * The running actor sent (out) or took k messages on the channel whose
 * handle is chan: counted in its statistics line when the node keeps
 * them (slot.h smarm__astat), a SEND or RECV record when it traces;
 * else one predictable branch. Any thread: only an actor's own count.
 */
static inline void smarm__msg_obs(bool out, uint64_t k, const void *chan)
{
	if (SMARM_UNLIKELY(smarm__tls_obs))
		smarm__msg_obs_slow(smarm__tls_worker, out, k, chan);
}

void smarm__msg_count_slow(struct smarm__worker *w, bool out, uint64_t k);

/*
 * The same for messages whose SEND or RECV a wake's record carries
 * already (trace.h SMARM__TRF_SEND, _RECV; smarm__tls_obs set): only
 * the statistics' count, when the node keeps them.
 */
static inline void smarm__msg_obs_carried(struct smarm__worker *w, bool out,
					  uint64_t k)
{
	if (SMARM_UNLIKELY(w->astat))
		smarm__msg_count_slow(w, out, k);
}

/*
 * A receive's smarm__msg_obs (msg/chan_api.c): one that a traced send
 * handed over is in that send's wake record (tr_carried, from the
 * switch that resumed the receiver: sched.c), so it is only counted,
 * once; any other is recorded. One predictable branch off.
 */
static inline void smarm__msg_obs_recv(const void *chan)
{
	if (SMARM_UNLIKELY(smarm__tls_obs)) {
		struct smarm__worker *w = smarm__tls_worker;
		if (w->tr_carried) {
			w->tr_carried = false;
			smarm__msg_obs_carried(w, false, 1);
		} else {
			smarm__msg_obs_slow(w, false, 1, chan);
		}
	}
}

void smarm__causal_pay_slow(void);
void smarm__causal_pay_batch_slow(void);

/*
 * A pay point of the causal profiler (causal.h): the running actor
 * sleeps off the delay it owes, before a wake it is about to cause
 * (Coz's catch-up). One predictable branch when the node neither keeps
 * statistics nor traces nor profiles. Actor context, no runtime lock
 * held (it may park).
 */
static inline void smarm__causal_pay(void)
{
	if (SMARM_UNLIKELY(smarm__tls_obs))
		smarm__causal_pay_slow();
}

/* A pay point that wakes no one (smarm_check, a progress point): as
 * smarm__causal_pay, but it pays only once the debt is worth a batch
 * (causal.c, PAY_BATCH_NS). */
static inline void smarm__causal_pay_batch(void)
{
	if (SMARM_UNLIKELY(smarm__tls_obs))
		smarm__causal_pay_batch_slow();
}

void smarm__enqueue(struct smarm_node *n, uint64_t pid);
void smarm__enqueue_spawned(struct smarm_node *n, uint64_t pid);
void smarm__spawns_flush_slow(struct smarm__worker *w);

/* Queue the spawns held for the actor leaving w (sched.c); nothing to do
 * on the common path, which stays two loads. */
static inline void smarm__spawns_flush(struct smarm__worker *w)
{
	if (w->sbatch_n != 0 || w->sbatch_spill)
		smarm__spawns_flush_slow(w);
}
bool smarm__unpark_at(struct smarm_node *n, uint64_t pid, uint32_t epoch);
/*
 * smarm__unpark_at for a channel send's hand-off into the receive of
 * pid (wait epoch) by the running actor on a worker of n that keeps
 * statistics, traces or profiles (msg/chan.c chan_send_obs): the wake's
 * record is the send's SEND and the receive's RECV (chan: the handle,
 * as smarm__msg_obs takes it), else the send records its own. 0.
 */
int smarm__unpark_send(struct smarm_node *n, uint64_t pid, uint32_t epoch,
		       const void *chan);
void smarm__unpark_any(struct smarm_node *n, uint64_t pid);
/* pid, if queued, runs next on the calling actor's worker (sched.c,
 * Expedite): for exit signals and stops. */
void smarm__expedite(struct smarm_node *n, uint64_t pid);
/*
 * Hold the wakes this worker makes (on) and queue them all, in the
 * order made, when the outermost hold ends (off). actor.c brackets an
 * exit's hooks with it, so every Down and exit signal of one exit is
 * queued at every watcher before any of them can run (sched.c,
 * enqueue_woken). The holder must not switch in between.
 */
void smarm__wakes_hold(struct smarm__worker *w, bool on);
void smarm__yield(struct smarm__slot *s);
/* smarm__yield at a slice end: the actor may be moved to even out the
 * workers (sched.c, yield_queue). */
void smarm__yield_slice(struct smarm__slot *s);
bool smarm__other_work(struct smarm__worker *w);
void smarm__wake_one_if_idle(struct smarm_node *n);
void smarm__wake_all(struct smarm_node *n);

/* A wake slot as the monitor saw it at its previous scan. */
struct smarm__slot_seen {
	uint64_t pid;
	uint32_t seq;
};
void smarm__slots_scan(struct smarm_node *n, struct smarm__slot_seen *seen);
void smarm__timer_note(struct smarm_node *n, uint64_t deadline);

/*
 * An idle worker's fd poll (Go's netpoller in findrunnable): a layer
 * above core that waits on fds (io's epoll set) installs these, and an
 * idle worker that finds the poll free waits in np_wait instead of its
 * futex, so the thread that sees an fd ready runs the actor it woke,
 * with no hand-off (sched.c, netpoll_park). np_wait waits until an fd
 * event, the deadline (absolute smarm__clock_ns, 0: none) or a np_break,
 * wakes the fd's actors from the calling worker (their wakes go to its
 * wake slot) and returns how many it woke. np_break makes the np_wait in
 * progress, or the next one, return; a spurious return is allowed.
 *
 * One poller at a time (n->np_owner): a worker, or the layer's own
 * thread, which takes the poll only when the monitor hands it over: when
 * the worker that polled has been away running actors for a whole
 * monitor period (smarm__netpoll_look, as Go's sysmon polls when nobody
 * did for 10 ms). The thread waits for its turn in
 * smarm__netpoll_thread_wait and gives the poll back, free, with
 * smarm__netpoll_thread_done after each batch of events.
 *
 * Install (arg non-NULL) before the thread exists; returns false, and
 * installs nothing, on a node without a monitor (the thread then polls
 * alone, always). Uninstall (arg NULL) only after the run's workers are
 * joined: the thread then has the poll for good.
 */
struct smarm__netpoll {
	int (*np_wait)(void *arg, uint64_t deadline);
	void (*np_break)(void *arg);
};
bool smarm__netpoll_install(struct smarm_node *n,
			    const struct smarm__netpoll *ops, void *arg);
void smarm__netpoll_thread_wait(struct smarm_node *n);
void smarm__netpoll_thread_done(struct smarm_node *n);
/* The monitor, at each look (now: smarm__clock_ns); seen[] is its
 * memory between looks, zeroed at first. */
void smarm__netpoll_look(struct smarm_node *n, uint64_t seen[2], uint64_t now);
int smarm__run(struct smarm_node *n, smarm_actor_cb root, void *arg);
void smarm__switch_out(struct smarm__slot *s, int intent);
void smarm__actor_main(struct smarm__slot *s) __attribute__((noreturn));

/*
 * A new actor run begins on w without going through its scheduler (a
 * direct switch, or a preempted actor that goes on alone): a fresh
 * timeslice, and a new run_seq for the preemption monitor (+2 keeps it
 * odd: actor code runs).
 */
static inline void smarm__run_restart(struct smarm__worker *w)
{
	w->slice_start = 0;
	atomic_store_explicit(
		&w->run_seq,
		atomic_load_explicit(&w->run_seq, memory_order_relaxed) + 2,
		memory_order_relaxed);
}

/*
 * Runnable actors waiting on worker v, not counting the one it runs:
 * its pinned FIFO and its deque. A racy snapshot (relaxed loads), for
 * balancing (sched.c balance_steal, smarm__lighter_worker).
 */
static inline uint32_t smarm__worker_backlog(struct smarm__worker *v)
{
	return atomic_load_explicit(&v->pin_count, memory_order_relaxed) +
	       smarm__ring_len(&v->ldq);
}

/* What worker v holds: its backlog and the actor it runs, if any. */
static inline uint32_t smarm__worker_holds(struct smarm__worker *v)
{
	return smarm__worker_backlog(v) +
	       (atomic_load_explicit(&v->run_seq, memory_order_relaxed) & 1);
}

/*
 * The worker to leave one of w's actors to, w holding `mine` with it: the
 * one holding least, if that is less (sched.c).
 */
int smarm__lighter_worker(struct smarm__worker *w, uint32_t mine);

#endif /* SMARM_CORE_SCHED_H */
