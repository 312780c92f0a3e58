/* SPDX-License-Identifier: MIT */
/*
 * fuzz_proto.c - libFuzzer harness for the protocol parser
 * (behaviour/proto.c): any text parses or is refused with
 * SMARM_EPROTOCOL and a "line L, column C:" message, never crashes, and
 * a parse that succeeds respects every limit (INV-1 of proto.c).
 * Build with -Dfuzz=true and clang; run build-fuzz/tests/fuzz/fuzz_proto
 * tests/fuzz/corpus/fuzz_proto.
 */
#include "behaviour/bhv.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char msg[128];
	struct bhv_proto p;
	int rc;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	rc = smarm__bhv_proto_parse(text, &p, msg, sizeof msg);
	if (rc == SMARM_EPROTOCOL) {
		if (strncmp(msg, "line ", 5) != 0 || p.pr_n != 0)
			abort();
	} else if (rc == 0) {
		if (p.pr_n > SMARM_OPS_MAX)
			abort();
		for (size_t i = 0; i < p.pr_n; i++) {
			const struct bhv_op *op = &p.pr_ops[i];
			if (op->op_nargs > SMARM_OP_ARGS_MAX ||
			    strlen(op->op_name) > SMARM_OP_NAME_MAX ||
			    smarm__bhv_proto_find(&p, op->op_name, 0) != op)
				abort();
			for (unsigned a = 0; a <= op->op_nargs; a++) {
				const struct bhv_tuple *tu =
					a < op->op_nargs ? bhv_arg_tuple(op, a)
							 : bhv_reply_tuple(op);
				if (a < op->op_nargs &&
				    (op->op_args[a] < SMARM_T_I8 ||
				     op->op_args[a] > SMARM_T_TUPLE))
					abort();
				/* a tuple: laid out, its elements inside */
				if (tu != NULL &&
				    (tu->tu_n < 1 ||
				     tu->tu_n > SMARM_TUPLE_MAX ||
				     tu->tu_ffi.size == 0 ||
				     tu->tu_ffi.size > BHV_TUPLE_SIZE_MAX))
					abort();
				for (unsigned e = 0; tu != NULL && e < tu->tu_n;
				     e++)
					if (tu->tu_off[e] +
						    tu->tu_elems[e]->size >
					    tu->tu_ffi.size)
						abort();
			}
		}
	} else if (rc != SMARM_ENOMEM) {
		abort();
	}
	smarm__bhv_proto_free(&p);
	free(text);
	return 0;
}
