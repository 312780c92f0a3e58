/* SPDX-License-Identifier: MIT */
/*
 * retired.h - the calls that left smarm/smarm.h in SMARM_0.3, declared as
 * the SMARM_0.2 header declared them. The library still exports them for
 * programs built against 0.2 (libsmarm/compat.c); the tests that include
 * this file are such programs and keep those calls honest. New code uses
 * the replacements NEWS.md names.
 */
#ifndef SMARM_TESTS_RETIRED_H
#define SMARM_TESTS_RETIRED_H

#include <smarm/smarm.h>

/* Replaced by smarm_selset_* (one select API). */
int smarm_select(smarm_chan_t *const arms[], size_t n, size_t *ready);
int smarm_select_timeout(smarm_chan_t *const arms[], size_t n,
			 uint64_t timeout_ns, size_t *ready);
/* Replaced by smarm_actor_spawn, which refuses as cheaply. */
int smarm_actor_try_spawn(smarm_pid_t *out, smarm_actor_cb fn, void *arg,
			  const smarm_spawn_opts_t *opts);

#endif /* SMARM_TESTS_RETIRED_H */
