/* SPDX-License-Identifier: MIT */
/*
 * timer_api.c - the public entry points of "Time and timers" that belong
 * to the core: the clock and cancelling a timer. (The timed send is a
 * channel operation: msg/chan_api.c.) Each call validates its arguments
 * and calls timer.c.
 *
 * Ownership: a timer id is a plain value; cancelling a fired or
 * cancelled one is SMARM_ENOENT. Locking: none of its own.
 * Invariants: INV-1 a call that returns an argument error changed
 * nothing.
 * See: docs/embedding.md (Timers), abi/smarm/smarm.h.
 */
#include "timer.h"

#include "sched.h"

uint64_t smarm_now_ns(void)
{
	return smarm__clock_ns();
}

int smarm_timer_cancel(smarm_timer_t timer)
{
	if (smarm__current() == NULL)
		return SMARM_ENOTACTOR;
	if (timer.id == 0)
		return SMARM_ENOENT;
	return smarm__timer_cancel(smarm__current_node(), timer.id);
}
