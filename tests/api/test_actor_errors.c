/* SPDX-License-Identifier: MIT */
/*
 * test_actor_errors.c - every documented error of the configuration, node
 * and actor API in smarm.h: NULL arguments, calls from outside an actor,
 * stale pids, join/detach state errors, and node state errors.
 */
#include "harness.h"
#include "retired.h"

#include <pthread.h>

static void ae_nop(void *arg)
{
	(void)arg;
}

static void ae_cleanup(void *arg)
{
	(void)arg;
}

/* ----------------------------------------------- config and spawn opts */

START_TEST(test_actor_errors_config_null_args_return_einval)
{
	smarm_config_t *cfg = NULL;
	int64_t v;
	ck_assert_int_eq(smarm_config_alloc(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(NULL, SMARM_OPT_WORKERS, 1),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_get_int(NULL, SMARM_OPT_WORKERS, &v),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_WORKERS, NULL),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_get_int(cfg, 99, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, 99, 1), SMARM_EINVAL);
	smarm_config_free(cfg);
	smarm_config_free(NULL); /* no-op */
}
END_TEST

START_TEST(test_actor_errors_spawn_opts_invalid_return_einval)
{
	smarm_spawn_opts_t *o = NULL;
	ck_assert_int_eq(smarm_spawn_opts_alloc(NULL), SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(NULL, SMARM_OPT_STACK_RESERVE, 65536),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_alloc(&o), 0);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_WORKERS, 2),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_MAX_ACTORS, 10),
			 SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_TIMESLICE_NS, MS(1)),
		SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_POOL_CAP, 4),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, 0, 4096), SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, 0),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_GUARD, 0),
			 SMARM_EINVAL);
	smarm_spawn_opts_free(o);
	smarm_spawn_opts_free(NULL); /* no-op */
}
END_TEST

/* ------------------------------------------------------------- node */

START_TEST(test_actor_errors_node_null_args_return_einval)
{
	smarm_node_t *node = NULL;
	int64_t v;
	ck_assert_int_eq(smarm_node_open(NULL, NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_open(&node, NULL), 0);
	ck_assert_int_eq(smarm_node_run(NULL, ae_nop, NULL, NULL, NULL),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_run(node, NULL, NULL, NULL, NULL),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(NULL, SMARM_STAT_SLOTS, &v),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(node, SMARM_STAT_SLOTS, NULL),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(node, 0, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(node, 99, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_stop_actor(NULL, SMARM_PID_NONE),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_close(node), 0);
	ck_assert_int_eq(smarm_node_close(NULL), 0);
}
END_TEST

static int ae_close_rc, ae_run_rc;

static void ae_root_close_running(void *arg)
{
	smarm_node_t *node = arg;
	ae_close_rc = smarm_node_close(node);
	ae_run_rc = smarm_node_run(node, ae_nop, NULL, NULL, NULL);
}

START_TEST(test_actor_errors_node_close_while_running_returns_estate)
{
	smarm_node_t *node = NULL;
	int how = -1;
	ae_close_rc = ae_run_rc = 1;
	ck_assert_int_eq(smarm_node_open(&node, NULL), 0);
	ck_assert_int_eq(
		smarm_node_run(node, ae_root_close_running, node, &how, NULL),
		0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ae_close_rc, SMARM_ESTATE);
	ck_assert_int_eq(ae_run_rc, SMARM_ESTATE);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* a plain thread may not start a second run of a running node */
static int ae_thread_run_rc;

static void *ae_run_thread(void *arg)
{
	ae_thread_run_rc = smarm_node_run(arg, ae_nop, NULL, NULL, NULL);
	return NULL;
}

static void ae_root_thread_run(void *arg)
{
	pthread_t t;
	if (pthread_create(&t, NULL, ae_run_thread, arg) == 0)
		pthread_join(t, NULL); /* blocks this worker briefly */
}

START_TEST(test_actor_errors_node_run_while_running_returns_estate)
{
	smarm_node_t *node = NULL;
	ae_thread_run_rc = 1;
	ck_assert_int_eq(smarm_node_open(&node, NULL), 0);
	ck_assert_int_eq(
		smarm_node_run(node, ae_root_thread_run, node, NULL, NULL), 0);
	ck_assert_int_eq(ae_thread_run_rc, SMARM_ESTATE);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* --------------------------------------------------- outside an actor */

START_TEST(test_actor_errors_outside_actor_returns_enotactor)
{
	smarm_pid_t p = { UINT64_C(0x100000000) };
	smarm_pid_t out = SMARM_PID_NONE;
	ck_assert_int_eq(smarm_actor_spawn(&out, ae_nop, NULL, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_spawn(NULL, ae_nop, NULL, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_try_spawn(&out, ae_nop, NULL, NULL),
			 SMARM_ENOTACTOR);
	ck_assert(smarm_pid_eq(out, SMARM_PID_NONE)); /* untouched */
	ck_assert_int_eq(smarm_actor_join(p, NULL, NULL), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_detach(p), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_yield(), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_sleep(1), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_stop(p), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_exit(), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_crash(3), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_cleanup_push(ae_cleanup, NULL), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_cleanup_pop(true), SMARM_ENOTACTOR);
}
END_TEST

START_TEST(test_actor_errors_outside_actor_queries_are_neutral)
{
	smarm_pid_t p = { UINT64_C(0x100000000) };
	ck_assert(smarm_pid_eq(smarm_actor_self(), SMARM_PID_NONE));
	ck_assert(!smarm_actor_is_alive(p));
	ck_assert_ptr_null(smarm_node_current());
	ck_assert_int_eq(smarm_check(), 0);
}
END_TEST

/* also from a plain thread while a run is going on */
static int ae_thr_spawn_rc, ae_thr_yield_rc, ae_thr_check_rc;
static int ae_thr_self_none, ae_thr_node_null, ae_thr_alive;
static smarm_pid_t ae_root_pid;

static void *ae_foreign_thread(void *arg)
{
	(void)arg;
	ae_thr_spawn_rc = smarm_actor_spawn(NULL, ae_nop, NULL, NULL);
	ae_thr_yield_rc = smarm_actor_yield();
	ae_thr_check_rc = smarm_check();
	ae_thr_self_none = smarm_pid_eq(smarm_actor_self(), SMARM_PID_NONE);
	ae_thr_node_null = smarm_node_current() == NULL;
	ae_thr_alive = smarm_actor_is_alive(ae_root_pid);
	return NULL;
}

static void ae_root_foreign(void *arg)
{
	pthread_t t;
	(void)arg;
	ae_root_pid = smarm_actor_self();
	if (pthread_create(&t, NULL, ae_foreign_thread, NULL) == 0)
		pthread_join(t, NULL);
}

START_TEST(test_actor_errors_foreign_thread_during_run_returns_enotactor)
{
	ae_thr_spawn_rc = ae_thr_yield_rc = ae_thr_check_rc = 1;
	ck_assert_int_eq(harness_run(2, ae_root_foreign, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ae_thr_spawn_rc, SMARM_ENOTACTOR);
	ck_assert_int_eq(ae_thr_yield_rc, SMARM_ENOTACTOR);
	ck_assert_int_eq(ae_thr_check_rc, 0);
	ck_assert_int_eq(ae_thr_self_none, 1);
	ck_assert_int_eq(ae_thr_node_null, 1);
	ck_assert_int_eq(ae_thr_alive, 0);
}
END_TEST

/* ------------------------------------------------- inside an actor */

static int ae_spawn_null_fn_rc, ae_try_spawn_null_fn_rc, ae_push_null_rc;
static int ae_pop_empty_rc;
static int64_t ae_live_after_bad_spawn;

static void ae_root_null_args(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	ae_spawn_null_fn_rc = smarm_actor_spawn(&p, NULL, NULL, NULL);
	ae_try_spawn_null_fn_rc = smarm_actor_try_spawn(NULL, NULL, NULL, NULL);
	ae_push_null_rc = smarm_cleanup_push(NULL, NULL);
	ae_pop_empty_rc = smarm_cleanup_pop(false); /* nothing was pushed */
	smarm_node_get_int(smarm_node_current(), SMARM_STAT_LIVE_ACTORS,
			   &ae_live_after_bad_spawn);
}

START_TEST(test_actor_errors_null_fn_returns_einval)
{
	ck_assert_int_eq(harness_run(1, ae_root_null_args, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ae_spawn_null_fn_rc, SMARM_EINVAL);
	ck_assert_int_eq(ae_try_spawn_null_fn_rc, SMARM_EINVAL);
	ck_assert_int_eq(ae_push_null_rc, SMARM_EINVAL);
	ck_assert_int_eq(ae_pop_empty_rc, SMARM_ENOENT);
	ck_assert_int_eq(ae_live_after_bad_spawn, 1); /* nothing spawned */
}
END_TEST

static int ae_join_twice_rc[2], ae_join_none_rc, ae_join_self_rc;
static int ae_join_forged_rc, ae_join_beyond_rc;

static void ae_root_join_errors(void *arg)
{
	smarm_pid_t p;
	smarm_pid_t beyond = { (UINT64_C(1) << 32) | 0x7fffff00u };
	(void)arg;
	smarm_actor_spawn(&p, ae_nop, NULL, NULL);
	ae_join_twice_rc[0] = smarm_actor_join(p, NULL, NULL);
	ae_join_twice_rc[1] = smarm_actor_join(p, NULL, NULL);
	ae_join_none_rc = smarm_actor_join(SMARM_PID_NONE, NULL, NULL);
	ae_join_self_rc = smarm_actor_join(smarm_actor_self(), NULL, NULL);
	/* a pid with a generation that was never issued */
	smarm_actor_spawn(&p, ae_nop, NULL, NULL);
	{
		smarm_pid_t forged = { p.id + (UINT64_C(5) << 32) };
		ae_join_forged_rc = smarm_actor_join(forged, NULL, NULL);
	}
	smarm_actor_join(p, NULL, NULL);
	ae_join_beyond_rc = smarm_actor_join(beyond, NULL, NULL);
}

START_TEST(test_actor_errors_join_stale_and_self)
{
	ck_assert_int_eq(harness_run(1, ae_root_join_errors, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ae_join_twice_rc[0], 0);
	ck_assert_int_eq(ae_join_twice_rc[1], SMARM_ENOPROC);
	ck_assert_int_eq(ae_join_none_rc, SMARM_ENOPROC);
	ck_assert_int_eq(ae_join_self_rc, SMARM_EINVAL);
	ck_assert_int_eq(ae_join_forged_rc, SMARM_ENOPROC);
	ck_assert_int_eq(ae_join_beyond_rc, SMARM_ENOPROC);
}
END_TEST

/*
 * A stale pid whose slot index is now the caller's own: the pid names no
 * actor (already joined), so the answer is ENOPROC, not "pid is the caller".
 */
static smarm_pid_t ae_old_pid;
static int ae_join_old_rc, ae_reused_own_index;

static void ae_join_old(void *arg)
{
	(void)arg;
	ae_reused_own_index =
		(uint32_t)ae_old_pid.id == (uint32_t)smarm_actor_self().id;
	ae_join_old_rc = smarm_actor_join(ae_old_pid, NULL, NULL);
}

static void ae_root_join_stale_own_index(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&ae_old_pid, ae_nop, NULL, NULL);
	smarm_actor_join(ae_old_pid, NULL, NULL);
	/* the freed slot is reused by the next spawn */
	smarm_actor_spawn(&p, ae_join_old, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
}

START_TEST(test_actor_errors_join_stale_pid_of_own_slot_returns_enoproc)
{
	ae_join_old_rc = 1;
	ck_assert_int_eq(harness_run(1, ae_root_join_stale_own_index, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ae_reused_own_index, 1); /* the scenario happened */
	ck_assert_int_eq(ae_join_old_rc, SMARM_ENOPROC);
}
END_TEST

static smarm_chan_t *ae_gate;

static void ae_wait_gate(void *arg)
{
	int v;
	(void)arg;
	smarm_chan_recv(ae_gate, &v);
}

static void ae_open_gate(int n)
{
	int v = 1;
	for (int i = 0; i < n; i++)
		smarm_chan_send(ae_gate, &v);
}

static int ae_join_detached_rc, ae_detach_twice_rc, ae_detach_ok_rc;
static int ae_detach_reclaimed_rc, ae_detach_done_rc,
	ae_detach_done_then_join_rc;
static int ae_detach_none_rc, ae_join_started_detached_rc;

static smarm_pid_t ae_self_reported;

static void ae_report_self(void *arg)
{
	int v;
	(void)arg;
	ae_self_reported = smarm_actor_self();
	smarm_chan_recv(ae_gate, &v);
}

static void ae_root_detach_errors(void *arg)
{
	smarm_pid_t p, q;
	(void)arg;
	smarm_chan_alloc(&ae_gate, sizeof(int), NULL);

	/* detach a live actor, then join or detach it again */
	smarm_actor_spawn(&p, ae_wait_gate, NULL, NULL);
	ae_detach_ok_rc = smarm_actor_detach(p);
	ae_join_detached_rc = smarm_actor_join(p, NULL, NULL);
	ae_detach_twice_rc = smarm_actor_detach(p);
	ae_open_gate(1);
	smarm_actor_yield(); /* 1 worker: it ends and is reclaimed */
	ae_detach_reclaimed_rc = smarm_actor_detach(p);

	/* detach an ended, unjoined actor: released now */
	smarm_actor_spawn(&q, ae_nop, NULL, NULL);
	smarm_actor_yield();
	ae_detach_done_rc = smarm_actor_detach(q);
	ae_detach_done_then_join_rc = smarm_actor_join(q, NULL, NULL);

	ae_detach_none_rc = smarm_actor_detach(SMARM_PID_NONE);

	/* started detached (out NULL): its own pid is not joinable */
	smarm_actor_spawn(NULL, ae_report_self, NULL, NULL);
	smarm_actor_yield();
	ae_join_started_detached_rc =
		smarm_actor_join(ae_self_reported, NULL, NULL);
	ae_open_gate(1);
	smarm_actor_yield();
	harness_chan_drop(ae_gate);
}

START_TEST(test_actor_errors_detach_and_join_state_errors)
{
	ck_assert_int_eq(harness_run(1, ae_root_detach_errors, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ae_detach_ok_rc, 0);
	ck_assert_int_eq(ae_join_detached_rc, SMARM_ESTATE);
	ck_assert_int_eq(ae_detach_twice_rc, SMARM_ESTATE);
	ck_assert_int_eq(ae_detach_reclaimed_rc, SMARM_ENOPROC);
	ck_assert_int_eq(ae_detach_done_rc, 0);
	ck_assert_int_eq(ae_detach_done_then_join_rc, SMARM_ENOPROC);
	ck_assert_int_eq(ae_detach_none_rc, SMARM_ENOPROC);
	ck_assert_int_eq(ae_join_started_detached_rc, SMARM_ESTATE);
}
END_TEST

/* a second joiner, and a detach of an actor being joined */
static smarm_pid_t ae_target;
static int ae_second_join_rc, ae_detach_joined_rc, ae_first_join_rc;

static void ae_first_joiner(void *arg)
{
	(void)arg;
	ae_first_join_rc = smarm_actor_join(ae_target, NULL, NULL);
}

static void ae_root_second_joiner(void *arg)
{
	smarm_pid_t j;
	(void)arg;
	smarm_chan_alloc(&ae_gate, sizeof(int), NULL);
	smarm_actor_spawn(&ae_target, ae_wait_gate, NULL, NULL);
	smarm_actor_spawn(&j, ae_first_joiner, NULL, NULL);
	smarm_actor_yield(); /* 1 worker: target parks, j parks in join */
	ae_second_join_rc = smarm_actor_join(ae_target, NULL, NULL);
	ae_detach_joined_rc = smarm_actor_detach(ae_target);
	ae_open_gate(1);
	smarm_actor_join(j, NULL, NULL);
	harness_chan_drop(ae_gate);
}

START_TEST(test_actor_errors_second_joiner_returns_estate)
{
	ae_first_join_rc = 1;
	ck_assert_int_eq(harness_run(1, ae_root_second_joiner, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ae_second_join_rc, SMARM_ESTATE);
	ck_assert_int_eq(ae_detach_joined_rc, SMARM_ESTATE);
	ck_assert_int_eq(ae_first_join_rc, 0);
}
END_TEST

/* a joiner that is stopped gives the join up: another may join later */
static int ae_late_join_rc, ae_stopped_joiner_how;

static void ae_root_stopped_joiner(void *arg)
{
	smarm_pid_t j;
	(void)arg;
	smarm_chan_alloc(&ae_gate, sizeof(int), NULL);
	smarm_actor_spawn(&ae_target, ae_wait_gate, NULL, NULL);
	smarm_actor_spawn(&j, ae_first_joiner, NULL, NULL);
	smarm_actor_yield(); /* j parks in join */
	smarm_actor_stop(j);
	smarm_actor_join(j, &ae_stopped_joiner_how, NULL);
	ae_open_gate(1);
	ae_late_join_rc = smarm_actor_join(ae_target, NULL, NULL);
	harness_chan_drop(ae_gate);
}

START_TEST(test_actor_errors_stopped_joiner_releases_join)
{
	ae_late_join_rc = 1;
	ck_assert_int_eq(harness_run(1, ae_root_stopped_joiner, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ae_stopped_joiner_how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(ae_late_join_rc, 0);
}
END_TEST

/* stop of a stale pid */
static int ae_stop_stale_rc, ae_stop_none_rc, ae_stop_forged_rc;

static void ae_root_stop_errors(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, ae_nop, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
	ae_stop_stale_rc = smarm_actor_stop(p);
	ae_stop_none_rc = smarm_actor_stop(SMARM_PID_NONE);
	{
		smarm_pid_t forged = { (UINT64_C(9) << 32) | 0x12345u };
		ae_stop_forged_rc = smarm_actor_stop(forged);
	}
}

START_TEST(test_actor_errors_stop_stale_pid_returns_enoproc)
{
	ck_assert_int_eq(harness_run(1, ae_root_stop_errors, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ae_stop_stale_rc, SMARM_ENOPROC);
	ck_assert_int_eq(ae_stop_none_rc, SMARM_ENOPROC);
	ck_assert_int_eq(ae_stop_forged_rc, SMARM_ENOPROC);
}
END_TEST

/* smarm_actor_self outside / check outside covered above; inside: */
static int ae_in_check_rc, ae_in_yield_rc, ae_in_sleep_rc;

static void ae_root_ok_calls(void *arg)
{
	(void)arg;
	ae_in_check_rc = smarm_check();
	ae_in_yield_rc = smarm_actor_yield();
	ae_in_sleep_rc = smarm_actor_sleep(1000);
}

START_TEST(test_actor_errors_safe_points_inside_actor_return_zero)
{
	ae_in_check_rc = ae_in_yield_rc = ae_in_sleep_rc = 1;
	ck_assert_int_eq(harness_run(1, ae_root_ok_calls, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ae_in_check_rc, 0);
	ck_assert_int_eq(ae_in_yield_rc, 0);
	ck_assert_int_eq(ae_in_sleep_rc, 0);
}
END_TEST

/* ------------------------------------------------- pids and nodes */

/*
 * A pid names one actor of one node. Two nodes run at once (A on a
 * thread of its own, B on the test's): B's first child must not share a
 * pid with A's, and A's pid must name nothing on B. It used to: both
 * nodes gave their first child the same pid, and a stop of A's pid on B
 * stopped B's actor.
 */
static _Atomic uint64_t pn_pid_a; /* A's parked child */
static _Atomic int pn_b_done;	  /* B has finished its checks */
static smarm_node_t *pn_node_a;
static int pn_rc[8];
static bool pn_alive[4];
static uint64_t pn_pid_b;

static void pn_sleeper(void *arg)
{
	(void)arg;
	smarm_actor_sleep(MS(600000)); /* until stopped */
}

static void pn_root_a(void *arg)
{
	smarm_pid_t c;
	(void)arg;
	if (smarm_actor_spawn(&c, pn_sleeper, NULL, NULL) != 0)
		return;
	atomic_store(&pn_pid_a, c.id);
	while (!atomic_load(&pn_b_done))
		smarm_actor_sleep(MS(1));
	pn_rc[7] = smarm_actor_stop(c); /* A's own pid works on A */
	smarm_actor_join(c, NULL, NULL);
}

static void *pn_thread_a(void *arg)
{
	(void)arg;
	smarm_node_run(pn_node_a, pn_root_a, NULL, NULL, NULL);
	return NULL;
}

static void pn_root_b(void *arg)
{
	smarm_pid_t c, a;
	(void)arg;
	while ((a.id = atomic_load(&pn_pid_a)) == 0)
		smarm_actor_sleep(MS(1));
	pn_rc[0] = smarm_actor_spawn(&c, pn_sleeper, NULL, NULL);
	pn_pid_b = c.id;
	smarm_actor_yield(); /* it parks */
	pn_alive[0] = smarm_actor_is_alive(a);
	pn_rc[1] = smarm_actor_stop(a);
	pn_rc[2] = smarm_actor_join(a, NULL, NULL);
	pn_rc[3] = smarm_node_stop_actor(smarm_node_current(), a);
	pn_rc[4] = smarm_actor_detach(a);
	pn_alive[1] = smarm_actor_is_alive(c); /* untouched by all that */
	atomic_store(&pn_b_done, 1);
	pn_rc[5] = smarm_actor_stop(c);
	smarm_actor_join(c, NULL, NULL);
}

START_TEST(test_actor_errors_pid_of_another_node_is_enoproc)
{
	smarm_node_t *b = harness_open(2);
	pthread_t t;
	atomic_store(&pn_pid_a, 0);
	atomic_store(&pn_b_done, 0);
	pn_node_a = harness_open(2);
	ck_assert_int_eq(pthread_create(&t, NULL, pn_thread_a, NULL), 0);
	ck_assert_int_eq(smarm_node_run(b, pn_root_b, NULL, NULL, NULL), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(pn_rc[0], 0);
	ck_assert_uint_ne(pn_pid_b, atomic_load(&pn_pid_a));
	ck_assert(!pn_alive[0]);
	ck_assert_int_eq(pn_rc[1], SMARM_ENOPROC);
	ck_assert_int_eq(pn_rc[2], SMARM_ENOPROC);
	ck_assert_int_eq(pn_rc[3], SMARM_ENOPROC);
	ck_assert_int_eq(pn_rc[4], SMARM_ENOPROC);
	ck_assert(pn_alive[1]);
	ck_assert_int_eq(pn_rc[5], 0);
	ck_assert_int_eq(pn_rc[7], 0);
	ck_assert_int_eq(smarm_node_close(pn_node_a), 0);
	ck_assert_int_eq(smarm_node_close(b), 0);
}
END_TEST

/* A closed node's pids name nothing on the node opened after it. */
static uint64_t pn_old;

static void pn_root_old(void *arg)
{
	smarm_pid_t c;
	(void)arg;
	if (smarm_actor_spawn(&c, pn_sleeper, NULL, NULL) == 0) {
		pn_old = c.id;
		smarm_actor_stop(c);
		smarm_actor_join(c, NULL, NULL);
	}
}

static void pn_root_new(void *arg)
{
	smarm_pid_t c, old = { pn_old };
	(void)arg;
	pn_rc[0] = smarm_actor_spawn(&c, pn_sleeper, NULL, NULL);
	pn_pid_b = c.id;
	smarm_actor_yield();
	pn_alive[0] = smarm_actor_is_alive(old);
	pn_rc[1] = smarm_actor_stop(old);
	pn_alive[1] = smarm_actor_is_alive(c);
	pn_rc[2] = smarm_actor_stop(c);
	smarm_actor_join(c, NULL, NULL);
}

START_TEST(test_actor_errors_pid_of_a_closed_node_is_enoproc)
{
	smarm_node_t *n = harness_open(1);
	ck_assert_int_eq(smarm_node_run(n, pn_root_old, NULL, NULL, NULL), 0);
	ck_assert_int_eq(smarm_node_close(n), 0);
	n = harness_open(1);
	ck_assert_int_eq(smarm_node_run(n, pn_root_new, NULL, NULL, NULL), 0);
	ck_assert_int_eq(pn_rc[0], 0);
	ck_assert_uint_ne(pn_pid_b, pn_old);
	ck_assert(!pn_alive[0]);
	ck_assert_int_eq(pn_rc[1], SMARM_ENOPROC);
	ck_assert(pn_alive[1]);
	ck_assert_int_eq(pn_rc[2], 0);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

Suite *smarm_test_actor_errors_suite(void)
{
	Suite *s = suite_create("actor_errors");
	TCase *tc = tcase_create("args");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_actor_errors_config_null_args_return_einval);
	tcase_add_test(tc, test_actor_errors_spawn_opts_invalid_return_einval);
	tcase_add_test(tc, test_actor_errors_node_null_args_return_einval);
	tcase_add_test(tc, test_actor_errors_null_fn_returns_einval);
	suite_add_tcase(s, tc);

	tc = tcase_create("context");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_actor_errors_outside_actor_returns_enotactor);
	tcase_add_test(tc, test_actor_errors_outside_actor_queries_are_neutral);
	tcase_add_test(
		tc,
		test_actor_errors_foreign_thread_during_run_returns_enotactor);
	tcase_add_test(tc,
		       test_actor_errors_safe_points_inside_actor_return_zero);
	suite_add_tcase(s, tc);

	tc = tcase_create("nodes");
	tcase_add_test(tc, test_actor_errors_pid_of_another_node_is_enoproc);
	tcase_add_test(tc, test_actor_errors_pid_of_a_closed_node_is_enoproc);
	suite_add_tcase(s, tc);

	tc = tcase_create("state");
	tcase_set_timeout(tc, 20);
	tcase_add_test(
		tc, test_actor_errors_node_close_while_running_returns_estate);
	tcase_add_test(tc,
		       test_actor_errors_node_run_while_running_returns_estate);
	tcase_add_test(tc, test_actor_errors_join_stale_and_self);
	tcase_add_test(
		tc,
		test_actor_errors_join_stale_pid_of_own_slot_returns_enoproc);
	tcase_add_test(tc, test_actor_errors_detach_and_join_state_errors);
	tcase_add_test(tc, test_actor_errors_second_joiner_returns_estate);
	tcase_add_test(tc, test_actor_errors_stopped_joiner_releases_join);
	tcase_add_test(tc, test_actor_errors_stop_stale_pid_returns_enoproc);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(actor_errors)
