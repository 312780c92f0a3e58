/* SPDX-License-Identifier: MIT */
/*
 * test_gen_server.c - gen_server over the shipped plugins (counter, kv,
 * crasher): calls and casts in order, str/bytes replies, a call timeout
 * whose late reply never reaches the next call (gen_server_SUITE's
 * call timeouts), calling self, a crash mid-call (SMARM_EDOWN, the node
 * lives, terminate sees the crash with may_block false), a cast
 * crashing its server, calls from a plain thread, named servers that
 * follow a restart, shutdown (stop with reason), a supervised server,
 * a server child whose name is held outside its supervisor (OTP's
 * already_started_outside_supervisor),
 * unloading while a server is alive, and every misuse error of the
 * client calls.
 */
#include "harness.h"

#include <smarm/smarm_plugin.h>

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

static smarm_plugin_t *pl_counter, *pl_kv, *pl_crasher;
static const smarm_behaviour_t *counter, *kv, *crasher;

static void setup(void)
{
	char msg[256];
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_COUNTER"),
					   &pl_counter, msg, sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_KV"), &pl_kv, msg,
					   sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_CRASHER"),
					   &pl_crasher, msg, sizeof msg),
			 0);
	ck_assert_int_eq(
		smarm_plugin_behaviour(pl_counter, "counter", &counter), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl_kv, "kv", &kv), 0);
	ck_assert_int_eq(
		smarm_plugin_behaviour(pl_crasher, "crasher", &crasher), 0);
	harness_checks_reset();
}

static void teardown(void)
{
	smarm_plugin_close(pl_counter);
	smarm_plugin_close(pl_kv);
	smarm_plugin_close(pl_crasher);
}

static smarm_value_t i64(int64_t v)
{
	smarm_value_t x;
	memset(&x, 0, sizeof x);
	x.type = SMARM_T_I64;
	x.v.i = v;
	return x;
}

static smarm_value_t str(const char *s)
{
	smarm_value_t x;
	memset(&x, 0, sizeof x);
	x.type = SMARM_T_STR;
	x.v.p = s;
	x.len = (uint32_t)strlen(s);
	return x;
}

static smarm_value_t bytes(const void *p, size_t n)
{
	smarm_value_t x;
	memset(&x, 0, sizeof x);
	x.type = SMARM_T_BYTES;
	x.v.p = p;
	x.len = (uint32_t)n;
	return x;
}

static int64_t get(smarm_server_t *s)
{
	smarm_value_t r;
	r.v.i = -999;
	HARNESS_EQ(smarm_server_call(s, "get", NULL, 0, &r, SMARM_NO_TIMEOUT),
		   0);
	HARNESS_EQ(r.type, SMARM_T_I64);
	return r.v.i;
}

/* ---------------------------------------------------------- basics */

static void roundtrip_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_value_t a = i64(5), r;
	(void)arg;
	HARNESS_EQ(smarm_server_start(counter, "10", NULL, &s), 0);
	HARNESS_EQ(get(s), 10);
	for (int i = 0; i < 100; i++)
		HARNESS_EQ(smarm_server_cast(s, "inc", &a, 1), 0);
	HARNESS_EQ(smarm_server_call(s, "add", &a, 1, &r, SMARM_NO_TIMEOUT), 0);
	HARNESS_EQ(r.v.i, 515);
	HARNESS_EQ(smarm_server_cast(s, "reset", NULL, 0), 0);
	HARNESS_EQ(get(s), 10);
	/* 1 get, 100 casts, add, reset, get: each one request served */
	int64_t n = -1;
	HARNESS_EQ(smarm_node_get_int(smarm_node_current(),
				      SMARM_STAT_SERVER_REQUESTS, &n),
		   0);
	HARNESS_EQ(n, 104);
	smarm_server_free(s);
}

START_TEST(test_gen_server_call_cast_roundtrip_in_order)
{
	ck_assert_int_eq(harness_run(4, roundtrip_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

static void kv_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_value_t a[2] = { str("k"), bytes("v\0w", 3) }, r;
	(void)arg;
	HARNESS_EQ(smarm_server_start(kv, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_call(s, "put", a, 2, &r, SMARM_NO_TIMEOUT), 0);
	HARNESS_EQ(r.type, SMARM_T_BOOL);
	HARNESS_EQ(r.v.b, true);
	HARNESS_EQ(smarm_server_call(s, "put", a, 2, &r, SMARM_NO_TIMEOUT), 0);
	HARNESS_EQ(r.v.b, false);
	HARNESS_EQ(smarm_server_call(s, "get", a, 1, &r, SMARM_NO_TIMEOUT), 0);
	HARNESS_EQ(r.type, SMARM_T_BYTES);
	HARNESS_EQ(r.len, 3);
	HARNESS_CHECK(r.v.p != NULL && memcmp(r.v.p, "v\0w", 3) == 0);
	smarm_value_release(&r);
	HARNESS_EQ(smarm_server_call(s, "size", NULL, 0, &r, SMARM_NO_TIMEOUT),
		   0);
	HARNESS_EQ(r.v.u, 1);
	HARNESS_EQ(smarm_server_call(s, "del", a, 1, &r, SMARM_NO_TIMEOUT), 0);
	HARNESS_EQ(r.v.b, true);
	HARNESS_EQ(smarm_server_call(s, "get", a, 1, NULL, SMARM_NO_TIMEOUT),
		   0);
	smarm_server_free(s);
}

START_TEST(test_gen_server_kv_str_and_bytes)
{
	ck_assert_int_eq(harness_run(2, kv_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------- call timeouts */

static void timeout_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_value_t a = i64(1), r;
	(void)arg;
	HARNESS_EQ(smarm_server_start(counter, NULL, NULL, &s), 0);
	for (int i = 1; i <= 200; i++) {
		/* timed out at once; its reply comes later and is dropped */
		int rc = smarm_server_call(s, "add", &a, 1, &r, 0);
		HARNESS_CHECK(rc == SMARM_ETIMEDOUT || rc == 0);
		if (rc == 0)
			HARNESS_EQ(r.v.i, 2 * i - 1);
		/* the next call gets its own reply, never the late one */
		HARNESS_EQ(get(s), 2 * i - 1);
		HARNESS_EQ(smarm_server_call(s, "add", &a, 1, &r, MS(5000)), 0);
		HARNESS_EQ(r.v.i, 2 * i);
	}
	smarm_server_free(s);
}

START_TEST(test_gen_server_call_timeout_no_late_reply)
{
	ck_assert_int_eq(harness_run(1, timeout_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(harness_run(4, timeout_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------ calling self */

static void self_root(void *arg)
{
	smarm_server_t *s = NULL;
	(void)arg;
	HARNESS_EQ(smarm_server_open(NULL, counter, smarm_actor_self(), &s), 0);
	HARNESS_EQ(smarm_server_call(s, "get", NULL, 0, NULL, MS(100)),
		   SMARM_ECALLSELF);
	smarm_server_free(s);
}

START_TEST(test_gen_server_calling_self)
{
	ck_assert_int_eq(harness_run(2, self_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------------------------- crashes */

static void crasher_last(int *how, intptr_t *reason, int *may_block)
{
	void *dl = dlopen(getenv("SMARM_TEST_CRASHER"), RTLD_NOW | RTLD_NOLOAD);
	void (*f)(int *, intptr_t *, int *);
	HARNESS_CHECK(dl != NULL);
	*(void **)&f = dlsym(dl, "smarm_crasher_last");
	f(how, reason, may_block);
	dlclose(dl);
}

static void crash_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_value_t a = i64(42), r;
	smarm_chan_t *ch = harness_sig_chan();
	smarm_signal_t sig;
	smarm_pid_t pid;
	int how, mb;
	intptr_t reason;
	(void)arg;
	/* a crash mid-call: the caller gets SMARM_EDOWN */
	HARNESS_EQ(smarm_server_start(crasher, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	HARNESS_EQ(smarm_monitor(pid, ch, NULL), 0);
	HARNESS_EQ(smarm_server_call(s, "ping", NULL, 0, &r, MS(5000)), 0);
	HARNESS_EQ(smarm_server_call(s, "crash_now", &a, 1, &r, MS(5000)),
		   SMARM_EDOWN);
	HARNESS_EQ(harness_recv_sig(ch, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(sig.reason, 42);
	crasher_last(&how, &reason, &mb);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(reason, 42);
	HARNESS_EQ(mb, 0);
	/* the server is gone: calls and casts say so */
	int rc = smarm_server_call(s, "ping", NULL, 0, &r, MS(5000));
	HARNESS_CHECK(rc == SMARM_ENOPROC || rc == SMARM_EDOWN);
	HARNESS_EQ(smarm_server_cast(s, "crash", &a, 1), SMARM_ENOPROC);
	smarm_server_free(s);

	/* a cast crashing its server, with queued calls behind it */
	a = i64(7);
	HARNESS_EQ(smarm_server_start(crasher, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	HARNESS_EQ(smarm_monitor(pid, ch, NULL), 0);
	HARNESS_EQ(smarm_server_cast(s, "crash", &a, 1), 0);
	rc = smarm_server_call(s, "ping", NULL, 0, &r, MS(5000));
	HARNESS_CHECK(rc == SMARM_EDOWN || rc == SMARM_ENOPROC);
	HARNESS_EQ(harness_recv_sig(ch, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(sig.reason, 7);
	smarm_server_free(s);
	harness_chan_drop(ch);
}

START_TEST(test_gen_server_crash_ends_server_not_node)
{
	ck_assert_int_eq(harness_run(2, crash_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* -------------------------------------- a backlog at the server's end */

/*
 * A server killed with a backlog: plain casts (the inbox frees them
 * without reading them, msg/chan.c INV-10), requests whose callers must
 * hear SMARM_EDOWN, and requests whose arguments are on the heap (ASan:
 * none leaks). One worker: nothing is served before the kill.
 */
static void backlog_root(void *arg)
{
	enum { CASTS = 300, REQS = 40 };
	smarm_request_t *req[REQS];
	smarm_server_t *c = NULL, *k = NULL;
	smarm_value_t one = i64(1), r, args[2];
	smarm_pid_t pc, pk;
	char key[200];
	int rc;
	(void)arg;
	memset(key, 'k', sizeof key - 1);
	key[sizeof key - 1] = '\0';
	args[0] = str(key); /* past the inline block: on the heap */
	args[1] = bytes("v", 1);
	HARNESS_EQ(smarm_server_start(counter, NULL, NULL, &c), 0);
	HARNESS_EQ(smarm_server_start(kv, NULL, NULL, &k), 0);
	HARNESS_EQ(smarm_server_pid(c, &pc), 0);
	HARNESS_EQ(smarm_server_pid(k, &pk), 0);
	for (int i = 0; i < CASTS; i++)
		HARNESS_EQ(smarm_server_cast(c, "inc", &one, 1), 0);
	HARNESS_EQ(smarm_server_send_request(c, "get", NULL, 0, &req[0]), 0);
	for (int i = 0; i < CASTS; i++)
		HARNESS_EQ(smarm_server_cast(c, "inc", &one, 1), 0);
	for (int i = 1; i < REQS; i++)
		HARNESS_EQ(
			smarm_server_send_request(k, "put", args, 2, &req[i]),
			0);
	HARNESS_EQ(smarm_actor_send_exit(pc, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_EQ(smarm_actor_send_exit(pk, SMARM_EXIT_SHUTDOWN, 0), 0);
	for (int i = 0; i < REQS; i++) {
		rc = smarm_server_wait_response(req[i], &r, MS(5000));
		HARNESS_EQ(rc, SMARM_EDOWN); /* and req[i] is freed */
	}
	smarm_server_free(c);
	smarm_server_free(k);
}

START_TEST(test_gen_server_killed_with_a_backlog)
{
	ck_assert_int_eq(harness_run(1, backlog_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------- plain threads */

static smarm_node_t *thread_node;
static smarm_pid_t thread_server;
static smarm_chan_t *thread_done;

static void *thread_client(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_value_t a = i64(1), r;
	(void)arg;
	HARNESS_EQ(smarm_server_open(NULL, counter, thread_server, &s),
		   SMARM_EINVAL); /* no node outside an actor */
	HARNESS_EQ(smarm_server_open(thread_node, counter, thread_server, &s),
		   0);
	for (int i = 0; i < 1000; i++)
		HARNESS_EQ(smarm_server_call(s, "add", &a, 1, &r, MS(5000)), 0);
	HARNESS_EQ(smarm_server_cast(s, "inc", &a, 1), 0);
	smarm_server_free(s);
	int one = 1;
	smarm_chan_send(thread_done, &one);
	return NULL;
}

static void thread_root(void *arg)
{
	smarm_server_t *s = NULL;
	pthread_t t[2];
	int v;
	(void)arg;
	thread_node = smarm_node_current();
	HARNESS_EQ(smarm_server_start(counter, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_pid(s, &thread_server), 0);
	HARNESS_EQ(smarm_chan_alloc(&thread_done, sizeof(int), NULL), 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread_client, NULL);
	for (int i = 0; i < 2; i++)
		HARNESS_EQ(smarm_chan_recv(thread_done, &v), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	HARNESS_EQ(get(s), 2002);
	harness_chan_drop(thread_done);
	smarm_server_free(s);
}

START_TEST(test_gen_server_calls_from_plain_threads)
{
	ck_assert_int_eq(harness_run(4, thread_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------ names, shutdown, restart */

static void named_root(void *arg)
{
	smarm_server_t *s = NULL, *byname = NULL, *s2 = NULL;
	smarm_value_t a = i64(3), r;
	int how = -1;
	(void)arg;
	HARNESS_EQ(smarm_server_open_name(NULL, counter, "ctr", &byname), 0);
	HARNESS_EQ(smarm_server_call(byname, "get", NULL, 0, &r, MS(100)),
		   SMARM_ENONAME);
	HARNESS_EQ(smarm_server_start(counter, "1", "ctr", &s), 0);
	HARNESS_EQ(smarm_server_start(counter, "1", "ctr", &s2), SMARM_EEXIST);
	HARNESS_EQ(smarm_server_call(byname, "add", &a, 1, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 4);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), &how), 0);
	HARNESS_EQ(how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(smarm_server_call(byname, "get", NULL, 0, &r, MS(100)),
		   SMARM_ENONAME);
	how = -1;
	HARNESS_EQ(smarm_server_shutdown(byname, MS(5000), &how), 0);
	HARNESS_EQ(how, SMARM_EXIT_NOPROC);
	/* a new server under the name: the handle follows it */
	HARNESS_EQ(smarm_server_start(counter, "100", "ctr", &s2), 0);
	HARNESS_EQ(get(byname), 100);
	smarm_server_free(s);
	smarm_server_free(s2);
	smarm_server_free(byname);
}

START_TEST(test_gen_server_named_follow_restart_and_shutdown)
{
	ck_assert_int_eq(harness_run(2, named_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------- supervised */

static void sup_root(void *arg)
{
	smarm_sup_spec_t *spec = NULL;
	smarm_server_t *s = NULL;
	smarm_value_t a = i64(42), r;
	smarm_pid_t sup, first, second;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&spec), 0);
	HARNESS_EQ(smarm_sup_spec_add_server(spec, "c", crasher, NULL, "crs",
					     SMARM_SUP_PERMANENT, MS(1000),
					     MS(5000)),
		   0);
	HARNESS_EQ(smarm_sup_spec_add_server(NULL, "c", crasher, NULL, "crs",
					     SMARM_SUP_PERMANENT, MS(1000),
					     MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_add_server(spec, "d", NULL, NULL, "crs",
					     SMARM_SUP_PERMANENT, MS(1000),
					     MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_start(spec, &sup), 0);
	smarm_sup_spec_free(spec);
	HARNESS_EQ(smarm_server_open_name(NULL, crasher, "crs", &s), 0);
	HARNESS_EQ(smarm_server_pid(s, &first), 0);
	HARNESS_EQ(smarm_server_call(s, "ping", NULL, 0, &r, MS(5000)), 0);
	/* crash it: the supervisor restarts it under the same name */
	HARNESS_EQ(smarm_server_call(s, "crash_now", &a, 1, &r, MS(5000)),
		   SMARM_EDOWN);
	uint64_t t0 = smarm_now_ns();
	int rc;
	do {
		smarm_actor_sleep(MS(1));
		rc = smarm_server_call(s, "ping", NULL, 0, &r, MS(5000));
	} while (rc != 0 && harness_since(t0) < MS(5000));
	HARNESS_EQ(rc, 0);
	HARNESS_EQ(smarm_server_pid(s, &second), 0);
	HARNESS_CHECK(!smarm_pid_eq(first, second));
	smarm_server_free(s);
}

START_TEST(test_gen_server_supervised_restart)
{
	ck_assert_int_eq(harness_run(2, sup_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ----------------------------- already_started_outside_supervisor */

static _Atomic int outsider_ready;

/* An actor outside any supervisor holding the name "crs". */
static void outsider_body(void *arg)
{
	(void)arg;
	HARNESS_EQ(smarm_register("crs", NULL), 0);
	atomic_store(&outsider_ready, 1);
	harness_park();
}

/*
 * OTP's supervisor_SUITE already_started_outside_supervisor: a server
 * child whose name an actor outside the supervisor holds fails its
 * start with SMARM_EEXIST, and the start returns that actor as the one
 * in the way (OTP's {error, {already_started, Pid}}); nothing is
 * recorded, and the outsider is not the supervisor's: its end does not
 * take it along. A supervisor whose own spec holds such a child fails
 * to start.
 */
static void outside_root(void *arg)
{
	smarm_sup_spec_t *child = NULL, *empty = NULL;
	smarm_pid_t outsider, sup, got = SMARM_PID_NONE;
	smarm_chan_t *ch = harness_sig_chan();
	smarm_signal_t sg;
	size_t n = 9;
	(void)arg;
	atomic_store(&outsider_ready, 0);
	HARNESS_EQ(smarm_actor_spawn(&outsider, outsider_body, NULL, NULL), 0);
	while (!atomic_load(&outsider_ready))
		smarm_actor_sleep(MS(1));
	HARNESS_EQ(smarm_sup_spec_alloc(&child), 0);
	HARNESS_EQ(smarm_sup_spec_add_server(child, "c", crasher, NULL, "crs",
					     SMARM_SUP_PERMANENT, MS(1000),
					     MS(5000)),
		   0);
	HARNESS_EQ(smarm_sup_start(child, &sup), SMARM_EEXIST);
	HARNESS_EQ(smarm_sup_spec_alloc(&empty), 0);
	HARNESS_EQ(smarm_sup_start(empty, &sup), 0);
	HARNESS_EQ(smarm_sup_start_child_spec(sup, child, MS(5000), &got, NULL),
		   SMARM_EEXIST);
	HARNESS_CHECK(smarm_pid_eq(got, outsider));
	HARNESS_EQ(smarm_sup_which_children(sup, NULL, 0, &n, MS(5000)), 0);
	HARNESS_EQ(n, 0);
	HARNESS_EQ(smarm_monitor(sup, ch, NULL), 0);
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_EQ(harness_recv_sig(ch, &sg), 0);
	HARNESS_EQ(sg.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(smarm_actor_is_alive(outsider));
	HARNESS_EQ(smarm_actor_send_exit(outsider, SMARM_EXIT_STOPPED, 0), 0);
	HARNESS_EQ(smarm_actor_join(outsider, NULL, NULL), 0);
	smarm_sup_spec_free(child);
	smarm_sup_spec_free(empty);
	harness_chan_drop(ch);
}

START_TEST(test_gen_server_already_started_outside_supervisor)
{
	ck_assert_int_eq(harness_run(2, outside_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* --------------------------------------------------- unloading */

static void unload_root(void *arg)
{
	smarm_server_t *s = NULL;
	(void)arg;
	HARNESS_EQ(smarm_server_start(counter, "5", NULL, &s), 0);
	HARNESS_EQ(smarm_plugin_close(pl_counter), 0); /* the host's ref */
	pl_counter = NULL;
	/* still mapped: the server and the handle hold it */
	HARNESS_CHECK(dlopen(getenv("SMARM_TEST_COUNTER"),
			     RTLD_NOW | RTLD_NOLOAD) != NULL);
	HARNESS_EQ(get(s), 5);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

START_TEST(test_gen_server_unload_while_alive)
{
	void *dl;
	ck_assert_int_eq(harness_run(2, unload_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	/* the last reference went: unmapped (the test's NOLOAD ref too) */
	dl = dlopen(getenv("SMARM_TEST_COUNTER"), RTLD_NOW | RTLD_NOLOAD);
	if (dl != NULL) {
		dlclose(dl); /* the one NOLOAD in unload_root took */
		dlclose(dl);
		dl = dlopen(getenv("SMARM_TEST_COUNTER"),
			    RTLD_NOW | RTLD_NOLOAD);
	}
	ck_assert_ptr_null(dl);
}
END_TEST

/* ------------------------------------- varargs, stubs, requests */

static void clients_root(void *arg)
{
	smarm_server_t *s = NULL, *k = NULL, *dead = NULL;
	int (*add)(smarm_server_t *, uint64_t, int64_t *, int64_t) = NULL;
	int (*inc)(smarm_server_t *, int64_t) = NULL;
	int (*kget)(smarm_server_t *, uint64_t, smarm_bytes_t *, const char *) =
		NULL;
	int (*kput)(smarm_server_t *, uint64_t, bool *, const char *,
		    const void *, size_t) = NULL;
	int64_t sum;
	bool ok;
	void (*fn)(void) = NULL;
	smarm_request_t *r1 = NULL, *r2 = NULL, *r3 = NULL;
	smarm_value_t one = i64(1), rv;
	smarm_bytes_t b;
	int64_t out = 0;
	bool put = false;
	(void)arg;
	HARNESS_EQ(smarm_server_start(counter, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_start(kv, NULL, NULL, &k), 0);
	/* varargs: the exported functions, unchecked (what binaries built
	 * before 0.5.0, C++ and FFI callers reach; the parentheses keep the
	 * checked macros out: test_gen_server_checked_varargs) */
	HARNESS_EQ((smarm_server_castv)(s, "inc", (int64_t)4), 0);
	HARNESS_EQ((smarm_server_callv)(s, "add", MS(5000), &out, (int64_t)3),
		   0);
	HARNESS_EQ(out, 7);
	HARNESS_EQ((smarm_server_callv)(s, "get", MS(5000), NULL), 0);
	HARNESS_EQ((smarm_server_callv)(k, "put", MS(5000), &put, "key",
					(const void *)"val", (size_t)3),
		   0);
	HARNESS_EQ(put, true);
	memset(&b, 0, sizeof b);
	HARNESS_EQ((smarm_server_callv)(k, "get", MS(5000), &b, "key"), 0);
	HARNESS_EQ(b.len, 3);
	HARNESS_CHECK(b.ptr != NULL && memcmp(b.ptr, "val", 3) == 0);
	free((void *)b.ptr);
	HARNESS_EQ((smarm_server_callv)(s, "inc", MS(5000), NULL, (int64_t)1),
		   SMARM_EOPKIND);
	HARNESS_EQ((smarm_server_castv)(s, "add", (int64_t)1), SMARM_EOPKIND);
	HARNESS_EQ((smarm_server_castv)(s, "nope", (int64_t)1), SMARM_ENOOP);
	HARNESS_EQ((smarm_server_callv)(NULL, "add", 0, NULL, (int64_t)1),
		   SMARM_EINVAL);
	HARNESS_EQ((smarm_server_castv)(s, NULL), SMARM_EINVAL);
	HARNESS_EQ((smarm_server_callv)(k, "get", MS(5000), &b,
					(const char *)NULL),
		   SMARM_EARGS);
	/* stubs */
	HARNESS_EQ(smarm_server_stub(counter, "add", &fn), 0);
	add = (int (*)(smarm_server_t *, uint64_t, int64_t *, int64_t))fn;
	HARNESS_EQ(smarm_server_stub(counter, "inc", &fn), 0);
	inc = (int (*)(smarm_server_t *, int64_t))fn;
	HARNESS_EQ(inc(s, 10), 0);
	sum = -1;
	HARNESS_EQ(add(s, MS(5000), &sum, 5), 0);
	HARNESS_EQ(sum, 22);
	HARNESS_EQ(add(s, MS(5000), NULL, 0), 0); /* the reply dropped */
	HARNESS_EQ(smarm_server_stub(kv, "get", &fn), 0);
	kget = (int (*)(smarm_server_t *, uint64_t, smarm_bytes_t *,
			const char *))fn;
	HARNESS_EQ(smarm_server_stub(kv, "put", &fn), 0);
	kput = (int (*)(smarm_server_t *, uint64_t, bool *, const char *,
			const void *, size_t))fn;
	ok = false;
	HARNESS_EQ(kput(k, SMARM_NO_TIMEOUT, &ok, "a", "xyz", 3), 0);
	HARNESS_EQ(ok, true);
	HARNESS_EQ(kget(k, MS(5000), &b, "a"), 0);
	HARNESS_EQ(b.len, 3);
	HARNESS_CHECK(b.ptr != NULL && memcmp(b.ptr, "xyz", 3) == 0);
	free((void *)b.ptr);
	/* a stub of another behaviour's handle, a dead server, no handle:
	 * the status says why, out is untouched */
	sum = -1;
	HARNESS_EQ(add(k, MS(5000), &sum, 1), SMARM_EINVAL);
	HARNESS_EQ(add(NULL, MS(5000), &sum, 1), SMARM_EINVAL);
	HARNESS_EQ(inc(NULL, 1), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_open(NULL, counter, smarm_actor_self(), &dead),
		   0);
	HARNESS_EQ(add(dead, MS(5000), &sum, 1), SMARM_ECALLSELF);
	HARNESS_EQ(sum, -1);
	smarm_server_free(dead);
	HARNESS_EQ(smarm_server_stub(counter, "nope", &fn), SMARM_ENOOP);
	HARNESS_EQ(smarm_server_stub(NULL, "add", &fn), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_stub(counter, NULL, &fn), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_stub(counter, "add", NULL), SMARM_EINVAL);
	/* requests: two in flight, collected in any order */
	HARNESS_EQ(smarm_server_send_request(s, "add", &one, 1, &r1), 0);
	HARNESS_EQ(smarm_server_send_request(s, "add", &one, 1, &r2), 0);
	HARNESS_EQ(smarm_server_wait_response(r2, &rv, MS(5000)), 0);
	HARNESS_EQ(rv.v.i, 24);
	HARNESS_EQ(smarm_server_wait_response(r1, &rv, MS(5000)), 0);
	HARNESS_EQ(rv.v.i, 23);
	/* a timeout keeps the request; freeing abandons it */
	HARNESS_EQ(smarm_server_send_request(s, "get", NULL, 0, &r3), 0);
	int rc = smarm_server_wait_response(r3, &rv, 0);
	if (rc == SMARM_ETIMEDOUT)
		rc = smarm_server_wait_response(r3, &rv, MS(5000));
	HARNESS_EQ(rc, 0);
	HARNESS_EQ(rv.v.i, 24);
	HARNESS_EQ(smarm_server_send_request(s, "get", NULL, 0, &r3), 0);
	smarm_request_free(r3);
	smarm_request_free(NULL);
	HARNESS_EQ(smarm_server_send_request(NULL, "get", NULL, 0, &r3),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_send_request(s, "get", NULL, 0, NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_send_request(s, "inc", &one, 1, &r3),
		   SMARM_EOPKIND);
	HARNESS_EQ(smarm_server_send_request(s, "add", NULL, 0, &r3),
		   SMARM_EARGS);
	HARNESS_EQ(smarm_server_wait_response(NULL, &rv, 0), SMARM_EINVAL);
	HARNESS_EQ(get(s), 24);
	smarm_server_free(s);
	smarm_server_free(k);
}

START_TEST(test_gen_server_varargs_stubs_requests)
{
	ck_assert_int_eq(harness_run(2, clients_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------ misuse */

static void misuse_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_value_t a = i64(1), bad = str("x"), r;
	char *big;
	(void)arg;
	HARNESS_EQ(smarm_server_start(NULL, NULL, NULL, &s), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_start((void *)&a, NULL, NULL, &s),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_start(counter, NULL, "", &s), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_run(NULL, NULL, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_open(NULL, NULL, smarm_actor_self(), &s),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_open(NULL, counter, SMARM_PID_NONE, &s),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_open(NULL, counter, smarm_actor_self(), NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_open_name(NULL, counter, NULL, &s),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_open_name(NULL, counter, "", &s), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_start(counter, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_call(NULL, "get", NULL, 0, &r, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_call(s, NULL, NULL, 0, &r, 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_call(s, "add", NULL, 1, &r, 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_call(s, "nope", NULL, 0, &r, 0), SMARM_ENOOP);
	/* a cast called, a call cast: the kind is named */
	HARNESS_EQ(smarm_server_call(s, "inc", &a, 1, &r, 0), SMARM_EOPKIND);
	HARNESS_EQ(smarm_server_cast(s, "get", NULL, 0), SMARM_EOPKIND);
	HARNESS_EQ(smarm_server_info(s, "get", NULL, 0), SMARM_EOPKIND);
	HARNESS_EQ(smarm_server_cast(s, "nope", NULL, 0), SMARM_ENOOP);
	HARNESS_EQ(smarm_server_call(s, "add", NULL, 0, &r, 0), SMARM_EARGS);
	HARNESS_EQ(smarm_server_call(s, "add", &bad, 1, &r, 0), SMARM_EARGS);
	HARNESS_EQ(smarm_server_cast(s, "inc", &bad, 1), SMARM_EARGS);
	HARNESS_EQ(smarm_server_cast(NULL, "inc", &a, 1), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_pid(NULL, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_shutdown(NULL, 0, NULL), SMARM_EINVAL);
	smarm_server_free(NULL);
	smarm_server_free(s);
	/* ETOOBIG through kv */
	HARNESS_EQ(smarm_server_start(kv, NULL, NULL, &s), 0);
	big = calloc(1, SMARM_BYTES_MAX + 1);
	smarm_value_t kb[2] = { str("k"), bytes(big, SMARM_BYTES_MAX + 1) };
	HARNESS_EQ(smarm_server_call(s, "put", kb, 2, &r, MS(5000)),
		   SMARM_ETOOBIG);
	free(big);
	smarm_server_free(s);
	/* context calls outside a server */
	HARNESS_EQ(smarm_gs_stop(NULL, SMARM_EXIT_NORMAL, 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_gs_trap_exit((void *)&a), SMARM_EINVAL);
	HARNESS_EQ(smarm_gs_continue(NULL, 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_gs_set_idle(NULL, 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_gs_monitor(NULL, smarm_actor_self(), NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_gs_reply_later(NULL, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_reply(NULL, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_reply((void *)&a, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_reply_drop(NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_reply_drop((void *)&a), SMARM_EINVAL);
}

/*
 * OTP's send_request/4, check_response and reqids: responses arrive as
 * messages in a channel of the caller's, which it selects on beside
 * another; each matches only its own request; a collection labels
 * them, answers no_reply (SMARM_EAGAIN) for a stranger and no_request
 * (SMARM_ENOENT) once empty; a server that ends with a request queued
 * answers it SMARM_EDOWN.
 */
static void responses_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_chan_t *rch, *other, *wrong;
	smarm_reqids_t *c = NULL;
	smarm_value_t one = i64(1), two = i64(2), rv;
	smarm_response_t msg;
	uint64_t id1 = 0, id2 = 0, id3 = 0;
	intptr_t label = 0, seen = 0;
	smarm_selset_t *set;
	size_t ready = 99;
	(void)arg;
	HARNESS_EQ(smarm_server_start(counter, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_response_chan_alloc(&rch), 0);
	HARNESS_EQ(smarm_chan_alloc(&other, 8, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&wrong, 8, NULL), 0);
	/* one request; its response is a message selected on */
	HARNESS_EQ(smarm_server_send_request_to(s, "add", &one, 1, rch, &id1),
		   0);
	HARNESS_EQ(smarm_selset_alloc(&set), 0);
	HARNESS_EQ(smarm_selset_add_chan(set, other, NULL), 0);
	HARNESS_EQ(smarm_selset_add_chan(set, rch, NULL), 0);
	HARNESS_EQ(smarm_selset_wait(set, MS(5000), &ready), 0);
	HARNESS_EQ(ready, 1);
	smarm_selset_free(set);
	HARNESS_EQ(smarm_chan_recv(rch, &msg), 0);
	HARNESS_EQ(smarm_server_check_response(&msg, id1 + 1000, &rv),
		   SMARM_EAGAIN); /* no_reply: not this request's */
	HARNESS_EQ(smarm_server_check_response(&msg, id1, &rv), 0);
	HARNESS_EQ(rv.v.i, 1);
	/* a collection of two, and a stranger */
	HARNESS_EQ(smarm_reqids_alloc(&c), 0);
	HARNESS_EQ(smarm_server_send_request_to(s, "add", &one, 1, rch, &id1),
		   0);
	HARNESS_EQ(smarm_server_send_request_to(s, "add", &two, 1, rch, &id2),
		   0);
	HARNESS_CHECK(id1 != id2);
	HARNESS_EQ(smarm_reqids_add(c, id1, 10), 0);
	HARNESS_EQ(smarm_reqids_add(c, id2, 20), 0);
	HARNESS_EQ(smarm_reqids_add(c, id2, 30), SMARM_EEXIST);
	HARNESS_EQ(smarm_reqids_size(c), 2);
	for (int i = 0; i < 2; i++) {
		HARNESS_EQ(smarm_reqids_receive(c, rch, MS(5000), true, &label,
						&rv),
			   0);
		/* served in send order: 2 then 4 */
		HARNESS_EQ(rv.v.i, label == 10 ? 2 : 4);
		seen += label;
	}
	HARNESS_EQ(seen, 30);
	HARNESS_EQ(smarm_reqids_size(c), 0);
	HARNESS_EQ(smarm_reqids_receive(c, rch, 0, true, &label, &rv),
		   SMARM_ENOENT); /* no_request */
	HARNESS_EQ(smarm_server_send_request_to(s, "get", NULL, 0, rch, &id3),
		   0);
	HARNESS_EQ(smarm_reqids_add(c, id1, 10), 0); /* answered: stale */
	HARNESS_EQ(smarm_chan_recv(rch, &msg), 0);
	HARNESS_EQ(smarm_reqids_check(c, &msg, false, &label, &rv),
		   SMARM_EAGAIN);
	HARNESS_EQ(smarm_server_check_response(&msg, id3, &rv), 0);
	HARNESS_EQ(rv.v.i, 4);
	/* a server that ends answers a request still queued: EDOWN */
	HARNESS_EQ(smarm_server_send_request_to(s, "add", &one, 1, rch, &id3),
		   0);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	HARNESS_EQ(smarm_chan_recv_timeout(rch, &msg, MS(5000)), 0);
	HARNESS_EQ(msg.id, id3);
	HARNESS_CHECK(msg.status == 0 || msg.status == SMARM_EDOWN);
	(void)smarm_server_check_response(&msg, id3, NULL);
	HARNESS_EQ(smarm_server_send_request_to(s, "get", NULL, 0, rch, &id3),
		   SMARM_ENOPROC);
	/* misuse */
	HARNESS_EQ(smarm_server_send_request_to(s, "get", NULL, 0, wrong, &id3),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_send_request_to(s, "get", NULL, 0, NULL, &id3),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_send_request_to(s, "get", NULL, 0, rch, NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_server_check_response(NULL, 1, &rv), SMARM_EINVAL);
	HARNESS_EQ(smarm_reqids_add(NULL, 1, 1), SMARM_EINVAL);
	HARNESS_EQ(smarm_reqids_add(c, 0, 1), SMARM_EINVAL);
	HARNESS_EQ(smarm_reqids_check(c, NULL, true, &label, &rv),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_reqids_receive(NULL, rch, 0, true, &label, &rv),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_response_chan_alloc(NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_reqids_size(NULL), 0);
	smarm_reqids_free(c);
	smarm_reqids_free(NULL);
	smarm_server_free(s);
	harness_chan_drop(rch);
	harness_chan_drop(other);
	harness_chan_drop(wrong);
}

START_TEST(test_gen_server_send_request_responses_as_messages)
{
	ck_assert_int_eq(harness_run(2, responses_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/*
 * Typed arguments: SMARM_V picks the value type from the C type, an
 * int literal passes for an i64 (an integer converts when it fits), a
 * double given for an i64 is refused, and smarm_server_args_why says
 * which argument and why, for the type, the count and the size.
 */
static void typed_args_root(void *arg)
{
	smarm_server_t *s = NULL, *k = NULL;
	smarm_value_t r;
	char why[160];
	(void)arg;
	HARNESS_EQ(smarm_server_start(counter, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_start(kv, NULL, NULL, &k), 0);
	{
		smarm_value_t a[] = { SMARM_V(5) }; /* an int */
		HARNESS_EQ(a[0].type, SMARM_T_I64);
		HARNESS_EQ(smarm_server_call(s, "add", a, 1, &r, MS(5000)), 0);
		HARNESS_EQ(r.v.i, 5);
		HARNESS_EQ(smarm_server_args_why(counter, "add", a, 1, why,
						 sizeof why),
			   0);
		HARNESS_CHECK(why[0] == '\0');
	}
	{
		smarm_value_t a[] = { SMARM_V(2.5) }; /* a double */
		HARNESS_EQ(a[0].type, SMARM_T_F64);
		HARNESS_EQ(smarm_server_call(s, "add", a, 1, &r, MS(5000)),
			   SMARM_EARGS);
		HARNESS_EQ(smarm_server_args_why(counter, "add", a, 1, why,
						 sizeof why),
			   SMARM_EARGS);
		HARNESS_CHECK(strcmp(why, "add: argument 1 is f64, the "
					  "protocol says i64") == 0);
		HARNESS_EQ(smarm_server_args_why(counter, "add", a, 0, why,
						 sizeof why),
			   SMARM_EARGS);
		HARNESS_CHECK(strcmp(why, "add takes 1 argument, 0 given") ==
			      0);
	}
	{
		smarm_value_t a[] = { SMARM_V("key"),
				      smarm_value_bytes("xyz", 3) };
		bool ok = false;
		HARNESS_EQ(smarm_server_call(k, "put", a, 2, &r, MS(5000)), 0);
		ok = r.v.b;
		HARNESS_CHECK(ok);
		a[1] = SMARM_V((uint64_t)7); /* not bytes */
		HARNESS_EQ(
			smarm_server_args_why(kv, "put", a, 2, why, sizeof why),
			SMARM_EARGS);
		HARNESS_CHECK(strcmp(why, "put: argument 2 is u64, the "
					  "protocol says bytes") == 0);
		a[1] = smarm_value_bytes("xyz", SMARM_BYTES_MAX + 1);
		HARNESS_EQ(
			smarm_server_args_why(kv, "put", a, 2, why, sizeof why),
			SMARM_ETOOBIG);
		HARNESS_CHECK(strstr(why, "argument 2 (bytes)") != NULL);
	}
	{
		smarm_value_t a[] = { SMARM_V((int64_t)-1) };
		HARNESS_EQ(smarm_server_args_why(kv, "nope", a, 1, why,
						 sizeof why),
			   SMARM_ENOOP);
		HARNESS_EQ(smarm_server_args_why(NULL, "add", a, 1, why,
						 sizeof why),
			   SMARM_EINVAL);
		HARNESS_EQ(smarm_server_args_why(counter, "add", NULL, 1, why,
						 sizeof why),
			   SMARM_EINVAL);
		HARNESS_EQ(smarm_server_args_why(counter, "add", a, 1, NULL, 0),
			   0);
	}
	smarm_server_free(s);
	smarm_server_free(k);
}

START_TEST(test_gen_server_typed_arguments_and_why)
{
	ck_assert_int_eq(harness_run(2, typed_args_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/*
 * The checked varargs: smarm_server_callv and smarm_server_castv are
 * macros that make each argument a value by its C type (SMARM_V) and
 * call the checked entry points, so a double given for an i64, a wrong
 * count and a reply pointer of the wrong type are SMARM_EARGS, where the
 * exported functions trust what they are given.
 */
static char cv_why[4][160];

static void checked_varargs_root(void *arg)
{
	smarm_server_t *s = NULL, *k = NULL;
	int64_t out = 0;
	int32_t small = 0;
	double d = 0;
	bool put = false;
	smarm_bytes_t b;
	smarm_value_t r;
	(void)arg;
	HARNESS_EQ(smarm_server_start(counter, NULL, NULL, &s), 0);
	HARNESS_EQ(smarm_server_start(kv, NULL, NULL, &k), 0);
	/* right calls work: an int literal passes for an i64 */
	HARNESS_EQ(smarm_server_castv(s, "inc", 4), 0);
	HARNESS_EQ(smarm_server_callv(s, "add", MS(5000), &out, 3), 0);
	HARNESS_EQ(out, 7);
	HARNESS_EQ(smarm_server_callv(s, "add", MS(5000), &out, (int64_t)1), 0);
	HARNESS_EQ(out, 8);
	HARNESS_EQ(smarm_server_callv(s, "get", MS(5000), NULL), 0);
	HARNESS_EQ(smarm_server_castv(s, "reset"), 0);
	HARNESS_EQ(smarm_server_callv(k, "put", MS(5000), &put, "key",
				      smarm_value_bytes("val", 3)),
		   0);
	HARNESS_EQ(put, true);
	memset(&b, 0, sizeof b);
	HARNESS_EQ(smarm_server_callv(k, "get", MS(5000), &b, "key"), 0);
	HARNESS_EQ(b.len, 3);
	HARNESS_CHECK(b.ptr != NULL && memcmp(b.ptr, "val", 3) == 0);
	free((void *)b.ptr);
	/* a double for an i64: refused, and args_why names it */
	out = -1;
	HARNESS_EQ(smarm_server_callv(s, "add", MS(5000), &out, 2.5),
		   SMARM_EARGS);
	HARNESS_EQ(out, -1);
	HARNESS_EQ(smarm_server_castv(s, "inc", 2.5), SMARM_EARGS);
	{
		smarm_value_t a[] = { SMARM_V(2.5) };
		HARNESS_EQ(smarm_server_args_why(counter, "add", a, 1,
						 cv_why[0], sizeof cv_why[0]),
			   SMARM_EARGS);
	}
	/* the count */
	HARNESS_EQ(smarm_server_callv(s, "add", MS(5000), &out, 1, 2),
		   SMARM_EARGS);
	HARNESS_EQ(smarm_server_callv(s, "add", MS(5000), &out), SMARM_EARGS);
	HARNESS_EQ(smarm_server_castv(s, "inc"), SMARM_EARGS);
	HARNESS_EQ(smarm_server_castv(s, "reset", 1), SMARM_EARGS);
	{
		smarm_value_t a[] = { SMARM_V(1), SMARM_V(2) };
		HARNESS_EQ(smarm_server_args_why(counter, "add", a, 2,
						 cv_why[1], sizeof cv_why[1]),
			   SMARM_EARGS);
	}
	/* bytes is one value: the unchecked form's pair is two arguments */
	HARNESS_EQ(smarm_server_callv(k, "put", MS(5000), &put, "key",
				      (char *)"val", (size_t)3),
		   SMARM_EARGS);
	/* a NULL str */
	HARNESS_EQ(
		smarm_server_callv(k, "get", MS(5000), &b, (const char *)NULL),
		SMARM_EARGS);
	{
		smarm_value_t a[] = { SMARM_V((const char *)NULL) };
		HARNESS_EQ(smarm_server_args_why(kv, "get", a, 1, cv_why[2],
						 sizeof cv_why[2]),
			   SMARM_EARGS);
	}
	/* the reply's C type: an int32_t or a double for an i64 reply */
	HARNESS_EQ(smarm_server_callv(s, "add", MS(5000), &small, 1),
		   SMARM_EARGS);
	HARNESS_EQ(smarm_server_callv(s, "add", MS(5000), &d, 1), SMARM_EARGS);
	HARNESS_EQ(smarm_server_callv(k, "get", MS(5000), &out, "key"),
		   SMARM_EARGS);
	{
		/* a char * would take 8 of a smarm_bytes_t's 16 bytes */
		char *p = NULL;
		smarm_value_t key = SMARM_V("key");
		HARNESS_EQ(smarm_server_callv(k, "get", MS(5000), &p, "key"),
			   SMARM_EARGS);
		HARNESS_EQ(smarm_server_call_typed(k, "get", &key, 1, NULL,
						   SMARM_T_STR, MS(5000)),
			   SMARM_EARGS);
		HARNESS_EQ(smarm_server_call_typed(k, "get", &key, 1, NULL,
						   SMARM_T_BYTES, MS(5000)),
			   0);
		HARNESS_CHECK(p == NULL);
	}
	HARNESS_EQ(smarm_server_callv(s, "add", MS(5000), (void *)&out, 1), 0);
	HARNESS_EQ(out, 1); /* a void *: not checked */
	HARNESS_EQ(smarm_server_call_typed(s, "add", NULL, 0, &out,
					   SMARM_T_TUPLE + 1, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(
		smarm_server_call_typed(s, "add", NULL, 0, &out, -1, MS(5000)),
		SMARM_EINVAL);
	/* none of the refused calls reached the server */
	memset(&r, 0, sizeof r);
	HARNESS_EQ(smarm_server_call(s, "get", NULL, 0, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 1);
	/* misuse as before */
	HARNESS_EQ(smarm_server_callv(s, "inc", MS(5000), NULL, 1),
		   SMARM_EOPKIND);
	HARNESS_EQ(smarm_server_castv(s, "add", 1), SMARM_EOPKIND);
	HARNESS_EQ(smarm_server_castv(s, "nope", 1), SMARM_ENOOP);
	HARNESS_EQ(smarm_server_callv(NULL, "add", 0, NULL, 1), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_castv(s, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_castv(NULL, "inc", 1), SMARM_EINVAL);
	{
		/* sixteen arguments, the most: refused by count here */
		smarm_value_t a[16];
		for (int i = 0; i < 16; i++)
			a[i] = SMARM_V(i);
		HARNESS_EQ(smarm_server_castv(s, "inc", 0, 1, 2, 3, 4, 5, 6, 7,
					      8, 9, 10, 11, 12, 13, 14, 15),
			   SMARM_EARGS);
		HARNESS_EQ(smarm_server_args_why(counter, "inc", a, 16,
						 cv_why[3], sizeof cv_why[3]),
			   SMARM_EARGS);
	}
	smarm_server_free(s);
	smarm_server_free(k);
}

START_TEST(test_gen_server_checked_varargs)
{
	memset(cv_why, 0, sizeof cv_why);
	ck_assert_int_eq(harness_run(2, checked_varargs_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_str_eq(cv_why[0], "add: argument 1 is f64, the protocol "
				    "says i64");
	ck_assert_str_eq(cv_why[1], "add takes 1 argument, 2 given");
	ck_assert_str_eq(cv_why[2], "get: argument 1 is no value (void: a "
				    "NULL str?), the protocol says str");
	ck_assert_str_eq(cv_why[3], "inc takes 1 argument, 16 given");
}
END_TEST

/*
 * A gen_server's status (sys:get_status): what it is and holds, and its
 * behaviour's format_status text (OTP's format_status/1): the counter's,
 * none for a caller built before the field, a failure said as such.
 */
static void status_gs_root(void *arg)
{
	smarm_server_t *s = NULL, *c = NULL;
	smarm_server_status_t st;
	smarm_value_t three = i64(3), r;
	smarm_pid_t pid;
	(void)arg;
	HARNESS_EQ(smarm_server_start(counter, "5", NULL, &s), 0);
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	memset(&st, 0, sizeof st);
	st.struct_size = sizeof st;
	HARNESS_EQ(smarm_server_get_status(s, &st, MS(5000)), 0);
	HARNESS_EQ(st.struct_size, sizeof st);
	HARNESS_EQ(st.kind, SMARM_SERVER_GEN_SERVER);
	HARNESS_CHECK(strcmp(st.behaviour, "counter") == 0);
	HARNESS_CHECK(smarm_pid_eq(st.pid, pid));
	HARNESS_EQ(st.queued, 0);
	HARNESS_EQ(st.queue_limit, SMARM_QUEUE_LIMIT_DEFAULT);
	HARNESS_EQ(st.timers, 0);
	HARNESS_EQ(st.state, -1);
	HARNESS_CHECK(st.state_name == NULL);
	HARNESS_EQ(st.trapping, false);
	HARNESS_CHECK(strcmp(st.state_text, "count 5 (start 5)") == 0);
	HARNESS_EQ(smarm_server_call(s, "add", &three, 1, &r, MS(5000)), 0);
	memset(&st, 0x5a, sizeof st);
	st.struct_size = offsetof(smarm_server_status_t, state_text);
	HARNESS_EQ(smarm_server_get_status(s, &st, MS(5000)), 0);
	HARNESS_EQ(st.state_text[0], 0x5a); /* past its size: not written */
	st.struct_size = sizeof st;
	HARNESS_EQ(smarm_server_get_status(s, &st, MS(5000)), 0);
	HARNESS_CHECK(strcmp(st.state_text, "count 8 (start 5)") == 0);
	HARNESS_EQ(smarm_server_start(crasher, NULL, NULL, &c), 0);
	HARNESS_EQ(smarm_server_get_status(c, &st, MS(5000)), 0);
	HARNESS_CHECK(strncmp(st.state_text, "format_status failed: ",
			      strlen("format_status failed: ")) == 0);
	HARNESS_EQ(smarm_server_shutdown(c, MS(5000), NULL), 0);
	smarm_server_free(c);
	HARNESS_EQ(smarm_server_get_status(s, NULL, MS(5000)), SMARM_EINVAL);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	HARNESS_EQ(smarm_server_get_status(s, &st, MS(5000)), SMARM_ENOPROC);
	smarm_server_free(s);
}

START_TEST(test_gen_server_get_status)
{
	ck_assert_int_eq(harness_run(2, status_gs_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

START_TEST(test_gen_server_every_misuse_error)
{
	smarm_server_t *s = NULL;
	ck_assert_int_eq(harness_run(2, misuse_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	/* actor-only calls from a plain thread */
	ck_assert_int_eq(smarm_server_start(counter, NULL, NULL, &s),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_server_run(counter, NULL, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_gs_stop(NULL, 0, 0), SMARM_ENOTACTOR);
}
END_TEST

Suite *smarm_test_gen_server_suite(void)
{
	Suite *s = suite_create("gen_server");
	TCase *tc = tcase_create("gen_server");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_gen_server_call_cast_roundtrip_in_order);
	tcase_add_test(tc, test_gen_server_kv_str_and_bytes);
	tcase_add_test(tc, test_gen_server_call_timeout_no_late_reply);
	tcase_add_test(tc, test_gen_server_calling_self);
	tcase_add_test(tc, test_gen_server_crash_ends_server_not_node);
	tcase_add_test(tc, test_gen_server_killed_with_a_backlog);
	tcase_add_test(tc, test_gen_server_calls_from_plain_threads);
	tcase_add_test(tc, test_gen_server_named_follow_restart_and_shutdown);
	tcase_add_test(tc, test_gen_server_supervised_restart);
	tcase_add_test(tc, test_gen_server_already_started_outside_supervisor);
	tcase_add_test(tc, test_gen_server_unload_while_alive);
	tcase_add_test(tc, test_gen_server_every_misuse_error);
	tcase_add_test(tc, test_gen_server_varargs_stubs_requests);
	tcase_add_test(tc, test_gen_server_send_request_responses_as_messages);
	tcase_add_test(tc, test_gen_server_typed_arguments_and_why);
	tcase_add_test(tc, test_gen_server_checked_varargs);
	tcase_add_test(tc, test_gen_server_get_status);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(gen_server)
