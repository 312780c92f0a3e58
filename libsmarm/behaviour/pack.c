/* SPDX-License-Identifier: MIT */
/*
 * pack.c - typed values in and out of messages: an operation's
 * arguments (smarm_value_t arrays, C varargs, a stub's ffi arguments)
 * into one self-contained block (bhv.h), a block's validation,
 * unpacking into ffi arguments, the prepared call interfaces and the
 * native call, and handler returns into owned reply values: the one
 * place that knows each protocol type's C type. A tuple travels as its
 * C struct's bytes (padding zeroed), 8-aligned, so a handler's by-value
 * struct argument is read straight from the block.
 *
 * Ownership: a block is packed inline in its struct bhv_msg when it fits
 * (BHV_INLINE_MAX), else malloc'd, and belongs to the bhv_msg's holder;
 * reply values own their STR/BYTES/TUPLE memory (freed by
 * smarm_value_release). No locks; no shared state but constant ffi type
 * descriptions, laid out statically so libffi never writes them.
 * Invariants: INV-1 a block smarm__bhv_pack made passes
 * smarm__bhv_block_check for its op: every str NUL-terminated with no
 * NUL inside, all data inside the block, every tuple 8-aligned with its
 * bools 0 or 1. INV-2 a failed pack allocates nothing and keeps nothing
 * of its input. See: docs/architecture/behaviours.md.
 */
#include "bhv.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* smarm_pid_t and smarm_bytes_t for libffi, laid out here (a size of 0
 * would make the first ffi_prep_cif write them, from any thread). */
static ffi_type *pid_elems[] = { &ffi_type_uint64, NULL };
ffi_type smarm__bhv_pid_ffi = { sizeof(smarm_pid_t), _Alignof(smarm_pid_t),
				FFI_TYPE_STRUCT, pid_elems };
static ffi_type *bytes_elems[] = { &ffi_type_pointer, &ffi_type_uint64, NULL };
static ffi_type bytes_ffi = { sizeof(smarm_bytes_t), _Alignof(smarm_bytes_t),
			      FFI_TYPE_STRUCT, bytes_elems };
_Static_assert(sizeof(size_t) == sizeof(uint64_t), "size_t is 64 bits");
_Static_assert(sizeof(bool) == 1, "bool is one byte");
_Static_assert(sizeof(smarm_pid_t) == 8 && _Alignof(smarm_pid_t) == 8,
	       "a pid is one uint64_t");
_Static_assert(sizeof(smarm_bytes_t) == 16 && _Alignof(smarm_bytes_t) == 8,
	       "smarm_bytes_t is a pointer and a size_t");
/* No tuple element needs more than a block's 8-byte alignment. */
_Static_assert(_Alignof(max_align_t) >= 8 && _Alignof(double) <= 8 &&
		       _Alignof(int64_t) <= 8,
	       "no tuple element is aligned past 8");
#define TUPLE_ALIGN(x) (((x) + 7u) & ~(size_t)7u)

void smarm_value_release(smarm_value_t *v)
{
	if (v == NULL)
		return;
	if ((v->type == SMARM_T_STR || v->type == SMARM_T_BYTES ||
	     v->type == SMARM_T_TUPLE) &&
	    v->v.p != NULL)
		free((void *)v->v.p);
	memset(v, 0, sizeof *v);
	v->type = SMARM_T_VOID;
}

ffi_type *smarm__bhv_ffi_type(int vtype)
{
	switch (vtype) {
#define FFI_OF(vt, nm, ct, ffi, vm, sm, rm, va, chk)                           \
	case vt:                                                               \
		return &ffi;
		BHV_SCALARS(FFI_OF)
#undef FFI_OF
	case SMARM_T_STR:
	case SMARM_T_BYTES: /* then a size_t */
		return &ffi_type_pointer;
	default:
		return &ffi_type_void;
	}
}

/*
 * The direct call: the commonest handler shape, two pointers then up to
 * three 64-bit integers returning nothing or a 64-bit integer, is
 * called through a C function type of that shape (uint64_t for every
 * integer: int64_t is passed the same way), with no libffi on the hot
 * path. Every other shape goes through ffi_call.
 */
typedef uint64_t (*direct0_fn)(void *, void *);
typedef uint64_t (*direct1_fn)(void *, void *, uint64_t);
typedef uint64_t (*direct2_fn)(void *, void *, uint64_t, uint64_t);
typedef uint64_t (*direct3_fn)(void *, void *, uint64_t, uint64_t, uint64_t);
typedef void (*vdirect0_fn)(void *, void *);
typedef void (*vdirect1_fn)(void *, void *, uint64_t);
typedef void (*vdirect2_fn)(void *, void *, uint64_t, uint64_t);
typedef void (*vdirect3_fn)(void *, void *, uint64_t, uint64_t, uint64_t);

/* bc_direct: 1 + args, plus DIRECT_VOID for a handler returning void. */
#define DIRECT_VOID 8u

static bool int64_type(int t)
{
	return t == SMARM_T_I64 || t == SMARM_T_U64;
}

static unsigned direct_shape(const struct bhv_op *op, ffi_type *const *lead,
			     unsigned nlead, ffi_type *ret)
{
	if (nlead != 2 || lead[0] != &ffi_type_pointer ||
	    lead[1] != &ffi_type_pointer || ret != NULL || op->op_nargs > 3)
		return 0;
	if (op->op_reply != SMARM_T_VOID && !int64_type(op->op_reply))
		return 0;
	for (unsigned i = 0; i < op->op_nargs; i++)
		if (!int64_type(op->op_args[i]))
			return 0;
	return 1u + op->op_nargs +
	       (op->op_reply == SMARM_T_VOID ? DIRECT_VOID : 0u);
}

int smarm__bhv_cif_prep(struct bhv_cif *c, const struct bhv_op *op,
			ffi_type *const *lead, unsigned nlead, ffi_type *ret)
{
	unsigned k = 0;
	if (SMARM_NEVER(nlead > BHV_LEAD_MAX))
		return SMARM_EINTERNAL;
	for (unsigned i = 0; i < nlead; i++)
		c->bc_types[k++] = lead[i];
	for (unsigned i = 0; i < op->op_nargs; i++) {
		const struct bhv_tuple *tu = bhv_arg_tuple(op, i);
		/* libffi takes it non-const; it only reads a laid-out aggregate
		 * (proto.c INV-3) */
		c->bc_types[k++] =
			tu != NULL ? (ffi_type *)&tu->tu_ffi
				   : smarm__bhv_ffi_type(op->op_args[i]);
		if (op->op_args[i] == SMARM_T_BYTES)
			c->bc_types[k++] = &ffi_type_uint64;
	}
	c->bc_nlead = nlead;
	c->bc_nffi = k;
	c->bc_direct = direct_shape(op, lead, nlead, ret);
	if (ret == NULL) {
		const struct bhv_tuple *tu = bhv_reply_tuple(op);
		if (op->op_reply == SMARM_T_BYTES)
			ret = &bytes_ffi;
		else if (tu != NULL)
			ret = (ffi_type *)&tu->tu_ffi;
		else
			ret = smarm__bhv_ffi_type(op->op_reply);
	}
	if (ffi_prep_cif(&c->bc_cif, FFI_DEFAULT_ABI, k, ret, c->bc_types) !=
	    FFI_OK)
		return SMARM_EINTERNAL;
	return 0;
}

/* A direct shape's call with integers a[]; its return into *ret. Always
 * inlined: LTO's growth budget left it out of a server's request
 * handling once the engine loop was one, +15 instructions a cast. */
static inline __attribute__((always_inline)) void
direct_call(unsigned shape, void (*fn)(void), void *p0, void *p1,
	    const uint64_t *a, union bhv_ret *ret)
{
	uint64_t r;

	switch (shape) {
	case 1:
		r = ((direct0_fn)(void *)fn)(p0, p1);
		break;
	case 2:
		r = ((direct1_fn)(void *)fn)(p0, p1, a[0]);
		break;
	case 3:
		r = ((direct2_fn)(void *)fn)(p0, p1, a[0], a[1]);
		break;
	case 4:
		r = ((direct3_fn)(void *)fn)(p0, p1, a[0], a[1], a[2]);
		break;
	case DIRECT_VOID + 1:
		((vdirect0_fn)(void *)fn)(p0, p1);
		return;
	case DIRECT_VOID + 2:
		((vdirect1_fn)(void *)fn)(p0, p1, a[0]);
		return;
	case DIRECT_VOID + 3:
		((vdirect2_fn)(void *)fn)(p0, p1, a[0], a[1]);
		return;
	default:
		((vdirect3_fn)(void *)fn)(p0, p1, a[0], a[1], a[2]);
		return;
	}
	if (ret != NULL)
		ret->a = (ffi_arg)r;
}

void smarm__bhv_invoke(const struct bhv_cif *c, void (*fn)(void),
		       struct bhv_unpacked *u, union bhv_ret *ret)
{
	union bhv_ret dummy;
	void *const *av = u->ua_av;
	uint64_t a[3] = { 0, 0, 0 };

	if (ret == NULL)
		ret = &dummy;
	if (c->bc_direct == 0) {
		ffi_call((ffi_cif *)&c->bc_cif, fn, ret, u->ua_av);
		return;
	}
	for (unsigned i = 0; i < (c->bc_direct & (DIRECT_VOID - 1)) - 1; i++)
		a[i] = *(const uint64_t *)av[2 + i];
	direct_call(c->bc_direct, fn, *(void **)av[0], *(void **)av[1], a, ret);
}

void smarm__bhv_invoke_block(const struct bhv_op *op, const struct bhv_block *b,
			     void *p0, void *p1, union bhv_ret *ret)
{
	const struct bhv_cif *c = &op->op_cif;
	uint64_t a[3] = { 0, 0, 0 };
	struct bhv_unpacked u;

	if (c->bc_direct == 0) {
		smarm__bhv_unpack(op, b, 2, &u);
		u.ua_av[0] = &p0;
		u.ua_av[1] = &p1;
		smarm__bhv_invoke(c, op->op_fn, &u, ret);
		return;
	}
	for (unsigned i = 0; i < op->op_nargs; i++)
		a[i] = b->bk_slots[i].sl_v.u; /* i64 and u64 share it */
	direct_call(c->bc_direct, op->op_fn, p0, p1, a, ret);
}

/* ---- tuples ---- */

/* Are the bool elements of tuple tu's struct at p all 0 or 1? */
static bool tuple_bools_ok(const struct bhv_tuple *tu, const void *p)
{
	for (unsigned i = 0; i < tu->tu_n; i++)
		if (tu->tu_types[i] == SMARM_T_BOOL &&
		    ((const unsigned char *)p)[tu->tu_off[i]] > 1)
			return false;
	return true;
}

/* Copy tuple tu's struct from src to dst: its elements, padding zeroed. */
static void tuple_copy(const struct bhv_tuple *tu, void *dst, const void *src)
{
	memset(dst, 0, tu->tu_ffi.size);
	for (unsigned i = 0; i < tu->tu_n; i++)
		memcpy((char *)dst + tu->tu_off[i],
		       (const char *)src + tu->tu_off[i],
		       tu->tu_elems[i]->size);
}

/* ---- packing ---- */

static bool vt_signed(int t)
{
	return t >= SMARM_T_I8 && t <= SMARM_T_I64;
}

static bool vt_unsigned(int t)
{
	return t >= SMARM_T_U8 && t <= SMARM_T_U64;
}

/* Is str or bytes data p of n bytes packable? 0, or as value_check. */
static int data_check(int type, const void *p, size_t n)
{
	if (n > SMARM_BYTES_MAX)
		return SMARM_ETOOBIG;
	if (n > 0 &&
	    (p == NULL || (type == SMARM_T_STR && memchr(p, '\0', n) != NULL)))
		return SMARM_EARGS;
	return 0;
}

/*
 * v as type t in *as where it is one: an integer converts to another
 * integer type when its value fits (Erlang's integers have no width; a
 * C literal is an int) and to a bool when 0 or 1; a float to the other
 * float type when exactly representable (or a NaN); nothing else. 0 or
 * SMARM_EARGS.
 */
static int value_convert(int t, const smarm_value_t *v, smarm_value_t *as)
{
	*as = *v;
	if (v->type == t)
		return 0;
	as->type = t;
	if (vt_signed(v->type) && vt_unsigned(t)) {
		if (v->v.i < 0)
			return SMARM_EARGS;
		as->v.u = (uint64_t)v->v.i;
	} else if (vt_unsigned(v->type) && vt_signed(t)) {
		if (v->v.u > INT64_MAX)
			return SMARM_EARGS;
		as->v.i = (int64_t)v->v.u;
	} else if ((vt_signed(v->type) && vt_signed(t)) ||
		   (vt_unsigned(v->type) && vt_unsigned(t))) {
		/* the same member: the range check follows */
	} else if (smarm__bhv_type_int(v->type) && t == SMARM_T_BOOL) {
		/* i and u share the word: 0 and 1 read the same in both */
		if (v->v.u > 1)
			return SMARM_EARGS;
		as->v.u = 0;
		as->v.b = v->v.i == 1;
	} else if (v->type == SMARM_T_F32 && t == SMARM_T_F64) {
		as->v.f64 = v->v.f32;
	} else if (v->type == SMARM_T_F64 && t == SMARM_T_F32) {
		double x = v->v.f64;
		/* out of float's range converts to nothing (C: undefined) */
		if (isfinite(x) && (x > FLT_MAX || x < -FLT_MAX))
			return SMARM_EARGS;
		as->v.u = 0;
		as->v.f32 = (float)x;
		if ((double)as->v.f32 != x && !isnan(x))
			return SMARM_EARGS;
	} else {
		return SMARM_EARGS;
	}
	return 0;
}

/* v as type t (a TUPLE: of tu) in *as, in range (value_convert): 0 and
 * the STR, BYTES or TUPLE data length in *dlen, SMARM_EARGS or
 * SMARM_ETOOBIG. */
static int value_check(int t, const struct bhv_tuple *tu,
		       const smarm_value_t *v, smarm_value_t *as, size_t *dlen)
{
	int rc = value_convert(t, v, as);
	*dlen = 0;
	if (rc != 0)
		return rc;
	switch (t) {
#define CHECK(vt, nm, ct, ffi, vm, sm, rm, va, chk)                            \
	case vt:                                                               \
		return chk(ct, as->v.vm) ? 0 : SMARM_EARGS;
		BHV_SCALARS(CHECK)
#undef CHECK
	case SMARM_T_STR:
	case SMARM_T_BYTES: /* a str's data takes its NUL too */
		*dlen = (size_t)v->len + (t == SMARM_T_STR);
		return data_check(t, v->v.p, v->len);
	case SMARM_T_TUPLE:
		if (SMARM_NEVER(tu == NULL))
			return SMARM_EINTERNAL;
		if (v->len != tu->tu_ffi.size || v->v.p == NULL ||
		    !tuple_bools_ok(tu, v->v.p))
			return SMARM_EARGS;
		*dlen = tu->tu_ffi.size;
		return 0;
	default:
		return SMARM_EARGS;
	}
}

static void msg_clear(struct bhv_msg *m)
{
	m->mg_heap = NULL;
	bhv_msg_inline(m)->bk_size = 0;
}

void smarm__bhv_msg_free(struct bhv_msg *m)
{
	if (m->mg_heap != NULL) /* an inline block: nothing to call */
		free(m->mg_heap);
	msg_clear(m);
}

int smarm__bhv_msg_copy(struct bhv_msg *dst, const struct bhv_msg *src)
{
	*dst = *src;
	if (src->mg_heap == NULL)
		return 0;
	dst->mg_heap = malloc(src->mg_heap->bk_size);
	if (dst->mg_heap == NULL) {
		msg_clear(dst);
		return SMARM_ENOMEM;
	}
	memcpy(dst->mg_heap, src->mg_heap, src->mg_heap->bk_size);
	return 0;
}

int smarm__bhv_msg_check(const struct bhv_op *op, const struct bhv_msg *m)
{
	const struct bhv_block *b = bhv_msg_block(m);
	if (m->mg_heap == NULL && b->bk_size > BHV_INLINE_MAX)
		return SMARM_EARGS;
	return smarm__bhv_block_check(op, b, b->bk_size);
}

static void slot_put(struct bhv_slot *s, const smarm_value_t *v)
{
	memset(s, 0, sizeof *s);
	s->sl_type = (uint8_t)v->type;
	switch (v->type) {
#define PUT(vt, nm, ct, ffi, vm, sm, rm, va, chk)                              \
	case vt:                                                               \
		s->sl_v.sm = v->v.vm;                                          \
		break;
		BHV_SCALARS(PUT)
#undef PUT
	default: /* str, bytes, tuple: pack_any */
		break;
	}
}

/* value_check of args into as[] and dlen[]: 0, or the first refusal's
 * status with *bad its index (nargs: the count is wrong). */
static int args_conv(const struct bhv_op *op, const smarm_value_t *args,
		     size_t nargs, smarm_value_t *as, size_t *dlen, size_t *bad)
{
	*bad = nargs;
	if (nargs != op->op_nargs)
		return SMARM_EARGS;
	for (size_t i = 0; i < nargs; i++) {
		int rc = value_check(op->op_args[i],
				     bhv_arg_tuple(op, (unsigned)i), &args[i],
				     &as[i], &dlen[i]);
		if (rc != 0) {
			*bad = i;
			return rc;
		}
	}
	return 0;
}

/* Where data of type t and length dlen starts at or after off (a tuple's
 * 8-aligned), and *end where it ends. */
static size_t data_at(int t, size_t off, size_t dlen, size_t *end)
{
	if (t == SMARM_T_TUPLE)
		off = TUPLE_ALIGN(off);
	*end = off + dlen;
	return off;
}

/* Any op's arguments, data copied in, inline or malloc'd. */
__attribute__((noinline)) static int pack_any(const struct bhv_op *op,
					      const smarm_value_t *args,
					      size_t nargs, struct bhv_msg *out)
{
	size_t dlen[SMARM_OP_ARGS_MAX], size, off;
	smarm_value_t as[SMARM_OP_ARGS_MAX];
	struct bhv_block *b;
	int rc;

	msg_clear(out);
	if (args == NULL && nargs > 0)
		return SMARM_EINVAL;
	rc = args_conv(op, args, nargs, as, dlen, &off);
	if (rc != 0)
		return rc;
	size = sizeof *b + nargs * sizeof(struct bhv_slot);
	for (size_t i = 0; i < nargs; i++)
		(void)data_at(op->op_args[i], size, dlen[i], &size);
	if (size <= BHV_INLINE_MAX) {
		b = bhv_msg_inline(out);
	} else {
		b = malloc(size);
		if (b == NULL)
			return SMARM_ENOMEM;
		out->mg_heap = b;
	}
	b->bk_size = (uint32_t)size;
	b->bk_nargs = (uint16_t)nargs;
	b->bk_flags = 0;
	off = sizeof *b + nargs * sizeof(struct bhv_slot);
	for (size_t i = 0; i < nargs; i++) {
		struct bhv_slot *s = &b->bk_slots[i];
		const smarm_value_t *v = &as[i];
		size_t at, end;
		if (v->type != SMARM_T_STR && v->type != SMARM_T_BYTES &&
		    v->type != SMARM_T_TUPLE) {
			slot_put(s, v);
			continue;
		}
		at = data_at(v->type, off, dlen[i], &end);
		if (at > off) /* a tuple's alignment: no stray bytes */
			memset((char *)b + off, 0, at - off);
		memset(s, 0, sizeof *s);
		s->sl_type = (uint8_t)v->type;
		s->sl_len =
			(uint32_t)(v->type == SMARM_T_TUPLE ? dlen[i] : v->len);
		s->sl_v.off = at;
		if (v->type == SMARM_T_TUPLE)
			tuple_copy(bhv_arg_tuple(op, (unsigned)i),
				   (char *)b + at, v->v.p);
		else if (v->len > 0)
			memcpy((char *)b + at, v->v.p, v->len);
		if (v->type == SMARM_T_STR)
			((char *)b)[at + v->len] = '\0';
		off = end;
	}
	return 0;
}

/* The fast path: an op_small op whose arguments are all 64-bit integers
 * of their own types, needing no conversion: a leaf. Else pack_any. */
static int pack_small(const struct bhv_op *op, const smarm_value_t *args,
		      struct bhv_msg *out)
{
	struct bhv_block *b = bhv_msg_inline(out);
	size_t nargs = op->op_nargs;

	for (size_t i = 0; i < nargs; i++) {
		int t = args[i].type;
		if (t != op->op_args[i] ||
		    (t != SMARM_T_I64 && t != SMARM_T_U64))
			return pack_any(op, args, nargs, out);
		b->bk_slots[i] = (struct bhv_slot){ .sl_type = (uint8_t)t,
						    .sl_v.u = args[i].v.u };
	}
	out->mg_heap = NULL;
	b->bk_size = (uint32_t)(sizeof *b + nargs * sizeof(struct bhv_slot));
	b->bk_nargs = (uint16_t)nargs;
	b->bk_flags = 0;
	return 0;
}

int smarm__bhv_pack(const struct bhv_op *op, const smarm_value_t *args,
		    size_t nargs, struct bhv_msg *out)
{
	if (op->op_small && nargs == op->op_nargs &&
	    (args != NULL || nargs == 0))
		return pack_small(op, args, out);
	return pack_any(op, args, nargs, out);
}

/*
 * A native caller's arguments (varargs *ap, else a stub's ffi array av:
 * bytes two entries, a tuple its struct) as values, then packed. Scalars
 * keep their promoted value, so one out of range is refused, not cut.
 */
static inline int pack_native(const struct bhv_op *op, va_list *ap,
			      void *const *av, struct bhv_msg *out)
{
	smarm_value_t v[SMARM_OP_ARGS_MAX];
	unsigned k = 0;
	msg_clear(out);
	for (unsigned i = 0; i < op->op_nargs; i++) {
		int t = op->op_args[i];
		const void *p;
		size_t n = 0;
		memset(&v[i], 0, sizeof v[i]);
		v[i].type = t;
		switch (t) {
#define NATIVE(vt, nm, ct, ffi, vm, sm, rm, va_t, chk)                         \
	case vt:                                                               \
		v[i].v.vm =                                                    \
			ap != NULL ? va_arg(*ap, va_t) : *(const ct *)av[k++]; \
		continue;
			BHV_SCALARS(NATIVE)
#undef NATIVE
		case SMARM_T_STR:
		case SMARM_T_BYTES:
			p = ap != NULL ? va_arg(*ap, const void *)
				       : *(const void *const *)av[k++];
			break;
		case SMARM_T_TUPLE: /* a stub's: libffi's copy of the struct */
			p = ap != NULL ? va_arg(*ap, const void *) : av[k++];
			break;
		default:
			return SMARM_EARGS;
		}
		if (t == SMARM_T_BYTES)
			n = ap != NULL ? va_arg(*ap, size_t)
				       : *(const size_t *)av[k++];
		else if (t == SMARM_T_STR && p != NULL)
			n = strnlen(p, SMARM_BYTES_MAX + 1);
		else if (t == SMARM_T_TUPLE)
			n = bhv_arg_tuple(op, i)->tu_ffi.size;
		if (n > SMARM_BYTES_MAX)
			return SMARM_ETOOBIG;
		if (p == NULL && t != SMARM_T_BYTES)
			return SMARM_EARGS; /* a str or tuple with no data */
		v[i].v.p = p;
		v[i].len = (uint32_t)n;
	}
	return smarm__bhv_pack(op, v, op->op_nargs, out);
}

int smarm__bhv_pack_va(const struct bhv_op *op, va_list ap, struct bhv_msg *out)
{
	va_list aq;
	int rc;
	va_copy(aq, ap);
	rc = pack_native(op, &aq, NULL, out);
	va_end(aq);
	return rc;
}

int smarm__bhv_pack_ffi(const struct bhv_op *op, void *const *av,
			struct bhv_msg *out)
{
	return pack_native(op, NULL, av, out);
}

/* ---- validation and unpacking ---- */

int smarm__bhv_block_check(const struct bhv_op *op, const void *p, size_t size)
{
	const struct bhv_block *b = p;
	size_t hdr;

	if (p == NULL || size < sizeof *b)
		return SMARM_EARGS;
	if (b->bk_size != size || b->bk_flags != 0 ||
	    b->bk_nargs != op->op_nargs)
		return SMARM_EARGS;
	hdr = sizeof *b + (size_t)b->bk_nargs * sizeof(struct bhv_slot);
	if (hdr > size)
		return SMARM_EARGS;
	for (unsigned i = 0; i < b->bk_nargs; i++) {
		const struct bhv_slot *s = &b->bk_slots[i];
		const struct bhv_tuple *tu;
		size_t n;
		if (s->sl_type != op->op_args[i])
			return SMARM_EARGS;
		/* A bool's word must be 0 or 1 (BHV_ANY checks nothing). */
		if (s->sl_type == SMARM_T_BOOL && s->sl_v.u > 1)
			return SMARM_EARGS;
		switch (s->sl_type) {
#define SLOT_CHECK(vt, nm, ct, ffi, vm, sm, rm, va, chk)                       \
	case vt:                                                               \
		if (!chk(ct, s->sl_v.sm))                                      \
			return SMARM_EARGS;                                    \
		break;
			BHV_SCALARS(SLOT_CHECK)
#undef SLOT_CHECK
		case SMARM_T_STR:
		case SMARM_T_BYTES:
		case SMARM_T_TUPLE:
			tu = bhv_arg_tuple(op, i);
			if (tu != NULL ? s->sl_len != tu->tu_ffi.size ||
						 s->sl_v.off % 8 != 0
				       : s->sl_len > SMARM_BYTES_MAX)
				return SMARM_EARGS;
			n = s->sl_len + (s->sl_type == SMARM_T_STR);
			/* Data lies after the slots and inside the block. */
			if (s->sl_v.off < hdr || s->sl_v.off > size ||
			    n > size - s->sl_v.off)
				return SMARM_EARGS;
			if (s->sl_type == SMARM_T_STR) {
				const char *d = (const char *)p + s->sl_v.off;
				if (d[s->sl_len] != '\0' ||
				    memchr(d, '\0', s->sl_len) != NULL)
					return SMARM_EARGS;
			}
			if (tu != NULL &&
			    !tuple_bools_ok(tu, (const char *)p + s->sl_v.off))
				return SMARM_EARGS;
			break;
		default:
			break;
		}
	}
	return 0;
}

void smarm__bhv_unpack(const struct bhv_op *op, const struct bhv_block *b,
		       unsigned nlead, struct bhv_unpacked *u)
{
	unsigned k = nlead, t = 0;
	for (unsigned i = 0; i < op->op_nargs; i++) {
		const struct bhv_slot *s = &b->bk_slots[i];
		switch (s->sl_type) {
#define TO_C(vt, nm, ct, ffi, vm, sm, rm, va, chk)                             \
	case vt:                                                               \
		*(ct *)&u->ua_tmp[t] = s->sl_v.sm;                             \
		break;
			BHV_SCALARS(TO_C)
#undef TO_C
		case SMARM_T_STR:
		case SMARM_T_BYTES: /* a pointer, and a bytes' length */
			u->ua_tmp[t].p = (const char *)b + s->sl_v.off;
			if (s->sl_type == SMARM_T_BYTES) {
				u->ua_av[k++] = &u->ua_tmp[t++];
				u->ua_tmp[t].sz = s->sl_len;
			}
			break;
		case SMARM_T_TUPLE: /* the struct itself, in the block (libffi
				       only reads an argument) */
			u->ua_av[k++] = (char *)b + s->sl_v.off;
			continue;
		default:
			break;
		}
		u->ua_av[k++] = &u->ua_tmp[t++];
	}
}

/* ---- replies ---- */

static int dup_data(int type, const void *p, size_t n, smarm_value_t *v)
{
	int rc = data_check(type, p, n);
	char *d;
	if (rc != 0)
		return rc;
	d = malloc(n + 1);
	if (d == NULL)
		return SMARM_ENOMEM;
	if (n > 0)
		memcpy(d, p, n);
	d[n] = '\0';
	v->type = type;
	v->len = (uint32_t)n;
	v->v.p = d;
	return 0;
}

/* Tuple tu's struct at p (checked) as an owned TUPLE value *v. */
static int dup_tuple(const struct bhv_tuple *tu, const void *p,
		     smarm_value_t *v)
{
	void *d;
	if (!tuple_bools_ok(tu, p))
		return SMARM_EARGS;
	d = malloc(tu->tu_ffi.size);
	if (d == NULL)
		return SMARM_ENOMEM;
	tuple_copy(tu, d, p);
	v->type = SMARM_T_TUPLE;
	v->len = (uint32_t)tu->tu_ffi.size;
	v->v.p = d;
	return 0;
}

int smarm__bhv_ret_value(int type, const struct bhv_tuple *tu,
			 const union bhv_ret *r, smarm_value_t *v)
{
	memset(v, 0, sizeof *v);
	v->type = type;
	switch (type) {
	case SMARM_T_VOID:
		return 0;
#define RET(vt, nm, ct, ffi, vm, sm, rm, va, chk)                              \
	case vt: {                                                             \
		ct x = r->rm; /* libffi widened it: narrow back */             \
		v->v.vm = x;                                                   \
		return 0;                                                      \
	}
		BHV_SCALARS(RET)
#undef RET
	case SMARM_T_STR: {
		const char *s = (const char *)(uintptr_t)r->a;
		if (s == NULL)
			return dup_data(type, "", 0, v);
		return dup_data(type, s, strnlen(s, SMARM_BYTES_MAX + 1), v);
	}
	case SMARM_T_BYTES:
		return dup_data(type, r->bytes.ptr, r->bytes.len, v);
	case SMARM_T_TUPLE:
		if (SMARM_NEVER(tu == NULL))
			return SMARM_EINTERNAL;
		return dup_tuple(tu, r->tup, v);
	default:
		return SMARM_EARGS;
	}
}

int smarm__bhv_value_copy(int type, const struct bhv_tuple *tu,
			  const smarm_value_t *v, smarm_value_t *out)
{
	smarm_value_t as;
	size_t dlen;
	int rc;
	memset(out, 0, sizeof *out);
	out->type = SMARM_T_VOID;
	if (type == SMARM_T_VOID)
		return v == NULL || v->type == SMARM_T_VOID ? 0 : SMARM_EARGS;
	if (v == NULL)
		return SMARM_EARGS;
	rc = value_check(type, tu, v, &as, &dlen);
	if (rc != 0)
		return rc;
	if (type == SMARM_T_STR || type == SMARM_T_BYTES)
		return dup_data(type, v->v.p, v->len, out);
	if (type == SMARM_T_TUPLE)
		return dup_tuple(tu, v->v.p, out);
	*out = as;
	return 0;
}

int smarm__bhv_args_check(const struct bhv_op *op, const smarm_value_t *args,
			  size_t nargs, size_t *bad)
{
	smarm_value_t as[SMARM_OP_ARGS_MAX];
	size_t dlen[SMARM_OP_ARGS_MAX];
	return args_conv(op, args, nargs, as, dlen, bad);
}
