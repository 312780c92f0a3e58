/* SPDX-License-Identifier: MIT */
/*
 * obs_api.c - the public introspection calls (abi/smarm/obs.h): every
 * argument is checked here, the node resolved (NULL: the calling
 * actor's), then snapshot.c does the work.
 *
 * Ownership: a snapshot returned belongs to the caller until
 * smarm_snapshot_free.
 * Invariants:
 *   INV-1 a call that returns an argument error has read nothing and
 *         changed nothing.
 * See: docs/observability.md.
 */
#include "obs.h"

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

int smarm_snapshot_take(smarm_node_t *node, smarm_snapshot_t **out)
{
	struct smarm_node *n;
	if (out == NULL)
		return SMARM_EINVAL;
	n = node_of(node);
	if (n == NULL)
		return SMARM_ENOTACTOR;
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
