/* SPDX-License-Identifier: MIT */
/*
 * test_chan_multi.c - many receivers on one channel: counted receiver
 * references, FIFO service of waiting receivers, exactly-once delivery
 * under an oversubscribed load (actors in recv, recv_timeout and select,
 * and a plain thread, on 4 workers), the close waking every waiter, a
 * receiver stopped while parked (its element goes to the next receiver
 * or stays queued, or is destroyed if the channel was freed under it), a
 * timed-out receiver making way, and a selector whose wake another arm
 * consumed passing it on (no stranded element).
 *
 * Checks inside actors use HARNESS_CHECK; results are asserted after the
 * run. Every wait in a test has a generous deadline, so a lost wake fails
 * a check instead of hanging.
 */
#include "harness.h"

#include <pthread.h>
#include <string.h>

/* A node with async preemption off: on one worker an actor runs until it
 * parks, so "its flag is up" means "it is queued on the channel". */
static int run_coop(int workers, smarm_actor_cb root, void *arg)
{
	return harness_run_opt(workers, SMARM_OPT_PREEMPT_ASYNC, 0, root, arg,
			       NULL);
}

static atomic_int dtor_count;

static void int_dtor(void *elem)
{
	(void)elem;
	atomic_fetch_add(&dtor_count, 1);
}

static struct {
	smarm_chan_t *ch;
	atomic_int ready;
	int rc[16];
	int val[16];
	int order[16];
	uint64_t ns;
	atomic_int served;
} R;

static void reset(void)
{
	memset(&R, 0, sizeof R);
	atomic_store(&dtor_count, 0);
	harness_checks_reset();
}

/* A select over channel arms (a selset made for the call). */
static int sel_wait(smarm_chan_t *const arms[], size_t n, uint64_t timeout,
		    size_t *idx)
{
	smarm_selset_t *set = NULL;
	int rc = smarm_selset_alloc(&set);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = smarm_selset_add_chan(set, arms[i], NULL);
	if (rc == 0)
		rc = smarm_selset_wait(set, timeout, idx);
	smarm_selset_free(set);
	return rc;
}

/* Spawn fn(arg) and yield until it has raised R.ready to want. */
static smarm_pid_t spawn_parked(smarm_actor_cb fn, void *arg, int want)
{
	smarm_pid_t pid = SMARM_PID_NONE;
	HARNESS_EQ(smarm_actor_spawn(&pid, fn, arg, NULL), 0);
	while (atomic_load(&R.ready) < want)
		smarm_actor_yield();
	return pid;
}

/* ------------------------------------------------------- references */

START_TEST(test_chan_multi_receiver_refs_are_counted)
{
	smarm_chan_t *ch;
	int v = 5, out = 0, fd = -1;
	ck_assert_int_eq(smarm_chan_receiver_dup(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_chan_alloc(&ch, sizeof v, int_dtor), 0);
	ck_assert_int_eq(smarm_chan_receiver_dup(ch), 0);
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	/* One of two references gone: the queue survives. */
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(harness_chan_len(ch), 1);
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &out), 0);
	ck_assert_int_eq(out, 5);
	ck_assert_int_eq(smarm_chan_send(ch, &v), 0);
	/* The last one destroys what is queued; the side is gone. */
	ck_assert_int_eq(smarm_chan_receiver_free(ch), 0);
	ck_assert_int_eq(atomic_load(&dtor_count), 1);
	ck_assert_int_eq(smarm_chan_receiver_free(ch), SMARM_ESTATE);
	ck_assert_int_eq(smarm_chan_receiver_dup(ch), SMARM_ESTATE);
	ck_assert_int_eq(smarm_chan_try_recv(ch, &out), SMARM_ESTATE);
	ck_assert_int_eq(smarm_chan_recv(ch, &out), SMARM_ESTATE);
	ck_assert_int_eq(smarm_chan_notify_fd(ch, &fd), SMARM_ESTATE);
	ck_assert_int_eq(smarm_chan_send(ch, &v), SMARM_ECLOSED);
	ck_assert_int_eq(smarm_chan_sender_free(ch), 0);
}
END_TEST

/* ------------------------------------------------------------- FIFO */

struct rx_arg {
	int idx;
	uint64_t timeout; /* 0: recv */
};

static void fifo_receiver(void *arg)
{
	struct rx_arg *a = arg;
	int v = -1;
	atomic_fetch_add(&R.ready, 1);
	if (a->timeout == 0)
		R.rc[a->idx] = smarm_chan_recv(R.ch, &v);
	else
		R.rc[a->idx] = smarm_chan_recv_timeout(R.ch, &v, a->timeout);
	R.val[a->idx] = v;
	R.order[a->idx] = atomic_fetch_add(&R.served, 1);
}

static void fifo_root(void *arg)
{
	struct rx_arg a[5];
	smarm_pid_t pid[5];
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&R.ch, sizeof(int), NULL), 0);
	for (int i = 0; i < 5; i++) {
		a[i] = (struct rx_arg){ i, i % 2 ? MS(20000) : 0 };
		pid[i] = spawn_parked(fifo_receiver, &a[i], i + 1);
	}
	/* All five wait, in spawn order; each send serves the oldest. */
	for (int i = 0; i < 5; i++) {
		int v = 100 + i;
		HARNESS_EQ(smarm_chan_send(R.ch, &v), 0);
	}
	for (int i = 0; i < 5; i++)
		HARNESS_EQ(smarm_actor_join(pid[i], NULL, NULL), 0);
	harness_chan_drop(R.ch);
}

START_TEST(test_chan_multi_waiting_receivers_served_fifo)
{
	reset();
	ck_assert_int_eq(run_coop(1, fifo_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(R.rc[i], 0);
		ck_assert_int_eq(R.val[i], 100 + i);
	}
}
END_TEST

/* ------------------------------------------ exactly once, under load */

#define LD_PRODUCERS 4
#define LD_PER 20000
#define LD_TOTAL (LD_PRODUCERS * LD_PER)

static struct {
	smarm_chan_t *ch;
	smarm_chan_t *idle; /* a second select arm that never fires */
	unsigned char seen[LD_TOTAL];
	atomic_long sum;
	atomic_long count;
	atomic_int dup;
	atomic_int eagain; /* selects that found the element taken */
	int thread_rc;
} L;

static void ld_take(int v)
{
	if (v < 0 || v >= LD_TOTAL) {
		atomic_fetch_add(&L.dup, 1);
		return;
	}
	if (__atomic_fetch_add(&L.seen[v], 1, __ATOMIC_RELAXED) != 0)
		atomic_fetch_add(&L.dup, 1);
	atomic_fetch_add(&L.sum, v);
	atomic_fetch_add(&L.count, 1);
}

static void ld_producer(void *arg)
{
	int base = (int)(intptr_t)arg * LD_PER;
	for (int i = 0; i < LD_PER; i++) {
		int v = base + i;
		HARNESS_EQ(smarm_chan_send(L.ch, &v), 0);
		if (i % 512 == 0)
			smarm_actor_yield();
	}
	HARNESS_EQ(smarm_chan_sender_free(L.ch), 0);
}

/* Consumers: kind 0 recv, 1 recv_timeout (1 ms, races the others), 2
 * select then try_recv. Each owns a receiver reference. */
static void ld_consumer(void *arg)
{
	int kind = (int)(intptr_t)arg;
	smarm_chan_t *arms[2] = { L.idle, L.ch };
	for (;;) {
		int v = -1;
		int rc;
		if (kind == 0) {
			rc = smarm_chan_recv(L.ch, &v);
		} else if (kind == 1) {
			rc = smarm_chan_recv_timeout(L.ch, &v, MS(1));
			if (rc == SMARM_ETIMEDOUT)
				continue;
		} else {
			size_t idx = 9;
			rc = sel_wait(arms, 2, MS(20000), &idx);
			HARNESS_EQ(rc, 0);
			HARNESS_EQ(idx, 1);
			if (rc != 0)
				break;
			rc = smarm_chan_try_recv(L.ch, &v);
			if (rc == SMARM_EAGAIN) {
				atomic_fetch_add(&L.eagain, 1);
				continue;
			}
		}
		if (rc == SMARM_ECLOSED)
			break;
		HARNESS_EQ(rc, 0);
		if (rc != 0)
			break;
		ld_take(v);
	}
	HARNESS_EQ(smarm_chan_receiver_free(L.ch), 0);
}

static void *ld_thread(void *arg)
{
	(void)arg;
	for (;;) {
		int v = -1;
		int rc = smarm_chan_recv_timeout(L.ch, &v, MS(20000));
		if (rc == SMARM_ECLOSED)
			break;
		if (rc != 0) {
			L.thread_rc = rc;
			break;
		}
		ld_take(v);
	}
	smarm_chan_receiver_free(L.ch);
	return NULL;
}

static void ld_root(void *arg)
{
	static const int kinds[] = { 0, 0, 0, 1, 1, 2, 2 };
	smarm_pid_t pid[16];
	pthread_t th;
	int n = 0;
	(void)arg;
	/* The thread's reference was taken before the run. */
	HARNESS_EQ(pthread_create(&th, NULL, ld_thread, NULL), 0);
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		HARNESS_EQ(smarm_chan_receiver_dup(L.ch), 0);
		HARNESS_EQ(smarm_actor_spawn(&pid[n++], ld_consumer,
					     (void *)(intptr_t)kinds[i], NULL),
			   0);
	}
	for (int p = 0; p < LD_PRODUCERS; p++) {
		HARNESS_EQ(smarm_chan_sender_dup(L.ch), 0);
		HARNESS_EQ(smarm_actor_spawn(&pid[n++], ld_producer,
					     (void *)(intptr_t)p, NULL),
			   0);
	}
	HARNESS_EQ(smarm_chan_sender_free(L.ch), 0); /* the producers' now */
	for (int i = 0; i < n; i++)
		HARNESS_EQ(smarm_actor_join(pid[i], NULL, NULL), 0);
	pthread_join(th, NULL);
}

START_TEST(test_chan_multi_load_delivers_each_element_once)
{
	memset(&L, 0, sizeof L);
	harness_checks_reset();
	ck_assert_int_eq(smarm_chan_alloc(&L.ch, sizeof(int), NULL), 0);
	ck_assert_int_eq(smarm_chan_alloc(&L.idle, sizeof(int), NULL), 0);
	ck_assert_int_eq(smarm_chan_receiver_dup(L.ch), 0); /* the thread */
	ck_assert_int_eq(harness_run(4, ld_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(L.thread_rc, 0);
	ck_assert_int_eq(atomic_load(&L.dup), 0);
	ck_assert_int_eq(atomic_load(&L.count), LD_TOTAL);
	ck_assert_int_eq(atomic_load(&L.sum),
			 (long)LD_TOTAL * (LD_TOTAL - 1) / 2);
	/* The root's reference: the last one, with nothing queued. */
	ck_assert_int_eq(smarm_chan_receiver_free(L.ch), 0);
	harness_chan_drop(L.idle);
}
END_TEST

/* ------------------------------------------------- close wakes all */

static atomic_int cl_thread_rc;

static void *cl_thread(void *arg)
{
	int v;
	(void)arg;
	atomic_fetch_add(&R.ready, 1);
	atomic_store(&cl_thread_rc, smarm_chan_recv(R.ch, &v));
	return NULL;
}

static void cl_selector(void *arg)
{
	struct rx_arg *a = arg;
	size_t idx = 9;
	atomic_fetch_add(&R.ready, 1);
	R.rc[a->idx] = sel_wait(&R.ch, 1, MS(20000), &idx);
	R.val[a->idx] = (int)idx;
}

static void close_root(void *arg)
{
	struct rx_arg a[6];
	smarm_pid_t pid[6];
	pthread_t th;
	(void)arg;
	HARNESS_EQ(pthread_create(&th, NULL, cl_thread, NULL), 0);
	while (atomic_load(&R.ready) < 1)
		smarm_actor_yield();
	for (int i = 0; i < 6; i++) {
		a[i] = (struct rx_arg){ i, i == 2 ? MS(20000) : 0 };
		pid[i] = spawn_parked(i == 5 ? cl_selector : fifo_receiver,
				      &a[i], i + 2);
	}
	/* Give the thread time to block (the test holds either way). */
	smarm_actor_sleep(MS(20));
	HARNESS_EQ(smarm_chan_sender_free(R.ch), 0); /* close */
	for (int i = 0; i < 6; i++)
		HARNESS_EQ(smarm_actor_join(pid[i], NULL, NULL), 0);
	pthread_join(th, NULL);
	HARNESS_EQ(smarm_chan_receiver_free(R.ch), 0);
}

START_TEST(test_chan_multi_close_wakes_every_waiter)
{
	reset();
	ck_assert_int_eq(smarm_chan_alloc(&R.ch, sizeof(int), NULL), 0);
	ck_assert_int_eq(run_coop(1, close_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(R.rc[i], SMARM_ECLOSED);
	ck_assert_int_eq(R.rc[5], 0); /* the selector: closed is ready */
	ck_assert_int_eq(R.val[5], 0);
	ck_assert_int_eq(atomic_load(&cl_thread_rc), SMARM_ECLOSED);
}
END_TEST

/* ------------------------------------------ stopped while parked */

static void stop_root(void *arg)
{
	struct rx_arg a[2] = { { 0, 0 }, { 1, 0 } };
	smarm_pid_t p0, p1;
	int how = -1;
	int v = 77;
	bool with_second = arg != NULL;
	HARNESS_EQ(smarm_chan_alloc(&R.ch, sizeof(int), int_dtor), 0);
	p0 = spawn_parked(fifo_receiver, &a[0], 1);
	if (with_second)
		p1 = spawn_parked(fifo_receiver, &a[1], 2);
	/* Handed to p0, which is stopped before it runs again. */
	HARNESS_EQ(smarm_chan_send(R.ch, &v), 0);
	HARNESS_EQ(smarm_actor_stop(p0), 0);
	HARNESS_EQ(smarm_actor_join(p0, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_STOPPED);
	if (with_second) {
		HARNESS_EQ(smarm_actor_join(p1, NULL, NULL), 0);
		HARNESS_EQ(harness_chan_len(R.ch), 0);
	} else {
		int out = -1;
		HARNESS_EQ(smarm_chan_try_recv(R.ch, &out), 0);
		R.val[1] = out;
		R.rc[1] = 0;
	}
	harness_chan_drop(R.ch);
}

START_TEST(test_chan_multi_stopped_receiver_element_goes_to_next)
{
	reset();
	ck_assert_int_eq(run_coop(1, stop_root, (void *)1), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], 77);
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
}
END_TEST

START_TEST(test_chan_multi_stopped_receiver_element_stays_queued)
{
	reset();
	ck_assert_int_eq(run_coop(1, stop_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], 77);
	ck_assert_int_eq(atomic_load(&dtor_count), 0);
}
END_TEST

/*
 * Handed an element and stopped before it runs again, and then the
 * channel is freed under it (the sender counted it out, so the last
 * receiver reference may go): the stopped receiver finds the channel
 * gone and destroys the element, once (no receiver is left to take it),
 * and leaves alone the channel that reused the memory.
 */
static void stop_freed_root(void *arg)
{
	struct rx_arg a = { 0, 0 };
	smarm_chan_t *next = NULL;
	smarm_pid_t p0;
	int how = -1;
	int v = 78;
	bool stop_first = arg != NULL;
	HARNESS_EQ(smarm_chan_alloc(&R.ch, sizeof(int), int_dtor), 0);
	p0 = spawn_parked(fifo_receiver, &a, 1);
	if (stop_first)
		HARNESS_EQ(smarm_actor_stop(p0), 0);
	HARNESS_EQ(smarm_chan_send(R.ch, &v), 0);
	if (!stop_first)
		HARNESS_EQ(smarm_actor_stop(p0), 0);
	R.rc[4] = smarm_chan_receiver_free(R.ch);
	R.rc[5] = smarm_chan_sender_free(R.ch);
	/* Likely in the freed channel's memory: it must stay untouched. */
	HARNESS_EQ(smarm_chan_alloc(&next, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_actor_join(p0, &how, NULL), 0);
	HARNESS_EQ(how, SMARM_EXIT_STOPPED);
	R.val[4] = (int)harness_chan_len(next);
	harness_chan_drop(next);
}

START_TEST(test_chan_multi_stopped_receiver_of_freed_channel_destroys)
{
	for (int stop_first = 0; stop_first < 2; stop_first++) {
		reset();
		ck_assert_int_eq(run_coop(1, stop_freed_root,
					  stop_first ? (void *)1 : NULL),
				 SMARM_EXIT_NORMAL);
		harness_checks_assert();
		ck_assert_int_eq(R.rc[4], 0);
		ck_assert_int_eq(R.rc[5], 0);
		ck_assert_int_eq(atomic_load(&dtor_count), 1);
		ck_assert_int_eq(R.val[4], 0);
	}
}
END_TEST

/* A parked receiver stopped before any send: the send serves the next. */
static void stop_idle_root(void *arg)
{
	struct rx_arg a[2] = { { 0, 0 }, { 1, 0 } };
	smarm_pid_t p0, p1;
	int v = 78;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&R.ch, sizeof(int), int_dtor), 0);
	p0 = spawn_parked(fifo_receiver, &a[0], 1);
	p1 = spawn_parked(fifo_receiver, &a[1], 2);
	HARNESS_EQ(smarm_actor_stop(p0), 0);
	HARNESS_EQ(smarm_actor_join(p0, NULL, NULL), 0);
	HARNESS_EQ(smarm_chan_send(R.ch, &v), 0);
	HARNESS_EQ(smarm_actor_join(p1, NULL, NULL), 0);
	harness_chan_drop(R.ch);
}

START_TEST(test_chan_multi_stopped_waiter_leaves_the_queue)
{
	reset();
	ck_assert_int_eq(run_coop(1, stop_idle_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], 78);
}
END_TEST

/* --------------------------------------- recv_timeout makes way */

static void timeout_root(void *arg)
{
	struct rx_arg a[2] = { { 0, MS(20) }, { 1, 0 } };
	smarm_pid_t p0, p1;
	int v = 55;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&R.ch, sizeof(int), NULL), 0);
	p0 = spawn_parked(fifo_receiver, &a[0], 1);
	p1 = spawn_parked(fifo_receiver, &a[1], 2);
	HARNESS_EQ(smarm_actor_join(p0, NULL, NULL), 0); /* timed out */
	HARNESS_EQ(smarm_chan_send(R.ch, &v), 0);
	HARNESS_EQ(smarm_actor_join(p1, NULL, NULL), 0);
	harness_chan_drop(R.ch);
}

START_TEST(test_chan_multi_timed_out_receiver_makes_way)
{
	reset();
	ck_assert_int_eq(run_coop(1, timeout_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(R.rc[0], SMARM_ETIMEDOUT);
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], 55);
}
END_TEST

/* -------------------------------- a selector's lost wake is passed on */

static smarm_chan_t *sel_other;

static void pass_selector(void *arg)
{
	smarm_chan_t *arms[2] = { sel_other, R.ch };
	size_t idx = 9;
	int v = -1;
	(void)arg;
	atomic_fetch_add(&R.ready, 1);
	R.rc[0] = sel_wait(arms, 2, MS(20000), &idx);
	R.val[0] = (int)idx;
	/* It takes what arm 0 had, and leaves R.ch alone. */
	R.rc[2] = smarm_chan_try_recv(sel_other, &v);
}

static void pass_receiver(void *arg)
{
	int v = -1;
	uint64_t t0 = smarm_now_ns();
	(void)arg;
	atomic_fetch_add(&R.ready, 1);
	R.rc[1] = smarm_chan_recv_timeout(R.ch, &v, MS(20000));
	R.val[1] = v;
	R.ns = harness_since(t0);
}

static void pass_root(void *arg)
{
	smarm_pid_t ps, pr;
	int v = 1;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&R.ch, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_chan_alloc(&sel_other, sizeof(int), NULL), 0);
	ps = spawn_parked(pass_selector, NULL, 1);
	pr = spawn_parked(pass_receiver, NULL, 2); /* queued behind it */
	/* The selector's wake comes from arm 0; then R.ch's send finds the
	 * selector first in line, and its wake lands on a woken actor. */
	HARNESS_EQ(smarm_chan_send(sel_other, &v), 0);
	v = 2;
	HARNESS_EQ(smarm_chan_send(R.ch, &v), 0);
	HARNESS_EQ(smarm_actor_join(ps, NULL, NULL), 0);
	HARNESS_EQ(smarm_actor_join(pr, NULL, NULL), 0);
	harness_chan_drop(R.ch);
	harness_chan_drop(sel_other);
}

START_TEST(test_chan_multi_selector_passes_unused_wake_on)
{
	reset();
	ck_assert_int_eq(run_coop(1, pass_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 0);
	ck_assert_int_eq(R.rc[2], 0);
	/* Not stranded behind the selector: the receiver got it, long
	 * before its deadline (an element ready at the deadline wins). */
	ck_assert_int_eq(R.rc[1], 0);
	ck_assert_int_eq(R.val[1], 2);
	ck_assert_elapsed_lt(R.ns, MS(5000));
}
END_TEST

/* The last receiver reference is refused while an actor waits. */
static void busy_root(void *arg)
{
	struct rx_arg a = { 0, 0 };
	smarm_pid_t p0;
	int v = 3;
	(void)arg;
	HARNESS_EQ(smarm_chan_alloc(&R.ch, sizeof(int), NULL), 0);
	HARNESS_EQ(smarm_chan_receiver_dup(R.ch), 0);
	p0 = spawn_parked(fifo_receiver, &a, 1);
	HARNESS_EQ(smarm_chan_receiver_free(R.ch), 0); /* not the last */
	R.rc[5] = smarm_chan_receiver_free(R.ch);      /* the last: busy */
	HARNESS_EQ(smarm_chan_send(R.ch, &v), 0);
	HARNESS_EQ(smarm_actor_join(p0, NULL, NULL), 0);
	harness_chan_drop(R.ch);
}

START_TEST(test_chan_multi_last_receiver_free_while_waiting_is_estate)
{
	reset();
	ck_assert_int_eq(run_coop(1, busy_root, NULL), SMARM_EXIT_NORMAL);
	harness_checks_assert();
	ck_assert_int_eq(R.rc[5], SMARM_ESTATE);
	ck_assert_int_eq(R.rc[0], 0);
	ck_assert_int_eq(R.val[0], 3);
}
END_TEST

Suite *smarm_test_chan_multi_suite(void)
{
	Suite *s = suite_create("chan_multi");
	TCase *tc = tcase_create("refs");
	tcase_add_test(tc, test_chan_multi_receiver_refs_are_counted);
	tcase_add_test(
		tc, test_chan_multi_last_receiver_free_while_waiting_is_estate);
	suite_add_tcase(s, tc);

	tc = tcase_create("fifo");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_chan_multi_waiting_receivers_served_fifo);
	tcase_add_test(tc, test_chan_multi_timed_out_receiver_makes_way);
	tcase_add_test(tc, test_chan_multi_selector_passes_unused_wake_on);
	suite_add_tcase(s, tc);

	tc = tcase_create("close_stop");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_chan_multi_close_wakes_every_waiter);
	tcase_add_test(tc,
		       test_chan_multi_stopped_receiver_element_goes_to_next);
	tcase_add_test(tc,
		       test_chan_multi_stopped_receiver_element_stays_queued);
	tcase_add_test(tc, test_chan_multi_stopped_waiter_leaves_the_queue);
	tcase_add_test(
		tc, test_chan_multi_stopped_receiver_of_freed_channel_destroys);
	suite_add_tcase(s, tc);

	tc = tcase_create("load");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_chan_multi_load_delivers_each_element_once);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(chan_multi)
