/* SPDX-License-Identifier: MIT */
/*
 * bhv.h - internal interface of the behaviour layer: what its files
 * share and what an engine (gen_server.c, gen_statem.c) builds on. The
 * layer sits on otp, msg and core and alone knows libffi and dlopen(3):
 * proto.c parses protocols, pack.c packs, checks and unpacks message
 * blocks and makes native calls, plugin.c loads plugins and counts
 * their references.
 *
 * Ownership: a protocol belongs to its behaviour, a message block to
 * its holder; every object that can reach plugin code holds a plugin
 * reference. Locking: none; a protocol is constant once published.
 * See: docs/architecture/behaviours.md, docs/plugins.md.
 */
#ifndef SMARM_BEHAVIOUR_BHV_H
#define SMARM_BEHAVIOUR_BHV_H

#include "../../abi/smarm/smarm_plugin.h"
#include "../core/assert.h"

#include <ffi.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ==== Protocols (proto.c) ==== */

/*
 * The scalar types, a row each, expanded by every per-type step:
 *   XX(vtype, name, ctype, ffi, vmem, smem, rmem, va, chk)
 * smarm_vtype, spelling, C type, libffi type, smarm_value_t, bhv_slot
 * and bhv_ret members, promoted varargs type, and BHV_RANGE (a value
 * must fit ctype) or BHV_ANY.
 */
#define BHV_SCALARS(XX)                                                        \
	XX(SMARM_T_I8, "i8", int8_t, ffi_type_sint8, i, i, s, int, BHV_RANGE)  \
	XX(SMARM_T_I16, "i16", int16_t, ffi_type_sint16, i, i, s, int,         \
	   BHV_RANGE)                                                          \
	XX(SMARM_T_I32, "i32", int32_t, ffi_type_sint32, i, i, s, int,         \
	   BHV_RANGE)                                                          \
	XX(SMARM_T_I64, "i64", int64_t, ffi_type_sint64, i, i, s, int64_t,     \
	   BHV_ANY)                                                            \
	XX(SMARM_T_U8, "u8", uint8_t, ffi_type_uint8, u, u, a, unsigned,       \
	   BHV_RANGE)                                                          \
	XX(SMARM_T_U16, "u16", uint16_t, ffi_type_uint16, u, u, a, unsigned,   \
	   BHV_RANGE)                                                          \
	XX(SMARM_T_U32, "u32", uint32_t, ffi_type_uint32, u, u, a, unsigned,   \
	   BHV_RANGE)                                                          \
	XX(SMARM_T_U64, "u64", uint64_t, ffi_type_uint64, u, u, a, uint64_t,   \
	   BHV_ANY)                                                            \
	XX(SMARM_T_F32, "f32", float, ffi_type_float, f32, f32, f32, double,   \
	   BHV_ANY)                                                            \
	XX(SMARM_T_F64, "f64", double, ffi_type_double, f64, f64, f64, double, \
	   BHV_ANY)                                                            \
	XX(SMARM_T_BOOL, "bool", bool, ffi_type_uint8, b, b, b, int, BHV_ANY)  \
	XX(SMARM_T_PID, "pid", smarm_pid_t, smarm__bhv_pid_ffi, pid, pid, pid, \
	   smarm_pid_t, BHV_ANY)

/* Does integer x fit ctype T? (chk of BHV_SCALARS) */
#define BHV_RANGE(T, x) ((T)(x) == (x))
#define BHV_ANY(T, x) ((void)(x), true)

/* libffi's type of smarm_pid_t (a struct of one uint64_t; pack.c). */
extern ffi_type smarm__bhv_pid_ffi;

/*
 * A tuple type: 1 to SMARM_TUPLE_MAX scalars laid out as C lays out the
 * struct, once at parse (proto.c INV-3). tu_ffi.elements points into
 * the struct, which therefore never moves once laid out.
 */
struct bhv_tuple {
	ffi_type tu_ffi;			 /* FFI_TYPE_STRUCT, laid out */
	ffi_type *tu_elems[SMARM_TUPLE_MAX + 1]; /* the elements, NULL-ended */
	size_t tu_off[SMARM_TUPLE_MAX];		 /* each element's offset */
	uint8_t tu_types[SMARM_TUPLE_MAX]; /* each element's smarm_vtype */
	uint8_t tu_n;			   /* elements */
};

/* The largest tuple: each element takes and aligns to at most 8 bytes. */
#define BHV_TUPLE_SIZE_MAX (8 * SMARM_TUPLE_MAX)

/* An operation's kind: the gen_statem event kind of its requests. */
enum bhv_kind {
	BHV_CAST = SMARM_SM_CAST,
	BHV_CALL = SMARM_SM_CALL,
	BHV_INFO = SMARM_SM_INFO,
};

/* The most parameters before an op's arguments (an action's three). */
#define BHV_LEAD_MAX 4

/* The most ffi arguments a native function takes (bytes counts two). */
#define BHV_FFI_ARGS_MAX (BHV_LEAD_MAX + 2 * SMARM_OP_ARGS_MAX)

/* A prepared call interface: lead parameters, then an op's arguments;
 * the cif points into bc_types, so it never moves. */
struct bhv_cif {
	ffi_cif bc_cif;			      /* prepared */
	ffi_type *bc_types[BHV_FFI_ARGS_MAX]; /* its argument types */
	unsigned bc_nlead;		      /* leading parameters */
	unsigned bc_nffi;		      /* bc_nlead + op's ffi args */
	unsigned bc_direct;		      /* 1 + the 64-bit integer args
						 of a direct call, or 0:
						 through libffi (pack.c) */
};

/* One operation of a protocol. Constant once parsed. */
struct bhv_op {
	uint8_t op_kind;		       /* enum bhv_kind */
	uint8_t op_nargs;		       /* protocol arguments */
	uint8_t op_reply;		       /* smarm_vtype; VOID: none */
	uint8_t op_args[SMARM_OP_ARGS_MAX];    /* smarm_vtype of each */
	uint8_t op_tix[SMARM_OP_ARGS_MAX + 1]; /* a TUPLE argument's (the
						  reply's: last) index in
						  op_tup (bhv_arg_tuple) */
	uint8_t op_ntup;		       /* tuple types in op_tup */
	bool op_small;			       /* scalar arguments only, packed
						  inline (see BHV_INLINE_MAX) */
	uint16_t op_index;		       /* position in the protocol */
	uint32_t op_line, op_col;	       /* where it was declared */
	char op_name[SMARM_OP_NAME_MAX + 1];   /* NUL-terminated */
	uint64_t op_key;		       /* its first 8 bytes, zero-padded
						  (smarm__bhv_proto_find) */
	void (*op_fn)(void);	  /* its handler (the loader sets it;
				     NULL for a gen_statem's ops) */
	struct bhv_cif op_cif;	  /* (state, cx, args...) -> reply,
				     prepared by the loader */
	struct bhv_tuple *op_tup; /* its tuple types (malloc'd by the parser,
				     never moved once laid out; NULL: none) */
};

/* The tuple type of op's argument i, or NULL. */
static inline const struct bhv_tuple *bhv_arg_tuple(const struct bhv_op *op,
						    unsigned i)
{
	return op->op_args[i] == SMARM_T_TUPLE ? &op->op_tup[op->op_tix[i]]
					       : NULL;
}

/* The tuple type of op's reply, or NULL. */
static inline const struct bhv_tuple *bhv_reply_tuple(const struct bhv_op *op)
{
	return op->op_reply == SMARM_T_TUPLE
		       ? &op->op_tup[op->op_tix[SMARM_OP_ARGS_MAX]]
		       : NULL;
}

/* A parsed protocol: ops in declaration order. */
struct bhv_proto {
	struct bhv_op *pr_ops; /* pr_n ops (malloc'd; never moves) */
	size_t pr_n;
};

/* Parse text into *p: 0, SMARM_ENOMEM, or SMARM_EPROTOCOL with "line L,
 * column C: ..." in msg (may be NULL). On failure *p is empty. */
int smarm__bhv_proto_parse(const char *text, struct bhv_proto *p, char *msg,
			   size_t msglen);

/* Free what smarm__bhv_proto_parse allocated (an empty *p is fine). */
void smarm__bhv_proto_free(struct bhv_proto *p);

/* The op called name (of kind kind, or any kind if 0), or NULL. */
const struct bhv_op *smarm__bhv_proto_find(const struct bhv_proto *p,
					   const char *name, int kind);

/* The op called name of kind kind (0: any) into *out: 0, SMARM_ENOOP
 * or SMARM_EOPKIND (another kind). */
int smarm__bhv_proto_get(const struct bhv_proto *p, const char *name, int kind,
			 const struct bhv_op **out);

/* A type's protocol spelling ("i64", ..., "tuple"), "?" if unknown. */
const char *smarm__bhv_type_name(int type);

/* An event kind's spelling (SMARM_SM_*: an operation's "cast", "call"
 * and "info", then a machine's other events), "?" if none. */
const char *smarm__bhv_kind_name(int kind);

/* Tuple tu's spelling, "(i32, f64)", into buf (cut to len); buf. */
const char *smarm__bhv_tuple_name(const struct bhv_tuple *tu, char *buf,
				  size_t len);

/* Is type one of the integer types (i8 .. u64)? */
static inline bool smarm__bhv_type_int(int type)
{
	return type >= SMARM_T_I8 && type <= SMARM_T_U64;
}

/* ==== Message blocks (pack.c) ==== */

/*
 * A message block: an op's arguments in one self-contained object: the
 * header, bk_nargs slots, then str (with NUL), bytes and tuple data at
 * the offsets the slots name (a tuple 8-aligned as its C struct, padding
 * zeroed, so a handler's struct argument points into the block). A
 * block from outside the packer is checked before use.
 */
struct bhv_slot {
	uint8_t sl_type; /* smarm_vtype */
	uint8_t sl_pad[3];
	uint32_t sl_len; /* STR, BYTES: bytes (a str's without its NUL);
			    TUPLE: its size */
	union {
		int64_t i;
		uint64_t u;
		float f32;
		double f64;
		bool b;
		smarm_pid_t pid;
		uint64_t off; /* STR, BYTES, TUPLE: offset from the block's
				 start */
	} sl_v;
};

struct bhv_block {
	uint32_t bk_size;  /* the whole block, in bytes */
	uint16_t bk_nargs; /* slots */
	uint16_t bk_flags; /* 0 */
	struct bhv_slot bk_slots[];
};

/* The largest block carried inline (struct bhv_msg): 3 scalar slots. */
#define BHV_INLINE_MAX 64

/* An op's arguments as they travel: the block inline when it fits, else
 * malloc'd; offsets are block-relative, so a copy moves an inline block
 * with it. Empty: mg_heap NULL, inline bk_size 0. */
struct bhv_msg {
	struct bhv_block *mg_heap; /* a block over BHV_INLINE_MAX, or NULL */
	uint64_t mg_inl[BHV_INLINE_MAX / 8]; /* an inline block, accessed
						as one (bhv_msg_inline) */
};

/* m's inline block storage. */
static inline struct bhv_block *bhv_msg_inline(struct bhv_msg *m)
{
	return (struct bhv_block *)m->mg_inl;
}

/* m's block (m not empty). */
static inline const struct bhv_block *bhv_msg_block(const struct bhv_msg *m)
{
	return m->mg_heap != NULL ? m->mg_heap
				  : (const struct bhv_block *)m->mg_inl;
}

/* Free what m holds and leave it empty (an empty m is fine). */
void smarm__bhv_msg_free(struct bhv_msg *m);

/* Copy src (not empty) into *dst: 0, or SMARM_ENOMEM (dst empty). */
int smarm__bhv_msg_copy(struct bhv_msg *dst, const struct bhv_msg *src);

/* smarm__bhv_block_check of m's block (not empty; inline: not too big). */
int smarm__bhv_msg_check(const struct bhv_op *op, const struct bhv_msg *m);

/*
 * Pack args[0..nargs) for op into *out: 0, or SMARM_EINVAL (args NULL
 * with nargs > 0), SMARM_EARGS (count, type, range, a str with a NUL, a
 * tuple of another size, with no data or a bool neither 0 nor 1),
 * SMARM_ETOOBIG, SMARM_ENOMEM. Nothing of args is kept; on failure *out
 * is empty.
 */
int smarm__bhv_pack(const struct bhv_op *op, const smarm_value_t *args,
		    size_t nargs, struct bhv_msg *out);

/* The same from C varargs (promoted; a tuple by pointer to its struct). */
int smarm__bhv_pack_va(const struct bhv_op *op, va_list ap,
		       struct bhv_msg *out);

/* The same from a stub's ffi arguments, in the op's C types (bytes: two). */
int smarm__bhv_pack_ffi(const struct bhv_op *op, void *const *avalues,
			struct bhv_msg *out);

/* Is the size-byte block b well formed for op? 0 or SMARM_EARGS. Never
 * reads past size bytes. */
int smarm__bhv_block_check(const struct bhv_op *op, const void *b, size_t size);

/* A block's arguments as ffi values: ua_av[0..nlead) the caller sets,
 * the rest point into ua_tmp and the block. */
struct bhv_unpacked {
	void *ua_av[BHV_FFI_ARGS_MAX];
	union {
		int8_t i8;
		int16_t i16;
		int32_t i32;
		int64_t i64;
		uint8_t u8;
		uint16_t u16;
		uint32_t u32;
		uint64_t u64;
		float f32;
		double f64;
		bool b;
		smarm_pid_t pid;
		const void *p;
		size_t sz;
	} ua_tmp[2 * SMARM_OP_ARGS_MAX];
};

/* Unpack a checked block of op after nlead lead slots. */
void smarm__bhv_unpack(const struct bhv_op *op, const struct bhv_block *b,
		       unsigned nlead, struct bhv_unpacked *u);

/* ==== Native calls (pack.c) ==== */

/* The ffi type of a scalar, or of str and bytes' pointer. */
ffi_type *smarm__bhv_ffi_type(int vtype);

/* Prepare c for op: nlead parameters of types lead[], op's arguments,
 * returning ret (NULL: op's reply type). 0 or SMARM_EINTERNAL. */
int smarm__bhv_cif_prep(struct bhv_cif *c, const struct bhv_op *op,
			ffi_type *const *lead, unsigned nlead, ffi_type *ret);

/* A return value of any type as ffi_call writes it (ints widened). */
union bhv_ret {
	ffi_arg a;
	ffi_sarg s;
	float f32;
	double f64;
	smarm_pid_t pid;
	smarm_bytes_t bytes;
	int32_t i32;
	bool b;
	uint64_t tup[BHV_TUPLE_SIZE_MAX / 8];
};

/* Call fn through c with u's arguments; its return into *ret (or NULL). */
void smarm__bhv_invoke(const struct bhv_cif *c, void (*fn)(void),
		       struct bhv_unpacked *u, union bhv_ret *ret);

/* Call op's handler with (p0, p1) and b's arguments, as unpack and
 * invoke would (a direct shape reads the block itself). */
void smarm__bhv_invoke_block(const struct bhv_op *op, const struct bhv_block *b,
			     void *p0, void *p1, union bhv_ret *ret);

/* A handler's return r (of type; a TUPLE's tu) as a value owning its
 * data: 0, SMARM_ETOOBIG, SMARM_EARGS or SMARM_ENOMEM. */
int smarm__bhv_ret_value(int type, const struct bhv_tuple *tu,
			 const union bhv_ret *r, smarm_value_t *v);

/* Check v (NULL: VOID) against type (tu) into an owned copy *out: 0,
 * SMARM_EARGS, SMARM_ETOOBIG, SMARM_ENOMEM. */
int smarm__bhv_value_copy(int type, const struct bhv_tuple *tu,
			  const smarm_value_t *v, smarm_value_t *out);

/* Check args as a pack would: 0, or its status with *bad the first
 * refused (nargs: the count). */
int smarm__bhv_args_check(const struct bhv_op *op, const smarm_value_t *args,
			  size_t nargs, size_t *bad);

/* ==== Plugins and behaviours (plugin.c) ==== */

struct bhv_plugin;

/* A behaviour of a loaded plugin (smarm_behaviour_t is this). */
struct smarm_behaviour {
	struct bhv_plugin *bh_pl;     /* its plugin (no reference) */
	int bh_kind;		      /* BHV_GEN_SERVER / BHV_GEN_STATEM */
	const char *bh_name;	      /* the descriptor's */
	struct bhv_proto bh_proto;    /* parsed at load */
	smarm_gs_desc_t bh_gs;	      /* a gen_server's descriptor, fields
					 past its struct_size zeroed */
	smarm_sm_desc_t bh_smd;	      /* a gen_statem's descriptor, fields
					 past its struct_size zeroed */
	const smarm_sm_desc_t *bh_sm; /* &bh_smd (a gen_statem), or NULL */
	void *bh_engine;	      /* an engine's per-behaviour data
					 (gen_statem tables) */
	void (*bh_engine_free)(void *data); /* frees bh_engine at unload */
};

enum {
	BHV_GEN_SERVER = 1,
	BHV_GEN_STATEM = 2,
};

/* The loader's check of machine d (full-size: bh_smd) of protocol p
 * (statem.c): 0, or as smarm__sm_check_ops, or SMARM_EINVAL. */
int smarm__sm_check(const smarm_sm_desc_t *d, const struct bhv_proto *p,
		    char *msg, size_t msglen);

/* Is b a behaviour of a loaded plugin (b is never dereferenced)? */
bool smarm__bhv_valid(const struct smarm_behaviour *b);

/* A stub (smarm_server_stub): a thunk or libffi closure calling st_fun
 * with the stub as user data; freed as its plugin unloads. */
struct bhv_stub {
	struct bhv_stub *st_next; /* the plugin's list */
	ffi_closure *st_closure;  /* libffi's, or NULL: a thunk */
	int st_thunk;		  /* its thunk (arch.h), or -1 */
	void (*st_fun)(ffi_cif *, void *, void **, void *); /* its body */
	uint8_t st_loc[BHV_FFI_ARGS_MAX];    /* a thunk's parameters: 0-5 an
						integer register, 6-13 a
						vector one, 14+ stack slot */
	struct bhv_cif st_cif;		     /* a call's (server, timeout, out,
						args...), a cast's (server,
						args...) -> int status */
	const struct smarm_behaviour *st_be; /* its behaviour */
	const struct bhv_op *st_op;	     /* its operation */
	void (*st_fn)(void);		     /* the executable address */
};

/* op's stub running fun (made once): 0 and *fn, SMARM_ENOMEM,
 * SMARM_EINTERNAL. */
int smarm__bhv_stub_add(const struct smarm_behaviour *b,
			const struct bhv_op *op,
			void (*fun)(ffi_cif *cif, void *ret, void **args,
				    void *user),
			void (**fn)(void));

/* The behaviour name (NULL: b) of b's plugin, for a holder of a
 * reference (no lock): 0 and *out, or SMARM_ENOBEHAVIOUR. */
int smarm__bhv_sibling(const struct smarm_behaviour *b, const char *name,
		       const struct smarm_behaviour **out);

/* The name b's plugin gives itself (its descriptor's; "?" if none). */
const char *smarm__bhv_plugin_name(const struct smarm_behaviour *b);
/* smarm_plugin_faults of the plugin whose text holds text (0: none
 * loaded there). Takes the fault table's lock: under no runtime lock. */
uint64_t smarm__bhv_text_faults(const void *text);
/* An address in the text of b's plugin (for smarm__bhv_text_faults). */
const void *smarm__bhv_plugin_text(const struct smarm_behaviour *b);

/* Take / give back a reference that keeps b's plugin mapped. */
void smarm__bhv_plugin_ref(const struct smarm_behaviour *b);
void smarm__bhv_plugin_unref(const struct smarm_behaviour *b);

/* ==== Envelopes and replies (gen_server.c) ==== */

/* A stop's how that a behaviour may give (smarm_gs_stop, smarm_sm_stop_with,
 * smarm_server_stop). */
static inline bool bhv_stop_how_ok(int how)
{
	return how == SMARM_EXIT_NORMAL || how == SMARM_EXIT_SHUTDOWN ||
	       how == SMARM_EXIT_CRASHED;
}

/* Free both ends of a channel this layer made and alone uses. */
static inline void bhv_chan_free(smarm_chan_t *ch)
{
	smarm_chan_receiver_free(ch);
	smarm_chan_sender_free(ch);
}

/* An inbox element: an op of en_be (or a system message), its arguments
 * and a call's reply route. No plugin reference (gen_server.c INV-3). */
struct bhv_env {
	const struct smarm_behaviour *en_be; /* the behaviour (no reference) */
	const struct bhv_op *en_op;	     /* the operation */
	struct bhv_msg en_msg;		     /* its arguments (owned) */
	smarm_chan_t *en_reply;		     /* a call's reply channel handle */
	uint64_t en_seq;		     /* the call's sequence number */
};

/* The message type of a server's (or machine's) inbox. */
const smarm_msgtype_t *smarm__gs_inbox_type(void);

/*
 * The calling actor's context cx, tagged a server's or a machine's, set
 * as it starts and cleared (NULL) as it ends: 0 or SMARM_ENOMEM. _is:
 * is cx, so tagged, the caller's own? O(1), cx never dereferenced.
 */
#define BHV_SELF_SERVER 0u
#define BHV_SELF_MACHINE 1u
int smarm__bhv_self_set(const void *cx, unsigned tag);
bool smarm__bhv_self_is(const void *cx, unsigned tag);

/*
 * What obs/ sees of a server or machine, copied from its tagged context
 * cx under the actor's cold lock, which its end takes to clear cx
 * before freeing it. A machine's state is read racily; each band in one
 * hold of its channel's lock. Strings are cut to their buffers.
 */
#define BHV_PEEK_TEXT 64
/* The observer's count of bands (SMARM_OBS_BANDS): a mailbox's
 * (SMARM__MBOX_BANDS) and room for one more. */
#define BHV_PEEK_BANDS 4
struct bhv_peek {
	int bp_kind;			  /* BHV_GEN_SERVER / BHV_GEN_STATEM */
	char bp_name[BHV_PEEK_TEXT];	  /* the behaviour's name */
	char bp_plugin[BHV_PEEK_TEXT];	  /* its plugin's name */
	char bp_state[BHV_PEEK_TEXT];	  /* a machine's state, else "" */
	uint32_t bp_band[BHV_PEEK_BANDS]; /* queued per band: signals,
					     timers, inbox (0: not made) */
	uint64_t bp_bytes;   /* bytes queued: elements, and heap argument
				blocks (not a batch's: envelopes only) */
	uint32_t bp_batched; /* requests taken from the inbox into its batch,
				not served yet (in bp_band's inbox too) */
	const void *bp_text; /* an address in its plugin's text: for
				smarm__bhv_text_faults, after the peek */
};
void smarm__bhv_peek(const void *cx, struct bhv_peek *out);

/* smarm_server_get_status of pid of node with no handle (for obs/):
 * its statuses; SMARM_ENOPROC for a pid that is no server. */
int smarm__bhv_status_of(smarm_node_t *node, smarm_pid_t pid,
			 smarm_server_status_t *out, uint64_t timeout_ns);

/* Free an envelope never received (the inbox's destructor): a call
 * gets SMARM_EDOWN. */
void smarm__bhv_env_free(void *elem);

/*
 * Who gives a call's answer (smarm__bhv_reply_send): the server's (or
 * machine's) own actor serving its mailbox, holding no lock (OWN: it
 * may park); anyone else, on any thread, maybe under a token set's
 * tt_lock (ANY: it must neither park nor take a lock but a leaf); or the
 * server's end, answering SMARM_EDOWN for what it leaves unanswered
 * (END: as ANY; the caller's monitor sees the end too).
 */
enum bhv_answer { BHV_ANS_OWN, BHV_ANS_ANY, BHV_ANS_END };

/*
 * A call's answer routed to a function of a layer above instead of a
 * reply channel (dist/: a served call's reply written straight to its
 * connection). The caller that sends the call with
 * smarm__bhv_server_call_routed keeps rt alive until rt_fn runs, which
 * it does exactly once (gen_server.c INV-1), with the answer as
 * smarm__bhv_reply_send's: status and, for 0 or SMARM_EREPLY, *v (its
 * memory passes; v NULL otherwise), and who gives it (enum bhv_answer:
 * only BHV_ANS_OWN may park; the others hand the answer to an actor).
 */
struct bhv_route {
	void (*rt_fn)(struct bhv_route *rt, int status, smarm_value_t *v,
		      int who);
};

/* The reply handle of a routed call: never a channel's (an odd
 * address); its sequence number is the struct bhv_route's address. */
#define BHV_ROUTED ((smarm_chan_t *)(uintptr_t)1)

/*
 * Send call opname(args) to s's server with its answer routed to rt
 * (a call operation; arguments checked as smarm_server_call's): 0, rt
 * now the call's until rt_fn runs; or a status of smarm_server_call's
 * send, and rt_fn never runs.
 */
int smarm__bhv_server_call_routed(smarm_server_t *s, const char *opname,
				  const smarm_value_t *args, size_t nargs,
				  struct bhv_route *rt);

/* Answer call (reply, seq) with status and *v (0 or SMARM_EREPLY: its
 * memory passes); a caller gone is no error. who: an enum bhv_answer
 * (what a routed answer may do: struct bhv_route). */
void smarm__bhv_reply_send(smarm_chan_t *reply, uint64_t seq, int status,
			   smarm_value_t *v, int who);

#endif /* SMARM_BEHAVIOUR_BHV_H */
