/* SPDX-License-Identifier: MIT */
/*
 * causal.c - the causal profiler's runtime half (causal.h): the node's
 * registries of sites and progress points, each actor's ledger, the
 * attribution of site time to the global delay, the scheduler's hooks
 * (switch-out, switch-in: the wake rules), the pay points where an
 * actor sleeps off its debt (and the exit's catch-up), the sampled
 * scope's SIGPROF sampler, and the dilation of timed sends. The
 * design, the wake rules and the
 * invariants (CAUSAL-1..3) are stated in causal.h; the experiment loop
 * that starts and ends experiments and writes the profile is
 * obs/causal.c.
 *
 * Ownership: the node's struct smarm__causal (init at open, fini at
 * close); a slot's ledger belongs to whoever runs its actor (and its
 * cz_credit to the SIGPROF handler on that thread, too); a worker's
 * sample ring and CPU timer to its thread (producer, timer) and the
 * profiler thread (consumer). The SIGPROF handler is process-wide,
 * installed once (sampler_once), never removed.
 * Locking: cz_lock (TABLE, a leaf) for registration only; the rings
 * are single-producer single-consumer (head and tail, release).
 * See: docs/observability.md (Causal profiling).
 */
#include "causal.h"

#include "node.h"
#include "preempt.h"
#include "region.h"
#include "sched.h"
#include "slot.h"
#include "subsys.h"
#include "timer.h"
#include "wait.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* One on-CPU stretch longer than this is a stall (a debugger, a stopped
 * process), not site time: dropped. */
#define MAX_STRETCH_NS 1000000000ull
/* A debt below this is not worth a park (the timer's own slack). */
#define PAY_MIN_NS 20000ull
/*
 * A pay point that wakes no one (smarm_check, a progress point, a
 * site's begin and end) pays only a debt of at least this much, as
 * Coz's threads pay at their sample batches; a catch-up before a wake
 * pays from PAY_MIN_NS. Each pay is a park and a wake, and a worker
 * left idle meanwhile sleeps and is woken: paid every 20 us, that
 * overhead slowed the site's own actor on the next CPU (a
 * paravirtualised 2-CPU VM, named sites at a 30% speedup: its rounds
 * 15% longer, the profile's slope half the true one;
 * docs/benchmarks.md, "The named scope's slope").
 */
#define PAY_BATCH_NS 1000000ull
/* A pay point inside a site reads the thread's CPU clock (a system
 * call) at most this often. */
#define ACCRUE_NS 50000ull

int smarm__causal_init(struct smarm_node *n)
{
	n->causal = calloc(1, sizeof *n->causal);
	return n->causal != NULL ? 0 : SMARM_ENOMEM;
}

void smarm__causal_fini(struct smarm_node *n)
{
	struct smarm__causal *cz = n->causal;
	if (cz == NULL)
		return;
	for (uint32_t i = 0; i < SMARM__CAUSAL_SITES; i++)
		free(cz->cz_site[i]);
	for (uint32_t i = 0; i < SMARM__CAUSAL_POINTS; i++)
		free(cz->cz_point[i]);
	if (cz->cz_slots != NULL)
		munmap(cz->cz_slots, cz->cz_slots_bytes);
	free(cz->cz_rings);
	free(cz);
	n->causal = NULL;
}

static void sampler_install(void);

int smarm__causal_enable(struct smarm_node *n, bool sampled)
{
	struct smarm__causal *cz = n->causal;
	size_t page = smarm__page_size();
	size_t all = (size_t)n->max_actors * sizeof(struct smarm__cslot);
	void *base;
	all = (all + page - 1) & ~(page - 1);
	/* Reserved and made read/write whole: pages never touched (slots
	 * never used) cost no memory. */
	base = smarm__region_reserve(all);
	if (base == NULL)
		return SMARM_ENOMEM;
	if (smarm__region_commit((uintptr_t)base, 0, all) != 0) {
		munmap(base, all);
		return SMARM_ENOMEM;
	}
	if (sampled) {
		void *r = NULL;
		size_t sz = (size_t)n->workers_n * sizeof *cz->cz_rings;
		if (posix_memalign(&r, 64, sz) != 0) {
			munmap(base, all);
			return SMARM_ENOMEM;
		}
		memset(r, 0, sz);
		cz->cz_rings = r;
		cz->cz_nrings = n->workers_n;
		/* The actors' text (smarm__text_is_actors), the unwinder. */
		smarm__preempt_setup();
		sampler_install();
	}
	cz->cz_slots = base;
	cz->cz_slots_bytes = all;
	cz->cz_accrue_cycles =
		(uint64_t)((double)ACCRUE_NS * (double)(1ull << 40) /
			   (double)smarm__cycles_to_ns(1ull << 40));
	cz->cz_on = true;
	return 0;
}

struct smarm__causal *smarm__causal_of(const struct smarm_node *n)
{
	return n->causal;
}

/* A name the profile can carry as it is: 1..63 printable bytes, none
 * of them a quote, a backslash or a tab (JSON and Coz's text lines). */
static bool name_ok(const char *name)
{
	size_t len;
	if (name == NULL)
		return false;
	len = strnlen(name, SMARM__CAUSAL_NAME_MAX);
	if (len == 0 || len >= SMARM__CAUSAL_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
			return false;
	}
	return true;
}

int smarm__causal_site_id(struct smarm__causal *cz, const char *name,
			  uint32_t *id)
{
	uint32_t k;
	struct smarm__causal_site *s;
	if (!name_ok(name))
		return SMARM_EINVAL;
	/* Lock-free first: sites are few and never removed. */
	k = atomic_load_explicit(&cz->cz_nsites, memory_order_acquire);
	for (uint32_t i = 0; i < k; i++)
		if (strcmp(cz->cz_site[i]->cs_name, name) == 0) {
			*id = i + 1;
			return 0;
		}
	smarm__lock(&cz->cz_lock, SMARM__RANK_TABLE);
	k = atomic_load_explicit(&cz->cz_nsites, memory_order_relaxed);
	for (uint32_t i = 0; i < k; i++)
		if (strcmp(cz->cz_site[i]->cs_name, name) == 0) {
			smarm__unlock(&cz->cz_lock, SMARM__RANK_TABLE);
			*id = i + 1;
			return 0;
		}
	if (k == SMARM__CAUSAL_SITES || (s = calloc(1, sizeof *s)) == NULL) {
		smarm__unlock(&cz->cz_lock, SMARM__RANK_TABLE);
		return SMARM_ENOMEM;
	}
	strcpy(s->cs_name, name);
	cz->cz_site[k] = s;
	atomic_store_explicit(&cz->cz_nsites, k + 1, memory_order_release);
	smarm__unlock(&cz->cz_lock, SMARM__RANK_TABLE);
	*id = k + 1;
	return 0;
}

int smarm__causal_point(struct smarm__causal *cz, const char *name, int kind,
			struct smarm__causal_point **out)
{
	uint32_t k;
	struct smarm__causal_point *p;
	if (!name_ok(name))
		return SMARM_EINVAL;
	k = atomic_load_explicit(&cz->cz_npoints, memory_order_acquire);
	for (uint32_t i = 0; i < k; i++)
		if (strcmp(cz->cz_point[i]->cp_name, name) == 0) {
			if (cz->cz_point[i]->cp_kind != kind)
				return SMARM_EINVAL;
			*out = cz->cz_point[i];
			return 0;
		}
	smarm__lock(&cz->cz_lock, SMARM__RANK_TABLE);
	k = atomic_load_explicit(&cz->cz_npoints, memory_order_relaxed);
	for (uint32_t i = 0; i < k; i++)
		if (strcmp(cz->cz_point[i]->cp_name, name) == 0) {
			p = cz->cz_point[i];
			smarm__unlock(&cz->cz_lock, SMARM__RANK_TABLE);
			if (p->cp_kind != kind)
				return SMARM_EINVAL;
			*out = p;
			return 0;
		}
	if (k == SMARM__CAUSAL_POINTS || (p = calloc(1, sizeof *p)) == NULL) {
		smarm__unlock(&cz->cz_lock, SMARM__RANK_TABLE);
		return SMARM_ENOMEM;
	}
	strcpy(p->cp_name, name);
	p->cp_cz = cz;
	p->cp_kind = kind;
	cz->cz_point[k] = p;
	atomic_store_explicit(&cz->cz_npoints, k + 1, memory_order_release);
	smarm__unlock(&cz->cz_lock, SMARM__RANK_TABLE);
	*out = p;
	return 0;
}

/* ------------------------------------------------------------ ledgers */

static inline uint64_t global_of(struct smarm__causal *cz)
{
	return atomic_load_explicit(&cz->cz_global, memory_order_relaxed);
}

/*
 * s's ledger, current: a new tenant starts owing nothing (its ledger
 * at the global delay), and a ledger meets a new experiment at its base
 * (CAUSAL-2): a debt left over is forgiven, and so is a lead (a pay
 * sleep that overshot), whose wall time the earlier experiment spent.
 */
static struct smarm__cslot *cs_of(struct smarm_node *n, struct smarm__slot *s)
{
	struct smarm__causal *cz = n->causal;
	struct smarm__cslot *c = &cz->cz_slots[s - n->slots];
	uint64_t pid = smarm__slot_pid(s);
	uint32_t ep = atomic_load_explicit(&cz->cz_epoch, memory_order_acquire);
	if (c->cz_pid != pid) {
		memset(c, 0, sizeof *c);
		c->cz_pid = pid;
		c->cz_local = global_of(cz);
		c->cz_epoch = ep;
	} else if (c->cz_epoch != ep) {
		uint64_t base = atomic_load_explicit(&cz->cz_base,
						     memory_order_relaxed);
		c->cz_local = base;
		c->cz_epoch = ep;
		/* Credit of an earlier experiment is forgiven with its debt. */
		if (atomic_load_explicit(&c->cz_credit, memory_order_relaxed))
			atomic_exchange_explicit(&c->cz_credit, 0,
						 memory_order_relaxed);
	} else if (atomic_load_explicit(&c->cz_credit, memory_order_relaxed)) {
		/* Sampled scope: what its samples in the selected function
		 * credited (the handler runs on this thread: an exchange is
		 * enough). */
		c->cz_local += atomic_exchange_explicit(&c->cz_credit, 0,
							memory_order_relaxed);
	}
	return c;
}

/*
 * Close c's site stretch at now (CAUSAL-3) and open the next one: the
 * stretch counts as samples of its site and, if that is the
 * experiment's site, as delay everyone else owes (the actor itself is
 * credited: its virtual speedup).
 */
static void accrue(struct smarm__causal *cz, struct smarm__cslot *c,
		   uint64_t now)
{
	uint64_t t0 = c->cz_t0;
	uint64_t dt, exp;
	c->cz_t0 = c->cz_site != 0 ? now : 0;
	if (t0 == 0 || c->cz_site == 0 || now <= t0)
		return;
	dt = now - t0;
	if (dt > MAX_STRETCH_NS)
		return;
	atomic_fetch_add_explicit(&cz->cz_site[c->cz_site - 1]->cs_ns, dt,
				  memory_order_relaxed);
	exp = atomic_load_explicit(&cz->cz_exp, memory_order_relaxed);
	if (exp != 0 && (uint32_t)(exp >> 32) == c->cz_site) {
		uint64_t d = dt * (exp & 0xffffffffu) / 100;
		atomic_fetch_add_explicit(&cz->cz_global, d,
					  memory_order_relaxed);
		c->cz_local += d;
	}
}

/* The site clock: this thread's CPU time (causal.h). */
static inline uint64_t site_now(void)
{
	return smarm__thread_cpu_ns();
}

void smarm__causal_switch(struct smarm__worker *w, struct smarm__slot *p,
			  int intent, struct smarm__slot *next)
{
	struct smarm_node *n = w->node;
	struct smarm__causal *cz = n->causal;
	struct smarm__cslot *c = cs_of(n, p);
	if (c->cz_t0 != 0)
		accrue(cz, c, site_now());
	c->cz_t0 = 0; /* off the CPU (CAUSAL-3) */
	/* A real park notes the global delay for the wake rules; a yield
	 * or a preemption keeps its debt (it was runnable). */
	c->cz_parked = (intent == SMARM__INTENT_PARK ||
			intent == SMARM__INTENT_HIBERNATE) &&
		       p->wait != NULL;
	if (c->cz_parked)
		c->cz_park = global_of(cz);
	if (next != NULL)
		smarm__causal_run_in(w, next);
}

void smarm__causal_run_in(struct smarm__worker *w, struct smarm__slot *s)
{
	struct smarm_node *n = w->node;
	struct smarm__causal *cz = n->causal;
	struct smarm__cslot *c = cs_of(n, s);
	if (c->cz_parked) {
		uint64_t now = smarm__clock_ns();
		const struct smarm__wait *wt = s->wait;
		/* Its own deadline ended the park: no skip (a sleep always,
		 * a timed wait once its deadline has passed). */
		bool timeout = s->wait_on == SMARM__WON_SLEEP ||
			       (wt != NULL && wt->wt_deadline != 0 &&
				now >= wt->wt_deadline);
		uint64_t g = global_of(cz);
		uint64_t from = atomic_load_explicit(&cz->cz_base,
						     memory_order_relaxed);
		/* Since it parked, or since this experiment began (its
		 * ledger was brought up to the base: CAUSAL-2). */
		if (c->cz_park > from)
			from = c->cz_park;
		c->cz_parked = false;
		if (!timeout && g > from)
			c->cz_local += g - from;
	}
	c->cz_t0 = c->cz_site != 0 ? site_now() : 0;
	c->cz_tsc = smarm__cycles_fast();
}

/*
 * Sleep off the running actor's debt: a timed park of its own (no skip
 * at its end), so the worker runs other actors meanwhile; what it
 * slept goes to its ledger. Again while an experiment is on and the
 * debt is still worth a park (it grows while it sleeps if the site
 * runs meanwhile). Only where the actor may park: not inside a runtime
 * bracket, an exit or a refused park.
 */
static void pay(struct smarm_node *n, struct smarm__slot *me, uint64_t min)
{
	struct smarm__causal *cz = n->causal;
	for (;;) {
		struct smarm__cslot *c = cs_of(n, me);
		uint64_t g = global_of(cz);
		uint64_t t, debt;
		struct smarm__wait wt;
		if (atomic_load_explicit(&cz->cz_exp, memory_order_relaxed) ==
			    0 ||
		    g <= c->cz_local + min)
			return;
		debt = g - c->cz_local;
		t = smarm__clock_ns();
		smarm__wait_init(&wt, me, smarm__deadline_after(debt), NULL,
				 NULL);
		smarm__wait_open(&wt);
		smarm__wait_note(SMARM__WON_SLEEP, 0);
		if (smarm__wait_park(&wt) != 0) {
			smarm__wait_note(SMARM__WON_NONE, 0);
			smarm__wait_retire(&wt);
			return;
		}
		smarm__wait_note(SMARM__WON_NONE, 0);
		c = cs_of(n, me);
		c->cz_local += smarm__clock_ns() - t;
	}
}

/* A pay point on worker w of a profiling node (exiting: the exit's
 * catch-up, where the actor may still park), paying a debt of min or
 * more. Out of line: a node that only traces or keeps statistics
 * reaches the pay points too, and leaves at the caller's one test of
 * w->causal without this frame. */
static __attribute__((noinline)) void pay_point(struct smarm__worker *w,
						bool exiting, uint64_t min)
{
	struct smarm__slot *me;
	struct smarm_node *n;
	struct smarm__cslot *c;
	if ((me = w->cur) == NULL || w->in_finish)
		return;
	n = w->node;
	c = cs_of(n, me);
	if (c->cz_t0 != 0) { /* in a site: now and then (ACCRUE_NS) */
		uint64_t t = smarm__cycles_fast();
		if (t - c->cz_tsc >= n->causal->cz_accrue_cycles) {
			c->cz_tsc = t;
			accrue(n->causal, c, site_now());
		}
	}
	if (me->rt_nopreempt != 0 || (me->exiting && !exiting) ||
	    (me->park_fl & SMARM__PF_NOPARK))
		return;
	pay(n, me, min);
}

void smarm__causal_pay_slow(void)
{
	struct smarm__worker *w = smarm__tls_worker;
	if (w != NULL && w->causal)
		pay_point(w, false, PAY_MIN_NS);
}

void smarm__causal_pay_batch_slow(void)
{
	struct smarm__worker *w = smarm__tls_worker;
	if (w != NULL && w->causal)
		pay_point(w, false, PAY_BATCH_NS);
}

/*
 * Coz's catch-up before an exit wakes anyone: its Downs and exit
 * signals (the exit hooks) and its joiner (finalize) come after this,
 * as a channel send's wake comes after its pay point. The actor is
 * past its cleanup handlers, which may park too (actor.c).
 */
void smarm__causal_pay_exit(struct smarm__slot *me)
{
	struct smarm__worker *w = smarm__tls_worker;
	if (w != NULL && w->causal && w->cur == me)
		pay_point(w, true, PAY_MIN_NS);
}

/* Named sites count: the profiler is on, in named scope (sampled, the
 * sites are functions and named ones are only pay points). */
static inline bool named_on(const struct smarm__worker *w)
{
	return w->causal && w->node->causal->cz_rings == NULL;
}

uint32_t smarm__causal_site_cur(struct smarm__slot *me)
{
	struct smarm__worker *w = smarm__tls_worker;
	return named_on(w) ? cs_of(w->node, me)->cz_site : 0;
}

uint32_t smarm__causal_site_enter(struct smarm__slot *me, uint32_t id)
{
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm_node *n = w->node;
	struct smarm__cslot *c;
	uint64_t now;
	uint32_t old;
	if (!named_on(w)) { /* off: sites mean nothing */
		smarm__causal_pay_batch_slow();
		return 0;
	}
	smarm__causal_pay_batch_slow();
	c = cs_of(n, me);
	now = site_now();
	accrue(n->causal, c, now);
	old = c->cz_site;
	c->cz_site = id;
	c->cz_t0 = id != 0 ? now : 0;
	return old;
}

void smarm__causal_site_leave(struct smarm__slot *me, uint32_t saved)
{
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm_node *n = w->node;
	struct smarm__cslot *c;
	uint64_t now;
	if (!named_on(w)) {
		smarm__causal_pay_batch_slow();
		return;
	}
	c = cs_of(n, me);
	now = site_now();
	accrue(n->causal, c, now);
	c->cz_site = saved;
	c->cz_t0 = saved != 0 ? now : 0;
	smarm__causal_pay_batch_slow();
}

/* --------------------------------------------------------- experiments */

void smarm__causal_begin(struct smarm__causal *cz, uint32_t site, int pct)
{
	atomic_store_explicit(&cz->cz_base, global_of(cz),
			      memory_order_relaxed);
	atomic_fetch_add_explicit(&cz->cz_epoch, 1, memory_order_release);
	atomic_store_explicit(&cz->cz_exp,
			      ((uint64_t)site << 32) | (uint32_t)pct,
			      memory_order_release);
}

void smarm__causal_end(struct smarm__causal *cz)
{
	atomic_store_explicit(&cz->cz_exp, 0, memory_order_release);
}

void smarm__causal_begin_sampled(struct smarm__causal *cz,
				 const struct smarm__causal_sel *sel, int pct)
{
	/* The ranges first: a handler that sees the experiment (acquire)
	 * sees them. */
	atomic_store_explicit(&cz->cz_sel, sel, memory_order_relaxed);
	smarm__causal_begin(cz, SMARM__CAUSAL_SAMPLED, pct);
}

/* Whether pc lies in one of the selected site's ranges (a search of the
 * sorted pairs; async-signal-safe). */
static bool in_selected(const struct smarm__causal *cz, uintptr_t pc)
{
	const struct smarm__causal_sel *sel =
		atomic_load_explicit(&cz->cz_sel, memory_order_relaxed);
	uint32_t a = 0, b;
	if (sel == NULL)
		return false;
	b = sel->cs_n;
	while (a < b) { /* the first range that ends above pc */
		uint32_t m = a + (b - a) / 2;
		if (sel->cs_rg[2 * m + 1] <= pc)
			a = m + 1;
		else
			b = m;
	}
	return a < sel->cs_n && sel->cs_rg[2 * a] <= pc;
}

/* ------------------------------------------------------------ samples */

/*
 * Sampled scope. Each worker thread of a profiling node has a timer on
 * its own CPU clock (smarm__cpu_timer_start) that sends it SIGPROF
 * every SMARM__CAUSAL_SAMPLE_NS of CPU time: a perf task-clock event
 * where perf events are allowed, whose signal comes on time, else a
 * POSIX CPU timer, which the kernel checks at its tick, so that one of
 * its signals may stand for several periods (at HZ=250 about 4). Coarse
 * samples make coarse delays: a 4 ms lump of delay that lands while a
 * bystander waits for the selected actor's message is skipped at its
 * wake (the skip rule above) though the bystander ran through most of
 * the time it stands for, and the profile overstates the speedup (path-a
 * measured 69% where 40% was predicted, at 100%; docs/benchmarks.md).
 * The handler, on the worker's thread:
 *   1. takes the interrupted pc; outside the actors' own text
 *      (smarm__text_is_actors), the return address into it if libc was
 *      called from there (smarm__called_by_actors, as preempt.c's
 *      return-path preemption unwinds), else counts the sample as
 *      outside and stops (the runtime's own code, an idle worker);
 *   2. puts (pc, samples) in the worker's ring for the profiler thread,
 *      which names the function and picks sites (obs/causal.c);
 *   3. during an experiment on a sampled site, a function or a source
 *      line (site id SMARM__CAUSAL_SAMPLED), one of whose ranges holds
 *      pc: adds speedup x
 *      samples x period to the global delay and credits the running
 *      actor as much (Coz's samples in the selected line: its virtual
 *      speedup), through cz_credit, which cs_of folds into its ledger.
 * A pc in the actors' text means the worker runs an actor (w->cur), and
 * the actor's ledger was made current at its switch-in (run_in), so the
 * handler needs no lock and writes one atomic of the ledger. It is
 * async-signal-safe (INV-P2's rules: its own thread's worker only).
 * SIGPROF is process-wide: the handler is installed once, and a SIGPROF
 * that is not from this worker's timer (smarm__cpu_timer_hit), nor a late
 * one of a POSIX timer of ours (si_code SI_TIMER and the mark below),
 * goes to the handler that was there before.
 */
static char sampler_mark; /* si_value of our timers' signals */
static struct sigaction prior_prof;
static pthread_once_t sampler_once = PTHREAD_ONCE_INIT;

static void prof_chain(int sig, siginfo_t *si, void *ctx)
{
	if (prior_prof.sa_flags & SA_SIGINFO) {
		if (prior_prof.sa_sigaction != NULL)
			prior_prof.sa_sigaction(sig, si, ctx);
	} else if (prior_prof.sa_handler != SIG_IGN &&
		   prior_prof.sa_handler != SIG_DFL) {
		prior_prof.sa_handler(sig);
	}
}

static void on_sigprof(int sig, siginfo_t *si, void *ctx)
{
	int saved_errno = errno;
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm__causal *cz;
	struct smarm__causal_ring *r;
	struct smarm__slot *s;
	uintptr_t pc;
	uint32_t k, h;
	uint64_t exp;

	/* Late (the run is over: a POSIX timer's signal, known by its
	 * mark), a node that does not sample, or not this worker's. */
	if (w == NULL || !w->causal ||
	    (cz = w->node->causal)->cz_rings == NULL ||
	    w->id >= cz->cz_nrings || !cz->cz_rings[w->id].cr_armed ||
	    (k = smarm__cpu_timer_hit(&(r = &cz->cz_rings[w->id])->cr_timer,
				      si)) == 0) {
		if (si->si_code != SI_TIMER ||
		    si->si_value.sival_ptr != &sampler_mark)
			prof_chain(sig, si, ctx);
		goto out;
	}
	s = w->cur;
	pc = smarm__uc_pc(ctx);
	if (s == NULL ||
	    (!smarm__text_is_actors(pc) &&
	     !smarm__called_by_actors(s, ctx,
				      (uintptr_t)s->stk_base + s->stk_guard +
					      s->stk_reserve,
				      &pc))) {
		atomic_fetch_add_explicit(&r->cr_out, k, memory_order_relaxed);
		goto out;
	}
	h = atomic_load_explicit(&r->cr_head, memory_order_relaxed);
	if (h - atomic_load_explicit(&r->cr_tail, memory_order_acquire) <
	    SMARM__CAUSAL_RING) {
		r->cr_pc[h % SMARM__CAUSAL_RING] = pc;
		r->cr_n[h % SMARM__CAUSAL_RING] = k;
		atomic_store_explicit(&r->cr_head, h + 1, memory_order_release);
	} else {
		atomic_fetch_add_explicit(&r->cr_lost, k, memory_order_relaxed);
	}
	exp = atomic_load_explicit(&cz->cz_exp, memory_order_acquire);
	if ((uint32_t)(exp >> 32) == SMARM__CAUSAL_SAMPLED &&
	    in_selected(cz, pc) &&
	    atomic_load_explicit(&cz->cz_exp, memory_order_relaxed) == exp) {
		struct smarm__cslot *c = &cz->cz_slots[s - w->node->slots];
		uint64_t d = (uint64_t)k * SMARM__CAUSAL_SAMPLE_NS *
			     (exp & 0xffffffffu) / 100;
		/* Made current at its switch-in (run_in): its pid. */
		if (c->cz_pid == smarm__slot_pid(s) && d != 0) {
			atomic_fetch_add_explicit(&cz->cz_global, d,
						  memory_order_relaxed);
			atomic_fetch_add_explicit(&c->cz_credit, d,
						  memory_order_relaxed);
		}
	}
out:
	errno = saved_errno;
}

static void sampler_init(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, &prior_prof);
}

static void sampler_install(void)
{
	pthread_once(&sampler_once, sampler_init);
}

void smarm__causal_thread_start(struct smarm__worker *w)
{
	struct smarm__causal *cz = w->node->causal;
	struct smarm__causal_ring *r;
	if (cz->cz_rings == NULL || w->id >= cz->cz_nrings)
		return;
	r = &cz->cz_rings[w->id];
	/* No timer: no samples from this worker, the rest still works. */
	r->cr_armed = smarm__cpu_timer_start(SIGPROF, &sampler_mark,
					     SMARM__CAUSAL_SAMPLE_NS,
					     &r->cr_timer) == 0;
}

void smarm__causal_thread_end(struct smarm__worker *w)
{
	struct smarm__causal *cz = w->node->causal;
	struct smarm__causal_ring *r;
	if (cz->cz_rings == NULL || w->id >= cz->cz_nrings)
		return;
	r = &cz->cz_rings[w->id];
	if (r->cr_armed)
		smarm__cpu_timer_stop(&r->cr_timer);
	r->cr_armed = false;
}

/* ------------------------------------------------------------- timers */

/*
 * Timers dilated. A timed call (the timer of a timed send) is a wake
 * that no waker's pay point precedes: the timer fires it. So that it
 * cannot wake anyone before its armer's virtual time, it fires later
 * by the delay its armer owed when it armed it (the debt it was about
 * to pay) plus all the delay injected while it was pending (what an
 * actor sleeping through that time would owe at its wake: a timed
 * wait skips nothing, causal.h). The stamp is the armer's ledger + 1
 * (0: not dilated); at each due time the timer moves by global -
 * (stamp - 1) and the stamp to global + 1. Bounded waits and sleeps are
 * not shifted: their owner pays what accrued at its next pay point.
 */
uint64_t smarm__causal_timer_stamp(struct smarm_node *n)
{
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm__slot *me;
	if (w == NULL || !w->causal || w->node != n || (me = w->cur) == NULL ||
	    w->in_finish)
		return 0;
	return cs_of(n, me)->cz_local + 1;
}

uint64_t smarm__causal_timer_shift(struct smarm_node *n, uint64_t *stamp)
{
	uint64_t g = global_of(n->causal);
	uint64_t from = *stamp - 1;
	if (*stamp == 0 || g <= from)
		return 0;
	*stamp = g + 1;
	return g - from;
}
