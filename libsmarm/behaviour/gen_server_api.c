/* SPDX-License-Identifier: MIT */
/*
 * gen_server_api.c - the public gen_server calls: the context calls of
 * a server's callbacks (smarm_gs_*), starting servers (alone, on the
 * calling actor, supervised), client handles, their calls, casts and
 * infos, and shutdown. Arguments are validated here; the engine is
 * gen_server.c.
 *
 * Ownership: a client handle (struct smarm_server), made by
 * smarm_server_open* and freed by smarm_server_free, holds one plugin
 * reference and owns its reply channel; a spawned server's start data
 * (struct run_arg, with a plugin reference) is its actor's until its
 * create has run (then freed: struct bhv_spent), a supervised server's
 * spec data is kept for the life of the process (sup_args).
 * Locking: sup_lock (a leaf pthread mutex) guards sup_args. A context
 * pointer is checked against the caller's own (smarm__bhv_self_is).
 * Invariants: INV-1 a handle's sc_seq only grows; a reply of another
 * number is discarded, never returned. INV-2 a call returns only after
 * its envelope was refused (nothing sent) or its reply (or the
 * deadline) came.
 * See: docs/plugins.md, docs/architecture/behaviours.md.
 */
#include "gen_server.h"
#include "statem.h"

#include "../otp/reg.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The checked macros of these names (smarm_plugin.h) are for callers. */
#undef smarm_server_callv
#undef smarm_server_castv

/* ---- the context calls ---- */

static int ctx_check(const smarm_gs_ctx_t *cx)
{
	if (smarm_actor_self().id == 0)
		return SMARM_ENOTACTOR;
	if (!smarm__bhv_self_is(cx, BHV_SELF_SERVER))
		return SMARM_EINVAL;
	return 0;
}

int smarm_gs_trap_exit(smarm_gs_ctx_t *cx)
{
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	if (!cx->sv_in_init)
		return SMARM_ESTATE;
	return smarm__gs_trap(cx);
}

int smarm_gs_stop(smarm_gs_ctx_t *cx, int how, intptr_t reason)
{
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	if (!bhv_stop_how_ok(how))
		return SMARM_EINVAL;
	smarm__gs_stop(cx, how, reason);
	return 0;
}

int smarm_gs_continue(smarm_gs_ctx_t *cx, uint64_t tag)
{
	struct gs_cold *c;
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	c = smarm__gs_cold(cx);
	if (c == NULL)
		return SMARM_ENOMEM;
	c->gc_tag = tag;
	cx->sv_cont = true;
	return 0;
}

int smarm_gs_set_idle(smarm_gs_ctx_t *cx, uint64_t ns)
{
	struct gs_cold *c;
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	c = ns != 0 ? smarm__gs_cold(cx) : cx->sv_cold;
	if (ns != 0 && c == NULL)
		return SMARM_ENOMEM;
	if (c != NULL)
		c->gc_idle_ns = ns;
	return 0;
}

int smarm_gs_hibernate(smarm_gs_ctx_t *cx)
{
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	cx->sv_hib = true;
	return 0;
}

int smarm_gs_set_hibernate_after(smarm_gs_ctx_t *cx, uint64_t ns)
{
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	return smarm__bhv_hibernate_after(cx, ns);
}

int smarm_gs_set_queue_limit(smarm_gs_ctx_t *cx, uint32_t limit)
{
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	return smarm__chan_set_limit(cx->sv_inbox, limit);
}

int smarm_gs_monitor(smarm_gs_ctx_t *cx, smarm_pid_t pid, uint64_t *ref)
{
	struct gs_cold *c;
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	c = smarm__gs_cold(cx);
	if (c == NULL)
		return SMARM_ENOMEM;
	rc = smarm__gs_sig_band(cx);
	if (rc != 0)
		return rc;
	rc = smarm_monitor(pid, cx->sv_sig, ref);
	if (rc == 0) {
		c->gc_nmon++;
		cx->sv_mon = true;
	}
	return rc;
}

int smarm_gs_reply_later(smarm_gs_ctx_t *cx, smarm_reply_t **tok)
{
	struct bhv_env *e;
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	if (tok == NULL)
		return SMARM_EINVAL;
	e = cx->sv_cur;
	if (e == NULL || e->en_reply == NULL) /* no call, or deferred */
		return SMARM_ESTATE;
	rc = smarm__bhv_token_new(cx, e->en_op, e->en_reply, e->en_seq, tok);
	if (rc == 0)
		e->en_reply = NULL; /* the token's now */
	return rc;
}

int smarm_gs_reply_error(smarm_gs_ctx_t *cx, intptr_t reason)
{
	struct bhv_env *e;
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	e = cx->sv_cur;
	if (e == NULL || e->en_reply == NULL)
		return SMARM_ESTATE;
	cx->sv_err_set = true;
	cx->sv_err = reason;
	return 0;
}

int smarm_gs_behaviour(smarm_gs_ctx_t *cx, const char *name,
		       const smarm_behaviour_t **out)
{
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	if (out == NULL)
		return SMARM_EINVAL;
	return smarm__bhv_sibling(cx->sv_be, name, out);
}

int smarm_gs_send_after(smarm_gs_ctx_t *cx, uint64_t delay_ns,
			uint64_t period_ns, const char *opname,
			const smarm_value_t *args, size_t nargs, uint64_t *id)
{
	const struct bhv_op *op;
	struct bhv_msg blk;
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	if (opname == NULL || (args == NULL && nargs > 0))
		return SMARM_EINVAL;
	rc = smarm__bhv_proto_get(&cx->sv_be->bh_proto, opname, BHV_INFO, &op);
	if (rc != 0)
		return rc;
	rc = smarm__bhv_pack(op, args, nargs, &blk);
	if (rc != 0)
		return rc;
	return smarm__gs_timer_add(cx, op, &blk, delay_ns, period_ns, id);
}

int smarm_gs_cancel_timer(smarm_gs_ctx_t *cx, uint64_t id)
{
	int rc = ctx_check(cx);
	if (rc != 0)
		return rc;
	return smarm__gs_timer_cancel(cx, id);
}

/* ---- starting servers ---- */

static int bhv_run(const struct smarm_behaviour *be, const char *args,
		   const char *name, smarm_chan_t *start, bool sup,
		   const struct bhv_spent *spent)
{
	if (be->bh_kind == BHV_GEN_STATEM)
		return smarm__sm_run(be, args, name, start, sup, spent);
	return smarm__gs_run(be, args, name, start, sup, spent);
}

/* What a server's actor starts from: a spawned one's (freed once its
 * create has run, or at its end: run_arg_end) or a supervised one's
 * spec data (kept: sup_args). */
struct run_arg {
	struct run_arg *ra_next;	     /* sup_args (sup_lock) */
	const struct smarm_behaviour *ra_be; /* a spawned one: a plugin
						reference held */
	smarm_chan_t *ra_start;		     /* the starter's channel */
	char *ra_args;			     /* copies, or NULL */
	char *ra_name;
};

static void run_arg_free(struct run_arg *a)
{
	free(a->ra_args);
	free(a->ra_name);
	free(a);
}

/* A run_arg of b with copies of args and name: 0, or SMARM_ENOMEM. */
static int run_arg_new(const struct smarm_behaviour *b, const char *args,
		       const char *name, struct run_arg **out)
{
	struct run_arg *a = calloc(1, sizeof *a);
	if (a == NULL)
		return SMARM_ENOMEM;
	a->ra_be = b;
	if ((args != NULL && (a->ra_args = strdup(args)) == NULL) ||
	    (name != NULL && (a->ra_name = strdup(name)) == NULL)) {
		run_arg_free(a);
		return SMARM_ENOMEM;
	}
	*out = a;
	return 0;
}

/* A spawned server's start data and the reference it held, freed once
 * the server holds its own (bhv_spent) or at its end. */
static void run_arg_end(void *arg)
{
	struct run_arg *a = arg;
	smarm__bhv_plugin_unref(a->ra_be);
	run_arg_free(a);
}

static void start_body(void *arg)
{
	struct run_arg *a = arg;
	const struct bhv_spent spent = { run_arg_end, a };
	if (smarm_cleanup_push(run_arg_end, a) != 0) {
		smarm_chan_sender_free(a->ra_start); /* the starter: EDOWN */
		run_arg_end(a);
		return;
	}
	bhv_run(a->ra_be, a->ra_args, a->ra_name, a->ra_start, false, &spent);
}

/* An optional name: NULL, or one the registry takes (reg.h). */
static int name_check(const char *name)
{
	size_t n;
	return name == NULL ? 0 : smarm__name_check(name, &n);
}

int smarm_server_start(const smarm_behaviour_t *b, const char *args,
		       const char *name, smarm_server_t **out)
{
	return smarm_server_start_ex(b, args, name, SMARM_NO_TIMEOUT, out,
				     NULL);
}

/* Monitor pid into a channel of its own, *ch (ref *ref): 0 or a status. */
static int down_watch(smarm_pid_t pid, smarm_chan_t **ch, uint64_t *ref)
{
	int rc = smarm_chan_alloc(ch, sizeof(smarm_signal_t), NULL);
	if (rc == 0 && (rc = smarm_monitor(pid, *ch, ref)) != 0)
		bhv_chan_free(*ch);
	return rc;
}

/* Wait at most timeout_ns for down_watch's Down into *sig, then free ch
 * (demonitored if none came): 0 or a status. */
static int down_wait(smarm_chan_t *ch, uint64_t ref, uint64_t timeout_ns,
		     smarm_signal_t *sig)
{
	int rc = smarm_chan_recv_timeout(ch, sig, timeout_ns);
	if (rc != 0)
		(void)smarm_demonitor(ref, SMARM_DEMONITOR_FLUSH);
	bhv_chan_free(ch);
	return rc;
}

/* Wait (at most timeout_ns) until the actor pid has ended. */
static void await_end(smarm_pid_t pid, uint64_t timeout_ns)
{
	smarm_signal_t sig;
	smarm_chan_t *ch;
	uint64_t ref;
	if (down_watch(pid, &ch, &ref) == 0)
		(void)down_wait(ch, ref, timeout_ns, &sig);
}

int smarm_server_start_ex(const smarm_behaviour_t *b, const char *args,
			  const char *name, uint64_t timeout_ns,
			  smarm_server_t **out, intptr_t *why)
{
	struct run_arg *a;
	smarm_chan_t *start;
	struct bhv_start st;
	smarm_pid_t pid;
	int rc;

	if (why != NULL)
		*why = 0;
	if (smarm_actor_self().id == 0)
		return SMARM_ENOTACTOR;
	if (!smarm__bhv_valid(b) || name_check(name) != 0)
		return SMARM_EINVAL;
	rc = run_arg_new(b, args, name, &a);
	if (rc != 0)
		return rc;
	rc = smarm_chan_alloc(&start, sizeof st, NULL);
	if (rc != 0) {
		run_arg_free(a);
		return rc;
	}
	a->ra_start = start;
	smarm__bhv_plugin_ref(b);
	rc = smarm_actor_spawn(&pid, start_body, a, NULL);
	if (rc != 0) {
		smarm__bhv_plugin_unref(b);
		run_arg_free(a);
		bhv_chan_free(start);
		return rc;
	}
	smarm_actor_detach(pid);
	/* The child owns the sender: a status, or the close if it died. */
	rc = smarm_chan_recv_timeout(start, &st, timeout_ns);
	smarm_chan_receiver_free(start);
	if (rc == SMARM_ETIMEDOUT) {
		/* OTP's {error, timeout}: the half-started server is killed. */
		(void)smarm_actor_stop(pid);
		return rc;
	}
	if (rc == SMARM_ECLOSED) {
		await_end(pid, timeout_ns);
		return SMARM_EDOWN;
	}
	if (rc != 0)
		return rc;
	if (st.bs_status != 0) {
		/* As OTP's proc_lib: a failed start returns once the server is
		 * gone, its name given back. */
		await_end(pid, timeout_ns);
		if (why != NULL)
			*why = st.bs_why;
		return st.bs_status;
	}
	if (out != NULL) {
		rc = smarm_server_open(NULL, b, pid, out);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int smarm_server_run(const smarm_behaviour_t *b, const char *args,
		     const char *name)
{
	if (smarm_actor_self().id == 0)
		return SMARM_ENOTACTOR;
	if (!smarm__bhv_valid(b) || name_check(name) != 0)
		return SMARM_EINVAL;
	return bhv_run(b, args, name, NULL, true, NULL);
}

/* Supervised servers' spec data: a spec has no destructor for a child's
 * arguments, so they are kept, reachable, for the life of the process. */
static pthread_mutex_t sup_lock = PTHREAD_MUTEX_INITIALIZER;
static struct run_arg *sup_args;

static void sup_body(void *arg)
{
	struct run_arg *a = arg;
	bhv_run(a->ra_be, a->ra_args, a->ra_name, NULL, true, NULL);
}

int smarm_sup_spec_add_server(smarm_sup_spec_t *spec, const char *id,
			      const smarm_behaviour_t *b, const char *args,
			      const char *name, int restart,
			      uint64_t shutdown_ns, uint64_t ready_ns)
{
	struct run_arg *a;
	int rc;
	if (spec == NULL || !smarm__bhv_valid(b) || name_check(name) != 0)
		return SMARM_EINVAL;
	rc = run_arg_new(b, args, name, &a);
	if (rc != 0)
		return rc;
	rc = smarm_sup_spec_add_child(spec, id, sup_body, a, restart,
				      shutdown_ns);
	if (rc == 0)
		rc = smarm_sup_spec_set_child_ready(spec, id, ready_ns);
	if (rc != 0) {
		run_arg_free(a);
		return rc;
	}
	pthread_mutex_lock(&sup_lock);
	a->ra_next = sup_args;
	sup_args = a;
	pthread_mutex_unlock(&sup_lock);
	return 0;
}

/* ---- client handles ---- */

struct smarm_server {
	smarm_node_t *sc_node;		     /* the server's node */
	const struct smarm_behaviour *sc_be; /* plugin reference held */
	smarm_pid_t sc_pid;		     /* by pid: the server */
	bool sc_named;			     /* by name: sc_name */
	char sc_name[SMARM_NAME_MAX + 1];
	smarm_pid_t sc_to;	/* by name: the pid the name had at the last
				   send (the one a call then waits on) */
	smarm_chan_t *sc_inbox; /* by pid: its inbox, looked up once (a freed
				   one is refused, then looked up again: a
				   hibernated server frees it) */
	smarm_chan_t *sc_reply; /* reply channel, made on the first call */
	uint64_t sc_seq;	/* the last call's number (INV-1) */
	bool sc_req;		/* a request's own handle: by pid, and it
				   may go to the caller itself */
};

static int open_common(smarm_node_t *node, const smarm_behaviour_t *b,
		       smarm_server_t **out)
{
	struct smarm_server *s;
	if (out == NULL || !smarm__bhv_valid(b))
		return SMARM_EINVAL;
	if (node == NULL)
		node = smarm_node_current();
	if (node == NULL)
		return SMARM_EINVAL;
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return SMARM_ENOMEM;
	s->sc_node = node;
	s->sc_be = b;
	smarm__bhv_plugin_ref(b);
	*out = s;
	return 0;
}

int smarm_server_open(smarm_node_t *node, const smarm_behaviour_t *b,
		      smarm_pid_t pid, smarm_server_t **out)
{
	int rc;
	if (pid.id == 0)
		return SMARM_EINVAL;
	rc = open_common(node, b, out);
	if (rc == 0)
		(*out)->sc_pid = pid;
	return rc;
}

int smarm_server_open_name(smarm_node_t *node, const smarm_behaviour_t *b,
			   const char *name, smarm_server_t **out)
{
	int rc;
	if (name == NULL || name_check(name) != 0)
		return SMARM_EINVAL;
	rc = open_common(node, b, out);
	if (rc == 0) {
		(*out)->sc_named = true;
		strcpy((*out)->sc_name, name);
	}
	return rc;
}

void smarm_server_free(smarm_server_t *s)
{
	if (s == NULL)
		return;
	if (s->sc_reply != NULL)
		bhv_chan_free(s->sc_reply);
	smarm__bhv_plugin_unref(s->sc_be);
	free(s);
}

int smarm_server_pid(smarm_server_t *s, smarm_pid_t *pid)
{
	if (s == NULL || pid == NULL)
		return SMARM_EINVAL;
	if (s->sc_named)
		return smarm_node_whereis(s->sc_node, s->sc_name, pid);
	if (!smarm_actor_is_alive(s->sc_pid) &&
	    smarm_node_current() == s->sc_node)
		return SMARM_ENOPROC;
	*pid = s->sc_pid;
	return 0;
}

/*
 * The server's pid now. A call must not come from the server itself (it
 * would wait for its own answer); a cast, an info or a request (sc_req:
 * only its wait is refused) to itself is served after the running
 * callback.
 */
static bool call_to_self(const struct smarm_server *s, int kind,
			 smarm_pid_t pid)
{
	return kind == BHV_CALL && !s->sc_req &&
	       smarm_pid_eq(pid, smarm_actor_self());
}

static int resolve(struct smarm_server *s, int kind, smarm_pid_t *pid)
{
	int rc = 0;
	if (s->sc_named)
		rc = smarm_node_whereis(s->sc_node, s->sc_name, pid);
	else
		*pid = s->sc_pid;
	if (rc != 0)
		return rc;
	if (call_to_self(s, kind, *pid))
		return SMARM_ECALLSELF;
	return 0;
}

/* send_op's every other case: resolve, look the inbox up, send. */
__attribute__((noinline)) static int
send_op_slow(struct smarm_server *s, const struct bhv_op *op, struct bhv_env *e)
{
	smarm_pid_t pid;
	int rc = resolve(s, op->op_kind, &pid);

	if (rc == 0) {
		s->sc_to = pid; /* for introspection: await */
		rc = SMARM_ECLOSED;
		if (!s->sc_named) {
			if (s->sc_inbox == NULL)
				(void)smarm__bhv_inbox_of(s->sc_node, pid,
							  &s->sc_inbox);
			if (s->sc_inbox != NULL)
				rc = smarm__reg_chan_send(s->sc_inbox, e);
		}
		if (rc == SMARM_ECLOSED) { /* none cached, or it is gone */
			s->sc_inbox = NULL;
			rc = smarm__bhv_inbox_send(s->sc_node, pid, e);
		}
	}
	if (rc != 0) {
		smarm__bhv_msg_free(&e->en_msg);
		if (rc == SMARM_ECLOSED)
			return op->op_kind == BHV_CALL ? SMARM_EDOWN
						       : SMARM_ENOPROC;
		return rc == SMARM_ENOCHAN ? SMARM_ENOPROC : rc;
	}
	return 0;
}

/* Send op to s in envelope *e, whose packed arguments pass (freed on
 * failure); a call's answer goes to (reply, seq). */
static int send_op(struct smarm_server *s, const struct bhv_op *op,
		   struct bhv_env *e, smarm_chan_t *reply, uint64_t seq)
{
	e->en_be = s->sc_be;
	e->en_op = op;
	e->en_reply = reply;
	e->en_seq = seq;
	/* Fast path: by pid, inbox cached, not a call to the caller itself. */
	if (s->sc_inbox != NULL && !s->sc_named &&
	    !call_to_self(s, op->op_kind, s->sc_pid) &&
	    smarm__reg_chan_send(s->sc_inbox, e) == 0)
		return 0;
	return send_op_slow(s, op, e);
}

/* Check a client's arguments, find opname of kind and pack args (or the
 * varargs *ap) for it into *blk: 0 or a status. */
static int pack_op(struct smarm_server *s, const char *opname, int kind,
		   const smarm_value_t *args, size_t nargs, va_list *ap,
		   const struct bhv_op **op, struct bhv_msg *blk)
{
	int rc;
	if (s == NULL || opname == NULL || (args == NULL && nargs > 0))
		return SMARM_EINVAL;
	rc = smarm__bhv_proto_get(&s->sc_be->bh_proto, opname, kind, op);
	if (rc != 0)
		return rc;
	return ap != NULL ? smarm__bhv_pack_va(*op, *ap, blk)
			  : smarm__bhv_pack(*op, args, nargs, blk);
}

/* Receive one reply from ch within timeout_ns counted from the first of
 * a series of receives (*deadline 0 before it, its end after). */
static int reply_recv(smarm_chan_t *ch, uint64_t timeout_ns, uint64_t *deadline,
		      smarm_response_t *r)
{
	uint64_t left = timeout_ns;
	if (timeout_ns != SMARM_NO_TIMEOUT && timeout_ns != 0) {
		uint64_t now = smarm_now_ns();
		if (*deadline == 0)
			*deadline = now + timeout_ns;
		left = now < *deadline ? *deadline - now : 0;
	}
	return smarm_chan_recv_timeout(ch, r, left);
}

/* Move msg's reply into *reply (NULL: release it); its status. */
static int response_take(smarm_response_t *msg, smarm_value_t *reply)
{
	int st = msg->status;
	/* An error reply's value is its reason (SMARM_EREPLY). */
	if ((st != 0 && st != SMARM_EREPLY) || reply == NULL)
		smarm_value_release(&msg->value);
	else
		*reply = msg->value;
	memset(&msg->value, 0, sizeof msg->value);
	msg->value.type = SMARM_T_VOID;
	return st;
}

static int await(struct smarm_server *s, uint64_t seq, smarm_value_t *reply,
		 uint64_t timeout_ns)
{
	uint64_t deadline = 0;
	smarm_response_t r;
	int rc;

	for (;;) {
		/* For introspection: parked on this server's answer (by name:
		 * the pid the name had at the send). */
		smarm__wait_note(SMARM__WON_CALL,
				 s->sc_named ? s->sc_to.id : s->sc_pid.id);
		rc = reply_recv(s->sc_reply, timeout_ns, &deadline, &r);
		smarm__wait_note(SMARM__WON_NONE, 0);
		if (rc != 0)
			return rc;
		if (r.id == seq)
			return response_take(&r, reply);
		smarm_value_release(&r.value); /* a late reply (INV-1) */
	}
}

/* A call with its arguments packed in e->en_msg: send, wait. */
static int call_block(struct smarm_server *s, const struct bhv_op *op,
		      struct bhv_env *e, smarm_value_t *reply,
		      uint64_t timeout_ns)
{
	int rc;
	if (s->sc_reply == NULL) {
		rc = smarm__gs_reply_chan(&s->sc_reply);
		if (rc != 0) {
			s->sc_reply = NULL;
			smarm__bhv_msg_free(&e->en_msg);
			return rc;
		}
	}
	s->sc_seq++;
	rc = send_op(s, op, e, s->sc_reply, s->sc_seq);
	if (rc != 0)
		return rc;
	return await(s, s->sc_seq, reply, timeout_ns);
}

int smarm_server_call(smarm_server_t *s, const char *opname,
		      const smarm_value_t *args, size_t nargs,
		      smarm_value_t *reply, uint64_t timeout_ns)
{
	const struct bhv_op *op;
	struct bhv_env e;
	int rc =
		pack_op(s, opname, BHV_CALL, args, nargs, NULL, &op, &e.en_msg);
	return rc != 0 ? rc : call_block(s, op, &e, reply, timeout_ns);
}

static int send_kind(smarm_server_t *s, const char *opname,
		     const smarm_value_t *args, size_t nargs, int kind)
{
	const struct bhv_op *op;
	struct bhv_env e;
	int rc = pack_op(s, opname, kind, args, nargs, NULL, &op, &e.en_msg);
	return rc != 0 ? rc : send_op(s, op, &e, NULL, 0);
}

int smarm_server_cast(smarm_server_t *s, const char *op,
		      const smarm_value_t *args, size_t nargs)
{
	return send_kind(s, op, args, nargs, BHV_CAST);
}

int smarm_server_info(smarm_server_t *s, const char *op,
		      const smarm_value_t *args, size_t nargs)
{
	return send_kind(s, op, args, nargs, BHV_INFO);
}

/*
 * Monitor s's server (resolved once: not the caller), end it (a system
 * stop of how and reason, or with stop false an exit signal shutdown)
 * and wait for its Down into *sig: 0 or a status.
 */
static int end_server(struct smarm_server *s, bool stop, int how,
		      intptr_t reason, uint64_t timeout_ns, smarm_signal_t *sig)
{
	smarm_value_t args[2] = { { .type = SMARM_T_I32, .v.i = how },
				  { .type = SMARM_T_I64, .v.i = reason } };
	struct bhv_env e = { .en_be = s->sc_be, .en_op = &smarm__bhv_sys_stop };
	smarm_chan_t *ch;
	smarm_pid_t pid;
	uint64_t ref;
	int rc;

	if (smarm_actor_self().id == 0)
		return SMARM_ENOTACTOR;
	rc = resolve(s, BHV_CALL, &pid);
	if (rc == 0)
		rc = down_watch(pid, &ch, &ref);
	if (rc != 0)
		return rc;
	if (!stop)
		(void)smarm_actor_send_exit(pid, SMARM_EXIT_SHUTDOWN, 0);
	else if ((rc = smarm__bhv_pack(&smarm__bhv_sys_stop, args, 2,
				       &e.en_msg)) == 0 &&
		 (rc = smarm__bhv_inbox_send(s->sc_node, pid, &e)) != 0)
		smarm__bhv_msg_free(&e.en_msg);
	/* A closed inbox or a pid gone: its Down, due, says how it ended. No
	 * inbox at all: no server, whose end might never come. */
	if (rc != 0 && rc != SMARM_ECLOSED && rc != SMARM_ENOPROC) {
		(void)down_wait(ch, ref, 0, sig);
		return rc == SMARM_ENOCHAN ? SMARM_ENOPROC : rc;
	}
	return down_wait(ch, ref, timeout_ns, sig);
}

int smarm_server_shutdown(smarm_server_t *s, uint64_t timeout_ns, int *how)
{
	smarm_signal_t sig;
	int rc = s != NULL ? end_server(s, false, 0, 0, timeout_ns, &sig)
			   : SMARM_EINVAL;
	if (rc == SMARM_ENONAME) { /* no server: ended already */
		rc = 0;
		sig.how = SMARM_EXIT_NOPROC;
	}
	if (rc == 0 && how != NULL)
		*how = sig.how;
	return rc;
}

int smarm_server_stop(smarm_server_t *s, int how, intptr_t reason,
		      uint64_t timeout_ns, int *out_how, intptr_t *out_reason)
{
	smarm_signal_t sig;
	int rc;

	if (s == NULL || !bhv_stop_how_ok(how))
		return SMARM_EINVAL;
	rc = end_server(s, true, how, reason, timeout_ns, &sig);
	if (rc == SMARM_ENONAME || (rc == 0 && sig.how == SMARM_EXIT_NOPROC))
		return SMARM_ENOPROC;
	if (rc != 0)
		return rc;
	if (out_how != NULL)
		*out_how = sig.how;
	if (out_reason != NULL)
		*out_reason = sig.reason;
	return 0;
}

/* ---- varargs and C replies ---- */

/* Store reply value v (its memory passes) as the C object of its type at
 * out (NULL: released). */
static void store_c(const smarm_value_t *v, void *out)
{
	smarm_value_t tmp = *v;
	if (out == NULL) {
		smarm_value_release(&tmp);
		return;
	}
	switch (v->type) {
#define STORE(vt, nm, ct, ffi, vm, sm, rm, va, chk)                            \
	case vt:                                                               \
		*(ct *)out = v->v.vm;                                          \
		break;
		BHV_SCALARS(STORE)
#undef STORE
	case SMARM_T_STR:
	case SMARM_T_BYTES: {
		smarm_bytes_t *b = out; /* the caller frees ptr */
		b->ptr = v->v.p;
		b->len = v->len;
		break;
	}
	case SMARM_T_TUPLE: /* the struct's bytes, then ours go */
		memcpy(out, v->v.p, v->len);
		smarm_value_release(&tmp);
		break;
	default:
		break;
	}
}

/*
 * Does a reply object of the C type of type (VOID: unchecked) and of
 * size bytes (0: unchecked) take op's reply as store_c writes it? A str
 * reply is a smarm_bytes_t (SMARM_T_BYTES), so SMARM_T_STR takes none.
 */
static bool reply_c_ok(const struct bhv_op *op, int type, size_t size)
{
	int r = op->op_reply;
	const struct bhv_tuple *tu = bhv_reply_tuple(op);
	if (type == SMARM_T_STR)
		return false;
	if (r == SMARM_T_VOID)
		return true;
	if (type != SMARM_T_VOID && type != r &&
	    !(type == SMARM_T_BYTES && r == SMARM_T_STR))
		return false;
	return size == 0 ||
	       size == (r == SMARM_T_STR || r == SMARM_T_BYTES
				? sizeof(smarm_bytes_t)
			: tu != NULL ? tu->tu_ffi.size
				     : smarm__bhv_ffi_type(r)->size);
}

/* A call of C objects (callv, call_sized, a stub); out NULL: dropped. */
static int call_c(struct smarm_server *s, const struct bhv_op *op,
		  struct bhv_env *e, void *out, uint64_t timeout_ns)
{
	smarm_value_t v;
	int rc;
	memset(&v, 0, sizeof v);
	rc = call_block(s, op, e, &v, timeout_ns);
	if (rc == 0)
		store_c(&v, out);
	else
		smarm_value_release(&v); /* SMARM_EREPLY's reason */
	return rc;
}

int smarm_server_call_sized(smarm_server_t *s, const char *opname,
			    const smarm_value_t *args, size_t nargs,
			    void *reply, int reply_type, size_t reply_size,
			    uint64_t timeout_ns)
{
	const struct bhv_op *op;
	struct bhv_env e;
	int rc;

	if (reply_type < SMARM_T_VOID || reply_type > SMARM_T_TUPLE)
		return SMARM_EINVAL;
	rc = pack_op(s, opname, BHV_CALL, args, nargs, NULL, &op, &e.en_msg);
	if (rc != 0)
		return rc;
	/* Before the send: a reply object of the wrong type or size is
	 * refused, never written past its end. */
	if (!reply_c_ok(op, reply_type, reply != NULL ? reply_size : 0)) {
		smarm__bhv_msg_free(&e.en_msg);
		return SMARM_EARGS;
	}
	return call_c(s, op, &e, reply, timeout_ns);
}

int smarm_server_call_typed(smarm_server_t *s, const char *opname,
			    const smarm_value_t *args, size_t nargs,
			    void *reply, int reply_type, uint64_t timeout_ns)
{
	return smarm_server_call_sized(s, opname, args, nargs, reply,
				       reply_type, 0, timeout_ns);
}

int smarm_server_callv(smarm_server_t *s, const char *opname,
		       uint64_t timeout_ns, void *reply, ...)
{
	const struct bhv_op *op;
	struct bhv_env e;
	va_list ap;
	int rc;

	va_start(ap, reply);
	rc = pack_op(s, opname, BHV_CALL, NULL, 0, &ap, &op, &e.en_msg);
	va_end(ap);
	return rc != 0 ? rc : call_c(s, op, &e, reply, timeout_ns);
}

int smarm_server_castv(smarm_server_t *s, const char *opname, ...)
{
	const struct bhv_op *op;
	struct bhv_env e;
	va_list ap;
	int rc;

	va_start(ap, opname);
	rc = pack_op(s, opname, BHV_CAST, NULL, 0, &ap, &op, &e.en_msg);
	va_end(ap);
	return rc != 0 ? rc : send_op(s, op, &e, NULL, 0);
}

/* ---- stubs ---- */

/* A stub's body: a call's (server, timeout, out, args...) or a cast's
 * (server, args...); a call's reply goes to *out in its C type. */
static void stub_fun(ffi_cif *cif, void *ret, void **args, void *user)
{
	struct bhv_stub *st = user;
	const struct bhv_op *op = st->st_op;
	struct smarm_server *s = *(struct smarm_server **)args[0];
	bool call = op->op_kind == BHV_CALL;
	struct bhv_env e;
	int rc = SMARM_EINVAL;

	(void)cif;
	if (s != NULL && s->sc_be == st->st_be)
		rc = smarm__bhv_pack_ffi(op, args + (call ? 3 : 1), &e.en_msg);
	if (rc == 0)
		rc = call ? call_c(s, op, &e, *(void **)args[2],
				   *(uint64_t *)args[1])
			  : send_op(s, op, &e, NULL, 0);
	*(ffi_sarg *)ret = rc; /* libffi widens an int return */
}

int smarm_server_stub(const smarm_behaviour_t *b, const char *opname,
		      void (**fn)(void))
{
	const struct bhv_op *op;
	if (!smarm__bhv_valid(b) || opname == NULL || fn == NULL)
		return SMARM_EINVAL;
	op = smarm__bhv_proto_find(&b->bh_proto, opname, 0);
	if (op == NULL)
		return SMARM_ENOOP;
	if (op->op_kind == BHV_INFO)
		return SMARM_EOPKIND;
	return smarm__bhv_stub_add(b, op, stub_fun, fn);
}

/* ---- requests ---- */

/* Send call opname(args) to s's server, its answer to reply (seq) and
 * nobody waiting for it here: so one to the caller itself is served
 * too (sc_req). 0 or send_op's status. */
static int call_nowait(struct smarm_server *s, const char *opname,
		       const smarm_value_t *args, size_t nargs,
		       smarm_chan_t *reply, uint64_t seq)
{
	const struct bhv_op *op;
	struct bhv_env e;
	int rc =
		pack_op(s, opname, BHV_CALL, args, nargs, NULL, &op, &e.en_msg);
	if (rc != 0)
		return rc;
	bool req = s->sc_req;
	s->sc_req = true;
	rc = send_op(s, op, &e, reply, seq);
	s->sc_req = req;
	return rc;
}

int smarm__bhv_server_call_routed(smarm_server_t *s, const char *opname,
				  const smarm_value_t *args, size_t nargs,
				  struct bhv_route *rt)
{
	if (rt == NULL || rt->rt_fn == NULL)
		return SMARM_EINVAL;
	return call_nowait(s, opname, args, nargs, BHV_ROUTED,
			   (uint64_t)(uintptr_t)rt);
}

struct smarm_request {
	struct smarm_server rq_s; /* a handle of its own (its reply
				     channel, sequence 1) */
};

int smarm_server_send_request(smarm_server_t *s, const char *opname,
			      const smarm_value_t *args, size_t nargs,
			      smarm_request_t **req)
{
	const struct bhv_op *op;
	struct bhv_env e;
	struct smarm_request *rq;
	int rc;

	if (req == NULL)
		return SMARM_EINVAL;
	rc = pack_op(s, opname, BHV_CALL, args, nargs, NULL, &op, &e.en_msg);
	if (rc != 0)
		return rc;
	rq = calloc(1, sizeof *rq);
	if (rq == NULL) {
		smarm__bhv_msg_free(&e.en_msg);
		return SMARM_ENOMEM;
	}
	rq->rq_s = *s;
	rq->rq_s.sc_reply = NULL;
	rq->rq_s.sc_seq = 1;
	rq->rq_s.sc_req = true;
	rq->rq_s.sc_named = false;
	if (s->sc_named) /* by the pid the name has now: its target */
		rc = smarm_node_whereis(s->sc_node, s->sc_name,
					&rq->rq_s.sc_pid);
	if (rc == 0)
		rc = smarm__gs_reply_chan(&rq->rq_s.sc_reply);
	if (rc != 0) {
		smarm__bhv_msg_free(&e.en_msg);
		free(rq);
		return rc;
	}
	rc = send_op(&rq->rq_s, op, &e, rq->rq_s.sc_reply, 1);
	if (rc != 0) {
		bhv_chan_free(rq->rq_s.sc_reply);
		free(rq);
		return rc;
	}
	smarm__bhv_plugin_ref(rq->rq_s.sc_be); /* the request's own */
	*req = rq;
	return 0;
}

void smarm_request_free(smarm_request_t *req)
{
	if (req == NULL)
		return;
	bhv_chan_free(req->rq_s.sc_reply);
	smarm__bhv_plugin_unref(req->rq_s.sc_be);
	free(req);
}

int smarm_server_wait_response(smarm_request_t *req, smarm_value_t *reply,
			       uint64_t timeout_ns)
{
	int rc;
	if (req == NULL)
		return SMARM_EINVAL;
	/* Sent to the caller itself: no answer can come while it waits. */
	if (timeout_ns != 0 &&
	    smarm_pid_eq(req->rq_s.sc_pid, smarm_actor_self()))
		return SMARM_ECALLSELF;
	rc = await(&req->rq_s, 1, reply, timeout_ns);
	if (rc != SMARM_ETIMEDOUT && rc != SMARM_EAGAIN)
		smarm_request_free(req);
	return rc;
}

/* ---- responses as messages, request id collections ---- */

/* Request ids: unique in the process, never 0. */
static _Atomic uint64_t req_ids;

int smarm_response_chan_alloc(smarm_chan_t **out)
{
	if (out == NULL)
		return SMARM_EINVAL;
	return smarm__gs_reply_chan(out);
}

int smarm_server_send_request_to(smarm_server_t *s, const char *opname,
				 const smarm_value_t *args, size_t nargs,
				 smarm_chan_t *replies, uint64_t *id)
{
	smarm_chan_t *ch;
	uint64_t rid;
	int rc;

	if (id == NULL)
		return SMARM_EINVAL;
	/* A channel of responses: its element size is constant. */
	if (smarm__chan_decode(replies, &ch) != 0 ||
	    ch->esz != sizeof(smarm_response_t))
		return SMARM_EINVAL;
	rid = atomic_fetch_add_explicit(&req_ids, 1, memory_order_relaxed) + 1;
	rc = call_nowait(s, opname, args, nargs, replies, rid);
	if (rc == 0)
		*id = rid;
	return rc;
}

int smarm_server_check_response(smarm_response_t *msg, uint64_t id,
				smarm_value_t *reply)
{
	if (msg == NULL)
		return SMARM_EINVAL;
	if (msg->id != id || id == 0)
		return SMARM_EAGAIN;
	return response_take(msg, reply);
}

int smarm_request_id_new(uint64_t *id)
{
	if (id == NULL)
		return SMARM_EINVAL;
	*id = atomic_fetch_add_explicit(&req_ids, 1, memory_order_relaxed) + 1;
	return 0;
}

/* A tuple for a raw reply target: no protocol names its layout, so its
 * bytes are copied as they are (smarm_value_get_tuple checks the size). */
static int tuple_copy_raw(const smarm_value_t *v, smarm_value_t *out)
{
	void *p;
	memset(out, 0, sizeof *out);
	out->type = SMARM_T_VOID;
	if (v->v.p == NULL || v->len == 0 || v->len > BHV_TUPLE_SIZE_MAX)
		return SMARM_EARGS;
	p = malloc(v->len);
	if (p == NULL)
		return SMARM_ENOMEM;
	memcpy(p, v->v.p, v->len);
	out->type = SMARM_T_TUPLE;
	out->len = v->len;
	out->v.p = p;
	return 0;
}

int smarm_reply_to(smarm_chan_t *replies, uint64_t id, const smarm_value_t *v)
{
	smarm_response_t r;
	smarm_chan_t *ch;
	int rc;

	if (id == 0)
		return SMARM_EINVAL;
	/* A channel of responses (by element size); a freed one is the
	 * requester gone (found at the send). */
	rc = smarm__chan_decode(replies, &ch);
	if (rc == SMARM_EINVAL ||
	    (rc == 0 && ch->esz != sizeof(smarm_response_t)))
		return SMARM_EINVAL;
	memset(&r, 0, sizeof r);
	r.id = id;
	r.status = 0;
	if (v != NULL && v->type == SMARM_T_TUPLE)
		rc = tuple_copy_raw(v, &r.value);
	else
		rc = smarm__bhv_value_copy(v != NULL ? v->type : SMARM_T_VOID,
					   NULL, v, &r.value);
	if (rc != 0)
		return rc;
	rc = smarm_chan_send(replies, &r);
	if (rc == 0)
		return 0;
	smarm_value_release(&r.value); /* not sent: still ours */
	/* the requester is gone (OTP drops a reply to a dead process) */
	return rc == SMARM_ECLOSED || rc == SMARM_ESTATE ? 0 : rc;
}

struct smarm_reqids {
	struct reqid {
		uint64_t ri_id;
		intptr_t ri_label;
	} * rc_v;
	size_t rc_n, rc_cap;
};

int smarm_reqids_alloc(smarm_reqids_t **out)
{
	if (out == NULL)
		return SMARM_EINVAL;
	*out = calloc(1, sizeof **out);
	return *out != NULL ? 0 : SMARM_ENOMEM;
}

void smarm_reqids_free(smarm_reqids_t *c)
{
	if (c == NULL)
		return;
	free(c->rc_v);
	free(c);
}

/* The index of id in c, or c->rc_n. */
static size_t reqids_find(const smarm_reqids_t *c, uint64_t id)
{
	size_t i = 0;
	while (i < c->rc_n && c->rc_v[i].ri_id != id)
		i++;
	return i;
}

int smarm_reqids_add(smarm_reqids_t *c, uint64_t id, intptr_t label)
{
	if (c == NULL || id == 0)
		return SMARM_EINVAL;
	if (reqids_find(c, id) < c->rc_n)
		return SMARM_EEXIST;
	if (c->rc_n == c->rc_cap) {
		size_t cap = c->rc_cap ? 2 * c->rc_cap : 8;
		struct reqid *v = realloc(c->rc_v, cap * sizeof *v);
		if (v == NULL)
			return SMARM_ENOMEM;
		c->rc_v = v;
		c->rc_cap = cap;
	}
	c->rc_v[c->rc_n].ri_id = id;
	c->rc_v[c->rc_n].ri_label = label;
	c->rc_n++;
	return 0;
}

size_t smarm_reqids_size(const smarm_reqids_t *c)
{
	return c != NULL ? c->rc_n : 0;
}

int smarm_reqids_check(smarm_reqids_t *c, smarm_response_t *msg, bool del,
		       intptr_t *label, smarm_value_t *reply)
{
	size_t i;
	if (c == NULL || msg == NULL || label == NULL)
		return SMARM_EINVAL;
	if (c->rc_n == 0)
		return SMARM_ENOENT;
	i = reqids_find(c, msg->id);
	if (i == c->rc_n)
		return SMARM_EAGAIN;
	*label = c->rc_v[i].ri_label;
	if (del)
		c->rc_v[i] = c->rc_v[--c->rc_n];
	return response_take(msg, reply);
}

int smarm_reqids_receive(smarm_reqids_t *c, smarm_chan_t *replies,
			 uint64_t timeout_ns, bool del, intptr_t *label,
			 smarm_value_t *reply)
{
	uint64_t deadline = 0;
	smarm_response_t msg;
	int rc;

	if (c == NULL || replies == NULL || label == NULL)
		return SMARM_EINVAL;
	if (c->rc_n == 0)
		return SMARM_ENOENT;
	for (;;) {
		rc = reply_recv(replies, timeout_ns, &deadline, &msg);
		if (rc != 0)
			return rc;
		rc = smarm_reqids_check(c, &msg, del, label, reply);
		if (rc != SMARM_EAGAIN)
			return rc;
		smarm_value_release(&msg.value); /* none of c's */
	}
}

/* ---- why arguments are refused ---- */

/* Does a value of type got convert to type want (pack.c's rules)? */
static bool converts(int got, int want)
{
	bool fl = (got == SMARM_T_F32 || got == SMARM_T_F64) &&
		  (want == SMARM_T_F32 || want == SMARM_T_F64);
	return got == want || fl ||
	       (smarm__bhv_type_int(got) &&
		(smarm__bhv_type_int(want) || want == SMARM_T_BOOL));
}

/* Why v, op's argument i, was refused with status rc, into msg. */
static void why_arg(const struct bhv_op *op, const smarm_value_t *v, unsigned i,
		    int rc, char *msg, size_t msglen)
{
	const struct bhv_tuple *tu = bhv_arg_tuple(op, i);
	char tn[8 * SMARM_TUPLE_MAX + 8];
	const char *want = tu != NULL ? smarm__bhv_tuple_name(tu, tn, sizeof tn)
				      : smarm__bhv_type_name(op->op_args[i]);

	if (rc == SMARM_ETOOBIG)
		snprintf(msg, msglen,
			 "%s: argument %u (%s) is over SMARM_BYTES_MAX",
			 op->op_name, i + 1, want);
	else if (v->type == SMARM_T_VOID)
		snprintf(msg, msglen,
			 "%s: argument %u is no value (void: a NULL str?), the "
			 "protocol says %s",
			 op->op_name, i + 1, want);
	else if (!converts(v->type, op->op_args[i]))
		snprintf(msg, msglen,
			 "%s: argument %u is %s, the protocol says %s",
			 op->op_name, i + 1, smarm__bhv_type_name(v->type),
			 want);
	else if (tu != NULL && v->len != tu->tu_ffi.size)
		snprintf(
			msg, msglen,
			"%s: argument %u is a %u-byte tuple, the protocol says "
			"%s: %zu bytes",
			op->op_name, i + 1, v->len, want, tu->tu_ffi.size);
	else if (tu != NULL && v->v.p == NULL)
		snprintf(msg, msglen,
			 "%s: argument %u is a tuple with no data "
			 "(NULL)",
			 op->op_name, i + 1);
	else if (tu != NULL)
		snprintf(msg, msglen,
			 "%s: argument %u: a bool of its %s is neither 0 nor 1",
			 op->op_name, i + 1, want);
	else
		snprintf(msg, msglen,
			 "%s: argument %u does not fit %s (out of range, not "
			 "exactly a value of it, a NUL in a str, or no data "
			 "for its length)",
			 op->op_name, i + 1, want);
}

int smarm_server_args_why(const smarm_behaviour_t *b, const char *opname,
			  const smarm_value_t *args, size_t nargs, char *msg,
			  size_t msglen)
{
	const struct bhv_op *op;
	size_t bad;
	int rc;

	if (msg != NULL && msglen > 0)
		msg[0] = '\0';
	if (!smarm__bhv_valid(b) || opname == NULL ||
	    (args == NULL && nargs > 0))
		return SMARM_EINVAL;
	op = smarm__bhv_proto_find(&b->bh_proto, opname, 0);
	if (op == NULL) {
		if (msg != NULL && msglen > 0)
			snprintf(msg, msglen, "%s: no such operation", opname);
		return SMARM_ENOOP;
	}
	rc = smarm__bhv_args_check(op, args, nargs, &bad);
	if (rc == 0 || msg == NULL || msglen == 0)
		return rc;
	if (bad == nargs) {
		snprintf(msg, msglen, "%s takes %u argument%s, %zu given",
			 op->op_name, op->op_nargs,
			 op->op_nargs == 1 ? "" : "s", nargs);
		return rc;
	}
	why_arg(op, &args[bad], (unsigned)bad, rc, msg, msglen);
	return rc;
}

/* ---- status ---- */

int smarm__bhv_status_of(smarm_node_t *node, smarm_pid_t pid,
			 smarm_server_status_t *out, uint64_t timeout_ns)
{
	/* A handle of no behaviour: nothing but the status reads sc_be. */
	struct smarm_server s = { .sc_node = node, .sc_pid = pid };
	int rc;
	if (node == NULL || pid.id == 0)
		return SMARM_EINVAL;
	rc = smarm_server_get_status(&s, out, timeout_ns);
	if (s.sc_reply != NULL)
		bhv_chan_free(s.sc_reply);
	return rc;
}

int smarm_server_get_status(smarm_server_t *s, smarm_server_status_t *out,
			    uint64_t timeout_ns)
{
	const size_t least =
		offsetof(smarm_server_status_t, pid) + sizeof(smarm_pid_t);
	struct bhv_env e;
	smarm_value_t v;
	size_t want, n;
	int rc;

	if (s == NULL || out == NULL || out->struct_size < least)
		return SMARM_EINVAL;
	want = out->struct_size;
	rc = smarm__bhv_pack(&smarm__bhv_sys_status, NULL, 0, &e.en_msg);
	if (rc != 0)
		return rc;
	memset(&v, 0, sizeof v);
	rc = call_block(s, &smarm__bhv_sys_status, &e, &v, timeout_ns);
	if (rc != 0) {
		smarm_value_release(&v);
		return rc;
	}
	n = v.len < want ? v.len : want;
	memcpy(out, v.v.p, n);
	out->struct_size = want;
	smarm_value_release(&v);
	return 0;
}
