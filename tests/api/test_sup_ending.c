/* SPDX-License-Identifier: MIT */
/*
 * test_sup_ending.c - calls to a supervisor that is ending or has ended
 * (smarm_sup_start_child, terminate_child, restart_child, delete_child,
 * which_children, count_children) return SMARM_ENOPROC, never
 * SMARM_EINVAL or SMARM_ECLOSED: after its end (its pid reclaimed, or
 * ended and not yet joined), while its cleanup handlers run (its
 * control channel already closed, its mailbox still published), and
 * from callers that race the supervisor's shutdown on 4 workers, which
 * also reach the moment its exit hook has withdrawn its mailbox but it
 * is not yet DONE.
 */
#include "sup_kids.h"

/* The status of each call to sup (one id-taking call per kind). */
struct calls {
	int start, terminate, restart, delete_, which, count;
	int start_spec, start_args, terminate_pid, restart_ex, which_ex,
		count_ex;
};

static void call_all(smarm_pid_t sup, uint64_t timeout_ns, struct calls *c)
{
	static struct kid spare = { .mode = KID_PARK };
	smarm_sup_child_t buf[4];
	size_t n = 0, specs = 0;
	c->start = smarm_sup_start_child(
		sup, "dyn", kid_body, &spare, SMARM_SUP_TEMPORARY,
		SMARM_SUP_BRUTAL_KILL, timeout_ns, NULL);
	c->terminate = smarm_sup_terminate_child(sup, "none", timeout_ns);
	c->restart = smarm_sup_restart_child(sup, "none", timeout_ns, NULL);
	c->delete_ = smarm_sup_delete_child(sup, "none", timeout_ns);
	c->which = smarm_sup_which_children(sup, buf, 4, &n, timeout_ns);
	c->count = smarm_sup_count_children(sup, &specs, NULL, timeout_ns);
	{
		smarm_sup_spec_t *one = NULL;
		smarm_sup_child_info_t info[4];
		HARNESS_EQ(smarm_sup_spec_alloc(&one), 0);
		HARNESS_EQ(smarm_sup_spec_add_child(one, "dyn2", kid_body,
						    &spare, SMARM_SUP_TEMPORARY,
						    SMARM_SUP_BRUTAL_KILL),
			   0);
		c->start_spec = smarm_sup_start_child_spec(sup, one, timeout_ns,
							   NULL, NULL);
		smarm_sup_spec_free(one);
		c->start_args = smarm_sup_start_child_args(
			sup, &spare, timeout_ns, NULL, NULL);
		c->terminate_pid = smarm_sup_terminate_child_pid(
			sup, smarm_actor_self(), timeout_ns);
		c->restart_ex = smarm_sup_restart_child_ex(
			sup, "none", timeout_ns, NULL, NULL);
		c->which_ex = smarm_sup_which_children_ex(sup, info, 4, &n,
							  timeout_ns);
		c->count_ex = smarm_sup_count_children_ex(sup, NULL, NULL, NULL,
							  &specs, timeout_ns);
	}
}

static void check_all_enoproc(smarm_pid_t sup)
{
	struct calls c;
	call_all(sup, MS(5000) * harness_time_scale(), &c);
	HARNESS_EQ(c.start, SMARM_ENOPROC);
	HARNESS_EQ(c.terminate, SMARM_ENOPROC);
	HARNESS_EQ(c.restart, SMARM_ENOPROC);
	HARNESS_EQ(c.delete_, SMARM_ENOPROC);
	HARNESS_EQ(c.which, SMARM_ENOPROC);
	HARNESS_EQ(c.count, SMARM_ENOPROC);
	HARNESS_EQ(c.start_spec, SMARM_ENOPROC);
	HARNESS_EQ(c.start_args, SMARM_ENOPROC);
	HARNESS_EQ(c.terminate_pid, SMARM_ENOPROC);
	HARNESS_EQ(c.restart_ex, SMARM_ENOPROC);
	HARNESS_EQ(c.which_ex, SMARM_ENOPROC);
	HARNESS_EQ(c.count_ex, SMARM_ENOPROC);
}

static smarm_sup_spec_t *spec_one(struct kid *k)
{
	smarm_sup_spec_t *sp = NULL;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "k", kid_body, k,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_BRUTAL_KILL),
		   0);
	return sp;
}

/* ------------------------------------------------------------ ended */

static void body_sup_run(void *arg)
{
	HARNESS_EQ(smarm_sup_run(arg), 0); /* returns only on misuse */
}

static void root_after_end(void *arg)
{
	struct kid *k = kid_new(1, KID_PARK);
	smarm_sup_spec_t *sp = spec_one(k);
	smarm_pid_t sup;
	int how = -1;
	(void)arg;
	/* smarm_sup_start's supervisor is detached: its pid is reclaimed */
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	HARNESS_CHECK(kid_await(&k->starts, 1));
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	/* its Down came from its exit hooks: wait until it is DONE */
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	check_all_enoproc(sup);
	/* one run on a joinable actor: ended, not yet joined */
	HARNESS_EQ(smarm_actor_spawn(&sup, body_sup_run, sp, NULL), 0);
	HARNESS_CHECK(kid_await(&k->starts, 2));
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	check_all_enoproc(sup);
	HARNESS_EQ(smarm_actor_join(sup, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_SHUTDOWN);
	check_all_enoproc(sup);
	smarm_sup_spec_free(sp);
	free(k);
}

START_TEST(test_sup_ending_calls_after_its_end_return_enoproc)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_after_end, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------- in its cleanup */

/*
 * A cleanup handler pushed before smarm_sup_run runs after the
 * supervisor's own (newest first): its control channel is closed then,
 * its mailbox still published. The handler says so and waits for go.
 */
struct hold {
	smarm_sup_spec_t *spec;
	smarm_chan_t *in; /* int: "the supervisor is in its cleanup" */
	smarm_chan_t *go; /* int: "end now" */
};

static void hold_cb(void *arg)
{
	struct hold *h = arg;
	int v = 1;
	HARNESS_EQ(smarm_chan_send(h->in, &v), 0);
	HARNESS_EQ(smarm_chan_recv_timeout(h->go, &v,
					   MS(10000) * harness_time_scale()),
		   0);
}

static void body_hold(void *arg)
{
	struct hold *h = arg;
	HARNESS_EQ(smarm_cleanup_push(hold_cb, h), 0);
	HARNESS_EQ(smarm_sup_run(h->spec), 0); /* returns only on misuse */
}

static void root_in_cleanup(void *arg)
{
	struct kid *k = kid_new(1, KID_PARK);
	struct hold h = { .spec = spec_one(k) };
	smarm_pid_t sup;
	size_t specs = 0;
	int v = 0, how = -1;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&h.in, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&h.go, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&sup, body_hold, &h, NULL), 0);
	HARNESS_CHECK(kid_await(&k->starts, 1)); /* it serves calls now */
	HARNESS_EQ(smarm_sup_count_children(sup, &specs, NULL, MS(5000)), 0);
	HARNESS_EQ(specs, 1);
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_EQ(smarm_chan_recv_timeout(h.in, &v,
					   MS(10000) * harness_time_scale()),
		   0);
	check_all_enoproc(sup);
	HARNESS_EQ(smarm_chan_send(h.go, &v), 0);
	HARNESS_EQ(smarm_actor_join(sup, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_SHUTDOWN);
	harness_chan_drop(h.in);
	harness_chan_drop(h.go);
	smarm_sup_spec_free(h.spec);
	free(k);
}

START_TEST(test_sup_ending_calls_during_its_cleanup_return_enoproc)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_in_cleanup, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------------ race */

#define RACE_SUPS 40
#define RACE_CALLERS 4

static _Atomic int race_bad;	/* statuses no call may return */
static _Atomic int race_einval; /* ... of them SMARM_EINVAL */
static _Atomic int race_calls;	/* calls made in all */

/* A status a call may return while the supervisor lives or ends. */
static bool race_ok(int rc)
{
	return rc == 0 || rc == SMARM_ETIMEDOUT || rc == SMARM_ENOENT ||
	       rc == SMARM_EEXIST || rc == SMARM_ENOPROC ||
	       rc == SMARM_ESIMPLE; /* start_child_args: not simple */
}

static void race_note(int rc, bool *gone)
{
	atomic_fetch_add(&race_calls, 1);
	if (!race_ok(rc)) {
		atomic_fetch_add(&race_bad, 1);
		if (rc == SMARM_EINVAL)
			atomic_fetch_add(&race_einval, 1);
	}
	if (rc == SMARM_ENOPROC)
		*gone = true;
}

/*
 * Call sup until a call says it is gone, then once more, waiting. Each
 * round makes the six calls without waiting (timeout 0: each sends,
 * then finds no answer yet), then one that waits, which the supervisor
 * serves after the others: the caller never runs ahead of it by more
 * than a round, and sends all the time it is not waiting.
 */
static void race_caller(void *arg)
{
	smarm_pid_t sup = { (uint64_t)(uintptr_t)arg };
	uint64_t deadline =
		smarm_now_ns() + (uint64_t)(20e9 * harness_time_scale());
	size_t specs = 0;
	bool gone = false;
	while (!gone && smarm_now_ns() < deadline) {
		struct calls c;
		call_all(sup, 0, &c);
		race_note(c.start, &gone);
		race_note(c.terminate, &gone);
		race_note(c.restart, &gone);
		race_note(c.delete_, &gone);
		race_note(c.which, &gone);
		race_note(c.count, &gone);
		race_note(c.start_spec, &gone);
		race_note(c.start_args, &gone);
		race_note(c.terminate_pid, &gone);
		race_note(c.restart_ex, &gone);
		race_note(c.which_ex, &gone);
		race_note(c.count_ex, &gone);
		if (!gone)
			race_note(smarm_sup_count_children(
					  sup, &specs, NULL,
					  MS(5000) * harness_time_scale()),
				  &gone);
	}
	HARNESS_CHECK(gone);
	check_all_enoproc(sup);
}

static void root_race(void *arg)
{
	struct kid *k = kid_new(1, KID_PARK);
	smarm_sup_spec_t *sp = spec_one(k);
	(void)arg;
	for (int r = 0; r < RACE_SUPS; r++) {
		smarm_pid_t sup, callers[RACE_CALLERS];
		HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
		for (int i = 0; i < RACE_CALLERS; i++)
			HARNESS_EQ(smarm_actor_spawn(&callers[i], race_caller,
						     (void *)(uintptr_t)sup.id,
						     NULL),
				   0);
		/* let the callers get going, at a different point each round */
		smarm_actor_sleep(US(50 * (r % 8)));
		HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
			   SMARM_EXIT_SHUTDOWN);
		for (int i = 0; i < RACE_CALLERS; i++)
			HARNESS_EQ(smarm_actor_join(callers[i], NULL, NULL), 0);
	}
	smarm_sup_spec_free(sp);
	free(k);
}

START_TEST(test_sup_ending_calls_racing_its_shutdown_return_enoproc)
{
	intptr_t reason = 0;
	int how, einval, bad;
	harness_checks_reset();
	atomic_store(&race_bad, 0);
	atomic_store(&race_einval, 0);
	atomic_store(&race_calls, 0);
	how = harness_run_ex(4, 0, root_race, NULL, &reason);
	ck_assert_msg(how == SMARM_EXIT_NORMAL, "the root ended %d (%s)", how,
		      smarm_err_name((int)reason));
	einval = atomic_load(&race_einval);
	bad = atomic_load(&race_bad);
	ck_assert_int_eq(einval, 0);
	ck_assert_int_eq(bad, 0);
	ck_assert_int_gt(atomic_load(&race_calls), 0);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_sup_ending_suite(void)
{
	Suite *s = suite_create("sup_ending");
	TCase *t = tcase_create("ended");
	tcase_add_test(t, test_sup_ending_calls_after_its_end_return_enoproc);
	tcase_add_test(t,
		       test_sup_ending_calls_during_its_cleanup_return_enoproc);
	suite_add_tcase(s, t);
	t = tcase_create("race");
	tcase_set_timeout(t, 120);
	tcase_add_test(
		t, test_sup_ending_calls_racing_its_shutdown_return_enoproc);
	suite_add_tcase(s, t);
	return s;
}

SMARM_TEST_MAIN(sup_ending)
