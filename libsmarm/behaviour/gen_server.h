/* SPDX-License-Identifier: MIT */
/*
 * gen_server.h - what gen_server.c shares with gen_server_api.c and
 * gen_statem.c: the server object (smarm_gs_ctx_t), the engine both
 * behaviours run, timers, tokens and the message types. Ownership,
 * locking and invariants: see gen_server.c.
 */
#ifndef SMARM_BEHAVIOUR_GEN_SERVER_H
#define SMARM_BEHAVIOUR_GEN_SERVER_H

#include "../msg/msg.h"
#include "bhv.h"

/* A timer's fire: a machine's timer and generation, or a server's id. */
struct bhv_tick {
	int32_t tk_which;
	uint64_t tk_gen;
};

struct gs_timer; /* a timer of a server (gen_server.c) */
struct bhv_node; /* a node's counters (gen_server.c) */

/*
 * What a server uses seldom, apart from its context: made on first use
 * (smarm__gs_cold: a timer, a monitor, a token, an idle window, a
 * continue, a finite hibernate_after), freed as the server hibernates
 * with none of it in use (gen_server.c cold_trim), so a hibernated
 * server keeps only what it needs to resume.
 */
struct gs_cold {
	struct gs_timer *gc_timers;   /* gc_ntimers live timers */
	size_t gc_ntimers;	      /* sv_armed points here (a server) */
	uint64_t gc_tag;	      /* handle_continue's tag (sv_cont) */
	uint64_t gc_idle_ns;	      /* the idle window, 0: none */
	uint64_t gc_hib_after;	      /* idle ns before it hibernates (with
					 sv_hib_set; no block: 0) */
	struct bhv_tokens *gc_tokens; /* its live tokens, or NULL */
	uint32_t gc_captimers;	      /* gc_timers' room */
	uint32_t gc_nmon;	      /* monitors not yet Down */
};

/* A server, or a machine's server half: only its actor touches it. */
struct smarm_gs_ctx {
	const struct smarm_behaviour *sv_be; /* plugin reference held */
	void *sv_state;			     /* the behaviour's state */
	smarm_chan_t *sv_inbox;		     /* its requests (published); NULL
						while hibernated (sv_nobox) */
	smarm_chan_t *sv_sig;		     /* trapped exits, Downs, or NULL */
	smarm_chan_t *sv_tick;		     /* timer fires, or NULL */
	struct smarm__mbox sv_mb;	     /* its bands: sig, tick, inbox */
	struct gs_cold *sv_cold;	     /* seldom used, or NULL */
	const size_t *sv_armed;		     /* the engine's armed timers: a
						server's gc_ntimers (no block: a
						static 0), a machine's m_narmed */
	smarm_chan_t *sv_start;		/* a starter waits here until the start
					   is reported, or NULL */
	intptr_t sv_reason;		/* the end's how (sv_how) and reason */
	struct bhv_env *sv_cur;		/* the message in service */
	struct bhv_env *sv_batch;	/* BHV_BATCH envelopes, malloc'd at a
					   backlog, freed as it hibernates */
	intptr_t sv_err;		/* the reason of an error reply
					   (sv_err_set) */
	int64_t sv_served;		/* requests served and not yet added
					   to its node's counters (gen_server.c
					   served_flush) */
	const struct bhv_engine *sv_en; /* its engine's dispatch */
	/* The small fields and the flags, together (a hibernated server
	 * keeps this context alone: 248 bytes, a 256-byte chunk). */
	uint16_t sv_bi, sv_bn; /* the batch taken: [sv_bi, sv_bn) of
				  sv_batch (at most BHV_BATCH);
				  owner-written, the observer reads them
				  (relaxed atomics both sides) */
	uint16_t sv_steps;     /* loop steps (smarm__bhv_loop; wraps) */
	int8_t sv_how;	       /* the end's how, an SMARM_EXIT_* (sv_stop);
				  at its end terminate's
				  (smarm__bhv_end_how) */
	bool sv_stop;	       /* end after this callback (its end:
				  terminate may block) with sv_how
				  and sv_reason */
	bool sv_hib;	       /* hibernate at the next wait (engine
				  loop; smarm_gs_hibernate) */
	bool sv_err_set;       /* the call answers an error: sv_err */
	bool sv_trap;	       /* it traps exits (into sv_sig) */
	bool sv_mon;	       /* monitors not yet Down (gc_nmon != 0) */
	bool sv_cont;	       /* handle_continue next (gc_tag) */
	bool sv_hib_set;       /* gc_hib_after applies */
	bool sv_nobox;	       /* its inbox was dropped as it hibernated:
				  a sender makes it again (gen_server.c
				  INV-7); under its actor's cold lock */
	bool sv_sup : 1;       /* report to a supervisor */
	bool sv_reported : 1;  /* the start was reported */
	bool sv_created : 1;   /* create succeeded */
	bool sv_started : 1;   /* init succeeded */
	bool sv_in_init : 1;   /* inside init */
};

/* sv's cold block, made if it has none: NULL when out of memory. */
struct gs_cold *smarm__gs_cold(struct smarm_gs_ctx *sv);

/* Test-only: this many of the next cold blocks are not made (a test of
 * the out-of-memory paths sets it; smarm__gs_cold counts it down). */
extern _Atomic uint32_t smarm__gs_test_cold_fail;

/*
 * An engine's dispatch for the loop and end both run (gen_server.c),
 * which answer the system messages, refuse other behaviours' requests
 * and end the actor as sv_stop says: en_env takes a request of its
 * behaviour (counted, not freed), en_status fills its part of a status
 * (format_status's return, or 0), en_end (the actor ends, on any path)
 * sets the end's how (smarm__bhv_end_how), reports it and drops the
 * message in service, before the timers, terminate and destroy;
 * en_off is where the server sits in the object its end frees.
 */
struct bhv_engine {
	void (*en_signal)(struct smarm_gs_ctx *sv, const smarm_signal_t *s);
	void (*en_tick)(struct smarm_gs_ctx *sv, const struct bhv_tick *t);
	void (*en_env)(struct smarm_gs_ctx *sv, struct bhv_env *e);
	int (*en_status)(struct smarm_gs_ctx *sv, smarm_server_status_t *st);
	void (*en_end)(struct smarm_gs_ctx *sv);
	size_t en_off;
};

/* Hibernate whenever sv has waited ns with no message (0: at every
 * wait; SMARM_NO_TIMEOUT: never): smarm_gs_set_hibernate_after and
 * smarm_sm_set_hibernate_after. 0, or SMARM_ENOMEM (a finite ns needs
 * the cold block: nothing changed). */
int smarm__bhv_hibernate_after(struct smarm_gs_ctx *sv, uint64_t ns);

/* Serve sv's mailbox until it stops, then end the actor as sv_how says
 * (its end runs en_end, terminate, destroy); from its start, or on a
 * fresh stack from a hibernation. */
__attribute__((noreturn)) void smarm__bhv_loop(struct smarm_gs_ctx *sv);

/* Is a request queued (in the inbox or a batch taken)? A snapshot (no
 * inbox: none). */
static inline bool smarm__gs_pending(const struct smarm_gs_ctx *sv)
{
	return sv->sv_bi < sv->sv_bn || smarm__chan_maybe_ready(sv->sv_inbox);
}

/* Make sv's signal band (exits, Downs) if missing: 0 or a status. */
int smarm__gs_sig_band(struct smarm_gs_ctx *sv);

/* Trap exits into sv's signal band (once; a second call is 0). */
int smarm__gs_trap(struct smarm_gs_ctx *sv);

/* Make sv's timer band if it has none: 0 or a status. */
int smarm__gs_tick_band(struct smarm_gs_ctx *sv);

/* A reply token for call (reply, seq) of op served by sv, holding a
 * plugin reference until answered: 0 and *out, or SMARM_ENOMEM. */
int smarm__bhv_token_new(struct smarm_gs_ctx *sv, const struct bhv_op *op,
			 smarm_chan_t *reply, uint64_t seq,
			 struct smarm_reply **out);

/*
 * The inbox of the server or machine pid on node n, made again if the
 * server dropped it as it hibernated (gen_server.c INV-7): 0 and *h (a
 * handle, generation-checked: it may be stale by the time it is used),
 * or SMARM_ENOCHAN (pid is alive and no server, or its server is
 * ending), SMARM_ENOPROC (no live actor) or SMARM_ENOMEM (it could not
 * be made). _send sends e to it as smarm_node_send would: 0,
 * SMARM_ECLOSED, SMARM_EFULL, SMARM_ENOCHAN, SMARM_ENOPROC,
 * SMARM_ENOMEM. Takes pid's cold lock: not inside an ext_update fn.
 */
int smarm__bhv_inbox_of(struct smarm_node *n, smarm_pid_t pid,
			smarm_chan_t **h);
int smarm__bhv_inbox_send(struct smarm_node *n, smarm_pid_t pid,
			  const struct bhv_env *e);

/* A client's reply channel (smarm_response_t elements). */
int smarm__gs_reply_chan(smarm_chan_t **out);

/* A start's outcome to its starter: status, and why (init's return,
 * a crash's reason, else the status). */
struct bhv_start {
	int bs_status;
	intptr_t bs_why;
};

/*
 * A start's data that the server needs only until its create has run:
 * sp_fn(sp_arg) is a cleanup handler the starting actor pushed (below
 * the server's end) that frees it; NULL: none (kept by its owner).
 */
struct bhv_spent {
	smarm_cleanup_cb sp_fn;
	void *sp_arg;
};

/*
 * Open sv (zeroed, at en->en_off in alloc, which its end frees) of be
 * on the calling
 * actor with engine en: mailbox, end (cleanup handler), context cx
 * tagged tag, name, published inbox, then be's create (if any) of args,
 * after which the start data (spent, may be NULL) is dropped from the
 * cleanup stack and freed. 0, or a status with alloc freed and the
 * start reported; a failure after the end is pushed ends the actor.
 */
int smarm__bhv_open(struct smarm_gs_ctx *sv, const struct smarm_behaviour *be,
		    const struct bhv_engine *en, const char *args,
		    const char *name, smarm_chan_t *start, bool sup,
		    const struct bhv_spent *spent, void *alloc, const void *cx,
		    unsigned tag);

/* A start that failed before anything was set up: tell the starter
 * (start) or the waiting supervisor (sup); returns status. */
int smarm__bhv_start_fail(smarm_chan_t *start, bool sup, int status);

/* sv's start failed after smarm__bhv_open: stage ("create", "init",
 * NULL) returned rc. Report it, end the actor (else: the status). */
int smarm__bhv_start_failed(struct smarm_gs_ctx *sv, const char *stage, int rc);

/* sv's init succeeded: report the start. */
void smarm__bhv_started(struct smarm_gs_ctx *sv);

/* The end's how (en_end, first): a stop's, else how the actor ends (a
 * crash, a kill, an untrapped shutdown: terminate must not block). */
void smarm__bhv_end_how(struct smarm_gs_ctx *sv);

/* Run a server of be on the calling actor; never returns once started.
 * Its start's outcome goes to start (may be NULL; its sender reference
 * is given up) or a supervisor (sup); spent as smarm__bhv_open's. A
 * status: nothing was set up. */
int smarm__gs_run(const struct smarm_behaviour *be, const char *args,
		  const char *name, smarm_chan_t *start, bool sup,
		  const struct bhv_spent *spent);

/* Arm a timer of sv (smarm_gs_send_after, arguments validated). */
int smarm__gs_timer_add(struct smarm_gs_ctx *sv, const struct bhv_op *op,
			struct bhv_msg *blk, uint64_t delay_ns,
			uint64_t period_ns, uint64_t *id);

/* OTP's "terminating" report of a server or machine that ends crashed
 * (state, op may be NULL). */
void smarm__bhv_report_end(const char *what, const char *state, int how,
			   intptr_t reason, int kind, const char *op);

/* The system stop (smarm_server_stop): (i32 how, i64 reason). */
extern const struct bhv_op smarm__bhv_sys_stop;

/* The system status request: no arguments, a smarm_server_status_t
 * reply as bytes. */
extern const struct bhv_op smarm__bhv_sys_status;

/* The server stops after this callback with how and reason, unless a
 * stop came first (smarm_gs_stop, a system stop, a trapped shutdown, a
 * machine's stop). */
void smarm__gs_stop(struct smarm_gs_ctx *sv, int how, intptr_t reason);

/* Machine cx's server half, and a state it was in (racy) or NULL. */
const struct smarm_gs_ctx *smarm__sm_peek(const void *cx, const char **state);

/* Cancel timer id of sv: 0, or SMARM_ENOENT. */
int smarm__gs_timer_cancel(struct smarm_gs_ctx *sv, uint64_t id);

/* The layer's subsystem: per node, its served count (a bhv_node). */
struct smarm__subsys;
extern const struct smarm__subsys smarm__bhv_subsys;

#endif /* SMARM_BEHAVIOUR_GEN_SERVER_H */
