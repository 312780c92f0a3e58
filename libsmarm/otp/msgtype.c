/* SPDX-License-Identifier: MIT */
/*
 * msgtype.c - message types: process-wide interned (name, element size,
 * destructor) triples, like Erlang atoms. A type is a cell of its own
 * handle pool (core/handle.h), so the smarm_msgtype_t * a caller holds is
 * a handle that is decoded, never dereferenced: a wild value is
 * SMARM_EINVAL, not a crash. Types are never freed, so a decoded handle
 * stays valid for the rest of the process without a reference count.
 *
 * Ownership: the type table and the pool are process-wide (types are
 * the same in every node, as channels are); no type is ever freed.
 * Locking: type_lock (REG rank; never held with a node's registry lock)
 * guards the hash chains and definition. A type's fields are written
 * once before its handle is published and are constant after.
 * Invariants: INV-1 one name, one type: a name is in the table at most
 * once (definition looks and inserts under type_lock). INV-2 a published
 * type's fields never change.
 * See: docs/architecture/registry.md.
 */
#include "reg.h"

/*
 * 8 MiB of address space, reserved, not committed: 65536 types of 128
 * bytes at most.
 */
#define TYPE_MAX 65536
static struct smarm__hpool type_pool =
	SMARM__HPOOL_INIT(sizeof(struct smarm_msgtype), (size_t)128 * TYPE_MAX);
_Static_assert(sizeof(struct smarm_msgtype) <= 128, "a type fits a cell");
_Static_assert(offsetof(struct smarm_msgtype, hdr) == 0,
	       "the handle header is the cell's first word");

#define TYPE_BUCKETS 256 /* a fixed table: definitions are rare */
static smarm__lock_t type_lock;
static struct smarm_msgtype *type_tab[TYPE_BUCKETS];

/* Under type_lock: the type called name, or NULL. */
static struct smarm_msgtype *type_find(const char *name, size_t len,
				       uint64_t hash)
{
	for (struct smarm_msgtype *t = type_tab[hash % TYPE_BUCKETS]; t != NULL;
	     t = t->mt_next)
		if (t->mt_hash == hash && strncmp(t->mt_name, name, len) == 0 &&
		    t->mt_name[len] == '\0')
			return t;
	return NULL;
}

int smarm__msgtype_define(const char *name, size_t len, size_t size,
			  smarm_elem_free_cb free_cb,
			  const smarm_msgtype_t **out)
{
	uint64_t hash = smarm__name_hash(name, len);
	struct smarm_msgtype *t;
	void *cell;
	uint64_t h;
	int rc = 0;

	smarm__lock(&type_lock, SMARM__RANK_REG);
	t = type_find(name, len, hash);
	if (t != NULL) {
		if (t->mt_size != size || t->mt_free != free_cb)
			rc = SMARM_EEXIST;
		else
			*out = (const smarm_msgtype_t *)(uintptr_t)
				atomic_load_explicit(&t->hdr.hc_self,
						     memory_order_relaxed);
		smarm__unlock(&type_lock, SMARM__RANK_REG);
		return rc;
	}
	rc = smarm__hpool_alloc(&type_pool, &cell, &h);
	if (rc != 0) {
		smarm__unlock(&type_lock, SMARM__RANK_REG);
		return rc;
	}
	t = cell;
	t->mt_hash = hash;
	t->mt_size = size;
	t->mt_free = free_cb;
	memcpy(t->mt_name, name, len);
	t->mt_name[len] = '\0';
	t->mt_next = type_tab[hash % TYPE_BUCKETS];
	type_tab[hash % TYPE_BUCKETS] = t;
	smarm__handle_publish(t, h); /* INV-2: fields are final */
	smarm__unlock(&type_lock, SMARM__RANK_REG);
	*out = (const smarm_msgtype_t *)(uintptr_t)h;
	return 0;
}

int smarm__msgtype_decode(const smarm_msgtype_t *h,
			  const struct smarm_msgtype **t)
{
	void *c;
	/* A forged value inside the region is no type either. */
	if (smarm__handle_decode(&type_pool, h, &c) != 0)
		return SMARM_EINVAL;
	*t = c;
	return 0;
}
