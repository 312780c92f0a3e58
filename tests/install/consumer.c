/* SPDX-License-Identifier: MIT */
/*
 * consumer.c - the smallest embedder, built against an installed libsmarm
 * through pkg-config by run-install-test.sh. It prints a fixed text the
 * script compares:
 *
 *   smarm <version>
 *   sum 5050
 *   root 0
 */
#include <smarm/smarm.h>

#include <stdio.h>

#define N 100

static smarm_chan_t *results;

static void worker(void *arg)
{
	int v = (int)(intptr_t)arg;
	smarm_chan_send(results, &v);
}

static void root(void *arg)
{
	long *sum = arg;
	int v;
	if (smarm_chan_alloc(&results, sizeof v, NULL) != 0)
		smarm_actor_crash(1);
	for (int i = 1; i <= N; i++) {
		if (smarm_chan_sender_dup(results) != 0 ||
		    smarm_actor_spawn(NULL, worker, (void *)(intptr_t)i,
				      NULL) != 0)
			smarm_actor_crash(2);
	}
	smarm_chan_sender_free(results);
	for (int i = 1; i <= N; i++) {
		if (smarm_chan_recv(results, &v) != 0)
			smarm_actor_crash(3);
		*sum += v;
	}
	smarm_chan_receiver_free(results);
}

int main(void)
{
	smarm_config_t *cfg;
	smarm_node_t *node;
	long sum = 0;
	int how = -1;
	intptr_t reason = 0;

	if (smarm_version() != SMARM_VERSION_HEX) {
		fprintf(stderr, "header/library version mismatch\n");
		return 1;
	}
	if (smarm_config_alloc(&cfg) != 0 ||
	    smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2) != 0 ||
	    smarm_node_open(&node, cfg) != 0) {
		fprintf(stderr, "node setup failed\n");
		return 1;
	}
	smarm_config_free(cfg);
	if (smarm_node_run(node, root, &sum, &how, &reason) != 0) {
		fprintf(stderr, "run failed\n");
		return 1;
	}
	smarm_node_close(node);
	printf("smarm %s\n", smarm_version_string());
	printf("sum %ld\n", sum);
	printf("root %d\n", how);
	return how == SMARM_EXIT_NORMAL ? 0 : 1;
}
