/* SPDX-License-Identifier: MIT */
/*
 * test_sup_significant.c - significant children and the automatic
 * shutdown of their supervisor (smarm_sup_spec_set_child_significant,
 * smarm_sup_spec_set_auto_shutdown; OTP 24's significant and
 * auto_shutdown), with the cases of OTP's supervisor_SUITE group
 * `significant` under their names:
 *   nonsignificant_temporary, nonsignificant_transient - a child that
 *     is not significant ends: the supervisor goes on, whatever its
 *     auto_shutdown;
 *   significant_temporary - any_significant: a significant temporary
 *     child's end (normal or a crash) shuts the supervisor down, its
 *     other children with it; all_significant: only the last one's;
 *     terminate_child of one triggers nothing;
 *   significant_transient - a significant transient child that crashes
 *     is restarted; one that ends normally or shuts down ends its
 *     supervisor (all_significant: the last one);
 *   significant_simple - the instances of a significant template of a
 *     simple_one_for_one supervisor: any one, or the last one;
 *   significant_bystander - a significant child stopped by its
 *     supervisor as a bystander of a sibling's restart triggers
 *     nothing;
 *   significant_escalation - a significant child supervisor that shuts
 *     itself down shuts its parent down too, up the tree;
 * and the spec checks of child_specs and sup_flags for them (OTP's
 * bad_combination: SMARM_EBADSPEC), and which_children's report of
 * each child's significance (smarm_sup_which_children_sized).
 * significant_upgrade_* are not ported: libsmarm has no code change of a
 * running supervisor.
 */
#include "sup_kids.h"

/* A spec of strategy and auto shutdown, intensity 10 in 60 s. */
static smarm_sup_spec_t *spec_new(int strategy, int autos)
{
	smarm_sup_spec_t *sp = NULL;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_set_strategy(sp, strategy), 0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(sp, 10, MS(60000)), 0);
	HARNESS_EQ(smarm_sup_spec_set_auto_shutdown(sp, autos), 0);
	return sp;
}

/* Add child id, body kid k, of restart kind restart, significant. */
static void add(smarm_sup_spec_t *sp, const char *id, struct kid *k,
		int restart, bool significant)
{
	HARNESS_EQ(smarm_sup_spec_add_child(sp, id, kid_body, k, restart,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, id, significant),
		   0);
}

/* Start sp (freed), monitored into *ch (a new channel). */
static smarm_pid_t start_watched(smarm_sup_spec_t *sp, smarm_chan_t **ch)
{
	smarm_pid_t sup = SMARM_PID_NONE;
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	*ch = sig_chan();
	HARNESS_EQ(smarm_monitor(sup, *ch, NULL), 0);
	return sup;
}

/* Poll until sup has `want` running children (bounded). */
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

/* The supervisor watched in ch shut itself down (OTP's shutdown). */
static void await_auto_shutdown(smarm_chan_t *ch)
{
	smarm_signal_t s = { 0 };
	HARNESS_EQ(smarm_chan_recv_timeout(ch, &s,
					   MS(10000) * harness_time_scale()),
		   0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(s.reason, 0);
	harness_chan_drop(ch);
}

/* sup is still there: it answers, and nothing came into ch. */
static void still_running(smarm_pid_t sup, smarm_chan_t *ch)
{
	size_t n = 9;
	HARNESS_EQ(smarm_sup_count_children(sup, &n, NULL, MS(5000)), 0);
	HARNESS_EQ(harness_chan_len(ch), 0);
}

/* Shut sup down (from its parent, the caller) and drop ch. */
static void shut(smarm_pid_t sup, smarm_chan_t *ch)
{
	smarm_signal_t s = { 0 };
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
	harness_chan_drop(ch);
}

static void free_kids(struct kid **k, int n)
{
	for (int i = 0; i < n; i++)
		free(k[i]);
}

/*
 * nonsignificant_temporary, nonsignificant_transient: under either
 * automatic shutdown, a child that is not significant ends (normally,
 * and, transient, crashed and restarted) and the supervisor goes on.
 */
static void root_nonsignificant(void *arg)
{
	int autos[2] = { SMARM_SUP_AUTO_ANY_SIGNIFICANT,
			 SMARM_SUP_AUTO_ALL_SIGNIFICANT };
	int kinds[2] = { SMARM_SUP_TEMPORARY, SMARM_SUP_TRANSIENT };
	(void)arg;
	for (int a = 0; a < 2; a++)
		for (int r = 0; r < 2; r++) {
			struct kid *k[2] = { kid_new(1, KID_END_ON_GATE),
					     kid_new(2, KID_PARK) };
			smarm_sup_spec_t *sp =
				spec_new(SMARM_SUP_ONE_FOR_ONE, autos[a]);
			smarm_chan_t *ch;
			smarm_pid_t sup;
			add(sp, "n", k[0], kinds[r], false);
			add(sp, "s", k[1], SMARM_SUP_TEMPORARY, true);
			sup = start_watched(sp, &ch);
			HARNESS_CHECK(kid_await(&k[0]->starts, 1));
			if (kinds[r] == SMARM_SUP_TRANSIENT) {
				HARNESS_EQ(exit_and_await(kid_pid(k[0]),
							  SMARM_EXIT_CRASHED, 1,
							  NULL),
					   SMARM_EXIT_CRASHED);
				HARNESS_CHECK(kid_await(&k[0]->starts, 2));
			}
			atomic_store(&k[0]->gate, 1);
			HARNESS_CHECK(await_active(sup, 1));
			still_running(sup, ch);
			shut(sup, ch);
			free_kids(k, 2);
		}
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

/*
 * significant_temporary: any_significant, a significant temporary
 * child that ends normally, or crashes, shuts the supervisor down
 * (its permanent sibling stopped with it); terminate_child of one does
 * not. all_significant: the first of two ends, the supervisor goes
 * on; the second ends, it shuts down.
 */
static void root_temporary(void *arg)
{
	(void)arg;
	for (int crash = 0; crash < 2; crash++) {
		struct kid *k[2] = { kid_new(1, KID_PARK),
				     kid_new(2, KID_END_ON_GATE) };
		smarm_sup_spec_t *sp = spec_new(SMARM_SUP_ONE_FOR_ONE,
						SMARM_SUP_AUTO_ANY_SIGNIFICANT);
		smarm_chan_t *ch;
		smarm_pid_t by;
		add(sp, "b", k[0], SMARM_SUP_PERMANENT, false);
		add(sp, "s", k[1], SMARM_SUP_TEMPORARY, true);
		(void)start_watched(sp, &ch);
		HARNESS_CHECK(kid_await(&k[0]->starts, 1)); /* pid known */
		HARNESS_CHECK(kid_await(&k[1]->starts, 1));
		by = kid_pid(k[0]);
		if (crash)
			HARNESS_EQ(smarm_actor_send_exit(kid_pid(k[1]),
							 SMARM_EXIT_CRASHED, 1),
				   0);
		else
			atomic_store(&k[1]->gate, 1);
		await_auto_shutdown(ch);
		HARNESS_CHECK(!smarm_actor_is_alive(by));
		HARNESS_EQ(atomic_load(&k[0]->starts), 1);
		free_kids(k, 2);
	}
	{ /* terminate_child: the supervisor's own doing, no trigger */
		struct kid *k = kid_new(1, KID_PARK);
		smarm_sup_spec_t *sp = spec_new(SMARM_SUP_ONE_FOR_ONE,
						SMARM_SUP_AUTO_ANY_SIGNIFICANT);
		smarm_chan_t *ch;
		smarm_pid_t sup;
		add(sp, "s", k, SMARM_SUP_TEMPORARY, true);
		sup = start_watched(sp, &ch);
		HARNESS_EQ(smarm_sup_terminate_child(sup, "s", MS(5000)), 0);
		still_running(sup, ch);
		shut(sup, ch);
		free(k);
	}
	{ /* all_significant: the last one */
		struct kid *k[2] = { kid_new(1, KID_END_ON_GATE),
				     kid_new(2, KID_END_ON_GATE) };
		smarm_sup_spec_t *sp = spec_new(SMARM_SUP_ONE_FOR_ONE,
						SMARM_SUP_AUTO_ALL_SIGNIFICANT);
		smarm_chan_t *ch;
		smarm_pid_t sup;
		add(sp, "s1", k[0], SMARM_SUP_TEMPORARY, true);
		add(sp, "s2", k[1], SMARM_SUP_TEMPORARY, true);
		sup = start_watched(sp, &ch);
		atomic_store(&k[0]->gate, 1);
		HARNESS_CHECK(await_active(sup, 1));
		still_running(sup, ch);
		atomic_store(&k[1]->gate, 1);
		await_auto_shutdown(ch);
		free_kids(k, 2);
	}
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

/*
 * significant_transient: a significant transient child that crashes
 * is restarted and the supervisor goes on; its normal end, or its
 * shutdown, ends the supervisor. all_significant: the first of two
 * ends normally, the second crashes and is restarted: the supervisor
 * goes on until the second ends normally too.
 */
static void root_transient(void *arg)
{
	(void)arg;
	for (int how = 0; how < 2; how++) {
		struct kid *k = kid_new(1, KID_END_ON_GATE);
		smarm_sup_spec_t *sp = spec_new(SMARM_SUP_ONE_FOR_ONE,
						SMARM_SUP_AUTO_ANY_SIGNIFICANT);
		smarm_chan_t *ch;
		smarm_pid_t sup;
		add(sp, "s", k, SMARM_SUP_TRANSIENT, true);
		sup = start_watched(sp, &ch);
		HARNESS_CHECK(kid_await(&k->starts, 1));
		HARNESS_EQ(
			exit_and_await(kid_pid(k), SMARM_EXIT_CRASHED, 1, NULL),
			SMARM_EXIT_CRASHED);
		HARNESS_CHECK(kid_await(&k->starts, 2)); /* restarted */
		HARNESS_CHECK(await_active(sup, 1));
		still_running(sup, ch);
		if (how == 0)
			atomic_store(&k->gate, 1); /* a normal end */
		else
			HARNESS_EQ(smarm_actor_send_exit(
					   kid_pid(k), SMARM_EXIT_SHUTDOWN, 0),
				   0);
		await_auto_shutdown(ch);
		HARNESS_EQ(atomic_load(&k->starts), 2);
		free(k);
	}
	{
		struct kid *k[2] = { kid_new(1, KID_END_ON_GATE),
				     kid_new(2, KID_END_ON_GATE) };
		smarm_sup_spec_t *sp = spec_new(SMARM_SUP_ONE_FOR_ONE,
						SMARM_SUP_AUTO_ALL_SIGNIFICANT);
		smarm_chan_t *ch;
		smarm_pid_t sup;
		add(sp, "s1", k[0], SMARM_SUP_TRANSIENT, true);
		add(sp, "s2", k[1], SMARM_SUP_TRANSIENT, true);
		sup = start_watched(sp, &ch);
		HARNESS_CHECK(kid_await(&k[1]->starts, 1));
		atomic_store(&k[0]->gate, 1);
		HARNESS_CHECK(await_active(sup, 1));
		HARNESS_EQ(exit_and_await(kid_pid(k[1]), SMARM_EXIT_CRASHED, 1,
					  NULL),
			   SMARM_EXIT_CRASHED);
		HARNESS_CHECK(kid_await(&k[1]->starts, 2));
		HARNESS_CHECK(await_active(sup, 1));
		still_running(sup, ch);
		atomic_store(&k[1]->gate, 1);
		await_auto_shutdown(ch);
		HARNESS_EQ(atomic_load(&k[0]->starts), 1);
		free_kids(k, 2);
	}
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

/*
 * significant_simple: a significant transient template; any_significant:
 * one instance ends normally, the supervisor shuts down with the
 * others; all_significant: it goes on until the last instance ended.
 */
static void root_simple(void *arg)
{
	int autos[2] = { SMARM_SUP_AUTO_ANY_SIGNIFICANT,
			 SMARM_SUP_AUTO_ALL_SIGNIFICANT };
	(void)arg;
	for (int a = 0; a < 2; a++) {
		struct kid *k[3] = { kid_new(1, KID_END_ON_GATE),
				     kid_new(2, KID_END_ON_GATE),
				     kid_new(3, KID_END_ON_GATE) };
		smarm_sup_spec_t *sp =
			spec_new(SMARM_SUP_SIMPLE_ONE_FOR_ONE, autos[a]);
		smarm_chan_t *ch;
		smarm_pid_t sup, other;
		HARNESS_EQ(smarm_sup_spec_add_child(sp, "t", kid_body, NULL,
						    SMARM_SUP_TRANSIENT,
						    SMARM_SUP_SHUTDOWN_DEFAULT),
			   0);
		HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, "t", true),
			   0);
		sup = start_watched(sp, &ch);
		for (int i = 0; i < 3; i++) {
			HARNESS_EQ(smarm_sup_start_child_args(
					   sup, k[i], MS(10000), NULL, NULL),
				   0);
			HARNESS_CHECK(kid_await(&k[i]->starts, 1));
		}
		if (autos[a] == SMARM_SUP_AUTO_ANY_SIGNIFICANT) {
			other = kid_pid(k[2]);
			atomic_store(&k[0]->gate, 1);
			await_auto_shutdown(ch);
			HARNESS_CHECK(!smarm_actor_is_alive(other));
		} else {
			atomic_store(&k[0]->gate, 1);
			atomic_store(&k[1]->gate, 1);
			HARNESS_CHECK(await_active(sup, 1));
			still_running(sup, ch);
			atomic_store(&k[2]->gate, 1);
			await_auto_shutdown(ch);
		}
		for (int i = 0; i < 3; i++)
			HARNESS_EQ(atomic_load(&k[i]->starts), 1);
		free_kids(k, 3);
	}
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

/*
 * significant_bystander: under one_for_all, a permanent sibling
 * crashes; the significant child (transient, then temporary) is
 * stopped by its supervisor as a bystander of the restart (restarted,
 * or, temporary, not): no automatic shutdown. Its own end then does
 * shut the supervisor down (the transient one).
 */
static void root_bystander(void *arg)
{
	int kinds[2] = { SMARM_SUP_TRANSIENT, SMARM_SUP_TEMPORARY };
	(void)arg;
	for (int r = 0; r < 2; r++) {
		struct kid *k[2] = { kid_new(1, KID_PARK),
				     kid_new(2, KID_END_ON_GATE) };
		smarm_sup_spec_t *sp = spec_new(SMARM_SUP_ONE_FOR_ALL,
						SMARM_SUP_AUTO_ANY_SIGNIFICANT);
		smarm_chan_t *ch;
		smarm_pid_t sup;
		add(sp, "p", k[0], SMARM_SUP_PERMANENT, false);
		add(sp, "s", k[1], kinds[r], true);
		sup = start_watched(sp, &ch);
		HARNESS_CHECK(kid_await(&k[0]->starts, 1)); /* pid known */
		HARNESS_CHECK(kid_await(&k[1]->starts, 1));
		HARNESS_EQ(exit_and_await(kid_pid(k[0]), SMARM_EXIT_CRASHED, 1,
					  NULL),
			   SMARM_EXIT_CRASHED);
		HARNESS_CHECK(kid_await(&k[0]->starts, 2));
		if (kinds[r] == SMARM_SUP_TRANSIENT) {
			HARNESS_CHECK(kid_await(&k[1]->starts, 2));
			HARNESS_CHECK(await_active(sup, 2));
			still_running(sup, ch);
			atomic_store(&k[1]->gate, 1);
			await_auto_shutdown(ch);
		} else {
			HARNESS_CHECK(await_active(sup, 1)); /* s is gone */
			still_running(sup, ch);
			HARNESS_EQ(atomic_load(&k[1]->starts), 1);
			shut(sup, ch);
		}
		free_kids(k, 2);
	}
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
}

/*
 * significant_escalation: top (any_significant) has a significant
 * transient child supervisor mid (any_significant) whose significant
 * temporary child ends: mid shuts itself down, a shutdown that is no
 * abnormal end of a transient child, and significant: top shuts
 * itself down too.
 */
static void root_escalation(void *arg)
{
	struct kid *leaf = kid_new(1, KID_END_ON_GATE);
	struct kid *bys = kid_new(2, KID_PARK);
	struct kid *mid = kid_new(3, KID_SUB);
	smarm_sup_spec_t *sub =
		spec_new(SMARM_SUP_ONE_FOR_ONE, SMARM_SUP_AUTO_ANY_SIGNIFICANT);
	smarm_sup_spec_t *sp =
		spec_new(SMARM_SUP_ONE_FOR_ONE, SMARM_SUP_AUTO_ANY_SIGNIFICANT);
	smarm_chan_t *ch;
	smarm_pid_t mpid;
	(void)arg;
	add(sub, "leaf", leaf, SMARM_SUP_TEMPORARY, true);
	mid->sub = sub;
	add(sp, "bystander", bys, SMARM_SUP_PERMANENT, false);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "mid", kid_body, mid,
					    SMARM_SUP_TRANSIENT,
					    SMARM_SUP_INFINITY),
		   0);
	HARNESS_EQ(
		smarm_sup_spec_set_child_type(sp, "mid", SMARM_SUP_SUPERVISOR),
		0);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, "mid", true), 0);
	(void)start_watched(sp, &ch);
	HARNESS_CHECK(kid_await(&leaf->starts, 1));
	HARNESS_CHECK(kid_await(&bys->starts, 1)); /* its pid is known */
	mpid = kid_pid(mid);
	atomic_store(&leaf->gate, 1);
	await_auto_shutdown(ch);
	HARNESS_CHECK(!smarm_actor_is_alive(mpid));
	HARNESS_CHECK(!smarm_actor_is_alive(kid_pid(bys)));
	HARNESS_EQ(atomic_load(&mid->starts), 1); /* not restarted */
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	smarm_sup_spec_free(sub);
	free(leaf);
	free(bys);
	free(mid);
}

static int bad_init(void *arg, smarm_sup_spec_t *spec)
{
	struct kid *k = arg;
	HARNESS_EQ(smarm_sup_spec_add_child(spec, "s", kid_body, k,
					    SMARM_SUP_TEMPORARY, 0),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(spec, "s", true), 0);
	return 0; /* auto_shutdown never: a bad combination */
}

static int bad_init_permanent(void *arg, smarm_sup_spec_t *spec)
{
	struct kid *k = arg;
	HARNESS_EQ(smarm_sup_spec_set_auto_shutdown(
			   spec, SMARM_SUP_AUTO_ANY_SIGNIFICANT),
		   0);
	HARNESS_EQ(smarm_sup_spec_add_child(spec, "s", kid_body, k,
					    SMARM_SUP_PERMANENT, 0),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(spec, "s", true),
		   SMARM_EBADSPEC);
	return 0;
}

/*
 * child_specs, sup_flags: OTP's {bad_combination, ...} is
 * SMARM_EBADSPEC: significant with a permanent child (at the setter),
 * a significant child with auto_shutdown never (at the start, from a
 * spec, from an init, and for a dynamic child's spec); the setters'
 * argument errors.
 */
static void root_specs(void *arg)
{
	struct kid *k = kid_new(1, KID_PARK);
	smarm_sup_spec_t *sp = NULL, *one = NULL;
	smarm_pid_t sup = smarm_actor_self();
	intptr_t why = 0;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_spec_set_auto_shutdown(NULL, 0), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_auto_shutdown(sp, -1), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_auto_shutdown(sp, 3), SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(NULL, "s", true),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, NULL, true),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, "", true),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, "s", true),
		   SMARM_ENOENT);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "p", kid_body, k,
					    SMARM_SUP_PERMANENT, 0),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, "p", true),
		   SMARM_EBADSPEC); /* {restart, permanent} */
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, "p", false), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "s", kid_body, k,
					    SMARM_SUP_TEMPORARY, 0),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, "s", true), 0);
	/* {auto_shutdown, never} with a significant child */
	HARNESS_EQ(smarm_sup_start(sp, &sup), SMARM_EBADSPEC);
	HARNESS_CHECK(smarm_pid_eq(sup, smarm_actor_self()));
	HARNESS_EQ(smarm_sup_run(sp), SMARM_EBADSPEC);
	HARNESS_EQ(smarm_sup_start_init(bad_init, k, &sup, &why),
		   SMARM_EBADSPEC);
	HARNESS_EQ(why, SMARM_EBADSPEC);
	HARNESS_EQ(smarm_sup_start_init(bad_init_permanent, k, &sup, &why),
		   SMARM_EBADSPEC);
	HARNESS_EQ(why, SMARM_EBADSPEC);	/* the setter's status */
	HARNESS_EQ(atomic_load(&k->starts), 0); /* nothing started */
	/* the same spec with an automatic shutdown starts */
	HARNESS_EQ(smarm_sup_spec_set_auto_shutdown(
			   sp, SMARM_SUP_AUTO_ALL_SIGNIFICANT),
		   0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	smarm_sup_spec_free(sp);
	/* a dynamic child's spec is checked against the supervisor's */
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0); /* never */
	HARNESS_EQ(smarm_sup_spec_alloc(&one), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(one, "d", kid_body, k,
					    SMARM_SUP_TRANSIENT, 0),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(one, "d", true), 0);
	HARNESS_EQ(smarm_sup_start_child_spec(sup, one, MS(5000), NULL, NULL),
		   SMARM_EBADSPEC);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(smarm_sup_spec_set_auto_shutdown(
			   sp, SMARM_SUP_AUTO_ANY_SIGNIFICANT),
		   0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	HARNESS_EQ(smarm_sup_start_child_spec(sup, one, MS(5000), NULL, NULL),
		   0);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	smarm_sup_spec_free(one);
	smarm_sup_spec_free(sp);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	free(k);
}

/*
 * which_children reports significance (OTP's get_childspec's
 * significant key): smarm_sup_which_children_ex fills it for each
 * child, a SIMPLE_ONE_FOR_ONE instance from its template;
 * smarm_sup_which_children_sized writes records of the caller's size:
 * the first version's (SMARM_SUP_CHILD_INFO_MIN) gets no significant
 * and nothing past it, a larger one the fields this library knows and
 * zeroes after them; a size below the first version's is refused.
 */
static void root_which_significant(void *arg)
{
	smarm_sup_spec_t *sp =
		spec_new(SMARM_SUP_ONE_FOR_ONE, SMARM_SUP_AUTO_ANY_SIGNIFICANT);
	static const char *ids[3] = { "a", "b", "c" };
	static const int restarts[3] = { SMARM_SUP_PERMANENT,
					 SMARM_SUP_TRANSIENT,
					 SMARM_SUP_TEMPORARY };
	smarm_sup_child_info_t it[4];
	struct kid *k = kid_new(1, KID_PARK);
	unsigned char raw[3 * SMARM_SUP_CHILD_INFO_MIN + 8];
	enum { BIG = sizeof(smarm_sup_child_info_t) + 8 };
	unsigned char big[3 * BIG];
	smarm_pid_t sup, inst;
	size_t n = 0;
	(void)arg;
	for (int i = 0; i < 3; i++)
		HARNESS_EQ(smarm_sup_spec_add_child(sp, ids[i], kid_body, k,
						    restarts[i], MS(1000)),
			   0);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, "b", true), 0);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, "c", true), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	memset(it, 0xa5, sizeof it);
	HARNESS_EQ(smarm_sup_which_children_ex(sup, it, 4, &n, MS(5000)), 0);
	HARNESS_EQ(n, 3);
	HARNESS_CHECK(!it[0].significant);
	HARNESS_CHECK(it[1].significant);
	HARNESS_CHECK(it[2].significant);
	/* the first version's records: up to state, nothing more */
	memset(raw, 0xa5, sizeof raw);
	HARNESS_EQ(smarm_sup_which_children_sized(
			   sup, raw, SMARM_SUP_CHILD_INFO_MIN, 3, &n, MS(5000)),
		   0);
	HARNESS_EQ(n, 3);
	for (int i = 0; i < 3; i++) {
		smarm_sup_child_info_t r;
		memset(&r, 0, sizeof r);
		memcpy(&r, raw + i * SMARM_SUP_CHILD_INFO_MIN,
		       SMARM_SUP_CHILD_INFO_MIN);
		HARNESS_EQ(strcmp(r.id, ids[i]), 0);
		HARNESS_EQ(r.restart, restarts[i]);
		HARNESS_EQ(r.state, SMARM_SUP_CHILD_RUNNING);
	}
	for (size_t b = 3 * SMARM_SUP_CHILD_INFO_MIN; b < sizeof raw; b++)
		HARNESS_EQ(raw[b], 0xa5);
	/* a later caller's larger records: what is known, then zeroes */
	memset(big, 0xa5, sizeof big);
	HARNESS_EQ(
		smarm_sup_which_children_sized(sup, big, BIG, 3, &n, MS(5000)),
		0);
	for (int i = 0; i < 3; i++) {
		smarm_sup_child_info_t r;
		memcpy(&r, big + i * BIG, sizeof r);
		HARNESS_EQ(strcmp(r.id, ids[i]), 0);
		HARNESS_EQ(r.significant, i > 0);
		for (size_t b = sizeof r; b < BIG; b++)
			HARNESS_EQ(big[i * BIG + b], 0);
	}
	HARNESS_EQ(smarm_sup_which_children_sized(sup, raw,
						  SMARM_SUP_CHILD_INFO_MIN - 1,
						  3, &n, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_which_children_sized(sup, NULL, sizeof it[0], 1,
						  &n, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_which_children_sized(sup, it, sizeof it[0], 1,
						  NULL, MS(5000)),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_which_children_sized(sup, NULL, sizeof it[0], 0,
						  &n, MS(5000)),
		   0);
	HARNESS_EQ(n, 3);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	/* an instance is as significant as its template */
	sp = spec_new(SMARM_SUP_SIMPLE_ONE_FOR_ONE,
		      SMARM_SUP_AUTO_ALL_SIGNIFICANT);
	HARNESS_EQ(smarm_sup_spec_add_child(sp, "t", kid_body, NULL,
					    SMARM_SUP_TEMPORARY, MS(1000)),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_significant(sp, "t", true), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	HARNESS_EQ(smarm_sup_start_child_args(sup, k, MS(5000), &inst, NULL),
		   0);
	HARNESS_EQ(smarm_sup_which_children_ex(sup, it, 4, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	HARNESS_CHECK(smarm_pid_eq(it[0].pid, inst));
	HARNESS_CHECK(it[0].significant);
	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_CHECK(sup_await(SMARM_STAT_LIVE_ACTORS, 1));
	free(k);
}

#define CASE(name, root)                                                       \
	START_TEST(test_sup_significant_##name)                                \
	{                                                                      \
		harness_checks_reset();                                        \
		ck_assert_int_eq(harness_run(_i + 1, root, NULL), 0);          \
		harness_checks_assert();                                       \
	}                                                                      \
	END_TEST

CASE(nonsignificant_temporary_transient, root_nonsignificant)
CASE(significant_temporary, root_temporary)
CASE(significant_transient, root_transient)
CASE(significant_simple, root_simple)
CASE(significant_bystander, root_bystander)
CASE(significant_escalation, root_escalation)
CASE(child_specs_bad_combination, root_specs)
CASE(which_children_significant, root_which_significant)

/* loop values: workers - 1, so 0..1 and 3 run 1, 2 and 4 workers */
static void add_123(TCase *tc, const TTest *t)
{
	tcase_add_loop_test(tc, t, 0, 2);
	tcase_add_loop_test(tc, t, 3, 4);
}

Suite *smarm_test_sup_significant_suite(void)
{
	Suite *s = suite_create("sup_significant");
	TCase *tc = tcase_create("significant");
	tcase_set_timeout(tc, 60);
	add_123(tc, test_sup_significant_nonsignificant_temporary_transient);
	add_123(tc, test_sup_significant_significant_temporary);
	add_123(tc, test_sup_significant_significant_transient);
	add_123(tc, test_sup_significant_significant_simple);
	add_123(tc, test_sup_significant_significant_bystander);
	add_123(tc, test_sup_significant_significant_escalation);
	add_123(tc, test_sup_significant_child_specs_bad_combination);
	add_123(tc, test_sup_significant_which_children_significant);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(sup_significant)
