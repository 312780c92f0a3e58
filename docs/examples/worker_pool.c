/* SPDX-License-Identifier: MIT */
/*
 * worker_pool.c - a pool of worker actors sharing ONE jobs channel, using
 * only <smarm/smarm.h>.
 *
 * A channel may have many receivers: each element goes to exactly one of
 * them, and receivers waiting on an empty channel are served in the order
 * they started waiting. So a pool needs no dispatcher: every worker takes
 * its own receiver reference (smarm_chan_receiver_dup) and receives from
 * the same channel.
 *
 *   producer   sends N_JOBS jobs, then frees its sender reference: that
 *              was the last one, so the jobs channel is closed;
 *   worker     (POOL_SIZE of them) receives jobs until SMARM_ECLOSED
 *              (closed and drained), sends each result on a second
 *              channel, frees its references and ends;
 *   root       collects results until that channel is closed too (every
 *              worker freed its sender reference), checks that each job
 *              was done exactly once and correctly, and joins everyone.
 *
 * The node runs 4 worker threads (SMARM_OPT_WORKERS), so the pool's
 * actors run in parallel where there are cores. Exit status 0 when every
 * check passed; otherwise a message on stderr and status 1.
 *
 * Build: cc worker_pool.c $(pkg-config --cflags --libs smarm)
 * Run:   ./worker_pool
 */
#include <smarm/smarm.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define POOL_SIZE 6
#define N_JOBS 10000
#define TIMEOUT (10 * 1000000000ull) /* 10 s: only a broken run waits */

/* A call that must succeed: otherwise say which, and why, and give up. */
#define CHECK(call)                                                            \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (rc_ != 0) {                                                \
			fprintf(stderr, "worker_pool:%d: %s: %s\n", __LINE__,  \
				#call, smarm_strerror(rc_));                   \
			exit(1);                                               \
		}                                                              \
	} while (0)

static void fail(const char *what)
{
	fprintf(stderr, "worker_pool: %s\n", what);
	exit(1);
}

struct job {
	uint32_t id;
};

struct result {
	uint32_t id;
	uint32_t worker;
	uint64_t value;
};

static smarm_chan_t *jobs;    /* producer -> workers */
static smarm_chan_t *results; /* workers -> root */

/* The work: steps of the Collatz sequence from id + 1 down to 1. */
static uint64_t work(uint32_t id)
{
	uint64_t x = (uint64_t)id + 1, steps = 0;
	while (x != 1) {
		x = x % 2 ? 3 * x + 1 : x / 2;
		steps++;
	}
	return steps;
}

static void producer(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < N_JOBS; i++) {
		struct job j = { .id = i };
		CHECK(smarm_chan_send(jobs, &j));
	}
	/* The last sender reference: the workers drain, then ECLOSED. */
	CHECK(smarm_chan_sender_free(jobs));
}

static void worker(void *arg)
{
	struct job j;
	int rc;

	for (;;) {
		rc = smarm_chan_recv_timeout(jobs, &j, TIMEOUT);
		if (rc == SMARM_ECLOSED)
			break; /* closed and drained: the pool is done */
		CHECK(rc);
		struct result r = { .id = j.id,
				    .worker = (uint32_t)(uintptr_t)arg,
				    .value = work(j.id) };
		CHECK(smarm_chan_send(results, &r));
	}
	/* Both references were taken for this worker by the root. */
	CHECK(smarm_chan_receiver_free(jobs));
	CHECK(smarm_chan_sender_free(results));
}

static void root(void *arg)
{
	static unsigned char seen[N_JOBS];
	long per_worker[POOL_SIZE] = { 0 };
	smarm_pid_t pool[POOL_SIZE], prod;
	struct result r;
	int how, rc;
	long count = 0;

	(void)arg;
	/* Each alloc gives the root one sender and one receiver reference. */
	CHECK(smarm_chan_alloc(&jobs, sizeof(struct job), NULL));
	CHECK(smarm_chan_alloc(&results, sizeof(struct result), NULL));
	for (uintptr_t i = 0; i < POOL_SIZE; i++) {
		CHECK(smarm_chan_receiver_dup(jobs));  /* the worker's own */
		CHECK(smarm_chan_sender_dup(results)); /* likewise */
		CHECK(smarm_actor_spawn(&pool[i], worker, (void *)i, NULL));
	}
	/* The root receives no job, and sends no result. */
	CHECK(smarm_chan_receiver_free(jobs));
	CHECK(smarm_chan_sender_free(results));
	/* The producer takes over the root's jobs sender reference. */
	CHECK(smarm_actor_spawn(&prod, producer, NULL, NULL));

	for (;;) {
		rc = smarm_chan_recv_timeout(results, &r, TIMEOUT);
		if (rc == SMARM_ECLOSED)
			break; /* every worker has ended its part */
		CHECK(rc);
		if (r.id >= N_JOBS || r.worker >= POOL_SIZE)
			fail("a result names no job or no worker");
		if (seen[r.id]++)
			fail("a job was done twice");
		if (r.value != work(r.id))
			fail("a result is wrong");
		per_worker[r.worker]++;
		count++;
	}
	if (count != N_JOBS)
		fail("some jobs were never done");

	CHECK(smarm_actor_join(prod, &how, NULL));
	if (how != SMARM_EXIT_NORMAL)
		fail("the producer did not end normally");
	for (int i = 0; i < POOL_SIZE; i++) {
		CHECK(smarm_actor_join(pool[i], &how, NULL));
		if (how != SMARM_EXIT_NORMAL)
			fail("a worker did not end normally");
	}
	CHECK(smarm_chan_receiver_free(results)); /* frees the channel */

	/*
	 * How the jobs spread varies from run to run; only the sum is set.
	 * A worker that is running takes the next job without parking, so
	 * with jobs this cheap a few workers may do nearly all of them.
	 */
	printf("worker_pool: %ld jobs, each done once; per worker:", count);
	for (int i = 0; i < POOL_SIZE; i++)
		printf(" %ld", per_worker[i]);
	printf("\n");
}

int main(void)
{
	smarm_config_t *cfg;
	smarm_node_t *node;
	int how;

	CHECK(smarm_config_alloc(&cfg));
	CHECK(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 4));
	CHECK(smarm_node_open(&node, cfg));
	smarm_config_free(cfg); /* the node keeps its own copy */

	CHECK(smarm_node_run(node, root, NULL, &how, NULL));
	if (how != SMARM_EXIT_NORMAL)
		fail("the root actor did not end normally");
	CHECK(smarm_node_close(node));
	return 0;
}
