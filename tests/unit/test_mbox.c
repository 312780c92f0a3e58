/* SPDX-License-Identifier: MIT */
/*
 * test_mbox.c - an actor's mailbox (msg/mbox.c): bands taken highest
 * first, one wait woken by a send into any band (from an actor or a
 * plain thread), the one timeout rule, and no lost wake under
 * oversubscribed producers (a lost wake shows as a wait that times out
 * with elements queued). Also the bound of a channel's queue
 * (smarm__chan_set_limit): SMARM_EFULL, nothing queued; and the send
 * penalty (chan.c INV-9), and what becomes of an element handed to a
 * receiver that a stop ends (chan.c INV-11).
 */
#include "harness.h"

#include "msg/msg.h"

#include <pthread.h>
#include <string.h>

#define BANDS 3

static smarm_chan_t *g_ch[BANDS];
static struct smarm__mbox g_mb;

static void bands_make(void)
{
	smarm__mbox_init(&g_mb);
	for (unsigned i = 0; i < BANDS; i++) {
		HARNESS_EQ(smarm_chan_alloc(&g_ch[i], sizeof(uint64_t), NULL),
			   0);
		HARNESS_EQ(smarm__mbox_attach(&g_mb, i, g_ch[i]), 0);
	}
}

static void bands_free(void)
{
	smarm__mbox_detach(&g_mb);
	for (unsigned i = 0; i < BANDS; i++) {
		smarm_chan_receiver_free(g_ch[i]);
		smarm_chan_sender_free(g_ch[i]);
	}
}

static uint64_t now_ns(void)
{
	return smarm_now_ns();
}

/* ---- order, timeouts, misuse ---- */

static void order_root(void *arg)
{
	struct smarm__slot *me = smarm__current();
	uint64_t v, t0;
	unsigned band = 99;
	(void)arg;
	bands_make();
	/* misuse: a band out of range or taken, no channel */
	HARNESS_EQ(smarm__mbox_attach(&g_mb, SMARM__MBOX_BANDS, g_ch[0]),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm__mbox_attach(&g_mb, 0, g_ch[1]), SMARM_EINVAL);
	HARNESS_EQ(smarm__mbox_ready(&g_mb), -1);
	/* nothing queued: 0 answers at once, a window passes */
	HARNESS_EQ(smarm__mbox_wait(me, &g_mb, 0, &band), SMARM_ETIMEDOUT);
	t0 = now_ns();
	HARNESS_EQ(smarm__mbox_wait(me, &g_mb, MS(20), &band), SMARM_ETIMEDOUT);
	HARNESS_CHECK(now_ns() - t0 >= MS(20));
	/* queued lowest band first: taken highest first */
	for (int i = BANDS - 1; i >= 0; i--) {
		v = (uint64_t)i;
		HARNESS_EQ(smarm_chan_send(g_ch[i], &v), 0);
	}
	for (unsigned i = 0; i < BANDS; i++) {
		HARNESS_EQ(smarm__mbox_wait(me, &g_mb, 0, &band), 0);
		HARNESS_EQ(band, i);
		HARNESS_EQ(smarm_chan_try_recv(g_ch[band], &v), 0);
		HARNESS_EQ(v, i);
	}
	HARNESS_EQ(smarm__mbox_ready(&g_mb), -1);
	bands_free();
}

START_TEST(test_mbox_bands_are_taken_highest_first)
{
	ck_assert_int_eq(harness_run(1, order_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---- wakes from actors and plain threads; no lost wake ---- */

#define PER_BAND 20000

struct producer {
	unsigned band;
	int n;
};

static void produce(void *arg)
{
	struct producer *p = arg;
	for (uint64_t i = 0; i < (uint64_t)p->n; i++) {
		HARNESS_EQ(smarm_chan_send(g_ch[p->band], &i), 0);
		if ((i & 63) == 0)
			(void)smarm_actor_yield(); /* let the owner park */
	}
}

static void *produce_thread(void *arg)
{
	struct producer *p = arg;
	for (uint64_t i = 0; i < (uint64_t)p->n; i++) {
		HARNESS_EQ(smarm_chan_send(g_ch[p->band], &i), 0);
		if ((i & 255) == 0) {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void stress_root(void *arg)
{
	struct smarm__slot *me = smarm__current();
	struct producer p[BANDS];
	uint64_t next[BANDS] = { 0 }, v;
	int total = 0, want = 0;
	unsigned band;
	pthread_t th;
	bool threaded = arg != NULL;
	bands_make();
	for (unsigned i = 0; i < BANDS; i++) {
		p[i].band = i;
		p[i].n = PER_BAND;
		want += p[i].n;
		if (threaded && i == 1)
			HARNESS_EQ(pthread_create(&th, NULL, produce_thread,
						  &p[i]),
				   0);
		else
			HARNESS_EQ(
				smarm_actor_spawn(NULL, produce, &p[i], NULL),
				0);
	}
	while (total < want) {
		/* A lost wake parks until the window's timer with elements
		 * queued: a wait that long fails (generous, so that a
		 * loaded machine does not trip it). */
		uint64_t t0 = now_ns();
		int rc = smarm__mbox_wait(me, &g_mb, MS(8000), &band);
		HARNESS_EQ(rc, 0);
		HARNESS_CHECK(now_ns() - t0 < MS(4000));
		if (rc != 0 || now_ns() - t0 >= MS(4000))
			break;
		/* Each band keeps its own order. */
		while (smarm_chan_try_recv(g_ch[band], &v) == 0) {
			HARNESS_EQ(v, next[band]);
			next[band] = v + 1;
			total++;
		}
	}
	HARNESS_EQ(total, want);
	if (threaded)
		pthread_join(th, NULL);
	bands_free();
}

START_TEST(test_mbox_no_wake_is_lost)
{
	for (int round = 0; round < 3; round++) {
		ck_assert_int_eq(harness_run(4, stress_root, NULL),
				 SMARM_EXIT_NORMAL);
		harness_checks_assert();
		ck_assert_int_eq(harness_run(2, stress_root, "thread"),
				 SMARM_EXIT_NORMAL);
		harness_checks_assert();
	}
	ck_assert_int_eq(harness_run(1, stress_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---- a channel's bound ---- */

static void limit_root(void *arg)
{
	smarm_chan_t *h;
	uint64_t v = 1;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&h, sizeof v, NULL), 0);
	HARNESS_EQ(smarm__chan_set_limit(h, 2), 0);
	HARNESS_EQ(smarm_chan_send(h, &v), 0);
	HARNESS_EQ(smarm_chan_send(h, &v), 0);
	HARNESS_EQ(smarm_chan_send(h, &v), SMARM_EFULL);
	HARNESS_EQ(smarm_chan_try_recv(h, &v), 0);
	HARNESS_EQ(smarm_chan_send(h, &v), 0); /* room again */
	HARNESS_EQ(smarm__chan_set_limit(h, 0), 0);
	for (int i = 0; i < 100; i++)
		HARNESS_EQ(smarm_chan_send(h, &v), 0);
	HARNESS_EQ(smarm__chan_set_limit(NULL, 1), SMARM_EINVAL);
	smarm_chan_receiver_free(h);
	smarm_chan_sender_free(h);
	HARNESS_EQ(smarm__chan_set_limit(h, 1), SMARM_ESTATE);
}

START_TEST(test_mbox_chan_limit_refuses_with_efull)
{
	ck_assert_int_eq(harness_run(1, limit_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---- the send penalty (chan.c INV-9) ---- */

static _Atomic int g_got;

static void consume(void *arg)
{
	uint64_t v;
	(void)arg;
	while (smarm_chan_recv(g_ch[0], &v) == 0 && v != UINT64_MAX)
		atomic_fetch_add(&g_got, 1);
}

/*
 * One worker: a producer that only sends (a few hundred microseconds,
 * far less than a slice) still lets its consumer run once it has a
 * backlog: the consumer has taken some before the producer's loop ends.
 */
static void penalty_root(void *arg)
{
	uint64_t v, stop = UINT64_MAX;
	int got_in_loop;
	(void)arg;
	atomic_store(&g_got, 0);
	HARNESS_EQ(smarm_chan_alloc(&g_ch[0], sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, consume, NULL, NULL), 0);
	for (v = 0; v < 5000; v++)
		HARNESS_EQ(smarm_chan_send(g_ch[0], &v), 0);
	got_in_loop = atomic_load(&g_got);
	HARNESS_CHECK(got_in_loop > 0);
	HARNESS_EQ(smarm_chan_send(g_ch[0], &stop), 0);
	while (atomic_load(&g_got) < 5000)
		smarm_actor_sleep(MS(1));
	smarm_chan_receiver_free(g_ch[0]);
	smarm_chan_sender_free(g_ch[0]);
}

START_TEST(test_mbox_send_penalty_lets_the_consumer_run)
{
	ck_assert_int_eq(harness_run(1, penalty_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---- a receiver stopped after a hand-off (chan.c INV-11) ---- */

static _Atomic int g_freed;
static _Atomic int g_took;

static void count_free(void *elem)
{
	(void)elem;
	atomic_fetch_add(&g_freed, 1);
}

static void take_one(void *arg)
{
	uint64_t v;
	if (smarm_chan_recv(arg, &v) == 0)
		atomic_fetch_add(&g_took, 1);
}

/*
 * One worker: the receiver parks in recv, a send hands it an element
 * and wakes it, and a stop ends it before it runs again. On a band its
 * only receiver is the one ending: the element is destroyed then (none
 * queued). On a plain channel it goes back to the front for another
 * receiver, and is destroyed only when the channel goes.
 */
static void handed_case(bool band)
{
	struct smarm__mbox mb;
	smarm_chan_t *ch;
	smarm_pid_t pid;
	uint64_t v = 7;
	size_t len = 99;
	atomic_store(&g_freed, 0);
	atomic_store(&g_took, 0);
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof v, count_free), 0);
	smarm__mbox_init(&mb);
	if (band)
		HARNESS_EQ(smarm__mbox_attach(&mb, 0, ch), 0);
	HARNESS_EQ(smarm_actor_spawn(&pid, take_one, ch, NULL), 0);
	smarm_actor_sleep(MS(5));		/* it parks in its recv */
	HARNESS_EQ(smarm_chan_send(ch, &v), 0); /* handed over */
	HARNESS_EQ(smarm_actor_stop(pid), 0);
	HARNESS_EQ(smarm_actor_join(pid, NULL, NULL), 0);
	HARNESS_EQ(atomic_load(&g_took), 0);
	HARNESS_EQ(smarm_chan_len(ch, &len), 0);
	HARNESS_EQ(len, band ? 0 : 1);
	HARNESS_EQ(atomic_load(&g_freed), band ? 1 : 0);
	smarm__mbox_detach(&mb);
	smarm_chan_receiver_free(ch);
	smarm_chan_sender_free(ch);
	HARNESS_EQ(atomic_load(&g_freed), 1);
}

static void handed_root(void *arg)
{
	(void)arg;
	handed_case(true);
	handed_case(false);
}

START_TEST(test_mbox_stopped_owner_destroys_what_it_was_handed)
{
	ck_assert_int_eq(harness_run(1, handed_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_mbox_suite(void)
{
	Suite *s = suite_create("mbox");
	TCase *tc = tcase_create("mbox");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_mbox_bands_are_taken_highest_first);
	tcase_add_test(tc, test_mbox_no_wake_is_lost);
	tcase_add_test(tc, test_mbox_chan_limit_refuses_with_efull);
	tcase_add_test(tc, test_mbox_send_penalty_lets_the_consumer_run);
	tcase_add_test(tc, test_mbox_stopped_owner_destroys_what_it_was_handed);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(mbox)
