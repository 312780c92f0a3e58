/* SPDX-License-Identifier: MIT */
/*
 * smarm-demo.c - a guided tour of libsmarm (public API only), in three
 * steps: (1) a pipeline, producer -> N workers -> collector, where the
 * workers share a green mutex, the collector waits with select and a
 * timeout, and a timed send is a watchdog that gets cancelled; (2) a
 * supervisor-like parent restarting a crashing child, learning each
 * outcome through join; (3) a timed send waking the root, which stops a
 * parked server whose cleanup handler then runs; (4) runaway loops with no
 * safe point, one per worker, preempted by the runtime's signal so that
 * the root's short sleep still ends on time, then stopped.
 *
 *   smarm-demo [workers]      (worker threads, default 2)
 *
 * Only the root prints, apart from actors it is joining, so the output is
 * the same on every run. Exit status 0 when every check passed, else 1; a
 * failing setup call (must()) ends the program at once.
 *
 * Ownership: each step frees the channels it allocated; a sender reference
 * handed to an actor is that actor's to free. Locking: pipeline.total is
 * guarded by pipeline.lock; every other shared field has one writer and is
 * read by the root after a join.
 */

#include <smarm/smarm.h>

#include <stdio.h>
#include <stdlib.h>

#define N_WORKERS 3
#define N_JOBS 12
#define MS(x) ((uint64_t)(x)*1000000ull)

static int checks_run;	  /* root only */
static int checks_failed; /* root only */

static void check(bool ok, const char *what)
{
	checks_run++;
	checks_failed += !ok;
	printf("    [%s] %s\n", ok ? "ok" : "FAILED", what);
}

/* A setup call that cannot fail in a healthy run; give up if it does. */
static void must(int rc, const char *what)
{
	if (rc == 0)
		return;
	fprintf(stderr, "smarm-demo: %s: %s\n", what, smarm_err_name(rc));
	exit(1);
}

static const char *exit_name(int how)
{
	static const char *const names[] = { "exited normally", "crashed",
					     "was stopped" };
	return how >= 0 && how <= 2 ? names[how] : "ended oddly";
}

/* Drop the receiver reference, and the sender reference if still held. */
static void chan_free(smarm_chan_t *ch, bool sender)
{
	if (sender)
		smarm_chan_sender_free(ch);
	smarm_chan_receiver_free(ch);
}

/* ---- 1. pipeline ------------------------------------------------------ */

struct pipeline {
	smarm_chan_t *jobs[N_WORKERS]; /* producer -> worker i (int) */
	smarm_chan_t *results;	       /* workers -> collector (long) */
	smarm_chan_t *watchdog;	       /* a timed send fires if we stall */
	smarm_mutex_t *lock;	       /* guards total */
	long total;		       /* sum of squares, under lock */
	int handled[N_WORKERS];	       /* jobs worker i did; its own */
	long collected;		       /* collector's sum */
	int received;		       /* collector's result count */
	bool waited;		       /* collector's select timed out */
	bool stalled;		       /* the watchdog fired */
};

struct worker_arg {
	struct pipeline *p;
	int id;
};

/* Owns the root's sender reference of every jobs channel. */
static void producer(void *arg)
{
	struct pipeline *p = arg;

	smarm_actor_sleep(MS(50)); /* the collector waits meanwhile */
	for (int n = 1; n <= N_JOBS; n++)
		smarm_chan_send(p->jobs[n % N_WORKERS], &n);
	for (int i = 0; i < N_WORKERS; i++)
		smarm_chan_sender_free(p->jobs[i]); /* closed: workers end */
}

/* Owns one sender reference of results. */
static void worker(void *arg)
{
	struct worker_arg *w = arg;
	struct pipeline *p = w->p;
	int n;

	while (smarm_chan_recv(p->jobs[w->id], &n) == 0) {
		long square = (long)n * n;
		if (smarm_mutex_lock(p->lock, MS(1000)) == 0) {
			p->total += square;
			smarm_mutex_unlock(p->lock);
		}
		p->handled[w->id]++;
		smarm_chan_send(p->results, &square);
	}
	smarm_chan_sender_free(p->results);
}

static void collect(struct pipeline *p, smarm_selset_t *set)
{
	size_t ready;
	long square;

	for (;;) {
		int rc = smarm_selset_wait(set, MS(10), &ready);
		if (rc == SMARM_ETIMEDOUT) {
			if (!p->waited)
				printf("    collector: nothing after 10 ms, "
				       "still waiting\n");
			p->waited = true;
			continue;
		}
		if (rc != 0 || ready == 1) {
			p->stalled = true;
			return;
		}
		if (smarm_chan_try_recv(p->results, &square) != 0)
			return; /* closed and drained: the workers are done */
		p->collected += square;
		p->received++;
	}
}

static void collector(void *arg)
{
	struct pipeline *p = arg;
	smarm_selset_t *set = NULL;

	if (smarm_selset_alloc(&set) != 0 ||
	    smarm_selset_add_chan(set, p->results, NULL) != 0 ||
	    smarm_selset_add_chan(set, p->watchdog, NULL) != 0) {
		p->stalled = true;
	} else {
		collect(p, set);
	}
	smarm_selset_free(set);
}

static void step_pipeline(void)
{
	struct pipeline p = { 0 };
	struct worker_arg wa[N_WORKERS];
	smarm_pid_t pids[N_WORKERS + 2];
	smarm_timer_t timer;

	printf("1. pipeline: producer -> %d workers -> collector, %d jobs\n",
	       N_WORKERS, N_JOBS);
	must(smarm_mutex_alloc(&p.lock), "mutex");
	must(smarm_chan_alloc(&p.results, sizeof(long), NULL), "channel");
	must(smarm_chan_alloc(&p.watchdog, 1, NULL), "channel");
	must(smarm_chan_send_after(p.watchdog, "!", MS(5000), &timer),
	     "watchdog");
	must(smarm_actor_spawn(&pids[0], collector, &p, NULL), "spawn");
	for (int i = 0; i < N_WORKERS; i++) {
		wa[i] = (struct worker_arg){ &p, i };
		must(smarm_chan_alloc(&p.jobs[i], sizeof(int), NULL),
		     "channel");
		must(smarm_chan_sender_dup(p.results), "sender_dup");
		must(smarm_actor_spawn(&pids[1 + i], worker, &wa[i], NULL),
		     "spawn");
	}
	smarm_chan_sender_free(p.results); /* the workers hold the rest */
	must(smarm_actor_spawn(&pids[N_WORKERS + 1], producer, &p, NULL),
	     "spawn");
	for (int i = N_WORKERS + 1; i >= 0; i--)
		smarm_actor_join(pids[i], NULL, NULL);

	for (int i = 0; i < N_WORKERS; i++)
		printf("    worker %d handled %d jobs\n", i, p.handled[i]);
	printf("    collector: %d results, sum of squares %ld\n", p.received,
	       p.collected);
	check(p.waited, "collector's select timed out while producer slept");
	check(p.received == N_JOBS && p.collected == 650,
	      "collector got every result (1^2 + ... + 12^2 = 650)");
	check(p.total == 650, "mutex-guarded total agrees");
	check(!p.stalled && smarm_timer_cancel(timer) == 0,
	      "watchdog cancelled before it fired");
	for (int i = 0; i < N_WORKERS; i++)
		chan_free(p.jobs[i], false);
	chan_free(p.results, false);
	chan_free(p.watchdog, true);
	smarm_mutex_free(p.lock);
}

/* ---- 2. supervisor ---------------------------------------------------- */

static void flaky_child(void *arg)
{
	int attempt = *(int *)arg;

	if (attempt < 3) {
		printf("    child #%d: bad state, crashing\n", attempt);
		smarm_actor_crash(40 + attempt);
	}
	printf("    child #%d: work done\n", attempt);
}

static void step_supervisor(void)
{
	int attempt = 0;
	int how = -1;
	intptr_t reason = 0;

	printf("2. supervisor: restart a crashing child, at most 5 times\n");
	while (attempt < 5 && how != SMARM_EXIT_NORMAL) {
		smarm_pid_t child;
		attempt++;
		if (smarm_actor_spawn(&child, flaky_child, &attempt, NULL) ||
		    smarm_actor_join(child, &how, &reason))
			break;
		printf("    supervisor: child %s (reason %ld)%s\n",
		       exit_name(how), (long)reason,
		       how == SMARM_EXIT_CRASHED ? ", restarting" : "");
	}
	check(how == SMARM_EXIT_NORMAL && attempt == 3,
	      "child crashed twice, then succeeded on attempt 3");
}

/* ---- 3. timed send, stop and cleanup ---------------------------------- */

struct server {
	smarm_chan_t *inbox; /* never written: the server parks for good */
	smarm_chan_t *ready; /* server -> root: cleanup handler pushed */
	bool cleaned;	     /* set by the cleanup handler */
};

static void server_cleanup(void *arg)
{
	struct server *s = arg;

	printf("    server: cleanup handler runs (releasing resources)\n");
	s->cleaned = true;
}

static void server(void *arg)
{
	struct server *s = arg;
	int req = 1;

	smarm_cleanup_push(server_cleanup, s);
	smarm_chan_send(s->ready, &req);
	while (smarm_chan_recv(s->inbox, &req) == 0)
		; /* serve requests; none ever come */
}

static void step_stop(void)
{
	struct server s = { 0 };
	smarm_chan_t *alarm = NULL;
	smarm_pid_t pid;
	int how = -1;
	int got = 0;
	int msg = 7;

	printf("3. a timed send tells the root to stop a parked server\n");
	must(smarm_chan_alloc(&s.inbox, sizeof(int), NULL), "channel");
	must(smarm_chan_alloc(&s.ready, sizeof(int), NULL), "channel");
	must(smarm_chan_alloc(&alarm, sizeof(int), NULL), "channel");
	must(smarm_actor_spawn(&pid, server, &s, NULL), "spawn");
	must(smarm_chan_recv(s.ready, &got), "server start");

	uint64_t t0 = smarm_now_ns();
	must(smarm_chan_send_after(alarm, &msg, MS(20), NULL), "timed send");
	printf("    root: server is parked; alarm set for 20 ms\n");
	int rc = smarm_chan_recv_timeout(alarm, &got, MS(2000));
	check(rc == 0 && got == 7 && smarm_now_ns() - t0 >= MS(20),
	      "timed message 7 arrived, not before 20 ms");
	printf("    root: asking the server to stop\n");
	smarm_actor_stop(pid);
	smarm_actor_join(pid, &how, NULL);
	printf("    root: server %s\n", exit_name(how));
	check(how == SMARM_EXIT_STOPPED && s.cleaned,
	      "server ended as stopped, after its cleanup handler");
	chan_free(s.inbox, true);
	chan_free(s.ready, true);
	chan_free(alarm, true);
}

/* A loop that never calls the runtime: only a signal can take its CPU. */
static void runaway(void *arg)
{
	volatile uint64_t *sink = arg;
	uint64_t x = 1;
	for (;;) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		*sink = x;
	}
}

static void step_runaway(int workers)
{
	smarm_pid_t pid[64];
	volatile uint64_t sink[64];
	int stopped = 0;

	printf("4. runaway loops with no safe point, one per worker (%d)\n",
	       workers);
	for (int i = 0; i < workers; i++)
		must(smarm_actor_spawn(&pid[i], runaway, (void *)&sink[i],
				       NULL),
		     "spawn");
	uint64_t t0 = smarm_now_ns();
	must(smarm_actor_sleep(MS(10)), "sleep");
	uint64_t slept = smarm_now_ns() - t0;
	printf("    root: woke from a 10 ms sleep; stopping the loops\n");
	check(slept < MS(500), "the root's sleep ended on time (preemption)");
	for (int i = 0; i < workers; i++) {
		int how = -1;
		smarm_actor_stop(pid[i]);
		smarm_actor_join(pid[i], &how, NULL);
		stopped += how == SMARM_EXIT_STOPPED;
	}
	check(stopped == workers, "every loop ended as stopped");
}

static void demo_root(void *arg)
{
	int workers = (int)(intptr_t)arg;
	step_pipeline();
	step_supervisor();
	step_stop();
	step_runaway(workers);
}

int main(int argc, char **argv)
{
	long workers = argc > 1 ? strtol(argv[1], NULL, 10) : 2;
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int how = -1;
	int rc;

	if ((rc = smarm_config_alloc(&cfg)) != 0 ||
	    (rc = smarm_config_set_int(cfg, SMARM_OPT_WORKERS, workers)) ||
	    (rc = smarm_node_open(&node, cfg)) != 0) {
		fprintf(stderr,
			"smarm-demo: %s\nusage: smarm-demo "
			"[workers 1..64]\n",
			smarm_strerror(rc));
		smarm_config_free(cfg);
		return 2;
	}
	smarm_config_free(cfg);
	printf("libsmarm %s demo, %ld worker threads\n\n",
	       smarm_version_string(), workers);
	rc = smarm_node_run(node, demo_root, (void *)(intptr_t)workers, &how,
			    NULL);
	smarm_node_close(node);
	checks_failed += rc != 0 || how != SMARM_EXIT_NORMAL;
	printf("\nsummary: %d checks, %d failed; the root %s\n", checks_run,
	       checks_failed, exit_name(how));
	return checks_failed == 0 ? 0 : 1;
}
