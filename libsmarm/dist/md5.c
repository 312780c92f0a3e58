/* SPDX-License-Identifier: MIT */
/*
 * dist/md5.c - MD5 (RFC 1321), which the distribution handshake uses for
 * its cookie digests, and the digest itself: MD5 of the cookie followed
 * by the peer's challenge in decimal.
 *
 * Ownership: nothing; pure functions. Locking: none.
 * Invariants: INV-1 the digest of the handshake is computed over at most
 * SMARM_DIST_COOKIE_MAX + 10 bytes, on the caller's stack.
 * See: docs/distribution.md.
 */
#include "dist.h"

#include <stdio.h>
#include <string.h>

struct md5 {
	uint32_t h[4];
	uint64_t len;
	uint8_t buf[64];
};

static const uint32_t md5_k[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
	0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
	0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
	0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
	0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
	0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
	0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
	0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
	0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

static const uint8_t md5_r[64] = {
	7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
	5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
	4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
	6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};

static void md5_block(struct md5 *m, const uint8_t *p)
{
	uint32_t w[16];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
		       (uint32_t)p[4 * i + 2] << 16 |
		       (uint32_t)p[4 * i + 3] << 24;
	uint32_t a = m->h[0], b = m->h[1], c = m->h[2], d = m->h[3];
	for (int i = 0; i < 64; i++) {
		uint32_t f;
		int g;
		if (i < 16) {
			f = (b & c) | (~b & d);
			g = i;
		} else if (i < 32) {
			f = (d & b) | (~d & c);
			g = (5 * i + 1) & 15;
		} else if (i < 48) {
			f = b ^ c ^ d;
			g = (3 * i + 5) & 15;
		} else {
			f = c ^ (b | ~d);
			g = (7 * i) & 15;
		}
		uint32_t t = d;
		d = c;
		c = b;
		uint32_t x = a + f + md5_k[i] + w[g];
		b = b + ((x << md5_r[i]) | (x >> (32 - md5_r[i])));
		a = t;
	}
	m->h[0] += a;
	m->h[1] += b;
	m->h[2] += c;
	m->h[3] += d;
}

void smarm__md5(const void *data, size_t len, uint8_t out[16])
{
	struct md5 m = { { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 },
			 0,
			 { 0 } };
	const uint8_t *p = data;
	size_t used = 0;
	m.len = (uint64_t)len * 8;
	for (; len - used >= 64; used += 64)
		md5_block(&m, p + used);
	size_t rest = len - used;
	memcpy(m.buf, p + used, rest);
	m.buf[rest++] = 0x80;
	if (rest > 56) {
		memset(m.buf + rest, 0, 64 - rest);
		md5_block(&m, m.buf);
		rest = 0;
	}
	memset(m.buf + rest, 0, 56 - rest);
	for (int i = 0; i < 8; i++)
		m.buf[56 + i] = (uint8_t)(m.len >> (8 * i));
	md5_block(&m, m.buf);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (uint8_t)(m.h[i] >> (8 * j));
}

void smarm__dist_digest(const char *cookie, uint32_t challenge, uint8_t out[16])
{
	char buf[SMARM_DIST_COOKIE_MAX + 16]; /* INV-1 */
	int n = snprintf(buf, sizeof buf, "%s%u", cookie, challenge);
	SMARM_ASSERT(n > 0 && (size_t)n < sizeof buf);
	smarm__md5(buf, (size_t)n, out);
}
