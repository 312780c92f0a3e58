/* SPDX-License-Identifier: MIT */
/*
 * bad.c - deliberately broken plugins for test_plugin.c, one shared
 * module per variant (tests/meson.build builds this file once per
 * BAD_* define). Each breaks one rule smarm_plugin_open checks; "good"
 * breaks none, "short" is a descriptor of ABI 1.0's minimum size (no
 * format_status, no reserved tail), which must load with the tail
 * taken as zero;
 * "nocreate" is a gen_server without its create.
 */
#include <smarm/smarm_plugin.h>

#include <stddef.h>

static int64_t get(void *state, smarm_gs_ctx_t *cx)
{
	(void)state;
	(void)cx;
	return 7;
}

__attribute__((unused)) static void poke(void *state, smarm_gs_ctx_t *cx)
{
	(void)state;
	(void)cx;
}

__attribute__((unused)) static int create(const char *args, void **state)
{
	(void)args;
	*state = NULL;
	return 0;
}

static const smarm_handler_t handlers[] = {
	{ "get", (void (*)(void))get },
#ifdef BAD_EXTRAHANDLER
	{ "nosuchop", (void (*)(void))poke },
#endif
#ifndef BAD_NOHANDLER
	{ "poke", (void (*)(void))poke },
#endif
};

#ifdef BAD_PROTO
#define PROTO "call get() -> i64\ncast poke(i65)\n"
#else
#define PROTO "call get() -> i64\ncast poke()\n"
#endif

#if defined(BAD_SMALLGS)
#define GS_SIZE 16
#elif defined(BAD_SHORT)
#define GS_SIZE offsetof(smarm_gs_desc_t, format_status)
#else
#define GS_SIZE sizeof(smarm_gs_desc_t)
#endif

static const smarm_gs_desc_t one = {
	.struct_size = GS_SIZE,
	.name = "one",
	.protocol = PROTO,
	.handlers = handlers,
	.n_handlers = sizeof handlers / sizeof handlers[0],
#ifndef BAD_NOCREATE
	.create = create,
#endif
};

#ifdef BAD_DUPNAME
static const smarm_gs_desc_t *const servers[] = { &one, &one };
#else
static const smarm_gs_desc_t *const servers[] = { &one };
#endif

#ifdef BAD_MACHINE
static const smarm_sm_desc_t machine = {
	.struct_size = sizeof(smarm_sm_desc_t),
	.name = "machine",
	.protocol = "cast go()",
	.n_states = 1,
};
static const smarm_sm_desc_t *const machines[] = { &machine };
#endif

/*
 * The variants that break the plugin descriptor or the entry write both
 * by hand; the others take SMARM_PLUGIN_DEFINE, as a plugin author does.
 */
#if defined(BAD_MAJOR) || defined(BAD_MINOR) || defined(BAD_SMALLDESC) ||      \
	defined(BAD_SHORT) || defined(BAD_NOENTRY) || defined(BAD_NULLENTRY)
static const smarm_plugin_desc_t plugin = {
#ifdef BAD_MAJOR
	.abi_major = SMARM_PLUGIN_ABI_MAJOR + 1,
#else
	.abi_major = SMARM_PLUGIN_ABI_MAJOR,
#endif
#ifdef BAD_MINOR
	.abi_minor = SMARM_PLUGIN_ABI_MINOR + 1,
#else
	.abi_minor = SMARM_PLUGIN_ABI_MINOR,
#endif
#if defined(BAD_SMALLDESC)
	.struct_size = 8,
#elif defined(BAD_SHORT)
	.struct_size = offsetof(smarm_plugin_desc_t, reserved),
#else
	.struct_size = sizeof(smarm_plugin_desc_t),
#endif
	.name = "bad",
	.servers = servers,
	.n_servers = sizeof servers / sizeof servers[0],
};

#ifndef BAD_NOENTRY
__attribute__((visibility("default"))) const smarm_plugin_desc_t *
smarm_plugin_entry(uint32_t host_major, uint32_t host_minor)
{
	(void)host_major;
	(void)host_minor;
#ifdef BAD_NULLENTRY
	return plugin.abi_major == 0 ? &plugin : NULL; /* NULL */
#else
	return &plugin;
#endif
}
#else
__attribute__((visibility("default"))) const void *not_the_entry(void)
{
	return &plugin;
}
#endif
#elif defined(BAD_MACHINE)
SMARM_PLUGIN_DEFINE("bad", servers, machines);
#else
SMARM_PLUGIN_DEFINE_SERVERS("bad", servers);
#endif
