/* SPDX-License-Identifier: MIT */
/*
 * pool.c - the blocking-work pool: SMARM_OPT_IO_POOL_THREADS OS threads
 * that run jobs (smarm_io_blocking) which would otherwise block a worker,
 * while the submitting actor parks.
 *
 * Protocol, actor side: allocate a job on the heap (never on the actor's
 * stack: a stopped actor's stack is recycled while its job still runs),
 * open a wait (wait.h), record its registration in the job, count it in
 * io_blocking, queue it, park. On wake, under jlock: done -> take the
 * result and free the job; not done (a wake meant for something else,
 * e.g. a second stop while exiting) -> open a new wait, store the new
 * epoch, park again. A stop ends the actor through the wait's undo hook,
 * which under jlock frees a finished job or marks a running one
 * abandoned; a park refused (wait.c WAIT-9) abandons the job the same
 * way and returns SMARM_EAGAIN. Pool side: take a job, run fn, then
 * under jlock store the result, uncount it, and either free it
 * (abandoned) or wake its waiter under the lock (a foreign-thread wake,
 * core.h INV-5).
 *
 * Run end: smarm__pool_stop sets pstop and joins the threads, which exit
 * only once the queue is empty, so every job submitted in a run runs to
 * completion before the run returns, and no pool thread outlives it.
 * Rejected: detaching abandoned jobs from the node (their completion
 * would need a reference-counted io state that outlives the node, for
 * jobs nobody waits for).
 *
 * Ownership: a job belongs to the submitting actor until queued, then to
 * the queue, then to the pool thread running it; after completion to the
 * actor (not abandoned) or the pool thread (abandoned), which frees it.
 * Locking: pmu guards the queue and pstop; jlock guards every job's
 * waiter, done, abandoned and result. fn runs with no lock held.
 * Invariants: INV-1 exactly one of actor and pool thread frees a job,
 * decided under jlock by `abandoned`. INV-2 io_blocking counts jobs
 * submitted and not finished. INV-3 a job's waiter names a live wait of
 * its actor, or is cleared (node NULL).
 * See: docs/architecture/io.md.
 */
#include "io.h"

#include <stdlib.h>

struct smarm__io_job {
	struct smarm__io_job *next; /* queue link (pmu) */
	smarm_io_blocking_cb fn;    /* constant */
	void *arg;		    /* constant */
	struct smarm__waiter wt;    /* jlock: the parked actor, or node NULL */
	intptr_t result;	    /* jlock: valid once done */
	bool done;		    /* jlock */
	bool abandoned;		    /* jlock: the actor was stopped */
};

static void job_finish(struct smarm__io *io, struct smarm__io_job *job,
		       intptr_t result)
{
	struct smarm__waiter wt;
	smarm__lock(&io->jlock, SMARM__RANK_CHANNEL);
	job->result = result;
	job->done = true;
	atomic_fetch_sub(&io->ion->blocking, 1);
	if (job->abandoned) {
		smarm__unlock(&io->jlock, SMARM__RANK_CHANNEL);
		free(job); /* INV-1: nobody else holds it */
		return;
	}
	wt = job->wt;
	job->wt.node = NULL;
	/* The actor frees job once woken: not touched after this. */
	smarm__wake_and_unlock(wt, &io->jlock, SMARM__RANK_CHANNEL);
}

static void *pool_thread(void *arg)
{
	struct smarm__io *io = arg;
	smarm__thread_name("pool", -1);
	for (;;) {
		struct smarm__io_job *job;
		pthread_mutex_lock(&io->pmu);
		while (io->qhead == NULL && !io->pstop)
			pthread_cond_wait(&io->pcv, &io->pmu);
		job = io->qhead;
		if (job == NULL) { /* stopping and drained */
			pthread_mutex_unlock(&io->pmu);
			return NULL;
		}
		io->qhead = job->next;
		if (io->qhead == NULL)
			io->qtail = &io->qhead;
		pthread_mutex_unlock(&io->pmu);
		job_finish(io, job, job->fn(job->arg));
	}
}

int smarm__pool_start(struct smarm__io *io)
{
	int rc = 0;
	if (atomic_load_explicit(&io->pool_ready, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&io->start_mu);
	if (atomic_load_explicit(&io->pool_ready, memory_order_relaxed))
		goto out_unlock;
	io->pool_threads =
		calloc((size_t)io->ion->pool_threads, sizeof *io->pool_threads);
	if (io->pool_threads == NULL) {
		rc = SMARM_ENOMEM;
		goto out_unlock;
	}
	io->pstop = false;
	for (io->npool = 0; io->npool < io->ion->pool_threads; io->npool++) {
		if (pthread_create(&io->pool_threads[io->npool], NULL,
				   pool_thread, io) != 0)
			break;
		atomic_fetch_add(&io->ion->threads, 1);
	}
	if (io->npool == 0) {
		free(io->pool_threads);
		io->pool_threads = NULL;
		rc = SMARM_ESYSTEM;
		goto out_unlock;
	}
	/* Fewer threads than configured still make a working pool. */
	atomic_store_explicit(&io->pool_ready, true, memory_order_release);
out_unlock:
	pthread_mutex_unlock(&io->start_mu);
	return rc;
}

void smarm__pool_stop(struct smarm__io *io)
{
	pthread_mutex_lock(&io->pmu);
	io->pstop = true;
	pthread_cond_broadcast(&io->pcv);
	pthread_mutex_unlock(&io->pmu);
	for (int i = 0; i < io->npool; i++) {
		pthread_join(io->pool_threads[i], NULL);
		atomic_fetch_sub(&io->ion->threads, 1);
	}
	free(io->pool_threads);
	io->pool_threads = NULL;
	io->npool = 0;
	atomic_store(&io->pool_ready, false);
}

/* Undo hook (wait.h): the actor is stopped while its job is out (INV-1). */
static void job_undo(struct smarm__wait *w)
{
	struct smarm__io_job *job = w->wt_arg;
	struct smarm__io *io = atomic_load(&smarm__io_node(w->wt_node)->run);
	bool done;
	smarm__lock(&io->jlock, SMARM__RANK_CHANNEL);
	done = job->done;
	job->abandoned = true;
	job->wt.node = NULL;
	smarm__unlock(&io->jlock, SMARM__RANK_CHANNEL);
	if (done)
		free(job); /* finished, result discarded */
}

int smarm__pool_run(struct smarm_node *n, struct smarm__slot *me,
		    smarm_io_blocking_cb fn, void *arg, intptr_t *result)
{
	struct smarm__io *io;
	struct smarm__io_job *job;
	struct smarm__wait w;
	int rc;

	smarm__wait_init(&w, me, 0, job_undo, NULL); /* a safe point */
	io = smarm__io_get(n);
	if (io == NULL)
		return SMARM_ENOMEM;
	rc = smarm__pool_start(io);
	if (rc != 0)
		return rc;
	job = calloc(1, sizeof *job);
	if (job == NULL)
		return SMARM_ENOMEM;
	job->fn = fn;
	job->arg = arg;
	w.wt_arg = job;
	job->wt = smarm__wait_open(&w);
	atomic_fetch_add(&io->ion->blocking, 1); /* before the queue (INV-2) */
	pthread_mutex_lock(&io->pmu);
	*io->qtail = job;
	io->qtail = &job->next;
	pthread_cond_signal(&io->pcv);
	pthread_mutex_unlock(&io->pmu);

	for (;;) {
		bool done;
		rc = smarm__wait_park(&w); /* unbounded: only WAIT-9 */
		if (rc != 0) { /* refused: the job runs on, abandoned */
			job_undo(&w);
			smarm__wait_retire(&w);
			return rc;
		}
		smarm__lock(&io->jlock, SMARM__RANK_CHANNEL);
		done = job->done;
		if (!done) /* woken for something else: wait on (INV-3) */
			job->wt = smarm__wait_open(&w);
		smarm__unlock(&io->jlock, SMARM__RANK_CHANNEL);
		if (done)
			break;
	}
	if (result != NULL)
		*result = job->result;
	free(job);
	return 0;
}
