/* SPDX-License-Identifier: MIT */
/*
 * gen_server.c - the gen_server engine: a server actor holding a
 * behaviour's state and serving one message at a time, the envelopes
 * that carry operations into it, replies and reply tokens.
 *
 * Glossary. The *inbox* is the server's channel of calls and casts, a
 * mailbox of message type "smarm.gs.inbox" (so clients reach it by pid
 * or name through the registry's one send path); *infos* have a channel
 * and mailbox of their own ("smarm.gs.info"), each info followed by an
 * empty envelope (a nudge) into the inbox that wakes a server parked on
 * the inbox alone. The *exit* channel gets trapped exit signals, the
 * *down* channel the Downs of smarm_gs_monitor.
 *
 * The loop. Arms in priority order: exit, downs, timer ticks (the
 * *control* channel: each tick names a timer whose record holds the
 * info operation and its arguments), infos, inbox. With no exit, down
 * or timer arm
 * the loop takes an info if one is queued and otherwise parks on the
 * inbox alone (the fast path); else it waits on a select set of the
 * arms and takes from the lowest ready one.
 *
 * Calls. A client sends an envelope naming its reply channel and a
 * sequence number; the server answers with one struct bhv_reply of that
 * number. A client discards replies of other numbers (a call that timed
 * out earlier), so no late reply reaches a later call, and no channel or
 * monitor is made per call. A server that ends answers the call it is in
 * (unless a token took it), the calls still queued (the inbox's element
 * destructor, when the server frees the inbox) and its live tokens with
 * SMARM_EDOWN; a call sent after that finds the inbox closed (EDOWN) or
 * the server gone (ENOPROC).
 *
 * Ownership: a server (struct smarm_gs_ctx) is malloc'd by its actor and
 * freed by the actor's cleanup handler; it holds one plugin reference.
 * Only its actor touches it. Reply tokens are process-wide, in one
 * registry (tok_all), so a freed token is refused, not used.
 * Locking: tok_lock (a pthread mutex; no plugin code runs and no lock
 * but a channel's is taken under it) guards the token registry and each
 * token's tk_owner and tk_answered; live_lock (a leaf) guards the list
 * of live servers, by which a context pointer is checked before use.
 * Invariants: INV-1 every call received is answered exactly once: by
 * its handler's return, by a token's reply or drop, or with SMARM_EDOWN
 * when the server ends. INV-2 terminate runs once, on every path after
 * init succeeded; destroy runs once after create succeeded. INV-3 an
 * envelope holds no plugin reference: it reaches plugin code only
 * through the server that takes it, which holds one, and that server
 * trusts its operation only when its behaviour pointer equals its own
 * (a behaviour alive when the envelope was sent is the receiver's or
 * never compares equal to it: both existed at once). INV-4 only this
 * layer makes envelopes (their message types' destructor is internal,
 * so no other code can define those types), each block packed for its
 * operation (pack.c INV-1): a server does not re-check a block it
 * takes; debug builds assert it (smarm__bhv_msg_check).
 * See: docs/architecture.md (Behaviour layer), docs/plugins.md.
 */
#include "gen_server.h"

#include "../core/sched.h"
#include "../core/slot.h"
#include "../core/subsys.h"
#include "../otp/reg.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- message types ---- */

static void reply_free(void *elem)
{
	struct bhv_reply *r = elem;
	smarm_value_release(&r->rp_v);
}

static const smarm_msgtype_t *inbox_type, *info_type;
static pthread_once_t types_once = PTHREAD_ONCE_INIT;

static void types_define(void)
{
	if (smarm_msgtype_define("smarm.gs.inbox", sizeof(struct bhv_env),
				 smarm__bhv_env_free, &inbox_type) != 0 ||
	    smarm_msgtype_define("smarm.gs.info", sizeof(struct bhv_env),
				 smarm__bhv_env_free, &info_type) != 0)
		smarm__panic("gen_server: message types");
}

const smarm_msgtype_t *smarm__gs_inbox_type(void)
{
	pthread_once(&types_once, types_define);
	return inbox_type;
}

const smarm_msgtype_t *smarm__gs_info_type(void)
{
	pthread_once(&types_once, types_define);
	return info_type;
}

int smarm__gs_reply_chan(smarm_chan_t **out)
{
	return smarm_chan_alloc(out, sizeof(struct bhv_reply), reply_free);
}

/* ---- envelopes and replies ---- */

void smarm__bhv_reply_send(smarm_chan_t *reply, uint64_t seq, int status,
			   smarm_value_t *v)
{
	struct bhv_reply r;
	memset(&r, 0, sizeof r);
	r.rp_seq = seq;
	r.rp_status = status;
	r.rp_v.type = SMARM_T_VOID;
	if ((status == 0 || status == SMARM_EREPLY) && v != NULL) {
		r.rp_v = *v;
		memset(v, 0, sizeof *v);
	}
	if (smarm_chan_send(reply, &r) != 0)
		smarm_value_release(&r.rp_v); /* the caller is gone */
}

static void env_release(struct bhv_env *e)
{
	smarm__bhv_msg_free(&e->en_msg);
}

void smarm__bhv_env_free(void *elem)
{
	struct bhv_env *e = elem;
	if (e->en_op != NULL && e->en_reply != NULL)
		smarm__bhv_reply_send(e->en_reply, e->en_seq, SMARM_EDOWN,
				      NULL);
	env_release(e);
}

/* ---- tokens ---- */

struct smarm_reply {
	struct smarm_reply *tk_next, *tk_prev; /* tok_all (tok_lock) */
	const void *tk_owner; /* its server; NULL once it ended */
	const struct smarm_behaviour *tk_be; /* plugin reference held */
	const struct bhv_op *tk_op;	     /* the call's operation */
	smarm_chan_t *tk_reply;		     /* the caller's channel */
	uint64_t tk_seq;		     /* the call's number */
	uint64_t tk_magic;		     /* TOKEN_MAGIC while live */
	bool tk_answered;		     /* EDOWN sent at server end */
};

#define TOKEN_MAGIC 0x6273746f6b656e31ull

/* The live tokens (a tokens' registry, so a freed one is refused). */
static pthread_mutex_t tok_lock = PTHREAD_MUTEX_INITIALIZER;
static struct smarm_reply *tok_all; /* every live token (tk_next/prev) */

static void tok_unlink(struct smarm_reply *t)
{
	if (t->tk_prev != NULL)
		t->tk_prev->tk_next = t->tk_next;
	else
		tok_all = t->tk_next;
	if (t->tk_next != NULL)
		t->tk_next->tk_prev = t->tk_prev;
}

static bool tok_live(const struct smarm_reply *t)
{
	for (struct smarm_reply *p = tok_all; p != NULL; p = p->tk_next)
		if (p == t)
			return true;
	return false;
}

/* Under tok_lock: take t out of the registry (it is then ours alone). */
static void tok_take(struct smarm_reply *t)
{
	tok_unlink(t);
	t->tk_magic = 0;
}

/* No lock held: free a token taken out. */
static void tok_free(struct smarm_reply *t)
{
	const struct smarm_behaviour *be = t->tk_be;
	free(t);
	smarm__bhv_plugin_unref(be); /* may unload: no lock held */
}

int smarm__bhv_token_new(const void *owner, const struct smarm_behaviour *be,
			 const struct bhv_op *op, smarm_chan_t *reply,
			 uint64_t seq, struct smarm_reply **out)
{
	struct smarm_reply *t = calloc(1, sizeof *t);
	if (t == NULL)
		return SMARM_ENOMEM;
	t->tk_owner = owner;
	t->tk_be = be;
	t->tk_op = op;
	t->tk_reply = reply;
	t->tk_seq = seq;
	t->tk_magic = TOKEN_MAGIC;
	smarm__bhv_plugin_ref(be);
	pthread_mutex_lock(&tok_lock);
	t->tk_next = tok_all;
	if (tok_all != NULL)
		tok_all->tk_prev = t;
	tok_all = t;
	pthread_mutex_unlock(&tok_lock);
	*out = t;
	return 0;
}

void smarm__bhv_tokens_end(const void *owner)
{
	pthread_mutex_lock(&tok_lock);
	for (struct smarm_reply *t = tok_all; t != NULL; t = t->tk_next) {
		if (t->tk_owner != owner)
			continue;
		t->tk_owner = NULL;
		if (!t->tk_answered) {
			t->tk_answered = true;
			smarm__bhv_reply_send(t->tk_reply, t->tk_seq,
					      SMARM_EDOWN, NULL);
		}
	}
	pthread_mutex_unlock(&tok_lock);
}

int smarm_reply(smarm_reply_t *t, const smarm_value_t *v)
{
	smarm_value_t out;
	bool answered;
	int rc;
	if (t == NULL)
		return SMARM_EINVAL;
	pthread_mutex_lock(&tok_lock);
	if (!tok_live(t) || t->tk_magic != TOKEN_MAGIC) {
		pthread_mutex_unlock(&tok_lock);
		return SMARM_EINVAL;
	}
	rc = smarm__bhv_value_copy(t->tk_op->op_reply, v, &out);
	if (rc != 0) { /* the token stays valid */
		pthread_mutex_unlock(&tok_lock);
		return rc == SMARM_ENOMEM ? rc : SMARM_EARGS;
	}
	tok_take(t);
	answered = t->tk_answered; /* by the server's end: EDOWN sent */
	pthread_mutex_unlock(&tok_lock);
	if (!answered)
		smarm__bhv_reply_send(t->tk_reply, t->tk_seq, 0, &out);
	else
		smarm_value_release(&out);
	tok_free(t);
	return 0;
}

int smarm_reply_drop(smarm_reply_t *t)
{
	bool answered;
	if (t == NULL)
		return SMARM_EINVAL;
	pthread_mutex_lock(&tok_lock);
	if (!tok_live(t) || t->tk_magic != TOKEN_MAGIC) {
		pthread_mutex_unlock(&tok_lock);
		return SMARM_EINVAL;
	}
	tok_take(t);
	answered = t->tk_answered;
	pthread_mutex_unlock(&tok_lock);
	if (!answered)
		smarm__bhv_reply_send(t->tk_reply, t->tk_seq, SMARM_EDOWN,
				      NULL);
	tok_free(t);
	return 0;
}

/* ---- the server ---- */

/* The live servers, so a context pointer is checked before use. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct smarm_gs_ctx *live; /* sv_live_next (live_lock) */

bool smarm__gs_is_server(const struct smarm_gs_ctx *cx, smarm_pid_t self)
{
	bool ok = false;
	pthread_mutex_lock(&live_lock);
	for (struct smarm_gs_ctx *p = live; p != NULL && !ok;
	     p = p->sv_live_next)
		ok = p == cx && smarm_pid_eq(p->sv_self, self);
	pthread_mutex_unlock(&live_lock);
	return ok;
}

static void live_add(struct smarm_gs_ctx *sv)
{
	pthread_mutex_lock(&live_lock);
	sv->sv_live_next = live;
	live = sv;
	pthread_mutex_unlock(&live_lock);
}

static void live_remove(struct smarm_gs_ctx *sv)
{
	pthread_mutex_lock(&live_lock);
	for (struct smarm_gs_ctx **pp = &live; *pp != NULL;
	     pp = &(*pp)->sv_live_next) {
		if (*pp == sv) {
			*pp = sv->sv_live_next;
			break;
		}
	}
	pthread_mutex_unlock(&live_lock);
}

static int bhv_open(struct smarm_node *n, const struct smarm_config *cfg,
		    void **state)
{
	(void)n;
	(void)cfg;
	*state = calloc(1, sizeof(struct bhv_node));
	return *state != NULL ? 0 : SMARM_ENOMEM;
}

static void bhv_close(struct smarm_node *n, void *state)
{
	(void)n;
	free(state);
}

static int bhv_get_stat(const struct smarm_node *n, const void *state, int stat,
			int64_t *out)
{
	const struct bhv_node *b = state;
	(void)n;
	if (stat != SMARM_STAT_SERVER_REQUESTS)
		return SMARM_EINVAL;
	*out = atomic_load_explicit(&b->bn_served, memory_order_relaxed);
	return 0;
}

const struct smarm__subsys smarm__bhv_subsys = {
	.ss_name = "behaviour",
	.ss_open = bhv_open,
	.ss_close = bhv_close,
	.ss_get_stat = bhv_get_stat,
};

/*
 * The system stop (smarm_server_stop): a message of no behaviour's
 * protocol, queued in the inbox like a call, so it is taken between
 * callbacks, never inside one (OTP's sys:terminate). Its arguments are
 * how and reason.
 */
const struct bhv_op smarm__bhv_sys_stop = {
	.op_kind = BHV_CAST,
	.op_nargs = 2,
	.op_reply = SMARM_T_VOID,
	.op_args = { SMARM_T_I32, SMARM_T_I64 },
	.op_name = "(stop)",
};

bool smarm__bhv_sys_stop_take(struct bhv_env *e, int *how, intptr_t *reason)
{
	const struct bhv_block *b;
	if (e->en_op != &smarm__bhv_sys_stop)
		return false;
	b = bhv_msg_block(&e->en_msg);
	*how = (int)b->bk_slots[0].sl_v.i;
	*reason = (intptr_t)b->bk_slots[1].sl_v.i;
	smarm__bhv_msg_free(&e->en_msg);
	return true;
}

/* Run the operation of envelope e (received from the inbox or infos). */
static void dispatch(struct smarm_gs_ctx *sv, struct bhv_env *e)
{
	const struct bhv_op *op = e->en_op;
	union bhv_ret r;
	smarm_value_t v;
	void *cx = sv;
	int how, rc;
	intptr_t reason;

	if (op == NULL)
		return; /* a nudge */
	if (smarm__bhv_sys_stop_take(e, &how, &reason)) {
		if (!sv->sv_stop) {
			sv->sv_stop = true;
			sv->sv_how = how;
			sv->sv_reason = reason;
		}
		return;
	}
	if (e->en_be != sv->sv_be) {
		/* Not this server's behaviour (a stale pid's new tenant). */
		if (e->en_reply != NULL)
			smarm__bhv_reply_send(e->en_reply, e->en_seq,
					      SMARM_ENOOP, NULL);
		env_release(e);
		return;
	}
	assert(smarm__bhv_msg_check(op, &e->en_msg) == 0); /* INV-4 */
	atomic_fetch_add_explicit(&sv->sv_stats->bn_served, 1,
				  memory_order_relaxed);
	sv->sv_cur = e;
	sv->sv_deferred = false;
	sv->sv_err_set = false;
	smarm__bhv_invoke_block(op, bhv_msg_block(&e->en_msg), sv->sv_state, cx,
				&r);
	sv->sv_cur = NULL;
	if (op->op_kind == BHV_CALL && !sv->sv_deferred) {
		if (SMARM_UNLIKELY(sv->sv_err_set)) { /* {error, Reason} */
			v.type = SMARM_T_I64;
			v.len = 0;
			v.v.i = sv->sv_err;
			rc = SMARM_EREPLY;
		} else {
			rc = smarm__bhv_ret_value(op->op_reply, &r, &v);
		}
		smarm__bhv_reply_send(e->en_reply, e->en_seq, rc, &v);
	}
	env_release(e);
}

static void on_signal_exit(struct smarm_gs_ctx *sv, const smarm_signal_t *s)
{
	const smarm_gs_desc_t *d = &sv->sv_be->bh_gs;
	if (s->how == SMARM_EXIT_SHUTDOWN) {
		int a = d->handle_shutdown != NULL
				? d->handle_shutdown(sv->sv_state, sv)
				: SMARM_GS_EXIT;
		if (a != SMARM_GS_CONTINUE && !sv->sv_stop) {
			/* It ends on the shutdown: as OTP's {stop, shutdown} */
			sv->sv_stop = true;
			sv->sv_how = SMARM_EXIT_SHUTDOWN;
			sv->sv_reason = 0;
		}
		return;
	}
	if (d->handle_exit != NULL)
		d->handle_exit(sv->sv_state, sv, s);
}

/* ---- timers ---- */

static struct gs_timer *timer_find(struct smarm_gs_ctx *sv, uint64_t id)
{
	for (size_t i = 0; i < sv->sv_ntimers; i++)
		if (sv->sv_timers[i].gt_id == id)
			return &sv->sv_timers[i];
	return NULL;
}

static void timer_remove(struct smarm_gs_ctx *sv, struct gs_timer *t)
{
	smarm__bhv_msg_free(&t->gt_msg);
	*t = sv->sv_timers[--sv->sv_ntimers];
}

int smarm__gs_timer_add(struct smarm_gs_ctx *sv, const struct bhv_op *op,
			struct bhv_msg *blk, uint64_t delay_ns,
			uint64_t period_ns, uint64_t *id)
{
	struct gs_timer *t;
	uint64_t tid;
	int rc;

	if (sv->sv_ctl == NULL) {
		rc = smarm_chan_alloc(&sv->sv_ctl, sizeof(uint64_t), NULL);
		if (rc != 0) {
			sv->sv_ctl = NULL;
			smarm__bhv_msg_free(blk);
			return rc;
		}
	}
	if (sv->sv_ntimers == sv->sv_captimers) {
		size_t cap = sv->sv_captimers ? 2 * sv->sv_captimers : 4;
		struct gs_timer *nt = realloc(sv->sv_timers, cap * sizeof *nt);
		if (nt == NULL) {
			smarm__bhv_msg_free(blk);
			return SMARM_ENOMEM;
		}
		sv->sv_timers = nt;
		sv->sv_captimers = cap;
	}
	tid = ++sv->sv_timer_seq;
	t = &sv->sv_timers[sv->sv_ntimers];
	t->gt_id = tid;
	t->gt_op = op;
	t->gt_msg = *blk;
	t->gt_period = period_ns;
	rc = smarm_chan_send_after(sv->sv_ctl, &tid, delay_ns, &t->gt_tm);
	if (rc != 0) {
		smarm__bhv_msg_free(blk);
		return rc;
	}
	sv->sv_ntimers++;
	if (id != NULL)
		*id = tid;
	return 0;
}

int smarm__gs_timer_cancel(struct smarm_gs_ctx *sv, uint64_t id)
{
	struct gs_timer *t = id != 0 ? timer_find(sv, id) : NULL;
	if (t == NULL)
		return SMARM_ENOENT;
	/* A tick already queued finds no record and is dropped. */
	(void)smarm_timer_cancel(t->gt_tm);
	timer_remove(sv, t);
	return 0;
}

/* A tick of timer id came: re-arm a periodic first, then the info. */
static void on_tick(struct smarm_gs_ctx *sv, uint64_t id)
{
	struct gs_timer *t = timer_find(sv, id);
	struct bhv_env e;

	if (t == NULL)
		return; /* cancelled: its last tick is dropped */
	if (smarm__bhv_msg_copy(&e.en_msg, &t->gt_msg) != 0)
		smarm_actor_crash(SMARM_ENOMEM);
	e.en_be = sv->sv_be;
	e.en_op = t->gt_op;
	e.en_reply = NULL;
	e.en_seq = 0;
	if (t->gt_period == 0)
		timer_remove(sv, t);
	else if (smarm_chan_send_after(sv->sv_ctl, &id, t->gt_period,
				       &t->gt_tm) != 0)
		timer_remove(sv, t); /* could not re-arm: it ends */
	dispatch(sv, &e);
}

struct bhv_env *smarm__gs_inbox_take(struct smarm_gs_ctx *sv)
{
	if (sv->sv_bi == sv->sv_bn) {
		smarm_chan_t *ch;
		size_t n;
		if (smarm__chan_cell(sv->sv_inbox, &ch) != 0 ||
		    smarm__chan_try_recv_n(ch, sv->sv_inbox, sv->sv_batch,
					   BHV_BATCH, &n) != 0)
			return NULL;
		sv->sv_bi = 0;
		sv->sv_bn = (unsigned)n;
	}
	return &sv->sv_batch[sv->sv_bi++];
}

void smarm__gs_batch_drop(struct smarm_gs_ctx *sv)
{
	while (sv->sv_bi < sv->sv_bn)
		smarm__bhv_env_free(&sv->sv_batch[sv->sv_bi++]);
}

/* Wait for and serve one message. */
static void serve_one(struct smarm_gs_ctx *sv)
{
	const smarm_gs_desc_t *d = &sv->sv_be->bh_gs;
	struct bhv_env e, *b;
	smarm_signal_t sig;
	uint64_t tick;
	uint64_t wait = sv->sv_idle_ns ? sv->sv_idle_ns : SMARM_NO_TIMEOUT;
	size_t ready;
	int rc;

	if (sv->sv_exit == NULL && sv->sv_nmon == 0 && sv->sv_ntimers == 0) {
		b = smarm__gs_next(sv, &e, wait, &rc);
		if (b != NULL)
			dispatch(sv, b);
		else if (rc == SMARM_ETIMEDOUT && d->handle_idle != NULL)
			d->handle_idle(sv->sv_state, sv);
		return;
	}
	smarm_selset_clear(sv->sv_set);
	if (sv->sv_exit != NULL)
		smarm_selset_add_chan(sv->sv_set, sv->sv_exit, NULL);
	if (sv->sv_nmon > 0)
		smarm_selset_add_chan(sv->sv_set, sv->sv_down, NULL);
	if (sv->sv_ntimers > 0)
		smarm_selset_add_chan(sv->sv_set, sv->sv_ctl, NULL);
	smarm_selset_add_chan(sv->sv_set, sv->sv_info, NULL);
	smarm_selset_add_chan(sv->sv_set, sv->sv_inbox, NULL);
	/* A batch taken earlier is ready: only look at the bands above. */
	rc = sv->sv_bi < sv->sv_bn
		     ? 0
		     : smarm_selset_wait(sv->sv_set, wait, &ready);
	if (rc == SMARM_ETIMEDOUT) {
		if (d->handle_idle != NULL)
			d->handle_idle(sv->sv_state, sv);
		return;
	}
	if (rc != 0) /* it cannot wait: end, never spin */
		smarm_actor_crash(rc);
	/* Take from the highest band that has something. */
	if (sv->sv_exit != NULL &&
	    smarm_chan_try_recv(sv->sv_exit, &sig) == 0) {
		on_signal_exit(sv, &sig);
	} else if (sv->sv_nmon > 0 &&
		   smarm_chan_try_recv(sv->sv_down, &sig) == 0) {
		sv->sv_nmon--;
		if (d->handle_down != NULL)
			d->handle_down(sv->sv_state, sv, &sig);
	} else if (sv->sv_ntimers > 0 &&
		   smarm_chan_try_recv(sv->sv_ctl, &tick) == 0) {
		on_tick(sv, tick);
	} else if (smarm_chan_try_recv(sv->sv_info, &e) == 0) {
		dispatch(sv, &e);
	} else if ((b = smarm__gs_inbox_take(sv)) != NULL) {
		dispatch(sv, b);
	}
}

void smarm__bhv_terminate(void (*term)(void *arg), void (*fin)(void *arg),
			  void *arg, bool may_block)
{
	struct smarm__slot *me = smarm__current();
	/* A crash in term ends this handler; the exit then runs fin. */
	bool guarded = smarm_cleanup_push(fin, arg) == 0;
	/* It must not block: every park fails (wait.c WAIT-9). */
	if (!may_block)
		smarm__wait_refuse(me, true);
	term(arg);
	if (!may_block)
		smarm__wait_refuse(me, false);
	if (guarded)
		(void)smarm_cleanup_pop(true);
	else
		fin(arg);
}

static void server_fin(void *arg);

static void server_terminate(void *arg)
{
	struct smarm_gs_ctx *sv = arg;
	sv->sv_be->bh_gs.terminate(sv->sv_state, sv->sv_end_how,
				   sv->sv_end_reason, sv->sv_stop);
}

/*
 * The server ends, on any path (the actor's cleanup handler): answer
 * the call in progress, cancel the timers, terminate, then server_fin
 * (also after a crash in terminate, which becomes the exit reason).
 */
static void server_end(void *arg)
{
	struct smarm_gs_ctx *sv = arg;
	const smarm_gs_desc_t *d = &sv->sv_be->bh_gs;
	struct smarm__slot *me = smarm__current();

	sv->sv_end_how = sv->sv_how;
	sv->sv_end_reason = sv->sv_reason;
	if (!sv->sv_stop) { /* a crash, a kill, an untrapped shutdown */
		sv->sv_end_how = me->exit.ex_how;
		sv->sv_end_reason = me->exit.ex_code;
	}
	if (sv->sv_cur != NULL) {
		struct bhv_env *e = sv->sv_cur;
		sv->sv_cur = NULL;
		if (e->en_op->op_kind == BHV_CALL && !sv->sv_deferred)
			smarm__bhv_reply_send(e->en_reply, e->en_seq,
					      SMARM_EDOWN, NULL);
		env_release(e);
	}
	/* Timers go before terminate: none fires after the server. */
	while (sv->sv_ntimers > 0) {
		(void)smarm_timer_cancel(sv->sv_timers[0].gt_tm);
		timer_remove(sv, &sv->sv_timers[0]);
	}
	free(sv->sv_timers);
	if (sv->sv_ctl != NULL) {
		smarm_chan_receiver_free(sv->sv_ctl);
		smarm_chan_sender_free(sv->sv_ctl);
	}
	if (sv->sv_started && d->terminate != NULL)
		smarm__bhv_terminate(server_terminate, server_fin, sv,
				     sv->sv_stop);
	else
		server_fin(sv);
}

/* After terminate: destroy, close the inbox (queued calls get
 * SMARM_EDOWN), end the tokens, free. */
static void server_fin(void *arg)
{
	struct smarm_gs_ctx *sv = arg;
	const smarm_gs_desc_t *d = &sv->sv_be->bh_gs;

	if (sv->sv_created && d->destroy != NULL)
		d->destroy(sv->sv_state);
	smarm_mailbox_unpublish(smarm__gs_inbox_type());
	smarm_mailbox_unpublish(smarm__gs_info_type());
	smarm__gs_batch_drop(sv);
	smarm_chan_receiver_free(sv->sv_inbox);
	smarm_chan_sender_free(sv->sv_inbox);
	smarm_chan_receiver_free(sv->sv_info);
	smarm_chan_sender_free(sv->sv_info);
	if (sv->sv_exit != NULL) {
		smarm_trap_exit(NULL);
		smarm_chan_receiver_free(sv->sv_exit);
		smarm_chan_sender_free(sv->sv_exit);
	}
	if (sv->sv_down != NULL) {
		smarm_chan_receiver_free(sv->sv_down);
		smarm_chan_sender_free(sv->sv_down);
	}
	if (sv->sv_set != NULL)
		smarm_selset_free(sv->sv_set);
	smarm__bhv_tokens_end(sv);
	live_remove(sv);
	smarm__bhv_start_ended(sv);
	smarm__bhv_plugin_unref(sv->sv_be);
	free(sv);
}

void smarm__bhv_start_send(smarm_chan_t *start, int status, intptr_t why)
{
	struct bhv_start m = { status, why };
	(void)smarm_chan_send(start, &m); /* the starter may be gone */
	smarm_chan_sender_free(start);
}

int smarm__bhv_start_fail(smarm_chan_t *start, bool sup, int status)
{
	if (start != NULL)
		smarm__bhv_start_send(start, status, status);
	else if (sup)
		smarm_sup_start_failed(status);
	return status;
}

void smarm__bhv_start_ended(struct smarm_gs_ctx *sv)
{
	if (sv->sv_start == NULL || sv->sv_reported)
		return;
	/* Ended before its start was reported: init crashed, or a kill. */
	if (sv->sv_start_rc != 0)
		smarm__bhv_start_send(sv->sv_start, sv->sv_start_rc,
				      sv->sv_start_why);
	else
		smarm__bhv_start_send(sv->sv_start, SMARM_EDOWN,
				      smarm__current()->exit.ex_code);
	sv->sv_start = NULL;
}

int smarm__bhv_start_status(int rc, intptr_t *why)
{
	*why = rc;
	return rc > 0 ? SMARM_EBADRETURN : rc; /* out of contract */
}

/* Report the start's outcome to whoever waits for it (once). */
void smarm__gs_report(struct smarm_gs_ctx *sv, int rc)
{
	if (sv->sv_reported)
		return;
	sv->sv_reported = true;
	if (sv->sv_start != NULL) {
		smarm__bhv_start_send(sv->sv_start, rc, sv->sv_start_why);
		sv->sv_start = NULL;
	}
	if (sv->sv_sup) {
		if (rc == 0)
			smarm_sup_ready();
		else
			smarm_sup_start_failed(rc);
	}
}

static int chan_pair(smarm_chan_t **inbox, smarm_chan_t **info)
{
	int rc = smarm_chan_alloc(inbox, sizeof(struct bhv_env),
				  smarm__bhv_env_free);
	if (rc != 0)
		return rc;
	rc = smarm_chan_alloc(info, sizeof(struct bhv_env),
			      smarm__bhv_env_free);
	if (rc != 0) {
		smarm_chan_receiver_free(*inbox);
		smarm_chan_sender_free(*inbox);
	}
	return rc;
}

void smarm__bhv_label(const struct smarm_behaviour *b)
{
	char text[SMARM__LABEL_MAX];
	snprintf(text, sizeof text, "%s '%s' of plugin '%s'",
		 b->bh_kind == BHV_GEN_STATEM ? "gen_statem" : "gen_server",
		 b->bh_name, smarm__bhv_plugin_name(b));
	(void)smarm__actor_label_set(smarm__current_node(), smarm__self_pid(),
				     SMARM__LABEL_BEHAVIOUR, text);
}

int smarm__gs_run(const struct smarm_behaviour *be, const char *args,
		  const char *name, smarm_chan_t *start, bool sup)
{
	struct smarm_gs_ctx *sv = calloc(1, sizeof *sv);
	const smarm_gs_desc_t *d = &be->bh_gs;
	unsigned served = 0;
	int rc;

	if (sv == NULL)
		return smarm__bhv_start_fail(start, sup, SMARM_ENOMEM);
	sv->sv_be = be;
	sv->sv_self = smarm_actor_self();
	sv->sv_stats =
		smarm__node_sub(smarm__current_node(), SMARM__SUB_BEHAVIOUR);
	sv->sv_start = start;
	sv->sv_sup = sup;
	smarm__bhv_plugin_ref(be);
	smarm__bhv_label(be);
	rc = chan_pair(&sv->sv_inbox, &sv->sv_info);
	if (rc != 0) {
		smarm__bhv_plugin_unref(be);
		free(sv);
		return smarm__bhv_start_fail(start, sup, rc);
	}
	rc = smarm_cleanup_push(server_end, sv);
	if (rc != 0) {
		/* Nothing ran: undo by hand, as server_end would. */
		sv->sv_reported = true;
		smarm_chan_receiver_free(sv->sv_inbox);
		smarm_chan_sender_free(sv->sv_inbox);
		smarm_chan_receiver_free(sv->sv_info);
		smarm_chan_sender_free(sv->sv_info);
		smarm__bhv_plugin_unref(be);
		free(sv);
		return smarm__bhv_start_fail(start, sup, rc);
	}
	/* From here on server_end cleans up on every path. */
	live_add(sv);
	if (name != NULL && (rc = smarm_register(name, NULL)) != 0)
		goto failed;
	rc = smarm_selset_alloc(&sv->sv_set);
	if (rc != 0)
		goto failed;
	rc = smarm_mailbox_publish(smarm__gs_inbox_type(), sv->sv_inbox);
	if (rc == 0)
		rc = smarm_mailbox_publish(smarm__gs_info_type(), sv->sv_info);
	if (rc != 0)
		goto failed;
	rc = d->create(args, &sv->sv_state);
	if (rc != 0)
		goto failed;
	sv->sv_created = true;
	sv->sv_in_init = true;
	rc = d->init != NULL ? d->init(sv->sv_state, sv) : 0;
	sv->sv_in_init = false;
	if (rc != 0)
		goto failed;
	sv->sv_started = true;
	smarm__gs_report(sv, 0);
	while (!sv->sv_stop) {
		if (sv->sv_cont) {
			sv->sv_cont = false;
			if (d->handle_continue != NULL)
				d->handle_continue(sv->sv_state, sv,
						   sv->sv_tag);
			continue;
		}
		serve_one(sv);
		if ((++served & (BHV_CHECK_EVERY - 1)) == 0)
			smarm_check();
	}
	/* The actor ends as smarm_gs_stop said (server_end runs
	 * terminate): monitors, links and a supervisor see that how. */
	if (sv->sv_how == SMARM_EXIT_CRASHED)
		smarm_actor_crash(sv->sv_reason);
	if (sv->sv_how == SMARM_EXIT_SHUTDOWN) /* OTP's {shutdown, X} */
		smarm__self_exit(SMARM_EXIT_SHUTDOWN, sv->sv_reason);
	smarm_actor_exit();
	return 0;
failed:
	rc = smarm__bhv_start_status(rc, &sv->sv_start_why);
	sv->sv_start_rc = rc;
	smarm__gs_report(sv, rc);
	sv->sv_stop = true; /* terminate does not run (not started) */
	smarm_actor_exit();
	return rc;
}
