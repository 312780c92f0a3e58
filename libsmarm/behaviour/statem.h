/* SPDX-License-Identifier: MIT */
/*
 * statem.h - what the rest of the behaviour layer needs of gen_statem
 * (statem.c): the table checker the loader runs on every machine.
 *
 * See: docs/plugins.md (gen_statem), docs/architecture.md (Behaviours).
 */
#ifndef SMARM_BEHAVIOUR_STATEM_H
#define SMARM_BEHAVIOUR_STATEM_H

#include <smarm/smarm_plugin.h>

#include <stddef.h>

/*
 * One operation of a machine's protocol as the checker sees it: its name
 * and its kind (SMARM_SM_CAST, SMARM_SM_CALL or SMARM_SM_INFO).
 */
struct smarm__sm_op {
	const char *so_name;
	int so_kind;
};

/*
 * smarm__sm_check_ops() - check the table of machine d, whose protocol
 * has the operations ops[0..n_ops): row validity, exhaustiveness and
 * reachability (statem.c, "The checker"). d is a full-size descriptor
 * (the loader fills the fields an older plugin lacks). On failure msg
 * (may be NULL) receives a message naming the machine, the row, the
 * state and the operation, cut to msglen bytes with its NUL.
 * Returns: 0. Errors: SMARM_EPROTOCOL a field or a row is malformed;
 * SMARM_ENOTEXHAUSTIVE a state misses a row; SMARM_EUNREACHABLE a row
 * can never match; SMARM_ENOMEM.
 */
int smarm__sm_check_ops(const smarm_sm_desc_t *d,
			const struct smarm__sm_op *ops, size_t n_ops, char *msg,
			size_t msglen);

#endif /* SMARM_BEHAVIOUR_STATEM_H */
