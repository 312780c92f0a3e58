/* SPDX-License-Identifier: MIT */
/*
 * test_io_sock.c - smarm_io_accept and smarm_io_connect over TCP
 * loopback: an echo server with many concurrent clients on 4 workers,
 * the accepted fd's flags and peer address, accept timeouts (bounded,
 * zero, on a blocking listener), connect timeouts (a listener whose
 * backlog is full drops the SYN, so the attempt stays in progress) and
 * a later call waiting for the same attempt, a zero-timeout connect
 * polled to completion, refused connects (errno ECONNREFUSED), one
 * waiter per fd (SMARM_EEXIST), a stop while waiting (no registration
 * and no fd left), and misuse.
 *
 * Results observed inside actors go into the global `R` (or are checked
 * with HARNESS_CHECK) and are asserted after the run returns.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static struct {
	int rc[32];
	int err[32];
	int fd[8];
	int how[4];
	int64_t stat[8];
	uint64_t ns[4];
	atomic_int flag;
	atomic_int done;
	struct sockaddr_in addr; /* the test listener's address */
	int lfd;		 /* the test listener */
} R;

static void reset(void)
{
	memset(&R, 0, sizeof R);
	R.lfd = -1;
	for (int i = 0; i < 8; i++)
		R.fd[i] = -1;
	harness_checks_reset();
	signal(SIGPIPE, SIG_IGN);
}

static void close_fds(void)
{
	if (R.lfd >= 0)
		close(R.lfd);
	for (int i = 0; i < 8; i++)
		if (R.fd[i] >= 0)
			close(R.fd[i]);
}

/* A TCP listener on 127.0.0.1, any port; its address into *addr. */
static int listen_tcp(int backlog, bool nonblock, struct sockaddr_in *addr)
{
	socklen_t len = sizeof *addr;
	int fd = socket(
		AF_INET,
		SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	memset(addr, 0, sizeof *addr);
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof *addr) != 0 ||
	    listen(fd, backlog) != 0 ||
	    getsockname(fd, (struct sockaddr *)addr, &len) != 0)
		return -1;
	return fd;
}

/* A fresh, blocking TCP socket (smarm_io_connect makes it O_NONBLOCK). */
static int tcp_socket(void)
{
	return socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

static bool is_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && (fl & O_NONBLOCK) != 0;
}

static const struct sockaddr *sa(const struct sockaddr_in *a)
{
	return (const struct sockaddr *)a;
}

/* Open descriptors of the process (the run's own are closed at its end). */
static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own */
}

/* A closed descriptor number nobody reuses during the test. */
static int closed_fd(void)
{
	int fd = fcntl(0, F_DUPFD_CLOEXEC, 1000);
	ck_assert_int_ge(fd, 1000);
	close(fd);
	return fd;
}

static void flag_actor(void *arg)
{
	(void)arg;
	atomic_store(&R.flag, 1);
}

static bool write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ptrdiff_t got;
		if (smarm_io_write(fd, p, len, &got) != 0 || got <= 0)
			return false;
		p += got;
		len -= (size_t)got;
	}
	return true;
}

static bool read_all(int fd, char *p, size_t len)
{
	while (len > 0) {
		ptrdiff_t got;
		if (smarm_io_read(fd, p, len, &got) != 0 || got <= 0)
			return false;
		p += got;
		len -= (size_t)got;
	}
	return true;
}

/* ------------------------------------------------------------- echo */

#define CLIENTS 32
#define ROUNDS 50
#define MSG 200

static void echo_handler(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[512];
	for (;;) {
		ptrdiff_t got;
		int rc = smarm_io_read(fd, buf, sizeof buf, &got);
		HARNESS_EQ(rc, 0);
		if (rc != 0 || got == 0)
			break;
		HARNESS_CHECK(write_all(fd, buf, (size_t)got));
	}
	close(fd);
}

static void echo_server(void *arg)
{
	smarm_pid_t h[CLIENTS];
	int n = 0;
	(void)arg;
	for (int i = 0; i < CLIENTS; i++) {
		struct sockaddr_storage peer;
		size_t plen = sizeof peer;
		int c = -1;
		int rc = smarm_io_accept(R.lfd, (struct sockaddr *)&peer, &plen,
					 MS(20000), &c);
		HARNESS_EQ(rc, 0);
		if (rc != 0)
			break;
		HARNESS_EQ(plen, sizeof(struct sockaddr_in));
		HARNESS_EQ(peer.ss_family, AF_INET);
		HARNESS_CHECK(is_nonblock(c));
		HARNESS_EQ(smarm_actor_spawn(&h[n], echo_handler,
					     (void *)(intptr_t)c, NULL),
			   0);
		n++;
	}
	for (int i = 0; i < n; i++)
		smarm_actor_join(h[i], NULL, NULL);
}

static void echo_client(void *arg)
{
	int id = (int)(intptr_t)arg;
	char out[MSG], in[MSG];
	int fd = tcp_socket();
	HARNESS_CHECK(fd >= 0);
	HARNESS_CHECK(!is_nonblock(fd));
	HARNESS_EQ(smarm_io_connect(fd, sa(&R.addr), sizeof R.addr, MS(20000)),
		   0);
	HARNESS_CHECK(is_nonblock(fd)); /* the call set it */
	for (int r = 0; r < ROUNDS; r++) {
		for (int k = 0; k < MSG; k++)
			out[k] = (char)(id * 31 + r * 7 + k);
		if (!write_all(fd, out, sizeof out) ||
		    !read_all(fd, in, sizeof in) ||
		    memcmp(in, out, sizeof in) != 0) {
			HARNESS_CHECK(false);
			break;
		}
	}
	close(fd);
	atomic_fetch_add(&R.done, 1);
}

static void echo_root(void *arg)
{
	smarm_pid_t srv, cl[CLIENTS];
	(void)arg;
	R.lfd = listen_tcp(CLIENTS, true, &R.addr);
	HARNESS_CHECK(R.lfd >= 0);
	smarm_actor_spawn(&srv, echo_server, NULL, NULL);
	for (int i = 0; i < CLIENTS; i++)
		smarm_actor_spawn(&cl[i], echo_client, (void *)(intptr_t)i,
				  NULL);
	for (int i = 0; i < CLIENTS; i++)
		smarm_actor_join(cl[i], NULL, NULL);
	smarm_actor_join(srv, NULL, NULL);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_sock_echo_many_clients_round_trip)
{
	int fds;
	reset();
	fds = count_fds();
	ck_assert_int_eq(harness_run(4, echo_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&R.done), CLIENTS);
	ck_assert_int_eq(R.stat[0], 0);
	close_fds();
	ck_assert_int_eq(count_fds(), fds); /* every accepted fd closed */
}
END_TEST

/* The accepted fd's flags and the peer address (full and truncated). */
static void peer_root(void *arg)
{
	struct sockaddr_storage peer;
	struct sockaddr_in local;
	socklen_t llen = sizeof local;
	size_t plen = sizeof peer;
	char small[4];
	(void)arg;
	R.lfd = listen_tcp(8, true, &R.addr);
	for (int i = 0; i < 3; i++) {
		R.fd[i] = tcp_socket();
		R.rc[i] = smarm_io_connect(R.fd[i], sa(&R.addr), sizeof R.addr,
					   MS(10000));
	}
	getsockname(R.fd[0], (struct sockaddr *)&local, &llen);
	R.rc[3] = smarm_io_accept(R.lfd, (struct sockaddr *)&peer, &plen,
				  MS(10000), &R.fd[3]);
	R.rc[4] = (int)plen;
	R.rc[5] = peer.ss_family == AF_INET &&
		  ((struct sockaddr_in *)&peer)->sin_addr.s_addr ==
			  htonl(INADDR_LOOPBACK) &&
		  ((struct sockaddr_in *)&peer)->sin_port == local.sin_port;
	R.rc[6] = is_nonblock(R.fd[3]);
	R.rc[7] = fcntl(R.fd[3], F_GETFD) & FD_CLOEXEC;
	plen = sizeof small; /* truncated: full size reported */
	R.rc[8] = smarm_io_accept(R.lfd, (struct sockaddr *)small, &plen,
				  MS(10000), &R.fd[4]);
	R.rc[9] = (int)plen;
	R.rc[10] = smarm_io_accept(R.lfd, NULL, NULL, MS(10000), &R.fd[5]);
}

START_TEST(test_io_sock_accept_sets_flags_and_peer_address)
{
	reset();
	ck_assert_int_eq(harness_run(2, peer_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_ge(R.lfd, 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(R.rc[i], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], sizeof(struct sockaddr_in));
	ck_assert_int_eq(R.rc[5], 1); /* it is fd[0]'s connection */
	ck_assert_int_eq(R.rc[6], 1);
	ck_assert_int_eq(R.rc[7], FD_CLOEXEC);
	ck_assert_int_eq(R.rc[8], 0);
	ck_assert_int_eq(R.rc[9], sizeof(struct sockaddr_in));
	ck_assert_int_eq(R.rc[10], 0);
	ck_assert_int_ge(R.fd[5], 0);
	close_fds();
}
END_TEST

/* --------------------------------------------------------- timeouts */

static void accept_timeout_root(void *arg)
{
	uint64_t t0;
	int c;
	(void)arg;
	R.lfd = listen_tcp(8, true, &R.addr);
	t0 = smarm_now_ns();
	R.rc[0] = smarm_io_accept(R.lfd, NULL, NULL, MS(100), &c);
	R.ns[0] = harness_since(t0);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	/* The listener is not poisoned: a real connection is accepted. */
	R.fd[0] = tcp_socket();
	R.rc[1] = smarm_io_connect(R.fd[0], sa(&R.addr), sizeof R.addr,
				   MS(10000));
	R.rc[2] =
		smarm_io_accept(R.lfd, NULL, NULL, SMARM_NO_TIMEOUT, &R.fd[1]);
}

START_TEST(test_io_sock_accept_timeout_returns_etimedout)
{
	reset();
	ck_assert_int_eq(harness_run(2, accept_timeout_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_uint_ge(R.ns[0], MS(100));
	ck_assert_elapsed_lt(R.ns[0], MS(5000));
	ck_assert_int_eq(R.stat[0], 0); /* unregistered */
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_ge(R.fd[1], 0);
	close_fds();
}
END_TEST

/*
 * Timeout 0: one check. With nothing pending it is SMARM_ETIMEDOUT at
 * once, and on one worker the spawned child has not run (no park, no
 * yield) and no epoll thread was started; a pending connection is
 * accepted.
 */
static void accept_zero_root(void *arg)
{
	int c = -1;
	(void)arg;
	R.lfd = listen_tcp(8, true, &R.addr);
	smarm_actor_spawn(NULL, flag_actor, NULL, NULL);
	R.rc[0] = smarm_io_accept(R.lfd, NULL, NULL, 0, &c);
	R.rc[1] = atomic_load(&R.flag);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_THREADS);
	R.fd[0] = tcp_socket();
	R.rc[2] = smarm_io_connect(R.fd[0], sa(&R.addr), sizeof R.addr,
				   MS(10000));
	/* Queued on the listener's side: readable. */
	R.rc[3] = smarm_io_wait_readable_timeout(R.lfd, MS(10000));
	R.rc[4] = smarm_io_accept(R.lfd, NULL, NULL, 0, &R.fd[1]);
}

START_TEST(test_io_sock_accept_zero_timeout_checks_once)
{
	reset();
	ck_assert_int_eq(harness_run(1, accept_zero_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[1], 0);	/* did not park or yield */
	ck_assert_int_eq(R.stat[0], 0); /* no epoll thread */
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_int_ge(R.fd[1], 0);
	close_fds();
}
END_TEST

/*
 * A blocking listener gets O_NONBLOCK and never blocks the worker: on
 * one worker, the child runs while the accept waits.
 */
static void blocking_listener_root(void *arg)
{
	int c = -1;
	(void)arg;
	R.lfd = listen_tcp(8, false, &R.addr);
	R.rc[0] = is_nonblock(R.lfd);
	smarm_actor_spawn(NULL, flag_actor, NULL, NULL);
	R.rc[1] = smarm_io_accept(R.lfd, NULL, NULL, MS(50), &c);
	R.rc[2] = atomic_load(&R.flag);
	R.rc[3] = is_nonblock(R.lfd);
	R.fd[0] = tcp_socket();
	R.rc[4] = smarm_io_connect(R.fd[0], sa(&R.addr), sizeof R.addr,
				   MS(10000));
	R.rc[5] = smarm_io_accept(R.lfd, NULL, NULL, MS(10000), &R.fd[1]);
}

START_TEST(test_io_sock_accept_blocking_listener_does_not_block_worker)
{
	reset();
	ck_assert_int_eq(harness_run(1, blocking_listener_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[2], 1); /* the worker ran the child */
	ck_assert_int_eq(R.rc[3], 1);
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_int_eq(R.rc[5], 0);
	close_fds();
}
END_TEST

/*
 * A listener with backlog 0 takes one connection into its accept queue;
 * while that one is not accepted, Linux drops further SYNs, so a second
 * connect stays in progress (the client retransmits its SYN after 1 s,
 * 3 s, ...). Sets up R.lfd, R.fd[0] (connected, queued) and R.fd[1] (a
 * fresh socket for the connect that will hang); 0 on success.
 */
static int full_backlog(void)
{
	R.lfd = listen_tcp(0, true, &R.addr);
	R.fd[0] = tcp_socket();
	R.fd[1] = tcp_socket();
	if (R.lfd < 0 || R.fd[0] < 0 || R.fd[1] < 0)
		return -1;
	if (smarm_io_connect(R.fd[0], sa(&R.addr), sizeof R.addr, MS(10000)) !=
	    0)
		return -2;
	/* The listener's side queued it: the queue is full now. */
	if (smarm_io_wait_readable_timeout(R.lfd, MS(10000)) != 0)
		return -3;
	return 0;
}

static void connect_timeout_root(void *arg)
{
	uint64_t t0;
	(void)arg;
	R.rc[0] = full_backlog();
	t0 = smarm_now_ns();
	R.rc[1] =
		smarm_io_connect(R.fd[1], sa(&R.addr), sizeof R.addr, MS(200));
	R.ns[0] = harness_since(t0);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	/* Still in progress: a zero-timeout call checks it again. */
	R.rc[2] = smarm_io_connect(R.fd[1], sa(&R.addr), sizeof R.addr, 0);
	/* Make room; the retransmitted SYN gets in, the same attempt ends. */
	R.rc[3] = smarm_io_accept(R.lfd, NULL, NULL, MS(10000), &R.fd[2]);
	R.rc[4] = smarm_io_connect(R.fd[1], sa(&R.addr), sizeof R.addr,
				   MS(20000));
	R.rc[5] = smarm_io_accept(R.lfd, NULL, NULL, MS(20000), &R.fd[3]);
	/* It is that attempt's connection: a byte goes through. */
	R.rc[6] = write_all(R.fd[1], "k", 1);
	{
		char c = 0;
		R.rc[7] = read_all(R.fd[3], &c, 1) && c == 'k';
	}
	/* Connected now: another connect is refused. */
	R.rc[8] =
		smarm_io_connect(R.fd[1], sa(&R.addr), sizeof R.addr, MS(1000));
}

START_TEST(test_io_sock_connect_timeout_then_same_attempt_completes)
{
	reset();
	ck_assert_int_eq(harness_run(4, connect_timeout_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], SMARM_ETIMEDOUT);
	ck_assert_uint_ge(R.ns[0], MS(200));
	ck_assert_elapsed_lt(R.ns[0], MS(5000));
	ck_assert_int_eq(R.stat[0], 0); /* unregistered */
	ck_assert_int_eq(R.rc[2], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_int_eq(R.rc[5], 0);
	ck_assert_int_eq(R.rc[6], 1);
	ck_assert_int_eq(R.rc[7], 1);
	ck_assert_int_eq(R.rc[8], SMARM_ESTATE);
	close_fds();
}
END_TEST

/*
 * Timeout 0 never parks: the attempt is started, then polled with more
 * zero-timeout calls (the actor sleeps 1 ms in between, on the timer,
 * not the epoll thread) until it is connected.
 */
static void connect_zero_root(void *arg)
{
	int rc = SMARM_ETIMEDOUT;
	int calls = 0;
	(void)arg;
	R.lfd = listen_tcp(8, true, &R.addr);
	R.fd[0] = tcp_socket();
	R.rc[0] = smarm_io_connect(R.fd[0], sa(&R.addr), sizeof R.addr, 0);
	rc = R.rc[0];
	while (rc == SMARM_ETIMEDOUT && calls++ < 10000) {
		smarm_actor_sleep(MS(1));
		rc = smarm_io_connect(R.fd[0], sa(&R.addr), sizeof R.addr, 0);
	}
	R.rc[1] = rc;
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_THREADS);
	R.rc[2] = smarm_io_connect(R.fd[0], sa(&R.addr), sizeof R.addr, 0);
}

START_TEST(test_io_sock_connect_zero_timeout_polls_to_completion)
{
	reset();
	ck_assert_int_eq(harness_run(2, connect_zero_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert(R.rc[0] == 0 || R.rc[0] == SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.stat[0], 0); /* never parked on the fd */
	ck_assert_int_eq(R.rc[2], SMARM_ESTATE);
	close_fds();
}
END_TEST

/* ------------------------------------------------- refused, EEXIST */

static void refused_root(void *arg)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	(void)arg;
	/* Bound, not listening: the port is ours and refuses (RST). */
	R.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(R.lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(R.lfd, (struct sockaddr *)&a, &len) != 0)
		R.rc[9] = -1;
	for (int i = 0; i < 2; i++) {
		R.fd[i] = tcp_socket();
		errno = 0;
		R.rc[i] =
			smarm_io_connect(R.fd[i], sa(&a), sizeof a,
					 i == 0 ? MS(10000) : SMARM_NO_TIMEOUT);
		R.err[i] = errno;
	}
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_sock_connect_refused_sets_errno)
{
	reset();
	ck_assert_int_eq(harness_run(2, refused_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[9], 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(R.rc[i], SMARM_ESYSTEM);
		ck_assert_int_eq(R.err[i], ECONNREFUSED);
	}
	ck_assert_int_eq(R.stat[0], 0);
	close_fds();
}
END_TEST

static void acceptor(void *arg)
{
	int slot = (int)(intptr_t)arg;
	R.rc[slot] = smarm_io_accept(R.lfd, NULL, NULL, SMARM_NO_TIMEOUT,
				     &R.fd[slot]);
	R.rc[slot + 1] = 1; /* returned */
}

static void accept_eexist_root(void *arg)
{
	smarm_pid_t a;
	int c = -1;
	(void)arg;
	R.lfd = listen_tcp(8, true, &R.addr);
	R.rc[0] = R.rc[1] = -1000;
	smarm_actor_spawn(&a, acceptor, (void *)(intptr_t)0, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.rc[9] = -1;
	R.rc[2] = smarm_io_accept(R.lfd, NULL, NULL, MS(10), &c);
	R.rc[3] = smarm_io_accept(R.lfd, NULL, NULL, 0, &c);
	R.rc[4] = smarm_io_accept(R.lfd, NULL, NULL, SMARM_NO_TIMEOUT, &c);
	R.rc[5] = smarm_io_wait_readable_timeout(R.lfd, 0);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	/* The first waiter is untouched: it takes a connection. */
	R.fd[3] = tcp_socket();
	R.rc[6] = smarm_io_connect(R.fd[3], sa(&R.addr), sizeof R.addr,
				   MS(10000));
	smarm_actor_join(a, &R.how[0], NULL);
}

START_TEST(test_io_sock_accept_second_waiter_eexist)
{
	reset();
	ck_assert_int_eq(harness_run(4, accept_eexist_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[9], 0);
	ck_assert_int_eq(R.rc[2], SMARM_EEXIST);
	ck_assert_int_eq(R.rc[3], SMARM_EEXIST);
	ck_assert_int_eq(R.rc[4], SMARM_EEXIST);
	ck_assert_int_eq(R.rc[5], SMARM_EEXIST);
	ck_assert_int_eq(R.stat[0], 1);
	ck_assert_int_eq(R.rc[6], 0);
	ck_assert_int_eq(R.how[0], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 1);
	ck_assert_int_ge(R.fd[0], 0);
	close_fds();
}
END_TEST

static void connector(void *arg)
{
	int slot = (int)(intptr_t)arg;
	R.rc[slot] = smarm_io_connect(R.fd[1], sa(&R.addr), sizeof R.addr,
				      MS(20000));
	R.rc[slot + 1] = 1; /* returned */
}

static void connect_eexist_root(void *arg)
{
	smarm_pid_t a;
	(void)arg;
	R.rc[0] = R.rc[1] = -1000;
	R.rc[9] = full_backlog();
	smarm_actor_spawn(&a, connector, (void *)(intptr_t)0, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.rc[8] = -1;
	R.rc[2] = smarm_io_connect(R.fd[1], sa(&R.addr), sizeof R.addr, MS(10));
	R.rc[3] = smarm_io_connect(R.fd[1], sa(&R.addr), sizeof R.addr, 0);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	/* Make room: the first waiter's attempt completes. */
	R.rc[4] = smarm_io_accept(R.lfd, NULL, NULL, MS(10000), &R.fd[2]);
	smarm_actor_join(a, &R.how[0], NULL);
	R.stat[1] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_sock_connect_second_waiter_eexist)
{
	reset();
	ck_assert_int_eq(harness_run(4, connect_eexist_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[9], 0);
	ck_assert_int_eq(R.rc[8], 0);
	ck_assert_int_eq(R.rc[2], SMARM_EEXIST);
	ck_assert_int_eq(R.rc[3], SMARM_EEXIST);
	ck_assert_int_eq(R.stat[0], 1);
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_int_eq(R.how[0], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 1);
	ck_assert_int_eq(R.stat[1], 0);
	close_fds();
}
END_TEST

/* ------------------------------------------------------------- stop */

static void accept_stop_root(void *arg)
{
	smarm_pid_t a, b;
	(void)arg;
	R.lfd = listen_tcp(8, true, &R.addr);
	R.rc[0] = R.rc[1] = -1000;
	smarm_actor_spawn(&a, acceptor, (void *)(intptr_t)0, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.rc[9] = -1;
	smarm_actor_stop(a);
	smarm_actor_join(a, &R.how[0], NULL);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
	/* The listener is not poisoned: a second acceptor gets a client. */
	smarm_actor_spawn(&b, acceptor, (void *)(intptr_t)2, NULL);
	R.fd[4] = tcp_socket();
	R.rc[6] = smarm_io_connect(R.fd[4], sa(&R.addr), sizeof R.addr,
				   MS(10000));
	smarm_actor_join(b, &R.how[1], NULL);
	R.stat[1] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_sock_stop_while_accepting_leaves_nothing)
{
	int fds;
	reset();
	fds = count_fds();
	ck_assert_int_eq(harness_run(4, accept_stop_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[9], 0);
	ck_assert_int_eq(R.how[0], SMARM_EXIT_STOPPED);
	ck_assert_int_eq(R.rc[0], -1000); /* never returned */
	ck_assert_int_eq(R.rc[1], -1000);
	ck_assert_int_eq(R.fd[0], -1); /* and took no connection */
	ck_assert_int_eq(R.stat[0], 0);
	ck_assert_int_eq(R.rc[6], 0);
	ck_assert_int_eq(R.how[1], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.stat[1], 0);
	close_fds();
	ck_assert_int_eq(count_fds(), fds);
}
END_TEST

static void close_cb(void *arg)
{
	int *fd = arg;
	close(*fd);
	*fd = -1;
}

static void stopped_connector(void *arg)
{
	(void)arg;
	smarm_cleanup_push(close_cb, &R.fd[1]);
	R.rc[0] = smarm_io_connect(R.fd[1], sa(&R.addr), sizeof R.addr,
				   SMARM_NO_TIMEOUT);
	R.rc[1] = 1; /* returned */
}

static void connect_stop_root(void *arg)
{
	smarm_pid_t a;
	(void)arg;
	R.rc[0] = R.rc[1] = -1000;
	R.rc[9] = full_backlog();
	smarm_actor_spawn(&a, stopped_connector, NULL, NULL);
	if (!harness_await_stat(smarm_node_current(), SMARM_STAT_IO_FD_WAITERS,
				1))
		R.rc[8] = -1;
	smarm_actor_stop(a);
	smarm_actor_join(a, &R.how[0], NULL);
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_sock_stop_while_connecting_leaves_nothing)
{
	int fds;
	reset();
	fds = count_fds();
	ck_assert_int_eq(harness_run(4, connect_stop_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[9], 0);
	ck_assert_int_eq(R.rc[8], 0);
	ck_assert_int_eq(R.how[0], SMARM_EXIT_STOPPED);
	ck_assert_int_eq(R.rc[0], -1000);
	ck_assert_int_eq(R.rc[1], -1000);
	ck_assert_int_eq(R.fd[1], -1); /* the cleanup handler closed it */
	ck_assert_int_eq(R.stat[0], 0);
	close_fds();
	ck_assert_int_eq(count_fds(), fds);
}
END_TEST

/* ----------------------------------------------------------- misuse */

static void accept_misuse_root(void *arg)
{
	struct sockaddr_storage ss;
	size_t len = sizeof ss;
	size_t huge = (size_t)INT_MAX + 1;
	struct sockaddr_in a;
	int c = -1;
	int p[2];
	(void)arg;
	R.lfd = listen_tcp(8, true, &R.addr);
	R.rc[0] = smarm_io_accept(-1, NULL, NULL, 0, &c);
	R.rc[1] = smarm_io_accept(R.lfd, NULL, NULL, 0, NULL);
	R.rc[2] = smarm_io_accept(R.lfd, (struct sockaddr *)&ss, NULL, 0, &c);
	R.rc[3] = smarm_io_accept(R.lfd, NULL, &len, 0, &c);
	R.rc[4] = smarm_io_accept(R.lfd, (struct sockaddr *)&ss, &huge, 0, &c);
	R.rc[5] =
		smarm_io_accept(closed_fd(), NULL, NULL, SMARM_NO_TIMEOUT, &c);
	/* Not a socket: refused, and a blocking pipe is left blocking. */
	if (pipe2(p, O_CLOEXEC) != 0)
		R.rc[31] = -1;
	R.fd[0] = p[0];
	R.fd[1] = p[1];
	R.rc[6] = smarm_io_accept(p[0], NULL, NULL, SMARM_NO_TIMEOUT, &c);
	R.rc[7] = is_nonblock(p[0]);
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	R.rc[8] = smarm_io_accept(p[1], NULL, NULL, SMARM_NO_TIMEOUT, &c);
	/* A socket that is not listening: blocking (left so), non-blocking. */
	R.fd[2] = tcp_socket();
	R.rc[9] = smarm_io_accept(R.fd[2], NULL, NULL, SMARM_NO_TIMEOUT, &c);
	R.rc[10] = is_nonblock(R.fd[2]);
	R.fd[3] =
		socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	R.rc[11] = smarm_io_accept(R.fd[3], NULL, NULL, SMARM_NO_TIMEOUT, &c);
	/* A datagram socket, bound: cannot listen. */
	R.fd[4] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(R.fd[4], (struct sockaddr *)&a, sizeof a);
	R.rc[12] = smarm_io_accept(R.fd[4], NULL, NULL, SMARM_NO_TIMEOUT, &c);
	fcntl(R.fd[4], F_SETFL, O_NONBLOCK);
	R.rc[13] = smarm_io_accept(R.fd[4], NULL, NULL, SMARM_NO_TIMEOUT, &c);
	R.rc[14] = c; /* never written */
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_sock_accept_misuse_returns_errors)
{
	reset();
	ck_assert_int_eq(harness_run(2, accept_misuse_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[31], 0);
	ck_assert_int_eq(R.rc[0], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[1], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[2], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[3], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[4], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[5], SMARM_EBADF);
	ck_assert_int_eq(R.rc[6], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[7], 0); /* left blocking */
	ck_assert_int_eq(R.rc[8], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[9], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[10], 0); /* left blocking */
	ck_assert_int_eq(R.rc[11], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[12], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[13], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[14], -1);
	ck_assert_int_eq(R.stat[0], 0);
	close_fds();
}
END_TEST

static void connect_misuse_root(void *arg)
{
	struct sockaddr_in6 a6;
	struct sockaddr_un un;
	int p[2];
	int sp[2];
	(void)arg;
	R.lfd = listen_tcp(8, true, &R.addr);
	R.fd[0] = tcp_socket();
	R.rc[0] = smarm_io_connect(-1, sa(&R.addr), sizeof R.addr, 0);
	R.rc[1] = smarm_io_connect(R.fd[0], NULL, sizeof R.addr, 0);
	R.rc[2] = smarm_io_connect(R.fd[0], sa(&R.addr), 0, 0);
	R.rc[3] =
		smarm_io_connect(R.fd[0], sa(&R.addr), (size_t)INT_MAX + 1, 0);
	R.rc[4] = smarm_io_connect(closed_fd(), sa(&R.addr), sizeof R.addr,
				   SMARM_NO_TIMEOUT);
	/* Not a socket: refused, and a blocking pipe is left blocking. */
	if (pipe2(p, O_CLOEXEC) != 0)
		R.rc[31] = -1;
	R.fd[1] = p[0];
	R.fd[2] = p[1];
	R.rc[5] = smarm_io_connect(p[0], sa(&R.addr), sizeof R.addr,
				   SMARM_NO_TIMEOUT);
	R.rc[6] = is_nonblock(p[0]);
	/* An IPv6 address for an IPv4 socket; a too short address. */
	memset(&a6, 0, sizeof a6);
	a6.sin6_family = AF_INET6;
	a6.sin6_addr = in6addr_loopback;
	a6.sin6_port = R.addr.sin_port;
	R.rc[7] = smarm_io_connect(R.fd[0], (struct sockaddr *)&a6, sizeof a6,
				   SMARM_NO_TIMEOUT);
	R.rc[8] = smarm_io_connect(R.fd[0], sa(&R.addr), 4, SMARM_NO_TIMEOUT);
	/* Connected already: refused, and nothing waits. */
	R.rc[9] = smarm_io_connect(R.fd[0], sa(&R.addr), sizeof R.addr,
				   MS(10000));
	R.rc[10] = smarm_io_connect(R.fd[0], sa(&R.addr), sizeof R.addr,
				    SMARM_NO_TIMEOUT);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
		R.rc[31] = -2;
	R.fd[3] = sp[0];
	R.fd[4] = sp[1];
	/* A Unix-domain listener (abstract name) for the connected pair. */
	memset(&un, 0, sizeof un);
	un.sun_family = AF_UNIX;
	snprintf(un.sun_path + 1, sizeof un.sun_path - 1,
		 "smarm-test-io-sock-%d", (int)getpid());
	R.fd[6] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (bind(R.fd[6], (struct sockaddr *)&un, sizeof un) != 0 ||
	    listen(R.fd[6], 1) != 0)
		R.rc[31] = -3;
	R.rc[11] = smarm_io_connect(sp[0], (struct sockaddr *)&un, sizeof un,
				    SMARM_NO_TIMEOUT);
	/* A Unix-domain address nobody listens on fails at once. */
	un.sun_path[1] = 'X';
	R.fd[5] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	errno = 0;
	R.rc[12] = smarm_io_connect(R.fd[5], (struct sockaddr *)&un, sizeof un,
				    SMARM_NO_TIMEOUT);
	R.err[12] = errno;
	R.stat[0] = harness_actor_stat(SMARM_STAT_IO_FD_WAITERS);
}

START_TEST(test_io_sock_connect_misuse_returns_errors)
{
	reset();
	ck_assert_int_eq(harness_run(2, connect_misuse_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[31], 0);
	ck_assert_int_eq(R.rc[0], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[1], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[2], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[3], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[4], SMARM_EBADF);
	ck_assert_int_eq(R.rc[5], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[6], 0); /* left blocking */
	ck_assert_int_eq(R.rc[7], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[8], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[9], 0);
	ck_assert_int_eq(R.rc[10], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[11], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[12], SMARM_ESYSTEM);
	ck_assert_int_eq(R.err[12], ECONNREFUSED);
	ck_assert_int_eq(R.stat[0], 0);
	close_fds();
}
END_TEST

START_TEST(test_io_sock_outside_actor_returns_enotactor)
{
	struct sockaddr_in a;
	int c = -1;
	int l;
	reset();
	l = listen_tcp(8, true, &a);
	ck_assert_int_ge(l, 0);
	ck_assert_int_eq(smarm_io_accept(l, NULL, NULL, 0, &c),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_io_accept(-1, NULL, NULL, 0, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_io_connect(l, sa(&a), sizeof a, 0),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(c, -1);
	close(l);
}
END_TEST

Suite *smarm_test_io_sock_suite(void)
{
	Suite *s = suite_create("io_sock");
	TCase *tc = tcase_create("echo");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_io_sock_echo_many_clients_round_trip);
	tcase_add_test(tc, test_io_sock_accept_sets_flags_and_peer_address);
	suite_add_tcase(s, tc);

	tc = tcase_create("timeouts");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_io_sock_accept_timeout_returns_etimedout);
	tcase_add_test(tc, test_io_sock_accept_zero_timeout_checks_once);
	tcase_add_test(
		tc,
		test_io_sock_accept_blocking_listener_does_not_block_worker);
	tcase_add_test(
		tc, test_io_sock_connect_timeout_then_same_attempt_completes);
	tcase_add_test(tc,
		       test_io_sock_connect_zero_timeout_polls_to_completion);
	suite_add_tcase(s, tc);

	tc = tcase_create("waiters");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_io_sock_connect_refused_sets_errno);
	tcase_add_test(tc, test_io_sock_accept_second_waiter_eexist);
	tcase_add_test(tc, test_io_sock_connect_second_waiter_eexist);
	tcase_add_test(tc, test_io_sock_stop_while_accepting_leaves_nothing);
	tcase_add_test(tc, test_io_sock_stop_while_connecting_leaves_nothing);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_io_sock_accept_misuse_returns_errors);
	tcase_add_test(tc, test_io_sock_connect_misuse_returns_errors);
	tcase_add_test(tc, test_io_sock_outside_actor_returns_enotactor);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(io_sock)
