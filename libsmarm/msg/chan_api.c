/* SPDX-License-Identifier: MIT */
/*
 * chan_api.c - the public entry points for channels (and the timed send,
 * which the header lists under "Time and timers" but which is a channel
 * operation). Each call validates its arguments, checks for an actor
 * where one is required, finds the caller's handle's cell (core/handle.h:
 * no channel handle is SMARM_EINVAL) and calls the smarm__chan_* code in
 * chan.c with the cell and the handle, which it checks under the channel
 * lock (a freed channel is SMARM_ESTATE there); nothing else below this
 * file checks caller input again.
 *
 * Receives work from actors and from plain threads; a worker thread
 * outside any actor gets SMARM_ENOTACTOR.
 *
 * Ownership: elements are copied in and out; the caller keeps its
 * buffers. Locking: none of its own.
 * Invariants: INV-1 a call that returns an argument error (SMARM_EINVAL,
 * SMARM_ENOTACTOR) changed nothing.
 * See: docs/embedding.md (Channels), abi/smarm/smarm.h.
 */
#include "msg.h"

int smarm_chan_alloc(smarm_chan_t **out, size_t elem_size,
		     smarm_elem_free_cb elem_free)
{
	if (out == NULL || elem_size == 0 || elem_size > SMARM__CHAN_MAX_ELEM)
		return SMARM_EINVAL;
	return smarm__chan_alloc(out, elem_size, elem_free);
}

int smarm_chan_sender_dup(smarm_chan_t *h)
{
	smarm_chan_t *ch;
	int rc = smarm__chan_cell(h, &ch);
	return rc != 0 ? rc : smarm__chan_sender_dup(ch, h);
}

int smarm_chan_sender_free(smarm_chan_t *h)
{
	smarm_chan_t *ch;
	int rc = smarm__chan_cell(h, &ch);
	return rc != 0 ? rc : smarm__chan_sender_free(ch, h);
}

int smarm_chan_receiver_free(smarm_chan_t *h)
{
	smarm_chan_t *ch;
	int rc = smarm__chan_cell(h, &ch);
	return rc != 0 ? rc : smarm__chan_receiver_free(ch, h);
}

/* smarm_chan_send, with obs a constant: whether the caller's thread
 * keeps statistics, traces or profiles (smarm__tls_obs). */
static inline __attribute__((always_inline)) int
chan_send(smarm_chan_t *h, const void *elem, bool obs)
{
	smarm_chan_t *ch;
	int rc;
	if (elem == NULL)
		return SMARM_EINVAL;
	rc = smarm__chan_cell(h, &ch);
	if (rc != 0)
		return rc;
	rc = obs ? smarm__chan_send_obs(ch, h, elem)
		 : smarm__chan_send(ch, h, elem);
	/* A sender that never waits is preempted at its slice's end here,
	 * not only in its own code: a loop of sends lets others run. */
	smarm__slice_point();
	return rc;
}

/* The observed send in a frame of its own, so that the other keeps its
 * frame as it was and the observed one has one frame, not two. */
static __attribute__((noinline)) int chan_send_obs(smarm_chan_t *h,
						   const void *elem)
{
	return chan_send(h, elem, true);
}

int smarm_chan_send(smarm_chan_t *h, const void *elem)
{
	/* The one test of the flag on this path: nothing to count, trace
	 * or pay. */
	if (SMARM_UNLIKELY(smarm__tls_obs))
		return chan_send_obs(h, elem);
	return chan_send(h, elem, false);
}

int smarm_chan_try_recv(smarm_chan_t *h, void *out)
{
	smarm_chan_t *ch;
	int rc;
	if (out == NULL)
		return SMARM_EINVAL;
	rc = smarm__chan_cell(h, &ch);
	return rc != 0 ? rc : smarm__chan_try_recv(ch, h, out);
}

/*
 * smarm_chan_len, the default version (SMARM_0.3). It has a versioned
 * name because the symbol has two versions: SMARM_0.1's int64_t form is
 * in compat.c. A static link sees it as plain smarm_chan_len.
 */
SMARM_API int smarm__chan_len_v03(smarm_chan_t *h, size_t *out);
__attribute__((symver("smarm_chan_len@@SMARM_0.3"))) int
smarm__chan_len_v03(smarm_chan_t *h, size_t *out)
{
	smarm_chan_t *ch;
	int rc;
	if (out == NULL)
		return SMARM_EINVAL;
	rc = smarm__chan_cell(h, &ch);
	if (rc != 0)
		return rc;
	return smarm__chan_len(ch, h, out);
}

/*
 * A plain thread may block in a receive; a worker thread outside any
 * actor (a runtime callback) may not: it would stall the node.
 */
static bool plain_thread(void)
{
	return smarm__tls_worker == NULL;
}

/* recv and recv_timeout; deadline from smarm__timeout_deadline. */
static int chan_recv(smarm_chan_t *h, void *out, uint64_t deadline)
{
	struct smarm__slot *me = smarm__current();
	smarm_chan_t *ch;
	int rc;
	if (out == NULL)
		return SMARM_EINVAL;
	rc = smarm__chan_cell(h, &ch);
	if (rc != 0)
		return rc;
	if (me == NULL)
		return plain_thread()
			       ? smarm__chan_recv_thread(ch, h, out, deadline)
			       : SMARM_ENOTACTOR;
	rc = smarm__chan_recv(me, ch, h, out, deadline);
	if (rc == 0)
		smarm__msg_obs_recv(h); /* chan.c's count of receives */
	return rc;
}

int smarm_hibernate(smarm_chan_t *h, void (*fn)(void *), void *arg)
{
	struct smarm__slot *me = smarm__current();
	smarm_chan_t *ch;
	int rc;
	if (fn == NULL)
		return SMARM_EINVAL;
	rc = smarm__chan_cell(h, &ch);
	if (rc != 0)
		return rc;
	if (me == NULL)
		return SMARM_ENOTACTOR;
	return smarm__chan_hibernate(me, ch, h, fn, arg);
}

int smarm_chan_recv(smarm_chan_t *h, void *out)
{
	return chan_recv(h, out, 0);
}

int smarm_chan_recv_timeout(smarm_chan_t *h, void *out, uint64_t timeout_ns)
{
	return chan_recv(h, out, smarm__timeout_deadline(timeout_ns));
}

int smarm_chan_receiver_dup(smarm_chan_t *h)
{
	smarm_chan_t *ch;
	int rc = smarm__chan_cell(h, &ch);
	return rc != 0 ? rc : smarm__chan_receiver_dup(ch, h);
}

int smarm_chan_notify_fd(smarm_chan_t *h, int *fd)
{
	smarm_chan_t *ch;
	int rc;
	if (fd == NULL)
		return SMARM_EINVAL;
	rc = smarm__chan_cell(h, &ch);
	return rc != 0 ? rc : smarm__chan_notify_fd(ch, h, fd);
}

int smarm_chan_send_after(smarm_chan_t *h, const void *elem, uint64_t delay_ns,
			  smarm_timer_t *out)
{
	smarm_chan_t *ch;
	uint64_t id = 0;
	int rc;
	if (smarm__current() == NULL)
		return SMARM_ENOTACTOR;
	if (elem == NULL)
		return SMARM_EINVAL;
	rc = smarm__chan_cell(h, &ch);
	if (rc != 0)
		return rc;
	rc = smarm__chan_send_after(smarm__current_node(), ch, h, elem,
				    delay_ns, &id);
	if (rc == 0 && out != NULL)
		out->id = id;
	return rc;
}
