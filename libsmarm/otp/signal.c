/* SPDX-License-Identifier: MIT */
/*
 * signal.c - the OTP layer's signal half as a subsystem (SMARM__SUB_OTP):
 * its per-node state, the actor exit hook that fires monitors and links,
 * exit signals (kill, shutdown, crash, normal) and the trap hook through
 * which a trappable stop request becomes a message, the spawn hook that
 * links and monitors a child before it can run, the terminal records,
 * and the statistics. Monitors are monitor.c's, links and trapping
 * link.c's; the public calls are sig_api.c's.
 *
 * State. An actor that uses none of this has no OTP state: nothing is
 * added to the slot, the spawn path or the exit path. The first monitor,
 * link, trap or mark gives it a struct smarm__sig_actor through
 * smarm__actor_ext_update. This is a sized subsystem (core subsys.h): the
 * state lives in a room of the slot's extension block, kept across
 * tenants, so setting it up and ending it allocate nothing; the core
 * hands every update a zeroed state when the actor has none, and takes
 * it back when sig_actor_trim finds it empty. ext_update works under
 * the actor's cold lock and
 * guarantees (core actor.c INV-3) that state attached to a live actor
 * reaches this file's exit hook exactly once, with the final exit
 * record. That is the whole no-lost-window argument: a monitor or link
 * either attaches before the target is DONE (and the hook fires it), or
 * finds it DONE (and the caller reports NOPROC itself).
 *
 * Exit signals. Every trappable signal (a link's propagation, a shutdown
 * from any source, smarm_actor_send_exit) is a core stop request of
 * SHUTDOWN strength carrying the how and reason the target should end
 * with; the core hands it to ss_trap first (link.c), which delivers it
 * as a SMARM_SIGNAL_EXIT message to a trapping target and drops a normal
 * one to a non-trapping target. What ss_trap leaves, the core carries
 * out. A kill is a KILL-strength request, never trapped.
 *
 * Ownership: the per-node state is created at open and freed at close;
 * per-actor state belongs to its actor's slot (cold lock) until the exit
 * hook takes it, then to the hook, which empties it (the core keeps the
 * block). The runtime's sender
 * references (monitor and trap channels) are released by whoever removes
 * the entry that holds them.
 * Locking: per-actor state only under the actor's cold lock (SLOT rank,
 * inside smarm__actor_ext_update), or by the spawn hook before the child
 * is published (smarm__actor_ext_update_child, no lock: nobody else can
 * reach it yet); signals may be sent under it (CHANNEL
 * and RUNQ rank nest under SLOT); sn_term_lock (TABLE rank) guards the
 * terminal records and is taken with no other lock held.
 * Invariants:
 *   INV-1 a monitor entry on a target holds one sender reference, given
 *         back exactly once, by whoever removes the entry: the target's
 *         exit hook, demonitor, or the watcher's exit hook.
 *   INV-2 a Down is sent only under its watcher's cold lock, in the same
 *         hold that removes the watcher's record of the ref; demonitor
 *         removes that record under the same lock. So exactly one of
 *         them wins, and a demonitor that loses finds the Down already
 *         queued (which SMARM_DEMONITOR_FLUSH then removes).
 *   INV-3 an actor's OTP state is taken back when it becomes empty (no
 *         monitor, link, trap channel, mark, channel a Down of its
 *         monitors went into, or restart counted: sig_actor_trim), so
 *         an actor that stopped
 *         using the layer costs its exit nothing.
 *   INV-4 a terminal record is stamped only for a tenancy that was made
 *         watchable while alive, by the exit hook (before DONE is
 *         published), so a watcher that finds the actor DONE finds the
 *         record; it is overwritten only by the slot's next watchable
 *         tenant's end.
 *   INV-5 no signal is dropped silently: a Down its channel refuses
 *         (SMARM_ECLOSED, SMARM_ENOMEM) becomes an exit signal to the
 *         watcher from the target, how SMARM_EXIT_CRASHED, reason the
 *         refusal (a Down due at smarm_monitor fails the call instead);
 *         an exit signal a trap channel refuses is handled as if the
 *         actor did not trap.
 * See: docs/architecture/otp.md.
 */
#include "sig.h"

#include <stdlib.h>
#include <string.h>

/* A terminal record: how the watchable tenant of a slot ended. */
struct smarm__sig_term {
	uint32_t st_key; /* the pid's low half (node, slot); 0: empty */
	uint32_t st_gen; /* the tenant's generation (the pid's high half) */
	int st_how;
	intptr_t st_reason;
};

struct smarm__sig_node *smarm__sig_node(struct smarm_node *n)
{
	return smarm__node_sub(n, SMARM__SUB_OTP);
}

int smarm__sig_vec_grow(void **v, uint32_t *cap, uint32_t need, size_t esz)
{
	uint32_t c;
	void *nv;
	if (need <= *cap)
		return 0;
	c = *cap ? *cap * 2 : 4;
	while (c < need)
		c *= 2;
	nv = realloc(*v, (size_t)c * esz);
	if (nv == NULL)
		return SMARM_ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

static bool sig_actor_empty(const struct smarm__sig_actor *a)
{
	/* The flush list counts: a Down it names may still be queued. */
	return a->sa_nmons == 0 && a->sa_wfirst == a->sa_wend &&
	       a->sa_nlinks == 0 && a->sa_nflush == 0 && a->sa_trap == NULL &&
	       !a->sa_watchable && a->sa_restarts == 0;
}

/* Free what hangs off a state (its arrays); the block is the core's. */
static void sig_actor_clear(struct smarm__sig_actor *a)
{
	/* Most states hold one of these arrays at most: skip the calls. */
	if (a->sa_mons != &a->sa_mon1 && a->sa_mons != NULL)
		free(a->sa_mons);
	if (a->sa_wrefs != NULL)
		free(a->sa_wrefs);
	if (a->sa_flush != NULL)
		free(a->sa_flush);
	if (a->sa_links != a->sa_link2 && a->sa_links != NULL)
		free(a->sa_links);
}

/* ss_actor_trim: after every update (INV-3). */
static bool sig_actor_trim(void *actor_state)
{
	struct smarm__sig_actor *a = actor_state;
	if (!sig_actor_empty(a))
		return false;
	sig_actor_clear(a);
	return true;
}

static int restart_fn(void **state, void *arg)
{
	struct smarm__sig_actor *a = *state;
	(void)arg;
	if (a->sa_restarts < UINT32_MAX)
		a->sa_restarts++;
	return 0;
}

void smarm__sig_count_restart(struct smarm_node *n, uint64_t me)
{
	atomic_fetch_add_explicit(&smarm__sig_node(n)->sn_sup_restarts, 1,
				  memory_order_relaxed);
	/* Out of memory: the record misses one; the stat has it. */
	(void)smarm__actor_ext_update(n, me, SMARM__SUB_OTP, restart_fn, NULL);
}

/*
 * The cell of a channel handle the caller passed for signals, with a
 * runtime sender reference taken on it: 0; SMARM_EINVAL no channel
 * handle, or elements that are not a smarm_signal_t; SMARM_ESTATE freed;
 * SMARM_ECLOSED no sender left; SMARM_ENOMEM.
 */
int smarm__sig_chan_take(smarm_chan_t *h, smarm_chan_t **cell)
{
	smarm_chan_t *ch;
	int rc = smarm__chan_decode(h, &ch);
	if (rc != 0)
		return rc;
	/* Constant for the tenant; a reuse since is caught by the hold. */
	if (ch->esz != sizeof(smarm_signal_t))
		return SMARM_EINVAL;
	rc = smarm__chan_sender_hold(ch, h);
	if (rc != 0)
		return rc;
	*cell = ch;
	return 0;
}

/*
 * Send one signal into a channel whose sender reference the runtime
 * holds: 0, or the channel's refusal (SMARM_ECLOSED nobody receives from
 * it any more, SMARM_ENOMEM), which the caller must act on (INV-5).
 */
int smarm__sig_send(smarm_chan_t *cell, int kind, int how, uint64_t from,
		    uint64_t ref, intptr_t reason)
{
	return smarm__sig_send_ref(cell, kind, how, from, ref, reason, NULL);
}

/* smarm__sig_send; released non-NULL: and give the reference back in
 * the same hold if that cannot close the channel (smarm__chan_send_held:
 * *released says whether it was). */
int smarm__sig_send_ref(smarm_chan_t *cell, int kind, int how, uint64_t from,
			uint64_t ref, intptr_t reason, bool *released)
{
	smarm_signal_t sig;
	memset(&sig, 0, sizeof sig);
	sig.kind = kind;
	sig.how = how;
	sig.from.id = from;
	sig.ref = ref;
	sig.reason = reason;
	return smarm__chan_send_held(cell, &sig, released);
}

/* ------------------------------------------------ exit signals */

/*
 * Send an exit signal from `from` (0: none) to `to`, how SMARM_EXIT_*. A
 * kill is untrappable (the target ends SMARM_EXIT_STOPPED); anything
 * else goes through the trap hook (link.c): a trapping target gets a
 * message, a normal signal to a non-trapping target other than the
 * sender is dropped, anything else ends the target with how and reason
 * (a linked peer that was killed sends STOPPED, trappable, as OTP's
 * `killed`). 0 or SMARM_ENOPROC.
 */
int smarm__sig_exit_signal(struct smarm_node *n, uint64_t to, uint64_t from,
			   int how, intptr_t reason, bool kill)
{
	struct smarm__stop_req req = {
		from, kill ? SMARM__STOP_KILL : SMARM__STOP_SHUTDOWN,
		kill ? 0 : reason, kill ? SMARM_EXIT_STOPPED : how
	};
	return smarm__actor_request_stop(n, to, &req);
}

/* ------------------------------------------------ terminal records */

static uint32_t term_slot(uint32_t key, uint32_t cap)
{
	return (uint32_t)(key * 0x9e3779b1u) & (cap - 1);
}

/* Under sn_term_lock: the record for key, or where it would go. */
static struct smarm__sig_term *term_find(struct smarm__sig_node *sn,
					 uint32_t key)
{
	uint32_t i = term_slot(key, sn->sn_capterm);
	while (sn->sn_term[i].st_key != 0 && sn->sn_term[i].st_key != key)
		i = (i + 1) & (sn->sn_capterm - 1);
	return &sn->sn_term[i];
}

/* Under sn_term_lock: room for one more key (load <= 1/2). */
static int term_reserve(struct smarm__sig_node *sn)
{
	struct smarm__sig_term *old = sn->sn_term;
	uint32_t oldcap = sn->sn_capterm;
	uint32_t cap;
	if ((sn->sn_nterm + 1) * 2 <= sn->sn_capterm)
		return 0;
	cap = oldcap ? oldcap * 2 : 64;
	sn->sn_term = calloc(cap, sizeof *sn->sn_term);
	if (sn->sn_term == NULL) {
		sn->sn_term = old;
		return SMARM_ENOMEM;
	}
	sn->sn_capterm = cap;
	for (uint32_t i = 0; i < oldcap; i++)
		if (old[i].st_key != 0)
			*term_find(sn, old[i].st_key) = old[i];
	free(old);
	return 0;
}

/* A pid's halves: the key of its slot (never 0) and its generation. */
#define TERM_KEY(pid) ((uint32_t)(pid) + 1u)
#define TERM_GEN(pid) ((uint32_t)((pid) >> 32))

static void term_stamp(struct smarm_node *n, uint64_t pid, int how,
		       intptr_t reason)
{
	struct smarm__sig_node *sn = smarm__sig_node(n);
	smarm__lock(&sn->sn_term_lock, SMARM__RANK_TABLE);
	if (term_reserve(sn) == 0) { /* out of memory: no record (NOPROC) */
		struct smarm__sig_term *t = term_find(sn, TERM_KEY(pid));
		if (t->st_key == 0)
			sn->sn_nterm++;
		t->st_key = TERM_KEY(pid);
		t->st_gen = TERM_GEN(pid);
		t->st_how = how;
		t->st_reason = reason;
	}
	smarm__unlock(&sn->sn_term_lock, SMARM__RANK_TABLE);
}

bool smarm__sig_term_lookup(struct smarm_node *n, uint64_t pid, int *how,
			    intptr_t *reason)
{
	struct smarm__sig_node *sn = smarm__sig_node(n);
	bool found = false;
	smarm__lock(&sn->sn_term_lock, SMARM__RANK_TABLE);
	if (sn->sn_capterm > 0) {
		struct smarm__sig_term *t = term_find(sn, TERM_KEY(pid));
		if (t->st_key != 0 && t->st_gen == TERM_GEN(pid)) {
			*how = t->st_how;
			*reason = t->st_reason;
			found = true;
		}
	}
	smarm__unlock(&sn->sn_term_lock, SMARM__RANK_TABLE);
	return found;
}

static int mark_fn(void **state, void *arg)
{
	struct smarm__sig_actor *a = *state;
	(void)arg;
	a->sa_watchable = true;
	return 0;
}

int smarm__sig_mark_watchable(struct smarm_node *n, uint64_t pid)
{
	return smarm__actor_ext_update(n, pid, SMARM__SUB_OTP, mark_fn, NULL);
}

/* ------------------------------------------------ subsystem hooks */

static int sig_open(struct smarm_node *n, const struct smarm_config *cfg,
		    void **state)
{
	struct smarm__sig_node *sn = calloc(1, sizeof *sn);
	(void)n;
	(void)cfg;
	if (sn == NULL)
		return SMARM_ENOMEM;
	*state = sn;
	return 0;
}

static void sig_close(struct smarm_node *n, void *state)
{
	struct smarm__sig_node *sn = state;
	(void)n;
	free(sn->sn_term);
	free(sn);
}

/*
 * An actor with OTP state ended (on its own stack, no lock held; the
 * exit record is final): stamp its record, fire its monitors, drop the
 * monitors it set, propagate over its links, give up its trap channel.
 */
static void sig_actor_exit(struct smarm__slot *s, uint64_t pid,
			   const struct smarm__exit *ex, void *actor_state)
{
	struct smarm__sig_actor *a = actor_state;
	/* A worker of the node runs every exit hook (subsys.h). */
	struct smarm_node *n = smarm__worker()->node;
	(void)s;
	if (a->sa_watchable)
		term_stamp(n, pid, ex->ex_how, ex->ex_code);
	smarm__sig_monitors_exit(n, pid, a, ex->ex_how, ex->ex_code);
	smarm__sig_links_exit(n, pid, a, ex->ex_how, ex->ex_code);
	if (a->sa_trap != NULL)
		smarm__chan_sender_release(a->sa_trap);
	sig_actor_clear(a);
}

static int sig_trap(struct smarm_node *n, void *state, uint64_t pid,
		    const struct smarm__stop_req *req)
{
	(void)state;
	return smarm__sig_trap_hook(n, pid, req);
}

/* The spawn options' link and monitor, before the child can run. */
static int sig_spawn(struct smarm_node *n, void *state, uint64_t parent,
		     uint64_t child, const struct smarm_spawn_opts *opts)
{
	const struct smarm__spawn_ext *ext = smarm__spawn_opts_ext(opts);
	int rc = 0;
	(void)state;
	if (parent == 0)
		return 0; /* the root: nobody to link to or monitor for */
	if (smarm__spawn_opts_link(n, opts))
		rc = smarm__sig_link(n, parent, child, true);
	if (rc == 0 && ext != NULL && ext->so_mon_ch != NULL) {
		uint64_t ref = 0;
		rc = smarm__sig_monitor(n, parent, child, true, ext->so_mon_ch,
					&ref);
		if (rc == 0 && ext->so_mon_ref != NULL)
			*ext->so_mon_ref = ref;
	}
	return rc;
}

static int sig_get_stat(const struct smarm_node *n, const void *state, int stat,
			int64_t *out)
{
	struct smarm__sig_node *sn = (struct smarm__sig_node *)state;
	switch (stat) {
	case SMARM_STAT_MONITORS:
		*out = smarm__gauge_read(n, SMARM__GAUGE_MONITORS);
		return 0;
	case SMARM_STAT_LINKS:
		*out = smarm__gauge_read(n, SMARM__GAUGE_LINKS);
		return 0;
	case SMARM_STAT_SUP_RESTARTS:
		*out = atomic_load(&sn->sn_sup_restarts);
		return 0;
	default:
		return SMARM_EINVAL;
	}
}

const struct smarm__subsys smarm__sig_subsys = {
	.ss_name = "otp-sig",
	.ss_open = sig_open,
	.ss_close = sig_close,
	.ss_actor_exit = sig_actor_exit,
	.ss_get_stat = sig_get_stat,
	.ss_trap = sig_trap,
	.ss_spawn = sig_spawn,
	.ss_actor_size = sizeof(struct smarm__sig_actor),
	.ss_actor_trim = sig_actor_trim,
};
