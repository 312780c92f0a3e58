/* SPDX-License-Identifier: MIT */
/*
 * smarm/otp.h - the OTP layer of the libsmarm API: monitors, links,
 * trapping exits and exit signals; message types, mailboxes, names and
 * process groups. Included by smarm/smarm.h, which states the conventions
 * every call here follows; include either.
 *
 * Model. A *message type* (smarm_msgtype_t) is a process-wide, interned
 * name with an element size and destructor, like an Erlang atom: defined
 * once, never freed, the same in every node. An actor *publishes* one of
 * its channels as its *mailbox* for a type; then anyone holding its pid
 * can smarm_send() it an element of that type without holding the
 * channel. A *name* is bound to at most one live actor of a node (an
 * actor may hold several); smarm_send_name() resolves it at each send, so
 * it follows a restarted server. A *process group* is a named, ordered
 * set of live actors. Everything an actor published, registered or
 * joined goes away when it ends, before its monitors and links hear of
 * its death: a name read after a Down of its holder is never found bound
 * to the dead actor.
 */
#ifndef SMARM_OTP_H
#define SMARM_OTP_H

#include "smarm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Monitors, links, exit signals ==== */

/*
 * How actors learn of each other's end, as in Erlang/OTP.
 *
 * A *monitor* (smarm_monitor) is one-way and one-shot: when the
 * monitored actor ends, one SMARM_SIGNAL_DOWN message goes into the
 * channel the watcher named. A *link* (smarm_link) is two-way: when
 * either actor ends abnormally (any how but SMARM_EXIT_NORMAL) the
 * other is taken along with the same how and reason, unless it *traps
 * exits* (smarm_trap_exit), in which case it gets a SMARM_SIGNAL_EXIT
 * message instead and lives on. An *exit signal*
 * (smarm_actor_send_exit, smarm_node_shutdown_actor) is what a link
 * sends, sent on purpose. SMARM_EXIT_STOPPED sent that way is a kill:
 * it cannot be trapped.
 *
 * Signals are messages in channels the user provides: one channel may
 * take both kinds, and other messages too, as an Erlang mailbox does,
 * or each kind its own. Such a channel must have elements of exactly
 * sizeof(smarm_signal_t) bytes. The runtime holds a sender reference
 * of its own (smarm_chan_sender_dup) for as long as it may still send
 * into it, so the user may free theirs; a channel whose receiver is
 * gone simply drops signals.
 */

/* smarm_signal_t kinds. Since: SMARM_0.4. */
enum smarm_signal_kind {
	SMARM_SIGNAL_DOWN = 1, /* a monitored actor ended */
	SMARM_SIGNAL_EXIT = 2, /* an exit signal reached a trapping actor */
};

/*
 * smarm_signal_t - the message a monitor or a trapped exit signal puts
 * into its channel.
 *   kind    SMARM_SIGNAL_DOWN or SMARM_SIGNAL_EXIT.
 *   how     a smarm_exit_kind: DOWN, how the monitored actor ended
 *           (SMARM_EXIT_NOPROC: it was gone when the monitor was set);
 *           EXIT, how the linked peer ended, or the `how` the sender of
 *           an exit signal gave (SMARM_EXIT_SHUTDOWN for a shutdown;
 *           SMARM_EXIT_NOPROC: the actor linked was gone).
 *   from    DOWN: the monitored actor; EXIT: the linked peer, or the
 *           sender of the exit signal (SMARM_PID_NONE when that was a
 *           plain thread or the runtime itself, e.g. the root's end).
 *   ref     DOWN: the monitor's ref (smarm_monitor); EXIT: 0.
 *   reason  SMARM_EXIT_CRASHED: the crash reason; STOPPED: the stop's
 *           code (0 today); exit signals: the sender's reason; else 0.
 * Since: SMARM_0.4.
 */
typedef struct smarm_signal {
	int kind;
	int how;
	smarm_pid_t from;
	uint64_t ref;
	intptr_t reason;
} smarm_signal_t;

/*
 * smarm_monitor() - watch an actor: when it ends, one SMARM_SIGNAL_DOWN
 * (how it ended, its reason, `ref`) goes into ch.
 *
 * A target alive when the call returns always delivers exactly one
 * Down, however soon after it ends; several monitors of one target are
 * independent, each delivers its own. A target already gone (ended, or a
 * stale pid, a pid of no actor of this node) is not an error: its Down is
 * queued at once, with how SMARM_EXIT_NOPROC, or with how it really ended when
 * the runtime still knows (it had registered a name, for instance). refs are
 * unique within the node and never reused. When the watcher (the
 * caller) ends, its monitors are removed. ch must have elements of
 * sizeof(smarm_signal_t) bytes; the runtime keeps a sender reference
 * until the Down is sent or the monitor removed.
 * ref may be NULL (the Down's `from` still names the target).
 * Returns: 0, *ref set. Errors: SMARM_ENOTACTOR; SMARM_EINVAL pid is
 * the caller or SMARM_PID_NONE, or ch is no channel handle or has
 * another element size; SMARM_ESTATE ch was
 * freed; SMARM_ECLOSED ch has no sender reference left; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_monitor(smarm_pid_t pid, smarm_chan_t *ch, uint64_t *ref);

/* smarm_demonitor() flags. Since: SMARM_0.4. */
enum {
	SMARM_DEMONITOR_FLUSH = 1, /* also remove a Down of this ref that is
				      already queued */
};

/*
 * smarm_demonitor() - remove a monitor the caller set.
 *
 * After it returns no Down of `ref` will be sent. With
 * SMARM_DEMONITOR_FLUSH a Down of `ref` already queued in the monitor's
 * channel is removed too (also when the monitor had fired), so none is
 * ever received after this call.
 * Returns: 0 the monitor was still in place (its Down was not sent).
 * Errors: SMARM_ENOTACTOR; SMARM_EINVAL unknown flags; SMARM_ENOENT no
 * monitor of the caller's has that ref in place: it fired (its Down was
 * sent, or was NOPROC), was removed, or is unknown (another actor's, or
 * never issued). Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_demonitor(uint64_t ref, int flags);

/*
 * smarm_link() - link the caller and pid, both ways.
 *
 * From then on, when either ends with any how but SMARM_EXIT_NORMAL, the
 * other gets an exit signal: if it traps exits, a SMARM_SIGNAL_EXIT
 * message (from the one that ended, with its how and reason); if not, it
 * ends too, with that how and reason (a crash crashes it, a shutdown
 * shuts it down, a kill kills it). A normal end unlinks silently.
 * Linking an actor already linked, or the caller itself, does nothing.
 * A pid that names no live actor of this node (ended, stale, another
 * node's) is handled as OTP's
 * link/1 does (noproc): a trapping caller gets a SMARM_SIGNAL_EXIT
 * message with how SMARM_EXIT_NOPROC from pid, and the call returns 0;
 * a caller that does not trap exits crashes at once, as an uncaught
 * noproc error would: it ends SMARM_EXIT_CRASHED with reason
 * SMARM_ENOPROC (the call does not return).
 * Returns: 0. Errors: SMARM_ENOTACTOR; SMARM_EINVAL pid is
 * SMARM_PID_NONE; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_link(smarm_pid_t pid);

/*
 * smarm_unlink() - remove the link between the caller and pid, if any
 * (both ways). Unlinking an actor that is not linked, is gone, or is
 * the caller itself does nothing. Exit signals the link sent before the
 * call may still arrive.
 * Returns: 0. Errors: SMARM_ENOTACTOR; SMARM_EINVAL pid is
 * SMARM_PID_NONE.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_unlink(smarm_pid_t pid);

/*
 * smarm_trap_exit() - trap exits into ch, or stop trapping (ch NULL).
 *
 * While the caller traps, exit signals other than a kill do not end it:
 * each becomes a SMARM_SIGNAL_EXIT message in ch, including a normal
 * one sent on purpose and the shutdown the root's end sends. A second
 * call replaces the channel. Trapping belongs to the actor that asked:
 * a new actor starts without it, and a restarted one must ask again. ch
 * must have elements of sizeof(smarm_signal_t) bytes; the runtime keeps
 * a sender reference while it traps into ch.
 * Returns: 0. Errors: SMARM_ENOTACTOR; SMARM_EINVAL ch is no channel
 * handle or has another element size; SMARM_ESTATE ch was freed;
 * SMARM_ECLOSED ch has no sender reference left; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_trap_exit(smarm_chan_t *ch);

/*
 * smarm_actor_send_exit() - send an exit signal to pid (OTP's exit/2).
 *
 * how says what kind, reason travels with it:
 *   SMARM_EXIT_STOPPED   a kill: pid ends with SMARM_EXIT_STOPPED at its
 *                        next safe point, trapping or not.
 *   SMARM_EXIT_SHUTDOWN  a trapping pid gets a SMARM_SIGNAL_EXIT message;
 *                        any other ends with SMARM_EXIT_SHUTDOWN.
 *   SMARM_EXIT_CRASHED   a trapping pid gets the message; any other ends
 *                        SMARM_EXIT_CRASHED with `reason`.
 *   SMARM_EXIT_NORMAL    a trapping pid gets the message; any other
 *                        ignores it, unless it is the caller, which then
 *                        ends normally (as in OTP).
 * The caller may signal itself. An ending caused this way is observed at
 * the target's next safe point, after its cleanup handlers ran.
 * Returns: 0 (also when the signal was ignored). Errors: SMARM_ENOTACTOR;
 * SMARM_EINVAL how is not one of those four; SMARM_ENOPROC pid names no
 * live actor of this node (a signal to the dead is dropped, as in OTP).
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_actor_send_exit(smarm_pid_t pid, int how, intptr_t reason);

/*
 * smarm_actor_shutdown() - end the calling actor with SMARM_EXIT_SHUTDOWN.
 *
 * Its cleanup handlers run, then it ends; linked actors that do not trap
 * exits are shut down too (shutdown is not a normal end). Does not return
 * when called from an actor.
 * Returns: only SMARM_ENOTACTOR. Thread-safety: actor context only.
 * Since: SMARM_0.4.
 */
SMARM_API int smarm_actor_shutdown(void);

/*
 * smarm_node_shutdown_actor() - send a shutdown to an actor of `node`
 * from any thread: as smarm_actor_send_exit(pid, SMARM_EXIT_SHUTDOWN, 0)
 * with no sender (`from` is SMARM_PID_NONE). A trapping target gets the
 * message; any other ends with SMARM_EXIT_SHUTDOWN at its next safe
 * point (a parked target is woken).
 * Returns: 0. Errors: SMARM_EINVAL node NULL; SMARM_ENOPROC pid names no
 * live actor of this node (also when the node is not running).
 * Thread-safety: any thread. Since: SMARM_0.4.
 */
SMARM_API int smarm_node_shutdown_actor(smarm_node_t *node, smarm_pid_t pid);

/*
 * smarm_spawn_opts_set_monitor() - have each spawn made with opts monitor
 * the new actor into ch, as smarm_monitor() by the spawner would, but
 * in place before the child can run: a child that ends at once is still
 * reported. The monitor's ref is written to *ref (if ref is not NULL)
 * before the spawn returns, so ref must stay valid while opts are used
 * (each spawn overwrites it). ch NULL clears the request. The opts do
 * not own ch: it must stay a live channel while opts are used (a spawn
 * with a freed ch fails with SMARM_ESTATE). A spawn that cannot set the
 * monitor fails; its child ends at once, before its body runs.
 * Returns: 0. Errors: SMARM_EINVAL opts NULL, ch no channel handle or of
 * another element size; SMARM_ESTATE ch was freed.
 * Thread-safety: any thread (opts used by one thread at a time).
 * Since: SMARM_0.4.
 */
SMARM_API int smarm_spawn_opts_set_monitor(smarm_spawn_opts_t *opts,
					   smarm_chan_t *ch, uint64_t *ref);

/* ==== Message types, mailboxes, names, groups ==== */

/*
 * The longest name (of a message type, an actor, a group), in bytes,
 * without the terminating NUL. A name is 1..SMARM_NAME_MAX bytes followed
 * by a NUL; any other byte values are allowed and compared exactly.
 * Since: SMARM_0.4.
 */
#define SMARM_NAME_MAX 63

/*
 * smarm_msgtype_t - a message type, from smarm_msgtype_define(). Like a
 * channel handle it is a value, not an address: never dereference it. It
 * stays valid until the process ends and is the same for every node. A
 * value that is no message type (NULL, a wild pointer) is SMARM_EINVAL
 * wherever a call takes one.
 */
typedef struct smarm_msgtype smarm_msgtype_t;

/*
 * smarm_msgtype_define() - intern a message type.
 *
 * The first definition of name creates the type; a later one with the
 * same elem_size and free_cb returns the same type (so each module may
 * define the types it uses, in any order). free_cb is the destructor of
 * the channels that carry the type (smarm_mailbox_publish checks it).
 * Types are never freed; at most 65536 exist in a process.
 * Returns: 0, *out set. Errors: SMARM_EINVAL out NULL, name NULL, empty
 * or longer than SMARM_NAME_MAX, elem_size 0 or larger than a channel
 * element may be (64 KiB); SMARM_EEXIST name is defined with another
 * elem_size or free_cb; SMARM_ENOMEM.
 * Thread-safety: any thread. Since: SMARM_0.4.
 */
SMARM_API int smarm_msgtype_define(const char *name, size_t elem_size,
				   smarm_elem_free_cb free_cb,
				   const smarm_msgtype_t **out);

/*
 * smarm_msgtype_name() - a message type's name (static: valid until the
 * process ends); NULL if type is no message type.
 * Thread-safety: any thread. Since: SMARM_0.4.
 */
SMARM_API const char *smarm_msgtype_name(const smarm_msgtype_t *type);

/*
 * smarm_msgtype_size() - a message type's element size; 0 if type is no
 * message type.
 * Thread-safety: any thread. Since: SMARM_0.4.
 */
SMARM_API size_t smarm_msgtype_size(const smarm_msgtype_t *type);

/*
 * smarm_mailbox_publish() - make ch the calling actor's mailbox for type.
 *
 * From now on smarm_send() and the calls built on it put elements of
 * type into ch. The runtime takes a sender reference of its own on ch
 * (the caller keeps its references) and drops it when the mailbox is
 * unpublished, replaced by another publish of the same type, or when the
 * actor ends. One actor has at most one mailbox per type and may have
 * many types; several actors may publish the same channel.
 * Returns: 0. Errors: SMARM_EINVAL type is no message type, ch is no
 * channel handle, or ch's element size or destructor differ from the
 * type's; SMARM_ESTATE ch was freed; SMARM_ECLOSED ch has no sender
 * reference left; SMARM_ENOTACTOR; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_mailbox_publish(const smarm_msgtype_t *type,
				    smarm_chan_t *ch);

/*
 * smarm_mailbox_unpublish() - withdraw the calling actor's mailbox for
 * type, dropping the runtime's sender reference (which may close the
 * channel). A send racing the unpublish is delivered, or is SMARM_ENOCHAN
 * (or SMARM_ECLOSED if that reference was the channel's last sender).
 * Returns: 0. Errors: SMARM_EINVAL type is no message type; SMARM_ENOENT
 * the actor has no mailbox for type; SMARM_ENOTACTOR.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_mailbox_unpublish(const smarm_msgtype_t *type);

/*
 * smarm_send() - send an element of type to the mailbox of the actor pid.
 *
 * The send goes to that incarnation only: a pid whose actor ended is
 * SMARM_ENOPROC even when its slot now holds another actor. elem points
 * at smarm_msgtype_size(type) bytes, copied into the channel: on success
 * the receiver owns what they hold; on any error nothing was sent, the
 * destructor was not called and the caller still owns the element.
 * Never waits (channels are unbounded).
 * Returns: 0. Errors: SMARM_EINVAL type is no message type, or elem
 * NULL; SMARM_ENOPROC pid names no live actor of the caller's node;
 * SMARM_ENOCHAN the actor is alive but has no mailbox for type;
 * SMARM_ECLOSED the mailbox's channel has no receiver left; SMARM_ENOMEM;
 * SMARM_ENOTACTOR (use smarm_node_send from a plain thread).
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_send(smarm_pid_t pid, const smarm_msgtype_t *type,
			 const void *elem);

/*
 * smarm_send_name() - send an element of type to the actor that holds
 * name now.
 *
 * The name is resolved at each call, so successive sends follow the name
 * from one holder to the next (a restarted server). Ownership of elem as
 * for smarm_send().
 * Returns: 0. Errors: SMARM_EINVAL name NULL, empty or too long, type no
 * message type, or elem NULL; SMARM_ENONAME no live actor holds name;
 * SMARM_ENOCHAN the holder has no mailbox for type; SMARM_ECLOSED;
 * SMARM_ENOMEM; SMARM_ENOTACTOR (see smarm_node_send_name).
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_send_name(const char *name, const smarm_msgtype_t *type,
			      const void *elem);

/*
 * smarm_node_send() - smarm_send() to an actor of node, from any thread.
 *
 * Returns and Errors: as smarm_send(), without SMARM_ENOTACTOR, and
 * SMARM_EINVAL node NULL.
 * Thread-safety: any thread. Since: SMARM_0.4.
 */
SMARM_API int smarm_node_send(smarm_node_t *node, smarm_pid_t pid,
			      const smarm_msgtype_t *type, const void *elem);

/*
 * smarm_node_send_name() - smarm_send_name() in node, from any thread.
 *
 * Returns and Errors: as smarm_send_name(), without SMARM_ENOTACTOR, and
 * SMARM_EINVAL node NULL.
 * Thread-safety: any thread. Since: SMARM_0.4.
 */
SMARM_API int smarm_node_send_name(smarm_node_t *node, const char *name,
				   const smarm_msgtype_t *type,
				   const void *elem);

/*
 * smarm_register() - bind name to the calling actor in its node.
 *
 * An actor may hold several names; registering a name it holds already
 * is a success that changes nothing. A name whose holder ended is free
 * again: the binding goes when its holder ends, so the name can be taken
 * at once. The binding is keyed on the full pid: an actor that later
 * occupies the same slot holds none of its predecessor's names.
 * holder may be NULL.
 * Returns: 0. Errors: SMARM_EINVAL name NULL, empty or too long;
 * SMARM_EEXIST another live actor holds name (*holder set to it);
 * SMARM_ENOTACTOR; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_register(const char *name, smarm_pid_t *holder);

/*
 * smarm_unregister() - remove name's binding, whichever actor holds it
 * (as Erlang's unregister/1). Its mailboxes are not touched.
 * Returns: 0. Errors: SMARM_EINVAL name NULL, empty or too long;
 * SMARM_ENONAME no live actor holds name; SMARM_ENOTACTOR.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_unregister(const char *name);

/*
 * smarm_whereis() - the live actor that holds name in the caller's node.
 * Returns: 0, *pid set. Errors: SMARM_EINVAL name NULL, empty or too
 * long, or pid NULL; SMARM_ENONAME no live actor holds it (*pid is then
 * SMARM_PID_NONE); SMARM_ENOTACTOR.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_whereis(const char *name, smarm_pid_t *pid);

/*
 * smarm_node_whereis() - smarm_whereis() in node, from any thread.
 * Returns and Errors: as smarm_whereis(), without SMARM_ENOTACTOR, and
 * SMARM_EINVAL node NULL.
 * Thread-safety: any thread. Since: SMARM_0.4.
 */
SMARM_API int smarm_node_whereis(smarm_node_t *node, const char *name,
				 smarm_pid_t *pid);

/*
 * smarm_names_of() - the names the actor pid holds, in the order it
 * registered them.
 *
 * Copies up to cap names (each NUL-terminated) into names[0..cap) and
 * sets *n to how many the actor holds: *n > cap means the list was cut
 * to the first cap (the convention of smarm_io_accept's *addrlen; call
 * again with a larger array). names may be NULL when cap is 0.
 * Returns: 0 (also for a live actor with no name: *n = 0). Errors:
 * SMARM_EINVAL n NULL, or names NULL with cap > 0; SMARM_ENOPROC pid
 * names no live actor of the caller's node; SMARM_ENOTACTOR.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_names_of(smarm_pid_t pid, char (*names)[SMARM_NAME_MAX + 1],
			     size_t cap, size_t *n);

/*
 * smarm_group_join() - add the actor pid to the process group `group`
 * of the caller's node, creating the group.
 *
 * Any actor may add any live actor. Joining is idempotent: a member that
 * joins again stays where it was; *added (if not NULL) says whether this
 * call added it (true) or it was a member already (false). A member
 * leaves every group it joined when it ends; a group without members
 * does not exist.
 * Returns: 0. Errors: SMARM_EINVAL group NULL, empty or too long;
 * SMARM_ENOPROC pid names no live actor of the caller's node;
 * SMARM_ENOTACTOR; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_group_join(const char *group, smarm_pid_t pid, bool *added);

/*
 * smarm_group_leave() - take the actor pid out of group.
 * Returns: 0. Errors: SMARM_EINVAL group NULL, empty or too long;
 * SMARM_ENOENT pid is no member of group (or the group has none);
 * SMARM_ENOTACTOR.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_group_leave(const char *group, smarm_pid_t pid);

/*
 * smarm_group_members() - the members of group, in the order they joined.
 *
 * Copies up to cap pids into buf and sets *n to the number of members:
 * *n > cap means the list was cut to the first cap (as smarm_names_of).
 * buf may be NULL when cap is 0. An unknown group has no members (0,
 * *n = 0).
 * Returns: 0. Errors: SMARM_EINVAL group NULL, empty or too long, n
 * NULL, or buf NULL with cap > 0; SMARM_ENOTACTOR.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_group_members(const char *group, smarm_pid_t *buf,
				  size_t cap, size_t *n);

/*
 * smarm_group_pick() - the first live member of group (the one that
 * joined first).
 * Returns: 0, *pid set. Errors: SMARM_EINVAL group NULL, empty or too
 * long, or pid NULL; SMARM_ENOMEMBER the group has no live member;
 * SMARM_ENOTACTOR.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_group_pick(const char *group, smarm_pid_t *pid);

/*
 * smarm_group_dispatch() - smarm_send() an element of type to the member
 * smarm_group_pick() would pick now.
 *
 * The member is picked and its mailbox found in one step, so a member
 * that is leaving either gets the element or is not picked. Ownership of
 * elem as for smarm_send().
 * Returns: 0. Errors: SMARM_EINVAL group NULL, empty or too long, type
 * no message type, or elem NULL; SMARM_ENOMEMBER the group has no live
 * member; SMARM_ENOCHAN the picked member has no mailbox for type;
 * SMARM_ECLOSED; SMARM_ENOMEM; SMARM_ENOTACTOR.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_group_dispatch(const char *group,
				   const smarm_msgtype_t *type,
				   const void *elem);

#ifdef __cplusplus
}
#endif

#endif /* SMARM_OTP_H */
