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

/* ------------------------------------------------------------ config */

/* Highest option id; ids without a range entry (hi == 0) are unknown. */
#define OPT_MAX 31
#define MIB (1024 * 1024)

static const struct {
	int64_t lo, hi;
} opt_range[OPT_MAX + 1] = {
	[SMARM_OPT_WORKERS] = { 1, SMARM__MAX_WORKERS },
	[SMARM_OPT_MAX_ACTORS] = { 1, SMARM__PID_IDX_MAX }, /* pid index */
	[SMARM_OPT_STACK_RESERVE] = { 4096, 1024 * MIB },
	[SMARM_OPT_STACK_GUARD] = { 4096, 1024 * MIB },
	[SMARM_OPT_STACK_POOL_CAP] = { 0, MIB },
	[SMARM_OPT_TIMESLICE_NS] = { 10000, INT64_C(10000000000) },
	[SMARM_OPT_PREEMPT_ASYNC] = { 0, 1 },
	[SMARM_OPT_ASYNC_SLICE_NS] = { 100000, INT64_C(10000000000) },
	[SMARM_OPT_IO_POOL_THREADS] = { 1, 64 },
	[SMARM_OPT_STACK_MODE] = { SMARM_STACK_AUTO, SMARM_STACK_DENSE },
	[SMARM_OPT_WAKE_SLOT] = { 0, 1 },
	[SMARM_OPT_IDLE_SPIN_NS] = { 0, 10000000 },
};

static bool opt_known(int opt)
{
	return opt >= 1 && opt <= OPT_MAX && opt_range[opt].hi != 0;
}

static bool opt_valid(int opt, int64_t v)
{
	return opt_known(opt) && v >= opt_range[opt].lo &&
	       v <= opt_range[opt].hi;
}

static void config_defaults(struct smarm_config *c)
{
	int cpus = smarm__online_cpus();
	memset(c, 0, sizeof *c);
	c->opt[SMARM_OPT_WORKERS] =
		cpus > SMARM__MAX_WORKERS ? SMARM__MAX_WORKERS : cpus;
	c->opt[SMARM_OPT_MAX_ACTORS] = 1048576;
	c->opt[SMARM_OPT_STACK_RESERVE] = 65536;
	c->opt[SMARM_OPT_STACK_GUARD] = MIB;
	c->opt[SMARM_OPT_STACK_POOL_CAP] = -1; /* derived from workers */
	c->opt[SMARM_OPT_TIMESLICE_NS] = 2000000;
	c->opt[SMARM_OPT_PREEMPT_ASYNC] = 1;
	c->opt[SMARM_OPT_ASYNC_SLICE_NS] = 10000000;
	c->opt[SMARM_OPT_IO_POOL_THREADS] = 4;
	c->opt[SMARM_OPT_WAKE_SLOT] = 1;
	c->opt[SMARM_OPT_IDLE_SPIN_NS] = 20000;
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

int smarm_config_set_int(smarm_config_t *cfg, int opt, int64_t value)
{
	if (cfg == NULL || !opt_valid(opt, value))
		return SMARM_EINVAL;
	cfg->opt[opt] = value;
	return 0;
}

int smarm_config_get_int(const smarm_config_t *cfg, int opt, int64_t *out)
{
	if (cfg == NULL || out == NULL || !opt_known(opt))
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
	n->stk_mode = (int)cfg->opt[SMARM_OPT_STACK_MODE];
	n->pool_cap = (uint32_t)pool_cap_of(cfg);
	n->slice_cycles =
		ns_to_cycles((uint64_t)cfg->opt[SMARM_OPT_TIMESLICE_NS]);
	n->slice_ns = (uint64_t)cfg->opt[SMARM_OPT_TIMESLICE_NS];
	n->preempt_async = cfg->opt[SMARM_OPT_PREEMPT_ASYNC] != 0;
	n->async_ns = (uint64_t)cfg->opt[SMARM_OPT_ASYNC_SLICE_NS];
	n->wake_slot = cfg->opt[SMARM_OPT_WAKE_SLOT] != 0;
	n->spin_cycles =
		ns_to_cycles((uint64_t)cfg->opt[SMARM_OPT_IDLE_SPIN_NS]);
	n->spin_poll_cycles = ns_to_cycles(SMARM__SPIN_POLL_NS);
	n->spin_grace_cycles = ns_to_cycles(SMARM__SPIN_GRACE_NS);
	n->max_spinners = n->workers_n / 2 > 0 ? n->workers_n / 2 : 1;
	n->free_head = SMARM__NO_INDEX;
	atomic_init(&n->next_deadline, UINT64_MAX);
	atomic_init(&n->tk_holder, -1);
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
	rc = smarm__subsys_open(n, cfg, smarm__builtin_subsys);
	if (rc != 0) {
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
	smarm__timers_fini(node);
	smarm__stack_pool_fini(node);
	smarm__slots_fini(node);
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
 * Sum a per-worker counter over the workers of the last (or current) run.
 * The owners write with relaxed stores, so this is exact after a run and
 * approximate during one.
 */
static int64_t worker_stat_sum(struct smarm_node *n, int stat)
{
	uint64_t sum = 0;
	for (int i = 0; i < n->workers_n; i++) {
		struct smarm__wstats *ws = &n->wstats[i];
		uint64_t *c = stat == SMARM_STAT_WAKE_SLOT_HITS ? &ws->slot_hits
			      : stat == SMARM_STAT_WAKE_SLOT_DISPLACEMENTS
				      ? &ws->slot_displaced
			      : stat == SMARM_STAT_IDLE_SPIN_HITS
				      ? &ws->spin_hits
				      : &ws->parks;
		sum += __atomic_load_n(c, __ATOMIC_RELAXED);
	}
	return (int64_t)sum;
}

int smarm_node_get_int(const smarm_node_t *node, int stat, int64_t *out)
{
	struct smarm_node *n = (struct smarm_node *)node;
	if (n == NULL || out == NULL)
		return SMARM_EINVAL;
	switch (stat) {
	case SMARM_STAT_LIVE_ACTORS:
		*out = atomic_load(&n->live);
		return 0;
	case SMARM_STAT_SLOTS:
		*out = atomic_load(&n->nslots);
		return 0;
	case SMARM_STAT_FREE_SLOTS:
		smarm__lock(&n->free_lock, SMARM__RANK_SLOT);
		*out = n->nfree;
		smarm__unlock(&n->free_lock, SMARM__RANK_SLOT);
		return 0;
	case SMARM_STAT_RUN_QUEUE:
		*out = smarm__ring_len(&n->rq);
		return 0;
	case SMARM_STAT_STACK_POOL:
		smarm__lock(&n->pool_lock, SMARM__RANK_STACK);
		*out = n->pool_len;
		smarm__unlock(&n->pool_lock, SMARM__RANK_STACK);
		for (int i = 0; i < n->workers_n; i++)
			*out += __atomic_load_n(&n->workers[i].stk_ncache,
						__ATOMIC_RELAXED);
		return 0;
	case SMARM_STAT_WORKERS:
		*out = n->workers_n;
		return 0;
	case SMARM_STAT_TIMERS:
		smarm__lock(&n->tm_lock, SMARM__RANK_TIMERS);
		*out = n->tm_len;
		smarm__unlock(&n->tm_lock, SMARM__RANK_TIMERS);
		return 0;
	case SMARM_STAT_SPAWNED:
		*out = (int64_t)atomic_load(&n->spawned);
		for (int i = 0; i < SMARM__MAX_WORKERS; i++)
			*out += (int64_t)__atomic_load_n(&n->spawned_w[i],
							 __ATOMIC_RELAXED);
		return 0;
	case SMARM_STAT_PREEMPT_SIGNALS:
		*out = (int64_t)atomic_load(&n->pre_signals);
		return 0;
	case SMARM_STAT_PREEMPT_ASYNC:
	case SMARM_STAT_PREEMPT_DEFERRED:
		*out = 0;
		for (int i = 0; i < n->workers_n; i++)
			*out += (int64_t)__atomic_load_n(
				stat == SMARM_STAT_PREEMPT_ASYNC
					? &n->workers[i].n_async
					: &n->workers[i].n_deferred,
				__ATOMIC_RELAXED);
		return 0;
	case SMARM_STAT_STACKS_GUARDED:
		*out = atomic_load(&n->stk_guarded);
		return 0;
	case SMARM_STAT_STACKS_DENSE:
		*out = atomic_load(&n->stk_dense);
		return 0;
	case SMARM_STAT_STACK_SHRINKS:
		*out = atomic_load(&n->stk_shrinks);
		return 0;
	case SMARM_STAT_STACK_GUARD_BUDGET:
		*out = n->stk_budget;
		return 0;
	case SMARM_STAT_WAKE_SLOT_HITS:
	case SMARM_STAT_WAKE_SLOT_DISPLACEMENTS:
	case SMARM_STAT_IDLE_SPIN_HITS:
	case SMARM_STAT_IDLE_PARKS:
		*out = worker_stat_sum(n, stat);
		return 0;
	default:
		return smarm__subsys_get_stat(n, stat, out);
	}
}

/* A stop from outside any actor (a foreign thread, the host). */
static const struct smarm__stop_req stop_kill = { 0, SMARM__STOP_KILL, 0 };

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
	smarm__stop_all(node); /* what the root's end does */
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

int smarm_spawn_opts_set_int(smarm_spawn_opts_t *opts, int opt, int64_t value)
{
	if (opts == NULL || !opt_valid(opt, value))
		return SMARM_EINVAL;
	if (opt == SMARM_OPT_STACK_RESERVE) {
		opts->reserve = page_up(value);
	} else if (opt == SMARM_OPT_STACK_GUARD) {
		opts->guard = page_up(value);
	} else if (opt == SMARM_OPT_STACK_MODE) {
		opts->mode = (uint8_t)value;
		opts->mode_set = 1;
	} else {
		return SMARM_EINVAL;
	}
	return 0;
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
	return w != NULL && w->cur != NULL &&
	       smarm__slot_live(w->node, pid.id) != NULL;
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
	rc = smarm__wait_park(&w);
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
	smarm__check_slice(me);
	return 0;
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
		smarm__yield(me);
	}
	return 0;
}

int smarm_preempt_allow_object(const void *addr)
{
	if (addr == NULL)
		return SMARM_EINVAL;
	return smarm__preempt_allow_object(addr);
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
	struct smarm__stop_req req = { smarm__slot_pid(me), SMARM__STOP_KILL,
				       0 };
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
