/* SPDX-License-Identifier: MIT */
/*
 * test_gen_server_ctx.c - gen_server's context calls and lifecycle over
 * the test plugin tests/plugins/probe.c, whose callbacks log events:
 * deferred replies (answered, dropped, left to a server that ends),
 * handle_continue before the next message, stop with a reason, a call
 * queued behind a blocked handler when the server is shut down
 * (stop_with_queued_call), trapping with handle_shutdown (exit, which
 * ends SHUTDOWN, and continue), a terminate that may not block (its
 * parks refused), a request to itself, Downs, infos ahead of queued
 * calls, the idle window, timers (one-shot, periodic, cancelled), how a
 * stop's how is seen by monitors and a supervisor, casts and infos to
 * itself, a sibling behaviour found from inside, start failures (and
 * the reports of a failed create or init, and of a refused plugin),
 * and unloading while a message is queued.
 */
#include "harness.h"
#include "probe_events.h"

#include <smarm/smarm_plugin.h>

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>

static smarm_plugin_t *pl;
static const smarm_behaviour_t *probe;

static void setup(void)
{
	char msg[256];
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_PROBE"), &pl, msg,
					   sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "probe", &probe), 0);
	harness_checks_reset();
}

static void teardown(void)
{
	if (pl != NULL)
		smarm_plugin_close(pl);
	pl = NULL;
}

/* The probe's event log since the last read. */
static const char *events(void)
{
	return probe_events_read();
}

#define EVENTS_ARE(want)                                                       \
	do {                                                                   \
		const char *got_ = events();                                   \
		if (strcmp(got_, (want)) != 0)                                 \
			fprintf(stderr,                                        \
				"line %d: events \"%s\", want "                \
				"\"%s\"\n",                                    \
				__LINE__, got_ != NULL ? got_ : "(none)",      \
				(want));                                       \
		HARNESS_CHECK(strcmp(got_, (want)) == 0);                      \
	} while (0)

static smarm_value_t v_i64(int64_t v)
{
	smarm_value_t x;
	memset(&x, 0, sizeof x);
	x.type = SMARM_T_I64;
	x.v.i = v;
	return x;
}

static smarm_value_t v_u64(uint64_t v)
{
	smarm_value_t x;
	memset(&x, 0, sizeof x);
	x.type = SMARM_T_U64;
	x.v.u = v;
	return x;
}

static smarm_value_t v_i32(int32_t v)
{
	smarm_value_t x;
	memset(&x, 0, sizeof x);
	x.type = SMARM_T_I32;
	x.v.i = v;
	return x;
}

/* Start a probe with args; its pid, monitored into ch. */
static smarm_server_t *start(const char *args, smarm_chan_t *ch)
{
	smarm_server_t *s = NULL;
	smarm_pid_t pid;
	HARNESS_EQ(smarm_server_start(probe, args, NULL, &s), 0);
	if (s != NULL && ch != NULL) {
		HARNESS_EQ(smarm_server_pid(s, &pid), 0);
		HARNESS_EQ(smarm_monitor(pid, ch, NULL), 0);
	}
	return s;
}

/* ---------------------------------------------- deferred replies */

struct caller {
	smarm_server_t *s;
	smarm_chan_t *out;   /* int64 value, then int64 status */
	smarm_chan_t *ready; /* NULL, or told just before the call */
};

/* Tell the root the call comes next (it then sends without parking). */
static void caller_ready(struct caller *c)
{
	int64_t one = 1;
	if (c->ready != NULL)
		smarm_chan_send(c->ready, &one);
}

static void later_caller(void *arg)
{
	struct caller *c = arg;
	smarm_value_t r;
	int rc = smarm_server_call(c->s, "later", NULL, 0, &r, MS(10000));
	int64_t v = rc == 0 ? r.v.i : -12345, rc64 = rc;
	smarm_chan_send(c->out, &v);
	smarm_chan_send(c->out, &rc64);
}

static void deferred_root(void *arg)
{
	smarm_chan_t *down = harness_sig_chan(), *out;
	smarm_server_t *s = start(NULL, down), *mine = NULL;
	smarm_value_t a = v_i64(77);
	struct caller c;
	smarm_signal_t sig;
	smarm_pid_t pid;
	int64_t v, rc;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&out, 8, NULL), 0);
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	/* answered later by a cast: the caller gets the value */
	HARNESS_EQ(smarm_server_open(NULL, probe, pid, &mine), 0);
	c.s = mine;
	c.out = out;
	c.ready = NULL;
	HARNESS_EQ(smarm_actor_spawn(NULL, later_caller, &c, NULL), 0);
	smarm_actor_sleep(MS(20));
	HARNESS_EQ(smarm_server_cast(s, "answer", &a, 1), 0);
	HARNESS_EQ(smarm_chan_recv(out, &v), 0);
	HARNESS_EQ(smarm_chan_recv(out, &rc), 0);
	HARNESS_EQ(rc, 0);
	HARNESS_EQ(v, 77);
	/* dropped: SMARM_EDOWN */
	HARNESS_EQ(smarm_actor_spawn(NULL, later_caller, &c, NULL), 0);
	smarm_actor_sleep(MS(20));
	HARNESS_EQ(smarm_server_cast(s, "drop", NULL, 0), 0);
	HARNESS_EQ(smarm_chan_recv(out, &v), 0);
	HARNESS_EQ(smarm_chan_recv(out, &rc), 0);
	HARNESS_EQ(rc, SMARM_EDOWN);
	/* left with the token when the server ends: SMARM_EDOWN */
	HARNESS_EQ(smarm_actor_spawn(NULL, later_caller, &c, NULL), 0);
	smarm_actor_sleep(MS(20));
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	HARNESS_EQ(smarm_chan_recv(out, &v), 0);
	HARNESS_EQ(smarm_chan_recv(out, &rc), 0);
	HARNESS_EQ(rc, SMARM_EDOWN);
	HARNESS_EQ(harness_recv_sig(down, &sig), 0);
	/* that token stays valid: dropping it now does nothing more (and
	 * frees it: a token never answered nor dropped is leaked) */
	HARNESS_EQ(smarm_reply_drop(probe_token()), 0);
	HARNESS_EQ(smarm_reply_drop(probe_token()), SMARM_EINVAL);
	/* reply_later: 0 then ESTATE for a second token; in a cast ESTATE;
	 * a reply of the wrong type EARGS (token still valid), then 0 */
	EVENTS_ARE("init later:0:-3 answer:-3:-311:0 later:0:-3 drop:0 "
		   "later:0:-3 term:3:0:0 destroy");
	smarm_server_free(mine);
	smarm_server_free(s);
	harness_chan_drop(out);
	harness_chan_drop(down);
}

static const char *await_events(const char *want);

/* The token the probe's "later" took last. */
struct answerer {
	smarm_reply_t *tok;
	int64_t v;
	smarm_chan_t *go, *out;
};

static void answer_token(void *arg)
{
	struct answerer *a = arg;
	smarm_value_t v = v_i64(a->v);
	int64_t one, rc;
	HARNESS_EQ(smarm_chan_recv(a->go, &one), 0);
	rc = smarm_reply(a->tok, &v);
	HARNESS_EQ(smarm_chan_send(a->out, &rc), 0);
}

/*
 * Two actors answer one token at once: exactly one answer counts (0),
 * the other is refused (SMARM_EINVAL), and the caller gets the one
 * that counted. A token answered, a pointer that was never a token and
 * NULL are refused, never followed.
 */
static void token_race_root(void *arg)
{
	smarm_server_t *s = start(NULL, NULL), *mine = NULL;
	struct answerer a[2];
	struct caller c;
	smarm_chan_t *go, *out, *res;
	smarm_value_t v = v_i64(1);
	smarm_pid_t pid;
	int64_t got, rc, r[2], one = 1;
	uint64_t fake[16] = { 0 };
	(void)arg;
	if (s == NULL)
		return;
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	HARNESS_EQ(smarm_server_open(NULL, probe, pid, &mine), 0);
	HARNESS_EQ(smarm_chan_alloc(&go, 8, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&out, 8, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&res, 8, NULL), 0);
	c.s = mine;
	c.out = out;
	c.ready = NULL;
	for (int round = 0; round < 50; round++) {
		smarm_reply_t *tok;
		(void)events();
		HARNESS_EQ(smarm_actor_spawn(NULL, later_caller, &c, NULL), 0);
		HARNESS_CHECK(strstr(await_events("later:0"), "later:0") !=
			      NULL);
		tok = probe_token();
		for (int i = 0; i < 2; i++) {
			a[i].tok = tok;
			a[i].v = 100 * round + i;
			a[i].go = go;
			a[i].out = res;
			HARNESS_EQ(smarm_actor_spawn(NULL, answer_token, &a[i],
						     NULL),
				   0);
		}
		HARNESS_EQ(smarm_chan_send(go, &one), 0);
		HARNESS_EQ(smarm_chan_send(go, &one), 0);
		HARNESS_EQ(smarm_chan_recv(res, &r[0]), 0);
		HARNESS_EQ(smarm_chan_recv(res, &r[1]), 0);
		HARNESS_CHECK((r[0] == 0 && r[1] == SMARM_EINVAL) ||
			      (r[1] == 0 && r[0] == SMARM_EINVAL));
		HARNESS_EQ(smarm_chan_recv(out, &got), 0);
		HARNESS_EQ(smarm_chan_recv(out, &rc), 0);
		HARNESS_EQ(rc, 0);
		HARNESS_CHECK(got == 100 * round || got == 100 * round + 1);
		HARNESS_EQ(smarm_reply(tok, &v), SMARM_EINVAL); /* answered */
		HARNESS_EQ(smarm_reply_drop(tok), SMARM_EINVAL);
	}
	HARNESS_EQ(smarm_reply((smarm_reply_t *)fake, &v), SMARM_EINVAL);
	HARNESS_EQ(smarm_reply_drop((smarm_reply_t *)&fake[8]), SMARM_EINVAL);
	HARNESS_EQ(smarm_reply(NULL, &v), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(mine);
	smarm_server_free(s);
	harness_chan_drop(go);
	harness_chan_drop(out);
	harness_chan_drop(res);
}

START_TEST(test_gen_server_token_answered_once)
{
	ck_assert_int_eq(harness_run(4, token_race_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

START_TEST(test_gen_server_deferred_reply)
{
	ck_assert_int_eq(harness_run(2, deferred_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------------- continue, stop, reason */

static void continue_root(void *arg)
{
	smarm_chan_t *down = harness_sig_chan();
	smarm_server_t *s = start(NULL, down);
	smarm_value_t t = v_u64(9), e = v_i64(1), r;
	smarm_value_t st[2] = { v_i32(SMARM_EXIT_CRASHED), v_i64(99) };
	smarm_signal_t sig;
	(void)arg;
	HARNESS_EQ(smarm_server_call(s, "cont", &t, 1, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.u, 9);
	HARNESS_EQ(smarm_server_call(s, "echo", &e, 1, &r, MS(5000)), 0);
	/* stop with a reason from a call: the call is answered first */
	HARNESS_EQ(smarm_server_call(s, "stop", st, 2, NULL, MS(5000)), 0);
	HARNESS_EQ(harness_recv_sig(down, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(sig.reason, 99);
	EVENTS_ARE("init cont_req:0 cont:9 echo:1 stop:0 term:1:99:1 destroy");
	/* a bad how is EINVAL */
	smarm_server_free(s);
	s = start(NULL, down);
	st[0] = v_i32(77);
	HARNESS_EQ(smarm_server_call(s, "stop", st, 2, NULL, MS(5000)), 0);
	st[0] = v_i32(SMARM_EXIT_NORMAL);
	HARNESS_EQ(smarm_server_cast(s, "stop_cast", st, 2), 0);
	HARNESS_EQ(harness_recv_sig(down, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_NORMAL);
	EVENTS_ARE("init stop:-1 stop:0 term:0:99:1 destroy");
	smarm_server_free(s);
	harness_chan_drop(down);
}

START_TEST(test_gen_server_continue_and_stop_with_reason)
{
	ck_assert_int_eq(harness_run(2, continue_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------- stop: how monitors and a sup see */

/* The pid of sup's only child now. */
static smarm_pid_t sup_kid(smarm_pid_t sup)
{
	smarm_sup_child_t c;
	size_t n = 0;
	memset(&c, 0, sizeof c);
	HARNESS_EQ(smarm_sup_which_children(sup, &c, 1, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	return c.pid;
}

/* Wait until sup's child is no longer old (its Down was taken). */
static smarm_pid_t sup_kid_after(smarm_pid_t sup, smarm_pid_t old)
{
	uint64_t end = smarm_now_ns() + (uint64_t)(10e9 * harness_time_scale());
	smarm_pid_t now = sup_kid(sup);
	while (smarm_pid_eq(now, old) && smarm_now_ns() < end) {
		smarm_actor_sleep(MS(1));
		now = sup_kid(sup);
	}
	return now;
}

/*
 * smarm_gs_stop(cx, how, 7) for each how: the server's actor ends with
 * that how, its monitors see it (the reason with CRASHED and with
 * SHUTDOWN, OTP's {shutdown, 7}), terminate gets how and 7, and a
 * transient child is restarted only after the CRASHED one.
 */
static void stop_how_root(void *arg)
{
	static const int hows[] = { SMARM_EXIT_SHUTDOWN, SMARM_EXIT_NORMAL,
				    SMARM_EXIT_CRASHED };
	smarm_chan_t *down = harness_sig_chan();
	smarm_sup_spec_t *spec = NULL;
	smarm_pid_t sup = SMARM_PID_NONE, kid, next;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&spec), 0);
	HARNESS_EQ(smarm_sup_spec_add_server(spec, "t", probe, NULL, "tp",
					     SMARM_SUP_TRANSIENT, MS(1000),
					     MS(5000)),
		   0);
	HARNESS_EQ(smarm_sup_start(spec, &sup), 0);
	smarm_sup_spec_free(spec);
	for (size_t i = 0; i < sizeof hows / sizeof hows[0]; i++) {
		smarm_value_t st[2] = { v_i32(hows[i]), v_i64(7) };
		smarm_server_t *s = NULL;
		smarm_signal_t sig;
		char want[64];
		kid = sup_kid(sup);
		HARNESS_CHECK(!smarm_pid_eq(kid, SMARM_PID_NONE));
		HARNESS_EQ(smarm_server_open(NULL, probe, kid, &s), 0);
		HARNESS_EQ(smarm_monitor(kid, down, NULL), 0);
		HARNESS_EQ(smarm_server_call(s, "stop", st, 2, NULL, MS(5000)),
			   0);
		HARNESS_EQ(harness_recv_sig(down, &sig), 0);
		if (sig.how != hows[i])
			fprintf(stderr, "stop how %d: the Down says %d\n",
				hows[i], sig.how);
		HARNESS_EQ(sig.how, hows[i]);
		HARNESS_EQ(sig.reason, hows[i] == SMARM_EXIT_NORMAL ? 0 : 7);
		snprintf(want, sizeof want, "stop:0 term:%d:7:1 destroy",
			 hows[i]);
		HARNESS_CHECK(strstr(await_events(want), want) != NULL);
		next = sup_kid_after(sup, kid);
		if (hows[i] == SMARM_EXIT_CRASHED) {
			HARNESS_CHECK(!smarm_pid_eq(next, SMARM_PID_NONE));
		} else {
			/* not restarted: it is started again by hand */
			HARNESS_CHECK(smarm_pid_eq(next, SMARM_PID_NONE));
			HARNESS_EQ(smarm_sup_restart_child(sup, "t", MS(5000),
							   NULL),
				   0);
		}
		smarm_server_free(s);
	}
	HARNESS_EQ(smarm_monitor(sup, down, NULL), 0);
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	for (;;) { /* the child's Down, then the supervisor's */
		smarm_signal_t sig;
		int rc = harness_recv_sig(down, &sig);
		HARNESS_EQ(rc, 0);
		if (rc != 0 || smarm_pid_eq(sig.from, sup))
			break;
	}
	events();
	harness_chan_drop(down);
}

START_TEST(test_gen_server_stop_how_is_the_actor_end)
{
	ck_assert_int_eq(harness_run(4, stop_how_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/*
 * gen_server_SUITE's terminate crash: a crash inside terminate becomes
 * the server's exit reason (after a clean stop and after a crash of its
 * own), and the rest of the end (destroy) still runs.
 */
static void crashterm_root(void *arg)
{
	smarm_chan_t *down = harness_sig_chan();
	(void)arg;
	for (int round = 0; round < 2; round++) {
		smarm_value_t st[2] = { v_i32(SMARM_EXIT_NORMAL), v_i64(0) };
		smarm_value_t c = v_i64(5);
		smarm_server_t *s = NULL;
		smarm_signal_t sig = { 0 };
		smarm_pid_t pid;
		const char *want = round == 0 ? "term:0:0:1 destroy"
					      : "term:1:5:0 destroy";
		HARNESS_EQ(smarm_server_start(probe, "crashterm", NULL, &s), 0);
		HARNESS_EQ(smarm_server_pid(s, &pid), 0);
		HARNESS_EQ(smarm_monitor(pid, down, NULL), 0);
		if (round == 0)
			HARNESS_EQ(smarm_server_call(s, "stop", st, 2, NULL,
						     MS(5000)),
				   0);
		else
			HARNESS_EQ(smarm_server_cast(s, "crash", &c, 1), 0);
		HARNESS_EQ(harness_recv_sig(down, &sig), 0);
		HARNESS_EQ(sig.how, SMARM_EXIT_CRASHED);
		HARNESS_EQ(sig.reason, 4242);
		HARNESS_CHECK(strstr(await_events(want), want) != NULL);
		smarm_server_free(s);
	}
	harness_chan_drop(down);
}

/*
 * An error reply ({reply, {error, Reason}, State}): the call returns
 * SMARM_EREPLY with the reason, distinct from every transport failure;
 * the server goes on; only a call handler may answer so.
 */
static void reply_error_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_value_t a = v_i64(-77), r = { 0 };
	int64_t out = 5;
	(void)arg;
	events();
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_call(s, "err", &a, 1, &r, MS(5000)),
		   SMARM_EREPLY);
	HARNESS_EQ(r.type, SMARM_T_I64);
	HARNESS_EQ(r.v.i, -77);
	HARNESS_EQ(smarm_server_callv(s, "err", MS(5000), &out, (int64_t)3),
		   SMARM_EREPLY);
	HARNESS_EQ(out, 5); /* untouched */
	a = v_i64(8);
	HARNESS_EQ(smarm_server_call(s, "echo", &a, 1, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 8);
	HARNESS_EQ(smarm_server_cast(s, "errcast", NULL, 0), 0);
	HARNESS_CHECK(strstr(await_events("errcast"), "err:0 err:0 echo:8 "
						      "errcast:-3") != NULL);
	HARNESS_EQ(smarm_gs_reply_error(NULL, 1), SMARM_EINVAL);
	smarm_server_free(s);
}

START_TEST(test_gen_server_call_error_reply_is_its_own_status)
{
	ck_assert_int_eq(smarm_gs_reply_error(NULL, 1), SMARM_ENOTACTOR);
	ck_assert_int_eq(harness_run(2, reply_error_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/*
 * A typed stub of sixteen mixed arguments: the stub is one of the
 * runtime's register-saving thunks (behaviour/plugin.c, Typed stubs),
 * and every argument reaches the handler, whether it came in an integer
 * register (i8, u16, i64), a vector one (f64, f32) or on the stack
 * (bool, u32, the last f64s, the pid, the last i64). Asking again for
 * the stub gives the same function. A stub of another operation of the
 * same shape is another function.
 */
typedef int (*mix_fn)(smarm_server_t *, uint64_t, double *, int8_t, double,
		      uint16_t, float, int64_t, bool, double, uint32_t, double,
		      double, double, double, double, double, smarm_pid_t,
		      int64_t);

static void mix_root(void *arg)
{
	smarm_server_t *s = NULL;
	void (*fn)(void) = NULL, (*again)(void) = NULL, (*echo)(void) = NULL;
	smarm_pid_t p = { 0x1234 };
	double out = -1, want;
	(void)arg;
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_stub(probe, "mix", &fn), 0);
	HARNESS_EQ(smarm_server_stub(probe, "mix", &again), 0);
	HARNESS_CHECK(fn == again);
	HARNESS_EQ(smarm_server_stub(probe, "echo", &echo), 0);
	HARNESS_CHECK(echo != fn);
	want = -3 + 2 * 1.5 + 3 * 60000 + 4 * 0.25f + 5 * (double)-7e12 +
	       6 * 1 + 7 * 2.5 + 8 * 4000000000.0 + 9 * 3.0 + 10 * 4.0 +
	       11 * 5.0 + 12 * 6.0 + 13 * 7.0 + 14 * 8.0 + 15 * 0x1234 +
	       16 * (double)-99;
	HARNESS_EQ(((mix_fn)fn)(s, MS(5000), &out, -3, 1.5, 60000, 0.25f,
				-7000000000000, true, 2.5, 4000000000u, 3.0,
				4.0, 5.0, 6.0, 7.0, 8.0, p, -99),
		   0);
	if (out != want)
		fprintf(stderr, "mix: %.17g, want %.17g\n", out, want);
	HARNESS_CHECK(out == want);
	HARNESS_EQ(((mix_fn)fn)(NULL, MS(5000), &out, 0, 0, 0, 0, 0, false, 0,
				0, 0, 0, 0, 0, 0, 0, p, 0),
		   SMARM_EINVAL);
	smarm_server_free(s);
}

START_TEST(test_gen_server_stub_of_mixed_arguments)
{
	ck_assert_int_eq(harness_run(2, mix_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/*
 * A server that crashes in a handler is reported twice, in this order:
 * its server report (OTP's gen_server "terminating" report: which
 * server, the reason, the request it was handling) and its actor's
 * crash report. A server stopped normally is not reported.
 */
static pthread_mutex_t rep_mu = PTHREAD_MUTEX_INITIALIZER;
static char rep_text[4][SMARM_LOG_LINE_MAX + 1];
static int rep_kind[4], rep_n;

static void rep_handler(void *arg, const smarm_log_event_t *ev)
{
	(void)arg;
	pthread_mutex_lock(&rep_mu);
	if (rep_n < 4) {
		rep_kind[rep_n] = ev->kind;
		snprintf(rep_text[rep_n], sizeof rep_text[0], "%s", ev->text);
	}
	rep_n++;
	pthread_mutex_unlock(&rep_mu);
}

static void report_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_value_t why = v_i64(55);
	smarm_chan_t *down = harness_sig_chan();
	smarm_signal_t sig;
	smarm_pid_t pid;
	(void)arg;
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	HARNESS_EQ(smarm_monitor(pid, down, NULL), 0);
	HARNESS_EQ(smarm_server_cast(s, "crash", &why, 1), 0);
	HARNESS_EQ(harness_recv_sig(down, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_CRASHED);
	smarm_server_free(s);
	/* a normal stop: no report */
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_stop(s, SMARM_EXIT_NORMAL, 0, MS(5000), NULL,
				     NULL),
		   0);
	smarm_server_free(s);
	harness_chan_drop(down);
}

START_TEST(test_gen_server_crash_is_reported)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int how = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS,
					      harness_workers(2)),
			 0);
	ck_assert_int_eq(smarm_config_set_logger(cfg, rep_handler, NULL), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_node_run(node, report_root, NULL, &how, NULL),
			 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	harness_checks_assert();
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(rep_n, 2);
	ck_assert_int_eq(rep_kind[0], SMARM_REPORT_SERVER);
	ck_assert_msg(strstr(rep_text[0], "server report: actor ") ==
			      rep_text[0],
		      "%s", rep_text[0]);
	ck_assert_msg(strstr(rep_text[0], "gen_server 'probe'") != NULL, "%s",
		      rep_text[0]);
	ck_assert_msg(strstr(rep_text[0],
			     "terminating: crashed, reason 55, "
			     "while handling cast 'crash'") != NULL,
		      "%s", rep_text[0]);
	ck_assert_int_eq(rep_kind[1], SMARM_REPORT_CRASH);
	ck_assert_msg(strstr(rep_text[1], "crashed, reason 55") != NULL, "%s",
		      rep_text[1]);
}
END_TEST

/*
 * A server whose create or init fails is reported (OTP's crash report
 * of an init returning {stop, Reason}): which server, the callback and
 * what it returned; a start refused for a taken name is not (OTP's
 * {error, {already_started, Pid}} is silent). A plugin the loader
 * refuses, opened from an actor, is reported with its path and why.
 */
static char refused_msg[512];

static void initfail_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_plugin_t *bad = NULL;
	(void)arg;
	HARNESS_EQ(smarm_server_start(probe, "failinit", NULL, &s),
		   SMARM_EEXIST);
	HARNESS_EQ(smarm_server_start(probe, "badinit", NULL, &s),
		   SMARM_EBADRETURN);
	HARNESS_EQ(smarm_server_start(probe, "failcreate", NULL, &s),
		   SMARM_ENOENT);
	HARNESS_EQ(smarm_register("taken", NULL), 0);
	HARNESS_EQ(smarm_server_start(probe, NULL, "taken", &s), SMARM_EEXIST);
	HARNESS_EQ(smarm_plugin_open(getenv("SMARM_TEST_NOT_SO"), &bad,
				     refused_msg, sizeof refused_msg),
		   SMARM_EPLUGINOPEN);
}

START_TEST(test_gen_server_init_failure_and_refused_plugin_reported)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int how = -1;
	const char *not_so = getenv("SMARM_TEST_NOT_SO");
	rep_n = 0;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS,
					      harness_workers(2)),
			 0);
	ck_assert_int_eq(smarm_config_set_logger(cfg, rep_handler, NULL), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_node_run(node, initfail_root, NULL, &how, NULL),
			 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	harness_checks_assert();
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(rep_n, 4);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(rep_kind[i], SMARM_REPORT_SERVER);
		ck_assert_msg(strstr(rep_text[i], "server report: actor ") ==
				      rep_text[i],
			      "%s", rep_text[i]);
		ck_assert_msg(strstr(rep_text[i], "gen_server 'probe'") != NULL,
			      "%s", rep_text[i]);
	}
	ck_assert_msg(strstr(rep_text[0], "init failed, reason -6 "
					  "(SMARM_EEXIST)") != NULL,
		      "%s", rep_text[0]);
	ck_assert_msg(strstr(rep_text[1], "init failed, reason 12 (outside "
					  "its contract)") != NULL,
		      "%s", rep_text[1]);
	ck_assert_msg(strstr(rep_text[2], "create failed, reason") != NULL &&
			      strstr(rep_text[2], "(SMARM_ENOENT)") != NULL,
		      "%s", rep_text[2]);
	ck_assert_int_eq(rep_kind[3], SMARM_REPORT_PLUGIN);
	ck_assert_msg(strstr(rep_text[3], "plugin report: actor ") ==
			      rep_text[3],
		      "%s", rep_text[3]);
	ck_assert_ptr_nonnull(strstr(rep_text[3], not_so));
	ck_assert_ptr_nonnull(strstr(rep_text[3], refused_msg));
	ck_assert_ptr_nonnull(strstr(rep_text[3], "(SMARM_EPLUGINOPEN)"));
}
END_TEST

START_TEST(test_gen_server_terminate_crash_is_the_exit_reason)
{
	ck_assert_int_eq(harness_run(2, crashterm_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/*
 * gen_server_SUITE's stop1..stop4: smarm_server_stop with each how ends
 * the server with it (terminate gets it, may block), by pid and by
 * name, trapping or not; a second stop is noproc; the stop waits for
 * the running callback (a request in progress is answered, not
 * EDOWN); a timeout leaves the stop queued; terminate's crash is what
 * the stop returns.
 */
static void stop3_park(void *arg)
{
	(void)arg;
	harness_park();
}

static void stop3_root(void *arg)
{
	static const int hows[] = { SMARM_EXIT_NORMAL, SMARM_EXIT_SHUTDOWN,
				    SMARM_EXIT_CRASHED };
	smarm_value_t ns = v_u64(MS(100));
	smarm_server_t *s = NULL, *n = NULL;
	smarm_request_t *req = NULL;
	smarm_chan_t *down = harness_sig_chan();
	smarm_signal_t sig = { 0 };
	smarm_pid_t pid;
	intptr_t reason = -1;
	int how = -1;
	char want[64];
	(void)arg;
	events();
	for (size_t i = 0; i < 3; i++) {
		HARNESS_EQ(smarm_server_start(probe, i == 1 ? "trap" : NULL,
					      NULL, &s),
			   0);
		HARNESS_EQ(smarm_server_stop(s, hows[i], 70 + (int)i, MS(5000),
					     &how, &reason),
			   0);
		HARNESS_EQ(how, hows[i]);
		HARNESS_EQ(reason,
			   hows[i] == SMARM_EXIT_NORMAL ? 0 : 70 + (int)i);
		snprintf(want, sizeof want, "term:%d:%d:1 destroy", hows[i],
			 70 + (int)i);
		HARNESS_CHECK(strstr(await_events(want), want) != NULL);
		HARNESS_EQ(smarm_server_stop(s, SMARM_EXIT_NORMAL, 0, MS(5000),
					     NULL, NULL),
			   SMARM_ENOPROC);
		smarm_server_free(s);
	}
	/* By name; a name nobody holds is noproc. */
	HARNESS_EQ(smarm_server_start(probe, NULL, "stop.n", &s), 0);
	HARNESS_EQ(smarm_server_open_name(NULL, probe, "stop.n", &n), 0);
	HARNESS_EQ(smarm_server_stop(n, SMARM_EXIT_NORMAL, 0, MS(5000), &how,
				     NULL),
		   0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(smarm_server_stop(n, SMARM_EXIT_NORMAL, 0, MS(5000), NULL,
				     NULL),
		   SMARM_ENOPROC);
	smarm_server_free(n);
	smarm_server_free(s);
	events();
	/* It waits for the callback in progress, which finishes. */
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_send_request(s, "block", &ns, 1, &req), 0);
	HARNESS_CHECK(strstr(await_events("block"), "block") != NULL);
	HARNESS_EQ(smarm_server_stop(s, SMARM_EXIT_NORMAL, 0, MS(5000), &how,
				     NULL),
		   0);
	HARNESS_EQ(smarm_server_wait_response(req, NULL, 0), 0); /* freed */
	HARNESS_CHECK(strstr(await_events("unblock term:0:0:1 destroy"),
			     "unblock term:0:0:1 destroy") != NULL);
	smarm_server_free(s);
	/* A timeout: not killed, the stop stays queued and ends it. */
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	HARNESS_EQ(smarm_monitor(pid, down, NULL), 0);
	HARNESS_EQ(smarm_server_send_request(s, "block", &ns, 1, &req), 0);
	HARNESS_EQ(
		smarm_server_stop(s, SMARM_EXIT_SHUTDOWN, 5, MS(1), NULL, NULL),
		SMARM_ETIMEDOUT);
	HARNESS_EQ(harness_recv_sig(down, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(sig.reason, 5);
	HARNESS_EQ(smarm_server_wait_response(req, NULL, 0), 0); /* freed */
	smarm_server_free(s);
	/* terminate crashes: that is how it ended. */
	HARNESS_EQ(smarm_server_start(probe, "crashterm", NULL, &s), 0);
	HARNESS_EQ(smarm_server_stop(s, SMARM_EXIT_NORMAL, 0, MS(5000), &how,
				     &reason),
		   0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(reason, 4242);
	HARNESS_EQ(smarm_server_stop(s, SMARM_EXIT_STOPPED, 0, MS(5000), NULL,
				     NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_stop(NULL, SMARM_EXIT_NORMAL, 0, MS(5000), NULL,
				     NULL),
		   SMARM_EINVAL);
	smarm_server_free(s);
	/* A live actor that is no server: noproc at once, no wait for an
	 * end that would never come. */
	HARNESS_EQ(smarm_actor_spawn(&pid, stop3_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_server_open(NULL, probe, pid, &s), 0);
	HARNESS_EQ(smarm_server_stop(s, SMARM_EXIT_NORMAL, 0, SMARM_NO_TIMEOUT,
				     NULL, NULL),
		   SMARM_ENOPROC);
	HARNESS_CHECK(smarm_actor_is_alive(pid));
	HARNESS_EQ(smarm_actor_stop(pid), 0);
	HARNESS_EQ(smarm_actor_join(pid, NULL, NULL), 0);
	smarm_server_free(s);
	events();
	harness_chan_drop(down);
}

START_TEST(test_gen_server_stop1_stop4_stop_with_reason)
{
	ck_assert_int_eq(harness_run(2, stop3_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------- stop_with_queued_call */

static void echo_caller(void *arg)
{
	struct caller *c = arg;
	smarm_value_t a = v_i64(5), r;
	caller_ready(c);
	int rc = smarm_server_call(c->s, "echo", &a, 1, &r, MS(10000));
	int64_t pair[2] = { 0, rc }; /* one element: callers do not mix */
	smarm_chan_send(c->out, pair);
}

static void block_caller(void *arg)
{
	struct caller *c = arg;
	smarm_value_t a = v_u64(MS(60000));
	caller_ready(c);
	int rc = smarm_server_call(c->s, "block", &a, 1, NULL, MS(10000));
	int64_t pair[2] = { 1, rc };
	smarm_chan_send(c->out, pair);
}

static void queued_root(void *arg)
{
	smarm_chan_t *out, *ready;
	smarm_server_t *s = NULL, *s1 = NULL, *s2 = NULL;
	struct caller c1, c2;
	int64_t who, pair[2];
	int how = -1;
	uint64_t t0;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&out, sizeof pair, NULL), 0);
	HARNESS_EQ(smarm_server_start(probe, NULL, "queued", &s), 0);
	HARNESS_EQ(smarm_server_open_name(NULL, probe, "queued", &s1), 0);
	HARNESS_EQ(smarm_server_open_name(NULL, probe, "queued", &s2), 0);
	HARNESS_EQ(smarm_chan_alloc(&ready, 8, NULL), 0);
	c1.s = s1;
	c1.out = out;
	c1.ready = ready;
	c2.s = s2;
	c2.out = out;
	c2.ready = ready;
	/* each call is sent right after its ready; the sleeps let it land */
	HARNESS_EQ(smarm_actor_spawn(NULL, block_caller, &c1, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(ready, &who), 0);
	smarm_actor_sleep(MS(20));
	HARNESS_EQ(smarm_actor_spawn(NULL, echo_caller, &c2, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(ready, &who), 0);
	smarm_actor_sleep(MS(20));
	t0 = smarm_now_ns();
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), &how), 0);
	HARNESS_EQ(how, SMARM_EXIT_SHUTDOWN);
	for (int i = 0; i < 2; i++) {
		HARNESS_EQ(smarm_chan_recv(out, pair), 0);
		HARNESS_EQ(pair[1], SMARM_EDOWN);
	}
	HARNESS_CHECK(harness_since(t0) < MS(3000));
	EVENTS_ARE("init block term:3:0:0 destroy");
	smarm_server_free(s);
	smarm_server_free(s1);
	smarm_server_free(s2);
	harness_chan_drop(out);
	harness_chan_drop(ready);
}

START_TEST(test_gen_server_stop_with_queued_call)
{
	ck_assert_int_eq(harness_run(4, queued_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* --------------------------------------------------- trapping */

static void trap_root(void *arg)
{
	smarm_chan_t *down = harness_sig_chan();
	smarm_server_t *s = start("trap", down);
	smarm_value_t e = v_i64(3), r;
	smarm_value_t st[2] = { v_i32(SMARM_EXIT_NORMAL), v_i64(0) };
	smarm_signal_t sig;
	smarm_pid_t pid;
	int how = -1;
	(void)arg;
	/* trapping only in init */
	HARNESS_EQ(smarm_server_call(s, "trap_late", NULL, 0, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, SMARM_ESTATE);
	/* handle_shutdown EXIT: it ends on the shutdown, SHUTDOWN (OTP's
	 * {stop, shutdown}); terminate may block (a clean end) */
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), &how), 0);
	HARNESS_EQ(how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(harness_recv_sig(down, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_SHUTDOWN);
	EVENTS_ARE("init shutdown term:3:0:1 destroy");
	smarm_server_free(s);

	/* handle_shutdown CONTINUE: keeps serving, then stops itself */
	s = start("trap,continue", down);
	HARNESS_EQ(smarm_server_shutdown(s, MS(50), &how), SMARM_ETIMEDOUT);
	HARNESS_EQ(smarm_server_call(s, "echo", &e, 1, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 3);
	/* another exit signal reaches handle_exit */
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	HARNESS_EQ(smarm_actor_send_exit(pid, SMARM_EXIT_CRASHED, 5), 0);
	HARNESS_EQ(smarm_server_call(s, "echo", &e, 1, &r, MS(5000)), 0);
	HARNESS_EQ(smarm_server_call(s, "stop", st, 2, NULL, MS(5000)), 0);
	HARNESS_EQ(harness_recv_sig(down, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_NORMAL);
	/* (the exit signal's delivery is asynchronous: it may come after
	 * the next call) */
	const char *ev = events();
	HARNESS_CHECK(strncmp(ev, "init shutdown echo:3 ", 21) == 0);
	HARNESS_CHECK(strstr(ev, " exit:1 ") != NULL);
	HARNESS_CHECK(strstr(ev, "stop:0 term:0:0:1 destroy") != NULL);
	smarm_server_free(s);
	harness_chan_drop(down);
}

/*
 * A server on the select path (it traps exits) parks while nothing
 * comes: before the fix its wait failed at once (SMARM_EINVAL, no index
 * out-parameter) and it spun, using 25-40% of a CPU while idle.
 */
static uint64_t cpu_ns(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return (uint64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000u +
	       (uint64_t)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000u;
}

static void idle_trap_root(void *arg)
{
	smarm_server_t *s = start("trap", NULL);
	uint64_t c0;
	(void)arg;
	smarm_actor_sleep(MS(20)); /* let it reach its wait */
	c0 = cpu_ns();
	smarm_actor_sleep(MS(300));
	/* an idle node uses ~1 ms here; a spinning server 70-120 ms */
	HARNESS_CHECK(cpu_ns() - c0 < MS(30));
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

START_TEST(test_gen_server_trapping_server_parks_when_idle)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, idle_trap_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

START_TEST(test_gen_server_trap_handle_shutdown)
{
	ck_assert_int_eq(harness_run(2, trap_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/*
 * A supervised transient trapping server that ends on a shutdown
 * signal (handle_shutdown EXIT): its supervisor and monitors see
 * SHUTDOWN, terminate gets it, and it is not restarted (not abnormal).
 */
static void trap_sup_root(void *arg)
{
	smarm_chan_t *down = harness_sig_chan();
	smarm_sup_spec_t *spec = NULL;
	smarm_pid_t sup = SMARM_PID_NONE, kid;
	smarm_signal_t sig;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&spec), 0);
	HARNESS_EQ(smarm_sup_spec_add_server(spec, "t", probe, "trap", "tp",
					     SMARM_SUP_TRANSIENT, MS(1000),
					     MS(5000)),
		   0);
	HARNESS_EQ(smarm_sup_start(spec, &sup), 0);
	smarm_sup_spec_free(spec);
	kid = sup_kid(sup);
	HARNESS_EQ(smarm_monitor(kid, down, NULL), 0);
	HARNESS_EQ(smarm_actor_send_exit(kid, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_EQ(harness_recv_sig(down, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(smarm_pid_eq(sup_kid_after(sup, kid), SMARM_PID_NONE));
	EVENTS_ARE("init shutdown term:3:0:1 destroy");
	HARNESS_EQ(smarm_monitor(sup, down, NULL), 0);
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_EQ(harness_recv_sig(down, &sig), 0);
	harness_chan_drop(down);
}

START_TEST(test_gen_server_trapped_shutdown_ends_shutdown)
{
	ck_assert_int_eq(harness_run(4, trap_sup_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/*
 * terminate where it must not block (a kill, a crash, an untrapped
 * shutdown: may_block false): each of its calls that would park (a
 * receive, a sleep of 2.5 s, a call, a join, a pool job, a select) is
 * SMARM_EAGAIN at once and the end is prompt, while those that need not
 * park (try_recv, a receive of a queued element, a name lookup) work.
 * After a clean stop (may_block true) the same calls wait and succeed.
 */
static void noblock_root(void *arg)
{
	static const char *const want[4] = {
		"init term:2:0:0 bt:-5:-5:-5:-5:-5:-5|0:0:0 destroy",
		"init term:1:9:0 bt:-5:-5:-5:-5:-5:-5|0:0:0 destroy",
		"init term:3:0:0 bt:-5:-5:-5:-5:-5:-5|0:0:0 destroy",
		"init stop:0 term:0:0:1 bt:-4:0:0:0:0:-4|0:0:0 destroy",
	};
	static const int hows[4] = { SMARM_EXIT_STOPPED, SMARM_EXIT_CRASHED,
				     SMARM_EXIT_SHUTDOWN, SMARM_EXIT_NORMAL };
	const smarm_behaviour_t *peer = NULL;
	smarm_chan_t *down = harness_sig_chan();
	smarm_server_t *pp = NULL;
	(void)arg;
	HARNESS_EQ(smarm_plugin_behaviour(pl, "peer", &peer), 0);
	HARNESS_EQ(smarm_server_start(peer, NULL, "pp", &pp), 0);
	for (int i = 0; i < 4; i++) {
		smarm_server_t *s = start("blockterm", down);
		smarm_value_t c = v_i64(9);
		smarm_value_t st[2] = { v_i32(SMARM_EXIT_NORMAL), v_i64(0) };
		smarm_signal_t sig;
		smarm_pid_t pid;
		uint64_t t0;
		int how = -1;
		HARNESS_EQ(smarm_server_pid(s, &pid), 0);
		t0 = smarm_now_ns();
		if (i == 0)
			HARNESS_EQ(smarm_actor_stop(pid), 0);
		else if (i == 1)
			HARNESS_EQ(smarm_server_cast(s, "crash", &c, 1), 0);
		else if (i == 2)
			HARNESS_EQ(smarm_server_shutdown(s, MS(5000), &how), 0);
		else
			HARNESS_EQ(smarm_server_call(s, "stop", st, 2, NULL,
						     MS(5000)),
				   0);
		HARNESS_EQ(harness_recv_sig(down, &sig), 0);
		HARNESS_EQ(sig.how, hows[i]);
		if (i < 3)
			HARNESS_CHECK(harness_since(t0) < MS(2000));
		const char *got = events();
		if (strcmp(got, want[i]) != 0)
			fprintf(stderr, "noblock %d: \"%s\", want \"%s\"\n", i,
				got, want[i]);
		HARNESS_CHECK(strcmp(got, want[i]) == 0);
		smarm_server_free(s);
	}
	HARNESS_EQ(smarm_server_shutdown(pp, MS(5000), NULL), 0);
	smarm_server_free(pp);
	harness_chan_drop(down);
}

START_TEST(test_gen_server_terminate_may_not_block)
{
	ck_assert_int_eq(harness_run(4, noblock_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/*
 * A request to itself (OTP's send_request(self(), Req)): sent from a
 * handler, not waited for there (SMARM_ECALLSELF at once, bounded or
 * not; the request stays pending), a poll says not yet, and a later
 * callback (a cast it sent itself, queued after the request) picks the
 * reply up with a poll.
 */
static void req_self_root(void *arg)
{
	smarm_server_t *s = start(NULL, NULL);
	smarm_value_t a = v_i64(41), e = v_i64(1), r;
	(void)arg;
	HARNESS_EQ(smarm_server_call(s, "req_self", &a, 1, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 0);
	HARNESS_EQ(smarm_server_call(s, "echo", &e, 1, &r, MS(5000)), 0);
	EVENTS_ARE("init rs:0:-314:-314:-4:1:0 echo:41 check:0:41 echo:1");
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	events();
	smarm_server_free(s);
}

START_TEST(test_gen_server_request_to_self)
{
	ck_assert_int_eq(harness_run(2, req_self_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---------------------------- downs, send order of infos, idle */

static void sleeper(void *arg)
{
	(void)arg;
	smarm_actor_sleep(MS(30));
}

static void bands_root(void *arg)
{
	smarm_chan_t *down = harness_sig_chan();
	smarm_server_t *s = start(NULL, down);
	smarm_value_t p, r, n = v_i64(1), b = v_u64(MS(50)), e = v_i64(2);
	smarm_pid_t kid;
	smarm_signal_t sig;
	(void)arg;
	HARNESS_CHECK(strcmp(events(), "init") == 0);
	HARNESS_EQ(smarm_actor_spawn(&kid, sleeper, NULL, NULL), 0);
	smarm_actor_detach(kid);
	memset(&p, 0, sizeof p);
	p.type = SMARM_T_PID;
	p.v.pid = kid;
	HARNESS_EQ(smarm_server_call(s, "monitor", &p, 1, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 0);
	smarm_actor_sleep(MS(100));
	/* block it, queue a cast and then an info: served in that order */
	HARNESS_EQ(smarm_server_cast(s, "block", &b, 1), SMARM_EOPKIND);
	HARNESS_EQ(smarm_server_info(s, "cnote", &n, 1), SMARM_EOPKIND);
	HARNESS_EQ(smarm_server_call(s, "echo", &e, 1, &r, MS(5000)), 0);
	EVENTS_ARE("down:0 echo:2");
	smarm_server_free(s);
	harness_chan_drop(down);
	(void)sig;
}

struct blocker {
	smarm_server_t *s;
	uint64_t ns;
	int want;	    /* the block call's status */
	smarm_chan_t *done; /* told when it is over (b lives on the root's
			       stack until then) */
};

static void block_once(void *arg)
{
	struct blocker *b = arg;
	smarm_value_t a = v_u64(b->ns);
	int rc = smarm_server_call(b->s, "block", &a, 1, NULL, MS(10000));
	int64_t one = 1;
	if (rc != b->want)
		fprintf(stderr, "block: %d, want %d\n", rc, b->want);
	HARNESS_EQ(rc, b->want);
	HARNESS_EQ(smarm_chan_send(b->done, &one), 0);
}

/* Wait until block_once of b is over and drop its channel. */
static void blocker_join(struct blocker *b)
{
	int64_t one;
	HARNESS_EQ(smarm_chan_recv(b->done, &one), 0);
	harness_chan_drop(b->done);
}

static void priority_root(void *arg)
{
	smarm_server_t *s = start(NULL, NULL), *mine = NULL;
	smarm_value_t n = v_i64(1), m = v_i64(2), r;
	static struct blocker b; /* block_once may run on after we end */
	smarm_pid_t pid;
	(void)arg;
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	HARNESS_EQ(smarm_server_open(NULL, probe, pid, &mine), 0);
	b.s = mine;
	b.ns = MS(1000); /* what follows is queued while it blocks */
	b.want = 0;
	HARNESS_EQ(smarm_chan_alloc(&b.done, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, block_once, &b, NULL), 0);
	/* In the block (a sleep here raced a loaded machine). */
	HARNESS_CHECK(strcmp(await_events("block"), "init block") == 0);
	HARNESS_EQ(smarm_server_cast(s, "cnote", &n, 1), 0);
	HARNESS_EQ(smarm_server_info(s, "note", &m, 1), 0);
	HARNESS_EQ(smarm_server_call(s, "echo", &n, 1, &r, MS(5000)), 0);
	EVENTS_ARE("unblock cnote:1 note:2 echo:1");
	blocker_join(&b);
	smarm_server_free(mine);
	smarm_server_free(s);
}

START_TEST(test_gen_server_downs_and_info_priority)
{
	ck_assert_int_eq(harness_run(2, priority_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	events(); /* the end of that run */
	ck_assert_int_eq(harness_run(2, bands_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* Accumulate the probe's events until want is in them (5 s at most). */
static char acc[8192];
static const char *await_events(const char *want)
{
	uint64_t t0 = smarm_now_ns();
	acc[0] = '\0';
	while (strstr(acc, want) == NULL && harness_since(t0) < MS(5000)) {
		const char *ev = events();
		if (ev[0] != '\0' &&
		    strlen(acc) + strlen(ev) + 2 < sizeof acc) {
			if (acc[0] != '\0')
				strcat(acc, " ");
			strcat(acc, ev);
		}
		smarm_actor_sleep(MS(5));
	}
	return acc;
}

static void idle_root(void *arg)
{
	smarm_server_t *s = start("idle", NULL);
	smarm_value_t e = v_i64(4), r;
	(void)arg;
	/* windows of 20 ms pass with no message: idle, again and again */
	HARNESS_CHECK(strncmp(await_events("init idle idle"), "init idle idle",
			      14) == 0);
	HARNESS_EQ(smarm_server_call(s, "echo", &e, 1, &r, MS(5000)), 0);
	HARNESS_CHECK(strstr(await_events("echo:4"), "echo:4") != NULL);
	smarm_server_free(s);
}

START_TEST(test_gen_server_idle_window_fires_repeatedly)
{
	ck_assert_int_eq(harness_run(2, idle_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------ timers */

static void timer_root(void *arg)
{
	smarm_server_t *s = start(NULL, NULL);
	smarm_value_t a[2] = { v_u64(MS(10)), v_u64(0) }, r;
	const char *ev;
	(void)arg;
	HARNESS_EQ(smarm_server_call(s, "tick_after", a, 2, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 0);
	HARNESS_CHECK(strcmp(await_events("note:10000000"),
			     "init note:10000000") == 0);
	HARNESS_EQ(smarm_server_call(s, "tick_cancel", NULL, 0, &r, MS(5000)),
		   0);
	HARNESS_EQ(r.v.i, SMARM_ENOENT); /* a one-shot that fired */
	/* periodic: fires again and again until cancelled */
	a[0] = v_u64(MS(5));
	a[1] = v_u64(MS(5));
	HARNESS_EQ(smarm_server_call(s, "tick_after", a, 2, &r, MS(5000)), 0);
	ev = await_events("note:5000000 note:5000000 note:5000000");
	HARNESS_CHECK(
		strncmp(ev, "note:5000000 note:5000000 note:5000000", 38) == 0);
	HARNESS_EQ(smarm_server_call(s, "tick_cancel", NULL, 0, &r, MS(5000)),
		   0);
	HARNESS_EQ(r.v.i, 0);
	events(); /* ticks queued before the cancel */
	smarm_actor_sleep(MS(30));
	EVENTS_ARE(""); /* none after the cancel */
	/* a pending timer is cancelled when the server ends */
	a[0] = v_u64(MS(20));
	a[1] = v_u64(0);
	HARNESS_EQ(smarm_server_call(s, "tick_after", a, 2, &r, MS(5000)), 0);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_actor_sleep(MS(40));
	EVENTS_ARE("term:3:0:0 destroy");
	smarm_server_free(s);
}

START_TEST(test_gen_server_timers)
{
	ck_assert_int_eq(harness_run(2, timer_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------- sends to itself, siblings */

/*
 * From inside a handler, a handle to the server itself: the cast, the
 * info and the castv are queued and served after the handler, in the
 * order they were sent; the call and the shutdown are SMARM_ECALLSELF.
 */
static void self_root(void *arg)
{
	smarm_server_t *s = start(NULL, NULL);
	smarm_value_t a = v_i64(5), e = v_i64(1), r;
	(void)arg;
	HARNESS_EQ(smarm_server_call(s, "self_send", &a, 1, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 0);
	HARNESS_EQ(smarm_server_call(s, "echo", &e, 1, &r, MS(5000)), 0);
	EVENTS_ARE("init self:0:0:0:-314:-314:0 cnote:5 note:6 cnote:7 "
		   "echo:1");
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	events();
	smarm_server_free(s);
}

START_TEST(test_gen_server_cast_and_info_to_self)
{
	ck_assert_int_eq(harness_run(2, self_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/*
 * smarm_gs_behaviour: a probe finds its sibling behaviour "peer" by
 * name, opens a handle to the peer server registered as "pp" and calls
 * it from its handler; a name that is no behaviour is SMARM_ENOBEHAVIOUR, out
 * NULL SMARM_EINVAL; a context that is not the caller's server
 * SMARM_EINVAL; outside an actor SMARM_ENOTACTOR.
 */
static void sibling_root(void *arg)
{
	const smarm_behaviour_t *peer = NULL, *b = NULL;
	smarm_server_t *s = start(NULL, NULL), *p = NULL;
	smarm_value_t a[2], r;
	(void)arg;
	HARNESS_EQ(smarm_plugin_behaviour(pl, "peer", &peer), 0);
	HARNESS_EQ(smarm_server_start(peer, NULL, "pp", &p), 0);
	memset(a, 0, sizeof a);
	a[0].type = SMARM_T_STR;
	a[0].v.p = "pp";
	a[0].len = 2;
	a[1] = v_i64(5);
	HARNESS_EQ(smarm_server_call(s, "peer_call", a, 2, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 1005);
	/* no server of that name: the peer's handle says so */
	a[0].v.p = "zz";
	HARNESS_EQ(smarm_server_call(s, "peer_call", a, 2, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, -1);
	EVENTS_ARE("init peer:0:0:0:-309:-1 peer:0:0:-110:-309:-1");
	HARNESS_EQ(smarm_gs_behaviour(NULL, NULL, &b), SMARM_EINVAL);
	HARNESS_EQ(smarm_gs_behaviour((smarm_gs_ctx_t *)&b, NULL, &b),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_shutdown(p, MS(5000), NULL), 0);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	events();
	smarm_server_free(p);
	smarm_server_free(s);
}

START_TEST(test_gen_server_behaviour_of_a_sibling)
{
	const smarm_behaviour_t *b = NULL;
	ck_assert_int_eq(smarm_gs_behaviour(NULL, NULL, &b), SMARM_ENOTACTOR);
	ck_assert_int_eq(harness_run(2, sibling_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------ start failures */

static void fail_root(void *arg)
{
	smarm_server_t *s = (void *)0x1;
	(void)arg;
	HARNESS_EQ(smarm_server_start(probe, "failcreate", NULL, &s),
		   SMARM_ENOENT);
	EVENTS_ARE("");
	HARNESS_EQ(smarm_server_start(probe, "failinit", "f", &s),
		   SMARM_EEXIST);
	EVENTS_ARE("init destroy"); /* no terminate after a failed init */
	/* the name was given back */
	HARNESS_EQ(smarm_server_start(probe, NULL, "f", &s), 0);
	smarm_server_free(s);
}

/*
 * loop_start_fail and start's {timeout, T}: the outcome of a failed
 * start says what it was (init's status, a value outside init's
 * contract, a crash's reason); a start that times out kills the
 * half-started server (destroy runs, terminate does not) and frees
 * its name.
 */
static void start_ex_root(void *arg)
{
	smarm_server_t *s = (void *)0x1;
	intptr_t why = -1;
	uint64_t t0;
	(void)arg;
	events();
	HARNESS_EQ(smarm_server_start_ex(probe, "failinit", NULL, MS(5000), &s,
					 &why),
		   SMARM_EEXIST);
	HARNESS_EQ(why, SMARM_EEXIST);
	HARNESS_EQ(smarm_server_start_ex(probe, "badinit", NULL, MS(5000), &s,
					 &why),
		   SMARM_EBADRETURN);
	HARNESS_EQ(why, 12);
	HARNESS_EQ(smarm_server_start(probe, "badinit", NULL, &s),
		   SMARM_EBADRETURN);
	HARNESS_EQ(smarm_server_start_ex(probe, "crashinit", NULL, MS(5000), &s,
					 &why),
		   SMARM_EDOWN);
	HARNESS_EQ(why, 77);
	events();
	t0 = smarm_now_ns();
	HARNESS_EQ(smarm_server_start_ex(probe, "slowinit", "slow", MS(50), &s,
					 &why),
		   SMARM_ETIMEDOUT);
	HARNESS_CHECK(harness_since(t0) < MS(5000) * harness_time_scale());
	HARNESS_CHECK(strstr(await_events("init destroy"), "init destroy") !=
		      NULL);
	/* Killed: the name is free again once it is gone. */
	t0 = smarm_now_ns();
	while (smarm_server_start(probe, NULL, "slow", &s) == SMARM_EEXIST &&
	       harness_since(t0) < MS(5000) * harness_time_scale())
		smarm_actor_sleep(MS(1));
	HARNESS_EQ(smarm_server_stop(s, SMARM_EXIT_NORMAL, 0, MS(5000), NULL,
				     NULL),
		   0);
	smarm_server_free(s);
	HARNESS_EQ(smarm_server_start_ex(probe, NULL, NULL, MS(5000), &s, &why),
		   0);
	HARNESS_EQ(why, 0);
	smarm_server_free(s);
	events();
}

START_TEST(test_gen_server_loop_start_fail_and_start_timeout)
{
	ck_assert_int_eq(harness_run(2, start_ex_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}

START_TEST(test_gen_server_start_failures)
{
	ck_assert_int_eq(harness_run(2, fail_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* --------------------------------- supervised start failure */

static void supfail_root(void *arg)
{
	smarm_sup_spec_t *spec = NULL;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&spec), 0);
	HARNESS_EQ(smarm_sup_spec_add_server(spec, "p", probe, "failinit", "pf",
					     SMARM_SUP_PERMANENT, MS(1000),
					     MS(5000)),
		   0);
	HARNESS_EQ(smarm_sup_start(spec, NULL), SMARM_EEXIST);
	smarm_sup_spec_free(spec);
	events();
}

START_TEST(test_gen_server_supervised_init_failure)
{
	ck_assert_int_eq(harness_run(2, supfail_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------ stop with a batch of queued calls */

/*
 * The server takes queued inbox messages in batches. Calls queued
 * behind a long one are taken together with it; when the server is
 * shut down in the long one, those taken but not served are answered
 * SMARM_EDOWN like calls still in the inbox.
 */
static void batch_root(void *arg)
{
	smarm_server_t *s = start(NULL, NULL), *h[4] = { NULL };
	struct caller c[3];
	struct blocker b;
	smarm_chan_t *out, *ready;
	int64_t pair[2], who;
	smarm_pid_t pid;
	uint64_t t0;
	int how = -1;
	(void)arg;
	if (s == NULL)
		return;
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	for (int i = 0; i < 4; i++)
		HARNESS_EQ(smarm_server_open(NULL, probe, pid, &h[i]), 0);
	HARNESS_EQ(smarm_chan_alloc(&out, sizeof pair, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&ready, sizeof who, NULL), 0);
	b.s = h[0];
	b.ns = MS(300);
	b.want = 0;
	HARNESS_EQ(smarm_chan_alloc(&b.done, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, block_once, &b, NULL), 0);
	/* The server is in the first block. */
	HARNESS_CHECK(strstr(await_events("block"), "block") != NULL);
	for (int i = 0; i < 3; i++) {
		c[i].s = h[i + 1];
		c[i].out = out;
		c[i].ready = ready;
		HARNESS_EQ(smarm_actor_spawn(
				   NULL, i == 0 ? block_caller : echo_caller,
				   &c[i], NULL),
			   0);
		HARNESS_EQ(smarm_chan_recv(ready, &who), 0);
	}
	blocker_join(&b); /* then it took the three queued calls at once */
	smarm_actor_sleep(MS(50));
	t0 = smarm_now_ns();
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), &how), 0);
	HARNESS_EQ(how, SMARM_EXIT_SHUTDOWN);
	for (int i = 0; i < 3; i++) {
		HARNESS_EQ(smarm_chan_recv_timeout(out, pair, MS(5000)), 0);
		HARNESS_EQ(pair[1], SMARM_EDOWN);
	}
	HARNESS_CHECK(harness_since(t0) < MS(3000));
	for (int i = 0; i < 4; i++)
		smarm_server_free(h[i]);
	smarm_server_free(s);
	harness_chan_drop(out);
	harness_chan_drop(ready);
}

START_TEST(test_gen_server_stop_answers_a_taken_batch)
{
	ck_assert_int_eq(harness_run(4, batch_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* -------------------------------- unload with a queued message */

static void unload_root(void *arg)
{
	smarm_server_t *s = start(NULL, NULL), *mine = NULL;
	smarm_value_t n = v_i64(1);
	struct blocker b;
	smarm_pid_t pid;
	(void)arg;
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	HARNESS_EQ(smarm_server_open(NULL, probe, pid, &mine), 0);
	b.s = mine;
	b.ns = MS(60000);
	b.want = SMARM_EDOWN;
	HARNESS_EQ(smarm_chan_alloc(&b.done, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, block_once, &b, NULL), 0);
	/* In the block (a sleep here raced a loaded machine). */
	HARNESS_CHECK(strstr(await_events("block"), "block") != NULL);
	HARNESS_EQ(smarm_server_cast(s, "cnote", &n, 1), 0); /* queued */
	HARNESS_EQ(smarm_plugin_close(pl), 0);
	pl = NULL;
	smarm_server_free(s); /* no handle of ours keeps it */
	/* a kill: the queued cast's envelope is destroyed, the plugin
	 * unloads after the last reference (the blocked caller's handle) */
	HARNESS_EQ(smarm_actor_stop(pid), 0);
	blocker_join(&b);
	smarm_server_free(mine);
}

START_TEST(test_gen_server_unload_with_queued_message)
{
	ck_assert_int_eq(harness_run(2, unload_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_ptr_null(
		dlopen(getenv("SMARM_TEST_PROBE"), RTLD_NOW | RTLD_NOLOAD));
}
END_TEST

/* ---------------------------------------------- the queue's bound */

/*
 * A server bounded to 4 queued requests (smarm_gs_set_queue_limit),
 * kept busy in a call: 4 casts queue, the fifth cast, an info and a
 * call are refused at once with SMARM_EFULL (nothing queued, nothing
 * lost); once it drains, the 4 are served in order and sends succeed
 * again. Outside a server the call is SMARM_EINVAL.
 */
static void qlimit_root(void *arg)
{
	smarm_server_t *s = start("qlimit", NULL), *mine = NULL;
	smarm_value_t v, r;
	static struct blocker b; /* block_once may run on after we end */
	smarm_pid_t pid;
	(void)arg;
	if (s == NULL)
		return;
	HARNESS_CHECK(strcmp(events(), "init qlimit:0") == 0);
	HARNESS_EQ(smarm_gs_set_queue_limit(NULL, 4), SMARM_EINVAL);
	{ /* (and a stub of an info: there is none) */
		void (*fn)(void) = NULL;
		HARNESS_EQ(smarm_server_stub(probe, "note", &fn),
			   SMARM_EOPKIND);
	}
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	HARNESS_EQ(smarm_server_open(NULL, probe, pid, &mine), 0);
	b.s = mine;
	b.ns = MS(2000); /* long beside the next lines, even under ASan */
	b.want = 0;
	HARNESS_EQ(smarm_chan_alloc(&b.done, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, block_once, &b, NULL), 0);
	HARNESS_CHECK(strstr(await_events("block"), "block") != NULL);
	for (int64_t i = 0; i < 4; i++) {
		v = v_i64(i);
		HARNESS_EQ(smarm_server_cast(s, "cnote", &v, 1), 0);
	}
	v = v_i64(4);
	HARNESS_EQ(smarm_server_cast(s, "cnote", &v, 1), SMARM_EFULL);
	HARNESS_EQ(smarm_server_info(s, "note", &v, 1), SMARM_EFULL);
	HARNESS_EQ(smarm_server_call(s, "echo", &v, 1, &r, MS(5000)),
		   SMARM_EFULL);
	blocker_join(&b);
	v = v_i64(7);
	HARNESS_EQ(smarm_server_call(s, "echo", &v, 1, &r, MS(5000)), 0);
	EVENTS_ARE("unblock cnote:0 cnote:1 cnote:2 cnote:3 echo:7");
	HARNESS_EQ(smarm_server_shutdown(s, MS(10000), NULL), 0);
	smarm_server_free(mine);
	smarm_server_free(s);
}

START_TEST(test_gen_server_queue_limit_refuses_with_efull)
{
	ck_assert_int_eq(harness_run(2, qlimit_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_gen_server_ctx_suite(void)
{
	Suite *s = suite_create("gen_server_ctx");
	TCase *tc = tcase_create("ctx");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_gen_server_deferred_reply);
	tcase_add_test(tc, test_gen_server_token_answered_once);
	tcase_add_test(tc, test_gen_server_continue_and_stop_with_reason);
	tcase_add_test(tc, test_gen_server_stop_with_queued_call);
	tcase_add_test(tc, test_gen_server_trap_handle_shutdown);
	tcase_add_test(tc, test_gen_server_trapped_shutdown_ends_shutdown);
	tcase_add_test(tc, test_gen_server_terminate_may_not_block);
	tcase_add_test(tc, test_gen_server_terminate_crash_is_the_exit_reason);
	tcase_add_test(tc, test_gen_server_call_error_reply_is_its_own_status);
	tcase_add_test(tc, test_gen_server_stub_of_mixed_arguments);
	tcase_add_test(tc, test_gen_server_crash_is_reported);
	tcase_add_test(
		tc, test_gen_server_init_failure_and_refused_plugin_reported);
	tcase_add_test(tc, test_gen_server_stop1_stop4_stop_with_reason);
	tcase_add_test(tc, test_gen_server_loop_start_fail_and_start_timeout);
	tcase_add_test(tc, test_gen_server_request_to_self);
	tcase_add_test(tc, test_gen_server_trapping_server_parks_when_idle);
	tcase_add_test(tc, test_gen_server_downs_and_info_priority);
	tcase_add_test(tc, test_gen_server_idle_window_fires_repeatedly);
	tcase_add_test(tc, test_gen_server_timers);
	tcase_add_test(tc, test_gen_server_stop_how_is_the_actor_end);
	tcase_add_test(tc, test_gen_server_cast_and_info_to_self);
	tcase_add_test(tc, test_gen_server_behaviour_of_a_sibling);
	tcase_add_test(tc, test_gen_server_start_failures);
	tcase_add_test(tc, test_gen_server_supervised_init_failure);
	tcase_add_test(tc, test_gen_server_unload_with_queued_message);
	tcase_add_test(tc, test_gen_server_queue_limit_refuses_with_efull);
	tcase_add_test(tc, test_gen_server_stop_answers_a_taken_batch);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(gen_server_ctx)
