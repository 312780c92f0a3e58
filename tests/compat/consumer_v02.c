/* SPDX-License-Identifier: MIT */
/*
 * consumer_v02.c - a program written and built against libsmarm 0.2: it
 * includes the SMARM_0.2 header as released (tests/compat/v0.2) and is
 * linked against a library that exports exactly 0.2's version nodes, so
 * every reference it makes carries the version a real 0.2 build records
 * (smarm_chan_len@SMARM_0.1 among them). run-compat-test.sh then runs it
 * against the current libsmarm.so.0. It uses the calls 0.3 retired or
 * changed, with the behaviour 0.2 documented, and prints TAP.
 */
#include <smarm/smarm.h>

#include <stdio.h>
#include <string.h>

static int n_test, n_failed;

static void check(int cond, const char *what)
{
	n_test++;
	if (!cond)
		n_failed++;
	printf("%s %d - %s\n", cond ? "ok" : "not ok", n_test, what);
}

#define NT 9
#define CAP 4

static struct {
	int64_t len3, len_null, len_after;
	int try_ok, try_refused, try_again;
	int sel_rc, sel_idx, selt_rc, selt_bad;
} R;

static void holder(void *arg)
{
	int v;
	smarm_chan_recv(arg, &v);
}

static void root(void *arg)
{
	smarm_chan_t *a, *b, *hold, *hc[CAP];
	smarm_pid_t p[CAP];
	int v = 7, got;
	size_t idx = 99;
	(void)arg;

	/* smarm_chan_len@SMARM_0.1: the count, or an error, in an int64_t. */
	smarm_chan_alloc(&a, sizeof v, NULL);
	smarm_chan_alloc(&b, sizeof v, NULL);
	for (int i = 0; i < 3; i++)
		smarm_chan_send(a, &v);
	R.len3 = smarm_chan_len(a);
	R.len_null = smarm_chan_len(NULL);

	/* smarm_select: the lowest ready index; a reported arm is consumed
	 * with try_recv. select_timeout gives up. */
	smarm_chan_send(b, &v);
	R.sel_rc = smarm_select((smarm_chan_t *const[]){ b, a }, 2, &idx);
	R.sel_idx = (int)idx;
	while (smarm_chan_try_recv(a, &got) == 0)
		;
	smarm_chan_try_recv(b, &got);
	R.len_after = smarm_chan_len(a);
	R.selt_rc = smarm_select_timeout((smarm_chan_t *const[]){ a, b }, 2,
					 5000000, &idx);
	R.selt_bad = smarm_select(NULL, 1, &idx);

	/* smarm_actor_try_spawn: the actor limit (CAP, the root included).
	 * Each holder parks on a channel of its own (0.2 channels have one
	 * receiver at a time). */
	for (int i = 0; i < CAP - 1; i++) {
		smarm_chan_alloc(&hc[i], sizeof v, NULL);
		R.try_ok +=
			smarm_actor_try_spawn(&p[i], holder, hc[i], NULL) == 0;
	}
	R.try_refused = smarm_actor_try_spawn(&p[CAP - 1], holder, hc[0], NULL);
	for (int i = 0; i < CAP - 1; i++) {
		smarm_chan_send(hc[i], &v);
		smarm_actor_join(p[i], NULL, NULL);
		smarm_chan_sender_free(hc[i]);
		smarm_chan_receiver_free(hc[i]);
	}
	smarm_chan_alloc(&hold, sizeof v, NULL);
	smarm_chan_send(hold, &v); /* queued first: the holder never parks */
	R.try_again = smarm_actor_try_spawn(&p[0], holder, hold, NULL);
	if (R.try_again == 0)
		smarm_actor_join(p[0], NULL, NULL);

	smarm_chan_sender_free(hold);
	smarm_chan_receiver_free(hold);
	smarm_chan_sender_free(a);
	smarm_chan_receiver_free(a);
	smarm_chan_sender_free(b);
	smarm_chan_receiver_free(b);
}

int main(void)
{
	smarm_config_t *cfg;
	smarm_node_t *node;
	int how = -1;

	printf("1..%d\n", NT);
	check(smarm_version() >= 0x000300u,
	      "runs against a libsmarm of ABI 0.3 or later");
	if (smarm_config_alloc(&cfg) != 0 ||
	    smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2) != 0 ||
	    smarm_config_set_int(cfg, SMARM_OPT_MAX_ACTORS, CAP) != 0 ||
	    smarm_node_open(&node, cfg) != 0 ||
	    smarm_node_run(node, root, NULL, &how, NULL) != 0) {
		printf("Bail out! could not run a node\n");
		return 1;
	}
	smarm_config_free(cfg);
	smarm_node_close(node);
	check(how == SMARM_EXIT_NORMAL, "the root ended normally");
	check(R.len3 == 3 && R.len_after == 0,
	      "smarm_chan_len (int64_t form) counts");
	check(R.len_null == SMARM_EINVAL,
	      "smarm_chan_len(NULL) is SMARM_EINVAL in the count");
	check(R.sel_rc == 0 && R.sel_idx == 0,
	      "smarm_select reports the lowest ready arm");
	check(R.selt_rc == SMARM_ETIMEDOUT,
	      "smarm_select_timeout gives up with SMARM_ETIMEDOUT");
	check(R.selt_bad == SMARM_EINVAL, "smarm_select(NULL) is SMARM_EINVAL");
	check(R.try_ok == CAP - 1 && R.try_refused == SMARM_EATCAPACITY,
	      "smarm_actor_try_spawn fills to the limit, then refuses");
	check(R.try_again == 0,
	      "smarm_actor_try_spawn works again after joins");
	return n_failed != 0;
}
