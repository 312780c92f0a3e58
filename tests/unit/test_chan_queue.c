/* SPDX-License-Identifier: MIT */
/*
 * test_chan_queue.c - a channel's element queue (msg/chan.c over the
 * chunked queue, core/ring.h QUEUE-4): a send never moves the elements
 * queued before it, even with 2^20 of them. A queue that doubles and
 * copies makes every send that grows it pay for the whole backlog (up to
 * 0.4 s at 2^19 elements of 64 bytes, for a send that never waits).
 */
#include "harness.h"

#include "msg/msg.h"

/*
 * The element at the front stays where it is while the channel fills to
 * 2^20 elements; then they come out in order.
 */
START_TEST(test_chan_queue_send_never_moves_the_backlog)
{
	enum { N = 1 << 20 };
	smarm_chan_t *h, *ch;
	const void *front;
	uint64_t v = 0;
	size_t failed = 0; /* sends or receives that went wrong */
	size_t moved = 0;  /* looks that found the front elsewhere */

	ck_assert_int_eq(smarm_chan_alloc(&h, sizeof v, NULL), 0);
	ck_assert_int_eq(smarm__chan_cell(h, &ch), 0);
	ck_assert_int_eq(smarm_chan_send(h, &v), 0);
	front = smarm__queue_front(&ch->queue, sizeof v);
	/* Plain checks in the loops, one assert after each: Check's
	 * asserts cost more than the sends (minutes under ASan). A moved
	 * front never comes back, so a look every 4096 sends finds it. */
	for (v = 1; v < N; v++) {
		failed += smarm_chan_send(h, &v) != 0;
		if ((v & 4095) == 0 || v == N - 1)
			moved += smarm__queue_front(&ch->queue, sizeof v) !=
				 front;
	}
	ck_assert_uint_eq(failed, 0);
	ck_assert_uint_eq(moved, 0);
	for (uint64_t i = 0; i < N; i++)
		failed += smarm_chan_try_recv(h, &v) != 0 || v != i;
	ck_assert_uint_eq(failed, 0);
	ck_assert_int_eq(smarm_chan_try_recv(h, &v), SMARM_EAGAIN);
	smarm_chan_receiver_free(h);
	smarm_chan_sender_free(h);
}
END_TEST

Suite *smarm_test_chan_queue_suite(void)
{
	Suite *s = suite_create("chan_queue");
	TCase *tc = tcase_create("growth");
	tcase_add_test(tc, test_chan_queue_send_never_moves_the_backlog);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(chan_queue)
