/* SPDX-License-Identifier: MIT */
/*
 * causal_api.c - the public calls of the causal profiler
 * (abi/smarm/obs.h, Causal profiling): progress points and named
 * sites. Every argument is checked here, the node resolved (NULL: the
 * calling actor's), then core/causal.c does the work.
 *
 * Ownership: a point belongs to its node (freed at close); a site is a
 * node's id, handed out by value.
 * Invariants: INV-1 a call that returns an argument error has changed
 * nothing.
 * See: docs/observability.md (Causal profiling).
 */
#include "obs.h"

#include "../core/causal.h"
#include "../core/sched.h"

#include <stdatomic.h>

/* The public handle and the point it is (core/causal.h). */
static struct smarm__causal_point *pt_of(smarm_progress_t *h)
{
	return (struct smarm__causal_point *)(void *)h;
}

static const struct smarm__causal_point *cpt_of(const smarm_progress_t *h)
{
	return (const struct smarm__causal_point *)(const void *)h;
}

int smarm_progress_get(smarm_node_t *node, const char *name, int kind,
		       smarm_progress_t **out)
{
	struct smarm__causal_point *p;
	int rc;
	if (out == NULL || (kind != SMARM_PROGRESS_THROUGHPUT &&
			    kind != SMARM_PROGRESS_LATENCY))
		return SMARM_EINVAL;
	if (node == NULL && (node = smarm__current_node()) == NULL)
		return SMARM_ENOTACTOR;
	rc = smarm__causal_point(smarm__causal_of(node), name, kind, &p);
	if (rc == 0)
		*out = (smarm_progress_t *)(void *)p;
	return rc;
}

int smarm_progress_add(smarm_progress_t *pt, uint64_t count)
{
	struct smarm__causal_point *p = pt_of(pt);
	if (p == NULL || count == 0 || p->cp_kind != SMARM_PROGRESS_THROUGHPUT)
		return SMARM_EINVAL;
	smarm__causal_pay_batch();
	atomic_fetch_add_explicit(&p->cp_count, count, memory_order_relaxed);
	return 0;
}

int smarm_progress_begin(smarm_progress_t *pt)
{
	struct smarm__causal_point *p = pt_of(pt);
	if (p == NULL || p->cp_kind != SMARM_PROGRESS_LATENCY)
		return SMARM_EINVAL;
	atomic_fetch_add_explicit(&p->cp_count, 1, memory_order_relaxed);
	return 0;
}

int smarm_progress_end(smarm_progress_t *pt)
{
	struct smarm__causal_point *p = pt_of(pt);
	if (p == NULL || p->cp_kind != SMARM_PROGRESS_LATENCY)
		return SMARM_EINVAL;
	smarm__causal_pay_batch();
	atomic_fetch_add_explicit(&p->cp_dep, 1, memory_order_relaxed);
	return 0;
}

int smarm_progress_named(const char *name)
{
	smarm_progress_t *pt;
	int rc = smarm_progress_get(NULL, name, SMARM_PROGRESS_THROUGHPUT, &pt);
	return rc != 0 ? rc : smarm_progress_add(pt, 1);
}

int smarm_progress_get_counts(const smarm_progress_t *pt, uint64_t *count,
			      uint64_t *departures)
{
	const struct smarm__causal_point *p = cpt_of(pt);
	if (p == NULL)
		return SMARM_EINVAL;
	if (count != NULL)
		*count = atomic_load_explicit(&p->cp_count,
					      memory_order_relaxed);
	if (departures != NULL)
		*departures =
			atomic_load_explicit(&p->cp_dep, memory_order_relaxed);
	return 0;
}

int smarm_site_begin(const char *name, smarm_site_t *saved)
{
	struct smarm__slot *me = smarm__current();
	uint32_t id;
	int rc;
	if (saved == NULL)
		return SMARM_EINVAL;
	if (me == NULL)
		return SMARM_ENOTACTOR;
	rc = smarm__causal_site_id(smarm__causal_of(smarm__current_node()),
				   name, &id);
	if (rc != 0) {
		/* smarm_site_end(*saved) then leaves the actor where it is
		 * (SMARM_SITE ends its block with it). */
		saved->id = smarm__causal_site_cur(me);
		return rc;
	}
	saved->id = smarm__causal_site_enter(me, id);
	return 0;
}

int smarm_site_end(smarm_site_t saved)
{
	struct smarm__slot *me = smarm__current();
	struct smarm__causal *cz;
	if (me == NULL)
		return SMARM_ENOTACTOR;
	cz = smarm__causal_of(smarm__current_node());
	if (saved.id >
	    atomic_load_explicit(&cz->cz_nsites, memory_order_acquire))
		return SMARM_EINVAL;
	smarm__causal_site_leave(me, saved.id);
	return 0;
}
