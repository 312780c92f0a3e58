/* SPDX-License-Identifier: MIT */
/*
 * foreign_producer.c - plain OS threads feed actors and wait for their
 * answers without polling, using only <smarm/smarm.h>.
 *
 * A host often has threads libsmarm did not create: a GUI loop, a
 * library's callback thread, a signal thread. Channel calls work from any
 * thread. This program starts four before the node runs:
 *
 *   producer thread  (N_PRODUCERS of them) sends its share of the numbers
 *                    1..N_JOBS into the jobs channel, then frees its
 *                    sender reference; the last one closes the channel;
 *   squarer          receives numbers until SMARM_ECLOSED and sends each
 *                    square to the results channel. SQ_ACTORS of them are
 *                    actors, one is a plain thread blocking in
 *                    smarm_chan_recv_timeout(): all are receivers of the
 *                    same channel, each with its own reference, and each
 *                    number goes to exactly one of them;
 *   collector thread waits for results the way a foreign event loop
 *                    would: poll(2) on the channel's notify fd
 *                    (smarm_chan_notify_fd), then drains it with
 *                    smarm_chan_try_recv(). When the channel is closed
 *                    and drained it ends the run from outside with
 *                    smarm_node_stop(), as a host's shutdown path would.
 *
 * The root actor spawns the squarer actors and then waits to be stopped.
 * Every wait is bounded (TIMEOUT). Exit status 0 when every number was
 * squared exactly once and the run was stopped from outside; otherwise a
 * message on stderr and status 1.
 *
 * Build: cc foreign_producer.c $(pkg-config --cflags --libs smarm) -pthread
 * Run:   ./foreign_producer
 */
#include <smarm/smarm.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N_PRODUCERS 2
#define SQ_ACTORS 3
#define N_JOBS 20000 /* a multiple of N_PRODUCERS */
#define TIMEOUT_MS 10000
#define TIMEOUT (TIMEOUT_MS * 1000000ull) /* only a broken run waits */

/* A call that must succeed: otherwise say which, and why, and give up. */
#define CHECK(call)                                                            \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (rc_ != 0) {                                                \
			fprintf(stderr, "foreign_producer:%d: %s: %s\n",       \
				__LINE__, #call, smarm_strerror(rc_));         \
			exit(1);                                               \
		}                                                              \
	} while (0)

static void fail(const char *what)
{
	fprintf(stderr, "foreign_producer: %s\n", what);
	exit(1);
}

struct result {
	long n, square;
};

static smarm_node_t *node;
static smarm_chan_t *jobs;	       /* producer threads -> squarers: long */
static smarm_chan_t *results;	       /* squarers -> collector thread */
static unsigned char seen[N_JOBS + 1]; /* the collector's */

/*
 * Each squarer owns one receiver reference of jobs and one sender
 * reference of results, taken for it by main().
 */
static void square_all(void)
{
	long n;
	int rc;
	for (;;) {
		/* An actor parks here; a plain thread blocks in the kernel. */
		rc = smarm_chan_recv_timeout(jobs, &n, TIMEOUT);
		if (rc == SMARM_ECLOSED)
			break; /* every producer is done, and all is taken */
		CHECK(rc);
		struct result r = { n, n * n };
		CHECK(smarm_chan_send(results, &r));
	}
	CHECK(smarm_chan_receiver_free(jobs));
	CHECK(smarm_chan_sender_free(results));
}

static void squarer_actor(void *arg)
{
	(void)arg;
	square_all();
}

static void *squarer_thread(void *arg)
{
	(void)arg;
	square_all();
	return NULL;
}

static void *producer_thread(void *arg)
{
	long first = (long)(intptr_t)arg * (N_JOBS / N_PRODUCERS) + 1;
	for (long n = first; n < first + N_JOBS / N_PRODUCERS; n++)
		CHECK(smarm_chan_send(jobs, &n)); /* wakes a waiting squarer */
	CHECK(smarm_chan_sender_free(jobs));
	return NULL;
}

static void *collector_thread(void *arg)
{
	struct result r;
	long count = 0;
	uint64_t ticks;
	int fd, rc;

	(void)arg;
	CHECK(smarm_chan_notify_fd(results, &fd));
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, TIMEOUT_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("no result within the timeout");
		/* 1. Reset the fd (the reader is this thread alone) ... */
		if (read(fd, &ticks, sizeof ticks) != sizeof ticks)
			fail("cannot read the notify fd");
		/* 2. ... then drain: no element sent meanwhile is missed. */
		while ((rc = smarm_chan_try_recv(results, &r)) == 0) {
			if (r.n < 1 || r.n > N_JOBS || r.square != r.n * r.n)
				fail("a wrong result");
			if (seen[r.n]++)
				fail("a number was squared twice");
			count++;
		}
		if (rc == SMARM_ECLOSED)
			break; /* every squarer is done: all results are in */
		if (rc != SMARM_EAGAIN)
			CHECK(rc);
	}
	if (count != N_JOBS)
		fail("some numbers were never squared");
	/* The last receiver reference: this also closes fd. */
	CHECK(smarm_chan_receiver_free(results));
	CHECK(smarm_node_stop(node)); /* ends the run from outside */
	return NULL;
}

static void root(void *arg)
{
	(void)arg;
	for (int i = 0; i < SQ_ACTORS; i++)
		CHECK(smarm_actor_spawn(NULL, squarer_actor, NULL, NULL));
	/*
	 * Wait for the collector's smarm_node_stop(), which ends this actor
	 * in here. The sleep only bounds that wait: if it runs out, nobody
	 * stopped the run.
	 */
	CHECK(smarm_actor_sleep(3 * TIMEOUT));
	fail("the run was not stopped from outside");
}

int main(void)
{
	pthread_t th[N_PRODUCERS + 2];
	smarm_config_t *cfg;
	int how, nth = 0;

	CHECK(smarm_config_alloc(&cfg));
	CHECK(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2));
	CHECK(smarm_node_open(&node, cfg));
	smarm_config_free(cfg);

	/*
	 * Each alloc gives one sender and one receiver reference; take the
	 * rest now, so each holder below owns exactly one of each kind it
	 * uses and frees it when done (main keeps none).
	 */
	CHECK(smarm_chan_alloc(&jobs, sizeof(long), NULL));
	CHECK(smarm_chan_alloc(&results, sizeof(struct result), NULL));
	for (int i = 1; i < N_PRODUCERS; i++)
		CHECK(smarm_chan_sender_dup(jobs));
	for (int i = 1; i < SQ_ACTORS + 1; i++) { /* + the squarer thread */
		CHECK(smarm_chan_receiver_dup(jobs));
		CHECK(smarm_chan_sender_dup(results));
	}

	/* Threads may send and receive before the node runs. */
	for (intptr_t i = 0; i < N_PRODUCERS; i++)
		if (pthread_create(&th[nth++], NULL, producer_thread,
				   (void *)i) != 0)
			fail("pthread_create failed");
	if (pthread_create(&th[nth++], NULL, squarer_thread, NULL) != 0 ||
	    pthread_create(&th[nth++], NULL, collector_thread, NULL) != 0)
		fail("pthread_create failed");

	CHECK(smarm_node_run(node, root, NULL, &how, NULL));
	for (int i = 0; i < nth; i++)
		if (pthread_join(th[i], NULL) != 0)
			fail("pthread_join failed");
	if (how != SMARM_EXIT_STOPPED)
		fail("the root was not stopped by smarm_node_stop");
	CHECK(smarm_node_close(node));
	printf("foreign_producer: %d numbers from %d threads, squared once "
	       "each by %d actors and a thread; run stopped from outside\n",
	       N_JOBS, N_PRODUCERS, SQ_ACTORS);
	return 0;
}
