// SPDX-License-Identifier: MIT
/* The id-keyed table with deletion (idmap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/idmap.h"

static size_t home(const struct sfp_idmap *m, uint32_t id)
{
	return sfp_hash64(id, 0) & (m->cap - 1);
}

static void mark(struct sfp_idmap *m, size_t i, bool used)
{
	uint64_t bit = (uint64_t)1 << (i % 64);

	if (used)
		m->used[i / 64] |= bit;
	else
		m->used[i / 64] &= ~bit;
}

static size_t bitmap_words(size_t cap)
{
	return (cap + 63) / 64;
}

/* The first free slot of id's probe sequence (the table has one). */
static size_t free_slot(const struct sfp_idmap *m, uint32_t id)
{
	size_t i, mask = m->cap - 1;

	for (i = home(m, id); sfp_idmap_used_at(m, i); i = (i + 1) & mask)
		;
	return i;
}

static int resize(struct sfp_idmap *m, size_t ncap)
{
	struct sfp_idmap old = *m;
	uint64_t bits;
	size_t w;

	if (ncap > ((size_t)1 << 40) / m->esz)
		return -ENOMEM;
	m->ents = malloc(ncap * m->esz);
	m->used = calloc(bitmap_words(ncap), sizeof(*m->used));
	if (!m->ents || !m->used) {
		free(m->ents);
		free(m->used);
		*m = old;
		return -ENOMEM;
	}
	m->cap = ncap;
	/* the old entries in slot order, a bitmap word at a time */
	for (w = 0; w < bitmap_words(old.cap); w++)
		for (bits = old.used[w]; bits; bits &= bits - 1) {
			const void *e = sfp_idmap_at(
				&old, w * 64 + (size_t)__builtin_ctzll(bits));
			size_t j = free_slot(m, sfp_idmap_id_of(e));

			memcpy(sfp_idmap_at(m, j), e, m->esz);
			mark(m, j, true);
		}
	free(old.ents);
	free(old.used);
	return 0;
}

void *sfp_idmap_add(struct sfp_idmap *m, uint32_t id)
{
	void *e;
	size_t i;

	/* Grow before the load passes max_load: probes stay short. */
	if ((m->n + 1) * 100 > m->cap * m->max_load &&
	    resize(m, m->cap ? m->cap * 2 : m->first_cap))
		return NULL;
	i = free_slot(m, id);
	e = sfp_idmap_at(m, i);
	memset(e, 0, m->esz);
	memcpy(e, &id, sizeof(id));
	mark(m, i, true);
	m->n++;
	return e;
}

/*
 * Backward-shift deletion.  Walking the cluster after the hole, an entry
 * whose home lies cyclically in (hole, its slot] stays: a probe for it
 * starts past the hole.  Any other entry's probe passes the hole, so it
 * moves up into it and leaves a hole of its own.  The last hole is
 * freed; the cluster is then as if the deleted entry had never been.
 */
void sfp_idmap_delete(struct sfp_idmap *m, void *ent)
{
	size_t mask = m->cap - 1;
	size_t hole = (size_t)((char *)ent - (char *)m->ents) / m->esz;
	size_t j;

	for (j = (hole + 1) & mask; sfp_idmap_used_at(m, j);
	     j = (j + 1) & mask) {
		void *e = sfp_idmap_at(m, j);
		size_t h = home(m, sfp_idmap_id_of(e));

		/* distances forward from the hole, modulo the size */
		if (((h - hole - 1) & mask) < ((j - hole) & mask))
			continue;	/* its home is after the hole */
		memcpy(sfp_idmap_at(m, hole), e, m->esz);
		hole = j;
	}
	mark(m, hole, false);
	m->n--;
}

void *sfp_idmap_next(const struct sfp_idmap *m, size_t *pos)
{
	size_t i = *pos;

	while (i < m->cap) {
		uint64_t w = m->used[i / 64] >> (i % 64);

		if (w) {
			i += (size_t)__builtin_ctzll(w);
			*pos = i + 1;
			return sfp_idmap_at(m, i);
		}
		i = (i / 64 + 1) * 64;	/* the next word */
	}
	*pos = i;
	return NULL;
}

void sfp_idmap_clear(struct sfp_idmap *m)
{
	if (m->used)
		memset(m->used, 0, bitmap_words(m->cap) * sizeof(*m->used));
	m->n = 0;
}

void sfp_idmap_free(struct sfp_idmap *m)
{
	free(m->ents);
	free(m->used);
	/* empty, and usable again: entry size and load are kept */
	sfp_idmap_init(m, m->esz, m->first_cap, m->max_load);
}
