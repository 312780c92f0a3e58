/* SPDX-License-Identifier: MIT */
/*
 * test_select.c - smarm_select and smarm_select_timeout: readiness,
 * index priority, parking, closed arms, precise wakes (a loser arm or a
 * stale timer never disturbs a later wait), draining loops, timeouts and
 * argument errors.
 *
 * Results observed inside actors go into the global `R` and are asserted
 * after the run returns.
 */
#include "harness.h"
#include "retired.h"

#include <string.h>

static struct {
	int rc[16];
	size_t idx[16];
	int val[16];
	uint64_t ns[16];
	atomic_int errors;
	atomic_int flag;
	long sum;
	int closed;
} R;

static void reset(void)
{
	memset(&R, 0, sizeof R);
	for (int i = 0; i < 16; i++)
		R.idx[i] = (size_t)-1;
}

static smarm_chan_t *new_chan(void)
{
	smarm_chan_t *ch = NULL;
	if (smarm_chan_alloc(&ch, sizeof(int), NULL) != 0)
		R.errors++;
	return ch;
}

static void send_int(smarm_chan_t *ch, int v)
{
	if (smarm_chan_send(ch, &v) != 0)
		R.errors++;
}

/* A child that sleeps, then sends `val` on ch or frees its sender ref. */
struct delayed {
	smarm_chan_t *ch;
	uint64_t delay;
	int val;
	bool close;
};

static void delayed_actor(void *arg)
{
	struct delayed *d = arg;
	smarm_actor_sleep(d->delay);
	if (d->close) {
		if (smarm_chan_sender_free(d->ch) != 0)
			R.errors++;
	} else {
		send_int(d->ch, d->val);
	}
}

static void flag_actor(void *arg)
{
	(void)arg;
	atomic_store(&R.flag, 1);
}

/* ------------------------------------------------------------ select */

static void ready_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan();
	smarm_chan_t *arms[2] = { a, b };
	uint64_t t0;
	(void)arg;
	send_int(b, 5);
	/* One worker: had select parked, the child would have run. */
	smarm_actor_spawn(NULL, flag_actor, NULL, NULL);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_select(arms, 2, &R.idx[0]);
	R.ns[0] = harness_since(t0);
	R.val[1] = atomic_load(&R.flag);
	R.rc[1] = smarm_chan_try_recv(b, &R.val[0]);
	harness_chan_drop(a);
	harness_chan_drop(b);
}

START_TEST(test_select_ready_arm_returns_immediately)
{
	reset();
	ck_assert_int_eq(harness_run(1, ready_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 1);
	ck_assert_int_eq(R.val[1], 0); /* did not park */
	ck_assert_elapsed_lt(R.ns[0], MS(250));
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[0], 5);
}
END_TEST

static void priority_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan(), *c = new_chan();
	smarm_chan_t *arms[3] = { a, b, c };
	int v;
	(void)arg;
	/* Sent in reverse index order; index order still decides. */
	send_int(c, 3);
	send_int(b, 2);
	send_int(a, 1);
	R.rc[0] = smarm_select(arms, 3, &R.idx[0]);
	smarm_chan_try_recv(a, &v);
	R.rc[1] = smarm_select(arms, 3, &R.idx[1]);
	smarm_chan_try_recv(b, &v);
	R.rc[2] = smarm_select(arms, 3, &R.idx[2]);
	smarm_chan_try_recv(c, &v);
	/* Only c and b ready, c sent first. */
	send_int(c, 3);
	send_int(b, 2);
	R.rc[3] = smarm_select(arms, 3, &R.idx[3]);
	harness_chan_drop(a);
	harness_chan_drop(b);
	harness_chan_drop(c);
}

START_TEST(test_select_several_ready_lower_index_wins)
{
	reset();
	ck_assert_int_eq(harness_run(1, priority_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(R.rc[i], 0);
	ck_assert_uint_eq(R.idx[0], 0);
	ck_assert_uint_eq(R.idx[1], 1);
	ck_assert_uint_eq(R.idx[2], 2);
	ck_assert_uint_eq(R.idx[3], 1);
}
END_TEST

static void parks_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan(), *c = new_chan();
	smarm_chan_t *arms[3] = { a, b, c };
	struct delayed d = { c, MS(30), 33, false };
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	t0 = smarm_now_ns();
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	R.rc[0] = smarm_select(arms, 3, &R.idx[0]);
	R.ns[0] = harness_since(t0);
	R.rc[1] = smarm_chan_try_recv(c, &R.val[0]);
	R.rc[2] = smarm_chan_try_recv(a, &R.val[1]);
	R.rc[3] = smarm_chan_try_recv(b, &R.val[1]);
	smarm_actor_join(pid, NULL, NULL);
	harness_chan_drop(a);
	harness_chan_drop(b);
	harness_chan_drop(c);
}

START_TEST(test_select_no_ready_arm_parks_until_any_fires)
{
	reset();
	ck_assert_int_eq(harness_run(2, parks_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 2);
	ck_assert_uint_ge(R.ns[0], MS(30));
	ck_assert_elapsed_lt(R.ns[0], MS(2000));
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[0], 33);
	ck_assert_int_eq(R.rc[2], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[3], SMARM_EAGAIN);
}
END_TEST

static void closed_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan();
	smarm_chan_t *arms[2] = { a, b };
	(void)arg;
	smarm_chan_sender_free(a);
	send_int(b, 1);
	R.rc[0] = smarm_select(arms, 2, &R.idx[0]);
	R.rc[1] = smarm_chan_try_recv(a, &R.val[0]);
	/* Ready forever: it wins again and starves b. */
	R.rc[2] = smarm_select(arms, 2, &R.idx[2]);
	/* Dropped from the set, b is seen. */
	R.rc[3] = smarm_select(&arms[1], 1, &R.idx[3]);
	smarm_chan_receiver_free(a);
	harness_chan_drop(b);
}

START_TEST(test_select_closed_arm_counts_as_ready)
{
	reset();
	ck_assert_int_eq(harness_run(1, closed_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 0);
	ck_assert_int_eq(R.rc[1], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_uint_eq(R.idx[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_uint_eq(R.idx[3], 0);
}
END_TEST

static void close_wakes_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan();
	smarm_chan_t *arms[2] = { a, b };
	struct delayed d = { b, MS(20), 0, true };
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	smarm_chan_sender_dup(b);
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	smarm_chan_sender_free(b); /* the child holds the last one */
	t0 = smarm_now_ns();
	R.rc[0] = smarm_select(arms, 2, &R.idx[0]);
	R.ns[0] = harness_since(t0);
	R.rc[1] = smarm_chan_try_recv(b, &R.val[0]);
	smarm_actor_join(pid, NULL, NULL);
	smarm_chan_receiver_free(b);
	harness_chan_drop(a);
}

START_TEST(test_select_close_while_parked_wakes_select)
{
	reset();
	ck_assert_int_eq(harness_run(2, close_wakes_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 1);
	ck_assert_elapsed_lt(R.ns[0], MS(2000));
	ck_assert_int_eq(R.rc[1], SMARM_ECLOSED);
}
END_TEST

/* ------------------------------------------------------ precise wakes */

static smarm_chan_t *pw_a, *pw_b, *pw_ack;

/* Sends on a; once the selector acks, sends on b (the loser arm). */
static void loser_producer(void *arg)
{
	int v;
	(void)arg;
	send_int(pw_a, 1);
	if (smarm_chan_recv(pw_ack, &v) != 0)
		R.errors++;
	send_int(pw_b, 2);
}

static void loser_root(void *arg)
{
	smarm_chan_t *arms[2];
	smarm_pid_t pid;
	uint64_t t0;
	int ack = 0;
	(void)arg;
	pw_a = new_chan();
	pw_b = new_chan();
	pw_ack = new_chan();
	arms[0] = pw_a;
	arms[1] = pw_b;
	smarm_actor_spawn(&pid, loser_producer, NULL, NULL);
	R.rc[0] = smarm_select(arms, 2, &R.idx[0]);
	send_int(pw_ack, ack);
	/* The producer now sends on b while we sleep: b's registration was
	 * from the select that already returned and must stay inert. */
	t0 = smarm_now_ns();
	smarm_actor_sleep(MS(50));
	R.ns[0] = harness_since(t0);
	smarm_actor_join(pid, NULL, NULL);
	R.rc[1] = smarm_chan_try_recv(pw_a, &R.val[0]);
	R.rc[2] = smarm_chan_try_recv(pw_b, &R.val[1]);
	harness_chan_drop(pw_a);
	harness_chan_drop(pw_b);
	harness_chan_drop(pw_ack);
}

/* Loop test: _i 0 runs on 1 worker, _i 1 on 4. */
START_TEST(test_select_loser_arm_wake_does_not_shorten_sleep)
{
	reset();
	ck_assert_int_eq(harness_run(_i == 0 ? 1 : 4, loser_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 0);
	ck_assert_uint_ge(R.ns[0], MS(50));
	/* Loser messages are not lost. */
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[0], 1);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.val[1], 2);
}
END_TEST

static void late_sender(void *arg)
{
	(void)arg;
	send_int(pw_a, 7);
}

static void no_park_root(void *arg)
{
	smarm_chan_t *arms[2];
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	pw_a = new_chan();
	pw_b = new_chan();
	arms[0] = pw_a;
	arms[1] = pw_b;
	send_int(pw_b, 8);
	/* a is registered first, then b is found ready: no park. */
	R.rc[0] = smarm_select(arms, 2, &R.idx[0]);
	smarm_actor_spawn(&pid, late_sender, NULL, NULL);
	t0 = smarm_now_ns();
	smarm_actor_sleep(MS(50));
	R.ns[0] = harness_since(t0);
	smarm_actor_join(pid, NULL, NULL);
	R.rc[1] = smarm_chan_try_recv(pw_a, &R.val[0]);
	R.rc[2] = smarm_chan_try_recv(pw_b, &R.val[1]);
	harness_chan_drop(pw_a);
	harness_chan_drop(pw_b);
}

START_TEST(test_select_no_park_exit_later_send_does_not_shorten_sleep)
{
	reset();
	ck_assert_int_eq(harness_run(1, no_park_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 1);
	ck_assert_uint_ge(R.ns[0], MS(50));
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[0], 7);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.val[1], 8);
}
END_TEST

static void then_recv_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan();
	smarm_chan_t *arms[2] = { a, b };
	struct delayed d1 = { a, MS(10), 1, false };
	struct delayed d2 = { b, MS(20), 2, false };
	struct delayed d3 = { b, MS(10), 3, false };
	smarm_pid_t pid;
	(void)arg;
	smarm_actor_spawn(&pid, delayed_actor, &d1, NULL);
	R.rc[0] = smarm_select(arms, 2, &R.idx[0]);
	smarm_actor_join(pid, NULL, NULL);
	/* Plain receives on the loser arm: parked, then bounded. */
	smarm_actor_spawn(&pid, delayed_actor, &d2, NULL);
	R.rc[1] = smarm_chan_recv(b, &R.val[1]);
	smarm_actor_join(pid, NULL, NULL);
	smarm_actor_spawn(&pid, delayed_actor, &d3, NULL);
	R.rc[2] = smarm_chan_recv_timeout(b, &R.val[2], MS(10000));
	smarm_actor_join(pid, NULL, NULL);
	R.rc[3] = smarm_chan_try_recv(a, &R.val[3]);
	harness_chan_drop(a);
	harness_chan_drop(b);
}

START_TEST(test_select_then_plain_recv_on_loser_arm_works)
{
	reset();
	ck_assert_int_eq(harness_run(2, then_recv_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], 2);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.val[2], 3);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.val[3], 1);
}
END_TEST

/* Two producers, one select loop on 4 workers: nothing lost. */
#define DRAIN_N 5000

static void range_producer(void *arg)
{
	smarm_chan_t *ch = arg;
	for (int i = 1; i <= DRAIN_N; i++) {
		send_int(ch, i);
		if (i % 512 == 0)
			smarm_actor_yield();
	}
	smarm_chan_sender_free(ch);
}

static void drain_root(void *arg)
{
	smarm_chan_t *arms[2] = { new_chan(), new_chan() };
	smarm_chan_t *all[2] = { arms[0], arms[1] };
	smarm_pid_t p0, p1;
	size_t n = 2;
	(void)arg;
	smarm_actor_spawn(&p0, range_producer, arms[0], NULL);
	smarm_actor_spawn(&p1, range_producer, arms[1], NULL);
	while (n > 0) {
		size_t i;
		int v, rc = smarm_select(arms, n, &i);
		if (rc != 0) {
			R.errors++;
			break;
		}
		rc = smarm_chan_try_recv(arms[i], &v);
		if (rc == 0) {
			R.sum += v;
			R.val[0]++;
		} else if (rc == SMARM_ECLOSED) {
			R.closed++;
			arms[i] = arms[n - 1]; /* drop the closed arm */
			n--;
		} else {
			R.errors++;
			break;
		}
	}
	smarm_actor_join(p0, NULL, NULL);
	smarm_actor_join(p1, NULL, NULL);
	smarm_chan_receiver_free(all[0]);
	smarm_chan_receiver_free(all[1]);
}

START_TEST(test_select_loop_drains_two_producers_exact_sum)
{
	reset();
	ck_assert_int_eq(harness_run(4, drain_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.closed, 2);
	ck_assert_int_eq(R.val[0], 2 * DRAIN_N);
	ck_assert_int_eq(R.sum, 2L * DRAIN_N * (DRAIN_N + 1) / 2);
}
END_TEST

static void max_arms_root(void *arg)
{
	smarm_chan_t *arms[64];
	(void)arg;
	for (int i = 0; i < 64; i++)
		arms[i] = new_chan();
	send_int(arms[63], 63);
	R.rc[0] = smarm_select(arms, 64, &R.idx[0]);
	R.rc[1] = smarm_select_timeout(arms, 64, MS(10), &R.idx[1]);
	for (int i = 0; i < 64; i++)
		harness_chan_drop(arms[i]);
}

START_TEST(test_select_sixty_four_arms_last_ready_is_found)
{
	reset();
	ck_assert_int_eq(harness_run(1, max_arms_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 63);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_uint_eq(R.idx[1], 63);
}
END_TEST

/* ---------------------------------------------------- select_timeout */

static void st_deadline_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan();
	smarm_chan_t *arms[2] = { a, b };
	uint64_t t0;
	(void)arg;
	t0 = smarm_now_ns();
	R.rc[0] = smarm_select_timeout(arms, 2, MS(40), &R.idx[0]);
	R.ns[0] = harness_since(t0);
	/* Still usable: a later send is seen. */
	send_int(b, 4);
	R.rc[1] = smarm_select_timeout(arms, 2, MS(1000), &R.idx[1]);
	harness_chan_drop(a);
	harness_chan_drop(b);
}

START_TEST(test_select_timeout_silent_arms_return_etimedout_after_deadline)
{
	reset();
	ck_assert_int_eq(harness_run(1, st_deadline_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_uint_ge(R.ns[0], MS(40));
	ck_assert_elapsed_lt(R.ns[0], MS(1040));
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_uint_eq(R.idx[1], 1);
}
END_TEST

static void st_ready_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan();
	smarm_chan_t *arms[2] = { a, b };
	uint64_t t0;
	(void)arg;
	send_int(b, 1);
	smarm_actor_spawn(NULL, flag_actor, NULL, NULL);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_select_timeout(arms, 2, MS(5000), &R.idx[0]);
	R.ns[0] = harness_since(t0);
	R.val[0] = atomic_load(&R.flag);
	/* No timer was armed for it: a later sleep is not cut short. */
	t0 = smarm_now_ns();
	smarm_actor_sleep(MS(30));
	R.ns[1] = harness_since(t0);
	harness_chan_drop(a);
	harness_chan_drop(b);
}

START_TEST(test_select_timeout_ready_arm_wins_without_waiting)
{
	reset();
	ck_assert_int_eq(harness_run(1, st_ready_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 1);
	ck_assert_int_eq(R.val[0], 0);
	ck_assert_elapsed_lt(R.ns[0], MS(250));
	ck_assert_uint_ge(R.ns[1], MS(30));
}
END_TEST

static void st_beats_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan();
	smarm_chan_t *arms[2] = { a, b };
	struct delayed d = { a, MS(10), 9, false };
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_select_timeout(arms, 2, MS(300), &R.idx[0]);
	R.ns[0] = harness_since(t0);
	smarm_actor_join(pid, NULL, NULL);
	R.rc[1] = smarm_chan_try_recv(a, &R.val[0]);
	/* The select's timer (due at 300 ms) is stale and must not wake
	 * this sleep early. */
	t0 = smarm_now_ns();
	smarm_actor_sleep(MS(400));
	R.ns[1] = harness_since(t0);
	/* Nor a later select_timeout. */
	t0 = smarm_now_ns();
	R.rc[2] = smarm_select_timeout(arms, 2, MS(30), &R.idx[2]);
	R.ns[2] = harness_since(t0);
	harness_chan_drop(a);
	harness_chan_drop(b);
}

START_TEST(test_select_timeout_arm_beats_timer_stale_timer_inert)
{
	reset();
	ck_assert_int_eq(harness_run(2, st_beats_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 0);
	ck_assert_uint_lt(R.ns[0], MS(300));
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[0], 9);
	ck_assert_uint_ge(R.ns[1], MS(400));
	ck_assert_int_eq(R.rc[2], SMARM_ETIMEDOUT);
	ck_assert_uint_ge(R.ns[2], MS(30));
}
END_TEST

static void st_closed_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan();
	smarm_chan_t *arms[2] = { a, b };
	struct delayed d = { b, MS(20), 0, true };
	smarm_pid_t pid;
	uint64_t t0;
	(void)arg;
	/* Already closed: ready at once, even with a zero timeout. */
	smarm_chan_sender_free(a);
	R.rc[0] = smarm_select_timeout(arms, 2, MS(50), &R.idx[0]);
	R.rc[1] = smarm_select_timeout(arms, 2, 0, &R.idx[1]);
	/* Closed while parked: woken, ready, not a timeout. */
	smarm_chan_sender_dup(b);
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	smarm_chan_sender_free(b);
	t0 = smarm_now_ns();
	R.rc[2] = smarm_select_timeout(&arms[1], 1, MS(10000), &R.idx[2]);
	R.ns[2] = harness_since(t0);
	smarm_actor_join(pid, NULL, NULL);
	smarm_chan_receiver_free(a);
	smarm_chan_receiver_free(b);
}

START_TEST(test_select_timeout_closed_arm_is_ready_not_timeout)
{
	reset();
	ck_assert_int_eq(harness_run(2, st_closed_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_uint_eq(R.idx[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_uint_eq(R.idx[2], 0);
	ck_assert_elapsed_lt(R.ns[2], MS(2000));
}
END_TEST

static void st_zero_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan();
	smarm_chan_t *arms[2] = { a, b };
	uint64_t t0;
	(void)arg;
	t0 = smarm_now_ns();
	R.rc[0] = smarm_select_timeout(arms, 2, 0, &R.idx[0]);
	R.ns[0] = harness_since(t0);
	send_int(b, 1);
	R.rc[1] = smarm_select_timeout(arms, 2, 0, &R.idx[1]);
	send_int(a, 1);
	R.rc[2] = smarm_select_timeout(arms, 2, 0, &R.idx[2]);
	/* The polls left nothing behind: a sleep takes its full time. */
	smarm_chan_try_recv(a, &R.val[0]);
	smarm_chan_try_recv(b, &R.val[0]);
	R.rc[3] = smarm_select_timeout(arms, 2, 0, &R.idx[3]);
	t0 = smarm_now_ns();
	smarm_actor_sleep(MS(30));
	R.ns[1] = harness_since(t0);
	harness_chan_drop(a);
	harness_chan_drop(b);
}

START_TEST(test_select_timeout_zero_polls)
{
	reset();
	ck_assert_int_eq(harness_run(1, st_zero_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_elapsed_lt(R.ns[0], MS(250));
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_uint_eq(R.idx[1], 1);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_uint_eq(R.idx[2], 0);
	ck_assert_int_eq(R.rc[3], SMARM_ETIMEDOUT);
	ck_assert_uint_ge(R.ns[1], MS(30));
}
END_TEST

static void st_huge_root(void *arg)
{
	smarm_chan_t *a = new_chan();
	smarm_chan_t *arms[1] = { a };
	struct delayed d = { a, MS(30), 5, false };
	smarm_pid_t pid;
	(void)arg;
	smarm_actor_spawn(&pid, delayed_actor, &d, NULL);
	/* ~584 years: effectively forever, must not wrap into the past. */
	R.rc[0] = smarm_select_timeout(arms, 1, UINT64_MAX, &R.idx[0]);
	smarm_actor_join(pid, NULL, NULL);
	harness_chan_drop(a);
}

START_TEST(test_select_timeout_huge_timeout_waits_for_send)
{
	reset();
	ck_assert_int_eq(harness_run(2, st_huge_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 0);
}
END_TEST

/* ------------------------------------------------------------ errors */

static void errors_root(void *arg)
{
	smarm_chan_t *a = new_chan();
	smarm_chan_t *arms[65];
	smarm_chan_t *with_null[2] = { a, NULL };
	size_t idx = 7;
	(void)arg;
	for (int i = 0; i < 65; i++)
		arms[i] = a;
	R.rc[0] = smarm_select(arms, 0, &idx);
	R.rc[1] = smarm_select(arms, 65, &idx);
	R.rc[2] = smarm_select(with_null, 2, &idx);
	R.rc[3] = smarm_select(NULL, 1, &idx);
	R.rc[4] = smarm_select(arms, 1, NULL);
	R.rc[5] = smarm_select_timeout(arms, 0, MS(10), &idx);
	R.rc[6] = smarm_select_timeout(arms, 65, MS(10), &idx);
	R.rc[7] = smarm_select_timeout(with_null, 2, MS(10), &idx);
	R.rc[8] = smarm_select_timeout(NULL, 1, MS(10), &idx);
	R.rc[9] = smarm_select_timeout(arms, 1, MS(10), NULL);
	R.idx[0] = idx; /* untouched by failures */
	harness_chan_drop(a);
}

START_TEST(test_select_bad_arguments_return_einval)
{
	reset();
	ck_assert_int_eq(harness_run(1, errors_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(R.rc[i], SMARM_EINVAL);
	ck_assert_uint_eq(R.idx[0], 7);
}
END_TEST

START_TEST(test_select_outside_actor_returns_enotactor)
{
	smarm_chan_t *a;
	size_t idx = 0;
	ck_assert_int_eq(smarm_chan_alloc(&a, sizeof(int), NULL), 0);
	ck_assert_int_eq(smarm_select((smarm_chan_t *const[]){ a }, 1, &idx),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_select_timeout((smarm_chan_t *const[]){ a }, 1,
					      MS(10), &idx),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(
		smarm_select_timeout((smarm_chan_t *const[]){ a }, 1, 0, &idx),
		SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_chan_sender_free(a), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(a), 0);
}
END_TEST

static void estate_root(void *arg)
{
	smarm_chan_t *a = new_chan(), *b = new_chan();
	smarm_chan_t *arms[2] = { a, b };
	size_t idx;
	(void)arg;
	smarm_chan_receiver_free(b);
	R.rc[0] = smarm_select(arms, 2, &idx);
	R.rc[1] = smarm_select_timeout(arms, 2, MS(10), &idx);
	R.rc[2] = smarm_select_timeout(arms, 2, 0, &idx);
	smarm_chan_sender_free(b);
	harness_chan_drop(a);
}

START_TEST(test_select_freed_receiver_arm_returns_estate)
{
	reset();
	ck_assert_int_eq(harness_run(1, estate_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[1], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[2], SMARM_ESTATE);
}
END_TEST

static void parked_selector(void *arg)
{
	smarm_chan_t **arms = arg;
	atomic_store(&R.flag, 1);
	R.rc[0] = smarm_select(arms, 2, &R.idx[0]);
}

static void other_root(void *arg)
{
	smarm_chan_t *arms[2] = { new_chan(), new_chan() };
	smarm_pid_t pid;
	size_t idx;
	int v;
	(void)arg;
	smarm_actor_spawn(&pid, parked_selector, arms, NULL);
	while (!atomic_load(&R.flag))
		smarm_actor_yield(); /* one worker: it has parked */
	/* Other receivers queue behind the selector, and time out. */
	R.rc[1] = smarm_select_timeout(&arms[1], 1, MS(10), &idx);
	R.rc[2] = smarm_chan_recv_timeout(arms[0], &v, MS(10));
	send_int(arms[1], 1);
	smarm_actor_join(pid, NULL, NULL);
	harness_chan_drop(arms[0]);
	harness_chan_drop(arms[1]);
}

START_TEST(test_select_arm_with_other_receiver_queues_behind_it)
{
	reset();
	ck_assert_int_eq(harness_run(1, other_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[1], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[2], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 1);
}
END_TEST

static void stopped_selector_root(void *arg)
{
	smarm_chan_t *arms[2] = { new_chan(), new_chan() };
	smarm_pid_t pid;
	int how = -1;
	(void)arg;
	R.rc[0] = 12345;
	smarm_actor_spawn(&pid, parked_selector, arms, NULL);
	while (!atomic_load(&R.flag))
		smarm_actor_yield();
	smarm_actor_stop(pid);
	smarm_actor_join(pid, &how, NULL);
	R.val[0] = how;
	/* Its registrations went with it: this actor may select now. */
	R.rc[1] = smarm_select_timeout(arms, 2, MS(10), &R.idx[1]);
	send_int(arms[1], 1);
	R.rc[2] = smarm_select(arms, 2, &R.idx[2]);
	harness_chan_drop(arms[0]);
	harness_chan_drop(arms[1]);
}

START_TEST(test_select_stopped_selector_unregisters_every_arm)
{
	reset();
	ck_assert_int_eq(harness_run(1, stopped_selector_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 12345);
	ck_assert_int_eq(R.val[0], SMARM_EXIT_STOPPED);
	ck_assert_int_eq(R.rc[1], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_uint_eq(R.idx[2], 1);
}
END_TEST

Suite *smarm_test_select_suite(void)
{
	Suite *s = suite_create("select");
	TCase *tc = tcase_create("select");
	tcase_add_test(tc, test_select_ready_arm_returns_immediately);
	tcase_add_test(tc, test_select_several_ready_lower_index_wins);
	tcase_add_test(tc, test_select_no_ready_arm_parks_until_any_fires);
	tcase_add_test(tc, test_select_closed_arm_counts_as_ready);
	tcase_add_test(tc, test_select_close_while_parked_wakes_select);
	tcase_add_test(tc, test_select_sixty_four_arms_last_ready_is_found);
	suite_add_tcase(s, tc);

	tc = tcase_create("precise_wakes");
	tcase_add_loop_test(
		tc, test_select_loser_arm_wake_does_not_shorten_sleep, 0, 2);
	tcase_add_test(
		tc, test_select_no_park_exit_later_send_does_not_shorten_sleep);
	tcase_add_test(tc, test_select_then_plain_recv_on_loser_arm_works);
	tcase_add_test(tc, test_select_loop_drains_two_producers_exact_sum);
	tcase_add_test(tc, test_select_stopped_selector_unregisters_every_arm);
	suite_add_tcase(s, tc);

	tc = tcase_create("select_timeout");
	tcase_add_test(
		tc,
		test_select_timeout_silent_arms_return_etimedout_after_deadline);
	tcase_add_test(tc, test_select_timeout_ready_arm_wins_without_waiting);
	tcase_add_test(tc,
		       test_select_timeout_arm_beats_timer_stale_timer_inert);
	tcase_add_test(tc, test_select_timeout_closed_arm_is_ready_not_timeout);
	tcase_add_test(tc, test_select_timeout_zero_polls);
	tcase_add_test(tc, test_select_timeout_huge_timeout_waits_for_send);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_select_bad_arguments_return_einval);
	tcase_add_test(tc, test_select_outside_actor_returns_enotactor);
	tcase_add_test(tc, test_select_freed_receiver_arm_returns_estate);
	tcase_add_test(tc,
		       test_select_arm_with_other_receiver_queues_behind_it);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(select)
