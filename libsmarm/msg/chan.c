/* SPDX-License-Identifier: MIT */
/*
 * chan.c - unbounded multi-producer multi-consumer channels of fixed-size
 * elements, receivers that are actors or plain threads, the notify fd,
 * timed sends, the runtime's own sender references, the removal of
 * matching queued elements (the OTP layer's monitor channels), the free
 * of an idle channel (a hibernating server's inbox), and the
 * channel side of select (arming and disarming an
 * arm; the select engine itself is io/select.c). The public calls, which
 * validate their arguments and decode the caller's handles, are in
 * chan_api.c. An actor's sends on a handle and its receives are counted
 * in its statistics when the node keeps them and recorded when it traces
 * (smarm__msg_obs here, smarm__msg_obs_recv in chan_api.c's recv: one
 * branch when neither; a traced send's wake records the send, and the
 * receive it hands over: smarm__chan_send_obs, core's
 * smarm__unpark_send); sends the runtime makes on its own references
 * (timers, the OTP layer) are nobody's.
 *
 * Elements live by value in a chunked queue (core/ring.h): segments
 * linked as the backlog grows and recycled as it drains, so a send is
 * one memcpy and no allocation in the steady state, and no send ever
 * moves the backlog (at most it allocates one segment of at most 64 KiB).
 * Receivers that find the channel empty queue up in a FIFO of waiters served
 * oldest first: an intrusive list (rx_head, rx_tail) through records
 * (struct smarm__chan_rx) on the waiters' own stacks, so waiting
 * allocates nothing and a send finds its receiver's record on the
 * cache line it writes the element to:
 *   - an actor in recv opens a wait (core/wait.h), queues (node, pid,
 *     epoch) with its out buffer under the channel lock, and parks;
 *     an actor that gives its parked stack back (SMARM_OPT_STACK_RELEASE,
 *     core/parkstk.c) keeps that record and the buffer a send hands
 *     into in its room, off its stack, and copies the element out as
 *     it returns (recv_off);
 *   - a select arm queues the same kind of registration, without a
 *     buffer (select only reports);
 *   - a plain thread in recv queues its out buffer and blocks on a futex
 *     word in its record (node NULL).
 * A send pops the oldest waiter. If it is in recv and the queue is empty
 * the element is copied straight into its buffer (delivered, Go's direct
 * hand-off); otherwise the element is queued and the waiter is woken to
 * take it. Each send wakes exactly one waiter; the close (last sender
 * reference freed) wakes them all.
 *
 * No wake is lost (INV-3). A woken waiter that leaves without taking an
 * element (a selector, which only reports, or a receiver stopped while
 * parked) passes its wake on to the next waiter if elements are queued;
 * a stopped receiver that had been handed an element puts it back at the
 * front of the queue first. So an element is never queued behind a
 * parked receiver with nobody due to come and take it.
 *
 * Close semantics: when the last sender reference goes the channel is
 * closed; receivers still drain what is queued, then get ECLOSED. When
 * the last receiver reference goes, queued elements are destroyed, the
 * notify fd is closed and sends fail with ECLOSED (the element stays the
 * caller's). The channel memory goes when both kinds of reference are
 * gone: the cell is retired (its handle decodes to SMARM_ESTATE) and goes
 * back to the channel pool (core/handle.h), while the element queue and
 * the waiter FIFO are freed. A pending timed send holds a sender
 * reference of its own (timer_senders), which the caller's sender_free
 * never gives up.
 *
 * Bound: an internal receiver may bound its queue (qlimit, a server's
 * inbox): a send that finds that many elements queued fails with
 * SMARM_EFULL and the element stays the sender's. A hand-off into a
 * parked receiver queues nothing and is never refused; an element put
 * back at the front (recv_undo) was counted before and is not either.
 *
 * Notify fd: an eventfd, made on request and written (under the lock)
 * whenever the channel becomes ready: an element enters an empty queue,
 * or the channel closes. A channel without one pays one predictable
 * branch per send. A channel that is a band of an actor's mailbox
 * (mbox.c) tells that mailbox the same way when an element enters its
 * empty queue; the one branch covers both.
 *
 * Ownership: see above; element bytes are the channel's between a
 * successful send and the receive that copies them out. The waiter
 * records (struct smarm__recv_wait) live on the receivers' stacks (in
 * their rooms for actors that give their stacks back); a
 * sender writes one only under the lock, which the receiver must take
 * before it leaves its wait (or it has been handed over and reads its
 * own record only).
 * Locking: lock (CHANNEL) guards all mutable fields; nothing else is
 * taken under it except a band's mailbox lock (mbox.c), the run queue
 * (waking under it), the futex wake of a thread waiter, and the eventfd
 * write. The free of the channel
 * itself (the pool's HANDLE lock) comes after unlock. Element destructors
 * run with no lock held.
 * Invariants: INV-1 a FIFO entry exists only while its waiter is inside
 * its wait on this channel (core.h INV-5). INV-2 senders == 0 and
 * receivers == 0 => retired (under the lock) and freed. INV-3 if elements
 * are queued and the FIFO is not empty, at least as many woken waiters are
 * still due to lock ch again as there are queued elements; each of them
 * takes an element or passes its wake on (rx_pass_on). Registration
 * happens only on an empty queue.
 * INV-4 the waits on ch that are not over are the queued waiters (the
 * FIFO) and the woken ones that have not yet checked out, which
 * rx_inside counts: a waker that takes a waiter off the FIFO to wake it
 * (rx_take) counts it in, and it counts itself out under the lock as it
 * leaves. A receiver handed an element is not counted, since it
 * normally returns without touching ch again. The last receiver_free
 * refuses while the FIFO is not empty or rx_inside is not 0, so a wait
 * that has not checked out keeps ch's cell live. A receiver handed an
 * element that locks ch once more anyway (its timer or a stop woke it
 * as the hand-off landed) re-checks its handle first: ch may have been
 * freed since, but its cell is type-stable and its lock kept across
 * tenants (core/handle.h), so it finds the cell retired and returns
 * what it was handed, or finds ch live and reads only its own record.
 * INV-5 nfd >= 0 only while receivers > 0.
 * INV-6 timer_senders <= senders. (timer_senders counts every sender
 * reference the runtime holds for itself: pending timed sends, and the
 * OTP layer's monitor, trap and mailbox channels, smarm__chan_sender_hold.)
 * INV-7 closed == (senders == 0 || receivers == 0); neither count grows
 * back from 0.
 * INV-8 qhint == the queue's length at the end of every hold of the
 * lock (a reader without the lock sees a recent length, never a torn one).
 * INV-9 (the send penalty, as the BEAM charges a sender to a long
 * queue) every SMARM__CHAN_BACKLOG-th element of a backlog ends the
 * sending actor's slice (smarm__slice_end), and smarm_chan_send yields
 * there (smarm__slice_point): a producer faster than its consumer hands
 * over the CPU instead of growing the queue, with no counter of its own
 * and at one flag test per send. A send never waits for it.
 * INV-10 (owned elements) with owned words declared (own_on, a server's
 * inbox: an element is owned when the pointer at own_a or own_b is not
 * NULL), n_owned == the number of queued owned elements: counted as each
 * enters the queue and leaves it, while it is hot in cache. When the last
 * receiver goes with none queued, the backlog's segments are freed
 * without reading an element: a server that dies under load with a
 * backlog of casts has nothing to destroy in them, and reading them was
 * most of its exit (sup_shutdown_load: cold lines, 2.4 us per server).
 * Nor are the segments read then: the queue is discarded
 * (core/ring.h QUEUE-7), and the worker sorts its segments later, as
 * ordinary work, after the exit's signals have gone.
 * INV-11 an element handed to a receiver that a stop ends in its wait
 * goes back to the front of the queue, for another receiver; but a
 * band's only receiver is its mailbox's owner (mbox.c INV-3), which is
 * the one ending, so there the element is destroyed at once, as the
 * backlog will be: putting it back reads the backlog's oldest segment
 * (cold under load) and may take one more.
 * INV-12 (an idle channel freed, smarm__chan_free_idle: a hibernating
 * server's inbox) the test that it is idle and the retire of its handle
 * are one hold of the lock, so a send with the handle either came
 * before (and the channel is not idle) or is refused (SMARM_ESTATE);
 * no element is lost.
 * See: docs/architecture/channels.md,
 * docs/architecture/select.md.
 */
#include "msg.h"

#include "../core/parkstk.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* Under the lock, after the queue's length changed: publish it (INV-8). */
static inline void chan_qhint(smarm_chan_t *ch)
{
	atomic_store_explicit(&ch->qhint, smarm__queue_len(&ch->queue),
			      memory_order_relaxed);
}

/*
 * memcpy of an element. Every size of whole words up to 128 bytes is
 * copied inline, as the fixed-size moves the compiler makes of a
 * constant memcpy, with no call into libc: the elements channels carry
 * most are such (a pid or a counter, 8; a reply of the behaviour layer,
 * 40; a server's envelope, 104), and libc's memcpy cost each send and
 * receive of a server's inbox a call, its size dispatch and its return
 * (about 20 instructions, 8% of a cast).
 */
#define ELEM_COPY_CASE(k)                                                      \
	case 8 * (k):                                                          \
		memcpy(dst, src, 8 * (k));                                     \
		break;

static inline void elem_copy(void *dst, const void *src, size_t esz)
{
	switch (esz) {
	case 4:
		memcpy(dst, src, 4);
		break;
		ELEM_COPY_CASE(1)
		ELEM_COPY_CASE(2)
		ELEM_COPY_CASE(3)
		ELEM_COPY_CASE(4)
		ELEM_COPY_CASE(5)
		ELEM_COPY_CASE(6)
		ELEM_COPY_CASE(7)
		ELEM_COPY_CASE(8)
		ELEM_COPY_CASE(9)
		ELEM_COPY_CASE(10)
		ELEM_COPY_CASE(11)
		ELEM_COPY_CASE(12)
		ELEM_COPY_CASE(13)
		ELEM_COPY_CASE(14)
		ELEM_COPY_CASE(15)
		ELEM_COPY_CASE(16)
	default:
		memcpy(dst, src, esz);
	}
}

#undef ELEM_COPY_CASE

/*
 * Destroy the elements of a queue detached from its channel, and free
 * it. It takes the element size and destructor by value: a destructor
 * may drop the channel's last reference, and then the channel is gone.
 */
static void chan_destroy_elems(struct smarm__queue *q, size_t esz,
			       smarm_elem_free_cb efree)
{
	struct smarm__slot *me;
	if (efree == NULL) {
		/* Nothing to read: the segments are released unread, and
		 * may be sorted later (core/ring.h QUEUE-7). */
		smarm__queue_discard(q, esz);
		return;
	}
	if (smarm__queue_len(q) > 0) {
		struct smarm__qcur c = smarm__queue_begin(q);
		void *e;
		/* No async preemption or stop inside a runtime call. */
		me = smarm__current();
		smarm__nopreempt_enter(me);
		while ((e = smarm__queue_next(&c, esz)) != NULL)
			efree(e);
		smarm__nopreempt_leave(me);
	}
	smarm__queue_fini(q);
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
/* A parked or hibernated actor's channel costs its cell: keep it 128. */
_Static_assert(sizeof(struct smarm_chan) <= 128, "a channel fits a 128 B cell");
_Static_assert(offsetof(struct smarm_chan, hdr) == 0,
	       "the handle header is the cell's first word");
_Static_assert(_Alignof(struct smarm__recv_wait) > 1,
	       "bit 0 of a recv record's address is free (rx hand)");

/*
 * The last sender reference went after the receiver's: ch was retired
 * under its lock and nobody reaches it but this call. Its queue was
 * detached by the receiver's free (empty; this frees no elements).
 */
static void chan_free_mem(smarm_chan_t *ch)
{
	chan_destroy_elems(&ch->queue, ch->esz, ch->efree);
	smarm__hpool_free(&smarm__chan_pool, ch);
}

/* ------------------------------------------------- waiters (rx FIFO) */

/*
 * Under the lock: queue a waiter's record at the tail. rx_tail means
 * something only while rx_head is not NULL (a pop that empties the FIFO
 * leaves it stale, one store fewer on the hand-off).
 */
static void rx_push(smarm_chan_t *ch, struct smarm__chan_rx *e)
{
	e->next = NULL;
	if (!SMARM_UNLIKELY(ch->rx_head != NULL)) /* one receiver: common */
		ch->rx_head = e;
	else
		ch->rx_tail->next = e;
	ch->rx_tail = e;
}

/* Under the lock: a waiter a waker took (rx_take) leaves (INV-4). */
static void rx_check_out(smarm_chan_t *ch)
{
	SMARM_ASSERT(ch->rx_inside > 0);
	ch->rx_inside--;
}

/* Under the lock: take the oldest waiter (the FIFO is not empty). */
static struct smarm__chan_rx *rx_pop(smarm_chan_t *ch)
{
	struct smarm__chan_rx *e = ch->rx_head;
	ch->rx_head = e->next; /* rx_tail may go stale (rx_push) */
	return e;
}

/*
 * Under the lock: take the oldest waiter to wake it without handing it
 * anything; it is due to lock ch again and check out (INV-4).
 */
static struct smarm__chan_rx *rx_take(smarm_chan_t *ch)
{
	ch->rx_inside++;
	return rx_pop(ch);
}

/*
 * Under the lock: unlink the record e, keeping FIFO order. false: it is
 * no longer queued, a waker took it (its wake is on the way, or landed).
 */
static bool rx_remove(smarm_chan_t *ch, struct smarm__chan_rx *e)
{
	struct smarm__chan_rx *prev = NULL;
	for (struct smarm__chan_rx *c = ch->rx_head; c != NULL;
	     prev = c, c = c->next) {
		if (c != e)
			continue;
		if (prev != NULL)
			prev->next = c->next;
		else
			ch->rx_head = c->next;
		if (ch->rx_tail == c)
			ch->rx_tail = prev;
		return true;
	}
	return false;
}

/* Under the lock: wake a plain thread blocked in recv (it must lock ch
 * before it leaves, so its record outlives this). */
static void rx_thread_wake(struct smarm__recv_wait *rw)
{
	__atomic_store_n(&rw->futex, 1, __ATOMIC_RELEASE);
	smarm__futex_wake(&rw->futex, 1);
}

/*
 * Under the lock, kept: wake a waiter taken from the FIFO. Its record
 * stays valid: a waiter that was not handed an element locks ch before
 * it leaves its wait.
 */
static void rx_wake_locked(struct smarm__chan_rx *e)
{
	if (e->wt.node != NULL)
		smarm__unpark_at(e->wt.node, e->wt.pid, e->wt.epoch);
	else
		rx_thread_wake(smarm__rx_rw(e));
}

/*
 * Under the lock: a woken waiter leaves without taking an element. If
 * elements are queued, the next waiter gets the wake instead (INV-3).
 */
static void rx_pass_on(smarm_chan_t *ch)
{
	if (smarm__queue_len(&ch->queue) > 0 && ch->rx_head != NULL)
		rx_wake_locked(rx_take(ch));
}

/* Under the lock: ch just became ready; tell the notify fd, if any. */
static void chan_notify(smarm_chan_t *ch)
{
	uint64_t one = 1;
	/*
	 * Cannot block (EFD_NONBLOCK) and cannot overflow in practice (one
	 * count per empty-to-ready change); a failure leaves it readable.
	 */
	ssize_t r = write(ch->nfd, &one, sizeof one);
	(void)r;
}

/*
 * Under the lock, the queue just became non-empty: tell the notify fd
 * and the mailbox ch is a band of (mbox.c INV-2), if any; the common
 * channel has neither and pays one predictable branch.
 */
static inline void chan_became_ready(smarm_chan_t *ch)
{
	if (SMARM_UNLIKELY(ch->nfd >= 0 || ch->mbox != NULL)) {
		if (ch->nfd >= 0)
			chan_notify(ch);
		if (ch->mbox != NULL)
			smarm__mbox_notify(ch->mbox);
	}
}

/* Does elem hold anything of its own (a non-NULL owned word)? */
static inline bool chan_elem_owned(const smarm_chan_t *ch, const void *elem)
{
	void *a, *b;
	memcpy(&a, (const char *)elem + ch->own_a, sizeof a);
	memcpy(&b, (const char *)elem + ch->own_b, sizeof b);
	return a != NULL || b != NULL;
}

/* Under the lock: elem enters the queue (INV-10). */
static inline void chan_owned_in(smarm_chan_t *ch, const void *elem)
{
	if (SMARM_UNLIKELY(ch->own_on) && chan_elem_owned(ch, elem))
		ch->n_owned++;
}

/* Under the lock: elem left the queue; with none counted, nothing to
 * read (a backlog of plain casts). */
static inline void chan_owned_out(smarm_chan_t *ch, const void *elem)
{
	if (SMARM_UNLIKELY(ch->n_owned != 0) && chan_elem_owned(ch, elem))
		ch->n_owned--;
}

/* Under the lock: append a copy of elem to the queue. */
static int chan_push(smarm_chan_t *ch, const void *elem)
{
	uint32_t len = smarm__queue_len(&ch->queue);
	void *slot;
	if (SMARM_UNLIKELY(len >= ch->qlimit))
		return SMARM_EFULL;
	slot = smarm__queue_push_back(&ch->queue, ch->esz, 16);
	if (SMARM_UNLIKELY(slot == NULL))
		return SMARM_ENOMEM;
	elem_copy(slot, elem, ch->esz);
	chan_owned_in(ch, elem);
	chan_qhint(ch);
	if (len == 0)
		chan_became_ready(ch);
	else if (SMARM_UNLIKELY(((len + 1) & (SMARM__CHAN_BACKLOG - 1)) == 0))
		smarm__slice_end(); /* INV-9: the send penalty */
	return 0;
}

/* ----------------------------------------------------- references */

/*
 * Lock ch for a call made with the caller's handle h, decoded before
 * without the lock. false (and unlocked): h no longer names ch, the
 * channel was freed since (and its cell may have a new tenant). Frees
 * retire the cell under this lock, so a true answer holds for the whole
 * hold. Internal callers that hold a reference of their own (a timer)
 * have no handle: they take the lock directly.
 */
static inline bool chan_lock_live(smarm_chan_t *ch, const smarm_chan_t *h)
{
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	if (SMARM_UNLIKELY(!smarm__handle_live(ch, h))) {
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		return false;
	}
	return true;
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
	ch->esz = (uint32_t)elem_size; /* at most SMARM__CHAN_MAX_ELEM */
	ch->efree = elem_free;
	smarm__queue_init(&ch->queue);
	chan_qhint(ch);
	ch->closed = false;
	ch->senders = 1;
	ch->rx_head = NULL;
	ch->rx_tail = NULL;
	ch->timer_senders = 0;
	ch->receivers = 1;
	ch->rx_inside = 0;
	ch->nfd = -1;
	ch->mbox = NULL;
	ch->qlimit = UINT32_MAX;
	ch->own_on = false;
	ch->n_owned = 0;
	smarm__handle_publish(ch, h);
	*out = (smarm_chan_t *)(uintptr_t)h;
	return 0;
}

/*
 * Take a sender reference; timer: one of the runtime's own (a pending
 * timed send, a monitor or trap channel of the OTP layer), which the
 * caller's sender_free never gives up.
 */
static int chan_sender_take(smarm_chan_t *ch, const smarm_chan_t *h, bool timer)
{
	int rc = 0;
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	if (ch->senders == 0) {
		rc = SMARM_ECLOSED;
	} else if (ch->senders == UINT32_MAX) {
		rc = SMARM_ENOMEM;
	} else {
		ch->senders++;
		ch->timer_senders += timer;
	}
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return rc;
}

int smarm__chan_sender_dup(smarm_chan_t *ch, const smarm_chan_t *h)
{
	return chan_sender_take(ch, h, false);
}

/*
 * Give up a sender reference: the caller's (h its handle, checked again
 * under the lock; a timer's references are not the caller's to give
 * up), or a timer's (h NULL).
 */
static int chan_sender_drop(smarm_chan_t *ch, const smarm_chan_t *h)
{
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
		/*
		 * Closed: every waiter must see it. Woken under the lock
		 * (legal from any thread, WAIT-7): there may be many.
		 */
		ch->closed = true;
		while (ch->rx_head != NULL)
			rx_wake_locked(rx_take(ch));
		if (ch->nfd >= 0)
			chan_notify(ch);
	}
	gone = ch->senders == 0 && ch->receivers == 0;
	if (gone)
		smarm__handle_retire(ch); /* INV-2 */
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	if (gone)
		chan_free_mem(ch);
	return 0;
}

int smarm__chan_sender_free(smarm_chan_t *ch, const smarm_chan_t *h)
{
	return chan_sender_drop(ch, h);
}

int smarm__chan_sender_hold(smarm_chan_t *ch, const smarm_chan_t *h)
{
	return chan_sender_take(ch, h, true);
}

void smarm__chan_sender_release(smarm_chan_t *ch)
{
	chan_sender_drop(ch, NULL);
}

int smarm__chan_receiver_dup(smarm_chan_t *ch, const smarm_chan_t *h)
{
	int rc = 0;
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	if (ch->receivers == 0)
		rc = SMARM_ESTATE;
	else if (ch->receivers == UINT32_MAX)
		rc = SMARM_ENOMEM;
	else
		ch->receivers++;
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return rc;
}

int smarm__chan_receiver_free(smarm_chan_t *ch, const smarm_chan_t *h)
{
	struct smarm__queue elems;
	smarm_elem_free_cb efree;
	size_t esz;
	int nfd;
	bool gone;
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE; /* freed (a racing free won) */
	if (ch->receivers == 0 ||
	    (ch->receivers == 1 &&
	     (ch->rx_inside != 0 || ch->rx_head != NULL))) {
		/*
		 * Already given up, or this is the last reference and a
		 * receive or select on ch is in progress (INV-4): freeing
		 * under it would strand it, or retire the cell under it.
		 */
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		return SMARM_ESTATE;
	}
	if (--ch->receivers > 0) {
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		return 0;
	}
	esz = ch->esz;
	efree = ch->efree;
	if (ch->own_on && ch->n_owned == 0)
		efree = NULL; /* INV-10: nothing queued to destroy */
	ch->n_owned = 0;
	ch->closed = true;
	elems = ch->queue; /* detached: sends fail from now on */
	smarm__queue_init(&ch->queue);
	chan_qhint(ch);
	nfd = ch->nfd; /* INV-5: no sender writes it after this hold */
	ch->nfd = -1;
	ch->mbox = NULL; /* its owner is gone */
	gone = ch->senders == 0;
	if (gone)
		smarm__handle_retire(ch); /* INV-2 */
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	if (nfd >= 0)
		close(nfd);
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

/* ----------------------------------------------------- send, take */

/*
 * Under the lock, which it releases: the send of elem when the oldest
 * waiter e is not an actor parked in recv on an empty queue (a select
 * arm, a plain thread, or elements are queued already). Out of line, so
 * that the hand-off in chan_send_locked keeps a light frame.
 */
static __attribute__((noinline)) int
chan_send_other(smarm_chan_t *ch, struct smarm__chan_rx *e, const void *elem)
{
	struct smarm__recv_wait *rw = smarm__rx_rw(e);
	struct smarm__waiter wt = e->wt; /* before a hand-off (see below) */
	if (rw != NULL && smarm__queue_len(&ch->queue) == 0) {
		/*
		 * A plain thread in recv on an empty queue: hand over. It
		 * locks ch before it leaves, so rw outlives this hold; it
		 * takes nothing more, so it is not counted (INV-4).
		 */
		SMARM_ASSERT(wt.node == NULL);
		rx_pop(ch);
		elem_copy(rw->out, elem, ch->esz);
		__atomic_store_n(&rw->delivered, true, __ATOMIC_RELEASE);
	} else {
		int rc = chan_push(ch, elem); /* it wakes and takes one */
		if (rc != 0) {
			smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
			return rc;
		}
		rx_take(ch);
	}
	if (wt.node != NULL) {
		smarm__wake_and_unlock(wt, &ch->lock, SMARM__RANK_CHANNEL);
	} else {
		rx_thread_wake(rw); /* it locks ch before it leaves */
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	}
	return 0;
}

/*
 * chan_send_other for an actor's send on a worker that keeps statistics,
 * traces or profiles (smarm__chan_send_obs): traced, the send is marked on its
 * worker (w->tr_send: the handle) for the wake it makes, whose record
 * is then its SEND too (core/sched.c wake_obs); a send whose wake did
 * not take the mark records its own SEND or count (smarm__msg_obs).
 */
static __attribute__((noinline)) int
chan_send_other_obs(smarm_chan_t *ch, struct smarm__chan_rx *e,
		    const void *elem, const smarm_chan_t *h)
{
	struct smarm__worker *w = smarm__tls_worker;
	bool marked = false, carried = false;
	int rc;
	if (smarm__tracing() && w->cur != NULL && !w->in_finish) {
		SMARM_ASSERT(((uintptr_t)h & 1) == 0);
		w->tr_send = (uintptr_t)h;
		marked = true;
	}
	rc = chan_send_other(ch, e, elem);
	if (marked) {
		carried = w->tr_send == 0; /* a wake took it */
		w->tr_send = 0;
	}
	if (rc == 0) {
		if (!carried)
			smarm__msg_obs_slow(w, true, 1, h);
		else
			smarm__msg_obs_carried(w, true, 1);
	}
	return rc;
}

/*
 * The wake of a hand-off (chan_send_locked) by a send that
 * smarm__chan_send_obs makes, under the lock, which it releases. The receiver
 * on this worker's node: core's smarm__unpark_send, whose wake record
 * is this send's SEND and the receive's RECV (or, if the wake queues
 * nobody, the send's own SEND record or count); on another node, the
 * plain wake and the send's own record.
 */
static inline __attribute__((always_inline)) int
chan_handoff_wake_obs(struct smarm__waiter wt, smarm__lock_t *held,
		      const smarm_chan_t *h)
{
	struct smarm__worker *w = smarm__tls_worker;
	if (wt.node == w->node) {
		smarm__unlock(held, SMARM__RANK_CHANNEL);
		return smarm__unpark_send(wt.node, wt.pid, wt.epoch, h);
	}
	smarm__wake_and_unlock(wt, held, SMARM__RANK_CHANNEL);
	smarm__msg_obs_slow(w, true, 1, h);
	return 0;
}

/*
 * Under the lock, which it releases: send a copy of elem. The common
 * case stays inline: nobody waits (queue it), or the oldest waiter is an
 * actor parked in recv on an empty queue (hand it over, Go's direct
 * hand-off). obs_h: the caller's handle when the send is an actor's on
 * a worker that keeps statistics, traces or profiles (smarm__chan_send_obs),
 * whose records and counts each branch then makes; NULL otherwise (a
 * constant in the other callers, so their copies test nothing).
 */
static inline __attribute__((always_inline)) int
chan_send_locked(smarm_chan_t *ch, const void *elem, const smarm_chan_t *obs_h)
{
	struct smarm__chan_rx *e;
	struct smarm__recv_wait *rw;
	struct smarm__waiter wt;
	if (ch->closed) {
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		return SMARM_ECLOSED;
	}
	e = ch->rx_head;
	if (e == NULL) {
		int rc = chan_push(ch, elem); /* nobody waits */
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		if (obs_h != NULL && rc == 0) /* its own SEND, or count */
			smarm__msg_obs_slow(smarm__tls_worker, true, 1, obs_h);
		return rc;
	}
	if (SMARM_UNLIKELY((e->hand & SMARM__RX_NOT_ACTOR) != 0 ||
			   smarm__queue_len(&ch->queue) != 0))
		return obs_h != NULL ? chan_send_other_obs(ch, e, elem, obs_h)
				     : chan_send_other(ch, e, elem);
	rw = (struct smarm__recv_wait *)e->hand;
	ch->rx_head = e->next; /* rx_pop, with e in hand */
	elem_copy(rw->out, elem, ch->esz);
	/*
	 * Read the registration after the copy (fewer values live across
	 * a memcpy call) and before the hand-off: once delivered is set, a
	 * receiver its timer woke may return, and its record is gone.
	 */
	wt = e->wt;
	/* Release: the receiver reads it without the lock. */
	__atomic_store_n(&rw->delivered, true, __ATOMIC_RELEASE);
	/* It returns without ch: not counted (INV-4). */
	if (obs_h != NULL)
		return chan_handoff_wake_obs(wt, &ch->lock, obs_h);
	smarm__wake_and_unlock(wt, &ch->lock, SMARM__RANK_CHANNEL);
	return 0;
}

/*
 * A send on a worker of a node that keeps statistics, traces or
 * profiles (smarm__tls_obs): Coz's catch_up first when the node
 * profiles, the sender's causal debt paid before its message can wake a
 * receiver (core/causal.h), then the send, whose branches make its
 * SEND record or count (chan_send_locked with its handle): a hand-off's
 * in the wake of the receiver (core/sched.c smarm__unpark_send), with
 * the receive's RECV; any other wake's through the send's mark on its
 * worker (chan_send_other_obs); a send that wakes nobody, its own.
 */
int smarm__chan_send_obs(smarm_chan_t *ch, const smarm_chan_t *h,
			 const void *elem)
{
	if (SMARM_UNLIKELY(smarm__tls_worker->causal))
		smarm__causal_pay_slow();
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	return chan_send_locked(ch, elem, h);
}

int smarm__chan_send(smarm_chan_t *ch, const smarm_chan_t *h, const void *elem)
{
	/* Nothing to count, trace or pay (chan_api.c tested the flag). */
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	return chan_send_locked(ch, elem, NULL);
}

/*
 * A send on a reference the runtime holds (a timer's, the OTP layer's):
 * that reference keeps ch live, so there is no handle to check. With
 * released, the reference also goes back in the same hold if another
 * sender remains (the drop then cannot close the channel); the last one
 * is left to the caller's smarm__chan_sender_release, which may close
 * and free the channel, with no lock held (*released false). Out of
 * line, so that chan_send_locked is inlined into smarm__chan_send alone
 * on the API path.
 */
__attribute__((noinline)) int
smarm__chan_send_held(smarm_chan_t *ch, const void *elem, bool *released)
{
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	if (released != NULL) {
		SMARM_ASSERT(ch->timer_senders > 0 &&
			     ch->senders >= ch->timer_senders);
		*released = ch->senders > 1;
		if (*released) {
			ch->senders--;
			ch->timer_senders--;
		}
	}
	return chan_send_locked(ch, elem, NULL);
}

/* Lock the channel of the caller's handle h: 0, or a status. */
static int chan_lock_handle(const smarm_chan_t *h, smarm_chan_t **out)
{
	smarm_chan_t *ch;
	int rc = smarm__chan_cell(h, &ch);
	if (rc != 0)
		return rc;
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	*out = ch;
	return 0;
}

int smarm__chan_set_limit(const smarm_chan_t *h, uint32_t limit)
{
	smarm_chan_t *ch;
	int rc = chan_lock_handle(h, &ch);
	if (rc != 0)
		return rc;
	ch->qlimit = limit != 0 ? limit : UINT32_MAX;
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return 0;
}

int smarm__chan_set_owned(const smarm_chan_t *h, size_t off_a, size_t off_b)
{
	smarm_chan_t *ch;
	int rc = chan_lock_handle(h, &ch);
	if (rc != 0)
		return rc;
	if (ch->esz < sizeof(void *) || off_a > ch->esz - sizeof(void *) ||
	    off_b > ch->esz - sizeof(void *) || off_a > UINT16_MAX ||
	    off_b > UINT16_MAX) {
		rc = SMARM_EINVAL;
	} else if (smarm__queue_len(&ch->queue) != 0) {
		rc = SMARM_ESTATE; /* INV-10 would not hold */
	} else {
		ch->own_a = (uint16_t)off_a;
		ch->own_b = (uint16_t)off_b;
		ch->own_on = true;
	}
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return rc;
}

int smarm__chan_free_idle(const smarm_chan_t *h, uint32_t limit)
{
	smarm_chan_t *ch;
	int rc = chan_lock_handle(h, &ch);
	if (rc != 0)
		return rc;
	/* INV-12: nothing queued or waiting, the owner's references alone,
	 * no fd, the limit it is made with: a channel made again is the
	 * same to every sender. */
	if (smarm__queue_len(&ch->queue) != 0 || ch->rx_head != NULL ||
	    ch->rx_inside != 0 || ch->senders != 1 || ch->timer_senders != 0 ||
	    ch->receivers != 1 || ch->nfd >= 0 ||
	    ch->qlimit != (limit != 0 ? limit : UINT32_MAX)) {
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		return SMARM_EAGAIN;
	}
	ch->senders = 0;
	ch->receivers = 0;
	ch->closed = true;
	ch->mbox = NULL;
	smarm__handle_retire(ch); /* INV-2: a stale send is refused */
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	chan_free_mem(ch); /* an empty queue: no element to destroy */
	return 0;
}

int smarm__chan_get_limit(const smarm_chan_t *h, uint32_t *limit)
{
	smarm_chan_t *ch;
	int rc = chan_lock_handle(h, &ch);
	if (rc != 0)
		return rc;
	*limit = ch->qlimit != UINT32_MAX ? ch->qlimit : 0;
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return 0;
}

/* Under the lock: pop the oldest element into out. */
static void chan_pop(smarm_chan_t *ch, void *out)
{
	elem_copy(out, smarm__queue_front(&ch->queue, ch->esz), ch->esz);
	smarm__queue_drop_front(&ch->queue);
	chan_owned_out(ch, out);
	chan_qhint(ch);
}

int smarm__chan_try_recv_n(smarm_chan_t *ch, const smarm_chan_t *h, void *out,
			   size_t max, size_t *n)
{
	size_t k = 0;
	int rc = 0;
	*n = 0;
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	if (ch->receivers == 0) {
		rc = SMARM_ESTATE;
	} else {
		/* Each run of the front segment as one block. */
		while (k < max && smarm__queue_len(&ch->queue) > 0) {
			uint32_t r = smarm__queue_front_run(
				&ch->queue, (uint32_t)(max - k));
			char *to = (char *)out + k * ch->esz;
			memcpy(to, smarm__queue_front(&ch->queue, ch->esz),
			       r * ch->esz);
			smarm__queue_drop_front_n(&ch->queue, r);
			for (uint32_t i = 0; i < r; i++)
				chan_owned_out(ch, to + i * ch->esz);
			k += r;
		}
		chan_qhint(ch);
		if (k == 0)
			rc = ch->senders == 0 ? SMARM_ECLOSED : SMARM_EAGAIN;
	}
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	*n = k;
	if (k > 0)
		smarm__msg_obs(false, k, h);
	return rc;
}

int smarm__chan_try_recv(smarm_chan_t *ch, const smarm_chan_t *h, void *out)
{
	size_t n;
	return smarm__chan_try_recv_n(ch, h, out, 1, &n);
}

int smarm__chan_len(smarm_chan_t *ch, const smarm_chan_t *h, size_t *out)
{
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	*out = smarm__queue_len(&ch->queue);
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return 0;
}

int smarm__chan_queued(smarm_chan_t *ch, const smarm_chan_t *h,
		       size_t (*extra)(const void *elem), size_t *len,
		       uint64_t *bytes)
{
	size_t n;
	uint64_t b;
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	n = smarm__queue_len(&ch->queue);
	b = (uint64_t)n * ch->esz;
	if (extra != NULL) {
		struct smarm__qcur c = smarm__queue_begin(&ch->queue);
		const void *e;
		while ((e = smarm__queue_next(&c, ch->esz)) != NULL)
			b += extra(e);
	}
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	*len = n;
	*bytes = b;
	return 0;
}

int smarm__chan_notify_fd(smarm_chan_t *ch, const smarm_chan_t *h, int *fd)
{
	int rc = 0;
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	if (ch->receivers == 0) {
		rc = SMARM_ESTATE;
	} else if (ch->nfd < 0) {
		/* Ready already: the fd starts readable. */
		unsigned init = smarm__chan_ready(ch) ? 1 : 0;
		int e = eventfd(init, EFD_CLOEXEC | EFD_NONBLOCK);
		if (e >= 0)
			ch->nfd = e;
		else
			rc = errno == ENOMEM ? SMARM_ENOMEM : SMARM_ESYSTEM;
	}
	if (rc == 0)
		*fd = ch->nfd;
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return rc;
}

/*
 * Remove every queued element match() accepts, keeping the others in
 * order; the removed ones are destroyed (efree) after unlocking, like
 * any element that will never be received. Returns how many went, or
 * SMARM_ESTATE (h no longer names ch). match runs under the lock: it
 * must only read the element. Out of memory for the removed copies
 * (only with a destructor) leaves the elements that did not fit queued.
 */
int smarm__chan_remove_if(smarm_chan_t *ch, const smarm_chan_t *h,
			  bool (*match)(const void *elem, void *arg), void *arg)
{
	struct smarm__queue gone;
	struct smarm__qcur rd, wr;
	smarm_elem_free_cb efree;
	size_t esz;
	uint32_t kept = 0;
	int removed = 0;
	void *e;
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	esz = ch->esz;
	efree = ch->efree;
	smarm__queue_init(&gone);
	/* Compact in place: wr follows rd over the kept elements. */
	rd = smarm__queue_begin(&ch->queue);
	wr = rd;
	while ((e = smarm__queue_next(&rd, esz)) != NULL) {
		bool drop = match(e, arg);
		if (drop && efree != NULL) {
			void *g = smarm__queue_push_back(&gone, esz, 4);
			if (g == NULL)
				drop = false; /* no room to destroy it later */
			else
				elem_copy(g, e, esz);
		}
		if (drop) {
			chan_owned_out(ch, e);
			removed++;
			continue;
		}
		void *to = smarm__queue_next(&wr, esz);
		if (to != e)
			elem_copy(to, e, esz);
		kept++;
	}
	smarm__queue_truncate(&ch->queue, wr, kept);
	chan_qhint(ch);
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	chan_destroy_elems(&gone, esz, efree);
	return removed;
}

/* ------------------------------------------------- arming (select too) */

bool smarm__chan_ready(smarm_chan_t *ch)
{
	return smarm__queue_len(&ch->queue) > 0 || ch->senders == 0;
}

int smarm__chan_arm(smarm_chan_t *ch, const smarm_chan_t *h,
		    struct smarm__chan_rx *rec, bool *ready)
{
	int rc = 0;
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	if (ch->receivers == 0) {
		rc = SMARM_ESTATE;
	} else if (smarm__chan_ready(ch)) {
		*ready = true;
	} else {
		*ready = false;
		rec->hand = SMARM__RX_NOT_ACTOR; /* select only reports */
		rx_push(ch, rec);
	}
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return rc;
}

/*
 * Under ch->lock: pid's select arm leaves its wait on ch for good. If a
 * waker had taken the arm's entry, the wake is passed on (select only
 * reports: INV-3 must not rest on what its caller does next).
 */
static void arm_leave(smarm_chan_t *ch, struct smarm__chan_rx *rec)
{
	if (!rx_remove(ch, rec)) {
		rx_pass_on(ch);
		rx_check_out(ch);
	}
}

void smarm__chan_disarm(smarm_chan_t *ch, struct smarm__chan_rx *rec)
{
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	arm_leave(ch, rec);
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
}

/* smarm__chan_disarm, reporting in the same hold whether ch is ready. */
bool smarm__chan_disarm_ready(smarm_chan_t *ch, struct smarm__chan_rx *rec)
{
	bool ready;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	arm_leave(ch, rec);
	ready = smarm__chan_ready(ch) || ch->receivers == 0;
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return ready;
}

/* ------------------------------------------------------- receive */

/*
 * Under the lock: put an element that was handed to a receiver which
 * will never return it back at the front of the queue, for the next
 * receiver. false: no room (out of memory), the caller destroys it.
 */
static bool chan_requeue_front(smarm_chan_t *ch, const void *elem)
{
	uint32_t len = smarm__queue_len(&ch->queue);
	void *slot;
	if (ch->receivers == 0 ||
	    (slot = smarm__queue_push_front(&ch->queue, ch->esz, 16)) == NULL)
		return false;
	elem_copy(slot, elem, ch->esz);
	chan_owned_in(ch, elem);
	chan_qhint(ch);
	if (len == 0)
		chan_became_ready(ch);
	rx_pass_on(ch);
	return true;
}

/*
 * Under the lock: the recv record rw (woken, or leaving) checks out. A
 * handed-over element is the receiver's (true): its sender counted it
 * out. Otherwise its entry, or the wake that took it, is dealt with
 * (INV-3, INV-4).
 */
static bool recv_leave(smarm_chan_t *ch, struct smarm__recv_wait *rw,
		       bool will_take)
{
	if (rw->delivered)
		return true;
	if (!rx_remove(ch, &rw->rx)) {
		if (!will_take)
			rx_pass_on(ch);
		rx_check_out(ch);
	}
	return false;
}

/*
 * Lock ch again inside rw's wait. false (unlocked): ch was freed, which
 * is possible only after a sender handed rw an element and counted it
 * out (INV-4), so the element is the receiver's.
 */
static bool recv_relock(struct smarm__recv_wait *rw)
{
	if (chan_lock_live(rw->ch, rw->h))
		return true;
	SMARM_ASSERT(__atomic_load_n(&rw->delivered, __ATOMIC_ACQUIRE));
	return false;
}

/*
 * Undo hook (wait.h): a stop ends the receiver inside its wait. Drop the
 * registration; an element a sender already handed over goes back to the
 * front of the queue for another receiver (destroyed only if that fails),
 * unless ch is a band of a mailbox (INV-11).
 */
static void recv_undo(struct smarm__wait *w)
{
	/* Tagged movable on the stack (core/wait.h WAIT-11). */
	struct smarm__recv_wait *rw = (void *)((uintptr_t)w->wt_arg &
					       ~(uintptr_t)SMARM__WAIT_MOVABLE);
	smarm_chan_t *ch = rw->ch;
	bool lost = true; /* ch gone: nobody left to take it */
	if (recv_relock(rw)) {
		lost = false;
		if (recv_leave(ch, rw, false)) {
			rw->delivered = false;
			lost = ch->mbox != NULL || /* INV-11 */
			       !chan_requeue_front(ch, rw->out);
		}
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	}
	if (lost && rw->efree != NULL) {
		smarm__nopreempt_enter(w->wt_me); /* user code, runtime call */
		rw->efree(rw->out);
		smarm__nopreempt_leave(w->wt_me);
	}
}

/*
 * Under the lock, with nothing handed over: the answer now, or
 * SMARM_EAGAIN: register and wait. The deadline (the actor's wait w, or
 * a plain thread's absolute deadline when w is NULL; 0 none) is looked
 * at last: a queued element or the close wins over SMARM_ETIMEDOUT,
 * and an answer found without waiting reads no clock.
 */
static inline __attribute__((always_inline)) int
recv_check(smarm_chan_t *ch, void *out, const struct smarm__wait *w,
	   uint64_t deadline)
{
	if (ch->receivers == 0)
		return SMARM_ESTATE;
	if (smarm__queue_len(&ch->queue) > 0) {
		chan_pop(ch, out);
		return 0;
	}
	if (ch->senders == 0)
		return SMARM_ECLOSED;
	if (w != NULL ? smarm__wait_expired(w)
		      : deadline != 0 && smarm__clock_ns() >= deadline)
		return SMARM_ETIMEDOUT;
	return SMARM_EAGAIN; /* register and wait */
}

/*
 * Under the lock, ch live: a receive's record, before it registers. It
 * reads the destructor for recv_undo (ch may be gone by then).
 */
static void recv_wait_init(struct smarm__recv_wait *rw, smarm_chan_t *ch,
			   const smarm_chan_t *h, void *out)
{
	rw->ch = ch;
	rw->h = h;
	rw->efree = ch->efree;
	rw->out = out;
	rw->delivered = false;
	rw->rx.hand = (uintptr_t)rw; /* an actor's, until the thread loop */
}

/*
 * A round of the actor's wait did not park (smarm__wait_park failed, rc):
 * leave the wait. A sender may have handed over already, and then the
 * element is the receiver's (0).
 */
static int recv_not_parked(struct smarm__wait *w, struct smarm__recv_wait *rw,
			   int rc)
{
	bool got = true;
	if (recv_relock(rw)) {
		got = recv_leave(rw->ch, rw, false);
		smarm__unlock(&rw->ch->lock, SMARM__RANK_CHANNEL);
	}
	smarm__wait_retire(w);
	return got ? 0 : rc;
}

static int recv_moved(struct smarm__wait *w, struct smarm__recv_wait *rw);

/*
 * The rest of smarm__chan_recv's loop (wait.h's), after its first park
 * returned without a hand-off: rc is the park's status. Woken by the
 * timer, a wake passed on, the close or nothing (WAIT-5): re-check under
 * the lock, and register and park again while there is nothing to take.
 * Out of line: the hand-off path never comes here.
 */
static __attribute__((noinline)) int recv_wait_more(struct smarm__wait *w,
						    struct smarm__recv_wait *rw,
						    int rc, bool off)
{
	smarm_chan_t *ch = rw->ch;
	for (;;) {
		if (SMARM_UNLIKELY(rc == SMARM__EWAIT_MOVE))
			return recv_moved(w, rw);
		if (rc != 0)
			return recv_not_parked(w, rw, rc);
		if (__atomic_load_n(&rw->delivered, __ATOMIC_ACQUIRE))
			return 0; /* the sender took our entry: ch untouched */
		if (!recv_relock(rw))
			return 0; /* freed after a hand-off: ours */
		if (recv_leave(ch, rw, true)) {
			/* Handed over while a timer woke us. */
			smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
			return 0;
		}
		rc = recv_check(ch, rw->out, w, 0);
		if (rc == SMARM_EAGAIN) {
			rw->rx.wt = smarm__wait_open(w);
			rx_push(ch, &rw->rx);
		}
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		if (rc != SMARM_EAGAIN)
			return rc;
		if (SMARM_UNLIKELY(off))
			smarm__pstk_mark(w->wt_me);
		rc = smarm__wait_park(w);
		if (SMARM_UNLIKELY(off) && rc != 0)
			smarm__pstk_unmark(w->wt_me);
	}
}

/* Where recv_off puts the element a sender hands over, in the room. */
#define RECV_OFF_AT ((sizeof(struct smarm__recv_wait) + 15) & ~(size_t)15)

/*
 * A receive's first look at h's channel ch: SMARM_EAGAIN with ch locked
 * (nothing to take: wait), else recv_check's answer (or SMARM_ESTATE,
 * the handle dead) with ch unlocked.
 */
static inline int recv_lock_check(smarm_chan_t *ch, const smarm_chan_t *h,
				  void *out, struct smarm__wait *w)
{
	int rc;
	if (!chan_lock_live(ch, h))
		return SMARM_ESTATE;
	rc = recv_check(ch, out, w, 0);
	if (rc != SMARM_EAGAIN)
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	return rc;
}

/*
 * One round of a receive with its record rw on the stack, ch locked and
 * recv_check having said SMARM_EAGAIN: queue rw, park, and take what
 * came (a hand-off into out returns from the first park), or go on with
 * the loop (recv_wait_more). smarm__chan_recv's, inlined in it, and
 * recv_off's when no room can be had.
 */
__attribute__((always_inline)) static inline int
recv_park(struct smarm__wait *w, struct smarm__recv_wait *rw, smarm_chan_t *ch,
	  const smarm_chan_t *h, void *out)
{
	int rc;
	recv_wait_init(rw, ch, h, out);
	rw->rx.wt = smarm__wait_open(w);
	rx_push(ch, &rw->rx);
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	rc = smarm__wait_park(w);
	if (rc == 0 && __atomic_load_n(&rw->delivered, __ATOMIC_ACQUIRE))
		return 0; /* the sender took our entry: ch untouched */
	return recv_wait_more(w, rw, rc, false);
}

/*
 * smarm__chan_recv's wait for an actor whose parked stack is given back
 * (smarm__pstk_on, core/parkstk.c): the same loop, with its record off the
 * stack, in the actor's room, and the element a sender hands over put
 * there too and copied to out as it returns, so nobody touches the
 * stack while it waits (PSTK-1); its parks are marked as ones that may
 * give the stack back. Entered with ch locked, recv_check having said
 * SMARM_EAGAIN. When no room can be had it waits as smarm__chan_recv
 * does, its record on the stack, a park that gives nothing back. The
 * whole receive from here (recv_moved's tail).
 */
static __attribute__((noinline, cold)) int recv_off(struct smarm__wait *w,
						    smarm_chan_t *ch,
						    const smarm_chan_t *h,
						    void *out)
{
	struct smarm__slot *me = w->wt_me;
	size_t need = RECV_OFF_AT + ch->esz; /* esz: fixed at alloc */
	struct smarm__recv_wait *rw;
	unsigned char *got;
	int rc;
	while ((rw = smarm__pstk_room(me, need)) == NULL) {
		bool grown;
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		grown = smarm__pstk_room_grow(me, need);
		if ((rc = recv_lock_check(ch, h, out, w)) != SMARM_EAGAIN)
			return rc;
		if (!grown) {
			struct smarm__recv_wait rws; /* on the stack */
			w->wt_arg = &rws;
			return recv_park(w, &rws, ch, h, out);
		}
	}
	got = (unsigned char *)rw + RECV_OFF_AT;
	recv_wait_init(rw, ch, h, got);
	w->wt_arg = rw; /* recv_undo's */
	rw->rx.wt = smarm__wait_open(w);
	rx_push(ch, &rw->rx);
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	smarm__pstk_mark(me);
	rc = smarm__wait_park(w);
	if (rc != 0)
		smarm__pstk_unmark(me);
	else if (__atomic_load_n(&rw->delivered, __ATOMIC_ACQUIRE))
		rc = 0; /* handed over into the room: ch untouched */
	else
		rc = recv_wait_more(w, rw, rc, true);
	if (rc == 0)
		elem_copy(out, got, ch->esz);
	return rc;
}

/*
 * The first park of smarm__chan_recv refused (SMARM__EWAIT_MOVE: me
 * gives its parked stack back, core/wait.h WAIT-11): leave that round
 * (a sender may have handed over meanwhile: then the element is in
 * out) and wait again in recv_off. Out of the hand-off path: a receive
 * that is not such an actor's never comes here.
 */
static __attribute__((noinline, cold)) int
recv_moved(struct smarm__wait *w, struct smarm__recv_wait *rw)
{
	smarm_chan_t *ch = rw->ch;
	const smarm_chan_t *h = rw->h;
	void *out = rw->out;
	int rc = recv_not_parked(w, rw, SMARM__EWAIT_MOVE);
	if (rc != SMARM__EWAIT_MOVE)
		return rc; /* 0: handed over into out */
	if ((rc = recv_lock_check(ch, h, out, w)) != SMARM_EAGAIN)
		return rc;
	return recv_off(w, ch, h, out);
}

/*
 * The receive loop behind recv and recv_timeout (wait.h's loop), for the
 * running actor me. deadline 0: no timeout. The first round is written
 * out here: an element already queued is taken with no record set up,
 * and a hand-off into the parked receiver returns from the first park.
 */
int smarm__chan_recv(struct smarm__slot *me, smarm_chan_t *ch,
		     const smarm_chan_t *h, void *out, uint64_t deadline)
{
	struct smarm__recv_wait rw;
	struct smarm__wait w;
	int rc;

	/* Movable (core/wait.h WAIT-11): an actor that gives its parked
	 * stack back is refused this park and waits in recv_off. */
	smarm__wait_init(&w, me, deadline, recv_undo,
			 (char *)&rw + SMARM__WAIT_MOVABLE);
	if ((rc = recv_lock_check(ch, h, out, &w)) != SMARM_EAGAIN)
		return rc;
	return recv_park(&w, &rw, ch, h, out);
}

/*
 * The same loop for a plain thread (no actor, not a worker): it queues
 * like an actor and blocks on the futex word of its record until a send,
 * the close or its deadline (absolute, from smarm__timeout_deadline: 0
 * none, SMARM__DEADLINE_PASSED checks once and never blocks).
 */
int smarm__chan_recv_thread(smarm_chan_t *ch, const smarm_chan_t *h, void *out,
			    uint64_t deadline)
{
	struct smarm__recv_wait rw;

	for (bool parked = false;; parked = true) {
		int rc;

		if (!parked) {
			if (!chan_lock_live(ch, h))
				return SMARM_ESTATE;
			recv_wait_init(&rw, ch, h, out);
			rw.rx.hand |= SMARM__RX_NOT_ACTOR;
		} else {
			if (!recv_relock(&rw))
				return 0; /* freed after a hand-off: ours */
			if (recv_leave(ch, &rw, true)) {
				smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
				return 0;
			}
		}
		rc = recv_check(ch, out, NULL, deadline);
		if (rc == SMARM_EAGAIN) {
			struct smarm__waiter none = { NULL, 0, 0 };
			rw.futex = 0;
			rw.rx.wt = none;
			rx_push(ch, &rw.rx);
		}
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		if (rc != SMARM_EAGAIN)
			return rc;
		/* Block until woken (futex 1) or the deadline; then re-check.
		 */
		while (__atomic_load_n(&rw.futex, __ATOMIC_ACQUIRE) == 0) {
			uint64_t rel = 0;
			if (deadline != 0) {
				uint64_t now = smarm__clock_ns();
				if (now >= deadline)
					break;
				rel = deadline - now;
			}
			smarm__futex_wait(&rw.futex, 0, rel);
		}
	}
}

/* ------------------------------------------------------- timed send */

static void send_timer_fire(void *ctx, void *payload)
{
	smarm_chan_t *ch = ctx;
	if (smarm__chan_send_held(ch, payload, NULL) != 0 && ch->efree != NULL)
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
			   const smarm_chan_t *h, const void *elem,
			   uint64_t delay_ns, uint64_t *id)
{
	int rc = chan_sender_take(ch, h, true);
	if (rc != 0)
		return rc;
	rc = smarm__timer_call_after(n, delay_ns, send_timer_fire,
				     send_timer_drop, ch, elem, ch->esz, id);
	if (rc != 0)
		chan_sender_drop(ch, NULL);
	return rc;
}

/* ------------------------------------------------------- hibernate */

/*
 * A hibernation on ch (smarm_hibernate): the wait and its arm are here,
 * malloc'd, since the actor gives up its stack (core/wait.h WAIT-10).
 * The arm is a select arm's (report only: nothing is handed over), so
 * a send queues its element and wakes the actor, which takes it in fn.
 * Nothing else: the caller's arg rides in the slot (the continuation's
 * argument, core/wait.h), its fn in the wait's undo arg, the record is
 * found from the wait, the cell from the handle, and hand says whether
 * the arm is (or was) in ch's FIFO. At 104 bytes it is a 112 B malloc
 * chunk, a third of what a hibernated actor holds besides its slot and
 * its channel (docs/benchmarks.md).
 */
struct chan_hib {
	struct smarm__wait hb_w;      /* wt_arg: the caller's fn */
	struct smarm__chan_rx hb_rec; /* hand 0: not armed */
	const smarm_chan_t *hb_h;     /* the caller's handle */
};
_Static_assert(sizeof(struct chan_hib) <= 104, "a 112 B malloc chunk");

/* The caller's fn, in the wait's undo arg. */
union hib_fn {
	void (*fn)(void *);
	void *p;
};
_Static_assert(sizeof(union hib_fn) == sizeof(void *), "a code pointer");

static struct chan_hib *hib_of(struct smarm__wait *w)
{
	return (struct chan_hib *)((char *)w - offsetof(struct chan_hib, hb_w));
}

/* hb's cell: the handle was decoded at the call, and cells are type
 * stable (core/handle.h), so its address part names it still. */
static smarm_chan_t *hib_chan(const struct chan_hib *hb)
{
	return (smarm_chan_t *)((uintptr_t)hb->hb_h & SMARM__HANDLE_ADDR_MASK);
}

static int hib_wait(struct chan_hib *hb, void *arg);

/* Leave ch; true: ready (an element, closed, or no receivers). */
static bool hib_leave(struct chan_hib *hb)
{
	bool ready;
	if (hb->hb_rec.hand == 0)
		return true; /* it was ready at the arm */
	ready = smarm__chan_disarm_ready(hib_chan(hb), &hb->hb_rec);
	hb->hb_rec.hand = 0;
	return ready;
}

/* Undo hook (core/wait.h): a stop ends the actor in its hibernation. */
static void hib_undo(struct smarm__wait *w)
{
	struct chan_hib *hb = hib_of(w);
	(void)hib_leave(hb);
	free(hb);
}

/* The next run of a hibernated actor, on a fresh stack: fn(arg) once ch
 * is ready, else hibernate again (woken is not ready, WAIT-5). */
static void hib_resume(void *arg)
{
	struct chan_hib *hb = hib_of(smarm__wait_resumed());
	union hib_fn c = { .p = hb->hb_w.wt_arg };
	int rc;
	if (!hib_leave(hb)) {
		rc = hib_wait(hb, arg); /* returns only on an error */
		smarm_actor_crash(rc);
	}
	free(hb);
	c.fn(arg);
}

/* One round: open, arm, hibernate. Returns only on an error, with hb
 * freed and nothing registered. */
static int hib_wait(struct chan_hib *hb, void *arg)
{
	bool ready = false;
	int rc;
	hb->hb_rec.wt = smarm__wait_open(&hb->hb_w); /* WAIT-1 */
	hb->hb_rec.hand = 0;
	rc = smarm__chan_arm(hib_chan(hb), hb->hb_h, &hb->hb_rec, &ready);
	if (rc == 0) {
		if (ready) /* go on at once, from a fresh stack */
			smarm__wait_self_wake(&hb->hb_w);
		rc = smarm__wait_hibernate(&hb->hb_w, hib_resume, arg);
		(void)hib_leave(hb);
	}
	smarm__wait_retire(&hb->hb_w); /* WAIT-6 */
	free(hb);
	return rc;
}

int smarm__chan_hibernate(struct smarm__slot *me, smarm_chan_t *ch,
			  const smarm_chan_t *h, void (*fn)(void *), void *arg)
{
	union hib_fn c = { .fn = fn };
	struct smarm__wait w;
	struct chan_hib *hb;
	/* A safe point first, before anything is allocated. */
	smarm__wait_init(&w, me, 0, hib_undo, c.p);
	hb = malloc(sizeof *hb);
	if (hb == NULL)
		return SMARM_ENOMEM;
	(void)ch; /* hib_chan finds it from h */
	SMARM_ASSERT(hib_chan(&(struct chan_hib){ .hb_h = h }) == ch);
	hb->hb_w = w;
	hb->hb_h = h;
	return hib_wait(hb, arg);
}
