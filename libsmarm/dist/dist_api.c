/* SPDX-License-Identifier: MIT */
/*
 * dist/dist_api.c - the public calls of abi/smarm/dist.h: they check
 * every argument, resolve pids and names, and call the layer's code
 * (conn.c, epmd.c, handshake.c). Starting and stopping a distribution
 * live here: the listening socket, the epmd registration and the accept
 * loop's actor are made in smarm_dist_start and undone, in the reverse
 * order, by smarm_dist_stop.
 *
 * Ownership: smarm_dist_start allocates the handle, which the caller
 * owns until smarm_dist_stop frees it.
 * Locking: as dist.h.
 * Invariants:
 *   INV-1 a call that returns SMARM_EINVAL (or another argument error)
 *         has changed nothing.
 *   INV-2 smarm_dist_stop frees d only after every actor of the layer
 *         reported its end (d_actors == 0) and no connection is left.
 * See: docs/distribution.md.
 */
#include "dist.h"

#include "../behaviour/bhv.h"

#include <ei.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int smarm__dist_split(const char *node, char *alive, size_t cap,
		      const char **host)
{
	size_t len = strnlen(node, SMARM_DIST_NODE_MAX + 1);
	if (len == 0 || len > SMARM_DIST_NODE_MAX)
		return SMARM_EINVAL;
	const char *at = strchr(node, '@');
	if (at == NULL || at == node || at[1] == '\0' ||
	    strchr(at + 1, '@') != NULL || (size_t)(at - node) >= cap)
		return SMARM_EINVAL;
	for (const char *p = node; p < at; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return SMARM_EINVAL;
	for (const char *p = at + 1; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ||
		      *p == '_'))
			return SMARM_EINVAL;
	memcpy(alive, node, (size_t)(at - node));
	alive[at - node] = '\0';
	*host = at + 1;
	return 0;
}

/* $HOME/.erlang.cookie, checked as erl checks it. */
static int read_cookie_file(char *out, size_t cap)
{
	const char *home = getenv("HOME");
	char path[4096];
	if (home == NULL || snprintf(path, sizeof path, "%s/.erlang.cookie",
				     home) >= (int)sizeof path)
		return SMARM_ECOOKIE;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return SMARM_ECOOKIE;
	struct stat st;
	ssize_t n = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_uid == geteuid() && (st.st_mode & 077) == 0)
		n = read(fd, out, cap - 1);
	close(fd);
	if (n <= 0)
		return SMARM_ECOOKIE;
	out[n] = '\0';
	/* erl takes the first line, without trailing white space. */
	out[strcspn(out, "\r\n")] = '\0';
	size_t len = strlen(out);
	while (len > 0 && (out[len - 1] == ' ' || out[len - 1] == '\t'))
		out[--len] = '\0';
	return len > 0 ? 0 : SMARM_ECOOKIE;
}

static pthread_once_t ei_once = PTHREAD_ONCE_INIT;

static void ei_setup(void)
{
	(void)ei_init(); /* process-wide, once: erl_interface's own state */
}

static int listen_on(const char *bind_addr, int port, int *out, int *bound)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	if (bind_addr == NULL)
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, bind_addr, &sa.sin_addr) != 1)
		return SMARM_EINVAL;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno == ENOMEM || errno == ENOBUFS ? SMARM_ENOMEM
							   : SMARM_ESYSTEM;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	socklen_t sl = sizeof sa;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
		close(fd);
		return SMARM_ESYSTEM;
	}
	*out = fd;
	*bound = ntohs(sa.sin_port);
	return 0;
}

/* The watcher's channel's elements never taken: a served call's answer
 * posted after the watcher's last look is dropped (gen.c INV-2). */
static void watch_elem_free(void *elem)
{
	const smarm_signal_t *s = elem;
	if (s->kind == WATCH_ANSWER)
		smarm__dist_gen_drop((void *)s->reason);
}

static void dist_free(smarm_dist_t *d)
{
	/* Answers from now on are dropped; those queued go with the
	 * watcher's channel (watch_elem_free). */
	smarm__dist_gate_shut(d);
	if (d->d_done != NULL) {
		smarm_chan_sender_free(d->d_done);
		smarm_chan_receiver_free(d->d_done);
	}
	if (d->d_watch_ch != NULL) {
		smarm_chan_sender_free(d->d_watch_ch);
		smarm_chan_receiver_free(d->d_watch_ch);
	}
	smarm__dist_rmon_free_all(d);
	while (d->d_wq != NULL) { /* deferred, the watcher never ran */
		struct dist_watch_req *q = d->d_wq;
		d->d_wq = q->q_next;
		free(q);
	}
	free(d->d_nodes);
	free(d->d_pids);
	free(d->d_phash);
	free(d);
}

/* Wait until at most `left` of the layer's actors run (INV-2). */
static void wait_actors(smarm_dist_t *d, int left)
{
	for (;;) {
		smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
		int n = d->d_actors;
		smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
		if (n <= left)
			return;
		int one;
		/* An accepted connection still in its handshake is not in
		 * the table: it ends by its own deadline. Meanwhile close
		 * anything listed since. */
		if (smarm_chan_recv_timeout(d->d_done, &one, 1000000000ull) !=
		    0)
			smarm__dist_close_all(d);
	}
}

/* Stop the watcher, the last of the layer's actors, and wait for it. */
static void watcher_stop_wait(smarm_dist_t *d)
{
	struct dist_watch_req *q = calloc(1, sizeof *q);
	while (q == NULL) { /* it must hear it: retry */
		smarm_actor_sleep(1000000);
		q = calloc(1, sizeof *q);
	}
	q->q_op = DW_STOP;
	(void)smarm__dist_watch_post(d, q);
	wait_actors(d, 0);
}

SMARM_API int smarm_dist_start(smarm_dist_t **out, const char *name,
			       const char *cookie, const char *bind_addr,
			       int port)
{
	char alive[SMARM_DIST_NODE_MAX + 1];
	const char *host;
	struct in_addr ia;
	if (out == NULL || name == NULL ||
	    smarm__dist_split(name, alive, sizeof alive, &host) != 0 ||
	    port < 0 || port > 65535 ||
	    (bind_addr != NULL && inet_pton(AF_INET, bind_addr, &ia) != 1))
		return SMARM_EINVAL;
	if (cookie != NULL) {
		size_t cl = strnlen(cookie, SMARM_DIST_COOKIE_MAX + 1);
		if (cl == 0 || cl > SMARM_DIST_COOKIE_MAX)
			return SMARM_EINVAL;
	}
	smarm_node_t *node = smarm_node_current();
	if (node == NULL || smarm_actor_self().id == 0)
		return SMARM_ENOTACTOR;
	if (smarm__dist_msgtype() == NULL)
		return SMARM_ENOMEM;
	pthread_once(&ei_once, ei_setup);

	smarm_dist_t *d = calloc(1, sizeof *d);
	if (d == NULL)
		return SMARM_ENOMEM;
	d->d_node = node;
	d->d_lfd = d->d_epmd_fd = -1;
	d->d_tick_ns = DIST_TICK_NS;
	const char *tick = getenv(DIST_TICK_ENV);
	if (tick != NULL && atol(tick) > 0 && atol(tick) < 3600000)
		d->d_tick_ns = (uint64_t)atol(tick) * 1000000ull;
	snprintf(d->d_name, sizeof d->d_name, "%s", name);
	int rc;
	if (cookie != NULL)
		snprintf(d->d_cookie, sizeof d->d_cookie, "%s", cookie);
	else if ((rc = read_cookie_file(d->d_cookie, sizeof d->d_cookie)) != 0)
		goto fail;
	if ((rc = smarm_chan_alloc(&d->d_done, sizeof(int), NULL)) != 0 ||
	    (rc = smarm_chan_alloc(&d->d_watch_ch, sizeof(smarm_signal_t),
				   watch_elem_free)) != 0 ||
	    (rc = smarm__dist_gate_open(d)) != 0)
		goto fail;
	int bound = 0;
	if ((rc = listen_on(bind_addr, port, &d->d_lfd, &bound)) != 0)
		goto fail;
	if ((rc = smarm__epmd_register(alive, bound, &d->d_epmd_fd,
				       &d->d_creation)) != 0)
		goto fail;
	/* The watcher first: the acceptor's connections post to it. */
	d->d_actors = 1;
	if ((rc = smarm_actor_spawn(NULL, smarm__dist_watcher, d, NULL)) != 0) {
		d->d_actors = 0;
		goto fail;
	}
	d->d_actors = 2;
	if ((rc = smarm_actor_spawn(NULL, smarm__dist_acceptor, d, NULL)) !=
	    0) {
		d->d_actors = 1;
		watcher_stop_wait(d);
		goto fail;
	}
	smarm__dist_log(d, SMARM_LOG_INFO,
			"dist: node %s up on port %d (creation %u)", d->d_name,
			bound, d->d_creation);
	*out = d;
	return 0;
fail:
	if (d->d_epmd_fd >= 0)
		close(d->d_epmd_fd);
	if (d->d_lfd >= 0)
		close(d->d_lfd);
	dist_free(d);
	return rc == SMARM_EATCAPACITY ? SMARM_ENOMEM : rc;
}

SMARM_API int smarm_dist_stop(smarm_dist_t *d)
{
	if (d == NULL)
		return 0;
	if (smarm_actor_self().id == 0)
		return SMARM_ENOTACTOR;
	if (smarm_node_current() != d->d_node)
		return SMARM_ESTATE;
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	bool again = d->d_stopping;
	d->d_stopping = true;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	if (again)
		return SMARM_ESTATE;
	/* The accept loop wakes with an error on a shut-down listener
	 * (Linux), sees d_stopping and ends; the readers wake on their
	 * shut-down sockets. Then wait for all of them (INV-2). */
	shutdown(d->d_lfd, SHUT_RDWR);
	smarm__dist_close_all(d);
	/* Every reader and the acceptor first (they post to the watcher),
	 * then the watcher, which gives links across the distribution
	 * their noconnection. */
	wait_actors(d, 1);
	watcher_stop_wait(d);
	close(d->d_epmd_fd); /* epmd forgets the name */
	close(d->d_lfd);
	smarm__dist_log(d, SMARM_LOG_INFO, "dist: node %s down", d->d_name);
	dist_free(d);
	return 0;
}

SMARM_API const char *smarm_dist_name(const smarm_dist_t *d)
{
	return d != NULL ? d->d_name : NULL;
}

static int check_node(const char *node)
{
	char alive[SMARM_DIST_NODE_MAX + 1];
	const char *host;
	return node != NULL && smarm__dist_split(node, alive, sizeof alive,
						 &host) == 0
		       ? 0
		       : SMARM_EINVAL;
}

SMARM_API int smarm_dist_connect(smarm_dist_t *d, const char *node)
{
	if (d == NULL || check_node(node) != 0 || strcmp(node, d->d_name) == 0)
		return SMARM_EINVAL;
	if (smarm_actor_self().id == 0)
		return SMARM_ENOTACTOR;
	return smarm__dist_connect(d, node);
}

SMARM_API int smarm_dist_mailbox(smarm_dist_t *d, smarm_chan_t **out)
{
	if (d == NULL || out == NULL)
		return SMARM_EINVAL;
	if (smarm_actor_self().id == 0)
		return SMARM_ENOTACTOR;
	const smarm_msgtype_t *t = smarm__dist_msgtype();
	if (t == NULL)
		return SMARM_ENOMEM;
	smarm_chan_t *ch = NULL;
	int rc = smarm_chan_alloc(&ch, sizeof(struct smarm_dist_msg *),
				  smarm__dist_msg_elem_free());
	if (rc != 0)
		return rc;
	rc = smarm_mailbox_publish(t, ch);
	if (rc != 0) {
		smarm_chan_sender_free(ch);
		smarm_chan_receiver_free(ch);
		return rc == SMARM_ENOTACTOR ? rc : SMARM_ENOMEM;
	}
	*out = ch;
	return 0;
}

SMARM_API int smarm_dist_msg_term(const smarm_dist_msg_t *msg,
				  const void **term, size_t *len)
{
	if (msg == NULL || term == NULL || len == NULL)
		return SMARM_EINVAL;
	*term = msg->m_term;
	*len = msg->m_len;
	return 0;
}

SMARM_API int smarm_dist_msg_from(const smarm_dist_msg_t *msg,
				  smarm_dist_pid_t *from)
{
	if (msg == NULL || from == NULL)
		return SMARM_EINVAL;
	*from = msg->m_from;
	return msg->m_from.id != 0 ? 0 : SMARM_ENOENT;
}

SMARM_API void smarm_dist_msg_free(smarm_dist_msg_t *msg)
{
	free(msg);
}

void smarm__dist_local_epid(smarm_dist_t *d, smarm_pid_t pid,
			    struct dist_epid *e)
{
	memcpy(e->node, d->d_name, sizeof e->node);
	e->num = (uint32_t)pid.id;
	e->serial = (uint32_t)(pid.id >> 32);
	e->creation = d->d_creation;
}

SMARM_API int smarm_dist_self(smarm_dist_t *d, smarm_pid_t pid,
			      smarm_dist_pid_t *out)
{
	if (d == NULL || out == NULL || pid.id == 0)
		return SMARM_EINVAL;
	struct dist_epid e;
	smarm__dist_local_epid(d, pid, &e);
	return smarm__dist_intern(d, &e, out);
}

SMARM_API int smarm_dist_pid_local(smarm_dist_t *d, smarm_dist_pid_t p,
				   smarm_pid_t *out)
{
	struct dist_epid e;
	if (d == NULL || out == NULL || smarm__dist_pid_get(d, p, &e) != 0)
		return SMARM_EINVAL;
	if (strcmp(e.node, d->d_name) != 0 || e.creation != d->d_creation)
		return SMARM_ENOENT;
	out->id = (uint64_t)e.serial << 32 | e.num;
	return 0;
}

SMARM_API int smarm_dist_pid_node(smarm_dist_t *d, smarm_dist_pid_t p,
				  char *buf, size_t cap)
{
	struct dist_epid e;
	if (d == NULL || buf == NULL || smarm__dist_pid_get(d, p, &e) != 0)
		return SMARM_EINVAL;
	size_t n = strlen(e.node);
	if (n + 1 > cap)
		return SMARM_ETOOBIG;
	memcpy(buf, e.node, n + 1);
	return 0;
}

SMARM_API int smarm_dist_pid_encode(smarm_dist_t *d, smarm_dist_pid_t p,
				    void *buf, size_t cap, size_t *len)
{
	struct dist_epid e;
	if (d == NULL || len == NULL || (buf == NULL && cap > 0) ||
	    smarm__dist_pid_get(d, p, &e) != 0)
		return SMARM_EINVAL;
	*len = smarm__etf_put_pid(buf, cap, &e);
	return 0;
}

SMARM_API int smarm_dist_pid_decode(smarm_dist_t *d, const void *buf,
				    size_t len, size_t *used,
				    smarm_dist_pid_t *out)
{
	if (d == NULL || buf == NULL || out == NULL)
		return SMARM_EINVAL;
	struct etf_rd r = { buf, len, 0 };
	struct dist_epid e;
	if (smarm__etf_pid(&r, &e) != 0)
		return SMARM_EINVAL;
	int rc = smarm__dist_intern(d, &e, out);
	if (rc == 0 && used != NULL)
		*used = r.i;
	return rc;
}

static int check_term(const void *term, size_t len)
{
	if (term == NULL || len == 0 || len > SMARM_DIST_TERM_MAX ||
	    !smarm__etf_valid(term, len))
		return SMARM_EINVAL;
	return 0;
}

static int local_copy(smarm_dist_t *d, const void *term, size_t len,
		      struct smarm_dist_msg **out)
{
	smarm_dist_pid_t from;
	if (smarm_dist_self(d, smarm_actor_self(), &from) != 0)
		from = SMARM_DIST_PID_NONE;
	*out = smarm__dist_msg_new(term, len, from);
	return *out != NULL ? 0 : SMARM_ENOMEM;
}

static bool stopping(smarm_dist_t *d)
{
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	bool s = d->d_stopping;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	return s;
}

/* A registered name as the API takes it: 1..255 bytes. */
static bool name_ok(const char *name)
{
	return name != NULL && name[0] != '\0' && strnlen(name, 256) <= 255;
}

/* A remote target: to's entry, which must be of another node. */
static int remote_pid(smarm_dist_t *d, smarm_dist_pid_t to, struct dist_epid *e)
{
	if (smarm__dist_pid_get(d, to, e) != 0 ||
	    strcmp(e->node, d->d_name) == 0)
		return SMARM_EINVAL;
	return 0;
}

/* A remote name: node (not ours) and name checked, into e's node. */
static int remote_name(smarm_dist_t *d, const char *node, const char *name,
		       struct dist_epid *e)
{
	if (check_node(node) != 0 || strcmp(node, d->d_name) == 0 ||
	    !name_ok(name))
		return SMARM_EINVAL;
	memset(e, 0, sizeof *e);
	snprintf(e->node, sizeof e->node, "%s", node);
	return 0;
}

/* The checks a call makes after its arguments': the caller is an actor
 * (*self, if not NULL, its pid; else SMARM_ENOTACTOR) and, if running,
 * d is not stopping (else SMARM_ESTATE). */
static int caller_ok(smarm_dist_t *d, smarm_pid_t *self, bool running)
{
	smarm_pid_t me = smarm_actor_self();
	if (me.id == 0)
		return SMARM_ENOTACTOR;
	if (self != NULL)
		*self = me;
	return running && stopping(d) ? SMARM_ESTATE : 0;
}

SMARM_API int smarm_dist_send(smarm_dist_t *d, smarm_dist_pid_t to,
			      const void *term, size_t len)
{
	struct dist_epid te, fe;
	smarm_pid_t self;
	if (d == NULL || smarm__dist_pid_get(d, to, &te) != 0 ||
	    check_term(term, len) != 0)
		return SMARM_EINVAL;
	int rc = caller_ok(d, &self, true);
	if (rc != 0)
		return rc;
	if (strcmp(te.node, d->d_name) == 0) {
		struct smarm_dist_msg *m;
		if (te.creation != d->d_creation)
			return 0; /* an older incarnation: dropped */
		if (local_copy(d, term, len, &m) != 0)
			return SMARM_ENOMEM;
		smarm__dist_deliver_pid(
			d, (smarm_pid_t){ (uint64_t)te.serial << 32 | te.num },
			m);
		return 0;
	}
	smarm__dist_local_epid(d, self, &fe);
	struct dist_out o = { .op = DOP_SEND, .from = &fe, .to = &te };
	return smarm__dist_send(d, te.node, &o, term, len);
}

SMARM_API int smarm_dist_send_name(smarm_dist_t *d, const char *node,
				   const char *name, const void *term,
				   size_t len)
{
	smarm_pid_t self;
	if (d == NULL || check_node(node) != 0 || !name_ok(name) ||
	    check_term(term, len) != 0)
		return SMARM_EINVAL;
	int rc = caller_ok(d, &self, true);
	if (rc != 0)
		return rc;
	if (strcmp(node, d->d_name) == 0) {
		struct smarm_dist_msg *m;
		if (local_copy(d, term, len, &m) != 0)
			return SMARM_ENOMEM;
		smarm__dist_deliver_name(d, name, m);
		return 0;
	}
	struct dist_epid fe;
	smarm__dist_local_epid(d, self, &fe);
	struct dist_out o = { .op = DOP_REG_SEND, .from = &fe, .name = name };
	return smarm__dist_send(d, node, &o, term, len);
}

SMARM_API int smarm_dist_monitor(smarm_dist_t *d, smarm_dist_pid_t target,
				 uint64_t *ref)
{
	struct dist_epid e;
	smarm_pid_t self;
	if (d == NULL || ref == NULL || remote_pid(d, target, &e) != 0)
		return SMARM_EINVAL;
	int rc = caller_ok(d, &self, true);
	if (rc != 0)
		return rc;
	return smarm__dist_rmon_add(d, self, &e, NULL, NULL, ref);
}

SMARM_API int smarm_dist_demonitor(smarm_dist_t *d, uint64_t ref)
{
	smarm_pid_t self;
	if (d == NULL || ref == 0)
		return SMARM_EINVAL;
	int rc = caller_ok(d, &self, false);
	return rc != 0 ? rc : smarm__dist_rmon_del(d, self, ref);
}

SMARM_API int smarm_dist_msg_down(const smarm_dist_msg_t *msg, uint64_t *ref)
{
	if (msg == NULL || ref == NULL)
		return SMARM_EINVAL;
	*ref = msg->m_down;
	return msg->m_down != 0 ? 0 : SMARM_ENOENT;
}

/* {1, Self, To} or {35, Id, Self, To}. */
static size_t link_ctl(smarm_dist_t *d, uint8_t *b, size_t cap, int op,
		       uint64_t id, smarm_pid_t self,
		       const struct dist_epid *to)
{
	struct dist_epid me;
	smarm__dist_local_epid(d, self, &me);
	size_t k = 0;
	b[k++] = 131;
	b[k++] = 104; /* SMALL_TUPLE_EXT */
	b[k++] = op == DOP_LINK ? 3 : 4;
	b[k++] = 97; /* SMALL_INTEGER_EXT */
	b[k++] = (uint8_t)op;
	if (op == DOP_UNLINK_ID) {
		int i = 0;
		ei_encode_ulonglong((char *)b + k, &i, id);
		k += (size_t)i;
	}
	k += smarm__etf_put_pid(b + k, cap - k, &me);
	k += smarm__etf_put_pid(b + k, cap - k, to);
	return k;
}

static void ack_drop(void *arg)
{
	smarm_chan_t *ack = arg;
	smarm_chan_sender_free(ack);
	smarm_chan_receiver_free(ack);
}

/* Have the watcher monitor self for the olink self -> e (watch.c
 * INV-4): 0 when it has, else an error (the olink is left to the
 * caller). */
static int link_watch(smarm_dist_t *d, smarm_pid_t self,
		      const struct dist_epid *e)
{
	smarm_chan_t *ack = NULL;
	int set = 0, rc = smarm_chan_alloc(&ack, sizeof(int), NULL);
	if (rc != 0)
		return rc;
	if (smarm_cleanup_push(ack_drop, ack) != 0) {
		ack_drop(ack);
		return SMARM_ENOMEM;
	}
	struct dist_watch_req *q = calloc(1, sizeof *q);
	rc = SMARM_ENOMEM;
	if (q != NULL) {
		q->q_op = DW_LINK_OUT;
		q->q_remote = *e;
		q->q_local = self;
		q->q_ack = ack;
		rc = smarm__dist_watch_post(d, q);
	}
	if (rc == 0)
		rc = smarm_chan_recv_timeout(ack, &set, DIST_SETUP_NS);
	smarm_cleanup_pop(true);
	if (rc == SMARM_ENOMEM)
		return rc;
	return rc == 0 && set == 1 ? 0 : SMARM_ESTATE;
}

SMARM_API int smarm_dist_link(smarm_dist_t *d, smarm_dist_pid_t target)
{
	struct dist_epid e;
	smarm_pid_t self;
	bool fresh;
	if (d == NULL || remote_pid(d, target, &e) != 0)
		return SMARM_EINVAL;
	int rc = caller_ok(d, &self, true);
	if (rc != 0)
		return rc;
	rc = smarm__dist_olink_add(d, self, &e, &fresh);
	if (rc != 0 || !fresh)
		return rc; /* linked already: nothing is done, as link/1 */
	/* Watched before the peer hears of it: an EXIT coming back at once
	 * finds the olink, and an end right after this call is seen. */
	rc = link_watch(d, self, &e);
	if (rc == 0) {
		uint8_t b[2 * DIST_TERM_SMALL + 16];
		size_t k = link_ctl(d, b, sizeof b, DOP_LINK, 0, self, &e);
		struct dist_out o = { .op = 0, .raw = b, .raw_len = k };
		rc = smarm__dist_send(d, e.node, &o, NULL, 0);
	}
	if (rc == SMARM_ENOMEM || rc == SMARM_ESTATE) {
		(void)smarm__dist_olink_take(d, self, &e);
		return rc;
	}
	/* As link/1: a node that cannot be reached is an exit signal
	 * noconnection, not an error (unless the link went meanwhile). */
	if (rc != 0 && smarm__dist_olink_take(d, self, &e))
		(void)smarm_actor_send_exit(self, SMARM_EXIT_CRASHED,
					    SMARM_ENOCONN);
	return 0;
}

SMARM_API int smarm_dist_unlink(smarm_dist_t *d, smarm_dist_pid_t target)
{
	struct dist_epid e;
	smarm_pid_t self;
	if (d == NULL || remote_pid(d, target, &e) != 0)
		return SMARM_EINVAL;
	int rc = caller_ok(d, &self, false);
	if (rc != 0)
		return rc;
	if (!smarm__dist_olink_take(d, self, &e))
		return 0; /* not linked (or the link is gone): no error */
	smarm__lock(&d->d_lock, SMARM__RANK_TABLE);
	uint64_t id = ++d->d_unlink_seq;
	smarm__unlock(&d->d_lock, SMARM__RANK_TABLE);
	uint8_t b[2 * DIST_TERM_SMALL + 32];
	size_t k = link_ctl(d, b, sizeof b, DOP_UNLINK_ID, id, self, &e);
	struct dist_out o = {
		.op = 0, .raw = b, .raw_len = k, .no_connect = true
	};
	(void)smarm__dist_send(d, e.node, &o, NULL, 0); /* gone: unlinked */
	return 0;
}

SMARM_API int smarm_dist_monitor_node(smarm_dist_t *d, const char *node,
				      bool on)
{
	if (d == NULL || check_node(node) != 0 || strcmp(node, d->d_name) == 0)
		return SMARM_EINVAL;
	smarm_pid_t self;
	int rc = caller_ok(d, &self, on);
	if (rc != 0 || !on) {
		if (rc == 0) /* off: one fewer */
			smarm__dist_nmon_del(d, self, node);
		return rc;
	}
	return smarm__dist_nmon_add(d, self, node);
}

SMARM_API int smarm_dist_call(smarm_dist_t *d, smarm_dist_pid_t to,
			      const void *req, size_t len, uint64_t timeout_ns,
			      smarm_dist_msg_t **reply)
{
	struct dist_epid e;
	if (reply != NULL)
		*reply = NULL;
	if (d == NULL || remote_pid(d, to, &e) != 0 ||
	    check_term(req, len) != 0)
		return SMARM_EINVAL;
	int rc = caller_ok(d, NULL, true);
	return rc != 0 ? rc
		       : smarm__dist_gen_call(d, &e, NULL, req, len, timeout_ns,
					      reply);
}

SMARM_API int smarm_dist_call_name(smarm_dist_t *d, const char *node,
				   const char *name, const void *req,
				   size_t len, uint64_t timeout_ns,
				   smarm_dist_msg_t **reply)
{
	struct dist_epid e;
	if (reply != NULL)
		*reply = NULL;
	if (d == NULL || remote_name(d, node, name, &e) != 0 ||
	    check_term(req, len) != 0)
		return SMARM_EINVAL;
	int rc = caller_ok(d, NULL, true);
	return rc != 0 ? rc
		       : smarm__dist_gen_call(d, &e, name, req, len, timeout_ns,
					      reply);
}

SMARM_API int smarm_dist_cast(smarm_dist_t *d, smarm_dist_pid_t to,
			      const void *req, size_t len)
{
	struct dist_epid e;
	if (d == NULL || remote_pid(d, to, &e) != 0 ||
	    check_term(req, len) != 0)
		return SMARM_EINVAL;
	int rc = caller_ok(d, NULL, true);
	return rc != 0 ? rc : smarm__dist_gen_cast(d, &e, NULL, req, len);
}

SMARM_API int smarm_dist_cast_name(smarm_dist_t *d, const char *node,
				   const char *name, const void *req,
				   size_t len)
{
	struct dist_epid e;
	if (d == NULL || remote_name(d, node, name, &e) != 0 ||
	    check_term(req, len) != 0)
		return SMARM_EINVAL;
	int rc = caller_ok(d, NULL, true);
	return rc != 0 ? rc : smarm__dist_gen_cast(d, &e, name, req, len);
}

SMARM_API int smarm_dist_serve(smarm_dist_t *d, const char *name,
			       const smarm_behaviour_t *b)
{
	if (d == NULL || name == NULL || name[0] == '\0' ||
	    strnlen(name, SMARM_NAME_MAX + 1) > SMARM_NAME_MAX || b == NULL ||
	    !smarm__bhv_valid(b))
		return SMARM_EINVAL;
	return smarm__dist_serve(d, name, b);
}

SMARM_API int smarm_dist_unserve(smarm_dist_t *d, const char *name)
{
	if (d == NULL || name == NULL || name[0] == '\0' ||
	    strnlen(name, SMARM_NAME_MAX + 1) > SMARM_NAME_MAX)
		return SMARM_EINVAL;
	return smarm__dist_unserve(d, name);
}
