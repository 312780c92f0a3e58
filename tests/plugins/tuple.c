/* SPDX-License-Identifier: MIT */
/*
 * tuple.c - behaviours with tuple types, for test_tuple.c: handlers,
 * guards and actions that take and return C structs by value.
 *
 * "shapes", a gen_server:
 *   move((i32, f64), i8) -> (i32, i32)   (x * k, (int)(y * k))
 *   mix((i8, f64, i16, pid)) -> (i8, f64, i16, pid)
 *                                        (a + 1, b * 2, c - 1, the pid)
 *   put((u16, bool)), cast; last() -> (u16, bool): the last put
 *   token() -> (i32, i32): answered through a reply token
 *                          (smarm_gs_reply_later, smarm_reply), first
 *                          with a value of the wrong size, which must be
 *                          SMARM_EARGS (the answer is then (status, 0)),
 *                          then with (7, 8)
 *   flag(bool, f32) -> i32               (b ? f * 10 : -1)
 *   label() -> str                       ("shapes")
 *
 * "cursor", a gen_statem of states Idle and Moving:
 *   go((i32, i32)), cast: in Idle a guard lets a position of x >= 0
 *                  through (the action keeps it: Moving), a refused one
 *                  is counted and stays; in Moving every go is kept
 *   where() -> (i32, i32): the position (smarm_sm_reply), after a
 *                  reply of the wrong size refused (counted)
 *   refused() -> i32: the positions the guard refused, plus 100 for
 *                  each wrong-size reply refused
 */
#include <smarm/smarm_plugin.h>

#include <stdlib.h>

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

/* ---- shapes ---- */

static int s_create(const char *args, void **state)
{
	(void)args;
	*state = calloc(1, sizeof(struct kept));
	return *state != NULL ? 0 : SMARM_ENOMEM;
}

static void s_destroy(void *state)
{
	free(state);
}

static struct ipair s_move(void *state, smarm_gs_ctx_t *cx, struct pt p,
			   int8_t k)
{
	struct ipair r = { p.x * k, (int32_t)(p.y * k) };
	(void)state;
	(void)cx;
	return r;
}

static struct mix s_mix(void *state, smarm_gs_ctx_t *cx, struct mix m)
{
	(void)state;
	(void)cx;
	m.a++;
	m.b *= 2;
	m.c--;
	return m;
}

static void s_put(void *state, smarm_gs_ctx_t *cx, struct kept k)
{
	(void)cx;
	*(struct kept *)state = k;
}

static struct kept s_last(void *state, smarm_gs_ctx_t *cx)
{
	(void)cx;
	return *(struct kept *)state;
}

static struct ipair s_token(void *state, smarm_gs_ctx_t *cx)
{
	struct ipair good = { 7, 8 };
	int32_t small = 1;
	smarm_value_t v = smarm_value_tuple(&small, sizeof small);
	smarm_reply_t *tok = NULL;
	int rc;
	(void)state;
	if (smarm_gs_reply_later(cx, &tok) != 0)
		return good; /* never: the caller sees (7, 8) come directly */
	rc = smarm_reply(tok, &v); /* the wrong size: the token stays */
	if (rc != SMARM_EARGS) {
		struct ipair bad = { rc, 0 };
		v = smarm_value_tuple(&bad, sizeof bad);
		smarm_reply(tok, &v);
		return good;
	}
	v = smarm_value_tuple(&good, sizeof good);
	smarm_reply(tok, &v);
	return good; /* ignored: the token answered */
}

static int32_t s_flag(void *state, smarm_gs_ctx_t *cx, bool b, float f)
{
	(void)state;
	(void)cx;
	return b ? (int32_t)(f * 10) : -1;
}

static const char *s_label(void *state, smarm_gs_ctx_t *cx)
{
	(void)state;
	(void)cx;
	return "shapes";
}

static const smarm_handler_t s_handlers[] = {
	{ "move", (void (*)(void))s_move },
	{ "mix", (void (*)(void))s_mix },
	{ "put", (void (*)(void))s_put },
	{ "last", (void (*)(void))s_last },
	{ "token", (void (*)(void))s_token },
	{ "flag", (void (*)(void))s_flag },
	{ "label", (void (*)(void))s_label },
};

static const smarm_gs_desc_t shapes = {
	.struct_size = sizeof(smarm_gs_desc_t),
	.name = "shapes",
	.protocol = "call move((i32, f64), i8) -> (i32, i32)\n"
		    "call mix((i8, f64, i16, pid)) -> (i8, f64, i16, pid)\n"
		    "cast put((u16, bool))\n"
		    "call last() -> (u16, bool)\n"
		    "call token() -> (i32, i32)\n"
		    "call flag(bool, f32) -> i32\n"
		    "call label() -> str\n",
	.handlers = s_handlers,
	.n_handlers = sizeof s_handlers / sizeof s_handlers[0],
	.create = s_create,
	.destroy = s_destroy,
};

/* ---- cursor ---- */

enum { IDLE, MOVING };

struct cursor {
	struct ipair pos;
	int32_t refused;
};

static int c_create(const char *args, void **data)
{
	(void)args;
	*data = calloc(1, sizeof(struct cursor));
	return *data != NULL ? 0 : SMARM_ENOMEM;
}

static void c_destroy(void *data)
{
	free(data);
}

static bool g_nonneg(const void *data, struct ipair p)
{
	(void)data;
	return p.a >= 0;
}

static int32_t a_go(void *data, smarm_sm_ctx_t *cx, int32_t state,
		    struct ipair p)
{
	(void)cx;
	(void)state;
	((struct cursor *)data)->pos = p;
	return 0;
}

static int32_t a_refuse(void *data, smarm_sm_ctx_t *cx, int32_t state,
			struct ipair p)
{
	(void)cx;
	(void)state;
	(void)p;
	((struct cursor *)data)->refused++;
	return 0;
}

static int32_t a_where(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	struct cursor *c = data;
	int64_t wide = 0;
	smarm_value_t v = smarm_value_tuple(&wide, 4); /* 4 of 8 bytes */
	(void)state;
	if (smarm_sm_reply(cx, &v) == SMARM_EARGS)
		c->refused += 100;
	v = smarm_value_tuple(&c->pos, sizeof c->pos);
	smarm_sm_reply(cx, &v);
	return 0;
}

static int32_t a_refused(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	smarm_value_t v = smarm_value_i64(((struct cursor *)data)->refused);
	(void)state;
	smarm_sm_reply(cx, &v);
	return 0;
}

#define G(f) ((void (*)(void))(f))

static const smarm_sm_row_t c_rows[] = {
	{ IDLE, SMARM_SM_CAST, "go", G(g_nonneg), G(a_go), SMARM_SM_TO,
	  MOVING },
	{ IDLE, SMARM_SM_CAST, "go", NULL, G(a_refuse), SMARM_SM_STAY, 0 },
	{ MOVING, SMARM_SM_CAST, "go", NULL, G(a_go), SMARM_SM_STAY, 0 },
	{ SMARM_SM_ANY, SMARM_SM_CALL, "where", NULL, G(a_where), SMARM_SM_STAY,
	  0 },
	{ SMARM_SM_ANY, SMARM_SM_CALL, "refused", NULL, G(a_refused),
	  SMARM_SM_STAY, 0 },
};

static const char *const c_states[] = { "Idle", "Moving" };

static const smarm_sm_desc_t cursor = {
	.struct_size = sizeof(smarm_sm_desc_t),
	.n_states = 2,
	.name = "cursor",
	.protocol = "cast go((i32, i32))\n"
		    "call where() -> (i32, i32)\n"
		    "call refused() -> i32\n",
	.state_names = c_states,
	.initial = IDLE,
	.rows = c_rows,
	.n_rows = sizeof c_rows / sizeof c_rows[0],
	.create = c_create,
	.destroy = c_destroy,
};

static const smarm_gs_desc_t *const servers[] = { &shapes };
static const smarm_sm_desc_t *const machines[] = { &cursor };

SMARM_PLUGIN_DEFINE("tuple", servers, machines);
