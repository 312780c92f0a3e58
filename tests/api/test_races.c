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
#include "retired.h"

#include <dirent.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---------------------------------------------- cancel racing fire */

static atomic_int rc_drops;
static atomic_int rc_corrupt;
static atomic_int rc_unpopped;

/*
 * A drop that outlasts the deadline: it reads the element only once the
 * firing worker has popped the cancelled entry (no timer is left), the
 * moment a record freed by the pop would be read after its free.
 */
static void rc_slow_free(void *p)
{
	uint64_t deadline = smarm_now_ns() + MS(10000);
	for (;;) {
		int64_t timers = -1;
		smarm_node_get_int(smarm_node_current(), SMARM_STAT_TIMERS,
				   &timers);
		if (timers == 0)
			break;
		if (smarm_now_ns() > deadline) {
			atomic_fetch_add(&rc_unpopped, 1);
			break;
		}
		usleep(100); /* a poll step (a drop has no safe point) */
	}
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
	atomic_store(&rc_unpopped, 0);
	ck_assert_int_eq(harness_run(2, rc_root_cancel_at_deadline, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&rc_drops), 20);
	ck_assert_int_eq(atomic_load(&rc_corrupt), 0);
	ck_assert_int_eq(atomic_load(&rc_unpopped), 0);
}
END_TEST

/* ----------------------------------- stop wake vs a cleanup's wait */

static smarm_mutex_t *sw_m;
static smarm_node_t *sw_node;
static smarm_pid_t sw_target;
static atomic_int sw_locked, sw_armed, sw_stopped, sw_timeouts;
static int sw_handler_rc;

/*
 * Holds the mutex until the stop request has returned (its wakes are
 * all issued) and the cleanup handler waits for the mutex: its bounded
 * lock is then the one timer entry (the holder's own poll sleeps have
 * fired). A late wake that cut that wait short ended it by now.
 */
static void sw_holder(void *arg)
{
	uint64_t deadline;
	(void)arg;
	smarm_mutex_lock(sw_m, MS(10000));
	atomic_store(&sw_locked, 1);
	deadline = smarm_now_ns() + MS(10000);
	for (;;) {
		int64_t timers = -1;
		smarm_node_get_int(sw_node, SMARM_STAT_TIMERS, &timers);
		if (atomic_load(&sw_stopped) && timers == 1)
			break;
		if (smarm_now_ns() > deadline) {
			atomic_fetch_add(&sw_timeouts, 1);
			break;
		}
		smarm_actor_sleep(MS(1)); /* a poll step */
	}
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
	atomic_store(&sw_armed, 1);
	for (;;)
		smarm_check();
}

/* Stops the target once the mutex is held and its cleanup is pushed. */
static void *sw_stopper(void *arg)
{
	(void)arg;
	while (!atomic_load(&sw_locked) || !atomic_load(&sw_armed))
		usleep(500); /* a poll step */
	smarm_node_stop_actor(sw_node, sw_target);
	atomic_store(&sw_stopped, 1);
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
		atomic_store(&sw_armed, 0);
		atomic_store(&sw_stopped, 0);
		atomic_store(&sw_timeouts, 0);
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
		ck_assert_int_eq(atomic_load(&sw_timeouts), 0);
		ck_assert_int_eq(sw_handler_rc, 0);
	}
}
END_TEST

/* ------------------------------- wake slot with all workers idle */

static smarm_chan_t *ws_in, *ws_out;
static uint64_t ws_t_send, ws_t_recv;
static atomic_int ws_done, ws_waiting, ws_not_idle;

static void ws_b(void *arg)
{
	uint64_t v;
	(void)arg;
	atomic_fetch_add(&ws_waiting, 1);
	smarm_chan_recv(ws_out, &v);
	ws_t_recv = smarm_now_ns();
	atomic_store(&ws_done, 1);
}

static void ws_a(void *arg)
{
	uint64_t v;
	uint64_t give_up;
	(void)arg;
	atomic_fetch_add(&ws_waiting, 1);
	smarm_chan_recv(ws_in, &v);
	ws_t_send = smarm_now_ns();
	smarm_chan_send(ws_out, &v);
	/* compute without a safe point until B has run (or give up) */
	give_up = smarm_now_ns() + MS(2000);
	while (!atomic_load(&ws_done) && smarm_now_ns() < give_up)
		;
}

/* Does every thread but the caller sleep in the kernel (state S)? */
static bool others_asleep(void)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool all = d != NULL;
	while (all && (e = readdir(d)) != NULL) {
		char path[300], line[512];
		const char *st = NULL;
		FILE *f;
		if (e->d_name[0] == '.' || atoi(e->d_name) == self)
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/stat",
			 e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue; /* the thread is gone */
		if (fgets(line, sizeof line, f) != NULL)
			st = strrchr(line, ')'); /* "tid (comm) S ..." */
		fclose(f);
		all = st != NULL && st[1] == ' ' && st[2] == 'S';
	}
	if (d != NULL)
		closedir(d);
	return all;
}

/*
 * Sends once A and B wait in their recvs and every worker has parked
 * with no scan deadline: all other threads asleep at two looks 2 ms
 * apart with no park in between (a worker that parked to scan the wake
 * slots wakes within 1 ms and parks again).
 */
static void *ws_foreign(void *arg)
{
	smarm_node_t *node = arg;
	uint64_t v = 1;
	uint64_t deadline = smarm_now_ns() + MS(10000);
	int64_t parks_before = -1;
	bool asleep_before = false;
	for (;;) {
		int64_t parks = -1;
		bool asleep;
		usleep(2000); /* a poll step */
		smarm_node_get_int(node, SMARM_STAT_IDLE_PARKS, &parks);
		asleep = atomic_load(&ws_waiting) == 2 && others_asleep();
		if (asleep && asleep_before && parks == parks_before)
			break;
		if (smarm_now_ns() > deadline) {
			atomic_store(&ws_not_idle, 1);
			break;
		}
		asleep_before = asleep;
		parks_before = parks;
	}
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
	pthread_create(&th, NULL, ws_foreign, smarm_node_current());
	smarm_actor_join(a, NULL, NULL);
	smarm_actor_join(b, NULL, NULL);
	pthread_join(th, NULL);
	harness_chan_drop(ws_in);
	harness_chan_drop(ws_out);
}

START_TEST(test_races_slot_entry_not_stranded_when_all_idle)
{
	atomic_store(&ws_done, 0);
	atomic_store(&ws_waiting, 0);
	atomic_store(&ws_not_idle, 0);
	ck_assert_int_eq(harness_run(2, ws_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&ws_not_idle), 0);
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
