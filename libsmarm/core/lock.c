/* SPDX-License-Identifier: MIT */
/*
 * lock.c - slow path of the futex mutex, the debug lock-rank checker and
 * smarm__panic.
 *
 * Ownership: the rank mask is per OS thread (TLS, initial-exec).
 * Invariants: INV-1 (lock.h) ranks strictly increase while nested.
 * See: docs/architecture.md (Locks).
 */
#include "lock.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPIN_LIMIT 64

void smarm__lock_slow(smarm__lock_t *l)
{
	for (int i = 0; i < SPIN_LIMIT; i++) {
		uint32_t expect = 0;
		smarm__cpu_relax();
		if (__atomic_load_n(&l->v, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&l->v, &expect, 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
	}
	while (__atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE) != 0)
		smarm__futex_wait(&l->v, 2, 0);
}

void smarm__panic(const char *msg)
{
	/* Only for corrupted internal state: write(2) and abort. */
	static const char prefix[] = "smarm: panic: ";
	ssize_t r = write(2, prefix, sizeof prefix - 1);
	r = write(2, msg, strlen(msg));
	r = write(2, "\n", 1);
	(void)r;
	abort();
}

#ifndef NDEBUG
static __thread unsigned held_ranks __attribute__((tls_model("initial-exec")));

void smarm__rank_acquire(int rank)
{
	unsigned bit = 1u << rank;
	if (held_ranks >= bit)
		smarm__panic("lock order violated: rank taken under an equal "
			     "or higher rank");
	held_ranks |= bit;
}

void smarm__rank_release(int rank)
{
	held_ranks &= ~(1u << rank);
}
#endif
