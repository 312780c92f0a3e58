/* SPDX-License-Identifier: MIT */
/*
 * oot_plugin.c - an out-of-tree behaviour plugin, built the way a plugin
 * author builds one against an installed libsmarm:
 *     cc -shared -fPIC -o adder.so oot_plugin.c $(pkg-config --cflags --libs
 * smarm) One gen_server behaviour, "adder": a running sum. Start arguments
 * "start=N" set its first value. The install test loads it with the
 * installed smarm-run, from a host that dlopen()s libsmarm.so.0
 * (dl_host.c), and from Python with ctypes (tests/python).
 */
#include <smarm/smarm_plugin.h>

#include <stdlib.h>
#include <string.h>

struct adder {
	int64_t sum;
};

static int a_create(const char *args, void **state)
{
	struct adder *a = calloc(1, sizeof *a);
	if (a == NULL)
		return SMARM_ENOMEM;
	if (args != NULL && strncmp(args, "start=", 6) == 0)
		a->sum = strtoll(args + 6, NULL, 10);
	*state = a;
	return 0;
}

static void a_destroy(void *state)
{
	free(state);
}

static int64_t a_add(void *state, smarm_gs_ctx_t *cx, int64_t n)
{
	struct adder *a = state;
	(void)cx;
	a->sum += n;
	return a->sum;
}

static int64_t a_get(void *state, smarm_gs_ctx_t *cx)
{
	(void)cx;
	return ((struct adder *)state)->sum;
}

static void a_reset(void *state, smarm_gs_ctx_t *cx)
{
	(void)cx;
	((struct adder *)state)->sum = 0;
}

static const smarm_handler_t handlers[] = {
	{ "add", (void (*)(void))a_add },
	{ "get", (void (*)(void))a_get },
	{ "reset", (void (*)(void))a_reset },
};

static const smarm_gs_desc_t adder = {
	.struct_size = sizeof(smarm_gs_desc_t),
	.name = "adder",
	.protocol = "call add(i64) -> i64; call get() -> i64; cast reset()",
	.handlers = handlers,
	.n_handlers = sizeof handlers / sizeof handlers[0],
	.create = a_create,
	.destroy = a_destroy,
};

static const smarm_gs_desc_t *const servers[] = { &adder };

SMARM_PLUGIN_DEFINE_SERVERS("adder", servers);
