/* SPDX-License-Identifier: MIT */
/*
 * smarm/errors.h - status codes returned by every fallible libsmarm call.
 *
 * Codes are negative, explicit and never renumbered or reused. They are
 * grouped in blocks: -1..-99 generic, -100.. actors, -200.. messages and
 * channels, -300.. plugins and behaviours, -400.. distribution. The enum,
 * smarm_err_name() and smarm_strerror() are all generated from SMARM_ERROR_MAP,
 * so they cannot drift apart. New codes may be added in later ABI minors
 * (SMARM_EBADF came with SMARM_0.2; SMARM_ENONAME, SMARM_ENOCHAN,
 * SMARM_ENOMEMBER, SMARM_EINTENSITY and SMARM_ESTARTFAILED with SMARM_0.4, the
 * -300 block with SMARM_0.5, the -400 block with SMARM_0.5 too): treat any
 * unknown negative value as a failure. The codes are ABI; the wording of the
 * messages is not. Retired values, never to be reused: -103.
 */
#ifndef SMARM_ERRORS_H
#define SMARM_ERRORS_H

/* XX(name, value, message) */
#define SMARM_ERROR_MAP(XX)                                                    \
	XX(OK, 0, "success")                                                   \
	XX(EINVAL, -1, "invalid argument")                                     \
	XX(ENOMEM, -2, "out of memory")                                        \
	XX(ESTATE, -3, "operation not valid in the current state")             \
	XX(ETIMEDOUT, -4, "timed out")                                         \
	XX(EAGAIN, -5, "nothing available now; try again later")               \
	XX(EEXIST, -6, "already exists")                                       \
	XX(ENOENT, -7, "no such object")                                       \
	XX(ESYSTEM, -8, "operating system call failed")                        \
	XX(EINTERNAL, -9, "internal error")                                    \
	XX(EBADF, -10, "not an open file descriptor")                          \
	XX(ENOPROC, -100, "no such actor (never existed or already gone)")     \
	XX(EATCAPACITY, -101, "actor limit reached")                           \
	XX(ENOTACTOR, -102, "must be called from an actor")                    \
	XX(EINTENSITY, -104, "supervisor gave up: restart intensity reached")  \
	XX(ESTARTFAILED, -105, "child ended before it reported ready")         \
	XX(ENONAME, -110, "no live actor holds that name")                     \
	XX(ECLOSED, -200, "channel closed")                                    \
	XX(ENOCHAN, -201, "actor has no channel for that message type")        \
	XX(ENOMEMBER, -202, "group has no live member")                        \
	XX(EPLUGINOPEN, -300, "plugin not found or not a shared object")       \
	XX(ENOENTRY, -301, "plugin has no entry symbol")                       \
	XX(EPLUGINABI, -302,                                                   \
	   "plugin built for an ABI this runtime cannot serve")                \
	XX(ESTRUCTSIZE, -303, "plugin descriptor smaller than its ABI needs")  \
	XX(EPROTOCOL, -304, "malformed protocol text")                         \
	XX(ENOHANDLER, -305, "protocol operation without a handler")           \
	XX(EDUPNAME, -306, "two behaviours of one name")                       \
	XX(ENOTEXHAUSTIVE, -307, "state machine table misses a row")           \
	XX(EUNREACHABLE, -308, "state machine row can never match")            \
	XX(ENOBEHAVIOUR, -309, "plugin has no behaviour of that name")         \
	XX(ENOOP, -310, "behaviour has no such operation")                     \
	XX(EARGS, -311, "wrong argument count or type for the operation")      \
	XX(ETOOBIG, -312, "str or bytes value over SMARM_BYTES_MAX")           \
	XX(EDOWN, -313, "server ended before it replied")                      \
	XX(ECALLSELF, -314, "a server called itself")                          \
	XX(EPLUGINLINK, -315,                                                  \
	   "plugin brings its own copy of the runtime (linked -lsmarm)")       \
	XX(EPLUGINPERM, -316,                                                  \
	   "file or a directory above it writable by others or owned by "      \
	   "another user")                                                     \
	XX(EBADRETURN, -317,                                                   \
	   "a callback returned a value outside its contract")                 \
	XX(EOPKIND, -318, "operation is of another kind (a cast called, ...)") \
	XX(EREPLY, -319, "the server answered with an error (see the reply)")  \
	XX(EFULL, -320, "the server's message queue is at its limit")          \
	XX(EBADSPEC, -321, "invalid supervisor spec")                          \
	XX(ESIMPLE, -322,                                                      \
	   "call does not fit a simple_one_for_one supervisor (or fits only "  \
	   "one)")                                                             \
	XX(ERESTARTING, -323, "the child is restarting (its restart failed)")  \
	XX(ENODIST, -400,                                                      \
	   "distribution is not built in (no erl_interface at build time)")    \
	XX(ENOEPMD, -401, "no epmd answers on this host (start epmd -daemon)") \
	XX(ENOCONN, -402, "no connection to the remote node")                  \
	XX(EAUTH, -403, "handshake refused (cookie, name or flags)")           \
	XX(ECOOKIE, -404,                                                      \
	   "no usable cookie (file missing, unreadable, or "                   \
	   "readable by others)")

enum smarm_status {
#define SMARM__ERR_ENUM(name, value, msg) SMARM_##name = (value),
	SMARM_ERROR_MAP(SMARM__ERR_ENUM)
#undef SMARM__ERR_ENUM
};

#endif /* SMARM_ERRORS_H */
