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
 * Ownership: the node owns its io state (node->io). It is published once
 * per run by compare-and-swap (a losing racer frees its copy) and freed
 * by smarm__io_run_end, which smarm__run calls after joining every
 * worker: no actor can be inside an io call then.
 * Locking: start_mu serialises the lazy starts; ep_ready and pool_ready
 * are read lock-free on the fast path (acquire pairs with the release
 * store made once the component is fully started).
 * Invariants: INV-1 a run's io threads are joined before smarm__run
 * returns, so no io thread ever touches a node whose run ended (with
 * core.h INV-5 for the wakes themselves). INV-2 at run end no fd waiter
 * and no pool job is left (every waiter is an actor, and the run ends
 * only when none is live; the pool is drained before it is joined).
 * See: docs/architecture.md (IO and blocking work).
 */
#include "io.h"

#include <stdlib.h>

struct smarm__io *smarm__io_get(struct smarm_node *n)
{
	struct smarm__io *io =
		atomic_load_explicit(&n->io, memory_order_acquire);
	struct smarm__io *none = NULL;
	if (io != NULL)
		return io;
	io = calloc(1, sizeof *io);
	if (io == NULL)
		return NULL;
	io->node = n;
	io->epfd = -1;
	io->stopfd = -1;
	io->qtail = &io->qhead;
	pthread_mutex_init(&io->start_mu, NULL);
	pthread_mutex_init(&io->pmu, NULL);
	pthread_cond_init(&io->pcv, NULL);
	if (!atomic_compare_exchange_strong_explicit(&n->io, &none, io,
						     memory_order_acq_rel,
						     memory_order_acquire)) {
		/* Another worker published first: use theirs. */
		pthread_cond_destroy(&io->pcv);
		pthread_mutex_destroy(&io->pmu);
		pthread_mutex_destroy(&io->start_mu);
		free(io);
		return none;
	}
	n->io_run_end = smarm__io_run_end;
	return io;
}

void smarm__io_run_end(struct smarm_node *n)
{
	struct smarm__io *io =
		atomic_load_explicit(&n->io, memory_order_acquire);
	if (io == NULL)
		return;
	if (atomic_load(&io->pool_ready))
		smarm__pool_stop(io); /* waits for queued jobs (INV-2) */
	if (atomic_load(&io->ep_ready))
		smarm__epoll_stop(io);
	SMARM_ASSERT(atomic_load(&n->io_fd_waiters) == 0);
	SMARM_ASSERT(atomic_load(&n->io_blocking) == 0);
	SMARM_ASSERT(atomic_load(&n->io_threads) == 0);
	pthread_cond_destroy(&io->pcv);
	pthread_mutex_destroy(&io->pmu);
	pthread_mutex_destroy(&io->start_mu);
	free(io);
	atomic_store(&n->io, NULL);
}
