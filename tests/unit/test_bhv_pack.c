/* SPDX-License-Identifier: MIT */
/*
 * test_bhv_pack.c - message blocks (behaviour/pack.c): every type packed
 * and handed to a native function through a prepared cif after lead
 * parameters; range, count, type, NUL and size refusals; varargs and
 * ffi-argument packing; the validation of blocks from outside (every
 * corruption refused, never a read past the block); handler returns and
 * reply values; tuples passed and returned as C structs by value, their
 * padding never copied, their size and bools checked.
 */
#include "harness.h"

#include "behaviour/bhv.h"

#include <string.h>

static struct bhv_proto p;

static const struct bhv_op *op_of(const char *text)
{
	char msg[128];
	smarm__bhv_proto_free(&p);
	ck_assert_int_eq(smarm__bhv_proto_parse(text, &p, msg, sizeof msg), 0);
	return &p.pr_ops[0];
}

static void teardown(void)
{
	smarm__bhv_proto_free(&p);
}

/* A native function as a handler would be: two lead pointers. */
static void *seen_state, *seen_cx;
static char seen[512];
static int64_t all_types(void *state, void *cx, int8_t a, int16_t b, int32_t c,
			 int64_t d, uint8_t e, uint16_t f, uint32_t g,
			 uint64_t h, float i, double j, bool k, const char *l,
			 const void *m, size_t mlen, smarm_pid_t n)
{
	seen_state = state;
	seen_cx = cx;
	snprintf(seen, sizeof seen,
		 "%d %d %d %lld %u %u %u %llu %.1f %.2f %d %s %.*s/%zu %llu", a,
		 b, c, (long long)d, e, f, g, (unsigned long long)h, i, j, k, l,
		 (int)mlen, (const char *)m, mlen, (unsigned long long)n.id);
	return d * 2;
}

#define ALL                                                                    \
	"call all(i8,i16,i32,i64,u8,u16,u32,u64,f32,f64,bool,str,bytes,"       \
	"pid) -> i64"
#define ALL_SEEN "-8 -16 -32 -64 8 16 32 64 1.5 2.25 1 hi by/2 77"

static void all_values(smarm_value_t v[14])
{
	memset(v, 0, 14 * sizeof *v);
	for (int i = 0; i < 14; i++)
		v[i].type = i + 1;
	v[0].v.i = -8;
	v[1].v.i = -16;
	v[2].v.i = -32;
	v[3].v.i = -64;
	v[4].v.u = 8;
	v[5].v.u = 16;
	v[6].v.u = 32;
	v[7].v.u = 64;
	v[8].v.f32 = 1.5f;
	v[9].v.f64 = 2.25;
	v[10].v.b = true;
	v[11].v.p = "hi";
	v[11].len = 2;
	v[12].v.p = "by";
	v[12].len = 2;
	v[13].v.pid.id = 77;
}

static int64_t call_block(const struct bhv_op *op, const struct bhv_msg *m)
{
	const struct bhv_block *b = bhv_msg_block(m);
	static ffi_type *lead[] = { &ffi_type_pointer, &ffi_type_pointer };
	struct bhv_cif c;
	struct bhv_unpacked u;
	union bhv_ret r;
	void *st = (void *)0x5, *cx = (void *)0x6;
	smarm_value_t v;

	ck_assert_int_eq(smarm__bhv_msg_check(op, m), 0);
	ck_assert_int_eq(smarm__bhv_cif_prep(&c, op, lead, 2, NULL), 0);
	ck_assert_uint_eq(c.bc_nffi, 2 + 15);
	smarm__bhv_unpack(op, b, 2, &u);
	u.ua_av[0] = &st;
	u.ua_av[1] = &cx;
	seen[0] = '\0';
	smarm__bhv_invoke(&c, (void (*)(void))all_types, &u, &r);
	ck_assert_ptr_eq(seen_state, st);
	ck_assert_ptr_eq(seen_cx, cx);
	ck_assert_int_eq(smarm__bhv_ret_value(SMARM_T_I64, NULL, &r, &v), 0);
	return v.v.i;
}

START_TEST(test_bhv_pack_every_type_reaches_the_native_function)
{
	const struct bhv_op *op = op_of(ALL);
	smarm_value_t v[14];
	struct bhv_msg b;
	all_values(v);
	ck_assert_int_eq(smarm__bhv_pack(op, v, 14, &b), 0);
	ck_assert_int_eq(call_block(op, &b), -128);
	ck_assert_str_eq(seen, ALL_SEEN);
	smarm__bhv_msg_free(&b);
}
END_TEST

static int pack_va(const struct bhv_op *op, struct bhv_msg *b, ...)
{
	va_list ap;
	int rc;
	va_start(ap, b);
	rc = smarm__bhv_pack_va(op, ap, b);
	va_end(ap);
	return rc;
}

START_TEST(test_bhv_pack_varargs_and_ffi_arguments)
{
	const struct bhv_op *op = op_of(ALL);
	struct bhv_msg b;
	smarm_pid_t pid = { 77 };
	ck_assert_int_eq(pack_va(op, &b, -8, -16, -32, (int64_t)-64, 8u, 16u,
				 32u, (uint64_t)64, 1.5, 2.25, 1, "hi",
				 (const void *)"by", (size_t)2, pid),
			 0);
	ck_assert_int_eq(call_block(op, &b), -128);
	ck_assert_str_eq(seen, ALL_SEEN);
	smarm__bhv_msg_free(&b);

	int8_t a = -8;
	int16_t bb = -16;
	int32_t c = -32;
	int64_t d = -64;
	uint8_t e = 8;
	uint16_t f = 16;
	uint32_t g = 32;
	uint64_t h = 64;
	float i = 1.5f;
	double j = 2.25;
	bool k = true;
	const char *l = "hi";
	const void *m = "by";
	size_t mlen = 2;
	void *av[] = { &a, &bb, &c, &d, &e, &f,	   &g,	&h,
		       &i, &j,	&k, &l, &m, &mlen, &pid };
	ck_assert_int_eq(smarm__bhv_pack_ffi(op, av, &b), 0);
	ck_assert_int_eq(call_block(op, &b), -128);
	ck_assert_str_eq(seen, ALL_SEEN);
	smarm__bhv_msg_free(&b);
	l = NULL;
	ck_assert_int_eq(smarm__bhv_pack_ffi(op, av, &b), SMARM_EARGS);
	ck_assert_int_eq(pack_va(op, &b, -8, -16, -32, (int64_t)-64, 8u, 16u,
				 32u, (uint64_t)64, 1.5, 2.25, 1,
				 (const char *)NULL, (const void *)"by",
				 (size_t)2, pid),
			 SMARM_EARGS);
}
END_TEST

START_TEST(test_bhv_pack_refusals)
{
	const struct bhv_op *op;
	struct bhv_msg b;
	smarm_value_t v[2];

	memset(v, 0, sizeof v);
	op = op_of("cast x(i8)");
	ck_assert_int_eq(smarm__bhv_pack(op, NULL, 1, &b), SMARM_EINVAL);
	ck_assert_int_eq(smarm__bhv_pack(op, v, 0, &b), SMARM_EARGS);
	ck_assert_int_eq(smarm__bhv_pack(op, v, 2, &b), SMARM_EARGS);
	/* another integer type converts when its value fits; a float
	 * never does */
	v[0].type = SMARM_T_I16;
	v[0].v.i = 5;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), 0);
	smarm__bhv_msg_free(&b);
	v[0].v.i = 300;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), SMARM_EARGS);
	v[0].type = SMARM_T_U64;
	v[0].v.u = UINT64_MAX;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), SMARM_EARGS);
	v[0].type = SMARM_T_F64;
	v[0].v.f64 = 1.0;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), SMARM_EARGS);
	v[0].type = SMARM_T_I8;
	v[0].v.i = 128;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), SMARM_EARGS);
	v[0].v.i = -129;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), SMARM_EARGS);
	v[0].v.i = -128;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), 0);
	smarm__bhv_msg_free(&b);
	op = op_of("cast x(u32)");
	v[0].type = SMARM_T_U32;
	v[0].v.u = (uint64_t)UINT32_MAX + 1;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), SMARM_EARGS);
	op = op_of("cast x(str)");
	v[0].type = SMARM_T_STR;
	v[0].v.p = "a\0b";
	v[0].len = 3;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), SMARM_EARGS);
	v[0].v.p = NULL;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), SMARM_EARGS);
	v[0].len = 0; /* the empty str needs no pointer */
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), 0);
	smarm__bhv_msg_free(&b);
	op = op_of("cast x(bytes)");
	v[0].type = SMARM_T_BYTES;
	v[0].len = (uint32_t)SMARM_BYTES_MAX + 1;
	v[0].v.p = "";
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), SMARM_ETOOBIG);
	char *big = calloc(1, SMARM_BYTES_MAX);
	ck_assert_ptr_nonnull(big);
	v[0].v.p = big;
	v[0].len = (uint32_t)SMARM_BYTES_MAX;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), 0);
	ck_assert_ptr_nonnull(b.mg_heap); /* too big to go inline */
	ck_assert_int_eq(smarm__bhv_msg_check(op, &b), 0);
	smarm__bhv_msg_free(&b);
	free(big);
}
END_TEST

START_TEST(test_bhv_pack_block_check_refuses_every_corruption)
{
	const struct bhv_op *op = op_of("cast x(i8, str, bytes)");
	smarm_value_t v[3];
	struct bhv_msg msg;
	const struct bhv_block *b;
	unsigned char *raw;
	size_t size;

	memset(v, 0, sizeof v);
	v[0].type = SMARM_T_I8;
	v[1].type = SMARM_T_STR;
	v[1].v.p = "abc";
	v[1].len = 3;
	v[2].type = SMARM_T_BYTES;
	v[2].v.p = "xy";
	v[2].len = 2;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 3, &msg), 0);
	b = bhv_msg_block(&msg);
	size = b->bk_size;
	raw = malloc(size);
	ck_assert_int_eq(smarm__bhv_block_check(op, NULL, size), SMARM_EARGS);
	ck_assert_int_eq(smarm__bhv_block_check(op, b, 4), SMARM_EARGS);
	ck_assert_int_eq(smarm__bhv_block_check(op, b, size - 1), SMARM_EARGS);
#define MUTATE(stmt)                                                           \
	do {                                                                   \
		memcpy(raw, b, size);                                          \
		struct bhv_block *m = (struct bhv_block *)raw;                 \
		stmt;                                                          \
		ck_assert_int_eq(smarm__bhv_block_check(op, m, size),          \
				 SMARM_EARGS);                                 \
	} while (0)
	MUTATE(m->bk_nargs = 2);
	MUTATE(m->bk_flags = 1);
	MUTATE(m->bk_slots[0].sl_type = SMARM_T_I16);
	MUTATE(m->bk_slots[0].sl_v.i = 300);
	MUTATE(m->bk_slots[1].sl_v.off = size);
	MUTATE(m->bk_slots[1].sl_v.off = 2);
	MUTATE(m->bk_slots[1].sl_v.off = UINT64_MAX - 1);
	MUTATE(m->bk_slots[1].sl_len = 4);
	MUTATE(m->bk_slots[1].sl_len = UINT32_MAX);
	MUTATE(raw[m->bk_slots[1].sl_v.off + 1] = '\0');
	MUTATE(raw[m->bk_slots[1].sl_v.off + 3] = 'd');
	MUTATE(m->bk_slots[2].sl_len = 100);
	free(raw);
	smarm__bhv_msg_free(&msg);
}
END_TEST

START_TEST(test_bhv_pack_returns_and_reply_values)
{
	union bhv_ret r;
	smarm_value_t v, in;

	memset(&r, 0, sizeof r);
	r.s = -1;
	ck_assert_int_eq(smarm__bhv_ret_value(SMARM_T_I8, NULL, &r, &v), 0);
	ck_assert_int_eq(v.v.i, -1);
	ck_assert_int_eq(smarm__bhv_ret_value(SMARM_T_U8, NULL, &r, &v), 0);
	ck_assert_uint_eq(v.v.u, 255);
	r.a = (ffi_arg)(uintptr_t) "text";
	ck_assert_int_eq(smarm__bhv_ret_value(SMARM_T_STR, NULL, &r, &v), 0);
	ck_assert_str_eq(v.v.p, "text");
	ck_assert_uint_eq(v.len, 4);
	smarm_value_release(&v);
	ck_assert_int_eq(v.type, SMARM_T_VOID);
	ck_assert_ptr_null(v.v.p);
	smarm_value_release(NULL);
	r.bytes.ptr = NULL;
	r.bytes.len = 3;
	ck_assert_int_eq(smarm__bhv_ret_value(SMARM_T_BYTES, NULL, &r, &v),
			 SMARM_EARGS);
	r.bytes.ptr = "abc";
	ck_assert_int_eq(smarm__bhv_ret_value(SMARM_T_BYTES, NULL, &r, &v), 0);
	ck_assert_int_eq(memcmp(v.v.p, "abc", 3), 0);
	smarm_value_release(&v);

	memset(&in, 0, sizeof in);
	ck_assert_int_eq(smarm__bhv_value_copy(SMARM_T_VOID, NULL, NULL, &v),
			 0);
	ck_assert_int_eq(smarm__bhv_value_copy(SMARM_T_I64, NULL, NULL, &v),
			 SMARM_EARGS);
	in.type = SMARM_T_I32; /* an integer converts */
	in.v.i = -3;
	ck_assert_int_eq(smarm__bhv_value_copy(SMARM_T_I64, NULL, &in, &v), 0);
	ck_assert_int_eq(v.type, SMARM_T_I64);
	ck_assert_int_eq(v.v.i, -3);
	ck_assert_int_eq(smarm__bhv_value_copy(SMARM_T_U64, NULL, &in, &v),
			 SMARM_EARGS); /* a negative one is no u64 */
	in.type = SMARM_T_F64;
	ck_assert_int_eq(smarm__bhv_value_copy(SMARM_T_I64, NULL, &in, &v),
			 SMARM_EARGS);
	ck_assert_int_eq(smarm__bhv_value_copy(SMARM_T_VOID, NULL, &in, &v),
			 SMARM_EARGS);
	in.type = SMARM_T_STR;
	in.v.p = "zz";
	in.len = 2;
	ck_assert_int_eq(smarm__bhv_value_copy(SMARM_T_STR, NULL, &in, &v), 0);
	ck_assert_ptr_ne(v.v.p, in.v.p);
	ck_assert_str_eq(v.v.p, "zz");
	smarm_value_release(&v);
}
END_TEST

/* The direct shapes: (ptr, ptr, up to three 64-bit ints) -> void/i64. */
static int64_t direct_seen;
static int64_t d0(void *st, void *cx)
{
	return (int64_t)((char *)cx - (char *)st);
}
static int64_t d3(void *st, void *cx, int64_t a, uint64_t b, int64_t c)
{
	(void)st;
	(void)cx;
	return a * 100 + (int64_t)b * 10 + c;
}
static void v2(void *st, void *cx, uint64_t a, int64_t b)
{
	(void)st;
	(void)cx;
	direct_seen = (int64_t)a - b;
}

static void v2i(void *st, void *cx, int32_t a, int64_t b)
{
	(void)st;
	(void)cx;
	direct_seen = a - b;
}

static int64_t run_direct(const char *text, void (*fn)(void),
			  const smarm_value_t *args, size_t n, bool direct)
{
	static ffi_type *lead[] = { &ffi_type_pointer, &ffi_type_pointer };
	const struct bhv_op *op = op_of(text);
	struct bhv_msg b;
	struct bhv_cif c;
	struct bhv_unpacked u;
	union bhv_ret r;
	smarm_value_t v;
	char base[8];
	void *st = base, *cx = base + 5;

	ck_assert_int_eq(smarm__bhv_cif_prep(&c, op, lead, 2, NULL), 0);
	ck_assert_int_eq(c.bc_direct != 0, direct);
	ck_assert_int_eq(smarm__bhv_pack(op, args, n, &b), 0);
	smarm__bhv_unpack(op, bhv_msg_block(&b), 2, &u);
	u.ua_av[0] = &st;
	u.ua_av[1] = &cx;
	memset(&r, 0, sizeof r);
	smarm__bhv_invoke(&c, fn, &u, &r);
	ck_assert_int_eq(smarm__bhv_ret_value(op->op_reply, NULL, &r, &v), 0);
	/* The same call straight from the block (a server's dispatch). */
	struct bhv_op own = *op;
	union bhv_ret r2;
	smarm_value_t v2v;
	int64_t seen = direct_seen;
	own.op_cif = c;
	own.op_fn = fn;
	direct_seen = 0;
	memset(&r2, 0, sizeof r2);
	smarm__bhv_invoke_block(&own, bhv_msg_block(&b), st, cx, &r2);
	ck_assert_int_eq(smarm__bhv_ret_value(op->op_reply, NULL, &r2, &v2v),
			 0);
	ck_assert_int_eq(v2v.v.i, v.v.i);
	ck_assert_int_eq(direct_seen, seen);
	smarm__bhv_msg_free(&b);
	return v.v.i;
}

START_TEST(test_bhv_pack_direct_calls_match_libffi)
{
	smarm_value_t a[3];
	memset(a, 0, sizeof a);
	a[0].type = SMARM_T_I64;
	a[0].v.i = -3;
	a[1].type = SMARM_T_U64;
	a[1].v.u = 4;
	a[2].type = SMARM_T_I64;
	a[2].v.i = 5;
	ck_assert_int_eq(run_direct("call z() -> i64", (void (*)(void))d0, NULL,
				    0, true),
			 5);
	ck_assert_int_eq(run_direct("call t(i64, u64, i64) -> i64",
				    (void (*)(void))d3, a, 3, true),
			 -300 + 40 + 5);
	a[0].type = SMARM_T_U64;
	a[0].v.u = 10;
	a[1].type = SMARM_T_I64;
	a[1].v.i = 4;
	direct_seen = 0;
	run_direct("cast w(u64, i64)", (void (*)(void))v2, a, 2, true);
	ck_assert_int_eq(direct_seen, 6);
	/* an i32 argument is not a direct shape: libffi, same answer */
	a[0].type = SMARM_T_I32;
	a[0].v.i = 10;
	a[1].type = SMARM_T_I64;
	a[1].v.i = 4;
	direct_seen = 0;
	run_direct("cast w(i32, i64)", (void (*)(void))v2i, a, 2, false);
	ck_assert_int_eq(direct_seen, 6);
}
END_TEST

/* Conversions: an integer 0 or 1 to a bool, a float exactly of the
 * other float type to it; nothing else across kinds; a NULL str is
 * refused. */
START_TEST(test_bhv_pack_conversions_bool_and_float)
{
	const struct bhv_op *op = op_of("cast x(bool, f32, f64)");
	smarm_value_t v[3];
	struct bhv_msg b;
	const struct bhv_block *blk;
	size_t bad;

	memset(v, 0, sizeof v);
	v[0].type = SMARM_T_I32;
	v[0].v.i = 1;
	v[1].type = SMARM_T_F64;
	v[1].v.f64 = 1.5;
	v[2].type = SMARM_T_F32;
	v[2].v.f32 = 0.1f;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 3, &b), 0);
	blk = bhv_msg_block(&b);
	ck_assert_int_eq(blk->bk_slots[0].sl_type, SMARM_T_BOOL);
	ck_assert_uint_eq(blk->bk_slots[0].sl_v.u, 1);
	ck_assert(blk->bk_slots[1].sl_v.f32 == 1.5f);
	ck_assert(blk->bk_slots[2].sl_v.f64 == (double)0.1f);
	smarm__bhv_msg_free(&b);
	v[0].type = SMARM_T_U8;
	v[0].v.u = 0;
	ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad), 0);
	v[0].v.u = 2; /* no bool */
	ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad), SMARM_EARGS);
	ck_assert_uint_eq(bad, 0);
	v[0].type = SMARM_T_I64;
	v[0].v.i = -1;
	ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad), SMARM_EARGS);
	v[0].type = SMARM_T_F64; /* a float is no bool */
	v[0].v.f64 = 1.0;
	ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad), SMARM_EARGS);
	v[0].type = SMARM_T_BOOL;
	v[0].v.u = 0;
	v[0].v.b = true;
	ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad), 0);
	/* f64 to f32: exact values, infinities and NaN pass */
	static const double fits[] = {
		0.0,	 -0.0,	    0.25,	3.0e38,
		-3.0e38, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0
	};
	for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
		v[1].v.f64 = fits[i];
		if (fits[i] == 3.0e38 || fits[i] == -3.0e38)
			v[1].v.f64 = (double)(float)fits[i];
		ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad), 0);
	}
	static const double nofit[] = { 0.1, 1e39, -1e39, 1e300, 1e-50 };
	for (size_t i = 0; i < sizeof nofit / sizeof nofit[0]; i++) {
		v[1].v.f64 = nofit[i];
		ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad),
				 SMARM_EARGS);
		ck_assert_uint_eq(bad, 1);
	}
	v[1].v.f64 = 1.0;
	v[2].type = SMARM_T_I64; /* an integer is no float */
	v[2].v.i = 1;
	ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad), SMARM_EARGS);
	ck_assert_uint_eq(bad, 2);
	/* smarm_value_str(NULL) is no str, "" is */
	op = op_of("cast s(str)");
	v[0] = smarm_value_str(NULL);
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), SMARM_EARGS);
	v[0] = smarm_value_str("");
	ck_assert_int_eq(smarm__bhv_pack(op, v, 1, &b), 0);
	smarm__bhv_msg_free(&b);
}
END_TEST

/* ---- tuples */

struct t_mix { /* (i8, f64, i16, pid) */
	int8_t a;
	double b;
	int16_t c;
	smarm_pid_t d;
};
struct t_flag { /* (bool, u32) */
	bool on;
	uint32_t n;
};
struct t_out { /* (i32, f64) */
	int32_t x;
	double y;
};

#define TMIX "(i8, f64, i16, pid)"
#define TUPLES "call mv(" TMIX ", i64, (bool, u32)) -> (i32, f64)"

/* A handler of TUPLES: structs in and out by value. */
static struct t_out mv(void *st, void *cx, struct t_mix m, int64_t k,
		       struct t_flag f)
{
	struct t_out o;
	seen_state = st;
	seen_cx = cx;
	snprintf(seen, sizeof seen, "%d %.2f %d %llu %lld %d %u", m.a, m.b, m.c,
		 (unsigned long long)m.d.id, (long long)k, f.on, f.n);
	o.x = m.a + m.c + (int32_t)k;
	o.y = m.b * 2;
	return o;
}

#define TUPLES_SEEN "-7 1.25 300 42 9 1 77"

/* Call mv through a prepared cif with block m: the reply value. */
static void call_mv(const struct bhv_op *op, const struct bhv_msg *m,
		    struct t_out *o)
{
	static ffi_type *lead[] = { &ffi_type_pointer, &ffi_type_pointer };
	struct bhv_cif c;
	struct bhv_unpacked u;
	union bhv_ret r;
	void *st = (void *)0x5, *cx = (void *)0x6;
	smarm_value_t v;

	ck_assert_int_eq(smarm__bhv_msg_check(op, m), 0);
	ck_assert_int_eq(smarm__bhv_cif_prep(&c, op, lead, 2, NULL), 0);
	ck_assert_uint_eq(c.bc_nffi, 2 + 3);
	ck_assert_int_eq(c.bc_direct, 0);
	smarm__bhv_unpack(op, bhv_msg_block(m), 2, &u);
	u.ua_av[0] = &st;
	u.ua_av[1] = &cx;
	seen[0] = '\0';
	memset(&r, 0xAA, sizeof r);
	smarm__bhv_invoke(&c, (void (*)(void))mv, &u, &r);
	ck_assert_ptr_eq(seen_state, st);
	ck_assert_int_eq(smarm__bhv_ret_value(SMARM_T_TUPLE,
					      bhv_reply_tuple(op), &r, &v),
			 0);
	ck_assert_int_eq(v.type, SMARM_T_TUPLE);
	ck_assert_uint_eq(v.len, sizeof *o);
	ck_assert_int_eq(smarm_value_get_tuple(&v, o, sizeof *o), 0);
	smarm_value_release(&v);
	ck_assert_ptr_null(v.v.p);
}

START_TEST(test_bhv_pack_tuples_reach_the_native_function_by_value)
{
	const struct bhv_op *op = op_of(TUPLES);
	struct t_mix m;
	struct t_flag f;
	struct t_out o;
	smarm_value_t v[3];
	struct bhv_msg b;
	const struct bhv_block *blk;
	int64_t k = 9;

	/* garbage in the caller's padding must not travel */
	memset(&m, 0xAA, sizeof m);
	memset(&f, 0xAA, sizeof f);
	m.a = -7;
	m.b = 1.25;
	m.c = 300;
	m.d.id = 42;
	f.on = true;
	f.n = 77;
	memset(v, 0, sizeof v);
	v[0] = smarm_value_tuple(&m, sizeof m);
	v[1].type = SMARM_T_I64;
	v[1].v.i = k;
	v[2] = smarm_value_tuple(&f, sizeof f);
	ck_assert_int_eq(smarm__bhv_pack(op, v, 3, &b), 0);
	blk = bhv_msg_block(&b);
	ck_assert_int_eq(blk->bk_slots[0].sl_type, SMARM_T_TUPLE);
	ck_assert_uint_eq(blk->bk_slots[0].sl_len, sizeof m);
	ck_assert_uint_eq(blk->bk_slots[0].sl_v.off % 8, 0);
	ck_assert_uint_eq(blk->bk_slots[2].sl_v.off % 8, 0);
	{
		const unsigned char *t =
			(const unsigned char *)blk + blk->bk_slots[0].sl_v.off;
		for (size_t i = 1; i < offsetof(struct t_mix, b); i++)
			ck_assert_uint_eq(t[i], 0); /* a's padding */
		t = (const unsigned char *)blk + blk->bk_slots[2].sl_v.off;
		for (size_t i = 1; i < offsetof(struct t_flag, n); i++)
			ck_assert_uint_eq(t[i], 0); /* on's padding */
	}
	m.a = 0; /* packed: the caller's struct is no longer read */
	call_mv(op, &b, &o);
	ck_assert_str_eq(seen, TUPLES_SEEN);
	ck_assert_int_eq(o.x, -7 + 300 + 9);
	ck_assert(o.y == 2.5);
	smarm__bhv_msg_free(&b);

	/* varargs (a pointer to each struct) and a stub's ffi arguments */
	m.a = -7;
	ck_assert_int_eq(pack_va(op, &b, (const void *)&m, k, (const void *)&f),
			 0);
	call_mv(op, &b, &o);
	ck_assert_str_eq(seen, TUPLES_SEEN);
	smarm__bhv_msg_free(&b);
	ck_assert_int_eq(
		pack_va(op, &b, (const void *)NULL, k, (const void *)&f),
		SMARM_EARGS);
	{
		void *av[] = { &m, &k, &f };
		ck_assert_int_eq(smarm__bhv_pack_ffi(op, av, &b), 0);
		call_mv(op, &b, &o);
		ck_assert_str_eq(seen, TUPLES_SEEN);
		smarm__bhv_msg_free(&b);
	}
}
END_TEST

START_TEST(test_bhv_pack_tuple_refusals)
{
	const struct bhv_op *op = op_of(TUPLES);
	struct t_mix m = { .a = 1 };
	struct t_flag f = { .on = true };
	smarm_value_t v[3], out;
	struct bhv_msg b;
	size_t bad;

	memset(v, 0, sizeof v);
	v[0] = smarm_value_tuple(&m, sizeof m);
	v[1].type = SMARM_T_I64;
	v[2] = smarm_value_tuple(&f, sizeof f);
	ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad), 0);
	/* another size: a struct that is not the protocol's */
	v[0].len = sizeof m - 8;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 3, &b), SMARM_EARGS);
	ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad), SMARM_EARGS);
	ck_assert_uint_eq(bad, 0);
	v[0].len = sizeof m;
	v[0].v.p = NULL; /* no data */
	ck_assert_int_eq(smarm__bhv_pack(op, v, 3, &b), SMARM_EARGS);
	v[0].v.p = &m;
	/* a bool that is neither 0 nor 1 */
	memset(&f.on, 2, 1);
	ck_assert_int_eq(smarm__bhv_pack(op, v, 3, &b), SMARM_EARGS);
	ck_assert_int_eq(smarm__bhv_args_check(op, v, 3, &bad), SMARM_EARGS);
	ck_assert_uint_eq(bad, 2);
	f.on = false;
	/* a tuple is no scalar, a scalar no tuple */
	v[1] = smarm_value_tuple(&f, sizeof f);
	ck_assert_int_eq(smarm__bhv_pack(op, v, 3, &b), SMARM_EARGS);
	v[1].type = SMARM_T_I64;
	v[0].type = SMARM_T_I64;
	ck_assert_int_eq(smarm__bhv_pack(op, v, 3, &b), SMARM_EARGS);
	v[0] = smarm_value_tuple(&m, sizeof m);
	ck_assert_int_eq(smarm__bhv_pack(op, v, 3, &b), 0);
	smarm__bhv_msg_free(&b);

	/* replies: copied (size checked), bools checked */
	{
		struct t_out o = { .x = 3, .y = 0.5 }, back;
		const struct bhv_tuple *tu = bhv_reply_tuple(op);
		smarm_value_t in = smarm_value_tuple(&o, sizeof o);
		union bhv_ret r;
		ck_assert_int_eq(
			smarm__bhv_value_copy(SMARM_T_TUPLE, tu, &in, &out), 0);
		ck_assert_ptr_ne(out.v.p, &o);
		ck_assert_int_eq(
			smarm_value_get_tuple(&out, &back, sizeof back), 0);
		ck_assert_int_eq(back.x, 3);
		ck_assert_int_eq(smarm_value_get_tuple(&out, &back, 4),
				 SMARM_EARGS);
		ck_assert_int_eq(smarm_value_get_tuple(&out, NULL, 4),
				 SMARM_EINVAL);
		ck_assert_int_eq(smarm_value_get_tuple(NULL, &back, 4),
				 SMARM_EINVAL);
		smarm_value_release(&out);
		ck_assert_int_eq(
			smarm_value_get_tuple(&out, &back, sizeof back),
			SMARM_EARGS); /* VOID now */
		in.len = 12;
		ck_assert_int_eq(
			smarm__bhv_value_copy(SMARM_T_TUPLE, tu, &in, &out),
			SMARM_EARGS);
		op = op_of("call b() -> (i8, bool)");
		tu = bhv_reply_tuple(op);
		memset(&r, 0, sizeof r);
		((unsigned char *)r.tup)[1] = 2;
		ck_assert_int_eq(
			smarm__bhv_ret_value(SMARM_T_TUPLE, tu, &r, &out),
			SMARM_EARGS);
		((unsigned char *)r.tup)[1] = 1;
		ck_assert_int_eq(
			smarm__bhv_ret_value(SMARM_T_TUPLE, tu, &r, &out), 0);
		ck_assert_uint_eq(out.len, 2);
		smarm_value_release(&out);
	}
}
END_TEST

START_TEST(test_bhv_pack_tuple_block_check_refuses_every_corruption)
{
	const struct bhv_op *op = op_of("cast x(str, (i8, bool), bytes)");
	struct {
		int8_t a;
		bool b;
	} t = { -1, true };
	smarm_value_t v[3];
	struct bhv_msg msg;
	const struct bhv_block *b;
	unsigned char *raw;
	size_t size;

	memset(v, 0, sizeof v);
	v[0] = smarm_value_str("abc"); /* the tuple lands past an odd end */
	v[1] = smarm_value_tuple(&t, sizeof t);
	v[2] = smarm_value_bytes("xy", 2);
	ck_assert_int_eq(smarm__bhv_pack(op, v, 3, &msg), 0);
	b = bhv_msg_block(&msg);
	size = b->bk_size;
	ck_assert_uint_eq(b->bk_slots[1].sl_v.off % 8, 0);
	ck_assert_int_eq(smarm__bhv_block_check(op, b, size), 0);
	raw = malloc(size + 16);
	ck_assert_ptr_nonnull(raw);
	MUTATE(m->bk_slots[1].sl_type = SMARM_T_BYTES);
	MUTATE(m->bk_slots[1].sl_len = 1);
	MUTATE(m->bk_slots[1].sl_len = 3);
	MUTATE(m->bk_slots[1].sl_v.off += 1);	/* misaligned */
	MUTATE(m->bk_slots[1].sl_v.off = 8);	/* in the slots */
	MUTATE(m->bk_slots[1].sl_v.off = size); /* past the end */
	MUTATE(m->bk_slots[1].sl_v.off = UINT64_MAX - 7);
	MUTATE(raw[m->bk_slots[1].sl_v.off + 1] = 2); /* the bool */
	free(raw);
	smarm__bhv_msg_free(&msg);
}
END_TEST

Suite *smarm_test_bhv_pack_suite(void)
{
	Suite *s = suite_create("bhv_pack");
	TCase *tc = tcase_create("pack");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc,
		       test_bhv_pack_every_type_reaches_the_native_function);
	tcase_add_test(tc, test_bhv_pack_varargs_and_ffi_arguments);
	tcase_add_test(tc, test_bhv_pack_refusals);
	tcase_add_test(tc, test_bhv_pack_block_check_refuses_every_corruption);
	tcase_add_test(tc, test_bhv_pack_returns_and_reply_values);
	tcase_add_test(tc, test_bhv_pack_direct_calls_match_libffi);
	tcase_add_test(tc,
		       test_bhv_pack_tuples_reach_the_native_function_by_value);
	tcase_add_test(tc, test_bhv_pack_tuple_refusals);
	tcase_add_test(tc, test_bhv_pack_conversions_bool_and_float);
	tcase_add_test(
		tc, test_bhv_pack_tuple_block_check_refuses_every_corruption);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(bhv_pack)
