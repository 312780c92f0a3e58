/* SPDX-License-Identifier: MIT */
/*
 * test_registry.c - names: smarm_register / unregister / whereis /
 * names_of and smarm_send_name. Ports smarm's tests/registry.rs
 * (name_held_by_live_actor_is_taken, dead_holder_is_pruned_and_name_
 * taken_over, send_errors_unresolved_and_no_channel, roundtrip,
 * idempotent re-register, binding evaporates on death, unregister,
 * cross-actor whereis usable with a stop) and tests/stale_name_slot_
 * reuse.rs (dead_name_with_reused_slot_must_be_re_registrable), plus
 * send by name following a re-register, bad names and calls outside an
 * actor, and terminal_outcome_after_death (a registered actor's end is
 * remembered for a monitor set after it).
 */
#include "harness.h"

#include <string.h>

static const smarm_msgtype_t *int_type(void)
{
	const smarm_msgtype_t *t = NULL;
	ck_assert_int_eq(smarm_msgtype_define("reg.int", sizeof(int), NULL, &t),
			 0);
	return t;
}

/* Spin (yielding) until stat reaches want, for at most ~10 s. */
static bool await(int stat, int64_t want)
{
	return harness_await_stat(smarm_node_current(), stat, want);
}

/* An actor that registers arg's name, then waits on its go channel. */
struct holder {
	const char *name;
	smarm_chan_t *go; /* its end: any element, or its close */
	int rc;
};

static void holder_actor(void *arg)
{
	struct holder *h = arg;
	int v;
	h->rc = smarm_register(h->name, NULL);
	smarm_chan_recv_timeout(h->go, &v, MS(10000));
}

static void holder_start(struct holder *h, const char *name, smarm_pid_t *pid)
{
	h->name = name;
	smarm_chan_alloc(&h->go, sizeof(int), NULL);
	smarm_actor_spawn(pid, holder_actor, h, NULL);
}

static void holder_end(struct holder *h, smarm_pid_t pid)
{
	int v = 0;
	smarm_chan_send(h->go, &v);
	smarm_actor_join(pid, NULL, NULL);
	harness_chan_drop(h->go);
}

/* ------------------------------------------------------------- basics */

static struct {
	int rc[40];
	smarm_pid_t p[8];
	size_t n, n5;
	char names[4][SMARM_NAME_MAX + 1];
	char names5[4][SMARM_NAME_MAX + 1];
} B;

static void basics_root(void *arg)
{
	struct holder h = { 0 };
	smarm_pid_t hp, who = SMARM_PID_NONE, me = smarm_actor_self();
	char longname[SMARM_NAME_MAX + 2];
	int k = 0;
	(void)arg;
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	/* roundtrip, idempotent, several names */
	B.rc[k++] = smarm_register("alpha", NULL); /* 0 */
	B.rc[k++] = smarm_register("alpha", &who); /* 1 idempotent */
	B.p[0] = who;
	B.rc[k++] = smarm_register("beta", NULL);	  /* 2 */
	B.rc[k++] = smarm_whereis("alpha", &B.p[1]);	  /* 3 */
	B.rc[k++] = smarm_whereis("beta", &B.p[2]);	  /* 4 */
	B.rc[k++] = smarm_names_of(me, B.names, 4, &B.n); /* 5 */
	B.n5 = B.n;
	memcpy(B.names5, B.names, sizeof B.names);
	B.rc[k++] = (int)harness_actor_stat(SMARM_STAT_REG_NAMES); /* 6: 2 */
	/* name_held_by_live_actor_is_taken */
	holder_start(&h, "gamma", &hp);
	await(SMARM_STAT_REG_NAMES, 3);
	B.rc[k++] = smarm_register("gamma", &who); /* 7 EEXIST */
	B.p[3] = who;
	B.p[4] = hp;
	B.rc[k++] = h.rc; /* 8 */
	/* cross-actor whereis usable with a stop */
	B.rc[k++] = smarm_whereis("gamma", &who);      /* 9 */
	B.rc[k++] = smarm_actor_stop(who);	       /* 10 */
	B.rc[k++] = smarm_actor_join(who, NULL, NULL); /* 11 */
	harness_chan_drop(h.go);
	/* binding evaporates on death; register over the dead holder */
	B.rc[k++] = smarm_whereis("gamma", &who);  /* 12 ENONAME */
	B.p[5] = who;				   /* none */
	B.rc[k++] = smarm_register("gamma", NULL); /* 13 */
	/* unregister */
	B.rc[k++] = smarm_unregister("beta");	 /* 14 */
	B.rc[k++] = smarm_unregister("beta");	 /* 15 ENONAME */
	B.rc[k++] = smarm_whereis("beta", &who); /* 16 ENONAME */
	/* bad names */
	B.rc[k++] = smarm_register(NULL, NULL);	    /* 17 */
	B.rc[k++] = smarm_register("", NULL);	    /* 18 */
	B.rc[k++] = smarm_register(longname, NULL); /* 19 */
	B.rc[k++] = smarm_whereis(longname, &who);  /* 20 */
	B.rc[k++] = smarm_whereis("alpha", NULL);   /* 21 */
	B.rc[k++] = smarm_unregister("");	    /* 22 */
	longname[SMARM_NAME_MAX] = '\0';
	B.rc[k++] = smarm_register(longname, NULL);	  /* 23 ok */
	B.rc[k++] = smarm_names_of(me, NULL, 0, &B.n);	  /* 24: 3 */
	B.rc[k++] = (int)B.n;				  /* 25 */
	B.rc[k++] = smarm_names_of(me, B.names, 1, &B.n); /* 26 cut */
	B.rc[k++] = smarm_names_of(me, NULL, 1, &B.n);	  /* 27 */
	B.rc[k++] = smarm_names_of(me, B.names, 1, NULL); /* 28 */
	B.rc[k++] = smarm_names_of(hp, B.names, 1, &B.n); /* 29 dead */
	B.rc[k++] = smarm_unregister("alpha");
	B.rc[k++] = smarm_unregister("gamma");
	B.rc[k++] = smarm_unregister(longname);
	B.rc[k++] = (int)harness_actor_stat(SMARM_STAT_REG_NAMES); /* 33: 0 */
}

START_TEST(test_registry_basics_and_errors)
{
	memset(&B, 0, sizeof B);
	ck_assert_int_eq(harness_run(2, basics_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(B.rc[0], 0);
	ck_assert_int_eq(B.rc[1], 0);
	ck_assert(smarm_pid_eq(B.p[0], SMARM_PID_NONE));
	ck_assert_int_eq(B.rc[2], 0);
	ck_assert_int_eq(B.rc[3], 0);
	ck_assert_int_eq(B.rc[4], 0);
	ck_assert(smarm_pid_eq(B.p[1], B.p[2]));
	ck_assert_int_eq(B.rc[6], 2);
	ck_assert_int_eq(B.rc[7], SMARM_EEXIST);
	ck_assert(smarm_pid_eq(B.p[3], B.p[4])); /* names the holder */
	ck_assert_int_eq(B.rc[8], 0);
	ck_assert_int_eq(B.rc[9], 0);
	ck_assert_int_eq(B.rc[10], 0);
	ck_assert_int_eq(B.rc[11], 0);
	ck_assert_int_eq(B.rc[12], SMARM_ENONAME);
	ck_assert(smarm_pid_eq(B.p[5], SMARM_PID_NONE));
	ck_assert_int_eq(B.rc[13], 0);
	ck_assert_int_eq(B.rc[14], 0);
	ck_assert_int_eq(B.rc[15], SMARM_ENONAME);
	ck_assert_int_eq(B.rc[16], SMARM_ENONAME);
	for (int i = 17; i <= 22; i++)
		ck_assert_int_eq(B.rc[i], SMARM_EINVAL);
	ck_assert_int_eq(B.rc[23], 0);
	ck_assert_int_eq(B.rc[24], 0);
	ck_assert_int_eq(B.rc[25], 3); /* alpha, gamma, the long one */
	ck_assert_int_eq(B.rc[26], 0);
	ck_assert_str_eq(B.names[0], "alpha"); /* registration order */
	ck_assert_int_eq(B.rc[27], SMARM_EINVAL);
	ck_assert_int_eq(B.rc[28], SMARM_EINVAL);
	ck_assert_int_eq(B.rc[29], SMARM_ENOPROC);
	ck_assert_int_eq(B.rc[30], 0);
	ck_assert_int_eq(B.rc[31], 0);
	ck_assert_int_eq(B.rc[32], 0);
	ck_assert_int_eq(B.rc[33], 0);
}
END_TEST

START_TEST(test_registry_names_of_lists_in_order)
{
	memset(&B, 0, sizeof B);
	ck_assert_int_eq(harness_run(1, basics_root, NULL), SMARM_EXIT_NORMAL);
	ck_assert_int_eq(B.rc[5], 0);
	ck_assert_uint_eq(B.n5, 2);
	ck_assert_str_eq(B.names5[0], "alpha");
	ck_assert_str_eq(B.names5[1], "beta");
	ck_assert_uint_eq(B.n, 0); /* the dead pid's call */
}
END_TEST

START_TEST(test_registry_outside_actor_is_enotactor)
{
	smarm_pid_t p;
	size_t n;
	ck_assert_int_eq(smarm_register("x", NULL), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_unregister("x"), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_whereis("x", &p), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_names_of(p, NULL, 0, &n), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_send_name("x", NULL, &n), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_node_whereis(NULL, "x", &p), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_send_name(NULL, "x", NULL, &n),
			 SMARM_EINVAL);
}
END_TEST

/* ------------------------------------------------------ send by name */

static struct {
	int rc[16];
	int got[4];
} SN;

/* A server: registers "srv", publishes its channel, takes one element. */
static void srv_actor(void *arg)
{
	int *slot = arg;
	smarm_chan_t *ch;
	smarm_chan_alloc(&ch, sizeof(int), NULL);
	HARNESS_EQ(smarm_register("srv", NULL), 0);
	HARNESS_EQ(smarm_mailbox_publish(int_type(), ch), 0);
	HARNESS_EQ(smarm_chan_recv_timeout(ch, slot, MS(10000)), 0);
	harness_chan_drop(ch);
}

static void sendname_root(void *arg)
{
	const smarm_msgtype_t *t = int_type(), *other = NULL;
	smarm_pid_t a, b;
	int v = 1, k = 0;
	(void)arg;
	smarm_msgtype_define("reg.other", sizeof(int), NULL, &other);
	SN.rc[k++] = smarm_send_name("srv", t, &v); /* 0 ENONAME */
	smarm_actor_spawn(&a, srv_actor, &SN.got[0], NULL);
	await(SMARM_STAT_REG_MAILBOXES, 1);
	SN.rc[k++] = smarm_send_name("srv", other, &v); /* 1 ENOCHAN */
	SN.rc[k++] = smarm_send_name("srv", t, &v);	/* 2 */
	smarm_actor_join(a, NULL, NULL);
	SN.rc[k++] = smarm_send_name("srv", t, &v); /* 3 ENONAME */
	/* the restarted server takes the name: the send follows it */
	smarm_actor_spawn(&b, srv_actor, &SN.got[1], NULL);
	await(SMARM_STAT_REG_MAILBOXES, 1);
	v = 2;
	SN.rc[k++] = smarm_send_name("srv", t, &v); /* 4 */
	smarm_actor_join(b, NULL, NULL);
	SN.rc[k++] = smarm_send_name("srv", t, NULL);		    /* 5 */
	SN.rc[k++] = smarm_send_name("srv", NULL, &v);		    /* 6 */
	SN.rc[k++] = smarm_send_name(NULL, t, &v);		    /* 7 */
	SN.rc[k++] = (int)harness_actor_stat(SMARM_STAT_REG_NAMES); /* 8 */
	/* a name without a mailbox: ENOCHAN */
	smarm_register("bare", NULL);
	SN.rc[k++] = smarm_send_name("bare", t, &v); /* 9 */
	smarm_unregister("bare");
}

START_TEST(test_registry_send_name_follows_reregister)
{
	memset(&SN, 0, sizeof SN);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, sendname_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(SN.rc[0], SMARM_ENONAME);
	ck_assert_int_eq(SN.rc[1], SMARM_ENOCHAN);
	ck_assert_int_eq(SN.rc[2], 0);
	ck_assert_int_eq(SN.got[0], 1);
	ck_assert_int_eq(SN.rc[3], SMARM_ENONAME);
	ck_assert_int_eq(SN.rc[4], 0);
	ck_assert_int_eq(SN.got[1], 2);
	ck_assert_int_eq(SN.rc[5], SMARM_EINVAL);
	ck_assert_int_eq(SN.rc[6], SMARM_EINVAL);
	ck_assert_int_eq(SN.rc[7], SMARM_EINVAL);
	ck_assert_int_eq(SN.rc[8], 0);
	ck_assert_int_eq(SN.rc[9], SMARM_ENOCHAN);
}
END_TEST

/*
 * A send by name resolves through its worker's cache while nothing was
 * removed from the registry: every kind of removal (a mailbox replaced
 * or withdrawn, a name unbound, the holder's death) must make the next
 * send resolve again, on whichever worker the sender runs and whichever
 * worker made the change. Each step sends twice (a fill and a hit).
 */
enum { CMD_EXIT, CMD_REGISTER, CMD_UNREGISTER, CMD_PUBLISH, CMD_UNPUBLISH };

struct commanded {
	smarm_chan_t *cmd, *ack; /* ints; cmd: CMD_* * 8 + channel index */
	smarm_chan_t **box;	 /* the channels it may publish */
};

static void commanded_actor(void *arg)
{
	struct commanded *c = arg;
	int cmd, rc;
	while (smarm_chan_recv(c->cmd, &cmd) == 0 && cmd != CMD_EXIT) {
		switch (cmd / 8) {
		case CMD_REGISTER:
			rc = smarm_register("cached", NULL);
			break;
		case CMD_UNREGISTER:
			rc = smarm_unregister("cached");
			break;
		case CMD_PUBLISH:
			rc = smarm_mailbox_publish(int_type(), c->box[cmd % 8]);
			break;
		default:
			rc = smarm_mailbox_unpublish(int_type());
			break;
		}
		HARNESS_EQ(smarm_chan_send(c->ack, &rc), 0);
	}
}

static void command(struct commanded *c, int op, int box)
{
	int cmd = op * 8 + box, rc = -1;
	HARNESS_EQ(smarm_chan_send(c->cmd, &cmd), 0);
	if (op == CMD_EXIT)
		return; /* no answer: the caller joins it */
	HARNESS_EQ(smarm_chan_recv_timeout(c->ack, &rc, MS(10000)), 0);
	HARNESS_EQ(rc, 0);
}

/* Send v twice by name: both return want; with 0, box b got both. */
static void send2(smarm_chan_t **box, int b, int v, int want)
{
	int got;
	for (int k = 0; k < 2; k++)
		HARNESS_EQ(smarm_send_name("cached", int_type(), &v), want);
	for (int i = 0; i < 3; i++) {
		for (int k = 0; k < (want == 0 && i == b ? 2 : 0); k++) {
			HARNESS_EQ(smarm_chan_try_recv(box[i], &got), 0);
			HARNESS_EQ(got, v);
		}
		HARNESS_EQ(smarm_chan_try_recv(box[i], &got), SMARM_EAGAIN);
	}
}

static void cache_root(void *arg)
{
	smarm_chan_t *box[3];
	struct commanded c = { NULL, NULL, box };
	smarm_pid_t a, b;
	(void)arg;
	for (int i = 0; i < 3; i++)
		HARNESS_EQ(smarm_chan_alloc(&box[i], sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&c.cmd, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&c.ack, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&a, commanded_actor, &c, NULL), 0);
	command(&c, CMD_REGISTER, 0);
	command(&c, CMD_PUBLISH, 0);
	send2(box, 0, 1, 0);
	command(&c, CMD_PUBLISH, 1); /* replaced */
	send2(box, 1, 2, 0);
	command(&c, CMD_UNPUBLISH, 0); /* withdrawn */
	send2(box, 0, 3, SMARM_ENOCHAN);
	command(&c, CMD_PUBLISH, 0);
	send2(box, 0, 4, 0);
	command(&c, CMD_UNREGISTER, 0); /* unbound */
	send2(box, 0, 5, SMARM_ENONAME);
	command(&c, CMD_REGISTER, 0);
	send2(box, 0, 6, 0);
	command(&c, CMD_EXIT, 0); /* the holder dies */
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	send2(box, 0, 7, SMARM_ENONAME);
	/* a new holder of the name, with another mailbox */
	HARNESS_EQ(smarm_actor_spawn(&b, commanded_actor, &c, NULL), 0);
	command(&c, CMD_REGISTER, 0);
	command(&c, CMD_PUBLISH, 2);
	send2(box, 2, 8, 0);
	command(&c, CMD_EXIT, 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
	for (int i = 0; i < 3; i++)
		harness_chan_drop(box[i]);
	harness_chan_drop(c.cmd);
	harness_chan_drop(c.ack);
}

/* loop values 0..2: 1, 2 and 4 workers */
START_TEST(test_registry_send_name_cache_sees_every_removal)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1 << _i, cache_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------------- stale_name_slot_reuse */

static struct {
	int rc[8];
	size_t nb;
	smarm_pid_t a, b, where;
} SR;

static void stale_root(void *arg)
{
	struct holder ha = { 0 }, hb = { 0 };
	int v = 0;
	(void)arg;
	holder_start(&ha, "stale", &SR.a);
	await(SMARM_STAT_REG_NAMES, 1);
	holder_end(&ha, SR.a);
	/* max_actors 2: this one reuses the holder's slot */
	holder_start(&hb, "other", &SR.b);
	await(SMARM_STAT_REG_NAMES, 1);
	SR.rc[0] = smarm_whereis("stale", &SR.where);
	SR.rc[1] = smarm_send_name("stale", int_type(), &v);
	SR.rc[2] = smarm_register("stale", NULL);
	SR.rc[3] = smarm_names_of(SR.b, NULL, 0, &SR.nb);
	SR.rc[5] = smarm_unregister("stale");
	holder_end(&hb, SR.b);
}

START_TEST(test_registry_dead_name_with_reused_slot_must_be_re_registrable)
{
	memset(&SR, 0, sizeof SR);
	ck_assert_int_eq(harness_run_ex(1, 2, stale_root, NULL, NULL),
			 SMARM_EXIT_NORMAL);
	ck_assert(!smarm_pid_eq(SR.a, SR.b));
	ck_assert_int_eq(SR.rc[0], SMARM_ENONAME);
	ck_assert(smarm_pid_eq(SR.where, SMARM_PID_NONE));
	ck_assert_int_eq(SR.rc[1], SMARM_ENONAME);
	ck_assert_int_eq(SR.rc[2], 0);
	ck_assert_int_eq(SR.rc[3], 0);
	ck_assert_uint_eq(SR.nb, 1); /* the new tenant holds only its own */
	ck_assert_int_eq(SR.rc[5], 0);
}
END_TEST

/*
 * terminal_outcome_after_death (smarm's tests/terminal_outcome.rs): a
 * registered actor's end is remembered, so a monitor set after it died
 * reports how it really ended; an anonymous actor's gives NOPROC.
 */
static void crasher(void *arg)
{
	if (arg != NULL)
		smarm_register((const char *)arg, NULL);
	smarm_actor_crash(42);
}

static struct {
	smarm_signal_t named, anon;
	int rc[4];
} TO;

static void late_monitor(smarm_pid_t pid, smarm_signal_t *out, int *rc)
{
	smarm_chan_t *ch = NULL;
	uint64_t ref = 0;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof(smarm_signal_t), NULL), 0);
	*rc = smarm_monitor(pid, ch, &ref);
	HARNESS_EQ(smarm_chan_recv_timeout(ch, out, MS(5000)), 0);
	HARNESS_EQ(out->ref, ref);
	harness_chan_drop(ch);
}

static void terminal_root(void *arg)
{
	smarm_pid_t a, b, w;
	int how = -1;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, crasher, "terminal", NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, crasher, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(a, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(smarm_actor_join(b, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	TO.rc[0] = smarm_whereis("terminal", &w);
	late_monitor(a, &TO.named, &TO.rc[1]);
	late_monitor(b, &TO.anon, &TO.rc[2]);
}

START_TEST(test_registry_terminal_outcome_after_death)
{
	memset(&TO, 0, sizeof TO);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, terminal_root, NULL),
			 SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(TO.rc[0], SMARM_ENONAME); /* the name went first */
	ck_assert_int_eq(TO.rc[1], 0);
	ck_assert_int_eq(TO.named.kind, SMARM_SIGNAL_DOWN);
	ck_assert_int_eq(TO.named.how, SMARM_EXIT_CRASHED);
	ck_assert_int_eq(TO.named.reason, 42);
	ck_assert_int_eq(TO.rc[2], 0);
	ck_assert_int_eq(TO.anon.kind, SMARM_SIGNAL_DOWN);
	ck_assert_int_eq(TO.anon.how, SMARM_EXIT_NOPROC);
}
END_TEST

Suite *smarm_test_registry_suite(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("names");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_registry_basics_and_errors);
	tcase_add_test(tc, test_registry_names_of_lists_in_order);
	tcase_add_test(tc, test_registry_outside_actor_is_enotactor);
	tcase_add_test(tc, test_registry_send_name_follows_reregister);
	tcase_add_loop_test(
		tc, test_registry_send_name_cache_sees_every_removal, 0, 3);
	tcase_add_test(
		tc,
		test_registry_dead_name_with_reused_slot_must_be_re_registrable);
	tcase_add_test(tc, test_registry_terminal_outcome_after_death);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(registry)
