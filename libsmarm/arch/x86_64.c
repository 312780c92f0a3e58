/* SPDX-License-Identifier: MIT */
/*
 * x86_64.c - the CPU half of arch.h that is plain C, for x86-64 SysV:
 * the initial frame of a fresh actor stack. The context switch and the
 * entry trampoline are in x86_64.S.
 *
 * Ownership: stateless; callers own the stacks passed in.
 * Invariants: INV-1 the initial frame matches the pop order of
 * smarm__ctx_switch in x86_64.S exactly (the frame is drawn there).
 * See: docs/architecture.md.
 */

#include "arch.h"

#include <stdint.h>

void *smarm__ctx_init(void *top, void *arg)
{
	uintptr_t t = (uintptr_t)top & ~(uintptr_t)15;
	uint64_t *w = (uint64_t *)t;

	w[-1] = 0; /* fake caller: ends unwinding */
	w[-2] = (uint64_t)(uintptr_t)smarm__ctx_entry; /* ret target */
	w[-3] = 0;				       /* rbp */
	w[-4] = 0;				       /* rbx */
	w[-5] = (uint64_t)(uintptr_t)arg; /* r12: smarm__actor_main(arg) */
	w[-6] = 0;			  /* r13 */
	w[-7] = 0;			  /* r14 */
	w[-8] = 0;			  /* r15 */
	w[-9] = 0x1f80;			  /* MXCSR: SysV default */
	w[-10] = 0x037f;		  /* x87 CW: SysV default */
	return &w[-10];
}
