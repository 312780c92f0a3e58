/* SPDX-License-Identifier: MIT */
/*
 * test_tuple.c - tuple types in protocols, through the public API and
 * the test plugin tests/plugins/tuple.c: C structs passed to handlers
 * and returned by them (smarm_server_call with smarm_value_tuple, a
 * request, typed stubs, a reply token), a struct of the wrong size (or
 * with a bool neither 0 nor 1) refused with SMARM_EARGS and
 * smarm_server_args_why naming the argument and the sizes, the
 * varargs calls (checked: a smarm_value_tuple, and a reply struct of
 * the wrong size refused before the call is sent; unchecked: a pointer
 * to the struct), a tuple answered to a raw reply target
 * (smarm_reply_to), and the conversions they rely on (C's true for a bool, a
 * double literal for an f32), and a gen_statem whose guard and actions
 * get the event's struct.
 */
#include "harness.h"

#include <smarm/smarm_plugin.h>

#include <string.h>

/* The plugin's tuples as this suite declares them (any member names). */
struct pt { /* (i32, f64) */
	int32_t x;
	double y;
};
struct ipair { /* (i32, i32) */
	int32_t a;
	int32_t b;
};
struct mix { /* (i8, f64, i16, pid) */
	int8_t a;
	double b;
	int16_t c;
	smarm_pid_t d;
};
struct kept { /* (u16, bool) */
	uint16_t n;
	bool on;
};

static smarm_plugin_t *pl;
static const smarm_behaviour_t *shapes, *cursor;
static char why[8][256]; /* smarm_server_args_why's, from the runs */

static void setup(void)
{
	char msg[256];
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_TUPLE"), &pl, msg,
					   sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "shapes", &shapes), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "cursor", &cursor), 0);
	memset(why, 0, sizeof why);
	harness_checks_reset();
}

static void teardown(void)
{
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
}

/* Call op of s with args; the tuple reply copied into out (size n). */
static int call_tuple(smarm_server_t *s, const char *op,
		      const smarm_value_t *args, size_t nargs, void *out,
		      size_t n)
{
	smarm_value_t r;
	int rc;
	memset(&r, 0, sizeof r);
	rc = smarm_server_call(s, op, args, nargs, &r, MS(5000));
	if (rc != 0)
		return rc;
	HARNESS_EQ(r.type, SMARM_T_TUPLE);
	HARNESS_EQ(r.len, n);
	rc = smarm_value_get_tuple(&r, out, n);
	smarm_value_release(&r);
	HARNESS_CHECK(r.v.p == NULL && r.type == SMARM_T_VOID);
	return rc;
}

/* ---- calls, casts and requests */

static void call_root(void *arg)
{
	smarm_server_t *s = NULL;
	struct pt p = { 4, 2.5 };
	struct ipair ip = { 0, 0 };
	struct mix m = { -3, 1.5, 10, smarm_actor_self() }, mo;
	struct kept k = { 65535, true }, ko = { 0, false };
	smarm_request_t *rq = NULL;
	smarm_value_t r;
	(void)arg;
	HARNESS_EQ(smarm_server_start(shapes, NULL, NULL, &s), 0);
	{
		smarm_value_t a[] = { smarm_value_tuple(&p, sizeof p),
				      SMARM_V(3) };
		HARNESS_EQ(call_tuple(s, "move", a, 2, &ip, sizeof ip), 0);
		HARNESS_EQ(ip.a, 12);
		HARNESS_EQ(ip.b, 7);
	}
	{
		/* 32 bytes: passed and returned in memory, not registers */
		smarm_value_t a[] = { smarm_value_tuple(&m, sizeof m) };
		memset(&mo, 0, sizeof mo);
		HARNESS_EQ(call_tuple(s, "mix", a, 1, &mo, sizeof mo), 0);
		HARNESS_EQ(mo.a, -2);
		HARNESS_CHECK(mo.b == 3.0);
		HARNESS_EQ(mo.c, 9);
		HARNESS_CHECK(smarm_pid_eq(mo.d, smarm_actor_self()));
	}
	{
		smarm_value_t a[] = { smarm_value_tuple(&k, sizeof k) };
		HARNESS_EQ(smarm_server_cast(s, "put", a, 1), 0);
		HARNESS_EQ(call_tuple(s, "last", NULL, 0, &ko, sizeof ko), 0);
		HARNESS_EQ(ko.n, 65535);
		HARNESS_EQ(ko.on, true);
	}
	{
		/* a request: the tuple travels in both halves */
		smarm_value_t a[] = { smarm_value_tuple(&p, sizeof p),
				      SMARM_V(-2) };
		HARNESS_EQ(smarm_server_send_request(s, "move", a, 2, &rq), 0);
		p.x = 1000; /* packed at the send: not read again */
		memset(&r, 0, sizeof r);
		HARNESS_EQ(smarm_server_wait_response(rq, &r, MS(5000)), 0);
		HARNESS_EQ(smarm_value_get_tuple(&r, &ip, sizeof ip), 0);
		smarm_value_release(&r);
		HARNESS_EQ(ip.a, -8);
		HARNESS_EQ(ip.b, -5);
	}
	/* a reply token answers a tuple, refusing one of the wrong size */
	HARNESS_EQ(call_tuple(s, "token", NULL, 0, &ip, sizeof ip), 0);
	HARNESS_EQ(ip.a, 7);
	HARNESS_EQ(ip.b, 8);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

START_TEST(test_tuple_call_passes_and_returns_structs)
{
	ck_assert_int_eq(harness_run(2, call_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---- the wrong struct */

static void wrong_root(void *arg)
{
	smarm_server_t *s = NULL;
	struct {
		int32_t x, y, z;
	} p12 = { 1, 2, 3 };
	struct pt p = { 1, 1.0 };
	struct kept k = { 1, true }, ko = { 9, true };
	smarm_value_t a[2], r;
	(void)arg;
	HARNESS_EQ(smarm_server_start(shapes, NULL, NULL, &s), 0);
	a[0] = smarm_value_tuple(&p12, sizeof p12);
	a[1] = SMARM_V(1);
	HARNESS_EQ(smarm_server_call(s, "move", a, 2, &r, MS(5000)),
		   SMARM_EARGS);
	HARNESS_EQ(smarm_server_args_why(shapes, "move", a, 2, why[0],
					 sizeof why[0]),
		   SMARM_EARGS);
	a[0] = SMARM_V((int64_t)5);
	HARNESS_EQ(smarm_server_args_why(shapes, "move", a, 2, why[1],
					 sizeof why[1]),
		   SMARM_EARGS);
	a[0] = smarm_value_tuple(&p, sizeof p);
	a[1] = smarm_value_tuple(&p, sizeof p);
	HARNESS_EQ(smarm_server_args_why(shapes, "move", a, 2, why[2],
					 sizeof why[2]),
		   SMARM_EARGS);
	a[0] = smarm_value_tuple(NULL, sizeof p);
	a[1] = SMARM_V(1);
	HARNESS_EQ(smarm_server_args_why(shapes, "move", a, 2, why[3],
					 sizeof why[3]),
		   SMARM_EARGS);
	memset(&k.on, 2, 1); /* a bool that is neither 0 nor 1 */
	a[0] = smarm_value_tuple(&k, sizeof k);
	HARNESS_EQ(smarm_server_cast(s, "put", a, 1), SMARM_EARGS);
	HARNESS_EQ(smarm_server_args_why(shapes, "put", a, 1, why[4],
					 sizeof why[4]),
		   SMARM_EARGS);
	/* the right one passes, and nothing refused reached the server */
	a[0] = smarm_value_tuple(&p, sizeof p);
	HARNESS_EQ(smarm_server_args_why(shapes, "move", a, 2, why[5],
					 sizeof why[5]),
		   0);
	HARNESS_EQ(call_tuple(s, "last", NULL, 0, &ko, sizeof ko), 0);
	HARNESS_EQ(ko.n, 0);
	HARNESS_EQ(ko.on, false);
	/* a tuple reply read into a struct of another size */
	memset(&r, 0, sizeof r);
	HARNESS_EQ(smarm_server_call(s, "last", NULL, 0, &r, MS(5000)), 0);
	HARNESS_EQ(smarm_value_get_tuple(&r, &p, sizeof p), SMARM_EARGS);
	smarm_value_release(&r);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

START_TEST(test_tuple_wrong_struct_is_eargs_and_why_names_it)
{
	ck_assert_int_eq(harness_run(2, wrong_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_str_eq(why[0], "move: argument 1 is a 12-byte tuple, the "
				 "protocol says (i32, f64): 16 bytes");
	ck_assert_str_eq(why[1], "move: argument 1 is i64, the protocol says "
				 "(i32, f64)");
	ck_assert_str_eq(why[2], "move: argument 2 is tuple, the protocol "
				 "says i8");
	ck_assert_str_eq(why[3], "move: argument 1 is a tuple with no data "
				 "(NULL)");
	ck_assert_str_eq(why[4], "put: argument 1: a bool of its (u16, bool) "
				 "is neither 0 nor 1");
	ck_assert_str_eq(why[5], "");
}
END_TEST

/* ---- typed stubs */

static void stub_root(void *arg)
{
	int (*move)(smarm_server_t *, uint64_t, struct ipair *, struct pt,
		    int8_t) = NULL;
	int (*mix)(smarm_server_t *, uint64_t, struct mix *, struct mix) = NULL;
	int (*put)(smarm_server_t *, struct kept) = NULL;
	int (*last)(smarm_server_t *, uint64_t, struct kept *) = NULL;
	void (*fn)(void) = NULL;
	smarm_server_t *s = NULL;
	struct pt p = { -6, 10.75 };
	struct ipair ip = { 0, 0 };
	struct mix m = { 100, -0.25, 1234, { 0 } }, mo;
	struct kept k = { 4242, true }, ko = { 0, false };
	(void)arg;
	HARNESS_EQ(smarm_server_start(shapes, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_stub(shapes, "move", &fn), 0);
	move = (int (*)(smarm_server_t *, uint64_t, struct ipair *, struct pt,
			int8_t))fn;
	HARNESS_EQ(smarm_server_stub(shapes, "mix", &fn), 0);
	mix = (int (*)(smarm_server_t *, uint64_t, struct mix *, struct mix))fn;
	HARNESS_EQ(smarm_server_stub(shapes, "put", &fn), 0);
	put = (int (*)(smarm_server_t *, struct kept))fn;
	HARNESS_EQ(smarm_server_stub(shapes, "last", &fn), 0);
	last = (int (*)(smarm_server_t *, uint64_t, struct kept *))fn;

	HARNESS_EQ(move(s, MS(5000), &ip, p, 2), 0);
	HARNESS_EQ(ip.a, -12);
	HARNESS_EQ(ip.b, 21);
	memset(&mo, 0, sizeof mo);
	HARNESS_EQ(mix(s, MS(5000), &mo, m), 0);
	HARNESS_EQ(mo.a, 101);
	HARNESS_CHECK(mo.b == -0.5);
	HARNESS_EQ(mo.c, 1233);
	HARNESS_EQ(put(s, k), 0);
	HARNESS_EQ(last(s, MS(5000), &ko), 0);
	HARNESS_EQ(ko.n, 4242);
	HARNESS_EQ(ko.on, true);
	HARNESS_EQ(move(s, MS(5000), NULL, p, 2), 0); /* the reply dropped */
	memset(&k.on, 2, 1);
	HARNESS_EQ(put(s, k), SMARM_EARGS); /* checked as any argument */
	ip.a = -1;
	HARNESS_EQ(move(NULL, MS(5000), &ip, p, 2), SMARM_EINVAL);
	HARNESS_EQ(ip.a, -1); /* untouched on failure */
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

START_TEST(test_tuple_stub_takes_and_returns_structs)
{
	ck_assert_int_eq(harness_run(2, stub_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---- varargs */

static void varargs_root(void *arg)
{
	smarm_server_t *s = NULL;
	struct pt p = { 5, -1.5 };
	struct ipair ip = { 0, 0 };
	struct kept k = { 12, true }, ko = { 0, false };
	int32_t n = 0;
	(void)arg;
	HARNESS_EQ(smarm_server_start(shapes, NULL, NULL, &s), 0);
	/* checked: a tuple is a smarm_value_tuple, the reply its struct */
	HARNESS_EQ(smarm_server_callv(s, "move", MS(5000), &ip,
				      smarm_value_tuple(&p, sizeof p), 2),
		   0);
	HARNESS_EQ(ip.a, 10);
	HARNESS_EQ(ip.b, -3);
	HARNESS_EQ(
		smarm_server_castv(s, "put", smarm_value_tuple(&k, sizeof k)),
		0);
	HARNESS_EQ(smarm_server_callv(s, "last", MS(5000), &ko), 0);
	HARNESS_EQ(ko.n, 12);
	HARNESS_EQ(ko.on, true);
	HARNESS_EQ(smarm_server_callv(s, "move", MS(5000), &ip,
				      smarm_value_tuple(&p, sizeof p - 8), 2),
		   SMARM_EARGS);
	HARNESS_EQ(smarm_server_callv(s, "move", MS(5000), &ip, 5, 2),
		   SMARM_EARGS);
	/* C's true is an int, 1.5 a double: both fit bool and f32 */
	HARNESS_EQ(smarm_server_callv(s, "flag", MS(5000), &n, true, 1.5), 0);
	HARNESS_EQ(n, 15);
	HARNESS_EQ(smarm_server_callv(s, "flag", MS(5000), &n, 0, 1.5f), 0);
	HARNESS_EQ(n, -1);
	HARNESS_EQ(smarm_server_callv(s, "flag", MS(5000), &n, 2, 1.5),
		   SMARM_EARGS); /* 2 is no bool */
	HARNESS_EQ(smarm_server_callv(s, "flag", MS(5000), &n, 1, 0.1),
		   SMARM_EARGS); /* 0.1 is no f32 */
	HARNESS_EQ(smarm_server_callv(s, "flag", MS(5000), &n, 1, 0.25), 0);
	HARNESS_EQ(n, 2);
	{
		smarm_value_t a[] = { SMARM_V(2), SMARM_V(0.1) };
		HARNESS_EQ(smarm_server_args_why(shapes, "flag", a, 2, why[0],
						 sizeof why[0]),
			   SMARM_EARGS);
		a[0] = SMARM_V(1);
		HARNESS_EQ(smarm_server_args_why(shapes, "flag", a, 2, why[1],
						 sizeof why[1]),
			   SMARM_EARGS);
	}
	{
		/* a str reply is a smarm_bytes_t; a char * would take 8 of
		 * its 16 bytes: refused */
		char *lp = NULL;
		smarm_bytes_t lb = { NULL, 0 };
		HARNESS_EQ(smarm_server_callv(s, "label", MS(5000), &lp),
			   SMARM_EARGS);
		HARNESS_CHECK(lp == NULL);
		HARNESS_EQ(smarm_server_callv(s, "label", MS(5000), &lb), 0);
		HARNESS_EQ(lb.len, 6);
		HARNESS_CHECK(lb.ptr != NULL &&
			      memcmp(lb.ptr, "shapes", 6) == 0);
		free((void *)lb.ptr);
	}
	{
		/* the reply's size is checked too: a struct of another
		 * size than the protocol's tuple is refused before the
		 * call is sent, never written past its end */
		struct one {
			int32_t a;
		};
		struct two64 {
			int64_t a, b;
		};
		unsigned char buf[32];
		struct two64 w = { 7, 7 };
		memset(buf, 0xa5, sizeof buf);
		HARNESS_EQ(smarm_server_callv(
				   s, "move", MS(5000), (struct one *)buf,
				   smarm_value_tuple(&p, sizeof p), 2),
			   SMARM_EARGS);
		HARNESS_EQ(smarm_server_callv(
				   s, "move", MS(5000), (struct pt *)buf,
				   smarm_value_tuple(&p, sizeof p), 2),
			   SMARM_EARGS);
		for (size_t b = 0; b < sizeof buf; b++)
			HARNESS_EQ(buf[b], 0xa5);
		/* and a scalar reply's: 16 bytes for an i32 */
		HARNESS_EQ(smarm_server_callv(s, "flag", MS(5000), &w, 1, 0.25),
			   SMARM_EARGS);
		HARNESS_EQ(w.a, 7);
		/* the right size, and void * (unchecked), still pass */
		HARNESS_EQ(smarm_server_callv(
				   s, "move", MS(5000), (struct ipair *)buf,
				   smarm_value_tuple(&p, sizeof p), 2),
			   0);
		memcpy(&ip, buf, sizeof ip);
		HARNESS_EQ(ip.a, 10);
		HARNESS_EQ(smarm_server_callv(s, "flag", MS(5000), (void *)&n,
					      1, 0.25),
			   0);
		HARNESS_EQ(n, 2);
		HARNESS_EQ(smarm_server_call_sized(s, "flag", NULL, 0, &n,
						   SMARM_T_VOID, 0, MS(5000)),
			   SMARM_EARGS); /* two arguments missing */
		HARNESS_EQ(smarm_server_call_sized(NULL, "flag", NULL, 0, &n,
						   SMARM_T_VOID, 4, MS(5000)),
			   SMARM_EINVAL);
	}
	/* unchecked: a tuple is a pointer to its struct */
	ip.a = 0;
	HARNESS_EQ((smarm_server_callv)(s, "move", MS(5000), &ip,
					(const void *)&p, 3),
		   0);
	HARNESS_EQ(ip.a, 15);
	HARNESS_EQ(ip.b, -4);
	HARNESS_EQ((smarm_server_callv)(s, "move", MS(5000), &ip,
					(const void *)NULL, 3),
		   SMARM_EARGS);
	k.n = 13;
	HARNESS_EQ((smarm_server_castv)(s, "put", (const void *)&k), 0);
	HARNESS_EQ((smarm_server_callv)(s, "last", MS(5000), &ko), 0);
	HARNESS_EQ(ko.n, 13);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

/*
 * A raw reply target takes a tuple (smarm_reply_to): copied as its
 * bytes, the requester gets it as the struct of that size; a tuple
 * with no data, no size or over the largest is refused.
 */
static void reply_to_root(void *arg)
{
	smarm_chan_t *rch = NULL;
	smarm_response_t msg;
	smarm_value_t v = { 0 };
	struct pt p = { 3, 2.5 }, out = { 0, 0 };
	struct ipair small;
	smarm_value_t t = smarm_value_tuple(&p, sizeof p);
	smarm_value_t none = smarm_value_tuple(NULL, sizeof p);
	smarm_value_t empty = smarm_value_tuple(&p, 0);
	smarm_value_t huge = smarm_value_tuple(&p, 8 * SMARM_TUPLE_MAX + 1);
	uint64_t id = 0;
	(void)arg;
	HARNESS_EQ(smarm_response_chan_alloc(&rch), 0);
	HARNESS_EQ(smarm_request_id_new(&id), 0);
	HARNESS_EQ(smarm_reply_to(rch, id, &t), 0);
	p.x = 99; /* copied at the call */
	HARNESS_EQ(smarm_chan_recv_timeout(rch, &msg, MS(5000)), 0);
	HARNESS_EQ(smarm_server_check_response(&msg, id, &v), 0);
	HARNESS_EQ(v.type, SMARM_T_TUPLE);
	HARNESS_EQ(v.len, sizeof out);
	HARNESS_EQ(smarm_value_get_tuple(&v, &small, sizeof small),
		   SMARM_EARGS);
	HARNESS_EQ(smarm_value_get_tuple(&v, &out, sizeof out), 0);
	HARNESS_EQ(out.x, 3);
	HARNESS_CHECK(out.y == 2.5);
	smarm_value_release(&v);
	HARNESS_EQ(smarm_reply_to(rch, id, &none), SMARM_EARGS);
	HARNESS_EQ(smarm_reply_to(rch, id, &empty), SMARM_EARGS);
	HARNESS_EQ(smarm_reply_to(rch, id, &huge), SMARM_EARGS);
	HARNESS_EQ(harness_chan_len(rch), 0);
	/* an answer nobody takes is freed with the channel */
	HARNESS_EQ(smarm_reply_to(rch, id, &t), 0);
	harness_chan_drop(rch);
}

START_TEST(test_tuple_reply_to_takes_a_tuple)
{
	ck_assert_int_eq(harness_run(1, reply_to_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

START_TEST(test_tuple_varargs_checked_and_not)
{
	ck_assert_int_eq(harness_run(2, varargs_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_str_eq(why[0], "flag: argument 1 does not fit bool (out of "
				 "range, not exactly a value of it, a NUL in "
				 "a str, or no data for its length)");
	ck_assert_str_eq(why[1], "flag: argument 2 does not fit f32 (out of "
				 "range, not exactly a value of it, a NUL in "
				 "a str, or no data for its length)");
}
END_TEST

/* ---- gen_statem */

enum { IDLE, MOVING };

static void go(smarm_server_t *s, int32_t x, int32_t y)
{
	struct ipair p = { x, y };
	smarm_value_t a = smarm_value_tuple(&p, sizeof p);
	HARNESS_EQ(smarm_server_cast(s, "go", &a, 1), 0);
}

static struct ipair where(smarm_server_t *s)
{
	struct ipair p = { -99, -99 };
	HARNESS_EQ(call_tuple(s, "where", NULL, 0, &p, sizeof p), 0);
	return p;
}

static void statem_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_server_status_t st;
	struct ipair p;
	smarm_value_t r;
	(void)arg;
	HARNESS_EQ(smarm_server_start(cursor, NULL, NULL, &s), 0);
	go(s, -1, 5); /* the guard refuses it: the second row counts it */
	p = where(s);
	HARNESS_EQ(p.a, 0);
	HARNESS_EQ(p.b, 0);
	memset(&st, 0, sizeof st);
	st.struct_size = sizeof st;
	HARNESS_EQ(smarm_server_get_status(s, &st, MS(5000)), 0);
	HARNESS_EQ(st.state, IDLE);
	go(s, 2, 3); /* the guard lets it through: Moving */
	p = where(s);
	HARNESS_EQ(p.a, 2);
	HARNESS_EQ(p.b, 3);
	HARNESS_EQ(smarm_server_get_status(s, &st, MS(5000)), 0);
	HARNESS_EQ(st.state, MOVING);
	go(s, -5, 1); /* Moving takes any */
	p = where(s);
	HARNESS_EQ(p.a, -5);
	HARNESS_EQ(p.b, 1);
	/* one guard refusal, three wrong-size replies refused */
	memset(&r, 0, sizeof r);
	HARNESS_EQ(smarm_server_call(s, "refused", NULL, 0, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 301);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

START_TEST(test_tuple_statem_guard_and_action_get_the_struct)
{
	ck_assert_int_eq(harness_run(2, statem_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_tuple_suite(void)
{
	Suite *s = suite_create("tuple");
	TCase *tc = tcase_create("tuple");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_tuple_call_passes_and_returns_structs);
	tcase_add_test(tc, test_tuple_wrong_struct_is_eargs_and_why_names_it);
	tcase_add_test(tc, test_tuple_stub_takes_and_returns_structs);
	tcase_add_test(tc, test_tuple_varargs_checked_and_not);
	tcase_add_test(tc, test_tuple_reply_to_takes_a_tuple);
	tcase_add_test(tc, test_tuple_statem_guard_and_action_get_the_struct);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(tuple)
