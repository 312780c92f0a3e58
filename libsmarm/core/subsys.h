/* SPDX-License-Identifier: MIT */
/*
 * subsys.h - how the layers above the core plug into a node: subsystem
 * ids, the hook table (struct smarm__subsys), per-node and per-actor
 * subsystem state. The one door through which the core reaches io, otp,
 * behaviour and obs, and they reach the node.
 *
 * Ownership: a subsystem owns its per-node state (ss_open .. ss_close)
 * and its per-actor state (attach .. its exit hook).
 * Locking: per-actor state is attached and detached under the actor's
 * cold lock (actor.c INV-3); node hooks run with no runtime lock held.
 * See: docs/architecture.md (Subsystems).
 */
#ifndef SMARM_CORE_SUBSYS_H
#define SMARM_CORE_SUBSYS_H

#include <stdint.h>

struct smarm_config;
struct smarm_node;
struct smarm__exit;
struct smarm__slot;

/*
 * Subsystems: the layers above the core (io today; otp, behaviour and obs
 * tomorrow) plug into a node through this table of hooks, and keep their
 * own state per node and per actor. An id is also the index of the
 * subsystem's state; actor exit hooks run in id order.
 */
enum {
	SMARM__SUB_IO = 0,
	SMARM__SUB_OTP = 1,
	SMARM__SUB_BEHAVIOUR = 2,
	SMARM__SUB_OBS = 3,
	SMARM__SUB_MAX = 4,
};

/*
 * A subsystem's hooks. Every member may be NULL. None is called with a
 * runtime lock held. node.c calls them; see there for the order.
 *   ss_open       smarm_node_open, in id order: create the per-node state
 *                 (*state, NULL if none). An error fails the open (the
 *                 subsystems opened before are closed again).
 *   ss_close      smarm_node_close, in reverse id order (no run active).
 *   ss_run_start  smarm_node_run, before the root actor is spawned, on
 *                 the calling thread.
 *   ss_run_end    smarm_node_run, after every worker is joined and timers
 *                 are cleared: no actor exists any more.
 *   ss_actor_exit on the dying actor's own stack, after its cleanup
 *                 handlers, once per actor that has per-actor state of
 *                 this subsystem (smarm__actor_ext_attach), which it is
 *                 handed to own and free. The exit record is final and
 *                 borrowed for the call. It may allocate, send and wake;
 *                 a stop is no longer observed. (An actor whose stack
 *                 could not be mapped never ran: its hooks run on the
 *                 scheduler, which finalizes it.)
 *   ss_get_stat   smarm_node_get_int for a stat the core does not know:
 *                 0 with *out set, or SMARM_EINVAL for "not mine".
 */
struct smarm__subsys {
	const char *ss_name;
	int (*ss_open)(struct smarm_node *n, const struct smarm_config *cfg,
		       void **state);
	void (*ss_close)(struct smarm_node *n, void *state);
	void (*ss_run_start)(struct smarm_node *n, void *state);
	void (*ss_run_end)(struct smarm_node *n, void *state);
	void (*ss_actor_exit)(struct smarm__slot *s,
			      const struct smarm__exit *ex, void *actor_state);
	int (*ss_get_stat)(const struct smarm_node *n, const void *state,
			   int stat, int64_t *out);
};

/*
 * The subsystems built into the library, indexed by id (NULL: none).
 * Defined by libsmarm/subsys.c, the one file that names every layer.
 */
extern const struct smarm__subsys *const smarm__builtin_subsys[SMARM__SUB_MAX];

/* Per-actor subsystem state (slot `ext`; kept across tenants). */
struct smarm__ext {
	void *x_state[SMARM__SUB_MAX]; /* cold: each subsystem's, or NULL */
};

/* ---- node.c ---- */
int smarm__subsys_open(struct smarm_node *n, const struct smarm_config *cfg,
		       const struct smarm__subsys *const table[SMARM__SUB_MAX]);
void smarm__subsys_close(struct smarm_node *n);
void smarm__subsys_run_start(struct smarm_node *n);
void smarm__subsys_run_end(struct smarm_node *n);
int smarm__subsys_get_stat(const struct smarm_node *n, int stat, int64_t *out);

/* The per-node state of subsystem id (NULL if it keeps none). */
void *smarm__node_sub(const struct smarm_node *n, int id);

/* A resolved configuration value (SMARM_OPT_*), for ss_open. */
int64_t smarm__config_int(const struct smarm_config *cfg, int opt);

/* ---- actor.c: per-actor state, under the actor's cold lock ---- */
int smarm__actor_ext_attach(struct smarm__slot *s, int id, void *state);
void *smarm__actor_ext_get(const struct smarm__slot *s, int id);
void *smarm__actor_ext_detach(struct smarm__slot *s, int id);

#endif /* SMARM_CORE_SUBSYS_H */
