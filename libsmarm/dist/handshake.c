/* SPDX-License-Identifier: MIT */
/*
 * dist/handshake.c - the distribution handshake, version 6 (OTP 23 and
 * later), on both sides: the initiator sends its name ('N'), hears the
 * status ('s'), gets the acceptor's challenge ('N'), answers it with
 * MD5(cookie ++ challenge) and its own challenge ('r'), and checks the
 * acceptor's digest of that ('a'); the acceptor does the mirror image.
 * Each side proves it knows the cookie without sending it, and each
 * checks the other: a peer that fails the check is refused with a log
 * line, and its connection closed.
 *
 * Ownership: the fd stays the caller's. Locking: none.
 * Invariants:
 *   INV-1 every message is read whole into a bounded buffer: a length
 *         over HS_MAX is a refusal, not an allocation.
 *   INV-2 every read is bounded by DIST_SETUP_NS from the handshake's
 *         start: a peer that stops talking fails it.
 *   INV-3 challenges come from getrandom(2); digests are compared in
 *         constant time.
 *   INV-4 a peer must offer OTP 25's mandatory flags (or their digest
 *         flag) and the v6 handshake; anything less is refused.
 *   INV-5 the status an acceptor sends is its arbiter's verdict (conn.c
 *         keeps the table it is decided on): of two nodes connecting to
 *         each other at once, the one with the greater name answers nok
 *         and the other ok_simultaneous, as OTP's net_kernel does; an
 *         initiator told nok, or displaced, returns DIST_GAVE_WAY and
 *         logs nothing (no failure: the peer's attempt stands).
 * See: docs/distribution.md ("Handshake").
 */
#include "dist.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#define HS_MAX (1 + 8 + 4 + 4 + 2 + SMARM_DIST_NODE_MAX) /* INV-1 */

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* One handshake message into buf (HS_MAX bytes): 0 with *len. */
static int hs_recv(int fd, uint8_t *buf, size_t *len, uint64_t deadline)
{
	uint8_t hdr[2];
	int rc = smarm__dist_read_full(fd, hdr, 2, deadline);
	if (rc != 0)
		return SMARM_ENOCONN;
	size_t n = (size_t)hdr[0] << 8 | hdr[1];
	if (n == 0 || n > HS_MAX)
		return SMARM_EAUTH; /* INV-1 */
	if (smarm__dist_read_full(fd, buf, n, deadline) != 0)
		return SMARM_ENOCONN;
	*len = n;
	return 0;
}

static int hs_send(int fd, const uint8_t *body, size_t n)
{
	uint8_t buf[2 + HS_MAX];
	SMARM_ASSERT(n <= HS_MAX);
	put16(buf, (uint32_t)n);
	memcpy(buf + 2, body, n);
	return smarm__dist_write_full(fd, buf, n + 2);
}

static uint32_t challenge(void)
{
	uint32_t c = 0;
	while (getrandom(&c, sizeof c, 0) != sizeof c) /* INV-3 */
		if (errno != EINTR && errno != EAGAIN)
			break;
	return c;
}

static bool digest_eq(const uint8_t *a, const uint8_t *b)
{
	uint8_t x = 0;
	for (int i = 0; i < 16; i++)
		x |= a[i] ^ b[i]; /* INV-3 */
	return x == 0;
}

static bool flags_ok(uint64_t f)
{
	/* INV-4 */
	if ((f & DFLAG_HANDSHAKE_23) == 0)
		return false;
	return (f & DFLAG_MANDATORY_25_DIGEST) != 0 ||
	       (f & DIST_MANDATORY_25) == DIST_MANDATORY_25;
}

/* The 'N' message with our name; challenge only for the acceptor's. */
static size_t put_n(smarm_dist_t *d, uint8_t *b, bool with_challenge,
		    uint32_t chal)
{
	size_t nl = strlen(d->d_name), i = 0;
	b[i++] = 'N';
	put64(b + i, DIST_OUR_FLAGS);
	i += 8;
	if (with_challenge) {
		put32(b + i, chal);
		i += 4;
	}
	put32(b + i, d->d_creation);
	i += 4;
	put16(b + i, (uint32_t)nl);
	i += 2;
	memcpy(b + i, d->d_name, nl);
	return i + nl;
}

int smarm__hs_initiate(smarm_dist_t *d, int fd, const char *peer,
		       uint64_t *flags, uint32_t *creation,
		       bool (*pending)(void *), void *arg)
{
	uint64_t deadline = smarm_now_ns() + DIST_SETUP_NS; /* INV-2 */
	uint8_t b[HS_MAX];
	size_t n = put_n(d, b, false, 0);
	if (hs_send(fd, b, n) != 0)
		return SMARM_ENOCONN;
	int rc = hs_recv(fd, b, &n, deadline);
	if (rc != 0)
		return pending(arg) ? rc : DIST_GAVE_WAY;
	if (b[0] != 's')
		goto proto;
	if (n == 4 && memcmp(b + 1, "nok", 3) == 0) {
		smarm__dist_log(d, SMARM_LOG_DEBUG,
				"dist: %s told us nok: its connection to us "
				"stands",
				peer);
		return DIST_GAVE_WAY; /* INV-5 */
	}
	if (n == 6 && memcmp(b + 1, "alive", 5) == 0) {
		/* The peer thinks a connection of ours lives. We have none
		 * up (we are connecting): tell it to drop that one, unless
		 * this attempt was displaced meanwhile (OTP's is_pending). */
		if (!pending(arg)) {
			hs_send(fd, (const uint8_t *)"sfalse", 6);
			return DIST_GAVE_WAY;
		}
		if (hs_send(fd, (const uint8_t *)"strue", 5) != 0)
			return SMARM_ENOCONN;
	} else if (!((n == 3 && memcmp(b + 1, "ok", 2) == 0) ||
		     (n == 16 && memcmp(b + 1, "ok_simultaneous", 15) == 0))) {
		smarm__dist_log(d, SMARM_LOG_WARNING,
				"dist: %s refused the connection (status "
				"'%.*s')",
				peer, (int)(n - 1), (const char *)b + 1);
		return SMARM_EAUTH;
	}
	rc = hs_recv(fd, b, &n, deadline);
	if (rc != 0)
		return pending(arg) ? rc : DIST_GAVE_WAY;
	if (b[0] != 'N' || n < 19 || n != 19 + (size_t)(b[17] << 8 | b[18]))
		goto proto;
	uint64_t f = get64(b + 1);
	uint32_t their = get32(b + 9);
	*creation = get32(b + 13);
	if (!flags_ok(f)) {
		smarm__dist_log(d, SMARM_LOG_WARNING,
				"dist: %s lacks OTP 25's mandatory flags "
				"(0x%llx); refused",
				peer, (unsigned long long)f);
		return SMARM_EAUTH;
	}
	uint32_t ours = challenge();
	uint8_t r[21];
	r[0] = 'r';
	put32(r + 1, ours);
	smarm__dist_digest(d->d_cookie, their, r + 5);
	if (hs_send(fd, r, sizeof r) != 0)
		return SMARM_ENOCONN;
	rc = hs_recv(fd, b, &n, deadline);
	if (rc != 0 && !pending(arg))
		return DIST_GAVE_WAY; /* displaced: its fd was shut down */
	if (rc == SMARM_ENOCONN) {
		/* The acceptor closes without a word when our digest is
		 * wrong: the cookies differ. */
		smarm__dist_log(d, SMARM_LOG_WARNING,
				"dist: %s closed the handshake after our "
				"digest: is the cookie the same?",
				peer);
		return SMARM_EAUTH;
	}
	if (rc != 0)
		return rc;
	uint8_t want[16];
	smarm__dist_digest(d->d_cookie, ours, want);
	if (b[0] != 'a' || n != 17 || !digest_eq(b + 1, want)) {
		smarm__dist_log(d, SMARM_LOG_WARNING,
				"dist: %s failed the cookie check; refused",
				peer);
		return SMARM_EAUTH;
	}
	*flags = f;
	return 0;
proto:
	smarm__dist_log(d, SMARM_LOG_WARNING,
			"dist: malformed handshake message from %s", peer);
	return SMARM_EAUTH;
}

int smarm__hs_accept(smarm_dist_t *d, int fd, char *peer, size_t cap,
		     uint64_t *flags, uint32_t *creation,
		     const struct hs_arbiter *arb)
{
	uint64_t deadline = smarm_now_ns() + DIST_SETUP_NS; /* INV-2 */
	uint8_t b[HS_MAX];
	size_t n;
	int rc = hs_recv(fd, b, &n, deadline);
	if (rc == SMARM_EAUTH)
		smarm__dist_log(d, SMARM_LOG_WARNING,
				"dist: refused a connection: handshake "
				"message of a bad length");
	if (rc != 0)
		return rc;
	if (b[0] != 'N' || n < 15 || n != 15 + (size_t)(b[13] << 8 | b[14]) ||
	    n - 15 >= cap) {
		smarm__dist_log(d, SMARM_LOG_WARNING,
				"dist: refused a connection: not a version 6 "
				"handshake (first byte '%c')",
				b[0] >= 32 && b[0] < 127 ? b[0] : '?');
		return SMARM_EAUTH;
	}
	uint64_t f = get64(b + 1);
	*creation = get32(b + 9);
	memcpy(peer, b + 15, n - 15);
	peer[n - 15] = '\0';
	char alive[SMARM_DIST_NODE_MAX + 1];
	const char *host;
	if (smarm__dist_split(peer, alive, sizeof alive, &host) != 0 ||
	    strlen(peer) != n - 15) {
		smarm__dist_log(d, SMARM_LOG_WARNING,
				"dist: refused a connection: malformed node "
				"name");
		return SMARM_EAUTH;
	}
	if (!flags_ok(f)) {
		hs_send(fd, (const uint8_t *)"snot_allowed", 12);
		smarm__dist_log(d, SMARM_LOG_WARNING,
				"dist: refused %s: it lacks OTP 25's mandatory "
				"flags (0x%llx)",
				peer, (unsigned long long)f);
		return SMARM_EAUTH;
	}
	int verdict = arb->verdict(arb->arg, peer); /* INV-5 */
	if (verdict == HS_NOK) {
		/* Our own attempt to peer goes on (our name is the greater)
		 * or one from peer is under way already. */
		hs_send(fd, (const uint8_t *)"snok", 4);
		smarm__dist_log(d, SMARM_LOG_DEBUG,
				"dist: %s connects to us while a connection "
				"to it is being made; told nok",
				peer);
		return DIST_GAVE_WAY;
	}
	if (verdict == HS_ALIVE) {
		/* A connection to peer is up here: ask whether it is to be
		 * replaced (the peer lost it and we have not noticed). */
		if (hs_send(fd, (const uint8_t *)"salive", 6) != 0)
			return SMARM_ENOCONN;
		rc = hs_recv(fd, b, &n, deadline);
		if (rc != 0)
			return rc;
		if (n == 6 && memcmp(b, "sfalse", 6) == 0)
			return DIST_GAVE_WAY;
		if (n != 5 || memcmp(b, "strue", 5) != 0) {
			smarm__dist_log(d, SMARM_LOG_WARNING,
					"dist: refused %s: bad answer to "
					"status alive",
					peer);
			return SMARM_EAUTH;
		}
		if (arb->displace(arb->arg, peer) != HS_GO)
			return DIST_GAVE_WAY;
	} else if (verdict == HS_SIMULTANEOUS) {
		smarm__dist_log(d, SMARM_LOG_DEBUG,
				"dist: %s connects to us while we connect to "
				"it; ours gives way (ok_simultaneous)",
				peer);
		if (hs_send(fd, (const uint8_t *)"sok_simultaneous", 16) != 0)
			return SMARM_ENOCONN;
	} else if (hs_send(fd, (const uint8_t *)"sok", 3) != 0) {
		return SMARM_ENOCONN;
	}
	uint32_t ours = challenge();
	n = put_n(d, b, true, ours);
	if (hs_send(fd, b, n) != 0)
		return SMARM_ENOCONN;
	rc = hs_recv(fd, b, &n, deadline);
	if (rc != 0)
		return rc;
	uint8_t want[16];
	smarm__dist_digest(d->d_cookie, ours, want);
	if (b[0] != 'r' || n != 21 || !digest_eq(b + 5, want)) {
		smarm__dist_log(d, SMARM_LOG_WARNING,
				"dist: refused %s: wrong cookie (its digest "
				"does not match)",
				peer);
		return SMARM_EAUTH;
	}
	uint8_t a[17];
	a[0] = 'a';
	smarm__dist_digest(d->d_cookie, get32(b + 1), a + 1);
	if (hs_send(fd, a, sizeof a) != 0)
		return SMARM_ENOCONN;
	*flags = f;
	return 0;
}
