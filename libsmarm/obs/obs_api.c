/* SPDX-License-Identifier: MIT */
/*
 * obs_api.c - the public introspection calls (abi/smarm/obs.h): every
 * argument is checked here, the node resolved (NULL: the calling
 * actor's), then snapshot.c does the work.
 *
 * A snapshot of a big node taken by one of its own actors is walked on a
 * thread of the blocking-work pool (smarm_io_blocking) while the actor
 * is parked: a million actors take about 0.3 s, which would otherwise
 * hold the worker (and every actor queued behind it) that long. Below
 * OBS_OFFLOAD_MIN actors the hand-off costs more than the walk.
 *
 * Ownership: a snapshot returned belongs to the caller until
 * smarm_snapshot_free. An offloaded walk's job record is the heap's,
 * freed by whichever of the job and the caller finishes last (a caller
 * stopped while parked leaves it to the job: INV-2).
 * Invariants:
 *   INV-1 a call that returns an argument error has read nothing and
 *         changed nothing.
 *   INV-2 an offloaded job's state goes RUNNING -> DONE (the job) or
 *         RUNNING -> GONE (the caller's cleanup: it was stopped), by
 *         one exchange each; the party that finds the other's state
 *         last frees the record and any snapshot in it.
 * See: docs/observability.md.
 */
#include "obs.h"

#include <stdatomic.h>
#include <stdlib.h>

/* The public handle and the snapshot it is (obs.h). */
static struct obs_snap *snap_of(smarm_snapshot_t *h)
{
	return (struct obs_snap *)(void *)h;
}

static const struct obs_snap *csnap_of(const smarm_snapshot_t *h)
{
	return (const struct obs_snap *)(const void *)h;
}

/* The node a call names: node, or the calling actor's; NULL if none. */
static struct smarm_node *node_of(smarm_node_t *node)
{
	return node != NULL ? node : smarm__current_node();
}

static bool info_ok(const smarm_actor_info_t *out)
{
	return out != NULL && out->size >= SMARM_ACTOR_INFO_SIZE_V1;
}

/* Live actors from which an actor's own snapshot is walked off-worker. */
#define OBS_OFFLOAD_MIN 20000

enum { JOB_RUNNING = 0, JOB_DONE = 1, JOB_GONE = 2 };

struct snap_job {
	struct smarm_node *j_node;
	struct obs_snap *j_snap;
	int j_rc;
	_Atomic int j_state; /* JOB_* (INV-2) */
};

static void job_free(struct snap_job *j)
{
	smarm__obs_snapshot_free(j->j_snap);
	free(j);
}

/* On a pool thread: the walk. */
static intptr_t job_run(void *arg)
{
	struct snap_job *j = arg;
	j->j_rc = smarm__obs_snapshot(j->j_node, &j->j_snap);
	if (atomic_exchange(&j->j_state, JOB_DONE) == JOB_GONE)
		job_free(j); /* its caller was stopped meanwhile */
	return 0;
}

/* The caller's cleanup: it ends (a stop) while the job may still run. */
static void job_abandon(void *arg)
{
	struct snap_job *j = arg;
	if (atomic_exchange(&j->j_state, JOB_GONE) == JOB_DONE)
		job_free(j);
}

/* An actor's snapshot of its own big node, walked on the pool. */
static int snapshot_offload(struct smarm_node *n, struct obs_snap **out)
{
	struct snap_job *j = calloc(1, sizeof *j);
	int rc;
	if (j == NULL)
		return SMARM_ENOMEM;
	j->j_node = n;
	rc = smarm_cleanup_push(job_abandon, j);
	if (rc != 0) {
		free(j);
		return rc;
	}
	rc = smarm_io_blocking(job_run, j, NULL);
	smarm_cleanup_pop(false);
	if (rc != 0) {
		/*
		 * Not submitted (the pool could not start, no memory), or
		 * submitted and the park refused (a no-park region): the
		 * job may run on, so the record is left to it, and leaks if
		 * it never ran (rare, and 32 bytes). Walk here instead.
		 */
		job_abandon(j);
		return smarm__obs_snapshot(n, out);
	}
	*out = j->j_snap;
	rc = j->j_rc;
	free(j);
	return rc;
}

int smarm_snapshot_take(smarm_node_t *node, smarm_snapshot_t **out)
{
	struct smarm_node *n;
	int64_t live = 0;
	if (out == NULL)
		return SMARM_EINVAL;
	n = node_of(node);
	if (n == NULL)
		return SMARM_ENOTACTOR;
	if (n == smarm__current_node() &&
	    smarm_node_get_int(n, SMARM_STAT_LIVE_ACTORS, &live) == 0 &&
	    live >= OBS_OFFLOAD_MIN)
		return snapshot_offload(n, (struct obs_snap **)(void *)out);
	return smarm__obs_snapshot(n, (struct obs_snap **)(void *)out);
}

void smarm_snapshot_free(smarm_snapshot_t *snap)
{
	smarm__obs_snapshot_free(snap_of(snap));
}

size_t smarm_snapshot_count(const smarm_snapshot_t *snap)
{
	return snap != NULL ? csnap_of(snap)->s_n : 0;
}

int smarm_snapshot_get(const smarm_snapshot_t *snap, size_t index,
		       smarm_actor_info_t *out)
{
	if (snap == NULL || !info_ok(out))
		return SMARM_EINVAL;
	if (index >= csnap_of(snap)->s_n)
		return SMARM_ENOENT;
	smarm__obs_expand(csnap_of(snap), index, out);
	return 0;
}

int smarm_snapshot_find(const smarm_snapshot_t *snap, smarm_pid_t pid,
			size_t *index)
{
	size_t i;
	if (snap == NULL || index == NULL)
		return SMARM_EINVAL;
	i = pid.id != 0 ? smarm__obs_find(csnap_of(snap), pid.id) : SIZE_MAX;
	if (i == SIZE_MAX)
		return SMARM_ENOPROC;
	*index = i;
	return 0;
}

int smarm_snapshot_tree(const smarm_snapshot_t *snap, int kind,
			smarm_tree_cb cb, void *arg)
{
	if (snap == NULL || cb == NULL ||
	    (kind != SMARM_TREE_SPAWN && kind != SMARM_TREE_SUPERVISION))
		return SMARM_EINVAL;
	return smarm__obs_tree(csnap_of(snap), kind, cb, arg);
}

int smarm_actor_info(smarm_node_t *node, smarm_pid_t pid,
		     smarm_actor_info_t *out)
{
	struct smarm_node *n;
	if (!info_ok(out))
		return SMARM_EINVAL;
	n = node_of(node);
	if (n == NULL)
		return SMARM_ENOTACTOR;
	if (pid.id == 0)
		return SMARM_ENOPROC;
	return smarm__obs_actor_info(n, pid.id, out);
}

int smarm_actor_relations(smarm_node_t *node, smarm_pid_t pid, int kind,
			  smarm_pid_t *buf, size_t cap, size_t *count)
{
	struct smarm_node *n;
	if (count == NULL || (buf == NULL && cap > 0) ||
	    (kind != SMARM_REL_LINKS && kind != SMARM_REL_MONITORS &&
	     kind != SMARM_REL_MONITORED_BY))
		return SMARM_EINVAL;
	n = node_of(node);
	if (n == NULL)
		return SMARM_ENOTACTOR;
	if (pid.id == 0)
		return SMARM_ENOPROC;
	return smarm__obs_relations(n, pid.id, kind, buf, cap, count);
}
