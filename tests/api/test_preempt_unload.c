/* SPDX-License-Identifier: MIT */
/*
 * test_preempt_unload.c - removable preemption allowances: a dlopen'd
 * plugin (preempt_plugin.c, path in SMARM_TEST_PLUGIN) is allowed, an
 * actor looping in it is preempted, the allowance is removed, the plugin
 * is really unloaded, loaded and allowed again; errors for objects that
 * are not allowed and for bad input; allowances churned while actors are
 * preempted in the plugin on four workers.
 */
#include "harness.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

struct pp_spin {
	atomic_int entered;
	atomic_int stop;
};
typedef int (*pp_spin_fn)(struct pp_spin *sp, uint64_t max_ns);

static const char *pu_path(void)
{
	const char *p = getenv("SMARM_TEST_PLUGIN");
	ck_assert_msg(p != NULL, "SMARM_TEST_PLUGIN is not set");
	return p;
}

static void *pu_open(pp_spin_fn *fn)
{
	void *h = dlopen(pu_path(), RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "dlopen: %s", dlerror());
	*fn = (pp_spin_fn)dlsym(h, "pp_spin");
	ck_assert_ptr_nonnull(*fn);
	return h;
}

/* Whether the plugin is mapped (RTLD_NOLOAD takes no reference if not). */
static bool pu_loaded(void)
{
	void *h = dlopen(pu_path(), RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL)
		return false;
	dlclose(h);
	return true;
}

/* ----------------------------------------------------------- contest */

/*
 * One worker: a spinner loops in the plugin until a setter, queued
 * behind it, sets its stop flag. Only a preemption inside the plugin
 * lets the setter run while the spinner is in the loop.
 */
static pp_spin_fn pu_fn;
static struct pp_spin pu_sp;
static uint64_t pu_bound;
static int pu_spin_rc;
static int pu_setter_saw_entered;

static void pu_spinner(void *arg)
{
	(void)arg;
	pu_spin_rc = pu_fn(&pu_sp, pu_bound);
}

static void pu_setter(void *arg)
{
	(void)arg;
	pu_setter_saw_entered = atomic_load(&pu_sp.entered);
	atomic_store(&pu_sp.stop, 1);
}

static void pu_root(void *arg)
{
	smarm_pid_t a, b;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, pu_spinner, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, pu_setter, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
}

struct pu_result {
	int spin_rc;	    /* 1: stopped by the setter; 0: ran out */
	int setter_entered; /* the setter ran while the spinner looped */
	int64_t async;	    /* SMARM_STAT_PREEMPT_ASYNC of the run */
	int64_t deferred;   /* SMARM_STAT_PREEMPT_DEFERRED of the run */
};

static struct pu_result pu_contest(pp_spin_fn fn, uint64_t bound)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	struct pu_result r;
	pu_fn = fn;
	pu_bound = bound;
	atomic_store(&pu_sp.entered, 0);
	atomic_store(&pu_sp.stop, 0);
	pu_spin_rc = -1;
	pu_setter_saw_entered = -1;
	harness_checks_reset();
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1), 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_ASYNC_SLICE_NS, MS(1)), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_node_run(node, pu_root, NULL, NULL, NULL), 0);
	harness_checks_assert();
	r.spin_rc = pu_spin_rc;
	r.setter_entered = pu_setter_saw_entered;
	r.async = harness_stat(node, SMARM_STAT_PREEMPT_ASYNC);
	r.deferred = harness_stat(node, SMARM_STAT_PREEMPT_DEFERRED);
	ck_assert_int_eq(smarm_node_close(node), 0);
	return r;
}

/* Allowed: the spinner is switched out in the plugin's loop. */
static void pu_expect_preempted(pp_spin_fn fn)
{
	struct pu_result r =
		pu_contest(fn, (uint64_t)(10e9 * harness_time_scale()));
	ck_assert_int_eq(r.spin_rc, 1);
	ck_assert_int_eq(r.setter_entered, 1);
	ck_assert_int_ge(r.async, 1);
}

/* Not allowed: every signal is deferred, the loop runs out first. */
static void pu_expect_not_preempted(pp_spin_fn fn)
{
	struct pu_result r;
	uint64_t bound = MS(300);
	/* A loaded machine may not run the monitor thread within the bound:
	 * no signal came, nothing was judged. Try a longer one. */
	for (int k = 0;; k++, bound *= 3) {
		r = pu_contest(fn, bound);
		if (r.deferred >= 1 || r.spin_rc != 0 || k == 3)
			break;
	}
	ck_assert_int_eq(r.spin_rc, 0);
	ck_assert_int_ge(r.deferred, 1);
}

START_TEST(test_preempt_unload_disallow_lets_plugin_unload)
{
	pp_spin_fn fn = NULL;
	void *h = pu_open(&fn);

	ck_assert_int_eq(smarm_preempt_allow_object((const void *)fn), 0);
	ck_assert_int_eq(smarm_preempt_allow_object((const void *)fn), 0);
	pu_expect_preempted(fn);

	/* The allowance holds a reference: the host's dlclose keeps it. */
	ck_assert_int_eq(dlclose(h), 0);
	ck_assert(pu_loaded());
	pu_expect_preempted(fn);

	/* Disallowing drops the last reference: really unloaded. */
	ck_assert_int_eq(smarm_preempt_disallow_object((const void *)fn), 0);
	ck_assert(!pu_loaded());
	ck_assert_int_eq(smarm_preempt_disallow_object((const void *)fn),
			 SMARM_ENOENT);

	/* Loaded anew (maybe elsewhere) and allowed again. */
	h = pu_open(&fn);
	pu_expect_not_preempted(fn);
	ck_assert_int_eq(smarm_preempt_allow_object((const void *)fn), 0);
	pu_expect_preempted(fn);

	/* Disallowed while the host still holds it: loaded, not allowed. */
	ck_assert_int_eq(smarm_preempt_disallow_object((const void *)fn), 0);
	ck_assert(pu_loaded());
	pu_expect_not_preempted(fn);
	ck_assert_int_eq(smarm_preempt_disallow_object((const void *)fn),
			 SMARM_ENOENT);
	ck_assert_int_eq(dlclose(h), 0);
	ck_assert(!pu_loaded());
}
END_TEST

static void pu_exe_fn(void *arg)
{
	(void)arg;
}

START_TEST(test_preempt_unload_disallow_errors)
{
	pp_spin_fn fn = NULL;
	void *h = pu_open(&fn);
	void *heap = malloc(64);
	ck_assert_int_eq(smarm_preempt_disallow_object(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_preempt_disallow_object(heap), SMARM_ENOENT);
	/* loaded, never allowed */
	ck_assert_int_eq(smarm_preempt_disallow_object((const void *)fn),
			 SMARM_ENOENT);
	/* never preemptible, so never allowed */
	ck_assert_int_eq(
		smarm_preempt_disallow_object((const void *)smarm_now_ns),
		SMARM_ENOENT);
	ck_assert_int_eq(smarm_preempt_disallow_object((const void *)strlen),
			 SMARM_ENOENT);
	/* the executable: allowed by default, can be disallowed and back */
	ck_assert_int_eq(smarm_preempt_disallow_object((const void *)pu_exe_fn),
			 0);
	ck_assert_int_eq(smarm_preempt_disallow_object((const void *)pu_exe_fn),
			 SMARM_ENOENT);
	ck_assert_int_eq(smarm_preempt_allow_object((const void *)pu_exe_fn),
			 0);
	ck_assert_int_eq(smarm_preempt_disallow_object((const void *)pu_exe_fn),
			 0);
	ck_assert_int_eq(smarm_preempt_allow_object((const void *)pu_exe_fn),
			 0);
	free(heap);
	ck_assert_int_eq(dlclose(h), 0);
}
END_TEST

/* ------------------------------------------------------------- churn */

/*
 * Four workers on two cores: actors loop in the plugin (preempted
 * whenever a signal lands while it is allowed) while a plain thread
 * allows and disallows it over and over. Nothing may crash, hang or
 * switch an actor out in text that is not allowed (that would show as a
 * deadlock or corruption in libc, where the loop spends its clock reads).
 */
#define CH_ACTORS 8
#define CH_ROUNDS 20

static pp_spin_fn ch_fn;
static atomic_int ch_done;
static atomic_int ch_bad_rc;
static atomic_long ch_toggles;

static void ch_spinner(void *arg)
{
	struct pp_spin sp;
	(void)arg;
	atomic_store(&sp.stop, 0);
	for (int i = 0; i < CH_ROUNDS; i++) {
		atomic_store(&sp.entered, 0);
		ch_fn(&sp, MS(5));
		smarm_actor_yield();
	}
}

static void ch_root(void *arg)
{
	smarm_pid_t p[CH_ACTORS];
	(void)arg;
	for (int i = 0; i < CH_ACTORS; i++)
		HARNESS_EQ(smarm_actor_spawn(&p[i], ch_spinner, NULL, NULL), 0);
	for (int i = 0; i < CH_ACTORS; i++)
		HARNESS_EQ(smarm_actor_join(p[i], NULL, NULL), 0);
	atomic_store(&ch_done, 1);
}

static void *ch_churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&ch_done)) {
		if (smarm_preempt_allow_object((const void *)ch_fn) != 0)
			atomic_store(&ch_bad_rc, 1);
		if (smarm_preempt_disallow_object((const void *)ch_fn) != 0)
			atomic_store(&ch_bad_rc, 2);
		atomic_fetch_add(&ch_toggles, 1);
	}
	return NULL;
}

START_TEST(test_preempt_unload_churn_while_preempting)
{
	void *h = pu_open(&ch_fn);
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	pthread_t t;
	atomic_store(&ch_done, 0);
	atomic_store(&ch_bad_rc, 0);
	atomic_store(&ch_toggles, 0);
	harness_checks_reset();
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 4), 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_ASYNC_SLICE_NS, US(100)),
		0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(pthread_create(&t, NULL, ch_churn, NULL), 0);
	ck_assert_int_eq(smarm_node_run(node, ch_root, NULL, NULL, NULL), 0);
	atomic_store(&ch_done, 1);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	harness_checks_assert();
	int bad_rc = atomic_load(&ch_bad_rc);
	long toggles = atomic_load(&ch_toggles);
	ck_assert_int_eq(bad_rc, 0);
	ck_assert_int_ge(toggles, 1);
	/* handlers did read the table while it churned */
	ck_assert_int_ge(harness_stat(node, SMARM_STAT_PREEMPT_ASYNC), 1);
	ck_assert_int_eq(smarm_node_close(node), 0);
	/* the churn ends disallowed: the last reference is the test's */
	ck_assert_int_eq(dlclose(h), 0);
	ck_assert(!pu_loaded());
}
END_TEST

Suite *smarm_test_preempt_unload_suite(void)
{
	Suite *s = suite_create("preempt_unload");
	TCase *tc = tcase_create("unload");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_preempt_unload_disallow_lets_plugin_unload);
	tcase_add_test(tc, test_preempt_unload_disallow_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("churn");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_preempt_unload_churn_while_preempting);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(preempt_unload)
