/* SPDX-License-Identifier: MIT */
/*
 * parkstk.c - a parked actor's stack given back (SMARM_OPT_STACK_RELEASE,
 * issue 33). An actor that opted in and parks in a wait that keeps
 * nothing others use on its stack (a channel receive: msg/chan.c keeps
 * its record and the handed-over element in the actor's room, here) has
 * the live bytes of its stack, [sp, top), copied to a heap image and its
 * stack pages released with MADV_DONTNEED; before it next runs the bytes
 * are copied back to the same addresses. Dense stacks of such actors
 * come from chunks of their own (stack.c stk_dp) whose stacks share no
 * page, so no neighbour's canary or free-list link is released with
 * them; their own canary page is released too and rewritten first.
 *
 * Who releases: with SMARM_OPT_STACK_RELEASE_NS 0, the worker the actor
 * parks on, in the park hook, after its sp is saved and before it is
 * PARKED (as a hibernation gives its stack up, sched.c): nobody else can
 * resume it meanwhile (a wake finds it RUNNING and makes it NOTIFIED),
 * so nothing races. Otherwise the hook parks it HELD (below) and queues
 * (slot, seq, time) on the node's FIFO, and the monitor thread, at each
 * look, releases the stacks of those parked longer than the threshold.
 *
 * A slot's record (struct pstk, kept in its block of per-actor state,
 * subsys.h x_pstk, across tenants until the slot table is freed) holds
 * the state word:
 *   NONE   the stack is resident and s->sp is the saved sp (or the actor
 *          runs);
 *   HELD   parked, due a release by the sweep: s->sp is NULL and the
 *          saved sp is in ps_sp; the stack is resident;
 *   BUSY   the sweep owns the stack: copying it out, releasing it;
 *   OUT    released: s->sp is NULL, the bytes are in the image.
 * While s->sp is NULL every resume goes through sched.c first_run_make
 * (the branch every pick already takes for a first run), and stk_mode's
 * SMARM__STK_OUT flag (slot.h) sends its stack acquire down the one
 * rare branch it has, to smarm__pstk_resume: so the mode costs other
 * actors nothing there.
 *
 * Invariants:
 * PSTK-1 nothing outside a parked actor touches its stack while it is
 *        HELD, BUSY or OUT: the runtime marks only parks whose wait
 *        keeps its records off the stack (a channel receive in the
 *        room); the program promises the rest (the option's contract,
 *        smarm.h). Unmarked parks (select, mailboxes, joins, sleeps,
 *        locks, io) never release.
 * PSTK-2 one owner of a stack at a time: the resumer moves HELD to NONE
 *        and the sweep HELD to BUSY, each by one CAS, so exactly one
 *        wins; the resumer waits out BUSY (a copy and a madvise); OUT is
 *        left only by the resumer. The sweep's entries may be stale (the
 *        actor resumed, parked again, or ended, and the slot's next
 *        tenant parked): a CAS from HELD is safe on any record, since
 *        HELD always means "parked, sp saved, nobody touches the stack",
 *        so a stale entry at worst releases a later park early.
 * PSTK-3 the park count (s->stk_parks) reads UINT32_MAX only while a
 *        park is marked (the count saved in ps_parks) or once it has
 *        saturated: the hook's one compare sends both here and a plain
 *        park pays nothing more.
 * Ownership: the record's fields but ps_state are the owner's while it
 *        runs and the releaser's while it holds the stack (above); the
 *        room is the owner's. Locking: pk_lock (a leaf, TABLE rank)
 *        guards the node's FIFO; records need none (PSTK-2).
 * See: docs/architecture/stacks.md.
 */
#include "parkstk.h"

#include "actor.h"
#include "node.h"
#include "slot.h"
#include "stack.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { PS_NONE = 0, PS_HELD = 1, PS_BUSY = 2, PS_OUT = 3 };

struct pstk {
	_Atomic uint32_t ps_state; /* PS_* */
	uint32_t ps_parks;	   /* stk_parks while a park is marked */
	uint8_t ps_marked;	   /* the next park may release (PSTK-3) */
	_Atomic uint64_t ps_seq;   /* HELD parks: the sweep's entries */
	void *ps_sp;		   /* saved sp while s->sp is NULL */
	unsigned char *ps_img;	   /* [sp, top) while OUT */
	size_t ps_len;		   /* bytes in the image */
	size_t ps_cap;		   /* the image's capacity */
	void *ps_room;		   /* the owner's off-stack wait records */
	size_t ps_room_cap;
};

/* One entry of the sweep FIFO: a HELD park. */
struct pk_entry {
	uint32_t pe_idx; /* slot index */
	uint64_t pe_seq; /* its ps_seq then */
	uint64_t pe_t;	 /* park time, ns */
};

static struct pstk *pstk_of(const struct smarm__slot *s)
{
	struct smarm__ext *x = __atomic_load_n(&s->ext, __ATOMIC_ACQUIRE);
	return x != NULL ? x->x_pstk : NULL;
}

void *smarm__pstk_room(struct smarm__slot *me, size_t size)
{
	struct pstk *p = pstk_of(me);
	return p != NULL && p->ps_room_cap >= size ? p->ps_room : NULL;
}

bool smarm__pstk_room_grow(struct smarm__slot *me, size_t size)
{
	struct pstk *p = smarm__ext_pstk(me, sizeof *p);
	void *r;
	if (p == NULL)
		return false;
	if (p->ps_room_cap >= size)
		return true;
	r = malloc(size);
	if (r == NULL)
		return false;
	free(p->ps_room);
	p->ps_room = r;
	p->ps_room_cap = size;
	return true;
}

void smarm__pstk_mark(struct smarm__slot *me)
{
	struct pstk *p = pstk_of(me);
	p->ps_parks = me->stk_parks;
	p->ps_marked = 1;
	__atomic_store_n(&me->stk_parks, UINT32_MAX, __ATOMIC_RELAXED);
}

void smarm__pstk_unmark(struct smarm__slot *me)
{
	struct pstk *p = pstk_of(me);
	p->ps_marked = 0;
	__atomic_store_n(&me->stk_parks, p->ps_parks, __ATOMIC_RELAXED);
}

/*
 * Copy n bytes (a multiple of 8, 8-aligned) between a stack and its
 * image. The stack holds the redzones of instrumented frames, which
 * ASan's memcpy would report; the volatile accesses also keep the compiler
 * from making this a memcpy call.
 */
__attribute__((no_sanitize_address)) static void
copy_words(void *dst, const void *src, size_t n)
{
	volatile uint64_t *d = dst;
	const volatile uint64_t *s = src;
	for (size_t i = 0; i < n / 8; i++)
		d[i] = s[i];
}

/*
 * Release the stack of parked s (the caller owns it: PSTK-2), saved sp
 * in p->ps_sp: copy [sp, top) to the image and give back every whole
 * page of the usable stack from the one holding sp up, and a dense
 * stack's canary page. false: no memory for the image (it stays).
 */
static bool give_back(struct smarm_node *n, struct smarm__slot *s,
		      struct pstk *p)
{
	size_t page = smarm__page_size();
	uintptr_t sp = (uintptr_t)p->ps_sp;
	uintptr_t top = smarm__stack_top(s);
	uintptr_t low = top - s->stk_reserve;
	uintptr_t lo = sp & ~(uintptr_t)(page - 1);
	size_t len = top - sp;
	if (len > p->ps_cap) {
		size_t cap = (len + 255) & ~(size_t)255;
		unsigned char *img = malloc(cap);
		if (img == NULL)
			return false;
		free(p->ps_img);
		p->ps_img = img;
		p->ps_cap = cap;
	}
	copy_words(p->ps_img, (const void *)sp, len);
	p->ps_len = len;
	if (s->stk_guard == 0) {
		/* Dense (its own pages: stack.c stk_dp, or a mapping of
		 * its own): the canary page goes too. */
		if (lo <= low + page)
			lo = low;
		else
			madvise((void *)low, page, MADV_DONTNEED);
	}
	madvise((void *)lo, top - lo, MADV_DONTNEED);
	atomic_fetch_add_explicit(&n->pk_releases, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n->pk_out, 1, memory_order_relaxed);
	return true;
}

/* s->sp moves to its record (on), or back: slot.h SMARM__STK_OUT sends
 * the next pick to smarm__pstk_resume. Owner-written (the claim). */
static void stk_out(struct smarm__slot *s, bool on)
{
	unsigned m = s->stk_mode;
	__atomic_store_n(
		&s->stk_mode,
		(uint8_t)(on ? m | SMARM__STK_OUT : m & ~SMARM__STK_OUT),
		__ATOMIC_RELAXED);
}

/* The resumer's half: the bytes back where they were. */
static void take_back(struct smarm_node *n, struct smarm__slot *s,
		      struct pstk *p)
{
	uintptr_t top = smarm__stack_top(s);
	if (s->stk_guard == 0)
		smarm__stack_canary_put(s);
	copy_words((void *)(top - p->ps_len), p->ps_img, p->ps_len);
	atomic_fetch_sub_explicit(&n->pk_out, 1, memory_order_relaxed);
}

/* Out of line and cold: inlined into finish_switch, its frame cost
 * every park two register saves more (callgrind). */
__attribute__((noinline, cold)) void smarm__pstk_parked(struct smarm_node *n,
							struct smarm__slot *s)
{
	struct pstk *p = smarm__pstk_on(s) ? pstk_of(s) : NULL;
	uintptr_t sp = (uintptr_t)s->sp;
	if (p != NULL && p->ps_marked) {
		p->ps_marked = 0;
		__atomic_store_n(&s->stk_parks,
				 p->ps_parks < UINT32_MAX - 1 ? p->ps_parks + 1
							      : UINT32_MAX - 1,
				 __ATOMIC_RELAXED);
	} else {
		p = NULL; /* a saturated count: the hook's other half */
	}
	if (sp >= s->hwm && sp - s->hwm >= SMARM__SHRINK_THRESHOLD)
		smarm__stack_shrink(n, s);
	if (p == NULL)
		return;
	p->ps_sp = s->sp;
	if (n->pk_ns == 0) {
		/* At once, before the park is published (see above). */
		if (give_back(n, s, p)) {
			stk_out(s, true);
			s->sp = NULL;
			atomic_store_explicit(&p->ps_state, PS_OUT,
					      memory_order_release);
		}
		return;
	}
	{
		struct pk_entry *e;
		uint64_t seq =
			atomic_load_explicit(&p->ps_seq, memory_order_relaxed) +
			1;
		atomic_store_explicit(&p->ps_seq, seq, memory_order_relaxed);
		smarm__lock(&n->pk_lock, SMARM__RANK_TABLE);
		if (smarm__ring_len(&n->pk_fifo) == n->pk_fifo.rg_cap &&
		    smarm__ring_grow(&n->pk_fifo, sizeof *e,
				     smarm__ring_len(&n->pk_fifo) + 1,
				     64) != 0) {
			smarm__unlock(&n->pk_lock, SMARM__RANK_TABLE);
			return; /* no room: this park keeps its stack */
		}
		e = smarm__ring_push_back(&n->pk_fifo, sizeof *e);
		e->pe_idx = SMARM__PID_IDX(s->pid_lo);
		e->pe_seq = seq;
		e->pe_t = smarm__clock_ns();
		stk_out(s, true);
		s->sp = NULL;
		/* Release: the sweep's CAS sees the saved stack. */
		atomic_store_explicit(&p->ps_state, PS_HELD,
				      memory_order_release);
		smarm__unlock(&n->pk_lock, SMARM__RANK_TABLE);
	}
}

__attribute__((noinline, cold)) void smarm__pstk_resume(struct smarm_node *n,
							struct smarm__slot *s)
{
	struct pstk *p = pstk_of(s);
	for (;;) {
		uint32_t st = atomic_load_explicit(&p->ps_state,
						   memory_order_acquire);
		if (st == PS_BUSY) {
			smarm__cpu_relax(); /* the sweep is releasing it */
			continue;
		}
		if (st == PS_HELD &&
		    !atomic_compare_exchange_strong_explicit(
			    &p->ps_state, &st, PS_NONE, memory_order_acquire,
			    memory_order_acquire))
			continue; /* the sweep took it first */
		if (st == PS_OUT) {
			take_back(n, s, p);
			atomic_store_explicit(&p->ps_state, PS_NONE,
					      memory_order_relaxed);
		}
		SMARM_ASSERT(st == PS_HELD || st == PS_OUT);
		stk_out(s, false);
		s->sp = p->ps_sp;
		return;
	}
}

void smarm__pstk_sweep(struct smarm_node *n, uint64_t now)
{
	for (;;) {
		struct pk_entry e;
		struct smarm__slot *s;
		struct pstk *p;
		uint32_t held = PS_HELD;
		smarm__lock(&n->pk_lock, SMARM__RANK_TABLE);
		if (smarm__ring_len(&n->pk_fifo) == 0 ||
		    now - ((struct pk_entry *)smarm__ring_at(&n->pk_fifo,
							     sizeof e, 0))
					    ->pe_t <
			    n->pk_ns) {
			smarm__unlock(&n->pk_lock, SMARM__RANK_TABLE);
			return;
		}
		e = *(struct pk_entry *)smarm__ring_pop_front(&n->pk_fifo,
							      sizeof e);
		smarm__unlock(&n->pk_lock, SMARM__RANK_TABLE);
		/* The slot and its record outlive every entry (the FIFO
		 * is freed before the slot table): PSTK-2. */
		s = &n->slots[e.pe_idx];
		p = pstk_of(s);
		if (p == NULL ||
		    atomic_load_explicit(&p->ps_seq, memory_order_relaxed) !=
			    e.pe_seq ||
		    !atomic_compare_exchange_strong_explicit(
			    &p->ps_state, &held, PS_BUSY, memory_order_acquire,
			    memory_order_relaxed))
			continue; /* resumed since (a stale entry) */
		atomic_store_explicit(&p->ps_state,
				      give_back(n, s, p) ? PS_OUT : PS_HELD,
				      memory_order_release);
	}
}

void smarm__pstk_free(void *rec)
{
	struct pstk *p = rec;
	if (p == NULL)
		return;
	free(p->ps_img);
	free(p->ps_room);
	free(p);
}

void smarm__pstk_node_fini(struct smarm_node *n)
{
	smarm__ring_fini(&n->pk_fifo);
}
