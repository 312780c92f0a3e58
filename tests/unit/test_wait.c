/* SPDX-License-Identifier: MIT */
/*
 * test_wait.c - the one wait protocol (core/wait.h) driven directly, as a
 * new blocking primitive would: a registration wakes exactly its round;
 * a registration of a round that ended is inert (WAIT-2); a wake that
 * lands between registering and parking is not lost; a retired round
 * eats its wake (WAIT-6); the deadline is one more waker (WAIT-3); a stop
 * inside the park runs the undo hook exactly once, a wake never does
 * (WAIT-4); a foreign thread's wake reaches the waiter (WAIT-7); a wake
 * that lands in the park queues the waiter as woken (before pinned
 * actors).
 */
#include "harness.h"

#include "core/actor.h"
#include "core/node.h"
#include "core/slot.h"
#include "core/wait.h"

#include <pthread.h>
#include <sched.h>

static void wt_run(int workers, smarm_actor_cb root)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(workers, root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}

/* The registration a waiter publishes, and whether it has returned. */
static struct smarm__waiter wt_reg;
static _Atomic int wt_published;
static _Atomic int wt_woke;
static _Atomic int wt_undos;

static void wt_undo(struct smarm__wait *w)
{
	HARNESS_CHECK(w->wt_arg == &wt_reg);
	atomic_fetch_add(&wt_undos, 1);
}

/* ------------------------------------- a registration wakes its round */

static struct smarm__waiter wt_old;

static void wt_waiter_two_rounds(void *arg)
{
	struct smarm__wait w;
	(void)arg;
	smarm__wait_init(&w, smarm__current(), 0, wt_undo, &wt_reg);
	/* round 1 ends without parking: its registration must go inert */
	wt_old = smarm__wait_open(&w);
	smarm__wait_retire(&w);
	wt_reg = smarm__wait_open(&w);
	HARNESS_CHECK(wt_reg.epoch != wt_old.epoch);
	atomic_store(&wt_published, 1);
	HARNESS_CHECK(smarm__wait_park(&w) == 0);
	atomic_store(&wt_woke, 1);
}

static void wt_root_two_rounds(void *arg)
{
	smarm_pid_t p;
	struct smarm_node *n = smarm__current_node();
	(void)arg;
	atomic_store(&wt_published, 0);
	atomic_store(&wt_woke, 0);
	atomic_store(&wt_undos, 0);
	HARNESS_CHECK(smarm_actor_spawn(&p, wt_waiter_two_rounds, NULL, NULL) ==
		      0);
	while (!atomic_load(&wt_published))
		smarm_actor_yield();
	for (int i = 0; i < 10; i++)
		smarm_actor_yield(); /* let it park */
	/* the old round's wake is inert: nothing happens */
	HARNESS_CHECK(!smarm__unpark_at(n, wt_old.pid, wt_old.epoch));
	for (int i = 0; i < 10; i++)
		smarm_actor_yield();
	HARNESS_CHECK(!atomic_load(&wt_woke));
	/* the live one wakes it, exactly once */
	HARNESS_CHECK(smarm__unpark_at(n, wt_reg.pid, wt_reg.epoch));
	HARNESS_CHECK(!smarm__unpark_at(n, wt_reg.pid, wt_reg.epoch));
	HARNESS_CHECK(smarm_actor_join(p, NULL, NULL) == 0);
	HARNESS_CHECK(atomic_load(&wt_woke));
	HARNESS_CHECK(atomic_load(&wt_undos) == 0); /* a wake runs no undo */
}

START_TEST(test_wait_registration_wakes_only_its_round)
{
	wt_run(1, wt_root_two_rounds);
	wt_run(4, wt_root_two_rounds);
}
END_TEST

/* ------------------------------ a wake before the park is not lost */

static void wt_root_early_wake(void *arg)
{
	struct smarm__wait w;
	struct smarm__waiter reg;
	(void)arg;
	smarm__wait_init(&w, smarm__current(), 0, NULL, NULL);
	reg = smarm__wait_open(&w);
	/* a waker runs between registering and parking (here: ourselves) */
	HARNESS_CHECK(smarm__unpark_at(reg.node, reg.pid, reg.epoch));
	HARNESS_CHECK(smarm__wait_park(&w) == 0); /* returns at once */
	/* a retired round eats a wake that already landed */
	reg = smarm__wait_open(&w);
	HARNESS_CHECK(smarm__unpark_at(reg.node, reg.pid, reg.epoch));
	smarm__wait_retire(&w);
	reg = smarm__wait_open(&w);
	HARNESS_CHECK(smarm__unpark_at(reg.node, reg.pid, reg.epoch));
	HARNESS_CHECK(smarm__wait_park(&w) == 0); /* only its own wake */
}

START_TEST(test_wait_wake_before_park_is_kept_and_retire_eats_it)
{
	wt_run(1, wt_root_early_wake);
}
END_TEST

/* ------------------------------------------ the deadline is a waker */

static uint64_t wt_slept_ns;

static void wt_root_deadline(void *arg)
{
	struct smarm__wait w;
	uint64_t t0 = smarm_now_ns();
	(void)arg;
	smarm__wait_init(&w, smarm__current(), t0 + MS(20), NULL, NULL);
	HARNESS_CHECK(!smarm__wait_expired(&w));
	smarm__wait_open(&w); /* registered nowhere: only the timer wakes */
	HARNESS_CHECK(smarm__wait_park(&w) == 0);
	wt_slept_ns = smarm_now_ns() - t0;
	HARNESS_CHECK(smarm__wait_expired(&w));
}

START_TEST(test_wait_deadline_wakes_an_unregistered_round)
{
	wt_run(2, wt_root_deadline);
	ck_assert_uint_ge(wt_slept_ns, MS(20));
	ck_assert_elapsed_lt(wt_slept_ns, MS(2000));
}
END_TEST

/* ------------------------------- a stop inside the park runs undo once */

static void wt_victim(void *arg)
{
	struct smarm__wait w;
	(void)arg;
	smarm__wait_init(&w, smarm__current(), 0, wt_undo, &wt_reg);
	wt_reg = smarm__wait_open(&w);
	atomic_store(&wt_published, 1);
	smarm__wait_park(&w);
	HARNESS_CHECK(0); /* not reached: stopped inside the park */
}

static void wt_root_stop(void *arg)
{
	smarm_pid_t p;
	int how = -1;
	(void)arg;
	atomic_store(&wt_published, 0);
	atomic_store(&wt_undos, 0);
	HARNESS_CHECK(smarm_actor_spawn(&p, wt_victim, NULL, NULL) == 0);
	while (!atomic_load(&wt_published))
		smarm_actor_yield();
	HARNESS_CHECK(smarm_actor_stop(p) == 0);
	HARNESS_CHECK(smarm_actor_join(p, &how, NULL) == 0);
	HARNESS_CHECK(how == SMARM_EXIT_STOPPED);
	HARNESS_CHECK(atomic_load(&wt_undos) == 1);
}

START_TEST(test_wait_stop_in_park_runs_undo_exactly_once)
{
	wt_run(1, wt_root_stop);
	wt_run(4, wt_root_stop);
}
END_TEST

/* ------------------------------------------------ a foreign waker */

static smarm__lock_t wt_lock;

static void *wt_foreign(void *arg)
{
	struct smarm__waiter reg;
	(void)arg;
	while (!atomic_load(&wt_published))
		sched_yield();
	/* as a primitive's waker does: take the registration under the lock */
	smarm__lock(&wt_lock, SMARM__RANK_CHANNEL);
	reg = wt_reg;
	wt_reg.node = NULL;
	smarm__wake_and_unlock(reg, &wt_lock, SMARM__RANK_CHANNEL);
	return NULL;
}

static void wt_root_foreign(void *arg)
{
	struct smarm__wait w;
	pthread_t t;
	(void)arg;
	atomic_store(&wt_published, 0);
	HARNESS_CHECK(pthread_create(&t, NULL, wt_foreign, NULL) == 0);
	smarm__wait_init(&w, smarm__current(), 0, NULL, NULL);
	for (;;) {
		bool gone;
		smarm__lock(&wt_lock, SMARM__RANK_CHANNEL);
		gone = atomic_load(&wt_published) && wt_reg.node == NULL;
		if (!gone) {
			wt_reg = smarm__wait_open(&w);
			atomic_store(&wt_published, 1);
		}
		smarm__unlock(&wt_lock, SMARM__RANK_CHANNEL);
		if (gone)
			break; /* woken, and the waker cleared the registration
				*/
		HARNESS_CHECK(smarm__wait_park(&w) == 0);
	}
	pthread_join(t, NULL);
}

START_TEST(test_wait_foreign_thread_wake_reaches_the_waiter)
{
	wt_run(1, wt_root_foreign);
	wt_run(2, wt_root_foreign);
}
END_TEST

/* ------------- a wake that lands in the park goes before pinned actors */

/*
 * One worker, WT_YIELDERS actors that yield in a loop (each waits in the
 * worker's pinned FIFO, as an actor preempted by signal does; this
 * executable, linked with the internal archive, is never preempted
 * asynchronously) and the root: a wake that lands while the root parks
 * (between its registration and its switch: here the root's own, as a
 * foreign thread's or the epoll thread's does when the kernel takes the
 * worker's CPU there) queues the root as a woken actor, which goes
 * before the pinned ones: at most the one picked while the root was
 * still switching out runs first. Queued as a plain entry, it waited
 * behind every one of them (a slice each, for actors preempted by
 * signal).
 */
#define WT_YIELDERS 3
#define WT_ROUNDS 5
static _Atomic unsigned long wt_runs[WT_YIELDERS];
static _Atomic int wt_yield_stop;

static void wt_yielder(void *arg)
{
	_Atomic unsigned long *c = &wt_runs[(intptr_t)arg];
	while (!atomic_load(&wt_yield_stop)) {
		atomic_fetch_add(c, 1);
		smarm_actor_yield();
	}
}

static void wt_root_wake_in_park(void *arg)
{
	smarm_pid_t p[WT_YIELDERS];
	(void)arg;
	atomic_store(&wt_yield_stop, 0);
	for (intptr_t i = 0; i < WT_YIELDERS; i++)
		HARNESS_EQ(
			smarm_actor_spawn(&p[i], wt_yielder, (void *)i, NULL),
			0);
	for (int r = 0; r < WT_ROUNDS; r++) {
		struct smarm__wait w;
		struct smarm__waiter reg;
		unsigned long before[WT_YIELDERS];
		int ran;
		/* every yielder runs (and waits pinned) meanwhile */
		HARNESS_EQ(smarm_actor_sleep(MS(2)), 0);
		for (int i = 0; i < WT_YIELDERS; i++)
			before[i] = atomic_load(&wt_runs[i]);
		smarm__wait_init(&w, smarm__current(), 0, NULL, NULL);
		reg = smarm__wait_open(&w);
		HARNESS_CHECK(smarm__unpark_at(reg.node, reg.pid, reg.epoch));
		HARNESS_CHECK(smarm__wait_park(&w) == 0);
		ran = 0;
		for (int i = 0; i < WT_YIELDERS; i++)
			ran += atomic_load(&wt_runs[i]) != before[i];
		/* the pick after the park was made before the root's
		 * switch ended (whoever runs next queues it): one yielder */
		HARNESS_CHECK(ran <= 1);
	}
	atomic_store(&wt_yield_stop, 1);
	for (int i = 0; i < WT_YIELDERS; i++)
		HARNESS_EQ(smarm_actor_join(p[i], NULL, NULL), 0);
}

START_TEST(test_wait_wake_in_park_goes_before_pinned_actors)
{
	harness_checks_reset();
	wt_run(1, wt_root_wake_in_park);
}
END_TEST

Suite *smarm_test_wait_suite(void)
{
	Suite *s = suite_create("wait");
	TCase *tc = tcase_create("wait");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_wait_registration_wakes_only_its_round);
	tcase_add_test(tc,
		       test_wait_wake_before_park_is_kept_and_retire_eats_it);
	tcase_add_test(tc, test_wait_deadline_wakes_an_unregistered_round);
	tcase_add_test(tc, test_wait_stop_in_park_runs_undo_exactly_once);
	tcase_add_test(tc, test_wait_foreign_thread_wake_reaches_the_waiter);
	tcase_add_test(tc, test_wait_wake_in_park_goes_before_pinned_actors);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(wait)
