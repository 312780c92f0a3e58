/* SPDX-License-Identifier: MIT */
/*
 * link.c - links (smarm_link, smarm_unlink, the spawn option), trapping
 * exits (smarm_trap_exit) and the trap hook that turns a trappable exit
 * signal into a SMARM_SIGNAL_EXIT message; the links' part of the exit
 * hook.
 *
 * A link is a pid in each side's list (per-actor state). link records
 * the target side first, then the caller's: once the caller is in the
 * target's list the target's end reaches it; if the target ends in
 * between, the entry left on the caller's side is stale and harmless
 * (the exit hook that finds it signals a dead pid: SMARM_ENOPROC).
 * unlink removes the target side first too. Propagation is decided by
 * the dying actor's list: for each peer it first takes itself off the
 * peer's list (so the peer's own end never signals back: the cascade is
 * acyclic), then sends the peer an exit signal with its how and reason
 * (signal.c), which the trap hook below delivers as a message to a
 * trapping peer. A normal end's signal, as in OTP, reaches only a peer
 * that traps and still holds the link; the others ignore it. Never two
 * cold locks at once.
 *
 * The window: an actor's links are sa_nlinks entries from sa_lfirst, in
 * the order made, but for a hole filled at each removal: one in the
 * older half takes the oldest (which leaves the window), one in the
 * newer half the newest. A removal searches from both ends at once, so
 * children that end oldest first (temporary workers done in order, a
 * lagging exit of children that said ignore) and newest first (a
 * supervisor's shutdown) are each found at once: with one end only,
 * either pattern cost a scan of all the links left per removal (n^2/2
 * for n children).
 *
 * Trapping: the trap channel's cell, with a runtime sender reference, in
 * the actor's state; a new tenant has no state, so starts untrapped. A
 * signal the trap channel refuses (its receiver is gone, or memory is)
 * is handled as for an actor that does not trap (signal.c INV-5): OTP's
 * process always has its mailbox, so the signal is never just lost.
 *
 * Ownership, locking, invariants: signal.c.
 * See: docs/architecture/otp.md.
 */
#include "sig.h"

#include <stdlib.h>
#include <string.h>

struct link_arg {
	struct smarm_node *n;
	uint64_t peer;
	bool changed; /* out: an entry was added or removed */
	bool fresh;   /* peer is a child not yet published: it cannot be
			 linked already (its pid is new), no search */
};

/* Room for one more link: the inline pair first, then a heap array
 * (the inline pair is never handed to realloc), as mons_reserve. */
static int links_reserve(struct smarm__sig_actor *a)
{
	uint64_t *l;
	if (a->sa_caplinks == 0) {
		a->sa_links = a->sa_link2;
		a->sa_caplinks = 2;
	}
	if (a->sa_lfirst + a->sa_nlinks < a->sa_caplinks)
		return 0;
	if (a->sa_lfirst != 0 && a->sa_lfirst >= a->sa_nlinks) {
		/* Half the room or more before the window: close it (each
		 * move of n links follows n removals or more). */
		memmove(a->sa_links, a->sa_links + a->sa_lfirst,
			a->sa_nlinks * sizeof *a->sa_links);
		a->sa_lfirst = 0;
		return 0;
	}
	if (a->sa_links != a->sa_link2)
		return smarm__sig_vec_grow(
			(void **)&a->sa_links, &a->sa_caplinks,
			a->sa_lfirst + a->sa_nlinks + 1, sizeof *a->sa_links);
	/* The inline pair is full and starts the window (lfirst 0). */
	l = malloc(4 * sizeof *l);
	if (l == NULL)
		return SMARM_ENOMEM;
	l[0] = a->sa_link2[0];
	l[1] = a->sa_link2[1];
	a->sa_links = l;
	a->sa_caplinks = 4;
	return 0;
}

static int link_add_fn(void **state, void *arg)
{
	struct link_arg *la = arg;
	struct smarm__sig_actor *a = *state;
	/* A supervisor of n children would search n links per start. */
	for (uint32_t i = 0; !la->fresh && i < a->sa_nlinks; i++)
		if (a->sa_links[a->sa_lfirst + i] == la->peer)
			return 0; /* idempotent */
	if (links_reserve(a) != 0)
		return SMARM_ENOMEM;
	a->sa_links[a->sa_lfirst + a->sa_nlinks++] = la->peer;
	smarm__gauge_add(la->n, SMARM__GAUGE_LINKS, 1);
	la->changed = true;
	return 0;
}

static int link_del_fn(void **state, void *arg)
{
	struct link_arg *la = arg;
	struct smarm__sig_actor *a = *state;
	uint32_t n = a->sa_nlinks, at = n;
	uint64_t *l;
	if (n == 0)
		return 0;
	l = a->sa_links + a->sa_lfirst;
	/* From both ends at once (the window, above). */
	for (uint32_t lo = 0, hi = n; lo < hi;) {
		if (l[--hi] == la->peer) {
			at = hi;
			break;
		}
		if (l[lo] == la->peer) {
			at = lo;
			break;
		}
		lo++;
	}
	if (at == n)
		return 0;
	if (at < n / 2) { /* the oldest fills the hole and leaves */
		l[at] = l[0];
		a->sa_lfirst++;
	} else { /* the newest fills it */
		l[at] = l[n - 1];
	}
	if (--a->sa_nlinks == 0)
		a->sa_lfirst = 0;
	smarm__gauge_add(la->n, SMARM__GAUGE_LINKS, -1);
	la->changed = true;
	return 0;
}

/* Under the actor's cold lock: send sig into its trap channel, if any
 * (trapped: it was queued). */
struct trap_arg {
	int how;
	uint64_t from;
	intptr_t reason;
	bool trapped; /* out */
};

static int trap_send_fn(void **state, void *arg)
{
	struct trap_arg *ta = arg;
	struct smarm__sig_actor *a = *state;
	if (a->sa_trap == NULL)
		return 0;
	/* A trap channel that refuses it (dead, out of memory) is no
	 * mailbox: the signal acts as if the actor did not trap (INV-5). */
	ta->trapped = smarm__sig_send(a->sa_trap, SMARM_SIGNAL_EXIT, ta->how,
				      ta->from, 0, ta->reason) == 0;
	return 0;
}

int smarm__sig_link(struct smarm_node *n, uint64_t me, uint64_t peer,
		    bool child)
{
	struct link_arg la = { n, me, false, child };
	int rc;
	if (peer == me)
		return 0;
	rc = smarm__sig_update_far(n, peer, child, link_add_fn,
				   &la); /* the target side first */
	if (rc == SMARM_ENOPROC) {
		/* OTP's link/1 on a dead pid: noproc. */
		struct trap_arg ta = { SMARM_EXIT_NOPROC, peer, 0, false };
		(void)smarm__actor_ext_update(n, me, SMARM__SUB_OTP,
					      trap_send_fn, &ta);
		if (ta.trapped)
			return 0;
		return SMARM_ENOPROC; /* the caller decides how to end */
	}
	if (rc != 0)
		return rc;
	la.peer = peer;
	la.changed = false;
	rc = smarm__actor_ext_update(n, me, SMARM__SUB_OTP, link_add_fn, &la);
	if (rc != 0) { /* undo the target side */
		la.peer = me;
		(void)smarm__sig_update_far(n, peer, child, link_del_fn, &la);
	}
	return rc;
}

int smarm__sig_unlink(struct smarm_node *n, uint64_t me, uint64_t peer)
{
	struct link_arg la = { n, me, false, false };
	if (peer == me)
		return 0;
	(void)smarm__actor_ext_update(n, peer, SMARM__SUB_OTP, link_del_fn,
				      &la);
	la.peer = peer;
	(void)smarm__actor_ext_update(n, me, SMARM__SUB_OTP, link_del_fn, &la);
	return 0;
}

struct trap_set_arg {
	smarm_chan_t *cell; /* in: new (NULL: stop trapping); out: old */
};

static int trap_set_fn(void **state, void *arg)
{
	struct trap_set_arg *ts = arg;
	struct smarm__sig_actor *a = *state;
	smarm_chan_t *old = a->sa_trap;
	a->sa_trap = ts->cell;
	ts->cell = old;
	return 0;
}

int smarm__sig_trap_exit(struct smarm_node *n, uint64_t me, smarm_chan_t *h)
{
	struct trap_set_arg ts = { NULL };
	smarm_chan_t *cell = NULL;
	int rc;
	if (h != NULL) {
		rc = smarm__sig_chan_take(h, &cell);
		if (rc != 0)
			return rc;
	}
	ts.cell = cell;
	rc = smarm__actor_ext_update(n, me, SMARM__SUB_OTP, trap_set_fn, &ts);
	if (rc != 0) { /* ENOMEM; nothing changed */
		if (cell != NULL)
			smarm__chan_sender_release(cell);
		return rc;
	}
	if (ts.cell != NULL)
		smarm__chan_sender_release(ts.cell); /* the one replaced */
	return 0;
}

/*
 * ss_trap: a SHUTDOWN-strength request to `to` (an exit signal). A
 * trapping target gets it as a message (1: taken). A normal signal to a
 * non-trapping target is dropped (1), unless the target sent it itself
 * (0: the core ends it normally, as OTP's exit(self(), normal)). Else 0:
 * the core ends the target with the request's how and reason.
 */
int smarm__sig_trap_hook(struct smarm_node *n, uint64_t to,
			 const struct smarm__stop_req *req)
{
	struct trap_arg ta = { req->sr_how, req->sr_from, req->sr_code, false };
	int rc = smarm__actor_ext_update(n, to, SMARM__SUB_OTP, trap_send_fn,
					 &ta);
	if (rc == SMARM_ENOPROC)
		return rc;
	/* ENOMEM: no state block, so no trap channel: it does not trap. */
	if (ta.trapped)
		return 1;
	if (req->sr_how == SMARM_EXIT_NORMAL && req->sr_from != to)
		return 1;
	return 0;
}

/* An abnormal end, over one link: both halves in one hold of the peer. */
struct link_exit_arg {
	struct link_arg la;
	struct trap_arg ta;
};

/*
 * Under the peer's cold lock: take the ended actor off its links, then
 * deliver the exit signal to its trap channel if it traps; if not, ask
 * for the stop (SMARM__EXT_STOP), which the core makes in the same hold,
 * as smarm__sig_trap_hook would have left it to.
 */
static int link_exit_fn(void **state, void *arg)
{
	struct link_exit_arg *x = arg;
	(void)link_del_fn(state, &x->la);
	(void)trap_send_fn(state, &x->ta);
	return x->ta.trapped ? 0 : SMARM__EXT_STOP;
}

/*
 * A normal end, over one link, under the peer's cold lock: take the
 * ended actor off its links and, if the link was still in place there
 * (the peer did not unlink it) and the peer traps, queue the exit
 * signal: OTP's {'EXIT', Pid, normal}. A peer that does not trap
 * ignores a normal exit signal.
 */
static int link_normal_fn(void **state, void *arg)
{
	struct link_exit_arg *x = arg;
	(void)link_del_fn(state, &x->la);
	if (x->la.changed)
		(void)trap_send_fn(state, &x->ta);
	return 0;
}

/* The exit hook's part (signal.c): propagate over every link. */
void smarm__sig_links_exit(struct smarm_node *n, uint64_t pid,
			   struct smarm__sig_actor *a, int how, intptr_t reason)
{
	/* This side's ends, in one subtraction, before any peer hears of
	 * the end (whoever sees its effect sees the count settled). */
	smarm__gauge_add(n, SMARM__GAUGE_LINKS, -(int64_t)a->sa_nlinks);
	for (uint32_t i = 0; i < a->sa_nlinks; i++) {
		uint64_t peer = a->sa_links[a->sa_lfirst + i];
		struct link_exit_arg x = { { n, pid, false, false },
					   { how, pid, reason, false } };
		struct smarm__stop_req req = { pid, SMARM__STOP_SHUTDOWN,
					       reason, how };
		/* Off the peer's list first: its end never signals back. A
		 * normal end reaches a trapping peer only (OTP). */
		if (how == SMARM_EXIT_NORMAL)
			(void)smarm__actor_ext_update(n, peer, SMARM__SUB_OTP,
						      link_normal_fn, &x);
		else
			(void)smarm__actor_ext_update_stop(
				n, peer, SMARM__SUB_OTP, link_exit_fn, &x,
				&req);
	}
	a->sa_nlinks = 0;
	a->sa_lfirst = 0;
}
