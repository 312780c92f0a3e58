/* SPDX-License-Identifier: MIT */
/*
 * test_statem_run.c - the gen_statem interpreter (behaviour/statem.c)
 * driven through a fake loop: enter at start and on each real
 * transition, never on a stay; repeat; postponed events replayed in FIFO
 * order after a real transition, behind the transition's next events;
 * next events before queued ones; the state timeout cancelled by a
 * transition, named timeouts surviving it, the event timeout cancelled
 * by any event; the default rows; an unhandled call dropped with
 * SMARM_EDOWN; postponed events dropped at the end; a dynamic tail to a
 * state that does not exist ends the machine as crashed; and the
 * smarm_sm_* calls' refusals.
 */
#include "harness.h"

#include "behaviour/statem.h"

#include <stdarg.h>
#include <string.h>

enum { CLOSED, OPEN, LOCKED, NSTATES };
enum { PUSH, PULL, LOCK, UNLOCK, KNOCK, GET, TICK, AGAIN, BAD, NOPS };

static const char *const names[NSTATES] = { "Closed", "Open", "Locked" };
static const char *const touts[] = { "alarm" };
static const struct smarm__sm_op ops[NOPS] = {
	{ "push", SMARM_SM_CAST },  { "pull", SMARM_SM_CAST },
	{ "lock", SMARM_SM_CAST },  { "unlock", SMARM_SM_CAST },
	{ "knock", SMARM_SM_CAST }, { "get", SMARM_SM_CALL },
	{ "tick", SMARM_SM_INFO },  { "again", SMARM_SM_CAST },
	{ "bad", SMARM_SM_CAST },
};

static char g_log[1024];
static smarm_sm_ctx_t g_m;
static uint64_t g_armed[3]; /* gen of each timer the fake armed last */
static int g_cancels;
static int g_rc[16]; /* statuses the callbacks saw */

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	size_t n = strlen(g_log);
	va_list ap;
	if (n > 0 && n < sizeof g_log - 1)
		g_log[n++] = ' ';
	va_start(ap, fmt);
	vsnprintf(g_log + n, sizeof g_log - n, fmt, ap);
	va_end(ap);
}

static const char *ev_name(const struct smarm__sm_ev *ev)
{
	static const char *const kinds[] = {
		"?",	   "cast",	    "call",
		"info",	   "state_timeout", "event_timeout",
		"timeout", "shutdown",	    "exit"
	};
	if (ev->ev_kind <= SMARM_SM_INFO)
		return ops[ev->ev_op].so_name;
	if (ev->ev_kind == SMARM_SM_TIMEOUT)
		return touts[ev->ev_op];
	return kinds[ev->ev_kind];
}

/* ---- the fake loop ---- */

static bool h_guard(smarm_sm_ctx_t *m, void (*fn)(void),
		    const struct smarm__sm_ev *ev)
{
	(void)ev;
	return ((bool (*)(const void *))fn)(m->m_data);
}

static const struct smarm__sm_ev *g_ev;

static int32_t h_action(smarm_sm_ctx_t *m, void (*fn)(void),
			struct smarm__sm_ev *ev)
{
	g_ev = ev;
	return ((int32_t(*)(void *, smarm_sm_ctx_t *, int32_t))fn)(m->m_data, m,
								   m->m_state);
}

static void h_drop(smarm_sm_ctx_t *m, struct smarm__sm_ev *ev, int status)
{
	(void)m;
	if (status != 0)
		logf_("X%s", ev_name(ev));
	else if (ev->ev_call != NULL)
		logf_("V%s", ev_name(ev)); /* the loop's own answer */
}

static int h_timer(smarm_sm_ctx_t *m, int which, uint64_t ns, uint64_t gen,
		   smarm_timer_t *t)
{
	(void)m;
	(void)ns;
	g_armed[which] = gen;
	t->id = gen;
	return 0;
}

static void h_cancel(smarm_sm_ctx_t *m, smarm_timer_t t)
{
	(void)m;
	(void)t;
	g_cancels++;
}

static int h_trap(smarm_sm_ctx_t *m)
{
	(void)m;
	return 0;
}

static int h_next(smarm_sm_ctx_t *m, const char *op, const smarm_value_t *args,
		  size_t nargs, struct smarm__sm_ev *ev)
{
	(void)m;
	(void)args;
	if (nargs != 0)
		return SMARM_EARGS;
	for (int i = 0; i < NOPS; i++) {
		if (strcmp(ops[i].so_name, op) != 0)
			continue;
		if (ops[i].so_kind == SMARM_SM_CALL)
			return SMARM_ENOOP;
		ev->ev_kind = ops[i].so_kind;
		ev->ev_op = i;
		return 0;
	}
	return SMARM_ENOOP;
}

static int h_reply(smarm_sm_ctx_t *m, struct smarm__sm_ev *ev,
		   const smarm_value_t *v)
{
	(void)m;
	logf_("R%lld", v != NULL ? (long long)v->v.i : -1LL);
	ev->ev_call = NULL;
	return 0;
}

static int h_token(smarm_sm_ctx_t *m, struct smarm__sm_ev *ev,
		   smarm_reply_t **tok)
{
	(void)m;
	*tok = ev->ev_call;
	ev->ev_call = NULL;
	return 0;
}

/* No plugin behind these machines: no behaviour to give. */
static int h_behaviour(smarm_sm_ctx_t *m, const char *name,
		       const smarm_behaviour_t **out)
{
	(void)m;
	(void)name;
	(void)out;
	return SMARM_ENOENT;
}

static const struct smarm__sm_hooks hooks = {
	h_guard, h_action, h_drop,	h_timer, h_cancel, h_trap, h_next,
	h_reply, h_token,  h_behaviour, NULL,	 NULL,	   NULL,
};

/* ---- the machine ---- */

static int32_t a_log(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	(void)data;
	(void)cx;
	logf_("%s@%d", ev_name(g_ev), state);
	return state;
}

static int32_t a_lock(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	a_log(data, cx, state);
	g_rc[0] = smarm_sm_timeout(cx, "alarm", MS(1));
	g_rc[1] = smarm_sm_timeout(cx, "nope", MS(1));
	g_rc[2] = smarm_sm_reply(cx, NULL); /* a cast: no call */
	g_rc[3] = smarm_sm_trap_exit(cx);   /* not in init */
	g_rc[4] = smarm_sm_timeout(cx, NULL, 1);
	return state;
}

static int32_t a_unlock(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	a_log(data, cx, state);
	g_rc[5] = smarm_sm_next_event(cx, "tick", NULL, 0);
	g_rc[6] = smarm_sm_next_event(cx, "get", NULL, 0); /* a call */
	g_rc[7] = smarm_sm_next_event(cx, NULL, NULL, 0);
	return state;
}

static int32_t a_again(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	a_log(data, cx, state);
	smarm_sm_next_event(cx, "knock", NULL, 0);
	smarm_sm_next_event(cx, "push", NULL, 0);
	return state;
}

static int32_t a_reply(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	smarm_value_t v = { .type = SMARM_T_I64, .v.i = state };
	a_log(data, cx, state);
	g_rc[8] = smarm_sm_reply(cx, &v);
	g_rc[9] = smarm_sm_reply(cx, &v); /* answered already */
	return state;
}

static int32_t a_evt(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	a_log(data, cx, state);
	smarm_sm_event_timeout(cx, MS(1));
	return state;
}

static int32_t a_bad(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	a_log(data, cx, state);
	return 99;
}

static void e_log(void *data, smarm_sm_ctx_t *cx, int32_t state, int32_t prev)
{
	(void)data;
	logf_("E%d/%d", state, prev);
	if (state == OPEN)
		smarm_sm_state_timeout(cx, MS(1));
	g_rc[10] = smarm_sm_next_event(cx, "knock", NULL, 0);
	g_rc[11] = smarm_sm_trap_exit(cx);
}

#define A(f) ((void (*)(void))(f))
#define ANY SMARM_SM_ANY

static const smarm_sm_row_t rows[] = {
	{ LOCKED, SMARM_SM_CAST, "knock", NULL, NULL, SMARM_SM_POSTPONE, 0 },
	{ LOCKED, SMARM_SM_CALL, "get", NULL, NULL, SMARM_SM_POSTPONE, 0 },
	{ CLOSED, SMARM_SM_CAST, "push", NULL, A(a_log), SMARM_SM_TO, OPEN },
	{ OPEN, SMARM_SM_CAST, "pull", NULL, A(a_log), SMARM_SM_TO, CLOSED },
	{ CLOSED, SMARM_SM_CAST, "lock", NULL, A(a_lock), SMARM_SM_TO, LOCKED },
	{ LOCKED, SMARM_SM_CAST, "unlock", NULL, A(a_unlock), SMARM_SM_TO,
	  CLOSED },
	{ ANY, SMARM_SM_CAST, "knock", NULL, A(a_log), SMARM_SM_STAY, 0 },
	{ ANY, SMARM_SM_CAST, "again", NULL, A(a_again), SMARM_SM_STAY, 0 },
	{ ANY, SMARM_SM_CAST, "bad", NULL, A(a_bad), SMARM_SM_DYNAMIC, 0 },
	{ OPEN, SMARM_SM_CAST, "push", NULL, A(a_log), SMARM_SM_REPEAT, 0 },
	{ ANY, SMARM_SM_CAST, NULL, NULL, NULL, SMARM_SM_UNHANDLED, 0 },
	{ CLOSED, SMARM_SM_CALL, "get", NULL, A(a_reply), SMARM_SM_STAY, 0 },
	{ ANY, SMARM_SM_CALL, "get", NULL, NULL, SMARM_SM_UNHANDLED, 0 },
	{ ANY, SMARM_SM_STATE_TIMEOUT, NULL, NULL, A(a_log), SMARM_SM_TO,
	  CLOSED },
	{ ANY, SMARM_SM_EVENT_TIMEOUT, NULL, NULL, A(a_log), SMARM_SM_STAY, 0 },
	{ ANY, SMARM_SM_TIMEOUT, "alarm", NULL, A(a_log), SMARM_SM_STAY, 0 },
	{ OPEN, SMARM_SM_INFO, "tick", NULL, A(a_evt), SMARM_SM_STAY, 0 },
};

static void (*const enters[NSTATES])(void *, smarm_sm_ctx_t *, int32_t,
				     int32_t) = { e_log, e_log, e_log };

static smarm_sm_desc_t desc = {
	.struct_size = sizeof(smarm_sm_desc_t),
	.n_states = NSTATES,
	.name = "door",
	.state_names = names,
	.initial = CLOSED,
	.flags = SMARM_SM_F_STATE_TIMEOUT | SMARM_SM_F_EVENT_TIMEOUT,
	.timeouts = touts,
	.n_timeouts = 1,
	.rows = rows,
	.n_rows = sizeof rows / sizeof rows[0],
	.enter = enters,
};

static struct smarm__sm_tables *g_t;
static char g_logs[8][1024];
static bool g_ends[8];
static int g_stage;

/* Log of what one step did, in g_logs[g_stage++]. */
static void stage(bool ended)
{
	strcpy(g_logs[g_stage], g_log);
	g_ends[g_stage++] = ended;
	g_log[0] = '\0';
}

static bool cast(int op)
{
	struct smarm__sm_ev ev = { .ev_kind = ops[op].so_kind, .ev_op = op };
	if (ops[op].so_kind == SMARM_SM_CALL)
		ev.ev_call = &ev; /* any non-NULL route */
	return smarm__sm_step(&g_m, &ev);
}

static void door_root(void *arg)
{
	bool end = false;
	uint64_t st, ev;
	(void)arg;

	ck_assert_int_eq(smarm__sm_init(&g_m, &desc, g_t, &hooks, NULL), 0);
	/* The engine's part: the actor's context is this machine. */
	ck_assert_int_eq(smarm__bhv_self_set(&g_m, BHV_SELF_MACHINE), 0);
	smarm__sm_start(&g_m);
	stage(false);
	/* 1: transitions, the state timeout cancelled by one. */
	end |= cast(PUSH);
	st = g_armed[SMARM__SM_TM_STATE];
	end |= cast(PULL);
	end |= smarm__sm_fire(&g_m, SMARM__SM_TM_STATE, st, false);
	end |= cast(LOCK);
	stage(end);
	/* 2: postponed while Locked, an unhandled cast, then replay
	 * after unlock, behind unlock's next event. */
	end |= cast(KNOCK);
	end |= cast(GET);
	end |= cast(PUSH);
	end |= cast(UNLOCK);
	stage(end);
	/* 3: the named timeout survived two transitions; next events. */
	end |= smarm__sm_fire(&g_m, SMARM__SM_TM_NAMED,
			      g_armed[SMARM__SM_TM_NAMED], false);
	end |= cast(AGAIN);
	end |= cast(PUSH); /* Open: repeat */
	stage(end);
	/* 4: the event timeout: cancelled by an event, by a pending one,
	 * fires otherwise; the state timeout of Open fires. */
	end |= cast(TICK);
	ev = g_armed[SMARM__SM_TM_EVENT];
	end |= cast(KNOCK);
	end |= smarm__sm_fire(&g_m, SMARM__SM_TM_EVENT, ev, false);
	end |= cast(TICK);
	end |= smarm__sm_fire(&g_m, SMARM__SM_TM_EVENT,
			      g_armed[SMARM__SM_TM_EVENT], true);
	end |= cast(TICK);
	end |= smarm__sm_fire(&g_m, SMARM__SM_TM_EVENT,
			      g_armed[SMARM__SM_TM_EVENT], false);
	end |= smarm__sm_fire(&g_m, SMARM__SM_TM_STATE,
			      g_armed[SMARM__SM_TM_STATE], false);
	stage(end);
	/* 5: locked with events postponed, a dynamic tail to no state. */
	end |= cast(LOCK);
	end |= cast(KNOCK);
	end |= cast(GET);
	end |= cast(BAD);
	stage(end);
	g_rc[12] = g_m.m_crash;
	g_rc[13] = smarm_sm_stop(&g_m); /* between callbacks */
	smarm__sm_fini(&g_m);
	(void)smarm__bhv_self_set(NULL, 0); /* the engine's part */
	stage(false);
	g_rc[14] = smarm_sm_stop(&g_m); /* ended */
}

START_TEST(test_statem_run_door_semantics)
{
	ck_assert_int_eq(smarm__sm_check_ops(&desc, ops, NOPS, NULL, 0), 0);
	ck_assert_int_eq(smarm__sm_tables_build(&desc, ops, NOPS, &g_t), 0);
	harness_run(1, door_root, NULL);
	smarm__sm_tables_free(g_t);
	ck_assert_str_eq(g_logs[0], "E0/0");
	ck_assert_str_eq(g_logs[1], "push@0 E1/0 pull@1 E0/1 lock@0 E2/0");
	ck_assert_str_eq(g_logs[2],
			 "Xpush unlock@2 E0/2 Xtick knock@0 get@0 R0");
	ck_assert_str_eq(g_logs[3],
			 "alarm@0 again@0 knock@0 push@0 E1/0 push@1 E1/1");
	ck_assert_str_eq(g_logs[4], "tick@1 knock@1 tick@1 tick@1 "
				    "event_timeout@1 state_timeout@1 E0/1");
	ck_assert_str_eq(g_logs[5], "lock@0 E2/0 bad@2");
	ck_assert(g_ends[5]);
	ck_assert(!g_ends[1] && !g_ends[2] && !g_ends[3] && !g_ends[4]);
	/* The end drops what was postponed: the destructor sees each. */
	ck_assert_str_eq(g_logs[6], "Xknock Xget");
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], SMARM_ENOENT);
	ck_assert_int_eq(g_rc[2], SMARM_ESTATE);
	ck_assert_int_eq(g_rc[3], SMARM_ESTATE);
	ck_assert_int_eq(g_rc[4], SMARM_EINVAL);
	ck_assert_int_eq(g_rc[5], 0);
	ck_assert_int_eq(g_rc[6], SMARM_ENOOP);
	ck_assert_int_eq(g_rc[7], SMARM_EINVAL);
	ck_assert_int_eq(g_rc[8], 0);
	ck_assert_int_eq(g_rc[9], SMARM_ESTATE);
	ck_assert_int_eq(g_rc[10], SMARM_ESTATE); /* next_event in enter */
	ck_assert_int_eq(g_rc[11], SMARM_ESTATE);
	ck_assert_int_eq(g_rc[12], 1);
	ck_assert_int_eq(g_rc[13], SMARM_ESTATE);
	ck_assert_int_eq(g_rc[14], SMARM_EINVAL);
	ck_assert_int_gt(g_cancels, 0);
}
END_TEST

static void plain_thread_calls(void)
{
	smarm_sm_ctx_t fake;
	memset(&fake, 0, sizeof fake);
	ck_assert_int_eq(smarm_sm_stop(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_sm_stop(&fake), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sm_state_timeout(&fake, 1), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sm_next_event(&fake, "x", NULL, 0),
			 SMARM_ENOTACTOR);
}

static int g_wild[4];

static void wild_root(void *arg)
{
	smarm_sm_ctx_t fake;
	smarm_reply_t *tok;
	(void)arg;
	memset(&fake, 0, sizeof fake);
	g_wild[0] = smarm_sm_stop(&fake);
	g_wild[1] = smarm_sm_reply_later(&fake, &tok);
	g_wild[2] = smarm_sm_cancel_timeout(&fake, "alarm");
	g_wild[3] = smarm_sm_event_timeout(NULL, 1);
}

START_TEST(test_statem_run_misuse_is_refused)
{
	plain_thread_calls();
	harness_run(1, wild_root, NULL);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(g_wild[i], SMARM_EINVAL);
}
END_TEST

/* Default rows: an unmatched shutdown stops, an exit is dropped. */
static const smarm_sm_row_t rows2[] = {
	{ ANY, SMARM_SM_CAST, NULL, NULL, NULL, SMARM_SM_STAY, 0 },
	{ ANY, SMARM_SM_CALL, NULL, NULL, NULL, SMARM_SM_UNHANDLED, 0 },
};
static smarm_sm_desc_t desc2 = {
	.struct_size = sizeof(smarm_sm_desc_t),
	.n_states = 1,
	.name = "min",
	.state_names = names,
	.rows = rows2,
	.n_rows = 2,
};

static bool g_def[3];

static void defaults_root(void *arg)
{
	struct smarm__sm_ev ex = { .ev_kind = SMARM_SM_EXIT, .ev_op = -1 };
	struct smarm__sm_ev sh = { .ev_kind = SMARM_SM_SHUTDOWN, .ev_op = -1 };
	struct smarm__sm_ev in = { .ev_kind = SMARM_SM_INFO, .ev_op = TICK };
	(void)arg;
	ck_assert_int_eq(smarm__sm_init(&g_m, &desc2, g_t, &hooks, NULL), 0);
	/* The engine's part: the actor's context is this machine. */
	ck_assert_int_eq(smarm__bhv_self_set(&g_m, BHV_SELF_MACHINE), 0);
	smarm__sm_start(&g_m);
	g_def[0] = smarm__sm_step(&g_m, &ex);
	g_def[1] = smarm__sm_step(&g_m, &in);
	g_def[2] = smarm__sm_step(&g_m, &sh);
	smarm__sm_fini(&g_m);
	(void)smarm__bhv_self_set(NULL, 0); /* the engine's part */
	stage(g_m.m_crash);
}

START_TEST(test_statem_run_default_rows)
{
	g_stage = 0;
	g_log[0] = '\0';
	ck_assert_int_eq(smarm__sm_check_ops(&desc2, ops, NOPS, NULL, 0), 0);
	ck_assert_int_eq(smarm__sm_tables_build(&desc2, ops, NOPS, &g_t), 0);
	harness_run(1, defaults_root, NULL);
	smarm__sm_tables_free(g_t);
	ck_assert(!g_def[0]);
	ck_assert(!g_def[1]);
	ck_assert(g_def[2]);
	ck_assert(!g_ends[0]);
	ck_assert_str_eq(g_logs[0], "Xexit Xtick Xshutdown");
}
END_TEST

Suite *smarm_test_statem_run_suite(void)
{
	Suite *s = suite_create("statem_run");
	TCase *tc = tcase_create("run");
	tcase_add_test(tc, test_statem_run_door_semantics);
	tcase_add_test(tc, test_statem_run_misuse_is_refused);
	tcase_add_test(tc, test_statem_run_default_rows);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(statem_run)
