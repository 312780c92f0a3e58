/* SPDX-License-Identifier: MIT */
/*
 * symbols.c - function names and source lines for the causal
 * profiler's samples (obs/causal.c, sampled and line scopes): the
 * function symbol around an address of the process, from the symbol
 * table of the object mapped there (.symtab when the file has one, so
 * static functions are named too; else .dynsym), and its source line,
 * from the object's DWARF line table (dwarf_line.c), read on first use.
 * Each object's tables are read once, from its file (/proc/self/exe for
 * the executable), sorted by address and kept with its file mapped (the
 * names point into it) until the table closes.
 *
 * Ownership: the profiler thread opens, uses and closes a table; nobody
 * else touches it.
 * Locking: none (one thread).
 * Invariants: SYMS-1 an object's functions are sorted by start address.
 * SYMS-2 an object's line rows lie in its executable segments and are
 * sorted by start address.
 * See: docs/observability.md (Causal profiling, sampled scope).
 */
#include "obs.h"

#include "../core/causal.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OBJS 32

struct sym {
	uintptr_t lo, hi;
	const char *name; /* in the object's mapped file */
};

struct obj {
	uintptr_t bias;	    /* load bias (dlpi_addr) */
	uintptr_t lo, hi;   /* its loaded segments' span */
	uintptr_t xlo, xhi; /* its executable segments' span */
	void *map;	    /* the file, mapped; NULL: unreadable */
	size_t map_len;
	struct sym *syms; /* SYMS-1 */
	size_t nsyms;
	struct smarm__line *lines; /* SYMS-2; read on first use */
	size_t nlines;
	bool lines_read; /* lines is what there is */
};

struct smarm__syms {
	struct obj objs[MAX_OBJS];
	int nobjs;
};

struct smarm__syms *smarm__syms_open(void)
{
	return calloc(1, sizeof(struct smarm__syms));
}

void smarm__syms_close(struct smarm__syms *t)
{
	if (t == NULL)
		return;
	for (int i = 0; i < t->nobjs; i++) {
		free(t->objs[i].syms);
		free(t->objs[i].lines);
		if (t->objs[i].map != NULL)
			munmap(t->objs[i].map, t->objs[i].map_len);
	}
	free(t);
}

/*
 * The tables here (struct sym, struct smarm__line, the selection's
 * pairs) are spans: each element opens with its start address and its
 * end, [lo, hi). lo_cmp orders them by start; span_at finds the one
 * around pc in a sorted table.
 */
_Static_assert(offsetof(struct sym, lo) == 0 &&
		       offsetof(struct sym, hi) == sizeof(uintptr_t) &&
		       offsetof(struct smarm__line, lo) == 0 &&
		       offsetof(struct smarm__line, hi) == sizeof(uintptr_t),
	       "spans open with lo, hi");

static int lo_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

/* The index of the last span of the n (size bytes each, sorted by
 * start) at base that starts at or below pc, if it holds pc; else n. */
static size_t span_at(const void *base, size_t n, size_t size, uintptr_t pc)
{
	const unsigned char *t = base;
	size_t a = 0, b = n;
	if (n == 0)
		return n;
	while (b - a > 1) {
		size_t m = a + (b - a) / 2;
		if (*(const uintptr_t *)(t + m * size) <= pc)
			a = m;
		else
			b = m;
	}
	const uintptr_t *sp = (const uintptr_t *)(t + a * size);
	return pc >= sp[0] && pc < sp[1] ? a : n;
}

/* Read the function symbols of the ELF file mapped at o->map. */
static void load_syms(struct obj *o)
{
	const unsigned char *base = o->map;
	const ElfW(Ehdr) *eh = o->map;
	const ElfW(Shdr) * sh, *tab = NULL;
	size_t n, k = 0;
	if (o->map_len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
	    eh->e_shentsize != sizeof *sh ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof *sh > o->map_len)
		return;
	sh = (const ElfW(Shdr) *)(base + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB ||
		    (sh[i].sh_type == SHT_DYNSYM && tab == NULL))
			tab = &sh[i];
	if (tab == NULL || tab->sh_link >= eh->e_shnum ||
	    tab->sh_offset + tab->sh_size > o->map_len ||
	    sh[tab->sh_link].sh_offset + sh[tab->sh_link].sh_size >
		    o->map_len ||
	    tab->sh_entsize != sizeof(ElfW(Sym)))
		return;
	n = tab->sh_size / sizeof(ElfW(Sym));
	o->syms = malloc(n * sizeof *o->syms);
	if (o->syms == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		const ElfW(Sym) *sy =
			(const ElfW(Sym) *)(base + tab->sh_offset) + i;
		const ElfW(Shdr) *st = &sh[tab->sh_link];
		if (ELF64_ST_TYPE(sy->st_info) != STT_FUNC ||
		    sy->st_shndx == SHN_UNDEF || sy->st_size == 0 ||
		    sy->st_name >= st->sh_size)
			continue;
		/* The string must end inside the table. */
		if (memchr(base + st->sh_offset + sy->st_name, '\0',
			   st->sh_size - sy->st_name) == NULL)
			continue;
		o->syms[k].lo = o->bias + sy->st_value;
		o->syms[k].hi = o->syms[k].lo + sy->st_size;
		o->syms[k].name =
			(const char *)base + st->sh_offset + sy->st_name;
		k++;
	}
	o->nsyms = k;
	qsort(o->syms, k, sizeof *o->syms, lo_cmp);
}

struct find {
	uintptr_t pc;
	struct obj *o;
	char path[256];
	bool found;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0, xlo = UINTPTR_MAX, xhi = 0;
	bool in = false;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD)
			continue;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
		if ((ph->p_flags & PF_X) && a < xlo)
			xlo = a;
		if ((ph->p_flags & PF_X) && a + ph->p_memsz > xhi)
			xhi = a + ph->p_memsz;
		if (f->pc >= a && f->pc < a + ph->p_memsz)
			in = true;
	}
	if (!in)
		return 0;
	f->found = true;
	f->o->bias = info->dlpi_addr;
	f->o->lo = lo;
	f->o->hi = hi;
	f->o->xlo = xlo;
	f->o->xhi = xhi;
	snprintf(f->path, sizeof f->path, "%s",
		 info->dlpi_name != NULL && info->dlpi_name[0] != '\0'
			 ? info->dlpi_name
			 : "/proc/self/exe");
	return 1;
}

/* The object that holds pc, loaded on first use; NULL: none. */
static struct obj *obj_of(struct smarm__syms *t, uintptr_t pc)
{
	struct find f;
	struct obj *o;
	struct stat st;
	int fd;
	for (int i = 0; i < t->nobjs; i++)
		if (pc >= t->objs[i].lo && pc < t->objs[i].hi)
			return &t->objs[i];
	if (t->nobjs == MAX_OBJS)
		return NULL;
	o = &t->objs[t->nobjs];
	memset(o, 0, sizeof *o);
	memset(&f, 0, sizeof f);
	f.pc = pc;
	f.o = o;
	dl_iterate_phdr(find_cb, &f);
	if (!f.found)
		return NULL;
	t->nobjs++;
	fd = open(f.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return o; /* known, nameless */
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		o->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			      fd, 0);
		if (o->map == MAP_FAILED)
			o->map = NULL;
		else
			o->map_len = (size_t)st.st_size;
	}
	close(fd);
	if (o->map != NULL)
		load_syms(o);
	return o;
}

bool smarm__syms_find(struct smarm__syms *t, uintptr_t pc, uintptr_t *lo,
		      uintptr_t *hi, const char **name)
{
	struct obj *o = obj_of(t, pc);
	size_t a;
	if (o == NULL || (a = span_at(o->syms, o->nsyms, sizeof *o->syms,
				      pc)) == o->nsyms) /* SYMS-1 */
		return false;
	*lo = o->syms[a].lo;
	*hi = o->syms[a].hi;
	*name = o->syms[a].name;
	return true;
}

/* The base name of a line table's file name. */
static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b != NULL ? b + 1 : path;
}

/* Read o's line table once: the rows in its text (SYMS-2), each file
 * name made a base name. A row of a discarded section (address 0 in the
 * table) lies outside the text and is dropped. */
static void load_lines(struct obj *o)
{
	size_t n = 0, k = 0;
	o->lines_read = true;
	if (o->map == NULL ||
	    smarm__dwarf_lines(o->map, o->map_len, o->bias, &o->lines, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct smarm__line *l = &o->lines[i];
		if (l->lo < o->xlo || l->hi > o->xhi)
			continue;
		l->file = base_name(l->file);
		o->lines[k++] = *l;
	}
	o->nlines = k;
	qsort(o->lines, k, sizeof *o->lines, lo_cmp);
}

bool smarm__syms_line(struct smarm__syms *t, uintptr_t pc, const char **file,
		      uint32_t *line)
{
	struct obj *o = obj_of(t, pc);
	size_t a;
	if (o == NULL)
		return false;
	if (!o->lines_read)
		load_lines(o);
	if ((a = span_at(o->lines, o->nlines, sizeof *o->lines, pc)) ==
	    o->nlines) /* SYMS-2 */
		return false;
	*file = o->lines[a].file;
	*line = o->lines[a].line;
	return true;
}

struct smarm__causal_sel *smarm__syms_line_text(struct smarm__syms *t,
						const char *file, uint32_t line)
{
	struct smarm__causal_sel *sel = NULL;
	size_t n = 0, k = 0;
	for (int pass = 0; pass < 2; pass++) { /* count, then fill */
		for (int i = 0; i < t->nobjs; i++) {
			const struct obj *o = &t->objs[i];
			for (size_t j = 0; j < o->nlines; j++) {
				const struct smarm__line *l = &o->lines[j];
				if (l->line != line || strcmp(l->file, file))
					continue;
				if (pass == 1) {
					sel->cs_rg[2 * k] = l->lo;
					sel->cs_rg[2 * k + 1] = l->hi;
				}
				k++;
			}
		}
		if (pass == 0) {
			if ((n = k) == 0 || n > UINT32_MAX / 2 ||
			    (sel = malloc(sizeof *sel +
					  2 * n * sizeof(uintptr_t))) == NULL)
				return NULL;
			k = 0;
		}
	}
	/* Sorted, and merged where they touch or overlap. */
	qsort(sel->cs_rg, n, 2 * sizeof(uintptr_t), lo_cmp);
	k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k != 0 && sel->cs_rg[2 * i] <= sel->cs_rg[2 * k - 1]) {
			if (sel->cs_rg[2 * i + 1] > sel->cs_rg[2 * k - 1])
				sel->cs_rg[2 * k - 1] = sel->cs_rg[2 * i + 1];
			continue;
		}
		sel->cs_rg[2 * k] = sel->cs_rg[2 * i];
		sel->cs_rg[2 * k + 1] = sel->cs_rg[2 * i + 1];
		k++;
	}
	sel->cs_n = (uint32_t)k;
	return sel;
}
