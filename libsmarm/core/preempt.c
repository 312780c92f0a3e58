/* SPDX-License-Identifier: MIT */
/*
 * preempt.c - asynchronous preemption: a monitor thread per run watches
 * the workers and signals (SIGURG) one whose actor has run a whole
 * timeslice without reaching a safe point; the handler has the arch code
 * (smarm__uc_divert, arch.h) reroute the actor into smarm__preempt_tramp
 * (arch/x86_64.S), which saves the full machine state and yields from
 * ordinary C code. This file holds the policy (when, and why not); reading
 * and rewriting the interrupted CPU context is the arch code's. The same
 * monitor thread runs the scheduler's wake-slot scan (smarm__slots_scan,
 * sched.c) while one worker is busy and another idle, so with several
 * workers it runs even when async preemption is off.
 *
 * Why a monitor and not a per-worker interval timer: arming a timer at
 * every switch costs a syscall per switch; the monitor reads one counter
 * per worker (run_seq, bumped at each switch, odd while an actor runs) and
 * costs the switch path one plain store.
 *
 * When the handler may preempt (all must hold, otherwise it sets the
 * actor's preempt_pending flag, honoured at the next safe point):
 *   - the signal is ours (SI_QUEUE from this process, carrying the
 *     monitor's mark) and still current (the worker's run_seq is the one
 *     the monitor saw overrun);
 *   - the worker runs an actor and the actor has no smarm_preempt_disable
 *     region open (runtime critical sections that call user code open one
 *     too);
 *   - the interrupted pc lies in preemptible text: the host executable or
 *     an object the host allowed (smarm_preempt_allow_object). Never libc,
 *     the loader, libffi or libsmarm itself: they hold locks and
 *     thread-local state that another actor on this thread would break;
 *   - the actor's stack has room for the save area below the red zone.
 *
 * Invariants:
 *   INV-P1 an asynchronously preempted actor resumes on the worker that
 *          preempted it (the interrupted code may hold addresses of this
 *          thread's TLS): it waits in that worker's pinned FIFO, never in
 *          the shared queue, and no other worker takes it; unless it is
 *          free to move (INV-P7). (Actors that yielded wait in the same
 *          FIFO, free to move: sched.c, yield_queue.)
 *   INV-P2 the handler touches only its own thread's worker and the
 *          actor on it, plus the range table and its reader counts; it
 *          takes no lock and calls nothing that is not async-signal-safe.
 *   INV-P3 a range entry's hi is its valid mark: 0 means empty. Entries
 *          are written under ranges_lock only: filled lo first, then hi;
 *          emptied by storing hi = 0 alone (lo stays until reuse); an
 *          emptied entry is refilled only after a grace period.
 *   INV-P4 (grace period) when smarm_preempt_disallow_object() returns,
 *          no handler that could have seen the removed entries is still
 *          running: every verdict and divert made from them is over.
 *   INV-P5, INV-P6 (patched returns of actors inside libc): below, at
 *          "Return-path preemption".
 *   INV-P7 a preempted actor is left to another worker (the back of
 *          that worker's deque) only when moving evens out the workers
 *          (smarm__lighter_worker), the node allows it
 *          (SMARM_OPT_PREEMPT_MOVE), it stopped in the executable's own
 *          text, and no word of its stack from the save area up to its
 *          own first frame (the interrupted registers, vector state and
 *          every frame of the actor's code: s->run_frame) lies in the
 *          thread's static TLS or its TCB: below, at "Moving". A
 *          preemption for a woken actor (wake_due) never moves it.
 *
 * Removable allowances. The table of allowed text (ranges[]) is read by
 * the handler on any thread at any time, and an allowance can be
 * removed so that its object can be unloaded. A handler must never
 * judge from a half-written entry (a torn lo/hi pair could span libc),
 * nor from an entry of an object that is gone and whose addresses now
 * hold another object's code. The protocol:
 *   handler: 1. p = phase; readers[p] += 1 (seq_cst);
 *            2. for each entry: h = hi; if h != 0, l = lo; match
 *               l <= pc < h (seq_cst loads: plain loads on x86);
 *            3. decide, divert if allowed;
 *            4. readers[p] -= 1.
 *   removal (under ranges_lock): 1. hi = 0 on each entry of the object
 *            (seq_cst); 2. flip phase; 3. wait until readers[old phase]
 *            is 0; 4. drop the object's dlopen reference, unlocked.
 *   adding (under ranges_lock): lo, then hi, into an empty entry.
 * A handler counted in step 1 before the flip is waited for (INV-P4).
 * One that is not waited for incremented after the remover saw the old
 * count at 0, so (all of it seq_cst) its loads in step 2 come after the
 * remover's hi = 0 and it cannot see the removed entry. Handlers arriving
 * during the wait count on the new phase, so the wait ends (no
 * livelock); it lasts as long as the slowest handler already running,
 * microseconds. A hi read as nonzero was stored after its lo (step 2
 * reads hi first), and that lo stays until a grace period that waits for
 * this handler, so a handler never mixes two entries. The actor a
 * handler interrupts cannot move while the handler runs, so a verdict
 * "allowed" is about text the actor is executing at that moment; that
 * text must stay mapped while an actor executes it, preemption or not,
 * which is the host's part (it unloads an object only when no actor can
 * be running its code).
 * Allowed objects hold one dlopen reference each (never RTLD_NODELETE),
 * so a host's dlclose cannot unmap allowed text; the removal drops it.
 * See: docs/architecture/preemption.md.
 */

#include "preempt.h"

#include "actor.h"
#include "node.h"
#include "sched.h"
#include "slot.h"
#include "stack.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

void smarm__preempt_resume(uintptr_t *pc_slot);
void smarm__preempt_ret_resume(uintptr_t *pc_slot);
_Unwind_Reason_Code smarm__preempt_ret_personality(int version,
						   _Unwind_Action actions,
						   _Unwind_Exception_Class cls,
						   struct _Unwind_Exception *ue,
						   struct _Unwind_Context *ctx);

#define MAX_RANGES 64
#define MON_MAX_SLEEP_NS 20000000u /* idle monitor backs off to 20 ms */
#define MON_RETRY_NS 50000u	   /* re-signal a deferred overrun */
#define WAKE_LOOK_NS 500000u	   /* look while every worker runs long */
#define WAKE_RUN_DIV 20 /* a woken actor waits: a run of tick/20 yields */
#define PIN_MAX_SKIPS 32
#define URG_MAGIC 0x534d524d /* "SMRM": si_value of the monitor's signals */
#define SYSCALL_BACKOFF_MAX                                                    \
	6 /* re-signal a sleeping syscall at most                              \
	     every tick << 6 */

/* Why a signal found no safe spot (w->defer_why). */
enum {
	DEFER_NONE = 0,
	DEFER_TEXT = 1,	   /* in libc or other code: retry soon */
	DEFER_RUNTIME = 5, /* in libsmarm's code, or libc it called: retry
			      soon, backing off (its calls mostly end at a
			      preemption point, which honours
			      preempt_pending) */
	DEFER_SYSCALL = 2, /* asleep in a system call: retry rarely */
	DEFER_REGION = 3,  /* a disabled region, a host signal handler or
			      no stack room: retry at the next tick */
	DEFER_PATCHED = 4, /* in libc, its return patched (ret_patch): the
			      return preempts; retry at the next tick */
};

/* A runtime deferral's retries back off from MON_RETRY_NS, doubling, to
 * at most a tick. */
#define RUNTIME_BACKOFF_MAX 8

/* Room the trampoline needs below the red zone, besides the save area. */
#if defined(SMARM_ASAN)
#define PREEMPT_STACK_MARGIN (48 * 1024)
#else
#define PREEMPT_STACK_MARGIN (8 * 1024)
#endif

/*
 * The allowed text, read by the handler (INV-P3). nranges is the high
 * water of used entries; it only grows.
 */
static struct {
	_Atomic uintptr_t lo; /* first byte */
	_Atomic uintptr_t hi; /* one past the last byte; 0: empty entry */
} ranges[MAX_RANGES];
static _Atomic int nranges;
static _Atomic unsigned gp_phase;      /* the grace period's phase (bit 0) */
static _Atomic unsigned gp_readers[2]; /* handlers reading, by phase */

/*
 * The allowed objects, behind the entries: writers' bookkeeping, never
 * read by the handler. Guarded by ranges_lock.
 */
#define MAX_SEGS 8 /* executable segments recorded per object */
static struct allowed {
	uintptr_t a_key;       /* its first executable segment; 0: free */
	void *a_handle;	       /* its dlopen reference; NULL: the exe */
	int a_nseg;	       /* entries it has in ranges[] */
	int a_entry[MAX_SEGS]; /* their indexes */
} allowed[MAX_RANGES];
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t preempt_once = PTHREAD_ONCE_INIT;
static struct sigaction prior_urg;
static _Atomic pid_t self_pid;

/* ------------------------------------------------------------ text */

/* Handler side (INV-P3): whether pc lies in an allowed range. */
static bool text_preemptible(uintptr_t pc)
{
	int k = atomic_load(&nranges);
	for (int i = 0; i < k; i++) {
		uintptr_t hi = atomic_load(&ranges[i].hi);
		if (hi != 0 && pc < hi && pc >= atomic_load(&ranges[i].lo))
			return true;
	}
	return false;
}

bool smarm__uc_mask_is_workers(const struct smarm__worker *w, const void *uc)
{
	/* The first word holds every standard and real-time signal the
	 * runtime or a host would mask. */
	return memcmp(&((const ucontext_t *)uc)->uc_sigmask, &w->run_mask, 8) ==
	       0;
}

bool smarm__text_is_actors(uintptr_t pc)
{
	unsigned phase = atomic_load(&gp_phase) & 1;
	bool yes;
	atomic_fetch_add(&gp_readers[phase], 1);
	yes = text_preemptible(pc);
	atomic_fetch_sub_explicit(&gp_readers[phase], 1, memory_order_release);
	return yes;
}

/* Under ranges_lock: the object whose first executable segment is key. */
static struct allowed *allowed_find(uintptr_t key)
{
	for (int i = 0; i < MAX_RANGES; i++)
		if (allowed[i].a_key == key)
			return &allowed[i];
	return NULL;
}

/* Under ranges_lock: empty entries, counting those never used. */
static int ranges_free(void)
{
	int k = atomic_load(&nranges);
	int n = MAX_RANGES - k;
	for (int i = 0; i < k; i++)
		n += atomic_load(&ranges[i].hi) == 0;
	return n;
}

/*
 * Under ranges_lock, with room checked (ranges_free, a free allowed
 * record): publish an object's segments, lo before hi (INV-P3).
 */
static void allowed_add(uintptr_t key, void *handle, int nseg,
			const uintptr_t *lo, const uintptr_t *hi)
{
	struct allowed *a = allowed_find(0);
	int k = atomic_load(&nranges);
	int e = 0;
	SMARM_ASSERT(a != NULL && nseg <= MAX_SEGS);
	a->a_key = key;
	a->a_handle = handle;
	a->a_nseg = nseg;
	for (int i = 0; i < nseg; i++) {
		while (e < k && atomic_load(&ranges[e].hi) != 0)
			e++;
		if (e == k)
			atomic_store(&nranges, ++k);
		atomic_store(&ranges[e].lo, lo[i]);
		atomic_store(&ranges[e].hi, hi[i]);
		a->a_entry[i] = e++;
	}
}

/*
 * Under ranges_lock: empty a's entries and wait out the handlers that
 * may have seen them (INV-P4). Returns its dlopen reference for the
 * caller to drop once unlocked.
 */
static void *allowed_remove(struct allowed *a)
{
	void *handle = a->a_handle;
	unsigned old;
	for (int i = 0; i < a->a_nseg; i++)
		atomic_store(&ranges[a->a_entry[i]].hi, 0);
	memset(a, 0, sizeof *a);
	old = atomic_fetch_add(&gp_phase, 1) & 1;
	while (atomic_load(&gp_readers[old]) != 0)
		sched_yield();
	return handle;
}

struct find_obj {
	uintptr_t addr; /* in: an address inside the object, 0: the exe */
	bool found;
	bool exe;		/* the object is the main program */
	int seen;		/* objects looked at so far */
	uintptr_t base;		/* its load bias (dlpi_addr) */
	uintptr_t lo[MAX_SEGS]; /* its executable segments */
	uintptr_t hi[MAX_SEGS];
	int n;
	uintptr_t eh_hdr; /* its .eh_frame_hdr, 0: none */
};

static int find_obj_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_obj *f = arg;
	bool first = f->addr == 0;
	bool hit = first;
	(void)size;
	f->exe = f->seen++ == 0; /* the first object reported is the exe */
	for (int i = 0; !hit && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && f->addr >= lo &&
		    f->addr < lo + ph->p_memsz)
			hit = true;
	}
	if (!hit)
		return 0;
	f->found = true;
	f->base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum && f->n < MAX_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_EH_FRAME)
			f->eh_hdr = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		f->lo[f->n] = info->dlpi_addr + ph->p_vaddr;
		f->hi[f->n] = f->lo[f->n] + ph->p_memsz;
		f->n++;
	}
	return 1;
}

/* ------------------------------------------------------- return path */

/*
 * Return-path preemption. A hog that spends nearly all its time inside
 * libc (malloc/free, stdio) is almost never interrupted in allowed text,
 * so retried signals alone leave it running for many slices. Instead,
 * when a signal finds the actor in one of the objects below, the handler
 * unwinds the actor's stack with the object's call-frame information
 * (arch: smarm__unwind_step) to the frame that returns into allowed text,
 * keeps that return address in the slot (ret_pc) and puts the address
 * of smarm__preempt_ret_stub in its place: the libc call runs to its end
 * undisturbed, and its return is a safe point (the actor is back in
 * allowed code with every libc lock released and every libc frame gone),
 * where smarm__preempt_ret_resume yields exactly as an async preemption
 * at that pc would.
 *
 * Which objects: those holding malloc, free, snprintf, memcpy and
 * pthread_mutex_lock (libc, and a sanitizer runtime that interposes
 * malloc), found once; they are pinned by a dlopen reference that is
 * never dropped, so their unwind tables stay mapped while a handler
 * reads them. An unwind stops at the first return address that is not
 * in one of them: it patches only a return into allowed text (never into
 * libsmarm, whose own calls reach safe points).
 *
 * Invariants:
 *   INV-P5 a slot has at most one patched return (ret_pc != 0), and its
 *          ret_slot holds the stub's address while that frame is live;
 *          only the actor's own thread (its handler, its stub) reads or
 *          writes ret_pc/ret_slot, and the stub clears them.
 *   INV-P6 a patch whose frame is gone without returning (a longjmp out
 *          of a callback libc made) is recognised as stale by the next
 *          handler (the sp is above ret_slot, or ret_slot no longer holds
 *          the stub) and forgotten; the stub is never run for it. A
 *          handler that finds the actor on the stub's first instruction
 *          (sp just above ret_slot: the return has landed) keeps it.
 * An unwind through a patched frame before its return (an exception
 * thrown by a callback libc made) meets the stub's frame, whose
 * personality (smarm__preempt_ret_personality) puts the real return
 * address back and forgets the patch before the unwinder reads it.
 * A process forked inside the patched call (fork, vfork) returns
 * through the stub too; there smarm__preempt_ret_resume only resumes the
 * return (its pid is not the node's) and leaves the patch to the parent.
 * Not used where a shadow stack is enforced (the patched return would
 * fault): there the deferral works as before.
 */
#define MAX_UNWIND_OBJS 4
#define MAX_UNWIND_FRAMES 16

static struct uw_obj {
	uintptr_t lo[MAX_SEGS];
	uintptr_t hi[MAX_SEGS];
	int n;
	const void *eh_hdr;
} uw_objs[MAX_UNWIND_OBJS];
static int n_uw_objs; /* written before the handler is installed */

/*
 * Functions that read their own return address (to save it: setjmp's
 * jmp_buf, getcontext's ucontext): a patch made before they read it
 * would be saved as the stub's address and jumped to later, long after
 * the patch was used. Their returns are never patched. Written before
 * the handler is installed.
 */
#define MAX_RA_READERS 24
static uintptr_t ra_readers[MAX_RA_READERS];
static int n_ra_readers;

static bool ra_reader(uintptr_t fn)
{
	for (int i = 0; i < n_ra_readers; i++)
		if (ra_readers[i] == fn)
			return true;
	return false;
}

static void ra_readers_init(void)
{
	static const char *const names[] = {
		"setjmp",     "_setjmp",     "__sigsetjmp", "sigsetjmp",
		"getcontext", "swapcontext", "vfork",	    "__vfork",
	};
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		void *a[2] = { dlsym(RTLD_DEFAULT, names[i]),
			       libc != NULL ? dlsym(libc, names[i]) : NULL };
		for (int k = 0; k < 2; k++)
			if (a[k] != NULL && n_ra_readers < MAX_RA_READERS &&
			    !ra_reader((uintptr_t)a[k]))
				ra_readers[n_ra_readers++] = (uintptr_t)a[k];
	}
	/* libc stays loaded (the reference is kept, like uw_obj_add's). */
}

static struct find_obj self_text; /* libsmarm's own (n > 0 if found) */

/* Whether pc lies in one of an object's n executable segments. */
static bool segs_hold(const uintptr_t *lo, const uintptr_t *hi, int n,
		      uintptr_t pc)
{
	for (int j = 0; j < n; j++)
		if (pc >= lo[j] && pc < hi[j])
			return true;
	return false;
}

/* Whether pc lies in libsmarm's own text (a DEFER_RUNTIME verdict). */
static bool in_runtime_text(uintptr_t pc)
{
	return segs_hold(self_text.lo, self_text.hi, self_text.n, pc);
}

static const struct uw_obj *uw_obj_of(uintptr_t pc)
{
	for (int i = 0; i < n_uw_objs; i++)
		if (segs_hold(uw_objs[i].lo, uw_objs[i].hi, uw_objs[i].n, pc))
			return &uw_objs[i];
	return NULL;
}

/* preempt_init: record the object holding addr, unless it is known. */
static void uw_obj_add(uintptr_t addr, uintptr_t self_lo)
{
	struct find_obj f = { .addr = addr };
	Dl_info di;
	dl_iterate_phdr(find_obj_cb, &f);
	if (!f.found || f.exe || f.n == 0 || f.eh_hdr == 0 ||
	    f.lo[0] == self_lo || uw_obj_of(addr) != NULL ||
	    n_uw_objs == MAX_UNWIND_OBJS)
		return;
	/* Pin it: its tables must outlive every handler that reads them. */
	if (dladdr((void *)addr, &di) == 0 || di.dli_fname == NULL ||
	    dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD) == NULL)
		return;
	memcpy(uw_objs[n_uw_objs].lo, f.lo, sizeof f.lo);
	memcpy(uw_objs[n_uw_objs].hi, f.hi, sizeof f.hi);
	uw_objs[n_uw_objs].n = f.n;
	uw_objs[n_uw_objs].eh_hdr = (const void *)f.eh_hdr;
	n_uw_objs++;
}

/* Handler side: forget a patch whose frame is gone (INV-P6). */
static void ret_patch_forget_stale(struct smarm__slot *s, uintptr_t pc,
				   uintptr_t sp)
{
	uintptr_t *slot = s->ret_slot;
	if (s->ret_pc == 0)
		return;
	/*
	 * On the stub's first instruction the patched return has just
	 * landed: the ret popped the word (sp is one word above it) and the
	 * stub is about to read ret_pc. Forgetting it there would send the
	 * actor to address 0.
	 */
	if (pc == (uintptr_t)(void *)smarm__preempt_ret_stub)
		return;
	if (sp > (uintptr_t)slot ||
	    *slot != (uintptr_t)(void *)smarm__preempt_ret_stub) {
		s->ret_pc = 0;
		s->ret_slot = NULL;
	}
}

/*
 * Handler side: unwind f, an interrupted frame in libc (a registered
 * object: uw_obj_of), through libc's frames alone up to the first return
 * into preemptible text, reading the stack only in [lo, hi). True: f is
 * that frame (its pc the return address, ra_slot where it is kept). s,
 * if not NULL, is the actor whose stack it is: a return ret_patch
 * redirected to the stub is read as the one it replaced.
 */
static bool unwind_to_actors(struct smarm__frame *f, uintptr_t lo, uintptr_t hi,
			     const struct smarm__slot *s)
{
	for (int i = 0; i < MAX_UNWIND_FRAMES; i++) {
		const struct uw_obj *o =
			uw_obj_of(f->first ? f->pc : f->pc - 1);
		if (o == NULL || !smarm__unwind_step(o->eh_hdr, f, lo, hi))
			return false;
		/* A patched return (ret_patch) reads as the stub: the call
		 * returns where the patch says. */
		if (s != NULL && s->ret_pc != 0 && f->ra_slot == s->ret_slot &&
		    f->pc == (uintptr_t)(void *)smarm__preempt_ret_stub)
			f->pc = s->ret_pc;
		if (text_preemptible(f->pc))
			return true;
	}
	return false;
}

/*
 * The handler found s in libc (DEFER_TEXT): patch the return into the
 * actor's code if it can. The verdict: DEFER_PATCHED (patched now or
 * before), DEFER_RUNTIME (libc was called by libsmarm, whose call ends
 * at a preemption point), or DEFER_TEXT (neither).
 */
static int ret_patch(struct smarm__slot *s, const ucontext_t *uc)
{
	struct smarm__frame f;
	uintptr_t hi = (uintptr_t)s->stk_base + s->stk_guard + s->stk_reserve;
	smarm__uc_frame(uc, &f);
	ret_patch_forget_stale(s, f.pc, f.sp);
	if (s->ret_pc != 0)
		return DEFER_PATCHED;
	if (!unwind_to_actors(&f, f.sp, hi, NULL))
		return in_runtime_text(f.pc) ? DEFER_RUNTIME : DEFER_TEXT;
	if (ra_reader(f.fn))
		return DEFER_TEXT; /* see ra_readers */
	s->ret_pc = f.pc;
	s->ret_slot = f.ra_slot;
	*f.ra_slot = (uintptr_t)(void *)smarm__preempt_ret_stub;
	return DEFER_PATCHED;
}

bool smarm__called_by_actors(const struct smarm__slot *s, const void *uc,
			     uintptr_t hi, uintptr_t *pc)
{
	struct smarm__frame f;
	unsigned phase = atomic_load(&gp_phase) & 1;
	bool yes;
	if (n_uw_objs == 0)
		return false; /* no unwind tables (a shadow stack) */
	atomic_fetch_add(&gp_readers[phase], 1);
	smarm__uc_frame(uc, &f);
	yes = unwind_to_actors(&f, f.sp, hi, s);
	*pc = f.pc;
	atomic_fetch_sub_explicit(&gp_readers[phase], 1, memory_order_release);
	return yes;
}

/* ------------------------------------------------------------ signal */

static void chain_prior(int sig, siginfo_t *si, void *ctx)
{
	if (prior_urg.sa_flags & SA_SIGINFO) {
		if (prior_urg.sa_sigaction != NULL)
			prior_urg.sa_sigaction(sig, si, ctx);
	} else if (prior_urg.sa_handler != SIG_IGN &&
		   prior_urg.sa_handler != SIG_DFL) {
		prior_urg.sa_handler(sig);
	}
}

static bool stack_has_room(const struct smarm__slot *s, uintptr_t sp)
{
	uintptr_t low = (uintptr_t)s->stk_base + s->stk_guard;
	uintptr_t top = low + s->stk_reserve;
	uintptr_t need = smarm__preempt_frame_size() + PREEMPT_STACK_MARGIN;
	return s->stk_base != NULL && sp <= top && sp > low && sp - low > need;
}

/* Why the actor cannot be switched out here, or DEFER_NONE. */
static int defer_reason(const struct smarm__worker *w,
			const struct smarm__slot *s, const ucontext_t *uc)
{
	uintptr_t pc = smarm__uc_pc(uc);
	uintptr_t sp = smarm__uc_sp(uc);
	if (s->nopreempt != 0 || s->rt_nopreempt != 0)
		return DEFER_REGION;
	/*
	 * A signal mask other than the worker's means the actor is inside a
	 * signal handler of the host (which may have interrupted the
	 * runtime itself), or changed its mask: switching would carry the
	 * mask to the next actor.
	 */
	if (!smarm__uc_mask_is_workers(w, uc))
		return DEFER_REGION;
	if (!stack_has_room(s, sp))
		return DEFER_REGION;
	if (!text_preemptible(pc))
		return smarm__uc_asleep_in_syscall(uc) ? DEFER_SYSCALL
		       : in_runtime_text(pc)	       ? DEFER_RUNTIME
						       : DEFER_TEXT;
	return DEFER_NONE;
}

static void on_sigurg(int sig, siginfo_t *si, void *ctx)
{
	int saved_errno = errno;
	struct smarm__worker *w = smarm__tls_worker;
	ucontext_t *uc = ctx;
	struct smarm__slot *s;
	unsigned phase;
	int why;

	/* Only the monitor's signals are ours; the host's go on. */
	if (si->si_code != SI_QUEUE || si->si_value.sival_int != URG_MAGIC ||
	    si->si_pid !=
		    atomic_load_explicit(&self_pid, memory_order_relaxed)) {
		chain_prior(sig, si, ctx);
		goto out;
	}
	if (w == NULL || (s = w->cur) == NULL)
		goto out;
	if (atomic_load_explicit(&w->run_seq, memory_order_relaxed) !=
	    atomic_load_explicit(&w->preempt_seq, memory_order_relaxed))
		goto out; /* late: that run already ended */
	/* Counted while it reads the range table and acts on it (INV-P4). */
	phase = atomic_load(&gp_phase) & 1;
	atomic_fetch_add(&gp_readers[phase], 1);
	why = defer_reason(w, s, uc);
	if (why == DEFER_TEXT && n_uw_objs > 0)
		why = ret_patch(s, uc);
	if (why != DEFER_NONE) {
		s->preempt_pending = 1;
		__atomic_store_n(&w->defer_why, why, __ATOMIC_RELAXED);
		__atomic_store_n(&w->n_deferred, w->n_deferred + 1,
				 __ATOMIC_RELEASE);
	} else {
		smarm__uc_divert(uc);
		/* The monitor reads both (monitor_look): the time first. */
		__atomic_store_n(&w->async_ns, smarm__clock_ns(),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&w->n_async, w->n_async + 1, __ATOMIC_RELEASE);
	}
	atomic_fetch_sub_explicit(&gp_readers[phase], 1, memory_order_release);
out:
	errno = saved_errno;
}

/* ------------------------------------------------------------ moving */

/*
 * Moving (INV-P7). A call-free loop reaches no safe point, so it stays on
 * the worker where it was first preempted, and with more such actors than
 * workers the shares are set by where each first ran: 5 on 4 workers get
 * 1, 1, 1, 1/2, 1/2 of a worker. What ties a preempted actor to its
 * thread is only what its interrupted code holds: an address of that
 * thread's TLS (a __thread variable's, errno's, the TCB) in a register
 * or a spilled word. The executable's TLS and every library's loaded at
 * start are one static block just below the thread pointer (x86-64 TLS
 * variant II), and the TCB is just above it, so such addresses fall in
 * [tp - tls_below, tp + TLS_ABOVE). When no word of the actor's stack,
 * from the trampoline's save area (all interrupted registers and the
 * vector state) to the frame its function was called from (run_frame,
 * set by smarm__call_actor, which also clears the registers the runtime
 * left: an -O0 runtime leaves TLS addresses there, and a loop that never
 * writes a register keeps them), falls there, resuming it on another thread
 * is as safe as resuming it after a runtime call, which actors do all
 * the time (a pointer read out of TLS and kept is the actor's own
 * business there too, docs/embedding.md). The text must be the
 * executable's: a plugin's TLS may be allocated apart from the block.
 * A scan is a few hundred bytes for a loop, and it is made only when a
 * move would even out the workers.
 */
#define TLS_SLACK 16384 /* static TLS surplus for dlopen, alignment */
/* Above tp: the TCB header (the stack guard at fs:0x28 and its kin) and
 * the start of struct pthread, which pthread_self() returns. Not all of
 * it: glibc's struct pthread ends 2304 bytes up, at the top of a worker
 * thread's stack mapping, and words just past it (seen in saved
 * registers) are no TLS. */
#define TLS_ABOVE 1024

static struct find_obj exe_text; /* the program's, if allowed (n > 0) */
static size_t tls_below;	 /* static TLS bytes below tp, with slack */

/* Sum the TLS blocks of the objects loaded now (each rounded up). */
static int tls_size_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	size_t *sum = arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		size_t a = ph->p_align > 0 ? ph->p_align : 1;
		if (ph->p_type == PT_TLS)
			*sum += (ph->p_memsz + a - 1) / a * a + a;
	}
	return 0;
}

static bool in_exe_text(uintptr_t pc)
{
	return segs_hold(exe_text.lo, exe_text.hi, exe_text.n, pc);
}

/*
 * Whether any word in [from, to) lies in [lo, hi). Reads the actor's
 * stack as words, whatever they hold (so not through ASan's eyes: its
 * frames' redzones are poisoned).
 */
static __attribute__((noinline, no_sanitize_address)) bool
words_in(uintptr_t from, uintptr_t to, uintptr_t lo, uintptr_t hi)
{
	const volatile uintptr_t *p = (const uintptr_t *)from;
	for (; (uintptr_t)p + sizeof *p <= to; p++)
		if (*p - lo < hi - lo)
			return true;
	return false;
}

/*
 * INV-P7 for the actor on w, preempted at pc with its stack saved from
 * `from` up; true: w->move_to names the worker to leave it to. Called
 * before it switches out.
 */
static bool preempt_may_move(struct smarm__worker *w, struct smarm__slot *s,
			     uintptr_t pc, uintptr_t from)
{
	uintptr_t tp, top;
	int to;
	if (!w->node->preempt_move || !in_exe_text(pc) ||
	    (to = smarm__lighter_worker(w, smarm__worker_holds(w))) < 0)
		return false;
	/* Up to the runtime's first frames (smarm__call_actor), within the
	 * stack. */
	top = (uintptr_t)s->stk_base + s->stk_guard + s->stk_reserve;
	if (s->run_frame < top)
		top = s->run_frame;
	tp = smarm__thread_pointer();
	if (from >= top || words_in(from, top, tp - tls_below, tp + TLS_ABOVE))
		return false;
	w->move_to = to;
	return true;
}

/* errno on the thread this runs on (after a move, not the one before). */
static __attribute__((noinline)) void errno_set(int v)
{
	errno = v;
}

static void preempt_init(void)
{
	struct find_obj f = { 0 };
	struct sigaction sa;

	struct find_obj self = { 0 };

	smarm__cpu_probe();
	dl_iterate_phdr(find_obj_cb, &f);
	self.addr = (uintptr_t)(void *)on_sigurg;
	dl_iterate_phdr(find_obj_cb, &self);
	if (self.found)
		self_text = self;
	/*
	 * Linked statically, the runtime's own code lies in the executable's
	 * text: allowing that text would let a signal switch out the
	 * scheduler under its locks. Then nothing is allowed by default.
	 */
	if (!(self.found && self.n > 0 && f.n > 0 && self.lo[0] == f.lo[0])) {
		pthread_mutex_lock(&ranges_lock);
		allowed_add(f.lo[0], NULL, f.n, f.lo, f.hi);
		pthread_mutex_unlock(&ranges_lock);
		exe_text = f;
	}
	tls_below = TLS_SLACK;
	dl_iterate_phdr(tls_size_cb, &tls_below);
	if (!smarm__shadow_stack_on() && self.found && self.n > 0) {
		uw_obj_add((uintptr_t)(void *)malloc, self.lo[0]);
		uw_obj_add((uintptr_t)(void *)free, self.lo[0]);
		uw_obj_add((uintptr_t)(void *)snprintf, self.lo[0]);
		uw_obj_add((uintptr_t)(void *)memcpy, self.lo[0]);
		uw_obj_add((uintptr_t)(void *)pthread_mutex_lock, self.lo[0]);
		/* libc itself, when the above are interposed (a sanitizer,
		 * another malloc): abort() is libc's (fault.c unwinds it). */
		uw_obj_add((uintptr_t)(void *)abort, self.lo[0]);
		ra_readers_init();
	}

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigurg;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGURG, &sa, &prior_urg);
}

void smarm__preempt_setup(void)
{
	pthread_once(&preempt_once, preempt_init);
	atomic_store_explicit(&self_pid, getpid(), memory_order_relaxed);
}

/* ------------------------------------------------------------ resume */

/*
 * Called by smarm__preempt_tramp on the actor's stack with the machine
 * state saved: an ordinary safe point from here on.
 */
void smarm__preempt_resume(uintptr_t *pc_slot)
{
	/* The save area lies above this frame: moving scans from here. */
	uintptr_t from = (uintptr_t)__builtin_frame_address(0);
	int saved_errno = errno;
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm__slot *s = w->cur;

	s->preempt_pending = 0;
	if (SMARM_UNLIKELY(w->astat))
		SMARM__ASTAT_ADD(&smarm__astat_of(w->node, s)->as_pre_async, 1);
	smarm__observe_stop(s);
	if (smarm__other_work(w)) {
		/* a woken actor's preemption leaves the runner here: it is
		 * for the woken one's latency, not for balance */
		bool stay =
			atomic_load_explicit(&w->stay_seq,
					     memory_order_relaxed) ==
			atomic_load_explicit(&w->run_seq, memory_order_relaxed);
		if (!stay && preempt_may_move(w, s, *pc_slot, from)) {
			smarm__switch_out(s, SMARM__INTENT_MOVE);
		} else {
			smarm__switch_out(s, SMARM__INTENT_PREEMPT);
			SMARM_ASSERT(smarm__tls_worker == w); /* INV-P1 */
		}
		smarm__observe_stop(s);
	} else {
		/* Alone on the worker: go on as a new run, or the monitor
		 * would take the signal as deferred. */
		smarm__run_restart(w);
	}
	errno_set(saved_errno); /* w and errno's address may be stale */
}

/*
 * Called by smarm__preempt_ret_stub: a patched return landed (INV-P5).
 * The actor is back in allowed text with libc's frames gone; it yields
 * as an async preemption at the return address would, unless it opened
 * a no-preempt region meanwhile (a callback that libc made), which then
 * ends with the yield (preempt_pending).
 */
void smarm__preempt_ret_resume(uintptr_t *pc_slot)
{
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm__slot *s = w->cur;
	*pc_slot = s->ret_pc;
	/*
	 * A child of fork or vfork that the actor made inside the patched
	 * call returns here too, with no scheduler of its own: it just goes
	 * on. It leaves the patch alone, for the parent's return (vfork
	 * shares this memory; the parent has not returned yet).
	 */
	if (getpid() != atomic_load_explicit(&self_pid, memory_order_relaxed))
		return;
	s->ret_pc = 0;
	s->ret_slot = NULL;
	/* Counted by the worker it lands on, its own thread (INV-P2). */
	__atomic_store_n(&w->n_ret_taken, w->n_ret_taken + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&w->n_async, w->n_async + 1, __ATOMIC_RELAXED);
	if (s->nopreempt != 0 || s->rt_nopreempt != 0) {
		s->preempt_pending = 1;
		return;
	}
	smarm__preempt_resume(pc_slot);
}

/*
 * The personality of smarm__preempt_ret_stub's frame (x86_64.S). An
 * exception, or a forced unwind, that leaves a patched libc call through
 * a callback libc made (a C++ comparator throwing out of qsort) finds
 * the stub where the real return address should be: the stub's frame
 * reads its return address from the patched word, which holds the stub
 * itself, and the unwind would end there (std::terminate). The unwinder
 * calls this before it reads that word: put the real address back and
 * give up the patch (the call ends by unwinding, never by its return).
 * Called on the actor's own thread (INV-P5); the patch is forgotten
 * before the word is restored, so a handler that interrupts in between
 * finds no patch and makes none here (libsmarm and the unwinder's own
 * object are not unwound).
 */
_Unwind_Reason_Code smarm__preempt_ret_personality(int version,
						   _Unwind_Action actions,
						   _Unwind_Exception_Class cls,
						   struct _Unwind_Exception *ue,
						   struct _Unwind_Context *ctx)
{
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm__slot *s = w != NULL ? w->cur : NULL;
	(void)version;
	(void)actions;
	(void)cls;
	(void)ue;
	(void)ctx;
	if (s != NULL && s->ret_pc != 0 &&
	    *s->ret_slot == (uintptr_t)(void *)smarm__preempt_ret_stub) {
		uintptr_t pc = s->ret_pc;
		uintptr_t *slot = s->ret_slot;
		s->ret_pc = 0;
		s->ret_slot = NULL;
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* before the word */
		*slot = pc;
	}
	return _URC_CONTINUE_UNWIND;
}

/* ------------------------------------------------------------ pinned */

void smarm__pin_push(struct smarm__worker *w, struct smarm__slot *s, bool fixed)
{
	struct smarm_node *n = w->node;
	/*
	 * Behind everything queued now, in the shared queue and in this
	 * worker's deque: FIFO-fair against both. Local work stolen
	 * meanwhile leaves the ticket unmet, but pick_next takes a pinned
	 * actor anyway once the other sources are empty (or after
	 * PIN_MAX_SKIPS). The wake slot is not counted: it goes before the
	 * pinned FIFO by pick order, and its picks are not local picks.
	 * Counting them let an actor woken after this push (a sleeper's
	 * timer) stand in for the deque entries queued before it: with a
	 * slice-sleeper and a pinned spinner taking turns on one worker,
	 * the spinner was due again at every turn and the deque never ran.
	 */
	s->pin_ticket =
		atomic_load_explicit(&n->rq_pops, memory_order_relaxed) +
		smarm__ring_len(&n->rq);
	s->pin_ticket_local = w->local_picks + smarm__ring_len(&w->ldq);
	atomic_store_explicit(
		&w->pin_count,
		atomic_load_explicit(&w->pin_count, memory_order_relaxed) + 1,
		memory_order_relaxed);
	s->pin_next = SMARM__NO_INDEX;
	s->pin_fixed = fixed;
	if (w->pin_head == SMARM__NO_INDEX)
		w->pin_head = smarm__slot_index(s);
	else
		smarm__slot_at(n, w->pin_tail)->pin_next = smarm__slot_index(s);
	w->pin_tail = smarm__slot_index(s);
}

struct smarm__slot *smarm__pin_take(struct smarm__worker *w, bool only_due)
{
	struct smarm_node *n = w->node;
	struct smarm__slot *s;
	if (w->pin_head == SMARM__NO_INDEX)
		return NULL;
	s = smarm__slot_at(n, w->pin_head);
	if (only_due &&
	    (atomic_load_explicit(&n->rq_pops, memory_order_relaxed) <
		     s->pin_ticket ||
	     w->local_picks < s->pin_ticket_local) &&
	    ++w->pin_skips < PIN_MAX_SKIPS)
		return NULL;
	w->pin_skips = 0;
	w->pin_head = s->pin_next;
	atomic_store_explicit(
		&w->pin_count,
		atomic_load_explicit(&w->pin_count, memory_order_relaxed) - 1,
		memory_order_relaxed);
	return s;
}

/*
 * Take the actor in slot idx out of w's pinned FIFO (w's own thread) if
 * it waits there free to move (it yielded; sched.c, Expedite): true if
 * it did. A walk of the FIFO, which holds this worker's actors only.
 */
bool smarm__pin_take_moveable(struct smarm__worker *w, uint32_t idx)
{
	struct smarm_node *n = w->node;
	uint32_t prev = SMARM__NO_INDEX;
	for (uint32_t i = w->pin_head; i != SMARM__NO_INDEX;
	     prev = i, i = smarm__slot_at(n, i)->pin_next) {
		struct smarm__slot *s;
		if (i != idx)
			continue;
		s = smarm__slot_at(n, i);
		if (s->pin_fixed)
			return false; /* INV-P1 */
		if (prev == SMARM__NO_INDEX)
			w->pin_head = s->pin_next;
		else
			smarm__slot_at(n, prev)->pin_next = s->pin_next;
		if (w->pin_tail == i)
			w->pin_tail = prev;
		atomic_store_explicit(
			&w->pin_count,
			atomic_load_explicit(&w->pin_count,
					     memory_order_relaxed) -
				1,
			memory_order_relaxed);
		return true;
	}
	return false;
}

/* ------------------------------------------------------------ monitor */

/* The monitor's own mark on its signals (see on_sigurg). */
static bool send_urg(struct smarm_node *n, struct smarm__worker *w,
		     uint32_t seq)
{
	union sigval v = { .sival_int = URG_MAGIC };
	atomic_store_explicit(&w->preempt_seq, seq, memory_order_relaxed);
	if (pthread_sigqueue(w->thread, SIGURG, v) != 0)
		return false;
	atomic_fetch_add_explicit(&n->pre_signals, 1, memory_order_relaxed);
	return true;
}

/* What the monitor knows about one worker's current run. */
struct mon_seen {
	uint32_t seq;	      /* run_seq at the look that began this run */
	bool signalled;	      /* a signal was sent for this run */
	unsigned backoff;     /* consecutive syscall deferrals */
	bool text;	      /* the last verdict was DEFER_TEXT */
	uint64_t since;	      /* when this run was first seen */
	uint64_t last_sig;    /* when the last signal went out */
	uint64_t deferred_at; /* the worker's n_deferred at that signal */
	uint64_t async_at;    /* and its n_async at the run's first signal */
	uint32_t last;	      /* run_seq at the previous look */
};

/*
 * One look at worker w; true if it wants a quick second look. due: the
 * run time after which a run is signalled (tick/2, or less while a woken
 * actor waits for this worker: wake_due).
 *
 * An actor is seen running at one look and signalled at the next one
 * that finds it still there, so it overruns by one to two async slices
 * (also right after an idle spell: a worker leaving a sleep pokes the
 * monitor out of its backed-off nap, monitor_main); an actor that began
 * running where the monitor's signal preempted the one before it is
 * signalled at the first look that finds it, after about one slice.
 * A later look that finds it still there asks the handler's verdict: no
 * verdict yet (the worker thread is off the CPU) sends nothing more; a
 * deferral in libc (DEFER_TEXT) re-signals every MON_RETRY_NS, so that
 * a loop spending most of its time there is caught in allowed text
 * within milliseconds (and the next verdict is looked for as often, for
 * up to a tick: a late one, the worker having been off the CPU, must not
 * wait for the next tick); one in libsmarm's own code (DEFER_RUNTIME)
 * starts as often and backs off to a tick (a long runtime call, such as
 * a spawn that grows the slot table, took 20,000 signals a second, and
 * its end is a preemption point); a deferral inside a syscall backs off
 * exponentially (every signal there can end a sleep with EINTR); a
 * disabled region, a host signal handler, a full stack or a
 * patched return (DEFER_PATCHED: the libc call's return preempts, and a
 * signal meanwhile would only be deferred again, 20,000 a second) is
 * asked again once per tick, in case the call runs the actor's own code
 * (a qsort comparator) for long.
 */
static bool monitor_look(struct smarm_node *n, struct smarm__worker *w,
			 struct mon_seen *m, uint64_t now, uint64_t tick,
			 uint64_t due, bool woken)
{
	uint32_t seq = atomic_load_explicit(&w->run_seq, memory_order_relaxed);
	uint64_t d;
	int why;

	if (!(seq & 1) || seq != m->seq) {
		/*
		 * A run that began where our signal preempted the last one
		 * (that signal's preemption counted, and one switch since)
		 * has run since that preemption: judged from then, it is
		 * signalled at this look. Judged from now, every run that
		 * follows a preemption (which lands just after a look) would
		 * be first seen one look later and signalled at the one after
		 * that: two slices each under saturation, and an actor woken
		 * meanwhile waited for them. From when the preemption landed,
		 * not from the signal: a worker thread off its CPU takes the
		 * signal late, and the actor it then runs (a woken one, often)
		 * must not be taken for one that ran since the signal.
		 */
		bool follows = m->signalled && (seq & 1) && seq == m->seq + 2 &&
			       __atomic_load_n(&w->n_async, __ATOMIC_ACQUIRE) ==
				       m->async_at + 1;
		uint64_t at = __atomic_load_n(&w->async_ns, __ATOMIC_RELAXED);
		m->seq = seq; /* idle, in its scheduler, or a new run */
		m->since = follows && at < now ? at : now;
		m->signalled = false;
		m->backoff = 0;
		m->text = false;
		if (!follows)
			return false;
	}
	if (!m->signalled) {
		if (now - m->since < due)
			return false;
		m->async_at = __atomic_load_n(&w->n_async, __ATOMIC_RELAXED);
		m->deferred_at =
			__atomic_load_n(&w->n_deferred, __ATOMIC_ACQUIRE);
		if (woken)
			atomic_store_explicit(&w->stay_seq, seq,
					      memory_order_relaxed);
		m->signalled = send_urg(n, w, seq);
		m->last_sig = now;
		return false;
	}
	d = __atomic_load_n(&w->n_deferred, __ATOMIC_ACQUIRE);
	if (d == m->deferred_at) {
		/*
		 * Not handled yet. A signal can also be lost outright (a
		 * failed sigqueue, or merged into a host SIGURG pending at the
		 * same time, which the handler then passes on): after a few
		 * ticks, send again.
		 */
		if (now - m->last_sig < 4 * tick)
			return m->text && now - m->last_sig < tick;
		m->last_sig = now;
		m->signalled = send_urg(n, w, seq) || m->signalled;
		return false;
	}
	why = __atomic_load_n(&w->defer_why, __ATOMIC_RELAXED);
	if (why == DEFER_SYSCALL) {
		unsigned k = m->backoff < SYSCALL_BACKOFF_MAX
				     ? m->backoff
				     : SYSCALL_BACKOFF_MAX;
		if (now - m->last_sig < (tick << k))
			return false;
		m->backoff++;
	} else if (why == DEFER_RUNTIME) {
		unsigned k = m->backoff < RUNTIME_BACKOFF_MAX
				     ? m->backoff
				     : RUNTIME_BACKOFF_MAX;
		uint64_t wait = (uint64_t)MON_RETRY_NS << k;
		wait = wait < tick ? wait : tick;
		if (now - m->last_sig < wait)
			return wait < tick; /* look again soon */
		m->backoff++;
	} else if (why != DEFER_TEXT && now - m->last_sig < tick) {
		return false;
	}
	m->deferred_at = d;
	m->last_sig = now;
	m->text = why == DEFER_TEXT || why == DEFER_RUNTIME;
	send_urg(n, w, seq);
	return m->text;
}

/*
 * Wake preemption. While every worker runs an actor (none idles or
 * spins), an actor woken meanwhile waits for a runner to leave: the
 * runner whose wake slot holds it, or, for a woken actor in the shared
 * queue or a due timer, whichever has run longest. Left to the slice's
 * end it waited up to a slice (wake_latency p99 11 ms at two workers,
 * the BEAM's 1.4 ms). So that runner is signalled once it has run
 * tick / WAKE_RUN_DIV (500 us of the default 10 ms): actors passing
 * messages back and forth run for microseconds and are never signalled.
 * To see it in time the monitor looks at the next timer's deadline while
 * a worker is busy, and every WAKE_LOOK_NS while a timer is overdue or,
 * every worker busy, one has switched at most once since the last look
 * (a long run); workers that switch between looks (ping-pong) and have
 * no timer pending leave its naps as they were.
 *
 * Sets due[i], the run time after which worker i is signalled (tick / 2
 * when no woken actor waits for it), and woke[i], true when that is a
 * woken actor's shorter run (the signal then does not move the runner:
 * stay_seq), for nw workers, and notes each worker's run_seq for the
 * next look. Returns the nap wanted, or 0.
 */
static uint64_t wake_due(struct smarm_node *n, int nw, struct mon_seen *seen,
			 uint64_t now, uint64_t tick, uint64_t *due, bool *woke)
{
	/* tick / 20, but not below WAKE_LOOK_NS unless that is over half
	 * a tick: a short slice is not cut into slivers */
	uint64_t run = tick / WAKE_RUN_DIV > WAKE_LOOK_NS ? tick / WAKE_RUN_DIV
		       : WAKE_LOOK_NS < tick / 2	  ? WAKE_LOOK_NS
							  : tick / 2;
	uint64_t dl =
		atomic_load_explicit(&n->next_deadline, memory_order_relaxed);
	uint64_t nap = 0;
	bool all = true, any = false, slow = false;
	int oldest = -1;

	for (int i = 0; i < nw; i++) {
		uint32_t seq = atomic_load_explicit(&n->workers[i].run_seq,
						    memory_order_relaxed);
		all &= (seq & 1) != 0;
		any |= (seq & 1) != 0;
		slow |= (seq & 1) && seq - seen[i].last <= 2;
		seen[i].last = seq;
		/* since is this run's only if the last look saw it begin */
		if ((seq & 1) && seq == seen[i].seq &&
		    (oldest < 0 || seen[i].since < seen[oldest].since))
			oldest = i;
	}
	all &= (atomic_load_explicit(&n->idle_mask, memory_order_relaxed) |
		atomic_load_explicit(&n->spin_mask, memory_order_relaxed)) == 0;
	if (all && slow && WAKE_LOOK_NS < tick)
		nap = WAKE_LOOK_NS;
	if (any && dl != UINT64_MAX) {
		/*
		 * Toward the next deadline (every worker may be busy by
		 * then): a look a run's time before it, so that the runs
		 * then are known to have run that long at it, and one at
		 * it; past it, while it waits.
		 */
		uint64_t t = dl <= now		  ? WAKE_LOOK_NS
			     : dl - now > 2 * run ? dl - now - run
						  : dl - now;
		if (t < MON_RETRY_NS)
			t = MON_RETRY_NS;
		if (t < tick && (nap == 0 || t < nap))
			nap = t;
	}
	for (int i = 0; i < nw; i++) {
		bool woken =
			all && atomic_load_explicit(&n->workers[i].next,
						    memory_order_relaxed) != 0;
		if (all && i == oldest)
			woken |= dl <= now ||
				 atomic_load_explicit(&n->rq_woken,
						      memory_order_relaxed) > 0;
		/*
		 * A run is signalled after about a tick either way: at the
		 * look after the one that finds it past tick / 2 when looks
		 * are a tick apart, and at tick less half a look when the
		 * next look comes sooner.
		 */
		due[i] = nap != 0 ? tick - nap / 2 : tick / 2;
		woke[i] = woken && run < due[i];
		if (woke[i])
			due[i] = run;
	}
	return nap;
}

/*
 * Whether the monitor must scan wake slots: several workers, one busy
 * and another idle (parked or spinning). Only then can a slot entry wait
 * behind a long-running actor while a worker could take it.
 */
static bool scan_wanted(struct smarm_node *n, int nw, bool busy)
{
	return nw > 1 && busy &&
	       (atomic_load_explicit(&n->idle_mask, memory_order_relaxed) |
		atomic_load_explicit(&n->spin_mask, memory_order_relaxed)) != 0;
}

/*
 * Publish when a nap of nap ns ends (mon_until), then look at the next
 * deadline once more: a timer inserted since the nap was chosen either
 * sees mon_until and wakes the monitor, or is seen here (Dekker, both
 * sides seq_cst). The nap, shortened to that deadline if it is sooner.
 */
static uint64_t nap_until(struct smarm_node *n, uint64_t nap)
{
	uint64_t now = smarm__clock_ns();
	uint64_t dl;
	atomic_store_explicit(&n->mon_until, now + nap, memory_order_seq_cst);
	dl = atomic_load_explicit(&n->next_deadline, memory_order_seq_cst);
	if (dl < now + nap) {
		nap = dl > now + MON_RETRY_NS ? dl - now : MON_RETRY_NS;
		atomic_store_explicit(&n->mon_until, now + nap,
				      memory_order_seq_cst);
	}
	return nap;
}

/*
 * The monitor thread: preemption looks (when async preemption is on) and
 * the wake-slot scan (several workers). It naps one async slice while a
 * worker runs actors (less while every worker runs long: wake_due),
 * backs off to MON_MAX_SLEEP_NS while none does, and naps
 * SMARM__SLOT_SCAN_NS while it scans. Before a nap longer than a
 * scan period it sets mon_deep (seq_cst; SMARM__MON_BACKED when the nap
 * is longer than an async slice, SMARM__MON_LONG otherwise) and then
 * looks once more at what would shorten it; a worker that starts idling
 * while others run pokes a LONG or BACKED nap, one that leaves a sleep a
 * BACKED one (smarm__monitor_poke: idle bit or leaving first, fence,
 * then mon_deep). Dekker again: either the monitor sees the idle or
 * running worker and naps short, or the worker sees mon_deep and wakes
 * it. A poked monitor forgets its back-off, so the first actor after an
 * idle spell is watched from its start; a nap of one slice is not
 * poked by a worker leaving a sleep (it looks within the slice anyway),
 * so a request-reply server pays no monitor wake per request.
 */
static void *monitor_main(void *arg)
{
	struct smarm_node *n = arg;
	struct mon_seen seen[SMARM__MAX_WORKERS];
	struct smarm__slot_seen slots[SMARM__MAX_WORKERS];
	uint64_t due[SMARM__MAX_WORKERS];
	bool woke[SMARM__MAX_WORKERS] = { 0 };
	uint64_t tick = n->async_ns;
	uint64_t quick = 0; /* wake_due's nap, or 0 */
	unsigned idle_ticks = 0;
	uint64_t np_seen[2] = { 0 }; /* smarm__netpoll_look's memory */
	bool retry = false;
	bool scan = false;
	int nw = atomic_load(&n->workers_started);

	smarm__thread_name("monitor", -1);
	memset(seen, 0, sizeof seen);
	memset(slots, 0, sizeof slots);
	for (;;) {
		uint64_t nap = tick << (idle_ticks < 8 ? idle_ticks : 8);
		uint64_t now;
		bool busy = false;
		bool deep;
		bool poked = false;
		if (nap > MON_MAX_SLEEP_NS)
			nap = MON_MAX_SLEEP_NS > tick ? MON_MAX_SLEEP_NS : tick;
		if (scan && nap > SMARM__SLOT_SCAN_NS)
			nap = SMARM__SLOT_SCAN_NS;
		if (quick != 0 && nap > quick)
			nap = quick;
		if (retry)
			nap = MON_RETRY_NS;
		retry = false;
		deep = nap > SMARM__SLOT_SCAN_NS;
		if (deep) {
			atomic_store_explicit(&n->mon_deep,
					      nap > tick ? SMARM__MON_BACKED
							 : SMARM__MON_LONG,
					      memory_order_seq_cst);
			atomic_thread_fence(memory_order_seq_cst);
			for (int i = 0; i < nw; i++)
				busy |= atomic_load_explicit(
						&n->workers[i].run_seq,
						memory_order_relaxed) &
					1;
			if (scan_wanted(n, nw, busy))
				nap = SMARM__SLOT_SCAN_NS;
			else if (idle_ticks > 0 &&
				 atomic_load_explicit(&n->idle_mask,
						      memory_order_relaxed) !=
					 (nw == 64 ? ~0ull : (1ull << nw) - 1))
				nap = tick; /* a worker is up again */
		}
		nap = nap_until(n, nap);
		smarm__futex_wait((uint32_t *)&n->mon_stop, 0, nap);
		atomic_store_explicit(&n->mon_until, 0, memory_order_relaxed);
		if (deep)
			poked = atomic_exchange_explicit(
					&n->mon_deep, 0,
					memory_order_seq_cst) == 0;
		if (atomic_load_explicit(&n->mon_stop, memory_order_acquire))
			break;
		now = smarm__clock_ns();
		busy = false;
		quick = n->preempt_async
				? wake_due(n, nw, seen, now, tick, due, woke)
				: 0;
		for (int i = 0; i < nw; i++) {
			struct smarm__worker *w = &n->workers[i];
			if (n->preempt_async)
				retry |= monitor_look(n, w, &seen[i], now, tick,
						      due[i], woke[i]);
			busy |= atomic_load_explicit(&w->run_seq,
						     memory_order_relaxed) &
				1;
		}
		idle_ticks = busy || poked ? 0 : idle_ticks + 1;
		scan = scan_wanted(n, nw, busy);
		if (scan)
			smarm__slots_scan(n, slots);
		smarm__netpoll_look(n, np_seen, now);
		if (n->pk_ns != 0)
			smarm__pstk_sweep(n, now);
	}
	return NULL;
}

/*
 * A worker began idling while others run (level SMARM__MON_LONG), or
 * left a sleep (SMARM__MON_BACKED): wake the monitor if it naps that
 * long (see monitor_main). One relaxed load when it does not; a futex
 * wake at most once per long nap.
 */
void smarm__monitor_poke(struct smarm_node *n, uint32_t level)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&n->mon_deep, memory_order_relaxed) >= level &&
	    atomic_exchange_explicit(&n->mon_deep, 0, memory_order_seq_cst) !=
		    0)
		smarm__futex_wake((uint32_t *)&n->mon_stop, 1);
}

/*
 * A timer inserted while the monitor naps past its deadline wakes it, so
 * that wake_due looks at the deadline: every worker may be busy then.
 * One load when it does not; a wake at most once per nap.
 */
void smarm__monitor_timer(struct smarm_node *n, uint64_t deadline)
{
	uint64_t until;
	atomic_thread_fence(memory_order_seq_cst); /* after next_deadline */
	until = atomic_load_explicit(&n->mon_until, memory_order_relaxed);
	if (until != 0 && deadline < until &&
	    atomic_exchange_explicit(&n->mon_until, 0, memory_order_seq_cst) !=
		    0)
		smarm__futex_wake((uint32_t *)&n->mon_stop, 1);
}

/*
 * The monitor runs when async preemption is on, with several workers
 * for the wake-slot scan even when it is off, and to release parked
 * stacks (SMARM_OPT_STACK_RELEASE_NS > 0: parkstk.c).
 */
void smarm__monitor_start(struct smarm_node *n)
{
	n->mon_running = false;
	atomic_store(&n->mon_deep, 0);
	atomic_store(&n->mon_until, 0);
	if (!n->preempt_async && n->workers_n < 2 && n->pk_ns == 0)
		return;
	if (n->preempt_async)
		smarm__preempt_setup();
	atomic_store(&n->mon_stop, 0);
	n->mon_running =
		pthread_create(&n->mon_thread, NULL, monitor_main, n) == 0;
}

void smarm__monitor_stop(struct smarm_node *n)
{
	if (!n->mon_running)
		return;
	atomic_store_explicit(&n->mon_stop, 1, memory_order_release);
	smarm__futex_wake((uint32_t *)&n->mon_stop, 1);
	pthread_join(n->mon_thread, NULL);
	n->mon_running = false;
}

/* ------------------------------------------------------------ public */

/* Objects whose text must never be preempted, whatever the host says. */
static bool denied_object(const char *path)
{
	static const char *const deny[] = { "libc.so",	   "ld-linux",
					    "libffi.so",   "libsmarm.so",
					    "libasan.so",  "libubsan.so",
					    "libpthread.", "libgcc_s.so",
					    "libm.so",	   "libdl.so" };
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof deny / sizeof deny[0]; i++)
		if (strncmp(base, deny[i], strlen(deny[i])) == 0)
			return true;
	return false;
}

/*
 * The object containing addr, with a dlopen reference on it (*handle;
 * NULL for the executable, which cannot be unloaded), or an error:
 * SMARM_ENOENT in no loaded object (or being unloaded), SMARM_EINVAL an
 * object that must never be preemptible.
 */
static int object_hold(const void *addr, struct find_obj *f, void **handle)
{
	struct find_obj self = { 0 };
	Dl_info info = { 0 };
	struct link_map *lm = NULL;

	*handle = NULL;
	memset(f, 0, sizeof *f);
	f->addr = (uintptr_t)addr;
	dl_iterate_phdr(find_obj_cb, f);
	if (!f->found || f->n == 0)
		return SMARM_ENOENT;
	self.addr = (uintptr_t)(void *)smarm__preempt_allow_object;
	dl_iterate_phdr(find_obj_cb, &self);
	if (self.found && self.n > 0 && self.lo[0] == f->lo[0])
		return SMARM_EINVAL; /* libsmarm itself */
	if (f->exe)
		return 0;
	if (dladdr(addr, &info) == 0 || info.dli_fname == NULL)
		return SMARM_ENOENT;
	if (denied_object(info.dli_fname))
		return SMARM_EINVAL;
	/*
	 * A reference by name, then a check that it is the object we found
	 * (it could have been unloaded and another loaded meanwhile): from
	 * here on its text cannot be unmapped.
	 */
	*handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (*handle == NULL)
		return SMARM_ENOENT;
	if (dlinfo(*handle, RTLD_DI_LINKMAP, &lm) != 0 || lm == NULL ||
	    (uintptr_t)lm->l_addr != f->base) {
		dlclose(*handle);
		*handle = NULL;
		return SMARM_ENOENT;
	}
	return 0;
}

/* smarm_preempt_allow_object (core_api.c validated addr). */
int smarm__preempt_allow_object(const void *addr)
{
	struct find_obj f;
	void *handle;
	void *drop = NULL;
	int rc;

	pthread_once(&preempt_once, preempt_init);
	rc = object_hold(addr, &f, &handle);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&ranges_lock);
	if (allowed_find(f.lo[0]) != NULL) {
		drop = handle; /* allowed already: one reference is enough */
	} else if (ranges_free() < f.n || allowed_find(0) == NULL) {
		drop = handle;
		rc = SMARM_ENOMEM;
	} else {
		allowed_add(f.lo[0], handle, f.n, f.lo, f.hi);
	}
	pthread_mutex_unlock(&ranges_lock);
	if (drop != NULL)
		dlclose(drop); /* may run the object's destructors: unlocked */
	return rc;
}

/* smarm_preempt_disallow_object (core_api.c validated addr). */
int smarm__preempt_disallow_object(const void *addr)
{
	struct find_obj f = { 0 };
	struct allowed *a;
	void *drop = NULL;
	int rc = SMARM_ENOENT;

	pthread_once(&preempt_once, preempt_init);
	f.addr = (uintptr_t)addr;
	dl_iterate_phdr(find_obj_cb, &f);
	if (!f.found || f.n == 0)
		return SMARM_ENOENT;
	pthread_mutex_lock(&ranges_lock);
	a = allowed_find(f.lo[0]);
	if (a != NULL) {
		drop = allowed_remove(a);
		rc = 0;
	}
	pthread_mutex_unlock(&ranges_lock);
	if (drop != NULL)
		dlclose(drop); /* the last reference unloads: unlocked */
	return rc;
}

void smarm__nopreempt_enter(struct smarm__slot *s)
{
	if (s != NULL)
		s->rt_nopreempt++;
}

void smarm__nopreempt_leave(struct smarm__slot *s)
{
	if (s != NULL)
		s->rt_nopreempt--;
}
