/* SPDX-License-Identifier: MIT */
/*
 * test_races.c - regressions for races found in review, each with the
 * interleaving it pins down:
 *   - a timed send cancelled as it fires: cancel's drop ran on a record
 *     the firing worker had already freed (caught by the ASan build);
 *   - a stop request's late wildcard wake cut short a wait inside the
 *     stopped actor's cleanup handler;
 *   - an actor woken into a wake slot while every other worker was idle
 *     without a scan deadline waited until its waker stopped computing.
 */
#include "harness.h"

#include <pthread.h>
#include <unistd.h>

/* ---------------------------------------------- cancel racing fire */

static atomic_int rc_drops;
static atomic_int rc_corrupt;

static void rc_slow_free(void *p)
{
	usleep(2000); /* the firing worker pops the record meanwhile */
	if (*(volatile uint64_t *)p != 0x1234)
		atomic_fetch_add(&rc_corrupt, 1);
	atomic_fetch_add(&rc_drops, 1);
}

static void rc_root_cancel_at_deadline(void *arg)
{
	smarm_chan_t *ch;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(uint64_t), rc_slow_free);
	for (int i = 0; i < 20; i++) {
		uint64_t v = 0x1234;
		uint64_t out;
		smarm_timer_t t;
		uint64_t delay = MS(2);
		uint64_t t0 = smarm_now_ns();
		smarm_chan_send_after(ch, &v, delay, &t);
		/* no safe point until just before the deadline */
		while (smarm_now_ns() < t0 + delay - US(20))
			;
		if (smarm_timer_cancel(t) != 0) {
			/* it fired first: the element was delivered */
			while (smarm_chan_try_recv(ch, &out) == 0)
				atomic_fetch_add(&rc_drops, 1);
		}
	}
	harness_chan_drop(ch);
}

START_TEST(test_races_cancel_at_deadline_drops_each_element_once)
{
	atomic_store(&rc_drops, 0);
	atomic_store(&rc_corrupt, 0);
	ck_assert_int_eq(harness_run(2, rc_root_cancel_at_deadline, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&rc_drops), 20);
	ck_assert_int_eq(atomic_load(&rc_corrupt), 0);
}
END_TEST

/* ----------------------------------- stop wake vs a cleanup's wait */

static smarm_mutex_t *sw_m;
static smarm_node_t *sw_node;
static smarm_pid_t sw_target;
static atomic_int sw_locked;
static int sw_handler_rc;

static void sw_holder(void *arg)
{
	(void)arg;
	smarm_mutex_lock(sw_m, MS(10000));
	atomic_store(&sw_locked, 1);
	smarm_actor_sleep(MS(40));
	smarm_mutex_unlock(sw_m);
}

static void sw_cleanup(void *arg)
{
	(void)arg;
	/* Must wait for the holder, not return early from the stop wake. */
	sw_handler_rc = smarm_mutex_lock(sw_m, MS(10000));
	if (sw_handler_rc == 0)
		smarm_mutex_unlock(sw_m);
}

static void sw_target_body(void *arg)
{
	(void)arg;
	smarm_cleanup_push(sw_cleanup, NULL);
	for (;;)
		smarm_check();
}

static void *sw_stopper(void *arg)
{
	(void)arg;
	while (!atomic_load(&sw_locked))
		usleep(500);
	usleep(5000);
	smarm_node_stop_actor(sw_node, sw_target);
	return NULL;
}

static void sw_root(void *arg)
{
	smarm_pid_t h;
	pthread_t th;
	(void)arg;
	smarm_actor_spawn(&h, sw_holder, NULL, NULL);
	smarm_actor_spawn(&sw_target, sw_target_body, NULL, NULL);
	pthread_create(&th, NULL, sw_stopper, NULL);
	smarm_actor_join(sw_target, NULL, NULL);
	smarm_actor_join(h, NULL, NULL);
	pthread_join(th, NULL);
}

START_TEST(test_races_stop_wake_does_not_cut_cleanup_wait_short)
{
	for (int i = 0; i < 15; i++) {
		smarm_config_t *cfg;
		atomic_store(&sw_locked, 0);
		sw_handler_rc = 99;
		ck_assert_int_eq(smarm_mutex_alloc(&sw_m), 0);
		ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
		smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2);
		ck_assert_int_eq(smarm_node_open(&sw_node, cfg), 0);
		smarm_config_free(cfg);
		ck_assert_int_eq(
			smarm_node_run(sw_node, sw_root, NULL, NULL, NULL), 0);
		ck_assert_int_eq(smarm_node_close(sw_node), 0);
		ck_assert_int_eq(smarm_mutex_free(sw_m), 0);
		ck_assert_int_eq(sw_handler_rc, 0);
	}
}
END_TEST

/* ------------------------------- wake slot with all workers idle */

static smarm_chan_t *ws_in, *ws_out;
static uint64_t ws_t_send, ws_t_recv;
static atomic_int ws_done;

static void ws_b(void *arg)
{
	uint64_t v;
	(void)arg;
	smarm_chan_recv(ws_out, &v);
	ws_t_recv = smarm_now_ns();
	atomic_store(&ws_done, 1);
}

static void ws_a(void *arg)
{
	uint64_t v;
	uint64_t give_up;
	(void)arg;
	smarm_chan_recv(ws_in, &v);
	ws_t_send = smarm_now_ns();
	smarm_chan_send(ws_out, &v);
	/* compute without a safe point until B has run (or give up) */
	give_up = smarm_now_ns() + MS(2000);
	while (!atomic_load(&ws_done) && smarm_now_ns() < give_up)
		;
}

static void *ws_foreign(void *arg)
{
	uint64_t v = 1;
	(void)arg;
	usleep(100000); /* every worker is idle by now */
	smarm_chan_send(ws_in, &v);
	return NULL;
}

static void ws_root(void *arg)
{
	smarm_pid_t a, b;
	pthread_t th;
	(void)arg;
	smarm_chan_alloc(&ws_in, sizeof(uint64_t), NULL);
	smarm_chan_alloc(&ws_out, sizeof(uint64_t), NULL);
	smarm_actor_spawn(&b, ws_b, NULL, NULL);
	smarm_actor_spawn(&a, ws_a, NULL, NULL);
	pthread_create(&th, NULL, ws_foreign, NULL);
	smarm_actor_join(a, NULL, NULL);
	smarm_actor_join(b, NULL, NULL);
	pthread_join(th, NULL);
	harness_chan_drop(ws_in);
	harness_chan_drop(ws_out);
}

START_TEST(test_races_slot_entry_not_stranded_when_all_idle)
{
	atomic_store(&ws_done, 0);
	ck_assert_int_eq(harness_run(2, ws_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&ws_done), 1);
	ck_assert_uint_ge(ws_t_recv, ws_t_send);
	ck_assert_elapsed_lt(ws_t_recv - ws_t_send, MS(200));
}
END_TEST

/* --------------------- receiver_free while a woken receiver resumes */

static smarm_chan_t *rf_ch;
static int rf_recv_rc, rf_free_rc, rf_free_rc_after;

static void rf_receiver(void *arg)
{
	uint64_t v;
	if (arg != NULL) {
		size_t r;
		smarm_chan_t *arms[1] = { rf_ch };
		rf_recv_rc = smarm_select(arms, 1, &r);
	} else {
		rf_recv_rc = smarm_chan_recv(rf_ch, &v);
	}
}

static void rf_root(void *arg)
{
	smarm_pid_t r;
	smarm_chan_alloc(&rf_ch, sizeof(uint64_t), NULL);
	smarm_actor_spawn(&r, rf_receiver, arg, NULL);
	smarm_actor_yield();	       /* the receiver parks (1 worker) */
	smarm_chan_sender_free(rf_ch); /* closes: wakes the receiver */
	/* Woken but not resumed: freeing now would pull ch from under it. */
	rf_free_rc = smarm_chan_receiver_free(rf_ch);
	smarm_actor_join(r, NULL, NULL);
	rf_free_rc_after = smarm_chan_receiver_free(rf_ch);
}

/* Loop test: _i 0 receives with recv, _i 1 with select. */
START_TEST(test_races_receiver_free_under_woken_receiver_refused)
{
	rf_recv_rc = rf_free_rc = rf_free_rc_after = 99;
	ck_assert_int_eq(harness_run(1, rf_root, _i ? (void *)1 : NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(rf_free_rc, SMARM_ESTATE);
	ck_assert_int_eq(rf_recv_rc, _i ? 0 : SMARM_ECLOSED);
	ck_assert_int_eq(rf_free_rc_after, 0);
}
END_TEST

Suite *smarm_test_races_suite(void)
{
	Suite *s = suite_create("races");
	TCase *tc = tcase_create("review");
	tcase_add_test(tc,
		       test_races_cancel_at_deadline_drops_each_element_once);
	tcase_add_test(tc,
		       test_races_stop_wake_does_not_cut_cleanup_wait_short);
	tcase_add_test(tc, test_races_slot_entry_not_stranded_when_all_idle);
	tcase_add_loop_test(
		tc, test_races_receiver_free_under_woken_receiver_refused, 0,
		2);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(races)
