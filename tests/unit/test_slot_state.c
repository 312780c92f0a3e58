/* SPDX-License-Identifier: MIT */
/*
 * test_slot_state.c - the packed state word and the park-epoch protocol
 * (spec core.md §5.3-5.4) on a free-standing slot, single-threaded and
 * raced by threads; plus the slot table (allocation order, growth, exact
 * limit, reuse, liveness by generation), and the run queue sized for it
 * (its pages written ahead of its pushes).
 */
#include "harness.h"

#include "core/actor.h"
#include "core/node.h"
#include "core/slot.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct smarm__slot ss_slot;

static void ss_set(uint32_t gen, uint32_t epoch, uint32_t st)
{
	memset(&ss_slot, 0, sizeof ss_slot); /* stop = 0, exiting = 0 */
	atomic_store(&ss_slot.word, SMARM__W_MAKE(gen, epoch, st));
}

static uint64_t ss_word(void)
{
	return atomic_load(&ss_slot.word);
}

#define ck_assert_word(gen, epoch, st)                                         \
	do {                                                                   \
		uint64_t w_ = ss_word();                                       \
		ck_assert_uint_eq(SMARM__W_GEN(w_), (gen));                    \
		ck_assert_uint_eq(SMARM__W_EPOCH(w_), (epoch));                \
		ck_assert_uint_eq(SMARM__W_STATE(w_), (st));                   \
	} while (0)

/* ------------------------------------------------------------ encoding */

START_TEST(test_slot_state_word_packs_fields)
{
	uint64_t w = SMARM__W_MAKE(0xdeadbeefu, 0xabcdefu, SMARM__ST_PARKED);
	ck_assert_uint_eq(SMARM__W_GEN(w), 0xdeadbeefu);
	ck_assert_uint_eq(SMARM__W_EPOCH(w), 0xabcdefu);
	ck_assert_uint_eq(SMARM__W_STATE(w), SMARM__ST_PARKED);
	/* the epoch is 24 bits: an overflow does not spill into gen */
	w = SMARM__W_MAKE(7, 0x1000005u, SMARM__ST_RUNNING);
	ck_assert_uint_eq(SMARM__W_GEN(w), 7);
	ck_assert_uint_eq(SMARM__W_EPOCH(w), 5);
	ck_assert_uint_eq(SMARM__PID_GEN(smarm__pid_make(3, 7, 99)), 3);
	ck_assert_uint_eq(SMARM__PID_NODE(smarm__pid_make(3, 7, 99)), 7);
	ck_assert_uint_eq(SMARM__PID_IDX(smarm__pid_make(3, 7, 99)), 99);
	/* the index is 24 bits: it never spills into the node serial */
	ck_assert_uint_eq(
		SMARM__PID_NODE(smarm__pid_make(3, 7, SMARM__PID_IDX_MAX - 1)),
		7);
}
END_TEST

/* ----------------------------------------------------------- begin_wait */

START_TEST(test_slot_state_begin_wait_names_next_epoch_writes_nothing)
{
	/* the round's epoch is the word's next; the word is not written */
	ss_set(1, 5, SMARM__ST_RUNNING);
	ck_assert_uint_eq(smarm__begin_wait(&ss_slot), 6);
	ck_assert_word(1, 5, SMARM__ST_RUNNING);
	ck_assert_uint_eq(atomic_load(&ss_slot.waits), 1);
	/* its wake lands and moves the word to the round's epoch */
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 1, false, 6),
			 SMARM__UNPARK_NOTIFIED);
	ck_assert_word(1, 6, SMARM__ST_NOTIFIED);
	/* a pending notification (a stop's) survives a new wait */
	ss_set(4, 9, SMARM__ST_NOTIFIED);
	ck_assert_uint_eq(smarm__begin_wait(&ss_slot), 10);
	ck_assert_word(4, 9, SMARM__ST_NOTIFIED);
}
END_TEST

START_TEST(test_slot_state_epoch_wraps_without_touching_gen)
{
	ss_set(9, 0xffffffu, SMARM__ST_RUNNING);
	ck_assert_uint_eq(smarm__begin_wait(&ss_slot), 0);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 9, false, 0),
			 SMARM__UNPARK_NOTIFIED);
	ck_assert_word(9, 0, SMARM__ST_NOTIFIED);
	ss_set(9, 0xffffffu, SMARM__ST_PARKED);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 9, false, 0xffffffu),
			 SMARM__UNPARK_ENQUEUE);
	ck_assert_word(9, 0, SMARM__ST_QUEUED);
}
END_TEST

/* --------------------------------------------------------------- unpark */

START_TEST(test_slot_state_unpark_stale_epoch_is_noop)
{
	ss_set(1, 7, SMARM__ST_PARKED);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 1, false, 6),
			 SMARM__UNPARK_NOOP);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 1, false, 8),
			 SMARM__UNPARK_NOOP);
	ck_assert_word(1, 7, SMARM__ST_PARKED);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 1, false, 7),
			 SMARM__UNPARK_ENQUEUE);
	ck_assert_word(1, 8, SMARM__ST_QUEUED);
	/* the epoch was consumed: the same wake again does nothing */
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 1, false, 7),
			 SMARM__UNPARK_NOOP);
	ck_assert_word(1, 8, SMARM__ST_QUEUED);
}
END_TEST

START_TEST(test_slot_state_unpark_running_notifies_once)
{
	/* running at epoch 3, its open round is 4: 3 and 5 are not it */
	ss_set(2, 3, SMARM__ST_RUNNING);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 2, false, 3),
			 SMARM__UNPARK_NOOP);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 2, false, 5),
			 SMARM__UNPARK_NOOP);
	ck_assert_word(2, 3, SMARM__ST_RUNNING);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 2, false, 4),
			 SMARM__UNPARK_NOTIFIED);
	ck_assert_word(2, 4, SMARM__ST_NOTIFIED);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 2, false, 4),
			 SMARM__UNPARK_NOOP);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 2, false, 5),
			 SMARM__UNPARK_NOOP);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 2, true, 0),
			 SMARM__UNPARK_NOOP);
	ck_assert_word(2, 4, SMARM__ST_NOTIFIED);
}
END_TEST

START_TEST(test_slot_state_unpark_other_states_noop)
{
	static const uint32_t sts[] = { SMARM__ST_VACANT, SMARM__ST_QUEUED,
					SMARM__ST_NOTIFIED, SMARM__ST_DONE };
	for (size_t i = 0; i < sizeof sts / sizeof sts[0]; i++) {
		ss_set(1, 2, sts[i]);
		ck_assert_int_eq(smarm__word_unpark(&ss_slot, 1, false, 2),
				 SMARM__UNPARK_NOOP);
		ck_assert_int_eq(smarm__word_unpark(&ss_slot, 1, true, 0),
				 SMARM__UNPARK_NOOP);
		ck_assert_word(1, 2, sts[i]);
	}
}
END_TEST

START_TEST(test_slot_state_wildcard_unpark_ignores_epoch)
{
	ss_set(1, 77, SMARM__ST_PARKED);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 1, true, 3),
			 SMARM__UNPARK_ENQUEUE);
	ck_assert_word(1, 78, SMARM__ST_QUEUED);
	ss_set(1, 77, SMARM__ST_RUNNING);
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 1, true, 0),
			 SMARM__UNPARK_NOTIFIED);
	ck_assert_word(1, 78, SMARM__ST_NOTIFIED);
}
END_TEST

START_TEST(test_slot_state_stale_generation_unpark_never_lands)
{
	/* the slot was reclaimed (gen 5) and reused; wakes for gen 4 die */
	static const uint32_t sts[] = { SMARM__ST_VACANT,   SMARM__ST_QUEUED,
					SMARM__ST_RUNNING,  SMARM__ST_PARKED,
					SMARM__ST_NOTIFIED, SMARM__ST_DONE };
	for (size_t i = 0; i < sizeof sts / sizeof sts[0]; i++) {
		ss_set(5, 1, sts[i]);
		ck_assert_int_eq(smarm__word_unpark(&ss_slot, 4, false, 1),
				 SMARM__UNPARK_NOOP);
		ck_assert_int_eq(smarm__word_unpark(&ss_slot, 4, true, 0),
				 SMARM__UNPARK_NOOP);
		ck_assert_int_eq(smarm__word_unpark(&ss_slot, 6, true, 0),
				 SMARM__UNPARK_NOOP);
		ck_assert_word(5, 1, sts[i]);
	}
}
END_TEST

/* ---------------------------------------------------------- retire_wait */

START_TEST(test_slot_state_retire_wait_eats_notification)
{
	uint32_t e;
	ss_set(1, 0, SMARM__ST_RUNNING);
	e = smarm__begin_wait(&ss_slot);
	ck_assert_int_eq(
		smarm__word_unpark(&ss_slot, 1, false, e),
		SMARM__UNPARK_NOTIFIED); /* a wake landed before the park */
	smarm__retire_wait(&ss_slot);	 /* the wait ended without one */
	ck_assert_word(1, e + 1, SMARM__ST_RUNNING);
}
END_TEST

START_TEST(test_slot_state_retire_wait_kills_in_flight_wake)
{
	uint32_t e;
	ss_set(1, 10, SMARM__ST_RUNNING);
	e = smarm__begin_wait(&ss_slot);
	smarm__retire_wait(&ss_slot);
	ck_assert_word(1, e, SMARM__ST_RUNNING);
	/* a waker still holding (pid, e) arrives late */
	ck_assert_int_eq(smarm__word_unpark(&ss_slot, 1, false, e),
			 SMARM__UNPARK_NOOP);
	ck_assert_word(1, e, SMARM__ST_RUNNING);
	/* and the next wait is not disturbed by it */
	ck_assert_uint_eq(smarm__begin_wait(&ss_slot), e + 1);
	ck_assert_word(1, e, SMARM__ST_RUNNING);
}
END_TEST

/* ------------------------------------------------------------ threaded */

#define SS_ROUNDS 10000
#define SS_MAX_THREADS 4

struct ss_race {
	pthread_barrier_t start, end;
	int nthreads;
	int (*body)(int tid); /* returns an UNPARK_* or other code */
	atomic_int results[8];
	atomic_int stop;
};

static struct ss_race ss_race;

static void *ss_race_thread(void *arg)
{
	int tid = (int)(intptr_t)arg;
	for (;;) {
		pthread_barrier_wait(&ss_race.start);
		if (atomic_load(&ss_race.stop))
			return NULL;
		int r = ss_race.body(tid);
		atomic_fetch_add(&ss_race.results[r], 1);
		pthread_barrier_wait(&ss_race.end);
	}
}

/*
 * Run `body` on n threads SS_ROUNDS times; `prepare` runs before each
 * round, `check` after it (both on the test thread, which is not one of
 * the n).
 */
static void ss_run_race(int n, int (*body)(int), void (*prepare)(int),
			void (*check)(int))
{
	pthread_t t[SS_MAX_THREADS];
	ss_race.nthreads = n;
	ss_race.body = body;
	atomic_store(&ss_race.stop, 0);
	ck_assert_int_eq(
		pthread_barrier_init(&ss_race.start, NULL, (unsigned)n + 1), 0);
	ck_assert_int_eq(
		pthread_barrier_init(&ss_race.end, NULL, (unsigned)n + 1), 0);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, ss_race_thread,
						(void *)(intptr_t)i),
				 0);
	for (int r = 0; r < SS_ROUNDS; r++) {
		for (int k = 0; k < 8; k++)
			atomic_store(&ss_race.results[k], 0);
		prepare(r);
		pthread_barrier_wait(&ss_race.start);
		pthread_barrier_wait(&ss_race.end);
		check(r);
	}
	atomic_store(&ss_race.stop, 1);
	pthread_barrier_wait(&ss_race.start);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&ss_race.start);
	pthread_barrier_destroy(&ss_race.end);
}

static uint32_t ss_epoch;
static int ss_bad_rounds;

/* two/four unparkers of the same registration: exactly one enqueue */
static void ss_prep_parked(int r)
{
	ss_epoch = (uint32_t)r & 0xffffffu;
	ss_set(3, ss_epoch, SMARM__ST_PARKED);
}

static int ss_body_unpark_epoch(int tid)
{
	/* thread 0 is a wildcard (a stop) in odd rounds' mix */
	bool any = tid == 0 && (ss_epoch & 1);
	return smarm__word_unpark(&ss_slot, 3, any, ss_epoch);
}

static void ss_check_one_enqueue(int r)
{
	(void)r;
	if (atomic_load(&ss_race.results[SMARM__UNPARK_ENQUEUE]) != 1 ||
	    atomic_load(&ss_race.results[SMARM__UNPARK_NOTIFIED]) != 0 ||
	    atomic_load(&ss_race.results[SMARM__UNPARK_NOOP]) !=
		    ss_race.nthreads - 1 ||
	    SMARM__W_STATE(ss_word()) != SMARM__ST_QUEUED ||
	    SMARM__W_EPOCH(ss_word()) != ((ss_epoch + 1) & 0xffffffu))
		ss_bad_rounds++;
}

START_TEST(test_slot_state_racing_unparkers_enqueue_exactly_once)
{
	ss_bad_rounds = 0;
	ss_run_race(_i, ss_body_unpark_epoch, ss_prep_parked,
		    ss_check_one_enqueue);
	ck_assert_int_eq(ss_bad_rounds, 0);
}
END_TEST

/*
 * No lost wakeup: the actor side opens a wait and parks (the park_return
 * transition of sched.c: RUNNING -> PARKED, or NOTIFIED -> QUEUED which
 * means "run again at once"); a waker holding the registration unparks.
 * Exactly one of them must end up responsible for the re-queue.
 */
static atomic_int ss_park_requeued, ss_waker_result;

static void ss_prep_wait(int r)
{
	(void)r;
	ss_set(2, 0, SMARM__ST_RUNNING);
	ss_epoch = smarm__begin_wait(&ss_slot); /* registration (pid, e) */
	atomic_store(&ss_park_requeued, 0);
	atomic_store(&ss_waker_result, -1);
}

static int ss_body_park_vs_wake(int tid)
{
	if (tid == 0) {
		uint64_t w = atomic_load(&ss_slot.word);
		for (;;) {
			bool parked = SMARM__W_STATE(w) == SMARM__ST_RUNNING;
			uint64_t nw = SMARM__W_MAKE(
				SMARM__W_GEN(w), SMARM__W_EPOCH(w) + 1,
				parked ? SMARM__ST_PARKED : SMARM__ST_QUEUED);
			if (atomic_compare_exchange_weak(&ss_slot.word, &w,
							 nw)) {
				if (!parked)
					atomic_store(&ss_park_requeued, 1);
				return 7; /* "actor" marker */
			}
		}
	}
	int r = smarm__word_unpark(&ss_slot, 2, false, ss_epoch);
	atomic_store(&ss_waker_result, r);
	return r;
}

static void ss_check_no_lost_wake(int r)
{
	int waker = atomic_load(&ss_waker_result);
	int requeued = atomic_load(&ss_park_requeued);
	(void)r;
	/* the wake always lands (right epoch), either before or after park */
	if (waker == SMARM__UNPARK_NOOP)
		ss_bad_rounds++;
	/* exactly one re-queue: the waker's ENQUEUE xor the park's */
	if ((waker == SMARM__UNPARK_ENQUEUE) == (requeued == 1))
		ss_bad_rounds++;
	if (SMARM__W_STATE(ss_word()) != SMARM__ST_QUEUED)
		ss_bad_rounds++;
}

START_TEST(test_slot_state_park_racing_wake_never_loses_it)
{
	ss_bad_rounds = 0;
	ss_run_race(2, ss_body_park_vs_wake, ss_prep_wait,
		    ss_check_no_lost_wake);
	ck_assert_int_eq(ss_bad_rounds, 0);
}
END_TEST

/* retire_wait racing a late wake of the same wait: nothing is left over */
static void ss_prep_retire(int r)
{
	(void)r;
	ss_set(6, 100, SMARM__ST_RUNNING);
	ss_epoch = smarm__begin_wait(&ss_slot);
}

static int ss_body_retire_vs_wake(int tid)
{
	if (tid == 0) {
		smarm__retire_wait(&ss_slot);
		return 7;
	}
	return smarm__word_unpark(&ss_slot, 6, false, ss_epoch);
}

static void ss_check_retired_clean(int r)
{
	(void)r;
	/* a landed wake was eaten, a late one died: RUNNING either way */
	if (SMARM__W_STATE(ss_word()) != SMARM__ST_RUNNING ||
	    SMARM__W_GEN(ss_word()) != 6)
		ss_bad_rounds++;
	/* a new wait is not disturbed by the old registration */
	uint32_t e = smarm__begin_wait(&ss_slot);
	if (smarm__word_unpark(&ss_slot, 6, false, ss_epoch) !=
	    SMARM__UNPARK_NOOP)
		ss_bad_rounds++;
	if (SMARM__W_STATE(ss_word()) != SMARM__ST_RUNNING ||
	    ((SMARM__W_EPOCH(ss_word()) + 1) & 0xffffffu) != e)
		ss_bad_rounds++;
}

START_TEST(test_slot_state_retire_racing_wake_leaves_no_notification)
{
	ss_bad_rounds = 0;
	ss_run_race(2, ss_body_retire_vs_wake, ss_prep_retire,
		    ss_check_retired_clean);
	ck_assert_int_eq(ss_bad_rounds, 0);
}
END_TEST

/* stale-generation wakers racing a reuse of the slot never touch it */
static void ss_prep_reuse(int r)
{
	(void)r;
	ss_set(11, 0, SMARM__ST_PARKED); /* the old tenant (gen 11) is parked */
	ss_epoch = 0;
}

static int ss_body_reuse(int tid)
{
	if (tid == 0) {
		/* the slot ends and is reused by gen 12, which parks */
		atomic_store(&ss_slot.word,
			     SMARM__W_MAKE(11, 0, SMARM__ST_DONE));
		atomic_store(&ss_slot.word,
			     SMARM__W_MAKE(12, 0, SMARM__ST_VACANT));
		atomic_store(&ss_slot.word,
			     SMARM__W_MAKE(12, 0, SMARM__ST_QUEUED));
		atomic_store(&ss_slot.word,
			     SMARM__W_MAKE(12, 0, SMARM__ST_RUNNING));
		atomic_store(&ss_slot.word,
			     SMARM__W_MAKE(12, 0, SMARM__ST_PARKED));
		return 7;
	}
	/* a stale wildcard and a stale epoch wake for gen 11 */
	int a = smarm__word_unpark(&ss_slot, 11, tid == 1, 0);
	return a == SMARM__UNPARK_ENQUEUE ? 6
					  : a; /* 6: landed on the old tenant */
}

static void ss_check_reuse(int r)
{
	(void)r;
	/* at most one old wake landed, and only while gen 11 was parked;
	 * the new tenant is untouched in every case */
	if (atomic_load(&ss_race.results[6]) > 1 ||
	    atomic_load(&ss_race.results[SMARM__UNPARK_NOTIFIED]) != 0)
		ss_bad_rounds++;
	if (ss_word() != SMARM__W_MAKE(12, 0, SMARM__ST_PARKED))
		ss_bad_rounds++;
}

START_TEST(test_slot_state_stale_gen_wakers_racing_reuse_never_land)
{
	ss_bad_rounds = 0;
	ss_run_race(3, ss_body_reuse, ss_prep_reuse, ss_check_reuse);
	ck_assert_int_eq(ss_bad_rounds, 0);
}
END_TEST

/* ------------------------------------------------------------ slot table */

/* A node with option opt set to value. */
static smarm_node_t *ss_node(int opt, int64_t value)
{
	smarm_config_t *cfg = NULL;
	smarm_node_t *n = NULL;
	ck_assert_int_eq(smarm_config_alloc(&cfg), 0);
	ck_assert_int_eq(smarm_config_set_int(cfg, opt, value), 0);
	ck_assert_int_eq(smarm_node_open(&n, cfg), 0);
	smarm_config_free(cfg);
	return n;
}

START_TEST(test_slot_state_table_low_indices_first_and_exact_limit)
{
	smarm_node_t *n = ss_node(SMARM_OPT_MAX_ACTORS, 300);
	uint32_t idx;
	ck_assert_uint_eq(atomic_load(&n->nslots), 0); /* nothing until used */
	for (uint32_t i = 0; i < 300; i++) {
		ck_assert_int_eq(smarm__slot_alloc(n, &idx), 0);
		ck_assert_uint_eq(idx, i);
		if (i == 0)
			ck_assert_uint_eq(atomic_load(&n->nslots),
					  SMARM__SLOTS_FIRST);
	}
	ck_assert_uint_eq(atomic_load(&n->nslots), 300); /* cut at the limit */
	ck_assert_int_eq(smarm__slot_alloc(n, &idx), SMARM_EATCAPACITY);
	ck_assert_int_eq(smarm__slot_alloc(n, &idx), SMARM_EATCAPACITY);
	/* a freed index is the next one handed out */
	smarm__slot_free(n, 123);
	ck_assert_int_eq(smarm__slot_alloc(n, &idx), 0);
	ck_assert_uint_eq(idx, 123);
	ck_assert_int_eq(smarm__slot_alloc(n, &idx), SMARM_EATCAPACITY);
	for (uint32_t i = 0; i < 300; i++) {
		struct smarm__slot *s = smarm__slot_at(n, i);
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_eq(smarm__slot_index(s), i);
		/* one array across growths: the lookup is a bound check */
		ck_assert_ptr_eq(s, smarm__slot_at(n, 0) + i);
		smarm__slot_free(n, i);
	}
	ck_assert_ptr_null(smarm__slot_at(n, 300));
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_slot_state_table_segments_keep_slots_in_place)
{
	smarm_node_t *n = ss_node(SMARM_OPT_MAX_ACTORS, 2000);
	struct smarm__slot *first;
	uint32_t idx;
	ck_assert_int_eq(smarm__slot_alloc(n, &idx), 0);
	first = smarm__slot_at(n, 0);
	for (int i = 1; i < 2000; i++)
		ck_assert_int_eq(smarm__slot_alloc(n, &idx), 0);
	/* growth appended segments: slot 0 did not move */
	ck_assert_ptr_eq(smarm__slot_at(n, 0), first);
	ck_assert_uint_eq(atomic_load(&n->nslots), 2000);
	for (uint32_t i = 0; i < 2000; i += 97)
		ck_assert_uint_eq(smarm__slot_index(smarm__slot_at(n, i)), i);
	ck_assert_int_eq(smarm__slot_alloc(n, &idx), SMARM_EATCAPACITY);
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/* Whether the page holding p is resident (mincore). */
static bool ss_resident(const void *p)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char v = 0;
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page - 1);
	ck_assert_int_eq(mincore((void *)a, (size_t)page, &v), 0);
	return (v & 1) != 0;
}

/*
 * A growth leaves the new slots untouched until they are handed out:
 * the table doubles, and writing every new slot made up to half of it
 * resident unused (416 B per parked actor at 20,000 actors, a slot
 * being 256). A slot handed out the first time gets its index and
 * generation 1 then.
 */
START_TEST(test_slot_state_growth_leaves_new_slots_untouched)
{
	smarm_node_t *n = ss_node(SMARM_OPT_MAX_ACTORS, 100000);
	uint32_t idx, last;
	struct smarm__slot *s;
	for (uint32_t i = 0; i <= SMARM__SLOTS_FIRST; i++)
		ck_assert_int_eq(smarm__slot_alloc(n, &idx), 0);
	ck_assert_uint_eq(idx, SMARM__SLOTS_FIRST);
	last = atomic_load(&n->nslots) - 1; /* the table grew: doubled */
	ck_assert_uint_ge(last, 2 * SMARM__SLOTS_FIRST - 1);
	ck_assert(!ss_resident(smarm__slot_at(n, last)));
	ck_assert_uint_eq(atomic_load(&smarm__slot_at(n, last)->word), 0);
	s = smarm__slot_at(n, idx);
	ck_assert_uint_eq(smarm__slot_index(s), idx);
	ck_assert_uint_eq(SMARM__W_GEN(atomic_load(&s->word)), 1);
	ck_assert_uint_eq(SMARM__W_STATE(atomic_load(&s->word)),
			  SMARM__ST_VACANT);
	ck_assert_uint_eq(s->tm_pos, SMARM__NO_INDEX);
	/* a forged pid of generation 0 names no never-used slot */
	ck_assert_ptr_null(
		smarm__slot_live(n, smarm__pid_make(0, n->serial, last)));
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

START_TEST(test_slot_state_slot_live_checks_generation_and_state)
{
	smarm_node_t *n = ss_node(SMARM_OPT_MAX_ACTORS, 16);
	uint32_t idx;
	struct smarm__slot *s;
	ck_assert_int_eq(smarm__slot_alloc(n, &idx), 0);
	s = smarm__slot_at(n, idx);
	ck_assert_uint_eq(SMARM__W_GEN(atomic_load(&s->word)), 1); /* never 0 */
	/* VACANT with a matching gen is a forged pid: not live */
	ck_assert_ptr_null(
		smarm__slot_live(n, smarm__pid_make(1, n->serial, idx)));
	atomic_store(&s->word, SMARM__W_MAKE(1, 0, SMARM__ST_PARKED));
	ck_assert_ptr_eq(
		smarm__slot_live(n, smarm__pid_make(1, n->serial, idx)), s);
	ck_assert_ptr_null(
		smarm__slot_live(n, smarm__pid_make(2, n->serial, idx)));
	ck_assert_ptr_null(
		smarm__slot_live(n, smarm__pid_make(0, n->serial, idx)));
	ck_assert_ptr_null(
		smarm__slot_live(n, smarm__pid_make(1, n->serial, 9999)));
	/* the same index and generation on another node names nothing here */
	ck_assert_ptr_null(smarm__slot_live(
		n, smarm__pid_make(1, (n->serial % 255) + 1, idx)));
	atomic_store(&s->word, SMARM__W_MAKE(1, 0, SMARM__ST_DONE));
	ck_assert_ptr_null(
		smarm__slot_live(n, smarm__pid_make(1, n->serial, idx)));
	atomic_store(&s->word, SMARM__W_MAKE(1, 0, SMARM__ST_VACANT));
	ck_assert_int_eq(smarm_node_close(n), 0);
}
END_TEST

/* ------------------------------------------------------------ run queue */

/*
 * The run queue's next pages are written before its pushes reach them
 * (sched.c, rq_touch_unlock): the first write to a page costs
 * microseconds, which under rq_lock sent the workers waiting for it
 * into futex sleeps (spawn_join at two workers, once per fresh page). A
 * root on one worker spawns RQ_SPAWNS actors, which past its held batch
 * go to the shared queue, and looks at the buffer before it leaves the
 * CPU: the page two pages past the queue's tail is resident,
 * though no entry there was ever written (the buffer is fresh: grown by
 * doubling as the slot table grew, past malloc's mmap threshold).
 */
#define RQ_SPAWNS 60000
#define RQ_AHEAD_PROBE 1024 /* entries past the tail: two pages */

static smarm_node_t *rq_node;
static uint32_t rq_tail;  /* the tail's index in the buffer */
static uint32_t rq_cap;	  /* the buffer's entries */
static bool rq_ahead_res; /* the page RQ_AHEAD_PROBE past it resident */

static void rq_child(void *arg)
{
	(void)arg;
}

static void rq_root(void *arg)
{
	struct smarm_node *n = rq_node;
	uint32_t probe;
	(void)arg;
	for (int i = 0; i < RQ_SPAWNS; i++)
		ck_assert_int_eq(smarm_actor_spawn(NULL, rq_child, NULL, NULL),
				 0);
	/* Pushes since the run's start (pops move the head, not this). */
	rq_tail = n->rq.rg_head + smarm__ring_len(&n->rq);
	rq_cap = n->rq.rg_cap;
	probe = rq_tail + RQ_AHEAD_PROBE;
	if (probe < rq_cap)
		rq_ahead_res = ss_resident(n->rq.rg_buf + (size_t)probe * 8);
}

START_TEST(test_slot_state_run_queue_pages_ahead_resident)
{
	rq_node = ss_node(SMARM_OPT_WORKERS, 1);
	ck_assert_int_eq(smarm_node_run(rq_node, rq_root, NULL, NULL, NULL), 0);
	/* Most of them queued (slice ends queue a held batch in the deque),
	 * with room past them to probe. */
	ck_assert_uint_ge(rq_tail, RQ_SPAWNS / 2);
	ck_assert_uint_lt(rq_tail + RQ_AHEAD_PROBE, rq_cap);
	ck_assert(rq_ahead_res);
	ck_assert_int_eq(smarm_node_close(rq_node), 0);
}
END_TEST

Suite *smarm_test_slot_state_suite(void)
{
	Suite *s = suite_create("slot_state");
	TCase *tc = tcase_create("word");
	tcase_add_test(tc, test_slot_state_word_packs_fields);
	tcase_add_test(
		tc, test_slot_state_begin_wait_names_next_epoch_writes_nothing);
	tcase_add_test(tc, test_slot_state_epoch_wraps_without_touching_gen);
	tcase_add_test(tc, test_slot_state_unpark_stale_epoch_is_noop);
	tcase_add_test(tc, test_slot_state_unpark_running_notifies_once);
	tcase_add_test(tc, test_slot_state_unpark_other_states_noop);
	tcase_add_test(tc, test_slot_state_wildcard_unpark_ignores_epoch);
	tcase_add_test(tc, test_slot_state_stale_generation_unpark_never_lands);
	tcase_add_test(tc, test_slot_state_retire_wait_eats_notification);
	tcase_add_test(tc, test_slot_state_retire_wait_kills_in_flight_wake);
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(
		tc, test_slot_state_racing_unparkers_enqueue_exactly_once, 2,
		SS_MAX_THREADS + 1);
	tcase_add_test(tc, test_slot_state_park_racing_wake_never_loses_it);
	tcase_add_test(
		tc, test_slot_state_retire_racing_wake_leaves_no_notification);
	tcase_add_test(
		tc, test_slot_state_stale_gen_wakers_racing_reuse_never_land);
	suite_add_tcase(s, tc);

	tc = tcase_create("table");
	tcase_add_test(tc,
		       test_slot_state_table_low_indices_first_and_exact_limit);
	tcase_add_test(tc, test_slot_state_table_segments_keep_slots_in_place);
	tcase_add_test(tc,
		       test_slot_state_slot_live_checks_generation_and_state);
	tcase_add_test(tc, test_slot_state_growth_leaves_new_slots_untouched);
	suite_add_tcase(s, tc);

	tc = tcase_create("run_queue");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_slot_state_run_queue_pages_ahead_resident);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(slot_state)
