/* SPDX-License-Identifier: MIT */
/*
 * log.h - the node's logger (log.c): what the layers call to report an
 * event (a crash, a supervisor's restart, a failed start) and what the
 * node calls to open and close it.
 *
 * Ownership: the node owns its logger, from smarm_node_open to
 * smarm_node_close.
 * Locking: the logger's own mutex, a leaf taken with no runtime lock
 * held (smarm__log_event must not be called under one).
 * See: docs/observability.md.
 */
#ifndef SMARM_CORE_LOG_H
#define SMARM_CORE_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smarm/smarm.h"

struct smarm_node;
struct smarm_config;
struct smarm__slot;

/* Set n's logger up from cfg (no thread yet): 0 or SMARM_ENOMEM. */
int smarm__log_open(struct smarm_node *n, const struct smarm_config *cfg);
/* Hand every queued event to the handler, end the thread, free. */
void smarm__log_close(struct smarm_node *n);

/* Count one SMARM_STAT_DIST_INFO_DROPPED (the dist layer's drop of a
 * message to a served server; its log line is the caller's). */
void smarm__stat_dist_info_dropped(struct smarm_node *n);

/* Whether an event of level would be delivered (a cheap test first). */
bool smarm__log_wants(const struct smarm_node *n, int level);

/*
 * Queue an event of level and kind about pid (0: none), its text made
 * by vsnprintf(fmt, ap), cut to SMARM_LOG_LINE_MAX bytes, control
 * characters made spaces. 0, or SMARM_ENOMEM (dropped and counted). No
 * runtime lock may be held.
 */
int smarm__log_vevent(struct smarm_node *n, int level, int kind, uint64_t pid,
		      const char *fmt, va_list ap);
int smarm__log_event(struct smarm_node *n, int level, int kind, uint64_t pid,
		     const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * The calling actor as reports name it, into buf (cap bytes, NUL
 * included): "actor I.G (name 'N', gen_server 'B' of plugin 'P')", or
 * "" outside an actor. Returns the length.
 */
size_t smarm__log_describe_self(char *buf, size_t cap);

/*
 * A reason code as reports say it, into buf (cap bytes): "42", or
 * "-301 (SMARM_ENOMEM)" for a status code. Returns buf.
 */
const char *smarm__log_code(intptr_t code, char *buf, size_t cap);

/* A pid as reports say it, "index.generation", into buf. Returns buf. */
const char *smarm__log_pid(uint64_t pid, char *buf, size_t cap);

/* A SMARM_EXIT_* as reports say it ("crashed", "killed", ...). */
const char *smarm__log_how(int how);

/*
 * A report about the calling actor: "<what> report: <the caller as
 * smarm__log_describe_self says> <text of fmt>", at level, of kind.
 */
void smarm__log_self(int level, int kind, const char *what, const char *fmt,
		     ...) __attribute__((format(printf, 4, 5)));

/* The crash report of s, which crashed by its own doing (actor.c). */
void smarm__log_crash(struct smarm_node *n, struct smarm__slot *s);

/* The crash report of s, whose fault (signal, si_code, address, pc) was
 * contained (fault.c); called on s's own stack. */
void smarm__log_fault(struct smarm_node *n, struct smarm__slot *s, int sig,
		      int code, uintptr_t addr, uintptr_t pc);

/* Events dropped since the node was opened (SMARM_STAT_LOG_DROPPED). */
int64_t smarm__log_dropped(const struct smarm_node *n);

#endif
