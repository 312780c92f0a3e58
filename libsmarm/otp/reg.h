/* SPDX-License-Identifier: MIT */
/*
 * reg.h - internal interface of the OTP layer's registry half: message
 * types (msgtype.c), a node's registry of names and mailboxes
 * (registry.c), process groups (group.c), as reg_api.c and the other
 * files of this half use them. It sits on msg and core (msg.h, core.h).
 *
 * Ownership: message types are process-wide and never freed. A node's
 * registry (struct smarm__reg) is its SMARM__SUB_REG per-node state,
 * from ss_open to ss_close. An actor's records (names, mailboxes,
 * memberships) hang off its SMARM__SUB_REG per-actor state (struct
 * smarm__reg_actor), created on its first use, freed by its exit hook.
 * Locking: rg_rw (REG rank) guards every table and record of a node.
 * See registry.c for the protocol.
 * See: docs/architecture/registry.md.
 */
#ifndef SMARM_OTP_REG_H
#define SMARM_OTP_REG_H

#include "../core/core.h"
#include "../msg/msg.h"

#include <stdatomic.h>
#include <string.h>

/* ---- msgtype.c ---- */

/* A message type: a cell of the type pool (handle.h), never freed. */
struct smarm_msgtype {
	struct smarm__hcell hdr;	  /* handle header: first */
	struct smarm_msgtype *mt_next;	  /* hash chain (type table lock) */
	uint64_t mt_hash;		  /* of the name (constant) */
	size_t mt_size;			  /* element size (constant) */
	smarm_elem_free_cb mt_free;	  /* destructor (constant) */
	char mt_name[SMARM_NAME_MAX + 1]; /* NUL-terminated (constant) */
};

int smarm__msgtype_define(const char *name, size_t len, size_t size,
			  smarm_elem_free_cb free_cb,
			  const smarm_msgtype_t **out);

/* The type handle h names: 0, or SMARM_EINVAL (no message type). */
int smarm__msgtype_decode(const smarm_msgtype_t *h,
			  const struct smarm_msgtype **t);

/*
 * A name's length: 0 and *len in 1..SMARM_NAME_MAX, or SMARM_EINVAL
 * (NULL, empty, too long).
 */
static inline int smarm__name_check(const char *name, size_t *len)
{
	size_t l;
	if (name == NULL)
		return SMARM_EINVAL;
	l = strnlen(name, SMARM_NAME_MAX + 1);
	if (l == 0 || l > SMARM_NAME_MAX)
		return SMARM_EINVAL;
	*len = l;
	return 0;
}

/*
 * A name's hash: eight bytes at a time (a name is at most 63), each word
 * mixed by a multiply and a shift; the send path hashes once per send.
 */
static inline uint64_t smarm__name_hash(const char *s, size_t len)
{
	uint64_t h = len * 0x9e3779b97f4a7c15ull, w = 0;
	size_t i = 0;
	if (len >= 8) {
		for (; i + 8 < len; i += 8) {
			memcpy(&w, s + i, 8);
			h = (h ^ w) * 0xff51afd7ed558ccdull;
			h ^= h >> 29;
		}
		memcpy(&w, s + len - 8, 8); /* the last 8, overlapping */
	} else {
		for (; i < len; i++)
			w |= (uint64_t)(unsigned char)s[i] << (8 * i);
	}
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

/*
 * Do a and b, both len bytes long, hold the same bytes? Word-wise, like
 * smarm__name_hash (a libc memcmp call costs more than a short name).
 */
static inline bool smarm__name_eq(const char *a, const char *b, size_t len)
{
	uint64_t x, y;
	if (len < 8) {
		for (size_t i = 0; i < len; i++)
			if (a[i] != b[i])
				return false;
		return true;
	}
	for (size_t i = 0; i + 8 < len; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return false;
	}
	memcpy(&x, a + len - 8, 8); /* the last 8, overlapping */
	memcpy(&y, b + len - 8, 8);
	return x == y;
}

/* ---- registry.c: the tables ---- */

/*
 * A chained hash table of intrusive entries, keyed by a 64-bit hash
 * the caller computes (and compares the key itself). Grows by doubling;
 * an insert never fails (a failed growth keeps the old buckets).
 */
struct smarm__htab_node {
	struct smarm__htab_node *hn_next; /* bucket chain */
	uint64_t hn_hash;		  /* the entry's hash */
};

struct smarm__htab {
	struct smarm__htab_node **ht_b; /* buckets */
	size_t ht_mask;			/* buckets - 1 (a power of two) */
	size_t ht_n;			/* entries */
};

/* Empty buckets (0 or SMARM_ENOMEM); freed with free(t->ht_b). */
int smarm__htab_init(struct smarm__htab *t);
/* Forget every entry (the entries themselves are the caller's). */
void smarm__htab_clear(struct smarm__htab *t);
void smarm__htab_insert(struct smarm__htab *t, struct smarm__htab_node *e);
void smarm__htab_remove(struct smarm__htab *t, struct smarm__htab_node *e);

static inline struct smarm__htab_node *
smarm__htab_first(const struct smarm__htab *t, uint64_t hash)
{
	return t->ht_b[hash & t->ht_mask];
}

/* A circular doubly linked list; the head is a sentinel. */
struct smarm__rlist {
	struct smarm__rlist *l_prev, *l_next;
};

static inline void smarm__rlist_init(struct smarm__rlist *h)
{
	h->l_prev = h->l_next = h;
}

static inline void smarm__rlist_append(struct smarm__rlist *h,
				       struct smarm__rlist *e)
{
	e->l_prev = h->l_prev;
	e->l_next = h;
	h->l_prev->l_next = e;
	h->l_prev = e;
}

static inline void smarm__rlist_remove(struct smarm__rlist *e)
{
	e->l_prev->l_next = e->l_next;
	e->l_next->l_prev = e->l_prev;
	e->l_prev = e->l_next = e;
}

#define SMARM__CONTAINER(p, type, member)                                      \
	((type *)(void *)((char *)(p)-offsetof(type, member)))

/*
 * A send by name resolved recently on one worker (registry.c, "Resolve
 * cache"): name and type led to the mailbox handle rh_h while the
 * registry's removal count was rh_gen. Only its worker reads or writes
 * it; rh_gen 0 is an empty entry.
 */
struct smarm__reg_hit {
	uint64_t rh_gen;  /* rg_gen when resolved */
	uint64_t rh_hash; /* smarm__name_hash of the name */
	const struct smarm_msgtype *rh_type;
	smarm_chan_t *rh_h; /* the mailbox's channel handle */
	size_t rh_len;	    /* strlen(rh_name) */
	char rh_name[SMARM_NAME_MAX + 1];
};

#define SMARM__REG_HITS 4 /* entries per worker, a power of two */

/* One worker's resolve cache, on lines of its own. */
struct smarm__reg_hits {
	struct smarm__reg_hit rh[SMARM__REG_HITS];
} __attribute__((aligned(64)));

/* A node's registry (SMARM__SUB_REG per-node state). */
struct smarm__reg {
	smarm__rwlock_t rg_rw;	      /* REG rank: everything below and every
					 record it reaches */
	struct smarm__htab rg_names;  /* smarm__reg_name by name */
	struct smarm__htab rg_actors; /* smarm__reg_actor by pid, those
					 that ever held a record */
	struct smarm__htab rg_groups; /* smarm__reg_group by name */
	int64_t rg_nnames, rg_nmbox, rg_nmemb; /* stats (written under the
						  write lock, read relaxed) */
	struct smarm__reg_hits *rg_hits;       /* one per worker (constant) */
	struct smarm_node *rg_node; /* the node it belongs to (constant) */
	/*
	 * Removals of a name binding or a mailbox so far, plus 1: written
	 * under the write lock (release), read by the resolve cache with
	 * no lock. Its own line: senders poll it, only removals write it.
	 */
	_Alignas(64) uint64_t rg_gen;
};

/*
 * An actor's records (SMARM__SUB_REG per-actor state). Lists under rg_rw;
 * ra_pid constant.
 */
struct smarm__reg_actor {
	struct smarm__htab_node ra_h;  /* in rg_actors while ra_in */
	uint64_t ra_pid;	       /* the actor */
	bool ra_in;		       /* in rg_actors */
	struct smarm__rlist ra_names;  /* smarm__reg_name, registration order */
	struct smarm__rlist ra_mboxes; /* smarm__reg_mbox */
	struct smarm__rlist ra_members; /* smarm__reg_member */
};

/*
 * A published mailbox: the channel handle whose sender reference the
 * runtime holds, given back (outside every lock) when the record is
 * removed. A send copies the handle out under the read lock and sends
 * after dropping it: the handle is generation-checked, so a channel
 * that was closed or freed meanwhile is refused, never touched.
 */
struct smarm__reg_mbox {
	struct smarm__rlist mb_link;	     /* in ra_mboxes (rg_rw) */
	const struct smarm_msgtype *mb_type; /* constant */
	smarm_chan_t *mb_h;		     /* the channel's handle */
	smarm_chan_t *mb_ch;		     /* its cell */
};

static inline void smarm__reg_rdlock(struct smarm__reg *r)
{
	smarm__rw_rdlock(&r->rg_rw, SMARM__RANK_REG);
}

static inline void smarm__reg_rdunlock(struct smarm__reg *r)
{
	smarm__rw_rdunlock(&r->rg_rw, SMARM__RANK_REG);
}

static inline void smarm__reg_wrlock(struct smarm__reg *r)
{
	smarm__rw_wrlock(&r->rg_rw, SMARM__RANK_REG);
}

static inline void smarm__reg_wrunlock(struct smarm__reg *r)
{
	smarm__rw_wrunlock(&r->rg_rw, SMARM__RANK_REG);
}

static inline struct smarm__reg *smarm__reg_of(const struct smarm_node *n)
{
	return smarm__node_sub(n, SMARM__SUB_REG);
}

extern const struct smarm__subsys smarm__reg_subsys;

/*
 * Run op on the live actor pid's records, under its cold lock and the
 * registry's write lock, creating its per-actor state first if it has
 * none. op must not block or call user code. Returns op's value,
 * SMARM_ENOPROC (pid names no live actor) or SMARM_ENOMEM.
 */
typedef int (*smarm__reg_op)(struct smarm__reg *r, struct smarm__reg_actor *ra,
			     void *arg);
int smarm__reg_update(struct smarm_node *n, uint64_t pid, smarm__reg_op op,
		      void *arg);

/* Under rg_rw: the records of pid, or NULL if it never had one. */
struct smarm__reg_actor *smarm__reg_actor_find(const struct smarm__reg *r,
					       uint64_t pid);

/* Under rg_rw: ra's mailbox for t, or NULL. */
struct smarm__reg_mbox *smarm__reg_mbox_find(const struct smarm__reg_actor *ra,
					     const struct smarm_msgtype *t);

/* No lock held: give mb's sender reference back and free it. */
void smarm__reg_mbox_free(struct smarm__reg_mbox *mb);

/*
 * No lock held: send elem through a mailbox's channel handle h, copied
 * out under the read lock. 0, SMARM_ECLOSED (closed or freed since) or
 * SMARM_ENOMEM; elem untouched on error.
 */
int smarm__reg_chan_send(smarm_chan_t *h, const void *elem);

/* Is pid a live actor of n? (No lock held; takes its cold lock.) */
bool smarm__reg_alive(struct smarm_node *n, uint64_t pid);

/* registry.c: the calls behind reg_api.c (arguments validated). */
int smarm__reg_publish(struct smarm_node *n, uint64_t self,
		       const struct smarm_msgtype *t, smarm_chan_t *ch,
		       smarm_chan_t *h);
int smarm__reg_unpublish(struct smarm_node *n, uint64_t self,
			 const struct smarm_msgtype *t);
int smarm__reg_send(struct smarm_node *n, uint64_t pid,
		    const struct smarm_msgtype *t, const void *elem);
/*
 * The handle of pid's mailbox for t now (no reference taken: send
 * through it with smarm__reg_chan_send, which refuses a channel closed
 * or freed since): 0, or SMARM_ENOCHAN (no such mailbox, or no such
 * live actor). For a sender that sends to one actor many times (a
 * gen_server client) and would otherwise look it up at each send.
 */
int smarm__reg_mailbox_of(struct smarm_node *n, uint64_t pid,
			  const struct smarm_msgtype *t, smarm_chan_t **h);
int smarm__reg_send_name(struct smarm_node *n, const char *name, size_t len,
			 const struct smarm_msgtype *t, const void *elem);
int smarm__reg_register(struct smarm_node *n, uint64_t self, const char *name,
			size_t len, uint64_t *holder);
int smarm__reg_unregister(struct smarm_node *n, const char *name, size_t len);
int smarm__reg_whereis(struct smarm_node *n, const char *name, size_t len,
		       uint64_t *pid);
int smarm__reg_names_of(struct smarm_node *n, uint64_t pid,
			char (*names)[SMARM_NAME_MAX + 1], size_t cap,
			size_t *count);

/* ---- group.c ---- */

/* Under the write lock: take ra out of every group (its exit hook). */
void smarm__group_leave_all(struct smarm__reg *r, struct smarm__reg_actor *ra);
/* ss_close: free whatever groups are left. */
void smarm__group_fini(struct smarm__reg *r);

int smarm__group_join(struct smarm_node *n, const char *name, size_t len,
		      uint64_t pid, bool *added);
int smarm__group_leave(struct smarm_node *n, const char *name, size_t len,
		       uint64_t pid);
int smarm__group_members(struct smarm_node *n, const char *name, size_t len,
			 smarm_pid_t *buf, size_t cap, size_t *count);
int smarm__group_pick(struct smarm_node *n, const char *name, size_t len,
		      uint64_t *pid);
int smarm__group_dispatch(struct smarm_node *n, const char *name, size_t len,
			  const struct smarm_msgtype *t, const void *elem);

#endif /* SMARM_OTP_REG_H */
