/* SPDX-License-Identifier: MIT */
/*
 * test_mailbox.c - message types and typed mailboxes: smarm_msgtype_*
 * interning and its refusals, smarm_mailbox_publish/unpublish, and
 * smarm_send by pid: delivery, SMARM_ENOCHAN (no mailbox, wrong type),
 * SMARM_ECLOSED, ownership of the element on every failure, a pid of a
 * dead incarnation whose slot holds a new actor (SMARM_ENOPROC, nothing
 * delivered to the new tenant), calls outside an actor, the node
 * variants from a plain thread, and the runtime's sender reference on a
 * mailbox, which the owner cannot give up.
 */
#include "harness.h"

#include <pthread.h>
#include <string.h>

static atomic_int destroyed; /* elements the "counted" type destroyed */

static void count_free(void *elem)
{
	(void)elem;
	atomic_fetch_add(&destroyed, 1);
}

static const smarm_msgtype_t *int_type(void)
{
	const smarm_msgtype_t *t = NULL;
	ck_assert_int_eq(smarm_msgtype_define("mb.int", sizeof(int), NULL, &t),
			 0);
	return t;
}

/* ------------------------------------------------------ message types */

START_TEST(test_mailbox_msgtype_define_interns_and_refuses)
{
	const smarm_msgtype_t *a = NULL, *b = NULL, *c = NULL;
	char longname[SMARM_NAME_MAX + 2];
	ck_assert_int_eq(smarm_msgtype_define("mb.t1", 8, NULL, &a), 0);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(smarm_msgtype_define("mb.t1", 8, NULL, &b), 0);
	ck_assert_ptr_eq(a, b);
	ck_assert_str_eq(smarm_msgtype_name(a), "mb.t1");
	ck_assert_uint_eq(smarm_msgtype_size(a), 8);
	/* Same name, another size or destructor. */
	ck_assert_int_eq(smarm_msgtype_define("mb.t1", 4, NULL, &c),
			 SMARM_EEXIST);
	ck_assert_int_eq(smarm_msgtype_define("mb.t1", 8, count_free, &c),
			 SMARM_EEXIST);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(smarm_msgtype_define("mb.t2", 8, count_free, &c), 0);
	ck_assert_ptr_ne(a, c);
	/* Names: NULL, empty, over-long; the longest allowed is fine. */
	ck_assert_int_eq(smarm_msgtype_define(NULL, 8, NULL, &c), SMARM_EINVAL);
	ck_assert_int_eq(smarm_msgtype_define("", 8, NULL, &c), SMARM_EINVAL);
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	ck_assert_int_eq(smarm_msgtype_define(longname, 8, NULL, &c),
			 SMARM_EINVAL);
	longname[SMARM_NAME_MAX] = '\0';
	ck_assert_int_eq(smarm_msgtype_define(longname, 8, NULL, &c), 0);
	ck_assert_str_eq(smarm_msgtype_name(c), longname);
	/* Sizes and out. */
	ck_assert_int_eq(smarm_msgtype_define("mb.t3", 0, NULL, &c),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_msgtype_define("mb.t3", 65537, NULL, &c),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_msgtype_define("mb.t3", 65536, NULL, &c), 0);
	ck_assert_int_eq(smarm_msgtype_define("mb.t3", 8, NULL, NULL),
			 SMARM_EINVAL);
	/* Accessors on what is no type. */
	ck_assert_ptr_null(smarm_msgtype_name(NULL));
	ck_assert_uint_eq(smarm_msgtype_size(NULL), 0);
	ck_assert_ptr_null(
		smarm_msgtype_name((const smarm_msgtype_t *)&longname));
	ck_assert_uint_eq(smarm_msgtype_size((const smarm_msgtype_t *)0x1000),
			  0);
}
END_TEST

/* ------------------------------------------------------------ errors */

static struct {
	int rc[32];
	smarm_chan_t *ch;
	smarm_pid_t pid;
	int got;
} R;

static void errors_root(void *arg)
{
	const smarm_msgtype_t *t = arg, *big = NULL, *counted = NULL;
	smarm_chan_t *ch, *ch8, *chf, *dead;
	int v = 1, k = 0;
	smarm_msgtype_define("mb.big", 8, NULL, &big);
	smarm_msgtype_define("mb.counted", sizeof(int), count_free, &counted);
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	smarm_chan_alloc(&ch8, 8, NULL);
	smarm_chan_alloc(&chf, sizeof(int), count_free);
	smarm_chan_alloc(&dead, sizeof(int), NULL);
	harness_chan_drop(dead);
	R.rc[k++] = smarm_mailbox_publish(NULL, ch);		  /* 0 */
	R.rc[k++] = smarm_mailbox_publish((const void *)ch, ch);  /* 1 */
	R.rc[k++] = smarm_mailbox_publish(t, NULL);		  /* 2 */
	R.rc[k++] = smarm_mailbox_publish(t, (smarm_chan_t *)&v); /* 3 */
	R.rc[k++] = smarm_mailbox_publish(t, ch8);	   /* 4 size mismatch */
	R.rc[k++] = smarm_mailbox_publish(big, ch);	   /* 5 size mismatch */
	R.rc[k++] = smarm_mailbox_publish(t, chf);	   /* 6 destructor */
	R.rc[k++] = smarm_mailbox_publish(t, dead);	   /* 7 freed */
	R.rc[k++] = smarm_mailbox_unpublish(t);		   /* 8 none */
	R.rc[k++] = smarm_mailbox_unpublish(NULL);	   /* 9 */
	R.rc[k++] = smarm_send(smarm_actor_self(), t, &v); /* 10 ENOCHAN */
	R.rc[k++] = smarm_send(SMARM_PID_NONE, t, &v);	   /* 11 */
	R.rc[k++] = smarm_send(smarm_actor_self(), NULL, &v); /* 12 */
	R.rc[k++] = smarm_send(smarm_actor_self(), t, NULL);  /* 13 */
	R.rc[k++] = smarm_mailbox_publish(t, ch);	      /* 14 ok */
	R.rc[k++] = smarm_mailbox_publish(t, ch); /* 15 again: replaces */
	R.rc[k++] = smarm_send(smarm_actor_self(), t, &v);   /* 16 ok */
	R.rc[k++] = smarm_send(smarm_actor_self(), big, &v); /* 17 type */
	R.rc[k++] = smarm_mailbox_publish(counted, chf);     /* 18 ok */
	R.rc[k++] = smarm_chan_try_recv(ch, &R.got);	     /* 19 */
	R.rc[k++] = smarm_mailbox_unpublish(t);		     /* 20 */
	R.rc[k++] = smarm_send(smarm_actor_self(), t, &v);   /* 21 ENOCHAN */
	R.rc[k++] = smarm_mailbox_unpublish(t);		     /* 22 ENOENT */
	R.rc[k++] = (int)harness_stat(smarm_node_current(),
				      SMARM_STAT_REG_MAILBOXES); /* 23 */
	harness_chan_drop(ch8);
	smarm_chan_alloc(&ch8, sizeof(int), NULL);
	smarm_chan_sender_free(ch8);		   /* no sender left */
	R.rc[k++] = smarm_mailbox_publish(t, ch8); /* 24 ECLOSED */
	harness_chan_drop(ch);
	smarm_chan_receiver_free(ch8);
	harness_chan_drop(chf);
}

START_TEST(test_mailbox_publish_and_send_errors)
{
	const smarm_msgtype_t *t = int_type();
	int v = 0;
	memset(&R, 0, sizeof R);
	ck_assert_int_eq(harness_run(1, errors_root, (void *)t),
			 SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.rc[0], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[1], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[2], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[3], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[4], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[5], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[6], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[7], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[8], SMARM_ENOENT);
	ck_assert_int_eq(R.rc[9], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[10], SMARM_ENOCHAN);
	ck_assert_int_eq(R.rc[11], SMARM_ENOPROC);
	ck_assert_int_eq(R.rc[12], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[13], SMARM_EINVAL);
	ck_assert_int_eq(R.rc[14], 0);
	ck_assert_int_eq(R.rc[15], 0);
	ck_assert_int_eq(R.rc[16], 0);
	ck_assert_int_eq(R.rc[17], SMARM_ENOCHAN);
	ck_assert_int_eq(R.rc[18], 0);
	ck_assert_int_eq(R.rc[19], 0);
	ck_assert_int_eq(R.got, 1);
	ck_assert_int_eq(R.rc[20], 0);
	ck_assert_int_eq(R.rc[21], SMARM_ENOCHAN);
	ck_assert_int_eq(R.rc[22], SMARM_ENOENT);
	ck_assert_int_eq(R.rc[23], 1); /* the counted one */
	ck_assert_int_eq(R.rc[24], SMARM_ECLOSED);
	/* Outside an actor. */
	ck_assert_int_eq(smarm_mailbox_publish(t, NULL), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_mailbox_unpublish(t), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_send(SMARM_PID_NONE, t, &v), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_node_send(NULL, SMARM_PID_NONE, t, &v),
			 SMARM_EINVAL);
}
END_TEST

/* ---------------------------------- delivery, ECLOSED and ownership */

struct elem {
	int id;
	char tag[12];
};

static void elem_free(void *e)
{
	(void)e;
	atomic_fetch_add(&destroyed, 1);
}

static struct {
	smarm_chan_t *ch;
	smarm_pid_t pid;
	int rc[8];
	struct elem e;
	int recvd;
	int nok; /* sends of element 8 that succeeded */
	int64_t mailboxes_at_end;
} O;

/* Publishes O.ch, receives one element, closes its receiver, waits. */
static void owner_actor(void *arg)
{
	const smarm_msgtype_t *t = arg;
	smarm_chan_t *go;
	struct elem e;
	smarm_chan_alloc(&go, sizeof(int), NULL);
	HARNESS_EQ(smarm_mailbox_publish(t, O.ch), 0);
	/* Only the runtime keeps a sender. */
	HARNESS_EQ(smarm_chan_sender_free(O.ch), 0);
	HARNESS_EQ(smarm_chan_recv_timeout(O.ch, &e, MS(10000)), 0);
	O.recvd = e.id;
	HARNESS_EQ(smarm_chan_receiver_free(O.ch), 0);
	/* Stay alive until the root is done sending. */
	smarm_chan_recv_timeout(go, &e.id, MS(200));
	harness_chan_drop(go);
}

static void own_root(void *arg)
{
	const smarm_msgtype_t *t = arg;
	struct elem e = { 7, "seven" };
	smarm_chan_alloc(&O.ch, sizeof(struct elem), elem_free);
	smarm_actor_spawn(&O.pid, owner_actor, arg, NULL);
	while (harness_stat(smarm_node_current(), SMARM_STAT_REG_MAILBOXES) !=
	       1)
		smarm_actor_yield();
	O.rc[0] = smarm_send(O.pid, t, &e); /* delivered */
	/* Wait until its receiver is gone. */
	e.id = 8;
	for (int i = 0; i < 100000; i++) {
		O.rc[1] = smarm_send(O.pid, t, &e);
		if (O.rc[1] != 0)
			break;
		O.nok++;
		smarm_actor_sleep(US(100));
	}
	O.e = e; /* untouched by the failed send */
	smarm_actor_join(O.pid, NULL, NULL);
	O.rc[2] = smarm_send(O.pid, t, &e); /* dead */
	O.mailboxes_at_end =
		harness_stat(smarm_node_current(), SMARM_STAT_REG_MAILBOXES);
}

START_TEST(test_mailbox_send_closed_keeps_ownership)
{
	const smarm_msgtype_t *t = NULL;
	ck_assert_int_eq(smarm_msgtype_define("mb.elem", sizeof(struct elem),
					      elem_free, &t),
			 0);
	memset(&O, 0, sizeof O);
	atomic_store(&destroyed, 0);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, own_root, (void *)t),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(O.rc[0], 0);
	ck_assert_int_eq(O.recvd, 7);
	ck_assert_int_eq(O.rc[1], SMARM_ECLOSED);
	ck_assert_int_eq(O.rc[2], SMARM_ENOPROC);
	ck_assert_int_eq(O.e.id, 8);
	ck_assert_str_eq(O.e.tag, "seven");
	ck_assert_int_eq(O.mailboxes_at_end, 0);
	/*
	 * Each element 8 that was accepted was queued and destroyed with the
	 * channel; the refused ones stayed the caller's: exactly the
	 * accepted ones were destroyed.
	 */
	ck_assert_int_eq(atomic_load(&destroyed), O.nok);
}
END_TEST

/* Exact ownership: a send refused for every reason destroys nothing. */
static void refuse_root(void *arg)
{
	const smarm_msgtype_t *t = arg;
	smarm_chan_t *ch;
	struct elem e = { 1, "mine" };
	smarm_chan_alloc(&ch, sizeof e, elem_free);
	HARNESS_EQ(smarm_send(smarm_actor_self(), t, &e), SMARM_ENOCHAN);
	HARNESS_EQ(smarm_mailbox_publish(t, ch), 0);
	HARNESS_EQ(smarm_chan_receiver_free(ch), 0); /* closed */
	HARNESS_EQ(smarm_send(smarm_actor_self(), t, &e), SMARM_ECLOSED);
	HARNESS_EQ(smarm_send_name("nobody", t, &e), SMARM_ENONAME);
	HARNESS_EQ(smarm_group_dispatch("nogroup", t, &e), SMARM_ENOMEMBER);
	HARNESS_EQ(e.id, 1);
	HARNESS_CHECK(strcmp(e.tag, "mine") == 0);
	HARNESS_EQ(atomic_load(&destroyed), 0);
	HARNESS_EQ(smarm_mailbox_unpublish(t), 0);
	smarm_chan_sender_free(ch);
}

START_TEST(test_mailbox_refused_send_destroys_nothing)
{
	const smarm_msgtype_t *t = NULL;
	ck_assert_int_eq(smarm_msgtype_define("mb.elem", sizeof(struct elem),
					      elem_free, &t),
			 0);
	atomic_store(&destroyed, 0);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, refuse_root, (void *)t),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&destroyed), 0);
}
END_TEST

/* ------------------------------- a dead incarnation's slot reused */

static struct {
	smarm_chan_t *ch_a, *ch_b;
	smarm_pid_t a, b;
	int rc;
	int64_t queued_b;
	int distinct;
} S;

static void tenant(void *arg)
{
	smarm_chan_t *ch = arg;
	int v;
	const smarm_msgtype_t *t = int_type();
	HARNESS_EQ(smarm_mailbox_publish(t, ch), 0);
	/* Wait for the root's word (or a timeout), then end. */
	smarm_chan_recv_timeout(ch, &v, MS(2000));
}

static void reuse_root(void *arg)
{
	const smarm_msgtype_t *t = int_type();
	int v = 5;
	(void)arg;
	smarm_chan_alloc(&S.ch_a, sizeof(int), NULL);
	smarm_chan_alloc(&S.ch_b, sizeof(int), NULL);
	smarm_actor_spawn(&S.a, tenant, S.ch_a, NULL);
	while (harness_stat(smarm_node_current(), SMARM_STAT_REG_MAILBOXES) !=
	       1)
		smarm_actor_yield();
	smarm_chan_send(S.ch_a, &v); /* A ends */
	smarm_actor_join(S.a, NULL, NULL);
	/* max_actors 2: B takes A's slot. */
	HARNESS_EQ(smarm_actor_spawn(&S.b, tenant, S.ch_b, NULL), 0);
	S.distinct = !smarm_pid_eq(S.a, S.b);
	while (harness_stat(smarm_node_current(), SMARM_STAT_REG_MAILBOXES) !=
	       1)
		smarm_actor_yield();
	S.rc = smarm_send(S.a, t, &v);
	S.queued_b = harness_chan_len(S.ch_b);
	smarm_chan_send(S.ch_b, &v);
	smarm_actor_join(S.b, NULL, NULL);
	harness_chan_drop(S.ch_a);
	harness_chan_drop(S.ch_b);
}

START_TEST(test_mailbox_send_to_dead_incarnation_is_enoproc)
{
	memset(&S, 0, sizeof S);
	harness_checks_reset();
	ck_assert_int_eq(harness_run_ex(1, 2, reuse_root, NULL, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(S.distinct, 1);
	ck_assert_int_eq(S.rc, SMARM_ENOPROC);
	ck_assert_int_eq(S.queued_b, 0); /* not delivered to the new tenant */
}
END_TEST

/* --------------------------------------- node variants from a thread */

static struct {
	smarm_node_t *node;
	smarm_chan_t *ch, *done;
	smarm_pid_t server;
	atomic_int ready;
	int rc[8];
	int sum;
} N;

static void n_server(void *arg)
{
	const smarm_msgtype_t *t = arg;
	int v;
	HARNESS_EQ(smarm_register("n.server", NULL), 0);
	HARNESS_EQ(smarm_mailbox_publish(t, N.ch), 0);
	atomic_store(&N.ready, 1);
	for (int i = 0; i < 2; i++) {
		HARNESS_EQ(smarm_chan_recv_timeout(N.ch, &v, MS(10000)), 0);
		N.sum += v;
	}
	/* Stay until the thread is done with its refusals. */
	smarm_chan_recv_timeout(N.done, &v, MS(10000));
}

static void *n_thread(void *arg)
{
	const smarm_msgtype_t *t = arg;
	smarm_pid_t p = SMARM_PID_NONE;
	int v = 20, one = 1;
	while (!atomic_load(&N.ready)) {
		struct timespec ts = { 0, 1000000L };
		nanosleep(&ts, NULL);
	}
	N.rc[0] = smarm_node_whereis(N.node, "n.server", &p);
	N.rc[1] = smarm_node_send(N.node, p, t, &v);
	v = 22;
	N.rc[2] = smarm_node_send_name(N.node, "n.server", t, &v);
	N.rc[3] = smarm_node_send_name(N.node, "n.none", t, &v);
	N.rc[4] = smarm_node_whereis(N.node, "n.none", &p);
	N.rc[5] = smarm_node_whereis(NULL, "n.server", &p);
	N.rc[6] = smarm_node_send_name(N.node, "", t, &v);
	N.rc[7] = smarm_whereis("n.server", &p); /* not an actor */
	smarm_chan_send(N.done, &one);
	return NULL;
}

static void n_root(void *arg)
{
	smarm_pid_t s;
	smarm_actor_spawn(&s, n_server, arg, NULL);
	smarm_actor_join(s, NULL, NULL);
}

START_TEST(test_mailbox_node_variants_from_plain_thread)
{
	const smarm_msgtype_t *t = int_type();
	pthread_t th;
	int how = -1;
	memset(&N, 0, sizeof N);
	harness_checks_reset();
	N.node = harness_open(2);
	ck_assert_int_eq(smarm_chan_alloc(&N.ch, sizeof(int), NULL), 0);
	ck_assert_int_eq(smarm_chan_alloc(&N.done, sizeof(int), NULL), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, n_thread, (void *)t), 0);
	ck_assert_int_eq(smarm_node_run(N.node, n_root, (void *)t, &how, NULL),
			 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(N.rc[0], 0);
	ck_assert_int_eq(N.rc[1], 0);
	ck_assert_int_eq(N.rc[2], 0);
	ck_assert_int_eq(N.rc[3], SMARM_ENONAME);
	ck_assert_int_eq(N.rc[4], SMARM_ENONAME);
	ck_assert_int_eq(N.rc[5], SMARM_EINVAL);
	ck_assert_int_eq(N.rc[6], SMARM_EINVAL);
	ck_assert_int_eq(N.rc[7], SMARM_ENOTACTOR);
	ck_assert_int_eq(N.sum, 42);
	ck_assert_int_eq(harness_stat(N.node, SMARM_STAT_REG_NAMES), 0);
	ck_assert_int_eq(harness_stat(N.node, SMARM_STAT_REG_MAILBOXES), 0);
	harness_chan_drop(N.ch);
	harness_chan_drop(N.done);
	ck_assert_int_eq(smarm_node_close(N.node), 0);
}
END_TEST

/* ------------------------------- the runtime's reference is its own */

static struct {
	int free1, free2, send, got, v;
} K;

/*
 * The runtime's sender reference on a mailbox is not the owner's to
 * give up: a surplus smarm_chan_sender_free is refused (as for the
 * references of timed sends) and sends keep arriving.
 */
static void own_ref_root(void *arg)
{
	const smarm_msgtype_t *t = arg;
	smarm_chan_t *ch = NULL;
	int v = 41;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_mailbox_publish(t, ch), 0);
	K.free1 = smarm_chan_sender_free(ch); /* the caller's own */
	K.free2 = smarm_chan_sender_free(ch); /* the runtime's: refused */
	K.send = smarm_send(smarm_actor_self(), t, &v);
	K.got = smarm_chan_try_recv(ch, &K.v);
	HARNESS_EQ(smarm_mailbox_unpublish(t), 0); /* closes it */
	HARNESS_EQ(smarm_chan_try_recv(ch, &v), SMARM_ECLOSED);
	HARNESS_EQ(smarm_chan_receiver_free(ch), 0);
}

START_TEST(test_mailbox_runtime_reference_is_not_the_owners)
{
	const smarm_msgtype_t *t = int_type();
	memset(&K, 0, sizeof K);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, own_ref_root, (void *)t),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(K.free1, 0);
	ck_assert_int_eq(K.free2, SMARM_ESTATE);
	ck_assert_int_eq(K.send, 0);
	ck_assert_int_eq(K.got, 0);
	ck_assert_int_eq(K.v, 41);
}
END_TEST

Suite *smarm_test_mailbox_suite(void)
{
	Suite *s = suite_create("mailbox");
	TCase *tc = tcase_create("types");
	tcase_add_test(tc, test_mailbox_msgtype_define_interns_and_refuses);
	suite_add_tcase(s, tc);

	tc = tcase_create("send");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_mailbox_publish_and_send_errors);
	tcase_add_test(tc, test_mailbox_send_closed_keeps_ownership);
	tcase_add_test(tc, test_mailbox_refused_send_destroys_nothing);
	tcase_add_test(tc, test_mailbox_send_to_dead_incarnation_is_enoproc);
	tcase_add_test(tc, test_mailbox_node_variants_from_plain_thread);
	tcase_add_test(tc, test_mailbox_runtime_reference_is_not_the_owners);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(mailbox)
