/* SPDX-License-Identifier: MIT */
/*
 * test_sched_scale.c - what the scheduler shares between workers:
 * SMARM_STAT_GLOBAL_LOCKS counts the node-wide lock acquisitions and is
 * reset when a run starts.
 */
#include "harness.h"

static int64_t gl_stat(void)
{
	int64_t v = -1;
	HARNESS_EQ(smarm_node_get_int(smarm_node_current(),
				      SMARM_STAT_GLOBAL_LOCKS, &v),
		   0);
	return v;
}

/* ------------------------------------------------- the stat counts */

#define GL_YIELDS 2000
static int64_t gl_before, gl_after;

static void gl_yielder(void *arg)
{
	(void)arg;
	for (int i = 0; i < GL_YIELDS; i++)
		smarm_actor_yield();
}

static void gl_yield_root(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&p, gl_yielder, NULL, NULL), 0);
	smarm_actor_yield(); /* let it start */
	gl_before = gl_stat();
	for (int i = 0; i < GL_YIELDS; i++)
		smarm_actor_yield();
	gl_after = gl_stat();
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
}

/* A yield goes back through the shared run queue: one lock per yield. */
START_TEST(test_sched_scale_global_locks_counts_run_queue)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, gl_yield_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_ge(gl_before, 1); /* the root's own spawn at least */
	ck_assert_int_ge(gl_after - gl_before, GL_YIELDS);
}
END_TEST

static int64_t gl_first;

static void gl_first_root(void *arg)
{
	(void)arg;
	gl_first = gl_stat();
}

/* "In the last run": a new run starts from zero, and the count stays
 * readable after the run. */
START_TEST(test_sched_scale_global_locks_reset_per_run)
{
	smarm_node_t *node = harness_open(1);
	int how = -1;
	int64_t end;
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, gl_yield_root, NULL, &how, NULL),
			 0);
	end = harness_stat(node, SMARM_STAT_GLOBAL_LOCKS);
	ck_assert_int_ge(end, GL_YIELDS);
	ck_assert_int_eq(smarm_node_run(node, gl_first_root, NULL, &how, NULL),
			 0);
	harness_checks_assert();
	ck_assert_int_lt(gl_first, 64);
	ck_assert_int_lt(harness_stat(node, SMARM_STAT_GLOBAL_LOCKS), end);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

Suite *smarm_test_sched_scale_suite(void)
{
	Suite *s = suite_create("sched_scale");
	TCase *tc = tcase_create("global_locks");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sched_scale_global_locks_counts_run_queue);
	tcase_add_test(tc, test_sched_scale_global_locks_reset_per_run);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(sched_scale)
