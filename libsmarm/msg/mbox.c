/* SPDX-License-Identifier: MIT */
/*
 * mbox.c - an actor's mailbox: the bands it receives from, taken in
 * priority order, and the one waiter they share.
 *
 * A band is a channel of chan.c that its actor alone receives from (a
 * behaviour's signals, timer fires, requests). Each keeps its own
 * elements, lock and send path, so senders to different bands never
 * meet; what the bands share is their reader's wait. The owner parks on
 * the mailbox, not on a band: a send that makes a band non-empty wakes
 * the one registration the mailbox holds (chan.c calls
 * smarm__mbox_notify under the band's lock, as it writes a notify fd).
 * So an actor with several bands waits with one registration and one
 * wake, and nothing is set up per message (select rebuilds its arms on
 * every round).
 *
 * The owner's wait (the loop of core/wait.h):
 *   scan the bands' length hints (chan.c INV-8), highest band first;
 *   lock mb; open a round; store the registration; unlock;
 *   scan again; park unless a band is ready.
 * A sender stores its band's hint under the band's lock, then locks mb
 * to take the registration. Either it finds the registration (and wakes
 * it), or its hold of mb came first and the owner's hold after it makes
 * the hint visible to the second scan: no wake is lost (INV-2).
 *
 * The owner may hibernate instead (smarm__mbox_hibernate): the same
 * round, with its wait in the mailbox (mb_hw), since the owner's stack
 * goes back to the pool; it goes on at the caller's continuation with
 * its registration taken back, as after a park.
 *
 * Ownership: a struct smarm__mbox lives in its owner's state (the
 * behaviour's server); the owner holds a receiver reference of every
 * band, and detaches them all (smarm__mbox_detach) before it frees
 * either. A band points at its mailbox only while attached.
 * Locking: mb_lock (MBOX rank: under a band's CHANNEL lock, above the
 * run queue's, which a wake takes) guards mb_wt; the band table is the
 * owner's, but for a band its owner detached to hibernate without it
 * (smarm__mbox_detach_band), which another thread may attach again
 * under a lock of the owner's choosing (a server's inbox: gen_server.c
 * INV-7) while the owner scans (INV-4).
 * Invariants: INV-1 mb_wt is set only while its owner is inside
 * smarm__mbox_wait (core.h INV-5), and each registration is woken at
 * most once. INV-2 a band made non-empty after the owner's last scan
 * wakes the owner's open round, or the owner's second scan sees it.
 * INV-3 only the owner takes elements from a band, so a band its scan
 * saw non-empty still holds them when it takes them.
 * INV-4 a band slot is written with an atomic store and scanned with
 * an atomic load: a band attached by a sender while the owner waits is
 * stored before that sender's first send, whose wake (mb_lock) or the
 * owner's second scan after its own hold of mb_lock sees it (INV-2).
 * See: docs/architecture/behaviours.md (The mailbox).
 */
#include "msg.h"

void smarm__mbox_init(struct smarm__mbox *mb)
{
	*mb = (struct smarm__mbox){ .mb_wt.node = NULL };
}

int smarm__mbox_attach(struct smarm__mbox *mb, unsigned band, smarm_chan_t *h)
{
	smarm_chan_t *ch;
	int rc;

	if (band >= SMARM__MBOX_BANDS || mb->mb_band[band] != NULL)
		return SMARM_EINVAL;
	rc = smarm__chan_decode(h, &ch);
	if (rc != 0)
		return rc;
	smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
	ch->mbox = mb;
	smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
	/* INV-4: the owner's scan may read it meanwhile. */
	__atomic_store_n(&mb->mb_band[band], ch, __ATOMIC_RELEASE);
	if (band + 1 > mb->mb_n)
		mb->mb_n = band + 1;
	return 0;
}

void smarm__mbox_detach_band(struct smarm__mbox *mb, unsigned band)
{
	SMARM_ASSERT(band < mb->mb_n);
	__atomic_store_n(&mb->mb_band[band], NULL, __ATOMIC_RELAXED);
}

void smarm__mbox_detach(struct smarm__mbox *mb)
{
	for (unsigned i = 0; i < mb->mb_n; i++) {
		smarm_chan_t *ch = mb->mb_band[i];
		if (ch == NULL)
			continue;
		smarm__lock(&ch->lock, SMARM__RANK_CHANNEL);
		ch->mbox = NULL;
		smarm__unlock(&ch->lock, SMARM__RANK_CHANNEL);
		mb->mb_band[i] = NULL;
	}
	mb->mb_n = 0;
}

int smarm__mbox_ready(const struct smarm__mbox *mb)
{
	for (unsigned i = 0; i < mb->mb_n; i++) {
		/* INV-4: a band attached by another thread (acquire: a
		 * plain load on x86). */
		const smarm_chan_t *ch =
			__atomic_load_n(&mb->mb_band[i], __ATOMIC_ACQUIRE);
		if (ch != NULL &&
		    atomic_load_explicit(&ch->qhint, memory_order_relaxed) != 0)
			return (int)i;
	}
	return -1;
}

void smarm__mbox_notify(struct smarm__mbox *mb)
{
	struct smarm__waiter wt;
	smarm__lock(&mb->mb_lock, SMARM__RANK_MBOX);
	wt = mb->mb_wt;
	mb->mb_wt.node = NULL; /* INV-1: one wake */
	smarm__wake_and_unlock(wt, &mb->mb_lock, SMARM__RANK_MBOX);
}

/* Take the owner's registration back (it leaves its wait). */
static void mbox_unregister(struct smarm__mbox *mb)
{
	smarm__lock(&mb->mb_lock, SMARM__RANK_MBOX);
	mb->mb_wt.node = NULL;
	smarm__unlock(&mb->mb_lock, SMARM__RANK_MBOX);
}

/* Undo hook (core/wait.h): a stop ends the owner inside its wait. */
static void mbox_undo(struct smarm__wait *w)
{
	mbox_unregister(w->wt_arg);
}

int smarm__mbox_wait(struct smarm__slot *me, struct smarm__mbox *mb,
		     uint64_t timeout_ns, unsigned *band)
{
	struct smarm__wait w;
	int i, rc;

	smarm__wait_init(&w, me, smarm__timeout_deadline(timeout_ns), mbox_undo,
			 mb);
	for (;;) {
		if ((i = smarm__mbox_ready(mb)) >= 0) {
			*band = (unsigned)i;
			return 0;
		}
		if (smarm__wait_expired(&w))
			return SMARM_ETIMEDOUT;
		smarm__lock(&mb->mb_lock, SMARM__RANK_MBOX);
		mb->mb_wt = smarm__wait_open(&w);
		smarm__unlock(&mb->mb_lock, SMARM__RANK_MBOX);
		/* INV-2: a send between the first scan and the open. */
		if (smarm__mbox_ready(mb) >= 0) {
			mbox_unregister(mb);
			smarm__wait_retire(&w); /* WAIT-6 */
			continue;
		}
		rc = smarm__wait_park(&w);
		mbox_unregister(mb); /* woken: a band, the timer, ... */
		if (rc != 0) {
			smarm__wait_retire(&w); /* it did not park */
			return rc;
		}
	}
}

/* The owner's next run after a hibernation (core/wait.h WAIT-10). */
static void mbox_resume(void *arg)
{
	struct smarm__mbox *mb = arg;
	(void)smarm__wait_resumed(); /* &mb->mb_hw */
	mbox_unregister(mb);	     /* woken: a band, the timer, ... */
	mb->mb_hfn(mb);
}

int smarm__mbox_hibernate(struct smarm__slot *me, struct smarm__mbox *mb,
			  uint64_t timeout_ns,
			  void (*fn)(struct smarm__mbox *mb))
{
	struct smarm__wait *w = &mb->mb_hw;
	int rc;

	smarm__wait_init(w, me, smarm__timeout_deadline(timeout_ns), mbox_undo,
			 mb);
	if (smarm__mbox_ready(mb) >= 0)
		return 0;
	if (smarm__wait_expired(w))
		return SMARM_ETIMEDOUT;
	mb->mb_hfn = fn;
	smarm__lock(&mb->mb_lock, SMARM__RANK_MBOX);
	mb->mb_wt = smarm__wait_open(w);
	smarm__unlock(&mb->mb_lock, SMARM__RANK_MBOX);
	/* INV-2: a send between the first scan and the open. */
	if (smarm__mbox_ready(mb) >= 0) {
		mbox_unregister(mb);
		smarm__wait_retire(w); /* WAIT-6 */
		return 0;
	}
	rc = smarm__wait_hibernate(w, mbox_resume, mb);
	mbox_unregister(mb); /* it did not hibernate */
	smarm__wait_retire(w);
	return rc;
}

bool smarm__mbox_timed_out(const struct smarm__mbox *mb)
{
	return smarm__wait_expired(&mb->mb_hw) && smarm__mbox_ready(mb) < 0;
}
