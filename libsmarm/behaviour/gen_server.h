/* SPDX-License-Identifier: MIT */
/*
 * gen_server.h - what gen_server.c shares with gen_server_api.c: the
 * server object (smarm_gs_ctx_t is the server), the loop's entry and
 * the message types. Everything else of the behaviour layer is in bhv.h.
 * Ownership, locking and invariants: see gen_server.c.
 */
#ifndef SMARM_BEHAVIOUR_GEN_SERVER_H
#define SMARM_BEHAVIOUR_GEN_SERVER_H

#include "bhv.h"

/* A server. Only its own actor touches it (gen_server.c). */
struct smarm_gs_ctx {
	const struct smarm_behaviour *sv_be; /* plugin reference held */
	void *sv_state;			     /* the behaviour's state */
	smarm_pid_t sv_self;		     /* the server's actor */
	smarm_chan_t *sv_inbox;		     /* calls and casts (published) */
	smarm_chan_t *sv_info;		     /* infos (published) */
	smarm_chan_t *sv_exit;		     /* trapped exits, or NULL */
	smarm_chan_t *sv_down;		     /* Downs, or NULL */
	size_t sv_nmon;			     /* monitors not yet Down */
	smarm_selset_t *sv_set;		     /* the loop's select set */
	smarm_chan_t *sv_start;		     /* a starter waits here, or NULL */
	int sv_start_rc;		     /* the failed start's status */
	bool sv_sup;			     /* report to a supervisor */
	bool sv_reported;		     /* the start was reported */
	bool sv_created, sv_started;	     /* create, init succeeded */
	bool sv_in_init;		     /* inside init */
	bool sv_stop;			     /* end after this callback */
	int sv_how;			     /* ... with how and reason */
	intptr_t sv_reason;
	bool sv_cont;			   /* handle_continue next */
	uint64_t sv_tag;		   /* ... with this tag */
	uint64_t sv_idle_ns;		   /* the idle window, 0: none */
	struct bhv_env *sv_cur;		   /* the message in service */
	bool sv_deferred;		   /* its reply went to a token */
	struct smarm_gs_ctx *sv_live_next; /* the live list (gen_server.c) */
};

/* Is cx a live server whose actor is self? */
bool smarm__gs_is_server(const struct smarm_gs_ctx *cx, smarm_pid_t self);

/* The message types of inboxes and infos (defined on first use). */
const smarm_msgtype_t *smarm__gs_inbox_type(void);
const smarm_msgtype_t *smarm__gs_info_type(void);

/* A client's reply channel (struct bhv_reply elements). */
int smarm__gs_reply_chan(smarm_chan_t **out);

/*
 * Run a server of be on the calling actor (smarm_server_run's body):
 * never returns once the server started. start (may be NULL) gets one
 * int, the start's status, and its sender reference is given up; sup:
 * report to a waiting supervisor. Returns a status only when nothing
 * could be set up (and then the start was reported).
 */
int smarm__gs_run(const struct smarm_behaviour *be, const char *args,
		  const char *name, smarm_chan_t *start, bool sup);

/* A reply token for the call in service (smarm_gs_reply_later). */
int smarm__gs_token_new(struct smarm_gs_ctx *sv, const struct bhv_op *op,
			smarm_chan_t *reply, uint64_t seq,
			struct smarm_reply **out);

/* Requests served by every server (SMARM_STAT_SERVER_REQUESTS). */
int64_t smarm__gs_served(void);

#endif /* SMARM_BEHAVIOUR_GEN_SERVER_H */
