/* SPDX-License-Identifier: MIT */
/*
 * epoll.c - the node's epoll set, its poller and its fd-waiter table:
 * one actor at a time may wait on an fd; the poller wakes it when the fd
 * is ready.
 *
 * Design ("the poller enqueues": whoever polls makes the woken actor
 * runnable). The poller is an idle worker when one is free (core's
 * smarm__netpoll, sched.c netpoll_park: Go's netpoller), so the thread
 * that sees the fd ready runs the actor it woke, with no futex wake of
 * another thread and no switch in between; while every worker runs
 * actors the monitor hands the poll to the epoll thread (a foreign
 * thread, which then wakes as before and gives the poll back after each
 * batch). One poller at a time: it is the set's only waiter, so the
 * break of a polling worker (brkfd, edge-triggered, drained by whoever
 * sees it) reaches that worker. Without a monitor, or without
 * epoll_pwait2 (a poll with a ns deadline, for the timekeeper), the
 * thread polls alone, always. Level-triggered with
 * EPOLLONESHOT, the registration kept: an fd's first wait ADDs it, a
 * later wait re-arms it with one MOD, the event disarms it (the poller
 * takes the entry and leaves the fd in the set: no DEL), and a waiter
 * that leaves the wait another way (a timeout, another arm, a stop)
 * DELs it, so nothing armed is left without a waiter. A reader's frame
 * costs one epoll_ctl, not an ADD and a DEL (BEAM re-arms its one-shot
 * the same way). Each arming carries a new registration number, so a
 * woken actor re-arming the same fd cannot race a stale event. An fd
 * closed while disarmed leaves the set with its file (the kernel's
 * rule); the next wait on its number finds ENOENT at the MOD and ADDs
 * the new file. The
 * poller takes the registration and wakes it under wlock (core.h
 * smarm__wake_and_unlock; a worker unlocks first), so the waiter cannot
 * leave the wait, and the run cannot end, in between (core.h INV-5).
 * Rejected: edge-triggered registrations kept across waits (a missed
 * edge hangs a waiter, and a kept armed registration outlives a stopped
 * waiter and poisons the fd: a kept one is disarmed here); one epoll fd per
 * worker (a parked actor may resume on any worker); the thread waiting in the
 * set beside a polling worker (the kernel wakes the newest waiter first, but a
 * break written before the worker's wait began went to the thread: a lost
 * wake).
 *
 * Protocol, waiter side (select.c, wait.h): open -> smarm__fd_register
 * (pid, epoch: ADD, or MOD of a kept one) -> park ->
 * smarm__fd_cancel(pid, epoch) whatever woke it (a no-op returning
 * false when the poller took the entry: the fd had its event; else a
 * DEL); a stop runs the same cancel from the wait's undo hook. Poller
 * side (ep_dispatch): epoll_wait -> under wlock, if the entry's
 * registration number matches the event, take the entry (the one-shot
 * disarmed the fd), wake (pid, epoch) -> unlock.
 *
 * Ownership: the table and the epoll fds belong to the node's io state;
 * the thread exists from smarm__epoll_start to smarm__epoll_stop (run
 * end).
 * Locking: wlock guards the table and serialises every epoll_ctl.
 * Invariants: INV-1 an fd is armed in the epoll set iff its table entry
 * has a waiter (pid != 0); one in the set without a waiter is disarmed
 * (its one-shot fired) and noted in_set. INV-2 an entry is removed only by the
 * poller on its event or by a cancel naming exactly its (pid, epoch), so a
 * stopped or timed-out waiter never removes a later waiter's entry and a
 * leftover entry never poisons the fd. INV-3 io_fd_waiters counts the
 * entries with a waiter. INV-4 at most one thread waits in the set (the
 * holder of core's poll, n->np_owner).
 * See: docs/architecture/io.md.
 */
#include "io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define EP_BATCH 64
#define STOP_TOKEN UINT64_MAX
#define BREAK_TOKEN (UINT64_MAX - 1)

/*
 * Take and wake the waiters of got events (INV-2), from the epoll thread
 * or an idle worker's poll. Returns how many actors it woke; *stop says
 * the stop token came.
 */
static int ep_dispatch(struct smarm__io *io, const struct epoll_event *ev,
		       int got, bool *stop)
{
	struct smarm_node *n = io->node;
	int woke = 0;
	for (int i = 0; i < got; i++) {
		uint64_t tok = ev[i].data.u64;
		uint32_t fd = (uint32_t)tok;
		struct smarm__waiter wt = { NULL, 0, 0 };
		if (tok == STOP_TOKEN) {
			*stop = true;
			continue;
		}
		if (tok == BREAK_TOKEN) {
			uint64_t v;
			/* Edge-triggered: drained by whoever sees it. */
			while (read(io->brkfd, &v, sizeof v) < 0 &&
			       errno == EINTR)
				;
			continue;
		}
		smarm__lock(&io->wlock, SMARM__RANK_CHANNEL);
		if (fd < io->fdw_cap && io->fdw[fd].pid != 0 &&
		    io->fdw[fd].seq == (uint32_t)(tok >> 32)) {
			/* Ours and still current (INV-2): take it. */
			wt.node = n;
			wt.pid = io->fdw[fd].pid;
			wt.epoch = io->fdw[fd].epoch;
			io->fdw[fd].pid = 0;
			/* Its one-shot fired: it stays in the set, disarmed,
			 * for the next wait's MOD (INV-1). */
			atomic_fetch_sub(&io->ion->fd_waiters, 1);
			woke++;
		}
		/* A stale event (the waiter left first) wakes nobody. */
		smarm__wake_and_unlock(wt, &io->wlock, SMARM__RANK_CHANNEL);
	}
	return woke;
}

static void *epoll_thread(void *arg)
{
	struct smarm__io *io = arg;
	struct epoll_event ev[EP_BATCH];
	bool stop = false;

	smarm__thread_name("epoll", -1);
	while (!stop) {
		int got;
		/* Our turn to poll (always, without an idle workers' poll). */
		smarm__netpoll_thread_wait(io->node);
		got = epoll_wait(io->epfd, ev, EP_BATCH, -1);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			smarm__panic("io: epoll_wait failed");
		}
		(void)ep_dispatch(io, ev, got, &stop);
		smarm__netpoll_thread_done(io->node);
	}
	return NULL;
}

/*
 * The idle worker's poll (core's smarm__netpoll, sched.c netpoll_park):
 * one epoll_pwait2 on the same set until the deadline, wakes done from
 * the worker. The stop token is left to the thread (it comes only after
 * every worker is joined).
 */
static int np_wait(void *arg, uint64_t deadline)
{
	struct smarm__io *io = arg;
	struct epoll_event ev[EP_BATCH];
	struct timespec ts, *tsp = NULL;
	bool stop = false;
	int got;
	if (deadline != 0) {
		uint64_t now = smarm__clock_ns();
		uint64_t rel = deadline > now ? deadline - now : 0;
		ts.tv_sec = (time_t)(rel / 1000000000u);
		ts.tv_nsec = (long)(rel % 1000000000u);
		tsp = &ts;
	}
	got = epoll_pwait2(io->epfd, ev, EP_BATCH, tsp, NULL);
	if (got <= 0)
		return 0; /* timeout, EINTR: the parker looks again */
	return ep_dispatch(io, ev, got, &stop);
}

static void np_break(void *arg)
{
	struct smarm__io *io = arg;
	uint64_t one = 1;
	while (write(io->brkfd, &one, sizeof one) < 0 && errno == EINTR)
		;
}

static const struct smarm__netpoll np_ops = { np_wait, np_break };

int smarm__epoll_start(struct smarm__io *io)
{
	struct epoll_event ev;
	struct epoll_event none;
	struct timespec zero = { 0, 0 };
	int rc = 0;

	if (atomic_load_explicit(&io->ep_ready, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&io->start_mu);
	if (atomic_load_explicit(&io->ep_ready, memory_order_relaxed))
		goto out_unlock;
	io->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (io->epfd < 0) {
		rc = errno == ENOMEM ? SMARM_ENOMEM : SMARM_ESYSTEM;
		goto out_unlock;
	}
	io->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (io->stopfd < 0) {
		rc = SMARM_ESYSTEM;
		goto err_close_ep;
	}
	io->brkfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (io->brkfd < 0) {
		rc = SMARM_ESYSTEM;
		goto err_close_stop;
	}
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | EPOLLET;
	ev.data.u64 = BREAK_TOKEN;
	if (epoll_ctl(io->epfd, EPOLL_CTL_ADD, io->brkfd, &ev) != 0) {
		rc = SMARM_ESYSTEM;
		goto err_close_stop;
	}
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.u64 = STOP_TOKEN;
	if (epoll_ctl(io->epfd, EPOLL_CTL_ADD, io->stopfd, &ev) != 0) {
		rc = SMARM_ESYSTEM;
		goto err_close_stop;
	}
	/* Idle workers poll, where the kernel has a timed wait in ns
	 * (epoll_pwait2, Linux 5.11: timers are kept to the ns); installed
	 * before the thread exists, which then polls only when handed the
	 * poll. */
	if (epoll_pwait2(io->epfd, &none, 1, &zero, NULL) >= 0)
		(void)smarm__netpoll_install(io->node, &np_ops, io);
	if (pthread_create(&io->ep_thread, NULL, epoll_thread, io) != 0) {
		smarm__netpoll_install(io->node, NULL, NULL);
		rc = SMARM_ESYSTEM;
		goto err_close_stop;
	}
	atomic_fetch_add(&io->ion->threads, 1);
	atomic_store_explicit(&io->ep_ready, true, memory_order_release);
	goto out_unlock;

err_close_stop:
	if (io->brkfd >= 0)
		close(io->brkfd);
	io->brkfd = -1;
	close(io->stopfd);
	io->stopfd = -1;
err_close_ep:
	close(io->epfd);
	io->epfd = -1;
out_unlock:
	pthread_mutex_unlock(&io->start_mu);
	return rc;
}

void smarm__epoll_stop(struct smarm__io *io)
{
	uint64_t one = 1;
	/* After the run's workers are joined: nobody polls now, and the
	 * thread takes the poll, to see the stop. */
	(void)smarm__netpoll_install(io->node, NULL, NULL);
	while (write(io->stopfd, &one, sizeof one) < 0 && errno == EINTR)
		;
	pthread_join(io->ep_thread, NULL);
	atomic_fetch_sub(&io->ion->threads, 1);
	close(io->stopfd);
	close(io->brkfd);
	close(io->epfd);
	io->stopfd = io->epfd = io->brkfd = -1;
	free(io->fdw);
	io->fdw = NULL;
	io->fdw_cap = 0;
	atomic_store(&io->ep_ready, false);
}

/* Under wlock: make fd a valid index of the table. */
static int fdw_reserve(struct smarm__io *io, int fd)
{
	uint32_t cap = io->fdw_cap ? io->fdw_cap : 64;
	struct smarm__fdw *t;
	if ((uint32_t)fd < io->fdw_cap)
		return 0;
	while (cap <= (uint32_t)fd)
		cap *= 2;
	t = realloc(io->fdw, cap * sizeof *t);
	if (t == NULL)
		return SMARM_ENOMEM;
	memset(t + io->fdw_cap, 0, (cap - io->fdw_cap) * sizeof *t);
	io->fdw = t;
	io->fdw_cap = cap;
	return 0;
}

/*
 * Under wlock: arm fd's one-shot registration with ev. One kept from an
 * earlier wait (in_set) is re-armed with MOD; ENOENT there means the fd
 * was closed since and its number reused (the kernel dropped the old
 * registration with the file), so the new file is added. 0, or -1 with
 * errno.
 */
static int fdw_arm(struct smarm__io *io, int fd, struct epoll_event *ev)
{
	if (io->fdw[fd].in_set) {
		if (epoll_ctl(io->epfd, EPOLL_CTL_MOD, fd, ev) == 0)
			return 0;
		if (errno != ENOENT)
			return -1;
		io->fdw[fd].in_set = false;
	}
	if (epoll_ctl(io->epfd, EPOLL_CTL_ADD, fd, ev) == 0)
		return 0;
	/* Registered though not noted (a DEL that failed): re-arm it. */
	if (errno == EEXIST && epoll_ctl(io->epfd, EPOLL_CTL_MOD, fd, ev) == 0)
		return 0;
	return -1;
}

/*
 * Register (pid, epoch) as fd's waiter for `events` (SMARM_IO_* bits).
 * Returns 0, or SMARM_EEXIST (fd has a waiter), SMARM_EBADF, SMARM_ENOMEM,
 * SMARM_ESYSTEM; 1 when the kernel refuses to poll fd (EPERM: a regular
 * file or directory, which poll(2) reports always ready).
 */
int smarm__fd_register(struct smarm__io *io, int fd, uint32_t events,
		       uint64_t pid, uint32_t epoch)
{
	struct epoll_event ev;
	int rc;

	smarm__lock(&io->wlock, SMARM__RANK_CHANNEL);
	rc = fdw_reserve(io, fd);
	if (rc != 0)
		goto out_unlock;
	if (io->fdw[fd].pid != 0) {
		rc = SMARM_EEXIST;
		goto out_unlock;
	}
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLONESHOT;
	if (events & SMARM_IO_READABLE)
		ev.events |= EPOLLIN;
	if (events & SMARM_IO_WRITABLE)
		ev.events |= EPOLLOUT;
	io->fdw_seq++;
	ev.data.u64 = ((uint64_t)io->fdw_seq << 32) | (uint32_t)fd;
	if (fdw_arm(io, fd, &ev) != 0) {
		switch (errno) {
		case EBADF:
			rc = SMARM_EBADF;
			break;
		case EPERM:
			rc = 1;
			break;
		case ENOMEM:
		case ENOSPC:
			rc = SMARM_ENOMEM;
			break;
		default:
			rc = SMARM_ESYSTEM;
		}
		goto out_unlock;
	}
	io->fdw[fd].pid = pid;
	io->fdw[fd].epoch = epoch;
	io->fdw[fd].seq = io->fdw_seq;
	io->fdw[fd].in_set = true;
	atomic_fetch_add(&io->ion->fd_waiters, 1);
out_unlock:
	smarm__unlock(&io->wlock, SMARM__RANK_CHANNEL);
	return rc;
}

/* Is an actor registered as fd's waiter now? (io NULL: none can be.) */
bool smarm__fd_has_waiter(struct smarm__io *io, int fd)
{
	bool busy;
	if (io == NULL || fd < 0)
		return false;
	smarm__lock(&io->wlock, SMARM__RANK_CHANNEL);
	busy = (uint32_t)fd < io->fdw_cap && io->fdw[fd].pid != 0;
	smarm__unlock(&io->wlock, SMARM__RANK_CHANNEL);
	return busy;
}

/*
 * Remove fd's registration if it is still exactly (pid, epoch) (INV-2).
 * Returns whether it was; false means the epoll thread took it (the fd
 * fired) or it never existed.
 */
bool smarm__fd_cancel(struct smarm__io *io, int fd, uint64_t pid,
		      uint32_t epoch)
{
	bool removed = false;
	smarm__lock(&io->wlock, SMARM__RANK_CHANNEL);
	if ((uint32_t)fd < io->fdw_cap && io->fdw[fd].pid == pid &&
	    io->fdw[fd].epoch == epoch) {
		io->fdw[fd].pid = 0;
		io->fdw[fd].in_set = false;
		/* Armed, it must not fire for nobody (a wait that ends
		 * another way is rare: a timeout, another arm, a stop).
		 * ENOENT/EBADF: the fd was closed under the wait; fine. */
		epoll_ctl(io->epfd, EPOLL_CTL_DEL, fd, NULL);
		atomic_fetch_sub(&io->ion->fd_waiters, 1);
		removed = true;
	}
	smarm__unlock(&io->wlock, SMARM__RANK_CHANNEL);
	return removed;
}
