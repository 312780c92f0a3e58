/* SPDX-License-Identifier: MIT */
/*
 * test_dist_gen.c - gen_server interop with a real Erlang peer (issue
 * 35): Erlang's gen_server:call and gen_server:cast reach libsmarm
 * servers of behaviour plugins that smarm_dist_serve exposes (counter,
 * kv, the tuple test plugin's shapes), by {Name, Node} and by pid, with
 * their replies and errors mapped to terms; and a libsmarm actor calls
 * and casts an Erlang gen_server (a module the peer compiles at start)
 * with smarm_dist_call and smarm_dist_cast: its reply, noproc for a
 * name nobody holds, noconnection for a node that is not there, the
 * server's exit reason when it dies in the call, and a timeout whose
 * late reply is dropped.
 *
 * The peer runs a driver registered as `drv` that makes the Erlang side
 * of each case on request and answers with the result printed by
 * io_lib:format("~p"), which the test compares as text. Without `erl`
 * or `epmd` on PATH the suite reports itself skipped, as test_dist.c.
 */
#include "harness.h"
#include "erl_peer.h"
#include "probe_events.h"

#include <ei.h>
#include <smarm/dist.h>
#include <smarm/obs.h>
#include <smarm/otp.h>
#include <smarm/smarm_plugin.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#define COOKIE "testcookie"
#define BENCH 2000 /* round trips timed each way */

/* ---- the Erlang peer ---- */

/*
 * The peer's program: it compiles and starts `tgs`, a gen_server
 * registered as tgs whose state is an integer:
 *   {add, A, B} -> A + B        get -> the state
 *   {set, X} (a cast)           the state becomes X
 *   hold -> no reply now        release -> releases the held call with
 *                                 `late`, replies `released`
 *   die -> stops with reason boom (no reply)
 * and runs the driver `drv`:
 *   {gcall, Dest, Text, Reply}  from a new process: gen_server:call(Dest,
 *                               Req) with Req the value of the Erlang
 *                               expression Text (in which Me is Reply);
 *                               Reply ! {gres, Printed}
 *   {gcast_call, Dest, CastText, CallText, Reply}
 *                               from one new process: cast, then call,
 *                               Reply ! {gres, Printed}
 *   {bench, Dest, N, Reply}     from a new process: N calls of get in
 *                               a row; Reply ! {gres, Microseconds}
 *   {whereis, Name, Reply}      Reply ! {pid, whereis(Name)}
 * and halts when its stdin closes.
 */
static const char peer_eval[] =
	"spawn(fun() -> io:get_line(\"\"), erlang:halt() end),"
	"Src = [\"-module(tgs).\","
	"       \"-export([init/1, handle_call/3, handle_cast/2]).\","
	"       \"init(S) -> {ok, S}.\","
	"       \"handle_call({add, A, B}, _, S) -> {reply, A + B, S};"
	"         handle_call(get, _, S) -> {reply, S, S};"
	"         handle_call(hold, F, S) -> put(held, F), {noreply, S};"
	"         handle_call(release, _, S) ->"
	"           gen_server:reply(get(held), late), {reply, released, S};"
	"         handle_call(die, _, S) -> {stop, boom, S}.\","
	"       \"handle_cast({set, X}, _) -> {noreply, X}.\"],"
	"Forms = [begin {ok, T, _} = erl_scan:string(F),"
	"               {ok, Fo} = erl_parse:parse_form(T), Fo end"
	"         || F <- Src],"
	"{ok, tgs, Bin} = compile:forms(Forms),"
	"{module, tgs} = code:load_binary(tgs, \"tgs.erl\", Bin),"
	"{ok, _} = gen_server:start({local, tgs}, tgs, 0, []),"
	"register(drv, self()),"
	"Ev = fun(S, Me) -> {ok, T, _} = erl_scan:string(S),"
	"               {ok, Es} = erl_parse:parse_exprs(T),"
	"               B = erl_eval:add_binding('Me', Me,"
	"                                        erl_eval:new_bindings()),"
	"               {value, V, _} = erl_eval:exprs(Es, B), V end,"
	"Pr = fun(R) -> lists:flatten(io_lib:format(\"~p\", [R])) end,"
	"Loop = fun L() -> receive"
	"  {gcall, Dest, Text, Reply} ->"
	"     spawn(fun() -> R = (catch gen_server:call(Dest, Ev(Text, Reply),"
	"                                               20000)),"
	"                    Reply ! {gres, Pr(R)} end), L();"
	"  {gcast_call, Dest, CText, Text, Reply} ->"
	"     spawn(fun() -> gen_server:cast(Dest, Ev(CText, Reply)),"
	"                    R = (catch gen_server:call(Dest, Ev(Text, Reply),"
	"                                               20000)),"
	"                    Reply ! {gres, Pr(R)} end), L();"
	"  {bench, Dest, N, Reply} ->"
	"     spawn(fun() -> T0 = erlang:monotonic_time(microsecond),"
	"       lists:foreach(fun(_) -> gen_server:call(Dest, get) end,"
	"                     lists:seq(1, N)),"
	"       T = erlang:monotonic_time(microsecond) - T0,"
	"       Reply ! {gres, integer_to_list(T)} end), L();"
	"  {info_call, Dest, IText, Text, Reply} ->"
	"     spawn(fun() -> [Dest ! M || M <- Ev(IText, Reply)],"
	"                    R = (catch gen_server:call(Dest, Ev(Text, Reply),"
	"                                               20000)),"
	"                    Reply ! {gres, Pr(R)} end), L();"
	"  {whereis, Name, Reply} -> Reply ! {pid, whereis(Name)}, L()"
	"  end end,"
	"io:format(\"READY~n\"),"
	"Loop().";

static bool peer_start_tt(struct peer *p, const char *tag, const char *ticktime)
{
	return peer_start_eval(p, tag, COOKIE, peer_eval, ticktime);
}

static bool peer_start(struct peer *p, const char *tag)
{
	return peer_start_tt(p, tag, NULL);
}

/* ---- the node ---- */

static struct {
	int rc[48];
	char text[40][128];
	uint64_t ns[4];
	struct peer *peer;
	bool stats; /* the node keeps actor statistics */
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
		smarm_config_set_int(cfg, SMARM_OPT_ACTOR_STATS, R.stats), 0);
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

static smarm_plugin_t *pl_counter, *pl_kv, *pl_tuple, *pl_probe, *pl_door;
static const smarm_behaviour_t *counter, *kv, *shapes, *probe, *door;

/* Start erl peer p named name, run root on a node beside it (R.peer
 * is p), stop the peer (again, if root stopped it). */
static void run_with_peer(struct peer *p, const char *name, smarm_actor_cb root)
{
	ck_assert_msg(peer_start(p, name), "erl peer did not start");
	R.peer = p;
	run_node(root);
	peer_stop(p);
}

static void setup(void)
{
	char msg[256];
	memset(&R, 0, sizeof R);
	for (int i = 0; i < 48; i++)
		R.rc[i] = 12345;
	harness_log_clear();
	snprintf(R.node, sizeof R.node, "smarmg%d@localhost", (int)getpid());
	R.cookie = COOKIE;
	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_COUNTER"),
					   &pl_counter, msg, sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_KV"), &pl_kv, msg,
					   sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_TUPLE"),
					   &pl_tuple, msg, sizeof msg),
			 0);
	ck_assert_int_eq(
		smarm_plugin_behaviour(pl_counter, "counter", &counter), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl_kv, "kv", &kv), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl_tuple, "shapes", &shapes),
			 0);
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_PROBE"),
					   &pl_probe, msg, sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl_probe, "probe", &probe), 0);
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_DOOR"), &pl_door,
					   msg, sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl_door, "door", &door), 0);
}

static void teardown(void)
{
	smarm_plugin_close(pl_counter);
	smarm_plugin_close(pl_kv);
	smarm_plugin_close(pl_tuple);
	smarm_plugin_close(pl_probe);
	smarm_plugin_close(pl_door);
}

/* ---- terms ---- */

static void x_pid(ei_x_buff *x, smarm_dist_t *d, smarm_dist_pid_t p)
{
	uint8_t b[512];
	size_t n = 0;
	HARNESS_EQ(smarm_dist_pid_encode(d, p, b, sizeof b, &n), 0);
	HARNESS_CHECK(n <= sizeof b);
	ei_x_append_buf(x, (const char *)b, (int)n);
}

/* The driver's destination: {Name, Node} (pid NONE) or the pid. */
static void x_dest(ei_x_buff *x, smarm_dist_t *d, const char *name,
		   smarm_dist_pid_t pid)
{
	if (pid.id != 0) {
		x_pid(x, d, pid);
		return;
	}
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, name);
	ei_x_encode_atom(x, R.node);
}

/* Receive one message from box within 60 s (scaled). */
static smarm_dist_msg_t *recv_box(smarm_chan_t *box)
{
	smarm_dist_msg_t *m = NULL;
	if (smarm_chan_recv_timeout(box, &m,
				    MS(60000) * harness_time_scale()) != 0)
		return NULL;
	return m;
}

/*
 * Have the driver call (cast_text NULL) or cast then call the server
 * dest (a name of ours, or a pid) with the request texts; its answer
 * comes to me (erl_result).
 */
static void erl_ask(smarm_dist_t *d, smarm_dist_pid_t me, const char *name,
		    smarm_dist_pid_t pid, const char *cast_text,
		    const char *text)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, cast_text != NULL ? 5 : 4);
	ei_x_encode_atom(&x, cast_text != NULL ? "gcast_call" : "gcall");
	x_dest(&x, d, name, pid);
	if (cast_text != NULL)
		ei_x_encode_string(&x, cast_text);
	ei_x_encode_string(&x, text);
	x_pid(&x, d, me);
	int rc = smarm_dist_send_name(d, R.peer->name, "drv", x.buff,
				      (size_t)x.index);
	ei_x_free(&x);
	HARNESS_EQ(rc, 0);
}

/* The next result the driver sends, printed, into out. */
static void erl_result(smarm_chan_t *box, char *out, size_t cap)
{
	snprintf(out, cap, "(no answer)");
	smarm_dist_msg_t *m = recv_box(box);
	if (m == NULL)
		return;
	const void *t;
	size_t len;
	smarm_dist_msg_term(m, &t, &len);
	int i = 0, ver, ar;
	char tag[MAXATOMLEN_UTF8];
	char buf[1024];
	if (ei_decode_version(t, &i, &ver) == 0 &&
	    ei_decode_tuple_header(t, &i, &ar) == 0 && ar == 2 &&
	    ei_decode_atom(t, &i, tag) == 0 && strcmp(tag, "gres") == 0 &&
	    ei_decode_string(t, &i, buf) == 0)
		harness_copy(out, cap, buf);
	smarm_dist_msg_free(m);
}

/* Have the driver make n calls of get to our counter, one after the
 * other, and wait for it to finish. */
static void erl_bench(smarm_dist_t *d, smarm_chan_t *box, smarm_dist_pid_t me,
		      int n, char *out, size_t cap)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 4);
	ei_x_encode_atom(&x, "bench");
	x_dest(&x, d, "counter", SMARM_DIST_PID_NONE);
	ei_x_encode_long(&x, n);
	x_pid(&x, d, me);
	HARNESS_EQ(smarm_dist_send_name(d, R.peer->name, "drv", x.buff,
					(size_t)x.index),
		   0);
	ei_x_free(&x);
	erl_result(box, out, cap);
}

static void erl_call(smarm_dist_t *d, smarm_chan_t *box, smarm_dist_pid_t me,
		     const char *name, smarm_dist_pid_t pid,
		     const char *cast_text, const char *text, char *out,
		     size_t cap)
{
	erl_ask(d, me, name, pid, cast_text, text);
	erl_result(box, out, cap);
}

/* ---- Erlang calls and casts libsmarm servers ---- */

static void root_serve(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	smarm_server_t *sc = NULL, *sk = NULL, *ss = NULL;
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	HARNESS_EQ(smarm_dist_mailbox(d, &box), 0);
	R.rc[1] = smarm_server_start(counter, "10", "counter", &sc);
	R.rc[2] = smarm_server_start(kv, NULL, "kv", &sk);
	R.rc[3] = smarm_server_start(shapes, NULL, "shapes", &ss);
	smarm_server_t *sp = NULL;
	HARNESS_EQ(smarm_server_start(probe, NULL, "probe", &sp), 0);
	HARNESS_EQ(smarm_dist_serve(d, "probe", probe), 0);
	smarm_server_t *sd = NULL;
	HARNESS_EQ(smarm_server_start(door, "code=42", "door", &sd), 0);
	HARNESS_EQ(smarm_dist_serve(d, "door", door), 0);
	R.rc[4] = smarm_dist_serve(d, "counter", counter);
	R.rc[5] = smarm_dist_serve(d, "kv", kv);
	R.rc[6] = smarm_dist_serve(d, "shapes", shapes);
	R.rc[7] = smarm_dist_serve(d, "kv", kv); /* twice: EEXIST */
	R.rc[8] = smarm_dist_serve(d, "", kv);
	R.rc[9] = smarm_dist_serve(d, "x", NULL);
	R.rc[10] = smarm_dist_unserve(d, "nothing");
	R.rc[11] = smarm_dist_connect(d, R.peer->name);
	smarm_dist_pid_t me, cpid;
	smarm_pid_t lp;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	HARNESS_EQ(smarm_server_pid(sc, &lp), 0);
	HARNESS_EQ(smarm_dist_self(d, lp, &cpid), 0);
	smarm_dist_pid_t none = SMARM_DIST_PID_NONE;
	static const struct {
		const char *name; /* NULL: by the counter's pid */
		const char *cast, *call;
	} cases[] = {
		{ "counter", NULL, "{add, 5}." },		    /* 0: 15 */
		{ "counter", NULL, "get." },			    /* 1: 15 */
		{ "counter", NULL, "{get}." },			    /* 2: 15 */
		{ NULL, NULL, "{add, -20}." },			    /* 3: -5 */
		{ "counter", "{inc, 7}.", "get." },		    /* 4: 2 */
		{ NULL, "{reset}.", "get." },			    /* 5: 10 */
		{ "counter", NULL, "{nope, 1}." },		    /* 6 */
		{ "counter", NULL, "{add, <<\"x\">>}." },	    /* 7 */
		{ "counter", NULL, "{add, 1, 2}." },		    /* 8 */
		{ "counter", NULL, "{add, 1 bsl 63}." },	    /* 9 */
		{ "counter", NULL, "{inc, 1}." },		    /* 10 */
		{ "counter", NULL, "42." },			    /* 11 */
		{ "kv", NULL, "{put, <<\"k\">>, <<1,2,0,3>>}." },   /* 12 */
		{ "kv", NULL, "{get, \"k\"}." },		    /* 13 */
		{ "kv", NULL, "size." },			    /* 14 */
		{ "kv", NULL, "{put, <<\"a\",0>>, <<>>}." },	    /* 15 */
		{ "shapes", NULL, "{move, {3, 2.5}, 2}." },	    /* 16 */
		{ "shapes", NULL, "{flag, true, 1.5}." },	    /* 17 */
		{ "shapes", NULL, "{flag, true, 2}." },		    /* 18 */
		{ "shapes", NULL, "label." },			    /* 19 */
		{ "shapes", "{put, {7, true}}.", "last." },	    /* 20 */
		{ "shapes", NULL, "{move, {3, 2.5}, 300}." },	    /* 21 */
		{ "nobody", NULL, "get." },			    /* 22 */
		{ "shapes", NULL, "{mix, {1, 0.5, 3, Me}}." },	    /* 23 */
		{ "shapes", NULL, "{mix, {1, 0.5, 3, self()}}." },  /* 24 */
		{ "probe", NULL, "{err, 7}." },			    /* 25 */
		{ "probe", NULL, "{echo, 16#7fffffffffffffff}." },  /* 26 */
		{ "probe", NULL, "{echo, -16#8000000000000000}." }, /* 27 */
		{ "probe", NULL, "{echo, -16#8000000000000001}." }, /* 28 */
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		erl_call(d, box, me, cases[k].name,
			 cases[k].name != NULL ? none : cpid, cases[k].cast,
			 cases[k].call, R.text[k], sizeof R.text[k]);
	}
	/* A gen_statem (door): a call answered later (when_unlocked while
	 * Locked) waits while other requests are served. */
	erl_call(d, box, me, "door", none, NULL, "get_state.", R.text[29],
		 sizeof R.text[29]);
	erl_call(d, box, me, "door", none, "lock.", "get_state.", R.text[30],
		 sizeof R.text[30]);
	erl_ask(d, me, "door", none, NULL, "when_unlocked.");
	erl_call(d, box, me, "door", none, NULL, "knocks.", R.text[31],
		 sizeof R.text[31]);
	erl_call(d, box, me, "door", none, "{unlock, 42}.", "get_state.",
		 R.text[32], sizeof R.text[32]);
	erl_result(box, R.text[33], sizeof R.text[33]);
	/* Round trips, logged (not asserted): BENCH calls from Erlang. */
	erl_bench(d, box, me, BENCH, R.text[34], sizeof R.text[34]);
	fprintf(stderr, "# %d gen_server:call from erl to libsmarm: %s us\n",
		BENCH, R.text[34]);
	R.rc[12] = smarm_dist_unserve(d, "kv");
	R.rc[13] = smarm_dist_unserve(d, "kv");
	R.rc[14] = smarm_dist_stop(d);
	HARNESS_EQ(smarm_server_shutdown(sc, MS(10000), NULL), 0);
	HARNESS_EQ(smarm_server_shutdown(sk, MS(10000), NULL), 0);
	HARNESS_EQ(smarm_server_shutdown(ss, MS(10000), NULL), 0);
	HARNESS_EQ(smarm_server_shutdown(sp, MS(10000), NULL), 0);
	smarm_server_free(sp);
	HARNESS_EQ(smarm_server_shutdown(sd, MS(10000), NULL), 0);
	smarm_server_free(sd);
	smarm_server_free(sc);
	smarm_server_free(sk);
	smarm_server_free(ss);
	harness_chan_drop(box);
}

START_TEST(test_dist_gen_erlang_calls_and_casts_libsmarm_servers)
{
	struct peer p = { 0 };
	run_with_peer(&p, "gs", root_serve);
	ck_assert_int_eq(R.rc[0], 0);
	for (int i = 1; i <= 6; i++)
		ck_assert_int_eq(R.rc[i], 0);
	ck_assert_int_eq(R.rc[7], SMARM_EEXIST);
	ck_assert_int_eq(R.rc[8], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[9], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[10], SMARM_ENOENT);
	ck_assert_int_eq(R.rc[11], 0);
	ck_assert_str_eq(R.text[0], "15");
	ck_assert_str_eq(R.text[1], "15");
	ck_assert_str_eq(R.text[2], "15");
	ck_assert_str_eq(R.text[3], "-5");
	ck_assert_str_eq(R.text[4], "2");
	ck_assert_str_eq(R.text[5], "10");
	ck_assert_str_eq(R.text[6], "{error,{unknown_op,nope}}");
	ck_assert_str_eq(R.text[7], "{error,badarg}");
	ck_assert_str_eq(R.text[8], "{error,badarg}");
	ck_assert_str_eq(R.text[9], "{error,badarg}");
	ck_assert_str_eq(R.text[10], "{error,{not_a_call,inc}}");
	ck_assert_str_eq(R.text[11], "{error,badarg}");
	ck_assert_str_eq(R.text[12], "true");
	ck_assert_str_eq(R.text[13], "<<1,2,0,3>>");
	ck_assert_str_eq(R.text[14], "1");
	ck_assert_str_eq(R.text[15], "{error,badarg}"); /* a str with NUL */
	ck_assert_str_eq(R.text[16], "{6,5}");
	ck_assert_str_eq(R.text[17], "15");
	ck_assert_str_eq(R.text[18], "20"); /* an integer for an f32 */
	ck_assert_str_eq(R.text[19], "<<\"shapes\">>");
	ck_assert_str_eq(R.text[20], "{7,true}");
	ck_assert_str_eq(R.text[21], "{error,badarg}"); /* 300: no i8 */
	ck_assert_msg(strncmp(R.text[22], "{'EXIT',{noproc,", 16) == 0,
		      "unserved name: %s", R.text[22]);
	ck_assert_msg(strncmp(R.text[23], "{2,1.0,2,<", 10) == 0,
		      "mix with our pid: %s", R.text[23]);
	ck_assert_str_eq(R.text[24], "{error,badarg}"); /* not our pid */
	ck_assert_str_eq(R.text[25], "{error,7}");
	ck_assert_str_eq(R.text[26], "9223372036854775807");
	ck_assert_str_eq(R.text[27], "-9223372036854775808");
	ck_assert_str_eq(R.text[28], "{error,badarg}");
	ck_assert_str_eq(R.text[29], "0"); /* Closed */
	ck_assert_str_eq(R.text[30], "2"); /* Locked */
	ck_assert_str_eq(R.text[31], "0"); /* knocks, while one waits */
	/* Unlocked: the get_state and the waiting when_unlocked, in either
	 * order. */
	ck_assert_str_eq(R.text[32], "0");
	ck_assert_str_eq(R.text[33], "0");
	ck_assert_msg(atol(R.text[34]) > 0, "bench: %s", R.text[34]);
	ck_assert_int_eq(R.rc[12], 0);
	ck_assert_int_eq(R.rc[13], SMARM_ENOENT);
	ck_assert_int_eq(R.rc[14], 0);
}
END_TEST

/* ---- libsmarm calls and casts an Erlang gen_server ---- */

/* Request term from an ei format ("{add,2,3}"). */
static void req(ei_x_buff *x, const char *fmt)
{
	ei_x_new_with_version(x);
	HARNESS_EQ(ei_x_format_wo_ver(x, fmt), 0);
}

/* A reply message's term printed into out (and the message freed). */
static void print_reply(smarm_dist_msg_t *m, char *out, size_t cap)
{
	snprintf(out, cap, "(none)");
	if (m == NULL)
		return;
	const void *t;
	size_t len;
	smarm_dist_msg_term(m, &t, &len);
	int i = 1;
	char *s = NULL;
	if (ei_s_print_term(&s, t, &i) >= 0 && s != NULL)
		snprintf(out, cap, "%s", s);
	free(s);
	smarm_dist_msg_free(m);
}

/* smarm_dist_call_name to tgs with request fmt: its status; its reply
 * printed into out. */
static int call_tgs(smarm_dist_t *d, const char *name, const char *fmt,
		    uint64_t timeout, char *out)
{
	ei_x_buff x;
	req(&x, fmt);
	smarm_dist_msg_t *m = NULL;
	int rc = smarm_dist_call_name(d, R.peer->name, name, x.buff,
				      (size_t)x.index, timeout, &m);
	ei_x_free(&x);
	print_reply(m, out, 128);
	return rc;
}

static void root_call(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	uint64_t long_to = MS(30000) * harness_time_scale();
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	HARNESS_EQ(smarm_dist_mailbox(d, &box), 0);
	smarm_dist_pid_t me;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);

	/* By name. */
	R.rc[1] = call_tgs(d, "tgs", "{add,2,3}", long_to, R.text[1]);
	/* By pid: ask the driver for it. */
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "whereis");
	ei_x_encode_atom(&x, "tgs");
	x_pid(&x, d, me);
	HARNESS_EQ(smarm_dist_send_name(d, R.peer->name, "drv", x.buff,
					(size_t)x.index),
		   0);
	ei_x_free(&x);
	smarm_dist_pid_t tgs = SMARM_DIST_PID_NONE;
	smarm_dist_msg_t *m = recv_box(box);
	if (m != NULL) {
		const void *t;
		size_t len, used;
		smarm_dist_msg_term(m, &t, &len);
		int i = 0, ver, ar;
		char tag[MAXATOMLEN_UTF8];
		if (ei_decode_version(t, &i, &ver) == 0 &&
		    ei_decode_tuple_header(t, &i, &ar) == 0 &&
		    ei_decode_atom(t, &i, tag) == 0)
			R.rc[2] = smarm_dist_pid_decode(d, (const char *)t + i,
							len - (size_t)i, &used,
							&tgs);
		smarm_dist_msg_free(m);
	}
	ei_x_buff q;
	req(&q, "get");
	m = NULL;
	R.rc[3] = smarm_dist_call(d, tgs, q.buff, (size_t)q.index, long_to, &m);
	print_reply(m, R.text[3], sizeof R.text[3]);
	/* A cast, then a call that sees it. */
	ei_x_buff c;
	req(&c, "{set,42}");
	R.rc[4] = smarm_dist_cast_name(d, R.peer->name, "tgs", c.buff,
				       (size_t)c.index);
	R.rc[5] = call_tgs(d, "tgs", "get", long_to, R.text[5]);
	ei_x_free(&c);
	req(&c, "{set,43}");
	R.rc[6] = smarm_dist_cast(d, tgs, c.buff, (size_t)c.index);
	ei_x_free(&c);
	R.rc[7] = call_tgs(d, "tgs", "get", long_to, R.text[7]);

	/* A name nobody holds: noproc, at once. */
	uint64_t t0 = smarm_now_ns();
	R.rc[8] = call_tgs(d, "nobody", "get", long_to, R.text[8]);
	R.ns[0] = smarm_now_ns() - t0;

	/* No answer: the timeout; the late reply goes nowhere. */
	t0 = smarm_now_ns();
	R.rc[9] = call_tgs(d, "tgs", "hold", MS(300), R.text[9]);
	R.ns[1] = smarm_now_ns() - t0;
	R.rc[10] = call_tgs(d, "tgs", "release", long_to, R.text[10]);
	R.rc[11] = call_tgs(d, "tgs", "{add,1,1}", long_to, R.text[11]);
	smarm_dist_msg_t *late = NULL;
	R.rc[12] = smarm_chan_try_recv(box, &late);
	smarm_dist_msg_free(late);

	/* Argument errors. */
	R.rc[13] = smarm_dist_call_name(NULL, R.peer->name, "tgs", q.buff,
					(size_t)q.index, long_to, &m);
	R.rc[14] = smarm_dist_call_name(d, R.node, "tgs", q.buff,
					(size_t)q.index, long_to, &m);
	R.rc[15] = smarm_dist_call_name(d, R.peer->name, "", q.buff,
					(size_t)q.index, long_to, &m);
	R.rc[16] = smarm_dist_call_name(d, R.peer->name, "tgs", q.buff,
					(size_t)q.index - 1, long_to, &m);
	R.rc[17] = smarm_dist_call(d, me, q.buff, (size_t)q.index, long_to, &m);
	R.rc[18] = smarm_dist_cast(d, me, q.buff, (size_t)q.index);
	R.rc[19] =
		smarm_dist_cast_name(d, "bad", "tgs", q.buff, (size_t)q.index);
	R.rc[20] = m == NULL;
	/* A node that is not there: noconnection. */
	R.rc[21] = smarm_dist_call_name(d, "nosuchnode@localhost", "x", q.buff,
					(size_t)q.index, long_to, &m);

	/* Round trips, logged (not asserted). */
	t0 = smarm_now_ns();
	int fails = 0;
	for (int k = 0; k < BENCH; k++) {
		m = NULL;
		fails +=
			smarm_dist_call_name(d, R.peer->name, "tgs", q.buff,
					     (size_t)q.index, long_to, &m) != 0;
		smarm_dist_msg_free(m);
	}
	R.rc[25] = fails;
	fprintf(stderr, "# %d smarm_dist_call from libsmarm to erl: %llu us\n",
		BENCH, (unsigned long long)(smarm_now_ns() - t0) / 1000);

	/* The server dies in the call: its reason. */
	R.rc[22] = call_tgs(d, "tgs", "die", long_to, R.text[22]);
	/* And its pid is gone now: noproc. */
	m = NULL;
	R.rc[23] =
		smarm_dist_call(d, tgs, q.buff, (size_t)q.index, long_to, &m);
	smarm_dist_msg_free(m);
	ei_x_free(&q);
	R.rc[24] = smarm_dist_stop(d);
	harness_chan_drop(box);
}

START_TEST(test_dist_gen_libsmarm_calls_and_casts_erlang_gen_server)
{
	struct peer p = { 0 };
	run_with_peer(&p, "gc", root_call);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_str_eq(R.text[1], "5");
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_int_eq(R.rc[3], 0);
	ck_assert_str_eq(R.text[3], "0");
	ck_assert_int_eq(R.rc[4], 0);
	ck_assert_int_eq(R.rc[5], 0);
	ck_assert_str_eq(R.text[5], "42");
	ck_assert_int_eq(R.rc[6], 0);
	ck_assert_int_eq(R.rc[7], 0);
	ck_assert_str_eq(R.text[7], "43");
	ck_assert_int_eq(R.rc[8], SMARM_ENOPROC);
	ck_assert_str_eq(R.text[8], "(none)");
	ck_assert_msg(R.ns[0] < MS(10000) * harness_time_scale(),
		      "noproc took %llu ns", (unsigned long long)R.ns[0]);
	ck_assert_int_eq(R.rc[9], SMARM_ETIMEDOUT);
	ck_assert_msg(R.ns[1] >= MS(300), "timed out after %llu ns",
		      (unsigned long long)R.ns[1]);
	ck_assert_int_eq(R.rc[10], 0);
	ck_assert_str_eq(R.text[10], "released");
	ck_assert_int_eq(R.rc[11], 0);
	ck_assert_str_eq(R.text[11], "2");
	ck_assert_int_eq(R.rc[12], SMARM_EAGAIN); /* nothing lingered */
	ck_assert_int_eq(R.rc[13], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[14], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[15], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[16], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[17], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[18], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[19], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[20], 1);
	ck_assert_int_eq(R.rc[21], SMARM_ENOCONN);
	ck_assert_int_eq(R.rc[22], SMARM_EDOWN);
	ck_assert_str_eq(R.text[22], "boom");
	ck_assert_int_eq(R.rc[23], SMARM_ENOPROC);
	ck_assert_int_eq(R.rc[24], 0);
	ck_assert_int_eq(R.rc[25], 0);
}
END_TEST

/* ---- handle_info: plain messages to served servers ---- */

/* Have the driver send each term of the list info_text to dest with
 * `!`, then call it with text; the answer comes to me (erl_result). */
static void erl_info_call(smarm_dist_t *d, smarm_dist_pid_t me,
			  const char *name, smarm_dist_pid_t pid,
			  const char *info_text, const char *text)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 5);
	ei_x_encode_atom(&x, "info_call");
	x_dest(&x, d, name, pid);
	ei_x_encode_string(&x, info_text);
	ei_x_encode_string(&x, text);
	x_pid(&x, d, me);
	HARNESS_EQ(smarm_dist_send_name(d, R.peer->name, "drv", x.buff,
					(size_t)x.index),
		   0);
	ei_x_free(&x);
}

static void root_info(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	smarm_server_t *sc = NULL, *sp = NULL;
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	HARNESS_EQ(smarm_dist_mailbox(d, &box), 0);
	HARNESS_EQ(smarm_server_start(counter, "10", "counter", &sc), 0);
	HARNESS_EQ(smarm_server_start(probe, NULL, "probe", &sp), 0);
	HARNESS_EQ(smarm_dist_serve(d, "counter", counter), 0);
	HARNESS_EQ(smarm_dist_serve(d, "probe", probe), 0);
	smarm_dist_pid_t me, ppid, none = SMARM_DIST_PID_NONE;
	smarm_pid_t lp;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	HARNESS_EQ(smarm_server_pid(sp, &lp), 0);
	HARNESS_EQ(smarm_dist_self(d, lp, &ppid), 0);
	(void)probe_events_read();
	/* The probe: {note, 5} is its info note(i64); the rest fit no
	 * info operation's arguments and go to dist_info(bytes) raw. The
	 * call after them returns after they were handled (one queue). */
	erl_info_call(d, me, "probe", none,
		      "[{note, 5}, {note, <<\"x\">>}, hello, note].",
		      "{sum, 0}.");
	erl_result(box, R.text[0], sizeof R.text[0]);
	snprintf(R.text[1], sizeof R.text[1], "%s", probe_events_read());
	/* By pid, as Pid ! Msg. */
	erl_info_call(d, me, NULL, ppid, "[{note, 6}].", "{sum, 0}.");
	erl_result(box, R.text[2], sizeof R.text[2]);
	snprintf(R.text[3], sizeof R.text[3], "%s", probe_events_read());
	/* The counter has no info operation and no dist mailbox: the
	 * message is dropped, logged and counted; the server is intact. */
	int64_t before = harness_actor_stat(SMARM_STAT_DIST_INFO_DROPPED);
	erl_info_call(d, me, "counter", none, "[hello, {inc, 1}].", "get.");
	erl_result(box, R.text[4], sizeof R.text[4]);
	R.ns[0] = (uint64_t)(harness_actor_stat(SMARM_STAT_DIST_INFO_DROPPED) -
			     before);
	R.rc[1] = smarm_dist_stop(d);
	HARNESS_EQ(smarm_server_shutdown(sc, MS(10000), NULL), 0);
	HARNESS_EQ(smarm_server_shutdown(sp, MS(10000), NULL), 0);
	smarm_server_free(sc);
	smarm_server_free(sp);
	harness_chan_drop(box);
}

START_TEST(test_dist_gen_plain_messages_reach_handle_info)
{
	struct peer p = { 0 };
	run_with_peer(&p, "gi", root_info);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_str_eq(R.text[0], "0");
	/* term_to_binary: {note, <<"x">>} 15 bytes, hello 8, note 7. */
	ck_assert_str_eq(R.text[1], "note:5 dist_info:15:131 dist_info:8:131 "
				    "dist_info:7:131");
	ck_assert_str_eq(R.text[2], "0");
	ck_assert_str_eq(R.text[3], "note:6");
	ck_assert_str_eq(R.text[4], "10"); /* {inc, 1} was no cast */
	ck_assert_int_eq(R.ns[0], 2);
	ck_assert_msg(harness_log_count("a message to served server counter "
					"dropped: its behaviour has no info "
					"operation") > 0,
		      "no log line for the drop");
	ck_assert_int_eq(R.rc[1], 0);
}
END_TEST

/* ---- what a served call costs ---- */

#define QUIET_CALLS 2000

static void root_quiet(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	smarm_server_t *sc = NULL;
	smarm_snapshot_t *s0 = NULL, *s1 = NULL;
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	HARNESS_EQ(smarm_dist_mailbox(d, &box), 0);
	HARNESS_EQ(smarm_server_start(counter, "10", "counter", &sc), 0);
	HARNESS_EQ(smarm_dist_serve(d, "counter", counter), 0);
	smarm_dist_pid_t me;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	/* The connection, its reader and the watcher's first work. */
	erl_bench(d, box, me, 100, R.text[0], sizeof R.text[0]);
	HARNESS_EQ(smarm_snapshot_take(NULL, &s0), 0);
	int64_t spawned = harness_actor_stat(SMARM_STAT_SPAWNED);
	erl_bench(d, box, me, QUIET_CALLS, R.text[1], sizeof R.text[1]);
	R.ns[0] = (uint64_t)(harness_actor_stat(SMARM_STAT_SPAWNED) - spawned);
	HARNESS_EQ(smarm_snapshot_take(NULL, &s1), 0);
	/* Which actors that were there before ran about once a call or
	 * more (the per-call workers are new: not counted). */
	size_t busy = 0;
	for (size_t i = 0;
	     s0 != NULL && s1 != NULL && i < smarm_snapshot_count(s1); i++) {
		smarm_actor_info_t a = { .size = sizeof a }, b = a;
		size_t k;
		if (smarm_snapshot_get(s1, i, &b) != 0 ||
		    smarm_snapshot_find(s0, b.pid, &k) != 0 ||
		    smarm_snapshot_get(s0, k, &a) != 0)
			continue;
		uint64_t runs = b.runs - a.runs;
		fprintf(stderr, "# actor %llu (%s): %llu runs in %d calls\n",
			(unsigned long long)b.pid.id, b.name,
			(unsigned long long)runs, QUIET_CALLS);
		if (runs >= QUIET_CALLS / 2)
			busy++;
	}
	R.rc[1] = (int)busy;
	smarm_snapshot_free(s0);
	smarm_snapshot_free(s1);
	R.rc[2] = smarm_dist_stop(d);
	HARNESS_EQ(smarm_server_shutdown(sc, MS(10000), NULL), 0);
	smarm_server_free(sc);
	harness_chan_drop(box);
}

/*
 * A call from Erlang (MONITOR_P, the request, DEMONITOR_P: gen:do_call)
 * runs the connection's reader and the server, and no other actor of
 * the node: the monitor's record reaches the watcher only if a Down
 * needs it (watch.c INV-5). Until then the watcher ran at every call,
 * an actor woken on another worker as often as not. And no actor is
 * made for it: the server writes its answer to the connection itself
 * (gen.c INV-5); until then an actor was spawned per call to wait for
 * the answer.
 */
START_TEST(test_dist_gen_served_call_wakes_only_reader_and_server)
{
	struct peer p = { 0 };
	R.stats = true;
	run_with_peer(&p, "gq", root_quiet);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_msg(atol(R.text[1]) > 0, "bench: %s", R.text[1]);
	ck_assert_int_le(R.rc[1], 2); /* the reader, the server */
	ck_assert_int_ge(R.rc[1], 1);
	ck_assert_int_eq(R.ns[0], 0); /* actors spawned in the calls */
	ck_assert_int_eq(R.rc[2], 0);
}
END_TEST

/* ---- answers the server does not write itself ---- */

/* Wait (60 s, scaled) until the probe logs an event with what in it. */
static bool probe_wait(const char *what)
{
	uint64_t until =
		smarm_now_ns() + MS(60000) * (uint64_t)harness_time_scale();
	while (smarm_now_ns() < until) {
		if (strstr(probe_events_read(), what) != NULL)
			return true;
		smarm_actor_sleep(MS(2));
	}
	return false;
}

/* Have the driver call probe's later (answered with a token) and wait
 * until the probe holds the token. */
static void erl_later(smarm_dist_t *d, smarm_dist_pid_t me)
{
	erl_ask(d, me, "probe", SMARM_DIST_PID_NONE, NULL, "later.");
	HARNESS_CHECK(probe_wait("later:0:"));
}

static void root_later(void *arg)
{
	(void)arg;
	smarm_dist_t *d = NULL;
	smarm_chan_t *box = NULL;
	smarm_server_t *sp = NULL;
	smarm_value_t seven = { .type = SMARM_T_I64, .v.i = 7 };
	R.rc[0] = smarm_dist_start(&d, R.node, R.cookie, "127.0.0.1", 0);
	if (R.rc[0] != 0)
		return;
	HARNESS_EQ(smarm_dist_mailbox(d, &box), 0);
	HARNESS_EQ(smarm_server_start(probe, NULL, "probe", &sp), 0);
	HARNESS_EQ(smarm_dist_serve(d, "probe", probe), 0);
	smarm_dist_pid_t me;
	HARNESS_EQ(smarm_dist_self(d, smarm_actor_self(), &me), 0);
	(void)probe_events_read();
	/* Answered with smarm_reply (by the server, in a cast). */
	erl_later(d, me);
	HARNESS_EQ(smarm_server_cast(sp, "answer", &seven, 1), 0);
	erl_result(box, R.text[0], sizeof R.text[0]);
	/* Dropped with smarm_reply_drop. */
	erl_later(d, me);
	HARNESS_EQ(smarm_server_cast(sp, "drop", NULL, 0), 0);
	erl_result(box, R.text[1], sizeof R.text[1]);
	/* Still pending when the server ends (its end answers it). */
	smarm_pid_t gone;
	smarm_dist_pid_t gone_d;
	HARNESS_EQ(smarm_server_pid(sp, &gone), 0);
	HARNESS_EQ(smarm_dist_self(d, gone, &gone_d), 0);
	erl_later(d, me);
	HARNESS_EQ(smarm_server_shutdown(sp, MS(10000), NULL), 0);
	smarm_server_free(sp);
	/* Its token, answered by the end, is freed by a drop that answers
	 * nothing more (never answered nor dropped, it would leak). */
	R.rc[2] = smarm_reply_drop(probe_token());
	erl_result(box, R.text[2], sizeof R.text[2]);
	/* A call to the ended server's pid (its monitor: noproc, the
	 * actor having ended), and by its name while nobody holds it, a
	 * request it would refuse too: no answer is written, the caller's
	 * monitor says noproc, as a call to a dead gen_server does. */
	erl_call(d, box, me, NULL, gone_d, NULL, "{echo, 4}.", R.text[4],
		 sizeof R.text[4]);
	erl_call(d, box, me, "probe", SMARM_DIST_PID_NONE, NULL, "{echo, 5}.",
		 R.text[5], sizeof R.text[5]);
	erl_call(d, box, me, "probe", SMARM_DIST_PID_NONE, NULL, "{nope, 6}.",
		 R.text[6], sizeof R.text[6]);
	/* The server again; still served by name. */
	HARNESS_EQ(smarm_server_start(probe, NULL, "probe", &sp), 0);
	erl_call(d, box, me, "probe", SMARM_DIST_PID_NONE, NULL, "{echo, 3}.",
		 R.text[3], sizeof R.text[3]);
	/* Pending when the distribution stops: answered after the stop,
	 * the answer is dropped (the route and its gate freed: ASan and
	 * the leak check see it; the connection is gone, nothing to read). */
	erl_later(d, me);
	R.rc[1] = smarm_dist_stop(d);
	HARNESS_EQ(smarm_server_cast(sp, "answer", &seven, 1), 0);
	HARNESS_CHECK(probe_wait("answer:"));
	HARNESS_EQ(smarm_server_shutdown(sp, MS(10000), NULL), 0);
	smarm_server_free(sp);
	harness_chan_drop(box);
}

/*
 * A served call the server answers later: with a token answered on
 * another path than its own return (smarm_reply, smarm_reply_drop), the
 * answer goes through the watcher; one the server's end leaves is not
 * answered, so the caller exits with the server's reason (its monitor),
 * as a gen_server's caller does; once the distribution stops an answer
 * is dropped, and nothing leaks (ASan).
 */
START_TEST(test_dist_gen_answer_later_drop_end_and_stop)
{
	struct peer p = { 0 };
	run_with_peer(&p, "gl", root_later);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_str_eq(R.text[0], "7");
	ck_assert_str_eq(R.text[1], "{error,edown}");
	/* As gen_server's: the caller's monitor, the server's reason. */
	ck_assert_msg(strncmp(R.text[2], "{'EXIT',{shutdown,{gen_server,call,",
			      35) == 0,
		      "pending at the end: %s", R.text[2]);
	ck_assert_int_eq(R.rc[2], 0);
	ck_assert_msg(strncmp(R.text[4], "{'EXIT',{noproc,{gen_server,call,",
			      33) == 0,
		      "an ended server's pid: %s", R.text[4]);
	ck_assert_msg(strncmp(R.text[5], "{'EXIT',{noproc,{gen_server,call,",
			      33) == 0,
		      "a served name nobody holds: %s", R.text[5]);
	ck_assert_msg(strncmp(R.text[6], "{'EXIT',{noproc,{gen_server,call,",
			      33) == 0,
		      "a bad request to nobody: %s", R.text[6]);
	ck_assert_str_eq(R.text[3], "3");
	ck_assert_int_eq(R.rc[1], 0);
}
END_TEST

Suite *smarm_test_dist_gen_suite(void)
{
	Suite *s = suite_create("dist_gen");
	TCase *tc = tcase_create("erl");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc,
		       test_dist_gen_erlang_calls_and_casts_libsmarm_servers);
	tcase_add_test(
		tc, test_dist_gen_libsmarm_calls_and_casts_erlang_gen_server);
	tcase_add_test(tc, test_dist_gen_plain_messages_reach_handle_info);
	tcase_add_test(tc,
		       test_dist_gen_served_call_wakes_only_reader_and_server);
	tcase_add_test(tc, test_dist_gen_answer_later_drop_end_and_stop);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return erl_suite_main(smarm_test_dist_gen_suite());
}
