/* SPDX-License-Identifier: MIT */
/*
 * stack_probe.h - what the stack suites find out about memory without
 * libsmarm's help: whether an address reads (a guard region or a
 * PROT_NONE page does not), and whether guarded stacks are carved from
 * chunks in this process, which the suites probe on their own so that a
 * library probe wrongly saying "no guard regions" fails a test instead
 * of quietly testing the fallback twice.
 */
#ifndef SMARM_TEST_STACK_PROBE_H
#define SMARM_TEST_STACK_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PROBE_GUARD_INSTALL 102	  /* MADV_GUARD_INSTALL, Linux 6.13 */
#define PROBE_PIDFD_SELF (-10001) /* PIDFD_SELF_THREAD_GROUP, Linux 6.15 */
#define PROBE_NO_GUARDS_ENV "SMARM__NO_GUARD_REGIONS"

/* Whether one byte at p reads; never faults. */
static inline bool probe_readable(const void *p)
{
	char b;
	struct iovec local = { &b, 1 };
	struct iovec remote = { (void *)(uintptr_t)p, 1 };
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1;
}

/* Whether the kernel installs guard regions for this process. */
static inline bool probe_guard_regions(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok;
	if (m == MAP_FAILED)
		return false;
	ok = madvise(m, pg, PROBE_GUARD_INSTALL) == 0 && !probe_readable(m) &&
	     probe_readable(m + pg);
	munmap(m, 2 * pg);
	return ok;
}

/* Whether process_madvise installs them too, several per call. */
static inline bool probe_guard_batch(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec iov[2] = { { m, pg }, { m + 2 * pg, pg } };
	bool ok;
	if (m == MAP_FAILED)
		return false;
	ok = syscall(SYS_process_madvise, PROBE_PIDFD_SELF, iov, 2,
		     PROBE_GUARD_INSTALL, 0) == (long)(2 * pg) &&
	     !probe_readable(m) && probe_readable(m + pg) &&
	     !probe_readable(m + 2 * pg);
	munmap(m, 3 * pg);
	return ok;
}

/*
 * Whether a node opened now carves its default guarded stacks from
 * chunks: the kernel has guard regions and the test run did not force
 * the fallback (meson's *_fallback tests set SMARM__NO_GUARD_REGIONS).
 */
static inline bool probe_carves_guarded(void)
{
	return getenv(PROBE_NO_GUARDS_ENV) == NULL && probe_guard_regions();
}

#endif /* SMARM_TEST_STACK_PROBE_H */
