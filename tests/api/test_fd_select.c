/* SPDX-License-Identifier: MIT */
/*
 * test_fd_select.c - select sets (smarm_selset_*) with fd arms (smarm's
 * fd_select.rs): ready-now arms win without parking, fd arms park and win,
 * losing and timed-out fd arms are unregistered and the fd stays re-waitable,
 * EBADF before parking retires the wait, a stopped selector does not poison its
 * fds, one waiter per fd; the fd wait timeouts; hang-ups count as ready;
 * argument errors; and (terminal_wake.rs) a run ends promptly when root
 * exit stop-cancels an fd waiter.
 *
 * Results observed inside actors go into the global `R` and are asserted
 * after the run returns.
 */
#include "harness.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static struct {
	int rc[20];
	size_t idx[16];
	uint64_t ns[16];
	int64_t stat[8];
	atomic_int errors;
	atomic_int flag;
	int how[4];
	int p[2]; /* pipe A: [0] read end, [1] write end */
	int q[2]; /* pipe B */
} R;

static void reset(void)
{
	memset(&R, 0, sizeof R);
	for (int i = 0; i < 16; i++)
		R.idx[i] = (size_t)-1;
	ck_assert_int_eq(pipe2(R.p, O_NONBLOCK | O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(R.q, O_NONBLOCK | O_CLOEXEC), 0);
}

static void close_pipes(void)
{
	close(R.p[0]);
	close(R.p[1]);
	close(R.q[0]);
	close(R.q[1]);
}

/* The tests describe arms in arrays and wait through a select set. */
struct tarm {
	smarm_chan_t *chan; /* NULL: an fd arm */
	int fd;
	uint32_t events;
};

static struct tarm fd_arm(int fd, uint32_t ev)
{
	struct tarm a = { .chan = NULL, .fd = fd, .events = ev };
	return a;
}

static struct tarm chan_arm(smarm_chan_t *ch)
{
	struct tarm a = { .chan = ch, .fd = -1, .events = 0 };
	return a;
}

static void set_free_cb(void *set)
{
	smarm_selset_free(set);
}

/*
 * Build a set from arms, wait on it, free it. The set is freed by a
 * cleanup handler, as an actor that may be stopped inside the wait must.
 */
static int sel_wait(const struct tarm *arms, size_t n, uint64_t timeout_ns,
		    size_t *ready)
{
	smarm_selset_t *set;
	int rc = smarm_selset_alloc(&set);
	if (rc != 0)
		return rc;
	if (smarm_cleanup_push(set_free_cb, set) != 0) {
		smarm_selset_free(set);
		return SMARM_ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = arms[i].chan != NULL
			     ? smarm_selset_add_chan(set, arms[i].chan, NULL)
			     : smarm_selset_add_fd(set, arms[i].fd,
						   arms[i].events, NULL);
	if (rc == 0)
		rc = smarm_selset_wait(set, timeout_ns, ready);
	smarm_cleanup_pop(1); /* frees the set */
	return rc;
}

static smarm_chan_t *new_chan(void)
{
	smarm_chan_t *ch = NULL;
	if (smarm_chan_alloc(&ch, sizeof(int), NULL) != 0)
		R.errors++;
	return ch;
}

static void write_byte(int fd)
{
	char c = 'x';
	if (write(fd, &c, 1) != 1)
		R.errors++;
}

static void drain(int fd)
{
	char b[64];
	while (read(fd, b, sizeof b) > 0)
		;
}

/*
 * Writes to fd (or sends 1 on ch when set) once `waiters` fd waits are
 * registered with the epoll thread: the waiter under test has parked.
 */
struct late {
	int fd;
	int64_t waiters;
	smarm_chan_t *ch;
};

static void late_writer(void *arg)
{
	struct late *l = arg;
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				l->waiters))
		R.errors++;
	if (l->ch != NULL) {
		int v = 1;
		if (smarm_chan_send(l->ch, &v) != 0)
			R.errors++;
	} else {
		write_byte(l->fd);
	}
}

/* The fd is usable again: a wait registers and a write wakes it. */
static int rewait(int rfd, int wfd)
{
	struct late l = { wfd, 1, NULL };
	smarm_pid_t pid;
	int rc;
	smarm_actor_spawn(&pid, late_writer, &l, NULL);
	rc = smarm_io_wait_readable_timeout(rfd, MS(10000));
	smarm_actor_join(pid, NULL, NULL);
	drain(rfd);
	return rc;
}

static void flag_actor(void *arg)
{
	(void)arg;
	atomic_store(&R.flag, 1);
}

/* ----------------------------------------------------------- ready now */

static void ready_now_root(void *arg)
{
	smarm_chan_t *ch = new_chan();
	struct tarm arms[2] = { chan_arm(ch),
				fd_arm(R.p[0], SMARM_IO_READABLE) };
	(void)arg;
	write_byte(R.p[1]);
	smarm_actor_spawn(NULL, flag_actor, NULL, NULL);
	R.rc[0] = sel_wait(arms, 2, SMARM_NO_TIMEOUT, &R.idx[0]);
	R.rc[1] = atomic_load(&R.flag);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_THREADS);
	harness_chan_drop(ch);
}

START_TEST(test_fd_select_ready_now_fd_arm_wins_without_parking)
{
	reset();
	ck_assert_int_eq(harness_run(1, ready_now_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 1);
	ck_assert_int_eq(R.rc[1], 0); /* did not park */
	ck_assert_int_eq(R.stat[0], 0);
	close_pipes();
}
END_TEST

/* --------------------------------------------------------- park, win */

static void park_win_root(void *arg)
{
	smarm_chan_t *ch = new_chan();
	struct tarm arms[2] = { chan_arm(ch),
				fd_arm(R.p[0], SMARM_IO_READABLE) };
	struct late l = { R.p[1], 1, NULL };
	(void)arg;
	smarm_actor_spawn(NULL, late_writer, &l, NULL);
	R.rc[0] = sel_wait(arms, 2, SMARM_NO_TIMEOUT, &R.idx[0]);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	R.stat[1] = harness_actor_stat(SMARM_STAT_IO_THREADS);
	harness_chan_drop(ch);
}

START_TEST(test_fd_select_fd_arm_parks_and_wins_over_idle_channel)
{
	reset();
	ck_assert_int_eq(harness_run(4, park_win_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 1);
	ck_assert_int_eq(R.stat[0], 0);
	ck_assert_int_eq(R.stat[1], 1); /* the epoll thread ran */
	close_pipes();
}
END_TEST

static void loser_root(void *arg)
{
	smarm_chan_t *ch = new_chan();
	struct tarm arms[2] = { chan_arm(ch),
				fd_arm(R.p[0], SMARM_IO_READABLE) };
	struct late l = { -1, 1, ch };
	int v = 0;
	(void)arg;
	smarm_actor_spawn(NULL, late_writer, &l, NULL);
	R.rc[0] = sel_wait(arms, 2, SMARM_NO_TIMEOUT, &R.idx[0]);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	R.rc[1] = smarm_chan_try_recv(ch, &v);
	R.rc[2] = rewait(R.p[0], R.p[1]);
	harness_chan_drop(ch);
}

START_TEST(test_fd_select_losing_fd_arm_cleaned_up_fd_rewaitable)
{
	reset();
	ck_assert_int_eq(harness_run(4, loser_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 0);
	ck_assert_int_eq(R.stat[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	close_pipes();
}
END_TEST

static void later_ready_root(void *arg)
{
	smarm_chan_t *ch = new_chan();
	struct tarm arms[2] = { fd_arm(R.p[0], SMARM_IO_READABLE),
				chan_arm(ch) };
	int v = 5;
	(void)arg;
	smarm_chan_send(ch, &v);
	R.rc[0] = sel_wait(arms, 2, SMARM_NO_TIMEOUT, &R.idx[0]);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	R.rc[1] = rewait(R.p[0], R.p[1]);
	harness_chan_drop(ch);
}

START_TEST(test_fd_select_ready_later_arm_unregisters_earlier_fd_arm)
{
	reset();
	ck_assert_int_eq(harness_run(2, later_ready_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 1);
	ck_assert_int_eq(R.stat[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	close_pipes();
}
END_TEST

static void two_fds_root(void *arg)
{
	struct tarm arms[2] = { fd_arm(R.p[0], SMARM_IO_READABLE),
				fd_arm(R.q[0], SMARM_IO_READABLE) };
	struct late l = { R.q[1], 2, NULL }; /* both arms */
	(void)arg;
	smarm_actor_spawn(NULL, late_writer, &l, NULL);
	R.rc[0] = sel_wait(arms, 2, SMARM_NO_TIMEOUT, &R.idx[0]);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	R.rc[1] = rewait(R.p[0], R.p[1]);
}

START_TEST(test_fd_select_two_fd_arms_second_fires_first_usable)
{
	reset();
	ck_assert_int_eq(harness_run(4, two_fds_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 1);
	ck_assert_int_eq(R.stat[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	close_pipes();
}
END_TEST

/* ----------------------------------------------------------- timeouts */

static void timer_beats_root(void *arg)
{
	struct tarm arm = fd_arm(R.p[0], SMARM_IO_READABLE);
	uint64_t t0;
	(void)arg;
	t0 = smarm_now_ns();
	R.rc[0] = sel_wait(&arm, 1, MS(30), &R.idx[0]);
	R.ns[0] = harness_since(t0);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	R.rc[1] = rewait(R.p[0], R.p[1]);
}

START_TEST(test_fd_select_timer_beats_idle_fd_arm_fd_usable)
{
	reset();
	ck_assert_int_eq(harness_run(4, timer_beats_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_uint_ge(R.ns[0], MS(30));
	ck_assert_int_eq(R.stat[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	close_pipes();
}
END_TEST

static void wait_timeout_root(void *arg)
{
	uint64_t t0;
	(void)arg;
	t0 = smarm_now_ns();
	R.rc[0] = smarm_io_wait_readable_timeout(R.p[0], MS(30));
	R.ns[0] = harness_since(t0);
	write_byte(R.p[1]);
	R.rc[1] = smarm_io_wait_readable_timeout(R.p[0], MS(30));
	drain(R.p[0]);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_fd_select_wait_readable_timeout_times_out_then_succeeds)
{
	reset();
	ck_assert_int_eq(harness_run(2, wait_timeout_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_uint_ge(R.ns[0], MS(30));
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.stat[0], 0);
	close_pipes();
}
END_TEST

static void late_write_root(void *arg)
{
	struct late l = { R.p[1], 1, NULL };
	uint64_t t0;
	(void)arg;
	smarm_actor_spawn(NULL, late_writer, &l, NULL);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_io_wait_readable_timeout(R.p[0], MS(10000));
	R.ns[0] = harness_since(t0);
}

START_TEST(test_fd_select_late_write_wakes_timeout_wait)
{
	reset();
	ck_assert_int_eq(harness_run(4, late_write_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_elapsed_lt(R.ns[0], MS(5000));
	close_pipes();
}
END_TEST

static void writable_timeout_root(void *arg)
{
	uint64_t t0;
	(void)arg;
	smarm_actor_spawn(NULL, flag_actor, NULL, NULL);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_io_wait_writable_timeout(R.p[1], MS(10000));
	R.ns[0] = harness_since(t0);
	R.rc[1] = atomic_load(&R.flag);
	R.rc[2] = smarm_io_wait_writable_timeout(R.p[1], 0); /* polls */
	R.rc[3] = smarm_io_wait_readable_timeout(R.p[0], 0);
}

START_TEST(test_fd_select_wait_writable_timeout_empty_pipe_ready_now)
{
	reset();
	ck_assert_int_eq(harness_run(1, writable_timeout_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0); /* did not park */
	ck_assert_elapsed_lt(R.ns[0], MS(250));
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], SMARM_ETIMEDOUT);
	close_pipes();
}
END_TEST

/* ------------------------------------------------------ bad fd, stop */

static void ebadf_root(void *arg)
{
	smarm_chan_t *ch = new_chan();
	int dead[2];
	struct tarm arms[2];
	int v = 3;
	(void)arg;
	if (pipe(dead) != 0)
		R.errors++;
	/*
	 * A closed fd far above the lowest free one: an fd another thread
	 * opens meanwhile (worker 0 reads /proc/self/maps for its stack
	 * bounds while the root may already run on worker 1) cannot reuse
	 * it and make it valid again.
	 */
	close(dead[1]);
	dead[1] = fcntl(dead[0], F_DUPFD_CLOEXEC, 1000);
	if (dead[1] < 1000)
		R.errors++;
	close(dead[0]);
	close(dead[1]);
	dead[0] = dead[1];
	arms[0] = chan_arm(ch);
	arms[1] = fd_arm(dead[0], SMARM_IO_READABLE);
	R.rc[0] = sel_wait(arms, 2, 0, &R.idx[0]);
	R.rc[1] = sel_wait(arms, 2, SMARM_NO_TIMEOUT, &R.idx[1]);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	/* The wait was retired: a following select and sleep behave. */
	smarm_chan_send(ch, &v);
	R.rc[2] = sel_wait(arms, 1, SMARM_NO_TIMEOUT, &R.idx[2]);
	uint64_t t0 = smarm_now_ns();
	R.rc[3] = smarm_actor_sleep(MS(20));
	R.ns[0] = harness_since(t0);
	harness_chan_drop(ch);
}

START_TEST(test_fd_select_closed_fd_gives_ebadf_then_select_works)
{
	reset();
	ck_assert_int_eq(harness_run(2, ebadf_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_EBADF);
	ck_assert_int_eq(R.rc[1], SMARM_EBADF);
	ck_assert_int_eq(R.stat[0], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_uint_eq(R.idx[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_uint_ge(R.ns[0], MS(20));
	close_pipes();
}
END_TEST

struct selector {
	smarm_chan_t *ch;
};

static void selector_actor(void *arg)
{
	struct selector *s = arg;
	struct tarm arms[2] = { chan_arm(s->ch),
				fd_arm(R.p[0], SMARM_IO_READABLE) };
	R.rc[0] = sel_wait(arms, 2, SMARM_NO_TIMEOUT, &R.idx[0]);
	R.rc[1] = 1; /* never reached */
}

static void stopped_selector_root(void *arg)
{
	struct selector s = { new_chan() };
	smarm_pid_t pid;
	int v = 9, got = 0;
	(void)arg;
	R.rc[0] = R.rc[1] = -1000;
	smarm_actor_spawn(&pid, selector_actor, &s, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.errors++;
	smarm_actor_stop(pid);
	smarm_actor_join(pid, &R.how[0], NULL);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	R.rc[2] = rewait(R.p[0], R.p[1]);
	/* The channel arm was unregistered too: a plain recv works. */
	smarm_chan_send(s.ch, &v);
	R.rc[3] = smarm_chan_recv(s.ch, &got);
	R.rc[4] = got;
	harness_chan_drop(s.ch);
}

START_TEST(test_fd_select_stopped_selector_does_not_poison_fd)
{
	reset();
	ck_assert_int_eq(harness_run(4, stopped_selector_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.how[0], SMARM_EXIT_STOPPED);
	ck_assert_int_eq(R.rc[0], -1000);
	ck_assert_int_eq(R.rc[1], -1000);
	ck_assert_int_eq(R.stat[0], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], 9);
	close_pipes();
}
END_TEST

static void first_waiter(void *arg)
{
	struct tarm arm = fd_arm(R.p[0], SMARM_IO_READABLE);
	(void)arg;
	R.rc[0] = sel_wait(&arm, 1, SMARM_NO_TIMEOUT, &R.idx[0]);
}

static void eexist_root(void *arg)
{
	smarm_chan_t *ch = new_chan();
	struct tarm arms[2] = { chan_arm(ch),
				fd_arm(R.p[0], SMARM_IO_READABLE) };
	struct tarm twice[2] = { fd_arm(R.q[0], SMARM_IO_READABLE),
				 fd_arm(R.q[0], SMARM_IO_WRITABLE) };
	smarm_pid_t pid;
	int v = 4, got = 0;
	(void)arg;
	R.rc[0] = -1000;
	smarm_actor_spawn(&pid, first_waiter, NULL, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.errors++;
	R.rc[1] = sel_wait(arms, 2, SMARM_NO_TIMEOUT, &R.idx[1]);
	R.rc[4] = sel_wait(arms, 2, 0, &R.idx[4]); /* a poll: refused too */
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	write_byte(R.p[1]);
	smarm_actor_join(pid, &R.how[0], NULL);
	/* Our channel arm was disarmed on the error. */
	smarm_chan_send(ch, &v);
	R.rc[2] = smarm_chan_recv(ch, &got);
	/* The same fd twice in one select: the second arm is refused. */
	R.rc[3] = sel_wait(twice, 2, SMARM_NO_TIMEOUT, &R.idx[3]);
	R.rc[5] = sel_wait(twice, 2, 0, &R.idx[5]);
	R.stat[1] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	harness_chan_drop(ch);
}

START_TEST(test_fd_select_second_waiter_eexist_first_still_wakes)
{
	reset();
	ck_assert_int_eq(harness_run(4, eexist_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[1], SMARM_EEXIST);
	ck_assert_int_eq(R.stat[0], 1);
	ck_assert_int_eq(R.how[0], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], SMARM_EEXIST);
	ck_assert_int_eq(R.rc[4], SMARM_EEXIST);
	ck_assert_int_eq(R.rc[5], SMARM_EEXIST);
	ck_assert_int_eq(R.stat[1], 0);
	close_pipes();
}
END_TEST

static void hangup_root(void *arg)
{
	struct tarm arm = fd_arm(R.q[0], SMARM_IO_READABLE);
	struct tarm warm = fd_arm(R.p[1], SMARM_IO_WRITABLE);
	char b[4];
	ptrdiff_t got = -1;
	(void)arg;
	/* The writer of pipe B is gone: POLLHUP on the read end. */
	close(R.q[1]);
	R.q[1] = -1;
	R.rc[0] = sel_wait(&arm, 1, MS(10000), &R.idx[0]);
	R.rc[1] = smarm_io_read(R.q[0], b, sizeof b, &got);
	R.rc[2] = (int)got;
	/* The reader of pipe A is gone: POLLERR on the write end. */
	close(R.p[0]);
	R.p[0] = -1;
	R.rc[3] = sel_wait(&warm, 1, MS(10000), &R.idx[3]);
}

START_TEST(test_fd_select_hangup_and_error_count_as_ready)
{
	reset();
	ck_assert_int_eq(harness_run(2, hangup_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_uint_eq(R.idx[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0); /* EOF */
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_uint_eq(R.idx[3], 0);
	close_pipes();
}
END_TEST

/* Closes the writer of pipe B once the reader waits on it. */
static void *hangup_later(void *arg)
{
	smarm_node_t *node = arg;
	if (!harness_await_stat(node, SMARM_STAT_IO_FD_WAITERS, 1))
		R.errors++; /* the reader never registered */
	close(R.q[1]);
	return NULL;
}

static void hangup_parked_root(void *arg)
{
	(void)arg;
	R.rc[0] = smarm_io_wait_readable(R.q[0]);
}

START_TEST(test_fd_select_hangup_while_parked_wakes_waiter)
{
	smarm_node_t *node = harness_open(2);
	pthread_t t;
	int how = -1;
	reset();
	ck_assert_int_eq(pthread_create(&t, NULL, hangup_later, node), 0);
	ck_assert_int_eq(
		smarm_node_run(node, hangup_parked_root, NULL, &how, NULL), 0);
	pthread_join(t, NULL);
	R.q[1] = -1;
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	close_pipes();
}
END_TEST

/* ------------------------------------------------------------ errors */

static void errors_root(void *arg)
{
	smarm_chan_t *ch = new_chan();
	smarm_selset_t *set = NULL, *empty = NULL;
	size_t idx = 99;
	int k = 0;
	(void)arg;
	R.rc[k++] = smarm_selset_alloc(NULL);
	if (smarm_selset_alloc(&set) != 0 || smarm_selset_alloc(&empty) != 0)
		abort();
	R.rc[k++] = smarm_selset_add_chan(set, NULL, NULL);
	R.rc[k++] = smarm_selset_add_chan(NULL, ch, NULL);
	R.rc[k++] = smarm_selset_add_fd(set, -1, SMARM_IO_READABLE, NULL);
	R.rc[k++] = smarm_selset_add_fd(set, R.p[0], 0, NULL);
	R.rc[k++] = smarm_selset_add_fd(set, R.p[0], 4, NULL);
	R.rc[k++] = smarm_selset_add_fd(NULL, R.p[0], 1, NULL);
	R.rc[k++] = smarm_selset_wait(NULL, 0, &idx);
	R.rc[k++] = smarm_selset_wait(empty, 0, &idx);
	R.rc[k++] = smarm_selset_clear(NULL);
	/* 11: a valid fd arm, then a wait without an out pointer */
	R.rc[k++] = smarm_selset_add_fd(set, R.p[0], SMARM_IO_READABLE, &idx);
	R.idx[0] = idx;
	R.rc[k++] = smarm_selset_wait(set, 0, NULL);
	for (int i = 1; i < 64; i++)
		smarm_selset_add_chan(set, ch, &idx);
	R.idx[1] = idx;
	R.rc[k++] = smarm_selset_add_chan(set, ch, NULL); /* the 65th */
	R.rc[k++] = smarm_selset_clear(set);
	smarm_selset_add_fd(set, R.p[0], SMARM_IO_READABLE, NULL);
	R.rc[k++] = smarm_selset_wait(set, 0, &idx); /* zero: polls */
	/* 15, 16: the top bit is no event of the API (the runtime's own
	 * marks an arm read dry with it: it must not come from outside) */
	R.rc[k++] = smarm_selset_add_fd(
		set, R.p[0], SMARM_IO_READABLE | UINT32_C(1) << 31, NULL);
	R.rc[k++] = smarm_selset_add_fd(set, R.p[0], UINT32_C(1) << 31, NULL);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	R.stat[1] = harness_actor_stat(SMARM_STAT_IO_THREADS);
	smarm_selset_free(set);
	smarm_selset_free(empty);
	smarm_selset_free(NULL);
	harness_chan_drop(ch);
}

START_TEST(test_fd_select_bad_arguments_return_einval)
{
	reset();
	ck_assert_int_eq(harness_run(1, errors_root, NULL), SMARM_EXIT_NORMAL);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(R.rc[i], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[10], 0); /* the valid fd arm */
	ck_assert_uint_eq(R.idx[0], 0);
	ck_assert_int_eq(R.rc[11], SMARM_EINVAL); /* ready NULL */
	ck_assert_uint_eq(R.idx[1], 63);
	ck_assert_int_eq(R.rc[12], SMARM_EINVAL); /* 65 arms */
	ck_assert_int_eq(R.rc[13], 0);		  /* clear */
	ck_assert_int_eq(R.rc[14], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[15], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[16], SMARM_EINVAL);
	ck_assert_int_eq(R.stat[0], 0);
	ck_assert_int_eq(R.stat[1], 0); /* a poll needs no epoll thread */
	close_pipes();
}
END_TEST

START_TEST(test_fd_select_outside_actor_returns_enotactor)
{
	smarm_selset_t *set;
	size_t idx = 7;
	/* Building a set works on any thread; waiting needs an actor. */
	ck_assert_int_eq(smarm_selset_alloc(&set), 0);
	ck_assert_int_eq(smarm_selset_add_fd(set, 0, SMARM_IO_READABLE, NULL),
			 0);
	ck_assert_int_eq(smarm_selset_wait(set, 0, &idx), SMARM_ENOTACTOR);
	ck_assert_uint_eq(idx, 7);
	smarm_selset_free(set);
}
END_TEST

/* ------------------------------------------------------ terminal wake */

static void fd_waiter(void *arg)
{
	(void)arg;
	R.rc[0] = smarm_io_wait_readable(R.p[0]);
	R.rc[1] = 1; /* never reached: stopped */
}

static void terminal_root(void *arg)
{
	uint64_t t0 = smarm_now_ns();
	(void)arg;
	smarm_actor_spawn(NULL, fd_waiter, NULL, NULL);
	/* Busy, with no safe point, so the sibling parks and idles. */
	while (smarm_now_ns() - t0 < MS(200))
		;
	/* Root exit stop-cancels the fd waiter. */
}

START_TEST(test_fd_select_run_returns_after_stop_cancelling_fd_waiter)
{
	smarm_node_t *node = harness_open(2);
	uint64_t t0;
	int how = -1;
	reset();
	R.rc[0] = R.rc[1] = -1000;
	t0 = smarm_now_ns();
	ck_assert_int_eq(smarm_node_run(node, terminal_root, NULL, &how, NULL),
			 0);
	ck_assert_elapsed_lt(harness_since(t0), MS(5000));
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], -1000);
	ck_assert_int_eq(R.rc[1], -1000);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_IO_FD_WAITERS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_IO_THREADS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	close_pipes();
}
END_TEST

Suite *smarm_test_fd_select_suite(void)
{
	Suite *s = suite_create("fd_select");
	TCase *tc = tcase_create("select");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc,
		       test_fd_select_ready_now_fd_arm_wins_without_parking);
	tcase_add_test(tc,
		       test_fd_select_fd_arm_parks_and_wins_over_idle_channel);
	tcase_add_test(tc,
		       test_fd_select_losing_fd_arm_cleaned_up_fd_rewaitable);
	tcase_add_test(
		tc, test_fd_select_ready_later_arm_unregisters_earlier_fd_arm);
	tcase_add_test(tc,
		       test_fd_select_two_fd_arms_second_fires_first_usable);
	tcase_add_test(tc, test_fd_select_hangup_and_error_count_as_ready);
	tcase_add_test(tc, test_fd_select_hangup_while_parked_wakes_waiter);
	suite_add_tcase(s, tc);

	tc = tcase_create("timeouts");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_fd_select_timer_beats_idle_fd_arm_fd_usable);
	tcase_add_test(
		tc,
		test_fd_select_wait_readable_timeout_times_out_then_succeeds);
	tcase_add_test(tc, test_fd_select_late_write_wakes_timeout_wait);
	tcase_add_test(
		tc, test_fd_select_wait_writable_timeout_empty_pipe_ready_now);
	suite_add_tcase(s, tc);

	tc = tcase_create("cleanup");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc,
		       test_fd_select_closed_fd_gives_ebadf_then_select_works);
	tcase_add_test(tc, test_fd_select_stopped_selector_does_not_poison_fd);
	tcase_add_test(tc,
		       test_fd_select_second_waiter_eexist_first_still_wakes);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_fd_select_bad_arguments_return_einval);
	tcase_add_test(tc, test_fd_select_outside_actor_returns_enotactor);
	suite_add_tcase(s, tc);

	tc = tcase_create("terminal_wake");
	tcase_set_timeout(tc, 10);
	tcase_add_test(
		tc, test_fd_select_run_returns_after_stop_cancelling_fd_waiter);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(fd_select)
