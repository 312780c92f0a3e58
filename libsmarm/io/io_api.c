/* SPDX-License-Identifier: MIT */
/*
 * io_api.c - the public entry points of the io layer: select sets over
 * channel and fd arms (and the retired smarm_select's channel-only form,
 * the same engine), fd waits with and without a timeout, read/write sugar,
 * accept and connect (their loops are in sock.c) and blocking work. Each
 * call validates its arguments and calls smarm__ code; nothing below this
 * file checks caller input again.
 *
 * Ownership: buffers and arm arrays stay the caller's.
 * Locking: none of its own.
 * Invariants: INV-1 a call that returns an argument error
 * (SMARM_EINVAL, SMARM_ENOTACTOR) registered nothing.
 * See: docs/embedding.md (IO and blocking work), abi/smarm/smarm.h.
 */
#include "io.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_ARMS SMARM__MAX_ARMS
#define EVENTS_ALL (SMARM_IO_READABLE | SMARM_IO_WRITABLE)

static bool arm_valid(const struct smarm__arm *a)
{
	switch (a->kind) {
	case SMARM__ARM_CHAN:
		return a->chan != NULL;
	case SMARM__ARM_FD:
		return a->fd >= 0 && a->events != 0 &&
		       (a->events & ~(uint32_t)EVENTS_ALL) == 0;
	default:
		return false;
	}
}

static int select_ex(const struct smarm__arm arms[], size_t n,
		     uint64_t timeout_ns, size_t *ready)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	if (arms == NULL || ready == NULL || n == 0 || n > MAX_ARMS)
		return SMARM_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!arm_valid(&arms[i]))
			return SMARM_EINVAL;
	return smarm__select_ex(me, arms, n,
				smarm__timeout_deadline(timeout_ns), ready);
}

/* ------------------------------------------------------- select sets */

struct smarm_selset {
	size_t n;
	struct smarm__arm arms[MAX_ARMS];
};

int smarm_selset_alloc(smarm_selset_t **out)
{
	if (out == NULL)
		return SMARM_EINVAL;
	*out = calloc(1, sizeof **out);
	return *out == NULL ? SMARM_ENOMEM : 0;
}

void smarm_selset_free(smarm_selset_t *set)
{
	free(set);
}

static int selset_add(smarm_selset_t *set, struct smarm__arm a, size_t *index)
{
	if (set == NULL || !arm_valid(&a) || set->n == MAX_ARMS)
		return SMARM_EINVAL;
	if (index != NULL)
		*index = set->n;
	set->arms[set->n++] = a;
	return 0;
}

int smarm_selset_add_chan(smarm_selset_t *set, smarm_chan_t *ch, size_t *index)
{
	return selset_add(set,
			  (struct smarm__arm){ .kind = SMARM__ARM_CHAN,
					       .fd = -1,
					       .chan = ch },
			  index);
}

int smarm_selset_add_fd(smarm_selset_t *set, int fd, uint32_t events,
			size_t *index)
{
	return selset_add(set,
			  (struct smarm__arm){ .kind = SMARM__ARM_FD,
					       .fd = fd,
					       .events = events },
			  index);
}

int smarm_selset_clear(smarm_selset_t *set)
{
	if (set == NULL)
		return SMARM_EINVAL;
	set->n = 0;
	return 0;
}

int smarm_selset_wait(smarm_selset_t *set, uint64_t timeout_ns, size_t *ready)
{
	if (smarm__current() == NULL)
		return SMARM_ENOTACTOR;
	if (set == NULL)
		return SMARM_EINVAL;
	return select_ex(set->arms, set->n, timeout_ns, ready);
}

/*
 * A select over channel arms only, for the retired smarm_select (compat.c):
 * the same engine as a select set.
 */
int smarm__select_chans(smarm_chan_t *const chans[], size_t n,
			uint64_t timeout_ns, size_t *ready)
{
	struct smarm__arm arms[MAX_ARMS];
	if (smarm__current() == NULL)
		return SMARM_ENOTACTOR;
	if (chans == NULL || ready == NULL || n == 0 || n > MAX_ARMS)
		return SMARM_EINVAL;
	for (size_t i = 0; i < n; i++)
		arms[i] = (struct smarm__arm){ .kind = SMARM__ARM_CHAN,
					       .fd = -1,
					       .chan = chans[i] };
	return select_ex(arms, n, timeout_ns, ready);
}

static int wait_fd(int fd, uint32_t events, uint64_t timeout_ns)
{
	struct smarm__arm arm = { .kind = SMARM__ARM_FD,
				  .fd = fd,
				  .events = events };
	size_t ready;
	if (smarm__current() == NULL)
		return SMARM_ENOTACTOR;
	if (fd < 0)
		return SMARM_EINVAL;
	return select_ex(&arm, 1, timeout_ns, &ready);
}

int smarm_io_wait_readable(int fd)
{
	return wait_fd(fd, SMARM_IO_READABLE, SMARM_NO_TIMEOUT);
}

int smarm_io_wait_writable(int fd)
{
	return wait_fd(fd, SMARM_IO_WRITABLE, SMARM_NO_TIMEOUT);
}

int smarm_io_wait_readable_timeout(int fd, uint64_t timeout_ns)
{
	return wait_fd(fd, SMARM_IO_READABLE, timeout_ns);
}

int smarm_io_wait_writable_timeout(int fd, uint64_t timeout_ns)
{
	return wait_fd(fd, SMARM_IO_WRITABLE, timeout_ns);
}

/* errno of a failed read/write as a status. */
static int io_errno(int e)
{
	switch (e) {
	case EBADF:
		return SMARM_EBADF;
	case EINVAL:
	case EFAULT:
		return SMARM_EINVAL;
	case ENOMEM:
		return SMARM_ENOMEM;
	default:
		return SMARM_ESYSTEM;
	}
}

/* Wait for `events` on fd, then one syscall; EAGAIN/EINTR wait again. */
static int rw_once(int fd, bool wr, void *buf, size_t len, ptrdiff_t *out)
{
	if (smarm__current() == NULL)
		return SMARM_ENOTACTOR;
	if (out == NULL || (buf == NULL && len > 0) || fd < 0)
		return SMARM_EINVAL;
	for (;;) {
		ssize_t r;
		int rc = wait_fd(fd, wr ? SMARM_IO_WRITABLE : SMARM_IO_READABLE,
				 SMARM_NO_TIMEOUT);
		if (rc != 0)
			return rc;
		r = wr ? write(fd, buf, len) : read(fd, buf, len);
		if (r >= 0) {
			*out = r;
			return 0;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return io_errno(errno);
	}
}

int smarm_io_read(int fd, void *buf, size_t len, ptrdiff_t *out)
{
	return rw_once(fd, false, buf, len, out);
}

int smarm_io_write(int fd, const void *buf, size_t len, ptrdiff_t *out)
{
	return rw_once(fd, true, (void *)buf, len, out);
}

int smarm_io_blocking(smarm_io_blocking_cb fn, void *arg, intptr_t *result)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	if (fn == NULL)
		return SMARM_EINVAL;
	return smarm__pool_run(smarm__current_node(), me, fn, arg, result);
}

/* ------------------------------------------------- accept and connect */

int smarm_io_accept(int fd, struct sockaddr *addr, size_t *addrlen,
		    uint64_t timeout_ns, int *out)
{
	struct smarm__slot *me = smarm__current();
	socklen_t len = 0;
	int rc;
	if (me == NULL)
		return SMARM_ENOTACTOR;
	if (fd < 0 || out == NULL || (addr == NULL) != (addrlen == NULL) ||
	    (addrlen != NULL && *addrlen > INT_MAX))
		return SMARM_EINVAL;
	if (addrlen != NULL)
		len = (socklen_t)*addrlen;
	rc = smarm__sock_accept(me, fd, addr, addrlen != NULL ? &len : NULL,
				smarm__timeout_deadline(timeout_ns), out);
	if (rc == 0 && addrlen != NULL)
		*addrlen = len;
	return rc;
}

int smarm_io_connect(int fd, const struct sockaddr *addr, size_t addrlen,
		     uint64_t timeout_ns)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	if (fd < 0 || addr == NULL || addrlen == 0 || addrlen > INT_MAX)
		return SMARM_EINVAL;
	return smarm__sock_connect(me, fd, addr, (socklen_t)addrlen,
				   smarm__timeout_deadline(timeout_ns));
}
