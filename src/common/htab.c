// SPDX-License-Identifier: MIT
/* The generic hash index (htab.h). */
#include <errno.h>
#include <stdlib.h>

#include "common/htab.h"

#define FIRST_CAP 256

uint32_t sfp_hash_str(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

int sfp_htab_rows_reserve(void **rows, size_t *cap, size_t need, size_t esz)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	if (need >= SFP_HTAB_NONE)
		return -ENOMEM;
	ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	if (ncap >= SFP_HTAB_NONE)
		ncap = SFP_HTAB_NONE - 1;
	n = realloc(*rows, ncap * esz);
	if (!n)
		return -ENOMEM;
	*rows = n;
	*cap = ncap;
	return 0;
}

static void put(struct sfp_htab_slot *slots, size_t cap, uint32_t hash,
		uint32_t idx)
{
	size_t i, mask = cap - 1;

	for (i = hash & mask; slots[i].idx != SFP_HTAB_NONE;
	     i = (i + 1) & mask)
		;
	slots[i].idx = idx;
	slots[i].hash = hash;
}

int sfp_htab_add(struct sfp_htab *t, uint32_t hash, uint32_t idx)
{
	if (idx == SFP_HTAB_NONE)
		return -EINVAL;
	/* keep the load under 1/2: probes stay short */
	if ((t->n + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : FIRST_CAP, i;
		struct sfp_htab_slot *ns;

		if (ncap > ((size_t)1 << 40))
			return -ENOMEM;
		ns = malloc(ncap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		for (i = 0; i < ncap; i++)
			ns[i].idx = SFP_HTAB_NONE;
		for (i = 0; i < t->cap; i++)
			if (t->slots[i].idx != SFP_HTAB_NONE)
				put(ns, ncap, t->slots[i].hash,
				    t->slots[i].idx);
		free(t->slots);
		t->slots = ns;
		t->cap = ncap;
	}
	put(t->slots, t->cap, hash, idx);
	t->n++;
	return 0;
}

void sfp_htab_clear(struct sfp_htab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		t->slots[i].idx = SFP_HTAB_NONE;
	t->n = 0;
}

void sfp_htab_free(struct sfp_htab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
}
