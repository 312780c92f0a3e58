/* SPDX-License-Identifier: MIT */
/*
 * dist/epmd.c - the Erlang Port Mapper Daemon's client side: ALIVE2
 * registration (whose connection must stay open for as long as the name
 * is registered: epmd drops the name when it closes) and PORT_PLEASE2
 * lookups; and the socket helpers the handshake shares (exact reads with
 * a deadline, full writes, name resolution).
 *
 * Ownership: the registration's fd is returned to the caller (the dist
 * handle), which closes it at stop. A lookup's fd is closed here.
 * Locking: none; each call runs in its calling actor.
 * Invariants:
 *   INV-1 every length read from epmd is checked before it is used: a
 *         reply longer than we asked for is read and dropped, never
 *         copied.
 *   INV-2 every wait is bounded by DIST_SETUP_NS: a silent epmd fails
 *         the call instead of hanging the actor.
 * See: docs/distribution.md ("epmd").
 */
#include "dist.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
	EPMD_ALIVE2_REQ = 120,
	EPMD_ALIVE2_RESP = 121,
	EPMD_ALIVE2_X_RESP = 118,
	EPMD_PORT_PLEASE2_REQ = 122,
	EPMD_PORT2_RESP = 119,
};

static int epmd_port(void)
{
	const char *s = getenv("ERL_EPMD_PORT");
	if (s != NULL) {
		char *end;
		long v = strtol(s, &end, 10);
		if (*s != '\0' && *end == '\0' && v > 0 && v < 65536)
			return (int)v;
	}
	return 4369;
}

int smarm__dist_read_full(int fd, void *buf, size_t n, uint64_t deadline)
{
	uint8_t *p = buf;
	while (n > 0) {
		ssize_t k = read(fd, p, n);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k == 0)
			return SMARM_ENOCONN;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return SMARM_ENOCONN;
		uint64_t now = smarm_now_ns();
		if (now >= deadline)
			return SMARM_ETIMEDOUT; /* INV-2 */
		int rc = smarm_io_wait_readable_timeout(fd, deadline - now);
		if (rc == SMARM_ETIMEDOUT)
			return rc;
		if (rc != 0)
			return SMARM_ENOCONN;
	}
	return 0;
}

int smarm__dist_write_full(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n > 0) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (smarm_io_wait_writable(fd) != 0)
				return SMARM_ENOCONN;
			continue;
		}
		return SMARM_ENOCONN;
	}
	return 0;
}

/* A TCP socket connected to addr_be:port, or a negative code. */
static int tcp_connect(uint32_t addr_be, int port, int *out)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno == ENOMEM || errno == ENOBUFS ? SMARM_ENOMEM
							   : SMARM_ESYSTEM;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port),
				  .sin_addr = { .s_addr = addr_be } };
	int rc = smarm_io_connect(fd, (const struct sockaddr *)&sa, sizeof sa,
				  DIST_SETUP_NS);
	if (rc != 0) {
		close(fd);
		return rc == SMARM_ENOMEM ? rc : SMARM_ENOCONN;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	*out = fd;
	return 0;
}

int smarm__epmd_register(const char *alive, int port, int *out,
			 uint32_t *creation)
{
	size_t nl = strlen(alive);
	uint8_t req[2 + 13 + SMARM_DIST_NODE_MAX];
	size_t body = 13 + nl;
	uint8_t *p = req;
	*p++ = (uint8_t)(body >> 8);
	*p++ = (uint8_t)body;
	*p++ = EPMD_ALIVE2_REQ;
	*p++ = (uint8_t)(port >> 8);
	*p++ = (uint8_t)port;
	*p++ = 72; /* node type: hidden */
	*p++ = 0;  /* protocol: TCP/IPv4 */
	*p++ = 0;  /* highest version: 6 */
	*p++ = 6;
	*p++ = 0; /* lowest version: 6 */
	*p++ = 6;
	*p++ = (uint8_t)(nl >> 8);
	*p++ = (uint8_t)nl;
	memcpy(p, alive, nl);
	p += nl;
	*p++ = 0; /* no extra */
	*p++ = 0;
	int fd = -1;
	int rc = tcp_connect(htonl(INADDR_LOOPBACK), epmd_port(), &fd);
	if (rc != 0)
		return rc == SMARM_ENOMEM ? rc : SMARM_ENOEPMD;
	uint8_t resp[6];
	uint64_t deadline = smarm_now_ns() + DIST_SETUP_NS;
	if (smarm__dist_write_full(fd, req, (size_t)(p - req)) != 0 ||
	    smarm__dist_read_full(fd, resp, 2, deadline) != 0)
		goto no_epmd;
	if (resp[0] == EPMD_ALIVE2_X_RESP) {
		if (smarm__dist_read_full(fd, resp + 2, 4, deadline) != 0)
			goto no_epmd;
		*creation = (uint32_t)resp[2] << 24 | (uint32_t)resp[3] << 16 |
			    (uint32_t)resp[4] << 8 | resp[5];
	} else if (resp[0] == EPMD_ALIVE2_RESP) {
		if (smarm__dist_read_full(fd, resp + 2, 2, deadline) != 0)
			goto no_epmd;
		*creation = (uint32_t)resp[2] << 8 | resp[3];
	} else {
		goto no_epmd;
	}
	if (resp[1] != 0) {
		close(fd);
		return SMARM_EEXIST; /* the name is taken */
	}
	if (*creation == 0)
		*creation = 1; /* 0 is "any" in pids: never ours */
	*out = fd;
	return 0;
no_epmd:
	close(fd);
	return SMARM_ENOEPMD;
}

int smarm__epmd_port(uint32_t host_be, const char *alive, int *port)
{
	size_t nl = strlen(alive);
	uint8_t req[3 + SMARM_DIST_NODE_MAX];
	req[0] = (uint8_t)((nl + 1) >> 8);
	req[1] = (uint8_t)(nl + 1);
	req[2] = EPMD_PORT_PLEASE2_REQ;
	memcpy(req + 3, alive, nl);
	int fd = -1;
	int rc = tcp_connect(host_be, epmd_port(), &fd);
	if (rc != 0)
		return rc == SMARM_ENOMEM ? rc : SMARM_ENOEPMD;
	uint64_t deadline = smarm_now_ns() + DIST_SETUP_NS;
	uint8_t resp[4];
	if (smarm__dist_write_full(fd, req, 3 + nl) != 0 ||
	    smarm__dist_read_full(fd, resp, 2, deadline) != 0 ||
	    resp[0] != EPMD_PORT2_RESP) {
		close(fd);
		return SMARM_ENOEPMD;
	}
	if (resp[1] != 0) {
		close(fd);
		return SMARM_ENOCONN; /* epmd knows no such node */
	}
	/* PortNo, then type, protocol, versions, name, extra: only the
	 * port is used (INV-1: the rest is left unread; we close). */
	rc = smarm__dist_read_full(fd, resp + 2, 2, deadline);
	close(fd);
	if (rc != 0)
		return SMARM_ENOEPMD;
	*port = resp[2] << 8 | resp[3];
	return *port > 0 ? 0 : SMARM_ENOCONN;
}

struct resolve_job {
	const char *host;
	uint32_t addr_be;
};

static intptr_t resolve_job(void *arg)
{
	struct resolve_job *j = arg;
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	if (getaddrinfo(j->host, NULL, &hints, &res) != 0 || res == NULL)
		return -1;
	j->addr_be = ((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr;
	freeaddrinfo(res);
	return 0;
}

int smarm__dist_resolve(const char *host, uint32_t *addr_be)
{
	struct in_addr a;
	if (inet_pton(AF_INET, host, &a) == 1) {
		*addr_be = a.s_addr;
		return 0;
	}
	struct resolve_job j = { host, 0 };
	intptr_t r = -1;
	int rc = smarm_io_blocking(resolve_job, &j, &r);
	if (rc != 0)
		return rc == SMARM_ENOMEM ? rc : SMARM_ENOCONN;
	if (r != 0)
		return SMARM_ENOCONN;
	*addr_be = j.addr_be;
	return 0;
}

int smarm__dist_tcp_connect(uint32_t addr_be, int port, int *out)
{
	return tcp_connect(addr_be, port, out);
}
