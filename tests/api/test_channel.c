/* SPDX-License-Identifier: MIT */
/*
 * test_channel.c - unbounded channels: FIFO delivery, parking, close
 * and receiver-free semantics, element ownership and destructors,
 * recv_timeout, a second receiver timing out, many producers on 4 workers,
 * element sizes and queue growth.
 *
 * Results observed inside actors go into the global `R` and are asserted
 * after the run returns.
 */
#include "harness.h"
#include "retired.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ helpers */

static atomic_int dtor_count;
static atomic_long dtor_sum;

static void int_dtor(void *elem)
{
	int v;
	memcpy(&v, elem, sizeof v);
	atomic_fetch_add(&dtor_count, 1);
	atomic_fetch_add(&dtor_sum, v);
}

/* Elements that own heap memory: ASan catches a leak or a double free. */
static void heap_dtor(void *elem)
{
	char *p;
	memcpy(&p, elem, sizeof p);
	atomic_fetch_add(&dtor_count, 1);
	free(p);
}

static void reset_dtor(void)
{
	atomic_store(&dtor_count, 0);
	atomic_store(&dtor_sum, 0);
}

static void os_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* One shared record of what the actors saw. */
static struct {
	int rc[64];
	int val[64];
	uint64_t ns[64];
	int count;
	atomic_int errors;
	atomic_int ready;
	atomic_int sent;
	int seen_sent;
} R;

static void reset(void)
{
	memset(&R, 0, sizeof R);
	reset_dtor();
}

/* A child that sleeps `delay` then sends `val` on ch (and optionally frees
 * its sender reference). */
struct delayed {
	smarm_chan_t *ch;
	uint64_t delay;
	int val;
	bool send;
	bool free_sender;
};

static void delayed_actor(void *arg)
{
	struct delayed *d = arg;
	smarm_actor_sleep(d->delay);
	if (d->send) {
		atomic_store(&R.sent, 1);
		if (smarm_chan_send(d->ch, &d->val) != 0)
			R.errors++;
	}
	if (d->free_sender && smarm_chan_sender_free(d->ch) != 0)
		R.errors++;
}

/* ------------------------------------------------------------ basics */

static void fifo_root(void *arg)
{
	smarm_chan_t *ch;
	(void)arg;
	if (smarm_chan_alloc(&ch, sizeof(int), NULL) != 0) {
		R.errors++;
		return;
	}
	for (int i = 0; i < 100; i++)
		if (smarm_chan_send(ch, &i) != 0)
			R.errors++;
	R.val[0] = (int)harness_chan_len(ch);
	for (int i = 0; i < 100; i++) {
		int v = -1;
		if (smarm_chan_recv(ch, &v) != 0 || v != i)
			R.errors++;
		else
			R.count++;
	}
	smarm_chan_sender_free(ch);
	R.rc[0] = smarm_chan_recv(ch, &R.val[1]);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_channel_send_recv_delivers_in_fifo_order)
{
	reset();
	ck_assert_int_eq(harness_run(1, fifo_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.val[0], 100);
	ck_assert_int_eq(R.count, 100);
	ck_assert_int_eq(R.rc[0], SMARM_ECLOSED);
}
END_TEST

static void parks_root(void *arg)
{
	smarm_chan_t *ch;
	struct delayed d;
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	d = (struct delayed){ ch, MS(30), 42, true, false };
	t0 = smarm_now_ns();
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	R.rc[0] = smarm_chan_recv(ch, &R.val[0]);
	R.ns[0] = harness_since(t0);
	R.seen_sent = atomic_load(&R.sent);
	smarm_actor_join(pid, NULL, NULL);
	harness_chan_drop(ch);
}

START_TEST(test_channel_recv_on_empty_parks_until_send)
{
	reset();
	ck_assert_int_eq(harness_run(2, parks_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 42);
	ck_assert_int_eq(R.seen_sent, 1);
	ck_assert_uint_ge(R.ns[0], MS(30));
}
END_TEST

static void drain_root(void *arg)
{
	smarm_chan_t *ch;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), int_dtor);
	smarm_chan_sender_dup(ch);
	smarm_chan_sender_dup(ch);
	for (int i = 1; i <= 3; i++)
		smarm_chan_send(ch, &i);
	/* Three references: the channel closes only with the last. */
	smarm_chan_sender_free(ch);
	smarm_chan_sender_free(ch);
	R.rc[10] = smarm_chan_try_recv(ch, &R.val[10]); /* still open */
	smarm_chan_sender_free(ch);
	for (int i = 0; i < 2; i++)
		R.rc[i] = smarm_chan_recv(ch, &R.val[i]);
	R.rc[2] = smarm_chan_recv(ch, &R.val[2]);
	R.rc[3] = smarm_chan_recv(ch, &R.val[3]);
	R.rc[4] = smarm_chan_recv(ch, &R.val[4]); /* stays closed */
	R.rc[5] = smarm_chan_try_recv(ch, &R.val[5]);
	R.rc[6] = smarm_chan_recv_timeout(ch, &R.val[6], MS(1000));
	smarm_chan_receiver_free(ch);
}

START_TEST(test_channel_closed_delivers_queued_then_returns_eclosed)
{
	reset();
	ck_assert_int_eq(harness_run(1, drain_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[10], 0);
	ck_assert_int_eq(R.val[10], 1);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 2);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], 3);
	ck_assert_int_eq(R.rc[2], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[3], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[4], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[5], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[6], SMARM_ECLOSED);
	/* Every element was received: no destructor ran. */
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
}
END_TEST

static void last_sender_root(void *arg)
{
	smarm_chan_t *ch;
	struct delayed d;
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	smarm_chan_sender_dup(ch); /* the child's reference */
	d = (struct delayed){ ch, MS(30), 0, false, true };
	t0 = smarm_now_ns();
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	smarm_chan_sender_free(ch); /* only the child's is left */
	R.rc[0] = smarm_chan_recv(ch, &R.val[0]);
	R.ns[0] = harness_since(t0);
	smarm_actor_join(pid, NULL, NULL);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_channel_last_sender_free_wakes_parked_receiver)
{
	reset();
	ck_assert_int_eq(harness_run(2, last_sender_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ECLOSED);
	ck_assert_uint_ge(R.ns[0], MS(30));
	ck_assert_elapsed_lt(R.ns[0], MS(2000));
}
END_TEST

/* ------------------------------------------------ ownership and frees */

START_TEST(test_channel_send_after_receiver_free_returns_eclosed)
{
	smarm_chan_t *ch;
	int v = 7;
	reset();
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(int), int_dtor), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(smarm_chan_send(ch, &v), SMARM_ECLOSED);
	/* The element stays the caller's: the destructor did not run. */
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
	ck_assert_int_eq(v, 7);
	/* Senders can still be duplicated and freed; the last frees it. */
	ck_assert_int_eq(smarm_chan_sender_dup(ch), 0);
	ck_assert_int_eq(smarm_chan_send(ch, &v), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
}
END_TEST

START_TEST(test_channel_receiver_free_destroys_queued_elements)
{
	smarm_chan_t *ch;
	reset();
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(int), int_dtor), 0);
	for (int i = 1; i <= 5; i++)
		ck_assert_int_eq(smarm_chan_send(ch, &i), 0);
	ck_assert_int_eq(harness_chan_len(ch), 5);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 5);
	ck_assert_int_eq(atomic_load(&dtor_sum), 15);
	ck_assert_int_eq(harness_chan_len(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 5);
}
END_TEST

START_TEST(test_channel_receiver_free_after_wraparound_destroys_each_once)
{
	/* Queue wrapped around the ring: head != 0 when the receiver goes. */
	smarm_chan_t *ch;
	int v;
	reset();
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(int), int_dtor), 0);
	for (int i = 0; i < 12; i++)
		ck_assert_int_eq(smarm_chan_send(ch, &i), 0);
	for (int i = 0; i < 10; i++) {
		ck_assert_int_eq(smarm_chan_try_recv(ch, &v), 0);
		ck_assert_int_eq(v, i);
	}
	for (int i = 12; i < 20; i++)
		ck_assert_int_eq(smarm_chan_send(ch, &i), 0);
	/* Queued: 10, 11, 12..19 (10 elements, sum 145). */
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 10);
	ck_assert_int_eq(atomic_load(&dtor_sum), 145);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
}
END_TEST

START_TEST(test_channel_free_both_refs_with_queued_heap_elements_no_leak)
{
	/* Both orders; each queued element owns heap memory (run under ASan
	 * to see a leak or double free). */
	smarm_chan_t *ch;
	reset();
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(char *), heap_dtor), 0);
	for (int i = 0; i < 40; i++) {
		char *p = malloc(32);
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(smarm_chan_send(ch, &p), 0);
	}
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 40);

	reset_dtor();
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(char *), heap_dtor), 0);
	for (int i = 0; i < 40; i++) {
		char *p = malloc(32);
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(smarm_chan_send(ch, &p), 0);
	}
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 40);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 40);

	/* An empty channel, never sent on. */
	ck_assert_int_eq(smarm_chan_alloc(&ch, 8, NULL), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
}
END_TEST

START_TEST(test_channel_try_recv_empty_then_closed_returns_eagain_eclosed)
{
	smarm_chan_t *ch;
	int v = 0;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(int), NULL), 0);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), SMARM_EAGAIN);
	v = 5;
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	v = 0;
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), 0);
	ck_assert_int_eq(v, 5);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

START_TEST(test_channel_sender_dup_after_close_returns_eclosed)
{
	smarm_chan_t *ch;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(int), NULL), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_dup(ch), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

START_TEST(test_channel_sender_free_without_refs_returns_estate)
{
	smarm_chan_t *ch;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(int), NULL), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), SMARM_ESTATE);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

/* ------------------------------------------------- a second receiver */

static void parked_receiver(void *arg)
{
	smarm_chan_t *ch = arg;
	atomic_store(&R.ready, 1);
	R.rc[0] = smarm_chan_recv(ch, &R.val[0]);
}

static void second_receiver_root(void *arg)
{
	smarm_chan_t *ch;
	smarm_pid_t pid;
	int v = 99, tmp = 0;
	size_t idx = 0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	smarm_actor_spawn(&pid, parked_receiver, ch, NULL);
	/* One worker: once the flag is up the receiver has parked. */
	while (!atomic_load(&R.ready))
		smarm_actor_yield();
	/* Second receivers queue behind the parked one and time out. */
	R.rc[2] = smarm_chan_recv_timeout(ch, &tmp, MS(10));
	R.rc[4] = smarm_select_timeout((smarm_chan_t *const[]){ ch }, 1, MS(10),
				       &idx);
	R.rc[5] = smarm_chan_recv_timeout(ch, &tmp, 0);
	R.rc[6] =
		smarm_select_timeout((smarm_chan_t *const[]){ ch }, 1, 0, &idx);
	/* They left no trace: the first receiver still gets the message. */
	smarm_chan_send(ch, &v);
	smarm_actor_join(pid, NULL, NULL);
	harness_chan_drop(ch);
}

START_TEST(test_channel_second_receiver_times_out_first_still_served)
{
	reset();
	ck_assert_int_eq(harness_run(1, second_receiver_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[2], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[4], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[5], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[6], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 99);
}
END_TEST

static void stopped_receiver_root(void *arg)
{
	smarm_chan_t *ch;
	smarm_pid_t pid;
	int how = -1, v = 11;
	(void)arg;
	R.rc[0] = 12345;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	smarm_actor_spawn(&pid, parked_receiver, ch, NULL);
	while (!atomic_load(&R.ready))
		smarm_actor_yield();
	R.rc[1] = smarm_actor_stop(pid);
	smarm_actor_join(pid, &how, NULL);
	R.val[1] = how;
	/* Its registration went with it: a new receiver is accepted. */
	R.rc[2] = smarm_chan_recv_timeout(ch, &R.val[2], MS(10));
	smarm_chan_send(ch, &v);
	R.rc[3] = smarm_chan_recv(ch, &R.val[3]);
	harness_chan_drop(ch);
}

START_TEST(test_channel_stopped_receiver_unregisters_new_receiver_works)
{
	reset();
	ck_assert_int_eq(harness_run(1, stopped_receiver_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 12345); /* recv never returned */
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], SMARM_EXIT_STOPPED);
	ck_assert_int_eq(R.rc[2], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.val[3], 11);
}
END_TEST

/* ------------------------------------------------------ recv_timeout */

static void rt_queued_root(void *arg)
{
	smarm_chan_t *ch;
	int v = 3;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	smarm_chan_send(ch, &v);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_chan_recv_timeout(ch, &R.val[0], MS(5000));
	R.ns[0] = harness_since(t0);
	harness_chan_drop(ch);
}

START_TEST(test_channel_recv_timeout_queued_message_returns_immediately)
{
	reset();
	ck_assert_int_eq(harness_run(1, rt_queued_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 3);
	ck_assert_elapsed_lt(R.ns[0], MS(250));
}
END_TEST

static void rt_silent_root(void *arg)
{
	smarm_chan_t *ch;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_chan_recv_timeout(ch, &R.val[0], MS(50));
	R.ns[0] = harness_since(t0);
	harness_chan_drop(ch);
}

START_TEST(test_channel_recv_timeout_silent_channel_times_out_after_deadline)
{
	reset();
	ck_assert_int_eq(harness_run(1, rt_silent_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_uint_ge(R.ns[0], MS(50));
	ck_assert_elapsed_lt(R.ns[0], MS(1050));
}
END_TEST

static void rt_wake_root(void *arg)
{
	smarm_chan_t *ch;
	struct delayed d;
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	d = (struct delayed){ ch, MS(20), 8, true, false };
	t0 = smarm_now_ns();
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	R.rc[0] = smarm_chan_recv_timeout(ch, &R.val[0], MS(10000));
	R.ns[0] = harness_since(t0);
	smarm_actor_join(pid, NULL, NULL);
	harness_chan_drop(ch);
}

START_TEST(test_channel_recv_timeout_send_wakes_promptly)
{
	reset();
	ck_assert_int_eq(harness_run(2, rt_wake_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 8);
	ck_assert_uint_ge(R.ns[0], MS(20));
	ck_assert_elapsed_lt(R.ns[0], MS(2000));
}
END_TEST

static void rt_close_root(void *arg)
{
	smarm_chan_t *ch;
	struct delayed d;
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	smarm_chan_sender_dup(ch);
	d = (struct delayed){ ch, MS(20), 0, false, true };
	t0 = smarm_now_ns();
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	smarm_chan_sender_free(ch);
	R.rc[0] = smarm_chan_recv_timeout(ch, &R.val[0], MS(10000));
	R.ns[0] = harness_since(t0);
	smarm_actor_join(pid, NULL, NULL);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_channel_recv_timeout_close_reports_eclosed)
{
	reset();
	ck_assert_int_eq(harness_run(2, rt_close_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ECLOSED);
	ck_assert_elapsed_lt(R.ns[0], MS(2000));
}
END_TEST

static void rt_zero_root(void *arg)
{
	smarm_chan_t *ch;
	int v = 4;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_chan_recv_timeout(ch, &R.val[0], 0);
	R.ns[0] = harness_since(t0);
	smarm_chan_send(ch, &v);
	R.rc[1] = smarm_chan_recv_timeout(ch, &R.val[1], 0);
	smarm_chan_sender_free(ch);
	R.rc[2] = smarm_chan_recv_timeout(ch, &R.val[2], 0);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_channel_recv_timeout_zero_is_a_poll)
{
	reset();
	ck_assert_int_eq(harness_run(1, rt_zero_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_elapsed_lt(R.ns[0], MS(250));
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], 4);
	ck_assert_int_eq(R.rc[2], SMARM_ECLOSED);
}
END_TEST

static void rt_zero_timer_root(void *arg)
{
	smarm_chan_t *ch;
	int v = 6;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	R.rc[1] = smarm_chan_send_after(ch, &v, 0, NULL);
	/*
	 * The timer is due now, but a zero timeout never leaves the CPU, so
	 * nothing has run it yet; a bounded wait lets it fire.
	 */
	R.rc[0] = smarm_chan_recv_timeout(ch, &R.val[0], 0);
	R.rc[2] = smarm_chan_recv_timeout(ch, &R.val[2], MS(5000));
	harness_chan_drop(ch);
}

START_TEST(test_channel_recv_timeout_zero_does_not_yield_to_timers)
{
	reset();
	ck_assert_int_eq(harness_run(1, rt_zero_timer_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.val[2], 6);
}
END_TEST

static void rt_usable_root(void *arg)
{
	smarm_chan_t *ch;
	struct delayed d;
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	R.rc[0] = smarm_chan_recv_timeout(ch, &R.val[0], MS(20));
	/* A plain recv after the timeout parks and gets a later send. */
	d = (struct delayed){ ch, MS(40), 21, true, false };
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	R.rc[1] = smarm_chan_recv(ch, &R.val[1]);
	smarm_actor_join(pid, NULL, NULL);
	/* And a bounded one too. */
	d = (struct delayed){ ch, MS(10), 22, true, false };
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	R.rc[2] = smarm_chan_recv_timeout(ch, &R.val[2], MS(10000));
	smarm_actor_join(pid, NULL, NULL);
	/* A second timeout still waits out its full deadline. */
	t0 = smarm_now_ns();
	R.rc[3] = smarm_chan_recv_timeout(ch, &R.val[3], MS(30));
	R.ns[3] = harness_since(t0);
	harness_chan_drop(ch);
}

START_TEST(test_channel_recv_timeout_channel_usable_after_timeout)
{
	reset();
	ck_assert_int_eq(harness_run(2, rt_usable_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], 21);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.val[2], 22);
	ck_assert_int_eq(R.rc[3], SMARM_ETIMEDOUT);
	ck_assert_uint_ge(R.ns[3], MS(30));
}
END_TEST

static void rt_stale_root(void *arg)
{
	smarm_chan_t *ch;
	struct delayed d;
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	d = (struct delayed){ ch, MS(10), 1, true, false };
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	/* Its timer (due at 300 ms) is left behind when the send wins. */
	R.rc[0] = smarm_chan_recv_timeout(ch, &R.val[0], MS(300));
	smarm_actor_join(pid, NULL, NULL);
	t0 = smarm_now_ns();
	smarm_actor_sleep(MS(400));
	R.ns[1] = harness_since(t0);
	harness_chan_drop(ch);
}

START_TEST(test_channel_recv_timeout_stale_timer_does_not_shorten_sleep)
{
	reset();
	ck_assert_int_eq(harness_run(2, rt_stale_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 1);
	ck_assert_uint_ge(R.ns[1], MS(400));
}
END_TEST

/* 24 waiters on 4 workers, 12 get a message and 12 time out. */
#define NWAIT 24

static smarm_chan_t *many_ch[NWAIT];

static void many_waiter(void *arg)
{
	int i = (int)(intptr_t)arg;
	uint64_t t0 = smarm_now_ns();
	R.rc[i] = smarm_chan_recv_timeout(many_ch[i], &R.val[i], MS(500));
	R.ns[i] = harness_since(t0);
}

static void many_waiters_root(void *arg)
{
	smarm_pid_t pids[NWAIT];
	(void)arg;
	for (int i = 0; i < NWAIT; i++) {
		smarm_chan_alloc(&many_ch[i], sizeof(int), NULL);
		R.val[i] = -1;
	}
	for (int i = 0; i < NWAIT; i++)
		smarm_actor_spawn(&pids[i], many_waiter, (void *)(intptr_t)i,
				  NULL);
	smarm_actor_sleep(MS(20)); /* most of them are parked by now */
	for (int i = 0; i < NWAIT; i += 2)
		if (smarm_chan_send(many_ch[i], &i) != 0)
			R.errors++;
	/* Senders stay alive until every waiter is done: a timeout is a
	 * timeout, not ECLOSED. */
	for (int i = 0; i < NWAIT; i++)
		smarm_actor_join(pids[i], NULL, NULL);
	for (int i = 0; i < NWAIT; i++) {
		harness_chan_drop(many_ch[i]);
	}
}

START_TEST(test_channel_recv_timeout_many_waiters_exact_split)
{
	int ok = 0, timedout = 0;
	reset();
	ck_assert_int_eq(harness_run(4, many_waiters_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	for (int i = 0; i < NWAIT; i++) {
		if (i % 2 == 0) {
			ck_assert_int_eq(R.rc[i], 0);
			ck_assert_int_eq(R.val[i], i);
			ok++;
		} else {
			ck_assert_int_eq(R.rc[i], SMARM_ETIMEDOUT);
			ck_assert_uint_ge(R.ns[i], MS(500));
			timedout++;
		}
	}
	ck_assert_int_eq(ok, 12);
	ck_assert_int_eq(timedout, 12);
}
END_TEST

static void rt_huge_root(void *arg)
{
	smarm_chan_t *ch;
	struct delayed d;
	smarm_pid_t pid;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	d = (struct delayed){ ch, MS(30), 77, true, false };
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	/* ~584 years: effectively forever, must not wrap into the past. */
	R.rc[0] = smarm_chan_recv_timeout(ch, &R.val[0], UINT64_MAX);
	smarm_actor_join(pid, NULL, NULL);
	harness_chan_drop(ch);
}

START_TEST(test_channel_recv_timeout_huge_timeout_waits_for_send)
{
	reset();
	ck_assert_int_eq(harness_run(2, rt_huge_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 77);
}
END_TEST

/* ------------------------------------------------- cross-thread send */

struct thread_send {
	smarm_chan_t *ch;
	int val;
};

static void *thread_sender(void *arg)
{
	struct thread_send *t = arg;
	os_sleep_ns(MS(30));
	atomic_store(&R.sent, 1);
	if (smarm_chan_send(t->ch, &t->val) != 0)
		R.errors++;
	return NULL;
}

static void thread_send_root(void *arg)
{
	smarm_chan_t *ch;
	pthread_t th;
	struct thread_send t;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	t = (struct thread_send){ ch, 31 };
	if (pthread_create(&th, NULL, thread_sender, &t) != 0) {
		R.errors++;
		return;
	}
	R.rc[0] = smarm_chan_recv_timeout(ch, &R.val[0], MS(10000));
	R.seen_sent = atomic_load(&R.sent);
	pthread_join(th, NULL);
	harness_chan_drop(ch);
}

START_TEST(test_channel_send_from_os_thread_wakes_parked_receiver)
{
	reset();
	ck_assert_int_eq(harness_run(1, thread_send_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 31);
	ck_assert_int_eq(R.seen_sent, 1);
}
END_TEST

/* ------------------------------------------------- many producers */

#define NPROD 8
#define PER_PROD 10000

struct pmsg {
	uint32_t producer;
	uint32_t seq;
};

static smarm_chan_t *prod_ch;

static void producer(void *arg)
{
	smarm_chan_t *ch = prod_ch;
	uint32_t id = (uint32_t)(uintptr_t)arg;
	for (uint32_t s = 0; s < PER_PROD; s++) {
		struct pmsg m = { id, s };
		if (smarm_chan_send(ch, &m) != 0)
			R.errors++;
		if (s % 1024 == 0)
			smarm_actor_yield();
	}
	smarm_chan_sender_free(ch);
}

static void many_producers_root(void *arg)
{
	smarm_chan_t *ch;
	smarm_pid_t pids[NPROD];
	uint32_t next[NPROD] = { 0 };
	struct pmsg m;
	int rc;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof m, NULL);
	prod_ch = ch;
	for (int i = 0; i < NPROD; i++) {
		smarm_chan_sender_dup(ch);
		smarm_actor_spawn(&pids[i], producer, (void *)(uintptr_t)i,
				  NULL);
	}
	smarm_chan_sender_free(ch);
	while ((rc = smarm_chan_recv(ch, &m)) == 0) {
		if (m.producer >= NPROD || m.seq != next[m.producer])
			R.val[0]++; /* out of order or corrupt */
		else
			next[m.producer]++;
		R.count++;
	}
	R.rc[0] = rc;
	for (int i = 0; i < NPROD; i++) {
		smarm_actor_join(pids[i], NULL, NULL);
		R.val[1 + i] = (int)next[i];
	}
	smarm_chan_receiver_free(ch);
}

START_TEST(test_channel_many_producers_exact_count_per_producer_fifo)
{
	reset();
	ck_assert_int_eq(harness_run(4, many_producers_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ECLOSED);
	ck_assert_int_eq(R.val[0], 0);
	ck_assert_int_eq(R.count, NPROD * PER_PROD);
	for (int i = 0; i < NPROD; i++)
		ck_assert_int_eq(R.val[1 + i], PER_PROD);
}
END_TEST

/* ---------------------------------------------- sizes and growth */

static const size_t elem_sizes[] = { 1, 8, 100, 4096, 65536 };

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
}

static void sizes_root(void *arg)
{
	(void)arg;
	for (size_t k = 0; k < sizeof elem_sizes / sizeof elem_sizes[0]; k++) {
		size_t sz = elem_sizes[k];
		smarm_chan_t *ch;
		unsigned char *in = malloc(sz), *out = malloc(sz);
		if (in == NULL || out == NULL ||
		    smarm_chan_alloc(&ch, sz, NULL) != 0) {
			R.errors++;
			free(in);
			free(out);
			continue;
		}
		for (unsigned s = 0; s < 20; s++) {
			fill(in, sz, s + (unsigned)k * 100);
			if (smarm_chan_send(ch, in) != 0)
				R.errors++;
		}
		memset(in, 0, sz); /* the channel holds copies */
		for (unsigned s = 0; s < 20; s++) {
			fill(in, sz, s + (unsigned)k * 100);
			memset(out, 0xee, sz);
			if (smarm_chan_recv(ch, out) != 0 ||
			    memcmp(in, out, sz) != 0)
				R.errors++;
			else
				R.count++;
		}
		harness_chan_drop(ch);
		free(in);
		free(out);
	}
}

START_TEST(test_channel_element_sizes_round_trip_intact)
{
	reset();
	ck_assert_int_eq(harness_run(1, sizes_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.count,
			 20 * (int)(sizeof elem_sizes / sizeof elem_sizes[0]));
}
END_TEST

#define GROW_N 100000

static void grow_root(void *arg)
{
	smarm_chan_t *ch;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	for (int i = 0; i < GROW_N; i++)
		if (smarm_chan_send(ch, &i) != 0)
			R.errors++;
	R.val[0] = (int)harness_chan_len(ch);
	smarm_chan_sender_free(ch);
	for (int i = 0; i < GROW_N; i++) {
		int v = -1;
		if (smarm_chan_recv(ch, &v) != 0 || v != i)
			R.errors++;
		else
			R.count++;
	}
	R.rc[0] = smarm_chan_recv(ch, &R.val[1]);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_channel_queue_grows_past_initial_capacity)
{
	reset();
	ck_assert_int_eq(harness_run(1, grow_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.val[0], GROW_N);
	ck_assert_int_eq(R.count, GROW_N);
	ck_assert_int_eq(R.rc[0], SMARM_ECLOSED);
}
END_TEST

static void grow_interleaved_root(void *arg)
{
	/* Growth while the ring is wrapped (head in the middle). */
	smarm_chan_t *ch;
	int next_out = 0, next_in = 0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 7 + round; i++, next_in++)
			smarm_chan_send(ch, &next_in);
		for (int i = 0; i < 5 + round / 2; i++, next_out++) {
			int v = -1;
			if (smarm_chan_try_recv(ch, &v) != 0 || v != next_out)
				R.errors++;
		}
	}
	smarm_chan_sender_free(ch);
	for (;;) {
		int v = -1;
		int rc = smarm_chan_recv(ch, &v);
		if (rc == SMARM_ECLOSED)
			break;
		if (rc != 0 || v != next_out) {
			R.errors++;
			break;
		}
		next_out++;
	}
	R.val[0] = next_out;
	R.val[1] = next_in;
	smarm_chan_receiver_free(ch);
}

START_TEST(test_channel_growth_while_wrapped_keeps_order)
{
	reset();
	ck_assert_int_eq(harness_run(1, grow_interleaved_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.val[0], R.val[1]);
}
END_TEST

/*
 * An element destructor may drop the last sender reference: the channel
 * is then freed while receiver_free is still destroying elements, which
 * must not read it any more (it used to read the destructor and element
 * size from the freed channel on every following element).
 */
static smarm_chan_t *df_ch;
static int df_calls;

static void df_elem_free(void *e)
{
	(void)e;
	if (df_calls++ == 0)
		smarm_chan_sender_free(df_ch); /* the last sender reference */
}

START_TEST(test_channel_destructor_dropping_last_sender_is_safe)
{
	int64_t v = 5;
	df_calls = 0;
	ck_assert_int_eq(smarm_chan_alloc(&df_ch, sizeof v, df_elem_free), 0);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(smarm_chan_send(df_ch, &v), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(df_ch), 0);
	ck_assert_int_eq(df_calls, 8);
}
END_TEST

/*
 * A send after the last sender reference is gone is refused: the
 * channel is closed (try_recv says ECLOSED), and queueing an element
 * behind the close would leave it undelivered (it used to return 0).
 */
START_TEST(test_channel_send_after_last_sender_free_returns_eclosed)
{
	smarm_chan_t *ch;
	int64_t v = 1, out = 0;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_send(ch, &v), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &out), 0); /* drains */
	ck_assert_int_eq(out, 1);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &out), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

Suite *smarm_test_channel_suite(void)
{
	Suite *s = suite_create("channel");
	TCase *tc = tcase_create("basics");
	tcase_add_test(tc, test_channel_send_recv_delivers_in_fifo_order);
	tcase_add_test(tc, test_channel_recv_on_empty_parks_until_send);
	tcase_add_test(
		tc, test_channel_closed_delivers_queued_then_returns_eclosed);
	tcase_add_test(tc, test_channel_last_sender_free_wakes_parked_receiver);
	tcase_add_test(tc,
		       test_channel_send_from_os_thread_wakes_parked_receiver);
	suite_add_tcase(s, tc);

	tc = tcase_create("ownership");
	tcase_add_test(
		tc, test_channel_send_after_last_sender_free_returns_eclosed);
	tcase_add_test(tc,
		       test_channel_send_after_receiver_free_returns_eclosed);
	tcase_add_test(tc, test_channel_receiver_free_destroys_queued_elements);
	tcase_add_test(
		tc,
		test_channel_receiver_free_after_wraparound_destroys_each_once);
	tcase_add_test(
		tc,
		test_channel_free_both_refs_with_queued_heap_elements_no_leak);
	tcase_add_test(
		tc,
		test_channel_try_recv_empty_then_closed_returns_eagain_eclosed);
	tcase_add_test(tc, test_channel_sender_dup_after_close_returns_eclosed);
	tcase_add_test(tc,
		       test_channel_sender_free_without_refs_returns_estate);
	suite_add_tcase(s, tc);

	tc = tcase_create("receiver");
	tcase_add_test(tc,
		       test_channel_destructor_dropping_last_sender_is_safe);
	tcase_add_test(
		tc, test_channel_second_receiver_times_out_first_still_served);
	tcase_add_test(
		tc,
		test_channel_stopped_receiver_unregisters_new_receiver_works);
	suite_add_tcase(s, tc);

	tc = tcase_create("recv_timeout");
	tcase_add_test(
		tc,
		test_channel_recv_timeout_queued_message_returns_immediately);
	tcase_add_test(
		tc,
		test_channel_recv_timeout_silent_channel_times_out_after_deadline);
	tcase_add_test(tc, test_channel_recv_timeout_send_wakes_promptly);
	tcase_add_test(tc, test_channel_recv_timeout_close_reports_eclosed);
	tcase_add_test(tc, test_channel_recv_timeout_zero_is_a_poll);
	tcase_add_test(tc,
		       test_channel_recv_timeout_zero_does_not_yield_to_timers);
	tcase_add_test(tc,
		       test_channel_recv_timeout_channel_usable_after_timeout);
	tcase_add_test(
		tc,
		test_channel_recv_timeout_stale_timer_does_not_shorten_sleep);
	tcase_add_test(tc, test_channel_recv_timeout_many_waiters_exact_split);
	tcase_add_test(tc,
		       test_channel_recv_timeout_huge_timeout_waits_for_send);
	suite_add_tcase(s, tc);

	tc = tcase_create("stress");
	tcase_add_test(
		tc, test_channel_many_producers_exact_count_per_producer_fifo);
	tcase_add_test(tc, test_channel_element_sizes_round_trip_intact);
	tcase_add_test(tc, test_channel_queue_grows_past_initial_capacity);
	tcase_add_test(tc, test_channel_growth_while_wrapped_keeps_order);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(channel)
