/* SPDX-License-Identifier: MIT */
/*
 * test_otp_args.c - bad input to the OTP calls, across modules.
 *
 * Foreign pids: a pid names one actor of one node, so a pid of another
 * node (one running at the same time, or one closed before this one
 * opened) must name nothing to any OTP call, even when this node's actor
 * in the same slot publishes the same mailbox type, holds names and is
 * in the same group: sends, exit signals, group joins, names_of and the
 * supervisor calls return SMARM_ENOPROC, a leave SMARM_ENOENT; a
 * monitor gets a NOPROC Down at once, a trapping link a NOPROC exit
 * message, a link that does not trap crashes the caller with reason
 * SMARM_ENOPROC (OTP's link/1 on a dead pid); nothing reaches the local
 * actors, and on the other node nothing reaches its own actor.
 *
 * Names: every call that takes a name or a child id refuses NULL, empty
 * and over-long ones with SMARM_EINVAL (before it looks anything up or
 * changes anything), and takes one of exactly SMARM_NAME_MAX bytes.
 */
#include "harness.h"

#include <pthread.h>
#include <string.h>

#define FP_DECOYS 4

static const smarm_msgtype_t *fp_type(void)
{
	const smarm_msgtype_t *t = NULL;
	HARNESS_EQ(smarm_msgtype_define("otp_args.int", sizeof(int), NULL, &t),
		   0);
	return t;
}

/*
 * A local actor that looks like what the foreign pid named: it publishes
 * an "otp_args.int" mailbox, holds a name and is in group "fp.g". It
 * parks on its mailbox; an element in it is a failed check.
 */
static void fp_decoy(void *arg)
{
	const smarm_msgtype_t *t = fp_type();
	smarm_chan_t *box = NULL;
	char name[16];
	int v;
	snprintf(name, sizeof name, "fp.d%d", (int)(intptr_t)arg);
	HARNESS_EQ(smarm_chan_alloc(&box, sizeof(int), NULL), 0);
	smarm_cleanup_push(harness_chan_drop_cb, box);
	HARNESS_EQ(smarm_mailbox_publish(t, box), 0);
	HARNESS_EQ(smarm_register(name, NULL), 0);
	HARNESS_EQ(smarm_group_join("fp.g", smarm_actor_self(), NULL), 0);
	if (smarm_chan_recv(box, &v) == 0)
		HARNESS_CHECK(0); /* something was delivered to it */
}

/* A child that links to the foreign pid without trapping. */
static void fp_linker(void *arg)
{
	smarm_pid_t f = { (uint64_t)(uintptr_t)arg };
	(void)smarm_link(f);
	HARNESS_CHECK(0); /* not reached: the link crashed the caller */
}

static void fp_child(void *arg)
{
	(void)arg;
}

/* Every OTP call given f, a pid of no actor of the caller's node. */
static void fp_check(smarm_pid_t f)
{
	const smarm_msgtype_t *t = fp_type();
	smarm_node_t *node = smarm_node_current();
	smarm_pid_t d[FP_DECOYS], l;
	smarm_sup_child_t items[2];
	smarm_chan_t *sig = harness_sig_chan();
	smarm_signal_t s = { 0 };
	uint64_t ref = 0;
	size_t n = 99;
	bool added = true;
	intptr_t reason = 0;
	int v = 5, how = -1;
	static const int hows[] = { SMARM_EXIT_NORMAL, SMARM_EXIT_CRASHED,
				    SMARM_EXIT_STOPPED, SMARM_EXIT_SHUTDOWN };
	for (int i = 0; i < FP_DECOYS; i++)
		HARNESS_EQ(smarm_actor_spawn(&d[i], fp_decoy,
					     (void *)(intptr_t)i, NULL),
			   0);
	while (smarm_group_members("fp.g", NULL, 0, &n) == 0 && n < FP_DECOYS)
		smarm_actor_sleep(MS(1));

	HARNESS_CHECK(!smarm_actor_is_alive(f));
	HARNESS_EQ(smarm_send(f, t, &v), SMARM_ENOPROC);
	HARNESS_EQ(smarm_node_send(node, f, t, &v), SMARM_ENOPROC);
	for (size_t i = 0; i < sizeof hows / sizeof hows[0]; i++)
		HARNESS_EQ(smarm_actor_send_exit(f, hows[i], 3), SMARM_ENOPROC);
	HARNESS_EQ(smarm_node_shutdown_actor(node, f), SMARM_ENOPROC);
	HARNESS_EQ(smarm_node_stop_actor(node, f), SMARM_ENOPROC);
	HARNESS_EQ(smarm_group_join("fp.g", f, &added), SMARM_ENOPROC);
	HARNESS_CHECK(!added); /* nobody was added */
	HARNESS_EQ(smarm_group_join("fp.other", f, NULL), SMARM_ENOPROC);
	HARNESS_EQ(smarm_group_leave("fp.g", f), SMARM_ENOENT);
	HARNESS_EQ(smarm_names_of(f, NULL, 0, &n), SMARM_ENOPROC);

	/* the supervisor calls: no live actor, so no supervisor */
	HARNESS_EQ(smarm_sup_count_children(f, &n, NULL, MS(1000)),
		   SMARM_ENOPROC);
	HARNESS_EQ(smarm_sup_which_children(f, items, 2, &n, MS(1000)),
		   SMARM_ENOPROC);
	HARNESS_EQ(smarm_sup_start_child(f, "x", fp_child, NULL,
					 SMARM_SUP_TEMPORARY,
					 SMARM_SUP_BRUTAL_KILL, MS(1000), NULL),
		   SMARM_ENOPROC);
	HARNESS_EQ(smarm_sup_terminate_child(f, "x", MS(1000)), SMARM_ENOPROC);
	HARNESS_EQ(smarm_sup_restart_child(f, "x", MS(1000), NULL),
		   SMARM_ENOPROC);
	HARNESS_EQ(smarm_sup_delete_child(f, "x", MS(1000)), SMARM_ENOPROC);

	/* monitor: a NOPROC Down at once (OTP's monitor of a dead pid) */
	HARNESS_EQ(smarm_monitor(f, sig, &ref), 0);
	HARNESS_EQ(smarm_chan_try_recv(sig, &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
	HARNESS_EQ(s.how, SMARM_EXIT_NOPROC);
	HARNESS_CHECK(smarm_pid_eq(s.from, f));
	HARNESS_EQ(s.ref, ref);
	HARNESS_EQ(smarm_demonitor(ref, 0), SMARM_ENOENT); /* it fired */

	/* link while trapping: a NOPROC exit message, the call succeeds */
	HARNESS_EQ(smarm_trap_exit(sig), 0);
	HARNESS_EQ(smarm_link(f), 0);
	memset(&s, 0, sizeof s);
	HARNESS_EQ(harness_recv_sig(sig, &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_EXIT);
	HARNESS_EQ(s.how, SMARM_EXIT_NOPROC);
	HARNESS_CHECK(smarm_pid_eq(s.from, f));
	HARNESS_EQ(smarm_trap_exit(NULL), 0);
	HARNESS_EQ(smarm_unlink(f), 0);

	/* link without trapping: the caller crashes with SMARM_ENOPROC */
	HARNESS_EQ(
		smarm_actor_spawn(&l, fp_linker, (void *)(uintptr_t)f.id, NULL),
		0);
	HARNESS_EQ(smarm_actor_join(l, &how, &reason), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(reason, SMARM_ENOPROC);

	/* nothing reached the local actors */
	HARNESS_EQ(smarm_group_members("fp.g", NULL, 0, &n), 0);
	HARNESS_EQ(n, FP_DECOYS);
	for (int i = 0; i < FP_DECOYS; i++) {
		HARNESS_CHECK(smarm_actor_is_alive(d[i]));
		HARNESS_EQ(smarm_actor_stop(d[i]), 0);
		HARNESS_EQ(smarm_actor_join(d[i], &how, NULL), 0);
		HARNESS_EQ(how, SMARM_EXIT_STOPPED);
	}
	HARNESS_EQ(harness_chan_len(sig), 0);
	harness_chan_drop(sig);
}

/* ---- a pid of a node closed before this one opened */

static uint64_t fp_old;

static void fp_root_old(void *arg)
{
	smarm_pid_t c;
	(void)arg;
	/* the first child: the slot the new node's first decoy takes */
	HARNESS_EQ(smarm_actor_spawn(&c, fp_decoy, (void *)(intptr_t)0, NULL),
		   0);
	fp_old = c.id;
	HARNESS_EQ(smarm_actor_stop(c), 0);
	HARNESS_EQ(smarm_actor_join(c, NULL, NULL), 0);
}

static void fp_root_new(void *arg)
{
	smarm_pid_t old = { fp_old };
	(void)arg;
	fp_check(old);
}

START_TEST(test_otp_args_pid_of_a_closed_node_names_nothing)
{
	harness_checks_reset();
	fp_old = 0;
	ck_assert_int_eq(harness_run(_i + 1, fp_root_old, NULL), 0);
	ck_assert_uint_ne(fp_old, 0);
	ck_assert_int_eq(harness_run(_i + 1, fp_root_new, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ---- a pid of a node running at the same time */

static _Atomic uint64_t fp_pid_a;
static _Atomic int fp_b_done;
static smarm_node_t *fp_node_a;

/* Node A's actor: a decoy of its own node; B's calls must not reach it. */
static void fp_target(void *arg)
{
	fp_decoy(arg);
}

static void fp_root_a(void *arg)
{
	smarm_pid_t c;
	size_t n = 0;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&c, fp_target, (void *)(intptr_t)0, NULL),
		   0);
	while (smarm_group_members("fp.g", NULL, 0, &n) == 0 && n < 1)
		smarm_actor_sleep(MS(1));
	atomic_store(&fp_pid_a, c.id);
	while (!atomic_load(&fp_b_done))
		smarm_actor_sleep(MS(1));
	/* A's own pid still works on A, and nothing of B's arrived */
	HARNESS_CHECK(smarm_actor_is_alive(c));
	HARNESS_EQ(smarm_group_members("fp.g", NULL, 0, &n), 0);
	HARNESS_EQ(n, 1);
	HARNESS_EQ(smarm_names_of(c, NULL, 0, &n), 0);
	HARNESS_EQ(n, 1);
	HARNESS_EQ(smarm_actor_stop(c), 0);
	HARNESS_EQ(smarm_actor_join(c, NULL, NULL), 0);
}

static void *fp_thread_a(void *arg)
{
	int how = -1;
	(void)arg;
	HARNESS_EQ(smarm_node_run(fp_node_a, fp_root_a, NULL, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	return NULL;
}

static void fp_root_b(void *arg)
{
	smarm_pid_t a;
	(void)arg;
	while ((a.id = atomic_load(&fp_pid_a)) == 0)
		smarm_actor_sleep(MS(1));
	fp_check(a);
	atomic_store(&fp_b_done, 1);
}

START_TEST(test_otp_args_pid_of_another_running_node_names_nothing)
{
	smarm_node_t *b = harness_open(_i + 1);
	pthread_t t;
	int how = -1;
	harness_checks_reset();
	atomic_store(&fp_pid_a, 0);
	atomic_store(&fp_b_done, 0);
	fp_node_a = harness_open(_i + 1);
	ck_assert_int_eq(pthread_create(&t, NULL, fp_thread_a, NULL), 0);
	ck_assert_int_eq(smarm_node_run(b, fp_root_b, NULL, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	pthread_join(t, NULL);
	ck_assert_int_eq(smarm_node_close(fp_node_a), 0);
	ck_assert_int_eq(smarm_node_close(b), 0);
	harness_checks_assert();
}
END_TEST

/* ---- names and child ids */

/* Returns EINVAL for each of NULL, "" and long, else what it returned. */
#define BAD_NAMES(call_with)                                                   \
	do {                                                                   \
		const char *bad_[3] = { NULL, "", nm.longer };                 \
		for (int b_ = 0; b_ < 3; b_++) {                               \
			const char *name = bad_[b_];                           \
			HARNESS_EQ((call_with), SMARM_EINVAL);                 \
		}                                                              \
	} while (0)

static struct {
	char longer[SMARM_NAME_MAX + 2]; /* one byte over */
	char longest[SMARM_NAME_MAX + 1];
} nm;

static void nm_park(void *arg)
{
	(void)arg;
	harness_park();
}

static void nm_root(void *arg)
{
	const smarm_msgtype_t *t = fp_type();
	smarm_node_t *node = smarm_node_current();
	smarm_sup_spec_t *sp = NULL;
	smarm_chan_t *box = NULL;
	smarm_pid_t me = smarm_actor_self(), p, sup, c;
	smarm_sup_child_t items[4];
	size_t n = 0;
	int v = 1, got = 0;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&box, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_mailbox_publish(t, box), 0);

	/* registry and sends by name */
	BAD_NAMES(smarm_register(name, NULL));
	BAD_NAMES(smarm_unregister(name));
	BAD_NAMES(smarm_whereis(name, &p));
	BAD_NAMES(smarm_node_whereis(node, name, &p));
	BAD_NAMES(smarm_send_name(name, t, &v));
	BAD_NAMES(smarm_node_send_name(node, name, t, &v));
	HARNESS_EQ(smarm_register(nm.longest, NULL), 0);
	HARNESS_EQ(smarm_whereis(nm.longest, &p), 0);
	HARNESS_CHECK(smarm_pid_eq(p, me));
	HARNESS_EQ(smarm_send_name(nm.longest, t, &v), 0);
	HARNESS_EQ(smarm_node_send_name(node, nm.longest, t, &v), 0);
	HARNESS_EQ(smarm_chan_try_recv(box, &got), 0);
	HARNESS_EQ(smarm_chan_try_recv(box, &got), 0);
	HARNESS_EQ(got, 1);
	HARNESS_EQ(harness_chan_len(box), 0); /* the refused ones sent none */

	/* groups */
	BAD_NAMES(smarm_group_join(name, me, NULL));
	BAD_NAMES(smarm_group_leave(name, me));
	BAD_NAMES(smarm_group_members(name, NULL, 0, &n));
	BAD_NAMES(smarm_group_pick(name, &p));
	BAD_NAMES(smarm_group_dispatch(name, t, &v));
	HARNESS_EQ(smarm_group_join(nm.longest, me, NULL), 0);
	HARNESS_EQ(smarm_group_members(nm.longest, NULL, 0, &n), 0);
	HARNESS_EQ(n, 1);
	HARNESS_EQ(smarm_group_pick(nm.longest, &p), 0);
	HARNESS_CHECK(smarm_pid_eq(p, me));
	HARNESS_EQ(smarm_group_dispatch(nm.longest, t, &v), 0);
	HARNESS_EQ(smarm_chan_try_recv(box, &got), 0);
	HARNESS_EQ(harness_chan_len(box), 0);
	HARNESS_EQ(smarm_group_leave(nm.longest, me), 0);

	/* child ids: in a spec, and on a running supervisor */
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	BAD_NAMES(smarm_sup_spec_add_child(sp, name, nm_park, NULL,
					   SMARM_SUP_PERMANENT,
					   SMARM_SUP_BRUTAL_KILL));
	HARNESS_EQ(smarm_sup_spec_add_child(sp, nm.longest, nm_park, NULL,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_BRUTAL_KILL),
		   0);
	BAD_NAMES(smarm_sup_spec_set_child_ready(sp, name, MS(1000)));
	HARNESS_EQ(smarm_sup_spec_set_child_ready(sp, nm.longest, 0), 0);
	smarm_sup_spec_free(sp);
	sp = NULL;
	HARNESS_EQ(smarm_sup_spec_alloc(&sp), 0);
	HARNESS_EQ(smarm_sup_start(sp, &sup), 0);
	smarm_sup_spec_free(sp);
	/* NULL is an anonymous child for start_child: only "" and long */
	HARNESS_EQ(smarm_sup_start_child(sup, "", nm_park, NULL,
					 SMARM_SUP_PERMANENT,
					 SMARM_SUP_BRUTAL_KILL, MS(5000), NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_sup_start_child(sup, nm.longer, nm_park, NULL,
					 SMARM_SUP_PERMANENT,
					 SMARM_SUP_BRUTAL_KILL, MS(5000), NULL),
		   SMARM_EINVAL);
	BAD_NAMES(smarm_sup_terminate_child(sup, name, MS(5000)));
	BAD_NAMES(smarm_sup_restart_child(sup, name, MS(5000), NULL));
	BAD_NAMES(smarm_sup_delete_child(sup, name, MS(5000)));
	HARNESS_EQ(smarm_sup_count_children(sup, &n, NULL, MS(5000)), 0);
	HARNESS_EQ(n, 0); /* the refused calls recorded nothing */
	HARNESS_EQ(smarm_sup_start_child(sup, nm.longest, nm_park, NULL,
					 SMARM_SUP_PERMANENT,
					 SMARM_SUP_BRUTAL_KILL, MS(5000), &c),
		   0);
	HARNESS_EQ(smarm_sup_which_children(sup, items, 4, &n, MS(5000)), 0);
	HARNESS_EQ(n, 1);
	HARNESS_EQ(strcmp(items[0].id, nm.longest), 0);
	HARNESS_CHECK(smarm_pid_eq(items[0].pid, c));
	HARNESS_EQ(smarm_sup_terminate_child(sup, nm.longest, MS(5000)), 0);
	HARNESS_EQ(smarm_sup_restart_child(sup, nm.longest, MS(5000), &c), 0);
	HARNESS_EQ(smarm_sup_terminate_child(sup, nm.longest, MS(5000)), 0);
	HARNESS_EQ(smarm_sup_delete_child(sup, nm.longest, MS(5000)), 0);
	HARNESS_EQ(smarm_sup_count_children(sup, &n, NULL, MS(5000)), 0);
	HARNESS_EQ(n, 0);
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_EQ(smarm_unregister(nm.longest), 0);
	HARNESS_EQ(smarm_mailbox_unpublish(t), 0);
	harness_chan_drop(box);
}

START_TEST(test_otp_args_names_null_empty_or_too_long_are_einval)
{
	memset(nm.longer, 'n', sizeof nm.longer - 1);
	nm.longer[sizeof nm.longer - 1] = '\0';
	memset(nm.longest, 'm', sizeof nm.longest - 1);
	nm.longest[sizeof nm.longest - 1] = '\0';
	ck_assert_uint_eq(strlen(nm.longest), SMARM_NAME_MAX);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, nm_root, NULL), 0);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_otp_args_suite(void)
{
	Suite *s = suite_create("otp_args");
	TCase *tc = tcase_create("foreign_pids");
	tcase_set_timeout(tc, 60);
	/* 1, 2 and 4 workers (4 on 2 cores: oversubscribed) */
	tcase_add_loop_test(
		tc, test_otp_args_pid_of_a_closed_node_names_nothing, 0, 2);
	tcase_add_loop_test(
		tc, test_otp_args_pid_of_a_closed_node_names_nothing, 3, 4);
	tcase_add_loop_test(
		tc, test_otp_args_pid_of_another_running_node_names_nothing, 0,
		2);
	tcase_add_loop_test(
		tc, test_otp_args_pid_of_another_running_node_names_nothing, 3,
		4);
	suite_add_tcase(s, tc);
	tc = tcase_create("names");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
		       test_otp_args_names_null_empty_or_too_long_are_einval);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(otp_args)
