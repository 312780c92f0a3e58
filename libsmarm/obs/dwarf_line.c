/* SPDX-License-Identifier: MIT */
/*
 * dwarf_line.c - source lines of an object's code, for the causal
 * profiler's line scope (obs/causal.c through symbols.c): the address
 * ranges of every row of every line number program in an ELF file's
 * .debug_line section (DWARF 2 to 5, 32- and 64-bit DWARF), each with
 * its file's name and its line. Only what a line program says is read:
 * no .debug_info, no inlining tree (a row of code inlined from a header
 * names the header's line, as DWARF's line table does), no VLIW op
 * indices (max_ops_per_insn must be 1, as on every target libsmarm
 * builds for). A compressed section (SHF_COMPRESSED), a form this does
 * not know (DW_FORM_strx*, which needs .debug_str_offsets) or a unit
 * that does not parse ends that unit's rows: the units before it stay,
 * and the caller falls back to function sites for the addresses left.
 *
 * The file is the process's own (the executable or a loaded object),
 * but it is read as untrusted input: every read is bounds-checked
 * against its section, and a name is used only if it ends inside its
 * section.
 *
 * Ownership: the caller owns the array returned; names point into the
 * caller's mapping of the file.
 * Locking: none (the profiler thread only).
 * Invariants: DWL-1 every range returned has lo < hi, lies in one
 * sequence, and carries the row that starts it.
 * See: docs/observability.md (Causal profiling, line scope).
 */
#include "obs.h"

#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

/* A bounded reader over one section. */
struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t rd_n(struct rd *r, unsigned n)
{
	uint64_t v = 0;
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++) /* little-endian (x86-64, arm64) */
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		unsigned b = (unsigned)rd_n(r, 1);
		if (r->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0, b;
	do {
		b = (unsigned)rd_n(r, 1);
		if (r->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A NUL-terminated string at the reader; NULL (and bad) if it runs out. */
static const char *rd_str(struct rd *r)
{
	const unsigned char *z;
	const char *s = (const char *)r->p;
	if (r->bad ||
	    (z = memchr(r->p, '\0', (size_t)(r->end - r->p))) == NULL) {
		r->bad = true;
		return NULL;
	}
	r->p = z + 1;
	return s;
}

/* The string at off in a string section; NULL if not one. */
static const char *str_at(const struct rd *sec, uint64_t off)
{
	struct rd r = { sec->p, sec->end, false };
	if (sec->p == NULL || off >= (uint64_t)(sec->end - sec->p))
		return NULL;
	r.p += off;
	return rd_str(&r);
}

struct sections {
	struct rd line, line_str, str;
};

/* DWARF constants this reads. */
enum {
	FORM_block = 0x09,
	FORM_data1 = 0x0b,
	FORM_data2 = 0x05,
	FORM_data4 = 0x06,
	FORM_data8 = 0x07,
	FORM_data16 = 0x1e,
	FORM_string = 0x08,
	FORM_strp = 0x0e,
	FORM_udata = 0x0f,
	FORM_line_strp = 0x1f,
	LNCT_path = 1,
	LNCT_directory_index = 2,
};

/*
 * One attribute of a v5 directory or file entry: its string (a path)
 * in *s, or its number in *v; false if the form is not one this reads.
 */
static bool rd_form(struct rd *r, const struct sections *sc, uint64_t form,
		    bool dw64, const char **s, uint64_t *v)
{
	*s = NULL;
	*v = 0;
	switch (form) {
	case FORM_string:
		*s = rd_str(r);
		break;
	case FORM_line_strp:
		*s = str_at(&sc->line_str, rd_n(r, dw64 ? 8 : 4));
		break;
	case FORM_strp:
		*s = str_at(&sc->str, rd_n(r, dw64 ? 8 : 4));
		break;
	case FORM_udata:
		*v = rd_uleb(r);
		break;
	case FORM_data1:
		*v = rd_n(r, 1);
		break;
	case FORM_data2:
		*v = rd_n(r, 2);
		break;
	case FORM_data4:
		*v = rd_n(r, 4);
		break;
	case FORM_data8:
		*v = rd_n(r, 8);
		break;
	case FORM_data16:
		rd_n(r, 8);
		rd_n(r, 8);
		break;
	case FORM_block: {
		uint64_t len = rd_uleb(r);
		if (len > (uint64_t)(r->end - r->p))
			r->bad = true;
		else
			r->p += len;
		break;
	}
	default:
		return false;
	}
	return !r->bad;
}

/* The rows found so far (grown by doubling). */
struct rows {
	struct smarm__line *v;
	size_t n, cap;
	bool oom;
};

static void row_add(struct rows *o, uintptr_t lo, uintptr_t hi,
		    const char *file, uint64_t line)
{
	if (lo >= hi || file == NULL || line == 0 || line > UINT32_MAX)
		return; /* DWL-1; line 0: no source line */
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 1024;
		struct smarm__line *v = realloc(o->v, cap * sizeof *v);
		if (v == NULL) {
			o->oom = true;
			return;
		}
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n++] = (struct smarm__line){ lo, hi, file, (uint32_t)line };
}

#define MAX_FILES 4096 /* per unit: more and the unit is skipped */

/*
 * One unit's line program (its header at r, up to unit_end): rows into
 * o. False if it did not parse (the rows it gave stay: each is whole).
 */
static bool unit(struct rd *r, const struct sections *sc, uintptr_t bias,
		 struct rows *o)
{
	const char *files[MAX_FILES];
	uint64_t nfiles = 0, hlen;
	uint64_t len = rd_n(r, 4);
	bool dw64 = len == 0xffffffffu;
	struct rd u, h;
	unsigned version, min_len, max_ops = 1, line_range, op_base;
	int line_base;
	unsigned char oplen[256];

	if (dw64)
		len = rd_n(r, 8);
	if (r->bad || len > (uint64_t)(r->end - r->p)) {
		r->bad = true; /* no next unit to find */
		return false;
	}
	u = (struct rd){ r->p, r->p + len, false };
	r->p += len; /* the next unit */
	version = (unsigned)rd_n(&u, 2);
	if (version < 2 || version > 5)
		return false;
	if (version >= 5 && (rd_n(&u, 1) != 8 || rd_n(&u, 1) != 0))
		return false; /* address size 8, no segments */
	hlen = rd_n(&u, dw64 ? 8 : 4);
	if (u.bad || hlen > (uint64_t)(u.end - u.p))
		return false;
	h = (struct rd){ u.p, u.p + hlen, false };
	u.p += hlen; /* the program */
	min_len = (unsigned)rd_n(&h, 1);
	if (version >= 4)
		max_ops = (unsigned)rd_n(&h, 1);
	rd_n(&h, 1); /* default_is_stmt: every row is kept */
	line_base = (int)(int8_t)rd_n(&h, 1);
	line_range = (unsigned)rd_n(&h, 1);
	op_base = (unsigned)rd_n(&h, 1);
	if (h.bad || max_ops != 1 || line_range == 0 || op_base == 0)
		return false;
	memset(oplen, 0, sizeof oplen);
	for (unsigned i = 1; i < op_base; i++)
		oplen[i] = (unsigned char)rd_n(&h, 1);

	if (version < 5) {
		/* include_directories (unused: a site is a base name), then
		 * file_names, 1-based: files[0] stays NULL. */
		while (!h.bad && h.p < h.end && *h.p != '\0')
			rd_str(&h);
		rd_n(&h, 1);
		files[nfiles++] = NULL;
		while (!h.bad && h.p < h.end && *h.p != '\0') {
			const char *name = rd_str(&h);
			rd_uleb(&h); /* directory, mtime, length */
			rd_uleb(&h);
			rd_uleb(&h);
			if (nfiles == MAX_FILES)
				return false;
			files[nfiles++] = name;
		}
	} else {
		for (int pass = 0; pass < 2; pass++) { /* dirs, then files */
			uint64_t fmt[16][2], nfmt = rd_n(&h, 1), count;
			if (nfmt > 16)
				return false;
			for (uint64_t i = 0; i < nfmt; i++) {
				fmt[i][0] = rd_uleb(&h);
				fmt[i][1] = rd_uleb(&h);
			}
			/* Bounded: an entry of no fields reads nothing. */
			count = rd_uleb(&h);
			if (h.bad || count > MAX_FILES)
				return false;
			for (uint64_t e = 0; e < count; e++) {
				const char *path = NULL;
				for (uint64_t i = 0; i < nfmt; i++) {
					const char *s;
					uint64_t v;
					if (!rd_form(&h, sc, fmt[i][1], dw64,
						     &s, &v))
						return false;
					if (fmt[i][0] == LNCT_path)
						path = s;
				}
				if (pass == 1)
					files[nfiles++] = path;
			}
		}
	}
	if (h.bad)
		return false;

	/* The state machine (DWARF 5, 6.2.2), one sequence at a time: a
	 * row's range runs to the next row's address. */
	uint64_t addr = 0, file = 1, line = 1;
	uint64_t prev_addr = 0, prev_file = 0, prev_line = 0;
	bool have_prev = false;
#define ROW()                                                                  \
	do {                                                                   \
		if (have_prev && prev_file < nfiles)                           \
			row_add(o, bias + prev_addr, bias + addr,              \
				files[prev_file], prev_line);                  \
		prev_addr = addr;                                              \
		prev_file = file;                                              \
		prev_line = line;                                              \
		have_prev = true;                                              \
	} while (0)
	while (!u.bad && u.p < u.end && !o->oom) {
		unsigned op = (unsigned)rd_n(&u, 1);
		if (op >= op_base) { /* special */
			unsigned adj = op - op_base;
			addr += (uint64_t)(adj / line_range) * min_len;
			line += (uint64_t)(line_base + (int)(adj % line_range));
			ROW();
			continue;
		}
		switch (op) {
		case 0: { /* extended */
			uint64_t n = rd_uleb(&u);
			const unsigned char *next;
			unsigned sub;
			if (u.bad || n == 0 || n > (uint64_t)(u.end - u.p))
				return false;
			next = u.p + n; /* inside the unit: checked first */
			sub = (unsigned)rd_n(&u, 1);
			if (sub == 1) { /* end_sequence */
				ROW();
				have_prev = false;
				addr = 0;
				file = 1;
				line = 1;
			} else if (sub == 2) { /* set_address */
				if (n != 9)
					return false;
				addr = rd_n(&u, 8);
			}
			u.p = next; /* define_file, discriminator, others */
			break;
		}
		case 1: /* copy */
			ROW();
			break;
		case 2: /* advance_pc */
			addr += rd_uleb(&u) * min_len;
			break;
		case 3: /* advance_line */
			line += (uint64_t)rd_sleb(&u);
			break;
		case 4: /* set_file */
			file = rd_uleb(&u);
			break;
		case 8: /* const_add_pc */
			addr += (uint64_t)((255 - op_base) / line_range) *
				min_len;
			break;
		case 9: /* fixed_advance_pc */
			addr += rd_n(&u, 2);
			break;
		default: /* column, stmt, block, prologue, isa, unknown */
			for (unsigned i = 0; i < oplen[op]; i++)
				rd_uleb(&u);
			break;
		}
	}
#undef ROW
	return !u.bad;
}

int smarm__dwarf_lines(const void *map, size_t map_len, uintptr_t bias,
		       struct smarm__line **out, size_t *n)
{
	const unsigned char *base = map;
	const ElfW(Ehdr) *eh = map;
	const ElfW(Shdr) * sh;
	struct sections sc;
	struct rows o = { 0 };
	const char *names;

	*out = NULL;
	*n = 0;
	memset(&sc, 0, sizeof sc);
	if (map_len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_shoff == 0 ||
	    eh->e_shentsize != sizeof *sh || eh->e_shstrndx >= eh->e_shnum ||
	    eh->e_shoff > map_len || eh->e_shoff % _Alignof(ElfW(Shdr)) != 0 ||
	    (size_t)eh->e_shnum * sizeof *sh > map_len - eh->e_shoff)
		return -1;
	sh = (const ElfW(Shdr) *)(base + eh->e_shoff);
	if (sh[eh->e_shstrndx].sh_offset > map_len ||
	    sh[eh->e_shstrndx].sh_size > map_len - sh[eh->e_shstrndx].sh_offset)
		return -1;
	names = (const char *)base + sh[eh->e_shstrndx].sh_offset;
	for (int i = 0; i < eh->e_shnum; i++) {
		struct rd *r = NULL;
		const char *nm;
		if (sh[i].sh_name >= sh[eh->e_shstrndx].sh_size ||
		    sh[i].sh_type == SHT_NOBITS ||
		    (sh[i].sh_flags & SHF_COMPRESSED) ||
		    sh[i].sh_offset > map_len ||
		    sh[i].sh_size > map_len - sh[i].sh_offset)
			continue;
		nm = names + sh[i].sh_name;
		if (memchr(nm, '\0',
			   sh[eh->e_shstrndx].sh_size - sh[i].sh_name) == NULL)
			continue;
		if (strcmp(nm, ".debug_line") == 0)
			r = &sc.line;
		else if (strcmp(nm, ".debug_line_str") == 0)
			r = &sc.line_str;
		else if (strcmp(nm, ".debug_str") == 0)
			r = &sc.str;
		if (r != NULL)
			*r = (struct rd){ base + sh[i].sh_offset,
					  base + sh[i].sh_offset +
						  sh[i].sh_size,
					  false };
	}
	if (sc.line.p == NULL)
		return -1;
	/* A unit that does not parse is skipped; one whose length does not
	 * fit ends the section. */
	while (sc.line.p < sc.line.end && !o.oom && !sc.line.bad)
		unit(&sc.line, &sc, bias, &o);
	if (o.oom && o.n == 0) {
		free(o.v);
		return -1;
	}
	*out = o.v;
	*n = o.n;
	return 0;
}
