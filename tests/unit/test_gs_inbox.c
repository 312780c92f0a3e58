/* SPDX-License-Identifier: MIT */
/*
 * test_gs_inbox.c - what lets a hibernated server hold no inbox
 * channel: msg/chan.c smarm__chan_free_idle, case by case (a channel
 * with something queued, another reference, a notify fd or a bound
 * other than the one asked for is kept; an idle one is freed and its
 * handle refused).
 */
#include "harness.h"

#include "msg/msg.h"

static void free_idle_root(void *arg)
{
	smarm_chan_t *h;
	int64_t v = 1;
	int fd;
	(void)arg;

	/* Something queued: kept, and the element still there. */
	HARNESS_EQ(smarm_chan_alloc(&h, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_chan_send(h, &v), 0);
	HARNESS_EQ(smarm__chan_free_idle(h, 0), SMARM_EAGAIN);
	HARNESS_EQ(smarm_chan_try_recv(h, &v), 0);
	/* Another reference: kept. */
	HARNESS_EQ(smarm_chan_sender_dup(h), 0);
	HARNESS_EQ(smarm__chan_free_idle(h, 0), SMARM_EAGAIN);
	HARNESS_EQ(smarm_chan_sender_free(h), 0);
	/* A bound other than the one asked for: kept. */
	HARNESS_EQ(smarm__chan_set_limit(h, 4), 0);
	HARNESS_EQ(smarm__chan_free_idle(h, 0), SMARM_EAGAIN);
	HARNESS_EQ(smarm__chan_free_idle(h, 8), SMARM_EAGAIN);
	/* Idle: freed; its handle is refused from then on. */
	HARNESS_EQ(smarm__chan_free_idle(h, 4), 0);
	HARNESS_EQ(smarm_chan_send(h, &v), SMARM_ESTATE);
	HARNESS_EQ(smarm__chan_free_idle(h, 4), SMARM_ESTATE);
	HARNESS_EQ(smarm__chan_free_idle(NULL, 0), SMARM_EINVAL);
	/* A notify fd: kept. */
	HARNESS_EQ(smarm_chan_alloc(&h, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_chan_notify_fd(h, &fd), 0);
	HARNESS_EQ(smarm__chan_free_idle(h, 0), SMARM_EAGAIN);
	HARNESS_EQ(smarm_chan_sender_free(h), 0);
	HARNESS_EQ(smarm_chan_receiver_free(h), 0);
}

START_TEST(test_chan_free_idle)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, free_idle_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_gs_inbox_suite(void)
{
	Suite *s = suite_create("gs_inbox");
	TCase *tc = tcase_create("inbox");
	tcase_add_test(tc, test_chan_free_idle);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(gs_inbox)
