/* SPDX-License-Identifier: MIT */
/*
 * crasher.c - the "crasher" gen_server behaviour, which ends its server
 * on request (for tests and demos of crash handling).
 *
 *     call ping() -> i64        the number of pings so far, this one too
 *     cast crash(i64)           crash the server with that reason
 *     call crash_now(i64) -> i64  crash mid-call with that reason
 *     cast fault(i64)           fault: 0 a NULL write, 1 an integer
 *                               divide by zero, 2 a stack overflow, 3 an
 *                               illegal instruction (the process ends
 *                               unless the node contains faults:
 *                               SMARM_OPT_CONTAIN_FAULTS, smarm-run's
 *                               default; then the server ends
 *                               SMARM_EXIT_FAULT)
 *
 * terminate records how and why the server ended in a counter the host
 * can read through smarm_crasher_last (a plain exported function: the
 * plugin's own test hook, not part of any behaviour). Its format_status
 * fails (SMARM_ESTATE), to show how a status says so.
 */
#include <smarm/smarm_plugin.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

static _Atomic int64_t pings;
static _Atomic int last_how = -1;
static _Atomic intptr_t last_reason;
static _Atomic int last_may_block = -1;

__attribute__((visibility("default"))) void
smarm_crasher_last(int *how, intptr_t *reason, int *may_block)
{
	*how = atomic_load(&last_how);
	*reason = atomic_load(&last_reason);
	*may_block = atomic_load(&last_may_block);
}

static int crasher_create(const char *args, void **state)
{
	(void)args;
	*state = NULL;
	atomic_store(&last_how, -1);
	return 0;
}

static void crasher_terminate(void *state, int how, intptr_t reason,
			      bool may_block)
{
	(void)state;
	atomic_store(&last_reason, reason);
	atomic_store(&last_may_block, may_block);
	atomic_store(&last_how, how);
}

static int64_t ping(void *state, smarm_gs_ctx_t *cx)
{
	(void)state;
	(void)cx;
	return atomic_fetch_add(&pings, 1) + 1;
}

static void crash(void *state, smarm_gs_ctx_t *cx, int64_t reason)
{
	(void)state;
	(void)cx;
	smarm_actor_crash((intptr_t)reason);
}

static int64_t crash_now(void *state, smarm_gs_ctx_t *cx, int64_t reason)
{
	(void)state;
	(void)cx;
	smarm_actor_crash((intptr_t)reason);
	return 0;
}

/* Values the compiler cannot see, so that it keeps the faults. */
static volatile uintptr_t nowhere;
static volatile int nothing;

static __attribute__((noinline)) int divide(int a, int b)
{
	int q;
	__asm__ volatile("cltd\n\tidivl %2"
			 : "=a"(q)
			 : "a"(a), "r"(b)
			 : "rdx", "cc");
	return q;
}

static __attribute__((noinline)) long deeper(long n)
{
	volatile char frame[1024];
	frame[0] = (char)n;
	if (n <= 0)
		return frame[0];
	return deeper(n - 1) + frame[0];
}

/* Not instrumented by UBSan (a sanitized build's null check would end
 * the process with its report before the store could fault). */
static __attribute__((no_sanitize("undefined"))) void
fault(void *state, smarm_gs_ctx_t *cx, int64_t kind)
{
	(void)state;
	(void)cx;
	switch (kind) {
	case 0:
		*(volatile int *)nowhere = 1;
		break;
	case 1:
		(void)divide(1, nothing);
		break;
	case 2:
		(void)deeper(1L << 30);
		break;
	default:
		__asm__ volatile("ud2");
		break;
	}
}

static int crasher_status(const void *state, char *buf, size_t len)
{
	(void)state;
	(void)buf;
	(void)len;
	return SMARM_ESTATE;
}

static const smarm_handler_t handlers[] = {
	{ "ping", (void (*)(void))ping },
	{ "crash", (void (*)(void))crash },
	{ "crash_now", (void (*)(void))crash_now },
	{ "fault", (void (*)(void))fault },
};

static const smarm_gs_desc_t crasher = {
	.struct_size = sizeof(smarm_gs_desc_t),
	.name = "crasher",
	.protocol = "call ping() -> i64\n"
		    "cast crash(i64)\n"
		    "call crash_now(i64) -> i64\n"
		    "cast fault(i64)\n",
	.handlers = handlers,
	.n_handlers = sizeof handlers / sizeof handlers[0],
	.create = crasher_create,
	.terminate = crasher_terminate,
	.format_status = crasher_status,
};

static const smarm_gs_desc_t *const servers[] = { &crasher };

SMARM_PLUGIN_DEFINE_SERVERS("crasher", servers);
