/* SPDX-License-Identifier: MIT */
/*
 * test_exit.c - exit signals and the shutdown exit kind
 * (smarm_actor_send_exit, smarm_actor_shutdown,
 * smarm_node_shutdown_actor): a shutdown ends a non-trapping actor with
 * SMARM_EXIT_SHUTDOWN and is a message to a trapping one (from the
 * caller, the target not unwound); a kill cannot be trapped; a normal
 * signal is ignored unless the target traps (or signals itself); a
 * crash signal carries its reason; a signal to a dead pid is
 * SMARM_ENOPROC; a plain thread shuts an actor down; every misuse.
 * Ports the Rust smarm runtime's tests/shutdown.rs.
 */
#include "harness.h"

#include <pthread.h>
#include <string.h>

#define SIG_SZ sizeof(smarm_signal_t)

static void body_park(void *arg)
{
	(void)arg;
	harness_park();
}

/* Traps into its own channel, reports the first signal into *arg's
 * channel (a plain int channel of the test), then ends normally. */
struct trapper {
	smarm_chan_t *ready; /* int: 1 when trapping */
	smarm_signal_t got;
};

static void body_trapper(void *arg)
{
	struct trapper *t = arg;
	smarm_chan_t *ch = NULL;
	int one = 1;
	HARNESS_EQ(smarm_chan_alloc(&ch, SIG_SZ, NULL), 0);
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	HARNESS_EQ(smarm_chan_send(t->ready, &one), 0);
	HARNESS_EQ(harness_recv_sig(ch, &t->got), 0);
	HARNESS_EQ(smarm_actor_sleep(MS(2)), 0); /* not unwound */
	harness_chan_drop(ch);
}

static smarm_pid_t spawn_trapper(struct trapper *t)
{
	smarm_pid_t p;
	int v;
	memset(&t->got, 0, sizeof t->got);
	HARNESS_EQ(smarm_chan_alloc(&t->ready, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&p, body_trapper, t, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(t->ready, &v), 0);
	harness_chan_drop(t->ready);
	return p;
}

/* ------------------------------------------------------ shutdown */

static void root_shutdown(void *arg)
{
	struct trapper t;
	smarm_pid_t a;
	int how = -1;
	(void)arg;
	/* request_shutdown_stops_a_non_trapping_actor */
	HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_SHUTDOWN);
	/* request_shutdown_is_a_message_to_a_trapping_actor */
	a = spawn_trapper(&t);
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_SHUTDOWN, 5), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(t.got.kind, SMARM_SIGNAL_EXIT);
	HARNESS_EQ(t.got.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(t.got.reason, 5);
	HARNESS_CHECK(smarm_pid_eq(t.got.from, smarm_actor_self()));
	/* request_shutdown_on_dead_pid_is_a_no_op */
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_SHUTDOWN, 0),
		   SMARM_ENOPROC);
}

START_TEST(test_exit_shutdown_ends_non_trapping_messages_trapping)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_shutdown, NULL), 0);
	harness_checks_assert();
}
END_TEST

static void body_self_shutdown(void *arg)
{
	(void)arg;
	smarm_actor_shutdown();
	HARNESS_CHECK(0); /* not reached */
}

static void root_self_shutdown(void *arg)
{
	smarm_pid_t a;
	int how = -1;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, body_self_shutdown, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_SHUTDOWN);
}

START_TEST(test_exit_actor_shutdown_ends_the_caller_shutdown)
{
	intptr_t reason = -1;
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_self_shutdown, NULL), 0);
	harness_checks_assert();
	/* The root itself. */
	ck_assert_int_eq(
		harness_run_ex(2, 0, body_self_shutdown, NULL, &reason),
		SMARM_EXIT_SHUTDOWN);
	ck_assert_int_eq(reason, 0);
}
END_TEST

/* ------------------------------------------------- kill, normal */

static void root_kinds(void *arg)
{
	struct trapper t;
	smarm_pid_t a;
	int how = -1;
	intptr_t reason = 0;
	(void)arg;
	/* kill is untrappable */
	a = spawn_trapper(&t);
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_STOPPED, 3), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, &reason), 0);
	HARNESS_EQ(how, SMARM_EXIT_STOPPED);
	HARNESS_EQ(t.got.kind, 0); /* no message */
	/* normal is ignored by a non-trapping actor */
	HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_NORMAL, 0), 0);
	HARNESS_EQ(smarm_actor_sleep(MS(10)), 0);
	HARNESS_CHECK(smarm_actor_is_alive(a));
	/* a crash signal carries its reason */
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_CRASHED, 99), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, &reason), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(reason, 99);
	/* normal is delivered to a trapping actor */
	a = spawn_trapper(&t);
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_NORMAL, 0), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(t.got.kind, SMARM_SIGNAL_EXIT);
	HARNESS_EQ(t.got.how, SMARM_EXIT_NORMAL);
	/* and a crash signal too, without ending it */
	a = spawn_trapper(&t);
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_CRASHED, 8), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(t.got.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(t.got.reason, 8);
}

START_TEST(test_exit_kill_untrappable_normal_ignored_unless_trapping)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_kinds, NULL), 0);
	harness_checks_assert();
}
END_TEST

static void body_self_normal(void *arg)
{
	(void)arg;
	HARNESS_EQ(
		smarm_actor_send_exit(smarm_actor_self(), SMARM_EXIT_NORMAL, 0),
		0);
	smarm_actor_yield(); /* a safe point: it ends here */
	HARNESS_CHECK(0);
}

static void body_self_trapped(void *arg)
{
	smarm_chan_t *ch = NULL;
	smarm_signal_t s;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&ch, SIG_SZ, NULL), 0);
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	HARNESS_EQ(smarm_actor_send_exit(smarm_actor_self(),
					 SMARM_EXIT_SHUTDOWN, 0),
		   0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(smarm_pid_eq(s.from, smarm_actor_self()));
	HARNESS_EQ(smarm_trap_exit(NULL), 0);
	harness_chan_drop(ch);
}

static void root_self(void *arg)
{
	smarm_pid_t a;
	int how = -1;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, body_self_normal, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(smarm_actor_spawn(&a, body_self_trapped, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
}

START_TEST(test_exit_signal_to_self)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_self, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------ foreign thread */

static smarm_node_t *ft_node;
static smarm_pid_t ft_target, ft_trapper_pid;
static _Atomic int ft_ready;
static int ft_rc[3];
static struct trapper ft_t;

static void *ft_thread(void *arg)
{
	(void)arg;
	while (atomic_load(&ft_ready) == 0) {
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
	ft_rc[0] = smarm_node_shutdown_actor(ft_node, ft_target);
	ft_rc[1] = smarm_node_shutdown_actor(ft_node, ft_trapper_pid);
	ft_rc[2] = smarm_node_shutdown_actor(NULL, ft_target);
	return NULL;
}

static void root_foreign(void *arg)
{
	int how = -1;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&ft_target, body_park, NULL, NULL), 0);
	ft_trapper_pid = spawn_trapper(&ft_t);
	atomic_store(&ft_ready, 1);
	HARNESS_EQ(smarm_actor_join(ft_target, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(smarm_actor_join(ft_trapper_pid, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(ft_t.got.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(smarm_pid_eq(ft_t.got.from, SMARM_PID_NONE));
}

START_TEST(test_exit_handle_request_shutdown_from_foreign_thread)
{
	pthread_t th;
	harness_checks_reset();
	atomic_store(&ft_ready, 0);
	ft_node = harness_open(2);
	ck_assert_int_eq(pthread_create(&th, NULL, ft_thread, NULL), 0);
	ck_assert_int_eq(
		smarm_node_run(ft_node, root_foreign, NULL, NULL, NULL), 0);
	pthread_join(th, NULL);
	harness_checks_assert();
	ck_assert_int_eq(ft_rc[0], 0);
	ck_assert_int_eq(ft_rc[1], 0);
	ck_assert_int_eq(ft_rc[2], SMARM_EINVAL);
	/* Not running: nothing lives. */
	ck_assert_int_eq(smarm_node_shutdown_actor(ft_node, ft_target),
			 SMARM_ENOPROC);
	ck_assert_int_eq(smarm_node_close(ft_node), 0);
}
END_TEST

/* ------------------------------------------------------- errors */

static void root_errors(void *arg)
{
	smarm_pid_t a;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_NOPROC, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_actor_send_exit(a, 99, 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_actor_send_exit(a, -1, 0), SMARM_EINVAL);
	HARNESS_CHECK(smarm_actor_is_alive(a));
	HARNESS_EQ(smarm_actor_send_exit(SMARM_PID_NONE, SMARM_EXIT_STOPPED, 0),
		   SMARM_ENOPROC);
	HARNESS_EQ(smarm_actor_stop(a), 0);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_STOPPED, 0),
		   SMARM_ENOPROC); /* stale */
	HARNESS_EQ(smarm_node_shutdown_actor(smarm_node_current(), a),
		   SMARM_ENOPROC);
}

START_TEST(test_exit_misuse_returns_errors)
{
	smarm_pid_t p = { 1 };
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_errors, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(smarm_actor_send_exit(p, SMARM_EXIT_STOPPED, 0),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_shutdown(), SMARM_ENOTACTOR);
}
END_TEST

Suite *smarm_test_exit_suite(void)
{
	Suite *s = suite_create("exit");
	TCase *t = tcase_create("shutdown");
	tcase_add_test(t,
		       test_exit_shutdown_ends_non_trapping_messages_trapping);
	tcase_add_test(t, test_exit_actor_shutdown_ends_the_caller_shutdown);
	tcase_add_test(t,
		       test_exit_handle_request_shutdown_from_foreign_thread);
	suite_add_tcase(s, t);
	t = tcase_create("kinds");
	tcase_add_test(
		t, test_exit_kill_untrappable_normal_ignored_unless_trapping);
	tcase_add_test(t, test_exit_signal_to_self);
	suite_add_tcase(s, t);
	t = tcase_create("errors");
	tcase_add_test(t, test_exit_misuse_returns_errors);
	suite_add_tcase(s, t);
	return s;
}

SMARM_TEST_MAIN(exit)
