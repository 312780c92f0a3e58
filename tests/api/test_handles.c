/* SPDX-License-Identifier: MIT */
/*
 * test_handles.c - misuse of channel, mutex and select-set handles: every
 * double free and use after free the header promises an error for
 * returns it (SMARM_ESTATE for a freed handle, SMARM_EINVAL for a value
 * that is no handle of the type) and neither hangs nor touches the
 * object that reused the memory. Each sequence runs on a plain thread
 * (the test's own, no node) and inside an actor of a 4-worker node; the
 * TCase timeout is the watchdog for the hangs these used to be (a
 * second free after both channel references were gone parked the
 * caller in a futex inside freed memory). Racing frees from threads and
 * actors decide each free exactly once, and a send racing its channel's
 * free never lands in the channel that reused the memory.
 */
#include "harness.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#define WATCHDOG_S 20

/* Run seq() on this plain thread, then in the root actor of a node. */
static void seq_root(void *arg)
{
	((void (*)(void))arg)();
}

static void run_both(void (*seq)(void))
{
	harness_checks_reset();
	seq();
	harness_checks_assert();
	ck_assert_int_eq(harness_run(4, seq_root, (void *)seq), 0);
	harness_checks_assert();
}

static smarm_chan_t *chan4(void)
{
	smarm_chan_t *ch = NULL;
	HARNESS_EQ(smarm_chan_alloc(&ch, 4, NULL), 0);
	return ch;
}

/* ------------------------------------------------ channel double frees */

/* The first hang: a reference freed again after both were gone. */
static void seq_chan_receiver_free_after_both_gone(void)
{
	smarm_chan_t *ch = chan4();
	HARNESS_EQ(smarm_chan_sender_free(ch), 0);
	HARNESS_EQ(smarm_chan_receiver_free(ch), 0); /* memory gone */
	HARNESS_EQ(smarm_chan_receiver_free(ch), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_sender_free(ch), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_receiver_free(ch), SMARM_ESTATE);
}

START_TEST(test_handles_chan_free_after_both_gone_returns_estate)
{
	run_both(seq_chan_receiver_free_after_both_gone);
}
END_TEST

/* The second hang: sender_free again after the receiver is gone. */
static void seq_chan_sender_free_after_receiver_gone(void)
{
	smarm_chan_t *ch = chan4();
	HARNESS_EQ(smarm_chan_receiver_free(ch), 0);
	HARNESS_EQ(smarm_chan_sender_free(ch), 0); /* memory gone */
	HARNESS_EQ(smarm_chan_sender_free(ch), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_sender_free(ch), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_receiver_free(ch), SMARM_ESTATE);
}

START_TEST(test_handles_chan_sender_free_after_receiver_gone_returns_estate)
{
	run_both(seq_chan_sender_free_after_receiver_gone);
}
END_TEST

/* Every call on a freed channel: SMARM_ESTATE, nothing else happens. */
static void seq_chan_use_after_free(void)
{
	smarm_chan_t *ch = chan4();
	smarm_selset_t *set = NULL;
	uint32_t v = 7, out = 0;
	size_t ready = 99, len = 99;
	HARNESS_EQ(smarm_chan_sender_free(ch), 0);
	HARNESS_EQ(smarm_chan_receiver_free(ch), 0);
	HARNESS_EQ(smarm_chan_send(ch, &v), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_try_recv(ch, &out), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_len(ch, &len), SMARM_ESTATE);
	HARNESS_EQ(len, 99);
	HARNESS_EQ(smarm_chan_sender_dup(ch), SMARM_ESTATE);
	HARNESS_EQ(out, 0);
	if (smarm_node_current() == NULL)
		return; /* the rest is actor context only */
	HARNESS_EQ(smarm_chan_recv(ch, &out), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_recv_timeout(ch, &out, 0), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_recv_timeout(ch, &out, MS(50)), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_recv_timeout(ch, &out, SMARM_NO_TIMEOUT),
		   SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_send_after(ch, &v, MS(1), NULL), SMARM_ESTATE);
	HARNESS_EQ(smarm_selset_alloc(&set), 0);
	HARNESS_EQ(smarm_selset_add_chan(set, ch, NULL), SMARM_ESTATE);
	smarm_selset_free(set);
	HARNESS_EQ(ready, 99);
	HARNESS_EQ(out, 0);
}

START_TEST(test_handles_chan_use_after_free_returns_estate)
{
	run_both(seq_chan_use_after_free);
}
END_TEST

/*
 * A freed handle whose memory now holds a new channel names nothing: the
 * new channel sees none of the calls made through the old handle.
 */
static void seq_chan_stale_handle_spares_the_new_tenant(void)
{
	smarm_chan_t *olds[8];
	smarm_chan_t *fresh[8];
	uint32_t v = 1, out = 0;
	for (int i = 0; i < 8; i++)
		olds[i] = chan4();
	for (int i = 0; i < 8; i++) {
		HARNESS_EQ(smarm_chan_receiver_free(olds[i]), 0);
		HARNESS_EQ(smarm_chan_sender_free(olds[i]), 0);
	}
	for (int i = 0; i < 8; i++)
		fresh[i] = chan4(); /* reuses cells freed above, or others */
	for (int i = 0; i < 8; i++) {
		HARNESS_EQ(smarm_chan_send(olds[i], &v), SMARM_ESTATE);
		HARNESS_EQ(smarm_chan_sender_free(olds[i]), SMARM_ESTATE);
		HARNESS_EQ(smarm_chan_receiver_free(olds[i]), SMARM_ESTATE);
		HARNESS_CHECK(olds[i] != fresh[i] || olds[i] == NULL);
	}
	for (int i = 0; i < 8; i++) {
		size_t len = 99;
		HARNESS_EQ(smarm_chan_len(fresh[i], &len), 0);
		HARNESS_EQ(len, 0);
		v = (uint32_t)i;
		HARNESS_EQ(smarm_chan_send(fresh[i], &v), 0);
		HARNESS_EQ(smarm_chan_try_recv(fresh[i], &out), 0);
		HARNESS_EQ(out, (uint32_t)i);
		HARNESS_EQ(smarm_chan_sender_free(fresh[i]), 0);
		HARNESS_EQ(smarm_chan_receiver_free(fresh[i]), 0);
	}
}

START_TEST(test_handles_chan_stale_handle_spares_new_tenant)
{
	run_both(seq_chan_stale_handle_spares_the_new_tenant);
}
END_TEST

/* Values that were never a channel handle: SMARM_EINVAL. */
static void seq_chan_not_a_handle(void)
{
	uint64_t local[16] = { 0 };
	smarm_mutex_t *m = NULL;
	smarm_chan_t *wild = (smarm_chan_t *)(void *)&local[8];
	uint32_t v = 1;
	size_t len = 0;
	HARNESS_EQ(smarm_chan_send(wild, &v), SMARM_EINVAL);
	HARNESS_EQ(smarm_chan_sender_free(wild), SMARM_EINVAL);
	HARNESS_EQ(smarm_chan_receiver_free(wild), SMARM_EINVAL);
	HARNESS_EQ(smarm_chan_sender_free((smarm_chan_t *)(uintptr_t)0x10),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_mutex_alloc(&m), 0);
	HARNESS_EQ(smarm_chan_sender_free((smarm_chan_t *)(void *)m),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_chan_len((smarm_chan_t *)(void *)m, &len),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_mutex_free(m), 0);
	for (int i = 0; i < 16; i++)
		HARNESS_EQ(local[i], 0); /* nothing was written */
}

START_TEST(test_handles_chan_not_a_handle_returns_einval)
{
	run_both(seq_chan_not_a_handle);
}
END_TEST

/* ------------------------------------------------ timed-send reference */

/*
 * A pending timed send's sender reference is the timer's: the caller's
 * extra sender_free is refused instead of closing the channel under it.
 */
static void ta_root(void *arg)
{
	smarm_chan_t *ch = chan4();
	uint32_t v = 42, out = 0;
	(void)arg;
	HARNESS_EQ(smarm_chan_send_after(ch, &v, MS(20), NULL), 0);
	HARNESS_EQ(smarm_chan_sender_free(ch), 0); /* the caller's only one */
	HARNESS_EQ(smarm_chan_sender_free(ch), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_sender_free(ch), SMARM_ESTATE);
	/* Still open: the timer's reference holds it until it fires. */
	HARNESS_EQ(smarm_chan_recv_timeout(ch, &out, MS(10000)), 0);
	HARNESS_EQ(out, 42);
	HARNESS_EQ(smarm_chan_recv_timeout(ch, &out, MS(10000)), SMARM_ECLOSED);
	HARNESS_EQ(smarm_chan_receiver_free(ch), 0); /* memory gone */
	HARNESS_EQ(smarm_chan_receiver_free(ch), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_send_after(ch, &v, MS(1), NULL), SMARM_ESTATE);
}

START_TEST(test_handles_timer_reference_is_not_the_callers)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, ta_root, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* -------------------------------------------------------------- mutex */

static void seq_mutex_use_after_free(void)
{
	smarm_mutex_t *m = NULL;
	HARNESS_EQ(smarm_mutex_alloc(&m), 0);
	HARNESS_EQ(smarm_mutex_lock(m, MS(100)), 0);
	HARNESS_EQ(smarm_mutex_free(m), SMARM_ESTATE); /* locked */
	HARNESS_EQ(smarm_mutex_unlock(m), 0);
	HARNESS_EQ(smarm_mutex_free(m), 0);
	HARNESS_EQ(smarm_mutex_free(m), SMARM_ESTATE);
	HARNESS_EQ(smarm_mutex_lock(m, 0), SMARM_ESTATE);
	HARNESS_EQ(smarm_mutex_lock(m, MS(50)), SMARM_ESTATE);
	HARNESS_EQ(smarm_mutex_lock(m, SMARM_NO_TIMEOUT), SMARM_ESTATE);
	HARNESS_EQ(smarm_mutex_try_lock(m), SMARM_ESTATE);
	HARNESS_EQ(smarm_mutex_unlock(m), SMARM_ESTATE);
	HARNESS_EQ(smarm_mutex_free(m), SMARM_ESTATE);
}

START_TEST(test_handles_mutex_use_after_free_returns_estate)
{
	run_both(seq_mutex_use_after_free);
}
END_TEST

static void seq_mutex_stale_handle_spares_the_new_tenant(void)
{
	smarm_mutex_t *olds[8];
	smarm_mutex_t *fresh[8];
	uint64_t local[4] = { 0 };
	for (int i = 0; i < 8; i++)
		HARNESS_EQ(smarm_mutex_alloc(&olds[i]), 0);
	for (int i = 0; i < 8; i++)
		HARNESS_EQ(smarm_mutex_free(olds[i]), 0);
	for (int i = 0; i < 8; i++)
		HARNESS_EQ(smarm_mutex_alloc(&fresh[i]), 0);
	for (int i = 0; i < 8; i++) {
		HARNESS_EQ(smarm_mutex_try_lock(olds[i]), SMARM_ESTATE);
		HARNESS_EQ(smarm_mutex_lock(olds[i], MS(10)), SMARM_ESTATE);
		HARNESS_EQ(smarm_mutex_free(olds[i]), SMARM_ESTATE);
	}
	for (int i = 0; i < 8; i++) {
		HARNESS_EQ(smarm_mutex_try_lock(fresh[i]), 0); /* was free */
		HARNESS_EQ(smarm_mutex_unlock(olds[i]), SMARM_ESTATE);
		HARNESS_EQ(smarm_mutex_unlock(fresh[i]), 0);
		HARNESS_EQ(smarm_mutex_free(fresh[i]), 0);
	}
	HARNESS_EQ(smarm_mutex_lock((smarm_mutex_t *)(void *)&local[2], 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_mutex_free((smarm_mutex_t *)(void *)&local[2]),
		   SMARM_EINVAL);
	HARNESS_EQ(local[2], 0);
}

START_TEST(test_handles_mutex_stale_handle_spares_new_tenant)
{
	run_both(seq_mutex_stale_handle_spares_the_new_tenant);
}
END_TEST

/* --------------------------------------------------------- select sets */

static void seq_selset_use_after_free(void)
{
	smarm_selset_t *set = NULL;
	smarm_chan_t *ch = chan4();
	size_t idx = 99, ready = 99;
	HARNESS_EQ(smarm_selset_alloc(&set), 0);
	HARNESS_EQ(smarm_selset_add_chan(set, ch, &idx), 0);
	HARNESS_EQ(idx, 0);
	smarm_selset_free(set);
	idx = 99;
	HARNESS_EQ(smarm_selset_add_chan(set, ch, &idx), SMARM_ESTATE);
	HARNESS_EQ(smarm_selset_add_fd(set, 0, SMARM_IO_READABLE, &idx),
		   SMARM_ESTATE);
	HARNESS_EQ(smarm_selset_clear(set), SMARM_ESTATE);
	HARNESS_EQ(idx, 99);
	if (smarm_node_current() != NULL)
		HARNESS_EQ(smarm_selset_wait(set, 0, &ready), SMARM_ESTATE);
	HARNESS_EQ(ready, 99);
	smarm_selset_free(set);				   /* again: a no-op */
	smarm_selset_free((smarm_selset_t *)(void *)&idx); /* no set */
	HARNESS_EQ(idx, 99);
	HARNESS_EQ(smarm_chan_sender_free(ch), 0);
	HARNESS_EQ(smarm_chan_receiver_free(ch), 0);
}

START_TEST(test_handles_selset_use_after_free_returns_estate)
{
	run_both(seq_selset_use_after_free);
}
END_TEST

/* A channel freed after it was added to a set: the wait refuses it. */
static void seq_selset_arm_freed_after_add(void)
{
	smarm_selset_t *set = NULL;
	smarm_chan_t *live = chan4();
	smarm_chan_t *dead = chan4();
	size_t ready = 99;
	uint32_t v = 5;
	HARNESS_EQ(smarm_selset_alloc(&set), 0);
	HARNESS_EQ(smarm_selset_add_chan(set, live, NULL), 0);
	HARNESS_EQ(smarm_selset_add_chan(set, dead, NULL), 0);
	HARNESS_EQ(smarm_chan_sender_free(dead), 0);
	HARNESS_EQ(smarm_chan_receiver_free(dead), 0);
	HARNESS_EQ(smarm_chan_send(live, &v), 0);
	HARNESS_EQ(smarm_selset_add_chan(set, dead, NULL), SMARM_ESTATE);
	if (smarm_node_current() != NULL) {
		HARNESS_EQ(smarm_selset_wait(set, 0, &ready), SMARM_ESTATE);
		HARNESS_EQ(smarm_selset_wait(set, MS(50), &ready),
			   SMARM_ESTATE);
		HARNESS_EQ(ready, 99);
		HARNESS_EQ(smarm_selset_clear(set), 0);
		HARNESS_EQ(smarm_selset_add_chan(set, live, NULL), 0);
		HARNESS_EQ(smarm_selset_wait(set, 0, &ready), 0);
		HARNESS_EQ(ready, 0);
	}
	smarm_selset_free(set);
	HARNESS_EQ(smarm_chan_sender_free(live), 0);
	HARNESS_EQ(smarm_chan_receiver_free(live), 0);
}

START_TEST(test_handles_selset_arm_freed_after_add_returns_estate)
{
	run_both(seq_selset_arm_freed_after_add);
}
END_TEST

/* ------------------------------------------------------- racing frees */

#define RACE_ROUNDS 2000
#define RACERS 4

static struct {
	smarm_chan_t *ch[RACE_ROUNDS];
	smarm_mutex_t *m[RACE_ROUNDS];
	atomic_int wins_ch[RACE_ROUNDS];
	atomic_int wins_m[RACE_ROUNDS];
	atomic_int others;
	atomic_int gate;
} RF;

static void race_prepare(void)
{
	memset(&RF, 0, sizeof RF);
	for (int i = 0; i < RACE_ROUNDS; i++) {
		RF.ch[i] = chan4();
		/* One sender reference each, racers give it up. */
		HARNESS_EQ(smarm_chan_receiver_free(RF.ch[i]), 0);
		HARNESS_EQ(smarm_mutex_alloc(&RF.m[i]), 0);
	}
}

/*
 * Racer k waits for the others at a gate, then walks the objects from
 * its own offset, freeing each once.
 */
static void race_walk(int k)
{
	atomic_fetch_add(&RF.gate, 1);
	while (atomic_load(&RF.gate) < RACERS) {
		if (smarm_node_current() != NULL)
			smarm_actor_yield();
		else
			sched_yield();
	}
	for (int j = 0; j < RACE_ROUNDS; j++) {
		int i = (j + k * (RACE_ROUNDS / RACERS)) % RACE_ROUNDS;
		int rc = smarm_chan_sender_free(RF.ch[i]);
		if (rc == 0)
			atomic_fetch_add(&RF.wins_ch[i], 1);
		else if (rc != SMARM_ESTATE)
			atomic_fetch_add(&RF.others, 1);
		rc = smarm_mutex_free(RF.m[i]);
		if (rc == 0)
			atomic_fetch_add(&RF.wins_m[i], 1);
		else if (rc != SMARM_ESTATE)
			atomic_fetch_add(&RF.others, 1);
	}
}

static void race_assert(void)
{
	for (int i = 0; i < RACE_ROUNDS; i++) {
		ck_assert_int_eq(atomic_load(&RF.wins_ch[i]), 1);
		ck_assert_int_eq(atomic_load(&RF.wins_m[i]), 1);
	}
	ck_assert_int_eq(atomic_load(&RF.others), 0);
}

static void *race_thread(void *arg)
{
	race_walk((int)(intptr_t)arg);
	return NULL;
}

START_TEST(test_handles_racing_frees_from_threads_win_once)
{
	pthread_t t[RACERS];
	harness_checks_reset();
	race_prepare();
	harness_checks_assert();
	for (int k = 0; k < RACERS; k++)
		ck_assert_int_eq(pthread_create(&t[k], NULL, race_thread,
						(void *)(intptr_t)k),
				 0);
	for (int k = 0; k < RACERS; k++)
		pthread_join(t[k], NULL);
	race_assert();
}
END_TEST

static void race_actor(void *arg)
{
	race_walk((int)(intptr_t)arg);
}

static void race_root(void *arg)
{
	smarm_pid_t p[RACERS];
	(void)arg;
	race_prepare();
	for (int k = 0; k < RACERS; k++)
		HARNESS_EQ(smarm_actor_spawn(&p[k], race_actor,
					     (void *)(intptr_t)k, NULL),
			   0);
	for (int k = 0; k < RACERS; k++)
		HARNESS_EQ(smarm_actor_join(p[k], NULL, NULL), 0);
}

START_TEST(test_handles_racing_frees_from_actors_win_once)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, race_root, NULL), 0);
	harness_checks_assert();
	race_assert();
}
END_TEST

/*
 * A send racing the free of its channel: it runs before the free or
 * returns SMARM_ESTATE (or SMARM_ECLOSED, the receiving side being gone
 * first), and never lands in the channel that took the freed cell. The
 * freeing thread frees a one-element cycle of channels, so the next alloc
 * reuses the cell at once, and looks into each new tenant before it is
 * used: an element it did not send is a stale sender's.
 */
#define STALE_MS 1500

static struct {
	_Atomic(smarm_chan_t *) cur;
	atomic_int stop;
	atomic_long sends_ok, sends_stale, strays, others;
} SR;

static void *stale_sender(void *arg)
{
	int v = 7;
	(void)arg;
	while (!atomic_load_explicit(&SR.stop, memory_order_relaxed)) {
		smarm_chan_t *h = atomic_load(&SR.cur);
		int rc = smarm_chan_send(h, &v);
		if (rc == 0)
			atomic_fetch_add(&SR.sends_ok, 1);
		else if (rc == SMARM_ESTATE || rc == SMARM_ECLOSED)
			atomic_fetch_add(&SR.sends_stale, 1);
		else
			atomic_fetch_add(&SR.others, 1);
	}
	return NULL;
}

START_TEST(test_handles_send_racing_free_spares_new_tenant)
{
	pthread_t t;
	uint64_t t0 = smarm_now_ns();
	smarm_chan_t *ch = NULL;
	memset(&SR, 0, sizeof SR);
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(int), NULL), 0);
	atomic_store(&SR.cur, ch);
	ck_assert_int_eq(pthread_create(&t, NULL, stale_sender, NULL), 0);
	while (harness_since(t0) < MS(STALE_MS)) {
		smarm_chan_t *next = NULL;
		int v;
		/* Free ch (both references): its cell goes back to the pool. */
		ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
		ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
		ck_assert_int_eq(smarm_chan_alloc(&next, sizeof(int), NULL), 0);
		/* Nobody was given `next`: it must be empty. */
		if (smarm_chan_try_recv(next, &v) != SMARM_EAGAIN)
			atomic_fetch_add(&SR.strays, 1);
		atomic_store(&SR.cur, next);
		ch = next;
	}
	atomic_store(&SR.stop, 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	long others = atomic_load(&SR.others), strays = atomic_load(&SR.strays);
	long stale = atomic_load(&SR.sends_stale);
	ck_assert_int_eq(others, 0);
	ck_assert_int_eq(strays, 0);
	ck_assert_int_gt(stale, 0); /* it raced */
}
END_TEST

Suite *smarm_test_handles_suite(void)
{
	Suite *s = suite_create("handles");
	TCase *tc = tcase_create("misuse");
	tcase_set_timeout(tc, WATCHDOG_S); /* the watchdog */
	tcase_add_test(tc,
		       test_handles_chan_free_after_both_gone_returns_estate);
	tcase_add_test(
		tc,
		test_handles_chan_sender_free_after_receiver_gone_returns_estate);
	tcase_add_test(tc, test_handles_chan_use_after_free_returns_estate);
	tcase_add_test(tc, test_handles_chan_stale_handle_spares_new_tenant);
	tcase_add_test(tc, test_handles_chan_not_a_handle_returns_einval);
	tcase_add_test(tc, test_handles_timer_reference_is_not_the_callers);
	tcase_add_test(tc, test_handles_mutex_use_after_free_returns_estate);
	tcase_add_test(tc, test_handles_mutex_stale_handle_spares_new_tenant);
	tcase_add_test(tc, test_handles_selset_use_after_free_returns_estate);
	tcase_add_test(tc,
		       test_handles_selset_arm_freed_after_add_returns_estate);
	suite_add_tcase(s, tc);
	tc = tcase_create("races");
	tcase_set_timeout(tc, WATCHDOG_S);
	tcase_add_test(tc, test_handles_racing_frees_from_threads_win_once);
	tcase_add_test(tc, test_handles_racing_frees_from_actors_win_once);
	tcase_add_test(tc, test_handles_send_racing_free_spares_new_tenant);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(handles)
