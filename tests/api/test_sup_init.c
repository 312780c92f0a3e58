/* SPDX-License-Identifier: MIT */
/*
 * test_sup_init.c - a supervisor whose spec its init callback builds
 * (smarm_sup_start_init, OTP's supervisor:init/1), with the cases of
 * OTP's supervisor_SUITE under their names:
 *   sup_start_normal - init fills the spec, the children start, the
 *     start returns the supervisor's pid;
 *   sup_start_ignore_init - init returns ignore: the start succeeds
 *     with no pid and the supervisor ended normally;
 *   sup_start_error_return - init returns a value outside its contract
 *     or builds an invalid spec: the start fails naming it;
 *   sup_start_fail - init crashes: the start fails with the crash's
 *     reason;
 * the same for a child supervisor with an init (smarm_sup_run_init),
 * and the calls' own errors. init runs trapping exits, as OTP's
 * supervisor:init/1 sets trap_exit before it calls Module:init/1: a
 * process init linked to that ends during init (a crash, or noproc
 * for one already gone) is an 'EXIT' message the supervisor ignores,
 * not the supervisor's end.
 */
#include "sup_kids.h"

/* What init does, and what it saw. */
struct init_case {
	int ret;	       /* init's return */
	int crash;	       /* crash with this reason instead */
	int bad_setter;	       /* a setter fails before init returns */
	int ready;	       /* "k" reports readiness */
	int linked;	       /* a process linked to init ends in it */
	struct kid *k;	       /* child "k", if not NULL */
	_Atomic uint64_t self; /* the actor init ran on */
	_Atomic int link_rc;   /* smarm_link of the one already gone */
};

static void crash_at_once(void *arg)
{
	(void)arg;
	smarm_actor_crash(4242);
}

static void end_at_once(void *arg)
{
	(void)arg;
}

/*
 * During init: a process linked to the supervisor crashes (init waits
 * for its Down, so its exit signal has been sent), then init links to
 * one already gone (OTP's link/1 of a dead pid: noproc).
 */
static void init_links(struct init_case *c)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_spawn_opts_t *o = NULL;
	smarm_signal_t s = { 0 };
	smarm_pid_t p;
	HARNESS_EQ(smarm_spawn_opts_alloc(&o), 0);
	HARNESS_EQ(smarm_spawn_opts_set_int(o, SMARM_OPT_LINK, 1), 0);
	HARNESS_EQ(smarm_spawn_opts_set_monitor(o, ch, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&p, crash_at_once, NULL, o), 0);
	(void)smarm_actor_detach(p);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(smarm_spawn_opts_set_int(o, SMARM_OPT_LINK, 0), 0);
	HARNESS_EQ(smarm_actor_spawn(&p, end_at_once, NULL, o), 0);
	(void)smarm_actor_detach(p);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_NORMAL);
	smarm_spawn_opts_free(o);
	harness_chan_drop(ch);
	/* not trapping, the caller would end here (crashed, ENOPROC) */
	atomic_store(&c->link_rc, smarm_link(p));
}

static int init_fn(void *arg, smarm_sup_spec_t *spec)
{
	struct init_case *c = arg;
	atomic_store(&c->self, smarm_actor_self().id);
	if (c->linked)
		init_links(c);
	if (c->k != NULL)
		kid_add(spec, "k", c->k);
	if (c->ready)
		HARNESS_EQ(smarm_sup_spec_set_child_ready(spec, "k", MS(10000)),
			   0);
	if (c->bad_setter)
		HARNESS_EQ(smarm_sup_spec_set_child_ready(spec, "nope", 0),
			   SMARM_ENOENT);
	if (c->crash)
		smarm_actor_crash(c->crash);
	return c->ret;
}

/* The start of c: its status, *pid and *why (set to 77 first). */
static int start(struct init_case *c, smarm_pid_t *pid, intptr_t *why)
{
	*pid = smarm_actor_self(); /* overwritten on success */
	*why = 77;
	return smarm_sup_start_init(init_fn, c, pid, why);
}

/* sup_start_normal: init runs on the supervisor, which starts its kid */
static void root_normal(void *arg)
{
	struct init_case c = { .k = kid_new(1, KID_PARK) };
	smarm_sup_child_t item;
	smarm_pid_t sup;
	intptr_t why;
	size_t n = 0;
	(void)arg;
	HARNESS_EQ(start(&c, &sup, &why), 0);
	HARNESS_EQ(why, 77); /* untouched */
	HARNESS_EQ(atomic_load(&c.self), sup.id);
	HARNESS_CHECK(kid_await(&c.k->starts, 1));
	HARNESS_EQ(smarm_sup_which_children(sup, &item, 1, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	HARNESS_EQ(strcmp(item.id, "k"), 0);
	HARNESS_CHECK(smarm_pid_eq(item.pid, kid_pid(c.k)));
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	free(c.k);
}

/* sup_start_ignore_init: ok with no pid; nothing started, nothing left */
static void root_ignore_init(void *arg)
{
	struct init_case c = { .ret = SMARM_SUP_INIT_IGNORE,
			       .k = kid_new(1, KID_PARK) };
	smarm_pid_t sup;
	intptr_t why;
	(void)arg;
	HARNESS_EQ(start(&c, &sup, &why), 0);
	HARNESS_CHECK(smarm_pid_eq(sup, SMARM_PID_NONE));
	HARNESS_CHECK(atomic_load(&c.self) != 0);
	HARNESS_EQ(atomic_load(&c.k->starts), 0);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_CHECK(sup_await(SMARM_STAT_REG_MAILBOXES, 0));
	free(c.k);
}

/* sup_start_error_return: a bad return, a bad spec, a failure status */
static void root_error_return(void *arg)
{
	struct init_case bad_ret = { .ret = 42 };
	struct init_case bad_spec = { .bad_setter = 1,
				      .k = kid_new(1, KID_PARK) };
	struct init_case failed = { .ret = -4242 };
	smarm_pid_t sup;
	intptr_t why;
	(void)arg;
	HARNESS_EQ(start(&bad_ret, &sup, &why), SMARM_EBADRETURN);
	HARNESS_EQ(why, 42);
	HARNESS_CHECK(smarm_pid_eq(sup, smarm_actor_self())); /* untouched */
	HARNESS_EQ(start(&bad_spec, &sup, &why), SMARM_EBADSPEC);
	HARNESS_EQ(why, SMARM_ENOENT); /* the failed setter's status */
	HARNESS_EQ(atomic_load(&bad_spec.k->starts), 0); /* nothing ran */
	HARNESS_EQ(start(&failed, &sup, &why), -4242);
	HARNESS_EQ(why, 0);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_CHECK(sup_await(SMARM_STAT_REG_MAILBOXES, 0));
	free(bad_spec.k);
}

/* sup_start_fail: a crash in init; its reason comes back */
static void root_fail(void *arg)
{
	struct init_case c = { .crash = 4711, .k = kid_new(1, KID_PARK) };
	smarm_pid_t sup;
	intptr_t why;
	(void)arg;
	HARNESS_EQ(start(&c, &sup, &why), SMARM_EDOWN);
	HARNESS_EQ(why, 4711);
	HARNESS_EQ(atomic_load(&c.k->starts), 0);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_CHECK(sup_await(SMARM_STAT_REG_MAILBOXES, 0));
	free(c.k);
}

/*
 * init runs trapping exits (OTP's supervisor:init/1): the crash of a
 * process linked to it and a link to one gone are messages the
 * supervisor ignores; it starts and supervises as if nothing happened.
 */
static void root_linked(void *arg)
{
	struct init_case c = { .linked = 1, .k = kid_new(1, KID_PARK) };
	smarm_sup_child_t item;
	smarm_pid_t sup;
	intptr_t why;
	size_t n = 0;
	(void)arg;
	HARNESS_EQ(start(&c, &sup, &why), 0);
	HARNESS_EQ(why, 77);
	HARNESS_EQ(atomic_load(&c.link_rc), 0);
	HARNESS_CHECK(kid_await(&c.k->starts, 1));
	HARNESS_EQ(smarm_sup_which_children(sup, &item, 1, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	HARNESS_CHECK(smarm_pid_eq(item.pid, kid_pid(c.k)));
	HARNESS_CHECK(smarm_actor_is_alive(sup));
	/* the child is still supervised: it is restarted */
	HARNESS_EQ(exit_and_await(kid_pid(c.k), SMARM_EXIT_CRASHED, 1, NULL),
		   SMARM_EXIT_CRASHED);
	HARNESS_CHECK(kid_await(&c.k->starts, 2));
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	free(c.k);
}

/* A child of the init's spec that fails its start: as smarm_sup_start */
static void root_child_fails(void *arg)
{
	struct init_case c = { .k = kid_new(1, KID_FAIL), .ready = 1 };
	smarm_pid_t sup;
	intptr_t why;
	(void)arg;
	HARNESS_EQ(start(&c, &sup, &why), -4242);
	HARNESS_EQ(why, 0);
	HARNESS_EQ(atomic_load(&c.k->starts), 1);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	free(c.k);
}

/* A child supervisor whose spec its init builds. */
static void run_init_body(void *arg)
{
	HARNESS_EQ(smarm_sup_run_init(init_fn, arg), 0); /* only on misuse */
}

/* Start a top supervisor over "mid", run_init_body(c). */
static int start_top(struct init_case *c, smarm_pid_t *top)
{
	smarm_sup_spec_t *sp = NULL;
	int rc;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "mid", run_init_body, c,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_INFINITY),
		   0);
	HARNESS_EQ(
		smarm_sup_spec_set_child_type(sp, "mid", SMARM_SUP_SUPERVISOR),
		0);
	*top = SMARM_PID_NONE;
	rc = smarm_sup_start(sp, top);
	smarm_sup_spec_free(sp);
	return rc;
}

/*
 * The same outcomes for a child supervisor with an init
 * (smarm_sup_run_init) in a tree: its parent's start sees them as the
 * child's start.
 */
static void root_run_init(void *arg)
{
	struct init_case ok = { .k = kid_new(1, KID_PARK) };
	struct init_case ign = { .ret = SMARM_SUP_INIT_IGNORE };
	struct init_case fail = { .ret = -4242 };
	struct init_case bad = { .ret = 42 };
	struct init_case spec = { .bad_setter = 1 };
	struct init_case crash = { .crash = 4711 };
	struct init_case linked = { .linked = 1, .k = kid_new(2, KID_PARK) };
	smarm_sup_child_t item;
	smarm_pid_t top;
	size_t n = 0;
	(void)arg;
	HARNESS_EQ(start_top(&ok, &top), 0);
	HARNESS_EQ(smarm_sup_which_children(top, &item, 1, &n, MS(5000)), 0);
	HARNESS_EQ(atomic_load(&ok.self), item.pid.id); /* init ran on mid */
	HARNESS_EQ(smarm_sup_which_children(item.pid, &item, 1, &n, MS(5000)),
		   0);
	HARNESS_EQ(strcmp(item.id, "k"), 0);
	HARNESS_CHECK(kid_await(&ok.k->starts, 1)); /* spawned, now it ran */
	HARNESS_CHECK(smarm_pid_eq(item.pid, kid_pid(ok.k)));
	HARNESS_EQ(exit_and_await(top, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);

	HARNESS_EQ(start_top(&ign, &top), 0);
	HARNESS_EQ(smarm_sup_which_children(top, &item, 1, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	HARNESS_CHECK(smarm_pid_eq(item.pid, SMARM_PID_NONE)); /* ignored */
	HARNESS_EQ(exit_and_await(top, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);

	HARNESS_EQ(start_top(&fail, &top), -4242);
	HARNESS_EQ(start_top(&bad, &top), SMARM_EBADRETURN);
	HARNESS_EQ(start_top(&spec, &top), SMARM_EBADSPEC);
	HARNESS_EQ(start_top(&crash, &top), SMARM_ESTARTFAILED);
	/* a child supervisor's init traps exits too */
	HARNESS_EQ(start_top(&linked, &top), 0);
	HARNESS_EQ(atomic_load(&linked.link_rc), 0);
	HARNESS_CHECK(kid_await(&linked.k->starts, 1));
	HARNESS_EQ(smarm_sup_which_children(top, &item, 1, &n, MS(5000)), 0);
	HARNESS_EQ(atomic_load(&linked.self), item.pid.id); /* mid, alive */
	HARNESS_EQ(smarm_sup_count_children(item.pid, NULL, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	HARNESS_EQ(exit_and_await(top, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(smarm_sup_run_init(NULL, NULL), SMARM_EINVAL);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	free(ok.k);
	free(linked.k);
}

static void root_errors(void *arg)
{
	smarm_pid_t sup;
	intptr_t why = 5;
	(void)arg;
	HARNESS_EQ(smarm_sup_start_init(NULL, NULL, &sup, &why), SMARM_EINVAL);
	HARNESS_EQ(why, 5);
}

#define CASE(name, root)                                                       \
	START_TEST(test_sup_init_##name)                                       \
	{                                                                      \
		harness_checks_reset();                                        \
		ck_assert_int_eq(harness_run(_i + 1, root, NULL), 0);          \
		harness_checks_assert();                                       \
	}                                                                      \
	END_TEST

CASE(sup_start_normal, root_normal)
CASE(sup_start_ignore_init, root_ignore_init)
CASE(sup_start_error_return, root_error_return)
CASE(sup_start_fail, root_fail)
CASE(child_start_fails_the_start, root_child_fails)
CASE(init_runs_trapping_exits, root_linked)
CASE(errors_return_einval, root_errors)
CASE(child_supervisor_with_init, root_run_init)

START_TEST(test_sup_init_outside_an_actor_returns_enotactor)
{
	smarm_pid_t sup;
	ck_assert_int_eq(smarm_sup_start_init(init_fn, NULL, &sup, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_sup_run_init(init_fn, NULL), SMARM_ENOTACTOR);
}
END_TEST

Suite *smarm_test_sup_init_suite(void)
{
	Suite *s = suite_create("sup_init");
	TCase *tc = tcase_create("start");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_sup_init_sup_start_normal, 0, 2);
	tcase_add_loop_test(tc, test_sup_init_sup_start_ignore_init, 0, 2);
	tcase_add_loop_test(tc, test_sup_init_sup_start_error_return, 0, 2);
	tcase_add_loop_test(tc, test_sup_init_sup_start_fail, 0, 2);
	tcase_add_loop_test(tc, test_sup_init_child_start_fails_the_start, 0,
			    2);
	tcase_add_loop_test(tc, test_sup_init_child_supervisor_with_init, 0, 2);
	tcase_add_loop_test(tc, test_sup_init_init_runs_trapping_exits, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_loop_test(tc, test_sup_init_errors_return_einval, 0, 1);
	tcase_add_test(tc, test_sup_init_outside_an_actor_returns_enotactor);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(sup_init)
