/* SPDX-License-Identifier: MIT */
/*
 * causal.h - the causal profiler's runtime half: the node's ledger of
 * injected delay, its named sites and progress points, each actor's
 * own ledger, and the hooks by which the scheduler and the send path
 * "control time" (Coz's virtual speedup, moved onto actors). The
 * experiment loop and the profile file are the obs layer's
 * (obs/causal.c); this header is all the layers below need.
 *
 * Virtual speedup. To ask "what if site S ran p% faster?", every actor
 * but the one running S is slowed by p% of the time S runs: while an
 * experiment (S, p) is on, each stretch dt of on-CPU time an actor
 * spends in S adds dt*p/100 to the node's global delay, and to that
 * actor's own ledger (its credit: the virtual speedup). Every other
 * actor then owes global - own, and pays it at its next pay point by
 * sleeping (a timed park: the worker runs other actors meanwhile), and
 * what it slept is added to its ledger. Injected delay does not exist
 * on the virtual time line, so the profiler reports progress over
 * wall time minus the global delay added during the experiment.
 *
 * Glossary.
 *   site        a named code region an actor marks (smarm_site_begin);
 *               sites nest, an actor is in one (or none) at a time.
 *   point       a named progress point: a throughput counter, or a
 *               latency pair (arrivals, departures).
 *   global      cz_global: ns of delay every actor owes since open.
 *   local       an actor's cz_local: ns it has absorbed or been
 *               credited; global - local is its debt.
 *   pay point   where an actor pays its debt: smarm_check, a send
 *               (before its message can wake anyone: Coz's catch_up),
 *               a green mutex's release, an exit signal or a stop it
 *               sends (actor.c smarm__request_stop), its own exit
 *               before its Downs, exit signals and joiner's wake
 *               (smarm__causal_pay_exit) (likewise), a progress point,
 *               a site's begin and end. A catch-up before a wake pays
 *               a debt from 20 us; a pay point that wakes no one
 *               (smarm_check, a progress point, a site's begin and
 *               end) only from 1 ms, in batches (causal.c).
 *   sampled     the other scope (SMARM_CAUSAL_SCOPE_SAMPLED): the sites
 *               are functions of the actors' code, found by a SIGPROF
 *               sample of each worker every 1 ms of its CPU time
 *               (causal.c, "samples"); a sample in the selected
 *               function adds speedup x 1 ms to the global delay and
 *               credits its actor as much, as Coz does.
 *
 * Wake rules (Coz's pre_block/post_block). An actor that parks notes
 * the global delay; if a message (any waker but its own timer) ends
 * the park, the delay added while it waited is skipped (added to its
 * ledger): it was blocked, not slow. A park its deadline ended (a sleep,
 * a receive that timed out) skips nothing. A sender pays first, so its
 * message cannot wake a receiver before the sender's own virtual time.
 * A timed send's timer, which no pay point precedes, is dilated
 * instead: it fires later by what its armer owed plus the delay
 * injected while it was pending (causal.c, "Timers dilated").
 *
 * Off-cost. The hooks in sched.c hang off the one flag that guards
 * the actor statistics and the tracer (the worker's obs_on, and
 * smarm__tls_obs on the message paths): a node that does none of the
 * three pays one predictable branch per site, as before; the send path
 * and smarm_check test smarm__tls_obs once.
 *
 * Ownership: the node owns its struct smarm__causal from open
 * (smarm__causal_init) to close (smarm__causal_fini); sites and points
 * live as long as the node. A slot's struct smarm__cslot is written by
 * the worker that runs its actor, or that finishes its switch (sched.c
 * finish_switch, before the actor can run anywhere else); the profiler
 * thread reads only the node's atomics.
 * Locking: cz_lock (TABLE, a leaf) serialises registration; readers
 * find sites and points lock-free (published count, acquire).
 * Site time is the CPU time of the actor's worker thread (a thread the
 * kernel deschedules accrues nothing meanwhile, as Coz's samples count
 * only time on a CPU); delay is paid in wall time. The thread's CPU
 * clock is a system call, so a pay point inside a site reads it at
 * most every ACCRUE_NS of wall time (causal.c); switches and site
 * boundaries always do.
 *
 * Invariants: CAUSAL-1 cz_global only grows. CAUSAL-2 an actor's debt
 * is counted only from the current experiment's start (its ledger is
 * set to cz_base when it first meets a new epoch), so neither a debt
 * nor a lead crosses experiments. CAUSAL-3 a site stretch is counted only
 * while its actor is on a CPU (armed at switch-in, closed at
 * switch-out, all on the one worker thread it runs on meanwhile).
 * See: docs/observability.md (Causal profiling).
 */
#ifndef SMARM_CORE_CAUSAL_H
#define SMARM_CORE_CAUSAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lock.h"

struct smarm_node;
struct smarm__slot;
struct smarm__worker;

#define SMARM__CAUSAL_SITES 64	  /* named sites per node */
#define SMARM__CAUSAL_POINTS 64	  /* progress points per node */
#define SMARM__CAUSAL_NAME_MAX 64 /* bytes of a name, NUL included */

/* A named site. */
struct smarm__causal_site {
	char cs_name[SMARM__CAUSAL_NAME_MAX];
	_Atomic uint64_t cs_ns; /* on-CPU ns observed in it (samples) */
};

/* A progress point (the public smarm_progress_t). */
struct smarm__causal_point {
	char cp_name[SMARM__CAUSAL_NAME_MAX];
	struct smarm__causal *cp_cz; /* its node's profiler state */
	int cp_kind;		     /* SMARM_PROGRESS_* */
	_Atomic uint64_t cp_count;   /* visits, or a latency's arrivals */
	_Atomic uint64_t cp_dep;     /* a latency's departures */
};

/* An actor's ledger: one per slot, valid for the pid in it (a new
 * tenant is initialised at first sight, cs_of in causal.c). */
struct smarm__cslot {
	uint64_t cz_pid;   /* whose; another pid: stale */
	uint64_t cz_local; /* ns of delay absorbed or credited */
	uint64_t cz_park;  /* cz_global when it last parked */
	uint64_t cz_t0;	   /* its thread's CPU ns when its site stretch
			      began; 0: unarmed */
	uint64_t cz_tsc;   /* cycles at its last accrual (rate limit) */
	uint32_t cz_site;  /* the site it is in; 0: none */
	uint32_t cz_epoch; /* the experiment its ledger was brought into */
	bool cz_parked;	   /* its last switch-out was a park */
	/* Sampled scope: delay credited by samples in the selected function
	 * (the SIGPROF handler adds, on the actor's own thread; cs_of folds
	 * it into cz_local). */
	_Atomic uint64_t cz_credit;
};

/* The experiment's site id when it selects a sampled site (a function
 * or a source line: the ranges cz_sel): no named site has it. */
#define SMARM__CAUSAL_SAMPLED 0xffffffffu
#define SMARM__CAUSAL_RING 1024		   /* samples a worker keeps */
#define SMARM__CAUSAL_SAMPLE_NS 1000000ull /* CPU time per sample */

/*
 * A worker's samples (sampled scope): a ring with one producer, the
 * SIGPROF handler on the worker's thread (cr_head, release), and one
 * consumer, the profiler thread (cr_tail, release). A full ring drops
 * the sample and counts it.
 */
struct smarm__causal_ring {
	_Alignas(64) _Atomic uint32_t cr_head;
	_Atomic uint32_t cr_tail;
	_Atomic uint64_t cr_lost;	  /* samples dropped: ring full */
	_Atomic uint64_t cr_out;	  /* samples outside the actors' code */
	struct smarm__cpu_timer cr_timer; /* the worker thread's sampler */
	bool cr_armed;			  /* cr_timer exists */
	uintptr_t cr_pc[SMARM__CAUSAL_RING]; /* a pc in the actors' code */
	uint32_t cr_n[SMARM__CAUSAL_RING];   /* samples it stands for */
};

/* A sampled site's text (a function's, or a source line's, whose code
 * may lie in several places): cs_n ranges [lo, hi) as pairs, sorted and
 * disjoint. The profiler thread's memory, kept until the node closes (a
 * handler may still read it after its experiment ended). */
struct smarm__causal_sel {
	uint32_t cs_n;
	uintptr_t cs_rg[]; /* 2 x cs_n */
};

/* A node's causal profiler state (allocated for every node: sites and
 * points work, and count, with the profiler off). */
struct smarm__causal {
	/* The experiment: (site id << 32) | speedup percent; 0: none. */
	_Alignas(64) _Atomic uint64_t cz_exp;
	_Atomic uint64_t cz_global; /* CAUSAL-1 */
	_Atomic uint64_t cz_base;   /* cz_global at the experiment's start */
	_Atomic uint32_t cz_epoch;  /* +1 at each experiment's start */
	_Alignas(64) bool cz_on;    /* profiling: the hooks run */
	_Atomic uint64_t cz_done;   /* experiments written */
	smarm__lock_t cz_lock;	    /* registration */
	_Atomic uint32_t cz_nsites, cz_npoints; /* published (release) */
	struct smarm__causal_site *cz_site[SMARM__CAUSAL_SITES]; /* id-1 */
	struct smarm__causal_point *cz_point[SMARM__CAUSAL_POINTS];
	struct smarm__cslot *cz_slots; /* max_actors entries, or NULL */
	size_t cz_slots_bytes;
	uint64_t cz_accrue_cycles; /* a pay point in a site accrues after */
	/* Sampled scope (cz_rings != NULL): the selected site's text, set
	 * by the profiler thread before the experiment starts (one pointer:
	 * a handler reads the ranges and their count together). */
	_Atomic(const struct smarm__causal_sel *) cz_sel;
	struct smarm__causal_ring *cz_rings; /* one per worker, or NULL */
	int cz_nrings;
};

/* At node open / close. 0 or SMARM_ENOMEM. */
int smarm__causal_init(struct smarm_node *n);
void smarm__causal_fini(struct smarm_node *n);
/* Turn the hooks on (obs/causal.c, at open, before any run), with a
 * sample ring per worker if sampled: 0 or SMARM_ENOMEM. */
int smarm__causal_enable(struct smarm_node *n, bool sampled);
struct smarm__causal *smarm__causal_of(const struct smarm_node *n);

/* Registration: the site's id (1..) or point, found or made. 0,
 * SMARM_EINVAL (a bad name, a point of another kind) or SMARM_ENOMEM
 * (no room left). */
int smarm__causal_site_id(struct smarm__causal *cz, const char *name,
			  uint32_t *id);
int smarm__causal_point(struct smarm__causal *cz, const char *name, int kind,
			struct smarm__causal_point **out);

/* The running actor enters site id (0: none) and gets the one it
 * leaves; leaves back to saved. Actor context, on a worker of the
 * actor's node; pay points. With the profiler off both do nothing. */
uint32_t smarm__causal_site_enter(struct smarm__slot *me, uint32_t id);
/* The site the running actor is in (0: none, or the profiler is off). */
uint32_t smarm__causal_site_cur(struct smarm__slot *me);
void smarm__causal_site_leave(struct smarm__slot *me, uint32_t saved);

/* Hooks: sched.c, under w->obs_on, for a worker of a profiling node. */
void smarm__causal_switch(struct smarm__worker *w, struct smarm__slot *p,
			  int intent, struct smarm__slot *next);
void smarm__causal_run_in(struct smarm__worker *w, struct smarm__slot *s);

/* A pay point of the running actor (smarm__tls_obs set): a catch-up
 * before a wake (pay), or one that wakes no one (batch). */
void smarm__causal_pay_slow(void);
void smarm__causal_pay_batch_slow(void);
/* The catch-up of an actor that is exiting, before its Downs, exit
 * signals and its joiner's wake (actor.c, after its cleanup handlers;
 * smarm__tls_obs set). */
void smarm__causal_pay_exit(struct smarm__slot *me);

/* Sampled scope: a worker thread starts and stops taking samples
 * (sched.c, at the start and end of its run, w->causal). */
void smarm__causal_thread_start(struct smarm__worker *w);
void smarm__causal_thread_end(struct smarm__worker *w);

/*
 * Timers dilated (timer.c): the stamp of a timed call armed now, 0 if
 * it is not dilated (no actor of a profiling node arms it); and, when
 * it comes due, how much later it should fire: the delay its armer owed
 * at arming plus what was injected since, less what was counted
 * already (*stamp moves on).
 */
uint64_t smarm__causal_timer_stamp(struct smarm_node *n);
uint64_t smarm__causal_timer_shift(struct smarm_node *n, uint64_t *stamp);

/* The profiler thread: start and end an experiment (site id, pct). */
void smarm__causal_begin(struct smarm__causal *cz, uint32_t site, int pct);
/* ... on a sampled site: its text (kept until the node closes). */
void smarm__causal_begin_sampled(struct smarm__causal *cz,
				 const struct smarm__causal_sel *sel, int pct);
void smarm__causal_end(struct smarm__causal *cz);

#endif /* SMARM_CORE_CAUSAL_H */
