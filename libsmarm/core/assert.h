/* SPDX-License-Identifier: MIT */
/*
 * assert.h - the library's assertions and its panic: SMARM_ASSERT for
 * what must hold (nothing in release builds), SMARM_NEVER for a condition
 * believed impossible that the caller can survive, smarm__panic for
 * corrupted internal state (always compiled in). None of them is ever
 * used on caller input: that gets a SMARM_E* status.
 *
 * See: docs/architecture/errors.md.
 */
#ifndef SMARM_CORE_ASSERT_H
#define SMARM_CORE_ASSERT_H

#include <stdbool.h>

/*
 * SMARM_NEVER(c): a condition believed impossible; asserts in debug
 * builds, and in release builds lets the caller recover or panic.
 */
#ifndef NDEBUG
#include <assert.h>
#define SMARM_NEVER(c) ((c) ? (assert(!#c), 1) : 0)
#else
#define SMARM_NEVER(c) __builtin_expect(!!(c), 0)
#endif
#ifndef NDEBUG
#define SMARM_ASSERT(c) assert(c)
#else
#define SMARM_ASSERT(c) ((void)0)
#endif

/* Branch hint for rare paths. */
#define SMARM_UNLIKELY(c) __builtin_expect(!!(c), 0)

/* Corrupted internal state: print "smarm: panic: <msg>", abort (lock.c). */
void smarm__panic(const char *msg) __attribute__((noreturn));

#endif /* SMARM_CORE_ASSERT_H */
