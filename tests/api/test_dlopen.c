/* SPDX-License-Identifier: MIT */
/*
 * test_dlopen.c - a host that does not link libsmarm: it dlopen()s the
 * built library and reaches every call through dlsym() pointers.
 *
 * The library is found by, in order: $SMARM_LIB_PATH; the directory of
 * this executable + "/../libsmarm.so.0" (tests live in build/tests/, the
 * library in build/); plain "libsmarm.so.0" on the loader's search path.
 *
 * The public header is included for its types and constants only; no
 * smarm_* function is called directly (the static asserts below only
 * compare types, they do not reference the symbols).
 */
#include <check.h>
#include <smarm/smarm.h>

#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef unsigned (*version_fn)(void);
typedef const char *(*version_string_fn)(void);
typedef int (*node_open_fn)(smarm_node_t **, const smarm_config_t *);
typedef int (*node_run_fn)(smarm_node_t *, smarm_actor_cb, void *, int *,
			   intptr_t *);
typedef int (*node_close_fn)(smarm_node_t *);
typedef int (*actor_spawn_fn)(smarm_pid_t *, smarm_actor_cb, void *,
			      const smarm_spawn_opts_t *);
typedef int (*actor_join_fn)(smarm_pid_t, int *, intptr_t *);
typedef int (*actor_crash_fn)(intptr_t);
typedef int (*chan_alloc_fn)(smarm_chan_t **, size_t, smarm_elem_free_cb);
typedef int (*chan_send_fn)(smarm_chan_t *, const void *);
typedef int (*chan_recv_fn)(smarm_chan_t *, void *);
typedef int (*chan_ref_fn)(smarm_chan_t *);

/* The typedefs match the header (types only: no symbol is referenced). */
#define SAME_TYPE(fp, fn)                                                      \
	_Static_assert(__builtin_types_compatible_p(fp, __typeof__(&fn)),      \
		       #fn " signature drifted")
SAME_TYPE(version_fn, smarm_version);
SAME_TYPE(version_string_fn, smarm_version_string);
SAME_TYPE(node_open_fn, smarm_node_open);
SAME_TYPE(node_run_fn, smarm_node_run);
SAME_TYPE(node_close_fn, smarm_node_close);
SAME_TYPE(actor_spawn_fn, smarm_actor_spawn);
SAME_TYPE(actor_join_fn, smarm_actor_join);
SAME_TYPE(actor_crash_fn, smarm_actor_crash);
SAME_TYPE(chan_alloc_fn, smarm_chan_alloc);
SAME_TYPE(chan_send_fn, smarm_chan_send);
SAME_TYPE(chan_recv_fn, smarm_chan_recv);
SAME_TYPE(chan_ref_fn, smarm_chan_sender_free);

static struct {
	version_fn version;
	version_string_fn version_string;
	node_open_fn node_open;
	node_run_fn node_run;
	node_close_fn node_close;
	actor_spawn_fn actor_spawn;
	actor_join_fn actor_join;
	actor_crash_fn actor_crash;
	chan_alloc_fn chan_alloc;
	chan_send_fn chan_send;
	chan_recv_fn chan_recv;
	chan_ref_fn sender_free;
	chan_ref_fn receiver_free;
} api;

static char lib_path[PATH_MAX + 32];

static void *open_library(void)
{
	const char *env = getenv("SMARM_LIB_PATH");
	void *h;
	if (env != NULL && env[0] != '\0') {
		snprintf(lib_path, sizeof lib_path, "%s", env);
		return dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			snprintf(lib_path, sizeof lib_path,
				 "%s/../libsmarm.so.0", exe);
			h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
			if (h != NULL)
				return h;
		}
	}
	snprintf(lib_path, sizeof lib_path, "libsmarm.so.0");
	return dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
}

static void *must_sym(void *h, const char *name)
{
	void *p = dlsym(h, name);
	ck_assert_msg(p != NULL, "dlsym(%s): %s", name, dlerror());
	return p;
}

#define LOAD(h, field, name)                                                   \
	do {                                                                   \
		void *p_ = must_sym((h), (name));                              \
		memcpy(&api.field, &p_, sizeof p_);                            \
	} while (0)

static void *load_api(void)
{
	void *h = open_library();
	ck_assert_msg(h != NULL, "dlopen(%s): %s", lib_path, dlerror());
	LOAD(h, version, "smarm_version");
	LOAD(h, version_string, "smarm_version_string");
	LOAD(h, node_open, "smarm_node_open");
	LOAD(h, node_run, "smarm_node_run");
	LOAD(h, node_close, "smarm_node_close");
	LOAD(h, actor_spawn, "smarm_actor_spawn");
	LOAD(h, actor_join, "smarm_actor_join");
	LOAD(h, actor_crash, "smarm_actor_crash");
	LOAD(h, chan_alloc, "smarm_chan_alloc");
	LOAD(h, chan_send, "smarm_chan_send");
	LOAD(h, chan_recv, "smarm_chan_recv");
	LOAD(h, sender_free, "smarm_chan_sender_free");
	LOAD(h, receiver_free, "smarm_chan_receiver_free");
	return h;
}

/* ------------------------------------------------------------------- */

START_TEST(test_dlopen_version_matches_header)
{
	void *h = load_api();
	ck_assert_uint_eq(api.version(), SMARM_VERSION_HEX);
	ck_assert_str_eq(api.version_string(), SMARM_VERSION_STRING);
	ck_assert_int_eq(dlclose(h), 0);
}
END_TEST

START_TEST(test_dlopen_symbols_versioned_internals_hidden)
{
	void *h = load_api();
	/* SMARM_0.1 symbols keep their node; later nodes inherit it. */
	ck_assert_ptr_nonnull(dlvsym(h, "smarm_node_run", "SMARM_0.1"));
	ck_assert_ptr_nonnull(dlvsym(h, "smarm_chan_send", "SMARM_0.1"));
	ck_assert_ptr_nonnull(dlvsym(h, "smarm_preempt_disable", "SMARM_0.2"));
	ck_assert_ptr_null(dlvsym(h, "smarm_preempt_disable", "SMARM_0.1"));
	/* Internal symbols are not exported. */
	ck_assert_ptr_null(dlsym(h, "smarm__spawn"));
	ck_assert_ptr_null(dlsym(h, "smarm__park"));
	ck_assert_ptr_null(dlsym(h, "smarm__timer_sleep"));
	ck_assert_ptr_null(dlsym(h, "smarm__chan_arm"));
	ck_assert_int_eq(dlclose(h), 0);
}
END_TEST

static struct {
	int spawn_rc;
	int join_rc;
	int how;
	intptr_t reason;
	int child_ran;
	int recv_rc;
	int value;
	int crash_how;
	intptr_t crash_reason;
} R;

static smarm_chan_t *reply;

static void child(void *arg)
{
	int v = (int)(intptr_t)arg * 2;
	R.child_ran = 1;
	api.chan_send(reply, &v);
}

static void crasher(void *arg)
{
	(void)arg;
	api.actor_crash(77);
}

static void root(void *arg)
{
	smarm_pid_t pid;
	(void)arg;
	api.chan_alloc(&reply, sizeof(int), NULL);
	R.spawn_rc = api.actor_spawn(&pid, child, (void *)(intptr_t)21, NULL);
	R.recv_rc = api.chan_recv(reply, &R.value);
	R.join_rc = api.actor_join(pid, &R.how, &R.reason);
	api.sender_free(reply);
	api.receiver_free(reply);
	if (api.actor_spawn(&pid, crasher, NULL, NULL) == 0)
		api.actor_join(pid, &R.crash_how, &R.crash_reason);
}

START_TEST(test_dlopen_run_spawn_join_through_dlsym)
{
	void *h = load_api();
	smarm_node_t *node = NULL;
	int how = -1;
	memset(&R, 0, sizeof R);
	R.how = R.crash_how = -1;
	ck_assert_int_eq(api.node_open(&node, NULL), 0);
	ck_assert_ptr_nonnull(node);
	ck_assert_int_eq(api.node_run(node, root, NULL, &how, NULL), 0);
	ck_assert_int_eq(api.node_close(node), 0);
	ck_assert_int_eq(how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.spawn_rc, 0);
	ck_assert_int_eq(R.child_ran, 1);
	ck_assert_int_eq(R.recv_rc, 0);
	ck_assert_int_eq(R.value, 42);
	ck_assert_int_eq(R.join_rc, 0);
	ck_assert_int_eq(R.how, SMARM_EXIT_NORMAL);
	ck_assert_int_eq(R.reason, 0);
	ck_assert_int_eq(R.crash_how, SMARM_EXIT_CRASHED);
	ck_assert_int_eq(R.crash_reason, 77);
	ck_assert_int_eq(dlclose(h), 0);
}
END_TEST

START_TEST(test_dlopen_spawn_outside_actor_returns_enotactor)
{
	void *h = load_api();
	smarm_pid_t pid;
	ck_assert_int_eq(api.actor_spawn(&pid, child, NULL, NULL),
			 SMARM_ENOTACTOR);
	ck_assert_int_eq(api.actor_join(pid, NULL, NULL), SMARM_ENOTACTOR);
	ck_assert_int_eq(dlclose(h), 0);
}
END_TEST

/* The fault handler a node installs must not outlive the library. */
START_TEST(test_dlopen_dlclose_restores_prior_segv_handler)
{
	struct sigaction before;
	struct sigaction during;
	struct sigaction after;
	smarm_node_t *node = NULL;
	ck_assert_int_eq(sigaction(SIGSEGV, NULL, &before), 0);
	void *h = load_api();
	ck_assert_int_eq(api.node_open(&node, NULL), 0);
	ck_assert_int_eq(api.node_close(node), 0);
	ck_assert_int_eq(sigaction(SIGSEGV, NULL, &during), 0);
	ck_assert_ptr_ne((void *)during.sa_sigaction,
			 (void *)before.sa_sigaction); /* ours meanwhile */
	ck_assert_int_eq(dlclose(h), 0);
	ck_assert_int_eq(sigaction(SIGSEGV, NULL, &after), 0);
	ck_assert_ptr_eq((void *)after.sa_sigaction,
			 (void *)before.sa_sigaction);
	ck_assert_int_eq(after.sa_flags & SA_SIGINFO,
			 before.sa_flags & SA_SIGINFO);
}
END_TEST

Suite *smarm_test_dlopen_suite(void)
{
	Suite *s = suite_create("dlopen");
	TCase *tc = tcase_create("dlopen");
	tcase_add_test(tc, test_dlopen_version_matches_header);
	tcase_add_test(tc, test_dlopen_symbols_versioned_internals_hidden);
	tcase_add_test(tc, test_dlopen_run_spawn_join_through_dlsym);
	tcase_add_test(tc, test_dlopen_spawn_outside_actor_returns_enotactor);
	tcase_add_test(tc, test_dlopen_dlclose_restores_prior_segv_handler);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(smarm_test_dlopen_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
