/* SPDX-License-Identifier: MIT */
/*
 * reg_api.c - the public calls of message types, mailboxes, names and
 * process groups (smarm/otp.h): each validates its arguments (names,
 * type handles, channel handles, actor context), finds the node and
 * calls msgtype.c, registry.c or group.c.
 *
 * Ownership: nothing here outlives a call. Locking: none taken here.
 * See: docs/embedding.md (OTP layer).
 */
#include "reg.h"

/* The calling actor's node and pid, or SMARM_ENOTACTOR. */
static int self_of(struct smarm_node **n, uint64_t *self)
{
	*n = smarm__current_node();
	if (*n == NULL)
		return SMARM_ENOTACTOR;
	if (self != NULL)
		*self = smarm_actor_self().id;
	return 0;
}

/* ---------------------------------------------------------- msgtypes */

int smarm_msgtype_define(const char *name, size_t elem_size,
			 smarm_elem_free_cb free_cb,
			 const smarm_msgtype_t **out)
{
	size_t len;
	if (out == NULL || smarm__name_check(name, &len) != 0 ||
	    elem_size == 0 || elem_size > SMARM__CHAN_MAX_ELEM)
		return SMARM_EINVAL;
	return smarm__msgtype_define(name, len, elem_size, free_cb, out);
}

const char *smarm_msgtype_name(const smarm_msgtype_t *type)
{
	const struct smarm_msgtype *t;
	return smarm__msgtype_decode(type, &t) == 0 ? t->mt_name : NULL;
}

size_t smarm_msgtype_size(const smarm_msgtype_t *type)
{
	const struct smarm_msgtype *t;
	return smarm__msgtype_decode(type, &t) == 0 ? t->mt_size : 0;
}

/* --------------------------------------------------------- mailboxes */

int smarm_mailbox_publish(const smarm_msgtype_t *type, smarm_chan_t *h)
{
	const struct smarm_msgtype *t;
	struct smarm_node *n;
	smarm_chan_t *ch;
	uint64_t self;
	int rc = self_of(&n, &self);
	if (rc != 0)
		return rc;
	if (smarm__msgtype_decode(type, &t) != 0)
		return SMARM_EINVAL;
	rc = smarm__chan_decode(h, &ch);
	if (rc != 0)
		return rc;
	/*
	 * Constant per tenant. Read before the channel lock: if the cell
	 * was freed and reused since the decode, the sender dup checks the
	 * handle under the lock and refuses (SMARM_ESTATE).
	 */
	if (ch->esz != t->mt_size || ch->efree != t->mt_free)
		return SMARM_EINVAL;
	return smarm__reg_publish(n, self, t, ch, h);
}

int smarm_mailbox_unpublish(const smarm_msgtype_t *type)
{
	const struct smarm_msgtype *t;
	struct smarm_node *n;
	uint64_t self;
	int rc = self_of(&n, &self);
	if (rc != 0)
		return rc;
	if (smarm__msgtype_decode(type, &t) != 0)
		return SMARM_EINVAL;
	return smarm__reg_unpublish(n, self, t);
}

/* ------------------------------------------------------------- sends */

static int send_pid(struct smarm_node *n, smarm_pid_t pid,
		    const smarm_msgtype_t *type, const void *elem)
{
	const struct smarm_msgtype *t;
	if (elem == NULL || smarm__msgtype_decode(type, &t) != 0)
		return SMARM_EINVAL;
	if (pid.id == 0)
		return SMARM_ENOPROC;
	return smarm__reg_send(n, pid.id, t, elem);
}

static int send_name(struct smarm_node *n, const char *name,
		     const smarm_msgtype_t *type, const void *elem)
{
	const struct smarm_msgtype *t;
	size_t len;
	if (elem == NULL || smarm__name_check(name, &len) != 0 ||
	    smarm__msgtype_decode(type, &t) != 0)
		return SMARM_EINVAL;
	return smarm__reg_send_name(n, name, len, t, elem);
}

int smarm_send(smarm_pid_t pid, const smarm_msgtype_t *type, const void *elem)
{
	struct smarm_node *n = smarm__current_node();
	return n != NULL ? send_pid(n, pid, type, elem) : SMARM_ENOTACTOR;
}

int smarm_send_name(const char *name, const smarm_msgtype_t *type,
		    const void *elem)
{
	struct smarm_node *n = smarm__current_node();
	return n != NULL ? send_name(n, name, type, elem) : SMARM_ENOTACTOR;
}

int smarm_node_send(smarm_node_t *node, smarm_pid_t pid,
		    const smarm_msgtype_t *type, const void *elem)
{
	return node != NULL ? send_pid(node, pid, type, elem) : SMARM_EINVAL;
}

int smarm_node_send_name(smarm_node_t *node, const char *name,
			 const smarm_msgtype_t *type, const void *elem)
{
	return node != NULL ? send_name(node, name, type, elem) : SMARM_EINVAL;
}

/* ------------------------------------------------------------- names */

int smarm_register(const char *name, smarm_pid_t *holder)
{
	struct smarm_node *n;
	uint64_t self, other = 0;
	size_t len;
	int rc = self_of(&n, &self);
	if (rc != 0)
		return rc;
	if (smarm__name_check(name, &len) != 0)
		return SMARM_EINVAL;
	rc = smarm__reg_register(n, self, name, len, &other);
	if (holder != NULL)
		holder->id = rc == SMARM_EEXIST ? other : 0;
	return rc;
}

int smarm_register_pid(const char *name, smarm_pid_t pid, smarm_pid_t *holder)
{
	struct smarm_node *n;
	uint64_t other = 0;
	size_t len;
	int rc = self_of(&n, NULL);
	if (holder != NULL)
		holder->id = 0;
	if (rc != 0)
		return rc;
	if (smarm__name_check(name, &len) != 0 || pid.id == 0)
		return SMARM_EINVAL;
	rc = smarm__reg_register(n, pid.id, name, len, &other);
	if (holder != NULL)
		holder->id = rc == SMARM_EEXIST ? other : 0;
	return rc;
}

int smarm_unregister(const char *name)
{
	struct smarm_node *n;
	size_t len;
	int rc = self_of(&n, NULL);
	if (rc != 0)
		return rc;
	if (smarm__name_check(name, &len) != 0)
		return SMARM_EINVAL;
	return smarm__reg_unregister(n, name, len);
}

static int whereis(struct smarm_node *n, const char *name, smarm_pid_t *pid)
{
	size_t len;
	if (pid == NULL || smarm__name_check(name, &len) != 0)
		return SMARM_EINVAL;
	return smarm__reg_whereis(n, name, len, &pid->id);
}

int smarm_whereis(const char *name, smarm_pid_t *pid)
{
	struct smarm_node *n = smarm__current_node();
	return n != NULL ? whereis(n, name, pid) : SMARM_ENOTACTOR;
}

int smarm_node_whereis(smarm_node_t *node, const char *name, smarm_pid_t *pid)
{
	return node != NULL ? whereis(node, name, pid) : SMARM_EINVAL;
}

int smarm_names_of(smarm_pid_t pid, char (*names)[SMARM_NAME_MAX + 1],
		   size_t cap, size_t *n)
{
	struct smarm_node *node;
	int rc = self_of(&node, NULL);
	if (rc != 0)
		return rc;
	if (n == NULL || (names == NULL && cap > 0))
		return SMARM_EINVAL;
	*n = 0;
	if (pid.id == 0)
		return SMARM_ENOPROC;
	return smarm__reg_names_of(node, pid.id, names, cap, n);
}

/* ------------------------------------------------------------ groups */

/* The common prologue: actor context and a valid group name. */
static int group_args(const char *group, struct smarm_node **n, size_t *len)
{
	int rc = self_of(n, NULL);
	if (rc != 0)
		return rc;
	return smarm__name_check(group, len);
}

int smarm_group_join(const char *group, smarm_pid_t pid, bool *added)
{
	struct smarm_node *n;
	size_t len;
	bool add = false;
	int rc = group_args(group, &n, &len);
	if (rc != 0)
		return rc;
	rc = pid.id != 0 ? smarm__group_join(n, group, len, pid.id, &add)
			 : SMARM_ENOPROC;
	if (added != NULL)
		*added = add;
	return rc;
}

int smarm_group_leave(const char *group, smarm_pid_t pid)
{
	struct smarm_node *n;
	size_t len;
	int rc = group_args(group, &n, &len);
	if (rc != 0)
		return rc;
	return pid.id != 0 ? smarm__group_leave(n, group, len, pid.id)
			   : SMARM_ENOENT;
}

int smarm_group_members(const char *group, smarm_pid_t *buf, size_t cap,
			size_t *n)
{
	struct smarm_node *node;
	size_t len;
	int rc = group_args(group, &node, &len);
	if (rc != 0)
		return rc;
	if (n == NULL || (buf == NULL && cap > 0))
		return SMARM_EINVAL;
	return smarm__group_members(node, group, len, buf, cap, n);
}

int smarm_group_pick(const char *group, smarm_pid_t *pid)
{
	struct smarm_node *n;
	size_t len;
	int rc = group_args(group, &n, &len);
	if (rc != 0)
		return rc;
	if (pid == NULL)
		return SMARM_EINVAL;
	return smarm__group_pick(n, group, len, &pid->id);
}

int smarm_group_dispatch(const char *group, const smarm_msgtype_t *type,
			 const void *elem)
{
	const struct smarm_msgtype *t;
	struct smarm_node *n;
	size_t len;
	int rc = group_args(group, &n, &len);
	if (rc != 0)
		return rc;
	if (elem == NULL || smarm__msgtype_decode(type, &t) != 0)
		return SMARM_EINVAL;
	return smarm__group_dispatch(n, group, len, t, elem);
}
