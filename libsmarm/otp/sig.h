/* SPDX-License-Identifier: MIT */
/*
 * sig.h - internal interface of the OTP layer's signal half: monitors
 * (monitor.c), links and trapping (link.c), exit signals, the shutdown
 * exit kind, the terminal record and the subsystem table (signal.c); the
 * public calls are in sig_api.c. It sits on msg and core (msg.h,
 * core.h), never on io.
 *
 * The first part is what other modules use (the registry marks a name
 * holder watchable); the rest is shared by the files of this half only.
 * Ownership, locking and invariants are stated in signal.c.
 * See: docs/architecture/otp.md.
 */
#ifndef SMARM_OTP_SIG_H
#define SMARM_OTP_SIG_H

#include "../msg/msg.h"

/* ---- for other modules ---- */

extern const struct smarm__subsys smarm__sig_subsys;

/*
 * Make the live actor pid's tenancy watchable: when it ends, its
 * (how, reason) is kept by slot, so that a monitor set after its death
 * reports them instead of SMARM_EXIT_NOPROC (signal.c INV-4). Returns 0,
 * SMARM_ENOPROC (pid names no live actor: history is not invented) or
 * SMARM_ENOMEM. Any thread; no runtime lock held.
 */
int smarm__sig_mark_watchable(struct smarm_node *n, uint64_t pid);

/* ---- inside the signal half ---- */

/* A monitor, on its target: the runtime holds a sender reference on ch. */
struct smarm__sig_mon {
	uint64_t sm_ref;     /* the monitor's ref */
	uint64_t sm_watcher; /* the watcher's pid id */
	smarm_chan_t *sm_ch; /* channel cell (sender reference held) */
};

/* A monitor, on its watcher: enough to demonitor and to flush. */
struct smarm__sig_wref {
	uint64_t sw_ref;    /* the monitor's ref */
	uint64_t sw_target; /* the monitored actor's pid id */
	smarm_chan_t *sw_h; /* the caller's handle of the channel */
	bool sw_dead;	    /* removed: kept only for the order */
};

/*
 * The OTP state of one actor (per-actor state of a sized subsystem,
 * core subsys.h: a room in the slot's extension block): zeroed on first
 * use, handed to the exit hook, taken back when empty. Every
 * field is read and written under the actor's cold lock (inside
 * smarm__actor_ext_update), by the spawn hook before the actor is
 * published (smarm__actor_ext_update_child), or by the exit hook that
 * owns it.
 */
struct smarm__sig_actor {
	struct smarm__sig_mon *sa_mons; /* monitors watching this actor:
					   sa_mon1 while there is room */
	uint32_t sa_nmons, sa_capmons;
	struct smarm__sig_mon sa_mon1;	  /* the first: most targets have one */
	struct smarm__sig_wref *sa_wrefs; /* monitors this actor set, in
					     ref order (monitor.c) */
	uint32_t sa_capwrefs;		  /* room */
	uint32_t sa_wfirst, sa_wend;	  /* the span in use; empty: equal */
	bool sa_watchable;	 /* its end is stamped (signal.c INV-4) */
	smarm_chan_t **sa_flush; /* handles Downs for it went into */
	uint32_t sa_nflush, sa_capflush;
	uint64_t *sa_links; /* linked peers' pid ids: sa_link2 while
			       there is room; in use: sa_nlinks from
			       sa_lfirst (link.c, the window) */
	uint32_t sa_nlinks, sa_caplinks, sa_lfirst;
	uint32_t sa_restarts;  /* a supervisor's: restarts it admitted
				  (smarm__sig_count_restart) */
	uint64_t sa_link2[2];  /* the first two: a chain's parent and child */
	smarm_chan_t *sa_trap; /* trap channel cell (sender held), or NULL */
};

/*
 * Every slot that ever held a monitored, monitoring or linked actor
 * keeps room for one in its extension block, and a fresh one is zeroed
 * whole: keep it to two cache lines.
 */
_Static_assert(sizeof(struct smarm__sig_actor) <= 128,
	       "struct smarm__sig_actor outgrew two cache lines");

/* Per-node state of the signal half. */
struct smarm__sig_node {
	_Atomic int64_t sn_sup_restarts; /* SMARM_STAT_SUP_RESTARTS (sup.c) */
	smarm__lock_t sn_term_lock;	 /* TABLE rank: the terminal records */
	struct smarm__sig_term *sn_term; /* open addressing, by slot */
	uint32_t sn_nterm, sn_capterm;	 /* used, capacity (power of 2) */
};

/* signal.c */
struct smarm__sig_node *smarm__sig_node(struct smarm_node *n);
/* Count one restart the calling supervisor me admitted: the node's
 * SMARM_STAT_SUP_RESTARTS and its own sa_restarts (for introspection;
 * under its cold lock, so a peek reads it whole). */
void smarm__sig_count_restart(struct smarm_node *n, uint64_t me);
int smarm__sig_vec_grow(void **v, uint32_t *cap, uint32_t need, size_t esz);
int smarm__sig_chan_take(smarm_chan_t *h, smarm_chan_t **cell);
int smarm__sig_send(smarm_chan_t *cell, int kind, int how, uint64_t from,
		    uint64_t ref, intptr_t reason);
int smarm__sig_send_ref(smarm_chan_t *cell, int kind, int how, uint64_t from,
			uint64_t ref, intptr_t reason, bool *released);
bool smarm__sig_term_lookup(struct smarm_node *n, uint64_t pid, int *how,
			    intptr_t *reason);
int smarm__sig_exit_signal(struct smarm_node *n, uint64_t to, uint64_t from,
			   int how, intptr_t reason, bool kill);

/*
 * The update of a monitor's target or a link's peer: a child that an
 * ss_spawn hook was given (child true: not yet published, no lock, never
 * SMARM_ENOPROC; core subsys.h) or any actor.
 */
static inline int smarm__sig_update_far(struct smarm_node *n, uint64_t pid,
					bool child,
					int (*fn)(void **state, void *arg),
					void *arg)
{
	if (child)
		return smarm__actor_ext_update_child(n, pid, SMARM__SUB_OTP, fn,
						     arg);
	return smarm__actor_ext_update(n, pid, SMARM__SUB_OTP, fn, arg);
}

/* monitor.c; child: target is the child of an ss_spawn hook */
int smarm__sig_monitor(struct smarm_node *n, uint64_t me, uint64_t target,
		       bool child, smarm_chan_t *h, uint64_t *ref);
int smarm__sig_demonitor(struct smarm_node *n, uint64_t me, uint64_t ref,
			 int flags);
/* The pids pid watches (watchers false) or that watch it, as
 * smarm_names_of counts them; 0 or SMARM_ENOPROC. */
int smarm__sig_monitor_list(struct smarm_node *n, uint64_t pid, bool watchers,
			    smarm_pid_t *buf, size_t cap, size_t *count);
void smarm__sig_monitors_exit(struct smarm_node *n, uint64_t pid,
			      struct smarm__sig_actor *a, int how,
			      intptr_t reason);

/* link.c; child: peer is the child of an ss_spawn hook */
int smarm__sig_link(struct smarm_node *n, uint64_t me, uint64_t peer,
		    bool child);
int smarm__sig_unlink(struct smarm_node *n, uint64_t me, uint64_t peer);
int smarm__sig_trap_exit(struct smarm_node *n, uint64_t me, smarm_chan_t *h);
int smarm__sig_trap_hook(struct smarm_node *n, uint64_t to,
			 const struct smarm__stop_req *req);
void smarm__sig_links_exit(struct smarm_node *n, uint64_t pid,
			   struct smarm__sig_actor *a, int how,
			   intptr_t reason);

#endif /* SMARM_OTP_SIG_H */
