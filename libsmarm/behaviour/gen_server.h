/* SPDX-License-Identifier: MIT */
/*
 * gen_server.h - what gen_server.c shares with gen_server_api.c and
 * gen_statem.c: the server object (smarm_gs_ctx_t is the server), the
 * engine both kinds of behaviour run (start, loop step, end), timers,
 * tokens and the message types. The rest of the layer is in bhv.h.
 * Ownership, locking and invariants: see gen_server.c.
 */
#ifndef SMARM_BEHAVIOUR_GEN_SERVER_H
#define SMARM_BEHAVIOUR_GEN_SERVER_H

#include "../msg/msg.h"
#include "bhv.h"

/*
 * A timer's fire, in the timer band: which timer (a server's id; a
 * machine's SMARM__SM_TM_* kind) and the generation armed (a machine's;
 * a server's is its id again).
 */
struct bhv_tick {
	int32_t tk_which;
	uint64_t tk_gen;
};

struct gs_timer; /* a timer of a server (gen_server.c) */
struct bhv_node; /* a node's counters (gen_server.c) */

/*
 * A server, or the server half of a machine (gen_statem.c): its mailbox,
 * start and end. Only its own actor touches it (gen_server.c).
 */
struct smarm_gs_ctx {
	const struct smarm_behaviour *sv_be; /* plugin reference held */
	void *sv_state;			     /* the behaviour's state */
	smarm_pid_t sv_self;		     /* the server's actor */
	smarm_chan_t *sv_inbox;		     /* its requests (published) */
	smarm_chan_t *sv_sig;		     /* trapped exits, Downs, or NULL */
	bool sv_trap;			     /* it traps exits (into sv_sig) */
	size_t sv_nmon;			     /* monitors not yet Down */
	smarm_chan_t *sv_tick;		     /* timer fires, or NULL */
	struct smarm__mbox sv_mb;	     /* its bands: sig, tick, inbox */
	struct gs_timer *sv_timers;	     /* sv_ntimers live timers */
	size_t sv_ntimers, sv_captimers;
	uint64_t sv_timer_seq;	     /* the last timer id */
	smarm_chan_t *sv_start;	     /* a starter waits here, or NULL */
	int sv_start_rc;	     /* the failed start's status */
	intptr_t sv_start_why;	     /* ... and its reason (a bad return) */
	bool sv_sup;		     /* report to a supervisor */
	smarm_pid_t sv_taken_by;     /* the holder of the name it found
					taken (OTP's already_started) */
	bool sv_reported;	     /* the start was reported */
	bool sv_created, sv_started; /* create, init succeeded */
	bool sv_in_init;	     /* inside init */
	bool sv_stop;		     /* end after this callback */
	int sv_how;		     /* ... with how and reason */
	intptr_t sv_reason;
	int sv_end_how; /* terminate's how and reason */
	intptr_t sv_end_reason;
	bool sv_end_graceful;	  /* terminate may block */
	bool sv_cont;		  /* handle_continue next */
	uint64_t sv_tag;	  /* ... with this tag */
	uint64_t sv_idle_ns;	  /* the idle window, 0: none */
	struct bhv_env *sv_cur;	  /* the message in service */
	struct bhv_env *sv_batch; /* taken from the inbox, not served yet:
				     [sv_bi, sv_bn) of sv_buf, which is
				     this (BHV_BATCH, malloc'd at the first
				     backlog: an idle server has none) or
				     sv_one */
	struct bhv_env *sv_buf;
	struct bhv_env sv_one;
	unsigned sv_bi, sv_bn;
	bool sv_deferred;	      /* its reply went to a token */
	bool sv_err_set;	      /* the call answers an error: */
	intptr_t sv_err;	      /* ... with this reason */
	struct bhv_node *sv_stats;    /* its node's counters */
	int64_t sv_served;	      /* requests served and not yet added
					 to sv_stats (gen_server.c) */
	struct bhv_tokens *sv_tokens; /* its live tokens, or NULL */
	unsigned sv_steps;	      /* loop steps (smarm__bhv_serve) */
	void *sv_alloc; /* what its end frees (smarm__bhv_open's arg) */
};

/*
 * An engine (gen_server.c, gen_statem.c): what it does with each kind of
 * message its mailbox's bands deliver, and whether a timer of its is
 * armed. smarm__bhv_serve is the one loop step both run; it answers the
 * system messages and refuses another behaviour's requests itself.
 *   en_env     a request of its own behaviour (counted, not yet freed)
 *   en_status  fill the engine's part of a status (kind, timers, a
 *              machine's state; state_text by format_status): what
 *              format_status returned, 0 without one
 *   en_stop    a system stop (smarm_server_stop) with how and reason
 */
struct bhv_engine {
	void (*en_signal)(struct smarm_gs_ctx *sv, const smarm_signal_t *s);
	void (*en_tick)(struct smarm_gs_ctx *sv, const struct bhv_tick *t);
	void (*en_env)(struct smarm_gs_ctx *sv, struct bhv_env *e);
	bool (*en_armed)(const struct smarm_gs_ctx *sv);
	int (*en_status)(struct smarm_gs_ctx *sv, smarm_server_status_t *st);
	void (*en_stop)(struct smarm_gs_ctx *sv, int how, intptr_t reason);
};

/*
 * Serve one message of sv's mailbox, highest band first, waiting for
 * one at most wait (the one timeout rule): 0, or SMARM_ETIMEDOUT (the
 * window passed with nothing served). A server that cannot wait ends;
 * one that never parks passes smarm_check every BHV_CHECK_EVERY steps.
 */
int smarm__bhv_serve(struct smarm_gs_ctx *sv, const struct bhv_engine *en,
		     uint64_t wait);

/*
 * Is a request queued (the inbox, or a batch taken from it)? A snapshot:
 * one sent just after counts as later.
 */
static inline bool smarm__gs_pending(const struct smarm_gs_ctx *sv)
{
	return sv->sv_bi < sv->sv_bn || smarm__chan_maybe_ready(sv->sv_inbox);
}

/* Make sv's signal band (smarm_trap_exit and smarm_monitor deliver
 * into it) if it has none: 0 or a status. */
int smarm__gs_sig_band(struct smarm_gs_ctx *sv);

/* Trap exits into sv's signal band (once; a second call is 0). */
int smarm__gs_trap(struct smarm_gs_ctx *sv);

/* Make sv's timer band if it has none: 0 or a status. */
int smarm__gs_tick_band(struct smarm_gs_ctx *sv);

/*
 * A reply token (smarm_reply_t, a handle) for the call (reply, seq) of
 * op being served by sv (a server, or a machine's sm_gs). It holds a
 * plugin reference of sv's behaviour until smarm_reply or
 * smarm_reply_drop frees it. 0 and *out, or SMARM_ENOMEM.
 */
int smarm__bhv_token_new(struct smarm_gs_ctx *sv, const struct bhv_op *op,
			 smarm_chan_t *reply, uint64_t seq,
			 struct smarm_reply **out);

/* A client's reply channel (smarm_response_t elements). */
int smarm__gs_reply_chan(smarm_chan_t **out);

/*
 * A start's outcome, as a starter's channel carries it: the status (0,
 * a SMARM_E*), and why: the value init returned (SMARM_EBADRETURN: a
 * positive one), the crash's reason (SMARM_EDOWN), else the status.
 */
struct bhv_start {
	int bs_status;
	intptr_t bs_why;
};

/*
 * Start the server or machine sv (zeroed, inside arg, the malloc'd
 * object its end frees) of be on the calling actor, up to its first
 * callback: its mailbox, end (pushed as the actor's cleanup handler,
 * with arg), its context cx tagged tag, its name and its published
 * inbox. start and sup as smarm__gs_run's. 0; or a status when nothing
 * could be set up (then arg is freed and the start reported). A failure
 * once end is pushed ends the actor (smarm__bhv_start_failed).
 */
int smarm__bhv_open(struct smarm_gs_ctx *sv, const struct smarm_behaviour *be,
		    const char *name, smarm_chan_t *start, bool sup,
		    void (*end)(void *arg), void *arg, const void *cx,
		    unsigned tag);

/* A start that failed before anything was set up: tell the starter
 * (start) or the waiting supervisor (sup); returns status. */
int smarm__bhv_start_fail(smarm_chan_t *start, bool sup, int status);

/*
 * sv's start failed after smarm__bhv_open: stage ("create", "init", or
 * NULL: no callback) returned rc. Report it (a stage's in the log), end
 * the actor; returns the start's status only if the actor could not end.
 */
int smarm__bhv_start_failed(struct smarm_gs_ctx *sv, const char *stage, int rc);

/* sv's init succeeded: report the start. */
void smarm__bhv_started(struct smarm_gs_ctx *sv);

/*
 * The end of sv, servers and machines alike, once its engine set
 * sv_end_how, sv_end_reason and sv_end_graceful and dropped what it
 * held: terminate (if init succeeded; its parks refused unless
 * graceful), then destroy, the mailbox (queued calls get SMARM_EDOWN),
 * the tokens (the same), the context, a start not yet reported, the
 * plugin reference, and sv's object is freed. A crash in terminate
 * becomes the actor's exit reason (OTP), and the rest runs as the
 * exit's cleanup handler. From the engine's cleanup handler only.
 */
void smarm__bhv_end(struct smarm_gs_ctx *sv);

/*
 * Run a server of be on the calling actor (smarm_server_run's body):
 * never returns once the server started. start (may be NULL) gets one
 * int, the start's status, and its sender reference is given up; sup:
 * report to a waiting supervisor. Returns a status only when nothing
 * could be set up (and then the start was reported).
 */
int smarm__gs_run(const struct smarm_behaviour *be, const char *args,
		  const char *name, smarm_chan_t *start, bool sup);

/* Arm a timer of sv (smarm_gs_send_after, arguments validated). */
int smarm__gs_timer_add(struct smarm_gs_ctx *sv, const struct bhv_op *op,
			struct bhv_msg *blk, uint64_t delay_ns,
			uint64_t period_ns, uint64_t *id);

/*
 * The report of a server or machine that ends crashed (OTP's gen_server
 * and gen_statem "terminating" error reports), from its cleanup handler:
 * "<what> report: actor ... terminating[ in state 'S']: crashed, reason
 * R, while handling <kind> '<op>'" (or "between requests"). state and
 * op may be NULL. Nothing for an end that is not a crash.
 */
void smarm__bhv_report_end(const char *what, const char *state, int how,
			   intptr_t reason, int kind, const char *op);

/* The system stop's operation (smarm_server_stop): (i32 how, i64
 * reason), in no protocol; only this layer packs it. */
extern const struct bhv_op smarm__bhv_sys_stop;

/* The system status request (smarm_server_get_status): a call of no
 * arguments answered with a smarm_server_status_t as bytes. */
extern const struct bhv_op smarm__bhv_sys_status;

/* The server stops after this callback with how and reason, unless a
 * stop came first (smarm_gs_stop, a system stop, a trapped shutdown). */
void smarm__gs_stop(struct smarm_gs_ctx *sv, int how, intptr_t reason);

/*
 * Machine cx (gen_statem.c, untagged: its smarm_sm_ctx_t): its server
 * half, and in *state the name of a state it was in (read racily), or
 * NULL. For smarm__bhv_peek.
 */
const struct smarm_gs_ctx *smarm__sm_peek(const void *cx, const char **state);

/* Cancel timer id of sv: 0, or SMARM_ENOENT. */
int smarm__gs_timer_cancel(struct smarm_gs_ctx *sv, uint64_t id);

/*
 * The behaviour layer's subsystem (SMARM__SUB_BEHAVIOUR): per node, a
 * struct bhv_node (SMARM_STAT_SERVER_REQUESTS).
 */
struct smarm__subsys;
extern const struct smarm__subsys smarm__bhv_subsys;

#endif /* SMARM_BEHAVIOUR_GEN_SERVER_H */
