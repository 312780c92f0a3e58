/* SPDX-License-Identifier: MIT */
/*
 * dist/etf.c - a bounded reader of Erlang's external term format: the
 * control messages of the distribution protocol (tuples of small
 * integers, atoms and pids) and a check that a payload is one complete
 * term, plus the pid encoder.
 *
 * Why not ei_decode_*: erl_interface's decoders take no buffer length
 * and trust the bytes, so a peer's malformed frame could make them read
 * past it. Everything read from the wire goes through this file first;
 * ei's encoders (which only write into buffers they size) build what we
 * send (conn.c), and ei's decoders remain usable on what a mailbox
 * holds, since it was checked here.
 *
 * Ownership: nothing; the reader borrows the caller's bytes.
 * Locking: none.
 * Invariants:
 *   INV-1 no read goes past r->n: every length is checked against the
 *         bytes left before it is used.
 *   INV-2 smarm__etf_skip is iterative: its work list is a count of
 *         terms still owed, which never exceeds the bytes left (each
 *         term takes at least one), so nesting costs no stack.
 * See: docs/distribution.md.
 */
#include "dist.h"

#include <string.h>

enum {
	TAG_NEW_FLOAT = 70,
	TAG_BIT_BINARY = 77,
	TAG_NEW_PID = 88,
	TAG_NEW_PORT = 89,
	TAG_NEWER_REF = 90,
	TAG_SMALL_INT = 97,
	TAG_INT = 98,
	TAG_FLOAT = 99,
	TAG_ATOM = 100,
	TAG_REF = 101,
	TAG_PORT = 102,
	TAG_PID = 103,
	TAG_SMALL_TUPLE = 104,
	TAG_LARGE_TUPLE = 105,
	TAG_NIL = 106,
	TAG_STRING = 107,
	TAG_LIST = 108,
	TAG_BINARY = 109,
	TAG_SMALL_BIG = 110,
	TAG_LARGE_BIG = 111,
	TAG_NEW_FUN = 112,
	TAG_EXPORT = 113,
	TAG_NEW_REF = 114,
	TAG_SMALL_ATOM = 115,
	TAG_MAP = 116,
	TAG_ATOM_UTF8 = 118,
	TAG_SMALL_ATOM_UTF8 = 119,
	TAG_V4_PORT = 120,
};

static bool has(const struct etf_rd *r, size_t k)
{
	return r->n - r->i >= k; /* INV-1: i <= n always */
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

int smarm__etf_tuple(struct etf_rd *r, uint32_t *arity)
{
	if (!has(r, 2))
		return -1;
	if (r->p[r->i] == TAG_SMALL_TUPLE) {
		*arity = r->p[r->i + 1];
		r->i += 2;
		return 0;
	}
	if (r->p[r->i] == TAG_LARGE_TUPLE && has(r, 5)) {
		*arity = be32(r->p + r->i + 1);
		r->i += 5;
		return 0;
	}
	return -1;
}

int smarm__etf_int(struct etf_rd *r, int64_t *v)
{
	if (has(r, 2) && r->p[r->i] == TAG_SMALL_INT) {
		*v = r->p[r->i + 1];
		r->i += 2;
		return 0;
	}
	if (has(r, 5) && r->p[r->i] == TAG_INT) {
		*v = (int32_t)be32(r->p + r->i + 1);
		r->i += 5;
		return 0;
	}
	return -1;
}

int smarm__etf_atom(struct etf_rd *r, char *buf, size_t cap)
{
	size_t len, hdr;
	if (!has(r, 2))
		return -1;
	switch (r->p[r->i]) {
	case TAG_ATOM:
	case TAG_ATOM_UTF8:
		if (!has(r, 3))
			return -1;
		len = be16(r->p + r->i + 1);
		hdr = 3;
		break;
	case TAG_SMALL_ATOM:
	case TAG_SMALL_ATOM_UTF8:
		len = r->p[r->i + 1];
		hdr = 2;
		break;
	default:
		return -1;
	}
	if (!has(r, hdr + len) || len + 1 > cap)
		return -1;
	memcpy(buf, r->p + r->i + hdr, len);
	buf[len] = '\0';
	if (memchr(buf, '\0', len) != NULL)
		return -1; /* we keep names as C strings */
	r->i += hdr + len;
	return 0;
}

int smarm__etf_pid(struct etf_rd *r, struct dist_epid *pid)
{
	if (!has(r, 1))
		return -1;
	uint8_t tag = r->p[r->i];
	if (tag != TAG_NEW_PID && tag != TAG_PID)
		return -1;
	struct etf_rd save = *r;
	r->i++;
	if (smarm__etf_atom(r, pid->node, sizeof pid->node) != 0)
		goto bad;
	size_t tail = tag == TAG_NEW_PID ? 12 : 9;
	if (!has(r, tail))
		goto bad;
	pid->num = be32(r->p + r->i);
	pid->serial = be32(r->p + r->i + 4);
	pid->creation =
		tag == TAG_NEW_PID ? be32(r->p + r->i + 8) : r->p[r->i + 8];
	r->i += tail;
	return 0;
bad:
	*r = save;
	return -1;
}

int smarm__etf_skip(struct etf_rd *r)
{
	size_t owed = 1; /* INV-2 */
	while (owed > 0) {
		if (!has(r, 1))
			return -1;
		uint8_t tag = r->p[r->i++];
		size_t fixed = 0, more = 0;
		owed--;
		switch (tag) {
		case TAG_SMALL_INT:
			fixed = 1;
			break;
		case TAG_INT:
			fixed = 4;
			break;
		case TAG_NEW_FLOAT:
			fixed = 8;
			break;
		case TAG_FLOAT:
			fixed = 31;
			break;
		case TAG_NIL:
			break;
		case TAG_ATOM:
		case TAG_ATOM_UTF8:
		case TAG_STRING:
			if (!has(r, 2))
				return -1;
			fixed = 2 + (size_t)be16(r->p + r->i);
			break;
		case TAG_SMALL_ATOM:
		case TAG_SMALL_ATOM_UTF8:
			if (!has(r, 1))
				return -1;
			fixed = 1 + (size_t)r->p[r->i];
			break;
		case TAG_BINARY:
			if (!has(r, 4))
				return -1;
			fixed = 4 + (size_t)be32(r->p + r->i);
			break;
		case TAG_BIT_BINARY:
			if (!has(r, 4))
				return -1;
			fixed = 5 + (size_t)be32(r->p + r->i);
			break;
		case TAG_SMALL_BIG:
			if (!has(r, 1))
				return -1;
			fixed = 2 + (size_t)r->p[r->i];
			break;
		case TAG_LARGE_BIG:
			if (!has(r, 4))
				return -1;
			fixed = 5 + (size_t)be32(r->p + r->i);
			break;
		case TAG_NEW_FUN:
			/* Size counts itself and everything after the tag. */
			if (!has(r, 4) || be32(r->p + r->i) < 4)
				return -1;
			fixed = be32(r->p + r->i);
			break;
		case TAG_SMALL_TUPLE:
			if (!has(r, 1))
				return -1;
			more = r->p[r->i];
			fixed = 1;
			break;
		case TAG_LARGE_TUPLE:
			if (!has(r, 4))
				return -1;
			more = be32(r->p + r->i);
			fixed = 4;
			break;
		case TAG_LIST:
			if (!has(r, 4))
				return -1;
			more = (size_t)be32(r->p + r->i) + 1; /* and the tail */
			fixed = 4;
			break;
		case TAG_MAP:
			if (!has(r, 4))
				return -1;
			more = 2 * (size_t)be32(r->p + r->i);
			fixed = 4;
			break;
		case TAG_EXPORT:
			more = 3;
			break;
		case TAG_PID:
		case TAG_NEW_PID:
		case TAG_PORT:
		case TAG_NEW_PORT:
		case TAG_V4_PORT: {
			/* The node atom, then fixed fields. */
			char node[SMARM_DIST_NODE_MAX + 1];
			if (smarm__etf_atom(r, node, sizeof node) != 0)
				return -1;
			fixed = tag == TAG_PID	      ? 9
				: tag == TAG_NEW_PID  ? 12
				: tag == TAG_PORT     ? 5
				: tag == TAG_NEW_PORT ? 8
						      : 12;
			break;
		}
		case TAG_REF:
		case TAG_NEW_REF:
		case TAG_NEWER_REF: {
			char node[SMARM_DIST_NODE_MAX + 1];
			size_t words = 1;
			if (tag != TAG_REF) {
				if (!has(r, 2))
					return -1;
				words = be16(r->p + r->i);
				r->i += 2;
			}
			if (words > 5 ||
			    smarm__etf_atom(r, node, sizeof node) != 0)
				return -1;
			fixed = (tag == TAG_NEWER_REF ? 4 : 1) + 4 * words;
			break;
		}
		default:
			return -1; /* atom cache refs, old funs, local: no */
		}
		if (!has(r, fixed))
			return -1;
		r->i += fixed;
		if (more > r->n - r->i || owed + more > r->n - r->i)
			return -1; /* INV-2 */
		owed += more;
	}
	return 0;
}

bool smarm__etf_valid(const void *buf, size_t len)
{
	struct etf_rd r = { buf, len, 0 };
	if (len < 2 || r.p[0] != 131)
		return false;
	r.i = 1;
	return smarm__etf_skip(&r) == 0 && r.i == len;
}

size_t smarm__etf_put_pid(uint8_t *buf, size_t cap, const struct dist_epid *pid)
{
	size_t nl = strlen(pid->node);
	size_t need = 1 + 3 + nl + 12;
	if (need > cap)
		return need;
	uint8_t *p = buf;
	*p++ = TAG_NEW_PID;
	*p++ = TAG_ATOM_UTF8;
	*p++ = (uint8_t)(nl >> 8);
	*p++ = (uint8_t)nl;
	memcpy(p, pid->node, nl);
	p += nl;
	uint32_t v[3] = { pid->num, pid->serial, pid->creation };
	for (int k = 0; k < 3; k++) {
		*p++ = (uint8_t)(v[k] >> 24);
		*p++ = (uint8_t)(v[k] >> 16);
		*p++ = (uint8_t)(v[k] >> 8);
		*p++ = (uint8_t)v[k];
	}
	return need;
}
