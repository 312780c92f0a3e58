/* SPDX-License-Identifier: MIT */
/*
 * slot.c - the slot table (one array that grows in place), its free
 * list, and the transitions of the packed state word.
 *
 * Table: room for max_actors slots is reserved as one region (region.h)
 * at the first spawn and made read/write as the table grows, so a slot
 * is found by index with one bound check (smarm__slot_at) and never
 * moves (pointers to slots stay valid for the node's life). It grows,
 * doubling from SMARM__SLOTS_FIRST slots, under the free-list lock,
 * when the free list is empty and fewer than max_actors slots exist;
 * the last growth is cut short at max_actors, so "how many actors can
 * be alive" is exactly max_actors. (Until 0.5.x the table was a list of
 * segments of 256 << s slots, and every lookup computed the segment
 * from the index with a count-leading-zeros: some 15 instructions per
 * lookup, several lookups per message and per actor.)
 *
 * State word: gen<<32 | epoch<<8 | state. A transition that can race
 * (a wake, park and yield returns, a retire) is a CAS on the whole word,
 * so the generation check is atomic with it (no ABA). Opening a wait
 * writes nothing: its round's epoch is the word's next (smarm__begin_wait),
 * which the park or the wake then stores. Four are plain
 * stores, made by the only party that can write the word then: publish
 * (the spawner; VACANT is nobody's), claim (the scheduler; a QUEUED word
 * is written by nobody else), DONE (finalize, under the cold lock, after
 * the actor's last switch) and reclaim (under the cold lock, DONE).
 *
 *   VACANT --spawn publish--> QUEUED --claim--> RUNNING
 *   RUNNING|NOTIFIED --yield--> QUEUED   RUNNING --park--> PARKED
 *   RUNNING --wake--> NOTIFIED --park--> QUEUED (park returns at once)
 *   PARKED --wake--> QUEUED              RUNNING|NOTIFIED --end--> DONE
 *   DONE --reclaim (gen+1)--> VACANT
 *
 * Statistics: a node with SMARM_OPT_ACTOR_STATS keeps a second table,
 * one struct smarm__astat line per slot at the same index, reserved at
 * the first growth and committed before the slots it serves, so a slot
 * below nslots always has its line (slot.h).
 *
 * Tenants: smarm__slot_install sets every per-tenant field, the one
 * place that does (actor.c INV-1); smarm__slot_reclaim ends a tenancy.
 *
 * Free slots sit in the node's free list or in a worker's slot cache (up
 * to SMARM__WORKER_SLOTS, sched.h): a worker's spawns take from its cache
 * and its finalizes give back to it, so spawn and exit in a steady state
 * take no node-wide lock; an empty cache is refilled, a full one
 * spilled, SMARM__SLOT_BATCH at a time under free_lock. Capacity stays
 * exact by stealing (INV-3): a spawn that finds the free list empty and
 * the table at max_actors takes a slot from another worker's cache
 * before it reports SMARM_EATCAPACITY. Stealing was chosen over counting
 * reservations globally because it costs nothing until the table is
 * full, and a full table is where a spawn is refused anyway. The caches
 * are emptied into the free list when a run ends.
 *
 * Ownership: the node owns the table; smarm__slots_fini unmaps it.
 * Locking: free_lock (SLOT rank) guards the free stack (free_stk, nfree)
 * and growth; a worker's sc_lock (SCACHE rank) its cache whenever the
 * owner's lock-free access is not in use (INV-4), taken alone by its
 * owner or under free_lock (refill, spill, steal, flush, counting).
 * Invariants: INV-1 generation never 0, so pid 0 names nothing. INV-2 a
 * successful wake consumes its epoch (at most one wake per wait). INV-3
 * every free slot is in exactly one place, the free list or one cache,
 * and moves between them only under free_lock; so a spawn holding
 * free_lock that finds the list empty, the table full and every cache
 * empty has found no free slot: max_actors actors (live or owed a join)
 * hold them all. INV-4 a worker's cache is changed or read either under
 * its sc_lock, or by its owner alone inside membar.h's owner/visitor
 * handshake (own_busy set while own_visitors is 0): a visitor (a steal,
 * a count) announces itself and waits out the owner's access before it
 * locks; an owner that sees a visitor locks too. The owner's common
 * path costs no atomic read-modify-write. (Until 0.5.x
 * it took sc_lock: two locked instructions per spawn and two per exit.)
 * See: docs/architecture/slots.md.
 */
#include "slot.h"

#include "actor.h"
#include "membar.h"
#include "node.h"
#include "preempt.h"
#include "region.h"
#include "sched.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Grow the run queue so it can hold every slot (INV-1 keeps push total).
 * The buffer is allocated before rq_lock is taken: workers pop under it.
 * The old one is freed once no pusher writes its pages ahead any more
 * (sched.c, rq_touch_unlock: a few page writes, outside any lock).
 */
static int rq_reserve(struct smarm_node *n, uint32_t want)
{
	uint32_t cap;
	uint64_t *buf;

	if (want <= n->rq.rg_cap)
		return 0;
	cap = smarm__ring_cap_for(want, n->rq.rg_cap ? n->rq.rg_cap : 64);
	buf = cap ? malloc((size_t)cap * sizeof *buf) : NULL;
	if (buf == NULL)
		return SMARM_ENOMEM;
	smarm__glock(&n->rq_lock, &n->rq_lock_n, SMARM__RANK_RUNQ);
	buf = smarm__ring_move(&n->rq, sizeof *buf, buf, cap);
	n->rq_touched = 0; /* the copy wrote the first entries' pages */
	n->rq_touch_at = 0;
	smarm__unlock(&n->rq_lock, SMARM__RANK_RUNQ);
	while (atomic_load_explicit(&n->rq_touching, memory_order_acquire) != 0)
		smarm__cpu_relax();
	free(buf);
	return 0;
}

/*
 * Under free_lock, the node keeping statistics: make the statistics
 * table's first `want` bytes read/write, reserving room for max_actors
 * lines on first use. Pages never written cost no memory.
 */
static int astats_commit(struct smarm_node *n, size_t want)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	want = (want + page - 1) & ~(page - 1);
	if (n->astats == NULL) {
		size_t all =
			(size_t)n->max_actors * sizeof(struct smarm__astat);
		void *base;
		all = (all + page - 1) & ~(page - 1);
		base = smarm__region_reserve(all);
		if (base == NULL)
			return SMARM_ENOMEM;
		n->astats = base;
		n->astats_reserved = all;
	}
	if (want > n->astats_reserved)
		want = n->astats_reserved;
	if (smarm__region_commit((uintptr_t)n->astats, n->astats_committed,
				 want) != 0)
		return SMARM_ENOMEM;
	if (want > n->astats_committed)
		n->astats_committed = want;
	return 0;
}

/*
 * Under free_lock: make the table's first `want` bytes read/write,
 * reserving room for max_actors slots on first use.
 */
static int table_commit(struct smarm_node *n, size_t want)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	want = (want + page - 1) & ~(page - 1);
	if (n->slots == NULL) {
		size_t all = (size_t)n->max_actors * sizeof(struct smarm__slot);
		void *base;
		all = (all + page - 1) & ~(page - 1);
		base = smarm__region_reserve(all);
		if (base == NULL)
			return SMARM_ENOMEM;
		n->slots = base;
		n->slots_reserved = all;
	}
	if (want > n->slots_reserved)
		want = n->slots_reserved;
	if (n->astat_on) {
		int rc = astats_commit(n, want / sizeof(struct smarm__slot) *
						  sizeof(struct smarm__astat));
		if (rc != 0)
			return rc;
	}
	if (smarm__region_commit((uintptr_t)n->slots, n->slots_committed,
				 want) != 0)
		return SMARM_ENOMEM;
	if (want > n->slots_committed)
		n->slots_committed = want;
	return 0;
}

/* Called with free_lock held and an empty free list. */
static int grow(struct smarm_node *n)
{
	uint32_t have = atomic_load_explicit(&n->nslots, memory_order_relaxed);
	uint32_t count;
	int rc;

	if (have >= n->max_actors)
		return SMARM_EATCAPACITY;
	count = have + SMARM__SLOTS_FIRST; /* the table doubles */
	if (count > n->max_actors - have)
		count = n->max_actors - have;
	rc = rq_reserve(n, have + count);
	if (rc != 0)
		return rc;
	if (have + count > n->free_cap) {
		/* The free stack holds every slot, so a push never fails. */
		uint32_t *stk = realloc(n->free_stk,
					(size_t)(have + count) * sizeof *stk);
		if (stk == NULL)
			return SMARM_ENOMEM;
		n->free_stk = stk;
		n->free_cap = have + count;
	}
	rc = table_commit(n,
			  (size_t)(have + count) * sizeof(struct smarm__slot));
	if (rc != 0)
		return rc;
	/*
	 * The new slots are left as the kernel gives them, zero and not
	 * resident: a zero slot is one never used (generation 0, which no
	 * pid has), set up as it is first handed out (slot_first). The
	 * table doubles, so writing each new slot here made up to half the
	 * table resident unused: 416 B per parked actor at 20,000 actors,
	 * where a slot is 256 (the free stack hands out low indices first,
	 * so the used ones are dense).
	 */
	atomic_store_explicit(&n->nslots, have + count, memory_order_release);
	for (uint32_t i = count; i > 0; i--) /* low indices on top */
		n->free_stk[n->nfree++] = have + i - 1;
	return 0;
}

/*
 * Under free_lock: the top of the free stack (not empty). An array, not
 * a list through the slots: a refill takes a batch without touching a
 * slot (a list made it a chain of dependent cache misses).
 */
static uint32_t free_pop(struct smarm_node *n)
{
	return n->free_stk[--n->nfree];
}

/* Under free_lock; the stack has room for every slot. */
static void free_push(struct smarm_node *n, uint32_t idx)
{
	n->free_stk[n->nfree++] = idx;
}

/*
 * The owner's way into its cache (INV-4, membar.h's handshake): no
 * visitor (the common case): no lock, and *locked false. Else the
 * lock, as any visitor takes it.
 */
static inline __attribute__((always_inline)) void
cache_enter(struct smarm_node *n, struct smarm__worker *w, bool *locked)
{
	*locked = !smarm__owner_enter(&w->own_busy, &n->own_visitors);
	if (SMARM_UNLIKELY(*locked))
		smarm__lock(&w->sc_lock, SMARM__RANK_SCACHE);
}

static inline __attribute__((always_inline)) void
cache_leave(struct smarm__worker *w, bool locked)
{
	if (SMARM_UNLIKELY(locked))
		smarm__unlock(&w->sc_lock, SMARM__RANK_SCACHE);
	else /* the cache's new state before the flag's end */
		smarm__owner_leave(&w->own_busy);
}

/* A visitor's way into worker v's cache, once announced (INV-4). */
static void visit_lock(struct smarm__worker *v)
{
	smarm__visit_wait(&v->own_busy);
	smarm__lock(&v->sc_lock, SMARM__RANK_SCACHE);
}

/*
 * Under free_lock, the free list empty and the table unable to grow:
 * take a slot from any worker's cache (INV-3). Caches only change
 * size under free_lock (refill, spill) or by their owner's own spawns
 * and finalizes, so every slot free when this is called is found, bar
 * one a concurrent finalize frees meanwhile (that spawn then simply came
 * first).
 */
static bool cache_steal(struct smarm_node *n, uint32_t *idx)
{
	bool got = false;
	smarm__visit_begin(&n->own_visitors);
	for (int i = 0; i < n->workers_n && !got; i++) {
		struct smarm__worker *v = &n->workers[i];
		visit_lock(v);
		if (v->sc_n > 0) {
			*idx = v->sc_idx[--v->sc_n];
			got = true;
		}
		smarm__unlock(&v->sc_lock, SMARM__RANK_SCACHE);
	}
	smarm__visit_end(&n->own_visitors);
	return got;
}

/*
 * A slot handed out: if never used (its word 0: grow left it as the
 * kernel gave it), its constant fields and generation 1 now.
 */
static inline void slot_first(struct smarm_node *n, uint32_t idx)
{
	struct smarm__slot *s = smarm__slot_at(n, idx);
	if (SMARM_UNLIKELY(atomic_load_explicit(&s->word,
						memory_order_relaxed) == 0)) {
		s->pid_lo = (uint32_t)smarm__pid_make(0, n->serial, idx);
		s->tm_pos = SMARM__NO_INDEX;
		atomic_store_explicit(&s->word,
				      SMARM__W_MAKE(1, 0, SMARM__ST_VACANT),
				      memory_order_relaxed);
	}
}

static int slot_take(struct smarm_node *n, uint32_t *idx)
{
	struct smarm__worker *w = smarm__worker_of(n);
	int rc = 0;

	if (w != NULL) {
		bool locked, hit;
		cache_enter(n, w, &locked);
		hit = w->sc_n > 0;
		if (hit)
			*idx = w->sc_idx[--w->sc_n];
		cache_leave(w, locked);
		if (hit)
			return 0;
	}
	smarm__glock(&n->free_lock, &n->free_lock_n, SMARM__RANK_SLOT);
	if (n->nfree == 0)
		rc = grow(n);
	if (rc == 0) {
		*idx = free_pop(n);
		if (w != NULL) {
			/* Refill: the stack's top stays on top. */
			uint32_t k = 0;
			uint32_t got[SMARM__SLOT_BATCH];
			while (k < SMARM__SLOT_BATCH - 1 && n->nfree > 0)
				got[k++] = free_pop(n);
			smarm__lock(&w->sc_lock, SMARM__RANK_SCACHE);
			while (k > 0)
				w->sc_idx[w->sc_n++] = got[--k];
			smarm__unlock(&w->sc_lock, SMARM__RANK_SCACHE);
		}
	} else if (cache_steal(n, idx)) {
		rc = 0;
	}
	smarm__unlock(&n->free_lock, SMARM__RANK_SLOT);
	return rc;
}

int smarm__slot_alloc(struct smarm_node *n, uint32_t *idx)
{
	int rc = slot_take(n, idx);
	if (rc == 0)
		slot_first(n, *idx);
	return rc;
}

void smarm__slot_free(struct smarm_node *n, uint32_t idx)
{
	struct smarm__worker *w = smarm__worker_of(n);

	if (w != NULL) {
		bool locked, room;
		cache_enter(n, w, &locked);
		room = w->sc_n < SMARM__WORKER_SLOTS;
		if (room)
			w->sc_idx[w->sc_n++] = idx;
		cache_leave(w, locked);
		if (room)
			return;
	}
	smarm__glock(&n->free_lock, &n->free_lock_n, SMARM__RANK_SLOT);
	if (w == NULL) {
		free_push(n, idx);
	} else {
		/*
		 * Spill the oldest batch, oldest first, and keep the newest:
		 * the cache is the top of one LIFO whose rest is the free
		 * list, so slots are reused in the order a plain free list
		 * gives (most recently freed first). Reuse order matters: a
		 * run that spawns 100000 actors walks the slot table in it,
		 * and a scrambled order was measured 2.5x slower.
		 */
		uint32_t keep;
		smarm__lock(&w->sc_lock, SMARM__RANK_SCACHE);
		keep = w->sc_n > SMARM__SLOT_BATCH ? w->sc_n - SMARM__SLOT_BATCH
						   : 0;
		for (uint32_t i = 0; i < w->sc_n - keep; i++)
			free_push(n, w->sc_idx[i]);
		memmove(w->sc_idx, w->sc_idx + (w->sc_n - keep),
			keep * sizeof w->sc_idx[0]);
		w->sc_n = keep;
		w->sc_idx[w->sc_n++] = idx;
		smarm__unlock(&w->sc_lock, SMARM__RANK_SCACHE);
	}
	smarm__unlock(&n->free_lock, SMARM__RANK_SLOT);
}

/* End of a run (no worker runs): w's cached slots back to the list. */
void smarm__slot_cache_flush(struct smarm_node *n, struct smarm__worker *w)
{
	smarm__lock(&n->free_lock, SMARM__RANK_SLOT);
	smarm__lock(&w->sc_lock, SMARM__RANK_SCACHE);
	for (uint32_t i = 0; i < w->sc_n; i++) /* oldest first: LIFO kept */
		free_push(n, w->sc_idx[i]);
	w->sc_n = 0;
	smarm__unlock(&w->sc_lock, SMARM__RANK_SCACHE);
	smarm__unlock(&n->free_lock, SMARM__RANK_SLOT);
}

/* Free slots: the free list plus every worker's cache. */
uint32_t smarm__slots_free_count(struct smarm_node *n)
{
	uint32_t v;
	smarm__lock(&n->free_lock, SMARM__RANK_SLOT);
	v = n->nfree;
	smarm__visit_begin(&n->own_visitors);
	for (int i = 0; i < n->workers_n; i++) {
		struct smarm__worker *w = &n->workers[i];
		visit_lock(w);
		v += w->sc_n;
		smarm__unlock(&w->sc_lock, SMARM__RANK_SCACHE);
	}
	smarm__visit_end(&n->own_visitors);
	smarm__unlock(&n->free_lock, SMARM__RANK_SLOT);
	return v;
}

/* smarm__exit_release with a payload present. */
void smarm__exit_release_slow(struct smarm__exit *dead)
{
	{
		struct smarm__slot *me = smarm__current();
		smarm__nopreempt_enter(me); /* user code inside the runtime */
		dead->ex_payload->ep_free(dead->ex_payload);
		smarm__nopreempt_leave(me);
	}
	dead->ex_payload = NULL;
}

/* The slot of a live actor named by pid, or NULL (a lock-free snapshot). */
struct smarm__slot *smarm__slot_live(struct smarm_node *n, uint64_t pid)
{
	struct smarm__slot *s = smarm__slot_of(n, pid);
	uint64_t w;
	if (s == NULL || SMARM__PID_GEN(pid) == 0)
		return NULL;
	w = atomic_load_explicit(&s->word, memory_order_acquire);
	if (SMARM__W_GEN(w) != SMARM__PID_GEN(pid) ||
	    SMARM__W_STATE(w) == SMARM__ST_VACANT ||
	    SMARM__W_STATE(w) == SMARM__ST_DONE)
		return NULL;
	return s;
}

void smarm__slots_fini(struct smarm_node *n)
{
	uint32_t have = atomic_load_explicit(&n->nslots, memory_order_relaxed);
	for (uint32_t i = 0; i < have; i++) {
		free(n->slots[i].cl);
		for (int k = 0;
		     n->slots[i].ext != NULL && k < SMARM__LABEL_BLOCKS; k++)
			free(n->slots[i].ext->x_label[k]);
		smarm__ext_free(n->slots[i].ext);
	}
	smarm__labels_fini(n);
	if (n->slots != NULL)
		munmap(n->slots, n->slots_reserved);
	n->slots = NULL;
	if (n->astats != NULL)
		munmap(n->astats, n->astats_reserved);
	n->astats = NULL;
	n->astats_reserved = n->astats_committed = 0;
	n->slots_reserved = n->slots_committed = 0;
	atomic_store_explicit(&n->nslots, 0, memory_order_relaxed);
	free(n->free_stk);
	n->free_stk = NULL;
	n->free_cap = n->nfree = 0;
	smarm__ring_fini(&n->rq);
}

/*
 * Forget any wake that landed (bump the epoch, NOTIFIED -> RUNNING)
 * without observing a stop: used when an actor starts exiting, so that
 * the stop's own wildcard wake cannot cut short a wait in a cleanup
 * handler.
 */
void smarm__clear_notify(struct smarm__slot *s)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
	uint64_t nw;
	do {
		nw = SMARM__W_MAKE(SMARM__W_GEN(w), SMARM__W_EPOCH(w) + 1,
				   SMARM__ST_RUNNING);
	} while (!atomic_compare_exchange_weak_explicit(
		&s->word, &w, nw, memory_order_acq_rel, memory_order_relaxed));
}

/*
 * Close a wait that did not park (INV-3): bump the epoch (in-flight wakes
 * for it die) and eat a wake that already landed, in one CAS; then a stop
 * whose notification was eaten is still seen through its flag.
 */
void smarm__retire_wait(struct smarm__slot *s)
{
	smarm__clear_notify(s);
	smarm__observe_stop(s);
}

/*
 * Wake: PARKED -> QUEUED (caller must enqueue) or RUNNING -> NOTIFIED, for
 * the matching generation and, unless `any`, the matching epoch: a parked
 * actor's word holds its round's epoch (park_return set it), a running
 * one's the epoch before it (smarm__begin_wait writes nothing). Consumes
 * the epoch: the word moves to the round's epoch (RUNNING) or past it
 * (PARKED). Everything else is a no-op.
 */
int smarm__word_unpark(struct smarm__slot *s, uint32_t gen, bool any,
		       uint32_t epoch)
{
	uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
	for (;;) {
		uint32_t st = SMARM__W_STATE(w);
		uint32_t ep = SMARM__W_EPOCH(w);
		uint64_t nw;
		int result;
		if (SMARM__W_GEN(w) != gen)
			return SMARM__UNPARK_NOOP;
		if (st == SMARM__ST_PARKED) {
			if (!any && ep != epoch)
				return SMARM__UNPARK_NOOP;
			nw = SMARM__W_NEXT(w, SMARM__ST_QUEUED);
			result = SMARM__UNPARK_ENQUEUE;
		} else if (st == SMARM__ST_RUNNING) {
			if (!any && ((ep + 1) & 0xffffffu) != epoch)
				return SMARM__UNPARK_NOOP;
			nw = SMARM__W_NEXT(w, SMARM__ST_NOTIFIED);
			result = SMARM__UNPARK_NOTIFIED;
		} else {
			return SMARM__UNPARK_NOOP;
		}
		if (atomic_compare_exchange_weak_explicit(&s->word, &w, nw,
							  memory_order_acq_rel,
							  memory_order_acquire))
			return result;
	}
}
