/* SPDX-License-Identifier: MIT */
/*
 * test_hibernate.c - smarm_hibernate (as erlang:hibernate/3): a plain
 * actor waits on a channel without a stack and goes on at fn(arg) on a
 * fresh one. Its state (off the stack) survives any number of
 * hibernations; it wakes on an element, on the close, on a timed send;
 * a stop ends it with its monitors and links firing and its cleanup
 * handlers run; its stack really goes back (SMARM_STAT_STACKS_DENSE
 * counts attached dense stacks); misuse is refused. The concurrent
 * cases run on 4 workers (oversubscribed on small machines).
 */
#include "harness.h"

#include <stdlib.h>

/* ------------------------------------------------------------ counter */

/* A hibernating counter: its whole state is here, on the heap. */
struct hb_counter {
	smarm_chan_t *in;  /* int64 elements: added; the close: report */
	smarm_chan_t *out; /* the sum, once in is closed */
	int64_t sum;
	int64_t msgs;
	int64_t deepest; /* sp distance between resumes (a fresh frame) */
	uintptr_t first_sp;
};

static void hb_counter_step(void *arg)
{
	struct hb_counter *c = arg;
	int64_t v;
	volatile char probe = 0;
	uintptr_t sp = (uintptr_t)&probe;
	if (c->first_sp == 0)
		c->first_sp = sp;
	if ((int64_t)(c->first_sp - sp) > c->deepest)
		c->deepest = (int64_t)(c->first_sp - sp);
	for (;;) {
		int rc = smarm_chan_try_recv(c->in, &v);
		if (rc == SMARM_EAGAIN)
			break;
		if (rc != 0) { /* closed and drained */
			(void)smarm_chan_send(c->out, &c->sum);
			return; /* ends normally */
		}
		c->sum += v;
		c->msgs++;
	}
	/* Never returns on success. */
	(void)smarm_chan_send(c->out, &(int64_t){ smarm_hibernate(
					      c->in, hb_counter_step, c) });
}

static void hb_counter_body(void *arg)
{
	struct hb_counter *c = arg;
	HARNESS_EQ(smarm_hibernate(c->in, hb_counter_step, c), 0);
}

struct hb_state {
	int n;
	int64_t got;
	int64_t msgs;
	int64_t deepest;
	int64_t hibs;
};

static void hb_state_root(void *arg)
{
	struct hb_state *st = arg;
	struct hb_counter *c = calloc(1, sizeof *c);
	smarm_pid_t pid;
	int64_t want = 0;
	HARNESS_CHECK(c != NULL);
	HARNESS_EQ(smarm_chan_alloc(&c->in, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&c->out, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&pid, hb_counter_body, c, NULL), 0);
	for (int64_t i = 1; i <= st->n; i++) {
		HARNESS_EQ(smarm_chan_send(c->in, &i), 0);
		want += i;
		if (i % 7 == 0) /* let it hibernate in between */
			smarm_actor_sleep(US(100));
	}
	HARNESS_EQ(smarm_chan_sender_free(c->in), 0); /* the close wakes it */
	HARNESS_EQ(smarm_chan_recv_timeout(c->out, &st->got,
					   MS(5000) * harness_time_scale()),
		   0);
	HARNESS_EQ(st->got, want);
	HARNESS_EQ(smarm_actor_join(pid, NULL, NULL), 0);
	st->msgs = c->msgs;
	st->deepest = c->deepest;
	st->hibs = harness_stat(smarm_node_current(), SMARM_STAT_HIBERNATIONS);
	smarm_chan_receiver_free(c->in);
	harness_chan_drop(c->out);
	free(c);
}

/* State survives many hibernations; each resume is a fresh frame. */
START_TEST(test_state_survives)
{
	harness_checks_reset();
	struct hb_state st = { .n = 500 };
	ck_assert_int_eq(harness_run(1, hb_state_root, &st), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(st.msgs, 500);
	ck_assert_int_ge(st.hibs, 500 / 7);
	/* A fresh frame each time: no resume sits deeper than the first
	 * (a recursion would go down by a frame per message). */
	ck_assert_int_le(st.deepest, 256);
	harness_checks_assert();
}
END_TEST

START_TEST(test_state_survives_workers)
{
	harness_checks_reset();
	struct hb_state st = { .n = 3000 };
	ck_assert_int_eq(harness_run(4, hb_state_root, &st), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(st.msgs, 3000);
	harness_checks_assert();
}
END_TEST

/* -------------------------------------------------------- wake kinds */

struct hb_wake {
	smarm_chan_t *ch;
	smarm_chan_t *done; /* int: what the continuation saw */
};

static void hb_wake_cont(void *arg)
{
	struct hb_wake *w = arg;
	int64_t v = -1;
	int rc = smarm_chan_try_recv(w->ch, &v);
	int what = rc == 0 ? (int)v : rc;
	(void)smarm_chan_send(w->done, &what);
}

static void hb_wake_body(void *arg)
{
	struct hb_wake *w = arg;
	int rc = smarm_hibernate(w->ch, hb_wake_cont, w);
	(void)smarm_chan_send(w->done, &rc); /* only on an error */
}

/* kind 0: a send; 1: the close; 2: a timed send. */
static void hb_wake_root(void *arg)
{
	int kind = *(int *)arg;
	struct hb_wake w;
	smarm_pid_t pid;
	int64_t seven = 7;
	int what = 0;
	HARNESS_EQ(smarm_chan_alloc(&w.ch, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&w.done, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&pid, hb_wake_body, &w, NULL), 0);
	/* It hibernates (under load it may take a while to run). */
	HARNESS_CHECK(harness_await_stat(smarm_node_current(),
					 SMARM_STAT_HIBERNATIONS, 1));
	HARNESS_EQ(smarm_chan_try_recv(w.done, &what), SMARM_EAGAIN);
	if (kind == 0)
		HARNESS_EQ(smarm_chan_send(w.ch, &seven), 0);
	else if (kind == 1)
		HARNESS_EQ(smarm_chan_sender_free(w.ch), 0);
	else
		HARNESS_EQ(smarm_chan_send_after(w.ch, &seven, MS(20), NULL),
			   0);
	HARNESS_EQ(smarm_chan_recv_timeout(w.done, &what,
					   MS(5000) * harness_time_scale()),
		   0);
	HARNESS_EQ(what, kind == 1 ? SMARM_ECLOSED : 7);
	HARNESS_EQ(smarm_actor_join(pid, NULL, NULL), 0);
	if (kind != 1)
		smarm_chan_sender_free(w.ch);
	smarm_chan_receiver_free(w.ch);
	harness_chan_drop(w.done);
}

START_TEST(test_wake_on_send)
{
	harness_checks_reset();
	int kind = 0;
	ck_assert_int_eq(harness_run(2, hb_wake_root, &kind),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

START_TEST(test_wake_on_close)
{
	harness_checks_reset();
	int kind = 1;
	ck_assert_int_eq(harness_run(2, hb_wake_root, &kind),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

START_TEST(test_wake_on_timer)
{
	harness_checks_reset();
	int kind = 2;
	ck_assert_int_eq(harness_run(2, hb_wake_root, &kind),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* Ready at the call: fn runs at once (from a fresh stack). */
static void hb_ready_root(void *arg)
{
	(void)arg;
	struct hb_wake w;
	smarm_pid_t pid;
	int64_t five = 5;
	int what = 0;
	HARNESS_EQ(smarm_chan_alloc(&w.ch, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&w.done, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_chan_send(w.ch, &five), 0);
	HARNESS_EQ(smarm_actor_spawn(&pid, hb_wake_body, &w, NULL), 0);
	HARNESS_EQ(smarm_chan_recv_timeout(w.done, &what,
					   MS(5000) * harness_time_scale()),
		   0);
	HARNESS_EQ(what, 5);
	HARNESS_EQ(smarm_actor_join(pid, NULL, NULL), 0);
	harness_chan_drop(w.ch);
	harness_chan_drop(w.done);
}

START_TEST(test_ready_at_call)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, hb_ready_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------------------------------- the end */

static atomic_int hb_cleanups;

static void hb_cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&hb_cleanups, 1);
}

static void hb_never(void *arg)
{
	(void)arg;
	HARNESS_CHECK(!"a stopped hibernated actor went on");
}

static void hb_stop_body(void *arg)
{
	smarm_chan_t *ch = arg;
	HARNESS_EQ(smarm_cleanup_push(hb_cleanup, NULL), 0);
	HARNESS_EQ(smarm_hibernate(ch, hb_never, NULL), 0);
}

/* A stop (and a kill along a link) ends a hibernated actor: its
 * cleanup handler runs, its monitor's Down and its link's exit signal
 * come, and its registration on the channel is gone (the channel can
 * be freed, a send after it wakes nobody). */
static void hb_stop_root(void *arg)
{
	int by_exit = *(int *)arg;
	smarm_chan_t *ch, *sig = harness_sig_chan();
	smarm_pid_t pid;
	smarm_signal_t s;
	uint64_t ref;
	int64_t one = 1;
	atomic_store(&hb_cleanups, 0);
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_trap_exit(sig), 0);
	HARNESS_EQ(smarm_actor_spawn(&pid, hb_stop_body, ch, NULL), 0);
	HARNESS_EQ(smarm_actor_detach(pid), 0);
	HARNESS_EQ(smarm_monitor(pid, sig, &ref), 0);
	HARNESS_EQ(smarm_link(pid), 0);
	HARNESS_CHECK(harness_await_stat(smarm_node_current(),
					 SMARM_STAT_HIBERNATIONS, 1));
	HARNESS_CHECK(smarm_actor_is_alive(pid));
	if (by_exit)
		HARNESS_EQ(smarm_actor_send_exit(pid, SMARM_EXIT_CRASHED, 99),
			   0);
	else
		HARNESS_EQ(smarm_actor_stop(pid), 0);
	for (int k = 0; k < 2; k++) {
		HARNESS_EQ(harness_recv_sig(sig, &s), 0);
		HARNESS_CHECK(s.kind == SMARM_SIGNAL_DOWN ||
			      s.kind == SMARM_SIGNAL_EXIT);
		HARNESS_CHECK(smarm_pid_eq(s.from, pid));
		HARNESS_EQ(s.how,
			   by_exit ? SMARM_EXIT_CRASHED : SMARM_EXIT_STOPPED);
	}
	HARNESS_EQ(atomic_load(&hb_cleanups), 1);
	HARNESS_CHECK(!smarm_actor_is_alive(pid));
	HARNESS_EQ(smarm_chan_send(ch, &one), 0); /* nobody registered */
	HARNESS_EQ(harness_chan_len(ch), 1);
	HARNESS_EQ(smarm_trap_exit(NULL), 0);
	harness_chan_drop(ch);
	harness_chan_drop(sig);
}

START_TEST(test_stop_ends_it)
{
	harness_checks_reset();
	int by_exit = 0;
	ck_assert_int_eq(harness_run(4, hb_stop_root, &by_exit),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

START_TEST(test_exit_signal_ends_it)
{
	harness_checks_reset();
	int by_exit = 1;
	ck_assert_int_eq(harness_run(4, hb_stop_root, &by_exit),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------ stack given back */

#define HB_MANY 300

static void hb_many_body(void *arg)
{
	struct hb_wake *w = arg;
	(void)smarm_hibernate(w->ch, hb_wake_cont, w);
}

static void hb_park_body(void *arg)
{
	struct hb_wake *w = arg;
	int64_t v;
	(void)smarm_chan_recv(w->ch, &v);
	(void)smarm_chan_send(w->done, &(int){ (int)v });
}

/* HB_MANY dense-stacked actors wait: parked, each holds a stack;
 * hibernated, (almost) none does. */
static void hb_stacks_root(void *arg)
{
	int hibernate = *(int *)arg;
	smarm_node_t *node = smarm_node_current();
	struct hb_wake *w = calloc(HB_MANY, sizeof *w);
	smarm_chan_t *done;
	int64_t before, held;
	HARNESS_CHECK(w != NULL);
	HARNESS_EQ(smarm_chan_alloc(&done, sizeof(int), NULL), 0);
	before = harness_stat(node, SMARM_STAT_STACKS_DENSE);
	for (int i = 0; i < HB_MANY; i++) {
		w[i].done = done;
		HARNESS_EQ(smarm_chan_alloc(&w[i].ch, sizeof(int64_t), NULL),
			   0);
		HARNESS_EQ(smarm_actor_spawn(NULL,
					     hibernate ? hb_many_body
						       : hb_park_body,
					     &w[i], NULL),
			   0);
	}
	smarm_actor_sleep(MS(20));
	if (hibernate)
		HARNESS_CHECK(harness_await_stat(node, SMARM_STAT_HIBERNATIONS,
						 HB_MANY));
	/* Parked: each one holds its stack once it has run (under load
	 * the last ones may still be queued). */
	for (uint64_t t0 = smarm_now_ns();
	     !hibernate &&
	     harness_stat(node, SMARM_STAT_STACKS_DENSE) - before < HB_MANY &&
	     harness_since(t0) < MS(5000) * harness_time_scale();)
		smarm_actor_sleep(MS(1));
	held = harness_stat(node, SMARM_STAT_STACKS_DENSE) - before;
	if (hibernate)
		HARNESS_CHECK(held <= 8);
	else
		HARNESS_CHECK(held >= HB_MANY);
	for (int i = 0; i < HB_MANY; i++) {
		int64_t v = i;
		int got;
		HARNESS_EQ(smarm_chan_send(w[i].ch, &v), 0);
		HARNESS_EQ(smarm_chan_recv_timeout(
				   done, &got, MS(5000) * harness_time_scale()),
			   0);
	}
	for (int i = 0; i < HB_MANY; i++)
		harness_chan_drop(w[i].ch);
	harness_chan_drop(done);
	free(w);
}

START_TEST(test_stack_given_back)
{
	harness_checks_reset();
	int hibernate = 1;
	ck_assert_int_eq(harness_run_opt(2, SMARM_OPT_STACK_MODE,
					 SMARM_STACK_DENSE, hb_stacks_root,
					 &hibernate, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

START_TEST(test_stack_held_when_parked)
{
	harness_checks_reset();
	int hibernate = 0;
	ck_assert_int_eq(harness_run_opt(2, SMARM_OPT_STACK_MODE,
					 SMARM_STACK_DENSE, hb_stacks_root,
					 &hibernate, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ----------------------------------------------------------- stress */

#define HB_PINGERS 64
#define HB_ROUNDS 300

/* Many hibernating counters fed by many senders on 4 workers, each
 * counter re-hibernating after every drain: no wake is lost (every sum
 * arrives) while wakes race the stack's release. */
static void hb_feeder(void *arg)
{
	struct hb_counter *c = arg;
	for (int64_t i = 1; i <= HB_ROUNDS; i++) {
		HARNESS_EQ(smarm_chan_send(c->in, &i), 0);
		if ((i & 15) == 0)
			smarm_actor_yield();
	}
	HARNESS_EQ(smarm_chan_sender_free(c->in), 0);
}

static void hb_stress_root(void *arg)
{
	(void)arg;
	struct hb_counter *c = calloc(HB_PINGERS, sizeof *c);
	smarm_chan_t *out;
	int64_t want = (int64_t)HB_ROUNDS * (HB_ROUNDS + 1) / 2;
	HARNESS_CHECK(c != NULL);
	HARNESS_EQ(smarm_chan_alloc(&out, sizeof(int64_t), NULL), 0);
	for (int i = 0; i < HB_PINGERS; i++) {
		c[i].out = out;
		HARNESS_EQ(smarm_chan_alloc(&c[i].in, sizeof(int64_t), NULL),
			   0);
		HARNESS_EQ(
			smarm_actor_spawn(NULL, hb_counter_body, &c[i], NULL),
			0);
		HARNESS_EQ(smarm_actor_spawn(NULL, hb_feeder, &c[i], NULL), 0);
	}
	for (int i = 0; i < HB_PINGERS; i++) {
		int64_t got = 0;
		HARNESS_EQ(smarm_chan_recv_timeout(
				   out, &got, MS(10000) * harness_time_scale()),
			   0);
		HARNESS_EQ(got, want);
	}
	for (int i = 0; i < HB_PINGERS; i++)
		smarm_chan_receiver_free(c[i].in);
	harness_chan_drop(out);
	free(c);
}

START_TEST(test_stress_workers)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, hb_stress_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ----------------------------------------------------------- misuse */

static void hb_nop(void *arg)
{
	(void)arg;
}

static void hb_misuse_root(void *arg)
{
	(void)arg;
	smarm_chan_t *ch, *freed;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof(int64_t), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&freed, sizeof(int64_t), NULL), 0);
	harness_chan_drop(freed);
	HARNESS_EQ(smarm_hibernate(ch, NULL, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_hibernate(NULL, hb_nop, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_hibernate(freed, hb_nop, NULL), SMARM_ESTATE);
	HARNESS_EQ(smarm_chan_receiver_free(ch), 0);
	HARNESS_EQ(smarm_hibernate(ch, hb_nop, NULL), SMARM_ESTATE);
	smarm_chan_sender_free(ch);
}

START_TEST(test_misuse)
{
	harness_checks_reset();
	smarm_chan_t *ch;
	ck_assert_int_eq(harness_run(1, hb_misuse_root, NULL),
			 SMARM_EXIT_NORMAL);
	/* A plain thread is no actor. */
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof(int64_t), NULL), 0);
	ck_assert_int_eq(smarm_hibernate(ch, hb_nop, NULL), SMARM_ENOTACTOR);
	harness_chan_drop(ch);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_hibernate_suite(void)
{
	Suite *s = suite_create("hibernate");
	TCase *tc = tcase_create("plain");
	tcase_add_test(tc, test_state_survives);
	tcase_add_test(tc, test_state_survives_workers);
	tcase_add_test(tc, test_wake_on_send);
	tcase_add_test(tc, test_wake_on_close);
	tcase_add_test(tc, test_wake_on_timer);
	tcase_add_test(tc, test_ready_at_call);
	tcase_add_test(tc, test_stop_ends_it);
	tcase_add_test(tc, test_exit_signal_ends_it);
	tcase_add_test(tc, test_stack_given_back);
	tcase_add_test(tc, test_stack_held_when_parked);
	tcase_add_test(tc, test_stress_workers);
	tcase_add_test(tc, test_misuse);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(hibernate)
