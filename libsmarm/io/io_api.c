/* SPDX-License-Identifier: MIT */
/*
 * io_api.c - the public entry points of the io layer: select sets over
 * channel and fd arms (and the retired smarm_select's channel-only form,
 * the same engine), fd waits with and without a timeout, read/write sugar,
 * accept and connect (their loops are in sock.c) and blocking work. Each
 * call validates its arguments and calls smarm__ code; nothing below this
 * file checks caller input again.
 *
 * Select sets live in cells of a type-stable pool (core/handle.h): the
 * caller holds generation-tagged handles, each call decodes them (no set
 * is SMARM_EINVAL, a freed one SMARM_ESTATE), and so is every channel arm,
 * at each wait: a channel freed after it was added is SMARM_ESTATE.
 *
 * Ownership: buffers and arm arrays stay the caller's; a set is the
 * caller's from alloc to free, then its cell goes back to the pool.
 * Locking: none of its own (a set is used by one thread at a time).
 * Invariants: INV-1 a call that returns an argument error
 * (SMARM_EINVAL, SMARM_ENOTACTOR) registered nothing.
 * See: docs/embedding.md (IO and blocking work), abi/smarm/smarm.h.
 */
#include "io.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_ARMS SMARM__MAX_ARMS
#define EVENTS_ALL (SMARM_IO_READABLE | SMARM_IO_WRITABLE)

/*
 * Check an arm and decode its channel handle in place (the arms are the
 * call's own copy). 0; SMARM_EINVAL a bad arm; SMARM_ESTATE a freed
 * channel.
 */
static int arm_decode(struct smarm__arm *a)
{
	switch (a->kind) {
	case SMARM__ARM_CHAN:
		a->chan_h = a->chan;
		return smarm__chan_decode(a->chan_h, &a->chan);
	case SMARM__ARM_FD:
		return a->fd >= 0 && a->events != 0 &&
				       (a->events & ~(uint32_t)EVENTS_ALL &
					~SMARM__IO_DRAINED) == 0
			       ? 0
			       : SMARM_EINVAL;
	default:
		return SMARM_EINVAL;
	}
}

/* arms: the caller's copy, n in range; channel arms hold handles. */
static int select_ex(struct smarm__arm arms[], size_t n, uint64_t timeout_ns,
		     size_t *ready)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	if (ready == NULL || n == 0 || n > MAX_ARMS)
		return SMARM_EINVAL;
	for (size_t i = 0; i < n; i++) {
		int rc = arm_decode(&arms[i]);
		if (rc != 0)
			return rc;
	}
	return smarm__select_ex(me, arms, n,
				smarm__timeout_deadline(timeout_ns), ready);
}

/* ------------------------------------------------------- select sets */

/*
 * A set's cell (core/handle.h); callers hold handles to it. Channel arms
 * keep the caller's channel handles, decoded again by every wait (the
 * channel may have been freed since it was added).
 */
struct smarm_selset {
	struct smarm__hcell hdr; /* handle header: first (decode reads it) */
	size_t n;
	struct smarm__arm arms[MAX_ARMS];
};

/* 1 GiB of address space, reserved, not committed: 2^19 sets. */
#define SELSET_REGION ((size_t)1 << 30)
static struct smarm__hpool selset_pool =
	SMARM__HPOOL_INIT(sizeof(struct smarm_selset), SELSET_REGION);
_Static_assert(sizeof(struct smarm_selset) <= 4096, "a set fits a cell");
_Static_assert(offsetof(struct smarm_selset, hdr) == 0,
	       "the handle header is the cell's first word");

static int selset_decode(const smarm_selset_t *h, smarm_selset_t **set)
{
	void *c;
	int rc = smarm__handle_decode(&selset_pool, h, &c);
	if (rc == 0)
		*set = c;
	return rc;
}

int smarm_selset_alloc(smarm_selset_t **out)
{
	smarm_selset_t *set;
	uint64_t h;
	void *cell;
	int rc;
	if (out == NULL)
		return SMARM_EINVAL;
	rc = smarm__hpool_alloc(&selset_pool, &cell, &h);
	if (rc != 0)
		return rc;
	set = cell;
	set->n = 0;
	smarm__handle_publish(set, h);
	*out = (smarm_selset_t *)(uintptr_t)h;
	return 0;
}

void smarm_selset_free(smarm_selset_t *h)
{
	smarm_selset_t *set;
	if (selset_decode(h, &set) != 0)
		return; /* NULL, no set, or freed already: nothing to do */
	smarm__handle_retire(set);
	smarm__hpool_free(&selset_pool, set);
}

static int selset_add(smarm_selset_t *h, struct smarm__arm a, size_t *index)
{
	smarm_selset_t *set;
	struct smarm__arm probe = a;
	int rc = selset_decode(h, &set);
	if (rc == 0)
		rc = arm_decode(&probe); /* the arm keeps the handle */
	if (rc == 0 && set->n == MAX_ARMS)
		rc = SMARM_EINVAL;
	if (rc != 0)
		return rc;
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
	/* arm_decode also takes SMARM__IO_DRAINED, the runtime's own. */
	if ((events & ~(uint32_t)EVENTS_ALL) != 0)
		return SMARM_EINVAL;
	return selset_add(set,
			  (struct smarm__arm){ .kind = SMARM__ARM_FD,
					       .fd = fd,
					       .events = events },
			  index);
}

int smarm_selset_clear(smarm_selset_t *h)
{
	smarm_selset_t *set;
	int rc = selset_decode(h, &set);
	if (rc == 0)
		set->n = 0;
	return rc;
}

/* A wait on set h; arm drained (if an fd arm) was just read dry. */
static int selset_wait(smarm_selset_t *h, size_t drained, uint64_t timeout_ns,
		       size_t *ready)
{
	struct smarm__arm arms[MAX_ARMS];
	smarm_selset_t *set;
	int rc;
	if (smarm__current() == NULL)
		return SMARM_ENOTACTOR;
	rc = selset_decode(h, &set);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < set->n; i++)
		arms[i] = set->arms[i];
	if (drained < set->n && arms[drained].kind == SMARM__ARM_FD)
		arms[drained].events |= SMARM__IO_DRAINED;
	return select_ex(arms, set->n, timeout_ns, ready);
}

int smarm_selset_wait(smarm_selset_t *h, uint64_t timeout_ns, size_t *ready)
{
	return selset_wait(h, SIZE_MAX, timeout_ns, ready);
}

int smarm__selset_wait_drained(smarm_selset_t *h, size_t k, uint64_t timeout_ns,
			       size_t *ready)
{
	return selset_wait(h, k, timeout_ns, ready);
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
	int rc;
	if (smarm__current() == NULL)
		return SMARM_ENOTACTOR;
	if (fd < 0)
		return SMARM_EINVAL;
	smarm__wait_note(SMARM__WON_IO, (uint64_t)fd);
	rc = select_ex(&arm, 1, timeout_ns, &ready);
	smarm__wait_note(SMARM__WON_NONE, 0);
	return rc;
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
