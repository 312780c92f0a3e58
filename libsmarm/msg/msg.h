/* SPDX-License-Identifier: MIT */
/*
 * msg.h - internal interface of the message layer (channels, select,
 * green mutex). It sits on the core layer and uses only core.h.
 *
 * Ownership, locking and invariants are stated in chan.c and mutex.c.
 * See: docs/architecture.md (Channels, Select, Mutex).
 */
#ifndef SMARM_MSG_H
#define SMARM_MSG_H

#include "../core/core.h"

/*
 * A channel's cell (core/handle.h); smarm_chan_t * values the caller
 * holds are handles to it, decoded by chan_api.c.
 */
struct smarm_chan {
	struct smarm__hcell hdr;  /* handle header: first (decode reads it) */
	smarm__lock_t lock;	  /* CHANNEL rank: guards every field below;
				     kept across tenants, never reset */
	size_t esz;		  /* element size (constant) */
	smarm_elem_free_cb efree; /* destructor (constant) */
	struct smarm__ring ring;  /* queued elements, oldest first; no
				     buffer before the first send */
	uint32_t senders;	  /* sender references (timers hold one) */
	uint32_t timer_senders;	  /* of those, held by pending timed sends */
	bool receiver;		  /* receiver reference still held */
	struct smarm__waiter waiter;	/* parked receiver, node NULL if none */
	struct smarm__recv_wait *rwait; /* its out buffer (recv), or NULL */
	uint64_t receiving; /* atomic: pid of the actor inside a recv or
			       select wait on ch (0: none); set under lock,
			       cleared only by that actor, once it will not
			       touch ch again: receiver_free refuses while
			       it is set (the woken-not-yet-resumed window) */
};

/*
 * A receiver parked in recv on an empty channel: a sender copies the
 * element straight into `out` and marks it delivered, so the woken
 * receiver returns without touching the channel again (Go's direct
 * hand-off). Lives on the receiver's stack for the duration of the wait.
 */
struct smarm__recv_wait {
	smarm_chan_t *ch;
	void *out;
	bool delivered; /* written under ch->lock */
};

/*
 * chan.c: the channel operations behind chan_api.c, which has validated
 * every argument (non-NULL, sizes in range, actor context where needed)
 * and decoded every handle to a live channel (smarm__chan_decode). The
 * free calls also take the caller's handle, to check it again under the
 * lock (of two racing frees, one wins). smarm__chan_alloc writes the new
 * channel's handle.
 */
#define SMARM__CHAN_MAX_ELEM 65536 /* largest element, in bytes */
int smarm__chan_alloc(smarm_chan_t **out, size_t elem_size,
		      smarm_elem_free_cb elem_free);
extern struct smarm__hpool smarm__chan_pool;
int smarm__chan_sender_dup(smarm_chan_t *ch);
int smarm__chan_sender_free(smarm_chan_t *ch, const smarm_chan_t *h);
int smarm__chan_receiver_free(smarm_chan_t *ch, const smarm_chan_t *h);
int smarm__chan_send(smarm_chan_t *ch, const void *elem);
int smarm__chan_try_recv(smarm_chan_t *ch, void *out);
int smarm__chan_poll(smarm_chan_t *ch, void *out);
size_t smarm__chan_len(smarm_chan_t *ch);
int smarm__chan_recv(struct smarm__slot *me, smarm_chan_t *ch, void *out,
		     uint64_t deadline);
int smarm__chan_send_after(struct smarm_node *n, smarm_chan_t *ch,
			   const void *elem, uint64_t delay_ns, uint64_t *id);

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
 * mutex.c: the green mutex behind mutex_api.c (arguments validated, the
 * handle decoded). Each call takes the caller's handle too and checks it
 * again under the mutex's lock, so a call racing a free of the same
 * mutex either runs before it or returns SMARM_ESTATE.
 */
int smarm__mutex_alloc(smarm_mutex_t **out);
int smarm__mutex_decode(const smarm_mutex_t *h, smarm_mutex_t **m);
int smarm__mutex_free(smarm_mutex_t *m, const smarm_mutex_t *h);
int smarm__mutex_lock(smarm_mutex_t *m, const smarm_mutex_t *h,
		      uint64_t timeout_ns);
int smarm__mutex_try_lock(smarm_mutex_t *m, const smarm_mutex_t *h);
int smarm__mutex_unlock(smarm_mutex_t *m, const smarm_mutex_t *h);

/* select (chan.c side): register the current actor as the waiter. */
int smarm__chan_arm(smarm_chan_t *ch, struct smarm_node *n, uint64_t pid,
		    uint32_t epoch, bool *ready);
void smarm__chan_disarm(smarm_chan_t *ch, uint64_t pid);
bool smarm__chan_disarm_ready(smarm_chan_t *ch, uint64_t pid);
bool smarm__chan_ready(smarm_chan_t *ch);

#endif /* SMARM_MSG_H */
