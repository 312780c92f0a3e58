/* SPDX-License-Identifier: MIT */
/*
 * lock.c - slow paths of the futex mutex and of the reader-writer lock,
 * the debug lock-rank checker and smarm__panic.
 *
 * Ownership: the rank mask is per OS thread (TLS, initial-exec).
 * Invariants: INV-1 (lock.h) ranks strictly increase while nested.
 * See: docs/architecture/locks.md.
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

/*
 * A reader found the writer bit: take its count back out, wait (spin,
 * then sleep with the sleepers bit set) until no writer holds or wants
 * the lock, and try again.
 */
void smarm__rw_rdlock_slow(smarm__rwlock_t *l)
{
	for (;;) {
		uint32_t v = __atomic_sub_fetch(&l->rw_word, SMARM__RW_READER,
						__ATOMIC_RELAXED);
		if ((v & ~SMARM__RW_SLEEPERS) == SMARM__RW_WRITER)
			smarm__rw_wake_writer(l); /* it waited for us */
		for (int i = 0;; i++) {
			v = __atomic_load_n(&l->rw_word, __ATOMIC_RELAXED);
			if (!(v & SMARM__RW_WRITER))
				break;
			if (i < SPIN_LIMIT) {
				smarm__cpu_relax();
				continue;
			}
			if (!(v & SMARM__RW_SLEEPERS) &&
			    !__atomic_compare_exchange_n(
				    &l->rw_word, &v, v | SMARM__RW_SLEEPERS,
				    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				continue; /* changed: look again */
			/* Returns at once if the word moved on meanwhile. */
			smarm__futex_wait(&l->rw_word, v | SMARM__RW_SLEEPERS,
					  0);
		}
		if (!(__atomic_fetch_add(&l->rw_word, SMARM__RW_READER,
					 __ATOMIC_ACQUIRE) &
		      SMARM__RW_WRITER))
			return;
	}
}

void smarm__rw_wake_writer(smarm__rwlock_t *l)
{
	/* Sleeping readers wake too, look, and sleep again. */
	smarm__futex_wake(&l->rw_word, INT32_MAX);
}

void smarm__rw_wrlock(smarm__rwlock_t *l, int rank)
{
	uint32_t v;
	smarm__lock(&l->rw_wlock, rank); /* one writer; the rank check */
	v = __atomic_or_fetch(&l->rw_word, SMARM__RW_WRITER, __ATOMIC_ACQUIRE);
	/* Wait for the readers inside: the last one out wakes us. */
	for (int i = 0; (v & ~SMARM__RW_SLEEPERS) != SMARM__RW_WRITER; i++) {
		if (i < SPIN_LIMIT)
			smarm__cpu_relax();
		else
			smarm__futex_wait(&l->rw_word, v, 0);
		v = __atomic_load_n(&l->rw_word, __ATOMIC_ACQUIRE);
	}
}

void smarm__rw_wrunlock(smarm__rwlock_t *l, int rank)
{
	uint32_t v = __atomic_fetch_and(
		&l->rw_word, ~(SMARM__RW_WRITER | SMARM__RW_SLEEPERS),
		__ATOMIC_RELEASE);
	if (v & SMARM__RW_SLEEPERS)
		smarm__futex_wake(&l->rw_word, INT32_MAX);
	smarm__unlock(&l->rw_wlock, rank);
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
