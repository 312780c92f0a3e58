/* SPDX-License-Identifier: MIT */
/*
 * log.c - the node's logger: one-line events (crash reports, and the
 * layers' supervisor and start reports, and smarm_log lines) handed to
 * the host's handler (smarm_config_set_logger) in the order they were
 * made, on a thread of the logger's own, so a handler that blocks (a
 * file, a socket, a pipe nobody reads) never stalls a worker.
 *
 * Design. Making an event formats its line on the maker's stack, copies
 * it into one malloc'd record and queues that under lg_mu; the thread,
 * started by the first event, pops one record at a time and calls the
 * handler with no lock held. A level above SMARM_OPT_LOG_LEVEL, or a
 * node without a handler, is dropped before anything is formatted: a
 * node that logs nothing pays one load and compare per event site. The
 * queue is bounded (SMARM_LOG_QUEUE_MAX): a full queue drops and counts
 * (lg_dropped), it never blocks the maker. Close hands the rest of the
 * queue to the handler, then joins the thread.
 *
 * Ownership: the node owns its logger (smarm__log_open .. _close); a
 * record belongs to the queue, then to the thread that popped it.
 * Locking: lg_mu, a pthread mutex and a leaf, guards the queue, lg_run
 * and lg_closing; makers hold no runtime lock (log.h). Invariants:
 * INV-1 every queued record is handed to the handler exactly once,
 * before smarm__log_close returns. INV-2 the thread exists iff lg_run.
 * See: docs/observability.md.
 */
#include "log.h"

#include "fault.h"
#include "node.h"
#include "sched.h"
#include "slot.h"
#include "stack.h"
#include "subsys.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct log_rec {
	struct log_rec *lr_next;
	smarm_log_event_t lr_ev; /* lr_ev.text points at lr_text */
	char lr_text[];
};

struct smarm__log {
	smarm_log_fn lg_fn; /* NULL: the node logs nothing */
	void *lg_arg;
	int lg_level; /* SMARM_OPT_LOG_LEVEL */
	pthread_mutex_t lg_mu;
	pthread_cond_t lg_cv;
	struct log_rec *lg_head, *lg_tail; /* the queue (lg_mu) */
	uint32_t lg_len;		   /* records queued (lg_mu) */
	bool lg_run;			   /* the thread exists (INV-2) */
	bool lg_closing;		   /* close asked it to end */
	pthread_t lg_thread;
	_Atomic int64_t lg_dropped; /* SMARM_STAT_LOG_DROPPED */
};

int smarm__log_open(struct smarm_node *n, const struct smarm_config *cfg)
{
	struct smarm__log *lg = calloc(1, sizeof *lg);
	if (lg == NULL)
		return SMARM_ENOMEM;
	lg->lg_fn = cfg->log_fn;
	lg->lg_arg = cfg->log_arg;
	lg->lg_level = (int)cfg->opt[SMARM_OPT_LOG_LEVEL];
	pthread_mutex_init(&lg->lg_mu, NULL);
	pthread_cond_init(&lg->lg_cv, NULL);
	n->log = lg;
	return 0;
}

/* The logger thread: hand records to the handler until told to end and
 * nothing is left (INV-1). */
static void *log_main(void *arg)
{
	struct smarm__log *lg = arg;
	smarm__thread_name("log", -1);
	pthread_mutex_lock(&lg->lg_mu);
	for (;;) {
		struct log_rec *r = lg->lg_head;
		if (r == NULL) {
			if (lg->lg_closing)
				break;
			pthread_cond_wait(&lg->lg_cv, &lg->lg_mu);
			continue;
		}
		lg->lg_head = r->lr_next;
		if (lg->lg_head == NULL)
			lg->lg_tail = NULL;
		lg->lg_len--;
		pthread_mutex_unlock(&lg->lg_mu);
		lg->lg_fn(lg->lg_arg, &r->lr_ev);
		free(r);
		pthread_mutex_lock(&lg->lg_mu);
	}
	pthread_mutex_unlock(&lg->lg_mu);
	return NULL;
}

void smarm__log_close(struct smarm_node *n)
{
	struct smarm__log *lg = n->log;
	bool run;
	if (lg == NULL)
		return;
	pthread_mutex_lock(&lg->lg_mu);
	lg->lg_closing = true;
	run = lg->lg_run;
	pthread_cond_signal(&lg->lg_cv);
	pthread_mutex_unlock(&lg->lg_mu);
	if (run)
		pthread_join(lg->lg_thread, NULL);
	/* No thread could be made: what is left is counted, not lost
	 * silently. */
	while (lg->lg_head != NULL) {
		struct log_rec *r = lg->lg_head;
		lg->lg_head = r->lr_next;
		atomic_fetch_add(&lg->lg_dropped, 1);
		free(r);
	}
	pthread_cond_destroy(&lg->lg_cv);
	pthread_mutex_destroy(&lg->lg_mu);
	free(lg);
	n->log = NULL;
}

bool smarm__log_wants(const struct smarm_node *n, int level)
{
	const struct smarm__log *lg = n->log;
	return lg != NULL && lg->lg_fn != NULL && level <= lg->lg_level;
}

int64_t smarm__log_dropped(const struct smarm_node *n)
{
	return n->log != NULL ? atomic_load(&n->log->lg_dropped) : 0;
}

/* Queue r (INV-1), starting the thread if it is the first. */
static int log_push(struct smarm__log *lg, struct log_rec *r)
{
	int rc = 0;
	pthread_mutex_lock(&lg->lg_mu);
	if (lg->lg_len >= SMARM_LOG_QUEUE_MAX || lg->lg_closing) {
		rc = SMARM_EFULL;
	} else if (!lg->lg_run) {
		sigset_t all, old;
		/* The thread takes no signal meant for the host. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&lg->lg_thread, NULL, log_main, lg) == 0)
			lg->lg_run = true;
		else
			rc = SMARM_ENOMEM;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (rc == 0) {
		r->lr_next = NULL;
		if (lg->lg_tail != NULL)
			lg->lg_tail->lr_next = r;
		else
			lg->lg_head = r;
		lg->lg_tail = r;
		lg->lg_len++;
		pthread_cond_signal(&lg->lg_cv);
	}
	pthread_mutex_unlock(&lg->lg_mu);
	return rc;
}

int smarm__log_vevent(struct smarm_node *n, int level, int kind, uint64_t pid,
		      const char *fmt, va_list ap)
{
	struct smarm__log *lg = n->log;
	char line[SMARM_LOG_LINE_MAX + 1];
	struct log_rec *r;
	size_t len;
	int k;
	if (!smarm__log_wants(n, level))
		return 0;
	k = vsnprintf(line, sizeof line, fmt, ap);
	len = k < 0 ? 0 : (size_t)k < sizeof line ? (size_t)k : sizeof line - 1;
	line[len] = '\0';
	for (size_t i = 0; i < len; i++) /* one line, whatever it said */
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = ' ';
	r = malloc(sizeof *r + len + 1);
	if (r == NULL) {
		atomic_fetch_add(&lg->lg_dropped, 1);
		return SMARM_ENOMEM;
	}
	memcpy(r->lr_text, line, len + 1);
	r->lr_ev.level = level;
	r->lr_ev.kind = kind;
	r->lr_ev.time_ns = smarm_now_ns();
	r->lr_ev.pid.id = pid;
	r->lr_ev.text = r->lr_text;
	k = log_push(lg, r);
	if (k != 0) {
		atomic_fetch_add(&lg->lg_dropped, 1);
		free(r);
	}
	return k;
}

int smarm__log_event(struct smarm_node *n, int level, int kind, uint64_t pid,
		     const char *fmt, ...)
{
	va_list ap;
	int rc;
	va_start(ap, fmt);
	rc = smarm__log_vevent(n, level, kind, pid, fmt, ap);
	va_end(ap);
	return rc;
}

/* s as reports name it (smarm__log_describe_self). */
static size_t describe(const struct smarm__slot *s, char *buf, size_t cap)
{
	/* "smarm: actor I.G (name 'N', gen_server 'B' of plugin 'P')" */
	size_t k = smarm__stackdiag_actor(s, buf, cap - 1);
	buf[k] = '\0';
	if (strncmp(buf, "smarm: ", 7) == 0) {
		memmove(buf, buf + 7, k - 7 + 1);
		k -= 7;
	}
	return k;
}

size_t smarm__log_describe_self(char *buf, size_t cap)
{
	struct smarm__slot *s = smarm__current();
	if (cap == 0)
		return 0;
	buf[0] = '\0';
	return s != NULL ? describe(s, buf, cap) : 0;
}

const char *smarm__log_code(intptr_t code, char *buf, size_t cap)
{
	const char *name = smarm_err_name((int)code);
	if (code == (int)code && strcmp(name, "SMARM_E?") != 0)
		snprintf(buf, cap, "%lld (%s)", (long long)code, name);
	else
		snprintf(buf, cap, "%lld", (long long)code);
	return buf;
}

const char *smarm__log_pid(uint64_t pid, char *buf, size_t cap)
{
	snprintf(buf, cap, "%u.%u", SMARM__PID_IDX(pid), SMARM__PID_GEN(pid));
	return buf;
}

void smarm__log_crash(struct smarm_node *n, struct smarm__slot *s)
{
	char who[256], why[64];
	if (!smarm__log_wants(n, SMARM_LOG_ERROR))
		return;
	describe(s, who, sizeof who);
	smarm__log_event(n, SMARM_LOG_ERROR, SMARM_REPORT_CRASH,
			 smarm__slot_pid(s),
			 "crash report: %s crashed, reason %s, spawned by %s "
			 "%u.%u",
			 who, smarm__log_code(s->exit.ex_code, why, sizeof why),
			 s->parent != 0 ? "actor" : "the run",
			 s->parent != 0 ? SMARM__PID_IDX(s->parent) : 0,
			 s->parent != 0 ? SMARM__PID_GEN(s->parent) : 0);
}

/* A fault's si_code, as <signal.h> names it. */
static const char *fault_code_name(int sig, int code)
{
	static const char *const segv[] = { NULL, "SEGV_MAPERR",
					    "SEGV_ACCERR" };
	static const char *const bus[] = { NULL, "BUS_ADRALN", "BUS_ADRERR",
					   "BUS_OBJERR" };
	static const char *const fpe[] = { NULL,	 "FPE_INTDIV",
					   "FPE_INTOVF", "FPE_FLTDIV",
					   "FPE_FLTOVF", "FPE_FLTUND",
					   "FPE_FLTRES", "FPE_FLTINV",
					   "FPE_FLTSUB" };
	static const char *const ill[] = { NULL,	 "ILL_ILLOPC",
					   "ILL_ILLOPN", "ILL_ILLADR",
					   "ILL_ILLTRP", "ILL_PRVOPC",
					   "ILL_PRVREG", "ILL_COPROC",
					   "ILL_BADSTK" };
#define FAULT_CODE(t)                                                          \
	(code > 0 && (size_t)code < sizeof(t) / sizeof(t)[0] ? (t)[code] : NULL)
	const char *name = sig == SIGABRT   ? "abort() called"
			   : sig == SIGSEGV ? FAULT_CODE(segv)
			   : sig == SIGBUS  ? FAULT_CODE(bus)
			   : sig == SIGFPE  ? FAULT_CODE(fpe)
			   : sig == SIGILL  ? FAULT_CODE(ill)
					    : NULL;
#undef FAULT_CODE
	return name != NULL ? name : "code ?";
}

void smarm__log_fault(struct smarm_node *n, struct smarm__slot *s, int sig,
		      int code, uintptr_t addr, uintptr_t pc)
{
	char who[256], where[320], at[64] = "";
	Dl_info di;
	uintptr_t below = 0;
	const char *stack = "";
	if (!smarm__log_wants(n, SMARM_LOG_ERROR))
		return;
	describe(s, who, sizeof who);
	if (dladdr((void *)pc, &di) != 0 && di.dli_fname != NULL) {
		if (di.dli_sname != NULL)
			snprintf(where, sizeof where, " in %s (%s+0x%llx)",
				 di.dli_fname, di.dli_sname,
				 (unsigned long long)(pc -
						      (uintptr_t)di.dli_saddr));
		else
			snprintf(where, sizeof where, " in %s (+0x%llx)",
				 di.dli_fname,
				 (unsigned long long)(pc -
						      (uintptr_t)di.dli_fbase));
	} else {
		snprintf(where, sizeof where, " (in no loaded object)");
	}
	if (sig != SIGABRT) /* an abort has no address, its pc is the call's */
		snprintf(at, sizeof at, " at 0x%llx", (unsigned long long)addr);
	if (sig != SIGABRT && s->stk_base != NULL &&
	    smarm__stackdiag_classify(addr, (uintptr_t)s->stk_base,
				      s->stk_guard, s->stk_reserve,
				      &below) != SMARM__FAULT_FOREIGN)
		stack = ", a stack overflow";
	smarm__log_event(
		n, SMARM_LOG_ERROR, SMARM_REPORT_CRASH, smarm__slot_pid(s),
		"crash report: %s faulted: %s (%s)%s%s, pc "
		"0x%llx%s; contained, it ends the actor (fault), "
		"spawned by %s %u.%u",
		who, smarm__fault_sig_name(sig), fault_code_name(sig, code), at,
		stack, (unsigned long long)pc, where,
		s->parent != 0 ? "actor" : "the run",
		s->parent != 0 ? SMARM__PID_IDX(s->parent) : 0,
		s->parent != 0 ? SMARM__PID_GEN(s->parent) : 0);
}

const char *smarm__log_how(int how)
{
	switch (how) {
	case SMARM_EXIT_NORMAL:
		return "normal";
	case SMARM_EXIT_SHUTDOWN:
		return "shutdown";
	case SMARM_EXIT_CRASHED:
		return "crashed";
	case SMARM_EXIT_STOPPED:
		return "killed";
	case SMARM_EXIT_FAULT:
		return "faulted";
	default:
		return "ended";
	}
}

void smarm__log_self(int level, int kind, const char *what, const char *fmt,
		     ...)
{
	struct smarm_node *n = smarm__current_node();
	char who[256], text[SMARM_LOG_LINE_MAX + 1];
	va_list ap;
	if (n == NULL || !smarm__log_wants(n, level))
		return;
	smarm__log_describe_self(who, sizeof who);
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	smarm__log_event(n, level, kind, smarm__self_pid(), "%s report: %s %s",
			 what, who, text);
}

static const char *level_name(int level)
{
	switch (level) {
	case SMARM_LOG_ERROR:
		return "error";
	case SMARM_LOG_WARNING:
		return "warning";
	case SMARM_LOG_NOTICE:
		return "notice";
	case SMARM_LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

void smarm_log_stderr(void *arg, const smarm_log_event_t *ev)
{
	char buf[SMARM_LOG_LINE_MAX + 64];
	int k;
	(void)arg;
	if (ev == NULL || ev->text == NULL)
		return;
	k = snprintf(buf, sizeof buf, "smarm: %s: %s\n", level_name(ev->level),
		     ev->text);
	if (k < 0)
		return;
	if ((size_t)k >= sizeof buf) {
		k = (int)sizeof buf - 1;
		buf[k - 1] = '\n';
	}
	ssize_t w = write(STDERR_FILENO, buf, (size_t)k);
	(void)w;
}

int smarm_config_set_logger(smarm_config_t *cfg, smarm_log_fn fn, void *arg)
{
	if (cfg == NULL)
		return SMARM_EINVAL;
	cfg->log_fn = fn;
	cfg->log_arg = arg;
	return 0;
}

int smarm_log(int level, const char *fmt, ...)
{
	struct smarm_node *n = smarm_node_current();
	va_list ap;
	int rc;
	if (fmt == NULL || level < SMARM_LOG_ERROR || level > SMARM_LOG_DEBUG)
		return SMARM_EINVAL;
	if (n == NULL)
		return SMARM_ENOTACTOR;
	va_start(ap, fmt);
	rc = smarm__log_vevent(n, level, SMARM_REPORT_LINE, smarm__self_pid(),
			       fmt, ap);
	va_end(ap);
	return rc;
}
