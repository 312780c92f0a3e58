/* SPDX-License-Identifier: MIT */
/*
 * test_statem_hibernate.c - hibernating gen_statem machines over the
 * probe machine tests/plugins_sm/probe.c ("hib": hibernate at every
 * wait; "hibafter": after 5 ms idle; its "hib" cast:
 * smarm_sm_hibernate): a hibernated machine keeps its state, data and
 * postponed events across calls; its state, generic and event timeouts
 * fire while it is hibernated; it handles infos and exit signals and a
 * shutdown as before (terminate runs); 10,000 hibernated machines are
 * started and each is called once (4 workers).
 */
#include "harness.h"

#include <smarm/smarm_plugin.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { A, B, C }; /* the probe's states */

static smarm_plugin_t *pl;
static const smarm_behaviour_t *probe;
static char g_log[8][1024]; /* what the roots observed */

static void setup(void)
{
	char msg[256];
	int rc = smarm_plugin_open(getenv("SMARM_TEST_SM_PROBE"), &pl, msg,
				   sizeof msg);
	ck_assert_msg(rc == 0, "open the probe: %d %s", rc, msg);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "probe", &probe), 0);
	harness_checks_reset();
	memset(g_log, 0, sizeof g_log);
}

static void teardown(void)
{
	if (pl != NULL)
		smarm_plugin_close(pl);
	pl = NULL;
}

static int64_t hibs(void)
{
	return harness_stat(smarm_node_current(), SMARM_STAT_HIBERNATIONS);
}

/* Wait until the node counts more than `than` hibernations. */
static bool hib_past(int64_t than)
{
	uint64_t t0 = smarm_now_ns();
	while (hibs() <= than) {
		if (harness_since(t0) > MS(5000) * harness_time_scale())
			return false;
		smarm_actor_sleep(US(200));
	}
	return true;
}

static int cast_i(smarm_server_t *s, const char *op, int64_t i)
{
	smarm_value_t v = { .type = SMARM_T_I32, .v.i = i };
	return smarm_server_cast(s, op, &v, 1);
}

static int cast_u(smarm_server_t *s, const char *op, uint64_t u)
{
	smarm_value_t v = { .type = SMARM_T_U64, .v.u = u };
	return smarm_server_cast(s, op, &v, 1);
}

/* The machine's state (call get), or -1000 - the call's status. */
static int64_t get(smarm_server_t *s)
{
	smarm_value_t r = { .type = SMARM_T_I32 };
	int rc = smarm_server_call(s, "get", NULL, 0, &r, MS(5000));
	return rc == 0 ? r.v.i : -1000 - rc;
}

/* Append the probe's log (call log, which clears it) to g_log[i]. */
static void take_log(smarm_server_t *s, int i)
{
	smarm_value_t r = { 0 };
	size_t n = strlen(g_log[i]);
	int rc = smarm_server_call(s, "log", NULL, 0, &r, MS(5000));
	if (rc != 0) {
		snprintf(g_log[i] + n, sizeof g_log[i] - n, " <log:%d>", rc);
		return;
	}
	if (r.len > 0)
		snprintf(g_log[i] + n, sizeof g_log[i] - n, "%s%.*s",
			 n > 0 ? " " : "", (int)r.len, (const char *)r.v.p);
	smarm_value_release(&r);
}

/* Poll the log until g_log[i] holds want (5 s, scaled). */
static bool await_log(smarm_server_t *s, int i, const char *want)
{
	uint64_t t0 = smarm_now_ns();
	for (;;) {
		take_log(s, i);
		if (strstr(g_log[i], want) != NULL)
			return true;
		if (harness_since(t0) > MS(5000) * harness_time_scale())
			return false;
		smarm_actor_sleep(MS(1));
	}
}

static void stop(smarm_server_t *s)
{
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

/* ------------------------------------------------------------ state */

/* A postponed event and the state survive hibernations; each call is
 * answered by a machine that hibernated before it. */
static void state_root(void *arg)
{
	smarm_server_t *s = NULL;
	int64_t before;
	HARNESS_EQ(smarm_server_start(probe, arg, NULL, &s), 0);
	if (s == NULL)
		return;
	HARNESS_CHECK(hib_past(0));
	HARNESS_EQ(cast_i(s, "go", B), 0);
	HARNESS_EQ(cast_i(s, "ev", 1), 0); /* postponed in B */
	for (int i = 0; i < 20; i++) {
		before = hibs();
		HARNESS_EQ(get(s), B);
		HARNESS_CHECK(hib_past(before));
	}
	HARNESS_EQ(cast_i(s, "go", A), 0); /* replays ev 1 in A */
	HARNESS_CHECK(await_log(s, 0, "ev1@0"));
	HARNESS_EQ(get(s), A);
	stop(s);
}

START_TEST(test_state_survives)
{
	ck_assert_int_eq(harness_run(4, state_root, "hib"), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_msg(strstr(g_log[0], "go1@0 E1/0") != NULL &&
			      strstr(g_log[0], "go0@1 E0/1 ev1@0") != NULL,
		      "%s", g_log[0]);
}
END_TEST

START_TEST(test_hibernate_after)
{
	ck_assert_int_eq(harness_run(4, state_root, "hibafter"),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_msg(strstr(g_log[0], "go0@1 E0/1 ev1@0") != NULL, "%s",
		      g_log[0]);
}
END_TEST

/* The "hib" cast: one hibernation on request, then it parks as usual. */
static void cast_root(void *arg)
{
	smarm_server_t *s = NULL;
	int64_t before;
	(void)arg;
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &s), 0);
	if (s == NULL)
		return;
	HARNESS_EQ(get(s), A);
	before = hibs();
	HARNESS_EQ(smarm_server_cast(s, "hib", NULL, 0), 0);
	HARNESS_CHECK(hib_past(before));
	HARNESS_EQ(cast_i(s, "go", C), 0);
	HARNESS_EQ(get(s), C);
	before = hibs();
	smarm_actor_sleep(MS(20));
	HARNESS_EQ(hibs(), before); /* the request was one-shot */
	take_log(s, 0);
	stop(s);
}

START_TEST(test_hibernate_cast)
{
	ck_assert_int_eq(harness_run(4, cast_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_msg(strstr(g_log[0], "hib:0 go2@0 E2/0") != NULL, "%s",
		      g_log[0]);
}
END_TEST

/* --------------------------------------- timeouts, infos and signals */

static void crash_kid(void *arg)
{
	(void)arg;
	smarm_actor_sleep(MS(20));
	smarm_actor_crash(5);
}

static void timeouts_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_value_t p = { .type = SMARM_T_PID };
	smarm_pid_t k;
	int64_t before;
	(void)arg;
	HARNESS_EQ(smarm_server_start(probe, "hib", NULL, &s), 0);
	if (s == NULL)
		return;
	HARNESS_CHECK(hib_past(0));
	/* A state timeout fires while it is hibernated. */
	before = hibs();
	HARNESS_EQ(cast_u(s, "arm_st", MS(10)), 0);
	HARNESS_CHECK(hib_past(before));
	smarm_actor_sleep(MS(30));
	HARNESS_CHECK(await_log(s, 0, "st@0"));
	/* A generic one. */
	before = hibs();
	HARNESS_EQ(cast_u(s, "arm_t", MS(10)), 0);
	HARNESS_CHECK(hib_past(before));
	smarm_actor_sleep(MS(30));
	HARNESS_CHECK(await_log(s, 1, "t1@0"));
	/* An info. */
	before = hibs();
	HARNESS_EQ(smarm_server_info(s, "tick", NULL, 0), 0);
	HARNESS_CHECK(hib_past(before));
	HARNESS_CHECK(await_log(s, 2, "tick@0"));
	/* An exit signal of a linked actor (the probe traps exits). */
	HARNESS_EQ(smarm_actor_spawn(&k, crash_kid, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_detach(k), 0);
	p.v.pid = k;
	HARNESS_EQ(smarm_server_cast(s, "link_to", &p, 1), 0);
	smarm_actor_sleep(MS(60)); /* it crashes; the signal wakes it */
	HARNESS_CHECK(await_log(s, 3, "exit"));
	HARNESS_EQ(get(s), A);
	/* The event timeout too (its row stops the machine): the wake of
	 * a hibernation is no event, it does not cancel it. */
	before = hibs();
	HARNESS_EQ(cast_u(s, "arm_ev", MS(10)), 0);
	HARNESS_CHECK(hib_past(before));
	smarm_actor_sleep(MS(60));
	HARNESS_CHECK(get(s) < 0); /* ended: the call fails */
	smarm_server_free(s);
}

START_TEST(test_timeouts_and_signals)
{
	ck_assert_int_eq(harness_run(4, timeouts_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_msg(strstr(g_log[1], "st@0") == NULL, "%s", g_log[1]);
	ck_assert_msg(strstr(g_log[3], "linked0") != NULL, "%s", g_log[3]);
}
END_TEST

/* ------------------------------------------------------------- many */

#define MANY 10000

static void many_root(void *arg)
{
	smarm_server_t **s = calloc(MANY, sizeof *s);
	smarm_node_t *node = smarm_node_current();
	int started = 0;
	(void)arg;
	HARNESS_CHECK(s != NULL);
	for (; s != NULL && started < MANY; started++)
		if (smarm_server_start(probe, "hib", NULL, &s[started]) != 0)
			break;
	HARNESS_EQ(started, MANY);
	HARNESS_CHECK(harness_await_stat(node, SMARM_STAT_HIBERNATIONS, MANY) ||
		      hibs() >= MANY);
	/* Hibernated: (almost) no stack is attached. */
	HARNESS_CHECK(harness_stat(node, SMARM_STAT_STACKS_DENSE) +
			      harness_stat(node, SMARM_STAT_STACKS_GUARDED) <
		      MANY / 10);
	for (int i = 0; i < started; i++) {
		HARNESS_EQ(cast_i(s[i], "go", i % 3), 0);
		HARNESS_EQ(get(s[i]), i % 3);
	}
	for (int i = 0; i < started; i++) {
		(void)smarm_server_shutdown(s[i], MS(10000), NULL);
		smarm_server_free(s[i]);
	}
	free(s);
}

START_TEST(test_many_machines)
{
	ck_assert_int_eq(harness_run_opt(4, SMARM_OPT_STACK_MODE,
					 SMARM_STACK_DENSE, many_root, NULL,
					 NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_statem_hibernate_suite(void)
{
	Suite *s = suite_create("statem_hibernate");
	TCase *tc = tcase_create("machine");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_state_survives);
	tcase_add_test(tc, test_hibernate_after);
	tcase_add_test(tc, test_hibernate_cast);
	tcase_add_test(tc, test_timeouts_and_signals);
	tcase_add_test(tc, test_many_machines);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(statem_hibernate)
