/* SPDX-License-Identifier: MIT */
/*
 * monitor.c - monitors: one-shot Down messages from a target's end into
 * a channel its watcher named (smarm_monitor, smarm_demonitor, the
 * spawn option), and their removal when the watcher ends.
 *
 * A monitor is two records: on the target (ref, watcher, channel cell,
 * holding a runtime sender reference) and on the watcher (ref, target,
 * the caller's channel handle). Set: the watcher's record first, then
 * the target's under its cold lock (smarm__actor_ext_update; a child
 * being spawned, not yet published, takes it without): a target
 * found DONE gets its Down queued at once, with the exit record its slot
 * still holds (ended, not joined), its terminal record (signal.c INV-4)
 * or NOPROC; a channel that refuses it fails the call. Fire (the target's exit
 * hook): for each record on the target, under the watcher's cold lock, remove
 * the watcher's record and send the Down in the same hold (signal.c INV-2).
 * demonitor: remove the watcher's record (which decides: present means no Down
 * will be sent), then the target's, giving back its sender reference (INV-1).
 * The watcher's end removes each record it set from its target. A
 * monitor of oneself is both records on one actor and never fires. A Down
 * its channel refuses (no receiver left, out of memory) becomes an exit
 * signal to the watcher, CRASHED with the refusal as reason (INV-5).
 *
 * Ownership, locking, invariants: signal.c (INV-1..INV-3, INV-5).
 * See: docs/architecture/otp.md.
 */
#include "sig.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ watcher side */

/*
 * The watcher's records, in ref order, in sa_wrefs[sa_wfirst, sa_wend):
 * refs come from one node counter and a watcher sets its own monitors,
 * so a new record goes at the end (an older ref arriving late is moved
 * into its place). A removed record is marked dead and dropped when an
 * end passes it or a compaction does (when the end reaches the room);
 * both ends are always live records. Found by binary search after a look
 * at both ends: Downs mostly fire oldest first (the front) and a call's
 * monitor comes off newest first (the back), so most finds are O(1) and
 * the rest O(log n). In order, consecutive records share cache lines
 * and pages: a hashed table cost a cache and a TLB miss per insert and
 * per fire with 100,000 monitors in flight (docs/benchmarks.md).
 */

/* The first index in [lo, hi) whose ref is ref or above. */
static uint32_t wref_bound(const struct smarm__sig_wref *t, uint32_t lo,
			   uint32_t hi, uint64_t ref)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t[mid].sw_ref < ref)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct smarm__sig_wref *wref_find(struct smarm__sig_actor *a,
					 uint64_t ref)
{
	struct smarm__sig_wref *t = a->sa_wrefs;
	uint32_t lo = a->sa_wfirst, hi = a->sa_wend, i;
	if (lo == hi)
		return NULL;
	if (t[lo].sw_ref == ref)
		return &t[lo];
	if (t[hi - 1].sw_ref == ref)
		return &t[hi - 1];
	i = wref_bound(t, lo, hi, ref);
	if (i == hi || t[i].sw_ref != ref || t[i].sw_dead)
		return NULL;
	return &t[i];
}

/* Drop the dead records: the live ones move to the front, in order. */
static void wref_compact(struct smarm__sig_actor *a)
{
	uint32_t keep = 0;
	for (uint32_t i = a->sa_wfirst; i < a->sa_wend; i++)
		if (!a->sa_wrefs[i].sw_dead)
			a->sa_wrefs[keep++] = a->sa_wrefs[i];
	a->sa_wfirst = 0;
	a->sa_wend = keep;
}

/* A record of (ref, target, h); given field by field, not as a struct:
 * a 16-byte copy of a caller's block set by 8-byte stores just before
 * cannot be forwarded from them, and stalled every monitor set. */
static int wref_insert(struct smarm__sig_actor *a, uint64_t ref,
		       uint64_t target, smarm_chan_t *h)
{
	struct smarm__sig_wref *t;
	uint32_t i;
	if (a->sa_wend == a->sa_capwrefs) {
		/* Full to the end: compact, and grow if live records still
		 * fill half the room (so at least cap/2 inserts come before
		 * the next compaction: O(1) amortized). */
		wref_compact(a);
		if ((a->sa_wend + 1) * 2 > a->sa_capwrefs) {
			uint32_t cap = a->sa_capwrefs ? a->sa_capwrefs * 2 : 4;
			t = realloc(a->sa_wrefs, cap * sizeof *t);
			if (t == NULL)
				return SMARM_ENOMEM;
			a->sa_wrefs = t;
			a->sa_capwrefs = cap;
		}
	}
	t = a->sa_wrefs;
	i = a->sa_wend;
	if (i > a->sa_wfirst && t[i - 1].sw_ref > ref) {
		i = wref_bound(t, a->sa_wfirst, i, ref);
		memmove(&t[i + 1], &t[i], (a->sa_wend - i) * sizeof *t);
	}
	t[i].sw_ref = ref;
	t[i].sw_target = target;
	t[i].sw_h = h;
	t[i].sw_dead = false;
	a->sa_wend++;
	return 0;
}

enum { WREF_KEEP = 1024 }; /* room an emptied watcher keeps (32 KiB) */

/* Remove the record at e: dead, and the ends moved past the dead. */

static void wref_erase(struct smarm__sig_actor *a, struct smarm__sig_wref *e)
{
	struct smarm__sig_wref *t = a->sa_wrefs;
	e->sw_dead = true;
	while (a->sa_wfirst < a->sa_wend && t[a->sa_wfirst].sw_dead)
		a->sa_wfirst++;
	while (a->sa_wend > a->sa_wfirst && t[a->sa_wend - 1].sw_dead)
		a->sa_wend--;
	if (a->sa_wfirst == a->sa_wend) {
		a->sa_wfirst = a->sa_wend = 0;
		/* A burst is over: an idle watcher keeps no large room. */
		if (a->sa_capwrefs > WREF_KEEP) {
			free(a->sa_wrefs);
			a->sa_wrefs = NULL;
			a->sa_capwrefs = 0;
		}
	}
}

struct wref_arg {
	struct smarm_node *n;
	struct smarm__sig_wref w; /* in: ref (+ target, h to add) */
	bool found;		  /* out: the record was there */
	/* fire: send this Down while holding the watcher's lock */
	smarm_chan_t *cell;
	int how;
	intptr_t reason;
	int lost;      /* fire: out, the channel's refusal (0: queued) */
	bool released; /* fire: out, cell's sender reference went back
			  with the Down (else the caller gives it back) */
	/* flush: copies of the handles Downs went to (malloc'd) */
	smarm_chan_t **flush;
	uint32_t nflush;
};

/*
 * Every field set, one store each: a `= { 0 }` of this struct compiled
 * to `rep stos`, whose stores the callee's first loads then waited on
 * (store forwarding fails across it) on every monitor set and fire.
 */
static inline void wref_arg_init(struct wref_arg *wa, struct smarm_node *n,
				 uint64_t ref)
{
	wa->n = n;
	wa->w.sw_ref = ref;
	wa->w.sw_target = 0;
	wa->w.sw_h = NULL;
	wa->w.sw_dead = false;
	wa->found = false;
	wa->cell = NULL;
	wa->how = 0;
	wa->reason = 0;
	wa->lost = 0;
	wa->released = false;
	wa->flush = NULL;
	wa->nflush = 0;
}

/* Issue the monitor's ref, above the watcher's newest (so it goes at
 * the end), and insert its record. */
static int wref_add_fn(void **state, void *arg)
{
	struct wref_arg *wa = arg;
	struct smarm__sig_actor *a = *state;
	uint64_t newest = a->sa_wend > a->sa_wfirst
				  ? a->sa_wrefs[a->sa_wend - 1].sw_ref
				  : 0;
	uint64_t ref = smarm__ref_next(wa->n, newest);
	wa->w.sw_ref = ref;
	return wref_insert(a, ref, wa->w.sw_target, wa->w.sw_h) != 0
		       ? SMARM_ENOMEM
		       : 0;
}

/* Remember that a Down went into h, for SMARM_DEMONITOR_FLUSH. */
static void flush_note(struct smarm__sig_actor *a, smarm_chan_t *h)
{
	uint32_t keep = 0;
	/* A watcher's Downs mostly go to one channel: noted last. */
	if (a->sa_nflush > 0 && a->sa_flush[a->sa_nflush - 1] == h)
		return;
	for (uint32_t i = 0; i < a->sa_nflush; i++) {
		smarm_chan_t *c;
		if (a->sa_flush[i] == h)
			return;
		/* Prune handles of channels freed since. */
		if (smarm__chan_decode(a->sa_flush[i], &c) == 0)
			a->sa_flush[keep++] = a->sa_flush[i];
	}
	a->sa_nflush = keep;
	if (smarm__sig_vec_grow((void **)&a->sa_flush, &a->sa_capflush,
				a->sa_nflush + 1, sizeof *a->sa_flush) == 0)
		a->sa_flush[a->sa_nflush++] = h;
	/* Out of memory: a later flush may miss this channel's Down. */
}

/*
 * Take the record of wa->w.sw_ref off the watcher. Fire (wa->cell set):
 * send the Down in the same hold (INV-2) and note its channel. Flush
 * (wa->flush requested): copy out the channels Downs went to.
 */
static int wref_take_fn(void **state, void *arg)
{
	struct wref_arg *wa = arg;
	struct smarm__sig_actor *a = *state;
	/* Not found if its exit hook has it: it ends, nobody to tell. */
	struct smarm__sig_wref *e = wref_find(a, wa->w.sw_ref);
	if (e != NULL) {
		wa->w = *e;
		wref_erase(a, e);
		wa->found = true;
	}
	if (wa->found && wa->cell != NULL) {
		/* The sender reference the Down is sent on goes back in
		 * the same channel hold if it can (INV-1). */
		wa->lost = smarm__sig_send_ref(
			wa->cell, SMARM_SIGNAL_DOWN, wa->how, wa->w.sw_target,
			wa->w.sw_ref, wa->reason, &wa->released);
		if (wa->lost == 0)
			flush_note(a, wa->w.sw_h);
	}
	if (wa->flush != NULL && a->sa_nflush > 0) {
		smarm_chan_t **c = malloc(a->sa_nflush * sizeof *c);
		if (c != NULL) {
			for (uint32_t i = 0; i < a->sa_nflush; i++)
				c[i] = a->sa_flush[i];
			free(wa->flush);
			wa->flush = c;
			wa->nflush = a->sa_nflush;
		}
	}
	return 0;
}

/* ------------------------------------------------ target side */

struct mon_arg {
	struct smarm_node *n;
	struct smarm__sig_mon m; /* in: the entry (add) or its ref (take) */
	bool found;		 /* take: out */
};

/* Room for one more monitor entry: the inline one first, then a heap
 * array (the inline one is never handed to realloc). */
static int mons_reserve(struct smarm__sig_actor *a)
{
	struct smarm__sig_mon *m;
	if (a->sa_capmons == 0) {
		a->sa_mons = &a->sa_mon1;
		a->sa_capmons = 1;
	}
	if (a->sa_nmons < a->sa_capmons)
		return 0;
	if (a->sa_mons != &a->sa_mon1)
		return smarm__sig_vec_grow((void **)&a->sa_mons, &a->sa_capmons,
					   a->sa_nmons + 1, sizeof *a->sa_mons);
	m = malloc(4 * sizeof *m);
	if (m == NULL)
		return SMARM_ENOMEM;
	m[0] = a->sa_mon1;
	a->sa_mons = m;
	a->sa_capmons = 4;
	return 0;
}

static int mon_add_fn(void **state, void *arg)
{
	struct mon_arg *ma = arg;
	struct smarm__sig_actor *a = *state;
	if (mons_reserve(a) != 0)
		return SMARM_ENOMEM;
	a->sa_mons[a->sa_nmons++] = ma->m;
	smarm__gauge_add(ma->n, SMARM__GAUGE_MONITORS, 1);
	return 0;
}

static int mon_take_fn(void **state, void *arg)
{
	struct mon_arg *ma = arg;
	struct smarm__sig_actor *a = *state;
	/* None found if its exit hook has the entries (INV-1). */
	for (uint32_t i = 0; i < a->sa_nmons; i++) {
		if (a->sa_mons[i].sm_ref != ma->m.sm_ref)
			continue;
		ma->m = a->sa_mons[i];
		a->sa_mons[i] = a->sa_mons[--a->sa_nmons];
		ma->found = true;
		smarm__gauge_add(ma->n, SMARM__GAUGE_MONITORS, -1);
		break;
	}
	return 0;
}

/* Remove the target's entry of ref; give back its sender reference. */
static bool mon_remove(struct smarm_node *n, uint64_t target, uint64_t ref)
{
	struct mon_arg ma = { n, { ref, 0, NULL }, false };
	(void)smarm__actor_ext_update(n, target, SMARM__SUB_OTP, mon_take_fn,
				      &ma);
	if (ma.found)
		smarm__chan_sender_release(ma.m.sm_ch); /* INV-1 */
	return ma.found;
}

/* ------------------------------------------------ calls */

int smarm__sig_monitor(struct smarm_node *n, uint64_t me, uint64_t target,
		       bool child, smarm_chan_t *h, uint64_t *ref)
{
	struct wref_arg wa;
	struct mon_arg ma;
	smarm_chan_t *cell;
	int how = SMARM_EXIT_NOPROC;
	intptr_t reason = 0;
	int rc = smarm__sig_chan_take(h, &cell);

	if (rc != 0)
		return rc;
	wref_arg_init(&wa, n, 0); /* the ref is issued under the lock */
	wa.w.sw_target = target;
	wa.w.sw_h = h;
	/* The watcher (the caller, running) cannot end in between. */
	rc = smarm__actor_ext_update(n, me, SMARM__SUB_OTP, wref_add_fn, &wa);
	if (rc != 0) {
		smarm__chan_sender_release(cell);
		return rc;
	}
	ma.n = n;
	ma.m.sm_ref = wa.w.sw_ref;
	ma.m.sm_watcher = me;
	ma.m.sm_ch = cell;
	ma.found = false;
	rc = smarm__sig_update_far(n, target, child, mon_add_fn, &ma);
	if (rc == SMARM_ENOPROC) {
		/*
		 * Gone (or never was): its Down now, as it really ended if
		 * its slot still holds its exit record (ended, not joined)
		 * or a terminal record says so (INV-4), else NOPROC. A
		 * channel that refuses it fails the call (INV-5).
		 */
		if (smarm__actor_exit_of(n, target, &how, &reason) != 0)
			(void)smarm__sig_term_lookup(n, target, &how, &reason);
		wa.cell = cell;
		wa.how = how;
		wa.reason = reason;
		(void)smarm__actor_ext_update(n, me, SMARM__SUB_OTP,
					      wref_take_fn, &wa);
		if (!wa.released)
			smarm__chan_sender_release(cell);
		if (wa.lost != 0)
			return wa.lost;
		rc = 0;
	} else if (rc != 0) {
		(void)smarm__actor_ext_update(n, me, SMARM__SUB_OTP,
					      wref_take_fn, &wa);
		smarm__chan_sender_release(cell);
		return rc;
	}
	if (ref != NULL)
		*ref = wa.w.sw_ref;
	return 0;
}

static bool down_match(const void *elem, void *arg)
{
	const smarm_signal_t *sig = elem;
	return sig->kind == SMARM_SIGNAL_DOWN && sig->ref == *(uint64_t *)arg;
}

int smarm__sig_demonitor(struct smarm_node *n, uint64_t me, uint64_t ref,
			 int flags)
{
	struct wref_arg wa;
	bool flush = (flags & SMARM_DEMONITOR_FLUSH) != 0;

	wref_arg_init(&wa, n, ref);
	if (flush)
		wa.flush = malloc(sizeof *wa.flush); /* replaced by a copy */
	(void)smarm__actor_ext_update(n, me, SMARM__SUB_OTP, wref_take_fn, &wa);
	if (wa.found) {
		/* We won (INV-2): no Down of ref was or will be sent. */
		(void)mon_remove(n, wa.w.sw_target, ref);
	} else if (flush) {
		/* It fired: its Down is in one of these channels. */
		for (uint32_t i = 0; i < wa.nflush; i++) {
			smarm_chan_t *c;
			if (smarm__chan_cell(wa.flush[i], &c) == 0)
				(void)smarm__chan_remove_if(c, wa.flush[i],
							    down_match, &ref);
		}
	}
	free(wa.flush);
	return wa.found ? 0 : SMARM_ENOENT;
}

/*
 * The exit hook's part (signal.c): fire the monitors on the dead actor,
 * then remove from their targets the monitors it had set.
 */
void smarm__sig_monitors_exit(struct smarm_node *n, uint64_t pid,
			      struct smarm__sig_actor *a, int how,
			      intptr_t reason)
{
	for (uint32_t i = 0; i < a->sa_nmons; i++) {
		struct smarm__sig_mon *m = &a->sa_mons[i];
		struct wref_arg wa;
		if (m->sm_watcher == pid) {
			/* A monitor of itself never fires (OTP). */
			smarm__chan_sender_release(m->sm_ch); /* INV-1 */
			smarm__gauge_add(n, SMARM__GAUGE_MONITORS, -1);
			continue;
		}
		wref_arg_init(&wa, n, m->sm_ref);
		wa.cell = m->sm_ch;
		wa.how = how;
		wa.reason = reason;
		/* Sends under the watcher's lock if it still waits (INV-2). */
		(void)smarm__actor_ext_update(n, m->sm_watcher, SMARM__SUB_OTP,
					      wref_take_fn, &wa);
		if (!wa.released)
			smarm__chan_sender_release(m->sm_ch); /* INV-1 */
		smarm__gauge_add(n, SMARM__GAUGE_MONITORS, -1);
		/* Its channel refused the Down: the watcher is told, by an
		 * exit signal from the target (INV-5), outside its lock. */
		if (wa.lost != 0)
			(void)smarm__sig_exit_signal(n, m->sm_watcher, pid,
						     SMARM_EXIT_CRASHED,
						     wa.lost, false);
	}
	a->sa_nmons = 0;
	for (uint32_t i = a->sa_wfirst; i < a->sa_wend; i++)
		if (!a->sa_wrefs[i].sw_dead && a->sa_wrefs[i].sw_target != pid)
			(void)mon_remove(n, a->sa_wrefs[i].sw_target,
					 a->sa_wrefs[i].sw_ref);
	a->sa_wfirst = a->sa_wend = 0;
}

/* ------------------------------------------------ queries */

struct mon_list_arg {
	bool watchers;	  /* in: who watches it (else: whom it watches) */
	smarm_pid_t *buf; /* in: room for cap pids */
	size_t cap;
	size_t n; /* out: how many there are */
};

static int mon_list_fn(void **state, void *arg)
{
	struct mon_list_arg *la = arg;
	const struct smarm__sig_actor *a = *state;
	la->n = 0;
	if (la->watchers) {
		for (uint32_t i = 0; i < a->sa_nmons; i++, la->n++)
			if (la->n < la->cap)
				la->buf[la->n].id = a->sa_mons[i].sm_watcher;
		return 0;
	}
	for (uint32_t i = a->sa_wfirst; i < a->sa_wend; i++) {
		if (a->sa_wrefs[i].sw_dead)
			continue;
		if (la->n < la->cap)
			la->buf[la->n].id = a->sa_wrefs[i].sw_target;
		la->n++;
	}
	return 0;
}

int smarm__sig_monitor_list(struct smarm_node *n, uint64_t pid, bool watchers,
			    smarm_pid_t *buf, size_t cap, size_t *count)
{
	struct mon_list_arg la = { watchers, buf, cap, 0 };
	int rc = smarm__actor_ext_update(n, pid, SMARM__SUB_OTP, mon_list_fn,
					 &la);
	*count = la.n;
	return rc;
}
