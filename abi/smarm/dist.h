/* SPDX-License-Identifier: MIT */
/*
 * smarm/dist.h - a libsmarm node as a member of an Erlang cluster: the
 * BEAM's own distribution protocol (epmd, the version 6 handshake with
 * the cookie challenge, the SEND and REG_SEND control messages). Include
 * it after (or instead of) smarm/smarm.h; it is not part of the umbrella
 * header, since a library built without erl_interface answers every call
 * here with SMARM_ENODIST.
 *
 * Model. smarm_dist_start() makes the calling actor's node a *hidden*
 * Erlang node named "alive@host": it listens on a TCP port, registers
 * the name and port with the host's epmd and accepts connections from
 * Erlang nodes that present the same cookie. A connection to another
 * node is made on demand, by the first send to it (or by
 * smarm_dist_connect). One actor per connection reads its frames and
 * answers its ticks; a send writes its frame from the sending actor.
 *
 * Terms. What crosses the wire is Erlang's external term format: a
 * *term* here is its bytes, starting with the version byte 131, exactly
 * what term_to_binary/1 makes and erl_interface's ei_x_encode_* build.
 * libsmarm checks every term that arrives (each length bounded by the
 * frame, nesting bounded) before any actor sees it, and every term it
 * sends, so ei_decode_* may be used on what a message holds.
 *
 * Messages. An Erlang process that sends to a libsmarm pid or to
 * {Name, 'alive@host'} puts one smarm_dist_msg_t pointer into the
 * target's dist mailbox (smarm_dist_mailbox): the term, and its sender
 * when the peer named one. A target without a dist mailbox, a pid that
 * names no live actor or a name nobody holds drops the message, as a
 * send to a dead process does in Erlang.
 *
 * Links and monitors. An Erlang process may monitor (by pid or by
 * {Name, Node}) or link a libsmarm actor: the actor's end reaches it as
 * 'DOWN' or 'EXIT' (normal, shutdown, killed, noproc, or
 * {smarm_crashed, Code}); its own end, or exit/2, reaches the actor as
 * an exit signal (kill: SMARM_EXIT_STOPPED; shutdown; normal; an
 * integer N or {smarm_crashed, N}, N within 32 bits: SMARM_EXIT_CRASHED
 * with reason N; anything else SMARM_EXIT_CRASHED with reason 0), and a
 * lost connection gives
 * each actor linked across it SMARM_EXIT_CRASHED with reason
 * SMARM_ENOCONN (Erlang's noconnection). A libsmarm actor monitors an
 * Erlang process with smarm_dist_monitor: its Down is Erlang's 'DOWN'
 * term in the actor's dist mailbox; it links one with smarm_dist_link,
 * with the same exit signals both ways.
 *
 * Pids. smarm_dist_pid_t names a process of any node of the cluster,
 * this one included (smarm_dist_self). It is a value: copy it, compare
 * its ids (the same process gives the same id for the life of one dist
 * handle), send it in messages, turn it into term bytes
 * (smarm_dist_pid_encode) to put it inside a term, and back
 * (smarm_dist_pid_decode).
 *
 * gen_server interop. smarm_dist_serve exposes a libsmarm server (a
 * behaviour plugin's, registered under a name) to Erlang's
 * gen_server:call and gen_server:cast, by {Name, Node} or by its pid:
 * requests are mapped to the behaviour's typed protocol and replies
 * back to terms (docs/distribution.md, "Terms"). smarm_dist_call and
 * smarm_dist_cast call and cast an Erlang gen_server, as gen_server:call
 * does: a monitor of the target, a timeout, raw terms.
 *
 * Security. Erlang distribution trusts every node that knows the cookie
 * with everything (any process, any code). Use it on a private network
 * or a loopback interface (see docs/distribution.md).
 */
#ifndef SMARM_DIST_H
#define SMARM_DIST_H

#include "smarm_plugin.h" /* smarm_behaviour_t; includes smarm.h */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * smarm_dist_t - a running distribution of one node (opaque; from
 * smarm_dist_start until smarm_dist_stop).
 */
typedef struct smarm_dist smarm_dist_t;

/*
 * smarm_dist_msg_t - one message that arrived from another node (opaque;
 * its receiver frees it with smarm_dist_msg_free).
 */
typedef struct smarm_dist_msg smarm_dist_msg_t;

/*
 * smarm_dist_pid_t - a process of any node, passed by value. Treat `id`
 * as opaque; 0 (SMARM_DIST_PID_NONE) names none. Ids are given out by
 * one dist handle and mean nothing to another.
 */
typedef struct {
	uint64_t id;
} smarm_dist_pid_t;

#ifdef __cplusplus
#define SMARM_DIST_PID_NONE (smarm_dist_pid_t{ 0 })
#else
#define SMARM_DIST_PID_NONE ((smarm_dist_pid_t){ 0 })
#endif

/* The longest node name ("alive@host"), in bytes, without the NUL. */
#define SMARM_DIST_NODE_MAX 255

/* The longest cookie, in bytes. */
#define SMARM_DIST_COOKIE_MAX 255

/*
 * The largest term smarm_dist_send() takes and the largest frame a peer
 * may send (a longer one closes its connection): 64 MiB.
 */
#define SMARM_DIST_TERM_MAX (64u << 20)

/*
 * smarm_dist_start() - make the calling actor's node a hidden node of an
 * Erlang cluster.
 *
 * name is the full node name, "alive@host" (alive: letters, digits, '_'
 * and '-'; host: a host name or an IPv4 address, as erl's -sname or
 * -name takes it). cookie is the shared secret; NULL reads it from
 * $HOME/.erlang.cookie, which must be a regular file of the caller's
 * user, readable by its owner only (as erl insists). bind_addr is the
 * IPv4 address to listen on ("127.0.0.1" keeps the node on this host;
 * NULL listens on every interface, as erl does). port is the TCP port to
 * listen on, 0 for one the kernel picks.
 *
 * Registers the name with the epmd of this host (127.0.0.1, port 4369 or
 * $ERL_EPMD_PORT), which must run: erl starts one, or `epmd -daemon`
 * does. The registration lasts until smarm_dist_stop.
 * Returns: 0, *out set. Errors: SMARM_EINVAL out or name NULL, name
 * without '@' or longer than SMARM_DIST_NODE_MAX, an alive part with
 * other characters, cookie empty or longer than SMARM_DIST_COOKIE_MAX,
 * bind_addr not an IPv4 address, port outside 0..65535;
 * SMARM_ENOTACTOR; SMARM_ECOOKIE cookie NULL and the cookie file is missing,
 * unreadable, empty, not the caller's or readable by others; SMARM_ENOEPMD no
 * epmd answers; SMARM_EEXIST epmd refused the name (another node holds it);
 * SMARM_ESYSTEM the listening socket could not be made (the port is
 * taken, ...); SMARM_ENOMEM; SMARM_ENODIST the library was built
 * without distribution.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_start(smarm_dist_t **out, const char *name,
			       const char *cookie, const char *bind_addr,
			       int port);

/*
 * smarm_dist_stop() - leave the cluster: close every connection (their
 * peers see the node go down), unregister from epmd, stop the actors
 * the distribution started and free d. Messages already in mailboxes
 * stay there. NULL is a no-op (returns 0).
 * Returns: 0. Errors: SMARM_ENOTACTOR; SMARM_ESTATE called from one of
 * the distribution's own actors, or d belongs to another node.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_stop(smarm_dist_t *d);

/*
 * smarm_dist_name() - the node name d was started with (valid until
 * smarm_dist_stop); NULL if d is NULL.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API const char *smarm_dist_name(const smarm_dist_t *d);

/*
 * smarm_dist_connect() - connect to node now (a send connects on demand:
 * this is for checking a peer, as net_adm:ping/1 does). Looks the node
 * up in its host's epmd, connects and runs the handshake; a node already
 * connected is a success at once. When node connects to us at the same
 * moment, OTP's rule decides whose attempt stands (the greater node
 * name's); either way this returns once the connection is up, as do
 * the sends and calls that connect on demand.
 * Returns: 0. Errors: SMARM_EINVAL d or node NULL, node malformed (as
 * for smarm_dist_start) or this node's own name; SMARM_ENOTACTOR;
 * SMARM_ENOEPMD the host's epmd does not answer; SMARM_ENOCONN epmd
 * knows no such node, the host cannot be resolved, or the connection
 * failed or was lost during the handshake; SMARM_EAUTH the peer refused
 * us or failed our cookie check (a log line says which);
 * SMARM_ESTATE d is stopping; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_connect(smarm_dist_t *d, const char *node);

/*
 * smarm_dist_mailbox() - give the calling actor a dist mailbox: a new
 * channel of smarm_dist_msg_t * elements, published as its mailbox for
 * messages from other nodes. The caller owns the channel's references
 * (receive with smarm_chan_recv into a smarm_dist_msg_t *, free each
 * message with smarm_dist_msg_free; the channel's destructor frees the
 * ones never received).
 * Returns: 0, *out set. Errors: SMARM_EINVAL d or out NULL;
 * SMARM_ENOTACTOR; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_mailbox(smarm_dist_t *d, smarm_chan_t **out);

/*
 * smarm_dist_msg_term() - the term a message holds: *term points at *len
 * bytes of the external term format, starting with the version byte 131
 * (valid until the message is freed).
 * Returns: 0. Errors: SMARM_EINVAL msg, term or len NULL.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_msg_term(const smarm_dist_msg_t *msg,
				  const void **term, size_t *len);

/*
 * smarm_dist_msg_from() - who sent a message: the sender's pid when the
 * peer named it (REG_SEND and SEND_SENDER do; a plain SEND from an
 * older node does not).
 * Returns: 0, *from set. Errors: SMARM_EINVAL msg or from NULL;
 * SMARM_ENOENT the peer did not name the sender (*from is then
 * SMARM_DIST_PID_NONE).
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_msg_from(const smarm_dist_msg_t *msg,
				  smarm_dist_pid_t *from);

/*
 * smarm_dist_msg_free() - free a message received from a dist mailbox.
 * NULL is a no-op. Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API void smarm_dist_msg_free(smarm_dist_msg_t *msg);

/*
 * smarm_dist_self() - the cluster-wide pid of the local actor pid.
 * Returns: 0, *out set. Errors: SMARM_EINVAL d or out NULL, or pid
 * SMARM_PID_NONE; SMARM_ENOMEM; SMARM_EAGAIN the table of pids is full
 * (SMARM_DIST_PIDS_MAX).
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_self(smarm_dist_t *d, smarm_pid_t pid,
			      smarm_dist_pid_t *out);

/*
 * The most distinct pids one dist handle names at once (each pid seen as
 * a sender or decoded takes one entry until smarm_dist_stop).
 */
#define SMARM_DIST_PIDS_MAX (1u << 20)

/*
 * smarm_dist_pid_local() - the local actor a pid of this node names.
 * Returns: 0, *out set. Errors: SMARM_EINVAL d or out NULL, or p is no
 * pid of d; SMARM_ENOENT p is a process of another node, or of an
 * earlier incarnation of this node name.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_pid_local(smarm_dist_t *d, smarm_dist_pid_t p,
				   smarm_pid_t *out);

/*
 * smarm_dist_pid_node() - the name of the node a pid lives on, copied
 * with its NUL into buf (at most cap bytes).
 * Returns: 0. Errors: SMARM_EINVAL d or buf NULL, or p is no pid of d;
 * SMARM_ETOOBIG cap is too small (nothing copied).
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_pid_node(smarm_dist_t *d, smarm_dist_pid_t p,
				  char *buf, size_t cap);

/*
 * smarm_dist_pid_encode() - write p as a term (NEW_PID_EXT, without the
 * version byte 131), to put inside a term being built (ei_x_append_buf).
 * *len is set to the size of the encoding; the bytes are written only
 * if it is at most cap (buf may be NULL when cap is 0: a size query).
 * Returns: 0. Errors: SMARM_EINVAL d or len NULL, buf NULL with cap > 0,
 * or p is no pid of d.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_pid_encode(smarm_dist_t *d, smarm_dist_pid_t p,
				    void *buf, size_t cap, size_t *len);

/*
 * smarm_dist_pid_decode() - read the pid term at buf (PID_EXT or
 * NEW_PID_EXT, without a version byte: point at it inside a term) into
 * *out, and its size into *used (used may be NULL).
 * Returns: 0. Errors: SMARM_EINVAL d, buf or out NULL, or the len bytes
 * at buf do not start with a well-formed pid; SMARM_ENOMEM;
 * SMARM_EAGAIN the table of pids is full.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_pid_decode(smarm_dist_t *d, const void *buf,
				    size_t len, size_t *used,
				    smarm_dist_pid_t *out);

/*
 * smarm_dist_send() - send a term to the process `to`, on any node: the
 * message Erlang's `To ! Term` sends. A process of another node is
 * reached over its connection, made now if there is none (as
 * smarm_dist_connect); one of this node goes into its dist mailbox.
 * Like Erlang's send it does not say whether the process is alive: a
 * message to a dead process is dropped. The term is copied.
 * Returns: 0. Errors: SMARM_EINVAL d or term NULL, to is no pid of d,
 * len 0 or over SMARM_DIST_TERM_MAX, or the bytes are not one complete
 * term of the external format; SMARM_ENOTACTOR; SMARM_ENOCONN,
 * SMARM_ENOEPMD, SMARM_EAUTH no connection to to's node (as for
 * smarm_dist_connect; the message is lost); SMARM_ESTATE d is stopping;
 * SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_send(smarm_dist_t *d, smarm_dist_pid_t to,
			      const void *term, size_t len);

/*
 * smarm_dist_send_name() - send a term to the process registered as
 * name on node: Erlang's `{Name, Node} ! Term`, with the calling actor
 * as the sender. node may be this node's own name (then name is looked
 * up in the local registry).
 * Returns: 0. Errors: SMARM_EINVAL d, node, name or term NULL, node
 * malformed, name empty or longer than 255 bytes, or the term as for
 * smarm_dist_send; SMARM_ENOTACTOR; SMARM_ENOCONN, SMARM_ENOEPMD,
 * SMARM_EAUTH as for smarm_dist_send; SMARM_ESTATE d is stopping;
 * SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_send_name(smarm_dist_t *d, const char *node,
				   const char *name, const void *term,
				   size_t len);

/*
 * smarm_dist_monitor() - monitor a process of another node, as Erlang's
 * erlang:monitor(process, Pid).
 *
 * When it ends, or the connection to its node is lost, the calling
 * actor's dist mailbox gets one message whose term is Erlang's
 * {'DOWN', Ref, process, Pid, Reason} (Reason as its node says it:
 * normal, noproc, noconnection, ...) and for which smarm_dist_msg_down
 * gives *ref. A process already gone gives noproc; a node that cannot be
 * reached gives noconnection (not an error, as in Erlang). The monitor
 * belongs to the caller (only it may remove it) but does not end with
 * it: remove it, or let it fire.
 * Returns: 0, *ref set (nonzero). Errors: SMARM_EINVAL d or ref NULL,
 * target is no pid of d or a pid of this node (use smarm_monitor);
 * SMARM_ENOTACTOR; SMARM_ESTATE d is stopping; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_monitor(smarm_dist_t *d, smarm_dist_pid_t target,
				 uint64_t *ref);

/*
 * smarm_dist_demonitor() - remove a monitor the caller set with
 * smarm_dist_monitor. No Down of it is delivered after this returns
 * (one already in the mailbox stays there).
 * Returns: 0. Errors: SMARM_EINVAL d NULL or ref 0; SMARM_ENOTACTOR;
 * SMARM_ENOENT no monitor of the caller's has that ref in place (it
 * fired, was removed, or is another actor's).
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_demonitor(smarm_dist_t *d, uint64_t ref);

/*
 * smarm_dist_msg_down() - whether a message is the Down of a
 * smarm_dist_monitor, and of which: *ref set to its ref.
 * Returns: 0. Errors: SMARM_EINVAL msg or ref NULL; SMARM_ENOENT the
 * message is no such Down (*ref set to 0).
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_msg_down(const smarm_dist_msg_t *msg, uint64_t *ref);

/*
 * smarm_dist_link() - link the calling actor and a process of another
 * node, as Erlang's link/1 (the LINK control message; the connection is
 * made if there is none). Linking again what is linked does nothing.
 *
 * When the caller ends, the process gets the exit signal with the
 * caller's reason (normal, shutdown, killed, {smarm_crashed, Code}).
 * When the process ends, the caller gets an exit signal (see "Links and
 * monitors" above): normal is ignored unless it traps exits; any other
 * reason ends it (SMARM_EXIT_SHUTDOWN for shutdown, else
 * SMARM_EXIT_CRASHED with reason 0) or, if it traps, arrives as a
 * SMARM_SIGNAL_EXIT message. A process that does not exist answers
 * noproc, which arrives the same way (SMARM_EXIT_CRASHED, reason 0). A
 * node that cannot be reached, or a connection lost later, is an exit
 * signal SMARM_EXIT_CRASHED with reason SMARM_ENOCONN (Erlang's
 * noconnection), not an error of this call, as in Erlang.
 * Returns: 0. Errors: SMARM_EINVAL d NULL, target is no pid of d or a
 * pid of this node (use smarm_link); SMARM_ENOTACTOR; SMARM_ESTATE d is
 * stopping; SMARM_ENOMEM (no link is set on an error).
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_link(smarm_dist_t *d, smarm_dist_pid_t target);

/*
 * smarm_dist_unlink() - remove a link the caller set with
 * smarm_dist_link (UNLINK_ID), as Erlang's unlink/1: once it returns,
 * the link has no effect on the caller, even if the process ended
 * before. Unlinking what is not linked is no error. A link that an
 * Erlang process set on the caller is not removed by it (the Erlang
 * side unlinks those).
 * Returns: 0. Errors: SMARM_EINVAL d NULL, target is no pid of d or a
 * pid of this node; SMARM_ENOTACTOR.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_unlink(smarm_dist_t *d, smarm_dist_pid_t target);

/*
 * smarm_dist_monitor_node() - as Erlang's monitor_node/2: with on true,
 * the caller gets {nodedown, Node} (a term in its dist mailbox, from no
 * pid) when the connection to node is lost or the distribution stops,
 * after every message that came over it; the connection is made if
 * there is none, and a node that cannot be reached is a nodedown at
 * once. Each call with on true is one monitor and one message; on false
 * removes one (none: no error).
 * Returns: 0. Errors: SMARM_EINVAL d NULL, node malformed (as for
 * smarm_dist_start) or this node's own name; SMARM_ENOTACTOR;
 * SMARM_ESTATE d is stopping (on true); SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_monitor_node(smarm_dist_t *d, const char *node,
				      bool on);

/*
 * smarm_dist_serve() - make the libsmarm server registered as name on
 * this node callable from other nodes, as a gen_server: Erlang's
 * gen_server:call({Name, Node}, Request[, Timeout]) and
 * gen_server:cast({Name, Node}, Request) reach its handlers, and so do
 * the same calls by the pid of the actor that holds name at the time
 * (smarm_dist_self gives it; a restarted server is found again by name).
 *
 * b is the server's behaviour (a gen_server, or a gen_statem machine,
 * which gen_statem:call and gen_statem:cast reach the same way): its
 * protocol says how a request maps to an operation and its arguments,
 * and the reply to a term. Request is Op (an atom: an operation
 * without arguments) or {Op, Arg1, ..., ArgN}; a call must name a call
 * operation, a cast a cast operation. The reply is {Tag, Reply} to the
 * caller, where Reply is the handler's return as a term, ok for a call
 * without a reply type, {error, Reason} for an error reply
 * (smarm_gs_reply_error, smarm_sm_reply_error; Reason an integer), and,
 * for a request that cannot be served, at once: {error, badarg}
 * (Request malformed, wrong count, type or range of an argument),
 * {error, {unknown_op, Op}}, {error, {not_a_call, Op}}, {error, busy}
 * (SMARM_DIST_GEN_MAX calls already waiting), or {error, E} with E the
 * lower-case name of the libsmarm status without its SMARM_ prefix
 * (edown: the server dropped it unanswered: smarm_reply_drop; efull:
 * its queue is at its limit). A server that is gone when the call
 * arrives (ended, or nobody holds name; whatever the request), or that
 * ends with the call queued or taken and not answered, sends no reply:
 * the caller's monitor (gen_server:call's) makes the call exit noproc,
 * or with the server's reason, as in OTP (a monitor or link of an
 * actor already ended gets noproc); a live actor holding name that is
 * no server of b sends none either, as a process that is no gen_server
 * in OTP, and the call times out. A cast that cannot
 * be served is dropped (a debug log line says why). The types:
 * docs/distribution.md, "Terms". Other messages to the name or pid
 * (Erlang's `Name ! Term`, handle_info's) go to the behaviour's info
 * operations: Op or {Op, Args...} naming an info operation whose
 * arguments fit, as smarm_server_info; any other term, in the raw form,
 * to `info dist_info(bytes)` if the protocol has it; else to the
 * holder's dist mailbox, or, if it has none, they are dropped with a
 * log line and counted (SMARM_STAT_DIST_INFO_DROPPED); see
 * docs/distribution.md, "handle_info".
 *
 * A request is queued to the server as it arrives, so the requests of
 * one Erlang process keep their order (a cast, then a call, sees the
 * cast done). A call's reply is written to the connection by the
 * server's actor as it answers (one given elsewhere, such as smarm_reply
 * on a token from another thread or smarm_reply_drop, by an actor of
 * the distribution), as long as it takes (the Erlang caller's timeout
 * is the caller's business); one given after smarm_dist_stop began may
 * be dropped.
 *
 * b must stay valid (its plugin open) while served; once its plugin is
 * unloaded, calls are answered {error, noproc}. The server need not run
 * yet.
 * Returns: 0. Errors: SMARM_EINVAL d, name or b NULL, name empty or
 * longer than SMARM_NAME_MAX, or b no behaviour of a loaded plugin;
 * SMARM_EEXIST name is served already; SMARM_EAGAIN
 * SMARM_DIST_SERVE_MAX names are served; SMARM_ESTATE d is stopping.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_serve(smarm_dist_t *d, const char *name,
			       const smarm_behaviour_t *b);

/* The most names one dist handle serves at once (smarm_dist_serve). */
#define SMARM_DIST_SERVE_MAX 64

/* The most calls from other nodes waiting for their answers at once;
 * more are answered {error, busy}. */
#define SMARM_DIST_GEN_MAX 1024

/*
 * smarm_dist_unserve() - stop serving name: later requests to it are
 * delivered as any message (and dropped if its holder has no dist
 * mailbox); those being served finish.
 * Returns: 0. Errors: SMARM_EINVAL d or name NULL, name empty or longer
 * than SMARM_NAME_MAX; SMARM_ENOENT name is not served.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_unserve(smarm_dist_t *d, const char *name);

/*
 * smarm_dist_call() - call the gen_server `to` (a process of another
 * node) as gen_server:call(To, Request, Timeout) does, and wait for its
 * reply.
 *
 * req is Request as a term (131 first, as smarm_dist_send takes it;
 * copied). The call monitors the server (MONITOR_P), sends
 * {'$gen_call', {Self, Ref}, Request} with the monitor's Ref as its tag,
 * and waits at most timeout_ns (SMARM_NO_TIMEOUT: forever) for the
 * first of: the reply {Ref, Reply}, which ends the monitor
 * (DEMONITOR_P); the monitor's Down; the timeout. The reply and the
 * Down go to the call, never into the caller's dist mailbox (the caller
 * needs none), and a reply that comes after the call ended is dropped.
 *
 * On success *reply (reply may be NULL to discard it) is a message
 * whose term is Reply (131 first) and whose sender is the server's pid
 * when the peer named it; free it with smarm_dist_msg_free. On
 * SMARM_EDOWN *reply is a message whose term is the exit reason; on
 * any other error it is NULL.
 * Returns: 0. Errors: SMARM_EINVAL d NULL, to is no pid of d or a pid
 * of this node (call a local server with smarm_server_call), or req as
 * for smarm_dist_send; SMARM_ENOTACTOR; SMARM_ENOPROC the server is not
 * there (the Down's noproc); SMARM_ENOCONN its node cannot be reached,
 * or the connection was lost during the call (noconnection; no epmd,
 * a refused handshake and the like all come as this); SMARM_EDOWN the
 * server ended before it replied (*reply: the reason); SMARM_ETIMEDOUT
 * (the monitor is removed; a late reply is dropped); SMARM_ESTATE d is
 * stopping; SMARM_ENOMEM; SMARM_EINTERNAL.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_call(smarm_dist_t *d, smarm_dist_pid_t to,
			      const void *req, size_t len, uint64_t timeout_ns,
			      smarm_dist_msg_t **reply);

/*
 * smarm_dist_call_name() - smarm_dist_call to the process registered as
 * name on node: gen_server:call({Name, Node}, Request, Timeout). The
 * monitor is by name, so a name nobody holds is SMARM_ENOPROC at once.
 * Returns: 0. Errors: as smarm_dist_call, and SMARM_EINVAL node NULL,
 * malformed or this node's own name, or name NULL, empty or longer than
 * 255 bytes.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_call_name(smarm_dist_t *d, const char *node,
				   const char *name, const void *req,
				   size_t len, uint64_t timeout_ns,
				   smarm_dist_msg_t **reply);

/*
 * smarm_dist_cast() / smarm_dist_cast_name() - gen_server:cast: send
 * {'$gen_cast', Request} to the process to, or to name on node, with
 * the caller as the sender; never waits for the server (it may connect
 * first, as smarm_dist_send does) and does not say whether it is there.
 * Returns: 0. Errors: SMARM_EINVAL as for smarm_dist_call and
 * smarm_dist_call_name; SMARM_ENOTACTOR; SMARM_ENOCONN, SMARM_ENOEPMD,
 * SMARM_EAUTH no connection to the node (as for smarm_dist_send);
 * SMARM_ESTATE d is stopping; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_dist_cast(smarm_dist_t *d, smarm_dist_pid_t to,
			      const void *req, size_t len);
SMARM_API int smarm_dist_cast_name(smarm_dist_t *d, const char *node,
				   const char *name, const void *req,
				   size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SMARM_DIST_H */
