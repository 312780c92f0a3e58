/* SPDX-License-Identifier: MIT */
/*
 * smarm/smarm_plugin.h - behaviours: the plugin ABI (what a plugin .so
 * exports), the typed protocols its servers speak, and the calls a host
 * makes to load plugins, start servers and call them. Includes
 * smarm/smarm.h; its Conventions hold here too.
 *
 * Model. A *plugin* is a shared object built against smarm.pc that
 * exports one function, SMARM_PLUGIN_ENTRY_NAME, returning a
 * smarm_plugin_desc_t: the behaviours it provides, each a gen_server
 * (smarm_gs_desc_t) or a gen_statem (smarm_sm_desc_t). A behaviour speaks
 * a *protocol*: text listing its operations, one per line (or separated
 * by ';'), '#' starting a comment to the end of the line:
 *
 *     call add(i64, i64) -> i64
 *     call get() -> i64
 *     cast reset()
 *     call put(str, bytes) -> bool
 *     info tick(u64)
 *     call move((i32, f64), i8) -> (i32, i32)
 *
 * `call` waits for a reply (a call without `->` replies with nothing),
 * `cast` does not, `info` is a message the server sends itself (timers)
 * or that others send with smarm_server_info(). Operation names are C
 * identifiers of at most SMARM_OP_NAME_MAX bytes, unique in a protocol;
 * at most SMARM_OP_ARGS_MAX arguments. The types are those of
 * smarm_vtype, and tuples: `(T1, T2, ...)`, one to SMARM_TUPLE_MAX
 * elements of the fixed-size types (i8 .. u64, f32, f64, bool, pid; no
 * str, bytes or tuple inside, so a tuple owns no memory), as an
 * argument or a reply type. The runtime parses the protocol once, at
 * load, and prepares one libffi call interface per operation.
 *
 * Handlers. Each operation has a native handler in the plugin, found by
 * the operation's name in the behaviour's handler table, called as
 *
 *     R op(void *state, smarm_gs_ctx_t *cx, A1 a1, A2 a2, ...)
 *
 * where each protocol type maps to C as smarm_vtype says (bytes takes
 * two parameters, pointer then length) and R is void for a cast, an
 * info or a call without a reply type. A tuple `(T1, T2, ...)` is the C
 * struct `struct { T1 a; T2 b; ... }` (any member names; the layout is
 * the C compiler's, which libffi computes the same), passed and
 * returned by value, as smarm_pid_t is. Arguments of type str and bytes
 * point into the message and are valid until the handler returns. A
 * handler returning str or bytes returns memory it keeps valid until it
 * returns (the state's, or static): the runtime copies it into the
 * reply before anything else runs.
 *
 * Servers. A server is an actor running a behaviour: it holds the
 * behaviour's state (create, then init), serves one message at a time in
 * a fixed priority (exit signals when it traps exits and Downs of the
 * monitors it set, in the order they came; then its timers; then every
 * request - system messages, calls, casts, infos - in the order it was
 * sent, as OTP's mailbox; at most SMARM_QUEUE_LIMIT_DEFAULT of them
 * queued, smarm_gs_set_queue_limit), and ends only when
 * a handler asks (smarm_gs_stop), when it is shut down or killed, or when
 * a handler crashes (smarm_actor_crash, or a failed call into the
 * runtime that the handler reports so). terminate runs on every path.
 * A client handle (smarm_server_t) is an address, not an owner: freeing
 * it never ends the server.
 *
 * Lifetime of plugin code. A plugin stays mapped while anything can
 * still reach its code: a server of its behaviours, a queued message or
 * timer whose destructor is in it, a reply token, a stub. smarm_plugin_close
 * only drops the host's reference; the object is unloaded when the last
 * one goes. While mapped, its text is allowed for asynchronous
 * preemption (smarm_preempt_allow_object).
 */
#ifndef SMARM_SMARM_PLUGIN_H
#define SMARM_SMARM_PLUGIN_H

#include "smarm.h"

#ifdef __cplusplus
#include <type_traits> /* SMARM__IS_ARRAY */
extern "C" {
#endif

/* ==== Versions and limits ==== */

/*
 * The plugin ABI this header describes. A plugin records the version it
 * was built against in its descriptor; the runtime serves every plugin
 * of its own major and of any minor up to its own (fields a newer struct
 * added take their defaults when an older plugin's struct_size stops
 * before them), and refuses other majors (SMARM_EPLUGINABI).
 * Since: SMARM_0.5.
 */
#define SMARM_PLUGIN_ABI_MAJOR 1
#define SMARM_PLUGIN_ABI_MINOR 0

/* The entry symbol every plugin exports (see smarm_plugin_entry_fn). */
#define SMARM_PLUGIN_ENTRY_NAME "smarm_plugin_entry"

/* The longest operation or behaviour name, in bytes without the NUL. */
#define SMARM_OP_NAME_MAX 63

/* The most arguments an operation takes. */
#define SMARM_OP_ARGS_MAX 16

/* The most operations a protocol declares. */
#define SMARM_OPS_MAX 256

/* The most elements a tuple type holds. Since: SMARM_0.5. */
#define SMARM_TUPLE_MAX 16

/*
 * The longest str or bytes value a message may carry, in bytes (a str
 * without its NUL). Longer ones are SMARM_ETOOBIG.
 */
#define SMARM_BYTES_MAX ((size_t)16 << 20)

/* ==== Values ==== */

/*
 * Protocol types, with the C type a handler sees for each.
 * Since: SMARM_0.5.
 */
enum smarm_vtype {
	SMARM_T_VOID = 0,   /* only as a reply type: no value */
	SMARM_T_I8 = 1,	    /* int8_t */
	SMARM_T_I16 = 2,    /* int16_t */
	SMARM_T_I32 = 3,    /* int32_t */
	SMARM_T_I64 = 4,    /* int64_t */
	SMARM_T_U8 = 5,	    /* uint8_t */
	SMARM_T_U16 = 6,    /* uint16_t */
	SMARM_T_U32 = 7,    /* uint32_t */
	SMARM_T_U64 = 8,    /* uint64_t */
	SMARM_T_F32 = 9,    /* float */
	SMARM_T_F64 = 10,   /* double */
	SMARM_T_BOOL = 11,  /* bool */
	SMARM_T_STR = 12,   /* const char * (NUL-terminated) */
	SMARM_T_BYTES = 13, /* const void *, size_t (two parameters); a
			       handler returns smarm_bytes_t */
	SMARM_T_PID = 14,   /* smarm_pid_t */
	SMARM_T_TUPLE = 15, /* a tuple type (T1, ...): its C struct, by
			       value */
};

/* A bytes value a handler returns. Since: SMARM_0.5. */
typedef struct smarm_bytes {
	const void *ptr;
	size_t len;
} smarm_bytes_t;

/*
 * smarm_value_t - one typed value, for the generic client calls
 * (smarm_server_call and friends) and the replies they return.
 *   type  a smarm_vtype.
 *   len   STR, BYTES: length in bytes (a str's without its NUL);
 *         TUPLE: the size of the struct p points at, which must be the
 *         size of the protocol's tuple (else SMARM_EARGS); otherwise
 *         ignored.
 *   v     the value in the member of its type: i for I8..I64, u for
 *         U8..U64 (in range of the type, else SMARM_EARGS), f32, f64, b,
 *         pid, p for STR, BYTES and TUPLE (a str need not be
 *         NUL-terminated: len counts its bytes, which must contain no
 *         NUL; a tuple's p points at its C struct, whose bool members
 *         must be 0 or 1; the runtime copies its members, not the
 *         padding).
 * A value the runtime returns as a reply with p set owns that memory:
 * release it with smarm_value_release(). A TUPLE reply is always such a
 * value: p points at a malloc'd copy of len bytes laid out as the
 * protocol's struct (smarm_value_get_tuple() copies it out).
 * Since: SMARM_0.5.
 */
typedef struct smarm_value {
	int type;
	uint32_t len;
	union {
		int64_t i;
		uint64_t u;
		float f32;
		double f64;
		bool b;
		smarm_pid_t pid;
		const void *p;
	} v;
} smarm_value_t;

/*
 * Values made from C values of their own type, so that the arguments
 * of smarm_server_call() are checked, not trusted as C varargs are:
 * SMARM_V(x) picks the value type from x's C type (int8_t .. uint64_t,
 * int, long long, float, double, bool, char * as a str, smarm_pid_t, a
 * smarm_value_t as itself; any other type does not compile),
 * smarm_value_bytes(p, n) makes a bytes value, smarm_value_tuple(&s,
 * sizeof s) a tuple value of the C struct s (the runtime checks its
 * size against the protocol's tuple and copies it when the call
 * packs its arguments: s need not outlive the call). An integer value
 * converts to any integer type of the protocol it fits (so SMARM_V(5),
 * an int, passes for an i64), and 0 or 1 to a bool (C's true and false
 * are ints); a float converts to the other float type when its value
 * is exactly a value of it (1.5 passes for an f32, 0.1 does not: give
 * 0.1f); a float is never an integer, an integer never a float, so a
 * double given for an i64 is SMARM_EARGS (smarm_server_args_why() says
 * which argument and why). smarm_value_str(NULL) is a value no
 * argument accepts (SMARM_EARGS), as a NULL str is everywhere.
 *     smarm_value_t a[] = { SMARM_V(key), smarm_value_bytes(p, n) };
 *     smarm_server_call(s, "put", a, 2, &r, timeout);
 * Since: SMARM_0.5 (header only).
 */
static inline smarm_value_t smarm_value_i64(int64_t x)
{
	smarm_value_t v;
	v.len = 0;
	v.v.u = 0;
	v.type = SMARM_T_I64;
	v.v.i = x;
	return v;
}

static inline smarm_value_t smarm_value_u64(uint64_t x)
{
	smarm_value_t v;
	v.len = 0;
	v.v.u = 0;
	v.type = SMARM_T_U64;
	v.v.u = x;
	return v;
}

static inline smarm_value_t smarm_value_f32(float x)
{
	smarm_value_t v;
	v.len = 0;
	v.v.u = 0;
	v.type = SMARM_T_F32;
	v.v.f32 = x;
	return v;
}

static inline smarm_value_t smarm_value_f64(double x)
{
	smarm_value_t v;
	v.len = 0;
	v.v.u = 0;
	v.type = SMARM_T_F64;
	v.v.f64 = x;
	return v;
}

static inline smarm_value_t smarm_value_bool(bool x)
{
	smarm_value_t v;
	v.len = 0;
	v.v.u = 0;
	v.type = SMARM_T_BOOL;
	v.v.b = x;
	return v;
}

static inline smarm_value_t smarm_value_pid(smarm_pid_t x)
{
	smarm_value_t v;
	v.len = 0;
	v.v.u = 0;
	v.type = SMARM_T_PID;
	v.v.pid = x;
	return v;
}

static inline smarm_value_t smarm_value_str(const char *s)
{
	smarm_value_t v;
	size_t n = 0;
	while (s != NULL && n <= SMARM_BYTES_MAX && s[n] != '\0')
		n++; /* a longer one is SMARM_ETOOBIG at the call */
	v.type = s != NULL ? SMARM_T_STR : SMARM_T_VOID; /* NULL: refused */
	v.v.p = s;
	v.len = (uint32_t)n;
	return v;
}

static inline smarm_value_t smarm_value_bytes(const void *p, size_t n)
{
	smarm_value_t v;
	v.len = 0;
	v.v.u = 0;
	v.type = SMARM_T_BYTES;
	v.v.p = p;
	v.len = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	return v;
}

static inline smarm_value_t smarm_value_tuple(const void *p, size_t n)
{
	smarm_value_t v;
	v.len = 0;
	v.v.u = 0;
	v.type = SMARM_T_TUPLE;
	v.v.p = p;
	v.len = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	return v;
}

/*
 * smarm_value_get_tuple() - copy the tuple value v (a TUPLE reply, or
 * any tuple value) into the C struct out of size bytes:
 *     struct pt { int32_t x, y; } p;
 *     if (smarm_value_get_tuple(&r, &p, sizeof p) == 0) ...
 *     smarm_value_release(&r);
 * v keeps its memory (release it). Returns: 0. Errors: SMARM_EINVAL v
 * or out NULL; SMARM_EARGS v is no tuple, or one of another size (out
 * untouched). Thread-safety: any thread. Since: SMARM_0.5 (header
 * only).
 */
static inline int smarm_value_get_tuple(const smarm_value_t *v, void *out,
					size_t size)
{
	const unsigned char *from;
	unsigned char *to = (unsigned char *)out;
	if (v == NULL || out == NULL)
		return SMARM_EINVAL;
	if (v->type != SMARM_T_TUPLE || v->len != size || v->v.p == NULL)
		return SMARM_EARGS;
	from = (const unsigned char *)v->v.p;
	while (size-- > 0)
		*to++ = *from++;
	return 0;
}

/* SMARM_V of a value already made: itself (not for direct use). */
static inline smarm_value_t smarm__value_same(smarm_value_t v)
{
	return v;
}

#ifndef __cplusplus
#define SMARM_V(x)                                                             \
	_Generic((x),                                                          \
		int8_t: smarm_value_i64,                                       \
		int16_t: smarm_value_i64,                                      \
		int32_t: smarm_value_i64,                                      \
		int64_t: smarm_value_i64,                                      \
		long long: smarm_value_i64,                                    \
		uint8_t: smarm_value_u64,                                      \
		uint16_t: smarm_value_u64,                                     \
		uint32_t: smarm_value_u64,                                     \
		uint64_t: smarm_value_u64,                                     \
		unsigned long long: smarm_value_u64,                           \
		float: smarm_value_f32,                                        \
		double: smarm_value_f64,                                       \
		bool: smarm_value_bool,                                        \
		char *: smarm_value_str,                                       \
		const char *: smarm_value_str,                                 \
		smarm_pid_t: smarm_value_pid,                                  \
		smarm_value_t: smarm__value_same)(x)
#endif

/*
 * smarm_value_release() - free the memory a reply value owns (STR,
 * BYTES, TUPLE) and make it SMARM_T_VOID. Other values: only the
 * latter. NULL is a no-op. Never give it a value the caller made (its
 * p is the caller's).
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API void smarm_value_release(smarm_value_t *v);

/* ==== What a plugin exports ==== */

typedef struct smarm_gs_ctx smarm_gs_ctx_t;
typedef struct smarm_sm_ctx smarm_sm_ctx_t;
typedef struct smarm_reply smarm_reply_t;
typedef struct smarm_behaviour smarm_behaviour_t;

/* One entry of a handler table: an operation's name and its handler. */
typedef struct smarm_handler {
	const char *op;
	void (*fn)(void); /* the handler, cast to this type */
} smarm_handler_t;

/* smarm_gs_desc_t.handle_shutdown answers. Since: SMARM_0.5. */
enum {
	SMARM_GS_EXIT = 0,     /* end the server, SMARM_EXIT_SHUTDOWN */
	SMARM_GS_CONTINUE = 1, /* keep serving; end later with smarm_gs_stop */
};

/*
 * smarm_gs_desc_t - a gen_server behaviour. Every callback but create
 * may be NULL (its default in brackets); a create NULL refuses the
 * plugin at load (SMARM_EINVAL).
 *   struct_size  sizeof(smarm_gs_desc_t) as the plugin was built.
 *   name         the behaviour's name, unique in its plugin.
 *   protocol     its protocol text.
 *   handlers     one entry per operation of the protocol (order free;
 *                an operation with no entry refuses the plugin).
 *   create       build the state from the start arguments (the text an
 *                application file gives, or NULL): 0 and *state set, or
 *                a negative status that fails the start. Runs in the
 *                server actor.
 *   destroy      free the state, after terminate [nothing].
 *   init         set the server up (trap exits, timers, monitors, idle
 *                window: the smarm_gs_* calls): 0, or a negative status
 *                that fails the start (then terminate does not run,
 *                destroy does) [0].
 *   handle_continue  runs, before the next message, after a callback
 *                that called smarm_gs_continue(cx, tag) [nothing].
 *   handle_down  a Down of a monitor set with smarm_gs_monitor [drop].
 *   handle_exit  an exit signal other than a shutdown, while trapping
 *                [drop].
 *   handle_shutdown  a shutdown while trapping: SMARM_GS_EXIT (the
 *                server ends with SMARM_EXIT_SHUTDOWN, as its monitors
 *                and supervisor see it; terminate gets that how with
 *                may_block true) or SMARM_GS_CONTINUE [SMARM_GS_EXIT].
 *   handle_idle  the idle window (smarm_gs_set_idle) passed with no
 *                message; fires again after each further window [nothing].
 *   terminate    the server ends: how as its monitors will see it, and
 *                reason (a crash's; smarm_gs_stop's as given, which a
 *                monitor sees only with CRASHED; else 0); may_block
 *                false on the paths where it must not park (a kill, a
 *                crash, an untrapped shutdown): there every call that
 *                would park returns SMARM_EAGAIN at once instead
 *                (smarm.h, Conventions), while calls that need not
 *                wait work as anywhere [nothing].
 *   format_status  render the state as text for an observer (OTP's
 *                format_status/1): write at most len bytes, NUL
 *                included, into buf (len is SMARM_STATUS_TEXT_MAX) and
 *                return 0, or a negative status, which the text then
 *                names. It runs in the server between two callbacks,
 *                when smarm_server_get_status asks, and may read the
 *                state only [the text is empty]. Where OTP differs: a
 *                crash in it ends the server, as in any callback (OTP
 *                catches it and reports the status as crashed), and
 *                the crash and server reports do not use it yet (OTP
 *                formats the state of a server that ends abnormally).
 *                Since: SMARM_0.5 (it took the first reserved word: a
 *                plugin built earlier, with that word zero, has none).
 * Since: SMARM_0.5.
 */
typedef struct smarm_gs_desc {
	uint32_t struct_size;
	uint32_t reserved0;
	const char *name;
	const char *protocol;
	const smarm_handler_t *handlers;
	size_t n_handlers;
	int (*create)(const char *args, void **state);
	void (*destroy)(void *state);
	int (*init)(void *state, smarm_gs_ctx_t *cx);
	void (*handle_continue)(void *state, smarm_gs_ctx_t *cx, uint64_t tag);
	void (*handle_down)(void *state, smarm_gs_ctx_t *cx,
			    const smarm_signal_t *down);
	void (*handle_exit)(void *state, smarm_gs_ctx_t *cx,
			    const smarm_signal_t *sig);
	int (*handle_shutdown)(void *state, smarm_gs_ctx_t *cx);
	void (*handle_idle)(void *state, smarm_gs_ctx_t *cx);
	void (*terminate)(void *state, int how, intptr_t reason,
			  bool may_block);
	int (*format_status)(const void *state, char *buf, size_t len);
	void *reserved[7];
} smarm_gs_desc_t;

/* gen_statem event kinds (smarm_sm_row_t.kind). Since: SMARM_0.5. */
enum smarm_sm_kind {
	SMARM_SM_CAST = 1,	    /* a cast operation (op names it) */
	SMARM_SM_CALL = 2,	    /* a call operation (op names it) */
	SMARM_SM_INFO = 3,	    /* an info operation (op names it) */
	SMARM_SM_STATE_TIMEOUT = 4, /* the state timeout fired */
	SMARM_SM_EVENT_TIMEOUT = 5, /* the event timeout fired */
	SMARM_SM_TIMEOUT = 6,	    /* a generic timeout; op names it */
	SMARM_SM_SHUTDOWN = 7,	    /* a shutdown, while trapping */
	SMARM_SM_EXIT = 8,	    /* another exit signal, while trapping */
};

/* Row tails (smarm_sm_row_t.tail). Since: SMARM_0.5. */
enum smarm_sm_tail {
	SMARM_SM_TO = 1,	/* go to `target` (a stay if it is current) */
	SMARM_SM_STAY = 2,	/* stay: no enter, no timer reset */
	SMARM_SM_DYNAMIC = 3,	/* go to the state the action returns */
	SMARM_SM_POSTPONE = 4,	/* keep the event until a real transition
				   (CAST, CALL, INFO and timeout rows) */
	SMARM_SM_STOP = 5,	/* end normally after the action */
	SMARM_SM_UNHANDLED = 6, /* refuse: dropped; a call's caller gets
				   SMARM_EDOWN */
	SMARM_SM_REPEAT = 7,	/* stay, but run the state's enter again */
};

/* A row's state for "any state". */
#define SMARM_SM_ANY (-1)

/*
 * smarm_sm_row_t - one row of a gen_statem table: in `state` (or any),
 * an event of `kind` (and operation or timeout name `op`, NULL for any)
 * for which `guard` (NULL: always) returns true runs `action` (NULL:
 * nothing) and then `tail`. The first matching row in table order wins,
 * except that POSTPONE rows are tried first, in a pass that runs only
 * their guards. guard and action are called with the event's arguments
 * as a handler is (see Handlers):
 *     bool guard(const void *data, A1 a1, ...)
 *     int32_t action(void *data, smarm_sm_ctx_t *cx, int32_t state, A1 a1, ...)
 * where action's return value is the next state for SMARM_SM_DYNAMIC
 * (ignored otherwise; a state that does not exist ends the machine as
 * crashed). A POSTPONE row's action is never called. TIMEOUT,
 * STATE_TIMEOUT, EVENT_TIMEOUT and SHUTDOWN events have no arguments;
 * EXIT has one, const smarm_signal_t *.
 * A call is answered with smarm_sm_reply (now or later, from any state).
 * Since: SMARM_0.5.
 */
typedef struct smarm_sm_row {
	int32_t state;
	int32_t kind;
	const char *op;
	void (*guard)(void);
	void (*action)(void);
	int32_t tail;
	int32_t target;
} smarm_sm_row_t;

/*
 * smarm_sm_desc_t - a gen_statem behaviour.
 *   struct_size, name, protocol  as for smarm_gs_desc_t.
 *   n_states, state_names  the states 0..n_states-1 and their names.
 *   initial      the state it starts in.
 *   timeouts, n_timeouts   the generic timeout names rows may use.
 *   rows, n_rows the table. The loader checks it: every state must have
 *                a row for every cast and call operation and for every
 *                timeout kind it can arm (a STATE_TIMEOUT row if any
 *                row's action or enter may arm one: declared by
 *                has_state_timeout), and no row may be shadowed by
 *                earlier ones. Built in after the user's rows: INFO
 *                unhandled, EXIT dropped, SHUTDOWN stop. A machine that
 *                stops while it handles a SHUTDOWN event ends with
 *                SMARM_EXIT_SHUTDOWN (terminate gets that how).
 *   enter        per-state entry action (NULL or n_states entries, each
 *                nullable), run at start and after each real transition:
 *                void enter(void *data, smarm_sm_ctx_t *cx, int32_t state,
 *                int32_t prev).
 *   create, destroy, init, terminate  as for smarm_gs_desc_t, but all
 *                four may be NULL: no create leaves the data NULL (init
 *                gets the smarm_sm_ctx_t; trapping is set there; terminate's
 *                may_block is true only when the machine stopped itself:
 *                a STOP tail, smarm_sm_stop, the built-in SHUTDOWN row).
 *   format_status  as for smarm_gs_desc_t, given the data and the state
 *                the machine is in [the text is empty].
 * Since: SMARM_0.5.
 */
typedef struct smarm_sm_desc {
	uint32_t struct_size;
	uint32_t n_states;
	const char *name;
	const char *protocol;
	const char *const *state_names;
	int32_t initial;
	uint32_t flags; /* SMARM_SM_F_* */
	const char *const *timeouts;
	size_t n_timeouts;
	const smarm_sm_row_t *rows;
	size_t n_rows;
	void (*const *enter)(void *data, smarm_sm_ctx_t *cx, int32_t state,
			     int32_t prev);
	int (*create)(const char *args, void **data);
	void (*destroy)(void *data);
	int (*init)(void *data, smarm_sm_ctx_t *cx);
	void (*terminate)(void *data, int how, intptr_t reason, bool may_block);
	int (*format_status)(const void *data, int32_t state, char *buf,
			     size_t len);
	void *reserved[7];
} smarm_sm_desc_t;

/* smarm_sm_desc_t.flags. */
enum {
	SMARM_SM_F_STATE_TIMEOUT = 1, /* actions or enters arm state timeouts */
	SMARM_SM_F_EVENT_TIMEOUT = 2, /* actions or enters arm event timeouts */
};

/*
 * smarm_plugin_desc_t - what the entry symbol returns.
 *   abi_major, abi_minor  SMARM_PLUGIN_ABI_MAJOR/MINOR as built.
 *   struct_size  sizeof(smarm_plugin_desc_t) as built.
 *   name         the plugin's name (for messages).
 *   servers, n_servers    its gen_server behaviours.
 *   machines, n_machines  its gen_statem behaviours.
 * Behaviour names are unique across both lists.
 * Since: SMARM_0.5.
 */
typedef struct smarm_plugin_desc {
	uint16_t abi_major;
	uint16_t abi_minor;
	uint32_t struct_size;
	const char *name;
	const smarm_gs_desc_t *const *servers;
	size_t n_servers;
	const smarm_sm_desc_t *const *machines;
	size_t n_machines;
	void *reserved[8];
} smarm_plugin_desc_t;

/*
 * The entry symbol's type. host_major/host_minor are the runtime's plugin
 * ABI; a plugin may return NULL to refuse a host it cannot run on.
 */
typedef const smarm_plugin_desc_t *(*smarm_plugin_entry_fn)(
	uint32_t host_major, uint32_t host_minor);

/*
 * SMARM_PLUGIN_DEFINE() - define a plugin's descriptor and its entry
 * symbol in one line, at file scope, once per plugin:
 *
 *     static const smarm_gs_desc_t *const servers[] = { &counter };
 *     SMARM_PLUGIN_DEFINE_SERVERS("counter", servers);
 *
 * SMARM_PLUGIN_DEFINE(name, servers, machines) for a plugin of both
 * kinds, SMARM_PLUGIN_DEFINE_SERVERS(name, servers) for gen_servers
 * only, SMARM_PLUGIN_DEFINE_MACHINES(name, machines) for gen_statems
 * only.
 *   name      the plugin's name: a string constant.
 *   servers   an array (not a pointer) of const smarm_gs_desc_t *const.
 *   machines  an array of const smarm_sm_desc_t *const.
 * Expands to a static const smarm_plugin_desc_t filled with this
 * header's SMARM_PLUGIN_ABI_MAJOR/MINOR, sizeof(smarm_plugin_desc_t),
 * name, the arrays and their element counts (NULL and 0 for the kind
 * a one-kind form omits), then to a prototype and the definition of
 * smarm_plugin_entry (SMARM_PLUGIN_ENTRY_NAME), SMARM_API visibility
 * and C linkage in C++ too, which returns the descriptor when
 * host_major is SMARM_PLUGIN_ABI_MAJOR and NULL for any other major.
 * It accepts every host minor: the host refuses a plugin of a newer
 * minor itself, with SMARM_EPLUGINABI, and reads an older one's
 * descriptor up to its struct_size. Last comes a static assertion
 * (which takes the ';'): a pointer given for an array fails it (GNU C
 * and C++). The static descriptor is named smarm__plugin_desc. A macro
 * only: it adds no symbol to libsmarm. A plugin that refuses hosts on
 * other grounds writes its entry by hand (smarm_plugin_entry_fn).
 * Since: SMARM_0.5.
 */
#define SMARM_PLUGIN_DEFINE(name, servers, machines)                           \
	SMARM__PLUGIN_DEFINE(name, servers, SMARM__COUNT(servers), machines,   \
			     SMARM__COUNT(machines),                           \
			     SMARM__IS_ARRAY(servers) &&                       \
				     SMARM__IS_ARRAY(machines))
#define SMARM_PLUGIN_DEFINE_SERVERS(name, servers)                             \
	SMARM__PLUGIN_DEFINE(name, servers, SMARM__COUNT(servers), NULL, 0,    \
			     SMARM__IS_ARRAY(servers))
#define SMARM_PLUGIN_DEFINE_MACHINES(name, machines)                           \
	SMARM__PLUGIN_DEFINE(name, NULL, 0, machines, SMARM__COUNT(machines),  \
			     SMARM__IS_ARRAY(machines))

/* What SMARM_PLUGIN_DEFINE is made of; not for direct use. */
#define SMARM__COUNT(a) (sizeof(a) / sizeof((a)[0]))
#ifdef __cplusplus
#define SMARM__PLUGIN_EXTERN extern "C" SMARM_API
#define SMARM__STATIC_ASSERT static_assert
#define SMARM__IS_ARRAY(a)                                                     \
	std::is_array<std::remove_reference<decltype(a)>::type>::value
#else
#define SMARM__PLUGIN_EXTERN SMARM_API
#define SMARM__STATIC_ASSERT _Static_assert
#if defined(__GNUC__)
#define SMARM__IS_ARRAY(a)                                                     \
	(!__builtin_types_compatible_p(__typeof__(a), __typeof__(&(a)[0])))
#else
#define SMARM__IS_ARRAY(a) 1
#endif
#endif
#define SMARM__PLUGIN_DEFINE(name, servers, n_servers, machines, n_machines,   \
			     arrays)                                           \
	static const smarm_plugin_desc_t smarm__plugin_desc = {                \
		SMARM_PLUGIN_ABI_MAJOR,                                        \
		SMARM_PLUGIN_ABI_MINOR,                                        \
		sizeof(smarm_plugin_desc_t),                                   \
		(name),                                                        \
		(servers),                                                     \
		(n_servers),                                                   \
		(machines),                                                    \
		(n_machines),                                                  \
		{ NULL },                                                      \
	};                                                                     \
	SMARM__PLUGIN_EXTERN const smarm_plugin_desc_t *smarm_plugin_entry(    \
		uint32_t host_major, uint32_t host_minor);                     \
	SMARM__PLUGIN_EXTERN const smarm_plugin_desc_t *smarm_plugin_entry(    \
		uint32_t host_major, uint32_t host_minor)                      \
	{                                                                      \
		(void)host_minor;                                              \
		return host_major == SMARM_PLUGIN_ABI_MAJOR                    \
			       ? &smarm__plugin_desc                           \
			       : NULL;                                         \
	}                                                                      \
	SMARM__STATIC_ASSERT(arrays, "SMARM_PLUGIN_DEFINE: give arrays, "      \
				     "not pointers")

/* ==== Inside a gen_server: the context calls ==== */

/*
 * The smarm_gs_* calls take the cx the server's callbacks receive and
 * are valid only in that server's callbacks (cx may be kept in the state
 * for later callbacks of the same server). Errors common to all:
 * SMARM_EINVAL cx NULL or not this actor's server; SMARM_ENOTACTOR.
 */

/* smarm_gs_trap_exit() - trap exits for the server's life (in init only;
 * SMARM_ESTATE later). Shutdowns then reach handle_shutdown, other exit
 * signals handle_exit. Since: SMARM_0.5. */
SMARM_API int smarm_gs_trap_exit(smarm_gs_ctx_t *cx);

/*
 * smarm_gs_stop() - end the server after the current callback, with how
 * (SMARM_EXIT_NORMAL, SMARM_EXIT_SHUTDOWN or SMARM_EXIT_CRASHED) and
 * reason (OTP's {stop, Reason, State}); terminate gets both (may_block
 * true). The server's actor then ends with that how, as its monitors,
 * links and supervisor see it: NORMAL as smarm_actor_exit, SHUTDOWN as
 * smarm_actor_shutdown (not abnormal: a transient child is not
 * restarted; links that do not trap are shut down too), CRASHED as
 * smarm_actor_crash(reason) (restarted). A CRASHED and a SHUTDOWN end
 * carry reason beyond terminate, to Downs, links and joiners (OTP's
 * {stop, {shutdown, X}} keeps X); a NORMAL end's reason is 0 there.
 * A crash inside terminate becomes the end instead (SMARM_EXIT_CRASHED
 * with its reason, as in OTP; destroy still runs). Calls still queued
 * get SMARM_EDOWN. The first stop of a callback wins. Returns: 0.
 * Errors: SMARM_EINVAL how is another value. Since: SMARM_0.5.
 */
SMARM_API int smarm_gs_stop(smarm_gs_ctx_t *cx, int how, intptr_t reason);

/*
 * smarm_gs_reply_error() - in a call handler: answer the call with an
 * error instead of the handler's return value (OTP's {reply, {error,
 * Reason}, State} as a status of its own): the caller's call returns
 * SMARM_EREPLY with its reply an SMARM_T_I64 holding reason, which no
 * transport failure (SMARM_EDOWN, SMARM_ETIMEDOUT, SMARM_ENOPROC) is.
 * The handler still returns (its value is discarded). Returns: 0.
 * Errors: SMARM_ESTATE not in a call handler, or its reply was handed
 * to a token (smarm_gs_reply_later). Since: SMARM_0.5.
 */
SMARM_API int smarm_gs_reply_error(smarm_gs_ctx_t *cx, intptr_t reason);

/* smarm_gs_continue() - run handle_continue(tag) after the current
 * callback, before the next message. Errors: SMARM_ENOMEM (nothing
 * changed). Since: SMARM_0.5. */
SMARM_API int smarm_gs_continue(smarm_gs_ctx_t *cx, uint64_t tag);

/* smarm_gs_set_idle() - set the idle window (0: none). Errors:
 * SMARM_ENOMEM (a window other than 0; nothing changed). Since:
 * SMARM_0.5. */
SMARM_API int smarm_gs_set_idle(smarm_gs_ctx_t *cx, uint64_t ns);

/*
 * smarm_gs_hibernate() - hibernate once the current callback returns
 * (OTP's {reply, R, S, hibernate}): at its next wait for a message the
 * server gives its stack back to the node's pool (smarm_hibernate) and
 * waits without one, so an idle server costs its state and mailbox
 * only. The next message (a call, cast, info, timer, Down, exit signal
 * or system message) resumes it on a fresh stack: its state is intact
 * and it serves as before; a stop or kill ends it as usual (terminate
 * runs). A message already queued is served at once, and the request
 * stands until the server has waited once. Costs a stack acquire at the
 * wake: for servers that are idle long. Returns: 0. Errors:
 * SMARM_EINVAL cx NULL; SMARM_ESTATE cx not the caller's own server.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_gs_hibernate(smarm_gs_ctx_t *cx);

/*
 * smarm_gs_set_hibernate_after() - hibernate whenever the server has
 * waited ns with no message (OTP's hibernate_after start option); 0:
 * at every wait (a server that is always hibernated when idle);
 * SMARM_NO_TIMEOUT: never (the default). With an idle window
 * (smarm_gs_set_idle) as well, the window counts on while hibernated
 * and handle_idle runs when it passes. Returns: 0. Errors: as
 * smarm_gs_hibernate; SMARM_ENOMEM (an ns other than 0 and
 * SMARM_NO_TIMEOUT; nothing changed). Since: SMARM_0.5.
 */
SMARM_API int smarm_gs_set_hibernate_after(smarm_gs_ctx_t *cx, uint64_t ns);

/*
 * The bound of a server's (or machine's) queue of requests until it
 * sets its own: SMARM_QUEUE_LIMIT_DEFAULT messages. Each queued message
 * takes 104 bytes of the queue (64-bit Linux), plus one block for
 * arguments over 64 bytes packed (strings and bytes included).
 */
#define SMARM_QUEUE_LIMIT_DEFAULT 1048576u

/*
 * smarm_gs_set_queue_limit() - bound the server's queue of requests:
 * calls, casts, infos and requests (smarm_server_send_request) that
 * find limit of them queued fail at once with SMARM_EFULL and are not
 * queued (the sender keeps its arguments; nothing is lost silently); 0
 * lifts the bound. OTP queues without bound; a C process that lets one
 * server's queue grow without bound runs out of memory instead, so the
 * bound is on by default (SMARM_QUEUE_LIMIT_DEFAULT). A producer that
 * must not fail backs off and retries (smarm_actor_yield, a sleep, or
 * a call now and then to pace itself on the server's replies). Timer
 * fires, exit signals, Downs and system messages (smarm_server_stop)
 * are never refused. Returns: 0. Since: SMARM_0.5.
 */
SMARM_API int smarm_gs_set_queue_limit(smarm_gs_ctx_t *cx, uint32_t limit);

/*
 * smarm_gs_monitor() - monitor pid; its Down goes to handle_down, ahead
 * of control messages, infos and calls. *ref (may be NULL) set.
 * Errors: as smarm_monitor(); SMARM_ENOMEM when the server's monitor
 * count cannot be kept (its first use of the cold block): nothing is
 * monitored. Since: SMARM_0.5.
 */
SMARM_API int smarm_gs_monitor(smarm_gs_ctx_t *cx, smarm_pid_t pid,
			       uint64_t *ref);

/*
 * smarm_gs_send_after() - after delay_ns, deliver the info operation op
 * with args to this server (as smarm_server_info would); with period_ns
 * non-zero, again every period_ns after that until cancelled. *id (may
 * be NULL) names the timer. Timers are cancelled when the server ends,
 * before terminate. Errors: SMARM_ENOOP no op of that name;
 * SMARM_EOPKIND op is a call or a cast;
 * SMARM_EARGS; SMARM_ETOOBIG; SMARM_ENOMEM. Since: SMARM_0.5.
 */
SMARM_API int smarm_gs_send_after(smarm_gs_ctx_t *cx, uint64_t delay_ns,
				  uint64_t period_ns, const char *op,
				  const smarm_value_t *args, size_t nargs,
				  uint64_t *id);

/*
 * smarm_gs_cancel_timer() - cancel a timer of this server: 0 it will
 * not fire again (a periodic one's tick already queued is dropped too);
 * SMARM_ENOENT it fired (one-shot), was cancelled, or is unknown.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_gs_cancel_timer(smarm_gs_ctx_t *cx, uint64_t id);

/*
 * smarm_gs_reply_later() - in a call handler: answer this call later.
 * *tok receives the reply token; the handler's return value is then
 * ignored. The token goes to whoever will answer (another actor too):
 * smarm_reply() or smarm_reply_drop(). A server that ends answers the
 * tokens it still holds with SMARM_EDOWN. Errors: SMARM_ESTATE not in a
 * call handler, or a token was taken for this call. Since: SMARM_0.5.
 */
SMARM_API int smarm_gs_reply_later(smarm_gs_ctx_t *cx, smarm_reply_t **tok);

/*
 * smarm_gs_behaviour() - a behaviour of the server's own plugin, for
 * opening client handles from inside it (smarm_server_open,
 * smarm_server_open_name): name NULL gives the server's own behaviour
 * (a handle to itself, or to another server of it), else the behaviour
 * of that name in the same plugin (a gen_server or a gen_statem).
 * *out stays valid while the server lives (and, like any behaviour,
 * while a handle of it is open). A handle the server keeps in its state
 * is freed in terminate or destroy.
 * Returns: 0, *out set. Errors: SMARM_EINVAL out NULL;
 * SMARM_ENOBEHAVIOUR no behaviour of that name in the plugin (as
 * smarm_plugin_behaviour). Since: SMARM_0.5.
 */
SMARM_API int smarm_gs_behaviour(smarm_gs_ctx_t *cx, const char *name,
				 const smarm_behaviour_t **out);

/*
 * smarm_reply() - answer a deferred call with v (of the operation's
 * reply type; NULL for a call without one) and free the token. A caller
 * that timed out or is gone is not an error: the reply is dropped.
 * Errors: SMARM_EINVAL tok NULL or not a live token; SMARM_EARGS v does
 * not match the reply type (the token stays valid). Thread-safety: any
 * thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_reply(smarm_reply_t *tok, const smarm_value_t *v);

/* smarm_reply_drop() - free a token unanswered: the caller gets
 * SMARM_EDOWN. Thread-safety: any thread. Since: SMARM_0.5. */
SMARM_API int smarm_reply_drop(smarm_reply_t *tok);

/* ==== Inside a gen_statem ==== */

/*
 * The smarm_sm_* calls take the cx a machine's callbacks receive and are
 * valid only while one of that machine's init, enter or action
 * callbacks runs (cx may be kept in the data for later callbacks).
 * Errors common to all: SMARM_EINVAL cx NULL, or not a live machine of
 * the calling actor; SMARM_ENOTACTOR; SMARM_ESTATE no callback of the
 * machine runs (between events, in create, destroy or terminate).
 * Thread-safety: the machine's actor only.
 */

/* smarm_sm_set_queue_limit() - bound the machine's queue of requests,
 * as smarm_gs_set_queue_limit() a server's. Returns: 0. Since:
 * SMARM_0.5. */
SMARM_API int smarm_sm_set_queue_limit(smarm_sm_ctx_t *cx, uint32_t limit);

/* smarm_sm_trap_exit() - trap exits for the machine's life: shutdowns
 * then reach SHUTDOWN rows, other exit signals EXIT rows. Returns: 0.
 * Errors: SMARM_ESTATE not in init. Since: SMARM_0.5. */
SMARM_API int smarm_sm_trap_exit(smarm_sm_ctx_t *cx);

/*
 * smarm_sm_state_timeout() - arm the state timeout (replacing one armed):
 * a STATE_TIMEOUT event after ns unless a real transition comes first;
 * SMARM_NO_TIMEOUT cancels it. Returns: 0. Errors: SMARM_ESTATE the
 * descriptor's flags lack SMARM_SM_F_STATE_TIMEOUT; SMARM_ENOMEM.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_sm_state_timeout(smarm_sm_ctx_t *cx, uint64_t ns);

/*
 * smarm_sm_event_timeout() - arm the event timeout (replacing one armed):
 * an EVENT_TIMEOUT event after ns unless any event comes first (one
 * already waiting when it fires cancels it too); SMARM_NO_TIMEOUT
 * cancels it. Returns: 0. Errors: SMARM_ESTATE the flags lack
 * SMARM_SM_F_EVENT_TIMEOUT; SMARM_ENOMEM. Since: SMARM_0.5.
 */
SMARM_API int smarm_sm_event_timeout(smarm_sm_ctx_t *cx, uint64_t ns);

/*
 * smarm_sm_timeout() - arm (re-arm) the generic timeout `name`: a
 * TIMEOUT event of that name after ns; it survives transitions;
 * SMARM_NO_TIMEOUT cancels it. Returns: 0. Errors: SMARM_EINVAL name
 * NULL; SMARM_ENOENT name is none of the descriptor's timeouts;
 * SMARM_ENOMEM. Since: SMARM_0.5.
 */
SMARM_API int smarm_sm_timeout(smarm_sm_ctx_t *cx, const char *name,
			       uint64_t ns);

/* smarm_sm_cancel_timeout() - cancel the generic timeout name. Returns:
 * 0. Errors: SMARM_EINVAL name NULL; SMARM_ENOENT not declared, or not
 * armed. Since: SMARM_0.5. */
SMARM_API int smarm_sm_cancel_timeout(smarm_sm_ctx_t *cx, const char *name);

/*
 * A timeout of 0 (state, event or generic) starts no timer, as in OTP:
 * its event is queued when the callback that armed it is done, after
 * the events the machine has queued (next events, released postponed
 * ones) and before any message not yet taken from the mailbox, so a
 * message already waiting cannot overtake it. An event timeout of 0
 * with events queued ahead of it is cancelled by them instead. Arming
 * again or cancelling before it runs replaces or removes it. (Before
 * 0.5.0 a 0 went through a timer, and a waiting message won.)
 */

/*
 * smarm_sm_next_event() - insert the cast or info op with args as an
 * event to handle after the current one, before any queued one (and
 * before postponed events a transition releases); several run in the
 * order inserted. Returns: 0. Errors: SMARM_ESTATE not in init or an
 * action (an enter may not insert events); SMARM_EINVAL op NULL, args
 * NULL with nargs > 0; SMARM_ENOOP no cast or info op of that name;
 * SMARM_EARGS; SMARM_ETOOBIG; SMARM_ENOMEM. Since: SMARM_0.5.
 */
SMARM_API int smarm_sm_next_event(smarm_sm_ctx_t *cx, const char *op,
				  const smarm_value_t *args, size_t nargs);

/*
 * smarm_sm_reply() - answer the call the running action handles with v
 * (as smarm_reply). A call the action neither answers nor takes a token
 * for is answered when the action returns: with no value if its op has
 * no reply type, else SMARM_EDOWN. smarm_sm_reply_later() - take the
 * call's reply token instead (as smarm_gs_reply_later): answer it later,
 * from any state, with smarm_reply or smarm_reply_drop. Returns: 0.
 * Errors: SMARM_ESTATE no call is being handled, or it was answered or
 * its token taken; SMARM_EINVAL tok NULL; SMARM_EARGS v does not match
 * the reply type. Since: SMARM_0.5.
 */
SMARM_API int smarm_sm_reply(smarm_sm_ctx_t *cx, const smarm_value_t *v);
SMARM_API int smarm_sm_reply_later(smarm_sm_ctx_t *cx, smarm_reply_t **tok);

/* smarm_sm_reply_error() - answer the call the running action handles
 * with an error, as smarm_gs_reply_error: the caller gets SMARM_EREPLY
 * with reason in its reply. Returns: 0. Errors: SMARM_ESTATE no call is
 * being handled, or it was answered or its token taken.
 * Since: SMARM_0.5. */
SMARM_API int smarm_sm_reply_error(smarm_sm_ctx_t *cx, intptr_t reason);

/* smarm_sm_stop() - end normally after this event (SMARM_EXIT_SHUTDOWN
 * if the event is a SHUTDOWN): events still queued
 * or postponed are dropped (calls among them get SMARM_EDOWN). Returns:
 * 0. Since: SMARM_0.5. */
SMARM_API int smarm_sm_stop(smarm_sm_ctx_t *cx);

/*
 * smarm_sm_stop_with() - OTP's {stop, Reason}: end after this event as
 * smarm_sm_stop does, with how (SMARM_EXIT_NORMAL, SMARM_EXIT_SHUTDOWN
 * or SMARM_EXIT_CRASHED) and reason, which terminate gets (may_block
 * true) and the machine's actor ends with (monitors, links and a
 * supervisor see them, as after smarm_gs_stop; SHUTDOWN keeps reason:
 * {shutdown, X}). The first stop of a callback wins. Returns: 0.
 * Errors: SMARM_EINVAL how is another value. Since: SMARM_0.5.
 */
SMARM_API int smarm_sm_stop_with(smarm_sm_ctx_t *cx, int how, intptr_t reason);

/*
 * smarm_sm_repeat_state() - in a state's enter: OTP's repeat_state from
 * a state enter call: once this enter returns, the state's enter runs
 * again, with the same state and previous state (unless the machine
 * stops meanwhile). Each run may ask again. Returns: 0. Errors:
 * SMARM_ESTATE not in an enter (an action repeats its state by its
 * return, SMARM_SM_REPEAT). Since: SMARM_0.5.
 */
SMARM_API int smarm_sm_repeat_state(smarm_sm_ctx_t *cx);

/*
 * smarm_sm_hibernate() - hibernate once this callback returns (OTP's
 * hibernate transition action), as smarm_gs_hibernate() a server: at
 * its next wait for an event the machine gives its stack back to the
 * node's pool and waits without one. The next event of any kind (a
 * call, cast, info, a state, event or generic timeout, an exit signal,
 * a system message) resumes it on a fresh stack with its data, state,
 * postponed events and armed timeouts intact; a stop or kill ends it as
 * usual (terminate runs). An event already queued (an inserted next
 * event, a released postponed one, a message) is handled first, and the
 * request stands until the machine has waited once. Returns: 0.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_sm_hibernate(smarm_sm_ctx_t *cx);

/*
 * smarm_sm_set_hibernate_after() - hibernate whenever the machine has
 * waited ns with no event (OTP's hibernate_after start option), as
 * smarm_gs_set_hibernate_after(): 0 at every wait; SMARM_NO_TIMEOUT
 * never (the default). It holds for the machine's life or until set
 * again; usually called in init. An armed timeout firing is an event
 * like any other. Returns: 0. Errors: SMARM_ENOMEM (an ns other than
 * 0 and SMARM_NO_TIMEOUT; nothing changed). Since: SMARM_0.5.
 */
SMARM_API int smarm_sm_set_hibernate_after(smarm_sm_ctx_t *cx, uint64_t ns);

/*
 * smarm_sm_behaviour() - a behaviour of the machine's own plugin, as
 * smarm_gs_behaviour: name NULL the machine's own behaviour, else the
 * one of that name in the same plugin; *out valid while the machine
 * lives. Returns: 0, *out set. Errors: SMARM_EINVAL out NULL;
 * SMARM_ENOBEHAVIOUR no behaviour of that name in the plugin.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_sm_behaviour(smarm_sm_ctx_t *cx, const char *name,
				 const smarm_behaviour_t **out);

/* ==== The host side ==== */

typedef struct smarm_plugin smarm_plugin_t;
typedef struct smarm_server smarm_server_t;

/*
 * smarm_plugin_open() - load the plugin at path and check every
 * behaviour it provides. Opening a plugin already open returns the same
 * plugin with one more reference. path must name a regular file by a
 * path holding a '/' (such as "./counter.so"): a bare name ("counter.so",
 * which dlopen(3) would look up in the library path) and "" (which it
 * would take for the main program) are refused, and so is anything that
 * is not a regular file (a FIFO or a device would block dlopen for ever),
 * before dlopen sees it. A plugin is code: unless the caller allows it
 * (smarm_plugin_open_flags, SMARM_PLUGIN_ALLOW_INSECURE), the file must
 * be owned by the calling user (euid) or root and writable by no one
 * else (no world write bit; no group write bit unless the group is
 * root's or the caller's own private group, its egid with no other
 * member), and so must every directory on
 * its real path (symbolic links resolved), except that a directory
 * with the sticky bit set (/tmp) may be writable by all: others cannot
 * rename or remove a file they do not own there. msg (may be NULL)
 * receives, on failure, a message naming the cause (the path, the
 * behaviour, the protocol column), cut to msglen bytes with its NUL.
 * Returns: 0, *out set. Errors: SMARM_EINVAL path or out NULL, path ""
 * or a bare name, or a descriptor field is unusable (a behaviour NULL,
 * its name NULL, empty or longer than SMARM_OP_NAME_MAX, its protocol
 * NULL, a list or handler table NULL with a count, a gen_server's create
 * NULL); SMARM_EPLUGINOPEN no such file, not a regular file, or not a
 * loadable shared object;
 * SMARM_ENOENTRY no entry symbol, or it returned NULL; SMARM_EPLUGINABI
 * an ABI major this runtime does not serve (or a newer minor);
 * SMARM_ESTRUCTSIZE a descriptor smaller than its ABI requires;
 * SMARM_EPROTOCOL a protocol does not parse; SMARM_ENOHANDLER an
 * operation has no handler (or a handler names no operation);
 * SMARM_EDUPNAME two behaviours of one name; SMARM_EPROTOCOL also a
 * malformed gen_statem descriptor or row (a state, kind, tail or target
 * out of range, POSTPONE on a row that is no CAST, CALL or INFO row,
 * DYNAMIC without an action, an op naming no operation of the row's kind
 * or no declared timeout); SMARM_ENOTEXHAUSTIVE a gen_statem table
 * misses a row; SMARM_EUNREACHABLE a row is shadowed;
 * SMARM_EPLUGINPERM the file or a directory on its path fails the
 * trust checks above (the message names which and why);
 * SMARM_EPLUGINLINK the plugin would bind to a second copy of the
 * runtime (it links libsmarm.so while the host has the runtime linked
 * in statically: build it without -lsmarm, link the host -rdynamic);
 * SMARM_ENOMEM. Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_plugin_open(const char *path, smarm_plugin_t **out,
				char *msg, size_t msglen);

/* Flags of smarm_plugin_open_flags and smarm_plugin_check_path.
 * Since: SMARM_0.5. */
enum {
	/* Skip the trust checks (owners and write permissions): for a
	 * host whose user said so, as with smarm-run --allow-insecure. */
	SMARM_PLUGIN_ALLOW_INSECURE = 1,
};

/*
 * smarm_plugin_open_flags() - smarm_plugin_open with flags (0 or
 * SMARM_PLUGIN_ALLOW_INSECURE); smarm_plugin_open(p, o, m, l) is
 * smarm_plugin_open_flags(p, 0, o, m, l).
 * Returns and errors: as smarm_plugin_open's; SMARM_EINVAL also an
 * unknown flag. Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_plugin_open_flags(const char *path, unsigned flags,
				      smarm_plugin_t **out, char *msg,
				      size_t msglen);

/*
 * smarm_plugin_check_path() - the file checks smarm_plugin_open makes
 * before it loads path, for any file a host is about to treat as code
 * (smarm-run's application files): path names a regular file and,
 * unless flags has SMARM_PLUGIN_ALLOW_INSECURE, the trust checks hold
 * (see smarm_plugin_open). A bare name is allowed here. msg as for
 * smarm_plugin_open.
 * Returns: 0. Errors: SMARM_EINVAL path NULL or "", or an unknown flag;
 * SMARM_EPLUGINOPEN no such file, or not a regular file;
 * SMARM_EPLUGINPERM the file or a directory above it fails the trust
 * checks. Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_plugin_check_path(const char *path, unsigned flags,
				      char *msg, size_t msglen);

/*
 * smarm_plugin_check_fd() - smarm_plugin_check_path's checks on a file
 * the host has opened, for a host that then reads that file (so the file
 * checked is the file read, whatever happens to path meanwhile): fd
 * must be a regular file and, unless flags has
 * SMARM_PLUGIN_ALLOW_INSECURE, its owner and mode (read from fd) pass
 * the trust checks, path (the name fd was opened by; messages use it)
 * still names the same file, and the directories on its real path pass
 * theirs. Open with O_NONBLOCK, so that opening a FIFO cannot block.
 * msg as for smarm_plugin_open. fd stays the caller's.
 * Returns: 0. Errors: SMARM_EINVAL fd negative, path NULL or "", or an
 * unknown flag; SMARM_EBADF fd is not open; SMARM_EPLUGINOPEN not a
 * regular file, or path no longer names it (or no longer exists);
 * SMARM_EPLUGINPERM the file or a directory above it fails the trust
 * checks; SMARM_ESYSTEM fstat failed otherwise. Thread-safety: any
 * thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_plugin_check_fd(int fd, const char *path, unsigned flags,
				    char *msg, size_t msglen);

/*
 * smarm_plugin_close() - drop a reference from smarm_plugin_open. The
 * object is unloaded once nothing can reach its code (see Lifetime);
 * behaviours of it stay usable by what still holds them. Errors:
 * SMARM_EINVAL pl NULL or not an open plugin. Thread-safety: any
 * thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_plugin_close(smarm_plugin_t *pl);

/*
 * smarm_plugin_behaviour() - the behaviour name of plugin pl. It is
 * valid while pl is open (and while a server or handle of it lives).
 * Errors: SMARM_EINVAL an argument NULL; SMARM_ENOBEHAVIOUR no such
 * behaviour. Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_plugin_behaviour(smarm_plugin_t *pl, const char *name,
				     const smarm_behaviour_t **out);

/*
 * smarm_plugin_faults() - how many faults of plugin pl's own code were
 * contained (SMARM_OPT_CONTAIN_FAULTS) in this process: its taint. A
 * plugin with faults may have left its shared state corrupt (see
 * "Faults" in docs/embedding.md); a host may stop trusting it past some
 * number. The count is the object's: kept across a close and a reload of
 * the same file at the same address.
 * Returns: 0, *out set. Errors: SMARM_EINVAL an argument NULL or pl not
 * an open plugin. Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_plugin_faults(smarm_plugin_t *pl, uint64_t *out);

/*
 * smarm_server_start() - spawn a server of behaviour b with start
 * arguments args (may be NULL) and wait until its init returned. b may
 * be a gen_statem behaviour: its server is a machine, whose initial
 * enter runs after the start returned, and every smarm_server_* call
 * below (and smarm_sup_spec_add_server) serves it as it does a
 * gen_server. With
 * name not NULL the server registers it before init (so a taken name
 * fails before anything ran). *out (may be NULL) receives a handle to it.
 * A failed start returns once the server actor is gone (its destroy
 * done, its name given back), as OTP's proc_lib start does.
 * Returns: 0. Errors: SMARM_EINVAL b NULL; SMARM_EEXIST the name is
 * taken; the status create or init returned; SMARM_ENOTACTOR;
 * SMARM_EATCAPACITY; SMARM_ENOMEM. Safe point.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_server_start(const smarm_behaviour_t *b, const char *args,
				 const char *name, smarm_server_t **out);

/*
 * smarm_server_start_ex() - smarm_server_start() with OTP's start
 * option {timeout, T} and a readable outcome (gen_server:start/4's
 * {error, Reason}). timeout_ns bounds create and init together
 * (SMARM_NO_TIMEOUT: none); why (may be NULL) receives, on a failure,
 * what it was: the status create or init returned, the value of a
 * return outside their contract (a positive int), or the reason of a
 * crash in them.
 * Returns: 0. Errors: as smarm_server_start(), and SMARM_ETIMEDOUT init
 * did not finish in time: the half-started server is killed (its
 * terminate does not run; destroy does); SMARM_EBADRETURN create or
 * init returned a positive value (*why: the value; smarm_server_start
 * reports it so too); SMARM_EDOWN the server crashed or was stopped
 * before it started (*why: the crash's reason; for a fault contained in
 * create or init, SMARM_OPT_CONTAIN_FAULTS, the signal).
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_server_start_ex(const smarm_behaviour_t *b,
				    const char *args, const char *name,
				    uint64_t timeout_ns, smarm_server_t **out,
				    intptr_t *why);

/*
 * smarm_server_run() - run a server of b on the calling actor (the
 * supervised shape). Registers name (if not NULL), creates the state,
 * runs init, reports readiness to a supervisor that waits for it
 * (smarm_sup_ready; smarm_sup_start_failed with init's status), then
 * serves until the server ends, and the caller ends with it. Returns
 * only on misuse. Errors: SMARM_EINVAL b NULL; SMARM_ENOTACTOR.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_server_run(const smarm_behaviour_t *b, const char *args,
			       const char *name);

/*
 * smarm_sup_spec_add_server() - append to spec a child that runs a server
 * of b (smarm_server_run with args and name, both copied and kept for
 * the life of the process), reporting readiness (waited for at most
 * ready_ns). b must stay valid (its plugin open) while a supervisor of
 * spec may start the child. restart and shutdown_ns as
 * smarm_sup_spec_add_child. Errors: those of smarm_sup_spec_add_child;
 * SMARM_EINVAL b NULL. Thread-safety: as smarm_sup_spec_add_child.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_sup_spec_add_server(smarm_sup_spec_t *spec, const char *id,
					const smarm_behaviour_t *b,
					const char *args, const char *name,
					int restart, uint64_t shutdown_ns,
					uint64_t ready_ns);

/*
 * smarm_server_open() / smarm_server_open_name() - a client handle to
 * the server of b that is pid, or that holds name (resolved again at
 * each call, so it follows a restarted server). node is the node the
 * server lives in: NULL means the caller's (actor context); from a
 * plain thread it must be given. One handle is used by one caller at a
 * time; take one per caller. Errors: SMARM_EINVAL an argument NULL, name
 * empty or too long, node NULL outside an actor; SMARM_ENOMEM.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_server_open(smarm_node_t *node, const smarm_behaviour_t *b,
				smarm_pid_t pid, smarm_server_t **out);
SMARM_API int smarm_server_open_name(smarm_node_t *node,
				     const smarm_behaviour_t *b,
				     const char *name, smarm_server_t **out);

/* smarm_server_free() - free a handle; the server is not affected. NULL
 * is a no-op. Since: SMARM_0.5. */
SMARM_API void smarm_server_free(smarm_server_t *s);

/* smarm_server_pid() - the server's pid now (by name: resolved now).
 * Errors: SMARM_EINVAL; SMARM_ENONAME; SMARM_ENOPROC. Since: SMARM_0.5. */
SMARM_API int smarm_server_pid(smarm_server_t *s, smarm_pid_t *pid);

/*
 * smarm_server_call() - call the operation op with args[0..nargs) and
 * wait at most timeout_ns for the reply, written to *reply (may be NULL
 * to discard it; release a STR, BYTES or TUPLE reply with
 * smarm_value_release).
 * After SMARM_ETIMEDOUT the request may still be served; its reply is
 * discarded and never reaches a later call. Works from an actor and from
 * a plain thread. Errors: SMARM_EINVAL s or op NULL, args NULL with
 * nargs > 0; SMARM_ENOOP no op of that name; SMARM_EOPKIND op is a
 * cast or an info, not a call (and a cast or info of a call op, for
 * the calls below; before 0.5.0 all were SMARM_ENOOP); SMARM_EARGS wrong
 * count or type; SMARM_ETOOBIG; SMARM_ENONAME, SMARM_ENOPROC the server
 * is not there; SMARM_EDOWN it ended (or dropped the call) before it
 * replied; SMARM_EREPLY the handler answered with an error
 * (smarm_gs_reply_error): *reply is an SMARM_T_I64, its reason (a
 * varargs or stub call returns the status alone); SMARM_ECALLSELF the caller is
 * the server (it would wait for its own answer: cast to itself instead);
 * SMARM_ETIMEDOUT; SMARM_ENOMEM. Safe point. Since: SMARM_0.5.
 */
SMARM_API int smarm_server_call(smarm_server_t *s, const char *op,
				const smarm_value_t *args, size_t nargs,
				smarm_value_t *reply, uint64_t timeout_ns);

/*
 * smarm_server_cast() / smarm_server_info() - send the cast (info)
 * operation op; never waits. A server (or machine) may send to itself,
 * from any of its callbacks: the message is queued as any other and
 * served after the running callback. Pacing: every 256 casts and infos
 * through one handle, a caller that is an actor yields
 * (smarm_actor_yield) when the server has 256 or more queued (a handle
 * by name: always), so a producer faster than its server lets it catch
 * up instead of growing its inbox without bound; a plain thread never
 * yields. Errors: as smarm_server_call without SMARM_EDOWN,
 * SMARM_ECALLSELF and SMARM_ETIMEDOUT.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_server_cast(smarm_server_t *s, const char *op,
				const smarm_value_t *args, size_t nargs);
SMARM_API int smarm_server_info(smarm_server_t *s, const char *op,
				const smarm_value_t *args, size_t nargs);

/*
 * smarm_server_call_typed() - smarm_server_call with the reply written
 * as a C object: reply points at an object of the reply type's C type
 * (smarm_bytes_t for str and bytes, whose ptr the caller frees with
 * free(3); a tuple's struct), or is NULL to drop the reply; it is
 * untouched on failure. reply_type says what reply points at, so that
 * a reply of another type is refused instead of written: the
 * smarm_vtype of that C type (SMARM_T_BYTES for a smarm_bytes_t, which
 * takes a str reply too), or SMARM_T_VOID for unchecked (reply NULL, a
 * void *, a tuple's struct: its size is the caller's to get right).
 * SMARM_T_STR, a char * (no reply is written as one: a str comes as a
 * smarm_bytes_t), is always refused. A call without a reply type
 * writes nothing, whatever reply is. The smarm_server_callv() macro
 * calls this.
 * Returns: 0. Errors: as smarm_server_call; SMARM_EARGS also
 * reply_type is not the operation's reply type (smarm_server_args_why
 * then finds the arguments fine); SMARM_EINVAL also reply_type is no
 * smarm_vtype. Thread-safety: any thread, as smarm_server_call (one
 * handle is one caller's at a time). Since: SMARM_0.5.
 */
SMARM_API int smarm_server_call_typed(smarm_server_t *s, const char *op,
				      const smarm_value_t *args, size_t nargs,
				      void *reply, int reply_type,
				      uint64_t timeout_ns);

/*
 * smarm_server_call_sized() - smarm_server_call_typed() that also knows
 * the size of the object reply points at: reply_size is sizeof *reply
 * (0: unknown, as call_typed). A reply_size other than the size of the
 * operation's reply as a C object (its C type's; sizeof(smarm_bytes_t)
 * for str and bytes; a tuple's struct as libffi lays it out) is
 * SMARM_EARGS, returned before anything is sent (reply untouched), so
 * a struct of the wrong size is an error, never written past its end.
 * An operation without a reply type writes nothing and checks no size.
 * The smarm_server_callv() macro calls this with sizeof *reply.
 * Returns: 0. Errors: as smarm_server_call_typed; SMARM_EARGS also
 * reply_size mismatched (smarm_server_args_why then finds the
 * arguments fine). Thread-safety: as smarm_server_call_typed.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_server_call_sized(smarm_server_t *s, const char *op,
				      const smarm_value_t *args, size_t nargs,
				      void *reply, int reply_type,
				      size_t reply_size, uint64_t timeout_ns);

/*
 * smarm_server_callv() / smarm_server_castv() - call or cast op with
 * its arguments written as a C argument list:
 *
 *     int64_t sum;
 *     smarm_server_callv(s, "add", timeout_ns, &sum, 5);
 *     smarm_server_castv(k, "put", "key", smarm_value_bytes(p, n));
 *
 * Checked (C). In C both are macros: each argument x becomes SMARM_V(x)
 * (its C type picks its value type, with SMARM_V's conversions; a
 * smarm_value_t, such as smarm_value_bytes(p, n) or
 * smarm_value_tuple(&t, sizeof t), passes as itself; a C type SMARM_V
 * does not know does not compile), and the call goes to
 * smarm_server_call_typed or smarm_server_cast, which check every
 * argument against the protocol, and the count: a double given for an
 * i64, one argument too many, are SMARM_EARGS, and
 * smarm_server_args_why() given the same SMARM_V values says which
 * argument and why. callv's reply_type comes from reply's pointer type
 * (int64_t * is SMARM_T_I64, double * SMARM_T_F64, ..., bool *
 * SMARM_T_BOOL, smarm_pid_t * SMARM_T_PID, smarm_bytes_t *
 * SMARM_T_BYTES, char ** SMARM_T_STR (refused: a str reply is a
 * smarm_bytes_t); NULL, void * and other pointers, a tuple's struct
 * among them: unchecked), so an int32_t * for an i64 reply is
 * SMARM_EARGS too. The reply's size is checked as well (since 0.5.0,
 * smarm_server_call_sized with sizeof *reply; void * and NULL: not
 * checked): a pointer to a struct of another size than the protocol's
 * tuple (or than the reply's C type) is SMARM_EARGS before anything is
 * sent, where it was written past its end before. A bytes argument is one
 * value, smarm_value_bytes(p, n) (the pair p, n of the unchecked form is two
 * arguments: refused). At most SMARM_OP_ARGS_MAX arguments (more do not
 * compile).
 *
 * Unchecked (the functions). The exported functions of these names,
 * which C++ (where these macros are not defined), binaries built before
 * 0.5.0 and FFI callers (Python's ctypes) reach, and C reaches as
 * (smarm_server_callv)(...), read the arguments as C varargs in the
 * operation's types, trusted: a double given for an i64 is read as an
 * integer, and only as many as the protocol says are read. They take,
 * after the default promotions, i8..i32, u8..u32 and bool as int or
 * unsigned, f32 as double; str as const char *; bytes as const void *,
 * size_t; pid as smarm_pid_t; a tuple as a const void * to its struct.
 * reply points at an object of the reply type's C type (as for
 * smarm_server_call_typed), or is NULL; its size is not checked (a
 * tuple reply is written as the protocol's struct: the caller's must
 * be that size).
 *
 * Errors: as smarm_server_call and smarm_server_cast (a castv to itself
 * is queued). Since: SMARM_0.5.
 */
SMARM_API int smarm_server_callv(smarm_server_t *s, const char *op,
				 uint64_t timeout_ns, void *reply, ...);
SMARM_API int smarm_server_castv(smarm_server_t *s, const char *op, ...);

#ifndef __cplusplus
#define smarm_server_callv(s, op, ...)                                         \
	SMARM__CAT(SMARM__CALLV_, SMARM__IF2(__VA_ARGS__))(s, op, __VA_ARGS__)
#define smarm_server_castv(s, ...)                                             \
	SMARM__CAT(SMARM__CASTV_, SMARM__IF1(__VA_ARGS__))(s, __VA_ARGS__)

/*
 * What the macros smarm_server_callv and smarm_server_castv are made
 * of; not for direct use. SMARM__ARG21 picks its 21st argument: with a
 * table after a list of 1 to 20 arguments, what the table says of the
 * list's length (SMARM__NARGS: the length; SMARM__IF1 and SMARM__IF2:
 * Z for a list of only 1 or 2 arguments, else M). SMARM__VALUES(...)
 * is the array of SMARM_V of each argument, then their count.
 */
#define SMARM__CAT(a, b) SMARM__CAT_(a, b)
#define SMARM__CAT_(a, b) a##b
#define SMARM__ARG21(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13,   \
		     a14, a15, a16, a17, a18, a19, a20, n, ...)                \
	n
#define SMARM__NARGS(...)                                                      \
	SMARM__ARG21(__VA_ARGS__, _more_than_16, _more_than_16, _more_than_16, \
		     _more_than_16, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, \
		     4, 3, 2, 1, 0)
#define SMARM__IF1(...)                                                        \
	SMARM__ARG21(__VA_ARGS__, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, \
		     M, M, M, M, Z, Z)
#define SMARM__IF2(...)                                                        \
	SMARM__ARG21(__VA_ARGS__, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, \
		     M, M, M, Z, Z, Z)
#define SMARM__CALLV_Z(s, op, t, r)                                            \
	smarm_server_call_sized((s), (op), NULL, 0, (r), SMARM__REPLY_TYPE(r), \
				SMARM__REPLY_SIZE(r), (t))
#define SMARM__CALLV_M(s, op, t, r, ...)                                       \
	smarm_server_call_sized((s), (op), SMARM__VALUES(__VA_ARGS__), (r),    \
				SMARM__REPLY_TYPE(r), SMARM__REPLY_SIZE(r),    \
				(t))
#define SMARM__CASTV_Z(s, op) smarm_server_cast((s), (op), NULL, 0)
#define SMARM__CASTV_M(s, op, ...)                                             \
	smarm_server_cast((s), (op), SMARM__VALUES(__VA_ARGS__))
#define SMARM__VALUES(...)                                                     \
	(const smarm_value_t[]){ SMARM__CAT(                                   \
		SMARM__V, SMARM__NARGS(__VA_ARGS__))(__VA_ARGS__) },           \
		(size_t)SMARM__NARGS(__VA_ARGS__)
#define SMARM__V1(a) SMARM_V(a)
#define SMARM__V2(a, ...) SMARM_V(a), SMARM__V1(__VA_ARGS__)
#define SMARM__V3(a, ...) SMARM_V(a), SMARM__V2(__VA_ARGS__)
#define SMARM__V4(a, ...) SMARM_V(a), SMARM__V3(__VA_ARGS__)
#define SMARM__V5(a, ...) SMARM_V(a), SMARM__V4(__VA_ARGS__)
#define SMARM__V6(a, ...) SMARM_V(a), SMARM__V5(__VA_ARGS__)
#define SMARM__V7(a, ...) SMARM_V(a), SMARM__V6(__VA_ARGS__)
#define SMARM__V8(a, ...) SMARM_V(a), SMARM__V7(__VA_ARGS__)
#define SMARM__V9(a, ...) SMARM_V(a), SMARM__V8(__VA_ARGS__)
#define SMARM__V10(a, ...) SMARM_V(a), SMARM__V9(__VA_ARGS__)
#define SMARM__V11(a, ...) SMARM_V(a), SMARM__V10(__VA_ARGS__)
#define SMARM__V12(a, ...) SMARM_V(a), SMARM__V11(__VA_ARGS__)
#define SMARM__V13(a, ...) SMARM_V(a), SMARM__V12(__VA_ARGS__)
#define SMARM__V14(a, ...) SMARM_V(a), SMARM__V13(__VA_ARGS__)
#define SMARM__V15(a, ...) SMARM_V(a), SMARM__V14(__VA_ARGS__)
#define SMARM__V16(a, ...) SMARM_V(a), SMARM__V15(__VA_ARGS__)
#define SMARM__REPLY_TYPE(r)                                                   \
	_Generic((r),                                                          \
		int8_t *: SMARM_T_I8,                                          \
		int16_t *: SMARM_T_I16,                                        \
		int32_t *: SMARM_T_I32,                                        \
		int64_t *: SMARM_T_I64,                                        \
		long long *: SMARM_T_I64,                                      \
		uint8_t *: SMARM_T_U8,                                         \
		uint16_t *: SMARM_T_U16,                                       \
		uint32_t *: SMARM_T_U32,                                       \
		uint64_t *: SMARM_T_U64,                                       \
		unsigned long long *: SMARM_T_U64,                             \
		float *: SMARM_T_F32,                                          \
		double *: SMARM_T_F64,                                         \
		bool *: SMARM_T_BOOL,                                          \
		smarm_pid_t *: SMARM_T_PID,                                    \
		smarm_bytes_t *: SMARM_T_BYTES,                                \
		char **: SMARM_T_STR,                                          \
		const char **: SMARM_T_STR,                                    \
		default: SMARM_T_VOID)
/* sizeof *r, or 0 for a reply of no size (void *, NULL, a literal 0);
 * the inner selection only keeps sizeof away from void. */
#define SMARM__REPLY_SIZE(r)                                                   \
	_Generic((r),                                                          \
		void *: (size_t)0,                                             \
		const void *: (size_t)0,                                       \
		int: (size_t)0,                                                \
		default: sizeof *_Generic((r),                                 \
			void *: (char *)0,                                     \
			const void *: (char *)0,                               \
			int: (char *)0,                                        \
			default: (r)))
#endif /* !__cplusplus */

/*
 * smarm_server_args_why() - why the arguments args[0..nargs) would be
 * refused by a call (or cast, info, request) of op of b: the status the
 * call would return for them (0: they would pass) and, in msg (cut to
 * msglen, NUL-terminated; may be NULL), which argument and why, as
 * "add: argument 1 is f64, the protocol says i64", "add takes 1
 * argument, 2 given", "put: argument 1 (str) is over SMARM_BYTES_MAX".
 * Nothing is sent. Returns: 0. Errors: SMARM_EARGS, SMARM_ETOOBIG as
 * the call would return; SMARM_ENOOP no such operation; SMARM_EINVAL b
 * or op NULL, args NULL with nargs > 0. Thread-safety: any thread.
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_server_args_why(const smarm_behaviour_t *b, const char *op,
				    const smarm_value_t *args, size_t nargs,
				    char *msg, size_t msglen);

/*
 * smarm_server_stub() - a native client function for the call or cast op
 * of b, made with a libffi closure, in the handler's argument types
 * (without state and cx):
 *     int call(smarm_server_t *s, uint64_t timeout_ns, R *out, A1 a1, ...)
 *     int cast(smarm_server_t *s, A1 a1, ...)
 * Each returns the status smarm_server_call() or smarm_server_cast()
 * would (SMARM_EINVAL also for s NULL or a handle of another
 * behaviour); timeout_ns follows the one timeout rule. A call's reply
 * goes to *out in its C type (out NULL: dropped; untouched on failure);
 * a STR or BYTES reply is a smarm_bytes_t whose ptr the caller frees
 * with free(3); a reply of no type writes nothing. A tuple, argument or
 * reply, is its C struct, by value (A1) or written to *out (R). The
 * stub lives as long as b's plugin is mapped. Returns: 0 and *fn.
 * Errors: SMARM_EINVAL; SMARM_ENOOP no such operation; SMARM_EOPKIND an
 * info operation; SMARM_ENOMEM. Thread-safety: any thread; a stub keeps
 * no status in the handle (each call returns its own), and one handle
 * is still one caller's at a time (smarm_server_open). Since: SMARM_0.5.
 */
SMARM_API int smarm_server_stub(const smarm_behaviour_t *b, const char *op,
				void (**fn)(void));

/*
 * smarm_server_send_request() / smarm_server_wait_response() - a call in
 * two halves (OTP's send_request / wait_response): send now, collect the
 * reply later; *req names the request (a handle by name: sent to the
 * pid the name has now). A server (or machine) may send a request to
 * itself: it is queued and served after the running callback. Waiting
 * for a request sent to the caller itself, with a timeout other than 0,
 * is SMARM_ECALLSELF at once (no answer can come while it waits); a
 * poll (timeout 0) from a later callback picks the reply up.
 * wait_response with result SMARM_ETIMEDOUT, SMARM_ECALLSELF or
 * SMARM_EAGAIN (a terminate that may not park) keeps the request
 * pending; any other result frees it. smarm_request_free() abandons a
 * pending request (its reply is discarded). Errors: as smarm_server_call
 * but SMARM_ECALLSELF only as said. Since: SMARM_0.5.
 */
typedef struct smarm_request smarm_request_t;
SMARM_API int smarm_server_send_request(smarm_server_t *s, const char *op,
					const smarm_value_t *args, size_t nargs,
					smarm_request_t **req);
SMARM_API int smarm_server_wait_response(smarm_request_t *req,
					 smarm_value_t *reply,
					 uint64_t timeout_ns);
SMARM_API void smarm_request_free(smarm_request_t *req);

/*
 * Responses as messages (OTP's send_request/4 and check_response): a
 * request whose reply arrives in a channel of the caller's, beside its
 * other messages, so the caller may select on it and match what it
 * receives. A response is exactly one smarm_response_t element:
 *   id      the request's id (smarm_server_send_request_to)
 *   status  as the call's: 0, SMARM_EREPLY (an error reply, its reason
 *           in value), SMARM_EDOWN (the server ended first), ...
 *   value   the reply, owned by the element (smarm_value_release).
 * Every request accepted gets exactly one response: its reply, or
 * SMARM_EDOWN when the server ends before it answers.
 */
typedef struct smarm_response {
	uint64_t id;
	int status;
	smarm_value_t value;
} smarm_response_t;

/*
 * smarm_response_chan_alloc() - a channel of responses: elements of
 * sizeof(smarm_response_t) whose destructor releases a response never
 * received. Freed with smarm_chan_receiver_free and _sender_free.
 * Errors: as smarm_chan_alloc. Since: SMARM_0.5.
 */
SMARM_API int smarm_response_chan_alloc(smarm_chan_t **out);

/*
 * smarm_server_send_request_to() - send the call op(args) to s as
 * smarm_server_send_request does, its response to arrive in replies (a
 * channel of smarm_response_chan_alloc, or of the same element size)
 * tagged *id, an id no other request of the process has. Nothing waits:
 * the caller takes the response from replies when it likes (recv,
 * select) and matches it with smarm_server_check_response or a
 * smarm_reqids_t. Returns: 0 and *id. Errors: as smarm_server_call's
 * sending half (SMARM_EFULL, SMARM_ENOPROC, SMARM_EARGS, ...);
 * SMARM_EINVAL replies is no channel of responses, id NULL. A request
 * to the caller itself is allowed (served after its callback).
 * Since: SMARM_0.5.
 */
SMARM_API int smarm_server_send_request_to(smarm_server_t *s, const char *op,
					   const smarm_value_t *args,
					   size_t nargs, smarm_chan_t *replies,
					   uint64_t *id);

/*
 * smarm_server_check_response() - OTP's check_response(Msg, ReqId): is
 * msg, a response received, the one of request id? Then its status (0,
 * SMARM_EREPLY, SMARM_EDOWN, ...) with the reply moved into *reply (may
 * be NULL: released); msg's value is then empty. SMARM_EAGAIN: msg is
 * another request's (OTP's no_reply), left as it is. Errors:
 * SMARM_EINVAL msg NULL. Since: SMARM_0.5.
 */
SMARM_API int smarm_server_check_response(smarm_response_t *msg, uint64_t id,
					  smarm_value_t *reply);

/*
 * Raw reply targets (OTP's gen_server:reply/2 and gen_statem:reply/2
 * given a From = {Pid, Tag} that did not come with the current call):
 * a requester hands the pair (replies, id), a channel of responses and
 * a request id, to whoever shall answer (in a message, as an info's
 * arguments: a handle travels as a u64), and any actor, or thread, may
 * answer it. The answer is a response as a server's: the requester
 * takes it from replies and matches it with
 * smarm_server_check_response or a smarm_reqids_t (add the id).
 */

/*
 * smarm_request_id_new() - a new request id: not 0, and no other
 * request id of the process (smarm_server_send_request_to's included)
 * has it, so a response to it is told apart from theirs in one channel
 * or collection (OTP's make_ref() for a Tag).
 * Returns: 0, *id set. Errors: SMARM_EINVAL id NULL.
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_request_id_new(uint64_t *id);

/*
 * smarm_reply_to() - answer the request id whose response goes to
 * replies with v: put exactly one smarm_response_t {id, status 0, a
 * copy of v} into replies (OTP's reply(From, Reply) with a raw From).
 *
 * v is any value of a protocol type, or NULL for none (SMARM_T_VOID,
 * a call without a reply type); there is no operation to check it
 * against: the requester must expect v's type. A tuple
 * (smarm_value_tuple(&t, sizeof t), since 0.5.0; refused before) has
 * no protocol to lay it out either: its len bytes are copied as they
 * are, padding included and its bools unchecked, and the requester
 * takes it as the struct of that size (smarm_value_get_tuple refuses
 * another size). v is copied before the
 * call returns (a STR or BYTES value's bytes too): the caller keeps v
 * and what it points to; the response owns the copy, released by the
 * channel's destructor if nobody takes it, or moved out by
 * smarm_server_check_response. A requester that is gone is not an
 * error, as in OTP, where a reply to a dead process is dropped:
 * replies freed, closed (its every sender reference freed: the
 * requester keeps one while answers may come) or left without a
 * receiver makes the call return 0 having sent nothing. Each call
 * puts one response; answering one id twice gives the requester two
 * (the first it matches wins, as in OTP).
 * Returns: 0. Errors: SMARM_EINVAL replies is no channel handle, or a
 * channel of elements other than sizeof(smarm_response_t) bytes (not a
 * channel of responses), or id is 0 (never a request's); SMARM_EARGS
 * v's type is not a smarm_vtype, or v is not a valid value of it (a
 * STR holding a NUL byte, p NULL with len > 0, an integer out of its
 * type's range, a SMARM_T_TUPLE with p NULL, len 0 or len over the
 * largest tuple, 8 * SMARM_TUPLE_MAX bytes); SMARM_ETOOBIG a STR or
 * BYTES longer than
 * SMARM_BYTES_MAX; SMARM_ENOMEM (nothing was sent).
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_reply_to(smarm_chan_t *replies, uint64_t id,
			     const smarm_value_t *v);

/*
 * A request id collection (OTP 25's reqids): requests in flight, each
 * with a label of the caller's. smarm_reqids_alloc / _free make and
 * free one (free NULL is a no-op); _add records request id with label
 * (SMARM_EEXIST: id is in it); _size counts them.
 * smarm_reqids_check() - OTP's check_response(Msg, Coll, Delete): msg
 * a response of a request in c: its status, *label and the reply moved
 * into *reply (may be NULL), and the request leaves c if del; not one
 * of c's: SMARM_EAGAIN (no_reply); c empty: SMARM_ENOENT (no_request).
 * smarm_reqids_receive() - OTP's receive_response(Coll, Timeout,
 * Delete): receive from replies until a response of c comes (responses
 * of no request of c are released: give c a channel of its own),
 * answering as _check; SMARM_ETIMEDOUT, SMARM_ENOENT c empty.
 * Errors: SMARM_EINVAL an argument NULL; SMARM_ENOMEM.
 * Thread-safety: one caller at a time. Since: SMARM_0.5.
 */
typedef struct smarm_reqids smarm_reqids_t;
SMARM_API int smarm_reqids_alloc(smarm_reqids_t **out);
SMARM_API void smarm_reqids_free(smarm_reqids_t *c);
SMARM_API int smarm_reqids_add(smarm_reqids_t *c, uint64_t id, intptr_t label);
SMARM_API size_t smarm_reqids_size(const smarm_reqids_t *c);
SMARM_API int smarm_reqids_check(smarm_reqids_t *c, smarm_response_t *msg,
				 bool del, intptr_t *label,
				 smarm_value_t *reply);
SMARM_API int smarm_reqids_receive(smarm_reqids_t *c, smarm_chan_t *replies,
				   uint64_t timeout_ns, bool del,
				   intptr_t *label, smarm_value_t *reply);

/*
 * smarm_server_shutdown() - shut the server down and wait until it has
 * ended: a trapping server gets handle_shutdown, any other ends
 * SMARM_EXIT_SHUTDOWN. *how (may be NULL) receives how it ended.
 * A server already gone: 0 with SMARM_EXIT_NOPROC. Errors: SMARM_EINVAL;
 * SMARM_ECALLSELF the caller is the server (it ends itself with
 * smarm_gs_stop or smarm_sm_stop); SMARM_ENOTACTOR; SMARM_ETIMEDOUT (it
 * is still ending). Since: SMARM_0.5.
 */
SMARM_API int smarm_server_shutdown(smarm_server_t *s, uint64_t timeout_ns,
				    int *how);

/*
 * smarm_server_stop() - OTP's gen_server:stop(Server, Reason, Timeout)
 * (and gen_statem:stop/3): ask the server or machine to end with how
 * and reason, and wait until it has ended. The stop is a system message
 * queued behind what was sent to it before: the server takes it between
 * callbacks (it never interrupts one), then terminate runs (may_block
 * true) with how and reason, and the actor ends with them, as after
 * smarm_gs_stop(cx, how, reason) (SMARM_EXIT_SHUTDOWN keeps reason:
 * OTP's {shutdown, X}). Whether or not the server traps exits. A name
 * is resolved once: the server found then is the one stopped.
 * *out_how and *out_reason (each may be NULL) receive how it really
 * ended: how and reason, unless terminate crashed (SMARM_EXIT_CRASHED
 * with the crash's reason, as OTP's stop exits with terminate's crash)
 * or something else ended it first.
 * Returns: 0. Errors: SMARM_EINVAL s NULL, how not SMARM_EXIT_NORMAL,
 * SMARM_EXIT_SHUTDOWN or SMARM_EXIT_CRASHED; SMARM_ENOPROC no server
 * (OTP's noproc: it was gone, the name is not registered, or the pid is
 * an actor that is no server);
 * SMARM_ECALLSELF the caller is the server (use smarm_gs_stop);
 * SMARM_ETIMEDOUT it did not end within timeout_ns (it is not killed:
 * the stop stays queued, as OTP's); SMARM_ENOTACTOR; SMARM_ENOMEM.
 * Thread-safety: actor context only. Since: SMARM_0.5.
 */
SMARM_API int smarm_server_stop(smarm_server_t *s, int how, intptr_t reason,
				uint64_t timeout_ns, int *out_how,
				intptr_t *out_reason);

/*
 * A server's or machine's status (OTP's sys:get_status), as it was
 * between two of its callbacks:
 *   struct_size  in: sizeof(smarm_server_status_t) as the caller built
 *                it (fields past it are not written).
 *   kind         SMARM_SERVER_GEN_SERVER or SMARM_SERVER_GEN_STATEM.
 *   behaviour    its behaviour's name (valid while its plugin is open).
 *   pid          its actor.
 *   queued       requests queued, not yet taken (its inbox).
 *   queue_limit  its queue's bound (smarm_gs_set_queue_limit; 0: none).
 *   timers       a server: its live smarm_gs_send_after timers; a
 *                machine: its active timeouts (state, event and
 *                generic, a zero-time one not yet handled included), as
 *                OTP's gen_statem status counts them.
 *   state        a machine: its state, state_name its name; a server:
 *                -1 and NULL.
 *   postponed    a machine: events postponed; a server: 0.
 *   monitors     a server: its smarm_gs_monitor monitors not yet Down.
 *   trapping     it traps exits.
 *   state_text   what its behaviour's format_status wrote (OTP's
 *                formatted status), NUL-terminated and truncated to
 *                SMARM_STATUS_TEXT_MAX - 1 bytes; "" if it has none;
 *                "format_status failed: <status>" if it failed.
 * Since: SMARM_0.5.
 */
#define SMARM_STATUS_TEXT_MAX 256

enum {
	SMARM_SERVER_GEN_SERVER = 1,
	SMARM_SERVER_GEN_STATEM = 2,
};

typedef struct smarm_server_status {
	size_t struct_size;
	int kind;
	const char *behaviour;
	smarm_pid_t pid;
	uint32_t queued;
	uint32_t queue_limit;
	uint32_t timers;
	int32_t state;
	const char *state_name;
	uint32_t postponed;
	uint32_t monitors;
	bool trapping;
	char state_text[SMARM_STATUS_TEXT_MAX];
} smarm_server_status_t;

/*
 * smarm_server_get_status() - ask s for its status (a system message,
 * queued behind what was sent to it before and answered between
 * callbacks, as OTP's sys:get_status) and wait at most timeout_ns.
 * Returns: 0, *out filled up to out->struct_size. Errors: SMARM_EINVAL
 * s or out NULL, out->struct_size smaller than the fields up to pid;
 * the statuses of smarm_server_call (SMARM_ENOPROC, SMARM_EDOWN,
 * SMARM_ETIMEDOUT, SMARM_ECALLSELF the caller is the server, ...).
 * Thread-safety: any thread. Since: SMARM_0.5.
 */
SMARM_API int smarm_server_get_status(smarm_server_t *s,
				      smarm_server_status_t *out,
				      uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* SMARM_SMARM_PLUGIN_H */
