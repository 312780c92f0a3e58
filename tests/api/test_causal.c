/* SPDX-License-Identifier: MIT */
/*
 * test_causal.c - the causal profiler (smarm_config_set_causal,
 * SMARM_CAUSAL_FILE, progress points, named sites): every call's
 * argument errors; exact progress counts with the profiler off; the
 * profile of a small two-site pipeline, parsed line by line by
 * tests/python/check_causal.py (fields, points after each experiment,
 * the speedup steps with about a quarter at 0); and the delay
 * accounting, by orderings and lower bounds only: a runnable bystander
 * is held at its pay points at least as long as another actor ran a
 * site virtually sped up by 100%, and owes nothing at 0%; an actor a
 * message wakes skips the
 * delay that accrued while it waited and finishes while the site still
 * runs, one its own timeout wakes sleeps at least what it owed. The
 * checker's path and the interpreter come from the environment
 * (SMARM_TEST_CAUSAL_CHECK, SMARM_TEST_PYTHON).
 */
#include "harness.h"

#include <string.h>
#include <sys/stat.h>

static void tmp_path(char *buf, size_t cap)
{
	char dir[] = "/tmp/smarm-causal-test.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(buf, cap, "%s/profile.coz", dir);
}

static void tmp_remove(const char *path)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s", path);
	unlink(path);
	*strrchr(dir, '/') = '\0';
	rmdir(dir);
}

static int check(const char *path, int want, const char *sites,
		 const char *points)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' %d '%s' '%s'",
		 getenv("SMARM_TEST_PYTHON"), getenv("SMARM_TEST_CAUSAL_CHECK"),
		 path, want, sites, points);
	return system(cmd);
}

static smarm_node_t *open_scoped(int workers, const char *path, uint64_t exp_ns,
				 const char *site, int pct, int scope)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS,
					      harness_workers(workers)),
			 0);
	ck_assert_int_eq(smarm_config_set_causal(cfg, path, exp_ns), 0);
	ck_assert_int_eq(smarm_config_set_causal_fixed(cfg, site, pct), 0);
	if (scope >= 0) /* else SMARM_CAUSAL_SCOPE's */
		ck_assert_int_eq(smarm_config_set_causal_scope(cfg, scope), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	return node;
}

static smarm_node_t *open_causal(int workers, const char *path, uint64_t exp_ns,
				 const char *site, int pct)
{
	return open_scoped(workers, path, exp_ns, site, pct,
			   SMARM_CAUSAL_SCOPE_NAMED);
}

/* Fixed work: a dependent LCG chain with a safe point every 256 steps
 * (a timed busy-wait would absorb the injected delay). */
static volatile uint64_t sink;
static void burn(uint32_t steps)
{
	uint64_t x = sink;
	for (uint32_t i = 0; i < steps; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if ((i & 255) == 255)
			smarm_check();
	}
	sink = x;
}

/* ---------------------------------------------------------- errors */

START_TEST(test_causal_config_errors_einval)
{
	smarm_config_t *cfg = NULL;
	char big[1100];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_causal(NULL, "x", 0), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal(cfg, big, 0), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal(cfg, "x", 999), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal(cfg, "x", MS(60001)),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal(cfg, "x", MS(1)), 0);
	ck_assert_int_eq(smarm_config_set_causal(cfg, NULL, 0), 0);
	ck_assert_int_eq(smarm_config_set_causal_fixed(NULL, NULL, -1),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal_fixed(cfg, big, -1),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal_fixed(cfg, NULL, -2),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal_fixed(cfg, NULL, 7),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal_fixed(cfg, NULL, 105),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal_fixed(cfg, "s", 35), 0);
	ck_assert_int_eq(smarm_config_set_causal_fixed(cfg, NULL, -1), 0);
	ck_assert_int_eq(smarm_config_set_causal_scope(NULL, 0), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal_scope(cfg, -1), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_causal_scope(cfg, 3), SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_config_set_causal_scope(cfg, SMARM_CAUSAL_SCOPE_SAMPLED),
		0);
	ck_assert_int_eq(
		smarm_config_set_causal_scope(cfg, SMARM_CAUSAL_SCOPE_NAMED),
		0);
	smarm_config_free(cfg);
}
END_TEST

/* A profile that cannot be created fails the open. */
START_TEST(test_causal_bad_path_esystem)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_causal(
				 cfg, "/nonexistent-dir/sub/profile.coz", 0),
			 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), SMARM_ESYSTEM);
	smarm_config_free(cfg);
}
END_TEST

START_TEST(test_causal_progress_errors_einval)
{
	smarm_node_t *node = harness_open(1);
	smarm_progress_t *pt = NULL, *lat = NULL;
	char name[80];
	ck_assert_int_eq(smarm_progress_get(node, "p", 0, &pt), SMARM_EINVAL);
	ck_assert_int_eq(smarm_progress_get(node, "p", 3, &pt), SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_progress_get(node, "p", SMARM_PROGRESS_THROUGHPUT, NULL),
		SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_progress_get(node, NULL, SMARM_PROGRESS_THROUGHPUT, &pt),
		SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_progress_get(node, "", SMARM_PROGRESS_THROUGHPUT, &pt),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_progress_get(node, "a\"b",
					    SMARM_PROGRESS_THROUGHPUT, &pt),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_progress_get(node, "a\tb",
					    SMARM_PROGRESS_THROUGHPUT, &pt),
			 SMARM_EINVAL);
	memset(name, 'n', 64);
	name[64] = '\0';
	ck_assert_int_eq(
		smarm_progress_get(node, name, SMARM_PROGRESS_THROUGHPUT, &pt),
		SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_progress_get(NULL, "p", SMARM_PROGRESS_THROUGHPUT, &pt),
		SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_progress_named("p"), SMARM_ENOTACTOR);
	ck_assert_int_eq(
		smarm_progress_get(node, "p", SMARM_PROGRESS_THROUGHPUT, &pt),
		0);
	/* The same name: the same point; of another kind: refused. */
	ck_assert_int_eq(
		smarm_progress_get(node, "p", SMARM_PROGRESS_THROUGHPUT, &lat),
		0);
	ck_assert_ptr_eq(pt, lat);
	ck_assert_int_eq(
		smarm_progress_get(node, "p", SMARM_PROGRESS_LATENCY, &lat),
		SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_progress_get(node, "l", SMARM_PROGRESS_LATENCY, &lat), 0);
	ck_assert_int_eq(smarm_progress_add(NULL, 1), SMARM_EINVAL);
	ck_assert_int_eq(smarm_progress_add(pt, 0), SMARM_EINVAL);
	ck_assert_int_eq(smarm_progress_add(lat, 1), SMARM_EINVAL);
	ck_assert_int_eq(smarm_progress_begin(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_progress_begin(pt), SMARM_EINVAL);
	ck_assert_int_eq(smarm_progress_end(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_progress_end(pt), SMARM_EINVAL);
	ck_assert_int_eq(smarm_progress_get_counts(NULL, NULL, NULL),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_site_begin("s", NULL), SMARM_EINVAL);
	{
		smarm_site_t sv;
		ck_assert_int_eq(smarm_site_begin("s", &sv), SMARM_ENOTACTOR);
		ck_assert_int_eq(smarm_site_end(SMARM_SITE_NONE),
				 SMARM_ENOTACTOR);
	}
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* 64 points, then ENOMEM; the same for sites (inside an actor). */
static void limits_root(void *arg)
{
	char name[16];
	smarm_progress_t *pt;
	smarm_site_t sv;
	(void)arg;
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof name, "p%d", i);
		HARNESS_EQ(smarm_progress_get(NULL, name,
					      SMARM_PROGRESS_THROUGHPUT, &pt),
			   0);
	}
	HARNESS_EQ(smarm_progress_get(NULL, "one-more",
				      SMARM_PROGRESS_THROUGHPUT, &pt),
		   SMARM_ENOMEM);
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof name, "s%d", i);
		HARNESS_EQ(smarm_site_begin(name, &sv), 0);
		HARNESS_EQ(smarm_site_end(sv), 0);
	}
	HARNESS_EQ(smarm_site_begin("one-more", &sv), SMARM_ENOMEM);
	HARNESS_EQ(smarm_site_end(sv), 0); /* leaves it where it was */
	HARNESS_EQ(smarm_site_begin("bad\\name", &sv), SMARM_EINVAL);
	HARNESS_EQ(smarm_site_end(sv), 0);
	/* An id no site of the node has. */
	sv.id = 65;
	HARNESS_EQ(smarm_site_end(sv), SMARM_EINVAL);
}

START_TEST(test_causal_limits_enomem)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, limits_root, NULL), 0);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------- counts, sites */

#define ADDERS 4
#define ADDS 1000

static smarm_progress_t *cnt_pt, *cnt_lat;

static void adder(void *arg)
{
	(void)arg;
	for (int i = 0; i < ADDS; i++) {
		HARNESS_EQ(smarm_progress_add(cnt_pt, 2), 0);
		HARNESS_EQ(smarm_progress_named("named"), 0);
		HARNESS_EQ(smarm_progress_begin(cnt_lat), 0);
		if (i % 2 == 0)
			HARNESS_EQ(smarm_progress_end(cnt_lat), 0);
		SMARM_SITE("outer")
		{
			smarm_site_t sv;
			HARNESS_EQ(smarm_site_begin("inner", &sv), 0);
			HARNESS_EQ(smarm_site_end(sv), 0);
		}
	}
}

static void counts_root(void *arg)
{
	smarm_pid_t p[ADDERS];
	(void)arg;
	HARNESS_EQ(smarm_progress_get(NULL, "work", SMARM_PROGRESS_THROUGHPUT,
				      &cnt_pt),
		   0);
	HARNESS_EQ(smarm_progress_get(NULL, "req", SMARM_PROGRESS_LATENCY,
				      &cnt_lat),
		   0);
	for (int i = 0; i < ADDERS; i++)
		HARNESS_EQ(smarm_actor_spawn(&p[i], adder, NULL, NULL), 0);
	for (int i = 0; i < ADDERS; i++)
		HARNESS_EQ(smarm_actor_join(p[i], NULL, NULL), 0);
}

/* With the profiler off, points count exactly and sites nest. */
START_TEST(test_causal_progress_counts_exact)
{
	smarm_node_t *node = harness_open(2);
	smarm_progress_t *named = NULL;
	uint64_t c = 0, d = 0;
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, counts_root, NULL, NULL, NULL),
			 0);
	harness_checks_assert();
	ck_assert_int_eq(smarm_progress_get_counts(cnt_pt, &c, &d), 0);
	ck_assert_uint_eq(c, 2 * ADDERS * ADDS);
	ck_assert_uint_eq(d, 0);
	ck_assert_int_eq(smarm_progress_get_counts(cnt_lat, &c, &d), 0);
	ck_assert_uint_eq(c, ADDERS * ADDS);
	ck_assert_uint_eq(d, ADDERS * ADDS / 2);
	ck_assert_int_eq(smarm_progress_get(node, "named",
					    SMARM_PROGRESS_THROUGHPUT, &named),
			 0);
	ck_assert_int_eq(smarm_progress_get_counts(named, &c, NULL), 0);
	ck_assert_uint_eq(c, ADDERS * ADDS);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_CAUSAL_EXPERIMENTS), 0);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_CAUSAL_DELAY_NS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
}
END_TEST

/* ------------------------------------------------------- profile */

struct pipe {
	smarm_chan_t *ch;
	_Atomic int stop;
	int want; /* experiments to wait for */
	smarm_progress_t *items, *lat;
};

static void stage_a(void *arg)
{
	struct pipe *p = arg;
	int v = 1;
	while (!atomic_load(&p->stop)) {
		HARNESS_EQ(smarm_progress_begin(p->lat), 0);
		SMARM_SITE("stage-a")
		burn(20000);
		HARNESS_EQ(smarm_chan_send(p->ch, &v), 0);
	}
	v = 0;
	HARNESS_EQ(smarm_chan_send(p->ch, &v), 0);
}

static void stage_b(void *arg)
{
	struct pipe *p = arg;
	int v;
	for (;;) {
		HARNESS_EQ(smarm_chan_recv(p->ch, &v), 0);
		if (v == 0)
			break;
		SMARM_SITE("stage-b")
		burn(5000);
		HARNESS_EQ(smarm_progress_add(p->items, 1), 0);
		HARNESS_EQ(smarm_progress_end(p->lat), 0);
	}
}

/* Run the pipeline's two stages until p->want experiments are over
 * (bounded: 120 s, scaled), then stop and join them. */
static void pipe_drive(struct pipe *p, smarm_actor_cb fa, smarm_actor_cb fb)
{
	smarm_pid_t a, b;
	uint64_t t0 = smarm_now_ns();
	HARNESS_EQ(smarm_chan_alloc(&p->ch, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_progress_get(NULL, "items", SMARM_PROGRESS_THROUGHPUT,
				      &p->items),
		   0);
	HARNESS_EQ(smarm_progress_get(NULL, "latency", SMARM_PROGRESS_LATENCY,
				      &p->lat),
		   0);
	HARNESS_EQ(smarm_actor_spawn(&b, fb, p, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&a, fa, p, NULL), 0);
	while (harness_actor_stat(SMARM_STAT_CAUSAL_EXPERIMENTS) < p->want &&
	       harness_since(t0) < (uint64_t)(120e9 * harness_time_scale()))
		smarm_actor_sleep(MS(10));
	atomic_store(&p->stop, 1);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	harness_chan_drop(p->ch);
}

static void pipe_root(void *arg)
{
	pipe_drive(arg, stage_a, stage_b);
}

/* A two-stage pipeline's profile: Coz's lines, every field, the speedup
 * steps with about a quarter at 0. */
START_TEST(test_causal_profile_parses)
{
	char path[1024];
	struct pipe p = { .want = 80 };
	smarm_node_t *node;
	tmp_path(path, sizeof path);
	node = open_causal(2, path, MS(20), NULL, -1);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, pipe_root, &p, NULL, NULL), 0);
	harness_checks_assert();
	ck_assert_int_ge(harness_stat(node, SMARM_STAT_CAUSAL_EXPERIMENTS), 80);
	ck_assert_int_eq(smarm_node_close(node), 0);
	ck_assert_int_eq(check(path, 80, "stage-a,stage-b", "items,latency"),
			 0);
	tmp_remove(path);
}
END_TEST

/* SMARM_CAUSAL_FILE turns the profiler on for a node with no config. */
START_TEST(test_causal_env_file)
{
	char path[1024];
	struct pipe p = { .want = 2 };
	smarm_node_t *node = NULL;
	smarm_config_t *cfg = NULL;
	tmp_path(path, sizeof path);
	ck_assert_int_eq(setenv("SMARM_CAUSAL_FILE", path, 1), 0);
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_causal(cfg, NULL, MS(20)), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 2), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, pipe_root, &p, NULL, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(smarm_node_close(node), 0);
	unsetenv("SMARM_CAUSAL_FILE");
	ck_assert_int_eq(check(path, 0, "stage-a,stage-b", "items,latency"), 0);
	tmp_remove(path);
}
END_TEST

/* ------------------------------------------------ delay accounting */

struct acct {
	_Atomic int seq;     /* order of the events below */
	_Atomic int in_site; /* the hot actor is in its site, measuring */
	_Atomic int left;    /* ... and has left it */
	_Atomic uint64_t by_iters;
	uint64_t by_held; /* ns the bystander spent in its pay points */
	uint64_t by_owed; /* delay injected while it ran */
	int pct;
	int e_hot, e_msg, e_tmo; /* seq of each actor's finish */
	uint64_t tmo_paid;	 /* ns tmo_woken took to pass its pay point */
	smarm_chan_t *ch;
};

#define DELAY_SEEN MS(100)

/* In site "hot" for 600 ms wall (at 100%: delay injected at the rate it
 * runs), sending to the message-woken actor once delay has built up. */
static void hot(void *arg)
{
	struct acct *a = arg;
	uint64_t t0;
	bool sent = false;
	int v = 1;
	SMARM_SITE("hot")
	{
		/* At a speedup, measure once the experiment is on. */
		while (a->pct > 0 &&
		       harness_actor_stat(SMARM_STAT_CAUSAL_DELAY_NS) == 0)
			burn(2000);
		atomic_store(&a->in_site, 1);
		t0 = smarm_now_ns();
		while (harness_since(t0) < MS(600)) {
			burn(2000);
			if (!sent && a->ch != NULL &&
			    harness_actor_stat(SMARM_STAT_CAUSAL_DELAY_NS) >
				    (int64_t)DELAY_SEEN) {
				HARNESS_EQ(smarm_chan_send(a->ch, &v), 0);
				sent = true;
			}
		}
		atomic_store(&a->in_site, 0);
		/* Its last moment in the site (a later one could be
		 * descheduled past a paying actor's last sleep). */
		a->e_hot = atomic_fetch_add(&a->seq, 1);
	}
	atomic_store(&a->left, 1);
	if (!sent && a->ch != NULL)
		HARNESS_EQ(smarm_chan_send(a->ch, &v), 0);
}

/*
 * Runnable all along: counts its iterations while hot is in its site,
 * and how long its pay points held it; once hot has left, one more pay
 * point settles what it still owes.
 */
static void bystander(void *arg)
{
	struct acct *a = arg;
	int64_t d0 = harness_actor_stat(SMARM_STAT_CAUSAL_DELAY_NS);
	uint64_t held = 0;
	for (;;) {
		bool last = atomic_load(&a->left);
		uint64_t t;
		burn(255); /* no pay point inside */
		t = smarm_now_ns();
		smarm_check();
		held += harness_since(t);
		if (atomic_load(&a->in_site))
			atomic_fetch_add(&a->by_iters, 1);
		if (last)
			break;
	}
	a->by_held = held;
	a->by_owed =
		(uint64_t)(harness_actor_stat(SMARM_STAT_CAUSAL_DELAY_NS) - d0);
}

/* Parked in a receive from the start; hot's message wakes it. */
static void msg_woken(void *arg)
{
	struct acct *a = arg;
	int v;
	HARNESS_EQ(smarm_chan_recv(a->ch, &v), 0);
	smarm_check(); /* a pay point: it owes nothing */
	a->e_msg = atomic_fetch_add(&a->seq, 1);
}

/* Only its own timeouts wake it: it owes all the delay injected. */
static void tmo_woken(void *arg)
{
	struct acct *a = arg;
	uint64_t t0;
	while (harness_actor_stat(SMARM_STAT_CAUSAL_DELAY_NS) <=
	       (int64_t)DELAY_SEEN)
		smarm_actor_sleep(MS(1));
	t0 = smarm_now_ns();
	smarm_check(); /* pays what it owes: sleeps at least that long */
	a->tmo_paid = harness_since(t0);
	a->e_tmo = atomic_fetch_add(&a->seq, 1);
}

static void by_root(void *arg)
{
	struct acct *a = arg;
	smarm_pid_t h, b;
	HARNESS_EQ(smarm_actor_spawn(&b, bystander, a, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&h, hot, a, NULL), 0);
	HARNESS_EQ(smarm_actor_join(h, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
}

static void bystander_run(int pct, struct acct *out)
{
	char path[1024];
	struct acct a = { .pct = pct };
	smarm_node_t *node;
	tmp_path(path, sizeof path);
	node = open_causal(2, path, MS(30000), "hot", pct);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, by_root, &a, NULL, NULL), 0);
	harness_checks_assert();
	if (pct > 0)
		ck_assert_int_gt(harness_stat(node, SMARM_STAT_CAUSAL_DELAY_NS),
				 0);
	else
		ck_assert_int_eq(harness_stat(node, SMARM_STAT_CAUSAL_DELAY_NS),
				 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	ck_assert_int_eq(check(path, 0, "hot", "none"), 0);
	tmp_remove(path);
	out->by_iters = atomic_load(&a.by_iters);
	out->by_held = a.by_held;
	out->by_owed = a.by_owed;
}

/*
 * A site sped up by 100%: every other actor owes the site's CPU time,
 * so a runnable bystander's pay points hold it at least that long (a
 * lower bound, which load only lengthens: what the site ran while the
 * bystander ran, less the last debt under 1 ms, which a smarm_check
 * leaves for a later pay point); at
 * 0% nothing is owed. The iterations it made meanwhile are printed
 * (on an idle machine next to nothing at 100%).
 */
START_TEST(test_causal_bystander_pays_delay)
{
	struct acct at0, at100;
	bystander_run(0, &at0);
	bystander_run(100, &at100);
	printf("# bystander at 0%%: %llu iterations, held %llu us; at 100%%: "
	       "%llu iterations, held %llu us of %llu us owed\n",
	       (unsigned long long)at0.by_iters,
	       (unsigned long long)at0.by_held / 1000,
	       (unsigned long long)at100.by_iters,
	       (unsigned long long)at100.by_held / 1000,
	       (unsigned long long)at100.by_owed / 1000);
	ck_assert_uint_gt(at0.by_iters, 0);
	ck_assert_uint_eq(at0.by_owed, 0);
	ck_assert_uint_gt(at100.by_owed, MS(10));
	ck_assert_uint_ge(at100.by_held + MS(1) + US(100), at100.by_owed);
}
END_TEST

/* Run root(arg) on a node that profiles site "hot" at a fixed 100%. */
static void run_hot(smarm_actor_cb root, void *arg)
{
	char path[1024];
	smarm_node_t *node;
	tmp_path(path, sizeof path);
	node = open_causal(2, path, MS(30000), "hot", 100);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, root, arg, NULL, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(smarm_node_close(node), 0);
	tmp_remove(path);
}

static void wake_root(void *arg)
{
	struct acct *a = arg;
	smarm_pid_t h, m, t;
	HARNESS_EQ(smarm_chan_alloc(&a->ch, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&m, msg_woken, a, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&t, tmo_woken, a, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&h, hot, a, NULL), 0);
	HARNESS_EQ(smarm_actor_join(h, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(m, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(t, NULL, NULL), 0);
	harness_chan_drop(a->ch);
}

/* Coz's wake rules: the message-woken actor finishes while the site
 * still runs; the timeout-woken one pays what accrued while it slept. */
START_TEST(test_causal_wake_rules_order)
{
	struct acct a = { .pct = 100 };
	run_hot(wake_root, &a);
	ck_assert_int_lt(a.e_msg, a.e_hot);
	/* It owed at least DELAY_SEEN and can only pay by sleeping: a lower
	 * bound, which load only lengthens. (While hot runs on a CPU the
	 * debt does not shrink, so it usually finishes after hot, but hot
	 * may wait in a run queue meanwhile, which adds no delay.) */
	ck_assert_uint_ge(a.tmo_paid, DELAY_SEEN);
}
END_TEST

/* ------------------------------------------- pay points that wake no one */

struct batch {
	_Atomic int left;  /* hot has left its site */
	uint64_t owed;	   /* delay injected, read after it left */
	uint64_t check_ns; /* the bystander's smarm_check after that */
	uint64_t send_ns;  /* its channel send after that */
};

/* In site "hot" at 100% until a little delay is owed (well under the
 * 1 ms a pay point that wakes no one waits for), then out of it. */
static void small_hot(void *arg)
{
	struct batch *b = arg;
	SMARM_SITE("hot")
	{
		while (harness_actor_stat(SMARM_STAT_CAUSAL_DELAY_NS) <
		       (int64_t)US(200))
			burn(500);
	}
	atomic_store(&b->left, 1);
}

/* Runnable all along with no pay point until hot has left: it owes all
 * the delay. Then a smarm_check, which pays nothing of so small a
 * debt, then a send, the catch-up before a wake, which pays it all. */
static void small_debtor(void *arg)
{
	struct batch *b = arg;
	smarm_chan_t *ch = NULL;
	uint64_t t;
	int v = 1;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	while (!atomic_load(&b->left))
		; /* no pay point: preemption keeps the debt */
	b->owed = (uint64_t)harness_actor_stat(SMARM_STAT_CAUSAL_DELAY_NS);
	t = smarm_now_ns();
	smarm_check();
	b->check_ns = harness_since(t);
	t = smarm_now_ns();
	HARNESS_EQ(smarm_chan_send(ch, &v), 0);
	b->send_ns = harness_since(t);
	harness_chan_drop(ch);
}

static void small_root(void *arg)
{
	smarm_pid_t h, d;
	HARNESS_EQ(smarm_actor_spawn(&d, small_debtor, arg, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&h, small_hot, arg, NULL), 0);
	HARNESS_EQ(smarm_actor_join(h, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(d, NULL, NULL), 0);
}

/*
 * A pay point that wakes no one (smarm_check) leaves a debt under 1 ms
 * for later, so that an actor does not park and wake every few
 * microseconds of delay (that overhead slowed the site's own actor and
 * halved the named profile's slope); the catch-up before a send still
 * pays it all: the send holds the actor at least what it owed (a lower
 * bound, which load only lengthens; with the check paying, the send
 * owes nothing and returns at once).
 */
START_TEST(test_causal_check_leaves_small_debt)
{
	struct batch b = { 0 };
	run_hot(small_root, &b);
	printf("# owed %llu us: check held %llu us, send held %llu us\n",
	       (unsigned long long)b.owed / 1000,
	       (unsigned long long)b.check_ns / 1000,
	       (unsigned long long)b.send_ns / 1000);
	ck_assert_uint_ge(b.owed, US(200));
	ck_assert_uint_lt(b.owed, MS(1));
	ck_assert_uint_ge(b.send_ns + US(20), b.owed);
}
END_TEST

/* ------------------------------------------------------ sampled scope */

/* The hot functions of the sampled pipeline: out of line, never cloned
 * (their symbols are the sites' names). */
__attribute__((noipa)) void causal_test_hot_a(uint32_t steps);
__attribute__((noipa)) void causal_test_hot_b(uint32_t steps);
void causal_test_hot_a(uint32_t steps)
{
	burn(steps);
}
void causal_test_hot_b(uint32_t steps)
{
	burn(steps);
}

/* The first stage of the sampled pipelines: hot's work, then a send. */
static void hot_stage(struct pipe *p, void (*hot)(uint32_t))
{
	int v = 1;
	while (!atomic_load(&p->stop)) {
		HARNESS_EQ(smarm_progress_begin(p->lat), 0);
		hot(20000);
		HARNESS_EQ(smarm_chan_send(p->ch, &v), 0);
	}
	v = 0;
	HARNESS_EQ(smarm_chan_send(p->ch, &v), 0);
}

static void sampled_a(void *arg)
{
	hot_stage(arg, causal_test_hot_a);
}

static void sampled_b(void *arg)
{
	struct pipe *p = arg;
	int v;
	for (;;) {
		HARNESS_EQ(smarm_chan_recv(p->ch, &v), 0);
		if (v == 0)
			break;
		causal_test_hot_b(5000);
		HARNESS_EQ(smarm_progress_add(p->items, 1), 0);
		HARNESS_EQ(smarm_progress_end(p->lat), 0);
	}
}

static void sampled_root(void *arg)
{
	pipe_drive(arg, sampled_a, sampled_b);
}

/*
 * The profile's lines of a type whose key is what (first == 0), or
 * starts with what followed by a line number in first..last: how many
 * (*n), and the sum of their "count" (samples lines).
 */
static long long lines_scan(const char *path, const char *type, const char *key,
			    const char *what, int first, int last, int *n)
{
	FILE *f = fopen(path, "r");
	char line[512], t[64], k[160];
	long long sum = 0;
	ck_assert_ptr_nonnull(f);
	snprintf(t, sizeof t, "\"type\":\"%s\"", type);
	snprintf(k, sizeof k, "\"%s\":\"%s%s", key, what, first ? "" : "\"");
	*n = 0;
	while (fgets(line, sizeof line, f) != NULL) {
		const char *c = strstr(line, k);
		long long v = 0;
		int at;
		if (strstr(line, t) == NULL || c == NULL)
			continue;
		if (first != 0 && (sscanf(c + strlen(k), "%d", &at) != 1 ||
				   at < first || at > last))
			continue;
		(*n)++;
		if ((c = strstr(line, "\"count\":")) != NULL)
			sscanf(c, "\"count\":%lld", &v);
		sum += v;
	}
	fclose(f);
	return sum;
}

/* The profile's lines of a type that name what: how many, and the sum
 * of their "count" (samples lines). */
static int lines_naming(const char *path, const char *type, const char *key,
			const char *what, long long *count)
{
	int n;
	*count = lines_scan(path, type, key, what, 0, 0, &n);
	return n;
}

/*
 * Sampled scope: the pipeline's stages run out-of-line functions of this
 * executable and mark no site; the profile has samples lines naming the
 * hot one (most of the CPU time), experiments that selected it (picked
 * at random from the samples: it holds most of them), and Coz's lines
 * and speedup weights as in named scope.
 */
START_TEST(test_causal_sampled_profile_names_function)
{
	char path[1024];
	struct pipe p = { .want = 80 };
	smarm_node_t *node;
	long long samples = 0, unused;
	int sel;
	tmp_path(path, sizeof path);
	node = open_scoped(2, path, MS(20), NULL, -1,
			   SMARM_CAUSAL_SCOPE_SAMPLED);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, sampled_root, &p, NULL, NULL), 0);
	harness_checks_assert();
	ck_assert_int_ge(harness_stat(node, SMARM_STAT_CAUSAL_EXPERIMENTS), 80);
	ck_assert_int_eq(smarm_node_close(node), 0);
	ck_assert_int_gt(lines_naming(path, "samples", "location",
				      "causal_test_hot_a", &samples),
			 0);
	sel = lines_naming(path, "experiment", "selected", "causal_test_hot_a",
			   &unused);
	printf("# sampled: causal_test_hot_a %lld samples, selected by %d "
	       "experiments\n",
	       samples, sel);
	ck_assert_int_gt(samples, 100);
	ck_assert_int_gt(sel, 0);
	ck_assert_int_eq(check(path, 80, "*", "items,latency"), 0);
	tmp_remove(path);
}
END_TEST

/* A fixed function (by name) is the only one selected, and its
 * experiments inject delay (samples in it while it is selected). */
START_TEST(test_causal_sampled_fixed_function_injects)
{
	char path[1024];
	struct pipe p = { .want = 20 };
	smarm_node_t *node;
	long long unused;
	int sel;
	tmp_path(path, sizeof path);
	node = open_scoped(2, path, MS(20), "causal_test_hot_a", 50,
			   SMARM_CAUSAL_SCOPE_SAMPLED);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, sampled_root, &p, NULL, NULL), 0);
	harness_checks_assert();
	ck_assert_int_gt(harness_stat(node, SMARM_STAT_CAUSAL_DELAY_NS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	sel = lines_naming(path, "experiment", "selected", "causal_test_hot_a",
			   &unused);
	ck_assert_int_ge(sel, 20);
	ck_assert_int_eq(
		lines_naming(path, "experiment", "type", "experiment", &unused),
		sel);
	ck_assert_int_eq(check(path, 0, "*", "items,latency"), 0);
	tmp_remove(path);
}
END_TEST

/* ---------------------------------------------------------- line scope */

/* The line scope's hot stage: a loop of its own (not burn's, whose lines
 * are burn's wherever it is inlined), its lines between the markers. */
static const int hot_lines_first = __LINE__;
__attribute__((noipa)) void causal_test_hot_lines(uint32_t steps);
void causal_test_hot_lines(uint32_t steps)
{
	uint64_t x = sink;
	for (uint32_t i = 0; i < steps; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if ((i & 255) == 255)
			smarm_check();
	}
	sink = x;
}
static const int hot_lines_last = __LINE__;

static void lines_a(void *arg)
{
	hot_stage(arg, causal_test_hot_lines);
}

static void lines_root(void *arg)
{
	pipe_drive(arg, lines_a, sampled_b);
}

/* The samples a profile counts on this file's lines first..last, and
 * the experiments that selected one of them. */
static long long lines_in(const char *path, const char *type, const char *key,
			  int first, int last, int *nlines)
{
	return lines_scan(path, type, key, "test_causal.c:", first, last,
			  nlines);
}

/*
 * Line scope, asked for by the environment (SMARM_CAUSAL_SCOPE=lines):
 * the sites are source lines read from this executable's DWARF line
 * table (the test suites are built with -g). The hot stage's lines hold
 * most samples and are selected by experiments, named "test_causal.c:N"
 * with N inside the hot function.
 */
START_TEST(test_causal_lines_profile_names_lines)
{
	char path[1024];
	struct pipe p = { .want = 80 };
	smarm_node_t *node;
	long long samples;
	int nsamp, nsel;
	tmp_path(path, sizeof path);
	ck_assert_int_eq(setenv("SMARM_CAUSAL_SCOPE", "lines", 1), 0);
	node = open_scoped(2, path, MS(20), NULL, -1, -1);
	unsetenv("SMARM_CAUSAL_SCOPE");
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, lines_root, &p, NULL, NULL), 0);
	harness_checks_assert();
	ck_assert_int_ge(harness_stat(node, SMARM_STAT_CAUSAL_EXPERIMENTS), 80);
	ck_assert_int_eq(smarm_node_close(node), 0);
	samples = lines_in(path, "samples", "location", hot_lines_first,
			   hot_lines_last, &nsamp);
	lines_in(path, "experiment", "selected", hot_lines_first,
		 hot_lines_last, &nsel);
	printf("# lines: %lld samples on %d lines of the hot function "
	       "(lines %d-%d), selected by %d experiments\n",
	       samples, nsamp, hot_lines_first, hot_lines_last, nsel);
	ck_assert_int_gt(samples, 100);
	ck_assert_int_gt(nsel, 0);
	/* No function names: the executable has a line table. */
	ck_assert_int_eq(lines_naming(path, "samples", "location",
				      "causal_test_hot_lines", &samples),
			 0);
	ck_assert_int_eq(check(path, 80, "*", "items,latency"), 0);
	tmp_remove(path);
}
END_TEST

/* The line of this file in first..last with the most samples in a
 * profile; 0: none. */
static int hottest_line(const char *path, int first, int last)
{
	long long best = 0;
	int at = 0, unused;
	for (int n = first; n <= last; n++) {
		long long c =
			lines_in(path, "samples", "location", n, n, &unused);
		if (c > best) {
			best = c;
			at = n;
		}
	}
	return at;
}

/*
 * A fixed line is the only one selected, and its experiments inject
 * delay: samples anywhere in that line's code count as in it. The line
 * is the hot function's most sampled one in a first, short profile, as
 * a user would pick it (a sample's address is where the thread was
 * stopped, which may be an instruction or two past the one that took
 * the time: the body's own line may get few samples).
 */
START_TEST(test_causal_lines_fixed_line_injects)
{
	char path[1024], site[64];
	struct pipe p = { .want = 20 }, p0 = { .want = 8 };
	smarm_node_t *node;
	long long unused;
	int sel, hot;
	tmp_path(path, sizeof path);
	node = open_scoped(2, path, MS(20), NULL, -1, SMARM_CAUSAL_SCOPE_LINES);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, lines_root, &p0, NULL, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(smarm_node_close(node), 0);
	hot = hottest_line(path, hot_lines_first, hot_lines_last);
	ck_assert_int_gt(hot, 0);
	snprintf(site, sizeof site, "test_causal.c:%d", hot);
	node = open_scoped(2, path, MS(20), site, 50, SMARM_CAUSAL_SCOPE_LINES);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, lines_root, &p, NULL, NULL), 0);
	harness_checks_assert();
	ck_assert_int_gt(harness_stat(node, SMARM_STAT_CAUSAL_DELAY_NS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	sel = lines_naming(path, "experiment", "selected", site, &unused);
	ck_assert_int_ge(sel, 20);
	ck_assert_int_eq(
		lines_naming(path, "experiment", "type", "experiment", &unused),
		sel);
	ck_assert_int_eq(check(path, 0, "*", "items,latency"), 0);
	tmp_remove(path);
}
END_TEST

/* The line scope is a valid scope; its neighbours are not. */
START_TEST(test_causal_lines_scope_checked)
{
	smarm_config_t *cfg = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(
		smarm_config_set_causal_scope(cfg, SMARM_CAUSAL_SCOPE_LINES),
		0);
	ck_assert_int_eq(smarm_config_set_causal_scope(cfg, -1), SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_config_set_causal_scope(NULL, SMARM_CAUSAL_SCOPE_LINES),
		SMARM_EINVAL);
	smarm_config_free(cfg);
}
END_TEST

/* ------------------------------------------- timers and exits catch up */

struct late {
	uint64_t owed;	    /* delay injected since it started, at the act */
	uint64_t took;	    /* from the act to its effect */
	uint64_t t_exit;    /* the dying actor's last moment */
	uint64_t took_join; /* from it to the join's return */
	int64_t d0;
	smarm_chan_t *sig;
	_Atomic int done;
};

/* Wait, by timeouts only (they skip nothing), until the delay injected
 * since it started exceeds DELAY_SEEN: it owes all of that. */
static void owe_delay(struct late *l)
{
	l->d0 = harness_actor_stat(SMARM_STAT_CAUSAL_DELAY_NS);
	while (harness_actor_stat(SMARM_STAT_CAUSAL_DELAY_NS) - l->d0 <=
	       (int64_t)DELAY_SEEN)
		smarm_actor_sleep(MS(1));
	l->owed = (uint64_t)(harness_actor_stat(SMARM_STAT_CAUSAL_DELAY_NS) -
			     l->d0);
}

/* Arms a 20 ms timed send to itself while it owes delay; takes it. */
static void timer_debtor(void *arg)
{
	struct late *l = arg;
	smarm_chan_t *ch = NULL;
	smarm_timer_t tm;
	uint64_t t0;
	int v = 7;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	owe_delay(l);
	t0 = smarm_now_ns();
	HARNESS_EQ(smarm_chan_send_after(ch, &v, MS(20), &tm), 0);
	HARNESS_EQ(smarm_chan_recv(ch, &v), 0);
	l->took = harness_since(t0);
	harness_chan_drop(ch);
}

/* Owes delay, then ends: its Down and its joiner's wake come after it
 * has paid. */
static void exit_debtor(void *arg)
{
	struct late *l = arg;
	owe_delay(l);
	l->t_exit = smarm_now_ns();
}

static void late_root(void *arg)
{
	struct late *l = arg;
	struct acct a = { .pct = 100 };
	smarm_pid_t h, d;
	smarm_signal_t sg;
	HARNESS_EQ(smarm_actor_spawn(&h, hot, &a, NULL), 0);
	if (l->sig == NULL) {
		HARNESS_EQ(smarm_actor_spawn(&d, timer_debtor, l, NULL), 0);
		HARNESS_EQ(smarm_actor_join(d, NULL, NULL), 0);
	} else {
		HARNESS_EQ(smarm_actor_spawn(&d, exit_debtor, l, NULL), 0);
		HARNESS_EQ(smarm_monitor(d, l->sig, NULL), 0);
		/* The Down first, then the join. */
		HARNESS_EQ(smarm_chan_recv(l->sig, &sg), 0);
		l->took = harness_since(l->t_exit);
		HARNESS_EQ(sg.kind, SMARM_SIGNAL_DOWN);
		HARNESS_EQ(smarm_actor_join(d, NULL, NULL), 0);
		l->took_join = harness_since(l->t_exit);
	}
	HARNESS_EQ(smarm_actor_join(h, NULL, NULL), 0);
}

static void sig_root(void *arg)
{
	struct late *l = arg;
	l->sig = harness_sig_chan();
	late_root(l);
	harness_chan_drop(l->sig);
}

/*
 * A timed send armed by an actor that owes delay (another actor runs a
 * site sped up by 100%) fires no earlier than its delay plus what its
 * armer owed: dilated, it cannot wake anyone before its armer's virtual
 * time (a lower bound, which load only lengthens).
 */
START_TEST(test_causal_timer_dilated_by_debt)
{
	struct late l = { 0 };
	run_hot(late_root, &l);
	printf("# timed send of 20 ms, owed %llu us: took %llu us\n",
	       (unsigned long long)l.owed / 1000,
	       (unsigned long long)l.took / 1000);
	ck_assert_uint_gt(l.owed, DELAY_SEEN);
	ck_assert_uint_ge(l.took, MS(20) + l.owed);
}
END_TEST

/*
 * An actor that owes delay and ends pays it before its Down and its
 * joiner's wake: each comes no earlier than what it owed after its
 * last moment (without the catch-up, microseconds).
 */
START_TEST(test_causal_exit_catches_up)
{
	struct late l = { 0 };
	run_hot(sig_root, &l);
	printf("# exit owing %llu us: Down after %llu us, joined after %llu "
	       "us\n",
	       (unsigned long long)l.owed / 1000,
	       (unsigned long long)l.took / 1000,
	       (unsigned long long)l.took_join / 1000);
	ck_assert_uint_gt(l.owed, DELAY_SEEN);
	ck_assert_uint_ge(l.took, l.owed);
	ck_assert_uint_ge(l.took_join, l.owed);
}
END_TEST

static Suite *smarm_test_causal_suite(void)
{
	Suite *s = suite_create("causal");
	TCase *tc = tcase_create("errors");
	tcase_add_test(tc, test_causal_config_errors_einval);
	tcase_add_test(tc, test_causal_bad_path_esystem);
	tcase_add_test(tc, test_causal_progress_errors_einval);
	tcase_add_test(tc, test_causal_limits_enomem);
	suite_add_tcase(s, tc);
	tc = tcase_create("counts");
	tcase_add_test(tc, test_causal_progress_counts_exact);
	suite_add_tcase(s, tc);
	tc = tcase_create("profile");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_causal_profile_parses);
	tcase_add_test(tc, test_causal_env_file);
	suite_add_tcase(s, tc);
	tc = tcase_create("delay");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_causal_bystander_pays_delay);
	tcase_add_test(tc, test_causal_wake_rules_order);
	tcase_add_test(tc, test_causal_timer_dilated_by_debt);
	tcase_add_test(tc, test_causal_exit_catches_up);
	tcase_add_test(tc, test_causal_check_leaves_small_debt);
	suite_add_tcase(s, tc);
	tc = tcase_create("sampled");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_causal_sampled_profile_names_function);
	tcase_add_test(tc, test_causal_sampled_fixed_function_injects);
	suite_add_tcase(s, tc);
	tc = tcase_create("lines");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_causal_lines_profile_names_lines);
	tcase_add_test(tc, test_causal_lines_fixed_line_injects);
	tcase_add_test(tc, test_causal_lines_scope_checked);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(causal)
