/* SPDX-License-Identifier: MIT */
/*
 * test_chan_hint.c - a channel's lock-free readiness hint
 * (smarm__chan_maybe_ready, msg/chan.c INV-8) follows its queue through
 * sends, receives, a filtered removal and a requeue-free drain, and is
 * false for a handle that names no channel.
 */
#include "harness.h"

#include "msg/msg.h"

static bool odd(const void *elem, void *arg)
{
	(void)arg;
	return (*(const uint64_t *)elem & 1) != 0;
}

START_TEST(test_chan_hint_follows_the_queue)
{
	smarm_chan_t *h, *ch;
	uint64_t v;

	ck_assert_int_eq(smarm_chan_alloc(&h, sizeof v, NULL), 0);
	ck_assert(!smarm__chan_maybe_ready(h));
	for (v = 1; v <= 3; v++)
		ck_assert_int_eq(smarm_chan_send(h, &v), 0);
	ck_assert(smarm__chan_maybe_ready(h));
	for (int i = 0; i < 3; i++) {
		ck_assert(smarm__chan_maybe_ready(h));
		ck_assert_int_eq(smarm_chan_try_recv(h, &v), 0);
	}
	ck_assert(!smarm__chan_maybe_ready(h));
	/* a removal of every queued element leaves it empty */
	v = 5;
	ck_assert_int_eq(smarm_chan_send(h, &v), 0);
	v = 7;
	ck_assert_int_eq(smarm_chan_send(h, &v), 0);
	ck_assert_int_eq(smarm__chan_cell(h, &ch), 0);
	ck_assert_int_eq(smarm__chan_remove_if(ch, h, odd, NULL), 2);
	ck_assert(!smarm__chan_maybe_ready(h));
	v = 8;
	ck_assert_int_eq(smarm_chan_send(h, &v), 0);
	ck_assert_int_eq(smarm__chan_remove_if(ch, h, odd, NULL), 0);
	ck_assert(smarm__chan_maybe_ready(h));
	smarm_chan_receiver_free(h); /* the queue is destroyed */
	smarm_chan_sender_free(h);
	ck_assert(!smarm__chan_maybe_ready(h)); /* no channel any more */
	ck_assert(!smarm__chan_maybe_ready(NULL));
}
END_TEST

Suite *smarm_test_chan_hint_suite(void)
{
	Suite *s = suite_create("chan_hint");
	TCase *tc = tcase_create("hint");
	tcase_add_test(tc, test_chan_hint_follows_the_queue);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(chan_hint)
