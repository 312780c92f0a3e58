/* SPDX-License-Identifier: MIT */
/*
 * foreign_producer.c - a plain OS thread feeds actors, and waits for
 * their answer, without polling.
 *
 * A host often has threads libsmarm did not create: a GUI loop, a
 * library's callback thread, a signal thread. This program starts one
 * before the node runs. It sends N jobs into a channel (smarm_chan_send
 * works from any thread and wakes a parked receiver), then closes it by
 * freeing its sender reference. Actors inside the node square each job
 * and send the results back on a second channel, which the plain thread
 * drains with a blocking, bounded receive. When it has every answer it
 * ends the run from outside with smarm_node_stop, the way a host's
 * shutdown path would.
 *
 * Build: cc foreign_producer.c $(pkg-config --cflags --libs smarm) -pthread
 * Run:   ./foreign_producer [N]      prints "foreign_producer: ok ..."
 */
#include <smarm/smarm.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define SQUARERS 4

struct app {
	smarm_node_t *node;
	smarm_chan_t *jobs;    /* thread -> actors: long */
	smarm_chan_t *results; /* actors -> thread: long */
	long n;
	long sum;      /* what the thread received */
	long received; /* how many */
	int failed;
};

/* ------------------------------------------------------- the actors */

/* Each squarer owns one sender reference of results. */
static void squarer(void *arg)
{
	struct app *a = arg;
	long v;
	while (smarm_chan_recv(a->jobs, &v) == 0) {
		long sq = v * v;
		if (smarm_chan_send(a->results, &sq) != 0)
			break;
	}
	smarm_chan_sender_free(a->results);
}

static void root(void *arg)
{
	struct app *a = arg;
	smarm_pid_t p[SQUARERS];
	for (int i = 0; i < SQUARERS; i++) {
		if (smarm_chan_sender_dup(a->results) != 0 ||
		    smarm_actor_spawn(&p[i], squarer, a, NULL) != 0)
			smarm_actor_crash(1);
	}
	smarm_chan_sender_free(a->results); /* the squarers hold the rest */
	for (int i = 0; i < SQUARERS; i++)
		smarm_actor_join(p[i], NULL, NULL);
	/* Park until the host stops the run. */
	smarm_actor_sleep(SMARM_NO_TIMEOUT);
}

/* ------------------------------------------------- the plain thread */

static void *host_thread(void *arg)
{
	struct app *a = arg;
	for (long i = 1; i <= a->n; i++) {
		if (smarm_chan_send(a->jobs, &i) != 0) {
			a->failed = 1;
			break;
		}
	}
	smarm_chan_sender_free(a->jobs); /* closes: the squarers drain, end */

	/* Wait for every answer; a bounded wait never hangs the host. */
	for (;;) {
		long sq;
		int rc =
			smarm_chan_recv_timeout(a->results, &sq, 5000000000ull);
		if (rc == SMARM_ECLOSED)
			break; /* every squarer is done */
		if (rc != 0) {
			fprintf(stderr, "foreign_producer: recv: %s\n",
				smarm_strerror(rc));
			a->failed = 1;
			break;
		}
		a->sum += sq;
		a->received++;
	}
	if (smarm_node_stop(a->node) != 0)
		a->failed = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	struct app a = { .n = argc > 1 ? atol(argv[1]) : 10000 };
	smarm_config_t *cfg;
	pthread_t th;
	int how = -1;
	long want;

	if (a.n < 1 || smarm_config_alloc(&cfg) != 0 ||
	    smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2) != 0 ||
	    smarm_node_open(&a.node, cfg) != 0 ||
	    smarm_chan_alloc(&a.jobs, sizeof(long), NULL) != 0 ||
	    smarm_chan_alloc(&a.results, sizeof(long), NULL) != 0)
		return 2;
	smarm_config_free(cfg);
	if (pthread_create(&th, NULL, host_thread, &a) != 0)
		return 2;
	smarm_node_run(a.node, root, &a, &how, NULL);
	pthread_join(th, NULL);
	smarm_chan_receiver_free(a.jobs);
	smarm_chan_receiver_free(a.results);
	smarm_node_close(a.node);

	want = a.n * (a.n + 1) * (2 * a.n + 1) / 6;
	if (a.failed || a.received != a.n || a.sum != want ||
	    how != SMARM_EXIT_STOPPED) {
		printf("foreign_producer: FAILED: %ld of %ld answers, sum %ld "
		       "(want %ld), root %d\n",
		       a.received, a.n, a.sum, want, how);
		return 1;
	}
	printf("foreign_producer: ok, %ld jobs from a plain thread, sum of "
	       "squares %ld, run stopped from outside\n",
	       a.n, a.sum);
	return 0;
}
