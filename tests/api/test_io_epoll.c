/* SPDX-License-Identifier: MIT */
/*
 * test_io_epoll.c - fd waits through the epoll thread: the read/write
 * sugar, readiness now vs parking, other actors progressing while one
 * waits, a stopped waiter not poisoning its fd, one waiter per fd
 * (SMARM_EEXIST), a wake from a foreign thread's write, the run end
 * joining the epoll thread, and argument errors; an idle worker that
 * polls the fds itself (no hand-off through the epoll thread), and the
 * poll handed to the thread while every worker computes.
 *
 * Results observed inside actors go into the global `R` and are asserted
 * after the run returns.
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static struct {
	int rc[16];
	ptrdiff_t got[16];
	int steps[16];
	atomic_int nsteps;
	atomic_int errors;
	atomic_int flag;
	int how[4];
	int64_t stat[8];
	char buf[16];
	int pfd[2]; /* the test pipe: [0] read end, [1] write end */
} R;

static void reset(void)
{
	memset(&R, 0, sizeof R);
	ck_assert_int_eq(pipe2(R.pfd, O_NONBLOCK | O_CLOEXEC), 0);
}

static void close_pipe(void)
{
	close(R.pfd[0]);
	close(R.pfd[1]);
}

static void step(int id)
{
	int k = atomic_fetch_add(&R.nsteps, 1);
	if (k < 16)
		R.steps[k] = id;
}

static void write_byte(int fd)
{
	char c = 'x';
	if (write(fd, &c, 1) != 1)
		R.errors++;
}

static void flag_actor(void *arg)
{
	(void)arg;
	atomic_store(&R.flag, 1);
}

/* ------------------------------------------------------------ sugar */

static void sugar_root(void *arg)
{
	(void)arg;
	R.rc[0] = smarm_io_write(R.pfd[1], "hello", 5, &R.got[0]);
	R.rc[1] = smarm_io_read(R.pfd[0], R.buf, sizeof R.buf, &R.got[1]);
	close(R.pfd[1]);
	R.rc[2] = smarm_io_read(R.pfd[0], R.buf + 8, 4, &R.got[2]); /* EOF */
	R.pfd[1] = -1;
}

START_TEST(test_io_epoll_write_sugar_writes_five_bytes)
{
	reset();
	ck_assert_int_eq(harness_run(2, sugar_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.got[0], 5);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.got[1], 5);
	ck_assert_int_eq(memcmp(R.buf, "hello", 5), 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.got[2], 0);
	close(R.pfd[0]);
}
END_TEST

static void writable_root(void *arg)
{
	uint64_t t0;
	(void)arg;
	/* One worker: had the wait parked, the child would have run. */
	smarm_actor_spawn(NULL, flag_actor, NULL, NULL);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_io_wait_writable(R.pfd[1]);
	R.got[0] = (ptrdiff_t)harness_since(t0);
	R.rc[1] = atomic_load(&R.flag);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_THREADS);
}

START_TEST(test_io_epoll_wait_writable_empty_pipe_returns_at_once)
{
	reset();
	ck_assert_int_eq(harness_run(1, writable_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0); /* did not park */
	ck_assert_elapsed_lt((uint64_t)R.got[0], MS(250));
	ck_assert_int_eq(R.stat[0], 0); /* ready now: no epoll thread */
	close_pipe();
}
END_TEST

/* --------------------------------------------------------- progress */

static void reader(void *arg)
{
	(void)arg;
	step(1);
	R.rc[0] = smarm_io_read(R.pfd[0], R.buf, sizeof R.buf, &R.got[0]);
	step(4);
}

static void worker_actor(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		smarm_actor_yield();
	step(2);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	step(3);
	write_byte(R.pfd[1]);
}

static void progress_root(void *arg)
{
	smarm_pid_t a, b;
	(void)arg;
	smarm_actor_spawn(&a, reader, NULL, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.errors++;
	smarm_actor_spawn(&b, worker_actor, NULL, NULL);
	smarm_actor_join(a, NULL, NULL);
	smarm_actor_join(b, NULL, NULL);
	R.stat[1] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_epoll_others_progress_while_one_waits_readable)
{
	for (int workers = 1; workers <= 4; workers += 3) {
		reset();
		ck_assert_int_eq(harness_run(workers, progress_root, NULL),
				 SMARM_EXIT_NORMAL);
		ck_assert_int_eq(R.errors, 0);
		ck_assert_int_eq(R.rc[0], 0);
		ck_assert_int_eq(R.got[0], 1);
		ck_assert_int_eq(R.stat[0], 1); /* the reader was parked */
		ck_assert_int_eq(R.stat[1], 0);
		ck_assert_int_eq(atomic_load(&R.nsteps), 4);
		for (int i = 0; i < 4; i++)
			ck_assert_int_eq(R.steps[i], i + 1);
		close_pipe();
	}
}
END_TEST

/* ------------------------------------------------- stop and poison */

static void waiter(void *arg)
{
	int slot = (int)(intptr_t)arg;
	R.rc[slot] = smarm_io_wait_readable(R.pfd[0]);
	R.rc[slot + 1] = 1; /* returned */
}

static void no_poison_root(void *arg)
{
	smarm_pid_t a, b;
	(void)arg;
	R.rc[0] = R.rc[1] = -1000;
	smarm_actor_spawn(&a, waiter, (void *)(intptr_t)0, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.errors++;
	smarm_actor_stop(a);
	smarm_actor_join(a, &R.how[0], NULL);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	/* A second waiter on the same fd registers and is woken. */
	smarm_actor_spawn(&b, waiter, (void *)(intptr_t)2, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.errors++;
	write_byte(R.pfd[1]);
	smarm_actor_join(b, &R.how[1], NULL);
	R.stat[1] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_epoll_stopped_waiter_does_not_poison_fd)
{
	reset();
	ck_assert_int_eq(harness_run(4, no_poison_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.how[0], SMARM_EXIT_STOPPED);
	ck_assert_int_eq(R.rc[0], -1000); /* never returned */
	ck_assert_int_eq(R.rc[1], -1000);
	ck_assert_int_eq(R.stat[0], 0); /* registration removed */
	ck_assert_int_eq(R.how[1], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], 1);
	ck_assert_int_eq(R.stat[1], 0);
	close_pipe();
}
END_TEST

struct foreign_stop {
	smarm_node_t *node;
	smarm_pid_t pid;
	int rc;
};

static void *foreign_stopper(void *arg)
{
	struct foreign_stop *f = arg;
	f->rc = smarm_node_stop_actor(f->node, f->pid);
	return NULL;
}

static void foreign_stop_root(void *arg)
{
	struct foreign_stop f = { smarm_node_current(), SMARM_PID_NONE, -1 };
	smarm_pid_t b;
	pthread_t t;
	(void)arg;
	R.rc[0] = R.rc[1] = -1000;
	smarm_actor_spawn(&f.pid, waiter, (void *)(intptr_t)0, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.errors++;
	if (pthread_create(&t, NULL, foreign_stopper, &f) != 0)
		R.errors++;
	smarm_actor_join(f.pid, &R.how[0], NULL);
	pthread_join(t, NULL); /* returned long ago: a short block */
	R.rc[6] = f.rc;
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	smarm_actor_spawn(&b, waiter, (void *)(intptr_t)2, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.errors++;
	write_byte(R.pfd[1]);
	smarm_actor_join(b, &R.how[1], NULL);
}

START_TEST(test_io_epoll_foreign_stop_of_waiter_does_not_poison_fd)
{
	reset();
	ck_assert_int_eq(harness_run(4, foreign_stop_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[6], 0);
	ck_assert_int_eq(R.how[0], SMARM_EXIT_STOPPED);
	ck_assert_int_eq(R.rc[0], -1000);
	ck_assert_int_eq(R.stat[0], 0);
	ck_assert_int_eq(R.how[1], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[2], 0);
	close_pipe();
}
END_TEST

static void eexist_root(void *arg)
{
	smarm_pid_t a;
	(void)arg;
	R.rc[0] = -1000;
	smarm_actor_spawn(&a, waiter, (void *)(intptr_t)0, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.errors++;
	R.rc[4] = smarm_io_wait_readable(R.pfd[0]);
	R.rc[5] = smarm_io_wait_readable_timeout(R.pfd[0], MS(10));
	R.rc[6] = smarm_io_wait_readable_timeout(R.pfd[0], 0); /* a poll */
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	write_byte(R.pfd[1]);
	smarm_actor_join(a, &R.how[0], NULL);
}

START_TEST(test_io_epoll_second_waiter_eexist_first_still_wakes)
{
	reset();
	ck_assert_int_eq(harness_run(4, eexist_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[4], SMARM_EEXIST);
	ck_assert_int_eq(R.rc[5], SMARM_EEXIST);
	ck_assert_int_eq(R.rc[6], SMARM_EEXIST);
	ck_assert_int_eq(R.stat[0], 1); /* the first is still registered */
	ck_assert_int_eq(R.how[0], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 1);
	close_pipe();
}
END_TEST

/* ---------------------------------------------------- foreign waker */

/* Writes once the reader is registered with the epoll thread. */
static void *foreign_writer(void *arg)
{
	smarm_node_t *node = arg;
	if (!harness_await_stat(node, SMARM_STAT_IO_FD_WAITERS, 1))
		R.errors++; /* the reader never registered */
	write_byte(R.pfd[1]);
	return NULL;
}

static void foreign_root(void *arg)
{
	(void)arg;
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_THREADS);
	R.rc[0] = smarm_io_read(R.pfd[0], R.buf, sizeof R.buf, &R.got[0]);
	R.stat[1] = harness_actor_stat(SMARM_STAT_IO_THREADS);
}

START_TEST(test_io_epoll_foreign_thread_write_wakes_waiter)
{
	pthread_t t;
	smarm_node_t *node = harness_open(2);
	reset();
	ck_assert_int_eq(pthread_create(&t, NULL, foreign_writer, node), 0);
	ck_assert_int_eq(
		smarm_node_run(node, foreign_root, NULL, &R.how[0], NULL), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.how[0], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.got[0], 1);
	ck_assert_int_eq(R.stat[0], 0); /* started lazily */
	ck_assert_int_eq(R.stat[1], 1); /* the epoll thread */
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_IO_THREADS), 0);
	/* The node runs again; the epoll thread is started afresh. */
	ck_assert_int_eq(pthread_create(&t, NULL, foreign_writer, node), 0);
	ck_assert_int_eq(
		smarm_node_run(node, foreign_root, NULL, &R.how[0], NULL), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.got[0], 1);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_IO_THREADS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	close_pipe();
}
END_TEST

/* ----------------------------------------------------------- stress */

#define PAIRS 16
#define ROUNDS 500

struct pong {
	int in, out; /* read from in, echo to out */
	int first;   /* 1: send first */
};

static void pong_actor(void *arg)
{
	struct pong *p = arg;
	char c = 'p';
	ptrdiff_t got;
	for (int i = 0; i < ROUNDS; i++) {
		if (p->first &&
		    (smarm_io_write(p->out, &c, 1, &got) != 0 || got != 1)) {
			R.errors++;
			return;
		}
		if (smarm_io_read(p->in, &c, 1, &got) != 0 || got != 1) {
			R.errors++;
			return;
		}
		if (!p->first &&
		    (smarm_io_write(p->out, &c, 1, &got) != 0 || got != 1)) {
			R.errors++;
			return;
		}
	}
	atomic_fetch_add(&R.flag, 1);
}

static void stress_root(void *arg)
{
	int fds[PAIRS][4];
	struct pong p[PAIRS][2];
	smarm_pid_t pid[PAIRS][2];
	(void)arg;
	for (int i = 0; i < PAIRS; i++) {
		if (pipe2(&fds[i][0], O_NONBLOCK) != 0 ||
		    pipe2(&fds[i][2], O_NONBLOCK) != 0) {
			R.errors++;
			return;
		}
		p[i][0] = (struct pong){ fds[i][2], fds[i][1], 1 };
		p[i][1] = (struct pong){ fds[i][0], fds[i][3], 0 };
		smarm_actor_spawn(&pid[i][0], pong_actor, &p[i][0], NULL);
		smarm_actor_spawn(&pid[i][1], pong_actor, &p[i][1], NULL);
	}
	for (int i = 0; i < PAIRS; i++) {
		smarm_actor_join(pid[i][0], NULL, NULL);
		smarm_actor_join(pid[i][1], NULL, NULL);
		for (int k = 0; k < 4; k++)
			close(fds[i][k]);
	}
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_epoll_pipe_ping_pong_pairs_all_finish)
{
	reset();
	ck_assert_int_eq(harness_run(4, stress_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(atomic_load(&R.flag), 2 * PAIRS);
	ck_assert_int_eq(R.stat[0], 0);
	close_pipe();
}
END_TEST

/* ------------------------------------------------ kept registrations */

static void *kept_writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		/* Once the reader is parked on the pipe again. */
		uint64_t t0 = smarm_now_ns();
		while (atomic_load(&R.flag) != i + 1 &&
		       smarm_now_ns() - t0 < 5000000000ull)
			usleep(50);
		write_byte(R.pfd[1]);
	}
	return NULL;
}

static void kept_root(void *arg)
{
	pthread_t t;
	int old[2];
	(void)arg;
	if (pthread_create(&t, NULL, kept_writer, NULL) != 0) {
		R.errors++;
		return;
	}
	for (int i = 0; i < 200; i++) {
		char c;
		ptrdiff_t got = 0;
		atomic_store(&R.flag, i + 1);
		if (smarm_io_read(R.pfd[0], &c, 1, &got) != 0 || got != 1)
			R.errors++;
	}
	pthread_join(t, NULL);
	/* Woken by its event 200 times: still in the set (disarmed). */
	R.rc[0] = harness_fd_in_epoll(R.pfd[0]);
	/* Its number reused by another pipe while a dup keeps the old file
	 * (and its disarmed registration) alive: a wait on the new pipe
	 * arms the new file, and the old one's data wakes nobody. */
	int keep = dup(R.pfd[0]);
	old[0] = R.pfd[0];
	old[1] = R.pfd[1];
	close(R.pfd[0]);
	if (pipe2(R.pfd, O_NONBLOCK | O_CLOEXEC) != 0) {
		R.errors++;
		close(keep);
		close(old[1]);
		return;
	}
	R.rc[1] = R.pfd[0] == old[0]; /* reused (else not this case) */
	write_byte(old[1]);
	R.rc[2] = smarm_io_wait_readable_timeout(R.pfd[0], MS(50));
	write_byte(R.pfd[1]);
	R.rc[3] = smarm_io_wait_readable_timeout(R.pfd[0], MS(5000));
	close(keep);
	close(old[1]);
}

/*
 * An fd's registration is kept between its waits: a wait woken by the fd
 * leaves it in the epoll set, disarmed, and the next wait re-arms it
 * (one epoll_ctl a wait, not an ADD and a DEL: the dist reader's frame).
 * A number closed and reused meanwhile gets the new file armed.
 */
START_TEST(test_io_epoll_registration_kept_across_waits)
{
	reset();
	ck_assert_int_eq(harness_run(2, kept_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], 1);
	ck_assert_int_eq(R.rc[1], 1); /* the number was reused */
	ck_assert_int_eq(R.rc[2], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[3], 0);
	close_pipe();
}
END_TEST

/* ---------------------------------------------------------- errors */

static void errors_root(void *arg)
{
	char b[4];
	ptrdiff_t got;
	int closed[2];
	(void)arg;
	R.rc[0] = smarm_io_wait_readable(-1);
	R.rc[1] = smarm_io_wait_writable_timeout(-5, MS(1));
	R.rc[2] = smarm_io_read(R.pfd[0], b, sizeof b, NULL);
	R.rc[3] = smarm_io_read(R.pfd[0], NULL, 4, &got);
	R.rc[4] = smarm_io_write(R.pfd[1], NULL, 4, &got);
	R.rc[5] = smarm_io_read(-1, b, sizeof b, &got);
	if (pipe(closed) != 0)
		R.errors++;
	close(closed[0]);
	close(closed[1]);
	R.rc[6] = smarm_io_wait_readable(closed[0]);
	R.rc[7] = smarm_io_read(closed[0], b, sizeof b, &got);
	R.rc[8] = smarm_io_write(R.pfd[1], b, 0, &got); /* 0 bytes is fine */
	R.got[8] = got;
}

START_TEST(test_io_epoll_bad_arguments_return_errors)
{
	reset();
	ck_assert_int_eq(harness_run(1, errors_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[1], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[2], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[3], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[4], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[5], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[6], SMARM_EBADF);
	ck_assert_int_eq(R.rc[7], SMARM_EBADF);
	ck_assert_int_eq(R.rc[8], 0);
	ck_assert_int_eq(R.got[8], 0);
	close_pipe();
}
END_TEST

START_TEST(test_io_epoll_outside_actor_returns_enotactor)
{
	char b[4];
	ptrdiff_t got = 0;
	reset();
	ck_assert_int_eq(smarm_io_wait_readable(R.pfd[0]), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_io_wait_writable(R.pfd[1]), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_io_wait_readable_timeout(R.pfd[0], 0),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_io_wait_writable_timeout(R.pfd[1], 0),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_io_read(R.pfd[0], b, sizeof b, &got),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_io_write(R.pfd[1], b, sizeof b, &got),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(got, 0);
	close_pipe();
}
END_TEST

START_TEST(test_io_epoll_ebadf_has_name_and_message)
{
	ck_assert_str_eq(smarm_err_name(SMARM_EBADF), "SMARM_EBADF");
	ck_assert_str_eq(smarm_strerror(SMARM_EBADF),
			 "not an open file descriptor");
}
END_TEST

/*
 * An fd closed while an actor waits on it with a timeout: the kernel
 * drops it from epoll without an event, so the wait ends at its
 * deadline, and with SMARM_EBADF (it used to return 0: the dead fd
 * counted as ready). The fd is a duplicate numbered 1000 or more, so no
 * other thread's open can reuse the number meanwhile.
 */
static int cu_fd;

static void cu_waiter(void *arg)
{
	(void)arg;
	R.rc[0] = smarm_io_wait_readable_timeout(cu_fd, MS(300));
}

static void cu_root(void *arg)
{
	smarm_pid_t w;
	(void)arg;
	smarm_actor_spawn(&w, cu_waiter, NULL, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.errors++;
	close(cu_fd); /* under the waiter */
	smarm_actor_join(w, NULL, NULL);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_epoll_fd_closed_under_a_timed_wait_gives_ebadf)
{
	reset();
	cu_fd = fcntl(R.pfd[0], F_DUPFD_CLOEXEC, 1000);
	ck_assert_int_ge(cu_fd, 1000);
	ck_assert_int_eq(harness_run(2, cu_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.errors, 0);
	ck_assert_int_eq(R.rc[0], SMARM_EBADF);
	ck_assert_int_eq(R.stat[0], 0);
	close_pipe();
}
END_TEST

/*
 * SMARM_ESYSTEM from a read or write leaves errno as the system call set
 * it (the header promises it): a read of a directory is EISDIR, a write
 * to a pipe whose reader is gone EPIPE (SIGPIPE ignored for the test).
 */
static int es_errno[2];

static void es_root(void *arg)
{
	char buf[8] = "x";
	ptrdiff_t got = 0;
	int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	(void)arg;
	errno = 0;
	R.rc[0] = smarm_io_read(dir, buf, sizeof buf, &got);
	es_errno[0] = errno;
	close(dir);
	close(R.pfd[0]); /* the reader is gone */
	errno = 0;
	R.rc[1] = smarm_io_write(R.pfd[1], buf, 1, &got);
	es_errno[1] = errno;
}

START_TEST(test_io_epoll_esystem_leaves_the_syscall_errno)
{
	reset();
	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(harness_run(1, es_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_ESYSTEM);
	ck_assert_int_eq(es_errno[0], EISDIR);
	ck_assert_int_eq(R.rc[1], SMARM_ESYSTEM);
	ck_assert_int_eq(es_errno[1], EPIPE);
	close(R.pfd[1]);
}
END_TEST

/* The idle workers' poll (sched.c netpoll_park). */

#define IP_WAKES 2000

static int64_t ip_epoll_csw = -1; /* the epoll thread's, over the wakes */
static int64_t ip_all_csw;	  /* the process's, over the wakes */

static atomic_int ip_go; /* the actor counts from here on */

/* A foreign thread: one byte (the first wait parks: the epoll set and
 * its thread exist), then, once the actor counts, a byte every 100 us. */
static void *ip_writer(void *arg)
{
	struct timespec first = { 0, 20000000 };
	(void)arg;
	nanosleep(&first, NULL);
	write_byte(R.pfd[1]);
	while (!atomic_load(&ip_go))
		nanosleep(&first, NULL);
	for (int i = 0; i < IP_WAKES; i++) {
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
		write_byte(R.pfd[1]);
	}
	return NULL;
}

static void ip_root(void *arg)
{
	char buf[64];
	pthread_t th;
	struct rusage ru0, ru1;
	int64_t e0, e1;
	int got = 0;
	(void)arg;
	atomic_store(&ip_go, 0);
	HARNESS_EQ(pthread_create(&th, NULL, ip_writer, NULL), 0);
	HARNESS_EQ(smarm_io_wait_readable(R.pfd[0]), 0);
	HARNESS_EQ(read(R.pfd[0], buf, sizeof buf), 1);
	e0 = harness_thread_switches("smarm-epoll");
	/* The thread names itself once it runs. */
	for (int i = 0; e0 < 0 && i < 1000; i++) {
		HARNESS_EQ(smarm_actor_sleep(1000000), 0);
		e0 = harness_thread_switches("smarm-epoll");
	}
	getrusage(RUSAGE_SELF, &ru0);
	atomic_store(&ip_go, 1);
	while (got < IP_WAKES) {
		ptrdiff_t k = 0;
		HARNESS_EQ(smarm_io_read(R.pfd[0], buf, sizeof buf, &k), 0);
		got += (int)k;
	}
	getrusage(RUSAGE_SELF, &ru1);
	e1 = harness_thread_switches("smarm-epoll");
	pthread_join(th, NULL);
	if (e0 >= 0 && e1 >= 0)
		ip_epoll_csw = e1 - e0;
	ip_all_csw = ru1.ru_nvcsw - ru0.ru_nvcsw;
}

/*
 * Two workers, an actor woken by a pipe 2000 times, 100 us apart (a
 * server woken by each request): the idle worker polls the fds itself,
 * so the epoll thread sleeps throughout. Without the workers' poll it
 * wakes for every byte (about 2000 switches, whatever the load); here
 * only when the poll was handed to it, after a worker held it away for
 * a monitor period (a worker descheduled by a loaded host).
 */
START_TEST(test_io_epoll_idle_worker_polls_without_the_thread)
{
	reset();
	ck_assert_int_eq(harness_run(2, ip_root, NULL), SMARM_EXIT_NORMAL);
	close_pipe();
	harness_checks_assert();
	fprintf(stderr,
		"idle poll: epoll thread %" PRId64 " switches, process %" PRId64
		" over %d wakes\n",
		ip_epoll_csw, ip_all_csw, IP_WAKES);
	ck_assert_int_ge(ip_epoll_csw, 0);
	ck_assert_int_lt(ip_epoll_csw, IP_WAKES / 4);
}
END_TEST

#define HO_SPIN_NS 400000000ull /* the computing actor's time */
#define HO_WRITE_NS 20000000ull /* when the byte arrives */

static atomic_uint_fast64_t ho_woke_ns; /* when the waiter woke */
static atomic_uint_fast64_t ho_spun_ns; /* when the spinner ended */

static void ho_waiter(void *arg)
{
	(void)arg;
	HARNESS_EQ(smarm_io_wait_readable(R.pfd[0]), 0);
	atomic_store(&ho_woke_ns, smarm_now_ns());
}

static void *ho_writer(void *arg)
{
	struct timespec ts = { 0, (long)HO_WRITE_NS };
	(void)arg;
	nanosleep(&ts, NULL);
	write_byte(R.pfd[1]);
	return NULL;
}

/* Computes without a call into the runtime, in the test's own text
 * (preemptible): the worker never idles meanwhile. */
static void ho_spinner(void *arg)
{
	volatile uint64_t x = 0;
	uint64_t t0 = smarm_now_ns();
	(void)arg;
	while (smarm_now_ns() - t0 < HO_SPIN_NS)
		for (int i = 0; i < 1000; i++)
			x += (uint64_t)i;
	atomic_store(&ho_spun_ns, smarm_now_ns());
}

static void ho_root(void *arg)
{
	pthread_t th;
	smarm_pid_t w, sp;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&w, ho_waiter, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_sleep(2000000), 0); /* it parks, polled */
	HARNESS_EQ(pthread_create(&th, NULL, ho_writer, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&sp, ho_spinner, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(w, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(sp, NULL, NULL), 0);
	pthread_join(th, NULL);
}

/*
 * One worker, async preemption: the fd becomes ready while the worker
 * computes, so no idle worker polls; the monitor hands the poll to the
 * epoll thread, which wakes the waiter, and preemption lets it run long
 * before the computing actor ends (without the hand-over it would wake
 * only when the worker next idles, after the 400 ms computation).
 */
START_TEST(test_io_epoll_busy_workers_hand_the_poll_to_the_thread)
{
	reset();
	atomic_store(&ho_woke_ns, 0);
	atomic_store(&ho_spun_ns, 0);
	ck_assert_int_eq(harness_run(1, ho_root, NULL), SMARM_EXIT_NORMAL);
	close_pipe();
	harness_checks_assert();
	uint64_t woke = atomic_load(&ho_woke_ns);
	uint64_t spun = atomic_load(&ho_spun_ns);
	ck_assert_uint_ne(woke, 0);
	ck_assert_uint_lt(woke, spun);
}
END_TEST

Suite *smarm_test_io_epoll_suite(void)
{
	Suite *s = suite_create("io_epoll");
	TCase *tc = tcase_create("waits");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_io_epoll_write_sugar_writes_five_bytes);
	tcase_add_test(tc,
		       test_io_epoll_wait_writable_empty_pipe_returns_at_once);
	tcase_add_test(tc,
		       test_io_epoll_others_progress_while_one_waits_readable);
	tcase_add_test(tc, test_io_epoll_stopped_waiter_does_not_poison_fd);
	tcase_add_test(tc,
		       test_io_epoll_foreign_stop_of_waiter_does_not_poison_fd);
	tcase_add_test(tc,
		       test_io_epoll_second_waiter_eexist_first_still_wakes);
	tcase_add_test(tc, test_io_epoll_foreign_thread_write_wakes_waiter);
	tcase_add_test(tc, test_io_epoll_pipe_ping_pong_pairs_all_finish);
	suite_add_tcase(s, tc);

	tc = tcase_create("idle_poll");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_io_epoll_idle_worker_polls_without_the_thread);
	tcase_add_test(tc, test_io_epoll_registration_kept_across_waits);
	tcase_add_test(tc,
		       test_io_epoll_busy_workers_hand_the_poll_to_the_thread);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc,
		       test_io_epoll_fd_closed_under_a_timed_wait_gives_ebadf);
	tcase_add_test(tc, test_io_epoll_esystem_leaves_the_syscall_errno);
	tcase_add_test(tc, test_io_epoll_bad_arguments_return_errors);
	tcase_add_test(tc, test_io_epoll_outside_actor_returns_enotactor);
	tcase_add_test(tc, test_io_epoll_ebadf_has_name_and_message);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(io_epoll)
