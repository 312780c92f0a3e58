/* SPDX-License-Identifier: MIT */
/*
 * smarm/otp.h - the OTP layer of the libsmarm API: monitors, links,
 * trapping exits and exit signals; message types, mailboxes, names and
 * process groups; supervisors. Included by smarm/smarm.h, which states
 * the conventions every call here follows; include either.
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
 * to the dead actor. A *supervisor* is an actor, built on all of this,
 * that starts children and restarts them as OTP's supervisor does.
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
 * into it, so the user may free theirs.
 *
 * No signal is lost silently. An Erlang process always has its mailbox;
 * a channel can lose its receiver (smarm_chan_receiver_free), and
 * memory can run out. So, when a signal's channel refuses it:
 *   - a Down (the target ended) becomes an exit signal to the watcher
 *     from the target, how SMARM_EXIT_CRASHED, reason the refusal
 *     (SMARM_ECLOSED no receiver is left, SMARM_ENOMEM): a watcher that
 *     does not trap crashes with that reason; one that traps gets it
 *     as a SMARM_SIGNAL_EXIT message instead. A Down due at once (the
 *     target was already gone) fails smarm_monitor instead.
 *   - an exit signal to a trapping actor whose trap channel refuses it
 *     acts as if the actor did not trap: a normal one is ignored, any
 *     other ends the actor with its how and reason.
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
 * the runtime still knows (it ended but was not joined yet, or it had
 * registered a name, for instance). refs are
 * unique within the node and never reused. When the watcher (the
 * caller) ends, its monitors are removed. ch must have elements of
 * sizeof(smarm_signal_t) bytes; the runtime keeps a sender reference
 * until the Down is sent or the monitor removed.
 * ref may be NULL (the Down's `from` still names the target).
 * A Down ch later refuses (no receiver left, out of memory) crashes the
 * caller (see "No signal is lost silently" above). The caller may
 * monitor itself, as in OTP: the monitor is set and can be removed, and
 * never fires (an actor does not see its own end). (Before 0.5.0 that
 * was SMARM_EINVAL.)
 * Returns: 0, *ref set. Errors: SMARM_ENOTACTOR; SMARM_EINVAL pid is
 * SMARM_PID_NONE, or ch is no channel handle or has
 * another element size; SMARM_ESTATE ch was
 * freed; SMARM_ECLOSED ch has no sender reference left, or the target
 * was gone and ch has no receiver left to take its Down (no monitor is
 * set, *ref untouched); SMARM_ENOMEM (also: the Down due at once could
 * not be queued).
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_monitor(smarm_pid_t pid, smarm_chan_t *ch, uint64_t *ref);

/*
 * smarm_monitor_name() - monitor the actor registered as name in the
 * caller's node, as OTP's monitor(process, Name): the name is resolved
 * once, now, and the monitor is then on that actor, exactly as
 * smarm_monitor() of its pid (a later holder of the name is not
 * watched). A name that no live actor holds is not an error: one Down
 * is queued in ch at once, how SMARM_EXIT_NOPROC, `from` SMARM_PID_NONE
 * (OTP's 'DOWN' with noproc).
 * Returns: 0, *ref set (ref may be NULL). Errors: SMARM_ENOTACTOR;
 * SMARM_EINVAL name NULL, empty or longer than SMARM_NAME_MAX, or ch as
 * for smarm_monitor(); SMARM_ESTATE, SMARM_ECLOSED, SMARM_ENOMEM as for
 * smarm_monitor().
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_monitor_name(const char *name, smarm_chan_t *ch,
				 uint64_t *ref);

/*
 * smarm_actor_monitors() - the actors pid monitors now (OTP's
 * process_info(Pid, monitors)), one entry per monitor in place, in the
 * order they were set (an actor monitored twice is listed twice; a
 * monitor of itself lists pid). smarm_actor_monitored_by() - the
 * actors that monitor pid now (process_info(Pid, monitored_by)), one
 * entry per monitor, in no particular order. Each copies up to cap
 * pids into buf and sets *count to how many there are: *count > cap
 * means the list was cut to the first cap (call again with more room).
 * buf may be NULL when cap is 0. A monitor that fired or was removed is
 * not listed; the lists of an actor that ended are empty.
 * Returns: 0. Errors: SMARM_ENOTACTOR; SMARM_EINVAL count NULL, or buf
 * NULL with cap > 0; SMARM_ENOPROC pid names no live actor of the
 * caller's node.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_actor_monitors(smarm_pid_t pid, smarm_pid_t *buf,
				   size_t cap, size_t *count);
SMARM_API int smarm_actor_monitored_by(smarm_pid_t pid, smarm_pid_t *buf,
				       size_t cap, size_t *count);

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
 * From then on, when either ends, the other gets an exit signal, as in
 * OTP: if it traps exits, a SMARM_SIGNAL_EXIT message (from the one that
 * ended, with its how and reason), a normal end included (OTP's
 * {'EXIT', Pid, normal}); if not, it ends too with that how and reason
 * (a crash crashes it, a shutdown shuts it down, a kill kills it),
 * except after a normal end, which it ignores. (Before 0.5.0 a
 * normal end reached no one.) The link is gone after either end.
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
 * a sender reference while it traps into ch. A signal ch refuses (its
 * receiver was freed, or memory ran out) acts as if the caller did not
 * trap: trapping needs a mailbox that can take the message.
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
 * smarm_register_pid() - bind name to the live actor pid of the caller's
 * node (OTP's register(Name, Pid)), as smarm_register() binds it to the
 * caller: the same rules (several names per actor, idempotent for the
 * holder, freed when the holder ends). holder may be NULL.
 * Returns: 0. Errors: SMARM_EINVAL name NULL, empty or too long, or pid
 * SMARM_PID_NONE; SMARM_ENOPROC pid names no live actor of this node;
 * SMARM_EEXIST another live actor holds name (*holder set to it);
 * SMARM_ENOTACTOR; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_register_pid(const char *name, smarm_pid_t pid,
				 smarm_pid_t *holder);

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
 * call added it (true) or not (false: it was a member already, or the
 * call failed). A member
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

/* ==== Supervisors ==== */

/*
 * A *supervisor* is an actor that starts child actors from a spec, in
 * order, watches them and restarts them as OTP's supervisor does. It
 * traps exits, links to each child (so a supervisor that is killed
 * takes its children along) and monitors each (so every end, a normal
 * one too, is seen). Build a spec (smarm_sup_spec_alloc and its
 * setters), then start it as an actor of its own (smarm_sup_start) or
 * run it on the calling actor (smarm_sup_run, the form for a child
 * supervisor in a tree).
 *
 * Restart kinds (a child's `restart`): SMARM_SUP_PERMANENT is restarted
 * after any end; SMARM_SUP_TRANSIENT only after an abnormal one
 * (SMARM_EXIT_CRASHED or SMARM_EXIT_STOPPED: NORMAL and SHUTDOWN are
 * not abnormal); SMARM_SUP_TEMPORARY never. Strategies say which
 * siblings are cycled with a child that is restarted: ONE_FOR_ONE none,
 * ONE_FOR_ALL all, REST_FOR_ONE those started after it. Cycled siblings
 * are stopped in reverse start order, each per its shutdown policy and
 * each stop awaited; then all are started again in start order
 * (temporary ones are stopped and not restarted). One failure is one
 * restart, however many siblings it cycles.
 *
 * Restarting children (since 0.5.0, as OTP's supervisor): a child
 * whose restart fails (its start failed, ended before it was ready,
 * timed out) is kept as restarting (SMARM_SUP_CHILD_RESTARTING in
 * smarm_sup_which_children_ex, not active in count_children) and its
 * restart is tried again, per the strategy, after the calls already
 * sent to the supervisor are served; each try is one more restart
 * against the intensity, so a child that cannot start makes its
 * supervisor give up. restart_child and delete_child of it answer
 * SMARM_ERESTARTING (OTP's {error, restarting}); terminate_child stops
 * the retries. (Before, the supervisor retried at once, deaf to calls
 * until it succeeded or gave up.)
 *
 * Intensity: more than max_restarts restarts within period_ns make the
 * supervisor give up: it shuts its children down (reverse order) and
 * ends as OTP's supervisor does, with a shutdown: SMARM_EXIT_SHUTDOWN,
 * with reason SMARM_EINTENSITY saying why. A parent supervisor restarts
 * it if it is a permanent child, counting that against its own
 * intensity (escalation); a transient one stays down, as in OTP.
 * (Before 0.5.0 it ended SMARM_EXIT_CRASHED.)
 *
 * Shutdown policies (a child's `shutdown`): SMARM_SUP_BRUTAL_KILL kills
 * it at once (SMARM_EXIT_STOPPED, untrappable); a timeout in ns sends a
 * shutdown (a trapping child gets a SMARM_SIGNAL_EXIT message, any
 * other ends SMARM_EXIT_SHUTDOWN) and kills it if it has not ended in
 * that time; SMARM_SUP_INFINITY sends the shutdown and waits as long as
 * it takes (use it for child supervisors, so their own children get
 * their full grace).
 *
 * Ending a supervisor: an exit signal from its parent (the actor that
 * called smarm_sup_start or that spawned the smarm_sup_run actor; a
 * parent supervisor's link) or from no actor (smarm_node_shutdown_actor,
 * the root's end) makes it stop its children in reverse start order and
 * then end with that signal's how (SMARM_EXIT_SHUTDOWN for a shutdown).
 * A SIMPLE_ONE_FOR_ONE supervisor stops its instances all at once
 * instead, as OTP's does: each is sent the shutdown (killed, for
 * SMARM_SUP_BRUTAL_KILL), then their ends are awaited together within
 * one shutdown time, after which those left are killed; so they clean
 * up in parallel, in no defined order, and n of them take one shutdown
 * time, not n. The same holds when it gives up (Intensity).
 * It does so also while it waits for a child's readiness, at a first
 * start or a restart: that start is given up (the child stopped per its
 * policy) and nothing more is started, so a child that never gets ready
 * cannot keep its supervisor from ending (OTP's hanging_restart_loop).
 * Exit signals from other actors are ignored, as in OTP.
 *
 * Automatic shutdown (since 0.5.0, OTP 24's auto_shutdown and
 * significant children). A child marked *significant*
 * (smarm_sup_spec_set_child_significant; transient and temporary
 * children only) makes its supervisor end itself when it ends on its
 * own and is not restarted, if the spec says so
 * (smarm_sup_spec_set_auto_shutdown): with
 * SMARM_SUP_AUTO_ANY_SIGNIFICANT when any significant child does so,
 * with SMARM_SUP_AUTO_ALL_SIGNIFICANT when the last significant child
 * that was running (or restarting) does. "Ends and is not restarted":
 * a temporary child's every end; a transient child's normal end or
 * shutdown (a crash restarts it). The supervisor then stops its other
 * children as at any end and ends with SMARM_EXIT_SHUTDOWN, reason 0
 * (OTP's shutdown), which a parent does not restart a transient or
 * temporary child for, so significant child supervisors carry the
 * shutdown up a tree. Children the supervisor stops itself
 * (smarm_sup_terminate_child, a sibling's restart, its own end) and
 * children that said ignore trigger nothing, as in OTP. With the
 * default, SMARM_SUP_AUTO_NEVER, a significant child is invalid.
 *
 * Readiness. A child is *ready* as soon as it is spawned, unless its
 * spec asks for a report (smarm_sup_spec_set_child_ready): then its body
 * calls smarm_sup_ready() when it is set up (a name registered, a
 * mailbox published), or smarm_sup_start_failed(). The next sibling is
 * started only after the previous one is ready, so it finds what that
 * one registered. A supervisor is itself ready once all its children
 * are, and reports so to its parent.
 */

/*
 * Strategies (smarm_sup_spec_set_strategy). Since: SMARM_0.4;
 * SIMPLE_ONE_FOR_ONE since SMARM_0.5.
 *
 * SMARM_SUP_SIMPLE_ONE_FOR_ONE is OTP's simple_one_for_one: the spec
 * holds exactly one child, a template that is not started with the
 * supervisor (a start of any other spec of this strategy fails with
 * SMARM_EBADSPEC). smarm_sup_start_child_args starts instances of it,
 * each restarted as ONE_FOR_ONE restarts a child; their id is empty
 * (OTP's undefined). A template added with smarm_sup_spec_add_template
 * runs each instance with the template's argument and the instance's
 * extra one (OTP's apply(M, F, A ++ ExtraArgs)); see there for a
 * template of one argument. Calls that name a child by id (terminate, restart
 * and delete by id) and the calls that add a child of its own spec
 * (smarm_sup_start_child, smarm_sup_start_child_spec) answer
 * SMARM_ESIMPLE, OTP's {error, simple_one_for_one}; terminate an
 * instance by pid (smarm_sup_terminate_child_pid), which also forgets
 * it. An instance that says ignore is not kept, whatever its restart,
 * nor one that ended and is not restarted (a temporary one, a
 * transient one that ended normally or shut down: OTP erases it).
 * count_children reports one spec (the template) and counts the
 * instances by the template's type.
 */
enum smarm_sup_strategy {
	SMARM_SUP_ONE_FOR_ONE = 0,
	SMARM_SUP_ONE_FOR_ALL = 1,
	SMARM_SUP_REST_FOR_ONE = 2,
	SMARM_SUP_SIMPLE_ONE_FOR_ONE = 3,
};

/* Restart kinds (smarm_sup_spec_add_child). Since: SMARM_0.4. */
enum smarm_sup_restart {
	SMARM_SUP_PERMANENT = 0,
	SMARM_SUP_TRANSIENT = 1,
	SMARM_SUP_TEMPORARY = 2,
};

/*
 * Shutdown policies (smarm_sup_spec_add_child's shutdown_ns): any other
 * value is a timeout in ns. SMARM_SUP_SHUTDOWN_DEFAULT is OTP's worker
 * default, 5 s. Since: SMARM_0.4.
 */
#define SMARM_SUP_BRUTAL_KILL ((uint64_t)0)
#define SMARM_SUP_INFINITY UINT64_MAX
#define SMARM_SUP_SHUTDOWN_DEFAULT ((uint64_t)5000000000)

/* The most children one spec holds. Since: SMARM_0.4. */
#define SMARM_SUP_CHILDREN_MAX 65536

/*
 * smarm_sup_spec_t - what a supervisor starts and how it restarts: a
 * strategy, an intensity and an ordered list of children. A plain
 * memory object: the supervisor copies it when it starts.
 */
typedef struct smarm_sup_spec smarm_sup_spec_t;

/*
 * smarm_sup_spec_alloc() - create an empty spec: ONE_FOR_ONE, intensity
 * 3 restarts in 5 s, no children.
 *
 * The default intensity differs from OTP's (1 in 5 s) on purpose: with
 * 1, a transient worker that crashes twice in quick succession (a retry
 * after a transient fault, then a clean exit) takes its whole supervisor
 * down; 3 still stops a crash loop within milliseconds.
 * Returns: 0, *out set. Errors: SMARM_EINVAL out NULL; SMARM_ENOMEM.
 * Thread-safety: any thread. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_spec_alloc(smarm_sup_spec_t **out);

/*
 * smarm_sup_spec_free() - free a spec; NULL is a no-op. Supervisors
 * started from it are unaffected (they hold a copy).
 * Thread-safety: any thread. Since: SMARM_0.4.
 */
SMARM_API void smarm_sup_spec_free(smarm_sup_spec_t *spec);

/*
 * smarm_sup_spec_set_strategy() - set the restart strategy.
 * Returns: 0. Errors: SMARM_EINVAL spec NULL or strategy not a
 * smarm_sup_strategy.
 * Thread-safety: any thread, one at a time per spec. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_spec_set_strategy(smarm_sup_spec_t *spec, int strategy);

/*
 * smarm_sup_spec_set_intensity() - allow at most max_restarts restarts
 * in any period_ns window; one more makes the supervisor give up (see
 * Intensity above). max_restarts 0 gives up at the first restart. The
 * supervisor keeps the instants of the last max_restarts restarts in a
 * ring, so each restart costs the same however many came before.
 * Returns: 0. Errors: SMARM_EINVAL spec NULL, max_restarts above 65536
 * or period_ns 0.
 * Thread-safety: any thread, one at a time per spec. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_spec_set_intensity(smarm_sup_spec_t *spec,
					   uint32_t max_restarts,
					   uint64_t period_ns);

/*
 * smarm_sup_spec_set_fault_weight() - how many restarts a child's
 * contained fault (an end SMARM_EXIT_FAULT: SMARM_OPT_CONTAIN_FAULTS)
 * counts against the intensity; 1 (the default) counts it as any crash.
 * A fault leaves behind what a crash does not (docs/embedding.md,
 * "Faults": memory and locks the faulting code held, memory it may have
 * corrupted), so a supervisor may want to give up sooner on faults: with
 * weight w and intensity N restarts in T, a fault is w of those N, and
 * w above N gives up at the first fault. Retries of a child whose
 * restart failed count 1 each, as before.
 * Returns: 0. Errors: SMARM_EINVAL spec NULL, weight 0 or above 65536.
 * Thread-safety: any thread, one at a time per spec. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_spec_set_fault_weight(smarm_sup_spec_t *spec,
					      uint32_t weight);

/*
 * smarm_sup_spec_add_child() - append a child: the supervisor spawns
 * fn(arg) as it, after the children added before.
 *
 * id names the child in the spec (1..SMARM_NAME_MAX bytes, copied); it
 * is not an actor name (register one in fn if others should find the
 * child). arg is passed as is to every start and restart: it must stay
 * valid while a supervisor of this spec may start the child. restart is
 * a smarm_sup_restart; shutdown_ns is SMARM_SUP_BRUTAL_KILL,
 * SMARM_SUP_INFINITY or a timeout in ns (SMARM_SUP_SHUTDOWN_DEFAULT for
 * OTP's).
 * Returns: 0. Errors: SMARM_EINVAL spec, id or fn NULL, id empty or
 * longer than SMARM_NAME_MAX, restart not a smarm_sup_restart, or the
 * spec holds SMARM_SUP_CHILDREN_MAX children; SMARM_EEXIST the spec has
 * a child of that id; SMARM_ENOMEM.
 * Thread-safety: any thread, one at a time per spec. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_spec_add_child(smarm_sup_spec_t *spec, const char *id,
				       smarm_actor_cb fn, void *arg,
				       int restart, uint64_t shutdown_ns);

/*
 * smarm_sup_template_cb - the body of a SIMPLE_ONE_FOR_ONE template
 * added with smarm_sup_spec_add_template: arg is the template's
 * argument (OTP's A), extra the one its instance was started with
 * (smarm_sup_start_child_args, OTP's ExtraArgs). C has no argument
 * lists to append, so the two come as two parameters. It runs as an
 * actor's body does (smarm_actor_cb), on the instance's own actor.
 * Since: SMARM_0.5.
 */
typedef void (*smarm_sup_template_cb)(void *arg, void *extra);

/*
 * smarm_sup_spec_add_template() - append a child as
 * smarm_sup_spec_add_child() does, whose body takes two arguments: the
 * template of a SIMPLE_ONE_FOR_ONE supervisor. Each instance that
 * smarm_sup_start_child_args(sup, extra, ...) starts runs fn(arg,
 * extra), at its start and at every restart: OTP's start_child(Sup,
 * ExtraArgs) with apply(M, F, A ++ ExtraArgs). arg (shared by every
 * instance) and extra (each instance's) are passed as they are and
 * must stay valid while an instance may start. The other setters
 * (readiness, type, significance) name it by id as any child. A spec
 * of another strategy that holds such a child is invalid: its start
 * fails with SMARM_EBADSPEC, as smarm_sup_start_child_spec() of it.
 * Returns: 0. Errors: as smarm_sup_spec_add_child().
 * Thread-safety: any thread, one at a time per spec. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_spec_add_template(smarm_sup_spec_t *spec,
					  const char *id,
					  smarm_sup_template_cb fn, void *arg,
					  int restart, uint64_t shutdown_ns);

/*
 * smarm_sup_spec_set_child_ready() - make the child id report readiness:
 * at each start the supervisor waits until its body calls
 * smarm_sup_ready() (or smarm_sup_start_failed(), or ends) before it
 * starts the next child. timeout_ns bounds that wait under the timeout
 * rule of the Conventions (0: it must be ready at once, which only an
 * actor that is already running can be; SMARM_NO_TIMEOUT: no bound); a
 * child not ready by then is killed and its start fails with
 * SMARM_ETIMEDOUT.
 * Returns: 0. Errors: SMARM_EINVAL spec or id NULL, id empty or too
 * long; SMARM_ENOENT the spec has no child of that id.
 * Thread-safety: any thread, one at a time per spec. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_spec_set_child_ready(smarm_sup_spec_t *spec,
					     const char *id,
					     uint64_t timeout_ns);

/*
 * Child types (smarm_sup_spec_set_child_type), OTP's child_type: what
 * smarm_sup_which_children_ex and smarm_sup_count_children_ex report.
 * Since: SMARM_0.5.
 */
enum smarm_sup_child_type {
	SMARM_SUP_WORKER = 0,
	SMARM_SUP_SUPERVISOR = 1,
};

/*
 * smarm_sup_spec_set_child_type() - mark the child id a worker (the
 * default) or a supervisor. A SMARM_SUP_SUPERVISOR child reports
 * readiness, as smarm_sup_run does once its children are started, so
 * its start returns only once it is a supervisor ready to take calls
 * (OTP's start of a child supervisor); unless smarm_sup_spec_set_child_ready
 * set a bound, its start waits for that report without one. Its body
 * must run a supervisor (smarm_sup_run) or report itself.
 * Returns: 0. Errors: SMARM_EINVAL spec or id NULL, id empty or too
 * long, type not a smarm_sup_child_type; SMARM_ENOENT the spec has no
 * child of that id.
 * Thread-safety: any thread, one at a time per spec. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_spec_set_child_type(smarm_sup_spec_t *spec,
					    const char *id, int type);

/*
 * Automatic shutdown policies (smarm_sup_spec_set_auto_shutdown), OTP's
 * auto_shutdown supervisor flag: see Automatic shutdown above.
 * Since: SMARM_0.5.
 */
enum smarm_sup_auto_shutdown {
	SMARM_SUP_AUTO_NEVER = 0,	    /* never (the default) */
	SMARM_SUP_AUTO_ANY_SIGNIFICANT = 1, /* when a significant child has
					       ended, not restarted */
	SMARM_SUP_AUTO_ALL_SIGNIFICANT = 2, /* when no significant child is
					       left running (or
					       restarting) */
};

/*
 * smarm_sup_spec_set_auto_shutdown() - set when the supervisor ends
 * itself as its significant children end (OTP's auto_shutdown flag;
 * see Automatic shutdown above). A start of a spec that has a
 * significant child with SMARM_SUP_AUTO_NEVER fails with
 * SMARM_EBADSPEC, OTP's {bad_combination, [{auto_shutdown, never},
 * {significant, true}]}; the check is made at the start, so the
 * setters may come in any order.
 * Returns: 0. Errors: SMARM_EINVAL spec NULL or mode not a
 * smarm_sup_auto_shutdown.
 * Thread-safety: any thread, one at a time per spec. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_spec_set_auto_shutdown(smarm_sup_spec_t *spec,
					       int mode);

/*
 * smarm_sup_spec_set_child_significant() - mark the child id
 * significant (or not) for its supervisor's automatic shutdown (OTP's
 * child spec key significant; default false). Only a transient or
 * temporary child may be significant: OTP's {bad_combination,
 * [{restart, permanent}, {significant, true}]} is SMARM_EBADSPEC here,
 * and the child is left as it was. A SIMPLE_ONE_FOR_ONE template that
 * is significant makes every instance so.
 * Returns: 0. Errors: SMARM_EINVAL spec or id NULL, id empty or too
 * long; SMARM_ENOENT the spec has no child of that id; SMARM_EBADSPEC
 * significant for a permanent child.
 * Thread-safety: any thread, one at a time per spec. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_spec_set_child_significant(smarm_sup_spec_t *spec,
						   const char *id,
						   bool significant);

/*
 * smarm_sup_start() - spawn a supervisor actor for spec and wait until
 * it has started every child.
 *
 * The spec is copied before the call returns. The supervisor is a child
 * of the caller (its parent: see Ending a supervisor) but is not linked
 * to it; link it (smarm_link) to be taken along when it gives up. If a
 * child fails to start, the supervisor stops those it started, in
 * reverse order, and ends; the call then returns that child's failure.
 * The wait is as long as the children's readiness takes (each child's
 * smarm_sup_spec_set_child_ready bound applies).
 * Returns: 0, *out set to the supervisor's pid (out may be NULL).
 * Errors: SMARM_ENOTACTOR; SMARM_EINVAL spec NULL; SMARM_EBADSPEC a
 * SIMPLE_ONE_FOR_ONE spec without exactly one child, a template of two
 * arguments under another strategy, or a significant child with
 * SMARM_SUP_AUTO_NEVER (or a permanent one); the status a child
 * passed to smarm_sup_start_failed(); SMARM_ESTARTFAILED a child ended
 * before it was ready; SMARM_ETIMEDOUT a child was not ready in time;
 * SMARM_EATCAPACITY, SMARM_ENOMEM a spawn failed. Safe point.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_start(const smarm_sup_spec_t *spec, smarm_pid_t *out);

/*
 * smarm_sup_init_cb - a supervisor's init (OTP's supervisor:init/1):
 * fills spec, an empty one (smarm_sup_spec_alloc's defaults), with
 * the supervisor's strategy, intensity and children. Called on the
 * supervisor's own actor before it starts anything, an actor that
 * already traps exits, as OTP's supervisor:init/1 sets trap_exit
 * before it calls Module:init/1 (since 0.5.0): an exit signal that
 * reaches it during init (a process init linked to ends, smarm_link of
 * one gone) is a message the supervisor takes once it runs, which ends
 * it if its parent sent it and is ignored if another actor did (OTP's
 * handle_info({'EXIT', Pid, Reason})), not the actor's end; a kill
 * still kills it. spec is owned by the caller of init and valid only
 * during the call. Returns 0 to
 * start spec; SMARM_SUP_INIT_IGNORE for OTP's ignore (the supervisor
 * ends normally, started nothing); a negative status to fail the start
 * with it. Any other value is outside the contract (SMARM_EBADRETURN).
 * A setter of spec that fails during init makes the spec invalid
 * (OTP checks child specs when init returns; a C setter reports at
 * the call, and an init that goes on would start a supervisor short of
 * the child): the start fails with SMARM_EBADSPEC.
 * Since: SMARM_0.5.
 */
typedef int (*smarm_sup_init_cb)(void *arg, smarm_sup_spec_t *spec);

/* smarm_sup_init_cb's ignore. Since: SMARM_0.5. */
#define SMARM_SUP_INIT_IGNORE 1

/*
 * smarm_sup_start_init() - spawn a supervisor actor that builds its
 * spec with init(arg) (see smarm_sup_init_cb), then starts it as
 * smarm_sup_start() does, and wait until it has started every child or
 * failed (OTP's supervisor:start_link/2 with Module:init/1). arg is
 * passed as is and must stay valid until the call returns.
 * Returns: 0, *out (may be NULL) set to the supervisor's pid, or to
 * SMARM_PID_NONE if init returned SMARM_SUP_INIT_IGNORE (OTP's
 * ignore: the supervisor ended normally). Errors: SMARM_ENOTACTOR;
 * SMARM_EINVAL init NULL; the negative status init returned;
 * SMARM_EBADRETURN init returned another value (*why: the value);
 * SMARM_EBADSPEC the spec init built is invalid (*why: the status of
 * the first setter that failed during init, or SMARM_EBADSPEC for a
 * spec smarm_sup_start() refuses so); SMARM_EDOWN the
 * supervisor ended before it started, a crash in init say (*why: the
 * reason of its end); as smarm_sup_start() for a child that failed to
 * start. why (may be NULL) is set on every failure (0 when there is
 * no more to say). Safe point.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_start_init(smarm_sup_init_cb init, void *arg,
				   smarm_pid_t *out, intptr_t *why);

/*
 * smarm_sup_run() - run a supervisor for spec on the calling actor:
 * start the children, report readiness to the caller's parent (as
 * smarm_sup_ready would; ignored if no supervisor waits), then
 * supervise until it ends. The form for a child supervisor: a child
 * body that calls smarm_sup_run(child_spec) (with shutdown
 * SMARM_SUP_INFINITY and a readiness report in the parent's spec).
 *
 * The spec is copied first. Does not return once it started: the
 * caller ends as the supervisor does (SMARM_EXIT_SHUTDOWN after a
 * shutdown, SMARM_EXIT_SHUTDOWN with reason SMARM_EINTENSITY when it
 * gave up;
 * SMARM_EXIT_NORMAL after a failed start, which it reports with
 * smarm_sup_start_failed's status). The caller must not trap exits or
 * use SMARM_SIGNAL_DOWN monitors of its own before: the supervisor
 * takes both.
 * Returns: only on misuse. Errors: SMARM_ENOTACTOR; SMARM_EINVAL spec
 * NULL; SMARM_EBADSPEC as smarm_sup_start(); SMARM_ENOMEM (nothing was
 * started).
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_run(const smarm_sup_spec_t *spec);

/*
 * smarm_sup_run_init() - smarm_sup_run() of the spec init(arg) builds
 * on the calling actor (see smarm_sup_init_cb): the form for a child
 * supervisor with an init, in a tree. What smarm_sup_start_init
 * returns to its caller is reported to the parent supervisor, as the
 * child's start: init's SMARM_SUP_INIT_IGNORE is the child's ignore
 * (as smarm_sup_ignore()), a negative status its failure (as
 * smarm_sup_start_failed()), another value SMARM_EBADRETURN, an
 * invalid spec SMARM_EBADSPEC; each then ends the caller with
 * SMARM_EXIT_NORMAL. A crash in init is the caller's end.
 * Returns: only on misuse. Errors: SMARM_ENOTACTOR; SMARM_EINVAL init
 * NULL; SMARM_ENOMEM (nothing was started).
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_run_init(smarm_sup_init_cb init, void *arg);

/*
 * smarm_sup_ready() - report the calling child ready to the supervisor
 * that started it (see Readiness). A report nobody waits for (the child
 * is not set to report, or reports twice) is ignored.
 * Returns: 0. Errors: SMARM_ENOTACTOR; SMARM_ESTATE the caller was not
 * started by a supervisor (its spawner is gone or is none).
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_ready(void);

/*
 * smarm_sup_ready_info() - smarm_sup_ready() with a value for the
 * starter (OTP's start function returning {ok, Pid, Info}): a
 * smarm_sup_start_child_spec or smarm_sup_restart_child_ex that waits
 * for this report returns info beside the pid.
 * Returns: 0. Errors: as smarm_sup_ready().
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_ready_info(intptr_t info);

/*
 * smarm_sup_start_failed() - report that the calling child could not
 * start, with status (a negative SMARM_E* code or any negative value of
 * the application's), then end the caller with SMARM_EXIT_NORMAL (its
 * cleanup handlers run). A supervisor waiting for this child's
 * readiness fails its start with status (smarm_sup_start returns it).
 * Returns: only on misuse, else does not return. Errors:
 * SMARM_ENOTACTOR; SMARM_EINVAL status is not negative.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_start_failed(int status);

/*
 * smarm_sup_ignore() - the calling child's start returns ignore (OTP's
 * start function returning ignore): its supervisor keeps the child with
 * no pid (SMARM_PID_NONE in smarm_sup_which_children, not active in
 * smarm_sup_count_children) and does not restart it; a temporary child
 * is not kept at all. The start (smarm_sup_start, smarm_sup_start_child,
 * smarm_sup_restart_child) succeeds, the child's pid SMARM_PID_NONE
 * (OTP's {ok, undefined}); smarm_sup_restart_child starts it again.
 * Then the caller ends with SMARM_EXIT_NORMAL (its cleanup handlers
 * run). Call it before smarm_sup_ready(), or in a child with no
 * readiness report.
 * Returns: only on misuse, else does not return. Errors:
 * SMARM_ENOTACTOR; SMARM_ESTATE the caller was not spawned by a
 * supervisor (it goes on).
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_ignore(void);

/*
 * Calls to a running supervisor, from any other actor (OTP's
 * start_child, terminate_child, restart_child, delete_child,
 * which_children, count_children). Each is a request to the
 * supervisor's control mailbox (a message type of its own, published
 * by every supervisor) answered on a reply channel of the caller's,
 * while the caller monitors the supervisor; the supervisor serves one
 * request at a time, between the restarts it makes. timeout_ns bounds
 * the wait for the answer under the timeout rule of the Conventions; on
 * SMARM_ETIMEDOUT the request may still be carried out later. Errors
 * common to all: SMARM_ENOTACTOR; SMARM_EINVAL sup is SMARM_PID_NONE,
 * the caller, or a live actor that is no supervisor (it has no control
 * mailbox and is not ending); SMARM_ENOPROC sup names no live actor, it
 * is ending (shutting down, or in its exit, even once its control
 * mailbox is gone), or it ended before it answered; SMARM_ETIMEDOUT;
 * SMARM_ENOMEM. A start (start_child, start_child_spec,
 * start_child_args, restart_child) that fails with SMARM_EEXIST writes
 * the actor in the way to its pid out-parameter, as OTP's
 * {error, {already_started, Pid}} names it: the running child of that
 * id, or the holder of a name the child found taken; SMARM_PID_NONE if
 * none runs (since 0.5.0). Dynamic children are appended after the others in
 * start order; smarm_sup_start_child's are started as soon as spawned
 * (no readiness report), smarm_sup_start_child_spec's as their spec
 * says (type, readiness report). A SIMPLE_ONE_FOR_ONE supervisor
 * answers the calls that do not fit it SMARM_ESIMPLE (see its
 * strategy).
 */

/* One child as smarm_sup_which_children() reports it. Since: SMARM_0.4. */
typedef struct smarm_sup_child {
	char id[SMARM_NAME_MAX + 1]; /* its id, NUL-terminated */
	smarm_pid_t pid;	     /* running tenancy, or SMARM_PID_NONE */
	int restart;		     /* smarm_sup_restart */
} smarm_sup_child_t;

/*
 * smarm_sup_start_child() - add a child to the running supervisor sup
 * and start it, as smarm_sup_spec_add_child() describes the arguments.
 * id NULL makes an anonymous child: the supervisor names it "#<n>".
 * Returns: 0, *child (may be NULL) set to its pid. Errors: the common
 * ones; SMARM_EINVAL id empty or too long, fn NULL or restart no
 * smarm_sup_restart; SMARM_EEXIST sup has a child of that id, *child
 * set to its pid if it runs (OTP's {error, {already_started, Pid}}),
 * to SMARM_PID_NONE if not (OTP's {error, already_present}; since
 * 0.5.0: before, *child was left as it was);
 * SMARM_EATCAPACITY sup has SMARM_SUP_CHILDREN_MAX children, or no
 * actor slot is left for the child (nothing is recorded); SMARM_ESIMPLE
 * sup is SIMPLE_ONE_FOR_ONE (since 0.5: smarm_sup_start_child_args).
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_start_child(smarm_pid_t sup, const char *id,
				    smarm_actor_cb fn, void *arg, int restart,
				    uint64_t shutdown_ns, uint64_t timeout_ns,
				    smarm_pid_t *child);

/*
 * smarm_sup_terminate_child() - stop the child id per its shutdown
 * policy; it is not restarted, and its spec stays (a temporary child's
 * goes). Stopping a child that is not running succeeds; a restarting
 * one is no longer retried (as in OTP). As in OTP, a
 * sibling's restart that cycles it (ONE_FOR_ALL, REST_FOR_ONE) starts
 * it again with the others; delete it to keep it out.
 * Returns: 0. Errors: the common ones; SMARM_EINVAL id NULL, empty or
 * too long; SMARM_ENOENT sup has no child of that id; SMARM_ESIMPLE sup
 * is SIMPLE_ONE_FOR_ONE (since 0.5).
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_terminate_child(smarm_pid_t sup, const char *id,
					uint64_t timeout_ns);

/*
 * smarm_sup_restart_child() - start again the child id, which is not
 * running (terminated, or a transient child that ended normally).
 * Returns: 0, *child (may be NULL) set. Errors: the common ones;
 * SMARM_EINVAL id NULL, empty or too long; SMARM_ENOENT no child of that
 * id; SMARM_ESTATE it is running; SMARM_EATCAPACITY no actor slot;
 * SMARM_ESIMPLE sup is SIMPLE_ONE_FOR_ONE (since 0.5); SMARM_ERESTARTING
 * it is restarting (since 0.5: see Restarting children).
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_restart_child(smarm_pid_t sup, const char *id,
				      uint64_t timeout_ns, smarm_pid_t *child);

/*
 * smarm_sup_delete_child() - remove the spec of the child id, which is
 * not running.
 * Returns: 0. Errors: the common ones; SMARM_EINVAL id NULL, empty or
 * too long; SMARM_ENOENT no child of that id; SMARM_ESTATE it is
 * running (terminate it first); SMARM_ESIMPLE sup is SIMPLE_ONE_FOR_ONE
 * (since 0.5); SMARM_ERESTARTING it is restarting (since 0.5).
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_delete_child(smarm_pid_t sup, const char *id,
				     uint64_t timeout_ns);

/*
 * smarm_sup_which_children() - sup's children in start order.
 *
 * Copies up to cap entries into buf and sets *n to the number of
 * children: *n > cap means the list was cut to the first cap (as
 * smarm_group_members). buf may be NULL when cap is 0.
 * Returns: 0. Errors: the common ones; SMARM_EINVAL n NULL, or buf NULL
 * with cap > 0.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_which_children(smarm_pid_t sup, smarm_sup_child_t *buf,
				       size_t cap, size_t *n,
				       uint64_t timeout_ns);

/*
 * smarm_sup_count_children() - how many children sup has (*specs) and
 * how many of them are running (*active); either may be NULL.
 * Returns: 0. Errors: the common ones; SMARM_EINVAL both NULL.
 * Thread-safety: actor context only. Since: SMARM_0.4.
 */
SMARM_API int smarm_sup_count_children(smarm_pid_t sup, size_t *specs,
				       size_t *active, uint64_t timeout_ns);

/*
 * States of a child in smarm_sup_which_children_ex (OTP's which_children
 * pid field: a pid, undefined, restarting). Since: SMARM_0.5.
 */
enum smarm_sup_child_state {
	SMARM_SUP_CHILD_RUNNING = 0,	/* pid is its running tenancy */
	SMARM_SUP_CHILD_STOPPED = 1,	/* not running (OTP's undefined) */
	SMARM_SUP_CHILD_RESTARTING = 2, /* its restart failed: retried */
};

/*
 * One child as smarm_sup_which_children_ex() reports it (OTP's
 * {Id, Child, Type, Modules}, and its child spec's significant).
 * Since: SMARM_0.5.
 *
 * The record grows only at its end, and each reader says how much of
 * it it knows (smarm_sup_which_children_sized's item_size, OTP's
 * get_childspec growing keys): a library writes the fields the
 * caller's size holds and zeroes what it does not know of a larger
 * one. SMARM_SUP_CHILD_INFO_MIN is the size of the first version, up
 * to state. significant fills what was the record's tail padding, so
 * sizeof did not change (x86_64, aarch64): arrays built against the
 * first version keep their stride.
 */
typedef struct smarm_sup_child_info {
	char id[SMARM_NAME_MAX + 1]; /* its id, NUL-terminated */
	smarm_pid_t pid;	     /* running tenancy, or SMARM_PID_NONE */
	int restart;		     /* smarm_sup_restart */
	int type;		     /* smarm_sup_child_type */
	int state;		     /* smarm_sup_child_state */
	bool significant;	     /* significant for the automatic shutdown
					(smarm_sup_spec_set_child_significant; an
					instance: its template's). Since: 0.5.0, past
					SMARM_SUP_CHILD_INFO_MIN. */
} smarm_sup_child_info_t;

/* The size of smarm_sup_child_info_t's first version (its fields up to
 * state): the least item_size smarm_sup_which_children_sized takes.
 * Since: SMARM_0.5. */
#define SMARM_SUP_CHILD_INFO_MIN (SMARM_NAME_MAX + 1 + 8 + 3 * 4)

/*
 * smarm_sup_start_child_spec() - add the one child that the spec child
 * holds (its strategy and intensity are not used; copied before the
 * call returns) to the running supervisor sup and start it, as
 * smarm_sup_start_child() does, with its type and readiness: the call
 * returns once the child's start is over, after its readiness report
 * if it makes one (OTP's synchronous start_child with its init_ack:
 * set one, or the SUPERVISOR type, for a child that must be set up,
 * trapping exits say, before anyone can stop it).
 * Returns: 0, *pid (may be NULL) set to its pid (SMARM_PID_NONE if it
 * said ignore), *info (may be NULL) to what it passed to
 * smarm_sup_ready_info (0 if nothing). Errors: the common ones;
 * SMARM_EINVAL child NULL; SMARM_EBADSPEC child does not hold exactly
 * one child, or a setter failed on it, or it holds a template of two
 * arguments, or its child is significant and sup's automatic shutdown
 * is SMARM_SUP_AUTO_NEVER (OTP checks a child spec against the
 * supervisor's auto_shutdown; since 0.5.0); SMARM_EEXIST sup has a child of
 * that id (*pid as smarm_sup_start_child sets *child), or the child
 * found a name it registers taken (a server child of
 * smarm_sup_spec_add_server: *pid set to the name's holder, OTP's
 * {error, {already_started, Pid}} from a start function; nothing is
 * recorded); SMARM_ESIMPLE sup is SIMPLE_ONE_FOR_ONE; SMARM_EATCAPACITY
 * as smarm_sup_start_child; the child's failure (its
 * smarm_sup_start_failed status, SMARM_ESTARTFAILED, SMARM_ETIMEDOUT),
 * nothing recorded.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_start_child_spec(smarm_pid_t sup,
					 const smarm_sup_spec_t *child,
					 uint64_t timeout_ns, smarm_pid_t *pid,
					 intptr_t *info);

/*
 * smarm_sup_restart_child_ex() - smarm_sup_restart_child() that also
 * returns, in *info (may be NULL), what the child passed to
 * smarm_sup_ready_info (0 if nothing).
 * Returns and Errors: as smarm_sup_restart_child(), and the child's
 * start failure.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_restart_child_ex(smarm_pid_t sup, const char *id,
					 uint64_t timeout_ns, smarm_pid_t *pid,
					 intptr_t *info);

/*
 * smarm_sup_which_children_ex() - smarm_sup_which_children() with each
 * child's type, state and significance: smarm_sup_which_children_sized()
 * with item_size sizeof(smarm_sup_child_info_t) as this library knows
 * it (significant is filled since 0.5.0; the record's size, and so the
 * array's stride, is the first version's).
 * Returns: 0. Errors: as smarm_sup_which_children().
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_which_children_ex(smarm_pid_t sup,
					  smarm_sup_child_info_t *buf,
					  size_t cap, size_t *n,
					  uint64_t timeout_ns);

/*
 * smarm_sup_which_children_sized() - sup's children in start order, as
 * records of item_size bytes: buf holds cap of them, each
 * sizeof(smarm_sup_child_info_t) as the caller was built (pass that),
 * so a caller built against a later header with a larger record, or an
 * earlier one with a smaller, reads what it knows: each record is
 * written up to item_size, and bytes past the fields this library
 * knows are zeroed. *n is set to the number of children (*n > cap: cut
 * to the first cap, as smarm_sup_which_children). buf may be NULL when
 * cap is 0.
 * Returns: 0. Errors: the common ones; SMARM_EINVAL n NULL, buf NULL
 * with cap > 0, item_size below SMARM_SUP_CHILD_INFO_MIN or cap *
 * item_size overflowing.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_which_children_sized(smarm_pid_t sup, void *buf,
					     size_t item_size, size_t cap,
					     size_t *n, uint64_t timeout_ns);

/*
 * smarm_sup_count_children_ex() - OTP's count_children: *specs the
 * children sup has, *active those running, *supervisors and *workers
 * the children of each type, running or not. Any pointer may be NULL.
 * Returns: 0. Errors: the common ones; SMARM_EINVAL all four NULL.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_count_children_ex(smarm_pid_t sup, size_t *specs,
					  size_t *active, size_t *supervisors,
					  size_t *workers, uint64_t timeout_ns);

/*
 * smarm_sup_start_child_args() - start an instance of the template of
 * the SIMPLE_ONE_FOR_ONE supervisor sup (OTP's start_child(Sup,
 * ExtraArgs)), extra its extra argument, passed as is to this
 * instance's every start and restart. A template added with
 * smarm_sup_spec_add_template runs fn(arg, extra): the template's
 * argument and this one, as OTP appends ExtraArgs to the template's
 * arguments. A template added with smarm_sup_spec_add_child has a body
 * of one parameter: it runs fn(extra), OTP's template whose own
 * argument list is empty (A ++ [Extra] is [Extra]); its spec's arg is
 * not used. Synchronous as smarm_sup_start_child_spec is: returns
 * after the instance's readiness report if the template asks for one.
 * Returns: 0, *pid (may be NULL) set (SMARM_PID_NONE if it said
 * ignore: not kept), *info (may be NULL) to what it passed to
 * smarm_sup_ready_info (0 if nothing). Errors: the common ones;
 * SMARM_ESIMPLE sup is not SIMPLE_ONE_FOR_ONE; SMARM_EATCAPACITY sup has
 * SMARM_SUP_CHILDREN_MAX children, or no actor slot is left; the
 * instance's start failure, nothing recorded.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_start_child_args(smarm_pid_t sup, void *extra,
					 uint64_t timeout_ns, smarm_pid_t *pid,
					 intptr_t *info);

/*
 * smarm_sup_terminate_child_pid() - stop sup's child that runs as pid,
 * per its shutdown policy (OTP's terminate_child(Sup, Pid)): an
 * instance of a SIMPLE_ONE_FOR_ONE supervisor is forgotten; a child of
 * any other strategy is left as smarm_sup_terminate_child leaves it.
 * Returns: 0. Errors: the common ones; SMARM_EINVAL pid is
 * SMARM_PID_NONE; SMARM_ENOENT no child of sup runs as pid.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_terminate_child_pid(smarm_pid_t sup, smarm_pid_t pid,
					    uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* SMARM_OTP_H */
