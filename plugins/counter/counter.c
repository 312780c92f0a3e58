/* SPDX-License-Identifier: MIT */
/*
 * counter.c - the "counter" gen_server behaviour: a 64-bit counter.
 *
 *     cast inc(i64)            add to the counter
 *     call add(i64) -> i64     add, and reply with the new value
 *     call get() -> i64        the value
 *     cast reset()             back to the start value
 *
 * The start arguments, if any, are the start value in decimal, and the
 * word "hibernate" after it (or alone) makes the server hibernate at
 * every wait (smarm_gs_set_hibernate_after 0). Its status text
 * (format_status) is "count N (start S)".
 */
#include <smarm/smarm_plugin.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct counter {
	int64_t n, start;
	bool hibernate;
};

static int counter_create(const char *args, void **state)
{
	struct counter *c = calloc(1, sizeof *c);
	if (c == NULL)
		return SMARM_ENOMEM;
	if (args != NULL) {
		c->n = c->start = strtoll(args, NULL, 10);
		c->hibernate = strstr(args, "hibernate") != NULL;
	}
	*state = c;
	return 0;
}

static int counter_init(void *state, smarm_gs_ctx_t *cx)
{
	const struct counter *c = state;
	return c->hibernate ? smarm_gs_set_hibernate_after(cx, 0) : 0;
}

static void counter_destroy(void *state)
{
	free(state);
}

static void inc(void *state, smarm_gs_ctx_t *cx, int64_t by)
{
	(void)cx;
	((struct counter *)state)->n += by;
}

static int64_t add(void *state, smarm_gs_ctx_t *cx, int64_t by)
{
	(void)cx;
	return ((struct counter *)state)->n += by;
}

static int64_t get(void *state, smarm_gs_ctx_t *cx)
{
	(void)cx;
	return ((struct counter *)state)->n;
}

static void reset(void *state, smarm_gs_ctx_t *cx)
{
	struct counter *c = state;
	(void)cx;
	c->n = c->start;
}

static int counter_status(const void *state, char *buf, size_t len)
{
	const struct counter *c = state;
	snprintf(buf, len, "count %" PRId64 " (start %" PRId64 ")", c->n,
		 c->start);
	return 0;
}

static const smarm_handler_t handlers[] = {
	{ "inc", (void (*)(void))inc },
	{ "add", (void (*)(void))add },
	{ "get", (void (*)(void))get },
	{ "reset", (void (*)(void))reset },
};

static const smarm_gs_desc_t counter = {
	.struct_size = sizeof(smarm_gs_desc_t),
	.name = "counter",
	.protocol = "cast inc(i64)\n"
		    "call add(i64) -> i64\n"
		    "call get() -> i64\n"
		    "cast reset()\n",
	.handlers = handlers,
	.n_handlers = sizeof handlers / sizeof handlers[0],
	.create = counter_create,
	.destroy = counter_destroy,
	.init = counter_init,
	.format_status = counter_status,
};

static const smarm_gs_desc_t *const servers[] = { &counter };

SMARM_PLUGIN_DEFINE_SERVERS("counter", servers);
