/* SPDX-License-Identifier: MIT */
/*
 * node.h - the node (struct smarm_node): its configuration, slot table,
 * run queue, idle coordination, timers, stack pool, run state, workers
 * and subsystems; and the configuration and spawn-option objects. The
 * layout is private to core/: the layers above hold a node only as a
 * pointer and reach their own state through subsys.h.
 *
 * Ownership: a node belongs to its opener until smarm_node_close; it owns
 * everything it points to. Workers exist only during a run.
 * Locking: the lock guarding each group of fields is named beside it
 * (ranks in lock.h).
 * See: docs/architecture/node.md.
 */
#ifndef SMARM_CORE_NODE_H
#define SMARM_CORE_NODE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smarm/smarm.h"
#include "causal.h"
#include "lock.h"
#include "ring.h"
#include "sched.h"
#include "subsys.h"

struct smarm__slot;
struct smarm__astat;
struct smarm__timer_ent;
struct smarm__timed_call;

struct smarm__parker {
	uint32_t state; /* 0 empty, 1 parked, 2 notified, 3 polling
			   (atomic; sched.c) */
	char pad[60];
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
	uint64_t glocks;    /* node-wide lock acquisitions (smarm__glock) */
	uint64_t expedited; /* queued actors a stop moved ahead */
} __attribute__((aligned(64)));

/*
 * Spawns by actors running on one worker and finalizes done there, since
 * the node was opened (never reset: their difference, summed over the
 * workers, is the live count, smarm__live). Only worker i writes its
 * line, with plain stores; one cache line each.
 */
struct smarm__wcount {
	uint64_t spawned;
	uint64_t ended; /* release stores: an end is counted last */
	/* the layers' gauges, this worker's part (subsys.h; relaxed) */
	int64_t gauge[SMARM__GAUGES];
	uint64_t ref_next, ref_end; /* owner only: its block of refs */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct smarm__wcount) == 64,
	       "a worker's counts outgrew their cache line");

/* Config storage: one value per option id (SMARM_OPT_MAP, smarm.h); every
 * id is below it (core_api.c checks at compile time). */
#define SMARM__OPT_SLOTS 32

/* Bytes of a socket path, NUL included (sockaddr_un's sun_path). */
#define SMARM__OBS_PATH_MAX 108
/* Bytes of a trace file's path, NUL included (smarm_config_set_trace). */
#define SMARM__TRACE_PATH_MAX 1024

struct smarm_config {
	int64_t opt[SMARM__OPT_SLOTS]; /* by SMARM_OPT_*; -1: derived */
	smarm_log_fn log_fn;	       /* smarm_config_set_logger */
	void *log_arg;
	char obs_socket[SMARM__OBS_PATH_MAX];	 /* smarm_config_set_obs_socket;
						    "": none */
	char trace_path[SMARM__TRACE_PATH_MAX];	 /* smarm_config_set_trace;
						    "": none */
	int trace_format;			 /* SMARM_TRACE_* */
	char causal_path[SMARM__TRACE_PATH_MAX]; /* smarm_config_set_causal;
						    "": none */
	uint64_t causal_exp_ns;			 /* 0: the default */
	char causal_site[SMARM__CAUSAL_NAME_MAX]; /* fixed site; "": any */
	int causal_pct;				  /* fixed speedup; -1: any */
	int causal_scope; /* SMARM_CAUSAL_SCOPE_*; -1: SMARM_CAUSAL_SCOPE */
};

/* smarm_config_set_causal's bounds on an experiment's length. */
#define SMARM__CAUSAL_EXP_MIN_NS 1000000ull	/* 1 ms */
#define SMARM__CAUSAL_EXP_MAX_NS 60000000000ull /* 60 s */

struct smarm_spawn_opts {
	size_t reserve;	     /* 0: node default */
	size_t guard;	     /* 0: node default */
	uint8_t mode_set;    /* mode below was set */
	uint8_t mode;	     /* SMARM_STACK_* */
	uint8_t link_set;    /* link below was set */
	uint8_t link;	     /* SMARM_OPT_LINK: link the child to its spawner */
	uint8_t contain_set; /* contain below was set */
	uint8_t contain;     /* SMARM_OPT_CONTAIN_FAULTS */
	uint8_t so_ext;	     /* ext below holds a request (subsys.h ss_spawn) */
	struct smarm__spawn_ext ext; /* for the layers above the core */
};

/*
 * Stacks of one shape carved from chunk mappings (stack.c): the node's
 * default dense stacks, and its default guarded stacks where guard
 * regions work. The geometry is set at open; pool_lock guards the rest.
 */
struct smarm__chunk; /* a chunk's record (stack.c) */
struct smarm__carve {
	size_t cv_stride; /* from one stack's base to the next */
	size_t cv_first;  /* chunk offset of stack 0's base */
	size_t cv_link;	  /* offset of a free stack's link word from
			     its base */
	size_t cv_guard;  /* guard region at each stack's base, or 0 */
	size_t cv_len;	  /* bytes per chunk mapping */
	uint32_t cv_per;  /* stacks per chunk */
	uint32_t cv_next; /* next uncarved stack of cv_carve */
	char *cv_carve;	  /* chunk being carved, or NULL */
	struct smarm__chunk *cv_spare;	/* mapped, not carved from yet */
	struct smarm__chunk *cv_chunks; /* every chunk of this kind */
	void *cv_free;	    /* free stacks (bases), linked through their
			       link words */
	uint64_t cv_nfree;  /* stacks on cv_free */
	uint64_t cv_carved; /* stacks carved since open */
};

struct smarm__log;

struct smarm_node {
	/* the logger (log.c): set at open, its thread made on first use */
	struct smarm__log *log;
	/* configuration (immutable after open) */
	int workers_n;
	uint32_t max_actors;
	size_t stk_reserve; /* page-rounded default */
	size_t stk_guard;   /* page-rounded default */
	int stk_mode;	    /* default SMARM_STACK_* of a spawn */
	int64_t stk_budget; /* AUTO: most guarded stacks (stk_guarded) at
			       once, unless a freed one is at hand */
	int stk_guards;	    /* SMARM__GUARDS_* (arch.h): how the guards of
			       default guarded stacks are installed; NONE:
			       those stacks have mappings of their own */
	uint32_t pool_cap;
	uint64_t slice_cycles;
	uint64_t slice_ns;
	bool preempt_async;	/* the monitor signals overrunning actors */
	bool preempt_move;	/* a preempted actor may change workers
				   (preempt.c INV-P7) */
	uint8_t contain_faults; /* default SMARM_OPT_CONTAIN_FAULTS (0-2) */
	uint64_t pk_ns;		/* SMARM_OPT_STACK_RELEASE_NS (parkstk.c) */
	uint64_t async_ns;	/* run time that counts as an overrun */

	/* slot table: max_actors slots reserved (region.h), nslots usable */
	struct smarm__slot *slots; /* set before nslots is first published */
	size_t slots_reserved;	   /* bytes reserved at slots (free_lock) */
	size_t slots_committed;	   /* bytes read/write (free_lock) */
	/* per-actor statistics (slot.h smarm__astat), beside the slots:
	 * NULL unless astat_on; reserved and committed with them */
	struct smarm__astat *astats;
	size_t astats_reserved, astats_committed; /* bytes (free_lock) */
	bool astat_on; /* SMARM_OPT_ACTOR_STATS (immutable after open) */
	bool obs_on;   /* astat_on or trace, set at each run's start: the
			  one flag a wake tests (sched.c) */
	_Atomic uint32_t nslots;
	/*
	 * Each group below that some worker writes in the normal course
	 * starts a cache line of its own (_Alignas(64)), so that writing it
	 * does not take a line that another group's readers poll: the run
	 * state (workers_started, stopping), read at every pick and spawn,
	 * used to share one with the ended-unjoined count, written at every
	 * joinable actor's end and join (a per-worker gauge since 0.5.x),
	 * and next_deadline (read at every pick) one with idle_mask.
	 */
	_Alignas(64) smarm__lock_t free_lock; /* SLOT rank: free_stk, nfree,
						 growth */
	uint64_t free_lock_n; /* its acquisitions this run (smarm__glock) */
	uint32_t *free_stk;   /* free slot indices, a stack (top: newest) */
	uint32_t free_cap;    /* its room: every slot of the table */
	uint32_t nfree;
	/* threads reaching into worker-owned state (membar.h's handshake:
	 * a slot-cache steal or count, slot.c; the monitor's wake-slot
	 * scan, sched.c); read by every owner's access */
	_Atomic uint32_t own_visitors;

	/* run queue (RUNQ lock): ring of pid ids, capacity >= nslots */
	_Alignas(64) smarm__lock_t rq_lock;
	uint64_t rq_lock_n;	  /* its acquisitions this run (smarm__glock) */
	struct smarm__ring rq;	  /* rg_len is read anywhere (a snapshot) */
	_Atomic uint64_t rq_pops; /* pops ever (rq_lock writes) */
	_Atomic uint32_t rq_woken;    /* about how many woken actors are in
					 rq (rq_lock writes; sched.c) */
	uint32_t rq_touched;	      /* rq_lock: the buffer's entries below
					 this index have had their pages
					 written (sched.c, rq_touch_unlock) */
	uint32_t rq_touch_at;	      /* rq_lock: a push whose tail reaches
					 this index writes the next pages;
					 UINT32_MAX: all written */
	_Atomic uint32_t rq_touching; /* pushers writing pages ahead
					 outside rq_lock: a growth frees
					 the old buffer once it is 0 */

	/* idle coordination */
	_Alignas(64) _Atomic uint64_t idle_mask;
	_Atomic int tk_holder;	   /* -1: no timekeeper */
	_Atomic uint64_t tk_armed; /* deadline the timekeeper sleeps to */
	/* an idle worker's fd poll (smarm__netpoll_install, sched.c) */
	const struct smarm__netpoll *np_ops; /* set before np_arg */
	void *_Atomic np_arg;		     /* NULL: none installed */
	_Atomic int np_owner;	 /* the worker polling, NP_THREAD, or -1 */
	_Atomic uint32_t np_seq; /* polls taken by workers */
	_Alignas(64) _Atomic uint64_t next_deadline; /* earliest timer,
							UINT64_MAX none */
	_Alignas(64) struct smarm__parker parkers[SMARM__MAX_WORKERS];

	/* timers (TIMERS lock) */
	_Alignas(64) smarm__lock_t tm_lock;
	uint64_t tm_lock_n; /* its acquisitions this run (smarm__glock) */
	struct smarm__timer_ent *tm_heap;
	uint32_t tm_len, tm_cap;
	uint64_t tm_seq;
	struct smarm__timed_call **tm_map; /* open addressing by id */
	uint32_t tm_map_cap, tm_map_used;

	/* stack pool (STACK rank) */
	_Alignas(64) smarm__lock_t pool_lock;
	uint64_t pool_lock_n; /* its acquisitions this run (smarm__glock) */
	void **pool;
	uint32_t pool_len;
	/* stacks carved from chunks (pool_lock; see stack.c) */
	struct smarm__carve stk_dn;  /* dense, default reserve */
	struct smarm__carve stk_gd;  /* guarded, default shape, unless
					stk_guards is NONE */
	struct smarm__carve stk_dp;  /* dense, default reserve, of actors
					that give their stack back while
					parked: tops on page boundaries, no
					page shared (parkstk.c) */
	_Atomic int64_t stk_guarded; /* guarded stacks that exist: attached,
					cached, pooled or free in a chunk */
	_Atomic int64_t stk_dense;   /* dense stacks attached to actors */
	_Atomic int64_t stk_shrinks; /* park-path shrinks, all actors */
	_Atomic int64_t faults_contained;  /* SMARM_STAT_FAULTS_CONTAINED */
	_Atomic int64_t hibernations;	   /* SMARM_STAT_HIBERNATIONS */
	_Atomic int64_t dist_info_dropped; /* SMARM_STAT_DIST_INFO_DROPPED */
	_Atomic int64_t pk_releases;	   /* SMARM_STAT_STACK_RELEASES */
	_Atomic int64_t pk_out;		   /* SMARM_STAT_STACKS_RELEASED */
	/* parked actors due a stack release (parkstk.c): a FIFO by park
	 * time that the monitor sweeps; pk_lock (TABLE rank) guards it */
	smarm__lock_t pk_lock;
	struct smarm__ring pk_fifo;

	/* run state */
	_Alignas(64) _Atomic int running;
	_Atomic uint64_t spawned;    /* spawns outside any worker (the root) */
	_Atomic int stopping;	     /* SMARM__STOPPING_*: the root ended,
					or smarm_node_stop was called */
	_Atomic int workers_started; /* workers of the current run */
	uint64_t root;		     /* root pid id */
	int root_how;
	intptr_t root_reason;
	struct smarm__worker workers[SMARM__MAX_WORKERS];

	/* preemption monitor (preempt.c) */
	pthread_t mon_thread;
	bool mon_running;
	_Atomic uint32_t mon_stop;  /* futex word: 1 ends the monitor */
	_Atomic uint32_t mon_deep;  /* SMARM__MON_* (preempt.h): how long
				       the monitor naps; a poke of that
				       level or lower clears it and wakes
				       it */
	_Atomic uint64_t mon_until; /* clock ns its nap ends at (0: none);
				       an earlier timer clears it and wakes
				       it (smarm__monitor_timer) */
	_Atomic uint64_t pre_signals;

	_Atomic uint64_t ext_late;	/* exits resumed to hand over state
					   attached late (actor.c INV-3) */
	_Atomic uint32_t test_ext_fail; /* test-only: this many per-actor
					   state blocks or blocks of rooms
					   fail to allocate (actor.c
					   ext_test_fail) */

	/*
	 * The node's serial, 1..255, unique among the open nodes (a pid
	 * carries it, slot.h). Here, after the older fields, so that their
	 * layout (and the hot paths' cache-line sharing) is unchanged.
	 */
	uint8_t serial;

	/* subsystems (node.c): fixed at open */
	const struct smarm__subsys *subs[SMARM__SUB_MAX]; /* or NULL */
	void *sub_state[SMARM__SUB_MAX];   /* each one's per-node state */
	uint32_t ext_room[SMARM__SUB_MAX]; /* sized: room offset in a slot's
					      block of rooms, else 0 */
	uint32_t ext_bytes;		   /* one block of rooms (x_rooms) */
	uint8_t spawn_hooks;		   /* bit id: subs[id] has ss_spawn */
	uint8_t trap_hooks;		   /* bit id: subs[id] has ss_trap */
	uint8_t ext_sized;		   /* bit id: subs[id] is sized */

	/*
	 * Idle policy, kept after the older fields so their
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
	struct smarm__wcount wcount[SMARM__MAX_WORKERS];

	/*
	 * Root exit (actor.c), after the older fields. link_default is
	 * configuration (SMARM_OPT_LINK); the orphan table is guarded by
	 * orph_lock (TABLE rank) and exists only from a root exit to the
	 * run's end: live actors whose parent was alive at the sweep (or
	 * that a live parent spawned since), by parent, so that each gets
	 * its shutdown when its parent ends.
	 */
	bool link_default;
	smarm__lock_t orph_lock;
	struct smarm__orphan *orph;  /* entries; NULL: none */
	uint32_t orph_len, orph_cap; /* entries used, allocated */
	uint32_t *orph_heads;	     /* buckets: entry index + 1, 0 none */
	uint32_t orph_nb;	     /* buckets (a power of two) */

	/* Interned label texts (actor.c: a behaviour's label, one copy per
	 * distinct text), guarded by lbl_lock (TABLE rank), freed with the
	 * slot table (smarm__labels_fini). */
	smarm__lock_t lbl_lock;
	struct smarm__label_text *lbl_texts;

	/* The gauges' and refs' shared parts, for threads that are not
	 * the node's workers (node.c; after the older fields). */
	_Atomic int64_t gauge_shared[SMARM__GAUGES];
	_Atomic uint64_t ref_blocks; /* refs handed out in blocks so far */

	/* The tracer's rings (trace.h), or NULL: the node does not trace.
	 * Set at open (obs/trace.c), before any run; freed at close. */
	struct smarm__trace *trace;

	/* The causal profiler's state (causal.h): sites and points always,
	 * the hooks only if cz_on (set at open by obs/causal.c). */
	struct smarm__causal *causal;
};

/* n->stopping: what the end of the run does to the actors still alive. */
enum {
	SMARM__STOPPING_NO = 0,	      /* the run goes on */
	SMARM__STOPPING_ROOT = 1,     /* root exit: forest roots shut down */
	SMARM__STOPPING_KILL_ALL = 2, /* smarm_node_stop: all are killed */
};

/* Ends summed over the workers, acquire loads (core.h INV-4). */
static inline uint64_t smarm__live_ends(struct smarm_node *n)
{
	uint64_t ended = 0;
	for (int i = 0; i < n->workers_n; i++)
		ended += __atomic_load_n(&n->wcount[i].ended, __ATOMIC_ACQUIRE);
	return ended;
}

/* Spawns summed: the root's and other threads', then the workers'. */
static inline uint64_t smarm__live_spawns(struct smarm_node *n)
{
	uint64_t spawned =
		atomic_load_explicit(&n->spawned, memory_order_acquire);
	for (int i = 0; i < n->workers_n; i++)
		spawned += __atomic_load_n(&n->wcount[i].spawned,
					   __ATOMIC_ACQUIRE);
	return spawned;
}

/*
 * Actors alive: spawns minus ends, summed over the per-worker counts
 * (core.h INV-4). The ends are read first, with acquire loads, then the
 * spawns: an end a reader counts was released after its actor's spawn
 * was counted, so the spawns read later include it. So the sum is 0 only
 * if every actor counted so far has ended, and then none can spawn
 * another (an actor's spawns come before its end). It is not a snapshot:
 * it also counts every spawn made between the two halves (see
 * smarm__live_read). Summed on every read, so the spawn and exit paths
 * write no shared line; the idle paths and the run's end use this one.
 */
static inline int64_t smarm__live(struct smarm_node *n)
{
	uint64_t ended = smarm__live_ends(n);
	return (int64_t)(smarm__live_spawns(n) - ended);
}

#define SMARM__LIVE_READ_TRIES 4

/*
 * The live count for a reader (SMARM_STAT_LIVE_ACTORS). smarm__live
 * counts the spawns made while it reads: a reader whose thread lost the
 * CPU between the two halves (a time slice, 4-15 ms on a loaded machine)
 * counted every spawn of the other workers meanwhile, 5000-37000 in a
 * spawn tree that never had 150 alive. So the spawns are also summed
 * before the ends: if the two sums agree, no spawn happened while the
 * ends were read, and the count is the exact live count at some moment
 * of the read (only ends happened, one at a time). Otherwise it tries
 * again, SMARM__LIVE_READ_TRIES times at most, and returns the smallest
 * count: each is at least the live count at its last end load, so the
 * result never misses an actor alive throughout the read, and counts
 * too many only if every try was overtaken by spawns.
 */
static inline int64_t smarm__live_read(struct smarm_node *n)
{
	int64_t best = INT64_MAX;
	for (int t = 0; t < SMARM__LIVE_READ_TRIES; t++) {
		uint64_t before = smarm__live_spawns(n);
		uint64_t ended = smarm__live_ends(n);
		uint64_t after = smarm__live_spawns(n);
		int64_t live = (int64_t)(after - ended);
		if (after == before)
			return live;
		if (live < best)
			best = live;
	}
	return best;
}

/*
 * The node's shared locks (free_lock, rq_lock, pool_lock, tm_lock) are
 * taken through smarm__glock / smarm__gtrylock, which count every
 * acquisition for SMARM_STAT_GLOBAL_LOCKS in the counter declared beside
 * the lock (*cnt): written under the lock, on the cache line the lock
 * word already brought over, so counting costs a load and a store and no
 * extra line transfer. The statistics' own readers lock uncounted.
 */
static inline void smarm__glock(smarm__lock_t *l, uint64_t *cnt, int rank)
{
	smarm__lock(l, rank);
	__atomic_store_n(cnt, *cnt + 1, __ATOMIC_RELAXED);
}

static inline bool smarm__gtrylock(smarm__lock_t *l, uint64_t *cnt, int rank)
{
	if (!smarm__trylock(l, rank))
		return false;
	__atomic_store_n(cnt, *cnt + 1, __ATOMIC_RELAXED);
	return true;
}

#endif /* SMARM_CORE_NODE_H */
