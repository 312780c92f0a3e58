/* SPDX-License-Identifier: MIT */
/*
 * smarm/obs.h - introspection of a running node: a snapshot of every
 * actor, one actor's record, its links and monitors, the supervision
 * and spawn trees folded from a snapshot, and the opt-in Unix-domain
 * socket through which tools/smarm-top reads them from outside the
 * process. Included by smarm/smarm.h, which states the conventions
 * every call here follows; include either.
 *
 * Model. A *snapshot* (smarm_snapshot_t) is taken without stopping the
 * world, as ps does: each actor is read under its own slot lock in
 * turn, so each record is coherent (one actor, one moment: never a mix
 * of a dead actor and its slot's next tenant), and the whole is not (an
 * actor spawned or ended during the walk may be in it or not). A
 * record (smarm_actor_info_t) is a fixed-size, versioned struct: the
 * caller sets its `size`, the library fills what both know and says
 * which format it filled in `version`. Fields are only ever added at
 * the end, and SMARM_OBS_FORMAT_VERSION changes whenever the record
 * does; it is also the version of the socket protocol (docs/
 * observability.md, "The socket").
 */
#ifndef SMARM_OBS_H
#define SMARM_OBS_H

#include "smarm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Introspection ==== */

/*
 * The format of smarm_actor_info_t and of the socket protocol. Changes
 * whenever either does. Since: SMARM_0.5.
 */
#define SMARM_OBS_FORMAT_VERSION 3

/* Bytes of a behaviour, plugin or state name in a record, NUL included. */
#define SMARM_OBS_TEXT_MAX 64

/* Bands of a mailbox in a record (smarm_actor_info_t.mailbox_band). */
#define SMARM_OBS_BANDS 4

/*
 * The bands of a server's or machine's mailbox, highest first: the
 * index of each in smarm_actor_info_t.mailbox_band. Since: SMARM_0.5.
 *   SMARM_BAND_SIGNAL  trapped exit signals and Downs (smarm_gs_trap_exit,
 *                      smarm_gs_monitor).
 *   SMARM_BAND_TIMER   timer fires (smarm_gs_send_after, a machine's
 *                      timeouts).
 *   SMARM_BAND_INBOX   requests: calls, casts, infos and system messages,
 *                      in the order they were sent.
 * Index 3 is not used yet (always 0).
 */
enum smarm_mailbox_band {
	SMARM_BAND_SIGNAL = 0,
	SMARM_BAND_TIMER = 1,
	SMARM_BAND_INBOX = 2,
};

/*
 * smarm_actor_info_t.state: the actor's slot state when it was read.
 * Since: SMARM_0.5.
 *   SMARM_ACTOR_QUEUED    runnable, waiting for a worker.
 *   SMARM_ACTOR_RUNNING   on a worker now.
 *   SMARM_ACTOR_NOTIFIED  running, and a wake arrived: its next park
 *                         returns at once.
 *   SMARM_ACTOR_PARKED    blocked (see smarm_actor_info_t.wait).
 *   SMARM_ACTOR_DONE      ended, not yet joined (its slot is kept).
 */
enum smarm_actor_state {
	SMARM_ACTOR_QUEUED = 1,
	SMARM_ACTOR_RUNNING = 2,
	SMARM_ACTOR_NOTIFIED = 3,
	SMARM_ACTOR_PARKED = 4,
	SMARM_ACTOR_DONE = 5,
};

/*
 * smarm_actor_info_t.wait: what a parked actor waits on, as far as the
 * runtime knows. Since: SMARM_0.5.
 *   SMARM_WAIT_NONE     not parked.
 *   SMARM_WAIT_BLOCKED  on a channel, a select or a job (in a format
 *                       1 record also a mutex, a join or an fd),
 *                       unbounded.
 *   SMARM_WAIT_TIMED    the same (format 1: or a sleep), with a
 *                       deadline (smarm_actor_info_t.wait_deadline_ns).
 *   SMARM_WAIT_RECEIVE  a server, machine or supervisor parked: idle
 *                       in its mailbox (with or without a deadline),
 *                       or, rarely, inside a callback's own wait.
 * Format 2 says more of a wait whose code said what it waits on
 * (smarm_actor_info_t.wait_on); a record of size
 * SMARM_ACTOR_INFO_SIZE_V1 gets SMARM_WAIT_BLOCKED or _TIMED for them:
 *   SMARM_WAIT_CALL     a server's or machine's answer to a call
 *                       (smarm_server_call and kin): wait_on the
 *                       server's pid id (called by name: the pid the
 *                       name had when the call was sent; before
 *                       format 3, 0).
 *   SMARM_WAIT_JOIN     smarm_actor_join: wait_on the pid id joined.
 *   SMARM_WAIT_MUTEX    a green mutex: wait_on the pid id that held it
 *                       when the wait began.
 *   SMARM_WAIT_IO       an fd's readiness (smarm_io_wait_* and the io
 *                       calls that wait): wait_on the fd.
 *   SMARM_WAIT_SLEEP    smarm_actor_sleep (wait_deadline_ns set).
 */
enum smarm_actor_wait {
	SMARM_WAIT_NONE = 0,
	SMARM_WAIT_BLOCKED = 1,
	SMARM_WAIT_TIMED = 2,
	SMARM_WAIT_RECEIVE = 3,
	SMARM_WAIT_CALL = 4,
	SMARM_WAIT_JOIN = 5,
	SMARM_WAIT_MUTEX = 6,
	SMARM_WAIT_IO = 7,
	SMARM_WAIT_SLEEP = 8,
};

/*
 * smarm_actor_info_t.flags, or'ed. Since: SMARM_0.5.
 *   SMARM_ACTOR_TRAPS_EXITS   it traps exit signals (smarm_trap_exit).
 *   SMARM_ACTOR_EXITING       its cleanup handlers or exit hooks run.
 *   SMARM_ACTOR_STOP_PENDING  a stop was requested and not yet seen.
 *   SMARM_ACTOR_SERVER        a gen_server (behaviour, plugin set).
 *   SMARM_ACTOR_MACHINE       a gen_statem (state_name set too).
 *   SMARM_ACTOR_SUPERVISOR    a supervisor (smarm_sup_start and kin).
 *   SMARM_ACTOR_ROOT          the root actor of smarm_node_run.
 */
enum smarm_actor_flag {
	SMARM_ACTOR_TRAPS_EXITS = 1u << 0,
	SMARM_ACTOR_EXITING = 1u << 1,
	SMARM_ACTOR_STOP_PENDING = 1u << 2,
	SMARM_ACTOR_SERVER = 1u << 3,
	SMARM_ACTOR_MACHINE = 1u << 4,
	SMARM_ACTOR_SUPERVISOR = 1u << 5,
	SMARM_ACTOR_ROOT = 1u << 6,
};

/*
 * smarm_actor_info_t - one actor, as a snapshot or smarm_actor_info()
 * saw it. Set `size` to sizeof(smarm_actor_info_t) before the call; the
 * library fills the first min(size, its own) bytes. Since: SMARM_0.5.
 *   size          in: the caller's sizeof (at least
 *                 SMARM_ACTOR_INFO_SIZE_V1); out: what was filled.
 *   version       out: the format filled: 1 for a size below
 *                 SMARM_ACTOR_INFO_SIZE_V2 (a version 1 caller gets
 *                 exactly the version 1 record), 2 for a size below
 *                 SMARM_ACTOR_INFO_SIZE_V3 (likewise), else
 *                 SMARM_OBS_FORMAT_VERSION.
 *   pid, parent   the actor and its spawner (SMARM_PID_NONE: the run
 *                 itself); a supervisor's children have it as parent.
 *   state, wait   enum smarm_actor_state, enum smarm_actor_wait.
 *   flags         enum smarm_actor_flag bits.
 *   names         registered names it holds; `name` is one of them.
 *   links, monitors, monitored_by  its links; the monitors it set on
 *                 others; the monitors others set on it.
 *   stack_mode    SMARM_STACK_GUARDED or _DENSE once it ran.
 *   waits         waits it opened since it was spawned (receives,
 *                 sleeps, joins, mutex and io waits): a cheap measure
 *                 of activity, like the BEAM's reductions; compare two
 *                 snapshots for a rate.
 *   wait_deadline_ns  SMARM_WAIT_TIMED (and a timed receive): when the
 *                 wait ends, on the smarm_now_ns clock; else 0.
 *   mailbox_depth messages queued in its mailboxes: a server's or
 *                 machine's inbox, and those it published (a
 *                 supervisor's); -1 if it has none.
 *   stack_reserve, stack_guard  bytes; stack_high_water the sampled
 *                 deepest use (smarm_actor_get_stack's
 *                 SMARM_STACK_INFO_DEPTH_HIGH_WATER); stack_shrinks.
 *   name          a registered name, "" if none.
 *   behaviour, plugin  a server's or machine's behaviour and plugin
 *                 names; "supervisor" for a supervisor; else "".
 *   state_name    a machine's current state, else "".
 * Version 2 (SMARM_ACTOR_INFO_SIZE_V2) adds the actor's statistics,
 * kept only by a node opened with SMARM_OPT_ACTOR_STATS 1 (else 0), per
 * incarnation (a restarted child starts again at 0):
 *   cpu_ns        time on a worker, from each switch-in to its
 *                 switch-out (a cycle-counter read per switch): wall
 *                 time while it ran, so it includes what the kernel
 *                 took from its worker thread meanwhile.
 *   runs          times it was switched in.
 *   runq_wait_ns  time it spent runnable but not running, from the
 *                 wake, spawn, yield or preemption to the switch-in,
 *                 summed (a wake that found it still running is
 *                 not counted: it never queued).
 *   messages_in, messages_out  elements it took from channels, and
 *                 sent on them (its own sends and receives, any
 *                 channel: a server's inbox, a reply, a private one).
 *   preempt_safe  timeslices that ended at a safe point (smarm_check,
 *                 a runtime call).
 *   preempt_async times the monitor's signal preempted it
 *                 (SMARM_OPT_PREEMPT_ASYNC), whether or not another
 *                 actor then ran.
 * and, kept whatever the option:
 *   wait_on       for SMARM_WAIT_CALL, _JOIN, _MUTEX: a pid id; _IO:
 *                 the fd; else 0.
 * Version 3 (SMARM_ACTOR_INFO_SIZE_V3) adds, whatever the option:
 *   mailbox_band  a server's or machine's mailbox: the messages queued
 *                 in each band (enum smarm_mailbox_band; a band not
 *                 made yet: 0); 0 for every other actor. Each band is
 *                 read in one hold of its lock, the bands one after
 *                 the other. Requests the server has taken from its
 *                 inbox into its batch (up to 16 at a time) and not
 *                 served yet count in the inbox band and in
 *                 mailbox_depth, as OTP's message_queue_len counts
 *                 all but the message in service.
 *   mailbox_bytes the bytes queued in those bands, read with their
 *                 counts: each message's fixed size plus a request's
 *                 argument block when it is not carried inline (long
 *                 strings and byte strings; a batched request's
 *                 envelope only). Reading a band walks its
 *                 queue under its lock: O(depth).
 *   stack_touched the bytes of its stack resident in memory when it was
 *                 read (mincore(2) over stack_reserve, page by page:
 *                 the kernel is asked, the stack is never read, so a
 *                 running actor is read safely): what its stack costs
 *                 now, including pages a recycled stack kept and pages
 *                 given back (a shrink's MADV_FREE) that the kernel
 *                 has not reclaimed yet; 0 before it first ran.
 *                 smarm_actor_info always reads it; a snapshot only
 *                 on a node opened with SMARM_OPT_ACTOR_STATS 1 (else
 *                 0): asking costs about 0.7 us an actor, 0.7 s a
 *                 million. stack_high_water is the deepest use
 *                 sampled instead.
 *   restarts      a supervisor's: the restarts it admitted (each one
 *                 counted against its intensity, a failed restart's
 *                 retries included) since it started, as
 *                 SMARM_STAT_SUP_RESTARTS counts them node-wide; 0 for
 *                 every other actor.
 *   plugin_faults a server's or machine's: the contained faults of its
 *                 plugin's code so far (smarm_plugin_faults, the
 *                 plugin's taint: any actor's, not only this one's);
 *                 0 for every other actor.
 */
typedef struct smarm_actor_info {
	uint32_t size;
	uint32_t version;
	smarm_pid_t pid;
	smarm_pid_t parent;
	int32_t state;
	int32_t wait;
	uint32_t flags;
	uint32_t names;
	uint32_t links;
	uint32_t monitors;
	uint32_t monitored_by;
	uint32_t stack_mode;
	uint64_t waits;
	uint64_t wait_deadline_ns;
	int64_t mailbox_depth;
	uint64_t stack_reserve;
	uint64_t stack_guard;
	uint64_t stack_high_water;
	uint64_t stack_shrinks;
	char name[SMARM_NAME_MAX + 1];
	char behaviour[SMARM_OBS_TEXT_MAX];
	char plugin[SMARM_OBS_TEXT_MAX];
	char state_name[SMARM_OBS_TEXT_MAX];
	/* version 2 */
	uint64_t cpu_ns;
	uint64_t runs;
	uint64_t runq_wait_ns;
	uint64_t messages_in;
	uint64_t messages_out;
	uint32_t preempt_safe;
	uint32_t preempt_async;
	uint64_t wait_on;
	/* version 3 */
	uint32_t mailbox_band[SMARM_OBS_BANDS];
	uint64_t mailbox_bytes;
	uint64_t stack_touched;
	uint32_t restarts;
	uint32_t plugin_faults;
} smarm_actor_info_t;

/* The size of the version 1 record: the least `size` accepted. */
#define SMARM_ACTOR_INFO_SIZE_V1 368
/* The size of the version 2 record (SMARM_0.5). */
#define SMARM_ACTOR_INFO_SIZE_V2 424
/* The size of the version 3 record (SMARM_0.5). */
#define SMARM_ACTOR_INFO_SIZE_V3 464

/* An opaque snapshot of a node's actors. */
typedef struct smarm_snapshot smarm_snapshot_t;

/*
 * smarm_snapshot_take() - read every actor of a node.
 *
 * node NULL means the caller's own node (actor context). Every actor
 * alive, and every ended one not yet joined, is in it once, in slot
 * order, unless it was spawned or ended during the walk. Nothing is
 * stopped: each actor's slot lock is held for the copy of its record
 * only. Taken by an actor of the node itself, a node of 20000 actors
 * or more is walked on a thread of the blocking-work pool
 * (smarm_io_blocking) while the caller is parked, so its worker runs
 * other actors meanwhile. The snapshot is the caller's, freed with
 * smarm_snapshot_free.
 * Returns: 0, *out set. Errors: SMARM_EINVAL out NULL; SMARM_ENOTACTOR
 * node NULL outside an actor; SMARM_ENOMEM.
 * Thread-safety: any thread (an actor, the host's, a signal-free
 * helper) while the node is open. Since: SMARM_0.5.
 */
SMARM_API int smarm_snapshot_take(smarm_node_t *node, smarm_snapshot_t **out);

/*
 * smarm_snapshot_free() - free a snapshot. NULL is a no-op.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API void smarm_snapshot_free(smarm_snapshot_t *snap);

/*
 * smarm_snapshot_count() - how many actors a snapshot holds (0 for
 * NULL). Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API size_t smarm_snapshot_count(const smarm_snapshot_t *snap);

/*
 * smarm_snapshot_get() - copy record index (0 .. count - 1) out.
 *
 * Returns: 0, *out filled (out->size bytes at most). Errors:
 * SMARM_EINVAL snap or out NULL, or out->size below
 * SMARM_ACTOR_INFO_SIZE_V1; SMARM_ENOENT index out of range.
 * Thread-safety: any thread; a snapshot is read-only. Since: SMARM_0.5.
 */
SMARM_API int smarm_snapshot_get(const smarm_snapshot_t *snap, size_t index,
				 smarm_actor_info_t *out);

/*
 * smarm_snapshot_find() - the index of pid's record in a snapshot.
 *
 * Returns: 0, *index set. Errors: SMARM_EINVAL snap or index NULL;
 * SMARM_ENOPROC pid is not in the snapshot.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_snapshot_find(const smarm_snapshot_t *snap, smarm_pid_t pid,
				  size_t *index);

/*
 * Trees smarm_snapshot_tree() folds. Since: SMARM_0.5.
 *   SMARM_TREE_SPAWN        every actor under its spawner: a forest
 *                           whose roots are the actors whose parent is
 *                           the run itself or not in the snapshot
 *                           (orphaned: it ended).
 *   SMARM_TREE_SUPERVISION  supervisors and their children only: the
 *                           roots are the supervisors whose parent is
 *                           not a supervisor; under each its children
 *                           (the actors it spawned), and under a child
 *                           that is a supervisor its own.
 */
enum smarm_tree_kind {
	SMARM_TREE_SPAWN = 1,
	SMARM_TREE_SUPERVISION = 2,
};

/*
 * smarm_tree_cb - one actor of a fold, in depth-first pre-order:
 * children after their parent, siblings in snapshot order. index is the
 * actor's record in snap; depth 0 for a root; orphaned: a root whose
 * parent is an actor missing from the snapshot. A non-zero return ends
 * the fold, which returns it.
 */
typedef int (*smarm_tree_cb)(void *arg, const smarm_snapshot_t *snap,
			     size_t index, unsigned depth, bool orphaned);

/*
 * smarm_snapshot_tree() - fold a snapshot into a tree and walk it.
 *
 * Pure: reads only the snapshot (O(n), any depth, no recursion), so
 * every actor of a SPAWN fold is visited exactly once.
 * Returns: 0, or the callback's non-zero value. Errors: SMARM_EINVAL
 * snap or cb NULL, kind not a smarm_tree_kind; SMARM_ENOMEM.
 * Thread-safety: any thread. Callbacks: on the calling thread, no lock
 * held. Since: SMARM_0.5.
 */
SMARM_API int smarm_snapshot_tree(const smarm_snapshot_t *snap, int kind,
				  smarm_tree_cb cb, void *arg);

/*
 * smarm_actor_info() - one actor's record, coherent.
 *
 * node NULL: the caller's node (actor context). An ended actor not yet
 * joined is reported (state SMARM_ACTOR_DONE).
 * Returns: 0, *out filled. Errors: SMARM_EINVAL out NULL or out->size
 * below SMARM_ACTOR_INFO_SIZE_V1; SMARM_ENOTACTOR node NULL outside an
 * actor; SMARM_ENOPROC pid names no actor of the node (never did, or
 * ended and joined, or another node's).
 * Thread-safety: any thread while the node is open. Since: SMARM_0.5.
 */
SMARM_API int smarm_actor_info(smarm_node_t *node, smarm_pid_t pid,
			       smarm_actor_info_t *out);

/*
 * Relations smarm_actor_relations() lists. Since: SMARM_0.5.
 *   SMARM_REL_LINKS         the actors it is linked to.
 *   SMARM_REL_MONITORS      the actors it monitors.
 *   SMARM_REL_MONITORED_BY  the actors monitoring it (one entry per
 *                           monitor: a watcher with two is there twice).
 */
enum smarm_relation {
	SMARM_REL_LINKS = 1,
	SMARM_REL_MONITORS = 2,
	SMARM_REL_MONITORED_BY = 3,
};

/*
 * smarm_actor_relations() - list one actor's links or monitors.
 *
 * Up to cap pids go into buf; *count is how many there are (more than
 * cap: call again with a larger buf). Like smarm_actor_monitors, but
 * from any thread and for links too.
 * Returns: 0. Errors: SMARM_EINVAL count NULL, buf NULL with cap > 0,
 * or kind not a smarm_relation; SMARM_ENOTACTOR node NULL outside an
 * actor; SMARM_ENOPROC pid names no live actor of the node.
 * Thread-safety: any thread while the node is open. Since: SMARM_0.5.
 */
SMARM_API int smarm_actor_relations(smarm_node_t *node, smarm_pid_t pid,
				    int kind, smarm_pid_t *buf, size_t cap,
				    size_t *count);

/* ==== The introspection socket ==== */

/*
 * smarm_config_set_obs_socket() - serve introspection on a Unix socket.
 *
 * A node opened from cfg listens on path (NULL or "": not at all, the
 * default) with a thread of its own, never a worker. The socket is
 * created owner-only (mode 0600, whatever the umask), an existing file
 * at path is replaced only if it is a socket, and the file is removed
 * at smarm_node_close. Each connection's peer must be the node's own
 * user or root (SO_PEERCRED), else it is refused at once. The protocol
 * (one request line, a JSON answer; docs/observability.md) carries
 * SMARM_OBS_FORMAT_VERSION. smarm_node_open fails with SMARM_ESYSTEM if
 * the socket cannot be made.
 * Returns: 0. Errors: SMARM_EINVAL cfg NULL, or path longer than a
 * socket address holds (107 bytes). Thread-safety: as smarm_config_set_int.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_config_set_obs_socket(smarm_config_t *cfg,
					  const char *path);

/* ==== Tracing ==== */

/*
 * smarm_trace_format - the file formats of smarm_config_set_trace().
 * SMARM_TRACE_AUTO      by the path's extension: ".json" is JSON, any
 *                       other (".pftrace", ".perfetto-trace") Perfetto.
 * SMARM_TRACE_JSON      Chrome Trace Event JSON (an array of events).
 * SMARM_TRACE_PERFETTO  Perfetto's protobuf trace (TracePacket and
 *                       TrackEvent, as ui.perfetto.dev opens it).
 * Since: SMARM_0.5.
 */
enum smarm_trace_format {
	SMARM_TRACE_AUTO = 0,
	SMARM_TRACE_JSON = 1,
	SMARM_TRACE_PERFETTO = 2,
};

/*
 * smarm_config_set_trace() - record a trace of each run into a file.
 *
 * A node opened from cfg records what its workers do (actor run slices
 * per worker, spawns, exits with their outcome, parks, wakes with the
 * waker and a flow arrow to the woken actor's next run, sends and
 * receives, preemptions, timers, io waits, gen_server requests and
 * replies, supervisor restarts) into per-worker rings in memory, and a
 * thread of its own ("smarm-trace") writes them to path in format (a
 * smarm_trace_format), truncating it at smarm_node_open. The file is
 * complete at smarm_node_close; while the node is open it is a readable
 * prefix (whole events). A worker never waits for the writer: a full
 * ring drops the event and counts it (SMARM_STAT_TRACE_DROPPED, also in
 * the trace's last event); SMARM_OPT_TRACE_RING sizes the rings. path
 * NULL or "": no trace (the default), unless the environment variable
 * SMARM_TRACE_FILE names a file when the node is opened (format AUTO;
 * SMARM_TRACE_RING, records per ring from 64 to 16777216, then sizes
 * the rings).
 * smarm_node_open fails with SMARM_ESYSTEM if the file cannot be
 * created. See docs/observability.md, Tracing.
 * Returns: 0. Errors: SMARM_EINVAL cfg NULL, path of 1024 bytes or
 * more, or format not a smarm_trace_format. Thread-safety: as
 * smarm_config_set_int. Since: SMARM_0.5.
 */
SMARM_API int smarm_config_set_trace(smarm_config_t *cfg, const char *path,
				     int format);

/* ==== Causal profiling ==== */

/*
 * smarm_config_set_causal() - take a causal profile of each run.
 *
 * A node opened from cfg runs Coz's experiments on the named sites its
 * actors mark (smarm_site_begin) with a thread of its own
 * ("smarm-causal"): each experiment picks a site and a virtual speedup
 * (0 to 100% in 5% steps, about a quarter of them 0%), slows every
 * other actor by that share of the time the site runs, and counts the
 * progress points (smarm_progress_get) meanwhile. The experiments go to
 * path in Coz's profile format (JSON lines: startup, experiment,
 * throughput-point, latency-point, samples, runtime), which Coz's
 * viewer plots; the file is truncated at smarm_node_open, holds whole
 * lines while the node is open and is complete at smarm_node_close.
 * experiment_ns is the length of an experiment (0: 500 ms); one whose
 * points moved fewer than 5 times is not written and the next is twice
 * as long, up to 8 s. path NULL or "": no profile (the default), unless
 * the environment variable SMARM_CAUSAL_FILE names a file when the
 * node is opened. smarm_node_open fails with SMARM_ESYSTEM if the file
 * cannot be created. See docs/observability.md, Causal profiling.
 * Returns: 0. Errors: SMARM_EINVAL cfg NULL, path of 1024 bytes or more,
 * or experiment_ns not 0 and outside 1 ms .. 60 s.
 * Thread-safety: as smarm_config_set_int. Since: SMARM_0.5.
 */
SMARM_API int smarm_config_set_causal(smarm_config_t *cfg, const char *path,
				      uint64_t experiment_ns);

/*
 * smarm_config_set_causal_fixed() - profile one site, or one speedup.
 *
 * Every experiment of a node opened from cfg selects site (NULL or "":
 * any site some actor has run in, the default) and speedup_pct (-1: a
 * random one, the default; else 0..100 in steps of 5), as Coz's
 * --fixed-line and --fixed-speedup do. A fixed site that no actor has
 * named yet is waited for.
 * Returns: 0. Errors: SMARM_EINVAL cfg NULL, site of 64 bytes or more,
 * or speedup_pct not -1 and not a multiple of 5 in 0..100.
 * Thread-safety: as smarm_config_set_int. Since: SMARM_0.5.
 */
SMARM_API int smarm_config_set_causal_fixed(smarm_config_t *cfg,
					    const char *site, int speedup_pct);

/*
 * smarm_causal_scope - which code sites a causal profile's experiments
 * select (smarm_config_set_causal_scope).
 * SMARM_CAUSAL_SCOPE_NAMED    the named sites the actors mark with
 *                             smarm_site_begin (the default).
 * SMARM_CAUSAL_SCOPE_SAMPLED  functions, found by sampling, as Coz does:
 *                             each worker thread takes a sample of the
 *                             running actor's program counter every
 *                             millisecond of its CPU time, and each
 *                             experiment selects the function of a recent
 *                             sample that lies in the actors' own code.
 * SMARM_CAUSAL_SCOPE_LINES    source lines, found by sampling as above:
 *                             each experiment selects the line of a
 *                             recent sample ("file.c:42", the file's base
 *                             name), read from the object's DWARF line
 *                             table (built with -g); a sample in an
 *                             object without one counts for its function.
 *                             Since: SMARM_0.5 (later minor).
 * Since: SMARM_0.5.
 */
enum smarm_causal_scope {
	SMARM_CAUSAL_SCOPE_NAMED = 0,
	SMARM_CAUSAL_SCOPE_SAMPLED = 1,
	SMARM_CAUSAL_SCOPE_LINES = 2,
};

/*
 * smarm_config_set_causal_scope() - profile named sites, or sampled
 * functions or source lines.
 *
 * A node opened from cfg with a causal profile (smarm_config_set_causal)
 * experiments on the sites scope names (a smarm_causal_scope). In
 * SMARM_CAUSAL_SCOPE_SAMPLED, a per-thread CPU-time timer of each
 * worker delivers SIGPROF every millisecond of its CPU time (the
 * kernel may merge several into one signal, which then counts as
 * several samples); a sample whose program counter lies in the actors'
 * own code (the text asynchronous preemption may interrupt: the
 * executable and the objects allowed with smarm_preempt_allow_object),
 * or in libc called from it, counts for the function around that
 * address, named from the object's symbol table (function granularity,
 * no source lines). Each experiment selects the function of one of the
 * samples taken since the last experiment, at random (a fixed site
 * given to smarm_config_set_causal_fixed is a function's name), and a
 * sample in the selected function during an experiment at speedup s
 * adds s x 1 ms to the delay every other actor owes. The profile's
 * "selected" and "location" fields are function names; named sites
 * (smarm_site_begin) are then only pay points. In
 * SMARM_CAUSAL_SCOPE_LINES the sampling is the same and the sites are
 * source lines, from the DWARF line table of the object that holds the
 * sample's address (a program built with -g; an object without one, or
 * with compressed debug sections, gives function sites as above): the
 * "selected" and "location" fields read "file.c:42" (the file's base
 * name and the line), a fixed site is given in that form, and a sample
 * anywhere in the selected line's code (a line may be compiled to
 * several places) counts as in it. The process's
 * SIGPROF handler is the runtime's from the first such node on; it
 * passes on every SIGPROF that is not its own timers' to the handler
 * installed before. Slow system calls in actor code may then fail with
 * EINTR, as under asynchronous preemption. Unless this was called, the
 * environment variable SMARM_CAUSAL_SCOPE ("named", "sampled" or
 * "lines") sets the scope when the node is opened. See
 * docs/observability.md, Causal profiling.
 * Returns: 0. Errors: SMARM_EINVAL cfg NULL or scope not a
 * smarm_causal_scope.
 * Thread-safety: as smarm_config_set_int. Since: SMARM_0.5.
 */
SMARM_API int smarm_config_set_causal_scope(smarm_config_t *cfg, int scope);

/*
 * smarm_progress_kind - what a progress point measures.
 * SMARM_PROGRESS_THROUGHPUT  units of work done (smarm_progress_add).
 * SMARM_PROGRESS_LATENCY     a begin/end pair (smarm_progress_begin,
 *                            smarm_progress_end) around each request.
 * Since: SMARM_0.5.
 */
enum smarm_progress_kind {
	SMARM_PROGRESS_THROUGHPUT = 1,
	SMARM_PROGRESS_LATENCY = 2,
};

/* A node's progress point: valid until the node is closed. */
typedef struct smarm_progress smarm_progress_t;

/*
 * A site an actor is in, as smarm_site_begin hands back the one it
 * leaves. SMARM_SITE_NONE is "no site".
 */
typedef struct {
	uint32_t id; /* opaque */
} smarm_site_t;

#ifdef __cplusplus
#define SMARM_SITE_NONE (smarm_site_t{ 0 })
#else
#define SMARM_SITE_NONE ((smarm_site_t){ 0 })
#endif

/*
 * smarm_progress_get() - find or make a named progress point.
 *
 * The point of node (NULL: the caller's) called name, of kind (a
 * smarm_progress_kind), made on first use; the same name gives the same
 * point. It counts whether or not the node profiles. name is 1 to 63
 * printable ASCII bytes, without '"' or '\\'. A node has at most 64
 * points.
 * Returns: 0, *out set. Errors: SMARM_EINVAL out NULL, a bad name, kind
 * not a smarm_progress_kind, or a point of that name of another kind;
 * SMARM_ENOTACTOR node NULL outside an actor; SMARM_ENOMEM out of
 * memory or 64 points already.
 * Thread-safety: any thread while the node is open. Since: SMARM_0.5.
 */
SMARM_API int smarm_progress_get(smarm_node_t *node, const char *name, int kind,
				 smarm_progress_t **out);

/*
 * smarm_progress_add() - count units of work at a throughput point.
 *
 * One relaxed atomic add; from an actor of a profiling node also a pay
 * point (it may sleep off delay the profiler injected).
 * Returns: 0. Errors: SMARM_EINVAL pt NULL, count 0, or pt a latency
 * point.
 * Thread-safety: any thread while the node is open. Since: SMARM_0.5.
 */
SMARM_API int smarm_progress_add(smarm_progress_t *pt, uint64_t count);

/*
 * smarm_progress_begin() / smarm_progress_end() - a request arrives at,
 * and departs from, a latency point (Coz's COZ_BEGIN and COZ_END: the
 * profile's arrivals and departures, whose difference gives the mean
 * latency by Little's law).
 * Returns: 0. Errors: SMARM_EINVAL pt NULL or a throughput point.
 * Thread-safety: any thread while the node is open. Since: SMARM_0.5.
 */
SMARM_API int smarm_progress_begin(smarm_progress_t *pt);
SMARM_API int smarm_progress_end(smarm_progress_t *pt);

/*
 * smarm_progress_named() - count one unit of work at the caller's
 * node's throughput point called name (smarm_progress_get, then
 * smarm_progress_add(pt, 1): a name lookup each call).
 * Returns: 0. Errors: as smarm_progress_get with node NULL and kind
 * SMARM_PROGRESS_THROUGHPUT. Thread-safety: actor context only.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_progress_named(const char *name);

/*
 * smarm_progress_get_counts() - read a point: *count its units (a
 * latency point: its arrivals), *departures a latency point's
 * departures (0 for a throughput point). Either may be NULL.
 * Returns: 0. Errors: SMARM_EINVAL pt NULL.
 * Thread-safety: any thread while the node is open. Since: SMARM_0.5.
 */
SMARM_API int smarm_progress_get_counts(const smarm_progress_t *pt,
					uint64_t *count, uint64_t *departures);

/*
 * smarm_site_begin() - the calling actor enters the named site.
 *
 * Until the matching smarm_site_end, the actor's time on a CPU counts
 * as the site's (its samples), and an experiment on the site speeds it
 * up virtually. Sites nest: *saved is the site the actor leaves, to be
 * handed to smarm_site_end. name is as for smarm_progress_get; a node
 * has at most 64 sites. Both calls are pay points. With the profiler off
 * the site is registered and nothing else happens.
 * On SMARM_EINVAL (a bad name) or SMARM_ENOMEM *saved is the site the
 * actor stays in, so the matching smarm_site_end changes nothing.
 * Returns: 0. Errors: SMARM_EINVAL saved NULL or a bad name;
 * SMARM_ENOTACTOR outside an actor; SMARM_ENOMEM out of memory or 64
 * sites already. Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_site_begin(const char *name, smarm_site_t *saved);

/*
 * smarm_site_end() - the calling actor goes back to site saved (what
 * smarm_site_begin handed out).
 * Returns: 0. Errors: SMARM_EINVAL saved names no site of the actor's
 * node; SMARM_ENOTACTOR outside an actor.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_site_end(smarm_site_t saved);

/*
 * SMARM_SITE(name) { ... } - the block runs in site name
 * (smarm_site_begin before it, smarm_site_end after it). Leaving the
 * block by break, goto or return skips the end: use the calls then.
 */
#define SMARM_SITE(name)                                                       \
	for (smarm_site_t                                                      \
		     smarm_site_saved_ = SMARM_SITE_NONE,                      \
		     *smarm_site_once_ =                                       \
			     (smarm_site_begin((name), &smarm_site_saved_),    \
			      &smarm_site_saved_);                             \
	     smarm_site_once_ != NULL;                                         \
	     smarm_site_once_ = NULL, smarm_site_end(smarm_site_saved_))

#ifdef __cplusplus
}
#endif

#endif /* SMARM_OBS_H */
