/* SPDX-License-Identifier: MIT */
/*
 * test_park_release.c - SMARM_OPT_STACK_RELEASE: an actor that opted in
 * and waits in a channel receive has its live stack bytes copied out and
 * its stack pages given back, and resumes with every byte as it left
 * it (core/parkstk.c). Its state survives; an element sent to it while
 * its stack is out (a direct hand-off, several receivers queued on one
 * channel, opted in or not) reaches it; a timeout and a stop resume it;
 * wakes racing releases on 4 workers lose nothing; a dense neighbour
 * switches out without a false overflow; an actor that did not opt in
 * is never released; the resident memory of parked actors drops.
 * Dense and guarded stacks alike (loop index where it matters).
 */
#include "harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const int pr_modes[] = { SMARM_STACK_DENSE, SMARM_STACK_GUARDED };

/* Spawn fn(arg) opted in (rel) or not, with stack mode mode. */
static smarm_pid_t pr_spawn(smarm_actor_cb fn, void *arg, int rel, int mode)
{
	smarm_spawn_opts_t *o = NULL;
	smarm_pid_t pid;
	HARNESS_EQ(smarm_spawn_opts_alloc(&o), 0);
	HARNESS_EQ(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RELEASE, rel),
		   0);
	HARNESS_EQ(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_MODE, mode), 0);
	HARNESS_EQ(smarm_actor_spawn(&pid, fn, arg, o), 0);
	smarm_spawn_opts_free(o);
	return pid;
}

/* ------------------------------------------------- state survives */

enum { PR_N = 16 };

struct pr_state {
	smarm_chan_t *ch[PR_N];
	atomic_int parked;
	int64_t got[PR_N];
	uint64_t sum[PR_N]; /* of the frames' locals, read after */
};

/* Frames with locals all the way down: the receive lies among them. */
static __attribute__((noinline)) uint64_t pr_deep(smarm_chan_t *ch, int depth,
						  int64_t *got)
{
	volatile uint64_t mark[8];
	uint64_t sum = 0;
	for (int i = 0; i < 8; i++)
		mark[i] = 0x9e3779b97f4a7c15ull * (uint64_t)(depth * 8 + i + 1);
	if (depth > 0)
		sum = pr_deep(ch, depth - 1, got);
	else if (smarm_chan_recv(ch, got) != 0)
		*got = -2;
	for (int i = 0; i < 8; i++)
		sum += mark[i] == 0x9e3779b97f4a7c15ull *
					       (uint64_t)(depth * 8 + i + 1)
			       ? 1
			       : 1000;
	return sum;
}

struct pr_rx {
	struct pr_state *st;
	int i;
};

static void pr_receiver(void *arg)
{
	struct pr_rx *r = arg;
	char big[3000]; /* frames across a page boundary */
	memset(big, 0x5a, sizeof big);
	atomic_fetch_add(&r->st->parked, 1);
	r->st->sum[r->i] = pr_deep(r->st->ch[r->i], 10, &r->st->got[r->i]);
	for (size_t k = 0; k < sizeof big; k++)
		if (big[k] != 0x5a)
			r->st->sum[r->i] += 1000000;
	free(r);
}

static int pr_mode; /* the loop's stack mode (CK_FORK: per test) */

/*
 * PR_N opted-in receivers park, each on its channel, 11 frames deep;
 * their stacks are given back (the stat says so); then each is sent
 * its index: a hand-off into its room. Each wakes with its stack intact
 * and its element, and the stat says none is out any more.
 */
static void pr_state_root(void *arg)
{
	struct pr_state *st = arg;
	smarm_pid_t pids[PR_N];
	for (int i = 0; i < PR_N; i++) {
		struct pr_rx *r = malloc(sizeof *r);
		HARNESS_CHECK(r != NULL);
		r->st = st;
		r->i = i;
		HARNESS_EQ(smarm_chan_alloc(&st->ch[i], sizeof(int64_t), NULL),
			   0);
		pids[i] = pr_spawn(pr_receiver, r, 1, pr_mode);
	}
	HARNESS_CHECK(harness_await_stat_to(
		smarm_node_current(), SMARM_STAT_STACKS_RELEASED, PR_N, true));
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_STACKS_RELEASED), PR_N);
	HARNESS_CHECK(harness_actor_stat(SMARM_STAT_STACK_RELEASES) >= PR_N);
	for (int64_t i = 0; i < PR_N; i++)
		HARNESS_EQ(smarm_chan_send(st->ch[i], &i), 0);
	for (int i = 0; i < PR_N; i++) {
		int how = -1;
		HARNESS_EQ(smarm_actor_join(pids[i], &how, NULL), 0);
		HARNESS_EQ(how, SMARM_EXIT_NORMAL);
		HARNESS_EQ(st->got[i], i);
		HARNESS_EQ(st->sum[i], 11 * 8);
		harness_chan_drop(st->ch[i]);
	}
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_STACKS_RELEASED), 0);
}

START_TEST(test_park_release_state_survives)
{
	struct pr_state st;
	memset(&st, 0, sizeof st);
	pr_mode = pr_modes[_i];
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, pr_state_root, &st), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* The same with the release left to the monitor's sweep (10 ms). */
START_TEST(test_park_release_state_survives_swept)
{
	struct pr_state st;
	memset(&st, 0, sizeof st);
	pr_mode = pr_modes[_i];
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(2, SMARM_OPT_STACK_RELEASE_NS, MS(10),
					 pr_state_root, &st, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------- many receivers, one channel */

enum { PR_Q = 12 };

struct pr_one {
	smarm_chan_t *ch;
	atomic_int parked;
	int64_t got[PR_Q];
	uint64_t local[PR_Q];
};

struct pr_one_rx {
	struct pr_one *o;
	int i;
};

static void pr_one_receiver(void *arg)
{
	struct pr_one_rx *r = arg;
	volatile uint64_t local = 0x1234567890abcdefull ^ (uint64_t)r->i;
	int64_t v = -1;
	atomic_fetch_add(&r->o->parked, 1);
	if (smarm_chan_recv(r->o->ch, &v) != 0)
		v = -2;
	r->o->got[r->i] = v;
	r->o->local[r->i] = local ^ (uint64_t)r->i;
	free(r);
}

/*
 * PR_Q receivers queue on one channel, every other one opted in (the
 * FIFO links records on stacks and in rooms); once the opted-in ones
 * are out, a plain thread's sends and the root's hand each one element.
 */
struct pr_sender {
	smarm_chan_t *ch;
	int64_t from, to;
};

static void *pr_thread_send(void *arg)
{
	struct pr_sender *s = arg;
	for (int64_t v = s->from; v <= s->to; v++)
		HARNESS_EQ(smarm_chan_send(s->ch, &v), 0);
	return NULL;
}

static void pr_one_root(void *arg)
{
	struct pr_one *o = arg;
	smarm_pid_t pids[PR_Q];
	struct pr_sender snd;
	pthread_t t;
	int64_t sum = 0;
	HARNESS_EQ(smarm_chan_alloc(&o->ch, sizeof(int64_t), NULL), 0);
	for (int i = 0; i < PR_Q; i++) {
		struct pr_one_rx *r = malloc(sizeof *r);
		HARNESS_CHECK(r != NULL);
		r->o = o;
		r->i = i;
		pids[i] = pr_spawn(pr_one_receiver, r, i % 2, pr_mode);
		/* In order: each queues behind the one before. */
		while (atomic_load(&o->parked) <= i)
			smarm_actor_sleep(MS(1));
		smarm_actor_sleep(MS(2));
	}
	HARNESS_CHECK(harness_await_stat_to(smarm_node_current(),
					    SMARM_STAT_STACKS_RELEASED,
					    PR_Q / 2, true));
	snd.ch = o->ch;
	snd.from = 1;
	snd.to = PR_Q / 2;
	HARNESS_EQ(pthread_create(&t, NULL, pr_thread_send, &snd), 0);
	for (int64_t v = PR_Q / 2 + 1; v <= PR_Q; v++)
		HARNESS_EQ(smarm_chan_send(o->ch, &v), 0);
	pthread_join(t, NULL);
	for (int i = 0; i < PR_Q; i++) {
		int how = -1;
		HARNESS_EQ(smarm_actor_join(pids[i], &how, NULL), 0);
		HARNESS_EQ(how, SMARM_EXIT_NORMAL);
		HARNESS_CHECK(o->got[i] >= 1 && o->got[i] <= PR_Q);
		HARNESS_EQ(o->local[i], 0x1234567890abcdefull);
		sum += o->got[i];
	}
	HARNESS_EQ(sum, PR_Q * (PR_Q + 1) / 2);
	harness_chan_drop(o->ch);
}

START_TEST(test_park_release_one_channel_mixed)
{
	struct pr_one o;
	memset(&o, 0, sizeof o);
	pr_mode = pr_modes[_i];
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, pr_one_root, &o), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ----------------------------------------------- timeout and stop */

static atomic_int pr_tmo_rc;

static void pr_timed(void *arg)
{
	smarm_chan_t *ch = arg;
	volatile uint64_t local = 0xfeedfacecafebeefull;
	int64_t v;
	int rc = smarm_chan_recv_timeout(ch, &v, MS(200));
	atomic_store(&pr_tmo_rc,
		     rc == SMARM_ETIMEDOUT && local == 0xfeedfacecafebeefull
			     ? 1
			     : -1);
}

static atomic_int pr_cleaned;

static void pr_cleanup(void *arg)
{
	volatile uint64_t *local = arg;
	atomic_store(&pr_cleaned, *local == 0x600dbeefull ? 1 : -1);
}

static void pr_stopped(void *arg)
{
	smarm_chan_t *ch = arg;
	volatile uint64_t local = 0x600dbeefull;
	int64_t v;
	smarm_cleanup_push(pr_cleanup, (void *)&local);
	smarm_chan_recv(ch, &v); /* stopped here, released */
	atomic_store(&pr_cleaned, -2);
}

/* A released receiver's timeout resumes it; so does a stop, and its
 * cleanup handler reads its stack. */
static void pr_wake_root(void *arg)
{
	smarm_chan_t *ch = NULL, *ch2 = NULL;
	smarm_pid_t a, b;
	int how = -1;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&ch2, sizeof(int64_t), NULL), 0);
	a = pr_spawn(pr_timed, ch, 1, pr_mode);
	b = pr_spawn(pr_stopped, ch2, 1, pr_mode);
	HARNESS_CHECK(harness_await_stat_to(
		smarm_node_current(), SMARM_STAT_STACKS_RELEASED, 2, true));
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(atomic_load(&pr_tmo_rc), 1);
	HARNESS_CHECK(harness_await_stat_to(
		smarm_node_current(), SMARM_STAT_STACK_RELEASES, 2, true));
	HARNESS_EQ(smarm_actor_stop(b), 0);
	HARNESS_EQ(smarm_actor_join(b, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_STOPPED);
	HARNESS_EQ(atomic_load(&pr_cleaned), 1);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_STACKS_RELEASED), 0);
	harness_chan_drop(ch);
	harness_chan_drop(ch2);
}

START_TEST(test_park_release_timeout_and_stop_resume)
{
	pr_mode = pr_modes[_i];
	atomic_store(&pr_tmo_rc, 0);
	atomic_store(&pr_cleaned, 0);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, pr_wake_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------- wakes racing releases */

enum { PR_PAIRS = 24, PR_ROUNDS = 400 };

struct pr_pair {
	smarm_chan_t *ping, *pong;
	atomic_long *bad;
};

/* Echo each element back, plus its own stack's checksum. */
static void pr_echo(void *arg)
{
	struct pr_pair *p = arg;
	volatile uint64_t local[16];
	for (int i = 0; i < 16; i++)
		local[i] = (uint64_t)(uintptr_t)p * (uint64_t)(i + 3);
	for (;;) {
		int64_t v;
		if (smarm_chan_recv(p->ping, &v) != 0)
			break;
		for (int i = 0; i < 16; i++)
			if (local[i] !=
			    (uint64_t)(uintptr_t)p * (uint64_t)(i + 3))
				atomic_fetch_add(p->bad, 1);
		v += 1;
		if (smarm_chan_send(p->pong, &v) != 0)
			break;
	}
}

static void pr_driver(void *arg)
{
	struct pr_pair *p = arg;
	volatile uint64_t local = 0xdeadc0de ^ (uint64_t)(uintptr_t)p;
	for (int64_t r = 0; r < PR_ROUNDS; r++) {
		int64_t v = r * 2, back = -1;
		HARNESS_EQ(smarm_chan_send(p->ping, &v), 0);
		HARNESS_EQ(smarm_chan_recv(p->pong, &back), 0);
		if (back != v + 1 ||
		    local != (0xdeadc0de ^ (uint64_t)(uintptr_t)p))
			atomic_fetch_add(p->bad, 1);
		if (r % 64 == 0)
			smarm_actor_sleep(r % 128 == 0 ? MS(1) : 0);
		if (r == PR_ROUNDS / 2) /* the echo parks past a sweep */
			smarm_actor_sleep(MS(50));
	}
	smarm_chan_sender_free(p->ping); /* the echo's recv: ECLOSED */
}

/*
 * PR_PAIRS driver/echo pairs, all opted in, on 4 workers: every receive
 * parks and (threshold 0) gives its stack back at once, or (the loop's
 * odd runs, 1 ms) is swept by the monitor while sends race it. Nothing
 * is lost, every stack byte survives.
 */
static void pr_race_root(void *arg)
{
	struct pr_pair pairs[PR_PAIRS];
	smarm_pid_t pids[2 * PR_PAIRS];
	atomic_long bad = 0;
	(void)arg;
	for (int i = 0; i < PR_PAIRS; i++) {
		pairs[i].bad = &bad;
		HARNESS_EQ(
			smarm_chan_alloc(&pairs[i].ping, sizeof(int64_t), NULL),
			0);
		HARNESS_EQ(
			smarm_chan_alloc(&pairs[i].pong, sizeof(int64_t), NULL),
			0);
		pids[2 * i] = pr_spawn(pr_echo, &pairs[i], 1, pr_modes[i % 2]);
		pids[2 * i + 1] =
			pr_spawn(pr_driver, &pairs[i], 1, pr_modes[i % 2]);
	}
	for (int i = 0; i < 2 * PR_PAIRS; i++) {
		int how = -1;
		HARNESS_EQ(smarm_actor_join(pids[i], &how, NULL), 0);
		HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	}
	HARNESS_EQ(atomic_load(&bad), 0);
	HARNESS_CHECK(harness_actor_stat(SMARM_STAT_STACK_RELEASES) > 0);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_STACKS_RELEASED), 0);
	for (int i = 0; i < PR_PAIRS; i++) {
		smarm_chan_receiver_free(pairs[i].ping);
		harness_chan_drop(pairs[i].pong);
	}
}

START_TEST(test_park_release_wakes_race_releases)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(4, SMARM_OPT_STACK_RELEASE_NS,
					 _i % 2 ? MS(1) : 0, pr_race_root, NULL,
					 NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------ dense neighbours */

/* Parks in a receive on arg until sent an element. */
static void pr_parker(void *arg)
{
	int64_t v;
	smarm_chan_recv(arg, &v);
}

static atomic_int pr_spin_stop;

/* Switches out over and over (each time its canary is checked). */
static void pr_yielder(void *arg)
{
	volatile char frame[2048];
	(void)arg;
	memset((char *)frame, 1, sizeof frame);
	while (!atomic_load(&pr_spin_stop))
		smarm_actor_yield();
}

/*
 * Dense actors spawned one after another take neighbouring stacks;
 * every other one parks and is released while its neighbours keep
 * switching out (each switch-out checks the canary at the bottom of the
 * stack: none may read as an overflow), opted in or not.
 */
static void pr_dense_root(void *arg)
{
	enum { K = 16 };
	smarm_chan_t *ch[K];
	smarm_pid_t pids[K];
	(void)arg;
	atomic_store(&pr_spin_stop, 0);
	for (int i = 0; i < K; i++) {
		HARNESS_EQ(smarm_chan_alloc(&ch[i], sizeof(int64_t), NULL), 0);
		if (i % 2 == 0)
			pids[i] = pr_spawn(pr_parker, ch[i], 1,
					   SMARM_STACK_DENSE);
		else
			pids[i] = pr_spawn(pr_yielder, NULL, (i / 2) % 2,
					   SMARM_STACK_DENSE);
	}
	HARNESS_CHECK(harness_await_stat_to(
		smarm_node_current(), SMARM_STAT_STACKS_RELEASED, K / 2, true));
	smarm_actor_sleep(MS(50)); /* the yielders switch out meanwhile */
	atomic_store(&pr_spin_stop, 1);
	for (int i = 0; i < K; i++) {
		int how = -1;
		if (i % 2 == 0) {
			int64_t v = 7;
			HARNESS_EQ(smarm_chan_send(ch[i], &v), 0);
		}
		HARNESS_EQ(smarm_actor_join(pids[i], &how, NULL), 0);
		HARNESS_EQ(how, SMARM_EXIT_NORMAL);
		harness_chan_drop(ch[i]);
	}
}

START_TEST(test_park_release_dense_neighbours_no_false_abort)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, pr_dense_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ----------------------------------------------------- not opted in */

static atomic_int pr_plain_got;

static void pr_plain(void *arg)
{
	int64_t v = -1;
	atomic_fetch_add(&pr_plain_got, 0);
	if (smarm_chan_recv(arg, &v) == 0 && v == 5)
		atomic_fetch_add(&pr_plain_got, 1);
}

/* The node's default (off), and the spawn option set to 0: a receive
 * never gives its stack back. */
static void pr_plain_root(void *arg)
{
	smarm_chan_t *ch = NULL;
	smarm_pid_t a, b;
	int64_t v = 5;
	int how;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&a, pr_plain, ch, NULL), 0);
	b = pr_spawn(pr_plain, ch, 0, SMARM_STACK_AUTO);
	smarm_actor_sleep(MS(100));
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_STACK_RELEASES), 0);
	HARNESS_EQ(smarm_chan_send(ch, &v), 0);
	HARNESS_EQ(smarm_chan_send(ch, &v), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, &how, NULL), 0);
	HARNESS_EQ(atomic_load(&pr_plain_got), 2);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_STACK_RELEASES), 0);
	harness_chan_drop(ch);
}

START_TEST(test_park_release_not_opted_in_never_released)
{
	atomic_store(&pr_plain_got, 0);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, pr_plain_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* Node default on: a spawn without options is released. */
static void pr_node_root(void *arg)
{
	smarm_chan_t *ch = NULL;
	smarm_pid_t a;
	int64_t v = 5;
	int how;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&a, pr_plain, ch, NULL), 0);
	HARNESS_CHECK(harness_await_stat_to(
		smarm_node_current(), SMARM_STAT_STACKS_RELEASED, 1, true));
	HARNESS_EQ(smarm_chan_send(ch, &v), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(atomic_load(&pr_plain_got), 1);
	harness_chan_drop(ch);
}

START_TEST(test_park_release_node_default)
{
	atomic_store(&pr_plain_got, 0);
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(2, SMARM_OPT_STACK_RELEASE, 1,
					 pr_node_root, NULL, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* --------------------------------------------------- resident bytes */

static long pr_rss(void)
{
	long size = 0, res = -1;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &res) != 2)
		res = -1;
	fclose(f);
	return res < 0 ? -1 : res * sysconf(_SC_PAGESIZE);
}

enum { PR_RSS_N = 3000 };

static atomic_long pr_rss_parked;

static void pr_rss_body(void *arg)
{
	int64_t v;
	atomic_fetch_add(&pr_rss_parked, 1);
	smarm_chan_recv(arg, &v);
}

/* Resident growth per parked actor, opted in (rel) or not. */
static long pr_rss_per(int rel, smarm_chan_t **ch)
{
	smarm_pid_t *pids = malloc(PR_RSS_N * sizeof *pids);
	long before, after;
	int64_t zero = 0;
	HARNESS_CHECK(pids != NULL);
	atomic_store(&pr_rss_parked, 0);
	before = pr_rss();
	for (int i = 0; i < PR_RSS_N; i++)
		pids[i] = pr_spawn(pr_rss_body, ch[i], rel, SMARM_STACK_DENSE);
	while (atomic_load(&pr_rss_parked) < PR_RSS_N)
		smarm_actor_sleep(MS(1));
	if (rel)
		HARNESS_CHECK(harness_await_stat_to(smarm_node_current(),
						    SMARM_STAT_STACKS_RELEASED,
						    PR_RSS_N, true));
	smarm_actor_sleep(MS(20));
	after = pr_rss();
	for (int i = 0; i < PR_RSS_N; i++) {
		HARNESS_EQ(smarm_chan_send(ch[i], &zero), 0);
		HARNESS_EQ(smarm_actor_join(pids[i], NULL, NULL), 0);
	}
	free(pids);
	return (after - before) / PR_RSS_N;
}

/*
 * The same number of dense actors parked in a receive, first not opted
 * in, then opted in: the second costs at least 2 KiB less resident
 * memory each (the page of stack each keeps, less the image).
 */
static void pr_rss_root(void *arg)
{
	smarm_chan_t **ch = calloc(PR_RSS_N, sizeof *ch);
	long plain, rel;
	(void)arg;
	HARNESS_CHECK(ch != NULL);
	for (int i = 0; i < PR_RSS_N; i++)
		HARNESS_EQ(smarm_chan_alloc(&ch[i], sizeof(int64_t), NULL), 0);
	plain = pr_rss_per(0, ch);
	rel = pr_rss_per(1, ch);
	fprintf(stderr,
		"park_release: %ld B resident per parked actor, "
		"%ld B given back\n",
		plain, rel);
#ifndef __SANITIZE_ADDRESS__
	/* Under ASan the shadow and the allocator's quarantine swamp it. */
	HARNESS_CHECK(plain >= 3000);
	HARNESS_CHECK(rel + 2048 <= plain);
#endif
	for (int i = 0; i < PR_RSS_N; i++)
		harness_chan_drop(ch[i]);
	free(ch);
}

START_TEST(test_park_release_resident_memory_drops)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, pr_rss_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------------ errors */

START_TEST(test_park_release_bad_values)
{
	smarm_spawn_opts_t *o = NULL;
	smarm_config_t *cfg = NULL;
	int64_t v = -1;
	ck_assert_int_eq(smarm_spawn_opts_alloc(&o), 0);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RELEASE, 2),
		SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RELEASE, -1),
		SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(NULL, SMARM_OPT_STACK_RELEASE, 1),
		SMARM_EINVAL);
	/* A node option only. */
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RELEASE_NS, 0),
		SMARM_EINVAL);
	smarm_spawn_opts_free(o);
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_STACK_RELEASE_NS, -1),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_STACK_RELEASE, 2),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_STACK_RELEASE, &v),
			 0);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(
		smarm_config_get_int(cfg, SMARM_OPT_STACK_RELEASE_NS, &v), 0);
	ck_assert_int_eq(v, 0);
	smarm_config_free(cfg);
	ck_assert_str_eq(smarm_opt_name(SMARM_OPT_STACK_RELEASE),
			 "SMARM_OPT_STACK_RELEASE");
	ck_assert_str_eq(smarm_stat_name(SMARM_STAT_STACKS_RELEASED),
			 "SMARM_STAT_STACKS_RELEASED");
}
END_TEST

Suite *smarm_test_park_release_suite(void);
Suite *smarm_test_park_release_suite(void)
{
	Suite *s = suite_create("park_release");
	TCase *tc = tcase_create("release");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_park_release_state_survives, 0, 2);
	tcase_add_loop_test(tc, test_park_release_state_survives_swept, 0, 2);
	tcase_add_loop_test(tc, test_park_release_one_channel_mixed, 0, 2);
	tcase_add_loop_test(tc, test_park_release_timeout_and_stop_resume, 0,
			    2);
	tcase_add_loop_test(tc, test_park_release_wakes_race_releases, 0, 12);
	tcase_add_test(tc, test_park_release_dense_neighbours_no_false_abort);
	tcase_add_test(tc, test_park_release_not_opted_in_never_released);
	tcase_add_test(tc, test_park_release_node_default);
	tcase_add_test(tc, test_park_release_resident_memory_drops);
	tcase_add_test(tc, test_park_release_bad_values);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(park_release)
