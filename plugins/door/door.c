/* SPDX-License-Identifier: MIT */
/*
 * door.c - the door-lock gen_statem plugin (door.so): states Closed,
 * Open and Locked; casts push, pull, lock, unlock(u32 key) and knock;
 * calls get_state and knocks (answered in any state) and when_unlocked
 * (answered at once unless Locked, else later, from the state unlock
 * leads to).
 * A knock while Locked is postponed and replayed after the unlock. With
 * a relock time (start arguments "code=K relock_ms=M"), a door left
 * Closed for M ms locks itself again (a state timeout, cancelled by any
 * transition out of Closed). Its status text (format_status) names the
 * state, the knocks heard and the callers waiting for an unlock.
 *
 * Ownership: the data (struct door) is created by door_create and freed
 * by door_destroy; a reply token taken in Locked is the data's until
 * unlock answers it or terminate drops it.
 * Locking: none: the data is touched only by its machine's actor.
 * Invariants: INV-1 d_waiting holds tokens only while the state is
 * Locked.
 */
#include <smarm/smarm_plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CLOSED, OPEN, LOCKED, NSTATES };

#define WAIT_MAX 16

struct door {
	uint32_t d_code;      /* the key unlock wants */
	uint64_t d_relock_ns; /* Closed -> Locked after; 0 never */
	uint64_t d_knocks;    /* knocks heard */
	smarm_reply_t *d_waiting[WAIT_MAX]; /* when_unlocked tokens */
	size_t d_nwaiting;		    /* count of d_waiting */
};

static int door_create(const char *args, void **data)
{
	struct door *d = calloc(1, sizeof *d);
	unsigned long code = 0;
	unsigned long ms = 0;

	if (d == NULL)
		return SMARM_ENOMEM;
	if (args != NULL) {
		const char *c = strstr(args, "code=");
		const char *r = strstr(args, "relock_ms=");
		if (c != NULL)
			code = strtoul(c + 5, NULL, 10);
		if (r != NULL)
			ms = strtoul(r + 10, NULL, 10);
	}
	d->d_code = (uint32_t)code;
	d->d_relock_ns = (uint64_t)ms * 1000000u;
	*data = d;
	return 0;
}

static void door_destroy(void *data)
{
	free(data);
}

static void door_terminate(void *data, int how, intptr_t reason, bool may_block)
{
	struct door *d = data;
	(void)how;
	(void)reason;
	(void)may_block;
	for (size_t i = 0; i < d->d_nwaiting; i++)
		smarm_reply_drop(d->d_waiting[i]);
	d->d_nwaiting = 0;
}

static void enter_closed(void *data, smarm_sm_ctx_t *cx, int32_t state,
			 int32_t prev)
{
	struct door *d = data;
	(void)state;
	(void)prev;
	if (d->d_relock_ns > 0)
		smarm_sm_state_timeout(cx, d->d_relock_ns);
}

static int32_t a_knock(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	struct door *d = data;
	(void)cx;
	d->d_knocks++;
	return state;
}

/* unlock(key): the right key opens the lock and answers the waiters. */
static int32_t a_unlock(void *data, smarm_sm_ctx_t *cx, int32_t state,
			uint32_t key)
{
	struct door *d = data;
	smarm_value_t v = { .type = SMARM_T_I32, .v.i = CLOSED };
	(void)cx;
	(void)state;
	if (key != d->d_code)
		return LOCKED;
	for (size_t i = 0; i < d->d_nwaiting; i++)
		smarm_reply(d->d_waiting[i], &v);
	d->d_nwaiting = 0;
	return CLOSED;
}

static int32_t a_knocks(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	struct door *d = data;
	smarm_value_t v = { .type = SMARM_T_U64, .v.u = d->d_knocks };
	smarm_sm_reply(cx, &v);
	return state;
}

static int32_t a_get_state(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	smarm_value_t v = { .type = SMARM_T_I32, .v.i = state };
	(void)data;
	smarm_sm_reply(cx, &v);
	return state;
}

/* when_unlocked in Locked: answered by a_unlock; more waiters than
 * WAIT_MAX are refused (SMARM_EDOWN at the caller). */
static int32_t a_wait(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	struct door *d = data;
	if (d->d_nwaiting < WAIT_MAX &&
	    smarm_sm_reply_later(cx, &d->d_waiting[d->d_nwaiting]) == 0)
		d->d_nwaiting++;
	return state;
}

#define A(f) ((void (*)(void))(f))
#define ANY SMARM_SM_ANY

static const smarm_sm_row_t door_rows[] = {
	{ LOCKED, SMARM_SM_CAST, "knock", NULL, NULL, SMARM_SM_POSTPONE, 0 },
	{ CLOSED, SMARM_SM_CAST, "push", NULL, NULL, SMARM_SM_TO, OPEN },
	{ OPEN, SMARM_SM_CAST, "pull", NULL, NULL, SMARM_SM_TO, CLOSED },
	{ CLOSED, SMARM_SM_CAST, "lock", NULL, NULL, SMARM_SM_TO, LOCKED },
	{ LOCKED, SMARM_SM_CAST, "unlock", NULL, A(a_unlock), SMARM_SM_DYNAMIC,
	  0 },
	{ ANY, SMARM_SM_CAST, "knock", NULL, A(a_knock), SMARM_SM_STAY, 0 },
	{ ANY, SMARM_SM_CAST, NULL, NULL, NULL, SMARM_SM_UNHANDLED, 0 },
	{ ANY, SMARM_SM_CALL, "get_state", NULL, A(a_get_state), SMARM_SM_STAY,
	  0 },
	{ LOCKED, SMARM_SM_CALL, "when_unlocked", NULL, A(a_wait),
	  SMARM_SM_STAY, 0 },
	{ ANY, SMARM_SM_CALL, "when_unlocked", NULL, A(a_get_state),
	  SMARM_SM_STAY, 0 },
	{ ANY, SMARM_SM_CALL, "knocks", NULL, A(a_knocks), SMARM_SM_STAY, 0 },
	{ CLOSED, SMARM_SM_STATE_TIMEOUT, NULL, NULL, NULL, SMARM_SM_TO,
	  LOCKED },
	{ ANY, SMARM_SM_STATE_TIMEOUT, NULL, NULL, NULL, SMARM_SM_STAY, 0 },
};

static const char *const door_states[NSTATES] = { "Closed", "Open", "Locked" };

static void (*const door_enter[NSTATES])(void *, smarm_sm_ctx_t *, int32_t,
					 int32_t) = { enter_closed, NULL,
						      NULL };

static int door_status(const void *data, int32_t state, char *buf, size_t len)
{
	const struct door *d = data;
	snprintf(buf, len, "%s, %llu knocks, %zu waiting",
		 state >= 0 && state < NSTATES ? door_states[state] : "?",
		 (unsigned long long)d->d_knocks, d->d_nwaiting);
	return 0;
}

static const smarm_sm_desc_t door_desc = {
	.struct_size = sizeof(smarm_sm_desc_t),
	.n_states = NSTATES,
	.name = "door",
	.protocol = "cast push(); cast pull(); cast lock()\n"
		    "cast unlock(u32); cast knock()\n"
		    "call get_state() -> i32\n"
		    "call when_unlocked() -> i32\n"
		    "call knocks() -> u64\n",
	.state_names = door_states,
	.initial = CLOSED,
	.flags = SMARM_SM_F_STATE_TIMEOUT,
	.rows = door_rows,
	.n_rows = sizeof door_rows / sizeof door_rows[0],
	.enter = door_enter,
	.create = door_create,
	.destroy = door_destroy,
	.terminate = door_terminate,
	.format_status = door_status,
};

static const smarm_sm_desc_t *const door_machines[] = { &door_desc };

SMARM_PLUGIN_DEFINE_MACHINES("door", door_machines);
