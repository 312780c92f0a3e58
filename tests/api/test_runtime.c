/* SPDX-License-Identifier: MIT */
/*
 * test_runtime.c - the node as a whole: sequential reuse, crash capture,
 * multi-worker completion and wakeups, OS-thread spread, slot accounting,
 * root crash and root exit, run-queue stats, and configuration limits.
 */
#include "harness.h"

#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void rt_nop(void *arg)
{
	(void)arg;
}

/* ------------------------------------------------------ sequential reuse */

static atomic_int rt_runs;

static void rt_root_count(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, rt_nop, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
	atomic_fetch_add(&rt_runs, 1);
}

START_TEST(test_runtime_node_reused_sequentially_runs_twice)
{
	smarm_node_t *node = harness_open(2);
	int how = -1;
	atomic_store(&rt_runs, 0);
	ck_assert_int_eq(smarm_node_run(node, rt_root_count, NULL, &how, NULL),
			 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	how = -1;
	ck_assert_int_eq(smarm_node_run(node, rt_root_count, NULL, &how, NULL),
			 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&rt_runs), 2);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_SPAWNED), 4);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ------------------------------------------------------ 1-worker join */

static pthread_t rt_root_thread, rt_child_thread;
static int rt_join_rc, rt_join_how;

static void rt_child_thread_rec(void *arg)
{
	(void)arg;
	rt_child_thread = pthread_self();
}

static void rt_root_one_worker(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	rt_root_thread = pthread_self();
	smarm_actor_spawn(&p, rt_child_thread_rec, NULL, NULL);
	rt_join_rc = smarm_actor_join(p, &rt_join_how, NULL);
}

START_TEST(test_runtime_one_worker_spawn_join_on_caller_thread)
{
	rt_join_how = -1;
	ck_assert_int_eq(harness_run(1, rt_root_one_worker, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(rt_join_rc, 0);
	ck_assert_int_eq(rt_join_how, SMARM_EXIT_NORMAL);
	/* worker 0 is the thread that called smarm_node_run */
	ck_assert(pthread_equal(rt_root_thread, pthread_self()));
	ck_assert(pthread_equal(rt_child_thread, pthread_self()));
}
END_TEST

/* --------------------------------------------------------- crash capture */

static int rt_crash_how, rt_crash_rc, rt_ok_how, rt_ok_rc;
static intptr_t rt_crash_reason;
static atomic_int rt_after_crash;

static void rt_crasher(void *arg)
{
	(void)arg;
	smarm_actor_crash(-77);
	atomic_store(&rt_after_crash, 1); /* never reached */
}

static void rt_survivor(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++)
		smarm_actor_yield();
}

static void rt_root_crash(void *arg)
{
	smarm_pid_t c, ok;
	(void)arg;
	smarm_actor_spawn(&ok, rt_survivor, NULL, NULL);
	smarm_actor_spawn(&c, rt_crasher, NULL, NULL);
	rt_crash_rc = smarm_actor_join(c, &rt_crash_how, &rt_crash_reason);
	rt_ok_rc = smarm_actor_join(ok, &rt_ok_how, NULL);
}

START_TEST(test_runtime_crash_captured_as_join_outcome)
{
	atomic_store(&rt_after_crash, 0);
	rt_crash_how = rt_ok_how = -1;
	ck_assert_int_eq(harness_run(_i ? 4 : 1, rt_root_crash, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(rt_crash_rc, 0);
	ck_assert_int_eq(rt_crash_how, SMARM_EXIT_CRASHED);
	ck_assert_int_eq((int)rt_crash_reason, -77);
	ck_assert_int_eq(atomic_load(&rt_after_crash), 0);
	/* the crash of one actor does not disturb another */
	ck_assert_int_eq(rt_ok_rc, 0);
	ck_assert_int_eq(rt_ok_how, SMARM_EXIT_NORMAL);
}
END_TEST

/* ------------------------------------------------- 100 actors, 4 workers */

static atomic_int rt_done_count;

static void rt_worker_actor(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++)
		smarm_actor_yield();
	atomic_fetch_add(&rt_done_count, 1);
}

static int rt_join_fail;

static void rt_root_hundred(void *arg)
{
	smarm_pid_t p[100];
	(void)arg;
	for (int i = 0; i < 100; i++)
		if (smarm_actor_spawn(&p[i], rt_worker_actor, NULL, NULL) != 0)
			rt_join_fail++;
	for (int i = 0; i < 100; i++) {
		int how = -1;
		if (smarm_actor_join(p[i], &how, NULL) != 0 ||
		    how != SMARM_EXIT_NORMAL)
			rt_join_fail++;
	}
}

START_TEST(test_runtime_four_workers_hundred_actors_complete)
{
	atomic_store(&rt_done_count, 0);
	rt_join_fail = 0;
	ck_assert_int_eq(harness_run(4, rt_root_hundred, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&rt_done_count), 100);
	ck_assert_int_eq(rt_join_fail, 0);
}
END_TEST

/* ------------------------------------------------ channel pairs (pingpong) */

#define RT_PAIRS 50
#define RT_ROUNDS 2000

struct rt_pair {
	smarm_chan_t *ping, *pong;
	long pinger_sum, ponger_sum;
	int errors;
};

static struct rt_pair rt_pairs[RT_PAIRS];

static void rt_pinger(void *arg)
{
	struct rt_pair *pr = arg;
	for (long i = 1; i <= RT_ROUNDS; i++) {
		long v = 0;
		if (smarm_chan_send(pr->ping, &i) != 0)
			pr->errors++;
		if (smarm_chan_recv(pr->pong, &v) != 0 || v != -i)
			pr->errors++;
		pr->pinger_sum += v;
	}
	smarm_chan_sender_free(pr->ping); /* closes ping: the ponger ends */
}

static void rt_ponger(void *arg)
{
	struct rt_pair *pr = arg;
	long v;
	int rc;
	while ((rc = smarm_chan_recv(pr->ping, &v)) == 0) {
		long r = -v;
		pr->ponger_sum += v;
		if (smarm_chan_send(pr->pong, &r) != 0)
			pr->errors++;
	}
	if (rc != SMARM_ECLOSED)
		pr->errors++;
}

static void rt_root_pairs(void *arg)
{
	smarm_pid_t p[2 * RT_PAIRS];
	(void)arg;
	for (int i = 0; i < RT_PAIRS; i++) {
		struct rt_pair *pr = &rt_pairs[i];
		smarm_chan_alloc(&pr->ping, sizeof(long), NULL);
		smarm_chan_alloc(&pr->pong, sizeof(long), NULL);
		smarm_actor_spawn(&p[2 * i], rt_ponger, pr, NULL);
		smarm_actor_spawn(&p[2 * i + 1], rt_pinger, pr, NULL);
	}
	for (int i = 0; i < 2 * RT_PAIRS; i++)
		smarm_actor_join(p[i], NULL, NULL);
	for (int i = 0; i < RT_PAIRS; i++) {
		smarm_chan_receiver_free(rt_pairs[i].ping);
		harness_chan_drop(rt_pairs[i].pong);
	}
}

START_TEST(test_runtime_channel_pairs_no_lost_wakeups)
{
	const long expect = (long)RT_ROUNDS * (RT_ROUNDS + 1) / 2;
	memset(rt_pairs, 0, sizeof rt_pairs);
	ck_assert_int_eq(harness_run(4, rt_root_pairs, NULL),
			 SMARM_EXIT_NORMAL);
	for (int i = 0; i < RT_PAIRS; i++) {
		ck_assert_int_eq(rt_pairs[i].errors, 0);
		ck_assert_int_eq(rt_pairs[i].ponger_sum, expect);
		ck_assert_int_eq(rt_pairs[i].pinger_sum, -expect);
	}
}
END_TEST

/* ------------------------------------------------------ OS-thread spread */

#define RT_SPREAD_ACTORS 32
#define RT_SPREAD_STEPS 20

static pid_t rt_tids[RT_SPREAD_ACTORS * RT_SPREAD_STEPS];
static atomic_int rt_tid_n;

static void rt_spreader(void *arg)
{
	(void)arg;
	for (int i = 0; i < RT_SPREAD_STEPS; i++) {
		int k = atomic_fetch_add(&rt_tid_n, 1);
		uint64_t t0 = smarm_now_ns();
		rt_tids[k] = (pid_t)syscall(SYS_gettid);
		while (smarm_now_ns() - t0 < US(100))
			smarm_check(); /* a little work per step */
		smarm_actor_yield();
	}
}

static void rt_root_spread(void *arg)
{
	smarm_pid_t p[RT_SPREAD_ACTORS];
	(void)arg;
	for (int i = 0; i < RT_SPREAD_ACTORS; i++)
		smarm_actor_spawn(&p[i], rt_spreader, NULL, NULL);
	for (int i = 0; i < RT_SPREAD_ACTORS; i++)
		smarm_actor_join(p[i], NULL, NULL);
}

START_TEST(test_runtime_actors_run_on_several_os_threads)
{
	int distinct = 0;
	pid_t seen[8];
	atomic_store(&rt_tid_n, 0);
	ck_assert_int_eq(harness_run(4, rt_root_spread, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&rt_tid_n),
			 RT_SPREAD_ACTORS * RT_SPREAD_STEPS);
	for (int i = 0; i < RT_SPREAD_ACTORS * RT_SPREAD_STEPS; i++) {
		int j;
		for (j = 0; j < distinct; j++)
			if (seen[j] == rt_tids[i])
				break;
		if (j == distinct && distinct < 8)
			seen[distinct++] = rt_tids[i];
	}
	ck_assert_int_gt(distinct, 1);
	ck_assert_int_le(distinct, 4); /* never more than the workers */
}
END_TEST

/* ---------------------------------- a wake must reach an idle worker */

/*
 * A wakes B (parked on a channel) and then keeps its worker busy without
 * a safe point (a foreign blocking call, a long computation). With three
 * other workers idle, B must run on one of them rather than wait for A.
 */
static smarm_chan_t *rt_wake_ch;
static atomic_int rt_b_ran, rt_b_parked;
static uint64_t rt_b_latency;
static int rt_a_gave_up;

static void rt_wake_target(void *arg)
{
	int v;
	(void)arg;
	atomic_store(&rt_b_parked, 1);
	smarm_chan_recv(rt_wake_ch, &v);
	atomic_store(&rt_b_ran, 1);
}

static void rt_root_wake_then_spin(void *arg)
{
	smarm_pid_t b;
	int v = 1;
	uint64_t t0, limit = MS(5000);
	(void)arg;
	smarm_chan_alloc(&rt_wake_ch, sizeof(int), NULL);
	smarm_actor_spawn(&b, rt_wake_target, NULL, NULL);
	while (!atomic_load(&rt_b_parked))
		smarm_actor_yield();
	for (int i = 0; i < 4; i++)
		smarm_actor_yield(); /* B parks in its recv */
	smarm_chan_send(rt_wake_ch, &v);
	t0 = smarm_now_ns();
	/* busy, no safe point: like a blocking foreign call */
	while (!atomic_load(&rt_b_ran) && smarm_now_ns() - t0 < limit)
		;
	rt_b_latency = smarm_now_ns() - t0;
	rt_a_gave_up = !atomic_load(&rt_b_ran);
	smarm_actor_join(b, NULL, NULL);
	harness_chan_drop(rt_wake_ch);
}

START_TEST(test_runtime_woken_actor_not_stranded_behind_busy_waker)
{
	atomic_store(&rt_b_ran, 0);
	atomic_store(&rt_b_parked, 0);
	rt_a_gave_up = -1;
	ck_assert_int_eq(harness_run(4, rt_root_wake_then_spin, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(rt_a_gave_up, 0);
	/* Stranded, B would wait for A's 5 s; run, it takes well under a
	 * millisecond on an idle machine, but 4 workers on 2 loaded cores
	 * have waited 508 ms for the OS to run B's (500 was the bound). */
	ck_assert_elapsed_lt(rt_b_latency, MS(2500));
}
END_TEST

/* ----------------------------------------------------------- slot leaks */

static int rt_leak_fail;

static void rt_root_churn500(void *arg)
{
	(void)arg;
	for (int i = 0; i < 500; i++) {
		smarm_pid_t p;
		if (smarm_actor_spawn(&p, rt_nop, NULL, NULL) != 0 ||
		    smarm_actor_join(p, NULL, NULL) != 0)
			rt_leak_fail++;
	}
}

START_TEST(test_runtime_spawn_join_500_leaks_no_slot)
{
	smarm_node_t *node = harness_open(4);
	int how = -1;
	rt_leak_fail = 0;
	ck_assert_int_eq(
		smarm_node_run(node, rt_root_churn500, NULL, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(rt_leak_fail, 0);
	ck_assert_int_gt(harness_stat(node, SMARM_STAT_SLOTS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_FREE_SLOTS),
			 harness_stat(node, SMARM_STAT_SLOTS));
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_SPAWNED), 501);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ------------------------------------------------------------- root crash */

static void rt_root_crashes(void *arg)
{
	(void)arg;
	smarm_actor_crash(12345);
}

START_TEST(test_runtime_root_crash_reported_by_run)
{
	smarm_node_t *node = harness_open(_i ? 4 : 1);
	int how = -1;
	intptr_t reason = 0;
	ck_assert_int_eq(
		smarm_node_run(node, rt_root_crashes, NULL, &how, &reason), 0);
	ck_assert_int_eq(how, SMARM_EXIT_CRASHED);
	ck_assert_int_eq((long)reason, 12345);
	/* reusable afterwards, and the outcome is per run */
	how = -1;
	reason = -1;
	atomic_store(&rt_runs, 0);
	ck_assert_int_eq(
		smarm_node_run(node, rt_root_count, NULL, &how, &reason), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq((long)reason, 0);
	ck_assert_int_eq(atomic_load(&rt_runs), 1);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* -------------------------------------------------------- root exit stops */

#define RT_ORPHANS 10

static atomic_int rt_orphan_cleanups, rt_orphan_past_recv, rt_orphan_ready;
static smarm_chan_t *rt_orphan_ch[RT_ORPHANS];
static smarm_chan_t *rt_ready;

static void rt_orphan_cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&rt_orphan_cleanups, 1);
}

static void rt_orphan(void *arg)
{
	smarm_chan_t *ch = arg;
	int v = 1;
	smarm_cleanup_push(rt_orphan_cleanup, NULL);
	smarm_chan_send(rt_ready, &v);
	smarm_chan_recv(ch, &v); /* nobody ever sends */
	atomic_fetch_add(&rt_orphan_past_recv, 1);
}

static void rt_sleeper_orphan(void *arg)
{
	int v = 1;
	(void)arg;
	smarm_cleanup_push(rt_orphan_cleanup, NULL);
	smarm_chan_send(rt_ready, &v);
	smarm_actor_sleep(MS(60000));
	atomic_fetch_add(&rt_orphan_past_recv, 1);
}

static void rt_root_leaves_orphans(void *arg)
{
	int v;
	(void)arg;
	smarm_chan_alloc(&rt_ready, sizeof(int), NULL);
	for (int i = 0; i < RT_ORPHANS; i++) {
		smarm_chan_alloc(&rt_orphan_ch[i], sizeof(int), NULL);
		/* detached (out NULL) and joinable ones alike */
		smarm_pid_t p;
		smarm_pid_t *out = (i % 4 < 2) ? &p : NULL;
		if (i % 2)
			smarm_actor_spawn(out, rt_orphan, rt_orphan_ch[i],
					  NULL);
		else
			smarm_actor_spawn(out, rt_sleeper_orphan, NULL, NULL);
	}
	for (int i = 0; i < RT_ORPHANS; i++)
		if (smarm_chan_recv(rt_ready, &v) == 0)
			atomic_fetch_add(&rt_orphan_ready, 1);
	/* return: root exit stops everyone still alive */
}

START_TEST(test_runtime_root_exit_stops_parked_actors)
{
	uint64_t t0;
	atomic_store(&rt_orphan_cleanups, 0);
	atomic_store(&rt_orphan_past_recv, 0);
	atomic_store(&rt_orphan_ready, 0);
	t0 = smarm_now_ns();
	ck_assert_int_eq(harness_run(_i ? 4 : 1, rt_root_leaves_orphans, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_elapsed_lt(smarm_now_ns() - t0, MS(5000));
	ck_assert_int_eq(atomic_load(&rt_orphan_ready), RT_ORPHANS);
	ck_assert_int_eq(atomic_load(&rt_orphan_cleanups), RT_ORPHANS);
	ck_assert_int_eq(atomic_load(&rt_orphan_past_recv), 0);
	for (int i = 0; i < RT_ORPHANS; i++) {
		harness_chan_drop(rt_orphan_ch[i]);
	}
	harness_chan_drop(rt_ready);
}
END_TEST

/*
 * Joinable children still alive when the root exits are stopped; once the
 * run is over nobody can join them any more (join needs an actor of that
 * run), so their slots must not stay taken into the node's next run.
 */
static smarm_chan_t *rt_never;
static int rt_rerun_spawned, rt_rerun_rc;

static void rt_park_forever(void *arg)
{
	int v;
	(void)arg;
	smarm_chan_recv(rt_never, &v);
}

static void rt_root_unjoined_children(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		smarm_pid_t p;
		smarm_actor_spawn(&p, rt_park_forever, NULL,
				  NULL); /* joinable */
	}
	smarm_actor_yield();
}

static void rt_root_fill(void *arg)
{
	smarm_pid_t p[8];
	int rc = 0;
	(void)arg;
	rt_rerun_spawned = 0;
	while (rt_rerun_spawned < 8 &&
	       (rc = smarm_actor_spawn(&p[rt_rerun_spawned], rt_nop, NULL,
				       NULL)) == 0)
		rt_rerun_spawned++;
	rt_rerun_rc = rc;
	for (int i = 0; i < rt_rerun_spawned; i++)
		smarm_actor_join(p[i], NULL, NULL);
}

START_TEST(test_runtime_rerun_after_unjoined_children_has_all_slots)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_MAX_ACTORS, 4), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_chan_alloc(&rt_never, sizeof(int), NULL), 0);
	ck_assert_int_eq(smarm_node_run(node, rt_root_unjoined_children, NULL,
					NULL, NULL),
			 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_FREE_SLOTS),
			 harness_stat(node, SMARM_STAT_SLOTS));
	/* the next run has the whole limit: root + 3 */
	rt_rerun_spawned = -1;
	ck_assert_int_eq(smarm_node_run(node, rt_root_fill, NULL, NULL, NULL),
			 0);
	ck_assert_int_eq(rt_rerun_spawned, 3);
	ck_assert_int_eq(rt_rerun_rc, SMARM_EATCAPACITY);
	ck_assert_int_eq(smarm_node_close(node), 0);
	harness_chan_drop(rt_never);
}
END_TEST

/* ---------------------------------------------------- run queue after run */

static void rt_yielder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++)
		smarm_actor_yield();
}

static void rt_root_yielders(void *arg)
{
	(void)arg;
	for (int i = 0; i < 40; i++)
		smarm_actor_spawn(NULL, rt_yielder, NULL, NULL);
}

START_TEST(test_runtime_run_queue_stat_zero_after_run)
{
	smarm_node_t *node = harness_open(4);
	ck_assert_int_eq(
		smarm_node_run(node, rt_root_yielders, NULL, NULL, NULL), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_RUN_QUEUE), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_WORKERS), 4);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ------------------------------------------------- run from inside actor */

static int rt_nested_rc_same, rt_nested_rc_other;

static void rt_root_nested_run(void *arg)
{
	smarm_node_t *other = arg;
	rt_nested_rc_same =
		smarm_node_run(smarm_node_current(), rt_nop, NULL, NULL, NULL);
	rt_nested_rc_other = smarm_node_run(other, rt_nop, NULL, NULL, NULL);
}

START_TEST(test_runtime_run_from_actor_returns_estate)
{
	smarm_node_t *other = harness_open(1);
	rt_nested_rc_same = rt_nested_rc_other = 1;
	ck_assert_int_eq(harness_run(1, rt_root_nested_run, other),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(rt_nested_rc_same, SMARM_ESTATE);
	ck_assert_int_eq(rt_nested_rc_other, SMARM_ESTATE);
	/* the refused run left the other node untouched and usable */
	ck_assert_int_eq(harness_stat(other, SMARM_STAT_SPAWNED), 0);
	ck_assert_int_eq(smarm_node_run(other, rt_nop, NULL, NULL, NULL), 0);
	ck_assert_int_eq(smarm_node_close(other), 0);
}
END_TEST

/* ----------------------------------------------------------------- config */

START_TEST(test_runtime_config_out_of_range_returns_einval)
{
	smarm_config_t *cfg = NULL;
	int64_t v = 0;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 0),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 65),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, -1),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_RESERVE, 0),
			 SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_STACK_RESERVE, 4095),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_RESERVE,
					      (INT64_C(1) << 30) + 1),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_GUARD, 0),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_MAX_ACTORS, 0),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_MAX_ACTORS,
					      (INT64_C(1) << 24) + 1),
			 SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_STACK_POOL_CAP, -1),
		SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_STACK_POOL_CAP, 1048577),
		SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_TIMESLICE_NS, 9999),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_TIMESLICE_NS,
					      INT64_C(10000000001)),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, 0, 1), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, 31, 1), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_MODE, 3),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_MODE, -1),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, 9999, 1), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, -1, 1), SMARM_EINVAL);
	/* a rejected value leaves the config unchanged */
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 3), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 65),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_WORKERS, &v), 0);
	ck_assert_int_eq(v, 3);
	ck_assert_int_eq(smarm_config_get_int(cfg, 31, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_get_int(cfg, 0, &v), SMARM_EINVAL);
	smarm_config_free(cfg);
}
END_TEST

START_TEST(test_runtime_config_boundaries_accepted)
{
	smarm_config_t *cfg = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 64), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_MAX_ACTORS, 1), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_MAX_ACTORS,
					      INT64_C(1) << 24),
			 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_STACK_RESERVE, 4096), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_RESERVE,
					      INT64_C(1) << 30),
			 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_GUARD, 4096),
			 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_POOL_CAP, 0),
			 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_TIMESLICE_NS, 10000), 0);
	smarm_config_free(cfg);
}
END_TEST

START_TEST(test_runtime_config_get_returns_defaults)
{
	smarm_config_t *cfg = NULL;
	int64_t v = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t workers;
	if (cpus < 1)
		cpus = 1;
	if (cpus > 64)
		cpus = 64;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_WORKERS, &workers),
			 0);
	ck_assert_int_eq(workers, cpus);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_MAX_ACTORS, &v),
			 0);
	ck_assert_int_eq(v, 1048576);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_STACK_RESERVE, &v),
			 0);
	ck_assert_int_eq(v, 65536);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_STACK_GUARD, &v),
			 0);
	ck_assert_int_eq(v, 1048576);
	ck_assert_int_eq(
		smarm_config_get_int(cfg, SMARM_OPT_STACK_POOL_CAP, &v), 0);
	ck_assert_int_eq(v, workers * 4 > 16 ? workers * 4 : 16);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_TIMESLICE_NS, &v),
			 0);
	ck_assert_int_eq(v, 2000000);
	/* the pool cap default follows the worker count */
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 10), 0);
	ck_assert_int_eq(
		smarm_config_get_int(cfg, SMARM_OPT_STACK_POOL_CAP, &v), 0);
	ck_assert_int_eq(v, 40);
	smarm_config_free(cfg);
}
END_TEST

START_TEST(test_runtime_null_config_opens_with_defaults)
{
	smarm_node_t *node = NULL;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus > 64)
		cpus = 64;
	ck_assert_int_eq(smarm_node_open(&node, NULL), 0);
	ck_assert_ptr_nonnull(node);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_WORKERS), cpus);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_SPAWNED), 0);
	ck_assert_int_eq(smarm_node_run(node, rt_root_count, NULL, NULL, NULL),
			 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

Suite *smarm_test_runtime_suite(void)
{
	Suite *s = suite_create("runtime");
	TCase *tc = tcase_create("lifecycle");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_runtime_node_reused_sequentially_runs_twice);
	tcase_add_test(tc, test_runtime_one_worker_spawn_join_on_caller_thread);
	tcase_add_loop_test(tc, test_runtime_crash_captured_as_join_outcome, 0,
			    2);
	tcase_add_loop_test(tc, test_runtime_root_crash_reported_by_run, 0, 2);
	tcase_add_loop_test(tc, test_runtime_root_exit_stops_parked_actors, 0,
			    2);
	tcase_add_test(tc, test_runtime_run_from_actor_returns_estate);
	tcase_add_test(
		tc, test_runtime_rerun_after_unjoined_children_has_all_slots);
	suite_add_tcase(s, tc);

	tc = tcase_create("multi");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_runtime_four_workers_hundred_actors_complete);
	tcase_add_test(tc, test_runtime_channel_pairs_no_lost_wakeups);
	tcase_add_test(tc, test_runtime_actors_run_on_several_os_threads);
	tcase_add_test(tc,
		       test_runtime_woken_actor_not_stranded_behind_busy_waker);
	tcase_add_test(tc, test_runtime_spawn_join_500_leaks_no_slot);
	tcase_add_test(tc, test_runtime_run_queue_stat_zero_after_run);
	suite_add_tcase(s, tc);

	tc = tcase_create("config");
	tcase_add_test(tc, test_runtime_config_out_of_range_returns_einval);
	tcase_add_test(tc, test_runtime_config_boundaries_accepted);
	tcase_add_test(tc, test_runtime_config_get_returns_defaults);
	tcase_add_test(tc, test_runtime_null_config_opens_with_defaults);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(runtime)
