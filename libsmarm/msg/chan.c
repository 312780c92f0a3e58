/* SPDX-License-Identifier: MIT */
/*
 * chan.c - unbounded multi-producer single-consumer channels of fixed-size
 * elements, timed sends, and the channel side of select (arming and
 * disarming an arm; the select engine itself is io/select.c). The public
 * calls, which validate their arguments and decode the caller's handles,
 * are in chan_api.c.
 *
 * Elements live by value in a ring buffer that doubles when full, so a
 * send is one memcpy and no allocation in the steady state. A receiver
 * that finds the channel empty opens a wait (core/wait.h), registers
 * (node, pid, epoch) under the channel lock, and parks; a sender takes
 * that registration under the lock and wakes it with its epoch (see
 * smarm__wake_and_unlock for why a foreign thread wakes under the lock).
 * The receiver removes its registration whenever it leaves the wait: on
 * wake (under the lock it takes anyway to pop), on timeout, and through
 * the wait's undo hook when a stop ends it (core.h INV-5).
 *
 * Close semantics: when the last sender reference goes the channel is
 * closed; the receiver still drains what is queued, then gets ECLOSED.
 * When the receiver reference goes, queued elements are destroyed and
 * sends fail with ECLOSED (the element stays the caller's). The channel
 * memory goes when both kinds of reference are gone: the cell is retired
 * (its handle decodes to SMARM_ESTATE) and goes back to the channel pool
 * (core/handle.h), while the element ring is freed. A pending timed send
 * holds a sender reference of its own (timer_senders), which the
 * caller's sender_free never gives up.
 *
 * A select registers the same epoch on every arm in index order; the
 * first sender to wake it wins the epoch, later wakes fail at the CAS.
 *
 * Ownership: see above; element bytes are the channel's between a
 * successful send and the receive that copies them out.
 * Locking: lock (CHANNEL) guards all mutable fields; nothing else is
 * taken under it except the run queue (waking under it). The free of the
 * channel itself (the pool's HANDLE lock) comes after unlock. Element
 * destructors run with no lock held.
 * Invariants: INV-1 waiter.node != NULL only while that actor is inside a
 * wait on this channel. INV-2 senders == 0 and !receiver => retired (under
 * the lock) and freed. INV-3 timer_senders <= senders.
 * See: docs/architecture.md (Channels, Select).
 */
#include "msg.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* memcpy with the common small sizes inlined (no libc call). */
static inline void elem_copy(void *dst, const void *src, size_t esz)
{
	switch (esz) {
	case 4:
		memcpy(dst, src, 4);
		break;
	case 8:
		memcpy(dst, src, 8);
		break;
	case 16:
		memcpy(dst, src, 16);
		break;
	default:
		memcpy(dst, src, esz);
	}
}

/*
 * Destroy the elements of a ring detached from its channel, and free
 * it. It takes the element size and destructor by value: a destructor
 * may drop the channel's last reference, and then the channel is gone.
 */
static void chan_destroy_elems(struct smarm__ring *r, size_t esz,
			       smarm_elem_free_cb efree)
{
	struct smarm__slot *me;
	uint32_t len = smarm__ring_len(r);
	if (efree != NULL && len > 0) {
		/* No async preemption or stop inside a runtime call. */
		me = smarm__current();
		smarm__nopreempt_enter(me);
		for (uint32_t i = 0; i < len; i++)
			efree(smarm__ring_at(r, esz, i));
		smarm__nopreempt_leave(me);
	}
	smarm__ring_fini(r);
}

/*
 * Channels come from a type-stable pool (core/handle.h): a handle the
 * caller still holds after the free reads a retired cell, never freed
 * memory. 4 GiB of address space, reserved, not committed: 2^25
 * channels of 128 bytes at most.
 */
#define CHAN_REGION ((size_t)4 << 30)
struct smarm__hpool smarm__chan_pool =
	SMARM__HPOOL_INIT(sizeof(struct smarm_chan), CHAN_REGION);
_Static_assert(sizeof(struct smarm_chan) <= 4096, "a channel fits a cell");
_Static_assert(offsetof(struct smarm_chan, hdr) == 0,
	       "the handle header is the cell's first word");

/*
 * The last sender reference went after the receiver's: ch was retired
 * under its lock and nobody reaches it but this call. Its ring was
 * detached by the receiver's free (empty; this frees no elements).
 */
static void chan_free_mem(smarm_chan_t *ch)
{
	chan_destroy_elems(&ch->ring, ch->esz, ch->efree);
	smarm__hpool_free(&smarm__chan_pool, ch);
}

int smarm__chan_alloc(smarm_chan_t **out, size_t elem_size,
		      smarm_elem_free_cb elem_free)
{
	smarm_chan_t *ch;
	uint64_t h;
	void *cell;
	int rc = smarm__hpool_alloc(&smarm__chan_pool, &cell, &h);
	if (rc != 0)
		return rc;
	/*
	 * Every field but the header and the lock (a stale caller may hold
	 * it): this cell may have had tenants before.
	 */
	ch = cell;
	ch->esz = elem_size;
	ch->efree = elem_free;
	smarm__ring_init_fixed(&ch->ring, NULL, 0);
	ch->senders = 1;
	ch->timer_senders = 0;
	ch->receiver = true;
	ch->waiter = (struct smarm__waiter){ NULL, 0, 0 };
	ch->rwait = NULL;
	__atomic_store_n(&ch->receiving, 0, __ATOMIC_RELAXED);
	smarm__handle_publish(ch, h);
	*out = (smarm_chan_t *)(uintptr_t)h;
	return 0;
}

/* Take a sender reference; timer: for a pending timed send. */
static int chan_sender_take(smarm_chan_t *ch, bool timer)
{
	int rc = 0;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	if (ch->senders == 0) {
		rc = SMARM_ECLOSED;
	} else {
		ch->senders++;
		ch->timer_senders += timer;
	}
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return rc;
}

int smarm__chan_sender_dup(smarm_chan_t *ch)
{
	return chan_sender_take(ch, false);
}

/*
 * Give up a sender reference: the caller's (h its handle, checked again
 * under the lock; a timer's references are not the caller's to give
 * up), or a timer's (h NULL).
 */
static int chan_sender_drop(smarm_chan_t *ch, const smarm_chan_t *h)
{
	struct smarm__waiter wt = { NULL, 0, 0 };
	bool gone;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	if (h != NULL &&
	    (!smarm__handle_live(ch, h) || ch->senders == ch->timer_senders)) {
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		return SMARM_ESTATE;
	}
	SMARM_ASSERT(ch->senders > 0 && (h != NULL || ch->timer_senders > 0));
	ch->timer_senders -= h == NULL;
	if (--ch->senders == 0) {
		/* Closed: a parked receiver must see it, even mid-queue. */
		wt = ch->waiter;
		ch->waiter.node = NULL;
		ch->rwait = NULL;
	}
	gone = ch->senders == 0 && !ch->receiver;
	if (gone) {
		smarm__handle_retire(ch); /* INV-2 */
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		chan_free_mem(ch);
		return 0;
	}
	smarm__wake_and_unlock(wt, &ch->lock, SMARM__RANK_CHANNEL);
	return 0;
}

int smarm__chan_sender_free(smarm_chan_t *ch, const smarm_chan_t *h)
{
	return chan_sender_drop(ch, h);
}

int smarm__chan_receiver_free(smarm_chan_t *ch, const smarm_chan_t *h)
{
	struct smarm__ring elems;
	size_t esz = ch->esz;		      /* constant */
	smarm_elem_free_cb efree = ch->efree; /* constant */
	bool gone;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	if (!smarm__handle_live(ch, h) || !ch->receiver ||
	    ch->waiter.node != NULL ||
	    __atomic_load_n(&ch->receiving, __ATOMIC_ACQUIRE) != 0) {
		/*
		 * Freed (a racing free won), already given up, or an actor is
		 * parked receiving (in recv or select): freeing under it
		 * would strand it, or free the memory it is about to lock
		 * again.
		 */
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		return SMARM_ESTATE;
	}
	ch->receiver = false;
	ch->waiter.node = NULL;
	ch->rwait = NULL;
	elems = ch->ring; /* detached: sends fail from now on */
	smarm__ring_init_fixed(&ch->ring, NULL, 0);
	gone = ch->senders == 0;
	if (gone)
		smarm__handle_retire(ch); /* INV-2 */
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	/*
	 * Destructors may touch other channels, and this one: no lock held,
	 * and ch is not read again unless this call frees it (gone: no
	 * reference is left that a destructor could drop).
	 */
	chan_destroy_elems(&elems, esz, efree);
	if (gone)
		smarm__hpool_free(&smarm__chan_pool, ch);
	return 0;
}

int smarm__chan_send(smarm_chan_t *ch, const void *elem)
{
	struct smarm__waiter wt;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	if (!ch->receiver || ch->senders == 0) {
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		return SMARM_ECLOSED;
	}
	if (ch->rwait != NULL) {
		/* Parked in recv on an empty queue: hand over directly. */
		elem_copy(ch->rwait->out, elem, ch->esz);
		/* Release: a receiver woken by its timer may read it unlocked.
		 */
		__atomic_store_n(&ch->rwait->delivered, true, __ATOMIC_RELEASE);
		ch->rwait = NULL;
	} else {
		uint32_t len = smarm__ring_len(&ch->ring);
		if (len == ch->ring.rg_cap) {
			int rc = smarm__ring_grow(&ch->ring, ch->esz, len + 1,
						  16);
			if (rc != 0) {
				smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
				return rc;
			}
		}
		elem_copy(smarm__ring_push_back(&ch->ring, ch->esz), elem,
			  ch->esz);
	}
	wt = ch->waiter;
	ch->waiter.node = NULL;
	smarm__wake_and_unlock(wt, &ch->lock, SMARM__RANK_CHANNEL);
	return 0;
}

/* Under the lock: pop the oldest element into out. */
static void chan_pop(smarm_chan_t *ch, void *out)
{
	elem_copy(out, smarm__ring_pop_front(&ch->ring, ch->esz), ch->esz);
}

/*
 * Take an element without waiting. strict (recv_timeout's zero timeout):
 * another actor waiting to receive is SMARM_ESTATE, as for a blocking
 * receive; try_recv only reports a freed receiver reference.
 */
static int chan_take(smarm_chan_t *ch, void *out, bool strict)
{
	int rc;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	if (!ch->receiver || (strict && ch->waiter.node != NULL)) {
		rc = SMARM_ESTATE;
	} else if (smarm__ring_len(&ch->ring) > 0) {
		chan_pop(ch, out);
		rc = 0;
	} else {
		rc = ch->senders == 0 ? SMARM_ECLOSED : SMARM_EAGAIN;
	}
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return rc;
}

int smarm__chan_try_recv(smarm_chan_t *ch, void *out)
{
	return chan_take(ch, out, false);
}

int smarm__chan_poll(smarm_chan_t *ch, void *out)
{
	return chan_take(ch, out, true);
}

size_t smarm__chan_len(smarm_chan_t *ch)
{
	size_t len;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	len = smarm__ring_len(&ch->ring);
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return len;
}

/* ------------------------------------------------- arming (select too) */

bool smarm__chan_ready(smarm_chan_t *ch)
{
	return smarm__ring_len(&ch->ring) > 0 || ch->senders == 0;
}

int smarm__chan_arm(smarm_chan_t *ch, struct smarm_node *n, uint64_t pid,
		    uint32_t epoch, bool *ready)
{
	int rc = 0;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	if (!ch->receiver) {
		rc = SMARM_ESTATE;
	} else if (ch->waiter.node != NULL && ch->waiter.pid != pid) {
		rc = SMARM_ESTATE; /* a second receiver */
	} else if (smarm__chan_ready(ch)) {
		*ready = true;
	} else {
		*ready = false;
		ch->waiter.node = n;
		ch->waiter.pid = pid;
		ch->waiter.epoch = epoch;
		ch->rwait = NULL;
		__atomic_store_n(&ch->receiving, pid, __ATOMIC_RELAXED);
	}
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return rc;
}

/* Under ch->lock: drop pid's registration and its receiving mark. */
static void chan_unmark(smarm_chan_t *ch, uint64_t pid)
{
	if (ch->waiter.node != NULL && ch->waiter.pid == pid) {
		ch->waiter.node = NULL;
		ch->rwait = NULL;
	}
	if (__atomic_load_n(&ch->receiving, __ATOMIC_RELAXED) == pid)
		__atomic_store_n(&ch->receiving, 0, __ATOMIC_RELEASE);
}

/* pid leaves its wait on ch for good: it will not touch ch after this. */
void smarm__chan_disarm(smarm_chan_t *ch, uint64_t pid)
{
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	chan_unmark(ch, pid);
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
}

/* smarm__chan_disarm, reporting in the same hold whether ch is ready. */
bool smarm__chan_disarm_ready(smarm_chan_t *ch, uint64_t pid)
{
	bool ready;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	chan_unmark(ch, pid);
	ready = smarm__chan_ready(ch) || !ch->receiver;
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return ready;
}

/*
 * Undo hook (wait.h): a stop ends the receiver inside its wait. Drop the
 * registration, and if a sender already handed an element over, it will
 * never be returned, so it is destroyed like any undelivered element.
 */
static void recv_undo(struct smarm__wait *w)
{
	struct smarm__recv_wait *rw = w->wt_arg;
	smarm_chan_t *ch = rw->ch;
	bool delivered;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	chan_unmark(ch, w->wt_pid);
	delivered = rw->delivered;
	rw->delivered = false;
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	if (delivered && ch->efree != NULL) {
		smarm__nopreempt_enter(w->wt_me); /* user code, runtime call */
		ch->efree(rw->out);
		smarm__nopreempt_leave(w->wt_me);
	}
}

/*
 * The receive loop behind recv and recv_timeout (wait.h's loop), for the
 * running actor me. deadline 0: no timeout.
 */
int smarm__chan_recv(struct smarm__slot *me, smarm_chan_t *ch, void *out,
		     uint64_t deadline)
{
	struct smarm__recv_wait rw;
	struct smarm__wait w;

	rw.ch = ch;
	rw.out = out;
	rw.delivered = false;
	smarm__wait_init(&w, me, deadline, recv_undo, &rw);
	for (;;) {
		int rc = 0;
		bool block = false;

		smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
		chan_unmark(ch, w.wt_pid);
		if (rw.delivered) {
			rc = 0; /* handed over while a timer woke us */
		} else if (!ch->receiver) {
			rc = SMARM_ESTATE;
		} else if (smarm__ring_len(&ch->ring) > 0) {
			chan_pop(ch, out);
		} else if (ch->senders == 0) {
			rc = SMARM_ECLOSED;
		} else if (ch->waiter.node != NULL) {
			rc = SMARM_ESTATE; /* another actor is receiving */
		} else if (smarm__wait_expired(&w)) {
			rc = SMARM_ETIMEDOUT;
		} else {
			ch->waiter = smarm__wait_open(&w);
			ch->rwait = &rw;
			__atomic_store_n(&ch->receiving, w.wt_pid,
					 __ATOMIC_RELAXED);
			block = true;
		}
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		if (!block)
			return rc;
		rc = smarm__wait_park(&w);
		if (rc != 0) {
			/* Not parked: a sender may have handed over already. */
			bool got;
			smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
			chan_unmark(ch, w.wt_pid);
			got = rw.delivered;
			smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
			smarm__wait_retire(&w);
			return got ? 0 : rc;
		}
		if (__atomic_load_n(&rw.delivered, __ATOMIC_ACQUIRE)) {
			/*
			 * The sender cleared our registration; the receiving
			 * mark is ours to drop, and we touch ch no more.
			 */
			__atomic_store_n(&ch->receiving, 0, __ATOMIC_RELEASE);
			return 0;
		}
	}
}

/* ------------------------------------------------------- timed send */

static void send_timer_fire(void *ctx, void *payload)
{
	smarm_chan_t *ch = ctx;
	if (smarm__chan_send(ch, payload) != 0 && ch->efree != NULL)
		ch->efree(payload);
	chan_sender_drop(ch, NULL);
}

static void send_timer_drop(void *ctx, void *payload)
{
	smarm_chan_t *ch = ctx;
	if (ch->efree != NULL)
		ch->efree(payload);
	chan_sender_drop(ch, NULL);
}

/*
 * A timed send from an actor of node n. The timer holds a sender
 * reference of its own (counted in timer_senders, so the caller's
 * sender_free cannot give it up), which keeps ch's cell live until the
 * timer fires or is dropped.
 */
int smarm__chan_send_after(struct smarm_node *n, smarm_chan_t *ch,
			   const void *elem, uint64_t delay_ns, uint64_t *id)
{
	int rc = chan_sender_take(ch, true);
	if (rc != 0)
		return rc;
	rc = smarm__timer_call_after(n, delay_ns, send_timer_fire,
				     send_timer_drop, ch, elem, ch->esz, id);
	if (rc != 0)
		chan_sender_drop(ch, NULL);
	return rc;
}
