/* SPDX-License-Identifier: MIT */
/* test_basic.c - version, errors and the smallest possible run. */
#include "harness.h"

#include <string.h>

static atomic_int basic_ran;

static void basic_root(void *arg)
{
	(void)arg;
	atomic_store(&basic_ran, 1);
}

START_TEST(test_basic_version_matches_header)
{
	ck_assert_uint_eq(smarm_version(), SMARM_VERSION_HEX);
	ck_assert_str_eq(smarm_version_string(), SMARM_VERSION_STRING);
}
END_TEST

START_TEST(test_basic_strerror_never_null)
{
	ck_assert_str_eq(smarm_err_name(SMARM_ENOPROC), "SMARM_ENOPROC");
	ck_assert_str_eq(smarm_err_name(-12345), "SMARM_E?");
	ck_assert_ptr_nonnull(smarm_strerror(-12345));
	ck_assert_int_gt((int)strlen(smarm_strerror(SMARM_ECLOSED)), 0);
}
END_TEST

START_TEST(test_basic_run_executes_root)
{
	ck_assert_int_eq(harness_run(1, basic_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&basic_ran), 1);
}
END_TEST

Suite *smarm_test_basic_suite(void)
{
	Suite *s = suite_create("basic");
	TCase *tc = tcase_create("basic");
	tcase_add_test(tc, test_basic_version_matches_header);
	tcase_add_test(tc, test_basic_strerror_never_null);
	tcase_add_test(tc, test_basic_run_executes_root);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(basic)
