/* SPDX-License-Identifier: MIT */
/*
 * test_arch_evict.c - smarm__lines_evict (arch/x86_64.c), the trace
 * writer's eviction of the record lines it took (core/trace.h TRACE-5):
 * the bytes of every range stay as they were, whatever its start and
 * length, and no line outside the range is touched (a range that ends
 * where an inaccessible page begins does not fault; a line is flushed
 * only if it holds a byte of the range).
 */
#include "harness.h"

#include "arch/arch.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* An eviction writes nothing: the bytes of every range read back as
 * they were (an implementation that stored, or zeroed a line as CLZERO
 * does, fails here). */
START_TEST(test_evict_keeps_bytes)
{
	enum { N = 4096 };
	static unsigned char buf[N + 64] __attribute__((aligned(64)));
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	/* Starts and lengths on and off line boundaries, and nothing. */
	static const size_t offs[] = { 0, 1, 63, 64, 65, 1000 };
	static const size_t lens[] = { 0, 1, 63, 64, 65, 129, 3000 };
	for (size_t a = 0; a < sizeof offs / sizeof *offs; a++)
		for (size_t b = 0; b < sizeof lens / sizeof *lens; b++)
			smarm__lines_evict(buf + offs[a], lens[b]);
	for (size_t i = 0; i < sizeof buf; i++)
		ck_assert_uint_eq(buf[i], (unsigned char)(i * 7 + 3));
}
END_TEST

START_TEST(test_evict_stays_in_its_range)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	/* Pages 0 and 2 inaccessible: a flush of a line there faults. */
	ck_assert_int_eq(mprotect(m, pg, PROT_NONE), 0);
	ck_assert_int_eq(mprotect(m + 2 * pg, pg, PROT_NONE), 0);
	memset(m + pg, 0x5a, pg);
	smarm__lines_evict(m + pg, pg);		 /* the whole page */
	smarm__lines_evict(m + 2 * pg - 1, 1);	 /* its last byte */
	smarm__lines_evict(m + pg, 1);		 /* its first byte */
	smarm__lines_evict(m + 2 * pg - 65, 65); /* its last two lines */
	smarm__lines_evict(m + 2 * pg, 0);	 /* nothing, past it */
	for (size_t i = 0; i < pg; i++)
		ck_assert_uint_eq(m[pg + i], 0x5a);
	ck_assert_int_eq(munmap(m, 3 * pg), 0);
}
END_TEST

Suite *smarm_test_arch_evict_suite(void)
{
	Suite *s = suite_create("arch_evict");
	TCase *tc = tcase_create("evict");
	tcase_add_test(tc, test_evict_keeps_bytes);
	tcase_add_test(tc, test_evict_stays_in_its_range);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(arch_evict)
