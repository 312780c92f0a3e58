/* SPDX-License-Identifier: MIT */
/*
 * test_chan_thread.c - plain OS threads as receivers: smarm_chan_recv and
 * smarm_chan_recv_timeout block in the kernel and are woken by sends from
 * actors or threads and by the close; the one timeout rule (0 checks
 * once, SMARM_NO_TIMEOUT waits without a deadline); and the notify fd: an
 * epoll loop on a plain thread consuming a stream from 4 actors, element
 * count exact, plus its ownership and readiness rules.
 *
 * Every blocking call in a test either has a deadline or runs in a TCase
 * with a timeout, so a lost wake fails instead of hanging.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static struct {
	smarm_chan_t *ch;
	atomic_int ready;
	atomic_int rc;
	int val;
	uint64_t ns;
} T;

static void reset(void)
{
	memset(&T, 0, sizeof T);
	harness_checks_reset();
}

/* ------------------------------------------------------- timeouts */

START_TEST(test_chan_thread_recv_timeout_rules)
{
	smarm_chan_t *ch;
	int v = 0;
	uint64_t t0;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	/* 0 checks once: never blocks. */
	t0 = smarm_now_ns();
	ck_assert_int_eq(smarm_chan_recv_timeout(ch, &v, 0), SMARM_ETIMEDOUT);
	ck_assert_elapsed_lt(harness_since(t0), MS(1000));
	/* A bound is waited out. */
	t0 = smarm_now_ns();
	ck_assert_int_eq(smarm_chan_recv_timeout(ch, &v, MS(30)),
			 SMARM_ETIMEDOUT);
	ck_assert_uint_ge(harness_since(t0), MS(30));
	/* A queued element wins, whatever the timeout. */
	v = 4;
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	v = 0;
	ck_assert_int_eq(smarm_chan_recv_timeout(ch, &v, 0), 0);
	ck_assert_int_eq(v, 4);
	ck_assert_int_eq(smarm_chan_recv_timeout(ch, &v, SMARM_NO_TIMEOUT), 0);
	ck_assert_int_eq(smarm_chan_recv(ch, &v), 0);
	/* Closed and drained. */
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_recv(ch, &v), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_recv_timeout(ch, &v, 0), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_recv_timeout(ch, &v, MS(10)),
			 SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_recv(NULL, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_recv(ch, NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_recv_timeout(NULL, &v, 0), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

/* ------------------------------------------------ woken by an actor */

/* The blocked thread: recv (mode 0), or recv_timeout forever (1). */
static void *blocked_thread(void *arg)
{
	int v = -1;
	uint64_t t0 = smarm_now_ns();
	atomic_store(&T.ready, 1);
	if (arg == NULL)
		atomic_store(&T.rc, smarm_chan_recv(T.ch, &v));
	else
		atomic_store(&T.rc, smarm_chan_recv_timeout(T.ch, &v,
							    SMARM_NO_TIMEOUT));
	T.val = v;
	T.ns = harness_since(t0);
	return NULL;
}

/* Wait for the thread to start, then give it time to block (the test
 * holds either way: a receive that has not blocked yet just finds the
 * element or the close). */
static void await_blocked(void)
{
	while (!atomic_load(&T.ready))
		smarm_actor_yield();
	smarm_actor_sleep(MS(30));
}

static void send_root(void *arg)
{
	int v = 321;
	(void)arg;
	await_blocked();
	HARNESS_EQ(smarm_chan_send(T.ch, &v), 0);
}

static void close_root(void *arg)
{
	(void)arg;
	await_blocked();
	HARNESS_EQ(smarm_chan_sender_free(T.ch), 0);
}

static void run_with_thread(smarm_actor_cb root, void *mode)
{
	pthread_t th;
	reset();
	ck_assert_int_eq(smarm_chan_alloc(&T.ch, sizeof(int), NULL), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, blocked_thread, mode), 0);
	ck_assert_int_eq(harness_run(4, root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	harness_checks_assert();
}

START_TEST(test_chan_thread_recv_woken_by_actor_send)
{
	run_with_thread(send_root, NULL);
	ck_assert_int_eq(atomic_load(&T.rc), 0);
	ck_assert_int_eq(T.val, 321);
	harness_chan_drop(T.ch);
}
END_TEST

START_TEST(test_chan_thread_recv_no_timeout_woken_by_actor_send)
{
	run_with_thread(send_root, (void *)1);
	ck_assert_int_eq(atomic_load(&T.rc), 0);
	ck_assert_int_eq(T.val, 321);
	harness_chan_drop(T.ch);
}
END_TEST

START_TEST(test_chan_thread_recv_woken_by_close)
{
	run_with_thread(close_root, NULL);
	ck_assert_int_eq(atomic_load(&T.rc), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_receiver_free(T.ch), 0);
}
END_TEST

/* ------------------------------------------------ threads only */

#define TH_N 3
#define TH_PER 20000

static atomic_long th_sum, th_count;

static void *th_producer(void *arg)
{
	int base = (int)(intptr_t)arg * TH_PER;
	for (int i = 0; i < TH_PER; i++) {
		int v = base + i;
		if (smarm_chan_send(T.ch, &v) != 0)
			atomic_fetch_add(&T.rc, 1);
	}
	smarm_chan_sender_free(T.ch);
	return NULL;
}

static void *th_consumer(void *arg)
{
	(void)arg;
	for (;;) {
		int v;
		int rc = smarm_chan_recv_timeout(T.ch, &v, MS(20000));
		if (rc == SMARM_ECLOSED)
			break;
		if (rc != 0) {
			atomic_fetch_add(&T.rc, 1);
			break;
		}
		atomic_fetch_add(&th_sum, v);
		atomic_fetch_add(&th_count, 1);
	}
	smarm_chan_receiver_free(T.ch);
	return NULL;
}

START_TEST(test_chan_thread_threads_only_exactly_once)
{
	pthread_t p[TH_N], c[TH_N];
	const long total = (long)TH_N * TH_PER;
	reset();
	ck_assert_int_eq(smarm_chan_alloc(&T.ch, sizeof(int), NULL), 0);
	for (int i = 1; i < TH_N; i++) {
		ck_assert_int_eq(smarm_chan_sender_dup(T.ch), 0);
		ck_assert_int_eq(smarm_chan_receiver_dup(T.ch), 0);
	}
	/* No node at all: threads send to and wake threads. */
	for (int i = 0; i < TH_N; i++) {
		ck_assert_int_eq(pthread_create(&c[i], NULL, th_consumer, NULL),
				 0);
		ck_assert_int_eq(pthread_create(&p[i], NULL, th_producer,
						(void *)(intptr_t)i),
				 0);
	}
	for (int i = 0; i < TH_N; i++) {
		ck_assert_int_eq(pthread_join(p[i], NULL), 0);
		ck_assert_int_eq(pthread_join(c[i], NULL), 0);
	}
	ck_assert_int_eq(atomic_load(&T.rc), 0);
	ck_assert_int_eq(atomic_load(&th_count), total);
	ck_assert_int_eq(atomic_load(&th_sum), total * (total - 1) / 2);
}
END_TEST

/* ------------------------------------------------------ notify fd */

/* Is fd readable right now? */
static bool fd_readable(int fd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN };
	int n;
	ck_assert_int_ge(ep, 0);
	ck_assert_int_eq(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
	n = epoll_wait(ep, &ev, 1, 0);
	close(ep);
	return n == 1;
}

static void fd_reset(int fd)
{
	uint64_t cnt;
	ck_assert_int_eq(read(fd, &cnt, sizeof cnt), (ssize_t)sizeof cnt);
}

START_TEST(test_chan_thread_notify_fd_rules)
{
	smarm_chan_t *ch;
	int fd = -1, fd2 = -1, v = 1;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	ck_assert_int_eq(smarm_chan_notify_fd(NULL, &fd), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_notify_fd(ch, NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_notify_fd(ch, &fd), 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(smarm_chan_notify_fd(ch, &fd2), 0);
	ck_assert_int_eq(fd2, fd); /* one fd per channel */
	ck_assert(!fd_readable(fd));
	/* An element into an empty queue makes it readable. */
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	ck_assert(fd_readable(fd));
	fd_reset(fd);
	ck_assert(!fd_readable(fd));
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), 0);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), SMARM_EAGAIN);
	/* The close makes it readable too. */
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert(fd_readable(fd));
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), SMARM_ECLOSED);
	/* The last receiver reference closes it. */
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
	ck_assert_int_eq(errno, EBADF);
}
END_TEST

START_TEST(test_chan_thread_notify_fd_starts_readable_when_ready)
{
	smarm_chan_t *ch;
	int fd = -1, v = 1;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	ck_assert_int_eq(smarm_chan_notify_fd(ch, &fd), 0);
	ck_assert(fd_readable(fd));
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	/* Closed already when the fd is made: readable at once. */
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_notify_fd(ch, &fd), 0);
	ck_assert(fd_readable(fd));
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

/* An epoll loop on a plain thread, fed by 4 actors. */
#define EP_PRODUCERS 4
#define EP_PER 25000

static struct {
	long count;
	long sum;
	long wakeups;
	int err;
} E;

static void *epoll_loop(void *arg)
{
	int fd = *(int *)arg;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN };
	bool closed = false;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
		E.err = 1;
		return NULL;
	}
	while (!closed) {
		uint64_t cnt;
		/* A generous bound: a lost notification fails, not hangs. */
		int n = epoll_wait(ep, &ev, 1, 20000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1) {
			E.err = 2;
			break;
		}
		__atomic_store_n(&E.wakeups, E.wakeups + 1, __ATOMIC_RELAXED);
		/* (1) reset, (2) drain until EAGAIN. */
		if (read(fd, &cnt, sizeof cnt) != (ssize_t)sizeof cnt) {
			E.err = 3;
			break;
		}
		for (;;) {
			int v;
			int rc = smarm_chan_try_recv(T.ch, &v);
			if (rc == SMARM_EAGAIN)
				break;
			if (rc == SMARM_ECLOSED) {
				closed = true;
				break;
			}
			if (rc != 0) {
				E.err = 4;
				closed = true;
				break;
			}
			E.count++;
			E.sum += v;
		}
	}
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL); /* before the fd goes */
	close(ep);
	return NULL;
}

static void ep_producer(void *arg)
{
	int base = (int)(intptr_t)arg * EP_PER;
	for (int i = 0; i < EP_PER; i++) {
		int v = base + i;
		/*
		 * Halfway, wait (up to 5 s) for the loop's first wake-up, so
		 * that the rest must notify it again: on a loaded machine its
		 * thread could otherwise sleep through the whole stream.
		 */
		for (int k = 0;
		     i == EP_PER / 2 && k < 25000 &&
		     __atomic_load_n(&E.wakeups, __ATOMIC_RELAXED) == 0;
		     k++)
			smarm_actor_sleep(US(200));
		HARNESS_EQ(smarm_chan_send(T.ch, &v), 0);
		if (i % 97 == 0)
			smarm_actor_sleep(US(50)); /* let the loop run dry */
	}
	HARNESS_EQ(smarm_chan_sender_free(T.ch), 0);
}

static void ep_root(void *arg)
{
	smarm_pid_t pid[EP_PRODUCERS];
	(void)arg;
	for (int p = 0; p < EP_PRODUCERS; p++) {
		HARNESS_EQ(smarm_chan_sender_dup(T.ch), 0);
		HARNESS_EQ(smarm_actor_spawn(&pid[p], ep_producer,
					     (void *)(intptr_t)p, NULL),
			   0);
	}
	HARNESS_EQ(smarm_chan_sender_free(T.ch), 0);
	for (int p = 0; p < EP_PRODUCERS; p++)
		HARNESS_EQ(smarm_actor_join(pid[p], NULL, NULL), 0);
}

START_TEST(test_chan_thread_epoll_loop_consumes_stream_exactly)
{
	const long total = (long)EP_PRODUCERS * EP_PER;
	pthread_t th;
	int fd = -1;
	reset();
	memset(&E, 0, sizeof E);
	ck_assert_int_eq(smarm_chan_alloc(&T.ch, sizeof(int), NULL), 0);
	ck_assert_int_eq(smarm_chan_notify_fd(T.ch, &fd), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, epoll_loop, &fd), 0);
	ck_assert_int_eq(harness_run(4, ep_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(E.err, 0);
	ck_assert_int_eq(E.count, total);
	ck_assert_int_eq(E.sum, total * (total - 1) / 2);
	ck_assert_int_gt(E.wakeups, 1);
	ck_assert_int_eq(smarm_chan_receiver_free(T.ch), 0);
}
END_TEST

Suite *smarm_test_chan_thread_suite(void)
{
	Suite *s = suite_create("chan_thread");
	TCase *tc = tcase_create("recv");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_chan_thread_recv_timeout_rules);
	tcase_add_test(tc, test_chan_thread_recv_woken_by_actor_send);
	tcase_add_test(tc,
		       test_chan_thread_recv_no_timeout_woken_by_actor_send);
	tcase_add_test(tc, test_chan_thread_recv_woken_by_close);
	tcase_add_test(tc, test_chan_thread_threads_only_exactly_once);
	suite_add_tcase(s, tc);

	tc = tcase_create("notify_fd");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_chan_thread_notify_fd_rules);
	tcase_add_test(tc,
		       test_chan_thread_notify_fd_starts_readable_when_ready);
	tcase_add_test(tc, test_chan_thread_epoll_loop_consumes_stream_exactly);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(chan_thread)
