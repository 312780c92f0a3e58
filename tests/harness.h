/* SPDX-License-Identifier: MIT */
/*
 * harness.h - shared helpers for the Check suites: run a root actor on a
 * fresh node, a watchdog for hang-prone tests, and the suite main().
 *
 * Tests under tests/api use only the public headers (the embedder's
 * view). Results observed inside actors are funnelled into plain globals
 * and asserted after the run, so a failing assert never fires inside an
 * actor's stack.
 */
#ifndef SMARM_TEST_HARNESS_H
#define SMARM_TEST_HARNESS_H

#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <smarm/smarm.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Scale factor for time bounds on slow machines (SMARM_TEST_TIME_SCALE). */
static inline double harness_time_scale(void)
{
	const char *s = getenv("SMARM_TEST_TIME_SCALE");
	double v = s ? atof(s) : 1.0;
	return v > 0 ? v : 1.0;
}

/*
 * Workers for a run asked for `workers`: a run of several workers gets
 * at least SMARM_TEST_WORKERS of them (to loop suites oversubscribed);
 * a one-worker run stays one (it may rely on running alone).
 */
static inline int harness_workers(int workers)
{
	const char *s = getenv("SMARM_TEST_WORKERS");
	int v = s ? atoi(s) : 0;
	return workers > 1 && v > workers ? v : workers;
}

#define MS(x) ((uint64_t)(x)*1000000ull)
#define US(x) ((uint64_t)(x)*1000ull)

/* Resident bytes of this process (/proc/self/statm), or -1. */
static inline long harness_rss_bytes(void)
{
	long pages = 0, resident = -1;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* Open a node with `workers` workers; the caller runs and closes it. */
/*
 * The voluntary context switches of this process's first thread whose
 * name (/proc/self/task/TID/comm) starts with name ("smarm-monitor",
 * "smarm-epoll"), or -1 if none has it.
 */
static inline int64_t harness_thread_switches(const char *name)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *e;
	int64_t v = -1;
	if (dir == NULL)
		return -1;
	while (v < 0 && (e = readdir(dir)) != NULL) {
		char path[320], line[128];
		bool hit = false;
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/comm",
			 e->d_name);
		if ((f = fopen(path, "r")) != NULL) {
			hit = fgets(line, sizeof line, f) != NULL &&
			      strncmp(line, name, strlen(name)) == 0;
			fclose(f);
		}
		if (!hit)
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/status",
			 e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof line, f) != NULL)
			if (sscanf(line, "voluntary_ctxt_switches: %" SCNd64,
				   &v) == 1)
				break;
		fclose(f);
	}
	closedir(dir);
	return v;
}

static inline smarm_node_t *harness_open(int workers)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS,
					      harness_workers(workers)),
			 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	return node;
}

/* One SMARM_STAT_* value of node. */
static inline int64_t harness_stat(smarm_node_t *node, int stat)
{
	int64_t v = -1;
	ck_assert_int_eq(smarm_node_get_int(node, stat, &v), 0);
	return v;
}

/*
 * Poll stat of node until it equals want (at_least: reaches it), in 1
 * ms steps (an actor sleeps, a plain thread naps), for at most 10 s
 * (scaled by SMARM_TEST_TIME_SCALE). Returns whether it got there: wait
 * for the condition, never for a fixed time.
 */
static inline bool harness_await_stat_to(smarm_node_t *node, int stat,
					 int64_t want, bool at_least)
{
	uint64_t deadline =
		smarm_now_ns() + (uint64_t)(10e9 * harness_time_scale());
	for (;;) {
		int64_t v = -1;
		smarm_node_get_int(node, stat, &v);
		if (v == want || (at_least && v > want))
			return true;
		if (smarm_now_ns() > deadline)
			return false;
		if (smarm_node_current() != NULL) {
			smarm_actor_sleep(1000000);
		} else {
			struct timespec ts = { 0, 1000000L };
			nanosleep(&ts, NULL);
		}
	}
}

/* harness_await_stat_to: until stat equals want. */
static inline bool harness_await_stat(smarm_node_t *node, int stat,
				      int64_t want)
{
	return harness_await_stat_to(node, stat, want, false);
}

/*
 * Checks inside actors, hooks and helper threads: recorded, not asserted
 * (a failing assert must not fire on an actor's stack). HARNESS_CHECK
 * keeps the first failing line; harness_checks_assert() asserts after
 * the run that there was none, harness_checks_reset() before it.
 */
static _Atomic int harness_fail_line;
#define HARNESS_CHECK(c)                                                       \
	do {                                                                   \
		int zero_ = 0;                                                 \
		if (!(c))                                                      \
			atomic_compare_exchange_strong(&harness_fail_line,     \
						       &zero_, __LINE__);      \
	} while (0)
#define HARNESS_EQ(a, b) HARNESS_CHECK((a) == (b))

/*
 * One SMARM_STAT_* value of the calling actor's node (-1 if it cannot
 * be read, which is also recorded as a failed check): for actors,
 * whose stacks must not run ck_assert.
 */
static inline int64_t harness_actor_stat(int stat)
{
	int64_t v = -1;
	HARNESS_EQ(smarm_node_get_int(smarm_node_current(), stat, &v), 0);
	return v;
}

static inline void harness_checks_reset(void)
{
	atomic_store(&harness_fail_line, 0);
}

#define harness_checks_assert()                                                \
	ck_assert_msg(atomic_load(&harness_fail_line) == 0,                    \
		      "check failed inside the run at line %d",                \
		      atomic_load(&harness_fail_line))

/* Copy src into dst[cap] (cap > 0), cut short if it does not fit: a
 * report buffer that keeps what a test compares. */
static inline void harness_copy(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * A node's log lines kept as text (harness_log_capture, a
 * smarm_config_set_logger handler: each line also goes to stderr as a
 * TAP comment), for a test to look for one (harness_log_count). One per
 * process; harness_log_clear empties it.
 */
struct harness_log {
	pthread_mutex_t mu;
	char buf[1 << 16];
	size_t len;
};

static inline struct harness_log *harness_log(void)
{
	static struct harness_log l = { .mu = PTHREAD_MUTEX_INITIALIZER };
	return &l;
}

static inline void harness_log_capture(void *arg, const smarm_log_event_t *ev)
{
	struct harness_log *l = harness_log();
	(void)arg;
	pthread_mutex_lock(&l->mu);
	int k = snprintf(l->buf + l->len, sizeof l->buf - l->len, "%s\n",
			 ev->text);
	if (k > 0 && l->len + (size_t)k < sizeof l->buf)
		l->len += (size_t)k;
	pthread_mutex_unlock(&l->mu);
	fprintf(stderr, "# log: %s\n", ev->text);
}

static inline void harness_log_clear(void)
{
	struct harness_log *l = harness_log();
	pthread_mutex_lock(&l->mu);
	l->len = 0;
	l->buf[0] = '\0';
	pthread_mutex_unlock(&l->mu);
}

/* How many times s stands in the captured lines. */
static inline int harness_log_count(const char *s)
{
	struct harness_log *l = harness_log();
	int n = 0;
	pthread_mutex_lock(&l->mu);
	for (const char *p = l->buf; (p = strstr(p, s)) != NULL; p++)
		n++;
	pthread_mutex_unlock(&l->mu);
	return n;
}

static inline bool harness_log_has(const char *s)
{
	return harness_log_count(s) > 0;
}

/* Is fd registered in an epoll set of this process (fdinfo's "tfd:")? */
static inline bool harness_fd_in_epoll(int fd)
{
	DIR *dir = opendir("/proc/self/fdinfo");
	struct dirent *e;
	bool found = false;
	if (dir == NULL)
		return false;
	while (!found && (e = readdir(dir)) != NULL) {
		char path[300], line[256];
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/fdinfo/%s", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof line, f) != NULL) {
			int tfd;
			if (sscanf(line, "tfd: %d", &tfd) == 1 && tfd == fd) {
				found = true;
				break;
			}
		}
		fclose(f);
	}
	closedir(dir);
	return found;
}

/* Nanoseconds since t0 (a smarm_now_ns() reading). */
static inline uint64_t harness_since(uint64_t t0)
{
	return smarm_now_ns() - t0;
}

/* smarm_chan_len's count, or -1 if the call failed (usable in actors). */
static inline int64_t harness_chan_len(smarm_chan_t *ch)
{
	size_t n;
	return smarm_chan_len(ch, &n) == 0 ? (int64_t)n : -1;
}

/* Give up the caller's sender and receiver references of ch. */
static inline void harness_chan_drop(smarm_chan_t *ch)
{
	smarm_chan_sender_free(ch); /* may already be closed: ESTATE is ok */
	smarm_chan_receiver_free(ch);
}

/* harness_chan_drop as a cleanup handler (smarm_cleanup_push). */
static inline void harness_chan_drop_cb(void *ch)
{
	harness_chan_drop(ch);
}

/* A channel of smarm_signal_t, for monitors and trapped exits. */
static inline smarm_chan_t *harness_sig_chan(void)
{
	smarm_chan_t *ch = NULL;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof(smarm_signal_t), NULL), 0);
	return ch;
}

/* Receive one signal, with a generous bound (a lost one fails). */
static inline int harness_recv_sig(smarm_chan_t *ch, smarm_signal_t *s)
{
	return smarm_chan_recv_timeout(ch, s, MS(5000) * harness_time_scale());
}

/* Park the calling actor until it is stopped or signalled. */
static inline void harness_park(void)
{
	smarm_chan_t *ch = NULL;
	int v;
	if (smarm_chan_alloc(&ch, sizeof v, NULL) != 0)
		return;
	smarm_cleanup_push(harness_chan_drop_cb, ch);
	smarm_chan_recv(ch, &v);
}

/*
 * Open a node with `workers` workers and up to two more options (opt > 0:
 * opt = val), run root(arg), close the node. Asserts the run succeeded
 * and no actor is left, and returns how the root ended.
 */
static inline int harness_run_opt2(int workers, int opt, int64_t val, int opt2,
				   int64_t val2, smarm_actor_cb root, void *arg,
				   intptr_t *reason)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int how = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS,
					      harness_workers(workers)),
			 0);
	if (opt > 0)
		ck_assert_int_eq(smarm_config_set_int(cfg, opt, val), 0);
	if (opt2 > 0)
		ck_assert_int_eq(smarm_config_set_int(cfg, opt2, val2), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_node_run(node, root, arg, &how, reason), 0);
	int64_t live = -1;
	ck_assert_int_eq(
		smarm_node_get_int(node, SMARM_STAT_LIVE_ACTORS, &live), 0);
	ck_assert_int_eq(live, 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	return how;
}

/* harness_run_opt2 with one option. */
static inline int harness_run_opt(int workers, int opt, int64_t val,
				  smarm_actor_cb root, void *arg,
				  intptr_t *reason)
{
	return harness_run_opt2(workers, opt, val, 0, 0, root, arg, reason);
}

/* harness_run_opt with optional max_actors (0 = default). */
static inline int harness_run_ex(int workers, int64_t max_actors,
				 smarm_actor_cb root, void *arg,
				 intptr_t *reason)
{
	return harness_run_opt(workers,
			       max_actors > 0 ? SMARM_OPT_MAX_ACTORS : 0,
			       max_actors, root, arg, reason);
}

static inline int harness_run(int workers, smarm_actor_cb root, void *arg)
{
	return harness_run_ex(workers, 0, root, arg, NULL);
}

/* Elapsed-time bound check that an env var can widen. */
#define ck_assert_elapsed_lt(ns, bound_ns)                                     \
	ck_assert_uint_lt((ns),                                                \
			  (uint64_t)((double)(bound_ns)*harness_time_scale()))

#define SMARM_TEST_MAIN(name)                                                  \
	int main(void)                                                         \
	{                                                                      \
		SRunner *sr = srunner_create(smarm_test_##name##_suite());     \
		srunner_run_all(sr, CK_ENV);                                   \
		int failed = srunner_ntests_failed(sr);                        \
		srunner_free(sr);                                              \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;                   \
	}

/*
 * Run fn in a child process (it _exits 0 if fn returns) with its stderr
 * captured into err (at most cap - 1 bytes, NUL-terminated); *status as
 * waitpid(2) gives it. For what must end the process: faults, aborts.
 */
static inline void harness_child(void (*fn)(void), int *status, char *err,
				 size_t cap)
{
	int fds[2];
	size_t len = 0;
	pid_t pid;
	ck_assert_int_eq(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		close(fds[1]);
		fn();
		_exit(0);
	}
	close(fds[1]);
	for (;;) {
		ssize_t k = read(fds[0], err + len, cap - 1 - len);
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	err[len] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, status, 0), pid);
}

#endif /* SMARM_TEST_HARNESS_H */
