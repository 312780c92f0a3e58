/* SPDX-License-Identifier: MIT */
/*
 * statem.h - what the behaviour layer needs of gen_statem (statem.c):
 * the table checker the loader runs on every machine, and the
 * interpreter a machine's actor loop feeds one event at a time, which
 * calls back into the loop (struct smarm__sm_hooks) for messages,
 * timers and libffi.
 * See: docs/plugins.md (gen_statem), docs/architecture/behaviours.md.
 */
#ifndef SMARM_BEHAVIOUR_STATEM_H
#define SMARM_BEHAVIOUR_STATEM_H

#include <smarm/smarm_plugin.h>

#include "../core/ring.h"
#include "bhv.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An operation as the checker sees it: its name and kind (SMARM_SM_CAST,
 * SMARM_SM_CALL or SMARM_SM_INFO). */
struct smarm__sm_op {
	const char *so_name;
	int so_kind;
};

/*
 * smarm__sm_check_ops() - check the table of machine d (a full-size
 * descriptor) whose protocol has ops[0..n_ops) (statem.c, "The
 * checker"). On failure msg (may be NULL) names the machine, the row,
 * the state and the operation, cut to msglen.
 * Returns: 0. Errors: SMARM_EPROTOCOL a field or row is malformed;
 * SMARM_ENOTEXHAUSTIVE a state misses a row; SMARM_EUNREACHABLE a row
 * can never match; SMARM_ENOMEM.
 */
int smarm__sm_check_ops(const smarm_sm_desc_t *d,
			const struct smarm__sm_op *ops, size_t n_ops, char *msg,
			size_t msglen);

/* p's operations as the checker sees them, in protocol order, into
 * ops[SMARM_OPS_MAX]: 0 or SMARM_EPROTOCOL (too many). */
int smarm__sm_ops_of(const struct bhv_proto *p, struct smarm__sm_op *ops);

/* A machine's dispatch tables, built once per behaviour (by its first
 * machine): for each (kind, state, operation) the rows that may take
 * the event, in matching order. Constant once built. */
struct smarm__sm_tables;

/* Build / free the tables of a machine the checker accepted. */
int smarm__sm_tables_build(const smarm_sm_desc_t *d,
			   const struct smarm__sm_op *ops, size_t n_ops,
			   struct smarm__sm_tables **out);
void smarm__sm_tables_free(struct smarm__sm_tables *t);

/*
 * One event. ev_op: CAST, CALL, INFO: the operation's index in the
 * protocol; TIMEOUT: the timeout's index in the descriptor; else -1.
 * ev_args and ev_call (the arguments, a call's reply route) are the
 * loop's and pass with the event, copied by value; the interpreter hands
 * every event it takes back through sh_drop exactly once (one handled
 * with no call and no heap block, nothing left to do, need not be).
 */
struct smarm__sm_ev {
	int32_t ev_kind; /* enum smarm_sm_kind */
	int32_t ev_op;	 /* see above */
	union {
		struct bhv_msg ev_args; /* not EXIT: the arguments, or empty */
		smarm_signal_t ev_sig;	/* EXIT: the signal */
	};
	void *ev_call;	 /* a call's reply route; NULL once answered */
	uint64_t ev_seq; /* the loop's, with ev_call */
};

/* Timers a machine arms (smarm__sm_hooks.sh_timer's which). */
enum {
	SMARM__SM_TM_STATE = 0, /* the state timeout */
	SMARM__SM_TM_EVENT = 1, /* the event timeout */
	SMARM__SM_TM_NAMED = 2, /* + i: the descriptor's timeouts[i] */
};

struct smarm_sm_ctx;

/*
 * What the interpreter needs of its loop; each runs in the machine's
 * actor with no runtime lock held.
 *   sh_guard, sh_action  call a row's guard or action with the event's
 *              arguments (an action also gets m's state); its return.
 *   sh_drop    done with ev: free its arguments; a call unanswered gets
 *              status (SMARM_EDOWN), or with 0 the loop's answer.
 *   sh_timer   arm timer `which` to fire after ns carrying gen (back to
 *              smarm__sm_fire); *t names it. 0 or a status.
 *   sh_cancel  cancel a timer sh_timer armed (it may have fired).
 *   sh_trap    trap exits (init only).
 *   sh_next    the event of smarm_sm_next_event (a cast or info op).
 *   sh_reply   answer ev's call with v and clear ev_call (kept on
 *              failure); smarm_reply's statuses.
 *   sh_token   turn ev's call into a reply token (clears ev_call).
 *   sh_behaviour  smarm_sm_behaviour.
 *   sh_reply_error, sh_queue_limit  smarm_sm_reply_error and
 *              smarm_sm_set_queue_limit; NULL: not offered.
 *   sh_hibernate  smarm_sm_hibernate (now) or, else,
 *              smarm_sm_set_hibernate_after (after_ns); NULL: not
 *              offered.
 */
struct smarm__sm_hooks {
	bool (*sh_guard)(struct smarm_sm_ctx *m, void (*fn)(void),
			 const struct smarm__sm_ev *ev);
	int32_t (*sh_action)(struct smarm_sm_ctx *m, void (*fn)(void),
			     struct smarm__sm_ev *ev);
	void (*sh_drop)(struct smarm_sm_ctx *m, struct smarm__sm_ev *ev,
			int status);
	int (*sh_timer)(struct smarm_sm_ctx *m, int which, uint64_t ns,
			uint64_t gen, smarm_timer_t *t);
	void (*sh_cancel)(struct smarm_sm_ctx *m, smarm_timer_t t);
	int (*sh_trap)(struct smarm_sm_ctx *m);
	int (*sh_next)(struct smarm_sm_ctx *m, const char *op,
		       const smarm_value_t *args, size_t nargs,
		       struct smarm__sm_ev *ev);
	int (*sh_reply)(struct smarm_sm_ctx *m, struct smarm__sm_ev *ev,
			const smarm_value_t *v);
	int (*sh_token)(struct smarm_sm_ctx *m, struct smarm__sm_ev *ev,
			smarm_reply_t **tok);
	int (*sh_behaviour)(struct smarm_sm_ctx *m, const char *name,
			    const smarm_behaviour_t **out);
	void (*sh_reply_error)(struct smarm_sm_ctx *m, struct smarm__sm_ev *ev,
			       intptr_t reason);
	int (*sh_queue_limit)(struct smarm_sm_ctx *m, uint32_t limit);
	int (*sh_hibernate)(struct smarm_sm_ctx *m, bool now,
			    uint64_t after_ns);
};

/* Where a machine is: what its callbacks may do (statem.c INV-3). */
enum {
	SMARM__SM_IDLE = 0,   /* between events: no callback runs */
	SMARM__SM_INIT = 1,   /* in init */
	SMARM__SM_ENTER = 2,  /* in an enter */
	SMARM__SM_ACTION = 3, /* in a row's action */
	SMARM__SM_DONE = 4,   /* ended: only smarm__sm_fini is left */
};

struct smarm__sm_timer {
	smarm_timer_t tm_t; /* the loop's timer (not a zero one's) */
	uint64_t tm_gen;    /* the live fire's generation; 0: not armed */
	bool tm_zero;	    /* armed with 0: no timer, an event in m_q */
	bool tm_queued;	    /* ... its event is in m_q already */
};

/*
 * A running machine; smarm_sm_ctx_t is this. Only its actor touches it.
 */
struct smarm_sm_ctx {
	uint32_t m_magic;	    /* SMARM__SM_MAGIC from init to fini */
	int m_phase;		    /* SMARM__SM_* */
	const smarm_sm_desc_t *m_d; /* the machine */
	const struct smarm__sm_tables *m_t; /* its tables */
	const struct smarm__sm_hooks *m_h;  /* its loop */
	void *m_data;			    /* the plugin's data */
	int32_t m_state;		    /* the current state */
	bool m_stop;			    /* end after this event */
	int m_stop_how;			    /* ... with this how (NORMAL: 0) */
	intptr_t m_stop_reason;		    /* ... and reason */
	bool m_crash;			    /* ... as crashed (a bad state) */
	bool m_trap;			    /* trapping exits */
	bool m_reenter;		      /* the enter running asked to run again */
	struct smarm__sm_ev *m_cur;   /* the event an action handles */
	struct smarm__ring m_q;	      /* internal events, next first */
	struct smarm__ring m_post;    /* postponed events, oldest first */
	struct smarm__ring m_next;    /* next_events of this callback */
	uint64_t m_gen;		      /* last timer generation given */
	struct smarm__sm_timer *m_tm; /* 2 + n_timeouts timers */
	size_t m_narmed;	      /* of m_tm, those armed */
};

#define SMARM__SM_MAGIC 0x736d6d31u

/* Set m up in state d->initial (no callback runs). 0 or SMARM_ENOMEM. */
int smarm__sm_init(struct smarm_sm_ctx *m, const smarm_sm_desc_t *d,
		   const struct smarm__sm_tables *t,
		   const struct smarm__sm_hooks *h, void *data);

/* Run the initial state's enter and what it queued. */
void smarm__sm_start(struct smarm_sm_ctx *m);

/* Dispatch *ev (it passes to the interpreter) and the internal events
 * it leads to. Returns whether the machine is to end now (m_stop;
 * m_crash says how). */
bool smarm__sm_step(struct smarm_sm_ctx *m, struct smarm__sm_ev *ev);

/* Timer `which` fired with gen: dispatch its event if gen is still live
 * (INV-3 of statem.c); pending: an external event waits, which cancels
 * an event timeout. Returns as smarm__sm_step. */
bool smarm__sm_fire(struct smarm_sm_ctx *m, int which, uint64_t gen,
		    bool pending);

/* Arm / cancel a timer (the smarm_sm_* calls). sh_timer's status. */
int smarm__sm_arm(struct smarm_sm_ctx *m, int which, uint64_t ns);
int smarm__sm_disarm(struct smarm_sm_ctx *m, int which);

/* Queue ev as a next event of the running callback. 0 or SMARM_ENOMEM. */
int smarm__sm_push_next(struct smarm_sm_ctx *m, const struct smarm__sm_ev *ev);

/* End m: cancel its timers, hand every queued and postponed event to
 * sh_drop with SMARM_EDOWN, free what init allocated. */
void smarm__sm_fini(struct smarm_sm_ctx *m);

struct smarm_behaviour;
struct bhv_spent;

/* Run a machine of be on the calling actor (gen_statem.c), as
 * smarm__gs_run runs a server (gen_server.h). */
int smarm__sm_run(const struct smarm_behaviour *be, const char *args,
		  const char *name, smarm_chan_t *start, bool sup,
		  const struct bhv_spent *spent);

#endif /* SMARM_BEHAVIOUR_STATEM_H */
