/* SPDX-License-Identifier: MIT */
/*
 * fault.c - contained faults (SMARM_OPT_CONTAIN_FAULTS): a synchronous
 * SIGSEGV, SIGBUS, SIGFPE or SIGILL in an actor's own code ends that
 * actor, SMARM_EXIT_FAULT with the signal as its reason, instead of the
 * process.
 *
 * The one fault handler (stackdiag.c) asks smarm__fault_contain first.
 * A fault is contained when all of these hold; otherwise the handler's
 * fatal report says which one failed:
 *   - the kernel raised it for the faulting instruction (si_code > 0),
 *     not kill(2), raise(3) or sigqueue(3); or, where the actor asked for
 *     that too (SMARM__CONTAIN_ABORT), it is the SIGABRT of abort() the
 *     actor's own code called: sent by this process to this thread
 *     (SI_TKILL), from libc frames alone above the actor's code
 *     (smarm__called_by_actors unwinds them). glibc's abort() has let
 *     go of its lock when it raises, as it must for a handler that
 *     longjmps away, so nothing of libc's stays held;
 *   - an actor runs on this thread and asked for containment (its
 *     tenant's `contain`, from the spawn option or the node's default);
 *   - the interrupted sp lies in that actor's stack or its guard: the
 *     fault is the actor's, not a worker's own code;
 *   - the pc lies in the actor's own code, as preemption defines it
 *     (smarm__text_is_actors: the host executable, plugins and objects
 *     allowed with smarm_preempt_allow_object), never libc, the loader,
 *     libffi or libsmarm, which hold locks and thread state a contained
 *     fault would leave behind;
 *   - no smarm_preempt_disable region is open, and the runtime is not
 *     calling the actor's code from inside an operation (its
 *     smarm__nopreempt_enter brackets: it may hold a lock there);
 *   - the actor holds no smarm mutex (it would stay held for ever);
 *   - the signal mask is the worker's (as preemption requires): another
 *     means a signal handler of the host was running, or the actor
 *     changed its mask, which its exit would carry to the next actors;
 *   - the actor has not begun its exit hooks.
 * Then the handler rewrites the interrupted context so that it calls
 * smarm__fault_exit on the actor's own stack (arch.h,
 * smarm__uc_fault_divert) and returns; sigreturn restores the signal
 * mask, and the actor goes on in ordinary context. The new frame goes
 * below the faulting frame, past its red zone, when FAULT_ROOM fits
 * there; otherwise (a stack overflow, or nearly) it goes FAULT_ROOM
 * above the guard, over the deepest frames of the code that ran away,
 * when the stack has at least as much again above that (the default
 * reserve has): the actor's first frames, the runtime's and a
 * behaviour's engine, lie within its top few KiB, far above. smarm__fault_exit
 * reports the fault (dladdr is safe there: the pc was not in the loader) and
 * ends the actor as a crash would: its cleanup handlers run (a server answers
 * its callers), then its exit hooks (monitors, links, names, its supervisor).
 *
 * What cannot be undone: the frames between the fault and the actor's
 * first frame are abandoned, never unwound (no C cleanup attribute, no
 * destructor, no pthread cleanup handler runs); memory they allocated
 * leaks, and locks they took that are not smarm's stay taken; memory the
 * actor shared may have been corrupted by what it did before it faulted.
 *
 * A contained fault taints the object its pc lies in: tainted[] counts
 * the faults per object (its load base), for smarm_plugin_faults and the
 * observer; the count outlives the object (a reload at the same base
 * counts on).
 *
 * Ownership: the handler writes the interrupted context and the stack
 * region the new frame will use; everything else is the actor's exit.
 * Locking: none in the handler (async-signal context); taint_lock
 * guards tainted[] (ordinary context only).
 * Invariants:
 *   INV-1 smarm__fault_contain is async-signal-safe: it reads the
 *         actor's slot (stable while the actor is on this thread), the
 *         preemption range table (its reader protocol), and writes only
 *         the context and the actor's own stack.
 *   INV-2 smarm__fault_exit never returns: the abandoned frames are
 *         never resumed.
 * See: docs/embedding.md (Faults), docs/architecture/stacks.md.
 */
#include "fault.h"

#include "actor.h"
#include "log.h"
#include "node.h"
#include "preempt.h"
#include "sched.h"
#include "slot.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

/* Stack the exit of a faulted actor may use, report included. */
#if defined(SMARM_ASAN)
#define FAULT_ROOM ((uintptr_t)32 * 1024)
#else
#define FAULT_ROOM ((uintptr_t)24 * 1024)
#endif
/* Below the faulting sp: the SysV red zone and some slack. */
#define FAULT_DROP ((uintptr_t)256)

bool smarm__fault_contain(const siginfo_t *si, void *uc, const char **why)
{
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm__slot *s = w != NULL ? w->cur : NULL;
	uintptr_t pc = smarm__uc_pc(uc);
	uintptr_t sp = smarm__uc_sp(uc);
	uintptr_t base, usable, top, at;

	bool aborted = si->si_signo == SIGABRT;
	*why = NULL;
	if (s == NULL || !s->contain)
		return false; /* not asked for */
	if (aborted ? s->contain < SMARM__CONTAIN_ABORT ||
			      si->si_code != SI_TKILL || si->si_pid != getpid()
		    : si->si_code <= 0)
		return false; /* not a fault, not an abort() asked for */
	base = (uintptr_t)s->stk_base;
	usable = base + s->stk_guard;
	top = usable + s->stk_reserve;
	if (base == 0 || sp < base || sp >= top)
		*why = "the fault was not on the actor's stack";
	else if (s->exiting == SMARM__EXITING_ENDED)
		*why = "the actor was ending";
	else if (s->rt_nopreempt != 0)
		*why = "the runtime was calling the actor's code from inside "
		       "an operation";
	else if (s->nopreempt != 0)
		*why = "a smarm_preempt_disable region was open";
	else if (s->mtx_held != 0)
		*why = "the actor held a smarm mutex";
	else if (!smarm__uc_mask_is_workers(w, uc))
		*why = "the signal mask was not the worker's (in a signal "
		       "handler, or changed by the actor)";
	else if (aborted && !smarm__called_by_actors(s, uc, top, &pc))
		*why = "abort() was not called by the actor's own code";
	else if (!aborted && !smarm__text_is_actors(pc))
		*why = "the code was not the actor's own (libc, the loader, "
		       "libffi, libsmarm, or an object not allowed with "
		       "smarm_preempt_allow_object)";
	if (*why != NULL)
		return false;
	if (sp >= usable + FAULT_ROOM + FAULT_DROP) {
		at = sp - FAULT_DROP;
	} else if (usable + 2 * FAULT_ROOM <= top) {
		at = usable + FAULT_ROOM; /* over the runaway frames */
	} else {
		*why = "its stack overflowed and is too small to run its exit "
		       "(raise SMARM_OPT_STACK_RESERVE)";
		return false;
	}
	/* Frames abandoned there keep their redzones poisoned. */
	SMARM_STACK_UNPOISON((void *)(at - FAULT_ROOM), FAULT_ROOM);
	smarm__uc_fault_divert(uc, at, smarm__fault_exit, si->si_signo,
			       si->si_code, (uintptr_t)si->si_addr, pc);
	return true;
}

/* Objects whose code faulted, by load base; the first TAINT_MAX. */
#define TAINT_MAX 64
static struct {
	uintptr_t base;
	uint64_t faults;
} tainted[TAINT_MAX];
static pthread_mutex_t taint_lock = PTHREAD_MUTEX_INITIALIZER;

/* Count a fault of the object holding pc (ordinary context). */
static void taint(uintptr_t pc)
{
	Dl_info di;
	uintptr_t base;
	if (dladdr((void *)pc, &di) == 0 || di.dli_fbase == NULL)
		return;
	base = (uintptr_t)di.dli_fbase;
	pthread_mutex_lock(&taint_lock);
	for (int i = 0; i < TAINT_MAX; i++) {
		if (tainted[i].base == 0)
			tainted[i].base = base;
		if (tainted[i].base == base) {
			tainted[i].faults++;
			break;
		}
	}
	pthread_mutex_unlock(&taint_lock);
}

uint64_t smarm__fault_count_of(const void *addr)
{
	Dl_info di;
	uint64_t n = 0;
	if (addr == NULL || dladdr(addr, &di) == 0 || di.dli_fbase == NULL)
		return 0;
	pthread_mutex_lock(&taint_lock);
	for (int i = 0; i < TAINT_MAX && tainted[i].base != 0; i++)
		if (tainted[i].base == (uintptr_t)di.dli_fbase)
			n = tainted[i].faults;
	pthread_mutex_unlock(&taint_lock);
	return n;
}

void smarm__fault_exit(int sig, int code, uintptr_t addr, uintptr_t pc)
{
	struct smarm__slot *s = smarm__current();
	struct smarm_node *n = smarm__worker()->node;
	/* A patched libc return (preempt.c INV-P5) in an abandoned frame. */
	s->ret_pc = 0;
	s->ret_slot = NULL;
	atomic_fetch_add_explicit(&n->faults_contained, 1,
				  memory_order_relaxed);
	taint(pc);
	smarm__log_fault(n, s, sig, code, addr, pc);
	smarm__terminate(s, SMARM_EXIT_FAULT, sig);
}

void smarm__self_mutex_held(int delta)
{
	struct smarm__slot *me = smarm__current();
	if (me == NULL)
		return;
	if (delta > 0 && me->mtx_held < SMARM__MTX_HELD_MAX)
		me->mtx_held++;
	else if (delta < 0 && me->mtx_held > 0 &&
		 me->mtx_held < SMARM__MTX_HELD_MAX)
		me->mtx_held--; /* saturated: held for good, contain nothing */
}
