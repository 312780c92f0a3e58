/* SPDX-License-Identifier: MIT */
/*
 * test_sup_simple.c - SMARM_SUP_SIMPLE_ONE_FOR_ONE, OTP's
 * simple_one_for_one, with the cases of OTP's supervisor_SUITE under
 * their names:
 *   simple_one_for_one - instances of the template are restarted one
 *     for one, each with its own argument;
 *   simple_one_for_one_extra - start_child's argument reaches the
 *     instance's body, at its start and at its restarts; a template of
 *     two arguments (smarm_sup_spec_add_template) gets the template's
 *     and the instance's, OTP's A ++ ExtraArgs, and is no child of
 *     another strategy (SMARM_EBADSPEC);
 *   simple_one_for_one_escalation - instances crashing past the
 *     intensity take the supervisor down, SHUTDOWN with
 *     SMARM_EINTENSITY;
 *   child_adm_simple - which_children and count_children of instances;
 *     calls by id and calls that add a spec answer
 *     {error, simple_one_for_one} (SMARM_ESIMPLE); terminate by pid
 *     stops and forgets an instance;
 *   sup_start_ignore_permanent_child_start_child_simple,
 *   sup_start_ignore_temporary_child_start_child_simple - an instance
 *     that says ignore starts with no pid and is not kept;
 *   sup_start_map_faulty_specs (its simple part) - a simple_one_for_one
 *     spec without exactly one child is an invalid spec;
 *   hanging_restart_loop_simple - an instance whose restart never gets
 *     ready does not keep the supervisor from its shutdown;
 *   do_not_save_start_parameters_for_temporary_children - temporary
 *     instances are forgotten when they end;
 *   transient_normal, transient_shutdown (under simple_one_for_one) -
 *     a transient instance that ends normally or shuts down is not
 *     restarted and is forgotten (OTP erases it from its dynamics);
 *     one that crashes is restarted;
 *   simple_one_for_one_shutdown - the supervisor's end stops all its
 *     instances at once: each gets its shutdown before any other has
 *     ended, and they clean up in parallel;
 *   sup_stop_timeout_dynamic - instances that ignore the shutdown are
 *     killed when one shutdown time, counted for all, is over;
 *   sup_stop_brutal_kill_dynamic - brutal_kill instances are killed;
 *   sup_stop_non_shutdown_exit_dynamic - an exit signal of another
 *     kind from the parent stops the instances and ends the supervisor
 *     with that signal's how and reason;
 *   sup_start_child_returns_error_simple - an instance whose start
 *     fails: start_child returns the failure, nothing is recorded;
 *   simple_one_for_one_restart_ignore - an instance whose restart says
 *     ignore is forgotten, the supervisor goes on.
 */
#include "sup_kids.h"

/* A template's argument: which instance, how often it started. */
struct inst {
	int tag;
	_Atomic int starts;
	_Atomic uint64_t pid;
};

static void inst_body(void *arg)
{
	struct inst *in = arg;
	atomic_store(&in->pid, smarm_actor_self().id);
	atomic_fetch_add(&in->starts, 1);
	HARNESS_EQ(smarm_sup_ready_info(in->tag), 0);
	kid_park();
}

static void ignore_body(void *arg)
{
	(void)arg;
	smarm_sup_ignore();
}

static smarm_pid_t inst_pid(struct inst *in)
{
	smarm_pid_t p = { atomic_load(&in->pid) };
	return p;
}

/* A simple_one_for_one supervisor over fn (restart kind, ready). */
static smarm_pid_t start_simple(smarm_actor_cb fn, int restart,
				uint32_t max_restarts)
{
	smarm_sup_spec_t *sp = NULL;
	smarm_pid_t sup = SMARM_PID_NONE;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(
		smarm_sup_spec_set_strategy(sp, SMARM_SUP_SIMPLE_ONE_FOR_ONE),
		0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, max_restarts, MS(60000)),
		   0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "tmpl", fn, NULL, restart,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "tmpl", MS(10000)), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	return sup;
}

/* Poll until sup has `want` active instances (bounded). */
static bool await_active(smarm_pid_t sup, size_t want)
{
	uint64_t t0 = smarm_now_ns();
	size_t active = (size_t)-1;
	while (smarm_sup_count_children(sup, NULL, &active, MS(5000)) == 0 &&
	       active != want) {
		if (harness_since(t0) > MS(10000) * harness_time_scale())
			return false;
		smarm_actor_sleep(MS(1));
	}
	return active == want;
}

/* simple_one_for_one, simple_one_for_one_extra */
static void root_simple(void *arg)
{
	struct inst in[3] = { { .tag = 1 }, { .tag = 2 }, { .tag = 3 } };
	smarm_pid_t sup = start_simple(inst_body, SMARM_SUP_PERMANENT, 10);
	smarm_pid_t p[3], old;
	intptr_t info = 0;
	(void)arg;
	/* the template is no child: nothing started with the supervisor */
	HARNESS_CHECK(await_active(sup, 0));
	for (int i = 0; i < 3; i++) {
		HARNESS_EQ(smarm_sup_start_child_args(sup, &in[i], MS(10000),
						      &p[i], &info),
			   0);
		HARNESS_EQ(info, in[i].tag); /* its own argument */
		HARNESS_CHECK(smarm_pid_eq(p[i], inst_pid(&in[i])));
		HARNESS_EQ(atomic_load(&in[i].starts), 1);
	}
	/* one crashes: only it restarts, with its argument */
	old = p[1];
	HARNESS_EQ(exit_and_await(old, SMARM_EXIT_CRASHED, 1, NULL),
		   SMARM_EXIT_CRASHED);
	HARNESS_CHECK(kid_await(&in[1].starts, 2));
	HARNESS_CHECK(await_active(sup, 3));
	HARNESS_CHECK(!smarm_pid_eq(inst_pid(&in[1]), old));
	HARNESS_EQ(atomic_load(&in[0].starts), 1);
	HARNESS_EQ(atomic_load(&in[2].starts), 1);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

/* A two-argument template's argument: what its instances saw. */
struct tmpl {
	int base;
	_Atomic int starts;
	_Atomic int bad; /* an instance saw another template argument */
};

/* An instance of a two-argument template: its extra is its inst. */
static void tmpl_body(void *arg, void *extra)
{
	struct tmpl *t = arg;
	struct inst *in = extra;
	if (t == NULL || t->base != 1000 || in == NULL)
		atomic_fetch_add(&t->bad, 1);
	atomic_fetch_add(&t->starts, 1);
	atomic_store(&in->pid, smarm_actor_self().id);
	atomic_fetch_add(&in->starts, 1);
	HARNESS_EQ(smarm_sup_ready_info(t->base + in->tag), 0);
	kid_park();
}

static void plain_body(void *arg)
{
	(void)arg;
	kid_park();
}

/*
 * simple_one_for_one_extra, two arguments: each instance runs with the
 * template's argument and its own (OTP's apply(M, F, A ++ ExtraArgs)),
 * at its start and at its restart; a template is no child of another
 * strategy, nor of a dynamic child's spec.
 */
static void root_extra_template(void *arg)
{
	struct tmpl t = { .base = 1000 };
	struct inst in[3] = { { .tag = 1 }, { .tag = 2 }, { .tag = 3 } };
	smarm_sup_spec_t *sp = NULL;
	smarm_pid_t sup = SMARM_PID_NONE, p[3], old, other;
	intptr_t info = 0;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(
		smarm_sup_spec_set_strategy(sp, SMARM_SUP_SIMPLE_ONE_FOR_ONE),
		0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 10, MS(60000)), 0);
	HARNESS_EQ(smarm_sup_spec_add_template(sp, "tmpl", NULL, &t,
					       SMARM_SUP_PERMANENT, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_add_template(NULL, "tmpl", tmpl_body, &t,
					       SMARM_SUP_PERMANENT, 0),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_add_template(sp, "tmpl", tmpl_body, &t,
					       SMARM_SUP_PERMANENT,
					       SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "tmpl", MS(10000)), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	for (int i = 0; i < 3; i++) {
		HARNESS_EQ(smarm_sup_start_child_args(sup, &in[i], MS(10000),
						      &p[i], &info),
			   0);
		HARNESS_EQ(info, 1000 + in[i].tag); /* both arguments */
		HARNESS_CHECK(smarm_pid_eq(p[i], inst_pid(&in[i])));
	}
	HARNESS_EQ(atomic_load(&t.starts), 3);
	/* a restart runs with both again */
	old = p[2];
	HARNESS_EQ(exit_and_await(old, SMARM_EXIT_CRASHED, 1, NULL),
		   SMARM_EXIT_CRASHED);
	HARNESS_CHECK(kid_await(&in[2].starts, 2));
	HARNESS_CHECK(await_active(sup, 3));
	HARNESS_CHECK(!smarm_pid_eq(inst_pid(&in[2]), old));
	HARNESS_EQ(atomic_load(&t.starts), 4);
	HARNESS_EQ(atomic_load(&t.bad), 0);
	HARNESS_EQ(atomic_load(&in[0].starts), 1);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sp);

	/* a template under another strategy is an invalid spec */
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "a", plain_body, NULL,
					    SMARM_SUP_PERMANENT, 0),
		   0);
	HARNESS_EQ(smarm_sup_spec_add_template(sp, "t", tmpl_body, &t,
					       SMARM_SUP_PERMANENT, 0),
		   0);
	other = smarm_actor_self();
	HARNESS_EQ(smarm_sup_start(sp, &other), SMARM_EBADSPEC);
	HARNESS_CHECK(smarm_pid_eq(other, smarm_actor_self()));
	HARNESS_EQ(smarm_sup_run(sp), SMARM_EBADSPEC);
	smarm_sup_spec_free(sp);
	/* nor the child of a dynamic child's spec */
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "a", plain_body, NULL,
					    SMARM_SUP_PERMANENT, 0),
		   0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_add_template(sp, "t", tmpl_body, &t,
					       SMARM_SUP_PERMANENT, 0),
		   0);
	HARNESS_EQ(smarm_sup_start_child_spec(sup, sp, MS(5000), NULL, NULL),
		   SMARM_EBADSPEC);
	smarm_sup_spec_free(sp);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(atomic_load(&t.starts), 4); /* nothing more ran */
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

/* simple_one_for_one_escalation */
static void root_escalation(void *arg)
{
	struct inst in[2] = { { .tag = 1 }, { .tag = 2 } };
	smarm_pid_t sup = start_simple(inst_body, SMARM_SUP_PERMANENT, 1);
	smarm_chan_t *ch = sig_chan();
	smarm_signal_t s = { 0 };
	(void)arg;
	HARNESS_EQ(smarm_monitor(sup, ch, NULL), 0);
	for (int i = 0; i < 2; i++)
		HARNESS_EQ(smarm_sup_start_child_args(sup, &in[i], MS(10000),
						      NULL, NULL),
			   0);
	HARNESS_EQ(
		smarm_actor_send_exit(inst_pid(&in[0]), SMARM_EXIT_CRASHED, 1),
		0);
	HARNESS_CHECK(kid_await(&in[0].starts, 2));
	HARNESS_EQ(
		smarm_actor_send_exit(inst_pid(&in[1]), SMARM_EXIT_CRASHED, 1),
		0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(s.reason, SMARM_EINTENSITY);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	harness_chan_drop(ch);
}

/* child_adm_simple */
static void root_child_adm(void *arg)
{
	struct inst in[2] = { { .tag = 1 }, { .tag = 2 } };
	smarm_pid_t sup = start_simple(inst_body, SMARM_SUP_PERMANENT, 10);
	smarm_sup_child_info_t it[4];
	smarm_sup_child_t plain[4];
	smarm_sup_spec_t *one = NULL;
	smarm_pid_t p[2];
	size_t n = 0, specs = 0, active = 0, sups = 9, workers = 0;
	(void)arg;
	for (int i = 0; i < 2; i++)
		HARNESS_EQ(smarm_sup_start_child_args(sup, &in[i], MS(10000),
						      &p[i], NULL),
			   0);
	HARNESS_EQ(smarm_sup_count_children_ex(sup, &specs, &active, &sups,
					       &workers, MS(5000)),
		   0);
	HARNESS_EQ(specs, 1); /* the template */
	HARNESS_EQ(active, 2);
	HARNESS_EQ(sups, 0);
	HARNESS_EQ(workers, 2);
	HARNESS_EQ(smarm_sup_which_children_ex(sup, it, 4, &n, MS(5000)), 0);
	HARNESS_EQ(n, 2);
	for (int i = 0; i < 2; i++) {
		HARNESS_EQ(it[i].id[0], '\0'); /* OTP's undefined */
		HARNESS_CHECK(smarm_pid_eq(it[i].pid, p[i]));
		HARNESS_EQ(it[i].state, SMARM_SUP_CHILD_RUNNING);
		HARNESS_EQ(it[i].type, SMARM_SUP_WORKER);
	}
	HARNESS_EQ(smarm_sup_which_children(sup, plain, 4, &n, MS(5000)), 0);
	HARNESS_EQ(n, 2);
	HARNESS_CHECK(smarm_pid_eq(plain[1].pid, p[1]));
	/* calls by id, calls that add a spec: {error, simple_one_for_one} */
	HARNESS_EQ(smarm_sup_terminate_child(sup, "tmpl", MS(5000)),
		   SMARM_ESIMPLE);
	HARNESS_EQ(smarm_sup_restart_child(sup, "tmpl", MS(5000), NULL),
		   SMARM_ESIMPLE);
	HARNESS_EQ(smarm_sup_delete_child(sup, "tmpl", MS(5000)),
		   SMARM_ESIMPLE);
	HARNESS_EQ(smarm_sup_start_child(sup, "x", inst_body, &in[0],
					 SMARM_SUP_PERMANENT, 0, MS(5000),
					 NULL),
		   SMARM_ESIMPLE);
	HARNESS_EQ(smarm_sup_spec_alloc(&one), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(one, "y", inst_body, &in[0],
					    SMARM_SUP_PERMANENT, 0),
		   0);
	HARNESS_EQ(smarm_sup_start_child_spec(sup, one, MS(5000), NULL, NULL),
		   SMARM_ESIMPLE);
	/* terminate by pid: stopped and forgotten */
	HARNESS_EQ(smarm_sup_terminate_child_pid(sup, p[0], MS(5000)), 0);
	HARNESS_CHECK(!smarm_actor_is_alive(p[0]));
	HARNESS_EQ(smarm_sup_terminate_child_pid(sup, p[0], MS(5000)),
		   SMARM_ENOENT);
	HARNESS_EQ(smarm_sup_terminate_child_pid(sup, SMARM_PID_NONE, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_count_children_ex(sup, &specs, &active, NULL,
					       &workers, MS(5000)),
		   0);
	HARNESS_EQ(specs, 1);
	HARNESS_EQ(active, 1);
	HARNESS_EQ(workers, 1);
	HARNESS_EQ(smarm_sup_which_children_ex(sup, it, 4, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	HARNESS_CHECK(smarm_pid_eq(it[0].pid, p[1]));
	HARNESS_EQ(atomic_load(&in[0].starts), 1); /* not restarted */
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(one);
}

/*
 * terminate_child by pid works under the other strategies too: the
 * child is stopped and kept, as terminate by id leaves it; a simple
 * call (start_child_args) does not fit them.
 */
static void root_terminate_pid_static(void *arg)
{
	struct kid *k = kid_new(1, KID_PARK);
	smarm_sup_spec_t *sp = NULL;
	smarm_sup_child_t c;
	smarm_pid_t sup;
	size_t n = 0;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	kid_add(sp, "k", k);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	HARNESS_CHECK(kid_await(&k->starts, 1));
	HARNESS_EQ(smarm_sup_start_child_args(sup, k, MS(5000), NULL, NULL),
		   SMARM_ESIMPLE);
	HARNESS_EQ(smarm_sup_terminate_child_pid(sup, kid_pid(k), MS(5000)), 0);
	HARNESS_EQ(smarm_sup_which_children(sup, &c, 1, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	HARNESS_CHECK(smarm_pid_eq(c.pid, SMARM_PID_NONE));
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sp);
	free(k);
}

/* sup_start_ignore_{permanent,temporary}_child_start_child_simple */
static void root_ignore(void *arg)
{
	int kinds[2] = { SMARM_SUP_PERMANENT, SMARM_SUP_TEMPORARY };
	(void)arg;
	for (int r = 0; r < 2; r++) {
		smarm_pid_t sup = start_simple(ignore_body, kinds[r], 10);
		smarm_pid_t pid = smarm_actor_self();
		size_t n = 9;
		HARNESS_EQ(smarm_sup_start_child_args(sup, NULL, MS(10000),
						      &pid, NULL),
			   0);
		HARNESS_CHECK(smarm_pid_eq(pid, SMARM_PID_NONE));
		HARNESS_EQ(
			smarm_sup_which_children_ex(sup, NULL, 0, &n, MS(5000)),
			0);
		HARNESS_EQ(n, 0); /* not kept */
		HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
			   SMARM_EXIT_SHUTDOWN);
	}
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

/* A simple_one_for_one spec of n templates. */
static smarm_sup_spec_t *simple_of(int n)
{
	static const char *ids[] = { "a", "b" };
	smarm_sup_spec_t *sp = NULL;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(
		smarm_sup_spec_set_strategy(sp, SMARM_SUP_SIMPLE_ONE_FOR_ONE),
		0);
	for (int i = 0; i < n; i++)
		HARNESS_EQ(smarm_sup_spec_add_child(sp, ids[i], inst_body, NULL,
						    SMARM_SUP_PERMANENT, 0),
			   0);
	return sp;
}

static int simple_init(void *arg, smarm_sup_spec_t *spec)
{
	int n = (int)(intptr_t)arg;
	HARNESS_EQ(
		smarm_sup_spec_set_strategy(spec, SMARM_SUP_SIMPLE_ONE_FOR_ONE),
		0);
	if (n > 0)
		HARNESS_EQ(smarm_sup_spec_add_child(spec, "a", inst_body, NULL,
						    SMARM_SUP_PERMANENT, 0),
			   0);
	if (n > 1)
		HARNESS_EQ(smarm_sup_spec_add_child(spec, "b", inst_body, NULL,
						    SMARM_SUP_PERMANENT, 0),
			   0);
	return 0;
}

/* sup_start_map_faulty_specs: no template, or two */
static void root_faulty(void *arg)
{
	smarm_pid_t sup = SMARM_PID_NONE;
	intptr_t why = 0;
	(void)arg;
	for (int n = 0; n <= 2; n += 2) {
		smarm_sup_spec_t *sp = simple_of(n);
		HARNESS_EQ(smarm_sup_start(sp, &sup), SMARM_EBADSPEC);
		HARNESS_EQ(smarm_sup_run(sp), SMARM_EBADSPEC);
		HARNESS_EQ(smarm_sup_start_init(simple_init,
						(void *)(intptr_t)n, &sup,
						&why),
			   SMARM_EBADSPEC);
		HARNESS_EQ(why, SMARM_EBADSPEC);
		smarm_sup_spec_free(sp);
	}
	HARNESS_EQ(smarm_sup_start_init(simple_init, (void *)(intptr_t)1, &sup,
					&why),
		   0);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_EQ(smarm_sup_spec_set_strategy(NULL, 3), SMARM_EINVAL);
}

/* A simple_one_for_one over kid_body, each instance's arg a kid. */
static smarm_pid_t start_simple_kids(int restart, uint64_t ready_ns)
{
	smarm_sup_spec_t *sp = NULL;
	smarm_pid_t sup = SMARM_PID_NONE;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(
		smarm_sup_spec_set_strategy(sp, SMARM_SUP_SIMPLE_ONE_FOR_ONE),
		0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 100, MS(60000)), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "t", kid_body, NULL, restart,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	if (ready_ns != 0)
		HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "t", ready_ns),
			   0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	return sup;
}

/*
 * hanging_restart_loop_simple: an instance whose restart never reports
 * ready does not keep the supervisor from ending on its parent's
 * shutdown.
 */
static void root_hanging_simple(void *arg)
{
	struct kid *h = kid_new(1, KID_HANG_ON_RESTART);
	smarm_pid_t sup =
		start_simple_kids(SMARM_SUP_PERMANENT, SMARM_NO_TIMEOUT);
	(void)arg;
	HARNESS_EQ(smarm_sup_start_child_args(sup, h, MS(10000), NULL, NULL),
		   0);
	HARNESS_EQ(smarm_actor_send_exit(kid_pid(h), SMARM_EXIT_CRASHED, 1), 0);
	HARNESS_CHECK(kid_await(&h->starts, 2)); /* the restart hangs */
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(atomic_load(&h->starts), 2);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	free(h);
}

/*
 * do_not_save_start_parameters_for_temporary_children: temporary
 * instances that end, however they end, are forgotten with their
 * argument; terminate_child by pid forgets one too.
 */
static void root_temporary(void *arg)
{
	struct kid *k[3] = { kid_new(1, KID_PARK), kid_new(2, KID_PARK),
			     kid_new(3, KID_PARK) };
	smarm_pid_t sup = start_simple_kids(SMARM_SUP_TEMPORARY, 0);
	size_t specs = 0, workers = 9, n = 9;
	(void)arg;
	for (int i = 0; i < 3; i++) {
		HARNESS_EQ(smarm_sup_start_child_args(sup, k[i], MS(10000),
						      NULL, NULL),
			   0);
		HARNESS_CHECK(kid_await(&k[i]->starts, 1));
	}
	HARNESS_EQ(exit_and_await(kid_pid(k[0]), SMARM_EXIT_CRASHED, 1, NULL),
		   SMARM_EXIT_CRASHED);
	HARNESS_EQ(exit_and_await(kid_pid(k[1]), SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(smarm_sup_terminate_child_pid(sup, kid_pid(k[2]), MS(5000)),
		   0);
	for (int i = 0; i < 10000 && workers != 0; i++) {
		HARNESS_EQ(smarm_sup_count_children_ex(sup, &specs, NULL, NULL,
						       &workers, MS(5000)),
			   0);
		smarm_actor_sleep(MS(1));
	}
	HARNESS_EQ(specs, 1);
	HARNESS_EQ(workers, 0);
	HARNESS_EQ(smarm_sup_which_children_ex(sup, NULL, 0, &n, MS(5000)), 0);
	HARNESS_EQ(n, 0);
	for (int i = 0; i < 3; i++)
		HARNESS_EQ(atomic_load(&k[i]->starts), 1); /* none restarted */
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	for (int i = 0; i < 3; i++)
		free(k[i]);
}

/*
 * transient_normal, transient_shutdown, transient_abnormal under
 * simple_one_for_one: an instance not restarted is not kept (OTP's
 * del_child of a dynamic child erases it), one that crashes is.
 */
static void root_transient(void *arg)
{
	struct kid *k[3] = { kid_new(1, KID_NORMAL_ONCE), kid_new(2, KID_PARK),
			     kid_new(3, KID_PARK) };
	smarm_pid_t sup = start_simple_kids(SMARM_SUP_TRANSIENT, 0);
	smarm_sup_child_info_t it[3];
	size_t n = 9, specs = 0, active = 9, workers = 9;
	(void)arg;
	for (int i = 0; i < 3; i++)
		HARNESS_EQ(smarm_sup_start_child_args(sup, k[i], MS(10000),
						      NULL, NULL),
			   0);
	HARNESS_CHECK(kid_await(&k[1]->starts, 1));
	HARNESS_CHECK(kid_await(&k[2]->starts, 1));
	HARNESS_EQ(exit_and_await(kid_pid(k[1]), SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(exit_and_await(kid_pid(k[2]), SMARM_EXIT_CRASHED, 1, NULL),
		   SMARM_EXIT_CRASHED);
	HARNESS_CHECK(kid_await(&k[2]->starts, 2)); /* restarted */
	/* the two that ended on their own terms are gone from the table */
	for (int i = 0; i < 10000 && workers != 1; i++) {
		HARNESS_EQ(smarm_sup_count_children_ex(sup, &specs, &active,
						       NULL, &workers,
						       MS(5000)),
			   0);
		if (workers != 1)
			smarm_actor_sleep(MS(1));
	}
	HARNESS_EQ(specs, 1);
	HARNESS_EQ(workers, 1);
	HARNESS_EQ(active, 1);
	HARNESS_EQ(smarm_sup_which_children_ex(sup, it, 3, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	HARNESS_CHECK(smarm_pid_eq(it[0].pid, kid_pid(k[2])));
	HARNESS_EQ(atomic_load(&k[0]->starts), 1);
	HARNESS_EQ(atomic_load(&k[1]->starts), 1);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	for (int i = 0; i < 3; i++)
		free(k[i]);
}

/* simple_one_for_one_shutdown: what the instances saw of the end. */
#define SHUT_N 20
struct shut {
	_Atomic int started; /* instances set up (trapping) */
	_Atomic int seen;    /* instances that got the shutdown */
	_Atomic int all;     /* ... and saw all SHUT_N get it first */
};

/*
 * An instance that traps exits; on the shutdown it waits until every
 * instance has it (bounded: 1 s, scaled), then cleans up for 200 ms.
 * Stopped one at a time, the first would wait alone until its bound.
 */
static void shut_body(void *arg)
{
	struct shut *sh = arg;
	smarm_chan_t *ch = kid_trap();
	smarm_signal_t s;
	uint64_t end;
	atomic_fetch_add(&sh->started, 1);
	HARNESS_EQ(smarm_sup_ready(), 0);
	if (smarm_chan_recv(ch, &s) != 0 || s.how != SMARM_EXIT_SHUTDOWN)
		return;
	atomic_fetch_add(&sh->seen, 1);
	end = smarm_now_ns() + (uint64_t)(1e9 * harness_time_scale());
	while (atomic_load(&sh->seen) < SHUT_N && smarm_now_ns() < end)
		smarm_actor_sleep(MS(1));
	if (atomic_load(&sh->seen) == SHUT_N)
		atomic_fetch_add(&sh->all, 1);
	smarm_actor_sleep(MS(200)); /* its terminate's cleanup */
}

/*
 * simple_one_for_one_shutdown: 20 instances whose cleanup takes 200 ms
 * each end in far less than 20 * 200 ms, every one having seen all
 * the others get their shutdown before it ended (OTP's
 * terminate_dynamic_children: shut all down, then wait for all).
 */
static void root_simple_shutdown(void *arg)
{
	struct shut sh = { 0 };
	smarm_pid_t sup = start_simple(shut_body, SMARM_SUP_PERMANENT, 10);
	uint64_t t0, took;
	(void)arg;
	for (int i = 0; i < SHUT_N; i++)
		HARNESS_EQ(smarm_sup_start_child_args(sup, &sh, MS(10000), NULL,
						      NULL),
			   0);
	HARNESS_EQ(atomic_load(&sh.started), SHUT_N);
	t0 = smarm_now_ns();
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	took = harness_since(t0);
	HARNESS_EQ(atomic_load(&sh.seen), SHUT_N);
	HARNESS_EQ(atomic_load(&sh.all), SHUT_N);
	/* one at a time would take 20 * 200 ms at least; at once, about
	 * 200 ms: a bound between the two that a loaded machine meets */
	HARNESS_CHECK(took < MS(3000));
	HARNESS_CHECK(took >= MS(200));
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

/* A simple_one_for_one over kid_body, of that shutdown policy. */
static smarm_pid_t start_simple_shutdown(uint64_t shutdown_ns)
{
	smarm_sup_spec_t *sp = NULL;
	smarm_pid_t sup = SMARM_PID_NONE;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(
		smarm_sup_spec_set_strategy(sp, SMARM_SUP_SIMPLE_ONE_FOR_ONE),
		0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "t", kid_body, NULL,
					    SMARM_SUP_PERMANENT, shutdown_ns),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, "t", MS(10000)), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	return sup;
}

#define STOP_N 5

/*
 * sup_stop_timeout_dynamic: instances that ignore the shutdown are
 * killed once the template's shutdown time (1 s) is over, counted for
 * all of them at once: when the first is killed every one has its
 * shutdown, and all are gone in about 1 s, not 5 * 1 s.
 * sup_stop_brutal_kill_dynamic: brutal_kill instances are killed,
 * never sent a trappable shutdown.
 */
static void root_stop_dynamic(void *arg)
{
	struct kid *k[STOP_N];
	smarm_chan_t *ch = sig_chan();
	smarm_signal_t s = { 0 };
	smarm_pid_t sup = start_simple_shutdown(MS(1000));
	uint64_t t0, took;
	(void)arg;
	for (int i = 0; i < STOP_N; i++) {
		k[i] = kid_new(i, KID_TRAP_READY_IGNORE);
		HARNESS_EQ(smarm_sup_start_child_args(sup, k[i], MS(10000),
						      NULL, NULL),
			   0);
		HARNESS_EQ(smarm_monitor(kid_pid(k[i]), ch, NULL), 0);
	}
	t0 = smarm_now_ns();
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	for (int i = 0; i < STOP_N; i++) {
		HARNESS_EQ(smarm_chan_recv_timeout(ch, &s, MS(20000)), 0);
		HARNESS_EQ(s.how, SMARM_EXIT_STOPPED); /* killed */
		if (i == 0) /* the first killed: all had their shutdown */
			for (int j = 0; j < STOP_N; j++)
				HARNESS_EQ(atomic_load(&k[j]->saw_exit), 1);
	}
	took = harness_since(t0);
	HARNESS_CHECK(took < MS(4000)); /* one at a time: 5 s at least */
	HARNESS_CHECK(took >= MS(900));
	for (int i = 0; i < STOP_N; i++)
		free(k[i]);

	/* brutal_kill: killed at once, no shutdown message seen */
	sup = start_simple_shutdown(SMARM_SUP_BRUTAL_KILL);
	for (int i = 0; i < STOP_N; i++) {
		k[i] = kid_new(i, KID_TRAP_READY);
		HARNESS_EQ(smarm_sup_start_child_args(sup, k[i], MS(10000),
						      NULL, NULL),
			   0);
		HARNESS_EQ(smarm_monitor(kid_pid(k[i]), ch, NULL), 0);
	}
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	for (int i = 0; i < STOP_N; i++) {
		HARNESS_EQ(smarm_chan_recv_timeout(ch, &s, MS(20000)), 0);
		HARNESS_EQ(s.how, SMARM_EXIT_STOPPED);
	}
	for (int i = 0; i < STOP_N; i++) {
		HARNESS_EQ(atomic_load(&k[i]->saw_exit), 0);
		free(k[i]);
	}
	harness_chan_drop(ch);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

/* sup_stop_non_shutdown_exit_dynamic */
static void root_non_shutdown_exit(void *arg)
{
	struct kid *k[3] = { kid_new(1, KID_TRAP_READY),
			     kid_new(2, KID_TRAP_READY),
			     kid_new(3, KID_TRAP_READY) };
	smarm_pid_t sup = start_simple_kids(SMARM_SUP_PERMANENT, MS(10000));
	smarm_pid_t p[3];
	intptr_t reason = 0;
	(void)arg;
	for (int i = 0; i < 3; i++)
		HARNESS_EQ(smarm_sup_start_child_args(sup, k[i], MS(10000),
						      &p[i], NULL),
			   0);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_CRASHED, 77, &reason),
		   SMARM_EXIT_CRASHED);
	HARNESS_EQ(reason, 77);
	for (int i = 0; i < 3; i++) {
		HARNESS_CHECK(!smarm_actor_is_alive(p[i]));
		HARNESS_EQ(atomic_load(&k[i]->saw_exit), 1); /* a shutdown */
	}
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	for (int i = 0; i < 3; i++)
		free(k[i]);
}

/* sup_start_child_returns_error_simple */
static void root_start_error_simple(void *arg)
{
	struct kid *k = kid_new(1, KID_FAIL);
	smarm_pid_t sup = start_simple_kids(SMARM_SUP_PERMANENT, MS(10000));
	smarm_pid_t pid = smarm_actor_self();
	size_t specs = 0, workers = 9, n = 9;
	(void)arg;
	HARNESS_EQ(smarm_sup_start_child_args(sup, k, MS(10000), &pid, NULL),
		   -4242);
	HARNESS_CHECK(smarm_pid_eq(pid, smarm_actor_self())); /* untouched */
	HARNESS_EQ(smarm_sup_count_children_ex(sup, &specs, NULL, NULL,
					       &workers, MS(5000)),
		   0);
	HARNESS_EQ(specs, 1);
	HARNESS_EQ(workers, 0);
	HARNESS_EQ(smarm_sup_which_children_ex(sup, NULL, 0, &n, MS(5000)), 0);
	HARNESS_EQ(n, 0);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	free(k);
}

/* An instance that says ignore at its restarts. */
static void ignore_again_body(void *arg)
{
	struct inst *in = arg;
	int n = atomic_fetch_add(&in->starts, 1) + 1;
	atomic_store(&in->pid, smarm_actor_self().id);
	if (n > 1)
		smarm_sup_ignore();
	HARNESS_EQ(smarm_sup_ready(), 0);
	kid_park();
}

/* simple_one_for_one_restart_ignore */
static void root_restart_ignore(void *arg)
{
	struct inst in[2] = { { .tag = 1 }, { .tag = 2 } };
	smarm_pid_t sup =
		start_simple(ignore_again_body, SMARM_SUP_PERMANENT, 10);
	smarm_sup_child_info_t it[2];
	size_t n = 9;
	(void)arg;
	for (int i = 0; i < 2; i++)
		HARNESS_EQ(smarm_sup_start_child_args(sup, &in[i], MS(10000),
						      NULL, NULL),
			   0);
	HARNESS_EQ(
		exit_and_await(inst_pid(&in[0]), SMARM_EXIT_CRASHED, 1, NULL),
		SMARM_EXIT_CRASHED);
	HARNESS_CHECK(kid_await(&in[0].starts, 2)); /* it said ignore */
	HARNESS_CHECK(await_active(sup, 1));
	HARNESS_EQ(smarm_sup_which_children_ex(sup, it, 2, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1); /* forgotten */
	HARNESS_CHECK(smarm_pid_eq(it[0].pid, inst_pid(&in[1])));
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

#define CASE(name, root)                                                       \
	START_TEST(test_sup_simple_##name)                                     \
	{                                                                      \
		harness_checks_reset();                                        \
		ck_assert_int_eq(harness_run(_i + 1, root, NULL), 0);          \
		harness_checks_assert();                                       \
	}                                                                      \
	END_TEST

CASE(simple_one_for_one, root_simple)
CASE(simple_one_for_one_extra_template, root_extra_template)
CASE(simple_one_for_one_escalation, root_escalation)
CASE(child_adm_simple, root_child_adm)
CASE(terminate_child_by_pid_other_strategies, root_terminate_pid_static)
CASE(sup_start_ignore_child_start_child_simple, root_ignore)
CASE(sup_start_map_faulty_specs, root_faulty)
CASE(hanging_restart_loop_simple, root_hanging_simple)
CASE(do_not_save_start_parameters_for_temporary_children, root_temporary)
CASE(simple_one_for_one_transient, root_transient)
CASE(sup_stop_non_shutdown_exit_dynamic, root_non_shutdown_exit)
CASE(sup_start_child_returns_error_simple, root_start_error_simple)
CASE(simple_one_for_one_restart_ignore, root_restart_ignore)
CASE(simple_one_for_one_shutdown, root_simple_shutdown)
CASE(sup_stop_timeout_brutal_kill_dynamic, root_stop_dynamic)

/* loop values: workers - 1, so 0..1 and 3 run 1, 2 and 4 workers */
static void add_123(TCase *tc, const TTest *t)
{
	tcase_add_loop_test(tc, t, 0, 2);
	tcase_add_loop_test(tc, t, 3, 4);
}

Suite *smarm_test_sup_simple_suite(void)
{
	Suite *s = suite_create("sup_simple");
	TCase *tc = tcase_create("simple");
	tcase_set_timeout(tc, 60);
	add_123(tc, test_sup_simple_simple_one_for_one);
	add_123(tc, test_sup_simple_simple_one_for_one_extra_template);
	add_123(tc, test_sup_simple_simple_one_for_one_escalation);
	add_123(tc, test_sup_simple_child_adm_simple);
	add_123(tc, test_sup_simple_terminate_child_by_pid_other_strategies);
	add_123(tc, test_sup_simple_sup_start_ignore_child_start_child_simple);
	add_123(tc, test_sup_simple_sup_start_map_faulty_specs);
	add_123(tc, test_sup_simple_hanging_restart_loop_simple);
	add_123(tc,
		test_sup_simple_do_not_save_start_parameters_for_temporary_children);
	add_123(tc, test_sup_simple_simple_one_for_one_transient);
	add_123(tc, test_sup_simple_sup_start_child_returns_error_simple);
	add_123(tc, test_sup_simple_simple_one_for_one_restart_ignore);
	suite_add_tcase(s, tc);
	tc = tcase_create("shutdown");
	tcase_set_timeout(tc, 120);
	add_123(tc, test_sup_simple_simple_one_for_one_shutdown);
	add_123(tc, test_sup_simple_sup_stop_timeout_brutal_kill_dynamic);
	add_123(tc, test_sup_simple_sup_stop_non_shutdown_exit_dynamic);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(sup_simple)
