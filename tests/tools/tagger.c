/* SPDX-License-Identifier: MIT */
/*
 * tagger.c - a test plugin for the smarm-run suite: one gen_server
 * behaviour, "tagger", that logs its start and its end so a test can
 * check the order a tree started and shut down in, and that can be told
 * to fail. Start arguments, space-separated:
 *   tag=T        the word logged (default "?")
 *   fail=1       create fails (SMARM_EINVAL): the tree does not start
 *   crash_in=MS  crash once that many milliseconds pass without a
 *                message (the idle window)
 *   trap=1       trap exits (a shutdown reaches handle_shutdown)
 *   linger=1     with trap=1: a shutdown is answered SMARM_GS_CONTINUE
 *                (the server keeps serving; only a kill ends it)
 *   hang=1       right after init, block the worker in sleep(3) for
 *                ever (logs "hang T" first): nothing can end it
 * With TAGGER_LOAD_DELAY_MS set, loading the plugin takes that long
 * (its constructor sleeps): a launcher still loading its plugins.
 * Log lines "start T", "hang T" and "stop T" are appended to the file named
 * by the environment variable TAGGER_LOG (nothing is logged without it),
 * each with one write(2) on an O_APPEND descriptor, so lines of servers
 * on different workers never interleave.
 */
#include <smarm/smarm_plugin.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tagger {
	char tag[32];
	long crash_in_ms;
	int trap;
	int linger;
	int hang;
	int64_t pings;
};

static void log_line(const char *fmt, const char *tag, int how)
{
	const char *path = getenv("TAGGER_LOG");
	char line[96];
	int fd, n;
	if (path == NULL)
		return;
	n = snprintf(line, sizeof line, fmt, tag, how);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		(void)0; /* a test log: a short write shows in the test */
	close(fd);
}

__attribute__((constructor)) static void t_load(void)
{
	const char *ms = getenv("TAGGER_LOAD_DELAY_MS");
	if (ms != NULL)
		usleep((useconds_t)strtol(ms, NULL, 10) * 1000);
}

static int t_create(const char *args, void **state)
{
	struct tagger *t = calloc(1, sizeof *t);
	const char *p = args ? args : "";
	if (t == NULL)
		return SMARM_ENOMEM;
	strcpy(t->tag, "?");
	while (*p) {
		size_t n = strcspn(p, " ");
		if (n > 4 && strncmp(p, "tag=", 4) == 0)
			snprintf(t->tag, sizeof t->tag, "%.*s", (int)(n - 4),
				 p + 4);
		else if (n == 6 && strncmp(p, "fail=1", 6) == 0) {
			free(t);
			return SMARM_EINVAL;
		} else if (n > 9 && strncmp(p, "crash_in=", 9) == 0)
			t->crash_in_ms = strtol(p + 9, NULL, 10);
		else if (n == 6 && strncmp(p, "trap=1", 6) == 0)
			t->trap = 1;
		else if (n == 8 && strncmp(p, "linger=1", 8) == 0)
			t->linger = 1;
		else if (n == 6 && strncmp(p, "hang=1", 6) == 0)
			t->hang = 1;
		p += n;
		while (*p == ' ')
			p++;
	}
	*state = t;
	return 0;
}

static void t_destroy(void *state)
{
	free(state);
}

static int t_init(void *state, smarm_gs_ctx_t *cx)
{
	struct tagger *t = state;
	int rc;
	if (t->trap && (rc = smarm_gs_trap_exit(cx)) != 0)
		return rc;
	if (t->crash_in_ms > 0 &&
	    (rc = smarm_gs_set_idle(cx, (uint64_t)t->crash_in_ms * 1000000u)) !=
		    0)
		return rc;
	log_line("start %s\n", t->tag, 0);
	if (t->hang && (rc = smarm_gs_continue(cx, 1)) != 0)
		return rc;
	return 0;
}

/* hang=1: a handler blocked in a system call, outside the runtime. */
static void t_continue(void *state, smarm_gs_ctx_t *cx, uint64_t tag)
{
	struct tagger *t = state;
	(void)cx;
	(void)tag;
	log_line("hang %s\n", t->tag, 0);
	for (;;)
		sleep(1);
}

static int64_t t_ping(void *state, smarm_gs_ctx_t *cx)
{
	struct tagger *t = state;
	(void)cx;
	return ++t->pings;
}

static int t_shutdown(void *state, smarm_gs_ctx_t *cx)
{
	struct tagger *t = state;
	(void)cx;
	log_line("shutdown %s\n", t->tag, 0);
	return t->linger ? SMARM_GS_CONTINUE : SMARM_GS_EXIT;
}

/* The idle window of crash_in passed: crash. */
static void t_idle(void *state, smarm_gs_ctx_t *cx)
{
	(void)state;
	(void)cx;
	smarm_actor_crash(77);
}

static void t_terminate(void *state, int how, intptr_t reason, bool may_block)
{
	struct tagger *t = state;
	(void)reason;
	(void)may_block;
	log_line("stop %s\n", t->tag, how);
}

static const smarm_handler_t handlers[] = {
	{ "ping", (void (*)(void))t_ping },
};

static const smarm_gs_desc_t tagger = {
	.struct_size = sizeof(smarm_gs_desc_t),
	.name = "tagger",
	.protocol = "call ping() -> i64\n",
	.handlers = handlers,
	.n_handlers = sizeof handlers / sizeof handlers[0],
	.create = t_create,
	.destroy = t_destroy,
	.init = t_init,
	.handle_continue = t_continue,
	.handle_idle = t_idle,
	.handle_shutdown = t_shutdown,
	.terminate = t_terminate,
};

static const smarm_gs_desc_t *const servers[] = { &tagger };

SMARM_PLUGIN_DEFINE_SERVERS("tagger", servers);
