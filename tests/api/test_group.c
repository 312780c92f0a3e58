/* SPDX-License-Identifier: MIT */
/*
 * test_group.c - process groups: join (idempotent, *added), leave,
 * members (join order, truncation), pick, dispatch, and the automatic
 * leave on death. Ports smarm's tests/pg.rs (a_dead_actor_vanishes_from_
 * every_group_it_joined, live_members_survive_a_peers_death; joining an
 * already dead pid, which here is refused with SMARM_ENOPROC instead of
 * evicted later). Then the storm: 4 workers on 2 cores, servers that
 * register, publish, join, unregister, leave and die while senders send
 * by name, by pid and by group dispatch: every accepted element is
 * received or destroyed exactly once, and no name, mailbox or membership
 * is left.
 */
#include "harness.h"

#include <string.h>

static const smarm_msgtype_t *int_type(void)
{
	const smarm_msgtype_t *t = NULL;
	ck_assert_int_eq(smarm_msgtype_define("grp.int", sizeof(int), NULL, &t),
			 0);
	return t;
}

/* A member: waits on its go channel (an element or a stop ends it). */
static void sleeper(void *arg)
{
	smarm_chan_t *go = arg;
	int v;
	smarm_chan_recv_timeout(go, &v, MS(10000));
}

static struct {
	int rc[40];
	bool added[4];
	smarm_pid_t m[8], p[4];
	size_t n[4];
	int got;
} G;

static void basics_root(void *arg)
{
	const smarm_msgtype_t *t = int_type();
	smarm_chan_t *go, *inbox;
	smarm_pid_t a, b, c, dead;
	smarm_pid_t buf[4];
	int v = 9, k = 0;
	(void)arg;
	smarm_chan_alloc(&go, sizeof(int), NULL);
	smarm_chan_alloc(&inbox, sizeof(int), NULL);
	smarm_actor_spawn(&a, sleeper, go, NULL);
	smarm_actor_spawn(&b, sleeper, go, NULL);
	smarm_actor_spawn(&c, sleeper, go, NULL);
	smarm_actor_spawn(&dead, sleeper, go, NULL);
	smarm_actor_stop(dead);
	smarm_actor_join(dead, NULL, NULL);
	G.rc[k++] = smarm_group_join("g1", b, &G.added[0]);	/* 0 */
	G.rc[k++] = smarm_group_join("g1", a, &G.added[1]);	/* 1 */
	G.rc[k++] = smarm_group_join("g1", b, &G.added[2]);	/* 2 again */
	G.rc[k++] = smarm_group_join("g1", c, NULL);		/* 3 */
	G.rc[k++] = smarm_group_join("g2", a, NULL);		/* 4 */
	G.rc[k++] = smarm_group_join("g2", c, NULL);		/* 5 */
	G.rc[k++] = smarm_group_join("g1", dead, NULL);		/* 6 ENOPROC */
	G.rc[k++] = smarm_group_members("g1", G.m, 8, &G.n[0]); /* 7 */
	G.rc[k++] = smarm_group_members("g1", buf, 1, &G.n[1]); /* 8 cut */
	G.p[3] = buf[0];
	G.rc[k++] =
		(int)harness_actor_stat(SMARM_STAT_REG_MEMBERSHIPS); /* 9: 5 */
	G.rc[k++] = smarm_group_pick("g1", &G.p[0]);		     /* 10: b */
	G.rc[k++] = smarm_group_dispatch("g1", t, &v); /* 11 ENOCHAN */
	/* the root joins too and dispatch reaches it once it is first */
	G.rc[k++] = smarm_group_join("g3", smarm_actor_self(), NULL); /* 12 */
	G.rc[k++] = smarm_mailbox_publish(t, inbox);		      /* 13 */
	G.rc[k++] = smarm_group_dispatch("g3", t, &v);		      /* 14 */
	G.rc[k++] = smarm_chan_try_recv(inbox, &G.got);		      /* 15 */
	/* a_dead_actor_vanishes_from_every_group_it_joined */
	smarm_actor_stop(a);
	smarm_actor_join(a, NULL, NULL);
	G.rc[k++] = smarm_group_members("g2", buf, 4, &G.n[2]); /* 16 */
	G.p[1] = buf[0];					/* c */
	G.rc[k++] =
		(int)harness_actor_stat(SMARM_STAT_REG_MEMBERSHIPS); /* 17: 4 */
	/* leave */
	G.rc[k++] = smarm_group_leave("g1", b);	       /* 18 */
	G.rc[k++] = smarm_group_leave("g1", b);	       /* 19 ENOENT */
	G.rc[k++] = smarm_group_leave("nope", b);      /* 20 ENOENT */
	G.rc[k++] = smarm_group_pick("g1", &G.p[2]);   /* 21: c */
	G.rc[k++] = smarm_group_leave("g1", c);	       /* 22 */
	G.rc[k++] = smarm_group_pick("g1", &dead);     /* 23 ENOMEMBER */
	G.rc[k++] = smarm_group_dispatch("g1", t, &v); /* 24 ENOMEMBER */
	G.rc[k++] = smarm_group_members("g1", NULL, 0, &G.n[3]); /* 25 */
	/* bad arguments */
	G.rc[k++] = smarm_group_join(NULL, b, NULL);		  /* 26 */
	G.rc[k++] = smarm_group_join("", b, NULL);		  /* 27 */
	G.rc[k++] = smarm_group_members("g2", NULL, 1, &G.n[3]);  /* 28 */
	G.rc[k++] = smarm_group_members("g2", buf, 1, NULL);	  /* 29 */
	G.rc[k++] = smarm_group_pick("g2", NULL);		  /* 30 */
	G.rc[k++] = smarm_group_dispatch("g2", NULL, &v);	  /* 31 */
	G.rc[k++] = smarm_group_dispatch("g2", t, NULL);	  /* 32 */
	G.rc[k++] = smarm_group_join("g2", SMARM_PID_NONE, NULL); /* 33 */
	smarm_chan_sender_free(go); /* the rest end */
	smarm_actor_join(b, NULL, NULL);
	smarm_actor_join(c, NULL, NULL);
	G.rc[k++] =
		(int)harness_actor_stat(SMARM_STAT_REG_MEMBERSHIPS); /* 34: 1 */
	smarm_chan_receiver_free(go);
	harness_chan_drop(inbox);
}

START_TEST(test_group_basics_and_errors)
{
	memset(&G, 0, sizeof G);
	ck_assert_int_eq(harness_run(2, basics_root, NULL), SMARM_EXIT_NORMAL);
	for (int i = 0; i <= 5; i++)
		ck_assert_int_eq(G.rc[i], 0);
	ck_assert(G.added[0]);
	ck_assert(G.added[1]);
	ck_assert(!G.added[2]); /* a member already */
	ck_assert_int_eq(G.rc[6], SMARM_ENOPROC);
	ck_assert_int_eq(G.rc[7], 0);
	ck_assert_uint_eq(G.n[0], 3);
	/* join order: b, a, c (the second join of b changed nothing) */
	ck_assert_int_eq(G.rc[8], 0);
	ck_assert_uint_eq(G.n[1], 3);
	ck_assert(smarm_pid_eq(G.p[3], G.m[0]));
	ck_assert_int_eq(G.rc[9], 5);
	ck_assert_int_eq(G.rc[10], 0);
	ck_assert(smarm_pid_eq(G.p[0], G.m[0]));
	ck_assert_int_eq(G.rc[11], SMARM_ENOCHAN);
	ck_assert_int_eq(G.rc[12], 0);
	ck_assert_int_eq(G.rc[13], 0);
	ck_assert_int_eq(G.rc[14], 0);
	ck_assert_int_eq(G.rc[15], 0);
	ck_assert_int_eq(G.got, 9);
	ck_assert_int_eq(G.rc[16], 0);
	ck_assert_uint_eq(G.n[2], 1);
	ck_assert(smarm_pid_eq(G.p[1], G.m[2])); /* c survives in g2 */
	ck_assert_int_eq(G.rc[17], 4);		 /* a left g1 and g2: 6 - 2 */
	ck_assert_int_eq(G.rc[18], 0);
	ck_assert_int_eq(G.rc[19], SMARM_ENOENT);
	ck_assert_int_eq(G.rc[20], SMARM_ENOENT);
	ck_assert_int_eq(G.rc[21], 0);
	ck_assert(smarm_pid_eq(G.p[2], G.m[2])); /* live member survives */
	ck_assert_int_eq(G.rc[22], 0);
	ck_assert_int_eq(G.rc[23], SMARM_ENOMEMBER);
	ck_assert_int_eq(G.rc[24], SMARM_ENOMEMBER);
	ck_assert_int_eq(G.rc[25], 0);
	ck_assert_uint_eq(G.n[3], 0);
	for (int i = 26; i <= 32; i++)
		ck_assert_int_eq(G.rc[i], SMARM_EINVAL);
	ck_assert_int_eq(G.rc[33], SMARM_ENOPROC);
	ck_assert_int_eq(G.rc[34], 1); /* the root's own, in g3 */
}
END_TEST

START_TEST(test_group_outside_actor_is_enotactor)
{
	smarm_pid_t p = SMARM_PID_NONE;
	size_t n;
	int v = 0;
	ck_assert_int_eq(smarm_group_join("g", p, NULL), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_group_leave("g", p), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_group_members("g", NULL, 0, &n),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_group_pick("g", &p), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_group_dispatch("g", int_type(), &v),
			 SMARM_ENOTACTOR);
}
END_TEST

/* ------------------------------------------------------------ storm */

#define STORM_SERVERS 6 /* names srv0..srv5, one holder at a time */
#define STORM_ROUNDS 40 /* servers each slot goes through */
#define STORM_SENDERS 4
#define STORM_SENDS 4000 /* per sender */

static atomic_long st_sent, st_sent_sum; /* accepted by a send call */
static atomic_long st_recv, st_recv_sum; /* taken by a server */
static atomic_long st_gone, st_gone_sum; /* destroyed with a channel */
static atomic_int st_bad;		 /* an unexpected status */
static atomic_int st_senders_done;
static atomic_int st_servers_up; /* servers that joined "pool" */
static int64_t st_end_stats[3];

static void storm_free(void *elem)
{
	atomic_fetch_add(&st_gone, 1);
	atomic_fetch_add(&st_gone_sum, *(int *)elem);
}

static const smarm_msgtype_t *storm_type(void)
{
	const smarm_msgtype_t *t = NULL;
	smarm_msgtype_define("grp.storm", sizeof(int), storm_free, &t);
	return t;
}

struct server_arg {
	int slot;  /* which srv<slot> */
	int round; /* varies what the server does */
};

static void storm_server(void *arg)
{
	struct server_arg *sa = arg;
	const smarm_msgtype_t *t = storm_type();
	smarm_chan_t *ch;
	char name[16];
	int v, quota = 20 + (sa->round * 7 + sa->slot * 3) % 40;
	snprintf(name, sizeof name, "srv%d", sa->slot);
	if (smarm_chan_alloc(&ch, sizeof(int), storm_free) != 0) {
		atomic_store(&st_bad, __LINE__);
		return;
	}
	if (smarm_mailbox_publish(t, ch) != 0)
		atomic_store(&st_bad, __LINE__);
	smarm_chan_sender_free(ch); /* only the runtime sends */
	/* The previous holder may still be on its way out. */
	for (int i = 0; smarm_register(name, NULL) != 0; i++) {
		if (i > 100000) {
			atomic_store(&st_bad, __LINE__);
			break;
		}
		smarm_actor_yield();
	}
	if (smarm_group_join("pool", smarm_actor_self(), NULL) != 0)
		atomic_store(&st_bad, __LINE__);
	atomic_fetch_add(&st_servers_up, 1);
	if (sa->round % 3 == 0)
		smarm_group_join("pool2", smarm_actor_self(), NULL);
	for (int i = 0; i < quota; i++) {
		int rc = smarm_chan_recv_timeout(ch, &v, MS(20));
		if (rc == SMARM_ETIMEDOUT &&
		    atomic_load(&st_senders_done) == STORM_SENDERS)
			break;
		if (rc != 0)
			continue;
		atomic_fetch_add(&st_recv, 1);
		atomic_fetch_add(&st_recv_sum, v);
	}
	/* Leave in different ways: explicitly, or by dying. */
	switch (sa->round % 4) {
	case 0:
		smarm_unregister(name);
		break;
	case 1:
		smarm_group_leave("pool", smarm_actor_self());
		break;
	case 2:
		smarm_mailbox_unpublish(t);
		break;
	default:
		break;
	}
	/* Queued elements are destroyed (counted) when the channel goes. */
	smarm_chan_receiver_free(ch);
	free(sa);
}

/* Keeps slot `slot` served: a new server each time the last ends. */
static void storm_slot(void *arg)
{
	int slot = (int)(intptr_t)arg;
	for (int r = 0; r < STORM_ROUNDS; r++) {
		struct server_arg *sa = malloc(sizeof *sa);
		smarm_pid_t p;
		sa->slot = slot;
		sa->round = r;
		if (smarm_actor_spawn(&p, storm_server, sa, NULL) != 0) {
			atomic_store(&st_bad, __LINE__);
			free(sa);
			return;
		}
		smarm_actor_join(p, NULL, NULL);
		if (atomic_load(&st_senders_done) == STORM_SENDERS && r > 2)
			break;
	}
}

static void storm_sender(void *arg)
{
	int me = (int)(intptr_t)arg;
	const smarm_msgtype_t *t = storm_type();
	unsigned seed = 12345u + (unsigned)me;
	/*
	 * Start with every slot's first server in place: on a loaded host
	 * the senders could otherwise finish before any server ran, and
	 * nothing would have been sent (st_sent 0).
	 */
	while (atomic_load(&st_servers_up) < STORM_SERVERS)
		smarm_actor_yield();
	for (int k = 1; k <= STORM_SENDS; k++) {
		char name[16];
		int v = me * 1000000 + k, rc;
		smarm_pid_t p;
		seed = seed * 1103515245u + 12345u;
		snprintf(name, sizeof name, "srv%u",
			 (seed >> 8) % STORM_SERVERS);
		switch ((seed >> 4) % 3) {
		case 0:
			rc = smarm_send_name(name, t, &v);
			break;
		case 1:
			rc = smarm_group_dispatch("pool", t, &v);
			break;
		default:
			rc = smarm_whereis(name, &p);
			if (rc == 0)
				rc = smarm_send(p, t, &v);
			break;
		}
		if (rc == 0) {
			atomic_fetch_add(&st_sent, 1);
			atomic_fetch_add(&st_sent_sum, v);
		} else if (rc != SMARM_ENONAME && rc != SMARM_ENOCHAN &&
			   rc != SMARM_ENOMEMBER && rc != SMARM_ECLOSED &&
			   rc != SMARM_ENOPROC) {
			atomic_store(&st_bad, __LINE__);
		}
		if (k % 16 == 0)
			smarm_actor_yield();
	}
	atomic_fetch_add(&st_senders_done, 1);
}

static void storm_root(void *arg)
{
	smarm_pid_t slots[STORM_SERVERS], senders[STORM_SENDERS];
	(void)arg;
	for (int i = 0; i < STORM_SERVERS; i++)
		smarm_actor_spawn(&slots[i], storm_slot, (void *)(intptr_t)i,
				  NULL);
	for (int i = 0; i < STORM_SENDERS; i++)
		smarm_actor_spawn(&senders[i], storm_sender,
				  (void *)(intptr_t)(i + 1), NULL);
	for (int i = 0; i < STORM_SENDERS; i++)
		smarm_actor_join(senders[i], NULL, NULL);
	for (int i = 0; i < STORM_SERVERS; i++)
		smarm_actor_join(slots[i], NULL, NULL);
	st_end_stats[0] = harness_actor_stat(SMARM_STAT_REG_NAMES);
	st_end_stats[1] = harness_actor_stat(SMARM_STAT_REG_MAILBOXES);
	st_end_stats[2] = harness_actor_stat(SMARM_STAT_REG_MEMBERSHIPS);
}

START_TEST(test_group_storm_counts_every_element_once)
{
	(void)storm_type();
	atomic_store(&st_sent, 0);
	atomic_store(&st_sent_sum, 0);
	atomic_store(&st_recv, 0);
	atomic_store(&st_recv_sum, 0);
	atomic_store(&st_gone, 0);
	atomic_store(&st_gone_sum, 0);
	atomic_store(&st_bad, 0);
	atomic_store(&st_senders_done, 0);
	atomic_store(&st_servers_up, 0);
	ck_assert_int_eq(harness_run(4, storm_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(atomic_load(&st_bad), 0);
	ck_assert_int_gt(atomic_load(&st_sent), 0);
	ck_assert_int_gt(atomic_load(&st_recv), 0);
	ck_assert_int_eq(atomic_load(&st_sent),
			 atomic_load(&st_recv) + atomic_load(&st_gone));
	ck_assert_int_eq(atomic_load(&st_sent_sum),
			 atomic_load(&st_recv_sum) + atomic_load(&st_gone_sum));
	ck_assert_int_eq(st_end_stats[0], 0);
	ck_assert_int_eq(st_end_stats[1], 0);
	ck_assert_int_eq(st_end_stats[2], 0);
}
END_TEST

Suite *smarm_test_group_suite(void)
{
	Suite *s = suite_create("group");
	TCase *tc = tcase_create("groups");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_group_basics_and_errors);
	tcase_add_test(tc, test_group_outside_actor_is_enotactor);
	suite_add_tcase(s, tc);

	tc = tcase_create("storm");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_group_storm_counts_every_element_once);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(group)
