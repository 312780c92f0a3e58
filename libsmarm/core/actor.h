/* SPDX-License-Identifier: MIT */
/*
 * actor.h - the actor lifecycle inside the core: spawn, the exit paths
 * and their hooks, finalize, stop requests, join and detach, cleanup
 * handlers, and the two safe-point checks every runtime call makes.
 *
 * Ownership, locking, invariants: stated in actor.c.
 * See: docs/architecture/actors.md,
 * docs/architecture/cancellation.md.
 */
#ifndef SMARM_CORE_ACTOR_H
#define SMARM_CORE_ACTOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "node.h"
#include "sched.h"
#include "slot.h"

int smarm__spawn(struct smarm_node *n, struct smarm__slot *parent,
		 uint64_t *out, smarm_actor_cb fn, void *arg,
		 const struct smarm_spawn_opts *opts, bool joinable);
void smarm__finalize(struct smarm__worker *w, struct smarm__slot *s);
void smarm__terminate(struct smarm__slot *s, int how, intptr_t code)
	__attribute__((noreturn));
void smarm__terminate_ex(struct smarm__slot *s, const struct smarm__exit *ex)
	__attribute__((noreturn));
void smarm__terminate_stopped(struct smarm__slot *s) __attribute__((noreturn));
void smarm__exit_hooks_run(struct smarm__slot *s);
int smarm__request_stop(struct smarm_node *n, uint64_t pid,
			const struct smarm__stop_req *req);
void smarm__stop_all(struct smarm_node *n, int mode);
void smarm__orphans_fini(struct smarm_node *n);
void smarm__release_unjoined(struct smarm_node *n);
int smarm__join(struct smarm_node *n, struct smarm__slot *me, uint64_t pid,
		int *how, intptr_t *reason);
int smarm__detach(struct smarm_node *n, uint64_t pid);
/* Free the node's interned label texts (no slot refers to them). */
void smarm__labels_fini(struct smarm_node *n);

/* Free a slot's block of per-actor state and its block of rooms (made
 * with it or on their own: actor.c ext_block); NULL is nothing. */
struct smarm__ext;
void smarm__ext_free(struct smarm__ext *x);
/*
 * The running actor s's parked-stack record (parkstk.c), a zeroed block
 * of size bytes made on first use and kept in its slot's block of
 * per-actor state across tenants (subsys.h x_pstk); NULL on ENOMEM.
 */
void *smarm__ext_pstk(struct smarm__slot *s, size_t size);
int smarm__cleanup_push(struct smarm__slot *s, smarm_cleanup_cb fn, void *arg);
int smarm__cleanup_pop(struct smarm__slot *s, bool execute);
/* The running actor s hibernates: its cleanup array keeps room for the
 * handlers it has and no more (a smaller block; none for none). Out of
 * memory it stays as it is. */
void smarm__cleanup_fit(struct smarm__slot *s);
/* Take the newest handler (fn, arg) off s's cleanup stack, wherever it
 * is, without running it (the ones above keep their order): 0, or
 * SMARM_ENOENT. */
int smarm__cleanup_drop(struct smarm__slot *s, smarm_cleanup_cb fn, void *arg);

/* A pending stop ends the actor here (a safe point). */
static inline void smarm__observe_stop(struct smarm__slot *s)
{
	if (__builtin_expect(
		    atomic_load_explicit(&s->stop, memory_order_relaxed), 0) &&
	    !s->exiting)
		smarm__terminate_stopped(s);
}

/*
 * Yield if the timeslice is spent (a safe point). The slice starts at the
 * first check after a resume rather than at the resume itself: reading the
 * cycle counter costs 12-24 ns in this VM, too much for every switch.
 */
static inline void smarm__check_slice(struct smarm__slot *s)
{
	struct smarm__worker *w = smarm__tls_worker;
	uint64_t now;
	if (__builtin_expect(s->preempt_pending, 0)) {
		/* The monitor found the slice spent where it could not act. */
		s->preempt_pending = 0;
		smarm__yield_slice(s);
		return;
	}
	now = smarm__cycles_fast();
	if (w->slice_start == 0)
		w->slice_start = now;
	else if (__builtin_expect(now - w->slice_start > w->node->slice_cycles,
				  0))
		smarm__yield_slice(s);
}

/*
 * Leave the CPU until woken (wait.c is the one caller: every wait goes
 * through smarm__wait_park). A safe point on both sides.
 */
static inline void smarm__park(struct smarm__slot *s)
{
	smarm__observe_stop(s);
	smarm__switch_out(s, SMARM__INTENT_PARK);
	smarm__observe_stop(s);
}

#endif /* SMARM_CORE_ACTOR_H */
