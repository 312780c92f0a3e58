/* SPDX-License-Identifier: MIT */
/*
 * test_fairness.c - the scheduler under saturation: call-free spinners
 * (never a safe point, so only asynchronous preemption moves them) on 1
 * to 4 workers each get a share of the CPU near the fair one; an actor
 * spawned while every worker spins gets to run; an actor woken by its
 * timer, by a message from an actor or from a plain thread, or by an fd
 * a plain thread writes to, while every worker spins runs within a few
 * slices; a stop lands on a pinned spinner.
 *
 * Shares are counted in loop iterations (every spinner runs the same
 * loop). The nodes use a 2 ms slice (SMARM_OPT_ASYNC_SLICE_NS) so that a
 * short window holds many slices. Bounds are generous for a noisy 2-core
 * machine, and widened by SMARM_TEST_TIME_SCALE; the figures they guard
 * against were starvation (a share of 0, a sleeper never woken) and a
 * timer wake ~8 slices late.
 */
#include "harness.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLICE_NS MS(2)
#define MAX_SPIN 16

static struct {
	atomic_int stop;
	atomic_int started;
	_Atomic unsigned long long count[MAX_SPIN];
	int n;
	uint64_t late[64]; /* ns past each deadline */
	int n_late;
	int got;	     /* wakes recorded */
	atomic_int flag;     /* the late spawn ran */
	uint64_t stop_ns;    /* stop request to join */
	uint64_t window;     /* spinning time */
	smarm_actor_cb body; /* what spawn_spinners spawns: spinner */
	bool by_yield;	     /* safe_point_spinner yields, not checks */
} F;

static uint64_t slice_ns = SLICE_NS;

static int run_sat(int workers, smarm_actor_cb root, void *arg)
{
	return harness_run_opt(workers, SMARM_OPT_ASYNC_SLICE_NS,
			       (int64_t)slice_ns, root, arg, NULL);
}

/* A call-free loop: only asynchronous preemption takes the CPU from it. */
static void spinner(void *arg)
{
	int i = (int)(intptr_t)arg;
	unsigned long long c = 0;
	atomic_fetch_add(&F.started, 1);
	while (!atomic_load_explicit(&F.stop, memory_order_relaxed)) {
		c++;
		if ((c & 1023) == 0)
			atomic_store_explicit(&F.count[i], c,
					      memory_order_relaxed);
	}
	atomic_store(&F.count[i], c);
}

static void reset(int n)
{
	memset(&F, 0, sizeof F);
	F.n = n;
	F.body = spinner;
	slice_ns = SLICE_NS;
	harness_checks_reset();
}

static void spawn_spinners(smarm_pid_t p[])
{
	for (int i = 0; i < F.n; i++)
		HARNESS_EQ(smarm_actor_spawn(&p[i], F.body, (void *)(intptr_t)i,
					     NULL),
			   0);
}

static void stop_spinners(smarm_pid_t p[])
{
	atomic_store(&F.stop, 1);
	for (int i = 0; i < F.n; i++)
		HARNESS_EQ(smarm_actor_join(p[i], NULL, NULL), 0);
}

/* ------------------------------------------------------- CPU shares */

/* The most a spinner ran over the least (every count is over 0). */
static void assert_spread(int workers, double max_ratio)
{
	unsigned long long lo = ~0ull, hi = 0;
	for (int i = 0; i < F.n; i++) {
		unsigned long long c = atomic_load(&F.count[i]);
		lo = c < lo ? c : lo;
		hi = c > hi ? c : hi;
	}
	ck_assert_uint_gt(lo, 0);
	ck_assert_msg((double)hi / (double)lo <= max_ratio,
		      "%d workers, %d spinners: max/min %.3f (bound %.2f)",
		      workers, F.n, (double)hi / (double)lo, max_ratio);
}

/* Spinners for F.window; arg, if not NULL, gets the run's moves. */
static void share_root(void *arg)
{
	int64_t *moved = arg;
	smarm_pid_t p[MAX_SPIN];
	spawn_spinners(p);
	HARNESS_EQ(smarm_actor_sleep(F.window), 0);
	stop_spinners(p);
	if (moved != NULL)
		*moved = harness_actor_stat(SMARM_STAT_PREEMPT_MOVED);
}

/* Each spinner's share of the total, as a multiple of the fair one. */
static void assert_shares(int workers, double lo, double hi)
{
	unsigned long long total = 0;
	for (int i = 0; i < F.n; i++)
		total += atomic_load(&F.count[i]);
	ck_assert_uint_gt(total, 0);
	for (int i = 0; i < F.n; i++) {
		double share = (double)atomic_load(&F.count[i]) * F.n / total;
		ck_assert_msg(share >= lo && share <= hi,
			      "%d workers, %d spinners: spinner %d got %.2f of "
			      "a fair share (bounds %.2f..%.2f)",
			      workers, F.n, i, share, lo, hi);
	}
}

START_TEST(test_fairness_spinners_share_the_cpu)
{
	/* Two spinners per worker: they can be spread evenly. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	for (int workers = 1; workers <= 4; workers++) {
		reset(2 * workers);
		/*
		 * More workers than CPUs: each worker's share is also the
		 * kernel's to give, and the rest of a parallel test run takes
		 * CPUs from some worker threads for tens of milliseconds
		 * (2.07 of a fair share seen over 400 ms at 4 workers on 2
		 * CPUs): a longer window averages that out.
		 */
		bool over = harness_workers(workers) > cpus;
		F.window = over ? MS(1000) : MS(400);
		ck_assert_int_eq(run_sat(workers, share_root, NULL),
				 SMARM_EXIT_NORMAL);
		harness_checks_assert();
		/*
		 * Pinned spinners end up at most one apart per worker
		 * (architecture.md, Fairness): at 4 workers 1-2-2-3 happens,
		 * and its lone spinner's share is then exactly 2.0 of a fair
		 * one when the kernel gives the four worker threads equal
		 * time, so the kernel's noise alone crossed 2.0 in about a
		 * quarter of the runs (2.02-2.44 seen): room for it there.
		 */
		assert_shares(workers, 0.4, over ? 2.5 : 2.0);
	}
}
END_TEST

START_TEST(test_fairness_odd_spinners_all_run)
{
	/*
	 * Six spinners on two workers used to leave two of them at 0:
	 * they waited in the spawning worker's deque behind its pinned
	 * spinners for ever.
	 */
	reset(6);
	F.window = MS(400);
	ck_assert_int_eq(run_sat(2, share_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	assert_shares(2, 0.4, 2.0);
}
END_TEST

/*
 * More spinners than divide evenly: 3 on 2 workers, 5 and 7 on 4. Each
 * stays where it was first preempted unless it can move
 * (SMARM_OPT_PREEMPT_MOVE): 5 on 4 got 1, 1, 1, 1/2, 1/2 of a worker,
 * 1.25 and 0.62 of a fair share. Moving the extra one on at every slice
 * end gives each about its fair part of the time (bound 0.7-1.4).
 */
static int run_uneven(int workers, int move, int64_t *moved)
{
	return harness_run_opt2(workers, SMARM_OPT_ASYNC_SLICE_NS,
				(int64_t)slice_ns, SMARM_OPT_PREEMPT_MOVE, move,
				share_root, moved, NULL);
}

START_TEST(test_fairness_uneven_spinners_share_the_cpu)
{
	static const int cases[][2] = { { 2, 3 }, { 4, 5 }, { 4, 7 } };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		int workers = cases[c][0];
		int64_t moved = 0;
		reset(cases[c][1]);
		F.window = harness_workers(workers) > cpus ? MS(1500) : MS(600);
		ck_assert_int_eq(run_uneven(workers, 1, &moved),
				 SMARM_EXIT_NORMAL);
		harness_checks_assert();
		ck_assert_int_gt(moved, 0);
		assert_shares(workers, 0.7, 1.4);
	}
}
END_TEST

/*
 * Spinners that reach a safe point (smarm_check) or yield every 256
 * iterations, in the same uneven numbers. A yield, or a slice end at a
 * safe point, waits in its own worker's pinned FIFO (sched.c,
 * yield_queue), so these are spread by moving too. Moving at every 16th
 * yield only, 3 and 5 checkers on 2 workers reached max/min 1.17-1.61
 * over a second (release build); moving at every slice end too,
 * 1.005-1.02, as through the shared queue (until 0.5.x).
 */
/* Every 256 iterations a safe point: smarm_check, or a yield. */
static void safe_point_spinner(void *arg)
{
	int i = (int)(intptr_t)arg;
	unsigned long long c = 0;
	atomic_fetch_add(&F.started, 1);
	while (!atomic_load_explicit(&F.stop, memory_order_relaxed)) {
		if ((++c & 255) == 0) {
			atomic_store_explicit(&F.count[i], c,
					      memory_order_relaxed);
			if (F.by_yield)
				HARNESS_EQ(smarm_actor_yield(), 0);
			else
				smarm_check();
		}
	}
}

START_TEST(test_fairness_safe_point_spinners_share_the_cpu)
{
	static const int cases[][2] = { { 2, 3 }, { 4, 5 }, { 4, 7 } };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	for (int by_yield = 0; by_yield < 2; by_yield++) {
		for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
			int workers = cases[c][0];
			reset(cases[c][1]);
			F.body = safe_point_spinner;
			F.by_yield = by_yield;
			bool over = harness_workers(workers) > cpus;
			F.window = over ? MS(1500) : MS(400);
			/*
			 * Only the slice at safe points ends a run, and it is
			 * long: a placement that is evened out at every 16th
			 * slice end only (320 ms) lasts most of the window.
			 */
			ck_assert_int_eq(
				harness_run_opt2(workers,
						 SMARM_OPT_TIMESLICE_NS,
						 (int64_t)MS(20),
						 SMARM_OPT_PREEMPT_ASYNC, 0,
						 share_root, NULL, NULL),
				SMARM_EXIT_NORMAL);
			harness_checks_assert();
			assert_shares(workers, 0.7, 1.4);
			if (!over)
				assert_spread(workers, 1.3);
		}
	}
}
END_TEST

/* Moving off: preempted spinners stay where they were preempted. */
START_TEST(test_fairness_move_off_keeps_preempted_actors_in_place)
{
	int64_t moved = -1;
	reset(3);
	F.window = MS(300);
	ck_assert_int_eq(run_uneven(2, 0, &moved), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(moved, 0);
	/* Placement decides the shares (1.33, 0.67, 0.67 when the kernel
	 * gives the two threads equal time); each spinner ran. */
	assert_shares(2, 0.2, 3.0);
}
END_TEST

/*
 * A spinner that holds the address of its thread's TLS in a register
 * across its loop must never resume on another thread (the scan sees the
 * address): each pass compares the address it holds with the one its
 * thread has now. 5 of them on 4 workers would be moved if they could.
 * Without the scan every run moved them and saw another thread's TLS.
 */
static __thread int tls_probe;

static __attribute__((noipa)) int *tls_probe_here(void)
{
	return &tls_probe;
}

static void tls_spinner(void *arg)
{
	int i = (int)(intptr_t)arg;
	int *held = tls_probe_here();
	unsigned long long c = 0;
	atomic_fetch_add(&F.started, 1);
	while (!atomic_load_explicit(&F.stop, memory_order_relaxed)) {
		__asm__ volatile("" : "+r"(held)); /* in a register */
		(*held)++;
		if (held != tls_probe_here())
			atomic_store(&F.flag, 1); /* resumed elsewhere */
		if ((++c & 1023) == 0)
			atomic_store_explicit(&F.count[i], c,
					      memory_order_relaxed);
	}
}

START_TEST(test_fairness_tls_holder_is_never_moved)
{
	int64_t moved = -1;
	reset(5);
	F.body = tls_spinner;
	F.window = MS(400);
	ck_assert_int_eq(run_sat(4, share_root, &moved), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_msg(atomic_load(&F.flag) == 0,
		      "a spinner resumed on another thread holding its TLS");
	ck_assert_int_eq(moved, 0);
}
END_TEST

/*
 * Two spinners on one worker, 10 ms slices, a 1 s window: each run lasts
 * about one slice, so about 100 preemptions. The monitor sees a run at
 * one look and signals it at the next; a run that began where its
 * signal preempted the last one must be judged from that signal, not
 * from its first sighting, or every run after the first lasted two
 * slices (about 50 preemptions: seen 47-52).
 */
static void slice_root(void *arg)
{
	smarm_pid_t p[MAX_SPIN];
	int64_t *preempts = arg;
	int64_t before;
	spawn_spinners(p);
	HARNESS_EQ(smarm_actor_sleep(MS(100)), 0);
	before = harness_actor_stat(SMARM_STAT_PREEMPT_ASYNC);
	HARNESS_EQ(smarm_actor_sleep(MS(1000)), 0);
	*preempts = harness_actor_stat(SMARM_STAT_PREEMPT_ASYNC) - before;
	stop_spinners(p);
}

START_TEST(test_fairness_saturated_runs_last_about_one_slice)
{
	int64_t preempts = 0;
	reset(2);
	slice_ns = MS(10);
	ck_assert_int_eq(run_sat(1, slice_root, &preempts), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_msg(preempts >= 70 && preempts <= 140,
		      "%lld preemptions in 1 s of 10 ms slices",
		      (long long)preempts);
}
END_TEST

/* ------------------------------------------- spawned under saturation */

static void flagger(void *arg)
{
	(void)arg;
	atomic_store(&F.flag, 1);
}

static void spawn_root(void *arg)
{
	smarm_pid_t p[MAX_SPIN], q;
	uint64_t t0;
	(void)arg;
	spawn_spinners(p);
	while (atomic_load(&F.started) < F.n)
		smarm_actor_yield();
	t0 = smarm_now_ns();
	HARNESS_EQ(smarm_actor_spawn(&q, flagger, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(q, NULL, NULL), 0);
	F.stop_ns = smarm_now_ns() - t0;
	stop_spinners(p);
}

START_TEST(test_fairness_spawn_under_saturation_runs)
{
	reset(4);
	ck_assert_int_eq(run_sat(2, spawn_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&F.flag), 1);
	ck_assert_elapsed_lt(F.stop_ns, MS(500));
}
END_TEST

/* ------------------------------------ a worker's own stream of work */

/*
 * The owner of a deque pops its front, and a stream of new work can keep
 * the front fed for ever: a spawn chain (each link's next link is held
 * ahead of the deque) or wakes displaced from the wake slot. An actor
 * queued behind such a stream must still run (sched.c, ldq_take_aged:
 * within the deque's age, 100 ms at the default timeslice). On one
 * worker nothing took it until the stream ended (the streams below stop
 * by themselves after CHAIN_LIMIT so that the failure is a time, not a
 * hang: 3 s and 1.8 s).
 */
#define CHAIN_LIMIT MS(3000)

static uint64_t stream_t0;

/* A stream ends once the flagger ran, or at CHAIN_LIMIT. */
static bool stream_over(void)
{
	return atomic_load(&F.flag) ||
	       smarm_now_ns() - stream_t0 >
		       (uint64_t)((double)CHAIN_LIMIT * harness_time_scale());
}

static void chain_link(void *arg)
{
	(void)arg;
	if (!stream_over())
		HARNESS_EQ(smarm_actor_spawn(NULL, chain_link, NULL, NULL), 0);
}

/* The chain first, then its sibling: the sibling waits in the deque. */
static void chain_root(void *arg)
{
	smarm_pid_t q;
	(void)arg;
	stream_t0 = smarm_now_ns();
	HARNESS_EQ(smarm_actor_spawn(NULL, chain_link, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&q, flagger, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(q, NULL, NULL), 0);
	F.stop_ns = smarm_now_ns() - stream_t0;
}

/* root starts a stream and the flagger behind it, on 1, 2, 4 workers. */
static void assert_flagger_runs_behind(smarm_actor_cb root)
{
	for (int workers = 1; workers <= 4; workers *= 2) {
		reset(0);
		ck_assert_int_eq(run_sat(workers, root, NULL),
				 SMARM_EXIT_NORMAL);
		harness_checks_assert();
		ck_assert_int_eq(atomic_load(&F.flag), 1);
		/* About 100 ms at one worker (the deque's first age). */
		ck_assert_elapsed_lt(F.stop_ns, MS(500));
	}
}

START_TEST(test_fairness_spawn_chain_lets_a_queued_sibling_run)
{
	assert_flagger_runs_behind(chain_root);
}
END_TEST

/*
 * A broadcaster wakes two echoes per round and waits for both replies:
 * the second wake displaces the first from the wake slot to the front
 * of the deque, every round.
 */
static smarm_chan_t *echo_in[2], *echo_out;

static void echo(void *arg)
{
	smarm_chan_t *in = echo_in[(intptr_t)arg];
	int64_t v;
	while (smarm_chan_recv(in, &v) == 0 && v >= 0)
		HARNESS_EQ(smarm_chan_send(echo_out, &v), 0);
}

static void broadcaster(void *arg)
{
	int64_t v = 0, r;
	smarm_pid_t e[2];
	(void)arg;
	for (intptr_t i = 0; i < 2; i++)
		HARNESS_EQ(smarm_actor_spawn(&e[i], echo, (void *)i, NULL), 0);
	while (!stream_over()) {
		for (int i = 0; i < 2; i++)
			HARNESS_EQ(smarm_chan_send(echo_in[i], &v), 0);
		for (int i = 0; i < 2; i++)
			HARNESS_EQ(smarm_chan_recv(echo_out, &r), 0);
		v++;
	}
	v = -1;
	for (int i = 0; i < 2; i++) {
		HARNESS_EQ(smarm_chan_send(echo_in[i], &v), 0);
		HARNESS_EQ(smarm_actor_join(e[i], NULL, NULL), 0);
	}
}

static void displaced_root(void *arg)
{
	smarm_pid_t b, q;
	(void)arg;
	for (int i = 0; i < 2; i++)
		HARNESS_EQ(smarm_chan_alloc(&echo_in[i], sizeof(int64_t), NULL),
			   0);
	HARNESS_EQ(smarm_chan_alloc(&echo_out, sizeof(int64_t), NULL), 0);
	stream_t0 = smarm_now_ns();
	HARNESS_EQ(smarm_actor_spawn(&b, broadcaster, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&q, flagger, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(q, NULL, NULL), 0);
	F.stop_ns = smarm_now_ns() - stream_t0;
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	for (int i = 0; i < 2; i++)
		harness_chan_drop(echo_in[i]);
	harness_chan_drop(echo_out);
}

START_TEST(test_fairness_displaced_wakes_let_a_queued_actor_run)
{
	assert_flagger_runs_behind(displaced_root);
}
END_TEST

/* --------------------------------------------- wakes under saturation */

#define WAKES 25
#define SLEEP_NS MS(3)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sleeps WAKES times; records how late each timer wake ran. */
static void sleeper(void *arg)
{
	(void)arg;
	for (int i = 0; i < WAKES; i++) {
		uint64_t t0 = smarm_now_ns();
		HARNESS_EQ(smarm_actor_sleep(SLEEP_NS), 0);
		F.late[F.n_late++] = smarm_now_ns() - t0 - SLEEP_NS;
	}
}

/*
 * A ticker (itself woken by timers) sends a timestamp WAKES times; the
 * receiver records how long each message took to be received.
 */
static smarm_chan_t *tick_ch;

/*
 * The receivers below say they are about to wait before the first
 * message is sent, so every sample is a wake. Otherwise the first ones
 * also counted the receiver's first run: a spawn under saturation goes
 * behind the pinned spinners for a round, as on the BEAM (4 slices here,
 * the 34-49 ms first samples that made the ASan median bimodal).
 */
static smarm_chan_t *ready_ch;

static void say_ready(void)
{
	char c = 1;
	HARNESS_EQ(smarm_chan_send(ready_ch, &c), 0);
}

static void spawn_ready(smarm_pid_t *pid, void (*fn)(void *))
{
	char c;
	HARNESS_EQ(smarm_chan_alloc(&ready_ch, 1, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(pid, fn, NULL, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(ready_ch, &c), 0);
	harness_chan_drop(ready_ch);
	ready_ch = NULL;
}

static void ticker(void *arg)
{
	(void)arg;
	for (int i = 0; i < WAKES; i++) {
		uint64_t t;
		HARNESS_EQ(smarm_actor_sleep(SLEEP_NS), 0);
		t = smarm_now_ns();
		HARNESS_EQ(smarm_chan_send(tick_ch, &t), 0);
	}
}

static void tick_receiver(void *arg)
{
	(void)arg;
	say_ready();
	for (int i = 0; i < WAKES; i++) {
		uint64_t t = 0;
		HARNESS_EQ(smarm_chan_recv_timeout(tick_ch, &t, MS(5000)), 0);
		F.late[F.n_late++] = smarm_now_ns() - t;
	}
}

static void wake_root(void *arg)
{
	smarm_pid_t p[MAX_SPIN], a, b = SMARM_PID_NONE;
	bool messages = arg != NULL;
	spawn_spinners(p);
	while (atomic_load(&F.started) < F.n)
		smarm_actor_yield();
	if (messages) {
		HARNESS_EQ(smarm_chan_alloc(&tick_ch, sizeof(uint64_t), NULL),
			   0);
		spawn_ready(&b, tick_receiver);
		HARNESS_EQ(smarm_actor_spawn(&a, ticker, NULL, NULL), 0);
	} else {
		HARNESS_EQ(smarm_actor_spawn(&a, sleeper, NULL, NULL), 0);
	}
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	if (messages) {
		HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
		harness_chan_drop(tick_ch);
	}
	stop_spinners(p);
}

static void run_wakes(void *messages)
{
	reset(4); /* two per worker: every worker saturated */
	ck_assert_int_eq(run_sat(2, wake_root, messages), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(F.n_late, WAKES);
	qsort(F.late, WAKES, sizeof F.late[0], cmp_u64);
	/* Within about a slice, with room for a noisy machine. */
	ck_assert_msg(F.late[WAKES / 2] <
			      (uint64_t)(MS(20) * harness_time_scale()),
		      "median lateness %.1f ms", F.late[WAKES / 2] / 1e6);
	ck_assert_msg(F.late[WAKES - 1] <
			      (uint64_t)(MS(250) * harness_time_scale()),
		      "worst lateness %.1f ms", F.late[WAKES - 1] / 1e6);
}

START_TEST(test_fairness_timer_wake_under_saturation_is_prompt)
{
	run_wakes(NULL);
}
END_TEST

START_TEST(test_fairness_message_wake_under_saturation_is_prompt)
{
	run_wakes((void *)1);
}
END_TEST

/*
 * A plain thread sends a timestamp every SLEEP_NS to an actor among 8
 * spinners on 2 workers (4 pinned per worker), with the default 10 ms
 * slice: the woken receiver goes before the pinned spinners, so it waits
 * about one slice, not one per spinner (~40 ms).
 */
static void *thread_ticker(void *arg)
{
	(void)arg;
	for (int i = 0; i < WAKES; i++) {
		struct timespec ts = { 0, (long)SLEEP_NS };
		uint64_t t;
		nanosleep(&ts, NULL);
		t = smarm_now_ns();
		if (smarm_chan_send(tick_ch, &t) != 0)
			break;
	}
	return NULL;
}

static void thread_wake_root(void *arg)
{
	smarm_pid_t p[MAX_SPIN], b;
	pthread_t t;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&tick_ch, sizeof(uint64_t), NULL), 0);
	spawn_spinners(p);
	/* Let the spinners settle (spread and pinned) first. */
	HARNESS_EQ(smarm_actor_sleep(MS(50)), 0);
	spawn_ready(&b, tick_receiver);
	HARNESS_EQ(pthread_create(&t, NULL, thread_ticker, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	pthread_join(t, NULL);
	harness_chan_drop(tick_ch);
	stop_spinners(p);
}

START_TEST(test_fairness_thread_message_wake_under_saturation_is_prompt)
{
	reset(8);
	slice_ns = MS(10);
	ck_assert_int_eq(run_sat(2, thread_wake_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(F.n_late, WAKES);
	qsort(F.late, WAKES, sizeof F.late[0], cmp_u64);
	/* About one slice; it was 22-40 ms (one per pinned spinner). */
	ck_assert_msg(F.late[WAKES / 2] <
			      (uint64_t)(MS(20) * harness_time_scale()),
		      "median lateness %.1f ms", F.late[WAKES / 2] / 1e6);
}
END_TEST

/*
 * The same with an fd: a plain thread writes a timestamp into a pipe
 * every SLEEP_NS and the actor among the spinners waits for it to be
 * readable. The epoll thread's wake takes the shared queue's path, so it
 * too goes before the pinned spinners.
 */
static int fd_pipe[2];

static void *fd_ticker(void *arg)
{
	(void)arg;
	for (int i = 0; i < WAKES; i++) {
		struct timespec ts = { 0, (long)SLEEP_NS };
		uint64_t t;
		nanosleep(&ts, NULL);
		t = smarm_now_ns();
		if (write(fd_pipe[1], &t, sizeof t) != (ssize_t)sizeof t)
			break;
	}
	return NULL;
}

static void fd_receiver(void *arg)
{
	(void)arg;
	say_ready();
	for (int i = 0; i < WAKES; i++) {
		uint64_t t = 0;
		ptrdiff_t got = 0;
		HARNESS_EQ(smarm_io_wait_readable_timeout(fd_pipe[0], MS(5000)),
			   0);
		HARNESS_EQ(smarm_io_read(fd_pipe[0], &t, sizeof t, &got), 0);
		HARNESS_EQ(got, (ptrdiff_t)sizeof t);
		F.late[F.n_late++] = smarm_now_ns() - t;
	}
}

static void fd_wake_root(void *arg)
{
	smarm_pid_t p[MAX_SPIN], b;
	pthread_t t;
	(void)arg;
	spawn_spinners(p);
	HARNESS_EQ(smarm_actor_sleep(MS(50)), 0);
	spawn_ready(&b, fd_receiver);
	HARNESS_EQ(pthread_create(&t, NULL, fd_ticker, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	pthread_join(t, NULL);
	stop_spinners(p);
}

START_TEST(test_fairness_fd_wake_under_saturation_is_prompt)
{
	reset(8);
	slice_ns = MS(10);
	ck_assert_int_eq(pipe2(fd_pipe, O_NONBLOCK | O_CLOEXEC), 0);
	ck_assert_int_eq(run_sat(2, fd_wake_root, NULL), SMARM_EXIT_NORMAL);
	close(fd_pipe[0]);
	close(fd_pipe[1]);
	harness_checks_assert();
	ck_assert_int_eq(F.n_late, WAKES);
	qsort(F.late, WAKES, sizeof F.late[0], cmp_u64);
	ck_assert_msg(F.late[WAKES / 2] <
			      (uint64_t)(MS(20) * harness_time_scale()),
		      "median lateness %.1f ms", F.late[WAKES / 2] / 1e6);
	ck_assert_msg(F.late[WAKES - 1] <
			      (uint64_t)(MS(250) * harness_time_scale()),
		      "worst lateness %.1f ms", F.late[WAKES - 1] / 1e6);
}
END_TEST

/* ------------------------------------------------ stop of a pinned hog */

static void stop_root(void *arg)
{
	smarm_pid_t p[MAX_SPIN];
	int how = -1;
	uint64_t t0;
	(void)arg;
	spawn_spinners(p);
	while (atomic_load(&F.started) < F.n)
		smarm_actor_yield();
	/* Let them all be preempted (pinned) a few times. */
	HARNESS_EQ(smarm_actor_sleep(MS(20)), 0);
	t0 = smarm_now_ns();
	HARNESS_EQ(smarm_actor_stop(p[0]), 0);
	HARNESS_EQ(smarm_actor_join(p[0], &how, NULL), 0);
	F.stop_ns = smarm_now_ns() - t0;
	HARNESS_EQ(how, SMARM_EXIT_STOPPED);
	for (int i = 1; i < F.n; i++)
		p[i - 1] = p[i];
	F.n--;
	stop_spinners(p);
}

START_TEST(test_fairness_stop_lands_on_a_pinned_spinner)
{
	reset(4);
	ck_assert_int_eq(run_sat(2, stop_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_elapsed_lt(F.stop_ns, MS(500));
}
END_TEST

Suite *smarm_test_fairness_suite(void)
{
	Suite *s = suite_create("fairness");
	TCase *tc = tcase_create("shares");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fairness_spinners_share_the_cpu);
	tcase_add_test(tc, test_fairness_odd_spinners_all_run);
	tcase_add_test(tc, test_fairness_uneven_spinners_share_the_cpu);
	tcase_add_test(tc, test_fairness_safe_point_spinners_share_the_cpu);
	tcase_add_test(tc,
		       test_fairness_move_off_keeps_preempted_actors_in_place);
	tcase_add_test(tc, test_fairness_tls_holder_is_never_moved);
	tcase_add_test(tc, test_fairness_saturated_runs_last_about_one_slice);
	tcase_add_test(tc, test_fairness_spawn_under_saturation_runs);
	tcase_add_test(tc, test_fairness_spawn_chain_lets_a_queued_sibling_run);
	tcase_add_test(tc,
		       test_fairness_displaced_wakes_let_a_queued_actor_run);
	suite_add_tcase(s, tc);
	tc = tcase_create("latency");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fairness_timer_wake_under_saturation_is_prompt);
	tcase_add_test(tc,
		       test_fairness_message_wake_under_saturation_is_prompt);
	tcase_add_test(
		tc,
		test_fairness_thread_message_wake_under_saturation_is_prompt);
	tcase_add_test(tc, test_fairness_fd_wake_under_saturation_is_prompt);
	tcase_add_test(tc, test_fairness_stop_lands_on_a_pinned_spinner);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(fairness)
