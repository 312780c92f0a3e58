/* SPDX-License-Identifier: MIT */
/*
 * proto.c - the protocol parser: a behaviour's protocol text (the
 * grammar of smarm_plugin.h's Model) into a struct bhv_proto, once, at
 * load. '#' starts a comment to the end of the line; spaces and tabs
 * separate tokens:
 *
 *     protocol := { sep } [ op { sep { sep } op } { sep } ]
 *     sep      := newline | ';'
 *     op       := kind name '(' [ type { ',' type } ] ')' [ '->' type ]
 *     kind     := 'call' | 'cast' | 'info'     ('->' only after a call)
 *     name     := [A-Za-z_][A-Za-z0-9_]*       (at most SMARM_OP_NAME_MAX)
 *     type     := scalar | str | bytes | tuple
 *     tuple    := '(' scalar { ',' scalar } ')'  (at most SMARM_TUPLE_MAX)
 *     scalar   := i8 | i16 | i32 | i64 | u8 | u16 | u32 | u64 | f32 |
 *                 f64 | bool | pid
 *
 * A refusal names the line and column (from 1) of the offending token
 * and what was expected. A tuple holds no str or bytes (a pointer with
 * no owner in the handler's struct) and no tuple (a flat one does as
 * well); both are refused by name.
 *
 * Ownership: the ops array and each op's tuple types (op_tup) are
 * malloc'd here, freed by smarm__bhv_proto_free. No locks, no state.
 * Invariants: INV-1 a parsed protocol has at most SMARM_OPS_MAX ops, each
 * of at most SMARM_OP_ARGS_MAX arguments, names unique and valid C
 * identifiers; arguments are never VOID. INV-2 a failed parse leaves
 * nothing allocated. INV-3 a tuple type is laid out (its ffi_type's
 * size, alignment and offsets set) before the parse returns and never
 * written after: libffi reads it from any thread, and writes only an
 * aggregate whose size is still 0.
 * See: docs/plugins.md (Protocols).
 */
#include "bhv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[] = { [SMARM_T_VOID] = "void",
					  [SMARM_T_STR] = "str",
					  [SMARM_T_BYTES] = "bytes",
					  [SMARM_T_TUPLE] = "tuple",
#define NAME(vt, nm, ct, ffi, vm, sm, rm, va, chk) [vt] = nm,
					  BHV_SCALARS(NAME)
#undef NAME
};

/* The scalar types' spellings, for messages: "i8, i16, ..., pid". */
#define SPELL(vt, nm, ct, ffi, vm, sm, rm, va, chk) ", " nm
#define SCALARS (&(BHV_SCALARS(SPELL))[2]) /* past the first ", " */

const char *smarm__bhv_type_name(int type)
{
	return type >= 0 && type <= SMARM_T_TUPLE ? type_names[type] : "?";
}

const char *smarm__bhv_kind_name(int kind)
{
	static const char *const kinds[] = {
		[SMARM_SM_CAST] = "cast",
		[SMARM_SM_CALL] = "call",
		[SMARM_SM_INFO] = "info",
		[SMARM_SM_STATE_TIMEOUT] = "state_timeout",
		[SMARM_SM_EVENT_TIMEOUT] = "event_timeout",
		[SMARM_SM_TIMEOUT] = "timeout",
		[SMARM_SM_SHUTDOWN] = "shutdown",
		[SMARM_SM_EXIT] = "exit",
	};
	return kind >= SMARM_SM_CAST && kind <= SMARM_SM_EXIT ? kinds[kind]
							      : "?";
}

const char *smarm__bhv_tuple_name(const struct bhv_tuple *tu, char *buf,
				  size_t len)
{
	size_t n = 0;
	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (unsigned i = 0; i < tu->tu_n && n < len; i++) {
		int k = snprintf(buf + n, len - n, "%s%s", i ? ", " : "(",
				 smarm__bhv_type_name(tu->tu_types[i]));
		if (k < 0)
			break;
		n += (size_t)k;
	}
	if (n < len)
		snprintf(buf + n, len - n, ")");
	return buf;
}

struct cursor {
	const char *s;	 /* the next byte */
	unsigned line;	 /* of s, from 1 */
	const char *bol; /* the start of s's line */
	char *msg;	 /* the caller's message buffer, or NULL */
	size_t msglen;
};

static unsigned col_of(const struct cursor *c)
{
	return (unsigned)(c->s - c->bol) + 1;
}

/* Fill the message: "line L, column C: <fmt>". SMARM_EPROTOCOL. */
__attribute__((format(printf, 2, 3))) static int refuse(struct cursor *c,
							const char *fmt, ...)
{
	va_list ap;
	int n;
	if (c->msg == NULL || c->msglen == 0)
		return SMARM_EPROTOCOL;
	n = snprintf(c->msg, c->msglen, "line %u, column %u: ", c->line,
		     col_of(c));
	if (n >= 0 && (size_t)n < c->msglen) {
		va_start(ap, fmt);
		vsnprintf(c->msg + n, c->msglen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return SMARM_EPROTOCOL;
}

/* Skip spaces, tabs, carriage returns and a comment (not the newline). */
static void skip_blank(struct cursor *c)
{
	for (;;) {
		if (*c->s == ' ' || *c->s == '\t' || *c->s == '\r') {
			c->s++;
		} else if (*c->s == '#') {
			while (*c->s != '\0' && *c->s != '\n')
				c->s++;
		} else {
			return;
		}
	}
}

static void skip_seps(struct cursor *c)
{
	for (;;) {
		skip_blank(c);
		if (*c->s == '\n') {
			c->s++;
			c->line++;
			c->bol = c->s;
		} else if (*c->s == ';') {
			c->s++;
		} else {
			return;
		}
	}
}

static bool is_id0(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       ch == '_';
}

static bool is_id(char ch)
{
	return is_id0(ch) || (ch >= '0' && ch <= '9');
}

/* An identifier's length at c->s (0: none). */
static size_t id_len(const struct cursor *c)
{
	size_t n = 0;
	if (!is_id0(c->s[0]))
		return 0;
	while (is_id(c->s[n]))
		n++;
	return n;
}

static bool word_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* The first 8 bytes of name as one word, zero-padded; *len (may be NULL):
 * how many are the name's (8: it may go on). */
static uint64_t name_key(const char *name, size_t *len)
{
	uint64_t key = 0;
	size_t n = 0;

	while (n < 8 && name[n] != '\0') {
		key |= (uint64_t)(unsigned char)name[n] << (8 * n);
		n++;
	}
	if (len != NULL)
		*len = n;
	return key;
}

/* The type named at c->s (scalar, str, bytes) or 0; *len: its length. */
static int type_at(const struct cursor *c, size_t *len)
{
	size_t n = id_len(c);
	*len = n;
	for (int i = SMARM_T_I8; n > 0 && i <= SMARM_T_PID; i++)
		if (word_is(c->s, n, type_names[i]))
			return i;
	return 0;
}

/* Lay tuple tu out as C lays out its struct, once tu stays where it is
 * (its ffi_type points at tu_elems; INV-3). 0 or SMARM_EINTERNAL. */
static int tuple_layout(struct bhv_tuple *tu)
{
	for (unsigned i = 0; i < tu->tu_n; i++)
		tu->tu_elems[i] = smarm__bhv_ffi_type(tu->tu_types[i]);
	tu->tu_elems[tu->tu_n] = NULL;
	tu->tu_ffi.size = 0;
	tu->tu_ffi.alignment = 0;
	tu->tu_ffi.type = FFI_TYPE_STRUCT;
	tu->tu_ffi.elements = tu->tu_elems;
	if (ffi_get_struct_offsets(FFI_DEFAULT_ABI, &tu->tu_ffi, tu->tu_off) !=
	    FFI_OK)
		return SMARM_EINTERNAL;
	if (SMARM_NEVER(tu->tu_ffi.size > BHV_TUPLE_SIZE_MAX))
		return SMARM_EINTERNAL;
	return 0;
}

/* Parse a tuple type at c->s ('(') into a new op_tup entry, its index in
 * *tix; laid out once op_tup stops growing. */
static int parse_tuple(struct cursor *c, struct bhv_op *op, uint8_t *tix)
{
	struct bhv_tuple *tu;
	size_t n;
	int t;

	/* At most SMARM_OP_ARGS_MAX + 1 tuples per op: no overflow. */
	tu = realloc(op->op_tup, (op->op_ntup + 1u) * sizeof *tu);
	if (tu == NULL)
		return SMARM_ENOMEM;
	op->op_tup = tu;
	tu = &op->op_tup[op->op_ntup];
	memset(tu, 0, sizeof *tu);
	*tix = op->op_ntup++;
	c->s++; /* '(' */
	skip_blank(c);
	for (;;) {
		if (*c->s == ')' && tu->tu_n == 0)
			return refuse(c, "expected a tuple element type (a "
					 "tuple has at least one)");
		if (*c->s == '(')
			return refuse(c, "a tuple does not hold a tuple "
					 "(write its elements in place)");
		t = type_at(c, &n);
		if (t == SMARM_T_STR || t == SMARM_T_BYTES)
			return refuse(
				c,
				"a tuple holds no %s (only %s: no pointer "
				"inside)",
				type_names[t], SCALARS);
		if (t == 0)
			return refuse(c, "expected a tuple element type (%s)",
				      SCALARS);
		if (tu->tu_n == SMARM_TUPLE_MAX)
			return refuse(c, "more than %d elements in a tuple",
				      SMARM_TUPLE_MAX);
		tu->tu_types[tu->tu_n++] = (uint8_t)t;
		c->s += n;
		skip_blank(c);
		if (*c->s == ')')
			break;
		if (*c->s != ',')
			return refuse(c, "expected ',' or ')' in the tuple");
		c->s++;
		skip_blank(c);
	}
	c->s++; /* ')' */
	return 0;
}

/* Parse a type at c->s into *t (an argument's refuses void); a tuple's
 * op_tup index into *tix. */
static int parse_type(struct cursor *c, bool arg, struct bhv_op *op, uint8_t *t,
		      uint8_t *tix)
{
	size_t n;
	if (*c->s == '(') {
		*t = SMARM_T_TUPLE;
		return parse_tuple(c, op, tix);
	}
	*t = (uint8_t)type_at(c, &n);
	if (*t != 0) {
		c->s += n;
		return 0;
	}
	if (n > 0 && word_is(c->s, n, "void"))
		return refuse(c, arg ? "expected an argument type (void is "
				       "no value)"
				     : "expected a reply type (a call "
				       "without a reply has no '->')");
	return refuse(c,
		      "expected a type (%s, str, bytes, or a tuple such as "
		      "(i32, f64))",
		      SCALARS);
}

static int parse_op_text(struct cursor *c, struct bhv_proto *p,
			 struct bhv_op *op)
{
	size_t n = id_len(c);
	int rc;

	op->op_line = c->line;
	op->op_col = col_of(c);
	for (int k = BHV_CAST; k <= BHV_INFO && op->op_kind == 0; k++)
		if (word_is(c->s, n, smarm__bhv_kind_name(k)))
			op->op_kind = (uint8_t)k;
	if (op->op_kind == 0)
		return refuse(c, "expected 'call', 'cast' or 'info'");
	c->s += n;
	if (*c->s != ' ' && *c->s != '\t')
		return refuse(c, "expected a space before the operation name");
	skip_blank(c);
	n = id_len(c);
	if (n == 0)
		return refuse(c, "expected an operation name (a C identifier)");
	if (n > SMARM_OP_NAME_MAX)
		return refuse(c, "operation name longer than %d bytes",
			      SMARM_OP_NAME_MAX);
	for (size_t i = 0; i < p->pr_n; i++)
		if (word_is(c->s, n, p->pr_ops[i].op_name))
			return refuse(c,
				      "operation '%s' already declared on "
				      "line %u",
				      p->pr_ops[i].op_name,
				      p->pr_ops[i].op_line);
	memcpy(op->op_name, c->s, n);
	op->op_key = name_key(op->op_name, NULL);
	c->s += n;
	skip_blank(c);
	if (*c->s != '(')
		return refuse(c, "expected '(' after '%s'", op->op_name);
	c->s++;
	skip_blank(c);
	if (*c->s != ')') {
		for (;;) {
			if (op->op_nargs == SMARM_OP_ARGS_MAX)
				return refuse(c, "more than %d arguments",
					      SMARM_OP_ARGS_MAX);
			rc = parse_type(c, true, op, &op->op_args[op->op_nargs],
					&op->op_tix[op->op_nargs]);
			if (rc != 0)
				return rc;
			op->op_nargs++;
			skip_blank(c);
			if (*c->s == ')')
				break;
			if (*c->s != ',')
				return refuse(c, "expected ',' or ')'");
			c->s++;
			skip_blank(c);
		}
	}
	c->s++; /* ')' */
	skip_blank(c);
	op->op_small = sizeof(struct bhv_block) +
			       op->op_nargs * sizeof(struct bhv_slot) <=
		       BHV_INLINE_MAX;
	for (unsigned i = 0; i < op->op_nargs; i++)
		if (op->op_args[i] == SMARM_T_STR ||
		    op->op_args[i] == SMARM_T_BYTES ||
		    op->op_args[i] == SMARM_T_TUPLE)
			op->op_small = false;
	op->op_reply = SMARM_T_VOID;
	if (c->s[0] == '-' && c->s[1] == '>') {
		if (op->op_kind != BHV_CALL)
			return refuse(c, "only a call has a reply ('->')");
		c->s += 2;
		skip_blank(c);
		rc = parse_type(c, false, op, &op->op_reply,
				&op->op_tix[SMARM_OP_ARGS_MAX]);
		if (rc != 0)
			return rc;
		skip_blank(c);
	}
	if (*c->s != '\0' && *c->s != '\n' && *c->s != ';')
		return refuse(
			c,
			op->op_kind == BHV_CALL && op->op_reply == SMARM_T_VOID
				? "expected '->', ';' or the end of the line"
				: "expected ';' or the end of the line");
	return 0;
}

/* One op at c->s into *op; on failure nothing of it is left allocated. */
static int parse_op(struct cursor *c, struct bhv_proto *p, struct bhv_op *op)
{
	int rc;

	memset(op, 0, sizeof *op);
	rc = parse_op_text(c, p, op);
	/* op_tup has stopped growing: lay its tuples out (INV-3). */
	for (unsigned i = 0; rc == 0 && i < op->op_ntup; i++)
		rc = tuple_layout(&op->op_tup[i]);
	if (rc != 0) {
		free(op->op_tup);
		op->op_tup = NULL;
		op->op_ntup = 0;
	}
	return rc;
}

int smarm__bhv_proto_parse(const char *text, struct bhv_proto *p, char *msg,
			   size_t msglen)
{
	struct cursor c = { text, 1, text, msg, msglen };
	size_t cap = 0;
	int rc;

	p->pr_ops = NULL;
	p->pr_n = 0;
	if (msg != NULL && msglen > 0)
		msg[0] = '\0';
	for (;;) {
		skip_seps(&c);
		if (*c.s == '\0')
			return 0;
		if (p->pr_n == SMARM_OPS_MAX) {
			rc = refuse(&c, "more than %d operations",
				    SMARM_OPS_MAX);
			break;
		}
		if (p->pr_n == cap) {
			size_t ncap = cap ? 2 * cap : 8;
			struct bhv_op *nops;
			if (ncap > SMARM_OPS_MAX)
				ncap = SMARM_OPS_MAX;
			nops = realloc(p->pr_ops, ncap * sizeof *nops);
			if (nops == NULL) {
				rc = SMARM_ENOMEM;
				break;
			}
			p->pr_ops = nops;
			cap = ncap;
		}
		rc = parse_op(&c, p, &p->pr_ops[p->pr_n]);
		if (rc != 0)
			break;
		p->pr_ops[p->pr_n].op_index = (uint16_t)p->pr_n;
		p->pr_n++;
	}
	smarm__bhv_proto_free(p); /* the ops parsed (INV-2) */
	return rc;
}

void smarm__bhv_proto_free(struct bhv_proto *p)
{
	for (size_t i = 0; i < p->pr_n; i++)
		free(p->pr_ops[i].op_tup);
	free(p->pr_ops);
	p->pr_ops = NULL;
	p->pr_n = 0;
}

const struct bhv_op *smarm__bhv_proto_find(const struct bhv_proto *p,
					   const char *name, int kind)
{
	size_t n;
	uint64_t key = name_key(name, &n);

	for (size_t i = 0; i < p->pr_n; i++) {
		const struct bhv_op *op = &p->pr_ops[i];
		/* Equal keys of a name shorter than 8 are equal names. */
		if (op->op_key == key &&
		    (n < 8 || strcmp(op->op_name + 8, name + 8) == 0))
			return kind == 0 || op->op_kind == kind ? op : NULL;
	}
	return NULL;
}

int smarm__bhv_proto_get(const struct bhv_proto *p, const char *name, int kind,
			 const struct bhv_op **out)
{
	const struct bhv_op *op = smarm__bhv_proto_find(p, name, 0);
	*out = NULL;
	if (op == NULL)
		return SMARM_ENOOP;
	if (kind != 0 && op->op_kind != kind)
		return SMARM_EOPKIND; /* a cast called, a call cast, ... */
	*out = op;
	return 0;
}
