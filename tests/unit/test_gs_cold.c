/* SPDX-License-Identifier: MIT */
/*
 * test_gs_cold.c - a server's cold block (behaviour/gen_server.h struct
 * gs_cold) when it cannot be made: each first use that needs it (a
 * continue, an idle window, a finite hibernate_after, a monitor, a
 * token, a timer) is SMARM_ENOMEM and changes nothing; uses that need
 * no block (no idle window, hibernate at every wait, never) make none;
 * once it can be made, each use is kept in it. A context set as the
 * actor's own server stands in for a started one (as statem_run's
 * machine), with the test-only failure count smarm__gs_test_cold_fail.
 */
#include "harness.h"

#include "behaviour/gen_server.h"

#include <stdlib.h>

static void body_park(void *arg)
{
	(void)arg;
	harness_park();
}

/* Make the next cold block fail, run what, and check the count was
 * used (the allocation was reached). */
#define UNDER_FAULT(what)                                                      \
	do {                                                                   \
		atomic_store(&smarm__gs_test_cold_fail, 1);                    \
		what;                                                          \
		HARNESS_EQ(atomic_load(&smarm__gs_test_cold_fail), 0);         \
	} while (0)

static void cold_root(void *arg)
{
	static const size_t none; /* a machine's armed count, say */
	struct smarm_gs_ctx sv = { .sv_armed = &none };
	struct smarm_reply *tok = NULL;
	struct bhv_msg blk = { 0 };
	uint64_t ref = 0, id = 0;
	smarm_pid_t p;
	(void)arg;

	HARNESS_EQ(smarm__bhv_self_set(&sv, BHV_SELF_SERVER), 0);
	HARNESS_EQ(smarm_actor_spawn(&p, body_park, NULL, NULL), 0);
	UNDER_FAULT(HARNESS_EQ(smarm_gs_continue(&sv, 7), SMARM_ENOMEM));
	HARNESS_CHECK(!sv.sv_cont);
	UNDER_FAULT(HARNESS_EQ(smarm_gs_set_idle(&sv, MS(5)), SMARM_ENOMEM));
	UNDER_FAULT(HARNESS_EQ(smarm_gs_set_hibernate_after(&sv, MS(5)),
			       SMARM_ENOMEM));
	HARNESS_CHECK(!sv.sv_hib_set);
	UNDER_FAULT(HARNESS_EQ(smarm_gs_monitor(&sv, p, &ref), SMARM_ENOMEM));
	HARNESS_CHECK(!sv.sv_mon);
	HARNESS_CHECK(sv.sv_sig == NULL); /* refused before the band */
	UNDER_FAULT(HARNESS_EQ(smarm__bhv_token_new(&sv, NULL, NULL, 0, &tok),
			       SMARM_ENOMEM));
	UNDER_FAULT(
		HARNESS_EQ(smarm__gs_timer_add(&sv, NULL, &blk, MS(5), 0, &id),
			   SMARM_ENOMEM));
	HARNESS_CHECK(sv.sv_tick == NULL && id == 0);
	HARNESS_CHECK(sv.sv_cold == NULL);

	/* What needs no block makes none. */
	HARNESS_EQ(smarm_gs_set_idle(&sv, 0), 0);
	HARNESS_EQ(smarm_gs_set_hibernate_after(&sv, 0), 0);
	HARNESS_CHECK(sv.sv_hib_set);
	HARNESS_EQ(smarm_gs_set_hibernate_after(&sv, SMARM_NO_TIMEOUT), 0);
	HARNESS_CHECK(!sv.sv_hib_set);
	HARNESS_CHECK(sv.sv_cold == NULL);

	/* Made: each use is kept; a machine's armed count stays its own. */
	HARNESS_EQ(smarm_gs_set_idle(&sv, MS(5)), 0);
	HARNESS_CHECK(sv.sv_cold != NULL);
	if (sv.sv_cold != NULL) {
		HARNESS_CHECK(sv.sv_armed == &none);
		HARNESS_EQ(sv.sv_cold->gc_idle_ns, MS(5));
		HARNESS_EQ(smarm_gs_set_hibernate_after(&sv, MS(3)), 0);
		HARNESS_EQ(sv.sv_cold->gc_hib_after, MS(3));
		HARNESS_EQ(smarm_gs_set_hibernate_after(&sv, 0), 0);
		HARNESS_EQ(sv.sv_cold->gc_hib_after, 0);
		HARNESS_CHECK(sv.sv_hib_set);
		HARNESS_EQ(smarm_gs_continue(&sv, 7), 0);
		HARNESS_EQ(sv.sv_cold->gc_tag, 7);
		HARNESS_CHECK(sv.sv_cont);
		free(sv.sv_cold);
	}
	(void)smarm__bhv_self_set(NULL, 0);
	HARNESS_EQ(smarm_actor_stop(p), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
}

START_TEST(test_gs_cold_enomem_changes_nothing)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, cold_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_gs_cold_suite(void)
{
	Suite *s = suite_create("gs_cold");
	TCase *tc = tcase_create("cold");
	tcase_add_test(tc, test_gs_cold_enomem_changes_nothing);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(gs_cold)
