/* SPDX-License-Identifier: MIT */
/*
 * test_obs_stats.c - the version 2 actor record (abi/smarm/obs.h): the
 * per-actor statistics of a node opened with SMARM_OPT_ACTOR_STATS 1.
 * An actor that spins for a known amount of its own CPU (its thread's
 * CPU clock, never wall time: the machine may be loaded) has at least
 * half of it as cpu_ns, and no more than its life's wall time; a
 * spinner that reaches safe points has safe-point preemptions, and one
 * that never does has asynchronous ones; a ping-pong pair counts its
 * messages in and out, its runs, and the time it waited runnable. A
 * node without the option reports zeros, and a caller with a version 1
 * record gets exactly version 1. What a parked actor waits on (kept
 * whatever the option): a gen_server call shows the server's pid, a
 * join the joined pid, a mutex its holder, an fd wait the fd, a sleep
 * itself; a version 1 record sees those as blocked or timed. A big
 * node's snapshot taken by one of its actors is walked off the worker,
 * the caller parked meanwhile.
 */
#include "harness.h"

#include <smarm/obs.h>
#include <smarm/smarm_plugin.h>

#include <string.h>
#include <time.h>
#include <unistd.h>

static smarm_actor_info_t info_new(void)
{
	smarm_actor_info_t i;
	memset(&i, 0xa5, sizeof i);
	i.size = sizeof i;
	return i;
}

/* The calling thread's CPU clock, ns. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Work in this executable's own code (preemptible text), no call. */
static uint64_t burn(uint64_t x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/*
 * Spin until the actor itself has had want_ns of CPU: the thread CPU
 * clock advances by its own time between two reads that are close
 * together; a gap (it was switched out, or moved to another worker,
 * whose clock is another count) is left out. safe: reach a safe point
 * at every round. Returns the CPU counted.
 */
static uint64_t spin_own_cpu(uint64_t want_ns, bool safe)
{
	uint64_t got = 0, x = 1, t = thread_cpu_ns();
	volatile uint64_t sink;
	while (got < want_ns) {
		uint64_t u;
		x = burn(x);
		if (safe)
			smarm_check();
		u = thread_cpu_ns();
		if (u > t && u - t < MS(1))
			got += u - t;
		t = u;
	}
	sink = x;
	(void)sink;
	return got;
}

/* A spinner's part: spin, say how much, then wait to be let go. */
struct spin {
	uint64_t want_ns; /* in */
	bool safe;	  /* in: reach safe points */
	smarm_chan_t *done, *go;
	uint64_t own_ns; /* out: own CPU counted */
	uint64_t t0, t1; /* out: smarm_now_ns at its start and end */
};

static void spinner(void *arg)
{
	struct spin *sp = arg;
	int v = 0;
	sp->t0 = smarm_now_ns();
	sp->own_ns = spin_own_cpu(sp->want_ns, sp->safe);
	sp->t1 = smarm_now_ns();
	HARNESS_EQ(smarm_chan_send(sp->done, &v), 0);
	/* Parked: its last run is switched out, so it is in cpu_ns. */
	HARNESS_EQ(smarm_chan_recv(sp->go, &v), 0);
}

/* ------------------------------------------------------------ cpu time */

#define SPINNERS 2

struct cpu_case {
	bool safe;
	smarm_actor_info_t in[SPINNERS];
	struct spin sp[SPINNERS];
};

/*
 * SPINNERS spinners at once (so a safe point finds someone to yield to
 * on a small node), each spinning 60 ms of its own CPU: more than the
 * async slice (10 ms) and the timeslice (2 ms).
 */
static void root_cpu(void *arg)
{
	struct cpu_case *cc = arg;
	smarm_chan_t *done = NULL, *go = NULL;
	smarm_pid_t pid[SPINNERS];
	int v = 0;
	HARNESS_EQ(smarm_chan_alloc(&done, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&go, sizeof v, NULL), 0);
	for (int i = 0; i < SPINNERS; i++) {
		cc->sp[i] = (struct spin){ .want_ns = MS(60),
					   .safe = cc->safe,
					   .done = done,
					   .go = go };
		HARNESS_EQ(
			smarm_actor_spawn(&pid[i], spinner, &cc->sp[i], NULL),
			0);
	}
	for (int i = 0; i < SPINNERS; i++)
		HARNESS_EQ(smarm_chan_recv(done, &v), 0);
	for (int i = 0; i < SPINNERS; i++) {
		smarm_actor_info_t in = info_new();
		/* Sent its done, then parks: wait for the park. */
		for (int k = 0; k < 100000; k++) {
			HARNESS_EQ(smarm_actor_info(NULL, pid[i], &in), 0);
			if (in.state == SMARM_ACTOR_PARKED)
				break;
			smarm_actor_yield();
		}
		cc->in[i] = in;
	}
	for (int i = 0; i < SPINNERS; i++)
		HARNESS_EQ(smarm_chan_send(go, &v), 0);
	for (int i = 0; i < SPINNERS; i++)
		HARNESS_EQ(smarm_actor_join(pid[i], NULL, NULL), 0);
	harness_chan_drop(done);
	harness_chan_drop(go);
}

static void check_cpu(const struct cpu_case *cc)
{
	for (int i = 0; i < SPINNERS; i++) {
		const smarm_actor_info_t *in = &cc->in[i];
		const struct spin *sp = &cc->sp[i];
		ck_assert_int_eq(in->version, SMARM_OBS_FORMAT_VERSION);
		ck_assert_int_eq(in->state, SMARM_ACTOR_PARKED);
		ck_assert_uint_ge(sp->own_ns, MS(60));
		/* Generous: at least half the CPU it saw itself get. */
		ck_assert_uint_ge(in->cpu_ns, sp->own_ns / 2);
		/* It runs on one worker at a time: never more than its
		 * life's wall time (plus its park, and some slack). */
		ck_assert_uint_le(in->cpu_ns, sp->t1 - sp->t0 + MS(100));
		ck_assert_uint_ge(in->runs, 1);
		ck_assert_uint_ge(in->messages_out, 1); /* its done */
	}
}

START_TEST(test_obs_stats_cpu_time_of_a_spinner)
{
	struct cpu_case cc = { .safe = true };
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(2, SMARM_OPT_ACTOR_STATS, 1, root_cpu,
					 &cc, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	check_cpu(&cc);
}
END_TEST

/* One worker: the two spinners take turns at safe points. */
START_TEST(test_obs_stats_safe_point_preemptions_counted)
{
	struct cpu_case cc = { .safe = true };
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(1, SMARM_OPT_ACTOR_STATS, 1, root_cpu,
					 &cc, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	check_cpu(&cc);
	for (int i = 0; i < SPINNERS; i++) {
		ck_assert_uint_gt(cc.in[i].preempt_safe, 0);
		ck_assert_uint_ge(cc.in[i].runs, 2); /* it was switched out */
	}
}
END_TEST

/* One worker, no safe point: only the monitor's signal preempts. */
START_TEST(test_obs_stats_async_preemptions_counted)
{
	struct cpu_case cc = { .safe = false };
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(1, SMARM_OPT_ACTOR_STATS, 1, root_cpu,
					 &cc, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	check_cpu(&cc);
	for (int i = 0; i < SPINNERS; i++)
		ck_assert_uint_gt(cc.in[i].preempt_async, 0);
}
END_TEST

/* ------------------------------------------------------------ messages */

#define ROUNDS 1000

struct pp_case {
	smarm_chan_t *ping, *pong;
	smarm_actor_info_t pinger, ponger;
};

static void ponger(void *arg)
{
	struct pp_case *pc = arg;
	int v;
	for (int i = 0; i < ROUNDS; i++) {
		HARNESS_EQ(smarm_chan_recv(pc->ping, &v), 0);
		HARNESS_EQ(smarm_chan_send(pc->pong, &v), 0);
	}
	/* One more receive: parked until the root lets it go. */
	HARNESS_EQ(smarm_chan_recv(pc->ping, &v), 0);
}

static void root_pp(void *arg)
{
	struct pp_case *pc = arg;
	smarm_pid_t pid;
	int v = 0;
	HARNESS_EQ(smarm_chan_alloc(&pc->ping, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&pc->pong, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&pid, ponger, pc, NULL), 0);
	pc->pinger = info_new();
	HARNESS_EQ(smarm_actor_info(NULL, smarm_actor_self(), &pc->pinger), 0);
	for (int i = 0; i < ROUNDS; i++) {
		HARNESS_EQ(smarm_chan_send(pc->ping, &i), 0);
		HARNESS_EQ(smarm_chan_recv(pc->pong, &v), 0);
	}
	pc->ponger = info_new();
	for (int k = 0; k < 100000; k++) {
		HARNESS_EQ(smarm_actor_info(NULL, pid, &pc->ponger), 0);
		if (pc->ponger.state == SMARM_ACTOR_PARKED)
			break;
		smarm_actor_yield();
	}
	{
		/* The root's own counts, against its first look. */
		smarm_actor_info_t me = info_new();
		HARNESS_EQ(smarm_actor_info(NULL, smarm_actor_self(), &me), 0);
		HARNESS_CHECK(me.messages_out - pc->pinger.messages_out >=
			      ROUNDS);
		HARNESS_CHECK(me.messages_in - pc->pinger.messages_in >=
			      ROUNDS);
		HARNESS_CHECK(me.runs - pc->pinger.runs >= ROUNDS / 2);
		pc->pinger = me;
	}
	HARNESS_EQ(smarm_chan_send(pc->ping, &v), 0);
	HARNESS_EQ(smarm_actor_join(pid, NULL, NULL), 0);
	harness_chan_drop(pc->ping);
	harness_chan_drop(pc->pong);
}

START_TEST(test_obs_stats_messages_runs_and_queue_wait)
{
	struct pp_case pc;
	memset(&pc, 0, sizeof pc);
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(2, SMARM_OPT_ACTOR_STATS, 1, root_pp,
					 &pc, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(pc.ponger.state, SMARM_ACTOR_PARKED);
	ck_assert_uint_eq(pc.ponger.messages_in, ROUNDS);
	ck_assert_uint_eq(pc.ponger.messages_out, ROUNDS);
	/* Woken once per round, at least (a wake may find it running). */
	ck_assert_uint_ge(pc.ponger.runs, ROUNDS / 2);
	ck_assert_uint_gt(pc.ponger.runq_wait_ns, 0);
	ck_assert_uint_gt(pc.ponger.cpu_ns, 0);
}
END_TEST

/* ------------------------------------------------------ off, version 1 */

struct off_case {
	smarm_actor_info_t v2, v1;
};

static void root_off(void *arg)
{
	struct off_case *oc = arg;
	uint64_t x = burn(1);
	smarm_actor_yield();
	(void)x;
	oc->v2 = info_new();
	oc->v2.size = SMARM_ACTOR_INFO_SIZE_V2; /* exactly version 2 */
	HARNESS_EQ(smarm_actor_info(NULL, smarm_actor_self(), &oc->v2), 0);
	oc->v1 = info_new();
	oc->v1.size = SMARM_ACTOR_INFO_SIZE_V1;
	HARNESS_EQ(smarm_actor_info(NULL, smarm_actor_self(), &oc->v1), 0);
}

START_TEST(test_obs_stats_off_reports_zero_and_v1_gets_v1)
{
	struct off_case oc;
	const unsigned char *tail;
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_off, &oc), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(oc.v2.version, 2);
	ck_assert_uint_eq(oc.v2.size, SMARM_ACTOR_INFO_SIZE_V2);
	ck_assert_uint_eq(oc.v2.cpu_ns, 0);
	ck_assert_uint_eq(oc.v2.runs, 0);
	ck_assert_uint_eq(oc.v2.runq_wait_ns, 0);
	ck_assert_uint_eq(oc.v2.messages_in, 0);
	ck_assert_uint_eq(oc.v2.messages_out, 0);
	ck_assert_uint_eq(oc.v2.preempt_safe, 0);
	ck_assert_uint_eq(oc.v2.preempt_async, 0);
	ck_assert_int_eq(oc.v1.version, 1);
	ck_assert_uint_eq(oc.v1.size, SMARM_ACTOR_INFO_SIZE_V1);
	ck_assert_uint_eq(oc.v1.pid.id, oc.v2.pid.id);
	/* Nothing past the version 1 record was written. */
	tail = (const unsigned char *)&oc.v1 + SMARM_ACTOR_INFO_SIZE_V1;
	for (size_t i = 0; i < sizeof oc.v1 - SMARM_ACTOR_INFO_SIZE_V1; i++)
		ck_assert_uint_eq(tail[i], 0xa5);
}
END_TEST

/* ------------------------------------------------------------ wait on */

struct won_case {
	const smarm_behaviour_t *probe;
	smarm_pid_t server;
	smarm_mutex_t *mx;
	int pipe[2];
	smarm_chan_t *go;
	/* what the root saw: caller, joiner, locker, reader, sleeper */
	smarm_actor_info_t call, call_v1, srv, join, mutex, io, sleep;
	smarm_pid_t joined, holder;
};

static void caller(void *arg)
{
	struct won_case *wc = arg;
	smarm_server_t *s = NULL;
	smarm_value_t ns;
	memset(&ns, 0, sizeof ns);
	ns.type = SMARM_T_U64;
	ns.v.u = MS(300);
	HARNESS_EQ(smarm_server_open(NULL, wc->probe, wc->server, &s), 0);
	HARNESS_EQ(smarm_server_call(s, "block", &ns, 1, NULL, MS(10000)), 0);
	smarm_server_free(s);
}

static void waits_go(void *arg)
{
	struct won_case *wc = arg;
	int v;
	HARNESS_EQ(smarm_chan_recv(wc->go, &v), 0);
}

static void joiner(void *arg)
{
	struct won_case *wc = arg;
	HARNESS_EQ(smarm_actor_join(wc->joined, NULL, NULL), 0);
}

static void holder(void *arg)
{
	struct won_case *wc = arg;
	int v;
	HARNESS_EQ(smarm_mutex_lock(wc->mx, SMARM_NO_TIMEOUT), 0);
	HARNESS_EQ(smarm_chan_recv(wc->go, &v), 0);
	HARNESS_EQ(smarm_mutex_unlock(wc->mx), 0);
}

static void locker(void *arg)
{
	struct won_case *wc = arg;
	HARNESS_EQ(smarm_mutex_lock(wc->mx, SMARM_NO_TIMEOUT), 0);
	HARNESS_EQ(smarm_mutex_unlock(wc->mx), 0);
}

static void reader(void *arg)
{
	struct won_case *wc = arg;
	HARNESS_EQ(smarm_io_wait_readable(wc->pipe[0]), 0);
}

static void sleeper(void *arg)
{
	(void)arg;
	HARNESS_EQ(smarm_actor_sleep(MS(300)), 0);
}

/* Poll pid's record until it is parked in `wait` (5 s at most). */
static void await_wait(smarm_pid_t pid, int wait, smarm_actor_info_t *in)
{
	for (int k = 0; k < 5000; k++) {
		*in = info_new();
		HARNESS_EQ(smarm_actor_info(NULL, pid, in), 0);
		if (in->state == SMARM_ACTOR_PARKED && in->wait == wait)
			return;
		smarm_actor_sleep(MS(1));
	}
}

static void root_won(void *arg)
{
	struct won_case *wc = arg;
	smarm_server_t *sv = NULL;
	smarm_pid_t c, j, h, l, r, z;
	int v = 0;
	HARNESS_EQ(smarm_chan_alloc(&wc->go, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_mutex_alloc(&wc->mx), 0);
	/* A call: the caller waits on the server, which sleeps. */
	HARNESS_EQ(smarm_server_start(wc->probe, NULL, NULL, &sv), 0);
	HARNESS_EQ(smarm_server_pid(sv, &wc->server), 0);
	HARNESS_EQ(smarm_actor_spawn(&c, caller, wc, NULL), 0);
	await_wait(c, SMARM_WAIT_CALL, &wc->call);
	wc->call_v1 = info_new();
	wc->call_v1.size = SMARM_ACTOR_INFO_SIZE_V1;
	HARNESS_EQ(smarm_actor_info(NULL, c, &wc->call_v1), 0);
	await_wait(wc->server, SMARM_WAIT_SLEEP, &wc->srv);
	/* A join of an actor parked on a channel. */
	HARNESS_EQ(smarm_actor_spawn(&wc->joined, waits_go, wc, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&j, joiner, wc, NULL), 0);
	await_wait(j, SMARM_WAIT_JOIN, &wc->join);
	/* A mutex someone holds. */
	HARNESS_EQ(smarm_actor_spawn(&h, holder, wc, NULL), 0);
	wc->holder = h;
	for (int k = 0; k < 5000 && smarm_mutex_try_lock(wc->mx) == 0; k++) {
		HARNESS_EQ(smarm_mutex_unlock(wc->mx), 0);
		smarm_actor_sleep(MS(1)); /* not held yet */
	}
	HARNESS_EQ(smarm_actor_spawn(&l, locker, wc, NULL), 0);
	await_wait(l, SMARM_WAIT_MUTEX, &wc->mutex);
	/* An fd. */
	HARNESS_EQ(pipe(wc->pipe), 0);
	HARNESS_EQ(smarm_actor_spawn(&r, reader, wc, NULL), 0);
	await_wait(r, SMARM_WAIT_IO, &wc->io);
	/* A sleep. */
	HARNESS_EQ(smarm_actor_spawn(&z, sleeper, wc, NULL), 0);
	await_wait(z, SMARM_WAIT_SLEEP, &wc->sleep);
	/* Let everyone go. */
	HARNESS_EQ(smarm_chan_send(wc->go, &v), 0); /* the joined one */
	HARNESS_EQ(smarm_chan_send(wc->go, &v), 0); /* the holder */
	HARNESS_EQ(write(wc->pipe[1], "x", 1), 1);
	HARNESS_EQ(smarm_actor_join(c, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(j, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(h, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(l, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(r, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(z, NULL, NULL), 0);
	HARNESS_EQ(smarm_server_shutdown(sv, SMARM_NO_TIMEOUT, NULL), 0);
	smarm_server_free(sv);
	close(wc->pipe[0]);
	close(wc->pipe[1]);
	HARNESS_EQ(smarm_mutex_free(wc->mx), 0);
	harness_chan_drop(wc->go);
}

START_TEST(test_obs_wait_on_call_join_mutex_io_sleep)
{
	struct won_case wc;
	smarm_plugin_t *pl = NULL;
	char msg[256];
	const char *path = getenv("SMARM_TEST_PROBE");
	memset(&wc, 0, sizeof wc);
	ck_assert_ptr_nonnull(path);
	ck_assert_int_eq(smarm_plugin_open(path, &pl, msg, sizeof msg), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "probe", &wc.probe), 0);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_won, &wc), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(wc.call.wait, SMARM_WAIT_CALL);
	ck_assert_uint_eq(wc.call.wait_on, wc.server.id);
	ck_assert_int_eq(wc.call_v1.version, 1);
	ck_assert_int_eq(wc.call_v1.wait, SMARM_WAIT_TIMED); /* a deadline */
	ck_assert_int_eq(wc.srv.wait, SMARM_WAIT_SLEEP); /* in its handler */
	ck_assert_int_eq(wc.join.wait, SMARM_WAIT_JOIN);
	ck_assert_uint_eq(wc.join.wait_on, wc.joined.id);
	ck_assert_int_eq(wc.mutex.wait, SMARM_WAIT_MUTEX);
	ck_assert_uint_eq(wc.mutex.wait_on, wc.holder.id);
	ck_assert_int_eq(wc.io.wait, SMARM_WAIT_IO);
	ck_assert_uint_eq(wc.io.wait_on, (uint64_t)wc.pipe[0]);
	ck_assert_int_eq(wc.sleep.wait, SMARM_WAIT_SLEEP);
	ck_assert_uint_ne(wc.sleep.wait_deadline_ns, 0);
	ck_assert_uint_eq(wc.sleep.wait_on, 0);
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
}
END_TEST

/* ------------------------------------------------------- off-worker walk */

#define BIG 20500 /* above the library's offload threshold (20000) */

struct big_case {
	smarm_chan_t *go;
	size_t count;
	int self_state; /* the caller's own record in its snapshot */
	int rc;
};

static void big_waiter(void *arg)
{
	struct big_case *bc = arg;
	int v;
	HARNESS_EQ(smarm_chan_recv(bc->go, &v), 0);
}

static void root_big(void *arg)
{
	struct big_case *bc = arg;
	smarm_snapshot_t *snap = NULL;
	smarm_actor_info_t in = info_new();
	size_t i;
	int v = 0;
	HARNESS_EQ(smarm_chan_alloc(&bc->go, sizeof v, NULL), 0);
	for (int k = 0; k < BIG; k++)
		HARNESS_EQ(smarm_actor_spawn(NULL, big_waiter, bc, NULL), 0);
	while (harness_chan_len(bc->go) != 0 ||
	       harness_actor_stat(SMARM_STAT_LIVE_ACTORS) < BIG + 1)
		smarm_actor_yield();
	smarm_actor_yield(); /* let them all reach their receive */
	/*
	 * The pool may read this actor's record before it has parked (its
	 * slot comes first in the walk): a loaded machine kept it running
	 * that long once. A walk on the worker never finds it parked, so
	 * one of a few finding it so still tells the two apart.
	 */
	for (int tries = 0; tries < 10 && bc->self_state != SMARM_ACTOR_PARKED;
	     tries++) {
		bc->rc = smarm_snapshot_take(NULL, &snap);
		if (bc->rc != 0)
			break;
		bc->count = smarm_snapshot_count(snap);
		HARNESS_EQ(smarm_snapshot_find(snap, smarm_actor_self(), &i),
			   0);
		HARNESS_EQ(smarm_snapshot_get(snap, i, &in), 0);
		bc->self_state = in.state;
		smarm_snapshot_free(snap);
	}
	for (int k = 0; k < BIG; k++)
		HARNESS_EQ(smarm_chan_send(bc->go, &v), 0);
	while (harness_actor_stat(SMARM_STAT_LIVE_ACTORS) > 1)
		smarm_actor_sleep(MS(1));
	harness_chan_drop(bc->go);
}

/*
 * One worker: a snapshot walked on the worker would find its caller
 * running; walked on the pool, the caller is parked meanwhile (in one of
 * a few snapshots: see root_big).
 */
START_TEST(test_obs_big_snapshot_walked_off_worker)
{
	struct big_case bc;
	memset(&bc, 0, sizeof bc);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, root_big, &bc), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(bc.rc, 0);
	ck_assert_uint_ge(bc.count, BIG + 1);
	ck_assert_int_eq(bc.self_state, SMARM_ACTOR_PARKED);
}
END_TEST

Suite *smarm_test_obs_stats_suite(void)
{
	Suite *s = suite_create("obs_stats");
	TCase *tc = tcase_create("stats");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_obs_stats_off_reports_zero_and_v1_gets_v1);
	tcase_add_test(tc, test_obs_stats_cpu_time_of_a_spinner);
	tcase_add_test(tc, test_obs_stats_safe_point_preemptions_counted);
	tcase_add_test(tc, test_obs_stats_async_preemptions_counted);
	tcase_add_test(tc, test_obs_stats_messages_runs_and_queue_wait);
	suite_add_tcase(s, tc);
	tc = tcase_create("wait_on");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_obs_wait_on_call_join_mutex_io_sleep);
	suite_add_tcase(s, tc);
	tc = tcase_create("offload");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_obs_big_snapshot_walked_off_worker);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(obs_stats)
