/* SPDX-License-Identifier: MIT */
/*
 * spin.h - the loop static_preempt.c needs in two places: in the
 * executable's own text and in a shared object of the host's
 * (hostcode.c). It calls nothing, so only an asynchronous preemption can
 * switch it out.
 */
#ifndef SMARM_TEST_INSTALL_SPIN_H
#define SMARM_TEST_INSTALL_SPIN_H

#include <stdatomic.h>
#include <stdint.h>

/* Spin until *flag is set or limit rounds are done; the rounds done. */
static inline unsigned long spin_until(atomic_int *flag, unsigned long limit)
{
	volatile uint64_t sink;
	uint64_t x = 1;
	unsigned long i;
	for (i = 0; i < limit; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (atomic_load_explicit(flag, memory_order_relaxed))
			break;
	}
	sink = x;
	(void)sink;
	return i;
}

#endif
