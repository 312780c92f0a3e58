/* SPDX-License-Identifier: MIT */
/*
 * test_wake_slot.c - the wake slot (SMARM_OPT_WAKE_SLOT, smarm RFC 005,
 * spec/core.md §15 and §23 tests/wake_slot.rs): ping-pong is correct with
 * the slot on, messaging hits the slot, the slot off (or spawn/join
 * alone) never does, a second wake displaces the first (to the front of
 * the worker's deque, an idle worker woken to steal it), an entry left
 * standing behind a busy actor is taken by the
 * monitor's scan and run by an idle worker, and the counters count one
 * run. Also the option's range.
 */
#include "harness.h"

#include <pthread.h>

/* Open a node with the given worker count and wake-slot setting. */
static smarm_node_t *slot_open(int workers, int slot)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, workers),
			 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WAKE_SLOT, slot),
			 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	return node;
}

/* Run root(arg) on node; assert a normal end with no actor left. */
static void slot_run(smarm_node_t *node, smarm_actor_cb root, void *arg)
{
	int how = -1;
	ck_assert_int_eq(smarm_node_run(node, root, arg, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
}

/* ------------------------------------------------------------ ping-pong */

#define PP_ROUNDS 20000

struct pp {
	smarm_chan_t *ping;
	smarm_chan_t *pong;
	uint64_t echoed; /* ponger only */
	uint64_t wrong;	 /* pinger only: mismatched echoes */
	int errors;	 /* root only, after the joins */
};

static void pp_ponger(void *arg)
{
	struct pp *p = arg;
	uint64_t v;
	while (smarm_chan_recv(p->ping, &v) == 0) {
		if (smarm_chan_send(p->pong, &v) != 0)
			return;
		p->echoed++;
	}
}

static void pp_pinger(void *arg)
{
	struct pp *p = arg;
	for (uint64_t i = 0; i < PP_ROUNDS; i++) {
		uint64_t v = UINT64_MAX;
		if (smarm_chan_send(p->ping, &i) != 0 ||
		    smarm_chan_recv(p->pong, &v) != 0 || v != i)
			p->wrong++;
	}
}

static void pp_root(void *arg)
{
	struct pp *p = arg;
	smarm_pid_t a, b;
	int ha = -1, hb = -1;
	if (smarm_chan_alloc(&p->ping, sizeof(uint64_t), NULL) != 0 ||
	    smarm_chan_alloc(&p->pong, sizeof(uint64_t), NULL) != 0 ||
	    smarm_actor_spawn(&a, pp_ponger, p, NULL) != 0 ||
	    smarm_actor_spawn(&b, pp_pinger, p, NULL) != 0) {
		p->errors++;
		return;
	}
	if (smarm_actor_join(b, &hb, NULL) != 0 || hb != SMARM_EXIT_NORMAL)
		p->errors++;
	smarm_chan_sender_free(p->ping); /* closes ping: the ponger ends */
	if (smarm_actor_join(a, &ha, NULL) != 0 || ha != SMARM_EXIT_NORMAL)
		p->errors++;
	smarm_chan_receiver_free(p->ping);
	harness_chan_drop(p->pong);
}

/* Loop: _i 0 one worker, 1 four workers (oversubscribed). */
START_TEST(test_wake_slot_ping_pong_on_is_correct)
{
	struct pp p = { 0 };
	smarm_node_t *node = slot_open(_i ? 4 : 1, 1);
	slot_run(node, pp_root, &p);
	ck_assert_int_eq(p.errors, 0);
	ck_assert_uint_eq(p.wrong, 0);
	ck_assert_uint_eq(p.echoed, PP_ROUNDS);
	/* Each round trip wakes a parked actor from actor context. */
	ck_assert_int_gt(harness_stat(node, SMARM_STAT_WAKE_SLOT_HITS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* Loop: _i 0 one worker, 1 four workers. */
START_TEST(test_wake_slot_off_gives_no_hits)
{
	struct pp p = { 0 };
	smarm_node_t *node = slot_open(_i ? 4 : 1, 0);
	slot_run(node, pp_root, &p);
	ck_assert_int_eq(p.errors, 0);
	ck_assert_uint_eq(p.wrong, 0);
	ck_assert_uint_eq(p.echoed, PP_ROUNDS);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_WAKE_SLOT_HITS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_WAKE_SLOT_DISPLACEMENTS),
			 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ------------------------------------------------------------ spawn/join */

#define SJ_N 2000

static void sj_child(void *arg)
{
	(void)arg;
}

static void sj_root(void *arg)
{
	int *errors = arg;
	for (int i = 0; i < SJ_N; i++) {
		smarm_pid_t pid;
		int how = -1;
		if (smarm_actor_spawn(&pid, sj_child, NULL, NULL) != 0 ||
		    smarm_actor_join(pid, &how, NULL) != 0 ||
		    how != SMARM_EXIT_NORMAL)
			(*errors)++;
	}
}

/*
 * Spawns go to the shared queue and a joiner is woken by its child's
 * finalize (scheduler context): no wake-slot traffic at all.
 * Loop: _i 0 one worker, 1 four workers.
 */
START_TEST(test_wake_slot_spawn_join_gives_no_hits)
{
	int errors = 0;
	smarm_node_t *node = slot_open(_i ? 4 : 1, 1);
	slot_run(node, sj_root, &errors);
	ck_assert_int_eq(errors, 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_WAKE_SLOT_HITS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_WAKE_SLOT_DISPLACEMENTS),
			 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ---------------------------------------------------------- displacement */

struct disp {
	smarm_chan_t *ch[2];
	int got[2]; /* receiver i's own field */
	int errors; /* root only */
};

struct disp_rx {
	struct disp *d;
	int i;
};

static void disp_receiver(void *arg)
{
	struct disp_rx *rx = arg;
	int v = 0;
	if (smarm_chan_recv(rx->d->ch[rx->i], &v) == 0)
		rx->d->got[rx->i] = v;
}

/*
 * One worker, so the order is fixed: both receivers park in recv before
 * the root sends to each back to back. The first send fills the slot,
 * the second displaces that occupant to the shared queue; when the root
 * parks in join, the slot's actor runs first.
 */
static void disp_root(void *arg)
{
	struct disp *d = arg;
	struct disp_rx rx[2] = { { d, 0 }, { d, 1 } };
	smarm_pid_t pid[2];
	for (int i = 0; i < 2; i++)
		if (smarm_chan_alloc(&d->ch[i], sizeof(int), NULL) != 0 ||
		    smarm_actor_spawn(&pid[i], disp_receiver, &rx[i], NULL) !=
			    0) {
			d->errors++;
			return;
		}
	smarm_actor_yield(); /* both run and park in recv */
	for (int i = 0; i < 2; i++) {
		int v = 10 + i;
		if (smarm_chan_send(d->ch[i], &v) != 0)
			d->errors++;
	}
	for (int i = 0; i < 2; i++) {
		int how = -1;
		if (smarm_actor_join(pid[i], &how, NULL) != 0 ||
		    how != SMARM_EXIT_NORMAL)
			d->errors++;
		harness_chan_drop(d->ch[i]);
	}
}

START_TEST(test_wake_slot_second_wake_displaces_first)
{
	struct disp d = { 0 };
	smarm_node_t *node = slot_open(1, 1);
	slot_run(node, disp_root, &d);
	ck_assert_int_eq(d.errors, 0);
	ck_assert_int_eq(d.got[0], 10);
	ck_assert_int_eq(d.got[1], 11);
	ck_assert_int_ge(harness_stat(node, SMARM_STAT_WAKE_SLOT_DISPLACEMENTS),
			 1);
	ck_assert_int_ge(harness_stat(node, SMARM_STAT_WAKE_SLOT_HITS), 1);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ------------------------------------------------------------ stranded */

/*
 * The waker computes call-free (no safe point; its slice is 5 s) right
 * after it woke b into its worker's slot. The other worker idles, so the
 * monitor's scan takes the standing entry (the visitor side of membar.h's
 * handshake: the owner fills its slot with plain stores) and that worker
 * runs b, while the waker still computes. Without the scan b waits for
 * the waker's 2 s and then runs on the waker's thread.
 */
struct stranded {
	smarm_chan_t *ch;
	pthread_t waker, woken;
	_Atomic int ran;
	uint64_t waited; /* ns from the send until the waker saw b run */
};

static void stranded_woken(void *arg)
{
	struct stranded *st = arg;
	int v = 0;
	HARNESS_EQ(smarm_chan_recv(st->ch, &v), 0);
	st->woken = pthread_self();
	atomic_store(&st->ran, 1);
}

static void stranded_root(void *arg)
{
	struct stranded *st = arg;
	smarm_pid_t b;
	int v = 1;
	uint64_t t0;
	HARNESS_EQ(smarm_chan_alloc(&st->ch, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, stranded_woken, st, NULL), 0);
	HARNESS_EQ(smarm_actor_sleep(MS(50)), 0); /* b parks in its recv */
	st->waker = pthread_self();
	t0 = smarm_now_ns();
	HARNESS_EQ(smarm_chan_send(st->ch, &v), 0); /* b: this worker's slot */
	while (!atomic_load(&st->ran) && smarm_now_ns() - t0 < MS(2000))
		; /* call-free: only the scan can move b */
	st->waited = smarm_now_ns() - t0;
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	smarm_chan_sender_free(st->ch);
	smarm_chan_receiver_free(st->ch);
}

START_TEST(test_wake_slot_stranded_entry_runs_on_an_idle_worker)
{
	struct stranded st = { 0 };
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(2, SMARM_OPT_ASYNC_SLICE_NS,
					 (int64_t)MS(5000), stranded_root, &st,
					 NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&st.ran), 1);
	ck_assert_msg(!pthread_equal(st.waker, st.woken),
		      "b ran on the waker's worker (waited %.1f ms)",
		      st.waited / 1e6);
	/* Two scan periods are ~2 ms; generous for a loaded machine. */
	ck_assert_msg(st.waited < MS(1000) * harness_time_scale(),
		      "b waited %.1f ms", st.waited / 1e6);
}
END_TEST

/* ------------------------------------------------------- displaced */

/*
 * A displaced entry stays on its worker (the front of its deque), but a
 * worker that idles is woken to steal it: the root wakes b, then c,
 * which displaces b, and parks; c then computes call-free on that worker
 * (its slice is 5 s) until b has run. b must run meanwhile, on the
 * other worker. Without the wake the idle worker sleeps on, and b waits
 * the 2 s of c's loop in the deque behind it.
 */
struct displaced {
	smarm_chan_t *ch[2];
	pthread_t hog, woken;
	_Atomic int ran;
	uint64_t t0;	 /* when c was woken (the root's clock) */
	uint64_t waited; /* ns from then until c saw b run */
};

static void displaced_b(void *arg)
{
	struct displaced *d = arg;
	int v = 0;
	HARNESS_EQ(smarm_chan_recv(d->ch[0], &v), 0);
	d->woken = pthread_self();
	atomic_store(&d->ran, 1);
}

static void displaced_c(void *arg)
{
	struct displaced *d = arg;
	int v = 0;
	HARNESS_EQ(smarm_chan_recv(d->ch[1], &v), 0);
	d->hog = pthread_self();
	while (!atomic_load(&d->ran) && smarm_now_ns() - d->t0 < MS(2000))
		; /* call-free: the worker is taken */
	d->waited = smarm_now_ns() - d->t0;
}

static void displaced_root(void *arg)
{
	struct displaced *d = arg;
	smarm_pid_t b, c;
	int v = 1;
	for (int i = 0; i < 2; i++)
		HARNESS_EQ(smarm_chan_alloc(&d->ch[i], sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, displaced_b, d, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&c, displaced_c, d, NULL), 0);
	HARNESS_EQ(smarm_actor_sleep(MS(50)), 0); /* both park in recv */
	d->t0 = smarm_now_ns();
	while (smarm_now_ns() - d->t0 < MS(20))
		; /* call-free: the other worker, woken with us, parks again */
	HARNESS_EQ(smarm_chan_send(d->ch[0], &v), 0); /* b: our slot */
	d->t0 = smarm_now_ns();
	HARNESS_EQ(smarm_chan_send(d->ch[1], &v), 0);	/* c displaces b */
	HARNESS_EQ(smarm_actor_join(c, NULL, NULL), 0); /* c runs here */
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	for (int i = 0; i < 2; i++)
		harness_chan_drop(d->ch[i]);
}

START_TEST(test_wake_slot_displaced_entry_runs_on_an_idle_worker)
{
	struct displaced d = { 0 };
	smarm_node_t *node = NULL;
	smarm_config_t *cfg = NULL;
	/* No idle spin: the other worker sleeps, as it would after one. */
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_ASYNC_SLICE_NS,
					      (int64_t)MS(5000)),
			 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_IDLE_SPIN_NS, 0),
			 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	harness_checks_reset();
	slot_run(node, displaced_root, &d);
	ck_assert_int_eq(smarm_node_close(node), 0);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&d.ran), 1);
	/*
	 * b may also run first on the root's worker itself: when the root
	 * parks, a worker whose slot streak is spent takes its deque before
	 * its slot. Either way it must not wait behind c's loop.
	 */
	ck_assert_msg(d.waited < MS(1000) * harness_time_scale(),
		      "b waited %.1f ms (on c's worker: %d)", d.waited / 1e6,
		      pthread_equal(d.hog, d.woken) != 0);
}
END_TEST

/* -------------------------------------------------------------- counters */

/* A run with messaging, then one without: the second reads zero. */
START_TEST(test_wake_slot_counters_reset_per_run)
{
	struct pp p = { 0 };
	int errors = 0;
	smarm_node_t *node = slot_open(1, 1);
	slot_run(node, pp_root, &p);
	ck_assert_int_eq(p.errors, 0);
	ck_assert_int_gt(harness_stat(node, SMARM_STAT_WAKE_SLOT_HITS), 0);
	slot_run(node, sj_root, &errors);
	ck_assert_int_eq(errors, 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_WAKE_SLOT_HITS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_WAKE_SLOT_DISPLACEMENTS),
			 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

START_TEST(test_wake_slot_counters_zero_before_any_run)
{
	smarm_node_t *node = slot_open(2, 1);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_WAKE_SLOT_HITS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_WAKE_SLOT_DISPLACEMENTS),
			 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_IDLE_SPIN_HITS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_IDLE_PARKS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ---------------------------------------------------------------- option */

START_TEST(test_wake_slot_option_range_einval)
{
	smarm_config_t *cfg = NULL;
	int64_t v = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_WAKE_SLOT, &v), 0);
	ck_assert_int_eq(v, 1); /* default on */
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WAKE_SLOT, 2),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WAKE_SLOT, -1),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_WAKE_SLOT, &v), 0);
	ck_assert_int_eq(v, 1); /* unchanged by the failed sets */
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WAKE_SLOT, 0), 0);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_WAKE_SLOT, &v), 0);
	ck_assert_int_eq(v, 0);
	smarm_config_free(cfg);
}
END_TEST

Suite *smarm_test_wake_slot_suite(void)
{
	Suite *s = suite_create("wake_slot");
	TCase *tc = tcase_create("slot");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_wake_slot_ping_pong_on_is_correct, 0, 2);
	tcase_add_loop_test(tc, test_wake_slot_off_gives_no_hits, 0, 2);
	tcase_add_loop_test(tc, test_wake_slot_spawn_join_gives_no_hits, 0, 2);
	tcase_add_test(tc, test_wake_slot_second_wake_displaces_first);
	tcase_add_test(tc,
		       test_wake_slot_displaced_entry_runs_on_an_idle_worker);
	tcase_add_test(tc,
		       test_wake_slot_stranded_entry_runs_on_an_idle_worker);
	suite_add_tcase(s, tc);

	tc = tcase_create("counters");
	tcase_add_test(tc, test_wake_slot_counters_reset_per_run);
	tcase_add_test(tc, test_wake_slot_counters_zero_before_any_run);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_wake_slot_option_range_einval);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(wake_slot)
