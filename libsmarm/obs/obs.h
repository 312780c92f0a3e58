/* SPDX-License-Identifier: MIT */
/*
 * obs.h - internal interface of the obs layer: snapshots and actor
 * records (snapshot.c), as obs_api.c and the socket server (serve.c)
 * use them. The layer sits on top of every other: it reads the core
 * through core.h's subsys.h peeks, the OTP layer through otp/sig.h and
 * otp/reg.h, the behaviour layer through behaviour/bhv.h, and changes
 * nothing it reads.
 *
 * Ownership: a snapshot is its taker's. The socket server's state is
 * the node's SMARM__SUB_OBS per-node state, ss_open .. ss_close.
 * See: docs/observability.md.
 */
#ifndef SMARM_OBS_OBS_H
#define SMARM_OBS_OBS_H

#include "../core/core.h"

/*
 * One actor in a snapshot, compact (a million of them are read in one
 * snapshot, and their first touch was most of its time): 56 bytes, and
 * what most actors have none of (links, monitors, names, a deadline,
 * strings) in an extra record of the few that have any.
 * smarm_snapshot_get expands both into a smarm_actor_info_t.
 */
struct obs_rec {
	uint64_t or_pid, or_parent;
	uint64_t or_waits;
	uint32_t or_reserve, or_guard, or_hwm; /* bytes: a stack is at most
						  1 GiB (STACK_RESERVE) */
	int32_t or_mbox; /* -1: no mailbox published; saturates */
	uint32_t or_x;	 /* index into s_x, OBS_NO_X: all zero */
	uint32_t or_flags;
	uint32_t or_touched; /* stack bytes resident */
	uint8_t or_state, or_wait, or_mode;
};
#define OBS_NO_X UINT32_MAX

/*
 * An actor's statistics (SMARM_OPT_ACTOR_STATS), in an array parallel
 * to the records (s_st[i] is record i's), made only when the node keeps
 * them. Times in cycles, as the core counts them; ns on expansion.
 */
struct obs_stat {
	uint64_t os_cpu, os_runs, os_rqwait, os_in, os_out;
	uint32_t os_psafe, os_pasync;
};

/* The rest of an actor that has any of it. */
struct obs_extra {
	uint64_t ox_deadline;
	uint64_t ox_wait_on; /* smarm_actor_info_t.wait_on */
	uint64_t ox_mbytes;  /* smarm_actor_info_t.mailbox_bytes */
	uint32_t ox_band[SMARM_OBS_BANDS]; /* .mailbox_band */
	uint32_t ox_restarts;		   /* .restarts */
	uint32_t ox_faults;		   /* .plugin_faults (fault_pass) */
	const void *ox_text; /* its plugin's text (struct bhv_peek.bp_text) */
	uint32_t ox_links, ox_mons, ox_monby, ox_names, ox_shrinks;
	char ox_name[SMARM_NAME_MAX + 1];
	char ox_beh[SMARM_OBS_TEXT_MAX];
	char ox_plugin[SMARM_OBS_TEXT_MAX];
	char ox_state[SMARM_OBS_TEXT_MAX];
};

/*
 * A snapshot. The public smarm_snapshot_t is never defined: obs_api.c
 * converts its pointers to this one, so the ABI baseline sees an opaque
 * type and this layout stays free to change.
 */
struct obs_snap {
	struct obs_rec *s_rec; /* s_n records, in slot order */
	size_t s_n, s_cap;
	struct obs_extra *s_x; /* s_nx entries */
	size_t s_nx, s_capx;
	struct obs_stat *s_st; /* s_cap entries, or NULL: no statistics */
};

/* Take a snapshot of n (any thread): 0, or SMARM_ENOMEM. */
int smarm__obs_snapshot(struct smarm_node *n, struct obs_snap **out);
void smarm__obs_snapshot_free(struct obs_snap *s);
/* Record i of s as the public struct (out->size already checked). */
void smarm__obs_expand(const struct obs_snap *s, size_t i,
		       smarm_actor_info_t *out);
/* One actor, coherent: 0 or SMARM_ENOPROC. */
int smarm__obs_actor_info(struct smarm_node *n, uint64_t pid,
			  smarm_actor_info_t *out);
/* Its links or monitors (enum smarm_relation): 0 or SMARM_ENOPROC. */
int smarm__obs_relations(struct smarm_node *n, uint64_t pid, int kind,
			 smarm_pid_t *buf, size_t cap, size_t *count);
/* The fold behind smarm_snapshot_tree (arguments checked). */
int smarm__obs_tree(const struct obs_snap *s, int kind, smarm_tree_cb cb,
		    void *arg);
/* Where pid is in s: its index, or SIZE_MAX. O(log n): s is in slot
 * order, and slot order is pid-index order. */
size_t smarm__obs_find(const struct obs_snap *s, uint64_t pid);

/* serve.c: the introspection socket (SMARM__SUB_OBS). */
extern const struct smarm__subsys smarm__obs_subsys;

/*
 * trace.c: the trace writer of a node that traces (smarm_config_set_trace,
 * SMARM_TRACE_FILE), part of the SMARM__SUB_OBS per-node state.
 *   _open   at node open: *out the writer, or NULL (no trace asked for);
 *           0, SMARM_ENOMEM or SMARM_ESYSTEM (the file, the thread).
 *   _kick   drain now (a run ended); NULL: no-op.
 *   _close  at node close (no run): drain, finish the file, free.
 */
struct smarm__obs_trace;
int smarm__obs_trace_open(struct smarm_node *n, const struct smarm_config *cfg,
			  struct smarm__obs_trace **out);
void smarm__obs_trace_kick(struct smarm__obs_trace *tw);
void smarm__obs_trace_close(struct smarm_node *n, struct smarm__obs_trace *tw);
/* SMARM_STAT_TRACE_DROPPED of the writer's node (tw NULL: 0). */
uint64_t smarm__obs_trace_dropped(const struct smarm__obs_trace *tw);

/*
 * causal.c: the causal profiler's experiment loop of a node that
 * profiles (smarm_config_set_causal, SMARM_CAUSAL_FILE), part of the
 * SMARM__SUB_OBS per-node state.
 *   _open   at node open: *out the profiler, or NULL (none asked for);
 *           0, SMARM_ENOMEM or SMARM_ESYSTEM (the file, the thread).
 *   _close  at node close (no run): stop the thread, finish the file.
 */
struct smarm__obs_causal;
int smarm__obs_causal_open(struct smarm_node *n, const struct smarm_config *cfg,
			   struct smarm__obs_causal **out);
void smarm__obs_causal_close(struct smarm__obs_causal *cw);

/*
 * symbols.c: function names and source lines of the process's code, for
 * the sampled scopes' sites (one thread's table: the profiler's).
 *   _open/_close  a table (NULL: no memory); closing NULL is a no-op.
 *   _find         the function around pc: true, its text [*lo, *hi)
 *                 and *name (valid until the table closes); false: no
 *                 function symbol holds pc.
 *   _line         the source line of pc (its object's DWARF line table,
 *                 read on first use): true, the file's base name in
 *                 *file (valid until the table closes) and *line;
 *                 false: no line table row holds pc.
 *   _line_text    every range of code of that line (file a base name as
 *                 _line gives it) in the objects looked at so far:
 *                 a sorted, merged, malloc'd set; NULL: none, or no
 *                 memory.
 */
struct smarm__causal_sel;
struct smarm__syms;
struct smarm__syms *smarm__syms_open(void);
void smarm__syms_close(struct smarm__syms *t);
bool smarm__syms_find(struct smarm__syms *t, uintptr_t pc, uintptr_t *lo,
		      uintptr_t *hi, const char **name);
bool smarm__syms_line(struct smarm__syms *t, uintptr_t pc, const char **file,
		      uint32_t *line);
struct smarm__causal_sel *
smarm__syms_line_text(struct smarm__syms *t, const char *file, uint32_t line);

/*
 * dwarf_line.c: the rows of an ELF file's line tables (.debug_line), as
 * ranges of code: *out (malloc'd, *n of them; addresses plus bias) or
 * -1 if the file has no readable line table. A file name points into
 * the mapping map.
 */
struct smarm__line {
	uintptr_t lo, hi;
	const char *file; /* as the table names it (maybe a path) */
	uint32_t line;
};
int smarm__dwarf_lines(const void *map, size_t map_len, uintptr_t bias,
		       struct smarm__line **out, size_t *n);

#endif /* SMARM_OBS_OBS_H */
