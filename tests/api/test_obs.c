/* SPDX-License-Identifier: MIT */
/*
 * test_obs.c - introspection (abi/smarm/obs.h): a snapshot taken while
 * actors spawn and end on every worker is coherent per actor (valid
 * states, slot order, no pid twice, every long-lived actor there with
 * its name), from an actor and from a plain thread at once; a dead pid
 * has no record and an ended, unjoined one is DONE; names, links,
 * monitors, monitored-by, the trap flag and the wait are reported as
 * set; a gen_server's behaviour, plugin, name and mailbox, and a
 * gen_statem's state name; the supervision fold of a nested supervisor puts
 * each child under its supervisor and the spawn fold visits every actor once;
 * the calls' misuse errors; the socket is made owner-only whatever the umask,
 * serves its owner every request of the protocol, refuses a peer of another
 * user, never replaces a file that is not a socket, and is removed at close.
 */
#include "harness.h"
#include "sup_kids.h"

#include <smarm/smarm_plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static smarm_actor_info_t info_new(void)
{
	smarm_actor_info_t i;
	memset(&i, 0xa5, sizeof i);
	i.size = sizeof i;
	return i;
}

/* Send one int into ch (a plain thread's or an actor's signal). */
static void poke(smarm_chan_t *ch)
{
	int v = 1;
	HARNESS_EQ(smarm_chan_send(ch, &v), 0);
}

/* ------------------------------------------------------------ errors */

static void root_errors(void *arg)
{
	smarm_snapshot_t *snap = NULL;
	smarm_actor_info_t in = info_new();
	smarm_pid_t buf[2];
	size_t n = 99, idx = 0;
	(void)arg;
	HARNESS_EQ(smarm_snapshot_take(NULL, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_snapshot_take(NULL, &snap), 0);
	HARNESS_CHECK(smarm_snapshot_count(snap) >= 1); /* the root */
	HARNESS_EQ(smarm_snapshot_get(NULL, 0, &in), SMARM_EINVAL);
	HARNESS_EQ(smarm_snapshot_get(snap, 0, NULL), SMARM_EINVAL);
	in.size = SMARM_ACTOR_INFO_SIZE_V1 - 1;
	HARNESS_EQ(smarm_snapshot_get(snap, 0, &in), SMARM_EINVAL);
	in.size = sizeof in;
	HARNESS_EQ(smarm_snapshot_get(snap, smarm_snapshot_count(snap), &in),
		   SMARM_ENOENT);
	HARNESS_EQ(smarm_snapshot_find(snap, SMARM_PID_NONE, &idx),
		   SMARM_ENOPROC);
	HARNESS_EQ(smarm_snapshot_find(NULL, smarm_actor_self(), &idx),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_snapshot_find(snap, smarm_actor_self(), NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_snapshot_tree(snap, 0, NULL, NULL), SMARM_EINVAL);
	HARNESS_EQ(smarm_snapshot_tree(snap, 7, (smarm_tree_cb)1, NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_snapshot_tree(NULL, SMARM_TREE_SPAWN, (smarm_tree_cb)1,
				       NULL),
		   SMARM_EINVAL);
	smarm_snapshot_free(snap);
	smarm_snapshot_free(NULL);
	HARNESS_EQ(smarm_snapshot_count(NULL), 0);

	HARNESS_EQ(smarm_actor_info(NULL, smarm_actor_self(), NULL),
		   SMARM_EINVAL);
	in.size = 8;
	HARNESS_EQ(smarm_actor_info(NULL, smarm_actor_self(), &in),
		   SMARM_EINVAL);
	in.size = sizeof in;
	HARNESS_EQ(smarm_actor_info(NULL, SMARM_PID_NONE, &in), SMARM_ENOPROC);
	HARNESS_EQ(
		smarm_actor_relations(NULL, smarm_actor_self(), 0, buf, 2, &n),
		SMARM_EINVAL);
	HARNESS_EQ(smarm_actor_relations(NULL, smarm_actor_self(),
					 SMARM_REL_LINKS, NULL, 2, &n),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_actor_relations(NULL, smarm_actor_self(),
					 SMARM_REL_LINKS, buf, 2, NULL),
		   SMARM_EINVAL);
	HARNESS_EQ(smarm_actor_relations(NULL, SMARM_PID_NONE, SMARM_REL_LINKS,
					 buf, 2, &n),
		   SMARM_ENOPROC);
	HARNESS_EQ(smarm_actor_relations(NULL, smarm_actor_self(),
					 SMARM_REL_LINKS, NULL, 0, &n),
		   0);
	HARNESS_EQ(n, 0);
}

START_TEST(test_obs_misuse_returns_errors)
{
	smarm_snapshot_t *snap = NULL;
	smarm_actor_info_t in = info_new();
	smarm_config_t *cfg = NULL;
	size_t n;
	char longpath[200];
	/* Outside an actor, a NULL node names nothing. */
	ck_assert_int_eq(smarm_snapshot_take(NULL, &snap), SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_info(NULL, (smarm_pid_t){ 1 }, &in),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_actor_relations(NULL, (smarm_pid_t){ 1 },
					       SMARM_REL_LINKS, NULL, 0, &n),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(smarm_config_set_obs_socket(NULL, "x"), SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	memset(longpath, 'a', sizeof longpath - 1);
	longpath[sizeof longpath - 1] = '\0';
	ck_assert_int_eq(smarm_config_set_obs_socket(cfg, longpath),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_config_set_obs_socket(cfg, NULL), 0);
	ck_assert_int_eq(smarm_config_set_obs_socket(cfg, ""), 0);
	smarm_config_free(cfg);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_errors, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------ one actor */

static void quick(void *arg)
{
	(void)arg;
}

static void sleeper(void *arg)
{
	(void)arg;
	smarm_actor_sleep(MS(60000));
}

/* Poll pid's record until it is in state (bounded: 10 s, scaled). */
static void await_state(smarm_pid_t pid, int state, smarm_actor_info_t *in)
{
	uint64_t t0 = smarm_now_ns();
	while (harness_since(t0) < (uint64_t)(10e9 * harness_time_scale())) {
		HARNESS_EQ(smarm_actor_info(NULL, pid, in), 0);
		if (in->state == state)
			return;
		smarm_actor_sleep(MS(1));
	}
}

static void root_dead(void *arg)
{
	smarm_actor_info_t in = info_new();
	smarm_pid_t p, q;
	int how;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&p, quick, NULL, NULL), 0);
	/* Ended, not joined: DONE, still reported. */
	while (smarm_actor_is_alive(p))
		smarm_actor_yield();
	await_state(p, SMARM_ACTOR_DONE, &in);
	HARNESS_EQ(in.state, SMARM_ACTOR_DONE);
	HARNESS_EQ(in.pid.id, p.id);
	HARNESS_EQ(in.version, SMARM_OBS_FORMAT_VERSION);
	HARNESS_EQ(in.size, sizeof in);
	HARNESS_EQ(smarm_actor_join(p, &how, NULL), 0);
	/* Joined: gone, and the slot's next tenant is not it. */
	HARNESS_EQ(smarm_actor_info(NULL, p, &in), SMARM_ENOPROC);
	HARNESS_EQ(smarm_actor_spawn(&q, sleeper, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_info(NULL, p, &in), SMARM_ENOPROC);
	/* A forged pid: an index far beyond the table. */
	HARNESS_EQ(smarm_actor_info(
			   NULL, (smarm_pid_t){ (1ull << 32) | 0xfffff }, &in),
		   SMARM_ENOPROC);
	/* A sleeper is parked with a deadline: a sleep (format 2), timed
	 * for a version 1 record. */
	await_state(q, SMARM_ACTOR_PARKED, &in);
	HARNESS_EQ(in.state, SMARM_ACTOR_PARKED);
	HARNESS_EQ(in.wait, SMARM_WAIT_SLEEP);
	{
		smarm_actor_info_t v1 = info_new();
		v1.size = SMARM_ACTOR_INFO_SIZE_V1;
		HARNESS_EQ(smarm_actor_info(NULL, q, &v1), 0);
		HARNESS_EQ(v1.wait, SMARM_WAIT_TIMED);
		HARNESS_EQ(v1.version, 1);
	}
	HARNESS_CHECK(in.wait_deadline_ns > smarm_now_ns());
	HARNESS_EQ(in.parent.id, smarm_actor_self().id);
	HARNESS_CHECK(in.stack_reserve >= 4096);
	HARNESS_CHECK(in.waits >= 1);
	HARNESS_EQ(in.mailbox_depth, -1);
	/* The caller itself is running. */
	HARNESS_EQ(smarm_actor_info(NULL, smarm_actor_self(), &in), 0);
	HARNESS_EQ(in.state, SMARM_ACTOR_RUNNING);
	HARNESS_CHECK(in.flags & SMARM_ACTOR_ROOT);
	HARNESS_EQ(smarm_actor_stop(q), 0);
	HARNESS_EQ(smarm_actor_join(q, &how, NULL), 0);
	HARNESS_EQ(smarm_actor_info(NULL, q, &in), SMARM_ENOPROC);
}

START_TEST(test_obs_info_dead_pid_returns_enoproc)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_dead, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------------------- names, links, monitors */

struct rel {
	smarm_pid_t a, b;
	smarm_chan_t *ready; /* ints: each actor says it is set up */
	smarm_node_t *node;
	_Atomic int thread_ok;
};

static void rel_a(void *arg)
{
	struct rel *r = arg;
	smarm_chan_t *trap = harness_sig_chan();
	smarm_cleanup_push(harness_chan_drop_cb, trap);
	HARNESS_EQ(smarm_register("obs_alpha", NULL), 0);
	HARNESS_EQ(smarm_register("obs_alpha2", NULL), 0);
	HARNESS_EQ(smarm_trap_exit(trap), 0);
	poke(r->ready);
	harness_park();
}

static void rel_b(void *arg)
{
	struct rel *r = arg;
	smarm_chan_t *mon = harness_sig_chan();
	uint64_t ref;
	smarm_cleanup_push(harness_chan_drop_cb, mon);
	HARNESS_EQ(smarm_link(r->a), 0);
	HARNESS_EQ(smarm_monitor(r->a, mon, &ref), 0);
	HARNESS_EQ(smarm_monitor(r->a, mon, &ref), 0);
	poke(r->ready);
	harness_park();
}

/* From a plain thread: the same facts, through the node handle. */
static void *rel_thread(void *arg)
{
	struct rel *r = arg;
	smarm_actor_info_t in = info_new();
	smarm_snapshot_t *snap = NULL;
	size_t i;
	int ok = smarm_actor_info(r->node, r->a, &in) == 0 &&
		 strcmp(in.name, "obs_alpha") == 0 && in.links == 1 &&
		 in.monitored_by == 2;
	ok = ok && smarm_snapshot_take(r->node, &snap) == 0 &&
	     smarm_snapshot_find(snap, r->b, &i) == 0 &&
	     smarm_snapshot_get(snap, i, &in) == 0 && in.monitors == 2 &&
	     in.links == 1;
	smarm_snapshot_free(snap);
	atomic_store(&r->thread_ok, ok ? 1 : -1);
	poke(r->ready);
	return NULL;
}

static void root_rel(void *arg)
{
	struct rel *r = arg;
	smarm_actor_info_t in = info_new();
	smarm_pid_t buf[4];
	size_t n = 0;
	int v;
	pthread_t th;
	HARNESS_EQ(smarm_chan_alloc(&r->ready, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&r->a, rel_a, r, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(r->ready, &v), 0);
	HARNESS_EQ(smarm_actor_spawn(&r->b, rel_b, r, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(r->ready, &v), 0);

	HARNESS_EQ(smarm_actor_info(NULL, r->a, &in), 0);
	HARNESS_EQ(in.names, 2);
	HARNESS_CHECK(strcmp(in.name, "obs_alpha") == 0);
	HARNESS_EQ(in.links, 1);
	HARNESS_EQ(in.monitors, 0);
	HARNESS_EQ(in.monitored_by, 2);
	HARNESS_CHECK(in.flags & SMARM_ACTOR_TRAPS_EXITS);
	HARNESS_CHECK(!(in.flags & SMARM_ACTOR_SERVER));
	HARNESS_EQ(in.behaviour[0], '\0');

	HARNESS_EQ(smarm_actor_info(NULL, r->b, &in), 0);
	HARNESS_EQ(in.names, 0);
	HARNESS_EQ(in.name[0], '\0');
	HARNESS_EQ(in.links, 1);
	HARNESS_EQ(in.monitors, 2);
	HARNESS_EQ(in.monitored_by, 0);
	HARNESS_CHECK(!(in.flags & SMARM_ACTOR_TRAPS_EXITS));

	HARNESS_EQ(
		smarm_actor_relations(NULL, r->a, SMARM_REL_LINKS, buf, 4, &n),
		0);
	HARNESS_EQ(n, 1);
	HARNESS_EQ(buf[0].id, r->b.id);
	HARNESS_EQ(smarm_actor_relations(NULL, r->a, SMARM_REL_MONITORED_BY,
					 buf, 1, &n),
		   0);
	HARNESS_EQ(n, 2); /* two monitors, room for one */
	HARNESS_EQ(buf[0].id, r->b.id);
	HARNESS_EQ(smarm_actor_relations(NULL, r->b, SMARM_REL_MONITORS, buf, 4,
					 &n),
		   0);
	HARNESS_EQ(n, 2);
	HARNESS_EQ(buf[1].id, r->a.id);
	HARNESS_EQ(
		smarm_actor_relations(NULL, r->b, SMARM_REL_LINKS, buf, 4, &n),
		0);
	HARNESS_EQ(n, 1);
	HARNESS_EQ(buf[0].id, r->a.id);

	/* The same from a thread that is no actor. */
	r->node = smarm_node_current();
	HARNESS_EQ(pthread_create(&th, NULL, rel_thread, r), 0);
	HARNESS_EQ(smarm_chan_recv(r->ready, &v), 0);
	HARNESS_EQ(pthread_join(th, NULL), 0);
	HARNESS_EQ(atomic_load(&r->thread_ok), 1);

	/* Unlinked and ended: the counts follow. */
	HARNESS_EQ(smarm_actor_stop(r->b), 0);
	HARNESS_EQ(smarm_actor_join(r->b, &v, NULL), 0);
	HARNESS_EQ(smarm_actor_info(NULL, r->a, &in), 0);
	HARNESS_EQ(in.links, 0);
	HARNESS_EQ(in.monitored_by, 0);
	HARNESS_EQ(
		smarm_actor_relations(NULL, r->b, SMARM_REL_LINKS, buf, 4, &n),
		SMARM_ENOPROC);
	HARNESS_EQ(smarm_actor_stop(r->a), 0);
	HARNESS_EQ(smarm_actor_join(r->a, &v, NULL), 0);
	HARNESS_EQ(smarm_actor_info(NULL, r->a, &in), SMARM_ENOPROC);
	harness_chan_drop(r->ready);
}

START_TEST(test_obs_names_links_monitors_reported)
{
	struct rel r;
	memset(&r, 0, sizeof r);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_rel, &r), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ---------------------------------------------------- supervision tree */

static void body_run(void *arg)
{
	HARNESS_EQ(smarm_sup_run(arg), 0); /* returns only on misuse */
}

struct seen {
	smarm_pid_t pid[16];
	unsigned depth[16];
	uint32_t flags[16];
	int n;
	size_t visits;
};

static int fold_cb(void *arg, const smarm_snapshot_t *snap, size_t index,
		   unsigned depth, bool orphaned)
{
	struct seen *s = arg;
	smarm_actor_info_t in = info_new();
	(void)orphaned;
	HARNESS_EQ(smarm_snapshot_get(snap, index, &in), 0);
	if (s->n < 16) {
		s->pid[s->n] = in.pid;
		s->depth[s->n] = depth;
		s->flags[s->n] = in.flags;
	}
	s->n++;
	return 0;
}

static int count_cb(void *arg, const smarm_snapshot_t *snap, size_t index,
		    unsigned depth, bool orphaned)
{
	(void)snap;
	(void)index;
	(void)depth;
	(void)orphaned;
	((struct seen *)arg)->visits++;
	return 0;
}

/* The depth the fold gave pid, -1 if it did not visit it. */
static int depth_of(const struct seen *s, uint64_t pid)
{
	for (int i = 0; i < s->n && i < 16; i++)
		if (s->pid[i].id == pid)
			return (int)s->depth[i];
	return -1;
}

static void root_tree(void *arg)
{
	smarm_sup_spec_t *top = NULL, *sub = NULL;
	struct kid *w1 = kid_new(1, KID_PARK), *w2 = kid_new(2, KID_PARK);
	struct kid *w3 = kid_new(3, KID_PARK), *s = kid_new(4, KID_SUB);
	smarm_snapshot_t *snap = NULL;
	struct seen seen;
	smarm_pid_t sup;
	smarm_actor_info_t in = info_new();
	size_t i;
	int how;
	(void)arg;
	HARNESS_EQ(smarm_sup_spec_alloc(&sub), 0);
	kid_add(sub, "w1", w1);
	kid_add(sub, "w2", w2);
	s->sub = sub;
	HARNESS_EQ(smarm_sup_spec_alloc(&top), 0);
	HARNESS_EQ(smarm_sup_spec_add_child(top, "sub", kid_body, s,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_INFINITY),
		   0);
	kid_add(top, "w3", w3);
	HARNESS_EQ(smarm_actor_spawn(&sup, body_run, top, NULL), 0);
	HARNESS_CHECK(kid_await(&w1->starts, 1));
	HARNESS_CHECK(kid_await(&w2->starts, 1));
	HARNESS_CHECK(kid_await(&w3->starts, 1));

	HARNESS_EQ(smarm_snapshot_take(NULL, &snap), 0);
	memset(&seen, 0, sizeof seen);
	HARNESS_EQ(smarm_snapshot_tree(snap, SMARM_TREE_SUPERVISION, fold_cb,
				       &seen),
		   0);
	HARNESS_EQ(seen.n, 5); /* top, sub, w1, w2, w3: not the root */
	HARNESS_EQ(depth_of(&seen, sup.id), 0);
	HARNESS_EQ(depth_of(&seen, atomic_load(&s->pid)), 1);
	HARNESS_EQ(depth_of(&seen, atomic_load(&w3->pid)), 1);
	HARNESS_EQ(depth_of(&seen, atomic_load(&w1->pid)), 2);
	HARNESS_EQ(depth_of(&seen, atomic_load(&w2->pid)), 2);
	HARNESS_EQ(seen.pid[0].id, sup.id); /* pre-order: the root first */
	HARNESS_CHECK(seen.flags[0] & SMARM_ACTOR_SUPERVISOR);
	HARNESS_EQ(smarm_snapshot_find(
			   snap, (smarm_pid_t){ atomic_load(&s->pid) }, &i),
		   0);
	HARNESS_EQ(smarm_snapshot_get(snap, i, &in), 0);
	HARNESS_CHECK(in.flags & SMARM_ACTOR_SUPERVISOR);
	HARNESS_CHECK(strcmp(in.behaviour, "supervisor") == 0);
	HARNESS_EQ(in.parent.id, sup.id);
	HARNESS_EQ(in.wait, SMARM_WAIT_RECEIVE);
	HARNESS_CHECK(in.mailbox_depth >= 0);
	/* A sub-supervisor's child (spawned by it) is under it, not
	 * under the top. */
	HARNESS_EQ(smarm_snapshot_find(
			   snap, (smarm_pid_t){ atomic_load(&w1->pid) }, &i),
		   0);
	HARNESS_EQ(smarm_snapshot_get(snap, i, &in), 0);
	HARNESS_EQ(in.parent.id, atomic_load(&s->pid));
	/* The spawn fold visits every actor once. */
	memset(&seen, 0, sizeof seen);
	HARNESS_EQ(smarm_snapshot_tree(snap, SMARM_TREE_SPAWN, count_cb, &seen),
		   0);
	HARNESS_EQ(seen.visits, smarm_snapshot_count(snap));
	HARNESS_EQ(smarm_snapshot_tree(snap, SMARM_TREE_SPAWN, fold_cb, &seen),
		   0);
	HARNESS_EQ(seen.pid[0].id, smarm_actor_self().id); /* the root */
	HARNESS_EQ(seen.depth[0], 0);
	smarm_snapshot_free(snap);

	HARNESS_EQ(exit_and_await(sup, SMARM_EXIT_SHUTDOWN, 0, NULL),
		   SMARM_EXIT_SHUTDOWN);
	HARNESS_EQ(smarm_actor_join(sup, &how, NULL), 0);
	smarm_sup_spec_free(top);
	smarm_sup_spec_free(sub);
	free(w1);
	free(w2);
	free(w3);
	free(s);
}

START_TEST(test_obs_tree_nested_supervisor_folds)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_tree, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* An orphan re-roots: its parent ended before the snapshot. */
static void orphan_kid(void *arg)
{
	poke(arg);
	harness_park();
}

static void orphan_parent(void *arg)
{
	smarm_pid_t p;
	HARNESS_EQ(smarm_actor_spawn(&p, orphan_kid, arg, NULL), 0);
	HARNESS_EQ(smarm_actor_detach(p), 0);
}

static int orphan_cb(void *arg, const smarm_snapshot_t *snap, size_t index,
		     unsigned depth, bool orphaned)
{
	smarm_actor_info_t in = info_new();
	(void)depth;
	HARNESS_EQ(smarm_snapshot_get(snap, index, &in), 0);
	if (orphaned)
		*(uint64_t *)arg = in.pid.id;
	return 0;
}

static void root_orphan(void *arg)
{
	smarm_chan_t *ch = NULL;
	smarm_snapshot_t *snap = NULL;
	smarm_pid_t par, kid = SMARM_PID_NONE;
	uint64_t orphan = 0;
	int v, how;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&par, orphan_parent, ch, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(ch, &v), 0);
	HARNESS_EQ(smarm_actor_join(par, &how, NULL), 0);
	HARNESS_EQ(smarm_snapshot_take(NULL, &snap), 0);
	HARNESS_EQ(
		smarm_snapshot_tree(snap, SMARM_TREE_SPAWN, orphan_cb, &orphan),
		0);
	HARNESS_CHECK(orphan != 0);
	kid.id = orphan;
	smarm_snapshot_free(snap);
	HARNESS_EQ(smarm_actor_stop(kid), 0);
	harness_chan_drop(ch);
}

START_TEST(test_obs_tree_orphan_is_root)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_orphan, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
}
END_TEST

/* ------------------------------------------------------------- load */

#define LOAD_PARKED 64
#define LOAD_CHURNERS 6
#define LOAD_SNAPS 150
#define LOAD_CHURN 4000	     /* actors the churners end during the snapshots */
#define LOAD_THREAD_SNAPS 20 /* snapshots the plain thread takes meanwhile */

struct load {
	smarm_pid_t parked[LOAD_PARKED];
	smarm_node_t *node;
	_Atomic int stop;
	_Atomic int churned;
	_Atomic int thread_snaps;
	_Atomic int bad_line;
	smarm_chan_t *done; /* ints: a churner or the thread ended */
};

static void load_parked(void *arg)
{
	char name[32];
	snprintf(name, sizeof name, "obs_p%d", (int)(intptr_t)arg);
	HARNESS_EQ(smarm_register(name, NULL), 0);
	harness_park();
}

static void churn_kid(void *arg)
{
	if ((uintptr_t)arg & 1)
		smarm_actor_yield();
}

static void load_churner(void *arg)
{
	struct load *l = arg;
	uintptr_t i = 0;
	while (!atomic_load(&l->stop)) {
		smarm_pid_t p[8];
		int how;
		for (int k = 0; k < 8; k++)
			HARNESS_EQ(smarm_actor_spawn(&p[k], churn_kid,
						     (void *)(i++), NULL),
				   0);
		for (int k = 0; k < 8; k++)
			HARNESS_EQ(smarm_actor_join(p[k], &how, NULL), 0);
		atomic_fetch_add(&l->churned, 8);
	}
	poke(l->done);
}

/* Check one snapshot; returns the line of the first failure, 0 if none. */
static int load_check(struct load *l, smarm_snapshot_t *snap)
{
	size_t n = smarm_snapshot_count(snap);
	uint32_t last = 0;
	int found = 0;
	smarm_actor_info_t in = info_new();
	for (size_t i = 0; i < n; i++) {
		size_t j;
		uint32_t idx;
		if (smarm_snapshot_get(snap, i, &in) != 0)
			return __LINE__;
		idx = (uint32_t)in.pid.id & 0xffffff;
		if (in.pid.id == 0 || in.state < SMARM_ACTOR_QUEUED ||
		    in.state > SMARM_ACTOR_DONE)
			return __LINE__;
		if (i > 0 && idx <= last)
			return __LINE__; /* slot order, each slot once */
		last = idx;
		if (smarm_snapshot_find(snap, in.pid, &j) != 0 || j != i)
			return __LINE__;
		if (in.wait != SMARM_WAIT_NONE &&
		    in.state != SMARM_ACTOR_PARKED)
			return __LINE__;
		for (int k = 0; k < LOAD_PARKED; k++) {
			char name[32];
			if (in.pid.id != l->parked[k].id)
				continue;
			snprintf(name, sizeof name, "obs_p%d", k);
			if (strcmp(in.name, name) != 0 || in.names != 1)
				return __LINE__;
			found++;
		}
	}
	return found == LOAD_PARKED ? 0 : __LINE__;
}

static void *load_thread(void *arg)
{
	struct load *l = arg;
	while (!atomic_load(&l->stop)) {
		smarm_snapshot_t *snap = NULL;
		int line;
		if (smarm_snapshot_take(l->node, &snap) != 0) {
			atomic_store(&l->bad_line, __LINE__);
			break;
		}
		line = load_check(l, snap);
		if (line != 0)
			atomic_store(&l->bad_line, line);
		smarm_snapshot_free(snap);
		atomic_fetch_add(&l->thread_snaps, 1);
	}
	poke(l->done);
	return NULL;
}

static void root_load(void *arg)
{
	struct load *l = arg;
	pthread_t th;
	uint64_t t0;
	int v, how;
	HARNESS_EQ(smarm_chan_alloc(&l->done, sizeof v, NULL), 0);
	for (int k = 0; k < LOAD_PARKED; k++)
		HARNESS_EQ(smarm_actor_spawn(&l->parked[k], load_parked,
					     (void *)(intptr_t)k, NULL),
			   0);
	/* Every name registered before the first look. */
	for (int k = 0; k < LOAD_PARKED; k++) {
		char name[32];
		smarm_pid_t p;
		snprintf(name, sizeof name, "obs_p%d", k);
		while (smarm_whereis(name, &p) != 0)
			smarm_actor_yield();
	}
	for (int k = 0; k < LOAD_CHURNERS; k++)
		HARNESS_EQ(smarm_actor_spawn(NULL, load_churner, l, NULL), 0);
	l->node = smarm_node_current();
	HARNESS_EQ(pthread_create(&th, NULL, load_thread, l), 0);
	/* Snapshots until the churners have ended thousands of actors
	 * and the thread took its own meanwhile (bounded: 20 s, scaled). */
	t0 = smarm_now_ns();
	for (int i = 0;
	     i < LOAD_SNAPS || atomic_load(&l->churned) < LOAD_CHURN ||
	     atomic_load(&l->thread_snaps) < LOAD_THREAD_SNAPS;
	     i++) {
		smarm_snapshot_t *snap = NULL;
		if (harness_since(t0) > (uint64_t)(20e9 * harness_time_scale()))
			break;
		int line;
		HARNESS_EQ(smarm_snapshot_take(NULL, &snap), 0);
		line = load_check(l, snap);
		if (line != 0)
			atomic_store(&l->bad_line, line);
		smarm_snapshot_free(snap);
		smarm_actor_yield();
	}
	atomic_store(&l->stop, 1);
	for (int k = 0; k < LOAD_CHURNERS + 1; k++)
		HARNESS_EQ(smarm_chan_recv(l->done, &v), 0);
	HARNESS_EQ(pthread_join(th, NULL), 0);
	for (int k = 0; k < LOAD_PARKED; k++) {
		HARNESS_EQ(smarm_actor_stop(l->parked[k]), 0);
		HARNESS_EQ(smarm_actor_join(l->parked[k], &how, NULL), 0);
	}
	harness_chan_drop(l->done);
}

START_TEST(test_obs_snapshot_under_churn_is_coherent)
{
	struct load *l = calloc(1, sizeof *l);
	ck_assert_ptr_nonnull(l);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(4, root_load, l), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&l->bad_line), 0);
	ck_assert_int_ge(atomic_load(&l->churned), LOAD_CHURN);
	ck_assert_int_ge(atomic_load(&l->thread_snaps), LOAD_THREAD_SNAPS);
	free(l);
}
END_TEST

/* ----------------------------------------------------------- servers */

struct bhv_case {
	const smarm_behaviour_t *counter, *door;
};

static void root_bhv(void *arg)
{
	struct bhv_case *bc = arg;
	smarm_server_t *sv = NULL, *sm = NULL;
	smarm_actor_info_t in = info_new();
	smarm_pid_t ps, pm;
	int rc;
	HARNESS_EQ(smarm_server_start(bc->counter, NULL, "obs_counter", &sv),
		   0);
	HARNESS_EQ(smarm_server_start(bc->door, "code=7", NULL, &sm), 0);
	if (sv == NULL || sm == NULL)
		return;
	HARNESS_EQ(smarm_server_pid(sv, &ps), 0);
	HARNESS_EQ(smarm_server_pid(sm, &pm), 0);

	await_state(ps, SMARM_ACTOR_PARKED, &in);
	HARNESS_CHECK(in.flags & SMARM_ACTOR_SERVER);
	HARNESS_CHECK(!(in.flags & SMARM_ACTOR_MACHINE));
	HARNESS_CHECK(strcmp(in.behaviour, "counter") == 0);
	HARNESS_CHECK(strcmp(in.plugin, "counter") == 0);
	HARNESS_CHECK(strcmp(in.name, "obs_counter") == 0);
	HARNESS_EQ(in.names, 1);
	HARNESS_EQ(in.state_name[0], '\0');
	HARNESS_EQ(in.wait, SMARM_WAIT_RECEIVE);
	HARNESS_EQ(in.mailbox_depth, 0); /* its inbox, published */

	await_state(pm, SMARM_ACTOR_PARKED, &in);
	HARNESS_CHECK(in.flags & SMARM_ACTOR_MACHINE);
	HARNESS_CHECK(strcmp(in.behaviour, "door") == 0);
	HARNESS_CHECK(strcmp(in.plugin, "door") == 0);
	HARNESS_CHECK(strcmp(in.state_name, "Closed") == 0 ||
		      strcmp(in.state_name, "Open") == 0 ||
		      strcmp(in.state_name, "Locked") == 0);
	HARNESS_EQ(in.wait, SMARM_WAIT_RECEIVE);

	HARNESS_EQ(smarm_server_shutdown(sv, SMARM_NO_TIMEOUT, NULL), 0);
	HARNESS_EQ(smarm_server_shutdown(sm, SMARM_NO_TIMEOUT, NULL), 0);
	/* Ended: gone, or still on its way out (its exit hooks send the
	 * Down the shutdown waited for; then DONE until its slot is
	 * reclaimed), never a live server again. */
	rc = smarm_actor_info(NULL, ps, &in);
	HARNESS_CHECK(rc == SMARM_ENOPROC ||
		      (rc == 0 && (in.state == SMARM_ACTOR_DONE ||
				   (in.flags & SMARM_ACTOR_EXITING))));
	if (rc == 0)
		HARNESS_CHECK(!(in.flags & SMARM_ACTOR_SERVER));
	smarm_server_free(sv);
	smarm_server_free(sm);
}

START_TEST(test_obs_servers_report_behaviour_and_state)
{
	struct bhv_case bc;
	smarm_plugin_t *pc = NULL, *pd = NULL;
	char msg[256];
	const char *cp = getenv("SMARM_TEST_COUNTER");
	const char *dp = getenv("SMARM_TEST_DOOR");
	ck_assert_ptr_nonnull(cp);
	ck_assert_ptr_nonnull(dp);
	ck_assert_int_eq(smarm_plugin_open(cp, &pc, msg, sizeof msg), 0);
	ck_assert_int_eq(smarm_plugin_open(dp, &pd, msg, sizeof msg), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pc, "counter", &bc.counter), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pd, "door", &bc.door), 0);
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, root_bhv, &bc), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(smarm_plugin_close(pc), 0);
	ck_assert_int_eq(smarm_plugin_close(pd), 0);
}
END_TEST

/* ------------------------------------------------------------ socket */

static int sock_connect(const char *path)
{
	struct sockaddr_un a;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send one request line; read one answer line into buf (cap bytes).
 * Returns its length, 0 at end of stream (refused), -1 on error. */
static ssize_t sock_ask(int fd, const char *req, char *buf, size_t cap)
{
	size_t n = 0;
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
		return -1;
	while (n < cap - 1) {
		ssize_t r = recv(fd, buf + n, 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return (ssize_t)n;
}

struct sock_case {
	char path[108];
	smarm_chan_t *done;
	const smarm_behaviour_t *counter; /* a server to ask about */
	char server_req[64];		  /* "actor <its id>\n" */
	_Atomic int line; /* the client's first failure, 0: none */
};

#define SOCK_CHECK(sc, c)                                                      \
	do {                                                                   \
		int zero_ = 0;                                                 \
		if (!(c))                                                      \
			atomic_compare_exchange_strong(&(sc)->line, &zero_,    \
						       __LINE__);              \
	} while (0)

static void *sock_client(void *arg)
{
	struct sock_case *sc = arg;
	char *buf = malloc(1 << 20);
	int fd = sock_connect(sc->path);
	SOCK_CHECK(sc, fd >= 0 && buf != NULL);
	if (fd >= 0 && buf != NULL) {
		SOCK_CHECK(sc, sock_ask(fd, "hello\n", buf, 1 << 20) > 0);
		SOCK_CHECK(sc, strstr(buf, "\"v\":3") != NULL);
		SOCK_CHECK(sc, sock_ask(fd, "stats\n", buf, 1 << 20) > 0);
		SOCK_CHECK(sc, strstr(buf, "\"LIVE_ACTORS\":") != NULL);
		SOCK_CHECK(sc, sock_ask(fd, "snapshot\n", buf, 1 << 20) > 0);
		SOCK_CHECK(sc, strstr(buf, "\"name\":\"obs_sock\"") != NULL);
		SOCK_CHECK(sc, sock_ask(fd, "tree spawn\n", buf, 1 << 20) > 0);
		SOCK_CHECK(sc, strstr(buf, "\"tree\":[{\"depth\":0") != NULL);
		SOCK_CHECK(sc, sock_ask(fd, "frobnicate\n", buf, 1 << 20) > 0);
		SOCK_CHECK(sc, strstr(buf, "\"error\"") != NULL);
		SOCK_CHECK(sc, sock_ask(fd, "actor 1.1\n", buf, 1 << 20) > 0);
		SOCK_CHECK(sc, strstr(buf, "\"links\":[") != NULL);
		SOCK_CHECK(sc, strstr(buf, "\"state_text\"") == NULL);
		/* A server's answer has its format_status text. */
		SOCK_CHECK(sc, sock_ask(fd, sc->server_req, buf, 1 << 20) > 0);
		SOCK_CHECK(sc, strstr(buf, "\"state_text\":\"count 4 (start "
					   "4)\"") != NULL);
		close(fd);
	}
	free(buf);
	poke(sc->done);
	return NULL;
}

static void root_sock(void *arg)
{
	struct sock_case *sc = arg;
	smarm_server_t *srv = NULL;
	pthread_t th;
	smarm_pid_t p, sp;
	int v, how;
	HARNESS_EQ(smarm_chan_alloc(&sc->done, sizeof v, NULL), 0);
	HARNESS_EQ(
		smarm_actor_spawn(&p, load_parked, (void *)(intptr_t)0, NULL),
		0);
	HARNESS_EQ(smarm_register("obs_sock", NULL), 0);
	HARNESS_EQ(smarm_server_start(sc->counter, "4", NULL, &srv), 0);
	HARNESS_EQ(smarm_server_pid(srv, &sp), 0);
	snprintf(sc->server_req, sizeof sc->server_req, "actor %llu\n",
		 (unsigned long long)sp.id);
	HARNESS_EQ(pthread_create(&th, NULL, sock_client, sc), 0);
	HARNESS_EQ(smarm_chan_recv(sc->done, &v), 0);
	HARNESS_EQ(pthread_join(th, NULL), 0);
	HARNESS_EQ(smarm_server_shutdown(srv, SMARM_NO_TIMEOUT, NULL), 0);
	smarm_server_free(srv);
	HARNESS_EQ(smarm_actor_stop(p), 0);
	HARNESS_EQ(smarm_actor_join(p, &how, NULL), 0);
	harness_chan_drop(sc->done);
}

static smarm_node_t *sock_node(const char *path, int *rc)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, SMARM_OPT_WORKERS,
					      harness_workers(2)),
			 0);
	ck_assert_int_eq(smarm_config_set_obs_socket(cfg, path), 0);
	*rc = smarm_node_open(&node, cfg);
	smarm_config_free(cfg);
	return node;
}

START_TEST(test_obs_socket_serves_owner_only)
{
	char dir[] = "/tmp/smarm-obs-test.XXXXXX";
	struct sock_case *sc = calloc(1, sizeof *sc);
	smarm_node_t *node;
	struct stat st;
	mode_t old;
	int rc, how = -1;
	smarm_plugin_t *pc = NULL;
	char msg[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sc->path, sizeof sc->path, "%s/node.sock", dir);
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_COUNTER"), &pc,
					   msg, sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pc, "counter", &sc->counter),
			 0);
	/* Owner-only whatever the umask. */
	old = umask(0);
	node = sock_node(sc->path, &rc);
	umask(old);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(lstat(sc->path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(node, root_sock, sc, &how, NULL), 0);
	harness_checks_assert();
	ck_assert_int_eq(atomic_load(&sc->line), 0);
	ck_assert_int_eq(smarm_node_close(node), 0);
	ck_assert_int_eq(smarm_plugin_close(pc), 0);
	/* Closed: the file is gone. */
	ck_assert_int_eq(lstat(sc->path, &st), -1);
	/* A file that is not a socket is never replaced. */
	close(open(sc->path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	node = sock_node(sc->path, &rc);
	ck_assert_int_eq(rc, SMARM_ESYSTEM);
	ck_assert_ptr_null(node);
	ck_assert_int_eq(lstat(sc->path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	unlink(sc->path);
	rmdir(dir);
	free(sc);
}
END_TEST

/*
 * A peer of another user is refused (SO_PEERCRED): as root, for real, a
 * forked child that became nobody connects to the socket made reachable
 * (0666 in a 0711 directory, so only the credential check stands in its
 * way); otherwise the node is told to expect another uid
 * (SMARM__OBS_TEST_UID), which makes this process the stranger.
 */
START_TEST(test_obs_socket_refuses_other_user)
{
	char dir[] = "/tmp/smarm-obs-test.XXXXXX";
	char path[108], buf[256];
	bool root = geteuid() == 0;
	smarm_node_t *node;
	int rc, fd;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/node.sock", dir);
	if (!root) {
		snprintf(buf, sizeof buf, "%u", (unsigned)geteuid() + 1);
		setenv("SMARM__OBS_TEST_UID", buf, 1);
	}
	node = sock_node(path, &rc);
	unsetenv("SMARM__OBS_TEST_UID");
	ck_assert_int_eq(rc, 0);
	if (root) {
		pid_t child;
		int status = -1;
		ck_assert_int_eq(chmod(dir, 0711), 0);
		ck_assert_int_eq(chmod(path, 0666), 0);
		child = fork();
		ck_assert_int_ge(child, 0);
		if (child == 0) {
			if (setgid(65534) != 0 || setuid(65534) != 0)
				_exit(3);
			fd = sock_connect(path);
			if (fd < 0)
				_exit(4); /* not even connected */
			/* Refused: closed with no answer. */
			_exit(sock_ask(fd, "hello\n", buf, sizeof buf) <= 0
				      ? 0
				      : 5);
		}
		ck_assert_int_eq(waitpid(child, &status, 0), child);
		ck_assert(WIFEXITED(status));
		ck_assert_int_eq(WEXITSTATUS(status), 0);
		/* The owner (root) is still served. */
		fd = sock_connect(path);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_gt(sock_ask(fd, "hello\n", buf, sizeof buf), 0);
		close(fd);
	} else {
		fd = sock_connect(path);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_le(sock_ask(fd, "hello\n", buf, sizeof buf), 0);
		close(fd);
	}
	ck_assert_int_eq(smarm_node_close(node), 0);
	rmdir(dir);
}
END_TEST

Suite *smarm_test_obs_suite(void)
{
	Suite *s = suite_create("obs");
	TCase *tc = tcase_create("errors");
	tcase_add_test(tc, test_obs_misuse_returns_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("info");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_obs_info_dead_pid_returns_enoproc);
	tcase_add_test(tc, test_obs_names_links_monitors_reported);
	tcase_add_test(tc, test_obs_servers_report_behaviour_and_state);
	suite_add_tcase(s, tc);
	tc = tcase_create("tree");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_obs_tree_nested_supervisor_folds);
	tcase_add_test(tc, test_obs_tree_orphan_is_root);
	suite_add_tcase(s, tc);
	tc = tcase_create("load");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_obs_snapshot_under_churn_is_coherent);
	suite_add_tcase(s, tc);
	tc = tcase_create("socket");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_obs_socket_serves_owner_only);
	tcase_add_test(tc, test_obs_socket_refuses_other_user);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(obs)
