/* SPDX-License-Identifier: MIT */
/*
 * x86_64.S - the green-thread context switch and the actor entry
 * trampoline for x86-64 SysV.
 *
 * A switch is always an ordinary call, so only what the SysV ABI makes
 * callee-saved needs saving: rbx, rbp, r12-r15, the MXCSR control bits and
 * the x87 control word (a plugin may change rounding modes; the ABI says
 * they survive calls). The vector registers are caller-saved and need no
 * save here. Asynchronous preemption (a later layer) saves the full state
 * itself before it reaches this switch.
 *
 * Saved frame, from the saved sp upwards (keep in sync with
 * smarm__ctx_init in context.c):
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

	.section .note.GNU-stack,"",@progbits
