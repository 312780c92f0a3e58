/* SPDX-License-Identifier: MIT */
/*
 * test_gen_statem.c - gen_statem behaviours through the public API:
 * the loader's table checks, each refusal provoked by a broken plugin of
 * tests/plugins_bad/bad_sm.c with its status and a message naming the
 * machine, the state, the op and the row.
 */
#include "harness.h"

#include <smarm/smarm_plugin.h>

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

Suite *smarm_test_gen_statem_suite(void)
{
	Suite *s = suite_create("gen_statem");
	TCase *tc = tcase_create("load");
	tcase_add_test(tc, test_gen_statem_load_checks_each_table);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(gen_statem)
