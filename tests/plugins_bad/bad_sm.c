/* SPDX-License-Identifier: MIT */
/*
 * bad_sm.c - gen_statem plugins for the loader's table checks, one
 * module per SM_* variant: GOOD loads; MALFORMED (a POSTPONE tail on a
 * shutdown row), NOTEXH (Idle has no row for the cast pull) and
 * UNREACH (a row behind an unguarded any-state row) are refused; SHORT
 * loads a descriptor of the smallest size accepted (struct_size ends
 * before format_status), whose bytes past it are not zero: the loader must
 * not read them as fields.
 */
#include <smarm/smarm_plugin.h>

enum { IDLE, OPEN, NSTATES };

static int32_t act(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	(void)data;
	(void)cx;
	return state;
}

#define A ((void (*)(void))act)

static const smarm_sm_row_t rows[] = {
	{ IDLE, SMARM_SM_CAST, "push", NULL, A, SMARM_SM_TO, OPEN },
	{ SMARM_SM_ANY, SMARM_SM_CALL, "get", NULL, A, SMARM_SM_STAY, 0 },
#ifdef SM_UNREACH
	{ SMARM_SM_ANY, SMARM_SM_CAST, NULL, NULL, NULL, SMARM_SM_STAY, 0 },
	{ OPEN, SMARM_SM_CAST, "push", NULL, A, SMARM_SM_STAY, 0 },
#endif
#ifndef SM_NOTEXH
	{ OPEN, SMARM_SM_CAST, "pull", NULL, A, SMARM_SM_TO, IDLE },
#endif
#ifdef SM_MALFORMED
	{ OPEN, SMARM_SM_SHUTDOWN, NULL, NULL, NULL, SMARM_SM_POSTPONE, 0 },
#endif
#ifndef SM_NOTEXH
	{ SMARM_SM_ANY, SMARM_SM_CAST, NULL, NULL, NULL, SMARM_SM_UNHANDLED,
	  0 },
#endif
};

static const char *const states[NSTATES] = { "Idle", "Open" };

#ifdef SM_SHORT
#define SM_SIZE offsetof(smarm_sm_desc_t, format_status)
#else
#define SM_SIZE sizeof(smarm_sm_desc_t)
#endif

static const smarm_sm_desc_t machine = {
	.struct_size = SM_SIZE,
	.n_states = NSTATES,
	.name = "sm",
	.protocol = "cast push(); cast pull(); call get() -> i32",
	.state_names = states,
	.initial = IDLE,
	.rows = rows,
	.n_rows = sizeof rows / sizeof rows[0],
#ifdef SM_SHORT
	/* what follows a short descriptor in the plugin's memory */
	.format_status =
		(int (*)(const void *, int32_t, char *, size_t))0x5a5a5a5a,
	.reserved = { (void *)0x5a5a5a5a, (void *)0x5a5a5a5a,
		      (void *)0x5a5a5a5a, (void *)0x5a5a5a5a,
		      (void *)0x5a5a5a5a, (void *)0x5a5a5a5a,
		      (void *)0x5a5a5a5a },
#endif
};

static const smarm_sm_desc_t *const machines[] = { &machine };

SMARM_PLUGIN_DEFINE_MACHINES("bad_sm", machines);
