/* SPDX-License-Identifier: MIT */
/*
 * msg.h - internal interface of the message layer (channels, select,
 * green mutex). It sits on the core layer and uses only core.h.
 *
 * Ownership, locking and invariants are stated in chan.c and mutex.c.
 * See: docs/architecture/channels.md,
 * docs/architecture/select.md, docs/architecture/mutex.md.
 */
#ifndef SMARM_MSG_H
#define SMARM_MSG_H

#include "../core/core.h"

/*
 * One receiver waiting on a channel: an entry of the channel's FIFO of
 * waiters, an intrusive list through records that live on the waiters'
 * own stacks (a recv record's rx, a select round's per-arm records), so
 * queueing allocates nothing. An actor in recv or a select arm has an
 * actor registration (wt.node != NULL); a plain thread in recv has
 * wt.node == NULL and is woken through its record's futex. hand says
 * which of the three it is in one word, so that a send tests one bit to
 * know it may hand over to a parked actor: an actor's recv record
 * (struct smarm__recv_wait, aligned: bit 0 clear), a plain thread's
 * record with SMARM__RX_NOT_ACTOR set, or SMARM__RX_NOT_ACTOR alone for
 * a select arm (report only: nothing is handed over). smarm__rx_rw
 * reads the record back.
 */
struct smarm__chan_rx {
	struct smarm__chan_rx *next; /* FIFO link (channel lock) */
	struct smarm__waiter wt;     /* actor registration, or node NULL */
	uintptr_t hand;		     /* recv record | kind bit (above) */
};

#define SMARM__RX_NOT_ACTOR ((uintptr_t)1) /* hand: no parked actor recv */

/* The recv record of e, NULL for a select arm. */
static inline struct smarm__recv_wait *
smarm__rx_rw(const struct smarm__chan_rx *e)
{
	return (struct smarm__recv_wait *)(e->hand & ~SMARM__RX_NOT_ACTOR);
}

/*
 * A channel's cell (core/handle.h); smarm_chan_t * values the caller
 * holds are handles to it, decoded by chan_api.c.
 */
struct smarm_chan {
	struct smarm__hcell hdr;   /* handle header: first (decode reads it) */
	smarm__lock_t lock;	   /* CHANNEL rank: guards every field below;
				      kept across tenants, never reset */
	uint32_t n_owned;	   /* queued elements with an owned word not
				      NULL */
	smarm_elem_free_cb efree;  /* destructor (constant) */
	struct smarm__queue queue; /* queued elements, oldest first
				      (core/ring.h); no segment before
				      the first send */
	struct smarm__chan_rx *rx_head, *rx_tail; /* waiting receivers,
				     oldest first; non-empty only while queue
				     is empty or a woken one is due (chan.c
				     INV-3) */
	struct smarm__mbox *mbox; /* the mailbox it is a band of, or NULL
				     (mbox.c): told when the queue becomes
				     non-empty */
	uint32_t esz;		  /* element size (constant, at most
				     SMARM__CHAN_MAX_ELEM) */
	uint32_t senders;	  /* sender references (timers hold one) */
	uint32_t timer_senders;	  /* of those, held by pending timed sends */
	uint32_t receivers;	  /* receiver references */
	uint32_t rx_inside;	  /* waiters a waker took off the FIFO and
				     woke, not yet checked out; the last
				     receiver_free refuses while it is not
				     0 or the FIFO is not empty (chan.c
				     INV-4) */
	int nfd;		  /* notify eventfd, -1: none (INV-5) */
	_Atomic uint32_t qhint;	  /* the queue's length, stored (relaxed) under
				     the lock at each change, read without it
				     (smarm__chan_maybe_ready; INV-8) */
	uint32_t qlimit;	  /* sends that find this many queued fail with
				     SMARM_EFULL (UINT32_MAX: none; a mailbox's
				     inbox sets it, smarm__chan_set_limit) */
	bool closed;		  /* senders == 0 or receivers == 0: sends
				     fail (one test on the send path) */
	bool own_on;		  /* owned words declared (chan.c INV-10) */
	uint16_t own_a, own_b;	  /* their offsets in an element */
};

/*
 * A receiver in recv (an actor parked, or a plain thread blocked): a
 * sender finding it at the head of the FIFO on an empty queue copies the
 * element straight into `out` and marks it delivered, so the woken
 * receiver returns without touching the channel again (Go's direct
 * hand-off). Lives on the receiver's stack for the duration of the wait.
 */
struct smarm__recv_wait {
	smarm_chan_t *ch;	  /* h's cell */
	const smarm_chan_t *h;	  /* the caller's handle (recv_relock) */
	smarm_elem_free_cb efree; /* ch's destructor, read while ch lived */
	void *out;
	bool delivered; /* written under ch->lock */
	uint32_t futex; /* plain thread: 0 blocked, 1 woken (under lock) */
	struct smarm__chan_rx rx; /* its entry in ch's FIFO of waiters */
};

/*
 * chan.c: the channel operations behind chan_api.c, which has validated
 * every argument (non-NULL, sizes in range, actor context where needed)
 * and found every handle's cell (smarm__chan_cell). Each call takes the
 * caller's handle too and checks it under the channel lock, where frees
 * retire the cell (chan_lock_live): a freed channel is SMARM_ESTATE, and
 * of two racing frees one wins. smarm__chan_alloc writes the new
 * channel's handle.
 */
#define SMARM__CHAN_MAX_ELEM 65536 /* largest element, in bytes */
/* Every this many elements of a backlog, a send ends its sender's slice
 * (chan.c INV-9): a power of two. */
#define SMARM__CHAN_BACKLOG 1024
/* A channel's cell size: smarm__chan_pool's, known at compile time. */
#define SMARM__CHAN_CELL SMARM__CELL_SIZE(sizeof(struct smarm_chan))
int smarm__chan_alloc(smarm_chan_t **out, size_t elem_size,
		      smarm_elem_free_cb elem_free);
/*
 * smarm_hibernate on ch (chan.c): the running actor me gives up its
 * stack until ch is ready, then runs fn(arg) on a fresh one. Returns
 * only on an error.
 */
int smarm__chan_hibernate(struct smarm__slot *me, smarm_chan_t *ch,
			  const smarm_chan_t *h, void (*fn)(void *), void *arg);
extern struct smarm__hpool smarm__chan_pool;
int smarm__chan_sender_dup(smarm_chan_t *ch, const smarm_chan_t *h);
int smarm__chan_sender_free(smarm_chan_t *ch, const smarm_chan_t *h);
int smarm__chan_receiver_dup(smarm_chan_t *ch, const smarm_chan_t *h);
int smarm__chan_receiver_free(smarm_chan_t *ch, const smarm_chan_t *h);
/* A send by a caller whose thread neither keeps statistics, traces nor
 * profiles (smarm__tls_obs clear), and one by a caller whose thread
 * does (its count, its records, its causal pay: chan.c). */
int smarm__chan_send(smarm_chan_t *ch, const smarm_chan_t *h, const void *elem);
int smarm__chan_send_obs(smarm_chan_t *ch, const smarm_chan_t *h,
			 const void *elem);
int smarm__chan_try_recv(smarm_chan_t *ch, const smarm_chan_t *h, void *out);
/*
 * Take up to max queued elements into out[0..*n), oldest first, in one
 * hold of the lock (a receiver that serves a backlog pays one lock per
 * batch). 0 with *n >= 1; SMARM_EAGAIN none queued, SMARM_ECLOSED none
 * and no sender left, SMARM_ESTATE (*n 0 on every error).
 */
int smarm__chan_try_recv_n(smarm_chan_t *ch, const smarm_chan_t *h, void *out,
			   size_t max, size_t *n);
int smarm__chan_len(smarm_chan_t *ch, const smarm_chan_t *h, size_t *out);
/*
 * What is queued in h's channel, read in one hold of its lock (so the
 * two agree): the elements in *len, and in *bytes their size (esz
 * each) plus what extra(elem) says each owns beyond it (extra NULL:
 * nothing; it runs under the channel lock and must only read the
 * element). O(len) with extra, O(1) without. 0, or SMARM_ESTATE.
 */
int smarm__chan_queued(smarm_chan_t *ch, const smarm_chan_t *h,
		       size_t (*extra)(const void *elem), size_t *len,
		       uint64_t *bytes);
int smarm__chan_recv(struct smarm__slot *me, smarm_chan_t *ch,
		     const smarm_chan_t *h, void *out, uint64_t deadline);
int smarm__chan_recv_thread(smarm_chan_t *ch, const smarm_chan_t *h, void *out,
			    uint64_t deadline);
int smarm__chan_notify_fd(smarm_chan_t *ch, const smarm_chan_t *h, int *fd);
int smarm__chan_send_after(struct smarm_node *n, smarm_chan_t *ch,
			   const smarm_chan_t *h, const void *elem,
			   uint64_t delay_ns, uint64_t *id);
/*
 * A sender reference the runtime keeps for itself (counted with the
 * timers', so the caller's sender_free cannot give it up): _hold takes
 * one with the caller's handle (0, SMARM_ESTATE freed, SMARM_ECLOSED no
 * sender is left, SMARM_ENOMEM); with one held, smarm__chan_send_held
 * sends without a handle check (as smarm__chan_send), and with released
 * non-NULL gives the reference back in the same hold (*released) unless
 * it is the last sender, which the caller then gives up with _release
 * outside its locks; _release gives it up (it may close and free the
 * channel).
 */
int smarm__chan_sender_hold(smarm_chan_t *ch, const smarm_chan_t *h);
int smarm__chan_send_held(smarm_chan_t *ch, const void *elem, bool *released);
void smarm__chan_sender_release(smarm_chan_t *ch);
/*
 * Remove the queued elements match accepts (run under the channel
 * lock; it only reads), destroying them: the count, or SMARM_ESTATE.
 */
int smarm__chan_remove_if(smarm_chan_t *ch, const smarm_chan_t *h,
			  bool (*match)(const void *elem, void *arg),
			  void *arg);

/*
 * A channel handle's object: 0; SMARM_EINVAL h is no channel handle
 * (NULL included); SMARM_ESTATE the channel was freed.
 */
static inline int smarm__chan_decode(const smarm_chan_t *h, smarm_chan_t **ch)
{
	void *c;
	int rc = smarm__handle_decode(&smarm__chan_pool, h, &c);
	if (rc == 0)
		*ch = c;
	return rc;
}

/*
 * A channel handle's cell, for a call that goes straight to a
 * smarm__chan_* operation: each checks h under the channel lock (a freed
 * channel is SMARM_ESTATE there), so no check is made before. 0;
 * SMARM_EINVAL h is no channel handle (NULL included).
 */
static inline int smarm__chan_cell(const smarm_chan_t *h, smarm_chan_t **ch)
{
	void *c;
	int rc = smarm__handle_cell_sized(&smarm__chan_pool, SMARM__CHAN_CELL,
					  h, &c);
	if (rc == 0)
		*ch = c;
	return rc;
}

/*
 * Might the channel of handle h (one the caller holds a reference of)
 * have an element queued? A snapshot without the lock: false means
 * none was queued a moment ago, so a send that races with it counts as
 * arriving just after. For a receiver that polls one channel before
 * another on every message (a server's infos before its inbox) and
 * would pay a lock each time. A handle that is no channel: false.
 */
static inline bool smarm__chan_maybe_ready(const smarm_chan_t *h)
{
	smarm_chan_t *ch;
	/* NULL first: inlined with a constant NULL, GCC 12 without LTO
	 * would see a load from address 0 (-Wstringop-overflow). */
	return h != NULL && smarm__chan_cell(h, &ch) == 0 &&
	       atomic_load_explicit(&ch->qhint, memory_order_relaxed) != 0;
}

/*
 * Bound the queue of the channel of handle h (one the caller receives
 * from): a send that finds limit elements queued fails with SMARM_EFULL
 * (the element stays the sender's); 0: no bound. 0, SMARM_EINVAL,
 * SMARM_ESTATE.
 */
int smarm__chan_set_limit(const smarm_chan_t *h, uint32_t limit);

/*
 * Tell the channel of handle h (one the caller receives from, its queue
 * still empty) which elements its destructor has work for: those whose
 * pointer at offset off_a or off_b is not NULL (an element with both
 * NULL must need no destructor call). It counts the queued ones, and
 * when its last receiver goes with none of them queued it frees the
 * backlog without reading it (chan.c INV-10). 0, SMARM_EINVAL (an
 * offset outside the element), SMARM_ESTATE (elements are queued, or h
 * is stale).
 */
int smarm__chan_set_owned(const smarm_chan_t *h, size_t off_a, size_t off_b);

/* The bound of h's queue into *limit (0: none): 0, or as _set_limit. */
int smarm__chan_get_limit(const smarm_chan_t *h, uint32_t *limit);

/*
 * Free the channel of handle h, made by the caller (its one sender and
 * one receiver reference), if it is idle: nothing queued, no receiver
 * waiting, no other reference, no notify fd, and its bound is limit (as
 * _set_limit's). The test and the retire of h are one hold of the lock
 * (chan.c INV-12): a send racing with it either queued first (then the
 * channel is kept) or is refused. 0 (freed), SMARM_EAGAIN (not idle:
 * kept), SMARM_EINVAL, SMARM_ESTATE.
 */
int smarm__chan_free_idle(const smarm_chan_t *h, uint32_t limit);

/*
 * mbox.c: an actor's mailbox. Its bands are channels the actor alone
 * receives from, band 0 the highest; the actor waits on them all with
 * one registration, which a send that makes a band non-empty wakes.
 */
#define SMARM__MBOX_BANDS 3 /* a behaviour's: signals, timer fires, inbox */
struct smarm__mbox {
	smarm__lock_t mb_lock;	    /* MBOX rank: guards mb_wt */
	unsigned mb_n;		    /* bands [0, mb_n) may be attached */
	struct smarm__waiter mb_wt; /* the owner, parked; node NULL: none */
	smarm_chan_t *mb_band[SMARM__MBOX_BANDS]; /* cells; NULL: none */
	struct smarm__wait mb_hw; /* the owner's wait while hibernated
				     (off its stack: core/wait.h) */
	void (*mb_hfn)(struct smarm__mbox *mb); /* ... and where it goes
						   on (its owner finds
						   itself from mb) */
};

/* An empty mailbox (no band). */
void smarm__mbox_init(struct smarm__mbox *mb);

/*
 * Make the channel of handle h (one the owner receives from and keeps a
 * receiver reference of until smarm__mbox_detach) band number band of
 * mb: 0, SMARM_EINVAL (band out of range or taken, h no channel),
 * SMARM_ESTATE (freed).
 */
int smarm__mbox_attach(struct smarm__mbox *mb, unsigned band, smarm_chan_t *h);

/*
 * Forget band number band of mb (the owner, whose band's channel is
 * gone or about to be: smarm__chan_free_idle detaches it from mb); a
 * band attached again later may be attached by another thread (mbox.c
 * INV-4).
 */
void smarm__mbox_detach_band(struct smarm__mbox *mb, unsigned band);

/* Detach every band (the owner ends): sends no longer reach mb. */
void smarm__mbox_detach(struct smarm__mbox *mb);

/* The highest band with an element queued, -1: none (a snapshot). */
int smarm__mbox_ready(const struct smarm__mbox *mb);

/*
 * The running actor me, mb's owner: wait until a band has an element,
 * at most timeout_ns (the one timeout rule), and return 0 with the
 * highest such band in *band; SMARM_ETIMEDOUT; or the wait's error
 * (SMARM_ENOMEM, SMARM_EAGAIN: parking refused). A safe point.
 */
int smarm__mbox_wait(struct smarm__slot *me, struct smarm__mbox *mb,
		     uint64_t timeout_ns, unsigned *band);

/*
 * smarm__mbox_wait giving up the stack (core/wait.h WAIT-10): 0 at once
 * if a band has an element (SMARM_ETIMEDOUT if none and timeout_ns is
 * 0); else the owner hibernates until a band has
 * one, or timeout_ns passes, and goes on at fn(mb) on a fresh stack
 * (its registration taken back; smarm__mbox_timed_out tells a timeout);
 * returns only on an error (as smarm__mbox_wait's, or SMARM_ESTATE from
 * a runtime callback).
 */
int smarm__mbox_hibernate(struct smarm__slot *me, struct smarm__mbox *mb,
			  uint64_t timeout_ns,
			  void (*fn)(struct smarm__mbox *mb));

/* After a hibernation: its timeout passed and no band has an element. */
bool smarm__mbox_timed_out(const struct smarm__mbox *mb);

/* chan.c, under a band's lock: the band became non-empty. */
void smarm__mbox_notify(struct smarm__mbox *mb);

/*
 * mutex.c: the green mutex behind mutex_api.c (arguments validated, the
 * handle's cell found by smarm__mutex_cell: SMARM_EINVAL for no mutex
 * handle). Each call takes the caller's handle too and checks it under
 * the mutex's lock, so a freed mutex is SMARM_ESTATE and a call racing a
 * free of the same mutex either runs before it or returns SMARM_ESTATE.
 */
int smarm__mutex_alloc(smarm_mutex_t **out);
int smarm__mutex_cell(const smarm_mutex_t *h, smarm_mutex_t **m);
int smarm__mutex_free(smarm_mutex_t *m, const smarm_mutex_t *h);
int smarm__mutex_lock(smarm_mutex_t *m, const smarm_mutex_t *h,
		      uint64_t timeout_ns);
int smarm__mutex_try_lock(smarm_mutex_t *m, const smarm_mutex_t *h);
int smarm__mutex_unlock(smarm_mutex_t *m, const smarm_mutex_t *h);

/*
 * select (chan.c side): queue the current actor's round as one of the
 * channel's waiters, or report it ready. rec (the caller's, with wt set
 * to the round's registration) must live until the arm is disarmed:
 * every arm that registered is disarmed exactly once
 * (smarm__chan_disarm or _disarm_ready).
 */
int smarm__chan_arm(smarm_chan_t *ch, const smarm_chan_t *h,
		    struct smarm__chan_rx *rec, bool *ready);
void smarm__chan_disarm(smarm_chan_t *ch, struct smarm__chan_rx *rec);
bool smarm__chan_disarm_ready(smarm_chan_t *ch, struct smarm__chan_rx *rec);
bool smarm__chan_ready(smarm_chan_t *ch);

#endif /* SMARM_MSG_H */
