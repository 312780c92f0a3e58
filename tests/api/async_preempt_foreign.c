/* SPDX-License-Identifier: MIT */
/*
 * async_preempt_foreign.c - a loop outside the host executable for
 * test_async_preempt: built as a shared object of its own
 * (tests/meson.build) that the host never allows, so no preemption
 * signal can switch it out and each one the monitor sends is deferred.
 */
#include <stdatomic.h>
#include <unistd.h>

unsigned long ap_foreign_write_loop(int fd, atomic_int *stop);

/* One-byte writes to fd until *stop: system calls that never sleep. */
unsigned long ap_foreign_write_loop(int fd, atomic_int *stop)
{
	unsigned long n = 0;
	char c = 0;
	while (!atomic_load_explicit(stop, memory_order_relaxed))
		if (write(fd, &c, 1) == 1)
			n++;
	return n;
}
