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
 * Who owns what. A libsmarm monitor belongs to the actor that set it
 * (only it may remove it). The reader of the connection a MONITOR_P or
 * LINK arrived on sets the monitor, at once (so an actor that ends right
 * after the peer's link or monitor still reports to it), aiming its Down
 * at the watcher's channel, and keeps its own list to find it again for
 * DEMONITOR_P, UNLINK_ID or an EXIT (conn.c). It posts each record to
 * the watcher, an actor of the distribution, which turns Downs into
 * MONITOR_P_EXIT and EXIT frames. Its one channel carries both:
 * smarm_signal_t Downs from the runtime, and requests, as
 * smarm_signal_t of kind WATCH_REQ whose reason is the request's address
 * (the element size is the runtime's; SMARM_SIGNAL_* kinds are small).
 *
 * Ownership: a request is malloc'd by its poster and freed by the
 * watcher. Records and orphans are the watcher's alone.
 * Locking: none; only the watcher touches its records.
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
 * See: docs/distribution.md ("Links and monitors").
 */
#include "dist.h"

#include <ei.h>

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

/* Send a raw control term to the peer of w, if it is still up. */
static void send_raw(smarm_dist_t *d, const char *node, const uint8_t *ctl,
		     size_t len)
{
	struct dist_out o = {
		.op = 0, .raw = ctl, .raw_len = len, .no_connect = true
	};
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
		break;
	}
	free(q);
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
		if (s.kind == WATCH_REQ) {
			struct dist_watch_req *q = (void *)s.reason;
			if (q->q_op == DW_STOP) {
				free(q);
				break;
			}
			handle_req(d, &list, orph, &norph, q);
			continue;
		}
		if (s.kind != SMARM_SIGNAL_DOWN)
			continue;
		struct watch **pp = &list;
		while (*pp != NULL && (*pp)->w_mref != s.ref)
			pp = &(*pp)->w_next;
		if (*pp != NULL) {
			struct watch *w = *pp;
			*pp = w->w_next; /* its monitor fired */
			send_down(d, w, s.how, s.reason);
			free(w);
		} else if (orph != NULL) { /* INV-1 */
			if (norph == ORPHANS_MAX)
				memmove(orph, orph + 1, --norph * sizeof *orph);
			orph[norph++] =
				(struct orphan){ s.ref, s.how, s.reason };
		}
	}
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
	/* Requests still queued are freed with the channel (its elements
	 * are plain signals: free their requests here). */
	smarm_signal_t s;
	while (smarm_chan_try_recv(d->d_watch_ch, &s) == 0)
		if (s.kind == WATCH_REQ)
			free((void *)s.reason);
}
