/* SPDX-License-Identifier: MIT */
/*
 * smarm-dist-bench.c - the distribution measured beside Erlang (issue
 * 35): round trips of a gen_server call and one-way message throughput
 * over one connection, erl -> erl, erl -> libsmarm and libsmarm -> erl,
 * all in one run so that the noise of the machine hits them alike.
 *
 * Two erl peers are started on loopback (epmd must be running; see
 * tools/dist-bench.sh, which starts it). Each compiles a gen_server
 * `bgs` (call get -> its state), a sink `sink` and a driver `drv`; A's
 * driver times calls and bursts to B (erl -> erl) and to this node
 * (erl -> libsmarm: the counter plugin's server, served as "counter",
 * and a sink actor of ours); this node times its own smarm_dist_call
 * into A's bgs and bursts into A's sink (libsmarm -> erl).
 *
 * Latency is the median of N timed calls after N/10 warm-up calls, each
 * call timed alone. Throughput is N messages {m, I} sent back to back
 * after a {sink_start, N, From} from one process, until the sink's
 * `done` is back: N / that time. Each measurement runs ROUNDS times,
 * the six interleaved, and the median of the rounds is printed, beside
 * the CPU time (user + system) this process spent per call or message
 * (warm-up calls counted): libsmarm's cost, less noisy than the clock
 * on a busy machine (erl -> erl costs it nothing but the driver's
 * requests).
 *
 * Usage: smarm-dist-bench [--calls N] [--msgs N] [--rounds R]
 *                         [--workers W] [--spin-ns NS] [--only LIST]
 *   defaults: 20000 calls, 100000 messages, 3 rounds, 2 workers, the
 *   node's idle spin (SMARM_OPT_IDLE_SPIN_NS). --only runs only the
 *   measurements named (comma-separated: ee, el, le for the calls,
 *   ee-burst, el-burst, le-burst for the bursts); the others print 0.
 *   csw/call and csw/msg are this process's voluntary context switches
 *   (all its threads, getrusage) per call or message: the thread
 *   hand-offs (a preemption by another process is not counted).
 * Exit status: 0, 1 if a measurement failed, 77 without erl.
 */
#include <smarm/dist.h>
#include <smarm/otp.h>
#include <smarm/smarm.h>

#include <ei.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define COOKIE "distbench"
#define ROUNDS_MAX 32
#define S_NS 1000000000ull

/*
 * The peers' program. drv answers {res, Integer} to Reply:
 *   {lat, Dest, N, Reply}   N/10 calls of get, then N timed one by one:
 *                           the median in ns
 *   {tput, Dest, Sink, N, Reply}
 *                           Sink ! {sink_start, N, self()}, N times
 *                           Dest ! {m, I}, then await done: total ns
 * sink counts the {m, _} after a {sink_start, N, From}, then From ! done.
 */
static const char peer_eval[] =
	"spawn(fun() -> io:get_line(\"\"), erlang:halt() end),"
	"Src = [\"-module(bgs).\","
	"       \"-export([init/1, handle_call/3, handle_cast/2]).\","
	"       \"init(S) -> {ok, S}.\","
	"       \"handle_call(get, _, S) -> {reply, S, S}.\","
	"       \"handle_cast(_, S) -> {noreply, S}.\"],"
	"Forms = [begin {ok, T, _} = erl_scan:string(F),"
	"               {ok, Fo} = erl_parse:parse_form(T), Fo end"
	"         || F <- Src],"
	"{ok, bgs, Bin} = compile:forms(Forms),"
	"{module, bgs} = code:load_binary(bgs, \"bgs.erl\", Bin),"
	"{ok, _} = gen_server:start({local, bgs}, bgs, 7, []),"
	"Count = fun C(0) -> ok; C(K) -> receive {m, _} -> C(K - 1) end end,"
	"Sink = fun S() -> receive {sink_start, N, From} -> Count(N),"
	"                  From ! done, S() end end,"
	"register(sink, spawn(Sink)),"
	"register(drv, self()),"
	"Now = fun() -> erlang:monotonic_time(nanosecond) end,"
	"Lat = fun(Dest, N) ->"
	"  [gen_server:call(Dest, get) || _ <- lists:seq(1, N div 10 + 1)],"
	"  Ts = [begin T0 = Now(), gen_server:call(Dest, get), Now() - T0 end"
	"        || _ <- lists:seq(1, N)],"
	"  lists:nth(N div 2 + 1, lists:sort(Ts)) end,"
	"Send = fun SL(_, 0) -> ok; SL(D, I) -> D ! {m, I}, SL(D, I - 1) end,"
	"Tput = fun(Dest, SinkP, N) -> T0 = Now(),"
	"  SinkP ! {sink_start, N, self()}, Send(Dest, N),"
	"  receive done -> Now() - T0 end end,"
	"Loop = fun L() -> receive"
	"  {lat, Dest, N, Reply} ->"
	"     spawn(fun() -> Reply ! {res, Lat(Dest, N)} end), L();"
	"  {tput, Dest, SinkP, N, Reply} ->"
	"     spawn(fun() -> Reply ! {res, Tput(Dest, SinkP, N)} end), L()"
	"  end end,"
	"io:format(\"READY~n\"),"
	"Loop().";

struct peer {
	pid_t pid;
	int in_fd;  /* its stdin: closing it halts it */
	int out_fd; /* its stdout */
	char name[64];
};

static struct {
	int calls;
	int msgs;
	int rounds;
	int workers;
	int spin_ns; /* SMARM_OPT_IDLE_SPIN_NS, or -1: the default */
	char node[64];
	struct peer a, b;
	const smarm_behaviour_t *counter;
	/* [measurement][round], ns: 0..2 latency, 3..5 burst */
	double v[6][ROUNDS_MAX];
	/* this process's CPU time (user + system), ns per call or message
	 * of each */
	double cpu[6][ROUNDS_MAX];
	/* this process's voluntary context switches (all its threads)
	 * per call or message of each */
	double csw[6][ROUNDS_MAX];
	unsigned only; /* bit k: run measurement k; 0: all */
	int failed;
} B = {
	.calls = 20000, .msgs = 100000, .rounds = 3, .workers = 2, .spin_ns = -1
};

enum { EE_LAT, EL_LAT, LE_LAT, EE_TPUT, EL_TPUT, LE_TPUT };

static bool peer_start(struct peer *p, const char *tag)
{
	int in[2], out[2];
	snprintf(p->name, sizeof p->name, "%s%d@localhost", tag, (int)getpid());
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return false;
	p->pid = fork();
	if (p->pid < 0)
		return false;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execlp("erl", "erl", "-sname", p->name, "-setcookie", COOKIE,
		       "-noshell", "-eval", peer_eval, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in_fd = in[1];
	p->out_fd = out[0];
	/* READY within 60 s (a plain thread: blocking reads). */
	char buf[256];
	size_t have = 0;
	alarm(60);
	while (have + 1 < sizeof buf) {
		ssize_t k = read(p->out_fd, buf + have, sizeof buf - 1 - have);
		if (k <= 0)
			break;
		have += (size_t)k;
		buf[have] = '\0';
		if (strstr(buf, "READY\n") != NULL) {
			alarm(0);
			return true;
		}
	}
	alarm(0);
	return false;
}

static void peer_stop(struct peer *p)
{
	if (p->pid <= 0)
		return;
	close(p->in_fd);
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	close(p->out_fd);
	p->pid = 0;
}

/* ---- terms ---- */

static void x_pid(ei_x_buff *x, smarm_dist_t *d, smarm_dist_pid_t p)
{
	uint8_t b[512];
	size_t n = 0;
	if (smarm_dist_pid_encode(d, p, b, sizeof b, &n) == 0 && n <= sizeof b)
		ei_x_append_buf(x, (const char *)b, (int)n);
}

/* {Name, Node} */
static void x_reg(ei_x_buff *x, const char *name, const char *node)
{
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, name);
	ei_x_encode_atom(x, node);
}

/* Have A's driver measure: {lat, Dest, N, Me} or {tput, Dest, Sink, N,
 * Me}, with dest and sink (NULL: lat) terms already encoded. */
static double drv_ask(smarm_dist_t *d, smarm_chan_t *box, smarm_dist_pid_t me,
		      const ei_x_buff *dest, const ei_x_buff *sink, int n)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, sink != NULL ? 5 : 4);
	ei_x_encode_atom(&x, sink != NULL ? "tput" : "lat");
	ei_x_append_buf(&x, dest->buff, dest->index);
	if (sink != NULL)
		ei_x_append_buf(&x, sink->buff, sink->index);
	ei_x_encode_long(&x, n);
	x_pid(&x, d, me);
	int rc = smarm_dist_send_name(d, B.a.name, "drv", x.buff,
				      (size_t)x.index);
	ei_x_free(&x);
	if (rc != 0)
		return -1;
	smarm_dist_msg_t *m = NULL;
	if (smarm_chan_recv_timeout(box, &m, 600 * S_NS) != 0)
		return -1;
	const void *t;
	size_t len;
	smarm_dist_msg_term(m, &t, &len);
	int i = 0, ver, ar;
	char tag[MAXATOMLEN_UTF8];
	long long v = -1;
	if (ei_decode_version(t, &i, &ver) != 0 ||
	    ei_decode_tuple_header(t, &i, &ar) != 0 || ar != 2 ||
	    ei_decode_atom(t, &i, tag) != 0 || strcmp(tag, "res") != 0 ||
	    ei_decode_longlong(t, &i, &v) != 0)
		v = -1;
	smarm_dist_msg_free(m);
	return (double)v;
}

/* This process's CPU time so far, ns. */
static double cpu_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

/* This process's voluntary context switches so far (all its threads):
 * each is a thread that blocked (a park, an epoll_wait, a futex). */
static double csw_count(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_nvcsw;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* libsmarm -> erl: the median ns of n calls of get to A's bgs. */
static double our_lat(smarm_dist_t *d, int n)
{
	ei_x_buff q;
	ei_x_new_with_version(&q);
	ei_x_encode_atom(&q, "get");
	uint64_t *ts = malloc(sizeof *ts * (size_t)n);
	double med = -1;
	if (ts == NULL)
		goto out;
	for (int k = 0; k < n / 10 + 1 + n; k++) {
		smarm_dist_msg_t *m = NULL;
		uint64_t t0 = smarm_now_ns();
		int rc = smarm_dist_call_name(d, B.a.name, "bgs", q.buff,
					      (size_t)q.index, 10 * S_NS, &m);
		uint64_t t = smarm_now_ns() - t0;
		smarm_dist_msg_free(m);
		if (rc != 0)
			goto out;
		if (k > n / 10)
			ts[k - n / 10 - 1] = t;
	}
	qsort(ts, (size_t)n, sizeof *ts, cmp_u64);
	med = (double)ts[n / 2];
out:
	free(ts);
	ei_x_free(&q);
	return med;
}

/* libsmarm -> erl: ns until A's sink has n messages (and said so). */
static double our_tput(smarm_dist_t *d, smarm_chan_t *box, smarm_dist_pid_t me,
		       int n)
{
	ei_x_buff s, x;
	ei_x_new_with_version(&s);
	ei_x_encode_tuple_header(&s, 3);
	ei_x_encode_atom(&s, "sink_start");
	ei_x_encode_long(&s, n);
	x_pid(&s, d, me);
	uint64_t t0 = smarm_now_ns();
	int rc = smarm_dist_send_name(d, B.a.name, "sink", s.buff,
				      (size_t)s.index);
	ei_x_free(&s);
	for (int k = n; rc == 0 && k > 0; k--) {
		ei_x_new_with_version(&x);
		ei_x_encode_tuple_header(&x, 2);
		ei_x_encode_atom(&x, "m");
		ei_x_encode_long(&x, k);
		rc = smarm_dist_send_name(d, B.a.name, "sink", x.buff,
					  (size_t)x.index);
		ei_x_free(&x);
	}
	smarm_dist_msg_t *m = NULL;
	if (rc != 0 || smarm_chan_recv_timeout(box, &m, 600 * S_NS) != 0)
		return -1;
	smarm_dist_msg_free(m);
	return (double)(smarm_now_ns() - t0);
}

/* Our sink for erl -> libsmarm: {sink_start, N, From}, N messages, then
 * From ! done; over and over, until a message `stop`. */
static void sink_main(void *arg)
{
	smarm_dist_t *d = arg;
	smarm_chan_t *box = NULL;
	if (smarm_dist_mailbox(d, &box) != 0)
		return;
	for (;;) {
		smarm_dist_msg_t *m = NULL;
		if (smarm_chan_recv(box, &m) != 0)
			break;
		const void *t;
		size_t len;
		smarm_dist_msg_term(m, &t, &len);
		int i = 0, ver, ar;
		char tag[MAXATOMLEN_UTF8];
		long n = 0;
		smarm_dist_pid_t from;
		bool start = ei_decode_version(t, &i, &ver) == 0 &&
			     ei_decode_tuple_header(t, &i, &ar) == 0 &&
			     ar == 3 && ei_decode_atom(t, &i, tag) == 0 &&
			     strcmp(tag, "sink_start") == 0 &&
			     ei_decode_long(t, &i, &n) == 0 &&
			     smarm_dist_pid_decode(d, (const char *)t + i,
						   len - (size_t)i, NULL,
						   &from) == 0;
		bool stop = !start &&
			    ei_decode_atom(t, &(int){ 1 }, tag) == 0 &&
			    strcmp(tag, "stop") == 0;
		smarm_dist_msg_free(m);
		if (stop)
			break;
		if (!start)
			continue;
		for (long k = 0; k < n; k++) {
			m = NULL;
			if (smarm_chan_recv(box, &m) != 0)
				return;
			smarm_dist_msg_free(m);
		}
		ei_x_buff x;
		ei_x_new_with_version(&x);
		ei_x_encode_atom(&x, "done");
		(void)smarm_dist_send(d, from, x.buff, (size_t)x.index);
		ei_x_free(&x);
	}
	smarm_chan_receiver_free(box);
}

static void root(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	smarm_server_t *sc = NULL;
	smarm_pid_t sink_lp;
	smarm_dist_pid_t me, sink;
	if (smarm_dist_start(&d, B.node, COOKIE, "127.0.0.1", 0) != 0 ||
	    smarm_dist_mailbox(d, &box) != 0 ||
	    smarm_server_start(B.counter, "7", "counter", &sc) != 0 ||
	    smarm_dist_serve(d, "counter", B.counter) != 0 ||
	    smarm_actor_spawn(&sink_lp, sink_main, d, NULL) != 0 ||
	    smarm_dist_self(d, smarm_actor_self(), &me) != 0 ||
	    smarm_dist_self(d, sink_lp, &sink) != 0 ||
	    smarm_dist_connect(d, B.a.name) != 0) {
		fprintf(stderr, "smarm-dist-bench: setup failed\n");
		B.failed = 1;
		goto out;
	}
	ei_x_buff ee, el, ees, els;
	ei_x_new(&ee);
	ei_x_new(&el);
	ei_x_new(&ees);
	ei_x_new(&els);
	x_reg(&ee, "bgs", B.b.name);
	x_reg(&el, "counter", B.node);
	x_reg(&ees, "sink", B.b.name);
	x_pid(&els, d, sink);
	for (int r = 0; r < B.rounds; r++) {
		double *v[6];
		for (int k = 0; k < 6; k++)
			v[k] = &B.v[k][r];
		for (int k = 0; k < 6; k++) {
			if (B.only != 0 && !(B.only & 1u << k)) {
				*v[k] = 0;
				B.cpu[k][r] = B.csw[k][r] = 0;
				continue;
			}
			double c0 = cpu_ns(), s0 = csw_count();
			switch (k) {
			case EE_LAT:
				*v[k] = drv_ask(d, box, me, &ee, NULL, B.calls);
				break;
			case EL_LAT:
				*v[k] = drv_ask(d, box, me, &el, NULL, B.calls);
				break;
			case LE_LAT:
				*v[k] = our_lat(d, B.calls);
				break;
			case EE_TPUT:
				*v[k] = drv_ask(d, box, me, &ees, &ees, B.msgs);
				break;
			case EL_TPUT:
				*v[k] = drv_ask(d, box, me, &els, &els, B.msgs);
				break;
			default:
				*v[k] = our_tput(d, box, me, B.msgs);
				break;
			}
			/* the warm-up calls (N/10 + 1) are counted */
			double per =
				k < 3 ? B.calls + B.calls / 10 + 1 : B.msgs;
			B.cpu[k][r] = (cpu_ns() - c0) / per;
			B.csw[k][r] = (csw_count() - s0) / per;
		}
		fprintf(stderr,
			"# round %d: latency us erl->erl %.1f erl->smarm %.1f "
			"smarm->erl %.1f; burst ms erl->erl %.1f "
			"erl->smarm %.1f smarm->erl %.1f\n",
			r + 1, *v[0] / 1e3, *v[1] / 1e3, *v[2] / 1e3,
			*v[3] / 1e6, *v[4] / 1e6, *v[5] / 1e6);
		for (int k = 0; k < 6; k++)
			if (*v[k] < 0)
				B.failed = 1;
		if (B.failed)
			break;
	}
	ei_x_free(&ee);
	ei_x_free(&el);
	ei_x_free(&ees);
	ei_x_free(&els);
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_atom(&x, "stop");
	(void)smarm_dist_send(d, sink, x.buff, (size_t)x.index);
	ei_x_free(&x);
	smarm_actor_join(sink_lp, NULL, NULL);
out:
	if (sc != NULL) {
		(void)smarm_server_shutdown(sc, 10 * S_NS, NULL);
		smarm_server_free(sc);
	}
	if (box != NULL)
		smarm_chan_receiver_free(box);
	if (d != NULL)
		smarm_dist_stop(d);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return v[n / 2];
}

/* --only's names, in measurement order (EE_LAT ... LE_TPUT). */
static const char *const meas_name[6] = { "ee",	      "el",	  "le",
					  "ee-burst", "el-burst", "le-burst" };

/* "el,le-burst" -> the bits of B.only; false for an unknown name. */
static bool parse_only(const char *list)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", list);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL;
	     t = strtok_r(NULL, ",", &save)) {
		int k = 0;
		while (k < 6 && strcmp(t, meas_name[k]) != 0)
			k++;
		if (k == 6)
			return false;
		B.only |= 1u << k;
	}
	return B.only != 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--only") == 0 && i + 1 < argc &&
		    parse_only(argv[i + 1])) {
			i++;
			continue;
		}
		int *opt = strcmp(argv[i], "--calls") == 0     ? &B.calls
			   : strcmp(argv[i], "--msgs") == 0    ? &B.msgs
			   : strcmp(argv[i], "--rounds") == 0  ? &B.rounds
			   : strcmp(argv[i], "--workers") == 0 ? &B.workers
			   : strcmp(argv[i], "--spin-ns") == 0 ? &B.spin_ns
							       : NULL;
		if (opt == NULL || i + 1 == argc ||
		    atoi(argv[i + 1]) < (opt == &B.spin_ns ? 0 : 1)) {
			fprintf(stderr,
				"usage: smarm-dist-bench [--calls N] "
				"[--msgs N] [--rounds R] [--workers W] "
				"[--spin-ns NS] [--only ee,el,le,ee-burst,"
				"el-burst,le-burst]\n");
			return 2;
		}
		*opt = atoi(argv[++i]);
	}
	if (B.rounds > ROUNDS_MAX)
		B.rounds = ROUNDS_MAX;
	signal(SIGPIPE, SIG_IGN);
	const char *so = getenv("SMARM_COUNTER_PLUGIN");
	char msg[256];
	smarm_plugin_t *pl = NULL;
	if (smarm_plugin_open(so != NULL ? so : SMARM_BENCH_COUNTER, &pl, msg,
			      sizeof msg) != 0 ||
	    smarm_plugin_behaviour(pl, "counter", &B.counter) != 0) {
		fprintf(stderr, "smarm-dist-bench: counter plugin: %s\n", msg);
		return 1;
	}
	snprintf(B.node, sizeof B.node, "smarmb%d@localhost", (int)getpid());
	if (!peer_start(&B.a, "benchA") || !peer_start(&B.b, "benchB")) {
		fprintf(stderr, "smarm-dist-bench: erl did not start\n");
		peer_stop(&B.a);
		peer_stop(&B.b);
		return 77;
	}
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int rc = smarm_config_alloc(&cfg);
	if (rc == 0)
		rc = smarm_config_set_int(cfg, SMARM_OPT_WORKERS, B.workers);
	if (rc == 0 && B.spin_ns >= 0)
		rc = smarm_config_set_int(cfg, SMARM_OPT_IDLE_SPIN_NS,
					  B.spin_ns);
	if (rc == 0)
		rc = smarm_node_open(&node, cfg);
	smarm_config_free(cfg);
	if (rc == 0)
		rc = smarm_node_run(node, root, NULL, NULL, NULL);
	smarm_node_close(node);
	peer_stop(&B.a);
	peer_stop(&B.b);
	smarm_plugin_close(pl);
	if (rc != 0 || B.failed) {
		fprintf(stderr, "smarm-dist-bench: a measurement failed (%s)\n",
			smarm_err_name(rc));
		return 1;
	}
	double m[6], c[6], w[6];
	for (int k = 0; k < 6; k++) {
		m[k] = median(B.v[k], B.rounds);
		c[k] = median(B.cpu[k], B.rounds);
		w[k] = median(B.csw[k], B.rounds);
	}
	printf("# %d calls (median of each), %d messages, median of %d "
	       "rounds\n",
	       B.calls, B.msgs, B.rounds);
	printf("%-16s %13s %13s %13s %9s %12s %8s\n", "direction",
	       "call rtt (us)", "burst (msg/s)", "cpu/call (us)", "csw/call",
	       "cpu/msg (us)", "csw/msg");
	static const char *dir[3] = { "erl -> erl", "erl -> libsmarm",
				      "libsmarm -> erl" };
	for (int k = 0; k < 3; k++)
		printf("%-16s %13.1f %13.0f %13.1f %9.2f %12.2f %8.3f\n",
		       dir[k], m[k] / 1e3,
		       m[3 + k] > 0 ? B.msgs / (m[3 + k] / 1e9) : 0.0,
		       c[k] / 1e3, w[k], c[3 + k] / 1e3, w[3 + k]);
	return 0;
}
