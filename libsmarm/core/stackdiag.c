/* SPDX-License-Identifier: MIT */
/*
 * stackdiag.c - the fault handler: one process-wide handler of SIGSEGV,
 * SIGBUS, SIGFPE and SIGILL that first lets fault.c contain a fault an
 * actor asked to survive (SMARM_OPT_CONTAIN_FAULTS), and otherwise tells
 * an actor's stack overflow apart from any other fault, says so on
 * stderr (with why it was not contained, where containment was asked
 * for), and lets the process die by the signal.
 *
 * The handler is installed once per process (pthread_once) by the first
 * smarm_node_open, before any worker thread of any node exists, so the
 * handler it replaces (the *prior* one) is saved without a race. It runs
 * on the worker's alternate signal stack (SA_ONSTACK; workers install one
 * for the span of a run), since a guard hit leaves no stack to run on.
 *
 * Classification, for the actor on the faulting thread's CPU (found
 * through smarm__tls_worker->cur, an initial-exec TLS load, safe here),
 * with guard_hi = its usable base and guard_lo = guard_hi - guard:
 *   guard      guard_lo <= addr < guard_hi: definitive (tier 1).
 *   overshoot  guard_lo - SLOP <= addr < guard_lo (SLOP 1 MiB, the low
 *              bound saturating at 0): an unprobed frame stepped over the
 *              guard, probably (tier 2).
 *   foreign    anything else: the usable region, above the top, another
 *              thread's stack, no actor on the CPU.
 * Only the address counts, never si_code: a PROT_NONE guard (a stack
 * with a mapping of its own) faults with SEGV_ACCERR, a guard region (a
 * stack carved from a chunk, stack.c) with SEGV_MAPERR.
 * Tiers 1 and 2 write one line to fd 2 (a stack buffer, hand-rolled
 * decimals, one write(2): no stdio, no allocation, no lock), reset the
 * signal to SIG_DFL and return; the faulting instruction runs again and
 * the process dies of the signal, core dump and wait status intact. A
 * foreign fault reinstalls the prior handler and returns, so the fault
 * reaches it (or the default action); the process is dying anyway, so
 * smarm staying deregistered afterwards is accepted. When that prior
 * disposition is SIG_DFL or SIG_IGN the fault is fatal, and if an actor
 * was running, one line names it (its pid) and the file holding the
 * faulting code and the offset in it (smarm__addr_file: the memory
 * map, read with system calls; dladdr would take the loader's lock).
 * Both kinds of line name the actor by its pid and by what the layers
 * above recorded of it beforehand (core/subsys.h labels: a registered
 * name; the behaviour and plugin a server or machine runs), copies the
 * handler reads in place: nothing is looked up at fault time.
 *
 * A signal that is not a fault (si_code <= 0: kill(2), raise(3),
 * sigqueue(3), tgkill(2)) re-executes nothing: it is handed on at once
 * as the prior disposition says (the prior handler called, ignored, or
 * the default action taken by raising it again with SIG_DFL), and the
 * handler stays installed.
 *
 * Dense stacks have no guard (guard = 0): only the overshoot tier can
 * name them, for a fault at most 1 MiB below the stack; their overflows
 * are normally caught by the canary check in stack.c instead.
 *
 * A host may dlclose libsmarm; the handler's code would then be gone
 * while the kernel still points at it. The library's destructor puts the
 * prior handlers back if ours is still the installed one.
 *
 * Ownership: prior_* and installed are written once, under the once
 * guard, before any thread can fault into the handler; read-only
 * afterwards.
 * Locking: none (async-signal context).
 * Invariants: INV-1 the handler calls only async-signal-safe functions
 * (write, sigaction, raise, smarm__addr_file's open/read/close, and a
 * prior handler, which the host installed as a signal handler). INV-2 the slot
 * fields it reads are stable while the actor is on the faulting thread's CPU.
 * INV-3 label text is read in place, bounded (SMARM__LABEL_MAX), from a
 * block or an interned text that is never freed while the node is open:
 * another thread rewriting a label can garble the line's label, never
 * the handler.
 * See: docs/architecture/stacks.md (Stack overflow diagnostics),
 * docs/embedding.md (Stack overflows).
 */

#include "stack.h"

#include "fault.h"
#include "node.h"
#include "sched.h"
#include "slot.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define OVERSHOOT_SLOP ((uintptr_t)1 << 20)

static pthread_once_t diag_once = PTHREAD_ONCE_INIT;
/* The signals handled, and the dispositions they had before ours. */
static const int fault_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define NSIGS (sizeof fault_sigs / sizeof fault_sigs[0])
static struct sigaction prior[NSIGS];
static bool installed; /* install() ran: prior[] is valid */

/* Append s to buf at *at (bounded by cap). */
static void put_str(char *buf, size_t cap, size_t *at, const char *s)
{
	while (*s != '\0' && *at < cap)
		buf[(*at)++] = *s++;
}

/* Append v in decimal. */
static void put_u64(char *buf, size_t cap, size_t *at, uint64_t v)
{
	char tmp[24];
	size_t k = 0;
	do {
		tmp[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (k > 0 && *at < cap)
		buf[(*at)++] = tmp[--k];
}

/* Append v in hexadecimal (no prefix). */
static void put_hex(char *buf, size_t cap, size_t *at, uint64_t v)
{
	char tmp[16];
	size_t k = 0;
	do {
		tmp[k++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0);
	while (k > 0 && *at < cap)
		buf[(*at)++] = tmp[--k];
}

/*
 * Append label text (at most SMARM__LABEL_MAX - 1 bytes, read as they
 * are: a rewrite may be under way) with anything unprintable as '?', so
 * the report stays one line.
 */
static void put_label(char *buf, size_t cap, size_t *at, const char *text)
{
	for (size_t i = 0;
	     i < SMARM__LABEL_MAX - 1 && text[i] != '\0' && *at < cap; i++) {
		char c = text[i];
		buf[(*at)++] = c >= 0x20 && c < 0x7f ? c : '?';
	}
}

/*
 * Append "smarm: actor INDEX.GEN", and what the layers above recorded of
 * it (core/subsys.h labels): " (name 'N', gen_server 'B' of plugin
 * 'P')", either part alone, or nothing. Reads the slot's label block
 * without a lock (INV-2, INV-3).
 */
static void put_actor(char *buf, size_t cap, size_t *at,
		      const struct smarm__slot *s)
{
	uint64_t word = atomic_load_explicit(&s->word, memory_order_relaxed);
	const struct smarm__ext *x = s->ext;
	const char *name =
		x != NULL ? __atomic_load_n(&x->x_label[SMARM__LABEL_NAME],
					    __ATOMIC_ACQUIRE)
			  : NULL;
	const char *bhv =
		x != NULL ? __atomic_load_n(&x->x_label[SMARM__LABEL_BEHAVIOUR],
					    __ATOMIC_ACQUIRE)
			  : NULL;
	if (name == NULL)
		name = "";
	if (bhv == NULL)
		bhv = "";
	put_str(buf, cap, at, "smarm: actor ");
	put_u64(buf, cap, at, smarm__slot_index(s));
	put_str(buf, cap, at, ".");
	put_u64(buf, cap, at, SMARM__W_GEN(word));
	if (name[0] == '\0' && bhv[0] == '\0')
		return;
	put_str(buf, cap, at, " (");
	if (name[0] != '\0') {
		put_str(buf, cap, at, "name '");
		put_label(buf, cap, at, name);
		put_str(buf, cap, at, bhv[0] != '\0' ? "', " : "'");
	}
	put_label(buf, cap, at, bhv);
	put_str(buf, cap, at, ")");
}

size_t smarm__stackdiag_actor(const struct smarm__slot *s, char *buf,
			      size_t cap)
{
	size_t at = 0;
	put_actor(buf, cap, &at, s);
	return at;
}

static void die_by_default(int sig)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
}

/*
 * Classify a fault at addr against a stack whose base (its guard's low
 * end: a mapping's start, or a slot of a chunk) is `base`, with `guard`
 * guard and `reserve` usable bytes.
 * Pure and async-signal-safe. *below: bytes under the guard (overshoot).
 */
int smarm__stackdiag_classify(uintptr_t addr, uintptr_t base, size_t guard,
			      size_t reserve, uintptr_t *below)
{
	uintptr_t guard_lo = base;
	uintptr_t guard_hi = base + guard;
	uintptr_t slop_lo =
		guard_lo > OVERSHOOT_SLOP ? guard_lo - OVERSHOOT_SLOP : 0;
	(void)reserve; /* the usable region and above are foreign alike */
	if (addr >= guard_lo && addr < guard_hi)
		return SMARM__FAULT_GUARD;
	if (addr >= slop_lo && addr < guard_lo) {
		*below = guard_lo - addr;
		return SMARM__FAULT_OVERSHOOT;
	}
	return SMARM__FAULT_FOREIGN;
}

/* The disposition sig had before ours. */
static const struct sigaction *prior_of(int sig)
{
	size_t i = 0;
	while (i + 1 < NSIGS && fault_sigs[i] != sig)
		i++;
	return &prior[i];
}

const char *smarm__fault_sig_name(int sig)
{
	switch (sig) {
	case SIGBUS:
		return "SIGBUS";
	case SIGFPE:
		return "SIGFPE";
	case SIGILL:
		return "SIGILL";
	case SIGABRT:
		return "SIGABRT";
	default:
		return "SIGSEGV";
	}
}

/*
 * Hand a sent (not faulted) sig on as the prior disposition says. SIG_DFL
 * and SIG_IGN are tested first: sa_handler and sa_sigaction share their
 * storage, and a default action saved with SA_SIGINFO set is NULL there.
 */
static void pass_on(int sig, siginfo_t *si, void *uctx)
{
	const struct sigaction *p = prior_of(sig);
	if (p->sa_handler == SIG_IGN) {
		return;
	} else if (p->sa_handler == SIG_DFL) {
		die_by_default(sig);
		raise(sig); /* pending (sig is masked here) until we return */
	} else if (p->sa_flags & SA_SIGINFO) {
		p->sa_sigaction(sig, si, uctx);
	} else {
		p->sa_handler(sig);
	}
}

/* Whether the prior disposition of sig lets a fault kill the process. */
static bool fault_is_fatal(int sig)
{
	const struct sigaction *p = prior_of(sig);
	return p->sa_handler == SIG_DFL || p->sa_handler == SIG_IGN;
}

/* Why a fault an actor asked to survive was fatal, if it asked. */
static void put_why(char *buf, size_t cap, size_t *at, const char *why)
{
	if (why == NULL)
		return;
	put_str(buf, cap, at, "; not contained: ");
	put_str(buf, cap, at, why);
}

/* A fatal fault in actor s (not an overflow): one line on fd 2. */
static void say_fatal(int sig, const struct smarm__slot *s, uintptr_t addr,
		      const void *uctx, const char *why)
{
	uintptr_t pc = smarm__uc_pc(uctx);
	uintptr_t off = 0;
	char file[160];
	char buf[896];
	size_t at = 0;
	put_actor(buf, sizeof buf, &at, s);
	put_str(buf, sizeof buf, &at, " died of ");
	put_str(buf, sizeof buf, &at, smarm__fault_sig_name(sig));
	if (sig != SIGABRT) {
		put_str(buf, sizeof buf, &at, ": fault at 0x");
		put_hex(buf, sizeof buf, &at, addr);
		put_str(buf, sizeof buf, &at, ",");
	}
	put_str(buf, sizeof buf, &at, " code at pc 0x");
	put_hex(buf, sizeof buf, &at, pc);
	if (smarm__addr_file(pc, file, sizeof file, &off)) {
		put_str(buf, sizeof buf, &at, " in ");
		put_str(buf, sizeof buf, &at, file);
		put_str(buf, sizeof buf, &at, " (+0x");
		put_hex(buf, sizeof buf, &at, off);
		put_str(buf, sizeof buf, &at, ")");
	} else {
		put_str(buf, sizeof buf, &at, " (in no mapped file)");
	}
	put_why(buf, sizeof buf, &at, why);
	put_str(buf, sizeof buf, &at, "\n");
	if (at == sizeof buf)
		buf[at - 1] = '\n';
	if (write(2, buf, at) < 0)
		at = 0; /* nothing more to do about it */
}

static void on_fault(int sig, siginfo_t *si, void *uctx)
{
	struct smarm__worker *w = smarm__tls_worker;
	struct smarm__slot *s = w != NULL ? w->cur : NULL;
	uintptr_t addr = (uintptr_t)si->si_addr;
	uintptr_t base;
	uintptr_t top;
	uintptr_t below = 0;
	const char *why;
	char buf[800];
	size_t at = 0;
	int kind;
	bool guard_hit;

	if (smarm__fault_contain(si, uctx, &why))
		return; /* the actor ends (fault.c); the process goes on */
	if (si->si_code <= 0) {
		/* Sent, not faulted (abort() included): handed on. An
		 * abort() the actor asked to survive says why it did not. */
		if (why != NULL && s != NULL && fault_is_fatal(sig))
			say_fatal(sig, s, addr, uctx, why);
		pass_on(sig, si, uctx);
		return;
	}
	base = s != NULL ? (uintptr_t)s->stk_base : 0;
	if (base == 0 || (sig != SIGSEGV && sig != SIGBUS))
		goto foreign;
	kind = smarm__stackdiag_classify(addr, base, s->stk_guard,
					 s->stk_reserve, &below);
	if (kind == SMARM__FAULT_FOREIGN)
		goto foreign;
	guard_hit = kind == SMARM__FAULT_GUARD;
	top = base + s->stk_guard + s->stk_reserve;

	put_actor(buf, sizeof buf, &at, s);
	if (guard_hit) {
		put_str(buf, sizeof buf, &at,
			" overflowed its stack: fault in the guard region, "
			"depth-at-fault=");
		put_u64(buf, sizeof buf, &at, top - addr);
		put_str(buf, sizeof buf, &at, " bytes");
	} else {
		put_str(buf, sizeof buf, &at,
			" probably overflowed its stack: fault ");
		put_u64(buf, sizeof buf, &at, below);
		put_str(buf, sizeof buf, &at,
			" bytes below the guard - an unprobed (FFI?) frame "
			"stepped over it");
	}
	put_str(buf, sizeof buf, &at, " (reserve=");
	put_u64(buf, sizeof buf, &at, s->stk_reserve);
	put_str(buf, sizeof buf, &at, ", guard=");
	put_u64(buf, sizeof buf, &at, s->stk_guard);
	put_str(buf, sizeof buf, &at,
		guard_hit ? "). Raise SMARM_OPT_STACK_RESERVE (spawn option or "
			    "node config)."
			  : "). Raise SMARM_OPT_STACK_GUARD or "
			    "SMARM_OPT_STACK_RESERVE.");
	put_why(buf, sizeof buf, &at, why);
	put_str(buf, sizeof buf, &at, "\n");
	if (at == sizeof buf)
		buf[at - 1] = '\n';
	if (write(2, buf, at) < 0)
		at = 0; /* nothing more to do about it */
	die_by_default(sig);
	return;

foreign:
	if (s != NULL && fault_is_fatal(sig))
		say_fatal(sig, s, addr, uctx, why);
	sigaction(sig, prior_of(sig), NULL);
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSIGS; i++)
		sigaction(fault_sigs[i], &sa, &prior[i]);
	installed = true;
}

/* Restore sig's prior handler if on_fault is still the one installed. */
static void restore_if_ours(int sig, const struct sigaction *prior)
{
	struct sigaction cur;
	if (sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction == on_fault)
		sigaction(sig, prior, NULL);
}

/* dlclose (or exit): leave no handler pointing into unmapped code. */
__attribute__((destructor)) static void uninstall(void)
{
	if (!installed)
		return;
	for (size_t i = 0; i < NSIGS; i++)
		restore_if_ours(fault_sigs[i], &prior[i]);
}

void smarm__stackdiag_install(void)
{
	pthread_once(&diag_once, install);
}
