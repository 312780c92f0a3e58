/* SPDX-License-Identifier: MIT */
/*
 * test_terminal_wake.c - a run ends promptly when its last actors end
 * while a sibling worker sleeps (spec/core.md §11 AllDone, §16 wake_all,
 * §23 tests/terminal_wake.rs). Two workers; the root busy-spins 200 ms
 * with no safe point, so the sibling runs the other actor, goes idle and
 * parks (after its bounded spin). Then: the root stop-cancels a 60 s
 * sleep and returns; or the root returns while a receiver is parked on a
 * channel nobody sends to. Either way smarm_node_run must return well
 * before any timer would have fired; the TCase timeout is the watchdog.
 * Each test runs with idle spinning on (the default) and off.
 */
#include "harness.h"

#include <time.h>

#define TW_SPIN_MS 200

/* Busy-wait ms milliseconds without any runtime call (no safe point). */
static void tw_spin(unsigned ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull +
			 (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec <
		 MS(ms));
}

/* Run root(arg) on a fresh 2-worker node; returns the run's length. */
static uint64_t tw_run(int spin, smarm_actor_cb root, void *arg)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int how = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2), 0);
	if (!spin)
		ck_assert_int_eq(
			smarm_config_set_int(cfg, SMARM_OPT_IDLE_SPIN_NS, 0),
			0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	uint64_t t0 = smarm_now_ns();
	ck_assert_int_eq(smarm_node_run(node, root, arg, &how, NULL), 0);
	uint64_t took = harness_since(t0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	return took;
}

/* -------------------------------------------------------- cancel sleep */

struct tw_sleep {
	atomic_int slept; /* the sleeper got past its sleep: must not */
	int stop_rc;	  /* root only */
};

static void tw_sleeper(void *arg)
{
	struct tw_sleep *t = arg;
	smarm_actor_sleep(60ull * 1000000000ull);
	atomic_store(&t->slept, 1);
}

static void tw_sleep_root(void *arg)
{
	struct tw_sleep *t = arg;
	smarm_pid_t pid;
	t->stop_rc = smarm_actor_spawn(&pid, tw_sleeper, t, NULL);
	if (t->stop_rc != 0)
		return;
	tw_spin(TW_SPIN_MS); /* the sibling runs the sleeper and parks */
	t->stop_rc = smarm_actor_stop(pid);
}

/* Loop: _i 0 spinning off, 1 spinning on. */
START_TEST(test_terminal_wake_stopped_sleep_run_returns_promptly)
{
	struct tw_sleep t = { 0 };
	uint64_t took = tw_run(_i, tw_sleep_root, &t);
	ck_assert_int_eq(t.stop_rc, 0);
	ck_assert_int_eq(atomic_load(&t.slept), 0);
	ck_assert_uint_ge(took, MS(TW_SPIN_MS));
	ck_assert_elapsed_lt(took, MS(TW_SPIN_MS + 2000));
}
END_TEST

/* ---------------------------------------------------- parked receiver */

struct tw_recv {
	smarm_chan_t *ch;
	atomic_int received; /* recv returned 0: must not */
	int rc;		     /* root only */
};

static void tw_receiver(void *arg)
{
	struct tw_recv *t = arg;
	int v;
	if (smarm_chan_recv(t->ch, &v) == 0)
		atomic_store(&t->received, 1);
}

/* The root keeps the sender reference: nobody sends, nothing closes. */
static void tw_recv_root(void *arg)
{
	struct tw_recv *t = arg;
	smarm_pid_t pid;
	t->rc = smarm_chan_alloc(&t->ch, sizeof(int), NULL);
	if (t->rc == 0)
		t->rc = smarm_actor_spawn(&pid, tw_receiver, t, NULL);
	if (t->rc == 0)
		tw_spin(TW_SPIN_MS);
}

/* Loop: _i 0 spinning off, 1 spinning on. */
START_TEST(test_terminal_wake_root_exit_with_parked_receiver_returns)
{
	struct tw_recv t = { 0 };
	uint64_t took = tw_run(_i, tw_recv_root, &t);
	ck_assert_int_eq(t.rc, 0);
	ck_assert_int_eq(atomic_load(&t.received), 0);
	ck_assert_uint_ge(took, MS(TW_SPIN_MS));
	ck_assert_elapsed_lt(took, MS(TW_SPIN_MS + 2000));
	harness_chan_drop(t.ch);
}
END_TEST

Suite *smarm_test_terminal_wake_suite(void)
{
	Suite *s = suite_create("terminal_wake");
	TCase *tc = tcase_create("run_end");
	tcase_set_timeout(tc, 10); /* the watchdog */
	tcase_add_loop_test(
		tc, test_terminal_wake_stopped_sleep_run_returns_promptly, 0,
		2);
	tcase_add_loop_test(
		tc, test_terminal_wake_root_exit_with_parked_receiver_returns,
		0, 2);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(terminal_wake)
