/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the tracer's rings (trace.h): their memory, the out-of-line
 * put behind the inline emitters, the foreign threads' ring and the
 * consumer's take. The protocol and its invariants (TRACE-1..3) are
 * stated in trace.h; the writer that drains these rings is obs/trace.c.
 *
 * Ownership: the node's struct smarm__trace, from smarm__trace_enable
 * (at open) to smarm__trace_disable (at close).
 * Locking: none on a worker's ring (one producer, one consumer); the
 * foreign ring's producers take its tr_spin flag, a leaf held for one
 * record's copy.
 * See: docs/observability.md (Tracing).
 */
#include "trace.h"

#include "node.h"
#include "sched.h"

#include <stdlib.h>

__thread struct smarm__trace_ring *smarm__tls_trace
	__attribute__((tls_model("initial-exec")));

void smarm__trace_kick(struct smarm__trace *t)
{
	/* A load first: a kick already waiting costs no write to its line. */
	if (atomic_load_explicit(&t->tc_kick, memory_order_relaxed) == 0 &&
	    atomic_exchange_explicit(&t->tc_kick, 1, memory_order_release) == 0)
		smarm__futex_wake((uint32_t *)&t->tc_kick, 1);
}

void smarm__trace_wait(struct smarm__trace *t, uint64_t ns)
{
	if (atomic_load_explicit(&t->tc_kick, memory_order_acquire) == 0)
		smarm__futex_wait((uint32_t *)&t->tc_kick, 0, ns);
	atomic_store_explicit(&t->tc_kick, 0, memory_order_relaxed);
}

/* A full ring: count the drop (TRACE-1), never block; the next put
 * looks again. A leaf but for the kick's tail call, so that the drop
 * path saves no registers. */
static __attribute__((noinline)) void put_drop(struct smarm__trace_ring *r,
					       uint64_t h)
{
	uint64_t d = atomic_load_explicit(&r->tr_dropped, memory_order_relaxed);
	atomic_store_explicit(&r->tr_dropped, d + 1, memory_order_relaxed);
	r->tr_lim = h;
	smarm__trace_kick(r->tr_t); /* if the writer has not been */
}

bool smarm__trace_room_slow(struct smarm__trace_ring *r, uint64_t h)
{
	uint64_t tail = atomic_load_explicit(&r->tr_tail, memory_order_acquire);
	uint64_t used = h - tail;
	uint64_t next = h + (r->tr_mask + 1) / 16 + (r->tr_mask < 15);
	uint64_t full = tail + r->tr_mask + 1;
	uint64_t wrap = (h | r->tr_mask) + 1; /* TRACE-4 */
	uint64_t lim;
	if (used > r->tr_mask) {
		put_drop(r, h);
		return false;
	}
	if (used > r->tr_half) /* wake the writer, once until it takes it */
		smarm__trace_kick(r->tr_t);
	if (used <= r->tr_half)
		lim = tail + r->tr_half + 1;
	else /* past half: again a sixteenth on, never past full */
		lim = next < full ? next : full;
	r->tr_lim = lim < wrap ? lim : wrap;
	return true;
}

/* The record at head h, put at the limit (room found): its slot, and
 * the cursor set for the next head (TRACE-4). */
static inline struct smarm__trace_rec *ring_slot(struct smarm__trace_ring *r,
						 uint64_t h)
{
	r->tr_cur = &r->tr_buf[(h + 1) & r->tr_mask];
	return &r->tr_buf[h & r->tr_mask];
}

/* TRACE-1: room for one record, or a drop counted. Producer side. */
static inline struct smarm__trace_rec *ring_room(struct smarm__trace_ring *r,
						 uint64_t *head)
{
	uint64_t h = atomic_load_explicit(&r->tr_head, memory_order_relaxed);
	if (h >= r->tr_lim && !smarm__trace_room_slow(r, h))
		return NULL;
	*head = h;
	return ring_slot(r, h);
}

static inline void rec_fill(struct smarm__trace_rec *e, int kind, uint64_t a,
			    uint64_t b, uint32_t c, const char *name)
{
	e->tr_ts = smarm__cycles_fast();
	e->tr_a = a;
	e->tr_b = b;
	e->tr_c = c;
	e->tr_kind = (uint16_t)kind;
	e->tr_flags = 0;
	if (name != NULL) { /* else tr_name is left as it is: not read */
		size_t len = strnlen(name, SMARM__TRACE_NAME_MAX - 1);
		memcpy(e->tr_name, name, len);
		e->tr_name[len] = '\0';
		e->tr_flags = SMARM__TRF_NAME;
	}
}

void smarm__trace_put(struct smarm__trace_ring *r, int kind, uint64_t a,
		      uint64_t b, uint32_t c, const char *name)
{
	uint64_t h;
	struct smarm__trace_rec *e;
	if (name == NULL) { /* a spawn, an exit: the hot hooks' put */
		smarm__trace_put_hot(r, kind, a, b, c);
		return;
	}
	e = ring_room(r, &h);
	if (e == NULL)
		return;
	rec_fill(e, kind, a, b, c, name);
	/* Publish: the record before the head that covers it. */
	atomic_store_explicit(&r->tr_head, h + 1, memory_order_release);
}

/* smarm__trace_put_slow_x with room: out of line, so that the slow put
 * keeps nothing across a call. */
static __attribute__((noinline)) void
put_at_limit(struct smarm__trace_ring *r, int kind, uint64_t a, uint64_t b,
	     uint32_t c, uint16_t flags, uint64_t x, uint64_t h)
{
	struct smarm__trace_rec *e;
	if (!smarm__trace_room_slow(r, h))
		return;
	e = ring_slot(r, h);
	rec_fill(e, kind, a, b, c, NULL);
	e->tr_flags = flags;
	e->tr_x = x;
	atomic_store_explicit(&r->tr_head, h + 1, memory_order_release);
}

void smarm__trace_put_slow_x(struct smarm__trace_ring *r, int kind, uint64_t a,
			     uint64_t b, uint32_t c, uint16_t flags, uint64_t x)
{
	uint64_t h = atomic_load_explicit(&r->tr_head, memory_order_relaxed);
	/* Full: a drop, the common case while the writer lags. */
	if (h - atomic_load_explicit(&r->tr_tail, memory_order_acquire) >
	    r->tr_mask)
		put_drop(r, h);
	else
		put_at_limit(r, kind, a, b, c, flags, x, h);
}

void smarm__trace_put_slow(struct smarm__trace_ring *r, int kind, uint64_t a,
			   uint64_t b, uint32_t c)
{
	smarm__trace_put_slow_x(r, kind, a, b, c, 0, 0);
}

bool smarm__node_traces(const struct smarm_node *n)
{
	return n->trace != NULL;
}

struct smarm__trace *smarm__trace_of(const struct smarm_node *n)
{
	return n->trace;
}

void smarm__trace_node(struct smarm_node *n, int kind, uint64_t a, uint64_t b,
		       uint32_t c, const char *name)
{
	struct smarm__trace *t = n->trace;
	struct smarm__worker *w = smarm__worker_of(n);
	struct smarm__trace_ring *r;
	if (t == NULL)
		return;
	if (w != NULL && smarm__tls_trace != NULL) {
		smarm__trace_put(smarm__tls_trace, kind, a, b, c, name);
		return;
	}
	/* Not one of n's workers: the foreign ring, one producer at a time
	 * (the flag's acquire and release order the records between them). */
	r = &t->tc_ring[t->tc_n - 1];
	while (atomic_exchange_explicit(&r->tr_spin, 1, memory_order_acquire))
		smarm__cpu_relax();
	smarm__trace_put(r, kind, a, b, c, name);
	atomic_store_explicit(&r->tr_spin, 0, memory_order_release);
}

int smarm__trace_enable(struct smarm_node *n, uint32_t cap)
{
	struct smarm__trace *t;
	uint32_t nr = (uint32_t)n->workers_n + 1;
	SMARM_ASSERT(cap != 0 && (cap & (cap - 1)) == 0);
	t = aligned_alloc(64, sizeof *t);
	if (t != NULL)
		memset(t, 0, sizeof *t);
	if (t == NULL)
		return SMARM_ENOMEM;
	t->tc_ring = aligned_alloc(64, nr * sizeof *t->tc_ring);
	if (t->tc_ring == NULL) {
		free(t);
		return SMARM_ENOMEM;
	}
	memset(t->tc_ring, 0, nr * sizeof *t->tc_ring);
	t->tc_n = nr;
	for (uint32_t i = 0; i < nr; i++) {
		struct smarm__trace_ring *r = &t->tc_ring[i];
		r->tr_buf = aligned_alloc(64, (size_t)cap * sizeof *r->tr_buf);
		if (r->tr_buf == NULL) {
			while (i-- > 0)
				free(t->tc_ring[i].tr_buf);
			free(t->tc_ring);
			free(t);
			return SMARM_ENOMEM;
		}
		r->tr_mask = cap - 1;
		r->tr_half = cap / 2;
		r->tr_lim = r->tr_half + 1; /* <= cap: TRACE-4 */
		r->tr_cur = r->tr_buf;
		r->tr_t = t;
	}
	t->tc_t0 = smarm__cycles_fast();
	n->trace = t;
	return 0;
}

void smarm__trace_disable(struct smarm_node *n)
{
	struct smarm__trace *t = n->trace;
	if (t == NULL)
		return;
	n->trace = NULL;
	for (uint32_t i = 0; i < t->tc_n; i++)
		free(t->tc_ring[i].tr_buf);
	free(t->tc_ring);
	free(t);
}

uint32_t smarm__trace_take(struct smarm__trace_ring *r,
			   struct smarm__trace_rec *out, uint32_t max)
{
	uint64_t t = atomic_load_explicit(&r->tr_tail, memory_order_relaxed);
	uint64_t h = atomic_load_explicit(&r->tr_head, memory_order_acquire);
	uint32_t k = 0;
	while (t + k < h && k < max) {
		out[k] = r->tr_buf[(t + k) & r->tr_mask];
		k++;
	}
	/* TRACE-5: out of this CPU's caches before the producer writes
	 * the slots again (at most two runs: the ring may wrap). */
	if (k != 0) {
		uint64_t i = t & r->tr_mask;
		uint64_t run = r->tr_mask + 1 - i < k ? r->tr_mask + 1 - i : k;
		smarm__lines_evict(&r->tr_buf[i], run * sizeof *r->tr_buf);
		smarm__lines_evict(r->tr_buf, (k - run) * sizeof *r->tr_buf);
	}
	/* The copies before the slots are handed back to the producer. */
	atomic_store_explicit(&r->tr_tail, t + k, memory_order_release);
	return k;
}

uint64_t smarm__trace_dropped(const struct smarm__trace *t)
{
	uint64_t d = 0;
	for (uint32_t i = 0; i < t->tc_n; i++)
		d += atomic_load_explicit(&t->tc_ring[i].tr_dropped,
					  memory_order_relaxed);
	return d;
}
