/* SPDX-License-Identifier: MIT */
/*
 * dist/dist.h - the distribution layer's internal interface: the dist
 * handle, connections, the pid table, and the pieces each file provides
 * (MD5, the bounded term reader, epmd, the handshake, connections,
 * monitors, gen_server interop).
 *
 * Ownership: a struct smarm_dist is made by smarm_dist_start and freed
 * by smarm_dist_stop once every actor it started has reported its end.
 * A struct dist_conn is shared by the table (one reference), its reader
 * actor (one), its writer actor (one: conn.c INV-6) and every sender
 * writing to it (one each, for the time of the write); the last
 * reference closes its fd and frees it.
 *
 * Locking: d->lock (a leaf, SMARM__RANK_TABLE) guards the connection
 * list, each connection's reference count and state, the pid table and
 * d->stopping; it is never held across a call that parks. A
 * connection's green mutex (c_wmu) serialises writers on its socket and
 * the connect-and-handshake of an outgoing connection.
 *
 * See: docs/distribution.md.
 */
#ifndef SMARM_DIST_DIST_H
#define SMARM_DIST_DIST_H

#include "smarm/dist.h"
#include "smarm/otp.h"
#include "smarm/smarm_plugin.h"

#include "../core/core.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Distribution flags (erts dist.hrl), those this layer speaks. */
#define DFLAG_PUBLISHED 0x01ull
#define DFLAG_EXTENDED_REFERENCES 0x04ull
#define DFLAG_DIST_MONITOR 0x08ull
#define DFLAG_DIST_MONITOR_NAME 0x20ull
#define DFLAG_FUN_TAGS 0x10ull
#define DFLAG_NEW_FUN_TAGS 0x80ull
#define DFLAG_EXTENDED_PIDS_PORTS 0x100ull
#define DFLAG_EXPORT_PTR_TAG 0x200ull
#define DFLAG_BIT_BINARIES 0x400ull
#define DFLAG_NEW_FLOATS 0x800ull
#define DFLAG_SMALL_ATOM_TAGS 0x4000ull
#define DFLAG_UTF8_ATOMS 0x10000ull
#define DFLAG_MAP_TAG 0x20000ull
#define DFLAG_BIG_CREATION 0x40000ull
#define DFLAG_SEND_SENDER 0x80000ull
#define DFLAG_HANDSHAKE_23 0x1000000ull
#define DFLAG_UNLINK_ID 0x2000000ull
#define DFLAG_MANDATORY_25_DIGEST 0x4000000ull
#define DFLAG_V4_NC (0x04ull << 32)

/* What OTP 25 requires of a peer (its MANDATORY_DFLAGS_25). */
#define DIST_MANDATORY_25                                                      \
	(DFLAG_EXTENDED_REFERENCES | DFLAG_FUN_TAGS |                          \
	 DFLAG_EXTENDED_PIDS_PORTS | DFLAG_NEW_FUN_TAGS |                      \
	 DFLAG_EXPORT_PTR_TAG | DFLAG_BIT_BINARIES | DFLAG_NEW_FLOATS |        \
	 DFLAG_UTF8_ATOMS | DFLAG_MAP_TAG | DFLAG_BIG_CREATION |               \
	 DFLAG_HANDSHAKE_23)

/* What we advertise: hidden (no PUBLISHED); monitors of our actors
 * by pid and by name (watch.c). */
#define DIST_OUR_FLAGS                                                         \
	(DIST_MANDATORY_25 | DFLAG_MANDATORY_25_DIGEST | DFLAG_UNLINK_ID |     \
	 DFLAG_V4_NC | DFLAG_SEND_SENDER | DFLAG_SMALL_ATOM_TAGS |             \
	 DFLAG_DIST_MONITOR | DFLAG_DIST_MONITOR_NAME)

/* Control message codes (erts "Distribution Protocol"). */
enum {
	DOP_LINK = 1,
	DOP_SEND = 2,
	DOP_EXIT = 3,
	DOP_UNLINK = 4,
	DOP_REG_SEND = 6,
	DOP_GROUP_LEADER = 7,
	DOP_EXIT2 = 8,
	DOP_SEND_TT = 12,
	DOP_MONITOR_P = 19,
	DOP_DEMONITOR_P = 20,
	DOP_MONITOR_P_EXIT = 21,
	DOP_REG_SEND_TT = 16,
	DOP_SEND_SENDER = 22,
	DOP_SEND_SENDER_TT = 23,
	DOP_UNLINK_ID = 35,
	DOP_UNLINK_ID_ACK = 36,
};

/* Timings: a tick interval of 15 s, a silent peer dropped after four
 * (60 s, erl's default net_ticktime); a handshake or epmd exchange
 * bounded by 30 s. Tests shorten the interval with the environment
 * variable SMARM__DIST_TICK_MS (read by smarm_dist_start). */
#define DIST_TICK_NS (15ull * 1000000000ull)
#define DIST_TICK_ENV "SMARM__DIST_TICK_MS"
#define DIST_SETUP_NS (30ull * 1000000000ull)

/* The longest pid, atom or reference term we keep the bytes of. */
#define DIST_TERM_SMALL 320

/* An Erlang pid as the wire carries it. */
struct dist_epid {
	char node[SMARM_DIST_NODE_MAX + 1];
	uint32_t num, serial, creation;
};

static inline bool smarm__dist_epid_eq(const struct dist_epid *a,
				       const struct dist_epid *b)
{
	return a->num == b->num && a->serial == b->serial &&
	       a->creation == b->creation && strcmp(a->node, b->node) == 0;
}

/* ---- md5.c ---- */
void smarm__md5(const void *data, size_t len, uint8_t out[16]);
/* MD5(cookie ++ decimal(challenge)), the handshake's digest. */
void smarm__dist_digest(const char *cookie, uint32_t challenge,
			uint8_t out[16]);

/* ---- etf.c: a bounded reader and the few encoders we need ---- */
struct etf_rd {
	const uint8_t *p; /* the bytes */
	size_t n;	  /* how many */
	size_t i;	  /* the next to read */
};
int smarm__etf_tuple(struct etf_rd *r, uint32_t *arity);
int smarm__etf_int(struct etf_rd *r, int64_t *v);
/* An atom into buf (cap bytes with the NUL): 0, or -1 malformed/long. */
int smarm__etf_atom(struct etf_rd *r, char *buf, size_t cap);
int smarm__etf_pid(struct etf_rd *r, struct dist_epid *pid);
/* Step over one term of any kind, nesting at most 128 deep. */
int smarm__etf_skip(struct etf_rd *r);
/* Whether buf[0..len) is 131 followed by exactly one well-formed term. */
bool smarm__etf_valid(const void *buf, size_t len);
/* NEW_PID_EXT of pid into buf (cap bytes): its size (may exceed cap). */
size_t smarm__etf_put_pid(uint8_t *buf, size_t cap,
			  const struct dist_epid *pid);

/* ---- epmd.c ---- */
/* Register alive at port with the local epmd: 0 with *fd (keep it open)
 * and *creation set; SMARM_ENOEPMD, SMARM_EEXIST, SMARM_ENOMEM. */
int smarm__epmd_register(const char *alive, int port, int *fd,
			 uint32_t *creation);
/* The port of alive at the IPv4 address host: 0, SMARM_ENOEPMD (no epmd
 * there), SMARM_ENOCONN (no such node). */
int smarm__epmd_port(uint32_t host_be, const char *alive, int *port);
/* Read exactly n bytes before deadline (smarm_now_ns clock): 0,
 * SMARM_ETIMEDOUT, SMARM_ENOCONN (closed or failed). */
int smarm__dist_read_full(int fd, void *buf, size_t n, uint64_t deadline);
/* Write all n bytes (parking while the socket is full): 0 or
 * SMARM_ENOCONN. */
int smarm__dist_write_full(int fd, const void *buf, size_t n);
/* Resolve the host part of a node name to an IPv4 address (network
 * order): 0 or SMARM_ENOCONN. Parks on the blocking pool for names. */
int smarm__dist_resolve(const char *host, uint32_t *addr_be);
/* A non-blocking TCP socket connected to addr_be:port: 0 with *fd,
 * SMARM_ENOCONN, SMARM_ENOMEM, SMARM_ESYSTEM. */
int smarm__dist_tcp_connect(uint32_t addr_be, int port, int *fd);

/* ---- the handle ---- */
#define DIST_SERVE_MAX SMARM_DIST_SERVE_MAX
#define DIST_GEN_JOBS_MAX SMARM_DIST_GEN_MAX
/* A server smarm_dist_serve exposes (gen.c), in d_serves. */
struct dist_serve {
	char sv_name[SMARM_NAME_MAX + 1]; /* the registered name served */
	const smarm_behaviour_t *sv_b;	  /* its behaviour */
};

struct dist_conn;
struct dist_gate;

struct dist_pid_ent {
	uint32_t pe_node;     /* index into d_nodes */
	uint32_t pe_num;      /* the pid's ID field */
	uint32_t pe_serial;   /* its Serial field */
	uint32_t pe_creation; /* its Creation field */
};

struct smarm_dist {
	smarm_node_t *d_node;			  /* the node (immutable) */
	char d_name[SMARM_DIST_NODE_MAX + 1];	  /* "alive@host" */
	char d_cookie[SMARM_DIST_COOKIE_MAX + 1]; /* the secret */
	uint32_t d_creation;	  /* from epmd (immutable after start) */
	uint64_t d_tick_ns;	  /* the tick interval (immutable) */
	int d_lfd;		  /* the listening socket */
	int d_epmd_fd;		  /* the registration's connection */
	smarm_pid_t d_acceptor;	  /* the accept loop's actor */
	smarm_chan_t *d_done;	  /* int elements: an actor of ours ended */
	smarm_chan_t *d_watch_ch; /* the watcher's signals and requests */
	struct dist_gate *d_gate; /* what served calls' answers reach d
				     through (gen.c; set at the open,
				     cleared as d is freed) */

	smarm__lock_t d_lock; /* guards what follows */
	bool d_stopping;      /* smarm_dist_stop began */
	uint64_t d_conn_seq;  /* the last connection incarnation */
	struct rmon *d_rmons; /* monitors of ours on remote processes */
	struct dist_serve d_serves[DIST_SERVE_MAX]; /* smarm_dist_serve */
	unsigned d_nserves;			    /* used in d_serves */
	unsigned d_gen_jobs;		   /* served calls not answered yet
					      (gen.c INV-1) */
	struct dist_watch_req *d_wq;	   /* deferred watcher requests, oldest
					      first (watch.c INV-5) */
	struct dist_watch_req **d_wq_tail; /* &last->q_next, or &d_wq */
	unsigned d_wq_n;		   /* requests in d_wq */
	unsigned d_wq_orphans;		   /* the watcher's orphan Downs, as
					      it last said */
	uint64_t d_rmon_seq;		   /* the last of their ids */
	struct olink *d_olinks;	   /* links of ours on remote processes */
	struct nmon *d_nmons;	   /* monitor_node requests of ours */
	uint64_t d_unlink_seq;	   /* the last UNLINK_ID id we sent */
	int d_actors;		   /* our actors still running */
	struct dist_conn *d_conns; /* every connection, up or not */
	char (*d_nodes)[SMARM_DIST_NODE_MAX + 1]; /* interned node names */
	uint32_t d_nnodes, d_capnodes;
	struct dist_pid_ent *d_pids; /* id - 1 indexes it */
	uint32_t d_npids, d_cappids;
	uint32_t *d_phash; /* open addressing: id, 0 empty */
	uint32_t d_phcap;  /* a power of two, > 2 * d_npids */
};

/* ---- pid table (conn.c) ---- */
int smarm__dist_intern(smarm_dist_t *d, const struct dist_epid *e,
		       smarm_dist_pid_t *out);
/* Copy out entry p: 0 or SMARM_EINVAL. */
int smarm__dist_pid_get(smarm_dist_t *d, smarm_dist_pid_t p,
			struct dist_epid *e);

/* ---- connections (conn.c) ---- */
/* Deliver term to a local actor (by pid or by name). Takes term's
 * ownership (a malloc'd smarm_dist_msg). */
struct smarm_dist_msg {
	smarm_dist_pid_t m_from; /* or 0 */
	uint64_t m_down;	 /* a Down of smarm_dist_monitor: its ref */
	size_t m_len;		 /* bytes in m_term */
	uint8_t m_term[];	 /* 131, term */
};
struct smarm_dist_msg *smarm__dist_msg_new(const void *term, size_t len,
					   smarm_dist_pid_t from);
const smarm_msgtype_t *smarm__dist_msgtype(void);
/* Deliver m to a local actor's dist mailbox: 0; or -1, m freed (the
 * target is gone or has no dist mailbox: dropped, as Erlang drops a
 * send to a dead process). */
int smarm__dist_deliver_pid(smarm_dist_t *d, smarm_pid_t pid,
			    struct smarm_dist_msg *m);
int smarm__dist_deliver_name(smarm_dist_t *d, const char *name,
			     struct smarm_dist_msg *m);

/* The destination of a frame we send. */
struct dist_out {
	int op;			      /* DOP_SEND, DOP_REG_SEND, or 0: raw */
	const struct dist_epid *from; /* the sender (REG_SEND: required) */
	const struct dist_epid *to;   /* DOP_SEND's target */
	const char *name;	      /* DOP_REG_SEND's target */
	const uint8_t *raw;	      /* op 0: a control term, with 131 */
	size_t raw_len;
	bool no_connect; /* send only on a connection that is up */
	bool queued;	 /* the watcher's and the readers': never wait on
			    the socket, the frame goes out at once or is
			    queued for the connection's writer actor
			    (conn.c INV-6); implies no_connect */
};
/* Connect to node if not connected: 0 or an error as smarm_dist_connect. */
int smarm__dist_connect(smarm_dist_t *d, const char *node);
/* Send a frame (o's control term, then payload) to node, connecting
 * first if needed (o->no_connect: not), waiting for the socket unless
 * o->queued. */
int smarm__dist_send(smarm_dist_t *d, const char *node,
		     const struct dist_out *o, const void *payload,
		     size_t plen);
/* The destructor of a dist mailbox's elements. */
smarm_elem_free_cb smarm__dist_msg_elem_free(void);
/* The accept loop (an actor's body; arg is d). */
void smarm__dist_acceptor(void *arg);
/* Close every connection (their readers end and report). */
void smarm__dist_close_all(smarm_dist_t *d);
/* An actor of ours is about to end: report it on d_done. */
void smarm__dist_actor_done(smarm_dist_t *d);

/* ---- watch.c: monitors and links Erlang processes hold on ours ---- */
enum { DW_MONITOR = 1, DW_LINK = 2 };
enum {
	DW_ADD = 1,    /* a reader's monitor for its peer (q_mref) */
	DW_DEL,	       /* the reader removed it (q_mref) */
	DW_NODE_DOWN,  /* a connection ended (q_conn, q_node) */
	DW_STOP,       /* the distribution stops */
	DW_LINK_OUT,   /* q_local linked q_remote: monitor q_local */
	DW_UNLINK_OUT, /* that link is gone: remove monitor q_mref */
};
struct dist_watch_req {
	struct dist_watch_req *q_next; /* d_wq: the deferred, in order */
	int q_op;		       /* DW_ADD, ... */
	int q_kind;		       /* DW_MONITOR or DW_LINK */
	uint64_t q_conn;	       /* the connection incarnation */
	char q_node[SMARM_DIST_NODE_MAX + 1];
	struct dist_epid q_remote; /* the Erlang process */
	smarm_pid_t q_local;	   /* the actor (0: none such) */
	uint64_t q_mref;     /* the reader's monitor of it (0: none set) */
	smarm_chan_t *q_ack; /* DW_LINK_OUT: an int, 1 set, 0 not */
	uint8_t q_ref[DIST_TERM_SMALL]; /* monitors: the Ref term */
	size_t q_ref_len;
	uint8_t q_proc[DIST_TERM_SMALL]; /* monitors: ToProc as sent */
	size_t q_proc_len;
};
/* Hand q (malloc'd; freed here on failure) to the watcher. */
int smarm__dist_watch_post(smarm_dist_t *d, struct dist_watch_req *q);
/* A reader's DW_ADD (a monitor set: q_mref not 0) or DW_DEL, handed to
 * the watcher without waking it (d_wq; watch.c INV-5). */
void smarm__dist_watch_defer(smarm_dist_t *d, struct dist_watch_req *q);
/* The reader removed monitor mref before the watcher took its deferred
 * DW_ADD: drop that request. Whether there was one. */
bool smarm__dist_watch_undefer(smarm_dist_t *d, uint64_t mref);
/* The watcher actor's body (arg: d). */
void smarm__dist_watcher(void *arg);
/* Monitors of ours on processes of other nodes (smarm_dist_monitor). */
struct rmon;
/* Monitor to (by pid; or, name not NULL, the process registered as name
 * on to->node) for owner: its Down goes to owner's dist mailbox, or,
 * call not NULL, into that channel of smarm_dist_msg pointers (a sender
 * reference is taken), and then the id carries DIST_CALL_BIT. */
int smarm__dist_rmon_add(smarm_dist_t *d, smarm_pid_t owner,
			 const struct dist_epid *to, const char *name,
			 smarm_chan_t *call, uint64_t *id);
int smarm__dist_rmon_del(smarm_dist_t *d, smarm_pid_t owner, uint64_t id);
bool smarm__dist_rmon_exit(smarm_dist_t *d, struct etf_rd *r);
void smarm__dist_rmon_node_down(smarm_dist_t *d, const char *node);
/* Node monitors (smarm_dist_monitor_node): add one of owner on node,
 * connecting (a failure is a nodedown at once): 0, SMARM_ENOMEM or
 * SMARM_ESTATE; remove one; a connection to node ended: every one of
 * node fires. */
struct nmon;
int smarm__dist_nmon_add(smarm_dist_t *d, smarm_pid_t owner, const char *node);
void smarm__dist_nmon_del(smarm_dist_t *d, smarm_pid_t owner, const char *node);
void smarm__dist_nmon_node_down(smarm_dist_t *d, const char *node);
/* At the handle's end: free every rmon, olink and nmon left. */
void smarm__dist_rmon_free_all(smarm_dist_t *d);
/* Links of ours on processes of other nodes (smarm_dist_link; watch.c
 * INV-4). Add local -> remote: 0 or SMARM_ENOMEM; *fresh false if it
 * was there already. */
struct olink;
int smarm__dist_olink_add(smarm_dist_t *d, smarm_pid_t local,
			  const struct dist_epid *remote, bool *fresh);
/* Take local -> remote out (an unlink, the peer's EXIT or UNLINK_ID):
 * whether it was there. */
bool smarm__dist_olink_take(smarm_dist_t *d, smarm_pid_t local,
			    const struct dist_epid *remote);
/* The ref ids of calls' monitors carry this bit (a reply {Ref, _} to
 * one that is gone is dropped, not delivered). */
#define DIST_CALL_BIT (1ull << 62)
/* A call's monitor, if still there, is removed (and, tell, DEMONITOR_P
 * sent; not from a cleanup handler, which must not park). */
void smarm__dist_rmon_cancel(smarm_dist_t *d, uint64_t id, bool tell);
/* A message term (131, ...) sent to the local pid to: if it is
 * {Ref, Reply} with Ref the ref of a call of to's, hand Reply to that
 * call, or drop it if the call is over, and return true; false: an
 * ordinary message. */
bool smarm__dist_rmon_reply(smarm_dist_t *d, smarm_pid_t to, const uint8_t *t,
			    size_t len, smarm_dist_pid_t from);

/* ---- gen.c: $gen_call and $gen_cast, both ways ---- */
/* Expose the server registered as name (behaviour b): 0, SMARM_EEXIST,
 * SMARM_EAGAIN (table full), SMARM_ESTATE (stopping). And undo it: 0 or
 * SMARM_ENOENT. */
int smarm__dist_serve(smarm_dist_t *d, const char *name,
		      const smarm_behaviour_t *b);
int smarm__dist_unserve(smarm_dist_t *d, const char *name);
/* A message arrived for the local name (or, name NULL, the local pid
 * lp): if it is for a served server, serve it: a $gen_call or
 * $gen_cast as a request (queued to the server now; a worker awaits a
 * call's reply), any other term to its info operation when it has one
 * (handle_info). GEN_* below says what was done. */
int smarm__dist_gen_route(smarm_dist_t *d, const char *name, smarm_pid_t lp,
			  const uint8_t *t, size_t len);
/* The gate of d's served calls' answers (gen.c INV-5): made by
 * smarm_dist_start (0 or SMARM_ENOMEM), shut by dist_free before the
 * watcher's channel goes (answers after it are dropped). */
int smarm__dist_gate_open(smarm_dist_t *d);
void smarm__dist_gate_shut(smarm_dist_t *d);
/* The watcher's channel carries answers the server could not write
 * itself as smarm_signal_t of this kind, reason a struct gen_route:
 * the watcher writes one (_answer) or, stopping, drops it (_drop, also
 * the channel's element destructor's). */
#define WATCH_ANSWER 0x5745
void smarm__dist_gen_answer(smarm_dist_t *d, void *route);
void smarm__dist_gen_drop(void *route);
/* smarm__dist_gen_route's answers: not for a served server (deliver it
 * as usual); served (queued, answered or dropped with a log line); for
 * a served server whose behaviour has no info operation for it
 * (deliver it as usual; if that fails, smarm__dist_info_drop). */
enum { GEN_NOT_SERVED, GEN_DONE, GEN_NO_INFO };
/* A message to a served server that nothing took: log and count it. */
void smarm__dist_info_drop(smarm_dist_t *d, const char *name, smarm_pid_t lp,
			   const char *why);
/* A call to a process of another node (to: its pid; or, name not NULL,
 * that name on to->node), as smarm_dist_call. */
int smarm__dist_gen_call(smarm_dist_t *d, const struct dist_epid *to,
			 const char *name, const void *req, size_t len,
			 uint64_t timeout_ns, smarm_dist_msg_t **reply);
/* {'$gen_cast', Req} to to (or name on to->node). */
int smarm__dist_gen_cast(smarm_dist_t *d, const struct dist_epid *to,
			 const char *name, const void *req, size_t len);
/* A reference of this node: NEWER_REFERENCE_EXT of id into b (cap
 * bytes; its size, written only if it fits); and back (0 or -1). */
size_t smarm__dist_put_ref(smarm_dist_t *d, uint64_t id, uint8_t *b,
			   size_t cap);
int smarm__dist_get_ref(smarm_dist_t *d, struct etf_rd *r, uint64_t *id);
/* The wire form of a local actor's pid. */
void smarm__dist_local_epid(smarm_dist_t *d, smarm_pid_t pid,
			    struct dist_epid *e);

/* ---- handshake.c ---- */
/*
 * Simultaneous connect, OTP's rule (net_kernel's accept_pending): when a
 * node accepts a handshake from a peer it is itself connecting to, the
 * attempt of the node with the greater name (compared as atoms: byte by
 * byte) goes on and the other gives way; the node that gives way then
 * uses the connection the peer's attempt makes.
 */
/* An internal status, never returned to a caller of the API: this
 * handshake gave way to the peer's own attempt (status nok, or our
 * attempt was displaced by the peer's, or "alive" answered false). */
#define DIST_GAVE_WAY 1
/* The acceptor's verdicts (the arbiter's answers). */
enum { HS_GO, HS_NOK, HS_SIMULTANEOUS, HS_ALIVE };
/* As acceptor of a handshake: the arbiter's verdict on peer, and the
 * step after an "alive" answered true (HS_GO or HS_NOK). */
struct hs_arbiter {
	int (*verdict)(void *arg, const char *peer);
	int (*displace)(void *arg, const char *peer);
	void *arg;
};
/* As initiator on connected fd: 0 with peer's flags and creation, or
 * SMARM_EAUTH / SMARM_ENOCONN, or DIST_GAVE_WAY (status nok; or
 * pending(arg) false: our attempt was displaced). */
int smarm__hs_initiate(smarm_dist_t *d, int fd, const char *peer,
		       uint64_t *flags, uint32_t *creation,
		       bool (*pending)(void *), void *arg);
/* As acceptor: 0 with the peer's name, flags and creation; the status
 * it is sent is the arbiter's (HS_GO sok, HS_NOK nok then
 * DIST_GAVE_WAY, HS_SIMULTANEOUS ok_simultaneous, HS_ALIVE alive). */
int smarm__hs_accept(smarm_dist_t *d, int fd, char *peer, size_t cap,
		     uint64_t *flags, uint32_t *creation,
		     const struct hs_arbiter *arb);

/* Split and check a node name: alive part into alive (cap bytes), host
 * part pointer into *host. 0 or SMARM_EINVAL. */
int smarm__dist_split(const char *node, char *alive, size_t cap,
		      const char **host);

/* A log line of the distribution, about pid (0: none). */
void smarm__dist_log(smarm_dist_t *d, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* SMARM_DIST_DIST_H */
