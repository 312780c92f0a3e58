/* SPDX-License-Identifier: MIT */
/*
 * preempt_plugin.c - a plugin for test_preempt_unload: a loop that has no
 * safe point, in an object the test dlopens, allows, disallows and
 * unloads (tests/meson.build builds it as a module nobody links).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

struct pp_spin {
	atomic_int entered; /* set by the loop when it starts */
	atomic_int stop;    /* the loop returns once it is set */
};

int pp_spin(struct pp_spin *sp, uint64_t max_ns);

static uint64_t pp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Spin until sp->stop is set (1) or max_ns have passed (0). The clock is
 * read once per 2^16 turns, so the pc is almost always in this object's
 * text, not in the vDSO.
 */
int pp_spin(struct pp_spin *sp, uint64_t max_ns)
{
	uint64_t end = pp_now() + max_ns;
	atomic_store(&sp->entered, 1);
	for (uint32_t i = 1;; i++) {
		if (atomic_load_explicit(&sp->stop, memory_order_relaxed))
			return 1;
		if ((i & 0xffff) == 0 && pp_now() > end)
			return 0;
	}
}
