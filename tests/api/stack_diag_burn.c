/* SPDX-License-Identifier: MIT */
/*
 * stack_diag_burn.c - an unprobed C frame for test_stack_diag: built with
 * -fno-stack-clash-protection (tests/meson.build), so its 96 KiB local is
 * allocated with one stack-pointer move and its lowest byte is touched
 * first. From a 64 KiB stack that lands about 32 KiB into a 1 MiB guard,
 * and about 28 KiB below a 4 KiB one: the foreign frame that jumps a
 * small guard, as in smarm's canary.c.
 */
#include <stddef.h>

void sd_burn(void);

void sd_burn(void)
{
	volatile char buf[96 * 1024];
	buf[0] = 1; /* lowest address first */
	for (size_t i = 0; i < sizeof buf; i += 4096)
		buf[i] = 1;
	buf[sizeof buf - 1] = 1;
}
