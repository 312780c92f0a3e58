/* SPDX-License-Identifier: MIT */
/*
 * gen_statem.c - the gen_statem engine: a machine actor holding a
 * behaviour's data and feeding the interpreter (statem.c) one event at
 * a time, the hooks through which the interpreter reaches messages,
 * timers and libffi, and the per-behaviour engine data (the dispatch
 * tables and each operation's guard and action call interfaces, built
 * by its first machine, kept in bh_engine until the plugin unloads). A
 * machine runs gen_server's engine loop, mailbox and end with this
 * file's dispatch (sm_engine): docs/architecture/behaviours.md,
 * Machines. Between events the interpreter is idle and no frame of a
 * callback is on the stack, so a hibernated machine re-enters the loop.
 *
 * Ownership: a machine (struct sm) is malloc'd by its actor and freed by
 * the engine's end (its en_end: sm_end); it holds one plugin
 * reference (its events none: INV-3 of gen_server.c).
 * Locking: none: a machine is touched only by its own actor; the engine
 * data is published once with a compare-and-swap, constant after.
 * Invariants:
 *   INV-1 every call received is answered exactly once: by its action
 *         (smarm_sm_reply), by a token, by sh_drop when the interpreter
 *         is done with it (no value for a call without a reply type,
 *         else SMARM_EDOWN), or with SMARM_EDOWN when the machine ends.
 *   INV-2 terminate runs once, after init succeeded, once every timer
 *         is cancelled and every queued event dropped; destroy once
 *         after create succeeded.
 * See: docs/plugins.md (gen_statem), docs/architecture/behaviours.md.
 */
#include "gen_server.h"
#include "statem.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A behaviour's engine data (bh_engine). */
struct sm_engine {
	struct smarm__sm_tables *en_t; /* dispatch tables */
	struct bhv_cif *en_guard;      /* per op: guard's interface */
	struct bhv_cif *en_action;     /* per op: action's interface */
};

/* A running machine. Only its actor touches it. */
struct sm {
	struct smarm_sm_ctx sm_m;      /* the interpreter's (the cx) */
	struct smarm_gs_ctx sm_gs;     /* its mailbox (gen_server.c) */
	const struct sm_engine *sm_en; /* its engine data */
	bool sm_inited;		       /* smarm__sm_init ran */
	bool sm_ending;		       /* sm_end runs: drops are BHV_ANS_END */
};

/* ---- engine data ---- */

static void sm_engine_free(void *p)
{
	struct sm_engine *en = p;
	if (en == NULL)
		return;
	smarm__sm_tables_free(en->en_t);
	free(en->en_guard);
	free(en->en_action);
	free(en);
}

static int sm_engine_build(const struct smarm_behaviour *be,
			   struct sm_engine **out)
{
	static ffi_type *guard_lead[1] = { &ffi_type_pointer };
	static ffi_type *action_lead[3] = { &ffi_type_pointer,
					    &ffi_type_pointer,
					    &ffi_type_sint32 };
	const struct bhv_proto *p = &be->bh_proto;
	struct smarm__sm_op ops[SMARM_OPS_MAX];
	struct sm_engine *en = calloc(1, sizeof *en);
	int rc = SMARM_ENOMEM;

	if (en == NULL)
		return SMARM_ENOMEM;
	en->en_guard = calloc(p->pr_n + 1, sizeof *en->en_guard);
	en->en_action = calloc(p->pr_n + 1, sizeof *en->en_action);
	if (en->en_guard == NULL || en->en_action == NULL ||
	    (rc = smarm__sm_ops_of(p, ops)) != 0)
		goto err_free;
	for (size_t i = 0; i < p->pr_n; i++) {
		const struct bhv_op *op = &p->pr_ops[i];
		rc = smarm__bhv_cif_prep(&en->en_guard[i], op, guard_lead, 1,
					 &ffi_type_uint8);
		if (rc == 0)
			rc = smarm__bhv_cif_prep(&en->en_action[i], op,
						 action_lead, 3,
						 &ffi_type_sint32);
		if (rc != 0)
			goto err_free;
	}
	rc = smarm__sm_tables_build(be->bh_sm, ops, p->pr_n, &en->en_t);
	if (rc != 0)
		goto err_free;
	*out = en;
	return 0;
err_free:
	sm_engine_free(en);
	return rc;
}

/* The engine data of be, built by its first machine (published once). */
static int sm_engine_of(const struct smarm_behaviour *be,
			const struct sm_engine **out)
{
	struct smarm_behaviour *mb = (struct smarm_behaviour *)be;
	struct sm_engine *en =
		__atomic_load_n(&mb->bh_engine, __ATOMIC_ACQUIRE);
	void *expect = NULL;
	int rc;

	if (en == NULL) {
		rc = sm_engine_build(be, &en);
		if (rc != 0)
			return rc;
		__atomic_store_n(&mb->bh_engine_free, sm_engine_free,
				 __ATOMIC_RELAXED);
		if (!__atomic_compare_exchange_n(&mb->bh_engine, &expect, en,
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			sm_engine_free(en); /* another machine was first */
			en = expect;
		}
	}
	*out = en;
	return 0;
}

/* ---- hooks ---- */

static struct sm *sm_of(smarm_sm_ctx_t *m)
{
	return (struct sm *)((char *)m - offsetof(struct sm, sm_m));
}

static const struct bhv_op *ev_op(const struct sm *s,
				  const struct smarm__sm_ev *ev)
{
	if (ev->ev_kind < BHV_CAST || ev->ev_kind > BHV_INFO)
		return NULL;
	return &s->sm_gs.sv_be->bh_proto.pr_ops[ev->ev_op];
}

static bool h_guard(smarm_sm_ctx_t *m, void (*fn)(void),
		    const struct smarm__sm_ev *ev)
{
	struct sm *s = sm_of(m);
	const struct bhv_op *op = ev_op(s, ev);
	struct bhv_unpacked u;
	union bhv_ret r;

	if (ev->ev_kind == SMARM_SM_EXIT)
		return ((bool (*)(const void *, const smarm_signal_t *))fn)(
			m->m_data, &ev->ev_sig);
	if (op == NULL || op->op_nargs == 0)
		return ((bool (*)(const void *))fn)(m->m_data);
	smarm__bhv_unpack(op, bhv_msg_block(&ev->ev_args), 1, &u);
	u.ua_av[0] = &m->m_data;
	smarm__bhv_invoke(&s->sm_en->en_guard[ev->ev_op], fn, &u, &r);
	return (uint8_t)r.a != 0;
}

static int32_t h_action(smarm_sm_ctx_t *m, void (*fn)(void),
			struct smarm__sm_ev *ev)
{
	struct sm *s = sm_of(m);
	const struct bhv_op *op = ev_op(s, ev);
	struct bhv_unpacked u;
	union bhv_ret r;
	void *cx = m;

	if (ev->ev_kind == SMARM_SM_EXIT)
		return ((int32_t(*)(void *, smarm_sm_ctx_t *, int32_t,
				    const smarm_signal_t *))fn)(
			m->m_data, m, m->m_state, &ev->ev_sig);
	if (op == NULL || op->op_nargs == 0)
		return ((int32_t(*)(void *, smarm_sm_ctx_t *, int32_t))fn)(
			m->m_data, m, m->m_state);
	smarm__bhv_unpack(op, bhv_msg_block(&ev->ev_args), 3, &u);
	u.ua_av[0] = &m->m_data;
	u.ua_av[1] = &cx;
	u.ua_av[2] = &m->m_state;
	smarm__bhv_invoke(&s->sm_en->en_action[ev->ev_op], fn, &u, &r);
	return (int32_t)r.s;
}

static void h_drop(smarm_sm_ctx_t *m, struct smarm__sm_ev *ev, int status)
{
	const struct bhv_op *op;

	if (ev->ev_call != NULL && (op = ev_op(sm_of(m), ev)) != NULL) {
		/* INV-1: a call without a reply type is answered with
		 * nothing once handled; any other unanswered is EDOWN. */
		int st = status != 0 || op->op_reply != SMARM_T_VOID
				 ? SMARM_EDOWN
				 : 0;
		smarm_chan_t *call = ev->ev_call;
		/* Cleared first: an answer given is never given again. */
		ev->ev_call = NULL;
		smarm__bhv_reply_send(call, ev->ev_seq, st, NULL,
				      sm_of(m)->sm_ending ? BHV_ANS_END
							  : BHV_ANS_ANY);
	}
	if (ev->ev_kind != SMARM_SM_EXIT) /* an exit's event has no block */
		smarm__bhv_msg_free(&ev->ev_args);
}

static int h_timer(smarm_sm_ctx_t *m, int which, uint64_t ns, uint64_t gen,
		   smarm_timer_t *t)
{
	struct sm *s = sm_of(m);
	struct bhv_tick tk = { .tk_which = which, .tk_gen = gen };
	int rc = smarm__gs_tick_band(&s->sm_gs);
	return rc != 0 ? rc
		       : smarm_chan_send_after(s->sm_gs.sv_tick, &tk, ns, t);
}

static void h_cancel(smarm_sm_ctx_t *m, smarm_timer_t t)
{
	(void)m;
	smarm_timer_cancel(t); /* SMARM_ENOENT: fired; stale by gen */
}

static int h_trap(smarm_sm_ctx_t *m)
{
	return smarm__gs_trap(&sm_of(m)->sm_gs);
}

static int h_next(smarm_sm_ctx_t *m, const char *name,
		  const smarm_value_t *args, size_t nargs,
		  struct smarm__sm_ev *ev)
{
	struct sm *s = sm_of(m);
	const struct bhv_op *op =
		smarm__bhv_proto_find(&s->sm_gs.sv_be->bh_proto, name, 0);
	struct bhv_msg blk;
	int rc;

	if (op == NULL || op->op_kind == BHV_CALL)
		return SMARM_ENOOP;
	rc = smarm__bhv_pack(op, args, nargs, &blk);
	if (rc != 0)
		return rc;
	memset(ev, 0, sizeof *ev);
	ev->ev_kind = op->op_kind;
	ev->ev_op = op->op_index;
	ev->ev_args = blk;
	return 0;
}

static int h_reply(smarm_sm_ctx_t *m, struct smarm__sm_ev *ev,
		   const smarm_value_t *v)
{
	const struct bhv_op *op = ev_op(sm_of(m), ev);
	smarm_value_t out;
	int rc = smarm__bhv_value_copy(op->op_reply, bhv_reply_tuple(op), v,
				       &out);

	if (rc != 0)
		return rc == SMARM_ENOMEM ? rc : SMARM_EARGS;
	smarm_chan_t *call = ev->ev_call;
	/* Cleared first: a machine stopped inside the send (a routed
	 * answer's write may park) must not answer it again at its end.
	 * ANY: plugin code runs the action and may hold its own locks, so
	 * the answer must not park here. */
	ev->ev_call = NULL;
	smarm__bhv_reply_send(call, ev->ev_seq, 0, &out, BHV_ANS_ANY);
	return 0;
}

/* An error reply (smarm_sm_reply_error): SMARM_EREPLY with reason. */
static void h_reply_error(smarm_sm_ctx_t *m, struct smarm__sm_ev *ev,
			  intptr_t reason)
{
	smarm_value_t v = { .type = SMARM_T_I64, .v.i = reason };
	smarm_chan_t *call = ev->ev_call;
	(void)m;
	ev->ev_call = NULL; /* as h_reply */
	smarm__bhv_reply_send(call, ev->ev_seq, SMARM_EREPLY, &v, BHV_ANS_ANY);
}

static int h_token(smarm_sm_ctx_t *m, struct smarm__sm_ev *ev,
		   smarm_reply_t **tok)
{
	struct sm *s = sm_of(m);
	int rc = smarm__bhv_token_new(&s->sm_gs, ev_op(s, ev), ev->ev_call,
				      ev->ev_seq, tok);
	if (rc == 0)
		ev->ev_call = NULL;
	return rc;
}

static int h_queue_limit(smarm_sm_ctx_t *m, uint32_t limit)
{
	return smarm__chan_set_limit(sm_of(m)->sm_gs.sv_inbox, limit);
}

static int h_behaviour(smarm_sm_ctx_t *m, const char *name,
		       const smarm_behaviour_t **out)
{
	return smarm__bhv_sibling(sm_of(m)->sm_gs.sv_be, name, out);
}

/* smarm_sm_hibernate, smarm_sm_set_hibernate_after: the engine loop
 * hibernates the machine between events. */
static int h_hibernate(smarm_sm_ctx_t *m, bool now, uint64_t after_ns)
{
	struct smarm_gs_ctx *sv = &sm_of(m)->sm_gs;
	if (!now)
		return smarm__bhv_hibernate_after(sv, after_ns);
	sv->sv_hib = true;
	return 0;
}

static const struct smarm__sm_hooks sm_hooks = {
	.sh_guard = h_guard,
	.sh_action = h_action,
	.sh_drop = h_drop,
	.sh_timer = h_timer,
	.sh_cancel = h_cancel,
	.sh_trap = h_trap,
	.sh_next = h_next,
	.sh_reply = h_reply,
	.sh_reply_error = h_reply_error,
	.sh_queue_limit = h_queue_limit,
	.sh_token = h_token,
	.sh_behaviour = h_behaviour,
	.sh_hibernate = h_hibernate,
};

/* ---- the dispatch ---- */

static struct sm *sm_of_gs(struct smarm_gs_ctx *sv)
{
	return (struct sm *)((char *)sv - offsetof(struct sm, sm_gs));
}

/*
 * The interpreter stopped the machine: a bad state (m_crash) crashes the
 * actor now, any other stop stops its server half, which ends the engine
 * loop and gives terminate its how; a SHUTDOWN it handled ends it so
 * (OTP's).
 */
static void sm_stopped(struct sm *s, bool shutdown)
{
	const smarm_sm_ctx_t *m = &s->sm_m;
	if (m->m_crash)
		smarm_actor_crash(SMARM_EINTERNAL); /* its end terminates */
	if (m->m_stop)
		smarm__gs_stop(&s->sm_gs,
			       shutdown ? SMARM_EXIT_SHUTDOWN : m->m_stop_how,
			       shutdown ? 0 : m->m_stop_reason);
}

static void sm_envelope(struct smarm_gs_ctx *sv, struct bhv_env *e)
{
	struct sm *s = sm_of_gs(sv);
	const struct bhv_op *op = e->en_op;
	struct smarm__sm_ev ev;

	ev.ev_kind = op->op_kind;
	ev.ev_op = op->op_index;
	ev.ev_args = e->en_msg;	  /* its block passes */
	ev.ev_call = e->en_reply; /* a call's (casts and infos: NULL) */
	ev.ev_seq = e->en_seq;
	if (smarm__sm_step(&s->sm_m, &ev))
		sm_stopped(s, false);
}

/* The name of machine d's state st, or NULL (none, or out of range). */
static const char *sm_state_name(const smarm_sm_desc_t *d, int32_t st)
{
	return d->state_names != NULL && st >= 0 && (uint32_t)st < d->n_states
		       ? d->state_names[st]
		       : NULL;
}

static int sm_status(struct smarm_gs_ctx *sv, smarm_server_status_t *st)
{
	const smarm_sm_ctx_t *m = &sm_of_gs(sv)->sm_m;
	st->kind = SMARM_SERVER_GEN_STATEM;
	st->timers = (uint32_t)m->m_narmed;
	st->state = m->m_state;
	st->state_name = sm_state_name(m->m_d, m->m_state);
	st->postponed = smarm__ring_len(&m->m_post);
	if (m->m_d->format_status == NULL) /* OTP's format_status */
		return 0;
	return m->m_d->format_status(m->m_data, m->m_state, st->state_text,
				     sizeof st->state_text);
}

static void sm_signal(struct smarm_gs_ctx *sv, const smarm_signal_t *sig)
{
	struct sm *s = sm_of_gs(sv);
	struct smarm__sm_ev ev;

	memset(&ev, 0, sizeof ev);
	ev.ev_op = -1;
	if (sig->how == SMARM_EXIT_SHUTDOWN) {
		ev.ev_kind = SMARM_SM_SHUTDOWN;
	} else {
		ev.ev_kind = SMARM_SM_EXIT;
		ev.ev_sig = *sig;
	}
	if (smarm__sm_step(&s->sm_m, &ev))
		sm_stopped(s, ev.ev_kind == SMARM_SM_SHUTDOWN);
}

/* A timer fired; an event timeout only if no request waits. */
static void sm_tick(struct smarm_gs_ctx *sv, const struct bhv_tick *tk)
{
	struct sm *s = sm_of_gs(sv);
	bool pending =
		tk->tk_which == SMARM__SM_TM_EVENT && smarm__gs_pending(sv);
	if (smarm__sm_fire(&s->sm_m, tk->tk_which, tk->tk_gen, pending))
		sm_stopped(s, false);
}

/*
 * The machine's en_end: the stop it was making when it ended (a kill
 * inside an action), the end report with its state and event, then the
 * event in progress and every queued or postponed event go and the
 * timers are cancelled, before terminate (INV-2).
 */
static void sm_end(struct smarm_gs_ctx *sv)
{
	struct sm *s = sm_of_gs(sv);
	smarm_sm_ctx_t *m = &s->sm_m;
	const struct smarm__sm_ev *ev = s->sm_inited ? m->m_cur : NULL;
	const struct bhv_op *op = ev != NULL ? ev_op(s, ev) : NULL;
	const char *sn = NULL;
	char state[32];

	if (!m->m_crash)
		sm_stopped(s, false);
	s->sm_ending = true;
	smarm__bhv_end_how(sv);
	if (s->sm_inited) {
		sn = sm_state_name(m->m_d, m->m_state);
		if (sn == NULL) {
			snprintf(state, sizeof state, "%d", (int)m->m_state);
			sn = state;
		}
	}
	smarm__bhv_report_end("machine", sn, sv->sv_how, sv->sv_reason,
			      ev != NULL ? ev->ev_kind : 0,
			      op != NULL   ? op->op_name
			      : ev != NULL ? "(timeout or signal)"
					   : NULL);
	if (s->sm_inited) {
		if (m->m_cur != NULL) {
			/* The action crashed or was stopped. */
			h_drop(m, m->m_cur, SMARM_EDOWN);
			m->m_cur = NULL;
		}
		smarm__sm_fini(m);
	}
}

static const struct bhv_engine sm_engine = {
	.en_signal = sm_signal,
	.en_tick = sm_tick,
	.en_env = sm_envelope,
	.en_status = sm_status,
	.en_end = sm_end,
	.en_off = offsetof(struct sm, sm_gs),
};

int smarm__sm_run(const struct smarm_behaviour *be, const char *args,
		  const char *name, smarm_chan_t *start, bool sup,
		  const struct bhv_spent *spent)
{
	const smarm_sm_desc_t *d = be->bh_sm;
	const struct sm_engine *en = NULL;
	struct sm *s;
	int rc;

	rc = sm_engine_of(be, &en);
	if (rc != 0)
		return smarm__bhv_start_fail(start, sup, rc);
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return smarm__bhv_start_fail(start, sup, SMARM_ENOMEM);
	s->sm_en = en;
	rc = smarm__bhv_open(&s->sm_gs, be, &sm_engine, args, name, start, sup,
			     spent, s, &s->sm_m, BHV_SELF_MACHINE);
	if (rc != 0)
		return rc;
	s->sm_gs.sv_armed = &s->sm_m.m_narmed;
	rc = smarm__sm_init(&s->sm_m, d, en->en_t, &sm_hooks,
			    s->sm_gs.sv_state);
	if (rc != 0)
		return smarm__bhv_start_failed(&s->sm_gs, NULL, rc);
	s->sm_inited = true;
	if (d->init != NULL) {
		s->sm_m.m_phase = SMARM__SM_INIT;
		rc = d->init(s->sm_m.m_data, &s->sm_m);
		s->sm_m.m_phase = SMARM__SM_IDLE;
		if (rc != 0)
			return smarm__bhv_start_failed(&s->sm_gs, "init", rc);
	}
	smarm__bhv_started(&s->sm_gs);
	smarm__sm_start(&s->sm_m);
	sm_stopped(s, false);
	smarm__bhv_loop(&s->sm_gs);
}

const struct smarm_gs_ctx *smarm__sm_peek(const void *cx, const char **state)
{
	const struct sm *s = (const struct sm *)((const char *)cx -
						 offsetof(struct sm, sm_m));
	*state = sm_state_name(
		s->sm_gs.sv_be->bh_sm,
		__atomic_load_n(&s->sm_m.m_state, __ATOMIC_RELAXED));
	return &s->sm_gs;
}
