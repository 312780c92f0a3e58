/* SPDX-License-Identifier: MIT */
/*
 * test_plugin_static_host.c - a host that links libsmarm.a (this
 * executable, built without -rdynamic) loading a plugin linked with
 * -lsmarm (probe.so, which calls the runtime and so needs libsmarm.so):
 * the plugin would bind to a second runtime of its own, so
 * smarm_plugin_open refuses it with SMARM_EPLUGINLINK and a message
 * saying how to build it. A plugin that needs no runtime library
 * (bad_good.so calls nothing of it) still loads.
 */
#include "harness.h"

#include <smarm/smarm_plugin.h>

#include <string.h>

START_TEST(test_plugin_static_host_refuses_a_second_runtime)
{
	const char *dir = getenv("SMARM_TEST_BAD_DIR");
	const char *path = getenv("SMARM_TEST_PROBE");
	char good[4096];
	char msg[512];
	smarm_plugin_t *pl = NULL;
	ck_assert_ptr_nonnull(dir);
	ck_assert_ptr_nonnull(path);
	snprintf(good, sizeof good, "%s/bad_good.so", dir);
	ck_assert_int_eq(smarm_plugin_open(good, &pl, msg, sizeof msg), 0);
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
	ck_assert_int_eq(smarm_plugin_open(path, &pl, msg, sizeof msg),
			 SMARM_EPLUGINLINK);
	ck_assert_msg(strstr(msg, path) != NULL &&
			      strstr(msg, "second copy of the runtime") &&
			      strstr(msg, "libsmarm.so") &&
			      strstr(msg, "without -lsmarm") &&
			      strstr(msg, "-rdynamic"),
		      "%s", msg);
	ck_assert_str_eq(smarm_err_name(SMARM_EPLUGINLINK),
			 "SMARM_EPLUGINLINK");
}
END_TEST

Suite *smarm_test_plugin_static_host_suite(void)
{
	Suite *s = suite_create("plugin_static_host");
	TCase *tc = tcase_create("link");
	tcase_add_test(tc, test_plugin_static_host_refuses_a_second_runtime);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(plugin_static_host)
