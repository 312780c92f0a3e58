/* SPDX-License-Identifier: MIT */
/*
 * test_statem_check.c - the gen_statem table checker (behaviour/statem.c):
 * a good table passes; each malformed field or row is SMARM_EPROTOCOL,
 * each missing row SMARM_ENOTEXHAUSTIVE and each shadowed row
 * SMARM_EUNREACHABLE, with a message naming the row, state and op.
 */
#include "harness.h"

#include "behaviour/bhv.h"
#include "behaviour/statem.h"

#include <string.h>

enum { CLOSED, OPEN, LOCKED, NSTATES };

static const char *const names[NSTATES] = { "Closed", "Open", "Locked" };
static const char *const touts[] = { "alarm" };

static const struct smarm__sm_op ops[] = {
	{ "push", SMARM_SM_CAST }, { "pull", SMARM_SM_CAST },
	{ "lock", SMARM_SM_CAST }, { "get", SMARM_SM_CALL },
	{ "tick", SMARM_SM_INFO },
};
#define NOPS (sizeof ops / sizeof ops[0])

static bool g_true(const void *data)
{
	(void)data;
	return true;
}

static int32_t a_dyn(void *data, smarm_sm_ctx_t *cx, int32_t state)
{
	(void)data;
	(void)cx;
	return state;
}

#define GUARD ((void (*)(void))g_true)
#define DYN ((void (*)(void))a_dyn)

/* A full table: push Closed->Open, pull Open->Closed, lock
 * Closed->Locked, push postponed while Locked, get anywhere, alarm and
 * the state timeout anywhere. Tests copy it and break one thing. */
static smarm_sm_row_t rows[] = {
	{ LOCKED, SMARM_SM_CAST, "push", NULL, NULL, SMARM_SM_POSTPONE, 0 },
	{ CLOSED, SMARM_SM_CAST, "push", NULL, NULL, SMARM_SM_TO, OPEN },
	{ OPEN, SMARM_SM_CAST, "pull", NULL, NULL, SMARM_SM_TO, CLOSED },
	{ CLOSED, SMARM_SM_CAST, "lock", GUARD, NULL, SMARM_SM_TO, LOCKED },
	{ LOCKED, SMARM_SM_CAST, "lock", NULL, DYN, SMARM_SM_DYNAMIC, 0 },
	{ SMARM_SM_ANY, SMARM_SM_CAST, NULL, NULL, NULL, SMARM_SM_UNHANDLED,
	  0 },
	{ SMARM_SM_ANY, SMARM_SM_CALL, "get", NULL, NULL, SMARM_SM_STAY, 0 },
	{ SMARM_SM_ANY, SMARM_SM_STATE_TIMEOUT, NULL, NULL, NULL, SMARM_SM_TO,
	  CLOSED },
	{ SMARM_SM_ANY, SMARM_SM_TIMEOUT, "alarm", NULL, NULL, SMARM_SM_STAY,
	  0 },
	{ OPEN, SMARM_SM_INFO, "tick", NULL, NULL, SMARM_SM_STAY, 0 },
	{ SMARM_SM_ANY, SMARM_SM_SHUTDOWN, NULL, NULL, NULL, SMARM_SM_STOP, 0 },
};
#define NROWS (sizeof rows / sizeof rows[0])

static smarm_sm_row_t t[32];
static smarm_sm_desc_t d;
static char msg[256];

static void reset(void)
{
	memcpy(t, rows, sizeof rows);
	memset(&d, 0, sizeof d);
	d.struct_size = sizeof d;
	d.n_states = NSTATES;
	d.name = "door";
	d.state_names = names;
	d.initial = CLOSED;
	d.flags = SMARM_SM_F_STATE_TIMEOUT;
	d.timeouts = touts;
	d.n_timeouts = 1;
	d.rows = t;
	d.n_rows = NROWS;
	msg[0] = '\0';
}

static int check(void)
{
	return smarm__sm_check_ops(&d, ops, NOPS, msg, sizeof msg);
}

/* The check returns rc and its message holds every needle. */
static void expect(int rc, const char *n1, const char *n2, const char *n3)
{
	ck_assert_int_eq(check(), rc);
	ck_assert_msg(strstr(msg, "machine door") != NULL, "msg: %s", msg);
	ck_assert_msg(n1 == NULL || strstr(msg, n1) != NULL, "msg: %s", msg);
	ck_assert_msg(n2 == NULL || strstr(msg, n2) != NULL, "msg: %s", msg);
	ck_assert_msg(n3 == NULL || strstr(msg, n3) != NULL, "msg: %s", msg);
}

START_TEST(test_statem_check_good_table_passes)
{
	reset();
	ck_assert_int_eq(check(), 0);
	ck_assert_str_eq(msg, "");
	/* msg may be NULL. */
	ck_assert_int_eq(smarm__sm_check_ops(&d, ops, NOPS, NULL, 0), 0);
	ck_assert_int_eq(smarm__sm_check_ops(NULL, ops, NOPS, NULL, 0),
			 SMARM_EINVAL);
	/* A message cut to a tiny buffer stays terminated. */
	t[6].op = NULL;
	t[6].kind = SMARM_SM_CALL;
	d.n_rows = 1;
	char tiny[8];
	ck_assert_int_eq(smarm__sm_check_ops(&d, ops, NOPS, tiny, sizeof tiny),
			 SMARM_ENOTEXHAUSTIVE);
	ck_assert_uint_eq(strlen(tiny), sizeof tiny - 1);
}
END_TEST

START_TEST(test_statem_check_bad_fields_are_eprotocol)
{
	static const char *const dup[] = { "alarm", "alarm" };
	static const char *const holes[] = { "Closed", NULL, "Locked" };
	static const char *const empty[] = { "" };

	reset();
	d.n_states = 0;
	expect(SMARM_EPROTOCOL, "n_states", NULL, NULL);
	reset();
	d.state_names = NULL;
	expect(SMARM_EPROTOCOL, "state_names", NULL, NULL);
	reset();
	d.state_names = holes;
	expect(SMARM_EPROTOCOL, "state 1", NULL, NULL);
	reset();
	d.initial = NSTATES;
	expect(SMARM_EPROTOCOL, "initial", NULL, NULL);
	reset();
	d.initial = -1;
	expect(SMARM_EPROTOCOL, "initial", NULL, NULL);
	reset();
	d.flags = 4;
	expect(SMARM_EPROTOCOL, "flags", NULL, NULL);
	reset();
	d.timeouts = NULL;
	expect(SMARM_EPROTOCOL, "timeouts", NULL, NULL);
	reset();
	d.timeouts = dup;
	d.n_timeouts = 2;
	expect(SMARM_EPROTOCOL, "alarm", "twice", NULL);
	reset();
	d.timeouts = empty;
	expect(SMARM_EPROTOCOL, "timeout name 0", NULL, NULL);
	reset();
	d.rows = NULL;
	expect(SMARM_EPROTOCOL, "rows", NULL, NULL);
}
END_TEST

START_TEST(test_statem_check_bad_rows_are_eprotocol)
{
	reset();
	t[2].state = NSTATES;
	expect(SMARM_EPROTOCOL, "row 2", "state 3", NULL);
	reset();
	t[2].state = -2;
	expect(SMARM_EPROTOCOL, "row 2", NULL, NULL);
	reset();
	t[2].kind = 0;
	expect(SMARM_EPROTOCOL, "row 2", "Open", "kind 0");
	reset();
	t[2].kind = 9;
	expect(SMARM_EPROTOCOL, "row 2", "Open", "kind 9");
	reset();
	t[2].tail = 0;
	expect(SMARM_EPROTOCOL, "row 2", "Open", "cast pull");
	reset();
	t[2].tail = 8;
	expect(SMARM_EPROTOCOL, "row 2", "tail 8", "cast pull");
	reset();
	/* POSTPONE on cast, call, info and timeout rows (OTP postpones
	 * any event), not on shutdown or exit rows. */
	t[7].tail = SMARM_SM_POSTPONE;
	ck_assert_int_eq(check(), 0);
	reset();
	t[8].tail = SMARM_SM_POSTPONE;
	ck_assert_int_eq(check(), 0);
	reset();
	t[10].tail = SMARM_SM_POSTPONE;
	expect(SMARM_EPROTOCOL, "row 10", "shutdown", "postpone");
	reset();
	t[2].target = NSTATES;
	expect(SMARM_EPROTOCOL, "row 2", "Open", "target 3");
	reset();
	t[2].target = -1;
	expect(SMARM_EPROTOCOL, "row 2", "cast pull", "target -1");
	reset();
	t[4].action = NULL;
	expect(SMARM_EPROTOCOL, "row 4", "Locked", "action");
	reset();
	/* op names no operation, or one of another kind. */
	t[2].op = "pul";
	expect(SMARM_EPROTOCOL, "row 2", "Open", "cast operation pul");
	reset();
	t[6].op = "push";
	expect(SMARM_EPROTOCOL, "row 6", "any", "call operation push");
	reset();
	t[9].op = "get";
	expect(SMARM_EPROTOCOL, "row 9", "Open", "info operation get");
	reset();
	t[8].op = "alarn";
	expect(SMARM_EPROTOCOL, "row 8", "any", "timeout alarn");
	reset();
	t[7].op = "push";
	expect(SMARM_EPROTOCOL, "row 7", "state_timeout", "NULL");
	reset();
	t[10].op = "x";
	expect(SMARM_EPROTOCOL, "row 10", "shutdown", "NULL");
}
END_TEST

START_TEST(test_statem_check_missing_rows_are_enotexhaustive)
{
	reset();
	/* Without the catch-all cast row, Closed misses pull. */
	memmove(&t[5], &t[6], (NROWS - 6) * sizeof t[0]);
	d.n_rows = NROWS - 1;
	expect(SMARM_ENOTEXHAUSTIVE, "state Closed", "cast pull", NULL);
	/* ... and with a cast row of any op in Closed, Open misses push. */
	t[d.n_rows++] = (smarm_sm_row_t){ CLOSED, SMARM_SM_CAST, NULL, NULL,
					  NULL,	  SMARM_SM_STAY, 0 };
	expect(SMARM_ENOTEXHAUSTIVE, "state Open", "cast push", NULL);
	reset();
	/* A guarded row does not cover. */
	t[5].guard = GUARD;
	expect(SMARM_ENOTEXHAUSTIVE, "state Closed", "cast pull", NULL);
	reset();
	t[6].state = LOCKED;
	expect(SMARM_ENOTEXHAUSTIVE, "state Closed", "call get", NULL);
	reset();
	/* The state timeout row is needed only when flags say it is armed. */
	t[7].state = OPEN;
	expect(SMARM_ENOTEXHAUSTIVE, "state Closed", "state_timeout", NULL);
	d.flags = 0;
	ck_assert_int_eq(check(), 0);
	reset();
	d.flags |= SMARM_SM_F_EVENT_TIMEOUT;
	expect(SMARM_ENOTEXHAUSTIVE, "state Closed", "event_timeout", NULL);
	t[d.n_rows++] = (smarm_sm_row_t){
		SMARM_SM_ANY, SMARM_SM_EVENT_TIMEOUT, NULL, NULL,
		NULL,	      SMARM_SM_STAY,	      0
	};
	ck_assert_int_eq(check(), 0);
	reset();
	/* Every declared timeout name. */
	t[8].state = LOCKED;
	expect(SMARM_ENOTEXHAUSTIVE, "state Closed", "timeout alarm", NULL);
	reset();
	/* Info needs no row: the built-in one drops it. */
	t[9].state = SMARM_SM_ANY;
	t[9].guard = GUARD;
	ck_assert_int_eq(check(), 0);
	/* An unguarded postpone row covers its event. */
	reset();
	t[1].tail = SMARM_SM_POSTPONE;
	ck_assert_int_eq(check(), 0);
}
END_TEST

START_TEST(test_statem_check_shadowed_rows_are_eunreachable)
{
	reset();
	/* After the catch-all cast row, a cast row can never match. */
	t[d.n_rows++] = (smarm_sm_row_t){ OPEN, SMARM_SM_CAST, "push", NULL,
					  NULL, SMARM_SM_STAY, 0 };
	expect(SMARM_EUNREACHABLE, "row 11", "state Open", "cast push");
	ck_assert_msg(strstr(msg, "row 5") != NULL, "msg: %s", msg);
	reset();
	/* A guarded row shadows nothing; a guarded duplicate is fine. */
	t[2].guard = GUARD;
	ck_assert_int_eq(check(), 0);
	reset();
	/* Same state, same op, twice. */
	t[3] = t[1];
	expect(SMARM_EUNREACHABLE, "row 3", "state Closed", "cast push");
	ck_assert_msg(strstr(msg, "row 1") != NULL, "msg: %s", msg);
	reset();
	/* Postpone rows are tried first: an unguarded one shadows an
	 * earlier row of the table. */
	t[0].state = CLOSED;
	expect(SMARM_EUNREACHABLE, "row 1", "state Closed", "cast push");
	ck_assert_msg(strstr(msg, "row 0") != NULL, "msg: %s", msg);
	reset();
	/* Rows of each state together shadow an any-state row. */
	t[d.n_rows++] =
		(smarm_sm_row_t){ SMARM_SM_ANY, SMARM_SM_INFO, "tick", NULL,
				  NULL,		SMARM_SM_STAY, 0 };
	t[d.n_rows++] =
		(smarm_sm_row_t){ SMARM_SM_ANY, SMARM_SM_INFO, NULL, NULL,
				  NULL,		SMARM_SM_STAY, 0 };
	expect(SMARM_EUNREACHABLE, "row 12", "state any", "info any");
	reset();
	/* An any-op row of a kind with no operation matches nothing. */
	t[d.n_rows++] =
		(smarm_sm_row_t){ SMARM_SM_ANY, SMARM_SM_TIMEOUT, NULL, NULL,
				  NULL,		SMARM_SM_STAY,	  0 };
	expect(SMARM_EUNREACHABLE, "row 11", "state any", "timeout any");
	d.n_timeouts = 0;
	t[8].op = NULL;
	d.n_rows = NROWS;
	expect(SMARM_EUNREACHABLE, "row 8", "timeout any", "no timeout");
	reset();
	/* A second shutdown row behind an unguarded any-state one. */
	t[d.n_rows++] = (smarm_sm_row_t){ OPEN, SMARM_SM_SHUTDOWN, NULL, NULL,
					  NULL, SMARM_SM_STAY,	   0 };
	expect(SMARM_EUNREACHABLE, "row 11", "state Open", "shutdown");
}
END_TEST

/* The loader's entry: the operations come from the parsed protocol. */
START_TEST(test_statem_check_loader_entry_reads_the_protocol)
{
	struct bhv_proto p = { 0 };

	reset();
	ck_assert_int_eq(
		smarm__bhv_proto_parse("cast push(); cast pull()\n"
				       "cast lock(); call get() -> i64\n"
				       "info tick(u64)",
				       &p, NULL, 0),
		0);
	ck_assert_int_eq(smarm__sm_check(&d, &p, msg, sizeof msg), 0);
	t[6].state = OPEN;
	ck_assert_int_eq(smarm__sm_check(&d, &p, msg, sizeof msg),
			 SMARM_ENOTEXHAUSTIVE);
	ck_assert_msg(strstr(msg, "call get") != NULL, "msg: %s", msg);
	ck_assert_int_eq(smarm__sm_check(NULL, &p, msg, sizeof msg),
			 SMARM_EINVAL);
	smarm__bhv_proto_free(&p);
	/* A protocol where get is a cast: the call row names nothing. */
	reset();
	ck_assert_int_eq(smarm__bhv_proto_parse("cast push(); cast pull(); "
						"cast lock(); cast get(); "
						"info tick()",
						&p, NULL, 0),
			 0);
	ck_assert_int_eq(smarm__sm_check(&d, &p, msg, sizeof msg),
			 SMARM_EPROTOCOL);
	ck_assert_msg(strstr(msg, "row 6") != NULL, "msg: %s", msg);
	smarm__bhv_proto_free(&p);
}
END_TEST

Suite *smarm_test_statem_check_suite(void)
{
	Suite *s = suite_create("statem_check");
	TCase *tc = tcase_create("check");
	tcase_add_test(tc, test_statem_check_good_table_passes);
	tcase_add_test(tc, test_statem_check_bad_fields_are_eprotocol);
	tcase_add_test(tc, test_statem_check_bad_rows_are_eprotocol);
	tcase_add_test(tc, test_statem_check_missing_rows_are_enotexhaustive);
	tcase_add_test(tc, test_statem_check_shadowed_rows_are_eunreachable);
	tcase_add_test(tc, test_statem_check_loader_entry_reads_the_protocol);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(statem_check)
