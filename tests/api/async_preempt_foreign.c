/* SPDX-License-Identifier: MIT */
/*
 * async_preempt_foreign.c - loops outside the host executable for
 * test_async_preempt: built as a shared object of its own
 * (tests/meson.build) that the host never allows, so no preemption
 * signal can switch them out and each one the monitor sends is deferred.
 */
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

unsigned long ap_foreign_write_loop(int fd, atomic_int *stop);
unsigned long ap_foreign_late_loop(atomic_int *stop);

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

static long ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000L +
	       (b->tv_nsec - a->tv_nsec);
}

/*
 * Until *stop: spin about 1 ms with SIGURG blocked, then unblock it for a
 * moment. A signal sent meanwhile is handled only at the unblock (in
 * libc, just past a syscall that returned 0): its verdict comes late.
 */
unsigned long ap_foreign_late_loop(atomic_int *stop)
{
	unsigned long n = 0;
	sigset_t urg;
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		struct timespec t0, t;
		pthread_sigmask(SIG_BLOCK, &urg, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while (ns_between(&t0, &t) < 1000000L);
		pthread_sigmask(SIG_UNBLOCK, &urg, NULL);
		n++;
	}
	return n;
}
