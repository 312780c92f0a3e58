/* SPDX-License-Identifier: MIT */
/*
 * test_exit_hooks.c - the seams the layers above the core plug into: a
 * node's subsystem table (open/close, run start/end, stats), per-actor
 * subsystem state, the exit hooks that hand it back on the dying actor's
 * own stack after its cleanup handlers, the exit record they see (how,
 * code, a stop's strength and requester, an owned payload), the
 * attach-versus-exit race (actor.c INV-3), and the cleanup array a
 * hibernating actor keeps (fitted to its handlers).
 *
 * A test subsystem stands in for a layer above: it is installed in the
 * SMARM__SUB_BEHAVIOUR entry (the behaviour layer's own is put back
 * before the close, which frees its state) and in the vacant
 * SMARM__SUB_OBS entry (for ordering) of a node opened the ordinary way.
 */
#include "harness.h"

#include "core/actor.h"
#include "core/node.h"
#include "core/slot.h"

#include <pthread.h>
#include <string.h>

/* What one exit hook call saw. */
struct eh_rec {
	_Atomic int ran;     /* hook calls for this state */
	int sub;	     /* which test subsystem ran it */
	int how;	     /* ex_how */
	intptr_t code;	     /* ex_code */
	uint64_t from;	     /* ex_from */
	int strength;	     /* ex_strength */
	bool own_stack;	     /* current actor == s, sp inside its stack */
	int seq;	     /* global order of the call */
	smarm_chan_t *ch;    /* if set, the hook sends `code` here */
	bool heap;	     /* free in the hook (race test) */
	_Atomic int *hooked; /* race test: counts hook deliveries */
	struct eh_rec *late; /* attach this (OTP id) from inside the hook */
};

static _Atomic int eh_seq;
static _Atomic int eh_hook_calls;
static int eh_cleanup_seq;

/* As a layer above the core attaches state: by pid, through subsys.h. */
static int eh_put(void **state, void *arg)
{
	if (*state != NULL)
		return SMARM_EEXIST;
	*state = arg;
	return 0;
}

static int eh_attach_pid(struct smarm_node *n, uint64_t pid, int id,
			 void *state)
{
	return smarm__actor_ext_update(n, pid, id, eh_put, state);
}

static void eh_exit(int sub, struct smarm__slot *s, uint64_t pid,
		    const struct smarm__exit *ex, void *state)
{
	struct eh_rec *r = state;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t lo = (uintptr_t)s->stk_base;
	uintptr_t hi = lo + s->stk_guard + s->stk_reserve;
	atomic_fetch_add(&eh_hook_calls, 1);
	if (r->hooked != NULL) {
		atomic_fetch_add(r->hooked, 1);
		if (r->heap)
			free(r);
		return;
	}
	atomic_fetch_add(&r->ran, 1);
	r->sub = sub;
	r->how = ex->ex_how;
	r->code = ex->ex_code;
	r->from = ex->ex_from;
	r->strength = ex->ex_strength;
	r->own_stack = smarm__current() == s && sp > lo && sp < hi &&
		       pid == smarm__slot_pid(s);
	r->seq = atomic_fetch_add(&eh_seq, 1);
	if (r->ch != NULL) {
		int64_t v = (int64_t)ex->ex_code;
		smarm_chan_send(r->ch, &v); /* a hook may allocate and send */
	}
	if (r->late != NULL) {
		/* state attached after its id's hook slot went by */
		HARNESS_EQ(eh_attach_pid(smarm__current_node(), pid,
					 SMARM__SUB_BEHAVIOUR, r->late),
			   0);
	}
}

static void eh_exit_otp(struct smarm__slot *s, uint64_t pid,
			const struct smarm__exit *ex, void *state)
{
	eh_exit(SMARM__SUB_BEHAVIOUR, s, pid, ex, state);
}

static void eh_exit_obs(struct smarm__slot *s, uint64_t pid,
			const struct smarm__exit *ex, void *state)
{
	eh_exit(SMARM__SUB_OBS, s, pid, ex, state);
}

/* Node hooks of the test subsystem: counted, in order. */
static int eh_opens, eh_closes, eh_starts, eh_ends;

static int eh_open(struct smarm_node *n, const struct smarm_config *cfg,
		   void **state)
{
	(void)n;
	(void)cfg;
	*state = &eh_opens;
	eh_opens++;
	return 0;
}

static void eh_close(struct smarm_node *n, void *state)
{
	(void)n;
	HARNESS_EQ(state, &eh_opens);
	eh_closes++;
}

static void eh_run_start(struct smarm_node *n, void *state)
{
	(void)n;
	(void)state;
	eh_starts++;
}

static void eh_run_end(struct smarm_node *n, void *state)
{
	(void)state;
	HARNESS_EQ(smarm__live(n), 0); /* INV-2: no actor */
	eh_ends++;
}

#define EH_STAT 9999 /* an id the core does not know */

static int eh_get_stat(const struct smarm_node *n, const void *state, int stat,
		       int64_t *out)
{
	(void)n;
	(void)state;
	if (stat != EH_STAT)
		return SMARM_EINVAL;
	*out = 4242;
	return 0;
}

static const struct smarm__subsys eh_otp = {
	.ss_name = "test-otp",
	.ss_open = eh_open,
	.ss_close = eh_close,
	.ss_run_start = eh_run_start,
	.ss_run_end = eh_run_end,
	.ss_actor_exit = eh_exit_otp,
	.ss_get_stat = eh_get_stat,
};

static int eh_open_refuse(struct smarm_node *n, const struct smarm_config *cfg,
			  void **state)
{
	(void)n;
	(void)cfg;
	(void)state;
	return SMARM_ENOMEM;
}

static const struct smarm__subsys eh_failing = {
	.ss_name = "test-failing",
	.ss_open = eh_open_refuse,
	.ss_close = eh_close, /* must never run: its open failed */
};

static const struct smarm__subsys eh_obs = {
	.ss_name = "test-obs",
	.ss_actor_exit = eh_exit_obs,
};

static struct eh_rec eh_a, eh_b; /* what the hooks saw; eh_node clears */

static const struct smarm__subsys *eh_saved; /* the behaviour layer's */

static smarm_node_t *eh_node(int workers)
{
	smarm_node_t *n = harness_open(workers);
	eh_saved = n->subs[SMARM__SUB_BEHAVIOUR];
	memset(&eh_a, 0, sizeof eh_a);
	memset(&eh_b, 0, sizeof eh_b);
	n->subs[SMARM__SUB_BEHAVIOUR] = &eh_otp;
	n->subs[SMARM__SUB_OBS] = &eh_obs;
	return n;
}

static void eh_close_node(smarm_node_t *n)
{
	n->subs[SMARM__SUB_BEHAVIOUR] = eh_saved; /* its ss_close frees */
	n->subs[SMARM__SUB_OBS] = NULL; /* opened by hand: no ss_close */
	ck_assert_int_eq(smarm_node_close(n), 0);
}

static void eh_run(smarm_node_t *n, smarm_actor_cb root, void *arg)
{
	int how = -1;
	harness_checks_reset();
	ck_assert_int_eq(smarm_node_run(n, root, arg, &how, NULL), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	harness_checks_assert();
}

/* Attach state to the running actor, by its pid. */
static int eh_attach(struct smarm__slot *s, int id, void *state)
{
	(void)s;
	return eh_attach_pid(smarm__current_node(), smarm_actor_self().id, id,
			     state);
}

/* -------------------------------------------------------- exit hooks */

static void eh_cleanup(void *arg)
{
	(void)arg;
	eh_cleanup_seq = atomic_fetch_add(&eh_seq, 1);
}

static void eh_body_normal(void *arg)
{
	(void)arg;
	HARNESS_EQ(eh_attach(smarm__current(), SMARM__SUB_BEHAVIOUR, &eh_a), 0);
	HARNESS_EQ(smarm_cleanup_push(eh_cleanup, NULL), 0);
}

static void eh_root_normal(void *arg)
{
	smarm_pid_t p;
	int how = -1;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&p, eh_body_normal, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(p, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
}

START_TEST(test_exit_hooks_run_once_on_own_stack_after_cleanups)
{
	smarm_node_t *n = eh_node(1);
	atomic_store(&eh_seq, 0);
	eh_run(n, eh_root_normal, NULL);
	ck_assert_int_eq(atomic_load(&eh_a.ran), 1);
	ck_assert(eh_a.own_stack);
	ck_assert_int_eq(eh_a.sub, SMARM__SUB_BEHAVIOUR);
	ck_assert_int_eq(eh_a.how, SMARM_EXIT_NORMAL);
	ck_assert_int_lt(eh_cleanup_seq, eh_a.seq);
	eh_close_node(n);
}
END_TEST

static void eh_body_crash(void *arg)
{
	(void)arg;
	HARNESS_EQ(eh_attach(smarm__current(), SMARM__SUB_BEHAVIOUR, &eh_a), 0);
	HARNESS_EQ(eh_attach(smarm__current(), SMARM__SUB_OBS, &eh_b), 0);
	/* a second state of the same subsystem is refused */
	HARNESS_EQ(eh_attach(smarm__current(), SMARM__SUB_BEHAVIOUR, &eh_b),
		   SMARM_EEXIST);
	smarm_actor_crash(42);
}

static void eh_root_crash(void *arg)
{
	smarm_pid_t p;
	int how = -1;
	intptr_t reason = 0;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&p, eh_body_crash, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(p, &how, &reason), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(reason, 42);
}

START_TEST(test_exit_hooks_run_in_id_order_with_the_crash_code)
{
	smarm_node_t *n = eh_node(1);
	eh_run(n, eh_root_crash, NULL);
	ck_assert_int_eq(atomic_load(&eh_a.ran), 1);
	ck_assert_int_eq(atomic_load(&eh_b.ran), 1);
	ck_assert_int_eq(eh_a.sub, SMARM__SUB_BEHAVIOUR);
	ck_assert_int_eq(eh_b.sub, SMARM__SUB_OBS);
	ck_assert_int_lt(eh_a.seq, eh_b.seq); /* id order */
	ck_assert_int_eq(eh_a.how, SMARM_EXIT_CRASHED);
	ck_assert_int_eq(eh_a.code, 42);
	ck_assert_int_eq(eh_b.code, 42);
	ck_assert(eh_a.own_stack && eh_b.own_stack);
	eh_close_node(n);
}
END_TEST

/* Victims park (a sleep nothing ends early), then get stopped. */
static void eh_body_park(void *arg)
{
	HARNESS_EQ(eh_attach(smarm__current(), SMARM__SUB_BEHAVIOUR, arg), 0);
	smarm_actor_sleep(MS(600000));
	HARNESS_CHECK(0); /* not reached: stopped */
}

static uint64_t eh_root_pid;

static void eh_root_stops(void *arg)
{
	smarm_pid_t a, b;
	struct smarm_node *n = smarm__worker()->node;
	struct smarm__stop_req shut = { 0, SMARM__STOP_SHUTDOWN, 5,
					SMARM_EXIT_STOPPED };
	struct smarm__stop_req kill = { 0, SMARM__STOP_KILL, 7,
					SMARM_EXIT_STOPPED };
	(void)arg;
	eh_root_pid = smarm_actor_self().id;
	shut.sr_from = kill.sr_from = eh_root_pid;
	HARNESS_EQ(smarm_actor_spawn(&a, eh_body_park, &eh_a, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&b, eh_body_park, &eh_b, NULL), 0);
	smarm_actor_yield(); /* both park */
	/* a: shutdown then kill (raised); b: kill then shutdown (kept) */
	HARNESS_EQ(smarm__request_stop(n, a.id, &shut), 0);
	HARNESS_EQ(smarm__request_stop(n, a.id, &kill), 0);
	HARNESS_EQ(smarm__request_stop(n, b.id, &kill), 0);
	HARNESS_EQ(smarm__request_stop(n, b.id, &shut), 0);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(b, NULL, NULL), 0);
}

START_TEST(test_exit_hooks_stop_records_requester_strength_and_code)
{
	smarm_node_t *n = eh_node(1);
	eh_run(n, eh_root_stops, NULL);
	ck_assert_int_eq(atomic_load(&eh_a.ran), 1);
	ck_assert_int_eq(eh_a.how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(eh_a.strength, SMARM__STOP_KILL);
	ck_assert_int_eq(eh_a.code, 7);
	ck_assert_uint_eq(eh_a.from, eh_root_pid);
	ck_assert_int_eq(atomic_load(&eh_b.ran), 1);
	ck_assert_int_eq(eh_b.strength, SMARM__STOP_KILL);
	ck_assert_int_eq(eh_b.code, 7); /* the weaker one changed nothing */
	ck_assert(eh_a.own_stack && eh_b.own_stack);
	eh_close_node(n);
}
END_TEST

/* A stop from a plain thread has no requester. */
static _Atomic uint64_t eh_victim;

static void *eh_stopper(void *arg)
{
	smarm_node_t *n = arg;
	uint64_t id;
	while ((id = atomic_load(&eh_victim)) == 0)
		sched_yield();
	HARNESS_EQ(smarm_node_stop_actor(n, (smarm_pid_t){ id }), 0);
	return NULL;
}

static void eh_root_foreign(void *arg)
{
	smarm_pid_t a;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&a, eh_body_park, &eh_a, NULL), 0);
	smarm_actor_yield();
	atomic_store(&eh_victim, a.id);
	HARNESS_EQ(smarm_actor_join(a, NULL, NULL), 0);
}

START_TEST(test_exit_hooks_foreign_stop_has_no_requester)
{
	smarm_node_t *n = eh_node(2);
	pthread_t t;
	eh_a.from = 12345;
	atomic_store(&eh_victim, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, eh_stopper, n), 0);
	eh_run(n, eh_root_foreign, NULL);
	pthread_join(t, NULL);
	ck_assert_int_eq(atomic_load(&eh_a.ran), 1);
	ck_assert_int_eq(eh_a.how, SMARM_EXIT_STOPPED);
	ck_assert_int_eq(eh_a.strength, SMARM__STOP_KILL);
	ck_assert_uint_eq(eh_a.from, 0);
	eh_close_node(n);
}
END_TEST

/* Hooks run only for actors that have state; a hook may send. */
static void eh_plain(void *arg)
{
	(void)arg;
}

static void eh_body_send(void *arg)
{
	HARNESS_EQ(eh_attach(smarm__current(), SMARM__SUB_BEHAVIOUR, arg), 0);
	smarm_actor_crash(99);
}

static void eh_root_send(void *arg)
{
	smarm_pid_t p;
	smarm_chan_t *ch;
	int64_t v = 0;
	(void)arg;
	for (int i = 0; i < 100; i++)
		HARNESS_EQ(smarm_actor_spawn(NULL, eh_plain, NULL, NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	eh_a.ch = ch;
	HARNESS_EQ(smarm_actor_spawn(&p, eh_body_send, &eh_a, NULL), 0);
	HARNESS_EQ(smarm_chan_recv(ch, &v), 0); /* sent by the hook */
	HARNESS_EQ(v, 99);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
	harness_chan_drop(ch);
}

START_TEST(test_exit_hooks_only_for_actors_with_state_and_may_send)
{
	smarm_node_t *n = eh_node(4);
	atomic_store(&eh_hook_calls, 0);
	eh_run(n, eh_root_send, NULL);
	ck_assert_int_eq(atomic_load(&eh_hook_calls), 1);
	ck_assert_int_eq(atomic_load(&eh_a.ran), 1);
	eh_close_node(n);
}
END_TEST

/*
 * INV-3 under load: one actor keeps attaching state to actors that are
 * exiting on other workers. Every attach to an actor not yet DONE
 * reaches exactly one hook, also one that lands after the actor's exit
 * hooks looked (finalize resumes the actor to hand it over); none is lost
 * or delivered twice. The others find no live actor (SMARM_ENOPROC).
 */
#define EH_RACE_N 3000

static uint64_t eh_pids[EH_RACE_N];
static _Atomic int eh_spawned;
static _Atomic int eh_hooked;
static int eh_ok, eh_noproc;

static _Atomic int eh_tried; /* attaches the attacher has made */

/*
 * Actor i ends when the attacher comes near it: at most 4 attaches
 * before its own, so its exit races its attach. Every 8th ends only once
 * its attach is done, so some attaches surely find a live actor.
 */
static void eh_short(void *arg)
{
	int i = (int)(intptr_t)arg;
	int until = i % 8 == 0 ? i + 1 : i - 4;
	while (atomic_load(&eh_tried) < until)
		smarm_actor_yield();
}

static void eh_attacher(void *arg)
{
	struct smarm_node *n = smarm__current_node();
	(void)arg;
	for (int i = 0; i < EH_RACE_N; i++) {
		uint64_t pid;
		struct eh_rec *r;
		int rc;
		while (atomic_load(&eh_spawned) <= i)
			smarm_actor_yield();
		pid = eh_pids[i];
		r = calloc(1, sizeof *r);
		if (r == NULL) {
			HARNESS_CHECK(0);
			return;
		}
		r->hooked = &eh_hooked;
		r->heap = true;
		rc = eh_attach_pid(n, pid, SMARM__SUB_BEHAVIOUR, r);
		if (rc == 0) {
			eh_ok++; /* the hook owns r now */
		} else {
			HARNESS_CHECK(rc == SMARM_ENOPROC);
			eh_noproc++;
			free(r);
		}
		atomic_store(&eh_tried, i + 1);
	}
}

static void eh_root_race(void *arg)
{
	smarm_pid_t att;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&att, eh_attacher, NULL, NULL), 0);
	for (int i = 0; i < EH_RACE_N; i++) {
		smarm_pid_t p;
		HARNESS_EQ(smarm_actor_spawn(&p, eh_short, (void *)(intptr_t)i,
					     NULL),
			   0);
		eh_pids[i] = p.id;
		HARNESS_EQ(smarm_actor_detach(p), 0);
		atomic_store(&eh_spawned, i + 1);
		if (i % 8 == 0)
			smarm_actor_yield();
	}
	HARNESS_EQ(smarm_actor_join(att, NULL, NULL), 0);
}

START_TEST(test_exit_hooks_attach_racing_exit_is_never_stranded)
{
	smarm_node_t *n = eh_node(4);
	atomic_store(&eh_spawned, 0);
	atomic_store(&eh_hooked, 0);
	atomic_store(&eh_tried, 0);
	eh_ok = eh_noproc = 0;
	eh_run(n, eh_root_race, NULL);
	ck_assert_int_eq(eh_ok + eh_noproc, EH_RACE_N);
	ck_assert_int_eq(atomic_load(&eh_hooked), eh_ok); /* exactly once */
	ck_assert_int_ge(eh_ok, EH_RACE_N / 8); /* every 8th surely found */
	eh_close_node(n);
}
END_TEST

/*
 * The deterministic late attach: the OBS hook attaches OTP state, whose
 * hook slot the loop has passed. finalize must resume the actor, and the
 * OTP hook runs on its own stack (INV-3).
 */
static void eh_body_late(void *arg)
{
	(void)arg;
	HARNESS_EQ(eh_attach(smarm__current(), SMARM__SUB_OBS, &eh_b), 0);
	smarm_actor_crash(5);
}

static void eh_root_late(void *arg)
{
	smarm_pid_t p;
	intptr_t reason = 0;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&p, eh_body_late, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, &reason), 0);
	HARNESS_EQ(reason, 5);
}

START_TEST(test_exit_hooks_late_attach_resumes_the_actor_for_its_hook)
{
	smarm_node_t *n = eh_node(1);
	eh_b.late = &eh_a;
	eh_run(n, eh_root_late, NULL);
	ck_assert_int_eq(atomic_load(&eh_b.ran), 1);
	ck_assert_int_eq(atomic_load(&eh_a.ran), 1);
	ck_assert_int_lt(eh_b.seq, eh_a.seq);
	ck_assert(eh_a.own_stack);
	ck_assert_int_eq(eh_a.code, 5);
	ck_assert_uint_eq(atomic_load(&n->ext_late), 1);
	eh_close_node(n);
}
END_TEST

/* ext_update takes state back (no hook then) and refuses stale pids. */
static int eh_take(void **state, void *arg)
{
	*(void **)arg = *state;
	*state = NULL;
	return 0;
}

static void eh_body_takeback(void *arg)
{
	struct smarm_node *n = smarm__current_node();
	uint64_t me = smarm_actor_self().id;
	void *got = NULL;
	(void)arg;
	HARNESS_EQ(eh_attach_pid(n, me, SMARM__SUB_BEHAVIOUR, &eh_a), 0);
	HARNESS_EQ(eh_attach_pid(n, me, SMARM__SUB_BEHAVIOUR, &eh_b),
		   SMARM_EEXIST);
	HARNESS_EQ(smarm__actor_ext_update(n, me, SMARM__SUB_BEHAVIOUR, eh_take,
					   &got),
		   0);
	HARNESS_CHECK(got == &eh_a);
	HARNESS_EQ(eh_attach_pid(n, me, SMARM__SUB_OBS, &eh_b), 0);
}

static void eh_root_takeback(void *arg)
{
	smarm_pid_t p;
	struct smarm_node *n = smarm__current_node();
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&p, eh_body_takeback, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
	/* joined: the pid is stale */
	HARNESS_EQ(eh_attach_pid(n, p.id, SMARM__SUB_BEHAVIOUR, &eh_a),
		   SMARM_ENOPROC);
	HARNESS_EQ(eh_attach_pid(n, 0, SMARM__SUB_BEHAVIOUR, &eh_a),
		   SMARM_ENOPROC);
}

START_TEST(test_exit_hooks_update_takes_back_and_refuses_stale_pids)
{
	smarm_node_t *n = eh_node(1);
	eh_run(n, eh_root_takeback, NULL);
	ck_assert_int_eq(atomic_load(&eh_a.ran), 0); /* taken back */
	ck_assert_int_eq(atomic_load(&eh_b.ran), 1);
	eh_close_node(n);
}
END_TEST

/* ----------------------------------------------------- exit payloads */

static _Atomic int eh_freed;

struct eh_payload {
	struct smarm__exit_payload hdr; /* first: the exit record's view */
	int tag;
};

static void eh_payload_free(struct smarm__exit_payload *p)
{
	struct eh_payload *e = (struct eh_payload *)p;
	HARNESS_EQ(e->tag, 77);
	atomic_fetch_add(&eh_freed, 1);
	free(e);
}

static void eh_body_payload(void *arg)
{
	struct eh_payload *e = malloc(sizeof *e);
	struct smarm__exit ex = { SMARM_EXIT_CRASHED, 0, 3, 0, NULL };
	(void)arg;
	if (e == NULL) {
		HARNESS_CHECK(0);
		return;
	}
	e->hdr.ep_free = eh_payload_free;
	e->tag = 77;
	ex.ex_payload = &e->hdr;
	smarm__terminate_ex(smarm__current(), &ex);
}

static int eh_freed_at_join;

static void eh_root_payload(void *arg)
{
	smarm_pid_t p, q;
	intptr_t reason = 0;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&p, eh_body_payload, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, &reason), 0);
	HARNESS_EQ(reason, 3);
	eh_freed_at_join = atomic_load(&eh_freed);
	/* detached: released when finalize reclaims the slot */
	HARNESS_EQ(smarm_actor_spawn(&q, eh_body_payload, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_detach(q), 0);
}

START_TEST(test_exit_hooks_payload_released_once_at_reclaim)
{
	smarm_node_t *n = eh_node(1);
	atomic_store(&eh_freed, 0);
	eh_run(n, eh_root_payload, NULL);
	ck_assert_int_eq(eh_freed_at_join, 1);
	ck_assert_int_eq(atomic_load(&eh_freed), 2);
	eh_close_node(n);
}
END_TEST

/* ------------------------------------------ update, then stop */

/*
 * smarm__actor_ext_update_stop: fn's verdict stops the actor in the same
 * hold (SMARM__EXT_STOP), or leaves it be (0); a state block that cannot
 * be allocated stops it too (nothing of it could have taken the
 * request). The stopped actor ends with the request's how and code.
 */
static int eh_verdict(void **state, void *arg)
{
	(void)state;
	return *(int *)arg;
}

static void eh_parked(void *arg)
{
	(void)arg;
	harness_park();
}

static void eh_root_update_stop(void *arg)
{
	struct smarm_node *n = smarm__current_node();
	struct smarm__stop_req req = { smarm_actor_self().id,
				       SMARM__STOP_SHUTDOWN, 33,
				       SMARM_EXIT_CRASHED };
	int keep = 0, stop = SMARM__EXT_STOP;
	smarm_pid_t p, q;
	int how = -1;
	intptr_t code = 0;
	(void)arg;
	HARNESS_EQ(smarm_actor_spawn(&p, eh_parked, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&q, eh_parked, NULL, NULL), 0);
	smarm_actor_yield(); /* both park; neither slot has a block yet */
	/* no block for q: stopped all the same */
	atomic_store(&n->test_ext_fail, 1);
	HARNESS_EQ(smarm__actor_ext_update_stop(n, q.id, SMARM__SUB_BEHAVIOUR,
						eh_verdict, &keep, &req),
		   SMARM_ENOMEM);
	HARNESS_EQ(atomic_load(&n->test_ext_fail), 0);
	HARNESS_EQ(smarm_actor_join(q, &how, &code), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(code, 33);
	/* fn's verdict: keep, then stop */
	HARNESS_EQ(smarm__actor_ext_update_stop(n, p.id, SMARM__SUB_BEHAVIOUR,
						eh_verdict, &keep, &req),
		   0);
	HARNESS_CHECK(!smarm__actor_ending(n, p.id));
	HARNESS_EQ(smarm__actor_ext_update_stop(n, p.id, SMARM__SUB_BEHAVIOUR,
						eh_verdict, &stop, &req),
		   0);
	HARNESS_EQ(smarm_actor_join(p, &how, &code), 0);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(code, 33);
	/* a stale pid */
	HARNESS_EQ(smarm__actor_ext_update_stop(n, p.id, SMARM__SUB_BEHAVIOUR,
						eh_verdict, &stop, &req),
		   SMARM_ENOPROC);
}

START_TEST(test_exit_hooks_update_stop_in_one_hold)
{
	smarm_node_t *n = eh_node(1);
	eh_run(n, eh_root_update_stop, NULL);
	eh_close_node(n);
}
END_TEST

/* --------------------------------------------- a sized subsystem */

/*
 * A sized subsystem keeps its per-actor state in a room of the slot's
 * extension block: fn always gets a zeroed state, the room is reused by
 * the slot's next tenant, an emptied state is taken back (no hook), and
 * state attached while the exit hooks hold the room is a heap block of
 * its own, freed by the core after its hook.
 */
struct eh_sz {
	int items;    /* kept while > 0 */
	int scribble; /* the hook leaves garbage: the next tenant sees 0 */
	int late;     /* the hook attaches again, once */
	void *seen;   /* the state's address, as fn saw it */
};

static struct {
	_Atomic int hooks;
	void *hook_at[4];
	bool zeroed[4]; /* fn found a zeroed state, per tenant round */
	void *got[4];
	int round;
} eh_sz_log;

static bool eh_sz_trim(void *state)
{
	return ((struct eh_sz *)state)->items == 0;
}

static int eh_sz_add(void **state, void *arg)
{
	struct eh_sz *z = *state;
	int r = eh_sz_log.round;
	if (z->items == 0 && r < 4) {
		eh_sz_log.zeroed[r] =
			z->scribble == 0 && z->late == 0 && z->seen == NULL;
		eh_sz_log.got[r] = z;
	}
	z->seen = z;
	z->items += *(int *)arg;
	if (*(int *)arg < 0)
		z->late = 0;
	return 0;
}

static int eh_sz_put(uint64_t pid, int delta)
{
	return smarm__actor_ext_update(smarm__current_node(), pid,
				       SMARM__SUB_BEHAVIOUR, eh_sz_add, &delta);
}

static int eh_sz_mark_late(void **state, void *arg)
{
	(void)arg;
	((struct eh_sz *)*state)->late = 1;
	return 0;
}

static void eh_sz_exit(struct smarm__slot *s, uint64_t pid,
		       const struct smarm__exit *ex, void *state)
{
	struct eh_sz *z = state;
	int k = atomic_fetch_add(&eh_sz_log.hooks, 1);
	(void)s;
	(void)ex;
	if (k < 4)
		eh_sz_log.hook_at[k] = z;
	z->scribble = 0x5a5a; /* emptied, but not zeroed */
	if (z->late) {
		/* The room is lent to this hook: a late state is a block. */
		eh_sz_log.round = 3;
		HARNESS_EQ(eh_sz_put(pid, 1), 0);
	}
}

static const struct smarm__subsys eh_sized = {
	.ss_name = "test-sized",
	.ss_actor_exit = eh_sz_exit,
	.ss_actor_size = sizeof(struct eh_sz),
	.ss_actor_trim = eh_sz_trim,
};

static void eh_sz_body(void *arg)
{
	uint64_t me = smarm_actor_self().id;
	int mode = (int)(intptr_t)arg;
	HARNESS_EQ(eh_sz_put(me, 2), 0);
	if (mode == 1) {
		HARNESS_EQ(eh_sz_put(me, -2), 0); /* emptied: taken back */
	} else if (mode == 2) {
		HARNESS_EQ(smarm__actor_ext_update(smarm__current_node(), me,
						   SMARM__SUB_BEHAVIOUR,
						   eh_sz_mark_late, NULL),
			   0);
	}
}

static void eh_sz_root(void *arg)
{
	smarm_pid_t p[3];
	(void)arg;
	for (int r = 0; r < 3; r++) {
		eh_sz_log.round = r;
		/* round 0 keeps its state to its end; round 1 empties it
		 * first; round 2 attaches again from its exit hook */
		HARNESS_EQ(smarm_actor_spawn(&p[r], eh_sz_body,
					     (void *)(intptr_t)r, NULL),
			   0);
		HARNESS_EQ(smarm_actor_join(p[r], NULL, NULL), 0);
	}
	/* one worker, LIFO slot reuse: the same slot every round */
	HARNESS_EQ(SMARM__PID_IDX(p[1].id), SMARM__PID_IDX(p[0].id));
	HARNESS_EQ(SMARM__PID_IDX(p[2].id), SMARM__PID_IDX(p[0].id));
}

START_TEST(test_exit_hooks_sized_state_lives_in_the_slot_room)
{
	const struct smarm__subsys *table[SMARM__SUB_MAX] = { 0 };
	smarm_node_t *n = harness_open(1);
	smarm_config_t *cfg = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	table[SMARM__SUB_BEHAVIOUR] = &eh_sized;
	smarm__subsys_close(n);
	ck_assert_int_eq(smarm__subsys_open(n, cfg, table), 0);
	smarm_config_free(cfg);
	ck_assert_uint_ne(n->ext_sized & (1u << SMARM__SUB_BEHAVIOUR), 0);
	ck_assert_uint_ge(n->ext_bytes, n->ext_room[SMARM__SUB_BEHAVIOUR] +
						sizeof(struct eh_sz));
	memset(&eh_sz_log, 0, sizeof eh_sz_log);
	eh_run(n, eh_sz_root, NULL);
	/* rounds 0 and 2 ended with state, round 2's late block too */
	ck_assert_int_eq(atomic_load(&eh_sz_log.hooks), 3);
	for (int r = 0; r < 4; r++)
		ck_assert_msg(eh_sz_log.zeroed[r], "round %d: not zeroed", r);
	/* the room: the same address for every tenant of the slot */
	ck_assert_ptr_eq(eh_sz_log.got[1], eh_sz_log.got[0]);
	ck_assert_ptr_eq(eh_sz_log.got[2], eh_sz_log.got[0]);
	ck_assert_ptr_eq(eh_sz_log.hook_at[0], eh_sz_log.got[0]);
	ck_assert_ptr_eq(eh_sz_log.hook_at[1], eh_sz_log.got[0]);
	/* lent to round 2's hook: the late state is a heap block */
	ck_assert_ptr_ne(eh_sz_log.got[3], eh_sz_log.got[0]);
	ck_assert_ptr_eq(eh_sz_log.hook_at[2], eh_sz_log.got[3]);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/* ------------------------------------------------------- node hooks */

static void eh_root_nothing(void *arg)
{
	(void)arg;
}

START_TEST(test_exit_hooks_node_hooks_run_start_end_and_stats)
{
	const struct smarm__subsys *table[SMARM__SUB_MAX] = { 0 };
	smarm_node_t *n = harness_open(2);
	smarm_config_t *cfg = NULL;
	int64_t v = 0;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	table[SMARM__SUB_BEHAVIOUR] = &eh_otp;
	eh_opens = eh_closes = eh_starts = eh_ends = 0;
	/* replace the built-in table by the test one */
	smarm__subsys_close(n);
	ck_assert_int_eq(smarm__subsys_open(n, cfg, table), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(eh_opens, 1);
	eh_run(n, eh_root_nothing, NULL);
	eh_run(n, eh_root_nothing, NULL);
	ck_assert_int_eq(eh_starts, 2);
	ck_assert_int_eq(eh_ends, 2);
	ck_assert_int_eq(smarm_node_get_int(n, EH_STAT, &v), 0);
	ck_assert_int_eq(v, 4242);
	ck_assert_int_eq(smarm_node_get_int(n, EH_STAT + 1, &v), SMARM_EINVAL);
	ck_assert_int_eq(smarm_node_close(n), 0);
	ck_assert_int_eq(eh_closes, 1);
}
END_TEST

START_TEST(test_exit_hooks_failed_open_closes_the_ones_before)
{
	const struct smarm__subsys *table[SMARM__SUB_MAX] = { 0 };
	smarm_node_t *n = harness_open(1);
	smarm_config_t *cfg = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	table[SMARM__SUB_BEHAVIOUR] = &eh_otp; /* opens fine */
	table[SMARM__SUB_OBS] = &eh_failing;   /* refuses */
	smarm__subsys_close(n);
	eh_opens = eh_closes = 0;
	ck_assert_int_eq(smarm__subsys_open(n, cfg, table), SMARM_ENOMEM);
	ck_assert_int_eq(eh_opens, 1);
	ck_assert_int_eq(eh_closes, 1); /* the one before it, closed again */
	for (int id = 0; id < SMARM__SUB_MAX; id++)
		ck_assert_ptr_null(n->subs[id]);
	ck_assert_int_eq(smarm__subsys_open(n, cfg, smarm__builtin_subsys), 0);
	smarm_config_free(cfg);
	ck_assert_int_eq(smarm_node_close(n), 0);
	ck_assert_int_eq(eh_closes, 1); /* never closed twice */
}
END_TEST

/* ---- a hibernating actor's cleanup array fitted to its handlers ---- */

static int fit_ran; /* the handlers that ran, a digit each, in order */

static void fit_a(void *arg)
{
	(void)arg;
	fit_ran = fit_ran * 10 + 1;
}

static void fit_b(void *arg)
{
	(void)arg;
	fit_ran = fit_ran * 10 + 2;
}

static void fit_c(void *arg)
{
	(void)arg;
	fit_ran = fit_ran * 10 + 3;
}

/* After the hibernation: room for the one handler left, which still
 * runs at the end, after one pushed now (the array grows again). */
static void fit_resumed(void *arg)
{
	struct smarm__slot *me = smarm__current();
	int v = 0;
	HARNESS_EQ(smarm_chan_try_recv(arg, &v), 0);
	HARNESS_EQ(me->cl_len, 1);
	HARNESS_EQ(me->cl_cap, 1);
	HARNESS_EQ(smarm_cleanup_push(fit_c, NULL), 0);
	HARNESS_EQ(me->cl_cap, 2);
	smarm_actor_exit();
}

static void fit_body(void *arg)
{
	HARNESS_EQ(smarm_cleanup_push(fit_a, NULL), 0);
	HARNESS_EQ(smarm_cleanup_push(fit_b, NULL), 0);
	HARNESS_EQ(smarm_cleanup_pop(false), 0);
	HARNESS_EQ(smarm__current()->cl_cap, 2);
	(void)smarm_hibernate(arg, fit_resumed, arg);
	HARNESS_CHECK(false); /* returns only on an error */
}

static void fit_root(void *arg)
{
	smarm_chan_t *ch;
	smarm_pid_t p;
	int v = 1;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof v, NULL), 0);
	HARNESS_EQ(smarm_actor_spawn(&p, fit_body, ch, NULL), 0);
	HARNESS_CHECK(harness_await_stat(smarm_node_current(),
					 SMARM_STAT_HIBERNATIONS, 1));
	HARNESS_EQ(smarm_chan_send(ch, &v), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
	smarm_chan_sender_free(ch);
	smarm_chan_receiver_free(ch);
}

/* A hibernating actor's cleanup array keeps room for its handlers and
 * no more (actor.c smarm__cleanup_fit; a hibernated server keeps one). */
START_TEST(test_exit_hooks_cleanups_fitted_as_it_hibernates)
{
	fit_ran = 0;
	harness_checks_reset();
	ck_assert_int_eq(harness_run(2, fit_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(fit_ran, 31); /* c, then a; b never */
}
END_TEST

Suite *smarm_test_exit_hooks_suite(void)
{
	Suite *s = suite_create("exit_hooks");
	TCase *tc = tcase_create("exit");
	tcase_add_test(tc,
		       test_exit_hooks_run_once_on_own_stack_after_cleanups);
	tcase_add_test(tc, test_exit_hooks_run_in_id_order_with_the_crash_code);
	tcase_add_test(
		tc, test_exit_hooks_stop_records_requester_strength_and_code);
	tcase_add_test(tc, test_exit_hooks_foreign_stop_has_no_requester);
	tcase_add_test(tc,
		       test_exit_hooks_only_for_actors_with_state_and_may_send);
	tcase_add_test(tc, test_exit_hooks_payload_released_once_at_reclaim);
	tcase_add_test(
		tc, test_exit_hooks_update_takes_back_and_refuses_stale_pids);
	tcase_add_test(
		tc, test_exit_hooks_late_attach_resumes_the_actor_for_its_hook);
	tcase_add_test(tc, test_exit_hooks_update_stop_in_one_hold);
	tcase_add_test(tc, test_exit_hooks_cleanups_fitted_as_it_hibernates);
	suite_add_tcase(s, tc);

	tc = tcase_create("race");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(
		tc, test_exit_hooks_attach_racing_exit_is_never_stranded, 0, 5);
	suite_add_tcase(s, tc);

	tc = tcase_create("node");
	tcase_add_test(tc, test_exit_hooks_node_hooks_run_start_end_and_stats);
	tcase_add_test(tc, test_exit_hooks_failed_open_closes_the_ones_before);
	tcase_add_test(tc, test_exit_hooks_sized_state_lives_in_the_slot_room);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(exit_hooks)
