/* SPDX-License-Identifier: MIT */
/*
 * linux.c - the OS half of arch.h, for Linux: futex, monotonic clock,
 * page size, online CPUs, thread names, the calling thread's stack
 * bounds, per-thread CPU-time timers (a perf task-clock event, or a
 * POSIX timer), alternate signal stacks,
 * vm.max_map_count, guard regions, a read of this process's own memory
 * that cannot fault, and the file mapped at an address. The CPU half is
 * x86_64.c and x86_64.S.
 *
 * Ownership: stateless, apart from the page size cached on first use and
 * the guard-region probe's answer (written once under guards_once,
 * read-only after); callers own every buffer and struct passed in.
 * Invariants: INV-1 smarm__peek is async-signal-safe (system calls only:
 * the SIGURG handler calls it through smarm__pc_at_syscall), and so is
 * smarm__addr_file (the SIGSEGV handler's, stackdiag.c).
 * See: docs/architecture/layers.md.
 */

#include "arch.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Older libc headers lack these (Linux 6.13 and 6.15 uapi). */
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#define PIDFD_SELF_PROCESS (-10001) /* pidfd.h: PIDFD_SELF_THREAD_GROUP */

uint64_t smarm__clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t smarm__thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A perf task-clock event of the calling thread that sends it sig at
 * each period (fasync, owner the thread); -1 where perf events are not
 * allowed (perf_event_paranoid, a seccomp filter). */
static int perf_clock_open(int sig, uint64_t period_ns)
{
	struct perf_event_attr a;
	struct f_owner_ex owner;
	int fd;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period_ns;
	a.exclude_kernel = 1; /* user text only: allowed at paranoid 2 */
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	owner.type = F_OWNER_TID;
	owner.pid = (pid_t)syscall(SYS_gettid);
	if (fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
	    fcntl(fd, F_SETSIG, sig) != 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int smarm__cpu_timer_start(int sig, const void *mark, uint64_t period_ns,
			   struct smarm__cpu_timer *t)
{
	struct sigevent ev;
	struct itimerspec its;
	t->ct_mark = mark;
	if ((t->ct_fd = perf_clock_open(sig, period_ns)) >= 0)
		return 0;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = sig;
	ev.sigev_value.sival_ptr = (void *)mark;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &t->ct_timer) != 0)
		return -1;
	its.it_interval.tv_sec = (time_t)(period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(period_ns % 1000000000u);
	its.it_value = its.it_interval;
	if (timer_settime(t->ct_timer, 0, &its, NULL) != 0) {
		timer_delete(t->ct_timer);
		return -1;
	}
	return 0;
}

uint32_t smarm__cpu_timer_hit(const struct smarm__cpu_timer *t,
			      const siginfo_t *si)
{
	if (t->ct_fd >= 0) /* fasync: si_code is the poll band */
		return si->si_code == POLL_IN && si->si_fd == t->ct_fd;
	if (si->si_code != SI_TIMER || si->si_value.sival_ptr != t->ct_mark)
		return 0;
	return 1 + (si->si_overrun > 0 ? (uint32_t)si->si_overrun : 0);
}

void smarm__cpu_timer_stop(struct smarm__cpu_timer *t)
{
	if (t->ct_fd >= 0)
		close(t->ct_fd);
	else
		timer_delete(t->ct_timer);
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

void smarm__thread_name(const char *what, int id)
{
	char name[32];
	if (id >= 0)
		snprintf(name, sizeof name, "smarm-%s%d", what, id);
	else
		snprintf(name, sizeof name, "smarm-%s", what);
	name[15] = '\0'; /* the kernel's limit, with its NUL */
	(void)pthread_setname_np(pthread_self(), name);
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

/* ----------------------------------------------------- guard regions */

#define GUARD_BATCH 32 /* iovecs per process_madvise call (512 B of stack) */

static pthread_once_t guards_once = PTHREAD_ONCE_INIT;
static int guards_how; /* SMARM__GUARDS_*, written once under guards_once */

static bool guards_batch(char *first, size_t len, size_t stride, uint32_t n)
{
	struct iovec iov[GUARD_BATCH];
	uint32_t k;
	for (uint32_t i = 0; i < n; i += k) {
		for (k = 0; k < GUARD_BATCH && i + k < n; k++) {
			iov[k].iov_base = first + (size_t)(i + k) * stride;
			iov[k].iov_len = len;
		}
		if (syscall(SYS_process_madvise, PIDFD_SELF_PROCESS, iov,
			    (size_t)k, MADV_GUARD_INSTALL,
			    0u) != (ssize_t)(k * len))
			return false;
	}
	return true;
}

/*
 * A kernel without guard regions says EINVAL; valgrind passes madvise
 * through but does not know process_madvise (ENOSYS, after a warning);
 * a kernel before 6.15 does not know PIDFD_SELF_PROCESS (EBADF). Each
 * way is kept only if the page it guarded reads as unmapped.
 */
static void guards_probe_once(void)
{
	size_t pg = smarm__page_size();
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char b;
	if (m == MAP_FAILED)
		return;
	if (madvise(m, pg, MADV_GUARD_INSTALL) == 0 &&
	    !smarm__peek((uintptr_t)m, &b, 1) &&
	    smarm__peek((uintptr_t)m + pg, &b, 1)) {
		guards_how = SMARM__GUARDS_MADVISE;
		if (guards_batch(m + pg, pg, pg, 1) &&
		    !smarm__peek((uintptr_t)m + pg, &b, 1))
			guards_how = SMARM__GUARDS_BATCH;
	}
	munmap(m, 2 * pg);
}

int smarm__guards_probe(void)
{
	pthread_once(&guards_once, guards_probe_once);
	return guards_how;
}

int smarm__guards_install(int how, char *first, size_t len, size_t stride,
			  uint32_t n)
{
	if (how == SMARM__GUARDS_BATCH && n > 1 &&
	    guards_batch(first, len, stride, n))
		return 0;
	/* Installing over an installed guard is a no-op: redo them all. */
	for (uint32_t i = 0; i < n; i++)
		if (madvise(first + (size_t)i * stride, len,
			    MADV_GUARD_INSTALL) != 0)
			return -1;
	return 0;
}

/* Parse hex digits at *p (advancing it); 0 if none. */
static uintptr_t maps_hex(const char **p)
{
	uintptr_t v = 0;
	for (;; (*p)++) {
		char c = **p;
		if (c >= '0' && c <= '9')
			v = v * 16 + (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* One line of /proc/self/maps: "lo-hi perms off dev inode   path". */
static bool maps_line(const char *l, uintptr_t addr, char *name, size_t cap,
		      uintptr_t *off)
{
	uintptr_t lo, hi, foff = 0;
	size_t n = 0;
	lo = maps_hex(&l);
	if (*l++ != '-')
		return false;
	hi = maps_hex(&l);
	if (addr < lo || addr >= hi)
		return false;
	for (int field = 0; field < 4; field++) { /* perms, off, dev, inode */
		while (*l == ' ')
			l++;
		if (field == 1)
			foff = maps_hex(&l);
		while (*l != ' ' && *l != '\0')
			l++;
	}
	while (*l == ' ')
		l++;
	if (*l != '/')
		return false; /* anonymous, [stack], [heap], [vdso] */
	while (l[n] != '\0' && n + 1 < cap) {
		name[n] = l[n];
		n++;
	}
	name[n] = '\0';
	*off = addr - lo + foff;
	return true;
}

bool smarm__addr_file(uintptr_t addr, char *name, size_t cap, uintptr_t *off)
{
	char buf[512];
	char line[512];
	size_t len = 0;
	bool found = false;
	ssize_t k;
	int fd;
	if (cap == 0)
		return false;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (!found && (k = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < k && !found; i++) {
			if (buf[i] != '\n') {
				if (len + 1 < sizeof line)
					line[len++] = buf[i];
				continue;
			}
			line[len] = '\0';
			found = maps_line(line, addr, name, cap, off);
			len = 0;
		}
	}
	close(fd);
	return found;
}
