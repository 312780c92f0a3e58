/* SPDX-License-Identifier: MIT */
/*
 * static_preempt.c - what asynchronous preemption does when libsmarm is
 * linked statically; run-install-test.sh builds it against the installed
 * libsmarm.a and checks the docs/embedding.md statement with it.
 *
 * One worker runs a spinner (spin.h: a loop that calls nothing and waits
 * a bounded number of rounds for a flag) and, queued behind it, a setter
 * that sets the flag. The setter can run before the bound only if a
 * preemption signal switches the spinner out.
 *
 *   static_preempt exe  the spinner runs in the executable's own text,
 *                       which holds libsmarm too: allowing it must fail
 *                       with SMARM_EINVAL and the spinner must never be
 *                       preempted (every signal deferred).
 *   static_preempt so   (built with -DWITH_HOSTCODE, linked with
 *                       libhostcode.so) the spinner runs in the host's
 *                       shared object: allowing it must succeed and the
 *                       spinner must be preempted.
 *
 * Prints what it saw; exits 0 only when the mode's expectation holds.
 */
#include "spin.h"

#include <smarm/smarm.h>

#include <stdio.h>
#include <string.h>

/* Rounds before the spinner gives up: well under a second of work. */
#define LIMIT 400000000ul

#ifdef WITH_HOSTCODE
unsigned long host_spin(atomic_int *flag, unsigned long limit);
#endif

typedef unsigned long (*spin_fn)(atomic_int *flag, unsigned long limit);

static atomic_int flag;
static unsigned long rounds;
static spin_fn spin;

static unsigned long exe_spin(atomic_int *f, unsigned long limit)
{
	return spin_until(f, limit);
}

static void spinner(void *arg)
{
	(void)arg;
	rounds = spin(&flag, LIMIT);
}

static void setter(void *arg)
{
	(void)arg;
	atomic_store(&flag, 1);
}

static void root(void *arg)
{
	smarm_pid_t p[2];
	(void)arg;
	if (smarm_actor_spawn(&p[0], spinner, NULL, NULL) != 0 ||
	    smarm_actor_spawn(&p[1], setter, NULL, NULL) != 0)
		smarm_actor_crash(1);
	for (int i = 0; i < 2; i++)
		smarm_actor_join(p[i], NULL, NULL);
}

int main(int argc, char **argv)
{
	smarm_config_t *cfg;
	smarm_node_t *node;
	int64_t async = -1, deferred = -1;
	int how = -1, allow;
	bool in_so;

	if (argc != 2 ||
	    (strcmp(argv[1], "exe") != 0 && strcmp(argv[1], "so") != 0)) {
		fprintf(stderr, "usage: %s exe|so\n", argv[0]);
		return 2;
	}
	in_so = strcmp(argv[1], "so") == 0;
#ifdef WITH_HOSTCODE
	spin = in_so ? host_spin : exe_spin;
#else
	if (in_so) {
		fprintf(stderr, "built without libhostcode.so\n");
		return 2;
	}
	spin = exe_spin;
#endif
	allow = smarm_preempt_allow_object((void *)(uintptr_t)spin);
	if (smarm_config_alloc(&cfg) != 0 ||
	    smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1) != 0 ||
	    smarm_config_set_int(cfg, SMARM_OPT_ASYNC_SLICE_NS, 100000) != 0 ||
	    smarm_node_open(&node, cfg) != 0) {
		fprintf(stderr, "node setup failed\n");
		return 1;
	}
	smarm_config_free(cfg);
	if (smarm_node_run(node, root, NULL, &how, NULL) != 0 ||
	    smarm_node_get_int(node, SMARM_STAT_PREEMPT_ASYNC, &async) != 0 ||
	    smarm_node_get_int(node, SMARM_STAT_PREEMPT_DEFERRED, &deferred) !=
		    0) {
		fprintf(stderr, "run failed\n");
		return 1;
	}
	smarm_node_close(node);
	printf("allow %s, spinner %s after %lu rounds, async %lld, "
	       "deferred %lld\n",
	       smarm_err_name(allow), rounds < LIMIT ? "preempted" : "ran out",
	       rounds, (long long)async, (long long)deferred);
	if (how != SMARM_EXIT_NORMAL)
		return 1;
	if (in_so)
		return allow == 0 && rounds < LIMIT && async > 0 ? 0 : 1;
	return allow == SMARM_EINVAL && rounds == LIMIT && async == 0 &&
			       deferred > 0
		       ? 0
		       : 1;
}
