/* SPDX-License-Identifier: MIT */
/*
 * linux.c - the OS half of arch.h, for Linux: futex, monotonic clock,
 * page size, online CPUs, the calling thread's stack bounds, alternate
 * signal stacks, vm.max_map_count, and a read of this process's own
 * memory that cannot fault. The CPU half is x86_64.c and x86_64.S.
 *
 * Ownership: stateless, apart from the page size cached on first use;
 * callers own every buffer and struct passed in.
 * Invariants: INV-1 smarm__peek is async-signal-safe (system calls only:
 * the SIGURG handler calls it through smarm__pc_at_syscall).
 * See: docs/architecture.md.
 */

#include "arch.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

uint64_t smarm__clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

size_t smarm__page_size(void)
{
	static size_t page;
	if (page == 0)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

int smarm__online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (int)n;
}

void smarm__futex_wait(uint32_t *word, uint32_t expect, uint64_t rel_ns)
{
	struct timespec ts;
	struct timespec *tsp = NULL;
	if (rel_ns != 0) {
		ts.tv_sec = (time_t)(rel_ns / 1000000000u);
		ts.tv_nsec = (long)(rel_ns % 1000000000u);
		tsp = &ts;
	}
	/* EAGAIN, EINTR and ETIMEDOUT all mean "re-check": callers loop. */
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expect, tsp, NULL, 0);
}

void smarm__futex_wake(uint32_t *word, int count)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

void smarm__thread_stack(void **bottom, size_t *size)
{
	pthread_attr_t attr;
	*bottom = NULL;
	*size = 0;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		pthread_attr_getstack(&attr, bottom, size);
		pthread_attr_destroy(&attr);
	}
}

/*
 * Signal handlers of a worker run on an alternate stack: a stack overflow
 * leaves no room on the actor's stack, and a preemption signal must not
 * push a kernel signal frame (several KiB with AVX-512 state) onto a small
 * or guardless actor stack.
 */
#define ALTSTACK_SIZE (64 * 1024)

void smarm__altstack_enter(struct smarm__altstack *a)
{
	stack_t ss;
	a->mem = mmap(NULL, ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a->had_prev = false;
	if (a->mem == MAP_FAILED) {
		a->mem = NULL; /* run without: a guard hit dies silently */
		return;
	}
	ss.ss_sp = a->mem;
	ss.ss_size = ALTSTACK_SIZE;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, &a->prev) != 0) {
		munmap(a->mem, ALTSTACK_SIZE);
		a->mem = NULL;
		return;
	}
	a->had_prev = !(a->prev.ss_flags & SS_DISABLE);
}

void smarm__altstack_leave(struct smarm__altstack *a)
{
	stack_t off = { .ss_flags = SS_DISABLE };
	if (a->mem == NULL)
		return;
	/* Give the thread back the alternate stack it had before the run. */
	sigaltstack(a->had_prev ? &a->prev : &off, NULL);
	munmap(a->mem, ALTSTACK_SIZE);
	a->mem = NULL;
}

long smarm__max_map_count(long fallback)
{
	char buf[32];
	long v = 0;
	ssize_t len;
	int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fallback;
	len = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (len <= 0)
		return fallback;
	for (ssize_t i = 0; i < len && buf[i] >= '0' && buf[i] <= '9'; i++)
		if (v < 1000000000L)
			v = v * 10 + (buf[i] - '0');
	return v > 0 ? v : fallback;
}

/*
 * Callers read the code around an interrupted pc, which may sit at the
 * start of a mapping whose previous page is unreadable (JIT code, a
 * trampoline page), or in execute-only memory: process_vm_readv fails
 * there with EFAULT instead of faulting. It and getpid are plain system
 * calls, so this is async-signal-safe.
 */
bool smarm__peek(uintptr_t addr, void *out, size_t n)
{
	struct iovec local = { out, n };
	struct iovec remote = { (void *)addr, n };
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
	       (ssize_t)n;
}
