/* SPDX-License-Identifier: MIT */
/*
 * slot.h - the slot: the per-actor record found by pid index, its packed
 * state word (gen<<32 | epoch<<8 | state), the table that holds slots,
 * and the exit record and stop request a tenant carries. Private to
 * core/: no layer above sees the slot layout.
 *
 * Ownership: the node owns the table; slots never move or go away before
 * the node is closed. A slot's tenant fields belong to its owner (the
 * spawner before publish; the running actor; the scheduler holding the
 * claim), except the fields marked "cold", which need the slot's cold
 * lock.
 * Invariants: stated in slot.c (the word) and actor.c (the tenancy).
 * See: docs/architecture/slots.md.
 */
#ifndef SMARM_CORE_SLOT_H
#define SMARM_CORE_SLOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "smarm/smarm.h"
#include "assert.h"
#include "lock.h"
#include "node.h"
#include "subsys.h"

struct smarm__wait;
struct smarm__ext;

/* Slots the table's first growth adds; each later one doubles it. */
#define SMARM__SLOTS_FIRST 256u

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
/* w's generation, its epoch plus one (wrapping in its 24 bits), state st. */
#define SMARM__W_NEXT(w, st)                                                   \
	(((w)&0xffffffff00000000u) | (((w) + 0x100u) & 0xffffff00u) |          \
	 (uint64_t)(st))

/*
 * A pid: gen<<32 | node<<24 | index. The generation tells tenants of a
 * slot apart, the node serial (node.h) nodes in a process, and the index
 * is the slot's: 24 bits, which is why SMARM_OPT_MAX_ACTORS stops at
 * 2^24.
 */
#define SMARM__PID_IDX_BITS 24
#define SMARM__PID_IDX_MAX (UINT32_C(1) << SMARM__PID_IDX_BITS)

static inline uint64_t smarm__pid_make(uint32_t gen, uint32_t node,
				       uint32_t idx)
{
	return ((uint64_t)gen << 32) |
	       ((uint64_t)(node & 0xffu) << SMARM__PID_IDX_BITS) | idx;
}
#define SMARM__PID_GEN(id) ((uint32_t)((id) >> 32))
#define SMARM__PID_NODE(id) ((uint32_t)((id) >> SMARM__PID_IDX_BITS) & 0xffu)
#define SMARM__PID_IDX(id) ((uint32_t)(id) & (SMARM__PID_IDX_MAX - 1))

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
 * s->exiting. ENDED: the exit hooks have begun, so a Down or an exit
 * signal of this tenant may be out: smarm_actor_is_alive says false from
 * here (set by the actor, before any hook; read by others with relaxed
 * loads, ordered by whatever carried the Down to them).
 */
enum {
	SMARM__EXITING_CLEANUP = 1,
	SMARM__EXITING_ENDED = 2,
};

/*
 * s->stk_mode: the low bits a SMARM_STACK_* mode, the high ones flags
 * (SMARM__STK_FLAGS) that send the stack's acquire (stack.c) down its
 * one rare branch. From spawn to the first acquire it is the spawn's
 * request, copied from its options or the node's default in one store:
 * SMARM__STK_MODE_NODE asks for the node's mode, SMARM__STK_REL_SET
 * says SMARM__STK_REL (SMARM_OPT_STACK_RELEASE) was chosen, else the
 * node's applies; the acquire resolves it into a plain mode and
 * park_fl RELEASE, so a spawn without the option pays nothing for it.
 * SMARM__STK_OUT marks a parked actor whose saved sp is in its
 * parked-stack record (parkstk.c: held for a release, or released): its
 * next pick comes to the acquire, which brings the stack back.
 */
#define SMARM__STK_MODE_MASK 0x03u
#define SMARM__STK_REL_SET 0x10u
#define SMARM__STK_MODE_NODE 0x20u
#define SMARM__STK_OUT 0x40u
#define SMARM__STK_REL 0x80u
#define SMARM__STK_FLAGS 0xf0u

/* s->park_fl. */
#define SMARM__PF_NOPARK 1u
#define SMARM__PF_RELEASE 2u

/* The most smarm mutexes a slot counts as held (mtx_held saturates). */
#define SMARM__MTX_HELD_MAX 63

struct smarm__slot {
	_Atomic uint64_t word;	 /* gen<<32 | epoch<<8 | state */
	void *sp;		 /* saved stack pointer while switched out */
	uintptr_t hwm;		 /* lowest sp ever saved (sampled high-water) */
	_Atomic uint8_t stop;	 /* SMARM__STOP_* requested (set under cold
				    lock; only ever grows) */
	uint8_t exiting;	 /* SMARM__EXITING_*: 0 alive; cleanups
				    running (stop not observed); ended */
	uint8_t preempt_pending; /* owner: a slice ended inside a
				    no-preempt region; yield at its end */
	uint8_t stk_mode;	 /* SMARM_STACK_*: a request (SMARM__STK_FLAGS,
				    above) until the stack is first
				    attached, then GUARDED/DENSE */
	uint32_t nopreempt;	 /* owner: smarm_preempt_disable depth */
	uint32_t rt_nopreempt;	 /* owner: runtime brackets around user
				    callbacks (smarm__nopreempt_enter) */
	uint8_t park_fl;	 /* SMARM__PF_* (below; in what was padding):
				    NOPARK, owner: parking refused (wait.c
				    WAIT-9); RELEASE: SMARM_OPT_STACK_RELEASE
				    for this tenant, set as its stack is
				    first acquired (stack.c), kept across a
				    hibernation. One byte, so that a park
				    tests both at once (wait.c) */
	uint8_t pin_fixed;	 /* its worker's: in the pinned FIFO after an
				    async preemption (INV-P1), not a yield
				    (in what was padding) */
	uint8_t wait_on;	 /* owner: SMARM__WON_*, what its next or
				    current park waits on, as its caller
				    said (smarm__wait_note; in padding) */
	uint8_t contain : 2;	 /* SMARM_OPT_CONTAIN_FAULTS for this tenant
				    (fault.c; in what was padding) */
	uint8_t mtx_held : 6;	 /* owner: smarm mutexes it holds, saturating
				    at SMARM__MTX_HELD_MAX (fault.c) */
	uintptr_t ret_pc;	 /* owner's thread: a patched return's real
				    address, 0: none (preempt.c INV-P5) */
	uintptr_t *ret_slot;	 /* owner's thread: the patched stack word */
	uint8_t joinable;	 /* cold: a join/detach is still owed */
	uint8_t has_joiner;	 /* cold: joiner_* is valid */
	_Atomic uint8_t ext_used; /* a subsystem attached state to this
				     tenant (actor.c INV-3) */
	uint8_t stop_how;	  /* cold: the strongest stop's SMARM_EXIT_*
				     (in what was padding) */
	uint32_t pid_lo;	  /* constant: node serial << 24 | own index,
				     the low half of every pid of this slot */
	uint32_t cl_len;	  /* cleanup handlers pushed */
	uint32_t cl_cap;	  /* capacity of cl (kept across tenants) */
	smarm_actor_cb fn;	  /* body */
	void *arg;
	uint64_t parent;    /* parent pid id (0: the run itself) */
	void *stk_base;	    /* mapping base (guard first); NULL: none yet */
	size_t stk_reserve; /* requested, page-rounded usable bytes */
	size_t stk_guard;   /* requested, page-rounded guard bytes; 0: dense */
	struct smarm__cleanup *cl; /* cleanup stack, newest last */
	struct smarm__wait *wait;  /* owner: the wait parked in (wait.c
				      WAIT-4), or NULL */
	struct smarm__exit exit;   /* valid once exiting (the actor's own) */
	uint64_t stop_from;	   /* cold: the strongest stop's requester */
	intptr_t stop_code;	   /* cold: and its code */
	struct smarm__ext *ext;	   /* cold: per-subsystem state; NULL until
				      first used, then kept across tenants */
	uint64_t joiner;	   /* cold: pid id of the joining actor */
	uint32_t joiner_epoch;	   /* cold */
	uint32_t tm_pos;	   /* TIMERS lock: heap index of this slot's
				      live wake entry, or SMARM__NO_INDEX */
	uint32_t pin_next;	   /* worker-local pinned FIFO link */
	smarm__lock_t cold;	   /* guards the fields marked cold */
	uint64_t pin_ticket;	   /* rq_pops value at which it is due */
	union {
		uint64_t pin_ticket_local; /* and its worker's local_picks
					      value (in the pinned FIFO) */
		uint64_t wait_target;	   /* owner, while parked with a
					      wait_on: the pid id or fd it
					      waits on; a pinned actor is
					      runnable, never parked */
	};
	_Atomic uint64_t waits; /* waits opened (owner writes): timer entries
				   compare it, so an entry outlives no wrap
				   of the 24-bit epoch */
	uint32_t stk_parks;	/* parks since the last shrink (saturating) */
	uint32_t stk_shrinks;	/* park-path shrinks of this actor's stack */
	uintptr_t run_frame;	/* owner: the runtime's frames lie at and
				   above it on the actor's stack, its own
				   code below (smarm__call_actor) */
} __attribute__((aligned(64))); /* lines of its own: its neighbours' owners
				   write their tails at every wait */
_Static_assert(sizeof(struct smarm__slot) == 256, "a slot is four lines");

/*
 * Per-actor statistics (SMARM_OPT_ACTOR_STATS): one line per slot, in a
 * table of their own beside the slot table (the same index, reserved and
 * committed with it, slot.c), made only when the node keeps them: a node
 * that does not pays no memory and one predictable branch per switch
 * (the slot itself has no room left: four lines, full). Reset by
 * smarm__slot_install. Times are cycle counts (smarm__cycles_fast);
 * introspection converts them to ns. Every field but as_enq is written
 * by the worker running the tenant only, with relaxed atomic stores of a
 * plain add (no read-modify-write instruction: one writer); as_enq by
 * whoever makes it runnable. Peeks read them lock-free: each is a
 * snapshot of itself.
 */
struct smarm__astat {
	uint64_t as_cpu;       /* cycles on a worker, switch-in to -out */
	uint64_t as_runs;      /* times switched in */
	uint64_t as_rqwait;    /* cycles runnable before it ran, summed */
	uint64_t as_enq;       /* when it last became runnable; 0: not
				  noted (a wake that found it running) */
	uint64_t as_msg_in;    /* elements it took from channels */
	uint64_t as_msg_out;   /* elements it sent on channels */
	uint32_t as_pre_safe;  /* slices that ended at a safe point */
	uint32_t as_pre_async; /* preemptions by the monitor's signal */
	uint64_t as_spare;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct smarm__astat) == 64, "a line per actor");

/* Add v to an owner-written counter (one writer: no locked add). */
#define SMARM__ASTAT_ADD(p, v)                                                 \
	__atomic_store_n((p), __atomic_load_n((p), __ATOMIC_RELAXED) + (v),    \
			 __ATOMIC_RELAXED)

/* The statistics line of slot s (n->astats set: n->astat_on). */
static inline struct smarm__astat *smarm__astat_of(struct smarm_node *n,
						   const struct smarm__slot *s)
{
	return n->astats + (s - n->slots);
}

/* The pid of the actor in slot s (valid while s is occupied). */
/* Whether s gives its parked stack back (SMARM_OPT_STACK_RELEASE, as
 * resolved when its stack was first acquired: parkstk.c). */
static inline bool smarm__pstk_on(const struct smarm__slot *s)
{
	return (s->park_fl & SMARM__PF_RELEASE) != 0;
}

static inline uint64_t smarm__slot_pid(struct smarm__slot *s)
{
	return ((uint64_t)SMARM__W_GEN(
			atomic_load_explicit(&s->word, memory_order_relaxed))
		<< 32) |
	       s->pid_lo;
}

/* The slot's own index in the table. */
static inline uint32_t smarm__slot_index(const struct smarm__slot *s)
{
	return SMARM__PID_IDX(s->pid_lo);
}

/* The slot at idx, or NULL beyond the table (one array: slot.c). */
static inline struct smarm__slot *smarm__slot_at(struct smarm_node *n,
						 uint32_t idx)
{
	/* Acquire: the slots below nslots are initialised (slot.c grow). */
	if (idx >= atomic_load_explicit(&n->nslots, memory_order_acquire))
		return NULL;
	return &n->slots[idx];
}

/*
 * The slot a pid names on node n, or NULL: a pid of another node (or
 * of a node closed since), or an index beyond the table. The generation
 * is for the caller to check, atomically with what it does. Every pid a
 * caller hands in is resolved through this; the runtime's own (wakes,
 * run queues, timers) use smarm__slot_at on the index directly.
 */
static inline struct smarm__slot *smarm__slot_of(struct smarm_node *n,
						 uint64_t pid)
{
	if (SMARM__PID_NODE(pid) != n->serial)
		return NULL;
	return smarm__slot_at(n, SMARM__PID_IDX(pid));
}

int smarm__slot_alloc(struct smarm_node *n, uint32_t *idx);
void smarm__slot_free(struct smarm_node *n, uint32_t idx);
void smarm__slot_cache_flush(struct smarm_node *n, struct smarm__worker *w);
uint32_t smarm__slots_free_count(struct smarm_node *n);
/*
 * Install a new tenant (actor.c INV-1): every per-tenant field is set
 * here and nowhere else. The slot is VACANT and the caller's until it
 * publishes QUEUED. Kept across tenants: index, word (the caller
 * publishes), the cleanup array (cl, cl_cap), the extension
 * block (ext, whose states every exit handed back), tm_pos and the
 * pinned-FIFO links (their owners keep them), waits, cold; and fields
 * that are written before they are read in every tenancy: the exit
 * record (written whole when the actor starts exiting; its payload was
 * cleared by the last reclaim) and stop_from/stop_code (written by the
 * request that raises the stop flag, read only when it was raised).
 */
static inline void smarm__slot_install(struct smarm_node *n,
				       struct smarm__slot *s, smarm_actor_cb fn,
				       void *arg, uint64_t parent,
				       const struct smarm_spawn_opts *opts,
				       bool joinable)
{
	atomic_store_explicit(&s->stop, SMARM__STOP_NONE, memory_order_relaxed);
	__atomic_store_n(&s->exiting, 0, __ATOMIC_RELAXED); /* is_alive reads */
	s->nopreempt = 0;
	s->rt_nopreempt = 0;
	s->park_fl = 0;
	s->preempt_pending = 0;
	s->ret_pc = 0;
	s->ret_slot = NULL;
	s->joinable = joinable;
	s->has_joiner = 0;
	s->cl_len = 0;
	s->fn = fn;
	s->arg = arg;
	s->parent = parent;
	s->sp = NULL;
	s->hwm = 0;
	s->stk_base = NULL;
	s->stk_reserve =
		(opts && opts->reserve) ? opts->reserve : n->stk_reserve;
	s->stk_guard = (opts && opts->guard) ? opts->guard : n->stk_guard;
	s->stk_mode = (opts && opts->mode_set) ? opts->mode : n->stk_mode;
	s->contain =
		(opts && opts->contain_set) ? opts->contain : n->contain_faults;
	s->mtx_held = 0;
	s->stk_parks = 0;
	s->stk_shrinks = 0;
	s->wait = NULL;
	__atomic_store_n(&s->wait_on, SMARM__WON_NONE, __ATOMIC_RELAXED);
	atomic_store_explicit(&s->ext_used, 0, memory_order_relaxed);
	if (SMARM_UNLIKELY(n->astat_on)) {
		struct smarm__astat *a = smarm__astat_of(n, s);
		/* Relaxed stores: a peek may read the line meanwhile. */
		__atomic_store_n(&a->as_cpu, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&a->as_runs, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&a->as_rqwait, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&a->as_msg_in, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&a->as_msg_out, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&a->as_pre_safe, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&a->as_pre_async, 0, __ATOMIC_RELAXED);
		/* Runnable from its publish on (spawn). */
		__atomic_store_n(&a->as_enq, smarm__cycles_fast(),
				 __ATOMIC_RELAXED);
	}
}

/*
 * Under s->cold, s DONE: make it VACANT with the next generation, so
 * every pid of the old tenant is stale (INV-1). The exit record moves to
 * *dead: the caller runs smarm__exit_release after unlocking.
 */
static inline void smarm__slot_reclaim(struct smarm__slot *s,
				       struct smarm__exit *dead)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
	uint32_t gen = SMARM__W_GEN(w) + 1;
	if (gen == 0)
		gen = 1; /* generation 0 is never issued (pid 0 = none) */
	*dead = s->exit;
	s->exit.ex_payload = NULL;
	if (atomic_load_explicit(&s->ext_used, memory_order_relaxed)) {
		s->ext->x_lent = 0; /* the exit hooks are done with the rooms */
		/* The next tenant has no labels. */
		for (int k = 0; k < SMARM__LABEL_BLOCKS; k++)
			if (s->ext->x_label[k] != NULL)
				memset(s->ext->x_label[k], 0, SMARM__LABEL_MAX);
		for (int k = SMARM__LABEL_BLOCKS; k < SMARM__LABELS; k++)
			__atomic_store_n(&s->ext->x_label[k], NULL,
					 __ATOMIC_RELEASE);
	}
	s->fn = NULL;
	s->arg = NULL;
	s->joinable = 0;
	s->has_joiner = 0;
	atomic_store_explicit(&s->word, SMARM__W_MAKE(gen, 0, SMARM__ST_VACANT),
			      memory_order_release);
}

void smarm__exit_release_slow(struct smarm__exit *dead);

/* Destroy a reclaimed exit record's payload, if any; no lock held. */
static inline void smarm__exit_release(struct smarm__exit *dead)
{
	if (SMARM_UNLIKELY(dead->ex_payload != NULL))
		smarm__exit_release_slow(dead);
}
struct smarm__slot *smarm__slot_live(struct smarm_node *n, uint64_t pid);
void smarm__slots_fini(struct smarm_node *n);

/*
 * Open a wait round: its epoch is the word's next one, which the word
 * takes only when the round ends (its wake, the park, or the retire:
 * slot.c). Nothing is written to the word, so the open costs no atomic
 * read-modify-write: outside a round every registration ever made holds
 * an epoch at most the word's, so none can match the new round, and a
 * wildcard wake (a stop) that lands meanwhile makes it NOTIFIED, as it
 * would have before the open. A round ends (park or retire) before the
 * next opens. Lock-free, legal under any lock. Called by the running
 * actor only.
 */
static inline uint32_t smarm__begin_wait(struct smarm__slot *s)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
	atomic_store_explicit(
		&s->waits,
		atomic_load_explicit(&s->waits, memory_order_relaxed) + 1,
		memory_order_relaxed);
	return (SMARM__W_EPOCH(w) + 1) & 0xffffffu;
}

void smarm__clear_notify(struct smarm__slot *s);
void smarm__retire_wait(struct smarm__slot *s);
int smarm__word_unpark(struct smarm__slot *s, uint32_t gen, bool any,
		       uint32_t epoch);

#endif /* SMARM_CORE_SLOT_H */
