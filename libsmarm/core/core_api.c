/* SPDX-License-Identifier: MIT */
/*
 * core_api.c - the public entry points of the core layer: errors,
 * version, configuration, node, actors (the clock and timer cancel are
 * in timer_api.c). Each call validates its
 * arguments, resolves ids and calls smarm__ code; nothing below this file
 * checks caller input again.
 *
 * Ownership: config and spawn-option objects belong to the caller; a node
 * belongs to its opener until smarm_node_close.
 * Locking: serial_mu guards the node serials. The process-wide values
 * are those serials (which keep two nodes' pids apart) and the TSC
 * calibration (a property of the machine, computed once under
 * pthread_once).
 * Invariants: INV-1 a call that returns an error changed nothing.
 * See: docs/embedding.md, abi/smarm/smarm.h.
 */
#include "core.h"

#include "actor.h"
#include "causal.h"
#include "log.h"
#include "membar.h"
#include "node.h"
#include "preempt.h"
#include "sched.h"
#include "slot.h"
#include "stack.h"
#include "subsys.h"
#include "timer.h"
#include "wait.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ errors */

const char *smarm_strerror(int status)
{
	switch (status) {
#define XX(name, value, msg)                                                   \
	case value:                                                            \
		return msg;
		SMARM_ERROR_MAP(XX)
#undef XX
	}
	return "unknown error";
}

const char *smarm_err_name(int status)
{
	switch (status) {
#define XX(name, value, msg)                                                   \
	case value:                                                            \
		return "SMARM_" #name;
		SMARM_ERROR_MAP(XX)
#undef XX
	}
	return "SMARM_E?";
}

unsigned smarm_version(void)
{
	return SMARM_VERSION_HEX;
}

const char *smarm_version_string(void)
{
	return SMARM_VERSION_STRING;
}

/* --------------------------------------------------------- TSC clock */

static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;
static uint64_t tsc_per_ns_q16; /* cycles per ns, 16.16 fixed point */

static void tsc_calibrate(void)
{
	uint64_t t0 = smarm__clock_ns();
	uint64_t c0 = smarm__cycles();
	uint64_t t1;
	uint64_t c1;
	do {
		t1 = smarm__clock_ns();
		c1 = smarm__cycles();
	} while (t1 - t0 < 2000000); /* 2 ms */
	tsc_per_ns_q16 = ((c1 - c0) << 16) / (t1 - t0);
	if (tsc_per_ns_q16 == 0)
		tsc_per_ns_q16 = 1 << 16;
}

static uint64_t ns_to_cycles(uint64_t ns)
{
	pthread_once(&tsc_once, tsc_calibrate);
	return (uint64_t)(((unsigned __int128)ns * tsc_per_ns_q16) >> 16);
}

uint64_t smarm__cycles_to_ns(uint64_t cycles)
{
	pthread_once(&tsc_once, tsc_calibrate);
	return (uint64_t)(((unsigned __int128)cycles << 16) / tsc_per_ns_q16);
}

bool smarm__node_astat_on(const struct smarm_node *n)
{
	return n->astat_on;
}

/* ------------------------------------------------------------ config */

/*
 * Everything the library knows of an option comes from SMARM_OPT_MAP
 * (smarm.h): its id, range, default and scope. What an option does is
 * its reader's (smarm_node_open, a subsystem's ss_open) and, for a spawn
 * option, its spawn_set_<name> below: adding an option is one map entry
 * plus that code.
 */
#define MIB (1024 * 1024)

#define XX(name, value, lo, hi, def, scope)                                    \
	_Static_assert((value) >= 1 && (value) < SMARM__OPT_SLOTS,             \
		       "SMARM_OPT_" #name ": id outside the config storage");  \
	_Static_assert((lo) <= (hi), "SMARM_OPT_" #name ": empty range");      \
	_Static_assert((def) == -1 || ((def) >= (lo) && (def) <= (hi)),        \
		       "SMARM_OPT_" #name ": default outside its range");
SMARM_OPT_MAP(XX)
#undef XX
/* The ranges the map publishes are the runtime's own limits. */
_Static_assert(SMARM__MAX_WORKERS == 64, "SMARM_OPT_WORKERS range");
_Static_assert(SMARM__PID_IDX_MAX == 16777216, "SMARM_OPT_MAX_ACTORS range");

enum { SCOPE_NODE = 0, SCOPE_SPAWN = 1 };

static const struct opt_info {
	int64_t oi_lo;	  /* range, inclusive */
	int64_t oi_hi;	  /* range, inclusive */
	int64_t oi_def;	  /* a fresh config's value; -1: derived */
	uint8_t oi_known; /* 1: an option of this library */
	uint8_t oi_scope; /* SCOPE_* */
	const char *oi_name;
} opt_info[SMARM__OPT_SLOTS] = {
#define XX(name, value, lo, hi, def, scope)                                    \
	[value] = { (lo), (hi), (def), 1, SCOPE_##scope, "SMARM_OPT_" #name },
	SMARM_OPT_MAP(XX)
#undef XX
};

static const struct opt_info *opt_find(int opt)
{
	if (opt < 1 || opt >= SMARM__OPT_SLOTS || !opt_info[opt].oi_known)
		return NULL;
	return &opt_info[opt];
}

static bool opt_valid(const struct opt_info *oi, int64_t v)
{
	return oi != NULL && v >= oi->oi_lo && v <= oi->oi_hi;
}

const char *smarm_opt_name(int opt)
{
	const struct opt_info *oi = opt_find(opt);
	return oi ? oi->oi_name : "SMARM_OPT_?";
}

static void config_defaults(struct smarm_config *c)
{
	int cpus = smarm__online_cpus();
	memset(c, 0, sizeof *c);
	for (int i = 0; i < SMARM__OPT_SLOTS; i++)
		c->opt[i] = opt_info[i].oi_def;
	/* Derived defaults (-1 in the map). STACK_POOL_CAP stays -1: it
	 * follows WORKERS until set (pool_cap_of). */
	c->opt[SMARM_OPT_WORKERS] =
		cpus > SMARM__MAX_WORKERS ? SMARM__MAX_WORKERS : cpus;
	c->log_fn = smarm_log_stderr;
	c->causal_pct = -1;
	c->causal_scope = -1;
}

static int64_t pool_cap_of(const struct smarm_config *c)
{
	int64_t cap = c->opt[SMARM_OPT_STACK_POOL_CAP];
	if (cap < 0) {
		cap = 4 * c->opt[SMARM_OPT_WORKERS];
		if (cap < 16)
			cap = 16;
	}
	return cap;
}

int smarm_config_alloc(smarm_config_t **out)
{
	struct smarm_config *c;
	if (out == NULL)
		return SMARM_EINVAL;
	c = malloc(sizeof *c);
	if (c == NULL)
		return SMARM_ENOMEM;
	config_defaults(c);
	*out = c;
	return 0;
}

void smarm_config_free(smarm_config_t *cfg)
{
	free(cfg);
}

int smarm_config_set_obs_socket(smarm_config_t *cfg, const char *path)
{
	size_t len = path != NULL ? strnlen(path, SMARM__OBS_PATH_MAX) : 0;
	if (cfg == NULL || len >= SMARM__OBS_PATH_MAX)
		return SMARM_EINVAL;
	memcpy(cfg->obs_socket, path != NULL ? path : "", len);
	cfg->obs_socket[len] = '\0';
	return 0;
}

int smarm_config_set_trace(smarm_config_t *cfg, const char *path, int format)
{
	size_t len = path != NULL ? strnlen(path, SMARM__TRACE_PATH_MAX) : 0;
	if (cfg == NULL || len >= SMARM__TRACE_PATH_MAX ||
	    format < SMARM_TRACE_AUTO || format > SMARM_TRACE_PERFETTO)
		return SMARM_EINVAL;
	memcpy(cfg->trace_path, path != NULL ? path : "", len);
	cfg->trace_path[len] = '\0';
	cfg->trace_format = format;
	return 0;
}

int smarm_config_set_causal(smarm_config_t *cfg, const char *path,
			    uint64_t experiment_ns)
{
	size_t len = path != NULL ? strnlen(path, SMARM__TRACE_PATH_MAX) : 0;
	if (cfg == NULL || len >= SMARM__TRACE_PATH_MAX ||
	    (experiment_ns != 0 && (experiment_ns < SMARM__CAUSAL_EXP_MIN_NS ||
				    experiment_ns > SMARM__CAUSAL_EXP_MAX_NS)))
		return SMARM_EINVAL;
	memcpy(cfg->causal_path, path != NULL ? path : "", len);
	cfg->causal_path[len] = '\0';
	cfg->causal_exp_ns = experiment_ns;
	return 0;
}

int smarm_config_set_causal_fixed(smarm_config_t *cfg, const char *site,
				  int speedup_pct)
{
	size_t len = site != NULL ? strnlen(site, SMARM__CAUSAL_NAME_MAX) : 0;
	if (cfg == NULL || len >= SMARM__CAUSAL_NAME_MAX || speedup_pct < -1 ||
	    speedup_pct > 100 || (speedup_pct >= 0 && speedup_pct % 5 != 0))
		return SMARM_EINVAL;
	memcpy(cfg->causal_site, site != NULL ? site : "", len);
	cfg->causal_site[len] = '\0';
	cfg->causal_pct = speedup_pct;
	return 0;
}

int smarm_config_set_causal_scope(smarm_config_t *cfg, int scope)
{
	if (cfg == NULL || (scope != SMARM_CAUSAL_SCOPE_NAMED &&
			    scope != SMARM_CAUSAL_SCOPE_SAMPLED &&
			    scope != SMARM_CAUSAL_SCOPE_LINES))
		return SMARM_EINVAL;
	cfg->causal_scope = scope;
	return 0;
}

int smarm_config_set_int(smarm_config_t *cfg, int opt, int64_t value)
{
	if (cfg == NULL || !opt_valid(opt_find(opt), value))
		return SMARM_EINVAL;
	cfg->opt[opt] = value;
	return 0;
}

int smarm_config_get_int(const smarm_config_t *cfg, int opt, int64_t *out)
{
	if (cfg == NULL || out == NULL || opt_find(opt) == NULL)
		return SMARM_EINVAL;
	*out = opt == SMARM_OPT_STACK_POOL_CAP ? pool_cap_of(cfg)
					       : cfg->opt[opt];
	return 0;
}

static size_t page_up(int64_t v)
{
	size_t p = smarm__page_size();
	return ((size_t)v + p - 1) & ~(p - 1);
}

/* ------------------------------------------------------------- node */

/*
 * Node serials, the one other process-wide value: a pid carries its
 * node's serial (slot.h), so no two open nodes may share one, and a
 * closed node's serial is handed out again only after every other free
 * one has been (round robin), so its pids stay stale as long as it can
 * be. 0 is never used. Guarded by serial_mu.
 */
static pthread_mutex_t serial_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t serial_used[4]; /* bit s: serial s belongs to an open node */
static unsigned serial_last;	/* the serial handed out last */

static int serial_take(uint8_t *out)
{
	int rc = SMARM_EATCAPACITY;
	pthread_mutex_lock(&serial_mu);
	for (unsigned k = 1; k <= 255; k++) {
		unsigned s = (serial_last + k - 1) % 255 + 1; /* 1..255 */
		if (!(serial_used[s / 64] & (UINT64_C(1) << (s % 64)))) {
			serial_used[s / 64] |= UINT64_C(1) << (s % 64);
			serial_last = s;
			*out = (uint8_t)s;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&serial_mu);
	return rc;
}

static void serial_give(uint8_t s)
{
	pthread_mutex_lock(&serial_mu);
	serial_used[s / 64] &= ~(UINT64_C(1) << (s % 64));
	pthread_mutex_unlock(&serial_mu);
}

int smarm_node_open(smarm_node_t **out, const smarm_config_t *cfg)
{
	struct smarm_config defaults;
	struct smarm_node *n;
	int rc;

	if (out == NULL)
		return SMARM_EINVAL;
	if (cfg == NULL) {
		config_defaults(&defaults);
		cfg = &defaults;
	}
	smarm__membar_init(); /* before any spawn of this node (membar.h) */
	/* Aligned: per-worker statistics take one cache line each. */
	n = aligned_alloc(_Alignof(struct smarm_node), sizeof *n);
	if (n == NULL)
		return SMARM_ENOMEM;
	memset(n, 0, sizeof *n);
	rc = serial_take(&n->serial);
	if (rc != 0) {
		free(n);
		return rc;
	}
	n->workers_n = (int)cfg->opt[SMARM_OPT_WORKERS];
	n->max_actors = (uint32_t)cfg->opt[SMARM_OPT_MAX_ACTORS];
	n->stk_reserve = page_up(cfg->opt[SMARM_OPT_STACK_RESERVE]);
	n->stk_guard = page_up(cfg->opt[SMARM_OPT_STACK_GUARD]);
	/* A spawn's request (slot.h SMARM__STK_FLAGS), resolved at its
	 * stack's first acquire. */
	n->stk_mode = (int)cfg->opt[SMARM_OPT_STACK_MODE] |
		      (cfg->opt[SMARM_OPT_STACK_RELEASE] != 0
			       ? SMARM__STK_REL | SMARM__STK_REL_SET
			       : 0);
	n->pk_ns = (uint64_t)cfg->opt[SMARM_OPT_STACK_RELEASE_NS];
	n->pool_cap = (uint32_t)pool_cap_of(cfg);
	n->slice_cycles =
		ns_to_cycles((uint64_t)cfg->opt[SMARM_OPT_TIMESLICE_NS]);
	n->slice_ns = (uint64_t)cfg->opt[SMARM_OPT_TIMESLICE_NS];
	n->preempt_async = cfg->opt[SMARM_OPT_PREEMPT_ASYNC] != 0;
	n->preempt_move = cfg->opt[SMARM_OPT_PREEMPT_MOVE] != 0;
	n->astat_on = cfg->opt[SMARM_OPT_ACTOR_STATS] != 0;
	n->link_default = cfg->opt[SMARM_OPT_LINK] != 0;
	n->contain_faults = (uint8_t)cfg->opt[SMARM_OPT_CONTAIN_FAULTS];
	if (n->contain_faults)
		smarm__preempt_setup(); /* the executable's text is known */
	n->async_ns = (uint64_t)cfg->opt[SMARM_OPT_ASYNC_SLICE_NS];
	n->wake_slot = cfg->opt[SMARM_OPT_WAKE_SLOT] != 0;
	n->spin_cycles =
		ns_to_cycles((uint64_t)cfg->opt[SMARM_OPT_IDLE_SPIN_NS]);
	n->spin_poll_cycles = ns_to_cycles(SMARM__SPIN_POLL_NS);
	n->spin_grace_cycles = ns_to_cycles(SMARM__SPIN_GRACE_NS);
	n->max_spinners = n->workers_n / 2 > 0 ? n->workers_n / 2 : 1;
	atomic_init(&n->next_deadline, UINT64_MAX);
	atomic_init(&n->tk_holder, -1);
	atomic_init(&n->np_owner, -1);
	atomic_init(&n->tk_armed, UINT64_MAX);
	smarm__stack_node_init(n);
	if (n->pool_cap > 0) {
		n->pool = malloc(n->pool_cap * sizeof *n->pool);
		if (n->pool == NULL) {
			serial_give(n->serial);
			free(n);
			return SMARM_ENOMEM;
		}
	}
	rc = smarm__causal_init(n); /* before the obs layer enables it */
	if (rc == 0)
		rc = smarm__log_open(n, cfg);
	if (rc == 0) {
		rc = smarm__subsys_open(n, cfg, smarm__builtin_subsys);
		if (rc != 0)
			smarm__log_close(n);
	}
	if (rc != 0) {
		smarm__causal_fini(n);
		serial_give(n->serial);
		free(n->pool);
		free(n);
		return rc;
	}
	smarm__stackdiag_install(); /* before any worker thread exists */
	*out = n;
	return 0;
}

int smarm_node_close(smarm_node_t *node)
{
	if (node == NULL)
		return 0;
	if (atomic_load(&node->running))
		return SMARM_ESTATE;
	smarm__subsys_close(node);
	smarm__log_close(node); /* the layers' last reports first */
	smarm__timers_fini(node);
	smarm__stack_pool_fini(node);
	smarm__pstk_node_fini(node); /* its entries name slots: first */
	smarm__slots_fini(node);
	smarm__causal_fini(node);
	serial_give(node->serial);
	free(node);
	return 0;
}

int smarm_node_run(smarm_node_t *node, smarm_actor_cb root, void *arg, int *how,
		   intptr_t *reason)
{
	int rc;
	if (node == NULL || root == NULL)
		return SMARM_EINVAL;
	rc = smarm__run(node, root, arg);
	if (rc == 0 || rc == SMARM_ESYSTEM) {
		if (how)
			*how = node->root_how;
		if (reason)
			*reason = node->root_reason;
	}
	return rc;
}

smarm_node_t *smarm_node_current(void)
{
	struct smarm__worker *w = smarm__worker();
	return (w && w->cur) ? w->node : NULL;
}

/*
 * Statistics. SMARM_STAT_MAP (smarm.h) names each one and the layer that
 * keeps it: a CORE statistic is read by its stat_<name> below (a CORE
 * entry without one does not compile); any other id is asked of the
 * subsystems (ss_get_stat), which answer for their layer's entries.
 * Adding a statistic is one map entry plus its reader.
 */
typedef int64_t (*stat_fn)(struct smarm_node *n);

/*
 * Sum a per-worker counter over the workers of the last (or current) run.
 * The owners write with relaxed stores, so this is exact after a run and
 * approximate during one.
 */
static int64_t wstats_sum(struct smarm_node *n, size_t offset)
{
	uint64_t sum = 0;
	for (int i = 0; i < n->workers_n; i++)
		sum += __atomic_load_n(
			(uint64_t *)((char *)&n->wstats[i] + offset),
			__ATOMIC_RELAXED);
	return (int64_t)sum;
}

/* The sum over workers of the uint64_t counter at offset in the worker. */
static int64_t worker_sum(struct smarm_node *n, size_t offset)
{
	uint64_t sum = 0;
	for (int i = 0; i < n->workers_n; i++)
		sum += __atomic_load_n(
			(uint64_t *)((char *)&n->workers[i] + offset),
			__ATOMIC_RELAXED);
	return (int64_t)sum;
}

static int64_t stat_LIVE_ACTORS(struct smarm_node *n)
{
	return smarm__live_read(n);
}

static int64_t stat_SLOTS(struct smarm_node *n)
{
	return atomic_load(&n->nslots);
}

static int64_t stat_FREE_SLOTS(struct smarm_node *n)
{
	return smarm__slots_free_count(n);
}

static int64_t stat_RUN_QUEUE(struct smarm_node *n)
{
	return (int64_t)smarm__ring_len(&n->rq);
}

static int64_t stat_STACK_POOL(struct smarm_node *n)
{
	int64_t v;
	smarm__lock(&n->pool_lock, SMARM__RANK_STACK);
	v = n->pool_len + (int64_t)n->stk_gd.cv_nfree;
	smarm__unlock(&n->pool_lock, SMARM__RANK_STACK);
	for (int i = 0; i < n->workers_n; i++)
		v += __atomic_load_n(&n->workers[i].stk_ncache,
				     __ATOMIC_RELAXED);
	return v;
}

static int64_t stat_WORKERS(struct smarm_node *n)
{
	return n->workers_n;
}

static int64_t stat_SPAWNED(struct smarm_node *n)
{
	int64_t v = (int64_t)atomic_load(&n->spawned);
	for (int i = 0; i < n->workers_n; i++)
		v += (int64_t)__atomic_load_n(&n->wcount[i].spawned,
					      __ATOMIC_RELAXED);
	return v;
}

static int64_t stat_TIMERS(struct smarm_node *n)
{
	int64_t v;
	smarm__lock(&n->tm_lock, SMARM__RANK_TIMERS);
	v = n->tm_len;
	smarm__unlock(&n->tm_lock, SMARM__RANK_TIMERS);
	return v;
}

static int64_t stat_WAKE_SLOT_HITS(struct smarm_node *n)
{
	return wstats_sum(n, offsetof(struct smarm__wstats, slot_hits));
}

static int64_t stat_WAKE_SLOT_DISPLACEMENTS(struct smarm_node *n)
{
	return wstats_sum(n, offsetof(struct smarm__wstats, slot_displaced));
}

static int64_t stat_IDLE_SPIN_HITS(struct smarm_node *n)
{
	return wstats_sum(n, offsetof(struct smarm__wstats, spin_hits));
}

static int64_t stat_IDLE_PARKS(struct smarm_node *n)
{
	return wstats_sum(n, offsetof(struct smarm__wstats, parks));
}

static int64_t stat_PREEMPT_SIGNALS(struct smarm_node *n)
{
	return (int64_t)atomic_load(&n->pre_signals);
}

static int64_t stat_PREEMPT_ASYNC(struct smarm_node *n)
{
	return worker_sum(n, offsetof(struct smarm__worker, n_async));
}

static int64_t stat_PREEMPT_DEFERRED(struct smarm_node *n)
{
	return worker_sum(n, offsetof(struct smarm__worker, n_deferred));
}

static int64_t stat_PREEMPT_RETURNS(struct smarm_node *n)
{
	return worker_sum(n, offsetof(struct smarm__worker, n_ret_taken));
}

static int64_t stat_PREEMPT_MOVED(struct smarm_node *n)
{
	return worker_sum(n, offsetof(struct smarm__worker, n_moved));
}

static int64_t stat_EXPEDITED(struct smarm_node *n)
{
	return wstats_sum(n, offsetof(struct smarm__wstats, expedited));
}

static int64_t stat_LOG_DROPPED(struct smarm_node *n)
{
	return smarm__log_dropped(n);
}

static int64_t stat_FAULTS_CONTAINED(struct smarm_node *n)
{
	return atomic_load_explicit(&n->faults_contained, memory_order_relaxed);
}

static int64_t stat_HIBERNATIONS(struct smarm_node *n)
{
	return atomic_load_explicit(&n->hibernations, memory_order_relaxed);
}

static int64_t stat_STACK_RELEASES(struct smarm_node *n)
{
	return atomic_load_explicit(&n->pk_releases, memory_order_relaxed);
}

static int64_t stat_STACKS_RELEASED(struct smarm_node *n)
{
	return atomic_load_explicit(&n->pk_out, memory_order_relaxed);
}

static int64_t stat_DIST_INFO_DROPPED(struct smarm_node *n)
{
	return atomic_load_explicit(&n->dist_info_dropped,
				    memory_order_relaxed);
}

void smarm__stat_dist_info_dropped(struct smarm_node *n)
{
	atomic_fetch_add_explicit(&n->dist_info_dropped, 1,
				  memory_order_relaxed);
}

static int64_t stat_STACKS_GUARDED(struct smarm_node *n)
{
	return atomic_load(&n->stk_guarded);
}

static int64_t stat_STACKS_DENSE(struct smarm_node *n)
{
	return atomic_load(&n->stk_dense);
}

static int64_t stat_STACK_SHRINKS(struct smarm_node *n)
{
	return atomic_load(&n->stk_shrinks);
}

static int64_t stat_STACK_GUARD_BUDGET(struct smarm_node *n)
{
	return n->stk_budget;
}

static int64_t stat_GLOBAL_LOCKS(struct smarm_node *n)
{
	return (int64_t)(__atomic_load_n(&n->free_lock_n, __ATOMIC_RELAXED) +
			 __atomic_load_n(&n->rq_lock_n, __ATOMIC_RELAXED) +
			 __atomic_load_n(&n->pool_lock_n, __ATOMIC_RELAXED) +
			 __atomic_load_n(&n->tm_lock_n, __ATOMIC_RELAXED));
}

static int64_t stat_ENDED_UNJOINED(struct smarm_node *n)
{
	return smarm__gauge_read(n, SMARM__GAUGE_UNJOINED);
}

#define STAT_LIMIT 64 /* ids are below it */
#define STAT_FN_CORE(name) stat_##name
#define STAT_FN_IO(name) NULL
#define STAT_FN_OTP(name) NULL
#define STAT_FN_REG(name) NULL
#define STAT_FN_BEHAVIOUR(name) NULL
#define STAT_FN_OBS(name) NULL

static const struct {
	stat_fn si_read; /* CORE: its reader; NULL: a subsystem's */
	const char *si_name;
} stat_info[STAT_LIMIT] = {
#define XX(name, value, layer)                                                 \
	[value] = { STAT_FN_##layer(name), "SMARM_STAT_" #name },
	SMARM_STAT_MAP(XX)
#undef XX
};

#define XX(name, value, layer)                                                 \
	_Static_assert((value) >= 1 && (value) < STAT_LIMIT,                   \
		       "SMARM_STAT_" #name ": id outside the table");
SMARM_STAT_MAP(XX)
#undef XX

const char *smarm_stat_name(int stat)
{
	if (stat < 1 || stat >= STAT_LIMIT || stat_info[stat].si_name == NULL)
		return "SMARM_STAT_?";
	return stat_info[stat].si_name;
}

int smarm_node_get_int(const smarm_node_t *node, int stat, int64_t *out)
{
	struct smarm_node *n = (struct smarm_node *)node;
	if (n == NULL || out == NULL)
		return SMARM_EINVAL;
	if (stat >= 1 && stat < STAT_LIMIT && stat_info[stat].si_read != NULL) {
		*out = stat_info[stat].si_read(n);
		return 0;
	}
	/* Another layer's (or none's: the subsystems answer EINVAL). */
	return smarm__subsys_get_stat(n, stat, out);
}

/* A stop from outside any actor (a foreign thread, the host). */
static const struct smarm__stop_req stop_kill = { 0, SMARM__STOP_KILL, 0,
						  SMARM_EXIT_STOPPED };

int smarm_node_stop_actor(smarm_node_t *node, smarm_pid_t pid)
{
	if (node == NULL)
		return SMARM_EINVAL;
	if (!atomic_load(&node->running))
		return SMARM_ENOPROC;
	return smarm__request_stop(node, pid.id, &stop_kill);
}

int smarm_node_stop(smarm_node_t *node)
{
	if (node == NULL)
		return SMARM_EINVAL;
	if (!atomic_load(&node->running))
		return SMARM_ESTATE;
	smarm__stop_all(node, SMARM__STOPPING_KILL_ALL);
	return 0;
}

/* ----------------------------------------------------------- actors */

bool smarm_pid_eq(smarm_pid_t a, smarm_pid_t b)
{
	return a.id == b.id;
}

int smarm_spawn_opts_alloc(smarm_spawn_opts_t **out)
{
	if (out == NULL)
		return SMARM_EINVAL;
	*out = calloc(1, sizeof **out);
	return *out ? 0 : SMARM_ENOMEM;
}

void smarm_spawn_opts_free(smarm_spawn_opts_t *opts)
{
	free(opts);
}

/*
 * Spawn options: each SCOPE SPAWN entry of SMARM_OPT_MAP has its
 * spawn_set_<name>, storing an already validated value (an entry without
 * one does not compile).
 */
static void spawn_set_STACK_RESERVE(struct smarm_spawn_opts *o, int64_t v)
{
	o->reserve = page_up(v);
}

static void spawn_set_STACK_GUARD(struct smarm_spawn_opts *o, int64_t v)
{
	o->guard = page_up(v);
}

/* The mode and SMARM_OPT_STACK_RELEASE share the slot's request
 * (slot.h SMARM__STK_FLAGS): each option sets its part, the node's
 * default fills the other. */
static void spawn_mode_begin(struct smarm_spawn_opts *o)
{
	if (!o->mode_set)
		o->mode = SMARM__STK_MODE_NODE;
	o->mode_set = 1;
}

static void spawn_set_STACK_MODE(struct smarm_spawn_opts *o, int64_t v)
{
	spawn_mode_begin(o);
	o->mode = (uint8_t)((o->mode &
			     ~(SMARM__STK_MODE_MASK | SMARM__STK_MODE_NODE)) |
			    (uint8_t)v);
}

static void spawn_set_STACK_RELEASE(struct smarm_spawn_opts *o, int64_t v)
{
	spawn_mode_begin(o);
	o->mode = (uint8_t)((o->mode & ~SMARM__STK_REL) | SMARM__STK_REL_SET |
			    (v != 0 ? SMARM__STK_REL : 0));
}

static void spawn_set_LINK(struct smarm_spawn_opts *o, int64_t v)
{
	o->link = (uint8_t)v;
	o->link_set = 1;
}

static void spawn_set_CONTAIN_FAULTS(struct smarm_spawn_opts *o, int64_t v)
{
	o->contain = (uint8_t)v;
	o->contain_set = 1;
	if (v != 0)
		smarm__preempt_setup(); /* the executable's text is known */
}

int smarm_spawn_opts_set_int(smarm_spawn_opts_t *opts, int opt, int64_t value)
{
	const struct opt_info *oi = opt_find(opt);
	if (opts == NULL || !opt_valid(oi, value) ||
	    oi->oi_scope != SCOPE_SPAWN)
		return SMARM_EINVAL;
	switch (opt) {
#define SPAWN_CASE_NODE(name)
#define SPAWN_CASE_SPAWN(name)                                                 \
	case SMARM_OPT_##name:                                                 \
		spawn_set_##name(opts, value);                                 \
		return 0;
#define XX(name, id, lo, hi, def, scope) SPAWN_CASE_##scope(name)
		SMARM_OPT_MAP(XX)
#undef XX
#undef SPAWN_CASE_SPAWN
#undef SPAWN_CASE_NODE
	}
	return SMARM_EINTERNAL; /* unreachable: every SPAWN id has a case */
}

int smarm_actor_spawn(smarm_pid_t *out, smarm_actor_cb fn, void *arg,
		      const smarm_spawn_opts_t *opts)
{
	struct smarm__slot *me = smarm__current();
	uint64_t pid = 0;
	int rc;
	if (me == NULL)
		return SMARM_ENOTACTOR;
	if (fn == NULL)
		return SMARM_EINVAL;
	smarm__observe_stop(me);
	rc = smarm__spawn(smarm__worker()->node, me, out ? &pid : NULL, fn, arg,
			  opts, out != NULL);
	if (rc == 0 && out != NULL)
		out->id = pid;
	/* A spawn never waits: a loop of spawns is preempted here at its
	 * slice's end, and lets its children run (as a loop of sends). */
	smarm__slice_point();
	return rc;
}

int smarm_actor_join(smarm_pid_t pid, int *how, intptr_t *reason)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	return smarm__join(smarm__worker()->node, me, pid.id, how, reason);
}

int smarm_actor_detach(smarm_pid_t pid)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	return smarm__detach(smarm__worker()->node, pid.id);
}

smarm_pid_t smarm_actor_self(void)
{
	struct smarm__slot *me = smarm__current();
	smarm_pid_t p = SMARM_PID_NONE;
	if (me != NULL)
		p.id = smarm__slot_pid(me);
	return p;
}

bool smarm_actor_is_alive(smarm_pid_t pid)
{
	struct smarm__worker *w = smarm__worker();
	struct smarm__slot *s;
	if (w == NULL || w->cur == NULL)
		return false;
	s = smarm__slot_live(w->node, pid.id);
	/* Ended: its Down may have reached the caller already. */
	return s != NULL && __atomic_load_n(&s->exiting, __ATOMIC_RELAXED) !=
				    SMARM__EXITING_ENDED;
}

int smarm_actor_yield(void)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	smarm__yield(me);
	return 0;
}

int smarm_actor_sleep(uint64_t ns)
{
	struct smarm__slot *me = smarm__current();
	struct smarm__wait w;
	int rc;
	if (me == NULL)
		return SMARM_ENOTACTOR;
	/* A wait with no registration: only its timer (or a stop) ends it. */
	smarm__wait_init(&w, me, smarm__deadline_after(ns), NULL, NULL);
	smarm__wait_open(&w);
	smarm__wait_note(SMARM__WON_SLEEP, 0);
	rc = smarm__wait_park(&w);
	smarm__wait_note(SMARM__WON_NONE, 0);
	if (rc != 0)
		smarm__wait_retire(&w);
	return rc;
}

int smarm_check(void)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return 0;
	smarm__observe_stop(me);
	smarm__causal_pay_batch(); /* a pay point (causal.h) */
	smarm__check_slice(me);
	return 0;
}

void smarm__slice_end(void)
{
	struct smarm__slot *me = smarm__current();
	if (me != NULL)
		me->preempt_pending = 1;
}

void smarm__slice_point(void)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL || __builtin_expect(!me->preempt_pending, 1))
		return;
	if (me->nopreempt != 0 || me->rt_nopreempt != 0 || me->exiting)
		return; /* its own safe point comes later */
	me->preempt_pending = 0;
	smarm__observe_stop(me);
	smarm__yield_slice(me);
}

int smarm_preempt_disable(void)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	if (me->nopreempt == UINT32_MAX)
		return SMARM_EINVAL;
	me->nopreempt++;
	return 0;
}

int smarm_preempt_enable(void)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	if (me->nopreempt == 0)
		return SMARM_ESTATE;
	if (--me->nopreempt == 0 && me->preempt_pending &&
	    me->rt_nopreempt == 0) {
		/* A slice ended inside the region: this is its safe point. */
		me->preempt_pending = 0;
		smarm__observe_stop(me);
		smarm__yield_slice(me);
	}
	return 0;
}

int smarm_preempt_allow_object(const void *addr)
{
	if (addr == NULL)
		return SMARM_EINVAL;
	return smarm__preempt_allow_object(addr);
}

int smarm_preempt_disallow_object(const void *addr)
{
	if (addr == NULL)
		return SMARM_EINVAL;
	return smarm__preempt_disallow_object(addr);
}

int smarm_actor_get_stack(smarm_pid_t pid, int key, int64_t *out)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	if (out == NULL)
		return SMARM_EINVAL;
	return smarm__stack_info(smarm__worker()->node, pid.id, key, out);
}

int smarm_actor_exit(void)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	smarm__terminate(me, SMARM_EXIT_NORMAL, 0);
}

int smarm_actor_crash(intptr_t reason)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	smarm__terminate(me, SMARM_EXIT_CRASHED, reason);
}

int smarm_actor_stop(smarm_pid_t pid)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	struct smarm__stop_req req = { smarm__slot_pid(me), SMARM__STOP_KILL, 0,
				       SMARM_EXIT_STOPPED };
	return smarm__request_stop(smarm__worker()->node, pid.id, &req);
}

int smarm_cleanup_push(smarm_cleanup_cb fn, void *arg)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	if (fn == NULL)
		return SMARM_EINVAL;
	return smarm__cleanup_push(me, fn, arg);
}

int smarm_cleanup_pop(bool execute)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return SMARM_ENOTACTOR;
	return smarm__cleanup_pop(me, execute);
}
