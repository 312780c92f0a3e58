/* SPDX-License-Identifier: MIT */
/*
 * test_mutex.c - the green mutex: lock/unlock, parking the actor (not the
 * worker) under contention, FIFO hand-off without barging, timeouts, the
 * holder rules, free rules, non-reentrancy, exact counts under contention
 * on 4 workers, stopped waiters, and locking from plain OS threads.
 *
 * Results observed inside actors go into the global `R` and are asserted
 * after the run returns.
 */
#include "harness.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

static struct {
	int rc[16];
	int val[16];
	uint64_t ns[16];
	int order[16];
	atomic_int norder;
	atomic_int seq;
	int ev[16];
	atomic_int flag[8];
	atomic_int errors;
	atomic_int overlap;
	atomic_int in_cs;
	long counter;
} R;

static smarm_mutex_t *M;

static void reset(void)
{
	memset(&R, 0, sizeof R);
	M = NULL;
}

/* Record event `i` at the next step of a global sequence. */
static void ev(int i)
{
	R.ev[i] = atomic_fetch_add(&R.seq, 1) + 1;
}

static void os_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void wait_flag(int i)
{
	while (!atomic_load(&R.flag[i]))
		smarm_actor_yield();
}

/* ------------------------------------------------------------ basics */

static void basic_root(void *arg)
{
	smarm_mutex_t *m;
	(void)arg;
	R.rc[0] = smarm_mutex_alloc(&m);
	R.rc[1] = smarm_mutex_lock(m, MS(1000));
	R.rc[2] = smarm_mutex_unlock(m);
	R.rc[3] = smarm_mutex_try_lock(m);
	R.rc[4] = smarm_mutex_unlock(m);
	R.rc[5] = smarm_mutex_lock(m, 0); /* free: a zero timeout still wins */
	R.rc[6] = smarm_mutex_unlock(m);
	R.rc[7] = smarm_mutex_free(m);
}

START_TEST(test_mutex_lock_unlock_in_actor_succeeds)
{
	reset();
	ck_assert_int_eq(harness_run(1, basic_root, NULL), SMARM_EXIT_NORMAL);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(R.rc[i], 0);
}
END_TEST

/* Contention parks the actor: another actor runs on the one worker. */
static smarm_chan_t *done_ch;

static void contender(void *arg)
{
	(void)arg;
	ev(1); /* B tries */
	R.rc[0] = smarm_mutex_lock(M, MS(10000));
	ev(4); /* B locked */
	smarm_mutex_unlock(M);
}

static void bystander(void *arg)
{
	int v = 1;
	(void)arg;
	ev(2); /* C ran while B waited */
	smarm_chan_send(done_ch, &v);
}

static void parks_root(void *arg)
{
	smarm_pid_t b, c;
	int v;
	(void)arg;
	smarm_mutex_alloc(&M);
	smarm_chan_alloc(&done_ch, sizeof(int), NULL);
	smarm_mutex_lock(M, MS(1000));
	ev(0); /* A locked */
	smarm_actor_spawn(&b, contender, NULL, NULL);
	smarm_actor_spawn(&c, bystander, NULL, NULL);
	smarm_chan_recv(done_ch, &v);
	ev(3); /* A unlocks */
	smarm_mutex_unlock(M);
	smarm_actor_join(b, NULL, NULL);
	smarm_actor_join(c, NULL, NULL);
	R.rc[1] = smarm_mutex_free(M);
	harness_chan_drop(done_ch);
}

START_TEST(test_mutex_contention_parks_actor_not_worker)
{
	reset();
	ck_assert_int_eq(harness_run(1, parks_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_lt(R.ev[0], R.ev[1]);
	ck_assert_int_lt(R.ev[1], R.ev[2]);
	ck_assert_int_lt(R.ev[2], R.ev[3]);
	ck_assert_int_lt(R.ev[3], R.ev[4]);
}
END_TEST

/* FIFO hand-off: queued A, B, C acquire in that order. */
static void fifo_waiter(void *arg)
{
	int id = (int)(intptr_t)arg;
	int rc;
	atomic_store(&R.flag[id], 1);
	rc = smarm_mutex_lock(M, MS(10000));
	R.rc[id] = rc;
	if (rc == 0) {
		R.order[atomic_fetch_add(&R.norder, 1)] = id;
		smarm_actor_yield(); /* hold it a while */
		smarm_mutex_unlock(M);
	}
}

static void fifo_root(void *arg)
{
	smarm_pid_t p[4];
	(void)arg;
	smarm_mutex_alloc(&M);
	smarm_mutex_lock(M, MS(1000));
	for (int i = 1; i <= 3; i++) {
		smarm_actor_spawn(&p[i], fifo_waiter, (void *)(intptr_t)i,
				  NULL);
		wait_flag(i); /* one worker: it is queued now */
	}
	smarm_mutex_unlock(M);
	/* Handed straight to A: no barging by the releaser. */
	R.rc[4] = smarm_mutex_try_lock(M);
	R.rc[5] = smarm_mutex_lock(M, 0);
	for (int i = 1; i <= 3; i++)
		smarm_actor_join(p[i], NULL, NULL);
	R.rc[6] = smarm_mutex_free(M);
}

START_TEST(test_mutex_waiters_acquire_in_fifo_order)
{
	reset();
	ck_assert_int_eq(harness_run(1, fifo_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[5], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[6], 0);
	ck_assert_int_eq(atomic_load(&R.norder), 3);
	ck_assert_int_eq(R.order[0], 1);
	ck_assert_int_eq(R.order[1], 2);
	ck_assert_int_eq(R.order[2], 3);
}
END_TEST

/* ----------------------------------------------------------- timeout */

static void timeout_child(void *arg)
{
	uint64_t t0;
	int v = 1;
	(void)arg;
	t0 = smarm_now_ns();
	R.rc[0] = smarm_mutex_lock(M, MS(40));
	R.ns[0] = harness_since(t0);
	smarm_chan_send(done_ch, &v);
	/* The mutex is still usable: this wait is granted on unlock. */
	R.rc[1] = smarm_mutex_lock(M, MS(10000));
	if (R.rc[1] == 0)
		R.rc[2] = smarm_mutex_unlock(M);
}

static void timeout_root(void *arg)
{
	smarm_pid_t p;
	int v;
	(void)arg;
	smarm_mutex_alloc(&M);
	smarm_chan_alloc(&done_ch, sizeof(int), NULL);
	smarm_mutex_lock(M, MS(1000));
	smarm_actor_spawn(&p, timeout_child, NULL, NULL);
	smarm_chan_recv(done_ch, &v);
	smarm_actor_yield(); /* let it queue again */
	smarm_mutex_unlock(M);
	smarm_actor_join(p, NULL, NULL);
	R.rc[3] = smarm_mutex_try_lock(M);
	R.rc[4] = smarm_mutex_unlock(M);
	R.rc[5] = smarm_mutex_free(M);
	harness_chan_drop(done_ch);
}

START_TEST(test_mutex_lock_timeout_returns_etimedout_mutex_still_usable)
{
	reset();
	ck_assert_int_eq(harness_run(2, timeout_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_uint_ge(R.ns[0], MS(40));
	ck_assert_elapsed_lt(R.ns[0], MS(1040));
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_int_eq(R.rc[5], 0);
}
END_TEST

static void huge_child(void *arg)
{
	(void)arg;
	atomic_store(&R.flag[0], 1);
	/* ~584 years: effectively forever, must not wrap into the past. */
	R.rc[0] = smarm_mutex_lock(M, UINT64_MAX);
	if (R.rc[0] == 0)
		smarm_mutex_unlock(M);
}

static void huge_root(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_mutex_alloc(&M);
	smarm_mutex_lock(M, MS(1000));
	smarm_actor_spawn(&p, huge_child, NULL, NULL);
	wait_flag(0);
	smarm_actor_sleep(MS(20));
	smarm_mutex_unlock(M);
	smarm_actor_join(p, NULL, NULL);
	smarm_mutex_free(M);
}

START_TEST(test_mutex_lock_huge_timeout_waits_for_unlock)
{
	reset();
	ck_assert_int_eq(harness_run(1, huge_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
}
END_TEST

/* A timeout racing an unlock: whatever wins, the lock is never lost. */
#define RACE_ROUNDS 300

static void racer(void *arg)
{
	(void)arg;
	int rc = smarm_mutex_lock(M, US(200));
	if (rc == 0) {
		R.val[0]++;
		if (smarm_mutex_unlock(M) != 0)
			R.errors++;
	} else if (rc == SMARM_ETIMEDOUT) {
		R.val[1]++;
	} else {
		R.errors++;
	}
}

static void race_root(void *arg)
{
	(void)arg;
	smarm_mutex_alloc(&M);
	for (int i = 0; i < RACE_ROUNDS; i++) {
		smarm_pid_t p;
		uint64_t t0;
		if (smarm_mutex_lock(M, MS(5000)) != 0) {
			R.errors++;
			break;
		}
		smarm_actor_spawn(&p, racer, NULL, NULL);
		/* Release somewhere around the racer's deadline. */
		t0 = smarm_now_ns();
		while (harness_since(t0) < US(50 + (i % 7) * 40))
			smarm_actor_yield();
		smarm_mutex_unlock(M);
		smarm_actor_join(p, NULL, NULL);
		/* Free again: nobody kept a lost grant. */
		if (smarm_mutex_try_lock(M) != 0)
			R.errors++;
		else
			smarm_mutex_unlock(M);
	}
	R.rc[0] = smarm_mutex_free(M);
}

START_TEST(test_mutex_timeout_racing_unlock_never_loses_lock)
{
	reset();
	ck_assert_int_eq(harness_run(4, race_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.val[0] + R.val[1], RACE_ROUNDS);
	ck_assert_int_eq(R.rc[0], 0);
}
END_TEST

/* ------------------------------------------------------ holder rules */

static void non_holder_child(void *arg)
{
	(void)arg;
	R.rc[0] = smarm_mutex_unlock(M);
	R.rc[1] = smarm_mutex_try_lock(M);
}

static void *non_holder_thread(void *arg)
{
	(void)arg;
	R.rc[2] = smarm_mutex_unlock(M);
	return NULL;
}

static void non_holder_root(void *arg)
{
	smarm_pid_t p;
	pthread_t th;
	(void)arg;
	smarm_mutex_alloc(&M);
	R.rc[3] = smarm_mutex_unlock(M); /* nobody holds it */
	smarm_mutex_lock(M, MS(1000));
	smarm_actor_spawn(&p, non_holder_child, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
	if (pthread_create(&th, NULL, non_holder_thread, NULL) == 0)
		pthread_join(th, NULL);
	else
		R.errors++;
	/* Still ours. */
	R.rc[4] = smarm_mutex_try_lock(M);
	R.rc[5] = smarm_mutex_unlock(M);
	R.rc[6] = smarm_mutex_unlock(M);
	R.rc[7] = smarm_mutex_free(M);
}

START_TEST(test_mutex_unlock_by_non_holder_returns_estate)
{
	reset();
	ck_assert_int_eq(harness_run(1, non_holder_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[1], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[2], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[3], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[4], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[5], 0);
	ck_assert_int_eq(R.rc[6], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[7], 0);
}
END_TEST

static void try_lock_child(void *arg)
{
	(void)arg;
	R.rc[1] = smarm_mutex_try_lock(M);
}

static void try_lock_root(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_mutex_alloc(&M);
	R.rc[0] = smarm_mutex_try_lock(M);
	smarm_actor_spawn(&p, try_lock_child, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
	R.rc[2] = smarm_mutex_try_lock(M); /* the holder too */
	R.rc[3] = smarm_mutex_unlock(M);
	R.rc[4] = smarm_mutex_free(M);
}

START_TEST(test_mutex_try_lock_when_held_returns_eagain)
{
	reset();
	ck_assert_int_eq(harness_run(1, try_lock_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[2], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], 0);
}
END_TEST

static void free_waiter(void *arg)
{
	(void)arg;
	atomic_store(&R.flag[0], 1);
	R.rc[5] = smarm_mutex_lock(M, MS(10000));
	if (R.rc[5] == 0)
		smarm_mutex_unlock(M);
}

static void free_root(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_mutex_alloc(&M);
	smarm_mutex_lock(M, MS(1000));
	R.rc[0] = smarm_mutex_free(M); /* held */
	smarm_actor_spawn(&p, free_waiter, NULL, NULL);
	wait_flag(0);
	R.rc[1] = smarm_mutex_free(M); /* held and waited on */
	smarm_mutex_unlock(M);
	R.rc[2] = smarm_mutex_free(M); /* handed to the waiter: held */
	smarm_actor_join(p, NULL, NULL);
	R.rc[3] = smarm_mutex_free(M);
	R.rc[4] = smarm_mutex_free(NULL);
}

START_TEST(test_mutex_free_while_held_returns_estate)
{
	reset();
	ck_assert_int_eq(harness_run(1, free_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[1], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[2], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_int_eq(R.rc[5], 0);
}
END_TEST

static void reentrant_root(void *arg)
{
	uint64_t t0;
	(void)arg;
	smarm_mutex_alloc(&M);
	R.rc[0] = smarm_mutex_lock(M, MS(1000));
	t0 = smarm_now_ns();
	R.rc[1] = smarm_mutex_lock(M, MS(30));
	R.ns[1] = harness_since(t0);
	R.rc[2] = smarm_mutex_lock(M, 0);
	t0 = smarm_now_ns();
	R.rc[6] = smarm_mutex_lock(M, SMARM_NO_TIMEOUT); /* must not hang */
	R.ns[6] = harness_since(t0);
	/* Still held once, by us; the failed relock left no queue entry. */
	R.rc[3] = smarm_mutex_unlock(M);
	R.rc[4] = smarm_mutex_unlock(M);
	R.rc[5] = smarm_mutex_free(M);
}

/* A relock is refused at once, whatever the timeout: never a wait. */
START_TEST(test_mutex_relock_by_holder_is_estate_at_once)
{
	reset();
	ck_assert_int_eq(harness_run(1, reentrant_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], SMARM_ESTATE);
	ck_assert_uint_lt(R.ns[1], MS(30));
	ck_assert_int_eq(R.rc[2], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[6], SMARM_ESTATE);
	ck_assert_uint_lt(R.ns[6], MS(1000));
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[5], 0);
}
END_TEST

/* ------------------------------------------------------- contention */

#define CONT_ACTORS 8
#define CONT_ITERS 1000

static void incrementer(void *arg)
{
	(void)arg;
	for (int i = 0; i < CONT_ITERS; i++) {
		if (smarm_mutex_lock(M, MS(10000)) != 0) {
			R.errors++;
			continue;
		}
		if (atomic_fetch_add(&R.in_cs, 1) != 0)
			R.overlap++;
		long c = R.counter;
		if (i % 16 == 0)
			smarm_actor_yield(); /* hold it across a switch */
		R.counter = c + 1;
		atomic_fetch_sub(&R.in_cs, 1);
		if (smarm_mutex_unlock(M) != 0)
			R.errors++;
	}
}

static void contention_root(void *arg)
{
	smarm_pid_t p[CONT_ACTORS];
	(void)arg;
	smarm_mutex_alloc(&M);
	for (int i = 0; i < CONT_ACTORS; i++)
		smarm_actor_spawn(&p[i], incrementer, NULL, NULL);
	for (int i = 0; i < CONT_ACTORS; i++)
		smarm_actor_join(p[i], NULL, NULL);
	R.rc[0] = smarm_mutex_free(M);
}

/*
 * Several rounds, each on a fresh node and bounded in wall-clock time: a
 * lost wake here stalls every actor until the 10 s lock timers fire, and
 * the run may still end with the right count, so only the time shows it.
 */
#define CONT_ROUNDS 5

START_TEST(test_mutex_contention_four_workers_exact_count)
{
	for (int round = 0; round < CONT_ROUNDS; round++) {
		uint64_t t0 = smarm_now_ns();
		reset();
		ck_assert_int_eq(harness_run(4, contention_root, NULL),
				 SMARM_EXIT_NORMAL);
		ck_assert_elapsed_lt(smarm_now_ns() - t0, MS(5000));
		ck_assert_int_eq(R.errors, 0);
		ck_assert_int_eq(R.overlap, 0);
		ck_assert_int_eq(R.counter, (long)CONT_ACTORS * CONT_ITERS);
		ck_assert_int_eq(R.rc[0], 0);
	}
}
END_TEST

/* ---------------------------------------------------- stopped waiters */

static void stop_waiter(void *arg)
{
	int id = (int)(intptr_t)arg;
	atomic_store(&R.flag[id], 1);
	R.rc[id] = smarm_mutex_lock(M, MS(10000));
	R.val[id] = 1; /* returned from lock */
	if (R.rc[id] == 0) {
		R.order[atomic_fetch_add(&R.norder, 1)] = id;
		smarm_mutex_unlock(M);
	}
}

static void stop_queued_root(void *arg)
{
	smarm_pid_t a, b;
	int how = -1;
	(void)arg;
	smarm_mutex_alloc(&M);
	smarm_mutex_lock(M, MS(1000));
	smarm_actor_spawn(&a, stop_waiter, (void *)(intptr_t)1, NULL);
	wait_flag(1);
	smarm_actor_spawn(&b, stop_waiter, (void *)(intptr_t)2, NULL);
	wait_flag(2);
	R.rc[5] = smarm_actor_stop(a);
	smarm_actor_join(a, &how, NULL);
	R.rc[6] = how;
	smarm_mutex_unlock(M);
	smarm_actor_join(b, NULL, NULL);
	R.rc[7] = smarm_mutex_free(M);
}

START_TEST(test_mutex_stopped_queued_waiter_next_waiter_gets_lock)
{
	reset();
	ck_assert_int_eq(harness_run(1, stop_queued_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[5], 0);
	ck_assert_int_eq(R.rc[6], SMARM_EXIT_STOPPED);
	ck_assert_int_eq(R.val[1], 0); /* A never returned from lock */
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(atomic_load(&R.norder), 1);
	ck_assert_int_eq(R.order[0], 2);
	ck_assert_int_eq(R.rc[7], 0);
}
END_TEST

static void stop_granted_root(void *arg)
{
	smarm_pid_t a, b;
	int how = -1;
	(void)arg;
	smarm_mutex_alloc(&M);
	smarm_mutex_lock(M, MS(1000));
	smarm_actor_spawn(&a, stop_waiter, (void *)(intptr_t)1, NULL);
	wait_flag(1);
	smarm_actor_spawn(&b, stop_waiter, (void *)(intptr_t)2, NULL);
	wait_flag(2);
	/* Grant to A, then stop A before it runs (one worker): A must pass
	 * the lock on to B as it leaves. */
	smarm_mutex_unlock(M);
	R.rc[5] = smarm_actor_stop(a);
	smarm_actor_join(a, &how, NULL);
	R.rc[6] = how;
	smarm_actor_join(b, NULL, NULL);
	R.rc[7] = smarm_mutex_free(M);
}

START_TEST(test_mutex_stopped_granted_waiter_passes_lock_on)
{
	reset();
	ck_assert_int_eq(harness_run(1, stop_granted_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[5], 0);
	ck_assert_int_eq(R.rc[6], SMARM_EXIT_STOPPED);
	ck_assert_int_eq(R.val[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(atomic_load(&R.norder), 1);
	ck_assert_int_eq(R.order[0], 2);
	ck_assert_int_eq(R.rc[7], 0);
}
END_TEST

/* -------------------------------------------------------- OS threads */

START_TEST(test_mutex_lock_from_plain_thread_succeeds)
{
	smarm_mutex_t *m;
	pthread_t th;
	reset();
	ck_assert_int_eq(smarm_mutex_alloc(&m), 0);
	ck_assert_int_eq(smarm_mutex_lock(m, MS(1000)), 0);
	ck_assert_int_eq(smarm_mutex_try_lock(m), SMARM_EAGAIN);
	/* The holder thread relocking is refused, not spun on. */
	ck_assert_int_eq(smarm_mutex_lock(m, MS(10)), SMARM_ESTATE);
	ck_assert_int_eq(smarm_mutex_lock(m, SMARM_NO_TIMEOUT), SMARM_ESTATE);
	ck_assert_int_eq(smarm_mutex_free(m), SMARM_ESTATE);
	/* Another thread is not the holder. */
	M = m;
	ck_assert_int_eq(pthread_create(&th, NULL, non_holder_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(R.rc[2], SMARM_ESTATE);
	ck_assert_int_eq(smarm_mutex_unlock(m), 0);
	ck_assert_int_eq(smarm_mutex_unlock(m), SMARM_ESTATE);
	ck_assert_int_eq(smarm_mutex_try_lock(m), 0);
	ck_assert_int_eq(smarm_mutex_unlock(m), 0);
	ck_assert_int_eq(smarm_mutex_free(m), 0);
}
END_TEST

static smarm_chan_t *thr_ch;
static smarm_chan_t *ack_ch; /* the actor tried while the thread held */

/*
 * Holds the lock until the actor has tried it twice, then a while (the
 * actor parks in its third try), then releases it to the actor. (It
 * slept a fixed 50 ms: a loaded machine left the actor's worker off the
 * CPU longer, and its try_lock then succeeded.)
 */
static void *holder_thread(void *arg)
{
	int v = 1;
	(void)arg;
	if (smarm_mutex_lock(M, MS(5000)) != 0)
		R.errors++;
	smarm_chan_send(thr_ch, &v);
	if (smarm_chan_recv(ack_ch, &v) != 0)
		R.errors++;
	os_sleep_ns(MS(20));
	ev(0); /* thread unlocks */
	if (smarm_mutex_unlock(M) != 0)
		R.errors++;
	return NULL;
}

/* Fails to lock while an actor holds it, then waits it out. */
static void *waiter_thread(void *arg)
{
	int v = 2;
	(void)arg;
	R.rc[4] = smarm_mutex_lock(M, MS(30));
	R.rc[5] = smarm_mutex_try_lock(M);
	smarm_chan_send(thr_ch, &v);
	R.rc[6] = smarm_mutex_lock(M, MS(10000));
	ev(3); /* thread locked */
	R.rc[7] = smarm_mutex_unlock(M);
	return NULL;
}

static void thread_root(void *arg)
{
	pthread_t th;
	int v;
	(void)arg;
	smarm_mutex_alloc(&M);
	smarm_chan_alloc(&thr_ch, sizeof(int), NULL);
	smarm_chan_alloc(&ack_ch, sizeof(int), NULL);
	/* A thread holds it: actors are excluded, then granted on unlock. */
	if (pthread_create(&th, NULL, holder_thread, NULL) != 0) {
		R.errors++;
		return;
	}
	smarm_chan_recv(thr_ch, &v);
	R.rc[0] = smarm_mutex_try_lock(M);
	R.rc[1] = smarm_mutex_lock(M, MS(10));
	smarm_chan_send(ack_ch, &v);
	R.rc[2] = smarm_mutex_lock(M, MS(10000));
	ev(1); /* actor locked */
	pthread_join(th, NULL);
	/* An actor holds it: a thread is excluded until it is released. */
	if (pthread_create(&th, NULL, waiter_thread, NULL) != 0) {
		R.errors++;
		return;
	}
	smarm_chan_recv(thr_ch, &v);
	ev(2); /* actor unlocks */
	R.rc[3] = smarm_mutex_unlock(M);
	pthread_join(th, NULL);
	R.rc[8] = smarm_mutex_free(M);
	harness_chan_drop(thr_ch);
	harness_chan_drop(ack_ch);
}

START_TEST(test_mutex_lock_from_os_thread_excludes_actors)
{
	reset();
	ck_assert_int_eq(harness_run(1, thread_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[1], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_lt(R.ev[0], R.ev[1]);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[5], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[6], 0);
	ck_assert_int_lt(R.ev[2], R.ev[3]);
	ck_assert_int_eq(R.rc[7], 0);
	ck_assert_int_eq(R.rc[8], 0);
}
END_TEST

Suite *smarm_test_mutex_suite(void)
{
	Suite *s = suite_create("mutex");
	TCase *tc = tcase_create("lock");
	tcase_add_test(tc, test_mutex_lock_unlock_in_actor_succeeds);
	tcase_add_test(tc, test_mutex_contention_parks_actor_not_worker);
	tcase_add_test(tc, test_mutex_waiters_acquire_in_fifo_order);
	tcase_add_test(tc, test_mutex_relock_by_holder_is_estate_at_once);
	suite_add_tcase(s, tc);

	tc = tcase_create("timeout");
	tcase_add_test(
		tc,
		test_mutex_lock_timeout_returns_etimedout_mutex_still_usable);
	tcase_add_test(tc, test_mutex_lock_huge_timeout_waits_for_unlock);
	tcase_add_test(tc, test_mutex_timeout_racing_unlock_never_loses_lock);
	suite_add_tcase(s, tc);

	tc = tcase_create("rules");
	tcase_add_test(tc, test_mutex_unlock_by_non_holder_returns_estate);
	tcase_add_test(tc, test_mutex_try_lock_when_held_returns_eagain);
	tcase_add_test(tc, test_mutex_free_while_held_returns_estate);
	suite_add_tcase(s, tc);

	tc = tcase_create("concurrency");
	tcase_add_test(tc, test_mutex_contention_four_workers_exact_count);
	tcase_add_test(tc,
		       test_mutex_stopped_queued_waiter_next_waiter_gets_lock);
	tcase_add_test(tc, test_mutex_stopped_granted_waiter_passes_lock_on);
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_add_test(tc, test_mutex_lock_from_plain_thread_succeeds);
	tcase_add_test(tc, test_mutex_lock_from_os_thread_excludes_actors);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(mutex)
