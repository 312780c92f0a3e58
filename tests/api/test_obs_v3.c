/* SPDX-License-Identifier: MIT */
/*
 * test_obs_v3.c - the version 3 actor record (abi/smarm/obs.h): a
 * server's mailbox depth per band and the bytes queued in it, read
 * while the server is busy in a handler (a Down in the signal band, a
 * timer fire in the timer band, casts, infos and a request with a long
 * string argument in the inbox); a caller of the version 2 size still
 * gets exactly version 2. A call by registered name waits on the pid
 * the name had (wait_on). A supervisor counts the restarts it admitted;
 * a server shows its plugin's contained faults; an actor's resident
 * stack covers what it touched, and is 0 before it first ran.
 */
#include "harness.h"

#include <smarm/obs.h>
#include <smarm/smarm_plugin.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static smarm_actor_info_t info_new(void)
{
	smarm_actor_info_t i;
	memset(&i, 0xa5, sizeof i); /* filled, not left as found */
	i.size = sizeof i;
	return i;
}

/* Poll pid's record until pred holds (5 s at most); the last read. */
static void await_info(smarm_pid_t pid,
		       bool (*pred)(const smarm_actor_info_t *in),
		       smarm_actor_info_t *in)
{
	for (int k = 0; k < 5000; k++) {
		*in = info_new();
		HARNESS_EQ(smarm_actor_info(NULL, pid, in), 0);
		if (pred(in))
			return;
		smarm_actor_sleep(MS(1));
	}
}

static const smarm_behaviour_t *probe;

/* One argument, as an array of one. */
#define ARG1(x) ((smarm_value_t[]){ SMARM_V(x) })

/* ------------------------------------------------------------ mailbox */

struct mb_case {
	smarm_pid_t server;
	smarm_chan_t *go;
	smarm_actor_info_t busy, queued, big, v2;
	size_t long_len;
};

static void mb_caller(void *arg)
{
	struct mb_case *mc = arg;
	smarm_server_t *s = NULL;
	HARNESS_EQ(smarm_server_open(NULL, probe, mc->server, &s), 0);
	/* long enough for the root to queue everything and read it: 1.5 s
	 * ran out once at a load average of 12 */
	HARNESS_EQ(smarm_server_call(s, "block", ARG1((uint64_t)MS(5000)), 1,
				     NULL, MS(20000)),
		   0);
	smarm_server_free(s);
}

static void mb_waiter(void *arg)
{
	struct mb_case *mc = arg;
	int v;
	HARNESS_EQ(smarm_chan_recv(mc->go, &v), 0);
}

static bool is_sleeping(const smarm_actor_info_t *in)
{
	return in->state == SMARM_ACTOR_PARKED && in->wait == SMARM_WAIT_SLEEP;
}

static bool all_queued(const smarm_actor_info_t *in)
{
	return in->mailbox_band[SMARM_BAND_SIGNAL] == 1 &&
	       in->mailbox_band[SMARM_BAND_TIMER] == 1 &&
	       in->mailbox_band[SMARM_BAND_INBOX] == 5;
}

static bool six_queued(const smarm_actor_info_t *in)
{
	return in->mailbox_band[SMARM_BAND_INBOX] == 6;
}

static void root_mb(void *arg)
{
	struct mb_case *mc = arg;
	smarm_server_t *sv = NULL;
	smarm_request_t *req = NULL;
	smarm_value_t r;
	smarm_pid_t c, w;
	char *longs;
	int v = 0;

	HARNESS_EQ(smarm_chan_alloc(&mc->go, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &sv), 0);
	HARNESS_EQ(smarm_server_pid(sv, &mc->server), 0);
	/*
	 * Its signal band (a monitor) and timer band (a fire once it is
	 * busy: 1.5 s, so that it lands in the handler below however late a
	 * loaded machine starts that; 20 ms fired before it, once, at a
	 * load average of 9).
	 */
	HARNESS_EQ(smarm_actor_spawn(&w, mb_waiter, mc, NULL), 0);
	HARNESS_EQ(smarm_server_call(sv, "monitor", ARG1(w), 1, &r, MS(5000)),
		   0);
	HARNESS_EQ(smarm_server_call(
			   sv, "tick_after",
			   (smarm_value_t[]){ SMARM_V((uint64_t)MS(1500)),
					      SMARM_V((uint64_t)0) },
			   2, &r, MS(5000)),
		   0);
	/* Busy in a handler: nothing it is sent is served meanwhile. */
	HARNESS_EQ(smarm_actor_spawn(&c, mb_caller, mc, NULL), 0);
	await_info(mc->server, is_sleeping, &mc->busy);
	HARNESS_EQ(smarm_chan_send(mc->go, &v), 0);
	HARNESS_EQ(smarm_actor_join(w, NULL, NULL), 0); /* a Down */
	for (int k = 0; k < 3; k++)
		HARNESS_EQ(smarm_server_cast(sv, "cnote", ARG1(k), 1), 0);
	for (int k = 0; k < 2; k++)
		HARNESS_EQ(smarm_server_info(sv, "note", ARG1(k), 1), 0);
	await_info(mc->server, all_queued, &mc->queued);
	/* A request whose string is not carried inline. */
	mc->long_len = 1500;
	longs = malloc(mc->long_len + 1);
	HARNESS_CHECK(longs != NULL);
	memset(longs, 'x', mc->long_len);
	longs[mc->long_len] = '\0';
	HARNESS_EQ(smarm_server_send_request(
			   sv, "peer_call",
			   (smarm_value_t[]){ SMARM_V(longs), SMARM_V(1) }, 2,
			   &req),
		   0);
	free(longs);
	await_info(mc->server, six_queued, &mc->big);
	mc->v2 = info_new();
	mc->v2.size = SMARM_ACTOR_INFO_SIZE_V2;
	HARNESS_EQ(smarm_actor_info(NULL, mc->server, &mc->v2), 0);
	/* Let it serve everything. */
	HARNESS_EQ(smarm_actor_join(c, NULL, NULL), 0);
	HARNESS_EQ(smarm_server_wait_response(req, &r, MS(5000)), 0);
	HARNESS_EQ(smarm_server_shutdown(sv, SMARM_NO_TIMEOUT, NULL), 0);
	smarm_server_free(sv);
	harness_chan_drop(mc->go);
}

START_TEST(test_obs_v3_mailbox_bands_and_bytes)
{
	struct mb_case mc;
	const unsigned char *tail;
	memset(&mc, 0, sizeof mc);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_mb, &mc), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(mc.busy.version, SMARM_OBS_FORMAT_VERSION);
	ck_assert_uint_eq(mc.busy.size, SMARM_ACTOR_INFO_SIZE_V3);
	/* Busy and nothing sent yet: every band empty. */
	for (int b = 0; b < SMARM_OBS_BANDS; b++)
		ck_assert_uint_eq(mc.busy.mailbox_band[b], 0);
	ck_assert_uint_eq(mc.busy.mailbox_bytes, 0);
	/* A Down, a fire, three casts and two infos, each in its band. */
	ck_assert_uint_eq(mc.queued.mailbox_band[SMARM_BAND_SIGNAL], 1);
	ck_assert_uint_eq(mc.queued.mailbox_band[SMARM_BAND_TIMER], 1);
	ck_assert_uint_eq(mc.queued.mailbox_band[SMARM_BAND_INBOX], 5);
	ck_assert_uint_eq(mc.queued.mailbox_band[3], 0);
	ck_assert_int_eq(mc.queued.mailbox_depth, 5); /* the inbox's */
	ck_assert_uint_gt(mc.queued.mailbox_bytes, 0);
	/* One more request: its envelope and its long string's block. */
	ck_assert_uint_eq(mc.big.mailbox_band[SMARM_BAND_INBOX], 6);
	ck_assert_uint_ge(mc.big.mailbox_bytes,
			  mc.queued.mailbox_bytes + mc.long_len);
	/* A version 2 caller gets version 2, and nothing past it. */
	ck_assert_int_eq(mc.v2.version, 2);
	ck_assert_uint_eq(mc.v2.size, SMARM_ACTOR_INFO_SIZE_V2);
	tail = (const unsigned char *)&mc.v2 + SMARM_ACTOR_INFO_SIZE_V2;
	for (size_t i = 0; i < sizeof mc.v2 - SMARM_ACTOR_INFO_SIZE_V2; i++)
		ck_assert_uint_eq(tail[i], 0xa5);
}
END_TEST

/* ------------------------------------------- requests in its batch */

struct bt_case {
	smarm_pid_t server;
	uint64_t block_ns[2]; /* each caller's block */
	smarm_actor_info_t in_batch, snap;
	int snap_rc;
};

struct bt_call {
	struct bt_case *bc;
	int k;
};

static void bt_caller(void *arg)
{
	struct bt_call *c = arg;
	smarm_server_t *s = NULL;
	HARNESS_EQ(smarm_server_open(NULL, probe, c->bc->server, &s), 0);
	HARNESS_EQ(smarm_server_call(s, "block", ARG1(c->bc->block_ns[c->k]), 1,
				     NULL, MS(10000)),
		   0);
	smarm_server_free(s);
}

static bool one_queued(const smarm_actor_info_t *in)
{
	return in->mailbox_band[SMARM_BAND_INBOX] == 1;
}

static bool five_queued(const smarm_actor_info_t *in)
{
	return in->mailbox_band[SMARM_BAND_INBOX] == 5;
}

/* Asleep in the second block, the four casts taken with it still its. */
static bool four_in_batch(const smarm_actor_info_t *in)
{
	return is_sleeping(in) && in->mailbox_band[SMARM_BAND_INBOX] == 4;
}

static void root_bt(void *arg)
{
	struct bt_case *bc = arg;
	struct bt_call calls[2] = { { bc, 0 }, { bc, 1 } };
	smarm_server_t *sv = NULL;
	smarm_pid_t c[2];
	smarm_snapshot_t *snap = NULL;
	smarm_actor_info_t in;
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &sv), 0);
	HARNESS_EQ(smarm_server_pid(sv, &bc->server), 0);
	bc->block_ns[0] = MS(300);
	bc->block_ns[1] = MS(1500);
	/* Busy in a first call; a second call and four casts queue behind
	 * it, and are taken together (a batch) once it ends. */
	HARNESS_EQ(smarm_actor_spawn(&c[0], bt_caller, &calls[0], NULL), 0);
	await_info(bc->server, is_sleeping, &in);
	HARNESS_EQ(smarm_actor_spawn(&c[1], bt_caller, &calls[1], NULL), 0);
	await_info(bc->server, one_queued, &in);
	for (int k = 0; k < 4; k++)
		HARNESS_EQ(smarm_server_cast(sv, "cnote", ARG1(k), 1), 0);
	await_info(bc->server, five_queued, &in);
	await_info(bc->server, four_in_batch, &bc->in_batch);
	/* A snapshot's record counts them too. */
	bc->snap_rc = smarm_snapshot_take(NULL, &snap);
	if (bc->snap_rc == 0) {
		size_t i = 0;
		bc->snap = info_new();
		HARNESS_EQ(smarm_snapshot_find(snap, bc->server, &i), 0);
		HARNESS_EQ(smarm_snapshot_get(snap, i, &bc->snap), 0);
		smarm_snapshot_free(snap);
	}
	for (int k = 0; k < 2; k++)
		HARNESS_EQ(smarm_actor_join(c[k], NULL, NULL), 0);
	HARNESS_EQ(smarm_server_shutdown(sv, SMARM_NO_TIMEOUT, NULL), 0);
	smarm_server_free(sv);
}

/*
 * Requests a server took from its inbox into its batch (up to 16) and
 * has not served yet are still its mailbox's, as OTP's
 * message_queue_len counts all but the message in service: in the
 * inbox band, the depth and the bytes.
 */
START_TEST(test_obs_v3_batched_requests_are_counted)
{
	struct bt_case bc;
	memset(&bc, 0, sizeof bc);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_bt, &bc), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_uint_eq(bc.in_batch.mailbox_band[SMARM_BAND_INBOX], 4);
	ck_assert_int_eq(bc.in_batch.mailbox_depth, 4);
	ck_assert_uint_ge(bc.in_batch.mailbox_bytes, 4 * 64);
	ck_assert_int_eq(bc.snap_rc, 0);
	ck_assert_uint_eq(bc.snap.mailbox_band[SMARM_BAND_INBOX], 4);
	ck_assert_int_eq(bc.snap.mailbox_depth, 4);
}
END_TEST

/* A plain actor has no bands. */
static void root_plain(void *arg)
{
	smarm_actor_info_t *in = arg;
	*in = info_new();
	HARNESS_EQ(smarm_actor_info(NULL, smarm_actor_self(), in), 0);
}

START_TEST(test_obs_v3_plain_actor_has_no_bands)
{
	smarm_actor_info_t in;
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, root_plain, &in), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	/* Read for one actor even without statistics: its stack is in use. */
	ck_assert_uint_gt(in.stack_touched, 0);
	for (int b = 0; b < SMARM_OBS_BANDS; b++)
		ck_assert_uint_eq(in.mailbox_band[b], 0);
	ck_assert_uint_eq(in.mailbox_bytes, 0);
}
END_TEST

/* ------------------------------------------------------ call by name */

struct name_case {
	smarm_pid_t server;
	smarm_actor_info_t call;
};

static void name_caller(void *arg)
{
	smarm_server_t *s = NULL;
	(void)arg;
	HARNESS_EQ(smarm_server_open_name(NULL, probe, "obs.v3.srv", &s), 0);
	HARNESS_EQ(smarm_server_call(s, "block", ARG1((uint64_t)MS(300)), 1,
				     NULL, MS(10000)),
		   0);
	smarm_server_free(s);
}

static bool is_calling(const smarm_actor_info_t *in)
{
	return in->state == SMARM_ACTOR_PARKED && in->wait == SMARM_WAIT_CALL;
}

static void root_name(void *arg)
{
	struct name_case *nc = arg;
	smarm_server_t *sv = NULL;
	smarm_pid_t c;
	HARNESS_EQ(smarm_server_start(probe, NULL, "obs.v3.srv", &sv), 0);
	HARNESS_EQ(smarm_server_pid(sv, &nc->server), 0);
	HARNESS_EQ(smarm_actor_spawn(&c, name_caller, nc, NULL), 0);
	await_info(c, is_calling, &nc->call);
	HARNESS_EQ(smarm_actor_join(c, NULL, NULL), 0);
	HARNESS_EQ(smarm_server_shutdown(sv, SMARM_NO_TIMEOUT, NULL), 0);
	smarm_server_free(sv);
}

/* A call by registered name waits on the pid the name had. */
START_TEST(test_obs_v3_call_by_name_waits_on_its_pid)
{
	struct name_case nc;
	memset(&nc, 0, sizeof nc);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_name, &nc), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(nc.call.wait, SMARM_WAIT_CALL);
	ck_assert_uint_ne(nc.server.id, 0);
	ck_assert_uint_eq(nc.call.wait_on, nc.server.id);
}
END_TEST

/* ---------------------------------------------------- supervisor restarts */

static _Atomic int kid_starts;

static void kid_drop(void *arg)
{
	harness_chan_drop(arg);
}

/* Crash on the first two starts, then park until stopped. */
static void kid(void *arg)
{
	smarm_chan_t *ch = NULL;
	int v;
	(void)arg;
	if (atomic_fetch_add(&kid_starts, 1) < 2)
		smarm_actor_crash(7);
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	smarm_cleanup_push(kid_drop, ch);
	(void)smarm_chan_recv(ch, &v);
}

struct rst_case {
	smarm_actor_info_t sup, child, root;
};

static bool restarted_twice(const smarm_actor_info_t *in)
{
	return in->restarts >= 2;
}

static void root_rst(void *arg)
{
	struct rst_case *rc = arg;
	smarm_sup_spec_t *sp = NULL;
	smarm_pid_t sup, child;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "kid", kid, NULL,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	await_info(sup, restarted_twice, &rc->sup);
	{
		smarm_sup_child_t c[1];
		size_t n = 0;
		HARNESS_EQ(smarm_sup_which_children(sup, c, 1, &n, MS(5000)),
			   0);
		HARNESS_EQ(n, 1);
		child = c[0].pid;
	}
	rc->child = info_new();
	HARNESS_EQ(smarm_actor_info(NULL, child, &rc->child), 0);
	rc->root = info_new();
	HARNESS_EQ(smarm_actor_info(NULL, smarm_actor_self(), &rc->root), 0);
	{
		smarm_chan_t *downs = NULL;
		smarm_signal_t sig;
		HARNESS_EQ(smarm_chan_alloc(&downs, sizeof sig, NULL), 0);
		HARNESS_EQ(smarm_monitor(sup, downs, NULL), 0);
		HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0),
			   0);
		HARNESS_EQ(smarm_chan_recv(downs, &sig), 0);
		harness_chan_drop(downs);
	}
}

/* A supervisor's record counts the restarts it admitted. */
START_TEST(test_obs_v3_supervisor_counts_its_restarts)
{
	struct rst_case rc;
	memset(&rc, 0, sizeof rc);
	atomic_store(&kid_starts, 0);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_rst, &rc), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_uint_ne(rc.sup.flags & SMARM_ACTOR_SUPERVISOR, 0);
	ck_assert_uint_eq(rc.sup.restarts, 2);
	ck_assert_uint_eq(rc.child.restarts, 0);
	ck_assert_uint_eq(rc.root.restarts, 0);
}
END_TEST

/* ------------------------------------------------------ plugin faults */

#if defined(__SANITIZE_ADDRESS__)
/* Our handler, not ASan's, must see the faults (CI also sets this). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0";
}
#endif

struct flt_case {
	smarm_actor_info_t before, after;
};

static void root_flt(void *arg)
{
	struct flt_case *fc = arg;
	smarm_server_t *a = NULL, *b = NULL;
	smarm_chan_t *downs = NULL;
	smarm_signal_t sig;
	smarm_pid_t pa, pb;
	HARNESS_EQ(smarm_chan_alloc(&downs, sizeof sig, NULL), 0);
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &a), 0);
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &b), 0);
	HARNESS_EQ(smarm_server_pid(a, &pa), 0);
	HARNESS_EQ(smarm_server_pid(b, &pb), 0);
	fc->before = info_new();
	HARNESS_EQ(smarm_actor_info(NULL, pb, &fc->before), 0);
	/* a faults in its handler (contained: a ends, b lives on). */
	HARNESS_EQ(smarm_monitor(pa, downs, NULL), 0);
	HARNESS_EQ(smarm_server_cast(a, "segv", NULL, 0), 0);
	HARNESS_EQ(smarm_chan_recv(downs, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_FAULT);
	fc->after = info_new();
	HARNESS_EQ(smarm_actor_info(NULL, pb, &fc->after), 0);
	HARNESS_EQ(smarm_server_shutdown(b, SMARM_NO_TIMEOUT, NULL), 0);
	smarm_server_free(a);
	smarm_server_free(b);
	harness_chan_drop(downs);
}

/* A server's record shows its plugin's taint. */
START_TEST(test_obs_v3_server_shows_its_plugin_faults)
{
	struct flt_case fc;
	memset(&fc, 0, sizeof fc);
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(1, SMARM_OPT_CONTAIN_FAULTS, 1,
					 root_flt, &fc, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_uint_eq(fc.before.plugin_faults, 0);
	ck_assert_uint_eq(fc.after.plugin_faults, 1);
}
END_TEST

/* ------------------------------------------------------ stack touched */

#define DEEP (256u * 1024u)

struct stk_case {
	smarm_chan_t *go;
	smarm_pid_t shallow, deep;
	smarm_actor_info_t s_in, d_in, fresh;
};

static void stk_wait(void *arg)
{
	struct stk_case *sc = arg;
	int v;
	HARNESS_EQ(smarm_chan_recv(sc->go, &v), 0);
}

/* Touch DEEP bytes of stack, then wait. */
static void __attribute__((noinline)) stk_deep_body(struct stk_case *sc)
{
	volatile char buf[DEEP];
	for (size_t i = 0; i < sizeof buf; i += 512)
		buf[i] = (char)i;
	stk_wait(sc);
	(void)buf[0];
}

static void stk_deep(void *arg)
{
	stk_deep_body(arg);
}

static bool is_parked(const smarm_actor_info_t *in)
{
	return in->state == SMARM_ACTOR_PARKED;
}

static void root_stk(void *arg)
{
	struct stk_case *sc = arg;
	smarm_spawn_opts_t *o = NULL;
	smarm_pid_t fresh;
	int v = 0;
	HARNESS_EQ(smarm_chan_alloc(&sc->go, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_spawn_opts_alloc(&o), 0);
	HARNESS_EQ(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, 2 * DEEP),
		0);
	HARNESS_EQ(smarm_actor_spawn(&sc->shallow, stk_wait, sc, o), 0);
	HARNESS_EQ(smarm_actor_spawn(&sc->deep, stk_deep, sc, o), 0);
	smarm_spawn_opts_free(o);
	await_info(sc->shallow, is_parked, &sc->s_in);
	await_info(sc->deep, is_parked, &sc->d_in);
	/* Spawned, not yet run (one worker, and we do not yield). */
	HARNESS_EQ(smarm_actor_spawn(&fresh, stk_wait, sc, NULL), 0);
	sc->fresh = info_new();
	HARNESS_EQ(smarm_actor_info(NULL, fresh, &sc->fresh), 0);
	for (int k = 0; k < 3; k++)
		HARNESS_EQ(smarm_chan_send(sc->go, &v), 0);
	HARNESS_EQ(smarm_actor_join(sc->shallow, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(sc->deep, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(fresh, NULL, NULL), 0);
	harness_chan_drop(sc->go);
}

/* Resident stack (with statistics and without: one actor's info always
 * has it): a deep actor's covers what it touched. */
START_TEST(test_obs_v3_stack_touched_follows_use)
{
	struct stk_case sc;
	memset(&sc, 0, sizeof sc);
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(1, SMARM_OPT_ACTOR_STATS, _i, root_stk,
					 &sc, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_uint_gt(sc.s_in.stack_touched, 0);
	ck_assert_uint_le(sc.s_in.stack_touched, sc.s_in.stack_reserve);
	ck_assert_uint_ge(sc.d_in.stack_touched, DEEP);
	ck_assert_uint_le(sc.d_in.stack_touched, sc.d_in.stack_reserve);
	ck_assert_uint_gt(sc.d_in.stack_touched, sc.s_in.stack_touched);
	if (sc.fresh.state == SMARM_ACTOR_QUEUED) /* it never ran */
		ck_assert_uint_eq(sc.fresh.stack_touched, 0);
}
END_TEST

static smarm_plugin_t *probe_pl;

static void probe_open(void)
{
	char msg[256];
	const char *path = getenv("SMARM_TEST_PROBE");
	ck_assert_ptr_nonnull(path);
	ck_assert_int_eq(smarm_plugin_open(path, &probe_pl, msg, sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_behaviour(probe_pl, "probe", &probe), 0);
}

static void probe_close(void)
{
	ck_assert_int_eq(smarm_plugin_close(probe_pl), 0);
	probe_pl = NULL;
	probe = NULL;
}

Suite *smarm_test_obs_v3_suite(void)
{
	Suite *s = suite_create("obs_v3");
	TCase *tc = tcase_create("mailbox");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, probe_open, probe_close);
	tcase_add_test(tc, test_obs_v3_mailbox_bands_and_bytes);
	tcase_add_test(tc, test_obs_v3_plain_actor_has_no_bands);
	tcase_add_test(tc, test_obs_v3_batched_requests_are_counted);
	suite_add_tcase(s, tc);
	tc = tcase_create("wait_on");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, probe_open, probe_close);
	tcase_add_test(tc, test_obs_v3_call_by_name_waits_on_its_pid);
	suite_add_tcase(s, tc);
	tc = tcase_create("restarts");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_obs_v3_supervisor_counts_its_restarts);
	suite_add_tcase(s, tc);
	tc = tcase_create("faults");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, probe_open, probe_close);
	tcase_add_test(tc, test_obs_v3_server_shows_its_plugin_faults);
	suite_add_tcase(s, tc);
	tc = tcase_create("stack");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_obs_v3_stack_touched_follows_use, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(obs_v3)
