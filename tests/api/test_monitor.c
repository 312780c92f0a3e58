/* SPDX-License-Identifier: MIT */
/*
 * test_monitor.c - monitors (smarm_monitor, smarm_demonitor, the spawn
 * option): one Down per monitor with how and reason, NOPROC at once for
 * a dead or stale target, independent monitors, demonitor before and
 * after the Down, SMARM_DEMONITOR_FLUSH, a child that ends at once still
 * reported when monitored at spawn, a watcher's end freeing its monitors
 * (SMARM_STAT_MONITORS), every misuse, and the race of a target ending
 * while other workers set monitors on it (exactly one Down each), and
 * thousands of monitors of one watcher taken off in random order, a
 * Down giving back its sender reference once, and refs unique and
 * rising per watcher on four workers, and demonitor racing the Down;
 * a monitor of oneself (never fires), by registered name (a name nobody
 * holds: Down noproc at once), register(Name, Pid), the monitors and
 * monitored-by lists, and every Down of one exit queued before any
 * watcher runs.
 * Ports the Rust smarm runtime's tests/monitor.rs and the local cases
 * of OTP's monitor_SUITE, named in the tests (case_1a, mon_1, mon_e_1,
 * demon_1, demon_2, demon_e_1, demonitor_flush, local_remove_monitor,
 * list_cleanup).
 */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define SIG_SZ sizeof(smarm_signal_t)

static void body_exit(void *arg)
{
	(void)arg;
}

static void body_crash(void *arg)
{
	smarm_actor_crash((intptr_t)arg);
}

/* Park until stopped (a channel nobody sends on). */
static void body_park(void *arg)
{
	smarm_chan_t *ch = NULL;
	int v;
	(void)arg;
	if (smarm_chan_alloc(&ch, sizeof v, NULL) != 0)
		return;
	smarm_cleanup_push(harness_chan_drop_cb, ch);
	smarm_chan_recv(ch, &v);
}

/* ------------------------------------------------------------ downs */

/*
 * Held until the root has set its monitors: a spawned actor may run on
 * the other worker at once, and end before smarm_monitor (NOPROC).
 */
static atomic_int dr_go;

static void body_exit_gated(void *arg)
{
	while (!atomic_load(&dr_go))
		smarm_actor_yield();
	body_exit(arg);
}

static void body_crash_gated(void *arg)
{
	while (!atomic_load(&dr_go))
		smarm_actor_yield();
	body_crash(arg);
}

/* a ends normally, b crashes with code; neither before dr_go is set. */
static void spawn_gated_pair(smarm_pid_t *a, smarm_pid_t *b, intptr_t code)
{
	atomic_store(&dr_go, 0);
	HARNESS_EQ(smarm_actor_spawn(a, body_exit_gated, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(b, body_crash_gated, (void *)code, NULL),
		   0);
}

static void root_down_reasons(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t a, b;
	uint64_t ra = 0, rb = 0;
	smarm_signal_t s;
	(void)arg;
	spawn_gated_pair(&a, &b, 42);
	HARNESS_EQ(smarm_monitor(a, ch, &ra), 0);
	HARNESS_EQ(smarm_monitor(b, ch, &rb), 0);
	atomic_store(&dr_go, 1);
	HARNESS_CHECK(ra != 0 && rb != 0 && ra != rb);
	for (int i = 0; i < 2; i++) {
		HARNESS_EQ(harness_recv_sig(ch, &s), 0);
		HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
		if (s.ref == ra) {
			HARNESS_CHECK(smarm_pid_eq(s.from, a));
			HARNESS_EQ(s.how, SMARM_EXIT_NORMAL);
			HARNESS_EQ(s.reason, 0);
		} else {
			HARNESS_EQ(s.ref, rb);
			HARNESS_CHECK(smarm_pid_eq(s.from, b));
			HARNESS_EQ(s.how, SMARM_EXIT_CRASHED);
			HARNESS_EQ(s.reason, 42);
		}
	}
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), SMARM_EAGAIN); /* one-shot */
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	harness_chan_drop(ch);
}

START_TEST(test_monitor_mon_1_down_carries_how_and_reason)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_down_reasons, NULL), 0);
	harness_checks_assert();
}
END_TEST

static void root_dead_noproc(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t a;
	uint64_t ref = 0;
	smarm_signal_t s;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, body_exit, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0); /* now stale */
	HARNESS_EQ(smarm_monitor(a, ch, &ref), 0);
	/* Queued at once: no wait. */
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
	HARNESS_EQ(s.how, SMARM_EXIT_NOPROC);
	HARNESS_EQ(s.ref, ref);
	HARNESS_CHECK(smarm_pid_eq(s.from, a));
	HARNESS_EQ(smarm_demonitor(ref, 0), SMARM_ENOENT);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	harness_chan_drop(ch);
}

START_TEST(test_monitor_mon_1_dead_target_is_noproc_at_once)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_dead_noproc, NULL), 0);
	harness_checks_assert();
}
END_TEST

static void root_multiple(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t a;
	uint64_t r[3];
	smarm_signal_t s;
	int seen = 0;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
	for (int i = 0; i < 3; i++)
		HARNESS_EQ(smarm_monitor(a, ch, &r[i]), 0);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 3);
	HARNESS_EQ(smarm_actor_stop(a), 0);
	for (int i = 0; i < 3; i++) {
		HARNESS_EQ(harness_recv_sig(ch, &s), 0);
		HARNESS_EQ(s.how, SMARM_EXIT_STOPPED);
		for (int j = 0; j < 3; j++)
			if (s.ref == r[j])
				seen |= 1 << j;
	}
	HARNESS_EQ(seen, 7);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), SMARM_EAGAIN);
	harness_chan_drop(ch);
}

START_TEST(test_monitor_multiple_monitors_all_notified)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_multiple, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------- demonitor */

static void root_demonitor(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t a;
	uint64_t r1, r2;
	smarm_signal_t s;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_monitor(a, ch, &r1), 0);
	HARNESS_EQ(smarm_monitor(a, ch, &r2), 0);
	HARNESS_EQ(smarm_demonitor(r1, 0), 0);		  /* it was active */
	HARNESS_EQ(smarm_demonitor(r1, 0), SMARM_ENOENT); /* demon_2 */
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 1);
	HARNESS_EQ(smarm_actor_stop(a), 0);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	/* Only the sibling fires (demonitor_one_of_many). */
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.ref, r2);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), SMARM_EAGAIN);
	HARNESS_EQ(smarm_demonitor(r2, 0), SMARM_ENOENT);     /* after fire */
	HARNESS_EQ(smarm_demonitor(999999, 0), SMARM_ENOENT); /* demon_1 */
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	harness_chan_drop(ch);
}

START_TEST(test_monitor_demon_1_demon_2_demonitor_stops_delivery)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_demonitor, NULL), 0);
	harness_checks_assert();
}
END_TEST

static void root_flush(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t a, b;
	uint64_t ra, rb;
	smarm_signal_t s, other;
	(void)arg;
	memset(&other, 0, sizeof other);
	other.kind = SMARM_SIGNAL_DOWN;
	other.ref = 7777777; /* not a ref of ours: must survive the flush */
	HARNESS_EQ(smarm_actor_spawn(&a, body_crash, (void *)3, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_monitor(a, ch, &ra), 0);
	HARNESS_EQ(smarm_monitor(b, ch, &rb), 0);
	HARNESS_EQ(smarm_chan_send(ch, &other), 0);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0); /* Down is queued */
	HARNESS_EQ(harness_chan_len(ch), 2);
	/* Fired: not active, but the queued Down goes. */
	HARNESS_EQ(smarm_demonitor(ra, SMARM_DEMONITOR_FLUSH), SMARM_ENOENT);
	HARNESS_EQ(harness_chan_len(ch), 1);
	/* Active: removed, and nothing will come. */
	HARNESS_EQ(smarm_demonitor(rb, SMARM_DEMONITOR_FLUSH), 0);
	HARNESS_EQ(smarm_actor_stop(b), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), 0);
	HARNESS_EQ(s.ref, other.ref);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), SMARM_EAGAIN);
	/* The only monitor of this watcher fires: still flushable. */
	HARNESS_EQ(smarm_actor_spawn(&a, body_exit, NULL, NULL), 0);
	HARNESS_EQ(smarm_monitor(a, ch, &ra), 0);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(harness_chan_len(ch), 1);
	HARNESS_EQ(smarm_demonitor(ra, SMARM_DEMONITOR_FLUSH), SMARM_ENOENT);
	HARNESS_EQ(harness_chan_len(ch), 0);
	harness_chan_drop(ch);
}

START_TEST(test_monitor_demonitor_flush_removes_queued_down)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_flush, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------- spawn option */

static void root_spawn_monitor(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_spawn_opts_t *o = NULL;
	smarm_pid_t a;
	uint64_t ref = 0;
	smarm_signal_t s;
	(void)arg;
	HARNESS_EQ(smarm_spawn_opts_alloc(&o), 0);
	HARNESS_EQ(smarm_spawn_opts_set_monitor(o, ch, &ref), 0);
	for (int i = 0; i < 50; i++) {
		/* Detached, crashing at once: only the monitor can tell. */
		ref = 0;
		HARNESS_EQ(smarm_actor_spawn(NULL, body_crash, (void *)5, o),
			   0);
		HARNESS_CHECK(ref != 0);
		HARNESS_EQ(harness_recv_sig(ch, &s), 0);
		HARNESS_EQ(s.ref, ref);
		HARNESS_EQ(s.how, SMARM_EXIT_CRASHED);
		HARNESS_EQ(s.reason, 5);
	}
	HARNESS_EQ(smarm_actor_spawn(&a, body_exit, NULL, o), 0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_CHECK(smarm_pid_eq(s.from, a));
	HARNESS_EQ(s.how, SMARM_EXIT_NORMAL);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_spawn_opts_set_monitor(o, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(NULL, body_exit, NULL, o), 0);
	HARNESS_EQ(smarm_chan_recv_timeout(ch, &s, MS(50)), SMARM_ETIMEDOUT);
	smarm_spawn_opts_free(o);
	harness_chan_drop(ch);
}

START_TEST(test_monitor_spawn_option_reports_a_child_that_exits_at_once)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, root_spawn_monitor, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------------------- many, any order */

/*
 * One watcher with thousands of monitors in flight, taken off in no
 * particular order: demonitored at random, fired at random (stops from
 * this worker, ends on either), more set in between, the same target
 * watched twice. Each demonitor answers by its ref alone (0 while
 * active, ENOENT after its Down or its demonitor), each Down names one
 * active ref once, and nothing is left afterwards. The watcher's records
 * are kept in ref order (monitor.c): this walks its finds at both ends
 * and in the middle, its compaction and its growth.
 */
#define MA_N 3000
enum { MA_ACTIVE = 1, MA_OFF, MA_FIRED };

static uint64_t ma_ref[2 * MA_N]; /* [i]: on target i % MA_N */
static uint8_t ma_st[2 * MA_N];
static smarm_pid_t ma_pid[MA_N];
static bool ma_stopped[MA_N];

static uint32_t ma_rand(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	return *x >> 8;
}

/* Monitor k's index by ref (refs are few: a scan is fine here). */
static int ma_find(uint64_t ref, int nmon)
{
	for (int k = 0; k < nmon; k++)
		if (ma_ref[k] == ref)
			return k;
	return -1;
}

/* Stop target i and take the Down of each active monitor on it. */
static void ma_fire(smarm_chan_t *ch, int i, int nmon)
{
	int want = 0;
	smarm_signal_t s;
	for (int k = i; k < nmon; k += MA_N)
		want += ma_st[k] == MA_ACTIVE;
	HARNESS_EQ(smarm_actor_stop(ma_pid[i]), 0);
	HARNESS_EQ(smarm_actor_join(ma_pid[i], NULL, NULL), 0);
	ma_stopped[i] = true;
	for (; want > 0; want--) {
		int k;
		HARNESS_EQ(harness_recv_sig(ch, &s), 0);
		k = ma_find(s.ref, nmon);
		HARNESS_CHECK(k >= 0 && k % MA_N == i);
		if (k < 0 || k % MA_N != i)
			return;
		HARNESS_EQ(ma_st[k],
			   MA_ACTIVE); /* once, and never demonitored */
		HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
		HARNESS_EQ(s.how, SMARM_EXIT_STOPPED);
		ma_st[k] = MA_FIRED;
	}
}

static void root_many_any_order(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	uint32_t x = 20261202u;
	int nmon = MA_N;
	(void)arg;
	memset(ma_st, 0, sizeof ma_st);
	memset(ma_stopped, 0, sizeof ma_stopped);
	for (int i = 0; i < MA_N; i++) {
		HARNESS_EQ(smarm_actor_spawn(&ma_pid[i], body_park, NULL, NULL),
			   0);
		HARNESS_EQ(smarm_monitor(ma_pid[i], ch, &ma_ref[i]), 0);
		ma_st[i] = MA_ACTIVE;
	}
	/* A third demonitored, a sixth fired, at random. */
	for (int j = 0; j < MA_N / 3; j++) {
		int k = (int)(ma_rand(&x) % MA_N);
		int want = ma_st[k] == MA_ACTIVE ? 0 : SMARM_ENOENT;
		HARNESS_EQ(smarm_demonitor(ma_ref[k], 0), want);
		if (want == 0)
			ma_st[k] = MA_OFF;
	}
	for (int j = 0; j < MA_N / 6; j++) {
		int i = (int)(ma_rand(&x) % MA_N);
		if (!ma_stopped[i])
			ma_fire(ch, i, nmon);
	}
	/* A second monitor on every target, dead ones included (NOPROC
	 * at once, taken here), then the oldest and the newest off. */
	for (int i = 0; i < MA_N; i++) {
		smarm_signal_t s;
		HARNESS_EQ(smarm_monitor(ma_pid[i], ch, &ma_ref[MA_N + i]), 0);
		ma_st[MA_N + i] = MA_ACTIVE;
		if (ma_stopped[i]) {
			HARNESS_EQ(harness_recv_sig(ch, &s), 0);
			HARNESS_EQ(s.ref, ma_ref[MA_N + i]);
			HARNESS_EQ(s.how, SMARM_EXIT_NOPROC); /* joined */
			ma_st[MA_N + i] = MA_FIRED;
		}
	}
	nmon = 2 * MA_N;
	for (int k = 0; k < nmon; k += nmon - 1) {
		int want = ma_st[k] == MA_ACTIVE ? 0 : SMARM_ENOENT;
		HARNESS_EQ(smarm_demonitor(ma_ref[k], 0), want);
		if (want == 0)
			ma_st[k] = MA_OFF;
	}
	/* Every ref answers as its state says, twice over. */
	for (int k = 0; k < nmon; k++)
		if (ma_st[k] != MA_ACTIVE)
			HARNESS_EQ(smarm_demonitor(ma_ref[k], 0), SMARM_ENOENT);
	/* The rest fired in random order. */
	int left = 0;
	for (int i = 0; i < MA_N; i++)
		left += !ma_stopped[i];
	for (; left > 0; left--) {
		int i = (int)(ma_rand(&x) % MA_N);
		while (ma_stopped[i])
			i = (i + 1) % MA_N;
		ma_fire(ch, i, nmon);
	}
	for (int k = 0; k < nmon; k++) {
		HARNESS_CHECK(ma_st[k] == MA_OFF || ma_st[k] == MA_FIRED);
		HARNESS_EQ(smarm_demonitor(ma_ref[k], 0), SMARM_ENOENT);
	}
	HARNESS_EQ(harness_chan_len(ch), 0);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	harness_chan_drop(ch);
}

START_TEST(test_monitor_many_in_flight_any_order)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_many_any_order, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------- watcher death */

#define WD_N 10
static smarm_pid_t wd_targets[WD_N];

static void watcher_sets_and_exits(void *arg)
{
	smarm_chan_t *ch = arg;
	for (int i = 0; i < WD_N; i++)
		HARNESS_EQ(smarm_monitor(wd_targets[i], ch, NULL), 0);
}

static void root_watcher_death(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t w;
	(void)arg;
	for (int i = 0; i < WD_N; i++)
		HARNESS_EQ(smarm_actor_spawn(&wd_targets[i], body_park, NULL,
					     NULL),
			   0);
	HARNESS_EQ(smarm_actor_spawn(&w, watcher_sets_and_exits, ch, NULL), 0);
	HARNESS_EQ(smarm_actor_join(w, NULL, NULL), 0);
	/* The watcher's end removed its monitors from their targets. */
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	for (int i = 0; i < WD_N; i++) {
		HARNESS_EQ(smarm_actor_stop(wd_targets[i]), 0);
		HARNESS_EQ(smarm_actor_join(wd_targets[i], NULL, NULL), 0);
	}
	HARNESS_EQ(harness_chan_len(ch), 0); /* no Down for a dead watcher */
	harness_chan_drop(ch);
}

/*
 * OTP monitor_SUITE case_1a: A monitors B, B kills A and then exits.
 * The watcher dies while its target is still alive and the target ends
 * right after: A ends stopped without ever receiving B's Down (which
 * may still reach A's channel first, as B's exit can run before A is
 * scheduled to die), B ends normally, and the monitor is gone with A.
 */
static _Atomic int c1_set;	  /* A's monitor on B is set */
static _Atomic uintptr_t c1_chan; /* A's signal channel */

static void c1_b(void *arg)
{
	smarm_pid_t a = { (uint64_t)(uintptr_t)arg }; /* its watcher */
	while (!atomic_load(&c1_set))
		smarm_actor_yield();
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_STOPPED, 0), 0);
}

static void c1_a_body(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t b;
	smarm_signal_t s;
	uint64_t ref = 0;
	(void)arg;
	atomic_store(&c1_chan, (uintptr_t)ch);
	HARNESS_EQ(smarm_actor_spawn(&b, c1_b,
				     (void *)(uintptr_t)smarm_actor_self().id,
				     NULL),
		   0);
	HARNESS_EQ(smarm_monitor(b, ch, &ref), 0);
	atomic_store(&c1_set, 1);
	/* The kill ends A in this wait (or at its start): receiving B's
	 * Down would mean A ran past the kill B sent before exiting. */
	HARNESS_EQ(smarm_chan_recv(ch, &s), 0);
	HARNESS_CHECK(0);
}

static void root_case_1a(void *arg)
{
	smarm_pid_t a;
	int how = -1;
	(void)arg;
	atomic_store(&c1_set, 0);
	HARNESS_EQ(smarm_actor_spawn(&a, c1_a_body, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_STOPPED);
	/* B (joinable, unjoined) ended normally; A's monitor went with A. */
	HARNESS_CHECK(harness_await_stat(smarm_node_current(),
					 SMARM_STAT_LIVE_ACTORS, 1));
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	{
		smarm_chan_t *ch = (smarm_chan_t *)atomic_load(&c1_chan);
		smarm_signal_t s;
		/* B's Down may have reached the channel before the kill
		 * took A (it is never received: A's check above). */
		int rc = smarm_chan_try_recv(ch, &s);
		HARNESS_CHECK(rc == SMARM_EAGAIN ||
			      (rc == 0 && s.how == SMARM_EXIT_NORMAL));
		HARNESS_EQ(smarm_chan_try_recv(ch, &s), SMARM_EAGAIN);
		HARNESS_EQ(smarm_chan_sender_free(ch), 0);
		smarm_chan_receiver_free(ch);
	}
}

START_TEST(test_monitor_case_1a_target_kills_its_watcher_then_exits)
{
	for (int workers = 1; workers <= 4; workers *= 2) {
		harness_checks_reset();
		ck_assert_int_eq(harness_run(workers, root_case_1a, NULL), 0);
		harness_checks_assert();
	}
}
END_TEST

START_TEST(test_monitor_watcher_death_frees_its_monitors)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_watcher_death, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * A monitor's runtime sender reference is given back with its Down,
 * exactly once: while the caller still holds its sender, the channel
 * stays open after the Down (the reference went back in the same hold
 * as the send); when the caller's sender is gone first, the runtime's
 * was the last, and the channel closes right after its Down.
 */
static void root_down_sender_refs(void *arg)
{
	smarm_chan_t *kept = harness_sig_chan();
	smarm_chan_t *left = harness_sig_chan();
	smarm_pid_t a, b;
	uint64_t ra = 0, rb = 0;
	smarm_signal_t s;
	(void)arg;
	spawn_gated_pair(&a, &b, 7);
	HARNESS_EQ(smarm_monitor(a, kept, &ra), 0);
	HARNESS_EQ(smarm_monitor(b, left, &rb), 0);
	/* The runtime's reference keeps `left` open without ours. */
	HARNESS_EQ(smarm_chan_sender_free(left), 0);
	HARNESS_EQ(smarm_chan_try_recv(left, &s), SMARM_EAGAIN);
	atomic_store(&dr_go, 1);
	HARNESS_EQ(harness_recv_sig(kept, &s), 0);
	HARNESS_EQ(s.ref, ra);
	HARNESS_EQ(harness_recv_sig(left, &s), 0);
	HARNESS_EQ(s.ref, rb);
	HARNESS_EQ(s.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	/* Ours is the one sender left of `kept`; none is left of `left`. */
	HARNESS_EQ(smarm_chan_try_recv(kept, &s), SMARM_EAGAIN);
	HARNESS_EQ(harness_recv_sig(left, &s), SMARM_ECLOSED);
	HARNESS_EQ(smarm_chan_sender_free(kept), 0);
	HARNESS_EQ(smarm_chan_try_recv(kept, &s), SMARM_ECLOSED);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	smarm_chan_receiver_free(kept);
	smarm_chan_receiver_free(left);
}

START_TEST(test_monitor_down_gives_back_its_sender_reference_once)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_down_sender_refs, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * Refs are unique on the node and rise per watcher, whichever worker
 * issues them (workers hand them out from blocks of their own): eight
 * watchers on four workers each set RF_N monitors on one parked target,
 * yielding in between so they move, then check their refs rise, and
 * the root checks no ref was issued twice and SMARM_STAT_MONITORS
 * counted every monitor (each worker counts its part).
 */
#define RF_WATCHERS 8
#define RF_N 1500

static uint64_t rf_refs[RF_WATCHERS][RF_N];
static smarm_pid_t rf_target;
static atomic_int rf_set;

static void rf_watcher(void *arg)
{
	int me = (int)(intptr_t)arg;
	smarm_chan_t *ch = harness_sig_chan();
	for (int i = 0; i < RF_N; i++) {
		HARNESS_EQ(smarm_monitor(rf_target, ch, &rf_refs[me][i]), 0);
		if (i > 0)
			HARNESS_CHECK(rf_refs[me][i] > rf_refs[me][i - 1]);
		if (i % 16 == 0)
			smarm_actor_yield();
	}
	atomic_fetch_add(&rf_set, 1);
	while (atomic_load(&rf_set) < RF_WATCHERS + 1)
		smarm_actor_yield(); /* the root has read the count */
	for (int i = 0; i < RF_N; i++)
		HARNESS_EQ(smarm_demonitor(rf_refs[me][i], 0), 0);
	harness_chan_drop(ch);
}

static int rf_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void root_refs(void *arg)
{
	smarm_pid_t w[RF_WATCHERS];
	static uint64_t all[RF_WATCHERS * RF_N];
	(void)arg;
	atomic_store(&rf_set, 0);
	HARNESS_EQ(smarm_actor_spawn(&rf_target, body_park, NULL, NULL), 0);
	for (int i = 0; i < RF_WATCHERS; i++)
		HARNESS_EQ(smarm_actor_spawn(&w[i], rf_watcher,
					     (void *)(intptr_t)i, NULL),
			   0);
	while (atomic_load(&rf_set) < RF_WATCHERS)
		smarm_actor_yield();
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), RF_WATCHERS * RF_N);
	atomic_fetch_add(&rf_set, 1);
	for (int i = 0; i < RF_WATCHERS; i++)
		HARNESS_EQ(smarm_actor_join(w[i], NULL, NULL), 0);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	memcpy(all, rf_refs, sizeof all);
	qsort(all, RF_WATCHERS * RF_N, sizeof all[0], rf_cmp);
	HARNESS_CHECK(all[0] != 0);
	for (int i = 1; i < RF_WATCHERS * RF_N; i++)
		if (all[i] == all[i - 1]) {
			HARNESS_CHECK(!"a ref issued twice");
			break;
		}
	HARNESS_EQ(smarm_actor_stop(rf_target), 0);
	HARNESS_EQ(smarm_actor_join(rf_target, NULL, NULL), 0);
}

START_TEST(test_monitor_refs_unique_and_rising_across_workers)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, root_refs, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * A Down means the target is gone: smarm_actor_is_alive is false for it
 * as soon as its Down is received, though the target's worker may not
 * have finalized its slot yet (the Down is sent from its exit hooks).
 * Many times over, on two workers, so the two often overlap.
 */
#define DA_N 2000

static void root_down_then_dead(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_spawn_opts_t *opts = NULL;
	smarm_signal_t s;
	int alive = 0;
	(void)arg;
	HARNESS_EQ(smarm_spawn_opts_alloc(&opts), 0);
	HARNESS_EQ(smarm_spawn_opts_set_monitor(opts, ch, NULL), 0);
	for (int i = 0; i < DA_N; i++) {
		smarm_pid_t p;
		HARNESS_EQ(smarm_actor_spawn(&p, body_exit, NULL, opts), 0);
		HARNESS_EQ(harness_recv_sig(ch, &s), 0);
		HARNESS_CHECK(smarm_pid_eq(s.from, p));
		alive += smarm_actor_is_alive(p);
	}
	HARNESS_EQ(alive, 0);
	smarm_spawn_opts_free(opts);
	harness_chan_drop(ch);
}

START_TEST(test_monitor_target_is_dead_once_its_down_is_received)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_down_then_dead, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------- errors */

static void other_watcher(void *arg)
{
	smarm_chan_t *ch = arg;
	uint64_t ref = 0;
	smarm_signal_t s;
	HARNESS_EQ(smarm_monitor(wd_targets[0], ch, &ref), 0);
	wd_targets[1].id = ref;			 /* hand the ref to the root */
	HARNESS_EQ(harness_recv_sig(ch, &s), 0); /* still fires for us */
	HARNESS_EQ(s.ref, ref);
}

static void root_errors(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_chan_t *bad = NULL;
	smarm_chan_t *freed = NULL;
	smarm_chan_t *closed = NULL;
	smarm_pid_t a, w;
	uint64_t ref = 1234;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&bad, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&freed, SIG_SZ, NULL), 0);
	harness_chan_drop(freed);
	HARNESS_EQ(smarm_chan_alloc(&closed, SIG_SZ, NULL), 0);
	HARNESS_EQ(smarm_chan_sender_free(closed), 0);
	HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_monitor(SMARM_PID_NONE, ch, &ref), SMARM_EINVAL);
	HARNESS_EQ(smarm_monitor_name(NULL, ch, &ref), SMARM_EINVAL);
	HARNESS_EQ(smarm_monitor_name("", ch, &ref), SMARM_EINVAL);
	HARNESS_EQ(smarm_monitor_name("x", NULL, &ref), SMARM_EINVAL);
	HARNESS_EQ(smarm_monitor_name("x", bad, &ref), SMARM_EINVAL);
	{
		char longname[SMARM_NAME_MAX + 2];
		smarm_pid_t one;
		size_t k;
		memset(longname, 'n', sizeof longname - 1);
		longname[sizeof longname - 1] = 0;
		HARNESS_EQ(smarm_monitor_name(longname, ch, &ref),
			   SMARM_EINVAL);
		HARNESS_EQ(smarm_actor_monitors(a, NULL, 0, NULL),
			   SMARM_EINVAL);
		HARNESS_EQ(smarm_actor_monitors(a, NULL, 1, &k), SMARM_EINVAL);
		HARNESS_EQ(smarm_actor_monitored_by(a, NULL, 1, &k),
			   SMARM_EINVAL);
		HARNESS_EQ(smarm_actor_monitors(SMARM_PID_NONE, &one, 1, &k),
			   SMARM_ENOPROC);
		HARNESS_EQ(smarm_register_pid("x", SMARM_PID_NONE, NULL),
			   SMARM_EINVAL);
		HARNESS_EQ(smarm_register_pid(NULL, a, NULL), SMARM_EINVAL);
	}
	HARNESS_EQ(smarm_monitor(a, NULL, &ref), SMARM_EINVAL);
	HARNESS_EQ(smarm_monitor(a, bad, &ref), SMARM_EINVAL);
	HARNESS_EQ(smarm_monitor(a, (smarm_chan_t *)&ref, &ref), SMARM_EINVAL);
	HARNESS_EQ(smarm_monitor(a, freed, &ref), SMARM_ESTATE);
	HARNESS_EQ(smarm_monitor(a, closed, &ref), SMARM_ECLOSED);
	HARNESS_EQ(ref, 1234); /* untouched on error */
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	HARNESS_EQ(smarm_demonitor(1, 2), SMARM_EINVAL);
	HARNESS_EQ(smarm_demonitor(0, 0), SMARM_ENOENT);
	/* A ref of another watcher is not ours to remove (demon_e_1). */
	wd_targets[0] = a;
	wd_targets[1].id = 0;
	HARNESS_EQ(smarm_actor_spawn(&w, other_watcher, ch, NULL), 0);
	while (wd_targets[1].id == 0)
		smarm_actor_yield();
	HARNESS_EQ(smarm_demonitor(wd_targets[1].id, SMARM_DEMONITOR_FLUSH),
		   SMARM_ENOENT);
	HARNESS_EQ(smarm_actor_stop(a), 0);
	HARNESS_EQ(smarm_actor_join(w, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_spawn_opts_set_monitor(NULL, ch, NULL), SMARM_EINVAL);
	harness_chan_drop(ch);
	harness_chan_drop(bad);
	smarm_chan_receiver_free(closed);
}

START_TEST(test_monitor_mon_e_1_demon_e_1_misuse_returns_errors)
{
	uint64_t ref = 0;
	smarm_spawn_opts_t *o = NULL;
	smarm_chan_t *bad = NULL;
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_errors, NULL), 0);
	harness_checks_assert();
	/* Outside an actor. */
	ck_assert_int_eq(smarm_monitor(SMARM_PID_NONE, NULL, &ref),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_demonitor(1, 0), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_monitor_name("x", NULL, &ref), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_monitors(SMARM_PID_NONE, NULL, 0, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(
		smarm_actor_monitored_by(SMARM_PID_NONE, NULL, 0, NULL),
		SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_register_pid("x", SMARM_PID_NONE, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_spawn_opts_alloc(&o), 0);
	ck_assert_int_eq(smarm_chan_alloc(&bad, 3, NULL), 0);
	ck_assert_int_eq(smarm_spawn_opts_set_monitor(o, bad, &ref),
			 SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_monitor(o, (smarm_chan_t *)o, &ref),
		SMARM_EINVAL);
	harness_chan_drop(bad);
	ck_assert_int_eq(smarm_spawn_opts_set_monitor(o, bad, &ref),
			 SMARM_ESTATE);
	smarm_spawn_opts_free(o);
}
END_TEST

/* ------------------------------------------------------- the race */

#define RACE_WATCHERS 8
#define RACE_EACH 40
static smarm_pid_t race_target;
static _Atomic int race_ready;

static void race_watcher(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	uint64_t refs[RACE_EACH];
	int got[RACE_EACH] = { 0 };
	smarm_signal_t s;
	(void)arg;
	atomic_fetch_add(&race_ready, 1);
	for (int i = 0; i < RACE_EACH; i++) {
		HARNESS_EQ(smarm_monitor(race_target, ch, &refs[i]), 0);
		if (i % 8 == 0)
			smarm_actor_yield();
	}
	for (int i = 0; i < RACE_EACH; i++) {
		HARNESS_EQ(harness_recv_sig(ch, &s), 0);
		HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
		HARNESS_CHECK(s.how == SMARM_EXIT_STOPPED ||
			      s.how == SMARM_EXIT_NOPROC);
		for (int j = 0; j < RACE_EACH; j++)
			if (refs[j] == s.ref)
				got[j]++;
	}
	for (int j = 0; j < RACE_EACH; j++)
		HARNESS_EQ(got[j], 1);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), SMARM_EAGAIN);
	harness_chan_drop(ch);
}

static void race_killer(void *arg)
{
	(void)arg;
	while (atomic_load(&race_ready) < RACE_WATCHERS / 2)
		smarm_actor_yield();
	smarm_actor_stop(race_target);
}

static void root_race(void *arg)
{
	smarm_pid_t w[RACE_WATCHERS], k;
	(void)arg;
	for (int round = 0; round < 5; round++) {
		atomic_store(&race_ready, 0);
		HARNESS_EQ(
			smarm_actor_spawn(&race_target, body_park, NULL, NULL),
			0);
		for (int i = 0; i < RACE_WATCHERS; i++)
			HARNESS_EQ(smarm_actor_spawn(&w[i], race_watcher, NULL,
						     NULL),
				   0);
		HARNESS_EQ(smarm_actor_spawn(&k, race_killer, NULL, NULL), 0);
		for (int i = 0; i < RACE_WATCHERS; i++)
			HARNESS_EQ(smarm_actor_join(w[i], NULL, NULL), 0);
		HARNESS_EQ(smarm_actor_join(k, NULL, NULL), 0);
		HARNESS_EQ(smarm_actor_join(race_target, NULL, NULL), 0);
		HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	}
}

START_TEST(test_monitor_race_target_dies_while_monitored_one_down_each)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, root_race, NULL), 0);
	harness_checks_assert();
}
END_TEST

/*
 * local_remove_monitor (monitor_SUITE): demonitor racing the Down. Each
 * round, RM_WATCHERS watchers on any worker monitor one target, then
 * demonitor it at about the moment it ends. Whatever wins, the answer
 * and the mailbox agree: 0 (it was in place) and no Down ever; or
 * SMARM_ENOENT (it had fired) and its Down once, unless the demonitor
 * asked SMARM_DEMONITOR_FLUSH, which leaves none. Checked after the
 * root joined the target, when every Down it sends has been sent.
 */
#define RM_WATCHERS 8
#define RM_ROUNDS 150

static struct {
	smarm_pid_t target;
	smarm_chan_t *go; /* the target ends when it gets an element */
	_Atomic int ready, fire, joined;
	_Atomic long in_place, fired;
} rm;

static void rm_target(void *arg)
{
	int v;
	(void)arg;
	HARNESS_EQ(smarm_chan_recv(rm.go, &v), 0);
}

static void rm_watcher(void *arg)
{
	int flags = (int)(intptr_t)arg % 2 ? SMARM_DEMONITOR_FLUSH : 0;
	unsigned spin = (unsigned)(intptr_t)arg * 997u % 8000u;
	smarm_chan_t *ch = harness_sig_chan();
	smarm_signal_t s = { 0 };
	uint64_t ref = 0;
	int rc;
	HARNESS_EQ(smarm_monitor(rm.target, ch, &ref), 0);
	atomic_fetch_add(&rm.ready, 1);
	while (!atomic_load(&rm.fire))
		smarm_actor_yield();
	for (volatile unsigned i = 0; i < spin; i++)
		;
	rc = smarm_demonitor(ref, flags);
	HARNESS_CHECK(rc == 0 || rc == SMARM_ENOENT);
	atomic_fetch_add(rc == 0 ? &rm.in_place : &rm.fired, 1);
	while (!atomic_load(&rm.joined))
		smarm_actor_sleep(US(200));
	if (rc == SMARM_ENOENT && flags == 0) {
		HARNESS_EQ(smarm_chan_try_recv(ch, &s), 0);
		HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
		HARNESS_EQ(s.ref, ref);
		HARNESS_EQ(s.how, SMARM_EXIT_NORMAL);
	}
	HARNESS_EQ(harness_chan_len(ch), 0); /* none, or no second one */
	harness_chan_drop(ch);
}

static void root_remove_monitor(void *arg)
{
	smarm_pid_t w[RM_WATCHERS];
	int v = 1;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&rm.go, sizeof(int), NULL), 0);
	atomic_store(&rm.in_place, 0);
	atomic_store(&rm.fired, 0);
	for (int round = 0; round < RM_ROUNDS; round++) {
		atomic_store(&rm.ready, 0);
		atomic_store(&rm.fire, 0);
		atomic_store(&rm.joined, 0);
		HARNESS_EQ(smarm_actor_spawn(&rm.target, rm_target, NULL, NULL),
			   0);
		for (int i = 0; i < RM_WATCHERS; i++)
			HARNESS_EQ(smarm_actor_spawn(
					   &w[i], rm_watcher,
					   (void *)(intptr_t)(i + round), NULL),
				   0);
		while (atomic_load(&rm.ready) < RM_WATCHERS)
			smarm_actor_yield();
		atomic_store(&rm.fire, 1);
		/* a varying head start for the watchers: both outcomes */
		for (int j = 0; j < round % 2; j++)
			smarm_actor_yield();
		HARNESS_EQ(smarm_chan_send(rm.go, &v), 0);
		HARNESS_EQ(smarm_actor_join(rm.target, NULL, NULL), 0);
		atomic_store(&rm.joined, 1);
		for (int i = 0; i < RM_WATCHERS; i++)
			HARNESS_EQ(smarm_actor_join(w[i], NULL, NULL), 0);
		HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	}
	HARNESS_EQ(atomic_load(&rm.in_place) + atomic_load(&rm.fired),
		   (long)RM_ROUNDS * RM_WATCHERS);
	harness_chan_drop(rm.go);
}

START_TEST(test_monitor_local_remove_monitor_demonitor_races_the_down)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i, root_remove_monitor, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------- OTP's extras */

/* Monitor itself into *arg (a channel of the root's), then end. */
static void body_self_monitor(void *arg)
{
	smarm_chan_t *ch = arg;
	smarm_pid_t buf[2];
	size_t k = 0;
	uint64_t ref = 0;
	HARNESS_EQ(smarm_monitor(smarm_actor_self(), ch, &ref), 0);
	HARNESS_CHECK(ref != 0);
	HARNESS_EQ(smarm_actor_monitors(smarm_actor_self(), buf, 2, &k), 0);
	HARNESS_EQ(k, 1);
	HARNESS_CHECK(smarm_pid_eq(buf[0], smarm_actor_self()));
	HARNESS_EQ(smarm_actor_monitored_by(smarm_actor_self(), buf, 2, &k), 0);
	HARNESS_EQ(k, 1);
	HARNESS_CHECK(smarm_pid_eq(buf[0], smarm_actor_self()));
	/* It can be removed like any other... */
	HARNESS_EQ(smarm_demonitor(ref, 0), 0);
	HARNESS_EQ(smarm_actor_monitors(smarm_actor_self(), NULL, 0, &k), 0);
	HARNESS_EQ(k, 0);
	/* ... and one left in place never fires. */
	HARNESS_EQ(smarm_monitor(smarm_actor_self(), ch, NULL), 0);
	smarm_actor_crash(9);
}

/*
 * mon_1's and list_cleanup's parts: a monitor of oneself (allowed,
 * never fires), of a registered name (the Down names the holder) and of
 * a name nobody holds (Down noproc at once); register(Name, Pid) of
 * another actor; process_info's monitors and monitored_by, cleaned up
 * when monitors fire or are removed.
 */
static void root_otp_extras(void *arg)
{
	smarm_chan_t *ch = harness_sig_chan();
	smarm_pid_t a, b, holder, buf[4];
	smarm_signal_t s = { 0 };
	uint64_t r1 = 0, r2 = 0, r3 = 0;
	size_t k = 0;
	(void)arg;
	/* Itself. */
	HARNESS_EQ(smarm_actor_spawn(&a, body_self_monitor, ch, NULL), 0);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(harness_chan_len(ch), 0);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	/* A name nobody holds: noproc at once. */
	HARNESS_EQ(smarm_monitor_name("otp.nobody", ch, &r1), 0);
	HARNESS_CHECK(r1 != 0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
	HARNESS_EQ(s.how, SMARM_EXIT_NOPROC);
	HARNESS_EQ(s.ref, r1);
	HARNESS_CHECK(smarm_pid_eq(s.from, SMARM_PID_NONE));
	/* register(Name, Pid) of another actor, then a monitor by name. */
	HARNESS_EQ(smarm_actor_spawn(&a, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, body_park, NULL, NULL), 0);
	HARNESS_EQ(smarm_register_pid("otp.a", a, &holder), 0);
	HARNESS_CHECK(smarm_pid_eq(holder, SMARM_PID_NONE));
	HARNESS_EQ(smarm_register_pid("otp.a", a, NULL), 0); /* idempotent */
	HARNESS_EQ(smarm_register_pid("otp.a", b, &holder), SMARM_EEXIST);
	HARNESS_CHECK(smarm_pid_eq(holder, a));
	HARNESS_EQ(smarm_whereis("otp.a", &holder), 0);
	HARNESS_CHECK(smarm_pid_eq(holder, a));
	HARNESS_EQ(smarm_monitor_name("otp.a", ch, &r2), 0);
	HARNESS_EQ(smarm_monitor(a, ch, &r3), 0);
	/* process_info: monitors and monitored_by. */
	HARNESS_EQ(smarm_actor_monitors(smarm_actor_self(), buf, 4, &k), 0);
	HARNESS_EQ(k, 2);
	HARNESS_CHECK(smarm_pid_eq(buf[0], a) && smarm_pid_eq(buf[1], a));
	HARNESS_EQ(smarm_actor_monitored_by(a, buf, 1, &k), 0);
	HARNESS_EQ(k, 2); /* cut to 1 */
	HARNESS_CHECK(smarm_pid_eq(buf[0], smarm_actor_self()));
	HARNESS_EQ(smarm_actor_monitored_by(b, buf, 4, &k), 0);
	HARNESS_EQ(k, 0);
	HARNESS_EQ(smarm_demonitor(r3, 0), 0);
	HARNESS_EQ(smarm_actor_monitored_by(a, buf, 4, &k), 0);
	HARNESS_EQ(k, 1);
	HARNESS_EQ(smarm_actor_send_exit(a, SMARM_EXIT_CRASHED, 5), 0);
	HARNESS_EQ(harness_recv_sig(ch, &s), 0);
	HARNESS_EQ(s.ref, r2);
	HARNESS_EQ(s.how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(s.reason, 5);
	HARNESS_CHECK(smarm_pid_eq(s.from, a));
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_monitors(smarm_actor_self(), buf, 4, &k), 0);
	HARNESS_EQ(k, 0); /* list_cleanup */
	HARNESS_EQ(smarm_actor_monitors(a, buf, 4, &k), SMARM_ENOPROC);
	HARNESS_EQ(smarm_register_pid("otp.a", a, NULL), SMARM_ENOPROC);
	HARNESS_EQ(smarm_whereis("otp.a", &holder), SMARM_ENONAME);
	HARNESS_EQ(smarm_actor_stop(b), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	HARNESS_EQ(harness_chan_len(ch), 0);
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_MONITORS), 0);
	harness_chan_drop(ch);
}

START_TEST(test_monitor_mon_1_list_cleanup_self_names_and_lists)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i, root_otp_extras, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------------ order */

/*
 * All the signals of one exit are queued at every watcher before any
 * watcher is woken: B monitors X, then T does; X ends; B, on its Down,
 * sends T a message into the channel T's Down goes to. T must read its
 * Down first, in every round. B is waiting for its Down when X ends
 * (do_parked): a watcher still running then, not woken by its Down,
 * may read it while the exit sends the others (docs/architecture/
 * actors.md), which a loaded machine's kernel brought about by leaving
 * B's thread off the CPU between its "ready" and its receive. The root's own
 * monitors of X, set between B's and T's, widen the window between their Downs
 * to what a busy target's exit takes (without the fix, most rounds on two
 * workers read B's message first).
 */
#define DO_ROUNDS 100
#define DO_BETWEEN 500
#define DO_MSG 77

struct down_order {
	smarm_chan_t *go;      /* X parks on it */
	smarm_chan_t *ready;   /* B and T say they monitor X */
	smarm_chan_t *ch_b;    /* B's Downs */
	smarm_chan_t *ch_t;    /* T's Downs and B's message */
	smarm_chan_t *verdict; /* T: 1 its Down came first, 0 not */
	smarm_chan_t *junk;    /* the root's Downs */
	smarm_pid_t x;
};

static void do_x(void *arg)
{
	struct down_order *o = arg;
	int v;
	(void)smarm_chan_recv(o->go, &v);
}

static void do_b(void *arg)
{
	struct down_order *o = arg;
	smarm_signal_t s = { 0 };
	int v = 1;
	HARNESS_EQ(smarm_monitor(o->x, o->ch_b, NULL), 0);
	HARNESS_EQ(smarm_chan_send(o->ready, &v), 0);
	HARNESS_EQ(harness_recv_sig(o->ch_b, &s), 0);
	HARNESS_EQ(s.kind, SMARM_SIGNAL_DOWN);
	s.kind = DO_MSG;
	HARNESS_EQ(smarm_chan_send(o->ch_t, &s), 0);
}

static void do_t(void *arg)
{
	struct down_order *o = arg;
	smarm_signal_t first = { 0 }, second = { 0 };
	int v = 1;
	HARNESS_EQ(smarm_monitor(o->x, o->ch_t, NULL), 0);
	HARNESS_EQ(smarm_chan_send(o->ready, &v), 0);
	HARNESS_EQ(harness_recv_sig(o->ch_t, &first), 0);
	HARNESS_EQ(harness_recv_sig(o->ch_t, &second), 0);
	v = first.kind == SMARM_SIGNAL_DOWN && second.kind == DO_MSG;
	HARNESS_EQ(smarm_chan_send(o->verdict, &v), 0);
}

/* Wait until pid waits (parked: B in its receive). */
static void do_parked(smarm_pid_t pid)
{
	smarm_actor_info_t in;
	for (;;) {
		memset(&in, 0, sizeof in);
		in.size = sizeof in;
		HARNESS_EQ(smarm_actor_info(NULL, pid, &in), 0);
		if (in.state == SMARM_ACTOR_PARKED)
			return;
		smarm_actor_yield();
	}
}

static void root_down_order(void *arg)
{
	struct down_order o;
	smarm_pid_t b, t;
	int v = 0, late = 0;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&o.go, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&o.ready, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&o.verdict, sizeof(int), NULL), 0);
	for (int round = 0; round < DO_ROUNDS; round++) {
		o.ch_b = harness_sig_chan();
		o.ch_t = harness_sig_chan();
		o.junk = harness_sig_chan();
		HARNESS_EQ(smarm_actor_spawn(&o.x, do_x, &o, NULL), 0);
		HARNESS_EQ(smarm_actor_spawn(&b, do_b, &o, NULL), 0);
		HARNESS_EQ(smarm_chan_recv(o.ready, &v), 0); /* B first */
		for (int i = 0; i < DO_BETWEEN; i++)
			HARNESS_EQ(smarm_monitor(o.x, o.junk, NULL), 0);
		HARNESS_EQ(smarm_actor_spawn(&t, do_t, &o, NULL), 0);
		HARNESS_EQ(smarm_chan_recv(o.ready, &v), 0);
		do_parked(b);
		HARNESS_EQ(smarm_chan_send(o.go, &v), 0);
		HARNESS_EQ(smarm_chan_recv(o.verdict, &v), 0);
		late += v == 0;
		HARNESS_EQ(smarm_actor_join(o.x, NULL, NULL), 0);
		HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
		HARNESS_EQ(smarm_actor_join(t, NULL, NULL), 0);
		harness_chan_drop(o.ch_b);
		harness_chan_drop(o.ch_t);
		harness_chan_drop(o.junk);
	}
	HARNESS_EQ(late, 0);
	harness_chan_drop(o.go);
	harness_chan_drop(o.ready);
	harness_chan_drop(o.verdict);
}

START_TEST(test_monitor_one_exit_queues_every_down_before_any_wake)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(_i, root_down_order, NULL), 0);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_monitor_suite(void)
{
	Suite *s = suite_create("monitor");
	TCase *t = tcase_create("down");
	tcase_add_test(t, test_monitor_mon_1_down_carries_how_and_reason);
	tcase_add_test(t, test_monitor_mon_1_dead_target_is_noproc_at_once);
	tcase_add_test(t, test_monitor_multiple_monitors_all_notified);
	tcase_add_loop_test(
		t, test_monitor_mon_1_list_cleanup_self_names_and_lists, 1, 5);
	suite_add_tcase(s, t);
	t = tcase_create("demonitor");
	tcase_add_test(t,
		       test_monitor_demon_1_demon_2_demonitor_stops_delivery);
	tcase_add_test(t, test_monitor_demonitor_flush_removes_queued_down);
	tcase_add_test(t, test_monitor_many_in_flight_any_order);
	suite_add_tcase(s, t);
	t = tcase_create("lifetime");
	tcase_add_test(
		t,
		test_monitor_spawn_option_reports_a_child_that_exits_at_once);
	tcase_add_test(t, test_monitor_watcher_death_frees_its_monitors);
	tcase_add_test(
		t, test_monitor_case_1a_target_kills_its_watcher_then_exits);
	tcase_add_test(t,
		       test_monitor_down_gives_back_its_sender_reference_once);
	tcase_add_test(t, test_monitor_refs_unique_and_rising_across_workers);
	tcase_add_test(t,
		       test_monitor_target_is_dead_once_its_down_is_received);
	suite_add_tcase(s, t);
	t = tcase_create("errors");
	tcase_add_test(t, test_monitor_mon_e_1_demon_e_1_misuse_returns_errors);
	suite_add_tcase(s, t);
	t = tcase_create("race");
	tcase_add_test(
		t, test_monitor_race_target_dies_while_monitored_one_down_each);
	/* 2 workers, and 4 on 2 cores */
	tcase_add_loop_test(
		t, test_monitor_local_remove_monitor_demonitor_races_the_down,
		2, 3);
	tcase_add_loop_test(
		t, test_monitor_local_remove_monitor_demonitor_races_the_down,
		4, 5);
	/* 2 workers, and 4 on 2 cores */
	tcase_add_loop_test(
		t, test_monitor_one_exit_queues_every_down_before_any_wake, 2,
		3);
	tcase_add_loop_test(
		t, test_monitor_one_exit_queues_every_down_before_any_wake, 4,
		5);
	suite_add_tcase(s, t);
	return s;
}

SMARM_TEST_MAIN(monitor)
