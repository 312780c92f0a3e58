/* SPDX-License-Identifier: MIT */
/*
 * supervision_tree.c - a complete supervision tree in C
 * (docs/embedding.md, "OTP layer: a supervision tree, step by step").
 *
 *   top (one_for_one)
 *   +-- "store"     a key-value server, registered as "store"
 *   +-- "pipeline"  a nested supervisor (rest_for_one)
 *       +-- "parser"   forwards what it is sent to "counter" (so the
 *       |              counter sees it in order); a negative number
 *       |              is a bug: it crashes
 *       +-- "counter"  keeps the running total of what it was sent
 *
 * Every worker registers a name and publishes a mailbox, then reports
 * ready (smarm_sup_ready), so the next sibling, and the root, can reach
 * it by name (smarm_send_name) as soon as smarm_sup_start returns. The
 * root then uses the tree, makes "parser" crash, watches rest_for_one
 * restart "parser" and "counter" (the total starts again from 0) while
 * "store" keeps its pid and its data, and finally shuts the tree down:
 * the children stop in reverse start order, the nested tree first.
 * Exits 0 when every check passed.
 */
#include <smarm/smarm.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr,                                        \
				"supervision_tree: check failed: %s\n", #c);   \
			failures++;                                            \
		}                                                              \
	} while (0)

/* ---- messages ---- */

enum { OP_PUT = 1, OP_GET, OP_ADD, OP_TOTAL };

struct req {
	smarm_pid_t from; /* where a reply goes (OP_GET, OP_TOTAL) */
	int op;
	int key, val;
};

/* Requests to the workers; replies (an int) to whoever asked. */
static const smarm_msgtype_t *req_type, *reply_type;

/* ---- the end of each worker, in order (the shutdown's order) ---- */

static const char *ended[8];
static atomic_int nended;

static void note_end(void *name)
{
	int i = atomic_fetch_add(&nended, 1);
	if (i < 8)
		ended[i] = name;
}

/* A cleanup handler: give up the worker's receiver of its inbox. */
static void inbox_free(void *inbox)
{
	smarm_chan_receiver_free(inbox);
}

/*
 * What every worker does first: a mailbox for requests, freed however
 * the worker ends (a cleanup handler), its name, a cleanup handler that
 * notes its end, then the readiness report the supervisor waits for
 * before it starts the next child.
 */
static smarm_chan_t *worker_setup(const char *name)
{
	smarm_chan_t *inbox = NULL;
	CHECK(smarm_chan_alloc(&inbox, sizeof(struct req), NULL) == 0);
	CHECK(smarm_cleanup_push(inbox_free, inbox) == 0);
	CHECK(smarm_mailbox_publish(req_type, inbox) == 0);
	CHECK(smarm_chan_sender_free(inbox) == 0); /* the runtime keeps one */
	CHECK(smarm_register(name, NULL) == 0);
	CHECK(smarm_cleanup_push(note_end, (void *)name) == 0);
	CHECK(smarm_sup_ready() == 0);
	return inbox;
}

/* "store": OP_PUT key val, OP_GET key -> val (0 if unset). */
static void store_main(void *arg)
{
	int vals[16] = { 0 };
	smarm_chan_t *inbox = worker_setup("store");
	struct req r;
	(void)arg;
	while (smarm_chan_recv(inbox, &r) == 0) {
		int k = r.key & 15;
		if (r.op == OP_PUT)
			vals[k] = r.val;
		else if (r.op == OP_GET)
			CHECK(smarm_send(r.from, reply_type, &vals[k]) == 0);
	}
	/* Not reached: a shutdown ends it inside the receive. */
}

/* "parser": every request goes on to "counter"; a negative val crashes. */
static void parser_main(void *arg)
{
	smarm_chan_t *inbox = worker_setup("parser");
	struct req r;
	(void)arg;
	while (smarm_chan_recv(inbox, &r) == 0) {
		if (r.val < 0)
			smarm_actor_crash(42); /* the bug */
		CHECK(smarm_send_name("counter", req_type, &r) == 0);
	}
}

/* "counter": OP_ADD val adds, OP_TOTAL -> the total so far. */
static void counter_main(void *arg)
{
	smarm_chan_t *inbox = worker_setup("counter");
	int total = 0;
	struct req r;
	(void)arg;
	while (smarm_chan_recv(inbox, &r) == 0) {
		if (r.op == OP_ADD)
			total += r.val;
		else if (r.op == OP_TOTAL)
			CHECK(smarm_send(r.from, reply_type, &total) == 0);
	}
}

/* ---- the tree ---- */

static smarm_sup_spec_t *pipeline_spec; /* outlives the top supervisor */

/* "pipeline": a supervisor as a child; it reports ready once its own
 * children have. */
static void pipeline_main(void *arg)
{
	(void)arg;
	CHECK(smarm_register("pipeline", NULL) == 0);
	(void)smarm_sup_run(pipeline_spec); /* returns only if it failed */
	CHECK(!"the pipeline supervisor could not start");
}

static smarm_sup_spec_t *build_specs(void)
{
	smarm_sup_spec_t *top = NULL;
	uint64_t second = 1000000000ull;

	CHECK(smarm_sup_spec_alloc(&pipeline_spec) == 0);
	CHECK(smarm_sup_spec_set_strategy(pipeline_spec,
					  SMARM_SUP_REST_FOR_ONE) == 0);
	CHECK(smarm_sup_spec_add_child(pipeline_spec, "parser", parser_main,
				       NULL, SMARM_SUP_PERMANENT, second) == 0);
	CHECK(smarm_sup_spec_add_child(pipeline_spec, "counter", counter_main,
				       NULL, SMARM_SUP_PERMANENT, second) == 0);
	CHECK(smarm_sup_spec_set_child_ready(pipeline_spec, "parser", second) ==
	      0);
	CHECK(smarm_sup_spec_set_child_ready(pipeline_spec, "counter",
					     second) == 0);

	CHECK(smarm_sup_spec_alloc(&top) == 0); /* one_for_one by default */
	CHECK(smarm_sup_spec_add_child(top, "store", store_main, NULL,
				       SMARM_SUP_PERMANENT, second) == 0);
	CHECK(smarm_sup_spec_add_child(top, "pipeline", pipeline_main, NULL,
				       SMARM_SUP_PERMANENT,
				       SMARM_SUP_INFINITY) == 0);
	CHECK(smarm_sup_spec_set_child_ready(top, "store", second) == 0);
	CHECK(smarm_sup_spec_set_child_ready(top, "pipeline", second) == 0);
	return top;
}

/* ---- the root: use it, break it, shut it down ---- */

static smarm_chan_t *replies;

/* Send a request to a name and, for a question, wait for the answer. */
static int ask(const char *name, int op, int key, int val)
{
	struct req r = { smarm_actor_self(), op, key, val };
	int answer = -1;
	CHECK(smarm_send_name(name, req_type, &r) == 0);
	if (op == OP_GET || op == OP_TOTAL)
		CHECK(smarm_chan_recv_timeout(replies, &answer,
					      1000000000ull) == 0);
	return answer;
}

static smarm_pid_t whereis(const char *name)
{
	smarm_pid_t p = SMARM_PID_NONE;
	CHECK(smarm_whereis(name, &p) == 0);
	return p;
}

static void root(void *arg)
{
	smarm_sup_spec_t *spec = build_specs();
	smarm_chan_t *downs = NULL;
	smarm_pid_t top, store, parser, counter, pipeline;
	smarm_signal_t s;
	size_t specs = 0, active = 0;
	(void)arg;
	CHECK(smarm_chan_alloc(&replies, sizeof(int), NULL) == 0);
	CHECK(smarm_mailbox_publish(reply_type, replies) == 0);
	CHECK(smarm_chan_alloc(&downs, sizeof s, NULL) == 0);

	/* 1. Start: returns once every child reported ready. */
	CHECK(smarm_sup_start(spec, &top) == 0);
	smarm_sup_spec_free(spec); /* the supervisor has its own copy */
	store = whereis("store");
	parser = whereis("parser");
	counter = whereis("counter");
	pipeline = whereis("pipeline");

	/* 2. Use it by name. */
	ask("store", OP_PUT, 1, 42);
	CHECK(ask("store", OP_GET, 1, 0) == 42);
	for (int v = 1; v <= 3; v++)
		ask("parser", OP_ADD, 0, v);
	CHECK(ask("parser", OP_TOTAL, 0, 0) == 6);

	/* 3. A crash: watch "parser" end, and rest_for_one restart it and
	 * the sibling started after it. */
	CHECK(smarm_monitor(parser, downs, NULL) == 0);
	ask("parser", OP_ADD, 0, -1);
	CHECK(smarm_chan_recv_timeout(downs, &s, 1000000000ull) == 0);
	CHECK(s.how == SMARM_EXIT_CRASHED && s.reason == 42);
	/* The pipeline supervisor restarts both before it answers a
	 * request that came after its Down; ask until the new counter,
	 * registered under the same name, is there. */
	for (int tries = 0; tries < 1000; tries++) {
		smarm_pid_t p;
		CHECK(smarm_sup_count_children(pipeline, &specs, &active,
					       1000000000ull) == 0);
		if (active == 2 && smarm_whereis("counter", &p) == 0 &&
		    !smarm_pid_eq(p, counter))
			break;
		smarm_actor_sleep(1000000); /* 1 ms */
	}
	CHECK(specs == 2 && active == 2);
	CHECK(!smarm_pid_eq(whereis("parser"), parser));
	CHECK(!smarm_pid_eq(whereis("counter"), counter));
	CHECK(ask("parser", OP_TOTAL, 0, 0) == 0); /* a fresh counter */
	ask("parser", OP_ADD, 0, 5);
	CHECK(ask("parser", OP_TOTAL, 0, 0) == 5);
	/* one_for_one at the top: "store" was not touched. */
	CHECK(smarm_pid_eq(whereis("store"), store));
	CHECK(ask("store", OP_GET, 1, 0) == 42);

	/* 4. Ordered shutdown: from its parent (this actor), the top stops
	 * its children last started first, each subtree bottom up. */
	atomic_store(&nended, 0); /* only the shutdown's ends from here */
	CHECK(smarm_monitor(top, downs, NULL) == 0);
	CHECK(smarm_actor_send_exit(top, SMARM_EXIT_SHUTDOWN, 0) == 0);
	CHECK(smarm_chan_recv_timeout(downs, &s, 5000000000ull) == 0);
	CHECK(s.how == SMARM_EXIT_SHUTDOWN);
	CHECK(atomic_load(&nended) == 3);
	CHECK(ended[0] != NULL && strcmp(ended[0], "counter") == 0);
	CHECK(ended[1] != NULL && strcmp(ended[1], "parser") == 0);
	CHECK(ended[2] != NULL && strcmp(ended[2], "store") == 0);
	CHECK(smarm_whereis("store", &store) == SMARM_ENONAME);

	smarm_sup_spec_free(pipeline_spec);
	smarm_chan_sender_free(downs);
	smarm_chan_receiver_free(downs);
	smarm_chan_sender_free(replies);
	smarm_chan_receiver_free(replies);
}

int main(void)
{
	smarm_node_t *node;
	int how = -1;
	CHECK(smarm_msgtype_define("tree.req", sizeof(struct req), NULL,
				   &req_type) == 0);
	CHECK(smarm_msgtype_define("tree.reply", sizeof(int), NULL,
				   &reply_type) == 0);
	if (smarm_node_open(&node, NULL) != 0)
		return 1;
	CHECK(smarm_node_run(node, root, NULL, &how, NULL) == 0);
	CHECK(how == SMARM_EXIT_NORMAL);
	smarm_node_close(node);
	return failures == 0 ? 0 : 1;
}
