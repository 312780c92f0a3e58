/* SPDX-License-Identifier: MIT */
/*
 * timer.c - the node's timers: a binary min-heap ordered by (deadline,
 * seq), where seq is the insertion counter, so equal deadlines fire in
 * insertion order.
 *
 * Two kinds of entry. A *wake* entry (pid, epoch) backs sleep and every
 * bounded wait: on expiry it is an epoch-matched unpark, so an entry whose
 * wait already ended is inert and wake entries are never cancelled. A
 * *timed call* (struct smarm__timed_call) backs smarm_chan_send_after: it
 * is cancellable through a small open-addressing map from id to record;
 * cancelling marks the record, runs its drop, and leaves the heap entry
 * to be discarded when it surfaces.
 *
 * Timers never keep a run open: at the end of a run the heap is cleared
 * and every pending timed call is dropped.
 *
 * A timed call armed by an actor of a node that takes a causal profile
 * is dilated: when it comes due it may go back into the heap, later by
 * the delay the profiler says its armer owes (timer_dilate; causal.c,
 * "Timers dilated").
 *
 * Ownership: the node owns the heap, the map and the records; a record is
 * freed when its heap entry is popped or cleared.
 * Locking: tm_lock (TIMERS) guards heap, map and seq. fire and drop run
 * with no lock held. next_deadline is a lock-free snapshot of the heap
 * minimum for the busy-path check.
 * Invariants: INV-1 every insert notes its deadline with the coordinator
 * under tm_lock. INV-2 exactly one of fire or drop runs per timed call.
 * See: docs/architecture/timers.md.
 */
#include "timer.h"

#include "causal.h"
#include "node.h"
#include "preempt.h"
#include "sched.h"
#include "slot.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>

struct smarm__timer_ent {
	uint64_t deadline;
	uint64_t seq;
	uint64_t waits; /* the target's wait count at insert */
	uint64_t pid;	/* sleep/wait wake target, or 0 */
	uint32_t epoch;
	struct smarm__timed_call *st; /* timed send, or NULL */
	struct smarm__slot *slot;     /* wake entry's slot, or NULL */
};

/*
 * A timed call (the mechanism under smarm_chan_send_after). fire runs on a
 * scheduler thread with no lock held when the deadline passes; drop runs
 * instead when the timer is cancelled or discarded at the end of a run.
 * Exactly one of the two runs, exactly once.
 */
struct smarm__timed_call {
	uint64_t id;
	bool cancelled;	   /* tm_lock: cancel took it (drop runs there) */
	bool dropped;	   /* tm_lock: cancel's drop finished */
	bool popped;	   /* tm_lock: its heap entry is gone */
	uint64_t cz_stamp; /* causal profiler's stamp (causal.h); 0: none */
	void (*fire)(void *ctx, void *payload);
	void (*drop)(void *ctx, void *payload);
	void *ctx;
	max_align_t payload[]; /* caller's bytes */
};

static bool ent_less(const struct smarm__timer_ent *a,
		     const struct smarm__timer_ent *b)
{
	return a->deadline < b->deadline ||
	       (a->deadline == b->deadline && a->seq < b->seq);
}

/*
 * Wake-entry tracking: an actor waits on one thing at a time, so it has at
 * most one live wake entry; slot->tm_pos is that entry's heap index (or
 * SMARM__NO_INDEX), kept up to date as entries move. An entry is the
 * tracked one iff its slot's tm_pos equals its own index. A new wait's
 * insert removes the previous (necessarily stale) entry, so the heap holds
 * at most one wake entry per actor plus the timed sends, however many
 * bounded waits end early.
 */
static void place(struct smarm__timer_ent *h, uint32_t to,
		  const struct smarm__timer_ent *e, bool tracked)
{
	h[to] = *e;
	if (tracked)
		e->slot->tm_pos = to;
}

static bool is_tracked(const struct smarm__timer_ent *h, uint32_t i)
{
	return h[i].slot != NULL && h[i].slot->tm_pos == i;
}

static void sift_up(struct smarm__timer_ent *h, uint32_t i)
{
	struct smarm__timer_ent e = h[i];
	bool tracked = is_tracked(h, i);
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!ent_less(&e, &h[p]))
			break;
		place(h, i, &h[p], is_tracked(h, p));
		i = p;
	}
	place(h, i, &e, tracked);
}

static void sift_down(struct smarm__timer_ent *h, uint32_t len, uint32_t i)
{
	struct smarm__timer_ent e = h[i];
	bool tracked = is_tracked(h, i);
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= len)
			break;
		if (c + 1 < len && ent_less(&h[c + 1], &h[c]))
			c++;
		if (!ent_less(&h[c], &e))
			break;
		place(h, i, &h[c], is_tracked(h, c));
		i = c;
	}
	place(h, i, &e, tracked);
}

/* Under tm_lock: take the entry at index k out of the heap into *out. */
static void heap_remove(struct smarm_node *n, uint32_t k,
			struct smarm__timer_ent *out)
{
	struct smarm__timer_ent *h = n->tm_heap;
	uint32_t last = --n->tm_len;
	*out = h[k];
	if (is_tracked(h, k))
		h[k].slot->tm_pos = SMARM__NO_INDEX;
	if (k == last)
		return;
	place(h, k, &h[last], is_tracked(h, last));
	if (k > 0 && ent_less(&h[k], &h[(k - 1) / 2]))
		sift_up(h, k);
	else
		sift_down(h, n->tm_len, k);
}

/* Under tm_lock. */
static int heap_push(struct smarm_node *n, struct smarm__timer_ent *e)
{
	struct smarm__slot *s = e->slot;
	if (s != NULL && s->tm_pos < n->tm_len &&
	    n->tm_heap[s->tm_pos].slot == s) {
		struct smarm__timer_ent stale;
		heap_remove(n, s->tm_pos, &stale); /* its wait is over */
	}
	if (n->tm_len == n->tm_cap) {
		uint32_t cap = n->tm_cap ? n->tm_cap * 2 : 64;
		struct smarm__timer_ent *h =
			realloc(n->tm_heap, (size_t)cap * sizeof *h);
		if (h == NULL)
			return SMARM_ENOMEM;
		n->tm_heap = h;
		n->tm_cap = cap;
	}
	e->seq = ++n->tm_seq;
	n->tm_heap[n->tm_len] = *e;
	if (s != NULL)
		s->tm_pos = n->tm_len; /* tracked from the start */
	sift_up(n->tm_heap, n->tm_len++);
	smarm__timer_note(n, e->deadline);
	return 0;
}

static void refresh_deadline(struct smarm_node *n)
{
	atomic_store_explicit(&n->next_deadline,
			      n->tm_len ? n->tm_heap[0].deadline : UINT64_MAX,
			      memory_order_release);
}

/* ------------------------------------------------------------ id map */

static uint32_t map_slot(uint64_t id, uint32_t cap)
{
	return (uint32_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

#define MAP_TOMB ((struct smarm__timed_call *)1)

static int map_put(struct smarm_node *n, struct smarm__timed_call *st)
{
	if ((n->tm_map_used + 1) * 2 > n->tm_map_cap) {
		uint32_t cap = n->tm_map_cap ? n->tm_map_cap * 2 : 64;
		struct smarm__timed_call **m = calloc(cap, sizeof *m);
		if (m == NULL)
			return SMARM_ENOMEM;
		uint32_t used = 0;
		for (uint32_t i = 0; i < n->tm_map_cap; i++) {
			struct smarm__timed_call *o = n->tm_map[i];
			if (o == NULL || o == MAP_TOMB)
				continue;
			uint32_t j = map_slot(o->id, cap);
			while (m[j] != NULL)
				j = (j + 1) & (cap - 1);
			m[j] = o;
			used++;
		}
		free(n->tm_map);
		n->tm_map = m;
		n->tm_map_cap = cap;
		n->tm_map_used = used;
	}
	uint32_t j = map_slot(st->id, n->tm_map_cap);
	while (n->tm_map[j] != NULL && n->tm_map[j] != MAP_TOMB)
		j = (j + 1) & (n->tm_map_cap - 1);
	if (n->tm_map[j] == NULL)
		n->tm_map_used++;
	n->tm_map[j] = st;
	return 0;
}

static struct smarm__timed_call *map_take(struct smarm_node *n, uint64_t id)
{
	if (n->tm_map_cap == 0)
		return NULL;
	uint32_t j = map_slot(id, n->tm_map_cap);
	for (uint32_t k = 0; k < n->tm_map_cap; k++) {
		struct smarm__timed_call *o = n->tm_map[j];
		if (o == NULL)
			return NULL;
		if (o != MAP_TOMB && o->id == id) {
			n->tm_map[j] = MAP_TOMB;
			return o;
		}
		j = (j + 1) & (n->tm_map_cap - 1);
	}
	return NULL;
}

/* ------------------------------------------------------------- API */

int smarm__timer_sleep(struct smarm_node *n, uint64_t deadline,
		       struct smarm__slot *me, uint32_t epoch)
{
	struct smarm__timer_ent e;
	int rc;
	e.deadline = deadline;
	e.seq = 0;
	e.waits = atomic_load_explicit(&me->waits, memory_order_relaxed);
	e.pid = smarm__slot_pid(me);
	e.epoch = epoch;
	e.st = NULL;
	e.slot = me;
	smarm__glock(&n->tm_lock, &n->tm_lock_n, SMARM__RANK_TIMERS);
	rc = heap_push(n, &e);
	smarm__unlock(&n->tm_lock, SMARM__RANK_TIMERS);
	return rc;
}

uint64_t smarm__timer_wake_deadline(struct smarm_node *n, struct smarm__slot *s,
				    uint32_t epoch)
{
	uint64_t dl = 0;
	uint32_t k;
	/* Unlocked first: most parked actors have no wake entry. */
	if (__atomic_load_n(&s->tm_pos, __ATOMIC_RELAXED) == SMARM__NO_INDEX)
		return 0;
	smarm__glock(&n->tm_lock, &n->tm_lock_n, SMARM__RANK_TIMERS);
	k = s->tm_pos;
	/* The entry of this very wait (wake_entry's test), not one left by
	 * a bounded wait that ended early. */
	if (k != SMARM__NO_INDEX && k < n->tm_len && n->tm_heap[k].slot == s &&
	    n->tm_heap[k].epoch == epoch &&
	    n->tm_heap[k].waits ==
		    atomic_load_explicit(&s->waits, memory_order_relaxed))
		dl = n->tm_heap[k].deadline;
	smarm__unlock(&n->tm_lock, SMARM__RANK_TIMERS);
	return dl;
}

int smarm__timer_call_after(struct smarm_node *n, uint64_t delay_ns,
			    void (*fire)(void *, void *),
			    void (*drop)(void *, void *), void *ctx,
			    const void *payload, size_t len, uint64_t *id)
{
	struct smarm__timed_call *st = malloc(sizeof *st + len);
	struct smarm__timer_ent e;
	uint64_t new_id;
	int rc;

	if (st == NULL)
		return SMARM_ENOMEM;
	st->cancelled = false;
	st->dropped = false;
	st->popped = false;
	st->fire = fire;
	st->drop = drop;
	st->ctx = ctx;
	/* Dilated while the node profiles (causal.c, "Timers dilated"). */
	st->cz_stamp = SMARM_UNLIKELY(smarm__tls_obs)
			       ? smarm__causal_timer_stamp(n)
			       : 0;
	memcpy(st->payload, payload, len);
	e.deadline = smarm__deadline_after(delay_ns);
	e.pid = 0;
	e.waits = 0;
	e.epoch = 0;
	e.st = st;
	e.slot = NULL;

	smarm__glock(&n->tm_lock, &n->tm_lock_n, SMARM__RANK_TIMERS);
	new_id = n->tm_seq + 1; /* heap_push assigns this seq */
	st->id = new_id;
	rc = map_put(n, st);
	if (rc == 0) {
		rc = heap_push(n, &e);
		if (rc != 0)
			map_take(n, new_id);
	}
	smarm__unlock(&n->tm_lock, SMARM__RANK_TIMERS);
	if (rc != 0) {
		free(st);
		return rc;
	}
	/* Not st->id: once unlocked, st may already have fired and gone. */
	*id = new_id;
	return 0;
}

/*
 * Cancel: the record leaves the map under tm_lock, so exactly one of
 * cancel and fire owns the payload. drop runs outside the lock while the
 * heap entry may be popped concurrently, so the record is freed by
 * whichever of the two finishes last (dropped && popped, under tm_lock).
 */
int smarm__timer_cancel(struct smarm_node *n, uint64_t id)
{
	struct smarm__timed_call *st;
	bool free_it;
	smarm__glock(&n->tm_lock, &n->tm_lock_n, SMARM__RANK_TIMERS);
	st = map_take(n, id);
	if (st != NULL)
		st->cancelled = true;
	smarm__unlock(&n->tm_lock, SMARM__RANK_TIMERS);
	if (st == NULL)
		return SMARM_ENOENT;
	/* A stop landing inside drop would leak st: no async preemption. */
	smarm__nopreempt_enter(smarm__current());
	st->drop(st->ctx, st->payload);
	smarm__nopreempt_leave(smarm__current());
	smarm__glock(&n->tm_lock, &n->tm_lock_n, SMARM__RANK_TIMERS);
	st->dropped = true;
	free_it = st->popped;
	smarm__unlock(&n->tm_lock, SMARM__RANK_TIMERS);
	if (free_it)
		free(st);
	return 0;
}

/* Under tm_lock: a cancelled record's heap entry is gone; true: free it. */
static bool popped_cancelled(struct smarm__timed_call *st)
{
	st->popped = true;
	return st->dropped;
}

bool smarm__timers_due(struct smarm_node *n)
{
	uint64_t d =
		atomic_load_explicit(&n->next_deadline, memory_order_relaxed);
	return d != UINT64_MAX && smarm__clock_ns() >= d;
}

uint64_t smarm__timers_peek(struct smarm_node *n)
{
	return n->tm_len ? n->tm_heap[0].deadline : UINT64_MAX;
}

/*
 * A wake entry fires only for the very wait that armed it: the epoch CAS
 * checks the 24-bit epoch, and the 64-bit wait count rules out an entry
 * that outlived a full epoch wrap (a long timeout on an actor that waits
 * millions of times meanwhile).
 */
static void wake_entry(struct smarm_node *n, const struct smarm__timer_ent *e)
{
	/* e->pid is this node's own (a wait's): no serial check needed */
	struct smarm__slot *s = smarm__slot_at(n, SMARM__PID_IDX(e->pid));
	if (s != NULL &&
	    atomic_load_explicit(&s->waits, memory_order_relaxed) == e->waits)
		smarm__unpark_at(n, e->pid, e->epoch);
}

/*
 * Under tm_lock: a due timed call the causal profiler dilates (its
 * armer owed delay, or delay was injected since: causal.c) goes back
 * into the heap at its later deadline, with a new seq (its id, the
 * map's key, stays). True: it did. It was just removed, so the push
 * has room.
 */
static bool timer_dilate(struct smarm_node *n, struct smarm__timer_ent *e,
			 uint64_t now)
{
	uint64_t shift = smarm__causal_timer_shift(n, &e->st->cz_stamp);
	if (shift == 0 || e->deadline + shift <= now)
		return false;
	e->deadline += shift;
	return heap_push(n, e) == 0;
}

#define FIRE_BATCH 64

void smarm__timers_fire(struct smarm_node *n, bool try_only)
{
	struct smarm__timer_ent batch[FIRE_BATCH];
	uint32_t got;

	do {
		uint64_t now = smarm__clock_ns();
		got = 0;
		if (try_only) {
			if (!smarm__gtrylock(&n->tm_lock, &n->tm_lock_n,
					     SMARM__RANK_TIMERS))
				return;
		} else {
			smarm__glock(&n->tm_lock, &n->tm_lock_n,
				     SMARM__RANK_TIMERS);
		}
		while (got < FIRE_BATCH && n->tm_len > 0 &&
		       n->tm_heap[0].deadline <= now) {
			struct smarm__timer_ent e;
			heap_remove(n, 0, &e);
			if (e.st != NULL && e.st->cancelled) {
				if (popped_cancelled(e.st))
					free(e.st);
				continue;
			}
			if (e.st != NULL && e.st->cz_stamp != 0 &&
			    timer_dilate(n, &e, now))
				continue;
			if (e.st != NULL)
				map_take(n, e.st->id);
			batch[got++] = e;
		}
		refresh_deadline(n);
		smarm__unlock(&n->tm_lock, SMARM__RANK_TIMERS);

		for (uint32_t i = 0; i < got; i++) {
			struct smarm__timed_call *st = batch[i].st;
			smarm__trace(SMARM__TR_TIMER, batch[i].pid, 0,
				     st != NULL);
			if (st == NULL) {
				wake_entry(n, &batch[i]);
			} else {
				st->fire(st->ctx, st->payload);
				free(st);
			}
		}
	} while (got == FIRE_BATCH);
}

void smarm__timers_clear(struct smarm_node *n)
{
	for (;;) {
		struct smarm__timed_call *st = NULL;
		smarm__glock(&n->tm_lock, &n->tm_lock_n, SMARM__RANK_TIMERS);
		while (n->tm_len > 0 && st == NULL) {
			struct smarm__timer_ent e;
			heap_remove(n, n->tm_len - 1, &e);
			if (e.st == NULL)
				continue;
			if (e.st->cancelled) {
				if (popped_cancelled(e.st))
					free(e.st);
				continue;
			}
			map_take(n, e.st->id);
			st = e.st;
		}
		refresh_deadline(n);
		smarm__unlock(&n->tm_lock, SMARM__RANK_TIMERS);
		if (st == NULL)
			return;
		st->drop(st->ctx, st->payload);
		free(st);
	}
}

void smarm__timers_fini(struct smarm_node *n)
{
	smarm__timers_clear(n);
	free(n->tm_heap);
	free(n->tm_map);
	n->tm_heap = NULL;
	n->tm_map = NULL;
	n->tm_cap = n->tm_map_cap = n->tm_map_used = 0;
}
