/* SPDX-License-Identifier: MIT */
/*
 * test_idle_spin.c - bounded spinning of idle workers before they park
 * (SMARM_OPT_IDLE_SPIN_NS, smarm RFC 004): message hand-offs across four
 * workers (two cores: oversubscribed) lose nothing with spinning on or
 * off and the wake slot on or off; an idle node's workers stop spinning
 * and park, so a run whose root sleeps 300 ms uses far less CPU time than
 * wall time, even with the longest spin allowed; the option's range.
 */
#include "harness.h"

#include <time.h>

static smarm_node_t *is_open(int workers, int64_t spin_ns, int slot)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, workers),
			 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_IDLE_SPIN_NS, spin_ns), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WAKE_SLOT, slot),
			 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	return node;
}

static void is_run(smarm_node_t *node, smarm_actor_cb root, void *arg)
{
	int how = -1;
	ck_assert_int_eq(smarm_node_run(node, root, arg, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
}

/* ----------------------------------------------------- ping-pong pairs */

#define IS_PAIRS 4
#define IS_ROUNDS 5000

struct is_pair {
	smarm_chan_t *ping;
	smarm_chan_t *pong;
	uint64_t echoed; /* ponger only */
	uint64_t good;	 /* pinger only: correct echoes */
};

static void is_ponger(void *arg)
{
	struct is_pair *p = arg;
	uint64_t v;
	while (smarm_chan_recv(p->ping, &v) == 0) {
		if (smarm_chan_send(p->pong, &v) != 0)
			return;
		p->echoed++;
	}
}

static void is_pinger(void *arg)
{
	struct is_pair *p = arg;
	for (uint64_t i = 0; i < IS_ROUNDS; i++) {
		uint64_t v = UINT64_MAX;
		if (smarm_chan_send(p->ping, &i) != 0 ||
		    smarm_chan_recv(p->pong, &v) != 0)
			return;
		p->good += v == i;
	}
}

struct is_pp {
	struct is_pair pair[IS_PAIRS];
	int errors; /* root only */
};

static void is_pp_root(void *arg)
{
	struct is_pp *t = arg;
	smarm_pid_t pong[IS_PAIRS], ping[IS_PAIRS];
	for (int i = 0; i < IS_PAIRS; i++) {
		struct is_pair *p = &t->pair[i];
		if (smarm_chan_alloc(&p->ping, sizeof(uint64_t), NULL) != 0 ||
		    smarm_chan_alloc(&p->pong, sizeof(uint64_t), NULL) != 0 ||
		    smarm_actor_spawn(&pong[i], is_ponger, p, NULL) != 0 ||
		    smarm_actor_spawn(&ping[i], is_pinger, p, NULL) != 0) {
			t->errors++;
			return;
		}
	}
	for (int i = 0; i < IS_PAIRS; i++) {
		struct is_pair *p = &t->pair[i];
		int how = -1;
		if (smarm_actor_join(ping[i], &how, NULL) != 0 ||
		    how != SMARM_EXIT_NORMAL)
			t->errors++;
		smarm_chan_sender_free(p->ping); /* the ponger ends */
		if (smarm_actor_join(pong[i], &how, NULL) != 0 ||
		    how != SMARM_EXIT_NORMAL)
			t->errors++;
		smarm_chan_receiver_free(p->ping);
		harness_chan_drop(p->pong);
	}
}

/*
 * Loop over (spin, slot): _i bit 0 spinning on, bit 1 wake slot on. With
 * the slot off every hand-off goes through the shared queue, which is
 * where spinners and the no-lost-wake handshake matter.
 */
START_TEST(test_idle_spin_ping_pong_pairs_across_workers_complete)
{
	struct is_pp t = { 0 };
	smarm_node_t *node = is_open(4, _i & 1 ? 50000 : 0, _i >> 1);
	is_run(node, is_pp_root, &t);
	ck_assert_int_eq(t.errors, 0);
	for (int i = 0; i < IS_PAIRS; i++) {
		ck_assert_uint_eq(t.pair[i].good, IS_ROUNDS);
		ck_assert_uint_eq(t.pair[i].echoed, IS_ROUNDS);
	}
	if (!(_i & 1))
		ck_assert_int_eq(harness_stat(node, SMARM_STAT_IDLE_SPIN_HITS),
				 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ----------------------------------------------------------- idle node */

static uint64_t is_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void is_sleep_root(void *arg)
{
	int *rc = arg;
	*rc = smarm_actor_sleep(MS(300));
}

/*
 * Four workers, the root asleep for 300 ms and nothing else to do: the
 * workers must park rather than spin, so the process uses well under
 * half of the wall time in CPU. Loop: _i 0 the default spin, 1 the
 * longest spin the option allows (10 ms).
 */
START_TEST(test_idle_spin_idle_node_parks_and_burns_little_cpu)
{
	int rc = -1;
	smarm_node_t *node = is_open(4, _i ? 10000000 : 20000, 1);
	uint64_t c0 = is_cpu_ns();
	uint64_t t0 = smarm_now_ns();
	is_run(node, is_sleep_root, &rc);
	uint64_t wall = harness_since(t0);
	uint64_t cpu = is_cpu_ns() - c0;
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_ge(wall, MS(300));
	ck_assert_uint_lt(cpu, wall / 2);
	ck_assert_int_ge(harness_stat(node, SMARM_STAT_IDLE_PARKS), 1);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* -------------------------------------------------------------- option */

START_TEST(test_idle_spin_option_range_einval)
{
	smarm_config_t *cfg = NULL;
	int64_t v = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_IDLE_SPIN_NS, &v),
			 0);
	ck_assert_int_eq(v, 20000); /* default 20 us */
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_IDLE_SPIN_NS, -1),
			 SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_IDLE_SPIN_NS, 10000001),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_IDLE_SPIN_NS, 0),
			 0);
	ck_assert_int_eq(
		smarm_config_set_int(cfg, SMARM_OPT_IDLE_SPIN_NS, 10000000), 0);
	ck_assert_int_eq(smarm_config_get_int(cfg, SMARM_OPT_IDLE_SPIN_NS, &v),
			 0);
	ck_assert_int_eq(v, 10000000);
	smarm_config_free(cfg);
}
END_TEST

Suite *smarm_test_idle_spin_suite(void)
{
	Suite *s = suite_create("idle_spin");
	TCase *tc = tcase_create("spin");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(
		tc, test_idle_spin_ping_pong_pairs_across_workers_complete, 0,
		4);
	tcase_add_loop_test(
		tc, test_idle_spin_idle_node_parks_and_burns_little_cpu, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_idle_spin_option_range_einval);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(idle_spin)
