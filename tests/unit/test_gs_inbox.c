/* SPDX-License-Identifier: MIT */
/*
 * test_gs_inbox.c - a hibernated server holds no inbox channel
 * (behaviour/gen_server.c INV-7): its idle inbox is freed as it
 * hibernates (msg/chan.c smarm__chan_free_idle, tested here case by
 * case: a channel with something queued, another reference, a notify
 * fd or its own bound is kept; an idle one is freed and its handle
 * refused), and made again by the first sender or by the server as it
 * wakes; counted in the channel pool's live cells (core/handle.h) over
 * GS_N counter servers that hibernate at every wait (the shipped
 * counter built again without -lsmarm: tests/meson.build).
 */
#include "harness.h"

#include "behaviour/gen_server.h"

#include <smarm/smarm_plugin.h>

#include <stdlib.h>

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

#define GS_N 64

static int64_t hibs(void)
{
	return harness_actor_stat(SMARM_STAT_HIBERNATIONS);
}

/* Wait until the node counts at least n hibernations. */
static bool hibs_reach(int64_t n)
{
	return harness_await_stat_to(smarm_node_current(),
				     SMARM_STAT_HIBERNATIONS, n, true);
}

/* Channel cells in use now, beyond base. */
static int64_t cells_over(uint64_t base)
{
	return (int64_t)smarm__hpool_live(&smarm__chan_pool) - (int64_t)base;
}

static void cells_root(void *arg)
{
	const smarm_behaviour_t *b = arg;
	smarm_pid_t *pids = calloc(GS_N, sizeof *pids);
	smarm_server_t *s;
	uint64_t base;
	int64_t before, got;
	HARNESS_CHECK(pids != NULL);
	if (pids == NULL)
		return;
	before = hibs();
	base = smarm__hpool_live(&smarm__chan_pool);
	for (int i = 0; i < GS_N; i++) {
		HARNESS_EQ(smarm_server_start(b, "hibernate", NULL, &s), 0);
		HARNESS_EQ(smarm_server_pid(s, &pids[i]), 0);
		smarm_server_free(s);
	}
	HARNESS_CHECK(hibs_reach(before + GS_N));
	/* Each held its inbox until it hibernated (GS_N kept before). */
	if (cells_over(base) >= GS_N / 4)
		fprintf(stderr, "%lld channel cells more\n",
			(long long)cells_over(base));
	HARNESS_CHECK(cells_over(base) < GS_N / 4);
	/* Woken by a call (the inbox made again by the caller), answered,
	 * hibernated again: none kept either. */
	before = hibs();
	for (int i = 0; i < GS_N; i++) {
		got = 0;
		HARNESS_EQ(smarm_server_open(NULL, b, pids[i], &s), 0);
		HARNESS_EQ(smarm_server_callv(s, "add", MS(5000), &got,
					      (int64_t)(i + 1)),
			   0);
		HARNESS_EQ(got, i + 1);
		smarm_server_free(s);
	}
	HARNESS_CHECK(hibs_reach(before + GS_N));
	HARNESS_CHECK(cells_over(base) < GS_N / 4);
	for (int i = 0; i < GS_N; i++) {
		HARNESS_EQ(smarm_server_open(NULL, b, pids[i], &s), 0);
		HARNESS_EQ(smarm_server_shutdown(s, MS(5000), NULL), 0);
		smarm_server_free(s);
	}
	free(pids);
}

START_TEST(test_hibernated_server_holds_no_channel)
{
	char msg[256];
	smarm_plugin_t *pl = NULL;
	const smarm_behaviour_t *b = NULL;
	harness_checks_reset();
	ck_assert_msg(smarm_plugin_open(getenv("SMARM_TEST_GS_COUNTER"), &pl,
					msg, sizeof msg) == 0,
		      "%s", msg);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "counter", &b), 0);
	ck_assert_int_eq(harness_run(4, cells_root, (void *)b),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	smarm_plugin_close(pl);
}
END_TEST

Suite *smarm_test_gs_inbox_suite(void)
{
	Suite *s = suite_create("gs_inbox");
	TCase *tc = tcase_create("inbox");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_chan_free_idle);
	tcase_add_test(tc, test_hibernated_server_holds_no_channel);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(gs_inbox)
