/* SPDX-License-Identifier: MIT */
/*
 * registry.c - a node's registry: names bound to actors, the mailboxes
 * (one published channel per actor and message type) that smarm_send
 * reaches, the SMARM__SUB_REG subsystem (per-node tables, per-actor
 * records and the exit hook that removes them), and the hash table and
 * the send path that group.c shares.
 *
 * Glossary.
 *   records  what an actor owns here: its names, mailboxes and group
 *            memberships, listed in its per-actor state (struct
 *            smarm__reg_actor), which the actor table finds by full pid.
 *   resolve  name -> holder's records -> mailbox for a type, under the
 *            read lock; the send itself runs after the lock is dropped.
 *   gen      rg_gen, the count of removals (a name unbound, a mailbox
 *            withdrawn or replaced) plus 1: what a cached resolution
 *            is checked against.
 *
 * Design. Every record is created through smarm__reg_update, which runs
 * under the target actor's cold lock (smarm__actor_ext_update: the actor
 * is alive, and state it attaches reaches its exit hook exactly once,
 * actor.c INV-3) and, inside it, the registry's write lock. The exit
 * hook (id SMARM__SUB_REG, before the OTP subsystem's monitors and
 * links) removes every record of the dying actor under the write lock.
 * So a record exists only for an actor that has not passed its exit
 * hook, and nothing is found bound to a dead pid, with no pruning on
 * lookup. Each holder's name label (core/subsys.h: what a fatal fault
 * report names) is its oldest name, rewritten under the write lock as
 * its first name binds or unbinds. Reads (sends, whereis, members) take
 * the lock shared (lock.h's
 * reader-writer lock: one atomic add and one subtract): senders run in
 * parallel and only registration, publication, membership changes and
 * deaths take it exclusively (writers are preferred, so a stream of
 * senders cannot starve a death). A send resolves the mailbox and
 * copies its channel handle out under the read lock, drops the lock,
 * then sends through the handle: no channel is sent to under the
 * registry lock (the send may wake and enqueue), and a mailbox removed
 * meanwhile is harmless, since the handle is generation-checked: the
 * channel is still open (delivered, as if the send came first), closed
 * (SMARM_ECLOSED) or freed (refused, never touched). A send by name
 * from a worker first tries that worker's resolve cache (below, at
 * smarm__reg_send_name), which takes no lock while no binding or
 * mailbox was removed since it resolved.
 * Rejected: one mutex (serialises every sender, a spinning hot spot at
 * four workers); dup/free of a channel sender per send (two channel-lock
 * round trips per message); a reference count on the mailbox record
 * (two more atomic operations per send for what the handle's generation
 * check already gives).
 *
 * Ownership: the registry belongs to the node (ss_open..ss_close); an
 * actor's records to its per-actor state (created by the first update,
 * freed by its exit hook); a mailbox record holds a runtime sender
 * reference (smarm__chan_sender_hold: the owner cannot free it), given
 * back when the record is removed.
 * Locking: rg_rw (REG rank) guards the three tables, every record's
 * links and the stats; it is taken under a cold lock (SLOT rank) by
 * updates and never around a channel call.
 * Invariants:
 *   INV-1 every record belongs to an actor that has not run its
 *         SMARM__SUB_REG exit hook (created under its cold lock while it
 *         is alive; removed by that hook).
 *   INV-2 a name is bound at most once (rg_names has one entry per name,
 *         looked up and inserted under the write lock).
 *   INV-3 an actor has at most one mailbox per message type.
 *   INV-4 no channel call and no free of a sender runs under rg_rw.
 *   INV-5 a send uses a channel handle copied under the read lock; the
 *         handle may name a channel freed since (handle.h: refused).
 *   INV-6 a resolve cache entry is used only while rg_gen equals the
 *         count it was filled at: every removal of a name binding or a
 *         mailbox bumps rg_gen under the write lock (gen_bump), so an
 *         entry in use names what the tables still say.
 * See: docs/architecture/registry.md.
 */
#include "reg.h"
#include "sig.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ hash table */

#define HTAB_INIT 64 /* buckets of a fresh table */

int smarm__htab_init(struct smarm__htab *t)
{
	t->ht_b = calloc(HTAB_INIT, sizeof *t->ht_b);
	if (t->ht_b == NULL)
		return SMARM_ENOMEM;
	t->ht_mask = HTAB_INIT - 1;
	t->ht_n = 0;
	return 0;
}

/* Double the buckets; on ENOMEM keep the old ones (chains grow). */
static void htab_grow(struct smarm__htab *t)
{
	size_t nb = (t->ht_mask + 1) * 2;
	struct smarm__htab_node **b = calloc(nb, sizeof *b);
	if (b == NULL)
		return;
	for (size_t i = 0; i <= t->ht_mask; i++) {
		struct smarm__htab_node *e = t->ht_b[i], *next;
		for (; e != NULL; e = next) {
			next = e->hn_next;
			e->hn_next = b[e->hn_hash & (nb - 1)];
			b[e->hn_hash & (nb - 1)] = e;
		}
	}
	free(t->ht_b);
	t->ht_b = b;
	t->ht_mask = nb - 1;
}

void smarm__htab_clear(struct smarm__htab *t)
{
	memset(t->ht_b, 0, (t->ht_mask + 1) * sizeof *t->ht_b);
	t->ht_n = 0;
}

void smarm__htab_insert(struct smarm__htab *t, struct smarm__htab_node *e)
{
	struct smarm__htab_node **b;
	if (t->ht_n >= t->ht_mask + 1)
		htab_grow(t);
	b = &t->ht_b[e->hn_hash & t->ht_mask];
	e->hn_next = *b;
	*b = e;
	t->ht_n++;
}

void smarm__htab_remove(struct smarm__htab *t, struct smarm__htab_node *e)
{
	struct smarm__htab_node **p = &t->ht_b[e->hn_hash & t->ht_mask];
	while (*p != e) {
		if (SMARM_NEVER(*p == NULL))
			return;
		p = &(*p)->hn_next;
	}
	*p = e->hn_next;
	e->hn_next = NULL;
	t->ht_n--;
}

/* ---------------------------------------------------------------- records */

/* A bound name: in rg_names and in its holder's ra_names. */
struct reg_name {
	struct smarm__htab_node nm_h;	   /* in rg_names */
	struct smarm__rlist nm_link;	   /* in the holder's ra_names */
	struct smarm__reg_actor *nm_owner; /* the holder */
	size_t nm_len;			   /* strlen(nm_name) */
	char nm_name[SMARM_NAME_MAX + 1];
};

static uint64_t pid_hash(uint64_t pid)
{
	return pid * 0x9e3779b97f4a7c15ull;
}

struct smarm__reg_actor *smarm__reg_actor_find(const struct smarm__reg *r,
					       uint64_t pid)
{
	uint64_t h = pid_hash(pid);
	for (struct smarm__htab_node *e = smarm__htab_first(&r->rg_actors, h);
	     e != NULL; e = e->hn_next) {
		struct smarm__reg_actor *ra =
			SMARM__CONTAINER(e, struct smarm__reg_actor, ra_h);
		if (ra->ra_pid == pid)
			return ra;
	}
	return NULL;
}

struct smarm__reg_mbox *smarm__reg_mbox_find(const struct smarm__reg_actor *ra,
					     const struct smarm_msgtype *t)
{
	for (struct smarm__rlist *l = ra->ra_mboxes.l_next; l != &ra->ra_mboxes;
	     l = l->l_next) {
		struct smarm__reg_mbox *mb =
			SMARM__CONTAINER(l, struct smarm__reg_mbox, mb_link);
		if (mb->mb_type == t)
			return mb;
	}
	return NULL;
}

/* Under rg_rw: the binding of name, whose hash is h, or NULL. */
static struct reg_name *name_find_h(const struct smarm__reg *r,
				    const char *name, size_t len, uint64_t h)
{
	for (struct smarm__htab_node *e = smarm__htab_first(&r->rg_names, h);
	     e != NULL; e = e->hn_next) {
		struct reg_name *nm =
			SMARM__CONTAINER(e, struct reg_name, nm_h);
		if (e->hn_hash == h && nm->nm_len == len &&
		    smarm__name_eq(nm->nm_name, name, len))
			return nm;
	}
	return NULL;
}

/* Under rg_rw: the binding of name, or NULL. */
static struct reg_name *name_find(const struct smarm__reg *r, const char *name,
				  size_t len)
{
	return name_find_h(r, name, len, smarm__name_hash(name, len));
}

/*
 * Under the write lock: a name binding or a mailbox was removed, so a
 * resolve cache entry may be wrong now (INV-6).
 */
static void gen_bump(struct smarm__reg *r)
{
	__atomic_store_n(&r->rg_gen, r->rg_gen + 1, __ATOMIC_RELEASE);
}

/* Under the write lock: take mb off its actor's list (freed later). */
static void mbox_unlink(struct smarm__reg *r, struct smarm__reg_mbox *mb)
{
	smarm__rlist_remove(&mb->mb_link);
	__atomic_store_n(&r->rg_nmbox, r->rg_nmbox - 1, __ATOMIC_RELAXED);
	gen_bump(r);
}

/*
 * Under the write lock, which orders the writes of the holder's name
 * label (core/subsys.h): its first name, the oldest it still holds, or
 * none.
 */
static void name_label(struct smarm__reg *r, struct smarm__reg_actor *ra,
		       bool make)
{
	const char *first = NULL;
	if (ra->ra_names.l_next != &ra->ra_names)
		first = SMARM__CONTAINER(ra->ra_names.l_next, struct reg_name,
					 nm_link)
				->nm_name;
	smarm__actor_label_put(r->rg_node, ra->ra_pid, SMARM__LABEL_NAME, first,
			       make);
}

/* Under the write lock: unbind nm and free it. */
static void name_drop(struct smarm__reg *r, struct reg_name *nm)
{
	bool was_first = nm->nm_owner->ra_names.l_next == &nm->nm_link;
	smarm__htab_remove(&r->rg_names, &nm->nm_h);
	smarm__rlist_remove(&nm->nm_link);
	if (was_first)
		name_label(r, nm->nm_owner, false);
	__atomic_store_n(&r->rg_nnames, r->rg_nnames - 1, __ATOMIC_RELAXED);
	gen_bump(r);
	free(nm);
}

void smarm__reg_mbox_free(struct smarm__reg_mbox *mb)
{
	/* INV-4: no lock held. Held, so the channel is still ours. */
	smarm__chan_sender_release(mb->mb_ch);
	free(mb);
}

int smarm__reg_chan_send(smarm_chan_t *h, const void *elem)
{
	/*
	 * Through the public entry (one more handle check): a third caller
	 * of smarm__chan_send would make link-time optimisation stop
	 * inlining it into smarm_chan_send, a cost every channel send pays.
	 * The handle may be stale by now (INV-5): the channel was freed
	 * (SMARM_ESTATE) or lost its last sender (SMARM_ECLOSED): for the
	 * sender both mean closed.
	 */
	int rc = smarm_chan_send(h, elem);
	return rc == SMARM_ESTATE ? SMARM_ECLOSED : rc;
}

static int noop(void **state, void *arg)
{
	(void)state;
	(void)arg;
	return 0;
}

bool smarm__reg_alive(struct smarm_node *n, uint64_t pid)
{
	int rc = smarm__actor_ext_update(n, pid, SMARM__SUB_REG, noop, NULL);
	return rc == 0 || rc == SMARM_ENOMEM; /* ENOMEM: live, no block */
}

/* ------------------------------------------------------------- updates */

#define REG_AGAIN 1 /* update: the state was just created, run again */

struct update {
	struct smarm__reg *u_r;
	uint64_t u_pid;
	smarm__reg_op u_op;
	void *u_arg;
	struct smarm__reg_actor *u_fresh; /* created by this round */
};

static int update_fn(void **state, void *arg)
{
	struct update *u = arg;
	struct smarm__reg_actor *ra = *state;
	int rc;
	if (ra == NULL) {
		/*
		 * First use: attach an empty state and go round again, so
		 * that the one allocation smarm__actor_ext_update may fail
		 * (its block) fails before any table changed.
		 */
		ra = calloc(1, sizeof *ra);
		if (ra == NULL)
			return SMARM_ENOMEM;
		ra->ra_pid = u->u_pid;
		ra->ra_h.hn_hash = pid_hash(u->u_pid);
		smarm__rlist_init(&ra->ra_names);
		smarm__rlist_init(&ra->ra_mboxes);
		smarm__rlist_init(&ra->ra_members);
		u->u_fresh = ra;
		*state = ra;
		return REG_AGAIN;
	}
	smarm__reg_wrlock(u->u_r);
	if (!ra->ra_in) {
		smarm__htab_insert(&u->u_r->rg_actors, &ra->ra_h);
		ra->ra_in = true;
	}
	rc = u->u_op(u->u_r, ra, u->u_arg);
	smarm__reg_wrunlock(u->u_r);
	return rc;
}

int smarm__reg_update(struct smarm_node *n, uint64_t pid, smarm__reg_op op,
		      void *arg)
{
	struct update u = { smarm__reg_of(n), pid, op, arg, NULL };
	int rc;
	/*
	 * Rounds repeat only while the state is new: the second finds it,
	 * unless the actor's exit hook took it in between (a dying actor),
	 * and then the actor is soon DONE (ENOPROC).
	 */
	do {
		u.u_fresh = NULL;
		rc = smarm__actor_ext_update(n, pid, SMARM__SUB_REG, update_fn,
					     &u);
		if (rc == SMARM_ENOMEM && u.u_fresh != NULL)
			free(u.u_fresh); /* created, never attached */
	} while (rc == REG_AGAIN);
	return rc;
}

/* ----------------------------------------------------------- mailboxes */

struct publish {
	struct smarm__reg_mbox *p_new;
	struct smarm__reg_mbox *p_old; /* replaced, to unref after */
};

static int publish_op(struct smarm__reg *r, struct smarm__reg_actor *ra,
		      void *arg)
{
	struct publish *p = arg;
	p->p_old = smarm__reg_mbox_find(ra, p->p_new->mb_type);
	if (p->p_old != NULL) /* INV-3: the new one replaces it */
		mbox_unlink(r, p->p_old);
	__atomic_store_n(&r->rg_nmbox, r->rg_nmbox + 1, __ATOMIC_RELAXED);
	smarm__rlist_append(&ra->ra_mboxes, &p->p_new->mb_link);
	return 0;
}

int smarm__reg_publish(struct smarm_node *n, uint64_t self,
		       const struct smarm_msgtype *t, smarm_chan_t *ch,
		       smarm_chan_t *h)
{
	struct publish p = { NULL, NULL };
	int rc;
	p.p_new = calloc(1, sizeof *p.p_new);
	if (p.p_new == NULL)
		return SMARM_ENOMEM;
	/* The runtime's reference: held, so the owner's sender_free
	 * cannot give it up (counted with the timers', chan.c INV-6). */
	rc = smarm__chan_sender_hold(ch, h);
	if (rc != 0) {
		free(p.p_new);
		return rc;
	}
	smarm__rlist_init(&p.p_new->mb_link);
	p.p_new->mb_type = t;
	p.p_new->mb_h = h;
	p.p_new->mb_ch = ch;
	rc = smarm__reg_update(n, self, publish_op, &p);
	if (rc != 0) {
		smarm__reg_mbox_free(p.p_new);
		return rc;
	}
	if (p.p_old != NULL)
		smarm__reg_mbox_free(p.p_old); /* INV-4: after the lock */
	return 0;
}

int smarm__reg_unpublish(struct smarm_node *n, uint64_t self,
			 const struct smarm_msgtype *t)
{
	struct smarm__reg *r = smarm__reg_of(n);
	struct smarm__reg_actor *ra;
	struct smarm__reg_mbox *mb = NULL;
	smarm__reg_wrlock(r);
	ra = smarm__reg_actor_find(r, self);
	if (ra != NULL)
		mb = smarm__reg_mbox_find(ra, t);
	if (mb != NULL)
		mbox_unlink(r, mb);
	smarm__reg_wrunlock(r);
	if (mb == NULL)
		return SMARM_ENOENT;
	smarm__reg_mbox_free(mb);
	return 0;
}

int smarm__reg_send(struct smarm_node *n, uint64_t pid,
		    const struct smarm_msgtype *t, const void *elem)
{
	struct smarm__reg *r = smarm__reg_of(n);
	struct smarm__reg_actor *ra;
	struct smarm__reg_mbox *mb = NULL;
	smarm_chan_t *h = NULL;
	smarm__reg_rdlock(r);
	ra = smarm__reg_actor_find(r, pid);
	if (ra != NULL && (mb = smarm__reg_mbox_find(ra, t)) != NULL)
		h = mb->mb_h;
	smarm__reg_rdunlock(r);
	if (h != NULL)
		return smarm__reg_chan_send(h, elem); /* INV-4 */
	/* Records exist only for live actors (INV-1); else ask the core. */
	if (ra != NULL || smarm__reg_alive(n, pid))
		return SMARM_ENOCHAN;
	return SMARM_ENOPROC;
}

int smarm__reg_mailbox_of(struct smarm_node *n, uint64_t pid,
			  const struct smarm_msgtype *t, smarm_chan_t **h)
{
	struct smarm__reg *r = smarm__reg_of(n);
	struct smarm__reg_actor *ra;
	struct smarm__reg_mbox *mb = NULL;
	*h = NULL;
	smarm__reg_rdlock(r);
	ra = smarm__reg_actor_find(r, pid);
	if (ra != NULL && (mb = smarm__reg_mbox_find(ra, t)) != NULL)
		*h = mb->mb_h;
	smarm__reg_rdunlock(r);
	return *h != NULL ? 0 : SMARM_ENOCHAN;
}

/*
 * Resolve cache. A send by name on a worker first looks in that
 * worker's few entries (by the name's hash) for the same name and type
 * resolved while the registry's removal count was what it is now: no
 * binding or mailbox was removed since, so the name still leads to that
 * mailbox (additions cannot change a resolution that succeeded), and
 * the send needs no lock and no table walk. A sender that learned of a
 * removal (a Down, a message, a return) reads the count it bumped, so
 * it re-resolves; a send racing a removal is ordered before it, as a
 * send that copied the handle under the read lock is. Misses resolve
 * under the read lock and fill the entry.
 */
int smarm__reg_send_name(struct smarm_node *n, const char *name, size_t len,
			 const struct smarm_msgtype *t, const void *elem)
{
	struct smarm__reg *r = smarm__reg_of(n);
	uint64_t hash = smarm__name_hash(name, len);
	int wi = smarm__worker_index(n);
	struct smarm__reg_hit *e = NULL;
	struct reg_name *nm;
	struct smarm__reg_mbox *mb;
	smarm_chan_t *h = NULL;
	if (wi >= 0) {
		e = &r->rg_hits[wi].rh[hash & (SMARM__REG_HITS - 1)];
		if (e->rh_gen ==
			    __atomic_load_n(&r->rg_gen, __ATOMIC_ACQUIRE) &&
		    e->rh_hash == hash && e->rh_type == t && e->rh_len == len &&
		    smarm__name_eq(e->rh_name, name, len))
			return smarm__reg_chan_send(e->rh_h, elem); /* INV-6 */
	}
	smarm__reg_rdlock(r);
	nm = name_find_h(r, name, len, hash);
	if (nm == NULL) {
		smarm__reg_rdunlock(r);
		return SMARM_ENONAME;
	}
	if ((mb = smarm__reg_mbox_find(nm->nm_owner, t)) != NULL) {
		h = mb->mb_h;
		if (e != NULL) { /* the count cannot move under the lock */
			e->rh_gen = r->rg_gen;
			e->rh_hash = hash;
			e->rh_type = t;
			e->rh_h = h;
			e->rh_len = len;
			memcpy(e->rh_name, name, len);
		}
	}
	smarm__reg_rdunlock(r);
	return h != NULL ? smarm__reg_chan_send(h, elem) : SMARM_ENOCHAN;
}

/* --------------------------------------------------------------- names */

struct reg_arg {
	const char *a_name;
	size_t a_len;
	uint64_t a_holder; /* EEXIST: the other holder */
};

static int register_op(struct smarm__reg *r, struct smarm__reg_actor *ra,
		       void *arg)
{
	struct reg_arg *a = arg;
	struct reg_name *nm = name_find(r, a->a_name, a->a_len);
	if (nm != NULL) {
		if (nm->nm_owner == ra)
			return 0;		    /* idempotent */
		a->a_holder = nm->nm_owner->ra_pid; /* alive: INV-1 */
		return SMARM_EEXIST;
	}
	nm = malloc(sizeof *nm);
	if (nm == NULL)
		return SMARM_ENOMEM;
	nm->nm_h.hn_hash = smarm__name_hash(a->a_name, a->a_len);
	nm->nm_owner = ra;
	nm->nm_len = a->a_len;
	memcpy(nm->nm_name, a->a_name, a->a_len);
	nm->nm_name[a->a_len] = '\0';
	smarm__htab_insert(&r->rg_names, &nm->nm_h); /* INV-2 */
	smarm__rlist_append(&ra->ra_names, &nm->nm_link);
	if (ra->ra_names.l_next == &nm->nm_link) /* its first: the label */
		name_label(r, ra, true); /* the holder's cold lock is held */
	__atomic_store_n(&r->rg_nnames, r->rg_nnames + 1, __ATOMIC_RELAXED);
	return 0;
}

int smarm__reg_register(struct smarm_node *n, uint64_t self, const char *name,
			size_t len, uint64_t *holder)
{
	struct reg_arg a = { name, len, 0 };
	int rc;
	/*
	 * Watchable before the name binds (no lock held), so no registered
	 * actor ends without its terminal record: a monitor set after its
	 * death learns how it ended, not NOPROC (signal half).
	 */
	rc = smarm__sig_mark_watchable(n, self);
	if (rc != 0)
		return rc;
	rc = smarm__reg_update(n, self, register_op, &a);
	*holder = a.a_holder;
	return rc;
}

int smarm__reg_unregister(struct smarm_node *n, const char *name, size_t len)
{
	struct smarm__reg *r = smarm__reg_of(n);
	struct reg_name *nm;
	smarm__reg_wrlock(r);
	nm = name_find(r, name, len);
	if (nm != NULL)
		name_drop(r, nm);
	smarm__reg_wrunlock(r);
	return nm != NULL ? 0 : SMARM_ENONAME;
}

int smarm__reg_whereis(struct smarm_node *n, const char *name, size_t len,
		       uint64_t *pid)
{
	struct smarm__reg *r = smarm__reg_of(n);
	struct reg_name *nm;
	smarm__reg_rdlock(r);
	nm = name_find(r, name, len);
	*pid = nm != NULL ? nm->nm_owner->ra_pid : 0;
	smarm__reg_rdunlock(r);
	return nm != NULL ? 0 : SMARM_ENONAME;
}

int smarm__reg_names_of(struct smarm_node *n, uint64_t pid,
			char (*names)[SMARM_NAME_MAX + 1], size_t cap,
			size_t *count)
{
	struct smarm__reg *r = smarm__reg_of(n);
	struct smarm__reg_actor *ra;
	size_t k = 0;
	smarm__reg_rdlock(r);
	ra = smarm__reg_actor_find(r, pid);
	if (ra != NULL) {
		for (struct smarm__rlist *l = ra->ra_names.l_next;
		     l != &ra->ra_names; l = l->l_next, k++) {
			struct reg_name *nm =
				SMARM__CONTAINER(l, struct reg_name, nm_link);
			if (k < cap)
				memcpy(names[k], nm->nm_name, nm->nm_len + 1);
		}
	}
	smarm__reg_rdunlock(r);
	*count = k;
	if (ra == NULL && !smarm__reg_alive(n, pid))
		return SMARM_ENOPROC;
	return 0;
}

/* ------------------------------------------------------------ subsystem */

static int reg_open(struct smarm_node *n, const struct smarm_config *cfg,
		    void **state)
{
	struct smarm__reg *r =
		aligned_alloc(_Alignof(struct smarm__reg), sizeof *r);
	size_t hits = (size_t)smarm__node_workers(n) * sizeof *r->rg_hits;
	(void)cfg;
	if (r == NULL)
		return SMARM_ENOMEM;
	memset(r, 0, sizeof *r);
	r->rg_gen = 1; /* 0 marks an empty resolve cache entry */
	r->rg_node = n;
	r->rg_hits = aligned_alloc(_Alignof(struct smarm__reg_hits), hits);
	if (r->rg_hits != NULL)
		memset(r->rg_hits, 0, hits);
	if (r->rg_hits == NULL || smarm__htab_init(&r->rg_names) != 0 ||
	    smarm__htab_init(&r->rg_actors) != 0 ||
	    smarm__htab_init(&r->rg_groups) != 0) {
		free(r->rg_names.ht_b);
		free(r->rg_actors.ht_b);
		free(r->rg_groups.ht_b);
		free(r->rg_hits);
		free(r);
		return SMARM_ENOMEM;
	}
	*state = r; /* rg_rw: all zero is unlocked */
	return 0;
}

/*
 * The exit hook: remove every record of the dying actor (INV-1), then,
 * with no lock held, give back its mailboxes' sender references (INV-4).
 */
static void reg_actor_exit(struct smarm__slot *s, uint64_t pid,
			   const struct smarm__exit *ex, void *state)
{
	struct smarm__reg_actor *ra = state;
	struct smarm__reg *r = smarm__reg_of(smarm__worker()->node);
	struct smarm__rlist gone;
	(void)s;
	(void)ex;
	SMARM_ASSERT(ra->ra_pid == pid);
	(void)pid;
	smarm__rlist_init(&gone);
	smarm__reg_wrlock(r);
	while (ra->ra_names.l_next != &ra->ra_names)
		name_drop(r, SMARM__CONTAINER(ra->ra_names.l_next,
					      struct reg_name, nm_link));
	while (ra->ra_mboxes.l_next != &ra->ra_mboxes) {
		struct smarm__rlist *l = ra->ra_mboxes.l_next;
		mbox_unlink(r, SMARM__CONTAINER(l, struct smarm__reg_mbox,
						mb_link));
		smarm__rlist_append(&gone, l);
	}
	smarm__group_leave_all(r, ra);
	if (ra->ra_in)
		smarm__htab_remove(&r->rg_actors, &ra->ra_h);
	smarm__reg_wrunlock(r);
	while (gone.l_next != &gone) {
		struct smarm__rlist *l = gone.l_next;
		smarm__rlist_remove(l);
		smarm__reg_mbox_free(
			SMARM__CONTAINER(l, struct smarm__reg_mbox, mb_link));
	}
	free(ra);
}

/* No actor exists any more: every exit hook ran, the tables are empty. */
static void reg_close(struct smarm_node *n, void *state)
{
	struct smarm__reg *r = state;
	(void)n;
	SMARM_ASSERT(r->rg_names.ht_n == 0 && r->rg_actors.ht_n == 0);
	smarm__group_fini(r);
	free(r->rg_names.ht_b);
	free(r->rg_actors.ht_b);
	free(r->rg_groups.ht_b);
	free(r->rg_hits);
	free(r);
}

static int reg_get_stat(const struct smarm_node *n, const void *state, int stat,
			int64_t *out)
{
	const struct smarm__reg *r = state;
	const int64_t *v;
	(void)n;
	switch (stat) {
	case SMARM_STAT_REG_NAMES:
		v = &r->rg_nnames;
		break;
	case SMARM_STAT_REG_MAILBOXES:
		v = &r->rg_nmbox;
		break;
	case SMARM_STAT_REG_MEMBERSHIPS:
		v = &r->rg_nmemb;
		break;
	default:
		return SMARM_EINVAL;
	}
	*out = __atomic_load_n(v, __ATOMIC_RELAXED);
	return 0;
}

const struct smarm__subsys smarm__reg_subsys = {
	.ss_name = "reg",
	.ss_open = reg_open,
	.ss_close = reg_close,
	.ss_actor_exit = reg_actor_exit,
	.ss_get_stat = reg_get_stat,
};
