/* SPDX-License-Identifier: MIT */
/*
 * test_node_stop.c - smarm_node_stop: a plain thread (a SIGINT thread, a
 * host's shutdown path) ends a whole run by killing every actor: every
 * actor's cleanup handlers run, parked, computing and late-spawned actors
 * alike, smarm_node_run returns with the root STOPPED, and the next run
 * of the node is unaffected. Misuse: NULL, a node that is not running.
 */
#include "harness.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#define NS_PARKED 10
#define NS_HOGS 3

static atomic_int ns_cleanups, ns_started;
static smarm_node_t *ns_node;

static void ns_count(void *arg)
{
	(void)arg;
	atomic_fetch_add(&ns_cleanups, 1);
}

static void ns_free_chan(void *arg)
{
	harness_chan_drop(arg);
}

/* Park on a channel of its own that nobody sends on; a stop frees it. */
static void ns_park_forever(void)
{
	smarm_chan_t *ch;
	int v;
	if (smarm_chan_alloc(&ch, sizeof v, NULL) != 0)
		return;
	smarm_cleanup_push(ns_free_chan, ch);
	smarm_chan_recv(ch, &v);
}

static void ns_parked(void *arg)
{
	(void)arg;
	smarm_cleanup_push(ns_count, NULL);
	atomic_fetch_add(&ns_started, 1);
	ns_park_forever();
}

static void ns_hog(void *arg)
{
	volatile uint64_t x = 0;
	(void)arg;
	smarm_cleanup_push(ns_count, NULL);
	atomic_fetch_add(&ns_started, 1);
	for (;;) {
		x++;
		smarm_check();
	}
}

/* The root parks for ever; only a stop from outside ends the run. */
static void ns_root(void *arg)
{
	(void)arg;
	smarm_cleanup_push(ns_count, NULL);
	for (int i = 0; i < NS_PARKED; i++)
		smarm_actor_spawn(NULL, ns_parked, NULL, NULL);
	for (int i = 0; i < NS_HOGS; i++)
		smarm_actor_spawn(NULL, ns_hog, NULL, NULL);
	ns_park_forever();
}

static int ns_stop_rc[2];

static void *ns_stopper(void *arg)
{
	(void)arg;
	while (atomic_load(&ns_started) < NS_PARKED + NS_HOGS)
		usleep(1000);
	ns_stop_rc[0] = smarm_node_stop(ns_node);
	ns_stop_rc[1] = smarm_node_stop(ns_node); /* again: harmless */
	return NULL;
}

static void ns_normal_root(void *arg)
{
	*(int *)arg = 1;
}

START_TEST(test_node_stop_from_thread_ends_the_run_like_root_exit)
{
	pthread_t th;
	int how = -1, ran = 0;
	atomic_store(&ns_cleanups, 0);
	atomic_store(&ns_started, 0);
	ns_node = harness_open(4); /* oversubscribed: 4 workers, 2 cores */
	ck_assert_int_eq(pthread_create(&th, NULL, ns_stopper, NULL), 0);
	ck_assert_int_eq(smarm_node_run(ns_node, ns_root, NULL, &how, NULL), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(ns_stop_rc[0], 0);
	ck_assert(ns_stop_rc[1] == 0 || ns_stop_rc[1] == SMARM_ESTATE);
	ck_assert_int_eq(atomic_load(&ns_cleanups), NS_PARKED + NS_HOGS + 1);
	ck_assert_int_eq(harness_stat(ns_node, SMARM_STAT_LIVE_ACTORS), 0);
	/* Nothing carries over: the next run ends on its own. */
	how = -1;
	ck_assert_int_eq(
		smarm_node_run(ns_node, ns_normal_root, &ran, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ran, 1);
	ck_assert_int_eq(smarm_node_close(ns_node), 0);
}
END_TEST

/* The classic host: SIGINT blocked everywhere, one thread sigwaits. */
static void *ns_sigwaiter(void *arg)
{
	sigset_t *set = arg;
	int sig = 0;
	if (sigwait(set, &sig) == 0 && sig == SIGINT)
		ns_stop_rc[0] = smarm_node_stop(ns_node);
	return NULL;
}

static void ns_sig_root(void *arg)
{
	(void)arg;
	smarm_cleanup_push(ns_count, NULL);
	kill(getpid(), SIGINT); /* "the user pressed ^C" */
	ns_park_forever();
}

START_TEST(test_node_stop_from_sigwait_thread_on_sigint)
{
	sigset_t set, old;
	pthread_t th;
	int how = -1;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
	atomic_store(&ns_cleanups, 0);
	ns_stop_rc[0] = -1;
	ns_node = harness_open(2);
	ck_assert_int_eq(pthread_create(&th, NULL, ns_sigwaiter, &set), 0);
	ck_assert_int_eq(smarm_node_run(ns_node, ns_sig_root, NULL, &how, NULL),
			 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(ns_stop_rc[0], 0);
	ck_assert_int_eq(how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(atomic_load(&ns_cleanups), 1);
	ck_assert_int_eq(smarm_node_close(ns_node), 0);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
END_TEST

/* From an actor of the node: the caller is stopped with the rest. */
static int ns_in_actor_rc = -1;
static atomic_int ns_after_stop;

static void ns_stopping_child(void *arg)
{
	(void)arg;
	ns_in_actor_rc = smarm_node_stop(smarm_node_current());
	smarm_actor_yield(); /* a safe point: the stop ends us here */
	atomic_store(&ns_after_stop, 1);
}

static void ns_actor_root(void *arg)
{
	(void)arg;
	smarm_actor_spawn(NULL, ns_stopping_child, NULL, NULL);
	ns_park_forever();
}

START_TEST(test_node_stop_from_an_actor_stops_everything)
{
	intptr_t reason = 0;
	atomic_store(&ns_after_stop, 0);
	ck_assert_int_eq(harness_run_ex(2, 0, ns_actor_root, NULL, &reason),
			 SMARM_EXIT_STOPPED);
	ck_assert_int_eq(ns_in_actor_rc, 0);
	ck_assert_int_eq(atomic_load(&ns_after_stop), 0);
}
END_TEST

START_TEST(test_node_stop_misuse_einval_estate)
{
	smarm_node_t *node = harness_open(1);
	ck_assert_int_eq(smarm_node_stop(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_stop(node), SMARM_ESTATE); /* not running */
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

Suite *smarm_test_node_stop_suite(void)
{
	Suite *s = suite_create("node_stop");
	TCase *tc = tcase_create("node_stop");
	tcase_add_test(tc,
		       test_node_stop_from_thread_ends_the_run_like_root_exit);
	tcase_add_test(tc, test_node_stop_from_sigwait_thread_on_sigint);
	tcase_add_test(tc, test_node_stop_from_an_actor_stops_everything);
	tcase_add_test(tc, test_node_stop_misuse_einval_estate);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(node_stop)
