/* SPDX-License-Identifier: MIT */
/*
 * causal.c - the causal profiler's experiment loop and its profile file:
 * a thread of its own ("smarm-causal") that, for the life of a node
 * opened with a profile path (smarm_config_set_causal or
 * SMARM_CAUSAL_FILE), runs Coz's experiments on the node's named sites
 * and writes them in Coz's profile format (JSON lines), which Coz's own
 * viewer plots. The runtime half (ledgers, hooks, pay points) is
 * core/causal.c.
 *
 * One experiment (Coz's profiler.cpp, on named sites):
 *   1. pick a site: a fixed one, or one of the sites some actor has run
 *      in so far, uniformly; none yet: wait a little and look again;
 *   2. pick a speedup: a fixed one, or 0..100% in 5% steps, with 0 at
 *      weight 7 against 1 for each of the 20 others (about a quarter);
 *   3. note every point's counts, the global delay and the wall clock,
 *      start the experiment (core: smarm__causal_begin), sleep its
 *      length, end it, note them again;
 *   4. write it if every point moved at least MIN_DELTA: an
 *      "experiment" line with duration = wall - delay injected meanwhile
 *      (virtual time), then one line per point;
 *   5. lengthen the next experiment (x2, up to EXP_CAP_NS) while the
 *      smallest delta is below MIN_DELTA, shorten it (/2, down to the
 *      configured length) once it is above 4 x MIN_DELTA; cool off.
 * Every SAMPLE_LOG experiments, and at the end, a "samples" line per
 * site gives its on-CPU time since the last such line in 1 ms samples;
 * the file ends with a "runtime" line.
 *
 * Sampled scope (SMARM_CAUSAL_SCOPE_SAMPLED): the sites are functions.
 * The thread reads every worker's sample ring (core/causal.c) every
 * DRAIN_NS, names each sample's function (symbols.c) in cw_fns, counts
 * it there and offers it to a reservoir of RECENT samples; step 1 then
 * picks the function of a random sample from the reservoir (a fixed
 * site: the function of that name, once sampled) and empties it, as
 * Coz starts each experiment at a sample's line; step 3 starts the
 * experiment on the function's text range; "samples" lines count each
 * function's samples. Line scope (SMARM_CAUSAL_SCOPE_LINES) is the same
 * with source lines for sites ("file.c:42", from the object's DWARF line
 * table through symbols.c; a sample in an object without one counts for
 * its function): cw_fns is sorted by key (a function's text start, or a
 * line's hash, line_key), and an experiment on a line selects every
 * range of its code (site_text: a line may be compiled to several
 * places), which the core's handler searches (smarm__causal_sel).
 *
 * Ownership: the node's SMARM__SUB_OBS state holds the struct from open
 * to close; the thread reads the node's causal atomics only.
 * Locking: none; cw_stop is the thread's stop word (a futex).
 * Invariants: OBSCZ-1 at most one experiment is on at a time, and none
 * once the thread has stopped. OBSCZ-2 the file holds whole lines only
 * (each experiment is flushed whole). OBSCZ-3 a site's text (cw_fn.sel),
 * once handed to the core, stays allocated until the node closes (a
 * handler may read it after its experiment ended).
 * See: docs/observability.md (Causal profiling).
 */
#include "obs.h"

#include "../core/causal.h"
#include "../core/node.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXP_DEFAULT_NS 500000000ull /* Coz's ExperimentMinTime */
#define EXP_CAP_NS 8000000000ull    /* lengthened up to this */
#define COOLOFF_NS 10000000ull	    /* between experiments */
#define IDLE_NS 10000000ull	    /* no site yet: look again after */
#define MIN_DELTA 5	     /* Coz's: a point that moved less is noise */
#define ZERO_WEIGHT 7	     /* Coz's ZeroSpeedupWeight */
#define DIVISIONS 20	     /* Coz's SpeedupDivisions: 5% steps */
#define SAMPLE_NS 1000000ull /* one "sample": 1 ms in a site */
#define SAMPLE_LOG 32	     /* experiments between samples lines */

/* A site the samples found (sampled and line scopes): a function, or a
 * source line. */
struct cw_fn {
	uintptr_t lo; /* the key: a function's text start; a line's
			 LINE_KEY of its name */
	uintptr_t hi; /* a function's text end; a line's 0 */
	char name[SMARM__CAUSAL_NAME_MAX];
	uint64_t count;	  /* samples in it so far */
	uint64_t logged;  /* count at its last samples line */
	const char *file; /* a line's file (base name), or NULL */
	uint32_t line;
	struct smarm__causal_sel *sel; /* its text, made when it is first
					  selected; freed at close */
};

/* A line site's key: its name's FNV-1a hash with the top bit set, so
 * that no function's text address (user space: below 2^47) is one. */
static uintptr_t line_key(const char *name)
{
	uint64_t h = 14695981039346656037ull;
	for (; *name != '\0'; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return (uintptr_t)(h | 1ull << 63);
}

#define RECENT 512	     /* samples an experiment's site is picked from */
#define DRAIN_NS 20000000ull /* sampled: read the rings this often */

struct smarm__obs_causal {
	struct smarm__causal *cw_cz;
	bool cw_sampled;	     /* sampled scope (functions or lines) */
	bool cw_lines;		     /* ... sites are source lines */
	struct smarm__syms *cw_syms; /* sampled: names of functions */
	struct cw_fn *cw_fns;	     /* sampled: by lo, ascending */
	uint32_t cw_nfns, cw_capfns;
	uintptr_t cw_recent[RECENT]; /* lo of the functions of samples since
					the last pick (a reservoir) */
	uint32_t cw_nrecent;
	uint64_t cw_nseen; /* samples offered to the reservoir */
	FILE *cw_f;
	pthread_t cw_thr;
	_Atomic uint32_t cw_stop; /* 1: stop (futex word) */
	uint64_t cw_len;	  /* the next experiment's length, ns */
	uint64_t cw_min;	  /* the configured length */
	uint64_t cw_t0;		  /* clock at startup */
	uint64_t cw_rng;	  /* xorshift64 state */
	int cw_pct;		  /* fixed speedup, or -1 */
	char cw_site[SMARM__CAUSAL_NAME_MAX];	 /* fixed site, or "" */
	uint64_t cw_logged[SMARM__CAUSAL_SITES]; /* cs_ns at the last
						    samples line */
	uint32_t cw_runs;			 /* experiments run */
};

static uint64_t rng_next(struct smarm__obs_causal *cw)
{
	uint64_t x = cw->cw_rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return cw->cw_rng = x;
}

/* ------------------------------------------------------ sampled scope */

/* The first site whose key is key or above (cw_fns is sorted by key). */
static uint32_t key_index(const struct smarm__obs_causal *cw, uintptr_t key)
{
	uint32_t a = 0, b = cw->cw_nfns;
	while (a < b) {
		uint32_t m = a + (b - a) / 2;
		if (cw->cw_fns[m].lo < key)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

static struct cw_fn *fn_at(struct smarm__obs_causal *cw, uintptr_t key)
{
	uint32_t i = key_index(cw, key);
	return i < cw->cw_nfns && cw->cw_fns[i].lo == key ? &cw->cw_fns[i]
							  : NULL;
}

/* A new site of key key, named name (made printable as the profile
 * carries it: core/causal.c name_ok); NULL: no memory. */
static struct cw_fn *site_add(struct smarm__obs_causal *cw, uintptr_t key,
			      const char *name)
{
	uint32_t i;
	struct cw_fn *f;
	size_t len;
	if (cw->cw_nfns == cw->cw_capfns) {
		uint32_t cap = cw->cw_capfns ? 2 * cw->cw_capfns : 64;
		f = realloc(cw->cw_fns, cap * sizeof *f);
		if (f == NULL)
			return NULL;
		cw->cw_fns = f;
		cw->cw_capfns = cap;
	}
	i = key_index(cw, key);
	memmove(&cw->cw_fns[i + 1], &cw->cw_fns[i],
		(cw->cw_nfns - i) * sizeof *f);
	cw->cw_nfns++;
	f = &cw->cw_fns[i];
	memset(f, 0, sizeof *f);
	f->lo = key;
	/* Cut to 63 bytes, anything else printable. */
	len = strnlen(name, sizeof f->name - 1);
	for (size_t k = 0; k < len; k++) {
		unsigned char c = (unsigned char)name[k];
		f->name[k] = c < 0x20 || c >= 0x7f || c == '"' || c == '\\'
				     ? '?'
				     : (char)c;
	}
	return f;
}

/* The function around pc, found or made; NULL: no symbol holds it. */
static struct cw_fn *fn_of(struct smarm__obs_causal *cw, uintptr_t pc)
{
	uint32_t i = key_index(cw, pc + 1);
	uintptr_t lo, hi;
	const char *name;
	struct cw_fn *f;
	if (i > 0 && cw->cw_fns[i - 1].lo <= pc && pc < cw->cw_fns[i - 1].hi)
		return &cw->cw_fns[i - 1];
	if (!smarm__syms_find(cw->cw_syms, pc, &lo, &hi, &name))
		return NULL;
	if ((f = fn_at(cw, lo)) != NULL || (f = site_add(cw, lo, name)) == NULL)
		return f;
	f->hi = hi;
	return f;
}

/* The site of pc: its source line in line scope (its function where
 * its object has no line table), else its function. */
static struct cw_fn *site_of(struct smarm__obs_causal *cw, uintptr_t pc)
{
	char name[SMARM__CAUSAL_NAME_MAX];
	const char *file;
	uint32_t line;
	uintptr_t key;
	struct cw_fn *f;
	if (!cw->cw_lines || !smarm__syms_line(cw->cw_syms, pc, &file, &line))
		return fn_of(cw, pc);
	snprintf(name, sizeof name, "%s:%u", file, line);
	key = line_key(name);
	if ((f = fn_at(cw, key)) != NULL ||
	    (f = site_add(cw, key, name)) == NULL)
		return f;
	f->file = file;
	f->line = line;
	return f;
}

/* A site's text for the core, made on its first selection; NULL: no
 * memory, or a line with no code left (nothing to select). */
static struct smarm__causal_sel *site_text(struct smarm__obs_causal *cw,
					   struct cw_fn *f)
{
	if (f->sel != NULL)
		return f->sel;
	if (f->file != NULL) {
		f->sel = smarm__syms_line_text(cw->cw_syms, f->file, f->line);
	} else if ((f->sel = malloc(sizeof *f->sel + 2 * sizeof(uintptr_t))) !=
		   NULL) {
		f->sel->cs_n = 1;
		f->sel->cs_rg[0] = f->lo;
		f->sel->cs_rg[1] = f->hi;
	}
	return f->sel;
}

/* Take every worker's new samples: count them per function, and offer
 * each to the reservoir the next site is picked from. */
static void drain(struct smarm__obs_causal *cw)
{
	struct smarm__causal *cz = cw->cw_cz;
	for (int w = 0; w < cz->cz_nrings; w++) {
		struct smarm__causal_ring *r = &cz->cz_rings[w];
		uint32_t t =
			atomic_load_explicit(&r->cr_tail, memory_order_relaxed);
		uint32_t h =
			atomic_load_explicit(&r->cr_head, memory_order_acquire);
		for (; t != h; t++) {
			uintptr_t pc = r->cr_pc[t % SMARM__CAUSAL_RING];
			uint32_t k = r->cr_n[t % SMARM__CAUSAL_RING];
			struct cw_fn *f = site_of(cw, pc);
			uint64_t j;
			if (f == NULL)
				continue;
			f->count += k;
			/* Reservoir sampling: every sample since the last
			 * pick equally likely to be kept. */
			j = cw->cw_nseen++;
			if (cw->cw_nrecent < RECENT)
				cw->cw_recent[cw->cw_nrecent++] = f->lo;
			else if ((j = rng_next(cw) % (j + 1)) < RECENT)
				cw->cw_recent[j] = f->lo;
		}
		atomic_store_explicit(&r->cr_tail, t, memory_order_release);
	}
}

/* The experiment's function (its lo; 0: none yet): the fixed one once
 * sampled, or that of a random sample since the last pick. */
static uintptr_t pick_fn(struct smarm__obs_causal *cw)
{
	uintptr_t lo = 0;
	if (cw->cw_site[0] != '\0') {
		for (uint32_t i = 0; i < cw->cw_nfns; i++)
			if (strcmp(cw->cw_fns[i].name, cw->cw_site) == 0)
				return cw->cw_fns[i].lo;
		return 0;
	}
	if (cw->cw_nrecent != 0)
		lo = cw->cw_recent[rng_next(cw) % cw->cw_nrecent];
	cw->cw_nrecent = 0;
	cw->cw_nseen = 0;
	return lo;
}

/* Sleep ns, or less if the node closes: true if it closes. Sampled,
 * the rings are read meanwhile. */
static bool nap(struct smarm__obs_causal *cw, uint64_t ns)
{
	uint64_t end = smarm__clock_ns() + ns;
	for (;;) {
		uint64_t now = smarm__clock_ns();
		uint64_t left = end - now;
		if (cw->cw_sampled)
			drain(cw);
		if (atomic_load(&cw->cw_stop) != 0)
			return true;
		if (now >= end)
			return false;
		if (cw->cw_sampled && left > DRAIN_NS)
			left = DRAIN_NS;
		smarm__futex_wait((uint32_t *)&cw->cw_stop, 0, left);
	}
}

/* The experiment's site: 0 if there is none to pick yet. */
static uint32_t pick_site(struct smarm__obs_causal *cw)
{
	struct smarm__causal *cz = cw->cw_cz;
	uint32_t k = atomic_load_explicit(&cz->cz_nsites, memory_order_acquire);
	uint32_t ran[SMARM__CAUSAL_SITES];
	uint32_t m = 0;
	for (uint32_t i = 0; i < k; i++) {
		const struct smarm__causal_site *s = cz->cz_site[i];
		if (cw->cw_site[0] != '\0') {
			if (strcmp(s->cs_name, cw->cw_site) == 0)
				return i + 1;
		} else if (atomic_load_explicit(&s->cs_ns,
						memory_order_relaxed) != 0) {
			ran[m++] = i + 1;
		}
	}
	return m != 0 ? ran[rng_next(cw) % m] : 0;
}

static int pick_pct(struct smarm__obs_causal *cw)
{
	uint64_t r;
	if (cw->cw_pct >= 0)
		return cw->cw_pct;
	r = rng_next(cw) % (ZERO_WEIGHT + DIVISIONS);
	return r < ZERO_WEIGHT ? 0 : (int)(r - ZERO_WEIGHT + 1) * 5;
}

static void log_samples(struct smarm__obs_causal *cw)
{
	struct smarm__causal *cz = cw->cw_cz;
	uint32_t k = atomic_load_explicit(&cz->cz_nsites, memory_order_acquire);
	if (cw->cw_sampled) { /* the functions, not the named sites */
		for (uint32_t i = 0; i < cw->cw_nfns; i++) {
			struct cw_fn *f = &cw->cw_fns[i];
			if (f->count == f->logged)
				continue;
			fprintf(cw->cw_f,
				"{\"type\":\"samples\",\"location\":\"%s\","
				"\"count\":%llu}\n",
				f->name,
				(unsigned long long)(f->count - f->logged));
			f->logged = f->count;
		}
		k = 0;
	}
	for (uint32_t i = 0; i < k; i++) {
		uint64_t ns = atomic_load_explicit(&cz->cz_site[i]->cs_ns,
						   memory_order_relaxed);
		uint64_t n = (ns - cw->cw_logged[i]) / SAMPLE_NS;
		if (n == 0)
			continue;
		cw->cw_logged[i] += n * SAMPLE_NS;
		fprintf(cw->cw_f,
			"{\"type\":\"samples\",\"location\":\"%s\","
			"\"count\":%llu}\n",
			cz->cz_site[i]->cs_name, (unsigned long long)n);
	}
	fflush(cw->cw_f);
}

/* Samples in the site so far: a named site's on-CPU time in 1 ms
 * samples, a sampled function's samples. */
static uint64_t site_samples(struct smarm__obs_causal *cw, uint32_t site,
			     uintptr_t fn)
{
	const struct cw_fn *f;
	if (!cw->cw_sampled)
		return atomic_load(&cw->cw_cz->cz_site[site - 1]->cs_ns) /
		       SAMPLE_NS;
	f = fn_at(cw, fn);
	return f != NULL ? f->count : 0;
}

/* One experiment (steps 3-5 above) on named site site, or sampled
 * function fn (its lo): false if the node closed. */
static bool experiment(struct smarm__obs_causal *cw, uint32_t site,
		       uintptr_t fn, int pct)
{
	struct smarm__causal *cz = cw->cw_cz;
	uint64_t a0[SMARM__CAUSAL_POINTS], d0[SMARM__CAUSAL_POINTS];
	uint32_t k =
		atomic_load_explicit(&cz->cz_npoints, memory_order_acquire);
	char name[SMARM__CAUSAL_NAME_MAX];
	uint64_t g0, g1, t0, t1, s0, dur, min = UINT64_MAX;
	const struct smarm__causal_sel *sel = NULL;
	bool stop;

	if (cw->cw_sampled) {
		struct cw_fn *f = fn_at(cw, fn);
		memcpy(name, f->name, sizeof name);
		if ((sel = site_text(cw, f)) == NULL)
			return !nap(cw, COOLOFF_NS); /* nothing to select */
	} else {
		memcpy(name, cz->cz_site[site - 1]->cs_name, sizeof name);
	}
	for (uint32_t i = 0; i < k; i++) {
		a0[i] = atomic_load(&cz->cz_point[i]->cp_count);
		d0[i] = atomic_load(&cz->cz_point[i]->cp_dep);
	}
	s0 = site_samples(cw, site, fn);
	g0 = atomic_load(&cz->cz_global);
	t0 = smarm__clock_ns();
	if (cw->cw_sampled)
		smarm__causal_begin_sampled(cz, sel, pct);
	else
		smarm__causal_begin(cz, site, pct);
	stop = nap(cw, cw->cw_len);
	smarm__causal_end(cz); /* OBSCZ-1 */
	t1 = smarm__clock_ns();
	g1 = atomic_load(&cz->cz_global);
	if (cw->cw_sampled)
		drain(cw); /* the window's last samples */
	if (stop)
		return false; /* cut short: not written */
	cw->cw_runs++;
	dur = t1 - t0 > g1 - g0 ? (t1 - t0) - (g1 - g0) : 1;
	for (uint32_t i = 0; i < k; i++) {
		uint64_t d = atomic_load(&cz->cz_point[i]->cp_count) - a0[i];
		if (d < min)
			min = d;
	}
	if (k != 0 && min >= MIN_DELTA) {
		fprintf(cw->cw_f,
			"{\"type\":\"experiment\",\"selected\":\"%s\","
			"\"speedup\":%.2f,\"duration\":%llu,"
			"\"selected_samples\":%llu}\n",
			name, pct / 100.0, (unsigned long long)dur,
			(unsigned long long)(site_samples(cw, site, fn) - s0));
		for (uint32_t i = 0; i < k; i++) {
			const struct smarm__causal_point *p = cz->cz_point[i];
			uint64_t a = atomic_load(&p->cp_count);
			uint64_t d = atomic_load(&p->cp_dep);
			if (p->cp_kind == SMARM_PROGRESS_THROUGHPUT)
				fprintf(cw->cw_f,
					"{\"type\":\"throughput-point\","
					"\"name\":\"%s\",\"delta\":%llu}\n",
					p->cp_name,
					(unsigned long long)(a - a0[i]));
			else
				fprintf(cw->cw_f,
					"{\"type\":\"latency-point\","
					"\"name\":\"%s\",\"arrivals\":%llu,"
					"\"departures\":%llu,"
					"\"difference\":%lld}\n",
					p->cp_name,
					(unsigned long long)(a - a0[i]),
					(unsigned long long)(d - d0[i]),
					(long long)(a - d));
		}
		fflush(cw->cw_f); /* OBSCZ-2 */
		atomic_fetch_add(&cz->cz_done, 1);
	}
	/* Step 5: too few visits to tell anything: longer; plenty:
	 * shorter, never below what was asked for. */
	if (k != 0 && min < MIN_DELTA) {
		if (cw->cw_len < EXP_CAP_NS)
			cw->cw_len *= 2;
	} else if (min > 4 * MIN_DELTA && cw->cw_len >= 2 * cw->cw_min) {
		cw->cw_len /= 2;
	}
	if (cw->cw_runs % SAMPLE_LOG == 0)
		log_samples(cw);
	return !nap(cw, COOLOFF_NS);
}

static void *causal_main(void *arg)
{
	struct smarm__obs_causal *cw = arg;
	smarm__thread_name("causal", -1);
	for (;;) {
		uint32_t site = 0;
		uintptr_t fn = 0;
		if (cw->cw_sampled)
			fn = pick_fn(cw);
		else
			site = pick_site(cw);
		if (site == 0 && fn == 0) {
			if (nap(cw, IDLE_NS))
				break;
			continue;
		}
		if (!experiment(cw, site, fn, pick_pct(cw)))
			break;
	}
	return NULL;
}

/* ------------------------------------------------------------ the hooks */

int smarm__obs_causal_open(struct smarm_node *n, const struct smarm_config *cfg,
			   struct smarm__obs_causal **out)
{
	const char *path = cfg->causal_path;
	struct smarm__obs_causal *cw;
	struct timespec ts;
	sigset_t all, old;
	int rc, scope;

	*out = NULL;
	if (path[0] == '\0') {
		path = getenv("SMARM_CAUSAL_FILE");
		if (path == NULL || path[0] == '\0')
			return 0;
	}
	cw = calloc(1, sizeof *cw);
	if (cw == NULL)
		return SMARM_ENOMEM;
	cw->cw_cz = smarm__causal_of(n);
	cw->cw_min =
		cfg->causal_exp_ns != 0 ? cfg->causal_exp_ns : EXP_DEFAULT_NS;
	cw->cw_len = cw->cw_min;
	cw->cw_pct = cfg->causal_pct;
	memcpy(cw->cw_site, cfg->causal_site, sizeof cw->cw_site);
	cw->cw_t0 = smarm__clock_ns();
	cw->cw_rng = cw->cw_t0 | 1;
	scope = cfg->causal_scope;
	if (scope < 0) { /* the environment's; anything else: named */
		const char *sc = getenv("SMARM_CAUSAL_SCOPE");
		scope = SMARM_CAUSAL_SCOPE_NAMED;
		if (sc != NULL && strcmp(sc, "sampled") == 0)
			scope = SMARM_CAUSAL_SCOPE_SAMPLED;
		else if (sc != NULL && strcmp(sc, "lines") == 0)
			scope = SMARM_CAUSAL_SCOPE_LINES;
	}
	cw->cw_lines = scope == SMARM_CAUSAL_SCOPE_LINES;
	cw->cw_sampled = cw->cw_lines || scope == SMARM_CAUSAL_SCOPE_SAMPLED;
	if (cw->cw_sampled && (cw->cw_syms = smarm__syms_open()) == NULL) {
		free(cw);
		return SMARM_ENOMEM;
	}
	cw->cw_f = fopen(path, "we");
	if (cw->cw_f == NULL) {
		smarm__syms_close(cw->cw_syms);
		free(cw);
		return SMARM_ESYSTEM;
	}
	rc = smarm__causal_enable(n, cw->cw_sampled);
	if (rc != 0)
		goto err_close;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(cw->cw_f, "{\"type\":\"startup\",\"time\":%llu}\n",
		(unsigned long long)ts.tv_sec * 1000000000ull +
			(unsigned long long)ts.tv_nsec);
	fflush(cw->cw_f);
	/* The thread takes no signal meant for the host. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&cw->cw_thr, NULL, causal_main, cw) == 0
		     ? 0
		     : SMARM_ESYSTEM;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		goto err_close;
	*out = cw;
	return 0;

err_close:
	fclose(cw->cw_f);
	smarm__syms_close(cw->cw_syms);
	free(cw);
	return rc;
}

void smarm__obs_causal_close(struct smarm__obs_causal *cw)
{
	if (cw == NULL)
		return;
	atomic_store(&cw->cw_stop, 1);
	smarm__futex_wake((uint32_t *)&cw->cw_stop, 1);
	pthread_join(cw->cw_thr, NULL);
	if (cw->cw_sampled)
		drain(cw);
	log_samples(cw);
	fprintf(cw->cw_f, "{\"type\":\"runtime\",\"time\":%llu}\n",
		(unsigned long long)(smarm__clock_ns() - cw->cw_t0));
	fclose(cw->cw_f);
	smarm__syms_close(cw->cw_syms);
	for (uint32_t i = 0; i < cw->cw_nfns; i++)
		free(cw->cw_fns[i].sel);
	free(cw->cw_fns);
	free(cw);
}
