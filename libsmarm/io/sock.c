/* SPDX-License-Identifier: MIT */
/*
 * sock.c - accept and connect for actors: smarm_io_accept and
 * smarm_io_connect below their argument checks. Each is a system call
 * on a non-blocking socket plus, when that call would block, the one fd
 * wait of the io layer (smarm__select_ex over one fd arm), so the caller
 * never sees EAGAIN, EINPROGRESS or SO_ERROR.
 *
 * Accept tries accept4(2) first and waits for readability only on
 * EAGAIN (as Go's netFD.accept does): a busy listener costs one system
 * call per connection, not a poll and an accept. Connect issues one
 * connect(2); on EINPROGRESS (or EALREADY: an attempt started earlier
 * on this socket, which the call then waits for) it waits for
 * writability, reads SO_ERROR, and on 0 confirms with a second
 * connect(2), which reports the attempt done (0 or EISCONN) or still
 * in progress (EALREADY: a spurious wake, wait again). The confirming
 * connect also settles the socket's state, so a later connect on it is
 * EISCONN.
 *
 * O_NONBLOCK: both run their system calls on the actor's worker, which
 * must never block, so an fd without O_NONBLOCK gets it set, and keeps
 * it. Before setting it the call checks that fd is the kind of socket
 * it takes (listening for accept, any socket for connect), so a
 * misused fd (a pipe, a terminal) is refused and left as it was.
 *
 * A readiness that the system call then contradicts (accept4 EAGAIN,
 * connect EALREADY after a wake) is retried while the deadline allows,
 * yielding first: some sockets report ready for ever without one (a
 * Unix-domain listener after shutdown(2) polls readable and accepts
 * nothing), and the retry must not starve the worker. Past the deadline
 * it is SMARM_ETIMEDOUT.
 *
 * Ownership: the caller owns fd, addr and the accepted fd (from the
 * moment *out is set). Nothing is allocated here.
 * Locking: none of its own; the wait takes the io wlock (select.c).
 * Invariants: INV-1 a call that ends (return, or a stop inside its
 * wait) leaves no fd registration (select.c INV-1). INV-2 an accepted
 * fd is returned to the caller with no safe point in between, so a stop
 * cannot end the actor while it holds an fd nobody knows of. INV-3 an
 * fd is given O_NONBLOCK only after it was found to be the right kind
 * of socket.
 * See: docs/architecture/io.md.
 */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>

/* Wait for `events` on fd until deadline (0: none); 0 when ready. */
static int wait_fd(struct smarm__slot *me, int fd, uint32_t events,
		   uint64_t deadline)
{
	struct smarm__arm arm = { .kind = SMARM__ARM_FD,
				  .fd = fd,
				  .events = events };
	size_t ready;
	return smarm__select_ex(me, &arm, 1, deadline, &ready);
}

/*
 * The wait said ready and the system call disagreed: SMARM_ETIMEDOUT
 * past the deadline, else yield (a safe point) and 0 to retry.
 */
static int spurious(struct smarm__slot *me, uint64_t deadline)
{
	if (deadline != 0 && smarm__clock_ns() >= deadline)
		return SMARM_ETIMEDOUT;
	smarm__yield(me);
	return 0;
}

/* errno of a failed socket call as a status; errno is left as it is. */
static int sock_errno(int e)
{
	switch (e) {
	case EBADF:
		return SMARM_EBADF;
	case ENOTSOCK:
	case EFAULT:
		return SMARM_EINVAL;
	case ENOMEM:
		return SMARM_ENOMEM;
	default:
		return SMARM_ESYSTEM;
	}
}

/*
 * Give fd O_NONBLOCK if it lacks it (INV-3): `listener` requires a
 * listening socket (else SMARM_ESTATE), otherwise any socket.
 */
static int sock_nonblock(int fd, bool listener)
{
	int v = 0;
	socklen_t vlen = sizeof v;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return sock_errno(errno);
	if (fl & O_NONBLOCK)
		return 0;
	if (getsockopt(fd, SOL_SOCKET, listener ? SO_ACCEPTCONN : SO_TYPE, &v,
		       &vlen) != 0)
		return sock_errno(errno);
	if (listener && v == 0)
		return SMARM_ESTATE;
	if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return sock_errno(errno);
	return 0;
}

int smarm__sock_accept(struct smarm__slot *me, int fd, struct sockaddr *addr,
		       socklen_t *addrlen, uint64_t deadline, int *out)
{
	bool woken = false;
	int rc = sock_nonblock(fd, true);
	if (rc != 0)
		return rc;
	for (;;) {
		socklen_t len = addrlen != NULL ? *addrlen : 0;
		int c = accept4(fd, addr, addrlen != NULL ? &len : NULL,
				SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c >= 0) {
			/* INV-2: no safe point from here to the caller. */
			if (addrlen != NULL)
				*addrlen = len;
			*out = c;
			return 0;
		}
		switch (errno) {
		case EINTR:
		case ECONNABORTED: /* aborted while queued: take the next */
			continue;
		case EAGAIN:
#if EWOULDBLOCK != EAGAIN
		case EWOULDBLOCK:
#endif
			break;
		case EINVAL:	 /* not listening */
		case EOPNOTSUPP: /* not a connection-mode socket */
			return SMARM_ESTATE;
		default:
			return sock_errno(errno);
		}
		if (woken) {
			rc = spurious(me, deadline);
			if (rc != 0)
				return rc;
		}
		rc = wait_fd(me, fd, SMARM_IO_READABLE, deadline);
		if (rc != 0)
			return rc;
		woken = true;
	}
}

/* errno of a failed connect(2) as a status. */
static int connect_errno(int e)
{
	switch (e) {
	case EISCONN:
		return SMARM_ESTATE;
	case EINVAL:
	case EAFNOSUPPORT:
		return SMARM_EINVAL;
	default:
		return sock_errno(e);
	}
}

/* Is e what connect(2) says of an attempt still under way? */
static bool connect_pending(int e)
{
	return e == EINPROGRESS || e == EALREADY || e == EINTR;
}

int smarm__sock_connect(struct smarm__slot *me, int fd,
			const struct sockaddr *addr, socklen_t addrlen,
			uint64_t deadline)
{
	bool woken = false;
	int rc = sock_nonblock(fd, false);
	if (rc != 0)
		return rc;
	/* EINTR: a non-blocking attempt carries on in the kernel. */
	if (connect(fd, addr, addrlen) == 0)
		return 0;
	if (!connect_pending(errno))
		return connect_errno(errno);
	for (;;) {
		int err = 0;
		socklen_t elen = sizeof err;
		if (woken) {
			rc = spurious(me, deadline);
			if (rc != 0)
				return rc;
		}
		rc = wait_fd(me, fd, SMARM_IO_WRITABLE, deadline);
		if (rc != 0)
			return rc;
		woken = true;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
			return sock_errno(errno);
		if (err != 0 && !connect_pending(err)) {
			errno = err; /* the attempt's own error */
			return SMARM_ESYSTEM;
		}
		/* Done, or a spurious wake? connect(2) knows (see above). */
		if (connect(fd, addr, addrlen) == 0 || errno == EISCONN)
			return 0;
		if (!connect_pending(errno))
			return connect_errno(errno); /* failed meanwhile */
	}
}
