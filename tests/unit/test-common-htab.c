// SPDX-License-Identifier: MIT
/*
 * The generic hash index (src/common/htab.c): every row found again after
 * the index grew many times, no row found that was not added, colliding
 * hashes told apart by the caller's equality, clearing, the rows' array
 * kept and grown, and the hashes' spread over the low bits a small table
 * keeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/htab.h"
#include "test.h"

struct rows {
	uint64_t *key;
	size_t n;
};

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct rows *r = ctx;

	return r->key[idx] == *(const uint64_t *)key;
}

/* A deliberately poor hash (8 values): probes must walk past collisions. */
static uint32_t bad_hash(uint64_t k)
{
	return (uint32_t)(k % 8);
}

static void fill_and_find(uint32_t (*hash)(uint64_t), size_t n)
{
	struct rows r = { calloc(n, sizeof(uint64_t)), 0 };
	struct sfp_htab t = { 0 };
	size_t i;

	ASSERT_NOT_NULL(r.key);
	for (i = 0; i < n; i++) {
		uint64_t k = i * 7919 + 3;

		ASSERT_EQ(sfp_htab_find(&t, hash(k), key_eq, &r, &k),
			  SFP_HTAB_NONE);
		r.key[r.n] = k;
		ASSERT_OK(sfp_htab_add(&t, hash(k), (uint32_t)r.n));
		r.n++;
	}
	ASSERT_EQ(t.n, n);
	ASSERT_TRUE(t.cap >= 2 * n);	/* the load stays under 1/2 */
	for (i = 0; i < n; i++) {
		uint64_t k = i * 7919 + 3, miss = i * 7919 + 4;

		ASSERT_EQ(sfp_htab_find(&t, hash(k), key_eq, &r, &k), i);
		ASSERT_EQ(sfp_htab_find(&t, hash(miss), key_eq, &r, &miss),
			  SFP_HTAB_NONE);
	}
	sfp_htab_free(&t);
	ASSERT_EQ(t.cap, 0);
	free(r.key);
}

static uint32_t good_hash(uint64_t k)
{
	return sfp_hash64(k, 1);
}

TEST(grows_and_finds)
{
	fill_and_find(good_hash, 100000);
	fill_and_find(bad_hash, 2000);
}

TEST(clear_keeps_slots)
{
	uint64_t keys[3] = { 10, 20, 30 };
	struct rows r = { keys, 3 };
	struct sfp_htab t = { 0 };
	size_t cap;

	for (uint32_t i = 0; i < 3; i++)
		ASSERT_OK(sfp_htab_add(&t, good_hash(keys[i]), i));
	cap = t.cap;
	sfp_htab_clear(&t);
	ASSERT_EQ(t.n, 0);
	ASSERT_EQ(t.cap, cap);
	ASSERT_EQ(sfp_htab_find(&t, good_hash(20), key_eq, &r, &keys[1]),
		  SFP_HTAB_NONE);
	ASSERT_OK(sfp_htab_add(&t, good_hash(20), 1));
	ASSERT_EQ(sfp_htab_find(&t, good_hash(20), key_eq, &r, &keys[1]), 1);
	ASSERT_ERR(sfp_htab_add(&t, 0, SFP_HTAB_NONE), -EINVAL);
	sfp_htab_free(&t);
}

/* The rows' array: grown to hold what is asked, its rows kept, and
 * never to a row number the index cannot hold. */
TEST(rows_reserve)
{
	uint64_t *rows = NULL;
	size_t cap = 0;

	ASSERT_OK(SFP_HTAB_ROWS_RESERVE(rows, cap, 1));
	ASSERT_EQ(cap, 64);
	rows[0] = 42;
	ASSERT_OK(SFP_HTAB_ROWS_RESERVE(rows, cap, 64));
	ASSERT_EQ(cap, 64);
	ASSERT_OK(SFP_HTAB_ROWS_RESERVE(rows, cap, 65));
	ASSERT_EQ(cap, 128);
	ASSERT_EQ(rows[0], 42);
	ASSERT_ERR(SFP_HTAB_ROWS_RESERVE(rows, cap, (size_t)SFP_HTAB_NONE),
		   -ENOMEM);
	ASSERT_EQ(cap, 128);
	free(rows);
}

/* Keys that differ only in their high bits (addresses, pid << 32) must
 * still spread over the 8 low bits a 256-slot table keeps. */
TEST(hash_spreads)
{
	bool seen[256] = { false };
	size_t distinct = 0;

	for (uint64_t i = 0; i < 256; i++) {
		uint32_t h = sfp_hash64(i << 40, 0) & 255;

		if (!seen[h]) {
			seen[h] = true;
			distinct++;
		}
	}
	ASSERT_GE(distinct, 128);
	ASSERT_NE(sfp_hash_str("abc"), sfp_hash_str("abd"));
	ASSERT_EQ(sfp_hash_str(""), 2166136261u);
}
