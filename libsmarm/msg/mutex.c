/* SPDX-License-Identifier: MIT */
/*
 * mutex.c - the green mutex: contention parks the actor, unlock hands the
 * lock straight to the oldest waiter (FIFO, no barging), and a bounded
 * lock turns a green deadlock into SMARM_ETIMEDOUT; a relock by the
 * holder is refused (SMARM_ESTATE), never waited for. The
 * public calls, which validate their arguments, are in mutex_api.c.
 *
 * A waiter registers (node, pid, epoch) at the tail of the FIFO under the
 * state lock, arms a wake timer for its deadline and parks. unlock pops
 * the head, makes it the holder *before* waking it, and wakes it with its
 * epoch. The woken waiter decides from state alone: holder == me means
 * granted (even if its timer fired too), otherwise it removes its entry
 * and reports the timeout. A waiter that is stopped while queued removes
 * its entry through the wait's undo hook, or passes the lock on if it had
 * already been granted it, so a grant is never lost to a dead actor.
 *
 * OS threads outside any actor may lock too (they spin with sched_yield
 * until they get it or the deadline passes); their holder id is the thread id
 * with the top bit set, so it can never equal a pid.
 *
 * Handles: a mutex lives in a cell of a type-stable pool (core/handle.h)
 * and callers hold generation-tagged handles to it. Every call checks
 * the caller's handle again under the mutex's lock, so a call racing the
 * free of the same mutex either runs first or returns SMARM_ESTATE; a
 * parked waiter keeps the mutex from being freed (it is waited on).
 *
 * Ownership: the caller allocates and frees the mutex; the cell goes
 * back to the pool. Locking: lock (CHANNEL rank) guards holder and the
 * queue. Invariants: INV-1 holder == 0 implies the queue is empty (unlock
 * hands off directly). INV-2 a queued entry's actor is inside lock()
 * (core.h INV-5). INV-3 a retired mutex has no holder and no waiter.
 * See: docs/architecture/mutex.md.
 */

#include "msg.h"

#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A mutex's cell (core/handle.h); callers hold handles to it. */
struct smarm_mutex {
	struct smarm__hcell hdr; /* handle header: first (decode reads it) */
	smarm__lock_t lock;	 /* CHANNEL rank; kept across tenants */
	uint64_t holder;	 /* 0 free; a pid id; or THREAD_BIT|tid */
	struct smarm__ring q;	 /* FIFO of struct smarm__waiter */
};

/* 1 GiB of address space, reserved, not committed: 2^24 mutexes. */
#define MUTEX_REGION ((size_t)1 << 30)
static struct smarm__hpool mutex_pool =
	SMARM__HPOOL_INIT(sizeof(struct smarm_mutex), MUTEX_REGION);
_Static_assert(sizeof(struct smarm_mutex) <= 4096, "a mutex fits a cell");
_Static_assert(offsetof(struct smarm_mutex, hdr) == 0,
	       "the handle header is the cell's first word");

#define QSZ sizeof(struct smarm__waiter)

#define THREAD_BIT (1ull << 63)

static uint64_t caller_id(void)
{
	uint64_t pid = smarm_actor_self().id;
	return pid != 0 ? pid : THREAD_BIT | (uint64_t)gettid();
}

int smarm__mutex_alloc(smarm_mutex_t **out)
{
	smarm_mutex_t *m;
	uint64_t h;
	void *cell;
	int rc = smarm__hpool_alloc(&mutex_pool, &cell, &h);
	if (rc != 0)
		return rc;
	m = cell; /* not the lock: a stale caller may hold it */
	m->holder = 0;
	smarm__ring_init_fixed(&m->q, NULL, 0);
	smarm__handle_publish(m, h);
	*out = (smarm_mutex_t *)(uintptr_t)h;
	return 0;
}

int smarm__mutex_cell(const smarm_mutex_t *h, smarm_mutex_t **m)
{
	void *c;
	int rc = smarm__handle_cell_sized(
		&mutex_pool, SMARM__CELL_SIZE(sizeof(struct smarm_mutex)), h,
		&c);
	if (rc == 0)
		*m = c;
	return rc;
}

int smarm__mutex_free(smarm_mutex_t *m, const smarm_mutex_t *h)
{
	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (!smarm__handle_live(m, h) || m->holder != 0 ||
	    smarm__ring_len(&m->q) != 0) {
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return SMARM_ESTATE; /* freed (a racing free won), or busy */
	}
	smarm__handle_retire(m);
	smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
	smarm__ring_fini(&m->q);
	smarm__hpool_free(&mutex_pool, m);
	return 0;
}

/* Under the lock. */
static int q_push(smarm_mutex_t *m, struct smarm__waiter w)
{
	int rc = smarm__ring_grow(&m->q, QSZ, smarm__ring_len(&m->q) + 1, 8);
	if (rc == 0)
		*(struct smarm__waiter *)smarm__ring_push_back(&m->q, QSZ) = w;
	return rc;
}

/* Under the lock: drop pid's entry, keeping FIFO order. */
static void q_remove(smarm_mutex_t *m, uint64_t pid)
{
	uint32_t len = smarm__ring_len(&m->q);
	uint32_t out = 0;
	for (uint32_t i = 0; i < len; i++) {
		struct smarm__waiter *w = smarm__ring_at(&m->q, QSZ, i);
		if (w->pid == pid)
			continue;
		*(struct smarm__waiter *)smarm__ring_at(&m->q, QSZ, out) = *w;
		out++;
	}
	smarm__ring_set_len(&m->q, out);
}

/* Under the lock, which it releases: pass the lock to the oldest waiter. */
static void hand_off_and_unlock(smarm_mutex_t *m)
{
	struct smarm__waiter w = { NULL, 0, 0 };
	if (smarm__ring_len(&m->q) > 0) {
		w = *(struct smarm__waiter *)smarm__ring_pop_front(&m->q, QSZ);
		m->holder = w.pid;
	} else {
		m->holder = 0;
	}
	smarm__wake_and_unlock(w, &m->lock, SMARM__RANK_CHANNEL);
}

/* Under no lock: pid leaves the queue, passing on a grant it got. */
static void lock_leave(smarm_mutex_t *m, uint64_t pid)
{
	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (m->holder == pid) {
		hand_off_and_unlock(m); /* granted, but we are leaving */
		return;
	}
	q_remove(m, pid);
	smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
}

/* Undo hook (wait.h): a stop ends the actor while it is queued. */
static void lock_undo(struct smarm__wait *w)
{
	lock_leave(w->wt_arg, w->wt_pid);
}

static int lock_from_thread(smarm_mutex_t *m, const smarm_mutex_t *h,
			    uint64_t deadline)
{
	uint64_t me = caller_id();
	for (;;) {
		int rc = SMARM_ETIMEDOUT;
		smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
		if (!smarm__handle_live(m, h)) {
			smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
			return SMARM_ESTATE;
		}
		if (m->holder == 0) {
			m->holder = me;
			rc = 0;
		} else if (m->holder == me) {
			rc = SMARM_ESTATE; /* not reentrant */
		} else if (deadline == 0 || smarm__clock_ns() < deadline) {
			rc = SMARM_EAGAIN;
		}
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		if (rc != SMARM_EAGAIN)
			return rc;
		sched_yield();
	}
}

int smarm__mutex_lock(smarm_mutex_t *m, const smarm_mutex_t *h,
		      uint64_t timeout_ns)
{
	struct smarm__slot *me = smarm__current();
	uint64_t deadline = smarm__timeout_deadline(timeout_ns);
	struct smarm__wait w;
	int rc;

	if (me == NULL)
		return lock_from_thread(m, h, deadline);
	smarm__wait_init(&w, me, deadline, lock_undo, m);

	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (!smarm__handle_live(m, h)) {
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return SMARM_ESTATE;
	}
	if (m->holder == 0) {
		m->holder = w.wt_pid;
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return 0;
	}
	if (m->holder == w.wt_pid) {
		/* Not reentrant: we would wait behind ourselves for ever. */
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return SMARM_ESTATE;
	}
	if (smarm__wait_expired(&w)) {
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return SMARM_ETIMEDOUT;
	}
	rc = q_push(m, smarm__wait_open(&w));
	/* For introspection: the holder when it queued. */
	smarm__wait_note(SMARM__WON_MUTEX, m->holder);
	smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
	if (rc == 0)
		rc = smarm__wait_park(&w);
	smarm__wait_note(SMARM__WON_NONE, 0);
	if (rc != 0) {
		lock_leave(m, w.wt_pid);
		smarm__wait_retire(&w);
		return rc;
	}

	/* Woken: by unlock's grant, or by the deadline (WAIT-5). */
	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (m->holder == w.wt_pid) {
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return 0;
	}
	q_remove(m, w.wt_pid);
	smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
	return SMARM_ETIMEDOUT;
}

int smarm__mutex_try_lock(smarm_mutex_t *m, const smarm_mutex_t *h)
{
	int rc = SMARM_EAGAIN;
	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (!smarm__handle_live(m, h)) {
		rc = SMARM_ESTATE;
	} else if (m->holder == 0) {
		m->holder = caller_id();
		rc = 0;
	}
	smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
	return rc;
}

int smarm__mutex_unlock(smarm_mutex_t *m, const smarm_mutex_t *h)
{
	uint64_t me = caller_id();
	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (!smarm__handle_live(m, h) || m->holder != me) {
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return SMARM_ESTATE;
	}
	hand_off_and_unlock(m);
	return 0;
}
