/* SPDX-License-Identifier: MIT */
/*
 * test_context.c - the raw context switch (arch/x86_64.S) driven without a
 * scheduler: hand-built initial frames (the layout documented in
 * x86_64.S), run-and-return, repeated resume, callee-saved registers,
 * MXCSR and x87 control words kept per context, two contexts on separate
 * stacks, and the frame smarm__ctx_init builds.
 */
#include "harness.h"

#include "arch/arch.h"
#include "core/sched.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CO_STACK (64 * 1024)

struct co {
	void *sp;   /* saved sp while switched out */
	void *base; /* mapping */
	int id;
	int steps;
};

static void *co_main_sp;      /* the test's own context */
static struct co *co_current; /* the context being started */

/* Map a stack with a guard page below it. */
static void *co_map(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *b = mmap(NULL, CO_STACK + pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(b, MAP_FAILED);
	ck_assert_int_eq(mprotect(b, pg, PROT_NONE), 0);
	return b;
}

/*
 * The initial frame, from the saved sp upwards (x86_64.S): x87 CW, MXCSR,
 * r15, r14, r13, r12, rbx, rbp, return address; above it a zero "caller".
 */
static void *co_frame(void *top, void (*entry)(void))
{
	uint64_t *w = (uint64_t *)((uintptr_t)top & ~(uintptr_t)15);
	w[-1] = 0;
	w[-2] = (uint64_t)(uintptr_t)entry;
	for (int i = 3; i <= 8; i++)
		w[-i] = 0;
	w[-9] = 0x1f80;	 /* MXCSR default */
	w[-10] = 0x037f; /* x87 CW default */
	return &w[-10];
}

static void co_start(struct co *c, int id, void (*entry)(void))
{
	memset(c, 0, sizeof *c);
	c->id = id;
	c->base = co_map();
	c->sp = co_frame((char *)c->base + sysconf(_SC_PAGESIZE) + CO_STACK,
			 entry);
}

static void co_resume(struct co *c)
{
	co_current = c;
	smarm__ctx_switch(&co_main_sp, c->sp);
}

/* Coroutine side: back to the test. */
static void co_yield_to_main(struct co *c)
{
	smarm__ctx_switch(&c->sp, co_main_sp);
}

/* ------------------------------------------------------ run and return */

static __attribute__((noreturn)) void co_entry_steps(void)
{
	struct co *me = co_current;
	for (;;) {
		me->steps++;
		co_yield_to_main(me);
	}
}

START_TEST(test_context_switch_runs_and_returns)
{
	struct co c;
	co_start(&c, 1, co_entry_steps);
	ck_assert_int_eq(c.steps, 0);
	co_resume(&c);
	ck_assert_int_eq(c.steps, 1);
}
END_TEST

START_TEST(test_context_switch_yield_resume_twice)
{
	struct co c;
	co_start(&c, 1, co_entry_steps);
	co_resume(&c);
	ck_assert_int_eq(c.steps, 1);
	co_resume(&c);
	ck_assert_int_eq(c.steps, 2);
	co_resume(&c);
	ck_assert_int_eq(c.steps, 3);
}
END_TEST

/* ------------------------------------------------ entry stack alignment */

static uintptr_t co_entry_rsp, co_entry_aligned_local;

static __attribute__((noinline)) void co_probe_alignment(void)
{
	/* 16 is the ABI alignment: the compiler does not realign for it, so
	 * this address is only 16-aligned if the entry frame was right. */
	volatile char _Alignas(16) probe[16];
	probe[0] = 1;
	co_entry_aligned_local = (uintptr_t)probe;
}

static __attribute__((noreturn)) void co_entry_align(void)
{
	struct co *me = co_current;
	uintptr_t sp;
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	co_entry_rsp = sp;
	co_probe_alignment();
	for (;;)
		co_yield_to_main(me);
}

START_TEST(test_context_entry_stack_is_aligned_and_on_new_stack)
{
	struct co c;
	uintptr_t lo, hi;
	co_start(&c, 1, co_entry_align);
	co_resume(&c);
	lo = (uintptr_t)c.base + (uintptr_t)sysconf(_SC_PAGESIZE);
	hi = lo + CO_STACK;
	ck_assert_uint_gt(co_entry_rsp, lo);
	ck_assert_uint_lt(co_entry_rsp, hi);
	ck_assert_uint_eq(co_entry_aligned_local % 16, 0);
	ck_assert_uint_gt(co_entry_aligned_local, lo);
	ck_assert_uint_lt(co_entry_aligned_local, hi);
}
END_TEST

/* ----------------------------------------------- callee-saved registers */

struct co_regs {
	uint64_t rbx, r12, r13, r14, r15;
};

/*
 * Load rbx and r12-r15 from *in, switch (save into *save, resume load),
 * and once switched back store those registers into *out. The red zone
 * is skipped and `out` is kept on the stack across the switch.
 */
static __attribute__((noinline)) void co_switch_regs(void **save, void *load,
						     const struct co_regs *in,
						     struct co_regs *out)
{
	__asm__ volatile("sub $128, %%rsp\n\t"
			 "push %[out]\n\t"
			 "mov 0(%[in]), %%rbx\n\t"
			 "mov 8(%[in]), %%r12\n\t"
			 "mov 16(%[in]), %%r13\n\t"
			 "mov 24(%[in]), %%r14\n\t"
			 "mov 32(%[in]), %%r15\n\t"
			 "call smarm__ctx_switch\n\t"
			 "pop %%rax\n\t"
			 "mov %%rbx, 0(%%rax)\n\t"
			 "mov %%r12, 8(%%rax)\n\t"
			 "mov %%r13, 16(%%rax)\n\t"
			 "mov %%r14, 24(%%rax)\n\t"
			 "mov %%r15, 32(%%rax)\n\t"
			 "add $128, %%rsp\n\t"
			 : "+D"(save),
			   "+S"(load), [in] "+c"(in), [out] "+d"(out)
			 :
			 : "rax", "r8", "r9", "r10", "r11", "rbx", "r12", "r13",
			   "r14", "r15", "memory", "cc");
}

static const struct co_regs co_A = {
	0x1111111111111111ull, 0x2222222222222222ull, 0x3333333333333333ull,
	0x4444444444444444ull, 0x5555555555555555ull
};
static const struct co_regs co_B = {
	0xa1a1a1a1a1a1a1a1ull, 0xb2b2b2b2b2b2b2b2ull, 0xc3c3c3c3c3c3c3c3ull,
	0xd4d4d4d4d4d4d4d4ull, 0xe5e5e5e5e5e5e5e5ull
};
static const struct co_regs co_C = {
	0x0101010101010101ull, 0x0202020202020202ull, 0x0303030303030303ull,
	0x0404040404040404ull, 0x0505050505050505ull
};
static const struct co_regs co_D = {
	0xdeadbeefdeadbeefull, 0xfeedfacefeedfaceull, 0xcafebabecafebabeull,
	0x0badf00d0badf00dull, 0x8badf00d8badf00dull
};
static struct co_regs co_seen_by_co;

static __attribute__((noreturn)) void co_entry_regs(void)
{
	struct co *me = co_current;
	struct co_regs tmp;
	/* set B, go to main (which sets C and comes back): B must survive */
	co_switch_regs(&me->sp, co_main_sp, &co_B, &co_seen_by_co);
	for (;;)
		co_switch_regs(&me->sp, co_main_sp, &co_D, &tmp);
}

static void co_assert_regs(const struct co_regs *got,
			   const struct co_regs *want)
{
	ck_assert_uint_eq(got->rbx, want->rbx);
	ck_assert_uint_eq(got->r12, want->r12);
	ck_assert_uint_eq(got->r13, want->r13);
	ck_assert_uint_eq(got->r14, want->r14);
	ck_assert_uint_eq(got->r15, want->r15);
}

START_TEST(test_context_callee_saved_registers_survive_round_trip)
{
	struct co c;
	struct co_regs got1, got2;
	co_start(&c, 1, co_entry_regs);
	co_current = &c;
	/* main holds A; the coroutine loads B before switching back */
	co_switch_regs(&co_main_sp, c.sp, &co_A, &got1);
	co_assert_regs(&got1, &co_A);
	/* main holds C; the coroutine resumes and must see its B */
	co_switch_regs(&co_main_sp, c.sp, &co_C, &got2);
	co_assert_regs(&got2, &co_C);
	co_assert_regs(&co_seen_by_co, &co_B);
}
END_TEST

/* ------------------------------------------------- MXCSR and x87 control */

static uint32_t co_get_mxcsr(void)
{
	uint32_t v;
	__asm__ volatile("stmxcsr %0" : "=m"(v));
	return v;
}

static void co_set_mxcsr(uint32_t v)
{
	__asm__ volatile("ldmxcsr %0" : : "m"(v));
}

static uint16_t co_get_fpcw(void)
{
	uint16_t v;
	__asm__ volatile("fnstcw %0" : "=m"(v));
	return v;
}

static void co_set_fpcw(uint16_t v)
{
	__asm__ volatile("fldcw %0" : : "m"(v));
}

#define MXCSR_RC_MASK 0x6000u
#define MXCSR_RC_ZERO 0x6000u
#define MXCSR_RC_DOWN 0x2000u
#define FPCW_RC_MASK 0x0c00u
#define FPCW_RC_ZERO 0x0c00u
#define FPCW_RC_UP 0x0800u

static uint32_t co_fresh_mxcsr, co_mxcsr_after_resume;
static uint16_t co_fresh_fpcw, co_fpcw_after_resume;

static __attribute__((noreturn)) void co_entry_fp(void)
{
	struct co *me = co_current;
	co_fresh_mxcsr = co_get_mxcsr();
	co_fresh_fpcw = co_get_fpcw();
	co_set_mxcsr((co_fresh_mxcsr & ~MXCSR_RC_MASK) | MXCSR_RC_ZERO);
	co_set_fpcw((uint16_t)((co_fresh_fpcw & ~FPCW_RC_MASK) | FPCW_RC_ZERO));
	co_yield_to_main(me);
	co_mxcsr_after_resume = co_get_mxcsr();
	co_fpcw_after_resume = co_get_fpcw();
	for (;;)
		co_yield_to_main(me);
}

START_TEST(test_context_mxcsr_and_fpcw_do_not_leak_between_contexts)
{
	struct co c;
	uint32_t main_mx = co_get_mxcsr();
	uint16_t main_cw = co_get_fpcw();
	uint32_t mine_mx = (main_mx & ~MXCSR_RC_MASK) | MXCSR_RC_DOWN;
	uint16_t mine_cw = (uint16_t)((main_cw & ~FPCW_RC_MASK) | FPCW_RC_UP);

	co_start(&c, 1, co_entry_fp);
	co_resume(&c);
	/* a fresh frame starts from the SysV defaults */
	ck_assert_uint_eq(co_fresh_mxcsr & 0xffc0u, 0x1f80u);
	ck_assert_uint_eq(co_fresh_fpcw, 0x037fu);
	/* the coroutine's round-to-zero did not leak into this context */
	ck_assert_uint_eq(co_get_mxcsr() & MXCSR_RC_MASK,
			  main_mx & MXCSR_RC_MASK);
	ck_assert_uint_eq(co_get_fpcw() & FPCW_RC_MASK, main_cw & FPCW_RC_MASK);

	co_set_mxcsr(mine_mx);
	co_set_fpcw(mine_cw);
	co_resume(&c);
	/* nor did ours into the coroutine */
	ck_assert_uint_eq(co_mxcsr_after_resume & MXCSR_RC_MASK, MXCSR_RC_ZERO);
	ck_assert_uint_eq(co_fpcw_after_resume & FPCW_RC_MASK, FPCW_RC_ZERO);
	ck_assert_uint_eq(co_get_mxcsr() & MXCSR_RC_MASK, MXCSR_RC_DOWN);
	ck_assert_uint_eq(co_get_fpcw() & FPCW_RC_MASK, FPCW_RC_UP);
	co_set_mxcsr(main_mx);
	co_set_fpcw(main_cw);
}
END_TEST

/* --------------------------------------------- two contexts, two stacks */

#define CO_WORDS 2000
#define CO_ROUNDS 200

static int co_corrupt[3];

static __attribute__((noreturn)) void co_entry_pattern(void)
{
	struct co *me = co_current;
	volatile uint64_t buf[CO_WORDS];
	uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)me->id;
	for (int i = 0; i < CO_WORDS; i++)
		buf[i] = seed ^ (uint64_t)i;
	for (;;) {
		me->steps++;
		co_yield_to_main(me);
		for (int i = 0; i < CO_WORDS; i++)
			if (buf[i] != (seed ^ (uint64_t)i))
				co_corrupt[me->id]++;
	}
}

START_TEST(test_context_two_stacks_do_not_corrupt_each_other)
{
	struct co a, b;
	volatile uint64_t mine[64];
	for (int i = 0; i < 64; i++)
		mine[i] = (uint64_t)i * 7;
	co_corrupt[1] = co_corrupt[2] = 0;
	co_start(&a, 1, co_entry_pattern);
	co_start(&b, 2, co_entry_pattern);
	for (int r = 0; r < CO_ROUNDS; r++) {
		co_resume(&a);
		co_resume(&b);
		if (r % 3 == 0)
			co_resume(&a); /* uneven interleaving */
	}
	ck_assert_int_eq(co_corrupt[1], 0);
	ck_assert_int_eq(co_corrupt[2], 0);
	ck_assert_int_eq(a.steps, CO_ROUNDS + (CO_ROUNDS + 2) / 3);
	ck_assert_int_eq(b.steps, CO_ROUNDS);
	for (int i = 0; i < 64; i++)
		ck_assert_uint_eq(mine[i], (uint64_t)i * 7);
}
END_TEST

/* ------------------------------------------------------ smarm__ctx_init */

START_TEST(test_context_ctx_init_builds_documented_frame)
{
	char *base = co_map();
	char *top = base + sysconf(_SC_PAGESIZE) + CO_STACK;
	int marker;
	for (int skew = 0; skew < 16; skew += 5) {
		char *t = top - skew;
		uintptr_t at = (uintptr_t)t & ~(uintptr_t)15;
		uint64_t *sp = smarm__ctx_init(t, &marker);
		ck_assert_uint_eq((uintptr_t)sp, at - 80);
		ck_assert_uint_eq(sp[0] & 0xffffu, 0x037fu);	 /* x87 CW */
		ck_assert_uint_eq(sp[1] & 0xffffffffu, 0x1f80u); /* MXCSR */
		ck_assert_uint_eq(sp[5],
				  (uint64_t)(uintptr_t)&marker); /* r12 */
		ck_assert_uint_eq(sp[6], 0);			 /* rbx */
		ck_assert_uint_eq(sp[7], 0); /* rbp: ends frame chains */
		ck_assert_uint_eq(sp[8], (uint64_t)(uintptr_t)smarm__ctx_entry);
		ck_assert_uint_eq(sp[9], 0); /* fake caller */
		/* the ret slot is 16-aligned: rsp % 16 == 8 at entry */
		ck_assert_uint_eq(((uintptr_t)&sp[8]) % 16, 0);
	}
}
END_TEST

static __attribute__((noreturn)) void co_entry_from_init(void)
{
	struct co *me = co_current;
	me->steps = 42;
	for (;;)
		co_yield_to_main(me);
}

START_TEST(test_context_ctx_init_frame_is_resumable)
{
	struct co c;
	uint64_t *sp;
	memset(&c, 0, sizeof c);
	c.base = co_map();
	sp = smarm__ctx_init((char *)c.base + sysconf(_SC_PAGESIZE) + CO_STACK,
			     &c);
	sp[8] = (uint64_t)(uintptr_t)co_entry_from_init; /* our own entry */
	c.sp = sp;
	co_resume(&c);
	ck_assert_int_eq(c.steps, 42);
	co_resume(&c);
	ck_assert_int_eq(c.steps, 42);
}
END_TEST

Suite *smarm_test_context_suite(void)
{
	Suite *s = suite_create("context");
	TCase *tc = tcase_create("switch");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_context_switch_runs_and_returns);
	tcase_add_test(tc, test_context_switch_yield_resume_twice);
	tcase_add_test(tc,
		       test_context_entry_stack_is_aligned_and_on_new_stack);
	tcase_add_test(tc,
		       test_context_callee_saved_registers_survive_round_trip);
	tcase_add_test(
		tc, test_context_mxcsr_and_fpcw_do_not_leak_between_contexts);
	tcase_add_test(tc, test_context_two_stacks_do_not_corrupt_each_other);
	suite_add_tcase(s, tc);

	tc = tcase_create("init");
	tcase_add_test(tc, test_context_ctx_init_builds_documented_frame);
	tcase_add_test(tc, test_context_ctx_init_frame_is_resumable);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(context)
