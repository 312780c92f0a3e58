/* SPDX-License-Identifier: MIT */
/*
 * sup.c - supervisors (abi/smarm/otp.h, "Supervisors"): the supervisor
 * itself, an actor built only on the public OTP calls, and the transport
 * of the calls to a running one; the public calls and the spec object
 * are sup_api.c's. It traps exits into one channel, spawns each child
 * linked to it (SMARM_OPT_LINK: a supervisor that is killed takes its
 * children along) and monitored into that same channel
 * (smarm_spawn_opts_set_monitor: every end, a normal one too, arrives as
 * one Down), and publishes that channel as its mailbox of the
 * "smarm.sup.ready" type, through which children report readiness
 * (smarm_sup_ready sends to the caller's spawner). So one channel
 * carries everything a supervisor waits for: Downs of children, exit
 * signals from its parent, readiness reports. A second channel, its
 * mailbox of the "smarm.sup.ctl" type, takes the requests of the calls
 * to a running supervisor (smarm_sup_start_child and the rest, sent by
 * smarm__sup_call at the end of this file): each names a reply channel
 * of the caller's, into which the caller also monitors the supervisor,
 * so a supervisor that dies before it answers is a Down, not a hang.
 * The main loop (sup_loop) serves the signal channel first and a
 * request only when no Down is pending.
 * Each restart admitted by the intensity (sup_admit) counts one in the
 * node's SMARM_STAT_SUP_RESTARTS (sig.h, per-node state). Its reports
 * go through the node's logger (core/log.c): supervisor reports at
 * ERROR (a child terminated, a start failed, the intensity reached),
 * a progress report at INFO for each child started (sup_start_child). A
 * SIMPLE_ONE_FOR_ONE supervisor keeps its template in su_tmpl; its
 * table holds only instances (anonymous, forgotten when terminated or
 * when they say ignore).
 *
 * States of a child (struct sup_child): RUNNING (ch_pid != 0) ->
 * DOWN-PENDING (ch_pid == 0, ch_pending: its Down was taken while the
 * supervisor waited for something else; sup_take) -> handled
 * (sup_death: restarted by sup_start_child, or left stopped). A child
 * the supervisor stops itself (sup_stop_child) goes RUNNING -> stopped
 * with its Down consumed, never pending. A child that says ignore
 * (smarm_sup_ignore, a readiness report of SMARM__SUP_IGNORE) ends with
 * no pid kept and is no death: awaited, its start returns
 * SMARM__SUP_IGNORE after its Down; not awaited, ch_ignored makes its
 * Down no death (sup_death). A temporary one is deleted.
 *
 * Ownership: a spec is the caller's (sup_api.c). A supervisor owns a
 * copy of its spec's children and everything in struct sup; a
 * which_children reply's array belongs to whoever takes it from the
 * reply channel (or to the channel's destructor); sup_free, a cleanup
 * handler, frees it on every way the actor ends (a kill included).
 * A template instance's start (struct sup_tstart: its
 * body and both arguments) is shared by the supervisor and the child it
 * starts (INV-8).
 * Locking: none: a struct sup is touched only by its own actor; a
 * template start's counts are atomic.
 * Invariants:
 *   INV-1 a child is in su_pend at most once (ch_inring), so su_pend
 *         never holds more than the number of children.
 *   INV-2 su_hist holds the instants of at most su_max restarts, oldest
 *         first (a restart of weight w, a contained fault's, enters w
 *         times): admitting one costs its weight plus the instants
 *         that expired since the last (sup_admit).
 *   INV-3 each child's Down is consumed exactly once: by a wait for it
 *         (sup_await_down), or by sup_take, which marks it pending.
 *   INV-4 child indexes change only by sup_compact, and only while
 *         su_pend is empty; deleted children (temporary ones that
 *         ended, smarm_sup_delete_child) are holes until then.
 *   INV-5 su_bypid holds exactly the children with ch_pid != 0, keyed
 *         on a bijective hash of the pid (sup_pid_set, sup_pid_clear),
 *         so a Down finds its child in O(1); it is rebuilt whenever
 *         su_kids moves (sup_reserve, sup_compact).
 *   INV-6 once told to end (su_stop), the supervisor starts nothing: a
 *         start waiting for readiness is given up (that child stopped
 *         per its policy), a restart in progress is abandoned and no
 *         later one begins, so a child that never gets ready cannot
 *         keep its supervisor from ending.
 *   INV-7 a child whose restart failed is restarting (ch_restarting,
 *         no pid) until a retry starts it, a sibling's restart starts
 *         it, or it is terminated; su_nretry counts such children.
 *         sup_loop retries one of them per turn, after at most one
 *         request (OTP queues its try_again_restart behind the calls
 *         already sent), so calls see a restarting child; each retry is
 *         one more restart against the intensity, as in OTP. Finding
 *         the child to retry scans the table: only failed restarts,
 *         bounded by the intensity, pay for it.
 *   INV-8 a template start (sup_tstart) holds two references: the
 *         child's, given up by its body once it copied what it needs
 *         (sup_tbody), and the supervisor's, given up when the
 *         tenancy's Down is taken (sup_pid_clear), which also gives up
 *         the child's if its body never ran (an actor that ends before
 *         its first run: no stack), or when the supervisor ends with
 *         the tenancy alive (sup_free). So it is freed once, never
 *         read after (the body copies it first), and a child whose
 *         supervisor was killed still finds it.
 *   INV-9 su_byid holds exactly the children that are not holes, keyed
 *         on the registry's hash of their id (sup_id_set, sup_id_clear),
 *         so a call by id and a start's check for a taken id are O(1),
 *         and starting or stopping n children by id is O(n), not
 *         O(n^2) (OTP's scale_start_stop_many_children); rebuilt with
 *         su_bypid. The instances of a SIMPLE_ONE_FOR_ONE supervisor
 *         are anonymous and not in it. Requests skip holes rather than
 *         compact the table each time (a compaction is O(n)), so a
 *         stream of deletions costs amortised O(1) each (sup_loop).
 * See: docs/architecture/supervisors.md, docs/embedding.md.
 */
#include "sup.h"
#include "sig.h"

#include "reg.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sup_tstart;

struct sup_child {
	struct smarm__sup_cspec ch_cs;	/* its spec */
	uint64_t ch_pid;		/* running tenancy, 0: none */
	struct sup_tstart *ch_ts;	/* that tenancy's template start
					   (INV-8), or NULL */
	struct smarm__htab_node ch_h;	/* in su_bypid while ch_pid != 0 */
	struct smarm__htab_node ch_hid; /* in su_byid unless gone (INV-9) */
	bool ch_pending;		/* its Down awaits sup_death */
	bool ch_inring;			/* in su_pend (INV-1) */
	bool ch_gone;			/* deleted: a hole until sup_compact */
	bool ch_ignored;    /* it said ignore: its end is no death */
	intptr_t ch_info;   /* its last readiness report's info */
	bool ch_restarting; /* its restart failed: retried (INV-7) */
	int ch_how;	    /* of the last Down */
	intptr_t ch_reason; /* of the last Down */
};

struct sup {
	int su_strategy;		 /* smarm_sup_strategy */
	bool su_simple;			 /* SIMPLE_ONE_FOR_ONE: su_tmpl ... */
	struct smarm__sup_cspec su_tmpl; /* ... its template, not a child */
	uint32_t su_max;		 /* intensity: restarts ... */
	uint64_t su_period;		 /* ... per window (ns) */
	uint32_t su_fault_weight;    /* restarts one contained fault counts */
	struct sup_child *su_kids;   /* su_n entries, start order */
	struct smarm__htab su_bypid; /* running children by pid (INV-5) */
	struct smarm__htab su_byid;  /* children by id (INV-9) */
	uint32_t su_n;		     /* entries (holes included) */
	uint32_t su_cap;	     /* allocated entries */
	uint32_t su_gone;	     /* holes (ch_gone) */
	uint64_t su_seq;	     /* ids of anonymous dynamic children */
	smarm_chan_t *su_sig;	     /* trap, Downs and readiness */
	smarm_chan_t *su_ctl;	/* control mailbox (struct smarm__sup_ctl) */
	smarm_selset_t *su_set; /* su_sig, su_ctl */
	smarm_spawn_opts_t *su_opts; /* link + monitor into su_sig */
	uint64_t su_ref;	     /* each spawn's monitor ref */
	uint64_t su_parent;	     /* spawner's pid id */
	struct smarm__ring su_hist;  /* restart instants (INV-2) */
	struct smarm__ring su_pend;  /* child indexes (INV-1) */
	uint32_t su_nretry;	     /* children restarting (INV-7) */
	int su_auto;		     /* smarm_sup_auto_shutdown */
	bool su_stop;		     /* an exit signal asked us to end */
	int su_stop_how;	     /* ... with this how */
	intptr_t su_stop_reason;     /* ... and reason */
};

/* ----------------------------------------------------------- readiness */

/* The process-wide readiness type (types are never freed: cache it). */
static const smarm_msgtype_t *ready_type(void)
{
	static const smarm_msgtype_t *_Atomic cached;
	const smarm_msgtype_t *t = atomic_load(&cached);
	if (t == NULL &&
	    smarm_msgtype_define("smarm.sup.ready", sizeof(smarm_signal_t),
				 NULL, &t) == 0)
		atomic_store(&cached, t);
	return t;
}

/* Send a readiness report (status 0: ready) to the caller's spawner. */
int smarm__sup_report(int status, intptr_t extra)
{
	smarm_signal_t m = { .kind = SMARM__SUP_KIND_READY,
			     .from = smarm_actor_self(),
			     .ref = (uint64_t)extra,
			     .reason = status };
	smarm_pid_t parent = { smarm__self_parent() };
	const smarm_msgtype_t *t = ready_type();
	int rc;
	if (parent.id == 0 || t == NULL)
		return SMARM_ESTATE;
	rc = smarm_send(parent, t, &m);
	if (rc == SMARM_ENOPROC || rc == SMARM_ENOCHAN || rc == SMARM_ECLOSED)
		return SMARM_ESTATE;
	return rc;
}

/* ---------------------------------------------------------- supervisor */

int smarm__sup_spec_check(const struct smarm_sup_spec *spec)
{
	bool simple = spec->sp_strategy == SMARM_SUP_SIMPLE_ONE_FOR_ONE;
	if (simple && spec->sp_n != 1)
		return SMARM_EBADSPEC;
	for (uint32_t i = 0; i < spec->sp_n; i++) {
		const struct smarm__sup_cspec *c = &spec->sp_kids[i];
		if (c->cs_tfn != NULL && !simple)
			return SMARM_EBADSPEC; /* a template, not a child */
		/* OTP's bad_combination: a significant child needs an
		 * automatic shutdown, and a restart that can end it */
		if (c->cs_significant &&
		    (spec->sp_auto == SMARM_SUP_AUTO_NEVER ||
		     c->cs_restart == SMARM_SUP_PERMANENT))
			return SMARM_EBADSPEC;
	}
	return 0;
}

/* The process-wide control type (never freed: cached). */
static const smarm_msgtype_t *ctl_type(void)
{
	static const smarm_msgtype_t *_Atomic cached;
	const smarm_msgtype_t *t = atomic_load(&cached);
	if (t == NULL &&
	    smarm_msgtype_define("smarm.sup.ctl", sizeof(struct smarm__sup_ctl),
				 NULL, &t) == 0)
		atomic_store(&cached, t);
	return t;
}

/* ---------------------------------------------------- template starts */

/* A template instance's start: what its body needs (INV-8). */
struct sup_tstart {
	_Atomic uint32_t ts_refs;    /* the child's, the supervisor's */
	_Atomic bool ts_ran;	     /* the child's body took its copy */
	smarm_sup_template_cb ts_fn; /* the template's body */
	void *ts_arg;		     /* the template's argument */
	void *ts_extra;		     /* the instance's */
};

static void tstart_unref(struct sup_tstart *ts)
{
	if (atomic_fetch_sub_explicit(&ts->ts_refs, 1, memory_order_acq_rel) ==
	    1)
		free(ts);
}

/* An instance's body: copy the start, give the child's reference up,
 * run the template's body with both arguments. */
static void sup_tbody(void *arg)
{
	struct sup_tstart *ts = arg;
	smarm_sup_template_cb fn = ts->ts_fn;
	void *targ = ts->ts_arg, *extra = ts->ts_extra;
	atomic_store_explicit(&ts->ts_ran, true, memory_order_relaxed);
	tstart_unref(ts);
	fn(targ, extra);
}

/* The supervisor is done with child c's tenancy (its Down taken, or the
 * supervisor ends): give up its template start, and the child's too if
 * the tenancy ended without running its body (INV-8). */
static void tstart_drop(struct sup_child *c, bool ended)
{
	struct sup_tstart *ts = c->ch_ts;
	if (ts == NULL)
		return;
	c->ch_ts = NULL;
	/* its end happened before its Down: a body that ran said so */
	if (ended && !atomic_load_explicit(&ts->ts_ran, memory_order_relaxed))
		tstart_unref(ts);
	tstart_unref(ts);
}

static void sup_free(void *arg)
{
	struct sup *su = arg;
	for (uint32_t i = 0; su->su_kids != NULL && i < su->su_n; i++)
		tstart_drop(&su->su_kids[i], false);
	smarm_spawn_opts_free(su->su_opts);
	smarm_selset_free(su->su_set);
	if (su->su_sig != NULL) {
		smarm_chan_sender_free(su->su_sig);
		smarm_chan_receiver_free(su->su_sig);
	}
	if (su->su_ctl != NULL) {
		smarm_chan_sender_free(su->su_ctl);
		smarm_chan_receiver_free(su->su_ctl);
	}
	free(su->su_hist.rg_buf);
	free(su->su_pend.rg_buf);
	free(su->su_bypid.ht_b);
	free(su->su_byid.ht_b);
	free(su->su_kids);
	free(su);
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

static uint64_t pid_key(uint64_t pid)
{
	return pid * 0x9e3779b97f4a7c15ull; /* odd: a bijection */
}

/* Child i now runs as pid (INV-5). */
static void sup_pid_set(struct sup *su, int i, uint64_t pid)
{
	struct sup_child *c = &su->su_kids[i];
	SMARM_ASSERT(c->ch_pid == 0 && pid != 0);
	c->ch_pid = pid;
	c->ch_h.hn_hash = pid_key(pid);
	smarm__htab_insert(&su->su_bypid, &c->ch_h);
}

/* Child i's tenancy ended (INV-5). */
static void sup_pid_clear(struct sup *su, int i)
{
	struct sup_child *c = &su->su_kids[i];
	SMARM_ASSERT(c->ch_pid != 0);
	smarm__htab_remove(&su->su_bypid, &c->ch_h);
	c->ch_pid = 0;
	tstart_drop(c, true);
}

/* Child i (not gone) is found by its id from now on (INV-9); the
 * anonymous instances of a SIMPLE_ONE_FOR_ONE supervisor are not. */
static void sup_id_set(struct sup *su, int i)
{
	struct sup_child *c = &su->su_kids[i];
	if (su->su_simple)
		return;
	c->ch_hid.hn_hash =
		smarm__name_hash(c->ch_cs.cs_id, strlen(c->ch_cs.cs_id));
	smarm__htab_insert(&su->su_byid, &c->ch_hid);
}

/* Child i is deleted, or was never recorded (INV-9). */
static void sup_id_clear(struct sup *su, int i)
{
	if (!su->su_simple)
		smarm__htab_remove(&su->su_byid, &su->su_kids[i].ch_hid);
}

/* su_kids moved: index the running children and the ids again (INV-5,
 * INV-9). */
static void sup_reindex(struct sup *su)
{
	smarm__htab_clear(&su->su_bypid);
	smarm__htab_clear(&su->su_byid);
	for (uint32_t i = 0; i < su->su_n; i++) {
		if (su->su_kids[i].ch_pid != 0)
			smarm__htab_insert(&su->su_bypid, &su->su_kids[i].ch_h);
		if (!su->su_kids[i].ch_gone)
			sup_id_set(su, (int)i);
	}
}

/* Room for `want` children: the table and the pending ring, which must
 * be empty (its buffer is replaced). */
static int sup_reserve(struct sup *su, uint32_t want)
{
	uint32_t pcap = pow2_at_least(want ? want : 1);
	if (want > su->su_cap) {
		uint32_t cap = su->su_cap ? su->su_cap : 8;
		void *p;
		while (cap < want)
			cap *= 2;
		p = realloc(su->su_kids, cap * sizeof *su->su_kids);
		if (p == NULL)
			return SMARM_ENOMEM;
		su->su_kids = p;
		su->su_cap = cap;
		sup_reindex(su);
	}
	if (pcap > su->su_pend.rg_cap) {
		void *p;
		SMARM_ASSERT(smarm__ring_len(&su->su_pend) == 0);
		p = malloc(pcap * sizeof(uint32_t));
		if (p == NULL)
			return SMARM_ENOMEM;
		free(su->su_pend.rg_buf);
		smarm__ring_init_fixed(&su->su_pend, p, pcap);
	}
	return 0;
}

static void drop_chan(smarm_chan_t *ch)
{
	smarm_chan_sender_free(ch);
	smarm_chan_receiver_free(ch);
}

/* Build the state for the spec `owned` (taken over and freed), its
 * signal channel sig (taken over too), or a new one if NULL. */
static struct sup *sup_new(struct smarm_sup_spec *owned, smarm_chan_t *sig)
{
	struct sup *su = calloc(1, sizeof *su);
	uint32_t n = owned->sp_n;
	uint32_t hcap = pow2_at_least(owned->sp_max ? owned->sp_max : 1);
	void *hbuf = malloc(hcap * sizeof(uint64_t));
	if (su != NULL) {
		smarm__ring_init_fixed(&su->su_hist, hbuf, hcap);
		su->su_sig = sig;
	} else if (sig != NULL) {
		drop_chan(sig);
	}
	if (su == NULL || hbuf == NULL ||
	    smarm__htab_init(&su->su_bypid) != 0 ||
	    smarm__htab_init(&su->su_byid) != 0 || sup_reserve(su, n) != 0 ||
	    (su->su_sig == NULL &&
	     smarm_chan_alloc(&su->su_sig, sizeof(smarm_signal_t), NULL) !=
		     0) ||
	    smarm_chan_alloc(&su->su_ctl, sizeof(struct smarm__sup_ctl),
			     NULL) != 0 ||
	    smarm_selset_alloc(&su->su_set) != 0 ||
	    smarm_selset_add_chan(su->su_set, su->su_sig, NULL) != 0 ||
	    smarm_selset_add_chan(su->su_set, su->su_ctl, NULL) != 0 ||
	    smarm_spawn_opts_alloc(&su->su_opts) != 0 ||
	    smarm_spawn_opts_set_int(su->su_opts, SMARM_OPT_LINK, 1) != 0 ||
	    smarm_spawn_opts_set_monitor(su->su_opts, su->su_sig,
					 &su->su_ref) != 0) {
		if (su != NULL)
			sup_free(su);
		else
			free(hbuf);
		smarm__sup_spec_destroy(owned);
		return NULL;
	}
	su->su_strategy = owned->sp_strategy;
	su->su_auto = owned->sp_auto;
	su->su_max = owned->sp_max;
	su->su_period = owned->sp_period;
	su->su_fault_weight = owned->sp_fault_weight;
	if (owned->sp_strategy == SMARM_SUP_SIMPLE_ONE_FOR_ONE) {
		/* the template (smarm__sup_spec_check: the only child) */
		su->su_simple = true;
		su->su_tmpl = owned->sp_kids[0];
		su->su_tmpl.cs_id[0] = '\0'; /* instances are anonymous */
		n = 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		memset(&su->su_kids[i], 0, sizeof su->su_kids[i]);
		su->su_kids[i].ch_cs = owned->sp_kids[i];
		sup_id_set(su, (int)i);
	}
	su->su_n = n;
	smarm__sup_spec_destroy(owned);
	return su;
}

/* The child whose running tenancy is pid, or -1: O(1) (INV-5). */
static int sup_find(const struct sup *su, uint64_t pid)
{
	uint64_t key = pid_key(pid);
	for (struct smarm__htab_node *e = smarm__htab_first(&su->su_bypid, key);
	     e != NULL; e = e->hn_next)
		if (e->hn_hash == key) /* the hash is a bijection */
			return (int)((struct sup_child
					      *)((char *)e -
						 offsetof(struct sup_child,
							  ch_h)) -
				     su->su_kids);
	return -1;
}

/* The child of that id (holes are not indexed), or -1: O(1) (INV-9). */
static int sup_find_id(const struct sup *su, const char *id)
{
	uint64_t key = smarm__name_hash(id, strlen(id));
	for (struct smarm__htab_node *e = smarm__htab_first(&su->su_byid, key);
	     e != NULL; e = e->hn_next) {
		const struct sup_child *c;
		if (e->hn_hash != key)
			continue;
		c = (const struct sup_child *)((const char *)e -
					       offsetof(struct sup_child,
							ch_hid));
		if (strcmp(c->ch_cs.cs_id, id) == 0)
			return (int)(c - su->su_kids);
	}
	return -1;
}

/* Delete child i (not running) from the table: a hole for now. */
static void sup_delete(struct sup *su, int i)
{
	SMARM_ASSERT(su->su_kids[i].ch_pid == 0);
	if (su->su_kids[i].ch_gone)
		return;
	sup_id_clear(su, i);
	su->su_kids[i].ch_gone = true;
	su->su_kids[i].ch_pending = false;
	su->su_gone++;
}

/* Close the holes, keeping start order; su_pend must be empty. */
static void sup_compact(struct sup *su)
{
	uint32_t w = 0;
	SMARM_ASSERT(smarm__ring_len(&su->su_pend) == 0);
	for (uint32_t r = 0; r < su->su_n; r++)
		if (!su->su_kids[r].ch_gone)
			su->su_kids[w++] = su->su_kids[r];
	su->su_n = w;
	su->su_gone = 0;
	sup_reindex(su);
}

/*
 * Take one message of su_sig that is not a readiness report: a Down of
 * a child ends its tenancy (returns its index); an exit signal from the
 * parent or from no actor asks the supervisor to end; the rest (exit
 * signals of children's links, duplicates of their Downs, and of
 * others) is ignored. Returns -1 when no child ended.
 */
static int sup_take(struct sup *su, const smarm_signal_t *m)
{
	if (m->kind == SMARM_SIGNAL_DOWN) {
		int i = m->from.id ? sup_find(su, m->from.id) : -1;
		if (i >= 0) {
			sup_pid_clear(su, i);
			su->su_kids[i].ch_how = m->how;
			su->su_kids[i].ch_reason = m->reason;
		}
		return i;
	}
	if (m->kind == SMARM__SUP_KIND_READY &&
	    m->reason == SMARM__SUP_IGNORE) {
		/* A child started without a readiness wait said ignore:
		 * its end, which follows, is no death (sup_death). */
		int i = m->from.id ? sup_find(su, m->from.id) : -1;
		if (i >= 0)
			su->su_kids[i].ch_ignored = true;
		return -1;
	}
	if (m->kind == SMARM_SIGNAL_EXIT && !su->su_stop &&
	    (m->from.id == 0 || m->from.id == su->su_parent)) {
		su->su_stop = true;
		su->su_stop_how = m->how;
		su->su_stop_reason = m->reason;
	}
	return -1;
}

/* Note that child i's Down was taken: sup_death handles it later. */
static void sup_pend(struct sup *su, int i)
{
	struct sup_child *c = &su->su_kids[i];
	c->ch_pending = true;
	if (!c->ch_inring) { /* INV-1 */
		c->ch_inring = true;
		*(uint32_t *)smarm__ring_push_back(
			&su->su_pend, sizeof(uint32_t)) = (uint32_t)i;
	}
}

static uint64_t remaining(uint64_t deadline)
{
	uint64_t now;
	if (deadline == SMARM_NO_TIMEOUT)
		return SMARM_NO_TIMEOUT;
	now = smarm_now_ns();
	return now >= deadline ? 0 : deadline - now;
}

static uint64_t deadline_of(uint64_t timeout_ns)
{
	uint64_t now = smarm_now_ns();
	if (timeout_ns == SMARM_NO_TIMEOUT || timeout_ns > UINT64_MAX - now)
		return SMARM_NO_TIMEOUT;
	return now + timeout_ns;
}

/* Wait up to timeout_ns for child i's Down (INV-3). 0 or ETIMEDOUT. */
static int sup_await_down(struct sup *su, int i, uint64_t timeout_ns)
{
	uint64_t deadline = deadline_of(timeout_ns);
	while (su->su_kids[i].ch_pid != 0) {
		smarm_signal_t m;
		int j;
		int rc = smarm_chan_recv_timeout(su->su_sig, &m,
						 remaining(deadline));
		if (rc != 0)
			return rc;
		j = sup_take(su, &m);
		if (j >= 0 && j != i)
			sup_pend(su, j);
	}
	return 0;
}

/* Stop child i per its shutdown policy and wait for its end. */
static void sup_stop_child(struct sup *su, int i)
{
	struct sup_child *c = &su->su_kids[i];
	uint64_t sd = c->ch_cs.cs_shutdown;
	smarm_pid_t pid = { c->ch_pid };
	if (pid.id == 0)
		return;
	if (sd == SMARM_SUP_BRUTAL_KILL) {
		(void)smarm_actor_send_exit(pid, SMARM_EXIT_STOPPED, 0);
	} else {
		/* SMARM_ENOPROC: it is ending anyway; its Down still comes */
		(void)smarm_actor_send_exit(pid, SMARM_EXIT_SHUTDOWN, 0);
		if (sup_await_down(su, i, sd) == 0) {
			c->ch_pending = false;
			return;
		}
		(void)smarm_actor_send_exit(pid, SMARM_EXIT_STOPPED, 0);
	}
	(void)sup_await_down(su, i, SMARM_NO_TIMEOUT);
	c->ch_pending = false;
}

/* Child i's restart failed, or it needs none any more (INV-7). */
static void sup_set_restarting(struct sup *su, int i, bool on)
{
	struct sup_child *c = &su->su_kids[i];
	if (c->ch_restarting == on)
		return;
	SMARM_ASSERT(!on || c->ch_pid == 0);
	c->ch_restarting = on;
	if (on)
		su->su_nretry++;
	else
		su->su_nretry--;
}

/* OTP's progress report: the supervisor started child i (INFO: off at
 * the default level; smarm__log_self costs one compare then). */
static void sup_report_started(struct sup *su, int i)
{
	char pid[32];
	smarm__log_self(SMARM_LOG_INFO, SMARM_REPORT_PROGRESS, "progress",
			"started child '%s', pid %s",
			su->su_kids[i].ch_cs.cs_id,
			smarm__log_pid(su->su_kids[i].ch_pid, pid, sizeof pid));
}

/* Start child i (and wait for its readiness). 0 or its failure. */
static int sup_start_child(struct sup *su, int i)
{
	struct sup_child *c = &su->su_kids[i];
	const struct smarm__sup_cspec *cs = &c->ch_cs;
	smarm_pid_t pid;
	uint64_t deadline;
	int rc;
	sup_set_restarting(su, i, false); /* tried now */
	c->ch_pending = false;
	c->ch_ignored = false;
	c->ch_info = 0;
	if (cs->cs_tfn != NULL) {
		struct sup_tstart *ts = malloc(sizeof *ts);
		if (ts == NULL)
			return SMARM_ENOMEM;
		atomic_init(&ts->ts_refs, 2);
		atomic_init(&ts->ts_ran, false);
		ts->ts_fn = cs->cs_tfn;
		ts->ts_arg = cs->cs_arg;
		ts->ts_extra = cs->cs_extra;
		rc = smarm_actor_spawn(&pid, sup_tbody, ts, su->su_opts);
		if (rc != 0) {
			free(ts); /* no child: nobody else has it */
			return rc;
		}
		c->ch_ts = ts;
	} else {
		rc = smarm_actor_spawn(&pid, cs->cs_fn, cs->cs_arg,
				       su->su_opts);
		if (rc != 0)
			return rc;
	}
	(void)smarm_actor_detach(pid);
	sup_pid_set(su, i, pid.id);
	if (!cs->cs_await) {
		sup_report_started(su, i);
		return 0;
	}
	deadline = deadline_of(cs->cs_ready_ns);
	for (;;) {
		smarm_signal_t m;
		int j;
		rc = smarm_chan_recv_timeout(su->su_sig, &m,
					     remaining(deadline));
		if (rc == SMARM_ETIMEDOUT) {
			(void)smarm_actor_send_exit(pid, SMARM_EXIT_STOPPED, 0);
			(void)sup_await_down(su, i, SMARM_NO_TIMEOUT);
			c->ch_pending = false;
			return SMARM_ETIMEDOUT;
		}
		if (rc != 0)
			return rc;
		if (m.kind == SMARM__SUP_KIND_READY && m.from.id == pid.id &&
		    c->ch_pid == pid.id) {
			if (m.reason == 0) {
				c->ch_info = (intptr_t)m.ref;
				sup_report_started(su, i);
				return 0;
			}
			/* Failed, or ignore: it ends; no pid is kept. What
			 * the report adds (the holder of a name it found
			 * taken) stays in ch_info. */
			c->ch_info = (intptr_t)m.ref;
			(void)sup_await_down(su, i, SMARM_NO_TIMEOUT);
			c->ch_pending = false;
			c->ch_ignored = false;
			return (int)m.reason;
		}
		j = sup_take(su, &m);
		if (j == i) {
			c->ch_pending = false;
			return SMARM_ESTARTFAILED;
		}
		if (j >= 0)
			sup_pend(su, j);
		if (su->su_stop) {
			/* told to end: give the start up (INV-6) */
			sup_stop_child(su, i);
			return SMARM_ESTARTFAILED;
		}
	}
}

/*
 * Stop every instance of a SIMPLE_ONE_FOR_ONE supervisor at once, as
 * OTP's terminate_dynamic_children does: all are sent the template's
 * shutdown (a kill for SMARM_SUP_BRUTAL_KILL) first, then their Downs
 * are awaited together, within one shutdown time counted from then;
 * those still running when it is over are killed and awaited. So the
 * instances clean up in parallel, and n of them take one shutdown
 * time, not n. Restarting instances have no process to stop.
 */
static void sup_stop_all_simple(struct sup *su)
{
	uint64_t sd = su->su_tmpl.cs_shutdown;
	bool brutal = sd == SMARM_SUP_BRUTAL_KILL;
	uint64_t deadline = brutal ? SMARM_NO_TIMEOUT : deadline_of(sd);
	uint32_t left = 0;
	for (uint32_t k = 0; k < su->su_n; k++) {
		smarm_pid_t pid = { su->su_kids[k].ch_pid };
		if (pid.id == 0)
			continue;
		/* SMARM_ENOPROC: it is ending anyway; its Down still comes */
		(void)smarm_actor_send_exit(
			pid, brutal ? SMARM_EXIT_STOPPED : SMARM_EXIT_SHUTDOWN,
			0);
		left++;
	}
	while (left > 0) {
		smarm_signal_t m;
		int j, rc = smarm_chan_recv_timeout(su->su_sig, &m,
						    remaining(deadline));
		if (rc == SMARM_ETIMEDOUT) { /* the shutdown time is over */
			for (uint32_t k = 0; k < su->su_n; k++) {
				smarm_pid_t pid = { su->su_kids[k].ch_pid };
				if (pid.id != 0)
					(void)smarm_actor_send_exit(
						pid, SMARM_EXIT_STOPPED, 0);
			}
			deadline = SMARM_NO_TIMEOUT;
			continue;
		}
		if (SMARM_NEVER(rc != 0))
			return; /* cannot happen: we hold every reference */
		j = sup_take(su, &m); /* each running one's Down, once */
		if (j >= 0) {
			su->su_kids[j].ch_pending = false;
			left--;
		}
	}
}

/* Stop every child: last started first, each stop awaited; the
 * instances of a SIMPLE_ONE_FOR_ONE supervisor all at once. */
static void sup_stop_all(struct sup *su)
{
	if (su->su_simple) {
		sup_stop_all_simple(su);
		return;
	}
	for (int i = (int)su->su_n - 1; i >= 0; i--)
		sup_stop_child(su, i);
}

/*
 * Admit a restart now that counts `weight` restarts (a contained fault's
 * child: su_fault_weight; else 1), or say the intensity is exceeded
 * (INV-2): the instants older than the window go, and the restart must
 * fit beside those left.
 */
static bool sup_admit(struct sup *su, uint32_t weight)
{
	uint64_t now = smarm_now_ns();
	if (weight > su->su_max)
		return false; /* also su_max 0 */
	while (smarm__ring_len(&su->su_hist) > 0 &&
	       now - *(uint64_t *)smarm__ring_at(&su->su_hist, sizeof(uint64_t),
						 0) >=
		       su->su_period)
		(void)smarm__ring_pop_front(&su->su_hist, sizeof(uint64_t));
	if (smarm__ring_len(&su->su_hist) + weight > su->su_max)
		return false;
	for (uint32_t k = 0; k < weight; k++)
		*(uint64_t *)smarm__ring_push_back(&su->su_hist,
						   sizeof(uint64_t)) = now;
	/* SMARM_STAT_SUP_RESTARTS and the supervisor's own count. */
	smarm__sig_count_restart(smarm_node_current(), smarm_actor_self().id);
	return true;
}

static bool abnormal(int how)
{
	return how == SMARM_EXIT_CRASHED || how == SMARM_EXIT_STOPPED ||
	       how == SMARM_EXIT_FAULT;
}

/* A supervisor report about child i: "child 'ID' <what> <code>". */
static void sup_report_child(struct sup *su, int i, const char *what,
			     intptr_t code)
{
	char why[64];
	smarm__log_self(SMARM_LOG_ERROR, SMARM_REPORT_SUPERVISOR, "supervisor",
			"child '%s' %s %s", su->su_kids[i].ch_cs.cs_id, what,
			smarm__log_code(code, why, sizeof why));
}

/*
 * Restart child i (not running) per the strategy: `weight` restarts
 * against the intensity (one; a contained fault's: su_fault_weight). If
 * a start fails, that child is left restarting, to
 * be retried from sup_loop (INV-7), as OTP's supervisor does; nothing
 * is started once the supervisor is told to end (INV-6).
 */
static void sup_restart(struct sup *su, int i, uint32_t weight)
{
	int n = (int)su->su_n;
	int lo = i;
	int hi = i;
	int failed = -1, failed_rc = 0;
	if (su->su_stop)
		return;
	if (!sup_admit(su, weight)) {
		smarm__log_self(SMARM_LOG_ERROR, SMARM_REPORT_SUPERVISOR,
				"supervisor",
				"reached its maximum restart intensity (%u "
				"restarts in %llu ms): shutting down",
				su->su_max,
				(unsigned long long)(su->su_period / 1000000));
		/* OTP's supervisor ends with reason shutdown; why travels as
		 * the reason code. */
		sup_stop_all(su);
		smarm__self_exit(SMARM_EXIT_SHUTDOWN, SMARM_EINTENSITY);
	}
	smarm__trace_named(SMARM__TR_RESTART, smarm__self_pid(),
			   su->su_kids[i].ch_pid, (uint32_t)weight,
			   su->su_kids[i].ch_cs.cs_id);
	if (su->su_strategy == SMARM_SUP_ONE_FOR_ALL)
		lo = 0, hi = n - 1;
	else if (su->su_strategy == SMARM_SUP_REST_FOR_ONE)
		hi = n - 1;
	for (int k = hi; k >= lo; k--)
		if (k != i)
			sup_stop_child(su, k);
	for (int k = lo; k <= hi && failed < 0 && !su->su_stop; k++) {
		struct sup_child *c = &su->su_kids[k];
		if (c->ch_gone)
			continue;
		if (k != i && c->ch_cs.cs_restart == SMARM_SUP_TEMPORARY) {
			sup_delete(su, k); /* stopped, not restarted */
			continue;
		}
		int rc = sup_start_child(su, k);
		if (rc == SMARM__SUP_IGNORE &&
		    (c->ch_cs.cs_restart == SMARM_SUP_TEMPORARY ||
		     su->su_simple))
			sup_delete(su, k); /* ignored: not kept */
		else if (rc != 0 && rc != SMARM__SUP_IGNORE)
			failed = k, failed_rc = rc;
	}
	if (failed >= 0 && !su->su_stop) {
		sup_report_child(su, failed, "failed to start: status",
				 failed_rc);
		sup_set_restarting(su, failed, true);
	}
}

/*
 * A child that was significant ended on its own and is not restarted
 * (OTP's do_auto_shutdown): with ANY_SIGNIFICANT, or with
 * ALL_SIGNIFICANT once no significant child is left running or
 * restarting, stop the children and end with a shutdown, reason 0
 * (OTP's {stop, shutdown, State}). A child whose Down is pending
 * counts as running: OTP has its 'EXIT' still in the mailbox, and its
 * own sup_death decides (it may be restarted).
 */
static void sup_auto_shutdown(struct sup *su, bool significant)
{
	if (!significant || su->su_auto == SMARM_SUP_AUTO_NEVER)
		return;
	if (su->su_auto == SMARM_SUP_AUTO_ALL_SIGNIFICANT)
		for (uint32_t k = 0; k < su->su_n; k++) {
			const struct sup_child *c = &su->su_kids[k];
			if (!c->ch_gone && c->ch_cs.cs_significant &&
			    (c->ch_pid != 0 || c->ch_restarting ||
			     c->ch_pending))
				return; /* one is left */
		}
	sup_stop_all(su);
	smarm__self_exit(SMARM_EXIT_SHUTDOWN, 0);
}

/*
 * Child i ended on its own (its Down taken): restart per the spec, or
 * not at all once the supervisor is told to end (INV-6). An end that
 * is not restarted may end the supervisor (sup_auto_shutdown).
 */
static void sup_death(struct sup *su, int i)
{
	const struct smarm__sup_cspec *cs = &su->su_kids[i].ch_cs;
	if (su->su_stop)
		return;
	if (abnormal(su->su_kids[i].ch_how)) { /* OTP's child_terminated */
		char how[64];
		snprintf(how, sizeof how, "terminated: %s, reason",
			 smarm__log_how(su->su_kids[i].ch_how));
		sup_report_child(su, i, how, su->su_kids[i].ch_reason);
	}
	if (su->su_kids[i].ch_ignored) { /* it said ignore: no pid kept */
		su->su_kids[i].ch_ignored = false;
		if (cs->cs_restart == SMARM_SUP_TEMPORARY || su->su_simple)
			sup_delete(su, i);
		return; /* OTP's ignore: no process, no 'EXIT' */
	}
	if (cs->cs_restart == SMARM_SUP_TEMPORARY) {
		sup_delete(su, i); /* as OTP: its spec goes with it */
		sup_auto_shutdown(su, cs->cs_significant);
		return;
	}
	if (cs->cs_restart == SMARM_SUP_TRANSIENT &&
	    !abnormal(su->su_kids[i].ch_how)) {
		if (su->su_simple)
			sup_delete(su, i); /* OTP erases a dynamic child */
		sup_auto_shutdown(su, cs->cs_significant);
		return;
	}
	sup_restart(su, i,
		    su->su_kids[i].ch_how == SMARM_EXIT_FAULT
			    ? su->su_fault_weight
			    : 1);
}

/* Retry the restart of one restarting child, if any is (INV-7). */
static void sup_retry(struct sup *su)
{
	for (uint32_t k = 0; k < su->su_n; k++)
		if (su->su_kids[k].ch_restarting && !su->su_kids[k].ch_gone) {
			sup_restart(su, (int)k, 1);
			return;
		}
	/* None is restarting: the count must say so (repair it if not,
	 * rather than retry for ever). */
	if (SMARM_NEVER(su->su_nretry != 0))
		su->su_nretry = 0;
}

/* End the calling actor as the exit signal that stopped it said. */
static void sup_end(struct sup *su) __attribute__((noreturn));
static void sup_end(struct sup *su)
{
	int how = su->su_stop_how;
	intptr_t reason = su->su_stop_reason;
	if (how != SMARM_EXIT_CRASHED && how != SMARM_EXIT_FAULT)
		reason = 0;
	if (how == SMARM_EXIT_NOPROC)
		how = SMARM_EXIT_SHUTDOWN;
	smarm__self_exit(how, reason);
}

static void items_free(void *elem)
{
	smarm_signal_t *m = elem;
	if (m->kind == SMARM__SUP_KIND_ITEMS)
		free((void *)m->reason);
}

/* Forget the child just appended (its start failed or said ignore):
 * nothing of it is recorded. */
static void sup_unappend(struct sup *su)
{
	SMARM_ASSERT(su->su_n > 0 && su->su_kids[su->su_n - 1].ch_pid == 0);
	sup_id_clear(su, (int)su->su_n - 1);
	su->su_n--;
}

/* Answer one control request; su_pend is empty (see sup_loop). */
static void sup_ctl(struct sup *su, struct smarm__sup_ctl *q)
{
	smarm_signal_t r = { .kind = SMARM__SUP_KIND_REPLY };
	int i = -1;
	int j;
	if (su->su_simple == (q->op == SMARM__SUP_OP_START_ARGS)) {
		/* fits the strategy */
	} else if (q->op != SMARM__SUP_OP_WHICH &&
		   q->op != SMARM__SUP_OP_COUNT &&
		   q->op != SMARM__SUP_OP_TERMINATE_PID) {
		r.how = SMARM_ESIMPLE; /* OTP's {error, simple_one_for_one} */
		goto reply;
	}
	if (q->op == SMARM__SUP_OP_TERMINATE_PID) {
		i = sup_find(su, q->pid);
		if (i < 0) {
			r.how = SMARM_ENOENT;
			goto reply;
		}
	} else if (q->op != SMARM__SUP_OP_START &&
		   q->op != SMARM__SUP_OP_START_ARGS &&
		   q->op != SMARM__SUP_OP_WHICH &&
		   q->op != SMARM__SUP_OP_COUNT) {
		i = sup_find_id(su, q->cs.cs_id);
		if (i < 0) {
			r.how = SMARM_ENOENT;
			goto reply;
		}
	}
	switch (q->op) {
	case SMARM__SUP_OP_START_ARGS: {
		void *extra = q->cs.cs_extra;
		q->cs = su->su_tmpl; /* an instance of the template */
		if (q->cs.cs_tfn != NULL)
			q->cs.cs_extra = extra; /* fn(arg, extra) */
		else
			q->cs.cs_arg = extra; /* fn(extra): A is [] */
	}
		/* FALLTHROUGH */
	case SMARM__SUP_OP_START:
		if (su->su_simple) {
			/* anonymous, and ids are not looked up */
		} else if (q->anon) {
			do
				snprintf(q->cs.cs_id, sizeof q->cs.cs_id,
					 "#%llu",
					 (unsigned long long)++su->su_seq);
			while (sup_find_id(su, q->cs.cs_id) >= 0);
		} else if ((j = sup_find_id(su, q->cs.cs_id)) >= 0) {
			/* OTP's {already_started, Pid}, or already_present
			 * (no pid) */
			r.how = SMARM_EEXIST;
			r.from.id = su->su_kids[j].ch_pid;
			break;
		}
		if (q->cs.cs_significant &&
		    (su->su_auto == SMARM_SUP_AUTO_NEVER ||
		     q->cs.cs_restart == SMARM_SUP_PERMANENT)) {
			r.how = SMARM_EBADSPEC; /* OTP's bad_combination */
			break;
		}
		if (su->su_n - su->su_gone >= SMARM_SUP_CHILDREN_MAX) {
			r.how = SMARM_EATCAPACITY;
			break;
		}
		r.how = sup_reserve(su, su->su_n + 1);
		if (r.how != 0)
			break;
		i = (int)su->su_n++;
		memset(&su->su_kids[i], 0, sizeof su->su_kids[i]);
		su->su_kids[i].ch_cs = q->cs;
		sup_id_set(su, i);
		/* FALLTHROUGH */
	case SMARM__SUP_OP_RESTART:
		if (su->su_kids[i].ch_pid != 0) {
			r.how = SMARM_ESTATE; /* running */
			break;
		}
		if (su->su_kids[i].ch_restarting) {
			r.how = SMARM_ERESTARTING; /* OTP's {error, restarting}
						    */
			break;
		}
		r.how = sup_start_child(su, i);
		if (r.how == SMARM__SUP_IGNORE) {
			/* OTP's {ok, undefined}: kept with no pid, but a
			 * temporary child or an instance is not kept */
			r.how = 0;
			if (su->su_kids[i].ch_cs.cs_restart ==
				    SMARM_SUP_TEMPORARY ||
			    su->su_simple) {
				if (q->op != SMARM__SUP_OP_RESTART)
					sup_unappend(su);
				else
					sup_delete(su, i);
			}
			break;
		}
		if (r.how != 0) {
			/* a start that found its name taken says by whom
			 * (OTP's {already_started, Pid} of a process started
			 * outside the supervisor) */
			if (r.how == SMARM_EEXIST)
				r.from.id = (uint64_t)su->su_kids[i].ch_info;
			if (q->op != SMARM__SUP_OP_RESTART)
				sup_unappend(su); /* nothing recorded */
			break;
		}
		r.from.id = su->su_kids[i].ch_pid;
		r.ref = (uint64_t)su->su_kids[i].ch_info;
		break;
	case SMARM__SUP_OP_TERMINATE:
	case SMARM__SUP_OP_TERMINATE_PID:
		sup_set_restarting(su, i, false); /* no more retries (OTP) */
		sup_stop_child(su, i);
		if (su->su_kids[i].ch_cs.cs_restart == SMARM_SUP_TEMPORARY ||
		    su->su_simple)
			sup_delete(su, i); /* an instance goes too (OTP) */
		break;
	case SMARM__SUP_OP_DELETE:
		if (su->su_kids[i].ch_pid != 0)
			r.how = SMARM_ESTATE; /* running */
		else if (su->su_kids[i].ch_restarting)
			r.how = SMARM_ERESTARTING;
		else
			sup_delete(su, i);
		break;
	case SMARM__SUP_OP_WHICH: {
		uint32_t live = su->su_n - su->su_gone, w = 0;
		smarm_sup_child_info_t *items =
			malloc((live ? live : 1) * sizeof *items);
		if (items == NULL) {
			r.how = SMARM_ENOMEM;
			break;
		}
		for (uint32_t k = 0; k < su->su_n; k++) {
			const struct sup_child *c = &su->su_kids[k];
			smarm_sup_child_info_t *it = &items[w];
			if (c->ch_gone)
				continue; /* a hole (INV-4) */
			w++;
			memcpy(it->id, c->ch_cs.cs_id, sizeof it->id);
			it->pid.id = c->ch_pid;
			it->restart = c->ch_cs.cs_restart;
			it->type = c->ch_cs.cs_type;
			it->significant = c->ch_cs.cs_significant;
			it->state = c->ch_pid != 0 ? SMARM_SUP_CHILD_RUNNING
				    : c->ch_restarting
					    ? SMARM_SUP_CHILD_RESTARTING
					    : SMARM_SUP_CHILD_STOPPED;
		}
		r.kind = SMARM__SUP_KIND_ITEMS;
		r.ref = w;
		r.reason = (intptr_t)items;
		break;
	}
	case SMARM__SUP_OP_COUNT: {
		uint64_t active = 0, sups = 0;
		uint64_t live = su->su_n - su->su_gone;
		uint64_t specs = su->su_simple ? 1 : live; /* template */
		for (uint32_t k = 0; k < su->su_n; k++) {
			if (su->su_kids[k].ch_gone)
				continue; /* a hole (INV-4) */
			active += su->su_kids[k].ch_pid != 0;
			sups += su->su_kids[k].ch_cs.cs_type ==
				SMARM_SUP_SUPERVISOR;
		}
		r.ref = specs << 32 | active;
		r.reason = (intptr_t)(sups << 32 | (live - sups));
		break;
	}
	default:
		r.how = SMARM_EINVAL;
	}
reply:
	/* the caller may have given up: its channel is then refused */
	if (smarm_chan_send(q->reply, &r) != 0)
		items_free(&r);
}

/* Supervise until an exit signal says to end; then stop the children. */
static void sup_loop(struct sup *su) __attribute__((noreturn));
static void sup_loop(struct sup *su)
{
	for (;;) {
		smarm_signal_t m;
		struct smarm__sup_ctl q;
		size_t ready;
		while (smarm__ring_len(&su->su_pend) != 0) {
			uint32_t k = *(uint32_t *)smarm__ring_pop_front(
				&su->su_pend, sizeof(uint32_t));
			su->su_kids[k].ch_inring = false;
			if (su->su_kids[k].ch_pending) {
				su->su_kids[k].ch_pending = false;
				sup_death(su, (int)k);
			}
		}
		if (su->su_gone * 2 > su->su_n)
			sup_compact(su); /* amortised O(1) per deletion */
		if (su->su_stop)
			break;
		if (smarm_chan_try_recv(su->su_sig, &m) == 0) {
			int j = sup_take(su, &m);
			if (j >= 0)
				sup_death(su, j);
			continue;
		}
		if (su->su_nretry != 0) {
			/* one request queued before the retry goes first,
			 * then the retry: neither starves the other */
			if (smarm_chan_try_recv(su->su_ctl, &q) == 0)
				sup_ctl(su, &q);
			sup_retry(su);
			continue;
		}
		if (smarm_chan_try_recv(su->su_ctl, &q) == 0) {
			sup_ctl(su, &q);
			continue;
		}
		if (smarm_selset_wait(su->su_set, SMARM_NO_TIMEOUT, &ready) !=
		    0)
			break; /* cannot happen: we hold every reference */
	}
	sup_stop_all(su);
	sup_end(su);
}

int smarm__sup_run(struct smarm_sup_spec *owned, smarm_chan_t *sig,
		   bool report_setup_failure)
{
	struct sup *su = sup_new(owned, sig);
	const smarm_msgtype_t *t = ready_type();
	const smarm_msgtype_t *ct = ctl_type();
	int rc;
	if (su == NULL || t == NULL || ct == NULL) {
		if (sig != NULL)
			(void)smarm_trap_exit(NULL); /* sig is freed */
		if (su != NULL)
			sup_free(su);
		if (report_setup_failure)
			(void)smarm__sup_report(SMARM_ENOMEM, 0);
		return SMARM_ENOMEM;
	}
	rc = smarm_cleanup_push(sup_free, su);
	if (rc != 0) {
		if (sig != NULL)
			(void)smarm_trap_exit(NULL);
		sup_free(su);
		if (report_setup_failure)
			(void)smarm__sup_report(rc, 0);
		return rc;
	}
	rc = smarm_trap_exit(su->su_sig);
	if (rc == 0)
		rc = smarm_mailbox_publish(t, su->su_sig);
	if (rc == 0)
		rc = smarm_mailbox_publish(ct, su->su_ctl);
	if (rc != 0) {
		(void)smarm_trap_exit(NULL);
		(void)smarm_mailbox_unpublish(t);
		(void)smarm_mailbox_unpublish(ct);
		(void)smarm_cleanup_pop(true); /* sup_free */
		if (report_setup_failure)
			(void)smarm__sup_report(rc, 0);
		return rc;
	}
	su->su_parent = smarm__self_parent();
	for (uint32_t i = 0; i < su->su_n; i++) {
		rc = sup_start_child(su, (int)i);
		if (rc == SMARM__SUP_IGNORE) { /* kept with no pid (OTP) */
			if (su->su_kids[i].ch_cs.cs_restart ==
			    SMARM_SUP_TEMPORARY)
				sup_delete(su, (int)i);
			continue;
		}
		if (rc != 0) {
			for (int k = (int)i - 1; k >= 0; k--)
				sup_stop_child(su, k);
			if (su->su_stop)
				sup_end(su); /* told to end while starting */
			(void)smarm__sup_report(rc, 0);
			smarm__self_exit(SMARM_EXIT_NORMAL, 0);
		}
	}
	(void)smarm__sup_report(0, 0);
	sup_loop(su);
}

static void sup_body(void *arg)
{
	(void)smarm__sup_run(arg, NULL, true);
}

/*
 * Spawn body(arg), a supervisor, and wait for its report: 0 (*out set),
 * the failure it reported (*why: what it added), or, if it ended
 * first, down_status (*why: the reason of its end). An ignore report
 * is a start with no pid (*out SMARM_PID_NONE). Each failure waits for
 * the supervisor's end, so nothing of it is left. If the spawn fails,
 * undo(arg) runs.
 */
static int sup_spawn_wait(void (*body)(void *), void *arg, void (*undo)(void *),
			  int down_status, smarm_pid_t *out, intptr_t *why)
{
	const smarm_msgtype_t *t = ready_type();
	smarm_spawn_opts_t *opts = NULL;
	smarm_chan_t *ch = NULL;
	smarm_pid_t pid;
	uint64_t ref = 0;
	bool reported = false;
	int status = 0;
	intptr_t w = 0;
	int rc = t != NULL ? smarm_chan_alloc(&ch, sizeof(smarm_signal_t), NULL)
			   : SMARM_ENOMEM;
	if (rc == 0)
		rc = smarm_spawn_opts_alloc(&opts);
	if (rc == 0)
		rc = smarm_spawn_opts_set_monitor(opts, ch, &ref);
	if (rc == 0)
		rc = smarm_mailbox_publish(t, ch);
	if (rc == 0)
		rc = smarm_actor_spawn(&pid, body, arg, opts);
	if (rc != 0) {
		undo(arg);
		goto out;
	}
	(void)smarm_actor_detach(pid);
	for (;;) {
		smarm_signal_t m;
		rc = smarm_chan_recv(ch, &m);
		if (rc != 0)
			break;
		if (m.from.id != pid.id)
			continue;
		if (m.kind == SMARM__SUP_KIND_READY && !reported) {
			reported = true;
			status = (int)m.reason;
			w = (intptr_t)m.ref;
			if (status == 0)
				break;
		} else if (m.kind == SMARM_SIGNAL_DOWN) {
			if (!reported) {
				status = down_status;
				w = m.reason;
			}
			ref = 0;
			break;
		}
	}
	if (rc == 0)
		rc = status;
	if (ref != 0)
		(void)smarm_demonitor(ref, SMARM_DEMONITOR_FLUSH);
	if (rc == SMARM__SUP_IGNORE) {
		rc = 0; /* OTP's ignore: it ended, started nothing */
		pid = SMARM_PID_NONE;
	}
	if (rc == 0 && out != NULL)
		*out = pid;
	if (rc != 0 && why != NULL)
		*why = rc == status ? w : 0;
out:
	(void)smarm_mailbox_unpublish(t);
	smarm_spawn_opts_free(opts);
	if (ch != NULL)
		drop_chan(ch);
	return rc;
}

static void spec_drop(void *arg)
{
	smarm__sup_spec_destroy(arg);
}

/* Spawn a supervisor of copy (taken over); wait for its report. */
int smarm__sup_start(struct smarm_sup_spec *copy, smarm_pid_t *out)
{
	return sup_spawn_wait(sup_body, copy, spec_drop, SMARM_ESTARTFAILED,
			      out, NULL);
}

/* An init and its argument, on the starter's stack while it waits. */
struct sup_init {
	smarm_sup_init_cb si_fn;
	void *si_arg;
};

static void spec_free_cb(void *arg)
{
	smarm_sup_spec_free(arg);
}

/* Report a failed init (status, with why) and end normally. */
static void sup_init_fail(int status, intptr_t why) __attribute__((noreturn));
static void sup_init_fail(int status, intptr_t why)
{
	(void)smarm__sup_report(status, why);
	smarm__self_exit(SMARM_EXIT_NORMAL, 0);
}

static void chan_drop_cb(void *arg)
{
	drop_chan(arg);
}

/*
 * Build a spec with init (smarm_sup_init_cb) on the calling actor, so a
 * crash in init is its end, which its starter sees as a Down; then run
 * the supervisor. As OTP's supervisor:init/1 sets trap_exit before it
 * calls Module:init/1, the actor traps exits into the channel the
 * supervisor will take them from before init runs: an exit signal that
 * comes during init (a process init linked to ends, the parent asks it
 * to end) is a message the supervisor handles once it runs, as OTP's
 * handle_info({'EXIT', ...}) does, not the actor's end. init's ignore,
 * a failure, an invalid spec are reported to the spawner and end the
 * actor normally. Returns only if nothing could be set up (the code;
 * reported first if report_setup_failure).
 */
int smarm__sup_run_init(smarm_sup_init_cb fn, void *fn_arg,
			bool report_setup_failure)
{
	struct smarm_sup_spec *sp = NULL;
	smarm_chan_t *sig = NULL;
	int rc = smarm_chan_alloc(&sig, sizeof(smarm_signal_t), NULL);
	if (rc == 0) {
		rc = smarm_cleanup_push(chan_drop_cb, sig);
		if (rc != 0)
			drop_chan(sig);
	}
	if (rc == 0) {
		rc = smarm_trap_exit(sig);
		if (rc == 0)
			rc = smarm_sup_spec_alloc(&sp);
		if (rc == 0) {
			rc = smarm_cleanup_push(spec_free_cb, sp);
			if (rc != 0)
				smarm_sup_spec_free(sp);
		}
		if (rc != 0) {
			(void)smarm_trap_exit(NULL);
			(void)smarm_cleanup_pop(true); /* chan_drop_cb */
		}
	}
	if (rc != 0) {
		if (report_setup_failure)
			(void)smarm__sup_report(rc, 0);
		return rc;
	}
	rc = fn(fn_arg, sp);
	(void)smarm_cleanup_pop(false); /* sp is ours again */
	if (rc == 0 && (sp->sp_bad != 0 || smarm__sup_spec_check(sp) != 0)) {
		int bad = sp->sp_bad != 0 ? sp->sp_bad : SMARM_EBADSPEC;
		smarm_sup_spec_free(sp);
		sup_init_fail(SMARM_EBADSPEC, bad);
	}
	if (rc != 0) {
		smarm_sup_spec_free(sp);
		if (rc == SMARM_SUP_INIT_IGNORE)
			sup_init_fail(SMARM__SUP_IGNORE, 0);
		if (rc > 0)
			sup_init_fail(SMARM_EBADRETURN, rc);
		sup_init_fail(rc, 0);
	}
	(void)smarm_cleanup_pop(false); /* sig goes to the supervisor */
	return smarm__sup_run(sp, sig, report_setup_failure);
}

/* A supervisor whose spec init builds, on its own actor. */
static void sup_init_body(void *arg)
{
	const struct sup_init *in = arg;
	(void)smarm__sup_run_init(in->si_fn, in->si_arg, true);
}

static void nothing(void *arg)
{
	(void)arg;
}

int smarm__sup_start_init(smarm_sup_init_cb init, void *arg, smarm_pid_t *out,
			  intptr_t *why)
{
	struct sup_init in = { init, arg };
	return sup_spawn_wait(sup_init_body, &in, nothing, SMARM_EDOWN, out,
			      why);
}

/* ------------------------------------------- calls to a running one */

int smarm__sup_call(smarm_pid_t sup, struct smarm__sup_ctl *q,
		    uint64_t timeout_ns, smarm_signal_t *r)
{
	const smarm_msgtype_t *ct = ctl_type();
	smarm_chan_t *ch = NULL;
	uint64_t ref = 0;
	uint64_t deadline = deadline_of(timeout_ns);
	int rc;
	if (ct == NULL)
		return SMARM_ENOMEM;
	rc = smarm_chan_alloc(&ch, sizeof(smarm_signal_t), items_free);
	if (rc != 0)
		return rc;
	rc = smarm_monitor(sup, ch, &ref);
	if (rc != 0)
		goto out;
	q->reply = ch;
	rc = smarm_send(sup, ct, q);
	if (rc == SMARM_ENOCHAN || rc == SMARM_ECLOSED)
		rc = smarm__actor_ending(smarm__current_node(), sup.id)
			     ? SMARM_ENOPROC /* its mailbox went with its end */
			     : SMARM_EINVAL; /* alive, but no supervisor */
	if (rc != 0)
		goto out;
	for (;;) {
		rc = smarm_chan_recv_timeout(ch, r, remaining(deadline));
		if (rc != 0)
			break;
		if (r->kind == SMARM__SUP_KIND_REPLY ||
		    r->kind == SMARM__SUP_KIND_ITEMS) {
			break;
		}
		if (r->kind == SMARM_SIGNAL_DOWN) {
			ref = 0; /* fired */
			rc = SMARM_ENOPROC;
			break;
		}
	}
out:
	if (ref != 0)
		(void)smarm_demonitor(ref, SMARM_DEMONITOR_FLUSH);
	smarm_chan_sender_free(ch);
	smarm_chan_receiver_free(ch); /* a late reply: items_free */
	return rc;
}
