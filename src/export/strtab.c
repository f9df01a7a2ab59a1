// SPDX-License-Identifier: MIT
/* Interned string table (see strtab.h): FNV-1a, linear probing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/strtab.h"

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

static int strtab_rehash(struct exp_strtab *t, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));
	size_t i;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		size_t j = str_hash(t->strs[i]) & (nslots - 1);

		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

int64_t exp_strtab__intern(struct exp_strtab *t, const char *s)
{
	size_t j;
	char *copy;

	if (!s)
		s = "";
	/* keep the load under one half */
	if ((t->n + 1) * 2 > t->nslots) {
		if (t->n >= UINT32_MAX / 4 ||
		    strtab_rehash(t, t->nslots ? t->nslots * 2 : 1024))
			return -ENOMEM;
	}
	j = str_hash(s) & (t->nslots - 1);
	while (t->slots[j]) {
		uint32_t idx = t->slots[j] - 1;

		if (!strcmp(t->strs[idx], s))
			return idx;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **n = realloc(t->strs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->strs = n;
		t->cap = cap;
	}
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	t->strs[t->n] = copy;
	t->slots[j] = (uint32_t)++t->n;
	return (int64_t)t->n - 1;
}

void exp_strtab__reset(struct exp_strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->strs[i]);
	t->n = 0;
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
}

void exp_strtab__free(struct exp_strtab *t)
{
	exp_strtab__reset(t);
	free(t->strs);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
