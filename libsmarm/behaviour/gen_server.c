/* SPDX-License-Identifier: MIT */
/*
 * gen_server.c - the engine of both behaviours: a server actor holding
 * a behaviour's state and serving one message at a time from its
 * three-band mailbox (signals, timer fires, the inbox), the envelopes
 * carrying operations into it, replies and reply tokens, and the server
 * reports made through the node's logger (core/log.c). gen_statem.c
 * plugs its dispatch (struct bhv_engine) into the same start, loop
 * and end. A server child that finds its name taken tells its
 * supervisor who holds it (OTP's {already_started, Pid}). The mailbox,
 * the engine, batches, calls and tokens are described in
 * docs/architecture/behaviours.md.
 *
 * Ownership: a server (struct smarm_gs_ctx) is malloc'd by its actor,
 * freed by the actor's cleanup handler, and holds one plugin reference.
 * Its cold block (struct gs_cold: timers, monitors, tokens, idle
 * window, continue, hibernate_after) is its own, made on first use and
 * freed as it hibernates with none of that in use or at its end. Its
 * inbox channel is its own too (one sender and one receiver reference),
 * freed as it hibernates when idle and made again by whoever needs it
 * first, a sender or the server as it wakes (INV-7).
 * Only its actor touches it; a context pointer is checked against the
 * caller's own (smarm__bhv_self_is) before use. Reply tokens are handle
 * pool cells (core/handle.h): smarm_reply decodes one in O(1) and
 * refuses a freed one. A server's unanswered tokens are in its token
 * set (struct bhv_tokens), shared with them, so its end can answer them.
 * Locking: a token set's tt_lock (a leaf pthread mutex: no plugin code
 * and no lock but a channel's, or the locks a routed answer's function
 * takes without parking, under it: struct bhv_route) guards its list and
 * each
 * tk_answered; of two answers to a token the one that retires its
 * handle (smarm__handle_take) answers. A worker's line of the served
 * count is written only by the actor it runs (struct bhv_node).
 * Invariants: INV-1 every call received is answered exactly once: by
 * its handler's return, by a token's reply or drop, or with SMARM_EDOWN
 * when the server ends; into its reply channel, or, for a call a layer
 * above routed (BHV_ROUTED), by one call of its route's function
 * (smarm__bhv_reply_send). INV-2 terminate runs once, on every path after
 * init succeeded; destroy runs once after create succeeded. INV-3 an
 * envelope holds no plugin reference: it reaches plugin code only
 * through the server that takes it, which holds one and trusts its
 * operation only when its behaviour pointer equals its own (a behaviour
 * alive when the envelope was sent is the receiver's or never compares
 * equal). INV-4 only this layer makes envelopes (their message type's
 * destructor is internal), each block packed for its operation (pack.c
 * INV-1): a server does not re-check a block; debug builds assert it.
 * INV-5 a client finds a server's inbox through the server's context,
 * the behaviour state of its actor, read under the actor's cold lock
 * (smarm__bhv_inbox_of): the context is set once the inbox is made and
 * cleared, under that lock, before it is freed, and the inbox handle
 * is cleared before its channel is at the end (in the same hold of the
 * lock as its free at a hibernation: a handle read before is refused,
 * generation-checked); the registry holds nothing of a server that has
 * no name. INV-6 a server's sv_armed points at its
 * cold block's gc_ntimers while it has one, else at a static 0 (a
 * machine's, at its own count); timer ids come from one counter
 * (gs_timer_ids), so a block made again never reuses one.
 * INV-7 sv_inbox is NULL while running only before the start made it
 * or after the end freed it: a hibernating server frees its inbox if
 * it is idle (nothing queued, no reference but its own, the default
 * bound: smarm__chan_free_idle, which tests and retires in one hold of
 * the channel's lock, so a send with a cached handle either kept it or
 * is refused and looks the inbox up again) and sets sv_nobox; both
 * under its actor's cold lock, as is every change of sv_nobox and
 * every making of the inbox after the start: by the first sender that
 * looks it up (inbox_look; its band attached before its send, which
 * wakes the server: mbox.c INV-4) or by the server as it goes on
 * (inbox_restore; it ends with SMARM_ENOMEM if it cannot). The end
 * clears sv_nobox first, so no inbox is made after it.
 * See: docs/architecture/behaviours.md, docs/plugins.md.
 */
#include "gen_server.h"

#include "../core/actor.h"
#include "../otp/reg.h"
#include "../otp/sup.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A timer of a server (smarm_gs_send_after). */
struct gs_timer {
	uint64_t gt_id;		    /* its id (never 0) */
	const struct bhv_op *gt_op; /* the info operation */
	struct bhv_msg gt_msg;	    /* its arguments (copied per tick) */
	uint64_t gt_period;	    /* 0: one-shot */
	smarm_timer_t gt_tm;	    /* the pending timed send */
};

/* The bands of a server's mailbox (msg.h), highest first. */
enum bhv_band {
	BHV_BAND_SIGNAL = 0, /* trapped exit signals and Downs */
	BHV_BAND_TIMER = 1,  /* timer fires (struct bhv_tick) */
	BHV_BAND_INBOX = 2,  /* requests: system messages, calls, casts and
				infos, in send order (struct bhv_env) */
};

_Static_assert(BHV_PEEK_BANDS >= SMARM__MBOX_BANDS &&
		       BHV_BAND_INBOX < SMARM__MBOX_BANDS,
	       "struct bhv_peek has a count for every band");

_Static_assert(sizeof(struct smarm_gs_ctx) <= 248,
	       "a server is a 256-byte malloc chunk (gen_server.h)");

/* A server's armed timers while it has no cold block (sv_armed). */
static const size_t gs_no_timers;

/* The last timer id of any server: ids stay unique across a server's
 * cold blocks (a stale id or tick never names a later timer). */
static _Atomic uint64_t gs_timer_ids;

/* Test-only: this many cold block allocations fail (smarm__gs_cold). */
_Atomic uint32_t smarm__gs_test_cold_fail;

/* Inbox envelopes a server takes in one hold of the inbox's lock (sv_bn
 * is 16 bits). */
#define BHV_BATCH 16
_Static_assert(BHV_BATCH <= UINT16_MAX, "sv_bi and sv_bn hold a batch");

/*
 * Messages served between two smarm_check safe points when a server or
 * machine never parks (a power of two); a stop waits at most this many.
 */
#define BHV_CHECK_EVERY 16

/*
 * Per node: requests served and machine events handled by both engines
 * (SMARM_STAT_SERVER_REQUESTS). One line per worker, written only by an
 * actor running on it with a plain load and store (no switch between),
 * summed on read: an atomic add on one node-wide line cost every call
 * some 4%.
 */
struct bhv_served {
	_Alignas(64) _Atomic int64_t bs_n; /* relaxed: a statistic */
};

struct bhv_node {
	struct bhv_served bn_served[SMARM__MAX_WORKERS]; /* by worker id */
};

/* Add sv's unflushed count to its worker's line (struct bhv_node). */
static inline void served_flush(struct smarm_gs_ctx *sv)
{
	if (sv->sv_served != 0) {
		struct smarm__worker *w = smarm__worker();
		struct bhv_node *b;
		_Atomic int64_t *c;
		SMARM_ASSERT(w != NULL);
		/* Its node's: the worker's (a server runs on its node's). */
		b = smarm__node_sub(w->node, SMARM__SUB_BEHAVIOUR);
		c = &b->bn_served[w->id].bs_n;
		atomic_store_explicit(
			c,
			atomic_load_explicit(c, memory_order_relaxed) +
				sv->sv_served,
			memory_order_relaxed);
		sv->sv_served = 0;
	}
}

/*
 * Take a new batch once sv's is consumed and return its oldest; NULL if
 * none is queued. Out of memory for the batch, one envelope is taken
 * into *tmp instead (the caller's), and that is returned.
 */
static struct bhv_env *inbox_refill(struct smarm_gs_ctx *sv,
				    struct bhv_env *tmp)
{
	struct bhv_env *buf = sv->sv_batch;
	smarm_chan_t *ch;
	size_t n;
	served_flush(sv);
	if (buf == NULL)
		buf = sv->sv_batch = malloc(BHV_BATCH * sizeof *buf);
	if (smarm__chan_cell(sv->sv_inbox, &ch) != 0)
		return NULL;
	if (buf == NULL) /* out of memory: one at a time */
		return smarm__chan_try_recv_n(ch, sv->sv_inbox, tmp, 1, &n) == 0
			       ? tmp
			       : NULL;
	if (smarm__chan_try_recv_n(ch, sv->sv_inbox, buf, BHV_BATCH, &n) != 0)
		return NULL;
	/* Relaxed stores: the observer reads them (peek_queue). */
	__atomic_store_n(&sv->sv_bi, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&sv->sv_bn, (uint16_t)n, __ATOMIC_RELAXED);
	return &buf[0];
}

/*
 * The next inbox envelope without waiting: the batch's oldest, else a
 * new batch's (or one taken into *tmp); NULL: none queued. It stays in
 * the batch, the caller's to consume, valid until the next take.
 */
static inline struct bhv_env *inbox_take(struct smarm_gs_ctx *sv,
					 struct bhv_env *tmp)
{
	unsigned i = sv->sv_bi;
	if (i == sv->sv_bn)
		return inbox_refill(sv, tmp);
	/* Relaxed: the observer reads it (peek_queue). */
	__atomic_store_n(&sv->sv_bi, i + 1, __ATOMIC_RELAXED);
	return &sv->sv_batch[i];
}

/* A hibernating server keeps no batch (it has taken all of it). */
static void batch_release(struct smarm_gs_ctx *sv)
{
	SMARM_ASSERT(sv->sv_bi == sv->sv_bn);
	free(sv->sv_batch);
	sv->sv_batch = NULL;
}

/*
 * Count one request served. Flushed before the server waits, takes a
 * batch or ends, and at once for a call, so a caller reading the stat
 * after its reply sees its request counted. An atomic add per request
 * cost a cast 15%.
 */
static inline void served(struct smarm_gs_ctx *sv, bool call)
{
	sv->sv_served++;
	if (call)
		served_flush(sv);
}

/*
 * The fast path's next envelope (nothing can come in the higher bands):
 * the batch's next, else one received within wait into *tmp; NULL with
 * *rc the receive's status (SMARM_ETIMEDOUT: none came).
 */
static inline struct bhv_env *
inbox_next(struct smarm_gs_ctx *sv, struct bhv_env *tmp, uint64_t wait, int *rc)
{
	struct bhv_env *b;

	*rc = 0;
	/* A backlog is served in batches: one lock per BHV_BATCH. */
	if ((sv->sv_bi < sv->sv_bn || smarm__chan_maybe_ready(sv->sv_inbox)) &&
	    (b = inbox_take(sv, tmp)) != NULL)
		return b;
	served_flush(sv); /* before it may wait */
	*rc = smarm_chan_recv_timeout(sv->sv_inbox, tmp, wait);
	return *rc == 0 ? tmp : NULL;
}

/* ---- message types ---- */

static void reply_free(void *elem)
{
	smarm_value_release(&((smarm_response_t *)elem)->value);
}

static const smarm_msgtype_t *inbox_type;
static pthread_once_t types_once = PTHREAD_ONCE_INIT;

static void types_define(void)
{
	if (smarm_msgtype_define("smarm.gs.inbox", sizeof(struct bhv_env),
				 smarm__bhv_env_free, &inbox_type) != 0)
		smarm__panic("gen_server: message types");
}

const smarm_msgtype_t *smarm__gs_inbox_type(void)
{
	pthread_once(&types_once, types_define);
	return inbox_type;
}

int smarm__gs_reply_chan(smarm_chan_t **out)
{
	return smarm_chan_alloc(out, sizeof(smarm_response_t), reply_free);
}

/* ---- envelopes and replies ---- */

/* A routed call's answer (BHV_ROUTED): its route's function, out of
 * line so that the channel answer stays small where it is inlined. */
__attribute__((noinline, cold)) static void
reply_route(uint64_t seq, int status, smarm_value_t *v, int who)
{
	struct bhv_route *rt = (struct bhv_route *)(uintptr_t)seq;
	bool val = (status == 0 || status == SMARM_EREPLY) && v != NULL;
	rt->rt_fn(rt, status, val ? v : NULL, who);
}

/* smarm__bhv_reply_send, inlined into a served call's return (gs_env). */
static inline __attribute__((always_inline)) void
reply_send(smarm_chan_t *reply, uint64_t seq, int status, smarm_value_t *v,
	   int who)
{
	smarm_response_t r = { .id = seq, .status = status }; /* value VOID */
	if (SMARM_UNLIKELY(reply == BHV_ROUTED)) { /* a layer above's */
		reply_route(seq, status, v, who);
		return;
	}
	if ((status == 0 || status == SMARM_EREPLY) && v != NULL) {
		r.value = *v;
		memset(v, 0, sizeof *v);
	}
	if (smarm_chan_send(reply, &r) != 0)
		smarm_value_release(&r.value); /* the caller is gone */
}

void smarm__bhv_reply_send(smarm_chan_t *reply, uint64_t seq, int status,
			   smarm_value_t *v, int who)
{
	reply_send(reply, seq, status, v, who);
}

static void env_release(struct bhv_env *e)
{
	smarm__bhv_msg_free(&e->en_msg);
}

/* An envelope with no reply channel and no heap block needs nothing
 * here: the inbox frees such casts unread (smarm__chan_set_owned). */
void smarm__bhv_env_free(void *elem)
{
	struct bhv_env *e = elem;
	if (e->en_op != NULL && e->en_reply != NULL)
		smarm__bhv_reply_send(e->en_reply, e->en_seq, SMARM_EDOWN, NULL,
				      BHV_ANS_END);
	env_release(e);
}

/* ---- tokens ---- */

/* A server's live tokens, which its end answers with SMARM_EDOWN; shared
 * (tt_refs) since a token may be answered after the server is gone. */
struct bhv_tokens {
	pthread_mutex_t tt_lock;     /* a leaf: no lock but a channel's (or
					a route's leaf) is taken under it */
	struct smarm_reply *tt_head; /* unanswered tokens (tt_lock) */
	_Atomic uint32_t tt_refs;    /* the server's, one per token */
};

/* A token: a handle pool cell; of two racing answers the one that takes
 * the cell (smarm__handle_take) answers. */
struct smarm_reply {
	struct smarm__hcell tk_hdr;	       /* handle header: first */
	struct smarm_reply *tk_next, *tk_prev; /* tt_head (tt_lock) */
	struct bhv_tokens *tk_set;	       /* its server's (a reference) */
	const struct smarm_behaviour *tk_be;   /* plugin reference held */
	const struct bhv_op *tk_op;	       /* the call's operation */
	smarm_chan_t *tk_reply;		       /* the caller's channel */
	uint64_t tk_seq;		       /* the call's number */
	bool tk_answered;		       /* EDOWN sent at server end
						  (tt_lock) */
};

/* 4 GiB of address space, reserved, not committed: 2^25 tokens. */
#define TOKEN_REGION ((size_t)4 << 30)
static struct smarm__hpool tok_pool =
	SMARM__HPOOL_INIT(sizeof(struct smarm_reply), TOKEN_REGION);
_Static_assert(offsetof(struct smarm_reply, tk_hdr) == 0,
	       "the handle header is the cell's first word");

static void tokens_unref(struct bhv_tokens *ts)
{
	if (atomic_fetch_sub_explicit(&ts->tt_refs, 1, memory_order_acq_rel) ==
	    1) {
		pthread_mutex_destroy(&ts->tt_lock);
		free(ts);
	}
}

int smarm__bhv_token_new(struct smarm_gs_ctx *sv, const struct bhv_op *op,
			 smarm_chan_t *reply, uint64_t seq,
			 struct smarm_reply **out)
{
	struct gs_cold *c = smarm__gs_cold(sv);
	struct bhv_tokens *ts = c != NULL ? c->gc_tokens : NULL;
	struct smarm_reply *t;
	uint64_t h;

	if (c == NULL)
		return SMARM_ENOMEM;
	if (ts == NULL) {
		ts = calloc(1, sizeof *ts);
		if (ts == NULL)
			return SMARM_ENOMEM;
		pthread_mutex_init(&ts->tt_lock, NULL);
		atomic_init(&ts->tt_refs, 1); /* the server's */
		c->gc_tokens = ts;
	}
	if (smarm__hpool_alloc(&tok_pool, (void **)&t, &h) != 0)
		return SMARM_ENOMEM;
	t->tk_set = ts;
	t->tk_be = sv->sv_be;
	t->tk_op = op;
	t->tk_reply = reply;
	t->tk_seq = seq;
	t->tk_answered = false;
	t->tk_prev = NULL;
	atomic_fetch_add_explicit(&ts->tt_refs, 1, memory_order_relaxed);
	smarm__bhv_plugin_ref(sv->sv_be);
	pthread_mutex_lock(&ts->tt_lock);
	t->tk_next = ts->tt_head;
	if (ts->tt_head != NULL)
		ts->tt_head->tk_prev = t;
	ts->tt_head = t;
	pthread_mutex_unlock(&ts->tt_lock);
	smarm__handle_publish(t, h);
	*out = (struct smarm_reply *)(uintptr_t)h;
	return 0;
}

static void tokens_end(struct smarm_gs_ctx *sv)
{
	struct bhv_tokens *ts = sv->sv_cold ? sv->sv_cold->gc_tokens : NULL;
	if (ts == NULL)
		return;
	sv->sv_cold->gc_tokens = NULL;
	pthread_mutex_lock(&ts->tt_lock);
	for (struct smarm_reply *t = ts->tt_head; t != NULL; t = t->tk_next) {
		t->tk_answered = true;
		smarm__bhv_reply_send(t->tk_reply, t->tk_seq, SMARM_EDOWN, NULL,
				      BHV_ANS_END); /* tt_lock held */
	}
	pthread_mutex_unlock(&ts->tt_lock);
	tokens_unref(ts);
}

/* ---- the cold block ---- */

struct gs_cold *smarm__gs_cold(struct smarm_gs_ctx *sv)
{
	struct gs_cold *c = sv->sv_cold;
	uint32_t f;
	if (c != NULL)
		return c;
	f = atomic_load_explicit(&smarm__gs_test_cold_fail,
				 memory_order_relaxed);
	if (SMARM_UNLIKELY(f != 0)) {
		atomic_store_explicit(&smarm__gs_test_cold_fail, f - 1,
				      memory_order_relaxed);
		return NULL;
	}
	c = calloc(1, sizeof *c);
	if (c == NULL)
		return NULL;
	if (sv->sv_armed == &gs_no_timers) /* a server's, not a machine's */
		sv->sv_armed = &c->gc_ntimers;
	sv->sv_cold = c;
	return c;
}

/* Free sv's cold block (its timers cancelled, its tokens ended). */
static void cold_free(struct smarm_gs_ctx *sv)
{
	struct gs_cold *c = sv->sv_cold;
	if (c == NULL)
		return;
	SMARM_ASSERT(c->gc_ntimers == 0 && c->gc_tokens == NULL);
	if (sv->sv_armed == &c->gc_ntimers)
		sv->sv_armed = &gs_no_timers;
	sv->sv_cold = NULL;
	free(c->gc_timers);
	free(c);
}

/*
 * sv hibernates: free its cold block if nothing in it is in use (no
 * timer, monitor, idle window, finite hibernate_after, pending continue,
 * live token); an empty token set goes with it. The next use makes a
 * new one (timer ids come from gs_timer_ids, so none is reused).
 */
static void cold_trim(struct smarm_gs_ctx *sv)
{
	struct gs_cold *c = sv->sv_cold;
	struct bhv_tokens *ts;
	if (c == NULL || c->gc_ntimers != 0 || c->gc_nmon != 0 ||
	    c->gc_idle_ns != 0 || c->gc_hib_after != 0 || sv->sv_cont)
		return;
	ts = c->gc_tokens;
	if (ts != NULL) {
		/* Only this actor makes tokens: at its own reference alone
		 * none is live (an answer drops its reference last), and
		 * none can be made meanwhile. */
		if (atomic_load_explicit(&ts->tt_refs, memory_order_acquire) !=
		    1)
			return;
		c->gc_tokens = NULL;
		tokens_unref(ts);
	}
	cold_free(sv);
}

/* The token handle h names, live now; NULL: no live token. */
static struct smarm_reply *tok_decode(smarm_reply_t *h)
{
	void *c;
	return smarm__handle_decode(&tok_pool, h, &c) == 0 ? c : NULL;
}

/*
 * Answer token t (handle h) with status and *v (owned copy, or NULL)
 * and free it; false: another answer took it first (*v stays the
 * caller's).
 */
static bool tok_answer(struct smarm_reply *t, smarm_reply_t *h, int status,
		       smarm_value_t *v)
{
	struct bhv_tokens *ts;
	const struct smarm_behaviour *be;
	bool answered;

	if (!smarm__handle_take(t, h))
		return false;
	ts = t->tk_set;
	be = t->tk_be;
	pthread_mutex_lock(&ts->tt_lock);
	if (t->tk_prev != NULL)
		t->tk_prev->tk_next = t->tk_next;
	else
		ts->tt_head = t->tk_next;
	if (t->tk_next != NULL)
		t->tk_next->tk_prev = t->tk_prev;
	answered = t->tk_answered; /* by the server's end: EDOWN sent */
	pthread_mutex_unlock(&ts->tt_lock);
	if (!answered)
		smarm__bhv_reply_send(t->tk_reply, t->tk_seq, status, v,
				      BHV_ANS_ANY);
	else if (v != NULL)
		smarm_value_release(v);
	smarm__hpool_free(&tok_pool, t);
	tokens_unref(ts);
	smarm__bhv_plugin_unref(be); /* may unload: no lock held */
	return true;
}

int smarm_reply(smarm_reply_t *h, const smarm_value_t *v)
{
	struct smarm_reply *t = tok_decode(h);
	smarm_value_t out;
	int rc;
	if (t == NULL)
		return SMARM_EINVAL;
	rc = smarm__bhv_value_copy(t->tk_op->op_reply,
				   bhv_reply_tuple(t->tk_op), v, &out);
	if (rc != 0) /* the token stays valid */
		return rc == SMARM_ENOMEM ? rc : SMARM_EARGS;
	if (!tok_answer(t, h, 0, &out)) {
		smarm_value_release(&out);
		return SMARM_EINVAL; /* answered meanwhile */
	}
	return 0;
}

int smarm_reply_drop(smarm_reply_t *h)
{
	struct smarm_reply *t = tok_decode(h);
	if (t == NULL || !tok_answer(t, h, SMARM_EDOWN, NULL))
		return SMARM_EINVAL;
	return 0;
}

/* The running actor's context, set and cleared by the actor itself, so
 * a context pointer is checked in O(1), never dereferenced first. */
static int self_put(void **state, void *arg)
{
	*state = arg;
	return 0;
}

int smarm__bhv_self_set(const void *cx, unsigned tag)
{
	void *v = cx != NULL ? (void *)((uintptr_t)cx | tag) : NULL;
	return smarm__actor_ext_update(smarm__current_node(), smarm__self_pid(),
				       SMARM__SUB_BEHAVIOUR, self_put, v);
}

bool smarm__bhv_self_is(const void *cx, unsigned tag)
{
	return cx != NULL && smarm__self_ext(SMARM__SUB_BEHAVIOUR) ==
				     (void *)((uintptr_t)cx | tag);
}

/*
 * A server's inbox is found through its actor's behaviour state (the
 * context smarm__bhv_self_set put there), under the actor's cold lock,
 * which its end takes to clear that state before the context is freed:
 * no registry record, no published mailbox (INV-5).
 */
static int inbox_make(struct smarm_gs_ctx *sv);

static int inbox_look(void *state, void *arg)
{
	uintptr_t v = (uintptr_t)state;
	struct smarm_gs_ctx *sv = state;
	smarm_chan_t **h = arg;
	const char *ignored;
	if (state == NULL)
		return SMARM_ENOCHAN;	  /* alive, and no server */
	if ((v & 1u) == BHV_SELF_MACHINE) /* its own, under its lock */
		sv = (struct smarm_gs_ctx *)smarm__sm_peek(
			(const void *)(v & ~(uintptr_t)1u), &ignored);
	*h = __atomic_load_n(&sv->sv_inbox, __ATOMIC_ACQUIRE);
	if (*h == NULL && sv->sv_nobox) {
		/* Dropped as it hibernated (INV-7): made again here, its
		 * band attached before this sender's send wakes it. */
		int rc = inbox_make(sv);
		if (rc != 0)
			return rc;
		*h = sv->sv_inbox;
	}
	/* Cleared (band_free) as the server ends: then none. */
	return *h != NULL ? 0 : SMARM_ENOCHAN;
}

int smarm__bhv_inbox_of(struct smarm_node *n, smarm_pid_t pid, smarm_chan_t **h)
{
	*h = NULL;
	return smarm__actor_ext_read(n, pid.id, SMARM__SUB_BEHAVIOUR,
				     inbox_look, h);
}

int smarm__bhv_inbox_send(struct smarm_node *n, smarm_pid_t pid,
			  const struct bhv_env *e)
{
	smarm_chan_t *h, *last;
	int rc = smarm__bhv_inbox_of(n, pid, &h);
	/* The handle is generation-checked: a channel freed since the
	 * look is refused (closed), never touched (registry.c INV-5). Freed
	 * as the server hibernated again (INV-7), the next look finds
	 * another: sent there. None, or the same one: closed, the server
	 * ends (SMARM_ECLOSED, as before the look again). */
	if (rc != 0)
		return rc;
	while ((rc = smarm__reg_chan_send(h, e)) == SMARM_ECLOSED) {
		last = h;
		if (smarm__bhv_inbox_of(n, pid, &h) != 0 || h == last)
			return SMARM_ECLOSED;
	}
	return rc;
}

/* What an inbox envelope owns beyond itself: its heap block. */
static size_t env_extra(const void *elem)
{
	const struct bhv_env *e = elem;
	return e->en_msg.mg_heap != NULL ? e->en_msg.mg_heap->bk_size : 0;
}

/*
 * sv's bands, each read in one hold of its channel's lock. A band handle
 * read just as its channel was freed is refused (generation-checked)
 * and the band reads as empty.
 */
static void peek_queue(const struct smarm_gs_ctx *sv, struct bhv_peek *out)
{
	const smarm_chan_t *band[BHV_PEEK_BANDS] = {
		[BHV_BAND_SIGNAL] =
			__atomic_load_n(&sv->sv_sig, __ATOMIC_ACQUIRE),
		[BHV_BAND_TIMER] =
			__atomic_load_n(&sv->sv_tick, __ATOMIC_ACQUIRE),
		[BHV_BAND_INBOX] =
			__atomic_load_n(&sv->sv_inbox, __ATOMIC_ACQUIRE),
	};
	for (unsigned i = 0; i < BHV_PEEK_BANDS; i++) {
		smarm_chan_t *ch;
		size_t len = 0;
		uint64_t bytes = 0;
		if (band[i] == NULL || smarm__chan_cell(band[i], &ch) != 0 ||
		    smarm__chan_queued(ch, band[i],
				       i == BHV_BAND_INBOX ? env_extra : NULL,
				       &len, &bytes) != 0)
			continue;
		out->bp_band[i] = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
		out->bp_bytes += bytes;
	}
	/* A batch taken, not served yet, is still queued (as OTP's
	 * message_queue_len). The owner-written pair is read unlocked: a torn
	 * pair is clamped. */
	unsigned bi = __atomic_load_n(&sv->sv_bi, __ATOMIC_RELAXED);
	unsigned bn = __atomic_load_n(&sv->sv_bn, __ATOMIC_RELAXED);
	unsigned b = bn > bi ? bn - bi : 0;
	out->bp_batched = b < BHV_BATCH ? b : BHV_BATCH;
	out->bp_band[BHV_BAND_INBOX] += out->bp_batched;
	out->bp_bytes += out->bp_batched * sizeof(struct bhv_env);
}

void smarm__bhv_peek(const void *cx, struct bhv_peek *out)
{
	uintptr_t v = (uintptr_t)cx;
	const struct smarm_gs_ctx *sv = cx;
	const char *state = NULL;
	memset(out, 0, sizeof *out);
	if (cx == NULL)
		return;
	out->bp_kind = BHV_GEN_SERVER;
	if ((v & 1u) == BHV_SELF_MACHINE) {
		out->bp_kind = BHV_GEN_STATEM;
		sv = smarm__sm_peek((const void *)(v & ~(uintptr_t)1u), &state);
	}
	snprintf(out->bp_name, sizeof out->bp_name, "%s", sv->sv_be->bh_name);
	snprintf(out->bp_plugin, sizeof out->bp_plugin, "%s",
		 smarm__bhv_plugin_name(sv->sv_be));
	snprintf(out->bp_state, sizeof out->bp_state, "%s",
		 state != NULL ? state : "");
	peek_queue(sv, out);
	out->bp_text = smarm__bhv_plugin_text(sv->sv_be);
}

static int bhv_open(struct smarm_node *n, const struct smarm_config *cfg,
		    void **state)
{
	struct bhv_node *b;
	(void)n;
	(void)cfg;
	b = aligned_alloc(_Alignof(struct bhv_node), sizeof *b);
	if (b == NULL)
		return SMARM_ENOMEM;
	memset(b, 0, sizeof *b);
	*state = b;
	return 0;
}

static void bhv_close(struct smarm_node *n, void *state)
{
	(void)n;
	free(state);
}

static int bhv_get_stat(const struct smarm_node *n, const void *state, int stat,
			int64_t *out)
{
	const struct bhv_node *b = state;
	int64_t sum = 0;
	(void)n;
	if (stat != SMARM_STAT_SERVER_REQUESTS)
		return SMARM_EINVAL;
	for (int i = 0; i < SMARM__MAX_WORKERS; i++)
		sum += atomic_load_explicit(&b->bn_served[i].bs_n,
					    memory_order_relaxed);
	*out = sum;
	return 0;
}

const struct smarm__subsys smarm__bhv_subsys = {
	.ss_name = "behaviour",
	.ss_open = bhv_open,
	.ss_close = bhv_close,
	.ss_get_stat = bhv_get_stat,
};

/* The system stop (smarm_server_stop): in no protocol, queued like a
 * call, so taken between callbacks (OTP's sys:terminate). */
const struct bhv_op smarm__bhv_sys_stop = {
	.op_kind = BHV_CAST,
	.op_nargs = 2,
	.op_reply = SMARM_T_VOID,
	.op_args = { SMARM_T_I32, SMARM_T_I64 },
	.op_name = "(stop)",
};

const struct bhv_op smarm__bhv_sys_status = {
	.op_kind = BHV_CALL,
	.op_nargs = 0,
	.op_reply = SMARM_T_BYTES,
	.op_name = "(status)",
};

/* Answer status request e with what every engine has and what en_status
 * adds (a format_status failure goes in the state text); free e. */
static void status_reply(struct smarm_gs_ctx *sv, const struct bhv_engine *en,
			 struct bhv_env *e)
{
	smarm_server_status_t st = { .state = -1 };
	int text_rc = en->en_status(sv, &st);
	smarm_value_t raw = { .type = SMARM_T_BYTES }, v;
	int rc;
	size_t queued = sv->sv_bn - sv->sv_bi;
	uint32_t limit = 0;
	if (smarm_chan_len(sv->sv_inbox, &queued) == 0)
		queued += sv->sv_bn - sv->sv_bi;
	(void)smarm__chan_get_limit(sv->sv_inbox, &limit);
	st.struct_size = sizeof st;
	st.behaviour = sv->sv_be->bh_name;
	st.pid = smarm_actor_self(); /* the server answers itself */
	st.queued = queued > UINT32_MAX ? UINT32_MAX : (uint32_t)queued;
	st.queue_limit = limit;
	st.monitors = sv->sv_cold != NULL ? sv->sv_cold->gc_nmon : 0;
	st.trapping = sv->sv_trap;
	if (text_rc < 0)
		snprintf(st.state_text, sizeof st.state_text,
			 "format_status failed: %d (%s)", text_rc,
			 smarm_strerror(text_rc));
	st.state_text[sizeof st.state_text - 1] = '\0';
	raw.len = sizeof st;
	raw.v.p = &st;
	rc = smarm__bhv_value_copy(SMARM_T_BYTES, NULL, &raw, &v);
	smarm__bhv_reply_send(e->en_reply, e->en_seq, rc, &v, BHV_ANS_OWN);
	env_release(e);
}

/* Serve envelope e for either engine: system messages, then a request of
 * sv's own behaviour (INV-3), counted, through en_env. */
static inline void serve_env(struct smarm_gs_ctx *sv,
			     const struct bhv_engine *en, struct bhv_env *e)
{
	const struct bhv_op *op = e->en_op;

	if (SMARM_UNLIKELY(op == &smarm__bhv_sys_status)) {
		status_reply(sv, en, e);
		return;
	}
	if (SMARM_UNLIKELY(op == &smarm__bhv_sys_stop)) {
		const struct bhv_block *b = bhv_msg_block(&e->en_msg);
		smarm__gs_stop(sv, (int)b->bk_slots[0].sl_v.i,
			       (intptr_t)b->bk_slots[1].sl_v.i);
		env_release(e);
		return;
	}
	if (e->en_be != sv->sv_be) {
		/* Not this server's behaviour (a stale pid's new tenant). */
		if (e->en_reply != NULL)
			smarm__bhv_reply_send(e->en_reply, e->en_seq,
					      SMARM_ENOOP, NULL, BHV_ANS_OWN);
		env_release(e);
		return;
	}
	assert(smarm__bhv_msg_check(op, &e->en_msg) == 0); /* INV-4 */
	served(sv, op->op_kind == BHV_CALL);
	smarm__trace_named(op->op_kind == BHV_CALL ? SMARM__TR_CALL
						   : SMARM__TR_CAST,
			   smarm__self_pid(), 0, op->op_kind, op->op_name);
	en->en_env(sv, e);
}

void smarm__gs_stop(struct smarm_gs_ctx *sv, int how, intptr_t reason)
{
	if (!sv->sv_stop) { /* the first stop wins */
		sv->sv_stop = true;
		sv->sv_how = (int8_t)how;
		sv->sv_reason = reason;
	}
}

/* Run the operation of e, a request of sv's behaviour; answer a call. */
static void gs_env(struct smarm_gs_ctx *sv, struct bhv_env *e)
{
	const struct bhv_op *op = e->en_op;
	union bhv_ret r;
	smarm_value_t v;
	void *cx = sv;
	int rc;

	sv->sv_cur = e;
	sv->sv_err_set = false;
	smarm__bhv_invoke_block(op, bhv_msg_block(&e->en_msg), sv->sv_state, cx,
				&r);
	sv->sv_cur = NULL;
	if (e->en_reply != NULL) { /* a call not deferred to a token */
		if (SMARM_UNLIKELY(sv->sv_err_set)) { /* {error, Reason} */
			v.type = SMARM_T_I64;
			v.len = 0;
			v.v.i = sv->sv_err;
			rc = SMARM_EREPLY;
		} else {
			rc = smarm__bhv_ret_value(op->op_reply,
						  bhv_reply_tuple(op), &r, &v);
		}
		reply_send(e->en_reply, e->en_seq, rc, &v, BHV_ANS_OWN);
		smarm__trace_named(SMARM__TR_REPLY, smarm__self_pid(), 0,
				   (uint32_t)rc, op->op_name);
	}
	env_release(e);
}

static int gs_status(struct smarm_gs_ctx *sv, smarm_server_status_t *st)
{
	const smarm_gs_desc_t *d = &sv->sv_be->bh_gs;
	st->kind = SMARM_SERVER_GEN_SERVER;
	st->timers =
		sv->sv_cold != NULL ? (uint32_t)sv->sv_cold->gc_ntimers : 0;
	if (d->format_status == NULL) /* OTP's format_status */
		return 0;
	return d->format_status(sv->sv_state, st->state_text,
				sizeof st->state_text);
}

static void on_signal(struct smarm_gs_ctx *sv, const smarm_signal_t *s)
{
	const smarm_gs_desc_t *d = &sv->sv_be->bh_gs;
	if (s->kind == SMARM_SIGNAL_DOWN) {
		struct gs_cold *c = sv->sv_cold; /* made by the monitor */
		if (c != NULL && c->gc_nmon > 0 && --c->gc_nmon == 0)
			sv->sv_mon = false;
		if (d->handle_down != NULL)
			d->handle_down(sv->sv_state, sv, s);
		return;
	}
	if (s->how == SMARM_EXIT_SHUTDOWN) {
		int a = d->handle_shutdown != NULL
				? d->handle_shutdown(sv->sv_state, sv)
				: SMARM_GS_EXIT;
		if (a != SMARM_GS_CONTINUE) /* OTP's {stop, shutdown} */
			smarm__gs_stop(sv, SMARM_EXIT_SHUTDOWN, 0);
		return;
	}
	if (d->handle_exit != NULL)
		d->handle_exit(sv->sv_state, sv, s);
}

/* ---- timers ---- */

static struct gs_timer *timer_find(struct smarm_gs_ctx *sv, uint64_t id)
{
	struct gs_cold *c = sv->sv_cold;
	for (size_t i = 0; c != NULL && i < c->gc_ntimers; i++)
		if (c->gc_timers[i].gt_id == id)
			return &c->gc_timers[i];
	return NULL;
}

static void timer_remove(struct smarm_gs_ctx *sv, struct gs_timer *t)
{
	struct gs_cold *c = sv->sv_cold;
	smarm__bhv_msg_free(&t->gt_msg);
	*t = c->gc_timers[--c->gc_ntimers];
}

int smarm__gs_timer_add(struct smarm_gs_ctx *sv, const struct bhv_op *op,
			struct bhv_msg *blk, uint64_t delay_ns,
			uint64_t period_ns, uint64_t *id)
{
	struct bhv_tick tk = { .tk_which = 0 };
	struct gs_timer *t = NULL;
	struct gs_cold *c = smarm__gs_cold(sv);
	int rc = c != NULL ? smarm__gs_tick_band(sv) : SMARM_ENOMEM;

	if (rc == 0 && c->gc_ntimers == c->gc_captimers) {
		uint32_t cap = c->gc_captimers ? 2 * c->gc_captimers : 4;
		t = realloc(c->gc_timers, cap * sizeof *t);
		rc = t != NULL ? 0 : SMARM_ENOMEM;
		if (t != NULL) {
			c->gc_timers = t;
			c->gc_captimers = cap;
		}
	}
	if (rc == 0) {
		t = &c->gc_timers[c->gc_ntimers];
		tk.tk_gen = t->gt_id =
			atomic_fetch_add_explicit(&gs_timer_ids, 1,
						  memory_order_relaxed) +
			1;
		rc = smarm_chan_send_after(sv->sv_tick, &tk, delay_ns,
					   &t->gt_tm);
	}
	if (rc != 0) {
		smarm__bhv_msg_free(blk);
		return rc;
	}
	t->gt_op = op;
	t->gt_msg = *blk;
	t->gt_period = period_ns;
	c->gc_ntimers++;
	if (id != NULL)
		*id = t->gt_id;
	return 0;
}

int smarm__gs_timer_cancel(struct smarm_gs_ctx *sv, uint64_t id)
{
	struct gs_timer *t = id != 0 ? timer_find(sv, id) : NULL;
	if (t == NULL)
		return SMARM_ENOENT;
	/* A tick already queued finds no record and is dropped. */
	(void)smarm_timer_cancel(t->gt_tm);
	timer_remove(sv, t);
	return 0;
}

/* A tick of a timer came: re-arm a periodic first, then the info. */
static void on_tick(struct smarm_gs_ctx *sv, const struct bhv_tick *tk)
{
	struct gs_timer *t = timer_find(sv, tk->tk_gen);
	struct bhv_env e;

	if (t == NULL)
		return; /* cancelled: its last tick is dropped */
	if (smarm__bhv_msg_copy(&e.en_msg, &t->gt_msg) != 0)
		smarm_actor_crash(SMARM_ENOMEM);
	e.en_be = sv->sv_be;
	e.en_op = t->gt_op;
	e.en_reply = NULL;
	e.en_seq = 0;
	if (t->gt_period == 0)
		timer_remove(sv, t);
	else if (smarm_chan_send_after(sv->sv_tick, tk, t->gt_period,
				       &t->gt_tm) != 0)
		timer_remove(sv, t); /* could not re-arm: it ends */
	served(sv, false);
	gs_env(sv, &e);
}

static void batch_drop(struct smarm_gs_ctx *sv)
{
	while (sv->sv_bi < sv->sv_bn) {
		smarm__bhv_env_free(&sv->sv_batch[sv->sv_bi]);
		__atomic_store_n(&sv->sv_bi, sv->sv_bi + 1, __ATOMIC_RELAXED);
	}
	free(sv->sv_batch);
	sv->sv_batch = NULL;
}

/* Attach channel h (rc 0) as band of sv's mailbox and publish it in
 * *ch; on any failure (rc, or the attach's) h is freed: the status. */
static int band_put(struct smarm_gs_ctx *sv, smarm_chan_t **ch, unsigned band,
		    smarm_chan_t *h, int rc)
{
	if (rc == 0)
		rc = smarm__mbox_attach(&sv->sv_mb, band, h);
	if (rc != 0)
		bhv_chan_free(h);
	else /* atomic: an observer reads it (smarm__bhv_peek) */
		__atomic_store_n(ch, h, __ATOMIC_RELEASE);
	return rc;
}

/* Make band *ch of sv's mailbox (elements of esz bytes, freed unread by
 * dtor) if missing. */
static int band_make(struct smarm_gs_ctx *sv, smarm_chan_t **ch, size_t esz,
		     void (*dtor)(void *), unsigned band)
{
	smarm_chan_t *h;
	int rc;
	if (*ch != NULL)
		return 0;
	rc = smarm_chan_alloc(&h, esz, dtor);
	return rc != 0 ? rc : band_put(sv, ch, band, h, 0);
}

int smarm__gs_sig_band(struct smarm_gs_ctx *sv)
{
	return band_make(sv, &sv->sv_sig, sizeof(smarm_signal_t), NULL,
			 BHV_BAND_SIGNAL);
}

int smarm__gs_trap(struct smarm_gs_ctx *sv)
{
	int rc;
	if (sv->sv_trap)
		return 0;
	rc = smarm__gs_sig_band(sv);
	if (rc == 0)
		rc = smarm_trap_exit(sv->sv_sig);
	if (rc == 0)
		sv->sv_trap = true;
	return rc;
}

int smarm__gs_tick_band(struct smarm_gs_ctx *sv)
{
	return band_make(sv, &sv->sv_tick, sizeof(struct bhv_tick), NULL,
			 BHV_BAND_TIMER);
}

/* Free a band sv made (its queued elements need no destructor). */
static void band_free(smarm_chan_t **ch)
{
	smarm_chan_t *h = *ch;
	/* Cleared before the free: an observer (smarm__bhv_peek) reads
	 * it, and a handle to a freed channel it read is refused there. */
	__atomic_store_n(ch, NULL, __ATOMIC_RELEASE);
	if (h != NULL)
		bhv_chan_free(h);
}

static void bhv_resume(struct smarm__mbox *mb);

/* ---- the inbox, dropped while hibernated (INV-7) ---- */

/*
 * Make sv's inbox, band BHV_BAND_INBOX, bounded by the default and with
 * its owned words declared (chan.c INV-10), and publish it: 0 or a
 * status (nothing made). By sv's actor at its start or resume, or by a
 * sender finding it dropped; with the actor's cold lock held but at the
 * start, before the context is set (INV-7).
 */
static int inbox_make(struct smarm_gs_ctx *sv)
{
	smarm_chan_t *h;
	int rc = smarm_chan_alloc(&h, sizeof(struct bhv_env),
				  smarm__bhv_env_free);
	if (rc != 0)
		return rc;
	rc = smarm__chan_set_limit(h, SMARM_QUEUE_LIMIT_DEFAULT);
	if (rc == 0)
		rc = smarm__chan_set_owned(
			h, offsetof(struct bhv_env, en_reply),
			offsetof(struct bhv_env, en_msg.mg_heap));
	rc = band_put(sv, &sv->sv_inbox, BHV_BAND_INBOX, h, rc);
	if (rc == 0)
		sv->sv_nobox = false;
	return rc;
}

/* Under sv's actor's cold lock (smarm__actor_ext_update of its own
 * pid): drop its idle inbox, or make it again. */
static int inbox_drop_locked(void **state, void *arg)
{
	struct smarm_gs_ctx *sv = arg;
	smarm_chan_t *h = sv->sv_inbox;
	(void)state;
	/* Something queued, or its own bound: kept. */
	if (smarm__chan_free_idle(h, SMARM_QUEUE_LIMIT_DEFAULT) != 0)
		return SMARM_EAGAIN;
	/* The owner alone scans the band table, and not now (the cell is
	 * type-stable: a scan of it would read a retired cell's 0). */
	smarm__mbox_detach_band(&sv->sv_mb, BHV_BAND_INBOX);
	__atomic_store_n(&sv->sv_inbox, NULL, __ATOMIC_RELEASE);
	sv->sv_nobox = true;
	return 0;
}

static int inbox_restore_locked(void **state, void *arg)
{
	struct smarm_gs_ctx *sv = arg;
	(void)state;
	return sv->sv_nobox ? inbox_make(sv) : 0;
}

/*
 * sv hibernates: its inbox goes if it is idle (nothing queued, the
 * default bound), so a hibernated server holds no channel cell; the
 * first sender to find it gone makes it again (inbox_look), or the
 * server as it resumes (inbox_restore).
 */
static void inbox_drop(struct smarm_gs_ctx *sv)
{
	(void)smarm__actor_ext_update(smarm__current_node(), smarm__self_pid(),
				      SMARM__SUB_BEHAVIOUR, inbox_drop_locked,
				      sv);
}

/* sv runs again after a hibernation (or did not hibernate): its inbox
 * is there, made by a sender or now; a server that cannot make it ends
 * (SMARM_ENOMEM). */
static void inbox_restore(struct smarm_gs_ctx *sv)
{
	int rc;
	/* Kept, or made again by a sender: no lock (only a drop, which
	 * is this actor's own, takes it away). */
	if (__atomic_load_n(&sv->sv_inbox, __ATOMIC_ACQUIRE) != NULL)
		return;
	rc = smarm__actor_ext_update(smarm__current_node(), smarm__self_pid(),
				     SMARM__SUB_BEHAVIOUR, inbox_restore_locked,
				     sv);
	if (rc != 0)
		smarm_actor_crash(rc);
}

/*
 * sv hibernates until a band has an element or wait passes, no batch,
 * cold block (unless in use) or idle inbox kept: goes on at bhv_resume;
 * returns only if it did not hibernate (a band was ready, the wait was
 * 0, an error), with its inbox back.
 */
static __attribute__((noinline)) int gs_hibernate(struct smarm_gs_ctx *sv,
						  uint64_t wait)
{
	int rc;
	if (sv->sv_batch != NULL)
		batch_release(sv);
	cold_trim(sv);
	inbox_drop(sv);
	rc = smarm__mbox_hibernate(smarm__current(), &sv->sv_mb, wait,
				   bhv_resume);
	inbox_restore(sv);
	return rc;
}

/* Serve one message, highest band first, waiting at most wait: 0 or
 * SMARM_ETIMEDOUT. A server that cannot wait ends. */
static inline int serve_one(struct smarm_gs_ctx *sv,
			    const struct bhv_engine *en, uint64_t wait)
{
	struct bhv_env e, *b;
	smarm_signal_t sig;
	struct bhv_tick tk;
	unsigned band;
	int rc;

	if (!sv->sv_hib && !sv->sv_trap && !sv->sv_mon && *sv->sv_armed == 0) {
		/* Nothing can come in the higher bands: the inbox alone. */
		b = inbox_next(sv, &e, wait, &rc);
		if (b != NULL)
			serve_env(sv, en, b);
		return rc;
	}
	for (;;) {
		/* The highest band that has something; a snapshot, so a
		 * band found empty is taken from no lock at all. */
		if (smarm__chan_maybe_ready(sv->sv_sig) &&
		    smarm_chan_try_recv(sv->sv_sig, &sig) == 0) {
			en->en_signal(sv, &sig);
			return 0;
		}
		if (smarm__chan_maybe_ready(sv->sv_tick) &&
		    smarm_chan_try_recv(sv->sv_tick, &tk) == 0) {
			en->en_tick(sv, &tk);
			return 0;
		}
		if (smarm__gs_pending(sv) && (b = inbox_take(sv, &e)) != NULL) {
			serve_env(sv, en, b);
			return 0;
		}
		served_flush(sv);
		/* Hibernating, it goes on at bhv_resume: no frame of a
		 * callback is on the stack here. */
		rc = sv->sv_hib ? gs_hibernate(sv, wait)
				: smarm__mbox_wait(smarm__current(), &sv->sv_mb,
						   wait, &band);
		if (rc == SMARM_ETIMEDOUT)
			return rc;
		if (rc != 0) /* it cannot wait: end, never spin */
			smarm_actor_crash(rc);
	}
}

static inline int serve(struct smarm_gs_ctx *sv, const struct bhv_engine *en,
			uint64_t wait)
{
	int rc = serve_one(sv, en, wait);
	/* A server that never parks passes a safe point now and then. */
	if ((++sv->sv_steps & (BHV_CHECK_EVERY - 1)) == 0)
		smarm_check();
	return rc;
}

/* The loop's wait: at most the idle window, or until hibernate_after
 * passes (*hib_timer: it hibernates at the next wait then). */
static uint64_t wait_plan(struct smarm_gs_ctx *sv, bool *hib_timer)
{
	const struct gs_cold *c = sv->sv_cold;
	uint64_t wait = SMARM_NO_TIMEOUT, after;
	if (c != NULL && c->gc_idle_ns != 0)
		wait = c->gc_idle_ns;
	*hib_timer = false;
	if (sv->sv_hib || !sv->sv_hib_set)
		return wait;
	after = c != NULL ? c->gc_hib_after : 0; /* no block: at every wait */
	if (after == 0) {
		sv->sv_hib = true;
	} else if (after < wait) {
		wait = after;
		*hib_timer = true;
	}
	return wait;
}

int smarm__bhv_hibernate_after(struct smarm_gs_ctx *sv, uint64_t ns)
{
	/* Only a finite, non-zero ns is kept (in the cold block). */
	bool finite = ns != 0 && ns != SMARM_NO_TIMEOUT;
	struct gs_cold *c = finite ? smarm__gs_cold(sv) : sv->sv_cold;
	if (finite && c == NULL)
		return SMARM_ENOMEM;
	if (c != NULL)
		c->gc_hib_after = finite ? ns : 0;
	sv->sv_hib_set = ns != SMARM_NO_TIMEOUT;
	return 0;
}

void smarm__bhv_report_end(const char *what, const char *state, int how,
			   intptr_t reason, int kind, const char *op)
{
	const char *kn = kind >= BHV_CAST && kind <= BHV_INFO
				 ? smarm__bhv_kind_name(kind)
				 : "event";
	char why[64];
	if (how != SMARM_EXIT_CRASHED && how != SMARM_EXIT_FAULT)
		return;
	smarm__log_self(
		SMARM_LOG_ERROR, SMARM_REPORT_SERVER, what,
		"terminating%s%s%s: %s, reason %s, %s%s%s%s%s",
		state != NULL ? " in state '" : "", state != NULL ? state : "",
		state != NULL ? "'" : "", smarm__log_how(how),
		how == SMARM_EXIT_FAULT
			? (snprintf(why, sizeof why, "signal %d", (int)reason),
			   why)
			: smarm__log_code(reason, why, sizeof why),
		op != NULL ? "while handling " : "between requests",
		op != NULL ? kn : "", op != NULL ? " '" : "",
		op != NULL ? op : "", op != NULL ? "'" : "");
}

void smarm__bhv_end_how(struct smarm_gs_ctx *sv)
{
	int how;
	if (!sv->sv_stop) {
		smarm__self_exit_info(&how, &sv->sv_reason);
		sv->sv_how = (int8_t)how;
	}
}

/* A server's en_end: the call in progress gets SMARM_EDOWN. */
static void gs_end(struct smarm_gs_ctx *sv)
{
	struct bhv_env *e = sv->sv_cur;
	smarm__bhv_end_how(sv);
	smarm__bhv_report_end("server", NULL, sv->sv_how, sv->sv_reason,
			      e != NULL ? e->en_op->op_kind : 0,
			      e != NULL ? e->en_op->op_name : NULL);
	if (e != NULL) {
		sv->sv_cur = NULL;
		smarm__bhv_env_free(e);
	}
}

/* Send a start's outcome into start and give up its sender reference. */
static void start_send(smarm_chan_t *start, int status, intptr_t why)
{
	struct bhv_start m = { status, why };
	(void)smarm_chan_send(start, &m); /* the starter may be gone */
	smarm_chan_sender_free(start);
}

int smarm__bhv_start_fail(smarm_chan_t *start, bool sup, int status)
{
	if (start != NULL)
		start_send(start, status, status);
	else if (sup)
		smarm_sup_start_failed(status);
	return status;
}

/* Report the start's outcome (rc, why) to whoever waits for it (once);
 * taken: the holder of the name it found taken (OTP's already_started),
 * else 0. */
static void start_report(struct smarm_gs_ctx *sv, int rc, intptr_t why,
			 uint64_t taken)
{
	if (sv->sv_reported)
		return;
	sv->sv_reported = true;
	if (sv->sv_start != NULL) {
		start_send(sv->sv_start, rc, why);
		sv->sv_start = NULL;
	}
	if (sv->sv_sup) {
		if (rc == 0) {
			smarm_sup_ready();
		} else {
			/* a taken name says by whom (already_started) */
			(void)smarm__sup_report(
				rc, rc == SMARM_EEXIST ? (intptr_t)taken : 0);
			smarm__self_exit(SMARM_EXIT_NORMAL, 0);
		}
	}
}

void smarm__bhv_started(struct smarm_gs_ctx *sv)
{
	sv->sv_started = true;
	start_report(sv, 0, 0, 0);
}

/* smarm__bhv_start_failed, with the holder of a name found taken. */
static int start_failed(struct smarm_gs_ctx *sv, const char *stage, int rc,
			uint64_t taken)
{
	int st = rc > 0 ? SMARM_EBADRETURN : rc; /* out of contract */
	char why[64];
	if (stage != NULL) /* OTP's report of an init's {stop, R} */
		smarm__log_self(SMARM_LOG_ERROR, SMARM_REPORT_SERVER,
				sv->sv_be->bh_kind == BHV_GEN_STATEM ? "machine"
								     : "server",
				"%s failed, reason %s%s", stage,
				smarm__log_code(rc, why, sizeof why),
				rc > 0 ? " (outside its contract)" : "");
	start_report(sv, st, rc, taken);
	sv->sv_stop = true; /* terminate does not run (not started) */
	smarm_actor_exit();
	return st;
}

int smarm__bhv_start_failed(struct smarm_gs_ctx *sv, const char *stage, int rc)
{
	return start_failed(sv, stage, rc, 0);
}

/* Cancel sv's timers (none fires after this). */
static void timers_end(struct smarm_gs_ctx *sv)
{
	struct gs_cold *c = sv->sv_cold;
	while (c != NULL && c->gc_ntimers > 0)
		(void)smarm__gs_timer_cancel(sv, c->gc_timers[0].gt_id);
}

/* Under sv's actor's cold lock: no sender makes its inbox again. */
static int inbox_seal_locked(void **state, void *arg)
{
	struct smarm_gs_ctx *sv = arg;
	(void)state;
	sv->sv_nobox = false;
	return 0;
}

static void mailbox_free(struct smarm_gs_ctx *sv)
{
	/* INV-7: first, so that the band table is the owner's alone. */
	(void)smarm__actor_ext_update(smarm__current_node(), smarm__self_pid(),
				      SMARM__SUB_BEHAVIOUR, inbox_seal_locked,
				      sv);
	served_flush(sv);
	if (sv->sv_trap)
		(void)smarm_trap_exit(NULL);
	smarm__mbox_detach(&sv->sv_mb);
	batch_drop(sv);
	band_free(&sv->sv_inbox); /* queued calls: SMARM_EDOWN */
	band_free(&sv->sv_sig);
	band_free(&sv->sv_tick);
}

/* After terminate (or a crash in it): destroy, the mailbox and tokens
 * (calls get SMARM_EDOWN), the context, an unreported start, the plugin
 * reference, the object. */
static void end_fin(void *arg)
{
	struct smarm_gs_ctx *sv = arg;
	const struct smarm_behaviour *be = sv->sv_be;
	void (*destroy)(void *) =
		be->bh_sm != NULL ? be->bh_sm->destroy : be->bh_gs.destroy;
	void *mem = (char *)sv - sv->sv_en->en_off;

	if (sv->sv_created && destroy != NULL)
		destroy(sv->sv_state);
	timers_end(sv); /* any terminate made */
	mailbox_free(sv);
	tokens_end(sv);
	cold_free(sv);
	(void)smarm__bhv_self_set(NULL, 0);
	if (sv->sv_start != NULL) { /* unreported: init crashed, a kill */
		int how;
		intptr_t code;
		smarm__self_exit_info(&how, &code);
		start_send(sv->sv_start, SMARM_EDOWN, code);
		sv->sv_start = NULL;
	}
	smarm__bhv_plugin_unref(be);
	free(mem);
}

/*
 * The actor ends, on any path (its cleanup handler): en_end, the timers
 * (none fires after the server), then terminate (after init; parks
 * refused unless it stopped), then end_fin. A crash in terminate
 * becomes the exit reason and the rest still runs.
 */
static void bhv_end(void *arg)
{
	struct smarm_gs_ctx *sv = arg;
	const struct smarm_behaviour *be = sv->sv_be;
	void (*term)(void *, int, intptr_t, bool) =
		be->bh_sm != NULL ? be->bh_sm->terminate : be->bh_gs.terminate;
	bool may_block, guarded;

	sv->sv_en->en_end(sv);
	may_block = sv->sv_stop;
	timers_end(sv);
	if (!sv->sv_started || term == NULL) {
		end_fin(sv);
		return;
	}
	/* A crash in terminate ends this handler; the exit runs end_fin. */
	guarded = smarm_cleanup_push(end_fin, sv) == 0;
	/* It must not block: every park fails (wait.c WAIT-9). */
	if (!may_block)
		smarm__self_refuse_parks(true);
	term(sv->sv_state, sv->sv_how, sv->sv_reason, may_block);
	if (!may_block)
		smarm__self_refuse_parks(false);
	if (guarded)
		(void)smarm_cleanup_pop(true);
	else
		end_fin(sv);
}

/* Make sv's mailbox: its inbox (found by clients once the caller sets
 * its context: smarm__bhv_inbox_of): 0 or a status (then nothing is
 * left to free). */
static int mailbox_make(struct smarm_gs_ctx *sv)
{
	smarm__mbox_init(&sv->sv_mb);
	return inbox_make(sv);
}

/* Label the actor with its behaviour and plugin for fault reports. */
static void label(const struct smarm_behaviour *b)
{
	char text[SMARM__LABEL_MAX];
	snprintf(text, sizeof text, "%s '%s' of plugin '%s'",
		 b->bh_kind == BHV_GEN_STATEM ? "gen_statem" : "gen_server",
		 b->bh_name, smarm__bhv_plugin_name(b));
	(void)smarm__actor_label_set(smarm__current_node(), smarm__self_pid(),
				     SMARM__LABEL_BEHAVIOUR, text);
}

int smarm__bhv_open(struct smarm_gs_ctx *sv, const struct smarm_behaviour *be,
		    const struct bhv_engine *en, const char *args,
		    const char *name, smarm_chan_t *start, bool sup,
		    const struct bhv_spent *spent, void *alloc, const void *cx,
		    unsigned tag)
{
	int (*create)(const char *, void **) =
		be->bh_sm != NULL ? be->bh_sm->create : be->bh_gs.create;
	smarm_pid_t taken_by = { 0 };
	int rc;

	sv->sv_be = be;
	sv->sv_en = en;
	sv->sv_armed = &gs_no_timers;
	sv->sv_start = start;
	sv->sv_sup = sup;
	SMARM_ASSERT((char *)alloc + en->en_off == (char *)sv);
	smarm__bhv_plugin_ref(be);
	label(be);
	rc = mailbox_make(sv);
	if (rc == 0 && (rc = smarm_cleanup_push(bhv_end, sv)) != 0)
		mailbox_free(sv); /* nothing ran: undo by hand */
	if (rc != 0) {
		smarm__bhv_plugin_unref(be);
		free(alloc);
		return smarm__bhv_start_fail(start, sup, rc);
	}
	/* From here on end cleans up on every path. */
	rc = smarm__bhv_self_set(cx, tag);
	if (rc == 0 && name != NULL)
		rc = smarm_register(name, &taken_by);
	if (rc != 0)
		return start_failed(sv, NULL, rc, taken_by.id);
	rc = create != NULL ? create(args, &sv->sv_state) : 0;
	if (rc != 0)
		return smarm__bhv_start_failed(sv, "create", rc);
	sv->sv_created = create != NULL;
	if (spent != NULL && spent->sp_fn != NULL) {
		/* args and name are taken: the start data can go now (the
		 * server holds its own plugin reference). */
		(void)smarm__cleanup_drop(smarm__current(), spent->sp_fn,
					  spent->sp_arg);
		spent->sp_fn(spent->sp_arg);
	}
	return 0;
}

static const struct bhv_engine gs_engine = {
	.en_signal = on_signal,
	.en_tick = on_tick,
	.en_env = gs_env,
	.en_status = gs_status,
	.en_end = gs_end,
	.en_off = 0, /* smarm__gs_run: the server is the object */
};

/*
 * The engine loop, from a start or, on a fresh stack, from a hibernation
 * (bhv_resume): between callbacks nothing of the server or machine is
 * on its stack, so it can always start over here. A machine's bh_gs is
 * zeroed and its idle window 0: no continue, no idle callback. Inlined
 * in smarm__gs_run too, so a server's dispatch calls are direct.
 */
static inline __attribute__((always_inline, noreturn)) void
engine_loop(struct smarm_gs_ctx *sv, const struct bhv_engine *en)
{
	const smarm_gs_desc_t *d = &sv->sv_be->bh_gs;
	while (!sv->sv_stop) {
		bool hib_timer;
		uint64_t wait;
		if (sv->sv_cont) {
			sv->sv_cont = false;
			if (d->handle_continue != NULL)
				d->handle_continue(sv->sv_state, sv,
						   sv->sv_cold->gc_tag);
			continue;
		}
		wait = wait_plan(sv, &hib_timer);
		if (serve(sv, en, wait) != SMARM_ETIMEDOUT)
			continue;
		if (hib_timer)
			sv->sv_hib = true; /* idle that long: hibernate */
		else if (d->handle_idle != NULL)
			d->handle_idle(sv->sv_state, sv);
	}
	/* The actor ends as the stop said (its end runs terminate):
	 * monitors, links and a supervisor see that how. */
	if (sv->sv_how == SMARM_EXIT_CRASHED)
		smarm_actor_crash(sv->sv_reason);
	if (sv->sv_how == SMARM_EXIT_SHUTDOWN) /* OTP's {shutdown, X} */
		smarm__self_exit(SMARM_EXIT_SHUTDOWN, sv->sv_reason);
	smarm_actor_exit();
	__builtin_unreachable();
}

void smarm__bhv_loop(struct smarm_gs_ctx *sv)
{
	engine_loop(sv, sv->sv_en);
}

/* A hibernated server's or machine's next run: its idle window may have
 * passed. */
static void bhv_resume(struct smarm__mbox *mb)
{
	struct smarm_gs_ctx *sv =
		(struct smarm_gs_ctx *)(void *)((char *)mb -
						offsetof(struct smarm_gs_ctx,
							 sv_mb));
	const smarm_gs_desc_t *d = &sv->sv_be->bh_gs;
	inbox_restore(sv);
	sv->sv_hib = false;
	if (sv->sv_cold != NULL && sv->sv_cold->gc_idle_ns != 0 &&
	    smarm__mbox_timed_out(&sv->sv_mb) && d->handle_idle != NULL)
		d->handle_idle(sv->sv_state, sv);
	smarm__bhv_loop(sv);
}

int smarm__gs_run(const struct smarm_behaviour *be, const char *args,
		  const char *name, smarm_chan_t *start, bool sup,
		  const struct bhv_spent *spent)
{
	struct smarm_gs_ctx *sv = calloc(1, sizeof *sv);
	const smarm_gs_desc_t *d = &be->bh_gs;
	int rc;

	if (sv == NULL)
		return smarm__bhv_start_fail(start, sup, SMARM_ENOMEM);
	rc = smarm__bhv_open(sv, be, &gs_engine, args, name, start, sup, spent,
			     sv, sv, BHV_SELF_SERVER);
	if (rc != 0)
		return rc;
	sv->sv_in_init = true;
	rc = d->init != NULL ? d->init(sv->sv_state, sv) : 0;
	sv->sv_in_init = false;
	if (rc != 0)
		return smarm__bhv_start_failed(sv, "init", rc);
	smarm__bhv_started(sv);
	engine_loop(sv, &gs_engine);
}
