/* SPDX-License-Identifier: MIT */
/*
 * test_statem_door.c - plugins/door.so as the loader sees it: its entry
 * returns one machine whose protocol parses and whose table the checker
 * accepts; the same table with its catch-all cast
 * row removed is refused as not exhaustive. (Path in SMARM_DOOR_SO.)
 */
#include "harness.h"

#include "behaviour/bhv.h"
#include "behaviour/statem.h"

#include <dlfcn.h>
#include <string.h>

START_TEST(test_statem_door_table_is_accepted)
{
	const char *path = getenv("SMARM_DOOR_SO");
	smarm_plugin_entry_fn entry;
	const smarm_plugin_desc_t *pd;
	const smarm_sm_desc_t *d;
	struct bhv_proto p = { 0 };
	smarm_sm_desc_t broken;
	smarm_sm_row_t rows[32];
	char msg[256] = "";
	void *h;

	ck_assert_ptr_nonnull(path);
	h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "dlopen: %s", dlerror());
	*(void **)&entry = dlsym(h, SMARM_PLUGIN_ENTRY_NAME);
	ck_assert_ptr_nonnull(entry);
	ck_assert_ptr_null(entry(SMARM_PLUGIN_ABI_MAJOR + 1, 0));
	pd = entry(SMARM_PLUGIN_ABI_MAJOR, SMARM_PLUGIN_ABI_MINOR);
	ck_assert_ptr_nonnull(pd);
	ck_assert_uint_eq(pd->n_machines, 1);
	ck_assert_uint_eq(pd->n_servers, 0);
	d = pd->machines[0];
	ck_assert_str_eq(d->name, "door");
	ck_assert_int_eq(
		smarm__bhv_proto_parse(d->protocol, &p, msg, sizeof msg), 0);
	ck_assert_uint_eq(p.pr_n, 8);
	ck_assert_int_eq(smarm__sm_check(d, &p, msg, sizeof msg), 0);
	/* Without the row that refuses other casts, Open misses push. */
	ck_assert_uint_le(d->n_rows, 32);
	memcpy(rows, d->rows, d->n_rows * sizeof rows[0]);
	broken = *d;
	broken.rows = rows;
	for (size_t i = 0; i < broken.n_rows; i++) {
		if (rows[i].kind == SMARM_SM_CAST && rows[i].op == NULL) {
			memmove(&rows[i], &rows[i + 1],
				(broken.n_rows - i - 1) * sizeof rows[0]);
			broken.n_rows--;
			break;
		}
	}
	ck_assert_uint_eq(broken.n_rows, d->n_rows - 1);
	ck_assert_int_eq(smarm__sm_check(&broken, &p, msg, sizeof msg),
			 SMARM_ENOTEXHAUSTIVE);
	ck_assert_msg(strstr(msg, "state Closed") != NULL, "msg: %s", msg);
	smarm__bhv_proto_free(&p);
	dlclose(h);
}
END_TEST

Suite *smarm_test_statem_door_suite(void)
{
	Suite *s = suite_create("statem_door");
	TCase *tc = tcase_create("door");
	tcase_add_test(tc, test_statem_door_table_is_accepted);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(statem_door)
