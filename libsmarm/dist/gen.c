/* SPDX-License-Identifier: MIT */
/*
 * dist/gen.c - gen_server interop over the distribution, both ways:
 * Erlang's gen_server:call and gen_server:cast reach a libsmarm server
 * that smarm_dist_serve exposes (the `$gen_call` and `$gen_cast`
 * messages, their requests mapped to the behaviour's typed protocol and
 * the reply mapped back to a term), and a libsmarm actor calls or casts
 * an Erlang gen_server (smarm_dist_call, smarm_dist_cast).
 *
 * Erlang to libsmarm. The reader of a connection sees each message
 * before delivery (conn.c): a `{'$gen_call', {From, Tag}, Request}` or
 * `{'$gen_cast', Request}` sent to a served name, or to the pid that
 * holds one now, is mapped to the operation and its arguments
 * (docs/distribution.md, "Terms") and queued to the server right there,
 * so requests reach the server in the order they arrived, as OTP
 * orders the messages of one sender. Any other message to a served
 * server is its handle_info (route_info): queued the same way to the
 * behaviour's matching info operation, or raw to `dist_info(bytes)`;
 * with neither, conn.c delivers it as any message, and one nobody
 * takes is dropped with a log line and counted (INV-4). A call's answer
 * is routed (struct bhv_route): the server's own actor, as it answers,
 * writes it to the connection itself, so a served call costs no actor
 * of its own and no wake beyond the server's; an answer given elsewhere
 * (a token answered on another thread or in another callback, a
 * machine's smarm_sm_reply, inside plugin code) may not park where it
 * is given, and is handed to the watcher, which writes it. What the
 * server's end leaves unanswered (and an envelope freed unread at its
 * end) is not written: the Erlang caller's monitor ends its call with
 * the server's reason, as gen_server's caller's does. A slow handler
 * never stalls the connection, and calls a server answers later
 * (smarm_gs_reply_later) run side by side as in OTP. The answer is
 * `{Tag, Reply}` to From with a plain SEND: OTP's caller matches its
 * receive on the tag (since OTP 24 `[alias | Ref]`), so no ALIAS_SEND
 * is needed. A request that cannot be served is answered
 * `{Tag, {error, Why}}` at once, never left to time out, except a call
 * whose server is gone (ended, or its name held by nobody): as to a
 * dead gen_server, nothing is written, and the caller's monitor (gen:
 * do_call's) makes the call exit noproc or with the server's reason. A
 * cast that cannot be served is dropped with a log line, a cast being
 * fire-and-forget.
 *
 * libsmarm to Erlang. smarm_dist_call is gen:do_call: a monitor of the
 * target (by pid or by {Name, Node}) whose ref is the call's tag, the
 * request sent after it on the same connection, then the first of the
 * reply `{Ref, Reply}`, the monitor's Down (noproc, noconnection, the
 * server's end) or the timeout. The monitor is watch.c's rmon with a
 * channel of the call's own: the reader hands both the reply
 * (smarm__dist_rmon_reply) and the Down to it, never to the caller's
 * dist mailbox, and drops a reply whose call is over (its ref carries
 * DIST_CALL_BIT).
 *
 * Ownership: a call's route (struct gen_route) is malloc'd by the reader
 * and, once its request is queued, belongs to the call: freed by whoever
 * writes or drops its answer (the server's actor, the watcher, the
 * watcher channel's destructor). It holds a reference to the gate
 * (struct dist_gate), which the handle holds one of too; the last frees
 * it. A call's channel (libsmarm to Erlang) is the caller's, and its
 * rmon holds one sender reference until taken (watch.c).
 * Locking: d_lock guards d_serves, d_nserves and d_gen_jobs. A gate's
 * g_lock (a pthread mutex; only d_lock is taken under it; it is taken
 * under a token set's tt_lock) guards g_d.
 * Invariants:
 *   INV-1 a served call is counted in d_gen_jobs from its request's
 *         send until its answer is written or dropped; at most
 *         DIST_GEN_JOBS_MAX wait at once (more are answered busy).
 *   INV-2 every `$gen_call` queued to a server is answered exactly once
 *         (the behaviour layer calls its route once: gen_server.c
 *         INV-1), or not at all once the distribution stops: an answer
 *         given after smarm_dist_stop began, or queued to the watcher
 *         when it ends, is dropped.
 *   INV-3 nothing in a request is trusted: every term was bounded by
 *         smarm__etf_valid (conn.c INV-2) and is read here through the
 *         bounded reader; a value that does not fit the protocol's type
 *         is refused, never truncated.
 *   INV-4 no message to a served server is lost silently: it is
 *         served, delivered, or dropped with a log line and a count
 *         in SMARM_STAT_DIST_INFO_DROPPED (smarm__dist_info_drop).
 *   INV-5 d outlives every use an answer makes of it: a route reaches d
 *         only through the gate, under g_lock, and either counts the
 *         server's write in d_actors (only while !d_stopping, so the
 *         stop waits for it: conn.c INV-4) or reads the watcher's
 *         channel handle, sent to after g_lock is released (a send may
 *         yield): dist_free clears g_d before that channel goes, the
 *         channel's destructor drops what was queued, and a send after
 *         it fails on the stale handle (generation-checked), the
 *         answer dropped. g_lock is never held across a park or yield.
 * See: docs/distribution.md ("gen_server interop").
 */
#include "dist.h"

#include "../behaviour/bhv.h"

#include <ei.h>

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the served names ---- */

int smarm__dist_serve(smarm_dist_t *d, const char *name,
		      const smarm_behaviour_t *b)
{
	int rc = 0;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	if (d->d_stopping)
		rc = SMARM_ESTATE;
	for (unsigned i = 0; rc == 0 && i < d->d_nserves; i++)
		if (strcmp(d->d_serves[i].sv_name, name) == 0)
			rc = SMARM_EEXIST;
	if (rc == 0 && d->d_nserves == DIST_SERVE_MAX)
		rc = SMARM_EAGAIN;
	if (rc == 0) {
		struct dist_serve *sv = &d->d_serves[d->d_nserves++];
		snprintf(sv->sv_name, sizeof sv->sv_name, "%s", name);
		sv->sv_b = b;
	}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	return rc;
}

int smarm__dist_unserve(smarm_dist_t *d, const char *name)
{
	int rc = SMARM_ENOENT;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	for (unsigned i = 0; i < d->d_nserves; i++)
		if (strcmp(d->d_serves[i].sv_name, name) == 0) {
			d->d_serves[i] = d->d_serves[--d->d_nserves];
			rc = 0;
			break;
		}
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	return rc;
}

/* The served entry of name, or (name NULL) of the name lp holds now. */
static bool find_served(smarm_dist_t *d, const char *name, smarm_pid_t lp,
			struct dist_serve *out)
{
	for (unsigned i = 0;; i++) {
		bool more;
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		more = i < d->d_nserves;
		if (more)
			*out = d->d_serves[i];
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
		if (!more)
			return false;
		if (name != NULL) {
			if (strcmp(out->sv_name, name) == 0)
				return true;
			continue;
		}
		smarm_pid_t holder; /* outside d_lock: the registry's own */
		if (smarm_node_whereis(d->d_node, out->sv_name, &holder) == 0 &&
		    smarm_pid_eq(holder, lp))
			return true;
	}
}

/* ---- reading request terms (INV-3) ---- */

/* An integer at r as sign and magnitude: 0, or -1 (no integer, or one
 * outside -2^64 .. 2^64). */
static int rd_int(struct etf_rd *r, bool *neg, uint64_t *mag)
{
	const uint8_t *p = r->p + r->i;
	size_t left = r->n - r->i;
	int64_t v;
	if (smarm__etf_int(r, &v) == 0) {
		*neg = v < 0;
		*mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
		return 0;
	}
	if (left < 3 || p[0] != 110 || p[1] > 8 || left < 3u + p[1])
		return -1; /* SMALL_BIG_EXT: n, sign, n digits (LE) */
	uint64_t m = 0;
	for (unsigned k = p[1]; k-- > 0;)
		m = m << 8 | p[3 + k];
	*neg = p[2] != 0;
	*mag = m;
	r->i += 3u + p[1];
	return 0;
}

/* A number at r as a double: a float, or an integer (converted). */
static int rd_float(struct etf_rd *r, double *x)
{
	const uint8_t *p = r->p + r->i;
	if (r->n - r->i >= 9 && p[0] == 70) { /* NEW_FLOAT_EXT */
		uint64_t u = 0;
		for (int k = 1; k <= 8; k++)
			u = u << 8 | p[k];
		memcpy(x, &u, sizeof *x);
		r->i += 9;
		return 0;
	}
	bool neg;
	uint64_t mag;
	if (rd_int(r, &neg, &mag) != 0)
		return -1;
	*x = neg ? -(double)mag : (double)mag;
	return 0;
}

/* The bits of an integer type (i8 .. u64). */
static unsigned int_bits(int type)
{
	static const uint8_t bits[] = {
		[SMARM_T_I8] = 8,   [SMARM_T_I16] = 16, [SMARM_T_I32] = 32,
		[SMARM_T_I64] = 64, [SMARM_T_U8] = 8,	[SMARM_T_U16] = 16,
		[SMARM_T_U32] = 32, [SMARM_T_U64] = 64
	};
	return bits[type];
}

/* One scalar, str or bytes of type at r into *v (str and bytes point
 * into the term): 0, or -1 it is no such value or out of range. */
static int rd_value(smarm_dist_t *d, struct etf_rd *r, int type,
		    smarm_value_t *v)
{
	memset(v, 0, sizeof *v);
	v->type = type;
	if (smarm__bhv_type_int(type)) {
		bool neg;
		uint64_t mag;
		unsigned bits = int_bits(type);
		if (rd_int(r, &neg, &mag) != 0)
			return -1;
		if (type >= SMARM_T_U8) { /* unsigned */
			uint64_t max =
				bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
			if ((neg && mag != 0) || mag > max)
				return -1;
			v->v.u = mag;
			return 0;
		}
		uint64_t lim = 1ull << (bits - 1); /* -lim .. lim - 1 */
		if (neg ? mag > lim : mag >= lim)
			return -1;
		v->v.i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
		return 0;
	}
	double x;
	char atom[8];
	struct dist_epid e;
	const uint8_t *p = r->p + r->i;
	size_t left = r->n - r->i;
	switch (type) {
	case SMARM_T_F32:
		if (rd_float(r, &x) != 0 || (isfinite(x) && fabs(x) > FLT_MAX))
			return -1;
		v->v.f32 = (float)x;
		return 0;
	case SMARM_T_F64:
		if (rd_float(r, &x) != 0)
			return -1;
		v->v.f64 = x;
		return 0;
	case SMARM_T_BOOL:
		if (smarm__etf_atom(r, atom, sizeof atom) != 0)
			return -1;
		if (strcmp(atom, "true") != 0 && strcmp(atom, "false") != 0)
			return -1;
		v->v.b = atom[0] == 't';
		return 0;
	case SMARM_T_PID:
		if (smarm__etf_pid(r, &e) != 0 ||
		    strcmp(e.node, d->d_name) != 0 ||
		    (e.creation != 0 && e.creation != d->d_creation))
			return -1; /* only a pid of this node is an actor */
		v->v.pid.id = (uint64_t)e.serial << 32 | e.num;
		return 0;
	case SMARM_T_STR:
	case SMARM_T_BYTES:
		if (left >= 1 && p[0] == 106) { /* [] */
			v->v.p = "";
			r->i += 1;
			return 0;
		}
		if (left >= 5 && p[0] == 109) { /* BINARY_EXT */
			uint32_t n = (uint32_t)p[1] << 24 |
				     (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 8 | p[4];
			if (left - 5 < n)
				return -1;
			v->v.p = p + 5;
			v->len = n;
			r->i += 5 + (size_t)n;
			return 0;
		}
		if (left >= 3 && p[0] == 107) { /* STRING_EXT: a charlist */
			uint32_t n = (uint32_t)p[1] << 8 | p[2];
			if (left - 3 < n)
				return -1;
			v->v.p = p + 3;
			v->len = n;
			r->i += 3 + (size_t)n;
			return 0;
		}
		return -1;
	default:
		return -1;
	}
}

/* Store scalar v (of its type) into a tuple's struct member at m. */
static void put_member(void *m, const smarm_value_t *v)
{
	switch (v->type) {
	case SMARM_T_I8: {
		int8_t x = (int8_t)v->v.i;
		memcpy(m, &x, sizeof x);
		break;
	}
	case SMARM_T_I16: {
		int16_t x = (int16_t)v->v.i;
		memcpy(m, &x, sizeof x);
		break;
	}
	case SMARM_T_I32: {
		int32_t x = (int32_t)v->v.i;
		memcpy(m, &x, sizeof x);
		break;
	}
	case SMARM_T_I64:
		memcpy(m, &v->v.i, sizeof v->v.i);
		break;
	case SMARM_T_U8: {
		uint8_t x = (uint8_t)v->v.u;
		memcpy(m, &x, sizeof x);
		break;
	}
	case SMARM_T_U16: {
		uint16_t x = (uint16_t)v->v.u;
		memcpy(m, &x, sizeof x);
		break;
	}
	case SMARM_T_U32: {
		uint32_t x = (uint32_t)v->v.u;
		memcpy(m, &x, sizeof x);
		break;
	}
	case SMARM_T_U64:
		memcpy(m, &v->v.u, sizeof v->v.u);
		break;
	case SMARM_T_F32:
		memcpy(m, &v->v.f32, sizeof v->v.f32);
		break;
	case SMARM_T_F64:
		memcpy(m, &v->v.f64, sizeof v->v.f64);
		break;
	case SMARM_T_BOOL:
		memcpy(m, &v->v.b, sizeof v->v.b);
		break;
	case SMARM_T_PID:
		memcpy(m, &v->v.pid, sizeof v->v.pid);
		break;
	}
}

/* The scalar of type at a tuple's struct member m, as a value. */
static smarm_value_t get_member(const void *m, int type)
{
	smarm_value_t v;
	memset(&v, 0, sizeof v);
	v.type = type;
	union {
		int8_t i8;
		int16_t i16;
		int32_t i32;
		uint8_t u8;
		uint16_t u16;
		uint32_t u32;
	} x;
	switch (type) {
	case SMARM_T_I8:
		memcpy(&x.i8, m, 1);
		v.v.i = x.i8;
		break;
	case SMARM_T_I16:
		memcpy(&x.i16, m, 2);
		v.v.i = x.i16;
		break;
	case SMARM_T_I32:
		memcpy(&x.i32, m, 4);
		v.v.i = x.i32;
		break;
	case SMARM_T_I64:
		memcpy(&v.v.i, m, 8);
		break;
	case SMARM_T_U8:
		memcpy(&x.u8, m, 1);
		v.v.u = x.u8;
		break;
	case SMARM_T_U16:
		memcpy(&x.u16, m, 2);
		v.v.u = x.u16;
		break;
	case SMARM_T_U32:
		memcpy(&x.u32, m, 4);
		v.v.u = x.u32;
		break;
	case SMARM_T_U64:
		memcpy(&v.v.u, m, 8);
		break;
	case SMARM_T_F32:
		memcpy(&v.v.f32, m, 4);
		break;
	case SMARM_T_F64:
		memcpy(&v.v.f64, m, 8);
		break;
	case SMARM_T_BOOL:
		memcpy(&v.v.b, m, sizeof v.v.b);
		break;
	case SMARM_T_PID:
		memcpy(&v.v.pid, m, sizeof v.v.pid);
		break;
	}
	return v;
}

/* Argument i of op at r into *v; a tuple's struct into buf. 0 or -1. */
static int rd_arg(smarm_dist_t *d, struct etf_rd *r, const struct bhv_op *op,
		  unsigned i, smarm_value_t *v, void *buf)
{
	const struct bhv_tuple *tu = bhv_arg_tuple(op, i);
	if (tu == NULL)
		return rd_value(d, r, op->op_args[i], v);
	uint32_t n;
	if (smarm__etf_tuple(r, &n) != 0 || n != tu->tu_n)
		return -1;
	memset(buf, 0, tu->tu_ffi.size);
	for (unsigned k = 0; k < n; k++) {
		smarm_value_t e;
		if (rd_value(d, r, tu->tu_types[k], &e) != 0)
			return -1;
		put_member((char *)buf + tu->tu_off[k], &e);
	}
	*v = smarm_value_tuple(buf, tu->tu_ffi.size);
	return 0;
}

/* ---- writing reply terms ---- */

/* Scalar, str or bytes v as a term, appended to x: 0 or -1. */
static int put_value(smarm_dist_t *d, ei_x_buff *x, const smarm_value_t *v)
{
	switch (v->type) {
	case SMARM_T_VOID:
		return ei_x_encode_atom(x, "ok");
	case SMARM_T_I8:
	case SMARM_T_I16:
	case SMARM_T_I32:
	case SMARM_T_I64:
		return ei_x_encode_longlong(x, (long long)v->v.i);
	case SMARM_T_U8:
	case SMARM_T_U16:
	case SMARM_T_U32:
	case SMARM_T_U64:
		return ei_x_encode_ulonglong(x, (unsigned long long)v->v.u);
	case SMARM_T_F32:
		return ei_x_encode_double(x, (double)v->v.f32);
	case SMARM_T_F64:
		return ei_x_encode_double(x, v->v.f64);
	case SMARM_T_BOOL:
		return ei_x_encode_atom(x, v->v.b ? "true" : "false");
	case SMARM_T_STR:
	case SMARM_T_BYTES:
		return ei_x_encode_binary(x, v->v.p, (int)v->len);
	case SMARM_T_PID: {
		struct dist_epid e;
		uint8_t b[DIST_TERM_SMALL];
		smarm__dist_local_epid(d, v->v.pid, &e);
		size_t n = smarm__etf_put_pid(b, sizeof b, &e);
		return ei_x_append_buf(x, (const char *)b, (int)n);
	}
	default:
		return -1;
	}
}

/* A reply value as a term (tu: a tuple reply's type, or NULL),
 * appended to x: 0 or -1. */
static int put_reply(smarm_dist_t *d, ei_x_buff *x, const struct bhv_tuple *tu,
		     const smarm_value_t *v)
{
	if (tu == NULL || v->type != SMARM_T_TUPLE)
		return put_value(d, x, v);
	if (v->v.p == NULL || v->len != tu->tu_ffi.size ||
	    ei_x_encode_tuple_header(x, tu->tu_n) != 0)
		return -1;
	for (unsigned k = 0; k < tu->tu_n; k++) {
		smarm_value_t e = get_member(
			(const char *)v->v.p + tu->tu_off[k], tu->tu_types[k]);
		if (put_value(d, x, &e) != 0)
			return -1;
	}
	return 0;
}

/* ---- Erlang calls a served server ---- */

/* Who sent a request, and how to answer it. */
struct gen_caller {
	smarm_dist_t *gc_d;
	bool gc_call;		  /* $gen_call, else $gen_cast */
	const char *gc_name;	  /* the served name (for log lines) */
	struct dist_epid gc_from; /* a call's caller */
	const uint8_t *gc_tag;	  /* a call's Tag term */
	size_t gc_tag_len;
	bool gc_queued; /* answered by the watcher or a reader: never
			   waits on the socket (conn.c INV-6) */
};

/* Answer {Tag, Body} to a caller, where body (len bytes, no version
 * byte) is the reply. Only on a connection that is up: a caller whose
 * node is gone waits for nothing. */
static void answer(const struct gen_caller *c, const char *body, size_t len)
{
	ei_x_buff x;
	if (!c->gc_call || ei_x_new_with_version(&x) != 0)
		return;
	if (ei_x_encode_tuple_header(&x, 2) == 0 &&
	    ei_x_append_buf(&x, (const char *)c->gc_tag, (int)c->gc_tag_len) ==
		    0 &&
	    ei_x_append_buf(&x, body, (int)len) == 0) {
		struct dist_out o = { .op = DOP_SEND,
				      .to = &c->gc_from,
				      .no_connect = true,
				      .queued = c->gc_queued };
		(void)smarm__dist_send(c->gc_d, c->gc_from.node, &o, x.buff,
				       (size_t)x.index);
	}
	ei_x_free(&x);
}

/* A request that cannot be served: a call is answered {error, What}
 * (op not NULL: {error, {What, Op}}); a cast is dropped, logged. */
static void refuse(const struct gen_caller *c, const char *what, const char *op)
{
	if (!c->gc_call) {
		smarm__dist_log(c->gc_d, SMARM_LOG_DEBUG,
				"dist: $gen_cast to %s dropped: %s%s%s",
				c->gc_name, what, op != NULL ? " " : "",
				op != NULL ? op : "");
		return;
	}
	ei_x_buff x;
	if (ei_x_new(&x) != 0)
		return;
	int bad = ei_x_encode_tuple_header(&x, 2);
	bad |= ei_x_encode_atom(&x, "error");
	if (op != NULL) {
		bad |= ei_x_encode_tuple_header(&x, 2);
		bad |= ei_x_encode_atom(&x, what);
		bad |= ei_x_encode_atom(&x, op);
	} else {
		bad |= ei_x_encode_atom(&x, what);
	}
	if (bad == 0)
		answer(c, x.buff, (size_t)x.index);
	ei_x_free(&x);
}

/* Refuse with a libsmarm status: SMARM_EDOWN is {error, edown}, ... */
static void refuse_status(const struct gen_caller *c, int status)
{
	if (status == SMARM_EARGS || status == SMARM_ETOOBIG) {
		refuse(c, "badarg", NULL);
		return;
	}
	char atom[48];
	const char *n = smarm_err_name(status);
	if (strncmp(n, "SMARM_", 6) == 0)
		n += 6;
	size_t k = 0;
	for (; n[k] != '\0' && k + 1 < sizeof atom; k++)
		atom[k] = (char)(n[k] >= 'A' && n[k] <= 'Z' ? n[k] + 32 : n[k]);
	atom[k] = '\0';
	refuse(c, atom, NULL);
}

/*
 * A request the libsmarm side refused as it came (status), before any
 * server took it. A call whose server is gone (ended, or its name held
 * by nobody) gets nothing: the caller's monitor answers it, noproc (the
 * reader's monitor of an ended actor, conn.c watch_add) or the server's
 * reason, as a dead gen_server's Down answers gen:do_call; an {error,
 * edown} written here could reach the caller before that Down and turn
 * its exit into a reply. Anything else as refuse_status.
 */
static void refuse_request(const struct gen_caller *c, int status)
{
	if (c->gc_call && (status == SMARM_ENOPROC || status == SMARM_EDOWN ||
			   status == SMARM_ENONAME)) {
		smarm__dist_log(c->gc_d, SMARM_LOG_DEBUG,
				"dist: $gen_call to %s: server gone (%s), "
				"left to the caller's monitor",
				c->gc_name[0] != '\0' ? c->gc_name : "a pid",
				smarm_err_name(status));
		return;
	}
	refuse_status(c, status);
}

/* ---- a served call's answer (INV-1, INV-5) ---- */

/* The gate the answers of d's served calls reach d through: it outlives
 * d while answers are pending (a server may answer after the stop). */
struct dist_gate {
	pthread_mutex_t g_lock;	 /* only d_lock is taken under it, never
				    held across a park or a yield */
	smarm_dist_t *g_d;	 /* g_lock: NULL once d is going */
	_Atomic unsigned g_refs; /* the handle's, and a pending answer's */
};

int smarm__dist_gate_open(smarm_dist_t *d)
{
	struct dist_gate *g = calloc(1, sizeof *g);
	if (g == NULL)
		return SMARM_ENOMEM;
	pthread_mutex_init(&g->g_lock, NULL);
	g->g_d = d;
	atomic_init(&g->g_refs, 1);
	d->d_gate = g;
	return 0;
}

static void gate_unref(struct dist_gate *g)
{
	if (atomic_fetch_sub_explicit(&g->g_refs, 1, memory_order_acq_rel) ==
	    1) {
		pthread_mutex_destroy(&g->g_lock);
		free(g);
	}
}

void smarm__dist_gate_shut(smarm_dist_t *d)
{
	struct dist_gate *g = d->d_gate;
	if (g == NULL)
		return;
	pthread_mutex_lock(&g->g_lock);
	g->g_d = NULL;
	pthread_mutex_unlock(&g->g_lock);
	d->d_gate = NULL;
	gate_unref(g);
}

/* A served call's answer to come: made by the reader, given to the
 * server with the request, freed once answered or dropped. */
struct gen_route {
	struct bhv_route gr_rt;	   /* first: the behaviour layer's */
	struct dist_gate *gr_gate; /* a reference */
	int gr_status;		   /* the answer, handed to the watcher */
	bool gr_end;		   /* the server's end answered it: the
				      caller's monitor tells (no write) */
	smarm_value_t gr_reply;	   /* its value (released with it) */
	struct dist_epid gr_from;  /* the caller */
	uint8_t gr_tag[DIST_TERM_SMALL];
	size_t gr_tag_len;
	int gr_rtype;		 /* the operation's reply type */
	struct bhv_tuple gr_rtu; /* a tuple reply's type (a copy: the
				    plugin may go once the call is
				    answered) */
};

void smarm__dist_gen_drop(void *route)
{
	struct gen_route *r = route;
	smarm_value_release(&r->gr_reply);
	gate_unref(r->gr_gate);
	free(r);
}

/* Write r's answer (status, and *v: 0 or SMARM_EREPLY) to its caller as
 * {Tag, Reply}, or {Tag, {error, Why}} as refuse_status says. */
static void route_write(smarm_dist_t *d, const struct gen_route *r, int status,
			const smarm_value_t *v, bool queued)
{
	struct gen_caller c = { .gc_d = d,
				.gc_call = true,
				.gc_name = "",
				.gc_from = r->gr_from,
				.gc_tag = r->gr_tag,
				.gc_tag_len = r->gr_tag_len,
				.gc_queued = queued };
	if (status != 0 && status != SMARM_EREPLY) {
		refuse_status(&c, status);
		return;
	}
	ei_x_buff x;
	if (ei_x_new(&x) != 0)
		return;
	int bad = 0;
	if (status == SMARM_EREPLY) { /* smarm_gs_reply_error(reason) */
		bad |= ei_x_encode_tuple_header(&x, 2);
		bad |= ei_x_encode_atom(&x, "error");
		bad |= ei_x_encode_longlong(&x, (long long)v->v.i);
	} else {
		bad |= put_reply(
			d, &x, r->gr_rtype == SMARM_T_TUPLE ? &r->gr_rtu : NULL,
			v);
	}
	if (bad == 0)
		answer(&c, x.buff, (size_t)x.index);
	else
		refuse(&c, "enomem", NULL);
	ei_x_free(&x);
}

/* A served call is answered (or will never be: d stops). */
static void calls_less(smarm_dist_t *d)
{
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	d->d_gen_jobs--;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
}

void smarm__dist_gen_answer(smarm_dist_t *d, void *route)
{
	struct gen_route *r = route;
	if (!r->gr_end)
		route_write(d, r, r->gr_status, &r->gr_reply, true);
	calls_less(d);
	smarm__dist_gen_drop(r);
}

/* The server writes an answer itself: d counted in d_actors (rr_d, or
 * NULL: not counted, the answer is dropped). Undone on every path, a
 * stop of the server inside the write too. */
struct route_run {
	struct gen_route *rr_r;
	smarm_dist_t *rr_d;
};

static void route_run_end(void *arg)
{
	struct route_run *x = arg;
	smarm_dist_t *d = x->rr_d;
	if (d != NULL) { /* conn.c INV-4, as an actor of the layer's */
		calls_less(d);
		smarm__dist_actor_done(d);
	}
	smarm__dist_gen_drop(x->rr_r);
}

/*
 * The behaviour layer answers a served call (struct bhv_route): by the
 * server's own actor (BHV_ANS_OWN), which writes {Tag, Reply} to the
 * connection itself; otherwise (a token answered on any thread, the
 * server's end answering what it leaves, an envelope freed unread)
 * handed to the watcher, which writes it. The server's end writes
 * nothing: as gen_server's caller, the Erlang caller's monitor (gen:
 * do_call's) makes its call exit with the server's reason. After the
 * stop, dropped (INV-2).
 */
static void route_fn(struct bhv_route *rt, int status, smarm_value_t *v,
		     int who)
{
	struct gen_route *r = (struct gen_route *)rt;
	struct dist_gate *g = r->gr_gate;
	struct route_run run = { r, NULL };
	r->gr_status = status;
	r->gr_end = who == BHV_ANS_END && status == SMARM_EDOWN;
	if (v != NULL) { /* its memory is ours now */
		r->gr_reply = *v;
		memset(v, 0, sizeof *v);
	}
	bool self = who == BHV_ANS_OWN && smarm_actor_self().id != 0 &&
		    smarm_cleanup_push(route_run_end, &run) == 0;
	smarm_chan_t *watch = NULL;
	pthread_mutex_lock(&g->g_lock);
	smarm_dist_t *d = g->g_d;
	if (d != NULL && self) {
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		if (!d->d_stopping) {
			d->d_actors++; /* the stop waits for this write */
			run.rr_d = d;
		}
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	} else if (d != NULL) {
		watch = d->d_watch_ch;
	}
	pthread_mutex_unlock(&g->g_lock);
	if (self) {
		if (run.rr_d != NULL)
			route_write(run.rr_d, r, status, &r->gr_reply, false);
		smarm_cleanup_pop(true); /* route_run_end */
		return;
	}
	/*
	 * Sent outside g_lock (a send may yield: never with it held), and
	 * in a region without preemption: the caller may hold a token
	 * set's tt_lock (BHV_ANS_ANY), and a send's slice point would yield
	 * there, or observe a stop.
	 */
	smarm_signal_t s = { .kind = WATCH_ANSWER, .reason = (intptr_t)r };
	if (watch == NULL) {
		smarm__dist_gen_drop(r);
		return;
	}
	bool held = smarm_preempt_disable() == 0;
	int rc = smarm_chan_send(watch, &s);
	if (held)
		(void)smarm_preempt_enable();
	if (rc == 0)
		return;
	/* Not sent (no memory for the queue): the call's slot goes back,
	 * the answer is dropped with a line; the Erlang caller times out. */
	struct smarm_node *node = NULL;
	pthread_mutex_lock(&g->g_lock);
	if ((d = g->g_d) != NULL) {
		calls_less(d);
		node = d->d_node; /* outlives d; no log under a lock */
	}
	pthread_mutex_unlock(&g->g_lock);
	if (node != NULL)
		(void)smarm__log_event(node, SMARM_LOG_WARNING,
				       SMARM_REPORT_LINE, smarm_actor_self().id,
				       "dist: an answer to a served call "
				       "dropped: %s",
				       smarm_err_name(rc));
	smarm__dist_gen_drop(r);
}

/* Take a slot for a call's answer (INV-1): false when DIST_GEN_JOBS_MAX
 * are pending or the distribution stops. */
static bool job_reserve(smarm_dist_t *d)
{
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	bool room = !d->d_stopping && d->d_gen_jobs < DIST_GEN_JOBS_MAX;
	if (room)
		d->d_gen_jobs++;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	return room;
}

/*
 * Serve the Request at r for c, to the server sv (by lp, or by its
 * name). Runs in the reader, so that requests reach the server in the
 * order they arrived (a cast then a call from one Erlang process are
 * served in that order, as in OTP): the cast, or the call's request, is
 * queued here; a worker waits for a call's reply.
 */
/* Whether the server a request names (lp, or sv's name) is alive. */
static bool server_alive(smarm_dist_t *d, const struct dist_serve *sv,
			 smarm_pid_t lp)
{
	if (lp.id == 0 && smarm_node_whereis(d->d_node, sv->sv_name, &lp) != 0)
		return false; /* nobody holds the name */
	return smarm_actor_is_alive(lp);
}

static void dispatch(const struct gen_caller *c, const struct dist_serve *sv,
		     smarm_pid_t lp, struct etf_rd *r)
{
	smarm_dist_t *d = c->gc_d;
	char op[SMARM_OP_NAME_MAX + 1];
	uint32_t arity, nargs = 0;
	struct etf_rd a = *r;
	/* A call to a server that is gone gets nothing, whatever it asks
	 * (refuse_request): as OTP's, the caller's monitor ends it. */
	if (c->gc_call && !server_alive(d, sv, lp)) {
		refuse_request(c, SMARM_ENOPROC);
		return;
	}
	/* Op, or {Op, Arg1, ...} */
	if (smarm__etf_atom(&a, op, sizeof op) == 0) {
		*r = a;
	} else if (smarm__etf_tuple(r, &arity) == 0 && arity >= 1 &&
		   smarm__etf_atom(r, op, sizeof op) == 0) {
		nargs = arity - 1;
	} else {
		refuse(c, "badarg", NULL);
		return;
	}
	const smarm_behaviour_t *b = sv->sv_b;
	if (!smarm__bhv_valid(b)) { /* its plugin was closed */
		refuse(c, "noproc", NULL);
		return;
	}
	const struct bhv_op *o = smarm__bhv_proto_find(&b->bh_proto, op, 0);
	if (o == NULL) {
		refuse(c, "unknown_op", op);
		return;
	}
	if (o->op_kind != (c->gc_call ? BHV_CALL : BHV_CAST)) {
		refuse(c, c->gc_call ? "not_a_call" : "not_a_cast", op);
		return;
	}
	smarm_value_t args[SMARM_OP_ARGS_MAX];
	uint64_t tup[SMARM_OP_ARGS_MAX][BHV_TUPLE_SIZE_MAX / 8];
	if (nargs != o->op_nargs) {
		refuse(c, "badarg", NULL);
		return;
	}
	for (unsigned i = 0; i < nargs; i++)
		if (rd_arg(d, r, o, i, &args[i], tup[i]) != 0) {
			refuse(c, "badarg", NULL);
			return;
		}
	smarm_server_t *s = NULL;
	int rc = lp.id != 0 ? smarm_server_open(d->d_node, b, lp, &s)
			    : smarm_server_open_name(d->d_node, b, sv->sv_name,
						     &s);
	if (rc != 0) {
		refuse_request(c, rc);
		return;
	}
	if (!c->gc_call) {
		rc = smarm_server_cast(s, op, args, nargs);
		smarm_server_free(s);
		if (rc != 0)
			refuse(c, smarm_err_name(rc), op);
		return;
	}
	if (!job_reserve(d)) {
		smarm_server_free(s);
		refuse(c, "busy", NULL);
		return;
	}
	struct gen_route *g = calloc(1, sizeof *g);
	if (g == NULL) {
		smarm_server_free(s);
		calls_less(d);
		refuse(c, "enomem", NULL);
		return;
	}
	g->gr_rt.rt_fn = route_fn;
	g->gr_gate = d->d_gate;
	atomic_fetch_add_explicit(&g->gr_gate->g_refs, 1, memory_order_relaxed);
	g->gr_reply.type = SMARM_T_VOID;
	g->gr_from = c->gc_from;
	memcpy(g->gr_tag, c->gc_tag, c->gc_tag_len);
	g->gr_tag_len = c->gc_tag_len;
	g->gr_rtype = o->op_reply;
	if (o->op_reply == SMARM_T_TUPLE)
		g->gr_rtu = *bhv_reply_tuple(o);
	/* Once sent, g is the call's: it may be answered (and freed)
	 * before this returns. */
	rc = smarm__bhv_server_call_routed(s, op, args, nargs, &g->gr_rt);
	smarm_server_free(s);
	if (rc != 0) {
		smarm__dist_gen_drop(g);
		calls_less(d);
		refuse_request(c, rc);
	}
}

void smarm__dist_info_drop(smarm_dist_t *d, const char *name, smarm_pid_t lp,
			   const char *why)
{
	smarm__stat_dist_info_dropped(d->d_node);
	if (name != NULL)
		smarm__dist_log(d, SMARM_LOG_INFO,
				"dist: a message to served server %s dropped: "
				"%s",
				name, why);
	else
		smarm__dist_log(d, SMARM_LOG_INFO,
				"dist: a message to served server <%llu> "
				"dropped: %s",
				(unsigned long long)lp.id, why);
}

/*
 * handle_info: a message to a served server that is no request. As a
 * gen_server gets any other message in handle_info/2, it goes to the
 * behaviour's info operations: Op or {Op, Args...} naming an info
 * operation whose arguments fit, as a cast would; else the whole term
 * in the raw form (131 first) to `info dist_info(bytes)` if the
 * protocol has it. GEN_DONE (queued, or dropped with a log line and a
 * count) or GEN_NO_INFO (no info operation takes it).
 */
static int route_info(smarm_dist_t *d, const struct dist_serve *sv,
		      smarm_pid_t lp, const uint8_t *t, size_t len)
{
	const smarm_behaviour_t *b = sv->sv_b;
	if (!smarm__bhv_valid(b)) { /* its plugin was closed */
		smarm__dist_info_drop(d, sv->sv_name, lp, "noproc");
		return GEN_DONE;
	}
	char op[SMARM_OP_NAME_MAX + 1];
	smarm_value_t args[SMARM_OP_ARGS_MAX];
	uint64_t tup[SMARM_OP_ARGS_MAX][BHV_TUPLE_SIZE_MAX / 8];
	uint32_t arity, nargs = 0;
	struct etf_rd r = { t, len, 1 }, a = r;
	const struct bhv_op *o = NULL;
	if (smarm__etf_atom(&a, op, sizeof op) == 0) {
		r = a;
	} else if (smarm__etf_tuple(&r, &arity) == 0 && arity >= 1 &&
		   smarm__etf_atom(&r, op, sizeof op) == 0) {
		nargs = arity - 1;
	} else {
		op[0] = '\0';
	}
	if (op[0] != '\0')
		o = smarm__bhv_proto_find(&b->bh_proto, op, BHV_INFO);
	if (o != NULL && o->op_nargs == nargs) {
		for (unsigned i = 0; o != NULL && i < nargs; i++)
			if (rd_arg(d, &r, o, i, &args[i], tup[i]) != 0)
				o = NULL;
	} else {
		o = NULL;
	}
	if (o == NULL || r.i != len) { /* not typed: the raw form */
		o = smarm__bhv_proto_find(&b->bh_proto, "dist_info", BHV_INFO);
		if (o == NULL || o->op_nargs != 1 ||
		    o->op_args[0] != SMARM_T_BYTES)
			return GEN_NO_INFO;
		snprintf(op, sizeof op, "%s", o->op_name);
		args[0] = smarm_value_bytes(t, len);
		nargs = 1;
	}
	smarm_server_t *s = NULL;
	int rc = lp.id != 0 ? smarm_server_open(d->d_node, b, lp, &s)
			    : smarm_server_open_name(d->d_node, b, sv->sv_name,
						     &s);
	if (rc == 0) {
		rc = smarm_server_info(s, op, args, nargs);
		smarm_server_free(s);
	}
	if (rc != 0)
		smarm__dist_info_drop(d, sv->sv_name, lp, smarm_err_name(rc));
	return GEN_DONE;
}

int smarm__dist_gen_route(smarm_dist_t *d, const char *name, smarm_pid_t lp,
			  const uint8_t *t, size_t len)
{
	struct etf_rd r = { t, len, 1 };
	uint32_t arity, fa;
	char label[16];
	struct dist_serve sv;
	/* The reader's answers are queued: it never waits on its socket
	 * (conn.c INV-6). */
	struct gen_caller c = { .gc_d = d, .gc_queued = true };
	bool req = smarm__etf_tuple(&r, &arity) == 0 &&
		   (arity == 2 || arity == 3) &&
		   smarm__etf_atom(&r, label, sizeof label) == 0;
	c.gc_call = req && arity == 3 && strcmp(label, "$gen_call") == 0;
	req = c.gc_call ||
	      (req && arity == 2 && strcmp(label, "$gen_cast") == 0);
	if (c.gc_call) { /* {From, Tag}: Tag a reference or [alias | Ref] */
		size_t tag0 = 0;
		if (smarm__etf_tuple(&r, &fa) != 0 || fa != 2 ||
		    smarm__etf_pid(&r, &c.gc_from) != 0 ||
		    (tag0 = r.i, smarm__etf_skip(&r)) != 0 ||
		    r.i - tag0 > DIST_TERM_SMALL)
			req = false; /* malformed: an info */
		c.gc_tag = t + tag0;
		c.gc_tag_len = r.i - tag0;
	}
	if (!find_served(d, name, lp, &sv))
		return GEN_NOT_SERVED;
	if (!req)
		return route_info(d, &sv, name == NULL ? lp : SMARM_PID_NONE, t,
				  len);
	c.gc_name = sv.sv_name;
	dispatch(&c, &sv, name == NULL ? lp : SMARM_PID_NONE, &r);
	return GEN_DONE;
}

/* ---- libsmarm calls an Erlang gen_server ---- */

/* Send {Label, ...body} to to (or name on to->node) from the caller:
 * the term 131, {Atom, <mid>, Req} where mid (may be empty) is given. */
static int send_gen(smarm_dist_t *d, const struct dist_epid *to,
		    const char *name, const char *label, const uint8_t *mid,
		    size_t mid_len, const void *req, size_t len)
{
	size_t cap = 32 + mid_len + len;
	uint8_t *b = malloc(cap);
	if (b == NULL)
		return SMARM_ENOMEM;
	size_t k = 0;
	int i = 0;
	b[k++] = 131;
	b[k++] = 104;
	b[k++] = mid_len != 0 ? 3 : 2;
	ei_encode_atom_as((char *)b + k, &i, label, ERLANG_UTF8, ERLANG_UTF8);
	k += (size_t)i;
	if (mid_len != 0) /* a cast has none (mid NULL) */
		memcpy(b + k, mid, mid_len);
	k += mid_len;
	memcpy(b + k, (const uint8_t *)req + 1, len - 1); /* past 131 */
	k += len - 1;
	struct dist_epid me;
	smarm__dist_local_epid(d, smarm_actor_self(), &me);
	struct dist_out o = { .op = name != NULL ? DOP_REG_SEND : DOP_SEND,
			      .from = &me,
			      .to = to,
			      .name = name };
	int rc = smarm__dist_send(d, to->node, &o, b, k);
	free(b);
	return rc;
}

int smarm__dist_gen_cast(smarm_dist_t *d, const struct dist_epid *to,
			 const char *name, const void *req, size_t len)
{
	return send_gen(d, to, name, "$gen_cast", NULL, 0, req, len);
}

/* What a call's Down says: SMARM_ENOPROC, SMARM_ENOCONN, or SMARM_EDOWN
 * with *reason the Reason term (a message of its own). */
static int down_status(const struct smarm_dist_msg *m,
		       struct smarm_dist_msg **reason)
{
	struct etf_rd r = { m->m_term, m->m_len, 1 };
	uint32_t n;
	if (smarm__etf_tuple(&r, &n) != 0 || n != 5)
		return SMARM_EDOWN;
	for (int k = 0; k < 4; k++)
		if (smarm__etf_skip(&r) != 0)
			return SMARM_EDOWN;
	char atom[16];
	struct etf_rd a = r;
	if (smarm__etf_atom(&a, atom, sizeof atom) == 0) {
		if (strcmp(atom, "noproc") == 0)
			return SMARM_ENOPROC;
		if (strcmp(atom, "noconnection") == 0)
			return SMARM_ENOCONN;
	}
	size_t body = m->m_len - r.i;
	struct smarm_dist_msg *x = malloc(sizeof *x + 1 + body);
	if (x != NULL) {
		x->m_from = SMARM_DIST_PID_NONE;
		x->m_down = 0;
		x->m_len = 1 + body;
		x->m_term[0] = 131;
		memcpy(x->m_term + 1, m->m_term + r.i, body);
	}
	*reason = x;
	return SMARM_EDOWN;
}

/* What a call holds while it waits: undone however it ends, a stop of
 * the calling actor included (then the monitor is forgotten without a
 * DEMONITOR_P: a cleanup handler must not park). */
struct call_guard {
	smarm_dist_t *cg_d;
	smarm_chan_t *cg_ch; /* the call's channel */
	uint64_t cg_id;	     /* its monitor, or 0 */
};

static void call_undo(void *arg)
{
	struct call_guard *g = arg;
	if (g->cg_id != 0)
		smarm__dist_rmon_cancel(g->cg_d, g->cg_id, false);
	(void)smarm_chan_sender_free(g->cg_ch);
	(void)smarm_chan_receiver_free(g->cg_ch);
}

int smarm__dist_gen_call(smarm_dist_t *d, const struct dist_epid *to,
			 const char *name, const void *req, size_t len,
			 uint64_t timeout_ns, smarm_dist_msg_t **reply)
{
	struct call_guard g = { .cg_d = d };
	int rc = smarm_chan_alloc(&g.cg_ch, sizeof(struct smarm_dist_msg *),
				  smarm__dist_msg_elem_free());
	if (rc != 0)
		return SMARM_ENOMEM;
	if (smarm_cleanup_push(call_undo, &g) != 0) {
		call_undo(&g);
		return SMARM_ENOMEM;
	}
	/* The monitor first, its ref the tag (gen:do_call): on one
	 * connection the peer sees it before the request, so a name
	 * nobody holds is noproc at once. */
	smarm_pid_t self = smarm_actor_self();
	uint64_t id;
	rc = smarm__dist_rmon_add(d, self, to, name, g.cg_ch, &id);
	if (rc != 0)
		goto out;
	g.cg_id = id;
	uint8_t mid[2 * DIST_TERM_SMALL + 8];
	size_t k = 0;
	struct dist_epid me;
	smarm__dist_local_epid(d, self, &me);
	mid[k++] = 104; /* {Self, Ref} */
	mid[k++] = 2;
	k += smarm__etf_put_pid(mid + k, sizeof mid - k, &me);
	k += smarm__dist_put_ref(d, id, mid + k, sizeof mid - k);
	rc = send_gen(d, to, name, "$gen_call", mid, k, req, len);
	if (rc == SMARM_ENOMEM) {
		smarm__dist_rmon_cancel(d, id, true);
		goto out;
	}
	/* Another failure lost the connection: its Down says so. */
	struct smarm_dist_msg *m = NULL;
	rc = smarm_chan_recv_timeout(g.cg_ch, &m, timeout_ns);
	if (rc != 0) {
		/* A reply racing this is dropped with the channel. */
		smarm__dist_rmon_cancel(d, id, true);
		if (rc != SMARM_ETIMEDOUT)
			rc = SMARM_EINTERNAL;
		goto out;
	}
	if (m->m_down != 0) {
		struct smarm_dist_msg *why = NULL;
		rc = down_status(m, &why);
		free(m);
		m = why;
	}
	if (reply != NULL)
		*reply = m;
	else
		free(m);
out:
	smarm_cleanup_pop(true); /* call_undo */
	return rc;
}
