/* SPDX-License-Identifier: MIT */
/*
 * statem_api.c - the smarm_sm_* context calls of abi/smarm/smarm_plugin.h
 * ("Inside a gen_statem"): they validate the context and the phase the
 * machine is in, then act through the interpreter (statem.c) and its
 * loop's hooks.
 *
 * Ownership: nothing here allocates; arguments are the caller's.
 * Locking: none: a context is touched only by its machine's actor.
 * Invariants:
 *   INV-1 every call checks, in order: cx not NULL (SMARM_EINVAL); the
 *         caller is an actor (SMARM_ENOTACTOR); cx is a live machine of
 *         this actor (SMARM_EINVAL); a callback of it runs
 *         (SMARM_ESTATE). Only then does it touch the machine.
 * See: docs/plugins.md (gen_statem).
 */
#include "statem.h"

#include <string.h>

/* INV-1; phases: a mask of 1 << SMARM__SM_* allowed. */
static int sm_cx(smarm_sm_ctx_t *cx, unsigned phases)
{
	smarm_pid_t self;

	if (cx == NULL)
		return SMARM_EINVAL;
	self = smarm_actor_self();
	if (smarm_pid_eq(self, SMARM_PID_NONE))
		return SMARM_ENOTACTOR;
	if (!smarm__bhv_self_is(cx, BHV_SELF_MACHINE))
		return SMARM_EINVAL;
	if (!(phases & (1u << cx->m_phase)))
		return SMARM_ESTATE;
	return 0;
}

#define SM_CB                                                                  \
	((1u << SMARM__SM_INIT) | (1u << SMARM__SM_ENTER) |                    \
	 (1u << SMARM__SM_ACTION))

/* INV-1, then the timer of timeout name into *which: SMARM_EINVAL
 * (NULL), SMARM_ENOENT (not declared). */
static int sm_named(smarm_sm_ctx_t *cx, const char *name, int *which)
{
	int rc = sm_cx(cx, SM_CB);
	if (rc != 0)
		return rc;
	if (name == NULL)
		return SMARM_EINVAL;
	for (size_t i = 0; i < cx->m_d->n_timeouts; i++) {
		if (strcmp(cx->m_d->timeouts[i], name) == 0) {
			*which = SMARM__SM_TM_NAMED + (int)i;
			return 0;
		}
	}
	return SMARM_ENOENT;
}

SMARM_API int smarm_sm_trap_exit(smarm_sm_ctx_t *cx)
{
	int rc = sm_cx(cx, SM_CB);
	if (rc != 0)
		return rc;
	if (cx->m_phase != SMARM__SM_INIT)
		return SMARM_ESTATE;
	if (cx->m_trap)
		return 0;
	rc = cx->m_h->sh_trap(cx);
	if (rc == 0)
		cx->m_trap = true;
	return rc;
}

/*
 * Arm (or with SMARM_NO_TIMEOUT cancel) timer which, after INV-1; flag
 * (0: none) is the descriptor's flag that lets the machine arm it.
 */
static int sm_set(smarm_sm_ctx_t *cx, unsigned flag, int which, uint64_t ns)
{
	int rc = sm_cx(cx, SM_CB);
	if (rc != 0)
		return rc;
	if (flag != 0 && !(cx->m_d->flags & flag))
		return SMARM_ESTATE;
	if (ns == SMARM_NO_TIMEOUT) {
		smarm__sm_disarm(cx, which);
		return 0;
	}
	return smarm__sm_arm(cx, which, ns);
}

SMARM_API int smarm_sm_state_timeout(smarm_sm_ctx_t *cx, uint64_t ns)
{
	return sm_set(cx, SMARM_SM_F_STATE_TIMEOUT, SMARM__SM_TM_STATE, ns);
}

SMARM_API int smarm_sm_event_timeout(smarm_sm_ctx_t *cx, uint64_t ns)
{
	return sm_set(cx, SMARM_SM_F_EVENT_TIMEOUT, SMARM__SM_TM_EVENT, ns);
}

SMARM_API int smarm_sm_timeout(smarm_sm_ctx_t *cx, const char *name,
			       uint64_t ns)
{
	int which;
	int rc = sm_named(cx, name, &which);
	return rc != 0 ? rc : sm_set(cx, 0, which, ns);
}

SMARM_API int smarm_sm_cancel_timeout(smarm_sm_ctx_t *cx, const char *name)
{
	int which;
	int rc = sm_named(cx, name, &which);
	return rc != 0 ? rc : smarm__sm_disarm(cx, which);
}

SMARM_API int smarm_sm_next_event(smarm_sm_ctx_t *cx, const char *op,
				  const smarm_value_t *args, size_t nargs)
{
	struct smarm__sm_ev ev = { 0 };
	int rc = sm_cx(cx, (1u << SMARM__SM_INIT) | (1u << SMARM__SM_ACTION));
	if (rc != 0)
		return rc;
	if (op == NULL || (args == NULL && nargs > 0))
		return SMARM_EINVAL;
	rc = cx->m_h->sh_next(cx, op, args, nargs, &ev);
	if (rc != 0)
		return rc;
	rc = smarm__sm_push_next(cx, &ev);
	if (rc != 0)
		cx->m_h->sh_drop(cx, &ev, SMARM_EDOWN);
	return rc;
}

/* INV-1, then the call the running action handles into *ev (none:
 * SMARM_ESTATE). */
static int sm_call(smarm_sm_ctx_t *cx, struct smarm__sm_ev **ev)
{
	int rc = sm_cx(cx, SM_CB);
	if (rc != 0)
		return rc;
	*ev = cx->m_cur;
	if (cx->m_phase != SMARM__SM_ACTION || *ev == NULL ||
	    (*ev)->ev_kind != SMARM_SM_CALL || (*ev)->ev_call == NULL)
		return SMARM_ESTATE;
	return 0;
}

SMARM_API int smarm_sm_reply(smarm_sm_ctx_t *cx, const smarm_value_t *v)
{
	struct smarm__sm_ev *ev;
	int rc = sm_call(cx, &ev);
	return rc != 0 ? rc : cx->m_h->sh_reply(cx, ev, v);
}

SMARM_API int smarm_sm_reply_error(smarm_sm_ctx_t *cx, intptr_t reason)
{
	struct smarm__sm_ev *ev;
	int rc = sm_call(cx, &ev);
	if (rc != 0)
		return rc;
	if (cx->m_h->sh_reply_error == NULL)
		return SMARM_ESTATE;
	cx->m_h->sh_reply_error(cx, ev, reason);
	return 0;
}

SMARM_API int smarm_sm_repeat_state(smarm_sm_ctx_t *cx)
{
	int rc = sm_cx(cx, 1u << SMARM__SM_ENTER);
	if (rc != 0)
		return rc;
	cx->m_reenter = true;
	return 0;
}

SMARM_API int smarm_sm_set_queue_limit(smarm_sm_ctx_t *cx, uint32_t limit)
{
	int rc = sm_cx(cx, SM_CB);
	if (rc != 0)
		return rc;
	if (cx->m_h->sh_queue_limit == NULL)
		return SMARM_ESTATE;
	return cx->m_h->sh_queue_limit(cx, limit);
}

/* Both hibernate calls: now, or else after ns idle (sh_hibernate). */
static int sm_hibernate(smarm_sm_ctx_t *cx, bool now, uint64_t ns)
{
	int rc = sm_cx(cx, SM_CB);
	if (rc != 0)
		return rc;
	if (cx->m_h->sh_hibernate == NULL)
		return SMARM_ESTATE;
	return cx->m_h->sh_hibernate(cx, now, ns);
}

SMARM_API int smarm_sm_hibernate(smarm_sm_ctx_t *cx)
{
	return sm_hibernate(cx, true, 0);
}

SMARM_API int smarm_sm_set_hibernate_after(smarm_sm_ctx_t *cx, uint64_t ns)
{
	return sm_hibernate(cx, false, ns);
}

SMARM_API int smarm_sm_reply_later(smarm_sm_ctx_t *cx, smarm_reply_t **tok)
{
	struct smarm__sm_ev *ev;
	int rc = sm_cx(cx, SM_CB);
	if (rc != 0)
		return rc;
	if (tok == NULL)
		return SMARM_EINVAL;
	rc = sm_call(cx, &ev);
	return rc != 0 ? rc : cx->m_h->sh_token(cx, ev, tok);
}

SMARM_API int smarm_sm_stop_with(smarm_sm_ctx_t *cx, int how, intptr_t reason)
{
	int rc = sm_cx(cx, SM_CB);
	if (rc != 0)
		return rc;
	if (!bhv_stop_how_ok(how))
		return SMARM_EINVAL;
	if (!cx->m_stop) { /* the first stop of a callback wins */
		cx->m_stop_how = how;
		cx->m_stop_reason = reason;
	}
	cx->m_stop = true;
	return 0;
}

/* How and reason are 0 (NORMAL) until the first stop sets them. */
SMARM_API int smarm_sm_stop(smarm_sm_ctx_t *cx)
{
	return smarm_sm_stop_with(cx, SMARM_EXIT_NORMAL, 0);
}

SMARM_API int smarm_sm_behaviour(smarm_sm_ctx_t *cx, const char *name,
				 const smarm_behaviour_t **out)
{
	int rc = sm_cx(cx, SM_CB);
	if (rc != 0)
		return rc;
	if (out == NULL)
		return SMARM_EINVAL;
	return cx->m_h->sh_behaviour(cx, name, out);
}
