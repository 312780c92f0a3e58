/* SPDX-License-Identifier: MIT */
/*
 * smarm-run.c - the application launcher (docs/smarm-run.md): read an
 * application file (app.c), open its plugins, build its supervision
 * tree, start it, show a live status line, and on SIGINT/SIGTERM or at
 * the end of its run time shut the tree down in order.
 *
 *   smarm-run [-q] [-c] [-w N] [-t DURATION] FILE
 *
 * Signals: SIGINT and SIGTERM are blocked in every thread (the mask is
 * set before the node starts its threads, which inherit it) and read
 * from a signalfd by the root actor, in the same select as its status
 * tick and the Down of the root supervisor: no work runs in a signal
 * handler, and there is none.
 * Exit codes: 0 the tree ran and was shut down in order; 1 a runtime
 * failure (the tree could not start, gave up, or did not end in
 * order); 2 bad usage or a bad application file (also a plugin that
 * does not load).
 * Ownership: the app (tree, specs, plugins) is main's and outlives the
 * node's run; the root actor owns its channel and select set.
 */
#include "app.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define TICK_NS 1000000000ull
#define DEBOUNCE_NS 1000000000ull

struct run {
	struct app *app;
	const smarm_sup_spec_t *spec;
	uint64_t run_ns; /* 0: until a signal */
	int sigfd;
	bool quiet;
	bool tty;
	int rc; /* the exit code */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: smarm-run [-q] [-c] [-w N] [-t DURATION] FILE\n"
		   "  -c, --check     parse FILE and load its plugins, then "
		   "exit\n"
		   "  -q, --quiet     no status line\n"
		   "  -t, --run D     stop after D (such as 5s), overriding "
		   "the file\n"
		   "  -w, --workers N worker threads (1 to 64), overriding "
		   "the file\n");
}

static int64_t stat_of(int id)
{
	int64_t v = 0;
	if (smarm_node_get_int(smarm_node_current(), id, &v) != 0)
		return -1;
	return v;
}

static void status(struct run *r, uint64_t t0, bool final_tick)
{
	double up = (double)(smarm_now_ns() - t0) / 1e9;
	if (r->quiet)
		return;
	printf("%s%s: up %.1fs  requests %lld  restarts %lld  actors %lld%s",
	       r->tty ? "\r\033[K" : "", r->app->a_name, up,
	       (long long)stat_of(SMARM_STAT_SERVER_REQUESTS),
	       (long long)stat_of(SMARM_STAT_SUP_RESTARTS),
	       (long long)stat_of(SMARM_STAT_LIVE_ACTORS),
	       r->tty && !final_tick ? "" : "\n");
	fflush(stdout);
}

static void drop_chan(void *arg)
{
	smarm_chan_sender_free(arg);
	smarm_chan_receiver_free(arg);
}

static void drop_set(void *arg)
{
	smarm_selset_free(arg);
}

static const char *how_name(int how)
{
	static const char *const names[] = { "normal", "crashed", "killed",
					     "shut down", "gone" };
	return how >= 0 && how <= 4 ? names[how] : "?";
}

/* Wait for the next event: 0 tick or deadline, 1 a Down, 2 a signal. */
static int wait_event(struct run *r, smarm_selset_t *set, smarm_chan_t *ch,
		      uint64_t until, smarm_signal_t *down, int *signo)
{
	uint64_t now = smarm_now_ns();
	size_t ready = 0;
	int rc;
	uint64_t timeout = until == UINT64_MAX ? SMARM_NO_TIMEOUT
			   : until > now       ? until - now
					       : 0;
	rc = smarm_selset_wait(set, timeout, &ready);
	if (rc == SMARM_ETIMEDOUT)
		return 0;
	if (rc != 0) {
		fprintf(stderr, "smarm-run: select: %s\n", smarm_err_name(rc));
		return -1;
	}
	if (ready == 0) {
		if (smarm_chan_try_recv(ch, down) != 0)
			return 0; /* taken already; wait again */
		return 1;
	}
	{
		struct signalfd_siginfo si;
		ssize_t n = read(r->sigfd, &si, sizeof si);
		if (n != (ssize_t)sizeof si)
			return 0;
		*signo = (int)si.ssi_signo;
	}
	return 2;
}

static void root(void *arg)
{
	struct run *r = arg;
	smarm_chan_t *ch = NULL;
	smarm_selset_t *set = NULL;
	smarm_pid_t sup = SMARM_PID_NONE;
	smarm_signal_t down;
	uint64_t t0, deadline, next_tick, t_stop;
	const char *why = "run time over";
	int signo = 0;
	int rc;
	int ev;

	r->rc = EXIT_RUNTIME;
	if (smarm_chan_alloc(&ch, sizeof(smarm_signal_t), NULL) != 0 ||
	    smarm_selset_alloc(&set) != 0) {
		fprintf(stderr, "smarm-run: out of memory\n");
		return;
	}
	smarm_cleanup_push(drop_chan, ch);
	smarm_cleanup_push(drop_set, set);
	if (smarm_selset_add_chan(set, ch, NULL) != 0 ||
	    smarm_selset_add_fd(set, r->sigfd, SMARM_IO_READABLE, NULL) != 0) {
		fprintf(stderr, "smarm-run: select set\n");
		return;
	}
	t0 = smarm_now_ns();
	rc = smarm_sup_start(r->spec, &sup);
	if (rc != 0) {
		fprintf(stderr,
			"smarm-run: %s: the tree did not start: %s (%s)\n",
			r->app->a_name, smarm_strerror(rc), smarm_err_name(rc));
		return;
	}
	rc = smarm_monitor(sup, ch, NULL);
	if (rc != 0) {
		fprintf(stderr, "smarm-run: monitor: %s\n", smarm_err_name(rc));
		smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0);
		return;
	}
	{
		size_t nsv, nsu;
		app_count(r->app, &nsv, &nsu);
		printf("smarm-run: %s: started %zu servers under %zu "
		       "supervisors on %lld workers\n",
		       r->app->a_name, nsv, nsu,
		       (long long)stat_of(SMARM_STAT_WORKERS));
		fflush(stdout);
	}
	deadline = r->run_ns ? t0 + r->run_ns : UINT64_MAX;
	next_tick = t0 + TICK_NS;
	for (;;) {
		uint64_t until = next_tick < deadline ? next_tick : deadline;
		ev = wait_event(r, set, ch, until, &down, &signo);
		if (ev < 0) {
			why = "select failed";
			break;
		}
		if (ev == 1) {
			status(r, t0, true);
			fprintf(stderr,
				"smarm-run: %s: the root supervisor ended on "
				"its own: %s (%s)\n",
				r->app->a_name, how_name(down.how),
				down.how == SMARM_EXIT_CRASHED ||
						down.reason < 0
					? smarm_err_name((int)down.reason)
					: "-");
			return;
		}
		if (ev == 2) {
			why = signo == SIGINT ? "SIGINT" : "SIGTERM";
			break;
		}
		if (smarm_now_ns() >= deadline)
			break;
		if (smarm_now_ns() >= next_tick) {
			status(r, t0, false);
			next_tick += TICK_NS;
		}
	}
	status(r, t0, true);
	printf("smarm-run: %s: %s: shutting down\n", r->app->a_name, why);
	fflush(stdout);
	smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0);
	t_stop = smarm_now_ns();
	for (;;) {
		ev = wait_event(r, set, ch, UINT64_MAX, &down, &signo);
		if (ev == 1)
			break;
		/* A signal within DEBOUNCE_NS of the shutdown is the same one
		 * delivered twice (to the process and to its group, by a
		 * terminal and a wrapper); a later one kills the node. */
		if (ev == 2 && smarm_now_ns() - t_stop >= DEBOUNCE_NS) {
			fprintf(stderr,
				"smarm-run: %s: second signal: killing the "
				"tree\n",
				r->app->a_name);
			/* Every actor, trapping or not, the root too:
			 * r->rc stays EXIT_RUNTIME. */
			smarm_node_stop(smarm_node_current());
		}
		if (ev < 0)
			return;
	}
	{
		double up = (double)(smarm_now_ns() - t0) / 1e9;
		int64_t req = stat_of(SMARM_STAT_SERVER_REQUESTS);
		if (down.how != SMARM_EXIT_SHUTDOWN) {
			fprintf(stderr,
				"smarm-run: %s: the tree ended %s, not shut "
				"down\n",
				r->app->a_name, how_name(down.how));
			return;
		}
		printf("smarm-run: %s: done after %.2f s: %lld requests "
		       "(%.0f/s), %lld restarts\n",
		       r->app->a_name, up, (long long)req,
		       up > 0 ? (double)req / up : 0.0,
		       (long long)stat_of(SMARM_STAT_SUP_RESTARTS));
		fflush(stdout);
	}
	r->rc = 0;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "run", required_argument, NULL, 't' },
		{ "workers", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct run r = { .sigfd = -1 };
	char err[APP_ERR_MAX];
	bool check = false;
	int workers = 0;
	uint64_t run_ns = 0;
	bool run_set = false;
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	sigset_t mask;
	int c, rc;

	while ((c = getopt_long(argc, argv, "cqt:w:h", longs, NULL)) != -1) {
		switch (c) {
		case 'c':
			check = true;
			break;
		case 'q':
			r.quiet = true;
			break;
		case 't':
			if (app_parse_duration(optarg, &run_ns) != 0 ||
			    run_ns == 0) {
				fprintf(stderr,
					"smarm-run: bad duration '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			run_set = true;
			break;
		case 'w': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || v < 1 ||
			    v > 64) {
				fprintf(stderr,
					"smarm-run: bad worker count '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			workers = (int)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (app_read(argv[optind], &r.app, err, sizeof err) != 0 ||
	    app_load(r.app, err, sizeof err) != 0 ||
	    app_build(r.app, &r.spec, err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		app_free(r.app);
		return EXIT_USAGE;
	}
	if (check) {
		size_t nsv, nsu;
		app_count(r.app, &nsv, &nsu);
		printf("%s: ok: app %s, %zu servers, %zu supervisors, %zu "
		       "plugins\n",
		       argv[optind], r.app->a_name, nsv, nsu,
		       r.app->a_nplugins);
		app_free(r.app);
		return 0;
	}
	r.run_ns = run_set ? run_ns : r.app->a_run_ns;
	if (workers == 0)
		workers = r.app->a_workers;
	r.tty = isatty(STDOUT_FILENO);

	/* Before any thread of the node exists, so all inherit the mask. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0 ||
	    (r.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		fprintf(stderr, "smarm-run: signalfd: %s\n", strerror(errno));
		app_free(r.app);
		return EXIT_RUNTIME;
	}
	rc = smarm_config_alloc(&cfg);
	if (rc == 0 && workers > 0)
		rc = smarm_config_set_int(cfg, SMARM_OPT_WORKERS, workers);
	if (rc == 0)
		rc = smarm_node_open(&node, cfg);
	smarm_config_free(cfg);
	if (rc == 0)
		rc = smarm_node_run(node, root, &r, NULL, NULL);
	if (rc != 0) {
		fprintf(stderr, "smarm-run: node: %s (%s)\n",
			smarm_strerror(rc), smarm_err_name(rc));
		r.rc = EXIT_RUNTIME;
	}
	if (node != NULL)
		smarm_node_close(node);
	close(r.sigfd);
	app_free(r.app);
	return r.rc;
}
