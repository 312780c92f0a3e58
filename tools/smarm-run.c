/* SPDX-License-Identifier: MIT */
/*
 * smarm-run.c - the application launcher (docs/smarm-run.md): read an
 * application file (app.c), open its plugins, build its supervision
 * tree, start it, show a live status line, and on SIGINT, SIGTERM or
 * SIGHUP or at the end of its run time shut the tree down in order.
 *
 *   smarm-run [-q] [-c] [-w N] [-t DURATION] [-S SOCKET] [--stats]
 *             [--no-contain] [--actor-stats] FILE
 *   smarm-run --status SOCKET|PID
 *
 * The node contains faults (SMARM_OPT_CONTAIN_FAULTS): a plugin
 * handler's NULL dereference ends its server, which its supervisor
 * restarts, not the application; --no-contain makes every fault fatal.
 *
 * -S serves the node's introspection on a Unix socket (smarm-top and
 * --status read it); --stats prints every node counter once the tree
 * has ended; --actor-stats has the node keep per-actor statistics
 * (SMARM_OPT_ACTOR_STATS); --status is a client: it asks a running node for its
 * supervision tree and prints every child's status.
 *
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGUSR1 are blocked first thing
 * in main (so none takes its default action while the file loads; the
 * node's threads inherit the mask) and read from a signalfd by the root
 * actor, in the same select as its status tick and the Downs of the
 * tree: no work runs in a signal handler, and there is none. USR1 dumps
 * the child table to stderr; the others shut the tree down.
 *
 * The child table (struct kid, one per node of the tree, root first)
 * is the root actor's view of the running tree: each child's pid, kept
 * current by smarm_sup_which_children after a start and after each
 * Down (the root monitors every child it knows), and how often it ended
 * while the tree ran. The watchdog (a plain thread; the root actor may
 * be unable to run when handlers block every worker) reads it under
 * kids_lock to name the children that did not end.
 *
 * Watchdog: a kill (the second signal, or a shutdown in which no child
 * ended for longer than the longest shutdown time of a server plus
 * KILL_GRACE_NS: children end one at a time, each within its own time,
 * so a tree of any size that stops ending is stuck) that leaves actors
 * running for
 * KILL_GRACE_NS means their workers are blocked outside the runtime,
 * where no kill reaches: it names them and _exits EXIT_STUCK. A
 * terminating signal left unread for UNREAD_NS means no worker is free
 * to run the root: it kills the tree, then the same.
 * Trust: the application file and its plugins are code; unless
 * --allow-insecure, one that another user owns or could write is
 * refused. The application file is opened once: the checks look at
 * that open file (smarm_plugin_check_fd) and it is what is read, so no
 * other file can be read in its place; plugins get smarm_plugin_open's
 * own checks.
 * Exit codes: 0 the tree ran and was shut down in order; 1 a runtime
 * failure (the tree could not start, gave up, or did not end in
 * order); 2 bad usage or a bad application file (also a plugin that
 * does not load); 3 a child did not end after it was killed.
 * Shipped plugins: the build defines SMARM_RUN_PLUGINSDIR, where
 * plugins/ and its demo.app are installed (smarm.pc's pluginsdir);
 * --help names it.
 * Ownership: the app (tree, specs, plugins) is main's and outlives the
 * node's run; the root actor owns its channel and select set; the kid
 * table is main's, its pids written by the root actor under kids_lock.
 */
#include "app.h"
#include "obs_client.h"

#include <smarm/dist.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_STUCK 3
#define TICK_NS 1000000000ull
#define DEBOUNCE_NS 1000000000ull
#define KILL_GRACE_NS 2000000000ull /* a killed actor's time to end */
#define UNREAD_NS 5000000000ull	    /* a signal nobody reads */
#define WATCH_NS 100000000ull	    /* the watchdog's period */
#define CALL_NS 1000000000ull	    /* a which_children's bound */

/* One node of the tree as it runs (see the file's comment). */
struct kid {
	struct app_node *k_node; /* its node in the app */
	char *k_path;		 /* "root/pool/kv" */
	smarm_pid_t k_pid;	 /* its tenancy; NONE while not running */
	uint64_t k_ends;	 /* ends seen while the tree ran */
	bool k_stale;		 /* (supervisors) children to look up again */
};

struct run {
	struct app *app;
	const smarm_sup_spec_t *spec;
	smarm_node_t *node;
	uint64_t run_ns; /* 0: until a signal */
	int sigfd;
	bool quiet;
	bool tty;
	int rc; /* the exit code */
	/* the child table */
	pthread_mutex_t kids_lock; /* k_pid and k_ends */
	struct kid *kids;
	size_t nkids;
	smarm_chan_t *downs; /* the root's Down channel */
	bool stopping;	     /* root only: the shutdown began */
	uint64_t bound_ns;   /* longest shutdown time + KILL_GRACE_NS; 0 none */
	/* the watchdog (watch_lock) */
	pthread_mutex_t watch_lock;
	pthread_cond_t watch_cv;
	bool watch_done;     /* the node's run returned */
	bool reading;	     /* the root reads the signal fd by now */
	uint64_t kill_at;    /* stop the node then; 0: not armed */
	uint64_t exit_at;    /* give up then; 0: not armed */
	const char *kill_by; /* what armed exit_at, for the message */
	/* --dist: the node's name in an Erlang cluster; NULL: none */
	const char *dist_name;
	const char *dist_cookie; /* NULL: ~/.erlang.cookie */
	const char *dist_bind;	 /* NULL: every interface */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smarm-run [-c] [-q] [-t DURATION] [-w N] "
		"[-S SOCKET] [--stats]\n"
		"                 [--no-contain] [--actor-stats] "
		"[--allow-insecure] FILE\n"
		"       smarm-run --status SOCKET|PID\n"
		"       smarm-run --help | --version\n"
		"Run the supervision tree the application file FILE "
		"describes.\n"
		"  -c, --check        parse FILE and load its plugins, then "
		"exit\n"
		"  -q, --quiet        no status line\n"
		"  -t, --run D        stop after D (such as 5s), overriding "
		"the file\n"
		"  -w, --workers N    worker threads (1 to 64), overriding "
		"the file\n"
		"  -S, --obs-socket P serve introspection on the Unix socket "
		"P (owner only;\n"
		"                     smarm-top P, smarm-run --status P)\n"
		"      --stats        print every node counter when the tree "
		"has ended\n"
		"      --no-contain   a fault in a plugin kills the process "
		"(by default it\n"
		"                     ends that child only, which its "
		"supervisor restarts)\n"
		"      --actor-stats  keep per-actor CPU time, runs and "
		"counts (smarm-top's\n"
		"                     CPU%%; SMARM_OPT_ACTOR_STATS)\n"
		"      --status T     print every child of the running node "
		"at socket T\n"
		"                     (or OS pid T) and exit\n"
		"      --allow-insecure  load FILE and plugins that another "
		"user owns or\n"
		"                     could write (a warning instead of "
		"exit 2)\n"
		"      --dist NAME    join an Erlang cluster as the hidden "
		"node NAME\n"
		"                     (alive@host): every server with a name "
		"is callable\n"
		"                     with gen_server:call({Name, NAME}, "
		"...) and cast\n"
		"      --cookie C     the cluster's cookie (default: "
		"~/.erlang.cookie)\n"
		"      --dist-bind A  listen on IPv4 address A only (such as "
		"127.0.0.1)\n"
		"  -h, --help         this text\n"
		"  -V, --version      the launcher's and the library's "
		"version\n"
		"Signals: SIGINT, SIGTERM, SIGHUP shut the tree down in "
		"order (a second one\n"
		"  a second or more later kills it); SIGUSR1 prints every "
		"child to stderr.\n"
		"Exit codes: 0 ran and shut down in order; 1 runtime failure "
		"(did not\n"
		"  start, gave up, did not end in order); 2 bad usage, bad "
		"or\n"
		"  untrusted file or plugin;\n"
		"  3 a child did not end after it was killed (blocked outside "
		"the runtime).\n"
		"Installed with it: the plugins shipped with libsmarm and "
		"demo.app, which\n"
		"  runs them (smarm-run DIR/demo.app), in DIR =\n"
		"  " SMARM_RUN_PLUGINSDIR "\n");
}

/* "1 server", "2 servers". */
static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
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

/* ------------------------------------------------------ child table */

static int kids_add(struct run *r, struct app_node *n, const char *parent)
{
	struct kid *k = &r->kids[r->nkids];
	size_t len = (parent ? strlen(parent) + 1 : 0) + strlen(n->an_id) + 1;
	k->k_path = malloc(len);
	if (k->k_path == NULL)
		return -1;
	snprintf(k->k_path, len, "%s%s%s", parent ? parent : "",
		 parent ? "/" : "", n->an_id);
	k->k_node = n;
	k->k_pid = SMARM_PID_NONE;
	n->an_run = r->nkids++;
	if (n->an_kind == APP_SUP)
		for (size_t i = 0; i < n->an_nkids; i++)
			if (kids_add(r, n->an_kids[i], k->k_path) != 0)
				return -1;
	return 0;
}

static void kids_free(struct run *r)
{
	for (size_t i = 0; i < r->nkids; i++)
		free(r->kids[i].k_path);
	free(r->kids);
	r->kids = NULL;
	r->nkids = 0;
}

/* One entry per node of the tree; its longest shutdown time. */
static int kids_make(struct run *r)
{
	size_t nsv, nsu;
	bool bounded = true;
	app_count(r->app, &nsv, &nsu);
	r->kids = calloc(nsv + nsu, sizeof *r->kids);
	if (r->kids == NULL || kids_add(r, r->app->a_root, NULL) != 0)
		return -1;
	r->bound_ns = 0;
	for (size_t i = 0; i < r->nkids; i++) {
		const struct app_node *n = r->kids[i].k_node;
		if (n->an_kind != APP_SERVER)
			continue;
		if (n->an_shutdown_ns == SMARM_SUP_INFINITY)
			bounded = false;
		else if (n->an_shutdown_ns != SMARM_SUP_BRUTAL_KILL &&
			 n->an_shutdown_ns > r->bound_ns)
			r->bound_ns = n->an_shutdown_ns;
	}
	if (!bounded)
		r->bound_ns = 0;
	else
		r->bound_ns += KILL_GRACE_NS;
	return 0;
}

/* The kid whose tenancy pid is, or NULL. */
static struct kid *kid_of(struct run *r, smarm_pid_t pid)
{
	for (size_t i = 0; i < r->nkids; i++)
		if (smarm_pid_eq(r->kids[i].k_pid, pid))
			return &r->kids[i];
	return NULL;
}

/*
 * Look up the children of supervisor kid k again (and, below it, of
 * every supervisor whose pid changed): record their pids and monitor
 * the new ones. A supervisor that does not answer stays stale.
 */
static void kids_refresh(struct run *r, struct kid *k)
{
	const struct app_node *n = k->k_node;
	smarm_sup_child_t *buf;
	size_t got = 0;
	if (n->an_kind != APP_SUP || smarm_pid_eq(k->k_pid, SMARM_PID_NONE))
		return;
	buf = malloc((n->an_nkids ? n->an_nkids : 1) * sizeof *buf);
	if (buf == NULL)
		return;
	if (smarm_sup_which_children(k->k_pid, buf, n->an_nkids, &got,
				     CALL_NS) != 0) {
		free(buf);
		return;
	}
	k->k_stale = false;
	for (size_t i = 0; i < got && i < n->an_nkids; i++) {
		struct app_node *c = n->an_kids[i];
		struct kid *ck;
		if (strcmp(c->an_id, buf[i].id) != 0)
			continue; /* start order is spec order: not ours */
		ck = &r->kids[c->an_run];
		if (smarm_pid_eq(ck->k_pid, buf[i].pid))
			continue;
		pthread_mutex_lock(&r->kids_lock);
		ck->k_pid = buf[i].pid;
		pthread_mutex_unlock(&r->kids_lock);
		if (!smarm_pid_eq(buf[i].pid, SMARM_PID_NONE)) {
			(void)smarm_monitor(buf[i].pid, r->downs, NULL);
			if (c->an_kind == APP_SUP)
				ck->k_stale = true;
		}
	}
	free(buf);
	for (size_t i = 0; i < n->an_nkids; i++) {
		struct kid *ck = &r->kids[n->an_kids[i]->an_run];
		if (ck->k_stale)
			kids_refresh(r, ck);
	}
}

/* A Down of a child: count the end, look its supervisor up again. */
static void kid_down(struct run *r, const smarm_signal_t *down)
{
	struct kid *k = kid_of(r, down->from);
	if (k == NULL || k == &r->kids[0])
		return;
	pthread_mutex_lock(&r->kids_lock);
	k->k_pid = SMARM_PID_NONE;
	if (!r->stopping)
		k->k_ends++;
	pthread_mutex_unlock(&r->kids_lock);
	if (r->stopping && r->bound_ns != 0) {
		/* Progress: the watchdog's kill moves on (see watchdog). */
		pthread_mutex_lock(&r->watch_lock);
		if (r->kill_at != 0)
			r->kill_at = smarm_now_ns() + r->bound_ns;
		pthread_mutex_unlock(&r->watch_lock);
	}
	if (!r->stopping) {
		struct kid *sup = &r->kids[k->k_node->an_parent->an_run];
		sup->k_stale = true;
		kids_refresh(r, sup);
	}
}

/* SIGUSR1: the child table on stderr, one line per child. */
static void kids_dump(struct run *r, uint64_t t0)
{
	int64_t rst = stat_of(SMARM_STAT_SUP_RESTARTS);
	if (!r->stopping)
		for (size_t i = 0; i < r->nkids; i++)
			if (r->kids[i].k_stale)
				kids_refresh(r, &r->kids[i]);
	fprintf(stderr,
		"smarm-run: %s: up %.1fs, %zu in the tree, %lld %s%s\n"
		"  %-24s %-18s %-24s %8s  %s\n",
		r->app->a_name, (double)(smarm_now_ns() - t0) / 1e9, r->nkids,
		(long long)rst, plural((size_t)rst, "restart", "restarts"),
		r->stopping ? ", shutting down" : "", "ID", "PID", "BEHAVIOUR",
		"RESTARTS", "STATE");
	for (size_t i = 0; i < r->nkids; i++) {
		const struct kid *k = &r->kids[i];
		const struct app_node *n = k->k_node;
		char pid[24], bhv[APP_ALIAS_MAX + SMARM_OP_NAME_MAX + 16];
		bool up = !smarm_pid_eq(k->k_pid, SMARM_PID_NONE) &&
			  smarm_actor_is_alive(k->k_pid);
		snprintf(pid, sizeof pid, up ? "%#llx" : "-",
			 (unsigned long long)k->k_pid.id);
		if (n->an_kind == APP_SERVER)
			snprintf(bhv, sizeof bhv, "%s.%s",
				 r->app->a_plugins[n->an_plugin].ap_alias,
				 n->an_bhv);
		else
			snprintf(bhv, sizeof bhv, "supervisor");
		fprintf(stderr, "  %-24s %-18s %-24s %8llu  %s\n", k->k_path,
			pid, bhv, (unsigned long long)k->k_ends,
			up ? "running" : "not running");
	}
}

/* ---------------------------------------------------------- watchdog */

static void watch_arm(struct run *r, uint64_t *at, uint64_t when,
		      const char *why)
{
	pthread_mutex_lock(&r->watch_lock);
	if (*at == 0 || when < *at) {
		*at = when;
		if (why != NULL)
			r->kill_by = why;
	}
	pthread_cond_signal(&r->watch_cv);
	pthread_mutex_unlock(&r->watch_lock);
}

/* The kill did not end these: name them, and exit without them. */
__attribute__((noreturn)) static void give_up(struct run *r)
{
	size_t named = 0;
	fflush(stdout);
	for (int pass = 0; pass < 2 && named == 0; pass++) {
		/* Servers first; supervisors only if no server is left. */
		for (size_t i = 0; i < r->nkids; i++) {
			const struct kid *k = &r->kids[i];
			smarm_pid_t pid;
			pthread_mutex_lock(&r->kids_lock);
			pid = k->k_pid;
			pthread_mutex_unlock(&r->kids_lock);
			if ((k->k_node->an_kind == APP_SERVER) != (pass == 0) ||
			    smarm_pid_eq(pid, SMARM_PID_NONE) ||
			    smarm_node_stop_actor(r->node, pid) != 0)
				continue;
			fprintf(stderr,
				"smarm-run: %s: child '%s' (pid %#llx) did "
				"not end %.1f s after it was killed: its "
				"worker is blocked outside the runtime (in a "
				"system call, or code that never reaches a "
				"safe point)\n",
				r->app->a_name, k->k_path,
				(unsigned long long)pid.id,
				(double)KILL_GRACE_NS / 1e9);
			named++;
		}
	}
	if (named == 0)
		fprintf(stderr,
			"smarm-run: %s: the tree did not end %.1f s after it "
			"was killed, and no child of it could be named: its "
			"workers are blocked outside the runtime\n",
			r->app->a_name, (double)KILL_GRACE_NS / 1e9);
	fprintf(stderr,
		"smarm-run: %s: %s; exiting without waiting (exit "
		"%d)\n",
		r->app->a_name, r->kill_by ? r->kill_by : "killed", EXIT_STUCK);
	_exit(EXIT_STUCK);
}

/*
 * Under watch_lock, which it drops for the while and takes again: kill
 * the tree, after one line on stderr ("smarm-run: APP: <fmt...>: killing
 * the tree"), and give it KILL_GRACE_NS to end before give_up names
 * what is left (why: give_up's reason).
 */
__attribute__((format(printf, 4, 5))) static void
kill_tree(struct run *r, uint64_t now, const char *why, const char *fmt, ...)
{
	char cause[256];
	va_list ap;
	pthread_mutex_unlock(&r->watch_lock);
	va_start(ap, fmt);
	vsnprintf(cause, sizeof cause, fmt, ap);
	va_end(ap);
	fprintf(stderr, "smarm-run: %s: %s: killing the tree\n", r->app->a_name,
		cause);
	smarm_node_stop(r->node);
	watch_arm(r, &r->exit_at, now + KILL_GRACE_NS, why);
	pthread_mutex_lock(&r->watch_lock);
}

/* Whether a terminating signal waits, unread by the root. */
static bool signal_unread(void)
{
	sigset_t p;
	if (sigpending(&p) != 0)
		return false;
	return sigismember(&p, SIGINT) == 1 || sigismember(&p, SIGTERM) == 1 ||
	       sigismember(&p, SIGHUP) == 1;
}

static void *watchdog(void *arg)
{
	struct run *r = arg;
	uint64_t unread_since = 0;
	pthread_mutex_lock(&r->watch_lock);
	while (!r->watch_done) {
		struct timespec ts;
		uint64_t now = smarm_now_ns();
		if (r->exit_at != 0 && now >= r->exit_at) {
			pthread_mutex_unlock(&r->watch_lock);
			give_up(r);
		}
		if (r->kill_at != 0 && now >= r->kill_at && r->exit_at == 0) {
			kill_tree(r, now, "the shutdown did not end",
				  "no child ended for %.1f s of the shutdown, "
				  "longer than any may take",
				  (double)r->bound_ns / 1e9);
			continue;
		}
		/* Before the root reads signals (the tree is still being
		 * built), a pending one is no sign of a stuck node. */
		if (!signal_unread() ||
		    !__atomic_load_n(&r->reading, __ATOMIC_ACQUIRE)) {
			unread_since = 0;
		} else if (unread_since == 0) {
			unread_since = now;
		} else if (now - unread_since >= UNREAD_NS && r->exit_at == 0) {
			kill_tree(r, now, "a signal went unread",
				  "a signal went unread for %.0f s (no worker "
				  "free to run the launcher)",
				  (double)UNREAD_NS / 1e9);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)WATCH_NS;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&r->watch_cv, &r->watch_lock, &ts);
	}
	pthread_mutex_unlock(&r->watch_lock);
	return NULL;
}

/* Wait for the next event: 0 tick or deadline, 1 a Down, 2 a signal. */
/* A signal already queued on the (non-blocking) signal fd: 2, else 0. */
static int read_signal(struct run *r, int *signo)
{
	struct signalfd_siginfo si;
	if (read(r->sigfd, &si, sizeof si) != (ssize_t)sizeof si)
		return 0;
	*signo = (int)si.ssi_signo;
	return 2;
}

static int wait_event(struct run *r, smarm_selset_t *set, smarm_chan_t *ch,
		      uint64_t until, smarm_signal_t *down, int *signo)
{
	uint64_t now = smarm_now_ns();
	size_t ready = 0;
	int rc;
	uint64_t timeout = until == UINT64_MAX ? SMARM_NO_TIMEOUT
			   : until > now       ? until - now
					       : 0;
	/* Signals first: a stream of Downs (a restart storm, a long
	 * shutdown) keeps the select's first arm ready and would leave a
	 * signal unread until the watchdog took it for a stuck node. */
	if (read_signal(r, signo) != 0)
		return 2;
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
	return read_signal(r, signo);
}

static const char *sig_name(int signo)
{
	return signo == SIGINT	  ? "SIGINT"
	       : signo == SIGTERM ? "SIGTERM"
	       : signo == SIGHUP  ? "SIGHUP"
				  : "SIGUSR1";
}

static void run_tree(struct run *r)
{
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
	r->downs = ch;
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
	pthread_mutex_lock(&r->kids_lock);
	r->kids[0].k_pid = sup;
	pthread_mutex_unlock(&r->kids_lock);
	{
		size_t nsv, nsu;
		app_count(r->app, &nsv, &nsu);
		printf("smarm-run: %s: started %zu %s under %zu %s on %lld "
		       "workers\n",
		       r->app->a_name, nsv, plural(nsv, "server", "servers"),
		       nsu, plural(nsu, "supervisor", "supervisors"),
		       (long long)stat_of(SMARM_STAT_WORKERS));
		fflush(stdout);
	}
	kids_refresh(r, &r->kids[0]);
	deadline = r->run_ns ? t0 + r->run_ns : UINT64_MAX;
	next_tick = t0 + TICK_NS;
	/* From here on a signal is read within a wait (the watchdog). */
	__atomic_store_n(&r->reading, true, __ATOMIC_RELEASE);
	for (;;) {
		uint64_t until = next_tick < deadline ? next_tick : deadline;
		ev = wait_event(r, set, ch, until, &down, &signo);
		if (ev < 0) {
			why = "select failed";
			break;
		}
		if (ev == 1 && !smarm_pid_eq(down.from, sup)) {
			kid_down(r, &down);
			continue;
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
		if (ev == 2 && signo == SIGUSR1) {
			kids_dump(r, t0);
			continue;
		}
		if (ev == 2) {
			why = sig_name(signo);
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
	r->stopping = true;
	smarm_actor_send_exit(sup, SMARM_EXIT_SHUTDOWN, 0);
	t_stop = smarm_now_ns();
	if (r->bound_ns != 0)
		watch_arm(r, &r->kill_at, t_stop + r->bound_ns, NULL);
	for (;;) {
		ev = wait_event(r, set, ch, UINT64_MAX, &down, &signo);
		if (ev == 1 && smarm_pid_eq(down.from, sup))
			break;
		if (ev == 1) {
			kid_down(r, &down);
			continue;
		}
		if (ev == 2 && signo == SIGUSR1) {
			kids_dump(r, t0);
			continue;
		}
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
			watch_arm(r, &r->exit_at,
				  smarm_now_ns() + KILL_GRACE_NS,
				  "second signal");
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
		int64_t rst = stat_of(SMARM_STAT_SUP_RESTARTS);
		printf("smarm-run: %s: done after %.2f s: %lld %s (%.0f/s), "
		       "%lld %s\n",
		       r->app->a_name, up, (long long)req,
		       plural((size_t)req, "request", "requests"),
		       up > 0 ? (double)req / up : 0.0, (long long)rst,
		       plural((size_t)rst, "restart", "restarts"));
		fflush(stdout);
	}
	r->rc = 0;
}

/* Serve every named server under n to other nodes (--dist). */
static int serve_named(smarm_dist_t *d, const struct app_node *n)
{
	int rc = 0;
	if (n->an_kind == APP_SERVER && n->an_name[0] != '\0')
		rc = smarm_dist_serve(d, n->an_name, n->an_b);
	for (size_t i = 0; rc == 0 && i < n->an_nkids; i++)
		rc = serve_named(d, n->an_kids[i]);
	return rc;
}

/*
 * The root actor: with --dist, the node joins the cluster and serves
 * its named servers before the tree starts (a request that comes before
 * its server runs is answered {error, enoname}), and leaves it once the
 * tree has ended (the distribution's actors would keep the node's run
 * alive).
 */
static void root(void *arg)
{
	struct run *r = arg;
	smarm_dist_t *d = NULL;
	int rc = 0;
	if (r->dist_name != NULL) {
		rc = smarm_dist_start(&d, r->dist_name, r->dist_cookie,
				      r->dist_bind, 0);
		if (rc == 0)
			rc = serve_named(d, r->app->a_root);
		if (rc != 0) {
			fprintf(stderr, "smarm-run: --dist %s: %s (%s)\n",
				r->dist_name, smarm_strerror(rc),
				smarm_err_name(rc));
			(void)smarm_dist_stop(d);
			r->rc = EXIT_RUNTIME;
			return;
		}
		printf("smarm-run: %s: node %s\n", r->app->a_name,
		       smarm_dist_name(d));
		fflush(stdout);
	}
	run_tree(r);
	(void)smarm_dist_stop(d);
}

/*
 * The trust checks on a file that is code (docs/smarm-run.md, "Trust"):
 * false (after a message) if path fails them and insecure is false;
 * with insecure, a failure is a warning. fd >= 0: the file open as
 * path (the application file), checked as opened; line > 0: a plugin's
 * line.
 */
static bool trusted(const char *path, int fd, int line, bool insecure)
{
	char msg[APP_ERR_MAX];
	int rc = fd >= 0 ? smarm_plugin_check_fd(fd, path, 0, msg, sizeof msg)
			 : smarm_plugin_check_path(path, 0, msg, sizeof msg);
	if (rc == 0 || (line > 0 && rc != SMARM_EPLUGINPERM))
		return true; /* the loader reports the rest at its line */
	if (rc == SMARM_EPLUGINPERM && insecure) {
		fprintf(stderr,
			"smarm-run: warning: %s (loaded anyway: "
			"--allow-insecure)\n",
			msg);
		return true;
	}
	fprintf(stderr, "smarm-run: %s (%s)\n", msg[0] ? msg : path,
		smarm_err_name(rc));
	if (rc == SMARM_EPLUGINPERM)
		fprintf(stderr, "smarm-run: an application file is code: fix "
				"its owner or mode, or pass --allow-insecure "
				"to load it anyway\n");
	return false;
}

/* --stats: every node counter, one a line, once the tree has ended. */
static void print_stats(smarm_node_t *node)
{
	for (int id = 1; id < 256; id++) {
		int64_t v;
		const char *name = smarm_stat_name(id);
		if (smarm_node_get_int(node, id, &v) != 0)
			continue;
		if (strncmp(name, "SMARM_STAT_", 11) == 0)
			name += 11;
		printf("stat %s %lld\n", name, (long long)v);
	}
	fflush(stdout);
}

/*
 * --status T: ask the node serving socket T (or OS pid T) for its
 * supervision tree and print each child: indented by depth, its pid,
 * what it is, its state and mailbox. Exit 0, or 1 if no answer.
 */
static int print_status(const char *target)
{
	char path[108], err[256];
	struct jv v;
	const struct jv *tree;
	char *line;
	int fd = obsc_connect(target, path, sizeof path, err, sizeof err);
	if (fd < 0) {
		fprintf(stderr, "smarm-run: %s\n", err);
		return EXIT_RUNTIME;
	}
	line = obsc_ask(fd, "tree");
	close(fd);
	if (line == NULL || jv_parse(line, &v) != 0) {
		fprintf(stderr, "smarm-run: %s: no answer (refused?)\n", path);
		free(line);
		return EXIT_RUNTIME;
	}
	free(line);
	tree = jv_get(&v, "tree");
	printf("%-24s %-10s %-28s %-9s %s\n", "CHILD", "PID", "WHAT", "STATE",
	       "MAILBOX");
	for (size_t i = 0; tree != NULL && i < tree->n; i++) {
		const struct jv *a = jv_get(&tree->kids[i], "actor");
		int depth = (int)jv_int(&tree->kids[i], "depth", 0);
		const char *name = jv_str(a, "name");
		const char *beh = jv_str(a, "behaviour");
		const char *plugin = jv_str(a, "plugin");
		const char *sn = jv_str(a, "state_name");
		char what[128], who[64];
		int64_t mb = jv_int(a, "mailbox", -1);
		snprintf(who, sizeof who, "%*s%s", 2 * depth, "",
			 name[0] ? name : "-");
		if (plugin[0] != '\0')
			snprintf(what, sizeof what, "%s (%s)%s%s", beh, plugin,
				 sn[0] ? " in " : "", sn);
		else
			snprintf(what, sizeof what, "%s",
				 beh[0] ? beh : "actor");
		printf("%-24s %-10s %-28s %-9s %s\n", who, jv_str(a, "pid"),
		       what, jv_str(a, "state"),
		       mb < 0 ? "-"
			      : (snprintf(err, sizeof err, "%lld",
					  (long long)mb),
				 err));
	}
	jv_free(&v);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "run", required_argument, NULL, 't' },
		{ "workers", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "allow-insecure", no_argument, NULL, 'I' },
		{ "obs-socket", required_argument, NULL, 'S' },
		{ "stats", no_argument, NULL, 's' },
		{ "status", required_argument, NULL, 'T' },
		{ "no-contain", no_argument, NULL, 'N' },
		{ "actor-stats", no_argument, NULL, 'A' },
		{ "dist", required_argument, NULL, 'D' },
		{ "cookie", required_argument, NULL, 'C' },
		{ "dist-bind", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 },
	};
	struct run r = {
		.sigfd = -1,
		.kids_lock = PTHREAD_MUTEX_INITIALIZER,
		.watch_lock = PTHREAD_MUTEX_INITIALIZER,
	};
	char err[APP_ERR_MAX] = "";
	bool check = false;
	bool insecure = false;
	bool stats = false;
	bool contain = true;
	bool actor_stats = false;
	const char *obs_socket = NULL;
	int workers = 0;
	uint64_t run_ns = 0;
	bool run_set = false;
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	pthread_condattr_t ca;
	pthread_t watch;
	bool watching = false;
	sigset_t mask;
	int appfd;
	int c, rc;

	/* First thing: no signal of ours may take its default action while
	 * the file loads (which can take seconds), and every thread of the
	 * node inherits the mask. A pending one is read once the tree runs. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0) {
		fprintf(stderr, "smarm-run: sigmask: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}

	while ((c = getopt_long(argc, argv, "cqt:w:hVS:", longs, NULL)) != -1) {
		switch (c) {
		case 'S':
			obs_socket = optarg;
			break;
		case 's':
			stats = true;
			break;
		case 'N':
			contain = false;
			break;
		case 'A':
			actor_stats = true;
			break;
		case 'D':
			r.dist_name = optarg;
			break;
		case 'C':
			r.dist_cookie = optarg;
			break;
		case 'B':
			r.dist_bind = optarg;
			break;
		case 'T':
			return print_status(optarg);
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
		case 'I':
			insecure = true;
			break;
		case 'V':
			printf("smarm-run %s (libsmarm %s, plugin ABI %d.%d)\n",
			       SMARM_VERSION_STRING, smarm_version_string(),
			       SMARM_PLUGIN_ABI_MAJOR, SMARM_PLUGIN_ABI_MINOR);
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
	/* Open once: the file checked is the file read (O_NONBLOCK: a
	 * FIFO in its place cannot block the open; the check refuses it). */
	appfd = open(argv[optind],
		     O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (appfd < 0) {
		fprintf(stderr, "smarm-run: %s: %s (%s)\n", argv[optind],
			strerror(errno), smarm_err_name(SMARM_EPLUGINOPEN));
		return EXIT_USAGE;
	}
	if (!trusted(argv[optind], appfd, 0, insecure) ||
	    app_read_fd(appfd, argv[optind], &r.app, err, sizeof err) != 0) {
		if (r.app == NULL && err[0] != '\0')
			fprintf(stderr, "%s\n", err);
		close(appfd);
		return EXIT_USAGE;
	}
	close(appfd);
	if (insecure) {
		r.app->a_open_flags = SMARM_PLUGIN_ALLOW_INSECURE;
		for (size_t i = 0; i < r.app->a_nplugins; i++)
			(void)trusted(r.app->a_plugins[i].ap_resolved, -1,
				      r.app->a_plugins[i].ap_line, true);
	}
	rc = app_load(r.app, err, sizeof err);
	if (rc == 0)
		rc = app_build(r.app, &r.spec, err, sizeof err);
	if (rc != 0) {
		fprintf(stderr, "%s\n", err);
		if (rc == SMARM_EPLUGINPERM)
			fprintf(stderr,
				"smarm-run: a plugin is code: fix its owner "
				"or mode, or pass --allow-insecure to load it "
				"anyway\n");
		app_free(r.app);
		return EXIT_USAGE;
	}
	if (check) {
		size_t nsv, nsu, npl = r.app->a_nplugins;
		app_count(r.app, &nsv, &nsu);
		printf("%s: ok: app %s, %zu %s, %zu %s, %zu %s\n", argv[optind],
		       r.app->a_name, nsv, plural(nsv, "server", "servers"),
		       nsu, plural(nsu, "supervisor", "supervisors"), npl,
		       plural(npl, "plugin", "plugins"));
		app_free(r.app);
		return 0;
	}
	r.run_ns = run_set ? run_ns : r.app->a_run_ns;
	if (workers == 0)
		workers = r.app->a_workers;
	r.tty = isatty(STDOUT_FILENO);

	if (kids_make(&r) != 0) {
		fprintf(stderr, "smarm-run: out of memory\n");
		kids_free(&r);
		app_free(r.app);
		return EXIT_RUNTIME;
	}
	r.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (r.sigfd < 0) {
		fprintf(stderr, "smarm-run: signalfd: %s\n", strerror(errno));
		kids_free(&r);
		app_free(r.app);
		return EXIT_RUNTIME;
	}
	rc = smarm_config_alloc(&cfg);
	if (rc == 0 && workers > 0)
		rc = smarm_config_set_int(cfg, SMARM_OPT_WORKERS, workers);
	if (rc == 0 && obs_socket != NULL)
		rc = smarm_config_set_obs_socket(cfg, obs_socket);
	if (rc == 0 && actor_stats)
		rc = smarm_config_set_int(cfg, SMARM_OPT_ACTOR_STATS, 1);
	if (rc == 0)
		rc = smarm_config_set_int(cfg, SMARM_OPT_CONTAIN_FAULTS,
					  contain);
	if (rc == 0)
		rc = smarm_node_open(&node, cfg);
	smarm_config_free(cfg);
	r.node = node;
	if (rc == 0 && (pthread_condattr_init(&ca) != 0 ||
			pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
			pthread_cond_init(&r.watch_cv, &ca) != 0 ||
			pthread_create(&watch, NULL, watchdog, &r) != 0))
		rc = SMARM_ESYSTEM;
	else if (rc == 0)
		watching = true;
	if (rc == 0)
		rc = smarm_node_run(node, root, &r, NULL, NULL);
	if (rc != 0) {
		fprintf(stderr, "smarm-run: node: %s (%s)\n",
			smarm_strerror(rc), smarm_err_name(rc));
		r.rc = EXIT_RUNTIME;
	}
	if (watching) {
		pthread_mutex_lock(&r.watch_lock);
		r.watch_done = true;
		pthread_cond_signal(&r.watch_cv);
		pthread_mutex_unlock(&r.watch_lock);
		pthread_join(watch, NULL);
	}
	if (node != NULL && stats)
		print_stats(node);
	if (node != NULL)
		smarm_node_close(node);
	close(r.sigfd);
	kids_free(&r);
	app_free(r.app);
	return r.rc;
}
