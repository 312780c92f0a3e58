/* SPDX-License-Identifier: MIT */
/*
 * test_ids.c - option and statistic ids: a frozen record of every id's
 * value (checked at compile time); the library honours every entry of
 * SMARM_OPT_MAP (range, default, scope) and answers every entry of
 * SMARM_STAT_MAP; smarm_opt_name() and smarm_stat_name().
 */
#include "harness.h"

#include <assert.h>
#include <string.h>
#include <unistd.h>

/*
 * The ids are ABI, and no public function takes the enum types, so the
 * abidiff baseline does not see them: this frozen record does. Append
 * new ids; never change a line.
 */
static_assert(SMARM_OPT_WORKERS == 1, "SMARM_OPT_WORKERS");
static_assert(SMARM_OPT_MAX_ACTORS == 2, "SMARM_OPT_MAX_ACTORS");
static_assert(SMARM_OPT_STACK_RESERVE == 3, "SMARM_OPT_STACK_RESERVE");
static_assert(SMARM_OPT_STACK_GUARD == 4, "SMARM_OPT_STACK_GUARD");
static_assert(SMARM_OPT_STACK_POOL_CAP == 5, "SMARM_OPT_STACK_POOL_CAP");
static_assert(SMARM_OPT_TIMESLICE_NS == 6, "SMARM_OPT_TIMESLICE_NS");
static_assert(SMARM_OPT_STACK_MODE == 7, "SMARM_OPT_STACK_MODE");
static_assert(SMARM_OPT_WAKE_SLOT == 8, "SMARM_OPT_WAKE_SLOT");
static_assert(SMARM_OPT_IDLE_SPIN_NS == 9, "SMARM_OPT_IDLE_SPIN_NS");
static_assert(SMARM_OPT_PREEMPT_ASYNC == 10, "SMARM_OPT_PREEMPT_ASYNC");
static_assert(SMARM_OPT_IO_POOL_THREADS == 11, "SMARM_OPT_IO_POOL_THREADS");
static_assert(SMARM_OPT_ASYNC_SLICE_NS == 12, "SMARM_OPT_ASYNC_SLICE_NS");
static_assert(SMARM_STAT_LIVE_ACTORS == 1, "SMARM_STAT_LIVE_ACTORS");
static_assert(SMARM_STAT_SLOTS == 2, "SMARM_STAT_SLOTS");
static_assert(SMARM_STAT_FREE_SLOTS == 3, "SMARM_STAT_FREE_SLOTS");
static_assert(SMARM_STAT_RUN_QUEUE == 4, "SMARM_STAT_RUN_QUEUE");
static_assert(SMARM_STAT_STACK_POOL == 5, "SMARM_STAT_STACK_POOL");
static_assert(SMARM_STAT_WORKERS == 6, "SMARM_STAT_WORKERS");
static_assert(SMARM_STAT_SPAWNED == 7, "SMARM_STAT_SPAWNED");
static_assert(SMARM_STAT_TIMERS == 8, "SMARM_STAT_TIMERS");
static_assert(SMARM_STAT_WAKE_SLOT_HITS == 9, "SMARM_STAT_WAKE_SLOT_HITS");
static_assert(SMARM_STAT_WAKE_SLOT_DISPLACEMENTS == 10,
	      "SMARM_STAT_WAKE_SLOT_DISPLACEMENTS");
static_assert(SMARM_STAT_IDLE_SPIN_HITS == 11, "SMARM_STAT_IDLE_SPIN_HITS");
static_assert(SMARM_STAT_IDLE_PARKS == 12, "SMARM_STAT_IDLE_PARKS");
static_assert(SMARM_STAT_PREEMPT_SIGNALS == 13, "SMARM_STAT_PREEMPT_SIGNALS");
static_assert(SMARM_STAT_PREEMPT_ASYNC == 14, "SMARM_STAT_PREEMPT_ASYNC");
static_assert(SMARM_STAT_PREEMPT_DEFERRED == 15, "SMARM_STAT_PREEMPT_DEFERRED");
static_assert(SMARM_STAT_STACKS_GUARDED == 16, "SMARM_STAT_STACKS_GUARDED");
static_assert(SMARM_STAT_STACKS_DENSE == 17, "SMARM_STAT_STACKS_DENSE");
static_assert(SMARM_STAT_STACK_SHRINKS == 18, "SMARM_STAT_STACK_SHRINKS");
static_assert(SMARM_STAT_STACK_GUARD_BUDGET == 19,
	      "SMARM_STAT_STACK_GUARD_BUDGET");
static_assert(SMARM_STAT_IO_FD_WAITERS == 20, "SMARM_STAT_IO_FD_WAITERS");
static_assert(SMARM_STAT_IO_BLOCKING == 21, "SMARM_STAT_IO_BLOCKING");
static_assert(SMARM_STAT_IO_THREADS == 22, "SMARM_STAT_IO_THREADS");

/* ------------------------------------------------------------- names */

START_TEST(test_ids_names_match_ids)
{
	ck_assert_str_eq(smarm_opt_name(SMARM_OPT_WORKERS),
			 "SMARM_OPT_WORKERS");
	ck_assert_str_eq(smarm_opt_name(SMARM_OPT_ASYNC_SLICE_NS),
			 "SMARM_OPT_ASYNC_SLICE_NS");
	ck_assert_str_eq(smarm_stat_name(SMARM_STAT_LIVE_ACTORS),
			 "SMARM_STAT_LIVE_ACTORS");
	ck_assert_str_eq(smarm_stat_name(SMARM_STAT_IO_THREADS),
			 "SMARM_STAT_IO_THREADS");
#define XX(name, value, lo, hi, def, scope)                                    \
	ck_assert_str_eq(smarm_opt_name(value), "SMARM_OPT_" #name);
	SMARM_OPT_MAP(XX)
#undef XX
#define XX(name, value, layer)                                                 \
	ck_assert_str_eq(smarm_stat_name(value), "SMARM_STAT_" #name);
	SMARM_STAT_MAP(XX)
#undef XX
}
END_TEST

START_TEST(test_ids_unknown_ids_named_never_null)
{
	static const int bad[] = { 0, -1, 13, 31, 32, 64, 9999, INT32_MIN };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_str_eq(smarm_opt_name(bad[i]), "SMARM_OPT_?");
	static const int bad_stat[] = { 0, -1, 24, 63, 64, 9999, INT32_MIN };
	for (size_t i = 0; i < sizeof bad_stat / sizeof bad_stat[0]; i++)
		ck_assert_str_eq(smarm_stat_name(bad_stat[i]), "SMARM_STAT_?");
}
END_TEST

/* Walking the stat ids until the first unknown one finds all of them. */
START_TEST(test_ids_stat_walk_finds_every_stat)
{
	int n = 0;
	int top = 0;
	while (strcmp(smarm_stat_name(n + 1), "SMARM_STAT_?") != 0)
		n++;
#define XX(name, value, layer) top = (value) > top ? (value) : top;
	SMARM_STAT_MAP(XX)
#undef XX
	ck_assert_int_eq(n, top);
	ck_assert_int_eq(n, SMARM_STAT_IO_THREADS);
}
END_TEST

/* --------------------------------------------------------------- map */

/* Every option: lo and hi accepted, lo-1 and hi+1 refused, the default
 * (where not derived) what a fresh config reports. */
START_TEST(test_ids_every_option_range_and_default_honoured)
{
	smarm_config_t *cfg = NULL;
	int64_t v = 0;
	int count = 0;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
#define XX(name, value, lo, hi, def, scope)                                    \
	do {                                                                   \
		int64_t lo_ = (lo), hi_ = (hi), def_ = (def);                  \
		ck_assert_int_eq(smarm_config_get_int(cfg, value, &v), 0);     \
		if (def_ != -1)                                                \
			ck_assert_int_eq(v, def_);                             \
		else                                                           \
			ck_assert(v >= lo_ && v <= hi_);                       \
		ck_assert_int_eq(smarm_config_set_int(cfg, value, lo_ - 1),    \
				 SMARM_EINVAL);                                \
		ck_assert_int_eq(smarm_config_set_int(cfg, value, hi_ + 1),    \
				 SMARM_EINVAL);                                \
		ck_assert_int_eq(smarm_config_set_int(cfg, value, hi_), 0);    \
		ck_assert_int_eq(smarm_config_get_int(cfg, value, &v), 0);     \
		ck_assert_int_eq(v, hi_);                                      \
		ck_assert_int_eq(smarm_config_set_int(cfg, value, lo_), 0);    \
		ck_assert_int_eq(smarm_config_get_int(cfg, value, &v), 0);     \
		ck_assert_int_eq(v, lo_);                                      \
		count++;                                                       \
	} while (0);
	SMARM_OPT_MAP(XX)
#undef XX
	ck_assert_int_eq(count, 12);
	smarm_config_free(cfg);
}
END_TEST

/* Exactly the SPAWN entries are spawn options, with the same range. */
START_TEST(test_ids_spawn_options_are_the_spawn_scope)
{
	smarm_spawn_opts_t *o = NULL;
	int spawn = 0;
	ck_assert_int_eq(smarm_spawn_opts_alloc(&o), 0);
#define SCOPE_IS_SPAWN_NODE 0
#define SCOPE_IS_SPAWN_SPAWN 1
#define XX(name, value, lo, hi, def, scope)                                    \
	do {                                                                   \
		int want_ = SCOPE_IS_SPAWN_##scope ? 0 : SMARM_EINVAL;         \
		spawn += SCOPE_IS_SPAWN_##scope;                               \
		ck_assert_int_eq(smarm_spawn_opts_set_int(o, value, lo),       \
				 want_);                                       \
		ck_assert_int_eq(smarm_spawn_opts_set_int(o, value, hi),       \
				 want_);                                       \
		ck_assert_int_eq(                                              \
			smarm_spawn_opts_set_int(o, value, (int64_t)(hi) + 1), \
			SMARM_EINVAL);                                         \
	} while (0);
	SMARM_OPT_MAP(XX)
#undef XX
	ck_assert_int_eq(spawn, 3);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, SMARM_OPT_WORKERS, 2),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_spawn_opts_set_int(o, 0, 4096), SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_spawn_opts_set_int(NULL, SMARM_OPT_STACK_GUARD, 4096),
		SMARM_EINVAL);
	smarm_spawn_opts_free(o);
}
END_TEST

/* Every stat of the map answers on a fresh node; nothing else does. */
START_TEST(test_ids_every_stat_answers)
{
	smarm_node_t *node = harness_open(2);
	int64_t v;
#define XX(name, value, layer)                                                 \
	v = -1;                                                                \
	ck_assert_int_eq(smarm_node_get_int(node, value, &v), 0);              \
	ck_assert_int_ge(v, 0);
	SMARM_STAT_MAP(XX)
#undef XX
	ck_assert_int_eq(smarm_node_get_int(node, 0, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(node, 24, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(node, 64, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(node, -5, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(node, SMARM_STAT_SLOTS, NULL),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(NULL, SMARM_STAT_SLOTS, &v),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

Suite *smarm_test_ids_suite(void)
{
	Suite *s = suite_create("ids");
	TCase *tc = tcase_create("names");
	tcase_add_test(tc, test_ids_names_match_ids);
	tcase_add_test(tc, test_ids_unknown_ids_named_never_null);
	tcase_add_test(tc, test_ids_stat_walk_finds_every_stat);
	suite_add_tcase(s, tc);

	tc = tcase_create("map");
	tcase_add_test(tc, test_ids_every_option_range_and_default_honoured);
	tcase_add_test(tc, test_ids_spawn_options_are_the_spawn_scope);
	tcase_add_test(tc, test_ids_every_stat_answers);
	suite_add_tcase(s, tc);

	return s;
}

SMARM_TEST_MAIN(ids)
