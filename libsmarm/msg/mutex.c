/* SPDX-License-Identifier: MIT */
/*
 * mutex.c - the green mutex: contention parks the actor, unlock hands the
 * lock straight to the oldest waiter (FIFO, no barging), and every lock
 * has a timeout so a green deadlock surfaces as SMARM_ETIMEDOUT.
 *
 * A waiter registers (node, pid, epoch) at the tail of the FIFO under the
 * state lock, arms a wake timer for its deadline and parks. unlock pops
 * the head, makes it the holder *before* waking it, and wakes it with its
 * epoch. The woken waiter decides from state alone: holder == me means
 * granted (even if its timer fired too), otherwise it removes its entry
 * and reports the timeout. A waiter that is stopped while queued removes
 * its entry through the wait-undo hook, or passes the lock on if it had
 * already been granted it, so a grant is never lost to a dead actor.
 *
 * OS threads outside any actor may lock too (they spin with sched_yield
 * until the deadline); their holder id is the thread id with the top bit
 * set, so it can never equal a pid.
 *
 * Ownership: the caller allocates and frees the mutex. Locking: lock
 * (CHANNEL rank) guards holder and the queue. Invariants: INV-1 holder == 0
 * implies the queue is empty (unlock hands off directly). INV-2 a queued
 * entry's actor is inside lock() (core.h INV-5).
 * See: docs/architecture.md (Mutex).
 */

#include "msg.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct smarm_mutex {
	smarm__lock_t lock;	 /* CHANNEL rank */
	uint64_t holder;	 /* 0 free; a pid id; or THREAD_BIT|tid */
	struct smarm__waiter *q; /* FIFO ring of waiters */
	uint32_t qcap, qhead, qlen;
};

#define THREAD_BIT (1ull << 63)

static uint64_t caller_id(void)
{
	struct smarm__slot *me = smarm__current();
	if (me != NULL)
		return smarm__slot_pid(me);
	return THREAD_BIT | (uint64_t)gettid();
}

int smarm_mutex_alloc(smarm_mutex_t **out)
{
	if (out == NULL)
		return SMARM_EINVAL;
	*out = calloc(1, sizeof **out);
	return *out ? 0 : SMARM_ENOMEM;
}

int smarm_mutex_free(smarm_mutex_t *m)
{
	bool busy;
	if (m == NULL)
		return 0;
	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	busy = m->holder != 0 || m->qlen != 0;
	smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
	if (busy)
		return SMARM_ESTATE;
	free(m->q);
	free(m);
	return 0;
}

/* Under the lock. */
static int q_push(smarm_mutex_t *m, struct smarm__waiter w)
{
	if (m->qlen == m->qcap) {
		uint32_t cap = m->qcap ? m->qcap * 2 : 8;
		struct smarm__waiter *q = malloc(cap * sizeof *q);
		if (q == NULL)
			return SMARM_ENOMEM;
		for (uint32_t i = 0; i < m->qlen; i++)
			q[i] = m->q[(m->qhead + i) % m->qcap];
		free(m->q);
		m->q = q;
		m->qcap = cap;
		m->qhead = 0;
	}
	m->q[(m->qhead + m->qlen) % m->qcap] = w;
	m->qlen++;
	return 0;
}

/* Under the lock: drop pid's entry, keeping FIFO order. */
static void q_remove(smarm_mutex_t *m, uint64_t pid)
{
	uint32_t out = 0;
	for (uint32_t i = 0; i < m->qlen; i++) {
		struct smarm__waiter w = m->q[(m->qhead + i) % m->qcap];
		if (w.pid == pid)
			continue;
		m->q[(m->qhead + out) % m->qcap] = w;
		out++;
	}
	m->qlen = out;
}

/* Under the lock, which it releases: pass the lock to the oldest waiter. */
static void hand_off_and_unlock(smarm_mutex_t *m)
{
	struct smarm__waiter w = { NULL, 0, 0 };
	if (m->qlen > 0) {
		w = m->q[m->qhead];
		m->qhead = (m->qhead + 1) % m->qcap;
		m->qlen--;
		m->holder = w.pid;
	} else {
		m->holder = 0;
	}
	smarm__wake_and_unlock(w, &m->lock, SMARM__RANK_CHANNEL);
}

static void lock_undo(void *arg, struct smarm__slot *me)
{
	smarm_mutex_t *m = arg;
	uint64_t pid = smarm__slot_pid(me);
	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (m->holder == pid) {
		hand_off_and_unlock(m); /* granted, but we are leaving */
		return;
	}
	q_remove(m, pid);
	smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
}

static int lock_from_thread(smarm_mutex_t *m, uint64_t deadline)
{
	uint64_t me = caller_id();
	for (;;) {
		smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
		if (m->holder == 0) {
			m->holder = me;
			smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
			return 0;
		}
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		if (smarm__clock_ns() >= deadline)
			return SMARM_ETIMEDOUT;
		sched_yield();
	}
}

int smarm_mutex_lock(smarm_mutex_t *m, uint64_t timeout_ns)
{
	struct smarm__slot *me = smarm__current();
	struct smarm_node *n;
	uint64_t pid;
	uint64_t deadline = smarm__deadline_after(timeout_ns);
	uint32_t e;
	int rc;

	if (m == NULL)
		return SMARM_EINVAL;
	if (me == NULL)
		return lock_from_thread(m, deadline);
	smarm__observe_stop(me);
	n = smarm__worker()->node;
	pid = smarm__slot_pid(me);

	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (m->holder == 0) {
		m->holder = pid;
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return 0;
	}
	if (timeout_ns == 0) {
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return SMARM_ETIMEDOUT;
	}
	if (m->holder == pid) {
		/* Not reentrant: we would queue behind ourselves. */
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		e = smarm__begin_wait(me);
		rc = smarm__timer_sleep(n, deadline, me, e);
		if (rc != 0) {
			smarm__retire_wait(me);
			return rc;
		}
		smarm__park(me);
		return SMARM_ETIMEDOUT;
	}
	e = smarm__begin_wait(me);
	rc = q_push(m, (struct smarm__waiter){ n, pid, e });
	smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
	if (rc == 0)
		rc = smarm__timer_sleep(n, deadline, me, e);
	if (rc != 0) {
		lock_undo(m, me);
		smarm__retire_wait(me);
		return rc;
	}
	me->wc_fn = lock_undo;
	me->wc_arg = m;
	smarm__park(me);
	me->wc_fn = NULL;

	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (m->holder == pid) {
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return 0;
	}
	q_remove(m, pid);
	smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
	return SMARM_ETIMEDOUT;
}

int smarm_mutex_try_lock(smarm_mutex_t *m)
{
	int rc = SMARM_EAGAIN;
	if (m == NULL)
		return SMARM_EINVAL;
	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (m->holder == 0) {
		m->holder = caller_id();
		rc = 0;
	}
	smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
	return rc;
}

int smarm_mutex_unlock(smarm_mutex_t *m)
{
	uint64_t me;
	if (m == NULL)
		return SMARM_EINVAL;
	me = caller_id();
	smarm__lock(&m->lock, SMARM__RANK_CHANNEL);
	if (m->holder != me) {
		smarm__unlock(&m->lock, SMARM__RANK_CHANNEL);
		return SMARM_ESTATE;
	}
	hand_off_and_unlock(m);
	return 0;
}
