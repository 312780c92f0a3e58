/* SPDX-License-Identifier: MIT */
/*
 * test_link.c - links and trapping (smarm_link, smarm_unlink,
 * smarm_trap_exit, SMARM_OPT_LINK): an abnormal end takes a
 * non-trapping peer along with the same how and reason, reaches a
 * trapping one as a SMARM_SIGNAL_EXIT message; a normal end reaches a
 * trapping peer only (and not one that unlinked), others ignore it;
 * unlink stops propagation; linking a dead pid (noproc) ends a
 * non-trapping caller and messages a trapping one; link at spawn is in
 * place before the child runs; SMARM_STAT_LINKS; every misuse; a cascade
 * of 10,000 linked actors on 4 workers all ends. Ports the Rust smarm
 * runtime's tests/link.rs.
 */
#include "harness.h"

#include <string.h>

#define SIG_SZ sizeof(smarm_signal_t)

static _Atomic int cleanups;

static void count_cleanup(void *arg)
{
	(void)arg;
	atomic_fetch_add(&cleanups, 1);
}

/* Link to *arg's pid, then park. */
static void body_link_park(void *arg)
{
	smarm_cleanup_push(count_cleanup, NULL);
	HARNESS_EQ(smarm_link(*(smarm_pid_t *)arg), 0);
	harness_park();
}

static void body_park(void *arg)
{
	(void)arg;
	harness_park();
}

/* --------------------------------------------------- propagation */

static void root_crash_propagates(void *arg)
{
	smarm_pid_t a, b;
	int how = -1;
	intptr_t reason = 0;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, body_link_park, &a, NULL), 0);
	while (harness_actor_stat(SMARM_STAT_LINKS) != 2)
		smarm_actor_yield();
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_CRASHED, 9), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, &reason), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(reason, 9);
	HARNESS_EQ(smarm_actor_join(b, &how, &reason), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED); /* same how and reason */
	HARNESS_EQ(reason, 9);
	HARNESS_EQ(atomic_load(&cleanups), 1); /* its cleanup ran */
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
}

START_TEST(test_link_linked_pair_one_crashes_other_ends_alike)
{
	harness_checks_reset();
	atomic_store(&cleanups, 0);
	ck_assert_int_eq(harness_run(2, root_crash_propagates, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* Kill, shutdown and normal through a link (how each propagates). */
static void root_kinds(void *arg)
{
	static const int kinds[] = { SMARM_EXIT_STOPPED, SMARM_EXIT_SHUTDOWN,
				     SMARM_EXIT_NORMAL };
	(void)arg;
	for (int k = 0; k < 3; k++) {
		smarm_pid_t a, b;
		int how = -1;
		HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
		HARNESS_EQ(smarm_actor_spawn(&b, body_link_park, &a, NULL), 0);
		while (harness_actor_stat(SMARM_STAT_LINKS) != 2)
			smarm_actor_yield();
		if (kinds[k] == SMARM_EXIT_NORMAL) {
			/* A normal exit signal is ignored: end a itself. */
			HARNESS_EQ(
				smarm_actor_send_exit(a, SMARM_EXIT_NORMAL, 0),
				0);
			HARNESS_CHECK(smarm_actor_is_alive(a));
			HARNESS_EQ(smarm_unlink(b), 0); /* b is not linked */
			HARNESS_EQ(
				smarm_actor_send_exit(a, SMARM_EXIT_STOPPED, 0),
				0);
			HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
			/* a was killed: b goes too; redo with a clean end */
			HARNESS_EQ(smarm_actor_join(b, &how, NULL), 0);
			HARNESS_EQ(how, SMARM_EXIT_STOPPED);
			continue;
		}
		HARNESS_EQ(smarm_actor_send_exit(a, kinds[k], 0), 0);
		HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
		HARNESS_EQ(how, kinds[k]);
		HARNESS_EQ(smarm_actor_join(b, &how, NULL), 0);
		HARNESS_EQ(how, kinds[k]);
	}
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
}

START_TEST(test_link_kill_and_shutdown_propagate_with_their_how)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_kinds, NULL), 0);
	harness_checks_assert();
}
END_TEST

static void body_exit_soon(void *arg)
{
	smarm_chan_t *go = arg;
	int v;
	smarm_chan_recv(go, &v);
}

static void root_normal(void *arg)
{
	smarm_chan_t *go = NULL;
	smarm_pid_t a, b;
	int how = -1, v = 1;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&go, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&a, body_exit_soon, go, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, body_link_park, &a, NULL), 0);
	while (harness_actor_stat(SMARM_STAT_LINKS) != 2)
		smarm_actor_yield();
	HARNESS_EQ(smarm_chan_send(go, &v), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	/* Normal does not propagate; the link is gone with a. */
	HARNESS_EQ(smarm_actor_sleep(MS(20)), 0);
	HARNESS_CHECK(smarm_actor_is_alive(b));
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
	HARNESS_EQ(smarm_actor_stop(b), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	harness_chan_drop(go);
}

START_TEST(test_link_normal_exit_does_not_propagate)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_normal, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* Linked to a, unlinks, then a crashes: b lives. */
static void body_link_unlink(void *arg)
{
	smarm_pid_t a = *(smarm_pid_t *)arg;
	HARNESS_EQ(smarm_link(a), 0);
	HARNESS_EQ(smarm_link(a), 0); /* idempotent */
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 2);
	HARNESS_EQ(smarm_unlink(a), 0);
	HARNESS_EQ(smarm_unlink(a), 0);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
	HARNESS_EQ(smarm_link(smarm_actor_self()), 0); /* self: nothing */
	HARNESS_EQ(smarm_unlink(smarm_actor_self()), 0);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
	harness_park();
}

static void root_unlink(void *arg)
{
	smarm_pid_t a, b;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, body_link_unlink, &a, NULL), 0);
	HARNESS_EQ(smarm_actor_sleep(MS(20)), 0);
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_CRASHED, 1), 0);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_sleep(MS(20)), 0);
	HARNESS_CHECK(smarm_actor_is_alive(b));
	HARNESS_EQ(smarm_actor_stop(b), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
}

START_TEST(test_link_unlink_prevents_propagation)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_unlink, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * A hub linked to more peers than its state holds inline (two): each
 * peer links to it, one of them (in the middle of its list) unlinks
 * again, then the hub crashes: every other peer ends alike, that one
 * lives. Counts go 2 per link, back to 0.
 */
#define HUB_PEERS 6

static smarm_pid_t hub;		   /* the peers read it */
static smarm_chan_t *hub_unlinked; /* the unlinker's word that it has */

static void body_hub_peer(void *arg)
{
	(void)arg;
	HARNESS_EQ(smarm_link(hub), 0);
	harness_park();
}

static void body_hub_unlinker(void *arg)
{
	int one = 1;
	(void)arg;
	HARNESS_EQ(smarm_link(hub), 0);
	HARNESS_CHECK(harness_await_stat(smarm_node_current(), SMARM_STAT_LINKS,
					 2 * HUB_PEERS));
	HARNESS_EQ(smarm_unlink(hub), 0);
	HARNESS_EQ(smarm_chan_send(hub_unlinked, &one), 0);
	harness_park();
}

static void root_hub(void *arg)
{
	smarm_pid_t p[HUB_PEERS];
	int how = -1, v;
	intptr_t reason = 0;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&hub_unlinked, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&hub, body_park, NULL, NULL), 0);
	for (int i = 0; i < HUB_PEERS; i++)
		HARNESS_EQ(smarm_actor_spawn(&p[i],
					     i == 3 ? body_hub_unlinker
						    : body_hub_peer,
					     NULL, NULL),
			   0);
	/*
	 * The unlinker's word, not the count alone: 2 * (HUB_PEERS - 1)
	 * is also the count while five peers are linked and the unlinker
	 * is not yet, and the hub then crashed before it linked (seen
	 * in 3 of 35 ASan runs of the OTP suites, 2 to 4 at once).
	 */
	HARNESS_EQ(smarm_chan_recv(hub_unlinked, &v), 0);
	HARNESS_CHECK(harness_await_stat(smarm_node_current(), SMARM_STAT_LINKS,
					 2 * (HUB_PEERS - 1)));
	HARNESS_EQ(smarm_actor_send_exit(hub, SMARM_EXIT_CRASHED, 5), 0);
	HARNESS_EQ(smarm_actor_join(hub, NULL, NULL), 0);
	for (int i = 0; i < HUB_PEERS; i++) {
		if (i == 3)
			continue;
		HARNESS_EQ(smarm_actor_join(p[i], &how, &reason), 0);
		HARNESS_EQ(how, SMARM_EXIT_CRASHED);
		HARNESS_EQ(reason, 5);
	}
	HARNESS_CHECK(smarm_actor_is_alive(p[3]));
	HARNESS_EQ(smarm_actor_stop(p[3]), 0);
	HARNESS_EQ(smarm_actor_join(p[3], &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_STOPPED);
	HARNESS_CHECK(
		harness_await_stat(smarm_node_current(), SMARM_STAT_LINKS, 0));
	harness_chan_drop(hub_unlinked);
}

START_TEST(test_link_hub_of_many_peers_propagates_to_each)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_hub, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------ trapping */

static smarm_signal_t trap_got;

/* Trap, link to a, get one EXIT, keep running, end normally. */
static void body_trapper(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t a = *(smarm_pid_t *)arg;
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	HARNESS_EQ(smarm_link(a), 0);
	HARNESS_EQ(harness_recv_sig(ch, &trap_got), 0);
	HARNESS_EQ(smarm_actor_sleep(MS(5)), 0); /* not unwound */
	HARNESS_EQ(smarm_trap_exit(NULL), 0);
	harness_chan_drop(ch);
}

static void root_trap(void *arg)
{
	smarm_pid_t a, b;
	int how = -1;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, body_trapper, &a, NULL), 0);
	while (harness_actor_stat(SMARM_STAT_LINKS) != 2)
		smarm_actor_yield();
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_CRASHED, 77), 0);
	HARNESS_EQ(smarm_actor_join(b, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(trap_got.kind, SMARM_SIGNAL_EXIT);
	HARNESS_EQ(trap_got.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(trap_got.reason, 77);
	HARNESS_EQ(trap_got.ref, 0);
	HARNESS_CHECK(smarm_pid_eq(trap_got.from, a));
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
}

START_TEST(test_link_trapping_peer_gets_exit_message_and_survives)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_trap, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * OTP: a linked actor that ends normally sends {'EXIT', Pid, normal};
 * a trapping peer gets it as a message, one that unlinked first gets
 * nothing (unlink's promise), a non-trapping one ignores it.
 */
struct trap_normal {
	smarm_pid_t a;	     /* ends normally when go is sent */
	smarm_chan_t *ready; /* each trapper: linked (and maybe unlinked) */
	smarm_chan_t *ch[2]; /* the trappers' trap channels */
};

static void body_trap_normal(void *arg)
{
	struct trap_normal *t = arg;
	int v = 1;
	smarm_cleanup_push(count_cleanup, NULL);
	HARNESS_EQ(smarm_trap_exit(t->ch[0]), 0);
	HARNESS_EQ(smarm_link(t->a), 0);
	HARNESS_EQ(smarm_chan_send(t->ready, &v), 0);
	harness_park(); /* until stopped */
}

static void body_trap_unlinked(void *arg)
{
	struct trap_normal *t = arg;
	int v = 1;
	HARNESS_EQ(smarm_trap_exit(t->ch[1]), 0);
	HARNESS_EQ(smarm_link(t->a), 0);
	HARNESS_EQ(smarm_unlink(t->a), 0);
	HARNESS_EQ(smarm_chan_send(t->ready, &v), 0);
	harness_park();
}

static void root_trap_normal(void *arg)
{
	struct trap_normal t;
	smarm_chan_t *go = NULL;
	smarm_pid_t b, c, d;
	smarm_signal_t s = { 0 };
	int v = 1;
	(void)arg;
	atomic_store(&cleanups, 0);
	HARNESS_EQ(smarm_chan_alloc(&go, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&t.ready, sizeof v, NULL), 0);
	t.ch[0] = harness_sig_chan();
	t.ch[1] = harness_sig_chan();
	HARNESS_EQ(smarm_actor_spawn(&t.a, body_exit_soon, go, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, body_trap_normal, &t, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&c, body_trap_unlinked, &t, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&d, body_link_park, &t.a, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(t.ready, &v), 0);
	HARNESS_EQ(smarm_chan_recv(t.ready, &v), 0);
	while (harness_actor_stat(SMARM_STAT_LINKS) != 4) /* a-b, a-d */
		smarm_actor_yield();
	HARNESS_EQ(smarm_chan_send(go, &v), 0);
	HARNESS_EQ(smarm_actor_join(t.a, NULL, NULL), 0);
	HARNESS_EQ(harness_recv_sig(t.ch[0], &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_EXIT);
	HARNESS_EQ(s.how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(s.reason, 0);
	HARNESS_CHECK(smarm_pid_eq(s.from, t.a));
	/* The others: nothing, and d (not trapping) lives on. */
	HARNESS_EQ(smarm_actor_sleep(MS(20)), 0);
	HARNESS_EQ(harness_chan_len(t.ch[0]), 0);
	HARNESS_EQ(harness_chan_len(t.ch[1]), 0);
	HARNESS_CHECK(smarm_actor_is_alive(b));
	HARNESS_CHECK(smarm_actor_is_alive(d));
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
	HARNESS_EQ(atomic_load(&cleanups), 0);
	HARNESS_EQ(smarm_actor_stop(b), 0);
	HARNESS_EQ(smarm_actor_stop(c), 0);
	HARNESS_EQ(smarm_actor_stop(d), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(c, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(d, NULL, NULL), 0);
	harness_chan_drop(t.ch[0]);
	harness_chan_drop(t.ch[1]);
	harness_chan_drop(t.ready);
	harness_chan_drop(go);
}

START_TEST(test_link_normal_end_reaches_a_trapping_peer_only)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i, root_trap_normal, NULL), 0);
	harness_checks_assert();
}
END_TEST

static smarm_pid_t dead_pid;

static void body_link_dead(void *arg)
{
	(void)arg;
	smarm_link(dead_pid);
	HARNESS_CHECK(0); /* not reached: noproc ends a non-trapping caller */
}

static void body_link_dead_trapping(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_signal_t s;
	(void)arg;
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	HARNESS_EQ(smarm_link(dead_pid), 0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_EXIT);
	HARNESS_EQ(s.how, SMARM_EXIT_NOPROC);
	HARNESS_CHECK(smarm_pid_eq(s.from, dead_pid));
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
	HARNESS_EQ(smarm_trap_exit(NULL), 0);
	harness_chan_drop(ch);
}

static void body_nothing(void *arg)
{
	(void)arg;
}

static void root_link_dead(void *arg)
{
	smarm_pid_t c;
	int how = -1;
	intptr_t reason = 0;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&dead_pid, body_nothing, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(dead_pid, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&c, body_link_dead, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(c, &how, &reason), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(reason, SMARM_ENOPROC);
	HARNESS_EQ(smarm_actor_spawn(&c, body_link_dead_trapping, NULL, NULL),
		   0);
	HARNESS_EQ(smarm_actor_join(c, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
}

START_TEST(test_link_to_dead_pid_noproc_ends_or_messages_the_caller)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_link_dead, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------- spawn option */

static void body_crash_at_once(void *arg)
{
	smarm_actor_crash((intptr_t)arg);
}

/* Spawns a linked child that crashes at once, then parks: taken along. */
static void body_spawn_linked(void *arg)
{
	smarm_spawn_opts_t *o = arg;
	HARNESS_EQ(smarm_actor_spawn(NULL, body_crash_at_once, (void *)11, o),
		   0);
	harness_park();
}

static void body_spawn_linked_trapping(void *arg)
{
	smarm_spawn_opts_t *o = arg;
	smarm_chan_t *ch = harness_sig_chan();
	smarm_signal_t s;
	smarm_pid_t c;
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	for (int i = 0; i < 20; i++) {
		HARNESS_EQ(smarm_actor_spawn(&c, body_crash_at_once, (void *)12,
					     o),
			   0);
		HARNESS_EQ(harness_recv_sig(ch, &s), 0);
		HARNESS_EQ(s.kind, SMARM_SIGNAL_EXIT);
		HARNESS_CHECK(smarm_pid_eq(s.from, c));
		HARNESS_EQ(s.how, SMARM_EXIT_CRASHED);
		HARNESS_EQ(s.reason, 12);
		HARNESS_EQ(smarm_actor_join(c, NULL, NULL), 0);
	}
	HARNESS_EQ(smarm_trap_exit(NULL), 0);
	harness_chan_drop(ch);
}

static void root_spawn_link(void *arg)
{
	smarm_spawn_opts_t *o = NULL;
	smarm_pid_t p;
	int how = -1;
	intptr_t reason = 0;
	(void)arg;
	HARNESS_EQ(smarm_spawn_opts_alloc(&o), 0);
	HARNESS_EQ(smarm_spawn_opts_set_int(o, SMARM_OPT_LINK, 1), 0);
	for (int i = 0; i < 20; i++) {
		HARNESS_EQ(smarm_actor_spawn(&p, body_spawn_linked, o, NULL),
			   0);
		HARNESS_EQ(smarm_actor_join(p, &how, &reason), 0);
		HARNESS_EQ(how, SMARM_EXIT_CRASHED);
		HARNESS_EQ(reason, 11);
	}
	HARNESS_EQ(smarm_actor_spawn(&p, body_spawn_linked_trapping, o, NULL),
		   0);
	HARNESS_EQ(smarm_actor_join(p, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
	smarm_spawn_opts_free(o);
}

START_TEST(test_link_spawn_option_links_before_the_child_runs)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, root_spawn_link, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* The node default (a config value) links every spawn to its spawner;
 * a spawn option of 0 overrides it. */
static void root_link_default(void *arg)
{
	smarm_spawn_opts_t *o = NULL;
	smarm_pid_t c;
	int how = -1;
	(void)arg;
	HARNESS_EQ(smarm_spawn_opts_alloc(&o), 0);
	HARNESS_EQ(smarm_spawn_opts_set_int(o, SMARM_OPT_LINK, 0), 0);
	HARNESS_EQ(smarm_actor_spawn(&c, body_crash_at_once, (void *)21, o), 0);
	HARNESS_EQ(smarm_actor_join(c, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED); /* not linked: the root lives */
	smarm_spawn_opts_free(o);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
	HARNESS_EQ(
		smarm_actor_spawn(NULL, body_crash_at_once, (void *)22, NULL),
		0);
	harness_park(); /* the linked child's crash ends the root */
	HARNESS_CHECK(0);
}

START_TEST(test_link_config_default_links_every_spawn)
{
	intptr_t reason = 0;
	harness_checks_reset();
	ck_assert_int_eq(harness_run_opt(2, SMARM_OPT_LINK, 1,
					 root_link_default, NULL, &reason),
			 SMARM_EXIT_CRASHED);
	ck_assert_int_eq(reason, 22);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------- errors */

static void root_errors(void *arg)
{
	smarm_chan_t *bad = NULL, *freed = NULL;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&bad, SIG_SZ + 1, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&freed, SIG_SZ, NULL), 0);
	harness_chan_drop(freed);
	HARNESS_EQ(smarm_link(SMARM_PID_NONE), SMARM_EINVAL);
	HARNESS_EQ(smarm_unlink(SMARM_PID_NONE), SMARM_EINVAL);
	HARNESS_EQ(smarm_trap_exit(bad), SMARM_EINVAL);
	HARNESS_EQ(smarm_trap_exit((smarm_chan_t *)&bad), SMARM_EINVAL);
	HARNESS_EQ(smarm_trap_exit(freed), SMARM_ESTATE);
	HARNESS_EQ(smarm_trap_exit(NULL), 0); /* not trapping: fine */
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
	harness_chan_drop(bad);
}

START_TEST(test_link_misuse_returns_errors)
{
	smarm_pid_t p = { 1 };
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_errors, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(smarm_link(p), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_unlink(p), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_trap_exit(NULL), SMARM_ENOTACTOR);
}
END_TEST

/* ------------------------------------------------------ cascade */

#define CASCADE_N 10000
static smarm_pid_t cascade_head;
static _Atomic int cascade_built;

/* Each link of the chain spawns the next, linked, then parks. */
static void body_chain(void *arg)
{
	smarm_spawn_opts_t *o = arg;
	int left = atomic_fetch_add(&cascade_built, 1) + 1;
	if (left < CASCADE_N)
		HARNESS_EQ(smarm_actor_spawn(NULL, body_chain, o, o), 0);
	harness_park();
}

static void root_cascade(void *arg)
{
	smarm_spawn_opts_t *o = NULL, *head = NULL;
	int how = -1;
	(void)arg;
	atomic_store(&cascade_built, 0);
	HARNESS_EQ(smarm_spawn_opts_alloc(&o), 0);
	HARNESS_EQ(smarm_spawn_opts_alloc(&head), 0);
	HARNESS_EQ(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_RESERVE, 8192),
		   0);
	HARNESS_EQ(smarm_spawn_opts_set_int(o, SMARM_OPT_STACK_MODE,
					    SMARM_STACK_DENSE),
		   0);
	HARNESS_EQ(smarm_spawn_opts_set_int(o, SMARM_OPT_LINK, 1), 0);
	/* The head is not linked to the root (it is joined instead). */
	HARNESS_EQ(smarm_actor_spawn(&cascade_head, body_chain, o, head), 0);
	HARNESS_CHECK(harness_await_stat(
		smarm_node_current(), SMARM_STAT_LIVE_ACTORS, CASCADE_N + 1));
	/* The link count is a gauge of its own, updated at another step
	 * of a spawn than the live count: it settles just after. */
	HARNESS_CHECK(harness_await_stat(smarm_node_current(), SMARM_STAT_LINKS,
					 2 * (CASCADE_N - 1)));
	HARNESS_EQ(smarm_actor_stop(cascade_head), 0);
	HARNESS_EQ(smarm_actor_join(cascade_head, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_STOPPED);
	HARNESS_CHECK(harness_await_stat(smarm_node_current(),
					 SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_LINKS), 0);
	smarm_spawn_opts_free(o);
	smarm_spawn_opts_free(head);
}

START_TEST(test_link_cascade_of_10000_all_end)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, root_cascade, NULL), 0);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_link_suite(void)
{
	Suite *s = suite_create("link");
	TCase *t = tcase_create("propagate");
	tcase_add_test(t, test_link_linked_pair_one_crashes_other_ends_alike);
	tcase_add_test(t, test_link_kill_and_shutdown_propagate_with_their_how);
	tcase_add_test(t, test_link_normal_exit_does_not_propagate);
	tcase_add_test(t, test_link_unlink_prevents_propagation);
	tcase_add_test(t, test_link_hub_of_many_peers_propagates_to_each);
	suite_add_tcase(s, t);
	t = tcase_create("trap");
	tcase_add_test(t,
		       test_link_trapping_peer_gets_exit_message_and_survives);
	tcase_add_loop_test(
		t, test_link_normal_end_reaches_a_trapping_peer_only, 1, 5);
	tcase_add_test(
		t, test_link_to_dead_pid_noproc_ends_or_messages_the_caller);
	suite_add_tcase(s, t);
	t = tcase_create("spawn");
	tcase_add_test(t, test_link_spawn_option_links_before_the_child_runs);
	tcase_add_test(t, test_link_config_default_links_every_spawn);
	suite_add_tcase(s, t);
	t = tcase_create("errors");
	tcase_add_test(t, test_link_misuse_returns_errors);
	suite_add_tcase(s, t);
	t = tcase_create("cascade");
	tcase_set_timeout(t, 120);
	tcase_add_test(t, test_link_cascade_of_10000_all_end);
	suite_add_tcase(s, t);
	return s;
}

SMARM_TEST_MAIN(link)
