/* SPDX-License-Identifier: MIT */
/*
 * One open-addressed hash index for the tables that intern rows: it maps
 * a caller-computed 32-bit hash to a row number of the caller's array,
 * and the caller says when a row equals the key it looks for.  Slots hold
 * the row number and its hash, so that
 *  - the index grows without touching (or re-hashing) the rows,
 *  - a probe compares hashes first and reads a row only on a likely hit.
 * Linear probing at a load under 1/2 keeps probes short.  Rows are
 * uint32_t; SFP_HTAB_NONE means "none".
 *
 * Hashes: sfp_hash64() for numbers (splitmix64's finalizer over the key
 * seeded with the golden-ratio constant, so that every bit reaches the
 * low bits the mask keeps), sfp_hash_str() for strings (FNV-1a).
 *
 * A table whose key fits in the slot itself and whose probes must not
 * read a row at all (the profile's locations and stack nodes; script's
 * inline chains and a packed symbol table's made symbols, each probed
 * once a frame) keeps a specialised index; everything else interns
 * through this one.
 */
#ifndef SFP_COMMON_HTAB_H
#define SFP_COMMON_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

#define SFP_HTAB_NONE UINT32_MAX

struct sfp_htab {
	struct sfp_htab_slot {
		uint32_t idx;	/* SFP_HTAB_NONE: empty */
		uint32_t hash;
	} *slots;
	size_t cap, n;
};

/* Does row idx of ctx's table equal key? */
typedef bool (*sfp_htab_eq)(const void *ctx, uint32_t idx, const void *key);

/*
 * The row with this hash that eq says equals key, or SFP_HTAB_NONE.
 * Inline: eq is then a known function the compiler can inline too, as
 * the hand-written probes it replaces were.
 */
static inline uint32_t sfp_htab_find(const struct sfp_htab *t, uint32_t hash,
				     sfp_htab_eq eq, const void *ctx,
				     const void *key)
{
	size_t i, mask;

	if (!t->cap)
		return SFP_HTAB_NONE;
	mask = t->cap - 1;
	for (i = hash & mask; t->slots[i].idx != SFP_HTAB_NONE;
	     i = (i + 1) & mask)
		if (t->slots[i].hash == hash && eq(ctx, t->slots[i].idx, key))
			return t->slots[i].idx;
	return SFP_HTAB_NONE;
}

/*
 * Room for `need` rows in the caller's array *rows, *cap rows of esz
 * bytes (doubled, from 64): the rows an index numbers, which stay below
 * SFP_HTAB_NONE.  0, -ENOMEM.
 */
SFP_HIDDEN int sfp_htab_rows_reserve(void **rows, size_t *cap, size_t need,
				     size_t esz);
#define SFP_HTAB_ROWS_RESERVE(arr, cap, need)                              \
	sfp_htab_rows_reserve((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Index row idx under hash (not looked for first).  0, -ENOMEM. */
SFP_HIDDEN int sfp_htab_add(struct sfp_htab *t, uint32_t hash, uint32_t idx);
/* Forget every row; the slots are kept for the next fill. */
SFP_HIDDEN void sfp_htab_clear(struct sfp_htab *t);
SFP_HIDDEN void sfp_htab_free(struct sfp_htab *t);

/* Inline: it is most of the work of a probe of an integer key, and
 * the per-task tables (idmap.h) probe on every sample. */
static inline uint32_t sfp_hash64(uint64_t v, uint32_t seed)
{
	/* a 64-bit finalizer (splitmix64's): cheap and mixes every bit */
	v ^= seed * 0x9e3779b97f4a7c15ull;
	v ^= v >> 30;
	v *= 0xbf58476d1ce4e5b9ull;
	v ^= v >> 27;
	v *= 0x94d049bb133111ebull;
	v ^= v >> 31;
	return (uint32_t)v;
}

SFP_HIDDEN uint32_t sfp_hash_str(const char *s);

#endif /* SFP_COMMON_HTAB_H */
