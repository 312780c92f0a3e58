/* SPDX-License-Identifier: MIT */
/*
 * test_try_spawn.c - the actor limit: exact capacity, refusals that are
 * repeatable and never abort, self-healing after holders exit, a race for
 * the last slots, and on-demand growth of the slot table.
 */
#include "harness.h"

/* A holder parks on its own channel until it receives anything. */
struct ts_holder {
	smarm_chan_t *ch;
	smarm_pid_t pid;
};

static void ts_hold(void *arg)
{
	struct ts_holder *h = arg;
	int v;
	smarm_chan_recv(h->ch, &v);
}

static void ts_release(struct ts_holder *h)
{
	int v = 1;
	smarm_chan_send(h->ch, &v);
}

static void ts_nop(void *arg)
{
	(void)arg;
}

/* ------------------------------------------------------------ capacity 8 */

#define TS_CAP 8

static struct ts_holder ts_h[TS_CAP];
static int ts_ok_first, ts_refusals[3], ts_plain_rc, ts_plain_null_rc;
static int ts_after_one_rc, ts_again_ok, ts_again_refused;
static int64_t ts_live_at_cap;

static int ts_fill(int *ok)
{
	int rc = 0;
	*ok = 0;
	for (int i = 0; i < TS_CAP; i++) {
		rc = smarm_actor_spawn(&ts_h[i].pid, ts_hold, &ts_h[i], NULL);
		if (rc != 0)
			break;
		(*ok)++;
	}
	return rc;
}

static void ts_drain(int n)
{
	for (int i = 0; i < n; i++) {
		ts_release(&ts_h[i]);
		smarm_actor_join(ts_h[i].pid, NULL, NULL);
	}
}

static void ts_root_cap(void *arg)
{
	smarm_pid_t extra;
	(void)arg;
	for (int i = 0; i < TS_CAP; i++)
		smarm_chan_alloc(&ts_h[i].ch, sizeof(int), NULL);

	ts_refusals[0] = ts_fill(&ts_ok_first); /* root + 7 */
	smarm_node_get_int(smarm_node_current(), SMARM_STAT_LIVE_ACTORS,
			   &ts_live_at_cap);
	smarm_actor_yield(); /* let the holders run and park */
	ts_refusals[1] = smarm_actor_spawn(&extra, ts_nop, NULL, NULL);
	ts_refusals[2] = smarm_actor_spawn(NULL, ts_nop, NULL, NULL);
	ts_plain_rc = smarm_actor_spawn(&extra, ts_nop, NULL, NULL);
	ts_plain_null_rc = smarm_actor_spawn(NULL, ts_nop, NULL, NULL);

	/* one holder leaves: exactly one slot comes back */
	ts_release(&ts_h[0]);
	smarm_actor_join(ts_h[0].pid, NULL, NULL);
	ts_after_one_rc =
		smarm_actor_spawn(&ts_h[0].pid, ts_hold, &ts_h[0], NULL);
	ts_drain(ts_ok_first);

	/* all gone: the node is whole again */
	ts_again_refused = ts_fill(&ts_again_ok);
	ts_drain(ts_again_ok);
	for (int i = 0; i < TS_CAP; i++) {
		harness_chan_drop(ts_h[i].ch);
	}
}

START_TEST(test_try_spawn_max8_allows_seven_then_eatcapacity)
{
	ts_ok_first = ts_again_ok = -1;
	ck_assert_int_eq(
		harness_run_ex(_i ? 4 : 1, TS_CAP, ts_root_cap, NULL, NULL),
		SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ts_ok_first, TS_CAP - 1);
	ck_assert_int_eq(ts_live_at_cap, TS_CAP);
	ck_assert_int_eq(ts_refusals[0], SMARM_EATCAPACITY);
	ck_assert_int_eq(ts_refusals[1], SMARM_EATCAPACITY);
	ck_assert_int_eq(ts_refusals[2], SMARM_EATCAPACITY);
	/* plain spawn refuses the same way and never aborts */
	ck_assert_int_eq(ts_plain_rc, SMARM_EATCAPACITY);
	ck_assert_int_eq(ts_plain_null_rc, SMARM_EATCAPACITY);
	ck_assert_int_eq(ts_after_one_rc, 0);
	ck_assert_int_eq(ts_again_ok, TS_CAP - 1);
	ck_assert_int_eq(ts_again_refused, SMARM_EATCAPACITY);
}
END_TEST

/* an unjoined joinable actor still owns its slot; detach gives it back */
static int ts_detach_rc, ts_refused_while_unjoined, ts_after_detach_rc;

static void ts_root_unjoined(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_actor_spawn(&p, ts_nop, NULL, NULL); /* the only free slot */
	smarm_actor_yield(); /* 1 worker: it runs to its end */
	ts_refused_while_unjoined = smarm_actor_spawn(NULL, ts_nop, NULL, NULL);
	ts_detach_rc = smarm_actor_detach(p);
	ts_after_detach_rc = smarm_actor_spawn(NULL, ts_nop, NULL, NULL);
}

START_TEST(test_try_spawn_unjoined_holds_slot_until_detached)
{
	ck_assert_int_eq(harness_run_ex(1, 2, ts_root_unjoined, NULL, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ts_refused_while_unjoined, SMARM_EATCAPACITY);
	ck_assert_int_eq(ts_detach_rc, 0);
	ck_assert_int_eq(ts_after_detach_rc, 0);
}
END_TEST

/* max_actors = 1: only the root fits */
static int ts_only_root_rc;

static void ts_root_alone(void *arg)
{
	(void)arg;
	ts_only_root_rc = smarm_actor_spawn(NULL, ts_nop, NULL, NULL);
}

START_TEST(test_try_spawn_max1_root_only_refuses)
{
	ts_only_root_rc = 1;
	ck_assert_int_eq(harness_run_ex(1, 1, ts_root_alone, NULL, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ts_only_root_rc, SMARM_EATCAPACITY);
}
END_TEST

/* ----------------------------------------------------------------- race */

#define TS_RACE_CAP 32
#define TS_SPAWNERS 4

static smarm_chan_t *ts_go[TS_SPAWNERS], *ts_results, *ts_finish[TS_SPAWNERS];
static smarm_pid_t ts_kids[TS_RACE_CAP];
static atomic_int ts_kid_n;
static int ts_race_total, ts_race_bad_rc;

static void ts_sleep_forever(void *arg)
{
	(void)arg;
	smarm_actor_sleep(MS(60000)); /* ended by a stop */
}

static void ts_spawner(void *arg)
{
	intptr_t me = (intptr_t)arg;
	int v, won = 0, rc;
	smarm_chan_recv(ts_go[me], &v);
	for (;;) {
		smarm_pid_t p;
		rc = smarm_actor_spawn(&p, ts_sleep_forever, NULL, NULL);
		if (rc != 0)
			break;
		ts_kids[atomic_fetch_add(&ts_kid_n, 1)] = p;
		won++;
		if (won % 2 == 0)
			smarm_actor_yield(); /* interleave with the others */
	}
	v = rc == SMARM_EATCAPACITY ? won : -1000;
	smarm_chan_send(ts_results, &v);
	smarm_chan_recv(ts_finish[me], &v); /* hold our slot until told */
}

static void ts_root_race(void *arg)
{
	smarm_pid_t sp[TS_SPAWNERS];
	int v = 1;
	(void)arg;
	smarm_chan_alloc(&ts_results, sizeof(int), NULL);
	for (intptr_t i = 0; i < TS_SPAWNERS; i++) {
		smarm_chan_alloc(&ts_go[i], sizeof(int), NULL);
		smarm_chan_alloc(&ts_finish[i], sizeof(int), NULL);
		smarm_actor_spawn(&sp[i], ts_spawner, (void *)i, NULL);
	}
	for (int i = 0; i < TS_SPAWNERS; i++)
		smarm_chan_send(ts_go[i], &v);
	for (int i = 0; i < TS_SPAWNERS; i++) {
		int won = 0;
		smarm_chan_recv(ts_results, &won);
		if (won < 0)
			ts_race_bad_rc++;
		else
			ts_race_total += won;
	}
	for (int i = 0; i < atomic_load(&ts_kid_n); i++) {
		smarm_actor_stop(ts_kids[i]);
		smarm_actor_join(ts_kids[i], NULL, NULL);
	}
	for (int i = 0; i < TS_SPAWNERS; i++) {
		smarm_chan_send(ts_finish[i], &v);
		smarm_actor_join(sp[i], NULL, NULL);
		harness_chan_drop(ts_go[i]);
		harness_chan_drop(ts_finish[i]);
	}
	harness_chan_drop(ts_results);
}

START_TEST(test_try_spawn_race_four_spawners_win_exactly_free_slots)
{
	ts_race_total = 0;
	ts_race_bad_rc = 0;
	atomic_store(&ts_kid_n, 0);
	ck_assert_int_eq(
		harness_run_ex(4, TS_RACE_CAP, ts_root_race, NULL, NULL),
		SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ts_race_bad_rc, 0);
	/* 32 - 1 root - 4 spawners; nothing else is alive */
	ck_assert_int_eq(ts_race_total, TS_RACE_CAP - 1 - TS_SPAWNERS);
	ck_assert_int_eq(atomic_load(&ts_kid_n), TS_RACE_CAP - 1 - TS_SPAWNERS);
}
END_TEST

/* ------------------------------------------------------ on-demand growth */

#define TS_GROW 1000

static int64_t ts_slots_start, ts_slots_end, ts_live_end;
static int ts_grow_fail;

/* Wait for the gate's close: alive until the root has counted. */
static void ts_gated(void *arg)
{
	int x;
	(void)smarm_chan_recv(arg, &x);
}

static void ts_root_grow(void *arg)
{
	static smarm_pid_t p[TS_GROW];
	smarm_node_t *n = smarm_node_current();
	smarm_chan_t *gate = NULL;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&gate, sizeof(int), NULL), 0);
	smarm_node_get_int(n, SMARM_STAT_SLOTS, &ts_slots_start);
	/* All TS_GROW alive at once, even if a preemption of the root
	 * (a loaded machine, ASan) lets some run. */
	for (int i = 0; i < TS_GROW; i++)
		if (smarm_actor_spawn(&p[i], ts_gated, gate, NULL) != 0)
			ts_grow_fail++;
	smarm_node_get_int(n, SMARM_STAT_SLOTS, &ts_slots_end);
	smarm_node_get_int(n, SMARM_STAT_LIVE_ACTORS, &ts_live_end);
	smarm_chan_sender_free(gate); /* closed: each recv returns */
	for (int i = 0; i < TS_GROW; i++)
		if (smarm_actor_join(p[i], NULL, NULL) != 0)
			ts_grow_fail++;
	smarm_chan_receiver_free(gate);
}

START_TEST(test_try_spawn_slot_table_grows_on_demand)
{
	ts_grow_fail = 0;
	ck_assert_int_eq(harness_run(1, ts_root_grow, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ts_grow_fail, 0);
	ck_assert_int_ge(ts_slots_start, 1);
	ck_assert_int_lt(ts_slots_start, TS_GROW); /* starts small */
	ck_assert_int_eq(ts_live_end, TS_GROW + 1);
	ck_assert_int_ge(ts_slots_end, ts_live_end);
	ck_assert_int_le(ts_slots_end, 1048576);
}
END_TEST

/* a limit that is not a segment boundary is exact, also when growing */
static int ts_odd_ok, ts_odd_rc;

static void ts_root_odd_cap(void *arg)
{
	static smarm_pid_t p[400];
	int rc = 0;
	(void)arg;
	ts_odd_ok = 0;
	while (ts_odd_ok < 400 &&
	       (rc = smarm_actor_spawn(&p[ts_odd_ok], ts_nop, NULL, NULL)) == 0)
		ts_odd_ok++;
	ts_odd_rc = rc;
	for (int i = 0; i < ts_odd_ok; i++)
		smarm_actor_join(p[i], NULL, NULL);
}

START_TEST(test_try_spawn_limit_across_segments_is_exact)
{
	ck_assert_int_eq(harness_run_ex(1, 300, ts_root_odd_cap, NULL, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(ts_odd_ok, 299);
	ck_assert_int_eq(ts_odd_rc, SMARM_EATCAPACITY);
}
END_TEST

Suite *smarm_test_try_spawn_suite(void)
{
	Suite *s = suite_create("try_spawn");
	TCase *tc = tcase_create("limits");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(
		tc, test_try_spawn_max8_allows_seven_then_eatcapacity, 0, 2);
	tcase_add_test(tc, test_try_spawn_unjoined_holds_slot_until_detached);
	tcase_add_test(tc, test_try_spawn_max1_root_only_refuses);
	tcase_add_test(tc, test_try_spawn_limit_across_segments_is_exact);
	suite_add_tcase(s, tc);

	tc = tcase_create("race");
	tcase_set_timeout(tc, 30);
	tcase_add_test(
		tc, test_try_spawn_race_four_spawners_win_exactly_free_slots);
	tcase_add_test(tc, test_try_spawn_slot_table_grows_on_demand);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(try_spawn)
