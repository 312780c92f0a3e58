/* SPDX-License-Identifier: MIT */
/*
 * dist/watch.c - monitors and links that Erlang processes hold on
 * libsmarm actors: the watcher actor of a distribution. A MONITOR_P or
 * LINK from a peer becomes a libsmarm monitor of the local actor, owned
 * by the watcher; the actor's end becomes MONITOR_P_EXIT or EXIT to the
 * peer, with OTP's reasons (normal, shutdown, killed, noproc,
 * {smarm_crashed, Code}). DEMONITOR_P and UNLINK_ID remove them; a
 * lost connection removes everything held through it and delivers
 * noconnection (SMARM_EXIT_CRASHED, reason SMARM_ENOCONN) to each local
 * actor linked across it.
 *
 * Links set from here (smarm_dist_link): a libsmarm actor links a
 * process of another node. The link is an entry of d_olinks (under
 * d_lock, so the reader that gets the peer's EXIT and the actor that
 * unlinks agree on whether it still exists); the watcher monitors the
 * actor (an actor cannot monitor itself) and, at its end, takes the
 * entry and sends EXIT. A link already gone (unlinked, or ended by the
 * peer's EXIT) sends nothing and delivers nothing, as OTP's unlink
 * promises.
 *
 * The other way, the monitors libsmarm actors set on Erlang processes
 * (struct rmon, below): smarm_dist_monitor's, whose Down goes to the
 * owner's dist mailbox, and those of calls (smarm_dist_call, gen.c),
 * by pid or by registered name, whose Down and whose reply go to the
 * call's own channel; a call's ref is its tag, so the reader hands the
 * reply {Ref, Reply} over here (smarm__dist_rmon_reply) and drops one
 * that comes after the call ended.
 *
 * Who owns what. A libsmarm monitor belongs to the actor that set it
 * (only it may remove it). The reader of the connection a MONITOR_P or
 * LINK arrived on sets the monitor, at once (so an actor that ends right
 * after the peer's link or monitor still reports to it), aiming its Down
 * at the watcher's channel, and keeps its own list to find it again for
 * DEMONITOR_P, UNLINK_ID or an EXIT (conn.c). It hands each record to
 * the watcher, an actor of the distribution, which turns Downs into
 * MONITOR_P_EXIT and EXIT frames. A record of a monitor set (DW_ADD)
 * and a removal (DW_DEL) are deferred: queued on d_wq under d_lock
 * without waking the watcher, which takes them before whatever wakes
 * it next (a Down, a request, a nudge), in order. A call from Erlang is
 * MONITOR_P, the request and DEMONITOR_P (gen:do_call): posted, each
 * woke the watcher, an actor on another worker as often as not, twice
 * a call; deferred, the DEMONITOR_P finds its DW_ADD still queued and
 * both go without the watcher ever running. Its one channel carries:
 * smarm_signal_t Downs from the runtime, and requests, as
 * smarm_signal_t of kind WATCH_REQ whose reason is the request's address
 * (the element size is the runtime's; SMARM_SIGNAL_* kinds are small),
 * and answers to served calls that their servers could not write
 * themselves, of kind WATCH_ANSWER (gen.c), which it writes.
 *
 * Ownership: a request is malloc'd by its poster (or deferrer) and
 * freed by the watcher; a deferred DW_ADD that its DW_DEL finds still
 * queued is freed by that reader (smarm__dist_watch_undefer), and what
 * is left queued at the end by dist_free. Records and orphans are the
 * watcher's alone.
 * Locking: d_lock (a leaf) guards d_wq, d_wq_n and d_wq_orphans;
 * only the watcher touches its records.
 * Invariants:
 *   INV-1 a record is keyed by the reader's monitor ref (w_mref), unique
 *         in the node. A Down may overtake its record (the reader posts
 *         after the monitor is set): it waits as an orphan, matched when
 *         the record comes; at most ORPHANS_MAX orphans are kept (the
 *         oldest go: a record whose post failed never comes).
 *   INV-2 a record belongs to one connection incarnation (w_conn): a
 *         NODE_DOWN of an older connection to the same node removes
 *         nothing made through a newer one.
 *   INV-3 the watcher never connects: what it sends goes out only on a
 *         connection that is up (else it is dropped, as the peer is gone).
 *   INV-4 an olink is in d_olinks from smarm_dist_link until exactly one
 *         of: the actor's unlink, the peer's EXIT or UNLINK_ID, the
 *         actor's end, its node's NODE_DOWN. Whoever takes it out acts
 *         for it (EXIT out, exit signal in, or nothing); the watcher's
 *         monitor (ol_mref) is removed by the watcher.
 *   INV-5 a deferred record never waits behind a Down that needs it:
 *         the watcher publishes its orphan count (d_wq_orphans) only
 *         when it finds d_wq empty under d_lock, and a reader that
 *         defers under the same lock while that count is not 0 (or
 *         once WQ_NUDGE are queued) wakes the watcher with a nudge.
 *         A DW_DEL also drops the orphan of its monitor.
 * See: docs/distribution.md ("Links and monitors").
 */
#include "dist.h"

#include <ei.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WATCH_REQ 0x5744 /* a request, not a signal */

struct watch {
	struct watch *w_next;
	int w_kind;			      /* DW_MONITOR or DW_LINK */
	uint64_t w_conn;		      /* INV-2 */
	char w_node[SMARM_DIST_NODE_MAX + 1]; /* the peer */
	struct dist_epid w_remote;	      /* the Erlang process */
	smarm_pid_t w_local;		      /* the libsmarm actor */
	uint64_t w_mref;		      /* our monitor (INV-1) */
	uint8_t w_ref[DIST_TERM_SMALL];	      /* monitors: the Ref term */
	size_t w_ref_len;
	uint8_t w_proc[DIST_TERM_SMALL]; /* monitors: ToProc as sent */
	size_t w_proc_len;
};

int smarm__dist_watch_post(smarm_dist_t *d, struct dist_watch_req *q)
{
	smarm_signal_t s = { .kind = WATCH_REQ, .reason = (intptr_t)q };
	int rc = smarm_chan_send(d->d_watch_ch, &s);
	if (rc != 0)
		free(q);
	return rc;
}

/* A deferred request's list grows to this before the watcher is woken
 * to take it (memory stays bounded when no Down comes). */
#define WQ_NUDGE 64

void smarm__dist_watch_defer(smarm_dist_t *d, struct dist_watch_req *q)
{
	q->q_next = NULL;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	if (d->d_wq == NULL)
		d->d_wq_tail = &d->d_wq;
	*d->d_wq_tail = q;
	d->d_wq_tail = &q->q_next;
	/* INV-5: a Down may wait for this record as an orphan. */
	bool nudge = ++d->d_wq_n >= WQ_NUDGE || d->d_wq_orphans > 0;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (nudge) {
		/* A request of no address: "look at d_wq". */
		smarm_signal_t s = { .kind = WATCH_REQ, .reason = 0 };
		(void)smarm_chan_send(d->d_watch_ch, &s);
	}
}

bool smarm__dist_watch_undefer(smarm_dist_t *d, uint64_t mref)
{
	struct dist_watch_req *q = NULL;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	for (struct dist_watch_req **pp = &d->d_wq; *pp; pp = &(*pp)->q_next)
		if ((*pp)->q_op == DW_ADD && (*pp)->q_mref == mref) {
			q = *pp;
			*pp = q->q_next;
			if (d->d_wq_tail == &q->q_next)
				d->d_wq_tail = pp;
			d->d_wq_n--;
			break;
		}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	free(q);
	return q != NULL;
}

/*
 * The watcher takes the deferred requests, oldest first. orphans >= 0:
 * a Down found no record and would be kept as the orphans-th orphan;
 * only if nothing is deferred (NULL) is that count published, under the
 * lock a deferring reader reads it under (INV-5).
 */
static struct dist_watch_req *wq_take(smarm_dist_t *d, long orphans)
{
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	struct dist_watch_req *q = d->d_wq;
	d->d_wq = NULL;
	d->d_wq_n = 0;
	if (q == NULL && orphans >= 0)
		d->d_wq_orphans = (unsigned)orphans;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	return q;
}

/* An OTP exit reason for how/reason, appended at b[*k] (cap bytes). */
static void put_reason(uint8_t *b, size_t *k, size_t cap, int how,
		       intptr_t reason)
{
	char tmp[64];
	int i = 0;
	const char *atom = how == SMARM_EXIT_NORMAL	? "normal"
			   : how == SMARM_EXIT_SHUTDOWN ? "shutdown"
			   : how == SMARM_EXIT_STOPPED	? "killed"
			   : how == SMARM_EXIT_NOPROC	? "noproc"
							: NULL;
	(void)cap;
	if (atom != NULL) {
		ei_encode_atom_as(tmp, &i, atom, ERLANG_UTF8, ERLANG_UTF8);
	} else {
		ei_encode_tuple_header(tmp, &i, 2);
		ei_encode_atom_as(tmp, &i, "smarm_crashed", ERLANG_UTF8,
				  ERLANG_UTF8);
		ei_encode_longlong(tmp, &i, (long long)reason);
	}
	memcpy(b + *k, tmp, (size_t)i);
	*k += (size_t)i;
}

/* Send a raw control term to the peer of w, if it is still up; queued
 * (conn.c INV-6): the watcher never waits on one peer's socket. */
static void send_raw(smarm_dist_t *d, const char *node, const uint8_t *ctl,
		     size_t len)
{
	struct dist_out o = { .op = 0,
			      .raw = ctl,
			      .raw_len = len,
			      .no_connect = true,
			      .queued = true };
	(void)smarm__dist_send(d, node, &o, NULL, 0); /* INV-3 */
}

/* {21, ToProc, Watcher, Ref, Reason} or {3, Local, Remote, Reason}. */
static void send_down(smarm_dist_t *d, const struct watch *w, int how,
		      intptr_t reason)
{
	uint8_t b[4 * DIST_TERM_SMALL + 128];
	size_t k = 0;
	b[k++] = 131;
	b[k++] = 104;
	if (w->w_kind == DW_MONITOR) {
		b[k++] = 5;
		b[k++] = 97;
		b[k++] = DOP_MONITOR_P_EXIT;
		memcpy(b + k, w->w_proc, w->w_proc_len);
		k += w->w_proc_len;
		k += smarm__etf_put_pid(b + k, sizeof b - k, &w->w_remote);
		memcpy(b + k, w->w_ref, w->w_ref_len);
		k += w->w_ref_len;
	} else {
		struct dist_epid me;
		smarm__dist_local_epid(d, w->w_local, &me);
		b[k++] = 4;
		b[k++] = 97;
		b[k++] = DOP_EXIT;
		k += smarm__etf_put_pid(b + k, sizeof b - k, &me);
		k += smarm__etf_put_pid(b + k, sizeof b - k, &w->w_remote);
	}
	put_reason(b, &k, sizeof b, how, reason);
	send_raw(d, w->w_node, b, k);
}

/* The peer of a refused MONITOR_P or LINK hears noproc at once. */
static void refuse(smarm_dist_t *d, const struct dist_watch_req *q)
{
	struct watch w = { .w_kind = q->q_kind };
	memcpy(w.w_node, q->q_node, sizeof w.w_node);
	w.w_remote = q->q_remote;
	w.w_local = q->q_local;
	memcpy(w.w_ref, q->q_ref, q->q_ref_len);
	w.w_ref_len = q->q_ref_len;
	memcpy(w.w_proc, q->q_proc, q->q_proc_len);
	w.w_proc_len = q->q_proc_len;
	send_down(d, &w, SMARM_EXIT_NOPROC, 0);
}

/* ---- links of ours on processes of other nodes (INV-4) ---- */

struct olink {
	struct olink *ol_next;
	smarm_pid_t ol_local;	    /* the linking actor */
	struct dist_epid ol_remote; /* the process of the other node */
	uint64_t ol_mref;	    /* the watcher's monitor of ol_local, 0
				     * until it is set */
};

/* Which olinks olink_take takes: by local and remote, by the watcher's
 * monitor (mref), by node, or (all NULL, 0) any. */
struct olink_key {
	smarm_pid_t local;
	const struct dist_epid *remote;
	uint64_t mref;
	const char *node;
};

static bool olink_match(const struct olink *l, const struct olink_key *k)
{
	if (k->remote != NULL)
		return smarm_pid_eq(l->ol_local, k->local) &&
		       smarm__dist_epid_eq(&l->ol_remote, k->remote);
	if (k->mref != 0)
		return l->ol_mref == k->mref;
	return k->node == NULL || strcmp(l->ol_remote.node, k->node) == 0;
}

/* Take the first olink k matches into *out: whether there was one. */
static bool olink_take(smarm_dist_t *d, const struct olink_key *k,
		       struct olink *out)
{
	struct olink *hit = NULL;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	for (struct olink **pp = &d->d_olinks; *pp; pp = &(*pp)->ol_next)
		if (olink_match(*pp, k)) {
			hit = *pp;
			*pp = hit->ol_next;
			break;
		}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (hit != NULL) {
		*out = *hit;
		free(hit);
	}
	return hit != NULL;
}

int smarm__dist_olink_add(smarm_dist_t *d, smarm_pid_t local,
			  const struct dist_epid *remote, bool *fresh)
{
	struct olink_key k = { .local = local, .remote = remote };
	struct olink *l = calloc(1, sizeof *l);
	if (l == NULL)
		return SMARM_ENOMEM;
	l->ol_local = local;
	l->ol_remote = *remote;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	*fresh = true;
	/* Linked already: link/1 does nothing. */
	for (struct olink *x = d->d_olinks; x != NULL; x = x->ol_next)
		if (olink_match(x, &k))
			*fresh = false;
	if (*fresh) {
		l->ol_next = d->d_olinks;
		d->d_olinks = l;
	}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (!*fresh)
		free(l);
	return 0;
}

/* Ask the watcher to remove its monitor mref (a taken olink's). */
static void olink_unwatch(smarm_dist_t *d, uint64_t mref)
{
	struct dist_watch_req *q = calloc(1, sizeof *q);
	if (mref == 0 || q == NULL) {
		free(q); /* none set yet: the watcher sees the olink gone */
		return;
	}
	q->q_op = DW_UNLINK_OUT;
	q->q_mref = mref;
	(void)smarm__dist_watch_post(d, q);
}

bool smarm__dist_olink_take(smarm_dist_t *d, smarm_pid_t local,
			    const struct dist_epid *remote)
{
	struct olink_key k = { .local = local, .remote = remote };
	struct olink l;
	if (!olink_take(d, &k, &l))
		return false;
	olink_unwatch(d, l.ol_mref);
	return true;
}

/* DW_LINK_OUT: monitor the linker and note it in its olink, unless the
 * olink went meanwhile. Whether the monitor is set. */
static bool olink_watch(smarm_dist_t *d, const struct dist_watch_req *q)
{
	struct olink_key k = { .local = q->q_local, .remote = &q->q_remote };
	uint64_t mref;
	bool kept = false;
	if (smarm_monitor(q->q_local, d->d_watch_ch, &mref) != 0)
		return false;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	for (struct olink *x = d->d_olinks; x != NULL; x = x->ol_next)
		if (x->ol_mref == 0 && olink_match(x, &k)) {
			x->ol_mref = mref;
			kept = true;
			break;
		}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (!kept)
		(void)smarm_demonitor(mref, SMARM_DEMONITOR_FLUSH);
	return kept;
}

/* Every olink k matches goes: its monitor removed, its actor told
 * noconnection (the node or the distribution is gone). */
static void olink_lost(smarm_dist_t *d, const struct olink_key *k)
{
	struct olink l;
	while (olink_take(d, k, &l)) {
		if (l.ol_mref != 0)
			(void)smarm_demonitor(l.ol_mref, SMARM_DEMONITOR_FLUSH);
		(void)smarm_actor_send_exit(l.ol_local, SMARM_EXIT_CRASHED,
					    SMARM_ENOCONN);
	}
}

/* The Down of the watcher's monitor mref: if an olink's, the linker
 * ended and its peer gets EXIT. Whether it was one. */
static bool olink_down(smarm_dist_t *d, const smarm_signal_t *s)
{
	struct olink_key k = { .mref = s->ref };
	struct olink l;
	if (!olink_take(d, &k, &l))
		return false;
	struct watch w = { .w_kind = DW_LINK };
	memcpy(w.w_node, l.ol_remote.node, sizeof w.w_node);
	w.w_remote = l.ol_remote;
	w.w_local = l.ol_local;
	send_down(d, &w, s->how, s->reason);
	return true;
}

#define ORPHANS_MAX 1024

struct orphan {
	uint64_t o_mref;
	int o_how;
	intptr_t o_reason;
};

static void handle_req(smarm_dist_t *d, struct watch **list,
		       struct orphan *orph, size_t *norph,
		       struct dist_watch_req *q)
{
	switch (q->q_op) {
	case DW_ADD: {
		if (q->q_mref == 0) { /* no such actor: noproc at once */
			refuse(d, q);
			break;
		}
		struct watch *w = calloc(1, sizeof *w);
		if (w == NULL) /* the peer's monitor never fires */
			break;
		w->w_kind = q->q_kind;
		w->w_conn = q->q_conn;
		memcpy(w->w_node, q->q_node, sizeof w->w_node);
		w->w_remote = q->q_remote;
		w->w_local = q->q_local;
		w->w_mref = q->q_mref;
		memcpy(w->w_ref, q->q_ref, q->q_ref_len);
		w->w_ref_len = q->q_ref_len;
		memcpy(w->w_proc, q->q_proc, q->q_proc_len);
		w->w_proc_len = q->q_proc_len;
		for (size_t i = 0; i < *norph; i++)
			if (orph[i].o_mref == w->w_mref) { /* INV-1 */
				send_down(d, w, orph[i].o_how,
					  orph[i].o_reason);
				orph[i] = orph[--*norph];
				free(w);
				w = NULL;
				break;
			}
		if (w != NULL) {
			w->w_next = *list;
			*list = w;
		}
		break;
	}
	case DW_DEL:
		for (struct watch **pp = list; *pp; pp = &(*pp)->w_next)
			if ((*pp)->w_mref == q->q_mref) {
				struct watch *w = *pp;
				*pp = w->w_next;
				free(w);
				break;
			}
		/* Its Down came before its record: the peer no longer
		 * wants it (INV-1). */
		for (size_t i = 0; i < *norph; i++)
			if (orph[i].o_mref == q->q_mref) {
				orph[i] = orph[--*norph];
				break;
			}
		break;
	case DW_NODE_DOWN:
		for (struct watch **pp = list; *pp;) {
			struct watch *w = *pp;
			if (w->w_conn != q->q_conn) { /* INV-2 */
				pp = &w->w_next;
				continue;
			}
			if (w->w_kind == DW_LINK) /* noconnection */
				(void)smarm_actor_send_exit(w->w_local,
							    SMARM_EXIT_CRASHED,
							    SMARM_ENOCONN);
			*pp = w->w_next;
			free(w);
		}
		olink_lost(d, &(struct olink_key){ .node = q->q_node });
		break;
	case DW_LINK_OUT: {
		int set = olink_watch(d, q);
		(void)smarm_chan_send(q->q_ack, &set); /* the linker waits */
		break;
	}
	case DW_UNLINK_OUT:
		(void)smarm_demonitor(q->q_mref, SMARM_DEMONITOR_FLUSH);
		break;
	}
	free(q);
}

/* Handle a chain of deferred requests, oldest first, and say how many
 * orphans are left (only the watcher lowers the count). */
static void wq_handle(smarm_dist_t *d, struct watch **list, struct orphan *orph,
		      size_t *norph, struct dist_watch_req *q)
{
	if (q == NULL)
		return;
	while (q != NULL) {
		struct dist_watch_req *next = q->q_next;
		handle_req(d, list, orph, norph, q);
		q = next;
	}
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	if (d->d_wq_orphans > *norph)
		d->d_wq_orphans = (unsigned)*norph;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
}

static void watcher_end(void *arg)
{
	smarm__dist_actor_done(arg); /* conn.c INV-4 */
}

void smarm__dist_watcher(void *arg)
{
	smarm_dist_t *d = arg;
	struct watch *list = NULL;
	if (smarm_cleanup_push(watcher_end, d) != 0) {
		watcher_end(d);
		return;
	}
	struct orphan *orph = calloc(ORPHANS_MAX, sizeof *orph);
	size_t norph = 0;
	for (;;) {
		smarm_signal_t s;
		if (smarm_chan_recv(d->d_watch_ch, &s) != 0)
			break;
		/* What the readers deferred came before this (INV-5). */
		wq_handle(d, &list, orph, &norph, wq_take(d, -1));
		if (s.kind == WATCH_ANSWER) { /* a served call's (gen.c) */
			smarm__dist_gen_answer(d, (void *)s.reason);
			continue;
		}
		if (s.kind == WATCH_REQ) {
			struct dist_watch_req *q = (void *)s.reason;
			if (q == NULL) /* a nudge: d_wq is taken */
				continue;
			if (q->q_op == DW_STOP) {
				free(q);
				break;
			}
			handle_req(d, &list, orph, &norph, q);
			continue;
		}
		if (s.kind != SMARM_SIGNAL_DOWN || olink_down(d, &s))
			continue;
		for (;;) {
			struct watch **pp = &list;
			while (*pp != NULL && (*pp)->w_mref != s.ref)
				pp = &(*pp)->w_next;
			if (*pp != NULL) {
				struct watch *w = *pp;
				*pp = w->w_next; /* its monitor fired */
				send_down(d, w, s.how, s.reason);
				free(w);
				break;
			}
			if (orph == NULL)
				break;
			/* Its record may have been deferred meanwhile. */
			size_t k = norph < ORPHANS_MAX ? norph + 1 : norph;
			struct dist_watch_req *more = wq_take(d, (long)k);
			if (more != NULL) {
				wq_handle(d, &list, orph, &norph, more);
				continue;
			}
			/* INV-1 */
			if (norph == ORPHANS_MAX)
				memmove(orph, orph + 1, --norph * sizeof *orph);
			orph[norph++] =
				(struct orphan){ s.ref, s.how, s.reason };
			break;
		}
	}
	/* Deferred before the stop: links among them see noconnection. */
	wq_handle(d, &list, orph, &norph, wq_take(d, -1));
	free(orph);
	/* The distribution stops: links across it see noconnection. */
	while (list != NULL) {
		struct watch *w = list;
		list = w->w_next;
		if (w->w_kind == DW_LINK)
			(void)smarm_actor_send_exit(
				w->w_local, SMARM_EXIT_CRASHED, SMARM_ENOCONN);
		free(w);
	}
	olink_lost(d, &(struct olink_key){ 0 });
	/* Requests still queued are freed with the channel (its elements
	 * are plain signals: free their requests here); a linker waiting
	 * hears that no monitor was set. */
	smarm_signal_t s;
	while (smarm_chan_try_recv(d->d_watch_ch, &s) == 0)
		if (s.kind == WATCH_ANSWER) { /* gen.c INV-2: dropped */
			smarm__dist_gen_drop((void *)s.reason);
		} else if (s.kind == WATCH_REQ) {
			struct dist_watch_req *q = (void *)s.reason;
			int set = 0;
			if (q->q_op == DW_LINK_OUT)
				(void)smarm_chan_send(q->q_ack, &set);
			free(q);
		}
}

/* ---- monitors libsmarm actors hold on Erlang processes ---- */

/*
 * struct rmon - one monitor a local actor set on a process of another
 * node (smarm_dist_monitor, or a call's: smarm_dist_call), until its
 * Down is delivered, its call's reply came, or it is removed. In
 * d_rmons, under d_lock. Whoever takes one out of the table owns its
 * rm_call sender reference and releases it (rmon_release).
 */
struct rmon {
	struct rmon *rm_next;
	uint64_t rm_id;		/* the Ref's id (DIST_CALL_BIT: a call's) */
	smarm_pid_t rm_owner;	/* who gets the Down */
	struct dist_epid rm_to; /* the monitored process (by name: its
				   node only) */
	char rm_name[256];	/* by name: the registered name; "" by pid */
	smarm_chan_t *rm_call;	/* a call's channel (one sender reference
				   of ours), or NULL: the owner's mailbox */
};

/* Give up what a taken rmon holds. */
static void rmon_release(struct rmon *m)
{
	if (m->rm_call != NULL)
		(void)smarm_chan_sender_free(m->rm_call);
	m->rm_call = NULL;
}

/* Hand a message to m's owner: a call's channel, or its dist mailbox.
 * Takes msg; releases m's channel reference. */
static void rmon_deliver(smarm_dist_t *d, struct rmon *m,
			 struct smarm_dist_msg *msg)
{
	if (m->rm_call != NULL) {
		if (smarm_chan_send(m->rm_call, &msg) != 0)
			free(msg); /* the call ended: dropped */
	} else {
		smarm__dist_deliver_pid(d, m->rm_owner, msg);
	}
	rmon_release(m);
}

/* m's monitored process as a term (no version byte) into b (cap bytes):
 * its pid, or {Name, Node} for a monitor by name. Its size. */
static size_t rmon_proc(const struct rmon *m, uint8_t *b, size_t cap)
{
	if (m->rm_name[0] == '\0')
		return smarm__etf_put_pid(b, cap, &m->rm_to);
	int i = 0;
	char *c = (char *)b;
	if (cap < 2 * 260 + 8)
		return 0;
	ei_encode_tuple_header(c, &i, 2);
	ei_encode_atom_as(c, &i, m->rm_name, ERLANG_UTF8, ERLANG_UTF8);
	ei_encode_atom_as(c, &i, m->rm_to.node, ERLANG_UTF8, ERLANG_UTF8);
	return (size_t)i;
}

/* A reference of this node with id, as NEWER_REFERENCE_EXT. */
size_t smarm__dist_put_ref(smarm_dist_t *d, uint64_t id, uint8_t *b, size_t cap)
{
	size_t nl = strlen(d->d_name), need = 1 + 2 + 3 + nl + 4 + 12;
	if (need > cap)
		return need;
	size_t k = 0;
	uint32_t w[3] = { (uint32_t)(id & 0x3ffff), (uint32_t)(id >> 18),
			  (uint32_t)(id >> 50) };
	b[k++] = 90;
	b[k++] = 0;
	b[k++] = 3;
	b[k++] = 118;
	b[k++] = (uint8_t)(nl >> 8);
	b[k++] = (uint8_t)nl;
	memcpy(b + k, d->d_name, nl);
	k += nl;
	uint32_t v[4] = { d->d_creation, w[0], w[1], w[2] };
	for (int i = 0; i < 4; i++) {
		b[k++] = (uint8_t)(v[i] >> 24);
		b[k++] = (uint8_t)(v[i] >> 16);
		b[k++] = (uint8_t)(v[i] >> 8);
		b[k++] = (uint8_t)v[i];
	}
	return k;
}

/* The id of a reference of this node at r (advanced past it). */
int smarm__dist_get_ref(smarm_dist_t *d, struct etf_rd *r, uint64_t *id)
{
	const uint8_t *p = r->p + r->i;
	size_t left = r->n - r->i;
	if (left < 3 || p[0] != 90 || p[1] != 0 || p[2] != 3)
		return -1;
	struct etf_rd a = { r->p, r->n, r->i + 3 };
	char node[SMARM_DIST_NODE_MAX + 1];
	if (smarm__etf_atom(&a, node, sizeof node) != 0 || a.n - a.i < 16)
		return -1;
	const uint8_t *q = a.p + a.i;
	uint32_t v[4];
	for (int i = 0; i < 4; i++)
		v[i] = (uint32_t)q[4 * i] << 24 | (uint32_t)q[4 * i + 1] << 16 |
		       (uint32_t)q[4 * i + 2] << 8 | q[4 * i + 3];
	if (strcmp(node, d->d_name) != 0 || v[0] != d->d_creation)
		return -1;
	*id = (uint64_t)v[1] | (uint64_t)v[2] << 18 | (uint64_t)v[3] << 50;
	r->i = a.i + 16;
	return 0;
}

/* Deliver {'DOWN', Ref, process, Proc, Reason} for m (taken) to its
 * owner; proc and reason are terms (no version byte). */
static void deliver_down(smarm_dist_t *d, struct rmon *m, const uint8_t *proc,
			 size_t proc_len, const uint8_t *reason,
			 size_t reason_len)
{
	size_t cap = 64 + SMARM_DIST_NODE_MAX + proc_len + reason_len;
	uint8_t *b = malloc(cap);
	if (b == NULL) {
		rmon_release(m);
		return;
	}
	size_t k = 0;
	int i = 0;
	b[k++] = 131;
	b[k++] = 104;
	b[k++] = 5;
	ei_encode_atom_as((char *)b + k, &i, "DOWN", ERLANG_UTF8, ERLANG_UTF8);
	k += (size_t)i;
	k += smarm__dist_put_ref(d, m->rm_id, b + k, cap - k);
	i = 0;
	ei_encode_atom_as((char *)b + k, &i, "process", ERLANG_UTF8,
			  ERLANG_UTF8);
	k += (size_t)i;
	memcpy(b + k, proc, proc_len);
	k += proc_len;
	memcpy(b + k, reason, reason_len);
	k += reason_len;
	struct smarm_dist_msg *msg =
		smarm__dist_msg_new(b, k, SMARM_DIST_PID_NONE);
	free(b);
	if (msg == NULL) {
		rmon_release(m);
		return;
	}
	msg->m_down = m->rm_id;
	rmon_deliver(d, m, msg);
}

/* Take the monitor id out of the table: its owner and target. */
static bool rmon_take(smarm_dist_t *d, uint64_t id, struct rmon *out)
{
	bool hit = false;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	for (struct rmon **pp = &d->d_rmons; *pp; pp = &(*pp)->rm_next)
		if ((*pp)->rm_id == id) {
			struct rmon *m = *pp;
			*pp = m->rm_next;
			*out = *m;
			free(m);
			hit = true;
			break;
		}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	return hit;
}

static void down_noconnection(smarm_dist_t *d, struct rmon *m)
{
	uint8_t proc[2 * DIST_TERM_SMALL], reason[32];
	size_t pl = rmon_proc(m, proc, sizeof proc);
	int i = 0;
	ei_encode_atom_as((char *)reason, &i, "noconnection", ERLANG_UTF8,
			  ERLANG_UTF8);
	deliver_down(d, m, proc, pl, reason, (size_t)i);
}

/*
 * Send the control message {Op, Owner, ToProc, Ref} (MONITOR_P 19 or
 * DEMONITOR_P 20) of monitor m: ToProc its pid, or its name's atom;
 * no_connect: only on a connection that is up; queued (implies it):
 * the reader's, never waiting on the socket (conn.c INV-6).
 * smarm__dist_send's status.
 */
static int rmon_ctl(smarm_dist_t *d, uint8_t op, const struct rmon *m,
		    bool no_connect, bool queued)
{
	uint8_t b[3 * DIST_TERM_SMALL + 16];
	size_t k = 0;
	struct dist_epid me;
	smarm__dist_local_epid(d, m->rm_owner, &me);
	b[k++] = 131; /* version */
	b[k++] = 104; /* SMALL_TUPLE_EXT, 4 elements */
	b[k++] = 4;
	b[k++] = 97; /* SMALL_INTEGER_EXT */
	b[k++] = op;
	k += smarm__etf_put_pid(b + k, sizeof b - k, &me);
	if (m->rm_name[0] != '\0') {
		int i = 0;
		ei_encode_atom_as((char *)b + k, &i, m->rm_name, ERLANG_UTF8,
				  ERLANG_UTF8);
		k += (size_t)i;
	} else {
		k += smarm__etf_put_pid(b + k, sizeof b - k, &m->rm_to);
	}
	k += smarm__dist_put_ref(d, m->rm_id, b + k, sizeof b - k);
	struct dist_out o = { .op = 0,
			      .raw = b,
			      .raw_len = k,
			      .no_connect = no_connect,
			      .queued = queued };
	return smarm__dist_send(d, m->rm_to.node, &o, NULL, 0);
}

int smarm__dist_rmon_add(smarm_dist_t *d, smarm_pid_t owner,
			 const struct dist_epid *to, const char *name,
			 smarm_chan_t *call, uint64_t *id)
{
	struct rmon *m = calloc(1, sizeof *m);
	if (m == NULL)
		return SMARM_ENOMEM;
	m->rm_owner = owner;
	m->rm_to = *to;
	if (name != NULL)
		snprintf(m->rm_name, sizeof m->rm_name, "%s", name);
	if (call != NULL) {
		int rc = smarm_chan_sender_dup(call);
		if (rc != 0) {
			free(m);
			return rc == SMARM_ENOMEM ? rc : SMARM_EINTERNAL;
		}
		m->rm_call = call;
	}
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	m->rm_id = ++d->d_rmon_seq | (call != NULL ? DIST_CALL_BIT : 0);
	m->rm_next = d->d_rmons;
	d->d_rmons = m;
	struct rmon copy = *m; /* m may be taken once the lock goes */
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	*id = copy.rm_id;
	int rc = rmon_ctl(d, DOP_MONITOR_P, &copy, false, false);
	if (rc != 0 && rc != SMARM_ENOMEM) {
		/* As Erlang: no connection is a Down, not an error. */
		struct rmon gone;
		if (rmon_take(d, *id, &gone))
			down_noconnection(d, &gone);
		rc = 0;
	} else if (rc != 0) {
		struct rmon gone;
		if (rmon_take(d, *id, &gone))
			rmon_release(&gone);
	}
	return rc;
}

int smarm__dist_rmon_del(smarm_dist_t *d, smarm_pid_t owner, uint64_t id)
{
	struct rmon m;
	if (id & DIST_CALL_BIT) /* a call's: not the caller's to remove */
		return SMARM_ENOENT;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	bool mine = false;
	for (struct rmon *x = d->d_rmons; x; x = x->rm_next)
		if (x->rm_id == id)
			mine = smarm_pid_eq(x->rm_owner, owner);
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (!mine || !rmon_take(d, id, &m))
		return SMARM_ENOENT;
	/* The peer drops it; a MONITOR_P_EXIT already on its way finds no
	 * entry and is dropped. */
	(void)rmon_ctl(d, DOP_DEMONITOR_P, &m, true, false);
	rmon_release(&m);
	return 0;
}

/* MONITOR_P_EXIT {21, FromProc, ToPid, Ref, Reason} arrived (r after
 * the op): the owner's Down, unless it was removed. false: malformed. */
bool smarm__dist_rmon_exit(smarm_dist_t *d, struct etf_rd *r)
{
	size_t p0 = r->i;
	if (smarm__etf_skip(r) != 0) /* FromProc: a pid (or a name) */
		return false;
	size_t p1 = r->i;
	struct dist_epid to;
	uint64_t id;
	if (smarm__etf_pid(r, &to) != 0)
		return false;
	struct etf_rd at = *r;
	if (smarm__etf_skip(r) != 0)
		return false;
	size_t r0 = r->i;
	if (smarm__etf_skip(r) != 0)
		return false;
	struct rmon m;
	if (smarm__dist_get_ref(d, &at, &id) != 0 || !rmon_take(d, id, &m))
		return true; /* not ours, or removed: dropped */
	deliver_down(d, &m, r->p + p0, p1 - p0, r->p + r0, r->i - r0);
	return true;
}

/* The connection to node is gone: every monitor on its processes fires
 * with noconnection. */
void smarm__dist_rmon_node_down(smarm_dist_t *d, const char *node)
{
	for (;;) {
		struct rmon m;
		bool hit = false;
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		for (struct rmon **pp = &d->d_rmons; *pp; pp = &(*pp)->rm_next)
			if (strcmp((*pp)->rm_to.node, node) == 0) {
				struct rmon *x = *pp;
				*pp = x->rm_next;
				m = *x;
				free(x);
				hit = true;
				break;
			}
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
		if (!hit)
			return;
		down_noconnection(d, &m);
	}
}

/* ---- node monitors (smarm_dist_monitor_node) ---- */

/* One monitor_node(Node, true) of owner, until nodedown or a false. In
 * d_nmons, under d_lock. */
struct nmon {
	struct nmon *nm_next;
	smarm_pid_t nm_owner;
	char nm_node[SMARM_DIST_NODE_MAX + 1];
};

/* {nodedown, Node} into owner's dist mailbox. */
static void deliver_nodedown(smarm_dist_t *d, smarm_pid_t owner,
			     const char *node)
{
	char b[16 + 2 * (SMARM_DIST_NODE_MAX + 8)];
	int i = 0;
	ei_encode_version(b, &i);
	ei_encode_tuple_header(b, &i, 2);
	ei_encode_atom_as(b, &i, "nodedown", ERLANG_UTF8, ERLANG_UTF8);
	ei_encode_atom_as(b, &i, node, ERLANG_UTF8, ERLANG_UTF8);
	struct smarm_dist_msg *m =
		smarm__dist_msg_new(b, (size_t)i, SMARM_DIST_PID_NONE);
	if (m != NULL)
		smarm__dist_deliver_pid(d, owner, m);
}

/* Take the first nmon of node (and of owner, unless owner is none). */
static bool nmon_take(smarm_dist_t *d, smarm_pid_t owner, const char *node,
		      struct nmon *out)
{
	struct nmon *hit = NULL;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	for (struct nmon **pp = &d->d_nmons; *pp; pp = &(*pp)->nm_next)
		if (strcmp((*pp)->nm_node, node) == 0 &&
		    (owner.id == 0 || smarm_pid_eq((*pp)->nm_owner, owner))) {
			hit = *pp;
			*pp = hit->nm_next;
			break;
		}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (hit != NULL) {
		*out = *hit;
		free(hit);
	}
	return hit != NULL;
}

int smarm__dist_nmon_add(smarm_dist_t *d, smarm_pid_t owner, const char *node)
{
	struct nmon *m = calloc(1, sizeof *m), gone;
	if (m == NULL)
		return SMARM_ENOMEM;
	m->nm_owner = owner;
	snprintf(m->nm_node, sizeof m->nm_node, "%s", node);
	/* Kept before the connection is tried: a connection that is lost
	 * from now on finds it (smarm__dist_nmon_node_down). */
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	m->nm_next = d->d_nmons;
	d->d_nmons = m;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	int rc = smarm__dist_connect(d, node);
	if (rc == SMARM_ENOMEM || rc == SMARM_ESTATE) {
		(void)nmon_take(d, owner, node, &gone);
		return rc;
	}
	/* As monitor_node/2: a node out of reach is a nodedown at once. */
	if (rc != 0 && nmon_take(d, owner, node, &gone))
		deliver_nodedown(d, owner, node);
	return 0;
}

void smarm__dist_nmon_del(smarm_dist_t *d, smarm_pid_t owner, const char *node)
{
	struct nmon gone;
	(void)nmon_take(d, owner, node, &gone);
}

void smarm__dist_nmon_node_down(smarm_dist_t *d, const char *node)
{
	struct nmon m;
	while (nmon_take(d, SMARM_PID_NONE, node, &m))
		deliver_nodedown(d, m.nm_owner, node);
}

void smarm__dist_rmon_free_all(smarm_dist_t *d)
{
	while (d->d_nmons != NULL) {
		struct nmon *m = d->d_nmons;
		d->d_nmons = m->nm_next;
		free(m);
	}
	while (d->d_rmons != NULL) {
		struct rmon *m = d->d_rmons;
		d->d_rmons = m->rm_next;
		rmon_release(m);
		free(m);
	}
	while (d->d_olinks != NULL) { /* made after the watcher ended */
		struct olink *l = d->d_olinks;
		d->d_olinks = l->ol_next;
		free(l);
	}
}

/* ---- the monitors of calls (smarm_dist_call) ---- */

/* The call behind ref id ends without its reply: remove its monitor
 * (with DEMONITOR_P if tell), unless its reply or Down took it first. */
void smarm__dist_rmon_cancel(smarm_dist_t *d, uint64_t id, bool tell)
{
	struct rmon m;
	if (!rmon_take(d, id, &m))
		return;
	if (tell)
		(void)rmon_ctl(d, DOP_DEMONITOR_P, &m, true, false);
	rmon_release(&m);
}

bool smarm__dist_rmon_reply(smarm_dist_t *d, smarm_pid_t to, const uint8_t *t,
			    size_t len, smarm_dist_pid_t from)
{
	/* {Ref, Reply}: 131, SMALL_TUPLE_EXT 2, NEWER_REFERENCE_EXT. */
	if (len < 4 || t[1] != 104 || t[2] != 2 || t[3] != 90)
		return false;
	struct etf_rd r = { t, len, 3 };
	uint64_t id;
	if (smarm__dist_get_ref(d, &r, &id) != 0 || !(id & DIST_CALL_BIT))
		return false;
	struct rmon m;
	bool other = false; /* a ref of a call of another actor's */
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	for (struct rmon *x = d->d_rmons; x; x = x->rm_next)
		if (x->rm_id == id)
			other = !smarm_pid_eq(x->rm_owner, to);
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (other)
		return false; /* not its reply: an ordinary message */
	if (!rmon_take(d, id, &m))
		return true; /* a call that ended: its late reply is dropped */
	/* As gen:do_call: the monitor goes with the reply. */
	(void)rmon_ctl(d, DOP_DEMONITOR_P, &m, true, true); /* the reader */
	size_t body = len - r.i;
	struct smarm_dist_msg *msg = malloc(sizeof *msg + 1 + body);
	if (msg == NULL) { /* the call times out */
		rmon_release(&m);
		return true;
	}
	msg->m_from = from;
	msg->m_down = 0;
	msg->m_len = 1 + body;
	msg->m_term[0] = 131;
	memcpy(msg->m_term + 1, t + r.i, body);
	rmon_deliver(d, &m, msg);
	return true;
}
