/* SPDX-License-Identifier: MIT */
/*
 * test_stack_diag.c - stack overflow diagnostics, each scenario in a
 * child process whose stderr is captured through a pipe: a guard hit
 * prints the tier-1 line and the child dies of SIGSEGV; an unprobed frame
 * that jumps a small guard prints tier 2; a roomy reserve runs clean; a
 * fault that is not an actor's overflow (NULL on the main thread, in an
 * actor, on a plain thread) reaches the prior (default) handler, with
 * one line naming the actor and the code's file when it was in one, and
 * naming also what was recorded of the actor: its registered name, and
 * for a server of a plugin its behaviour and plugin (also in the
 * overflow lines); a
 * SIGSEGV raised (not faulted) takes the prior disposition, each time;
 * a dense stack overflow is caught at switch-out and aborts.
 * meson runs it twice: as is (default guarded stacks carved from chunks,
 * guard regions, where the kernel has them) and as stack_diag_fallback
 * (SMARM__NO_GUARD_REGIONS: a PROT_NONE guard mapping per stack).
 */
#include "harness.h"
#include "stack_probe.h"

#include <smarm/smarm_plugin.h>

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define KIB 1024
#define MIB (1024 * 1024)

#if defined(__SANITIZE_ADDRESS__)
/* Our handler, not ASan's, must see the faults (CI also sets this). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "handle_segv=0:handle_sigbus=0";
}
#endif

void sd_burn(void); /* stack_diag_burn.c, no stack-clash probing */

struct sd_result {
	int status;	/* waitpid status */
	char err[8192]; /* the child's stderr */
};

/* Run fn in a child process with stderr captured into r. */
static void sd_child(void (*fn)(void), struct sd_result *r)
{
	harness_child(fn, &r->status, r->err, sizeof r->err);
}

static void sd_assert_signal(const struct sd_result *r, int sig)
{
	if (!WIFSIGNALED(r->status))
		ck_abort_msg("child was not killed by a signal (status %#x), "
			     "stderr: %.1500s",
			     r->status, r->err);
	ck_assert_int_eq(WTERMSIG(r->status), sig);
}

static void sd_assert_has(const struct sd_result *r, const char *text)
{
	if (strstr(r->err, text) == NULL)
		ck_abort_msg("stderr lacks \"%s\": %.1500s", text, r->err);
}

/* Run root on a one-worker node with the given stack defaults. */
static void sd_run(int64_t reserve, int64_t guard, int64_t mode,
		   smarm_actor_cb root)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *node = NULL;
	smarm_config_alloc(&cfg);
	smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1);
	if (reserve)
		smarm_config_set_int(cfg, SMARM_OPT_STACK_RESERVE, reserve);
	if (guard)
		smarm_config_set_int(cfg, SMARM_OPT_STACK_GUARD, guard);
	smarm_config_set_int(cfg, SMARM_OPT_STACK_MODE, mode);
	if (smarm_node_open(&node, cfg) != 0)
		_exit(3);
	smarm_config_free(cfg);
	if (smarm_node_run(node, root, NULL, NULL, NULL) != 0)
		_exit(4);
	smarm_node_close(node);
}

/* -------------------------------------------------------------- tier 1 */

static __attribute__((noinline)) long sd_recurse(long depth)
{
	volatile char buf[4096]; /* probed: the project builds with stack
				    clash protection */
	buf[0] = (char)depth;
	buf[sizeof buf - 1] = (char)depth;
	if (depth <= 0)
		return buf[0];
	return sd_recurse(depth - 1) + buf[0] + buf[sizeof buf - 1];
}

static void sd_root_recurse(void *arg)
{
	(void)arg;
	sd_recurse(100000); /* ~400 MiB of frames: far past reserve+guard */
}

static void sd_recursion_defaults(void)
{
	sd_run(0, 0, SMARM_STACK_GUARDED, sd_root_recurse);
}

START_TEST(test_stack_diag_recursion_reports_guard_hit)
{
	static struct sd_result r;
	sd_child(sd_recursion_defaults, &r);
	sd_assert_signal(&r, SIGSEGV);
	sd_assert_has(&r, "smarm: actor ");
	sd_assert_has(&r, " overflowed its stack: fault in the guard region, "
			  "depth-at-fault=");
	sd_assert_has(&r, "reserve=65536");
	sd_assert_has(&r, "guard=1048576");
	sd_assert_has(&r, "SMARM_OPT_STACK_RESERVE");
}
END_TEST

/*
 * A child's overflow while the root still holds its stack: carved, the
 * child's stack is the next one of the root's chunk, its guard right
 * above the root's stack top; the line names the child (the root holds
 * slot 0).
 */
static smarm_actor_cb sd_child_body; /* what sd_root_child spawns */

/* A root that spawns sd_child_body and joins it (one test per process:
 * sd_child forks). */
static void sd_root_child(void *arg)
{
	smarm_pid_t p;
	(void)arg;
	if (smarm_actor_spawn(&p, sd_child_body, NULL, NULL) == 0)
		smarm_actor_join(p, NULL, NULL);
}

static void sd_child_recursion_defaults(void)
{
	sd_child_body = sd_root_recurse;
	sd_run(0, 0, SMARM_STACK_GUARDED, sd_root_child);
}

START_TEST(test_stack_diag_child_recursion_reports_guard_hit)
{
	static struct sd_result r;
	sd_child(sd_child_recursion_defaults, &r);
	sd_assert_signal(&r, SIGSEGV);
	sd_assert_has(&r, " overflowed its stack: fault in the guard region, "
			  "depth-at-fault=");
	sd_assert_has(&r, "reserve=65536");
	sd_assert_has(&r, "guard=1048576");
	ck_assert_ptr_null(strstr(r.err, "smarm: actor 0."));
}
END_TEST

static void sd_root_burn(void *arg)
{
	(void)arg;
	sd_burn();
}

static void sd_burn_defaults(void)
{
	sd_run(0, 0, SMARM_STACK_AUTO, sd_root_burn);
}

START_TEST(test_stack_diag_unprobed_frame_in_big_guard_is_tier1)
{
	static struct sd_result r;
	sd_child(sd_burn_defaults, &r);
	sd_assert_signal(&r, SIGSEGV);
	sd_assert_has(&r, " overflowed its stack: fault in the guard region");
	sd_assert_has(&r, "reserve=65536");
	sd_assert_has(&r, "guard=1048576");
}
END_TEST

/* -------------------------------------------------------------- tier 2 */

/*
 * Where the unprobed frame lands (~28 KiB below a 4 KiB guard) some other
 * mapping may lie (ASan maps a lot): the write then succeeds, and the
 * first fault is the guard hit from below, a tier-1 message. So the actor
 * first claims that space with a PROT_NONE moat (MAP_FIXED_NOREPLACE, so
 * nothing is clobbered); if the space is taken the scenario cannot be set
 * up and the child exits 77.
 *
 * The guard is the first page below the actor's sp that does not read.
 * With guard regions it lies inside the mapping of the usable stack (a
 * chunk, of which the root's stack is the lowest: nothing of the chunk
 * is below its guard); else it is a PROT_NONE mapping of its own right
 * below the usable one. Either way an overflow must be caught; a layout
 * that is neither exits 78.
 */
static void sd_root_burn_moat(void *arg)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t guard = sp & ~(pg - 1);
	uintptr_t lo = 0, hi = 0, prev_hi = 0;
	bool carved = probe_carves_guarded();
	char line[512];
	FILE *f;
	(void)arg;
	while (probe_readable((void *)guard))
		guard -= pg;
	f = fopen("/proc/self/maps", "r");
	if (f == NULL)
		_exit(77);
	while (fgets(line, sizeof line, f) != NULL) {
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx", &a, &b) != 2)
			continue;
		if (sp >= a && sp < b) {
			lo = a;
			hi = b;
			break;
		}
		prev_hi = b;
	}
	fclose(f);
	if (hi == 0)
		_exit(78);
	/* carved: one mapping holds guard and stack; else two, adjacent */
	if (carved ? lo > guard : lo != guard + pg || prev_hi != lo)
		_exit(78);
	size_t moat = 64 * 1024; /* the frame lands ~28 KiB below */
	void *m =
		mmap((void *)(guard - moat), moat, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m == MAP_FAILED || (uintptr_t)m != guard - moat)
		_exit(77);
	sd_burn();
}

static void sd_burn_small_guard(void)
{
	sd_run(0, 4096, SMARM_STACK_GUARDED, sd_root_burn_moat);
}

START_TEST(test_stack_diag_unprobed_frame_over_small_guard_is_tier2)
{
	static struct sd_result r;
	sd_child(sd_burn_small_guard, &r);
	if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 78)
		ck_abort_msg("the guard is not where this run puts it "
			     "(carved: %d)",
			     probe_carves_guarded());
	if (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 77) {
		fprintf(stderr,
			"# skip: the space below the guard is mapped\n");
		return;
	}
	sd_assert_signal(&r, SIGSEGV);
	sd_assert_has(&r, " probably overflowed its stack: fault ");
	sd_assert_has(&r, " bytes below the guard - an unprobed (FFI?) frame "
			  "stepped over it");
	sd_assert_has(&r, "guard=4096");
	sd_assert_has(&r, "SMARM_OPT_STACK_GUARD");
}
END_TEST

/* --------------------------------------------------------------- clean */

static void sd_burn_big_reserve(void)
{
	sd_run(256 * KIB, 0, SMARM_STACK_AUTO, sd_root_burn);
}

START_TEST(test_stack_diag_big_reserve_runs_clean)
{
	static struct sd_result r;
	sd_child(sd_burn_big_reserve, &r);
	if (!WIFEXITED(r.status))
		ck_abort_msg("child died (status %#x): %.1500s", r.status,
			     r.err);
	ck_assert_int_eq(WEXITSTATUS(r.status), 0);
	ck_assert_ptr_null(strstr(r.err, "smarm: actor"));
}
END_TEST

/* ------------------------------------------------------ foreign faults */

/*
 * The "NULL" of these tests is a PROT_NONE page: a real NULL store is
 * undefined behaviour, which UBSan reports instead of letting it fault.
 */
static volatile int *volatile sd_null;

static void sd_map_null(void)
{
	void *p =
		mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(5);
	sd_null = p;
}

static void sd_null_on_main_thread(void)
{
	smarm_node_t *node = NULL;
	sd_map_null();
	if (smarm_node_open(&node, NULL) != 0) /* installs the handler */
		_exit(3);
	*sd_null = 1;
}

static void sd_root_null(void *arg)
{
	(void)arg;
	*sd_null = 1;
}

static void sd_null_in_actor(void)
{
	sd_map_null();
	sd_run(0, 0, SMARM_STACK_AUTO, sd_root_null);
}

static void *sd_thread_null(void *arg)
{
	(void)arg;
	*sd_null = 1;
	return NULL;
}

static void sd_root_thread_null(void *arg)
{
	pthread_t t;
	(void)arg;
	if (pthread_create(&t, NULL, sd_thread_null, NULL) == 0)
		pthread_join(t, NULL);
}

static void sd_null_on_plain_thread(void)
{
	sd_map_null();
	sd_run(0, 0, SMARM_STACK_AUTO, sd_root_thread_null);
}

static void (*const sd_foreign[3])(void) = {
	sd_null_on_main_thread,
	sd_null_in_actor,
	sd_null_on_plain_thread,
};

START_TEST(test_stack_diag_foreign_fault_goes_to_prior_handler)
{
	static struct sd_result r;
	sd_child(sd_foreign[_i], &r);
	sd_assert_signal(&r, SIGSEGV);
	if (_i != 1) {
		ck_assert_ptr_null(strstr(r.err, "smarm: actor"));
		return;
	}
	/* In an actor: one line names it and the code's file. */
	sd_assert_has(&r, "smarm: actor ");
	sd_assert_has(&r, " died of SIGSEGV: fault at 0x");
	sd_assert_has(&r, ", code at pc 0x");
	sd_assert_has(&r, "test_stack_diag (+0x");
	ck_assert_ptr_null(strstr(r.err, "overflowed"));
}
END_TEST

/* ------------------------------------------------ the actor named too */

/* A registered actor faults: the line gives its name beside its pid. */
static void sd_root_named_null(void *arg)
{
	(void)arg;
	if (smarm_register("victim", NULL) != 0)
		_exit(6);
	*sd_null = 1;
}

static void sd_named_null(void)
{
	sd_map_null();
	sd_run(0, 0, SMARM_STACK_AUTO, sd_root_named_null);
}

/* The same for an overflow's line. */
static void sd_root_named_recurse(void *arg)
{
	if (smarm_register("deep", NULL) != 0)
		_exit(6);
	sd_root_recurse(arg);
}

static void sd_named_recursion(void)
{
	sd_run(0, 0, SMARM_STACK_GUARDED, sd_root_named_recurse);
}

/* A server of the probe plugin, registered as "pr", faults in the
 * plugin's code (its segv cast). */
static void sd_root_server_segv(void *arg)
{
	smarm_plugin_t *pl = NULL;
	const smarm_behaviour_t *b = NULL;
	smarm_server_t *s = NULL;
	char msg[256];
	(void)arg;
	if (smarm_plugin_open(getenv("SMARM_TEST_PROBE"), &pl, msg,
			      sizeof msg) != 0 ||
	    smarm_plugin_behaviour(pl, "probe", &b) != 0 ||
	    smarm_server_start(b, NULL, "pr", &s) != 0)
		_exit(7);
	if (smarm_server_cast(s, "segv", NULL, 0) != 0)
		_exit(8);
	smarm_actor_sleep(SMARM_NO_TIMEOUT); /* the fault ends it all */
}

static void sd_server_segv(void)
{
	sd_run(0, 0, SMARM_STACK_AUTO, sd_root_server_segv);
}

START_TEST(test_stack_diag_report_names_the_actor)
{
	static struct sd_result r;
	sd_child(sd_named_null, &r);
	sd_assert_signal(&r, SIGSEGV);
	sd_assert_has(&r, " (name 'victim') died of SIGSEGV: fault at 0x");
	sd_assert_has(&r, "test_stack_diag (+0x");

	sd_child(sd_named_recursion, &r);
	sd_assert_signal(&r, SIGSEGV);
	sd_assert_has(&r, " (name 'deep') overflowed its stack: fault in the "
			  "guard region");

	sd_child(sd_server_segv, &r);
	sd_assert_signal(&r, SIGSEGV);
	sd_assert_has(&r, " (name 'pr', gen_server 'probe' of plugin 'probe') "
			  "died of SIGSEGV: fault at 0x");
	sd_assert_has(&r, "probe.so (+0x");
	/* and an unnamed actor's line is as before */
	sd_child(sd_null_in_actor, &r);
	sd_assert_signal(&r, SIGSEGV);
	sd_assert_has(&r, " died of SIGSEGV");
	ck_assert_ptr_null(strstr(r.err, ") died of")); /* no labels */
}
END_TEST

/* ------------------------------------------------------- sent SIGSEGV */

static volatile sig_atomic_t sd_prior_calls;

static void sd_prior(int sig)
{
	(void)sig;
	sd_prior_calls++;
}

static void sd_root_raise(void *arg)
{
	(void)arg;
	raise(SIGSEGV);
	raise(SIGSEGV);
	_exit(sd_prior_calls == 2 ? 0 : 10 + (int)sd_prior_calls);
}

/* Raise once: the default disposition must kill at the first one (the
 * old handler swallowed it and uninstalled itself). */
static void sd_root_raise_once(void *arg)
{
	(void)arg;
	raise(SIGSEGV);
	_exit(20); /* survived */
}

/* A SIGSEGV raised in an actor with the default disposition kills. */
static void sd_raise_default(void)
{
	sd_run(0, 0, SMARM_STACK_AUTO, sd_root_raise_once);
	_exit(20); /* survived */
}

/* With a host handler installed before the node: it gets each one. */
static void sd_raise_to_handler(void)
{
	signal(SIGSEGV, sd_prior);
	sd_run(0, 0, SMARM_STACK_AUTO, sd_root_raise);
	_exit(21);
}

START_TEST(test_stack_diag_raised_segv_takes_the_prior_disposition)
{
	static struct sd_result r;
	sd_child(sd_raise_default, &r);
	sd_assert_signal(&r, SIGSEGV);
	ck_assert_ptr_null(strstr(r.err, "smarm: actor"));
	sd_child(sd_raise_to_handler, &r);
	if (!WIFEXITED(r.status))
		ck_abort_msg("child died (status %#x): %.1500s", r.status,
			     r.err);
	ck_assert_int_eq(WEXITSTATUS(r.status), 0); /* both reached it */
}
END_TEST

/* ---------------------------------------------------------------- dense */

static __attribute__((noinline)) long sd_dense_recurse(int depth)
{
	volatile char buf[1024];
	memset((char *)buf, depth & 0x7f, sizeof buf);
	if (depth == 0) {
		/* Leave the CPU at the bottom: the switch-out check runs. */
		smarm_actor_sleep(MS(1));
		return buf[0];
	}
	return sd_dense_recurse(depth - 1) + buf[depth % sizeof buf];
}

static void sd_dense_child(void *arg)
{
	(void)arg;
	if (smarm_register("dense", NULL) != 0) /* named in the line */
		_exit(6);
	sd_dense_recurse(80); /* ~80 KiB from a 64 KiB stack */
}

static void sd_dense_overflow(void)
{
	sd_child_body = sd_dense_child;
	sd_run(0, 0, SMARM_STACK_DENSE, sd_root_child);
}

START_TEST(test_stack_diag_dense_overflow_aborts_at_switch_out)
{
	static struct sd_result r;
	sd_child(sd_dense_overflow, &r);
	sd_assert_signal(&r, SIGABRT);
	sd_assert_has(&r, "smarm: actor ");
	sd_assert_has(&r, " (name 'dense') overflowed its dense stack (no "
			  "guard page): ");
	sd_assert_has(&r, "reserve=65536");
}
END_TEST

Suite *smarm_test_stack_diag_suite(void)
{
	Suite *s = suite_create("stack_diag");
	TCase *tc = tcase_create("overflow");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_stack_diag_recursion_reports_guard_hit);
	tcase_add_test(tc, test_stack_diag_child_recursion_reports_guard_hit);
	tcase_add_test(tc,
		       test_stack_diag_unprobed_frame_in_big_guard_is_tier1);
	tcase_add_test(
		tc, test_stack_diag_unprobed_frame_over_small_guard_is_tier2);
	tcase_add_test(tc, test_stack_diag_big_reserve_runs_clean);
	suite_add_tcase(s, tc);

	tc = tcase_create("foreign");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(
		tc, test_stack_diag_foreign_fault_goes_to_prior_handler, 0, 3);
	tcase_add_test(tc,
		       test_stack_diag_raised_segv_takes_the_prior_disposition);
	tcase_add_test(tc, test_stack_diag_report_names_the_actor);
	suite_add_tcase(s, tc);

	tc = tcase_create("dense");
	tcase_set_timeout(tc, 30);
#if !defined(__SANITIZE_ADDRESS__)
	/*
	 * Not under ASan: the overflowing frames write into the redzones
	 * of the neighbour's frames, and ASan reports that
	 * (stack-buffer-underflow) before the switch-out check can run.
	 */
	tcase_add_test(tc, test_stack_diag_dense_overflow_aborts_at_switch_out);
#else
	(void)test_stack_diag_dense_overflow_aborts_at_switch_out;
#endif
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(stack_diag)
