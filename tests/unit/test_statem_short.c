/* SPDX-License-Identifier: MIT */
/*
 * test_statem_short.c - a gen_statem descriptor of the smallest size
 * the loader accepts (tests/plugins_bad/bad_sm.c, SM_SHORT: struct_size
 * ends before format_status, as a 0.5 plugin built before it did, and the bytes
 * after it are not zero) as the loader keeps it: a copy owned by the behaviour,
 * the plugin's bytes up to struct_size and zeros past it, which the checker and
 * the machines read; a machine of it runs. (Path in SMARM_SM_SHORT_SO.)
 */
#include "harness.h"

#include "behaviour/bhv.h"

#include <dlfcn.h>
#include <smarm/smarm_plugin.h>
#include <string.h>

static const smarm_behaviour_t *g_be;
static int g_rc[4];

static void run_root(void *arg)
{
	smarm_server_t *s = NULL;
	(void)arg;
	g_rc[0] = smarm_server_start(g_be, NULL, NULL, &s);
	if (g_rc[0] != 0)
		return;
	g_rc[1] = smarm_server_cast(s, "push", NULL, 0);
	/* get's action answers nothing: the caller gets SMARM_EDOWN */
	g_rc[2] = smarm_server_call(s, "get", NULL, 0, NULL, MS(10000));
	g_rc[3] = smarm_server_shutdown(s, MS(10000), NULL);
	smarm_server_free(s);
}

START_TEST(test_statem_short_descriptor_is_copied_and_zeroed)
{
	const char *path = getenv("SMARM_SM_SHORT_SO");
	const struct smarm_behaviour *b;
	const smarm_plugin_desc_t *pd;
	const smarm_sm_desc_t *d;
	smarm_plugin_entry_fn entry;
	smarm_plugin_t *pl = NULL;
	char msg[256] = "";
	void *h;

	ck_assert_ptr_nonnull(path);
	ck_assert_msg(smarm_plugin_open(path, &pl, msg, sizeof msg) == 0,
		      "open: %s", msg);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "sm", &g_be), 0);
	h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	ck_assert_ptr_nonnull(h);
	*(void **)&entry = dlsym(h, SMARM_PLUGIN_ENTRY_NAME);
	ck_assert_ptr_nonnull(entry);
	pd = entry(SMARM_PLUGIN_ABI_MAJOR, SMARM_PLUGIN_ABI_MINOR);
	d = pd->machines[0];
	ck_assert_uint_eq(d->struct_size,
			  offsetof(smarm_sm_desc_t, format_status));
	ck_assert_ptr_nonnull(d->format_status); /* the plugin's tail */
	ck_assert_ptr_nonnull(d->reserved[0]);
	b = g_be;
	ck_assert_ptr_nonnull(b->bh_sm);
	ck_assert_ptr_ne(b->bh_sm, d); /* the behaviour's own copy */
	ck_assert_uint_eq(b->bh_sm->struct_size, d->struct_size);
	ck_assert_str_eq(b->bh_sm->name, "sm");
	ck_assert_ptr_eq(b->bh_sm->rows, d->rows);
	ck_assert_uint_eq(b->bh_sm->n_rows, d->n_rows);
	ck_assert_ptr_null(b->bh_sm->format_status); /* none: not called */
	for (size_t i = 0; i < 7; i++)
		ck_assert_ptr_null(b->bh_sm->reserved[i]);
	dlclose(h);
	ck_assert_int_eq(harness_run(2, run_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(g_rc[0], 0);
	ck_assert_int_eq(g_rc[1], 0);
	ck_assert_int_eq(g_rc[2], SMARM_EDOWN);
	ck_assert_int_eq(g_rc[3], 0);
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
}
END_TEST

Suite *smarm_test_statem_short_suite(void)
{
	Suite *s = suite_create("statem_short");
	TCase *tc = tcase_create("short");
	tcase_add_test(tc, test_statem_short_descriptor_is_copied_and_zeroed);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(statem_short)
