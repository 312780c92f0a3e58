/* SPDX-License-Identifier: MIT */
/*
 * group.c - process groups (Erlang's pg): named, ordered sets of live
 * actors of a node, with join, leave, members, pick (the first member)
 * and dispatch (a send to it). Kept in the node's registry tables
 * (registry.c), under the same lock and with the same lifetime rule: a
 * membership is made through smarm__reg_update (the member is alive and
 * its exit hook will see it) and the member's exit hook removes every
 * membership it has, eagerly, in whatever groups.
 *
 * Ownership: a group record exists while it has members (the last leave
 * frees it); a membership belongs to both its group's array and its
 * member's ra_members list, and is freed when it leaves either.
 * Locking: rg_rw (registry.c) guards groups and memberships.
 * Invariants:
 *   INV-1 a group in rg_groups has at least one member, each actor at
 *         most once (join looks for it in the member's list first).
 *   INV-2 gr_m is in join order (leave closes the gap, never reorders).
 *   INV-3 every member has not run its SMARM__SUB_REG exit hook
 *         (registry.c INV-1), so every member is live.
 * See: docs/architecture/registry.md.
 */
#include "reg.h"

#include <stdlib.h>

struct reg_member;

/* A group with at least one member (INV-1). */
struct reg_group {
	struct smarm__htab_node gr_h; /* in rg_groups */
	struct reg_member **gr_m;     /* members in join order (INV-2) */
	size_t gr_n, gr_cap;	      /* members, room in gr_m */
	size_t gr_len;		      /* strlen(gr_name) */
	char gr_name[SMARM_NAME_MAX + 1];
};

/* One actor's membership of one group. */
struct reg_member {
	struct smarm__rlist me_link;	   /* in the member's ra_members */
	struct reg_group *me_group;	   /* its group */
	struct smarm__reg_actor *me_actor; /* the member */
};

/* Under rg_rw: the group called name, or NULL. */
static struct reg_group *group_find(const struct smarm__reg *r,
				    const char *name, size_t len)
{
	uint64_t h = smarm__name_hash(name, len);
	for (struct smarm__htab_node *e = smarm__htab_first(&r->rg_groups, h);
	     e != NULL; e = e->hn_next) {
		struct reg_group *g =
			SMARM__CONTAINER(e, struct reg_group, gr_h);
		if (e->hn_hash == h && g->gr_len == len &&
		    smarm__name_eq(g->gr_name, name, len))
			return g;
	}
	return NULL;
}

static void group_free(struct smarm__reg *r, struct reg_group *g)
{
	smarm__htab_remove(&r->rg_groups, &g->gr_h);
	free(g->gr_m);
	free(g);
}

/* Under the write lock: end membership me (and its group if empty). */
static void member_drop(struct smarm__reg *r, struct reg_member *me)
{
	struct reg_group *g = me->me_group;
	size_t i = 0;
	while (i < g->gr_n && g->gr_m[i] != me)
		i++;
	if (!SMARM_NEVER(i == g->gr_n)) {
		memmove(&g->gr_m[i], &g->gr_m[i + 1],
			(g->gr_n - i - 1) * sizeof *g->gr_m); /* INV-2 */
		g->gr_n--;
	}
	smarm__rlist_remove(&me->me_link);
	__atomic_store_n(&r->rg_nmemb, r->rg_nmemb - 1, __ATOMIC_RELAXED);
	free(me);
	if (g->gr_n == 0) /* INV-1 */
		group_free(r, g);
}

void smarm__group_leave_all(struct smarm__reg *r, struct smarm__reg_actor *ra)
{
	while (ra->ra_members.l_next != &ra->ra_members)
		member_drop(r, SMARM__CONTAINER(ra->ra_members.l_next,
						struct reg_member, me_link));
}

void smarm__group_fini(struct smarm__reg *r)
{
	/* Every member ended, so every group went with its last (INV-1). */
	SMARM_ASSERT(r->rg_groups.ht_n == 0);
	(void)r;
}

struct join_arg {
	const char *j_name;
	size_t j_len;
	bool j_added;
};

static int join_op(struct smarm__reg *r, struct smarm__reg_actor *ra, void *arg)
{
	struct join_arg *j = arg;
	struct reg_group *g = group_find(r, j->j_name, j->j_len);
	struct reg_member *me;
	bool fresh = false;
	if (g != NULL) {
		for (struct smarm__rlist *l = ra->ra_members.l_next;
		     l != &ra->ra_members; l = l->l_next)
			if (SMARM__CONTAINER(l, struct reg_member, me_link)
				    ->me_group == g)
				return 0; /* INV-1: a member already */
	} else {
		g = calloc(1, sizeof *g);
		if (g == NULL)
			return SMARM_ENOMEM;
		g->gr_h.hn_hash = smarm__name_hash(j->j_name, j->j_len);
		g->gr_len = j->j_len;
		memcpy(g->gr_name, j->j_name, j->j_len);
		fresh = true;
	}
	me = malloc(sizeof *me);
	if (me != NULL && g->gr_n == g->gr_cap) {
		size_t cap = g->gr_cap ? g->gr_cap * 2 : 4;
		struct reg_member **m = realloc(g->gr_m, cap * sizeof *m);
		if (m == NULL) {
			free(me);
			me = NULL;
		} else {
			g->gr_m = m;
			g->gr_cap = cap;
		}
	}
	if (me == NULL) {
		if (fresh) {
			free(g->gr_m);
			free(g);
		}
		return SMARM_ENOMEM;
	}
	if (fresh)
		smarm__htab_insert(&r->rg_groups, &g->gr_h);
	me->me_group = g;
	me->me_actor = ra;
	g->gr_m[g->gr_n++] = me;
	smarm__rlist_append(&ra->ra_members, &me->me_link);
	__atomic_store_n(&r->rg_nmemb, r->rg_nmemb + 1, __ATOMIC_RELAXED);
	j->j_added = true;
	return 0;
}

int smarm__group_join(struct smarm_node *n, const char *name, size_t len,
		      uint64_t pid, bool *added)
{
	struct join_arg j = { name, len, false };
	int rc = smarm__reg_update(n, pid, join_op, &j);
	*added = j.j_added;
	return rc;
}

int smarm__group_leave(struct smarm_node *n, const char *name, size_t len,
		       uint64_t pid)
{
	struct smarm__reg *r = smarm__reg_of(n);
	struct reg_group *g;
	int rc = SMARM_ENOENT;
	smarm__reg_wrlock(r);
	g = group_find(r, name, len);
	for (size_t i = 0; g != NULL && i < g->gr_n; i++)
		if (g->gr_m[i]->me_actor->ra_pid == pid) {
			member_drop(r, g->gr_m[i]);
			rc = 0;
			break;
		}
	smarm__reg_wrunlock(r);
	return rc;
}

int smarm__group_members(struct smarm_node *n, const char *name, size_t len,
			 smarm_pid_t *buf, size_t cap, size_t *count)
{
	struct smarm__reg *r = smarm__reg_of(n);
	struct reg_group *g;
	size_t k = 0;
	smarm__reg_rdlock(r);
	g = group_find(r, name, len);
	if (g != NULL) {
		k = g->gr_n;
		for (size_t i = 0; i < k && i < cap; i++)
			buf[i].id = g->gr_m[i]->me_actor->ra_pid;
	}
	smarm__reg_rdunlock(r);
	*count = k;
	return 0;
}

int smarm__group_pick(struct smarm_node *n, const char *name, size_t len,
		      uint64_t *pid)
{
	struct smarm__reg *r = smarm__reg_of(n);
	struct reg_group *g;
	smarm__reg_rdlock(r);
	g = group_find(r, name, len);
	/* INV-3: the first member is live. */
	*pid = g != NULL ? g->gr_m[0]->me_actor->ra_pid : 0;
	smarm__reg_rdunlock(r);
	return g != NULL ? 0 : SMARM_ENOMEMBER;
}

int smarm__group_dispatch(struct smarm_node *n, const char *name, size_t len,
			  const struct smarm_msgtype *t, const void *elem)
{
	struct smarm__reg *r = smarm__reg_of(n);
	struct reg_group *g;
	struct smarm__reg_mbox *mb;
	smarm_chan_t *h = NULL;
	smarm__reg_rdlock(r);
	g = group_find(r, name, len);
	if (g == NULL) {
		smarm__reg_rdunlock(r);
		return SMARM_ENOMEMBER;
	}
	if ((mb = smarm__reg_mbox_find(g->gr_m[0]->me_actor, t)) != NULL)
		h = mb->mb_h;
	smarm__reg_rdunlock(r);
	return h != NULL ? smarm__reg_chan_send(h, elem) : SMARM_ENOCHAN;
}
