// SPDX-License-Identifier: MIT
/*
 * The id-keyed table with deletion (src/common/idmap.c): clusters that
 * wrap around the end of the array, deletion in the middle of a cluster
 * (the entries after the hole move up only when their home allows),
 * growth, iteration and clearing, and a long random run of adds, finds
 * and deletes checked against a plain array after every step.
 */
#include <stdlib.h>
#include <string.h>

#include "common/idmap.h"
#include "test.h"

struct ent {
	uint32_t id;		/* first member: the table's key */
	uint32_t val;
	uint64_t pad;
	char name[8];		/* 24 bytes: not a power of two */
};

static size_t home_of(const struct sfp_idmap *m, uint32_t id)
{
	return sfp_hash64(id, 0) & (m->cap - 1);
}

static size_t slot_of(const struct sfp_idmap *m, const void *e)
{
	return (size_t)((const char *)e - (const char *)m->ents) / m->esz;
}

/* id's slot, or SIZE_MAX when it is not found */
static size_t slot_at(const struct sfp_idmap *m, uint32_t id)
{
	const void *e = sfp_idmap_find(m, id);

	return e ? slot_of(m, e) : SIZE_MAX;
}

/* id's value, or UINT32_MAX when it is not found */
static uint32_t val_of(const struct sfp_idmap *m, uint32_t id)
{
	const struct ent *e = sfp_idmap_find(m, id);

	return e ? e->val : UINT32_MAX;
}

static void del(struct sfp_idmap *m, uint32_t id)
{
	void *e = sfp_idmap_find(m, id);

	if (ASSERT_NOT_NULL(e))
		sfp_idmap_delete(m, e);
}

static struct ent *add(struct sfp_idmap *m, uint32_t id, uint32_t val)
{
	bool added;
	struct ent *e = sfp_idmap_get(m, id, &added);

	if (!ASSERT_NOT_NULL(e))
		return NULL;
	ASSERT_TRUE(added);
	ASSERT_EQ(e->id, id);
	ASSERT_EQ(e->val, 0);	/* zeroed */
	ASSERT_EQ(e->pad, 0);
	e->val = val;
	return e;
}

/* The n smallest ids from `from` on whose home is slot `want` of m. */
static void ids_at(const struct sfp_idmap *m, size_t want, uint32_t from,
		   uint32_t *out, size_t n)
{
	for (uint32_t id = from; n; id++)
		if (home_of(m, id) == want) {
			*out++ = id;
			n--;
		}
}

/* Every entry's probe from its home reaches it over used slots only. */
static bool check_chains(const struct sfp_idmap *m)
{
	size_t pos = 0, n = 0, mask = m->cap - 1;
	struct ent *e;

	while ((e = sfp_idmap_next(m, &pos))) {
		size_t i;

		for (i = home_of(m, e->id); i != slot_of(m, e);
		     i = (i + 1) & mask)
			if (!ASSERT_TRUE(sfp_idmap_used_at(m, i)))
				return false;
		if (!ASSERT_TRUE(sfp_idmap_find(m, e->id) == e))
			return false;
		n++;
	}
	return ASSERT_EQ(n, m->n);
}

TEST(cluster_wraps_around_the_end)
{
	struct sfp_idmap m;
	uint32_t last[3], first;

	sfp_idmap_init(&m, sizeof(struct ent), 8, 75);
	add(&m, 1000000, 1);	/* allocates the 8 slots */
	del(&m, 1000000);
	ASSERT_EQ(m.cap, 8);
	/* three homed at the last slot: they fill 7, 0, 1 */
	ids_at(&m, 7, 0, last, 3);
	ids_at(&m, 0, 0, &first, 1);
	for (int i = 0; i < 3; i++)
		add(&m, last[i], 10 + i);
	ASSERT_EQ(slot_at(&m, last[0]), 7);
	ASSERT_EQ(slot_at(&m, last[1]), 0);
	ASSERT_EQ(slot_at(&m, last[2]), 1);
	/* one homed at 0 goes after them */
	add(&m, first, 20);
	ASSERT_EQ(slot_at(&m, first), 2);
	check_chains(&m);

	/* the hole at 7: the rest moves back across the end, each one */
	del(&m, last[0]);
	ASSERT_TRUE(sfp_idmap_find(&m, last[0]) == NULL);
	ASSERT_EQ(slot_at(&m, last[1]), 7);
	ASSERT_EQ(slot_at(&m, last[2]), 0);
	ASSERT_EQ(slot_at(&m, first), 1);
	ASSERT_FALSE(sfp_idmap_used_at(&m, 2));
	ASSERT_EQ(val_of(&m, first), 20);
	check_chains(&m);

	/* the hole at 0: the entry homed at 0 moves in, the one homed at
	 * 7 stays */
	del(&m, last[2]);
	ASSERT_EQ(slot_at(&m, last[1]), 7);
	ASSERT_EQ(slot_at(&m, first), 0);
	ASSERT_FALSE(sfp_idmap_used_at(&m, 1));
	check_chains(&m);
	ASSERT_EQ(m.n, 2);
	sfp_idmap_free(&m);
	ASSERT_EQ(m.cap, 0);
	ASSERT_TRUE(sfp_idmap_find(&m, first) == NULL);
	/* freed, the table takes entries again as it was set up */
	add(&m, first, 30);
	ASSERT_EQ(m.cap, 8);
	ASSERT_EQ(val_of(&m, first), 30);
	sfp_idmap_free(&m);
}

TEST(delete_in_the_middle_of_a_cluster)
{
	struct sfp_idmap m;
	uint32_t at2[3], at3, at4;

	sfp_idmap_init(&m, sizeof(struct ent), 8, 75);
	add(&m, 1000000, 1);
	del(&m, 1000000);
	ids_at(&m, 2, 0, at2, 3);
	ids_at(&m, 3, 0, &at3, 1);
	ids_at(&m, 4, 0, &at4, 1);
	/* slots: 2 at2[0], 3 at2[1], 4 at3, 5 at4, 6 at2[2] */
	add(&m, at2[0], 1);
	add(&m, at2[1], 2);
	add(&m, at3, 3);
	add(&m, at4, 4);
	add(&m, at2[2], 5);
	ASSERT_EQ(slot_at(&m, at2[2]), 6);
	check_chains(&m);

	/* hole at 3: at3 (home 3) moves to 3, at4 (home 4) to 4, at2[2]
	 * (home 2) to 5 */
	del(&m, at2[1]);
	ASSERT_EQ(slot_at(&m, at3), 3);
	ASSERT_EQ(slot_at(&m, at4), 4);
	ASSERT_EQ(slot_at(&m, at2[2]), 5);
	ASSERT_FALSE(sfp_idmap_used_at(&m, 6));
	check_chains(&m);

	/* hole at 3 again, at4 at home: it stays, at2[2] jumps over it */
	del(&m, at3);
	ASSERT_EQ(slot_at(&m, at4), 4);
	ASSERT_EQ(slot_at(&m, at2[2]), 3);
	ASSERT_FALSE(sfp_idmap_used_at(&m, 5));
	ASSERT_EQ(val_of(&m, at2[2]), 5);
	check_chains(&m);
	sfp_idmap_free(&m);
}

TEST(grows_and_empties)
{
	const uint32_t n = 100000;
	struct sfp_idmap m;
	size_t pos = 0, seen = 0;
	struct ent *e;
	bool added;

	sfp_idmap_init(&m, sizeof(struct ent), 64, 75);
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_TRUE(sfp_idmap_find(&m, i * 7919) == NULL);
		add(&m, i * 7919, i);
	}
	ASSERT_EQ(m.n, n);
	ASSERT_TRUE(m.n * 100 <= m.cap * 75);
	ASSERT_TRUE(m.n * 100 > m.cap / 2 * 75);	/* not grown early */
	for (uint32_t i = 0; i < n; i++) {
		e = sfp_idmap_find(&m, i * 7919);
		if (!ASSERT_NOT_NULL(e))
			break;
		ASSERT_EQ(e->val, i);
		ASSERT_TRUE(sfp_idmap_find(&m, i * 7919 + 1) == NULL);
		/* get() of a present id gives it back, untouched */
		ASSERT_TRUE(sfp_idmap_get(&m, i * 7919, &added) == e);
		ASSERT_FALSE(added);
	}
	while ((e = sfp_idmap_next(&m, &pos)))
		seen++;
	ASSERT_EQ(seen, n);
	for (uint32_t i = 0; i < n; i += 2)
		del(&m, i * 7919);
	ASSERT_EQ(m.n, n / 2);
	check_chains(&m);
	for (uint32_t i = 1; i < n; i += 2)
		ASSERT_EQ(val_of(&m, i * 7919), i);
	for (uint32_t i = 1; i < n; i += 2)
		del(&m, i * 7919);
	/* no tombstones: every slot is free again */
	for (size_t i = 0; i < m.cap; i++)
		ASSERT_FALSE(sfp_idmap_used_at(&m, i));
	sfp_idmap_free(&m);
}

TEST(clear_keeps_the_array)
{
	struct sfp_idmap m;
	size_t cap, pos = 0;

	sfp_idmap_init(&m, sizeof(struct ent), 64, 50);
	for (uint32_t i = 0; i < 100; i++)
		add(&m, i, i);
	ASSERT_EQ(m.cap, 256);	/* the load stays at or under 1/2 */
	cap = m.cap;
	sfp_idmap_clear(&m);
	ASSERT_EQ(m.n, 0);
	ASSERT_EQ(m.cap, cap);
	ASSERT_TRUE(sfp_idmap_next(&m, &pos) == NULL);
	ASSERT_TRUE(sfp_idmap_find(&m, 5) == NULL);
	add(&m, 5, 55);
	ASSERT_EQ(val_of(&m, 5), 55);
	sfp_idmap_free(&m);
}

/* xorshift64: the same sequence on every run */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define RAND_IDS 600

static void random_run(unsigned int max_load, size_t first_cap)
{
	static uint32_t ref_val[RAND_IDS];
	static bool ref_in[RAND_IDS];
	struct sfp_idmap m;
	uint64_t seed = 0x5eed1234abcdull;
	size_t ref_n = 0;

	memset(ref_in, 0, sizeof(ref_in));
	sfp_idmap_init(&m, sizeof(struct ent), first_cap, max_load);
	for (int step = 0; step < 200000; step++) {
		uint64_t r = next_rand(&seed);
		/* ids spread over the 32 bits, few enough to meet again */
		uint32_t k = (uint32_t)(r % RAND_IDS);
		uint32_t id = k * 2654435761u;
		struct ent *e = sfp_idmap_find(&m, id);
		/* more deletes than adds while large: the table empties
		 * and fills again, over and over */
		unsigned int op = (unsigned int)(r >> 32) % 8;

		/* the first difference is enough: stop there */
		if (!ASSERT_EQ(e != NULL, ref_in[k]) ||
		    (e && !ASSERT_EQ(e->val, ref_val[k])))
			break;
		if (op < 3 || (op < 5 && ref_n < RAND_IDS / 2)) {
			bool added;

			e = sfp_idmap_get(&m, id, &added);
			ASSERT_NOT_NULL(e);
			ASSERT_EQ(added, !ref_in[k]);
			if (added)
				ref_n++;
			e->val = (uint32_t)step;
			ref_in[k] = true;
			ref_val[k] = (uint32_t)step;
		} else if (e) {
			sfp_idmap_delete(&m, e);
			ref_in[k] = false;
			ref_n--;
		}
		if (!ASSERT_EQ(m.n, ref_n))
			break;
		if (step % 997 == 0) {
			if (!check_chains(&m))
				break;
			for (k = 0; k < RAND_IDS; k++)
				ASSERT_EQ(val_of(&m, k * 2654435761u),
					  ref_in[k] ? ref_val[k] : UINT32_MAX);
		}
	}
	ASSERT_TRUE(m.n * 100 <= m.cap * max_load);
	sfp_idmap_free(&m);
}

TEST(random_against_an_array)
{
	random_run(75, 8);
	random_run(50, 64);
}
