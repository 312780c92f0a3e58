// SPDX-License-Identifier: MIT
//
// throw_through_libc.cpp - a C++ exception thrown by a callback that
// libc makes (a qsort comparator) leaves qsort and is caught in the
// actor, while return-path preemption patches the return of that very
// libc call (one worker, a spinning actor beside the sorter, so every
// slice ends in a preemption). Rounds that do not throw show that the
// patched returns are taken on this host (SMARM_STAT_PREEMPT_RETURNS);
// a patch left in the stack while the exception unwinds would end the
// program in std::terminate. The arrays stay under 1 KiB, so that glibc's
// qsort sorts in an alloca'd buffer: a malloc'd one is leaked by any
// exception out of qsort (LeakSanitizer). Prints TAP.

#include <smarm/smarm.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#define ROUNDS 240000 /* seconds of sorting, a few hundred slices */
#define NELEM 255     /* 1020 bytes: below qsort's malloc */

static std::atomic<long> calls{ 0 };
static long throw_at;
static std::atomic<int> caught{ 0 }, thrown{ 0 }, sorted_ok{ 0 };
static std::atomic<bool> done{ false };
static int v[NELEM];

static int cmp(const void *a, const void *b)
{
	if (++calls == throw_at)
		throw std::runtime_error("from the comparator");
	int x = *static_cast<const int *>(a), y = *static_cast<const int *>(b);
	return (x > y) - (x < y);
}

static void sorter(void *)
{
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < NELEM; i++)
			v[i] = static_cast<int>((i * 2654435761u) >> 7);
		// Odd rounds throw late in the sort; even rounds finish.
		throw_at = round % 2 ? calls + 1200 : 0;
		try {
			if (throw_at != 0)
				thrown++;
			std::qsort(v, NELEM, sizeof v[0], cmp);
			bool ok = true;
			for (int i = 1; i < NELEM; i++)
				ok = ok && v[i - 1] <= v[i];
			sorted_ok += ok;
		} catch (const std::runtime_error &) {
			caught++;
		}
	}
	done = true;
}

static void spinner(void *)
{
	while (!done)
		;
}

static void root(void *)
{
	smarm_pid_t a, b;
	smarm_actor_spawn(&a, sorter, nullptr, nullptr);
	smarm_actor_spawn(&b, spinner, nullptr, nullptr);
	smarm_actor_join(a, nullptr, nullptr);
	smarm_actor_join(b, nullptr, nullptr);
}

int main()
{
	smarm_config_t *cfg = nullptr;
	smarm_node_t *node = nullptr;
	int how = -1;
	intptr_t reason = 0;
	int64_t returns = -1;
	int failed = 0;
	std::printf("1..3\n");
	if (smarm_config_alloc(&cfg) != 0 ||
	    smarm_config_set_int(cfg, SMARM_OPT_WORKERS, 1) != 0 ||
	    smarm_node_open(&node, cfg) != 0)
		return 1;
	smarm_config_free(cfg);
	bool ran = smarm_node_run(node, root, nullptr, &how, &reason) == 0 &&
		   how == SMARM_EXIT_NORMAL;
	smarm_node_get_int(node, SMARM_STAT_PREEMPT_RETURNS, &returns);
	smarm_node_close(node);
	bool all_caught = caught == thrown && thrown == ROUNDS / 2;
	bool sorted = sorted_ok == ROUNDS / 2;
	failed += !ran || !all_caught;
	std::printf("%s 1 - every exception caught in the actor (%d of %d)\n",
		    ran && all_caught ? "ok" : "not ok", caught.load(),
		    thrown.load());
	failed += !sorted;
	std::printf("%s 2 - the other rounds sorted (%d)\n",
		    sorted ? "ok" : "not ok", sorted_ok.load());
	// Without a return-path preemption taken in this run the exceptions
	// proved nothing about it: reported as a skip, not a pass (under
	// ASan, whose qsort interceptor adds frames, patches are rare).
	if (returns > 0)
		std::printf("ok 3 - patched returns taken (%lld)\n",
			    static_cast<long long>(returns));
	else
		std::printf(
			"ok 3 # SKIP no patched return taken in this run\n");
	return failed != 0;
}
