/* SPDX-License-Identifier: MIT */
/*
 * test_cross_thread_wake.c - wakes that come from plain OS threads: a
 * channel send waking a parked receiver, smarm_node_stop_actor stopping a
 * long sleeper, and stop requests against a node that is not running.
 * Every TCase has a short timeout so a lost wake fails instead of hanging.
 */
#include "harness.h"

#include <pthread.h>
#include <time.h>

static void xt_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* ------------------------------------------------- send from a pthread */

static smarm_chan_t *xt_ch;
static pthread_t xt_thread;
static int xt_thread_rc, xt_recv_rc, xt_pthread_create_rc;
static long xt_value;
static uint64_t xt_recv_elapsed;

static void *xt_sender_thread(void *arg)
{
	long v = 31337;
	(void)arg;
	xt_sleep_ms(200); /* the receiver is really parked by now */
	xt_thread_rc = smarm_chan_send(xt_ch, &v);
	return NULL;
}

static void xt_root_recv_from_thread(void *arg)
{
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&xt_ch, sizeof(long), NULL);
	xt_pthread_create_rc =
		pthread_create(&xt_thread, NULL, xt_sender_thread, NULL);
	t0 = smarm_now_ns();
	xt_recv_rc = smarm_chan_recv(xt_ch, &xt_value);
	xt_recv_elapsed = smarm_now_ns() - t0;
}

START_TEST(test_cross_thread_wake_pthread_send_wakes_parked_receiver)
{
	xt_recv_rc = xt_thread_rc = 1;
	xt_value = 0;
	ck_assert_int_eq(
		harness_run(_i ? 4 : 1, xt_root_recv_from_thread, NULL),
		SMARM_EXIT_NORMAL);
	ck_assert_int_eq(xt_pthread_create_rc, 0);
	ck_assert_int_eq(pthread_join(xt_thread, NULL), 0);
	ck_assert_int_eq(xt_thread_rc, 0);
	ck_assert_int_eq(xt_recv_rc, 0);
	ck_assert_int_eq(xt_value, 31337);
	ck_assert_uint_ge(xt_recv_elapsed, MS(150));
	ck_assert_elapsed_lt(xt_recv_elapsed, MS(3000));
	harness_chan_drop(xt_ch);
}
END_TEST

/* a pthread closing the channel (last sender) also wakes the receiver */
static void *xt_closer_thread(void *arg)
{
	(void)arg;
	xt_sleep_ms(200);
	xt_thread_rc = smarm_chan_sender_free(xt_ch);
	return NULL;
}

static void xt_root_close_from_thread(void *arg)
{
	(void)arg;
	smarm_chan_alloc(&xt_ch, sizeof(long), NULL);
	xt_pthread_create_rc =
		pthread_create(&xt_thread, NULL, xt_closer_thread, NULL);
	xt_recv_rc = smarm_chan_recv(xt_ch, &xt_value);
}

START_TEST(test_cross_thread_wake_pthread_close_wakes_parked_receiver)
{
	xt_recv_rc = xt_thread_rc = 1;
	ck_assert_int_eq(
		harness_run(_i ? 4 : 1, xt_root_close_from_thread, NULL),
		SMARM_EXIT_NORMAL);
	ck_assert_int_eq(xt_pthread_create_rc, 0);
	ck_assert_int_eq(pthread_join(xt_thread, NULL), 0);
	ck_assert_int_eq(xt_thread_rc, 0);
	ck_assert_int_eq(xt_recv_rc, SMARM_ECLOSED);
	smarm_chan_receiver_free(xt_ch);
}
END_TEST

/* many sends from several pthreads while the receiver parks and wakes */
#define XT_THREADS 3
#define XT_PER_THREAD 2000

static pthread_t xt_threads[XT_THREADS];
static long xt_sum, xt_count;

static void *xt_burst_thread(void *arg)
{
	(void)arg;
	for (long i = 1; i <= XT_PER_THREAD; i++) {
		smarm_chan_send(xt_ch, &i);
		if (i % 64 == 0)
			xt_sleep_ms(1); /* let the receiver park again */
	}
	smarm_chan_sender_free(xt_ch);
	return NULL;
}

static void xt_root_burst(void *arg)
{
	long v;
	(void)arg;
	smarm_chan_alloc(&xt_ch, sizeof(long), NULL);
	for (int i = 1; i < XT_THREADS; i++)
		smarm_chan_sender_dup(xt_ch);
	for (int i = 0; i < XT_THREADS; i++)
		if (pthread_create(&xt_threads[i], NULL, xt_burst_thread, NULL))
			xt_pthread_create_rc = -1;
	while (smarm_chan_recv(xt_ch, &v) == 0) {
		xt_sum += v;
		xt_count++;
	}
}

START_TEST(test_cross_thread_wake_pthread_bursts_all_delivered)
{
	xt_sum = xt_count = 0;
	xt_pthread_create_rc = 0;
	ck_assert_int_eq(harness_run(_i ? 4 : 1, xt_root_burst, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(xt_pthread_create_rc, 0);
	for (int i = 0; i < XT_THREADS; i++)
		ck_assert_int_eq(pthread_join(xt_threads[i], NULL), 0);
	ck_assert_int_eq(xt_count, (long)XT_THREADS * XT_PER_THREAD);
	ck_assert_int_eq(xt_sum, (long)XT_THREADS * XT_PER_THREAD *
					 (XT_PER_THREAD + 1) / 2);
	smarm_chan_receiver_free(xt_ch);
}
END_TEST

/* ------------------------------------------- stop from a pthread */

struct xt_stop_req {
	smarm_node_t *node;
	smarm_pid_t pid;
	int rc;
};

static struct xt_stop_req xt_req;
static atomic_int xt_cleanup_ran, xt_past_sleep;
static int xt_join_how, xt_join_rc;
static uint64_t xt_stop_elapsed;

static void xt_cleanup(void *arg)
{
	(void)arg;
	atomic_store(&xt_cleanup_ran, 1);
}

static void xt_hour_sleeper(void *arg)
{
	(void)arg;
	smarm_cleanup_push(xt_cleanup, NULL);
	smarm_actor_sleep(MS(3600ull * 1000));
	atomic_store(&xt_past_sleep, 1);
}

static void *xt_stopper_thread(void *arg)
{
	struct xt_stop_req *r = arg;
	xt_sleep_ms(200);
	r->rc = smarm_node_stop_actor(r->node, r->pid);
	return NULL;
}

static void xt_root_stop_from_thread(void *arg)
{
	uint64_t t0;
	(void)arg;
	xt_req.node = smarm_node_current();
	smarm_actor_spawn(&xt_req.pid, xt_hour_sleeper, NULL, NULL);
	xt_pthread_create_rc =
		pthread_create(&xt_thread, NULL, xt_stopper_thread, &xt_req);
	t0 = smarm_now_ns();
	xt_join_rc = smarm_actor_join(xt_req.pid, &xt_join_how, NULL);
	xt_stop_elapsed = smarm_now_ns() - t0;
}

START_TEST(test_cross_thread_wake_node_stop_actor_stops_sleeper)
{
	smarm_node_t *node = harness_open(_i ? 4 : 1);
	int how = -1;
	atomic_store(&xt_cleanup_ran, 0);
	atomic_store(&xt_past_sleep, 0);
	xt_req.rc = 1;
	xt_join_how = -1;
	ck_assert_int_eq(smarm_node_run(node, xt_root_stop_from_thread, NULL,
					&how, NULL),
			 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(xt_pthread_create_rc, 0);
	ck_assert_int_eq(pthread_join(xt_thread, NULL), 0);
	ck_assert_int_eq(xt_req.rc, 0);
	ck_assert_int_eq(xt_join_rc, 0);
	ck_assert_int_eq(xt_join_how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(atomic_load(&xt_cleanup_ran), 1);
	ck_assert_int_eq(atomic_load(&xt_past_sleep), 0);
	ck_assert_elapsed_lt(xt_stop_elapsed, MS(3000));
	/* after the run: the pid is dead and the node is not running */
	ck_assert_int_eq(smarm_node_stop_actor(node, xt_req.pid),
			 SMARM_ENOPROC);
	ck_assert_int_eq(smarm_node_stop_actor(node, SMARM_PID_NONE),
			 SMARM_ENOPROC);
	ck_assert_int_eq(smarm_node_stop_actor(NULL, xt_req.pid), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* a stop of a dead or never-issued pid from a pthread during the run */
static int xt_dead_rc, xt_none_rc, xt_forged_rc;
static smarm_pid_t xt_dead_pid;

static void *xt_dead_stopper(void *arg)
{
	smarm_node_t *node = arg;
	smarm_pid_t forged = { xt_dead_pid.id + (UINT64_C(7) << 32) };
	xt_dead_rc = smarm_node_stop_actor(node, xt_dead_pid);
	xt_none_rc = smarm_node_stop_actor(node, SMARM_PID_NONE);
	xt_forged_rc = smarm_node_stop_actor(node, forged);
	return NULL;
}

static void xt_nop(void *arg)
{
	(void)arg;
}

static void xt_root_dead_stop(void *arg)
{
	(void)arg;
	smarm_actor_spawn(&xt_dead_pid, xt_nop, NULL, NULL);
	smarm_actor_join(xt_dead_pid, NULL, NULL);
	xt_pthread_create_rc = pthread_create(&xt_thread, NULL, xt_dead_stopper,
					      smarm_node_current());
	/* keep the run open until the thread is done: join it from here */
	pthread_join(xt_thread, NULL);
}

START_TEST(test_cross_thread_wake_node_stop_dead_pid_during_run_enoproc)
{
	xt_dead_rc = xt_none_rc = xt_forged_rc = 1;
	ck_assert_int_eq(harness_run(2, xt_root_dead_stop, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(xt_pthread_create_rc, 0);
	ck_assert_int_eq(xt_dead_rc, SMARM_ENOPROC);
	ck_assert_int_eq(xt_none_rc, SMARM_ENOPROC);
	ck_assert_int_eq(xt_forged_rc, SMARM_ENOPROC);
}
END_TEST

START_TEST(test_cross_thread_wake_stop_on_never_run_node_enoproc)
{
	smarm_node_t *node = harness_open(1);
	smarm_pid_t p = { UINT64_C(0x100000000) };
	ck_assert_int_eq(smarm_node_stop_actor(node, p), SMARM_ENOPROC);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

Suite *smarm_test_cross_thread_wake_suite(void)
{
	Suite *s = suite_create("cross_thread_wake");
	TCase *tc = tcase_create("send");
	tcase_set_timeout(tc, 10);
	tcase_add_loop_test(
		tc, test_cross_thread_wake_pthread_send_wakes_parked_receiver,
		0, 2);
	tcase_add_loop_test(
		tc, test_cross_thread_wake_pthread_close_wakes_parked_receiver,
		0, 2);
	tcase_add_loop_test(
		tc, test_cross_thread_wake_pthread_bursts_all_delivered, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("stop");
	tcase_set_timeout(tc, 10);
	tcase_add_loop_test(
		tc, test_cross_thread_wake_node_stop_actor_stops_sleeper, 0, 2);
	tcase_add_test(
		tc,
		test_cross_thread_wake_node_stop_dead_pid_during_run_enoproc);
	tcase_add_test(tc,
		       test_cross_thread_wake_stop_on_never_run_node_enoproc);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(cross_thread_wake)
