/* SPDX-License-Identifier: MIT */
/*
 * test_gen_statem.c - gen_statem behaviours through the public API:
 * the loader's table checks, each refusal provoked by a broken plugin of
 * tests/plugins_bad/bad_sm.c with its status and a message naming the
 * machine, the state, the op and the row; then machines running, through
 * the gen_server client calls: the probe (tests/plugins_sm/probe.c),
 * whose log shows what ran in which state, for the cases of OTP's
 * gen_statem_SUITE (postpone ordering, state_timeout, event_order,
 * generic timers, timeout_cancel_and_update, state_enter) and the
 * event timeout, next events and repeat; a crashing action ends the
 * machine, not the node; an unhandled call and a call postponed when
 * the machine stops are SMARM_EDOWN at the caller; the door lock;
 * casts and infos a machine sends itself, a sibling machine called
 * from inside; raw reply targets (smarm_reply_to, OTP's
 * gen_statem:reply/2 with a From taken from a message): a machine
 * stores a (response channel, request id) pair from an info and
 * answers it later from another state, a plain actor and a plain
 * thread answer one, the requester's check_response and reqids match
 * the answer and a wrong id does not; the call's errors.
 */
#include "harness.h"

#include <pthread.h>

#include <smarm/smarm_plugin.h>

#include <dlfcn.h>

#include <string.h>

static char path[4096];
static char msg[512];

static const char *bad_sm(const char *variant)
{
	const char *dir = getenv("SMARM_TEST_BAD_DIR");
	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof path, "%s/bad_sm_%s.so", dir, variant);
	return path;
}

/* The open of variant fails with rc and its message has every needle. */
static void refused(const char *variant, int rc, const char *n1, const char *n2,
		    const char *n3)
{
	smarm_plugin_t *pl = NULL;
	msg[0] = '\0';
	ck_assert_int_eq(
		smarm_plugin_open(bad_sm(variant), &pl, msg, sizeof msg), rc);
	ck_assert_ptr_null(pl);
	ck_assert_msg(strstr(msg, "behaviour 'sm'") != NULL, "%s", msg);
	ck_assert_msg(strstr(msg, n1) != NULL, "%s: lacks %s", msg, n1);
	ck_assert_msg(n2 == NULL || strstr(msg, n2) != NULL, "%s: lacks %s",
		      msg, n2);
	ck_assert_msg(n3 == NULL || strstr(msg, n3) != NULL, "%s: lacks %s",
		      msg, n3);
}

START_TEST(test_gen_statem_load_checks_each_table)
{
	smarm_plugin_t *pl = NULL;
	const smarm_behaviour_t *be = NULL;

	ck_assert_int_eq(
		smarm_plugin_open(bad_sm("good"), &pl, msg, sizeof msg), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "sm", &be), 0);
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
	refused("malformed", SMARM_EPROTOCOL, "row 3", "state Open",
		"postpone");
	refused("notexh", SMARM_ENOTEXHAUSTIVE, "state Idle", "cast pull",
		NULL);
	refused("unreach", SMARM_EUNREACHABLE, "row 3", "state Open",
		"cast push");
}
END_TEST

/* ---- running machines ---- */

/* The probe's states. */
enum { A, B, C };

static smarm_plugin_t *g_pl;
static const smarm_behaviour_t *g_be;
static char g_out[16][1024]; /* what the roots observed */
static int g_rc[32];

static void open_probe(void)
{
	int rc = smarm_plugin_open(getenv("SMARM_TEST_SM_PROBE"), &g_pl, msg,
				   sizeof msg);
	ck_assert_msg(rc == 0, "open the probe: %d %s", rc, msg);
	ck_assert_int_eq(smarm_plugin_behaviour(g_pl, "probe", &g_be), 0);
}

static int cast0(smarm_server_t *s, const char *op)
{
	return smarm_server_cast(s, op, NULL, 0);
}

static int cast_i(smarm_server_t *s, const char *op, int64_t i)
{
	smarm_value_t v = { .type = SMARM_T_I32, .v.i = i };
	return smarm_server_cast(s, op, &v, 1);
}

static int cast_u(smarm_server_t *s, const char *op, uint64_t u)
{
	smarm_value_t v = { .type = SMARM_T_U64, .v.u = u };
	return smarm_server_cast(s, op, &v, 1);
}

static int call_i(smarm_server_t *s, const char *op, int64_t *out)
{
	smarm_value_t r = { 0 };
	int rc = smarm_server_call(s, op, NULL, 0, &r, MS(10000));
	if (rc == 0 && out != NULL)
		*out = r.v.i;
	smarm_value_release(&r);
	return rc;
}

/* The probe's last terminate (how, may_block, its sleep's status). */
static void term_seen(int out[3])
{
	void *dl =
		dlopen(getenv("SMARM_TEST_SM_PROBE"), RTLD_NOW | RTLD_NOLOAD);
	void (*f)(int *);
	out[0] = out[1] = out[2] = -200;
	if (dl == NULL)
		return;
	*(void **)&f = dlsym(dl, "sm_probe_term");
	if (f != NULL)
		f(out);
	dlclose(dl);
}

/* The probe's log since the last one, into g_out[i]. */
static void take_log(smarm_server_t *s, int i)
{
	smarm_value_t r = { 0 };
	int rc = smarm_server_call(s, "log", NULL, 0, &r, MS(10000));
	if (rc != 0) {
		snprintf(g_out[i], sizeof g_out[i], "<log: %d>", rc);
		return;
	}
	snprintf(g_out[i], sizeof g_out[i], "%.*s", (int)r.len,
		 (const char *)r.v.p);
	smarm_value_release(&r);
}

/* Poll the log until it holds want (10 s, scaled), appending to g_out[i]. */
static void await_log(smarm_server_t *s, int i, const char *want)
{
	uint64_t end = smarm_now_ns() + (uint64_t)(10e9 * harness_time_scale());
	char acc[1024] = "";
	while (strstr(acc, want) == NULL && smarm_now_ns() < end) {
		take_log(s, i);
		if (g_out[i][0] != '\0') {
			if (acc[0] != '\0')
				strncat(acc, " ", sizeof acc - strlen(acc) - 1);
			strncat(acc, g_out[i], sizeof acc - strlen(acc) - 1);
		}
		if (strstr(acc, want) == NULL)
			smarm_actor_sleep(MS(1));
	}
	snprintf(g_out[i], sizeof g_out[i], "%s", acc);
}

static smarm_server_t *start_probe(void)
{
	smarm_server_t *s = NULL;
	g_rc[31] = smarm_server_start(g_be, NULL, NULL, &s);
	return s;
}

static void stop_probe(smarm_server_t *s)
{
	int how = -1;
	smarm_server_shutdown(s, MS(10000), &how);
	smarm_server_free(s);
}

/* state_enter, postpone ordering, event_order, next events, repeat. */
static void order_root(void *arg)
{
	smarm_server_t *s = start_probe();
	(void)arg;
	if (s == NULL)
		return;
	take_log(s, 0); /* enter at start */
	cast_i(s, "go", B);
	cast_i(s, "ev", 1);
	cast_i(s, "ev", 2);
	cast_i(s, "go", B); /* a stay: no enter, no replay */
	cast0(s, "next2");  /* inserted before ev 3, still postponed */
	cast_i(s, "ev", 3);
	take_log(s, 1);
	cast_i(s, "go", C); /* replays 1 2 100 101 3 in C */
	cast_i(s, "ev", 4);
	take_log(s, 2);
	cast0(s, "repeat");  /* enter again, no replay */
	cast_i(s, "go", -1); /* the guard refuses: unhandled, dropped */
	take_log(s, 3);
	stop_probe(s);
}

START_TEST(test_gen_statem_enter_postpone_and_event_order)
{
	open_probe();
	harness_run(4, order_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_str_eq(g_out[0], "E0/0");
	ck_assert_str_eq(g_out[1], "go1@0 E1/0 go1@1 next2@1");
	ck_assert_str_eq(g_out[2], "go2@1 E2/1 ev1@2 ev2@2 ev100@2 ev101@2 "
				   "ev3@2 ev4@2");
	ck_assert_str_eq(g_out[3], "repeat@2:-3 E2/2");
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * state_timeout: a transition cancels it; it fires in the state that
 * armed it; generic timers survive a transition; a re-armed one fires
 * once (update); a cancelled one never (the t1 that follows proves the
 * time passed).
 */
static void timeout_root(void *arg)
{
	smarm_server_t *s = start_probe();
	(void)arg;
	if (s == NULL)
		return;
	take_log(s, 0);
	cast_u(s, "arm_st", MS(20));
	cast_i(s, "go", B); /* cancels the state timeout */
	cast_u(s, "arm_t", MS(60));
	await_log(s, 1, "t1@1");
	cast_u(s, "arm_st", MS(5));
	await_log(s, 2, "st@1");
	/* Generic: survives a transition, re-arming replaces. */
	cast_u(s, "arm_t", MS(1000));
	cast_i(s, "go", A);
	cast_u(s, "arm_t", MS(10));
	await_log(s, 3, "t1@0");
	/* Cancel: 0 while armed, ENOENT after. */
	cast_u(s, "arm_t", MS(5000));
	cast0(s, "cancel_t");
	cast0(s, "cancel_t");
	take_log(s, 4);
	cast_u(s, "arm_st", MS(30));
	await_log(s, 5, "st@0");
	stop_probe(s);
}

START_TEST(test_gen_statem_state_and_generic_timeouts)
{
	open_probe();
	harness_run(4, timeout_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_str_eq(g_out[1], "go1@0 E1/0 t1@1");
	ck_assert_str_eq(g_out[2], "st@1");
	ck_assert_str_eq(g_out[3], "go0@1 E0/1 t1@0");
	ck_assert_str_eq(g_out[4], "cancel0 cancel-7");
	ck_assert_str_eq(g_out[5], "st@0");
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * The event timeout: any event cancels it, a next event too (a zero one
 * with a next event pending never fires); alone it fires (the probe's
 * event timeout row stops it: the log calls of a poll are events too).
 */
static void event_timeout_root(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_server_t *s = start_probe();
	smarm_signal_t sig = { 0 };
	smarm_pid_t pid = SMARM_PID_NONE;
	(void)arg;
	if (s == NULL)
		return;
	take_log(s, 0);
	cast_u(s, "arm_ev", MS(30));
	cast_i(s, "ev", 1); /* cancels it */
	cast_u(s, "arm_t", MS(90));
	await_log(s, 1, "t1@0");
	cast0(s, "ev0next");
	take_log(s, 2);
	smarm_server_pid(s, &pid);
	smarm_monitor(pid, ch, NULL);
	cast_u(s, "arm_ev", MS(5));
	g_rc[0] = harness_recv_sig(ch, &sig);
	g_rc[1] = sig.how;
	smarm_server_free(s);
	harness_chan_drop(ch);
}

START_TEST(test_gen_statem_event_timeout_cancelled_by_any_event)
{
	open_probe();
	harness_run(4, event_timeout_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_str_eq(g_out[1], "ev1@0 t1@0");
	ck_assert_str_eq(g_out[2], "ev0next@0 ev7@0");
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], SMARM_EXIT_NORMAL);
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/* A caller actor: its call's status and value into g_rc[slot], +1. */
struct caller {
	smarm_server_t *c_s; /* its own handle */
	const char *c_op;
	int c_slot;
};

static void caller_body(void *arg)
{
	struct caller *c = arg;
	int64_t v = -1;
	g_rc[c->c_slot] = call_i(c->c_s, c->c_op, &v);
	g_rc[c->c_slot + 1] = (int)v;
}

/* Run a caller of op on its own handle to the machine of s. */
static smarm_pid_t spawn_caller(smarm_server_t *s, struct caller *c,
				const char *op, int slot)
{
	smarm_pid_t pid = SMARM_PID_NONE, srv = SMARM_PID_NONE;
	smarm_server_pid(s, &srv);
	c->c_s = NULL;
	smarm_server_open(NULL, g_be, srv, &c->c_s);
	c->c_op = op;
	c->c_slot = slot;
	g_rc[slot] = 1; /* not answered yet */
	smarm_actor_spawn(&pid, caller_body, c, NULL);
	return pid;
}

static void join_caller(smarm_pid_t pid, struct caller *c)
{
	smarm_actor_join(pid, NULL, NULL);
	smarm_server_free(c->c_s);
}

/*
 * Calls: answered later from another state (a postponed call; a token),
 * an unhandled call is EDOWN, a call without a reply type is answered
 * with nothing, a call still postponed when the machine stops is EDOWN.
 */
static void calls_root(void *arg)
{
	smarm_server_t *s = start_probe();
	struct caller c1, c2, c3;
	smarm_pid_t p;
	int64_t v = -1;
	(void)arg;
	if (s == NULL)
		return;
	g_rc[0] = call_i(s, "nothing", &v);
	g_rc[1] = smarm_server_call(s, "noreply", NULL, 0, NULL, MS(10000));
	/* Postponed in B, answered in C. */
	cast_i(s, "go", B);
	p = spawn_caller(s, &c1, "later", 2);
	await_log(s, 0, "pp");
	cast_i(s, "go", C);
	join_caller(p, &c1);
	/* A token taken in A, answered from C. */
	cast_i(s, "go", A);
	p = spawn_caller(s, &c2, "hold", 4);
	await_log(s, 1, "hold@0");
	cast_i(s, "go", C);
	cast0(s, "release");
	join_caller(p, &c2);
	/* Postponed in B when the machine stops: EDOWN. */
	cast_i(s, "go", B);
	p = spawn_caller(s, &c3, "later", 6);
	await_log(s, 2, "pp");
	cast0(s, "stop");
	join_caller(p, &c3);
	g_rc[8] = call_i(s, "get", &v);
	smarm_server_free(s);
}

START_TEST(test_gen_statem_calls_answered_later_or_edown)
{
	open_probe();
	harness_run(4, calls_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_int_eq(g_rc[0], SMARM_EDOWN);
	ck_assert_int_eq(g_rc[1], 0);
	ck_assert_int_eq(g_rc[2], 0);
	ck_assert_int_eq(g_rc[3], C);
	ck_assert_int_eq(g_rc[4], 0);
	ck_assert_int_eq(g_rc[5], 1000 + C);
	ck_assert_int_eq(g_rc[6], SMARM_EDOWN);
	ck_assert_msg(g_rc[8] == SMARM_ENOPROC || g_rc[8] == SMARM_EDOWN,
		      "call after stop: %d", g_rc[8]);
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/* A crashing action ends the machine (its monitor sees the crash), not
 * the node; a dynamic tail to no state crashes it too. */
static void crash_root(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_server_t *s = start_probe();
	smarm_signal_t sig = { 0 };
	smarm_pid_t pid = SMARM_PID_NONE;
	int64_t v = -1;
	(void)arg;
	if (s == NULL)
		return;
	smarm_server_pid(s, &pid);
	smarm_monitor(pid, ch, NULL);
	cast0(s, "crash");
	g_rc[0] = harness_recv_sig(ch, &sig);
	g_rc[1] = sig.how;
	g_rc[2] = (int)sig.reason;
	smarm_server_free(s);
	s = start_probe();
	g_rc[3] = call_i(s, "get", &v);
	smarm_server_pid(s, &pid);
	smarm_monitor(pid, ch, NULL);
	cast_i(s, "go", 99);
	g_rc[4] = harness_recv_sig(ch, &sig);
	g_rc[5] = sig.how;
	smarm_server_free(s);
	harness_chan_drop(ch);
}

START_TEST(test_gen_statem_crashing_action_ends_the_machine)
{
	open_probe();
	harness_run(4, crash_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], SMARM_EXIT_CRASHED);
	ck_assert_int_eq(g_rc[2], 42);
	ck_assert_int_eq(g_rc[3], 0);
	ck_assert_int_eq(g_rc[4], 0);
	ck_assert_int_eq(g_rc[5], SMARM_EXIT_CRASHED);
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/* The door lock: knocks postponed while Locked, heard after the unlock;
 * a wrong key keeps it locked; a closed door re-locks (state timeout). */
static void door_root(void *arg)
{
	const smarm_behaviour_t *be = arg;
	smarm_server_t *s = NULL;
	smarm_value_t key = { .type = SMARM_T_U32 };
	int64_t v = -1;
	uint64_t end;

	g_rc[0] = smarm_server_start(be, "code=7 relock_ms=0", NULL, &s);
	if (g_rc[0] != 0)
		return;
	cast0(s, "push");
	g_rc[1] = call_i(s, "get_state", &v);
	g_rc[2] = (int)v; /* Open */
	cast0(s, "pull");
	cast0(s, "lock");
	cast0(s, "knock");
	cast0(s, "knock");
	call_i(s, "knocks", &v);
	g_rc[3] = (int)v; /* 0: postponed */
	key.v.u = 6;
	smarm_server_cast(s, "unlock", &key, 1);
	call_i(s, "get_state", &v);
	g_rc[4] = (int)v; /* Locked */
	/* The varargs and stub clients serve machines too. */
	g_rc[9] = smarm_server_castv(s, "unlock", 7u);
	g_rc[5] = -1;
	{
		int32_t st = -1;
		int (*get)(smarm_server_t *, uint64_t, int32_t *) = NULL;
		g_rc[10] = smarm_server_stub(be, "get_state",
					     (void (**)(void)) & get);
		g_rc[11] = g_rc[10] == 0 ? get(s, MS(10000), &st) : -1;
		g_rc[5] = st; /* Closed */
		g_rc[12] = smarm_server_callv(s, "get_state", MS(10000), &st);
		g_rc[13] = st;
	}
	call_i(s, "knocks", &v);
	g_rc[6] = (int)v; /* 2 */
	{
		/* its format_status, given its data and its state */
		smarm_server_status_t st = { .struct_size = sizeof st };
		g_rc[14] = smarm_server_get_status(s, &st, MS(10000));
		g_rc[15] = strcmp(st.state_text,
				  "Closed, 2 knocks, 0 waiting") == 0;
	}
	stop_probe(s);
	/* Re-locking: Closed for 10 ms becomes Locked. */
	g_rc[7] = smarm_server_start(be, "code=7 relock_ms=10", NULL, &s);
	if (g_rc[7] != 0)
		return;
	end = smarm_now_ns() + (uint64_t)(10e9 * harness_time_scale());
	do {
		call_i(s, "get_state", &v);
		if (v != 2)
			smarm_actor_sleep(MS(1));
	} while (v != 2 && smarm_now_ns() < end);
	g_rc[8] = (int)v;
	stop_probe(s);
}

START_TEST(test_gen_statem_door_lock)
{
	smarm_plugin_t *pl = NULL;
	const smarm_behaviour_t *be = NULL;

	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_DOOR"), &pl, msg,
					   sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "door", &be), 0);
	harness_run(4, door_root, (void *)be);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], 0);
	ck_assert_int_eq(g_rc[2], 1);
	ck_assert_int_eq(g_rc[3], 0);
	ck_assert_int_eq(g_rc[4], 2);
	ck_assert_int_eq(g_rc[5], 0);
	ck_assert_int_eq(g_rc[6], 2);
	ck_assert_int_eq(g_rc[7], 0);
	ck_assert_int_eq(g_rc[8], 2);
	ck_assert_int_eq(g_rc[9], 0);
	ck_assert_int_eq(g_rc[10], 0);
	ck_assert_int_eq(g_rc[11], 0);
	ck_assert_int_eq(g_rc[12], 0);
	ck_assert_int_eq(g_rc[13], 0);
	ck_assert_int_eq(g_rc[14], 0);
	ck_assert_int_eq(g_rc[15], 1);
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
}
END_TEST

/* A peer for the probe to link to: parks until stopped. */
static void peer_body(void *arg)
{
	(void)arg;
	harness_park();
}

/*
 * Lifetime: freeing every handle does not end a machine; a call whose
 * action or guard crashes is EDOWN; a linked peer's death reaches the EXIT row
 * of a trapping machine; a trapping machine's shutdown (no shutdown
 * row: the built-in one stops it) ends it SHUTDOWN, with a terminate
 * that may block, and so does a non-trapping one's. A crash's terminate
 * may not block: its sleep is SMARM_EAGAIN at once.
 */
static void lifetime_root(void *arg)
{
	const smarm_behaviour_t *door = arg;
	smarm_chan_t *ch = harness_sig_chan();
	smarm_server_t *s = start_probe();
	smarm_value_t pv = { .type = SMARM_T_PID };
	smarm_signal_t sig = { 0 };
	smarm_pid_t pid = SMARM_PID_NONE, peer = SMARM_PID_NONE;
	int64_t v = -1;
	int how = -1;

	if (s == NULL)
		return;
	smarm_server_pid(s, &pid);
	smarm_server_free(s);
	s = NULL;
	smarm_server_open(NULL, g_be, pid, &s);
	g_rc[0] = call_i(s, "get", &v);
	smarm_monitor(pid, ch, NULL);
	uint64_t t0 = smarm_now_ns();
	g_rc[1] = call_i(s, "boom", &v);
	harness_recv_sig(ch, &sig);
	g_rc[2] = sig.how;
	g_rc[14] = harness_since(t0) < MS(2000);
	term_seen(&g_rc[11]);
	smarm_server_free(s);
	/* A guard that crashes: its call is EDOWN too. */
	s = start_probe();
	smarm_server_pid(s, &pid);
	smarm_monitor(pid, ch, NULL);
	g_rc[9] = call_i(s, "gboom", &v);
	harness_recv_sig(ch, &sig);
	g_rc[10] = (int)sig.reason;
	smarm_server_free(s);
	/* A linked peer's end: an EXIT event. */
	s = start_probe();
	take_log(s, 0);
	smarm_actor_spawn(&peer, peer_body, NULL, NULL);
	pv.v.pid = peer;
	smarm_server_cast(s, "link_to", &pv, 1);
	await_log(s, 1, "linked0");
	smarm_actor_stop(peer);
	await_log(s, 2, "exit");
	g_rc[3] = smarm_server_shutdown(s, MS(10000), &how);
	g_rc[4] = how;
	term_seen(&g_rc[15]);
	smarm_server_free(s);
	/* A machine that does not trap: stopped outright. */
	g_rc[5] = smarm_server_start(door, NULL, NULL, &s);
	how = -1;
	g_rc[6] = smarm_server_shutdown(s, MS(10000), &how);
	g_rc[7] = how;
	smarm_server_free(s);
	harness_chan_drop(ch);
}

START_TEST(test_gen_statem_lifetime_and_shutdown)
{
	smarm_plugin_t *dpl = NULL;
	const smarm_behaviour_t *door = NULL;
	char want[64];

	open_probe();
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_DOOR"), &dpl, msg,
					   sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_behaviour(dpl, "door", &door), 0);
	harness_run(4, lifetime_root, (void *)door);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], SMARM_EDOWN);
	ck_assert_int_eq(g_rc[2], SMARM_EXIT_CRASHED);
	ck_assert_int_eq(g_rc[9], SMARM_EDOWN);
	ck_assert_int_eq(g_rc[10], 43);
	ck_assert_str_eq(g_out[1], "linked0");
	snprintf(want, sizeof want, "exit%d@0", SMARM_EXIT_STOPPED);
	ck_assert_str_eq(g_out[2], want);
	ck_assert_int_eq(g_rc[3], 0);
	ck_assert_int_eq(g_rc[4], SMARM_EXIT_SHUTDOWN);
	ck_assert_int_eq(g_rc[11], SMARM_EXIT_CRASHED);
	ck_assert_int_eq(g_rc[12], 0);
	ck_assert_int_eq(g_rc[13], SMARM_EAGAIN);
	ck_assert_int_eq(g_rc[14], 1);
	ck_assert_int_eq(g_rc[15], SMARM_EXIT_SHUTDOWN);
	ck_assert_int_eq(g_rc[16], 1);
	ck_assert_int_eq(g_rc[17], 0);
	ck_assert_int_eq(g_rc[5], 0);
	ck_assert_int_eq(g_rc[6], 0);
	ck_assert_int_eq(g_rc[7], SMARM_EXIT_SHUTDOWN);
	ck_assert_int_eq(smarm_plugin_close(dpl), 0);
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * gen_statem_SUITE's next_events: an event init queues (next_event)
 * runs after the initial state's enter and before any external event,
 * even when none comes (it used to wait for the next one).
 */
static void init_next_root(void *arg)
{
	smarm_server_t *s = NULL;
	(void)arg;
	g_rc[0] = smarm_server_start(g_be, "initnext", NULL, &s);
	if (g_rc[0] != 0)
		return;
	take_log(s, 0);
	stop_probe(s);
}

/*
 * OTP's repeat_state from a state enter call: A's enter asks twice, so
 * it runs three times (same state and previous state), before any
 * event; smarm_sm_repeat_state outside an enter is refused (the repeat
 * action logs -3, above), and with no machine SMARM_EINVAL.
 */
static void reenter_root(void *arg)
{
	smarm_server_t *s = NULL;
	(void)arg;
	g_rc[0] = smarm_server_start(g_be, "reenter", NULL, &s);
	g_rc[1] = smarm_sm_repeat_state(NULL);
	if (g_rc[0] != 0)
		return;
	take_log(s, 0);
	stop_probe(s);
}

START_TEST(test_gen_statem_state_enter_repeat_state)
{
	open_probe();
	harness_run(2, reenter_root, NULL);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], SMARM_EINVAL);
	ck_assert_str_eq(g_out[0], "E0/0 R0 E0/0 R0 E0/0");
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

START_TEST(test_gen_statem_next_events_from_init_run_first)
{
	open_probe();
	harness_run(2, init_next_root, NULL);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_str_eq(g_out[0], "E0/0 ev5@0");
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * A zero-time timeout (state and generic) is handled before any message
 * not yet received, here one already queued behind the cast that arms
 * it (one worker: both are queued before the machine runs), and after
 * the events queued inside the machine (event_order, state_timeout).
 */
static void zero_timeout_root(void *arg)
{
	smarm_server_t *s = start_probe();
	(void)arg;
	if (s == NULL)
		return;
	take_log(s, 0);
	cast_u(s, "arm_st", 0);
	cast_i(s, "ev", 1);
	cast_u(s, "arm_t", 0);
	cast_i(s, "ev", 2);
	take_log(s, 1);
	stop_probe(s);
}

START_TEST(test_gen_statem_zero_timeouts_before_queued_messages)
{
	open_probe();
	harness_run(1, zero_timeout_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_str_eq(g_out[1], "st@0 ev1@0 t1@0 ev2@0");
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * OTP's sys:get_status of a gen_statem: its state and state name, the
 * count of its active timeouts (state and generic here), its postponed
 * events and queue; a caller's smaller struct is filled up to its size.
 */
static void status_root(void *arg)
{
	smarm_server_t *s = start_probe();
	smarm_server_status_t st;
	(void)arg;
	if (s == NULL)
		return;
	take_log(s, 0);
	cast_i(s, "go", B);
	cast_u(s, "arm_st", MS(5000));
	cast_u(s, "arm_t", MS(5000));
	cast_i(s, "ev", 7); /* postponed in B */
	memset(&st, 0, sizeof st);
	st.struct_size = sizeof st;
	g_rc[0] = smarm_server_get_status(s, &st, MS(5000));
	g_rc[1] = st.kind;
	g_rc[2] = st.state;
	g_rc[3] = st.state_name != NULL && strcmp(st.state_name, "B") == 0;
	g_rc[4] = (int)st.timers;
	g_rc[5] = (int)st.postponed;
	g_rc[6] = (int)st.queue_limit == SMARM_QUEUE_LIMIT_DEFAULT;
	g_rc[7] = st.behaviour != NULL && strcmp(st.behaviour, "probe") == 0;
	cast0(s, "cancel_t");
	g_rc[8] = smarm_server_get_status(s, &st, MS(5000));
	g_rc[9] = (int)st.timers;
	/* a caller built with fewer fields gets those */
	memset(&st, 0x5a, sizeof st);
	st.struct_size = offsetof(smarm_server_status_t, queued);
	g_rc[10] = smarm_server_get_status(s, &st, MS(5000));
	g_rc[11] =
		st.queued == 0x5a5a5a5a && st.kind == SMARM_SERVER_GEN_STATEM;
	st.struct_size = 4;
	g_rc[12] = smarm_server_get_status(s, &st, MS(5000));
	g_rc[13] = smarm_server_get_status(NULL, &st, MS(5000));
	stop_probe(s);
}

START_TEST(test_gen_statem_get_status_counts_active_timeouts)
{
	open_probe();
	harness_run(2, status_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], SMARM_SERVER_GEN_STATEM);
	ck_assert_int_eq(g_rc[2], 1);
	ck_assert_int_eq(g_rc[3], 1);
	ck_assert_int_eq(g_rc[4], 2);
	ck_assert_int_eq(g_rc[5], 1);
	ck_assert_int_eq(g_rc[6], 1);
	ck_assert_int_eq(g_rc[7], 1);
	ck_assert_int_eq(g_rc[8], 0);
	ck_assert_int_eq(g_rc[9], 1);
	ck_assert_int_eq(g_rc[10], 0);
	ck_assert_int_eq(g_rc[11], 1);
	ck_assert_int_eq(g_rc[12], SMARM_EINVAL);
	ck_assert_int_eq(g_rc[13], SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * A timeout event may be postponed, as any event in OTP: t1 in C (a
 * timer's and a zero one's) waits until the machine leaves C, then runs
 * after the enter of the new state.
 */
static void postpone_timeout_root(void *arg)
{
	smarm_server_t *s = start_probe();
	(void)arg;
	if (s == NULL)
		return;
	take_log(s, 0);
	cast_i(s, "go", C);
	cast_u(s, "arm_t", MS(10));
	smarm_actor_sleep(MS(60)); /* it fired in C: postponed */
	take_log(s, 1);
	cast_i(s, "go", A);
	take_log(s, 2);
	cast_i(s, "go", C);
	cast_u(s, "arm_t", 0);
	cast_i(s, "go", B);
	take_log(s, 3);
	stop_probe(s);
}

START_TEST(test_gen_statem_postponed_timeout_event)
{
	open_probe();
	harness_run(2, postpone_timeout_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_str_eq(g_out[1], "go2@0 E2/0");
	ck_assert_str_eq(g_out[2], "go0@2 E0/2 t1@0");
	ck_assert_str_eq(g_out[3], "go2@0 E2/0 go1@2 E1/2 t1@1");
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * gen_statem_SUITE's stop2/shutdown: smarm_server_stop ends a machine
 * with its how and reason (terminate may block), and {stop, {shutdown,
 * X}} from an action (smarm_sm_stop_with) keeps X in the exit reason.
 */
static void stop_reason_root(void *arg)
{
	smarm_value_t e = { .type = SMARM_T_I64, .v.i = -12 }, r = { 0 };
	smarm_chan_t *ch = harness_sig_chan();
	smarm_server_t *s = start_probe();
	smarm_signal_t sig = { 0 };
	smarm_pid_t pid = SMARM_PID_NONE;
	smarm_value_t x = { .type = SMARM_T_I64, .v.i = 31 };
	intptr_t reason = -1;
	int how = -1, t[3];
	(void)arg;
	if (s == NULL)
		return;
	/* An error reply from an action: SMARM_EREPLY and the reason. */
	g_rc[11] = smarm_server_call(s, "errc", &e, 1, &r, MS(10000));
	g_rc[12] = (int)r.v.i;
	take_log(s, 0);
	term_seen(t);
	g_rc[0] = smarm_server_stop(s, SMARM_EXIT_SHUTDOWN, 9, MS(10000), &how,
				    &reason);
	g_rc[1] = how;
	g_rc[2] = (int)reason;
	term_seen(t);
	g_rc[3] = t[0]; /* terminate's how */
	g_rc[4] = t[1]; /* may_block */
	g_rc[5] = smarm_server_stop(s, SMARM_EXIT_NORMAL, 0, MS(10000), NULL,
				    NULL);
	smarm_server_free(s);
	s = start_probe();
	if (s == NULL)
		return;
	smarm_server_pid(s, &pid);
	smarm_monitor(pid, ch, NULL);
	smarm_server_cast(s, "stopw", &x, 1);
	g_rc[6] = harness_recv_sig(ch, &sig);
	g_rc[7] = sig.how;
	g_rc[8] = (int)sig.reason;
	term_seen(t);
	g_rc[9] = t[0];
	g_rc[10] = t[1];
	smarm_server_free(s);
	harness_chan_drop(ch);
}

START_TEST(test_gen_statem_stop2_shutdown_keep_their_reason)
{
	open_probe();
	harness_run(2, stop_reason_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], SMARM_EXIT_SHUTDOWN);
	ck_assert_int_eq(g_rc[2], 9);
	ck_assert_int_eq(g_rc[3], SMARM_EXIT_SHUTDOWN);
	ck_assert_int_eq(g_rc[4], 1);
	ck_assert_int_eq(g_rc[5], SMARM_ENOPROC);
	ck_assert_int_eq(g_rc[6], 0);
	ck_assert_int_eq(g_rc[7], SMARM_EXIT_SHUTDOWN);
	ck_assert_int_eq(g_rc[8], 31);
	ck_assert_int_eq(g_rc[9], SMARM_EXIT_SHUTDOWN);
	ck_assert_int_eq(g_rc[10], 1);
	ck_assert_int_eq(g_rc[11], SMARM_EREPLY);
	ck_assert_int_eq(g_rc[12], -12);
	ck_assert_str_eq(g_out[0], "E0/0 errc0:-3");
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * Supervised and named: a stop tail ends the machine normally, the
 * permanent child restarts with fresh data in the initial state, under
 * the same name; the name is gone once the supervisor is.
 */
static void supervised_root(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_sup_spec_t *spec = NULL;
	smarm_server_t *s = NULL;
	smarm_signal_t sig = { 0 };
	smarm_pid_t sup = SMARM_PID_NONE, first = SMARM_PID_NONE,
		    second = SMARM_PID_NONE;
	uint64_t end;
	int64_t v = -1;
	int rc;
	(void)arg;

	smarm_sup_spec_alloc(&spec);
	g_rc[0] = smarm_sup_spec_add_server(spec, "p", g_be, NULL, "probe1",
					    SMARM_SUP_PERMANENT, MS(1000),
					    MS(5000));
	g_rc[1] = smarm_sup_start(spec, &sup);
	smarm_sup_spec_free(spec);
	if (g_rc[1] != 0)
		return;
	smarm_server_open_name(NULL, g_be, "probe1", &s);
	smarm_server_pid(s, &first);
	cast_i(s, "go", B);
	g_rc[2] = call_i(s, "get", &v);
	g_rc[3] = (int)v;
	cast0(s, "stop");
	end = smarm_now_ns() + (uint64_t)(10e9 * harness_time_scale());
	do {
		rc = call_i(s, "get", &v);
		smarm_server_pid(s, &second);
		if (rc != 0 || smarm_pid_eq(first, second))
			smarm_actor_sleep(MS(1));
	} while ((rc != 0 || smarm_pid_eq(first, second)) &&
		 smarm_now_ns() < end);
	g_rc[4] = rc;
	g_rc[5] = (int)v;
	g_rc[6] = !smarm_pid_eq(first, second);
	take_log(s, 0);
	smarm_monitor(sup, ch, NULL);
	smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0);
	g_rc[7] = harness_recv_sig(ch, &sig);
	g_rc[8] = smarm_whereis("probe1", &second);
	smarm_server_free(s);
	harness_chan_drop(ch);
}

START_TEST(test_gen_statem_supervised_named_restart)
{
	open_probe();
	harness_run(4, supervised_root, NULL);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], 0);
	ck_assert_int_eq(g_rc[2], 0);
	ck_assert_int_eq(g_rc[3], B);
	ck_assert_int_eq(g_rc[4], 0);
	ck_assert_int_eq(g_rc[5], A);
	ck_assert_int_eq(g_rc[6], 1);
	ck_assert_str_eq(g_out[0], "E0/0"); /* fresh data */
	ck_assert_int_eq(g_rc[7], 0);
	ck_assert_int_eq(g_rc[8], SMARM_ENONAME);
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * From inside an action: a handle to the machine itself (its own
 * behaviour, smarm_sm_behaviour(cx, NULL)) takes a cast and an info,
 * handled after the action (in send order), and refuses a
 * call and a shutdown (SMARM_ECALLSELF); a handle to the sibling
 * machine "mirror" registered as "mir" is called; "nope" is no
 * behaviour (SMARM_ENOBEHAVIOUR), out NULL SMARM_EINVAL.
 */
static void inside_root(void *arg)
{
	const smarm_behaviour_t *mirror = NULL, *b = NULL;
	smarm_server_t *s = start_probe(), *m = NULL;
	smarm_value_t a[2] = { { 0 } }, r = { 0 };
	(void)arg;
	if (s == NULL)
		return;
	take_log(s, 0); /* enter at start */
	g_rc[0] = call_i(s, "selfsend", NULL);
	take_log(s, 1);
	g_rc[1] = smarm_plugin_behaviour(g_pl, "mirror", &mirror);
	g_rc[2] = smarm_server_start(mirror, NULL, "mir", &m);
	a[0].type = SMARM_T_STR;
	a[0].v.p = "mir";
	a[0].len = 3;
	a[1].type = SMARM_T_I32;
	a[1].v.i = 5;
	g_rc[3] = smarm_server_call(s, "peer", a, 2, &r, MS(10000));
	g_rc[4] = (int)r.v.i;
	take_log(s, 2);
	g_rc[5] = smarm_sm_behaviour(NULL, NULL, &b);
	g_rc[6] = smarm_sm_behaviour((smarm_sm_ctx_t *)&b, NULL, &b);
	stop_probe(m);
	stop_probe(s);
}

START_TEST(test_gen_statem_sends_to_itself_and_calls_a_sibling)
{
	const smarm_behaviour_t *b = NULL;
	open_probe();
	ck_assert_int_eq(smarm_sm_behaviour(NULL, NULL, &b), SMARM_EINVAL);
	ck_assert_int_eq(smarm_sm_behaviour((smarm_sm_ctx_t *)&b, NULL, &b),
			 SMARM_ENOTACTOR);
	harness_run(4, inside_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_str_eq(g_out[0], "E0/0");
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_str_eq(g_out[1], "self:0:0:0:-314:-314 ev5@0 tick@0");
	ck_assert_int_eq(g_rc[1], 0);
	ck_assert_int_eq(g_rc[2], 0);
	ck_assert_int_eq(g_rc[3], 0);
	ck_assert_int_eq(g_rc[4], 1005);
	ck_assert_str_eq(g_out[2], "peer:0:0:0:-309:-1");
	ck_assert_int_eq(g_rc[5], SMARM_EINVAL);
	ck_assert_int_eq(g_rc[6], SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * SMARM_STAT_SERVER_REQUESTS counts the external events a machine
 * handles: three casts, an info and a call are five (a state timeout
 * that fires is none).
 */
static void stat_root(void *arg)
{
	smarm_node_t *n = smarm_node_current();
	smarm_server_t *s = start_probe();
	int64_t v0 = -1, v1 = -1, v2 = -1, st = -1, logs = 0;
	uint64_t end;
	(void)arg;
	if (s == NULL)
		return;
	take_log(s, 0);
	g_rc[0] = smarm_node_get_int(n, SMARM_STAT_SERVER_REQUESTS, &v0);
	cast_i(s, "ev", 1);
	cast_i(s, "ev", 2);
	cast_u(s, "arm_st", MS(1));
	smarm_server_info(s, "tick", NULL, 0);
	g_rc[1] = call_i(s, "get", &st);
	g_rc[2] = smarm_node_get_int(n, SMARM_STAT_SERVER_REQUESTS, &v1);
	end = smarm_now_ns() + (uint64_t)(10e9 * harness_time_scale());
	do { /* until the state timeout fired; each log call counts */
		take_log(s, 1);
		logs++;
		if (strstr(g_out[1], "st@0") == NULL)
			smarm_actor_sleep(MS(1));
	} while (strstr(g_out[1], "st@0") == NULL && smarm_now_ns() < end);
	g_rc[3] = smarm_node_get_int(n, SMARM_STAT_SERVER_REQUESTS, &v2);
	g_rc[4] = (int)(v1 - v0);
	g_rc[5] = (int)(v2 - v1 - logs); /* the timeout: none */
	stop_probe(s);
}

START_TEST(test_gen_statem_events_count_as_server_requests)
{
	open_probe();
	harness_run(2, stat_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], 0);
	ck_assert_int_eq(g_rc[2], 0);
	ck_assert_int_eq(g_rc[3], 0);
	ck_assert_int_eq(g_rc[4], 5);
	ck_assert_msg(strstr(g_out[1], "st@0") != NULL, "log: %s", g_out[1]);
	ck_assert_int_eq(g_rc[5], 0);
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/*
 * A machine that crashes in an action is reported: its machine report
 * (OTP's gen_statem "terminating" report: the machine, its state, the
 * reason, the event) and then its actor's crash report.
 */
static pthread_mutex_t rep_mu = PTHREAD_MUTEX_INITIALIZER;
static char rep_text[4][SMARM_LOG_LINE_MAX + 1];
static int rep_kind[4], rep_n;

static void rep_handler(void *arg, const smarm_log_event_t *ev)
{
	(void)arg;
	pthread_mutex_lock(&rep_mu);
	if (rep_n < 4) {
		rep_kind[rep_n] = ev->kind;
		snprintf(rep_text[rep_n], sizeof rep_text[0], "%s", ev->text);
	}
	rep_n++;
	pthread_mutex_unlock(&rep_mu);
}

static void sm_report_root(void *arg)
{
	smarm_server_t *s = start_probe();
	smarm_chan_t *down = NULL;
	smarm_signal_t sig;
	smarm_pid_t pid;
	(void)arg;
	if (s == NULL)
		return;
	g_rc[0] = smarm_chan_alloc(&down, sizeof sig, NULL);
	g_rc[1] = smarm_server_pid(s, &pid);
	g_rc[2] = smarm_monitor(pid, down, NULL);
	g_rc[3] = cast0(s, "crash");
	g_rc[4] = smarm_chan_recv_timeout(down, &sig, MS(10000));
	g_rc[5] = sig.how == SMARM_EXIT_CRASHED ? 0 : -1;
	smarm_server_free(s);
	smarm_chan_sender_free(down);
	smarm_chan_receiver_free(down);
}

START_TEST(test_gen_statem_crash_is_reported)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int how = -1;
	open_probe();
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_logger(cfg, rep_handler, NULL), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_node_run(node, sm_report_root, NULL, &how, NULL),
			 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	ck_assert_int_eq(g_rc[31], 0);
	for (int i = 0; i <= 5; i++)
		ck_assert_msg(g_rc[i] == 0, "step %d: %d", i, g_rc[i]);
	ck_assert_int_eq(rep_n, 2);
	ck_assert_int_eq(rep_kind[0], SMARM_REPORT_SERVER);
	ck_assert_msg(strstr(rep_text[0], "machine report: actor ") ==
			      rep_text[0],
		      "%s", rep_text[0]);
	ck_assert_msg(strstr(rep_text[0], "gen_statem 'probe'") != NULL, "%s",
		      rep_text[0]);
	ck_assert_msg(strstr(rep_text[0], "terminating in state 'A': crashed, "
					  "reason 42, while handling cast "
					  "'crash'") != NULL,
		      "%s", rep_text[0]);
	ck_assert_int_eq(rep_kind[1], SMARM_REPORT_CRASH);
}
END_TEST

/* Tell the probe to keep the raw reply target (rch, id). */
static int keep(smarm_server_t *s, smarm_chan_t *rch, uint64_t id)
{
	smarm_value_t kv[2] = { { .type = SMARM_T_U64 },
				{ .type = SMARM_T_U64 } };
	kv[0].v.u = (uint64_t)(uintptr_t)rch;
	kv[1].v.u = id;
	return smarm_server_info(s, "keep", kv, 2);
}

/*
 * A machine stores a raw reply target from an info in state A and
 * answers it from state B (OTP's gen_statem:reply(From, R) with a From
 * the machine was given): check_response matches the answer, a wrong
 * id does not (no_reply), a str answer is the response's own copy; a
 * second target is matched through a request id collection.
 */
static void reply_to_root(void *arg)
{
	smarm_server_t *s = start_probe();
	smarm_chan_t *rch = NULL;
	smarm_reqids_t *c = NULL;
	smarm_response_t msg;
	smarm_value_t v = { 0 }, str = { 0 };
	smarm_value_t hello = smarm_value_str("hello");
	uint64_t id = 0, id2 = 0;
	intptr_t label = 0;
	(void)arg;
	if (s == NULL)
		return;
	take_log(s, 0);
	g_rc[0] = smarm_response_chan_alloc(&rch);
	g_rc[1] = smarm_request_id_new(&id);
	g_rc[2] = keep(s, rch, id); /* in A */
	cast_i(s, "go", B);
	g_rc[3] = smarm_server_cast(
		s, "answer", &(smarm_value_t){ .type = SMARM_T_I32, .v.i = 77 },
		1); /* from B */
	g_rc[4] = smarm_chan_recv_timeout(rch, &msg, MS(10000));
	g_rc[5] = smarm_server_check_response(&msg, id + 1, &v); /* wrong */
	g_rc[6] = smarm_server_check_response(&msg, 0, &v);
	g_rc[7] = smarm_server_check_response(&msg, id, &v);
	g_rc[8] = v.type == SMARM_T_I32 && v.v.i == 77;
	g_rc[9] = smarm_request_id_new(&id2);
	g_rc[10] = id2 != id && id2 != 0;
	g_rc[11] = smarm_reqids_alloc(&c);
	g_rc[12] = smarm_reqids_add(c, id2, 5);
	g_rc[13] = keep(s, rch, id2);
	g_rc[14] = smarm_server_cast(s, "answers", &hello, 1);
	g_rc[15] = smarm_reqids_receive(c, rch, MS(10000), true, &label, &str);
	g_rc[16] = (int)label;
	g_rc[17] = str.type == SMARM_T_STR && str.len == 5 &&
		   str.v.p != hello.v.p && memcmp(str.v.p, "hello", 5) == 0;
	smarm_value_release(&str);
	g_rc[18] = (int)smarm_reqids_size(c);
	take_log(s, 1);
	g_rc[19] = (int)harness_chan_len(rch); /* nothing more came */
	smarm_reqids_free(c);
	stop_probe(s);
	harness_chan_drop(rch);
}

START_TEST(test_gen_statem_reply_to_a_target_taken_from_a_message)
{
	open_probe();
	harness_run(2, reply_to_root, NULL);
	ck_assert_int_eq(g_rc[31], 0);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], 0);
	ck_assert_int_eq(g_rc[2], 0);
	ck_assert_int_eq(g_rc[3], 0);
	ck_assert_int_eq(g_rc[4], 0);
	ck_assert_int_eq(g_rc[5], SMARM_EAGAIN); /* a wrong id: no_reply */
	ck_assert_int_eq(g_rc[6], SMARM_EAGAIN);
	ck_assert_int_eq(g_rc[7], 0);
	ck_assert_int_eq(g_rc[8], 1);
	ck_assert_int_eq(g_rc[9], 0);
	ck_assert_int_eq(g_rc[10], 1);
	ck_assert_int_eq(g_rc[11], 0);
	ck_assert_int_eq(g_rc[12], 0);
	ck_assert_int_eq(g_rc[13], 0);
	ck_assert_int_eq(g_rc[14], 0);
	ck_assert_int_eq(g_rc[15], 0);
	ck_assert_int_eq(g_rc[16], 5);
	ck_assert_int_eq(g_rc[17], 1);
	ck_assert_int_eq(g_rc[18], 0);
	ck_assert_str_eq(g_out[1],
			 "keep@0 go1@0 E1/0 answer0@1 keep@1 answers0@1");
	ck_assert_int_eq(g_rc[19], 0);
	ck_assert_int_eq(smarm_plugin_close(g_pl), 0);
}
END_TEST

/* A plain actor's answer to a target it was given: bytes of its stack. */
struct target {
	smarm_chan_t *t_ch;
	uint64_t t_id;
	int t_rc;
};

static void answerer(void *arg)
{
	struct target *t = arg;
	char buf[4] = { 1, 0, 2, 3 }; /* gone when it ends: copied */
	smarm_value_t b = smarm_value_bytes(buf, sizeof buf);
	t->t_rc = smarm_reply_to(t->t_ch, t->t_id, &b);
}

/*
 * Any actor answers: a plain one (bytes, copied), NULL for no value;
 * a requester gone is no error; the errors of a bad target or value.
 */
static void reply_to_plain_root(void *arg)
{
	struct target t = { 0 };
	smarm_chan_t *rch = NULL, *ints = NULL, *gone = NULL;
	smarm_response_t msg;
	smarm_value_t v = { 0 };
	smarm_value_t bad = { .type = 99 };
	smarm_value_t nul = smarm_value_bytes("a\0b", 3);
	smarm_value_t big = smarm_value_bytes("x", 1);
	smarm_value_t nop = { .type = SMARM_T_BYTES, .len = 5 };
	smarm_value_t one = smarm_value_i64(1);
	smarm_pid_t p;
	int junk = 0;
	(void)arg;
	nul.type = SMARM_T_STR;
	big.len = (uint32_t)SMARM_BYTES_MAX + 1;
	HARNESS_EQ(smarm_response_chan_alloc(&rch), 0);
	t.t_ch = rch;
	HARNESS_EQ(smarm_request_id_new(&t.t_id), 0);
	HARNESS_EQ(smarm_actor_spawn(&p, answerer, &t, NULL), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
	HARNESS_EQ(t.t_rc, 0);
	HARNESS_EQ(smarm_chan_recv_timeout(rch, &msg, MS(10000)), 0);
	HARNESS_EQ(smarm_server_check_response(&msg, t.t_id, &v), 0);
	HARNESS_EQ(v.type, SMARM_T_BYTES);
	HARNESS_EQ(v.len, 4);
	HARNESS_CHECK(memcmp(v.v.p, "\1\0\2\3", 4) == 0);
	smarm_value_release(&v);
	/* no value: a call without a reply type */
	HARNESS_EQ(smarm_reply_to(rch, t.t_id, NULL), 0);
	HARNESS_EQ(smarm_chan_try_recv(rch, &msg), 0);
	HARNESS_EQ(smarm_server_check_response(&msg, t.t_id, &v), 0);
	HARNESS_EQ(v.type, SMARM_T_VOID);
	/* errors: nothing is sent */
	HARNESS_EQ(smarm_reply_to(NULL, 1, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_reply_to((smarm_chan_t *)&junk, 1, NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_chan_alloc(&ints, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_reply_to(ints, 1, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_reply_to(rch, 0, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_reply_to(rch, 1, &bad), SMARM_EARGS);
	HARNESS_EQ(smarm_reply_to(rch, 1, &nul), SMARM_EARGS);
	HARNESS_EQ(smarm_reply_to(rch, 1, &nop), SMARM_EARGS);
	HARNESS_EQ(smarm_reply_to(rch, 1, &big), SMARM_ETOOBIG);
	HARNESS_EQ(smarm_request_id_new(NULL), SMARM_EINVAL);
	HARNESS_EQ(harness_chan_len(rch), 0);
	HARNESS_EQ(harness_chan_len(ints), 0);
	/* a requester gone: dropped, not an error (OTP) */
	HARNESS_EQ(smarm_response_chan_alloc(&gone), 0);
	HARNESS_EQ(smarm_chan_receiver_free(gone), 0);
	HARNESS_EQ(smarm_reply_to(gone, 1, &one), 0);
	HARNESS_EQ(smarm_chan_sender_free(gone), 0); /* freed now */
	HARNESS_EQ(smarm_reply_to(gone, 1, NULL), 0);
	harness_chan_drop(ints);
	harness_chan_drop(rch);
}

START_TEST(test_gen_statem_reply_to_from_any_actor_and_errors)
{
	smarm_chan_t *rch = NULL;
	smarm_response_t msg;
	smarm_value_t v = smarm_value_i64(-5), r = { 0 };
	uint64_t id = 0;
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, reply_to_plain_root, NULL), 0);
	harness_checks_assert();
	/* a plain thread answers too */
	ck_assert_int_eq(smarm_response_chan_alloc(&rch), 0);
	ck_assert_int_eq(smarm_request_id_new(&id), 0);
	ck_assert_int_eq(smarm_reply_to(rch, id, &v), 0);
	ck_assert_int_eq(smarm_chan_try_recv(rch, &msg), 0);
	ck_assert_int_eq(smarm_server_check_response(&msg, id, &r), 0);
	ck_assert_int_eq(r.type, SMARM_T_I64);
	ck_assert_int_eq(r.v.i, -5);
	smarm_chan_sender_free(rch);
	smarm_chan_receiver_free(rch);
}
END_TEST

Suite *smarm_test_gen_statem_suite(void)
{
	Suite *s = suite_create("gen_statem");
	TCase *tc = tcase_create("load");
	tcase_add_test(tc, test_gen_statem_load_checks_each_table);
	suite_add_tcase(s, tc);
	tc = tcase_create("run");
	tcase_add_test(tc, test_gen_statem_enter_postpone_and_event_order);
	tcase_add_test(tc, test_gen_statem_state_and_generic_timeouts);
	tcase_add_test(tc,
		       test_gen_statem_event_timeout_cancelled_by_any_event);
	tcase_add_test(tc, test_gen_statem_calls_answered_later_or_edown);
	tcase_add_test(tc, test_gen_statem_crashing_action_ends_the_machine);
	tcase_add_test(tc, test_gen_statem_door_lock);
	tcase_add_test(tc,
		       test_gen_statem_reply_to_a_target_taken_from_a_message);
	tcase_add_test(tc, test_gen_statem_reply_to_from_any_actor_and_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("lifetime");
	tcase_add_test(tc, test_gen_statem_lifetime_and_shutdown);
	tcase_add_test(tc, test_gen_statem_stop2_shutdown_keep_their_reason);
	tcase_add_test(tc, test_gen_statem_next_events_from_init_run_first);
	tcase_add_test(tc, test_gen_statem_state_enter_repeat_state);
	tcase_add_test(tc, test_gen_statem_postponed_timeout_event);
	tcase_add_test(tc, test_gen_statem_get_status_counts_active_timeouts);
	tcase_add_test(tc,
		       test_gen_statem_zero_timeouts_before_queued_messages);
	tcase_add_test(tc, test_gen_statem_supervised_named_restart);
	tcase_add_test(tc, test_gen_statem_sends_to_itself_and_calls_a_sibling);
	tcase_add_test(tc, test_gen_statem_events_count_as_server_requests);
	tcase_add_test(tc, test_gen_statem_crash_is_reported);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(gen_statem)
