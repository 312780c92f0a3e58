/* SPDX-License-Identifier: MIT */
/*
 * mutex_api.c - the public entry points for the green mutex. Each call
 * validates its arguments, finds the caller's handle's cell
 * (core/handle.h: no mutex handle is SMARM_EINVAL) and calls the
 * smarm__mutex_* code in mutex.c, which checks the handle under the
 * mutex lock (a freed mutex is SMARM_ESTATE there); nothing else below
 * this file checks caller input again.
 *
 * Ownership: the caller allocates and frees the mutex. Locking: none of
 * its own. Invariants: INV-1 a call that returns SMARM_EINVAL changed
 * nothing. INV-2 an actor's count of mutexes held (core/fault.h: a
 * fault while one is held is fatal) moves with each lock taken and
 * given back here.
 * See: docs/embedding.md (Mutex), abi/smarm/smarm.h.
 */
#include "msg.h"

#include "../core/fault.h"

/* A lock taken (rc 0): the caller's count of mutexes held grows. */
static int took(int rc)
{
	if (rc == 0)
		smarm__self_mutex_held(1);
	return rc;
}

int smarm_mutex_alloc(smarm_mutex_t **out)
{
	if (out == NULL)
		return SMARM_EINVAL;
	return smarm__mutex_alloc(out);
}

int smarm_mutex_free(smarm_mutex_t *h)
{
	smarm_mutex_t *m;
	int rc;
	if (h == NULL)
		return 0; /* freeing NULL is a no-op */
	rc = smarm__mutex_cell(h, &m);
	return rc != 0 ? rc : smarm__mutex_free(m, h);
}

int smarm_mutex_lock(smarm_mutex_t *h, uint64_t timeout_ns)
{
	smarm_mutex_t *m;
	int rc = smarm__mutex_cell(h, &m);
	return rc != 0 ? rc : took(smarm__mutex_lock(m, h, timeout_ns));
}

int smarm_mutex_try_lock(smarm_mutex_t *h)
{
	smarm_mutex_t *m;
	int rc = smarm__mutex_cell(h, &m);
	return rc != 0 ? rc : took(smarm__mutex_try_lock(m, h));
}

int smarm_mutex_unlock(smarm_mutex_t *h)
{
	smarm_mutex_t *m;
	int rc = smarm__mutex_cell(h, &m);
	/* Coz's catch-up before a release can wake a waiter (core/causal.h;
	 * one branch when the node neither profiles, traces nor counts). */
	if (rc == 0)
		smarm__causal_pay();
	if (rc == 0)
		rc = smarm__mutex_unlock(m, h);
	if (rc == 0)
		smarm__self_mutex_held(-1);
	return rc;
}
