/* SPDX-License-Identifier: MIT */
/*
 * probe.c - the "probe" gen_server behaviour for test_gen_server_ctx.c:
 * each callback appends an event to a process-wide log the suite reads
 * through probe_events() (a plain export of this test plugin), and its
 * operations reach every context call: deferred replies, continue, stop
 * with reason, monitors, timers, blocking handlers, sends to itself, a
 * request to itself picked up by a later callback (req_self, check),
 * a crash, a fault in the plugin's own code (segv, for
 * test_stack_diag.c's report), and calls to its sibling behaviour "peer" (ping,
 * nap) through handles opened inside.
 *
 * Start arguments: a comma-separated set of words: "trap" (trap exits
 * in init), "continue" (handle_shutdown keeps serving), "idle" (a 20 ms
 * idle window), "qlimit" (a queue bound of 4, logged "qlimit:<status>"),
 * "failinit" (init fails with SMARM_EEXIST), "failcreate" (create fails with
 * SMARM_ENOENT), "blockterm" (terminate makes blocking and non-blocking calls
 * and logs their statuses: see term_calls; needs a "peer" server registered as
 * "pp"), "crashterm" (terminate crashes with 4242 after logging), "slowinit"
 * (init sleeps 10 s), "crashinit" (init crashes with 77), "badinit" (init
 * returns 12, outside its contract), "faultcreate", "faultinit",
 * "faultterm" (create, init or terminate stores into a PROT_NONE page:
 * a fault, for test_fault's contained faults), "hib" (hibernate at
 * every wait), "hibafter" (hibernate after 5 ms idle).
 */
#include <smarm/smarm_plugin.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char events[8192];

static void ev(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ev(const char *fmt, ...)
{
	va_list ap;
	size_t n;
	pthread_mutex_lock(&log_lock);
	n = strlen(events);
	if (n + 2 < sizeof events) {
		if (n > 0)
			events[n++] = ' ';
		va_start(ap, fmt);
		vsnprintf(events + n, sizeof events - n, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&log_lock);
}

/* Copy the log into buf and clear it. */
__attribute__((visibility("default"))) void probe_events(char *buf, size_t len)
{
	pthread_mutex_lock(&log_lock);
	snprintf(buf, len, "%s", events);
	events[0] = '\0';
	pthread_mutex_unlock(&log_lock);
}

struct probe {
	bool trap, cont, idle, failinit, blockterm, crashterm, faultinit,
		faultterm;
	int initmode; /* slowinit 1, crashinit 2, badinit 3 */
	smarm_reply_t *tok;
	smarm_gs_ctx_t *cx;
	uint64_t timer;
	smarm_server_t *peer; /* blockterm: the "pp" server */
	bool qlimit;	      /* "qlimit": a queue of 4 requests */
	smarm_request_t *req; /* req_self's request to itself */
	int hib;	      /* "hib" 1 (always), "hibafter" 2 (5 ms) */
	int64_t sum;	      /* sum's running total (state that must
				 survive a hibernation) */
};

/*
 * A store into a PROT_NONE page, from the plugin's code: a fault the
 * runtime does not cause (a real NULL store is undefined behaviour,
 * which UBSan would report instead of letting it fault).
 */
static void fault_here(void)
{
	volatile int *p =
		mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		*p = 1;
}

static int create(const char *args, void **state)
{
	struct probe *p;
	if (args != NULL && strstr(args, "failcreate") != NULL)
		return SMARM_ENOENT;
	if (args != NULL && strstr(args, "faultcreate") != NULL)
		fault_here();
	p = calloc(1, sizeof *p);
	if (p == NULL)
		return SMARM_ENOMEM;
	if (args != NULL) {
		p->trap = strstr(args, "trap") != NULL;
		p->cont = strstr(args, "continue") != NULL;
		p->idle = strstr(args, "idle") != NULL;
		p->hib = strstr(args, "hibafter") ? 2
			 : strstr(args, "hib")	  ? 1
						  : 0;
		p->qlimit = strstr(args, "qlimit") != NULL;
		p->failinit = strstr(args, "failinit") != NULL;
		p->blockterm = strstr(args, "blockterm") != NULL;
		p->crashterm = strstr(args, "crashterm") != NULL;
		p->faultinit = strstr(args, "faultinit") != NULL;
		p->faultterm = strstr(args, "faultterm") != NULL;
		p->initmode = strstr(args, "slowinit")	  ? 1
			      : strstr(args, "crashinit") ? 2
			      : strstr(args, "badinit")	  ? 3
							  : 0;
	}
	*state = p;
	return 0;
}

static void destroy(void *state)
{
	struct probe *p = state;
	ev("destroy");
	smarm_server_free(p->peer);
	smarm_request_free(p->req);
	free(p);
}

static int init(void *state, smarm_gs_ctx_t *cx)
{
	struct probe *p = state;
	p->cx = cx;
	ev("init");
	if (p->failinit)
		return SMARM_EEXIST;
	if (p->initmode == 1) /* "slowinit": 10 s, unless stopped */
		smarm_actor_sleep(10000000000u);
	if (p->initmode == 2) /* "crashinit" */
		smarm_actor_crash(77);
	if (p->initmode == 3) /* "badinit": out of contract */
		return 12;
	if (p->faultinit)
		fault_here();
	if (p->trap && smarm_gs_trap_exit(cx) != 0)
		return SMARM_EINTERNAL;
	if (p->idle && smarm_gs_set_idle(cx, 20000000) != 0)
		return SMARM_EINTERNAL;
	if (p->hib &&
	    smarm_gs_set_hibernate_after(cx, p->hib == 1 ? 0 : 5000000) != 0)
		return SMARM_EINTERNAL;
	if (p->qlimit)
		ev("qlimit:%d", smarm_gs_set_queue_limit(cx, 4));
	if (p->blockterm) {
		const smarm_behaviour_t *b = NULL;
		if (smarm_gs_behaviour(cx, "peer", &b) != 0 ||
		    smarm_server_open_name(NULL, b, "pp", &p->peer) != 0)
			return SMARM_EINTERNAL;
	}
	return 0;
}

static void handle_continue(void *state, smarm_gs_ctx_t *cx, uint64_t tag)
{
	(void)state;
	(void)cx;
	ev("cont:%llu", (unsigned long long)tag);
}

static void handle_down(void *state, smarm_gs_ctx_t *cx,
			const smarm_signal_t *d)
{
	(void)state;
	(void)cx;
	ev("down:%d", d->how);
}

static void handle_exit(void *state, smarm_gs_ctx_t *cx,
			const smarm_signal_t *s)
{
	(void)state;
	(void)cx;
	ev("exit:%d", s->how);
}

static int handle_shutdown(void *state, smarm_gs_ctx_t *cx)
{
	struct probe *p = state;
	(void)cx;
	ev("shutdown");
	return p->cont ? SMARM_GS_CONTINUE : SMARM_GS_EXIT;
}

static void handle_idle(void *state, smarm_gs_ctx_t *cx)
{
	(void)state;
	(void)cx;
	ev("idle");
}

static void kid_sleeps(void *arg)
{
	(void)arg;
	smarm_actor_sleep(20000000);
}

static intptr_t job_sleeps(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 5000000 };
	nanosleep(&ts, NULL);
	return 7;
}

/*
 * blockterm: six calls that park (a receive, a sleep, a call to the
 * peer, a join, a pool job, a select), then three that need not (a
 * try_recv and a receive with an element queued, a name lookup), logged
 * as "bt:<six>|<three>". With may_block false every one of the six is
 * SMARM_EAGAIN at once; the sleep is then 2.5 s, so a runtime that let
 * it park would end the server late.
 */
static void term_calls(struct probe *p, bool may_block)
{
	smarm_value_t a = { .type = SMARM_T_I64 }, r;
	smarm_chan_t *ch = NULL;
	smarm_selset_t *set = NULL;
	smarm_pid_t kid, pp;
	intptr_t res = 0;
	int64_t x = 1;
	size_t ready;
	int b[6], n[3];

	smarm_chan_alloc(&ch, sizeof x, NULL);
	b[0] = smarm_chan_recv_timeout(ch, &x, 50000000);
	b[1] = smarm_actor_sleep(may_block ? 10000000 : 2500000000u);
	a.type = SMARM_T_U64;
	a.v.u = 50000000; /* its reply cannot be there before the wait */
	b[2] = smarm_server_call(p->peer, "nap", &a, 1, &r, 5000000000u);
	b[3] = smarm_actor_spawn(&kid, kid_sleeps, NULL, NULL);
	if (b[3] == 0) {
		b[3] = smarm_actor_join(kid, NULL, NULL);
		if (b[3] != 0)
			smarm_actor_detach(kid);
	}
	b[4] = smarm_io_blocking(job_sleeps, NULL, &res);
	smarm_selset_alloc(&set);
	smarm_selset_add_chan(set, ch, NULL);
	b[5] = smarm_selset_wait(set, 20000000, &ready);
	smarm_selset_free(set);
	smarm_chan_send(ch, &x);
	n[0] = smarm_chan_try_recv(ch, &x);
	smarm_chan_send(ch, &x);
	n[1] = smarm_chan_recv_timeout(ch, &x, 50000000);
	n[2] = smarm_node_whereis(smarm_node_current(), "pp", &pp);
	smarm_chan_receiver_free(ch);
	smarm_chan_sender_free(ch);
	ev("bt:%d:%d:%d:%d:%d:%d|%d:%d:%d", b[0], b[1], b[2], b[3], b[4], b[5],
	   n[0], n[1], n[2]);
}

static void terminate(void *state, int how, intptr_t reason, bool may_block)
{
	struct probe *p = state;
	ev("term:%d:%ld:%d", how, (long)reason, may_block);
	if (p->tok != NULL) /* left to the runtime's EDOWN */
		p->tok = NULL;
	if (p->blockterm)
		term_calls(p, may_block);
	if (p->crashterm)
		smarm_actor_crash(4242);
	if (p->faultterm)
		fault_here();
}

static int64_t echo(void *state, smarm_gs_ctx_t *cx, int64_t v)
{
	(void)state;
	(void)cx;
	ev("echo:%lld", (long long)v);
	return v;
}

/*
 * Sixteen arguments of mixed classes: through a typed stub they arrive
 * in integer and vector registers and on the stack (test_gen_server's
 * stub test); each is weighted, so a value in the wrong place shows.
 */
static double mix(void *state, smarm_gs_ctx_t *cx, int8_t a, double b,
		  uint16_t c, float d, int64_t e, bool f, double g, uint32_t h,
		  double i, double j, double k, double l, double m, double n,
		  smarm_pid_t p, int64_t q)
{
	(void)state;
	(void)cx;
	return a + 2 * b + 3 * c + 4 * d + 5 * (double)e + 6 * f + 7 * g +
	       8 * (double)h + 9 * i + 10 * j + 11 * k + 12 * l + 13 * m +
	       14 * n + 15 * (double)(p.id & 0xffff) + 16 * (double)q;
}

/* The token "later" took last (a test answers it from outside). */
static smarm_reply_t *_Atomic last_token;

__attribute__((visibility("default"))) smarm_reply_t *probe_token(void)
{
	return last_token;
}

static int64_t later(void *state, smarm_gs_ctx_t *cx)
{
	struct probe *p = state;
	smarm_reply_t *t2;
	int rc = smarm_gs_reply_later(cx, &p->tok);
	last_token = p->tok;
	ev("later:%d:%d", rc, smarm_gs_reply_later(cx, &t2));
	return -1; /* ignored */
}

static void answer(void *state, smarm_gs_ctx_t *cx, int64_t v)
{
	struct probe *p = state;
	smarm_value_t bad = { .type = SMARM_T_STR },
		      good = { .type = SMARM_T_I64 };
	smarm_reply_t *t;
	(void)cx;
	int r1, r2, r3;
	good.v.i = v;
	r1 = smarm_gs_reply_later(cx, &t);
	r2 = smarm_reply(p->tok, &bad);
	r3 = smarm_reply(p->tok, &good);
	ev("answer:%d:%d:%d", r1, r2, r3);
	p->tok = NULL;
}

static void drop(void *state, smarm_gs_ctx_t *cx)
{
	struct probe *p = state;
	(void)cx;
	ev("drop:%d", smarm_reply_drop(p->tok));
	p->tok = NULL;
}

static uint64_t cont(void *state, smarm_gs_ctx_t *cx, uint64_t tag)
{
	(void)state;
	ev("cont_req:%d", smarm_gs_continue(cx, tag));
	return tag;
}

static void block(void *state, smarm_gs_ctx_t *cx, uint64_t ns)
{
	(void)state;
	(void)cx;
	ev("block");
	smarm_actor_sleep(ns);
	ev("unblock");
}

/* err(v): answer {error, v}; its own return value is discarded. A cast
 * may not answer so (logged: "errcast:<status>"). */
static int64_t err(void *state, smarm_gs_ctx_t *cx, int64_t v)
{
	(void)state;
	ev("err:%d", smarm_gs_reply_error(cx, (intptr_t)v));
	return 99;
}

static void errcast(void *state, smarm_gs_ctx_t *cx)
{
	(void)state;
	ev("errcast:%d", smarm_gs_reply_error(cx, 1));
}

static void crash(void *state, smarm_gs_ctx_t *cx, int64_t why)
{
	(void)state;
	(void)cx;
	smarm_actor_crash((intptr_t)why);
}

/* A fault from the plugin's own code (fault_here). */
static void segv(void *state, smarm_gs_ctx_t *cx)
{
	(void)state;
	(void)cx;
	fault_here();
}

static void stop(void *state, smarm_gs_ctx_t *cx, int32_t how, int64_t why)
{
	(void)state;
	ev("stop:%d", smarm_gs_stop(cx, how, (intptr_t)why));
}

static int32_t monitor(void *state, smarm_gs_ctx_t *cx, smarm_pid_t pid)
{
	(void)state;
	return smarm_gs_monitor(cx, pid, NULL);
}

static int32_t trap_late(void *state, smarm_gs_ctx_t *cx)
{
	(void)state;
	return smarm_gs_trap_exit(cx);
}

static void note(void *state, smarm_gs_ctx_t *cx, int64_t v)
{
	(void)state;
	(void)cx;
	ev("note:%lld", (long long)v);
}

static void cnote(void *state, smarm_gs_ctx_t *cx, int64_t v)
{
	(void)state;
	(void)cx;
	ev("cnote:%lld", (long long)v);
}

static int32_t tick_after(void *state, smarm_gs_ctx_t *cx, uint64_t delay,
			  uint64_t period)
{
	struct probe *p = state;
	smarm_value_t v = { .type = SMARM_T_I64 };
	v.v.i = (int64_t)delay;
	return smarm_gs_send_after(cx, delay, period, "note", &v, 1, &p->timer);
}

/* Add v to the running total and return it (test_hibernate). */
/* The raw form of a message from another node (docs/distribution.md,
 * "handle_info"): logs "dist_info:<bytes>:<first byte>". */
static void dist_info(void *state, smarm_gs_ctx_t *cx, const void *t,
		      size_t len)
{
	(void)state;
	(void)cx;
	ev("dist_info:%zu:%u", len,
	   len > 0 ? (unsigned)*(const unsigned char *)t : 0u);
}

static int64_t sum(void *state, smarm_gs_ctx_t *cx, int64_t v)
{
	struct probe *p = state;
	(void)cx;
	p->sum += v;
	return p->sum;
}

/* Hibernate after this cast (smarm_gs_hibernate); logs "hib:<status>". */
static void hib(void *state, smarm_gs_ctx_t *cx)
{
	(void)state;
	ev("hib:%d", smarm_gs_hibernate(cx));
}

static int32_t tick_cancel(void *state, smarm_gs_ctx_t *cx)
{
	struct probe *p = state;
	return smarm_gs_cancel_timer(cx, p->timer);
}

/*
 * A handle to the server itself (its own behaviour, its own pid): a
 * cast, an info and a castv are queued and served after this handler;
 * a call and a shutdown are SMARM_ECALLSELF. Logs each status.
 */
static int32_t self_send(void *state, smarm_gs_ctx_t *cx, int64_t v)
{
	const smarm_behaviour_t *b = NULL;
	smarm_server_t *h = NULL;
	smarm_value_t a = { .type = SMARM_T_I64 };
	int rc[6] = { smarm_gs_behaviour(cx, NULL, &b), -1, -1, -1, -1, -1 };
	(void)state;
	if (rc[0] == 0 &&
	    smarm_server_open(NULL, b, smarm_actor_self(), &h) == 0) {
		a.v.i = v;
		rc[1] = smarm_server_cast(h, "cnote", &a, 1);
		a.v.i = v + 1;
		rc[2] = smarm_server_info(h, "note", &a, 1);
		rc[3] = smarm_server_call(h, "echo", &a, 1, NULL, 1000000000);
		rc[4] = smarm_server_shutdown(h, 1000000000, NULL);
		rc[5] = smarm_server_castv(h, "cnote", (int64_t)(v + 2));
		smarm_server_free(h);
	}
	ev("self:%d:%d:%d:%d:%d:%d", rc[0], rc[1], rc[2], rc[3], rc[4], rc[5]);
	return rc[1];
}

/*
 * A request to itself (OTP's send_request(self(), ...)): sent, but not
 * waited for in this callback (SMARM_ECALLSELF at once, timed or not),
 * a poll says not yet (SMARM_ETIMEDOUT); then a cast of "check" to
 * itself, served after the request, picks the reply up. Logs
 * "rs:<send>:<timed wait>:<unbounded wait>:<poll>:<fast>:<cast>".
 */
static int32_t req_self(void *state, smarm_gs_ctx_t *cx, int64_t v)
{
	struct probe *p = state;
	const smarm_behaviour_t *b = NULL;
	smarm_server_t *h = NULL;
	smarm_value_t a = { .type = SMARM_T_I64 }, r;
	int rc[6] = { -1, -1, -1, -1, -1, -1 };
	if (smarm_gs_behaviour(cx, NULL, &b) == 0 &&
	    smarm_server_open(NULL, b, smarm_actor_self(), &h) == 0) {
		uint64_t t0 = smarm_now_ns();
		a.v.i = v;
		rc[0] = smarm_server_send_request(h, "echo", &a, 1, &p->req);
		rc[1] = smarm_server_wait_response(p->req, &r, 1000000000);
		rc[2] = smarm_server_wait_response(p->req, &r,
						   SMARM_NO_TIMEOUT);
		rc[3] = smarm_server_wait_response(p->req, &r, 0);
		rc[4] = smarm_now_ns() - t0 < 500000000;
		rc[5] = smarm_server_cast(h, "check", NULL, 0);
		smarm_server_free(h);
	}
	ev("rs:%d:%d:%d:%d:%d:%d", rc[0], rc[1], rc[2], rc[3], rc[4], rc[5]);
	return rc[0];
}

/* The reply to req_self's request, by a poll: "check:<status>:<v>". */
static void check(void *state, smarm_gs_ctx_t *cx)
{
	struct probe *p = state;
	smarm_value_t r = { .type = SMARM_T_I64 };
	int rc = SMARM_ENOENT;
	(void)cx;
	r.v.i = -1;
	if (p->req != NULL) {
		rc = smarm_server_wait_response(p->req, &r, 0);
		if (rc != SMARM_ETIMEDOUT)
			p->req = NULL; /* freed by the answer */
	}
	ev("check:%d:%lld", rc, (long long)r.v.i);
}

/*
 * Call ping(v) on the server registered as name, of this plugin's
 * behaviour "peer" (found from inside); return its answer. Logs the
 * statuses, and those of a name that is no behaviour and of out NULL.
 */
static int64_t peer_call(void *state, smarm_gs_ctx_t *cx, const char *name,
			 int64_t v)
{
	const smarm_behaviour_t *b = NULL, *x = NULL;
	smarm_server_t *h = NULL;
	smarm_value_t a = { .type = SMARM_T_I64 }, r = { .type = SMARM_T_I64 };
	int rb = smarm_gs_behaviour(cx, "peer", &b), ro = -1, rc = -1;
	(void)state;
	a.v.i = v;
	r.v.i = -1;
	if (rb == 0)
		ro = smarm_server_open_name(NULL, b, name, &h);
	if (ro == 0)
		rc = smarm_server_call(h, "ping", &a, 1, &r, 5000000000u);
	smarm_server_free(h);
	ev("peer:%d:%d:%d:%d:%d", rb, ro, rc,
	   smarm_gs_behaviour(cx, "nope", &x),
	   smarm_gs_behaviour(cx, NULL, NULL));
	return r.v.i;
}

static const smarm_handler_t handlers[] = {
	{ "echo", (void (*)(void))echo },
	{ "mix", (void (*)(void))mix },
	{ "later", (void (*)(void))later },
	{ "answer", (void (*)(void))answer },
	{ "drop", (void (*)(void))drop },
	{ "cont", (void (*)(void))cont },
	{ "block", (void (*)(void))block },
	{ "stop", (void (*)(void))stop },
	{ "err", (void (*)(void))err },
	{ "errcast", (void (*)(void))errcast },
	{ "stop_cast", (void (*)(void))stop },
	{ "monitor", (void (*)(void))monitor },
	{ "trap_late", (void (*)(void))trap_late },
	{ "note", (void (*)(void))note },
	{ "cnote", (void (*)(void))cnote },
	{ "tick_after", (void (*)(void))tick_after },
	{ "tick_cancel", (void (*)(void))tick_cancel },
	{ "self_send", (void (*)(void))self_send },
	{ "peer_call", (void (*)(void))peer_call },
	{ "crash", (void (*)(void))crash },
	{ "req_self", (void (*)(void))req_self },
	{ "check", (void (*)(void))check },
	{ "segv", (void (*)(void))segv },
	{ "sum", (void (*)(void))sum },
	{ "dist_info", (void (*)(void))dist_info },
	{ "hib", (void (*)(void))hib },
};

static const smarm_gs_desc_t probe = {
	.struct_size = sizeof(smarm_gs_desc_t),
	.name = "probe",
	.protocol = "call echo(i64) -> i64\n"
		    "call mix(i8, f64, u16, f32, i64, bool, f64, u32, f64, "
		    "f64, f64, f64, f64, f64, pid, i64) -> f64\n"
		    "call later() -> i64\n"
		    "cast answer(i64)\n"
		    "cast drop()\n"
		    "call cont(u64) -> u64\n"
		    "call block(u64)\n"
		    "call stop(i32, i64)\n"
		    "cast stop_cast(i32, i64)\n"
		    "call monitor(pid) -> i32\n"
		    "call trap_late() -> i32\n"
		    "info note(i64)\n"
		    "cast cnote(i64)\n"
		    "call tick_after(u64, u64) -> i32\n"
		    "call tick_cancel() -> i32\n"
		    "call self_send(i64) -> i32\n"
		    "call peer_call(str, i64) -> i64\n"
		    "cast crash(i64)\n"
		    "call req_self(i64) -> i32\n"
		    "cast check()\n"
		    "call err(i64) -> i64\n"
		    "cast errcast()\n"
		    "cast segv()\n"
		    "call sum(i64) -> i64\n"
		    "cast hib()\n"
		    "info dist_info(bytes)\n",
	.handlers = handlers,
	.n_handlers = sizeof handlers / sizeof handlers[0],
	.create = create,
	.destroy = destroy,
	.init = init,
	.handle_continue = handle_continue,
	.handle_down = handle_down,
	.handle_exit = handle_exit,
	.handle_shutdown = handle_shutdown,
	.handle_idle = handle_idle,
	.terminate = terminate,
};

/* "peer": a sibling of probe that the probe calls from inside. */
static int peer_create(const char *args, void **state)
{
	(void)args;
	*state = NULL;
	return 0;
}

static int64_t ping(void *state, smarm_gs_ctx_t *cx, int64_t v)
{
	(void)state;
	(void)cx;
	return v + 1000;
}

/* Sleep ns, then reply. */
static void nap(void *state, smarm_gs_ctx_t *cx, uint64_t ns)
{
	(void)state;
	(void)cx;
	smarm_actor_sleep(ns);
}

static const smarm_handler_t peer_handlers[] = {
	{ "ping", (void (*)(void))ping },
	{ "nap", (void (*)(void))nap },
};

static const smarm_gs_desc_t peer = {
	.struct_size = sizeof(smarm_gs_desc_t),
	.name = "peer",
	.protocol = "call ping(i64) -> i64\n"
		    "call nap(u64)\n",
	.handlers = peer_handlers,
	.n_handlers = 2,
	.create = peer_create,
};

static const smarm_gs_desc_t *const servers[] = { &probe, &peer };

SMARM_PLUGIN_DEFINE_SERVERS("probe", servers);
