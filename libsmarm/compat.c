/* SPDX-License-Identifier: MIT */
/*
 * compat.c - the calls that left the header, kept for programs and
 * plugins built against an older ABI node. libsmarm.so.0 never drops a
 * symbol while its SONAME stands: a call retired from smarm.h stays
 * exported under the version node that introduced it, and a call whose
 * signature changed keeps its old form under the old node (a symver
 * alias) beside the new default. Each wrapper here is a thin adapter onto
 * the current implementation, so there is still one mechanism per call;
 * none is declared in abi/ (new code cannot reach them), which is why the
 * prototypes live in this file.
 *
 *   retired in SMARM_0.3        replaced by
 *   smarm_select                smarm_selset_* (one select API)
 *   smarm_select_timeout        smarm_selset_wait
 *   smarm_actor_try_spawn       smarm_actor_spawn (same cost of refusal)
 *   smarm_chan_len@SMARM_0.1    smarm_chan_len(ch, &n) (status + count)
 *
 * Ownership: nothing of its own. Invariants: INV-1 each wrapper behaves as
 * its SMARM_0.1 documentation promised (NEWS.md says where the 0.3 timeout
 * rule changed a corner case); tests/compat runs a 0.2-built consumer
 * against this library to prove it.
 */
#include "core/core.h"
#include "io/io.h"

SMARM_API int smarm_select(smarm_chan_t *const arms[], size_t n, size_t *ready);
SMARM_API int smarm_select_timeout(smarm_chan_t *const arms[], size_t n,
				   uint64_t timeout_ns, size_t *ready);
SMARM_API int smarm_actor_try_spawn(smarm_pid_t *out, smarm_actor_cb fn,
				    void *arg, const smarm_spawn_opts_t *opts);
SMARM_API int64_t smarm__chan_len_v01(smarm_chan_t *ch);
int smarm__chan_len_v03(smarm_chan_t *ch, size_t *out); /* chan_api.c */

int smarm_select(smarm_chan_t *const arms[], size_t n, size_t *ready)
{
	return smarm__select_chans(arms, n, SMARM_NO_TIMEOUT, ready);
}

int smarm_select_timeout(smarm_chan_t *const arms[], size_t n,
			 uint64_t timeout_ns, size_t *ready)
{
	return smarm__select_chans(arms, n, timeout_ns, ready);
}

int smarm_actor_try_spawn(smarm_pid_t *out, smarm_actor_cb fn, void *arg,
			  const smarm_spawn_opts_t *opts)
{
	return smarm_actor_spawn(out, fn, arg, opts);
}

/* SMARM_0.1's smarm_chan_len: the count, or SMARM_EINVAL, in one value. */
__attribute__((symver("smarm_chan_len@SMARM_0.1"))) int64_t
smarm__chan_len_v01(smarm_chan_t *ch)
{
	size_t len;
	int rc = smarm__chan_len_v03(ch, &len);
	return rc != 0 ? rc : (int64_t)len;
}
