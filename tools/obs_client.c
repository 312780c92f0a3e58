/* SPDX-License-Identifier: MIT */
/*
 * obs_client.c - the introspection socket's client side (obs_client.h):
 * connect by path or by the serving process's pid, ask, and read the
 * JSON answers. Used by smarm-top and smarm-run --status; uses no
 * libsmarm call.
 *
 * Finding a process's socket: every socket fd of /proc/PID/fd is an
 * inode; /proc/net/unix lists the Unix sockets with their inode, flags
 * and path; the first listening one (flag __SO_ACCEPTCON) with a path
 * among the process's is the one (its address mapped back to the path
 * it was renamed to, bound_to_path). Reading another user's fds needs
 * privilege, which connecting would need anyway.
 * The JSON reader is recursive descent over the whole answer, enough
 * for what the server writes (objects, arrays, strings with \" \\ and
 * \uXXXX below 0x80, numbers, true, false, null); depth is bounded.
 * Ownership: every string and array of a parsed value belongs to it
 * (jv_free). Invariants: INV-1 a value that failed to parse is freed
 * whole before jv_parse returns.
 */
#include "obs_client.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define JV_DEPTH 64

/* ------------------------------------------------------------ connecting */

static bool all_digits(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/*
 * A node binds its socket as DIR/.NAME.XXXXXX/s and renames it to
 * DIR/NAME (libsmarm/obs/serve.c): the kernel still reports the first
 * address. Map it back in place when that is the case and DIR/NAME is
 * a socket.
 */
static void bound_to_path(char *p)
{
	char *s = strrchr(p, '/'), *d;
	char cand[256];
	struct stat st;
	size_t dl, nl;
	if (s == NULL || strcmp(s, "/s") != 0)
		return;
	*s = '\0';
	d = strrchr(p, '/');
	if (d == NULL || d[1] != '.' || (nl = strlen(d + 2)) < 8 ||
	    d[2 + nl - 7] != '.') {
		*s = '/';
		return;
	}
	dl = (size_t)(d - p);
	snprintf(cand, sizeof cand, "%.*s/%.*s", (int)dl, p, (int)(nl - 7),
		 d + 2);
	*s = '/';
	if (stat(cand, &st) == 0 && S_ISSOCK(st.st_mode))
		memcpy(p, cand, strlen(cand) + 1);
}

/* The listening socket path of process pid, into path: 0, or -1. */
static int path_of_pid(const char *pid, char *path, size_t cap)
{
	struct dirent *e;
	char dir[64], link[sizeof dir + sizeof e->d_name + 1], target[64];
	char line[512];
	unsigned long *inodes = NULL;
	size_t n = 0, capn = 0;
	FILE *f;
	DIR *d;
	int rc = -1;

	snprintf(dir, sizeof dir, "/proc/%s/fd", pid);
	d = opendir(dir);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		unsigned long ino;
		ssize_t k;
		snprintf(link, sizeof link, "%s/%s", dir, e->d_name);
		k = readlink(link, target, sizeof target - 1);
		if (k <= 0)
			continue;
		target[k] = '\0';
		if (sscanf(target, "socket:[%lu]", &ino) != 1)
			continue;
		if (n == capn) {
			unsigned long *m;
			capn = capn ? 2 * capn : 16;
			m = realloc(inodes, capn * sizeof *m);
			if (m == NULL)
				break;
			inodes = m;
		}
		inodes[n++] = ino;
	}
	closedir(d);
	f = fopen("/proc/net/unix", "r");
	while (f != NULL && rc != 0 && fgets(line, sizeof line, f) != NULL) {
		unsigned long refs, proto, flags, type, st, ino;
		char p[256];
		if (sscanf(line, "%*s %lx %lx %lx %lx %lx %lu %255s", &refs,
			   &proto, &flags, &type, &st, &ino, p) != 7)
			continue;
		if (!(flags & 0x10000)) /* __SO_ACCEPTCON: listening */
			continue;
		for (size_t i = 0; i < n; i++)
			if (inodes[i] == ino && p[0] == '/' &&
			    strlen(p) < cap) {
				bound_to_path(p);
				memcpy(path, p, strlen(p) + 1);
				rc = 0;
				break;
			}
	}
	if (f != NULL)
		fclose(f);
	free(inodes);
	return rc;
}

int obsc_connect(const char *target, char *path, size_t cap, char *err,
		 size_t errcap)
{
	struct sockaddr_un a;
	int fd;
	if (all_digits(target)) {
		if (path_of_pid(target, path, cap) != 0) {
			snprintf(err, errcap,
				 "process %s serves no introspection socket "
				 "(smarm-run -S PATH turns it on)",
				 target);
			return -1;
		}
	} else if (strlen(target) < cap) {
		memcpy(path, target, strlen(target) + 1);
	} else {
		snprintf(err, errcap, "%s: path too long", target);
		return -1;
	}
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a.sun_path) {
		snprintf(err, errcap, "%s: path too long", path);
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		snprintf(err, errcap, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

char *obsc_ask(int fd, const char *req)
{
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap);
	size_t len = strlen(req);
	char nl = '\n';
	if (buf == NULL || send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len ||
	    send(fd, &nl, 1, MSG_NOSIGNAL) != 1) {
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t r;
		char *nlp;
		if (cap - n < 4096) {
			char *m = realloc(buf, cap * 2);
			if (m == NULL)
				break;
			buf = m;
			cap *= 2;
		}
		r = recv(fd, buf + n, cap - n - 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		nlp = memchr(buf + n, '\n', (size_t)r);
		n += (size_t)r;
		if (nlp != NULL) {
			/* One answer per request: nothing follows it. */
			*nlp = '\0';
			return buf;
		}
	}
	free(buf);
	return NULL;
}

/* ------------------------------------------------------------------ JSON */

struct jp {
	const char *p;
	int depth;
};

static void ws(struct jp *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static int parse_value(struct jp *j, struct jv *v);

static int parse_string(struct jp *j, char **out)
{
	size_t cap = 16, n = 0;
	char *s = malloc(cap);
	if (s == NULL || *j->p != '"') {
		free(s);
		return -1;
	}
	j->p++;
	while (*j->p != '"') {
		char c = *j->p++;
		if (c == '\0') {
			free(s);
			return -1;
		}
		if (c == '\\') {
			char e = *j->p++;
			switch (e) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'u': {
				unsigned u = 0;
				if (sscanf(j->p, "%4x", &u) != 1) {
					free(s);
					return -1;
				}
				j->p += 4;
				c = u < 0x80 ? (char)u : '?';
				break;
			}
			case '\0':
				free(s);
				return -1;
			default:
				c = e; /* \" \\ \/ */
				break;
			}
		}
		if (n + 1 >= cap) {
			char *m = realloc(s, cap * 2);
			if (m == NULL) {
				free(s);
				return -1;
			}
			s = m;
			cap *= 2;
		}
		s[n++] = c;
	}
	j->p++;
	s[n] = '\0';
	*out = s;
	return 0;
}

/* Append a zeroed value to v's kids: NULL out of memory. */
static struct jv *kid_new(struct jv *v, size_t *cap)
{
	if (v->n == *cap) {
		size_t c = *cap ? 2 * *cap : 8;
		struct jv *m = realloc(v->kids, c * sizeof *m);
		if (m == NULL)
			return NULL;
		v->kids = m;
		*cap = c;
	}
	memset(&v->kids[v->n], 0, sizeof v->kids[0]);
	return &v->kids[v->n++];
}

static int parse_seq(struct jp *j, struct jv *v, bool obj)
{
	size_t cap = 0;
	char close = obj ? '}' : ']';
	v->type = obj ? JV_OBJ : JV_ARR;
	j->p++;
	ws(j);
	if (*j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		struct jv *k = kid_new(v, &cap);
		if (k == NULL)
			return -1;
		ws(j);
		if (obj) {
			if (parse_string(j, &k->key) != 0)
				return -1;
			ws(j);
			if (*j->p++ != ':')
				return -1;
		}
		if (parse_value(j, k) != 0)
			return -1;
		ws(j);
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p == close) {
			j->p++;
			return 0;
		}
		return -1;
	}
}

static int parse_value(struct jp *j, struct jv *v)
{
	int rc = -1;
	if (++j->depth > JV_DEPTH)
		return -1;
	ws(j);
	switch (*j->p) {
	case '{':
		rc = parse_seq(j, v, true);
		break;
	case '[':
		rc = parse_seq(j, v, false);
		break;
	case '"':
		v->type = JV_STR;
		rc = parse_string(j, &v->str);
		break;
	case 't':
	case 'f':
	case 'n':
		if (strncmp(j->p, "true", 4) == 0) {
			v->type = JV_BOOL;
			v->num = 1;
			v->i = 1;
			j->p += 4;
			rc = 0;
		} else if (strncmp(j->p, "false", 5) == 0) {
			v->type = JV_BOOL;
			j->p += 5;
			rc = 0;
		} else if (strncmp(j->p, "null", 4) == 0) {
			v->type = JV_NULL;
			j->p += 4;
			rc = 0;
		}
		break;
	default: {
		char *end;
		v->type = JV_NUM;
		v->num = strtod(j->p, &end);
		if (end != j->p) {
			/* Integers exactly (ids are 64-bit). */
			char *iend;
			long long ll = strtoll(j->p, &iend, 10);
			v->i = iend == end ? (int64_t)ll : (int64_t)v->num;
			j->p = end;
			rc = 0;
		}
		break;
	}
	}
	j->depth--;
	return rc;
}

int jv_parse(const char *text, struct jv *out)
{
	struct jp j = { text, 0 };
	memset(out, 0, sizeof *out);
	if (parse_value(&j, out) != 0) {
		jv_free(out); /* INV-1 */
		return -1;
	}
	return 0;
}

void jv_free(struct jv *v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < v->n; i++)
		jv_free(&v->kids[i]);
	free(v->kids);
	free(v->str);
	free(v->key);
	memset(v, 0, sizeof *v);
}

const struct jv *jv_get(const struct jv *o, const char *key)
{
	if (o == NULL || o->type != JV_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (o->kids[i].key != NULL && strcmp(o->kids[i].key, key) == 0)
			return &o->kids[i];
	return NULL;
}

int64_t jv_int(const struct jv *o, const char *key, int64_t def)
{
	const struct jv *v = jv_get(o, key);
	return v != NULL && (v->type == JV_NUM || v->type == JV_BOOL) ? v->i
								      : def;
}

const char *jv_str(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);
	return v != NULL && v->type == JV_STR ? v->str : "";
}
