/* SPDX-License-Identifier: MIT */
/*
 * test_dwarf_line.c - the DWARF line table reader (obs/dwarf_line.c)
 * on this executable's own file (built with -g): a function's address
 * maps to a line of this file inside the function; and on broken
 * copies of it (the .debug_line section cut short at many lengths, or
 * with bytes changed at random): no read outside the file (ASan runs
 * this too), every row returned whole.
 */
#include "harness.h"

#include "../libsmarm/obs/obs.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file, read whole. */
static unsigned char *self_read(size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* .debug_line's place in the file. */
static void line_section(const unsigned char *buf, size_t *off, size_t *size)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)buf;
	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(buf + eh->e_shoff);
	const char *names = (const char *)buf + sh[eh->e_shstrndx].sh_offset;
	for (int i = 0; i < eh->e_shnum; i++)
		if (strcmp(names + sh[i].sh_name, ".debug_line") == 0) {
			*off = sh[i].sh_offset;
			*size = sh[i].sh_size;
			return;
		}
	ck_abort_msg("no .debug_line: the tests are built with -g");
}

static int find_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr; /* the executable comes first */
	return 1;
}

static const int marker_first = __LINE__;
__attribute__((noipa)) int dwarf_line_marker(int x);
int dwarf_line_marker(int x)
{
	return x * 3 + 1;
}
static const int marker_last = __LINE__;

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && strcmp(s + a - b, tail) == 0;
}

START_TEST(test_dwarf_line_maps_a_function_to_its_lines)
{
	size_t len, n = 0, hits = 0;
	unsigned char *buf = self_read(&len);
	struct smarm__line *rows = NULL;
	uintptr_t bias = 0, pc = (uintptr_t)dwarf_line_marker;
	dl_iterate_phdr(find_bias, &bias);
	ck_assert_int_eq(smarm__dwarf_lines(buf, len, bias, &rows, &n), 0);
	ck_assert_uint_gt(n, 100);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_lt(rows[i].lo, rows[i].hi);
		ck_assert_ptr_nonnull(rows[i].file);
		if (pc < rows[i].lo || pc >= rows[i].hi)
			continue;
		hits++;
		ck_assert_msg(ends_with(rows[i].file, "test_dwarf_line.c"),
			      "file %s", rows[i].file);
		ck_assert_int_ge(rows[i].line, marker_first);
		ck_assert_int_le(rows[i].line, marker_last);
	}
	ck_assert_uint_eq(hits, 1);
	ck_assert_int_eq(dwarf_line_marker(1), 4);
	free(rows);
	free(buf);
}
END_TEST

/* Not a 64-bit ELF file, or one with no line table: -1. */
START_TEST(test_dwarf_line_refuses_what_is_not_one)
{
	unsigned char junk[256];
	struct smarm__line *rows = (struct smarm__line *)junk;
	size_t n = 7, len, off, size;
	unsigned char *buf;
	memset(junk, 0x41, sizeof junk);
	ck_assert_int_eq(smarm__dwarf_lines(junk, sizeof junk, 0, &rows, &n),
			 -1);
	ck_assert_ptr_null(rows);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(smarm__dwarf_lines(junk, 3, 0, &rows, &n), -1);
	buf = self_read(&len);
	/* The ELF header alone: section headers past the end. */
	ck_assert_int_eq(
		smarm__dwarf_lines(buf, sizeof(ElfW(Ehdr)), 0, &rows, &n), -1);
	/* No section called .debug_line. */
	line_section(buf, &off, &size);
	{
		const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)buf;
		ElfW(Shdr) *sh = (ElfW(Shdr) *)(buf + eh->e_shoff);
		char *names = (char *)buf + sh[eh->e_shstrndx].sh_offset;
		for (int i = 0; i < eh->e_shnum; i++)
			if (strcmp(names + sh[i].sh_name, ".debug_line") == 0)
				names[sh[i].sh_name + 1] = 'X';
	}
	ck_assert_int_eq(smarm__dwarf_lines(buf, len, 0, &rows, &n), -1);
	free(buf);
}
END_TEST

/* Every row whole (DWL-1) whatever the input: its number of rows, or
 * -1. (Plain checks: a ck_assert per row would write to Check's pipe
 * millions of times.) */
static long rows_whole(const unsigned char *buf, size_t len)
{
	struct smarm__line *rows = NULL;
	size_t n = 0;
	bool ok = true;
	if (smarm__dwarf_lines(buf, len, 0, &rows, &n) != 0) {
		ck_assert_ptr_null(rows);
		return -1;
	}
	for (size_t i = 0; i < n && ok; i++) {
		const unsigned char *f = (const unsigned char *)rows[i].file;
		ok = rows[i].lo < rows[i].hi && rows[i].line > 0 && f >= buf &&
		     f < buf + len &&
		     memchr(f, '\0', (size_t)(buf + len - f)) != NULL;
	}
	free(rows);
	ck_assert_msg(ok, "a row that is not whole");
	return (long)n;
}

/* The section cut short (its size in its section header made smaller),
 * at 200 lengths. */
START_TEST(test_dwarf_line_survives_a_cut_section)
{
	size_t len, off, size;
	unsigned char *buf = self_read(&len);
	ElfW(Ehdr) *eh = (ElfW(Ehdr) *)buf;
	ElfW(Shdr) *sh = (ElfW(Shdr) *)(buf + eh->e_shoff);
	line_section(buf, &off, &size);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_offset != off)
			continue;
		long prev = -1, n;
		for (size_t k = 0; k <= 200; k++) {
			sh[i].sh_size = size * k / 200;
			n = rows_whole(buf, len);
			/* Units are read in order: a longer cut, more rows. */
			ck_assert_int_ge(n, prev);
			prev = n;
		}
		ck_assert_int_gt(prev, 100); /* the whole section */
		sh[i].sh_size = size;
	}
	free(buf);
}
END_TEST

/* Bytes of the section changed at random (a fixed seed): 600 copies
 * with 1 to 16 bytes each. */
START_TEST(test_dwarf_line_survives_random_bytes)
{
	size_t len, off, size;
	unsigned char *buf = self_read(&len), *copy = malloc(len);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	ck_assert_ptr_nonnull(copy);
	line_section(buf, &off, &size);
	for (int round = 0; round < 600; round++) {
		memcpy(copy + off, buf + off, size);
		if (round == 0)
			memcpy(copy, buf, len);
		for (int k = 0; k <= round % 16; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* Mostly the first units' headers, where a length
			 * or a count steers the rest. */
			copy[off + (x >> 8) % (k < 4 ? size < 4096 ? size : 4096
						     : size)] =
				(unsigned char)x;
		}
		rows_whole(copy, len);
	}
	free(copy);
	free(buf);
}
END_TEST

Suite *smarm_test_dwarf_line_suite(void);
Suite *smarm_test_dwarf_line_suite(void)
{
	Suite *s = suite_create("dwarf_line");
	TCase *tc = tcase_create("dwarf_line");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_dwarf_line_maps_a_function_to_its_lines);
	tcase_add_test(tc, test_dwarf_line_refuses_what_is_not_one);
	tcase_add_test(tc, test_dwarf_line_survives_a_cut_section);
	tcase_add_test(tc, test_dwarf_line_survives_random_bytes);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(dwarf_line)
