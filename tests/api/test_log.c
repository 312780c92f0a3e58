/* SPDX-License-Identifier: MIT */
/*
 * test_log.c - the node's logger (smarm_config_set_logger, smarm_log,
 * SMARM_OPT_LOG_LEVEL, SMARM_STAT_LOG_DROPPED): an actor's own crash is
 * one crash report naming it (pid, registered name, reason, spawner),
 * while an actor ended by a stop, an exit signal or a crash along a link
 * has none; smarm_log lines keep their level and actor, become one line
 * and are cut to SMARM_LOG_LINE_MAX; the level filters; a NULL handler
 * logs nothing; the handler runs on a thread that is not a worker and
 * may block without stalling actors; a full queue drops and counts, and
 * close hands every queued event over; the default handler's format;
 * the calls' misuse errors; a supervisor's progress reports, at INFO
 * only.
 */
#include "harness.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define EV_MAX 8192

struct rec {
	int level, kind;
	uint64_t pid;
	char text[SMARM_LOG_LINE_MAX + 1];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct rec *evs; /* EV_MAX records */
static int nev;
static bool on_worker; /* the handler ran on an actor's thread */
static bool hold;      /* the handler waits while set */
static int held;       /* handler calls waiting on hold */

static void handler(void *arg, const smarm_log_event_t *ev)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	if (smarm_node_current() != NULL)
		on_worker = true;
	held++;
	pthread_cond_broadcast(&cv);
	while (hold)
		pthread_cond_wait(&cv, &mu);
	held--;
	if (nev < EV_MAX) {
		evs[nev].level = ev->level;
		evs[nev].kind = ev->kind;
		evs[nev].pid = ev->pid.id;
		snprintf(evs[nev].text, sizeof evs[nev].text, "%s", ev->text);
		nev++;
	}
	pthread_mutex_unlock(&mu);
}

static void reset(void)
{
	if (evs == NULL)
		evs = calloc(EV_MAX, sizeof *evs);
	ck_assert_ptr_nonnull(evs);
	nev = 0;
	on_worker = false;
	hold = false;
	held = 0;
	harness_checks_reset();
}

/* Run root on a node with the test's handler (fn) and log level. */
static void run_logged(smarm_log_fn fn, int level, smarm_actor_cb root,
		       void *arg)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int how = -1;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS,
					      harness_workers(2)),
			 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_LOG_LEVEL, level),
			 0);
	ck_assert_int_eq(smarm_config_set_logger(cfg, fn, NULL), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_node_run(node, root, arg, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(smarm_node_close(node), 0); /* delivers the rest */
	harness_checks_assert();
}

/* --------------------------------------------------------- crash reports */

static _Atomic uint64_t crasher_pid, linked_pid, killed_pid, root_pid;

static void crasher(void *arg)
{
	(void)arg;
	crasher_pid = smarm_actor_self().id;
	HARNESS_EQ(smarm_register("the_crasher", NULL), 0);
	smarm_actor_crash(42);
}

static void linked(void *arg)
{
	smarm_pid_t c;
	(void)arg;
	linked_pid = smarm_actor_self().id;
	HARNESS_EQ(smarm_actor_spawn(&c, crasher, NULL, NULL), 0);
	HARNESS_EQ(smarm_link(c), 0);
	HARNESS_EQ(smarm_actor_detach(c), 0);
	harness_park(); /* ended by the crash along the link */
}

static void crash_root(void *arg)
{
	smarm_pid_t l, k, q;
	int how = -1;
	(void)arg;
	root_pid = smarm_actor_self().id;
	HARNESS_EQ(smarm_actor_spawn(&l, linked, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(l, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	/* killed, stopped by a crash-reason exit signal, or ending
	 * normally: no report */
	HARNESS_EQ(
		smarm_actor_spawn(&k, (smarm_actor_cb)harness_park, NULL, NULL),
		0);
	killed_pid = k.id;
	smarm_actor_yield();
	HARNESS_EQ(smarm_actor_stop(k), 0);
	HARNESS_EQ(smarm_actor_join(k, NULL, NULL), 0);
	HARNESS_EQ(
		smarm_actor_spawn(&q, (smarm_actor_cb)harness_park, NULL, NULL),
		0);
	smarm_actor_yield();
	HARNESS_EQ(smarm_actor_send_exit(q, SMARM_EXIT_CRASHED, 7), 0);
	HARNESS_EQ(smarm_actor_join(q, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
}

START_TEST(test_log_crash_report_names_the_crasher_once)
{
	char want[64];
	reset();
	run_logged(handler, SMARM_LOG_NOTICE, crash_root, NULL);
	ck_assert_int_eq(nev, 1);
	ck_assert_int_eq(evs[0].kind, SMARM_REPORT_CRASH);
	ck_assert_int_eq(evs[0].level, SMARM_LOG_ERROR);
	ck_assert_uint_eq(evs[0].pid, crasher_pid);
	ck_assert_msg(strstr(evs[0].text, "crash report: actor ") ==
			      evs[0].text,
		      "%s", evs[0].text);
	ck_assert_msg(strstr(evs[0].text, "name 'the_crasher'") != NULL, "%s",
		      evs[0].text);
	ck_assert_msg(strstr(evs[0].text, "crashed, reason 42") != NULL, "%s",
		      evs[0].text);
	snprintf(want, sizeof want, "spawned by actor %u.%u",
		 (unsigned)(linked_pid & 0xffffff),
		 (unsigned)(linked_pid >> 32));
	ck_assert_msg(strstr(evs[0].text, want) != NULL, "%s, want %s",
		      evs[0].text, want);
	ck_assert(!on_worker);
}
END_TEST

/* A crash with a status as its reason names the status too. */
static void status_crasher(void *arg)
{
	(void)arg;
	smarm_actor_crash(SMARM_ENOMEM);
}

static void status_root(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&p, status_crasher, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
}

START_TEST(test_log_crash_report_names_a_status_reason)
{
	reset();
	run_logged(handler, SMARM_LOG_ERROR, status_root, NULL);
	ck_assert_int_eq(nev, 1);
	ck_assert_msg(strstr(evs[0].text, "(SMARM_ENOMEM)") != NULL, "%s",
		      evs[0].text);
	ck_assert_msg(strstr(evs[0].text, "spawned by actor") != NULL, "%s",
		      evs[0].text);
}
END_TEST

/* ------------------------------------------------------- supervisor reports */

/* Set once the root monitors the supervisor: a kid crashes only then,
 * or the supervisor could be gone (its intensity reached) before the
 * monitor, which would then fire noproc, not shutdown. */
static atomic_int sup_watched;

static void kid_crasher(void *arg)
{
	(void)arg;
	while (!atomic_load(&sup_watched))
		smarm_actor_sleep(1000000);
	smarm_actor_crash(9);
}

/*
 * A supervisor whose child crashes at once, intensity 1: the child's
 * crash report and the supervisor's child_terminated report, twice (the
 * restart is admitted once), then the supervisor's shutdown report.
 */
static void sup_root(void *arg)
{
	smarm_sup_spec_t *spec = NULL;
	smarm_chan_t *downs = harness_sig_chan();
	smarm_signal_t sig;
	smarm_pid_t sup;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&spec), 0);
	HARNESS_EQ(smarm_sup_spec_set_intensity(spec, 1, MS(60000)), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(spec, "kid", kid_crasher, NULL,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_start(spec, &sup), 0);
	smarm_sup_spec_free(spec);
	HARNESS_EQ(smarm_monitor(sup, downs, NULL), 0);
	atomic_store(&sup_watched, 1);
	HARNESS_EQ(harness_recv_sig(downs, &sig), 0);
	HARNESS_EQ(sig.how, SMARM_EXIT_SHUTDOWN);
	harness_chan_drop(downs);
}

START_TEST(test_log_supervisor_reports)
{
	int crash = 0, term = 0, down = 0;
	reset();
	atomic_store(&sup_watched, 0);
	run_logged(handler, SMARM_LOG_NOTICE, sup_root, NULL);
	for (int i = 0; i < nev; i++) {
		if (evs[i].kind == SMARM_REPORT_CRASH)
			crash++;
		else if (evs[i].kind == SMARM_REPORT_SUPERVISOR &&
			 strstr(evs[i].text, "child 'kid' terminated: crashed, "
					     "reason 9") != NULL)
			term++;
		else if (evs[i].kind == SMARM_REPORT_SUPERVISOR &&
			 strstr(evs[i].text, "reached its maximum restart "
					     "intensity (1 restarts in 60000 "
					     "ms): shutting down") != NULL)
			down++;
		else
			ck_abort_msg("unexpected report %d: %s", evs[i].kind,
				     evs[i].text);
		ck_assert_int_eq(evs[i].level, SMARM_LOG_ERROR);
	}
	ck_assert_int_eq(crash, 2);
	ck_assert_int_eq(term, 2);
	ck_assert_int_eq(down, 1);
	ck_assert_int_eq(evs[nev - 1].kind, SMARM_REPORT_SUPERVISOR);
	ck_assert_msg(strstr(evs[nev - 1].text, "supervisor report: actor ") ==
			      evs[nev - 1].text,
		      "%s", evs[nev - 1].text);
}
END_TEST

/* ---------------------------------------------------- progress reports */

static _Atomic uint64_t prog_sup, prog_a, prog_b;

static void prog_a_body(void *arg)
{
	(void)arg;
	prog_a = smarm_actor_self().id;
	harness_park();
}

static void prog_b_body(void *arg)
{
	(void)arg;
	prog_b = smarm_actor_self().id;
	HARNESS_EQ(smarm_sup_ready(), 0);
	harness_park();
}

/*
 * A supervisor starts "a" (no readiness report) and "b" (one); "a" is
 * killed and restarted; "ig" says ignore (no process: no progress).
 */
static void progress_root(void *arg)
{
	smarm_sup_spec_t *spec = NULL;
	smarm_pid_t sup, a1;
	uint64_t t0;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&spec), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(spec, "a", prog_a_body, NULL,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_spec_add_child(spec, "b", prog_b_body, NULL,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
	HARNESS_EQ(smarm_sup_spec_set_child_ready(spec, "b", MS(5000)), 0);
	HARNESS_EQ(smarm_sup_start(spec, &sup), 0);
	smarm_sup_spec_free(spec);
	prog_sup = sup.id;
	t0 = smarm_now_ns();
	while (prog_a == 0 && harness_since(t0) < MS(5000))
		smarm_actor_sleep(MS(1));
	a1.id = prog_a;
	HARNESS_EQ(smarm_actor_send_exit(a1, SMARM_EXIT_STOPPED, 0), 0);
	t0 = smarm_now_ns();
	while (prog_a == a1.id && harness_since(t0) < MS(5000))
		smarm_actor_sleep(MS(1));
	HARNESS_CHECK(prog_a != a1.id);
	HARNESS_EQ(smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0), 0);
	HARNESS_CHECK(harness_await_stat(smarm_node_current(),
					 SMARM_STAT_LIVE_ACTORS, 1));
}

/* "started child 'id', pid I.G" of pid. */
static bool is_progress(const struct rec *r, const char *id, uint64_t pid)
{
	char want[128];
	snprintf(want, sizeof want, "started child '%s', pid %u.%u", id,
		 (unsigned)(pid & 0xffffff), (unsigned)(pid >> 32));
	return r->kind == SMARM_REPORT_PROGRESS && strstr(r->text, want);
}

/*
 * OTP's progress reports: at level INFO, one per child started, a
 * restart included, made by the supervisor (the event's pid), naming
 * the child's id and pid; below the default level (NOTICE) none, as
 * OTP's are off by default since OTP 21 (test_log_supervisor_reports
 * runs at NOTICE and sees none).
 */
START_TEST(test_log_progress_reports_at_info)
{
	int a = 0, b = 0, restarted = -1;
	reset();
	prog_sup = prog_a = prog_b = 0;
	run_logged(handler, SMARM_LOG_INFO, progress_root, NULL);
	for (int i = 0; i < nev; i++) {
		if (evs[i].kind != SMARM_REPORT_PROGRESS)
			continue;
		ck_assert_int_eq(evs[i].level, SMARM_LOG_INFO);
		ck_assert_uint_eq(evs[i].pid, prog_sup);
		ck_assert_msg(strstr(evs[i].text, "progress report: actor ") ==
				      evs[i].text,
			      "%s", evs[i].text);
		if (strstr(evs[i].text, "started child 'a'") != NULL) {
			if (a++ > 0)
				restarted = i; /* the second 'a' */
		} else {
			ck_assert_msg(is_progress(&evs[i], "b", prog_b), "%s",
				      evs[i].text);
			b++;
		}
	}
	ck_assert_int_eq(a, 2); /* started, then restarted */
	ck_assert_int_eq(b, 1);
	ck_assert_msg(is_progress(&evs[restarted], "a", prog_a), "%s",
		      evs[restarted].text);
	/* at the default level: none */
	reset();
	prog_sup = prog_a = prog_b = 0;
	run_logged(handler, SMARM_LOG_NOTICE, progress_root, NULL);
	for (int i = 0; i < nev; i++)
		ck_assert_int_ne(evs[i].kind, SMARM_REPORT_PROGRESS);
}
END_TEST

/* ------------------------------------------------------------ smarm_log */

static void lines_root(void *arg)
{
	char big[SMARM_LOG_LINE_MAX * 2];
	(void)arg;
	root_pid = smarm_actor_self().id;
	HARNESS_EQ(smarm_log(SMARM_LOG_WARNING, "disk %d%% full", 93), 0);
	HARNESS_EQ(smarm_log(SMARM_LOG_INFO, "two\nlines\tand a tab"), 0);
	HARNESS_EQ(smarm_log(SMARM_LOG_DEBUG, "filtered out"), 0);
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	HARNESS_EQ(smarm_log(SMARM_LOG_ERROR, "%s", big), 0);
	HARNESS_EQ(smarm_log(0, "x"), SMARM_EINVAL);
	HARNESS_EQ(smarm_log(8, "x"), SMARM_EINVAL);
	HARNESS_EQ(smarm_log(SMARM_LOG_ERROR, NULL), SMARM_EINVAL);
}

START_TEST(test_log_lines_keep_level_actor_and_one_line)
{
	reset();
	run_logged(handler, SMARM_LOG_INFO, lines_root, NULL);
	ck_assert_int_eq(nev, 3);
	ck_assert_int_eq(evs[0].level, SMARM_LOG_WARNING);
	ck_assert_int_eq(evs[0].kind, SMARM_REPORT_LINE);
	ck_assert_uint_eq(evs[0].pid, root_pid);
	ck_assert_str_eq(evs[0].text, "disk 93% full");
	ck_assert_int_eq(evs[1].level, SMARM_LOG_INFO);
	ck_assert_str_eq(evs[1].text, "two lines and a tab");
	ck_assert_int_eq(evs[2].level, SMARM_LOG_ERROR);
	ck_assert_uint_eq(strlen(evs[2].text), SMARM_LOG_LINE_MAX);
	ck_assert(!on_worker);
}
END_TEST

/* Level 0 and a NULL handler deliver nothing; ERROR only errors. */
START_TEST(test_log_level_and_null_handler_filter)
{
	reset();
	run_logged(handler, 0, lines_root, NULL);
	ck_assert_int_eq(nev, 0);
	run_logged(NULL, SMARM_LOG_DEBUG, lines_root, NULL);
	ck_assert_int_eq(nev, 0);
	run_logged(handler, SMARM_LOG_ERROR, lines_root, NULL);
	ck_assert_int_eq(nev, 1);
	ck_assert_int_eq(evs[0].level, SMARM_LOG_ERROR);
}
END_TEST

/* ------------------------------------------- a blocking handler, a full queue
 */

enum { FLOOD = SMARM_LOG_QUEUE_MAX + 500 };
static _Atomic int full_seen, ok_seen, yields_done;
static _Atomic int64_t dropped;

static void spinner(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		smarm_actor_yield();
	yields_done = 1;
}

static void flood_root(void *arg)
{
	smarm_pid_t p;
	uint64_t t0;
	(void)arg;
	/* The first event starts the thread, whose handler then waits. */
	HARNESS_EQ(smarm_log(SMARM_LOG_ERROR, "first"), 0);
	t0 = smarm_now_ns();
	while (atomic_load(&held) == 0 &&
	       harness_since(t0) < MS(10000) * harness_time_scale())
		smarm_actor_sleep(MS(1));
	for (int i = 0; i < FLOOD; i++) {
		int rc = smarm_log(SMARM_LOG_ERROR, "line %d", i);
		if (rc == SMARM_EFULL)
			full_seen++;
		else if (rc == 0)
			ok_seen++;
		else
			HARNESS_EQ(rc, 0);
	}
	/* The handler still waits: actors run on. */
	HARNESS_EQ(smarm_actor_spawn(&p, spinner, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
	HARNESS_EQ(yields_done, 1);
	dropped = harness_actor_stat(SMARM_STAT_LOG_DROPPED);
	pthread_mutex_lock(&mu);
	hold = false;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

START_TEST(test_log_full_queue_drops_and_counts_close_delivers_the_rest)
{
	reset();
	hold = true;
	full_seen = ok_seen = yields_done = 0;
	run_logged(handler, SMARM_LOG_NOTICE, flood_root, NULL);
	ck_assert_int_ge(full_seen, FLOOD - SMARM_LOG_QUEUE_MAX);
	ck_assert_int_eq(full_seen + ok_seen, FLOOD);
	ck_assert_int_eq(dropped, full_seen);
	/* every accepted event reached the handler, in order */
	ck_assert_int_eq(nev, 1 + ok_seen);
	ck_assert_str_eq(evs[0].text, "first");
	ck_assert_str_eq(evs[1].text, "line 0");
	ck_assert(!on_worker);
}
END_TEST

/* ------------------------------------------------ default handler, misuse */

START_TEST(test_log_stderr_format_and_misuse)
{
	int fds[2], saved;
	char buf[128];
	ssize_t k;
	smarm_log_event_t ev = { .level = SMARM_LOG_WARNING,
				 .kind = SMARM_REPORT_LINE,
				 .text = "hello there" };
	ck_assert_int_eq(pipe(fds), 0);
	saved = dup(2);
	ck_assert_int_eq(dup2(fds[1], 2), 2);
	smarm_log_stderr(NULL, &ev);
	smarm_log_stderr(NULL, NULL); /* nothing */
	dup2(saved, 2);
	close(saved);
	close(fds[1]);
	k = read(fds[0], buf, sizeof buf - 1);
	ck_assert_int_gt(k, 0);
	buf[k] = '\0';
	ck_assert_str_eq(buf, "smarm: warning: hello there\n");
	close(fds[0]);
	ck_assert_int_eq(smarm_config_set_logger(NULL, handler, NULL),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_log(SMARM_LOG_ERROR, "no actor"),
			 SMARM_ENOTACTOR);
}
END_TEST

Suite *smarm_test_log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_log_crash_report_names_the_crasher_once);
	tcase_add_test(tc, test_log_crash_report_names_a_status_reason);
	tcase_add_test(tc, test_log_supervisor_reports);
	tcase_add_test(tc, test_log_progress_reports_at_info);
	tcase_add_test(tc, test_log_lines_keep_level_actor_and_one_line);
	tcase_add_test(tc, test_log_level_and_null_handler_filter);
	tcase_add_test(
		tc,
		test_log_full_queue_drops_and_counts_close_delivers_the_rest);
	tcase_add_test(tc, test_log_stderr_format_and_misuse);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(log)
