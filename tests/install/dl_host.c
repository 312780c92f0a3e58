/* SPDX-License-Identifier: MIT */
/*
 * dl_host.c - a host that is NOT linked with libsmarm: it dlopen()s
 * libsmarm.so.0 (the path in argv[1]), takes every call through dlsym,
 * loads a plugin (argv[2], the out-of-tree "adder"), runs a supervisor
 * of one adder server as the node's root on a thread of its own, and
 * calls the server from its main thread, a plain thread, by name: 1000
 * calls, a cast, the varargs form and a native stub. Then it stops the
 * node, closes it and the plugin. Prints "dl host: ok" and exits 0 when
 * every check passed, else names the failed step and exits 1. Built with
 * only `pkg-config --cflags smarm` (headers) and -ldl -lpthread.
 */
#include <smarm/smarm_plugin.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *lib;

/* The library's function `name`, as a pointer of the declared type. */
#define SYM(name) ((__typeof__(&name))sym(#name))

static void *sym(const char *name)
{
	void *p = dlsym(lib, name);
	if (p == NULL) {
		fprintf(stderr, "dl host: no symbol %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

static int fail(const char *what, int rc)
{
	const char *(*err_name)(int) = SYM(smarm_err_name);
	fprintf(stderr, "dl host: %s: %s\n", what, err_name(rc));
	return 1;
}

struct runner {
	smarm_node_t *node;
	const smarm_sup_spec_t *spec;
	int rc;
};

/* The root: a supervisor of the spec, on the root actor. */
static void root(void *arg)
{
	const smarm_sup_spec_t *spec = arg;
	(void)SYM(smarm_sup_run)(spec);
}

static void *run_node(void *arg)
{
	struct runner *r = arg;
	r->rc = SYM(smarm_node_run)(r->node, root, (void *)r->spec, NULL, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	smarm_plugin_t *pl = NULL;
	const smarm_behaviour_t *b = NULL;
	smarm_sup_spec_t *spec = NULL;
	smarm_server_t *s = NULL;
	struct runner r = { 0 };
	pthread_t th;
	char msg[256];
	smarm_value_t arg, reply;
	int64_t sum = 0;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: dl_host LIBSMARM PLUGIN\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		fprintf(stderr, "dl host: dlopen: %s\n", dlerror());
		return 1;
	}
	rc = SYM(smarm_plugin_open)(argv[2], &pl, msg, sizeof msg);
	if (rc != 0) {
		fprintf(stderr, "dl host: plugin: %s\n", msg);
		return 1;
	}
	if ((rc = SYM(smarm_plugin_behaviour)(pl, "adder", &b)) != 0)
		return fail("behaviour", rc);
	if ((rc = SYM(smarm_sup_spec_alloc)(&spec)) != 0 ||
	    (rc = SYM(smarm_sup_spec_add_server)(spec, "adder", b, "start=100",
						 "adder", SMARM_SUP_PERMANENT,
						 SMARM_SUP_SHUTDOWN_DEFAULT,
						 5000000000ull)) != 0)
		return fail("spec", rc);
	if ((rc = SYM(smarm_node_open)(&r.node, NULL)) != 0)
		return fail("node_open", rc);
	r.spec = spec;
	if (pthread_create(&th, NULL, run_node, &r) != 0)
		return fail("pthread_create", SMARM_ESYSTEM);

	/* A plain thread's client: the node must be named. */
	if ((rc = SYM(smarm_server_open_name)(r.node, b, "adder", &s)) != 0)
		return fail("server_open_name", rc);
	arg.type = SMARM_T_I64;
	arg.v.i = 0;
	for (int tries = 0;; tries++) { /* until the server registered */
		struct timespec ts = { 0, 10000000 };
		rc = SYM(smarm_server_call)(s, "get", NULL, 0, &reply,
					    1000000000ull);
		if (rc == 0 || tries == 500)
			break;
		nanosleep(&ts, NULL);
	}
	if (rc != 0)
		return fail("first call", rc);
	if (reply.type != SMARM_T_I64 || reply.v.i != 100)
		return fail("get after start=100", SMARM_EARGS);
	for (int i = 1; i <= 1000; i++) {
		arg.v.i = i;
		rc = SYM(smarm_server_call)(s, "add", &arg, 1, &reply,
					    5000000000ull);
		if (rc != 0)
			return fail("add", rc);
	}
	if (reply.v.i != 100 + 500500)
		return fail("sum of 1000 adds", SMARM_EARGS);
	if ((rc = SYM(smarm_server_cast)(s, "reset", NULL, 0)) != 0)
		return fail("cast reset", rc);
	rc = SYM(smarm_server_callv)(s, "add", 5000000000ull, &sum, (int64_t)7);
	if (rc != 0 || sum != 7)
		return fail("callv add after reset", rc ? rc : SMARM_EARGS);
	{
		void (*fn)(void) = NULL;
		int (*add)(smarm_server_t *, uint64_t, int64_t *, int64_t);
		int64_t v = 0;
		if ((rc = SYM(smarm_server_stub)(b, "add", &fn)) != 0)
			return fail("stub", rc);
		add = (int (*)(smarm_server_t *, uint64_t, int64_t *,
			       int64_t))fn;
		if ((rc = add(s, 5000000000ull, &v, 5)) != 0 || v != 12)
			return fail("stub add", rc ? rc : SMARM_EARGS);
	}
	SYM(smarm_server_free)(s);
	if ((rc = SYM(smarm_node_stop)(r.node)) != 0)
		return fail("node_stop", rc);
	pthread_join(th, NULL);
	if (r.rc != 0)
		return fail("node_run", r.rc);
	if ((rc = SYM(smarm_node_close)(r.node)) != 0)
		return fail("node_close", rc);
	SYM(smarm_sup_spec_free)(spec);
	if ((rc = SYM(smarm_plugin_close)(pl)) != 0)
		return fail("plugin_close", rc);
	printf("dl host: ok\n");
	return 0;
}
