/* SPDX-License-Identifier: MIT */
/*
 * probe.c - a gen_statem plugin for the API suite (test_gen_statem.c):
 * states A, B and C; every action and enter appends a word to a log
 * that the call log() returns (and clears). B postpones ev and later,
 * C the timeout t1.
 * Operations arm and cancel each kind of timeout, insert next events,
 * repeat the state, crash, stop, take a reply token and answer it later.
 * The event timeout's row stops the machine (a test sees it fire by the
 * machine's end: polling the log would cancel it). selfsend and peer
 * reach the machine itself and a sibling machine, mirror, through
 * handles opened from inside (smarm_sm_behaviour). keep stores a raw
 * reply target (a response channel and a request id) from an info;
 * answer and answers reply to it later (smarm_reply_to). terminate
 * sleeps (1 ms when it may block, else 2.5 s) and records how,
 * may_block and the sleep's status for sm_probe_term (a plain export of
 * this plugin). Args "hib" make it hibernate at every wait, "hibafter"
 * after 5 ms idle (smarm_sm_set_hibernate_after); the cast hib asks for
 * one hibernation (smarm_sm_hibernate, logged "hib:<status>").
 */
#include <smarm/smarm_plugin.h>

#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { A, B, C, NSTATES };

struct probe {
	char p_log[4096];      /* words, space separated */
	smarm_reply_t *p_held; /* hold()'s token, or NULL */
	bool p_initnext;       /* args "initnext": init queues ev(5) */
	int p_reenter;	       /* args "reenter": A's enter repeats twice */
	uint64_t p_rch;	       /* keep()'s raw reply target: channel ... */
	uint64_t p_rid;	       /* ... and request id */
	int p_hib;	       /* "hib" 1 (always), "hibafter" 2 (5 ms) */
};

static void logw(struct probe *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logw(struct probe *p, const char *fmt, ...)
{
	size_t n = strlen(p->p_log);
	va_list ap;
	if (n + 2 >= sizeof p->p_log)
		return;
	if (n > 0)
		p->p_log[n++] = ' ';
	va_start(ap, fmt);
	vsnprintf(p->p_log + n, sizeof p->p_log - n, fmt, ap);
	va_end(ap);
}

static int p_create(const char *args, void **data)
{
	struct probe *p = calloc(1, sizeof *p);
	if (p == NULL)
		return SMARM_ENOMEM;
	*data = p;
	p->p_initnext = args != NULL && strstr(args, "initnext") != NULL;
	p->p_reenter = args != NULL && strstr(args, "reenter") != NULL ? 2 : 0;
	p->p_hib = args == NULL			      ? 0
		   : strstr(args, "hibafter") != NULL ? 2
		   : strstr(args, "hib") != NULL      ? 1
						      : 0;
	return 0;
}

static void p_destroy(void *data)
{
	free(data);
}

static int p_init(void *data, smarm_sm_ctx_t *cx)
{
	struct probe *p = data;
	smarm_value_t v = { .type = SMARM_T_I32, .v.i = 5 };
	if (p->p_initnext && smarm_sm_next_event(cx, "ev", &v, 1) != 0)
		return SMARM_EINTERNAL;
	if (p->p_hib != 0 &&
	    smarm_sm_set_hibernate_after(cx, p->p_hib == 1 ? 0 : 5000000) != 0)
		return SMARM_EINTERNAL;
	/* The probe traps: shutdowns arrive as SHUTDOWN events (no row:
	 * the built-in one stops it normally). */
	return smarm_sm_trap_exit(cx);
}

/* The last terminate: how, may_block, its sleep's status (-100: none). */
static _Atomic int term_how = -100, term_may = -100, term_sleep = -100;

__attribute__((visibility("default"))) void sm_probe_term(int out[3])
{
	out[0] = atomic_exchange(&term_how, -100);
	out[1] = atomic_exchange(&term_may, -100);
	out[2] = atomic_exchange(&term_sleep, -100);
}

static void p_terminate(void *data, int how, intptr_t reason, bool may_block)
{
	struct probe *p = data;
	(void)reason;
	if (p->p_held != NULL)
		smarm_reply_drop(p->p_held);
	atomic_store(&term_sleep,
		     smarm_actor_sleep(may_block ? 1000000 : 2500000000u));
	atomic_store(&term_may, may_block);
	atomic_store(&term_how, how);
}

static void p_enter(void *data, smarm_sm_ctx_t *cx, int32_t state, int32_t prev)
{
	struct probe *p = data;
	logw(data, "E%d/%d", state, prev);
	if (state == A && p->p_reenter > 0) { /* "reenter" */
		p->p_reenter--;
		logw(data, "R%d", smarm_sm_repeat_state(cx));
	}
}

#define ACT(name, word)                                                        \
	static int32_t name(void *data, smarm_sm_ctx_t *cx, int32_t state)     \
	{                                                                      \
		(void)cx;                                                      \
		logw(data, "%s@%d", word, state);                              \
		return state;                                                  \
	}

/* repeat: the action repeats by its return (REPEAT); the enter's call
 * is refused here (logged "repeat@<state>:<status>"). */
static int32_t a_repeat(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	logw(data, "repeat@%d:%d", state, smarm_sm_repeat_state(cx));
	return state;
}
ACT(a_stop, "stop")
ACT(a_tick, "tick")
ACT(a_st, "st")
ACT(a_et, "et")
ACT(a_t1, "t1")
ACT(a_noreply, "noreply")

static int32_t a_hib(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	logw(data, "hib:%d", smarm_sm_hibernate(cx));
	return state;
}

static int32_t a_go(void *data, smarm_sm_ctx_t *cx, int32_t state, int32_t to)
{
	(void)cx;
	logw(data, "go%d@%d", to, state);
	return to;
}

static int32_t a_ev(void *data, smarm_sm_ctx_t *cx, int32_t state, int32_t n)
{
	(void)cx;
	logw(data, "ev%d@%d", n, state);
	return state;
}

static int32_t a_next2(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	smarm_value_t v = { .type = SMARM_T_I32 };
	logw(data, "next2@%d", state);
	v.v.i = 100;
	smarm_sm_next_event(cx, "ev", &v, 1);
	v.v.i = 101;
	smarm_sm_next_event(cx, "ev", &v, 1);
	return state;
}

static int32_t a_arm_st(void *data, smarm_sm_ctx_t *cx, int32_t state,
			uint64_t ns)
{
	(void)data;
	smarm_sm_state_timeout(cx, ns);
	return state;
}

static int32_t a_arm_ev(void *data, smarm_sm_ctx_t *cx, int32_t state,
			uint64_t ns)
{
	(void)data;
	smarm_sm_event_timeout(cx, ns);
	return state;
}

static int32_t a_ev0next(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	smarm_value_t v = { .type = SMARM_T_I32, .v.i = 7 };
	logw(data, "ev0next@%d", state);
	smarm_sm_event_timeout(cx, 0);
	smarm_sm_next_event(cx, "ev", &v, 1);
	return state;
}

static int32_t a_arm_t(void *data, smarm_sm_ctx_t *cx, int32_t state,
		       uint64_t ns)
{
	(void)data;
	smarm_sm_timeout(cx, "t1", ns);
	return state;
}

static int32_t a_cancel_t(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	logw(data, "cancel%d", smarm_sm_cancel_timeout(cx, "t1"));
	return state;
}

static int32_t a_crash(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	(void)data;
	(void)cx;
	smarm_actor_crash(42);
	return state;
}

/* errc(x): answer {error, x}, then try to answer again (logged). */
static int32_t a_errc(void *data, smarm_sm_ctx_t *cx, int32_t state, int64_t x)
{
	int rc = smarm_sm_reply_error(cx, (intptr_t)x);
	logw(data, "errc%d:%d", rc, smarm_sm_reply_error(cx, 1));
	return state;
}

/* stopw(x): OTP's {stop, {shutdown, x}} (smarm_sm_stop_with). */
static int32_t a_stopw(void *data, smarm_sm_ctx_t *cx, int32_t state, int64_t x)
{
	logw(data, "stopw%d",
	     smarm_sm_stop_with(cx, SMARM_EXIT_SHUTDOWN, (intptr_t)x));
	return state;
}

static int32_t a_link_to(void *data, smarm_sm_ctx_t *cx, int32_t state,
			 smarm_pid_t pid)
{
	(void)cx;
	logw(data, "linked%d", smarm_link(pid));
	return state;
}

static int32_t a_exit(void *data, smarm_sm_ctx_t *cx, int32_t state,
		      const smarm_signal_t *sig)
{
	(void)cx;
	logw(data, "exit%d@%d", sig->how, state);
	return state;
}

static int32_t a_get(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	smarm_value_t v = { .type = SMARM_T_I32, .v.i = state };
	(void)data;
	smarm_sm_reply(cx, &v);
	return state;
}

static int32_t a_later(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	logw(data, "later@%d", state);
	return a_get(data, cx, state);
}

static int32_t a_hold(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	struct probe *p = data;
	if (p->p_held == NULL)
		smarm_sm_reply_later(cx, &p->p_held);
	logw(p, "hold@%d", state);
	return state;
}

static int32_t a_release(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	struct probe *p = data;
	smarm_value_t v = { .type = SMARM_T_I32, .v.i = 1000 + state };
	(void)cx;
	if (p->p_held != NULL)
		smarm_reply(p->p_held, &v);
	p->p_held = NULL;
	return state;
}

/* keep(ch, id): store a raw reply target taken from an info. */
static int32_t a_keep(void *data, smarm_sm_ctx_t *cx, int32_t state,
		      uint64_t ch, uint64_t id)
{
	struct probe *p = data;
	(void)cx;
	p->p_rch = ch;
	p->p_rid = id;
	logw(p, "keep@%d", state);
	return state;
}

/* answer(v), answers(s): reply v, or s, to the kept target (OTP's
 * gen_statem:reply(From, R) with a From from a message). */
static int32_t a_answer(void *data, smarm_sm_ctx_t *cx, int32_t state,
			int32_t v)
{
	struct probe *p = data;
	smarm_value_t r = { .type = SMARM_T_I32, .v.i = v };
	(void)cx;
	logw(p, "answer%d@%d",
	     smarm_reply_to((smarm_chan_t *)(uintptr_t)p->p_rch, p->p_rid, &r),
	     state);
	return state;
}

static int32_t a_answers(void *data, smarm_sm_ctx_t *cx, int32_t state,
			 const char *str)
{
	struct probe *p = data;
	smarm_value_t r = smarm_value_str(str); /* copied by the reply */
	(void)cx;
	logw(p, "answers%d@%d",
	     smarm_reply_to((smarm_chan_t *)(uintptr_t)p->p_rch, p->p_rid, &r),
	     state);
	return state;
}

static int32_t a_log(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	struct probe *p = data;
	smarm_value_t v = { .type = SMARM_T_STR, .v.p = p->p_log };
	v.len = (uint32_t)strlen(p->p_log);
	smarm_sm_reply(cx, &v);
	p->p_log[0] = '\0';
	return state;
}

/*
 * selfsend: a handle to the machine itself (its own behaviour, its own
 * pid): a cast and an info are queued and handled after this event; a
 * call and a shutdown are SMARM_ECALLSELF. Logs each status.
 */
static int32_t a_selfsend(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	const smarm_behaviour_t *b = NULL;
	smarm_server_t *h = NULL;
	smarm_value_t five = { .type = SMARM_T_I32, .v.i = 5 };
	smarm_value_t r = { .type = SMARM_T_I32 };
	int rc[5] = { smarm_sm_behaviour(cx, NULL, &b), -1, -1, -1, -1 };
	if (rc[0] == 0 &&
	    smarm_server_open(NULL, b, smarm_actor_self(), &h) == 0) {
		rc[1] = smarm_server_cast(h, "ev", &five, 1);
		rc[2] = smarm_server_info(h, "tick", NULL, 0);
		rc[3] = smarm_server_call(h, "get", NULL, 0, NULL, 1000000000);
		rc[4] = smarm_server_shutdown(h, 1000000000, NULL);
		smarm_server_free(h);
	}
	logw(data, "self:%d:%d:%d:%d:%d", rc[0], rc[1], rc[2], rc[3], rc[4]);
	r.v.i = rc[1];
	smarm_sm_reply(cx, &r);
	return state;
}

/*
 * peer: call ping(v) on the machine registered as name, of this
 * plugin's behaviour "mirror" (found from inside); reply its answer.
 * Logs the statuses, and those of a name that is no behaviour and of
 * out NULL.
 */
static int32_t a_peer(void *data, smarm_sm_ctx_t *cx, int32_t state,
		      const char *name, int32_t v)
{
	const smarm_behaviour_t *b = NULL, *x = NULL;
	smarm_server_t *h = NULL;
	smarm_value_t a = { .type = SMARM_T_I32, .v.i = v };
	smarm_value_t r = { .type = SMARM_T_I32, .v.i = -1 };
	int rb = smarm_sm_behaviour(cx, "mirror", &b), ro = -1, rc = -1;
	if (rb == 0)
		ro = smarm_server_open_name(NULL, b, name, &h);
	if (ro == 0)
		rc = smarm_server_call(h, "ping", &a, 1, &r, 5000000000u);
	smarm_server_free(h);
	logw(data, "peer:%d:%d:%d:%d:%d", rb, ro, rc,
	     smarm_sm_behaviour(cx, "nope", &x),
	     smarm_sm_behaviour(cx, NULL, NULL));
	smarm_sm_reply(cx, &r);
	return state;
}

/* later's postpone guard: logs "pp" (a test's sign that the call is
 * in the machine) and postpones. */
static bool g_pp(const void *data)
{
	logw((struct probe *)data, "pp");
	return true;
}

/* gboom's guard crashes the machine while it decides. */
static bool g_crash(const void *data)
{
	(void)data;
	smarm_actor_crash(43);
	return true;
}

/* go's guard: a negative state falls through to the unhandled row;
 * any other goes (one that does not exist crashes the machine). */
static bool g_go(const void *data, int32_t to)
{
	(void)data;
	return to >= 0;
}

#define F(f) ((void (*)(void))(f))
#define ANY SMARM_SM_ANY
#define ROW(st, kind, op, act, tail)                                           \
	{                                                                      \
		st, SMARM_SM_##kind, op, NULL, F(act), SMARM_SM_##tail, 0      \
	}

static const smarm_sm_row_t rows[] = {
	{ B, SMARM_SM_CAST, "ev", NULL, NULL, SMARM_SM_POSTPONE, 0 },
	{ B, SMARM_SM_CALL, "later", F(g_pp), NULL, SMARM_SM_POSTPONE, 0 },
	{ C, SMARM_SM_TIMEOUT, "t1", NULL, NULL, SMARM_SM_POSTPONE, 0 },
	{ ANY, SMARM_SM_CAST, "go", F(g_go), F(a_go), SMARM_SM_DYNAMIC, 0 },
	ROW(ANY, CAST, "go", NULL, UNHANDLED),
	ROW(ANY, CAST, "ev", a_ev, STAY),
	ROW(ANY, CAST, "next2", a_next2, STAY),
	ROW(ANY, CAST, "arm_st", a_arm_st, STAY),
	ROW(ANY, CAST, "arm_ev", a_arm_ev, STAY),
	ROW(ANY, CAST, "arm_t", a_arm_t, STAY),
	ROW(ANY, CAST, "ev0next", a_ev0next, STAY),
	ROW(ANY, CAST, "cancel_t", a_cancel_t, STAY),
	ROW(ANY, CAST, "repeat", a_repeat, REPEAT),
	ROW(ANY, CAST, "crash", a_crash, STAY),
	ROW(ANY, CAST, "stop", a_stop, STOP),
	ROW(ANY, CAST, "stopw", a_stopw, STAY),
	ROW(ANY, CALL, "errc", a_errc, STAY),
	ROW(ANY, CAST, "release", a_release, STAY),
	ROW(ANY, CALL, "get", a_get, STAY),
	ROW(ANY, CALL, "later", a_later, STAY),
	ROW(ANY, CALL, "hold", a_hold, STAY),
	ROW(ANY, CALL, "nothing", NULL, UNHANDLED),
	ROW(ANY, CALL, "boom", a_crash, STAY),
	{ ANY, SMARM_SM_CALL, "gboom", F(g_crash), F(a_get), SMARM_SM_STAY, 0 },
	ROW(ANY, CALL, "gboom", a_get, STAY),
	ROW(ANY, CAST, "link_to", a_link_to, STAY),
	ROW(ANY, EXIT, NULL, a_exit, STAY),
	ROW(ANY, CALL, "noreply", a_noreply, STAY),
	ROW(ANY, CALL, "log", a_log, STAY),
	ROW(ANY, CALL, "selfsend", a_selfsend, STAY),
	ROW(ANY, CALL, "peer", a_peer, STAY),
	ROW(ANY, INFO, "tick", a_tick, STAY),
	ROW(ANY, INFO, "keep", a_keep, STAY),
	ROW(ANY, CAST, "answer", a_answer, STAY),
	ROW(ANY, CAST, "answers", a_answers, STAY),
	ROW(ANY, CAST, "hib", a_hib, STAY),
	ROW(ANY, STATE_TIMEOUT, NULL, a_st, STAY),
	ROW(ANY, EVENT_TIMEOUT, NULL, a_et, STOP),
	ROW(ANY, TIMEOUT, "t1", a_t1, STAY),
};

static const char *const states[NSTATES] = { "A", "B", "C" };
static const char *const touts[] = { "t1" };
static void (*const enters[NSTATES])(void *, smarm_sm_ctx_t *, int32_t,
				     int32_t) = { p_enter, p_enter, p_enter };

static const smarm_sm_desc_t probe = {
	.struct_size = sizeof(smarm_sm_desc_t),
	.n_states = NSTATES,
	.name = "probe",
	.protocol =
		"cast go(i32); cast ev(i32); cast next2()\n"
		"cast arm_st(u64); cast arm_ev(u64); cast arm_t(u64)\n"
		"cast ev0next()\n"
		"cast cancel_t(); cast repeat(); cast crash(); cast stop()\n"
		"cast stopw(i64); call errc(i64) -> i32\n"
		"cast release()\n"
		"call get() -> i32; call later() -> i32\n"
		"call hold() -> i32; call nothing() -> i32\n"
		"call noreply(); call log() -> str\n"
		"call boom() -> i32; call gboom() -> i32\n"
		"cast link_to(pid)\n"
		"call selfsend() -> i32; call peer(str, i32) -> i32\n"
		"info tick(); info keep(u64, u64)\n"
		"cast answer(i32); cast answers(str)\n"
		"cast hib()\n",
	.state_names = states,
	.initial = A,
	.flags = SMARM_SM_F_STATE_TIMEOUT | SMARM_SM_F_EVENT_TIMEOUT,
	.timeouts = touts,
	.n_timeouts = 1,
	.rows = rows,
	.n_rows = sizeof rows / sizeof rows[0],
	.enter = enters,
	.create = p_create,
	.destroy = p_destroy,
	.init = p_init,
	.terminate = p_terminate,
};

/* mirror: one state; ping(v) answers v + 1000 (probe's peer). */
static int32_t a_ping(void *data, smarm_sm_ctx_t *cx, int32_t state, int32_t v)
{
	smarm_value_t r = { .type = SMARM_T_I32, .v.i = 1000 + (int64_t)v };
	(void)data;
	smarm_sm_reply(cx, &r);
	return state;
}

static const smarm_sm_row_t mirror_rows[] = {
	ROW(ANY, CALL, "ping", a_ping, STAY),
};

static const char *const mirror_states[] = { "M" };

static const smarm_sm_desc_t mirror = {
	.struct_size = sizeof(smarm_sm_desc_t),
	.n_states = 1,
	.name = "mirror",
	.protocol = "call ping(i32) -> i32",
	.state_names = mirror_states,
	.rows = mirror_rows,
	.n_rows = 1,
};

static const smarm_sm_desc_t *const machines[] = { &probe, &mirror };

SMARM_PLUGIN_DEFINE_MACHINES("probe", machines);
