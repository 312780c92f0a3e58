/* SPDX-License-Identifier: MIT */
/*
 * test_trace.c - the tracer (smarm_config_set_trace, SMARM_TRACE_FILE):
 * a known scenario (a ping-pong of two actors, a counter gen_server's
 * call, cast and reply) traced to both formats on 4 workers, each file
 * parsed with a real parser (Python's json module; a protobuf decoder
 * written against Perfetto's field numbers) by tests/python/
 * check_trace.py, which checks the slices nest per track, every flow
 * has both ends inside slices, tracks are named and the scenario's
 * events are there. A hibernating actor's waits show as parks, with
 * the sends that wake it as flows. A tiny ring under load drops and
 * counts, never blocks. The checker's path and the interpreter come
 * from the environment (SMARM_TEST_TRACE_CHECK, SMARM_TEST_PYTHON).
 */
#include "harness.h"

#include <smarm/smarm_plugin.h>
#include <string.h>
#include <sys/stat.h>

#define ROUNDS 200

struct pp {
	smarm_chan_t *to_pong, *to_ping;
	const smarm_behaviour_t *counter; /* NULL: no server part */
	int rounds;			  /* 0: ROUNDS */
};

static int pp_rounds(const struct pp *p)
{
	return p->rounds > 0 ? p->rounds : ROUNDS;
}

static void pong(void *arg)
{
	struct pp *p = arg;
	int v;
	for (int i = 0; i < pp_rounds(p); i++) {
		HARNESS_EQ(smarm_chan_recv(p->to_pong, &v), 0);
		v++;
		HARNESS_EQ(smarm_chan_send(p->to_ping, &v), 0);
	}
}

static void ping(void *arg)
{
	struct pp *p = arg;
	int v = 0;
	HARNESS_EQ(smarm_register("ping", NULL), 0);
	for (int i = 0; i < pp_rounds(p); i++) {
		HARNESS_EQ(smarm_chan_send(p->to_pong, &v), 0);
		HARNESS_EQ(smarm_chan_recv(p->to_ping, &v), 0);
	}
	HARNESS_EQ(v, pp_rounds(p));
}

static void root(void *arg)
{
	struct pp *p = arg;
	smarm_pid_t a, b;
	int how;
	HARNESS_EQ(smarm_chan_alloc(&p->to_pong, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&p->to_ping, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, pong, p, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&a, ping, p, NULL), 0);
	if (p->counter != NULL) {
		smarm_server_t *s = NULL;
		smarm_value_t x = { .type = SMARM_T_I64, .v.i = 2 };
		smarm_value_t r;
		HARNESS_EQ(smarm_server_start(p->counter, NULL, NULL, &s), 0);
		HARNESS_EQ(smarm_server_cast(s, "inc", &x, 1), 0);
		HARNESS_EQ(smarm_server_call(s, "add", &x, 1, &r,
					     SMARM_NO_TIMEOUT),
			   0);
		HARNESS_EQ(smarm_server_shutdown(s, SMARM_NO_TIMEOUT, NULL), 0);
		smarm_server_free(s);
	}
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, &how, NULL), 0);
	harness_chan_drop(p->to_pong);
	harness_chan_drop(p->to_ping);
}

/* Run the scenario (rounds of ping-pong, 0: ROUNDS) on a node of
 * workers workers tracing to path (format fmt). */
static void run_traced_on(int workers, int rounds, const char *path, int fmt,
			  int64_t ring, bool server, int64_t *dropped)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	smarm_plugin_t *pc = NULL;
	struct pp p = { .rounds = rounds };
	char msg[256];
	int how = -1;
	if (server) {
		ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_COUNTER"),
						   &pc, msg, sizeof msg),
				 0);
		ck_assert_int_eq(
			smarm_plugin_behaviour(pc, "counter", &p.counter), 0);
	}
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS,
					      harness_workers(workers)),
			 0);
	if (ring > 0)
		ck_assert_int_eq(
			smarm_config_set_int(cfg, SMARM_OPT_TRACE_RING, ring),
			0);
	ck_assert_int_eq(smarm_config_set_trace(cfg, path, fmt), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, root, &p, &how, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	*dropped = harness_stat(node, SMARM_STAT_TRACE_DROPPED);
	ck_assert_int_eq(smarm_node_close(node), 0);
	if (pc != NULL)
		ck_assert_int_eq(smarm_plugin_close(pc), 0);
}

/* ... on 4 workers. */
static void run_traced(const char *path, int fmt, int64_t ring, bool server,
		       int64_t *dropped)
{
	run_traced_on(4, 0, path, fmt, ring, server, dropped);
}

/* The checker's verdict on path: its exit status. */
static int check(const char *kind, const char *path, const char *wants)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' '%s' %s '%s' %s",
		 getenv("SMARM_TEST_PYTHON"), getenv("SMARM_TEST_TRACE_CHECK"),
		 kind, path, wants);
	return system(cmd);
}

static void tmp_path(char *buf, size_t cap, const char *ext)
{
	char dir[] = "/tmp/smarm-trace-test.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(buf, cap, "%s/t%s", dir, ext);
}

static void tmp_remove(const char *path)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s", path);
	unlink(path);
	*strrchr(dir, '/') = '\0';
	rmdir(dir);
}

#define WANTS                                                                  \
	"'send~100' 'flow:send~100' 'recv~100' 'spawn' 'exit normal' 'park' "  \
	"'call add' 'cast inc' 'reply add' 'ping'"

START_TEST(test_trace_json_ping_pong_parses_with_flows)
{
	char path[1024];
	int64_t dropped = -1;
	tmp_path(path, sizeof path, ".json");
	run_traced(path, SMARM_TRACE_AUTO, 0, true, &dropped);
	ck_assert_int_eq(dropped, 0);
	ck_assert_int_eq(check("json", path, WANTS), 0);
	tmp_remove(path);
}
END_TEST

START_TEST(test_trace_proto_ping_pong_decodes_with_flows)
{
	char path[1024];
	int64_t dropped = -1;
	tmp_path(path, sizeof path, ".pftrace");
	run_traced(path, SMARM_TRACE_AUTO, 0, true, &dropped);
	ck_assert_int_eq(dropped, 0);
	ck_assert_int_eq(check("proto", path, WANTS), 0);
	tmp_remove(path);
}
END_TEST

/* An explicit format wins over the extension. */
START_TEST(test_trace_explicit_format_wins)
{
	char path[1024];
	int64_t dropped = -1;
	tmp_path(path, sizeof path, ".json");
	run_traced(path, SMARM_TRACE_PERFETTO, 0, false, &dropped);
	ck_assert_int_eq(check("proto", path, "'send~100'"), 0);
	tmp_remove(path);
}
END_TEST

/*
 * Every send and every receive of the ping-pong is in the trace once:
 * 2 * ROUNDS of each, whether the send's record is its own or its
 * wake's, and the receive's its own or carried by the wake of the send
 * that handed it over (one worker: every receive parks and is handed
 * over, and every send is a flow to the receive it hands over to;
 * four: some find the element queued or are woken before they park).
 */
static void exact_traced(int workers, const char *kind, const char *ext)
{
	char path[1024];
	char wants[128];
	int64_t dropped = -1;
	tmp_path(path, sizeof path, ext);
	run_traced_on(workers, 0, path, SMARM_TRACE_AUTO, 0, false, &dropped);
	ck_assert_int_eq(dropped, 0);
	/* One worker: every send's wake is held and the switch to the
	 * receiver takes it over (core/trace.h TRACE-4), so each of its
	 * flows comes from one record that is a WAKE and a SWITCH. */
	if (workers == 1)
		snprintf(wants, sizeof wants,
			 "'instant:send=%d' 'instant:recv=%d' 'flow:send=%d'",
			 2 * ROUNDS, 2 * ROUNDS, 2 * ROUNDS);
	else
		snprintf(wants, sizeof wants,
			 "'instant:send=%d' 'instant:recv=%d'", 2 * ROUNDS,
			 2 * ROUNDS);
	ck_assert_int_eq(check(kind, path, wants), 0);
	tmp_remove(path);
}

START_TEST(test_trace_json_every_send_and_recv_once)
{
	exact_traced(1, "json", ".json");
	exact_traced(4, "json", ".json");
}
END_TEST

START_TEST(test_trace_proto_every_send_and_recv_once)
{
	exact_traced(1, "proto", ".pftrace");
	exact_traced(4, "proto", ".pftrace");
}
END_TEST

/* A 64-record ring under a ping-pong fills: drops are counted, the run
 * is not held up, and what was written still checks out. One worker and
 * many rounds: its records outrun a writer that formats each of them
 * (four workers' short run could be slow enough for the writer). */
START_TEST(test_trace_full_ring_drops_counted)
{
	char path[1024];
	int64_t dropped = -1;
	tmp_path(path, sizeof path, ".json");
	run_traced_on(1, 100 * ROUNDS, path, SMARM_TRACE_JSON, 64, false,
		      &dropped);
	ck_assert_int_gt(dropped, 0);
	ck_assert_int_eq(check("json", path, ""), 0);
	tmp_remove(path);
}
END_TEST

/* ------------------------------------------------------ hibernation */

struct hib {
	smarm_chan_t *in; /* ints; its close ends the hibernator */
	int got;
};

/* The hibernator's every run after the first (a fresh stack). */
static void hib_step(void *arg)
{
	struct hib *h = arg;
	int v;
	int rc;
	while ((rc = smarm_chan_try_recv(h->in, &v)) == 0)
		h->got++;
	if (rc != SMARM_EAGAIN)
		return; /* closed: it ends normally */
	HARNESS_EQ(smarm_hibernate(h->in, hib_step, h), 0); /* no return */
}

static void hib_body(void *arg)
{
	struct hib *h = arg;
	HARNESS_EQ(smarm_hibernate(h->in, hib_step, h), 0); /* no return */
}

/* The root parks only on sleeps and a join, never on a message: every
 * "park message" of the trace is one of the hibernator's. */
static void hib_root(void *arg)
{
	struct hib *h = arg;
	smarm_node_t *node = smarm_node_current();
	smarm_pid_t pid;
	int v = 1;
	HARNESS_EQ(smarm_chan_alloc(&h->in, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&pid, hib_body, h, NULL), 0);
	/* Each send finds it hibernated: a wake, not a queued element. */
	HARNESS_CHECK(harness_await_stat(node, SMARM_STAT_HIBERNATIONS, 1));
	HARNESS_EQ(smarm_chan_send(h->in, &v), 0);
	HARNESS_CHECK(harness_await_stat(node, SMARM_STAT_HIBERNATIONS, 2));
	HARNESS_EQ(smarm_chan_send(h->in, &v), 0);
	HARNESS_CHECK(harness_await_stat(node, SMARM_STAT_HIBERNATIONS, 3));
	HARNESS_EQ(smarm_chan_sender_free(h->in), 0); /* the close wakes it */
	HARNESS_EQ(smarm_actor_join(pid, NULL, NULL), 0);
	HARNESS_EQ(h->got, 2);
	smarm_chan_receiver_free(h->in);
}

/* A hibernation is a wait's park: the slice that hibernates ends with a
 * park instant, and the send that wakes it is a flow (regression: a
 * hibernation used to show no park). */
static void hib_traced(const char *kind, const char *ext)
{
	char path[1024];
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	struct hib h = { 0 };
	int how = -1;
	tmp_path(path, sizeof path, ext);
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS,
					      harness_workers(2)),
			 0);
	ck_assert_int_eq(smarm_config_set_trace(cfg, path, SMARM_TRACE_AUTO),
			 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, hib_root, &h, &how, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(smarm_node_close(node), 0);
	ck_assert_int_eq(check(kind, path, "'park message~3' 'send~2'"), 0);
	tmp_remove(path);
}

START_TEST(test_trace_json_hibernation_is_a_park)
{
	hib_traced("json", ".json");
}
END_TEST

START_TEST(test_trace_proto_hibernation_is_a_park)
{
	hib_traced("proto", ".pftrace");
}
END_TEST

/* SMARM_TRACE_FILE traces a node whose config names no file. */
START_TEST(test_trace_env_var_enables)
{
	char path[1024];
	smarm_node_t *node;
	struct pp p = { 0 };
	int how = -1;
	struct stat st;
	tmp_path(path, sizeof path, ".json");
	setenv("SMARM_TRACE_FILE", path, 1);
	node = harness_open(2);
	unsetenv("SMARM_TRACE_FILE");
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, root, &p, &how, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(smarm_node_close(node), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(check("json", path, "'send~100'"), 0);
	tmp_remove(path);
}
END_TEST

START_TEST(test_trace_bad_arguments_return_einval)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	char big[1100];
	int64_t v = -1;
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ck_assert_int_eq(smarm_config_set_trace(NULL, "x.json", 0),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_trace(cfg, big, 0), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_trace(cfg, "x.json", 7),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_trace(cfg, NULL, 0), 0);
	/* A file that cannot be created fails the open. */
	ck_assert_int_eq(
		smarm_config_set_trace(cfg, "/nonexistent-dir/t.json", 0), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), SMARM_ESYSTEM);
	smarm_config_free(cfg);
	/* A node that does not trace has dropped nothing. */
	node = harness_open(1);
	ck_assert_int_eq(smarm_node_get_int(node, SMARM_STAT_TRACE_DROPPED, &v),
			 0);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

Suite *smarm_test_trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("errors");
	tcase_add_test(tc, test_trace_bad_arguments_return_einval);
	suite_add_tcase(s, tc);
	tc = tcase_create("formats");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_trace_json_ping_pong_parses_with_flows);
	tcase_add_test(tc, test_trace_proto_ping_pong_decodes_with_flows);
	tcase_add_test(tc, test_trace_explicit_format_wins);
	tcase_add_test(tc, test_trace_env_var_enables);
	tcase_add_test(tc, test_trace_json_hibernation_is_a_park);
	tcase_add_test(tc, test_trace_proto_hibernation_is_a_park);
	suite_add_tcase(s, tc);
	tc = tcase_create("counts");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_trace_json_every_send_and_recv_once);
	tcase_add_test(tc, test_trace_proto_every_send_and_recv_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("limits");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_trace_full_ring_drops_counted);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(trace)
