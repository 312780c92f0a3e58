/* SPDX-License-Identifier: MIT */
/*
 * sup.h - internal interface of supervisors: the spec object's layout
 * and the control requests (shared by sup_api.c, the public calls, which
 * check their arguments, and sup.c, the supervisor actor and the calls'
 * transport, which checks nothing again).
 * Ownership, locking and invariants are stated in sup.c.
 * See: docs/architecture/supervisors.md.
 */
#ifndef SMARM_OTP_SUP_H
#define SMARM_OTP_SUP_H

#include "../core/core.h"
#include "reg.h"

#include <stdbool.h>
#include <stdint.h>

#define SMARM__SUP_KIND_READY 16
/* A readiness report's reason: 0 ready, < 0 failed, this: ignore
 * (smarm_sup_ignore, OTP's start function returning ignore). Also what
 * sup.c's child start returns for such a child (no pid). */
#define SMARM__SUP_IGNORE 1

struct smarm__sup_cspec {
	char cs_id[SMARM_NAME_MAX + 1]; /* child id, NUL-terminated */
	smarm_actor_cb cs_fn;		/* body (NULL: cs_tfn's) */
	smarm_sup_template_cb cs_tfn;	/* or a template's two-argument
					   body (smarm_sup_spec_add_template) */
	void *cs_arg;			/* its argument, the caller's */
	void *cs_extra;			/* an instance's extra argument */
	int cs_restart;			/* smarm_sup_restart */
	uint64_t cs_shutdown;		/* BRUTAL_KILL, INFINITY or ns */
	bool cs_await;			/* reports readiness */
	uint64_t cs_ready_ns;		/* bound of that wait */
	int cs_type;			/* smarm_sup_child_type */
	bool cs_significant;		/* for the automatic shutdown */
};

struct smarm_sup_spec {
	int sp_strategy;	  /* smarm_sup_strategy */
	uint32_t sp_max;	  /* restarts allowed ... */
	uint64_t sp_period;	  /* ... within this window (ns) */
	uint32_t sp_fault_weight; /* restarts a contained fault counts */
	uint32_t sp_n;		  /* children */
	uint32_t sp_cap;	  /* allocated entries of sp_kids */
	struct smarm__sup_cspec *sp_kids; /* in start order */
	/* sp_kids by id, for a spec of more than a few children: sp_hn is
	 * NULL (no index: searched by a scan) or holds sp_cap nodes, node
	 * i sp_kids[i]'s, each of the first sp_n in sp_byid. */
	struct smarm__htab sp_byid;
	struct smarm__htab_node *sp_hn;
	int sp_bad;  /* first failure of a setter on it, 0: none (an
			init's spec is invalid with one: smarm_sup_init_cb) */
	int sp_auto; /* smarm_sup_auto_shutdown */
};

/* Free spec (sup_api.c): its children, their index and itself. */
void smarm__sup_spec_destroy(struct smarm_sup_spec *spec);

/* Control requests (smarm_sup_*_child), the "smarm.sup.ctl" type. */
enum smarm__sup_op {
	SMARM__SUP_OP_START = 1,
	SMARM__SUP_OP_TERMINATE,
	SMARM__SUP_OP_RESTART,
	SMARM__SUP_OP_DELETE,
	SMARM__SUP_OP_WHICH,
	SMARM__SUP_OP_COUNT,
	SMARM__SUP_OP_START_ARGS,    /* an instance; cs.cs_extra its extra */
	SMARM__SUP_OP_TERMINATE_PID, /* the child running as pid */
};

struct smarm__sup_ctl {
	int op;			    /* enum smarm__sup_op */
	bool anon;		    /* START without an id */
	struct smarm__sup_cspec cs; /* START: the child; others: cs_id */
	uint64_t pid;		    /* TERMINATE_PID: the child's pid */
	smarm_chan_t *reply;	    /* the caller's (smarm_signal_t elements) */
};

/*
 * A reply is a smarm_signal_t in the caller's channel, beside the Down
 * of the supervisor's monitor: kind SMARM__SUP_KIND_REPLY (or _ITEMS, whose
 * reason is a malloc'd smarm_sup_child_info_t array the receiver frees,
 * or the channel's destructor if nobody takes it), how the status, from
 * the child's pid. START, RESTART: ref the child's readiness info.
 * WHICH: ref the count. COUNT: ref specs << 32 | active, reason
 * supervisors << 32 | workers (each at most SMARM_SUP_CHILDREN_MAX).
 */
#define SMARM__SUP_KIND_REPLY 17
#define SMARM__SUP_KIND_ITEMS 18

/* sup.c */

/* 0, or SMARM_EBADSPEC: what no setter can refuse alone (a
 * SIMPLE_ONE_FOR_ONE spec without exactly one child, a two-argument
 * template under another strategy, a significant child with
 * SMARM_SUP_AUTO_NEVER or permanent). */
int smarm__sup_spec_check(const struct smarm_sup_spec *spec);

/*
 * Run the supervisor of owned (taken over and freed) on the calling
 * actor. sig (taken over too) is the channel of smarm_signal_t the
 * caller already traps exits into (smarm__sup_run_init: the init ran
 * trapping), or NULL for a new one. Returns only if it could not be set
 * up (the code; reported to the spawner first if report_setup_failure);
 * else it ends the actor.
 */
int smarm__sup_run(struct smarm_sup_spec *owned, smarm_chan_t *sig,
		   bool report_setup_failure);

/*
 * Run on the calling actor a supervisor whose spec init(arg) builds
 * (smarm_sup_run_init's contract). Returns only if nothing could be set
 * up (the code; reported to the spawner first if report_setup_failure).
 */
int smarm__sup_run_init(smarm_sup_init_cb init, void *arg,
			bool report_setup_failure);

/* Spawn a supervisor of owned (taken over) and wait for its report. */
int smarm__sup_start(struct smarm_sup_spec *owned, smarm_pid_t *out);

/* Spawn a supervisor whose spec init(arg) builds; wait for its report
 * (smarm_sup_start_init's contract). */
int smarm__sup_start_init(smarm_sup_init_cb init, void *arg, smarm_pid_t *out,
			  intptr_t *why);

/* Send a readiness report (status 0: ready; extra: what more it says)
 * to the caller's spawner: 0, SMARM_ESTATE nobody waits for one, or a
 * send error. */
int smarm__sup_report(int status, intptr_t extra);

/*
 * Send q to the supervisor sup (a pid the caller checked: not its own,
 * not SMARM_PID_NONE) and wait up to timeout_ns for the reply, watching
 * sup with a monitor into the reply channel. Returns the transport
 * status (0: *r holds the reply; its how is the request's status):
 * SMARM_ENOPROC for a supervisor that is gone, ending (its mailbox
 * refused the send: smarm__actor_ending) or that ended before it
 * answered; SMARM_EINVAL for a live actor with no control mailbox.
 */
int smarm__sup_call(smarm_pid_t sup, struct smarm__sup_ctl *q,
		    uint64_t timeout_ns, smarm_signal_t *r);

#endif /* SMARM_OTP_SUP_H */
