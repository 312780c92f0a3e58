/* SPDX-License-Identifier: MIT */
/*
 * dist/dist_none.c - the calls of abi/smarm/dist.h in a library built
 * without erl_interface (meson option `dist` disabled, or no ei found):
 * the same symbols, so the ABI does not depend on the build, each
 * answering SMARM_ENODIST (or its documented neutral value).
 *
 * Ownership: nothing. Locking: none. Invariants: INV-1 no call here
 * touches its arguments beyond what its documented answer needs.
 * See: docs/distribution.md.
 */
#include "smarm/dist.h"

SMARM_API int smarm_dist_start(smarm_dist_t **out, const char *name,
			       const char *cookie, const char *bind_addr,
			       int port)
{
	(void)out, (void)name, (void)cookie, (void)bind_addr, (void)port;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_stop(smarm_dist_t *d)
{
	return d == NULL ? 0 : SMARM_ENODIST;
}

SMARM_API const char *smarm_dist_name(const smarm_dist_t *d)
{
	(void)d;
	return NULL;
}

SMARM_API int smarm_dist_connect(smarm_dist_t *d, const char *node)
{
	(void)d, (void)node;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_mailbox(smarm_dist_t *d, smarm_chan_t **out)
{
	(void)d, (void)out;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_msg_term(const smarm_dist_msg_t *msg,
				  const void **term, size_t *len)
{
	(void)msg, (void)term, (void)len;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_msg_from(const smarm_dist_msg_t *msg,
				  smarm_dist_pid_t *from)
{
	(void)msg, (void)from;
	return SMARM_ENODIST;
}

SMARM_API void smarm_dist_msg_free(smarm_dist_msg_t *msg)
{
	(void)msg;
}

SMARM_API int smarm_dist_self(smarm_dist_t *d, smarm_pid_t pid,
			      smarm_dist_pid_t *out)
{
	(void)d, (void)pid, (void)out;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_pid_local(smarm_dist_t *d, smarm_dist_pid_t p,
				   smarm_pid_t *out)
{
	(void)d, (void)p, (void)out;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_pid_node(smarm_dist_t *d, smarm_dist_pid_t p,
				  char *buf, size_t cap)
{
	(void)d, (void)p, (void)buf, (void)cap;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_pid_encode(smarm_dist_t *d, smarm_dist_pid_t p,
				    void *buf, size_t cap, size_t *len)
{
	(void)d, (void)p, (void)buf, (void)cap, (void)len;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_pid_decode(smarm_dist_t *d, const void *buf,
				    size_t len, size_t *used,
				    smarm_dist_pid_t *out)
{
	(void)d, (void)buf, (void)len, (void)used, (void)out;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_send(smarm_dist_t *d, smarm_dist_pid_t to,
			      const void *term, size_t len)
{
	(void)d, (void)to, (void)term, (void)len;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_send_name(smarm_dist_t *d, const char *node,
				   const char *name, const void *term,
				   size_t len)
{
	(void)d, (void)node, (void)name, (void)term, (void)len;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_monitor(smarm_dist_t *d, smarm_dist_pid_t target,
				 uint64_t *ref)
{
	(void)d, (void)target, (void)ref;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_demonitor(smarm_dist_t *d, uint64_t ref)
{
	(void)d, (void)ref;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_msg_down(const smarm_dist_msg_t *msg, uint64_t *ref)
{
	(void)msg, (void)ref;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_link(smarm_dist_t *d, smarm_dist_pid_t target)
{
	(void)d, (void)target;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_unlink(smarm_dist_t *d, smarm_dist_pid_t target)
{
	(void)d, (void)target;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_monitor_node(smarm_dist_t *d, const char *node,
				      bool on)
{
	(void)d, (void)node, (void)on;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_call(smarm_dist_t *d, smarm_dist_pid_t to,
			      const void *req, size_t len, uint64_t timeout_ns,
			      smarm_dist_msg_t **reply)
{
	(void)d, (void)to, (void)req, (void)len, (void)timeout_ns;
	if (reply != NULL)
		*reply = NULL;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_call_name(smarm_dist_t *d, const char *node,
				   const char *name, const void *req,
				   size_t len, uint64_t timeout_ns,
				   smarm_dist_msg_t **reply)
{
	(void)d, (void)node, (void)name, (void)req, (void)len, (void)timeout_ns;
	if (reply != NULL)
		*reply = NULL;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_cast(smarm_dist_t *d, smarm_dist_pid_t to,
			      const void *req, size_t len)
{
	(void)d, (void)to, (void)req, (void)len;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_cast_name(smarm_dist_t *d, const char *node,
				   const char *name, const void *req,
				   size_t len)
{
	(void)d, (void)node, (void)name, (void)req, (void)len;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_serve(smarm_dist_t *d, const char *name,
			       const smarm_behaviour_t *b)
{
	(void)d, (void)name, (void)b;
	return SMARM_ENODIST;
}

SMARM_API int smarm_dist_unserve(smarm_dist_t *d, const char *name)
{
	(void)d, (void)name;
	return SMARM_ENODIST;
}
