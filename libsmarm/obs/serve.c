/* SPDX-License-Identifier: MIT */
/*
 * serve.c - the introspection socket (smarm_config_set_obs_socket): the
 * obs layer's subsystem (SMARM__SUB_OBS). A node opened with a socket
 * path listens there on a thread of its own and answers each request
 * line of a connected client with one line of JSON, reading the node
 * with the same calls an embedder has (snapshot.c, smarm_node_get_int).
 *
 * Protocol, version SMARM_OBS_FORMAT_VERSION (docs/observability.md,
 * "The socket"): a request is one line, `hello`, `stats`, `snapshot`,
 * `actor PID` (with a server's format_status text, asked of it: at
 * most SRV_STATUS_MS), `tree` or `tree spawn`; the answer is one line,
 * a JSON object whose "v" is the version; an unknown request is
 * answered {"v":3,"error":"..."}. A connection may send any number of
 * requests. A version only adds keys to the objects of the one before,
 * so a reader of an older version reads a newer answer as it did.
 *
 * Who may connect: the socket file is made mode 0600 whatever the umask
 * (bound in a fresh 0700 directory beside it, made 0600, then renamed
 * into place, so no other mode is ever visible at the path), and each
 * accepted peer's credentials (SO_PEERCRED) must be the node's user or
 * root, else the connection is closed with no answer.
 *
 * Ownership: the layer's per-node state (struct obs_node: this server,
 * and the trace writer of trace.c) is created by ss_open and freed by
 * ss_close; the server's part (struct obs_srv) is freed by srv_close,
 * which stops and joins the thread and removes the socket file. The thread owns
 * the connection it serves. Locking: none of its own; the thread only reads the
 * node through the public, thread-safe introspection calls. Invariants: INV-1
 * the server never runs on a worker and takes no signals: its thread is created
 * with every signal blocked. INV-2 a connection whose peer is neither the
 * node's user nor root is closed before anything is read from it or written to
 * it. INV-3 at most SRV_CONNS connections are open; one more is closed at once,
 * one silent for SRV_IDLE_MS is closed, and one that takes no answer for
 * SRV_SEND_S (a send timed out) is closed, so smarm_node_close waits at most
 * that long for the thread. See: docs/observability.md.
 */
#include "obs.h"

#include "../behaviour/bhv.h"
#include "../core/causal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define SRV_LINE 256	    /* longest request line */
#define SRV_IDLE_MS 60000   /* a silent client is dropped after this */
#define SRV_BUF (64u << 10) /* answer buffer, flushed when full */
#define SRV_CONNS 16	    /* connections served at once */
#define SRV_STATUS_MS 1000  /* a server's status: the longest wait */
#define SRV_SEND_S                                                             \
	5 /* a client that reads nothing for this long is                      \
	     dropped */

struct obs_srv {
	struct smarm_node *sv_node;
	int sv_fd;	/* the listening socket */
	int sv_wake[2]; /* a pipe: ss_close writes to stop the thread */
	pthread_t sv_thr;
	uid_t sv_uid;	    /* the node's user: peers must match (or root) */
	uint32_t sv_serial; /* the node's pid serial, 0: not known yet */
	char sv_path[108];  /* the socket file, removed at close */
};

/* ------------------------------------------------------------ output */

/* An answer being written: buffered, sent whole lines at a time. */
struct out {
	int o_fd;
	bool o_err; /* the peer is gone: stop writing */
	size_t o_n;
	char o_buf[SRV_BUF];
};

static void out_flush(struct out *o)
{
	size_t done = 0;
	while (!o->o_err && done < o->o_n) {
		ssize_t w = send(o->o_fd, o->o_buf + done, o->o_n - done,
				 MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->o_err = true;
		else
			done += (size_t)w;
	}
	o->o_n = 0;
}

static void out_put(struct out *o, const char *s, size_t len)
{
	while (len > 0 && !o->o_err) {
		size_t k = SRV_BUF - o->o_n;
		if (k > len)
			k = len;
		memcpy(o->o_buf + o->o_n, s, k);
		o->o_n += k;
		s += k;
		len -= k;
		if (o->o_n == SRV_BUF)
			out_flush(o);
	}
}

static void out_fmt(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void out_fmt(struct out *o, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int k;
	va_start(ap, fmt);
	k = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (k > 0)
		out_put(o, tmp,
			(size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void out_str(struct out *o, const char *s)
{
	out_put(o, "\"", 1);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			out_put(o, e, 2);
		} else if (c < 0x20) {
			out_fmt(o, "\\u%04x", c);
		} else {
			out_put(o, (const char *)&c, 1);
		}
	}
	out_put(o, "\"", 1);
}

static const char *state_name(int st)
{
	static const char *const names[] = { "?",	 "queued", "running",
					     "notified", "parked", "done" };
	return st >= 1 && st <= 5 ? names[st] : names[0];
}

static const char *wait_name(int w)
{
	static const char *const names[] = { "",	"blocked", "timed",
					     "receive", "call",	   "join",
					     "mutex",	"io",	   "sleep" };
	return w >= 0 && w <= 8 ? names[w] : "";
}

/* A pid as the reports write it: INDEX.GEN. */
static void out_pid(struct out *o, const char *key, uint64_t id)
{
	out_fmt(o, "\"%s\":\"%" PRIu32 ".%" PRIu32 "\"", key,
		(uint32_t)id & 0xffffffu, (uint32_t)(id >> 32));
}

static void out_actor(struct out *o, const smarm_actor_info_t *a)
{
	out_put(o, "{", 1);
	out_pid(o, "pid", a->pid.id);
	out_fmt(o, ",\"id\":%" PRIu64 ",", a->pid.id);
	out_pid(o, "parent", a->parent.id);
	out_fmt(o,
		",\"state\":\"%s\",\"wait\":\"%s\",\"flags\":%" PRIu32
		",\"names\":%" PRIu32 ",\"links\":%" PRIu32
		",\"monitors\":%" PRIu32 ",\"monitored_by\":%" PRIu32
		",\"waits\":%" PRIu64 ",\"deadline_ns\":%" PRIu64
		",\"mailbox\":%" PRId64 ",\"stack_reserve\":%" PRIu64
		",\"stack_high_water\":%" PRIu64 ",\"stack_mode\":%" PRIu32,
		state_name(a->state), wait_name(a->wait), a->flags, a->names,
		a->links, a->monitors, a->monitored_by, a->waits,
		a->wait_deadline_ns, a->mailbox_depth, a->stack_reserve,
		a->stack_high_water, a->stack_mode);
	out_fmt(o,
		",\"cpu_ns\":%" PRIu64 ",\"runs\":%" PRIu64
		",\"runq_wait_ns\":%" PRIu64 ",\"msgs_in\":%" PRIu64
		",\"msgs_out\":%" PRIu64 ",\"preempt_safe\":%" PRIu32
		",\"preempt_async\":%" PRIu32 ",\"wait_on\":%" PRIu64,
		a->cpu_ns, a->runs, a->runq_wait_ns, a->messages_in,
		a->messages_out, a->preempt_safe, a->preempt_async, a->wait_on);
	out_fmt(o,
		",\"mailbox_bands\":[%" PRIu32 ",%" PRIu32 ",%" PRIu32
		",%" PRIu32 "],\"mailbox_bytes\":%" PRIu64
		",\"stack_touched\":%" PRIu64 ",\"restarts\":%" PRIu32
		",\"plugin_faults\":%" PRIu32 ",\"name\":",
		a->mailbox_band[0], a->mailbox_band[1], a->mailbox_band[2],
		a->mailbox_band[3], a->mailbox_bytes, a->stack_touched,
		a->restarts, a->plugin_faults);
	out_str(o, a->name);
	out_put(o, ",\"behaviour\":", 13);
	out_str(o, a->behaviour);
	out_put(o, ",\"plugin\":", 10);
	out_str(o, a->plugin);
	out_put(o, ",\"state_name\":", 14);
	out_str(o, a->state_name);
	out_put(o, "}", 1);
}

/* ---------------------------------------------------------- requests */

static void req_hello(struct obs_srv *sv, struct out *o)
{
	out_fmt(o,
		"{\"v\":%d,\"smarm\":\"%s\",\"os_pid\":%ld,\"now_ns\":%" PRIu64
		",\"actor_stats\":%d}\n",
		SMARM_OBS_FORMAT_VERSION, smarm_version_string(),
		(long)getpid(), smarm_now_ns(),
		smarm__node_astat_on(sv->sv_node) ? 1 : 0);
}

static void req_stats(struct obs_srv *sv, struct out *o)
{
	bool first = true;
	out_fmt(o, "{\"v\":%d,\"now_ns\":%" PRIu64 ",\"stats\":{",
		SMARM_OBS_FORMAT_VERSION, smarm_now_ns());
	/* Every id the library knows: unknown ones are SMARM_EINVAL. */
	for (int id = 1; id < 256; id++) {
		int64_t v;
		const char *name = smarm_stat_name(id);
		if (smarm_node_get_int(sv->sv_node, id, &v) != 0)
			continue;
		if (strncmp(name, "SMARM_STAT_", 11) == 0)
			name += 11;
		out_fmt(o, "%s\"%s\":%" PRId64, first ? "" : ",", name, v);
		first = false;
	}
	out_put(o, "}}\n", 3);
}

static void req_snapshot(struct obs_srv *sv, struct out *o)
{
	smarm_snapshot_t *snap = NULL;
	smarm_actor_info_t a;
	int rc = smarm_snapshot_take(sv->sv_node, &snap);
	if (rc != 0) {
		out_fmt(o, "{\"v\":%d,\"error\":\"%s\"}\n",
			SMARM_OBS_FORMAT_VERSION, smarm_err_name(rc));
		return;
	}
	out_fmt(o, "{\"v\":%d,\"now_ns\":%" PRIu64 ",\"actors\":[",
		SMARM_OBS_FORMAT_VERSION, smarm_now_ns());
	for (size_t i = 0; i < smarm_snapshot_count(snap) && !o->o_err; i++) {
		a.size = sizeof a;
		if (smarm_snapshot_get(snap, i, &a) != 0)
			continue;
		if (i > 0)
			out_put(o, ",", 1);
		out_actor(o, &a);
	}
	out_put(o, "]}\n", 3);
	smarm_snapshot_free(snap);
}

/* "INDEX.GEN" or a raw id: 0 if neither. */
static uint64_t parse_pid(const char *s)
{
	char *end;
	unsigned long long a = strtoull(s, &end, 10);
	if (end == s)
		return 0;
	if (*end == '.') {
		unsigned long long g = strtoull(end + 1, &end, 10);
		/* The node serial sits above the index (slot.h); a pid of
		 * this node is found by index and generation. */
		return (uint64_t)g << 32 | (uint64_t)(a & 0xffffffu);
	}
	return (uint64_t)a;
}

static void out_rel(struct out *o, struct obs_srv *sv, uint64_t pid, int kind,
		    const char *key)
{
	smarm_pid_t buf[64];
	size_t n = 0;
	(void)smarm_actor_relations(sv->sv_node, (smarm_pid_t){ pid }, kind,
				    buf, 64, &n);
	out_fmt(o, ",\"%s\":[", key);
	for (size_t i = 0; i < n && i < 64; i++)
		out_fmt(o, "%s\"%" PRIu32 ".%" PRIu32 "\"", i ? "," : "",
			(uint32_t)buf[i].id & 0xffffffu,
			(uint32_t)(buf[i].id >> 32));
	out_fmt(o, "],\"%s_count\":%zu", key, n);
}

static uint32_t node_serial(struct obs_srv *sv);

static void req_actor(struct obs_srv *sv, struct out *o, const char *arg)
{
	smarm_actor_info_t a;
	uint64_t pid = parse_pid(arg);
	int rc;
	/* INDEX.GEN names the slot: put this node's serial in. */
	if (pid != 0 && strchr(arg, '.') != NULL)
		pid |= (uint64_t)node_serial(sv) << 24;
	a.size = sizeof a;
	rc = pid != 0 ? smarm_actor_info(sv->sv_node, (smarm_pid_t){ pid }, &a)
		      : SMARM_EINVAL;
	if (rc != 0) {
		out_fmt(o, "{\"v\":%d,\"error\":\"%s\"}\n",
			SMARM_OBS_FORMAT_VERSION, smarm_err_name(rc));
		return;
	}
	out_fmt(o, "{\"v\":%d,\"actor\":", SMARM_OBS_FORMAT_VERSION);
	out_actor(o, &a);
	out_rel(o, sv, pid, SMARM_REL_LINKS, "links");
	out_rel(o, sv, pid, SMARM_REL_MONITORS, "monitors");
	out_rel(o, sv, pid, SMARM_REL_MONITORED_BY, "monitored_by");
	if (a.behaviour[0] != '\0') {
		/*
		 * A server or machine: its behaviour's format_status text
		 * (OTP's), asked of it between its callbacks as
		 * sys:get_status is; "" if it has none, or does not answer
		 * within SRV_STATUS_MS (a long callback).
		 */
		smarm_server_status_t st = { .struct_size = sizeof st };
		if (smarm__bhv_status_of(sv->sv_node, (smarm_pid_t){ pid }, &st,
					 (uint64_t)SRV_STATUS_MS * 1000000u) !=
		    0)
			st.state_text[0] = '\0';
		out_put(o, ",\"state_text\":", 14);
		out_str(o, st.state_text);
	}
	out_put(o, "}\n", 2);
}

struct tree_out {
	struct out *t_o;
	size_t t_n;
};

static int tree_cb(void *arg, const smarm_snapshot_t *snap, size_t index,
		   unsigned depth, bool orphaned)
{
	struct tree_out *t = arg;
	smarm_actor_info_t a;
	a.size = sizeof a;
	if (smarm_snapshot_get(snap, index, &a) != 0)
		return 0;
	out_fmt(t->t_o, "%s{\"depth\":%u,\"orphaned\":%s,\"actor\":",
		t->t_n++ ? "," : "", depth, orphaned ? "true" : "false");
	out_actor(t->t_o, &a);
	out_put(t->t_o, "}", 1);
	return t->t_o->o_err ? 1 : 0;
}

static void req_tree(struct obs_srv *sv, struct out *o, int kind)
{
	smarm_snapshot_t *snap = NULL;
	struct tree_out t = { o, 0 };
	int rc = smarm_snapshot_take(sv->sv_node, &snap);
	if (rc == 0) {
		out_fmt(o, "{\"v\":%d,\"tree\":[", SMARM_OBS_FORMAT_VERSION);
		rc = smarm_snapshot_tree(snap, kind, tree_cb, &t);
		out_put(o, "]}\n", 3);
		smarm_snapshot_free(snap);
	}
	if (rc < 0)
		out_fmt(o, "{\"v\":%d,\"error\":\"%s\"}\n",
			SMARM_OBS_FORMAT_VERSION, smarm_err_name(rc));
}

/* This node's serial, as its pids carry it (from any pid of it; a
 * node keeps its serial while open, so it is read once). */
static uint32_t node_serial(struct obs_srv *sv)
{
	smarm_snapshot_t *snap = NULL;
	smarm_actor_info_t a;
	if (sv->sv_serial != 0)
		return sv->sv_serial;
	a.size = sizeof a;
	if (smarm_snapshot_take(sv->sv_node, &snap) == 0 &&
	    smarm_snapshot_get(snap, 0, &a) == 0)
		sv->sv_serial = (uint32_t)(a.pid.id >> 24) & 0xffu;
	smarm_snapshot_free(snap);
	return sv->sv_serial;
}

static void serve_line(struct obs_srv *sv, struct out *o, char *line)
{
	if (strcmp(line, "hello") == 0)
		req_hello(sv, o);
	else if (strcmp(line, "stats") == 0)
		req_stats(sv, o);
	else if (strcmp(line, "snapshot") == 0)
		req_snapshot(sv, o);
	else if (strncmp(line, "actor ", 6) == 0)
		req_actor(sv, o, line + 6);
	else if (strcmp(line, "tree") == 0)
		req_tree(sv, o, SMARM_TREE_SUPERVISION);
	else if (strcmp(line, "tree spawn") == 0)
		req_tree(sv, o, SMARM_TREE_SPAWN);
	else
		out_fmt(o, "{\"v\":%d,\"error\":\"unknown request\"}\n",
			SMARM_OBS_FORMAT_VERSION);
	out_flush(o);
}

/* ---------------------------------------------------------- the thread */

/* Whether the peer on fd may talk to us (INV-2). */
static bool peer_allowed(const struct obs_srv *sv, int fd)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
	    len != sizeof cr)
		return false;
	return cr.uid == sv->sv_uid || cr.uid == 0;
}

/* A connection being served: its partial request line. */
struct conn {
	int c_fd; /* -1: a free entry */
	size_t c_n;
	uint64_t c_last; /* smarm_now_ns of its last request */
	char c_line[SRV_LINE];
};

/*
 * Read what conn c has sent and answer every whole line in it: false
 * when the connection is done (closed, an error, the peer gone).
 */
static bool conn_read(struct obs_srv *sv, struct conn *c, struct out *o)
{
	char buf[SRV_LINE];
	ssize_t r = recv(c->c_fd, buf, sizeof buf, MSG_DONTWAIT);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (r <= 0)
		return false;
	c->c_last = smarm_now_ns();
	for (ssize_t i = 0; i < r; i++) {
		char ch = buf[i];
		if (ch == '\r')
			continue;
		if (ch != '\n') {
			if (c->c_n < SRV_LINE - 1)
				c->c_line[c->c_n++] = ch;
			continue;
		}
		c->c_line[c->c_n] = '\0';
		c->c_n = 0;
		o->o_fd = c->c_fd;
		o->o_err = false;
		o->o_n = 0;
		serve_line(sv, o, c->c_line);
		if (o->o_err)
			return false;
	}
	return true;
}

/*
 * The server's loop: the listening socket, the wake pipe and up to
 * SRV_CONNS connections in one poll, answered in turn (an answer is
 * written whole before the next request is read), so a watching
 * smarm-top does not keep smarm-run --status out.
 */
static void *srv_main(void *arg)
{
	struct obs_srv *sv = arg;
	struct out *o = malloc(sizeof *o);
	struct conn *cs = calloc(SRV_CONNS, sizeof *cs);
	struct pollfd p[SRV_CONNS + 2];
	const struct timeval send_limit = { SRV_SEND_S, 0 };
	smarm__thread_name("observer", -1);
	for (int i = 0; cs != NULL && i < SRV_CONNS; i++)
		cs[i].c_fd = -1;
	while (o != NULL && cs != NULL) {
		int k = 2, fd;
		p[0] = (struct pollfd){ sv->sv_fd, POLLIN, 0 };
		p[1] = (struct pollfd){ sv->sv_wake[0], POLLIN, 0 };
		for (int i = 0; i < SRV_CONNS; i++)
			p[k++] = (struct pollfd){ cs[i].c_fd, POLLIN, 0 };
		if (poll(p, (nfds_t)k, 1000) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents != 0)
			break;
		for (int i = 0; i < SRV_CONNS; i++) {
			struct conn *c = &cs[i];
			bool keep = true;
			if (c->c_fd < 0)
				continue;
			if (p[2 + i].revents != 0)
				keep = conn_read(sv, c, o);
			else if (smarm_now_ns() - c->c_last >
				 SRV_IDLE_MS * 1000000ull)
				keep = false; /* silent too long */
			if (!keep) {
				close(c->c_fd);
				c->c_fd = -1;
			}
		}
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(sv->sv_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (!peer_allowed(sv, fd)) { /* INV-2 */
			close(fd);
			continue;
		}
		/* A client that stops reading cannot hold the thread (nor
		 * smarm_node_close, which joins it) for long. */
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_limit,
				 sizeof send_limit);
		for (int i = 0; i < SRV_CONNS; i++) {
			if (cs[i].c_fd >= 0)
				continue;
			cs[i].c_fd = fd;
			cs[i].c_n = 0;
			cs[i].c_last = smarm_now_ns();
			fd = -1;
			break;
		}
		if (fd >= 0)
			close(fd); /* full: the client sees it closed */
	}
	for (int i = 0; cs != NULL && i < SRV_CONNS; i++)
		if (cs[i].c_fd >= 0)
			close(cs[i].c_fd);
	free(cs);
	free(o);
	return NULL;
}

/* ---------------------------------------------------- socket creation */

/*
 * Bind fd at path, mode 0600 (INV: see the file comment). An existing
 * socket file at path is replaced (a node that died left it); any other
 * file is not: SMARM_EEXIST.
 */
static int bind_private(int fd, const char *path)
{
	struct sockaddr_un a;
	struct stat st;
	char dir[sizeof a.sun_path], tmp[sizeof a.sun_path];
	const char *slash = strrchr(path, '/');
	size_t dlen = slash != NULL ? (size_t)(slash - path) : 0;
	int rc = SMARM_ESYSTEM;

	bool fresh;
	int k;

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return SMARM_EEXIST;
		(void)unlink(path);
	}
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	/*
	 * A fresh 0700 directory beside path, the socket bound in it. Its
	 * name, ".NAME.XXXXXX" for a path ending in NAME, is what the
	 * kernel keeps as the socket's address (/proc/net/unix) after the
	 * rename: a client finding the socket by pid maps it back
	 * (tools/obs_client.c).
	 */
	k = snprintf(dir, sizeof dir, "%.*s%s.%s.XXXXXX", (int)dlen, path,
		     slash != NULL ? "/" : "",
		     slash != NULL ? slash + 1 : path);
	fresh = k > 0 && (size_t)k < sizeof dir && mkdtemp(dir) != NULL;
	if (fresh) {
		k = snprintf(tmp, sizeof tmp, "%s/s", dir);
		if (k <= 0 || (size_t)k >= sizeof tmp) {
			(void)rmdir(dir);
			fresh = false;
		}
	}
	if (!fresh) {
		/* No room for it: bind in place, then chmod; the peer
		 * check still refuses anyone else meanwhile. */
		memcpy(a.sun_path, path, strlen(path) + 1);
		if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
			return SMARM_ESYSTEM;
		return chmod(path, 0600) == 0 ? 0 : SMARM_ESYSTEM;
	}
	memcpy(a.sun_path, tmp, strlen(tmp) + 1);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
	    chmod(tmp, 0600) == 0 && rename(tmp, path) == 0)
		rc = 0;
	(void)unlink(tmp);
	(void)rmdir(dir);
	return rc;
}

/* For tests that cannot switch users: compare peers with this uid. */
static uid_t node_uid(void)
{
	const char *s = getenv("SMARM__OBS_TEST_UID");
	return s != NULL ? (uid_t)strtoul(s, NULL, 10) : geteuid();
}

static int srv_open(struct smarm_node *n, const struct smarm_config *cfg,
		    struct obs_srv **state)
{
	const char *path = smarm__config_obs_socket(cfg);
	struct obs_srv *sv;
	sigset_t all, old;
	int rc;

	*state = NULL;
	if (path[0] == '\0')
		return 0; /* not asked for */
	sv = calloc(1, sizeof *sv);
	if (sv == NULL)
		return SMARM_ENOMEM;
	sv->sv_node = n;
	sv->sv_uid = node_uid();
	sv->sv_wake[0] = sv->sv_wake[1] = -1;
	snprintf(sv->sv_path, sizeof sv->sv_path, "%s", path);
	sv->sv_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sv->sv_fd < 0) {
		free(sv);
		return SMARM_ESYSTEM;
	}
	rc = bind_private(sv->sv_fd, path);
	if (rc == 0 && listen(sv->sv_fd, 8) != 0)
		rc = SMARM_ESYSTEM;
	if (rc == 0 && pipe2(sv->sv_wake, O_CLOEXEC) != 0)
		rc = SMARM_ESYSTEM;
	if (rc == 0) {
		/* INV-1: the thread takes no signal meant for the host. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&sv->sv_thr, NULL, srv_main, sv) != 0)
			rc = SMARM_ESYSTEM;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (rc != 0) {
		if (sv->sv_wake[0] >= 0) {
			close(sv->sv_wake[0]);
			close(sv->sv_wake[1]);
		}
		close(sv->sv_fd);
		if (rc != SMARM_EEXIST)
			(void)unlink(path);
		free(sv);
		return rc == SMARM_EEXIST ? SMARM_ESYSTEM : rc;
	}
	*state = sv;
	return 0;
}

static void srv_close(struct obs_srv *sv)
{
	char c = 1;
	if (sv == NULL)
		return;
	while (write(sv->sv_wake[1], &c, 1) < 0 && errno == EINTR)
		;
	pthread_join(sv->sv_thr, NULL);
	close(sv->sv_wake[0]);
	close(sv->sv_wake[1]);
	close(sv->sv_fd);
	(void)unlink(sv->sv_path);
	free(sv);
}

/* The layer's per-node state: the socket server, the trace writer
 * (trace.c) and the causal profiler (causal.c), each NULL unless asked
 * for. */
struct obs_node {
	struct obs_srv *on_srv;
	struct smarm__obs_trace *on_trace;
	struct smarm__obs_causal *on_causal;
};

static int obs_open(struct smarm_node *n, const struct smarm_config *cfg,
		    void **state)
{
	struct obs_srv *srv = NULL;
	struct smarm__obs_trace *tr = NULL;
	struct smarm__obs_causal *cw = NULL;
	struct obs_node *on;
	int rc;
	*state = NULL;
	rc = srv_open(n, cfg, &srv);
	if (rc != 0)
		return rc;
	rc = smarm__obs_trace_open(n, cfg, &tr);
	if (rc != 0) {
		srv_close(srv);
		return rc;
	}
	rc = smarm__obs_causal_open(n, cfg, &cw);
	if (rc != 0) {
		srv_close(srv);
		smarm__obs_trace_close(n, tr);
		return rc;
	}
	if (srv == NULL && tr == NULL && cw == NULL)
		return 0; /* none asked for: no state at all */
	if ((on = calloc(1, sizeof *on)) == NULL) {
		srv_close(srv);
		smarm__obs_trace_close(n, tr);
		smarm__obs_causal_close(cw);
		return SMARM_ENOMEM;
	}
	on->on_srv = srv;
	on->on_trace = tr;
	on->on_causal = cw;
	*state = on;
	return 0;
}

static void obs_close(struct smarm_node *n, void *state)
{
	struct obs_node *on = state;
	if (on == NULL)
		return;
	srv_close(on->on_srv);
	smarm__obs_causal_close(on->on_causal);
	smarm__obs_trace_close(n, on->on_trace);
	free(on);
}

/* A run ended: its last events go to the file now. */
static void obs_run_end(struct smarm_node *n, void *state)
{
	struct obs_node *on = state;
	(void)n;
	if (on != NULL)
		smarm__obs_trace_kick(on->on_trace);
}

static int obs_get_stat(const struct smarm_node *n, const void *state, int stat,
			int64_t *out)
{
	const struct obs_node *on = state;
	const struct smarm__causal *cz = smarm__causal_of(n);
	switch (stat) {
	case SMARM_STAT_TRACE_DROPPED:
		*out = on != NULL
			       ? (int64_t)smarm__obs_trace_dropped(on->on_trace)
			       : 0;
		return 0;
	case SMARM_STAT_CAUSAL_EXPERIMENTS:
		*out = (int64_t)atomic_load(&cz->cz_done);
		return 0;
	case SMARM_STAT_CAUSAL_DELAY_NS:
		*out = (int64_t)atomic_load(&cz->cz_global);
		return 0;
	default:
		return SMARM_EINVAL;
	}
}

const struct smarm__subsys smarm__obs_subsys = {
	.ss_name = "obs",
	.ss_open = obs_open,
	.ss_close = obs_close,
	.ss_run_end = obs_run_end,
	.ss_get_stat = obs_get_stat,
};
