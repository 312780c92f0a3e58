/* SPDX-License-Identifier: MIT */
/*
 * x86_64.c - the CPU half of arch.h that is plain C, for x86-64 SysV:
 * the initial frame of a fresh actor stack, the probe that sizes the
 * preemption trampoline's save area (XSAVE, else FXSAVE), and the
 * ucontext accessors with which the SIGURG handler reads an interrupted
 * actor's pc and sp, tells whether it stopped at a syscall instruction,
 * and diverts it into that trampoline. The context switch and both
 * trampolines are in x86_64.S.
 *
 * Ownership: smarm__xsave_size and smarm__have_xsave are process-wide,
 * written only by smarm__cpu_probe, which core/preempt.c runs once (under
 * its pthread_once) before it installs the SIGURG handler; read-only
 * afterwards, by the trampoline and smarm__preempt_frame_size. Callers
 * own the stacks passed in.
 * Invariants:
 *   INV-1 the initial frame matches the pop order of smarm__ctx_switch
 *         in x86_64.S exactly (the frame is drawn there).
 *   INV-2 smarm__preempt_frame_size covers everything the divert and
 *         the trampoline put below the interrupted sp; change them
 *         together.
 *   INV-3 smarm__uc_divert leaves the stack the way smarm__preempt_tramp
 *         expects it (drawn above the trampoline in x86_64.S): the
 *         interrupted pc at the new sp, the untouched 128-byte red zone
 *         above it, then the interrupted sp.
 *   INV-4 the smarm__uc_* functions are
 *         async-signal-safe.
 * See: docs/architecture.md (Preemption).
 */

#include "arch.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

/* Below the interrupted sp: the SysV red zone, then a slot for the pc. */
#define DIVERT_DROP (128 + 8)

/*
 * Read by smarm__preempt_tramp: the XSAVE area size for the state the OS
 * enabled, and whether to use xsave at all (else fxsave, 512 bytes).
 */
uint64_t smarm__xsave_size = 512;
int smarm__have_xsave;

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

void smarm__cpu_probe(void)
{
	unsigned a, b, c, d;
	__asm__ volatile("cpuid"
			 : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(1), "c"(0));
	/* XSAVE supported and enabled by the OS (OSXSAVE). */
	if ((c & (1u << 26)) && (c & (1u << 27))) {
		__asm__ volatile("cpuid"
				 : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
				 : "a"(0xd), "c"(0));
		if (b >= 576) {
			smarm__xsave_size = b;
			smarm__have_xsave = 1;
		}
	}
}

size_t smarm__preempt_frame_size(void)
{
	/*
	 * The divert's drop, the trampoline's 16 pushes, its save area and
	 * the alignment of that area to 64 (INV-2).
	 */
	return DIVERT_DROP + 128 + smarm__xsave_size + 64;
}

uintptr_t smarm__uc_pc(const void *uc)
{
	return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
}

uintptr_t smarm__uc_sp(const void *uc)
{
	return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RSP];
}

void smarm__uc_divert(void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	sp -= DIVERT_DROP; /* below the 128-byte red zone, room for the pc */
	memcpy((void *)sp, &pc, sizeof pc);
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	uc->uc_mcontext.gregs[REG_RIP] =
		(greg_t)(uintptr_t)smarm__preempt_tramp;
}

bool smarm__uc_asleep_in_syscall(const void *ucv)
{
	const ucontext_t *uc = ucv;
	uintptr_t pc = smarm__uc_pc(uc);
	greg_t rax = uc->uc_mcontext.gregs[REG_RAX];
	uint16_t here = 0, before = 0;
	bool h = smarm__peek(pc, &here, sizeof here);
	bool b = pc >= 2 && smarm__peek(pc - 2, &before, sizeof before);
	return (h && here == 0x050f) || /* 0f 05: to be restarted */
	       (b && before == 0x050f && rax == -EINTR); /* ended by us */
}
