/* SPDX-License-Identifier: MIT */
/*
 * core.h - internal interface of the core layer: the node, its workers,
 * the slot table with the packed state word, stacks, timers and the
 * parking protocol that every blocking primitive above is built on.
 *
 * Glossary.
 *   node    one runtime instance (smarm_node_t): config, slot table, run
 *           queue, timers, stack pool, idle coordinator, workers.
 *   worker  an OS thread running the scheduler loop (worker 0 is the
 *           thread that called smarm_node_run).
 *   slot    the per-actor record, found by pid index; reused for new actors
 *           with a bumped generation.
 *   word    the slot's packed atomic state: gen<<32 | epoch<<8 | state.
 *   epoch   a 24-bit wait identity. Every wait round opens one (wait.h);
 *           wakers register (pid, epoch); a wake succeeds only for the
 *           current epoch and consumes it, so stale wakes die at one CAS.
 *
 * Ownership: the node owns everything here. Workers exist only during a
 * run. Slots are never freed before the node is closed.
 * Locking: see lock.h for ranks. Slot fields are written by the slot's
 * owner (the spawner before publish; the running actor; the scheduler
 * holding the claim) except the fields marked "cold", which need the
 * slot's cold lock.
 * Invariants:
 *   INV-1 a pid is in the run queue at most once (pushes pair with
 *         transitions into QUEUED; only a scheduler moves QUEUED->RUNNING).
 *   INV-2 the only wildcard wake is a stop request; every other waker is
 *         epoch-stamped.
 *   INV-3 a wait round that ends without parking is retired (wait.c
 *         WAIT-6).
 *   INV-4 live_actors is decremented last in finalize, after every wake it
 *         produced, so live==0 with an empty queue means the run is over.
 *   INV-5 a registration carrying a node pointer exists only while its
 *         actor is inside that wait (removed on wake, timeout or stop), so
 *         a foreign-thread waker never touches a node whose run ended.
 *   INV-6 death notifications (joiner wake) precede slot reclamation.
 * See: docs/architecture.md.
 */
#ifndef SMARM_CORE_H
#define SMARM_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smarm/smarm.h"
#include "../arch/arch.h"
#include "lock.h"
#include "ring.h"
#include "wait.h"

#define SMARM__MAX_WORKERS 64
#define SMARM__SEG_BASE 256u /* slots in segment 0; segment s has BASE<<s */
#define SMARM__MAX_SEGS 24
#define SMARM__NO_INDEX UINT32_MAX
#define SMARM__WORKER_STACKS 4	/* per-worker stack cache in front of pool */
#define SMARM__SPAWN_BATCH 16	/* work-first spawns held per actor run */
#define SMARM__LDQ_CAP 256	/* a worker's local deque (power of two) */
#define SMARM__FRONT_LIMIT 1024 /* front pops before older work must run */
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
#define SMARM__SPIN_GRACE_NS 3000

/* Slot states (low 8 bits of the word). */
enum {
	SMARM__ST_VACANT = 0,
	SMARM__ST_QUEUED = 1,
	SMARM__ST_RUNNING = 2,
	SMARM__ST_NOTIFIED =
		3, /* running, and a wake landed: next park returns */
	SMARM__ST_PARKED = 4,
	SMARM__ST_DONE = 5,
};

#define SMARM__W_STATE(w) ((uint32_t)((w)&0xffu))
#define SMARM__W_EPOCH(w) ((uint32_t)(((w) >> 8) & 0xffffffu))
#define SMARM__W_GEN(w) ((uint32_t)((w) >> 32))
#define SMARM__W_MAKE(gen, epoch, st)                                          \
	(((uint64_t)(gen) << 32) | ((uint64_t)((epoch)&0xffffffu) << 8) |      \
	 (uint64_t)(st))

static inline uint64_t smarm__pid_make(uint32_t gen, uint32_t idx)
{
	return ((uint64_t)gen << 32) | idx;
}
#define SMARM__PID_GEN(id) ((uint32_t)((id) >> 32))
#define SMARM__PID_IDX(id) ((uint32_t)(id))

/* Why an actor switched back to its scheduler. */
enum {
	SMARM__INTENT_YIELD = 1,
	SMARM__INTENT_PARK = 2,
	SMARM__INTENT_DONE = 3,
	SMARM__INTENT_PREEMPT = 4, /* async preemption: pinned to this worker */
};

/* Result of an unpark attempt. */
enum {
	SMARM__UNPARK_NOOP = 0,
	SMARM__UNPARK_NOTIFIED = 1,
	SMARM__UNPARK_ENQUEUE = 2
};

struct smarm__cleanup {
	smarm_cleanup_cb fn;
	void *arg;
};

/*
 * Why an actor ended: what travels to its joiner today, and to its
 * monitors, links and supervisor in the layers above. Written by the
 * actor itself when it starts exiting (smarm__terminate_ex), final once
 * its exit hooks start (slot `dying`), released when the slot is
 * reclaimed.
 */
struct smarm__exit {
	int ex_how;	  /* SMARM_EXIT_* */
	int ex_strength;  /* STOPPED: the request's SMARM__STOP_* */
	intptr_t ex_code; /* CRASHED: the reason; STOPPED: the
			     request's code; else 0 */
	uint64_t ex_from; /* STOPPED: pid id of the requester, 0
			     if none (the node, a foreign thread) */
	void *ex_payload; /* owned; NULL: none */
	void (*ex_free)(void *payload); /* payload's destructor, or NULL */
};

/*
 * A stop request's strength. Both end the actor as SMARM_EXIT_STOPPED in
 * the core; the OTP layer lets an actor that traps exits turn a SHUTDOWN
 * into a message instead (before it reaches the core), never a KILL. A
 * stronger request overrides a weaker one that has not been observed.
 */
enum {
	SMARM__STOP_NONE = 0,
	SMARM__STOP_SHUTDOWN = 1,
	SMARM__STOP_KILL = 2,
};

struct smarm__stop_req {
	uint64_t sr_from; /* requester's pid id; 0: none */
	int sr_strength;  /* SMARM__STOP_SHUTDOWN or SMARM__STOP_KILL */
	intptr_t sr_code; /* recorded in the exit record */
};

/*
 * Subsystems: the layers above the core (io today; otp, behaviour and obs
 * tomorrow) plug into a node through this table of hooks, and keep their
 * own state per node and per actor. An id is also the index of the
 * subsystem's state; actor exit hooks run in id order.
 */
enum {
	SMARM__SUB_IO = 0,
	SMARM__SUB_OTP = 1,
	SMARM__SUB_BEHAVIOUR = 2,
	SMARM__SUB_OBS = 3,
	SMARM__SUB_MAX = 4,
};

struct smarm_config;
struct smarm__slot;

/*
 * A subsystem's hooks. Every member may be NULL. None is called with a
 * runtime lock held. node.c calls them; see there for the order.
 *   ss_open       smarm_node_open, in id order: create the per-node state
 *                 (*state, NULL if none). An error fails the open (the
 *                 subsystems opened before are closed again).
 *   ss_close      smarm_node_close, in reverse id order (no run active).
 *   ss_run_start  smarm_node_run, before the root actor is spawned, on
 *                 the calling thread.
 *   ss_run_end    smarm_node_run, after every worker is joined and timers
 *                 are cleared: no actor exists any more.
 *   ss_actor_exit on the dying actor's own stack, after its cleanup
 *                 handlers, once per actor that has per-actor state of
 *                 this subsystem (smarm__actor_ext_attach), which it is
 *                 handed to own and free. The exit record is final and
 *                 borrowed for the call. It may allocate, send and wake;
 *                 a stop is no longer observed. (An actor whose stack
 *                 could not be mapped never ran: its hooks run on the
 *                 scheduler, which finalizes it.)
 *   ss_get_stat   smarm_node_get_int for a stat the core does not know:
 *                 0 with *out set, or SMARM_EINVAL for "not mine".
 */
struct smarm__subsys {
	const char *ss_name;
	int (*ss_open)(struct smarm_node *n, const struct smarm_config *cfg,
		       void **state);
	void (*ss_close)(struct smarm_node *n, void *state);
	void (*ss_run_start)(struct smarm_node *n, void *state);
	void (*ss_run_end)(struct smarm_node *n, void *state);
	void (*ss_actor_exit)(struct smarm__slot *s,
			      const struct smarm__exit *ex, void *actor_state);
	int (*ss_get_stat)(const struct smarm_node *n, const void *state,
			   int stat, int64_t *out);
};

/*
 * The subsystems built into the library, indexed by id (NULL: none).
 * Defined by libsmarm/subsys.c, the one file that names every layer.
 */
extern const struct smarm__subsys *const smarm__builtin_subsys[SMARM__SUB_MAX];

/* Per-actor subsystem state (slot `ext`; kept across tenants). */
struct smarm__ext {
	void *x_state[SMARM__SUB_MAX]; /* cold: each subsystem's, or NULL */
};

struct smarm__slot {
	_Atomic uint64_t word;	 /* gen<<32 | epoch<<8 | state */
	void *sp;		 /* saved stack pointer while switched out */
	uintptr_t hwm;		 /* lowest sp ever saved (sampled high-water) */
	_Atomic uint8_t stop;	 /* SMARM__STOP_* requested (set under cold
				    lock; only ever grows) */
	uint8_t exiting;	 /* cleanups running; stop not observed */
	uint8_t preempt_pending; /* owner: a slice ended inside a
				    no-preempt region; yield at its end */
	uint8_t stk_mode;	 /* SMARM_STACK_*: as requested until the
				    stack is attached, then GUARDED/DENSE */
	uint32_t nopreempt;	 /* owner: smarm_preempt_disable depth */
	uint32_t rt_nopreempt;	 /* owner: runtime brackets around user
				    callbacks (smarm__nopreempt_enter) */
	uint8_t joinable;	 /* cold: a join/detach is still owed */
	uint8_t has_joiner;	 /* cold: joiner_* is valid */
	uint32_t index;		 /* constant: own index */
	uint32_t next_free;	 /* free-list link (free-list lock) */
	uint32_t cl_len;	 /* cleanup handlers pushed */
	uint32_t cl_cap;	 /* capacity of cl (kept across tenants) */
	smarm_actor_cb fn;	 /* body */
	void *arg;
	uint64_t parent;    /* parent pid id (0: the run itself) */
	void *stk_base;	    /* mapping base (guard first); NULL: none yet */
	size_t stk_reserve; /* requested, page-rounded usable bytes */
	size_t stk_guard;   /* requested, page-rounded guard bytes; 0: dense */
	struct smarm__cleanup *cl; /* cleanup stack, newest last */
	struct smarm__wait *wait;  /* owner: the wait parked in (wait.c
				      WAIT-4), or NULL */
	struct smarm__exit exit;   /* valid once exiting; final once dying */
	uint64_t stop_from;	   /* cold: the strongest stop's requester */
	intptr_t stop_code;	   /* cold: and its code */
	_Atomic uint8_t dying;	   /* exit hooks have started (actor.c
				      INV-3); the exit record is final */
	_Atomic uint8_t ext_used;  /* a subsystem attached state to this
				      tenant (actor.c INV-3) */
	struct smarm__ext *ext;	   /* cold: per-subsystem state; NULL until
				      first used, then kept across tenants */
	uint64_t joiner;	   /* cold: pid id of the joining actor */
	uint32_t joiner_epoch;	   /* cold */
	uint32_t tm_pos;	   /* TIMERS lock: heap index of this slot's
				      live wake entry, or SMARM__NO_INDEX */
	uint32_t pin_next;	   /* worker-local pinned FIFO link */
	uint64_t pin_ticket;	   /* rq_pops value at which it is due */
	_Atomic uint64_t waits;	   /* waits opened (owner writes): timer entries
				      compare it, so an entry outlives no wrap
				      of the 24-bit epoch */
	smarm__lock_t cold;	   /* guards the fields marked cold */
	uint32_t stk_parks;   /* parks since the last shrink (saturating) */
	uint32_t stk_shrinks; /* park-path shrinks of this actor's stack */
};

struct smarm__parker {
	uint32_t state; /* 0 empty, 1 parked, 2 notified (atomic) */
	char pad[60];
};

struct smarm__worker {
	struct smarm_node *node;
	int id;
	void *sched_sp;		   /* scheduler context while an actor runs */
	struct smarm__slot *cur;   /* actor on this worker, or NULL */
	struct smarm__slot *prev;  /* actor that just left: its transition
				      is finished by whoever runs next */
	int prev_intent;	   /* why prev left (INTENT_*) */
	_Atomic uint64_t next;	   /* wake slot: pid woken by an actor here;
				      taken by exchange (owner or a thief) */
	_Atomic uint32_t next_seq; /* bumped by the owner at every fill */
	uint32_t seen_seq[SMARM__MAX_WORKERS]; /* thief: others' seq at my
					last idle scan */
	uint64_t seen_pid[SMARM__MAX_WORKERS]; /* thief: others' slot then */
	uint32_t streak;		       /* consecutive wake-slot pops */
	uint32_t due_tick;   /* picks since the last timer check */
	uint32_t stk_ncache; /* default-shaped stacks in stk_cache */
	bool in_finish;	     /* finishing another actor's switch */
	void *stk_cache[SMARM__WORKER_STACKS]; /* lock-free, owner only */
	uint64_t slice_start;		       /* cycle count at resume */
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
	uint32_t pin_head, pin_tail;  /* pinned FIFO (INV-P1), owner only */
	uint32_t pin_skips;	      /* picks that passed a pinned head */
	uint64_t n_async;	      /* actors preempted by signal */
	uint64_t n_deferred;	      /* signals that found no safe spot */
	int defer_why;		      /* why the last one did (preempt.c) */
	sigset_t run_mask;	      /* the worker's signal mask in a run */

	/* work-first spawns (one worker, see smarm__enqueue_spawned) */
	uint64_t sbatch[SMARM__SPAWN_BATCH]; /* spawned by the running actor,
						not queued yet */
	uint32_t sbatch_n;
	bool sbatch_spill; /* this run overflowed the batch: spawns go back */
	/*
	 * Local deque of work-first spawns (several workers): the owner
	 * pushes and pops at the front, idle workers steal from the back.
	 * ldq_lock (RUNQ rank, never nested with another RUNQ lock).
	 */
	smarm__lock_t ldq_lock;
	struct smarm__ring ldq; /* of pid ids, in ldq_buf (fixed) */
	uint32_t ldq_picks;	/* owner: local pops, for the fairness turns */
	uint64_t ldq_buf[SMARM__LDQ_CAP];
};

/*
 * Statistics of one worker in the current run, zeroed at run start.
 * Written only by the worker with relaxed stores (plain moves, no RMW on
 * the hot path); smarm_node_get_int sums them with relaxed loads, so a
 * read during a run is approximate. One cache line each, so workers do
 * not share lines.
 */
struct smarm__wstats {
	uint64_t slot_hits;	 /* actors taken from the wake slot */
	uint64_t slot_displaced; /* slot occupants pushed out by a wake */
	uint64_t spin_hits;	 /* idle spins that found work */
	uint64_t parks;		 /* futex sleeps of this idle worker */
} __attribute__((aligned(64)));

struct smarm__timer_ent {
	uint64_t deadline;
	uint64_t seq;
	uint64_t waits; /* the target's wait count at insert */
	uint64_t pid;	/* sleep/wait wake target, or 0 */
	uint32_t epoch;
	struct smarm__timed_call *st; /* timed send, or NULL */
	struct smarm__slot *slot;     /* wake entry's slot, or NULL */
};

/*
 * A timed call (the mechanism under smarm_chan_send_after). fire runs on a
 * scheduler thread with no lock held when the deadline passes; drop runs
 * instead when the timer is cancelled or discarded at the end of a run.
 * Exactly one of the two runs, exactly once.
 */
struct smarm__timed_call {
	uint64_t id;
	bool cancelled; /* tm_lock: cancel took it (drop runs there) */
	bool dropped;	/* tm_lock: cancel's drop finished */
	bool popped;	/* tm_lock: its heap entry is gone */
	void (*fire)(void *ctx, void *payload);
	void (*drop)(void *ctx, void *payload);
	void *ctx;
	max_align_t payload[]; /* caller's bytes */
};

struct smarm_config {
	int64_t opt[32]; /* indexed by SMARM_OPT_*; resolved values */
};

struct smarm_spawn_opts {
	size_t reserve;	  /* 0: node default */
	size_t guard;	  /* 0: node default */
	uint8_t mode_set; /* mode below was set */
	uint8_t mode;	  /* SMARM_STACK_* */
};

struct smarm_node {
	/* configuration (immutable after open) */
	int workers_n;
	uint32_t max_actors;
	size_t stk_reserve; /* page-rounded default */
	size_t stk_guard;   /* page-rounded default */
	int stk_mode;	    /* default SMARM_STACK_* of a spawn */
	int64_t stk_budget; /* AUTO: most guarded stacks mapped at once */
	uint32_t pool_cap;
	uint64_t slice_cycles;
	uint64_t slice_ns;
	bool preempt_async; /* the monitor signals overrunning actors */
	uint64_t async_ns;  /* run time that counts as an overrun */

	/* slot table */
	struct smarm__slot *_Atomic segs[SMARM__MAX_SEGS];
	_Atomic uint32_t nslots;
	smarm__lock_t free_lock; /* SLOT rank: free_head, nfree, growth */
	uint32_t free_head;
	uint32_t nfree;

	/* run queue (RUNQ lock): ring of pid ids, capacity >= nslots */
	smarm__lock_t rq_lock;
	struct smarm__ring rq;	  /* rg_len is read anywhere (a snapshot) */
	_Atomic uint64_t rq_pops; /* pops ever (rq_lock writes) */
	uint32_t rq_front;	  /* RUNQ: work-first items at the front */
	uint32_t rq_front_pops;	  /* RUNQ: front pops since an older one */

	/* idle coordination */
	_Atomic uint64_t idle_mask;
	_Atomic int tk_holder;		/* -1: no timekeeper */
	_Atomic uint64_t tk_armed;	/* deadline the timekeeper sleeps to */
	_Atomic uint64_t next_deadline; /* earliest timer, UINT64_MAX none */
	struct smarm__parker parkers[SMARM__MAX_WORKERS];

	/* timers (TIMERS lock) */
	smarm__lock_t tm_lock;
	struct smarm__timer_ent *tm_heap;
	uint32_t tm_len, tm_cap;
	uint64_t tm_seq;
	struct smarm__timed_call **tm_map; /* open addressing by id */
	uint32_t tm_map_cap, tm_map_used;

	/* stack pool (SLOT rank) */
	smarm__lock_t pool_lock;
	void **pool;
	uint32_t pool_len;
	/* dense stacks (pool_lock; see stack.c) */
	void *dn_free;	  /* free default dense stacks, linked through
			     their canary words */
	char *dn_chunks;  /* every chunk, linked through its base */
	char *dn_carve;	  /* chunk being carved, or NULL */
	uint32_t dn_next; /* next uncarved stack of dn_carve */
	uint32_t dn_per;  /* stacks per chunk */
	_Atomic int64_t stk_guarded; /* guarded stacks mapped (any owner) */
	_Atomic int64_t stk_dense;   /* dense stacks attached to actors */
	_Atomic int64_t stk_shrinks; /* park-path shrinks, all actors */

	/* run state */
	_Atomic int64_t live;
	_Atomic int running;
	_Atomic uint64_t spawned; /* spawns outside any worker (the root) */
	uint64_t spawned_w[SMARM__MAX_WORKERS]; /* spawns by actors on worker
						   i; only worker i writes,
						   never reset */
	_Atomic int stopping;	     /* the root ended: stop everything */
	_Atomic int scanners;	     /* idle workers parked with a slot-scan
					deadline (see steal_stale_slots) */
	_Atomic int workers_started; /* workers of the current run */
	uint64_t root;		     /* root pid id */
	int root_how;
	intptr_t root_reason;
	struct smarm__worker workers[SMARM__MAX_WORKERS];

	/* preemption monitor (preempt.c) */
	pthread_t mon_thread;
	bool mon_running;
	_Atomic uint32_t mon_stop; /* futex word: 1 ends the monitor */
	_Atomic uint64_t pre_signals;

	/* subsystems (node.c): fixed at open */
	const struct smarm__subsys *subs[SMARM__SUB_MAX]; /* or NULL */
	void *sub_state[SMARM__SUB_MAX]; /* each one's per-node state */

	/*
	 * Idle policy (issue #3), kept after the older fields so their
	 * layout (and the hot paths' cache-line sharing) is unchanged.
	 * Configuration, immutable after open:
	 */
	bool wake_slot;		    /* SMARM_OPT_WAKE_SLOT: wakes use w->next */
	int max_spinners;	    /* workers_n / 2, at least 1 */
	uint64_t spin_cycles;	    /* SMARM_OPT_IDLE_SPIN_NS; 0 never spin */
	uint64_t spin_poll_cycles;  /* SMARM__SPIN_POLL_NS */
	uint64_t spin_grace_cycles; /* SMARM__SPIN_GRACE_NS */
	/* bit i: worker i spins before parking (atomic RMW by worker i) */
	_Atomic uint64_t spin_mask;
	struct smarm__wstats wstats[SMARM__MAX_WORKERS];
};

/*
 * SMARM_NEVER(c): a condition believed impossible; asserts in debug
 * builds, and in release builds lets the caller recover or panic.
 */
#ifndef NDEBUG
#include <assert.h>
#define SMARM_NEVER(c) ((c) ? (assert(!#c), 1) : 0)
#else
#define SMARM_NEVER(c) __builtin_expect(!!(c), 0)
#endif
#ifndef NDEBUG
#define SMARM_ASSERT(c) assert(c)
#else
#define SMARM_ASSERT(c) ((void)0)
#endif

/* ---- TLS ---- */
extern __thread struct smarm__worker *smarm__tls_worker
	__attribute__((tls_model("initial-exec")));

static inline struct smarm__worker *smarm__worker(void)
{
	return smarm__tls_worker;
}

/* The running actor's slot, or NULL. Re-read after every switch point. */
static inline struct smarm__slot *smarm__current(void)
{
	struct smarm__worker *w = smarm__tls_worker;
	return w ? w->cur : NULL;
}

/* The pid of the actor in slot s (valid while s is occupied). */
static inline uint64_t smarm__slot_pid(struct smarm__slot *s)
{
	return smarm__pid_make(SMARM__W_GEN(atomic_load_explicit(
				       &s->word, memory_order_relaxed)),
			       s->index);
}

/* ---- slots (slot.c) ---- */

/*
 * Slab geometry: segment s holds SEG_BASE << s slots and starts at index
 * SEG_BASE * (2^s - 1), so index -> segment is a count-leading-zeros.
 */
static inline uint32_t smarm__seg_first(uint32_t s)
{
	return SMARM__SEG_BASE * ((1u << s) - 1u);
}

static inline uint32_t smarm__seg_of(uint32_t idx)
{
	return 63u -
	       (uint32_t)__builtin_clzll((uint64_t)idx / SMARM__SEG_BASE + 1);
}

/* The slot at idx, or NULL. */
static inline struct smarm__slot *smarm__slot_at(struct smarm_node *n,
						 uint32_t idx)
{
	uint32_t s;
	struct smarm__slot *seg;
	if (idx >= atomic_load_explicit(&n->nslots, memory_order_acquire))
		return NULL;
	s = smarm__seg_of(idx);
	seg = atomic_load_explicit(&n->segs[s], memory_order_acquire);
	return seg ? &seg[idx - smarm__seg_first(s)] : NULL;
}
int smarm__slot_alloc(struct smarm_node *n, uint32_t *idx);
void smarm__slot_free(struct smarm_node *n, uint32_t idx);
void smarm__slot_install(struct smarm_node *n, struct smarm__slot *s,
			 smarm_actor_cb fn, void *arg, uint64_t parent,
			 const struct smarm_spawn_opts *opts, bool joinable);
void smarm__slot_reclaim(struct smarm__slot *s, struct smarm__exit *dead);
void smarm__exit_release(struct smarm__exit *dead);
struct smarm__slot *smarm__slot_live(struct smarm_node *n, uint64_t pid);
void smarm__slots_fini(struct smarm_node *n);

uint32_t smarm__begin_wait(struct smarm__slot *s);
void smarm__clear_notify(struct smarm__slot *s);
void smarm__retire_wait(struct smarm__slot *s);
int smarm__word_unpark(struct smarm__slot *s, uint32_t gen, bool any,
		       uint32_t epoch);

/* ---- scheduling (sched.c) ---- */
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
void smarm__unpark_any(struct smarm_node *n, uint64_t pid);
void smarm__park(struct smarm__slot *s);
void smarm__yield(struct smarm__slot *s);
bool smarm__other_work(struct smarm__worker *w);
void smarm__wake_one_if_idle(struct smarm_node *n);
void smarm__wake_all(struct smarm_node *n);
void smarm__timer_note(struct smarm_node *n, uint64_t deadline);
int smarm__run(struct smarm_node *n, smarm_actor_cb root, void *arg);

/* ---- actors (actor.c) ---- */
int smarm__spawn(struct smarm_node *n, struct smarm__slot *parent,
		 uint64_t *out, smarm_actor_cb fn, void *arg,
		 const struct smarm_spawn_opts *opts, bool joinable);
void smarm__finalize(struct smarm__worker *w, struct smarm__slot *s);
void smarm__terminate(struct smarm__slot *s, int how, intptr_t code)
	__attribute__((noreturn));
void smarm__terminate_ex(struct smarm__slot *s, const struct smarm__exit *ex)
	__attribute__((noreturn));
void smarm__terminate_stopped(struct smarm__slot *s) __attribute__((noreturn));
void smarm__exit_hooks_run(struct smarm__slot *s);
int smarm__request_stop(struct smarm_node *n, uint64_t pid,
			const struct smarm__stop_req *req);
int smarm__actor_ext_attach(struct smarm__slot *s, int id, void *state);
void *smarm__actor_ext_get(const struct smarm__slot *s, int id);
void *smarm__actor_ext_detach(struct smarm__slot *s, int id);
void smarm__stop_all(struct smarm_node *n);
void smarm__release_unjoined(struct smarm_node *n);
void smarm__actor_main(struct smarm__slot *s) __attribute__((noreturn));
int smarm__join(struct smarm_node *n, struct smarm__slot *me, uint64_t pid,
		int *how, intptr_t *reason);
int smarm__detach(struct smarm_node *n, uint64_t pid);
int smarm__cleanup_push(struct smarm__slot *s, smarm_cleanup_cb fn, void *arg);
int smarm__cleanup_pop(struct smarm__slot *s, bool execute);
void smarm__switch_out(struct smarm__slot *s, int intent);

/* A pending stop ends the actor here (a safe point). */
static inline void smarm__observe_stop(struct smarm__slot *s)
{
	if (__builtin_expect(
		    atomic_load_explicit(&s->stop, memory_order_relaxed), 0) &&
	    !s->exiting)
		smarm__terminate_stopped(s);
}

/*
 * Yield if the timeslice is spent (a safe point). The slice starts at the
 * first check after a resume rather than at the resume itself: reading the
 * cycle counter costs 12-24 ns in this VM, too much for every switch.
 */
static inline void smarm__check_slice(struct smarm__slot *s)
{
	struct smarm__worker *w = smarm__tls_worker;
	uint64_t now;
	if (__builtin_expect(s->preempt_pending, 0)) {
		/* The monitor found the slice spent where it could not act. */
		s->preempt_pending = 0;
		smarm__yield(s);
		return;
	}
	now = smarm__cycles_fast();
	if (w->slice_start == 0)
		w->slice_start = now;
	else if (__builtin_expect(now - w->slice_start > w->node->slice_cycles,
				  0))
		smarm__yield(s);
}

/* ---- stacks (stack.c, stackdiag.c) ---- */
#define SMARM__SHRINK_THRESHOLD (256u * 1024u) /* sp - hwm to shrink */
#define SMARM__SHRINK_COOLDOWN 64u	       /* parks between shrinks */
#define SMARM__RECYCLE_RETAIN (64u * 1024u)    /* kept resident on recycle */

int smarm__stack_acquire(struct smarm_node *n, struct smarm__slot *s);
void smarm__stack_release(struct smarm_node *n, struct smarm__slot *s);
void smarm__stack_pool_fini(struct smarm_node *n);
void smarm__stack_cache_flush(struct smarm_node *n, struct smarm__worker *w);
void smarm__stack_node_init(struct smarm_node *n);
void smarm__stack_shrink(struct smarm_node *n, struct smarm__slot *s);
void smarm__stack_dense_verify(struct smarm__slot *s);
int smarm__stack_info(struct smarm_node *n, uint64_t pid, int key,
		      int64_t *out);
bool smarm__stack_retain_range(size_t size, size_t retain, size_t page,
			       size_t *len);
bool smarm__stack_shrink_range(uintptr_t hwm, uintptr_t sp, size_t page,
			       uintptr_t *lo, size_t *len);
void smarm__stackdiag_install(void);
enum { SMARM__FAULT_FOREIGN = 0, SMARM__FAULT_GUARD, SMARM__FAULT_OVERSHOOT };
int smarm__stackdiag_classify(uintptr_t addr, uintptr_t base, size_t guard,
			      size_t reserve, uintptr_t *below);

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
	if (parks != UINT32_MAX)
		__atomic_store_n(&s->stk_parks, parks + 1, __ATOMIC_RELAXED);
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

/* ---- timers (timer.c) ---- */
int smarm__timer_sleep(struct smarm_node *n, uint64_t deadline,
		       struct smarm__slot *me, uint32_t epoch);
void smarm__timers_fire(struct smarm_node *n, bool try_only);
bool smarm__timers_due(struct smarm_node *n);
uint64_t smarm__timers_peek(struct smarm_node *n);
void smarm__timers_clear(struct smarm_node *n);
void smarm__timers_fini(struct smarm_node *n);
int smarm__timer_call_after(struct smarm_node *n, uint64_t delay_ns,
			    void (*fire)(void *, void *),
			    void (*drop)(void *, void *), void *ctx,
			    const void *payload, size_t len, uint64_t *id);
int smarm__timer_cancel(struct smarm_node *n, uint64_t id);

/*
 * now + ns, saturating: a huge timeout means "practically never", not a
 * wrapped deadline in the past. UINT64_MAX stays reserved for "no timer".
 */
static inline uint64_t smarm__deadline_after(uint64_t ns)
{
	uint64_t now = smarm__clock_ns();
	return ns >= UINT64_MAX - 1 - now ? UINT64_MAX - 1 : now + ns;
}

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

/* ---- preemption (preempt.c) ---- */
void smarm__preempt_setup(void);
void smarm__monitor_start(struct smarm_node *n);
void smarm__monitor_stop(struct smarm_node *n);
void smarm__pin_push(struct smarm__worker *w, struct smarm__slot *s);
struct smarm__slot *smarm__pin_take(struct smarm__worker *w, bool only_due);

/*
 * Runtime code that calls user code (destructors, drop callbacks) from
 * actor context brackets it so that no async preemption or stop lands
 * inside a runtime operation. s may be NULL (not an actor).
 */
static inline void smarm__nopreempt_enter(struct smarm__slot *s)
{
	if (s != NULL)
		s->rt_nopreempt++;
}

static inline void smarm__nopreempt_leave(struct smarm__slot *s)
{
	if (s != NULL)
		s->rt_nopreempt--;
}

/* ---- node and subsystems (node.c) ---- */
int smarm__subsys_open(struct smarm_node *n, const struct smarm_config *cfg,
		       const struct smarm__subsys *const table[SMARM__SUB_MAX]);
void smarm__subsys_close(struct smarm_node *n);
void smarm__subsys_run_start(struct smarm_node *n);
void smarm__subsys_run_end(struct smarm_node *n);
int smarm__subsys_get_stat(const struct smarm_node *n, int stat, int64_t *out);
int64_t smarm__config_int(const struct smarm_config *cfg, int opt);

/* The per-node state of subsystem id (NULL if it keeps none). */
static inline void *smarm__node_sub(const struct smarm_node *n, int id)
{
	return n->sub_state[id];
}

/* ---- misc ---- */
uint64_t smarm__ns_to_cycles(uint64_t ns);

#endif /* SMARM_CORE_H */
