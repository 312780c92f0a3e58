/* SPDX-License-Identifier: MIT */
/*
 * test_otp_faults.c - the OTP layer where things go wrong: a per-actor
 * state block that cannot be allocated (the node's test-only allocation
 * failure hook) leaves no state, count or reference behind; a Down whose
 * channel cannot take it is not lost (the watcher is crashed, or a
 * trapping one told); a trapping actor whose trap channel is dead acts as
 * if it did not trap; a monitor of an ended actor not yet joined reports
 * how it really ended; the root-exit orphan table stays bounded while a
 * draining parent spawns and reaps many children; a slot's links and
 * monitors room is made on first use, and its failure leaves nothing.
 */
#include "harness.h"

#include "core/node.h"
#include "core/slot.h"
#include "otp/sig.h"

#define SIG_SZ sizeof(smarm_signal_t)

/* The caller's own node, as the internal struct. */
static struct smarm_node *node_self(void)
{
	return smarm_node_current();
}

static void body_crash(void *arg)
{
	smarm_actor_crash((intptr_t)arg);
}

static void body_park(void *arg)
{
	(void)arg;
	harness_park();
}

/* A receiver-less channel of signals: the caller keeps its sender. */
static smarm_chan_t *dead_chan(void)
{
	smarm_chan_t *ch = harness_sig_chan();
	HARNESS_EQ(smarm_chan_receiver_free(ch), 0);
	return ch;
}

/* ------------------------------------------------ allocation failure */

static void trap_under_fault(void *arg)
{
	struct smarm_node *n = node_self();
	smarm_chan_t *ch = harness_sig_chan();
	(void)arg;
	atomic_store(&n->test_ext_fail, 1);
	HARNESS_EQ(smarm_trap_exit(ch), SMARM_ENOMEM);
	HARNESS_EQ(atomic_load(&n->test_ext_fail), 0);
	harness_chan_drop(ch);
}

static void root_enomem(void *arg)
{
	struct smarm_node *n = node_self();
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t p, q, r;
	smarm_signal_t s;
	(void)arg;
	/* Fresh slots: their first state needs the block allocated. */
	HARNESS_EQ(smarm_actor_spawn(&p, body_park, NULL, NULL), 0);
	atomic_store(&n->test_ext_fail, 1);
	HARNESS_EQ(smarm_link(p), SMARM_ENOMEM);
	HARNESS_EQ(atomic_load(&n->test_ext_fail), 0); /* it was reached */
	HARNESS_EQ(harness_stat(n, SMARM_STAT_LINKS), 0);

	HARNESS_EQ(smarm_actor_spawn(&q, body_park, NULL, NULL), 0);
	atomic_store(&n->test_ext_fail, 1);
	HARNESS_EQ(smarm_monitor(q, ch, NULL), SMARM_ENOMEM);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_MONITORS), 0);

	HARNESS_EQ(smarm_actor_spawn(&r, trap_under_fault, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(r, NULL, NULL), 0);

	/* Nothing was left half-made: both still work, end and report. */
	HARNESS_EQ(smarm_monitor(p, ch, NULL), 0);
	HARNESS_EQ(smarm_monitor(q, ch, NULL), 0);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_MONITORS), 2);
	HARNESS_EQ(smarm_actor_stop(p), 0);
	HARNESS_EQ(smarm_actor_stop(q), 0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(q, NULL, NULL), 0);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_MONITORS), 0);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_LINKS), 0);
	harness_chan_drop(ch);
}

START_TEST(test_otp_faults_enomem_leaves_no_state)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, root_enomem, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* The rooms of p's slot (core subsys.h struct smarm__ext), or NULL. */
static void *rooms_of(struct smarm_node *n, smarm_pid_t p)
{
	struct smarm__slot *s = smarm__slot_of(n, p.id);
	void *r = NULL;
	smarm__lock(&s->cold, SMARM__RANK_SLOT);
	if (s->ext != NULL)
		r = s->ext->x_rooms;
	smarm__unlock(&s->cold, SMARM__RANK_SLOT);
	return r;
}

/*
 * The links and monitors room of a slot is made when a tenant first
 * needs it: an actor with a label (a server's) has a block and no
 * rooms. The rooms' own allocation failing is
 * an ENOMEM like the block's: nothing is left linked or monitored, and
 * the next try makes them.
 */
static void root_rooms(void *arg)
{
	struct smarm_node *n = node_self();
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t p;
	smarm_signal_t s;
	void *rooms;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&p, body_park, NULL, NULL), 0);
	/* A label (a server's): the block, no rooms. */
	HARNESS_EQ(smarm__actor_label_set(n, p.id, SMARM__LABEL_BEHAVIOUR,
					  "gen_server 'rooms'"),
		   0);
	HARNESS_CHECK(smarm__slot_of(n, p.id)->ext != NULL);
	HARNESS_CHECK(rooms_of(n, p) == NULL); /* never linked */
	atomic_store(&n->test_ext_fail, 1);
	HARNESS_EQ(smarm_link(p), SMARM_ENOMEM);
	HARNESS_EQ(atomic_load(&n->test_ext_fail), 0); /* it was reached */
	HARNESS_EQ(harness_stat(n, SMARM_STAT_LINKS), 0);
	atomic_store(&n->test_ext_fail, 1);
	HARNESS_EQ(smarm_monitor(p, ch, NULL), SMARM_ENOMEM);
	HARNESS_EQ(atomic_load(&n->test_ext_fail), 0);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_MONITORS), 0);
	HARNESS_CHECK(rooms_of(n, p) == NULL);
	/* Now they are made, and stay for the slot's next tenants. */
	HARNESS_EQ(smarm_monitor(p, ch, NULL), 0);
	rooms = rooms_of(n, p);
	HARNESS_CHECK(rooms != NULL);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_MONITORS), 1);
	HARNESS_EQ(smarm_actor_stop(p), 0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
	HARNESS_CHECK(smarm_pid_eq(s.from, p));
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_MONITORS), 0);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_LINKS), 0);
	HARNESS_EQ(smarm_actor_spawn(&p, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_monitor(p, ch, NULL), 0); /* one worker: LIFO */
	HARNESS_CHECK(rooms_of(n, p) == rooms);
	HARNESS_EQ(smarm_actor_stop(p), 0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
	harness_chan_drop(ch);
}

START_TEST(test_otp_faults_rooms_on_first_use)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, root_rooms, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * The spawn options' link and monitor are set on the child before it is
 * published (core subsys.h ss_spawn): a child whose state cannot be
 * allocated is not spawned. The spawn fails with SMARM_ENOMEM, the body
 * never runs, nothing is left linked or monitored, and no Down comes.
 */
static atomic_int opt_body_ran;

static void body_mark(void *arg)
{
	(void)arg;
	atomic_store(&opt_body_ran, 1);
}

static void root_spawn_opts_enomem(void *arg)
{
	struct smarm_node *n = node_self();
	smarm_chan_t *ch = harness_sig_chan();
	smarm_spawn_opts_t *o = NULL;
	smarm_pid_t p = SMARM_PID_NONE;
	smarm_signal_t s;
	uint64_t ref = 0;
	int how = -1;
	(void)arg;
	atomic_store(&opt_body_ran, 0);
	HARNESS_EQ(smarm_spawn_opts_alloc(&o), 0);
	HARNESS_EQ(smarm_spawn_opts_set_int(o, SMARM_OPT_LINK, 1), 0);
	HARNESS_EQ(smarm_spawn_opts_set_monitor(o, ch, &ref), 0);
	/* The first spawn takes a fresh slot: its block is allocated. */
	atomic_store(&n->test_ext_fail, 1);
	HARNESS_EQ(smarm_actor_spawn(&p, body_mark, NULL, o), SMARM_ENOMEM);
	HARNESS_EQ(atomic_load(&n->test_ext_fail), 0); /* it was reached */
	HARNESS_CHECK(smarm_pid_eq(p, SMARM_PID_NONE));
	HARNESS_EQ(harness_stat(n, SMARM_STAT_LINKS), 0);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_MONITORS), 0);
	/* The refused child ends without running (and without a Down). */
	for (int i = 0; i < 100 && harness_stat(n, SMARM_STAT_LIVE_ACTORS) > 1;
	     i++)
		smarm_actor_sleep(1000000);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_LIVE_ACTORS), 1);
	HARNESS_EQ(atomic_load(&opt_body_ran), 0);
	HARNESS_EQ(smarm_chan_recv_timeout(ch, &s, 20000000), SMARM_ETIMEDOUT);

	/* The same options then work: linked, monitored, one Down. */
	HARNESS_EQ(smarm_actor_spawn(&p, body_mark, NULL, o), 0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
	HARNESS_EQ(s.ref, ref);
	HARNESS_EQ(s.how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(atomic_load(&opt_body_ran), 1);
	HARNESS_EQ(smarm_actor_join(p, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_LINKS), 0);
	HARNESS_EQ(harness_stat(n, SMARM_STAT_MONITORS), 0);
	smarm_spawn_opts_free(o);
	harness_chan_drop(ch);
}

START_TEST(test_otp_faults_spawn_option_enomem_spawns_nothing)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, root_spawn_opts_enomem, NULL), 0);
	ck_assert_int_eq(harness_run(4, root_spawn_opts_enomem, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------ undeliverable Down */

struct watch {
	smarm_pid_t target;
	smarm_chan_t *ready; /* told once the monitor is set */
};

/* Monitor the target into a dead channel, then wait to be told. */
static void watch_dead(void *arg)
{
	struct watch *wt = arg;
	smarm_chan_t *ch = dead_chan();
	int one = 1;
	HARNESS_EQ(smarm_monitor(wt->target, ch, NULL), 0);
	HARNESS_EQ(smarm_chan_sender_free(ch), 0); /* the runtime's is left */
	HARNESS_EQ(smarm_chan_send(wt->ready, &one), 0);
	harness_park();
}

/* The same, trapping exits into a live channel: it hears of the loss. */
static void watch_dead_trapping(void *arg)
{
	smarm_pid_t t = *(smarm_pid_t *)arg;
	smarm_chan_t *trap = harness_sig_chan();
	smarm_chan_t *ch = dead_chan();
	smarm_signal_t s;
	HARNESS_EQ(smarm_trap_exit(trap), 0);
	HARNESS_EQ(smarm_monitor(t, ch, NULL), 0);
	HARNESS_EQ(smarm_actor_stop(t), 0);
	HARNESS_EQ(harness_recv_sig(trap, &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_EXIT);
	HARNESS_CHECK(smarm_pid_eq(s.from, t));
	HARNESS_EQ(s.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(s.reason, SMARM_ECLOSED);
	harness_chan_drop(ch);
	harness_chan_drop(trap);
}

static void root_down_lost(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	struct watch wt = { SMARM_PID_NONE, NULL };
	smarm_pid_t t, w, dead;
	smarm_signal_t s;
	int how = -1, v;
	intptr_t reason = 0;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&wt.ready, sizeof v, NULL), 0);
	/* A non-trapping watcher whose Down cannot be queued crashes. */
	HARNESS_EQ(smarm_actor_spawn(&t, body_park, NULL, NULL), 0);
	wt.target = t;
	HARNESS_EQ(smarm_actor_spawn(&w, watch_dead, &wt, NULL), 0);
	HARNESS_EQ(smarm_monitor(w, ch, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(wt.ready, &v), 0);
	HARNESS_EQ(smarm_actor_stop(t), 0);
	if (harness_recv_sig(ch, &s) != 0) { /* lost: no hang either */
		HARNESS_CHECK(false);
		smarm_actor_stop(w);
		harness_recv_sig(ch, &s);
	}
	HARNESS_EQ(smarm_actor_join(w, &how, &reason), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(reason, SMARM_ECLOSED);
	HARNESS_EQ(smarm_actor_join(t, NULL, NULL), 0);

	/* A trapping one gets an EXIT in its trap channel instead. */
	HARNESS_EQ(smarm_actor_spawn(&t, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&w, watch_dead_trapping, &t, NULL), 0);
	HARNESS_EQ(smarm_actor_join(w, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(smarm_actor_join(t, NULL, NULL), 0);

	/* An immediate Down (a dead target) into a dead channel: the call
	 * fails and sets nothing. */
	HARNESS_EQ(smarm_actor_spawn(&dead, body_crash, (void *)3, NULL), 0);
	HARNESS_EQ(smarm_actor_join(dead, NULL, NULL), 0);
	{
		smarm_chan_t *d = dead_chan();
		uint64_t ref = 77;
		HARNESS_EQ(smarm_monitor(dead, d, &ref), SMARM_ECLOSED);
		HARNESS_EQ(ref, 77);
		harness_chan_drop(d);
	}
	HARNESS_EQ(harness_stat(node_self(), SMARM_STAT_MONITORS), 0);
	harness_chan_drop(wt.ready);
	harness_chan_drop(ch);
}

START_TEST(test_otp_faults_undeliverable_down_is_not_lost)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, root_down_lost, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------ dead trap channel */

static void trap_dead(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_chan_t *ready = arg;
	int one = 1;
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	HARNESS_EQ(smarm_chan_receiver_free(ch), 0); /* its mailbox dies */
	HARNESS_EQ(smarm_chan_send(ready, &one), 0);
	harness_park();
}

static void root_trap_dead(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_chan_t *ready = NULL;
	smarm_pid_t a;
	smarm_signal_t s;
	int v;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&ready, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&a, trap_dead, ready, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(ready, &v), 0);
	HARNESS_EQ(smarm_monitor(a, ch, NULL), 0);
	/* A normal signal to a non-trapping actor is ignored. */
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_NORMAL, 0), 0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), SMARM_EAGAIN);
	/* A crash signal ends it, as if it did not trap. */
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_CRASHED, 9), 0);
	if (harness_recv_sig(ch, &s) != 0) {
		HARNESS_CHECK(false); /* it lived on: end it anyway */
		smarm_actor_stop(a);
		harness_recv_sig(ch, &s);
	}
	HARNESS_EQ(s.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(s.reason, 9);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	harness_chan_drop(ready);
	harness_chan_drop(ch);
}

START_TEST(test_otp_faults_dead_trap_channel_acts_untrapped)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, root_trap_dead, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------ ended, not joined */

static void body_stop_self(void *arg)
{
	(void)arg;
	smarm_actor_stop(smarm_actor_self());
	smarm_actor_yield();
}

static void root_unjoined(void *arg)
{
	smarm_node_t *n = smarm_node_current();
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t a, b;
	smarm_signal_t s;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, body_crash, (void *)7, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, body_stop_self, NULL, NULL), 0);
	HARNESS_CHECK(harness_await_stat(n, SMARM_STAT_ENDED_UNJOINED, 2));
	HARNESS_EQ(smarm_monitor(a, ch, NULL), 0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), 0);
	HARNESS_CHECK(smarm_pid_eq(s.from, a));
	HARNESS_EQ(s.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(s.reason, 7);
	HARNESS_EQ(smarm_monitor(b, ch, NULL), 0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_STOPPED);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	/* Joined: the slot is gone, and so is what it knew. */
	HARNESS_EQ(smarm_monitor(a, ch, NULL), 0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_NOPROC);
	harness_chan_drop(ch);
}

START_TEST(test_otp_faults_monitor_of_unjoined_reports_its_end)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, root_unjoined, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------ orphan table */

#define DRAIN_CHILDREN 20000

static void body_nothing(void *arg)
{
	(void)arg;
}

static _Atomic uint32_t orph_cap_seen;

/* Traps the root's shutdown, then spawns and reaps while draining. */
static void drainer(void *arg)
{
	struct smarm_node *n = node_self();
	smarm_chan_t *trap = harness_sig_chan();
	smarm_chan_t *ready = arg;
	smarm_signal_t s;
	int one = 1;
	uint32_t cap = 0;
	HARNESS_EQ(smarm_trap_exit(trap), 0);
	HARNESS_EQ(smarm_chan_send(ready, &one), 0);
	HARNESS_EQ(harness_recv_sig(trap, &s), 0);
	HARNESS_EQ(s.how, SMARM_EXIT_SHUTDOWN);
	for (int i = 0; i < DRAIN_CHILDREN; i++) {
		smarm_pid_t c;
		if (smarm_actor_spawn(&c, body_nothing, NULL, NULL) != 0) {
			HARNESS_CHECK(false);
			break;
		}
		HARNESS_EQ(smarm_actor_join(c, NULL, NULL), 0);
	}
	smarm__lock(&n->orph_lock, SMARM__RANK_TABLE);
	cap = n->orph_cap;
	smarm__unlock(&n->orph_lock, SMARM__RANK_TABLE);
	atomic_store(&orph_cap_seen, cap);
	harness_chan_drop(trap);
}

static void root_drain(void *arg)
{
	smarm_chan_t *ready = NULL;
	smarm_pid_t d;
	int v;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&ready, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&d, drainer, ready, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(ready, &v), 0);
	harness_chan_drop(ready);
}

START_TEST(test_otp_faults_orphan_table_stays_bounded)
{
	harness_checks_reset();
	atomic_store(&orph_cap_seen, UINT32_MAX);
	ck_assert_int_eq(harness_run(2, root_drain, NULL), 0);
	harness_checks_assert();
	/* Children that ended free their entries: a handful at a time. */
	ck_assert_uint_le(atomic_load(&orph_cap_seen), 256);
}
END_TEST

/* The same scenarios on 4 workers (2 cores here): no order is assumed
 * beyond the handshakes, so each must hold under any interleaving. */
START_TEST(test_otp_faults_oversubscribed_scenarios_hold)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, root_down_lost, NULL), 0);
	ck_assert_int_eq(harness_run(4, root_trap_dead, NULL), 0);
	ck_assert_int_eq(harness_run(4, root_unjoined, NULL), 0);
	atomic_store(&orph_cap_seen, UINT32_MAX);
	ck_assert_int_eq(harness_run(4, root_drain, NULL), 0);
	harness_checks_assert();
	ck_assert_uint_le(atomic_load(&orph_cap_seen), 256);
}
END_TEST

Suite *smarm_test_otp_faults_suite(void)
{
	Suite *s = suite_create("otp_faults");
	TCase *t = tcase_create("faults");
	tcase_add_test(t, test_otp_faults_enomem_leaves_no_state);
	tcase_add_test(t, test_otp_faults_rooms_on_first_use);
	tcase_add_test(t, test_otp_faults_spawn_option_enomem_spawns_nothing);
	tcase_add_test(t, test_otp_faults_undeliverable_down_is_not_lost);
	tcase_add_test(t, test_otp_faults_dead_trap_channel_acts_untrapped);
	tcase_add_test(t, test_otp_faults_monitor_of_unjoined_reports_its_end);
	tcase_add_test(t, test_otp_faults_orphan_table_stays_bounded);
	tcase_add_test(t, test_otp_faults_oversubscribed_scenarios_hold);
	suite_add_tcase(s, t);
	return s;
}

SMARM_TEST_MAIN(otp_faults)
