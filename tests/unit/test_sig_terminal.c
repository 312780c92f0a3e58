/* SPDX-License-Identifier: MIT */
/*
 * test_sig_terminal.c - the OTP layer's terminal record (signal.c INV-4)
 * through the internal mark the registry uses: a watchable tenancy's end
 * is kept by slot, so a monitor set after its death reports how it
 * really ended instead of SMARM_EXIT_NOPROC; an anonymous death keeps
 * nothing; marking a dead pid invents nothing; a live actor has no
 * record; the record survives the slot's reuse by an anonymous tenant
 * and is overwritten by the next watchable one. Ports the Rust smarm
 * runtime's tests/terminal_outcome_after_death.rs.
 */
#include "harness.h"

#include "core/node.h"
#include "otp/sig.h"

#define SIG_SZ sizeof(smarm_signal_t)

static void body_crash(void *arg)
{
	smarm_actor_crash((intptr_t)arg);
}

static void body_exit(void *arg)
{
	(void)arg;
}

static void body_mark_and_stop(void *arg)
{
	smarm_node_t *n = smarm_node_current();
	(void)arg;
	HARNESS_EQ(smarm__sig_mark_watchable(n, smarm_actor_self().id), 0);
	smarm_actor_stop(smarm_actor_self());
	smarm_actor_yield();
}

/* Monitor a dead pid; the Down's how and reason. */
static void down_of(smarm_pid_t p, int *how, intptr_t *reason)
{
	smarm_chan_t *ch = NULL;
	smarm_signal_t s;
	HARNESS_EQ(smarm_chan_alloc(&ch, SIG_SZ, NULL), 0);
	HARNESS_EQ(smarm_monitor(p, ch, NULL), 0);
	HARNESS_EQ(smarm_chan_try_recv(ch, &s), 0);
	HARNESS_CHECK(smarm_pid_eq(s.from, p));
	*how = s.how;
	*reason = s.reason;
	harness_chan_drop(ch);
}

/* Spawn fn(arg) joinable, mark it (before it runs) if asked, join it. */
static smarm_pid_t run_one(smarm_actor_cb fn, void *arg, bool mark)
{
	smarm_node_t *n = smarm_node_current();
	smarm_pid_t p;
	HARNESS_EQ(smarm_actor_spawn(&p, fn, arg, NULL), 0);
	if (mark)
		HARNESS_EQ(smarm__sig_mark_watchable(n, p.id), 0);
	HARNESS_EQ(smarm_actor_join(p, NULL, NULL), 0);
	return p;
}

static void root_terminal(void *arg)
{
	smarm_node_t *n = smarm_node_current();
	smarm_pid_t a, b, c, d;
	int how;
	intptr_t reason;
	(void)arg;
	/* A watchable death is stamped. */
	a = run_one(body_crash, (void *)7, true);
	down_of(a, &how, &reason);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	HARNESS_EQ(reason, 7);
	/* An anonymous one keeps nothing, and does not evict a's record
	 * though it reuses a's slot (the free list is LIFO). */
	d = run_one(body_crash, (void *)9, false);
	HARNESS_EQ((uint32_t)d.id, (uint32_t)a.id);
	down_of(d, &how, &reason);
	HARNESS_EQ(how, SMARM_EXIT_NOPROC);
	down_of(a, &how, &reason);
	HARNESS_EQ(how, SMARM_EXIT_CRASHED);
	/* Marking after death is refused and invents nothing. */
	HARNESS_EQ(smarm__sig_mark_watchable(n, d.id), SMARM_ENOPROC);
	down_of(d, &how, &reason);
	HARNESS_EQ(how, SMARM_EXIT_NOPROC);
	/* The slot's next watchable tenant overwrites it. */
	b = run_one(body_exit, NULL, true);
	HARNESS_EQ((uint32_t)b.id, (uint32_t)a.id);
	down_of(b, &how, &reason);
	HARNESS_EQ(how, SMARM_EXIT_NORMAL);
	down_of(a, &how, &reason);
	HARNESS_EQ(how, SMARM_EXIT_NOPROC);
	/* A stop, marked by the actor itself while alive. */
	c = run_one(body_mark_and_stop, NULL, false);
	down_of(c, &how, &reason);
	HARNESS_EQ(how, SMARM_EXIT_STOPPED);
	/* A live actor has no record: its monitor waits for the end. */
	HARNESS_EQ(smarm__sig_mark_watchable(n, smarm_actor_self().id), 0);
}

START_TEST(test_sig_terminal_record_recovers_the_reason_a_raced_watch_lost)
{
	harness_checks_reset();
	ck_assert_int_eq(harness_run(1, root_terminal, NULL), 0);
	harness_checks_assert();
}
END_TEST

Suite *smarm_test_sig_terminal_suite(void)
{
	Suite *s = suite_create("sig_terminal");
	TCase *t = tcase_create("terminal");
	tcase_add_test(
		t,
		test_sig_terminal_record_recovers_the_reason_a_raced_watch_lost);
	suite_add_tcase(s, t);
	return s;
}

SMARM_TEST_MAIN(sig_terminal)
