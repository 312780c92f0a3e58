/* SPDX-License-Identifier: MIT */
/*
 * snapshot.c - introspection: snapshots of every actor of a node, one
 * actor's record, its links and monitors, and the trees folded from a
 * snapshot.
 *
 * How a snapshot is read, without stopping the world (as smarm does,
 * ../shared/spec/obs_bench.md §1.5, in the other order):
 *   1. the core walks the slot table (smarm__actor_peek_all) and hands
 *      each tenant to peek_one under that slot's cold lock, one at a
 *      time: what the core keeps (pid, parent, state, wait, stack), and
 *      the OTP and behaviour state attached to the actor (links,
 *      monitors, trap channel; a server's behaviour and plugin, a
 *      machine's state, the depth and bytes of its mailbox's bands,
 *      each band's channel lock taken in turn: SLOT rank, then
 *      CHANNEL; a supervisor's restart count), and how much of its
 *      stack is resident (mincore: the kernel is asked, the stack is
 *      not read), copied into a compact record;
 *   2. the registry's read lock is taken once and its table of actors
 *      walked (reg_pass): for each actor in the snapshot, its names and
 *      the depth of the mailboxes it published, added to a server's
 *      inbox from step 1 (each channel's lock taken in turn: REG rank,
 *      then CHANNEL), and whether one of them
 *      is a supervisor's;
 *   3. with no lock held (fault_pass), each server's plugin's fault
 *      count, once per plugin.
 * A node that keeps actor statistics (SMARM_OPT_ACTOR_STATS) hands them
 * over in the peek too; they go to an array parallel to the records
 * (s_st), made on the first, so a node without them pays nothing here.
 * No two slot locks are ever held, nor a slot lock with the registry's.
 * A record is coherent with its pid: the slot lock keeps the tenant
 * from ending or the slot from being reclaimed during step 1, and step
 * 2 matches whole pids (an actor that ended between the steps has no
 * records left, and its slot's next tenant is not in the snapshot).
 *
 * Ownership: a snapshot belongs to its taker; nothing in it points into
 * the runtime.
 * Locking: see above; a snapshot itself is immutable once taken.
 * Invariants:
 *   INV-1 records are in slot order, so pid-index order: lookups by pid
 *         are binary searches (smarm__obs_find).
 *   INV-2 every string in a record was copied under the lock that keeps
 *         its source alive (the slot's cold lock for labels, behaviour
 *         contexts and their plugins).
 *   INV-3 a tree fold visits each record at most once (a SPAWN fold
 *         exactly once): children lists are built from the snapshot's
 *         parent edges, each record being the child of at most one
 *         parent, and the walk is iterative (any depth).
 * See: docs/observability.md.
 */
#include "obs.h"

#include "../behaviour/bhv.h"
#include "../msg/msg.h"
#include "../otp/reg.h"
#include "../otp/sig.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

_Static_assert(sizeof(struct obs_rec) == 56, "a record outgrew 56 bytes");
_Static_assert(sizeof(smarm_actor_info_t) == SMARM_ACTOR_INFO_SIZE_V3,
	       "the version 3 record changed: bump SMARM_OBS_FORMAT_VERSION");
_Static_assert(offsetof(smarm_actor_info_t, cpu_ns) == SMARM_ACTOR_INFO_SIZE_V1,
	       "version 2 begins where version 1 ends");
_Static_assert(offsetof(smarm_actor_info_t, mailbox_band) ==
		       SMARM_ACTOR_INFO_SIZE_V2,
	       "version 3 begins where version 2 ends");
_Static_assert(SMARM_OBS_BANDS == BHV_PEEK_BANDS,
	       "a record has a count for every band the behaviours have");

/* The message type of a supervisor's control mailbox (otp/sup.c). */
static const char sup_ctl_type[] = "smarm.sup.ctl";

/* ------------------------------------------------------- the record array */

/*
 * The records of a large snapshot are mapped on their own, 2 MiB
 * aligned, with transparent huge pages asked for: first touches of a
 * million records (96 MB) were half a snapshot's time in page faults
 * (a fault per 4 KiB page), and huge pages take 48 of them. A small
 * one is malloc'd.
 */
#define OBS_BIG (8u << 20)
#define OBS_HUGE (2u << 20)

static size_t big_len(size_t bytes)
{
	return (bytes + OBS_HUGE - 1) & ~(size_t)(OBS_HUGE - 1);
}

static void *recs_alloc(size_t n)
{
	size_t bytes = n * sizeof(struct obs_rec), len, lead;
	char *m;
	if (bytes < OBS_BIG)
		return malloc(bytes);
	len = big_len(bytes);
	m = mmap(NULL, len + OBS_HUGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	lead = (OBS_HUGE - ((uintptr_t)m & (OBS_HUGE - 1))) & (OBS_HUGE - 1);
	if (lead > 0)
		munmap(m, lead);
	munmap(m + lead + len, OBS_HUGE - lead);
	(void)madvise(m + lead, len, MADV_HUGEPAGE); /* a hint */
	return m + lead;
}

static void recs_free(void *p, size_t n)
{
	size_t bytes = n * sizeof(struct obs_rec);
	if (p == NULL)
		return;
	if (bytes < OBS_BIG)
		free(p);
	else
		munmap(p, big_len(bytes));
}

/* Room for cap records in s (keeping the n it holds): 0 or ENOMEM. */
static int recs_grow(struct obs_snap *s, size_t cap)
{
	struct obs_rec *r = recs_alloc(cap);
	if (r == NULL)
		return SMARM_ENOMEM;
	if (s->s_st != NULL) {
		struct obs_stat *st = realloc(s->s_st, cap * sizeof *st);
		if (st == NULL) {
			recs_free(r, cap);
			return SMARM_ENOMEM;
		}
		s->s_st = st;
	}
	if (s->s_n > 0)
		memcpy(r, s->s_rec, s->s_n * sizeof *r);
	recs_free(s->s_rec, s->s_cap);
	s->s_rec = r;
	s->s_cap = cap;
	return 0;
}

/* ------------------------------------------------------------ records */

static void text_copy(char *d, size_t cap, const char *src)
{
	size_t i = 0;
	for (; src != NULL && src[i] != '\0' && i < cap - 1; i++)
		d[i] = src[i];
	d[i] = '\0';
}

/* r's extra record, made on first use (zeroed): NULL out of memory. */
static struct obs_extra *extra_of(struct obs_snap *s, struct obs_rec *r)
{
	if (r->or_x != OBS_NO_X)
		return &s->s_x[r->or_x];
	if (s->s_nx == s->s_capx) {
		size_t cap = s->s_capx ? 2 * s->s_capx : 64;
		struct obs_extra *x = realloc(s->s_x, cap * sizeof *x);
		if (x == NULL)
			return NULL;
		s->s_x = x;
		s->s_capx = cap;
	}
	r->or_x = (uint32_t)s->s_nx;
	memset(&s->s_x[s->s_nx], 0, sizeof s->s_x[0]);
	return &s->s_x[s->s_nx++];
}

static uint32_t u32_of(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The monitors a actor set and that are not removed yet. */
static uint32_t wrefs_live(const struct smarm__sig_actor *a)
{
	uint32_t k = 0;
	for (uint32_t i = a->sa_wfirst; i < a->sa_wend; i++)
		k += !a->sa_wrefs[i].sw_dead;
	return k;
}

/* A parked actor's wait, from what its waiting code said (slot.h). */
static uint8_t wait_of(const struct smarm__peek *pk)
{
	switch (pk->pk_wait_on) {
	case SMARM__WON_CALL:
		return SMARM_WAIT_CALL;
	case SMARM__WON_JOIN:
		return SMARM_WAIT_JOIN;
	case SMARM__WON_MUTEX:
		return SMARM_WAIT_MUTEX;
	case SMARM__WON_IO:
		return SMARM_WAIT_IO;
	case SMARM__WON_SLEEP:
		return SMARM_WAIT_SLEEP;
	default:
		return pk->pk_timed ? SMARM_WAIT_TIMED : SMARM_WAIT_BLOCKED;
	}
}

/*
 * Fill r (and its extra record, in s) from one peek: under the tenant's
 * cold lock (INV-2). SMARM_ENOMEM if its extra record could not be kept.
 */
static int rec_fill(struct obs_snap *s, struct obs_rec *r,
		    const struct smarm__peek *pk)
{
	const struct smarm__sig_actor *sa = pk->pk_ext[SMARM__SUB_OTP];
	const void *cx = pk->pk_ext[SMARM__SUB_BEHAVIOUR];
	const char *name = pk->pk_name != NULL ? pk->pk_name : "";
	uint32_t links = 0, mons = 0, monby = 0;
	struct obs_extra *x;

	r->or_pid = pk->pk_pid;
	r->or_parent = pk->pk_parent;
	r->or_waits = pk->pk_waits;
	r->or_reserve = u32_of(pk->pk_stk_reserve);
	r->or_guard = u32_of(pk->pk_stk_guard);
	r->or_hwm = u32_of(pk->pk_stk_hwm);
	r->or_touched = u32_of(pk->pk_stk_touched);
	r->or_mbox = -1;
	r->or_x = OBS_NO_X;
	r->or_flags = 0;
	r->or_state = (uint8_t)pk->pk_state; /* the public values */
	r->or_wait = SMARM_WAIT_NONE;
	r->or_mode = pk->pk_stk_mode;
	if (pk->pk_parent == 0)
		r->or_flags |= SMARM_ACTOR_ROOT;
	if (pk->pk_exiting)
		r->or_flags |= SMARM_ACTOR_EXITING;
	else if (pk->pk_stop != SMARM__STOP_NONE)
		r->or_flags |= SMARM_ACTOR_STOP_PENDING;
	if (pk->pk_state == SMARM_ACTOR_PARKED)
		r->or_wait = wait_of(pk);
	if (sa != NULL) {
		links = sa->sa_nlinks;
		mons = wrefs_live(sa);
		monby = sa->sa_nmons;
		if (sa->sa_trap != NULL)
			r->or_flags |= SMARM_ACTOR_TRAPS_EXITS;
	}
	if (cx == NULL && name[0] == '\0' && (links | mons | monby) == 0 &&
	    pk->pk_deadline == 0 && pk->pk_stk_shrinks == 0 &&
	    pk->pk_wait_target == 0 && (sa == NULL || sa->sa_restarts == 0))
		return 0; /* most actors */
	x = extra_of(s, r);
	if (x == NULL)
		return SMARM_ENOMEM;
	x->ox_deadline = pk->pk_deadline;
	x->ox_wait_on = r->or_wait >= SMARM_WAIT_CALL ? pk->pk_wait_target : 0;
	x->ox_links = links;
	x->ox_mons = mons;
	x->ox_monby = monby;
	x->ox_shrinks = pk->pk_stk_shrinks;
	x->ox_restarts = sa != NULL ? sa->sa_restarts : 0;
	text_copy(x->ox_name, sizeof x->ox_name, name);
	if (cx != NULL) {
		struct bhv_peek bp;
		smarm__bhv_peek(cx, &bp);
		r->or_flags |= bp.bp_kind == BHV_GEN_STATEM
				       ? SMARM_ACTOR_MACHINE
				       : SMARM_ACTOR_SERVER;
		text_copy(x->ox_beh, sizeof x->ox_beh, bp.bp_name);
		text_copy(x->ox_plugin, sizeof x->ox_plugin, bp.bp_plugin);
		text_copy(x->ox_state, sizeof x->ox_state, bp.bp_state);
		memcpy(x->ox_band, bp.bp_band, sizeof x->ox_band);
		x->ox_mbytes = bp.bp_bytes;
		x->ox_text = bp.bp_text;
		/* Its inbox, found through its context (no registry record:
		 * gen_server.c INV-5); a batch taken counts in it. */
		r->or_mbox = (int32_t)bp.bp_band[SMARM_BAND_INBOX];
	}
	return 0;
}

struct walk {
	struct obs_snap *w_s;
};

static int peek_one(const struct smarm__peek *pk, void *arg)
{
	struct obs_snap *s = ((struct walk *)arg)->w_s;
	/* Rare: actors were spawned during the walk. Under a slot lock,
	 * but the allocator takes no runtime lock. */
	if (s->s_n == s->s_cap && recs_grow(s, 2 * s->s_cap + 64) != 0)
		return SMARM_ENOMEM;
	if (rec_fill(s, &s->s_rec[s->s_n], pk) != 0)
		return SMARM_ENOMEM;
	if (pk->pk_stats) {
		struct obs_stat *st;
		if (s->s_st == NULL &&
		    (s->s_st = malloc(s->s_cap * sizeof *s->s_st)) == NULL)
			return SMARM_ENOMEM;
		st = &s->s_st[s->s_n];
		st->os_cpu = pk->pk_cpu;
		st->os_runs = pk->pk_runs;
		st->os_rqwait = pk->pk_rqwait;
		st->os_in = pk->pk_msg_in;
		st->os_out = pk->pk_msg_out;
		st->os_psafe = pk->pk_pre_safe;
		st->os_pasync = pk->pk_pre_async;
	}
	s->s_n++;
	return 0;
}

/*
 * Step 2 for one actor's registry records (under the registry's read
 * lock): names, mailbox depth, supervisor. r matched ra's pid.
 */
static void reg_fill(struct obs_snap *s, struct obs_rec *r,
		     const struct smarm__reg_actor *ra)
{
	uint32_t names = 0;
	int64_t depth = r->or_mbox; /* a server's inbox (rec_fill), or -1 */
	for (const struct smarm__rlist *l = ra->ra_names.l_next;
	     l != &ra->ra_names; l = l->l_next)
		names++;
	for (const struct smarm__rlist *l = ra->ra_mboxes.l_next;
	     l != &ra->ra_mboxes; l = l->l_next) {
		const struct smarm__reg_mbox *mb =
			SMARM__CONTAINER(l, struct smarm__reg_mbox, mb_link);
		size_t len = 0;
		/* The record holds a sender reference: the channel lives. */
		if (smarm__chan_len(mb->mb_ch, mb->mb_h, &len) == 0)
			depth = (depth < 0 ? 0 : depth) + (int64_t)len;
		else if (depth < 0)
			depth = 0;
		if (strcmp(mb->mb_type->mt_name, sup_ctl_type) == 0 &&
		    !(r->or_flags & SMARM_ACTOR_SUPERVISOR)) {
			struct obs_extra *x = extra_of(s, r);
			r->or_flags |= SMARM_ACTOR_SUPERVISOR;
			if (x != NULL && x->ox_beh[0] == '\0')
				text_copy(x->ox_beh, sizeof x->ox_beh,
					  "supervisor");
		}
	}
	if (names > 0) {
		struct obs_extra *x = extra_of(s, r);
		if (x != NULL)
			x->ox_names = names;
	}
	r->or_mbox = depth > INT32_MAX ? INT32_MAX : (int32_t)depth;
}

/* The wait of a parked server, machine or supervisor is its mailbox
 * (unless its code said otherwise: a call from a callback, a sleep). */
static void wait_fix(struct obs_rec *r)
{
	if (r->or_state == SMARM_ACTOR_PARKED &&
	    (r->or_wait == SMARM_WAIT_BLOCKED ||
	     r->or_wait == SMARM_WAIT_TIMED) &&
	    (r->or_flags & (SMARM_ACTOR_SERVER | SMARM_ACTOR_MACHINE |
			    SMARM_ACTOR_SUPERVISOR)))
		r->or_wait = SMARM_WAIT_RECEIVE;
}

/*
 * Step 3, with no lock held: each server's plugin's fault count, asked
 * once per plugin (a snapshot has many servers of few plugins).
 */
static void fault_pass(struct obs_snap *s)
{
	struct {
		const void *text;
		uint32_t faults;
	} seen[8];
	size_t nseen = 0;
	for (size_t i = 0; i < s->s_nx; i++) {
		struct obs_extra *x = &s->s_x[i];
		size_t k = 0;
		if (x->ox_text == NULL)
			continue;
		while (k < nseen && seen[k].text != x->ox_text)
			k++;
		if (k == nseen) {
			uint32_t f = u32_of(smarm__bhv_text_faults(x->ox_text));
			if (nseen < sizeof seen / sizeof seen[0]) {
				seen[nseen].text = x->ox_text;
				seen[nseen++].faults = f;
			}
			x->ox_faults = f;
		} else {
			x->ox_faults = seen[k].faults;
		}
	}
}

/* Step 2 over the whole snapshot. */
static void reg_pass(struct smarm_node *n, struct obs_snap *s)
{
	struct smarm__reg *rg = smarm__reg_of(n);
	if (rg != NULL && s->s_n > 0) {
		smarm__reg_rdlock(rg);
		for (size_t b = 0;
		     rg->rg_actors.ht_b != NULL && b <= rg->rg_actors.ht_mask;
		     b++) {
			for (struct smarm__htab_node *h = rg->rg_actors.ht_b[b];
			     h != NULL; h = h->hn_next) {
				const struct smarm__reg_actor *ra =
					SMARM__CONTAINER(
						h, struct smarm__reg_actor,
						ra_h);
				size_t i = smarm__obs_find(s, ra->ra_pid);
				if (i != SIZE_MAX)
					reg_fill(s, &s->s_rec[i], ra);
			}
		}
		smarm__reg_rdunlock(rg);
	}
	for (size_t i = 0; i < s->s_n; i++)
		wait_fix(&s->s_rec[i]);
}

int smarm__obs_snapshot(struct smarm_node *n, struct obs_snap **out)
{
	struct obs_snap *s = calloc(1, sizeof *s);
	int64_t live = 0, unjoined = 0;
	struct walk w;
	int rc;
	if (s == NULL)
		return SMARM_ENOMEM;
	/* Room for what is there now, and some: a walk rarely grows it. */
	(void)smarm_node_get_int(n, SMARM_STAT_LIVE_ACTORS, &live);
	(void)smarm_node_get_int(n, SMARM_STAT_ENDED_UNJOINED, &unjoined);
	s->s_cap =
		(size_t)(live + unjoined) + (size_t)(live + unjoined) / 8 + 16;
	s->s_rec = recs_alloc(s->s_cap);
	if (s->s_rec == NULL) {
		free(s);
		return SMARM_ENOMEM;
	}
	w.w_s = s;
	rc = smarm__actor_peek_all(n, peek_one, &w);
	if (rc != 0) {
		smarm__obs_snapshot_free(s);
		return rc;
	}
	reg_pass(n, s);
	fault_pass(s);
	*out = s;
	return 0;
}

void smarm__obs_snapshot_free(struct obs_snap *s)
{
	if (s == NULL)
		return;
	recs_free(s->s_rec, s->s_cap);
	free(s->s_x);
	free(s->s_st);
	free(s);
}

size_t smarm__obs_find(const struct obs_snap *s, uint64_t pid)
{
	uint32_t idx = (uint32_t)pid & 0xffffffu; /* the slot index */
	size_t lo = 0, hi = s->s_n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t m = (uint32_t)s->s_rec[mid].or_pid & 0xffffffu;
		if (m < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->s_n && s->s_rec[lo].or_pid == pid)
		return lo;
	return SIZE_MAX;
}

void smarm__obs_expand(const struct obs_snap *s, size_t i,
		       smarm_actor_info_t *out)
{
	const struct obs_rec *r = &s->s_rec[i];
	smarm_actor_info_t v;
	size_t size = out->size < sizeof v ? out->size : sizeof v;
	memset(&v, 0, sizeof v);
	v.size = (uint32_t)size;
	v.version = size < SMARM_ACTOR_INFO_SIZE_V2 ? 1
		    : size < SMARM_ACTOR_INFO_SIZE_V3
			    ? 2
			    : SMARM_OBS_FORMAT_VERSION;
	v.pid.id = r->or_pid;
	v.parent.id = r->or_parent;
	v.state = r->or_state;
	v.wait = r->or_wait;
	v.flags = r->or_flags;
	v.stack_mode = r->or_mode;
	v.waits = r->or_waits;
	v.mailbox_depth = r->or_mbox;
	v.stack_reserve = r->or_reserve;
	v.stack_guard = r->or_guard;
	v.stack_high_water = r->or_hwm;
	v.stack_touched = r->or_touched;
	if (r->or_x != OBS_NO_X) {
		const struct obs_extra *x = &s->s_x[r->or_x];
		v.names = x->ox_names;
		v.links = x->ox_links;
		v.monitors = x->ox_mons;
		v.monitored_by = x->ox_monby;
		v.wait_deadline_ns = x->ox_deadline;
		v.stack_shrinks = x->ox_shrinks;
		memcpy(v.name, x->ox_name, sizeof v.name);
		memcpy(v.behaviour, x->ox_beh, sizeof v.behaviour);
		memcpy(v.plugin, x->ox_plugin, sizeof v.plugin);
		memcpy(v.state_name, x->ox_state, sizeof v.state_name);
		v.wait_on = x->ox_wait_on;
		memcpy(v.mailbox_band, x->ox_band, sizeof v.mailbox_band);
		v.mailbox_bytes = x->ox_mbytes;
		v.restarts = x->ox_restarts;
		v.plugin_faults = x->ox_faults;
	}
	if (size < SMARM_ACTOR_INFO_SIZE_V2 && v.wait >= SMARM_WAIT_CALL)
		v.wait = v.wait_deadline_ns != 0 ? SMARM_WAIT_TIMED
						 : SMARM_WAIT_BLOCKED;
	if (s->s_st != NULL) {
		const struct obs_stat *st = &s->s_st[i];
		v.cpu_ns = smarm__cycles_to_ns(st->os_cpu);
		v.runs = st->os_runs;
		v.runq_wait_ns = smarm__cycles_to_ns(st->os_rqwait);
		v.messages_in = st->os_in;
		v.messages_out = st->os_out;
		v.preempt_safe = st->os_psafe;
		v.preempt_async = st->os_pasync;
	}
	memcpy(out, &v, size);
}

/* ---------------------------------------------------------- one actor */

int smarm__obs_actor_info(struct smarm_node *n, uint64_t pid,
			  smarm_actor_info_t *out)
{
	/* A snapshot of one: the same two steps, on one slot. */
	struct obs_snap one = { 0 };
	struct obs_rec rec;
	struct walk w = { &one };
	struct smarm__reg *rg = smarm__reg_of(n);
	int rc;

	one.s_rec = &rec;
	one.s_cap = 1;
	rc = smarm__actor_peek(n, pid, peek_one, &w);
	if (rc != 0) {
		free(one.s_x);
		free(one.s_st);
		return rc;
	}
	if (rg != NULL) {
		const struct smarm__reg_actor *ra;
		smarm__reg_rdlock(rg);
		ra = smarm__reg_actor_find(rg, pid);
		if (ra != NULL)
			reg_fill(&one, &rec, ra);
		smarm__reg_rdunlock(rg);
	}
	wait_fix(&rec);
	fault_pass(&one);
	smarm__obs_expand(&one, 0, out);
	free(one.s_x);
	free(one.s_st);
	return 0;
}

struct rel_arg {
	int kind;
	smarm_pid_t *buf;
	size_t cap, n;
};

static void rel_put(struct rel_arg *ra, uint64_t pid)
{
	if (ra->n < ra->cap)
		ra->buf[ra->n].id = pid;
	ra->n++;
}

static int rel_fn(const struct smarm__peek *pk, void *arg)
{
	struct rel_arg *ra = arg;
	const struct smarm__sig_actor *a = pk->pk_ext[SMARM__SUB_OTP];
	ra->n = 0;
	if (pk->pk_state == SMARM_ACTOR_DONE)
		return SMARM_ENOPROC; /* its links and monitors are gone */
	if (a == NULL)
		return 0;
	switch (ra->kind) {
	case SMARM_REL_LINKS:
		for (uint32_t i = 0; i < a->sa_nlinks; i++)
			rel_put(ra, a->sa_links[a->sa_lfirst + i]);
		break;
	case SMARM_REL_MONITORS:
		for (uint32_t i = a->sa_wfirst; i < a->sa_wend; i++)
			if (!a->sa_wrefs[i].sw_dead)
				rel_put(ra, a->sa_wrefs[i].sw_target);
		break;
	default:
		for (uint32_t i = 0; i < a->sa_nmons; i++)
			rel_put(ra, a->sa_mons[i].sm_watcher);
		break;
	}
	return 0;
}

int smarm__obs_relations(struct smarm_node *n, uint64_t pid, int kind,
			 smarm_pid_t *buf, size_t cap, size_t *count)
{
	struct rel_arg ra = { kind, buf, cap, 0 };
	int rc = smarm__actor_peek(n, pid, rel_fn, &ra);
	*count = rc == 0 ? ra.n : 0;
	return rc;
}

/* --------------------------------------------------------------- trees */

#define OBS_NONE SIZE_MAX

struct tree {
	size_t *t_parent; /* record index of each one's parent, or NONE */
	size_t *t_first;  /* children of i: t_kids[t_first[i] .. [i+1]) */
	size_t *t_kids;
};

static bool is_sup(const struct obs_snap *s, size_t i)
{
	return (s->s_rec[i].or_flags & SMARM_ACTOR_SUPERVISOR) != 0;
}

/* Whether i is in the fold of kind, and whether it is a root there. */
static bool in_fold(const struct obs_snap *s, const struct tree *t, int kind,
		    size_t i)
{
	size_t p = t->t_parent[i];
	if (kind == SMARM_TREE_SPAWN)
		return true;
	return is_sup(s, i) || (p != OBS_NONE && is_sup(s, p));
}

static bool is_root(const struct obs_snap *s, const struct tree *t, int kind,
		    size_t i)
{
	size_t p = t->t_parent[i];
	if (kind == SMARM_TREE_SPAWN)
		return p == OBS_NONE;
	return is_sup(s, i) && (p == OBS_NONE || !is_sup(s, p));
}

/* Whether the fold descends into i's children. */
static bool descends(const struct obs_snap *s, int kind, size_t i)
{
	return kind == SMARM_TREE_SPAWN || is_sup(s, i);
}

static int tree_build(const struct obs_snap *s, struct tree *t)
{
	size_t n = s->s_n;
	t->t_parent = malloc((n + 1) * sizeof(size_t));
	t->t_first = calloc(n + 2, sizeof(size_t));
	t->t_kids = malloc((n + 1) * sizeof(size_t));
	if (t->t_parent == NULL || t->t_first == NULL || t->t_kids == NULL)
		return SMARM_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t pp = s->s_rec[i].or_parent;
		size_t p = pp != 0 ? smarm__obs_find(s, pp) : OBS_NONE;
		t->t_parent[i] = p == i ? OBS_NONE : p;
		if (t->t_parent[i] != OBS_NONE)
			t->t_first[t->t_parent[i] + 2]++;
	}
	/* Counting sort into children lists, each in snapshot order. */
	for (size_t i = 2; i < n + 2; i++)
		t->t_first[i] += t->t_first[i - 1];
	for (size_t i = 0; i < n; i++)
		if (t->t_parent[i] != OBS_NONE)
			t->t_kids[t->t_first[t->t_parent[i] + 1]++] = i;
	return 0;
}

int smarm__obs_tree(const struct obs_snap *s, int kind, smarm_tree_cb cb,
		    void *arg)
{
	/* The callback gets the public handle (obs.h: the same object). */
	const smarm_snapshot_t *h = (const smarm_snapshot_t *)(const void *)s;
	struct tree t = { NULL, NULL, NULL };
	size_t *stk = NULL, *pos = NULL;
	int rc = tree_build(s, &t);
	if (rc == 0 && s->s_n > 0) {
		stk = malloc(s->s_n * sizeof *stk);
		pos = malloc(s->s_n * sizeof *pos);
		if (stk == NULL || pos == NULL)
			rc = SMARM_ENOMEM;
	}
	for (size_t r = 0; rc == 0 && r < s->s_n; r++) {
		size_t depth = 0;
		if (!in_fold(s, &t, kind, r) || !is_root(s, &t, kind, r))
			continue;
		rc = cb(arg, h, r, 0,
			s->s_rec[r].or_parent != 0 &&
				t.t_parent[r] == OBS_NONE);
		if (rc != 0 || !descends(s, kind, r))
			continue;
		/* Iterative pre-order below r: stk[d] is the record at depth
		 * d + 1's parent, pos[d] its next child (INV-3). */
		stk[0] = r;
		pos[0] = t.t_first[r];
		depth = 1;
		while (depth > 0 && rc == 0) {
			size_t p = stk[depth - 1];
			size_t c;
			if (pos[depth - 1] == t.t_first[p + 1]) {
				depth--;
				continue;
			}
			c = t.t_kids[pos[depth - 1]++];
			rc = cb(arg, h, c, (unsigned)depth, false);
			if (rc == 0 && descends(s, kind, c) &&
			    t.t_first[c] != t.t_first[c + 1]) {
				stk[depth] = c;
				pos[depth] = t.t_first[c];
				depth++;
			}
		}
	}
	free(stk);
	free(pos);
	free(t.t_parent);
	free(t.t_first);
	free(t.t_kids);
	return rc;
}
