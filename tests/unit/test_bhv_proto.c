/* SPDX-License-Identifier: MIT */
/*
 * test_bhv_proto.c - the protocol parser (behaviour/proto.c): the
 * grammar's forms, every refusal with its line, column and expectation,
 * and every limit (name length, arguments, operations, tuple elements)
 * at and past it; tuple types laid out as C lays out their structs.
 */
#include "harness.h"

#include "behaviour/bhv.h"

#include <string.h>

static struct bhv_proto p;
static char msg[256];

static int parse(const char *t)
{
	smarm__bhv_proto_free(&p);
	return smarm__bhv_proto_parse(t, &p, msg, sizeof msg);
}

/* The text must be refused with a message that starts with where. */
static void refused(const char *t, const char *where, const char *what)
{
	ck_assert_int_eq(parse(t), SMARM_EPROTOCOL);
	ck_assert_msg(strncmp(msg, where, strlen(where)) == 0,
		      "text \"%s\": message \"%s\", wanted \"%s...\"", t, msg,
		      where);
	ck_assert_msg(strstr(msg, what) != NULL,
		      "text \"%s\": message \"%s\" lacks \"%s\"", t, msg, what);
	ck_assert_ptr_null(p.pr_ops);
	ck_assert_uint_eq(p.pr_n, 0);
}

static void teardown(void)
{
	smarm__bhv_proto_free(&p);
}

START_TEST(test_bhv_proto_header_example_parses)
{
	ck_assert_int_eq(parse("call add(i64, i64) -> i64\n"
			       "call get() -> i64\n"
			       "cast reset()\n"
			       "call put(str, bytes) -> bool\n"
			       "info tick(u64)\n"),
			 0);
	ck_assert_uint_eq(p.pr_n, 5);
	ck_assert_str_eq(p.pr_ops[0].op_name, "add");
	ck_assert_int_eq(p.pr_ops[0].op_kind, BHV_CALL);
	ck_assert_int_eq(p.pr_ops[0].op_nargs, 2);
	ck_assert_int_eq(p.pr_ops[0].op_args[1], SMARM_T_I64);
	ck_assert_int_eq(p.pr_ops[0].op_reply, SMARM_T_I64);
	ck_assert_int_eq(p.pr_ops[2].op_kind, BHV_CAST);
	ck_assert_int_eq(p.pr_ops[2].op_reply, SMARM_T_VOID);
	ck_assert_int_eq(p.pr_ops[3].op_args[0], SMARM_T_STR);
	ck_assert_int_eq(p.pr_ops[3].op_args[1], SMARM_T_BYTES);
	ck_assert_int_eq(p.pr_ops[4].op_kind, BHV_INFO);
	ck_assert_uint_eq(p.pr_ops[4].op_line, 5);
	ck_assert_uint_eq(p.pr_ops[4].op_index, 4);
	ck_assert_ptr_eq(smarm__bhv_proto_find(&p, "tick", BHV_INFO),
			 &p.pr_ops[4]);
	ck_assert_ptr_null(smarm__bhv_proto_find(&p, "tick", BHV_CALL));
	ck_assert_ptr_null(smarm__bhv_proto_find(&p, "nope", 0));
}
END_TEST

/* Names that share 8 bytes, or are prefixes of one another. */
START_TEST(test_bhv_proto_find_names_sharing_a_prefix)
{
	static const char *const names[] = { "abcdefgh",  "abcdefghX",
					     "abcdefghY", "abcdefg",
					     "a",	  "abcdefghXlonger" };
	ck_assert_int_eq(parse("cast abcdefgh(); cast abcdefghX()\n"
			       "cast abcdefghY(); cast abcdefg(); cast a()\n"
			       "cast abcdefghXlonger()\n"),
			 0);
	ck_assert_uint_eq(p.pr_n, 6);
	for (size_t i = 0; i < 6; i++)
		ck_assert_ptr_eq(smarm__bhv_proto_find(&p, names[i], 0),
				 &p.pr_ops[i]);
	ck_assert_ptr_null(smarm__bhv_proto_find(&p, "abcdefghZ", 0));
	ck_assert_ptr_null(smarm__bhv_proto_find(&p, "abcdef", 0));
	ck_assert_ptr_null(smarm__bhv_proto_find(&p, "abcdefghXlonge", 0));
	ck_assert_ptr_null(smarm__bhv_proto_find(&p, "b", 0));
	ck_assert_ptr_null(smarm__bhv_proto_find(&p, "", 0));
}
END_TEST

START_TEST(test_bhv_proto_separators_comments_and_types)
{
	ck_assert_int_eq(parse(""), 0);
	ck_assert_uint_eq(p.pr_n, 0);
	ck_assert_int_eq(parse("  # only a comment\n\n;;\n"), 0);
	ck_assert_uint_eq(p.pr_n, 0);
	ck_assert_int_eq(parse("cast a();cast b() ; call c()#x\r\n"
			       "\tcall  d ( i8,i16 , i32,u8,u16,u32,u64,f32,"
			       "f64,bool,str,bytes,pid )->pid;"),
			 0);
	ck_assert_uint_eq(p.pr_n, 4);
	ck_assert_int_eq(p.pr_ops[2].op_reply, SMARM_T_VOID);
	ck_assert_int_eq(p.pr_ops[3].op_nargs, 13);
	ck_assert_int_eq(p.pr_ops[3].op_args[12], SMARM_T_PID);
	ck_assert_int_eq(p.pr_ops[3].op_reply, SMARM_T_PID);
	ck_assert_uint_eq(p.pr_ops[3].op_line, 2);
	ck_assert_uint_eq(p.pr_ops[3].op_col, 2);
	ck_assert_str_eq(smarm__bhv_type_name(SMARM_T_BYTES), "bytes");
	ck_assert_str_eq(smarm__bhv_type_name(99), "?");
}
END_TEST

START_TEST(test_bhv_proto_every_refusal_names_line_and_column)
{
	refused("bogus x()", "line 1, column 1:", "'call', 'cast' or 'info'");
	refused("call\n", "line 1, column 5:", "space before");
	refused("cast 9x()", "line 1, column 6:", "operation name");
	refused("cast x", "line 1, column 7:", "expected '('");
	refused("cast x(i65)", "line 1, column 8:", "expected a type");
	refused("cast x(void)", "line 1, column 8:", "argument type");
	refused("call x() -> void", "line 1, column 13:", "reply type");
	refused("call x() -> ", "line 1, column 13:", "expected a type");
	refused("cast x(i8 i8)", "line 1, column 11:", "',' or ')'");
	refused("cast x(i8,)", "line 1, column 11:", "expected a type");
	refused("cast x(", "line 1, column 8:", "expected a type");
	refused("cast x() -> i8", "line 1, column 10:", "only a call");
	refused("info x() -> i8", "line 1, column 10:", "only a call");
	refused("call x() y", "line 1, column 10:", "'->', ';'");
	refused("call x() -> i8 z", "line 1, column 16:", "';' or the end");
	refused("cast x()\n\n  cast x()",
		"line 3, column 8:", "'x' already declared on line 1");
	refused("cast a()\ncast b(str,\n",
		"line 2, column 12:", "expected a type");
}
END_TEST

START_TEST(test_bhv_proto_limits_at_and_past)
{
	char name[SMARM_OP_NAME_MAX + 2];
	char text[SMARM_OPS_MAX * 16 + 64];
	size_t n = 0;

	memset(name, 'n', sizeof name);
	name[SMARM_OP_NAME_MAX] = '\0';
	snprintf(text, sizeof text, "cast %s()", name);
	ck_assert_int_eq(parse(text), 0);
	ck_assert_str_eq(p.pr_ops[0].op_name, name);
	name[SMARM_OP_NAME_MAX] = 'n';
	name[SMARM_OP_NAME_MAX + 1] = '\0';
	snprintf(text, sizeof text, "cast %s()", name);
	refused(text, "line 1, column 6:", "longer than 63");

	n = (size_t)snprintf(text, sizeof text, "cast x(");
	for (int i = 0; i < SMARM_OP_ARGS_MAX; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%si8",
				      i ? "," : "");
	snprintf(text + n, sizeof text - n, ")");
	ck_assert_int_eq(parse(text), 0);
	ck_assert_int_eq(p.pr_ops[0].op_nargs, SMARM_OP_ARGS_MAX);
	snprintf(text + n, sizeof text - n, ",i8)");
	refused(text, "line 1, column ", "more than 16 arguments");

	n = 0;
	for (int i = 0; i < SMARM_OPS_MAX; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "cast o%d();",
				      i);
	ck_assert_int_eq(parse(text), 0);
	ck_assert_uint_eq(p.pr_n, SMARM_OPS_MAX);
	snprintf(text + n, sizeof text - n, "cast one_more()");
	refused(text, "line 1, column ", "more than 256 operations");
}
END_TEST

/* The tuple of op i's argument j (j == -1: its reply). */
static const struct bhv_tuple *tup(size_t i, int j)
{
	const struct bhv_op *op = &p.pr_ops[i];
	return j < 0 ? bhv_reply_tuple(op) : bhv_arg_tuple(op, (unsigned)j);
}

START_TEST(test_bhv_proto_tuples_parse_as_arguments_and_replies)
{
	char name[128];
	ck_assert_int_eq(parse("call move((i32, f64), i8) -> (i32,i32)\n"
			       "cast note( ( bool ) , str,(pid,u64))\n"
			       "call plain(i64) -> i64\n"),
			 0);
	ck_assert_uint_eq(p.pr_n, 3);
	ck_assert_int_eq(p.pr_ops[0].op_nargs, 2);
	ck_assert_int_eq(p.pr_ops[0].op_args[0], SMARM_T_TUPLE);
	ck_assert_int_eq(p.pr_ops[0].op_args[1], SMARM_T_I8);
	ck_assert_int_eq(p.pr_ops[0].op_reply, SMARM_T_TUPLE);
	ck_assert_int_eq(p.pr_ops[0].op_ntup, 2);
	ck_assert(!p.pr_ops[0].op_small); /* a tuple packs as data */
	ck_assert_str_eq(smarm__bhv_tuple_name(tup(0, 0), name, sizeof name),
			 "(i32, f64)");
	ck_assert_str_eq(smarm__bhv_tuple_name(tup(0, -1), name, sizeof name),
			 "(i32, i32)");
	ck_assert_ptr_null(tup(0, 1));
	ck_assert_int_eq(p.pr_ops[1].op_args[0], SMARM_T_TUPLE);
	ck_assert_int_eq(p.pr_ops[1].op_args[1], SMARM_T_STR);
	ck_assert_int_eq(p.pr_ops[1].op_args[2], SMARM_T_TUPLE);
	ck_assert_str_eq(smarm__bhv_tuple_name(tup(1, 0), name, sizeof name),
			 "(bool)");
	ck_assert_str_eq(smarm__bhv_tuple_name(tup(1, 2), name, sizeof name),
			 "(pid, u64)");
	ck_assert_ptr_null(tup(1, -1));
	ck_assert_int_eq(p.pr_ops[2].op_ntup, 0);
	ck_assert_ptr_null(p.pr_ops[2].op_tup);
	ck_assert_str_eq(smarm__bhv_type_name(SMARM_T_TUPLE), "tuple");
	/* a name cut to the buffer, NUL-terminated */
	ck_assert_str_eq(smarm__bhv_tuple_name(tup(1, 2), name, 6), "(pid,");
	ck_assert_str_eq(smarm__bhv_tuple_name(tup(1, 2), name, 1), "");
}
END_TEST

/* Mixed tuples laid out as the C compiler lays out their structs. */
struct mix1 {
	int8_t a;
	double b;
	int16_t c;
	smarm_pid_t d;
};
struct mix2 {
	bool a;
	uint16_t b;
	float c;
	uint8_t d;
};
struct mix3 {
	uint64_t a;
	int8_t b;
};
struct mix4 {
	int32_t a;
};
struct mix5 {
	uint8_t a;
	bool b;
	int16_t c;
	uint32_t d;
	int64_t e;
	uint8_t f;
	float g;
	double h;
	int8_t i;
	smarm_pid_t j;
	uint16_t k;
	int32_t l;
	uint8_t m;
	uint64_t n;
	bool o;
	double q;
};

#define LAYOUT(tu, S, ...)                                                     \
	do {                                                                   \
		static const size_t off_[] = { __VA_ARGS__ };                  \
		ck_assert_uint_eq((tu)->tu_ffi.size, sizeof(S));               \
		ck_assert_uint_eq((tu)->tu_ffi.alignment, _Alignof(S));        \
		ck_assert_uint_eq((tu)->tu_n, sizeof off_ / sizeof off_[0]);   \
		for (size_t k_ = 0; k_ < sizeof off_ / sizeof off_[0]; k_++)   \
			ck_assert_uint_eq((tu)->tu_off[k_], off_[k_]);         \
	} while (0)

START_TEST(test_bhv_proto_tuple_layout_is_the_c_structs)
{
	ck_assert_int_eq(parse("cast a((i8, f64, i16, pid))\n"
			       "cast b((bool, u16, f32, u8))\n"
			       "cast c((u64, i8)); cast d((i32))\n"
			       "cast e((u8, bool, i16, u32, i64, u8, f32, f64,"
			       " i8, pid, u16, i32, u8, u64, bool, f64))\n"),
			 0);
	LAYOUT(tup(0, 0), struct mix1, offsetof(struct mix1, a),
	       offsetof(struct mix1, b), offsetof(struct mix1, c),
	       offsetof(struct mix1, d));
	ck_assert_uint_eq(tup(0, 0)->tu_ffi.size, 32); /* 1+7, 8, 2+6, 8 */
	LAYOUT(tup(1, 0), struct mix2, offsetof(struct mix2, a),
	       offsetof(struct mix2, b), offsetof(struct mix2, c),
	       offsetof(struct mix2, d));
	LAYOUT(tup(2, 0), struct mix3, offsetof(struct mix3, a),
	       offsetof(struct mix3, b));
	LAYOUT(tup(3, 0), struct mix4, offsetof(struct mix4, a));
	LAYOUT(tup(4, 0), struct mix5, offsetof(struct mix5, a),
	       offsetof(struct mix5, b), offsetof(struct mix5, c),
	       offsetof(struct mix5, d), offsetof(struct mix5, e),
	       offsetof(struct mix5, f), offsetof(struct mix5, g),
	       offsetof(struct mix5, h), offsetof(struct mix5, i),
	       offsetof(struct mix5, j), offsetof(struct mix5, k),
	       offsetof(struct mix5, l), offsetof(struct mix5, m),
	       offsetof(struct mix5, n), offsetof(struct mix5, o),
	       offsetof(struct mix5, q));
	ck_assert_uint_le(tup(4, 0)->tu_ffi.size, BHV_TUPLE_SIZE_MAX);
}
END_TEST

START_TEST(test_bhv_proto_tuple_refusals_name_the_problem)
{
	refused("cast x(())", "line 1, column 9:", "a tuple has at least one");
	refused("cast x((str))", "line 1, column 9:", "a tuple holds no str");
	refused("cast x((i8, bytes))",
		"line 1, column 13:", "a tuple holds no bytes");
	refused("cast x((i8, (i8)))",
		"line 1, column 13:", "does not hold a tuple");
	refused("cast x((i8 i8))",
		"line 1, column 12:", "',' or ')' in the tuple");
	refused("cast x((i8,))",
		"line 1, column 12:", "expected a tuple element type");
	refused("cast x((void))",
		"line 1, column 9:", "expected a tuple element type");
	refused("cast x((i8", "line 1, column 11:", "',' or ')' in the tuple");
	refused("cast x((i8)", "line 1, column 12:", "expected ',' or ')'");
	refused("call x() -> ()",
		"line 1, column 14:", "a tuple has at least one");
	refused("call x() -> (str)",
		"line 1, column 14:", "a tuple holds no str");
	refused("cast x((i8) (i8))", "line 1, column 13:", "',' or ')'");
	refused("cast a((i8))\ncast b((i8), (q))",
		"line 2, column 15:", "expected a tuple element type");
	refused("cast x(i65)", "line 1, column 8:", "or a tuple");
}
END_TEST

START_TEST(test_bhv_proto_tuple_limits_at_and_past)
{
	char text[512];
	size_t n = (size_t)snprintf(text, sizeof text, "call x((");
	for (int i = 0; i < SMARM_TUPLE_MAX; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%sf64",
				      i ? "," : "");
	snprintf(text + n, sizeof text - n, ")) -> (i8)");
	ck_assert_int_eq(parse(text), 0);
	ck_assert_int_eq(tup(0, 0)->tu_n, SMARM_TUPLE_MAX);
	ck_assert_uint_eq(tup(0, 0)->tu_ffi.size, 8 * SMARM_TUPLE_MAX);
	snprintf(text + n, sizeof text - n, ",f64)) -> (i8)");
	refused(text, "line 1, column ", "more than 16 elements in a tuple");
	/* an op of SMARM_OP_ARGS_MAX tuples and a tuple reply */
	n = (size_t)snprintf(text, sizeof text, "call y(");
	for (int i = 0; i < SMARM_OP_ARGS_MAX; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%s(i%d)",
				      i ? "," : "", 8 << (i % 4));
	snprintf(text + n, sizeof text - n, ") -> (pid)");
	ck_assert_int_eq(parse(text), 0);
	ck_assert_int_eq(p.pr_ops[0].op_ntup, SMARM_OP_ARGS_MAX + 1);
	for (int i = 0; i < SMARM_OP_ARGS_MAX; i++)
		ck_assert_uint_eq(tup(0, i)->tu_ffi.size, 1u << (i % 4));
	ck_assert_uint_eq(tup(0, -1)->tu_ffi.size, sizeof(smarm_pid_t));
}
END_TEST

START_TEST(test_bhv_proto_message_cut_and_optional)
{
	char small[12];
	struct bhv_proto q;
	ck_assert_int_eq(
		smarm__bhv_proto_parse("cast (", &q, small, sizeof small),
		SMARM_EPROTOCOL);
	ck_assert_uint_eq(strlen(small), sizeof small - 1);
	ck_assert_int_eq(smarm__bhv_proto_parse("cast (", &q, NULL, 0),
			 SMARM_EPROTOCOL);
	ck_assert_int_eq(smarm__bhv_proto_parse("cast (", &q, small, 0),
			 SMARM_EPROTOCOL);
}
END_TEST

Suite *smarm_test_bhv_proto_suite(void)
{
	Suite *s = suite_create("bhv_proto");
	TCase *tc = tcase_create("parse");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_bhv_proto_header_example_parses);
	tcase_add_test(tc, test_bhv_proto_find_names_sharing_a_prefix);
	tcase_add_test(tc, test_bhv_proto_separators_comments_and_types);
	tcase_add_test(tc, test_bhv_proto_every_refusal_names_line_and_column);
	tcase_add_test(tc, test_bhv_proto_limits_at_and_past);
	tcase_add_test(tc, test_bhv_proto_message_cut_and_optional);
	tcase_add_test(tc,
		       test_bhv_proto_tuples_parse_as_arguments_and_replies);
	tcase_add_test(tc, test_bhv_proto_tuple_layout_is_the_c_structs);
	tcase_add_test(tc, test_bhv_proto_tuple_refusals_name_the_problem);
	tcase_add_test(tc, test_bhv_proto_tuple_limits_at_and_past);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(bhv_proto)
