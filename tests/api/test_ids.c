/* SPDX-License-Identifier: MIT */
/*
 * test_ids.c - option and statistic ids: a frozen record of every id's
 * value (checked at compile time; status codes and the protocol value
 * types too); the library honours every entry of
 * SMARM_OPT_MAP (range, default, scope) and answers every entry of
 * SMARM_STAT_MAP; smarm_opt_name() and smarm_stat_name(); and
 * SMARM_STAT_ENDED_UNJOINED, the ended actors still owed a join or
 * detach.
 */
#include "harness.h"

#include <smarm/smarm_plugin.h>

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
static_assert(SMARM_OPT_LINK == 13, "SMARM_OPT_LINK");
static_assert(SMARM_OPT_PREEMPT_MOVE == 14, "SMARM_OPT_PREEMPT_MOVE");
static_assert(SMARM_OPT_LOG_LEVEL == 15, "SMARM_OPT_LOG_LEVEL");
static_assert(SMARM_OPT_CONTAIN_FAULTS == 16, "SMARM_OPT_CONTAIN_FAULTS");
static_assert(SMARM_OPT_ACTOR_STATS == 17, "SMARM_OPT_ACTOR_STATS");
static_assert(SMARM_OPT_TRACE_RING == 18, "SMARM_OPT_TRACE_RING");
static_assert(SMARM_OPT_STACK_RELEASE == 19, "SMARM_OPT_STACK_RELEASE");
static_assert(SMARM_OPT_STACK_RELEASE_NS == 20, "SMARM_OPT_STACK_RELEASE_NS");
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
static_assert(SMARM_STAT_ENDED_UNJOINED == 23, "SMARM_STAT_ENDED_UNJOINED");
static_assert(SMARM_STAT_PREEMPT_RETURNS == 24, "SMARM_STAT_PREEMPT_RETURNS");
static_assert(SMARM_STAT_MONITORS == 25, "SMARM_STAT_MONITORS");
static_assert(SMARM_STAT_LINKS == 26, "SMARM_STAT_LINKS");
static_assert(SMARM_STAT_REG_NAMES == 27, "SMARM_STAT_REG_NAMES");
static_assert(SMARM_STAT_REG_MAILBOXES == 28, "SMARM_STAT_REG_MAILBOXES");
static_assert(SMARM_STAT_REG_MEMBERSHIPS == 29, "SMARM_STAT_REG_MEMBERSHIPS");
static_assert(SMARM_EXIT_NORMAL == 0, "SMARM_EXIT_NORMAL");
static_assert(SMARM_EXIT_CRASHED == 1, "SMARM_EXIT_CRASHED");
static_assert(SMARM_EXIT_STOPPED == 2, "SMARM_EXIT_STOPPED");
static_assert(SMARM_EXIT_SHUTDOWN == 3, "SMARM_EXIT_SHUTDOWN");
static_assert(SMARM_EXIT_NOPROC == 4, "SMARM_EXIT_NOPROC");
static_assert(SMARM_EXIT_FAULT == 5, "SMARM_EXIT_FAULT");
static_assert(SMARM_SIGNAL_DOWN == 1, "SMARM_SIGNAL_DOWN");
static_assert(SMARM_SIGNAL_EXIT == 2, "SMARM_SIGNAL_EXIT");
static_assert(SMARM_DEMONITOR_FLUSH == 1, "SMARM_DEMONITOR_FLUSH");
static_assert(SMARM_STAT_GLOBAL_LOCKS == 30, "SMARM_STAT_GLOBAL_LOCKS");
static_assert(SMARM_STAT_SERVER_REQUESTS == 31, "SMARM_STAT_SERVER_REQUESTS");
/* The plugin and behaviour block of status codes (SMARM_0.5). */
static_assert(SMARM_EPLUGINOPEN == -300, "SMARM_EPLUGINOPEN");
static_assert(SMARM_ENOENTRY == -301, "SMARM_ENOENTRY");
static_assert(SMARM_EPLUGINABI == -302, "SMARM_EPLUGINABI");
static_assert(SMARM_ESTRUCTSIZE == -303, "SMARM_ESTRUCTSIZE");
static_assert(SMARM_EPROTOCOL == -304, "SMARM_EPROTOCOL");
static_assert(SMARM_ENOHANDLER == -305, "SMARM_ENOHANDLER");
static_assert(SMARM_EDUPNAME == -306, "SMARM_EDUPNAME");
static_assert(SMARM_ENOTEXHAUSTIVE == -307, "SMARM_ENOTEXHAUSTIVE");
static_assert(SMARM_EUNREACHABLE == -308, "SMARM_EUNREACHABLE");
static_assert(SMARM_ENOBEHAVIOUR == -309, "SMARM_ENOBEHAVIOUR");
static_assert(SMARM_ENOOP == -310, "SMARM_ENOOP");
static_assert(SMARM_EARGS == -311, "SMARM_EARGS");
static_assert(SMARM_ETOOBIG == -312, "SMARM_ETOOBIG");
static_assert(SMARM_EDOWN == -313, "SMARM_EDOWN");
static_assert(SMARM_ECALLSELF == -314, "SMARM_ECALLSELF");
static_assert(SMARM_EPLUGINLINK == -315, "SMARM_EPLUGINLINK");
static_assert(SMARM_EPLUGINPERM == -316, "SMARM_EPLUGINPERM");
static_assert(SMARM_EBADRETURN == -317, "SMARM_EBADRETURN");
static_assert(SMARM_EOPKIND == -318, "SMARM_EOPKIND");
static_assert(SMARM_EREPLY == -319, "SMARM_EREPLY");
static_assert(SMARM_EFULL == -320, "SMARM_EFULL");
static_assert(SMARM_EBADSPEC == -321, "SMARM_EBADSPEC");
static_assert(SMARM_ESIMPLE == -322, "SMARM_ESIMPLE");
static_assert(SMARM_ERESTARTING == -323, "SMARM_ERESTARTING");
static_assert(SMARM_ENODIST == -400, "SMARM_ENODIST");
static_assert(SMARM_ENOEPMD == -401, "SMARM_ENOEPMD");
static_assert(SMARM_ENOCONN == -402, "SMARM_ENOCONN");
static_assert(SMARM_EAUTH == -403, "SMARM_EAUTH");
static_assert(SMARM_ECOOKIE == -404, "SMARM_ECOOKIE");
static_assert(SMARM_STAT_SUP_RESTARTS == 32, "SMARM_STAT_SUP_RESTARTS");
static_assert(SMARM_STAT_PREEMPT_MOVED == 33, "SMARM_STAT_PREEMPT_MOVED");
static_assert(SMARM_STAT_EXPEDITED == 34, "SMARM_STAT_EXPEDITED");
static_assert(SMARM_STAT_LOG_DROPPED == 35, "SMARM_STAT_LOG_DROPPED");
static_assert(SMARM_STAT_FAULTS_CONTAINED == 36, "SMARM_STAT_FAULTS_CONTAINED");
static_assert(SMARM_STAT_HIBERNATIONS == 37, "SMARM_STAT_HIBERNATIONS");
static_assert(SMARM_STAT_TRACE_DROPPED == 38, "SMARM_STAT_TRACE_DROPPED");
static_assert(SMARM_STAT_CAUSAL_EXPERIMENTS == 39,
	      "SMARM_STAT_CAUSAL_EXPERIMENTS");
static_assert(SMARM_STAT_CAUSAL_DELAY_NS == 40, "SMARM_STAT_CAUSAL_DELAY_NS");
static_assert(SMARM_STAT_DIST_INFO_DROPPED == 41,
	      "SMARM_STAT_DIST_INFO_DROPPED");
static_assert(SMARM_STAT_STACK_RELEASES == 42, "SMARM_STAT_STACK_RELEASES");
static_assert(SMARM_STAT_STACKS_RELEASED == 43, "SMARM_STAT_STACKS_RELEASED");
/* Protocol value types (smarm_value_t.type; SMARM_0.5). */
static_assert(SMARM_T_VOID == 0, "SMARM_T_VOID");
static_assert(SMARM_T_I8 == 1, "SMARM_T_I8");
static_assert(SMARM_T_I16 == 2, "SMARM_T_I16");
static_assert(SMARM_T_I32 == 3, "SMARM_T_I32");
static_assert(SMARM_T_I64 == 4, "SMARM_T_I64");
static_assert(SMARM_T_U8 == 5, "SMARM_T_U8");
static_assert(SMARM_T_U16 == 6, "SMARM_T_U16");
static_assert(SMARM_T_U32 == 7, "SMARM_T_U32");
static_assert(SMARM_T_U64 == 8, "SMARM_T_U64");
static_assert(SMARM_T_F32 == 9, "SMARM_T_F32");
static_assert(SMARM_T_F64 == 10, "SMARM_T_F64");
static_assert(SMARM_T_BOOL == 11, "SMARM_T_BOOL");
static_assert(SMARM_T_STR == 12, "SMARM_T_STR");
static_assert(SMARM_T_BYTES == 13, "SMARM_T_BYTES");
static_assert(SMARM_T_PID == 14, "SMARM_T_PID");
static_assert(SMARM_T_TUPLE == 15, "SMARM_T_TUPLE");
static_assert(SMARM_TUPLE_MAX == 16, "SMARM_TUPLE_MAX");

/* Introspection records: the mailbox bands (format 3; SMARM_0.5). */
static_assert(SMARM_BAND_SIGNAL == 0, "SMARM_BAND_SIGNAL");
static_assert(SMARM_BAND_TIMER == 1, "SMARM_BAND_TIMER");
static_assert(SMARM_BAND_INBOX == 2, "SMARM_BAND_INBOX");
static_assert(SMARM_OBS_BANDS == 4, "SMARM_OBS_BANDS");
static_assert(SMARM_ACTOR_INFO_SIZE_V3 == 464, "SMARM_ACTOR_INFO_SIZE_V3");

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
	ck_assert_str_eq(smarm_stat_name(SMARM_STAT_ENDED_UNJOINED),
			 "SMARM_STAT_ENDED_UNJOINED");
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

/* Every status code is named by its own name and has a message. */
START_TEST(test_ids_every_error_named)
{
#define XX(name, value, text)                                                  \
	ck_assert_str_eq(smarm_err_name(value), "SMARM_" #name);               \
	ck_assert_str_eq(smarm_strerror(value), text);
	SMARM_ERROR_MAP(XX)
#undef XX
	ck_assert_str_eq(smarm_err_name(-324), "SMARM_E?");
	ck_assert_str_eq(smarm_err_name(-299), "SMARM_E?");
}
END_TEST

START_TEST(test_ids_unknown_ids_named_never_null)
{
	static const int bad[] = { 0, -1, 21, 31, 32, 64, 9999, INT32_MIN };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_str_eq(smarm_opt_name(bad[i]), "SMARM_OPT_?");
	static const int bad_stat[] = { 0, -1, 44, 63, 64, 9999, INT32_MIN };
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
	ck_assert_int_eq(n, SMARM_STAT_STACKS_RELEASED);
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
	ck_assert_int_eq(count, 20);
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
	ck_assert_int_eq(spawn, 6);
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
	ck_assert_int_eq(smarm_node_get_int(node, 44, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(node, 64, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(node, -5, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(node, SMARM_STAT_SLOTS, NULL),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_get_int(NULL, SMARM_STAT_SLOTS, &v),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ---------------------------------------------------- ended unjoined */

#define EU_N 99

static smarm_pid_t eu_pids[EU_N];
static int64_t eu_ended, eu_live, eu_held, eu_after_join, eu_after_detach;
static int64_t eu_detached_early, eu_join_rc, eu_detach_rc;

static void eu_nop(void *arg)
{
	(void)arg;
}

/* Spawn EU_N joinable actors and wait until all of them have ended. */
static bool eu_spawn_and_wait(void)
{
	for (int i = 0; i < EU_N; i++)
		if (smarm_actor_spawn(&eu_pids[i], eu_nop, NULL, NULL) != 0)
			return false;
	return harness_await_stat(smarm_node_current(), SMARM_STAT_LIVE_ACTORS,
				  1);
}

static void eu_root(void *arg)
{
	(void)arg;
	/* joined */
	HARNESS_CHECK(eu_spawn_and_wait());
	eu_ended = harness_actor_stat(SMARM_STAT_ENDED_UNJOINED);
	eu_live = harness_actor_stat(SMARM_STAT_LIVE_ACTORS);
	eu_held = harness_actor_stat(SMARM_STAT_SLOTS) -
		  harness_actor_stat(SMARM_STAT_FREE_SLOTS);
	for (int i = 0; i < EU_N; i++)
		eu_join_rc |= smarm_actor_join(eu_pids[i], NULL, NULL);
	eu_after_join = harness_actor_stat(SMARM_STAT_ENDED_UNJOINED);
	/* detached after they ended */
	HARNESS_CHECK(eu_spawn_and_wait());
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_ENDED_UNJOINED), EU_N);
	for (int i = 0; i < EU_N; i++)
		eu_detach_rc |= smarm_actor_detach(eu_pids[i]);
	eu_after_detach = harness_actor_stat(SMARM_STAT_ENDED_UNJOINED);
	/* detached before they ended: never counted */
	for (int i = 0; i < EU_N; i++) {
		HARNESS_EQ(smarm_actor_spawn(&eu_pids[i], eu_nop, NULL, NULL),
			   0);
		eu_detach_rc |= smarm_actor_detach(eu_pids[i]);
	}
	HARNESS_CHECK(harness_await_stat(smarm_node_current(),
					 SMARM_STAT_LIVE_ACTORS, 1));
	eu_detached_early = harness_actor_stat(SMARM_STAT_ENDED_UNJOINED);
	/* left unjoined: the run's end releases them */
	HARNESS_CHECK(eu_spawn_and_wait());
	HARNESS_EQ(harness_actor_stat(SMARM_STAT_ENDED_UNJOINED), EU_N);
}

START_TEST(test_ids_ended_unjoined_counts_until_join_or_detach)
{
	int workers = _i == 0 ? 1 : 4;
	smarm_node_t *node = harness_open(workers);
	harness_checks_reset();
	eu_join_rc = eu_detach_rc = 0;
	ck_assert_int_eq(smarm_node_run(node, eu_root, NULL, NULL, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(eu_ended, EU_N);
	ck_assert_int_eq(eu_live, 1);
	ck_assert_int_eq(eu_held, EU_N + 1);
	ck_assert_int_eq(eu_join_rc, 0);
	ck_assert_int_eq(eu_after_join, 0);
	ck_assert_int_eq(eu_detach_rc, 0);
	ck_assert_int_eq(eu_after_detach, 0);
	ck_assert_int_eq(eu_detached_early, 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_ENDED_UNJOINED), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_FREE_SLOTS),
			 harness_stat(node, SMARM_STAT_SLOTS));
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* The count is what SMARM_EATCAPACITY is about: at the limit with ended
 * actors only, joining one makes room for a spawn. */
static int eu_cap_refused, eu_cap_after_join;
static int64_t eu_cap_ended;

static void eu_cap_root(void *arg)
{
	smarm_pid_t extra;
	(void)arg;
	for (int i = 0; i < 7; i++)
		HARNESS_EQ(smarm_actor_spawn(&eu_pids[i], eu_nop, NULL, NULL),
			   0);
	HARNESS_CHECK(harness_await_stat(smarm_node_current(),
					 SMARM_STAT_LIVE_ACTORS, 1));
	eu_cap_ended = harness_actor_stat(SMARM_STAT_ENDED_UNJOINED);
	eu_cap_refused = smarm_actor_spawn(&extra, eu_nop, NULL, NULL);
	HARNESS_EQ(smarm_actor_join(eu_pids[0], NULL, NULL), 0);
	eu_cap_after_join = smarm_actor_spawn(&extra, eu_nop, NULL, NULL);
	if (eu_cap_after_join == 0)
		HARNESS_EQ(smarm_actor_join(extra, NULL, NULL), 0);
}

START_TEST(test_ids_ended_unjoined_hold_slots_against_max_actors)
{
	harness_checks_reset();
	harness_run_ex(4, 8, eu_cap_root, NULL, NULL);
	harness_checks_assert();
	ck_assert_int_eq(eu_cap_ended, 7);
	ck_assert_int_eq(eu_cap_refused, SMARM_EATCAPACITY);
	ck_assert_int_eq(eu_cap_after_join, 0);
}
END_TEST

Suite *smarm_test_ids_suite(void)
{
	Suite *s = suite_create("ids");
	TCase *tc = tcase_create("names");
	tcase_add_test(tc, test_ids_names_match_ids);
	tcase_add_test(tc, test_ids_every_error_named);
	tcase_add_test(tc, test_ids_unknown_ids_named_never_null);
	tcase_add_test(tc, test_ids_stat_walk_finds_every_stat);
	suite_add_tcase(s, tc);

	tc = tcase_create("map");
	tcase_add_test(tc, test_ids_every_option_range_and_default_honoured);
	tcase_add_test(tc, test_ids_spawn_options_are_the_spawn_scope);
	tcase_add_test(tc, test_ids_every_stat_answers);
	suite_add_tcase(s, tc);

	tc = tcase_create("ended_unjoined");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(
		tc, test_ids_ended_unjoined_counts_until_join_or_detach, 0, 2);
	tcase_add_test(tc,
		       test_ids_ended_unjoined_hold_slots_against_max_actors);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(ids)
