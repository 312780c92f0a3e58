/* SPDX-License-Identifier: MIT */
/*
 * obs_client.h - the client side of a node's introspection socket
 * (abi/smarm/obs.h, smarm_config_set_obs_socket; docs/observability.md,
 * "The socket"), shared by smarm-top and smarm-run --status: finding
 * and connecting to the socket, one request and its answer line, and a
 * small JSON reader for the answers.
 */
#ifndef SMARM_TOOLS_OBS_CLIENT_H
#define SMARM_TOOLS_OBS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Connect to target: a socket path, or the OS pid of a process serving
 * one (its listening Unix sockets are looked up in /proc). Returns the
 * connected fd, or -1 with a message in err. path (cap bytes) receives
 * the socket's path.
 */
int obsc_connect(const char *target, char *path, size_t cap, char *err,
		 size_t errcap);

/* Send req (no newline) and read the answer line: malloc'd, without its
 * newline, or NULL (the peer closed: refused, or an error). */
char *obsc_ask(int fd, const char *req);

/* A parsed JSON value. */
enum { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };
struct jv {
	int type;
	double num;	 /* JV_NUM, JV_BOOL (0 or 1) */
	int64_t i;	 /* JV_NUM, as an integer */
	char *str;	 /* JV_STR, NUL-terminated */
	struct jv *kids; /* JV_ARR, JV_OBJ: n of them */
	size_t n;
	char *key; /* a member's name (in an object) */
};

/* Parse text: 0 and *out (free with jv_free), or -1. */
int jv_parse(const char *text, struct jv *out);
void jv_free(struct jv *v);
/* Member key of object o, or NULL. */
const struct jv *jv_get(const struct jv *o, const char *key);
/* Convenience: a member's number (def if absent) or string ("" if absent). */
int64_t jv_int(const struct jv *o, const char *key, int64_t def);
const char *jv_str(const struct jv *o, const char *key);

#endif /* SMARM_TOOLS_OBS_CLIENT_H */
