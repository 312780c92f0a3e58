/* SPDX-License-Identifier: MIT */
/*
 * sup_kids.h - child bodies and helpers shared by the supervisor suites
 * (test_supervisor.c, test_sup_shutdown.c): one configurable child, an
 * end log its cleanup handler writes, and polling waits with a bound.
 */
#ifndef SMARM_TEST_SUP_KIDS_H
#define SMARM_TEST_SUP_KIDS_H

#include "harness.h"

#include <string.h>

enum kid_mode {
	KID_PARK,	       /* park until stopped */
	KID_CRASH,	       /* crash at once, every start */
	KID_CRASH_TWICE,       /* crash on the first two starts, then end */
	KID_NORMAL_ONCE,       /* end normally on the first start, then park */
	KID_SHUTDOWN_SELF,     /* end with smarm_actor_shutdown */
	KID_TRAP_IGNORE,       /* trap exits, ignore every signal */
	KID_TRAP_SLOW,	       /* trap; on the shutdown, 200 ms, then end */
	KID_READY_REG,	       /* register kid->name slowly, then ready */
	KID_FIND,	       /* look kid->name up, then ready and park */
	KID_FAIL,	       /* smarm_sup_start_failed(-4242) */
	KID_END_EARLY,	       /* end normally before reporting ready */
	KID_SUB,	       /* smarm_sup_run(kid->sub) */
	KID_CRASH_ON_SECOND,   /* park on the first start, crash after */
	KID_FAIL_ON_SECOND,    /* 2nd start: once kid->gate is set, fail it
				  with -4243; other starts: ready, park */
	KID_HANG_ON_RESTART,   /* 1st start: ready, park; later: park unready */
	KID_TRAP_READY,	       /* trap exits, report ready; on a signal
				  count it and end */
	KID_FAIL_GATED,	       /* 1st start, or kid->gate set: ready, park;
				  else 20 ms, then fail with -4243 */
	KID_TRAP_READY_IGNORE, /* trap exits, report ready, count every
				  signal and ignore it */
	KID_END_ON_GATE,       /* every start: end normally once kid->gate
				  is set (taking it back to 0) */
};

struct kid {
	int tag;	       /* written to the end log */
	int mode;	       /* enum kid_mode */
	const char *name;      /* KID_READY_REG, KID_FIND */
	smarm_sup_spec_t *sub; /* KID_SUB */
	_Atomic int starts;    /* bodies run */
	_Atomic uint64_t pid;  /* latest tenancy */
	_Atomic int saw_exit;  /* trapped exit signals */
	_Atomic int trapped;   /* tenancies that set their trap */
	_Atomic int found;     /* KID_FIND: 1 found, -1 not */
	_Atomic int gate;      /* KID_FAIL_ON_SECOND: fail now */
};

static _Atomic int kid_log[256];
static _Atomic int kid_log_n;

static inline void kid_log_reset(void)
{
	atomic_store(&kid_log_n, 0);
}

static void kid_log_end(void *arg)
{
	struct kid *k = arg;
	int i = atomic_fetch_add(&kid_log_n, 1);
	if (i < 256)
		atomic_store(&kid_log[i], k->tag);
}

static void kid_drop_chan(void *arg)
{
	harness_chan_drop(arg);
}

static void kid_park(void)
{
	smarm_chan_t *ch = NULL;
	int v;
	if (smarm_chan_alloc(&ch, sizeof v, NULL) != 0)
		return;
	smarm_cleanup_push(kid_drop_chan, ch);
	smarm_chan_recv(ch, &v);
}

static smarm_chan_t *kid_trap(void)
{
	smarm_chan_t *ch = NULL;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof(smarm_signal_t), NULL), 0);
	smarm_cleanup_push(kid_drop_chan, ch);
	HARNESS_EQ(smarm_trap_exit(ch), 0);
	return ch;
}

static void kid_body(void *arg)
{
	struct kid *k = arg;
	int n;
	smarm_signal_t s;
	smarm_pid_t p;
	smarm_chan_t *ch;
	atomic_store(&k->pid, smarm_actor_self().id); /* before starts */
	n = atomic_fetch_add(&k->starts, 1) + 1;
	smarm_cleanup_push(kid_log_end, k);
	switch (k->mode) {
	case KID_PARK:
		kid_park();
		break;
	case KID_CRASH:
		smarm_actor_crash(7);
		break;
	case KID_CRASH_TWICE:
		if (n <= 2)
			smarm_actor_crash(n);
		break;
	case KID_NORMAL_ONCE:
		if (n > 1)
			kid_park();
		break;
	case KID_SHUTDOWN_SELF:
		smarm_actor_shutdown();
		break;
	case KID_TRAP_IGNORE:
		ch = kid_trap();
		atomic_fetch_add(&k->trapped, 1);
		while (smarm_chan_recv(ch, &s) == 0)
			atomic_fetch_add(&k->saw_exit, 1);
		break;
	case KID_TRAP_SLOW:
		ch = kid_trap();
		atomic_fetch_add(&k->trapped, 1);
		if (smarm_chan_recv(ch, &s) == 0)
			atomic_fetch_add(&k->saw_exit, 1);
		smarm_actor_sleep(MS(200));
		break;
	case KID_READY_REG:
		smarm_actor_sleep(MS(20));
		HARNESS_EQ(smarm_register(k->name, NULL), 0);
		HARNESS_EQ(smarm_sup_ready(), 0);
		kid_park();
		break;
	case KID_FIND:
		atomic_store(&k->found,
			     smarm_whereis(k->name, &p) == 0 ? 1 : -1);
		HARNESS_EQ(smarm_sup_ready(), 0);
		kid_park();
		break;
	case KID_FAIL:
		smarm_sup_start_failed(-4242);
		HARNESS_CHECK(0); /* not reached */
		break;
	case KID_END_EARLY:
		break;
	case KID_SUB:
		HARNESS_EQ(smarm_sup_run(k->sub), 0); /* only on misuse */
		break;
	case KID_CRASH_ON_SECOND:
		if (n == 1)
			kid_park();
		smarm_actor_crash(9);
		break;
	case KID_FAIL_ON_SECOND:
		if (n == 2) {
			while (!atomic_load(&k->gate))
				smarm_actor_sleep(MS(1));
			smarm_sup_start_failed(-4243);
		}
		HARNESS_EQ(smarm_sup_ready(), 0);
		kid_park();
		break;
	case KID_TRAP_READY:
		ch = kid_trap();
		atomic_fetch_add(&k->trapped, 1);
		HARNESS_EQ(smarm_sup_ready(), 0);
		if (smarm_chan_recv(ch, &s) == 0)
			atomic_fetch_add(&k->saw_exit, 1);
		break;
	case KID_TRAP_READY_IGNORE:
		ch = kid_trap();
		atomic_fetch_add(&k->trapped, 1);
		HARNESS_EQ(smarm_sup_ready(), 0);
		while (smarm_chan_recv(ch, &s) == 0)
			atomic_fetch_add(&k->saw_exit, 1);
		break;
	case KID_END_ON_GATE:
		while (!atomic_exchange(&k->gate, 0))
			smarm_actor_sleep(MS(1));
		break;
	case KID_FAIL_GATED:
		if (n > 1 && !atomic_load(&k->gate)) {
			smarm_actor_sleep(MS(20));
			smarm_sup_start_failed(-4243);
		}
		HARNESS_EQ(smarm_sup_ready(), 0);
		kid_park();
		break;
	case KID_HANG_ON_RESTART:
		if (n == 1)
			HARNESS_EQ(smarm_sup_ready(), 0);
		kid_park();
		break;
	}
}

static struct kid *kid_new(int tag, int mode)
{
	struct kid *k = calloc(1, sizeof *k);
	k->tag = tag;
	k->mode = mode;
	return k;
}

/* Add k to spec as child `id`: permanent, the default shutdown. */
static inline void kid_add(smarm_sup_spec_t *spec, const char *id,
			   struct kid *k)
{
	HARNESS_EQ(smarm_sup_spec_add_child(spec, id, kid_body, k,
					    SMARM_SUP_PERMANENT,
					    SMARM_SUP_SHUTDOWN_DEFAULT),
		   0);
}

/* Poll *v until (*v == want) == equal (bounded: 10 s, scaled). */
static bool kid_await_cmp(_Atomic int *v, int want, bool equal)
{
	uint64_t end = smarm_now_ns() + (uint64_t)(10e9 * harness_time_scale());
	while ((atomic_load(v) == want) != equal) {
		if (smarm_now_ns() > end)
			return false;
		smarm_actor_sleep(MS(1));
	}
	return true;
}

/* Await *v == want. */
static inline bool kid_await(_Atomic int *v, int want)
{
	return kid_await_cmp(v, want, true);
}

/* Await *v != 0 (a KID_FIND verdict). */
static inline bool kid_await_set(_Atomic int *v)
{
	return kid_await_cmp(v, 0, false);
}

static inline smarm_pid_t kid_pid(struct kid *k)
{
	smarm_pid_t p = { atomic_load(&k->pid) };
	return p;
}

static inline int64_t sup_stat(int id)
{
	int64_t v = -1;
	smarm_node_get_int(smarm_node_current(), id, &v);
	return v;
}

/*
 * Wait (bounded) until stat id reads want: an actor that sent its Down
 * or exit signal may still be finishing its exit on another worker, so
 * counts such as live actors or links settle just after the event.
 */
static inline bool sup_await(int id, int64_t want)
{
	return harness_await_stat(smarm_node_current(), id, want);
}

/* A fresh channel of signals, dropped by the caller's cleanup. */
static smarm_chan_t *sig_chan(void)
{
	smarm_chan_t *ch = NULL;
	HARNESS_EQ(smarm_chan_alloc(&ch, sizeof(smarm_signal_t), NULL), 0);
	return ch;
}

/* Send pid an exit signal and wait for its end (monitored first, so
 * an end however quick is seen with its real how). */
static int exit_and_await(smarm_pid_t pid, int how, intptr_t code,
			  intptr_t *reason)
{
	smarm_chan_t *ch = sig_chan();
	smarm_signal_t s = { 0 };
	int rc;
	HARNESS_EQ(smarm_monitor(pid, ch, NULL), 0);
	HARNESS_EQ(smarm_actor_send_exit(pid, how, code), 0);
	rc = smarm_chan_recv_timeout(ch, &s, MS(10000) * harness_time_scale());
	HARNESS_EQ(rc, 0);
	harness_chan_drop(ch);
	if (reason != NULL)
		*reason = s.reason;
	return rc == 0 ? s.how : -1;
}

#endif /* SMARM_TEST_SUP_KIDS_H */
