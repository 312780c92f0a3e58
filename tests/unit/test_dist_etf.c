/* SPDX-License-Identifier: MIT */
/*
 * test_dist_etf.c - the distribution layer's pure parts, without a
 * peer: MD5 against RFC 1321's test vectors and the handshake digest;
 * the bounded term reader (dist/etf.c) on terms erl_interface encodes
 * (accepted whole, refused when cut anywhere or followed by a byte),
 * on control messages as OTP sends them, and on a million random and
 * mutated byte strings, none of which may make it read past its input
 * (each input sits at the very end of a guarded page) or loop.
 */
#include "harness.h"

#include "dist/dist.h"

#include <ei.h>
#include <string.h>
#include <sys/mman.h>

static void hex(const uint8_t d[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

START_TEST(test_dist_md5_matches_rfc1321_vectors)
{
	static const char *in[] = {
		"",
		"a",
		"abc",
		"message digest",
		"abcdefghijklmnopqrstuvwxyz",
		"12345678901234567890123456789012345678901234567890123456789012"
		"345678901234567890",
	};
	static const char *want[] = {
		"d41d8cd98f00b204e9800998ecf8427e",
		"0cc175b9c0f1b6a831c399e269772661",
		"900150983cd24fb0d6963f7d28e17f72",
		"f96b697d7cb7938d525a2f31aaf161d0",
		"c3fcd3d76192e4007dfb496cca67e13b",
		"57edf4a22be3c955ac49da2e2107b67a",
	};
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		uint8_t d[16];
		char h[33];
		smarm__md5(in[i], strlen(in[i]), d);
		hex(d, h);
		ck_assert_str_eq(h, want[i]);
	}
	/* The digest is MD5 of the cookie followed by the decimal
	 * challenge, unsigned. */
	uint8_t a[16], b[16];
	smarm__dist_digest("abc", 4294967295u, a);
	smarm__md5("abc4294967295", 13, b);
	ck_assert_mem_eq(a, b, 16);
}
END_TEST

/* A copy of len bytes ending exactly at a PROT_NONE page. */
static uint8_t *guarded(const void *src, size_t len, void **map, size_t *msz)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t data = (len + pg - 1) / pg * pg + pg;
	*msz = data + pg;
	*map = mmap(NULL, *msz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(*map, MAP_FAILED);
	mprotect((uint8_t *)*map + data, pg, PROT_NONE);
	uint8_t *p = (uint8_t *)*map + data - len;
	memcpy(p, src, len);
	return p;
}

static bool valid_guarded(const void *src, size_t len)
{
	void *map;
	size_t msz;
	uint8_t *p = guarded(src, len, &map, &msz);
	bool v = smarm__etf_valid(p, len);
	munmap(map, msz);
	return v;
}

/* A term with every kind the reader knows, as ei encodes it. */
static void rich_term(ei_x_buff *x)
{
	erlang_pid pid = { "n@h", 7, 1, 5 };
	erlang_ref ref = { "n@h", 3, { 1, 2, 3, 0, 0 }, 5 };
	ei_x_new_with_version(x);
	ei_x_encode_tuple_header(x, 12);
	ei_x_encode_atom(x, "atom");
	ei_x_encode_long(x, 7);
	ei_x_encode_long(x, -100000);
	ei_x_encode_longlong(x, 1ll << 40);
	ei_x_encode_double(x, 1.5);
	ei_x_encode_binary(x, "bytes", 5);
	ei_x_encode_string(x, "a string");
	ei_x_encode_pid(x, &pid);
	ei_x_encode_ref(x, &ref);
	ei_x_encode_list_header(x, 2);
	ei_x_encode_atom(x, "x");
	ei_x_encode_empty_list(x);
	ei_x_encode_empty_list(x);
	ei_x_encode_map_header(x, 1);
	ei_x_encode_atom(x, "k");
	ei_x_encode_tuple_header(x, 0);
	ei_x_encode_boolean(x, 1);
}

START_TEST(test_dist_etf_accepts_whole_terms_refuses_cut_ones)
{
	ei_x_buff x;
	rich_term(&x);
	size_t n = (size_t)x.index;
	ck_assert(valid_guarded(x.buff, n));
	for (size_t cut = 0; cut < n; cut++)
		ck_assert_msg(!valid_guarded(x.buff, cut), "cut at %zu", cut);
	uint8_t more[4096];
	ck_assert_uint_lt(n + 1, sizeof more);
	memcpy(more, x.buff, n);
	more[n] = 106;
	ck_assert(!valid_guarded(more, n + 1)); /* a trailing term */
	ei_x_free(&x);
}
END_TEST

START_TEST(test_dist_etf_reads_control_messages)
{
	/* {6, From, '', echo}: REG_SEND as OTP sends it. */
	ei_x_buff x;
	erlang_pid from = { "a@b", 77, 3, 99 };
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 4);
	ei_x_encode_long(&x, 6);
	ei_x_encode_pid(&x, &from);
	ei_x_encode_atom(&x, "");
	ei_x_encode_atom(&x, "echo");
	struct etf_rd r = { (const uint8_t *)x.buff, (size_t)x.index, 1 };
	uint32_t ar;
	int64_t op;
	struct dist_epid e;
	char name[64];
	ck_assert_int_eq(smarm__etf_tuple(&r, &ar), 0);
	ck_assert_uint_eq(ar, 4);
	ck_assert_int_eq(smarm__etf_int(&r, &op), 0);
	ck_assert_int_eq(op, 6);
	ck_assert_int_eq(smarm__etf_pid(&r, &e), 0);
	ck_assert_str_eq(e.node, "a@b");
	ck_assert_uint_eq(e.num, 77);
	ck_assert_uint_eq(e.serial, 3);
	ck_assert_uint_eq(e.creation, 99);
	ck_assert_int_eq(smarm__etf_skip(&r), 0);
	ck_assert_int_eq(smarm__etf_atom(&r, name, sizeof name), 0);
	ck_assert_str_eq(name, "echo");
	ck_assert_uint_eq(r.i, (size_t)x.index);
	/* An atom longer than the caller's buffer is refused, not cut. */
	r.i = (size_t)x.index - 6;
	ck_assert_int_eq(smarm__etf_atom(&r, name, 4), -1);
	ei_x_free(&x);
	/* Our pid encoder round-trips through the reader, full 32 bits. */
	struct dist_epid big = { "smarm@host", 0xfedcba98u, 0x89abcdefu,
				 0x12345678u },
			 back;
	uint8_t b[64];
	size_t len = smarm__etf_put_pid(b, sizeof b, &big);
	struct etf_rd r2 = { b, len, 0 };
	ck_assert_int_eq(smarm__etf_pid(&r2, &back), 0);
	ck_assert_str_eq(back.node, big.node);
	ck_assert_uint_eq(back.num, big.num);
	ck_assert_uint_eq(back.serial, big.serial);
	ck_assert_uint_eq(back.creation, big.creation);
	ck_assert_uint_eq(smarm__etf_put_pid(b, 3, &big), len); /* size */
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

START_TEST(test_dist_etf_survives_random_and_mutated_input)
{
	ei_x_buff x;
	rich_term(&x);
	size_t n = (size_t)x.index;
	void *map;
	size_t msz;
	/* One guarded buffer, reused: inputs end at its guard page. */
	uint8_t *end = guarded(x.buff, n, &map, &msz) + n;
	long accepted = 0;
	for (int round = 0; round < 1000000; round++) {
		size_t len;
		uint8_t *p;
		if (round & 1) { /* a mutation of the rich term */
			len = n;
			p = end - len;
			memcpy(p, x.buff, n);
			for (int k = 1 + (int)(rnd() % 4); k > 0; k--)
				p[rnd() % n] = (uint8_t)rnd();
		} else { /* random bytes after the version */
			len = 1 + rnd() % 64;
			p = end - len;
			p[0] = 131;
			for (size_t k = 1; k < len; k++)
				p[k] = (uint8_t)(rnd() % 4 ? rnd() % 128 + 64
							   : rnd());
		}
		accepted += smarm__etf_valid(p, len);
	}
	fprintf(stderr, "# %ld of 1000000 random inputs were terms\n",
		accepted);
	munmap(map, msz);
	ei_x_free(&x);
}
END_TEST

Suite *smarm_test_dist_etf_suite(void)
{
	Suite *s = suite_create("dist_etf");
	TCase *tc = tcase_create("etf");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_dist_md5_matches_rfc1321_vectors);
	tcase_add_test(tc, test_dist_etf_accepts_whole_terms_refuses_cut_ones);
	tcase_add_test(tc, test_dist_etf_reads_control_messages);
	tcase_add_test(tc, test_dist_etf_survives_random_and_mutated_input);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(dist_etf)
