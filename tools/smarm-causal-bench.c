/* SPDX-License-Identifier: MIT */
/*
 * smarm-causal-bench.c - the causal profiler's validation (issue 34), as
 * Coz validates itself with its toy benchmark: a reference workload
 * with a known bottleneck, profiled, and the measured curve printed
 * beside the predicted one.
 *
 * The workload is a fork-join pipeline of two actors on two workers.
 * Each round A sends "go" to B; both do fixed work (a dependent LCG
 * chain with a safe point every 256 steps: fixed work, not fixed wall
 * time, so that injected delay shows) in sites "path-a" and "path-b";
 * B answers "done", A waits for it, and the round counts at the
 * throughput point "rounds". A's work is the longer, so every round
 * waits on A (the critical path) and never on B, as long as A and B
 * run at once (two CPUs free for them; B's wake goes to the shared
 * queue, SMARM_OPT_WAKE_SLOT 0, so that the idle worker takes it). Predicted
 * program speedup of a virtual speedup s of a site, with Wa and Wb the work
 * times (the rest of a round, a few message hops, is left out; it is
 * microseconds against milliseconds): path-a: 1 - max(1 - s, Wb/Wa): linear up
 * to 1 - Wb/Wa, then flat; path-b: 0 (A is waited on whatever B does). On a
 * machine busier than its CPUs A and B take turns instead, B's work is then on
 * the critical path too, and the measured curves say so: the tool prints the
 * load average beside them. For each site the profiler runs on its own (that
 * site fixed, random speedups, Coz's weights), the experiments are summed per
 * speedup as Coz's viewer does (period = sum(duration) / sum(delta); speedup =
 * (base - period) / base against the same site's 0% experiments) and
 * printed as CSV: site,speedup_pct,experiments,measured_pct,predicted_pct.
 *
 * Usage: smarm-causal-bench [--experiments N] [--ms MS] [--wa-us US]
 *                           [--share PCT] [--out DIR] [--sampled]
 *   N experiments per site (default 240) of MS ms each (default 100);
 *   A's work about US us (default 2000), B's PCT% of it (default 60);
 *   the profiles are written to DIR/path-a.coz and DIR/path-b.coz
 *   (default: a temporary directory, removed), which Coz's viewer plots.
 *   --sampled: the sites are the functions bench_work_a and bench_work_b
 *   that A and B run, found by sampling (SMARM_CAUSAL_SCOPE_SAMPLED),
 *   instead of the named sites around them; the CSV still says path-a
 *   and path-b.
 * On a machine that other work keeps busy, run it in the real-time class
 * (as root: chrt -f 10 smarm-causal-bench ...), so that A and B get their
 * two CPUs; docs/benchmarks.md compares such runs with quiet ones.
 * Exit status: 0, or 1 if a run failed.
 */
#include <smarm/smarm.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPEEDUPS 21 /* 0..100% in 5% steps */

static volatile uint64_t sink;

static void burn(uint64_t steps)
{
	uint64_t x = sink;
	for (uint64_t i = 0; i < steps; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if ((i & 255) == 255)
			smarm_check();
	}
	sink = x;
}

/* Each path's work out of line, never cloned: in sampled scope the
 * sites are these functions. */
__attribute__((noipa)) void bench_work_a(uint64_t steps);
__attribute__((noipa)) void bench_work_b(uint64_t steps);
void bench_work_a(uint64_t steps)
{
	burn(steps);
}
void bench_work_b(uint64_t steps)
{
	burn(steps);
}

struct bench {
	uint64_t steps_a, steps_b; /* work per round */
	int want;		   /* experiments to wait for */
	smarm_chan_t *go, *done;   /* to B, from B */
	int failed;
};

/* B: the path nothing waits on (it ends first). */
static void path_b(void *arg)
{
	struct bench *b = arg;
	int v;
	for (;;) {
		if (smarm_chan_recv(b->go, &v) != 0 || v == 0)
			break;
		SMARM_SITE("path-b")
		bench_work_b(b->steps_b);
		if (smarm_chan_send(b->done, &v) != 0)
			break;
	}
}

/* A, which also runs the rounds: start B, do A's work, wait for B. */
static void path_a(void *arg)
{
	struct bench *b = arg;
	smarm_progress_t *rounds;
	smarm_pid_t pb;
	int v = 1, got;
	int64_t done = 0;
	if (smarm_chan_alloc(&b->go, sizeof(int), NULL) != 0 ||
	    smarm_chan_alloc(&b->done, sizeof(int), NULL) != 0 ||
	    smarm_progress_get(NULL, "rounds", SMARM_PROGRESS_THROUGHPUT,
			       &rounds) != 0 ||
	    smarm_actor_spawn(&pb, path_b, b, NULL) != 0) {
		b->failed = 1;
		return;
	}
	while (done < b->want) {
		if (smarm_chan_send(b->go, &v) != 0) {
			b->failed = 1;
			break;
		}
		SMARM_SITE("path-a")
		bench_work_a(b->steps_a);
		if (smarm_chan_recv(b->done, &got) != 0) {
			b->failed = 1;
			break;
		}
		smarm_progress_add(rounds, 1);
		smarm_node_get_int(smarm_node_current(),
				   SMARM_STAT_CAUSAL_EXPERIMENTS, &done);
	}
	v = 0;
	smarm_chan_send(b->go, &v);
	smarm_actor_join(pb, NULL, NULL);
}

/* Per speedup step: summed durations and deltas (Coz's viewer). */
struct curve {
	double dur[SPEEDUPS], delta[SPEEDUPS];
	int n[SPEEDUPS];
};

/* Read a profile's experiment and throughput-point lines. */
static int read_profile(const char *path, struct curve *cv)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int step = -1;
	if (f == NULL)
		return -1;
	memset(cv, 0, sizeof *cv);
	while (fgets(line, sizeof line, f) != NULL) {
		double sp;
		unsigned long long dur, delta;
		const char *q;
		if (strstr(line, "\"type\":\"experiment\"") != NULL &&
		    (q = strstr(line, "\"speedup\":")) != NULL &&
		    sscanf(q, "\"speedup\":%lf,\"duration\":%llu", &sp, &dur) ==
			    2) {
			step = (int)(sp * 20 + 0.5);
			if (step < 0 || step >= SPEEDUPS) {
				step = -1;
				continue;
			}
			cv->dur[step] += (double)dur;
			cv->n[step]++;
		} else if (step >= 0 &&
			   strstr(line, "\"name\":\"rounds\"") != NULL &&
			   (q = strstr(line, "\"delta\":")) != NULL &&
			   sscanf(q, "\"delta\":%llu", &delta) == 1) {
			cv->delta[step] += (double)delta;
		}
	}
	fclose(f);
	return 0;
}

/* ns per step of burn, measured on one actor with no profiler, in the
 * thread's CPU time: a busy machine that takes the CPU away meanwhile
 * does not make the steps look slower (and A's work shorter). */
static double ns_per_step;
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static void calibrate(void *arg)
{
	uint64_t t0, steps = 2000000;
	(void)arg;
	burn(steps / 10); /* warm */
	t0 = cpu_ns();
	burn(steps);
	ns_per_step = (double)(cpu_ns() - t0) / (double)steps;
}

static int run_site(const char *site, const char *path, struct bench *b,
		    uint64_t exp_ns, bool sampled)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int rc;
	if (smarm_config_alloc(&cfg) != 0)
		return -1;
	smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2);
	/* B's wake goes to the shared queue, where the other worker takes
	 * it, not to A's wake slot behind A's work. */
	smarm_config_set_int(cfg, SMARM_OPT_WAKE_SLOT, 0);
	if (smarm_config_set_causal(cfg, path, exp_ns) != 0 ||
	    smarm_config_set_causal_fixed(cfg, site, -1) != 0 ||
	    smarm_config_set_causal_scope(
		    cfg, sampled ? SMARM_CAUSAL_SCOPE_SAMPLED
				 : SMARM_CAUSAL_SCOPE_NAMED) != 0 ||
	    smarm_node_open(&node, cfg) != 0) {
		smarm_config_free(cfg);
		return -1;
	}
	smarm_config_free(cfg);
	rc = smarm_node_run(node, path_a, b, NULL, NULL);
	smarm_node_close(node);
	return rc != 0 || b->failed ? -1 : 0;
}

int main(int argc, char **argv)
{
	int want = 240, ms = 100, wa_us = 2000, share = 60;
	const char *out = NULL;
	char dir[] = "/tmp/smarm-causal-bench.XXXXXX";
	const char *sites[2] = { "path-a", "path-b" };
	const char *fns[2] = { "bench_work_a", "bench_work_b" };
	bool sampled = false;
	struct curve cv[2];
	double wa, wb;
	smarm_node_t *node = NULL;

	for (int i = 1; i < argc; i += 2) {
		if (strcmp(argv[i], "--sampled") == 0) {
			sampled = true;
			i--;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "usage: see the file's header\n");
			return 1;
		}
		if (strcmp(argv[i], "--experiments") == 0)
			want = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--ms") == 0)
			ms = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--wa-us") == 0)
			wa_us = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--share") == 0)
			share = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--out") == 0)
			out = argv[i + 1];
		else {
			fprintf(stderr, "usage: see the file's header\n");
			return 1;
		}
	}
	if (want < 1 || ms < 1 || wa_us < 1 || share < 0 || share > 100)
		return 1;
	if (out == NULL && (out = mkdtemp(dir)) == NULL)
		return 1;

	{ /* one worker: the actor's thread is the one whose clock runs */
		smarm_config_t *cfg = NULL;
		if (smarm_config_alloc(&cfg) != 0)
			return 1;
		smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1);
		if (smarm_node_open(&node, cfg) != 0 ||
		    smarm_node_run(node, calibrate, NULL, NULL, NULL) != 0)
			return 1;
		smarm_config_free(cfg);
		smarm_node_close(node);
	}

	for (int k = 0; k < 2; k++) {
		struct bench b = { 0 };
		char path[1100];
		b.steps_a = (uint64_t)(wa_us * 1000.0 / ns_per_step);
		b.steps_b = b.steps_a * (uint64_t)share / 100;
		b.want = want;
		snprintf(path, sizeof path, "%s/%s.coz", out, sites[k]);
		if (run_site(sampled ? fns[k] : sites[k], path, &b,
			     (uint64_t)ms * 1000000, sampled) != 0 ||
		    read_profile(path, &cv[k]) != 0) {
			fprintf(stderr, "smarm-causal-bench: %s failed\n",
				sites[k]);
			return 1;
		}
		if (out == dir)
			unlink(path);
	}
	if (out == dir)
		rmdir(dir);

	for (int k = 0; k < 2; k++)
		if (cv[k].delta[0] <= 0) {
			fprintf(stderr, "smarm-causal-bench: no baseline\n");
			return 1;
		}
	wa = wa_us * 1000.0;
	wb = wa * share / 100.0;
	/* The prediction needs A and B on two CPUs at once: say how busy
	 * the machine was. */
	{
		FILE *f = fopen("/proc/loadavg", "r");
		double l1 = -1;
		if (f != NULL) {
			if (fscanf(f, "%lf", &l1) != 1)
				l1 = -1;
			fclose(f);
		}
		printf("# %s sites; load %.2f; round at 0%%: %.0f us (A's "
		       "work %.0f us)\n",
		       sampled ? "sampled" : "named", l1,
		       cv[0].dur[0] / cv[0].delta[0] / 1000.0, wa / 1000.0);
	}
	printf("site,speedup_pct,experiments,measured_pct,predicted_pct\n");
	for (int k = 0; k < 2; k++) {
		double base;
		base = cv[k].dur[0] / cv[k].delta[0];
		for (int s = 0; s < SPEEDUPS; s++) {
			double pred = 0, meas;
			if (cv[k].n[s] == 0 || cv[k].delta[s] <= 0)
				continue;
			meas = (base - cv[k].dur[s] / cv[k].delta[s]) / base;
			if (k == 0) {
				double p = 1 - s / 20.0;
				pred = 1 - (p > wb / wa ? p : wb / wa);
			}
			printf("%s,%d,%d,%.1f,%.1f\n", sites[k], s * 5,
			       cv[k].n[s], meas * 100, pred * 100);
		}
	}
	return 0;
}
