/* SPDX-License-Identifier: MIT */
/*
 * A table of per-task (or per-process) entries keyed by a 32-bit id,
 * stored inline in one open-addressed array, with deletion.  The record
 * pipeline's processes, the deferral engine's tasks, off-CPU's pending
 * blocks and totals, deep unwinding's threads, and a perf.data reader's
 * processes, threads and address spaces each live here for as long as
 * their task does, and an agent runs for weeks with tasks coming
 * and going: so an id can be removed, and removal leaves no tombstone
 * (backward-shift deletion: the rest of the cluster moves up into the
 * hole when its home slot allows), so probe chains stay as short as the
 * live entries make them, not as long as the table's history.
 *
 * Why not sfp_htab (htab.h): that indexes rows of the caller's array by
 * a stored hash and cannot delete; these tables want the entry itself in
 * the slot (a hit lands where the caller reads next, with no rows to
 * keep in step with an index) and want entries to go away.
 *
 * Layout: an entry is the caller's struct of esz bytes whose FIRST member
 * is its uint32_t id (every table above keys by a pid or tid, which are
 * 32 bits; a 64-bit key would add 8 bytes to entries such as the
 * pipeline's 32-byte process).  A table that never deletes may key by
 * another 32-bit number: the kallsyms index keeps the symbols it makes
 * on lookup by their entry's number.  Which slots are in use is a bitmap
 * kept beside the array, so an entry needs no `used` flag of its own.
 *
 * Ids are hashed with sfp_hash64().  The load stays at or under
 * max_load/100 (under 100: probes end at a free slot; the callers keep
 * what they had, 75, or 50 for deep's small entries); the table doubles
 * past it and never shrinks (none of the tables did).
 *
 * Pointers to entries stay valid until the next add (which may grow the
 * array) or delete (which moves entries).
 */
#ifndef SFP_COMMON_IDMAP_H
#define SFP_COMMON_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/htab.h"
#include "common/internal.h"

struct sfp_idmap {
	void *ents;		/* cap entries of esz bytes */
	uint64_t *used;		/* cap bits: slot i holds an entry */
	size_t cap, n;
	size_t esz;
	size_t first_cap;	/* a power of two */
	unsigned int max_load;	/* percent */
};

/*
 * An empty table of entries of esz bytes (their first member the uint32_t
 * id).  Nothing is allocated until the first add, which makes first_cap
 * slots (rounded up to a power of two).
 */
static inline void sfp_idmap_init(struct sfp_idmap *m, size_t esz,
				  size_t first_cap, unsigned int max_load)
{
	size_t cap = 8;

	while (cap < first_cap)
		cap *= 2;
	*m = (struct sfp_idmap){ .esz = esz, .first_cap = cap,
				 .max_load = max_load };
}

/* Slot i: is it in use, its entry, an entry's id (for find() and the
 * tests, which check where entries sit). */
static inline bool sfp_idmap_used_at(const struct sfp_idmap *m, size_t i)
{
	return (m->used[i / 64] >> (i % 64)) & 1;
}

static inline void *sfp_idmap_at(const struct sfp_idmap *m, size_t i)
{
	return (char *)m->ents + i * m->esz;
}

static inline uint32_t sfp_idmap_id_of(const void *ent)
{
	uint32_t id;

	memcpy(&id, ent, sizeof(id));
	return id;
}

/* The entry of id, or NULL.  Inline: the hot lookup of every sample. */
static inline void *sfp_idmap_find(const struct sfp_idmap *m, uint32_t id)
{
	size_t i, mask;

	if (!m->n)
		return NULL;
	mask = m->cap - 1;
	for (i = sfp_hash64(id, 0) & mask; sfp_idmap_used_at(m, i);
	     i = (i + 1) & mask) {
		void *e = sfp_idmap_at(m, i);

		if (sfp_idmap_id_of(e) == id)
			return e;
	}
	return NULL;
}

/* get()'s slow half: id is known to be absent. */
SFP_HIDDEN void *sfp_idmap_add(struct sfp_idmap *m, uint32_t id);

/*
 * The entry of id, made (zeroed but for its id) when absent; *added says
 * which.  NULL: no memory for the table to grow.  Inline for the same
 * reason as find(): the deferral engine gets its task on every sample,
 * and nearly always finds it.
 */
static inline void *sfp_idmap_get(struct sfp_idmap *m, uint32_t id,
				  bool *added)
{
	void *e = sfp_idmap_find(m, id);

	*added = !e;
	return e ? e : sfp_idmap_add(m, id);
}
/* Remove an entry find() or get() returned.  Others may move. */
SFP_HIDDEN void sfp_idmap_delete(struct sfp_idmap *m, void *ent);
/*
 * Iterate: the first entry at slot *pos or after, *pos then past it;
 * NULL at the end.  Start with *pos = 0; the table must not change
 * between calls (a delete may move an entry not yet seen to before *pos).
 */
SFP_HIDDEN void *sfp_idmap_next(const struct sfp_idmap *m, size_t *pos);
/* Forget every entry; the array is kept for the next fill. */
SFP_HIDDEN void sfp_idmap_clear(struct sfp_idmap *m);
/* Free the array: the table is empty, and may be filled again. */
SFP_HIDDEN void sfp_idmap_free(struct sfp_idmap *m);

#endif /* SFP_COMMON_IDMAP_H */
