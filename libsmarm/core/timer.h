/* SPDX-License-Identifier: MIT */
/*
 * timer.h - the node's timers: wake entries behind every bounded wait
 * (through wait.h), and timed calls (the mechanism under send_after)
 * with their cancellation.
 *
 * Ownership, locking, invariants: stated in timer.c.
 * See: docs/architecture/timers.md.
 */
#ifndef SMARM_CORE_TIMER_H
#define SMARM_CORE_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../arch/arch.h"

struct smarm_node;
struct smarm__slot;

int smarm__timer_sleep(struct smarm_node *n, uint64_t deadline,
		       struct smarm__slot *me, uint32_t epoch);
/*
 * The deadline of the wake entry of s's wait round epoch (s parked in
 * it, its cold lock held by the caller), or 0 if that wait has none.
 * Takes tm_lock only when s has a tracked entry. For introspection.
 */
uint64_t smarm__timer_wake_deadline(struct smarm_node *n, struct smarm__slot *s,
				    uint32_t epoch);
void smarm__timers_fire(struct smarm_node *n, bool try_only);
bool smarm__timers_due(struct smarm_node *n);
uint64_t smarm__timers_peek(struct smarm_node *n);
void smarm__timers_clear(struct smarm_node *n);
void smarm__timers_fini(struct smarm_node *n);
int smarm__timer_call_after(struct smarm_node *n, uint64_t delay_ns,
			    void (*fire)(void *, void *),
			    void (*drop)(void *, void *), void *ctx,
			    const void *payload, size_t len, uint64_t *id);
int smarm__timer_cancel(struct smarm_node *n, uint64_t id);

/*
 * now + ns, saturating: a huge timeout means "practically never", not a
 * wrapped deadline in the past. UINT64_MAX stays reserved for "no timer".
 */
static inline uint64_t smarm__deadline_after(uint64_t ns)
{
	uint64_t now = smarm__clock_ns();
	return ns >= UINT64_MAX - 1 - now ? UINT64_MAX - 1 : now + ns;
}

#endif /* SMARM_CORE_TIMER_H */
