/* SPDX-License-Identifier: MIT */
/*
 * sig_api.c - the public calls of monitors, links, trapping and exit
 * signals (abi/smarm/otp.h, "Monitors, links, exit signals"): each
 * checks its arguments and its context, then calls monitor.c, link.c or
 * signal.c, which check nothing again.
 *
 * Ownership: nothing is kept here. Locking: none taken here.
 * Invariants: INV-1 a call that returns an argument error (SMARM_EINVAL,
 * SMARM_ENOTACTOR) has changed nothing.
 * See: docs/architecture/otp.md, docs/embedding.md.
 */
#include "sig.h"

int smarm_monitor(smarm_pid_t pid, smarm_chan_t *ch, uint64_t *ref)
{
	struct smarm_node *n = smarm__current_node();
	uint64_t me = smarm__self_pid();
	if (n == NULL)
		return SMARM_ENOTACTOR;
	if (pid.id == 0 || ch == NULL)
		return SMARM_EINVAL;
	return smarm__sig_monitor(n, me, pid.id, false, ch, ref);
}

int smarm_monitor_name(const char *name, smarm_chan_t *ch, uint64_t *ref)
{
	struct smarm_node *n = smarm__current_node();
	smarm_pid_t pid = SMARM_PID_NONE;
	int rc;
	if (n == NULL)
		return SMARM_ENOTACTOR;
	if (ch == NULL)
		return SMARM_EINVAL;
	rc = smarm_whereis(name, &pid);
	if (rc != 0 && rc != SMARM_ENONAME)
		return rc; /* SMARM_EINVAL: a bad name */
	/* Not registered: pid 0 names no actor, so its Down is NOPROC,
	 * from SMARM_PID_NONE, at once. */
	return smarm__sig_monitor(n, smarm__self_pid(), pid.id, false, ch, ref);
}

static int monitor_list(smarm_pid_t pid, bool watchers, smarm_pid_t *buf,
			size_t cap, size_t *count)
{
	struct smarm_node *n = smarm__current_node();
	if (n == NULL)
		return SMARM_ENOTACTOR;
	if (count == NULL || (buf == NULL && cap > 0))
		return SMARM_EINVAL;
	if (pid.id == 0)
		return SMARM_ENOPROC;
	return smarm__sig_monitor_list(n, pid.id, watchers, buf, cap, count);
}

int smarm_actor_monitors(smarm_pid_t pid, smarm_pid_t *buf, size_t cap,
			 size_t *count)
{
	return monitor_list(pid, false, buf, cap, count);
}

int smarm_actor_monitored_by(smarm_pid_t pid, smarm_pid_t *buf, size_t cap,
			     size_t *count)
{
	return monitor_list(pid, true, buf, cap, count);
}

int smarm_demonitor(uint64_t ref, int flags)
{
	struct smarm_node *n = smarm__current_node();
	if (n == NULL)
		return SMARM_ENOTACTOR;
	if ((flags & ~SMARM_DEMONITOR_FLUSH) != 0)
		return SMARM_EINVAL;
	if (ref == 0)
		return SMARM_ENOENT; /* never issued */
	return smarm__sig_demonitor(n, smarm__self_pid(), ref, flags);
}

int smarm_link(smarm_pid_t pid)
{
	struct smarm_node *n = smarm__current_node();
	int rc;
	if (n == NULL)
		return SMARM_ENOTACTOR;
	if (pid.id == 0)
		return SMARM_EINVAL;
	rc = smarm__sig_link(n, smarm__self_pid(), pid.id, false);
	if (rc == SMARM_ENOPROC) /* not trapping: OTP raises noproc */
		smarm__self_exit(SMARM_EXIT_CRASHED, SMARM_ENOPROC);
	return rc;
}

int smarm_unlink(smarm_pid_t pid)
{
	struct smarm_node *n = smarm__current_node();
	if (n == NULL)
		return SMARM_ENOTACTOR;
	if (pid.id == 0)
		return SMARM_EINVAL;
	return smarm__sig_unlink(n, smarm__self_pid(), pid.id);
}

int smarm_trap_exit(smarm_chan_t *ch)
{
	struct smarm_node *n = smarm__current_node();
	if (n == NULL)
		return SMARM_ENOTACTOR;
	return smarm__sig_trap_exit(n, smarm__self_pid(), ch);
}

int smarm_actor_send_exit(smarm_pid_t pid, int how, intptr_t reason)
{
	struct smarm_node *n = smarm__current_node();
	if (n == NULL)
		return SMARM_ENOTACTOR;
	if (how != SMARM_EXIT_NORMAL && how != SMARM_EXIT_CRASHED &&
	    how != SMARM_EXIT_STOPPED && how != SMARM_EXIT_SHUTDOWN)
		return SMARM_EINVAL;
	return smarm__sig_exit_signal(n, pid.id, smarm__self_pid(), how, reason,
				      how == SMARM_EXIT_STOPPED);
}

int smarm_actor_shutdown(void)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	smarm__self_exit(SMARM_EXIT_SHUTDOWN, 0);
}

int smarm_node_shutdown_actor(smarm_node_t *node, smarm_pid_t pid)
{
	if (node == NULL)
		return SMARM_EINVAL;
	if (!smarm__node_is_running(node))
		return SMARM_ENOPROC;
	return smarm__sig_exit_signal(node, pid.id, 0, SMARM_EXIT_SHUTDOWN, 0,
				      false);
}

int smarm_spawn_opts_set_monitor(smarm_spawn_opts_t *opts, smarm_chan_t *ch,
				 uint64_t *ref)
{
	struct smarm__spawn_ext ext;
	smarm_chan_t *cell;
	int rc;
	if (opts == NULL)
		return SMARM_EINVAL;
	if (ch == NULL) {
		smarm__spawn_opts_set_ext(opts, NULL);
		return 0;
	}
	rc = smarm__chan_decode(ch, &cell);
	if (rc != 0)
		return rc;
	if (cell->esz != sizeof(smarm_signal_t))
		return SMARM_EINVAL;
	ext.so_mon_ch = ch;
	ext.so_mon_ref = ref;
	smarm__spawn_opts_set_ext(opts, &ext);
	return 0;
}
