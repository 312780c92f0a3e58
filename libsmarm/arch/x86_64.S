/* SPDX-License-Identifier: MIT */
/*
 * x86_64.S - the green-thread context switch and the actor entry
 * trampoline for x86-64 SysV.
 *
 * A switch is always an ordinary call, so only what the SysV ABI makes
 * callee-saved needs saving: rbx, rbp, r12-r15, the MXCSR control bits and
 * the x87 control word (a plugin may change rounding modes; the ABI says
 * they survive calls). The vector registers are caller-saved and need no
 * save here. Asynchronous preemption saves the full state itself, in
 * smarm__preempt_tramp below, before it reaches this switch.
 *
 * Saved frame, from the saved sp upwards (keep in sync with
 * smarm__ctx_init in x86_64.c):
 *   sp+0   x87 control word (2 bytes, slot 8)
 *   sp+8   MXCSR (4 bytes, slot 8)
 *   sp+16  r15   sp+24 r14   sp+32 r13   sp+40 r12   sp+48 rbx   sp+56 rbp
 *   sp+64  return address
 */
	.text

/* void smarm__ctx_switch(void **save_sp, void *load_sp) */
	.globl smarm__ctx_switch
	.hidden smarm__ctx_switch
	.type smarm__ctx_switch, @function
	.p2align 4
smarm__ctx_switch:
	.cfi_startproc
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	subq $16, %rsp
	stmxcsr 8(%rsp)
	fnstcw (%rsp)
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	ldmxcsr 8(%rsp)
	fldcw (%rsp)
	addq $16, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.cfi_endproc
	.size smarm__ctx_switch, .-smarm__ctx_switch

/*
 * smarm__ctx_entry: first code an actor runs. The initial frame leaves the
 * argument for smarm__actor_main in r12. The entry never returns: the
 * actor leaves by switching away for good, and ud2 traps if that breaks.
 */
	.globl smarm__ctx_entry
	.hidden smarm__ctx_entry
	.type smarm__ctx_entry, @function
	.p2align 4
smarm__ctx_entry:
	.cfi_startproc
	.cfi_undefined rip
	xorl %ebp, %ebp
	andq $-16, %rsp
	movq %r12, %rdi
	call smarm__actor_main
	ud2
	.cfi_endproc
	.size smarm__ctx_entry, .-smarm__ctx_entry

/*
 * void smarm__call_actor(void (*fn)(void *), void *arg, uintptr_t *frame)
 *
 * Call fn(arg) as the actor's own code, then smarm__actor_ended(), which
 * never returns. Every general register but rsp, rbp and the argument is
 * zeroed first, so fn starts with no value the runtime left (an -O0
 * runtime leaves TLS addresses in them, and a loop that never writes a
 * register keeps it for ever); nothing after fn needs them, so nothing is
 * saved. *frame gets the rsp fn is called with: the runtime's frames lie
 * at and above it, the actor's below (the preemption's TLS scan,
 * core/preempt.c INV-P7).
 */
	.globl smarm__call_actor
	.hidden smarm__call_actor
	.type smarm__call_actor, @function
	.p2align 4
smarm__call_actor:
	.cfi_startproc
	subq $8, %rsp		/* 16-byte aligned at the call */
	.cfi_def_cfa_offset 16
	movq %rsp, (%rdx)
	movq %rdi, %r11
	movq %rsi, %rdi
	xorl %eax, %eax
	xorl %ebx, %ebx
	xorl %ecx, %ecx
	xorl %edx, %edx
	xorl %esi, %esi
	xorl %r8d, %r8d
	xorl %r9d, %r9d
	xorl %r10d, %r10d
	xorl %r12d, %r12d
	xorl %r13d, %r13d
	xorl %r14d, %r14d
	xorl %r15d, %r15d
	call *%r11
	call smarm__actor_ended
	ud2
	.cfi_endproc
	.size smarm__call_actor, .-smarm__call_actor

/*
 * smarm__preempt_tramp: where an asynchronously preempted actor resumes
 * after the SIGURG handler (core/preempt.c) had smarm__uc_divert
 * (x86_64.c) rewrite its context. The divert left the interrupted pc just
 * below the interrupted frame's 128-byte red zone and pointed rsp at it,
 * so the stack reads
 *   rsp+0   interrupted pc
 *   rsp+8   128 bytes skipped (the red zone, still owned by that frame)
 *   rsp+136 the interrupted rsp
 * Nothing here may assume an ABI-conforming state: every general
 * register, the flags, the x87/SSE/AVX state (xsave, or fxsave on CPUs
 * without it, as smarm__cpu_probe found) are saved, the stack is aligned
 * to 64 for the save area, and the C side keeps errno. The C function
 * gets the address of the pc word (rdi) and may rewrite it. `ret $128`
 * pops the pc and skips the red-zone gap, which leaves rsp exactly as
 * interrupted.
 *
 * smarm__preempt_ret_stub: the same for an actor stopped at a return.
 * The handler replaced a return address into preemptible code, on the
 * stack of an actor running inside libc, with this stub's address (and
 * kept the real one in the actor's slot); the libc function's `ret` lands
 * here with rsp just above that word. The stub makes the frame above
 * (the pc word is filled in by smarm__preempt_ret_resume) and shares the
 * rest. At a return, caller-saved registers other than the return values
 * are dead, but everything is saved anyway: one body, one frame layout.
 * Its FDE names a personality (smarm__preempt_ret_personality): an
 * exception that unwinds out of the patched libc call meets this frame
 * before the return, and the personality restores the patched word.
 */
	.macro PREEMPT_BODY fn
	pushfq
	.cfi_adjust_cfa_offset 8
	pushq %rax
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rax, 0
	pushq %rcx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rcx, 0
	pushq %rdx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rdx, 0
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rsi, 0
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rdi, 0
	pushq %r8
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r8, 0
	pushq %r9
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r9, 0
	pushq %r10
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r10, 0
	pushq %r11
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r11, 0
	pushq %rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbx, 0
	pushq %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbp, 0
	pushq %r12
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r12, 0
	pushq %r13
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r13, 0
	pushq %r14
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r14, 0
	pushq %r15
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r15, 0
	movq %rsp, %rbp
	.cfi_def_cfa_register rbp
	cld
	subq smarm__xsave_size(%rip), %rsp
	andq $-64, %rsp
	cmpl $0, smarm__have_xsave(%rip)
	je 1f
	/* XRSTOR faults unless the header's reserved bytes are zero. */
	xorl %eax, %eax
	movq %rax, 512(%rsp)
	movq %rax, 520(%rsp)
	movq %rax, 528(%rsp)
	movq %rax, 536(%rsp)
	movq %rax, 544(%rsp)
	movq %rax, 552(%rsp)
	movq %rax, 560(%rsp)
	movq %rax, 568(%rsp)
	movl $-1, %eax
	movl $-1, %edx
	xsave64 (%rsp)
	/* The next actor starts from an empty x87 stack (SysV at a call). */
	fninit
	leaq 128(%rbp), %rdi /* the pc word, above the 16 pushes */
	call \fn
	movl $-1, %eax
	movl $-1, %edx
	xrstor64 (%rsp)
	jmp 2f
1:
	fxsave64 (%rsp)
	fninit
	leaq 128(%rbp), %rdi
	call \fn
	fxrstor64 (%rsp)
2:
	movq %rbp, %rsp
	.cfi_def_cfa_register rsp
	popq %r15
	.cfi_adjust_cfa_offset -8
	.cfi_restore r15
	popq %r14
	.cfi_adjust_cfa_offset -8
	.cfi_restore r14
	popq %r13
	.cfi_adjust_cfa_offset -8
	.cfi_restore r13
	popq %r12
	.cfi_adjust_cfa_offset -8
	.cfi_restore r12
	popq %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbp
	popq %rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	popq %r11
	.cfi_adjust_cfa_offset -8
	.cfi_restore r11
	popq %r10
	.cfi_adjust_cfa_offset -8
	.cfi_restore r10
	popq %r9
	.cfi_adjust_cfa_offset -8
	.cfi_restore r9
	popq %r8
	.cfi_adjust_cfa_offset -8
	.cfi_restore r8
	popq %rdi
	.cfi_adjust_cfa_offset -8
	.cfi_restore rdi
	popq %rsi
	.cfi_adjust_cfa_offset -8
	.cfi_restore rsi
	popq %rdx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rdx
	popq %rcx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rcx
	popq %rax
	.cfi_adjust_cfa_offset -8
	.cfi_restore rax
	popfq
	.cfi_adjust_cfa_offset -8
	ret $128
	.endm

	.globl smarm__preempt_tramp
	.hidden smarm__preempt_tramp
	.type smarm__preempt_tramp, @function
	.p2align 4
smarm__preempt_tramp:
	.cfi_startproc
	.cfi_signal_frame
	/* Unwinders see the interrupted frame: its rsp is 136 above us. */
	.cfi_def_cfa rsp, 136
	.cfi_offset rip, -136
	PREEMPT_BODY smarm__preempt_resume
	.cfi_endproc
	.size smarm__preempt_tramp, .-smarm__preempt_tramp

	.globl smarm__preempt_ret_stub
	.hidden smarm__preempt_ret_stub
	.type smarm__preempt_ret_stub, @function
	.p2align 4
	/*
	 * Not a signal frame: the pc word above holds a return address (the
	 * patched one), which an unwinder must look up at address - 1, as
	 * any caller's. So is this frame's own address looked up: the FDE
	 * covers the byte before the stub. An unwind that meets this frame
	 * before the patched return (a C++ exception out of a libc callback)
	 * has the real return address put back first, by the personality.
	 */
	.cfi_startproc
	.cfi_personality 0x9b, .Lret_personality_ref
	/* Entered by a ret: rsp is the interrupted frame's own, just above
	 * the patched word (the return address, for an unwinder). The pc
	 * word is filled in by the C side before anything unwinds through
	 * the frame made below. */
	.cfi_def_cfa rsp, 0
	nop
smarm__preempt_ret_stub:
	leaq -136(%rsp), %rsp /* leaves the flags alone */
	.cfi_def_cfa rsp, 136
	.cfi_offset rip, -136
	PREEMPT_BODY smarm__preempt_ret_resume
	.cfi_endproc
	.size smarm__preempt_ret_stub, .-smarm__preempt_ret_stub

	/* The stub's personality, for its FDE (indirect, pc-relative). */
	.section .data.rel.ro.local,"aw",@progbits
	.p2align 3
.Lret_personality_ref:
	.quad smarm__preempt_ret_personality
	.text

/*
 * Register-saving thunks (arch.h, smarm__thunk_addr): SMARM__THUNKS
 * entry points of SMARM__THUNK_SIZE bytes each, thunk i at
 * smarm__thunks + i * SMARM__THUNK_SIZE. Thunk i puts i in r10 (the
 * SysV static-chain register, free at a call) and jumps to the common
 * entry, which saves the six integer and eight vector argument
 * registers in a struct smarm__thunk_regs on its stack and calls
 * smarm__thunk_handler(i, &regs, first stack argument), returning what
 * it returns in rax. So one C function serves any number of distinct C
 * function pointers without runtime code generation: a typed client
 * stub of a behaviour's operation (behaviour/plugin.c) is one of them.
 */
	.globl smarm__thunks
	.hidden smarm__thunks
	.type smarm__thunks, @function
	.p2align 4
smarm__thunks:
	.cfi_startproc
	.set .Lthunk_i, 0
	.rept 1024 /* SMARM__THUNKS */
	.p2align 4 /* SMARM__THUNK_SIZE */
	endbr64
	movl $.Lthunk_i, %r10d
	jmp smarm__thunk_entry
	.set .Lthunk_i, .Lthunk_i + 1
	.endr
	.cfi_endproc
	.size smarm__thunks, .-smarm__thunks

	.type smarm__thunk_entry, @function
	.p2align 4
smarm__thunk_entry:
	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp, -16
	movq %rsp, %rbp
	.cfi_def_cfa_register rbp
	subq $112, %rsp /* struct smarm__thunk_regs; rsp stays 16-aligned */
	movq %rdi, 0(%rsp)
	movq %rsi, 8(%rsp)
	movq %rdx, 16(%rsp)
	movq %rcx, 24(%rsp)
	movq %r8, 32(%rsp)
	movq %r9, 40(%rsp)
	movq %xmm0, 48(%rsp)
	movq %xmm1, 56(%rsp)
	movq %xmm2, 64(%rsp)
	movq %xmm3, 72(%rsp)
	movq %xmm4, 80(%rsp)
	movq %xmm5, 88(%rsp)
	movq %xmm6, 96(%rsp)
	movq %xmm7, 104(%rsp)
	movl %r10d, %edi
	movq %rsp, %rsi
	leaq 16(%rbp), %rdx /* above the saved rbp and the return address */
	call *smarm__thunk_handler(%rip)
	leave
	.cfi_def_cfa rsp, 8
	ret
	.cfi_endproc
	.size smarm__thunk_entry, .-smarm__thunk_entry

	.section .note.GNU-stack,"",@progbits
