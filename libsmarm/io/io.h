/* SPDX-License-Identifier: MIT */
/*
 * io.h - internal interface of the io layer: the per-node io state (epoll
 * thread, fd-waiter table, blocking-work pool), created on first use in
 * a run and torn down when that run ends, select over channel and fd
 * arms, and accept/connect on top of the fd wait.
 *
 * Layering: io sits beside msg above core. It uses core.h for parking and
 * waking, and msg.h only for the channel arms of the select engine; core
 * reaches io only through its subsystem table (smarm__io_subsys).
 *
 * Ownership: struct smarm__io_node is io's per-node state (subsystem
 * open to close): configuration and counters. struct smarm__io is the
 * per-run part; io_get creates it (any worker, first io call of a run),
 * the subsystem's run-end hook frees it after the run's workers are
 * joined, so a later run starts afresh.
 * Locking: wlock (CHANNEL rank; never nested with a channel lock) guards
 * the fd-waiter table and every epoll_ctl; jlock (CHANNEL rank) guards
 * the completion fields of pool jobs; start_mu (pthread) serialises the
 * lazy starts; pmu/pcv (pthread) guard the pool's job queue.
 * Invariants: stated in epoll.c, pool.c and sock.c.
 * See: docs/architecture/io.md.
 */
#ifndef SMARM_IO_H
#define SMARM_IO_H

#include "../core/core.h"
#include "../msg/msg.h"

#include <pthread.h>
#include <sys/socket.h>

/* One fd's registration with the epoll thread (wlock). */
struct smarm__fdw {
	uint64_t pid;	/* waiting actor; 0: no waiter */
	uint32_t epoch; /* its wait */
	uint32_t seq;	/* registration number, echoed in the epoll event */
	bool in_set;	/* the fd is in the epoll set, disarmed (its
			   one-shot fired) unless pid != 0: the next wait
			   re-arms it with MOD (epoll.c INV-1) */
};

struct smarm__io_job;

/* io's per-node state (its subsystem state). */
struct smarm__io_node {
	int pool_threads;	       /* SMARM_OPT_IO_POOL_THREADS */
	_Atomic int64_t fd_waiters;    /* fd registrations now */
	_Atomic int64_t blocking;      /* pool jobs not finished */
	_Atomic int64_t threads;       /* io threads running now */
	struct smarm__io *_Atomic run; /* this run's io state, or NULL */
};

struct smarm__io {
	struct smarm_node *node;    /* constant */
	struct smarm__io_node *ion; /* constant: the node's io state */
	pthread_mutex_t start_mu;
	_Atomic bool ep_ready;	 /* epoll thread running (set under start_mu) */
	_Atomic bool pool_ready; /* pool threads running (set under start_mu) */

	/* epoll (epoll.c) */
	int epfd;		/* constant once ep_ready */
	int stopfd;		/* eventfd: tells the epoll thread to exit */
	int brkfd;		/* eventfd (edge-triggered): breaks the poll
				   of an idle worker (smarm__netpoll) */
	pthread_t ep_thread;	/* constant once ep_ready */
	smarm__lock_t wlock;	/* guards fdw, fdw_cap, fdw_seq */
	struct smarm__fdw *fdw; /* indexed by fd */
	uint32_t fdw_cap;	/* entries in fdw */
	uint32_t fdw_seq;	/* last registration number */

	/* blocking-work pool (pool.c) */
	pthread_mutex_t pmu;	      /* guards the queue and pstop */
	pthread_cond_t pcv;	      /* signalled on submit and stop */
	struct smarm__io_job *qhead;  /* FIFO of jobs not yet taken */
	struct smarm__io_job **qtail; /* &last->next, or &qhead */
	bool pstop;		      /* run end: exit once drained */
	int npool;		      /* threads started */
	pthread_t *pool_threads;      /* npool of them */
	smarm__lock_t jlock;	      /* guards jobs' completion fields */
};

/* io.c: the subsystem, and this run's io state, created if needed
 * (NULL: ENOMEM). */
extern const struct smarm__subsys smarm__io_subsys;
struct smarm__io *smarm__io_get(struct smarm_node *n);
/* This run's io state if some io call created it, else NULL. */
struct smarm__io *smarm__io_peek(struct smarm_node *n);

static inline struct smarm__io_node *smarm__io_node(struct smarm_node *n)
{
	return smarm__node_sub(n, SMARM__SUB_IO);
}

/* epoll.c */
int smarm__epoll_start(struct smarm__io *io);
void smarm__epoll_stop(struct smarm__io *io);
int smarm__fd_register(struct smarm__io *io, int fd, uint32_t events,
		       uint64_t pid, uint32_t epoch);
bool smarm__fd_cancel(struct smarm__io *io, int fd, uint64_t pid,
		      uint32_t epoch);
bool smarm__fd_has_waiter(struct smarm__io *io, int fd);

/* pool.c */
int smarm__pool_start(struct smarm__io *io);
void smarm__pool_stop(struct smarm__io *io);
int smarm__pool_run(struct smarm_node *n, struct smarm__slot *me,
		    smarm_io_blocking_cb fn, void *arg, intptr_t *result);

/* select.c: deadline 0 means none. */
/* One arm of the select engine (select.c). */
enum { SMARM__ARM_CHAN = 1, SMARM__ARM_FD = 2 };
/* An fd arm's internal event bit: its owner just read the fd dry, so
 * the first round registers it without polling it (select.c INV-2). */
#define SMARM__IO_DRAINED (UINT32_C(1) << 31)
struct smarm__arm {
	int kind;
	int fd;			    /* fd arms */
	uint32_t events;	    /* fd arms: SMARM_IO_*, SMARM__IO_DRAINED */
	smarm_chan_t *chan;	    /* channel arms: the channel (decoded) */
	const smarm_chan_t *chan_h; /* its handle, checked again under the
				       channel's lock at each arming */
};
#define SMARM__MAX_ARMS 64

/*
 * smarm_selset_wait of h, with its fd arm k (an fd the caller has just
 * read until a read returned less than it asked for) registered at once
 * in the first round, without the poll(2) that would find it not ready
 * (select.c INV-2): data that came meanwhile wakes the wait through the
 * registration. For an actor that reads an fd dry and waits again, one
 * system call less per wait. Its statuses are smarm_selset_wait's.
 */
int smarm__selset_wait_drained(smarm_selset_t *h, size_t k, uint64_t timeout_ns,
			       size_t *ready);

/* A select over channel arms only (the retired smarm_select). */
int smarm__select_chans(smarm_chan_t *const chans[], size_t n,
			uint64_t timeout_ns, size_t *ready);
int smarm__select_ex(struct smarm__slot *me, const struct smarm__arm arms[],
		     size_t n, uint64_t deadline, size_t *ready);

/*
 * sock.c: smarm_io_accept and smarm_io_connect after their argument
 * checks; deadline 0 means none. addrlen NULL: no peer address.
 */
int smarm__sock_accept(struct smarm__slot *me, int fd, struct sockaddr *addr,
		       socklen_t *addrlen, uint64_t deadline, int *out);
int smarm__sock_connect(struct smarm__slot *me, int fd,
			const struct sockaddr *addr, socklen_t addrlen,
			uint64_t deadline);

#endif /* SMARM_IO_H */
