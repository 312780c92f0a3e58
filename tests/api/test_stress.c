/* SPDX-License-Identifier: MIT */
/*
 * test_stress.c - races under load, 4 workers (oversubscribed on small
 * machines): a thundering herd, spawn/join churn, joins of finished
 * children, a crash storm, pid generations on reuse, and the slot-state
 * races of the park-epoch protocol (select with racing producers,
 * recv_timeout racing sends, stop racing a wake).
 */
#include "harness.h"
#include "retired.h"

#include <string.h>

#define ST_WORKERS 4

static void st_nop(void *arg)
{
	(void)arg;
}

/* -------------------------------------------------------- thundering herd */

#define ST_HERD 1000

static smarm_chan_t *st_herd_ch[ST_HERD];
static smarm_chan_t *st_herd_ready, *st_herd_ack;
static long st_herd_sum;
static int st_herd_acks, st_herd_errors;

static void st_herd_member(void *arg)
{
	intptr_t i = (intptr_t)arg;
	long v = 0;
	smarm_chan_send(st_herd_ready, &v);
	if (smarm_chan_recv(st_herd_ch[i], &v) != 0 || v != i + 1)
		v = -1000000;
	smarm_chan_send(st_herd_ack, &v);
}

static void st_root_herd(void *arg)
{
	long v;
	(void)arg;
	smarm_chan_alloc(&st_herd_ready, sizeof(long), NULL);
	smarm_chan_alloc(&st_herd_ack, sizeof(long), NULL);
	for (intptr_t i = 0; i < ST_HERD; i++) {
		smarm_chan_alloc(&st_herd_ch[i], sizeof(long), NULL);
		if (smarm_actor_spawn(NULL, st_herd_member, (void *)i, NULL))
			st_herd_errors++;
	}
	for (int i = 0; i < ST_HERD; i++)
		smarm_chan_recv(st_herd_ready, &v);
	for (int i = 0; i < 8; i++)
		smarm_actor_yield(); /* let the last ones reach their recv */
	for (long i = 0; i < ST_HERD; i++) {
		long x = i + 1;
		if (smarm_chan_send(st_herd_ch[i], &x) != 0)
			st_herd_errors++;
	}
	for (int i = 0; i < ST_HERD; i++) {
		if (smarm_chan_recv(st_herd_ack, &v) != 0)
			st_herd_errors++;
		st_herd_acks++;
		st_herd_sum += v;
	}
	for (int i = 0; i < ST_HERD; i++)
		harness_chan_drop(st_herd_ch[i]);
	harness_chan_drop(st_herd_ready);
	harness_chan_drop(st_herd_ack);
}

START_TEST(test_stress_thundering_herd_all_wake)
{
	st_herd_sum = 0;
	st_herd_acks = st_herd_errors = 0;
	ck_assert_int_eq(harness_run(ST_WORKERS, st_root_herd, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(st_herd_errors, 0);
	ck_assert_int_eq(st_herd_acks, ST_HERD);
	ck_assert_int_eq(st_herd_sum, (long)ST_HERD * (ST_HERD + 1) / 2);
}
END_TEST

/* ------------------------------------------------------ spawn/join churn */

#define ST_PARENTS 20
#define ST_CHILDREN 200

static atomic_int st_children_ran, st_churn_errors;

static void st_churn_child(void *arg)
{
	(void)arg;
	atomic_fetch_add(&st_children_ran, 1);
}

static void st_churn_parent(void *arg)
{
	(void)arg;
	for (int i = 0; i < ST_CHILDREN; i += 4) {
		smarm_pid_t p[4];
		for (int k = 0; k < 4; k++)
			if (smarm_actor_spawn(&p[k], st_churn_child, NULL,
					      NULL))
				atomic_fetch_add(&st_churn_errors, 1);
		for (int k = 0; k < 4; k++) {
			int how = -1;
			if (smarm_actor_join(p[k], &how, NULL) != 0 ||
			    how != SMARM_EXIT_NORMAL)
				atomic_fetch_add(&st_churn_errors, 1);
		}
	}
}

static void st_root_churn(void *arg)
{
	smarm_pid_t p[ST_PARENTS];
	(void)arg;
	for (int i = 0; i < ST_PARENTS; i++)
		smarm_actor_spawn(&p[i], st_churn_parent, NULL, NULL);
	for (int i = 0; i < ST_PARENTS; i++)
		smarm_actor_join(p[i], NULL, NULL);
}

START_TEST(test_stress_spawn_join_churn_completes)
{
	smarm_node_t *node = harness_open(ST_WORKERS);
	atomic_store(&st_children_ran, 0);
	atomic_store(&st_churn_errors, 0);
	ck_assert_int_eq(smarm_node_run(node, st_root_churn, NULL, NULL, NULL),
			 0);
	ck_assert_int_eq(atomic_load(&st_churn_errors), 0);
	ck_assert_int_eq(atomic_load(&st_children_ran),
			 ST_PARENTS * ST_CHILDREN);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_FREE_SLOTS),
			 harness_stat(node, SMARM_STAT_SLOTS));
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_SPAWNED),
			 1 + ST_PARENTS + ST_PARENTS * ST_CHILDREN);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ---------------------------------------- join of an already-ended child */

#define ST_FINISHED 300

static int st_fin_errors;
static uint64_t st_fin_worst;

static void st_fin_child(void *arg)
{
	(void)arg;
}

static void st_root_join_finished(void *arg)
{
	(void)arg;
	for (int i = 0; i < ST_FINISHED; i++) {
		smarm_pid_t p;
		int how = -1;
		intptr_t reason = -1;
		uint64_t t0;
		smarm_actor_spawn(&p, st_fin_child, NULL, NULL);
		while (smarm_actor_is_alive(p))
			smarm_actor_yield();
		t0 = smarm_now_ns();
		if (smarm_actor_join(p, &how, &reason) != 0 ||
		    how != SMARM_EXIT_NORMAL || reason != 0)
			st_fin_errors++;
		if (smarm_now_ns() - t0 > st_fin_worst)
			st_fin_worst = smarm_now_ns() - t0;
	}
}

START_TEST(test_stress_join_after_child_finished_returns_at_once)
{
	st_fin_errors = 0;
	st_fin_worst = 0;
	ck_assert_int_eq(harness_run(ST_WORKERS, st_root_join_finished, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(st_fin_errors, 0);
	ck_assert_elapsed_lt(st_fin_worst, MS(50));
}
END_TEST

/* ----------------------------------------------------------- crash storm */

#define ST_CRASHERS 1000

static int st_crash_errors, st_after_storm_how;

static void st_crasher(void *arg)
{
	intptr_t i = (intptr_t)arg;
	if (i % 3 == 0)
		smarm_actor_yield();
	smarm_actor_crash(i + 1);
}

static void st_root_crash_storm(void *arg)
{
	static smarm_pid_t p[ST_CRASHERS];
	smarm_pid_t after;
	(void)arg;
	for (intptr_t i = 0; i < ST_CRASHERS; i++)
		if (smarm_actor_spawn(&p[i], st_crasher, (void *)i, NULL))
			st_crash_errors++;
	for (int i = 0; i < ST_CRASHERS; i++) {
		int how = -1;
		intptr_t reason = 0;
		if (smarm_actor_join(p[i], &how, &reason) != 0 ||
		    how != SMARM_EXIT_CRASHED || reason != i + 1)
			st_crash_errors++;
	}
	/* the scheduler is still fine */
	smarm_actor_spawn(&after, st_nop, NULL, NULL);
	smarm_actor_join(after, &st_after_storm_how, NULL);
}

START_TEST(test_stress_crash_storm_leaves_scheduler_sound)
{
	smarm_node_t *node = harness_open(ST_WORKERS);
	int how = -1;
	st_crash_errors = 0;
	st_after_storm_how = -1;
	ck_assert_int_eq(
		smarm_node_run(node, st_root_crash_storm, NULL, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(st_crash_errors, 0);
	ck_assert_int_eq(st_after_storm_how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_RUN_QUEUE), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_FREE_SLOTS),
			 harness_stat(node, SMARM_STAT_SLOTS));
	/* and the node runs again */
	ck_assert_int_eq(smarm_node_run(node, st_root_churn, NULL, &how, NULL),
			 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* --------------------------------------------------- generations on reuse */

#define ST_REUSE 1000

static int st_reuse_errors, st_reuse_same_index;

static void st_root_reuse(void *arg)
{
	(void)arg;
	for (int i = 0; i < ST_REUSE; i++) {
		smarm_pid_t a, b;
		smarm_actor_spawn(&a, st_nop, NULL, NULL);
		if (smarm_actor_join(a, NULL, NULL) != 0)
			st_reuse_errors++;
		smarm_actor_spawn(&b, st_nop, NULL, NULL);
		/* Only to confirm the scenario ran: the id is opaque, but
		 * its low half is the slot index in this implementation. */
		if ((uint32_t)a.id == (uint32_t)b.id)
			st_reuse_same_index++;
		if (smarm_pid_eq(a, b))
			st_reuse_errors++;
		if (smarm_actor_is_alive(a))
			st_reuse_errors++;
		if (smarm_actor_join(a, NULL, NULL) != SMARM_ENOPROC)
			st_reuse_errors++;
		if (smarm_actor_stop(a) != SMARM_ENOPROC)
			st_reuse_errors++;
		if (smarm_actor_detach(a) != SMARM_ENOPROC)
			st_reuse_errors++;
		if (smarm_actor_join(b, NULL, NULL) != 0)
			st_reuse_errors++;
	}
}

START_TEST(test_stress_reused_index_gets_new_generation)
{
	st_reuse_errors = 0;
	st_reuse_same_index = 0;
	ck_assert_int_eq(harness_run(_i ? ST_WORKERS : 1, st_root_reuse, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(st_reuse_errors, 0);
	ck_assert_int_gt(st_reuse_same_index, 0);
}
END_TEST

/* ------------------------------------- select with two racing producers */

#define ST_SEL_CONSUMERS 20
#define ST_SEL_MSGS 3000

struct st_sel {
	smarm_chan_t *ch[2];
	long got[2];
	long sum[2];
	long last[2];
	int order_errors;
	int errors;
};

static struct st_sel st_sel[ST_SEL_CONSUMERS];

struct st_prod {
	smarm_chan_t *ch;
	int yield_every;
};

static struct st_prod st_prods[ST_SEL_CONSUMERS][2];

static void st_producer(void *arg)
{
	struct st_prod *pr = arg;
	for (long i = 1; i <= ST_SEL_MSGS; i++) {
		smarm_chan_send(pr->ch, &i);
		if (i % pr->yield_every == 0)
			smarm_actor_yield();
	}
	smarm_chan_sender_free(pr->ch); /* closes this arm */
}

static void st_selector(void *arg)
{
	struct st_sel *c = arg;
	smarm_chan_t *arms[2] = { c->ch[0], c->ch[1] };
	int which[2] = { 0, 1 };
	size_t n = 2;
	while (n > 0) {
		size_t r = 99;
		long v;
		int rc = smarm_select(arms, n, &r);
		if (rc != 0 || r >= n) {
			c->errors++;
			return;
		}
		rc = smarm_chan_try_recv(arms[r], &v);
		if (rc == 0) {
			int w = which[r];
			c->got[w]++;
			c->sum[w] += v;
			if (v != c->last[w] + 1)
				c->order_errors++;
			c->last[w] = v;
		} else if (rc == SMARM_ECLOSED) {
			/* drop the closed arm, keep index order */
			for (size_t k = r; k + 1 < n; k++) {
				arms[k] = arms[k + 1];
				which[k] = which[k + 1];
			}
			n--;
		} else {
			c->errors++; /* select said ready: EAGAIN is wrong */
		}
	}
}

static void st_root_select(void *arg)
{
	smarm_pid_t p[ST_SEL_CONSUMERS * 3];
	int k = 0;
	(void)arg;
	for (int i = 0; i < ST_SEL_CONSUMERS; i++) {
		struct st_sel *c = &st_sel[i];
		smarm_chan_alloc(&c->ch[0], sizeof(long), NULL);
		smarm_chan_alloc(&c->ch[1], sizeof(long), NULL);
		smarm_actor_spawn(&p[k++], st_selector, c, NULL);
		for (int j = 0; j < 2; j++) {
			st_prods[i][j].ch = c->ch[j];
			st_prods[i][j].yield_every = 1 + (i + j) % 7;
			smarm_actor_spawn(&p[k++], st_producer, &st_prods[i][j],
					  NULL);
		}
	}
	for (int i = 0; i < k; i++)
		smarm_actor_join(p[i], NULL, NULL);
	for (int i = 0; i < ST_SEL_CONSUMERS; i++) {
		smarm_chan_receiver_free(st_sel[i].ch[0]);
		smarm_chan_receiver_free(st_sel[i].ch[1]);
	}
}

START_TEST(test_stress_select_two_racing_producers_exact_counts)
{
	const long sum = (long)ST_SEL_MSGS * (ST_SEL_MSGS + 1) / 2;
	memset(st_sel, 0, sizeof st_sel);
	ck_assert_int_eq(harness_run(ST_WORKERS, st_root_select, NULL),
			 SMARM_EXIT_NORMAL);
	for (int i = 0; i < ST_SEL_CONSUMERS; i++) {
		ck_assert_int_eq(st_sel[i].errors, 0);
		ck_assert_int_eq(st_sel[i].order_errors, 0);
		for (int j = 0; j < 2; j++) {
			ck_assert_int_eq(st_sel[i].got[j], ST_SEL_MSGS);
			ck_assert_int_eq(st_sel[i].sum[j], sum);
		}
	}
}
END_TEST

/* ------------------------------------------ recv_timeout racing sends */

#define ST_RT_PAIRS 16
#define ST_RT_MSGS 2000

struct st_rt {
	smarm_chan_t *ch;
	long got, sum, last;
	long timeouts;
	int errors;
};

static struct st_rt st_rt[ST_RT_PAIRS];

static void st_rt_producer(void *arg)
{
	struct st_rt *c = arg;
	for (long i = 1; i <= ST_RT_MSGS; i++) {
		smarm_chan_send(c->ch, &i);
		if (i % 5 == 0)
			smarm_actor_sleep(US(20 + (i % 3) * 10));
		else if (i % 2 == 0)
			smarm_actor_yield();
	}
	smarm_chan_sender_free(c->ch);
}

static void st_rt_consumer(void *arg)
{
	struct st_rt *c = arg;
	for (;;) {
		long v;
		int rc = smarm_chan_recv_timeout(c->ch, &v, US(25));
		if (rc == 0) {
			c->got++;
			c->sum += v;
			if (v != c->last + 1)
				c->errors++; /* lost or duplicated */
			c->last = v;
		} else if (rc == SMARM_ETIMEDOUT) {
			c->timeouts++;
		} else if (rc == SMARM_ECLOSED) {
			return;
		} else {
			c->errors++;
			return;
		}
	}
}

static void st_root_recv_timeout(void *arg)
{
	smarm_pid_t p[2 * ST_RT_PAIRS];
	(void)arg;
	for (int i = 0; i < ST_RT_PAIRS; i++) {
		smarm_chan_alloc(&st_rt[i].ch, sizeof(long), NULL);
		smarm_actor_spawn(&p[2 * i], st_rt_consumer, &st_rt[i], NULL);
		smarm_actor_spawn(&p[2 * i + 1], st_rt_producer, &st_rt[i],
				  NULL);
	}
	for (int i = 0; i < 2 * ST_RT_PAIRS; i++)
		smarm_actor_join(p[i], NULL, NULL);
	for (int i = 0; i < ST_RT_PAIRS; i++)
		smarm_chan_receiver_free(st_rt[i].ch);
}

START_TEST(test_stress_recv_timeout_racing_sends_loses_nothing)
{
	const long sum = (long)ST_RT_MSGS * (ST_RT_MSGS + 1) / 2;
	long timeouts = 0;
	memset(st_rt, 0, sizeof st_rt);
	ck_assert_int_eq(harness_run(ST_WORKERS, st_root_recv_timeout, NULL),
			 SMARM_EXIT_NORMAL);
	for (int i = 0; i < ST_RT_PAIRS; i++) {
		ck_assert_int_eq(st_rt[i].errors, 0);
		ck_assert_int_eq(st_rt[i].got, ST_RT_MSGS);
		ck_assert_int_eq(st_rt[i].sum, sum);
		timeouts += st_rt[i].timeouts;
	}
	/* the race was exercised: some waits did time out */
	ck_assert_int_gt(timeouts, 0);
}
END_TEST

/* ------------------------------------------------- stop racing a wake */

#define ST_SRW_ROUNDS 2000

static smarm_chan_t *st_srw_ch, *st_srw_ready;
static atomic_int st_srw_cleanups, st_srw_normal, st_srw_stopped, st_srw_other,
	st_srw_got;

static void st_srw_cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&st_srw_cleanups, 1);
}

static void st_srw_target(void *arg)
{
	long v = 0;
	int kind = (int)(intptr_t)arg;
	smarm_cleanup_push(st_srw_cleanup, NULL);
	smarm_chan_send(st_srw_ready, &v);
	if (kind == 0) {
		if (smarm_chan_recv(st_srw_ch, &v) == 0)
			atomic_fetch_add(&st_srw_got, 1);
	} else {
		smarm_actor_sleep(US(30)); /* a timer wake races the stop */
	}
}

static void st_srw_stopper(void *arg)
{
	smarm_pid_t *target = arg;
	smarm_actor_stop(*target);
}

static void st_root_stop_race(void *arg)
{
	long v = 1;
	(void)arg;
	smarm_chan_alloc(&st_srw_ready, sizeof(long), NULL);
	for (int i = 0; i < ST_SRW_ROUNDS; i++) {
		smarm_pid_t t, s;
		int how = -1;
		long drained;
		int kind = i % 2;
		smarm_chan_alloc(&st_srw_ch, sizeof(long), NULL);
		smarm_actor_spawn(&t, st_srw_target, (void *)(intptr_t)kind,
				  NULL);
		smarm_chan_recv(st_srw_ready, &drained);
		smarm_actor_spawn(&s, st_srw_stopper, &t, NULL);
		if (kind == 0)
			smarm_chan_send(st_srw_ch, &v); /* races the stop */
		if (smarm_actor_join(t, &how, NULL) != 0)
			atomic_fetch_add(&st_srw_other, 1);
		else if (how == SMARM_EXIT_NORMAL)
			atomic_fetch_add(&st_srw_normal, 1);
		else if (how == SMARM_EXIT_STOPPED)
			atomic_fetch_add(&st_srw_stopped, 1);
		else
			atomic_fetch_add(&st_srw_other, 1);
		smarm_actor_join(s, NULL, NULL);
		harness_chan_drop(st_srw_ch);
	}
	harness_chan_drop(st_srw_ready);
}

START_TEST(test_stress_stop_racing_wake_ends_once)
{
	atomic_store(&st_srw_cleanups, 0);
	atomic_store(&st_srw_normal, 0);
	atomic_store(&st_srw_stopped, 0);
	atomic_store(&st_srw_other, 0);
	atomic_store(&st_srw_got, 0);
	ck_assert_int_eq(harness_run(ST_WORKERS, st_root_stop_race, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&st_srw_other), 0);
	ck_assert_int_eq(atomic_load(&st_srw_normal) +
				 atomic_load(&st_srw_stopped),
			 ST_SRW_ROUNDS);
	ck_assert_int_eq(atomic_load(&st_srw_cleanups), ST_SRW_ROUNDS);
	/* a receiver that got its message ended normally */
	ck_assert_int_le(atomic_load(&st_srw_got), atomic_load(&st_srw_normal));
}
END_TEST

/* ---------------------------------------- stop of many parked actors */

#define ST_MASS 500

static atomic_int st_mass_cleanups, st_mass_stopped;
static smarm_chan_t *st_mass_never;

static void st_mass_cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&st_mass_cleanups, 1);
}

static void st_mass_member(void *arg)
{
	long v;
	intptr_t i = (intptr_t)arg;
	smarm_cleanup_push(st_mass_cleanup, NULL);
	if (i % 3 == 0)
		smarm_actor_sleep(MS(60000));
	else if (i % 3 == 1)
		for (;;)
			smarm_actor_yield();
	else
		smarm_chan_recv(st_mass_never, &v); /* a shared channel: only
						       one parks, the rest get
						       ESTATE and yield-loop */
	for (;;)
		smarm_actor_yield();
}

static void st_root_mass_stop(void *arg)
{
	static smarm_pid_t p[ST_MASS];
	(void)arg;
	smarm_chan_alloc(&st_mass_never, sizeof(long), NULL);
	for (intptr_t i = 0; i < ST_MASS; i++)
		smarm_actor_spawn(&p[i], st_mass_member, (void *)i, NULL);
	for (int i = 0; i < 10; i++)
		smarm_actor_yield();
	for (int i = 0; i < ST_MASS; i++)
		smarm_actor_stop(p[i]);
	for (int i = 0; i < ST_MASS; i++) {
		int how = -1;
		smarm_actor_join(p[i], &how, NULL);
		if (how == SMARM_EXIT_STOPPED)
			atomic_fetch_add(&st_mass_stopped, 1);
	}
	harness_chan_drop(st_mass_never);
}

START_TEST(test_stress_mass_stop_ends_every_actor)
{
	atomic_store(&st_mass_cleanups, 0);
	atomic_store(&st_mass_stopped, 0);
	ck_assert_int_eq(harness_run(ST_WORKERS, st_root_mass_stop, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&st_mass_stopped), ST_MASS);
	ck_assert_int_eq(atomic_load(&st_mass_cleanups), ST_MASS);
}
END_TEST

Suite *smarm_test_stress_suite(void)
{
	Suite *s = suite_create("stress");
	TCase *tc = tcase_create("load");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_stress_thundering_herd_all_wake);
	tcase_add_test(tc, test_stress_spawn_join_churn_completes);
	tcase_add_test(tc,
		       test_stress_join_after_child_finished_returns_at_once);
	tcase_add_test(tc, test_stress_crash_storm_leaves_scheduler_sound);
	tcase_add_loop_test(tc, test_stress_reused_index_gets_new_generation, 0,
			    2);
	tcase_add_test(tc, test_stress_mass_stop_ends_every_actor);
	suite_add_tcase(s, tc);

	tc = tcase_create("slot_state");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
		       test_stress_select_two_racing_producers_exact_counts);
	tcase_add_test(tc, test_stress_recv_timeout_racing_sends_loses_nothing);
	tcase_add_test(tc, test_stress_stop_racing_wake_ends_once);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(stress)
