/* SPDX-License-Identifier: MIT */
/*
 * test_server_hibernate.c - hibernating gen_servers over the test
 * plugin tests/plugins/probe.c ("hib": hibernate at every wait;
 * "hibafter": after 5 ms idle; its "hib" cast: smarm_gs_hibernate):
 * a hibernated server keeps its state across calls, answers casts,
 * infos, its timers and Downs, a status request and a shutdown as
 * before (terminate runs); a hibernated server keeps no cold block
 * (timers, monitors, tokens, a continue: gen_server.h struct gs_cold)
 * once none of it is in use, and makes it again on first use, its
 * timers, tokens, continues and status as before; its inbox channel,
 * freed as it hibernates (gen_server.c INV-7), is made again by the
 * message that wakes it (a cast, an info, a call, a burst the observer
 * sees queued; kept with a bound of its own, past which a send is
 * SMARM_EFULL), in send order, and by clients racing it; 100,000
 * hibernated servers are started and each is called once (4 workers;
 * the bench's
 * idle_bytes_server_hibernated measures 1M). Built again with
 * SERVER_HIB_MANY 1000000 it is the `slow` suite's server_million: a
 * million hibernated servers at once, each called, then shut down, with
 * the time and resident bytes per server on stderr.
 */
#include "harness.h"
#include "probe_events.h"

#include <smarm/smarm_plugin.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static smarm_plugin_t *pl;
static const smarm_behaviour_t *probe;

static void setup(void)
{
	char msg[256];
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_PROBE"), &pl, msg,
					   sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "probe", &probe), 0);
	harness_checks_reset();
	(void)probe_events_read();
}

static void teardown(void)
{
	if (pl != NULL)
		smarm_plugin_close(pl);
	pl = NULL;
}

static int64_t hibs(void)
{
	return harness_actor_stat(SMARM_STAT_HIBERNATIONS);
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

static int64_t call_sum(smarm_server_t *s, int64_t v)
{
	smarm_value_t a = { .type = SMARM_T_I64 }, r = { .type = SMARM_T_I64 };
	a.v.i = v;
	r.v.i = -1;
	HARNESS_EQ(smarm_server_call(s, "sum", &a, 1, &r, MS(5000)), 0);
	return r.v.i;
}

/* ------------------------------------------------------------ state */

static void state_root(void *arg)
{
	const char *args = arg;
	smarm_server_t *s = NULL;
	int64_t total = 0;
	HARNESS_EQ(smarm_server_start(probe, args, NULL, &s), 0);
	for (int64_t i = 1; i <= 200; i++) {
		int64_t before = hibs();
		total += i;
		HARNESS_EQ(call_sum(s, i), total);
		if (i % 20 == 0) /* idle: it hibernates again */
			HARNESS_CHECK(hib_past(before));
	}
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

START_TEST(test_state_survives)
{
	ck_assert_int_eq(harness_run(4, state_root, "hib"), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

START_TEST(test_hibernate_after)
{
	ck_assert_int_eq(harness_run(2, state_root, "hibafter"),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* The "hib" cast: one hibernation on request, then parks as usual. */
static void cast_root(void *arg)
{
	(void)arg;
	smarm_server_t *s = NULL;
	int64_t before;
	HARNESS_EQ(smarm_server_start(probe, NULL, NULL, &s), 0);
	HARNESS_EQ(call_sum(s, 5), 5);
	before = hibs();
	HARNESS_EQ(smarm_server_cast(s, "hib", NULL, 0), 0);
	HARNESS_CHECK(hib_past(before));
	HARNESS_EQ(call_sum(s, 6), 11);
	before = hibs();
	smarm_actor_sleep(MS(20));
	HARNESS_EQ(hibs(), before); /* the request was one-shot */
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

START_TEST(test_hibernate_cast)
{
	ck_assert_int_eq(harness_run(2, cast_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_str_eq(probe_events_read(), "init hib:0 term:3:0:0 destroy");
}
END_TEST

/* ------------------------------------------- messages of every kind */

static void kid(void *arg)
{
	(void)arg;
	smarm_actor_sleep(MS(30));
}

/* A hibernated server (just started) woken by a cast (cnote:1), then by
 * an info (note:2), hibernating again after each. */
static void cast_then_info(smarm_server_t *s)
{
	smarm_value_t a = { .type = SMARM_T_I64 };
	int64_t before;
	HARNESS_CHECK(hib_past(0));
	before = hibs();
	a.v.i = 1;
	HARNESS_EQ(smarm_server_cast(s, "cnote", &a, 1), 0);
	HARNESS_CHECK(hib_past(before));
	before = hibs();
	a.v.i = 2;
	HARNESS_EQ(smarm_server_info(s, "note", &a, 1), 0);
	HARNESS_CHECK(hib_past(before));
}

static void kinds_root(void *arg)
{
	(void)arg;
	smarm_server_t *s = NULL;
	smarm_value_t a = { .type = SMARM_T_I64 }, r = { .type = SMARM_T_I32 };
	smarm_value_t t[2] = { { .type = SMARM_T_U64 },
			       { .type = SMARM_T_U64 } };
	smarm_server_status_t st = { .struct_size = sizeof st };
	smarm_pid_t k;
	int64_t before;

	HARNESS_EQ(smarm_server_start(probe, "hib", NULL, &s), 0);
	cast_then_info(s);
	/* Its own timer fires while it is hibernated (note:<delay>). */
	t[0].v.u = MS(10);
	t[1].v.u = 0;
	HARNESS_EQ(smarm_server_call(s, "tick_after", t, 2, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 0);
	before = hibs();
	smarm_actor_sleep(MS(40));
	HARNESS_CHECK(hibs() > before);
	/* A Down. */
	HARNESS_EQ(smarm_actor_spawn(&k, kid, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_detach(k), 0);
	r.type = SMARM_T_I32;
	a.type = SMARM_T_PID;
	a.v.pid = k;
	HARNESS_EQ(smarm_server_call(s, "monitor", &a, 1, &r, MS(5000)), 0);
	smarm_actor_sleep(MS(80)); /* it ends; the Down wakes the server */
	/* A status (a system message), state intact. */
	HARNESS_EQ(smarm_server_get_status(s, &st, MS(5000)), 0);
	HARNESS_EQ(st.monitors, 0);
	HARNESS_EQ(call_sum(s, 40), 40);
	HARNESS_EQ(call_sum(s, 2), 42);
	smarm_actor_sleep(MS(5));
	/* A shutdown of a hibernated server: terminate runs. */
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

START_TEST(test_every_kind)
{
	char want[128];
	ck_assert_int_eq(harness_run(4, kinds_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	snprintf(want, sizeof want,
		 "init cnote:1 note:2 note:%llu down:%d term:3:0:0 destroy",
		 (unsigned long long)MS(10), SMARM_EXIT_NORMAL);
	ck_assert_str_eq(probe_events_read(), want);
}
END_TEST

/* --------------------------------- the OTP's calls on a hibernated one */

static int64_t reg_stat(int stat)
{
	return harness_stat(smarm_node_current(), stat);
}

/*
 * A server that hibernates, then is monitored, linked, named, called
 * by name and by a new pid handle, asked for its status (a system
 * message) and stopped: each works, it hibernates again after each,
 * and the registry holds nothing of it while it has no name (its inbox
 * is found through its context, gen_server.c INV-5).
 */
static void otp_root(void *arg)
{
	(void)arg;
	smarm_node_t *node = smarm_node_current();
	smarm_server_t *s = NULL, *sn = NULL, *sp = NULL;
	smarm_chan_t *mon = NULL, *trap = NULL;
	smarm_server_status_t st = { .struct_size = sizeof st };
	smarm_actor_info_t in;
	smarm_signal_t sg;
	smarm_pid_t pid, who;
	uint64_t ref = 0;
	int64_t before, names0 = reg_stat(SMARM_STAT_REG_NAMES);
	int how = -1;
	intptr_t why = -1;

	HARNESS_EQ(smarm_chan_alloc(&mon, sizeof sg, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&trap, sizeof sg, NULL), 0);
	HARNESS_EQ(smarm_trap_exit(trap), 0);
	before = hibs();
	HARNESS_EQ(smarm_server_start(probe, "hib", NULL, &s), 0);
	if (s == NULL)
		return;
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	HARNESS_CHECK(hib_past(before));
	/* No name: no registry record, no published mailbox. */
	HARNESS_EQ(reg_stat(SMARM_STAT_REG_MAILBOXES), 0);
	HARNESS_EQ(call_sum(s, 1), 1);
	memset(&in, 0xa5, sizeof in);
	in.size = sizeof in;
	HARNESS_EQ(smarm_actor_info(node, pid, &in), 0);
	HARNESS_CHECK(in.flags & SMARM_ACTOR_SERVER);
	HARNESS_EQ(in.mailbox_depth, 0); /* its inbox, with no record */

	/* Monitored and linked while hibernated. */
	before = hibs();
	smarm_actor_sleep(MS(5));
	HARNESS_EQ(smarm_monitor(pid, mon, &ref), 0);
	HARNESS_EQ(smarm_link(pid), 0);
	/* Named from outside; called by name, then by a new pid handle. */
	HARNESS_EQ(smarm_register_pid("hib_otp", pid, NULL), 0);
	HARNESS_EQ(smarm_whereis("hib_otp", &who), 0);
	HARNESS_CHECK(smarm_pid_eq(who, pid));
	HARNESS_EQ(smarm_server_open_name(node, probe, "hib_otp", &sn), 0);
	HARNESS_EQ(smarm_server_open(node, probe, pid, &sp), 0);
	if (sn != NULL)
		HARNESS_EQ(call_sum(sn, 2), 3);
	HARNESS_CHECK(hib_past(before));
	before = hibs();
	if (sp != NULL)
		HARNESS_EQ(call_sum(sp, 3), 6);
	HARNESS_CHECK(hib_past(before));
	/* A system message: its status, its state intact after. */
	before = hibs();
	HARNESS_EQ(smarm_server_get_status(sp, &st, MS(5000)), 0);
	HARNESS_EQ(st.queued, 0);
	HARNESS_CHECK(hib_past(before));
	HARNESS_EQ(call_sum(s, 4), 10);
	/* Stopped: the stop's how reaches the monitor and the link. */
	HARNESS_EQ(smarm_server_stop(sn, SMARM_EXIT_SHUTDOWN, 77, MS(5000),
				     &how, &why),
		   0);
	HARNESS_EQ(how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(why, 77);
	HARNESS_EQ(harness_recv_sig(mon, &sg), 0);
	HARNESS_EQ(sg.kind, SMARM_SIGNAL_DOWN);
	HARNESS_EQ(sg.ref, ref);
	HARNESS_EQ(sg.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(sg.reason, 77);
	HARNESS_EQ(harness_recv_sig(trap, &sg), 0);
	HARNESS_EQ(sg.kind, SMARM_SIGNAL_EXIT);
	HARNESS_CHECK(smarm_pid_eq(sg.from, pid));
	HARNESS_EQ(sg.how, SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(sg.reason, 77);
	/* Gone: its name with it; a call is refused. */
	HARNESS_EQ(smarm_whereis("hib_otp", &who), SMARM_ENONAME);
	HARNESS_EQ(reg_stat(SMARM_STAT_REG_NAMES), names0);
	HARNESS_EQ(reg_stat(SMARM_STAT_REG_MAILBOXES), 0);
	{
		smarm_value_t a = { .type = SMARM_T_I64 },
			      r = { .type = SMARM_T_I64 };
		HARNESS_EQ(smarm_server_call(sp, "sum", &a, 1, &r, MS(5000)),
			   SMARM_ENOPROC);
	}
	HARNESS_EQ(smarm_trap_exit(NULL), 0);
	smarm_server_free(sp);
	smarm_server_free(sn);
	smarm_server_free(s);
	harness_chan_drop(mon);
	harness_chan_drop(trap);
}

START_TEST(test_otp_calls_on_hibernated)
{
	char want[64];
	ck_assert_int_eq(harness_run(4, otp_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	snprintf(want, sizeof want, "init term:%d:77:1 destroy",
		 SMARM_EXIT_SHUTDOWN);
	ck_assert_str_eq(probe_events_read(), want);
}
END_TEST

/* ------------------------------------- the inbox, dropped while hibernated */

/* Its inbox's depth as the observer reads it (smarm_actor_info). */
static uint32_t inbox_depth(smarm_pid_t pid)
{
	smarm_actor_info_t in;
	memset(&in, 0, sizeof in);
	in.size = sizeof in;
	HARNESS_EQ(smarm_actor_info(NULL, pid, &in), 0);
	return in.mailbox_band[SMARM_BAND_INBOX];
}

/*
 * One worker, so the client runs on until it waits: a hibernated server
 * (its inbox dropped, or kept with its own bound: "qlimit", 4) is woken
 * by a cast, an info and a call in turn, then by a burst that the
 * observer sees queued (made again by the burst's first send) and, with
 * the bound, that goes past it (SMARM_EFULL); every accepted message is
 * served in send order.
 */
static void wake_root(void *arg)
{
	const char *args = arg;
	bool bound = strstr(args, "qlimit") != NULL;
	smarm_server_t *s = NULL;
	smarm_value_t a = { .type = SMARM_T_I64 };
	smarm_pid_t pid;
	int64_t before;
	int rc = 0, sent = 0;

	HARNESS_EQ(smarm_server_start(probe, args, NULL, &s), 0);
	HARNESS_EQ(smarm_server_pid(s, &pid), 0);
	cast_then_info(s);
	before = hibs();
	HARNESS_EQ(call_sum(s, 7), 7);
	HARNESS_CHECK(hib_past(before));
	/* The burst: nothing runs the server before this actor waits. */
	HARNESS_EQ(inbox_depth(pid), 0);
	for (int i = 0; i < 40 && rc == 0; i++) {
		a.v.i = 10 + i;
		rc = smarm_server_cast(s, "cnote", &a, 1);
		sent += rc == 0;
		if (i == 2 && rc == 0)
			HARNESS_EQ(inbox_depth(pid), 3);
	}
	HARNESS_EQ(rc, bound ? SMARM_EFULL : 0);
	HARNESS_EQ(sent, bound ? 4 : 40);
	HARNESS_EQ(inbox_depth(pid), (uint32_t)sent);
	/* A bounded one is full: the call waits until it has room. */
	for (int i = 0; i < 5000 && inbox_depth(pid) != 0; i++)
		smarm_actor_sleep(US(200));
	HARNESS_EQ(call_sum(s, 1), 8); /* after every cast of the burst */
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
}

static void wake_check(const char *args, const char *first)
{
	char want[1024];
	size_t n;
	ck_assert_int_eq(harness_run(1, wake_root, (void *)args),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	n = (size_t)snprintf(want, sizeof want, "%scnote:1 note:2", first);
	for (int i = 0; i < (strstr(args, "qlimit") ? 4 : 40); i++)
		n += (size_t)snprintf(want + n, sizeof want - n, " cnote:%d",
				      10 + i);
	snprintf(want + n, sizeof want - n, " term:3:0:0 destroy");
	ck_assert_str_eq(probe_events_read(), want);
}

START_TEST(test_inbox_dropped_woken_each_way)
{
	wake_check("hib", "init ");
}
END_TEST

START_TEST(test_inbox_bounded_woken_past_bound)
{
	wake_check("hib,qlimit", "init qlimit:0 ");
}
END_TEST

#define RACE_CLIENTS 8
#define RACE_CALLS 300

struct racer {
	smarm_pid_t pid;   /* the server */
	smarm_chan_t *out; /* its status when done */
};

/* A client of its own (its own cached inbox handle, stale after each
 * hibernation): RACE_CALLS calls of sum 1, some casts between. */
static void racer(void *arg)
{
	struct racer *r = arg;
	smarm_server_t *s = NULL;
	smarm_value_t a = { .type = SMARM_T_I64 }, v = { .type = SMARM_T_I64 };
	int64_t rc = smarm_server_open(NULL, probe, r->pid, &s);
	for (int i = 0; rc == 0 && i < RACE_CALLS; i++) {
		a.v.i = 1;
		rc = smarm_server_call(s, "sum", &a, 1, &v, MS(10000));
		if (rc == 0 && i % 7 == 0)
			rc = smarm_server_cast(s, "hib", NULL, 0);
		if (i % 16 == 0)
			smarm_actor_sleep(US(100)); /* let it hibernate */
	}
	if (rc != 0)
		fprintf(stderr, "a racer's call or cast: %lld (%s)\n",
			(long long)rc, smarm_strerror((int)rc));
	smarm_server_free(s);
	(void)smarm_chan_send(r->out, &rc);
}

/*
 * RACE_CLIENTS clients on 4 workers call a server that hibernates at
 * every wait, so its inbox is dropped and made again (by a client or
 * by itself) over and over while the others send: every call is
 * answered, and counted once.
 */
static void race_root(void *arg)
{
	struct racer r;
	smarm_server_t *s = NULL;
	smarm_pid_t p;
	int64_t rc;
	(void)arg;
	HARNESS_EQ(smarm_server_start(probe, "hib", NULL, &s), 0);
	HARNESS_EQ(smarm_server_pid(s, &r.pid), 0);
	HARNESS_EQ(smarm_chan_alloc(&r.out, sizeof rc, NULL), 0);
	for (int i = 0; i < RACE_CLIENTS; i++) {
		HARNESS_EQ(smarm_actor_spawn(&p, racer, &r, NULL), 0);
		HARNESS_EQ(smarm_actor_detach(p), 0);
	}
	for (int i = 0; i < RACE_CLIENTS; i++) {
		rc = -1;
		HARNESS_EQ(smarm_chan_recv_timeout(r.out, &rc, MS(60000)), 0);
		HARNESS_EQ(rc, 0);
	}
	HARNESS_EQ(call_sum(s, 0), RACE_CLIENTS * RACE_CALLS);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
	smarm_chan_sender_free(r.out);
	smarm_chan_receiver_free(r.out);
}

START_TEST(test_inbox_made_again_by_racing_clients)
{
	ck_assert_int_eq(harness_run(4, race_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------ the cold block */

/* Bytes malloc has handed out and not had back (every arena). */
static int64_t heap_used(void)
{
	return (int64_t)mallinfo2().uordblks;
}

/* Wait until the node counts at least n hibernations. */
static bool hibs_reach(int64_t n)
{
	return harness_await_stat_to(smarm_node_current(),
				     SMARM_STAT_HIBERNATIONS, n, true);
}

#define COLD_N 256

/* Ask s for its status until its timers (or, monitors: its monitors)
 * are 0; false after 5 s. */
static bool status_until_none(smarm_server_t *s, bool monitors)
{
	smarm_server_status_t st = { .struct_size = sizeof st };
	uint64_t t0 = smarm_now_ns();
	for (;;) {
		if (smarm_server_get_status(s, &st, MS(5000)) != 0)
			return false;
		if ((monitors ? st.monitors : st.timers) == 0)
			return true;
		if (harness_since(t0) > MS(5000) * harness_time_scale())
			return false;
		smarm_actor_sleep(MS(2));
	}
}

/*
 * COLD_N hibernated servers each arm a timer (their cold block is made),
 * which fires while they are hibernated; once all hibernate again the
 * heap is back where it was: each freed its block (about 336 bytes with
 * its timers: 86 KB for all if kept). Round 0 primes the node's own
 * structures (timer heap, reply channels); round 1 is measured.
 */
static void cold_heap_root(void *arg)
{
	smarm_server_t **s = calloc(COLD_N, sizeof *s);
	smarm_value_t t[2] = { { .type = SMARM_T_U64 },
			       { .type = SMARM_T_U64 } };
	smarm_value_t r = { .type = SMARM_T_I32 };
	int64_t before, used0, used1, polls;
	(void)arg;
	HARNESS_CHECK(s != NULL);
	if (s == NULL)
		return;
	before = hibs();
	for (int i = 0; i < COLD_N; i++)
		HARNESS_EQ(smarm_server_start(probe, "hib", NULL, &s[i]), 0);
	HARNESS_CHECK(hibs_reach(before + COLD_N));
	for (int round = 0; round < 2; round++) {
		used0 = heap_used();
		t[0].v.u = MS(1);
		t[1].v.u = 0;
		for (int i = 0; i < COLD_N; i++) {
			HARNESS_EQ(smarm_server_call(s[i], "tick_after", t, 2,
						     &r, MS(5000)),
				   0);
			HARNESS_EQ(r.v.i, 0);
		}
		/* Each fires its timer; a status request (after which it
		 * hibernates again, its block freed) says when. */
		smarm_actor_sleep(MS(10));
		before = hibs();
		polls = 0;
		for (int i = 0; i < COLD_N; i++) {
			smarm_server_status_t st = { .struct_size = sizeof st };
			do {
				HARNESS_EQ(smarm_server_get_status(s[i], &st,
								   MS(5000)),
					   0);
				polls++;
			} while (st.timers != 0 && polls < 100 * COLD_N);
		}
		HARNESS_CHECK(hibs_reach(before + polls));
		used1 = heap_used();
		if (round == 1 && used1 - used0 >= COLD_N * 168)
			fprintf(stderr, "heap grew %lld bytes: blocks kept\n",
				(long long)(used1 - used0));
		HARNESS_CHECK(round == 0 || used1 - used0 < COLD_N * 168);
	}
	for (int i = 0; i < COLD_N; i++) {
		HARNESS_EQ(smarm_server_shutdown(s[i], MS(5000), NULL), 0);
		smarm_server_free(s[i]);
	}
	free(s);
}

START_TEST(test_cold_block_freed_when_hibernated)
{
	ck_assert_int_eq(harness_run(4, cold_heap_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

struct later {
	smarm_server_t *s;
	smarm_chan_t *out; /* its reply's value, then its status */
};

static void later_caller(void *arg)
{
	struct later *c = arg;
	smarm_value_t r = { .type = SMARM_T_I64 };
	int rc = smarm_server_call(c->s, "later", NULL, 0, &r, MS(10000));
	int64_t v = rc == 0 ? r.v.i : -12345, rc64 = rc;
	(void)smarm_chan_send(c->out, &v);
	(void)smarm_chan_send(c->out, &rc64);
}

/*
 * One hibernated server uses each part of its cold block in turn, and
 * hibernates between (the block freed when nothing is in use): a timer
 * (its status counts it while armed), a token left live across a
 * hibernation and answered after it, a continue, a second timer (a new
 * block), a monitor and its Down; its state and calls stay intact.
 */
static void cold_uses_root(void *arg)
{
	smarm_server_t *s = NULL;
	smarm_server_status_t st = { .struct_size = sizeof st };
	smarm_value_t t[2] = { { .type = SMARM_T_U64 },
			       { .type = SMARM_T_U64 } };
	smarm_value_t r = { .type = SMARM_T_I32 }, a = { .type = SMARM_T_I64 };
	struct later lc = { 0 };
	int64_t before, v = 0, rc = -1;
	smarm_pid_t k;
	(void)arg;

	before = hibs();
	HARNESS_EQ(smarm_server_start(probe, "hib", NULL, &s), 0);
	if (s == NULL)
		return;
	HARNESS_CHECK(hib_past(before));
	HARNESS_EQ(smarm_server_get_status(s, &st, MS(5000)), 0);
	HARNESS_EQ(st.timers, 0);
	/* A timer: armed across a hibernation, it fires. */
	t[0].v.u = MS(30);
	t[1].v.u = 0;
	HARNESS_EQ(smarm_server_call(s, "tick_after", t, 2, &r, MS(5000)), 0);
	HARNESS_EQ(smarm_server_get_status(s, &st, MS(5000)), 0);
	HARNESS_EQ(st.timers, 1);
	HARNESS_CHECK(status_until_none(s, false)); /* it fired */
	before = hibs();
	HARNESS_EQ(call_sum(s, 5), 5);
	HARNESS_CHECK(hib_past(before));
	/* A token live across a hibernation, answered after it. */
	lc.s = s;
	HARNESS_EQ(smarm_chan_alloc(&lc.out, sizeof(int64_t), NULL), 0);
	before = hibs();
	HARNESS_EQ(smarm_actor_spawn(NULL, later_caller, &lc, NULL), 0);
	HARNESS_CHECK(hib_past(before)); /* it took the call, then slept */
	a.v.i = 77;
	HARNESS_EQ(smarm_server_cast(s, "answer", &a, 1), 0);
	HARNESS_EQ(smarm_chan_recv_timeout(lc.out, &v, MS(5000)), 0);
	HARNESS_EQ(smarm_chan_recv_timeout(lc.out, &rc, MS(5000)), 0);
	HARNESS_EQ(v, 77);
	HARNESS_EQ(rc, 0);
	/* A continue (its tag in the block), then a new timer. */
	t[0].v.u = 9;
	r.type = SMARM_T_U64;
	HARNESS_EQ(smarm_server_call(s, "cont", t, 1, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.u, 9);
	r.type = SMARM_T_I32;
	t[0].v.u = MS(1);
	HARNESS_EQ(smarm_server_call(s, "tick_after", t, 2, &r, MS(5000)), 0);
	HARNESS_EQ(r.v.i, 0);
	HARNESS_CHECK(status_until_none(s, false));
	/* A monitor and its Down while hibernated. */
	HARNESS_EQ(smarm_actor_spawn(&k, kid, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_detach(k), 0);
	a.type = SMARM_T_PID;
	a.v.pid = k;
	HARNESS_EQ(smarm_server_call(s, "monitor", &a, 1, &r, MS(5000)), 0);
	HARNESS_EQ(smarm_server_get_status(s, &st, MS(5000)), 0);
	HARNESS_EQ(st.monitors, 1);
	HARNESS_CHECK(status_until_none(s, true)); /* its Down came */
	HARNESS_EQ(call_sum(s, 6), 11);
	HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
	smarm_server_free(s);
	harness_chan_drop(lc.out);
}

START_TEST(test_cold_block_each_use)
{
	char want[256];
	ck_assert_int_eq(harness_run(4, cold_uses_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	snprintf(want, sizeof want,
		 "init note:%llu later:0:-3 answer:-3:-311:0 cont_req:0 "
		 "cont:9 note:%llu down:%d term:3:0:0 destroy",
		 (unsigned long long)MS(30), (unsigned long long)MS(1),
		 SMARM_EXIT_NORMAL);
	ck_assert_str_eq(probe_events_read(), want);
}
END_TEST

/* ------------------------------------------------------------- many */

#ifndef SERVER_HIB_MANY
#define SERVER_HIB_MANY 100000
#endif
#define MANY SERVER_HIB_MANY

static void many_root(void *arg)
{
	(void)arg;
	smarm_server_t **s = calloc(MANY, sizeof *s);
	smarm_node_t *node = smarm_node_current();
	uint64_t t0 = smarm_now_ns(), t1;
	long rss0 = harness_rss_bytes(), rss1;
	int started = 0;
	HARNESS_CHECK(s != NULL);
	for (; s != NULL && started < MANY; started++)
		if (smarm_server_start(probe, "hib", NULL, &s[started]) != 0)
			break;
	HARNESS_EQ(started, MANY);
	HARNESS_CHECK(harness_await_stat(node, SMARM_STAT_HIBERNATIONS, MANY) ||
		      hibs() >= MANY);
	t1 = smarm_now_ns();
	rss1 = harness_rss_bytes();
	/* Hibernated: (almost) no stack is attached. */
	HARNESS_CHECK(harness_stat(node, SMARM_STAT_STACKS_DENSE) +
			      harness_stat(node, SMARM_STAT_STACKS_GUARDED) <
		      MANY / 10);
	for (int i = 0; i < started; i++)
		HARNESS_EQ(call_sum(s[i], i), i);
	fprintf(stderr,
		"# %d servers hibernated in %.1f s, %.0f B resident each "
		"(client handles included), each called in %.1f s\n",
		started, (double)(t1 - t0) / 1e9,
		(double)(rss1 - rss0) / (started ? started : 1),
		(double)harness_since(t1) / 1e9);
	for (int i = 0; i < started; i++) {
		(void)smarm_server_shutdown(s[i], MS(10000), NULL);
		smarm_server_free(s[i]);
	}
	free(s);
}

START_TEST(test_many_servers)
{
	ck_assert_int_eq(harness_run_opt(4, SMARM_OPT_STACK_MODE,
					 SMARM_STACK_DENSE, many_root, NULL,
					 NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

#if SERVER_HIB_MANY > 100000
#define SUITE_NAME server_million
#else
#define SUITE_NAME server_hibernate
#endif
#define SUITE_FN_(n) smarm_test_##n##_suite
#define SUITE_FN(n) SUITE_FN_(n)
#define STR_(n) #n
#define STR(n) STR_(n)

Suite *SUITE_FN(SUITE_NAME)(void)
{
	Suite *s = suite_create(STR(SUITE_NAME));
	TCase *tc = tcase_create("server");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, SERVER_HIB_MANY > 100000 ? 900 : 240);
	tcase_add_test(tc, test_state_survives);
	tcase_add_test(tc, test_hibernate_after);
	tcase_add_test(tc, test_hibernate_cast);
	tcase_add_test(tc, test_every_kind);
	tcase_add_test(tc, test_otp_calls_on_hibernated);
	tcase_add_test(tc, test_cold_block_freed_when_hibernated);
	tcase_add_test(tc, test_cold_block_each_use);
	tcase_add_test(tc, test_inbox_dropped_woken_each_way);
	tcase_add_test(tc, test_inbox_bounded_woken_past_bound);
	tcase_add_test(tc, test_inbox_made_again_by_racing_clients);
	tcase_add_test(tc, test_many_servers);
	suite_add_tcase(s, tc);
	return s;
}

#if SERVER_HIB_MANY > 100000
SMARM_TEST_MAIN(server_million)
#else
SMARM_TEST_MAIN(server_hibernate)
#endif
