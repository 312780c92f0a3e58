/* SPDX-License-Identifier: MIT */
/*
 * test_timeouts.c - the one timeout rule (smarm.h, Conventions), checked
 * for every timed call: chan_recv_timeout, selset_wait (a channel arm and
 * an fd arm), io_wait_readable_timeout, io_wait_writable_timeout and
 * mutex_lock.
 *
 *   0                never parks or yields: a queued actor does not run
 *                    in between, and the answer is SMARM_ETIMEDOUT;
 *   SMARM_NO_TIMEOUT waits without a deadline: no timer entry is armed
 *                    while it waits, and the event ends it;
 *   UINT64_MAX - 1   is an ordinary (huge) bound: a timer entry is armed;
 *   a small bound    ends in SMARM_ETIMEDOUT, not before the bound.
 *
 * Every call is described by one `struct to_op` (set up a not-ready
 * object, wait on it, make it ready from another actor, tear down), and
 * each rule runs over the whole table, on one worker so that "did
 * anything else run" is well defined.
 */
#include "harness.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

struct to_op {
	const char *name;
	void (*setup)(void);
	int (*wait)(uint64_t timeout_ns);
	void (*ready)(void); /* from another actor */
	void (*teardown)(void);
};

static smarm_chan_t *to_ch;
static smarm_selset_t *to_set;
static smarm_mutex_t *to_mx;
static int to_pipe[2];

/* ------------------------------------------------ the timed calls */

static void chan_setup(void)
{
	smarm_chan_alloc(&to_ch, sizeof(int), NULL);
}

static int chan_wait(uint64_t t)
{
	int v;
	return smarm_chan_recv_timeout(to_ch, &v, t);
}

static void chan_ready(void)
{
	int v = 1;
	smarm_chan_send(to_ch, &v);
}

static void chan_teardown(void)
{
	harness_chan_drop(to_ch);
}

static void selchan_setup(void)
{
	chan_setup();
	smarm_selset_alloc(&to_set);
	smarm_selset_add_chan(to_set, to_ch, NULL);
}

static int sel_wait(uint64_t t)
{
	size_t i;
	return smarm_selset_wait(to_set, t, &i);
}

static void selchan_teardown(void)
{
	smarm_selset_free(to_set);
	chan_teardown();
}

static void pipe_setup(void)
{
	if (pipe2(to_pipe, O_NONBLOCK | O_CLOEXEC) != 0)
		to_pipe[0] = to_pipe[1] = -1;
}

static void pipe_teardown(void)
{
	close(to_pipe[0]);
	close(to_pipe[1]);
}

static void pipe_fill(void) /* until a write would block */
{
	char buf[4096] = { 0 };
	while (write(to_pipe[1], buf, sizeof buf) > 0)
		;
}

static void pipe_drain(void)
{
	char buf[4096];
	while (read(to_pipe[0], buf, sizeof buf) > 0)
		;
}

static void pipe_ready_read(void)
{
	char c = 'x';
	(void)!write(to_pipe[1], &c, 1);
}

static void selfd_setup(void)
{
	pipe_setup();
	smarm_selset_alloc(&to_set);
	smarm_selset_add_fd(to_set, to_pipe[0], SMARM_IO_READABLE, NULL);
}

static void selfd_teardown(void)
{
	smarm_selset_free(to_set);
	pipe_teardown();
}

static int rd_wait(uint64_t t)
{
	return smarm_io_wait_readable_timeout(to_pipe[0], t);
}

static void wr_setup(void)
{
	pipe_setup();
	pipe_fill();
}

static int wr_wait(uint64_t t)
{
	return smarm_io_wait_writable_timeout(to_pipe[1], t);
}

/* The mutex is held by a helper actor that parks until told to unlock. */
static smarm_chan_t *mx_go;
static smarm_pid_t mx_holder;

static void mx_hold(void *arg)
{
	int v;
	(void)arg;
	smarm_mutex_lock(to_mx, SMARM_NO_TIMEOUT);
	smarm_chan_recv(mx_go, &v);
	smarm_mutex_unlock(to_mx);
}

static void mx_setup(void)
{
	smarm_mutex_alloc(&to_mx);
	smarm_chan_alloc(&mx_go, sizeof(int), NULL);
	smarm_actor_spawn(&mx_holder, mx_hold, NULL, NULL);
	while (smarm_mutex_try_lock(to_mx) == 0) { /* not taken yet */
		smarm_mutex_unlock(to_mx);
		smarm_actor_yield();
	}
}

static int mx_wait(uint64_t t)
{
	int rc = smarm_mutex_lock(to_mx, t);
	if (rc == 0)
		smarm_mutex_unlock(to_mx);
	return rc;
}

static void mx_ready(void)
{
	int v = 1;
	smarm_chan_send(mx_go, &v);
}

static void mx_teardown(void)
{
	mx_ready(); /* a holder still parked lets go */
	smarm_actor_join(mx_holder, NULL, NULL);
	harness_chan_drop(mx_go);
	smarm_mutex_free(to_mx);
}

static const struct to_op to_ops[] = {
	{ "chan_recv_timeout", chan_setup, chan_wait, chan_ready,
	  chan_teardown },
	{ "selset_wait chan arm", selchan_setup, sel_wait, chan_ready,
	  selchan_teardown },
	{ "selset_wait fd arm", selfd_setup, sel_wait, pipe_ready_read,
	  selfd_teardown },
	{ "io_wait_readable_timeout", pipe_setup, rd_wait, pipe_ready_read,
	  pipe_teardown },
	{ "io_wait_writable_timeout", wr_setup, wr_wait, pipe_drain,
	  pipe_teardown },
	{ "mutex_lock", mx_setup, mx_wait, mx_ready, mx_teardown },
};
#define TO_NOPS (sizeof to_ops / sizeof to_ops[0])

/* ---------------------------------------------------------- results */

static struct {
	int rc[TO_NOPS];
	int bystander_ran[TO_NOPS];
	int64_t timers_while_waiting[TO_NOPS];
	uint64_t ns[TO_NOPS];
} R;

static atomic_int to_bystander;

static void bystander(void *arg)
{
	(void)arg;
	atomic_store(&to_bystander, 1);
}

/* 0: no park, no yield. */
static void zero_root(void *arg)
{
	(void)arg;
	for (size_t i = 0; i < TO_NOPS; i++) {
		smarm_pid_t p;
		to_ops[i].setup();
		atomic_store(&to_bystander, 0);
		smarm_actor_spawn(&p, bystander, NULL, NULL);
		R.rc[i] = to_ops[i].wait(0);
		R.bystander_ran[i] = atomic_load(&to_bystander);
		smarm_actor_join(p, NULL, NULL);
		to_ops[i].teardown();
	}
}

/*
 * Slices of 10 s: on a machine busy enough to keep the worker off its
 * CPU, a slice can run out in the few microseconds between the spawn
 * and the wait, and a preemption (the spawn is a safe point) would let
 * the bystander run though the wait never parked or yielded.
 */
START_TEST(test_timeouts_zero_never_parks_or_yields)
{
	memset(&R, 0, sizeof R);
	ck_assert_int_eq(harness_run_opt2(1, SMARM_OPT_TIMESLICE_NS,
					  10000000000, SMARM_OPT_ASYNC_SLICE_NS,
					  10000000000, zero_root, NULL, NULL),
			 SMARM_EXIT_NORMAL);
	for (size_t i = 0; i < TO_NOPS; i++) {
		ck_assert_msg(R.rc[i] == SMARM_ETIMEDOUT, "%s(0): %s",
			      to_ops[i].name, smarm_err_name(R.rc[i]));
		ck_assert_msg(R.bystander_ran[i] == 0,
			      "%s(0) let another actor run", to_ops[i].name);
	}
}
END_TEST

/*
 * A long wait, woken by a helper that first reads how many timer
 * entries the node holds (the waiter is parked: one worker).
 */
static smarm_node_t *to_node;
static size_t to_cur;
static uint64_t to_long_timeout;

static void waker(void *arg)
{
	(void)arg;
	/* Not harness_stat: no ck_assert may fire on an actor's stack. */
	R.timers_while_waiting[to_cur] = -1;
	smarm_node_get_int(to_node, SMARM_STAT_TIMERS,
			   &R.timers_while_waiting[to_cur]);
	to_ops[to_cur].ready();
}

/* Op to_cur, on a node of its own: timer entries of earlier waits linger. */
static void long_root(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	to_ops[to_cur].setup();
	smarm_actor_spawn(&p, waker, NULL, NULL);
	R.rc[to_cur] = to_ops[to_cur].wait(to_long_timeout);
	smarm_actor_join(p, NULL, NULL);
	to_ops[to_cur].teardown();
}

static void run_long(uint64_t timeout)
{
	memset(&R, 0, sizeof R);
	to_long_timeout = timeout;
	for (to_cur = 0; to_cur < TO_NOPS; to_cur++) {
		int how = -1;
		to_node = harness_open(1);
		ck_assert_int_eq(
			smarm_node_run(to_node, long_root, NULL, &how, NULL),
			0);
		ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
		ck_assert_int_eq(smarm_node_close(to_node), 0);
	}
}

START_TEST(test_timeouts_no_timeout_arms_no_timer_and_waits)
{
	run_long(SMARM_NO_TIMEOUT);
	for (size_t i = 0; i < TO_NOPS; i++) {
		ck_assert_msg(R.rc[i] == 0, "%s(NO_TIMEOUT): %s",
			      to_ops[i].name, smarm_err_name(R.rc[i]));
		ck_assert_msg(R.timers_while_waiting[i] == 0,
			      "%s(NO_TIMEOUT) armed %lld timers",
			      to_ops[i].name,
			      (long long)R.timers_while_waiting[i]);
	}
}
END_TEST

START_TEST(test_timeouts_huge_finite_timeout_is_bounded)
{
	run_long(UINT64_MAX - 1);
	for (size_t i = 0; i < TO_NOPS; i++) {
		ck_assert_msg(R.rc[i] == 0, "%s(huge): %s", to_ops[i].name,
			      smarm_err_name(R.rc[i]));
		ck_assert_msg(R.timers_while_waiting[i] == 1,
			      "%s(UINT64_MAX - 1) has %lld timers, not 1",
			      to_ops[i].name,
			      (long long)R.timers_while_waiting[i]);
	}
}
END_TEST

/* A small bound: SMARM_ETIMEDOUT, and not before the bound. */
static void bound_root(void *arg)
{
	(void)arg;
	for (size_t i = 0; i < TO_NOPS; i++) {
		uint64_t t0;
		to_ops[i].setup();
		t0 = smarm_now_ns();
		R.rc[i] = to_ops[i].wait(MS(20));
		R.ns[i] = harness_since(t0);
		to_ops[i].teardown();
	}
}

START_TEST(test_timeouts_small_bound_times_out_after_it)
{
	memset(&R, 0, sizeof R);
	ck_assert_int_eq(harness_run(2, bound_root, NULL), SMARM_EXIT_NORMAL);
	for (size_t i = 0; i < TO_NOPS; i++) {
		ck_assert_msg(R.rc[i] == SMARM_ETIMEDOUT, "%s(20 ms): %s",
			      to_ops[i].name, smarm_err_name(R.rc[i]));
		ck_assert_msg(R.ns[i] >= MS(20), "%s returned after %llu ns",
			      to_ops[i].name, (unsigned long long)R.ns[i]);
		ck_assert_elapsed_lt(R.ns[i], MS(2000));
	}
}
END_TEST

Suite *smarm_test_timeouts_suite(void)
{
	Suite *s = suite_create("timeouts");
	TCase *tc = tcase_create("rule");
	tcase_add_test(tc, test_timeouts_zero_never_parks_or_yields);
	tcase_add_test(tc, test_timeouts_no_timeout_arms_no_timer_and_waits);
	tcase_add_test(tc, test_timeouts_huge_finite_timeout_is_bounded);
	tcase_add_test(tc, test_timeouts_small_bound_times_out_after_it);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(timeouts)
