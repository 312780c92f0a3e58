/* SPDX-License-Identifier: MIT */
/*
 * loadgen.c - the "loadgen" gen_server behaviour of the demo
 * (plugins/demo.app, docs/smarm-run.md): a load generator. Its tick (the
 * gen_server idle window: handle_idle) makes calls and casts to the
 * counter and the key-value store by name, and every so often pokes the
 * crasher so that it crashes, every other time by a fault (its supervisor
 * restarts it; a fault ends the process unless the node contains faults,
 * as smarm-run's does). Clients of another
 * plugin's servers need that plugin's behaviour: loadgen opens the plugins
 * named in its start arguments (smarm-run puts their paths there with
 * ${ALIAS}), which, already loaded by the host, are the same objects.
 *
 *     call stats() -> u64      requests made so far
 *
 * Start arguments, space-separated key=value words: counter=PATH,
 * kv=PATH, crasher=PATH (each optional: without it that server is left
 * alone), every=MS (tick period, default 1), batch=N (requests per tick,
 * default 20), poke=MS (0: never; default 500). A server that is not
 * there at a given moment (restarting) is counted as a miss, not an
 * error. At its end it prints its counts on standard output.
 */
#include <smarm/smarm_plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000ull
#define CALL_TIMEOUT (1000 * MS)

enum { T_COUNTER, T_KV, T_CRASHER, T_N };

static const char *const target_key[T_N] = { "counter", "kv", "crasher" };

struct loadgen {
	char *path[T_N];		 /* plugin paths, or NULL */
	smarm_plugin_t *pl[T_N];	 /* opened by create */
	const smarm_behaviour_t *b[T_N]; /* their behaviours */
	smarm_server_t *s[T_N];		 /* handles by name (init) */
	uint64_t every_ms, poke_ms;
	unsigned batch;
	uint64_t calls, casts, pokes, misses, seq;
	uint64_t next_poke; /* smarm_now_ns() of the next poke */
};

static void lg_destroy(void *state)
{
	struct loadgen *g = state;
	for (int i = 0; i < T_N; i++) {
		smarm_server_free(g->s[i]);
		if (g->pl[i] != NULL)
			smarm_plugin_close(g->pl[i]);
		free(g->path[i]);
	}
	free(g);
}

static int parse_args(struct loadgen *g, const char *p)
{
	while (p != NULL && *p) {
		size_t n = strcspn(p, " ");
		const char *eq = memchr(p, '=', n);
		size_t k = eq ? (size_t)(eq - p) : n;
		const char *v = eq ? eq + 1 : "";
		size_t vn = eq ? n - k - 1 : 0;
		bool known = false;
		for (int i = 0; i < T_N; i++)
			if (k == strlen(target_key[i]) &&
			    memcmp(p, target_key[i], k) == 0 && vn > 0) {
				free(g->path[i]);
				g->path[i] = strndup(v, vn);
				if (g->path[i] == NULL)
					return SMARM_ENOMEM;
				known = true;
			}
		if (k == 5 && memcmp(p, "every", 5) == 0)
			g->every_ms = strtoull(v, NULL, 10), known = true;
		else if (k == 5 && memcmp(p, "batch", 5) == 0)
			g->batch = (unsigned)strtoul(v, NULL, 10), known = true;
		else if (k == 4 && memcmp(p, "poke", 4) == 0)
			g->poke_ms = strtoull(v, NULL, 10), known = true;
		if (!known)
			return SMARM_EINVAL;
		p += n;
		while (*p == ' ')
			p++;
	}
	return g->every_ms > 0 ? 0 : SMARM_EINVAL;
}

static int lg_create(const char *args, void **state)
{
	struct loadgen *g = calloc(1, sizeof *g);
	int rc;
	if (g == NULL)
		return SMARM_ENOMEM;
	g->every_ms = 1;
	g->batch = 20;
	g->poke_ms = 500;
	rc = parse_args(g, args);
	for (int i = 0; rc == 0 && i < T_N; i++) {
		if (g->path[i] == NULL)
			continue;
		rc = smarm_plugin_open(g->path[i], &g->pl[i], NULL, 0);
		if (rc == 0)
			rc = smarm_plugin_behaviour(g->pl[i], target_key[i],
						    &g->b[i]);
	}
	if (rc != 0) {
		lg_destroy(g);
		return rc;
	}
	*state = g;
	return 0;
}

static int lg_init(void *state, smarm_gs_ctx_t *cx)
{
	struct loadgen *g = state;
	int rc;
	for (int i = 0; i < T_N; i++)
		if (g->b[i] != NULL &&
		    (rc = smarm_server_open_name(NULL, g->b[i], target_key[i],
						 &g->s[i])) != 0)
			return rc;
	/* The idle window is the tick: it fires after each every_ms in
	 * which no message came (loadgen gets none but stats calls). */
	g->next_poke = smarm_now_ns() + g->poke_ms * MS;
	return smarm_gs_set_idle(cx, g->every_ms * MS);
}

/* Count one request's outcome: a server that is not there is a miss. */
static void count(struct loadgen *g, int rc, uint64_t *ok)
{
	if (rc == 0)
		(*ok)++;
	else
		g->misses++;
}

static smarm_value_t i64(int64_t v)
{
	smarm_value_t x = { .type = SMARM_T_I64 };
	x.v.i = v;
	return x;
}

static void requests(struct loadgen *g)
{
	smarm_value_t one = i64(1), reply;
	if (g->s[T_COUNTER] != NULL) {
		count(g, smarm_server_cast(g->s[T_COUNTER], "inc", &one, 1),
		      &g->casts);
		count(g,
		      smarm_server_call(g->s[T_COUNTER], "add", &one, 1, &reply,
					CALL_TIMEOUT),
		      &g->calls);
	}
	if (g->s[T_KV] != NULL) {
		char key[24];
		smarm_value_t kv[2] = { { .type = SMARM_T_STR },
					{ .type = SMARM_T_BYTES } };
		int n = snprintf(key, sizeof key, "k%llu",
				 (unsigned long long)(g->seq % 64));
		kv[0].len = (uint32_t)n;
		kv[0].v.p = key;
		kv[1].len = sizeof g->seq;
		kv[1].v.p = &g->seq;
		count(g,
		      smarm_server_call(g->s[T_KV], "put", kv, 2, &reply,
					CALL_TIMEOUT),
		      &g->calls);
		smarm_value_release(&reply);
		reply.type = SMARM_T_VOID;
		count(g,
		      smarm_server_call(g->s[T_KV], "get", kv, 1, &reply,
					CALL_TIMEOUT),
		      &g->calls);
		smarm_value_release(&reply);
	}
}

/* One tick: a batch of requests, and a poke when one is due. */
static void lg_idle(void *state, smarm_gs_ctx_t *cx)
{
	struct loadgen *g = state;
	(void)cx;
	for (unsigned i = 0; i < g->batch; i++) {
		g->seq++;
		requests(g);
	}
	if (g->s[T_CRASHER] != NULL && g->poke_ms > 0 &&
	    smarm_now_ns() >= g->next_poke) {
		/* Every other poke a fault (a NULL write): contained where the
		 * node contains faults, as under smarm-run. */
		smarm_value_t why = i64(g->pokes % 2 == 0 ? 42 : 0);
		count(g,
		      smarm_server_cast(g->s[T_CRASHER],
					g->pokes % 2 == 0 ? "crash" : "fault",
					&why, 1),
		      &g->pokes);
		g->next_poke += g->poke_ms * MS;
	}
}

static uint64_t lg_stats(void *state, smarm_gs_ctx_t *cx)
{
	struct loadgen *g = state;
	(void)cx;
	return g->calls + g->casts;
}

static void lg_terminate(void *state, int how, intptr_t reason, bool may_block)
{
	struct loadgen *g = state;
	(void)how;
	(void)reason;
	(void)may_block;
	printf("loadgen: %llu calls, %llu casts, %llu crashes asked, %llu "
	       "misses\n",
	       (unsigned long long)g->calls, (unsigned long long)g->casts,
	       (unsigned long long)g->pokes, (unsigned long long)g->misses);
	fflush(stdout);
}

static const smarm_handler_t handlers[] = {
	{ "stats", (void (*)(void))lg_stats },
};

static const smarm_gs_desc_t loadgen = {
	.struct_size = sizeof(smarm_gs_desc_t),
	.name = "loadgen",
	.protocol = "call stats() -> u64\n",
	.handlers = handlers,
	.n_handlers = sizeof handlers / sizeof handlers[0],
	.create = lg_create,
	.destroy = lg_destroy,
	.init = lg_init,
	.handle_idle = lg_idle,
	.terminate = lg_terminate,
};

static const smarm_gs_desc_t *const servers[] = { &loadgen };

SMARM_PLUGIN_DEFINE_SERVERS("loadgen", servers);
