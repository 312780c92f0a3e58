/* SPDX-License-Identifier: MIT */
/*
 * smarm-bench.c - libsmarm's benchmark program: the DESIGN.md §7
 * workloads, written against the public API only (smarm/smarm.h).
 *
 *   smarm-bench [--workers N] [--runs|--repeat R] [--wake-slot 0|1]
 *               [--spin-ns NS]
 *               [--async-slice-us US] [--stats] [--skynet-leaves 10^k]
 *               [--actor-stats 0|1] [workload...|all]
 *
 * Prints one CSV line per workload on stdout, `WORKLOAD,smarm,N,ns_per_op`
 * (N is the worker count), the same shape as the Go and Erlang peers in
 * tools/peers/. Each workload gets one warm-up run and then R timed runs
 * (default 5; --repeat is another name for --runs); the median is
 * printed and the individual runs go to stderr
 * as `# smarm WORKLOAD workers=N runs: ...`. A workload's runs share one
 * node with SMARM_OPT_WORKERS=N (each run is one smarm_node_run of a root
 * actor; the node is closed after the workload), so the runs after the
 * warm-up find the slot table and stack pool grown, as the peers find
 * their heaps across iterations; the
 * root times only the workload itself with smarm_now_ns() (setup such as
 * building the ring or spawning the passive side is outside, as in the
 * peers). --workers defaults to 1, the setting the §7 targets refer to.
 *
 * send_by_name is ping_pong_rtt with every send made by registered name
 * (smarm_send_name, resolved per send); send_by_name_pairs runs 2W such
 * pairs at once on W workers (no peer).
 *
 * No workload word (or "all") runs every workload.
 *
 * Every workload checks its result (counts, echoed values); a wrong
 * result, a failing call or a run that does not finish within
 * HANG_LIMIT_S makes the program exit 1. Unknown workload names are
 * reported on stderr and skipped; the other workloads still run and the
 * exit status is 2 (1 if a workload also failed).
 *
 * idle_bytes is a size, not a time: its last column is resident bytes
 * per actor parked in receive (RSS growth from /proc/self/statm over N
 * actors, each parked on its own channel, the channel counted as its
 * mailbox, as the Go peer counts its hchan). Like the Go peer, every run
 * of it is a fresh child process, so memory a previous run left in the
 * allocator cannot hide the cost; --workers does not matter to it.
 *
 * fairness and wake_latency measure the scheduler under saturation by
 * call-free spinner actors (3*N and 2*N of them). fairness prints a ratio,
 * max/min of the spinners' progress over a 1 s window (1e9 if one made
 * none); fairness_few and fairness_uneven do the same with N+1 and 2*N+1
 * spinners (more than divide evenly), fairness_check and fairness_yield
 * with 2*N+1 spinners that reach a safe point (smarm_check) or yield
 * every 256 iterations, asynchronous preemption off. wake_latency
 * prints the p99 of how late a 10 ms smarm_actor_sleep wakes among them,
 * in ns. All add a `# smarm-note WORKLOAD workers=N per run ...:` line
 * (min/max counts; p50/p99 ms). wake_latency_libc is wake_latency with
 * hogs that spend most of their time inside libc (malloc/free and
 * snprintf), where a preemption signal is deferred.
 *
 * --wake-slot, --spin-ns, --async-slice-us and --actor-stats set
 * SMARM_OPT_WAKE_SLOT, SMARM_OPT_IDLE_SPIN_NS, SMARM_OPT_ASYNC_SLICE_NS
 * (in microseconds) and SMARM_OPT_ACTOR_STATS on every node (default:
 * the library's); --stats
 * adds a `# smarm-stats WORKLOAD workers=N per run: ...` line with the
 * scheduler counters averaged over the timed runs; --skynet-leaves sizes
 * skynet_actor's tree (default 10^6, DESIGN.md §7).
 *
 * Ownership: each workload allocates its channels and arrays in the root
 * actor and frees them before the root returns. Locking: none; actors of
 * a workload share plain fields, each written by one actor and read by the
 * root only after a join or a channel receive that orders them (INV-1).
 * Invariants: INV-1 no field of a workload context is written by two
 * actors. INV-2 a run's bench_run is filled in only by its root actor,
 * apart from the failure record, which the first failing actor claims.
 * gen_statem_event casts buttons (push, pull: a transition each)
 * through the door-lock machine of plugins/door.so (its path is built in;
 * SMARM_BENCH_DOOR overrides it), synchronising with a get_state call
 * every STATEM_BATCH events; ns per event.
 *
 * See: docs/benchmarks.md, tools/peers/README.md.
 */

#include <smarm/smarm.h>
#include <smarm/smarm_plugin.h>

#include <signal.h>
#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Workload sizes: DESIGN.md §7, the same as tools/peers. */
enum {
	SPAWN_N = 100000,
	CHAIN_N = 100000,
	PING_N = 1000000,
	RING_SIZE = 1000,
	RING_N = 1000000,
	YIELD_N = 1000000,
	IDLE_N = 100000,
	SNAP_N = 1000000,
	SKYNET_LEAVES = 1000000, /* default; --skynet-leaves changes it */
	SKYNET_FANOUT = 10,
};

/* Iterations per compute actor: about half a second each. */
#define COMPUTE_N 400000000ull

/* Most actors skynet_actor may have alive: breadth-first, the whole
 * tree of 1111111 at --skynet-leaves 10^6 (Erlang's peer runs with
 * +P 2000000 for the same reason). */
#define SKYNET_MAX_ACTORS (INT64_C(1) << 24) /* the most a node allows */
/* skynet_actor gives up when nothing was spawned or ended for this long:
 * an actor that could not get a stack ends without reporting, and its
 * parent would wait forever. */
#define SKYNET_STALL_NS (5ull * 1000000000ull)

#define HANG_LIMIT_S 300u		       /* one run, wall clock */
#define RECV_LIMIT_NS (120ull * 1000000000ull) /* root waiting on done */

/* One run of one workload: filled in by the root (INV-2). */
struct bench_run {
	uint64_t ns;	   /* length of the timed region (idle_bytes:
			      resident bytes grown) */
	uint64_t ops;	   /* operations the timed region covered */
	double figure;	   /* printed as is when ops is 0 (fairness:
			      a ratio; wake_latency: p99 ns) */
	char note[48];	   /* the run's detail for `# smarm-note` */
	atomic_int failed; /* 0, or 1 once why holds the first failure */
	char why[200];	   /* what went wrong (calls or result checks) */
};

/* Record the first failure of a run; later ones are dropped. */
static void bench_fail(struct bench_run *r, const char *what, int rc)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&r->failed, &expected, 1))
		return;
	if (rc < 0)
		snprintf(r->why, sizeof r->why, "%s: %s", what,
			 smarm_err_name(rc));
	else
		snprintf(r->why, sizeof r->why, "%s", what);
}

static void bench_join(struct bench_run *r, smarm_pid_t pid, const char *who)
{
	int how = -1;
	int rc = smarm_actor_join(pid, &how, NULL);
	if (rc != 0)
		bench_fail(r, "smarm_actor_join", rc);
	else if (how != SMARM_EXIT_NORMAL)
		bench_fail(r, who, 0);
}

/* ------------------------------------------------------------------------
 * spawn_join: N joinable actors that exit at once, then join them all.
 * --------------------------------------------------------------------- */

static void spawn_join_body(void *arg)
{
	*(unsigned char *)arg = 1;
}

static void wl_spawn_join(struct bench_run *r)
{
	unsigned char *ran = malloc(SPAWN_N);
	smarm_pid_t *pids = malloc(SPAWN_N * sizeof *pids);
	size_t spawned = 0;
	size_t count = 0;

	if (ran == NULL || pids == NULL) {
		bench_fail(r, "out of memory", 0);
		goto out_free;
	}
	/*
	 * Fault the pages in now, outside the timed region. Not memset:
	 * GCC folds malloc and a memset to zero into calloc, which skips
	 * the writes on fresh memory, so the first run after the warm-up
	 * took its page faults (some 220) inside the timed loop.
	 */
	explicit_bzero(ran, SPAWN_N);
	explicit_bzero(pids, SPAWN_N * sizeof *pids);

	uint64_t t0 = smarm_now_ns();
	for (; spawned < SPAWN_N; spawned++) {
		int rc = smarm_actor_spawn(&pids[spawned], spawn_join_body,
					   &ran[spawned], NULL);
		if (rc != 0) {
			bench_fail(r, "smarm_actor_spawn", rc);
			break;
		}
	}
	for (size_t i = 0; i < spawned; i++)
		bench_join(r, pids[i], "an actor did not exit normally");
	r->ns = smarm_now_ns() - t0;
	r->ops = SPAWN_N;

	for (size_t i = 0; i < SPAWN_N; i++)
		count += ran[i];
	if (count != SPAWN_N) {
		char msg[80];
		snprintf(msg, sizeof msg, "%zu of %d actors ran", count,
			 SPAWN_N);
		bench_fail(r, msg, 0);
	}
out_free:
	free(pids);
	free(ran);
}

/* ------------------------------------------------------------------------
 * chained_spawn: each actor spawns the next (detached) and passes on its
 * depth; the one at depth N sends N to the root. An actor whose spawn
 * fails sends the (negative) error instead, so the root never hangs.
 * --------------------------------------------------------------------- */

/* The running chain's done channel. Actors get only their depth as arg,
 * like the peers' chain(n); one node runs at a time, so one slot is enough. */
static smarm_chan_t *chain_done;

static void chain_body(void *arg)
{
	uintptr_t depth = (uintptr_t)arg;
	int64_t msg = (int64_t)depth;

	if (depth < CHAIN_N) {
		int rc = smarm_actor_spawn(NULL, chain_body,
					   (void *)(depth + 1), NULL);
		if (rc == 0)
			return;
		msg = rc;
	}
	smarm_chan_send(chain_done, &msg);
}

static void wl_chained_spawn(struct bench_run *r)
{
	int64_t got = 0;
	int rc = smarm_chan_alloc(&chain_done, sizeof got, NULL);
	if (rc != 0) {
		bench_fail(r, "smarm_chan_alloc", rc);
		return;
	}

	uint64_t t0 = smarm_now_ns();
	rc = smarm_actor_spawn(NULL, chain_body, (void *)(uintptr_t)1, NULL);
	if (rc == 0)
		rc = smarm_chan_recv_timeout(chain_done, &got, RECV_LIMIT_NS);
	r->ns = smarm_now_ns() - t0;
	r->ops = CHAIN_N;

	if (rc != 0)
		bench_fail(r, "spawn or receive", rc);
	else if (got < 0)
		bench_fail(r, "a link's spawn failed", (int)got);
	else if (got != CHAIN_N)
		bench_fail(r, "wrong depth reported", 0);
	smarm_chan_sender_free(chain_done);
	smarm_chan_receiver_free(chain_done);
	chain_done = NULL;
}

/* ------------------------------------------------------------------------
 * monitor_down: N actors spawned with a monitor (the spawn option), each
 * exits at once; the root receives the N Downs (spawn_monitor + 'DOWN').
 * --------------------------------------------------------------------- */

static void monitor_down_body(void *arg)
{
	(void)arg;
}

static void wl_monitor_down(struct bench_run *r)
{
	smarm_chan_t *downs = NULL;
	smarm_spawn_opts_t *opts = NULL;
	smarm_signal_t s;
	uint64_t ref = 0;
	size_t spawned = 0, got = 0;
	int rc = smarm_chan_alloc(&downs, sizeof s, NULL);
	if (rc == 0)
		rc = smarm_spawn_opts_alloc(&opts);
	if (rc == 0)
		rc = smarm_spawn_opts_set_monitor(opts, downs, &ref);
	if (rc != 0) {
		bench_fail(r, "setup", rc);
		goto out;
	}
	uint64_t t0 = smarm_now_ns();
	for (; spawned < SPAWN_N; spawned++) {
		rc = smarm_actor_spawn(NULL, monitor_down_body, NULL, opts);
		if (rc != 0) {
			bench_fail(r, "smarm_actor_spawn", rc);
			break;
		}
	}
	for (; got < spawned; got++) {
		/* Untimed, as the peer's receive (the alarm bounds a hang). */
		rc = smarm_chan_recv(downs, &s);
		if (rc != 0) {
			bench_fail(r, "receive a Down", rc);
			break;
		}
		if (s.kind != SMARM_SIGNAL_DOWN || s.how != SMARM_EXIT_NORMAL)
			bench_fail(r, "a Down that is not a normal end", 0);
	}
	r->ns = smarm_now_ns() - t0;
	r->ops = SPAWN_N;
out:
	smarm_spawn_opts_free(opts);
	if (downs != NULL) {
		smarm_chan_sender_free(downs);
		smarm_chan_receiver_free(downs);
	}
}

/* ------------------------------------------------------------------------
 * link_cascade: a chain of CHAIN_N actors, each spawned linked by the one
 * before and parked; the root kills the head and waits for the tail's
 * Down: every actor is gone by then (each dies before it signals the
 * next). Timed from the kill; ns per actor.
 * --------------------------------------------------------------------- */

struct cascade {
	smarm_spawn_opts_t *opts; /* linked, dense stacks */
	smarm_chan_t *tail;	  /* pid of the tail, or SMARM_PID_NONE */
	smarm_chan_t *park;	  /* nobody sends: every link waits here */
};

static struct cascade cascade;

static void cascade_body(void *arg)
{
	uintptr_t depth = (uintptr_t)arg;
	smarm_pid_t me = smarm_actor_self();
	int v;
	if (depth < CHAIN_N) {
		if (smarm_actor_spawn(NULL, cascade_body, (void *)(depth + 1),
				      cascade.opts) != 0) {
			me = SMARM_PID_NONE;
			smarm_chan_send(cascade.tail, &me);
			return;
		}
	} else {
		smarm_chan_send(cascade.tail, &me);
	}
	/* Until the cascade kills it. One channel for all: a channel per
	 * link, never freed, leaked 100,000 channels per run (until
	 * 2026-12-03), where Erlang's `receive` uses the mailbox it has. */
	smarm_chan_recv(cascade.park, &v);
}

static void wl_link_cascade(struct bench_run *r)
{
	smarm_chan_t *downs = NULL;
	smarm_spawn_opts_t *head_opts = NULL;
	smarm_pid_t head, tail;
	smarm_signal_t s;
	int rc = smarm_chan_alloc(&downs, sizeof s, NULL);
	cascade.opts = NULL;
	cascade.tail = NULL;
	cascade.park = NULL;
	if (rc == 0)
		rc = smarm_chan_alloc(&cascade.tail, sizeof tail, NULL);
	if (rc == 0)
		rc = smarm_chan_alloc(&cascade.park, sizeof(int), NULL);
	if (rc == 0)
		rc = smarm_spawn_opts_alloc(&cascade.opts);
	if (rc == 0)
		rc = smarm_spawn_opts_alloc(&head_opts);
	/* Dense stacks of the default shape: pooled in chunks, so 100,000
	 * parked actors cost no mapping each (an odd shape maps one). */
	for (int i = 0; rc == 0 && i < 2; i++)
		rc = smarm_spawn_opts_set_int(i ? head_opts : cascade.opts,
					      SMARM_OPT_STACK_MODE,
					      SMARM_STACK_DENSE);
	if (rc == 0)
		rc = smarm_spawn_opts_set_int(cascade.opts, SMARM_OPT_LINK, 1);
	if (rc == 0) /* the head is not linked to the root */
		rc = smarm_actor_spawn(&head, cascade_body, (void *)1,
				       head_opts);
	if (rc == 0)
		rc = smarm_chan_recv_timeout(cascade.tail, &tail,
					     RECV_LIMIT_NS);
	if (rc == 0 && tail.id == 0)
		rc = SMARM_ENOMEM;
	if (rc == 0)
		rc = smarm_monitor(tail, downs, NULL);
	if (rc != 0) {
		bench_fail(r, "building the chain", rc);
		goto out;
	}
	uint64_t t0 = smarm_now_ns();
	rc = smarm_actor_stop(head);
	if (rc == 0)
		rc = smarm_chan_recv_timeout(downs, &s, RECV_LIMIT_NS);
	r->ns = smarm_now_ns() - t0;
	r->ops = CHAIN_N;
	if (rc != 0)
		bench_fail(r, "kill the head, wait for the tail", rc);
	else if (s.how != SMARM_EXIT_STOPPED)
		bench_fail(r, "the tail did not end killed", 0);
	smarm_actor_join(head, NULL, NULL);
out:
	smarm_spawn_opts_free(cascade.opts);
	smarm_spawn_opts_free(head_opts);
	if (cascade.tail != NULL) {
		smarm_chan_sender_free(cascade.tail);
		smarm_chan_receiver_free(cascade.tail);
	}
	if (cascade.park != NULL) {
		smarm_chan_sender_free(cascade.park);
		smarm_chan_receiver_free(cascade.park);
	}
	if (downs != NULL) {
		smarm_chan_sender_free(downs);
		smarm_chan_receiver_free(downs);
	}
}

/* ------------------------------------------------------------------------
 * ping_pong_rtt: the pinger sends i on ping and waits for it on pong, N
 * times; the ponger echoes until ping is closed.
 * --------------------------------------------------------------------- */

struct ping_pong {
	struct bench_run *r;
	smarm_chan_t *ping; /* pinger -> ponger */
	smarm_chan_t *pong; /* ponger -> pinger */
	uint64_t echoed;    /* written by the ponger only */
};

static void ponger_body(void *arg)
{
	struct ping_pong *pp = arg;
	uint64_t v;
	int rc;

	while ((rc = smarm_chan_recv(pp->ping, &v)) == 0) {
		rc = smarm_chan_send(pp->pong, &v);
		if (rc != 0) {
			bench_fail(pp->r, "ponger: smarm_chan_send", rc);
			return;
		}
		pp->echoed++;
	}
	if (rc != SMARM_ECLOSED)
		bench_fail(pp->r, "ponger: smarm_chan_recv", rc);
}

static void pinger_body(void *arg)
{
	struct ping_pong *pp = arg;

	for (uint64_t i = 0; i < PING_N; i++) {
		uint64_t v = UINT64_MAX;
		int rc = smarm_chan_send(pp->ping, &i);
		if (rc == 0)
			rc = smarm_chan_recv(pp->pong, &v);
		if (rc != 0) {
			bench_fail(pp->r, "pinger: send or receive", rc);
			return;
		}
		if (v != i) {
			bench_fail(pp->r, "wrong value echoed", 0);
			return;
		}
	}
}

/* Give up the root's references to a channel it allocated (NULL: no-op).
 * sender says whether the root still holds its sender reference. */
static void chan_drop(smarm_chan_t *ch, bool sender)
{
	if (ch == NULL)
		return;
	if (sender)
		smarm_chan_sender_free(ch);
	smarm_chan_receiver_free(ch);
}

/* ping_pong_release's: both sides give their stacks back while parked. */
static smarm_spawn_opts_t *pp_opts;

static void wl_ping_pong_rtt(struct bench_run *r)
{
	struct ping_pong pp = { .r = r };
	smarm_pid_t ponger;
	smarm_pid_t pinger;
	int rc;

	if ((rc = smarm_chan_alloc(&pp.ping, sizeof(uint64_t), NULL)) != 0 ||
	    (rc = smarm_chan_alloc(&pp.pong, sizeof(uint64_t), NULL)) != 0 ||
	    (rc = smarm_actor_spawn(&ponger, ponger_body, &pp, pp_opts)) != 0) {
		bench_fail(r, "setup", rc);
		chan_drop(pp.ping, true);
		chan_drop(pp.pong, true);
		return;
	}

	uint64_t t0 = smarm_now_ns();
	rc = smarm_actor_spawn(&pinger, pinger_body, &pp, pp_opts);
	if (rc == 0)
		bench_join(r, pinger, "pinger did not exit normally");
	r->ns = smarm_now_ns() - t0;
	r->ops = PING_N;
	if (rc != 0)
		bench_fail(r, "spawn pinger", rc);

	smarm_chan_sender_free(pp.ping); /* closes ping: the ponger ends */
	bench_join(r, ponger, "ponger did not exit normally");
	if (pp.echoed != PING_N)
		bench_fail(r, "wrong number of echoes", 0);
	chan_drop(pp.ping, false);
	chan_drop(pp.pong, true);
}

/*
 * ping_pong_release: ping_pong_rtt with both actors spawned with
 * SMARM_OPT_STACK_RELEASE (threshold 0): every receive parks, copies its
 * stack out and releases its pages, and the wake faults them back and
 * copies the bytes in. Against ping_pong_rtt in the same run, half the
 * difference is what one release and its wake cost. No peer.
 */
static void wl_ping_pong_release(struct bench_run *r)
{
	int rc = smarm_spawn_opts_alloc(&pp_opts);
	if (rc == 0)
		rc = smarm_spawn_opts_set_int(pp_opts, SMARM_OPT_STACK_RELEASE,
					      1);
	if (rc != 0) {
		bench_fail(r, "spawn options", rc);
		return;
	}
	wl_ping_pong_rtt(r);
	smarm_spawn_opts_free(pp_opts);
	pp_opts = NULL;
}

/* ------------------------------------------------------------------------
 * send_by_name: ping_pong_rtt through registered names: each side
 * publishes its receiving channel as its mailbox for one message type and
 * registers a name; every send is smarm_send_name, resolved per send (the
 * Erlang peer: register/2 and Name ! Msg). A round trip is two sends by
 * name. The pinger's last element, UINT64_MAX, ends the ponger.
 *
 * send_by_name_pairs: the same with 2W pairs at once on W workers (pair i
 * named bench_ping<i> and bench_pong<i>), PING_N round trips in all;
 * every sender resolves names in the one registry of the node, so it
 * shows what senders on several workers share. ns per round trip (the
 * run's time over all pairs' round trips). No peer.
 * --------------------------------------------------------------------- */

/* --workers: the yield, spinner and pairs workloads size themselves by
 * it. */
static long bench_workers = 1;

struct by_name {
	struct bench_run *r;
	const smarm_msgtype_t *type;
	smarm_chan_t *ping;		   /* the ponger's mailbox */
	smarm_chan_t *pong;		   /* the pinger's mailbox */
	char ping_name[32], pong_name[32]; /* "bench_pong" + a size_t */
	uint64_t n;			   /* round trips */
	uint64_t echoed;		   /* written by the ponger only */
	smarm_pid_t ponger, pinger;
};

static void name_ponger(void *arg)
{
	struct by_name *bn = arg;
	uint64_t v;
	int rc = smarm_mailbox_publish(bn->type, bn->ping);
	if (rc == 0)
		rc = smarm_register(bn->pong_name, NULL);
	if (rc != 0) {
		bench_fail(bn->r, "ponger: publish or register", rc);
		return;
	}
	while ((rc = smarm_chan_recv(bn->ping, &v)) == 0 && v != UINT64_MAX) {
		rc = smarm_send_name(bn->ping_name, bn->type, &v);
		if (rc != 0) {
			bench_fail(bn->r, "ponger: smarm_send_name", rc);
			return;
		}
		bn->echoed++;
	}
	if (rc != 0)
		bench_fail(bn->r, "ponger: smarm_chan_recv", rc);
}

static void name_pinger(void *arg)
{
	struct by_name *bn = arg;
	uint64_t end = UINT64_MAX;
	int rc = smarm_mailbox_publish(bn->type, bn->pong);
	if (rc == 0)
		rc = smarm_register(bn->ping_name, NULL);
	if (rc != 0) {
		bench_fail(bn->r, "pinger: publish or register", rc);
		return;
	}
	for (uint64_t i = 0; i < bn->n; i++) {
		uint64_t v = UINT64_MAX;
		rc = smarm_send_name(bn->pong_name, bn->type, &i);
		if (rc == 0)
			rc = smarm_chan_recv(bn->pong, &v);
		if (rc != 0) {
			bench_fail(bn->r, "pinger: send by name or receive",
				   rc);
			return;
		}
		if (v != i) {
			bench_fail(bn->r, "wrong value echoed", 0);
			return;
		}
	}
	rc = smarm_send_name(bn->pong_name, bn->type, &end);
	if (rc != 0)
		bench_fail(bn->r, "pinger: the last send", rc);
}

/*
 * Set up pair i of bn[]: its channels and names, and its ponger, which is
 * registered before this returns (before the clock starts). 0 or the
 * failing call's status.
 */
static int by_name_setup(struct bench_run *r, struct by_name *bn, size_t i,
			 uint64_t n)
{
	smarm_pid_t where;
	int rc;
	bn->r = r;
	bn->n = n;
	snprintf(bn->ping_name, sizeof bn->ping_name, "bench_ping%zu", i);
	snprintf(bn->pong_name, sizeof bn->pong_name, "bench_pong%zu", i);
	if ((rc = smarm_msgtype_define("bench.u64", sizeof(uint64_t), NULL,
				       &bn->type)) != 0 ||
	    (rc = smarm_chan_alloc(&bn->ping, sizeof(uint64_t), NULL)) != 0 ||
	    (rc = smarm_chan_alloc(&bn->pong, sizeof(uint64_t), NULL)) != 0 ||
	    (rc = smarm_actor_spawn(&bn->ponger, name_ponger, bn, NULL)) != 0)
		return rc;
	while (smarm_whereis(bn->pong_name, &where) != 0 &&
	       smarm_actor_is_alive(bn->ponger))
		smarm_actor_yield();
	return 0;
}

/* The pair's end: join both (stop the ponger after a failure, when its
 * end may never come), check the echoes, free the channels. */
static void by_name_finish(struct bench_run *r, struct by_name *bn)
{
	if (!smarm_pid_eq(bn->pinger, SMARM_PID_NONE))
		bench_join(r, bn->pinger, "pinger did not exit normally");
	if (!smarm_pid_eq(bn->ponger, SMARM_PID_NONE)) {
		if (atomic_load(&r->failed)) {
			smarm_actor_stop(bn->ponger);
			smarm_actor_join(bn->ponger, NULL, NULL);
		} else {
			bench_join(r, bn->ponger,
				   "ponger did not exit normally");
		}
	}
	if (!atomic_load(&r->failed) && bn->echoed != bn->n)
		bench_fail(r, "wrong number of echoes", 0);
	chan_drop(bn->ping, true);
	chan_drop(bn->pong, true);
}

/* npairs pairs, PING_N round trips in all. */
static void by_name_run(struct bench_run *r, size_t npairs)
{
	struct by_name *bn = calloc(npairs, sizeof *bn);
	size_t i, ready = 0;
	int rc = bn == NULL ? SMARM_ENOMEM : 0;
	for (i = 0; rc == 0 && i < npairs; i++, ready++)
		rc = by_name_setup(r, &bn[i], i, PING_N / npairs);
	uint64_t t0 = smarm_now_ns();
	for (i = 0; rc == 0 && i < npairs; i++)
		rc = smarm_actor_spawn(&bn[i].pinger, name_pinger, &bn[i],
				       NULL);
	/* Before the joins: a ponger whose pinger never came is stopped. */
	if (rc != 0)
		bench_fail(r, "setup or spawn", rc);
	for (i = 0; i < ready; i++)
		by_name_finish(r, &bn[i]);
	r->ns = smarm_now_ns() - t0;
	r->ops = (PING_N / npairs) * npairs;
	free(bn);
}

static void wl_send_by_name(struct bench_run *r)
{
	by_name_run(r, 1);
}

static void wl_send_by_name_pairs(struct bench_run *r)
{
	by_name_run(r, 2 * (size_t)bench_workers);
}

/* ------------------------------------------------------------------------
 * ring_hop: RING_SIZE actors, member i receives on ring[i] and forwards
 * the counter minus one to ring[i+1]; the one that receives 0 tells the
 * root. Closing every ring channel afterwards ends the members.
 * --------------------------------------------------------------------- */

struct ring_member {
	struct bench_run *r;
	smarm_chan_t *in;
	smarm_chan_t *out;
	smarm_chan_t *done;
	uint64_t forwarded; /* hops this member made; its own field (INV-1) */
};

static void ring_body(void *arg)
{
	struct ring_member *m = arg;
	uint64_t v;
	int rc;

	while ((rc = smarm_chan_recv(m->in, &v)) == 0) {
		if (v == 0) {
			rc = smarm_chan_send(m->done, &v);
		} else {
			v--;
			m->forwarded++;
			rc = smarm_chan_send(m->out, &v);
		}
		if (rc != 0) {
			bench_fail(m->r, "ring member: smarm_chan_send", rc);
			return;
		}
	}
	if (rc != SMARM_ECLOSED)
		bench_fail(m->r, "ring member: smarm_chan_recv", rc);
}

static void wl_ring_hop(struct bench_run *r)
{
	struct ring_member *m = calloc(RING_SIZE, sizeof *m);
	smarm_chan_t **ring = calloc(RING_SIZE, sizeof *ring);
	smarm_pid_t *pids = calloc(RING_SIZE, sizeof *pids);
	smarm_chan_t *done = NULL;
	size_t spawned = 0;
	uint64_t v = RING_N;
	uint64_t hops = 0;
	int rc = SMARM_ENOMEM;

	if (m == NULL || ring == NULL || pids == NULL)
		goto out_setup;
	if ((rc = smarm_chan_alloc(&done, sizeof v, NULL)) != 0)
		goto out_setup;
	for (size_t i = 0; i < RING_SIZE; i++)
		if ((rc = smarm_chan_alloc(&ring[i], sizeof v, NULL)) != 0)
			goto out_setup;
	for (; spawned < RING_SIZE; spawned++) {
		struct ring_member *me = &m[spawned];
		me->r = r;
		me->in = ring[spawned];
		me->out = ring[(spawned + 1) % RING_SIZE];
		me->done = done;
		rc = smarm_actor_spawn(&pids[spawned], ring_body, me, NULL);
		if (rc != 0)
			goto out_setup;
	}

	uint64_t t0 = smarm_now_ns();
	rc = smarm_chan_send(ring[0], &v);
	if (rc == 0)
		rc = smarm_chan_recv_timeout(done, &v, RECV_LIMIT_NS);
	r->ns = smarm_now_ns() - t0;
	r->ops = RING_N;
	if (rc != 0)
		bench_fail(r, "inject or wait", rc);
	goto out_close;

out_setup:
	bench_fail(r, "setup", rc);
out_close:
	/* Only the finished token existed and it was consumed: every member is
	 * parked in receive, so closing the ring channels ends them all. */
	for (size_t i = 0; ring != NULL && i < RING_SIZE; i++)
		if (ring[i] != NULL)
			smarm_chan_sender_free(ring[i]);
	for (size_t i = 0; i < spawned; i++)
		bench_join(r, pids[i], "ring member did not exit normally");
	for (size_t i = 0; i < spawned; i++)
		hops += m[i].forwarded;
	if (spawned == RING_SIZE && hops != RING_N)
		bench_fail(r, "wrong number of hops", 0);
	for (size_t i = 0; ring != NULL && i < RING_SIZE; i++)
		chan_drop(ring[i], false);
	chan_drop(done, true);
	free(pids);
	free(ring);
	free(m);
}

/* ------------------------------------------------------------------------
 * yield: two actors per worker wait at their start gate, then each yields
 * N times. ns per yield = elapsed / (2N): what one worker spends per
 * yield, each yield a switch to the other actor on its worker (with one
 * actor per worker a yield would find nothing to switch to). Equal
 * figures at 1 and W workers mean perfect scaling.
 * --------------------------------------------------------------------- */

struct yielder {
	struct bench_run *r;
	smarm_chan_t *gate; /* the root's go signal */
	uint64_t yields;    /* completed yields; this yielder's field */
};

static void yielder_body(void *arg)
{
	struct yielder *y = arg;
	uint64_t go;
	int rc = smarm_chan_recv(y->gate, &go);

	for (uint64_t i = 0; rc == 0 && i < YIELD_N; i++) {
		rc = smarm_actor_yield();
		y->yields += rc == 0;
	}
	if (rc != 0)
		bench_fail(y->r, "yielder: gate or yield", rc);
}

static void wl_yield(struct bench_run *r)
{
	size_t n = 2 * (size_t)bench_workers;
	struct yielder *y = calloc(n, sizeof *y);
	smarm_pid_t *pids = calloc(n, sizeof *pids);
	size_t spawned = 0;
	uint64_t go = 1;
	int rc = 0;

	if (y == NULL || pids == NULL) {
		bench_fail(r, "out of memory", 0);
		goto out;
	}
	for (; spawned < n; spawned++) {
		y[spawned].r = r;
		rc = smarm_chan_alloc(&y[spawned].gate, sizeof go, NULL);
		if (rc == 0)
			rc = smarm_actor_spawn(&pids[spawned], yielder_body,
					       &y[spawned], NULL);
		if (rc != 0) {
			if (y[spawned].gate != NULL)
				chan_drop(y[spawned].gate, true);
			bench_fail(r, "setup", rc);
			break;
		}
	}

	uint64_t t0 = smarm_now_ns();
	for (size_t i = 0; i < spawned; i++)
		if ((rc = smarm_chan_send(y[i].gate, &go)) != 0)
			bench_fail(r, "open gate", rc);
	for (size_t i = 0; i < spawned; i++)
		bench_join(r, pids[i], "yielder did not exit normally");
	r->ns = smarm_now_ns() - t0;
	r->ops = 2ull * YIELD_N; /* per worker: see above */

	for (size_t i = 0; i < spawned; i++) {
		if (spawned == n && y[i].yields != YIELD_N)
			bench_fail(r, "wrong number of yields", 0);
		chan_drop(y[i].gate, true);
	}
out:
	free(pids);
	free(y);
}

/* ------------------------------------------------------------------------
 * compute_preempted / compute_unpreempted: two actors each run a pure
 * arithmetic loop of COMPUTE_N iterations with no safe point in it; ns per
 * iteration. The first runs with asynchronous preemption (the default:
 * the actors are switched out every slice by the monitor's signal), the
 * second with SMARM_OPT_PREEMPT_ASYNC=0 (each loop runs to its end). The
 * ratio of the two is the cost of preemption at the default slice. The
 * time is the process's CPU time (CLOCK_PROCESS_CPUTIME_ID: the workers,
 * the signal handler and the monitor thread), not wall time: on a shared
 * machine other tenants move wall time by far more than the 2% at stake.
 * --------------------------------------------------------------------- */

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct computer {
	uint64_t result; /* this computer's field */
};

static void computer_body(void *arg)
{
	struct computer *c = arg;
	uint64_t x = 1;
	for (uint64_t i = 0; i < COMPUTE_N; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	c->result = x;
}

static void wl_compute(struct bench_run *r)
{
	struct computer c[2] = { { 0 }, { 0 } };
	smarm_pid_t pids[2];
	uint64_t want = 1;
	uint64_t t0 = cpu_ns();
	size_t spawned = 0;
	int rc;

	for (; spawned < 2; spawned++)
		if ((rc = smarm_actor_spawn(&pids[spawned], computer_body,
					    &c[spawned], NULL)) != 0) {
			bench_fail(r, "spawn", rc);
			break;
		}
	for (size_t i = 0; i < spawned; i++)
		bench_join(r, pids[i], "computer did not exit normally");
	r->ns = cpu_ns() - t0;
	r->ops = 2ull * COMPUTE_N;
	for (uint64_t i = 0; i < COMPUTE_N; i++)
		want = want * 6364136223846793005ull + 1442695040888963407ull;
	if (spawned == 2 && (c[0].result != want || c[1].result != want))
		bench_fail(r, "wrong compute result", 0);
}

/* ------------------------------------------------------------------------
 * idle_bytes: N actors, each parked in smarm_chan_recv on its own
 * channel; resident growth per actor. Then each is sent 0, frees its
 * channel and exits.
 * --------------------------------------------------------------------- */

static atomic_long idle_parked; /* actors about to park in recv */
static atomic_long idle_done;	/* actors that got their 0 and ended */

static long rss_bytes(void)
{
	long size = 0;
	long resident = -1;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* idle_bytes_hibernated: the element came (or the close). */
static void idle_hib_cont(void *arg)
{
	smarm_chan_t *ch = arg;
	int64_t v = -1;
	int rc = smarm_chan_try_recv(ch, &v);
	chan_drop(ch, true);
	atomic_fetch_add_explicit(&idle_done, rc == 0 && v == 0,
				  memory_order_relaxed);
}

/* idle_bytes_hibernated: as idle_body, hibernated (no stack). */
static void idle_hib_body(void *arg)
{
	atomic_fetch_add_explicit(&idle_parked, 1, memory_order_relaxed);
	int rc = smarm_hibernate(arg, idle_hib_cont, arg);
	chan_drop(arg, true); /* only on an error */
	(void)rc;
}

static void idle_body(void *arg)
{
	smarm_chan_t *ch = arg;
	int64_t v = -1;
	atomic_fetch_add_explicit(&idle_parked, 1, memory_order_relaxed);
	int rc = smarm_chan_recv(ch, &v); /* parks: the state measured */
	chan_drop(ch, true);
	atomic_fetch_add_explicit(&idle_done, rc == 0 && v == 0,
				  memory_order_relaxed);
}

/* Wait (sleeping) until *count reaches want; false after the limit. */
static bool idle_wait(atomic_long *count, long want)
{
	uint64_t t0 = smarm_now_ns();
	while (atomic_load(count) < want) {
		if (smarm_now_ns() - t0 > RECV_LIMIT_NS)
			return false;
		smarm_actor_sleep(1000000);
	}
	return true;
}

/*
 * idle_bytes_hibernated: IDLE_HIB_N actors as idle_bytes's, each
 * hibernated on its channel (smarm_hibernate): no stack, its slot and
 * the wait only. Erlang's peer hibernates its processes
 * (erlang:hibernate/3).
 */
enum { IDLE_HIB_N = 1000000 };

/*
 * actors_10m: ACTORS_10M_N actors as idle_bytes_hibernated's, all live
 * at once (a node of SMARM_OPT_MAX_ACTORS 2^24, in a fresh process):
 * resident bytes per actor. Like every idle_bytes workload it notes
 * the wall and process CPU time per actor from the first spawn until
 * every one has parked (hibernated), the CPU time being the figure that
 * other load on the machine does not inflate.
 */
enum { ACTORS_10M_N = 10000000 };

/*
 * idle_bytes_release: idle_bytes with every actor spawned with
 * SMARM_OPT_STACK_RELEASE (threshold 0): parked in its receive, its
 * stack bytes are on the heap and its stack pages given back. Measured
 * once SMARM_STAT_STACKS_RELEASED counts them all. The note adds the
 * wall time per actor to wake them all (each a fault and a copy back)
 * and see each end. Its peer is Go's idle_bytes (bench-compare.sh).
 */
static smarm_spawn_opts_t *idle_opts; /* NULL: the node's defaults */

static void idle_bytes_run(struct bench_run *r, size_t n, smarm_actor_cb body);

static void wl_idle_bytes(struct bench_run *r)
{
	idle_bytes_run(r, IDLE_N, idle_body);
}

static void wl_idle_bytes_release(struct bench_run *r)
{
	int rc = smarm_spawn_opts_alloc(&idle_opts);
	if (rc == 0)
		rc = smarm_spawn_opts_set_int(idle_opts,
					      SMARM_OPT_STACK_RELEASE, 1);
	if (rc != 0) {
		bench_fail(r, "spawn options", rc);
		return;
	}
	idle_bytes_run(r, IDLE_N, idle_body);
	smarm_spawn_opts_free(idle_opts);
	idle_opts = NULL;
}

static void wl_idle_bytes_hibernated(struct bench_run *r)
{
	idle_bytes_run(r, IDLE_HIB_N, idle_hib_body);
}

static void wl_actors_10m(struct bench_run *r)
{
	idle_bytes_run(r, ACTORS_10M_N, idle_hib_body);
}

static void idle_bytes_run(struct bench_run *r, size_t n, smarm_actor_cb body)
{
	const size_t IDLE_N_ = n;
	smarm_chan_t **chans = calloc(IDLE_N_, sizeof *chans);
	int64_t zero = 0;
	size_t spawned = 0;
	uint64_t t0, c0;
	long before;
	long after;

	atomic_store(&idle_parked, 0);
	atomic_store(&idle_done, 0);
	if (chans == NULL) {
		bench_fail(r, "out of memory", 0);
		return;
	}
	memset(chans, 0xff, IDLE_N_ * sizeof *chans); /* touched before */
	before = rss_bytes();
	t0 = smarm_now_ns();
	c0 = cpu_ns();
	for (; spawned < IDLE_N_; spawned++) {
		int rc = smarm_chan_alloc(&chans[spawned], sizeof zero, NULL);
		if (rc == 0)
			rc = smarm_actor_spawn(NULL, body, chans[spawned],
					       idle_opts);
		if (rc != 0) {
			bench_fail(r, "channel or spawn", rc);
			break;
		}
	}
	/* All ran up to their recv; a little more for the last to park. */
	if (!idle_wait(&idle_parked, (long)spawned))
		bench_fail(r, "actors did not start", 0);
	/* Every one is at its park (or hibernation), up to the last few
	 * (idle_wait's 1 ms sleeps): the creation time. */
	snprintf(r->note, sizeof r->note, "%.0f/%.0f",
		 (double)(smarm_now_ns() - t0) /
			 (double)(spawned ? spawned : 1),
		 (double)(cpu_ns() - c0) / (double)(spawned ? spawned : 1));
	if (idle_opts != NULL) {
		/* idle_bytes_release: every stack given back first. */
		int64_t out = 0;
		uint64_t w0 = smarm_now_ns();
		while (smarm_node_get_int(smarm_node_current(),
					  SMARM_STAT_STACKS_RELEASED,
					  &out) == 0 &&
		       out < (int64_t)spawned &&
		       smarm_now_ns() - w0 < RECV_LIMIT_NS)
			smarm_actor_sleep(1000000);
		if (out < (int64_t)spawned)
			bench_fail(r, "stacks not given back", 0);
	}
	smarm_actor_sleep(20000000);
	after = rss_bytes();
	r->ns = after > before ? (uint64_t)(after - before) : 0;
	r->ops = IDLE_N_;
	if (before < 0 || after < 0)
		bench_fail(r, "cannot read /proc/self/statm", 0);

	t0 = smarm_now_ns();
	for (size_t i = 0; i < spawned; i++) {
		int rc = smarm_chan_send(chans[i], &zero);
		if (rc != 0)
			bench_fail(r, "smarm_chan_send", rc);
	}
	if (!idle_wait(&idle_done, (long)spawned))
		bench_fail(r, "actors did not all get their message", 0);
	if (idle_opts != NULL) {
		size_t len = strlen(r->note);
		snprintf(r->note + len, sizeof r->note - len, " wake %.0f",
			 (double)(smarm_now_ns() - t0) /
				 (double)(spawned ? spawned : 1));
	}
	free(chans);
}

/* ------------------------------------------------------------------------
 * snapshot_1m: SNAP_N actors parked in smarm_chan_recv on one shared
 * channel; the timed region is one smarm_snapshot_take of the node
 * (every actor read under its slot lock, the registry once) and a
 * check that each is in it, parked. ns per actor. Then each is sent 0
 * and ends.
 * --------------------------------------------------------------------- */

static atomic_long snap_parked; /* actors about to park */
static atomic_long snap_done;	/* actors that got their 0 */

static void snap_body(void *arg)
{
	smarm_chan_t *ch = arg;
	int64_t v = -1;
	atomic_fetch_add_explicit(&snap_parked, 1, memory_order_relaxed);
	int rc = smarm_chan_recv(ch, &v);
	atomic_fetch_add_explicit(&snap_done, rc == 0 && v == 0,
				  memory_order_relaxed);
}

static void wl_snapshot_1m(struct bench_run *r)
{
	smarm_chan_t *ch = NULL;
	smarm_snapshot_t *snap = NULL;
	smarm_actor_info_t in;
	int64_t zero = 0;
	size_t spawned = 0, parked = 0;
	struct timespec c0, c1;
	uint64_t t0;
	int rc;

	atomic_store(&snap_parked, 0);
	atomic_store(&snap_done, 0);
	rc = smarm_chan_alloc(&ch, sizeof zero, NULL);
	if (rc != 0) {
		bench_fail(r, "smarm_chan_alloc", rc);
		return;
	}
	for (; spawned < SNAP_N; spawned++) {
		rc = smarm_actor_spawn(NULL, snap_body, ch, NULL);
		if (rc != 0) {
			bench_fail(r, "smarm_actor_spawn", rc);
			break;
		}
	}
	if (!idle_wait(&snap_parked, (long)spawned))
		bench_fail(r, "actors did not start", 0);
	smarm_actor_sleep(20000000); /* the last ones park */

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	t0 = smarm_now_ns();
	rc = smarm_snapshot_take(NULL, &snap);
	r->ns = smarm_now_ns() - t0;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	r->ops = spawned;
	if (rc != 0)
		bench_fail(r, "smarm_snapshot_take", rc);
	memset(&in, 0, sizeof in);
	in.size = sizeof in;
	/* Not the caller: walked off its worker, it may be parked too. */
	for (size_t i = 0; i < smarm_snapshot_count(snap); i++)
		if (smarm_snapshot_get(snap, i, &in) == 0 &&
		    in.state == SMARM_ACTOR_PARKED &&
		    in.pid.id != smarm_actor_self().id)
			parked++;
	if (parked != spawned)
		bench_fail(r, "snapshot missed parked actors", 0);
	/* The worker thread's CPU time: on a shared machine the wall time
	 * also counts what other processes took. */
	snprintf(r->note, sizeof r->note, "%zu/%zu parked, cpu %.0f ms", parked,
		 smarm_snapshot_count(snap),
		 ((double)(c1.tv_sec - c0.tv_sec) * 1e9 +
		  (double)(c1.tv_nsec - c0.tv_nsec)) /
			 1e6);
	smarm_snapshot_free(snap);

	for (size_t i = 0; i < spawned; i++) {
		rc = smarm_chan_send(ch, &zero);
		if (rc != 0)
			bench_fail(r, "smarm_chan_send", rc);
	}
	if (!idle_wait(&snap_done, (long)spawned))
		bench_fail(r, "actors did not all get their message", 0);
	chan_drop(ch, true);
}

/* ------------------------------------------------------------------------
 * skynet_actor: a 10-ary tree of actors over the numbers 0..leaves-1.
 * Each inner actor makes a channel, spawns ten children (detached) over
 * its tenth of the range, receives their ten sums and sends the total to
 * its parent; a leaf sends its own number. The root checks the total
 * against leaves*(leaves-1)/2 (499999500000 for 10^6). ns per leaf, as
 * the peers count.
 * --------------------------------------------------------------------- */

static long skynet_leaves = SKYNET_LEAVES; /* a power of ten */

struct skynet_node {
	struct bench_run *r;
	smarm_chan_t *out; /* the parent's channel */
	int64_t num;	   /* first number of this subtree */
	int64_t size;	   /* leaves in this subtree */
};

static void skynet_body(void *arg)
{
	const struct skynet_node *me = arg;
	struct skynet_node kids[SKYNET_FANOUT]; /* live until all reported */
	int64_t sum = me->num;
	smarm_chan_t *ch = NULL;
	int spawned = 0;
	int rc;

	if (me->size > 1) {
		int64_t sub = me->size / SKYNET_FANOUT;
		sum = 0;
		rc = smarm_chan_alloc(&ch, sizeof sum, NULL);
		if (rc != 0)
			bench_fail(me->r, "skynet: smarm_chan_alloc", rc);
		for (; rc == 0 && spawned < SKYNET_FANOUT; spawned++) {
			kids[spawned] = (struct skynet_node){
				me->r, ch, me->num + spawned * sub, sub
			};
			rc = smarm_actor_spawn(NULL, skynet_body,
					       &kids[spawned], NULL);
			if (rc != 0) {
				bench_fail(me->r, "skynet: smarm_actor_spawn",
					   rc);
				break;
			}
		}
		for (int i = 0; i < spawned; i++) {
			int64_t v = 0;
			rc = smarm_chan_recv(ch, &v);
			if (rc != 0) {
				bench_fail(me->r, "skynet: smarm_chan_recv",
					   rc);
				break;
			}
			sum += v;
		}
		chan_drop(ch, true);
	}
	rc = smarm_chan_send(me->out, &sum);
	if (rc != 0)
		bench_fail(me->r, "skynet: smarm_chan_send", rc);
}

/* spawned + live actors of the calling actor's node: changes while the
 * tree makes progress. */
static int64_t skynet_progress(void)
{
	smarm_node_t *node = smarm_node_current();
	int64_t spawned = 0;
	int64_t live = 0;
	smarm_node_get_int(node, SMARM_STAT_SPAWNED, &spawned);
	smarm_node_get_int(node, SMARM_STAT_LIVE_ACTORS, &live);
	return spawned * 3 + live; /* both only move while actors run */
}

static void wl_skynet_actor(struct bench_run *r)
{
	int64_t leaves = skynet_leaves;
	int64_t want = leaves * (leaves - 1) / 2;
	struct skynet_node top;
	smarm_chan_t *done = NULL;
	int64_t sum = -1;
	int rc = smarm_chan_alloc(&done, sizeof sum, NULL);

	if (rc != 0) {
		bench_fail(r, "smarm_chan_alloc", rc);
		return;
	}
	top = (struct skynet_node){ r, done, 0, leaves };

	uint64_t t0 = smarm_now_ns();
	rc = smarm_actor_spawn(NULL, skynet_body, &top, NULL);
	if (rc != 0)
		bench_fail(r, "smarm_actor_spawn", rc);
	/* Wait in slices; give up once the tree stops making progress. */
	int64_t seen = skynet_progress();
	uint64_t still = 0;
	while (rc == 0) {
		rc = smarm_chan_recv_timeout(done, &sum, 1000000000ull);
		if (rc != SMARM_ETIMEDOUT)
			break;
		int64_t now = skynet_progress();
		still = now == seen ? still + 1000000000ull : 0;
		seen = now;
		if (still >= SKYNET_STALL_NS) {
			bench_fail(r,
				   "no progress for 5 s: an actor could not "
				   "start (out of stack mappings? see "
				   "vm.max_map_count)",
				   0);
			break;
		}
		rc = 0;
	}
	r->ns = smarm_now_ns() - t0;
	r->ops = (uint64_t)leaves;

	if (rc != 0 && rc != SMARM_ETIMEDOUT)
		bench_fail(r, "skynet: wait for the sum", rc);
	else if (rc == 0 && sum != want) {
		char msg[96];
		snprintf(msg, sizeof msg, "wrong sum %lld, want %lld",
			 (long long)sum, (long long)want);
		bench_fail(r, msg, 0);
	}
	/* On failure the root's exit stops the rest of the tree. */
	chan_drop(done, true);
}

/* ------------------------------------------------------------------------
 * fairness: 3*W call-free spinners on W workers; after a settling pause
 * the root snapshots every spinner's counter, sleeps FAIR_WINDOW_NS,
 * snapshots again, then raises the stop flag and joins them. The figure
 * is max/min of the spinners' progress over the window (a ratio, not ns;
 * 1 is perfectly fair). A spinner that made no progress at all gives
 * FAIR_STARVED. Only asynchronous preemption moves a spinner: its loop
 * calls nothing.
 *
 * wake_latency: 2*W spinners saturate every worker while a sleeper actor
 * does WAKE_N sleeps of WAKE_SLEEP_NS with smarm_actor_sleep and records
 * how late each wake-up was (now - start - WAKE_SLEEP_NS). The figure is
 * the run's p99 lateness in ns (nearest rank: of 50 samples, the
 * largest); p50 and p99 of every run go to the `# smarm-note` line.
 * --------------------------------------------------------------------- */

#define FAIR_SETTLE_NS 100000000ull  /* spinners all started */
#define FAIR_WINDOW_NS 1000000000ull /* the measured window */
#define FAIR_STARVED 1e9	     /* the ratio printed for a 0 count */
#define WAKE_N 50		     /* sleeps per run */
#define WAKE_SLEEP_NS 10000000ull    /* each 10 ms */
#define SPIN_CHUNK 1024		     /* iterations between counter stores */

/* One spinner: its counter has a cache line to itself, so spinners on
 * different workers do not slow each other down by false sharing. */
/* What a spinner's loop does besides counting. */
enum spin_kind {
	SPIN_PLAIN, /* nothing: calls nothing, no safe point */
	SPIN_LIBC,  /* spends its time in malloc/snprintf */
	SPIN_CHECK, /* reaches smarm_check every SAFE_POINT_N iterations */
	SPIN_YIELD, /* yields every SAFE_POINT_N iterations */
};

#define SAFE_POINT_N 256 /* iterations between SPIN_CHECK/YIELD's calls */

struct spinner {
	_Alignas(64) atomic_uint_least64_t count; /* iterations so far */
	uint64_t x;		 /* the loop's result, kept live */
	const atomic_bool *stop; /* the root's stop flag */
	enum spin_kind kind;	 /* what the loop does */
};

static_assert(sizeof(struct spinner) == 64, "one cache line a spinner");

/*
 * A hog that spends most of its time inside libc, where a preemption
 * signal cannot switch it out (the runtime defers it): malloc/free of
 * varying sizes and snprintf, with a little work of its own.
 */
static void libc_hog_body(struct spinner *s)
{
	void *keep[16] = { 0 };
	char buf[64];
	uint64_t x = 1;
	uint64_t n = 0;

	while (!atomic_load_explicit(s->stop, memory_order_relaxed)) {
		unsigned k;
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		k = (unsigned)(x >> 60);
		free(keep[k]);
		keep[k] = malloc(64 + (x >> 32) % 4096);
		if (keep[k] != NULL)
			memset(keep[k], (int)k, 64);
		snprintf(buf, sizeof buf, "%llu %f", (unsigned long long)n,
			 (double)n * 0.5);
		x += (unsigned char)buf[1];
		n++;
		atomic_store_explicit(&s->count, n, memory_order_relaxed);
	}
	for (int i = 0; i < 16; i++)
		free(keep[i]);
	s->x = x;
}

/*
 * A spinner that reaches a safe point (SPIN_CHECK) or yields (SPIN_YIELD)
 * every SAFE_POINT_N iterations: with asynchronous preemption off, only
 * its slice end at the safe point, or its yield, lets others run.
 */
static void safe_point_body(struct spinner *s)
{
	uint64_t x = 1;
	uint64_t n = 0;

	while (!atomic_load_explicit(s->stop, memory_order_relaxed)) {
		for (int i = 0; i < SAFE_POINT_N; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		n += SAFE_POINT_N;
		atomic_store_explicit(&s->count, n, memory_order_relaxed);
		if (s->kind == SPIN_YIELD)
			(void)smarm_actor_yield();
		else
			smarm_check();
	}
	s->x = x;
}

/* SPIN_PLAIN: no call and no safe point in the loop: only asynchronous
 * preemption switches this actor out. The counter is stored relaxed: only
 * the root reads it, and a slightly stale snapshot is harmless. */
static void spinner_body(void *arg)
{
	struct spinner *s = arg;
	uint64_t x = 1;
	uint64_t n = 0;

	if (s->kind == SPIN_LIBC) {
		libc_hog_body(s);
		return;
	}
	if (s->kind != SPIN_PLAIN) {
		safe_point_body(s);
		return;
	}
	while (!atomic_load_explicit(s->stop, memory_order_relaxed)) {
		for (int i = 0; i < SPIN_CHUNK; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		n += SPIN_CHUNK;
		atomic_store_explicit(&s->count, n, memory_order_relaxed);
	}
	s->x = x;
}

/* The spinners of one run and the flag that stops them. */
struct spin_set {
	struct spinner *sp; /* n spinners, 64-byte aligned */
	smarm_pid_t *pids;
	size_t n;	  /* spinners asked for */
	size_t spawned;	  /* spinners running */
	atomic_bool stop; /* set by the root to end them */
};

static int spin_set_start(struct bench_run *r, struct spin_set *ss, size_t n,
			  enum spin_kind kind)
{
	ss->n = n;
	ss->spawned = 0;
	atomic_store(&ss->stop, false);
	ss->sp = aligned_alloc(64, n * sizeof *ss->sp);
	ss->pids = calloc(n, sizeof *ss->pids);
	if (ss->sp == NULL || ss->pids == NULL) {
		bench_fail(r, "out of memory", 0);
		return -1;
	}
	memset(ss->sp, 0, n * sizeof *ss->sp);
	for (; ss->spawned < n; ss->spawned++) {
		struct spinner *s = &ss->sp[ss->spawned];
		s->stop = &ss->stop;
		s->kind = kind;
		int rc = smarm_actor_spawn(&ss->pids[ss->spawned], spinner_body,
					   s, NULL);
		if (rc != 0) {
			bench_fail(r, "spawn spinner", rc);
			return -1;
		}
	}
	return 0;
}

static void spin_set_stop(struct bench_run *r, struct spin_set *ss)
{
	atomic_store(&ss->stop, true);
	for (size_t i = 0; i < ss->spawned; i++)
		bench_join(r, ss->pids[i], "spinner did not exit normally");
	free(ss->pids);
	free(ss->sp);
}

/*
 * fairness: 3W call-free spinners (they divide evenly over the workers);
 * fairness_uneven: 2W + 1 and fairness_few: W + 1 (one worker holds one
 * more at any time, so only moving preempted actors shares the CPU:
 * SMARM_OPT_PREEMPT_MOVE); fairness_check and fairness_yield: 2W + 1
 * that reach a safe point or yield, asynchronous preemption off (a slice
 * end at a safe point and a yield wait in the worker's pinned FIFO, so
 * these are spread by moving too). After a settling pause, max/min of
 * their progress over a window.
 */
static void fairness_of(struct bench_run *r, size_t n, enum spin_kind kind)
{
	struct spin_set ss;
	uint64_t *base = calloc(n, sizeof *base);
	uint64_t lo = UINT64_MAX;
	uint64_t hi = 0;
	int rc;

	r->ops = 0; /* the figure is a ratio */
	if (base == NULL) {
		bench_fail(r, "out of memory", 0);
		return;
	}
	if (spin_set_start(r, &ss, n, kind) != 0)
		goto out_stop;
	if ((rc = smarm_actor_sleep(FAIR_SETTLE_NS)) != 0) {
		bench_fail(r, "smarm_actor_sleep", rc);
		goto out_stop;
	}
	for (size_t i = 0; i < n; i++)
		base[i] = atomic_load_explicit(&ss.sp[i].count,
					       memory_order_relaxed);
	if ((rc = smarm_actor_sleep(FAIR_WINDOW_NS)) != 0) {
		bench_fail(r, "smarm_actor_sleep", rc);
		goto out_stop;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t d = atomic_load_explicit(&ss.sp[i].count,
						  memory_order_relaxed) -
			     base[i];
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	r->figure = lo == 0 ? FAIR_STARVED : (double)hi / (double)lo;
	snprintf(r->note, sizeof r->note, "%llu/%llu", (unsigned long long)lo,
		 (unsigned long long)hi);
out_stop:
	spin_set_stop(r, &ss);
	free(base);
}

static void wl_fairness(struct bench_run *r)
{
	fairness_of(r, 3 * (size_t)bench_workers, SPIN_PLAIN);
}

static void wl_fairness_uneven(struct bench_run *r)
{
	fairness_of(r, 2 * (size_t)bench_workers + 1, SPIN_PLAIN);
}

static void wl_fairness_few(struct bench_run *r)
{
	fairness_of(r, (size_t)bench_workers + 1, SPIN_PLAIN);
}

static void wl_fairness_check(struct bench_run *r)
{
	fairness_of(r, 2 * (size_t)bench_workers + 1, SPIN_CHECK);
}

static void wl_fairness_yield(struct bench_run *r)
{
	fairness_of(r, 2 * (size_t)bench_workers + 1, SPIN_YIELD);
}

/* wake_latency's sleeper and what it measured. */
struct sleeper {
	struct bench_run *r;
	uint64_t late[WAKE_N]; /* ns late per sleep; this sleeper's field */
};

static void sleeper_body(void *arg)
{
	struct sleeper *s = arg;
	for (int i = 0; i < WAKE_N; i++) {
		uint64_t t0 = smarm_now_ns();
		int rc = smarm_actor_sleep(WAKE_SLEEP_NS);
		uint64_t el = smarm_now_ns() - t0;
		if (rc != 0) {
			bench_fail(s->r, "sleeper: smarm_actor_sleep", rc);
			return;
		}
		if (el < WAKE_SLEEP_NS) {
			bench_fail(s->r, "sleeper woke early", 0);
			return;
		}
		s->late[i] = el - WAKE_SLEEP_NS;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a;
	uint64_t y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile of n sorted samples, pct in 1..100. */
static uint64_t pct_rank(const uint64_t *sorted, size_t n, unsigned pct)
{
	size_t k = (n * pct + 99) / 100;
	return sorted[k > 0 ? k - 1 : 0];
}

static void wake_latency(struct bench_run *r, enum spin_kind kind)
{
	struct spin_set ss;
	struct sleeper sl = { .r = r };
	smarm_pid_t pid;
	int rc;

	r->ops = 0; /* the figure is the p99 itself */
	if (spin_set_start(r, &ss, 2 * (size_t)bench_workers, kind) != 0)
		goto out_stop;
	if ((rc = smarm_actor_spawn(&pid, sleeper_body, &sl, NULL)) != 0) {
		bench_fail(r, "spawn sleeper", rc);
		goto out_stop;
	}
	bench_join(r, pid, "sleeper did not exit normally");
	qsort(sl.late, WAKE_N, sizeof sl.late[0], cmp_u64);
	uint64_t p50 = pct_rank(sl.late, WAKE_N, 50);
	uint64_t p99 = pct_rank(sl.late, WAKE_N, 99);
	r->figure = (double)p99;
	snprintf(r->note, sizeof r->note, "%.3f/%.3f", p50 / 1e6, p99 / 1e6);
out_stop:
	spin_set_stop(r, &ss);
}

static void wl_wake_latency(struct bench_run *r)
{
	wake_latency(r, SPIN_PLAIN);
}

static void wl_wake_latency_libc(struct bench_run *r)
{
	wake_latency(r, SPIN_LIBC);
}

/* ------------------------------------------------------------------------
 * sup_restart, sup_restart_100k: a one_for_one supervisor with one
 * permanent child that crashes at once on every start until it has been
 * started n + 1 times; the last tenancy reports and parks. Timed from
 * smarm_sup_start to that report; ns per restart. The intensity (65536
 * restarts per 1 ns) never trips and keeps the ring of restart instants
 * full, so both sizes pay the same bookkeeping per restart.
 * sup_restart_fault: sup_restart with a child that faults (a store to
 * address 0, contained: SMARM_OPT_CONTAIN_FAULTS, which every node of
 * smarm-bench sets) instead of calling smarm_actor_crash.
 * --------------------------------------------------------------------- */

struct sup_bench {
	atomic_ulong starts; /* bodies run */
	unsigned long n;     /* restarts wanted */
	bool fault;	     /* fault instead of crashing */
	smarm_chan_t *done;  /* the last tenancy's report */
};

static struct sup_bench sup_bench;
static volatile uintptr_t sup_bench_nowhere; /* 0, hidden from the compiler */

/* Not instrumented by UBSan (its null check would report and end the
 * process before sup_restart_fault's store could fault). */
static __attribute__((no_sanitize("undefined"))) void sup_bench_child(void *arg)
{
	int v = 1;
	smarm_chan_t *park = NULL;
	(void)arg;
	if (atomic_fetch_add(&sup_bench.starts, 1) < sup_bench.n) {
		if (sup_bench.fault)
			*(volatile int *)sup_bench_nowhere = 1;
		smarm_actor_crash(1);
	}
	smarm_chan_send(sup_bench.done, &v);
	if (smarm_chan_alloc(&park, sizeof v, NULL) == 0)
		smarm_chan_recv(park, &v); /* until the shutdown */
}

static void sup_restart_n(struct bench_run *r, unsigned long n, bool fault)
{
	smarm_sup_spec_t *spec = NULL;
	smarm_chan_t *downs = NULL;
	smarm_pid_t sup;
	smarm_signal_t s;
	uint64_t t0;
	int v;
	int rc = smarm_chan_alloc(&sup_bench.done, sizeof v, NULL);
	atomic_store(&sup_bench.starts, 0);
	sup_bench.n = n;
	sup_bench.fault = fault;
	if (rc == 0)
		rc = smarm_chan_alloc(&downs, sizeof s, NULL);
	if (rc == 0)
		rc = smarm_sup_spec_alloc(&spec);
	if (rc == 0)
		rc = smarm_sup_spec_set_intensity(spec, 65536, 1);
	if (rc == 0)
		rc = smarm_sup_spec_add_child(spec, "c", sup_bench_child, NULL,
					      SMARM_SUP_PERMANENT,
					      SMARM_SUP_BRUTAL_KILL);
	if (rc != 0) {
		bench_fail(r, "building the spec", rc);
		goto out;
	}
	t0 = smarm_now_ns();
	rc = smarm_sup_start(spec, &sup);
	if (rc == 0)
		rc = smarm_chan_recv_timeout(sup_bench.done, &v, RECV_LIMIT_NS);
	r->ns = smarm_now_ns() - t0;
	r->ops = n;
	if (rc != 0) {
		bench_fail(r, "start, wait for the last tenancy", rc);
		goto out;
	}
	if (atomic_load(&sup_bench.starts) != n + 1)
		bench_fail(r, "wrong number of starts", 0);
	rc = smarm_monitor(sup, downs, NULL);
	if (rc == 0)
		rc = smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0);
	if (rc == 0)
		rc = smarm_chan_recv_timeout(downs, &s, RECV_LIMIT_NS);
	if (rc != 0 || s.how != SMARM_EXIT_SHUTDOWN)
		bench_fail(r, "shut the supervisor down", rc);
out:
	smarm_sup_spec_free(spec);
	if (downs != NULL) {
		smarm_chan_sender_free(downs);
		smarm_chan_receiver_free(downs);
	}
	if (sup_bench.done != NULL) {
		smarm_chan_sender_free(sup_bench.done);
		smarm_chan_receiver_free(sup_bench.done);
		sup_bench.done = NULL;
	}
}

static void wl_sup_restart(struct bench_run *r)
{
	sup_restart_n(r, 1000, false);
}

static void wl_sup_restart_100k(struct bench_run *r)
{
	sup_restart_n(r, 100000, false);
}

static void wl_sup_restart_fault(struct bench_run *r)
{
	sup_restart_n(r, 1000, true);
}

/* ------------------------------------------------------------------------
 * gen_server_call, gen_server_call_generic, gen_server_cast: the counter
 * plugin (plugins/counter) as a gen_server. _call: 1000000 calls of
 * add(1) through a typed stub (smarm_server_stub), ns per call;
 * _generic: the same by name with smarm_server_call and an argument
 * array; _cast: 1000000 casts of inc(1) into the server, then one get, ns
 * per cast. The plugin's path is SMARM_COUNTER_PLUGIN or the build's.
 * --------------------------------------------------------------------- */

/* The operations per run: 1000000, or SMARM_BENCH_GS_N (fewer, for a
 * run under callgrind). */
static int gs_n(void)
{
	const char *e = getenv("SMARM_BENCH_GS_N");
	long n = e != NULL ? strtol(e, NULL, 10) : 0;
	return n > 0 && n <= 100000000 ? (int)n : 1000000;
}

#ifndef SMARM_BENCH_COUNTER
#define SMARM_BENCH_COUNTER "counter.so"
#endif

static int gs_open(struct bench_run *r, smarm_plugin_t **pl,
		   const smarm_behaviour_t **b, smarm_server_t **s,
		   const char *name)
{
	const char *path = getenv("SMARM_COUNTER_PLUGIN");
	char msg[256];
	int rc;
	if (path == NULL)
		path = SMARM_BENCH_COUNTER;
	if ((rc = smarm_plugin_open(path, pl, msg, sizeof msg)) != 0) {
		fprintf(stderr, "smarm-bench: %s\n", msg);
		bench_fail(r, "smarm_plugin_open", rc);
		return rc;
	}
	if ((rc = smarm_plugin_behaviour(*pl, "counter", b)) != 0 ||
	    (rc = smarm_server_start(*b, NULL, name, s)) != 0) {
		bench_fail(r, "start counter", rc);
		smarm_plugin_close(*pl);
		return rc;
	}
	return 0;
}

static void gs_close(smarm_plugin_t *pl, smarm_server_t *s)
{
	smarm_server_shutdown(s, SMARM_NO_TIMEOUT, NULL);
	smarm_server_free(s);
	smarm_plugin_close(pl);
}

static void wl_gen_server_call(struct bench_run *r)
{
	smarm_plugin_t *pl;
	const smarm_behaviour_t *b;
	smarm_server_t *s;
	void (*fn)(void);
	int (*add)(smarm_server_t *, uint64_t, int64_t *, int64_t);
	int64_t v = 0;
	int rc = 0;

	if (gs_open(r, &pl, &b, &s, NULL) != 0)
		return;
	if ((rc = smarm_server_stub(b, "add", &fn)) != 0) {
		bench_fail(r, "smarm_server_stub", rc);
		gs_close(pl, s);
		return;
	}
	add = (int (*)(smarm_server_t *, uint64_t, int64_t *, int64_t))fn;
	int n = gs_n();
	uint64_t t0 = smarm_now_ns();
	for (int i = 0; i < n && rc == 0; i++)
		rc = add(s, SMARM_NO_TIMEOUT, &v, 1);
	r->ns = smarm_now_ns() - t0;
	r->ops = (uint64_t)n;
	if (rc != 0 || v != n)
		bench_fail(r, "wrong sum", rc);
	gs_close(pl, s);
}

static void wl_gen_server_call_generic(struct bench_run *r)
{
	smarm_plugin_t *pl;
	const smarm_behaviour_t *b;
	smarm_server_t *s, *byname;
	smarm_value_t one, rv;
	int rc = 0;

	if (gs_open(r, &pl, &b, &s, "bench_counter") != 0)
		return;
	if ((rc = smarm_server_open_name(NULL, b, "bench_counter", &byname)) !=
	    0) {
		bench_fail(r, "smarm_server_open_name", rc);
		gs_close(pl, s);
		return;
	}
	memset(&one, 0, sizeof one);
	one.type = SMARM_T_I64;
	one.v.i = 1;
	int n = gs_n();
	uint64_t t0 = smarm_now_ns();
	for (int i = 0; i < n && rc == 0; i++)
		rc = smarm_server_call(byname, "add", &one, 1, &rv,
				       SMARM_NO_TIMEOUT);
	r->ns = smarm_now_ns() - t0;
	r->ops = (uint64_t)n;
	if (rc != 0 || rv.v.i != n)
		bench_fail(r, "smarm_server_call", rc);
	smarm_server_free(byname);
	gs_close(pl, s);
}

static void wl_gen_server_cast(struct bench_run *r)
{
	smarm_plugin_t *pl;
	const smarm_behaviour_t *b;
	smarm_server_t *s;
	smarm_value_t one, rv;
	int rc = 0;

	if (gs_open(r, &pl, &b, &s, NULL) != 0)
		return;
	memset(&one, 0, sizeof one);
	one.type = SMARM_T_I64;
	one.v.i = 1;
	int n = gs_n();
	uint64_t t0 = smarm_now_ns();
	for (int i = 0; i < n && rc == 0; i++)
		rc = smarm_server_cast(s, "inc", &one, 1);
	if (rc == 0)
		rc = smarm_server_call(s, "get", NULL, 0, &rv,
				       SMARM_NO_TIMEOUT);
	r->ns = smarm_now_ns() - t0;
	r->ops = (uint64_t)n;
	if (rc != 0 || rv.v.i != n)
		bench_fail(r, "cast", rc);
	gs_close(pl, s);
}

/* ------------------------------------------------------------------------
 * sup_shutdown_quiet, sup_shutdown_load: a one_for_one supervisor of
 * SD_N counter servers, each registered ("sd<i>"), shut down (an exit
 * signal SHUTDOWN, waited for through a monitor's Down); ns per child.
 * _load first lets SD_PRODUCERS actors cast inc by name to servers in
 * turn for 50 ms, and they go on casting through the shutdown (a cast to
 * a server gone fails and the next is tried): the shutdown must not
 * starve behind them (issue target: _load <= 2x _quiet).
 * --------------------------------------------------------------------- */

enum { SD_N = 2000, SD_PRODUCERS = 4 };

static atomic_bool sd_stop;
static atomic_long sd_casts;

static void sd_producer(void *arg)
{
	const smarm_behaviour_t *b = arg;
	smarm_value_t one = { .type = SMARM_T_I64, .v.i = 1 };
	char name[16];
	long k = 0;
	while (!atomic_load_explicit(&sd_stop, memory_order_relaxed)) {
		smarm_server_t *s = NULL;
		snprintf(name, sizeof name, "sd%ld", k++ % SD_N);
		if (smarm_server_open_name(NULL, b, name, &s) != 0)
			break;
		for (int i = 0; i < 64; i++)
			if (smarm_server_cast(s, "inc", &one, 1) == 0)
				atomic_fetch_add_explicit(&sd_casts, 1,
							  memory_order_relaxed);
		smarm_server_free(s);
	}
}

static void sup_shutdown_run(struct bench_run *r, bool load)
{
	smarm_sup_spec_t *spec = NULL;
	smarm_chan_t *downs = NULL;
	const smarm_behaviour_t *b;
	smarm_plugin_t *pl;
	smarm_server_t *first;
	smarm_pid_t sup;
	smarm_signal_t sig;
	char id[16];
	uint64_t t0;
	int rc;

	if (gs_open(r, &pl, &b, &first, NULL) != 0)
		return;
	atomic_store(&sd_stop, false);
	atomic_store(&sd_casts, 0);
	rc = smarm_chan_alloc(&downs, sizeof sig, NULL);
	if (rc == 0)
		rc = smarm_sup_spec_alloc(&spec);
	for (int i = 0; rc == 0 && i < SD_N; i++) {
		snprintf(id, sizeof id, "sd%d", i);
		rc = smarm_sup_spec_add_server(
			spec, id, b, NULL, id, SMARM_SUP_PERMANENT,
			SMARM_SUP_SHUTDOWN_DEFAULT, SMARM_NO_TIMEOUT);
	}
	if (rc == 0)
		rc = smarm_sup_start(spec, &sup);
	if (rc == 0)
		rc = smarm_monitor(sup, downs, NULL);
	if (rc != 0) {
		bench_fail(r, "start the supervisor", rc);
		goto out;
	}
	for (int i = 0; load && i < SD_PRODUCERS; i++) {
		smarm_pid_t p;
		if (smarm_actor_spawn(&p, sd_producer, (void *)b, NULL) == 0)
			smarm_actor_detach(p);
	}
	if (load)
		smarm_actor_sleep(50000000);
	t0 = smarm_now_ns();
	rc = smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0);
	if (rc == 0)
		rc = smarm_chan_recv_timeout(downs, &sig, RECV_LIMIT_NS);
	r->ns = smarm_now_ns() - t0;
	r->ops = SD_N;
	atomic_store(&sd_stop, true);
	if (rc != 0)
		bench_fail(r, "shut the supervisor down", rc);
	if (load && atomic_load(&sd_casts) == 0)
		bench_fail(r, "the producers cast nothing", 0);
	smarm_actor_sleep(10000000); /* the producers see the stop */
out:
	smarm_sup_spec_free(spec);
	if (downs != NULL) {
		smarm_chan_sender_free(downs);
		smarm_chan_receiver_free(downs);
	}
	gs_close(pl, first);
}

static void wl_sup_shutdown_quiet(struct bench_run *r)
{
	sup_shutdown_run(r, false);
}

static void wl_sup_shutdown_load(struct bench_run *r)
{
	sup_shutdown_run(r, true);
}

/* ------------------------------------------------------------------------
 * idle_bytes_server: IDLE_SRV_N counter servers (smarm_server_start,
 * which returns once init ran), parked on their empty mailboxes; resident
 * bytes per server, as idle_bytes per plain parked actor (the plugin is
 * loaded before the first measure). Then each is shut down.
 * --------------------------------------------------------------------- */

enum { IDLE_SRV_N = 20000, IDLE_SRV_HIB_N = 1000000 };

static void idle_bytes_server_run(struct bench_run *r, size_t n,
				  const char *args);

static void wl_idle_bytes_server(struct bench_run *r)
{
	idle_bytes_server_run(r, IDLE_SRV_N, NULL);
}

/*
 * idle_bytes_server_hibernated: as idle_bytes_server, IDLE_SRV_HIB_N
 * counters that hibernate at every wait (start argument "hibernate");
 * then each is called once (add 1: it wakes, answers, hibernates
 * again) before the shutdowns.
 */
static void wl_idle_bytes_server_hibernated(struct bench_run *r)
{
	idle_bytes_server_run(r, IDLE_SRV_HIB_N, "hibernate");
}

static void idle_bytes_server_run(struct bench_run *r, size_t n,
				  const char *args)
{
	const size_t IDLE_SRV_N_ = n;
	smarm_pid_t *pids = calloc(IDLE_SRV_N_, sizeof *pids);
	const smarm_behaviour_t *b;
	smarm_plugin_t *pl;
	smarm_server_t *first, *s;
	size_t started = 0;
	long before, after;
	int rc;

	if (pids == NULL) {
		bench_fail(r, "out of memory", 0);
		return;
	}
	/* Touched before: explicit_bzero, since GCC drops a memset to zero
	 * of memory calloc returned (wl_spawn_join), and the array's pages
	 * were then counted as the servers'. */
	explicit_bzero(pids, IDLE_SRV_N_ * sizeof *pids);
	if (gs_open(r, &pl, &b, &first, NULL) != 0) {
		free(pids);
		return;
	}
	started = 1;
	before = rss_bytes();
	/* The servers' pids are kept, not their client handles: what is
	 * measured is the servers (the Erlang peer keeps a list of pids and
	 * takes its own growth off). */
	for (; started < IDLE_SRV_N_; started++) {
		rc = smarm_server_start(b, args, NULL, &s);
		if (rc == 0) {
			rc = smarm_server_pid(s, &pids[started]);
			smarm_server_free(s);
		}
		if (rc != 0) {
			bench_fail(r, "smarm_server_start", rc);
			break;
		}
	}
	smarm_actor_sleep(20000000); /* the last ones park */
	after = rss_bytes();
	r->ns = after > before ? (uint64_t)(after - before) : 0;
	r->ops = started > 1 ? started - 1 : 1;
	if (before < 0 || after < 0)
		bench_fail(r, "cannot read /proc/self/statm", 0);
	for (size_t i = 1; i < started; i++) {
		int64_t got = 0;
		s = NULL;
		rc = smarm_server_open(NULL, b, pids[i], &s);
		if (rc == 0 && args != NULL) {
			rc = smarm_server_callv(s, "add", SMARM_NO_TIMEOUT,
						&got, (int64_t)1);
			if (rc == 0 && got != 1)
				rc = SMARM_EINVAL;
		}
		if (rc != 0) {
			bench_fail(r, "open or call a hibernated server", rc);
			smarm_server_free(s);
			continue; /* shut the others down all the same */
		}
		(void)smarm_server_shutdown(s, SMARM_NO_TIMEOUT, NULL);
		smarm_server_free(s);
	}
	gs_close(pl, first);
	free(pids);
}

/* ------------------------------------------------------------------------
 * Driver
 * --------------------------------------------------------------------- */

/* ------------------------------------------------------------------------
 * gen_statem_event: STATEM_N button casts through the door lock (push
 * Closed -> Open, pull Open -> Closed), with a get_state call after every
 * STATEM_BATCH of them (the machine has handled them all then). Timed
 * from the first cast to the last call's reply; ns per event.
 * --------------------------------------------------------------------- */

enum { STATEM_N = 1000000, STATEM_BATCH = 1000 };

static void wl_gen_statem_event(struct bench_run *r)
{
	const char *path = getenv("SMARM_BENCH_DOOR");
	const smarm_behaviour_t *be = NULL;
	smarm_plugin_t *pl = NULL;
	smarm_server_t *s = NULL;
	smarm_value_t v = { 0 };
	char msg[256] = "";
	uint64_t t0;
	int rc;

	if (path == NULL)
		path = SMARM_BENCH_DOOR_SO;
	rc = smarm_plugin_open(path, &pl, msg, sizeof msg);
	if (rc != 0) {
		bench_fail(r, msg[0] ? msg : "smarm_plugin_open", rc);
		return;
	}
	rc = smarm_plugin_behaviour(pl, "door", &be);
	if (rc == 0)
		rc = smarm_server_start(be, "code=7", NULL, &s);
	if (rc != 0) {
		bench_fail(r, "start the door", rc);
		goto out;
	}
	t0 = smarm_now_ns();
	for (size_t i = 0; i < STATEM_N && rc == 0; i++) {
		rc = smarm_server_cast(s, i % 2 ? "pull" : "push", NULL, 0);
		if (rc == 0 && (i + 1) % STATEM_BATCH == 0)
			rc = smarm_server_call(s, "get_state", NULL, 0, &v,
					       SMARM_NO_TIMEOUT);
	}
	r->ns = smarm_now_ns() - t0;
	r->ops = STATEM_N;
	if (rc != 0)
		bench_fail(r, "a button", rc);
	else if (v.v.i != 0)
		bench_fail(r, "the door is not closed after an even count", 0);
	smarm_server_shutdown(s, SMARM_NO_TIMEOUT, NULL);
	smarm_server_free(s);
out:
	smarm_plugin_close(pl);
}

struct workload {
	const char *name;
	void (*run)(struct bench_run *r);
	int no_async;	       /* run with SMARM_OPT_PREEMPT_ASYNC=0 */
	bool fresh;	       /* each run in a fresh child process */
	int64_t max_actors;    /* SMARM_OPT_MAX_ACTORS, 0: the default */
	const char *note_what; /* what its bench_run.note holds, or NULL */
};

/* DESIGN.md §7 order, the same as the peers. */
static const struct workload workloads[] = {
	{ "spawn_join", wl_spawn_join, 0, false, 0, NULL },
	{ "chained_spawn", wl_chained_spawn, 0, false, 0, NULL },
	{ "ping_pong_rtt", wl_ping_pong_rtt, 0, false, 0, NULL },
	{ "ping_pong_release", wl_ping_pong_release, 0, false, 0, NULL },
	{ "send_by_name", wl_send_by_name, 0, false, 0, NULL },
	{ "send_by_name_pairs", wl_send_by_name_pairs, 0, false, 0, NULL },
	{ "ring_hop", wl_ring_hop, 0, false, 0, NULL },
	{ "yield", wl_yield, 0, false, 0, NULL },
	{ "skynet_actor", wl_skynet_actor, 0, false, SKYNET_MAX_ACTORS, NULL },
	{ "idle_bytes", wl_idle_bytes, 0, true, 0, "create ns/actor wall/cpu" },
	{ "idle_bytes_release", wl_idle_bytes_release, 0, true, 0,
	  "create ns/actor wall/cpu, wake ns/actor" },
	{ "idle_bytes_server", wl_idle_bytes_server, 0, true, 0, NULL },
	{ "idle_bytes_hibernated", wl_idle_bytes_hibernated, 0, true, 0,
	  "create ns/actor wall/cpu" },
	{ "idle_bytes_server_hibernated", wl_idle_bytes_server_hibernated, 0,
	  true, 0, NULL },
	{ "actors_10m", wl_actors_10m, 0, true, INT64_C(1) << 24,
	  "create ns/actor wall/cpu" },
	{ "snapshot_1m", wl_snapshot_1m, 0, true, INT64_C(1) << 21,
	  "parked, snapshot cpu" },
	{ "sup_shutdown_quiet", wl_sup_shutdown_quiet, 0, false, 0, NULL },
	{ "sup_shutdown_load", wl_sup_shutdown_load, 0, false, 0, NULL },
	{ "compute_preempted", wl_compute, 0, false, 0, NULL },
	{ "compute_unpreempted", wl_compute, 1, false, 0, NULL },
	{ "fairness", wl_fairness, 0, false, 0, "min/max count" },
	{ "fairness_uneven", wl_fairness_uneven, 0, false, 0, "min/max count" },
	{ "fairness_few", wl_fairness_few, 0, false, 0, "min/max count" },
	{ "fairness_check", wl_fairness_check, 1, false, 0, "min/max count" },
	{ "fairness_yield", wl_fairness_yield, 1, false, 0, "min/max count" },
	{ "wake_latency", wl_wake_latency, 0, false, 0, "p50/p99 ms" },
	{ "wake_latency_libc", wl_wake_latency_libc, 0, false, 0,
	  "p50/p99 ms" },
	{ "monitor_down", wl_monitor_down, 0, false, 0, NULL },
	{ "link_cascade", wl_link_cascade, 0, false, 0, NULL },
	{ "sup_restart", wl_sup_restart, 0, false, 0, NULL },
	{ "sup_restart_100k", wl_sup_restart_100k, 0, false, 0, NULL },
	{ "sup_restart_fault", wl_sup_restart_fault, 0, false, 0, NULL },
	{ "gen_server_call", wl_gen_server_call, 0, false, 0, NULL },
	{ "gen_server_call_generic", wl_gen_server_call_generic, 0, false, 0,
	  NULL },
	{ "gen_server_cast", wl_gen_server_cast, 0, false, 0, NULL },
	{ "gen_statem_event", wl_gen_statem_event, 0, false, 0, NULL },
};

#define N_WORKLOADS (sizeof workloads / sizeof workloads[0])
#define MAX_SEL 64 /* workload words taken from one command */

/* The root actor of one run: just the workload. */
struct root_arg {
	const struct workload *w;
	struct bench_run *r;
};

static void bench_root(void *arg)
{
	struct root_arg *ra = arg;
	ra->w->run(ra->r);
}

/* Name of the workload being run, for the hang message. */
static const char *volatile current_name = "";

static void on_alarm(int sig)
{
	static const char msg[] = "smarm-bench: run did not finish within the "
				  "time limit (hang?): ";
	(void)sig;
	(void)!write(2, msg, sizeof msg - 1);
	(void)!write(2, current_name, strlen(current_name));
	(void)!write(2, "\n", 1);
	_exit(1);
}

/* One run on a fresh node; 0 and *ns_per_op, or -1 after a message. */
/* Node options from the command line; -1 leaves the library default. */
static long opt_wake_slot = -1;
static long opt_spin_ns = -1;
static long opt_async_slice_us = -1;
static long opt_actor_stats = -1;
static bool opt_stats; /* --stats: scheduler counters of each run */

/* The scheduler counters --stats prints, summed over the timed runs. */
static const struct {
	int id;
	const char *name;
} stat_ids[] = {
	{ SMARM_STAT_WAKE_SLOT_HITS, "slot_hits" },
	{ SMARM_STAT_WAKE_SLOT_DISPLACEMENTS, "slot_displaced" },
	{ SMARM_STAT_IDLE_SPIN_HITS, "spin_hits" },
	{ SMARM_STAT_IDLE_PARKS, "parks" },
	{ SMARM_STAT_PREEMPT_SIGNALS, "preempt_signals" },
	{ SMARM_STAT_PREEMPT_ASYNC, "preempt_async" },
	{ SMARM_STAT_PREEMPT_DEFERRED, "preempt_deferred" },
	{ SMARM_STAT_PREEMPT_RETURNS, "preempt_returns" },
	{ SMARM_STAT_GLOBAL_LOCKS, "global_locks" },
};
#define N_STATS (sizeof stat_ids / sizeof stat_ids[0])
static int64_t stat_last[N_STATS]; /* of the latest run */
static char note_last[48];	   /* bench_run.note of the latest run */

/*
 * The node of the workload being measured: opened for its first run and
 * closed after its last, so every run after the warm-up finds the slot
 * table, stack pool and queues already grown, as the Go and Erlang peers
 * find their heaps across iterations.
 */
static smarm_node_t *bench_node;

static void bench_node_close(void)
{
	if (bench_node != NULL)
		smarm_node_close(bench_node);
	bench_node = NULL;
}

static int bench_node_open(const struct workload *w, int workers)
{
	smarm_config_t *cfg = NULL;
	int rc;
	if (bench_node != NULL)
		return 0;
	if ((rc = smarm_config_alloc(&cfg)) != 0 ||
	    (rc = smarm_config_set_int(cfg, SMARM_OPT_WORKERS, workers)) != 0 ||
	    (rc = smarm_config_set_int(cfg, SMARM_OPT_PREEMPT_ASYNC,
				       !w->no_async)) != 0 ||
	    (rc = smarm_config_set_int(cfg, SMARM_OPT_CONTAIN_FAULTS, 1)) !=
		    0 ||
	    /* No reports (a crash and a restart each make some), as the
	     * Erlang peer sets logger's level to none. */
	    (rc = smarm_config_set_int(cfg, SMARM_OPT_LOG_LEVEL, 0)) != 0 ||
	    (w->max_actors > 0 &&
	     (rc = smarm_config_set_int(cfg, SMARM_OPT_MAX_ACTORS,
					w->max_actors)) != 0) ||
	    (opt_wake_slot >= 0 &&
	     (rc = smarm_config_set_int(cfg, SMARM_OPT_WAKE_SLOT,
					opt_wake_slot)) != 0) ||
	    (opt_spin_ns >= 0 &&
	     (rc = smarm_config_set_int(cfg, SMARM_OPT_IDLE_SPIN_NS,
					opt_spin_ns)) != 0) ||
	    (opt_async_slice_us >= 0 &&
	     (rc = smarm_config_set_int(cfg, SMARM_OPT_ASYNC_SLICE_NS,
					opt_async_slice_us * 1000)) != 0) ||
	    (opt_actor_stats >= 0 &&
	     (rc = smarm_config_set_int(cfg, SMARM_OPT_ACTOR_STATS,
					opt_actor_stats)) != 0) ||
	    (rc = smarm_node_open(&bench_node, cfg)) != 0) {
		smarm_config_free(cfg);
		bench_node = NULL;
		fprintf(stderr, "smarm-bench: node setup (workers=%d): %s\n",
			workers, smarm_err_name(rc));
		return -1;
	}
	smarm_config_free(cfg);
	return 0;
}

static int bench_run_node(const struct workload *w, int workers,
			  double *ns_per_op)
{
	struct bench_run r = { 0 };
	struct root_arg ra = { w, &r };
	smarm_node_t *node;
	int how = -1;
	intptr_t reason = 0;
	int rc;

	if (bench_node_open(w, workers) != 0)
		return -1;
	node = bench_node;
	current_name = w->name;
	alarm(HANG_LIMIT_S);
	rc = smarm_node_run(node, bench_root, &ra, &how, &reason);
	alarm(0);
	for (size_t i = 0; i < N_STATS; i++)
		smarm_node_get_int(node, stat_ids[i].id, &stat_last[i]);

	if (rc != 0) {
		fprintf(stderr, "smarm-bench: %s: smarm_node_run: %s\n",
			w->name, smarm_err_name(rc));
		return -1;
	}
	if (how != SMARM_EXIT_NORMAL) {
		fprintf(stderr,
			"smarm-bench: %s: root ended with kind %d "
			"reason %ld\n",
			w->name, how, (long)reason);
		return -1;
	}
	if (atomic_load(&r.failed)) {
		fprintf(stderr, "smarm-bench: %s: %s\n", w->name, r.why);
		return -1;
	}
	*ns_per_op = r.ops ? (double)r.ns / (double)r.ops : r.figure;
	snprintf(note_last, sizeof note_last, "%s", r.note);
	return 0;
}

/* bench_run_node, in a child process when the workload asks for one. */
static int bench_once(const struct workload *w, int workers, double *ns_per_op)
{
	int fds[2];
	int status = 0;
	double v = 0;
	pid_t pid;

	if (!w->fresh)
		return bench_run_node(w, workers, ns_per_op);
	if (pipe(fds) != 0) {
		perror("smarm-bench: pipe");
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("smarm-bench: fork");
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		/* The figure, then the run's note. */
		if (bench_run_node(w, workers, &v) != 0 ||
		    write(fds[1], &v, sizeof v) != (ssize_t)sizeof v ||
		    write(fds[1], note_last, sizeof note_last) !=
			    (ssize_t)sizeof note_last)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	ssize_t got = read(fds[0], &v, sizeof v);
	if (read(fds[0], note_last, sizeof note_last) !=
	    (ssize_t)sizeof note_last)
		note_last[0] = '\0';
	note_last[sizeof note_last - 1] = '\0';
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || got != (ssize_t)sizeof v) {
		fprintf(stderr, "smarm-bench: %s: child run failed\n", w->name);
		return -1;
	}
	*ns_per_op = v;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a;
	double y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *xs, int n)
{
	qsort(xs, (size_t)n, sizeof *xs, cmp_double);
	return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

/* Warm-up, then runs timed runs; prints the CSV line. 0 or -1. */
static int bench_workload_runs(const struct workload *w, int workers, int runs)
{
	double *xs = calloc((size_t)runs, sizeof *xs);
	double warm;

	if (xs == NULL || bench_once(w, workers, &warm) != 0) {
		free(xs);
		return -1;
	}
	int64_t sums[N_STATS] = { 0 };
	char *notes = calloc((size_t)runs, sizeof note_last);
	if (notes == NULL) {
		free(xs);
		return -1;
	}
	fprintf(stderr, "# smarm %s workers=%d runs:", w->name, workers);
	for (int i = 0; i < runs; i++) {
		if (bench_once(w, workers, &xs[i]) != 0) {
			fputc('\n', stderr);
			free(notes);
			free(xs);
			return -1;
		}
		fprintf(stderr, xs[i] < 10 ? " %.3f" : " %.1f", xs[i]);
		for (size_t k = 0; k < N_STATS; k++)
			sums[k] += stat_last[k];
		memcpy(&notes[(size_t)i * sizeof note_last], note_last,
		       sizeof note_last);
	}
	fprintf(stderr, " (warm-up %.1f)\n", warm);
	/* The workload's per-run detail (fairness: min/max counts,
	 * wake_latency: p50/p99 ms), on a line bench-compare.sh skips. */
	if (notes[0] != '\0') {
		fprintf(stderr,
			"# smarm-note %s workers=%d per run %s:", w->name,
			workers, w->note_what);
		for (int i = 0; i < runs; i++)
			fprintf(stderr, " %s",
				&notes[(size_t)i * sizeof note_last]);
		fputc('\n', stderr);
	}
	free(notes);
	if (opt_stats) {
		fprintf(stderr, "# smarm-stats %s workers=%d per run:", w->name,
			workers);
		for (size_t k = 0; k < N_STATS; k++)
			fprintf(stderr, " %s=%lld", stat_ids[k].name,
				(long long)(sums[k] / runs));
		fputc('\n', stderr);
	}
	/* Sub-10 ns figures (the compute loops) need the extra digits. */
	double med = median(xs, runs);
	printf(med < 10 ? "%s,smarm,%d,%.3f\n" : "%s,smarm,%d,%.1f\n", w->name,
	       workers, med);
	fflush(stdout);
	free(xs);
	return 0;
}

/* One workload on one node, closed afterwards. */
static int bench_workload(const struct workload *w, int workers, int runs)
{
	int rc = bench_workload_runs(w, workers, runs);
	bench_node_close();
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: smarm-bench [--workers N] [--runs|--repeat R] "
		   "[--wake-slot 0|1] [--spin-ns NS] [--stats]\n"
		   "                   [--async-slice-us US] "
		   "[--actor-stats 0|1] "
		   "[--skynet-leaves 10^k]\n"
		   "                   [workload...|all]\n"
		   "workloads:");
	for (size_t i = 0; i < N_WORKLOADS; i++)
		fprintf(f, " %s%s", workloads[i].name,
			workloads[i].run ? "" : "(later)");
	fputc('\n', f);
}

/* Parse an option value in [lo, hi]; -1 if it is not one. */
static long parse_count(const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 10);
	return (*s == '\0' || *end != '\0' || v < lo || v > hi) ? -1 : v;
}

static bool power_of_ten(long v)
{
	while (v > 1 && v % 10 == 0)
		v /= 10;
	return v == 1;
}

static const struct workload *find_workload(const char *name)
{
	for (size_t i = 0; i < N_WORKLOADS; i++)
		if (strcmp(workloads[i].name, name) == 0)
			return &workloads[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct workload *sel[MAX_SEL];
	size_t n_sel = 0;
	bool named = false; /* any workload word on the command line */
	bool all = false;   /* "all" among them */
	long runs = 5;
	int status = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		long *dst = NULL;
		long lo = 1;
		long hi = 0;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(a, "--stats") == 0) {
			opt_stats = true;
			continue;
		}
		if (strcmp(a, "--workers") == 0 || strcmp(a, "-w") == 0) {
			dst = &bench_workers;
			hi = 64;
		} else if (strcmp(a, "--runs") == 0 ||
			   strcmp(a, "--repeat") == 0 || strcmp(a, "-r") == 0) {
			dst = &runs;
			hi = 1000;
		} else if (strcmp(a, "--wake-slot") == 0) {
			dst = &opt_wake_slot;
			lo = 0;
			hi = 1;
		} else if (strcmp(a, "--actor-stats") == 0) {
			dst = &opt_actor_stats;
			lo = 0;
			hi = 1;
		} else if (strcmp(a, "--spin-ns") == 0) {
			dst = &opt_spin_ns;
			lo = 0;
			hi = 10000000;
		} else if (strcmp(a, "--async-slice-us") == 0) {
			dst = &opt_async_slice_us;
			lo = 100;
			hi = 10000000;
		} else if (strcmp(a, "--skynet-leaves") == 0) {
			dst = &skynet_leaves;
			lo = 10;
			hi = 10000000;
		}
		if (dst != NULL) {
			if (i + 1 >= argc ||
			    (*dst = parse_count(argv[++i], lo, hi)) < 0) {
				fprintf(stderr,
					"smarm-bench: %s takes a "
					"number in %ld..%ld\n",
					a, lo, hi);
				usage(stderr);
				return 2;
			}
			if (dst == &skynet_leaves && !power_of_ten(*dst)) {
				fprintf(stderr, "smarm-bench: --skynet-leaves "
						"takes a power of ten\n");
				return 2;
			}
			continue;
		}
		if (a[0] == '-') {
			fprintf(stderr, "smarm-bench: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
		named = true;
		if (strcmp(a, "all") == 0) {
			all = true;
			continue;
		}
		const struct workload *w = find_workload(a);
		if (w == NULL) {
			fprintf(stderr,
				"smarm-bench: unknown workload '%s', "
				"skipped\n",
				a);
			status = 2;
		} else if (n_sel < MAX_SEL) {
			sel[n_sel++] = w;
		}
	}
	if (all || !named) /* every workload, in §7 order */
		for (size_t k = 0; k < N_WORKLOADS && n_sel < MAX_SEL; k++)
			sel[n_sel++] = &workloads[k];

	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);

	for (size_t i = 0; i < n_sel; i++)
		if (bench_workload(sel[i], (int)bench_workers, (int)runs) != 0)
			status = 1;
	return status;
}
