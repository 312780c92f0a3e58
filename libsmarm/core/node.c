/* SPDX-License-Identifier: MIT */
/*
 * node.c - a node's subsystems: the hook tables through which the layers
 * above the core (io and otp today; behaviour, obs later) keep per-node
 * state, hear about the node's open, runs and close, answer stats, take
 * trappable stop requests (ss_trap) and act on spawn options (ss_spawn);
 * and the spawn options' part for those layers; where the sized
 * subsystems' rooms lie in a slot's extension block (ext_layout).
 * Per-actor state and the actor exit hook are actor.c's.
 *
 * Order. Open and run start go in id order (SMARM__SUB_IO first), run end
 * and close in reverse id order, so a layer starts after, and stops
 * before, the layers below it. Actor exit hooks run in id order.
 *
 * Ownership: the node owns the table (copied at open from
 * smarm__builtin_subsys; unit tests open their own) and hands each subsystem's
 * state to it at every call; the subsystem owns that state and frees it in
 * ss_close. Locking: none; every call here runs on the thread that opens, runs
 * or closes the node, never with a runtime lock held. Invariants: INV-1 a
 * subsystem whose ss_open failed, or that was never opened, gets no further
 * call. INV-2 ss_run_end runs after every worker of the run has been joined (no
 * actor exists). See: docs/architecture/subsystems.md.
 */
#include "subsys.h"

#include "node.h"
#include "sched.h"

const struct smarm__spawn_ext *
smarm__spawn_opts_ext(const struct smarm_spawn_opts *opts)
{
	return opts != NULL && opts->so_ext ? &opts->ext : NULL;
}

void smarm__spawn_opts_set_ext(struct smarm_spawn_opts *opts,
			       const struct smarm__spawn_ext *ext)
{
	opts->so_ext = ext != NULL;
	if (ext != NULL)
		opts->ext = *ext;
}

bool smarm__spawn_opts_link(const struct smarm_node *n,
			    const struct smarm_spawn_opts *opts)
{
	if (opts != NULL && opts->link_set)
		return opts->link != 0;
	return n->link_default;
}

int64_t smarm__config_int(const struct smarm_config *cfg, int opt)
{
	return cfg->opt[opt];
}

const char *smarm__config_obs_socket(const struct smarm_config *cfg)
{
	return cfg->obs_socket;
}

const char *smarm__config_trace(const struct smarm_config *cfg, int *format)
{
	*format = cfg->trace_format;
	return cfg->trace_path;
}

/*
 * Where each sized subsystem's room lies in a slot's block of rooms,
 * and which subsystems have the hooks a spawn or a stop walks (so those
 * walks visit only them).
 */
static void ext_layout(struct smarm_node *n)
{
	size_t at = 0;
	n->spawn_hooks = 0;
	n->trap_hooks = 0;
	n->ext_sized = 0;
	for (int id = 0; id < SMARM__SUB_MAX; id++) {
		const struct smarm__subsys *ss = n->subs[id];
		n->ext_room[id] = 0;
		if (ss == NULL)
			continue;
		if (ss->ss_spawn != NULL)
			n->spawn_hooks |= (uint8_t)(1u << id);
		if (ss->ss_trap != NULL)
			n->trap_hooks |= (uint8_t)(1u << id);
		if (ss->ss_actor_size == 0)
			continue;
		SMARM_ASSERT(ss->ss_actor_trim != NULL);
		at = (at + 15) & ~(size_t)15;
		n->ext_room[id] = (uint32_t)at;
		n->ext_sized |= (uint8_t)(1u << id);
		at += ss->ss_actor_size;
	}
	n->ext_bytes = (uint32_t)at;
}

int smarm__subsys_open(struct smarm_node *n, const struct smarm_config *cfg,
		       const struct smarm__subsys *const table[SMARM__SUB_MAX])
{
	for (int id = 0; id < SMARM__SUB_MAX; id++) {
		const struct smarm__subsys *ss = table[id];
		int rc;
		n->subs[id] = NULL;
		n->sub_state[id] = NULL;
		if (ss == NULL)
			continue;
		rc = ss->ss_open ? ss->ss_open(n, cfg, &n->sub_state[id]) : 0;
		if (rc != 0) {
			smarm__subsys_close(n); /* the ones before it (INV-1) */
			return rc;
		}
		n->subs[id] = ss;
	}
	ext_layout(n);
	return 0;
}

void smarm__subsys_close(struct smarm_node *n)
{
	n->spawn_hooks = 0;
	n->trap_hooks = 0;
	for (int id = SMARM__SUB_MAX; id-- > 0;) {
		const struct smarm__subsys *ss = n->subs[id];
		if (ss != NULL && ss->ss_close != NULL)
			ss->ss_close(n, n->sub_state[id]);
		n->subs[id] = NULL;
		n->sub_state[id] = NULL;
	}
}

void smarm__subsys_run_start(struct smarm_node *n)
{
	for (int id = 0; id < SMARM__SUB_MAX; id++) {
		const struct smarm__subsys *ss = n->subs[id];
		if (ss != NULL && ss->ss_run_start != NULL)
			ss->ss_run_start(n, n->sub_state[id]);
	}
}

void smarm__subsys_run_end(struct smarm_node *n)
{
	for (int id = SMARM__SUB_MAX; id-- > 0;) {
		const struct smarm__subsys *ss = n->subs[id];
		if (ss != NULL && ss->ss_run_end != NULL)
			ss->ss_run_end(n, n->sub_state[id]);
	}
}

int smarm__subsys_get_stat(const struct smarm_node *n, int stat, int64_t *out)
{
	for (int id = 0; id < SMARM__SUB_MAX; id++) {
		const struct smarm__subsys *ss = n->subs[id];
		if (ss != NULL && ss->ss_get_stat != NULL &&
		    ss->ss_get_stat(n, n->sub_state[id], stat, out) == 0)
			return 0;
	}
	return SMARM_EINVAL;
}

int smarm__subsys_trap(struct smarm_node *n, uint64_t pid,
		       const struct smarm__stop_req *req)
{
	for (unsigned m = n->trap_hooks; m != 0; m &= m - 1) {
		int id = __builtin_ctz(m); /* in subsystem order */
		int rc = n->subs[id]->ss_trap(n, n->sub_state[id], pid, req);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int smarm__subsys_spawn(struct smarm_node *n, uint64_t parent, uint64_t child,
			const struct smarm_spawn_opts *opts)
{
	for (unsigned m = n->spawn_hooks; m != 0; m &= m - 1) {
		int id = __builtin_ctz(m); /* in subsystem order */
		int rc = n->subs[id]->ss_spawn(n, n->sub_state[id], parent,
					       child, opts);
		if (rc != 0)
			return rc;
	}
	return 0;
}

void *smarm__node_sub(const struct smarm_node *n, int id)
{
	return n->sub_state[id];
}

int smarm__node_workers(const struct smarm_node *n)
{
	return n->workers_n;
}

int smarm__worker_index(const struct smarm_node *n)
{
	struct smarm__worker *w = smarm__worker_of(n);
	return w != NULL ? w->id : -1;
}

/* The calling worker's counts if it is one of n's workers, else NULL. */
static struct smarm__wcount *own_counts(struct smarm_node *n)
{
	int i = smarm__worker_index(n);
	return i >= 0 ? &n->wcount[i] : NULL;
}

void smarm__gauge_add(struct smarm_node *n, int gauge, int64_t delta)
{
	struct smarm__wcount *c = own_counts(n);
	SMARM_ASSERT(gauge >= 0 && gauge < SMARM__GAUGES);
	if (c == NULL) {
		atomic_fetch_add(&n->gauge_shared[gauge], delta);
		return;
	}
	/* Only this worker writes its part: a load and a store, no RMW. */
	__atomic_store_n(&c->gauge[gauge],
			 __atomic_load_n(&c->gauge[gauge], __ATOMIC_RELAXED) +
				 delta,
			 __ATOMIC_RELAXED);
}

int64_t smarm__gauge_read(const struct smarm_node *n, int gauge)
{
	int64_t sum = atomic_load(&n->gauge_shared[gauge]);
	for (int i = 0; i < n->workers_n; i++)
		sum += __atomic_load_n(&n->wcount[i].gauge[gauge],
				       __ATOMIC_RELAXED);
	/* An add on one worker and its undo on another, read across. */
	return sum < 0 ? 0 : sum;
}

uint64_t smarm__ref_next(struct smarm_node *n, uint64_t above)
{
	struct smarm__wcount *c = own_counts(n);
	uint64_t first;
	if (c == NULL)
		return atomic_fetch_add(&n->ref_blocks, 1) + 1;
	/* Blocks rise: a block taken now is above every ref issued so
	 * far, `above` included, on any worker. */
	if (c->ref_next == c->ref_end || c->ref_next <= above) {
		first = atomic_fetch_add(&n->ref_blocks, SMARM__REF_BLOCK) + 1;
		c->ref_next = first;
		c->ref_end = first + SMARM__REF_BLOCK;
	}
	return c->ref_next++;
}
