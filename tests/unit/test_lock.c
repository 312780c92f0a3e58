/* SPDX-License-Identifier: MIT */
/*
 * test_lock.c - the internal futex mutex (core/lock.h): mutual exclusion
 * under contention, trylock, and (debug builds) the lock-rank checker
 * aborting on an order violation; the reader-writer lock: writers
 * exclude readers and each other, readers share, a writer is not
 * starved by a stream of readers.
 */
#include "harness.h"

#include "core/lock.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>

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

/* ------------------------------------------------------ rwlock */

static smarm__rwlock_t rw_lock;
static long rw_a, rw_b;	     /* a writer keeps them equal */
static atomic_int rw_bad;    /* a reader saw them differ */
static atomic_int rw_inside; /* readers inside now */
static atomic_int rw_writers_done;

#define RW_WRITERS 2
#define RW_WRITES 20000

static void *rw_reader(void *arg)
{
	(void)arg;
	while (atomic_load(&rw_writers_done) < RW_WRITERS) {
		smarm__rw_rdlock(&rw_lock, SMARM__RANK_REG);
		atomic_fetch_add(&rw_inside, 1);
		long a = __atomic_load_n(&rw_a, __ATOMIC_RELAXED);
		sched_yield(); /* widen the window */
		if (__atomic_load_n(&rw_b, __ATOMIC_RELAXED) != a)
			atomic_store(&rw_bad, 1);
		atomic_fetch_sub(&rw_inside, 1);
		smarm__rw_rdunlock(&rw_lock, SMARM__RANK_REG);
	}
	return NULL;
}

static void *rw_writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < RW_WRITES; i++) {
		smarm__rw_wrlock(&rw_lock, SMARM__RANK_REG);
		if (atomic_load(&rw_inside) != 0)
			atomic_store(&rw_bad, 2);
		__atomic_store_n(&rw_a, rw_a + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&rw_b, rw_b + 1, __ATOMIC_RELAXED);
		smarm__rw_wrunlock(&rw_lock, SMARM__RANK_REG);
	}
	atomic_fetch_add(&rw_writers_done, 1);
	return NULL;
}

/*
 * 6 readers in a tight loop and 2 writers: every write lands (the
 * writers finish although readers never stop trying), no reader sees a
 * half-done write, and no writer meets a reader inside.
 */
START_TEST(test_lock_rwlock_excludes_writers_not_starved)
{
	pthread_t r[6], w[RW_WRITERS];
	memset(&rw_lock, 0, sizeof rw_lock);
	rw_a = rw_b = 0;
	atomic_store(&rw_bad, 0);
	atomic_store(&rw_inside, 0);
	atomic_store(&rw_writers_done, 0);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(pthread_create(&r[i], NULL, rw_reader, NULL),
				 0);
	for (int i = 0; i < RW_WRITERS; i++)
		ck_assert_int_eq(pthread_create(&w[i], NULL, rw_writer, NULL),
				 0);
	for (int i = 0; i < RW_WRITERS; i++)
		ck_assert_int_eq(pthread_join(w[i], NULL), 0);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(pthread_join(r[i], NULL), 0);
	ck_assert_int_eq(atomic_load(&rw_bad), 0);
	ck_assert_int_eq(rw_a, RW_WRITERS * RW_WRITES);
	ck_assert_int_eq(rw_b, RW_WRITERS * RW_WRITES);
	ck_assert_uint_eq(__atomic_load_n(&rw_lock.rw_word, __ATOMIC_RELAXED),
			  0);
}
END_TEST

static void *rw_second_reader(void *arg)
{
	(void)arg;
	smarm__rw_rdlock(&rw_lock, SMARM__RANK_REG);
	atomic_store(&rw_inside, 2);
	smarm__rw_rdunlock(&rw_lock, SMARM__RANK_REG);
	return NULL;
}

/*
 * A second reader enters while the first holds the lock (the join would
 * hang, and the case time out, if readers excluded each other); a
 * writer waits for the reader to leave.
 */
START_TEST(test_lock_rwlock_readers_share)
{
	pthread_t t;
	memset(&rw_lock, 0, sizeof rw_lock);
	atomic_store(&rw_inside, 0);
	smarm__rw_rdlock(&rw_lock, SMARM__RANK_REG);
	ck_assert_int_eq(pthread_create(&t, NULL, rw_second_reader, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(atomic_load(&rw_inside), 2);
	smarm__rw_rdunlock(&rw_lock, SMARM__RANK_REG);
	smarm__rw_wrlock(&rw_lock, SMARM__RANK_REG);
	smarm__rw_wrunlock(&rw_lock, SMARM__RANK_REG);
	ck_assert_uint_eq(__atomic_load_n(&rw_lock.rw_word, __ATOMIC_RELAXED),
			  0);
}
END_TEST

Suite *smarm_test_lock_suite(void)
{
	Suite *s = suite_create("lock");
	TCase *tc = tcase_create("mutex");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_lock_uncontended_increments_exact);
	tcase_add_test(tc, test_lock_eight_threads_exact_count);
	tcase_add_test(tc, test_lock_trylock_fails_while_held);
	tcase_add_test(tc, test_lock_held_lock_excludes_other_thread);
	tcase_add_test(tc, test_lock_rwlock_excludes_writers_not_starved);
	tcase_add_test(tc, test_lock_rwlock_readers_share);
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
