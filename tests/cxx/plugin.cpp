// SPDX-License-Identifier: MIT
//
// plugin.cpp - a behaviour plugin written in C++ (-std=c++17
// -pedantic-errors), with SMARM_PLUGIN_DEFINE_SERVERS: one gen_server,
// "echo", whose call echo(i64) -> i64 answers its argument plus one.
// consumer.cpp loads it, starts a server of it and calls it.

#include <smarm/smarm_plugin.h>

static int echo_create(const char *args, void **state)
{
	(void)args;
	*state = nullptr;
	return 0;
}

static int64_t echo_echo(void *state, smarm_gs_ctx_t *cx, int64_t v)
{
	(void)state;
	(void)cx;
	return v + 1;
}

static const smarm_handler_t handlers[] = {
	{ "echo", reinterpret_cast<void (*)(void)>(echo_echo) },
};

static smarm_gs_desc_t make_echo()
{
	smarm_gs_desc_t d = {};
	d.struct_size = sizeof d;
	d.name = "echo";
	d.protocol = "call echo(i64) -> i64";
	d.handlers = handlers;
	d.n_handlers = sizeof handlers / sizeof handlers[0];
	d.create = echo_create;
	return d;
}

static const smarm_gs_desc_t echo = make_echo();
static const smarm_gs_desc_t *const servers[] = { &echo };

SMARM_PLUGIN_DEFINE_SERVERS("cxx_echo", servers);
