/* SPDX-License-Identifier: MIT */
/*
 * select.c - select over channel and fd arms: the one engine under
 * smarm_selset_wait, smarm_select and every fd wait of the io layer.
 *
 * One round (a round of core/wait.h's protocol): open the wait; one
 * zero-timeout poll(2) over every fd arm (none in a first round whose fd
 * arms were all just read dry by their owner, SMARM__IO_DRAINED: each is
 * registered at once, and data that came meanwhile wakes the wait through
 * its registration at the cost of a park); then, in index order, arm each
 * channel (smarm__chan_arm: ready, or queued with this epoch among the
 * channel's waiting receivers; its disarm passes on a wake it took but
 * did not use, chan.c INV-3) and each fd
 * (ready per the poll, POLLNVAL -> SMARM_EBADF, or registered with the epoll
 * thread with this epoch). The first ready arm ends the round without parking,
 * after the arms before it are disarmed and the wait retired (core.h INV-3).
 * Otherwise the actor parks (with a timer entry when bounded). Whatever
 * wakes it (one arm, the timer, a stop), every arm is disarmed, fd arms
 * by smarm__fd_cancel, whose answer says whether the poller took the
 * registration on the fd's event (INV-3): the usual wake of an fd wait
 * is decided without another poll(2). Only when an fd arm comes before
 * the first arm found ready that way (or none is) does one more poll
 * over the fd arms decide. The lowest index with an event wins; if that
 * event is an fd closed meanwhile (POLLNVAL) the wait ends with
 * SMARM_EBADF: the kernel drops a closed fd from epoll without an
 * event, so only the timer, a stop or another arm can have woken us, and
 * a closed fd must not read as ready. Nothing ready means a new round.
 * An fd whose event came may have been drained by someone else since:
 * reported ready, its read finds EAGAIN (spurious readiness, which
 * smarm_io_read and the dist reader retry).
 *
 * Ownership: the arm array and the per-call bookkeeping live on the
 * actor's stack for the duration of the call.
 * Locking: a channel's lock and the io wlock are taken one at a time,
 * never nested (both have CHANNEL rank).
 * Invariants: INV-1 when the call returns, or the actor is stopped inside
 * it (the wait's undo hook), none of its registrations is left (core.h INV-5).
 * INV-2 fd arms are registered only after their own poll found them not
 * ready, or, in a first round with every fd arm SMARM__IO_DRAINED and a
 * deadline not passed, with no poll: the owner read each dry just before,
 * and an fd ready by now reports through its registration (epoll is
 * level-triggered), so nothing is missed; a closed fd fails its
 * registration (SMARM_EBADF) instead of reading POLLNVAL. INV-3 after a park
 * every fd arm was registered, so a cancel that finds its registration gone
 * means the poller took it on an event of that fd (epoll.c INV-2). See:
 * docs/architecture/select.md, docs/architecture/io.md.
 */
#include "io.h"

#include <errno.h>
#include <poll.h>

#define MAX_ARMS 64

struct selx {
	const struct smarm__arm *arms;
	size_t n;
	uint64_t pid;
	uint32_t epoch;		     /* the round's wait */
	size_t armed;		     /* arms [0, armed) may be registered */
	struct smarm__io *io;	     /* set before the first fd registration */
	bool drained;		     /* the first round polls no fd (INV-2) */
	struct pollfd pfd[MAX_ARMS]; /* fd arms, in arm order */
	struct smarm__chan_rx rec[MAX_ARMS]; /* channel arms' waiter records:
						queued on their channels */
	size_t npfd;
};

static short poll_events(uint32_t ev)
{
	short e = 0;
	if (ev & SMARM_IO_READABLE)
		e |= POLLIN;
	if (ev & SMARM_IO_WRITABLE)
		e |= POLLOUT;
	return e;
}

/* poll(2) every fd arm once, without waiting. */
static int poll_now(struct selx *x)
{
	int r;
	if (x->npfd == 0)
		return 0;
	do
		r = poll(x->pfd, x->npfd, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == ENOMEM ? SMARM_ENOMEM : SMARM_ESYSTEM;
	return 0;
}

static bool pfd_ready(const struct pollfd *p)
{
	return (p->revents & (p->events | POLLERR | POLLHUP | POLLNVAL)) != 0;
}

/* Drop every registration of arms [0, x->armed); fd k is pfd[k]. */
static void selx_disarm(struct selx *x)
{
	for (size_t i = 0; i < x->armed; i++) {
		const struct smarm__arm *a = &x->arms[i];
		if (a->kind == SMARM__ARM_CHAN)
			smarm__chan_disarm(a->chan, &x->rec[i]);
		else if (x->io != NULL)
			smarm__fd_cancel(x->io, a->fd, x->pid, x->epoch);
	}
	x->armed = 0;
}

/* Undo hook (wait.h): a stop ends the actor inside the select. */
static void selx_undo(struct smarm__wait *w)
{
	selx_disarm(w->wt_arg);
}

/* Does an arm before arm i wait on fd too? */
static bool fd_armed_before(const struct selx *x, size_t i, int fd)
{
	for (size_t j = 0; j < i; j++)
		if (x->arms[j].kind == SMARM__ARM_FD && x->arms[j].fd == fd)
			return true;
	return false;
}

/*
 * Arm every arm in index order. Returns 0 with *ready = n when all are
 * registered, *ready = i when arm i is ready now, or an error; on a
 * ready arm or an error the arms before it are still registered. A
 * poll_only round (the deadline has passed: a zero timeout) leaves fd
 * arms unregistered: it could not park anyway.
 */
static int selx_arm(struct selx *x, struct smarm_node *node, bool poll_only,
		    size_t *ready)
{
	size_t k = 0;
	int rc = 0;
	if (x->drained && !poll_only) { /* INV-2: no poll, all registered */
		for (size_t j = 0; j < x->npfd; j++)
			x->pfd[j].revents = 0;
	} else {
		rc = poll_now(x);
	}
	x->drained = false; /* a later round polls */
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < x->n; i++) {
		const struct smarm__arm *a = &x->arms[i];
		bool is_ready = false;
		if (a->kind == SMARM__ARM_CHAN) {
			x->rec[i].wt = (struct smarm__waiter){ node, x->pid,
							       x->epoch };
			rc = smarm__chan_arm(a->chan, a->chan_h, &x->rec[i],
					     &is_ready);
		} else {
			const struct pollfd *p = &x->pfd[k++];
			if (p->revents & POLLNVAL) {
				rc = SMARM_EBADF;
			} else if (pfd_ready(p)) {
				is_ready = true;
			} else if (poll_only) {
				/*
				 * Left unregistered (its cancel is a no-op):
				 * it could not park anyway. A wait that the
				 * registration would refuse is refused here
				 * too, not timed out (one waiter per fd).
				 */
				if (fd_armed_before(x, i, a->fd) ||
				    smarm__fd_has_waiter(smarm__io_peek(node),
							 a->fd))
					rc = SMARM_EEXIST;
			} else {
				if (x->io == NULL)
					x->io = smarm__io_get(node);
				if (x->io == NULL)
					rc = SMARM_ENOMEM;
				else
					rc = smarm__epoll_start(x->io);
				if (rc == 0)
					rc = smarm__fd_register(
						x->io, a->fd,
						a->events & ~SMARM__IO_DRAINED,
						x->pid, x->epoch);
				if (rc == 1) { /* never pollable: ready */
					rc = 0;
					is_ready = true;
				}
			}
		}
		if (rc != 0 || is_ready) {
			*ready = i;
			return rc;
		}
		x->armed = i + 1;
	}
	*ready = x->n;
	return 0;
}

/*
 * After a wake: disarm all, then the lowest index with an event, or n.
 * *dead says that event is a closed fd (POLLNVAL): the kernel drops a
 * closed fd from epoll without an event, so the timer or another arm
 * woke us, and the wait reports SMARM_EBADF rather than a ready arm.
 */
static size_t selx_collect(struct selx *x, bool *dead)
{
	size_t first = x->n;
	*dead = false;
	for (size_t i = 0; i < x->n; i++) {
		const struct smarm__arm *a = &x->arms[i];
		if (a->kind == SMARM__ARM_CHAN) {
			if (smarm__chan_disarm_ready(a->chan, &x->rec[i]) &&
			    first == x->n)
				first = i;
		} else if (x->io != NULL &&
			   !smarm__fd_cancel(x->io, a->fd, x->pid, x->epoch) &&
			   first == x->n) {
			/* Its registration was there (every arm was, to
			 * park): the poller took it on its event (INV-3). */
			first = i;
		}
	}
	x->armed = 0;
	/* An fd arm before the first ready one may be ready without its
	 * event yet, or closed (no event comes then): the poll decides. */
	size_t k = 0, before = 0;
	for (size_t i = 0; i < x->n && i < first; i++)
		before += x->arms[i].kind == SMARM__ARM_FD;
	if (before == 0)
		return first; /* the common wake: the fd's own event */
	/* A failed poll reports nothing ready: the next round retries. */
	if (poll_now(x) != 0)
		return first;
	for (size_t i = 0; i < x->n && i < first; i++) {
		if (x->arms[i].kind != SMARM__ARM_FD)
			continue;
		if (pfd_ready(&x->pfd[k])) {
			first = i;
			*dead = (x->pfd[k].revents & POLLNVAL) != 0;
		}
		k++;
	}
	return first;
}

int smarm__select_ex(struct smarm__slot *me, const struct smarm__arm arms[],
		     size_t n, uint64_t deadline, size_t *ready)
{
	struct smarm__wait w;
	struct selx x;

	x.arms = arms;
	x.n = n;
	x.armed = 0;
	x.io = NULL;
	x.npfd = 0;
	x.drained = true;
	for (size_t i = 0; i < n; i++) {
		if (arms[i].kind != SMARM__ARM_FD)
			continue;
		x.drained &= (arms[i].events & SMARM__IO_DRAINED) != 0;
		x.pfd[x.npfd].fd = arms[i].fd;
		x.pfd[x.npfd].events = poll_events(arms[i].events);
		x.npfd++;
	}
	smarm__wait_init(&w, me, deadline, selx_undo, &x);
	x.pid = w.wt_pid;

	for (;;) {
		size_t i;
		int rc;
		x.epoch = smarm__wait_open(&w).epoch;
		rc = selx_arm(&x, w.wt_node, smarm__wait_expired(&w), &i);
		if (rc == 0 && i == n) {
			/* Every arm is registered: block. */
			rc = smarm__wait_expired(&w) ? SMARM_ETIMEDOUT
						     : smarm__wait_park(&w);
			if (rc == 0) {
				bool dead;
				i = selx_collect(&x, &dead);
				if (i < n && dead)
					return SMARM_EBADF; /* closed under us
							     */
				if (i < n) {
					*ready = i;
					return 0;
				}
				if (smarm__wait_expired(&w))
					return SMARM_ETIMEDOUT;
				continue;
			}
		}
		/* Arm i was ready without parking, or an error (WAIT-6). */
		selx_disarm(&x);
		smarm__wait_retire(&w);
		if (rc == 0)
			*ready = i;
		return rc;
	}
}
