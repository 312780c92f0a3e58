/* SPDX-License-Identifier: MIT */
/*
 * test_send_after.c - timed sends: delivery after the delay, cancel before
 * and after firing, deadline ordering, timers never keeping a run open,
 * firing into a channel whose receiver is gone, and the sender reference
 * a pending timer holds (its own: the caller's sender_free cannot take
 * it).
 *
 * Results observed inside actors go into the global `R` and are asserted
 * after the run returns.
 */
#include "harness.h"

#include <string.h>

static struct {
	int rc[16];
	int val[16];
	uint64_t ns[16];
	atomic_int errors;
} R;

static atomic_int dtor_count;
static atomic_int dtor_last;

static void int_dtor(void *elem)
{
	int v;
	memcpy(&v, elem, sizeof v);
	atomic_store(&dtor_last, v);
	atomic_fetch_add(&dtor_count, 1);
}

static void heap_dtor(void *elem)
{
	char *p;
	memcpy(&p, elem, sizeof p);
	atomic_fetch_add(&dtor_count, 1);
	free(p);
}

static void reset(void)
{
	memset(&R, 0, sizeof R);
	atomic_store(&dtor_count, 0);
	atomic_store(&dtor_last, 0);
}

/* ----------------------------------------------------------- deliver */

static void deliver_root(void *arg)
{
	smarm_chan_t *ch;
	smarm_timer_t t = SMARM_TIMER_NONE;
	int v = 42;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), int_dtor);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_chan_send_after(ch, &v, MS(40), &t);
	v = 0; /* the element was copied */
	R.val[1] = t.id != 0;
	R.rc[1] = smarm_chan_recv(ch, &R.val[0]);
	R.ns[0] = harness_since(t0);
	/* Fired: nothing to cancel. */
	R.rc[2] = smarm_timer_cancel(t);
	harness_chan_drop(ch);
}

START_TEST(test_send_after_delivers_after_delay)
{
	reset();
	ck_assert_int_eq(harness_run(1, deliver_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[1], 1);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[0], 42);
	ck_assert_uint_ge(R.ns[0], MS(40));
	ck_assert_elapsed_lt(R.ns[0], MS(1040));
	ck_assert_int_eq(R.rc[2], SMARM_ENOENT);
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
}
END_TEST

static void null_out_root(void *arg)
{
	smarm_chan_t *ch;
	int v = 5;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	R.rc[0] = smarm_chan_send_after(ch, &v, MS(5), NULL);
	R.rc[1] = smarm_chan_recv_timeout(ch, &R.val[0], MS(5000));
	harness_chan_drop(ch);
}

START_TEST(test_send_after_null_out_still_delivers)
{
	reset();
	ck_assert_int_eq(harness_run(1, null_out_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[0], 5);
}
END_TEST

/* ------------------------------------------------------------ cancel */

static void cancel_root(void *arg)
{
	smarm_chan_t *ch;
	smarm_timer_t t = SMARM_TIMER_NONE;
	int v = 17;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), int_dtor);
	R.rc[0] = smarm_chan_send_after(ch, &v, MS(50), &t);
	R.rc[1] = smarm_timer_cancel(t);
	R.val[0] = atomic_load(&dtor_count); /* ran inside cancel */
	R.val[1] = atomic_load(&dtor_last);
	R.rc[2] = smarm_timer_cancel(t); /* twice */
	/* Nothing arrives, also past the original deadline. */
	R.rc[3] = smarm_chan_recv_timeout(ch, &R.val[2], MS(150));
	/* The timer's sender reference went with the cancel: freeing ours
	 * closes the channel. */
	smarm_chan_sender_free(ch);
	R.rc[4] = smarm_chan_try_recv(ch, &R.val[2]);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_send_after_cancel_before_fire_runs_destructor_no_delivery)
{
	reset();
	ck_assert_int_eq(harness_run(1, cancel_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[0], 1);
	ck_assert_int_eq(R.val[1], 17);
	ck_assert_int_eq(R.rc[2], SMARM_ENOENT);
	ck_assert_int_eq(R.rc[3], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[4], SMARM_ECLOSED);
	ck_assert_int_eq(atomic_load(&dtor_count), 1);
}
END_TEST

static void cancel_fired_root(void *arg)
{
	smarm_chan_t *ch;
	smarm_timer_t t = SMARM_TIMER_NONE;
	int v = 3;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), int_dtor);
	smarm_chan_send_after(ch, &v, MS(10), &t);
	R.rc[0] = smarm_chan_recv(ch, &R.val[0]);
	R.rc[1] = smarm_timer_cancel(t);
	R.rc[2] = smarm_timer_cancel(SMARM_TIMER_NONE);
	R.rc[3] = smarm_timer_cancel((smarm_timer_t){ 0x7fffffffffffull });
	harness_chan_drop(ch);
}

START_TEST(test_send_after_cancel_after_fire_returns_enoent)
{
	reset();
	ck_assert_int_eq(harness_run(1, cancel_fired_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 3);
	ck_assert_int_eq(R.rc[1], SMARM_ENOENT);
	ck_assert_int_eq(R.rc[2], SMARM_ENOENT);
	ck_assert_int_eq(R.rc[3], SMARM_ENOENT);
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
}
END_TEST

static void cancel_one_root(void *arg)
{
	smarm_chan_t *ch;
	smarm_timer_t t[3];
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), int_dtor);
	for (int i = 0; i < 3; i++) {
		int v = 10 + i;
		smarm_chan_send_after(ch, &v, MS(20 + 10 * i), &t[i]);
	}
	R.rc[0] = smarm_timer_cancel(t[1]);
	smarm_chan_sender_free(ch);
	/* The other two still arrive, then the channel closes. */
	R.rc[1] = smarm_chan_recv(ch, &R.val[0]);
	R.rc[2] = smarm_chan_recv(ch, &R.val[1]);
	R.rc[3] = smarm_chan_recv(ch, &R.val[2]);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_send_after_cancel_one_of_three_others_delivered)
{
	reset();
	ck_assert_int_eq(harness_run(1, cancel_one_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 1);
	ck_assert_int_eq(atomic_load(&dtor_last), 11);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[0], 10);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.val[1], 12);
	ck_assert_int_eq(R.rc[3], SMARM_ECLOSED);
}
END_TEST

/* ------------------------------------------------------------- order */

static void order_root(void *arg)
{
	static const int delays_ms[5] = { 60, 20, 100, 40, 80 };
	smarm_chan_t *ch;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	for (int i = 0; i < 5; i++) {
		int v = delays_ms[i];
		if (smarm_chan_send_after(ch, &v, MS(delays_ms[i]), NULL) != 0)
			R.errors++;
	}
	smarm_chan_sender_free(ch); /* timers hold the channel open */
	for (int i = 0; i < 6; i++)
		R.rc[i] = smarm_chan_recv(ch, &R.val[i]);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_send_after_several_timers_fire_in_deadline_order)
{
	reset();
	ck_assert_int_eq(harness_run(2, order_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(R.rc[i], 0);
		ck_assert_int_eq(R.val[i], 20 * (i + 1));
	}
	ck_assert_int_eq(R.rc[5], SMARM_ECLOSED);
}
END_TEST

/* ---------------------------------------------------- run lifetime */

static void pending_root(void *arg)
{
	smarm_chan_t *ch;
	char *p = malloc(64);
	(void)arg;
	smarm_chan_alloc(&ch, sizeof p, heap_dtor);
	R.rc[0] = smarm_chan_send_after(ch, &p, MS(60000), NULL);
	/* Give up both references: only the timer keeps the channel. */
	harness_chan_drop(ch);
	R.val[0] = atomic_load(&dtor_count);
}

START_TEST(test_send_after_pending_timer_does_not_keep_run_open)
{
	uint64_t t0;
	reset();
	t0 = smarm_now_ns();
	ck_assert_int_eq(harness_run(2, pending_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_elapsed_lt(smarm_now_ns() - t0, MS(5000));
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 0);
	/* Dropped at the end of the run: the destructor ran once. */
	ck_assert_int_eq(atomic_load(&dtor_count), 1);
}
END_TEST

static void pending_open_root(void *arg)
{
	smarm_chan_t **chp = arg;
	int v = 8;
	smarm_chan_alloc(chp, sizeof(int), int_dtor);
	R.rc[0] = smarm_chan_send_after(*chp, &v, MS(60000), NULL);
	smarm_chan_sender_free(*chp); /* the receiver stays with the test */
}

START_TEST(test_send_after_dropped_at_run_end_releases_sender_ref)
{
	smarm_chan_t *ch = NULL;
	int v;
	uint64_t t0;
	reset();
	t0 = smarm_now_ns();
	ck_assert_int_eq(harness_run(1, pending_open_root, &ch),
			 SMARM_EXIT_NORMAL);
	ck_assert_elapsed_lt(smarm_now_ns() - t0, MS(5000));
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 1);
	ck_assert_int_eq(atomic_load(&dtor_last), 8);
	/* The timer's sender reference is gone: closed and empty. */
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

static void dead_receiver_root(void *arg)
{
	smarm_chan_t *ch;
	int v = 23;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), int_dtor);
	R.rc[0] = smarm_chan_send_after(ch, &v, MS(30), NULL);
	smarm_chan_receiver_free(ch);
	R.val[0] = atomic_load(&dtor_count); /* not yet */
	/* Wait for the fire (bounded), observing the destructor count. */
	t0 = smarm_now_ns();
	while (atomic_load(&dtor_count) == 0 && harness_since(t0) < MS(5000))
		smarm_actor_sleep(MS(5));
	R.ns[0] = harness_since(t0);
	R.val[1] = atomic_load(&dtor_count);
	R.val[2] = atomic_load(&dtor_last);
	smarm_chan_sender_free(ch); /* the last reference: frees it */
}

START_TEST(test_send_after_receiver_freed_destructor_runs_at_fire)
{
	reset();
	ck_assert_int_eq(harness_run(1, dead_receiver_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 0);
	ck_assert_int_eq(R.val[1], 1);
	ck_assert_int_eq(R.val[2], 23);
	ck_assert_uint_ge(R.ns[0], MS(25)); /* fired, not at receiver_free */
	ck_assert_int_eq(atomic_load(&dtor_count), 1);
}
END_TEST

static void holds_open_root(void *arg)
{
	smarm_chan_t *ch;
	int v = 1;
	uint64_t t0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	/* From before the send: a thread left off the CPU after it must
	 * not shorten the wait below (it did, under load: 17 ms). */
	t0 = smarm_now_ns();
	smarm_chan_send_after(ch, &v, MS(30), NULL);
	/* Our own sender goes; the timer's keeps the channel open. */
	smarm_chan_sender_free(ch);
	R.rc[0] = smarm_chan_try_recv(ch, &R.val[0]);
	R.rc[1] = smarm_chan_recv(ch, &R.val[1]);
	R.ns[1] = harness_since(t0);
	R.rc[2] = smarm_chan_recv(ch, &R.val[2]);
	/* No sender left: a new timed send is refused. */
	R.rc[3] = smarm_chan_send_after(ch, &v, MS(1), NULL);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_send_after_pending_timer_holds_channel_open)
{
	reset();
	ck_assert_int_eq(harness_run(1, holds_open_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], 1);
	ck_assert_uint_ge(R.ns[1], MS(30)); /* the timer's, not earlier */
	ck_assert_int_eq(R.rc[2], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[3], SMARM_ECLOSED);
}
END_TEST

/*
 * The timer's sender reference is its own: once the caller's are gone,
 * another sender_free is refused, and the pending send (or its cancel)
 * still decides when the channel closes.
 */
static void spares_root(void *arg)
{
	smarm_chan_t *ch;
	smarm_timer_t t;
	int v = 7;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), int_dtor);
	R.rc[0] = smarm_chan_send_after(ch, &v, MS(30), NULL);
	R.rc[1] = smarm_chan_sender_free(ch);
	R.rc[2] = smarm_chan_sender_free(ch); /* the timer's: refused */
	R.rc[3] = smarm_chan_recv(ch, &R.val[3]);
	R.rc[4] = smarm_chan_recv(ch, &R.val[4]);
	smarm_chan_receiver_free(ch);
	/* The same with a cancel: the channel closes with the timer. */
	smarm_chan_alloc(&ch, sizeof(int), int_dtor);
	R.rc[5] = smarm_chan_send_after(ch, &v, MS(10000), &t);
	R.rc[6] = smarm_chan_sender_free(ch);
	R.rc[7] = smarm_chan_sender_free(ch);
	R.rc[8] = smarm_chan_try_recv(ch, &R.val[8]);
	R.rc[9] = smarm_timer_cancel(t);
	R.rc[10] = smarm_chan_recv(ch, &R.val[10]);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_send_after_sender_free_spares_timer_reference)
{
	reset();
	atomic_store(&dtor_count, 0);
	ck_assert_int_eq(harness_run(1, spares_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.val[3], 7);
	ck_assert_int_eq(R.rc[4], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[5], 0);
	ck_assert_int_eq(R.rc[6], 0);
	ck_assert_int_eq(R.rc[7], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[8], SMARM_EAGAIN); /* still open */
	ck_assert_int_eq(R.rc[9], 0);
	ck_assert_int_eq(R.rc[10], SMARM_ECLOSED);
	ck_assert_int_eq(atomic_load(&dtor_count), 1); /* the cancelled one */
}
END_TEST

/* Many timers from several actors on 4 workers: all delivered. */
#define TM_ACTORS 4
#define TM_EACH 250

static smarm_chan_t *many_ch;

static void timer_actor(void *arg)
{
	int base = (int)(intptr_t)arg * TM_EACH;
	for (int i = 0; i < TM_EACH; i++) {
		int v = base + i;
		if (smarm_chan_send_after(many_ch, &v, US(100 * (i % 50)),
					  NULL) != 0)
			R.errors++;
	}
	smarm_chan_sender_free(many_ch);
}

static void many_root(void *arg)
{
	static unsigned char seen[TM_ACTORS * TM_EACH];
	smarm_pid_t p[TM_ACTORS];
	int v, rc;
	(void)arg;
	smarm_chan_alloc(&many_ch, sizeof(int), NULL);
	for (int i = 0; i < TM_ACTORS; i++) {
		smarm_chan_sender_dup(many_ch);
		smarm_actor_spawn(&p[i], timer_actor, (void *)(intptr_t)i,
				  NULL);
	}
	smarm_chan_sender_free(many_ch);
	while ((rc = smarm_chan_recv(many_ch, &v)) == 0) {
		if (v < 0 || v >= TM_ACTORS * TM_EACH || seen[v])
			R.errors++;
		else
			seen[v] = 1;
		R.val[0]++;
	}
	R.rc[0] = rc;
	for (int i = 0; i < TM_ACTORS; i++)
		smarm_actor_join(p[i], NULL, NULL);
	smarm_chan_receiver_free(many_ch);
}

START_TEST(test_send_after_many_timers_four_workers_all_delivered_once)
{
	reset();
	ck_assert_int_eq(harness_run(4, many_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ECLOSED);
	ck_assert_int_eq(R.val[0], TM_ACTORS * TM_EACH);
}
END_TEST

/* ------------------------------------------------------------ errors */

START_TEST(test_send_after_outside_actor_returns_enotactor)
{
	smarm_chan_t *ch;
	smarm_timer_t t = SMARM_TIMER_NONE;
	int v = 1;
	reset();
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(int), int_dtor), 0);
	ck_assert_int_eq(smarm_chan_send_after(ch, &v, MS(1), &t),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_timer_cancel(t), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_timer_cancel((smarm_timer_t){ 1 }),
			 SMARM_ENOTACTOR);
	/* Nothing was taken: no destructor, the channel is intact. */
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), SMARM_EAGAIN);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

static void einval_root(void *arg)
{
	smarm_chan_t *ch;
	smarm_timer_t t = { 99 };
	int v = 1;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof(int), int_dtor);
	R.rc[0] = smarm_chan_send_after(NULL, &v, MS(1), &t);
	R.rc[1] = smarm_chan_send_after(ch, NULL, MS(1), &t);
	R.val[0] = (int)t.id; /* untouched */
	smarm_chan_sender_free(ch);
	R.rc[2] = smarm_chan_send_after(ch, &v, MS(1), &t); /* closed */
	R.val[1] = atomic_load(&dtor_count);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_send_after_bad_arguments_return_einval_or_eclosed)
{
	reset();
	ck_assert_int_eq(harness_run(1, einval_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[1], SMARM_EINVAL);
	ck_assert_int_eq(R.val[0], 99);
	ck_assert_int_eq(R.rc[2], SMARM_ECLOSED);
	/* A refused element stays the caller's. */
	ck_assert_int_eq(R.val[1], 0);
}
END_TEST

Suite *smarm_test_send_after_suite(void)
{
	Suite *s = suite_create("send_after");
	TCase *tc = tcase_create("deliver");
	tcase_add_test(tc, test_send_after_delivers_after_delay);
	tcase_add_test(tc, test_send_after_null_out_still_delivers);
	tcase_add_test(tc,
		       test_send_after_several_timers_fire_in_deadline_order);
	tcase_add_test(
		tc,
		test_send_after_many_timers_four_workers_all_delivered_once);
	suite_add_tcase(s, tc);

	tc = tcase_create("cancel");
	tcase_add_test(
		tc,
		test_send_after_cancel_before_fire_runs_destructor_no_delivery);
	tcase_add_test(tc, test_send_after_cancel_after_fire_returns_enoent);
	tcase_add_test(tc,
		       test_send_after_cancel_one_of_three_others_delivered);
	suite_add_tcase(s, tc);

	tc = tcase_create("lifetime");
	tcase_add_test(tc,
		       test_send_after_pending_timer_does_not_keep_run_open);
	tcase_add_test(tc,
		       test_send_after_dropped_at_run_end_releases_sender_ref);
	tcase_add_test(tc,
		       test_send_after_receiver_freed_destructor_runs_at_fire);
	tcase_add_test(tc, test_send_after_pending_timer_holds_channel_open);
	tcase_add_test(tc, test_send_after_sender_free_spares_timer_reference);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_send_after_outside_actor_returns_enotactor);
	tcase_add_test(tc,
		       test_send_after_bad_arguments_return_einval_or_eclosed);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(send_after)
