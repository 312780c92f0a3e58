/* SPDX-License-Identifier: MIT */
/*
 * smarm-top.c - the observer: a live table of a running node's actors,
 * read from its introspection socket (smarm_config_set_obs_socket,
 * smarm-run -S), as etop and observer show an Erlang node.
 *
 *   smarm-top [-d SECONDS] [-s cpu|queue|memory|restarts] [-f TEXT]
 *             [--once | --json] SOCKET|PID
 *
 * Every interval it asks the node for its counters and a snapshot, and
 * shows a header (workers, run queue, actors, process memory and CPU,
 * preemptions, restarts) and one row per actor: pid, name, behaviour,
 * state and wait, runs per second and share of the interval's runs,
 * stack high water, mailbox depth, restarts, plugin faults. "Runs" are the
 * waits an actor opened (smarm_actor_info_t.waits): a cheap activity count,
 * like the BEAM's reductions, taken *over the last interval* (recon's
 * proc_window: who is busy now, not since boot). %CPU is the share of
 * one worker the actor had over the interval, from the difference of
 * its cpu_ns in the two samples, when the node keeps statistics
 * (SMARM_OPT_ACTOR_STATS, smarm-run --actor-stats; else "-"); the
 * header's "busy" is their sum, the workers kept busy (without
 * statistics: the actors running at the sample, "now"). RST is a
 * supervisor's own count of the restarts it admitted (its record's
 * restarts, format 3; a node of an older format: the restarts seen
 * while watching, a registered name on a new pid); FLT is a server's
 * plugin's contained faults so far (its taint; "-": no plugin).
 * Keys: c, b, m, r sort by runs, mailbox (queue), memory, restarts;
 * / filters by name or behaviour (Enter ends the text, an empty one
 * clears it); j/k or the arrows move the cursor, Enter or o opens the
 * actor under it (its record, links and monitors); t shows the
 * supervision tree; Esc or any key goes back from those; q quits.
 * --once prints one text screen (two samples -d apart, so the rates
 * mean something) and exits; --json prints the node's answers as one
 * JSON object for scripts.
 * Ownership: main owns the connection and every parsed answer; a
 * sample holds its snapshot until the next one replaces it.
 * Exit codes: 0, 1 no node at that socket (or it refused us), 2 usage.
 */
#include "obs_client.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum sort_key { SORT_CPU, SORT_QUEUE, SORT_MEMORY, SORT_RESTARTS };
static const char *const sort_names[] = { "cpu", "queue", "memory",
					  "restarts" };

/* One actor of a sample, with what the last interval made of it. */
struct row {
	const struct jv *r_a; /* its object in the snapshot */
	uint64_t r_id;
	uint64_t r_runs; /* waits opened during the interval */
	double r_share;	 /* of all actors' runs, percent */
	int64_t r_mbox;	 /* -1: none */
	int64_t r_mem;	 /* stack high water, bytes */
	uint64_t r_rst;	 /* restarts: a supervisor's count (or seen: its
			    name on a new pid, from a node before format 3) */
	int64_t r_flt;	 /* its plugin's faults, -1: no plugin */
	double r_cpu;	 /* percent of one worker over the interval, from
			    cpu_ns (-1: the node keeps no statistics) */
};

/* A name and the pid that held it, and how often it moved. */
struct name_seen {
	char *n_name;
	uint64_t n_pid;
	uint64_t n_moves;
};

struct top {
	int fd;
	char path[108];
	long os_pid;
	double interval;
	int sort;
	char filter[64];
	/* the latest sample and the one before */
	struct jv snap, stats;
	uint64_t t_ns, prev_t_ns;
	uint64_t *prev_ids, *prev_waits; /* sorted by id */
	uint64_t *prev_cpu;		 /* cpu_ns, by the same index */
	bool actor_stats;		 /* the node keeps cpu_ns (hello) */
	double busy;			 /* workers busy over the interval
					    (sum of cpu_ns), or running now */
	size_t prev_n;
	struct row *rows;
	size_t nrows, allrows;
	uint64_t total_runs;
	double cpu_pct;
	long rss_kib;
	unsigned long long prev_ticks;
	/* restarts by name */
	struct name_seen *names;
	size_t nnames;
	int cursor;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The serving process's CPU ticks and resident KiB (/proc). */
static void proc_usage(long pid, unsigned long long *ticks, long *rss)
{
	char p[64], buf[1024];
	FILE *f;
	*ticks = 0;
	*rss = 0;
	snprintf(p, sizeof p, "/proc/%ld/stat", pid);
	f = fopen(p, "r");
	if (f != NULL) {
		if (fgets(buf, sizeof buf, f) != NULL) {
			/* After the command's closing parenthesis: state is
			 * field 3; utime and stime are 14 and 15. */
			char *q = strrchr(buf, ')');
			unsigned long long ut = 0, st = 0;
			if (q != NULL &&
			    sscanf(q + 2,
				   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
				   "%*u %llu %llu",
				   &ut, &st) == 2)
				*ticks = ut + st;
		}
		fclose(f);
	}
	snprintf(p, sizeof p, "/proc/%ld/statm", pid);
	f = fopen(p, "r");
	if (f != NULL) {
		long size, res;
		if (fscanf(f, "%ld %ld", &size, &res) == 2)
			*rss = res * (sysconf(_SC_PAGESIZE) / 1024);
		fclose(f);
	}
}

/* Ask and parse: 0, or -1 (the node went away). */
static int ask(struct top *t, const char *req, struct jv *out)
{
	char *line = obsc_ask(t->fd, req);
	int rc = line != NULL ? jv_parse(line, out) : -1;
	free(line);
	if (rc == 0 && jv_get(out, "error") != NULL) {
		jv_free(out);
		return -1;
	}
	return rc;
}

static uint64_t prev_waits_of(const struct top *t, uint64_t id, bool *found,
			      uint64_t *cpu)
{
	size_t lo = 0, hi = t->prev_n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->prev_ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < t->prev_n && t->prev_ids[lo] == id;
	*cpu = *found ? t->prev_cpu[lo] : 0;
	return *found ? t->prev_waits[lo] : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Count a restart when a name is seen on a new pid. */
static uint64_t name_moves(struct top *t, const char *name, uint64_t pid)
{
	struct name_seen *m;
	if (name[0] == '\0')
		return 0;
	for (size_t i = 0; i < t->nnames; i++) {
		if (strcmp(t->names[i].n_name, name) != 0)
			continue;
		if (t->names[i].n_pid != pid) {
			t->names[i].n_pid = pid;
			t->names[i].n_moves++;
		}
		return t->names[i].n_moves;
	}
	m = realloc(t->names, (t->nnames + 1) * sizeof *m);
	if (m == NULL)
		return 0;
	t->names = m;
	m[t->nnames].n_name = strdup(name);
	m[t->nnames].n_pid = pid;
	m[t->nnames].n_moves = 0;
	if (m[t->nnames].n_name != NULL)
		t->nnames++;
	return 0;
}

static bool row_matches(const struct top *t, const struct jv *a)
{
	if (t->filter[0] == '\0')
		return true;
	return strstr(jv_str(a, "name"), t->filter) != NULL ||
	       strstr(jv_str(a, "behaviour"), t->filter) != NULL ||
	       strstr(jv_str(a, "plugin"), t->filter) != NULL;
}

static int cmp_rows_sort;
static int cmp_rows(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int64_t x, y;
	switch (cmp_rows_sort) {
	case SORT_QUEUE:
		x = a->r_mbox, y = b->r_mbox;
		break;
	case SORT_MEMORY:
		x = a->r_mem, y = b->r_mem;
		break;
	case SORT_RESTARTS:
		x = (int64_t)a->r_rst, y = (int64_t)b->r_rst;
		break;
	default: /* CPU time when the node keeps it, else runs */
		x = (int64_t)a->r_runs, y = (int64_t)b->r_runs;
		if (a->r_cpu >= 0 && b->r_cpu >= 0 && a->r_cpu != b->r_cpu)
			return a->r_cpu > b->r_cpu ? -1 : 1;
		break;
	}
	if (x != y)
		return x > y ? -1 : 1;
	return a->r_id < b->r_id ? -1 : a->r_id > b->r_id;
}

static double secs(const struct top *t);

/* Rebuild the rows of the current sample (filter, rates, sort). */
static void rows_make(struct top *t)
{
	const struct jv *actors = jv_get(&t->snap, "actors");
	size_t n = actors != NULL ? actors->n : 0;
	free(t->rows);
	t->rows = calloc(n + 1, sizeof *t->rows);
	t->nrows = 0;
	t->allrows = n;
	t->total_runs = 0;
	t->busy = 0;
	if (t->rows == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct jv *a = &actors->kids[i];
		uint64_t id = (uint64_t)jv_int(a, "id", 0);
		uint64_t waits = (uint64_t)jv_int(a, "waits", 0);
		uint64_t cpu = (uint64_t)jv_int(a, "cpu_ns", 0), cpu0;
		bool seen;
		uint64_t before = prev_waits_of(t, id, &seen, &cpu0);
		uint64_t runs = t->prev_n == 0 ? 0
				: seen	       ? waits - before
					       : waits;
		const struct jv *rk = jv_get(a, "restarts");
		uint64_t rst = rk != NULL
				       ? (uint64_t)rk->i
				       : name_moves(t, jv_str(a, "name"), id);
		double pct = -1;
		if (t->actor_stats) {
			uint64_t d = t->prev_n == 0 ? 0
				     : seen	    ? cpu - cpu0
						    : cpu;
			pct = secs(t) > 0 ? 100.0 * (double)d / 1e9 / secs(t)
					  : 0;
			t->busy += pct / 100.0;
		} else if (strcmp(jv_str(a, "state"), "running") == 0 ||
			   strcmp(jv_str(a, "state"), "notified") == 0) {
			t->busy += 1; /* running now */
		}
		t->total_runs += runs;
		if (!row_matches(t, a))
			continue;
		t->rows[t->nrows].r_a = a;
		t->rows[t->nrows].r_id = id;
		t->rows[t->nrows].r_runs = runs;
		t->rows[t->nrows].r_mbox = jv_int(a, "mailbox", -1);
		t->rows[t->nrows].r_mem = jv_int(a, "stack_high_water", 0);
		t->rows[t->nrows].r_rst = rst;
		t->rows[t->nrows].r_flt =
			jv_str(a, "plugin")[0] != '\0'
				? jv_int(a, "plugin_faults", 0)
				: -1;
		t->rows[t->nrows].r_cpu = pct;
		t->nrows++;
	}
	for (size_t i = 0; i < t->nrows; i++)
		t->rows[i].r_share =
			t->total_runs ? 100.0 * (double)t->rows[i].r_runs /
						(double)t->total_runs
				      : 0;
	cmp_rows_sort = t->sort;
	qsort(t->rows, t->nrows, sizeof *t->rows, cmp_rows);
	if (t->cursor >= (int)t->nrows)
		t->cursor = t->nrows > 0 ? (int)t->nrows - 1 : 0;
}

/* Take a sample: the previous one's waits are kept for the rates. */
static int sample(struct top *t)
{
	const struct jv *actors = jv_get(&t->snap, "actors");
	struct jv snap, stats;
	unsigned long long ticks;
	/* Keep the old sample's waits, sorted by id. */
	free(t->prev_ids);
	free(t->prev_waits);
	free(t->prev_cpu);
	t->prev_ids = NULL;
	t->prev_waits = NULL;
	t->prev_cpu = NULL;
	t->prev_n = 0;
	if (actors != NULL && actors->n > 0) {
		uint64_t *trip = malloc(3 * actors->n * sizeof *trip);
		t->prev_ids = malloc(actors->n * sizeof *t->prev_ids);
		t->prev_waits = malloc(actors->n * sizeof *t->prev_waits);
		t->prev_cpu = malloc(actors->n * sizeof *t->prev_cpu);
		if (trip != NULL && t->prev_ids != NULL &&
		    t->prev_waits != NULL && t->prev_cpu != NULL) {
			for (size_t i = 0; i < actors->n; i++) {
				const struct jv *a = &actors->kids[i];
				trip[3 * i] = (uint64_t)jv_int(a, "id", 0);
				trip[3 * i + 1] =
					(uint64_t)jv_int(a, "waits", 0);
				trip[3 * i + 2] =
					(uint64_t)jv_int(a, "cpu_ns", 0);
			}
			qsort(trip, actors->n, 3 * sizeof *trip, cmp_u64);
			for (size_t i = 0; i < actors->n; i++) {
				t->prev_ids[i] = trip[3 * i];
				t->prev_waits[i] = trip[3 * i + 1];
				t->prev_cpu[i] = trip[3 * i + 2];
			}
			t->prev_n = actors->n;
		}
		free(trip);
	}
	if (ask(t, "stats", &stats) != 0)
		return -1;
	if (ask(t, "snapshot", &snap) != 0) {
		jv_free(&stats);
		return -1;
	}
	jv_free(&t->snap);
	jv_free(&t->stats);
	t->snap = snap;
	t->stats = stats;
	t->prev_t_ns = t->t_ns;
	t->t_ns = now_ns();
	proc_usage(t->os_pid, &ticks, &t->rss_kib);
	if (t->prev_t_ns != 0 && ticks >= t->prev_ticks)
		t->cpu_pct = 100.0 * (double)(ticks - t->prev_ticks) /
			     (double)sysconf(_SC_CLK_TCK) /
			     ((double)(t->t_ns - t->prev_t_ns) / 1e9);
	t->prev_ticks = ticks;
	rows_make(t);
	return 0;
}

/* ------------------------------------------------------------ drawing */

static int64_t stat_get(const struct top *t, const char *name)
{
	return jv_int(jv_get(&t->stats, "stats"), name, 0);
}

static double secs(const struct top *t)
{
	return t->prev_t_ns ? (double)(t->t_ns - t->prev_t_ns) / 1e9 : 0;
}

static void draw_header(const struct top *t, FILE *f)
{
	fprintf(f,
		"smarm-top  %s  (os pid %ld)  interval %.1fs  sort: %s%s%s\n",
		t->path, t->os_pid, secs(t), sort_names[t->sort],
		t->filter[0] ? "  filter: " : "", t->filter);
	fprintf(f,
		"workers %lld (busy %.2f%s)  run queue %lld  actors %lld  "
		"memory %ld KiB  cpu %.0f%%\n",
		(long long)stat_get(t, "WORKERS"), t->busy,
		t->actor_stats ? "" : " now",
		(long long)stat_get(t, "RUN_QUEUE"),
		(long long)stat_get(t, "LIVE_ACTORS"), t->rss_kib, t->cpu_pct);
	fprintf(f,
		"preemptions %lld (async %lld)  restarts %lld  requests "
		"%lld  runs %llu\n",
		(long long)stat_get(t, "PREEMPT_SIGNALS"),
		(long long)stat_get(t, "PREEMPT_ASYNC"),
		(long long)stat_get(t, "SUP_RESTARTS"),
		(long long)stat_get(t, "SERVER_REQUESTS"),
		(unsigned long long)t->total_runs);
}

static void row_text(const struct top *t, const struct row *r, char *buf,
		     size_t cap)
{
	const struct jv *a = r->r_a;
	const char *name = jv_str(a, "name");
	const char *beh = jv_str(a, "behaviour");
	const char *plugin = jv_str(a, "plugin");
	const char *sn = jv_str(a, "state_name");
	const char *wait = jv_str(a, "wait");
	char what[64], state[32], mbox[24], cpu[16], flt[24];
	double s = secs(t);
	if (plugin[0] != '\0')
		snprintf(what, sizeof what, "%s%s%s", beh, sn[0] ? ":" : "",
			 sn);
	else
		snprintf(what, sizeof what, "%s", beh[0] ? beh : "-");
	snprintf(state, sizeof state, "%s%s%s", jv_str(a, "state"),
		 wait[0] ? "/" : "", wait);
	if (r->r_cpu < 0)
		snprintf(cpu, sizeof cpu, "-");
	else
		snprintf(cpu, sizeof cpu, "%.1f", r->r_cpu);
	if (r->r_flt < 0)
		snprintf(flt, sizeof flt, "-");
	else
		snprintf(flt, sizeof flt, "%lld", (long long)r->r_flt);
	if (r->r_mbox < 0)
		snprintf(mbox, sizeof mbox, "-");
	else
		snprintf(mbox, sizeof mbox, "%lld", (long long)r->r_mbox);
	snprintf(buf, cap,
		 "%-10s %-16.16s %-20.20s %-16.16s %9.0f %5.1f %5s %8lld %7s "
		 "%4llu %4s",
		 jv_str(a, "pid"), name[0] ? name : "-", what, state,
		 s > 0 ? (double)r->r_runs / s : 0, r->r_share, cpu,
		 (long long)(r->r_mem / 1024), mbox,
		 (unsigned long long)r->r_rst, flt);
}

static const char table_head[] =
	"PID        NAME             BEHAVIOUR            STATE            "
	"   RUNS/s  %RUN  %CPU STACK_KB    MBOX  RST  FLT";

static void draw_table(const struct top *t, FILE *f, int max_rows, bool tty)
{
	char line[256];
	fprintf(f, "%s\n", table_head);
	for (size_t i = 0; i < t->nrows && (max_rows < 0 || (int)i < max_rows);
	     i++) {
		row_text(t, &t->rows[i], line, sizeof line);
		if (tty && (int)i == t->cursor)
			fprintf(f, "\033[7m%s\033[0m\n", line);
		else
			fprintf(f, "%s\n", line);
	}
	if (max_rows >= 0 && (int)t->nrows > max_rows)
		fprintf(f, "... %zu more\n", t->nrows - (size_t)max_rows);
}

/* ------------------------------------------------------------ views */

static int term_rows(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
		return ws.ws_row;
	return 24;
}

static void print_tree(struct top *t, FILE *f)
{
	struct jv v;
	const struct jv *tree;
	if (ask(t, "tree", &v) != 0) {
		fprintf(f, "(no answer)\n");
		return;
	}
	tree = jv_get(&v, "tree");
	fprintf(f, "supervision tree of %s\n", t->path);
	for (size_t i = 0; tree != NULL && i < tree->n; i++) {
		const struct jv *a = jv_get(&tree->kids[i], "actor");
		int depth = (int)jv_int(&tree->kids[i], "depth", 0);
		const char *name = jv_str(a, "name");
		const char *beh = jv_str(a, "behaviour");
		const char *plugin = jv_str(a, "plugin");
		fprintf(f, "%*s%s %s%s%s%s%s  %s%s%s mailbox %lld\n", 2 * depth,
			"", jv_str(a, "pid"), name[0] ? name : "",
			name[0] ? " " : "", beh[0] ? beh : "actor",
			plugin[0] ? " of " : "", plugin, jv_str(a, "state"),
			jv_str(a, "wait")[0] ? "/" : "", jv_str(a, "wait"),
			(long long)jv_int(a, "mailbox", -1));
	}
	jv_free(&v);
}

static void print_list(FILE *f, const struct jv *o, const char *key)
{
	const struct jv *l = jv_get(o, key);
	fprintf(f, "%-14s", key);
	for (size_t i = 0; l != NULL && i < l->n; i++)
		fprintf(f, " %s", l->kids[i].str ? l->kids[i].str : "?");
	if (l == NULL || l->n == 0)
		fprintf(f, " -");
	fputc('\n', f);
}

static void print_actor(struct top *t, FILE *f, uint64_t id)
{
	struct jv v;
	const struct jv *a;
	char req[64];
	snprintf(req, sizeof req, "actor %llu", (unsigned long long)id);
	if (ask(t, req, &v) != 0) {
		fprintf(f, "actor %llu: gone\n", (unsigned long long)id);
		return;
	}
	a = jv_get(&v, "actor");
	for (size_t i = 0; a != NULL && i < a->n; i++) {
		const struct jv *m = &a->kids[i];
		if (m->type == JV_STR) {
			fprintf(f, "%-14s %s\n", m->key, m->str);
		} else if (m->type == JV_ARR) {
			fprintf(f, "%-14s", m->key);
			for (size_t k = 0; k < m->n; k++)
				fprintf(f, " %lld", (long long)m->kids[k].i);
			fputc('\n', f);
		} else
			fprintf(f, "%-14s %lld\n", m->key, (long long)m->i);
	}
	print_list(f, &v, "links");
	print_list(f, &v, "monitors");
	print_list(f, &v, "monitored_by");
	a = jv_get(&v, "state_text"); /* a server's format_status */
	if (a != NULL && a->type == JV_STR && a->str[0] != '\0')
		fprintf(f, "%-14s %s\n", "status", a->str);
	jv_free(&v);
}

/* ------------------------------------------------------------ the tty */

static struct termios tty_saved;
static bool tty_raw;

static void tty_restore(void)
{
	if (tty_raw) {
		tcsetattr(STDIN_FILENO, TCSANOW, &tty_saved);
		fputs("\033[?25h\033[?1049l", stdout); /* cursor, screen */
		fflush(stdout);
		tty_raw = false;
	}
}

static void on_signal(int sig)
{
	(void)sig;
	tty_restore();
	_exit(0);
}

static void tty_enter(void)
{
	struct termios t;
	if (tcgetattr(STDIN_FILENO, &tty_saved) != 0)
		return;
	t = tty_saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &t);
	tty_raw = true;
	atexit(tty_restore);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fputs("\033[?1049h\033[?25l", stdout); /* alternate screen */
}

/* Read one key within ms: the key, 0 on timeout, -1 on end of input.
 * Arrow keys come back as 'k' (up) and 'j' (down). */
static int key_wait(int ms)
{
	struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
	unsigned char c;
	if (poll(&p, 1, ms) <= 0)
		return 0;
	if (read(STDIN_FILENO, &c, 1) != 1)
		return -1;
	if (c == 0x1b) {
		unsigned char seq[2];
		struct pollfd q = { STDIN_FILENO, POLLIN, 0 };
		if (poll(&q, 1, 20) <= 0 || read(STDIN_FILENO, seq, 2) != 2)
			return 0x1b;
		if (seq[0] == '[' && seq[1] == 'A')
			return 'k';
		if (seq[0] == '[' && seq[1] == 'B')
			return 'j';
		return 0x1b;
	}
	return c;
}

static void screen_clear(void)
{
	fputs("\033[H\033[2J", stdout);
}

static void draw_main(struct top *t)
{
	int rows = term_rows() - 6;
	screen_clear();
	draw_header(t, stdout);
	draw_table(t, stdout, rows < 1 ? 1 : rows, true);
	printf("keys: c b m r sort cpu/queue/memory/restarts  / filter  "
	       "Enter open  t tree  q quit");
	fflush(stdout);
}

/* A full-screen text view until a key is pressed. */
static int view(struct top *t, void (*fn)(struct top *, FILE *, uint64_t),
		uint64_t id)
{
	screen_clear();
	fn(t, stdout, id);
	printf("\n(any key: back)");
	fflush(stdout);
	return key_wait(-1);
}

static void tree_view(struct top *t, FILE *f, uint64_t id)
{
	(void)id;
	print_tree(t, f);
}

static void read_filter(struct top *t)
{
	size_t n = 0;
	screen_clear();
	printf("filter (name, behaviour or plugin; empty: none): ");
	fflush(stdout);
	for (;;) {
		int c = key_wait(-1);
		if (c <= 0 || c == '\n' || c == '\r' || c == 0x1b)
			break;
		if ((c == 0x7f || c == 8) && n > 0) {
			n--;
			fputs("\b \b", stdout);
		} else if (c >= 0x20 && c < 0x7f && n < sizeof t->filter - 1) {
			t->filter[n++] = (char)c;
			putchar(c);
		}
		fflush(stdout);
	}
	t->filter[n] = '\0';
	t->cursor = 0;
}

static int interactive(struct top *t)
{
	uint64_t next = now_ns();
	tty_enter();
	for (;;) {
		int c, wait_ms;
		uint64_t now = now_ns();
		if (now >= next) {
			if (sample(t) != 0) {
				tty_restore();
				fprintf(stderr, "smarm-top: %s: node gone\n",
					t->path);
				return 1;
			}
			next = now_ns() + (uint64_t)(t->interval * 1e9);
			draw_main(t);
			now = now_ns();
		}
		wait_ms = next > now ? (int)((next - now) / 1000000) : 0;
		c = key_wait(wait_ms);
		if (c == 0)
			continue;
		if (c < 0 || c == 'q')
			break;
		switch (c) {
		case 'c':
			t->sort = SORT_CPU;
			break;
		case 'b':
			t->sort = SORT_QUEUE;
			break;
		case 'm':
			t->sort = SORT_MEMORY;
			break;
		case 'r':
			t->sort = SORT_RESTARTS;
			break;
		case 'j':
			if (t->cursor + 1 < (int)t->nrows)
				t->cursor++;
			break;
		case 'k':
			if (t->cursor > 0)
				t->cursor--;
			break;
		case '/':
			read_filter(t);
			break;
		case 't':
			if (view(t, tree_view, 0) == 'q')
				return 0;
			break;
		case '\n':
		case '\r':
		case 'o':
			if (t->nrows > 0 &&
			    view(t, print_actor, t->rows[t->cursor].r_id) ==
				    'q')
				return 0;
			break;
		default:
			break;
		}
		rows_make(t);
		draw_main(t);
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smarm-top [-d SECONDS] [-s cpu|queue|memory|restarts] "
		"[-f TEXT]\n"
		"                 [--once | --json] SOCKET|PID\n"
		"Watch a running libsmarm node through its introspection "
		"socket\n"
		"(smarm-run -S SOCKET; or the OS pid of a process serving "
		"one).\n"
		"  -d, --delay S   seconds between samples (default 2; "
		"--once: 1)\n"
		"  -s, --sort K    cpu (%%CPU, or runs in the interval), queue "
		"(mailbox), memory\n"
		"                  (stack high water), restarts\n"
		"  -f, --filter T  only actors whose name, behaviour or plugin "
		"holds T\n"
		"      --once      print one screen as text and exit\n"
		"      --json      print the node's answers as one JSON object "
		"and exit\n"
		"Keys: c b m r sort, / filter, j k (arrows) move, Enter open, "
		"t tree, q quit.\n");
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "sort", required_argument, NULL, 's' },
		{ "filter", required_argument, NULL, 'f' },
		{ "once", no_argument, NULL, 'O' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct top t;
	bool once = false, json = false, delay_set = false;
	char err[256];
	struct jv hello;
	int c, rc = 0;

	memset(&t, 0, sizeof t);
	t.interval = 2;
	while ((c = getopt_long(argc, argv, "d:s:f:h", longs, NULL)) != -1) {
		switch (c) {
		case 'd':
			t.interval = atof(optarg);
			delay_set = true;
			if (t.interval < 0.05 || t.interval > 3600) {
				fprintf(stderr, "smarm-top: bad delay '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 's':
			t.sort = -1;
			for (int k = 0; k < 4; k++)
				if (strcmp(optarg, sort_names[k]) == 0)
					t.sort = k;
			if (t.sort < 0) {
				fprintf(stderr, "smarm-top: bad sort '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'f':
			snprintf(t.filter, sizeof t.filter, "%s", optarg);
			break;
		case 'O':
			once = true;
			break;
		case 'J':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || (once && json)) {
		usage(stderr);
		return 2;
	}
	t.fd = obsc_connect(argv[optind], t.path, sizeof t.path, err,
			    sizeof err);
	if (t.fd < 0) {
		fprintf(stderr, "smarm-top: %s\n", err);
		return 1;
	}
	if (ask(&t, "hello", &hello) != 0) {
		fprintf(stderr, "smarm-top: %s: no answer (refused?)\n",
			t.path);
		return 1;
	}
	t.os_pid = (long)jv_int(&hello, "os_pid", 0);
	t.actor_stats = jv_int(&hello, "actor_stats", 0) != 0;
	jv_free(&hello);
	if (json) {
		/* The node's own answers, one object: stable for scripts. */
		char *h = obsc_ask(t.fd, "hello");
		char *s = obsc_ask(t.fd, "stats");
		char *n = obsc_ask(t.fd, "snapshot");
		char *tr = obsc_ask(t.fd, "tree");
		if (h && s && n && tr)
			printf("{\"hello\":%s,\"stats\":%s,\"snapshot\":%s,"
			       "\"tree\":%s}\n",
			       h, s, n, tr);
		else
			rc = 1;
		free(h);
		free(s);
		free(n);
		free(tr);
	} else if (once) {
		/* Two samples, so the rates cover an interval. */
		struct timespec d;
		double iv = delay_set ? t.interval : 1;
		d.tv_sec = (time_t)iv;
		d.tv_nsec = (long)((iv - (double)d.tv_sec) * 1e9);
		if (sample(&t) != 0 || nanosleep(&d, NULL) != 0 ||
		    sample(&t) != 0) {
			fprintf(stderr, "smarm-top: %s: node gone\n", t.path);
			rc = 1;
		} else {
			draw_header(&t, stdout);
			draw_table(&t, stdout, -1, false);
		}
	} else {
		rc = interactive(&t);
		tty_restore();
	}
	close(t.fd);
	jv_free(&t.snap);
	jv_free(&t.stats);
	free(t.rows);
	free(t.prev_ids);
	free(t.prev_waits);
	free(t.prev_cpu);
	for (size_t i = 0; i < t.nnames; i++)
		free(t.names[i].n_name);
	free(t.names);
	return rc;
}
