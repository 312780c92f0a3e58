/* SPDX-License-Identifier: MIT */
/*
 * subsys.h - how the layers above the core plug into a node: subsystem
 * ids, the hook table (struct smarm__subsys), per-node and per-actor
 * subsystem state. The one door through which the core reaches io, otp,
 * behaviour and obs, and they reach the node.
 *
 * Ownership: a subsystem owns its per-node state (ss_open .. ss_close)
 * and its per-actor state (from smarm__actor_ext_update putting it on an
 * actor until the exit hook hands it back, or an update takes it back).
 * Locking: smarm__actor_ext_update works under the actor's cold lock
 * (actor.c INV-3); node and exit hooks run with no runtime lock held.
 * See: docs/architecture/subsystems.md.
 */
#ifndef SMARM_CORE_SUBSYS_H
#define SMARM_CORE_SUBSYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct smarm_config;
struct smarm_node;
struct smarm__slot;
struct smarm_spawn_opts;

/*
 * Why an actor ended: what travels to its joiner today, and to its
 * monitors, links and supervisor in the layers above. Written whole by
 * the actor itself when it starts exiting (smarm__terminate_ex), final
 * from then on, released when the slot is reclaimed.
 */
/*
 * An owned exit payload (an error term, say): whoever makes one puts
 * this header first in its object; ep_free destroys the whole object.
 */
struct smarm__exit_payload {
	void (*ep_free)(struct smarm__exit_payload *self);
};

struct smarm__exit {
	int ex_how;	  /* SMARM_EXIT_* */
	int ex_strength;  /* STOPPED: the request's SMARM__STOP_* */
	intptr_t ex_code; /* CRASHED: the reason; STOPPED: the
			     request's code; else 0 */
	uint64_t ex_from; /* STOPPED: pid id of the requester, 0
			     if none (the node, a foreign thread) */
	struct smarm__exit_payload *ex_payload; /* owned; NULL: none */
};

/*
 * A stop request's strength. A SHUTDOWN is trappable: before it reaches
 * the target, the subsystems' ss_trap hooks may turn it into a message
 * (the OTP layer does, for an actor that traps exits); a KILL is not. A
 * stronger request overrides a weaker one that has not been observed.
 * The actor ends with the request's sr_how (SMARM_EXIT_STOPPED for a
 * kill; SHUTDOWN, CRASHED, STOPPED or NORMAL for an exit signal).
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
	int sr_how;	  /* SMARM_EXIT_* the target ends with */
};

/*
 * Subsystems: the layers above the core (io today; otp, behaviour and obs
 * tomorrow) plug into a node through this table of hooks, and keep their
 * own state per node and per actor. An id is also the index of the
 * subsystem's state; actor exit hooks run in id order.
 */
enum {
	SMARM__SUB_IO = 0,
	SMARM__SUB_REG = 1,
	SMARM__SUB_OTP = 2,
	SMARM__SUB_BEHAVIOUR = 3,
	SMARM__SUB_OBS = 4,
	SMARM__SUB_MAX = 5,
};

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
 *                 this subsystem (smarm__actor_ext_update), which it is
 *                 handed to own and free (a sized subsystem, below: to
 *                 empty, freeing what hangs off it; the core keeps the
 *                 block itself). The exit record is final and
 *                 borrowed for the call. It may allocate, send and wake;
 *                 a stop is no longer observed; it must not block. (An
 *                 actor whose stack could not be mapped never ran: its
 *                 hooks run where the scheduler finalizes it, possibly
 *                 on another actor's stack, so a hook uses its slot and
 *                 pid arguments, never smarm__current().)
 *   ss_get_stat   smarm_node_get_int for a stat the core does not know:
 *                 0 with *out set, or SMARM_EINVAL for "not mine".
 *   ss_trap       smarm__actor_request_stop, for a SHUTDOWN-strength
 *                 request, before the core looks at the target, on the
 *                 requester's thread (an actor, a plain thread, or a
 *                 finalizing worker): 1 it took the request (delivered
 *                 it as a message, the target is not stopped), 0 not
 *                 its business (the core stops the target), or
 *                 SMARM_ENOPROC (no such live actor). It may send and
 *                 wake; it must not block.
 *   ss_spawn      smarm__spawn, when the spawn options ask for
 *                 something of a layer above (spawn_opts.so_ext or
 *                 so_link): before the child is published, so nothing
 *                 else can reach it, let alone stop it, and it cannot
 *                 run before the hook returns. The hook changes the
 *                 child's state with smarm__actor_ext_update_child (no
 *                 lock; smarm__actor_ext_update finds no such actor
 *                 yet). parent is the spawner's pid. An error fails the
 *                 spawn: the child is published and ends before its body
 *                 runs, and the spawn returns the error.
 */
/*
 * A sized subsystem (ss_actor_size > 0) lets the core hold its per-actor
 * state: each slot that ever held such state has a zeroed room of that
 * size for it (in the slot's block of rooms, made on the first use and
 * kept across tenants), so an actor's state costs no allocation once
 * its slot has the rooms.
 *   ss_actor_size  bytes of one actor's state (0: the subsystem
 *                  allocates its own, as described above).
 *   ss_actor_trim  after each update of a sized state, under the cold
 *                  lock: true if it holds nothing any more, having freed
 *                  whatever hung off it; the core then takes the block
 *                  back (no exit hook for it). Required when sized.
 */
struct smarm__subsys {
	const char *ss_name;
	int (*ss_open)(struct smarm_node *n, const struct smarm_config *cfg,
		       void **state);
	void (*ss_close)(struct smarm_node *n, void *state);
	void (*ss_run_start)(struct smarm_node *n, void *state);
	void (*ss_run_end)(struct smarm_node *n, void *state);
	void (*ss_actor_exit)(struct smarm__slot *s, uint64_t pid,
			      const struct smarm__exit *ex, void *actor_state);
	int (*ss_get_stat)(const struct smarm_node *n, const void *state,
			   int stat, int64_t *out);
	int (*ss_trap)(struct smarm_node *n, void *state, uint64_t pid,
		       const struct smarm__stop_req *req);
	int (*ss_spawn)(struct smarm_node *n, void *state, uint64_t parent,
			uint64_t child, const struct smarm_spawn_opts *opts);
	size_t ss_actor_size;
	bool (*ss_actor_trim)(void *actor_state);
};

/*
 * The subsystems built into the library, indexed by id (NULL: none).
 * Defined by libsmarm/subsys.c, the one file that names every layer.
 */
extern const struct smarm__subsys *const smarm__builtin_subsys[SMARM__SUB_MAX];

/*
 * Per-actor subsystem state (slot `ext`; kept across tenants), and the
 * rooms of the sized subsystems: a block of rooms (x_rooms, at
 * n->ext_room[id] in it), made when a tenant of the slot first takes
 * sized state (an actor that never links, monitors or traps has none;
 * in the same allocation when that state is the block's first: actor.c
 * ext_block) and kept across tenants too. A room is free, attached (x_state[id]
 * points at it) or lent: taken by the tenant's exit hooks, until the
 * slot is reclaimed. State attached while the room is lent (late,
 * actor.c INV-3) is a heap block instead.
 */
struct smarm__ext {
	void *x_state[SMARM__SUB_MAX]; /* cold: each subsystem's, or NULL */
	void *x_rooms;	  /* cold: the sized subsystems' rooms (n->ext_bytes),
			     or NULL: none yet; never moves once made */
	uint8_t x_mask;	  /* cold: bit id set iff x_state[id] != NULL */
	uint8_t x_lent;	  /* cold: bit id set: room id is lent */
	void *x_pstk;	  /* the owner's: its parked-stack record
			     (parkstk.c), kept across tenants; NULL: none
			     yet */
	char *x_label[2]; /* per label kind (below): a block of
			     SMARM__LABEL_MAX bytes, set once under cold
			     (release), kept across tenants, or an
			     interned text (release; NULL at reclaim);
			     NULL: none yet */
};

/*
 * Labels: what a fatal fault report (stackdiag.c) says of an actor
 * beside its pid, recorded by the layers above as they learn it: a
 * registered name (the registry), the behaviour it serves (gen_server,
 * gen_statem). Copies, which the fault handler reads in memory that
 * stays mapped, taking no lock and following no pointer into a layer's
 * data. A name is a copy in a block per slot made on first use (a
 * server that has no name has no name block) and kept across tenants
 * (freed with the slot table); a name rewritten while the handler
 * reads it can show a mix of old and new text, never more than
 * SMARM__LABEL_MAX - 1 bytes (the last byte stays NUL). A behaviour's
 * label, the same for every server of that behaviour, is interned: one
 * immutable copy per distinct text in the node (actor.c, freed with the
 * slot table), whose address the slot holds. Reclaiming the slot
 * clears them.
 */
enum {
	SMARM__LABEL_NAME = 0,	    /* a registered name, or "" */
	SMARM__LABEL_BEHAVIOUR = 1, /* "gen_server 'b' of plugin 'p'", or "" */
	SMARM__LABELS = 2,
	SMARM__LABEL_BLOCKS = 1, /* kinds [0, this) are blocks per slot,
				    the others interned texts */
};
#define SMARM__LABEL_MAX 96
_Static_assert(SMARM__LABELS == 2, "x_label holds a block per kind");
_Static_assert(SMARM__SUB_MAX <= 8, "x_mask and x_lent hold a bit per id");

/* ---- node.c ---- */
int smarm__subsys_open(struct smarm_node *n, const struct smarm_config *cfg,
		       const struct smarm__subsys *const table[SMARM__SUB_MAX]);
void smarm__subsys_close(struct smarm_node *n);
void smarm__subsys_run_start(struct smarm_node *n);
void smarm__subsys_run_end(struct smarm_node *n);
int smarm__subsys_get_stat(const struct smarm_node *n, int stat, int64_t *out);
/* ss_trap in id order until one takes the request (1) or refuses (<0). */
int smarm__subsys_trap(struct smarm_node *n, uint64_t pid,
		       const struct smarm__stop_req *req);
/* ss_spawn in id order; the first error stops it. */
int smarm__subsys_spawn(struct smarm_node *n, uint64_t parent, uint64_t child,
			const struct smarm_spawn_opts *opts);
/* The layers' part of spawn options: NULL if none was set. */
const struct smarm__spawn_ext *
smarm__spawn_opts_ext(const struct smarm_spawn_opts *opts);
/* Set it (a copy; ext NULL clears it). */
void smarm__spawn_opts_set_ext(struct smarm_spawn_opts *opts,
			       const struct smarm__spawn_ext *ext);
/* Whether the spawn options link the child (SMARM_OPT_LINK). */
bool smarm__spawn_opts_link(const struct smarm_node *n,
			    const struct smarm_spawn_opts *opts);

/*
 * Gauges: counts that go up and down on hot paths, the core's
 * (SMARM_STAT_ENDED_UNJOINED) and the layers' (SMARM_STAT_MONITORS,
 * SMARM_STAT_LINKS). Each worker keeps its
 * own part in its line of the node's per-worker counts, written with
 * plain stores; a thread that is not one of the node's workers adds to
 * a shared atomic. A read sums the parts: exact whenever no update runs
 * meanwhile, never below 0.
 */
enum {
	SMARM__GAUGE_MONITORS = 0,
	SMARM__GAUGE_LINKS = 1,
	SMARM__GAUGE_UNJOINED = 2, /* the core's: actor.c INV-5 */
	SMARM__GAUGES = 3,
};
void smarm__gauge_add(struct smarm_node *n, int gauge, int64_t delta);
int64_t smarm__gauge_read(const struct smarm_node *n, int gauge);

/*
 * A number unique on the node (never 0), and above `above` (a rising
 * sequence per caller, such as a watcher's monitor refs). A worker hands
 * them out from a block of SMARM__REF_BLOCK it took from the node's
 * counter with one atomic add; other threads take a block of one.
 */
#define SMARM__REF_BLOCK 1024
uint64_t smarm__ref_next(struct smarm_node *n, uint64_t above);

/* The per-node state of subsystem id (NULL if it keeps none). */
void *smarm__node_sub(const struct smarm_node *n, int id);

/*
 * Per-worker state of a layer: a subsystem that keeps something per
 * worker (a cache only its worker touches, with no lock) sizes it by
 * smarm__node_workers at ss_open and indexes it by smarm__worker_index:
 * the calling thread's worker number on n (0 .. workers - 1), or -1 for
 * a thread that is not one of n's workers. Only runtime code with no
 * switch point in between may rely on the index it read (an actor can
 * move to another worker at any switch).
 */
int smarm__node_workers(const struct smarm_node *n);
int smarm__worker_index(const struct smarm_node *n);

/* A resolved configuration value (SMARM_OPT_*), for ss_open. */
int64_t smarm__config_int(const struct smarm_config *cfg, int opt);
/* The introspection socket's path (smarm_config_set_obs_socket), ""
 * if none, for ss_open. */
const char *smarm__config_obs_socket(const struct smarm_config *cfg);
/* The trace file's path (smarm_config_set_trace), "" if none, and its
 * SMARM_TRACE_* format, for ss_open. */
const char *smarm__config_trace(const struct smarm_config *cfg, int *format);

/* ---- actor.c: per-actor state ---- */

/*
 * Run fn on subsystem id's state of the live actor pid, under that
 * actor's cold lock: fn reads *state (NULL: none yet), may replace it,
 * or clear it (*state = NULL, taking it back). For a sized subsystem
 * *state is never NULL (a zeroed block when the actor has none) and fn
 * leaves the pointer alone: ss_actor_trim decides whether it stays. State left
 * in place reaches the subsystem's ss_actor_exit exactly once, with the final
 * exit record (actor.c INV-3). fn must not block, call user code or
 * take a lock of SLOT rank; it runs on the caller's thread. The slot's
 * block of state is allocated before fn runs, so whatever fn leaves is
 * attached: fn never has to undo anything.
 * Returns fn's return value, SMARM_ENOPROC if pid names no actor that
 * is alive (never was, stale, or DONE), or SMARM_ENOMEM: the actor is
 * alive but its block (or, for a sized subsystem whose room is lent, a
 * heap block) could not be allocated, so fn did not run and the actor
 * has no state of that subsystem (fn would have found it empty).
 */
int smarm__actor_ext_update(struct smarm_node *n, uint64_t pid, int id,
			    int (*fn)(void **state, void *arg), void *arg);

/*
 * smarm__actor_ext_update on the child an ss_spawn hook was given, which
 * is not published yet: its spawner owns the slot, so no lock is taken,
 * and the state reaches the child's exit hook as above. Only from that
 * hook, only for that child. Returns fn's return value or SMARM_ENOMEM
 * (as above), never SMARM_ENOPROC.
 */
int smarm__actor_ext_update_child(struct smarm_node *n, uint64_t pid, int id,
				  int (*fn)(void **state, void *arg),
				  void *arg);

/*
 * A look at subsystem id's state of the live actor pid, under that
 * actor's cold lock: fn gets the state (NULL: none) and must leave it
 * as it is; nothing is allocated or attached, so a look at an actor
 * that has no state costs it nothing. fn runs as an ext_update fn does
 * (no blocking, no user code, no lock of SLOT rank). Returns fn's
 * return value, or SMARM_ENOPROC if pid names no actor that is alive.
 */
int smarm__actor_ext_read(struct smarm_node *n, uint64_t pid, int id,
			  int (*fn)(void *state, void *arg), void *arg);

/*
 * smarm__actor_ext_update, and then, in the same hold of the actor's
 * cold lock, the stop request req as smarm__actor_request_stop makes it
 * (but not offered to ss_trap: fn, run by the subsystem whose ss_trap
 * would take it, has decided) if fn returns
 * SMARM__EXT_STOP, or if fn could not run for want of memory (the actor
 * then has no state of id, so nothing of it could take the request).
 * One lock hold instead of three for an exit signal over a link.
 * Returns 0 if fn returned SMARM__EXT_STOP, else as ext_update.
 */
#define SMARM__EXT_STOP 1
int smarm__actor_ext_update_stop(struct smarm_node *n, uint64_t pid, int id,
				 int (*fn)(void **state, void *arg), void *arg,
				 const struct smarm__stop_req *req);

/*
 * How the ended actor pid ended, while its slot still holds its exit
 * record (it is DONE and not yet joined or reclaimed): 0 with *how and
 * *code as its joiner would get them (smarm__exit ex_how, ex_code);
 * SMARM_ESTATE it is still alive; SMARM_ENOPROC no tenant of that pid is
 * left (never was, or reclaimed). Any thread; no runtime lock held.
 */
int smarm__actor_exit_of(struct smarm_node *n, uint64_t pid, int *how,
			 intptr_t *code);

/*
 * Whether the actor pid is ending or gone: true once it began its exit
 * (its cleanup handlers or exit hooks may be running), after a KILL
 * request it has not yet observed, once it is DONE, or if no tenant of
 * pid is left; false while it lives (a trappable SHUTDOWN pending
 * included). What an exit handler or hook of pid did, seen through the
 * lock it was published under, implies true. Any thread; no runtime
 * lock held.
 */
bool smarm__actor_ending(struct smarm_node *n, uint64_t pid);

/*
 * Ask the actor pid to end (actor.c): a KILL at once, a SHUTDOWN after
 * the ss_trap hooks had their say (which may deliver it as a message
 * instead). The target ends with req->sr_how at its next safe point.
 * Returns 0, or SMARM_ENOPROC if pid names no live actor. Legal with no
 * runtime lock held, from any thread of the node's process.
 */
int smarm__actor_request_stop(struct smarm_node *n, uint64_t pid,
			      const struct smarm__stop_req *req);

/*
 * Record text (NULL: none) as label kind of the live actor pid, cut to
 * SMARM__LABEL_MAX - 1 bytes. Takes pid's cold lock: not inside an
 * ext_update fn on pid. Returns 0, SMARM_ENOPROC (no such live actor)
 * or SMARM_ENOMEM (no label block: the report names the pid only).
 */
int smarm__actor_label_set(struct smarm_node *n, uint64_t pid, int kind,
			   const char *text);

/*
 * The same for a block kind (below SMARM__LABEL_BLOCKS), without taking
 * pid's cold lock, for a layer that orders its writes of label kind by
 * a lock of its own (the registry: its write lock). make: make the label block
 * if there is none, which needs pid's cold lock held (inside an ext_update fn
 * on pid); out of memory leaves the actor unlabelled. Without make, an actor
 * without a block is left alone (it has no label to rewrite).
 */
void smarm__actor_label_put(struct smarm_node *n, uint64_t pid, int kind,
			    const char *text, bool make);

/*
 * A look at one tenant for introspection (obs/): what the core keeps of
 * it, copied under its cold lock, so every field belongs to the same
 * tenant (a pid read with its state, never a successor's). pk_ext and
 * pk_name point into the slot and are valid only inside the visiting
 * fn, which runs under that cold lock (SLOT rank): fn copies, never
 * blocks, calls no user code and takes no SLOT-rank lock (locks of a
 * higher rank, a channel's, are allowed).
 */
struct smarm__peek {
	uint64_t pk_pid;	 /* the tenant */
	uint64_t pk_parent;	 /* its spawner (0: the run itself) */
	uint32_t pk_state;	 /* SMARM_ACTOR_* (obs.h): the slot state */
	uint8_t pk_exiting;	 /* SMARM__EXITING_*, 0: alive */
	uint8_t pk_stop;	 /* SMARM__STOP_* requested, not yet seen */
	uint8_t pk_stk_mode;	 /* SMARM_STACK_* */
	bool pk_timed;		 /* parked with a live timer (a deadline) */
	uint64_t pk_deadline;	 /* ... at this absolute ns */
	uint64_t pk_waits;	 /* waits opened since its spawn */
	uint64_t pk_stk_reserve; /* usable stack bytes */
	uint64_t pk_stk_guard;	 /* guard bytes (0: dense) */
	uint64_t pk_stk_hwm;	 /* sampled deepest use, bytes */
	uint64_t pk_stk_touched; /* resident bytes (mincore), now; in a
				    walk of all, 0 unless the node keeps
				    statistics */
	uint32_t pk_stk_shrinks; /* park-path shrinks */
	uint8_t pk_wait_on;	 /* SMARM__WON_* (parked only) */
	uint64_t pk_wait_target; /* its pid id or fd, or 0 */
	bool pk_stats;		 /* the node keeps the next (ACTOR_STATS) */
	uint32_t pk_pre_safe;	 /* slices ended at a safe point */
	uint32_t pk_pre_async;	 /* preemptions by signal */
	uint64_t pk_cpu;	 /* cycles on a worker */
	uint64_t pk_runs;	 /* times switched in */
	uint64_t pk_rqwait;	 /* cycles runnable, not running */
	uint64_t pk_msg_in;	 /* elements taken from channels */
	uint64_t pk_msg_out;	 /* elements sent */
	const void *pk_ext[SMARM__SUB_MAX]; /* per-subsystem state */
	const char *pk_name;		    /* its name label; NULL: none */
};
typedef int (*smarm__peek_fn)(const struct smarm__peek *pk, void *arg);

/*
 * Visit the tenant pid names (alive or DONE and not yet reclaimed):
 * fn's return value, or SMARM_ENOPROC (no such tenant). Any thread; no
 * runtime lock held; the world does not stop.
 */
int smarm__actor_peek(struct smarm_node *n, uint64_t pid, smarm__peek_fn fn,
		      void *arg);

/*
 * Visit every tenant of n in slot order, each under its own cold lock
 * in turn (never two at once), as ps does: each look is coherent, the
 * whole is not (an actor spawned or ended meanwhile may be in or out).
 * Stops at the first non-zero return of fn and returns it; 0 else.
 */
int smarm__actor_peek_all(struct smarm_node *n, smarm__peek_fn fn, void *arg);

/* The pid id of the actor running on this thread, 0 if none. */
uint64_t smarm__self_pid(void);

/* A cycle count (the node's statistics, pk_cpu and kin) in ns. */
uint64_t smarm__cycles_to_ns(uint64_t cycles);

/*
 * A slot's wait_on (slot.h): what a park waits on, for introspection, stored by
 * the waiting code before it parks and cleared after (smarm__wait_note); NONE:
 * a channel, a select, a mailbox, anything not said.
 */
enum {
	SMARM__WON_NONE = 0,
	SMARM__WON_CALL = 1,  /* a server's reply: wait_target its pid */
	SMARM__WON_JOIN = 2,  /* an actor's end: wait_target its pid */
	SMARM__WON_MUTEX = 3, /* a green mutex */
	SMARM__WON_IO = 4,    /* an fd: wait_target the fd */
	SMARM__WON_SLEEP = 5, /* smarm_actor_sleep */
};

/*
 * The running actor says what its next park waits on (an SMARM__WON_*
 * of slot.h: a server's reply, a join, a mutex, an fd, a sleep) and
 * target (a pid id, an fd, or 0), for introspection; kind 0 clears it
 * after the wait. Two stores; nothing else reads them but a peek. No-op
 * outside an actor.
 */
void smarm__wait_note(int kind, uint64_t target);

/* Does n keep per-actor statistics (SMARM_OPT_ACTOR_STATS)? */
bool smarm__node_astat_on(const struct smarm_node *n);

/* The pid id of the running actor's spawner (0: the run itself, or no
 * actor runs on this thread). Written once before the actor is
 * published, so read without a lock. */
uint64_t smarm__self_parent(void);

/* Whether n is inside smarm_node_run (workers exist). */
bool smarm__node_is_running(const struct smarm_node *n);

/*
 * End the calling actor (its cleanup handlers, then its exit hooks) with
 * how and code, as smarm_actor_exit/crash do. Actor context only.
 */
void smarm__self_exit(int how, intptr_t code) __attribute__((noreturn));

/*
 * The calling actor's own exit record, once it began exiting (from its
 * cleanup handlers): how and code as its joiner will get them. Actor
 * context only.
 */
void smarm__self_exit_info(int *how, intptr_t *code);

/*
 * Refuse (on true) or allow again (false) every park of the calling
 * actor (core/wait.h smarm__wait_refuse, WAIT-9). Actor context only.
 */
void smarm__self_refuse_parks(bool on);

/*
 * A preemption point for runtime calls that never wait (a send): if the
 * calling actor's slice ended inside the runtime, where its monitor
 * could not preempt it (preempt_pending), yield now, as smarm_check
 * would; else nothing (no clock read). Not inside a preemption-disabled
 * region, nor once the actor is exiting. Any thread (a no-op outside
 * an actor).
 */
void smarm__slice_point(void);

/*
 * End the calling actor's slice at its next preemption point (a send's
 * end, smarm_check, ...): the BEAM's send penalty. A send that finds a
 * backlog in its channel calls it (chan.c), so a producer faster than
 * its consumer hands the CPU over instead of growing the queue. A no-op
 * outside an actor.
 */
void smarm__slice_end(void);

/*
 * The calling actor's own state of subsystem id (NULL: none, or no
 * actor runs on this thread), read with no lock: only for a subsystem
 * whose state an actor sets on itself alone (smarm__actor_ext_update of
 * its own pid), so no other thread writes what this reads.
 */
void *smarm__self_ext(int id);

/*
 * What spawn options carry for the layers above the core, read by their
 * ss_spawn hooks (the core only tests so_ext and so_link). Set by the
 * public setters of those layers.
 */
struct smarm__spawn_ext {
	void *so_mon_ch;      /* OTP: a channel to monitor the child into */
	uint64_t *so_mon_ref; /* OTP: where to write that monitor's ref */
};

#endif /* SMARM_CORE_SUBSYS_H */
