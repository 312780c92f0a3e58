/* SPDX-License-Identifier: MIT */
/*
 * arch.h - the only door to CPU- and OS-specific code: context switch,
 * register-saving thunks, the preemption trampolines and the
 * signal-context accessors and
 * unwinder that feed them, cycle counter, futex, monotonic clock, page size,
 * alternate signal stacks, and the sanitizer fiber annotations that let ASan
 * follow stack switches. The CPU half is x86_64.S, x86_64.c and the inline
 * helpers below; the OS half is linux.c. A port to another CPU replaces the CPU
 * half and needs no change elsewhere in libsmarm/.
 *
 * Ownership: stateless helpers, apart from the trampoline's save-area
 * size that smarm__cpu_probe records once and the guard-region probe's
 * answer (linux.c, once per process); callers own every buffer passed
 * in.
 * Invariants: INV-1 smarm__ctx_switch is an opaque call, so the compiler
 * never keeps a TLS address or a callee-saved value across it in a way
 * the switch does not restore.
 * See: docs/architecture/layers.md, docs/architecture/context-switch.md.
 */
#ifndef SMARM_ARCH_H
#define SMARM_ARCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#if !defined(__x86_64__) || !defined(__linux__)
#error "libsmarm currently supports x86-64 Linux only"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define SMARM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SMARM_ASAN 1
#endif
#endif

/* Save the current context into *save_sp and resume the one at load_sp. */
void smarm__ctx_switch(void **save_sp, void *load_sp);

/* The entry trampoline an initial frame returns into. */
void smarm__ctx_entry(void);

/* Call fn(arg) with the runtime's leftover register values cleared, then
 * smarm__actor_ended(); *frame gets the stack pointer fn is called with
 * (x86_64.S). */
void smarm__call_actor(void (*fn)(void *), void *arg, uintptr_t *frame)
	__attribute__((noreturn));
void smarm__actor_ended(void) __attribute__((noreturn));

/*
 * Register-saving thunks (x86_64.S): SMARM__THUNKS distinct function
 * addresses that all land in smarm__thunk_handler(i, regs, stack): i the
 * thunk's index, regs the caller's argument registers as they were at
 * the call, stack its first stack-passed argument (SysV: eightbytes, in
 * order). What the handler returns is the thunk's return value (rax).
 * The handler is set once, before any thunk address is handed out; its
 * caller must know each thunk's C type to read the arguments.
 */
#define SMARM__THUNKS 1024
#define SMARM__THUNK_SIZE 16
struct smarm__thunk_regs {
	uint64_t gpr[6]; /* rdi, rsi, rdx, rcx, r8, r9 */
	uint64_t xmm[8]; /* the low eightbyte of xmm0..xmm7 */
};
typedef uint64_t (*smarm__thunk_fn)(uint32_t i,
				    const struct smarm__thunk_regs *regs,
				    const uint64_t *stack);
extern smarm__thunk_fn smarm__thunk_handler;
extern const char smarm__thunks[];

/* Thunk i's address, as a function pointer (i < SMARM__THUNKS). */
static inline void (*smarm__thunk_addr(uint32_t i))(void)
{
	return (void (*)(void))(void *)(smarm__thunks +
					(size_t)i * SMARM__THUNK_SIZE);
}

/*
 * Build the initial frame of a fresh stack whose highest usable byte is
 * below `top`; the first switch to the returned sp calls
 * smarm__actor_main(arg) with a conforming stack.
 */
void *smarm__ctx_init(void *top, void *arg);

/*
 * Asynchronous preemption: the SIGURG handler in core/preempt.c decides
 * whether to preempt; the arch code reads and rewrites the interrupted
 * context and provides the trampoline (smarm__preempt_tramp) that saves
 * the full machine state and calls smarm__preempt_resume() as plain C.
 */

/* Size the trampoline's save area for this CPU: once, before any signal. */
void smarm__cpu_probe(void);

/*
 * Stack bytes the trampoline takes below an interrupted sp (red zone
 * included); valid after smarm__cpu_probe. Async-signal-safe.
 */
size_t smarm__preempt_frame_size(void);

/* The pc and sp of an interrupted context (a handler's ucontext_t *). */
uintptr_t smarm__uc_pc(const void *uc);
uintptr_t smarm__uc_sp(const void *uc);

/*
 * Make the interrupted context `uc` resume in smarm__preempt_tramp, which
 * goes back to the interrupted pc and sp when smarm__preempt_resume
 * returns. Writes below the interrupted sp: the caller checked that
 * smarm__preempt_frame_size() bytes are free there. Async-signal-safe.
 */
void smarm__uc_divert(void *uc);

/* Where a diverted context resumes; only smarm__uc_divert aims at it. */
void smarm__preempt_tramp(void);

/*
 * Make the interrupted context `uc` resume as a call of fn(a0, a1, a2, a3)
 * with its stack top just below `at` (aligned as at a call, a return
 * address of 0 so that unwinders and debuggers stop there), never to
 * return: a contained fault (core/fault.c). The interrupted frames are
 * left as they are. Async-signal-safe.
 */
void smarm__uc_fault_divert(void *uc, uintptr_t at,
			    void (*fn)(int, int, uintptr_t, uintptr_t), int a0,
			    int a1, uintptr_t a2, uintptr_t a3);

/*
 * Is the interrupted context asleep in a system call? Its pc is on one
 * the kernel rewound to restart (SA_RESTART), or just past one that our
 * signal ended with EINTR. Just past one with any other result the call
 * had finished on its own (pending signals are often delivered at a
 * syscall's exit): a loop of quick calls, such as stdio's writes, is in
 * libc text, not asleep. Unreadable text answers false.
 * Async-signal-safe.
 */
bool smarm__uc_asleep_in_syscall(const void *uc);

/*
 * Return-path preemption: a frame of an interrupted context (pc, sp, the
 * frame register) and, once unwound, the stack slot that holds the
 * address it returns to.
 */
struct smarm__frame {
	uintptr_t pc;
	uintptr_t sp;
	uintptr_t bp;
	uintptr_t *ra_slot; /* after a step: where the caller's pc is kept */
	uintptr_t fn;	    /* after a step: the start of the function left */
	bool first;	    /* pc is the interrupted one, not a return */
};

/* The innermost frame of an interrupted context. Async-signal-safe. */
void smarm__uc_frame(const void *uc, struct smarm__frame *f);

/*
 * Unwind f by one frame with the call-frame information of the object
 * whose .eh_frame_hdr is eh_frame_hdr (the object must hold f->pc and
 * stay mapped): f becomes its caller, f->ra_slot the stack word that held
 * the new f->pc. Reads the stack only inside [stk_lo, stk_hi). False if
 * the rules for f->pc are missing or not understood (then f is
 * unchanged). Async-signal-safe: no allocation, no lock, no call out.
 */
bool smarm__unwind_step(const void *eh_frame_hdr, struct smarm__frame *f,
			uintptr_t stk_lo, uintptr_t stk_hi);

/*
 * Where a patched return lands: smarm__preempt_tramp's twin for a
 * context stopped at a return into preemptible code. It saves the full
 * machine state and calls smarm__preempt_ret_resume(pc_slot), which
 * must store the real return address at *pc_slot (INV-3 layout).
 */
void smarm__preempt_ret_stub(void);

/* Is control-flow enforcement (a shadow stack) on for this thread? A
 * patched return would fault under it. */
bool smarm__shadow_stack_on(void);

/*
 * The calling thread's thread pointer: the address of its TCB, which
 * the %fs base points at and whose first word holds that same address
 * (x86-64 TLS variant II: the static TLS blocks lie just below it).
 */
static inline uintptr_t smarm__thread_pointer(void)
{
	uintptr_t tp;
	__asm__ volatile("movq %%fs:0, %0" : "=r"(tp));
	return tp;
}

static inline uint64_t smarm__cycles(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

/* Unordered cycle count: cheaper, fine for timeslice accounting. */
static inline uint64_t smarm__cycles_fast(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * Evict the cache lines of [p, p + n) from every cache (written back if
 * dirty; the bytes stay as they are): CLFLUSHOPT where the CPU has it,
 * else CLFLUSH. For memory another CPU is about to write again, so that
 * its write finds no copy to take back from this one (core/trace.c).
 */
void smarm__lines_evict(const void *p, size_t n);

static inline void smarm__cpu_relax(void)
{
	__asm__ volatile("pause" ::: "memory");
}

/*
 * Write the 8-byte word at p (8-aligned) without changing it: a locked
 * add of zero. Its page is faulted in and written as by a store, and
 * other threads may read or write the word meanwhile: the add is atomic
 * with respect to their accesses, and it stores back what it read. For
 * pages a lock holder is about to write for the first time (the run
 * queue's, core/sched.c), so that it does not take that cost with the
 * lock held.
 */
static inline void smarm__page_touch(void *p)
{
	__asm__ volatile("lock addq $0, %0" : "+m"(*(uint64_t *)p)::"memory");
}

uint64_t smarm__clock_ns(void);
/* CPU time the calling thread has used, ns (a system call: about 1 us
 * in a VM; the causal profiler's site clock, rate-limited). */
uint64_t smarm__thread_cpu_ns(void);
size_t smarm__page_size(void);
int smarm__online_cpus(void);

/*
 * A timer on the calling thread's CPU clock that sends it signal sig
 * every period_ns of CPU time (the causal profiler's samples). Two
 * kinds, the first that can be made: a perf task-clock event of the
 * thread (an hrtimer: the signal comes at the period, on time), or a
 * POSIX CPU-time timer (checked at the kernel's tick: at HZ=250 one
 * signal in 4 ms stands for 4 periods, si_overrun + 1). 0 and *t, or -1
 * (errno). smarm__cpu_timer_hit says whether a signal is t's and how
 * many periods it stands for (0: not t's; async-signal-safe).
 * smarm__cpu_timer_stop deletes t; a signal already sent may still
 * arrive after it returns.
 */
struct smarm__cpu_timer {
	int ct_fd;	  /* the perf event, or -1 */
	timer_t ct_timer; /* else the POSIX timer */
	const void *ct_mark;
};
int smarm__cpu_timer_start(int sig, const void *mark, uint64_t period_ns,
			   struct smarm__cpu_timer *t);
uint32_t smarm__cpu_timer_hit(const struct smarm__cpu_timer *t,
			      const siginfo_t *si);
void smarm__cpu_timer_stop(struct smarm__cpu_timer *t);

/* Name the calling thread "smarm-<what>", or "smarm-<what><id>" for id
 * >= 0 (for top -H, gdb, perf and the tests' per-thread accounting;
 * cut to the kernel's 15 bytes). */
void smarm__thread_name(const char *what, int id);

/* futex on a private 32-bit word; rel_ns 0 waits forever. */
void smarm__futex_wait(uint32_t *word, uint32_t expect, uint64_t rel_ns);
void smarm__futex_wake(uint32_t *word, int count);

/* The bounds of the calling OS thread's own stack (for ASan). */
void smarm__thread_stack(void **bottom, size_t *size);

/* A thread's alternate signal stack for the span of a run. */
struct smarm__altstack {
	void *mem; /* NULL: none installed */
	stack_t prev;
	bool had_prev;
};
void smarm__altstack_enter(struct smarm__altstack *a);
void smarm__altstack_leave(struct smarm__altstack *a);

/* vm.max_map_count, or `fallback` when it cannot be read. */
long smarm__max_map_count(long fallback);

/*
 * Guard regions (Linux 6.13, MADV_GUARD_INSTALL): pages of an existing
 * mapping that fault (SIGSEGV, SEGV_MAPERR at the address touched) on
 * any access, without a mapping of their own. They survive
 * MADV_DONTNEED and MADV_FREE and are copied by fork. How this process
 * can install them, probed once per process by the first call (each way
 * is tried, and a guard it installs must be unreadable):
 */
enum {
	SMARM__GUARDS_NONE = 0,	   /* not at all (older kernel, emulator) */
	SMARM__GUARDS_MADVISE = 1, /* madvise, one call per guard */
	SMARM__GUARDS_BATCH = 2,   /* process_madvise, many per call */
};
int smarm__guards_probe(void);

/*
 * Install n guard regions of len bytes each, the first at `first`, one
 * every `stride` bytes, the way `how` (not NONE) says; a batch that the
 * kernel takes only in part is redone one guard at a time. Returns 0, or
 * -1 when some guard could not be installed.
 */
int smarm__guards_install(int how, char *first, size_t len, size_t stride,
			  uint32_t n);

/*
 * Copy n bytes of this process's memory at addr into out, or return false
 * if any is unreadable; never faults. Async-signal-safe.
 */
bool smarm__peek(uintptr_t addr, void *out, size_t n);

/*
 * The file mapped at addr (this process's memory map, as the kernel
 * reports it): its path into name, cut to cap bytes with its NUL, and
 * addr's offset in that file into *off. False when no file maps addr
 * or the map cannot be read. Takes no lock and allocates nothing (open,
 * read, close): async-signal-safe, unlike dladdr(3), whose loader lock
 * a faulting thread may hold.
 */
bool smarm__addr_file(uintptr_t addr, char *name, size_t cap, uintptr_t *off);

/*
 * Fiber annotations around a switch. `fake` is per-switch scratch; pass
 * dying=1 when the current stack is being left for good.
 */
#ifdef SMARM_ASAN
void __sanitizer_start_switch_fiber(void **fake, const void *bottom,
				    size_t size);
void __sanitizer_finish_switch_fiber(void *fake, const void **bottom_old,
				     size_t *size_old);
#define SMARM_FIBER_START(fakep, dying, bottom, size)                          \
	__sanitizer_start_switch_fiber((dying) ? NULL : (fakep), (bottom),     \
				       (size))
#define SMARM_FIBER_FINISH(fake)                                               \
	__sanitizer_finish_switch_fiber((fake), NULL, NULL)
void __asan_unpoison_memory_region(const volatile void *addr, size_t size);
/*
 * An actor that ends never returns through its frames, so their redzones
 * stay poisoned in the shadow; a stack must be unpoisoned before reuse.
 */
#define SMARM_STACK_UNPOISON(addr, size)                                       \
	__asan_unpoison_memory_region((addr), (size))
#else
#define SMARM_STACK_UNPOISON(addr, size) ((void)(addr), (void)(size))
#define SMARM_FIBER_START(fakep, dying, bottom, size)                          \
	((void)(fakep), (void)(dying))
#define SMARM_FIBER_FINISH(fake) ((void)(fake))
#endif

#endif /* SMARM_ARCH_H */
