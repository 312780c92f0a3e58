/* SPDX-License-Identifier: MIT */
/*
 * test_lock.c - the internal futex mutex (core/lock.h): mutual exclusion
 * under contention, trylock, and (debug builds) the lock-rank checker
 * aborting on an order violation.
 */
#include "harness.h"

#include "core/lock.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

static smarm__lock_t lk_lock;
static long lk_counter; /* deliberately non-atomic */

START_TEST(test_lock_uncontended_increments_exact)
{
	lk_counter = 0;
	for (int i = 0; i < 1000; i++) {
		smarm__lock(&lk_lock, SMARM__RANK_SLOT);
		lk_counter++;
		smarm__unlock(&lk_lock, SMARM__RANK_SLOT);
	}
	ck_assert_int_eq(lk_counter, 1000);
	ck_assert_uint_eq(__atomic_load_n(&lk_lock.v, __ATOMIC_RELAXED), 0);
}
END_TEST

#define LK_THREADS 8
#define LK_ITERS 50000

static void *lk_hammer(void *arg)
{
	int rank = (int)(intptr_t)arg;
	for (int i = 0; i < LK_ITERS; i++) {
		smarm__lock(&lk_lock, rank);
		long v = lk_counter;
		if ((i & 255) == 0)
			sched_yield(); /* hold it across a reschedule */
		lk_counter = v + 1;
		smarm__unlock(&lk_lock, rank);
	}
	return NULL;
}

START_TEST(test_lock_eight_threads_exact_count)
{
	pthread_t t[LK_THREADS];
	lk_counter = 0;
	for (int i = 0; i < LK_THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, lk_hammer,
						(void *)(intptr_t)(1 + i % 4)),
				 0);
	for (int i = 0; i < LK_THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_int_eq(lk_counter, (long)LK_THREADS * LK_ITERS);
	ck_assert_uint_eq(__atomic_load_n(&lk_lock.v, __ATOMIC_RELAXED), 0);
}
END_TEST

START_TEST(test_lock_trylock_fails_while_held)
{
	smarm__lock_t l = { 0 };
	ck_assert(smarm__trylock(&l, SMARM__RANK_CHANNEL));
	ck_assert(!smarm__trylock(&l, SMARM__RANK_CHANNEL));
	smarm__unlock(&l, SMARM__RANK_CHANNEL);
	ck_assert(smarm__trylock(&l, SMARM__RANK_CHANNEL));
	smarm__unlock(&l, SMARM__RANK_CHANNEL);
	ck_assert_uint_eq(l.v, 0);
}
END_TEST

static smarm__lock_t lk_held;
static atomic_int lk_other_got_it;

static void *lk_try_from_other(void *arg)
{
	(void)arg;
	if (smarm__trylock(&lk_held, SMARM__RANK_SLOT)) {
		atomic_store(&lk_other_got_it, 1);
		smarm__unlock(&lk_held, SMARM__RANK_SLOT);
	}
	return NULL;
}

START_TEST(test_lock_held_lock_excludes_other_thread)
{
	pthread_t t;
	atomic_store(&lk_other_got_it, 0);
	smarm__lock(&lk_held, SMARM__RANK_SLOT);
	ck_assert_int_eq(pthread_create(&t, NULL, lk_try_from_other, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(atomic_load(&lk_other_got_it), 0);
	smarm__unlock(&lk_held, SMARM__RANK_SLOT);
	ck_assert_int_eq(pthread_create(&t, NULL, lk_try_from_other, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(atomic_load(&lk_other_got_it), 1);
}
END_TEST

/* ----------------------------------------------------------------- ranks */

START_TEST(test_lock_rank_increasing_nesting_allowed)
{
	smarm__lock_t a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	smarm__lock(&a, SMARM__RANK_SLOT);
	smarm__lock(&b, SMARM__RANK_CHANNEL);
	smarm__lock(&c, SMARM__RANK_TIMERS);
	smarm__lock(&d, SMARM__RANK_RUNQ);
	smarm__unlock(&d, SMARM__RANK_RUNQ);
	smarm__unlock(&c, SMARM__RANK_TIMERS);
	smarm__unlock(&b, SMARM__RANK_CHANNEL);
	smarm__unlock(&a, SMARM__RANK_SLOT);
	/* released ranks may be taken again in any order */
	smarm__lock(&b, SMARM__RANK_CHANNEL);
	smarm__unlock(&b, SMARM__RANK_CHANNEL);
	smarm__lock(&a, SMARM__RANK_SLOT);
	smarm__unlock(&a, SMARM__RANK_SLOT);
	/* RUNQ under CHANNEL skipping TIMERS is fine too */
	smarm__lock(&b, SMARM__RANK_CHANNEL);
	smarm__lock(&d, SMARM__RANK_RUNQ);
	smarm__unlock(&d, SMARM__RANK_RUNQ);
	smarm__unlock(&b, SMARM__RANK_CHANNEL);
}
END_TEST

#ifndef NDEBUG
START_TEST(test_lock_rank_leaf_under_channel_aborts)
{
	smarm__lock_t a = { 0 }, b = { 0 };
	smarm__lock(&b, SMARM__RANK_CHANNEL);
	smarm__lock(&a, SMARM__RANK_SLOT); /* aborts */
}
END_TEST

START_TEST(test_lock_rank_two_leaves_abort)
{
	smarm__lock_t a = { 0 }, b = { 0 };
	smarm__lock(&a, SMARM__RANK_SLOT);
	smarm__lock(&b, SMARM__RANK_SLOT); /* aborts */
}
END_TEST

START_TEST(test_lock_rank_two_channels_abort)
{
	smarm__lock_t a = { 0 }, b = { 0 };
	smarm__lock(&a, SMARM__RANK_CHANNEL);
	smarm__lock(&b, SMARM__RANK_CHANNEL); /* aborts */
}
END_TEST

START_TEST(test_lock_rank_channel_under_runq_aborts)
{
	smarm__lock_t a = { 0 }, b = { 0 };
	smarm__lock(&a, SMARM__RANK_RUNQ);
	smarm__lock(&b, SMARM__RANK_CHANNEL); /* aborts */
}
END_TEST
#endif

Suite *smarm_test_lock_suite(void)
{
	Suite *s = suite_create("lock");
	TCase *tc = tcase_create("mutex");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_lock_uncontended_increments_exact);
	tcase_add_test(tc, test_lock_eight_threads_exact_count);
	tcase_add_test(tc, test_lock_trylock_fails_while_held);
	tcase_add_test(tc, test_lock_held_lock_excludes_other_thread);
	suite_add_tcase(s, tc);

	tc = tcase_create("ranks");
	tcase_add_test(tc, test_lock_rank_increasing_nesting_allowed);
#ifndef NDEBUG
	tcase_add_test_raise_signal(
		tc, test_lock_rank_leaf_under_channel_aborts, SIGABRT);
	tcase_add_test_raise_signal(tc, test_lock_rank_two_leaves_abort,
				    SIGABRT);
	tcase_add_test_raise_signal(tc, test_lock_rank_two_channels_abort,
				    SIGABRT);
	tcase_add_test_raise_signal(
		tc, test_lock_rank_channel_under_runq_aborts, SIGABRT);
#endif
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(lock)
