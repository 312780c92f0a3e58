/* SPDX-License-Identifier: MIT */
/*
 * io.c - lifecycle of a node's io state: created on the first io call of
 * a run, its threads started lazily (the epoll thread on the first fd
 * wait that has to park, the pool on the first blocking job), all of it
 * stopped, joined and freed when the run ends.
 *
 * Why lazily: most runs do no io, and two thread creations per run would
 * cost them ~100 us. Why per run: between runs no actor exists, so no
 * waiter can be woken, and a node that is never run again holds no
 * threads.
 *
 * Ownership: the node owns its io state through the io subsystem
 * (io_open .. io_close: configuration and counters); the per-run part is
 * published once per run by compare-and-swap (a losing racer frees its
 * copy) and freed by the run-end hook, which the node calls after
 * joining every worker: no actor can be inside an io call then.
 * Locking: start_mu serialises the lazy starts; ep_ready and pool_ready
 * are read lock-free on the fast path (acquire pairs with the release
 * store made once the component is fully started).
 * Invariants: INV-1 a run's io threads are joined before smarm__run
 * returns, so no io thread ever touches a node whose run ended (with
 * core.h INV-5 for the wakes themselves). INV-2 at run end no fd waiter
 * and no pool job is left (every waiter is an actor, and the run ends
 * only when none is live; the pool is drained before it is joined).
 * See: docs/architecture/io.md.
 */
#include "io.h"

#include <stdlib.h>

struct smarm__io *smarm__io_get(struct smarm_node *n)
{
	struct smarm__io_node *ion = smarm__io_node(n);
	struct smarm__io *io =
		atomic_load_explicit(&ion->run, memory_order_acquire);
	struct smarm__io *none = NULL;
	if (io != NULL)
		return io;
	io = calloc(1, sizeof *io);
	if (io == NULL)
		return NULL;
	io->node = n;
	io->ion = ion;
	io->epfd = -1;
	io->stopfd = -1;
	io->brkfd = -1;
	io->qtail = &io->qhead;
	pthread_mutex_init(&io->start_mu, NULL);
	pthread_mutex_init(&io->pmu, NULL);
	pthread_cond_init(&io->pcv, NULL);
	if (!atomic_compare_exchange_strong_explicit(&ion->run, &none, io,
						     memory_order_acq_rel,
						     memory_order_acquire)) {
		/* Another worker published first: use theirs. */
		pthread_cond_destroy(&io->pcv);
		pthread_mutex_destroy(&io->pmu);
		pthread_mutex_destroy(&io->start_mu);
		free(io);
		return none;
	}
	return io;
}

struct smarm__io *smarm__io_peek(struct smarm_node *n)
{
	return atomic_load_explicit(&smarm__io_node(n)->run,
				    memory_order_acquire);
}

/* ------------------------------------------------------- subsystem */

static int io_open(struct smarm_node *n, const struct smarm_config *cfg,
		   void **state)
{
	struct smarm__io_node *ion = calloc(1, sizeof *ion);
	(void)n;
	if (ion == NULL)
		return SMARM_ENOMEM;
	ion->pool_threads =
		(int)smarm__config_int(cfg, SMARM_OPT_IO_POOL_THREADS);
	*state = ion;
	return 0;
}

static void io_close(struct smarm_node *n, void *state)
{
	(void)n;
	free(state);
}

/* INV-1, INV-2: after the workers are joined, nothing can touch io. */
static void io_run_end(struct smarm_node *n, void *state)
{
	struct smarm__io_node *ion = state;
	struct smarm__io *io =
		atomic_load_explicit(&ion->run, memory_order_acquire);
	(void)n;
	if (io == NULL)
		return;
	if (atomic_load(&io->pool_ready))
		smarm__pool_stop(io); /* waits for queued jobs (INV-2) */
	if (atomic_load(&io->ep_ready))
		smarm__epoll_stop(io);
	SMARM_ASSERT(atomic_load(&ion->fd_waiters) == 0);
	SMARM_ASSERT(atomic_load(&ion->blocking) == 0);
	SMARM_ASSERT(atomic_load(&ion->threads) == 0);
	pthread_cond_destroy(&io->pcv);
	pthread_mutex_destroy(&io->pmu);
	pthread_mutex_destroy(&io->start_mu);
	free(io);
	atomic_store(&ion->run, NULL);
}

static int io_get_stat(const struct smarm_node *n, const void *state, int stat,
		       int64_t *out)
{
	struct smarm__io_node *ion = (struct smarm__io_node *)state;
	(void)n;
	switch (stat) {
	case SMARM_STAT_IO_FD_WAITERS:
		*out = atomic_load(&ion->fd_waiters);
		return 0;
	case SMARM_STAT_IO_BLOCKING:
		*out = atomic_load(&ion->blocking);
		return 0;
	case SMARM_STAT_IO_THREADS:
		*out = atomic_load(&ion->threads);
		return 0;
	default:
		return SMARM_EINVAL;
	}
}

const struct smarm__subsys smarm__io_subsys = {
	.ss_name = "io",
	.ss_open = io_open,
	.ss_close = io_close,
	.ss_run_end = io_run_end,
	.ss_get_stat = io_get_stat,
};
