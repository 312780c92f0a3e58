/* SPDX-License-Identifier: MIT */
/*
 * named_server.c - a server found by name, replies by pid, and a pool of
 * workers behind a process group (docs/embedding.md, OTP layer).
 *
 * The "adder" server registers its name and publishes its request
 * channel as its mailbox for the "adder.req" message type. Each client
 * publishes a reply channel for "adder.reply", sends requests with
 * smarm_send_name (so it would follow a restarted server) and gets each
 * sum back from the server's smarm_send to its pid. Then three workers
 * join the group "pool" and the root dispatches jobs to it; a worker that
 * ends leaves the group, and dispatch goes to the next one. Exits 0 when
 * every check passed.
 */
#include <smarm/smarm.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "named_server: check failed: %s\n",    \
				#c);                                           \
			failures++;                                            \
		}                                                              \
	} while (0)

struct req {
	smarm_pid_t from; /* where the reply goes */
	int a, b;	  /* 0, 0: stop */
};

static const smarm_msgtype_t *req_type, *reply_type, *job_type;

static void adder(void *arg)
{
	smarm_chan_t *inbox;
	struct req r;
	(void)arg;
	CHECK(smarm_chan_alloc(&inbox, sizeof r, NULL) == 0);
	CHECK(smarm_mailbox_publish(req_type, inbox) == 0);
	CHECK(smarm_chan_sender_free(inbox) == 0); /* the runtime keeps one */
	CHECK(smarm_register("adder", NULL) == 0);
	while (smarm_chan_recv(inbox, &r) == 0 && (r.a != 0 || r.b != 0)) {
		int sum = r.a + r.b;
		CHECK(smarm_send(r.from, reply_type, &sum) == 0);
	}
	smarm_chan_receiver_free(inbox);
	/* Ending unbinds the name and drops the mailbox. */
}

static void client(void *arg)
{
	smarm_chan_t *replies;
	int base = (int)(intptr_t)arg, sum = 0;
	CHECK(smarm_chan_alloc(&replies, sizeof sum, NULL) == 0);
	CHECK(smarm_mailbox_publish(reply_type, replies) == 0);
	for (int i = 1; i <= 3; i++) {
		struct req r = { smarm_actor_self(), base, i };
		CHECK(smarm_send_name("adder", req_type, &r) == 0);
		CHECK(smarm_chan_recv(replies, &sum) == 0);
		CHECK(sum == base + i);
	}
	smarm_chan_sender_free(replies);
	smarm_chan_receiver_free(replies);
}

static atomic_int jobs_done;

static void worker(void *arg)
{
	smarm_chan_t *jobs;
	int job, quota = (int)(intptr_t)arg;
	CHECK(smarm_chan_alloc(&jobs, sizeof job, NULL) == 0);
	CHECK(smarm_mailbox_publish(job_type, jobs) == 0);
	CHECK(smarm_group_join("pool", smarm_actor_self(), NULL) == 0);
	for (int i = 0; i < quota; i++) {
		CHECK(smarm_chan_recv(jobs, &job) == 0);
		atomic_fetch_add(&jobs_done, 1);
	}
	/*
	 * Done: leave first (dispatch picks and sends in one step, so no job
	 * reaches this worker after the leave), then hand on what was queued
	 * here meanwhile. Ending would also leave, but drop those jobs.
	 */
	CHECK(smarm_group_leave("pool", smarm_actor_self()) == 0);
	while (smarm_chan_try_recv(jobs, &job) == 0)
		CHECK(smarm_group_dispatch("pool", job_type, &job) == 0);
	smarm_chan_sender_free(jobs);
	smarm_chan_receiver_free(jobs);
}

static void root(void *arg)
{
	smarm_pid_t srv, c1, c2, w[3], who;
	struct req stop = { SMARM_PID_NONE, 0, 0 };
	size_t n = 0;
	(void)arg;
	CHECK(smarm_actor_spawn(&srv, adder, NULL, NULL) == 0);
	while (smarm_whereis("adder", &who) != 0)
		smarm_actor_yield(); /* until it has registered */
	CHECK(smarm_pid_eq(who, srv));
	CHECK(smarm_actor_spawn(&c1, client, (void *)10, NULL) == 0);
	CHECK(smarm_actor_spawn(&c2, client, (void *)20, NULL) == 0);
	CHECK(smarm_actor_join(c1, NULL, NULL) == 0);
	CHECK(smarm_actor_join(c2, NULL, NULL) == 0);
	CHECK(smarm_send_name("adder", req_type, &stop) == 0);
	CHECK(smarm_actor_join(srv, NULL, NULL) == 0);
	CHECK(smarm_whereis("adder", &who) == SMARM_ENONAME);

	/* Three workers taking 1, 2 and 3 jobs, the first member first. */
	for (int i = 0; i < 3; i++)
		CHECK(smarm_actor_spawn(&w[i], worker,
					(void *)(intptr_t)(i + 1), NULL) == 0);
	while (smarm_group_members("pool", NULL, 0, &n) == 0 && n < 3)
		smarm_actor_yield();
	for (int job = 0; job < 6; job++)
		CHECK(smarm_group_dispatch("pool", job_type, &job) == 0);
	for (int i = 0; i < 3; i++)
		CHECK(smarm_actor_join(w[i], NULL, NULL) == 0);
	CHECK(smarm_group_pick("pool", &who) == SMARM_ENOMEMBER);
}

int main(void)
{
	smarm_node_t *node;
	int how = -1;
	CHECK(smarm_msgtype_define("adder.req", sizeof(struct req), NULL,
				   &req_type) == 0);
	CHECK(smarm_msgtype_define("adder.reply", sizeof(int), NULL,
				   &reply_type) == 0);
	CHECK(smarm_msgtype_define("pool.job", sizeof(int), NULL, &job_type) ==
	      0);
	if (smarm_node_open(&node, NULL) != 0)
		return 1;
	CHECK(smarm_node_run(node, root, NULL, &how, NULL) == 0);
	CHECK(how == SMARM_EXIT_NORMAL);
	CHECK(atomic_load(&jobs_done) == 6);
	smarm_node_close(node);
	return failures == 0 ? 0 : 1;
}
