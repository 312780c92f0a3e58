/* SPDX-License-Identifier: MIT */
/*
 * test_dist.c - a libsmarm node in a real Erlang cluster: each test
 * starts an `erl -sname` peer on loopback (its stdin is a pipe of ours,
 * so it halts when the test process goes), a libsmarm node joins it,
 * and the test checks: the handshake, sends both ways by pid and by
 * registered name, a refused wrong cookie in both directions (with its
 * log line), a burst of 100000 messages each way complete and in order
 * (the time it took goes to the log, not into an assertion), and the
 * argument errors of the API.
 *
 * Without `erl` or `epmd` on PATH the suite reports itself skipped
 * (TAP "1..0 # SKIP", which meson counts as a skip; in TAP mode meson
 * takes a 77 exit for an error). epmd is started with `epmd -daemon`,
 * which does nothing when one runs already.
 *
 * Results observed inside actors go into the global `R` (or are checked
 * with HARNESS_CHECK) and are asserted after the run returns.
 */
#include "harness.h"
#include "erl_peer.h"

#include <ei.h>
#include <smarm/dist.h>
#include <smarm/otp.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define COOKIE "testcookie"
#define BURST 100000

/* ---- the Erlang peer ---- */

/*
 * The peer's program: registered as `echo`, it answers
 *   {echo, From, Msg}        with From ! {echoed, Msg}
 *   {to_name, Name, Node, M} with {Name, Node} ! M
 *   {burst_to, Dest, N}      with Dest ! {seq, I} for I in 1..N, then
 *                            Dest ! {burst_done, N}
 *   {sink, From, N}          by receiving {seq, 1..N} in order, then
 *                            From ! {sink_result, ok | {bad, I, J}}
 *   {stream, Dest, Ms}       with Dest ! {probe} every 10 ms for Ms ms,
 *                            then Dest ! {stream_done}
 *   {monitor, Target, Reply} from a new process: monitor Target (a pid
 *                            or {Name, Node}), Reply ! {monitoring},
 *                            then Reply ! {down, Reason} at its 'DOWN'
 *   {link, Pid, Reply}       from a new trapping process: link Pid,
 *                            Reply ! {linked}, then Reply ! {exit, R}
 *   {unlink, Pid, Reply}     link, unlink, monitor, Reply ! {unlinked};
 *                            at the 'DOWN': Reply ! {exit, none} if no
 *                            'EXIT' came (else {exit, linked_still})
 *   {link_and_die, Pid, R}   a new process links Pid and exits with R
 *   {exit2, Pid, Reason}     exit(Pid, Reason)
 *   {victim, Reply}          Reply ! {victim, P}: P exits with bye when
 *                            it receives die
 *   {tvictim, Reply}         the same, P trapping exits (P answers
 *                            once it traps: a link's exit signal that
 *                            came before would end it): at its first
 *                            'EXIT' Reply ! {exit, R}, at die
 *                            Reply ! {exit, none}
 * and halts when its stdin closes.
 */
static const char peer_eval[] =
	"register(echo, self()),"
	"spawn(fun() -> io:get_line(\"\"), erlang:halt() end),"
	"Sink = fun S(I, N) when I > N -> ok;"
	"          S(I, N) -> receive {seq, I} -> S(I + 1, N);"
	"                             {seq, J} -> {bad, I, J}"
	"                     after 120000 -> {timeout, I} end end,"
	"Loop = fun L() -> receive"
	"  {echo, From, Msg} -> From ! {echoed, Msg}, L();"
	"  {to_name, Name, Node, M} -> {Name, Node} ! M, L();"
	"  {burst_to, Dest, N} ->"
	"     lists:foreach(fun(I) -> Dest ! {seq, I} end, lists:seq(1, N)),"
	"     Dest ! {burst_done, N}, L();"
	"  {sink, From, N} -> From ! {sink_result, Sink(1, N)}, L();"
	"  {stream, Dest, Ms} ->"
	"     T = erlang:monotonic_time(millisecond) + Ms,"
	"     St = fun Sf() -> case erlang:monotonic_time(millisecond) < T of"
	"         true -> Dest ! {probe}, timer:sleep(10), Sf();"
	"         false -> Dest ! {stream_done} end end,"
	"     St(), L();"
	"  {monitor, Target, Reply} ->"
	"     spawn(fun() -> Ref = erlang:monitor(process, Target),"
	"       Reply ! {monitoring},"
	"       receive {'DOWN', Ref, process, _, R} -> Reply ! {down, R}"
	"       after 120000 -> Reply ! {down, timeout} end end), L();"
	"  {link, Pid, Reply} ->"
	"     spawn(fun() -> process_flag(trap_exit, true), link(Pid),"
	"       Reply ! {linked},"
	"       receive {'EXIT', Pid, R} -> Reply ! {exit, R}"
	"       after 120000 -> Reply ! {exit, timeout} end end), L();"
	"  {unlink, Pid, Reply} ->"
	"     spawn(fun() -> process_flag(trap_exit, true), link(Pid),"
	"       unlink(Pid), Ref = erlang:monitor(process, Pid),"
	"       Reply ! {unlinked},"
	"       receive {'DOWN', Ref, process, _, _} -> ok end,"
	"       receive {'EXIT', Pid, _} -> Reply ! {exit, linked_still}"
	"       after 0 -> Reply ! {exit, none} end end), L();"
	"  {link_and_die, Pid, Reason} ->"
	"     spawn(fun() -> link(Pid), exit(Reason) end), L();"
	"  {exit2, Pid, Reason} -> exit(Pid, Reason), L();"
	"  {victim, Reply} ->"
	"     P = spawn(fun() -> receive die -> exit(bye) end end),"
	"     Reply ! {victim, P}, L();"
	"  {tvictim, Reply} ->"
	"     spawn(fun() -> process_flag(trap_exit, true),"
	"       Reply ! {victim, self()},"
	"       receive {'EXIT', _, R} -> Reply ! {exit, R};"
	"               die -> Reply ! {exit, none} end end),"
	"     L()"
	"  end end,"
	"io:format(\"READY~n\"),"
	"Loop().";

/* The pinger's program (a format: the node to ping): say the answer. */
static const char pinger_eval[] =
	"spawn(fun() -> io:get_line(\"\"), erlang:halt() end),"
	"io:format(\"PING ~p~n\", [net_adm:ping('%s')]),"
	"receive after infinity -> ok end.";

static bool peer_start_tt(struct peer *p, const char *tag, const char *ticktime)
{
	return peer_start_eval(p, tag, COOKIE, peer_eval, ticktime);
}

static bool peer_start(struct peer *p, const char *tag)
{
	return peer_start_tt(p, tag, NULL);
}

/* ---- terms (built and read with erl_interface) ---- */

/* {Atom, <our dist pid>, Atom2}-style helpers: ei_x_buff holders. */
static void x_pid(ei_x_buff *x, smarm_dist_t *d, smarm_dist_pid_t p)
{
	uint8_t b[512];
	size_t n = 0;
	HARNESS_EQ(smarm_dist_pid_encode(d, p, b, sizeof b, &n), 0);
	HARNESS_CHECK(n <= sizeof b);
	ei_x_append_buf(x, (const char *)b, (int)n);
}

/* Receive one message from ch within 60 s (scaled): the term's first
 * atom (of a tuple, or the atom itself) into tag, the message out. */
static smarm_dist_msg_t *recv_msg(smarm_chan_t *ch, char *tag)
{
	smarm_dist_msg_t *m = NULL;
	if (smarm_chan_recv_timeout(ch, &m, MS(60000) * harness_time_scale()) !=
	    0)
		return NULL;
	const void *t;
	size_t len;
	HARNESS_EQ(smarm_dist_msg_term(m, &t, &len), 0);
	int i = 0, ver, arity;
	ei_decode_version(t, &i, &ver);
	tag[0] = '\0';
	if (ei_decode_tuple_header(t, &i, &arity) == 0 && arity >= 1)
		ei_decode_atom(t, &i, tag);
	else
		ei_decode_atom(t, &i, tag);
	return m;
}

/* ---- the node ---- */

static struct {
	int rc[32];
	char text[16][64];
	int64_t n[8];
	uint64_t ns[4];
	struct peer *peer;
	char target[64];
	char node[64];
	const char *cookie;
} R;

static void run_node(smarm_actor_cb root)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	int how = -1;
	harness_checks_reset();
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS,
					      harness_workers(2)),
			 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_LOG_LEVEL, 7), 0);
	ck_assert_int_eq(
		smarm_config_set_logger(cfg, harness_log_capture, NULL), 0);
	ck_assert_int_eq(smarm_node_open(&node, cfg), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_node_run(node, root, NULL, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(harness_stat(node, SMARM_STAT_LIVE_ACTORS), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	harness_checks_assert();
}

/* Start erl peer p named name, run root on a node beside it (R.peer
 * is p), stop the peer (again, if root stopped it). */
static void run_with_peer(struct peer *p, const char *name, smarm_actor_cb root)
{
	ck_assert_msg(peer_start(p, name), "erl did not start");
	R.peer = p;
	run_node(root);
	peer_stop(p);
}

/*
 * The same with short ticks: an interval of 1 s here (a silent peer
 * dropped after 4 s), erl's net_ticktime 4 (a tick a second, a silent
 * node dropped after about 4 s), both times SMARM_TEST_TIME_SCALE;
 * R.target holds erl's for other peers.
 */
static void run_with_fast_ticks(struct peer *p, const char *name,
				smarm_actor_cb root)
{
	char ms[32];
	int scale = (int)(harness_time_scale() + 0.5);
	scale = scale > 1 ? scale : 1;
	snprintf(ms, sizeof ms, "%d", 1000 * scale);
	snprintf(R.target, sizeof R.target, "%d", 4 * scale);
	setenv("SMARM__DIST_TICK_MS", ms, 1);
	ck_assert_msg(peer_start_tt(p, name, R.target), "erl did not start");
	R.peer = p;
	run_node(root);
	peer_stop(p);
}

static void setup(void)
{
	memset(&R, 0, sizeof R);
	for (int i = 0; i < 32; i++)
		R.rc[i] = 12345;
	harness_log_clear();
	snprintf(R.node, sizeof R.node, "smarm%d@localhost", (int)getpid());
	R.cookie = COOKIE;
	signal(SIGPIPE, SIG_IGN);
}

/* ---- handshake, sends both ways by pid and by name ---- */

static void root_send(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	R.rc[1] = smarm_dist_mailbox(d, &box);
	R.rc[2] = smarm_register("smarm_box", NULL);
	R.rc[3] = smarm_dist_connect(d, R.peer->name);
	R.rc[4] = smarm_dist_connect(d, R.peer->name); /* connected: ok */

	smarm_dist_pid_t me;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	smarm_pid_t back;
	HARNESS_EQ(smarm_dist_pid_local(d, me, &back), 0);
	HARNESS_CHECK(smarm_pid_eq(back, smarm_actor_self()));

	/* By name: {echo, Me, hello} to {echo, peer}. */
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "echo");
	x_pid(&x, d, me);
	ei_x_encode_atom(&x, "hello");
	R.rc[5] = smarm_dist_send_name(d, R.peer->name, "echo", x.buff,
				       (size_t)x.index);
	ei_x_free(&x);
	char tag[MAXATOMLEN_UTF8];
	smarm_dist_msg_t *m = recv_msg(box, tag);
	smarm_dist_pid_t echo = SMARM_DIST_PID_NONE;
	if (m != NULL) {
		harness_copy(R.text[0], sizeof R.text[0], tag);
		R.rc[6] = smarm_dist_msg_from(m, &echo);
		char node[256];
		R.rc[7] = smarm_dist_pid_node(d, echo, node, sizeof node);
		harness_copy(R.text[1], sizeof R.text[1], node);
		/* The payload is {echoed, hello}. */
		const void *t;
		size_t len;
		smarm_dist_msg_term(m, &t, &len);
		int i = 0, ver, ar;
		char a[MAXATOMLEN_UTF8];
		ei_decode_version(t, &i, &ver);
		ei_decode_tuple_header(t, &i, &ar);
		ei_decode_atom(t, &i, a);
		ei_decode_atom(t, &i, a);
		harness_copy(R.text[2], sizeof R.text[2], a);
		smarm_dist_msg_free(m);
	}
	/* By pid: the echo process's own pid, learnt as the sender. */
	if (echo.id != 0) {
		ei_x_new_with_version(&x);
		ei_x_encode_tuple_header(&x, 3);
		ei_x_encode_atom(&x, "echo");
		x_pid(&x, d, me);
		ei_x_encode_atom(&x, "by_pid");
		R.rc[8] = smarm_dist_send(d, echo, x.buff, (size_t)x.index);
		ei_x_free(&x);
		m = recv_msg(box, tag);
		if (m != NULL) {
			const void *t;
			size_t len;
			smarm_dist_msg_term(m, &t, &len);
			int i = 0, ver, ar;
			char a[MAXATOMLEN_UTF8];
			ei_decode_version(t, &i, &ver);
			ei_decode_tuple_header(t, &i, &ar);
			ei_decode_atom(t, &i, a);
			ei_decode_atom(t, &i, a);
			harness_copy(R.text[3], sizeof R.text[3], a);
			smarm_dist_msg_free(m);
		}
	}
	/* Erlang to our registered name: {to_name, smarm_box, Node, hi}. */
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 4);
	ei_x_encode_atom(&x, "to_name");
	ei_x_encode_atom(&x, "smarm_box");
	ei_x_encode_atom(&x, R.node);
	ei_x_encode_atom(&x, "hi_by_name");
	R.rc[9] = smarm_dist_send_name(d, R.peer->name, "echo", x.buff,
				       (size_t)x.index);
	ei_x_free(&x);
	m = recv_msg(box, tag);
	if (m != NULL) {
		harness_copy(R.text[4], sizeof R.text[4], tag);
		smarm_dist_msg_free(m);
	}
	/* A local send through the same API reaches the same mailbox. */
	ei_x_new_with_version(&x);
	ei_x_encode_atom(&x, "local");
	R.rc[10] = smarm_dist_send(d, me, x.buff, (size_t)x.index);
	R.rc[11] = smarm_dist_send_name(d, R.node, "smarm_box", x.buff,
					(size_t)x.index);
	ei_x_free(&x);
	for (int k = 0; k < 2; k++) {
		m = recv_msg(box, tag);
		if (m != NULL) {
			R.n[0] += strcmp(tag, "local") == 0;
			smarm_dist_msg_free(m);
		}
	}
	R.rc[12] = smarm_dist_stop(d);
	harness_chan_drop(box);
}

START_TEST(test_dist_send_both_ways_by_pid_and_name)
{
	struct peer p = { 0 };
	run_with_peer(&p, "peer", root_send);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_int_eq(R.rc[5], 0);
	ck_assert_str_eq(R.text[0], "echoed");
	ck_assert_int_eq(R.rc[6], 0);
	ck_assert_int_eq(R.rc[7], 0);
	ck_assert_str_eq(R.text[1], p.name);
	ck_assert_str_eq(R.text[2], "hello");
	ck_assert_int_eq(R.rc[8], 0);
	ck_assert_str_eq(R.text[3], "by_pid");
	ck_assert_int_eq(R.rc[9], 0);
	ck_assert_str_eq(R.text[4], "hi_by_name");
	ck_assert_int_eq(R.rc[10], 0);
	ck_assert_int_eq(R.rc[11], 0);
	ck_assert_int_eq(R.n[0], 2);
	ck_assert_int_eq(R.rc[12], 0);
}
END_TEST

/* ---- a wrong cookie is refused, both ways ---- */

static void root_wrong_cookie(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	R.rc[0] = smarm_dist_start(&d, R.node, "not" COOKIE, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	/* Outgoing: the peer closes on our digest. */
	R.rc[1] = smarm_dist_connect(d, R.peer->name);
	/* Incoming: a pinger with the peer's cookie gets pang. */
	struct peer pinger = { 0 };
	char sname[64], line[128] = "", eval[512];
	snprintf(sname, sizeof sname, "pinger%d@localhost", (int)getpid());
	snprintf(eval, sizeof eval, pinger_eval, R.node);
	if (peer_spawn(&pinger, sname, COOKIE, eval, NULL)) {
		R.rc[2] =
			peer_await(&pinger, "PING", line, sizeof line) ? 0 : -1;
		snprintf(R.text[0], sizeof R.text[0], "%s", line);
		peer_stop(&pinger);
	}
	R.rc[3] = smarm_dist_stop(d);
}

START_TEST(test_dist_wrong_cookie_is_refused_both_ways)
{
	struct peer p = { 0 };
	run_with_peer(&p, "peer", root_wrong_cookie);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], SMARM_EAUTH);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_str_eq(R.text[0], "PING pang");
	ck_assert_msg(harness_log_has("wrong cookie"), "no refusal logged");
	ck_assert_int_eq(R.rc[3], 0);
}
END_TEST

/* ---- bursts of 100000 messages each way ---- */

static void root_burst(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	R.rc[1] = smarm_dist_mailbox(d, &box);
	smarm_dist_pid_t me;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	ei_x_buff x;

	/* libsmarm -> erl: {sink, Me, N}, then {seq, 1..N} to echo. */
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "sink");
	x_pid(&x, d, me);
	ei_x_encode_long(&x, BURST);
	R.rc[2] = smarm_dist_send_name(d, R.peer->name, "echo", x.buff,
				       (size_t)x.index);
	ei_x_free(&x);
	uint64_t t0 = smarm_now_ns();
	int failed = 0;
	for (long i = 1; i <= BURST; i++) {
		char b[64];
		int k = 0;
		ei_encode_version(b, &k);
		ei_encode_tuple_header(b, &k, 2);
		ei_encode_atom(b, &k, "seq");
		ei_encode_long(b, &k, i);
		if (smarm_dist_send_name(d, R.peer->name, "echo", b,
					 (size_t)k) != 0)
			failed++;
	}
	R.n[0] = failed;
	char tag[MAXATOMLEN_UTF8];
	smarm_dist_msg_t *m = recv_msg(box, tag);
	R.ns[0] = smarm_now_ns() - t0;
	if (m != NULL) {
		const void *t;
		size_t len;
		smarm_dist_msg_term(m, &t, &len);
		int i = 0, ver, ar;
		char a[MAXATOMLEN_UTF8] = "";
		ei_decode_version(t, &i, &ver);
		ei_decode_tuple_header(t, &i, &ar);
		ei_decode_atom(t, &i, a);
		snprintf(R.text[0], sizeof R.text[0], "%s", a);
		if (ei_decode_atom(t, &i, a) == 0)
			snprintf(R.text[1], sizeof R.text[1], "%s", a);
		smarm_dist_msg_free(m);
	}

	/* erl -> libsmarm: {burst_to, Me, N}; expect {seq, 1..N} in
	 * order, then {burst_done, N}. */
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "burst_to");
	x_pid(&x, d, me);
	ei_x_encode_long(&x, BURST);
	t0 = smarm_now_ns();
	R.rc[3] = smarm_dist_send_name(d, R.peer->name, "echo", x.buff,
				       (size_t)x.index);
	ei_x_free(&x);
	long next = 1, bad = 0;
	for (;;) {
		m = recv_msg(box, tag);
		if (m == NULL) {
			bad = -1; /* lost */
			break;
		}
		const void *t;
		size_t len;
		smarm_dist_msg_term(m, &t, &len);
		int i = 0, ver, ar;
		char a[MAXATOMLEN_UTF8];
		long v = -1;
		ei_decode_version(t, &i, &ver);
		ei_decode_tuple_header(t, &i, &ar);
		ei_decode_atom(t, &i, a);
		ei_decode_long(t, &i, &v);
		smarm_dist_msg_free(m);
		if (strcmp(a, "burst_done") == 0)
			break;
		if (strcmp(a, "seq") != 0 || v != next)
			bad++;
		next++;
	}
	R.ns[1] = smarm_now_ns() - t0;
	R.n[1] = next - 1;
	R.n[2] = bad;
	R.rc[4] = smarm_dist_stop(d);
	harness_chan_drop(box);
}

START_TEST(test_dist_burst_100k_each_way_complete_and_in_order)
{
	struct peer p = { 0 };
	run_with_peer(&p, "peer", root_burst);
	fprintf(stderr,
		"# dist burst: %d messages libsmarm -> erl in %.1f ms "
		"(%.0f ns/msg, until the sink's answer); erl -> libsmarm "
		"in %.1f ms (%.0f ns/msg)\n",
		BURST, R.ns[0] / 1e6, (double)R.ns[0] / BURST, R.ns[1] / 1e6,
		(double)R.ns[1] / BURST);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.n[0], 0);
	ck_assert_str_eq(R.text[0], "sink_result");
	ck_assert_str_eq(R.text[1], "ok");
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.n[1], BURST);
	ck_assert_int_eq(R.n[2], 0);
	ck_assert_int_eq(R.rc[4], 0);
}
END_TEST

/* ---- ticks: a line idle both ways, then busy one way only ---- */

/* An echo round trip on the live connection: 0 or a code. */
static int echo_round_trip(smarm_dist_t *d, smarm_chan_t *box,
			   smarm_dist_pid_t me, const char *word)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "echo");
	x_pid(&x, d, me);
	ei_x_encode_atom(&x, word);
	int rc = smarm_dist_send_name(d, R.peer->name, "echo", x.buff,
				      (size_t)x.index);
	ei_x_free(&x);
	if (rc != 0)
		return rc;
	char tag[MAXATOMLEN_UTF8];
	smarm_dist_msg_t *m = recv_msg(box, tag);
	if (m == NULL)
		return SMARM_ETIMEDOUT;
	rc = strcmp(tag, "echoed") == 0 ? 0 : SMARM_EINTERNAL;
	smarm_dist_msg_free(m);
	return rc;
}

static void root_ticks(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	R.rc[1] = smarm_dist_mailbox(d, &box);
	smarm_dist_pid_t me;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	R.rc[2] = echo_round_trip(d, box, me, "first");
	/* Idle both ways for several tick times of both sides: only
	 * ticks keep the connection. (Time passing is the point here.) */
	smarm_actor_sleep(MS(12000));
	R.rc[3] = echo_round_trip(d, box, me, "after_idle");
	/* Busy from erl to us only, for several of its tick times: our
	 * reader must still send ticks. */
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "stream");
	x_pid(&x, d, me);
	ei_x_encode_long(&x, 12000);
	R.rc[4] = smarm_dist_send_name(d, R.peer->name, "echo", x.buff,
				       (size_t)x.index);
	ei_x_free(&x);
	char tag[MAXATOMLEN_UTF8];
	for (;;) {
		smarm_dist_msg_t *m = recv_msg(box, tag);
		if (m == NULL) {
			R.rc[5] = SMARM_ETIMEDOUT;
			break;
		}
		smarm_dist_msg_free(m);
		if (strcmp(tag, "stream_done") == 0) {
			R.rc[5] = 0;
			break;
		}
		R.n[0]++;
	}
	R.rc[6] = echo_round_trip(d, box, me, "after_stream");
	R.rc[7] = smarm_dist_stop(d);
	harness_chan_drop(box);
}

START_TEST(test_dist_ticks_keep_idle_and_one_way_lines_up)
{
	struct peer p = { 0 };
	run_with_fast_ticks(&p, "peer", root_ticks);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_int_eq(R.rc[5], 0);
	ck_assert_int_gt(R.n[0], 0);
	ck_assert_int_eq(R.rc[6], 0);
	ck_assert_int_eq(R.rc[7], 0);
	/* One connection for the whole test: it never went down. */
	ck_assert_msg(!harness_log_has("closed by the peer") &&
			      !harness_log_has("no tick"),
		      "the connection went down (see the log)");
}
END_TEST

/* ---- monitors and links from Erlang into libsmarm ---- */

/* A child that ends as its channel says: 0 normally, 1 crashed (42);
 * nothing received: it waits until stopped or signalled. */
static void child(void *arg)
{
	smarm_chan_t *cmd = arg;
	int c;
	if (smarm_chan_recv(cmd, &c) != 0)
		return;
	if (c == 1)
		smarm_actor_crash(42);
}

struct kid {
	smarm_pid_t pid;
	smarm_dist_pid_t dpid;
	smarm_chan_t *cmd;
	uint64_t mref; /* our own monitor of it, 0 none */
};

static void kid_start(smarm_dist_t *d, struct kid *k, smarm_chan_t *sig)
{
	HARNESS_EQ(smarm_chan_alloc(&k->cmd, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&k->pid, child, k->cmd, NULL), 0);
	HARNESS_EQ(smarm_dist_self(d, k->pid, &k->dpid), 0);
	if (sig != NULL)
		HARNESS_EQ(smarm_monitor(k->pid, sig, &k->mref), 0);
}

static void kid_end(struct kid *k)
{
	smarm_actor_join(k->pid, NULL, NULL);
	harness_chan_drop(k->cmd);
}

/* Send {Op, Arg, Me} (Arg a pid) to the echo of the peer named node. */
static int ask_at(smarm_dist_t *d, const char *node, const char *op,
		  smarm_dist_pid_t arg, smarm_dist_pid_t me, const char *reason)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, op);
	x_pid(&x, d, arg);
	if (reason != NULL && (reason[0] == '-' || isdigit(reason[0])))
		ei_x_encode_long(&x, strtol(reason, NULL, 10)); /* a code */
	else if (reason != NULL)
		ei_x_encode_atom(&x, reason);
	else
		x_pid(&x, d, me);
	int rc = smarm_dist_send_name(d, node, "echo", x.buff, (size_t)x.index);
	ei_x_free(&x);
	return rc;
}

/* The same to the test's peer. */
static int ask(smarm_dist_t *d, const char *op, smarm_dist_pid_t arg,
	       smarm_dist_pid_t me, const char *reason)
{
	return ask_at(d, R.peer->name, op, arg, me, reason);
}

/* Receive {Tag, Detail}: Detail as text ("normal", "smarm_crashed:42"). */
static void reply(smarm_chan_t *box, char *out, size_t cap)
{
	char tag[MAXATOMLEN_UTF8];
	snprintf(out, cap, "(nothing)");
	smarm_dist_msg_t *m = recv_msg(box, tag);
	if (m == NULL)
		return;
	const void *t;
	size_t len;
	smarm_dist_msg_term(m, &t, &len);
	int i = 0, ver, ar;
	char a[MAXATOMLEN_UTF8] = "", b[MAXATOMLEN_UTF8] = "";
	long v = 0;
	ei_decode_version(t, &i, &ver);
	ei_decode_tuple_header(t, &i, &ar);
	ei_decode_atom(t, &i, a);
	if (ar == 1)
		snprintf(out, cap, "%s", a);
	else if (ei_decode_atom(t, &i, b) == 0)
		snprintf(out, cap, "%s:%s", a, b);
	else if (ei_decode_tuple_header(t, &i, &ar) == 0 &&
		 ei_decode_atom(t, &i, b) == 0 &&
		 ei_decode_long(t, &i, &v) == 0)
		snprintf(out, cap, "%s:%s:%ld", a, b, v);
	smarm_dist_msg_free(m);
}

static void root_links(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL, *sig = harness_sig_chan();
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	R.rc[1] = smarm_dist_mailbox(d, &box);
	smarm_dist_pid_t me;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	int one = 1, zero = 0;
	smarm_signal_t s;

	/* A monitor by pid; the actor ends normally. */
	struct kid a = { 0 };
	kid_start(d, &a, NULL);
	HARNESS_EQ(ask(d, "monitor", a.dpid, me, NULL), 0);
	reply(box, R.text[0], sizeof R.text[0]); /* monitoring */
	smarm_chan_send(a.cmd, &zero);
	reply(box, R.text[1], sizeof R.text[1]); /* down:normal */
	kid_end(&a);
	/* A monitor of a pid that is gone: noproc at once. */
	HARNESS_EQ(ask(d, "monitor", a.dpid, me, NULL), 0);
	reply(box, R.text[2], sizeof R.text[2]);
	reply(box, R.text[3], sizeof R.text[3]); /* down:noproc */

	/* A monitor by {Name, Node}; the actor crashes with 42. */
	struct kid b = { 0 };
	kid_start(d, &b, NULL);
	HARNESS_EQ(smarm_register_pid("watched_b", b.pid, NULL), 0);
	{
		ei_x_buff x;
		ei_x_new_with_version(&x);
		ei_x_encode_tuple_header(&x, 3);
		ei_x_encode_atom(&x, "monitor");
		ei_x_encode_tuple_header(&x, 2);
		ei_x_encode_atom(&x, "watched_b");
		ei_x_encode_atom(&x, R.node);
		x_pid(&x, d, me);
		HARNESS_EQ(smarm_dist_send_name(d, R.peer->name, "echo", x.buff,
						(size_t)x.index),
			   0);
		ei_x_free(&x);
	}
	reply(box, R.text[4], sizeof R.text[4]); /* monitoring */
	smarm_chan_send(b.cmd, &one);
	reply(box, R.text[5], sizeof R.text[5]); /* down:smarm_crashed:42 */
	kid_end(&b);

	/* A link from a trapping Erlang process; the actor is killed. */
	struct kid c = { 0 };
	kid_start(d, &c, NULL);
	HARNESS_EQ(ask(d, "link", c.dpid, me, NULL), 0);
	reply(box, R.text[6], sizeof R.text[6]); /* linked */
	smarm_actor_stop(c.pid);
	reply(box, R.text[7], sizeof R.text[7]); /* exit:killed */
	kid_end(&c);

	/* Linked, then unlinked: no EXIT when the actor ends. */
	struct kid u = { 0 };
	kid_start(d, &u, NULL);
	HARNESS_EQ(ask(d, "unlink", u.dpid, me, NULL), 0);
	reply(box, R.text[8], sizeof R.text[8]); /* unlinked */
	smarm_chan_send(u.cmd, &one);
	reply(box, R.text[9], sizeof R.text[9]); /* exit:none */
	kid_end(&u);

	/* The Erlang end of a link dies: the actor (not trapping) is
	 * taken along, crashed. */
	struct kid e = { 0 };
	kid_start(d, &e, sig);
	HARNESS_EQ(ask(d, "link_and_die", e.dpid, me, "boom"), 0);
	R.rc[2] = harness_recv_sig(sig, &s) == 0 ? s.how : -1;
	kid_end(&e);

	/* exit(Pid, kill) from Erlang: an untrappable kill. */
	struct kid k = { 0 };
	kid_start(d, &k, sig);
	HARNESS_EQ(ask(d, "exit2", k.dpid, me, "kill"), 0);
	R.rc[3] = harness_recv_sig(sig, &s) == 0 ? s.how : -1;
	kid_end(&k);

	/* exit(Pid, -7) from Erlang: a crash whose reason is the code. */
	struct kid k2 = { 0 };
	kid_start(d, &k2, sig);
	HARNESS_EQ(ask(d, "exit2", k2.dpid, me, "-7"), 0);
	if (harness_recv_sig(sig, &s) == 0) {
		R.rc[6] = s.how;
		R.n[1] = s.reason;
	}
	kid_end(&k2);

	/* The peer goes away: an actor linked across the connection gets
	 * noconnection (crashed, SMARM_ENOCONN). */
	struct kid n = { 0 };
	kid_start(d, &n, sig);
	HARNESS_EQ(ask(d, "link", n.dpid, me, NULL), 0);
	reply(box, R.text[10], sizeof R.text[10]); /* linked */
	peer_stop(R.peer);
	if (harness_recv_sig(sig, &s) == 0) {
		R.rc[4] = s.how;
		R.n[0] = s.reason;
	}
	kid_end(&n);

	R.rc[5] = smarm_dist_stop(d);
	harness_chan_drop(box);
	harness_chan_drop(sig);
}

START_TEST(test_dist_erlang_monitors_and_links_libsmarm_actors)
{
	struct peer p = { 0 };
	run_with_peer(&p, "peer", root_links);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_str_eq(R.text[0], "monitoring");
	ck_assert_str_eq(R.text[1], "down:normal");
	ck_assert_str_eq(R.text[2], "monitoring");
	ck_assert_str_eq(R.text[3], "down:noproc");
	ck_assert_str_eq(R.text[4], "monitoring");
	ck_assert_str_eq(R.text[5], "down:smarm_crashed:42");
	ck_assert_str_eq(R.text[6], "linked");
	ck_assert_str_eq(R.text[7], "exit:killed");
	ck_assert_str_eq(R.text[8], "unlinked");
	ck_assert_str_eq(R.text[9], "exit:none");
	ck_assert_int_eq(R.rc[2], SMARM_EXIT_CRASHED);
	ck_assert_int_eq(R.rc[3], SMARM_EXIT_STOPPED);
	ck_assert_str_eq(R.text[10], "linked");
	ck_assert_int_eq(R.rc[4], SMARM_EXIT_CRASHED);
	ck_assert_int_eq(R.n[0], SMARM_ENOCONN);
	ck_assert_int_eq(R.rc[6], SMARM_EXIT_CRASHED);
	ck_assert_int_eq(R.n[1], -7);
	ck_assert_int_eq(R.rc[5], 0);
}
END_TEST

/* ---- libsmarm monitors Erlang processes ---- */

/* A new victim process on the peer: its pid. */
static smarm_dist_pid_t victim_of(smarm_dist_t *d, smarm_chan_t *box,
				  smarm_dist_pid_t me, const char *kind)
{
	smarm_dist_pid_t v = SMARM_DIST_PID_NONE;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, kind);
	x_pid(&x, d, me);
	HARNESS_EQ(smarm_dist_send_name(d, R.peer->name, "echo", x.buff,
					(size_t)x.index),
		   0);
	ei_x_free(&x);
	char tag[MAXATOMLEN_UTF8];
	smarm_dist_msg_t *m = recv_msg(box, tag);
	if (m == NULL)
		return v;
	const void *t;
	size_t len;
	smarm_dist_msg_term(m, &t, &len);
	int i = 0, ver, ar;
	ei_decode_version(t, &i, &ver);
	ei_decode_tuple_header(t, &i, &ar);
	ei_decode_atom(t, &i, tag);
	HARNESS_EQ(smarm_dist_pid_decode(d, (const char *)t + i,
					 len - (size_t)i, NULL, &v),
		   0);
	smarm_dist_msg_free(m);
	return v;
}

static smarm_dist_pid_t victim(smarm_dist_t *d, smarm_chan_t *box,
			       smarm_dist_pid_t me)
{
	return victim_of(d, box, me, "victim");
}

/* The ref (0 if not a Down) and reason, as text, of a message m. */
static uint64_t down_of(const smarm_dist_msg_t *m, char *reason, size_t cap)
{
	uint64_t ref = 0;
	if (smarm_dist_msg_down(m, &ref) != 0)
		return 0;
	const void *t;
	size_t len;
	int i = 0, ver, ar;
	char a[MAXATOMLEN_UTF8] = "";
	smarm_dist_msg_term(m, &t, &len);
	ei_decode_version(t, &i, &ver);
	ei_decode_tuple_header(t, &i, &ar);
	ei_decode_atom(t, &i, a);	   /* 'DOWN' */
	ei_skip_term(t, &i);		   /* Ref */
	ei_decode_atom(t, &i, a);	   /* process */
	ei_skip_term(t, &i);		   /* Pid */
	if (ei_decode_atom(t, &i, a) == 0) /* Reason */
		snprintf(reason, cap, "%s", a);
	return ref;
}

/* A Down: its ref (0 if the message is none) and reason as text. */
static uint64_t down(smarm_chan_t *box, char *reason, size_t cap)
{
	char tag[MAXATOMLEN_UTF8];
	uint64_t ref = 0;
	snprintf(reason, cap, "(nothing)");
	smarm_dist_msg_t *m = recv_msg(box, tag);
	if (m == NULL)
		return 0;
	ref = down_of(m, reason, cap);
	if (ref == 0) {
		char why[sizeof tag + 16];
		snprintf(why, sizeof why, "not a down: %s", tag);
		harness_copy(reason, cap, why);
	}
	smarm_dist_msg_free(m);
	return ref;
}

/* The node of a {nodedown, Node} message, as text. */
static void nodedown_of(const smarm_dist_msg_t *m, char *out, size_t cap)
{
	const void *t;
	size_t len;
	int i = 0, ver, ar;
	char a[MAXATOMLEN_UTF8] = "";
	smarm_dist_msg_term(m, &t, &len);
	ei_decode_version(t, &i, &ver);
	ei_decode_tuple_header(t, &i, &ar);
	ei_skip_term(t, &i); /* nodedown */
	ei_decode_atom(t, &i, a);
	snprintf(out, cap, "%s", a);
}

static void root_remote_monitor(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	R.rc[1] = smarm_dist_mailbox(d, &box);
	smarm_dist_pid_t me;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	static const uint8_t die[] = { 131, 119, 3, 'd', 'i', 'e' };
	uint64_t ref = 0;

	/* The victim exits with bye. */
	smarm_dist_pid_t v = victim(d, box, me);
	R.rc[2] = smarm_dist_monitor(d, v, &ref);
	R.rc[3] = smarm_dist_send(d, v, die, sizeof die);
	R.n[0] = down(box, R.text[0], sizeof R.text[0]) == ref && ref != 0;
	/* Gone already: noproc. */
	R.rc[4] = smarm_dist_monitor(d, v, &ref);
	R.n[1] = down(box, R.text[1], sizeof R.text[1]) == ref;
	/* Removed before the victim dies: no Down, the next message is
	 * an echo. */
	v = victim(d, box, me);
	R.rc[5] = smarm_dist_monitor(d, v, &ref);
	R.rc[6] = smarm_dist_demonitor(d, ref);
	R.rc[7] = smarm_dist_demonitor(d, ref); /* gone: ENOENT */
	R.rc[8] = smarm_dist_send(d, v, die, sizeof die);
	R.rc[9] = echo_round_trip(d, box, me, "no_down_before");
	/* The node goes: noconnection. */
	v = victim(d, box, me);
	R.rc[10] = smarm_dist_monitor(d, v, &ref);
	R.rc[11] = smarm_dist_monitor(d, me, &ref); /* local: EINVAL */
	/* monitor_node: two on and one off are one nodedown. */
	R.rc[13] = smarm_dist_monitor_node(d, R.peer->name, true);
	R.rc[14] = smarm_dist_monitor_node(d, R.peer->name, true);
	R.rc[15] = smarm_dist_monitor_node(d, R.peer->name, false);
	R.rc[16] = smarm_dist_monitor_node(d, smarm_dist_name(d), true);
	peer_stop(R.peer);
	/* The Down and the nodedown, in either order, then nothing. */
	for (int k = 0; k < 2; k++) {
		char tag[MAXATOMLEN_UTF8];
		smarm_dist_msg_t *m = recv_msg(box, tag);
		if (m != NULL && down_of(m, R.text[2], sizeof R.text[2]) != 0)
			R.n[2]++;
		else if (m != NULL && strcmp(tag, "nodedown") == 0) {
			nodedown_of(m, R.text[3], sizeof R.text[3]);
			R.n[3]++;
		}
		if (m != NULL)
			smarm_dist_msg_free(m);
	}
	smarm_dist_msg_t *extra = NULL;
	R.rc[17] = smarm_chan_recv_timeout(box, &extra,
					   MS(500) * harness_time_scale());
	if (extra != NULL)
		smarm_dist_msg_free(extra);
	/* A node out of reach: a nodedown at once. */
	R.rc[18] = smarm_dist_monitor_node(d, "nobody@localhost", true);
	char tag[MAXATOMLEN_UTF8];
	smarm_dist_msg_t *m = recv_msg(box, tag);
	if (m != NULL && strcmp(tag, "nodedown") == 0)
		nodedown_of(m, R.text[4], sizeof R.text[4]);
	if (m != NULL)
		smarm_dist_msg_free(m);
	R.rc[12] = smarm_dist_stop(d);
	harness_chan_drop(box);
}

START_TEST(test_dist_libsmarm_monitors_erlang_processes)
{
	struct peer p = { 0 };
	run_with_peer(&p, "peer", root_remote_monitor);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_str_eq(R.text[0], "bye");
	ck_assert_int_eq(R.n[0], 1);
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_str_eq(R.text[1], "noproc");
	ck_assert_int_eq(R.n[1], 1);
	ck_assert_int_eq(R.rc[5], 0);
	ck_assert_int_eq(R.rc[6], 0);
	ck_assert_int_eq(R.rc[7], SMARM_ENOENT);
	ck_assert_int_eq(R.rc[8], 0);
	ck_assert_int_eq(R.rc[9], 0);
	ck_assert_int_eq(R.rc[10], 0);
	ck_assert_int_eq(R.rc[11], SMARM_EINVAL);
	ck_assert_str_eq(R.text[2], "noconnection");
	ck_assert_int_eq(R.n[2], 1);
	ck_assert_int_eq(R.rc[13], 0);
	ck_assert_int_eq(R.rc[14], 0);
	ck_assert_int_eq(R.rc[15], 0);
	ck_assert_int_eq(R.rc[16], SMARM_EINVAL);
	ck_assert_int_eq(R.n[3], 1);
	ck_assert_str_eq(R.text[3], p.name);
	ck_assert_int_eq(R.rc[17], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[18], 0);
	ck_assert_str_eq(R.text[4], "nobody@localhost");
	ck_assert_int_eq(R.rc[12], 0);
}
END_TEST

/* ---- libsmarm links Erlang processes ---- */

struct linker {
	smarm_dist_t *d;
	smarm_dist_pid_t target;
	smarm_chan_t *ready; /* the link is set (int) */
	smarm_chan_t *cmd;   /* never written: it waits to be ended */
	bool unlink;	     /* unlink again before waiting */
};

static void linker(void *arg)
{
	struct linker *l = arg;
	int one = 1, c;
	HARNESS_EQ(smarm_dist_link(l->d, l->target), 0);
	/* Again: nothing is done (one link, one unlink removes it). */
	HARNESS_EQ(smarm_dist_link(l->d, l->target), 0);
	if (l->unlink)
		HARNESS_EQ(smarm_dist_unlink(l->d, l->target), 0);
	smarm_chan_send(l->ready, &one);
	smarm_chan_recv(l->cmd, &c);
}

/* Spawn a linker of target, monitored on sig; wait until it linked,
 * unless an exit signal may end it first (ready never comes then). */
static smarm_pid_t linker_start_as(struct linker *l, smarm_dist_t *d,
				   smarm_dist_pid_t target, bool unlink,
				   smarm_chan_t *sig, bool may_die)
{
	smarm_pid_t pid = SMARM_PID_NONE;
	int one;
	*l = (struct linker){ d, target, NULL, NULL, unlink };
	HARNESS_EQ(smarm_chan_alloc(&l->ready, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&l->cmd, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&pid, linker, l, NULL), 0);
	HARNESS_EQ(smarm_monitor(pid, sig, NULL), 0);
	if (!may_die)
		HARNESS_EQ(smarm_chan_recv_timeout(
				   l->ready, &one,
				   MS(60000) * harness_time_scale()),
			   0);
	return pid;
}

static smarm_pid_t linker_start(struct linker *l, smarm_dist_t *d,
				smarm_dist_pid_t target, bool unlink,
				smarm_chan_t *sig)
{
	return linker_start_as(l, d, target, unlink, sig, false);
}

static void linker_end(struct linker *l, smarm_pid_t pid)
{
	smarm_actor_join(pid, NULL, NULL);
	harness_chan_drop(l->ready);
	harness_chan_drop(l->cmd);
}

static void root_remote_link(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL, *sig = harness_sig_chan();
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	R.rc[1] = smarm_dist_mailbox(d, &box);
	smarm_dist_pid_t me;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	static const uint8_t die[] = { 131, 119, 3, 'd', 'i', 'e' };
	struct linker l;
	smarm_signal_t s;
	uint64_t ref;

	/* Misuse: a pid of this node, no handle. */
	R.rc[6] = smarm_dist_link(d, me);
	R.rc[7] = smarm_dist_link(NULL, me);
	R.rc[8] = smarm_dist_unlink(d, me);

	/* The Erlang end dies (bye): the linker is taken along. */
	smarm_dist_pid_t v = victim(d, box, me);
	smarm_pid_t a = linker_start(&l, d, v, false, sig);
	HARNESS_EQ(smarm_dist_send(d, v, die, sizeof die), 0);
	R.rc[2] = harness_recv_sig(sig, &s) == 0 ? s.how : -1;
	linker_end(&l, a);

	/* The linker is stopped: the (trapping) Erlang end hears of it,
	 * killed. (Erlang orders signals per sender only, so the Erlang
	 * end reports what it got rather than being monitored.) */
	v = victim_of(d, box, me, "tvictim");
	a = linker_start(&l, d, v, false, sig);
	smarm_actor_stop(a);
	HARNESS_EQ(harness_recv_sig(sig, &s), 0);
	linker_end(&l, a);
	reply(box, R.text[0], sizeof R.text[0]); /* exit:killed */

	/* Linked, then unlinked: the Erlang end hears nothing of the
	 * linker's stop, only its own die. */
	v = victim_of(d, box, me, "tvictim");
	a = linker_start(&l, d, v, true, sig);
	smarm_actor_stop(a);
	HARNESS_EQ(harness_recv_sig(sig, &s), 0);
	linker_end(&l, a);
	HARNESS_EQ(smarm_dist_send(d, v, die, sizeof die), 0);
	reply(box, R.text[1], sizeof R.text[1]); /* exit:none */
	(void)ref;

	/* A process that has ended: the peer answers noproc, an exit
	 * signal that ends the (not trapping) linker. */
	v = victim(d, box, me);
	HARNESS_EQ(smarm_dist_monitor(d, v, &ref), 0);
	HARNESS_EQ(smarm_dist_send(d, v, die, sizeof die), 0);
	HARNESS_EQ(down(box, R.text[2], sizeof R.text[2]), ref);
	/* The noproc may end the linker before it says it linked (the
	 * reader serves the peer's answer at once: a worker polls). */
	a = linker_start_as(&l, d, v, false, sig, true);
	R.rc[5] = harness_recv_sig(sig, &s) == 0 ? s.how : -1;
	linker_end(&l, a);

	/* The node goes: noconnection. */
	v = victim(d, box, me);
	a = linker_start(&l, d, v, false, sig);
	peer_stop(R.peer);
	if (harness_recv_sig(sig, &s) == 0) {
		R.rc[3] = s.how;
		R.n[0] = s.reason;
	}
	linker_end(&l, a);
	R.rc[4] = smarm_dist_stop(d);
	harness_chan_drop(box);
	harness_chan_drop(sig);
}

START_TEST(test_dist_libsmarm_links_erlang_processes)
{
	struct peer p = { 0 };
	run_with_peer(&p, "peer", root_remote_link);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], SMARM_EXIT_CRASHED);
	ck_assert_str_eq(R.text[0], "exit:killed");
	ck_assert_str_eq(R.text[1], "exit:none");
	ck_assert_str_eq(R.text[2], "bye");
	ck_assert_int_eq(R.rc[5], SMARM_EXIT_CRASHED);
	ck_assert_int_eq(R.rc[6], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[7], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[8], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[3], SMARM_EXIT_CRASHED);
	ck_assert_int_eq(R.n[0], SMARM_ENOCONN);
	ck_assert_int_eq(R.rc[4], 0);
}
END_TEST

/* ---- argument errors, missing peers and cookies ---- */

static void root_errors(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	static const uint8_t atom_ok[] = { 131, 119, 2, 'o', 'k' };
	static const uint8_t cut[] = { 131, 104, 2, 97 };
	R.rc[0] = smarm_dist_start(NULL, R.node, COOKIE, NULL, 0);
	R.rc[1] = smarm_dist_start(&d, "no_at_sign", COOKIE, NULL, 0);
	R.rc[2] = smarm_dist_start(&d, "bad name@localhost", COOKIE, NULL, 0);
	R.rc[3] = smarm_dist_start(&d, R.node, "", NULL, 0);
	R.rc[4] = smarm_dist_start(&d, R.node, COOKIE, "not-an-ip", 0);
	R.rc[5] = smarm_dist_start(&d, R.node, COOKIE, NULL, 70000);
	/* $HOME's cookie file readable by others: refused as erl does. */
	R.rc[6] = smarm_dist_start(&d, R.node, NULL, "127.0.0.1", 0);
	R.rc[7] = smarm_dist_start(&d, R.node, COOKIE, "127.0.0.1", 0);
	if (R.rc[7] != 0)
		return;
	smarm_dist_pid_t me, bogus = { 999999 };
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	R.rc[8] = smarm_dist_send(d, bogus, atom_ok, sizeof atom_ok);
	R.rc[9] = smarm_dist_send(d, me, cut, sizeof cut);
	R.rc[10] = smarm_dist_send(d, me, atom_ok, 0);
	R.rc[11] = smarm_dist_send_name(d, "x@localhost", "", atom_ok,
					sizeof atom_ok);
	R.rc[12] = smarm_dist_connect(d, R.node); /* ourselves */
	/* No such node in epmd. */
	R.rc[13] = smarm_dist_connect(d, "nobody_here@localhost");
	/* A garbage handshake on our port is refused with a log line,
	 * and the node lives on. */
	char sname[SMARM_DIST_NODE_MAX + 1];
	R.rc[14] = smarm_dist_pid_node(d, me, sname, sizeof sname);
	R.rc[15] = smarm_dist_pid_node(d, me, sname, 3);
	size_t len = 0;
	R.rc[16] = smarm_dist_pid_encode(d, me, NULL, 0, &len);
	uint8_t b[300];
	R.rc[17] = smarm_dist_pid_encode(d, me, b, sizeof b, &len);
	smarm_dist_pid_t again;
	size_t used = 0;
	R.rc[18] = smarm_dist_pid_decode(d, b, len, &used, &again);
	HARNESS_EQ(used, len);
	HARNESS_EQ(again.id, me.id);
	R.rc[19] = smarm_dist_pid_decode(d, b, len - 1, &used, &again);
	R.rc[20] = smarm_dist_mailbox(d, NULL);
	R.rc[21] = smarm_dist_stop(d);
}

START_TEST(test_dist_errors_are_reported)
{
	/* Outside an actor. */
	smarm_dist_t *d = NULL;
	ck_assert_int_eq(smarm_dist_start(&d, "a@localhost", COOKIE, NULL, 0),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_dist_stop(NULL), 0);
	ck_assert_ptr_null(smarm_dist_name(NULL));
	ck_assert_int_eq(smarm_dist_msg_term(NULL, NULL, NULL), SMARM_EINVAL);
	/* A HOME whose cookie file others may read. */
	char home[] = "/tmp/smarm_dist_home_XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(home));
	char path[128];
	snprintf(path, sizeof path, "%s/.erlang.cookie", home);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(COOKIE "\n", f);
	fclose(f);
	chmod(path, 0644);
	setenv("HOME", home, 1);
	run_node(root_errors);
	unlink(path);
	rmdir(home);
	ck_assert_int_eq(R.rc[0], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[1], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[2], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[3], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[4], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[5], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[6], SMARM_ECOOKIE);
	ck_assert_int_eq(R.rc[7], 0);
	ck_assert_int_eq(R.rc[8], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[9], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[10], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[11], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[12], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[13], SMARM_ENOCONN);
	ck_assert_int_eq(R.rc[14], 0);
	ck_assert_int_eq(R.rc[15], SMARM_ETOOBIG);
	ck_assert_int_eq(R.rc[16], 0);
	ck_assert_int_eq(R.rc[17], 0);
	ck_assert_int_eq(R.rc[18], 0);
	ck_assert_int_eq(R.rc[19], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[20], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[21], 0);
}
END_TEST

/* ---- a malformed handshake on our port ---- */

static void root_garbage(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	R.rc[0] = smarm_dist_start(&d, R.node, COOKIE, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	/* Find our port through epmd's PORT_PLEASE2, as a peer would. */
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(4369),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	R.rc[1] = smarm_io_connect(fd, (struct sockaddr *)&sa, sizeof sa,
				   MS(30000));
	char alive[64];
	snprintf(alive, sizeof alive, "smarm%d", (int)getpid());
	uint8_t req[80] = { 0, (uint8_t)(strlen(alive) + 1), 122 };
	memcpy(req + 3, alive, strlen(alive));
	ptrdiff_t k;
	smarm_io_write(fd, req, 3 + strlen(alive), &k);
	uint8_t resp[16] = { 0 };
	size_t have = 0;
	while (have < 4 && smarm_io_read(fd, resp + have, 4 - have, &k) == 0 &&
	       k > 0)
		have += (size_t)k;
	close(fd);
	int port = resp[2] << 8 | resp[3];
	R.n[0] = resp[1] == 0 ? port : -1;
	/* A v5 'n' message: refused. Then garbage lengths. */
	for (int round = 0; round < 2; round++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		sa.sin_port = htons((uint16_t)port);
		R.rc[2 + round] = smarm_io_connect(fd, (struct sockaddr *)&sa,
						   sizeof sa, MS(30000));
		static const uint8_t v5[] = {
			0, 8, 'n', 0, 5, 0, 0, 0, 0, 'x'
		};
		static const uint8_t junk[] = { 0xff, 0xff, 1, 2, 3 };
		if (round == 0)
			smarm_io_write(fd, v5, sizeof v5, &k);
		else
			smarm_io_write(fd, junk, sizeof junk, &k);
		/* The node closes it (a reset, if our bytes were unread). */
		uint8_t sink[64];
		int rc;
		while ((rc = smarm_io_read(fd, sink, sizeof sink, &k)) == 0 &&
		       k > 0)
			;
		R.n[1 + round] = rc == 0 || rc == SMARM_ESYSTEM ? 0 : rc;
		close(fd);
	}
	R.rc[4] = smarm_dist_stop(d);
}

START_TEST(test_dist_malformed_handshake_closes_with_log_line)
{
	run_node(root_garbage);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_gt(R.n[0], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.n[1], 0);
	ck_assert_int_eq(R.n[2], 0);
	ck_assert_msg(harness_log_has("not a version 6 handshake"),
		      "no log line");
	ck_assert_int_eq(R.rc[4], 0);
}
END_TEST

/* ---- a peer that answers nok, then dies ---- */

static _Atomic int nok_ready; /* the fake node is registered */

/* Read exactly len bytes (30 s bound each); 0 or an error. */
static int read_full(int fd, void *buf, size_t len)
{
	size_t have = 0;
	while (have < len) {
		ptrdiff_t k;
		int rc = smarm_io_wait_readable_timeout(fd, MS(30000));
		if (rc != 0)
			return rc;
		rc = smarm_io_read(fd, (uint8_t *)buf + have, len - have, &k);
		if (rc != 0)
			return rc;
		if (k == 0)
			return SMARM_ENOCONN;
		have += (size_t)k;
	}
	return 0;
}

/*
 * A node that is not one: registered with epmd as "zznok<pid>", it
 * answers the first handshake with nok (what a node whose own
 * connection to us is being made answers, its name being the greater),
 * then closes its port and its epmd registration, as a node that died
 * just after would. R.rc[1..5]: its steps.
 */
static void fake_nok(void *arg)
{
	(void)arg;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	R.rc[1] = bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
				  listen(lfd, 4) == 0 &&
				  getsockname(lfd, (struct sockaddr *)&sa,
					      &sl) == 0
			  ? 0
			  : -errno;
	uint16_t port = ntohs(sa.sin_port);
	/* ALIVE2_REQ: a normal node, TCP, versions 6..6, no extra. */
	char alive[32];
	snprintf(alive, sizeof alive, "zznok%d", (int)getpid());
	size_t an = strlen(alive);
	uint8_t req[64] = { 0,
			    (uint8_t)(13 + an),
			    120,
			    (uint8_t)(port >> 8),
			    (uint8_t)port,
			    77,
			    0,
			    0,
			    6,
			    0,
			    6,
			    0,
			    (uint8_t)an };
	memcpy(req + 13, alive, an);
	req[13 + an] = 0; /* extra: none */
	req[14 + an] = 0;
	int efd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in ea = { .sin_family = AF_INET,
				  .sin_port = htons(4369),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	ptrdiff_t k;
	uint8_t resp[2] = { 0, 0xff };
	R.rc[2] = smarm_io_connect(efd, (struct sockaddr *)&ea, sizeof ea,
				   MS(30000));
	if (R.rc[2] == 0)
		R.rc[2] = smarm_io_write(efd, req, 15 + an, &k);
	if (R.rc[2] == 0)
		R.rc[2] = read_full(efd, resp, 2);
	/* ALIVE2_RESP (121) or ALIVE2_X_RESP (118), result 0. */
	R.n[1] = (resp[0] == 121 || resp[0] == 118) && resp[1] == 0;
	atomic_store(&nok_ready, 1);
	int cfd = -1;
	uint8_t len[2], body[512];
	R.rc[3] = smarm_io_accept(lfd, NULL, NULL, MS(30000), &cfd);
	if (R.rc[3] == 0)
		R.rc[3] = read_full(cfd, len, 2);
	size_t bn = (size_t)(len[0] << 8 | len[1]);
	if (R.rc[3] == 0 && bn <= sizeof body)
		R.rc[3] = read_full(cfd, body, bn);
	R.n[2] = R.rc[3] == 0 && bn > 0 && body[0] == 'N'; /* send_name */
	static const uint8_t nok[] = { 0, 4, 's', 'n', 'o', 'k' };
	R.rc[4] = smarm_io_write(cfd, nok, sizeof nok, &k);
	/* Dead: no port, no registration, never a connection of its own. */
	close(cfd);
	close(lfd);
	close(efd);
}

static void root_nok(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_pid_t fake;
	char peer[64];
	R.rc[0] = smarm_dist_start(&d, R.node, COOKIE, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	atomic_store(&nok_ready, 0);
	HARNESS_EQ(smarm_actor_spawn(&fake, fake_nok, NULL, NULL), 0);
	while (!atomic_load(&nok_ready))
		smarm_actor_sleep(MS(1));
	snprintf(peer, sizeof peer, "zznok%d@localhost", (int)getpid());
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_atom(&x, "hello");
	uint64_t t0 = smarm_now_ns();
	R.rc[6] = smarm_dist_send_name(d, peer, "any", x.buff, (size_t)x.index);
	R.n[3] = (int64_t)((smarm_now_ns() - t0) / 1000000);
	ei_x_free(&x);
	HARNESS_EQ(smarm_actor_join(fake, NULL, NULL), 0);
	R.rc[7] = smarm_dist_stop(d);
}

/*
 * Told nok, a sender waits for the peer's own connection; a peer that
 * died after its nok never makes one. The sender then tries again
 * (after a second) and fails at once (the node is gone from epmd), not
 * at the 30 s setup bound it waited for before.
 */
START_TEST(test_dist_peer_dead_after_nok_fails_fast)
{
	run_node(root_nok);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.n[1], 1);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_int_eq(R.n[2], 1);
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_msg(harness_log_has("told us nok"), "no nok seen");
	printf("# a send to a node dead after its nok failed in %lld ms\n",
	       (long long)R.n[3]);
	ck_assert_int_eq(R.rc[6], SMARM_ENOCONN);
	ck_assert_int_lt(R.n[3], 15000);
	ck_assert_int_eq(R.rc[7], 0);
}
END_TEST

/* ---- simultaneous connect, both orderings of the names ---- */

/*
 * The arbiter's program: registered as `arb`, on {plan, C, N, T0, P}
 * it drops the connection to C, then for each round I in 1..N at the
 * wall-clock time T0 + I * P (ms) sends {ping, I} to {box, C} (which
 * connects on demand), waits for our {pong, I} (sent at the same time,
 * so both nodes connect to each other at once) and our {ack, I}, and
 * disconnects C again. A pong that does not come is reported {lost, I}.
 */
static const char arb_eval[] =
	"register(arb, self()),"
	"spawn(fun() -> io:get_line(\"\"), erlang:halt() end),"
	"Round = fun Rd(I, N, _, _, _) when I > N -> ok;"
	"           Rd(I, N, C, T0, P) ->"
	"  W = T0 + I * P - erlang:system_time(millisecond),"
	"  timer:sleep(max(0, W)),"
	"  {box, C} ! {ping, I},"
	"  receive {pong, I} -> ok after 20000 -> {box, C} ! {lost, I} end,"
	"  receive {ack, I} -> ok after 20000 -> ok end,"
	"  erlang:disconnect_node(C),"
	"  Rd(I + 1, N, C, T0, P) end,"
	"Loop = fun L() -> receive"
	"  {plan, C, N, T0, P} -> erlang:disconnect_node(C),"
	"     Round(1, N, C, T0, P), L() end end,"
	"io:format(\"READY~n\"),"
	"Loop().";

#define ARB_ROUNDS 20

#define ARB_PERIOD_MS 250

static uint64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* {Tag, I} to {arb, peer}. */
static int arb_send(smarm_dist_t *d, const char *tag, long i)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, tag);
	ei_x_encode_long(&x, i);
	int rc = smarm_dist_send_name(d, R.peer->name, "arb", x.buff,
				      (size_t)x.index);
	ei_x_free(&x);
	return rc;
}

/* Wait for {nodedown, _} in box: true if it came. */
static bool arb_nodedown(smarm_chan_t *box)
{
	char tag[MAXATOMLEN_UTF8];
	for (;;) {
		smarm_dist_msg_t *m = recv_msg(box, tag);
		if (m == NULL)
			return false;
		smarm_dist_msg_free(m);
		if (strcmp(tag, "nodedown") == 0)
			return true;
	}
}

/* The rounds as node `name`: R.n[k] counts failed sends, R.n[k + 1]
 * pings that arrived in order, R.n[k + 2] nodedowns missed. */
static void arb_rounds(const char *name, int k)
{
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	int rc = smarm_dist_start(&d, name, R.cookie, "127.0.0.1", 0);
	HARNESS_EQ(rc, 0);
	if (rc != 0)
		return;
	HARNESS_EQ(smarm_dist_mailbox(d, &box), 0);
	HARNESS_EQ(smarm_register("box", NULL), 0);
	uint64_t period = (uint64_t)(ARB_PERIOD_MS * harness_time_scale());
	uint64_t t0 = wall_ms() + 1000;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 5);
	ei_x_encode_atom(&x, "plan");
	ei_x_encode_atom(&x, name);
	ei_x_encode_long(&x, ARB_ROUNDS);
	ei_x_encode_longlong(&x, (long long)t0);
	ei_x_encode_long(&x, (long)period);
	HARNESS_EQ(smarm_dist_monitor_node(d, R.peer->name, true), 0);
	HARNESS_EQ(smarm_dist_send_name(d, R.peer->name, "arb", x.buff,
					(size_t)x.index),
		   0);
	ei_x_free(&x);
	R.n[k + 2] += !arb_nodedown(box); /* the peer drops it */
	for (long i = 1; i <= ARB_ROUNDS; i++) {
		/* Our send sweeps 0.8 to 3.2 ms after the peer's: its
		 * timer fires late, its connect starts later than ours. */
		uint64_t at = (t0 + (uint64_t)i * period) * 1000000ull +
			      800000ull + (uint64_t)(i % 20) * 120000ull;
		uint64_t now = wall_ms() * 1000000ull;
		int before = harness_log_count("ours gives way") +
			     harness_log_count("told nok") +
			     harness_log_count("told us nok");
		if (at > now)
			smarm_actor_sleep(at - now);
		/* The peer sends its ping now too: both connect. */
		R.n[k] += arb_send(d, "pong", i) != 0;
		char tag[MAXATOMLEN_UTF8];
		smarm_dist_msg_t *m = recv_msg(box, tag);
		if (m != NULL) {
			const void *t;
			size_t len;
			long j = -1;
			int p = 0, ver, ar;
			smarm_dist_msg_term(m, &t, &len);
			ei_decode_version(t, &p, &ver);
			ei_decode_tuple_header(t, &p, &ar);
			ei_skip_term(t, &p);
			ei_decode_long(t, &p, &j);
			R.n[k + 1] += strcmp(tag, "ping") == 0 && j == i;
			smarm_dist_msg_free(m);
		}
		HARNESS_EQ(smarm_dist_monitor_node(d, R.peer->name, true), 0);
		R.n[k] += arb_send(d, "ack", i) != 0;
		R.n[k + 2] += !arb_nodedown(box); /* the peer drops it */
		fprintf(stderr, "# round %ld: %d arbitrations\n", i,
			harness_log_count("ours gives way") +
				harness_log_count("told nok") +
				harness_log_count("told us nok") - before);
		if (R.n[k] != 0 || R.n[k + 1] != i || R.n[k + 2] != 0)
			break; /* failed: the asserts say how */
	}
	HARNESS_EQ(smarm_dist_stop(d), 0);
	harness_chan_drop(box);
	smarm_unregister("box");
}

static void root_simultaneous(void *arg)
{
	(void)arg;
	char lower[64], greater[64];
	/* The peer is arb<pid>@localhost: "aa" sorts before it, "zz"
	 * after (OTP compares node names as atoms, byte by byte). */
	snprintf(lower, sizeof lower, "aa%d@localhost", (int)getpid());
	snprintf(greater, sizeof greater, "zz%d@localhost", (int)getpid());
	arb_rounds(lower, 0);
	arb_rounds(greater, 3);
}

START_TEST(test_dist_simultaneous_connect_both_name_orders)
{
	struct peer p = { 0 };
	ck_assert_msg(peer_start_eval(&p, "arb", COOKIE, arb_eval, NULL),
		      "erl did not start");
	R.peer = &p;
	run_node(root_simultaneous);
	peer_stop(&p);
	fprintf(stderr,
		"# simultaneous connects seen: %d gave way, %d told nok, "
		"%d told us nok\n",
		harness_log_count("ours gives way"),
		harness_log_count("told nok"),
		harness_log_count("told us nok"));
	/* The sweep makes races all but certain (about 20 in 40 rounds
	 * here): none at all means the test no longer tests them. */
	ck_assert_int_gt(harness_log_count("ours gives way") +
				 harness_log_count("told nok") +
				 harness_log_count("told us nok"),
			 0);
	for (int k = 0; k <= 3; k += 3) {
		ck_assert_int_eq(R.n[k], 0);		  /* no send failed */
		ck_assert_int_eq(R.n[k + 1], ARB_ROUNDS); /* every ping */
		ck_assert_int_eq(R.n[k + 2], 0);	  /* every round */
	}
}
END_TEST

/* ---- a peer that stops reading holds up no other ---- */

#define FILL_CHUNK (64 * 1024)
#define FILL_MAX 2048 /* 128 MB at most: far past the socket buffers */
static atomic_int fill_sent;

struct filler {
	smarm_dist_t *d;
	const char *node;
};

/* Send FILL_CHUNK binaries to node's echo until a send fails (the
 * connection killed) or FILL_MAX: with the peer stopped, it ends up
 * parked in a write, holding the connection's writers back. */
static void filler(void *arg)
{
	struct filler *f = arg;
	ei_x_buff x;
	char *junk = calloc(1, FILL_CHUNK);
	HARNESS_CHECK(junk != NULL);
	ei_x_new_with_version(&x);
	ei_x_encode_binary(&x, junk, FILL_CHUNK);
	free(junk);
	for (int i = 0; i < FILL_MAX; i++) {
		if (smarm_dist_send_name(f->d, f->node, "echo", x.buff,
					 (size_t)x.index) != 0)
			break;
		atomic_fetch_add(&fill_sent, 1);
	}
	ei_x_free(&x);
}

static void root_stuck(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	struct peer pb = { 0 };
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	R.rc[1] = smarm_dist_mailbox(d, &box);
	R.rc[2] = peer_start_tt(&pb, "pb", R.target) ? 0 : -1;
	smarm_dist_pid_t me;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	struct kid a = { 0 }, b = { 0 };
	kid_start(d, &a, NULL);
	kid_start(d, &b, NULL);
	/* The stuck peer (R.peer) monitors a, the other (pb) b. */
	HARNESS_EQ(ask(d, "monitor", a.dpid, me, NULL), 0);
	reply(box, R.text[0], sizeof R.text[0]); /* monitoring */
	HARNESS_EQ(ask_at(d, pb.name, "monitor", b.dpid, me, NULL), 0);
	reply(box, R.text[1], sizeof R.text[1]); /* monitoring */
	/* The stuck peer stops reading; a writer fills its socket and
	 * parks in a write, holding that connection's writers. */
	kill(R.peer->pid, SIGSTOP);
	atomic_store(&fill_sent, 0);
	struct filler f = { d, R.peer->name };
	smarm_pid_t fp;
	HARNESS_EQ(smarm_actor_spawn(&fp, filler, &f, NULL), 0);
	uint64_t until = smarm_now_ns() + MS(30000) * harness_time_scale();
	int last = -1, same = 0;
	while (same < 3 && smarm_now_ns() < until) {
		smarm_actor_sleep(MS(100));
		int now = atomic_load(&fill_sent);
		same = now == last ? same + 1 : 0;
		last = now;
	}
	R.n[0] = last;
	R.n[1] = smarm_actor_is_alive(fp); /* parked in its write */
	/* a ends: its Down goes to the stuck peer (the watcher's write
	 * there cannot go out); then b ends: its Down to pb must not wait
	 * for it. */
	int zero = 0;
	smarm_chan_send(a.cmd, &zero);
	smarm_actor_sleep(MS(100));
	uint64_t t0 = smarm_now_ns();
	smarm_chan_send(b.cmd, &zero);
	char tag[MAXATOMLEN_UTF8];
	smarm_dist_msg_t *m = NULL;
	snprintf(R.text[2], sizeof R.text[2], "(nothing)");
	if (smarm_chan_recv_timeout(box, &m,
				    MS(20000) * harness_time_scale()) == 0) {
		const void *t;
		size_t len;
		int i = 0, ver, ar;
		char why[MAXATOMLEN_UTF8] = "";
		HARNESS_EQ(smarm_dist_msg_term(m, &t, &len), 0);
		ei_decode_version(t, &i, &ver);
		ei_decode_tuple_header(t, &i, &ar);
		ei_decode_atom(t, &i, tag);
		ei_decode_atom(t, &i, why);
		snprintf(R.text[2], sizeof R.text[2], "%.30s:%.30s", tag, why);
		smarm_dist_msg_free(m);
	}
	R.ns[0] = smarm_now_ns() - t0;
	/* The stuck peer is dropped at its tick time (4 s): its reader
	 * kept reading, and the writer parked on it fails and ends. */
	t0 = smarm_now_ns();
	until = t0 + MS(30000) * harness_time_scale();
	while (smarm_actor_is_alive(fp) && smarm_now_ns() < until)
		smarm_actor_sleep(MS(50));
	R.ns[1] = smarm_now_ns() - t0;
	R.n[2] = smarm_actor_is_alive(fp);
	peer_stop(R.peer);
	HARNESS_EQ(smarm_actor_join(fp, NULL, NULL), 0);
	kid_end(&a);
	kid_end(&b);
	R.rc[3] = smarm_dist_stop(d);
	peer_stop(&pb);
	harness_chan_drop(box);
}

/*
 * One peer stops reading (SIGSTOP) with a writer parked on its full
 * socket; an actor it monitors ends, then one another peer monitors:
 * the second Down arrives at once, and the stuck peer is dropped at
 * its tick time. Until 0.5.x the watcher, which writes every
 * connection's Downs, waited in the first write, and the second Down
 * with it, until the stuck peer was dropped, which was never: its
 * reader's tick waited behind the same writer.
 */
START_TEST(test_dist_stuck_peer_holds_up_no_other)
{
	struct peer p = { 0 };
	run_with_fast_ticks(&p, "stuck", root_stuck);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_str_eq(R.text[0], "monitoring");
	ck_assert_str_eq(R.text[1], "monitoring");
	ck_assert_msg(R.n[1] == 1, "the filler was not parked (%lld sent)",
		      (long long)R.n[0]);
	ck_assert_str_eq(R.text[2], "down:normal");
	ck_assert_msg(R.ns[0] < MS(5000) * harness_time_scale(),
		      "the other peer's Down took %llu ns",
		      (unsigned long long)R.ns[0]);
	ck_assert_msg(R.n[2] == 0, "the stuck peer was not dropped in %llu ns",
		      (unsigned long long)R.ns[1]);
	ck_assert(harness_log_has("no tick within the tick time"));
	ck_assert_int_eq(R.rc[3], 0);
}
END_TEST

Suite *smarm_test_dist_suite(void)
{
	Suite *s = suite_create("dist");
	TCase *tc = tcase_create("erl");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_dist_send_both_ways_by_pid_and_name);
	tcase_add_test(tc, test_dist_wrong_cookie_is_refused_both_ways);
	tcase_add_test(tc, test_dist_burst_100k_each_way_complete_and_in_order);
	tcase_add_test(tc, test_dist_ticks_keep_idle_and_one_way_lines_up);
	tcase_add_test(tc, test_dist_erlang_monitors_and_links_libsmarm_actors);
	tcase_add_test(tc, test_dist_libsmarm_monitors_erlang_processes);
	tcase_add_test(tc, test_dist_libsmarm_links_erlang_processes);
	tcase_add_test(tc, test_dist_stuck_peer_holds_up_no_other);
	suite_add_tcase(s, tc);
	TCase *ts = tcase_create("simultaneous");
	tcase_add_checked_fixture(ts, setup, NULL);
	tcase_set_timeout(ts, 600);
	tcase_add_test(ts, test_dist_simultaneous_connect_both_name_orders);
	suite_add_tcase(s, ts);
	TCase *te = tcase_create("errors");
	tcase_add_checked_fixture(te, setup, NULL);
	tcase_set_timeout(te, 300);
	tcase_add_test(te, test_dist_errors_are_reported);
	tcase_add_test(te, test_dist_malformed_handshake_closes_with_log_line);
	tcase_add_test(te, test_dist_peer_dead_after_nok_fails_fast);
	suite_add_tcase(s, te);
	return s;
}

int main(void)
{
	return erl_suite_main(smarm_test_dist_suite());
}
