/* SPDX-License-Identifier: MIT */
/*
 * dist/conn.c - connections to other nodes, and what travels on them:
 * the table of connections, connect-on-demand, the frame writer, the
 * reader actor of each connection (4-byte length framing, ticks, the
 * control messages), the accept loop, local delivery into dist
 * mailboxes, and the table of pids (smarm_dist_pid_t values).
 *
 * Glossary. A *connection* (struct dist_conn) links this node to one
 * other. Its *reader* is an actor that owns the receiving side: it
 * reads frames, hands their messages to local actors, answers what the
 * protocol wants answered (UNLINK_ID), sets and removes the monitors
 * behind the peer's MONITOR_P and LINK (their Downs go to the watcher,
 * watch.c), delivers the peer's EXIT and EXIT2 as exit signals, and
 * sends a tick when the line has been quiet for a tick interval; it
 * also hands the replies of calls of ours to their callers (watch.c)
 * and queues `$gen_call` and `$gen_cast` requests to served servers
 * (gen.c). Writers are
 * the sending actors themselves, one at a time under the connection's green
 * mutex, except the watcher's and the readers' (queued: below).
 *
 * Queued writes (INV-6). The watcher writes for every connection (the
 * Downs and exit signals of our actors, answers given later), and a
 * reader must go on reading (and timing its peer's ticks) whatever its
 * socket's send side does, so neither waits on a socket: a frame of
 * theirs goes out at once if nothing is queued, nobody writes and the
 * socket takes it whole (sq_push), else (what is left of it) to the
 * connection's queue (c_sq), written in order by the connection's
 * writer actor (started as the connection comes up, poked when the
 * queue fills from empty) or by any writer that takes c_wmu first. A
 * peer that stops reading holds up its own connection's frames only,
 * as the BEAM's runtime never blocks a signal to one node on another's
 * busy port, and is dropped at its tick time. Until 0.5.x the watcher
 * waited in such a write for every connection, and the reader in its
 * tick, so a stuck peer was never dropped.
 *
 * Connection states (c_state, under d_lock):
 *
 *     NEW --(first writer: connect + handshake ok, reader spawned)--> UP
 *     NEW --(connect or handshake failed; displaced)---------------> DEAD
 *     UP  --(reader: EOF, error, malformed frame, silence; a writer's
 *            failed write; close_all; displaced after "alive")------> DEAD
 *
 * An accepted connection is listed NEW, its c_wmu held by its actor,
 * from the moment the handshake's arbiter lets it go on (so writers to
 * the peer queue on it, as OTP's wait on a pending connection) and is
 * made UP by that actor after the handshake.
 * A DEAD connection is out of the table (the next send makes a new one)
 * and its socket is shut down, so a parked writer or reader wakes; its
 * fd is closed by the last reference's owner (conn_put).
 *
 * Simultaneous connect (OTP's rule, handshake.c INV-5): an outgoing NEW
 * connection to a peer whose own attempt we accept is *displaced* when
 * our name is the lower one: the accepted one takes its place in the
 * table and its socket is shut down. The writers of a connection that
 * gave way (displaced, told nok, or an accepted one that failed) do not
 * fail: they go around again (c_retry) and use the connection the
 * peer's attempt makes, or, after a nok, wait for it to arrive (for
 * DIST_NOK_WAIT_NS, then they try their own again: a peer that died
 * after its nok fails them at once, not at the bound); all within
 * DIST_SETUP_NS.
 *
 * Ownership: see dist.h. Messages (struct smarm_dist_msg) are malloc'd
 * here and owned by the mailbox channel once sent (its destructor frees
 * those never received), then by the receiver.
 * Locking: d_lock (leaf) as dist.h says; c_wmu (green) for a socket's
 * writers and the NEW -> UP setup. d_lock is never held while a green
 * mutex is taken or an io call parks.
 * Invariants:
 *   INV-1 a frame's length is bounded (SMARM_DIST_TERM_MAX + control)
 *         before any buffer grows for it; anything malformed ends the
 *         connection with a log line, never the node.
 *   INV-2 every term handed to a local actor passed smarm__etf_valid.
 *   INV-3 c_fd is closed only when c_refs reaches 0: no actor waits on
 *         it then (the reader has left its loop, no writer holds it).
 *   INV-4 each actor this layer spawns was counted in d_actors before
 *         its spawn and reports its end through smarm__dist_actor_done
 *         as its last act, touching nothing of d afterwards; so does a
 *         server's actor writing a served call's answer (gen.c).
 *   INV-5 a connection's reader wakes at least once per tick interval
 *         (d_tick_ns), whatever the traffic (its clock, struct rclock:
 *         a timed send to its own channel while none is pending, so at
 *         most two timers per interval): it drops a peer silent for
 *         four intervals (the tick time) and sends a tick when nothing
 *         went out for an interval, so the peer never sees us silent
 *         for more than two (OTP's net_kernel rule, both sides).
 *   INV-6 a queued frame (c_sq) is written before any frame a writer
 *         takes c_wmu for after it was queued. An UP connection has a
 *         writer actor (c_sq_writer, set in the step that makes it UP;
 *         a connection whose writer cannot be spawned is not kept),
 *         until the writer ends; c_sq_busy is true from the queue's
 *         first frame until the writer finds it empty (under d_lock),
 *         a poke is sent whenever it is set, and the writer looks once
 *         per tick interval anyway; with no writer, whoever queues
 *         writes the queue. So no frame waits with no writer to come.
 * See: docs/distribution.md.
 */
#include "dist.h"

#include "../io/io.h"

#include <ei.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { C_NEW, C_UP, C_DEAD };

/* What the writers queued on a connection that died before it was up
 * do: report the failure, go around again at once (it was displaced,
 * or an accepted one failed: the table has or will get another), or
 * wait for the peer's connection to arrive first (we were told nok). */
enum { R_FAIL, R_AGAIN, R_AWAIT };

/* After a nok, the peer's own connection is awaited this long before
 * our attempt is made again (smarm__dist_send). */
#define DIST_NOK_WAIT_NS (1000ull * 1000000ull)

/* Control terms we build are at most this long (two pids, a name). */
#define CTL_MAX 1024
#define FRAME_MAX ((size_t)SMARM_DIST_TERM_MAX + CTL_MAX) /* INV-1 */

struct rwatch;

struct dist_conn {
	smarm_dist_t *c_d;	  /* owner (immutable) */
	struct dist_conn *c_next; /* d_lock: the table */
	int c_refs;		  /* d_lock */
	int c_state;		  /* d_lock: C_NEW, C_UP, C_DEAD */
	bool c_listed;		  /* d_lock: in d_conns */
	bool c_accepted;	  /* made by the acceptor (set
				     before it is listed) */
	bool c_displaced;	  /* d_lock: an accepted one took its place */
	int c_retry;		  /* d_lock: R_*, what its writers do once it
				     is DEAD before it was UP */
	char c_node[SMARM_DIST_NODE_MAX + 1]; /* the peer (immutable) */
	int c_fd;	     /* set (under d_lock) before UP, then
				constant; -1 none */
	int c_wfd;	     /* a dup of c_fd for writers: the io layer
				takes one waiter per fd, and the reader
				waits on c_fd; -1 none */
	uint64_t c_flags;    /* the peer's, set before UP */
	uint32_t c_creation; /* the peer's, set before UP */
	uint64_t c_id;	     /* incarnation, set when UP (d_lock); 0 before:
				the watcher's records name it */
	struct rwatch *c_watches;    /* the reader's monitors for the peer */
	uint64_t c_nadds;	     /* the reader's: monitors set */
	smarm_mutex_t *c_wmu;	     /* writers and the setup */
	uint8_t *c_wbuf;	     /* c_wmu: the frame being written */
	_Atomic uint64_t c_last_tx;  /* when a frame last went out: written
					under c_wmu, read by the reader
					(relaxed: a hint for ticks) */
	size_t c_wcap;		     /* c_wmu */
	struct sq_frame *c_sq;	     /* d_lock: queued frames (INV-6) */
	struct sq_frame **c_sq_tail; /* d_lock: &last->f_next, or &c_sq */
	bool c_sq_busy;		     /* d_lock: the writer is due (INV-6) */
	bool c_sq_writer;	     /* d_lock: c has a writer actor */
	smarm_chan_t *c_sq_ch;	     /* pokes for the writer (immutable) */
	struct sq_frame *c_sq_out;   /* c_wmu: taken from c_sq, being
					written (freed with c if its
					writer is stopped meanwhile) */
};

/* A frame queued on a connection (INV-6): length prefix, pass-through
 * byte, control term and payload, as written. */
struct sq_frame {
	struct sq_frame *f_next;
	size_t f_len;
	uint8_t f_bytes[];
};

/* ---- logging ---- */

void smarm__dist_log(smarm_dist_t *d, int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	smarm__log_vevent(d->d_node, level, SMARM_REPORT_LINE,
			  smarm_actor_self().id, fmt, ap);
	va_end(ap);
}

/* ---- messages and local delivery ---- */

static void msg_elem_free(void *elem)
{
	free(*(struct smarm_dist_msg **)elem);
}

const smarm_msgtype_t *smarm__dist_msgtype(void)
{
	static const smarm_msgtype_t *_Atomic type;
	const smarm_msgtype_t *t =
		atomic_load_explicit(&type, memory_order_acquire);
	if (t == NULL) {
		/* Types are process-wide and interned: a racing define
		 * returns the same one. */
		if (smarm_msgtype_define("smarm.dist.msg",
					 sizeof(struct smarm_dist_msg *),
					 msg_elem_free, &t) != 0)
			return NULL;
		atomic_store_explicit(&type, t, memory_order_release);
	}
	return t;
}

smarm_elem_free_cb smarm__dist_msg_elem_free(void)
{
	return msg_elem_free;
}

struct smarm_dist_msg *smarm__dist_msg_new(const void *term, size_t len,
					   smarm_dist_pid_t from)
{
	struct smarm_dist_msg *m = malloc(sizeof *m + len);
	if (m == NULL)
		return NULL;
	m->m_from = from;
	m->m_down = 0;
	m->m_len = len;
	memcpy(m->m_term, term, len);
	return m;
}

int smarm__dist_deliver_pid(smarm_dist_t *d, smarm_pid_t pid,
			    struct smarm_dist_msg *m)
{
	const smarm_msgtype_t *t = smarm__dist_msgtype();
	/* A dead target, or one without a dist mailbox, drops it, as a
	 * send to a dead process does in Erlang. */
	if (t == NULL || smarm_node_send(d->d_node, pid, t, &m) != 0) {
		free(m);
		return -1;
	}
	return 0;
}

int smarm__dist_deliver_name(smarm_dist_t *d, const char *name,
			     struct smarm_dist_msg *m)
{
	const smarm_msgtype_t *t = smarm__dist_msgtype();
	if (t == NULL || strlen(name) > SMARM_NAME_MAX || name[0] == '\0' ||
	    smarm_node_send_name(d->d_node, name, t, &m) != 0) {
		free(m);
		return -1;
	}
	return 0;
}

/* ---- the pid table ---- */

static uint32_t pid_hash(const struct dist_pid_ent *e)
{
	uint64_t h = (uint64_t)e->pe_node * 0x9e3779b97f4a7c15ull;
	h ^= ((uint64_t)e->pe_num << 32 | e->pe_serial) * 0xc2b2ae3d27d4eb4full;
	h ^= (uint64_t)e->pe_creation * 0x165667b19e3779f9ull;
	return (uint32_t)(h ^ (h >> 29));
}

static int node_index(smarm_dist_t *d, const char *node, uint32_t *out)
{
	for (uint32_t i = 0; i < d->d_nnodes; i++)
		if (strcmp(d->d_nodes[i], node) == 0) {
			*out = i;
			return 0;
		}
	if (d->d_nnodes == 65536)
		return SMARM_EAGAIN;
	if (d->d_nnodes == d->d_capnodes) {
		uint32_t cap = d->d_capnodes ? 2 * d->d_capnodes : 8;
		void *p = realloc(d->d_nodes, cap * sizeof *d->d_nodes);
		if (p == NULL)
			return SMARM_ENOMEM;
		d->d_nodes = p;
		d->d_capnodes = cap;
	}
	snprintf(d->d_nodes[d->d_nnodes], sizeof d->d_nodes[0], "%s", node);
	*out = d->d_nnodes++;
	return 0;
}

static int phash_grow(smarm_dist_t *d)
{
	uint32_t cap = d->d_phcap ? 2 * d->d_phcap : 64;
	uint32_t *h = calloc(cap, sizeof *h);
	if (h == NULL)
		return SMARM_ENOMEM;
	for (uint32_t id = 1; id <= d->d_npids; id++) {
		uint32_t k = pid_hash(&d->d_pids[id - 1]) & (cap - 1);
		while (h[k] != 0)
			k = (k + 1) & (cap - 1);
		h[k] = id;
	}
	free(d->d_phash);
	d->d_phash = h;
	d->d_phcap = cap;
	return 0;
}

int smarm__dist_intern(smarm_dist_t *d, const struct dist_epid *e,
		       smarm_dist_pid_t *out)
{
	int rc;
	struct dist_pid_ent ent = { 0, e->num, e->serial, e->creation };
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	rc = node_index(d, e->node, &ent.pe_node);
	if (rc != 0)
		goto out;
	if (d->d_phcap < 2 * (d->d_npids + 1) && (rc = phash_grow(d)) != 0)
		goto out;
	uint32_t k = pid_hash(&ent) & (d->d_phcap - 1);
	for (; d->d_phash[k] != 0; k = (k + 1) & (d->d_phcap - 1)) {
		const struct dist_pid_ent *x = &d->d_pids[d->d_phash[k] - 1];
		if (x->pe_node == ent.pe_node && x->pe_num == ent.pe_num &&
		    x->pe_serial == ent.pe_serial &&
		    x->pe_creation == ent.pe_creation) {
			out->id = d->d_phash[k];
			goto out;
		}
	}
	if (d->d_npids == SMARM_DIST_PIDS_MAX) {
		rc = SMARM_EAGAIN;
		goto out;
	}
	if (d->d_npids == d->d_cappids) {
		uint32_t cap = d->d_cappids ? 2 * d->d_cappids : 64;
		void *p = realloc(d->d_pids, cap * sizeof *d->d_pids);
		if (p == NULL) {
			rc = SMARM_ENOMEM;
			goto out;
		}
		d->d_pids = p;
		d->d_cappids = cap;
	}
	d->d_pids[d->d_npids++] = ent;
	d->d_phash[k] = d->d_npids;
	out->id = d->d_npids;
out:
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	return rc;
}

int smarm__dist_pid_get(smarm_dist_t *d, smarm_dist_pid_t p,
			struct dist_epid *e)
{
	int rc = SMARM_EINVAL;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	if (p.id >= 1 && p.id <= d->d_npids) {
		const struct dist_pid_ent *x = &d->d_pids[p.id - 1];
		memcpy(e->node, d->d_nodes[x->pe_node], sizeof e->node);
		e->num = x->pe_num;
		e->serial = x->pe_serial;
		e->creation = x->pe_creation;
		rc = 0;
	}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	return rc;
}

/* ---- the connection table ---- */

static void sq_free(struct sq_frame *f)
{
	while (f != NULL) {
		struct sq_frame *next = f->f_next;
		free(f);
		f = next;
	}
}

/*
 * Wake c's writer: it looks at the queue, and at c's state. A send is a
 * slice point, where a stop may end the caller: so never while it holds
 * c_wmu or owns a frame with no cleanup to undo that (conn_kill's
 * callers have one; sq_push pokes after it let both go). (The channel's
 * internal send, a second caller of it, cost the hot path of every send
 * its inlining: ping_pong_rtt +1.36% instructions.) A poke lost for
 * want of memory is made up by the writer's own look once per tick
 * interval (sq_main).
 */
static void sq_poke(struct dist_conn *c)
{
	static const uint8_t one = 1;
	(void)smarm_chan_send(c->c_sq_ch, &one);
}

/* Drop a reference; the last one closes the fd (INV-3) and frees. */
static void conn_put(struct dist_conn *c)
{
	smarm_dist_t *d = c->c_d;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	int left = --c->c_refs;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (left > 0)
		return;
	SMARM_ASSERT(!c->c_listed);
	if (c->c_fd >= 0)
		close(c->c_fd);
	if (c->c_wfd >= 0)
		close(c->c_wfd);
	smarm_mutex_free(c->c_wmu);
	free(c->c_wbuf);
	sq_free(c->c_sq);
	sq_free(c->c_sq_out);
	smarm_chan_sender_free(c->c_sq_ch);
	smarm_chan_receiver_free(c->c_sq_ch);
	free(c);
}

static void unlist_locked(smarm_dist_t *d, struct dist_conn *c)
{
	if (!c->c_listed)
		return;
	for (struct dist_conn **pp = &d->d_conns; *pp; pp = &(*pp)->c_next)
		if (*pp == c) {
			*pp = c->c_next;
			break;
		}
	c->c_listed = false;
	c->c_refs--;		     /* the table's */
	SMARM_ASSERT(c->c_refs > 0); /* the caller holds one */
}

/* Make c DEAD: out of the table, its socket shut down so that every
 * actor parked on it wakes. The caller holds a reference. */
static void conn_kill_quiet(struct dist_conn *c);

static void conn_kill(struct dist_conn *c)
{
	conn_kill_quiet(c);
	sq_poke(c); /* its writer sees it dead and ends */
}

/* conn_kill without the writer's poke (a slice point): the caller pokes
 * once it holds nothing a stop would leave behind. */
static void conn_kill_quiet(struct dist_conn *c)
{
	smarm_dist_t *d = c->c_d;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	c->c_state = C_DEAD;
	unlist_locked(d, c);
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (c->c_fd >= 0)
		shutdown(c->c_fd, SHUT_RDWR);
}

static struct dist_conn *conn_alloc(smarm_dist_t *d, const char *node)
{
	struct dist_conn *c = calloc(1, sizeof *c);
	if (c == NULL)
		return NULL;
	if (smarm_mutex_alloc(&c->c_wmu) != 0) {
		free(c);
		return NULL;
	}
	if (smarm_chan_alloc(&c->c_sq_ch, 1, NULL) != 0) {
		smarm_mutex_free(c->c_wmu);
		free(c);
		return NULL;
	}
	c->c_d = d;
	c->c_fd = c->c_wfd = -1;
	c->c_sq_tail = &c->c_sq;
	snprintf(c->c_node, sizeof c->c_node, "%s", node);
	return c;
}

/* The live connection to node, with a reference, made NEW if none. */
static int conn_get(smarm_dist_t *d, const char *node, bool create,
		    struct dist_conn **out)
{
	struct dist_conn *fresh = NULL;
	for (;;) {
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		if (d->d_stopping) {
			smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
			if (fresh != NULL)
				conn_put(fresh);
			return SMARM_ESTATE;
		}
		for (struct dist_conn *c = d->d_conns; c; c = c->c_next)
			if (strcmp(c->c_node, node) == 0) {
				c->c_refs++;
				smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
				if (fresh != NULL)
					conn_put(fresh);
				*out = c;
				return 0;
			}
		if (fresh != NULL) {
			fresh->c_next = d->d_conns;
			d->d_conns = fresh;
			fresh->c_listed = true;
			fresh->c_refs = 2; /* the table's and ours */
			smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
			*out = fresh;
			return 0;
		}
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
		if (!create)
			return SMARM_ENOCONN;
		/* Allocate outside the lock, then look again. */
		fresh = conn_alloc(d, node);
		if (fresh == NULL)
			return SMARM_ENOMEM;
		fresh->c_refs = 1;
	}
}

/* The listed connection to node, or NULL (under d_lock). */
static struct dist_conn *find_locked(smarm_dist_t *d, const char *node)
{
	for (struct dist_conn *c = d->d_conns; c; c = c->c_next)
		if (strcmp(c->c_node, node) == 0)
			return c;
	return NULL;
}

/* Put the accepted connection c in the table as NEW, in x's place if x
 * (an outgoing NEW one) is there: x is displaced, its writers go around
 * to c (under d_lock). Returns x's fd to shut down, x with a reference
 * the caller drops (conn_put), or -1. */
static int list_accepted_locked(smarm_dist_t *d, struct dist_conn *c,
				const char *peer, struct dist_conn **xout)
{
	int xfd = -1;
	struct dist_conn *x = find_locked(d, peer);
	*xout = NULL;
	if (x != NULL) {
		x->c_displaced = true;
		x->c_retry = R_AGAIN;
		x->c_refs++;
		unlist_locked(d, x);
		xfd = x->c_fd;
		*xout = x;
	}
	snprintf(c->c_node, sizeof c->c_node, "%s", peer);
	c->c_next = d->d_conns;
	d->d_conns = c;
	c->c_listed = true;
	c->c_refs++; /* the table's */
	return xfd;
}

static void displaced_done(int xfd, struct dist_conn *x)
{
	if (x == NULL)
		return;
	if (xfd >= 0)
		shutdown(xfd, SHUT_RDWR); /* its handshake or reader ends */
	conn_put(x);
}

/* The handshake's arbiter (handshake.c INV-5), arg the accepted
 * connection: go on (listed NEW) if no connection to peer exists or is
 * being made; if ours is being made, nok when our name is the greater,
 * else displace ours (ok_simultaneous); alive if one is up. */
static int arb_verdict(void *arg, const char *peer)
{
	struct dist_conn *c = arg, *x = NULL;
	smarm_dist_t *d = c->c_d;
	int verdict, xfd = -1;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	struct dist_conn *have = find_locked(d, peer);
	if (d->d_stopping || strcmp(peer, d->d_name) == 0)
		verdict = HS_NOK;
	else if (have == NULL)
		verdict = HS_GO;
	else if (have->c_state == C_UP)
		verdict = HS_ALIVE;
	else if (have->c_accepted || strcmp(d->d_name, peer) > 0)
		verdict = HS_NOK; /* another accept, or ours goes on */
	else
		verdict = HS_SIMULTANEOUS;
	if (verdict == HS_GO || verdict == HS_SIMULTANEOUS)
		xfd = list_accepted_locked(d, c, peer, &x);
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	displaced_done(xfd, x);
	return verdict;
}

/* After "alive" answered true: the peer lost the connection we still
 * hold; end it and go on in its place. */
static int arb_displace(void *arg, const char *peer)
{
	struct dist_conn *c = arg, *x = NULL;
	smarm_dist_t *d = c->c_d;
	int verdict = HS_GO, xfd = -1;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	struct dist_conn *have = find_locked(d, peer);
	if (d->d_stopping ||
	    (have != NULL && have->c_accepted && have->c_state != C_UP))
		verdict = HS_NOK;
	else
		xfd = list_accepted_locked(d, c, peer, &x);
	if (x != NULL && x->c_state == C_UP)
		x->c_state = C_DEAD;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (x != NULL)
		smarm__dist_log(d, SMARM_LOG_INFO,
				"dist: %s reconnected; its old connection "
				"ends",
				peer);
	displaced_done(xfd, x);
	return verdict;
}

/* The initiator's question on "alive" and after a failed read: is this
 * attempt still the one in the table (OTP's is_pending)? */
static bool conn_pending(void *arg)
{
	struct dist_conn *c = arg;
	smarm__lock(&c->c_d->d_lock, SMARM__RANK_TABLE);
	bool pending = !c->c_displaced && c->c_listed;
	smarm__unlock(&c->c_d->d_lock, SMARM__RANK_TABLE);
	return pending;
}

void smarm__dist_close_all(smarm_dist_t *d)
{
	for (;;) {
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		struct dist_conn *c = d->d_conns;
		if (c != NULL)
			c->c_refs++;
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
		if (c == NULL)
			return;
		conn_kill(c);
		conn_put(c);
	}
}

void smarm__dist_actor_done(smarm_dist_t *d)
{
	smarm_chan_t *done = d->d_done; /* INV-4: read before the count */
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	d->d_actors--;
	bool stopping = d->d_stopping;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	int one = 1;
	/* Only a stop reads d_done (it sets d_stopping first, then counts):
	 * before it, an end is the count alone, and d_done does not grow
	 * by one per end for the handle's life. */
	if (stopping)
		(void)smarm_chan_send(done, &one); /* stale: harmless */
}

/* ---- writing ---- */

/* Room for n bytes in c's write buffer (under c_wmu). */
static int wbuf_reserve(struct dist_conn *c, size_t n)
{
	if (n <= c->c_wcap)
		return 0;
	size_t cap = c->c_wcap ? c->c_wcap : 4096;
	while (cap < n)
		cap *= 2;
	uint8_t *p = realloc(c->c_wbuf, cap);
	if (p == NULL)
		return SMARM_ENOMEM;
	c->c_wbuf = p;
	c->c_wcap = cap;
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Encode o's control term at b (CTL_MAX bytes; with ei; pids by hand,
 * since ei's encoder may narrow V4 pid fields): its length. */
static int encode_ctl(const struct dist_conn *c, char *b,
		      const struct dist_out *o)
{
	int i = 0;
	bool sender = o->op == DOP_SEND && o->from != NULL &&
		      (c->c_flags & DFLAG_SEND_SENDER) != 0;
	ei_encode_version(b, &i);
	if (o->op == DOP_REG_SEND) {
		/* {6, From, '', ToName} */
		ei_encode_tuple_header(b, &i, 4);
		ei_encode_long(b, &i, DOP_REG_SEND);
		i += (int)smarm__etf_put_pid((uint8_t *)b + i, CTL_MAX - i,
					     o->from);
		ei_encode_atom_as(b, &i, "", ERLANG_UTF8, ERLANG_UTF8);
		ei_encode_atom_as(b, &i, o->name, ERLANG_UTF8, ERLANG_UTF8);
	} else if (sender) {
		/* {22, From, To} */
		ei_encode_tuple_header(b, &i, 3);
		ei_encode_long(b, &i, DOP_SEND_SENDER);
		i += (int)smarm__etf_put_pid((uint8_t *)b + i, CTL_MAX - i,
					     o->from);
		i += (int)smarm__etf_put_pid((uint8_t *)b + i, CTL_MAX - i,
					     o->to);
	} else if (o->op == DOP_SEND) {
		/* {2, '', To} */
		ei_encode_tuple_header(b, &i, 3);
		ei_encode_long(b, &i, DOP_SEND);
		ei_encode_atom_as(b, &i, "", ERLANG_UTF8, ERLANG_UTF8);
		i += (int)smarm__etf_put_pid((uint8_t *)b + i, CTL_MAX - i,
					     o->to);
	} else {
		/* A prebuilt control term (UNLINK_ID_ACK). */
		SMARM_ASSERT(o->raw_len <= CTL_MAX);
		memcpy(b, o->raw, o->raw_len);
		i = (int)o->raw_len;
	}
	SMARM_ASSERT(i > 0 && i <= CTL_MAX);
	return i;
}

/* Lay out o's frame (o's control, then payload) at b, which has room
 * for 5 + CTL_MAX + plen bytes: its length. */
static size_t frame_put(const struct dist_conn *c, uint8_t *b,
			const struct dist_out *o, const void *payload,
			size_t plen)
{
	size_t ctl = (size_t)encode_ctl(c, (char *)b + 5, o);
	size_t body = 1 + ctl + plen;
	put32(b, (uint32_t)body);
	b[4] = 112; /* pass-through: no atom cache */
	if (plen > 0)
		memcpy(b + 5 + ctl, payload, plen);
	return 4 + body;
}

/* Write len bytes of frames on UP connection c, under c_wmu. A failed
 * write kills c. */
static int conn_put_bytes(struct dist_conn *c, const uint8_t *b, size_t len)
{
	if (smarm__dist_write_full(c->c_wfd, b, len) != 0) {
		conn_kill(c);
		return SMARM_ENOCONN;
	}
	atomic_store_explicit(&c->c_last_tx, smarm_now_ns(),
			      memory_order_relaxed);
	return 0;
}

/*
 * Under c_wmu: take c's queued frames and write them in order (INV-6);
 * last (c's writer): an empty queue ends its duty (c_sq_busy false).
 * Whether the queue was empty.
 */
static bool sq_drain(struct dist_conn *c, bool last)
{
	smarm_dist_t *d = c->c_d;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	struct sq_frame *f = c->c_sq;
	__atomic_store_n(&c->c_sq, NULL, __ATOMIC_RELAXED); /* conn_write */
	c->c_sq_tail = &c->c_sq;
	if (f == NULL && last)
		c->c_sq_busy = false;
	bool up = c->c_state == C_UP;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (f == NULL)
		return true;
	sq_free(c->c_sq_out); /* a writer stopped in a drain left it */
	c->c_sq_out = f;
	for (struct sq_frame *x = f; x != NULL && up; x = x->f_next)
		up = conn_put_bytes(c, x->f_bytes, x->f_len) == 0;
	c->c_sq_out = NULL;
	sq_free(f); /* a connection that died drops the rest */
	return false;
}

/* Write one frame (o's control, then payload) on UP connection c, under
 * c_wmu, after the frames queued before it (INV-6). A failed write
 * kills c. */
static int conn_write(struct dist_conn *c, const struct dist_out *o,
		      const void *payload, size_t plen)
{
	if (wbuf_reserve(c, 5 + CTL_MAX + plen) != 0)
		return SMARM_ENOMEM;
	if (SMARM_UNLIKELY(__atomic_load_n(&c->c_sq, __ATOMIC_RELAXED) != NULL))
		(void)sq_drain(c, false);
	return conn_put_bytes(c, c->c_wbuf,
			      frame_put(c, c->c_wbuf, o, payload, plen));
}

static void reader_main(void *arg);
static void sq_main(void *arg);

/* A spawn of fn(c), an actor of the layer whose reference and d_actors
 * count the caller took (INV-4; writer: and set c_sq_writer). */
struct spawn_undo {
	struct dist_conn *u_conn;
	smarm_pid_t u_pid; /* set once the actor exists: it reports */
	bool u_writer;
};

static void spawn_undo(void *arg)
{
	struct spawn_undo *u = arg;
	struct dist_conn *c = u->u_conn;
	smarm_dist_t *d = c->c_d;
	if (u->u_pid.id != 0)
		return;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	c->c_refs--; /* the caller holds one: not the last */
	d->d_actors--;
	if (u->u_writer)
		c->c_sq_writer = false;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
}

/* Spawn fn(c) as above: 0; or an error, what the caller took given
 * back, also if a stop ends the caller in the spawn (a safe point)
 * before the actor exists. */
static int spawn_counted(struct dist_conn *c, smarm_actor_cb fn, bool writer)
{
	struct spawn_undo u = { c, SMARM_PID_NONE, writer };
	if (smarm_cleanup_push(spawn_undo, &u) != 0) {
		spawn_undo(&u);
		return SMARM_ENOMEM;
	}
	int rc = smarm_actor_spawn(&u.u_pid, fn, c, NULL);
	smarm_cleanup_pop(true);
	return rc;
}

/* The NEW -> UP step of an outgoing connection, under c_wmu: connect,
 * handshake, spawn the reader. On failure c is DEAD (and DIST_GAVE_WAY
 * says it gave way to the peer's attempt: c_retry is set). */
static int conn_setup(struct dist_conn *c)
{
	smarm_dist_t *d = c->c_d;
	char alive[SMARM_DIST_NODE_MAX + 1];
	const char *host;
	uint32_t addr;
	int port = 0, fd = -1, rc;
	if ((rc = smarm__dist_split(c->c_node, alive, sizeof alive, &host)) !=
		    0 ||
	    (rc = smarm__dist_resolve(host, &addr)) != 0 ||
	    (rc = smarm__epmd_port(addr, alive, &port)) != 0 ||
	    (rc = smarm__dist_tcp_connect(addr, port, &fd)) != 0)
		goto fail;
	/* Published under d_lock: an accept that displaces c shuts it. */
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	bool displaced = c->c_displaced;
	if (!displaced)
		c->c_fd = fd;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (displaced) {
		close(fd);
		rc = DIST_GAVE_WAY;
		goto fail;
	}
	rc = smarm__hs_initiate(d, fd, c->c_node, &c->c_flags, &c->c_creation,
				conn_pending, c);
	if (rc != 0)
		goto fail;
	c->c_wfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (c->c_wfd < 0) {
		rc = SMARM_ENOMEM;
		goto fail;
	}
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	bool stopping = d->d_stopping;
	displaced = c->c_displaced || !c->c_listed;
	if (!stopping && !displaced) {
		c->c_refs += 2; /* the reader's and the writer's */
		d->d_actors += 2;
		c->c_sq_writer = true; /* INV-6: UP has a writer */
		c->c_state = C_UP;
		c->c_id = ++d->d_conn_seq;
	}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (stopping || displaced) {
		rc = stopping ? SMARM_ESTATE : DIST_GAVE_WAY;
		goto fail;
	}
	if (spawn_counted(c, sq_main, true) != 0) {
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		c->c_refs--; /* the reader's, not spawned either */
		d->d_actors--;
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
		rc = SMARM_ENOMEM;
		goto fail;
	}
	if (spawn_counted(c, reader_main, false) != 0) {
		rc = SMARM_ENOMEM; /* the kill below ends the writer */
		goto fail;
	}
	smarm__dist_log(d, SMARM_LOG_INFO, "dist: connected to %s", c->c_node);
	return 0;
fail:
	if (rc == SMARM_ETIMEDOUT)
		rc = SMARM_ENOCONN;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	if (c->c_displaced)
		rc = DIST_GAVE_WAY; /* whatever its handshake saw */
	if (rc == DIST_GAVE_WAY && c->c_retry == R_FAIL)
		c->c_retry = R_AWAIT; /* told nok: the peer's will come */
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	conn_kill(c);
	return rc;
}

/* What a sender holds, undone by a cleanup handler if it is stopped
 * inside the send (every io wait is a safe point): a frame cut short
 * would corrupt the stream, so the connection dies with it. */
struct send_guard {
	struct dist_conn *g_conn; /* the reference held */
	bool g_locked;		  /* c_wmu held, a frame maybe half out */
};

static void send_guard_undo(void *arg)
{
	struct send_guard *g = arg;
	if (g->g_locked) {
		conn_kill(g->g_conn);
		smarm_mutex_unlock(g->g_conn->c_wmu);
	}
	conn_put(g->g_conn);
}

/* One try of smarm__dist_send; *retry: the connection gave way before
 * it was up (R_AGAIN or R_AWAIT), nothing was written. */
static int send_once(smarm_dist_t *d, const char *node,
		     const struct dist_out *o, const void *payload, size_t plen,
		     int *retry)
{
	struct send_guard g = { NULL, false };
	bool no_connect = o != NULL && o->no_connect;
	*retry = R_FAIL;
	int rc = conn_get(d, node, !no_connect, &g.g_conn);
	if (rc != 0)
		return rc;
	struct dist_conn *c = g.g_conn;
	if (smarm_cleanup_push(send_guard_undo, &g) != 0) {
		conn_put(c);
		return SMARM_ENOMEM;
	}
	if (smarm_mutex_lock(c->c_wmu, SMARM_NO_TIMEOUT) != 0) {
		smarm_cleanup_pop(true);
		return SMARM_EINTERNAL;
	}
	g.g_locked = true;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	int state = c->c_state;
	bool accepted = c->c_accepted;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (state == C_NEW && !no_connect && !accepted)
		rc = conn_setup(c);
	else if (state != C_UP)
		rc = SMARM_ENOCONN;
	if (rc != 0 && state != C_UP) {
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		if (c->c_state != C_UP)
			*retry = c->c_retry;
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	}
	if (rc == 0 && o != NULL)
		rc = conn_write(c, o, payload, plen);
	smarm_mutex_unlock(c->c_wmu);
	g.g_locked = false;
	smarm_cleanup_pop(true); /* drops the reference */
	return rc;
}

/* After a nok: wait for the peer's connection to be listed (or for
 * someone's attempt to be), until the deadline (SMARM_ETIMEDOUT). */
static int await_listed(smarm_dist_t *d, const char *node, uint64_t until)
{
	uint64_t nap = 100 * 1000ull; /* 0.1 ms, doubling to 5 ms */
	for (;;) {
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		bool stopping = d->d_stopping;
		bool listed = find_locked(d, node) != NULL;
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
		if (stopping)
			return SMARM_ESTATE;
		if (listed)
			return 0;
		if (smarm_now_ns() >= until)
			return SMARM_ETIMEDOUT;
		if (smarm_actor_sleep(nap) != 0)
			return SMARM_ENOCONN;
		nap = nap * 2 > 5000000ull ? 5000000ull : nap * 2;
	}
}

/* The writer's run, undone if it is stopped in a write (every io wait
 * is a safe point): a frame cut short would corrupt the stream, so the
 * connection dies with it. */
struct sq_run {
	struct dist_conn *r_conn; /* the reference it holds */
	bool r_locked;		  /* c_wmu held */
};

static void sq_end(void *arg)
{
	struct sq_run *r = arg;
	struct dist_conn *c = r->r_conn;
	smarm_dist_t *d = c->c_d;
	if (r->r_locked) {
		if (c->c_sq_out != NULL) /* a frame maybe half out */
			conn_kill(c);
		smarm_mutex_unlock(c->c_wmu);
	}
	/* What is queued now goes with the next writer to take c_wmu, or
	 * with c: whoever queues more writes it (sq_push). */
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	c->c_sq_writer = false;
	c->c_sq_busy = false;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	conn_put(c);
	smarm__dist_actor_done(d); /* INV-4: the last act */
}

/* c's writer (INV-6): started as c comes up, it writes c's queue at
 * every poke (and once per tick interval) until c is dead. */
static void sq_main(void *arg)
{
	struct sq_run r = { .r_conn = arg };
	struct dist_conn *c = r.r_conn;
	smarm_dist_t *d = c->c_d;
	if (smarm_cleanup_push(sq_end, &r) != 0) {
		sq_end(&r);
		return;
	}
	for (bool up = true; up;) {
		uint8_t poke;
		/* A poke, or a look once per tick interval anyway (a poke
		 * lost for want of memory: sq_poke). */
		int rc = smarm_chan_recv_timeout(c->c_sq_ch, &poke,
						 d->d_tick_ns);
		if ((rc != 0 && rc != SMARM_ETIMEDOUT) ||
		    smarm_mutex_lock(c->c_wmu, SMARM_NO_TIMEOUT) != 0)
			break;
		r.r_locked = true;
		while (!sq_drain(c, true))
			;
		smarm_mutex_unlock(c->c_wmu);
		r.r_locked = false;
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		up = c->c_state == C_UP;
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	}
	smarm_cleanup_pop(true);
}

/* No writer: the caller writes c's queue itself, waiting for the socket
 * as every write did until 0.5.x. */
static void sq_write_self(struct dist_conn *c)
{
	smarm_dist_t *d = c->c_d;
	struct send_guard g = { c, false };
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	c->c_refs++; /* the guard's */
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (smarm_cleanup_push(send_guard_undo, &g) != 0) {
		conn_put(c); /* left queued: the next writer takes it */
		return;
	}
	if (smarm_mutex_lock(c->c_wmu, SMARM_NO_TIMEOUT) == 0) {
		g.g_locked = true;
		(void)sq_drain(c, false);
		smarm_mutex_unlock(c->c_wmu);
		g.g_locked = false;
	}
	smarm_cleanup_pop(true); /* drops the guard's reference */
}

/*
 * Queue frame f (f_len and f_bytes set) on c for its writer (INV-6),
 * which is poked if it has nothing due yet; it never waits on the
 * socket, unless c has no writer (sq_write_self). Takes f. 0; or
 * SMARM_ENOCONN, c is not up (f dropped).
 */
static int sq_push(struct dist_conn *c, struct sq_frame *f)
{
	smarm_dist_t *d = c->c_d;
	bool poke = false, self = false, now = false, part = false;
	f->f_next = NULL;
	/*
	 * Nothing queued and nobody writing: as much as the socket takes
	 * at once goes out now, with no wait and no wake (the common case:
	 * a call's DEMONITOR_P, a Down); the rest is queued at the front,
	 * since c_wmu is held, whoever writes next drains it first.
	 */
	if (__atomic_load_n(&c->c_sq, __ATOMIC_RELAXED) == NULL &&
	    smarm_mutex_try_lock(c->c_wmu) == 0) { /* not a safe point */
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		now = c->c_state == C_UP && c->c_sq == NULL;
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
		ssize_t k = now ? send(c->c_wfd, f->f_bytes, f->f_len,
				       MSG_NOSIGNAL | MSG_DONTWAIT)
				: 0;
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR) {
			conn_kill_quiet(c);
			smarm_mutex_unlock(c->c_wmu);
			free(f);
			sq_poke(c); /* holding nothing now */
			return SMARM_ENOCONN;
		}
		if (k > 0)
			atomic_store_explicit(&c->c_last_tx, smarm_now_ns(),
					      memory_order_relaxed);
		if (k == (ssize_t)f->f_len) {
			smarm_mutex_unlock(c->c_wmu);
			free(f);
			return 0;
		}
		if (k > 0) { /* the rest first: it is the stream's next */
			f->f_len -= (size_t)k;
			memmove(f->f_bytes, f->f_bytes + k, f->f_len);
			part = true;
		}
		if (!now)
			smarm_mutex_unlock(c->c_wmu);
	}
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	bool up = c->c_state == C_UP && !d->d_stopping;
	if (up && now) { /* c_wmu held: at the front */
		f->f_next = c->c_sq;
		__atomic_store_n(&c->c_sq, f, __ATOMIC_RELAXED);
		if (f->f_next == NULL)
			c->c_sq_tail = &f->f_next;
	} else if (up) {
		__atomic_store_n(c->c_sq_tail, f, __ATOMIC_RELAXED);
		c->c_sq_tail = &f->f_next;
	}
	if (up) {
		if (!c->c_sq_writer)
			self = true;
		else if (!c->c_sq_busy)
			c->c_sq_busy = poke = true;
	}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (!up && part) /* a frame cut short: nothing may follow it */
		conn_kill_quiet(c);
	if (now)
		smarm_mutex_unlock(c->c_wmu);
	if (!up) {
		free(f);
		if (part)
			sq_poke(c);
		return SMARM_ENOCONN;
	}
	if (poke)
		sq_poke(c);
	else if (self)
		sq_write_self(c);
	return 0;
}

/* o's frame (o's control, then payload) for UP connection c, as
 * queued: NULL if no memory. */
static struct sq_frame *sq_frame_make(const struct dist_conn *c,
				      const struct dist_out *o,
				      const void *payload, size_t plen)
{
	struct sq_frame *f = malloc(sizeof *f + 5 + CTL_MAX + plen);
	if (f == NULL)
		return NULL;
	f->f_len = frame_put(c, f->f_bytes, o, payload, plen);
	struct sq_frame *fit = realloc(f, sizeof *f + f->f_len);
	return fit != NULL ? fit : f; /* a Down is some 100 of 1 KB made */
}

/* A queued send (o->queued: only on a connection that is up, never
 * waiting on its socket): 0 once queued. */
static int sq_send(smarm_dist_t *d, const char *node, const struct dist_out *o,
		   const void *payload, size_t plen)
{
	struct dist_conn *c;
	int rc = conn_get(d, node, false, &c);
	if (rc != 0)
		return rc;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	bool up = c->c_state == C_UP; /* c_flags is set: frame_put */
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	struct sq_frame *f = up ? sq_frame_make(c, o, payload, plen) : NULL;
	rc = !up ? SMARM_ENOCONN : f == NULL ? SMARM_ENOMEM : sq_push(c, f);
	conn_put(c);
	return rc;
}

int smarm__dist_send(smarm_dist_t *d, const char *node,
		     const struct dist_out *o, const void *payload, size_t plen)
{
	uint64_t until = 0;
	if (o != NULL && o->queued)
		return sq_send(d, node, o, payload, plen);
	for (;;) {
		int retry;
		int rc = send_once(d, node, o, payload, plen, &retry);
		if (retry == R_FAIL)
			return rc == DIST_GAVE_WAY ? SMARM_ENOCONN : rc;
		/* Our attempt gave way to the peer's (OTP's rule): use
		 * that one, within the setup's bound. */
		uint64_t now = smarm_now_ns();
		if (until == 0)
			until = now + DIST_SETUP_NS;
		else if (now >= until)
			return SMARM_ENOCONN;
		if (retry != R_AWAIT)
			continue;
		/* Told nok: the peer's connection is on its way, unless the
		 * peer died with it. Not listed soon: our own attempt again
		 * (a live peer still connecting says nok again; a dead one
		 * is refused at once), not a wait to the setup's bound. */
		uint64_t by = now + DIST_NOK_WAIT_NS;
		rc = await_listed(d, node, by < until ? by : until);
		if (rc == SMARM_ETIMEDOUT && by < until)
			continue;
		if (rc != 0)
			return rc == SMARM_ETIMEDOUT ? SMARM_ENOCONN : rc;
	}
}

int smarm__dist_connect(smarm_dist_t *d, const char *node)
{
	return smarm__dist_send(d, node, NULL, NULL, 0);
}

/* ---- reading ---- */

/* A control message's pid addressed to us: the local pid, or false
 * (another node, an older incarnation of ours). */
static bool local_pid(smarm_dist_t *d, const struct dist_epid *e,
		      smarm_pid_t *out)
{
	if (strcmp(e->node, d->d_name) != 0)
		return false;
	if (e->creation != 0 && e->creation != d->d_creation)
		return false;
	out->id = (uint64_t)e->serial << 32 | e->num;
	return true;
}

/* A monitor a reader set for its peer (MONITOR_P or LINK); the reader's
 * alone (watch.c, "Who owns what"). */
struct rwatch {
	struct rwatch *rw_next;
	int rw_kind;			 /* DW_MONITOR or DW_LINK */
	struct dist_epid rw_remote;	 /* the Erlang process */
	smarm_pid_t rw_local;		 /* the actor watched */
	uint8_t rw_ref[DIST_TERM_SMALL]; /* monitors: the Ref term */
	size_t rw_ref_len;
	uint64_t rw_mref; /* the reader's monitor */
};

/* Set the monitor behind q (a DW_ADD the caller filled), keep it, and
 * hand q to the watcher. Called by c's reader only. */
static void watch_add(struct dist_conn *c, struct dist_watch_req *q)
{
	smarm_dist_t *d = c->c_d;
	uint64_t mref = 0;
	/* Forget monitors that fired (their actor is gone) now and then. */
	if (++c->c_nadds % 64 == 0)
		for (struct rwatch **pp = &c->c_watches; *pp;) {
			struct rwatch *w = *pp;
			if (smarm_actor_is_alive(w->rw_local)) {
				pp = &w->rw_next;
				continue;
			}
			*pp = w->rw_next;
			free(w);
		}
	struct rwatch *w = calloc(1, sizeof *w);
	/* An actor already ended is noproc, as erlang:monitor/2 says of a
	 * process that has terminated (smarm_monitor would give how it
	 * ended while the runtime still knows it). */
	if (w != NULL && q->q_local.id != 0 &&
	    smarm_actor_is_alive(q->q_local) &&
	    smarm_monitor(q->q_local, d->d_watch_ch, &mref) == 0) {
		w->rw_kind = q->q_kind;
		w->rw_remote = q->q_remote;
		w->rw_local = q->q_local;
		memcpy(w->rw_ref, q->q_ref, q->q_ref_len);
		w->rw_ref_len = q->q_ref_len;
		w->rw_mref = mref;
		w->rw_next = c->c_watches;
		c->c_watches = w;
	} else {
		free(w);
		mref = 0; /* the watcher answers noproc */
	}
	q->q_mref = mref;
	if (mref != 0) /* the watcher needs it only for a Down */
		smarm__dist_watch_defer(d, q);
	else /* noproc, at once */
		(void)smarm__dist_watch_post(d, q);
}

/* Remove the monitor behind a DEMONITOR_P (ref) or an unlink (local):
 * whether there was one. */
static bool watch_del(struct dist_conn *c, int kind,
		      const struct dist_epid *remote, smarm_pid_t local,
		      const uint8_t *ref, size_t ref_len)
{
	for (struct rwatch **pp = &c->c_watches; *pp; pp = &(*pp)->rw_next) {
		struct rwatch *w = *pp;
		if (w->rw_kind != kind ||
		    !smarm__dist_epid_eq(&w->rw_remote, remote))
			continue;
		if (kind == DW_MONITOR
			    ? w->rw_ref_len != ref_len ||
				      memcmp(w->rw_ref, ref, ref_len) != 0
			    : !smarm_pid_eq(w->rw_local, local))
			continue;
		*pp = w->rw_next;
		/* No Down of it comes to the watcher after this (FLUSH
		 * removes one still queued); if one came before, it is
		 * the watcher's orphan or matched its record. */
		bool fired =
			smarm_demonitor(w->rw_mref, SMARM_DEMONITOR_FLUSH) != 0;
		/* The watcher never saw it (the usual call: MONITOR_P,
		 * the request, DEMONITOR_P): nothing to tell. */
		bool untold = smarm__dist_watch_undefer(c->c_d, w->rw_mref);
		struct dist_watch_req *q =
			untold && !fired ? NULL : calloc(1, sizeof *q);
		if (q != NULL) {
			q->q_op = DW_DEL;
			q->q_mref = w->rw_mref;
			smarm__dist_watch_defer(c->c_d, q);
		}
		free(w);
		return true;
	}
	return false;
}

/* The link between remote and to is gone (UNLINK, UNLINK_ID, EXIT):
 * drop it, whichever side set it (watch.c INV-4). Whether there was
 * one. */
static bool link_del(struct dist_conn *c, const struct dist_epid *remote,
		     const struct dist_epid *to)
{
	smarm_pid_t lp;
	if (!local_pid(c->c_d, to, &lp))
		return false;
	bool theirs = watch_del(c, DW_LINK, remote, lp, NULL, 0);
	bool ours = smarm__dist_olink_take(c->c_d, lp, remote);
	return theirs || ours;
}

/* LINK from remote to the actor of to. */
static void link_add(struct dist_conn *c, const struct dist_epid *remote,
		     const struct dist_epid *to)
{
	smarm_pid_t lp;
	if (!local_pid(c->c_d, to, &lp))
		return; /* not ours: nothing to hold */
	struct dist_watch_req *q = calloc(1, sizeof *q);
	if (q == NULL)
		return;
	q->q_op = DW_ADD;
	q->q_kind = DW_LINK;
	q->q_conn = c->c_id;
	memcpy(q->q_node, c->c_node, sizeof q->q_node);
	q->q_remote = *remote;
	q->q_local = lp;
	watch_add(c, q);
}

/* How an exit reason acts on a local actor: kill (by EXIT2 only)
 * cannot be trapped; noconnection carries SMARM_ENOCONN; an integer N,
 * or {smarm_crashed, N} (what a libsmarm node sends for a crash with
 * reason N), is a crash with reason N; any other reason term is a crash
 * whose reason libsmarm cannot carry (0). */
static void reason_how(const struct etf_rd *r, bool exit2, int *how,
		       intptr_t *reason)
{
	struct etf_rd t = *r;
	char a[32];
	uint32_t arity;
	int64_t code;
	*reason = 0;
	*how = SMARM_EXIT_CRASHED;
	if (smarm__etf_int(&t, &code) == 0) {
		*reason = (intptr_t)code;
		return;
	}
	t = *r;
	if (smarm__etf_tuple(&t, &arity) == 0 && arity == 2 &&
	    smarm__etf_atom(&t, a, sizeof a) == 0 &&
	    strcmp(a, "smarm_crashed") == 0 && smarm__etf_int(&t, &code) == 0) {
		*reason = (intptr_t)code;
		return;
	}
	t = *r;
	if (smarm__etf_atom(&t, a, sizeof a) != 0)
		return;
	if (strcmp(a, "normal") == 0)
		*how = SMARM_EXIT_NORMAL;
	else if (strcmp(a, "shutdown") == 0)
		*how = SMARM_EXIT_SHUTDOWN;
	else if (exit2 && strcmp(a, "kill") == 0)
		*how = SMARM_EXIT_STOPPED;
	else if (strcmp(a, "noconnection") == 0)
		*reason = SMARM_ENOCONN;
}

/* LINK {1, From, To}, UNLINK {4, From, To}, EXIT {3, From, To, Reason},
 * EXIT2 {8, From, To, Reason}. */
static bool handle_link(struct dist_conn *c, struct etf_rd *r, int op)
{
	struct dist_epid from, to;
	if (smarm__etf_pid(r, &from) != 0 || smarm__etf_pid(r, &to) != 0)
		return false;
	if (op == DOP_LINK) {
		link_add(c, &from, &to);
		return true;
	}
	if (op == DOP_UNLINK) {
		(void)link_del(c, &from, &to);
		return true;
	}
	struct etf_rd at = *r;
	if (smarm__etf_skip(r) != 0)
		return false;
	int how;
	intptr_t reason;
	reason_how(&at, op == DOP_EXIT2, &how, &reason);
	smarm_pid_t lp;
	if (!local_pid(c->c_d, &to, &lp))
		return true;
	/* A link's signal acts only while the link exists (an unlink
	 * returned: no effect, as OTP's unlink/1 promises); it is gone with
	 * its far end. */
	if (op == DOP_EXIT && !link_del(c, &from, &to))
		return true;
	(void)smarm_actor_send_exit(lp, how, reason);
	return true;
}

/* MONITOR_P {19, From, ToProc, Ref} or DEMONITOR_P {20, From, ToProc,
 * Ref}; ToProc is a pid or a registered name. */
static bool handle_monitor(struct dist_conn *c, struct etf_rd *r, bool add)
{
	smarm_dist_t *d = c->c_d;
	struct dist_watch_req *q = calloc(1, sizeof *q);
	if (q == NULL)
		return true; /* dropped: the peer's monitor never fires */
	q->q_op = add ? DW_ADD : DW_DEL;
	q->q_kind = DW_MONITOR;
	q->q_conn = c->c_id;
	memcpy(q->q_node, c->c_node, sizeof q->q_node);
	struct dist_epid to;
	char name[256];
	if (smarm__etf_pid(r, &q->q_remote) != 0)
		goto bad;
	size_t p0 = r->i;
	if (smarm__etf_pid(r, &to) == 0) {
		if (!local_pid(d, &to, &q->q_local))
			q->q_local = SMARM_PID_NONE;
	} else if (smarm__etf_atom(r, name, sizeof name) == 0) {
		if (strlen(name) > SMARM_NAME_MAX || name[0] == '\0' ||
		    smarm_node_whereis(d->d_node, name, &q->q_local) != 0)
			q->q_local = SMARM_PID_NONE;
	} else {
		goto bad;
	}
	size_t p1 = r->i, r0 = r->i;
	if (smarm__etf_skip(r) != 0 || p1 - p0 > DIST_TERM_SMALL ||
	    r->i - r0 > DIST_TERM_SMALL)
		goto bad;
	memcpy(q->q_proc, r->p + p0, p1 - p0);
	q->q_proc_len = p1 - p0;
	memcpy(q->q_ref, r->p + r0, r->i - r0);
	q->q_ref_len = r->i - r0;
	if (add) {
		watch_add(c, q);
	} else {
		watch_del(c, DW_MONITOR, &q->q_remote, SMARM_PID_NONE, q->q_ref,
			  q->q_ref_len);
		free(q);
	}
	return true;
bad:
	free(q);
	return false;
}

/* Handle one frame (len bytes at p): 0, or -1 malformed (logged). */
static int handle_frame(struct dist_conn *c, const uint8_t *p, size_t len)
{
	smarm_dist_t *d = c->c_d;
	struct etf_rd r = { p, len, 1 };
	uint32_t arity;
	int64_t op;
	struct dist_epid from, to;
	char name[256];
	if (len < 2 || p[0] != 112 || p[1] != 131)
		goto bad;
	r.i = 2;
	if (smarm__etf_tuple(&r, &arity) != 0 || arity < 1 ||
	    smarm__etf_int(&r, &op) != 0)
		goto bad;
	bool has_from = false, by_name = false;
	switch (op) {
	case DOP_SEND:
	case DOP_SEND_TT:
		if (arity != (op == DOP_SEND ? 3u : 4u) ||
		    smarm__etf_skip(&r) != 0 || smarm__etf_pid(&r, &to) != 0)
			goto bad;
		break;
	case DOP_SEND_SENDER:
	case DOP_SEND_SENDER_TT:
		if (arity != (op == DOP_SEND_SENDER ? 3u : 4u) ||
		    smarm__etf_pid(&r, &from) != 0 ||
		    smarm__etf_pid(&r, &to) != 0)
			goto bad;
		has_from = true;
		break;
	case DOP_REG_SEND:
	case DOP_REG_SEND_TT:
		if (arity != (op == DOP_REG_SEND ? 4u : 5u) ||
		    smarm__etf_pid(&r, &from) != 0 ||
		    smarm__etf_skip(&r) != 0 ||
		    smarm__etf_atom(&r, name, sizeof name) != 0)
			goto bad;
		has_from = by_name = true;
		break;
	case DOP_UNLINK_ID: {
		/* {35, Id, From, To}: drop the link, answer {36, Id, To,
		 * From}. */
		size_t id0 = r.i;
		if (arity != 4 || smarm__etf_skip(&r) != 0)
			goto bad;
		size_t id1 = r.i;
		if (smarm__etf_pid(&r, &from) != 0 ||
		    smarm__etf_pid(&r, &to) != 0 || id1 - id0 > 64)
			goto bad;
		(void)link_del(c, &from, &to);
		uint8_t ack[CTL_MAX];
		size_t k = 0;
		ack[k++] = 131;
		ack[k++] = 104; /* SMALL_TUPLE_EXT */
		ack[k++] = 4;
		ack[k++] = 97; /* SMALL_INTEGER_EXT */
		ack[k++] = DOP_UNLINK_ID_ACK;
		memcpy(ack + k, p + id0, id1 - id0);
		k += id1 - id0;
		k += smarm__etf_put_pid(ack + k, sizeof ack - k, &to);
		k += smarm__etf_put_pid(ack + k, sizeof ack - k, &from);
		struct dist_out o = { .op = 0, .raw = ack, .raw_len = k };
		struct sq_frame *f = sq_frame_make(c, &o, NULL, 0);
		if (f != NULL)
			(void)sq_push(c, f); /* INV-6 */
		return 0;
	}
	case DOP_UNLINK_ID_ACK:
		/* {36, Id, From, To}: our UNLINK_ID was served. The link went
		 * when we sent it (watch.c INV-4): nothing is left to do. */
		if (arity != 4)
			goto bad;
		return 0;
	case DOP_MONITOR_P_EXIT:
		if (arity != 5 || !smarm__dist_rmon_exit(d, &r))
			goto bad;
		return 0;
	case DOP_MONITOR_P:
	case DOP_DEMONITOR_P:
		if (arity != 4)
			goto bad;
		if (!handle_monitor(c, &r, op == DOP_MONITOR_P))
			goto bad;
		return 0;
	case DOP_LINK:
	case DOP_UNLINK:
	case DOP_EXIT:
	case DOP_EXIT2:
		if (arity != (op == DOP_EXIT || op == DOP_EXIT2 ? 4u : 3u))
			goto bad;
		if (!handle_link(c, &r, (int)op))
			goto bad;
		return 0;
	default:
		/* GROUP_LEADER, SPAWN_REQUEST, ALIAS_SEND, ...: not served
		 * (docs/distribution.md, "not yet"); the peer's process
		 * sees no answer. */
		smarm__dist_log(d, SMARM_LOG_DEBUG,
				"dist: %s sent control message %lld, ignored",
				c->c_node, (long long)op);
		return 0;
	}
	for (uint32_t k = (by_name ? 4u : 3u); k < arity; k++)
		if (smarm__etf_skip(&r) != 0) /* a trace token */
			goto bad;
	/* The rest of the frame is the message: one whole term (INV-2). */
	if (!smarm__etf_valid(p + r.i, len - r.i))
		goto bad;
	smarm_dist_pid_t fp = SMARM_DIST_PID_NONE;
	if (has_from)
		(void)smarm__dist_intern(d, &from, &fp); /* full: no sender */
	smarm_pid_t lp = SMARM_PID_NONE;
	if (!by_name && !local_pid(d, &to, &lp))
		return 0; /* not ours: dropped */
	const uint8_t *t = p + r.i;
	size_t tlen = len - r.i;
	/* A reply to a call of ours, or a request or an info to a served
	 * server (gen.c). */
	if (!by_name && smarm__dist_rmon_reply(d, lp, t, tlen, fp))
		return 0;
	int routed =
		smarm__dist_gen_route(d, by_name ? name : NULL, lp, t, tlen);
	if (routed == GEN_DONE)
		return 0;
	struct smarm_dist_msg *m = smarm__dist_msg_new(t, tlen, fp);
	int rc = -1; /* m NULL: dropped, as the BEAM would not */
	if (m != NULL)
		rc = by_name ? smarm__dist_deliver_name(d, name, m)
			     : smarm__dist_deliver_pid(d, lp, m);
	if (rc != 0 && routed == GEN_NO_INFO)
		smarm__dist_info_drop(d, by_name ? name : NULL, lp,
				      "its behaviour has no info operation "
				      "for it");
	return 0;
bad:
	smarm__dist_log(d, SMARM_LOG_WARNING,
			"dist: malformed frame from %s (%zu bytes); closing "
			"the connection",
			c->c_node, len);
	return -1;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void send_tick(struct dist_conn *c)
{
	if (__atomic_load_n(&c->c_sq, __ATOMIC_RELAXED) != NULL)
		return; /* frames are on their way already */
	struct sq_frame *f = malloc(sizeof *f + 4);
	if (f == NULL)
		return; /* the next interval's */
	memset(f->f_bytes, 0, 4);
	f->f_len = 4;
	(void)sq_push(c, f); /* INV-6: the reader never waits to write */
}

/*
 * The reader's clock (INV-5): a timed send to a channel of its own, armed
 * only when none is pending, which it selects on beside the socket. A
 * timed wait per read (until 0.5.x) put a timer into the node's heap at
 * every wait, 10k a second under load, and each such insert while no
 * worker kept time woke an idle worker to take the role.
 */
struct rclock {
	smarm_chan_t *rc_ch;	/* ticks, one byte each */
	smarm_selset_t *rc_set; /* arm 0 the socket, arm 1 rc_ch */
	smarm_timer_t rc_tm;	/* the pending send, if rc_armed */
	bool rc_armed;
};

/* Cleanup of the reader's clock: on every exit path, a stop too. */
static void rclock_end(void *arg)
{
	struct rclock *k = arg;
	if (k->rc_armed)
		(void)smarm_timer_cancel(k->rc_tm); /* ENOENT: it fired */
	smarm_selset_free(k->rc_set);
	if (k->rc_ch != NULL) {
		(void)smarm_chan_sender_free(k->rc_ch);
		(void)smarm_chan_receiver_free(k->rc_ch);
	}
}

static int rclock_init(struct rclock *k, int fd)
{
	int rc = smarm_chan_alloc(&k->rc_ch, 1, NULL);
	if (rc == 0)
		rc = smarm_selset_alloc(&k->rc_set);
	if (rc == 0)
		rc = smarm_selset_add_fd(k->rc_set, fd, SMARM_IO_READABLE,
					 NULL);
	if (rc == 0)
		rc = smarm_selset_add_chan(k->rc_set, k->rc_ch, NULL);
	return rc;
}

/* Read frames from c until it ends. */
static void reader_loop(struct dist_conn *c)
{
	smarm_dist_t *d = c->c_d;
	size_t cap = 64 * 1024, have = 0;
	uint8_t *buf = malloc(cap);
	uint64_t last_rx = smarm_now_ns();
	const char *why = "closed by the peer";
	struct rclock clk = { 0 };
	if (buf == NULL) {
		why = "out of memory";
		goto out;
	}
	if (smarm_cleanup_push(rclock_end, &clk) != 0) {
		why = "out of memory";
		goto out;
	}
	if (rclock_init(&clk, c->c_fd) != 0) {
		why = "out of memory";
		goto out_clock;
	}
	uint64_t next_check = last_rx + d->d_tick_ns;
	bool drained = false; /* the last read left the socket empty */
	for (;;) {
		/* Every tick interval: a peer silent for the tick time is
		 * gone; a line we have not written on for an interval gets a
		 * tick, however busy it is the other way (INV-5). */
		uint64_t now = smarm_now_ns();
		if (now >= next_check) {
			if (now - last_rx > 4 * d->d_tick_ns) {
				why = "no tick within the tick time";
				break;
			}
			uint64_t tx = atomic_load_explicit(
				&c->c_last_tx, memory_order_relaxed);
			if (now - tx >= d->d_tick_ns)
				send_tick(c);
			next_check = now + d->d_tick_ns;
		}
		if (!clk.rc_armed) {
			static const uint8_t tick;
			if (smarm_chan_send_after(clk.rc_ch, &tick,
						  next_check - now,
						  &clk.rc_tm) != 0) {
				why = "out of memory";
				break;
			}
			clk.rc_armed = true;
		}
		/* Read dry just now: wait without polling the socket first
		 * (a frame come since wakes it all the same), one system
		 * call a frame less (select.c INV-2). */
		size_t arm;
		int wrc = drained ? smarm__selset_wait_drained(clk.rc_set, 0,
							       SMARM_NO_TIMEOUT,
							       &arm)
				  : smarm_selset_wait(clk.rc_set,
						      SMARM_NO_TIMEOUT, &arm);
		drained = false;
		if (wrc != 0) {
			why = "wait failed";
			break;
		}
		if (arm == 1) { /* the clock: look at the time */
			uint8_t t;
			if (smarm_chan_try_recv(clk.rc_ch, &t) == 0)
				clk.rc_armed = false;
			continue;
		}
		ssize_t k = read(c->c_fd, buf + have, cap - have);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		drained = k > 0 && (size_t)k < cap - have;
		if (k <= 0) {
			smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
			bool here = c->c_state == C_DEAD;
			smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
			if (here)
				why = "closed by this node";
			else if (k < 0)
				why = "read failed";
			break;
		}
		have += (size_t)k;
		last_rx = smarm_now_ns();
		size_t off = 0;
		bool bad = false;
		while (have - off >= 4) {
			size_t len = get32(buf + off);
			if (len == 0) { /* a tick */
				off += 4;
				continue;
			}
			if (len > FRAME_MAX) { /* INV-1 */
				smarm__dist_log(d, SMARM_LOG_WARNING,
						"dist: %s sent a frame of %zu "
						"bytes; closing",
						c->c_node, len);
				bad = true;
				break;
			}
			if (have - off - 4 < len) {
				if (len + 4 > cap) {
					size_t ncap = cap;
					while (ncap < len + 4)
						ncap *= 2;
					memmove(buf, buf + off, have - off);
					have -= off;
					off = 0;
					uint8_t *nb = realloc(buf, ncap);
					if (nb == NULL) {
						why = "out of memory";
						bad = true;
						break;
					}
					buf = nb;
					cap = ncap;
				}
				break;
			}
			if (handle_frame(c, buf + off + 4, len) != 0) {
				bad = true;
				break;
			}
			off += 4 + len;
		}
		if (bad) {
			why = "malformed or oversized frame";
			break;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
out_clock:
	smarm_cleanup_pop(true); /* rclock_end */
out:
	free(buf);
	smarm__dist_log(d, SMARM_LOG_INFO, "dist: connection to %s ended (%s)",
			c->c_node, why);
	conn_kill(c);
}

/* The end of a connection's actor, on every exit path (a stop too):
 * drop its reference and report (INV-4). */
static void conn_actor_end(void *arg)
{
	struct dist_conn *c = arg;
	smarm_dist_t *d = c->c_d;
	conn_kill(c);
	/* The reader's monitors go with it (the runtime removes them when
	 * it ends); the watcher forgets their records on NODE_DOWN. */
	while (c->c_watches != NULL) {
		struct rwatch *w = c->c_watches;
		c->c_watches = w->rw_next;
		free(w);
	}
	if (c->c_id != 0) {
		/* Our monitors of its processes fire, noconnection. */
		smarm__dist_rmon_node_down(d, c->c_node);
		/* monitor_node: {nodedown, Node}, after every message the
		 * reader delivered. */
		smarm__dist_nmon_node_down(d, c->c_node);
		/* What Erlang processes held on ours through it goes. */
		struct dist_watch_req *q = calloc(1, sizeof *q);
		if (q != NULL) {
			q->q_op = DW_NODE_DOWN;
			q->q_conn = c->c_id;
			memcpy(q->q_node, c->c_node, sizeof q->q_node);
			(void)smarm__dist_watch_post(d, q);
		}
	}
	conn_put(c);
	smarm__dist_actor_done(d); /* INV-4 */
}

static void reader_main(void *arg)
{
	struct dist_conn *c = arg;
	if (smarm_cleanup_push(conn_actor_end, c) != 0) {
		conn_actor_end(c);
		return;
	}
	reader_loop(c);
}

/* An accepted connection's actor stopped or failed in its handshake:
 * out of the table before its writers get c_wmu (they go around). */
static void accept_undo(void *arg)
{
	struct dist_conn *c = arg;
	smarm_dist_t *d = c->c_d;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	bool up = c->c_state == C_UP;
	if (!up)
		c->c_retry = R_AGAIN;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (!up)
		conn_kill(c);
	smarm_mutex_unlock(c->c_wmu);
}

/* An accepted connection: the handshake (c listed NEW from its
 * arbiter's verdict on, c_wmu held), then the reader. */
static void accepted_main(void *arg)
{
	struct dist_conn *c = arg;
	smarm_dist_t *d = c->c_d;
	char peer[SMARM_DIST_NODE_MAX + 1];
	if (smarm_cleanup_push(conn_actor_end, c) != 0) {
		conn_actor_end(c);
		return;
	}
	if (smarm_mutex_lock(c->c_wmu, SMARM_NO_TIMEOUT) != 0)
		return; /* new, nobody else has it: not reached */
	if (smarm_cleanup_push(accept_undo, c) != 0) {
		smarm_mutex_unlock(c->c_wmu);
		return;
	}
	const struct hs_arbiter arb = { arb_verdict, arb_displace, c };
	int rc = smarm__hs_accept(d, c->c_fd, peer, sizeof peer, &c->c_flags,
				  &c->c_creation, &arb);
	if (rc == 0 && (c->c_wfd = fcntl(c->c_fd, F_DUPFD_CLOEXEC, 0)) < 0)
		rc = SMARM_ENOMEM;
	bool up = false;
	if (rc == 0) {
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		/* Still listed (not displaced by close_all or a stop). */
		up = c->c_listed && c->c_state == C_NEW && !d->d_stopping;
		if (up) {
			c->c_refs++; /* the writer's */
			d->d_actors++;
			c->c_sq_writer = true; /* INV-6: UP has a writer */
			c->c_state = C_UP;
			c->c_id = ++d->d_conn_seq;
		}
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	} else if (rc == SMARM_ETIMEDOUT || rc == SMARM_ENOCONN) {
		smarm__dist_log(d, SMARM_LOG_INFO,
				"dist: an incoming handshake did not finish");
	}
	smarm_cleanup_pop(true); /* accept_undo: c_wmu unlocked */
	if (up && spawn_counted(c, sq_main, true) != 0) {
		conn_kill(c); /* no writer: no connection */
		up = false;
	}
	if (up) {
		smarm__dist_log(d, SMARM_LOG_INFO, "dist: %s connected", peer);
		reader_loop(c);
	}
}

static void acceptor_end(void *arg)
{
	smarm__dist_actor_done(arg); /* INV-4 */
}

void smarm__dist_acceptor(void *arg)
{
	smarm_dist_t *d = arg;
	if (smarm_cleanup_push(acceptor_end, d) != 0) {
		acceptor_end(d);
		return;
	}
	for (;;) {
		int fd = -1;
		int rc = smarm_io_accept(d->d_lfd, NULL, NULL, SMARM_NO_TIMEOUT,
					 &fd);
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		bool stopping = d->d_stopping;
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
		if (stopping) {
			if (fd >= 0)
				close(fd);
			break;
		}
		if (rc == SMARM_ESYSTEM &&
		    (errno == EMFILE || errno == ENFILE)) {
			smarm_actor_sleep(100 * 1000000ull); /* back off */
			continue;
		}
		if (rc != 0) {
			smarm__dist_log(d, SMARM_LOG_ERROR,
					"dist: accept failed (%s); no more "
					"incoming connections",
					smarm_err_name(rc));
			break;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct dist_conn *c = conn_alloc(d, "?");
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->c_fd = fd;
		c->c_accepted = true;
		c->c_refs = 1; /* the connection actor's */
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		d->d_actors++;
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
		if (smarm_actor_spawn(NULL, accepted_main, c, NULL) != 0) {
			smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
			d->d_actors--;
			smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
			conn_put(c);
		}
	}
}
