/* SPDX-License-Identifier: MIT */
/*
 * fault.h - contained faults (fault.c): the handler's question, the
 * faulted actor's exit, and the smarm mutex count it depends on.
 */
#ifndef SMARM_CORE_FAULT_H
#define SMARM_CORE_FAULT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * From the fault handler: contain the fault si describes, in the context
 * uc, if the actor on this thread asked for it and it can be (fault.c);
 * true: uc now resumes in smarm__fault_exit. False with *why NULL:
 * containment was not asked for, or si is not a fault; with *why set: it
 * was refused, for the reason *why says (a static string).
 * Async-signal-safe.
 */
bool smarm__fault_contain(const siginfo_t *si, void *uc, const char **why);

/* A slot's `contain`: SMARM_OPT_CONTAIN_FAULTS' values. */
enum { SMARM__CONTAIN_FAULTS = 1, SMARM__CONTAIN_ABORT = 2 };

/* Where a contained fault resumes, on the actor's stack: report it, end
 * the actor SMARM_EXIT_FAULT. */
void smarm__fault_exit(int sig, int code, uintptr_t addr, uintptr_t pc)
	__attribute__((noreturn));

/* "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL" or "SIGABRT" for sig (the
 * fault handler's signals; SIGSEGV for any other). Async-signal-safe. */
const char *smarm__fault_sig_name(int sig);

/* Contained faults so far whose pc lay in the object holding addr (a
 * plugin's text, say): 0 if none. Any thread, ordinary context. */
uint64_t smarm__fault_count_of(const void *addr);

/*
 * The calling actor took (delta 1) or gave back (-1) a smarm mutex: one
 * it holds makes its faults fatal. No-op outside an actor.
 */
void smarm__self_mutex_held(int delta);

#endif /* SMARM_CORE_FAULT_H */
