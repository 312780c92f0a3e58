/* SPDX-License-Identifier: MIT */
/*
 * echo_server.c - a TCP echo server and its clients, all actors of one
 * node, using only <smarm/smarm.h>.
 *
 * main() opens a listening socket on 127.0.0.1, port 0 (the kernel picks
 * a free port, which is printed), and runs the node. In the node:
 *
 *   listener   accepts connections (smarm_io_accept) and spawns one
 *              session actor per connection;
 *   session    echoes what it reads (smarm_io_read / smarm_io_write)
 *              until the client closes, then reports on a channel;
 *   client     connects (smarm_io_connect), sends N_MSGS lines, checks
 *              that each comes back unchanged, and closes;
 *   root       starts the listener and the clients, joins the clients,
 *              waits for every session's report, stops the listener.
 *
 * Every wait is bounded (IO_TIMEOUT), so a broken run fails instead of
 * hanging. Exit status 0 when every check passed; otherwise a message on
 * stderr and status 1.
 *
 * Build: cc echo_server.c $(pkg-config --cflags --libs smarm)
 * Run:   ./echo_server
 */
#include <smarm/smarm.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define N_CLIENTS 4
#define N_MSGS 100
#define IO_TIMEOUT (10 * 1000000000ull) /* 10 s: only a broken run waits */

/* A call that must succeed: otherwise say which, and why, and give up. */
#define CHECK(call)                                                            \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (rc_ != 0) {                                                \
			fprintf(stderr, "echo_server:%d: %s: %s\n", __LINE__,  \
				#call, smarm_strerror(rc_));                   \
			exit(1);                                               \
		}                                                              \
	} while (0)

static void fail(const char *what)
{
	fprintf(stderr, "echo_server: %s\n", what);
	exit(1);
}

static int listen_fd;		/* set by main before the run */
static struct sockaddr_in addr; /* the address it listens on */
static smarm_chan_t *done;	/* sessions -> root: bytes echoed (long) */

/* Read at most len bytes, waiting at most IO_TIMEOUT; *n 0 is EOF. */
static int read_some(int fd, void *buf, size_t len, ptrdiff_t *n)
{
	int rc = smarm_io_wait_readable_timeout(fd, IO_TIMEOUT);
	return rc != 0 ? rc : smarm_io_read(fd, buf, len, n);
}

/* Write all len bytes: a write may be short. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ptrdiff_t n;
		int rc = smarm_io_wait_writable_timeout(fd, IO_TIMEOUT);
		if (rc == 0)
			rc = smarm_io_write(fd, buf, len, &n);
		if (rc != 0)
			return rc;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * A cleanup handler runs however the session ends (returning, or stopped
 * when the run ends): the fd and the sender reference are never leaked.
 */
static void session_cleanup(void *arg)
{
	close((int)(intptr_t)arg);
	CHECK(smarm_chan_sender_free(done));
}

static void session(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[4096];
	long echoed = 0;
	ptrdiff_t n;

	CHECK(smarm_cleanup_push(session_cleanup, arg));
	for (;;) {
		CHECK(read_some(fd, buf, sizeof buf, &n));
		if (n == 0)
			break; /* the client closed its end */
		CHECK(write_all(fd, buf, (size_t)n));
		echoed += n;
	}
	CHECK(smarm_chan_send(done, &echoed));
} /* the cleanup handler runs here */

static void listener(void *arg)
{
	(void)arg;
	for (;;) {
		int c;
		/*
		 * No deadline: the root stops the listener, parked in
		 * here, once every session has reported.
		 */
		CHECK(smarm_io_accept(listen_fd, NULL, NULL, SMARM_NO_TIMEOUT,
				      &c));
		CHECK(smarm_chan_sender_dup(done)); /* the session's own */
		CHECK(smarm_actor_spawn(NULL, session, (void *)(intptr_t)c,
					NULL));
	}
}

static void client(void *arg)
{
	int id = (int)(intptr_t)arg;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fail("socket failed");
	CHECK(smarm_io_connect(fd, (const struct sockaddr *)&addr, sizeof addr,
			       IO_TIMEOUT));
	for (int i = 0; i < N_MSGS; i++) {
		char msg[64], back[64];
		size_t len = (size_t)snprintf(msg, sizeof msg,
					      "client %d, line %d\n", id, i);
		CHECK(write_all(fd, msg, len));
		/* TCP is a byte stream: the echo may come back in pieces. */
		for (size_t got = 0; got < len;) {
			ptrdiff_t n;
			CHECK(read_some(fd, back + got, len - got, &n));
			if (n == 0)
				fail("server closed the connection early");
			got += (size_t)n;
		}
		if (memcmp(msg, back, len) != 0)
			fail("echo differs from what was sent");
	}
	close(fd); /* the session reads EOF and reports */
}

static void root(void *arg)
{
	smarm_pid_t lpid, cpid[N_CLIENTS];
	int how;
	long echoed, total = 0;

	(void)arg;
	CHECK(smarm_chan_alloc(&done, sizeof(long), NULL));
	CHECK(smarm_actor_spawn(&lpid, listener, NULL, NULL));
	for (int i = 0; i < N_CLIENTS; i++)
		CHECK(smarm_actor_spawn(&cpid[i], client, (void *)(intptr_t)i,
					NULL));
	for (int i = 0; i < N_CLIENTS; i++) {
		CHECK(smarm_actor_join(cpid[i], &how, NULL));
		if (how != SMARM_EXIT_NORMAL)
			fail("a client did not end normally");
	}
	for (int i = 0; i < N_CLIENTS; i++) {
		CHECK(smarm_chan_recv_timeout(done, &echoed, IO_TIMEOUT));
		total += echoed;
	}
	/* A stop ends the listener inside smarm_io_accept. */
	CHECK(smarm_actor_stop(lpid));
	CHECK(smarm_actor_join(lpid, &how, NULL));
	if (how != SMARM_EXIT_STOPPED)
		fail("the listener did not end by the stop");
	CHECK(smarm_chan_sender_free(done));
	CHECK(smarm_chan_receiver_free(done));
	printf("echo_server: %d clients, %d lines each, %ld bytes echoed\n",
	       N_CLIENTS, N_MSGS, total);
}

int main(void)
{
	socklen_t alen = sizeof addr;
	smarm_node_t *node;
	int how;

	/* A peer that closes early is an error to report, not a signal. */
	signal(SIGPIPE, SIG_IGN);

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = 0; /* any free port */
	if (listen_fd < 0 ||
	    bind(listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
	    listen(listen_fd, SOMAXCONN) != 0 ||
	    getsockname(listen_fd, (struct sockaddr *)&addr, &alen) != 0)
		fail("cannot listen on 127.0.0.1");
	printf("echo_server: listening on 127.0.0.1:%u\n",
	       (unsigned)ntohs(addr.sin_port));

	CHECK(smarm_node_open(&node, NULL));
	CHECK(smarm_node_run(node, root, NULL, &how, NULL));
	if (how != SMARM_EXIT_NORMAL)
		fail("the root actor did not end normally");
	CHECK(smarm_node_close(node));
	close(listen_fd);
	return 0;
}
