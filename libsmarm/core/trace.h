/* SPDX-License-Identifier: MIT */
/*
 * trace.h - the tracer's recording half: event kinds, the fixed-size
 * record, the per-worker rings and the inline emitters every layer calls
 * at its event sites. The writer thread and the file encoders are the
 * obs layer's (obs/trace.c); this header is all a site needs, so the
 * layers below obs record without naming it (layers point downward).
 *
 * Switch. A node traces when its config names a trace file
 * (smarm_config_set_trace, or SMARM_TRACE_FILE): obs/trace.c then calls
 * smarm__trace_enable at open, and each worker of that node's runs finds
 * its ring in smarm__tls_trace (sched.c sets it with the worker's other
 * thread-locals). Off, smarm__tls_trace is NULL and an event site costs
 * one thread-local load and one predictable branch; nothing else runs.
 * The hot sites cost nothing more than the runtime's statistics hooks
 * already do: a switch (slice ends and starts, a wait's park and the
 * return from it, carried in those records), a wake that queues (WAKE) and a
 * message sent or taken (SEND, RECV) are recorded in sched.c behind the one
 * flag that also guards the actor statistics (node and worker obs_on,
 * smarm__tls_obs).
 *
 * Rings. One single-producer single-consumer ring per worker (its only
 * producer: the worker thread, in scheduler or actor context; runtime
 * code is never preempted asynchronously, so no second producer can
 * interleave on that thread), and one more for threads that are not the
 * node's workers (the epoll thread, a host thread waking an actor),
 * whose producers serialise on a spin flag. The consumer is the writer
 * thread. Producer: read head (its own) and compare it with a limit
 * of its own (tr_lim), which never lies past the next wrap of the
 * ring's index, so that below it the record's slot is a cursor of its
 * own (tr_cur) that steps by one (TRACE-4); only at the limit read the
 * consumer's tail (acquire): more than half full, wake the writer
 * (tc_kick, once until the writer takes it) and set the limit a
 * sixteenth of the ring on (so the writer is asked again while the
 * ring stays past half); full, count a drop and return (never block);
 * else the limit is where the ring would be past half (or the wrap, if
 * that comes first). Then write the record and publish head (release).
 * Consumer: read head (acquire), copy records, publish tail
 * (release). So the writer drains a ring that fills fast when it is
 * half full, not only at its period, and a put past half reads the
 * consumer's line once in a sixteenth of a ring, not at every record.
 * core/ring.h's ring is a deque under its owner's lock, the wrong tool for a
 * lock-free SPSC hand-off between threads, hence this one.
 *
 * Ownership: the node owns its struct smarm__trace from enable to
 * smarm__trace_disable (node close, after the writer is joined).
 * Invariants: TRACE-1 0 <= head - tail <= cap; records [tail, head) are
 * complete. TRACE-2 a record's timestamps are cycle counts
 * (smarm__cycles_fast), non-decreasing along one worker's ring.
 * TRACE-3 nothing on the emit path allocates, locks (workers) or yields.
 * TRACE-4 tr_lim is at most the first multiple of the ring's size above
 * the head it was set at, and while head < tr_lim, tr_cur is
 * &tr_buf[head & tr_mask] (every put at the limit sets both).
 * TRACE-5 the consumer evicts the lines of the records it takes from
 * its caches before it hands the slots back (smarm__lines_evict): the
 * producer's next write of a slot then takes the line from memory, not
 * from the consumer's CPU, which on a 2-vCPU VM cost a traced
 * ping_pong_rtt about 3x (docs/benchmarks.md, the sixth tracer pass).
 * See: docs/observability.md (Tracing).
 */
#ifndef SMARM_CORE_TRACE_H
#define SMARM_CORE_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../arch/arch.h"
#include "assert.h"

struct smarm_node;

/*
 * Event kinds: XX(name, value, text). a, b, c and the name text of a
 * record mean, per kind:
 *   RUN_IN     a actor pid: its slice begins on this worker; b 1 if
 *              it comes back from a wait's park, c then that wait's
 *              epoch (the end of the WAKE's flow)
 *   RUN_OUT    a actor pid, c SMARM__INTENT_* (why the slice ended);
 *              if it parked in a wait, c also has SMARM__TRACE_PARKED
 *              and the SMARM__WON_* it waits on << 8, b its target
 *   SWITCH     a RUN_OUT and the next RUN_IN in one record (a direct
 *              switch from one actor to another whose park, if any,
 *              has no target): a the pid leaving, b the pid arriving,
 *              c SMARM__TRACE_SW_* bits: the leaving one's intent and
 *              park, the arriving one's return from a wait and that
 *              wait's epoch
 *   SPAWN      a spawner pid (0: none), b child pid
 *   EXIT       a pid, c SMARM_EXIT_* outcome, b reason code
 *   WAKE       a waker pid (0: none), b woken pid, c the wait's epoch;
 *              with SMARM__TRF_SEND it is also the waker's SEND (the
 *              wake of a channel send: tr_x the channel's handle, one
 *              element), and with SMARM__TRF_RECV besides, the woken
 *              actor's RECV of that element (a hand-off into its
 *              parked receive, which then records none: sched.c)
 *   PARK       no record of its own: the writer's instant for a
 *              RUN_OUT that parked (the park recorded at the switch)
 *   SEND       a sender pid, b channel id, c elements
 *   RECV       a receiver pid, b channel id, c elements
 *   TIMER      a pid the timer wakes or sends for (0: none), c kind
 *   CALL/CAST  a client pid, b server pid, name the operation
 *   REPLY      a server pid, b client pid, name the operation
 *   RESTART    a supervisor pid, b the child's old pid, c the restarts
 *              it counts, name the child's id
 *   LABEL      a pid, name its label (a registered name, a behaviour)
 */
#define SMARM__TRACE_KINDS(XX)                                                 \
	XX(RUN_IN, 1, "run")                                                   \
	XX(RUN_OUT, 2, "run end")                                              \
	XX(SPAWN, 3, "spawn")                                                  \
	XX(EXIT, 4, "exit")                                                    \
	XX(WAKE, 5, "wake")                                                    \
	XX(SWITCH, 6, "switch")                                                \
	XX(PARK, 7, "park")                                                    \
	XX(SEND, 8, "send")                                                    \
	XX(RECV, 9, "recv")                                                    \
	XX(TIMER, 10, "timer")                                                 \
	XX(CALL, 11, "call")                                                   \
	XX(CAST, 12, "cast")                                                   \
	XX(REPLY, 13, "reply")                                                 \
	XX(RESTART, 14, "restart")                                             \
	XX(LABEL, 15, "label")

enum {
#define SMARM__TRACE_ENUM(name, value, text) SMARM__TR_##name = (value),
	SMARM__TRACE_KINDS(SMARM__TRACE_ENUM)
#undef SMARM__TRACE_ENUM
		SMARM__TR_KINDS
};

#define SMARM__TRACE_NAME_MAX 32       /* bytes of tr_name, NUL included */
#define SMARM__TRACE_PARKED (1u << 16) /* RUN_OUT's c: a wait's park */
#define SMARM__TRF_NAME 1u	       /* tr_flags: tr_name is set */
#define SMARM__TRF_SEND 2u	       /* WAKE: a send's, tr_x its channel */
#define SMARM__TRF_RECV 4u	       /* WAKE: the woken's receive too */

/* SWITCH's c: bits 0-2 the leaving actor's SMARM__INTENT_*, 3-5 the
 * SMARM__WON_* it parked on, then two flags; the arriving actor's wait
 * epoch (24 bits) above them (sched.c asserts that each fits). */
#define SMARM__TRACE_SW_PARKED (1u << 6) /* the leaving one parked */
#define SMARM__TRACE_SW_WOKEN (1u << 7)	 /* the arriving one left a wait */
#define SMARM__TRACE_SW_EPOCH_SHIFT 8

/* One event: one cache line. */
struct smarm__trace_rec {
	uint64_t tr_ts; /* cycles (TRACE-2) */
	uint64_t tr_a;	/* per kind, above */
	uint64_t tr_b;
	uint32_t tr_c;
	uint16_t tr_kind;  /* SMARM__TR_* */
	uint16_t tr_flags; /* SMARM__TRF_* */
	union {
		char tr_name[SMARM__TRACE_NAME_MAX]; /* NUL-terminated if
							SMARM__TRF_NAME */
		uint64_t tr_x; /* SMARM__TRF_SEND: the channel */
	};		       /* else not written */
};
_Static_assert(sizeof(struct smarm__trace_rec) == 64, "a record is a line");

/* One ring (TRACE-1). */
struct smarm__trace_ring {
	struct smarm__trace_rec *tr_buf; /* tr_mask + 1 records */
	uint64_t tr_mask;
	uint64_t tr_half; /* (tr_mask + 1) / 2: past it, the writer is woken */
	struct smarm__trace *tr_t; /* the tracer (its tc_kick) */
	_Atomic uint32_t tr_spin;  /* the foreign ring's producers' flag */
	/* producer's line */
	_Alignas(64) _Atomic uint64_t tr_head;
	uint64_t tr_lim;		 /* at this head, the slow path */
	struct smarm__trace_rec *tr_cur; /* head's slot below tr_lim */
	_Atomic uint64_t tr_dropped;	 /* full-ring drops (producer stores) */
	/* consumer's line */
	_Alignas(64) _Atomic uint64_t tr_tail;
};

/* A node's tracer: tc_n rings, the last one the foreign threads'. */
struct smarm__trace {
	/*
	 * The writer's wake word (a futex): 1 asks it to drain now. A
	 * producer past half a ring sets it and wakes the writer, which
	 * clears it before each drain and sleeps on it for its period.
	 */
	_Alignas(64) _Atomic uint32_t tc_kick;
	uint32_t tc_n;
	uint64_t tc_t0; /* cycles at enable: the trace's time 0 */
	struct smarm__trace_ring *tc_ring;
};

/* This thread's ring while it is a worker of a tracing node, else NULL. */
extern __thread struct smarm__trace_ring *smarm__tls_trace
	__attribute__((tls_model("initial-exec")));

/* Record one event into r (out of line: the cold path of the emitters). */
void smarm__trace_put(struct smarm__trace_ring *r, int kind, uint64_t a,
		      uint64_t b, uint32_t c, const char *name);
/* The same, nameless, for smarm__trace_put_hot at its ring's limit. */
void smarm__trace_put_slow(struct smarm__trace_ring *r, int kind, uint64_t a,
			   uint64_t b, uint32_t c) __attribute__((noinline));
/* ... and for smarm__trace_put_hot_x. */
void smarm__trace_put_slow_x(struct smarm__trace_ring *r, int kind, uint64_t a,
			     uint64_t b, uint32_t c, uint16_t flags, uint64_t x)
	__attribute__((noinline));

/* TRACE-1: r's head h reached its limit: the writer is woken if the
 * ring is past half, the limit moved on; true if there is room, else
 * the drop is counted (out of line: rare). Producer side. */
bool smarm__trace_room_slow(struct smarm__trace_ring *r, uint64_t h);

/*
 * One record, inline: the body of the two puts below, with has_x a
 * constant (flags and x stored only then). At the limit the whole put
 * goes out of line, a tail call, so that the hooks keep nothing live
 * across it (no registers saved).
 */
static inline __attribute__((always_inline)) void
smarm__trace_put_inl(struct smarm__trace_ring *r, int kind, uint64_t a,
		     uint64_t b, uint32_t c, uint16_t flags, uint64_t x,
		     bool has_x)
{
	uint64_t h = atomic_load_explicit(&r->tr_head, memory_order_relaxed);
	struct smarm__trace_rec *e = r->tr_cur;
	if (SMARM_UNLIKELY(h >= r->tr_lim)) {
		if (has_x)
			smarm__trace_put_slow_x(r, kind, a, b, c, flags, x);
		else
			smarm__trace_put_slow(r, kind, a, b, c);
		return;
	}
	SMARM_ASSERT(e == &r->tr_buf[h & r->tr_mask]); /* TRACE-4 */
	r->tr_cur = e + 1; /* past the end only at the limit */
	e->tr_ts = smarm__cycles_fast();
	e->tr_a = a;
	e->tr_b = b;
	e->tr_c = c;
	e->tr_kind = (uint16_t)kind;
	e->tr_flags = flags; /* tr_name is not read */
	if (has_x)
		e->tr_x = x;
	/* Publish: the record before the head that covers it. */
	atomic_store_explicit(&r->tr_head, h + 1, memory_order_release);
}

/*
 * The same without a name, inline: for the hot hooks (sched.c), which
 * are themselves out of line and reached only when the node traces or
 * keeps statistics. One record is a counter read and five stores.
 */
static inline void smarm__trace_put_hot(struct smarm__trace_ring *r, int kind,
					uint64_t a, uint64_t b, uint32_t c)
{
	smarm__trace_put_inl(r, kind, a, b, c, 0, 0, false);
}

/* The same with flags and the extra word (a send's WAKE: sched.c). */
static inline void smarm__trace_put_hot_x(struct smarm__trace_ring *r, int kind,
					  uint64_t a, uint64_t b, uint32_t c,
					  uint16_t flags, uint64_t x)
{
	smarm__trace_put_inl(r, kind, a, b, c, flags, x, true);
}

/*
 * Emit an event from a worker (scheduler or actor context): one
 * thread-local load and a branch when the node does not trace. Macros,
 * not inline functions, so that the arguments (a pid read from a slot,
 * smarm__self_pid()) are evaluated only when tracing is on. A thread
 * that is not a worker of a tracing node records nothing here (see
 * smarm__trace_node).
 */
#define smarm__trace(kind, a, b, c) smarm__trace_named(kind, a, b, c, NULL)

/* The same, with a name (copied, cut to SMARM__TRACE_NAME_MAX - 1). */
#define smarm__trace_named(kind, a, b, c, name)                                \
	do {                                                                   \
		struct smarm__trace_ring *tr_r_ = smarm__tls_trace;            \
		if (SMARM_UNLIKELY(tr_r_ != NULL))                             \
			smarm__trace_put(tr_r_, (kind), (a), (b), (c),         \
					 (name));                              \
	} while (0)

/* Whether this thread records (a worker of a tracing node). */
static inline bool smarm__tracing(void)
{
	return SMARM_UNLIKELY(smarm__tls_trace != NULL);
}

/*
 * Emit from any thread for node n (a wake, a label): the caller has
 * tested that n traces (smarm__node_traces). A worker of n uses its own
 * ring; any other thread the foreign ring, under its spin flag.
 */
void smarm__trace_node(struct smarm_node *n, int kind, uint64_t a, uint64_t b,
		       uint32_t c, const char *name);

/* Whether n traces: one load (core/ code reads the node's field). */
bool smarm__node_traces(const struct smarm_node *n);

/*
 * Make n's rings (cap records each, a power of two) before any run:
 * 0 or SMARM_ENOMEM. From then on its workers record.
 */
int smarm__trace_enable(struct smarm_node *n, uint32_t cap);
/* Free them (no run, the writer gone). No-op if n does not trace. */
void smarm__trace_disable(struct smarm_node *n);
/* n's tracer, or NULL. */
struct smarm__trace *smarm__trace_of(const struct smarm_node *n);

/* Consumer: copy up to max records out of r, oldest first; how many. */
uint32_t smarm__trace_take(struct smarm__trace_ring *r,
			   struct smarm__trace_rec *out, uint32_t max);
/* Wake t's writer to drain now (any thread). */
void smarm__trace_kick(struct smarm__trace *t);
/* Writer side: wait until kicked or ns passed, then take the kick. */
void smarm__trace_wait(struct smarm__trace *t, uint64_t ns);
/* Records dropped on full rings, all of t's rings summed. */
uint64_t smarm__trace_dropped(const struct smarm__trace *t);

#endif /* SMARM_CORE_TRACE_H */
