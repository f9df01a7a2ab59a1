// SPDX-License-Identifier: MIT
/* Interned string table (see strtab.h), indexed by common/htab.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/strtab.h"

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct exp_strtab *t = ctx;

	return !strcmp(t->strs[idx], key);
}

int64_t exp_strtab__intern(struct exp_strtab *t, const char *s)
{
	uint32_t h, i;
	char *copy;

	if (!s)
		s = "";
	h = sfp_hash_str(s);
	i = sfp_htab_find(&t->idx, h, str_eq, t, s);
	if (i != SFP_HTAB_NONE)
		return i;
	if (t->n >= UINT32_MAX / 4)
		return -ENOMEM;
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
	if (sfp_htab_add(&t->idx, h, (uint32_t)t->n)) {
		free(copy);
		return -ENOMEM;
	}
	t->strs[t->n] = copy;
	return (int64_t)t->n++;
}

int64_t exp_strtab__index(struct exp_strtab *t, const char *s, int *err)
{
	int64_t i = exp_strtab__intern(t, s);

	if (i >= 0)
		return i;
	if (!*err)
		*err = (int)i;
	return 0;
}

void exp_strtab__reset(struct exp_strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->strs[i]);
	t->n = 0;
	sfp_htab_clear(&t->idx);
}

void exp_strtab__free(struct exp_strtab *t)
{
	exp_strtab__reset(t);
	free(t->strs);
	sfp_htab_free(&t->idx);
	memset(t, 0, sizeof(*t));
}
