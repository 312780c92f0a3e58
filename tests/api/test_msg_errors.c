/* SPDX-License-Identifier: MIT */
/*
 * test_msg_errors.c - every documented error of the channel, select,
 * timed-send and mutex API in smarm.h, provoked one by one. A failing
 * call must also leave its out-parameters and the object untouched.
 *
 * Results observed inside actors go into the global `R` and are asserted
 * after the run returns.
 */
#include "harness.h"
#include "retired.h"

#include <string.h>

static struct {
	int rc[32];
	int val[32];
	atomic_int flag;
} R;

static void reset(void)
{
	memset(&R, 0, sizeof R);
}

/* ----------------------------------------------------- chan_alloc */

START_TEST(test_msg_errors_chan_alloc_bad_arguments_return_einval)
{
	smarm_chan_t *ch = (smarm_chan_t *)(uintptr_t)0x1;
	ck_assert_int_eq(smarm_chan_alloc(NULL, 8, NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_alloc(&ch, 0, NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_alloc(&ch, 65537, NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_alloc(&ch, SIZE_MAX, NULL), SMARM_EINVAL);
	ck_assert_ptr_eq(ch, (smarm_chan_t *)(uintptr_t)0x1); /* untouched */
}
END_TEST

START_TEST(test_msg_errors_chan_alloc_size_limits_accepted)
{
	smarm_chan_t *ch = NULL;
	ck_assert_int_eq(smarm_chan_alloc(&ch, 1, NULL), 0);
	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ch = NULL;
	ck_assert_int_eq(smarm_chan_alloc(&ch, 65536, NULL), 0);
	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

/* ------------------------------------------------ reference counting */

START_TEST(test_msg_errors_sender_dup_null_returns_einval)
{
	ck_assert_int_eq(smarm_chan_sender_dup(NULL), SMARM_EINVAL);
}
END_TEST

START_TEST(test_msg_errors_sender_dup_after_last_sender_returns_eclosed)
{
	smarm_chan_t *ch;
	ck_assert_int_eq(smarm_chan_alloc(&ch, 4, NULL), 0);
	ck_assert_int_eq(smarm_chan_sender_dup(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_dup(ch), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_sender_dup(ch), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

START_TEST(test_msg_errors_sender_free_null_returns_einval)
{
	ck_assert_int_eq(smarm_chan_sender_free(NULL), SMARM_EINVAL);
}
END_TEST

START_TEST(test_msg_errors_sender_free_no_reference_returns_estate)
{
	smarm_chan_t *ch;
	ck_assert_int_eq(smarm_chan_alloc(&ch, 4, NULL), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), SMARM_ESTATE);
	ck_assert_int_eq(smarm_chan_sender_free(ch), SMARM_ESTATE);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

START_TEST(test_msg_errors_receiver_free_null_returns_einval)
{
	ck_assert_int_eq(smarm_chan_receiver_free(NULL), SMARM_EINVAL);
}
END_TEST

START_TEST(test_msg_errors_receiver_free_twice_returns_estate)
{
	smarm_chan_t *ch;
	ck_assert_int_eq(smarm_chan_alloc(&ch, 4, NULL), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), SMARM_ESTATE);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
}
END_TEST

/* ------------------------------------------------------------ send */

START_TEST(test_msg_errors_send_null_arguments_return_einval)
{
	smarm_chan_t *ch;
	int v = 1;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	ck_assert_int_eq(smarm_chan_send(NULL, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_send(ch, NULL), SMARM_EINVAL);
	ck_assert_int_eq(harness_chan_len(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

static atomic_int dtor_count;

static void count_dtor(void *elem)
{
	(void)elem;
	atomic_fetch_add(&dtor_count, 1);
}

START_TEST(test_msg_errors_send_receiver_gone_returns_eclosed)
{
	smarm_chan_t *ch;
	int v = 1;
	atomic_store(&dtor_count, 0);
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, count_dtor), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(smarm_chan_send(ch, &v), SMARM_ECLOSED);
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
}
END_TEST

START_TEST(test_msg_errors_chan_len_null_returns_einval)
{
	smarm_chan_t *ch;
	size_t len = 7;
	int v = 1;
	ck_assert_int_eq(smarm_chan_len(NULL, &len), SMARM_EINVAL);
	ck_assert_int_eq(len, 7);
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	ck_assert_int_eq(smarm_chan_len(ch, NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	ck_assert_int_eq(smarm_chan_len(ch, &len), 0);
	ck_assert_int_eq(len, 1);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
}
END_TEST

/* -------------------------------------------------------- try_recv */

START_TEST(test_msg_errors_try_recv_all_errors)
{
	smarm_chan_t *ch;
	int v = 55;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	ck_assert_int_eq(smarm_chan_try_recv(NULL, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_try_recv(ch, NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), SMARM_EAGAIN);
	ck_assert_int_eq(v, 55); /* untouched */
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);

	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &v), SMARM_ESTATE);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
}
END_TEST

/* ----------------------------------------------- recv / recv_timeout */

START_TEST(test_msg_errors_recv_outside_actor_blocks_on_the_os)
{
	smarm_chan_t *ch;
	int v = 0;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	/* A plain thread waits like an actor (here: out its deadline). */
	ck_assert_int_eq(smarm_chan_recv_timeout(ch, &v, MS(10)),
			 SMARM_ETIMEDOUT);
	ck_assert_int_eq(smarm_chan_recv_timeout(ch, &v, 0), SMARM_ETIMEDOUT);
	v = 9;
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	v = 0;
	ck_assert_int_eq(smarm_chan_recv(ch, &v), 0);
	ck_assert_int_eq(v, 9);
	ck_assert_int_eq(harness_chan_len(ch), 0);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

static void recv_errors_root(void *arg)
{
	smarm_chan_t *ch, *gone;
	int v = 0;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof v, NULL);
	R.rc[0] = smarm_chan_recv(NULL, &v);
	R.rc[1] = smarm_chan_recv(ch, NULL);
	R.rc[2] = smarm_chan_recv_timeout(NULL, &v, MS(10));
	R.rc[3] = smarm_chan_recv_timeout(ch, NULL, MS(10));
	R.rc[4] = smarm_chan_recv_timeout(NULL, &v, 0);
	R.rc[5] = smarm_chan_recv_timeout(ch, NULL, 0);
	R.rc[6] = smarm_chan_recv_timeout(ch, &v, MS(10));
	R.rc[7] = smarm_chan_recv_timeout(ch, &v, 0);
	smarm_chan_sender_free(ch);
	R.rc[8] = smarm_chan_recv(ch, &v);
	R.rc[9] = smarm_chan_recv_timeout(ch, &v, MS(10));
	R.rc[10] = smarm_chan_recv_timeout(ch, &v, 0);
	smarm_chan_receiver_free(ch);

	smarm_chan_alloc(&gone, sizeof v, NULL);
	smarm_chan_receiver_free(gone);
	R.rc[11] = smarm_chan_recv(gone, &v);
	R.rc[12] = smarm_chan_recv_timeout(gone, &v, MS(10));
	R.rc[13] = smarm_chan_recv_timeout(gone, &v, 0);
	smarm_chan_sender_free(gone);
	R.val[0] = v;
}

START_TEST(test_msg_errors_recv_every_error_in_actor)
{
	reset();
	ck_assert_int_eq(harness_run(1, recv_errors_root, NULL),
			 SMARM_EXIT_NORMAL);
	for (int i = 0; i <= 5; i++)
		ck_assert_int_eq(R.rc[i], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[6], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[7], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[8], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[9], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[10], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[11], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[12], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[13], SMARM_ESTATE);
	ck_assert_int_eq(R.val[0], 0);
}
END_TEST

/* ------------------------------------------------------------ select */

static void select_errors_root(void *arg)
{
	smarm_chan_t *a, *gone;
	smarm_chan_t *many[65];
	size_t idx = 3;
	(void)arg;
	smarm_chan_alloc(&a, 4, NULL);
	for (int i = 0; i < 65; i++)
		many[i] = a;
	R.rc[0] = smarm_select(NULL, 1, &idx);
	R.rc[1] = smarm_select(many, 1, NULL);
	R.rc[2] = smarm_select(many, 0, &idx);
	R.rc[3] = smarm_select(many, 65, &idx);
	R.rc[4] = smarm_select((smarm_chan_t *const[]){ a, NULL }, 2, &idx);
	R.rc[5] = smarm_select((smarm_chan_t *const[]){ NULL, a }, 2, &idx);
	R.rc[6] = smarm_select_timeout(NULL, 1, MS(1), &idx);
	R.rc[7] = smarm_select_timeout(many, 1, MS(1), NULL);
	R.rc[8] = smarm_select_timeout(many, 0, MS(1), &idx);
	R.rc[9] = smarm_select_timeout(many, 65, MS(1), &idx);
	R.rc[10] = smarm_select_timeout((smarm_chan_t *const[]){ a, NULL }, 2,
					MS(1), &idx);
	R.rc[11] = smarm_select_timeout(many, 64, MS(10), &idx);
	R.rc[12] = smarm_select_timeout(many, 64, 0, &idx);
	R.val[0] = (int)idx;
	smarm_chan_alloc(&gone, 4, NULL);
	smarm_chan_receiver_free(gone);
	R.rc[13] = smarm_select((smarm_chan_t *const[]){ a, gone }, 2, &idx);
	R.rc[14] = smarm_select_timeout((smarm_chan_t *const[]){ gone }, 1,
					MS(10), &idx);
	smarm_chan_sender_free(gone);
	harness_chan_drop(a);
}

START_TEST(test_msg_errors_select_every_error_in_actor)
{
	reset();
	ck_assert_int_eq(harness_run(1, select_errors_root, NULL),
			 SMARM_EXIT_NORMAL);
	for (int i = 0; i <= 10; i++)
		ck_assert_int_eq(R.rc[i], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[11], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[12], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.val[0], 3);
	ck_assert_int_eq(R.rc[13], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[14], SMARM_ESTATE);
}
END_TEST

START_TEST(test_msg_errors_select_outside_actor_returns_enotactor)
{
	smarm_chan_t *a;
	size_t idx;
	ck_assert_int_eq(smarm_chan_alloc(&a, 4, NULL), 0);
	ck_assert_int_eq(smarm_select((smarm_chan_t *const[]){ a }, 1, &idx),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_select_timeout((smarm_chan_t *const[]){ a }, 1,
					      MS(1), &idx),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_chan_sender_free(a), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(a), 0);
}
END_TEST

/* ------------------------------------------------ timed send, cancel */

START_TEST(test_msg_errors_send_after_and_cancel_outside_actor)
{
	smarm_chan_t *ch;
	int v = 1;
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	ck_assert_int_eq(smarm_chan_send_after(ch, &v, 0, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_timer_cancel(SMARM_TIMER_NONE), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
}
END_TEST

static void timed_errors_root(void *arg)
{
	smarm_chan_t *ch;
	int v = 1;
	(void)arg;
	smarm_chan_alloc(&ch, sizeof v, NULL);
	R.rc[0] = smarm_chan_send_after(NULL, &v, MS(1), NULL);
	R.rc[1] = smarm_chan_send_after(ch, NULL, MS(1), NULL);
	R.rc[2] = smarm_timer_cancel(SMARM_TIMER_NONE);
	R.rc[3] = smarm_timer_cancel((smarm_timer_t){ 123456789 });
	smarm_chan_sender_free(ch);
	R.rc[4] = smarm_chan_send_after(ch, &v, MS(1), NULL);
	smarm_chan_receiver_free(ch);
}

START_TEST(test_msg_errors_send_after_and_cancel_in_actor)
{
	reset();
	ck_assert_int_eq(harness_run(1, timed_errors_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[1], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[2], SMARM_ENOENT);
	ck_assert_int_eq(R.rc[3], SMARM_ENOENT);
	ck_assert_int_eq(R.rc[4], SMARM_ECLOSED);
}
END_TEST

/* ------------------------------------------------------------- mutex */

START_TEST(test_msg_errors_mutex_null_arguments_return_einval)
{
	ck_assert_int_eq(smarm_mutex_alloc(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_mutex_lock(NULL, MS(1)), SMARM_EINVAL);
	ck_assert_int_eq(smarm_mutex_lock(NULL, 0), SMARM_EINVAL);
	ck_assert_int_eq(smarm_mutex_try_lock(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_mutex_unlock(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_mutex_free(NULL), 0);
}
END_TEST

static void mutex_null_root(void *arg)
{
	(void)arg;
	R.rc[0] = smarm_mutex_lock(NULL, MS(1));
	R.rc[1] = smarm_mutex_try_lock(NULL);
	R.rc[2] = smarm_mutex_unlock(NULL);
	R.rc[3] = smarm_mutex_alloc(NULL);
	R.rc[4] = smarm_mutex_free(NULL);
}

START_TEST(test_msg_errors_mutex_null_arguments_in_actor_return_einval)
{
	reset();
	ck_assert_int_eq(harness_run(1, mutex_null_root, NULL),
			 SMARM_EXIT_NORMAL);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(R.rc[i], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[4], 0);
}
END_TEST

static smarm_mutex_t *M;

static void mutex_other(void *arg)
{
	(void)arg;
	R.rc[10] = smarm_mutex_unlock(M);
	R.rc[11] = smarm_mutex_try_lock(M);
	R.rc[12] = smarm_mutex_lock(M, MS(10));
	R.rc[13] = smarm_mutex_lock(M, 0);
}

static void mutex_state_root(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	smarm_mutex_alloc(&M);
	R.rc[0] = smarm_mutex_unlock(M);
	smarm_mutex_lock(M, MS(1000));
	R.rc[1] = smarm_mutex_free(M);
	R.rc[2] = smarm_mutex_try_lock(M);
	smarm_actor_spawn(&p, mutex_other, NULL, NULL);
	smarm_actor_join(p, NULL, NULL);
	R.rc[3] = smarm_mutex_unlock(M);
	R.rc[4] = smarm_mutex_unlock(M);
	R.rc[5] = smarm_mutex_free(M);
}

START_TEST(test_msg_errors_mutex_state_errors_in_actor)
{
	reset();
	ck_assert_int_eq(harness_run(1, mutex_state_root, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[1], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[2], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[10], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[11], SMARM_EAGAIN);
	ck_assert_int_eq(R.rc[12], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[13], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[5], 0);
}
END_TEST

START_TEST(test_msg_errors_mutex_state_errors_outside_actor)
{
	smarm_mutex_t *m = NULL;
	ck_assert_int_eq(smarm_mutex_alloc(&m), 0);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(smarm_mutex_unlock(m), SMARM_ESTATE);
	ck_assert_int_eq(smarm_mutex_lock(m, MS(1)), 0);
	ck_assert_int_eq(smarm_mutex_free(m), SMARM_ESTATE);
	ck_assert_int_eq(smarm_mutex_try_lock(m), SMARM_EAGAIN);
	/* This thread holds it: a relock is refused, never waited for. */
	ck_assert_int_eq(smarm_mutex_lock(m, 0), SMARM_ESTATE);
	ck_assert_int_eq(smarm_mutex_lock(m, MS(5)), SMARM_ESTATE);
	ck_assert_int_eq(smarm_mutex_unlock(m), 0);
	ck_assert_int_eq(smarm_mutex_free(m), 0);
}
END_TEST

/* ---------------------------------------- error names stay in sync */

/* receiver_free under a parked receiver is refused, not a hang or UAF */
static smarm_chan_t *me_parked_ch;
static int me_free_rc_parked, me_free_rc_after, me_recv_rc;

static void me_parked_receiver(void *arg)
{
	uint64_t v;
	(void)arg;
	me_recv_rc = smarm_chan_recv(me_parked_ch, &v);
}

static void me_root_free_under_receiver(void *arg)
{
	smarm_pid_t r;
	uint64_t v = 7;
	(void)arg;
	smarm_chan_alloc(&me_parked_ch, sizeof v, NULL);
	smarm_actor_spawn(&r, me_parked_receiver, NULL, NULL);
	smarm_actor_yield(); /* the receiver runs and parks (1 worker) */
	me_free_rc_parked = smarm_chan_receiver_free(me_parked_ch);
	smarm_chan_send(me_parked_ch, &v);
	smarm_actor_join(r, NULL, NULL);
	me_free_rc_after = smarm_chan_receiver_free(me_parked_ch);
	smarm_chan_sender_free(me_parked_ch);
}

START_TEST(test_msg_errors_receiver_free_under_parked_receiver_estate)
{
	ck_assert_int_eq(harness_run(1, me_root_free_under_receiver, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(me_free_rc_parked, SMARM_ESTATE);
	ck_assert_int_eq(me_recv_rc, 0);
	ck_assert_int_eq(me_free_rc_after, 0);
}
END_TEST

START_TEST(test_msg_errors_message_layer_codes_have_names)
{
	ck_assert_str_eq(smarm_err_name(SMARM_ECLOSED), "SMARM_ECLOSED");
	ck_assert_str_eq(smarm_err_name(SMARM_EAGAIN), "SMARM_EAGAIN");
	ck_assert_str_eq(smarm_err_name(SMARM_ETIMEDOUT), "SMARM_ETIMEDOUT");
	ck_assert_str_eq(smarm_err_name(SMARM_ESTATE), "SMARM_ESTATE");
	ck_assert_str_eq(smarm_err_name(SMARM_ENOENT), "SMARM_ENOENT");
	ck_assert_int_eq(SMARM_ECLOSED, -200);
}
END_TEST

Suite *smarm_test_msg_errors_suite(void)
{
	Suite *s = suite_create("msg_errors");
	TCase *tc = tcase_create("channel");
	tcase_add_test(tc,
		       test_msg_errors_chan_alloc_bad_arguments_return_einval);
	tcase_add_test(tc, test_msg_errors_chan_alloc_size_limits_accepted);
	tcase_add_test(tc, test_msg_errors_sender_dup_null_returns_einval);
	tcase_add_test(
		tc,
		test_msg_errors_sender_dup_after_last_sender_returns_eclosed);
	tcase_add_test(tc, test_msg_errors_sender_free_null_returns_einval);
	tcase_add_test(tc,
		       test_msg_errors_sender_free_no_reference_returns_estate);
	tcase_add_test(tc, test_msg_errors_receiver_free_null_returns_einval);
	tcase_add_test(tc, test_msg_errors_receiver_free_twice_returns_estate);
	tcase_add_test(tc, test_msg_errors_send_null_arguments_return_einval);
	tcase_add_test(tc, test_msg_errors_send_receiver_gone_returns_eclosed);
	tcase_add_test(tc, test_msg_errors_chan_len_null_returns_einval);
	tcase_add_test(tc, test_msg_errors_try_recv_all_errors);
	tcase_add_test(tc, test_msg_errors_recv_outside_actor_blocks_on_the_os);
	tcase_add_test(tc, test_msg_errors_recv_every_error_in_actor);
	tcase_add_test(tc, test_msg_errors_message_layer_codes_have_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("select");
	tcase_add_test(tc, test_msg_errors_select_every_error_in_actor);
	tcase_add_test(tc,
		       test_msg_errors_select_outside_actor_returns_enotactor);
	suite_add_tcase(s, tc);

	tc = tcase_create("timed_send");
	tcase_add_test(tc, test_msg_errors_send_after_and_cancel_outside_actor);
	tcase_add_test(tc, test_msg_errors_send_after_and_cancel_in_actor);
	suite_add_tcase(s, tc);

	tc = tcase_create("mutex");
	tcase_add_test(tc, test_msg_errors_mutex_null_arguments_return_einval);
	tcase_add_test(
		tc,
		test_msg_errors_mutex_null_arguments_in_actor_return_einval);
	tcase_add_test(tc, test_msg_errors_mutex_state_errors_in_actor);
	tcase_add_test(tc, test_msg_errors_mutex_state_errors_outside_actor);
	tcase_add_test(
		tc, test_msg_errors_receiver_free_under_parked_receiver_estate);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(msg_errors)
