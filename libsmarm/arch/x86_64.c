/* SPDX-License-Identifier: MIT */
/*
 * x86_64.c - the CPU half of arch.h that is plain C, for x86-64 SysV:
 * the initial frame of a fresh actor stack, the probe that sizes the
 * preemption trampoline's save area (XSAVE, else FXSAVE), and the
 * ucontext accessors with which the SIGURG handler reads an interrupted
 * actor's pc and sp, tells whether it stopped at a syscall instruction,
 * and diverts it into that trampoline; and a reader of DWARF call-frame
 * information (.eh_frame_hdr / .eh_frame) that unwinds an interrupted
 * actor one frame at a time, for return-path preemption; and the cache
 * line eviction (CLFLUSHOPT, else CLFLUSH). The context switch and the
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
 *   INV-4 the smarm__uc_* functions and smarm__unwind_step are
 *         async-signal-safe: no allocation, lock or call out; the
 *         unwinder reads only the unwind tables it is given and stack
 *         words inside the bounds it is given, and treats every rule it
 *         does not know as "cannot unwind".
 * See: docs/architecture/preemption.md.
 */

#include "arch.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

/* Below the interrupted sp: the SysV red zone, then a slot for the pc. */
#define DIVERT_DROP (128 + 8)

/*
 * Read by smarm__preempt_tramp: the XSAVE area size for the state the OS
 * enabled, and whether to use xsave at all (else fxsave, 512 bytes).
 */
uint64_t smarm__xsave_size = 512;

/* Read by the thunks' common entry (x86_64.S) only: used, so that LTO
 * keeps every store of it. */
__attribute__((used)) smarm__thunk_fn smarm__thunk_handler;
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

/* Whether CLFLUSHOPT is there (CPUID.(EAX=7,ECX=0):EBX bit 23): 0 not
 * asked yet, 1 no, 2 yes. Any thread may ask; every answer is the same. */
static _Atomic int have_clflushopt;

static bool clflushopt_probe(void)
{
	int v = atomic_load_explicit(&have_clflushopt, memory_order_relaxed);
	if (v == 0) {
		unsigned a, b, c, d;
		__asm__ volatile("cpuid"
				 : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
				 : "a"(0), "c"(0));
		b = 0;
		if (a >= 7)
			__asm__ volatile("cpuid"
					 : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
					 : "a"(7), "c"(0));
		v = (b & (1u << 23)) ? 2 : 1;
		atomic_store_explicit(&have_clflushopt, v,
				      memory_order_relaxed);
	}
	return v == 2;
}

__attribute__((target("clflushopt"))) static void evict_opt(uintptr_t a,
							    uintptr_t end)
{
	for (; a < end; a += 64)
		__builtin_ia32_clflushopt((const void *)a);
}

void smarm__lines_evict(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)63;
	uintptr_t end = (uintptr_t)p + n;
	if (n == 0)
		return;
	if (clflushopt_probe()) {
		evict_opt(a, end);
		return;
	}
	for (; a < end; a += 64)
		__builtin_ia32_clflush((const void *)a);
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

void smarm__uc_fault_divert(void *ctx, uintptr_t at,
			    void (*fn)(int, int, uintptr_t, uintptr_t), int a0,
			    int a1, uintptr_t a2, uintptr_t a3)
{
	ucontext_t *uc = ctx;
	uintptr_t sp = (at & ~(uintptr_t)15) - 8; /* as after a call */
	uintptr_t ra = 0;
	memcpy((void *)sp, &ra, sizeof ra);
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)fn;
	uc->uc_mcontext.gregs[REG_RDI] = (greg_t)a0;
	uc->uc_mcontext.gregs[REG_RSI] = (greg_t)a1;
	uc->uc_mcontext.gregs[REG_RDX] = (greg_t)a2;
	uc->uc_mcontext.gregs[REG_RCX] = (greg_t)a3;
	uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)0x400; /* DF: the ABI's */
	if (uc->uc_mcontext.fpregs !=
	    NULL) { /* the ABI's FPU state at a call */
		uc->uc_mcontext.fpregs->cwd = 0x037f;
		uc->uc_mcontext.fpregs->swd = 0;
		uc->uc_mcontext.fpregs->ftw = 0; /* x87 stack empty */
		uc->uc_mcontext.fpregs->mxcsr = 0x1f80;
	}
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

/* ------------------------------------------------- return-path unwinding */

/*
 * A small reader of DWARF call-frame information (.eh_frame, found
 * through .eh_frame_hdr's sorted table), for one question: from a pc and
 * sp inside a non-preemptible object, where on the stack is the address
 * its outermost frame returns to? It understands the rules compilers and
 * glibc's assembly emit for x86-64 (CFA = rsp or rbp + offset, the return
 * address and rbp saved at CFA + offset, remember/restore state) and
 * answers "unknown" to anything else (expressions, 64-bit lengths, other
 * table encodings): the caller then just defers, as before.
 */

/* DWARF register numbers (x86-64 psABI). */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16

#define UW_STATE_DEPTH 8

struct uw_rule {
	int how; /* UW_SAME, UW_OFFSET, UW_BAD */
	int64_t off;
};

enum { UW_SAME = 0, UW_OFFSET = 1, UW_BAD = 2 };

struct uw_row {
	int cfa_reg; /* DW_RSP or DW_RBP; -1: not understood */
	int64_t cfa_off;
	struct uw_rule ra, bp;
};

struct uw_cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t uw_uleb(struct uw_cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (c->p < c->end) {
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static int64_t uw_sleb(struct uw_cursor *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;
	while (c->p < c->end) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	c->bad = true;
	return 0;
}

static uint64_t uw_fixed(struct uw_cursor *c, size_t n)
{
	uint64_t v = 0;
	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, n); /* little-endian */
	c->p += n;
	return v;
}

/* A pointer in DWARF EH encoding enc; pcrel is relative to its field. */
static uintptr_t uw_ptr(struct uw_cursor *c, uint8_t enc)
{
	const uint8_t *field = c->p;
	uint64_t v;
	if (enc == 0xff) { /* DW_EH_PE_omit */
		c->bad = true;
		return 0;
	}
	switch (enc & 0x0f) {
	case 0x00:
		v = uw_fixed(c, 8);
		break; /* absptr */
	case 0x01:
		v = uw_uleb(c);
		break; /* uleb128 */
	case 0x02:
		v = uw_fixed(c, 2);
		break; /* udata2 */
	case 0x03:
		v = uw_fixed(c, 4);
		break; /* udata4 */
	case 0x04:
		v = uw_fixed(c, 8);
		break; /* udata8 */
	case 0x09:
		v = (uint64_t)uw_sleb(c);
		break; /* sleb128 */
	case 0x0a:
		v = (uint64_t)(int16_t)uw_fixed(c, 2);
		break;
	case 0x0b:
		v = (uint64_t)(int32_t)uw_fixed(c, 4);
		break;
	case 0x0c:
		v = uw_fixed(c, 8);
		break;
	default:
		c->bad = true;
		return 0;
	}
	switch (enc & 0x70) {
	case 0x00:
		break; /* absolute */
	case 0x10:
		v += (uint64_t)(uintptr_t)field;
		break; /* pcrel */
	default:
		c->bad = true;
		return 0;
	}
	return (uintptr_t)v;
}

/* The FDE covering pc, through the binary-search table of .eh_frame_hdr. */
static const uint8_t *uw_find_fde(const uint8_t *hdr, uintptr_t pc)
{
	const int32_t *tab;
	uint32_t lo = 0, hi;
	/* version 1, eh_frame_ptr pcrel|sdata4, count udata4,
	 * table datarel|sdata4: what GNU ld and lld write. */
	if (hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return NULL;
	memcpy(&hi, hdr + 8, 4);
	tab = (const int32_t *)(const void *)(hdr + 12);
	if (hi == 0 || pc < (uintptr_t)hdr + (intptr_t)tab[0])
		return NULL;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)hdr + (intptr_t)tab[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return hdr + (intptr_t)tab[2 * lo + 1];
}

/* Run CFA instructions [c) until the row for pc (loc starts at *loc). */
static void uw_exec(struct uw_cursor *c, struct uw_row *row,
		    const struct uw_row *init, uint64_t caf, int64_t daf,
		    uintptr_t loc, uintptr_t pc)
{
	struct uw_row stack[UW_STATE_DEPTH];
	int depth = 0;
	while (c->p < c->end && !c->bad) {
		uint8_t op = *c->p++;
		uint64_t reg, delta = 0;
		int64_t off;
		struct uw_rule *r;
		switch (op & 0xc0) {
		case 0x40: /* advance_loc */
			delta = (op & 0x3f) * caf;
			goto advance;
		case 0x80: /* offset */
			reg = op & 0x3f;
			off = (int64_t)uw_uleb(c) * daf;
			goto set_offset;
		case 0xc0: /* restore */
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case 0x00: /* nop */
			continue;
		case 0x02:
			delta = uw_fixed(c, 1) * caf;
			goto advance;
		case 0x03:
			delta = uw_fixed(c, 2) * caf;
			goto advance;
		case 0x04:
			delta = uw_fixed(c, 4) * caf;
			goto advance;
		case 0x05: /* offset_extended */
			reg = uw_uleb(c);
			off = (int64_t)uw_uleb(c) * daf;
			goto set_offset;
		case 0x06: /* restore_extended */
			reg = uw_uleb(c);
			goto restore;
		case 0x07: /* undefined */
		case 0x08: /* same_value */
			reg = uw_uleb(c);
			r = reg == DW_RA    ? &row->ra
			    : reg == DW_RBP ? &row->bp
					    : NULL;
			if (r != NULL)
				r->how = op == 0x07 && reg == DW_RA ? UW_BAD
								    : UW_SAME;
			continue;
		case 0x09: /* register */
			reg = uw_uleb(c);
			(void)uw_uleb(c);
			if (reg == DW_RA)
				row->ra.how = UW_BAD;
			else if (reg == DW_RBP)
				row->bp.how = UW_BAD;
			continue;
		case 0x0a: /* remember_state */
			if (depth == UW_STATE_DEPTH) {
				c->bad = true;
				return;
			}
			stack[depth++] = *row;
			continue;
		case 0x0b: /* restore_state */
			if (depth == 0) {
				c->bad = true;
				return;
			}
			*row = stack[--depth];
			continue;
		case 0x0c: /* def_cfa */
			row->cfa_reg = (int)uw_uleb(c);
			row->cfa_off = (int64_t)uw_uleb(c);
			continue;
		case 0x0d: /* def_cfa_register */
			row->cfa_reg = (int)uw_uleb(c);
			continue;
		case 0x0e: /* def_cfa_offset */
			row->cfa_off = (int64_t)uw_uleb(c);
			continue;
		case 0x0f: /* def_cfa_expression */
			delta = uw_uleb(c);
			row->cfa_reg = -1;
			goto skip;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = uw_uleb(c);
			delta = uw_uleb(c);
			if (reg == DW_RA)
				row->ra.how = UW_BAD;
			else if (reg == DW_RBP)
				row->bp.how = UW_BAD;
			goto skip;
		case 0x11: /* offset_extended_sf */
			reg = uw_uleb(c);
			off = uw_sleb(c) * daf;
			goto set_offset;
		case 0x12: /* def_cfa_sf */
			row->cfa_reg = (int)uw_uleb(c);
			row->cfa_off = uw_sleb(c) * daf;
			continue;
		case 0x13: /* def_cfa_offset_sf */
			row->cfa_off = uw_sleb(c) * daf;
			continue;
		case 0x14: /* val_offset */
		case 0x15: /* val_offset_sf */
			reg = uw_uleb(c);
			if (op == 0x14)
				(void)uw_uleb(c);
			else
				(void)uw_sleb(c);
			if (reg == DW_RA)
				row->ra.how = UW_BAD;
			else if (reg == DW_RBP)
				row->bp.how = UW_BAD;
			continue;
		case 0x2e: /* GNU_args_size */
			(void)uw_uleb(c);
			continue;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = uw_uleb(c);
			off = -(int64_t)uw_uleb(c) * daf;
			goto set_offset;
		default: /* set_loc and anything unknown */
			c->bad = true;
			return;
		}
	advance:
		if (loc + delta > pc)
			return; /* the row for pc is complete */
		loc += delta;
		continue;
	set_offset:
		r = reg == DW_RA ? &row->ra : reg == DW_RBP ? &row->bp : NULL;
		if (r != NULL) {
			r->how = UW_OFFSET;
			r->off = off;
		}
		continue;
	restore:
		if (init == NULL) {
			c->bad = true; /* restore inside the CIE itself */
			return;
		}
		if (reg == DW_RA)
			row->ra = init->ra;
		else if (reg == DW_RBP)
			row->bp = init->bp;
		continue;
	skip:
		if ((uint64_t)(c->end - c->p) < delta) {
			c->bad = true;
			return;
		}
		c->p += delta;
	}
}

/* The rule row for pc from its FDE, or false if not understood. */
static bool uw_row_for(const uint8_t *fde, uintptr_t pc, struct uw_row *row,
		       uintptr_t *fn)
{
	struct uw_cursor c, ci;
	uint32_t len, cie_off, cie_len;
	const uint8_t *cie;
	const char *aug;
	uint8_t fde_enc = 0, version;
	uint64_t caf;
	int64_t daf;
	uintptr_t begin, range;
	bool has_z = false;
	struct uw_row init;

	memcpy(&len, fde, 4);
	if (len == 0 || len == 0xffffffffu)
		return false;
	memcpy(&cie_off, fde + 4, 4);
	if (cie_off == 0)
		return false; /* a CIE, not an FDE */
	cie = fde + 4 - cie_off;
	memcpy(&cie_len, cie, 4);
	if (cie_len == 0 || cie_len == 0xffffffffu)
		return false;
	ci.p = cie + 8; /* past length and CIE id */
	ci.end = cie + 4 + cie_len;
	ci.bad = false;
	version = (uint8_t)uw_fixed(&ci, 1);
	if (version != 1 && version != 3)
		return false;
	aug = (const char *)ci.p;
	while (ci.p < ci.end && *ci.p != 0)
		ci.p++;
	if (ci.p == ci.end)
		return false;
	ci.p++;
	caf = uw_uleb(&ci);
	daf = uw_sleb(&ci);
	if ((version == 1 ? uw_fixed(&ci, 1) : uw_uleb(&ci)) != DW_RA)
		return false;
	if (aug[0] == 'z') {
		uint64_t alen = uw_uleb(&ci);
		const uint8_t *aend = ci.p + alen;
		has_z = true;
		if (alen > (uint64_t)(ci.end - ci.p))
			return false;
		for (const char *a = aug + 1; *a != 0 && !ci.bad; a++) {
			if (*a == 'R') {
				fde_enc = (uint8_t)uw_fixed(&ci, 1);
			} else if (*a == 'P') {
				uint8_t penc = (uint8_t)uw_fixed(&ci, 1);
				(void)uw_ptr(&ci, penc & 0x7f);
			} else if (*a == 'L') {
				(void)uw_fixed(&ci, 1);
			} else if (*a != 'S') {
				return false;
			}
		}
		ci.p = aend;
	} else if (aug[0] != 0) {
		return false;
	}
	if (ci.bad)
		return false;

	c.p = fde + 8;
	c.end = fde + 4 + len;
	c.bad = false;
	begin = uw_ptr(&c, fde_enc);
	range = uw_ptr(&c, fde_enc & 0x0f);
	if (c.bad || pc < begin || pc - begin >= range)
		return false;
	if (has_z) {
		uint64_t alen = uw_uleb(&c);
		if (alen > (uint64_t)(c.end - c.p))
			return false;
		c.p += alen;
	}

	*fn = begin;
	memset(row, 0, sizeof *row);
	row->cfa_reg = -1;
	uw_exec(&ci, row, NULL, caf, daf, 0, UINTPTR_MAX);
	if (ci.bad)
		return false;
	init = *row;
	uw_exec(&c, row, &init, caf, daf, begin, pc);
	return !c.bad && (row->cfa_reg == DW_RSP || row->cfa_reg == DW_RBP) &&
	       row->ra.how == UW_OFFSET;
}

static bool uw_load(uintptr_t addr, uintptr_t lo, uintptr_t hi, uintptr_t *v)
{
	if (addr < lo || addr > hi - sizeof *v || (addr & 7) != 0)
		return false;
	memcpy(v, (const void *)addr, sizeof *v);
	return true;
}

bool smarm__unwind_step(const void *eh_frame_hdr, struct smarm__frame *f,
			uintptr_t stk_lo, uintptr_t stk_hi)
{
	struct uw_row row;
	const uint8_t *fde;
	uintptr_t look = f->first ? f->pc : f->pc - 1; /* the call insn */
	uintptr_t cfa, ra, bp = f->bp, fn = 0;

	fde = uw_find_fde(eh_frame_hdr, look);
	if (fde == NULL || !uw_row_for(fde, look, &row, &fn))
		return false;
	cfa = (row.cfa_reg == DW_RSP ? f->sp : f->bp) + (uintptr_t)row.cfa_off;
	if (!uw_load(cfa + (uintptr_t)row.ra.off, stk_lo, stk_hi, &ra))
		return false;
	if (row.bp.how == UW_BAD ||
	    (row.bp.how == UW_OFFSET &&
	     !uw_load(cfa + (uintptr_t)row.bp.off, stk_lo, stk_hi, &bp)))
		return false;
	f->ra_slot = (uintptr_t *)(cfa + (uintptr_t)row.ra.off);
	f->pc = ra;
	f->sp = cfa;
	f->bp = bp;
	f->fn = fn;
	f->first = false;
	return true;
}

void smarm__uc_frame(const void *ucv, struct smarm__frame *f)
{
	const ucontext_t *uc = ucv;
	f->pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	f->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	f->bp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	f->ra_slot = NULL;
	f->first = true;
}

bool smarm__shadow_stack_on(void)
{
	/* ARCH_SHSTK_STATUS (Linux 6.6+): bit 0 set while a shadow stack is
	 * enabled. Older kernels refuse the code: no shadow stack. */
	unsigned long features = 0;
	if (syscall(SYS_arch_prctl, 0x5005, &features) != 0)
		return false;
	return (features & 1) != 0;
}
