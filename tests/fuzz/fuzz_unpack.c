/* SPDX-License-Identifier: MIT */
/*
 * fuzz_unpack.c - libFuzzer harness for the validation of message blocks
 * from outside (behaviour/pack.c): the first byte picks an operation of
 * a fixed protocol, the rest is a block. smarm__bhv_block_check must
 * refuse whatever it cannot vouch for without reading past the block; a
 * block it accepts must unpack into arguments that lie inside it (str
 * NUL-terminated, bytes and tuples in bounds), which the harness then
 * reads in full
 * so the sanitizers see any stray access.
 */
#include "behaviour/bhv.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char proto_text[] = "cast a()\n"
				 "cast b(i8, u16, i32, u64)\n"
				 "cast c(str)\n"
				 "cast d(bytes, str)\n"
				 "cast e(f32, f64, bool, pid, str, bytes)\n"
				 "cast f((i8, f64, bool), str, (u16, pid))\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bhv_proto p;
	static int ready;
	struct bhv_unpacked u;
	const struct bhv_op *op;
	void *blk;
	volatile unsigned sum = 0;

	if (!ready) {
		if (smarm__bhv_proto_parse(proto_text, &p, NULL, 0) != 0)
			abort();
		ready = 1;
	}
	if (size < 1)
		return 0;
	op = &p.pr_ops[data[0] % p.pr_n];
	/* A copy of exactly the block's bytes, so ASan sees overreads. */
	blk = malloc(size - 1 ? size - 1 : 1);
	if (blk == NULL)
		return 0;
	memcpy(blk, data + 1, size - 1);
	if (smarm__bhv_block_check(op, blk, size - 1) == 0) {
		smarm__bhv_unpack(op, blk, 0, &u);
		unsigned k = 0;
		for (unsigned i = 0; i < op->op_nargs; i++) {
			int t = op->op_args[i];
			if (t == SMARM_T_STR) {
				const char *s = *(const char **)u.ua_av[k++];
				sum += (unsigned)strlen(s);
			} else if (t == SMARM_T_BYTES) {
				const unsigned char *b =
					*(const unsigned char **)u.ua_av[k++];
				size_t n = *(const size_t *)u.ua_av[k++];
				for (size_t j = 0; j < n; j++)
					sum += b[j];
			} else if (t == SMARM_T_TUPLE) {
				const unsigned char *b = u.ua_av[k++];
				size_t n = bhv_arg_tuple(op, i)->tu_ffi.size;
				for (size_t j = 0; j < n; j++)
					sum += b[j];
			} else {
				k++;
			}
		}
	}
	free(blk);
	(void)sum;
	return 0;
}
