/* SPDX-License-Identifier: MIT */
/*
 * smarm/smarm.h - the libsmarm public API: an Erlang/OTP-style actor
 * runtime for C.
 *
 * This header (with smarm/version.h, smarm/errors.h, smarm/otp.h and
 * smarm/obs.h, which it includes) is the whole contract. Nothing outside
 * abi/ is API: using any symbol or layout not declared here is
 * unsupported and may break at any release.
 *
 * Model. A *node* is one runtime instance: N worker OS threads running
 * stackful green-thread *actors* from a shared run queue. Actors are named
 * by pids: by-value (index, generation) ids that can be copied, compared
 * and sent in messages; a pid of an actor that is gone is detected and
 * reported as SMARM_ENOPROC, never aliased to a new actor. Actors talk
 * through *channels* (unbounded many-to-many queues of fixed-size
 * elements), wait
 * on several channels with select, and share state through a green mutex.
 *
 * Conventions.
 *   - Every fallible call returns 0 (SMARM_OK) or a negative SMARM_E* code;
 *     results come back through out-parameters. smarm_strerror() names a
 *     code. No call aborts the process on bad input.
 *   - Durations are nanoseconds (uint64_t).
 *   - Timeouts. Every call that can wait for something takes a uint64_t
 *     timeout_ns (or has a form that does), with one meaning:
 *       0                 check once and never park or yield: the answer
 *                         is what the call finds now (SMARM_ETIMEDOUT if
 *                         it would have to wait); the refusals the call
 *                         makes before waiting (another waiter, a bad fd)
 *                         come first, and a pending stop is observed;
 *       SMARM_NO_TIMEOUT  wait without a deadline (no timer is armed);
 *       anything else     wait at most about that long, then
 *                         SMARM_ETIMEDOUT.
 *     What is ready when the deadline passes wins over SMARM_ETIMEDOUT.
 *     smarm_actor_sleep() and smarm_chan_send_after() take a duration,
 *     not a timeout.
 *   - "Actor context only" calls return SMARM_ENOTACTOR from any thread that
 *     is not currently running an actor.
 *   - Blocking calls park the calling actor, never the worker thread. They
 *     are also *safe points*: a pending stop request is observed there, and
 *     the actor then ends (its cleanup handlers run) instead of returning.
 *     Where parking is refused (a behaviour's terminate on a path that
 *     must not block, smarm/smarm_plugin.h) a call that would park
 *     returns SMARM_EAGAIN at once instead; what it can answer without
 *     parking (an element already queued, a free mutex, a timeout of 0)
 *     it still answers.
 *   - Thread-safety is stated per call; a call that states nothing is not
 *     thread-safe.
 *   - Channels, mutexes and select sets are *handles*: the smarm_chan_t *,
 *     smarm_mutex_t * and smarm_selset_t * values the alloc calls return
 *     are not addresses (never dereference or compare them for order);
 *     each names one object until that object is freed. One rule for
 *     every call that takes one (since SMARM_0.3): a handle of a freed
 *     object is SMARM_ESTATE, never a use after free or a hang;
 *     smarm_selset_free, which returns nothing, ignores it. NULL, and a
 *     value that is no handle of that type (a wild pointer, another
 *     type's handle), is SMARM_EINVAL. Of two frees of the same reference
 *     racing on two threads, one succeeds and the other is SMARM_ESTATE.
 *     Limits: an object's memory is reused for later objects of its type,
 *     oldest freed first, and a freed handle could name a new object
 *     only after that memory was reused 65535 times. The fixed part of
 *     a freed object (at most 128 bytes for a channel, 64 for a mutex,
 *     2 KiB for a set) is kept for reuse, never returned to the system:
 *     the process keeps its peak count of each; buffers (a channel's
 *     queue, a mutex's wait list) are freed. A channel or mutex call
 *     that runs while another thread frees the same object is exact: it
 *     runs before the free or is SMARM_ESTATE, and never acts on an
 *     object that reused the memory. A select set is used by one thread
 *     at a time: a set call racing the set's own free is a race in the
 *     caller (it touches no unmapped memory).
 */
#ifndef SMARM_SMARM_H
#define SMARM_SMARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SMARM_API __attribute__((visibility("default")))
#else
#define SMARM_API
#endif

/*
 * The timeout that means "wait without a deadline" (see Conventions).
 * Since: SMARM_0.2 (for every timed call since SMARM_0.3).
 */
#define SMARM_NO_TIMEOUT UINT64_MAX

/* ------------------------------------------------------------------------
 * Opaque types
 * --------------------------------------------------------------------- */

typedef struct smarm_config smarm_config_t;
typedef struct smarm_node smarm_node_t;
typedef struct smarm_spawn_opts smarm_spawn_opts_t;
/* Handles, not addresses: see Conventions. */
typedef struct smarm_chan smarm_chan_t;
typedef struct smarm_mutex smarm_mutex_t;

/*
 * smarm_pid_t - an actor id, passed by value. Treat `id` as opaque; two
 * pids name the same actor iff smarm_pid_eq() says so. The all-zero value
 * (SMARM_PID_NONE) never names an actor. A pid names one actor of one
 * node: used with another node (one open at the same time, or one opened
 * after its own was closed) it names nothing there (SMARM_ENOPROC, or
 * false from smarm_actor_is_alive()).
 */
typedef struct {
	uint64_t id;
} smarm_pid_t;

#ifdef __cplusplus
#define SMARM_PID_NONE (smarm_pid_t{ 0 })
#else
#define SMARM_PID_NONE ((smarm_pid_t){ 0 })
#endif

/*
 * smarm_timer_t - a pending timed send, passed by value (see
 * smarm_chan_send_after). The all-zero value names no timer.
 */
typedef struct {
	uint64_t id;
} smarm_timer_t;

#ifdef __cplusplus
#define SMARM_TIMER_NONE (smarm_timer_t{ 0 })
#else
#define SMARM_TIMER_NONE ((smarm_timer_t){ 0 })
#endif

/* An actor's body. It runs on the actor's own stack. */
typedef void (*smarm_actor_cb)(void *arg);

/* A cleanup handler (see smarm_cleanup_push). */
typedef void (*smarm_cleanup_cb)(void *arg);

/*
 * A channel element destructor: called with a pointer to an element that
 * was sent but will never be received (the receiver is gone, the channel
 * was freed with elements queued, or a timed send was cancelled or could
 * not be delivered). It must not block.
 */
typedef void (*smarm_elem_free_cb)(void *elem);

/* ------------------------------------------------------------------------
 * Errors and version
 * --------------------------------------------------------------------- */

/*
 * smarm_strerror() - a static description of a status code.
 *
 * Never NULL, also for unknown codes. The wording is not ABI.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API const char *smarm_strerror(int status);

/*
 * smarm_err_name() - the symbolic name of a status code ("SMARM_ENOPROC").
 *
 * Never NULL; unknown codes give "SMARM_E?".
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API const char *smarm_err_name(int status);

/*
 * smarm_version() - the library's version as SMARM_VERSION_HEX packs it.
 *
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API unsigned smarm_version(void);

/*
 * smarm_version_string() - the library's version as "MAJOR.MINOR.PATCH".
 *
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API const char *smarm_version_string(void);

/* ------------------------------------------------------------------------
 * Configuration
 * --------------------------------------------------------------------- */

/*
 * Options: ids for smarm_config_set_int(), smarm_config_get_int() and, for
 * the spawn options, smarm_spawn_opts_set_int().
 *
 * SMARM_OPT_MAP is the one list of them: the enum smarm_opt below, the
 * library's range checks and defaults, which ids are spawn options and
 * smarm_opt_name() are all generated from it, so they cannot drift apart.
 * Each entry is XX(name, value, lo, hi, default, scope):
 *   value    the id, SMARM_OPT_<name>; ids are ABI, never renumbered or
 *            reused;
 *   lo, hi   the range smarm_config_set_int() accepts (inclusive);
 *   default  the value of a fresh config, or -1: derived when the config
 *            is made or read (the entry says how; smarm_config_get_int()
 *            reports the value in effect);
 *   scope    NODE, or SPAWN: also a spawn option.
 * The ranges and defaults are those of this header's library version;
 * later versions may widen a range or change a default, and the library
 * always applies its own. New options may be added in later ABI minors:
 * an id the library does not know is SMARM_EINVAL.
 */
/* XX(name, value, lo, hi, default, scope) */
#define SMARM_OPT_MAP(XX)                                                      \
	/* Worker threads; the thread calling smarm_node_run() is one of       \
	 * them. Default: the number of online CPUs (at most 64). */           \
	XX(WORKERS, 1, 1, 64, -1, NODE)                                        \
	/* Most actor slots, including the root's: each actor alive holds      \
	 * one, and so does each ended actor until it is joined or             \
	 * detached (SMARM_STAT_ENDED_UNJOINED counts those). The slot         \
	 * table grows on demand up to it. At most 2^24 since SMARM_0.3        \
	 * (2^31 before: a pid now also names its node). */                    \
	XX(MAX_ACTORS, 2, 1, 16777216, 1048576, NODE)                          \
	/* Usable stack bytes per actor, rounded up to a page. */              \
	XX(STACK_RESERVE, 3, 4096, 1073741824, 65536, SPAWN)                   \
	/* Guard bytes below each guarded stack, rounded up to a page.         \
	 * Since 0.5 a guard region where the kernel has them, else a          \
	 * PROT_NONE mapping (SMARM_STACK_GUARDED). */                         \
	XX(STACK_GUARD, 4, 4096, 1073741824, 1048576, SPAWN)                   \
	/* Recycled default-shaped stacks kept for reuse in the node's         \
	 * pool; each worker also caches up to min(4, cap) in front of it.     \
	 * 0 keeps none. Default: max(16, 4 * workers). Since 0.5 the pool     \
	 * holds only stacks with a mapping of their own: a guarded stack      \
	 * carved from a chunk is never unmapped alone; past the caches it     \
	 * waits in its chunk, whatever the cap, until smarm_node_close(). */  \
	XX(STACK_POOL_CAP, 5, 0, 1048576, -1, NODE)                            \
	/* How long an actor runs before a safe point (smarm_check,            \
	 * runtime calls) makes it yield. Default 2 ms. */                     \
	XX(TIMESLICE_NS, 6, 10000, 10000000000, 2000000, NODE)                 \
	/* How stacks are laid out, a smarm_stack_mode value.                  \
	 * Since: SMARM_0.2. */                                                \
	XX(STACK_MODE, 7, SMARM_STACK_AUTO, SMARM_STACK_DENSE,                 \
	   SMARM_STACK_AUTO, SPAWN)                                            \
	/* 0 or 1: an actor woken by another actor runs next on the            \
	 * waker's worker (a one-entry wake slot, Go's runnext) instead of     \
	 * joining the shared run queue; a newer wake pushes the older one     \
	 * to the shared queue. Spawns, yields and wakes from timers or        \
	 * other threads always use the shared queue. Default 1: the woken     \
	 * actor runs warm on its waker's core; with two workers a round       \
	 * trip between two actors costs about half as much as with the        \
	 * slot off. Since: SMARM_0.2. */                                      \
	XX(WAKE_SLOT, 8, 0, 1, 1, NODE)                                        \
	/* How long a worker that ran out of work keeps polling for new        \
	 * work before it sleeps in the kernel; 0 never spins. At most         \
	 * half the workers (at least one) spin at once, and only while        \
	 * another worker is running actors. Default 20 us: a hand-off to      \
	 * a spinning worker costs no futex wake. Since: SMARM_0.2. */         \
	XX(IDLE_SPIN_NS, 9, 0, 10000000, 20000, NODE)                          \
	/* 1: a monitor thread interrupts (SIGURG) an actor that runs          \
	 * SMARM_OPT_ASYNC_SLICE_NS without reaching a safe point and          \
	 * switches it out if it is in preemptible code (see                   \
	 * smarm_preempt_allow_object); 0: preemption only at safe points.     \
	 * Since: SMARM_0.2. */                                                \
	XX(PREEMPT_ASYNC, 10, 0, 1, 1, NODE)                                   \
	/* Threads of the blocking-work pool (smarm_io_blocking). They         \
	 * start on the first smarm_io_blocking() of a run and are joined      \
	 * when the run ends. Since: SMARM_0.2. */                             \
	XX(IO_POOL_THREADS, 11, 1, 64, 4, NODE)                                \
	/* The overrun after which the monitor interrupts an actor. The        \
	 * monitor looks at the workers once per this period while any         \
	 * runs actor code, so an actor overruns by one to two periods (one,   \
	 * about, when it began where the monitor preempted another).          \
	 * Default 10 ms, as Go's forced preemption: each look and each        \
	 * signal costs tens of microseconds on a VM, and at 2 ms that         \
	 * overhead reached 3-4% of a compute loop, at 10 ms it is under       \
	 * 1%. Since: SMARM_0.2. */                                            \
	XX(ASYNC_SLICE_NS, 12, 100000, 10000000000, 10000000, NODE)            \
	/* 0 or 1: link each new actor to its spawner (smarm_link), in         \
	 * place before the child can run, so no death goes unobserved; as     \
	 * a node default (a config) it links every spawn made by an actor.    \
	 * Default 0. Since: SMARM_0.4. */                                     \
	XX(LINK, 13, 0, 1, 0, SPAWN)                                           \
	/* 0 or 1: an actor preempted by the monitor's signal (which may       \
	 * have stopped it anywhere in its code) can resume on another         \
	 * worker thread when that worker holds fewer runnable actors than     \
	 * its own (counting it), it was stopped in the executable's own       \
	 * code, and nothing in its saved registers or its stack points        \
	 * into its thread's static TLS; otherwise it resumes on the thread    \
	 * that preempted it. Without moving, call-free loops stay where       \
	 * they were first preempted, and 5 of them on 4 workers get shares    \
	 * of 1, 1, 1, 1/2, 1/2. Set 0 if preemptible code keeps, across       \
	 * instructions, a pointer it read out of thread-local state (not      \
	 * the address of a __thread variable: those are seen).                \
	 * Default 1. Since: SMARM_0.5. */                                     \
	XX(PREEMPT_MOVE, 14, 0, 1, 1, NODE)                                    \
	/* The most verbose smarm_log_level the node's logger delivers         \
	 * (smarm_config_set_logger): reports and smarm_log() lines of a       \
	 * higher (less severe) level are dropped where they are made; 0       \
	 * delivers nothing. Default SMARM_LOG_NOTICE (5): crash and           \
	 * supervisor reports, not progress reports. Since: SMARM_0.5. */      \
	XX(LOG_LEVEL, 15, 0, 7, 5, NODE)                                       \
	/* 1: a synchronous fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL raised      \
	 * by the faulting instruction, stack overflow into the guard          \
	 * included) in an actor's own code ends that actor,                   \
	 * SMARM_EXIT_FAULT, instead of the process; 2: that, and also an      \
	 * abort() (a failed assert()) the actor's own code calls (reason      \
	 * SIGABRT); 0: every fault is fatal. See "Faults" in                  \
	 * docs/embedding.md for when a fault can be contained and what it     \
	 * cannot undo. A node default (a config) and a spawn option (an       \
	 * actor's choice holds for it alone). Default 0. Since: SMARM_0.5. */ \
	XX(CONTAIN_FAULTS, 16, 0, 2, 0, SPAWN)                                 \
	/* 0 or 1: keep per-actor statistics for introspection                 \
	 * (smarm_actor_info_t's cpu_ns, runs, runq_wait_ns, preemptions,      \
	 * messages in and out): a cycle-counter read at every switch and      \
	 * at every wake, and 64 bytes per actor slot. Off, the records        \
	 * hold 0 there and the scheduler pays one predictable branch per      \
	 * switch (as Erlang's scheduler_wall_time flag). Default 0: the       \
	 * counter read costs 30-40 ns in a VM, a third of a round trip        \
	 * between two actors (docs/benchmarks.md). Since: SMARM_0.5. */       \
	XX(ACTOR_STATS, 17, 0, 1, 0, NODE)                                     \
	/* Events each worker's trace ring holds (smarm_config_set_trace),     \
	 * rounded up to a power of two; 64 bytes each. A ring the writer      \
	 * has not drained in time drops events (SMARM_STAT_TRACE_DROPPED).    \
	 * Default 16384 (1 MiB per worker). Since: SMARM_0.5. */              \
	XX(TRACE_RING, 18, 64, 16777216, 16384, NODE)                          \
	/* 0 or 1: the actor's stack is given back while it waits in           \
	 * smarm_chan_recv or smarm_chan_recv_timeout (the only waits that     \
	 * do so): once it has been parked there SMARM_OPT_STACK_RELEASE_NS,   \
	 * the live bytes of its stack are copied to the heap and its stack    \
	 * pages returned to the kernel (MADV_DONTNEED); they are copied       \
	 * back to the same addresses before it next runs. The contract:       \
	 * while such an actor waits, nothing outside it reads or writes its   \
	 * stack (no pointer to a stack local of it is in another actor's or   \
	 * thread's hands; a receive's element lands in the runtime's memory   \
	 * and is copied to the caller's buffer as the receive returns). A     \
	 * broken contract reads zeros or loses a write. Its stack is never    \
	 * shared with a neighbour (a dense one comes from chunks of their     \
	 * own), and while resident it keeps one page more (its canary's).     \
	 * A release and its wake cost a madvise and a fault (tens of us on    \
	 * a VM): see SMARM_OPT_STACK_RELEASE_NS for actors that park often.   \
	 * A node default (a config) and a spawn option. Default 0.            \
	 * Since: SMARM_0.5. */                                                \
	XX(STACK_RELEASE, 19, 0, 1, 0, SPAWN)                                  \
	/* How long an actor of SMARM_OPT_STACK_RELEASE stays parked in a      \
	 * receive before its stack is given back: 0 at once, by the worker    \
	 * it parks on (a copy and a madvise per such park); otherwise by      \
	 * the node's monitor thread, which looks at least every 20 ms, so     \
	 * the release comes up to that much later. Default 0.                 \
	 * Since: SMARM_0.5. */                                                \
	XX(STACK_RELEASE_NS, 20, 0, 3600000000000, 0, NODE)

enum smarm_opt {
#define SMARM__OPT_ENUM(name, value, lo, hi, def, scope)                       \
	SMARM_OPT_##name = (value),
	SMARM_OPT_MAP(SMARM__OPT_ENUM)
#undef SMARM__OPT_ENUM
};

/*
 * smarm_stack_mode - values of SMARM_OPT_STACK_MODE (since SMARM_0.2).
 *
 * SMARM_STACK_GUARDED  a guard below each stack (SMARM_OPT_STACK_GUARD):
 *                      an overflow faults at once and is reported (see
 *                      "Stack overflows" in docs/embedding.md). Since 0.5,
 *                      where the kernel has guard regions (Linux 6.13),
 *                      stacks of the node's default reserve and guard are
 *                      carved from large shared mappings, each guard a
 *                      guard region: no kernel mapping per stack, only
 *                      address space (guard + reserve each) and page
 *                      tables bound them. Otherwise, and for other
 *                      shapes, each stack is a mapping of its own with a
 *                      PROT_NONE guard: two kernel mappings, and
 *                      vm.max_map_count (65530 by default) caps the
 *                      process near 32k of those.
 * SMARM_STACK_DENSE    no guard: stacks are carved from large shared
 *                      mappings, so millions fit. The lowest word of each
 *                      stack is a canary; it and the saved stack pointer
 *                      are checked every time the actor leaves the CPU,
 *                      and a violation prints a diagnostic naming the
 *                      actor and aborts the process. An overflow is
 *                      therefore caught late: the neighbouring stack may
 *                      already be corrupted. SMARM_OPT_STACK_GUARD does not
 *                      apply.
 * SMARM_STACK_AUTO     guarded while the node has fewer than its guard
 *                      budget of guarded stacks (or a freed one is at
 *                      hand): dense then, and also when no memory can
 *                      be mapped for a guarded stack. The budget is
 *                      (vm.max_map_count - 8192) / 2 read at node open
 *                      (28669 by default; SMARM_STAT_STACK_GUARD_BUDGET).
 *
 * The mode of an actor is fixed when it first runs and its stack is
 * attached; smarm_actor_get_stack(SMARM_STACK_INFO_MODE) reports it.
 */
enum smarm_stack_mode {
	SMARM_STACK_AUTO = 0,
	SMARM_STACK_GUARDED = 1,
	SMARM_STACK_DENSE = 2,
};

/*
 * smarm_config_alloc() - create a configuration holding every default.
 *
 * Returns: 0, *out set. Errors: SMARM_EINVAL out is NULL; SMARM_ENOMEM.
 * Thread-safety: any thread; one config must not be used by two threads
 * at once. Since: SMARM_0.1.
 */
SMARM_API int smarm_config_alloc(smarm_config_t **out);

/*
 * smarm_config_free() - free a configuration. NULL is a no-op. A node
 * opened from it keeps its own copy. Thread-safety: any thread.
 * Since: SMARM_0.1.
 */
SMARM_API void smarm_config_free(smarm_config_t *cfg);

/*
 * smarm_config_set_int() - set one SMARM_OPT_* value.
 *
 * The value is checked against the option's range (lo..hi of its
 * SMARM_OPT_MAP entry).
 * Returns: 0. Errors: SMARM_EINVAL cfg NULL, unknown option, or value out
 * of range (the config is unchanged). Since: SMARM_0.1.
 */
SMARM_API int smarm_config_set_int(smarm_config_t *cfg, int opt, int64_t value);

/*
 * smarm_config_get_int() - read one SMARM_OPT_* value (defaults resolved).
 *
 * Returns: 0. Errors: SMARM_EINVAL cfg or out NULL, or unknown option.
 * Since: SMARM_0.1.
 */
SMARM_API int smarm_config_get_int(const smarm_config_t *cfg, int opt,
				   int64_t *out);

/* ------------------------------------------------------------------------
 * The logger
 * --------------------------------------------------------------------- */

/*
 * Log levels, syslog's numbers (as OTP's logger): the lower, the more
 * severe. SMARM_OPT_LOG_LEVEL is the most verbose one delivered.
 * Since: SMARM_0.5.
 */
enum smarm_log_level {
	SMARM_LOG_ERROR = 3,
	SMARM_LOG_WARNING = 4,
	SMARM_LOG_NOTICE = 5,
	SMARM_LOG_INFO = 6,
	SMARM_LOG_DEBUG = 7,
};

/*
 * What a log event reports (smarm_log_event_t.kind), OTP's report kinds
 * where one matches. Since: SMARM_0.5.
 *   SMARM_REPORT_LINE   a line of the host's or a plugin's (smarm_log).
 *   SMARM_REPORT_CRASH  an actor crashed (OTP's crash report): it ended
 *                       SMARM_EXIT_CRASHED by its own doing (a crash
 *                       call, a behaviour's crash), not because an exit
 *                       signal or a stop ended it (the actor that
 *                       crashed first has the report). Level ERROR.
 *                       Also (since 0.5.0) a contained fault
 *                       (SMARM_EXIT_FAULT): the signal and its code,
 *                       the faulting address and pc, and the object
 *                       and symbol of the pc ("crash report: actor 1.7
 *                       faulted: SIGSEGV (SEGV_MAPERR) at 0x0, pc 0x...
 *                       in /p/plug.so (handler+0x12)").
 *   SMARM_REPORT_SERVER a gen_server or gen_statem ended crashed (OTP's
 *                       "terminating" report): which, its state (a
 *                       machine's), the reason, and the request or
 *                       event it was handling. Level ERROR; its actor's
 *                       crash report, if it crashed by its own doing,
 *                       follows. Also (since 0.5.0) a server or machine
 *                       whose create or init returned a failure (OTP's
 *                       crash report of an init returning {stop, R}):
 *                       which, the callback and the value it returned
 *                       ("init failed, reason -6 (SMARM_EEXIST)").
 *                       Level ERROR. A taken name is not reported (its
 *                       start returns SMARM_EEXIST, as OTP's
 *                       {error, {already_started, Pid}} is silent).
 *   SMARM_REPORT_SUPERVISOR  a supervisor's report (OTP's supervisor
 *                       reports): a child ended abnormally on its own
 *                       (child_terminated), a child's start or restart
 *                       failed (start_error), or the restart intensity
 *                       was reached and the supervisor shuts down
 *                       (shutdown). Level ERROR.
 *   SMARM_REPORT_PROGRESS  a supervisor started a child (OTP's SASL
 *                       progress report): the supervisor (the event's
 *                       pid and the line), the child's id and its pid,
 *                       at each start and restart ("progress report:
 *                       actor 1.2 started child 'db', pid 1.5"). Level
 *                       INFO, below the default SMARM_LOG_NOTICE, so off
 *                       unless asked for, as OTP's are since OTP 21.
 *                       Since: 0.5.0.
 *   SMARM_REPORT_PLUGIN the loader refused a plugin (smarm_plugin_open
 *                       and _open_flags failed): the path and why, as
 *                       the call's msg says it, and the status. Made
 *                       only when the call comes from an actor (the
 *                       logger is its node's; a plain thread has the
 *                       call's msg). Level ERROR. Since: 0.5.0.
 */
enum smarm_report_kind {
	SMARM_REPORT_LINE = 0,
	SMARM_REPORT_CRASH = 1,
	SMARM_REPORT_SERVER = 2,
	SMARM_REPORT_SUPERVISOR = 3,
	SMARM_REPORT_PROGRESS = 4,
	SMARM_REPORT_PLUGIN = 5,
};

/*
 * smarm_log_event_t - one event handed to a log handler. text is one
 * line (no newline), NUL-terminated, valid during the handler's call
 * only. pid is the actor the event is about (for a line: the actor that
 * logged it), 0 if none. time_ns is smarm_now_ns() when it was made.
 * Since: SMARM_0.5.
 */
typedef struct smarm_log_event {
	int level;	  /* a smarm_log_level */
	int kind;	  /* a smarm_report_kind */
	uint64_t time_ns; /* when it was made (smarm_now_ns) */
	smarm_pid_t pid;  /* who it is about, or 0 */
	const char *text; /* the line */
} smarm_log_event_t;

/* A log handler: called on the node's logger thread (see below). */
typedef void (*smarm_log_fn)(void *arg, const smarm_log_event_t *ev);

/* The events a logger holds for its handler before it drops new ones. */
#define SMARM_LOG_QUEUE_MAX 4096

/*
 * smarm_config_set_logger() - the handler a node opened from cfg gives
 * its log events to: fn(arg, ev), one call per event, in the order they
 * were made (per thread that made them), on a thread of the node's own
 * logger, never on a worker: a handler may block (write a file, a
 * socket) without stalling any actor. The logger thread starts with the
 * node's first event and ends in smarm_node_close, which first hands
 * every event still queued to the handler (so a handler that never
 * returns makes the close hang). While SMARM_LOG_QUEUE_MAX events wait,
 * newer ones are dropped and counted (SMARM_STAT_LOG_DROPPED). fn NULL:
 * the node logs nothing. The default is smarm_log_stderr.
 * Returns: 0. Errors: SMARM_EINVAL cfg NULL. Thread-safety: as
 * smarm_config_set_int. Since: SMARM_0.5.
 */
SMARM_API int smarm_config_set_logger(smarm_config_t *cfg, smarm_log_fn fn,
				      void *arg);

/*
 * smarm_log_stderr() - the default log handler: the event as one line
 * on stderr, "smarm: <level>: <text>" (one write(2), so lines of several
 * processes do not interleave). arg is unused. Since: SMARM_0.5.
 */
SMARM_API void smarm_log_stderr(void *arg, const smarm_log_event_t *ev);

/*
 * smarm_log() - log a line (printf's format and arguments; the result
 * is cut to SMARM_LOG_LINE_MAX bytes and each newline or control
 * character becomes a space) through the calling actor's node, as a
 * SMARM_REPORT_LINE event of level about the caller. Nothing waits for
 * the handler. Returns: 0 (also when level is filtered out by
 * SMARM_OPT_LOG_LEVEL or the node logs nothing). Errors: SMARM_EINVAL
 * fmt NULL or level not a smarm_log_level; SMARM_ENOTACTOR not called
 * from an actor; SMARM_EFULL SMARM_LOG_QUEUE_MAX events wait already,
 * SMARM_ENOMEM (either way the event is dropped and counted).
 * Thread-safety: any actor. Since: SMARM_0.5.
 */
#define SMARM_LOG_LINE_MAX 1024
SMARM_API int smarm_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * smarm_opt_name() - the symbolic name of an option id ("SMARM_OPT_WORKERS").
 *
 * Never NULL; an id this library does not know gives "SMARM_OPT_?".
 * Thread-safety: any thread. Since: SMARM_0.3.
 */
SMARM_API const char *smarm_opt_name(int opt);

/* ------------------------------------------------------------------------
 * Node
 * --------------------------------------------------------------------- */

/*
 * smarm_node_open() - create a node (a runtime instance).
 *
 * cfg may be NULL for all defaults; it is copied. No thread starts until
 * smarm_node_run(). Several nodes may exist in one process.
 * Returns: 0, *out set. Errors: SMARM_EINVAL out NULL; SMARM_ENOMEM;
 * SMARM_EATCAPACITY 255 nodes are open in the process already.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_node_open(smarm_node_t **out, const smarm_config_t *cfg);

/*
 * smarm_node_close() - destroy a node. NULL is a no-op (returns 0).
 *
 * The node must not be running. Pointers to it held by other threads
 * become invalid.
 * Returns: 0. Errors: SMARM_ESTATE the node is running (nothing is freed).
 * Thread-safety: any thread except the node's own workers. Since: SMARM_0.1.
 */
SMARM_API int smarm_node_close(smarm_node_t *node);

/*
 * smarm_exit_kind - how an actor ended (smarm_actor_join, smarm_node_run,
 * and the `how` of a smarm_signal_t).
 *
 * SMARM_EXIT_NORMAL   its body returned or it called smarm_actor_exit().
 * SMARM_EXIT_CRASHED  it called smarm_actor_crash(reason), or the runtime
 *                     could not give it a stack (reason SMARM_ENOMEM), or
 *                     a crash reached it through a link or an exit signal
 *                     while it did not trap exits (that reason).
 * SMARM_EXIT_STOPPED  it was killed: it observed a stop request
 *                     (smarm_actor_stop, smarm_node_stop_actor,
 *                     smarm_node_stop, smarm_actor_send_exit with
 *                     SMARM_EXIT_STOPPED), or a linked actor that was
 *                     killed took it along.
 * SMARM_EXIT_SHUTDOWN it was shut down: it called smarm_actor_shutdown(),
 *                     or a shutdown (smarm_node_shutdown_actor, the root
 *                     actor's end, an exit signal, a linked actor that
 *                     was shut down) reached it while it did not trap
 *                     exits. Since: SMARM_0.4.
 * SMARM_EXIT_NOPROC   only in signals: the actor was already gone (or
 *                     never existed) when it was monitored or linked.
 *                     Since: SMARM_0.4.
 * SMARM_EXIT_FAULT    its code faulted and the fault was contained
 *                     (SMARM_OPT_CONTAIN_FAULTS): reason is the signal
 *                     (SIGSEGV, SIGBUS, SIGFPE or SIGILL; SIGABRT for an
 *                     abort() contained, option value 2); the crash
 *                     report (SMARM_REPORT_CRASH) says where. A linked
 *                     actor that does not trap exits ends the same way,
 *                     as with any abnormal end; supervisors restart it
 *                     as a crash. Only seen where containment is on.
 *                     Since: SMARM_0.5.
 */
enum smarm_exit_kind {
	SMARM_EXIT_NORMAL = 0,
	SMARM_EXIT_CRASHED = 1,
	SMARM_EXIT_STOPPED = 2,
	SMARM_EXIT_SHUTDOWN = 3,
	SMARM_EXIT_NOPROC = 4,
	SMARM_EXIT_FAULT = 5,
};

/*
 * smarm_node_run() - run `root` as the root actor until no actor is left.
 *
 * The calling thread becomes worker 0; the other workers are started for
 * the run and joined before it returns. When the root actor ends, the
 * program is done: every *forest root* (an actor alive whose parent is no
 * actor or has ended) is shut down, as by smarm_node_shutdown_actor(),
 * and so is every actor whose parent ends from then on. An actor that
 * does not trap exits ends with SMARM_EXIT_SHUTDOWN; one that traps gets
 * the shutdown as a message and may finish its work (timers, channels
 * and children still work) and end when it likes; actors below a live
 * parent are left to it (a supervisor shuts its own children down). The
 * run returns once every actor has ended: one that traps and never ends
 * keeps it open. Pending timers do not keep a run open. A node can run
 * again after a run returns. (Before SMARM_0.4 every actor was stopped,
 * SMARM_EXIT_STOPPED.)
 *
 * how and reason (either may be NULL) receive how the root ended and its
 * crash reason (0 unless crashed).
 * Returns: 0 once the run is over, whatever the root's outcome.
 * Errors: SMARM_EINVAL node or root NULL; SMARM_ESTATE the node is already
 * running, or the caller is an actor; SMARM_ENOMEM the root could not be
 * spawned (nothing ran); SMARM_ESYSTEM fewer worker threads than
 * configured could be started (the run still completed on the others).
 * Thread-safety: any thread that is not an actor. Since: SMARM_0.1.
 */
SMARM_API int smarm_node_run(smarm_node_t *node, smarm_actor_cb root, void *arg,
			     int *how, intptr_t *reason);

/*
 * smarm_node_current() - the node of the calling actor, or NULL when the
 * caller is not an actor. Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API smarm_node_t *smarm_node_current(void);

/*
 * Statistics: ids for smarm_node_get_int().
 *
 * SMARM_STAT_MAP is the one list of them: the enum smarm_stat below, the
 * library's dispatch to the code that keeps each one, and
 * smarm_stat_name() are generated from it. Each entry is
 * XX(name, value, layer): value is the id, SMARM_STAT_<name> (ABI, never
 * renumbered or reused); layer names the part of the library that keeps
 * it (CORE, IO, REG) and is of no use to a caller. Values that count "in the
 * last run" are reset when a run starts; read during a run, the counts
 * summed over workers are approximate (no synchronisation). New
 * statistics may be added in later ABI minors: an id the library does
 * not know is SMARM_EINVAL.
 */
/* XX(name, value, layer) */
#define SMARM_STAT_MAP(XX)                                                     \
	/* Actors alive now (ended ones not counted). Read while actors        \
	 * spawn, it may count some spawned during the read, never misses      \
	 * one alive throughout it, and is exact when none is spawned          \
	 * meanwhile. */                                                       \
	XX(LIVE_ACTORS, 1, CORE)                                               \
	/* Slots in the slot table (grows on demand). */                       \
	XX(SLOTS, 2, CORE)                                                     \
	/* Slots not held by any actor, alive or ended-unjoined. */            \
	XX(FREE_SLOTS, 3, CORE)                                                \
	/* Actors waiting in the run queue (approximate). */                   \
	XX(RUN_QUEUE, 4, CORE)                                                 \
	/* Recycled stacks held for reuse (the node's pool plus the            \
	 * workers' small caches; since 0.5 also the free guarded stacks       \
	 * carved from chunks). */                                             \
	XX(STACK_POOL, 5, CORE)                                                \
	/* Worker threads of a run. */                                         \
	XX(WORKERS, 6, CORE)                                                   \
	/* Actors spawned since the node was opened. */                        \
	XX(SPAWNED, 7, CORE)                                                   \
	/* Timer entries pending: timed sends, plus at most one per actor      \
	 * for its latest bounded wait (sleep, recv_timeout, selset_wait,      \
	 * lock, io waits); an unbounded wait has none. */                     \
	XX(TIMERS, 8, CORE)                                                    \
	/* Actors the workers took from their wake slot                        \
	 * (SMARM_OPT_WAKE_SLOT), in the last run. Since: SMARM_0.2. */        \
	XX(WAKE_SLOT_HITS, 9, CORE)                                            \
	/* Wake-slot occupants that a newer wake pushed to the shared run      \
	 * queue, in the last run. Since: SMARM_0.2. */                        \
	XX(WAKE_SLOT_DISPLACEMENTS, 10, CORE)                                  \
	/* Idle spins (SMARM_OPT_IDLE_SPIN_NS) that found work before they     \
	 * ran out, in the last run. Since: SMARM_0.2. */                      \
	XX(IDLE_SPIN_HITS, 11, CORE)                                           \
	/* Times an idle worker went to sleep in the kernel, in the last       \
	 * run. Since: SMARM_0.2. */                                           \
	XX(IDLE_PARKS, 12, CORE)                                               \
	/* Preemption signals the monitor sent to workers whose actor          \
	 * overran its slice, in the last run. Since: SMARM_0.2. */            \
	XX(PREEMPT_SIGNALS, 13, CORE)                                          \
	/* Actors switched out by such a signal, in the last run (also at a    \
	 * patched libc return: SMARM_STAT_PREEMPT_RETURNS).                   \
	 * Since: SMARM_0.2. */                                                \
	XX(PREEMPT_ASYNC, 14, CORE)                                            \
	/* Signals that found the actor where it must not be switched          \
	 * (libc, the runtime, a disabled region); it yields at its next       \
	 * safe point. In the last run. Since: SMARM_0.2. */                   \
	XX(PREEMPT_DEFERRED, 15, CORE)                                         \
	/* Guarded stacks mapped now: attached to actors or kept for           \
	 * reuse (pooled, cached, or free in a chunk until the node is         \
	 * closed). Since: SMARM_0.2. */                                       \
	XX(STACKS_GUARDED, 16, CORE)                                           \
	/* Dense stacks attached to actors now. Since: SMARM_0.2. */           \
	XX(STACKS_DENSE, 17, CORE)                                             \
	/* Park-path stack shrinks since the node was opened.                  \
	 * Since: SMARM_0.2. */                                                \
	XX(STACK_SHRINKS, 18, CORE)                                            \
	/* Guarded stacks SMARM_STACK_AUTO maps before it turns to dense       \
	 * ones (carved from chunks or with a mapping of their own).           \
	 * Since: SMARM_0.2. */                                                \
	XX(STACK_GUARD_BUDGET, 19, CORE)                                       \
	/* Actors registered with the epoll thread now (parked on an fd).      \
	 * Since: SMARM_0.2. */                                                \
	XX(IO_FD_WAITERS, 20, IO)                                              \
	/* smarm_io_blocking() jobs submitted and not yet finished,            \
	 * including jobs whose caller was stopped. Since: SMARM_0.2. */       \
	XX(IO_BLOCKING, 21, IO)                                                \
	/* Io threads running now (the epoll thread plus the pool              \
	 * threads); 0 between runs. Since: SMARM_0.2. */                      \
	XX(IO_THREADS, 22, IO)                                                 \
	/* Actors that ended and are still owed a smarm_actor_join() or        \
	 * smarm_actor_detach() (zombies): each holds a slot against           \
	 * SMARM_OPT_MAX_ACTORS, though SMARM_STAT_LIVE_ACTORS no longer       \
	 * counts it. 0 between runs (a run's end releases them).              \
	 * Since: SMARM_0.3. */                                                \
	XX(ENDED_UNJOINED, 23, CORE)                                           \
	/* Of SMARM_STAT_PREEMPT_ASYNC, the actors switched out at the         \
	 * return of a libc call, where a signal that found them inside libc   \
	 * had made that return a safe point. In the last run.                 \
	 * Since: SMARM_0.4. */                                                \
	XX(PREEMPT_RETURNS, 24, CORE)                                          \
	/* Monitors in place (set and not yet fired, demonitored or freed      \
	 * by their watcher's end). Since: SMARM_0.4. */                       \
	XX(MONITORS, 25, OTP)                                                  \
	/* Links held, counted at each end: a link between two live actors     \
	 * counts 2. Since: SMARM_0.4. */                                      \
	XX(LINKS, 26, OTP)                                                     \
	/* Names bound to actors now (smarm_register). Since: SMARM_0.4. */    \
	XX(REG_NAMES, 27, REG)                                                 \
	/* Mailboxes published now (smarm_mailbox_publish).                    \
	 * Since: SMARM_0.4. */                                                \
	XX(REG_MAILBOXES, 28, REG)                                             \
	/* Process-group memberships now, summed over the groups               \
	 * (smarm_group_join). Since: SMARM_0.4. */                            \
	XX(REG_MEMBERSHIPS, 29, REG)                                           \
	/* Acquisitions of the node's shared locks (the slot free list, the    \
	 * shared run queue, the stack pool, the timers) in the last run: a    \
	 * measure of how often workers serialise on node-wide state. Not      \
	 * counting the statistics' own reads. Since: SMARM_0.4. */            \
	XX(GLOBAL_LOCKS, 30, CORE)                                             \
	/* Calls, casts and infos served by the node's gen_servers (timer      \
	 * infos included) and handled by its gen_statem machines (the calls,  \
	 * casts and infos they received; not timeouts or inserted events)     \
	 * since it was opened. Since: SMARM_0.5. */                           \
	XX(SERVER_REQUESTS, 31, BEHAVIOUR)                                     \
	/* Restarts made by the node's supervisors since the node was          \
	 * opened: one per child failure admitted by a supervisor's            \
	 * intensity, however many siblings it cycled. Since: SMARM_0.5. */    \
	XX(SUP_RESTARTS, 32, OTP)                                              \
	/* Of SMARM_STAT_PREEMPT_ASYNC, the actors that resumed on another     \
	 * worker thread to even out the workers (SMARM_OPT_PREEMPT_MOVE),     \
	 * in the last run. Since: SMARM_0.5. */                               \
	XX(PREEMPT_MOVED, 33, CORE)                                            \
	/* Queued actors an exit signal or a stop moved ahead to run next on   \
	 * the stopper's worker (a supervisor's shutdown does not wait         \
	 * behind busy producers), in the last run. Since: SMARM_0.5. */       \
	XX(EXPEDITED, 34, CORE)                                                \
	/* Log events the node's logger dropped since the node was opened:     \
	 * its queue was full (SMARM_LOG_QUEUE_MAX events waiting for the      \
	 * handler) or a line could not be allocated. Since: SMARM_0.5. */     \
	XX(LOG_DROPPED, 35, CORE)                                              \
	/* Faults contained (SMARM_OPT_CONTAIN_FAULTS): actors that ended      \
	 * SMARM_EXIT_FAULT by a fault of their own, since the node was        \
	 * opened. Since: SMARM_0.5. */                                        \
	XX(FAULTS_CONTAINED, 36, CORE)                                         \
	/* Hibernations since the node was opened: actors that gave their      \
	 * stack back while they waited (smarm_hibernate, a hibernating        \
	 * server). Since: SMARM_0.5. */                                       \
	XX(HIBERNATIONS, 37, CORE)                                             \
	/* Trace events dropped on full rings (smarm_config_set_trace)         \
	 * since the node was opened; 0 when it does not trace.                \
	 * Since: SMARM_0.5. */                                                \
	XX(TRACE_DROPPED, 38, OBS)                                             \
	/* Causal profiling experiments written to the profile                 \
	 * (smarm_config_set_causal) since the node was opened; 0 when it      \
	 * does not profile. Since: SMARM_0.5. */                              \
	XX(CAUSAL_EXPERIMENTS, 39, OBS)                                        \
	/* Delay the causal profiler has injected since the node was           \
	 * opened, in ns: the virtual speedups' cost in wall time (each        \
	 * actor not in the selected site owes it). Since: SMARM_0.5. */       \
	XX(CAUSAL_DELAY_NS, 40, OBS)                                           \
	/* Messages from other nodes to a served server (smarm_dist_serve)     \
	 * that were no gen_server request, that its behaviour has no info     \
	 * operation for (docs/distribution.md, "handle_info") and that no     \
	 * dist mailbox took: dropped, each with a log line, since the node    \
	 * was opened. Since: SMARM_0.5. */                                    \
	XX(DIST_INFO_DROPPED, 41, CORE)                                        \
	/* Stacks given back by parked actors (SMARM_OPT_STACK_RELEASE)        \
	 * since the node was opened. Since: SMARM_0.5. */                     \
	XX(STACK_RELEASES, 42, CORE)                                           \
	/* Actors whose stack is given back now: parked, their live stack      \
	 * bytes on the heap. Since: SMARM_0.5. */                             \
	XX(STACKS_RELEASED, 43, CORE)

enum smarm_stat {
#define SMARM__STAT_ENUM(name, value, layer) SMARM_STAT_##name = (value),
	SMARM_STAT_MAP(SMARM__STAT_ENUM)
#undef SMARM__STAT_ENUM
};

/*
 * smarm_node_get_int() - read one SMARM_STAT_* value.
 *
 * Returns: 0. Errors: SMARM_EINVAL node or out NULL, or unknown id.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_node_get_int(const smarm_node_t *node, int stat,
				 int64_t *out);

/*
 * smarm_stat_name() - the symbolic name of a statistic id
 * ("SMARM_STAT_LIVE_ACTORS").
 *
 * Never NULL; an id this library does not know gives "SMARM_STAT_?". A
 * monitoring tool can walk the ids from 1 until it meets the first unknown
 * one to list every statistic of the library it runs with, also those
 * newer than the header it was compiled against.
 * Thread-safety: any thread. Since: SMARM_0.3.
 */
SMARM_API const char *smarm_stat_name(int stat);

/*
 * smarm_node_stop_actor() - ask an actor of `node` to stop, from any thread.
 *
 * The same as smarm_actor_stop() but usable from plain OS threads (a
 * signal-handling thread, a foreign event loop): the target observes the
 * request at its next safe point, runs its cleanup handlers and ends with
 * SMARM_EXIT_STOPPED. A parked target is woken.
 * Returns: 0. Errors: SMARM_EINVAL node NULL; SMARM_ENOPROC pid names no
 * live actor of this node (also when the node is not running).
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_node_stop_actor(smarm_node_t *node, smarm_pid_t pid);

/*
 * smarm_node_stop() - end a running node's run from outside: every actor
 * alive, the root included, is killed (as by smarm_actor_stop: trapping
 * exits does not turn it into a message), runs its cleanup handlers and
 * ends with SMARM_EXIT_STOPPED, and smarm_node_run() returns once they
 * all have (the root's `how` is then SMARM_EXIT_STOPPED, unless it ended
 * on its own first). Actors spawned while the run winds down are killed
 * too. Calling it again, or while the root is ending anyway, is harmless
 * (after the root's end it kills the actors that were left to drain). It
 * concerns the run in progress only: nothing carries over to a later
 * run.
 *
 * Use it from a signal-handling thread (sigwait / signalfd on SIGINT),
 * a host's shutdown path or a watchdog. It takes locks, so it is not
 * async-signal-safe: call it from a thread, never from inside a signal
 * handler.
 * Returns: 0 the stop was requested. Errors: SMARM_EINVAL node NULL;
 * SMARM_ESTATE the node is not running (nothing to stop).
 * Thread-safety: any thread, also an actor of the node. Since: SMARM_0.3.
 */
SMARM_API int smarm_node_stop(smarm_node_t *node);

/* ------------------------------------------------------------------------
 * Actors
 * --------------------------------------------------------------------- */

/*
 * smarm_pid_eq() - whether two pids name the same actor.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API bool smarm_pid_eq(smarm_pid_t a, smarm_pid_t b);

/*
 * smarm_spawn_opts_alloc() - create spawn options (all fields unset: the
 * node's defaults apply). The spawn options are the SMARM_OPT_MAP entries
 * of scope SPAWN: SMARM_OPT_STACK_RESERVE, SMARM_OPT_STACK_GUARD,
 * SMARM_OPT_STACK_MODE, SMARM_OPT_LINK, SMARM_OPT_CONTAIN_FAULTS and
 * SMARM_OPT_STACK_RELEASE.
 * Returns: 0. Errors: SMARM_EINVAL out NULL; SMARM_ENOMEM.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_spawn_opts_alloc(smarm_spawn_opts_t **out);

/*
 * smarm_spawn_opts_free() - free spawn options; NULL is a no-op. Actors
 * already spawned with them are unaffected.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API void smarm_spawn_opts_free(smarm_spawn_opts_t *opts);

/*
 * smarm_spawn_opts_set_int() - set a stack option for spawns using opts.
 *
 * Returns: 0. Errors: SMARM_EINVAL opts NULL, not a spawn option (scope
 * SPAWN in SMARM_OPT_MAP), or out of the option's range. Since: SMARM_0.1.
 */
SMARM_API int smarm_spawn_opts_set_int(smarm_spawn_opts_t *opts, int opt,
				       int64_t value);

/*
 * smarm_actor_spawn() - start a new actor running fn(arg).
 *
 * The new actor is queued to run; the caller continues (an actor whose
 * timeslice ended inside the spawn yields as it returns: a preemption
 * point, as smarm_chan_send's). Its parent is the
 * caller. If out is non-NULL the actor is *joinable*: its slot is kept
 * after it ends until smarm_actor_join() or smarm_actor_detach() is called
 * on it (as with pthreads), or until the run ends. If out is NULL the
 * actor starts detached.
 * opts may be NULL. The stack is given to the actor when it first runs: a
 * stack that cannot be mapped then ends the actor as SMARM_EXIT_CRASHED
 * with reason SMARM_ENOMEM.
 *
 * Returns: 0. Errors: SMARM_EINVAL fn NULL; SMARM_ENOTACTOR caller is not
 * an actor; SMARM_EATCAPACITY all SMARM_OPT_MAX_ACTORS slots are taken:
 * a slot is held by each actor alive (SMARM_STAT_LIVE_ACTORS) and by
 * each ended actor still owed a join or detach
 * (SMARM_STAT_ENDED_UNJOINED); SMARM_ENOMEM the slot table could not
 * grow. The slot is claimed before anything else is touched, so a
 * refusal costs a few uncontended locks (the slot free list and each
 * worker's slot cache) and no allocation: an accept loop under
 * overload may simply try and back off.
 * Thread-safety: actor context only. Since: SMARM_0.1.
 */
SMARM_API int smarm_actor_spawn(smarm_pid_t *out, smarm_actor_cb fn, void *arg,
				const smarm_spawn_opts_t *opts);

/*
 * smarm_actor_join() - wait for a joinable actor to end and learn how.
 *
 * Parks until the actor has ended, then releases its slot. how (a
 * smarm_exit_kind) and reason (the crash reason, else 0) may be NULL.
 * Each joinable actor is joined or detached exactly once.
 * Returns: 0. Errors: SMARM_ENOTACTOR; SMARM_EINVAL pid is the caller;
 * SMARM_ENOPROC pid names no actor (never spawned, already joined or
 * detached and gone); SMARM_ESTATE the actor is detached or another actor
 * is already joining it. Safe point (a stop request ends the caller).
 * Thread-safety: actor context only. Since: SMARM_0.1.
 */
SMARM_API int smarm_actor_join(smarm_pid_t pid, int *how, intptr_t *reason);

/*
 * smarm_actor_detach() - give up the right to join an actor; its slot is
 * released as soon as it ends (or now, if it already has).
 * Returns: 0. Errors: SMARM_ENOTACTOR; SMARM_ENOPROC; SMARM_ESTATE already
 * detached or being joined. Thread-safety: actor context only.
 * Since: SMARM_0.1.
 */
SMARM_API int smarm_actor_detach(smarm_pid_t pid);

/*
 * smarm_actor_self() - the calling actor's pid, SMARM_PID_NONE when the
 * caller is not an actor. Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API smarm_pid_t smarm_actor_self(void);

/*
 * smarm_actor_is_alive() - whether pid names a live actor of the caller's
 * node (false outside an actor). An actor stops being alive when it has
 * ended (its cleanup handlers done): anyone who has received its Down,
 * its exit signal or a supervisor's word that it is gone sees false.
 * Thread-safety: any thread.
 * Since: SMARM_0.1.
 */
SMARM_API bool smarm_actor_is_alive(smarm_pid_t pid);

/*
 * smarm_actor_yield() - let other queued actors run, then continue.
 *
 * Returns: 0. Errors: SMARM_ENOTACTOR. Safe point.
 * Thread-safety: actor context only. Since: SMARM_0.1.
 */
SMARM_API int smarm_actor_yield(void);

/*
 * smarm_actor_sleep() - park the calling actor for at least ns nanoseconds.
 *
 * Returns: 0. Errors: SMARM_ENOTACTOR. Safe point.
 * Thread-safety: actor context only. Since: SMARM_0.1.
 */
SMARM_API int smarm_actor_sleep(uint64_t ns);

/*
 * smarm_check() - an explicit safe point for long computations.
 *
 * Observes a pending stop request (the actor ends) and yields if the
 * actor has used up its timeslice (SMARM_OPT_TIMESLICE_NS). Cheap enough
 * for inner loops: a TLS load and a clock read.
 * Returns: 0, also outside an actor (then it does nothing).
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_check(void);

/*
 * smarm_preempt_disable() - open a region in which the calling actor is
 * not preempted asynchronously.
 *
 * Use it around calls into code that is not reentrant across actors on
 * one thread: a library holding a pthread mutex or thread-local state
 * between two of its calls, for instance. Regions nest; each disable
 * needs one smarm_preempt_enable(). Inside a region the actor still
 * yields, parks and observes stop requests at the runtime's explicit
 * safe points (any blocking call, smarm_check, smarm_actor_yield). A
 * timeslice that ends inside a region is honoured when the outermost
 * region ends.
 * Returns: 0. Errors: SMARM_ENOTACTOR outside an actor; SMARM_EINVAL
 * nesting deeper than 2^32-1.
 * Thread-safety: actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_preempt_disable(void);

/*
 * smarm_preempt_allow_object() - let actor code in the shared object that
 * contains addr be preempted asynchronously.
 *
 * A signal-driven preemption switches an actor out only while it executes
 * text the runtime may interrupt: the host executable, and the objects
 * named here (a host whose actor code lives in its own shared library
 * passes the address of a function in it). Code of every other object
 * (libc, the dynamic loader, libffi, libsmarm) is never interrupted; an
 * actor looping there yields at its next safe point or at the next signal
 * that lands in allowed text. Allowed code must not hold locks or
 * thread-local state across an instruction boundary that another actor
 * on the same thread could trip over, or it must bracket that region with
 * smarm_preempt_disable().
 *
 * While it is allowed the runtime holds a dlopen(3) reference on the
 * object, so a dlclose() by the host does not unmap it; to unload it,
 * end the allowance with smarm_preempt_disallow_object() (before
 * SMARM_0.3 an allowed object was pinned for the life of the process).
 * An allowance is a set membership, not a count: allowing an object
 * twice takes one reference, and one disallow ends it.
 * Returns: 0 (also if the object was allowed already). Errors:
 * SMARM_EINVAL addr NULL, or inside libsmarm, libc, the loader or
 * another system runtime library; SMARM_ENOENT addr is in no loaded
 * object (or in one being unloaded); SMARM_ENOMEM the table of allowed
 * text (64 segments) is full.
 * Thread-safety: any thread, any time (not from a signal handler).
 * Since: SMARM_0.2.
 */
SMARM_API int smarm_preempt_allow_object(const void *addr);

/*
 * smarm_preempt_disallow_object() - end the allowance of the shared
 * object that contains addr, so that it can be unloaded.
 *
 * From its return on, no signal switches an actor out while it executes
 * that object's text: the call waits for any preemption signal that is
 * being handled on another thread at that moment and might still act on
 * the allowance (microseconds). Then it drops the runtime's dlopen
 * reference; if that was the last one, the object is unloaded inside
 * this call (its destructors run on the calling thread, with no runtime
 * lock held). Unload an object only when no actor can be executing its
 * code or be parked with its code on the stack: that is the host's part,
 * preemption or not. The host executable can be disallowed too (and
 * allowed again); it is never unloaded. The object may be allowed again
 * later, also after it was unloaded and loaded anew.
 * Returns: 0. Errors: SMARM_EINVAL addr NULL; SMARM_ENOENT addr is in no
 * loaded object, or its object is not allowed now (never was, or was
 * disallowed already; libc and the other objects that are never
 * preemptible are never allowed).
 * Thread-safety: any thread, any time (not from a signal handler); also
 * from an actor, which then blocks its worker for the short wait.
 * Since: SMARM_0.3.
 */
SMARM_API int smarm_preempt_disallow_object(const void *addr);

/*
 * smarm_preempt_enable() - close the innermost smarm_preempt_disable()
 * region. Closing the outermost one is a safe point: if the timeslice
 * ended inside the region the actor yields here (and a pending stop
 * request ends it).
 * Returns: 0. Errors: SMARM_ENOTACTOR outside an actor; SMARM_ESTATE no
 * region is open.
 * Thread-safety: actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_preempt_enable(void);

/*
 * Keys for smarm_actor_get_stack() (since SMARM_0.2).
 *
 * SMARM_STACK_INFO_RESERVE     usable stack bytes (page-rounded).
 * SMARM_STACK_INFO_GUARD       guard bytes below the stack; 0 for a dense
 *                              stack.
 * SMARM_STACK_INFO_MODE        SMARM_STACK_GUARDED or SMARM_STACK_DENSE
 *                              once the stack is attached (first run);
 *                              before that the requested mode, which may
 *                              be SMARM_STACK_AUTO.
 * SMARM_STACK_INFO_DEPTH_HIGH_WATER  deepest stack use seen, in bytes
 *                              from the top. Sampled each time the actor
 *                              leaves the CPU (yield, park, preemption):
 *                              a spike it never left the CPU inside is
 *                              invisible, and 0 means "never descheduled
 *                              at depth", not "never ran". A shrink
 *                              lowers it to the depth at that park.
 * SMARM_STACK_INFO_PARKS_SINCE_SHRINK  parks since the stack was last
 *                              shrunk (or since the actor started).
 * SMARM_STACK_INFO_SHRINKS     times the stack was shrunk: on a park at
 *                              least 256 KiB shallower than the high
 *                              water, at most once per 64 parks, the
 *                              pages between are given back to the
 *                              kernel (MADV_FREE), less a one-page
 *                              redzone below the live stack pointer.
 */
enum smarm_stack_info {
	SMARM_STACK_INFO_RESERVE = 1,
	SMARM_STACK_INFO_GUARD = 2,
	SMARM_STACK_INFO_MODE = 3,
	SMARM_STACK_INFO_DEPTH_HIGH_WATER = 4,
	SMARM_STACK_INFO_PARKS_SINCE_SHRINK = 5,
	SMARM_STACK_INFO_SHRINKS = 6,
};

/*
 * smarm_actor_get_stack() - read one fact about an actor's stack.
 *
 * pid names an actor of the caller's node (smarm_actor_self() for the
 * caller). The values are lock-free snapshots, coherent with the pid: a
 * read that raced the actor's end reports SMARM_ENOPROC rather than its
 * successor's stack. Exact resident size is deliberately not offered.
 * Returns: 0, *out set. Errors: SMARM_ENOTACTOR the caller is not an
 * actor; SMARM_EINVAL out NULL or key not a SMARM_STACK_INFO_* value;
 * SMARM_ENOPROC pid names no live actor.
 * Thread-safety: actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_actor_get_stack(smarm_pid_t pid, int key, int64_t *out);

/*
 * smarm_actor_exit() - end the calling actor normally.
 *
 * Its cleanup handlers run (newest first), then it ends with
 * SMARM_EXIT_NORMAL. Does not return when called from an actor.
 * Returns: only SMARM_ENOTACTOR. Thread-safety: actor context only.
 * Since: SMARM_0.1.
 */
SMARM_API int smarm_actor_exit(void);

/*
 * smarm_actor_crash() - end the calling actor as crashed.
 *
 * Only the calling actor ends: its cleanup handlers run, then it ends with
 * SMARM_EXIT_CRASHED and `reason`, which its joiner receives. reason is
 * opaque to the runtime (an error code, or a pointer the application
 * keeps valid). Does not return when called from an actor.
 * Returns: only SMARM_ENOTACTOR. Thread-safety: actor context only.
 * Since: SMARM_0.1.
 */
SMARM_API int smarm_actor_crash(intptr_t reason);

/*
 * smarm_actor_stop() - ask an actor of the caller's node to stop.
 *
 * Sets the target's stop flag and wakes it if parked. The target ends with
 * SMARM_EXIT_STOPPED at its next safe point (park entry or wake, yield,
 * smarm_check, a runtime call), after its cleanup handlers ran. A stop of
 * the caller itself takes effect at its next safe point. Stopping an
 * actor that is already exiting is harmless.
 * Returns: 0. Errors: SMARM_ENOTACTOR; SMARM_ENOPROC no such live actor.
 * Thread-safety: actor context only (see smarm_node_stop_actor for other
 * threads). Since: SMARM_0.1.
 */
SMARM_API int smarm_actor_stop(smarm_pid_t pid);

/*
 * smarm_cleanup_push() - register fn(arg) to run when the actor ends.
 *
 * Handlers run newest first on every exit path: the body returning,
 * smarm_actor_exit, smarm_actor_crash and a stop. They run on the actor's
 * stack with no runtime lock held and may call the runtime (including
 * blocking calls); a stop request is not observed again while they run.
 * Returns: 0. Errors: SMARM_EINVAL fn NULL; SMARM_ENOTACTOR; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.1.
 */
SMARM_API int smarm_cleanup_push(smarm_cleanup_cb fn, void *arg);

/*
 * smarm_cleanup_pop() - remove the newest cleanup handler, running it
 * first if execute is true.
 * Returns: 0. Errors: SMARM_ENOTACTOR; SMARM_ENOENT no handler is pushed.
 * Thread-safety: actor context only. Since: SMARM_0.1.
 */
SMARM_API int smarm_cleanup_pop(bool execute);

/* ------------------------------------------------------------------------
 * Time and timers
 * --------------------------------------------------------------------- */

/*
 * smarm_now_ns() - CLOCK_MONOTONIC in nanoseconds.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API uint64_t smarm_now_ns(void);

/*
 * smarm_chan_send_after() - send a copy of *elem on ch after delay_ns.
 *
 * The element is copied now; ownership of what it refers to passes to the
 * timer. When the timer fires the element is sent as by smarm_chan_send;
 * if that fails (the receiver is gone) the channel's destructor runs on it.
 * A timer that has not fired when the run ends is dropped (destructor
 * runs): timers never keep a run open. The timer holds a sender reference
 * of its own on ch until it fires or is cancelled, so the channel does
 * not close (nor is it freed) before then; the caller's
 * smarm_chan_sender_free never gives that reference up.
 * out (may be NULL) receives an id for smarm_timer_cancel.
 * Returns: 0. Errors: SMARM_EINVAL ch or elem NULL, or ch no channel
 * handle; SMARM_ENOTACTOR; SMARM_ECLOSED every sender reference is gone;
 * SMARM_ESTATE ch was freed; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.1.
 */
SMARM_API int smarm_chan_send_after(smarm_chan_t *ch, const void *elem,
				    uint64_t delay_ns, smarm_timer_t *out);

/*
 * smarm_timer_cancel() - cancel a pending timed send of the caller's node.
 *
 * On success the element is never sent and the channel's destructor runs
 * on it.
 * Returns: 0 cancelled. Errors: SMARM_ENOTACTOR; SMARM_ENOENT the timer
 * already fired, was cancelled, or never existed.
 * Thread-safety: actor context only. Since: SMARM_0.1.
 */
SMARM_API int smarm_timer_cancel(smarm_timer_t timer);

/* ------------------------------------------------------------------------
 * Channels
 * --------------------------------------------------------------------- */

/*
 * smarm_chan_alloc() - create an unbounded multi-producer, multi-consumer
 * channel of elem_size-byte elements.
 *
 * The caller receives the channel holding one *sender reference* and one
 * *receiver reference*. More come from smarm_chan_sender_dup() and
 * smarm_chan_receiver_dup(): typically each producer and each consumer
 * owns one and frees it when done. When the last sender reference is
 * freed the channel is *closed*: receivers still get every queued
 * element, then SMARM_ECLOSED; every waiting receiver is woken to see it.
 * When the last receiver reference is freed, queued elements are
 * destroyed and later sends fail with SMARM_ECLOSED. The channel is freed
 * when both kinds of reference are gone (a pending timed send holds a
 * sender reference of its own): from then on every call with its handle
 * returns SMARM_ESTATE (see Conventions). A call with the handle after
 * the caller gave up every reference of its own is misuse: SMARM_ESTATE
 * once the channel is freed, its usual result while a pending timed send
 * still holds the channel.
 *
 * Many receivers (work sharing): each element goes to exactly one
 * receiver. Receivers that wait on an empty channel (actors in
 * smarm_chan_recv, plain threads in smarm_chan_recv, actors in a select
 * with an arm on it) are served in the order they started waiting: each
 * send wakes the oldest. Receivers that do not wait (try_recv, a receive
 * that finds an element queued) take the oldest element at once.
 *
 * Elements are copied in and out (memcpy); elem_free (may be NULL) is run
 * on any element that is never received.
 * Returns: 0. Errors: SMARM_EINVAL out NULL or elem_size 0 or > 65536;
 * SMARM_ENOMEM. Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_chan_alloc(smarm_chan_t **out, size_t elem_size,
			       smarm_elem_free_cb elem_free);

/*
 * smarm_chan_sender_dup() - take one more sender reference.
 * Returns: 0. Errors: SMARM_EINVAL ch NULL or no channel handle;
 * SMARM_ECLOSED the last sender reference is already gone; SMARM_ESTATE
 * ch was freed. Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_chan_sender_dup(smarm_chan_t *ch);

/*
 * smarm_chan_sender_free() - give up one sender reference. The last one
 * closes the channel and wakes a parked receiver.
 * Returns: 0. Errors: SMARM_EINVAL ch NULL or no channel handle;
 * SMARM_ESTATE no sender reference is left but the runtime's own (those
 * of pending timed sends, monitors, trapped exits and mailboxes), or ch
 * was freed.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_chan_sender_free(smarm_chan_t *ch);

/*
 * smarm_chan_receiver_dup() - take one more receiver reference, for one
 * more consumer of ch.
 * Returns: 0. Errors: SMARM_EINVAL ch NULL or no channel handle;
 * SMARM_ESTATE the channel was freed, or its last receiver reference is
 * already gone; SMARM_ENOMEM 2^32 - 1 references are held.
 * Thread-safety: any thread. Since: SMARM_0.3.
 */
SMARM_API int smarm_chan_receiver_dup(smarm_chan_t *ch);

/*
 * smarm_chan_receiver_free() - give up one receiver reference. The last
 * one destroys queued elements (elem_free runs on each, outside any
 * lock) and closes the notify fd (smarm_chan_notify_fd), if any.
 * Returns: 0. Errors: SMARM_EINVAL ch NULL or no channel handle;
 * SMARM_ESTATE the channel was freed, no receiver reference is left, or
 * this is the last one and a receive or select wait on ch is in progress
 * (an actor or thread parked, or woken and not yet resumed; nothing is
 * freed).
 * Thread-safety: any thread; but a reference must not be freed while its
 * holder may still start a receive on ch. Since: SMARM_0.1 (counted
 * references since SMARM_0.3).
 */
SMARM_API int smarm_chan_receiver_free(smarm_chan_t *ch);

/*
 * smarm_chan_send() - append a copy of *elem; never blocks.
 *
 * On success the channel owns the element; on failure the caller still
 * does. Wakes the receiver that has waited longest, also from a plain
 * OS thread. Elements are taken in the order sends completed. An actor
 * whose timeslice ended inside the send yields as it returns (a
 * preemption point, as smarm_check; a send never waits), and a send that
 * finds a backlog ends the sender's slice every 1024 queued elements (as
 * the BEAM charges a sender to a long queue), so a producer faster than
 * its consumer lets it run instead of growing the queue.
 * Returns: 0. Errors: SMARM_EINVAL ch or elem NULL, or ch no channel
 * handle; SMARM_ECLOSED every receiver reference is gone, or every sender
 * reference has been freed (the channel is closed: a receiver drains what
 * was queued, then gets SMARM_ECLOSED); SMARM_ESTATE ch was freed;
 * SMARM_ENOMEM the queue could not grow.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_chan_send(smarm_chan_t *ch, const void *elem);

/*
 * smarm_chan_recv() - take the oldest element into *out, waiting while the
 * channel is empty and open.
 *
 * An actor parks; a plain OS thread (not a node's worker) blocks in the
 * kernel. Either queues behind the receivers already waiting on ch and is
 * served in that order (see smarm_chan_alloc); it is woken by a send from
 * any actor or thread, and by the close. An actor stopped while parked
 * loses nothing: an element already handed to it goes back to the front
 * of the queue for the next receiver. An actor spawned with
 * SMARM_OPT_STACK_RELEASE gives its stack pages back while it waits
 * here (the element is handed to the runtime's memory and copied to
 * *out as the call returns); if that memory cannot be had, it waits
 * keeping its stack, which is no error.
 * Returns: 0. Errors: SMARM_EINVAL ch or out NULL, or ch no channel
 * handle; SMARM_ENOTACTOR called on a worker thread outside an actor (a
 * runtime callback); SMARM_ECLOSED closed and drained; SMARM_ESTATE the
 * channel was freed, or every receiver reference was. Safe point in an
 * actor.
 * Thread-safety: any thread. Since: SMARM_0.1 (plain threads and many
 * receivers since SMARM_0.3).
 */
SMARM_API int smarm_chan_recv(smarm_chan_t *ch, void *out);

/*
 * smarm_hibernate() - wait for ch without a stack, then go on at fn(arg).
 *
 * As the BEAM's erlang:hibernate/3: the calling actor gives up its
 * stack (back to the node's stack pool) until ch is ready (an element is
 * queued, or ch is closed), then starts over on a fresh stack at
 * fn(arg), which receives from ch as usual. Nothing of the caller's
 * frames survives: whatever fn needs must be reachable from arg, off
 * the stack. fn returning ends the actor normally, as its body would.
 * A hibernated actor costs its slot and this wait (some 160 bytes), not
 * a stack page: for a great many actors that wait long.
 * While hibernated it is parked as in smarm_chan_recv: a stop or a kill
 * (smarm_actor_stop, an exit signal, the node's stop) ends it, its
 * cleanup handlers run (their arguments must not point into the stack
 * it gave up) and its monitors and links fire. Timed sends
 * (smarm_chan_send_after) to ch wake it as any send does. If ch is
 * ready at the call, fn(arg) runs at once (on a fresh stack all the
 * same). Another receiver of ch may take the element first: the actor
 * then hibernates again, and fn runs only when ch is ready once more.
 * Returns: nothing on success (never returns). Errors: SMARM_EINVAL fn
 * NULL, ch NULL or no channel handle; SMARM_ENOTACTOR not called from
 * an actor; SMARM_ESTATE the channel was freed or every receiver
 * reference was, or called inside a runtime callback or while the actor
 * is exiting (a cleanup handler); SMARM_EAGAIN parking is refused (a
 * behaviour's terminate that must not block); SMARM_ENOMEM. Must not be
 * called from a behaviour's callbacks (the server's engine is on the
 * stack): a server hibernates with smarm_gs_hibernate(). Safe point.
 * Thread-safety: actors only. Since: SMARM_0.5.
 */
SMARM_API int smarm_hibernate(smarm_chan_t *ch, void (*fn)(void *), void *arg);

/*
 * smarm_chan_recv_timeout() - smarm_chan_recv() bounded by timeout_ns,
 * under the timeout rule of the Conventions: 0 takes an element only if
 * one is queued now, SMARM_NO_TIMEOUT is smarm_chan_recv(). An element
 * that races the deadline wins.
 * Returns: 0. Errors: as smarm_chan_recv, plus SMARM_ETIMEDOUT.
 * Thread-safety: any thread (as smarm_chan_recv). Since: SMARM_0.1 (the
 * timeout rule since SMARM_0.3: 0 no longer yields first; plain threads
 * since SMARM_0.3).
 */
SMARM_API int smarm_chan_recv_timeout(smarm_chan_t *ch, void *out,
				      uint64_t timeout_ns);

/*
 * smarm_chan_try_recv() - take the oldest element if there is one; never
 * parks.
 * Returns: 0. Errors: SMARM_EINVAL ch or out NULL, or ch no channel
 * handle; SMARM_EAGAIN empty and open; SMARM_ECLOSED closed and drained;
 * SMARM_ESTATE the channel was freed, or every receiver reference was.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_chan_try_recv(smarm_chan_t *ch, void *out);

/*
 * smarm_chan_len() - the number of elements queued now (a snapshot).
 * Returns: 0, *out set. Errors: SMARM_EINVAL ch or out NULL, or ch no
 * channel handle; SMARM_ESTATE ch was freed.
 * Thread-safety: any thread. Since: SMARM_0.3 (SMARM_0.1 returned the
 * count or an error in one int64_t).
 */
SMARM_API int smarm_chan_len(smarm_chan_t *ch, size_t *out);

/*
 * smarm_chan_notify_fd() - an eventfd that is readable while ch may be
 * ready, so a foreign event loop (epoll, poll, libuv, a GUI loop) can
 * wait for ch without polling it.
 *
 * The first call makes the fd (non-blocking, close-on-exec; readable at
 * once if ch is ready now); later calls return the same fd. The channel
 * owns it: it is closed when the last receiver reference is freed, so
 * take it out of your event loop before that, and never close it
 * yourself. The runtime adds 1 to its counter each time ch becomes ready:
 * an element is sent while none is queued, or the channel closes.
 *
 * Protocol, which loses no notification in any interleaving: when the fd
 * is readable, (1) read(2) 8 bytes from it, which resets it; then (2)
 * drain with smarm_chan_try_recv() until it returns SMARM_EAGAIN (or
 * SMARM_ECLOSED: closed and drained, stop watching). An element sent
 * after the reset either finds the queue non-empty, and the drain takes
 * it, or finds it empty and makes the fd readable again. Other receivers
 * may take elements first: a wake-up can find nothing to drain (EAGAIN
 * on the first try_recv); that is not an error.
 *
 * Cost: a channel without a notify fd pays one predictable branch per
 * send; with one, a send that finds the queue empty also makes one
 * write(2) on the eventfd.
 * Returns: 0, *fd set. Errors: SMARM_EINVAL ch or fd NULL, or ch no
 * channel handle; SMARM_ESTATE the channel was freed, or every receiver
 * reference was; SMARM_ENOMEM; SMARM_ESYSTEM
 * eventfd(2) failed otherwise (errno tells why, e.g. EMFILE).
 * Thread-safety: any thread. Since: SMARM_0.3.
 */
SMARM_API int smarm_chan_notify_fd(smarm_chan_t *ch, int *fd);

/* ------------------------------------------------------------------------
 * Green mutex
 * --------------------------------------------------------------------- */

/*
 * smarm_mutex_alloc() - create an unlocked green mutex.
 *
 * Contention parks the actor, not the worker. Unlock hands the lock
 * directly to the oldest waiter (FIFO; no barging). Not reentrant and
 * never poisoned.
 * Returns: 0. Errors: SMARM_EINVAL out NULL; SMARM_ENOMEM.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_mutex_alloc(smarm_mutex_t **out);

/*
 * smarm_mutex_free() - free an unlocked mutex with no waiters. NULL is a
 * no-op. Returns: 0. Errors: SMARM_EINVAL m is no mutex handle;
 * SMARM_ESTATE locked or waited on (not freed), or already freed.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_mutex_free(smarm_mutex_t *m);

/*
 * smarm_mutex_lock() - acquire m, waiting at most timeout_ns (the timeout
 * rule of the Conventions: 0 takes m only if it is free now,
 * SMARM_NO_TIMEOUT waits as long as it takes).
 *
 * A bounded wait turns a green deadlock into SMARM_ETIMEDOUT instead of a
 * hang. From a plain OS thread the call spins with sched_yield until it
 * gets m or the deadline passes.
 * Returns: 0 the caller holds m. Errors: SMARM_EINVAL m NULL or no mutex
 * handle; SMARM_ESTATE m was freed, or the caller (actor, or plain
 * thread) already holds m: the mutex is not reentrant, and waiting for
 * itself would never end; SMARM_ETIMEDOUT. Safe point in an actor (a
 * stop ends the caller, who then does not hold m).
 * Thread-safety: any thread. Since: SMARM_0.1 (SMARM_NO_TIMEOUT and
 * SMARM_ESTATE since SMARM_0.3; a relock used to wait for its deadline).
 */
SMARM_API int smarm_mutex_lock(smarm_mutex_t *m, uint64_t timeout_ns);

/*
 * smarm_mutex_try_lock() - acquire m only if it is free and nobody waits.
 * Returns: 0. Errors: SMARM_EINVAL m NULL or no mutex handle;
 * SMARM_ESTATE m was freed; SMARM_EAGAIN it is held.
 * Thread-safety: any thread. Since: SMARM_0.1.
 */
SMARM_API int smarm_mutex_try_lock(smarm_mutex_t *m);

/*
 * smarm_mutex_unlock() - release m, handing it to the oldest waiter.
 * Returns: 0. Errors: SMARM_EINVAL m NULL or no mutex handle;
 * SMARM_ESTATE the caller does not hold m, or m was freed. Thread-safety: the
 * holder (an actor, or the OS thread that locked it from outside any actor).
 * Since: SMARM_0.1.
 */
SMARM_API int smarm_mutex_unlock(smarm_mutex_t *m);

/* ------------------------------------------------------------------------
 * IO and blocking work
 * --------------------------------------------------------------------- */

/*
 * Readiness events of an fd arm (a bit set).
 *
 * SMARM_IO_READABLE   a read would not block (POLLIN).
 * SMARM_IO_WRITABLE   a write would not block (POLLOUT).
 *
 * An error or hang-up on the fd (POLLERR, POLLHUP) counts as ready for
 * either event: the following read or write reports it.
 * Since: SMARM_0.2.
 */
enum smarm_io_event {
	SMARM_IO_READABLE = 1,
	SMARM_IO_WRITABLE = 2,
};

/*
 * smarm_selset_t - a set of select arms (channels and fds) for
 * smarm_selset_wait(). Opaque; build it with smarm_selset_add_chan() and
 * smarm_selset_add_fd() (an arm's index is its position, from 0, in the
 * order added), empty it with smarm_selset_clear() to reuse it. At most
 * 64 arms. A set is not thread-safe: one thread at a time (an actor
 * usually keeps its own). This is libsmarm's one select: SMARM_0.1's
 * smarm_select() over an array of channels left the header in SMARM_0.3.
 * Since: SMARM_0.2.
 */
typedef struct smarm_selset smarm_selset_t;

/*
 * smarm_selset_alloc() - create an empty select set.
 * Returns: 0, *out set. Errors: SMARM_EINVAL out NULL; SMARM_ENOMEM.
 * Thread-safety: any thread. Since: SMARM_0.2.
 */
SMARM_API int smarm_selset_alloc(smarm_selset_t **out);

/*
 * smarm_selset_free() - free a select set (NULL is a no-op). Not while a
 * smarm_selset_wait() on it runs. A set freed already, or a value that
 * is no set handle, is ignored. Thread-safety: any thread.
 * Since: SMARM_0.2.
 */
SMARM_API void smarm_selset_free(smarm_selset_t *set);

/*
 * smarm_selset_add_chan() - add a channel arm: ready when the channel has
 * an element or is closed (a receive would not park; a closed arm stays
 * ready for ever: drop it from the set once seen).
 *
 * The channel may have other receivers (actors or threads in recv, other
 * selectors): the waiting actor then queues among the channel's waiting
 * receivers like them, and a send may wake it. A select only reports, so
 * another receiver can take the element before the caller does:
 * smarm_chan_try_recv() may return SMARM_EAGAIN after the wait reported
 * the arm; wait again. Nothing is lost meanwhile: a selector woken for
 * an element it does not take leaves the wake to the next waiting
 * receiver while elements are still queued.
 * The arm keeps the handle: every wait checks it again.
 * Returns: 0, *index (if not NULL) set to the arm's index. Errors:
 * SMARM_EINVAL set or ch NULL or no handle of its type, or the set holds
 * 64 arms already; SMARM_ESTATE set or ch was freed.
 * Thread-safety: any thread, one at a time per set. Since: SMARM_0.2.
 */
SMARM_API int smarm_selset_add_chan(smarm_selset_t *set, smarm_chan_t *ch,
				    size_t *index);

/*
 * smarm_selset_add_fd() - add an fd arm: ready when fd is readable and/or
 * writable (events: SMARM_IO_READABLE, SMARM_IO_WRITABLE), or has an
 * error or hang-up pending.
 * Returns: 0, *index (if not NULL) set to the arm's index. Errors:
 * SMARM_EINVAL set NULL or no set handle, fd negative, events 0 or
 * unknown bits, or the set holds 64 arms already; SMARM_ESTATE set was
 * freed. (Whether fd is open is checked by the wait.)
 * Thread-safety: any thread, one at a time per set. Since: SMARM_0.2.
 */
SMARM_API int smarm_selset_add_fd(smarm_selset_t *set, int fd, uint32_t events,
				  size_t *index);

/*
 * smarm_selset_clear() - remove every arm, to reuse the set.
 * Returns: 0. Errors: SMARM_EINVAL set NULL or no set handle;
 * SMARM_ESTATE set was freed.
 * Thread-safety: any thread, one at a time per set. Since: SMARM_0.2.
 */
SMARM_API int smarm_selset_clear(smarm_selset_t *set);

/*
 * smarm_selset_wait() - wait until one arm of the set is ready.
 *
 * Channel arms are ready as smarm_selset_add_chan() says. Fd arms are first
 * checked with a zero-timeout poll(2), so an fd that is ready now wins without
 * parking; otherwise the fd is registered with the node's epoll thread
 * (level-triggered, one shot) and the actor parks. Arms are checked in
 * index order and the lowest ready index wins. When the call returns,
 * every arm is unregistered again, losers included (also when the actor
 * is stopped while parked), so each fd can be waited on again at once.
 * Report only: consume with smarm_chan_try_recv() or a read/write. A stop
 * ends the actor inside the wait: free a set you allocated for it in a
 * cleanup handler (smarm_cleanup_push).
 *
 * One waiter per fd: an fd another actor (or another arm of this set) is
 * waiting on gives SMARM_EEXIST, and the first waiter is unaffected.
 * Closing an fd while an actor waits on it: the kernel drops it from the
 * epoll set without an event, so nothing wakes that actor for it; a wait
 * with a timeout then ends at its deadline with SMARM_EBADF (or earlier,
 * if another arm wakes it), one without waits until another arm, or a
 * stop, ends it. Close an fd only when no actor waits on it.
 * timeout_ns bounds the wait under the timeout rule of the Conventions (0
 * polls every arm once and never parks; SMARM_NO_TIMEOUT waits for
 * ever). A ready arm wins over the deadline.
 * Returns: 0, *ready set to the winning index. Errors: SMARM_EINVAL set or
 * ready NULL, set no set handle, or the set is empty; SMARM_ENOTACTOR;
 * SMARM_ESTATE set was freed, a channel arm's channel was freed since it
 * was added, or every receiver reference of a channel arm's channel was
 * (another receiver on it is no error since SMARM_0.3); SMARM_EBADF an fd
 * arm is not an open descriptor, found before parking or after a wake (it
 * was closed while the actor waited); SMARM_EEXIST the fd already has a
 * waiter; SMARM_ETIMEDOUT; SMARM_ENOMEM; SMARM_ESYSTEM the epoll thread could
 * not be started or epoll_ctl failed otherwise. Safe point. Thread-safety:
 * actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_selset_wait(smarm_selset_t *set, uint64_t timeout_ns,
				size_t *ready);

/*
 * smarm_io_wait_readable() - park the calling actor until fd is readable.
 *
 * A one-arm select (smarm_selset_wait): returns at once if fd is readable now
 * (or has an error or hang-up pending), otherwise parks only the actor,
 * never its worker. The epoll thread starts on the first fd wait of a run
 * and is joined when the run ends.
 * Returns: 0. Errors: SMARM_EINVAL fd negative; SMARM_ENOTACTOR;
 * SMARM_EBADF fd is not open; SMARM_EEXIST another actor waits on fd;
 * SMARM_ENOMEM; SMARM_ESYSTEM. Safe point.
 * Thread-safety: actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_io_wait_readable(int fd);

/*
 * smarm_io_wait_writable() - park the calling actor until fd is writable.
 * As smarm_io_wait_readable(), for writing.
 * Thread-safety: actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_io_wait_writable(int fd);

/*
 * smarm_io_wait_readable_timeout() - smarm_io_wait_readable() bounded by
 * timeout_ns under the timeout rule of the Conventions (0 polls the fd
 * once; SMARM_NO_TIMEOUT waits for ever, as smarm_io_wait_readable).
 * Readiness that races the deadline wins.
 * Returns: 0. Errors: as smarm_io_wait_readable, plus SMARM_ETIMEDOUT
 * (the fd is unregistered and can be waited on again).
 * Thread-safety: actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_io_wait_readable_timeout(int fd, uint64_t timeout_ns);

/*
 * smarm_io_wait_writable_timeout() - smarm_io_wait_writable() that gives
 * up after timeout_ns. Errors: as smarm_io_wait_readable_timeout.
 * Thread-safety: actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_io_wait_writable_timeout(int fd, uint64_t timeout_ns);

/*
 * smarm_io_read() - wait until fd is readable, then read(2) once.
 *
 * fd should be O_NONBLOCK: the read runs on the actor's worker, and on a
 * blocking fd it could block that worker if the readiness was consumed
 * elsewhere. A read that fails with EAGAIN or EINTR (spurious readiness)
 * is retried after another wait; so 0 bytes in *out means end of file.
 * Returns: 0, *out set to the bytes read. Errors: SMARM_EINVAL out NULL,
 * buf NULL with len > 0, or fd negative; SMARM_ENOTACTOR; SMARM_EBADF;
 * SMARM_EEXIST; SMARM_ENOMEM; SMARM_ESYSTEM read(2) failed otherwise:
 * errno then holds read(2)'s error (EISDIR, EIO, ...), as the call left
 * it.
 * Safe point. Thread-safety: actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_io_read(int fd, void *buf, size_t len, ptrdiff_t *out);

/*
 * smarm_io_write() - wait until fd is writable, then write(2) once.
 *
 * Like smarm_io_read(): fd should be O_NONBLOCK, EAGAIN and EINTR are
 * retried after another wait, and *out may be short of len (a partial
 * write; loop for the rest). Writing to a pipe or socket whose reader is
 * gone raises SIGPIPE in the process unless the host ignores it, and then
 * fails with SMARM_ESYSTEM (errno EPIPE).
 * Returns: 0, *out set to the bytes written. Errors: as smarm_io_read
 * (with SMARM_ESYSTEM, errno holds write(2)'s error).
 * Safe point. Thread-safety: actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_io_write(int fd, const void *buf, size_t len,
			     ptrdiff_t *out);

/*
 * struct sockaddr - the POSIX socket address of <sys/socket.h>, declared
 * here only by its tag. smarm_io_accept() and smarm_io_connect() take it
 * by pointer, as accept(2), connect(2) and libuv's uv_tcp_connect() do,
 * so the compiler still checks what is passed (void * would take
 * anything; a struct sockaddr_in is cast, as for connect(2)), and any
 * address family works; declaring the tag rather than including
 * <sys/socket.h> keeps the socket headers out of every file that
 * includes this one, and a file that builds addresses includes them
 * anyway. Lengths are size_t, like every length in this header (not
 * socklen_t, which would need that include); a length over INT_MAX is
 * SMARM_EINVAL. Since: SMARM_0.3.
 */
struct sockaddr;

/*
 * smarm_io_accept() - wait until a listening socket has a connection,
 * then accept it.
 *
 * A connection pending now is accepted at once; otherwise the actor
 * waits for one as smarm_io_wait_readable_timeout() waits (one waiter
 * per fd; a wait that ends by its deadline or by a stop leaves fd
 * unregistered and usable). A connection aborted by its peer before it
 * was accepted (ECONNABORTED), EINTR, and a connection another accept
 * took first are retried within the same deadline. The new fd is
 * O_NONBLOCK and close-on-exec (accept4(2) with SOCK_NONBLOCK |
 * SOCK_CLOEXEC), ready for smarm_io_read() and smarm_io_write(); it is
 * the caller's to close.
 *
 * fd is a listening socket (listen(2) was called). The accept runs on
 * the actor's worker, which must never block: an fd without O_NONBLOCK
 * is checked to be a listening socket and then given O_NONBLOCK, which
 * it keeps (the flag belongs to the open file description, so dup(2)s
 * of fd share it).
 *
 * addr and addrlen are both NULL (the peer's address is not wanted) or
 * both set: then *addrlen is the size of the buffer at addr on entry,
 * and on success the peer's address is stored there and *addrlen set to
 * its full size, which exceeds the buffer if the address was truncated
 * (as accept(2); a struct sockaddr_storage always fits).
 *
 * timeout_ns: 0 checks once and never parks; SMARM_NO_TIMEOUT waits
 * without a deadline; any other value bounds the wait. A connection
 * ready at the deadline is accepted.
 * Returns: 0, *out set to the new connection's fd (addr and *addrlen
 * filled if given). Errors: SMARM_EINVAL fd negative, out NULL, only one
 * of addr and addrlen given, *addrlen over INT_MAX, or fd is not a
 * socket; SMARM_ENOTACTOR; SMARM_EBADF fd is not open; SMARM_ESTATE fd
 * is a socket that is not listening (no listen(2), or a datagram
 * socket); SMARM_EEXIST another actor waits on fd (and no connection is
 * pending); SMARM_ETIMEDOUT no connection within timeout_ns; SMARM_ENOMEM;
 * SMARM_ESYSTEM accept4(2) failed otherwise: errno then holds its error
 * (EMFILE, ENFILE, EPERM, ...), as the call left it; or the epoll thread
 * could not be started. Safe point (a stop ends the actor with no
 * connection taken). Thread-safety: actor context only.
 * Since: SMARM_0.3.
 */
SMARM_API int smarm_io_accept(int fd, struct sockaddr *addr, size_t *addrlen,
			      uint64_t timeout_ns, int *out);

/*
 * smarm_io_connect() - connect a socket to addr, waiting for the
 * connection to be established.
 *
 * Starts a non-blocking connect(2) and, while it is in progress
 * (EINPROGRESS), waits for fd to become writable as
 * smarm_io_wait_writable_timeout() waits (one waiter per fd; a wait that
 * ends by its deadline or by a stop leaves fd unregistered), then reads
 * the outcome from SO_ERROR: no EINPROGRESS or SO_ERROR is left to the
 * caller. A connection that completes at once (a Unix-domain socket, a
 * datagram socket) returns without waiting.
 *
 * fd is a socket, typically fresh from socket(2). The connect runs on
 * the actor's worker, which must never block: an fd without O_NONBLOCK
 * is checked to be a socket and then given O_NONBLOCK, which it keeps
 * (as smarm_io_read() and smarm_io_write() want it; the flag belongs to
 * the open file description, so dup(2)s of fd share it).
 *
 * An attempt still in progress when the wait ends (SMARM_ETIMEDOUT, or a
 * stop of the actor) is not cancelled: the kernel carries on with it.
 * Calling smarm_io_connect() on fd again waits for that same attempt
 * (addr is then not used), so with timeout_ns 0 the first call starts
 * the attempt and checks once, and each later call checks again; close
 * fd to give up. After a failure (SMARM_ESYSTEM) close fd and use a
 * new socket, as connect(2) requires.
 *
 * timeout_ns: 0 checks once and never parks; SMARM_NO_TIMEOUT waits
 * without a deadline (the kernel still gives up after its own SYN
 * retries: SMARM_ESYSTEM, errno ETIMEDOUT); any other value bounds the
 * wait. A connection established at the deadline wins.
 * Returns: 0 fd is connected. Errors: SMARM_EINVAL fd negative, addr
 * NULL, addrlen 0 or over INT_MAX, fd is not a socket, or addr is not an
 * address for fd (EAFNOSUPPORT, EINVAL); SMARM_ENOTACTOR; SMARM_EBADF fd
 * is not open; SMARM_ESTATE fd is already connected (EISCONN);
 * SMARM_EEXIST another actor waits on fd (also: another
 * smarm_io_connect() of fd); SMARM_ETIMEDOUT not connected within
 * timeout_ns (the attempt goes on, see above); SMARM_ENOMEM;
 * SMARM_ESYSTEM the connection failed: errno then holds connect(2)'s
 * error or the one SO_ERROR reported (ECONNREFUSED, ENETUNREACH,
 * EHOSTUNREACH, EADDRNOTAVAIL, EACCES, ETIMEDOUT, or EAGAIN for a
 * Unix-domain listener whose backlog is full, which is not waited for),
 * as the call left it; or the epoll thread could not be started. Safe
 * point. Thread-safety: actor context only. Since: SMARM_0.3.
 */
SMARM_API int smarm_io_connect(int fd, const struct sockaddr *addr,
			       size_t addrlen, uint64_t timeout_ns);

/*
 * smarm_io_blocking_cb - a job for the blocking-work pool. Runs on a pool
 * thread, not in an actor: it may block (a disk read, getaddrinfo, a
 * foreign library), but actor calls made from it return
 * SMARM_ENOTACTOR. Since: SMARM_0.2.
 */
typedef intptr_t (*smarm_io_blocking_cb)(void *arg);

/*
 * smarm_io_blocking() - run fn(arg) on the node's blocking-work pool and
 * park the calling actor until it returns.
 *
 * Other actors keep running on every worker meanwhile. The pool has
 * SMARM_OPT_IO_POOL_THREADS threads, started on the first call of a run;
 * jobs beyond that wait their turn in FIFO order. A job is never
 * cancelled: if the caller is stopped while its job is queued or running,
 * the caller ends at once, the job still runs to completion and its
 * result is discarded (a result that owns memory then leaks: free such
 * things in fn or through arg). The run does not end before every job
 * submitted in it has finished, so arg must stay valid until fn returns.
 * result may be NULL.
 * Returns: 0, *result set to fn's return value. Errors: SMARM_EINVAL fn
 * NULL; SMARM_ENOTACTOR; SMARM_ENOMEM; SMARM_ESYSTEM the pool threads
 * could not be started. Safe point.
 * Callbacks: fn runs once on a pool thread with no runtime lock held.
 * Thread-safety: actor context only. Since: SMARM_0.2.
 */
SMARM_API int smarm_io_blocking(smarm_io_blocking_cb fn, void *arg,
				intptr_t *result);

#ifdef __cplusplus
}
#endif

/* The OTP layer (monitors, links, exit signals; message types,
 * mailboxes, names, groups). */
#include "otp.h"

/* Introspection: snapshots, actor records, trees, the socket. */
#include "obs.h"

#endif /* SMARM_SMARM_H */
