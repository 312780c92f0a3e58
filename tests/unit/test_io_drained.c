/* SPDX-License-Identifier: MIT */
/*
 * test_io_drained.c - a select set's wait on an fd its owner has just
 * read dry (smarm__selset_wait_drained, select.c INV-2), as the dist
 * reader waits after each read: the first round registers the fd with
 * the node's epoll set at once, without the poll(2) a plain wait makes
 * first, and data already there (come between the read and the wait)
 * still ends the wait, through the registration; a later round, and a
 * wait with its deadline passed, poll as before.
 */
#include "harness.h"

#include "io/io.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static struct {
	int rc[8];
	size_t arm[8];
	int in_set[8];
} R;

/* A pipe with one byte in it, and a set: arm 0 a channel, arm 1 its
 * read end (the drained arm is any fd arm, not only the first). */
static void one_wait(bool drained, int k)
{
	int p[2];
	smarm_selset_t *set = NULL;
	smarm_chan_t *ch = NULL;
	char c = 'x';
	HARNESS_EQ(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	HARNESS_EQ(write(p[1], &c, 1), 1);
	HARNESS_EQ(smarm_chan_alloc(&ch, 1, NULL), 0);
	HARNESS_EQ(smarm_selset_alloc(&set), 0);
	HARNESS_EQ(smarm_selset_add_chan(set, ch, NULL), 0);
	HARNESS_EQ(smarm_selset_add_fd(set, p[0], SMARM_IO_READABLE, NULL), 0);
	R.rc[k] = drained ? smarm__selset_wait_drained(set, 1, MS(10000),
						       &R.arm[k])
			  : smarm_selset_wait(set, MS(10000), &R.arm[k]);
	R.in_set[k] = harness_fd_in_epoll(p[0]);
	/* A zero timeout polls even so: ready now, nothing to park on. */
	R.rc[k + 1] = smarm__selset_wait_drained(set, 1, 0, &R.arm[k + 1]);
	smarm_selset_free(set);
	smarm_chan_sender_free(ch);
	smarm_chan_receiver_free(ch);
	close(p[0]);
	close(p[1]);
}

static void drained_root(void *arg)
{
	(void)arg;
	one_wait(false, 0);
	one_wait(true, 2);
	smarm_selset_t *set = NULL;
	size_t arm;
	HARNESS_EQ(smarm_selset_alloc(&set), 0);
	R.rc[4] = smarm__selset_wait_drained(NULL, 0, 0, &arm);
	R.rc[5] = smarm__selset_wait_drained(set, 7, 0, &arm); /* empty */
	smarm_selset_free(set);
}

/*
 * A plain wait finds the byte with its poll and registers nothing; a
 * drained wait registers the fd without polling (so it is in the epoll
 * set) and still returns the fd's arm, the byte's event delivered by
 * the registration.
 */
START_TEST(test_io_drained_wait_registers_without_poll_and_misses_nothing)
{
	harness_checks_reset();
	memset(&R, 0, sizeof R);
	ck_assert_int_eq(harness_run(2, drained_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.arm[0], 1);
	ck_assert_int_eq(R.in_set[0], 0); /* the poll found it ready */
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.arm[1], 1);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.arm[2], 1);
	ck_assert_int_eq(R.in_set[2], 1); /* registered without a poll */
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.arm[3], 1);
	ck_assert_int_eq(R.rc[4], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[5], SMARM_EINVAL);
}
END_TEST

Suite *smarm_test_io_drained_suite(void)
{
	Suite *s = suite_create("io_drained");
	TCase *tc = tcase_create("drained");
	tcase_set_timeout(tc, 60);
	tcase_add_test(
		tc,
		test_io_drained_wait_registers_without_poll_and_misses_nothing);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(io_drained)
