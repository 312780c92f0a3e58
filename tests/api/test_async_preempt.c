/* SPDX-License-Identifier: MIT */
/*
 * test_async_preempt.c - signal-driven preemption: code that never reaches
 * a safe point (a pure arithmetic loop, a malloc/free or stdio loop) is
 * still switched out when its slice ends, keeps its registers, vector
 * state and errno across the switch, is left alone inside a
 * smarm_preempt_disable() region, and can be stopped.
 *
 * The hog loops below call nothing: every preemption they suffer is an
 * asynchronous one. They give up after a few seconds of work, so a broken
 * preemption fails a time bound instead of hanging the suite.
 */
#include "harness.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HOG_LIMIT 4000000000ull /* a few seconds of the loop below */

static atomic_int ap_flag;
static atomic_int ap_ran_out; /* a hog ran to its limit: flag unseen */

/* A pure loop: no calls, no safe points; stops on ap_flag. */
static uint64_t hog(uint64_t limit)
{
	uint64_t x = 1, i;
	for (i = 0; i < limit; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if ((i & 1023) == 0 &&
		    atomic_load_explicit(&ap_flag, memory_order_relaxed))
			break;
	}
	if (i == limit)
		atomic_store(&ap_ran_out, 1);
	return x;
}

struct ap_stats {
	int64_t signals, async, deferred;
};

static int ap_stack_mode = SMARM_STACK_AUTO;

/* Run root on a fresh node and collect the preemption counters. */
static int ap_run(int workers, int async, int64_t slice_ns, smarm_actor_cb root,
		  struct ap_stats *st)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int how = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, workers),
			 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_PREEMPT_ASYNC, async), 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_STACK_MODE, ap_stack_mode),
		0);
	if (slice_ns > 0) {
		ck_assert_int_eq(smarm_config_set_int(
					 cfg, SMARM_OPT_TIMESLICE_NS, slice_ns),
				 0);
		ck_assert_int_eq(smarm_config_set_int(cfg,
						      SMARM_OPT_ASYNC_SLICE_NS,
						      slice_ns),
				 0);
	}
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_node_run(node, root, NULL, &how, NULL), 0);
	if (st != NULL) {
		st->signals = harness_stat(node, SMARM_STAT_PREEMPT_SIGNALS);
		st->async = harness_stat(node, SMARM_STAT_PREEMPT_ASYNC);
		st->deferred = harness_stat(node, SMARM_STAT_PREEMPT_DEFERRED);
	}
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	return how;
}

static smarm_pid_t ap_spawn(smarm_actor_cb fn, void *arg)
{
	smarm_pid_t p;
	if (smarm_actor_spawn(&p, fn, arg, NULL) != 0)
		abort();
	return p;
}

/* ------------------------------------------- a hog cannot starve a sleeper */

static _Atomic uint64_t ap_sleep_took;
static _Atomic uint64_t ap_t0; /* when the root started the contest */
static atomic_int ap_hogs;

static void ap_hog(void *arg)
{
	(void)arg;
	hog(HOG_LIMIT);
	atomic_fetch_add(&ap_hogs, 1);
}

static void ap_sleeper(void *arg)
{
	(void)arg;
	smarm_actor_sleep(MS(10));
	atomic_store(&ap_sleep_took, harness_since(atomic_load(&ap_t0)));
	atomic_store(&ap_flag, 1);
}

/* The contest: a hog (queued first, so it runs first) against a sleeper. */
static smarm_actor_cb ap_contest_hog;

static void ap_root_contest(void *arg)
{
	smarm_pid_t h, s;
	(void)arg;
	atomic_store(&ap_t0, smarm_now_ns());
	h = ap_spawn(ap_contest_hog, NULL);
	s = ap_spawn(ap_sleeper, NULL);
	smarm_actor_join(s, NULL, NULL);
	smarm_actor_join(h, NULL, NULL);
}

START_TEST(test_async_pure_loop_cannot_starve_sleeper)
{
	struct ap_stats st;
	atomic_store(&ap_flag, 0);
	atomic_store(&ap_hogs, 0);
	atomic_store(&ap_ran_out, 0);
	ap_contest_hog = ap_hog;
	ck_assert_int_eq(ap_run(1, 1, 0, ap_root_contest, &st),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&ap_hogs), 1);
	/* The sleeper ran (and stopped the hog) before the hog's seconds
	 * of work were done: an order, which load does not change (a wall
	 * bound of 500 ms failed at load 12, under ASan: 763 ms). */
	ck_assert_int_eq(atomic_load(&ap_ran_out), 0);
	ck_assert_elapsed_lt(atomic_load(&ap_sleep_took), MS(5000));
	ck_assert_int_ge(st.async, 1);
	ck_assert_int_ge(st.signals, st.async);
}
END_TEST

/* Without the monitor the same hog holds the worker: the test above can
 * fail. A short hog keeps this one quick. */
static _Atomic uint64_t ap_hog_end;

static void ap_short_hog(void *arg)
{
	(void)arg;
	hog(200000000ull);
	atomic_store(&ap_hog_end, harness_since(atomic_load(&ap_t0)));
}

START_TEST(test_async_off_leaves_pure_loop_alone)
{
	struct ap_stats st;
	atomic_store(&ap_flag, 0);
	ap_contest_hog = ap_short_hog;
	ck_assert_int_eq(ap_run(1, 0, 0, ap_root_contest, &st),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(st.signals, 0);
	ck_assert_int_eq(st.async, 0);
	/* The sleeper only ran once the hog was done. */
	ck_assert_uint_ge(atomic_load(&ap_sleep_took),
			  atomic_load(&ap_hog_end));
}
END_TEST

/* --------------------------------------- malloc/free and stdio hammering */

/* Some work of its own per round, as real loops have: a checksum. */
static unsigned sum_bytes(const unsigned char *p, size_t n)
{
	unsigned h = 0;
	for (size_t i = 0; i < n; i++)
		h = h * 31u + p[i];
	return h;
}

static atomic_uint ap_sink;

static void ap_malloc_hammer(void *arg)
{
	unsigned r = (unsigned)(uintptr_t)arg;
	void *keep[16] = { 0 };
	while (!atomic_load_explicit(&ap_flag, memory_order_relaxed)) {
		unsigned k = (r = r * 1103515245u + 12345u) >> 28;
		free(keep[k]);
		keep[k] = malloc(64 + (r >> 16) % 4096);
		if (keep[k] != NULL) {
			memset(keep[k], (int)k, 64);
			atomic_fetch_add_explicit(&ap_sink,
						  sum_bytes(keep[k], 64),
						  memory_order_relaxed);
		}
	}
	for (int i = 0; i < 16; i++)
		free(keep[i]);
}

static void ap_stdio_hammer(void *arg)
{
	FILE *f = fopen("/dev/null", "w");
	char buf[64];
	unsigned i = 0;
	(void)arg;
	if (f == NULL)
		return;
	while (!atomic_load_explicit(&ap_flag, memory_order_relaxed)) {
		snprintf(buf, sizeof buf, "line %u %f\n", i, i * 0.5);
		fputs(buf, f);
		fprintf(f, "%s", buf);
		atomic_fetch_add_explicit(
			&ap_sink, sum_bytes((unsigned char *)buf, sizeof buf),
			memory_order_relaxed);
		i++;
	}
	fclose(f);
}

static void ap_root_hammers(void *arg)
{
	smarm_pid_t p[5];
	(void)arg;
	atomic_store(&ap_t0, smarm_now_ns());
	p[0] = ap_spawn(ap_malloc_hammer, (void *)(uintptr_t)1);
	p[1] = ap_spawn(ap_malloc_hammer, (void *)(uintptr_t)2);
	p[2] = ap_spawn(ap_stdio_hammer, NULL);
	p[3] = ap_spawn(ap_stdio_hammer, NULL);
	p[4] = ap_spawn(ap_sleeper, NULL);
	for (int i = 4; i >= 0; i--)
		smarm_actor_join(p[i], NULL, NULL);
}

START_TEST(test_async_malloc_and_stdio_loops_preempted_without_deadlock)
{
	struct ap_stats st;
	atomic_store(&ap_flag, 0);
	ck_assert_int_eq(ap_run(1, 1, 0, ap_root_hammers, &st),
			 SMARM_EXIT_NORMAL);
	ck_assert_elapsed_lt(atomic_load(&ap_sleep_took), MS(2000));
	ck_assert_int_ge(st.async, 1);
}
END_TEST

START_TEST(test_async_hammers_on_four_workers)
{
	struct ap_stats st;
	atomic_store(&ap_flag, 0);
	ck_assert_int_eq(ap_run(4, 1, 0, ap_root_hammers, &st),
			 SMARM_EXIT_NORMAL);
	ck_assert_elapsed_lt(atomic_load(&ap_sleep_took), MS(2000));
}
END_TEST

/*
 * Loops that no signal can switch out: they live in a shared object the
 * host has not allowed (async_preempt_foreign.c), so every signal is
 * deferred and the count of deferrals is how often the monitor asked.
 */
unsigned long ap_foreign_write_loop(int fd, atomic_int *stop);
unsigned long ap_foreign_late_loop(atomic_int *stop);

static atomic_int fl_stop;
static smarm_node_t *fl_node;
static int64_t fl_want;
static _Atomic int64_t fl_deferred;

/* Watches the node from outside: its one worker never gets free. */
static void *fl_watch(void *arg)
{
	uint64_t t0 = smarm_now_ns();
	uint64_t limit = (uint64_t)((double)MS(5000) * harness_time_scale());
	int64_t d = 0;
	(void)arg;
	while (d < fl_want && harness_since(t0) < limit) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL); /* a poll of the count, not a wait */
		if (smarm_node_get_int(fl_node, SMARM_STAT_PREEMPT_DEFERRED,
				       &d) != 0)
			break;
	}
	atomic_store(&fl_deferred, d);
	atomic_store(&fl_stop, 1);
	return NULL;
}

/* Deferrals of root's loop, alone on one worker, until want or 5 s. */
static int64_t ap_foreign_deferrals(smarm_actor_cb root, int64_t slice_ns,
				    int64_t want)
{
	smarm_config_t *cfg = NULL;
	pthread_t t;
	int how = -1;
	atomic_store(&fl_stop, 0);
	fl_want = want;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_PREEMPT_ASYNC, 1),
			 0);
	if (slice_ns > 0)
		ck_assert_int_eq(smarm_config_set_int(cfg,
						      SMARM_OPT_ASYNC_SLICE_NS,
						      slice_ns),
				 0);
	ck_assert_int_eq(smarm_node_open(&fl_node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(pthread_create(&t, NULL, fl_watch, NULL), 0);
	ck_assert_int_eq(smarm_node_run(fl_node, root, NULL, &how, NULL), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(harness_stat(fl_node, SMARM_STAT_PREEMPT_ASYNC), 0);
	ck_assert_int_eq(harness_stat(fl_node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(smarm_node_close(fl_node), 0);
	return atomic_load(&fl_deferred);
}

static void ap_quick_syscalls(void *arg)
{
	int fd = open("/dev/null", O_WRONLY);
	(void)arg;
	if (fd < 0)
		abort();
	ap_foreign_write_loop(fd, &fl_stop);
	close(fd);
}

/*
 * A loop of system calls that never sleep (stdio flushing to a file) is
 * not asleep in them when a signal arrives at a call's exit, where
 * pending signals are often delivered: it is asked again soon, as in
 * libc text, not with the backoff kept for sleeping calls, which let a
 * stdio hammer hold its worker for seconds. With the backoff, the
 * monitor asked about a dozen times in five seconds; asking soon, 100
 * times within about a second even at one signal per async slice.
 */
START_TEST(test_async_quick_syscall_loop_asked_again_soon)
{
	ck_assert_int_ge(ap_foreign_deferrals(ap_quick_syscalls, 0, 100), 100);
}
END_TEST

static void ap_late_verdicts(void *arg)
{
	(void)arg;
	ap_foreign_late_loop(&fl_stop);
}

/*
 * A verdict that comes late (the worker thread was off the CPU when its
 * signal came) is still looked for every 50 us after a libc deferral,
 * not left to the next tick. The loop keeps SIGURG blocked for about
 * 1 ms at a time, so each signal is handled at the next unblock; with a
 * 200 ms async slice, leaving it to the tick asks about 5 times a
 * second, looking for it soon about once a millisecond.
 */
START_TEST(test_async_late_libc_verdict_looked_for_soon)
{
	ck_assert_int_ge(ap_foreign_deferrals(ap_late_verdicts, MS(200), 100),
			 100);
}
END_TEST

/* ------------------------------------ registers, vectors and errno intact */

typedef double v2d __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));

/* Scalar and SSE state carried in registers through a long loop. */
static double fp_work(double seed, uint64_t n)
{
	double a = seed, b = 1.0 / seed, c = 0.0;
	v2d v = { seed, -seed }, u = { 0.5, 0.25 };
	for (uint64_t i = 0; i < n; i++) {
		a = a * 1.0000001 + b;
		b = b * 0.9999999 - a * 1e-9;
		v = v * u + (v2d){ a, b };
		u = u * 0.999999 + (v2d){ 1e-7, 2e-7 };
		c += (i & 1) ? v[0] : -v[1];
		if (c > 1e12)
			c -= 1e12;
	}
	return a + b + c + v[0] + v[1];
}

__attribute__((target("avx2"))) static double avx_work(double seed, uint64_t n)
{
	v4d v = { seed, seed * 2, seed * 3, seed * 4 };
	v4d u = { 0.5, 0.25, 0.125, 0.0625 };
	for (uint64_t i = 0; i < n; i++) {
		v = v * u + (v4d){ 1.0, 2.0, 3.0, 4.0 };
		u = u * 0.9999999 + (v4d){ 1e-7, 1e-7, 1e-7, 1e-7 };
	}
	return v[0] + v[1] + v[2] + v[3];
}

#define FP_N 30000000ull
#define AVX_N 30000000ull
static double fp_got[2], avx_got[2];
static atomic_int errno_ok, errno_checks;
static bool have_avx2;

static void ap_fp(void *arg)
{
	int k = (int)(uintptr_t)arg;
	fp_got[k] = fp_work(1.5 + k, FP_N);
	if (have_avx2)
		avx_got[k] = avx_work(0.75 + k, AVX_N);
}

/* errno belongs to the OS thread: preemption must keep ours. */
static void ap_errno_keeper(void *arg)
{
	(void)arg;
	for (int round = 0; round < 20; round++) {
		errno = 4242 + round;
		hog(3000000ull);
		atomic_fetch_add(&errno_checks, 1);
		if (errno == 4242 + round)
			atomic_fetch_add(&errno_ok, 1);
	}
}

static void ap_errno_clobber(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < 30000000ull; i++)
		errno = (int)(i & 0xffff);
}

static void ap_root_fp(void *arg)
{
	smarm_pid_t p[4];
	(void)arg;
	p[0] = ap_spawn(ap_fp, (void *)(uintptr_t)0);
	p[1] = ap_spawn(ap_fp, (void *)(uintptr_t)1);
	p[2] = ap_spawn(ap_errno_keeper, NULL);
	p[3] = ap_spawn(ap_errno_clobber, NULL);
	for (int i = 0; i < 4; i++)
		smarm_actor_join(p[i], NULL, NULL);
}

START_TEST(test_async_keeps_fp_vector_and_errno)
{
	struct ap_stats st;
	double want[2], want_avx[2] = { 0, 0 };
	have_avx2 = __builtin_cpu_supports("avx2");
	for (int k = 0; k < 2; k++) {
		want[k] = fp_work(1.5 + k, FP_N);
		if (have_avx2)
			want_avx[k] = avx_work(0.75 + k, AVX_N);
	}
	atomic_store(&errno_ok, 0);
	atomic_store(&errno_checks, 0);
	/* A 200 us slice: dozens of preemptions inside each loop. */
	ck_assert_int_eq(ap_run(1, 1, 200000, ap_root_fp, &st),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_ge(st.async, 20);
	for (int k = 0; k < 2; k++) {
		ck_assert_mem_eq(&fp_got[k], &want[k], sizeof(double));
		if (have_avx2)
			ck_assert_mem_eq(&avx_got[k], &want_avx[k],
					 sizeof(double));
	}
	ck_assert_int_eq(atomic_load(&errno_checks), 20);
	ck_assert_int_eq(atomic_load(&errno_ok), 20);
}
END_TEST

/* ------------------------------------------------ a disabled region holds */

static atomic_int ap_ticks;
static int ap_tick_before, ap_tick_region_end, ap_tick_after;
static int ap_region_rc;

static void ap_ticker(void *arg)
{
	(void)arg;
	while (!atomic_load(&ap_flag)) {
		atomic_fetch_add(&ap_ticks, 1);
		smarm_actor_yield();
	}
}

static void ap_region(void *arg)
{
	uint64_t t0;
	(void)arg;
	ap_region_rc = smarm_preempt_disable();
	ap_tick_before = atomic_load(&ap_ticks);
	t0 = smarm_now_ns();
	while (smarm_now_ns() - t0 < MS(40))
		hog(100000);
	ap_tick_region_end = atomic_load(&ap_ticks);
	/* A 1 ms async slice: dozens of deferred signals by now. */
	ap_region_rc |= smarm_preempt_enable(); /* the slice ended: yields */
	ap_tick_after = atomic_load(&ap_ticks);
	atomic_store(&ap_flag, 1);
}

static void ap_root_region(void *arg)
{
	smarm_pid_t t, r;
	(void)arg;
	t = ap_spawn(ap_ticker, NULL);
	smarm_actor_yield(); /* the ticker is running and yielding */
	r = ap_spawn(ap_region, NULL);
	smarm_actor_join(r, NULL, NULL);
	smarm_actor_join(t, NULL, NULL);
}

START_TEST(test_async_disabled_region_not_preempted)
{
	struct ap_stats st;
	atomic_store(&ap_flag, 0);
	atomic_store(&ap_ticks, 0);
	ck_assert_int_eq(ap_run(1, 1, MS(1), ap_root_region, &st),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ap_region_rc, 0);
	ck_assert_int_eq(ap_tick_before, ap_tick_region_end);
	ck_assert_int_gt(ap_tick_after, ap_tick_region_end);
	ck_assert_int_ge(st.deferred, 1);
}
END_TEST

/* ---------------------------------------------- a stop ends a tight loop */

static _Atomic uint64_t ap_stop_took;
static int ap_stop_how;

static void ap_forever(void *arg)
{
	(void)arg;
	hog(HOG_LIMIT * 4);
}

static void ap_root_stop(void *arg)
{
	smarm_pid_t h;
	uint64_t t0;
	(void)arg;
	h = ap_spawn(ap_forever, NULL);
	smarm_actor_sleep(MS(20));
	t0 = smarm_now_ns();
	smarm_actor_stop(h);
	smarm_actor_join(h, &ap_stop_how, NULL);
	atomic_store(&ap_stop_took, harness_since(t0));
}

START_TEST(test_async_stop_ends_tight_loop)
{
	atomic_store(&ap_flag, 0);
	ap_stop_how = -1;
	ck_assert_int_eq(ap_run(1, 1, 0, ap_root_stop, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ap_stop_how, SMARM_EXIT_STOPPED);
	ck_assert_elapsed_lt(atomic_load(&ap_stop_took), MS(500));
}
END_TEST

START_TEST(test_async_stop_ends_tight_loop_four_workers)
{
	atomic_store(&ap_flag, 0);
	ap_stop_how = -1;
	ck_assert_int_eq(ap_run(4, 1, 0, ap_root_stop, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ap_stop_how, SMARM_EXIT_STOPPED);
	ck_assert_elapsed_lt(atomic_load(&ap_stop_took), MS(500));
}
END_TEST

/* Root exit stops a hog that never reaches a safe point. */
static void ap_root_leaves_hog(void *arg)
{
	(void)arg;
	ap_spawn(ap_forever, NULL);
	smarm_actor_sleep(MS(5));
}

START_TEST(test_async_root_exit_stops_hog)
{
	uint64_t t0 = smarm_now_ns();
	atomic_store(&ap_flag, 0);
	ck_assert_int_eq(ap_run(2, 1, 0, ap_root_leaves_hog, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_elapsed_lt(harness_since(t0), MS(1000));
}
END_TEST

/* ----------------------------------- many hogs on oversubscribed workers */

static atomic_int ap_done;

static void ap_hog_chunked(void *arg)
{
	(void)arg;
	hog(20000000ull);
	atomic_fetch_add(&ap_done, 1);
}

static void ap_root_many(void *arg)
{
	smarm_pid_t p[12];
	(void)arg;
	for (int i = 0; i < 12; i++)
		p[i] = ap_spawn(ap_hog_chunked, NULL);
	smarm_actor_sleep(MS(10));
	atomic_store(&ap_sleep_took, 1);
	for (int i = 0; i < 12; i++)
		smarm_actor_join(p[i], NULL, NULL);
}

START_TEST(test_async_many_hogs_four_workers)
{
	struct ap_stats st;
	atomic_store(&ap_flag, 0);
	atomic_store(&ap_done, 0);
	ck_assert_int_eq(ap_run(4, 1, 100000, ap_root_many, &st),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&ap_done), 12);
	ck_assert_int_ge(st.async, 1);
}
END_TEST

/* Dense stacks have no guard page: the trampoline's save area must fit
 * above the stack's canary, which every switch-out checks. */
START_TEST(test_async_many_hogs_dense_stacks)
{
	struct ap_stats st;
	atomic_store(&ap_flag, 0);
	atomic_store(&ap_done, 0);
	ap_stack_mode = SMARM_STACK_DENSE;
	ck_assert_int_eq(ap_run(4, 1, 100000, ap_root_many, &st),
			 SMARM_EXIT_NORMAL);
	ap_stack_mode = SMARM_STACK_AUTO;
	ck_assert_int_eq(atomic_load(&ap_done), 12);
	ck_assert_int_ge(st.async, 1);
}
END_TEST

/* ------------------------------------------------------ allowed objects */

START_TEST(test_async_allow_object_errors)
{
	void *heap = malloc(16);
	void *fn_smarm = dlsym(RTLD_DEFAULT, "smarm_node_run");
	void *fn_libc = dlsym(RTLD_DEFAULT, "getpid");
	ck_assert_int_eq(smarm_preempt_allow_object(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_preempt_allow_object(heap), SMARM_ENOENT);
	ck_assert_ptr_nonnull(fn_smarm);
	ck_assert_int_eq(smarm_preempt_allow_object(fn_smarm), SMARM_EINVAL);
	ck_assert_ptr_nonnull(fn_libc);
	ck_assert_int_eq(smarm_preempt_allow_object(fn_libc), SMARM_EINVAL);
	/* The executable is allowed from the start; asking again is fine. */
	ck_assert_int_eq(smarm_preempt_allow_object((void *)(uintptr_t)hog), 0);
	free(heap);
}
END_TEST

/* ------------------------------------------- regressions from review */

/* A pure loop for about ms milliseconds of cycles (no calls). */
static void spin_cycles_ms(unsigned ms)
{
	static uint64_t per_ms;
	uint64_t t0, end;
	if (per_ms == 0) {
		uint64_t n0 = smarm_now_ns(), c0 = __builtin_ia32_rdtsc();
		while (smarm_now_ns() - n0 < MS(2))
			;
		per_ms = (__builtin_ia32_rdtsc() - c0) / 2;
	}
	t0 = __builtin_ia32_rdtsc();
	end = t0 + per_ms * ms;
	while (__builtin_ia32_rdtsc() < end)
		hog(1000);
}

/* The x87 stack of a preempted actor must not leak into the next one. */
static atomic_long x87_wrong, x87_done;

static void ap_x87_full(void *arg)
{
	(void)arg;
	/* Eight x87 registers in use (as after MMX code), then a loop. */
	__asm__ volatile("fld1; fld1; fld1; fld1; fld1; fld1; fld1; fld1" ::
				 : "memory");
	spin_cycles_ms(150);
	__asm__ volatile("fninit" ::: "memory");
}

static void ap_x87_user(void *arg)
{
	uint64_t t0 = smarm_now_ns();
	(void)arg;
	while (smarm_now_ns() - t0 < MS(100)) {
		volatile long double x = 1.5L;
		long double r = x * x + x;
		atomic_fetch_add(&x87_done, 1);
		if (!(r == 3.75L))
			atomic_fetch_add(&x87_wrong, 1);
	}
}

static void ap_root_x87(void *arg)
{
	smarm_pid_t a, b;
	(void)arg;
	a = ap_spawn(ap_x87_full, NULL);
	b = ap_spawn(ap_x87_user, NULL);
	smarm_actor_join(a, NULL, NULL);
	smarm_actor_join(b, NULL, NULL);
}

START_TEST(test_async_x87_state_not_leaked)
{
	struct ap_stats st;
	atomic_store(&x87_wrong, 0);
	atomic_store(&x87_done, 0);
	ck_assert_int_eq(ap_run(1, 1, MS(1), ap_root_x87, &st),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_ge(st.async, 1);
	ck_assert_int_gt(atomic_load(&x87_done), 0);
	ck_assert_int_eq(atomic_load(&x87_wrong), 0);
}
END_TEST

/*
 * A yield must see the pinned FIFO: a preempted actor is other work.
 * The hog spins until the yielder has run while it spun (on one worker,
 * proof that it was preempted: a fixed 30 ms of wall time was not, on a
 * loaded machine, where the worker could be off its CPU for all of it),
 * then it needs the yielder's yields to get its turn back and end.
 */
static atomic_int pin_flag;
static atomic_int pin_turns; /* the yielder's loops */
static _Atomic uint64_t pin_waited;

static void ap_pin_hog(void *arg)
{
	int n0 = atomic_load(&pin_turns);
	uint64_t t0 = smarm_now_ns();
	(void)arg;
	do
		spin_cycles_ms(1);
	while (atomic_load(&pin_turns) == n0 && smarm_now_ns() - t0 < MS(3000));
	atomic_store(&pin_flag, 1);
}

static void ap_pin_yielder(void *arg)
{
	uint64_t t0 = smarm_now_ns();
	(void)arg;
	smarm_preempt_disable(); /* only the yields below are safe points */
	while (!atomic_load(&pin_flag) && smarm_now_ns() - t0 < MS(3000)) {
		atomic_fetch_add(&pin_turns, 1);
		smarm_actor_yield();
	}
	smarm_preempt_enable();
	atomic_store(&pin_waited, harness_since(t0));
}

static void ap_root_pin(void *arg)
{
	smarm_pid_t p, x;
	(void)arg;
	p = ap_spawn(ap_pin_hog, NULL);
	x = ap_spawn(ap_pin_yielder, NULL);
	smarm_actor_join(x, NULL, NULL);
	atomic_store(&pin_flag, 1);
	smarm_actor_join(p, NULL, NULL);
}

START_TEST(test_async_yield_runs_pinned_actor)
{
	struct ap_stats st;
	atomic_store(&pin_flag, 0);
	atomic_store(&pin_turns, 0);
	ck_assert_int_eq(ap_run(1, 1, MS(1), ap_root_pin, &st),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_ge(st.async, 1);
	ck_assert_elapsed_lt(atomic_load(&pin_waited), MS(1000));
}
END_TEST

/* SIGURG the runtime did not send reaches the host's handler. */
static atomic_int host_urg_hits;

static void host_urg(int sig)
{
	(void)sig;
	atomic_fetch_add(&host_urg_hits, 1);
}

static void ap_root_quick(void *arg)
{
	(void)arg;
}

static void *urg_self(void *arg)
{
	(void)arg;
	pthread_kill(pthread_self(), SIGURG);
	return NULL;
}

START_TEST(test_async_host_sigurg_chained)
{
	struct sigaction sa, old;
	pthread_t t;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = host_urg;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGURG, &sa, &old), 0);
	ck_assert_int_eq(ap_run(1, 1, 0, ap_root_quick, NULL),
			 SMARM_EXIT_NORMAL);
	atomic_store(&host_urg_hits, 0);
	raise(SIGURG); /* tgkill from this process, on a former worker */
	ck_assert_int_eq(pthread_create(&t, NULL, urg_self, NULL), 0);
	pthread_join(t, NULL);
	kill(getpid(), SIGURG);
	ck_assert_int_eq(atomic_load(&host_urg_hits), 3);
}
END_TEST

/* The runtime's brackets around destructors are not the user's regions. */
static int dtor_enable_rc = 99;

static void dtor_enabling(void *elem)
{
	(void)elem;
	dtor_enable_rc = smarm_preempt_enable();
}

static int after_rc[2];

static void ap_root_dtor(void *arg)
{
	smarm_chan_t *ch;
	int v = 1;
	(void)arg;
	if (smarm_chan_alloc(&ch, sizeof v, dtor_enabling) != 0 ||
	    smarm_chan_send(ch, &v) != 0)
		abort();
	harness_chan_drop(ch); /* destroys the queued element */
	after_rc[0] = smarm_preempt_disable();
	after_rc[1] = smarm_preempt_enable();
}

START_TEST(test_async_destructor_cannot_unbalance_regions)
{
	ck_assert_int_eq(ap_run(1, 1, 0, ap_root_dtor, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(dtor_enable_rc, SMARM_ESTATE);
	ck_assert_int_eq(after_rc[0], 0);
	ck_assert_int_eq(after_rc[1], 0);
}
END_TEST

/*
 * A host signal handler that runs on an actor's stack (no SA_ONSTACK) is
 * not switched out: it may have interrupted the runtime under a lock, and
 * its blocked mask would travel to the next actor.
 */
static atomic_int usr1_inside, usr1_seen_blocked, usr1_stop;
static pthread_t usr1_target;

static void host_usr1(int sig)
{
	(void)sig;
	atomic_store(&usr1_inside, 1);
	spin_cycles_ms(4);
	atomic_store(&usr1_inside, 0);
}

static void ap_mask_yielder(void *arg)
{
	(void)arg;
	while (!atomic_load(&usr1_stop)) {
		sigset_t cur;
		pthread_sigmask(SIG_BLOCK, NULL, &cur);
		if (sigismember(&cur, SIGUSR1) && atomic_load(&usr1_inside))
			atomic_fetch_add(&usr1_seen_blocked, 1);
		smarm_actor_yield();
	}
}

static void ap_root_usr1(void *arg)
{
	smarm_pid_t p[4];
	(void)arg;
	for (int i = 0; i < 4; i++)
		p[i] = ap_spawn(ap_mask_yielder, NULL);
	for (int i = 0; i < 4; i++)
		smarm_actor_join(p[i], NULL, NULL);
}

static void *usr1_pest(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		pthread_kill(usr1_target, SIGUSR1);
		usleep(5000);
	}
	atomic_store(&usr1_stop, 1);
	return NULL;
}

START_TEST(test_async_host_signal_handler_not_switched_out)
{
	struct sigaction sa;
	pthread_t t;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = host_usr1;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	usr1_target = pthread_self(); /* worker 0 */
	atomic_store(&usr1_stop, 0);
	atomic_store(&usr1_seen_blocked, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, usr1_pest, NULL), 0);
	ck_assert_int_eq(ap_run(1, 1, MS(1), ap_root_usr1, NULL),
			 SMARM_EXIT_NORMAL);
	pthread_join(t, NULL);
	ck_assert_int_eq(atomic_load(&usr1_seen_blocked), 0);
}
END_TEST

/*
 * The handler looks at the code around a pc outside allowed text (is it a
 * syscall?). A pc at the first byte of a mapping whose previous page is
 * unreadable must not make the handler fault: `rep stosb` at a page
 * start is interrupted with the pc on that first byte.
 */
static unsigned char *rs_code, *rs_buf;
static atomic_int rs_done;

/* 20 rounds, and more until the monitor has sent a signal (on a loaded
 * machine the monitor thread may not have run in 20: a lone failure
 * beside two spin loops), for at most 20 s. */
static void ap_rep_stos(void *arg)
{
	uint64_t until = smarm_now_ns() + MS(20000);
	(void)arg;
	for (int i = 0;
	     i < 20 || (harness_stat(smarm_node_current(),
				     SMARM_STAT_PREEMPT_SIGNALS) < 1 &&
			smarm_now_ns() < until);
	     i++) {
		void *d = rs_buf;
		unsigned long c = 32ul << 20;
		__asm__ volatile(
			"sub $128, %%rsp\n\tcall *%2\n\tadd $128, %%rsp"
			: "+D"(d), "+c"(c)
			: "r"(rs_code), "a"(i)
			: "memory", "cc");
	}
	atomic_store(&rs_done, 1);
}

START_TEST(test_async_signal_at_mapping_start_is_safe)
{
	long pg = sysconf(_SC_PAGESIZE);
	static const unsigned char body[] = { 0xf3, 0xaa, 0xc3 }; /* rep stosb;
								     ret */
	struct ap_stats st;
	unsigned char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	memcpy(m + pg, body, sizeof body);
	ck_assert_int_eq(mprotect(m, pg, PROT_NONE), 0);
	ck_assert_int_eq(mprotect(m + pg, pg, PROT_READ | PROT_EXEC), 0);
	rs_code = m + pg;
	rs_buf = malloc(32ul << 20);
	ck_assert_ptr_nonnull(rs_buf);
	atomic_store(&rs_done, 0);
	ck_assert_int_eq(ap_run(1, 1, 100000, ap_rep_stos, &st),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&rs_done), 1);
	ck_assert_int_ge(st.signals, 1);
	free(rs_buf);
	munmap(m, 2 * pg);
}
END_TEST

Suite *smarm_test_async_preempt_suite(void)
{
	Suite *s = suite_create("async_preempt");
	TCase *tc = tcase_create("async");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_async_pure_loop_cannot_starve_sleeper);
	tcase_add_test(tc, test_async_off_leaves_pure_loop_alone);
	tcase_add_test(
		tc,
		test_async_malloc_and_stdio_loops_preempted_without_deadlock);
	tcase_add_test(tc, test_async_hammers_on_four_workers);
	tcase_add_test(tc, test_async_quick_syscall_loop_asked_again_soon);
	tcase_add_test(tc, test_async_late_libc_verdict_looked_for_soon);
	tcase_add_test(tc, test_async_keeps_fp_vector_and_errno);
	tcase_add_test(tc, test_async_disabled_region_not_preempted);
	tcase_add_test(tc, test_async_stop_ends_tight_loop);
	tcase_add_test(tc, test_async_stop_ends_tight_loop_four_workers);
	tcase_add_test(tc, test_async_root_exit_stops_hog);
	tcase_add_test(tc, test_async_many_hogs_four_workers);
	tcase_add_test(tc, test_async_many_hogs_dense_stacks);
	tcase_add_test(tc, test_async_allow_object_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("review");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_async_x87_state_not_leaked);
	tcase_add_test(tc, test_async_yield_runs_pinned_actor);
	tcase_add_test(tc, test_async_host_sigurg_chained);
	tcase_add_test(tc, test_async_destructor_cannot_unbalance_regions);
	tcase_add_test(tc, test_async_host_signal_handler_not_switched_out);
	tcase_add_test(tc, test_async_signal_at_mapping_start_is_safe);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(async_preempt)
