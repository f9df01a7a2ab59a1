// SPDX-License-Identifier: MIT
/* Stack walking and naming helpers shared by the export writers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/walk.h"

void exp_stack__free(struct exp_stack *s)
{
	free(s->locs);
	memset(s, 0, sizeof(*s));
}

bool exp_loc_is_kernel(const struct sfp_profile *p,
		       const struct sfp_profile_loc *loc)
{
	const struct sfp_profile_mapping *m = NULL;
	const struct sfp_profile_func *f = NULL;

	if (loc->mapping != UINT32_MAX)
		m = sfp_profile__mapping(p, loc->mapping);
	if (m)
		return m->kind == SFP_PROFILE_KERNEL;
	if (loc->nr_lines && loc->lines)
		f = sfp_profile__func(p, loc->lines[0].func);
	return f && f->kind == SFP_PROFILE_KERNEL;
}

int exp_stack__get(struct exp_stack *s, const struct sfp_profile *p,
		   uint32_t node, bool user_only)
{
	size_t depth, i, j;

	depth = sfp_profile__stack(p, node, s->locs, s->cap);
	if (depth > s->cap) {
		uint32_t *n = realloc(s->locs, depth * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->locs = n;
		s->cap = depth;
		depth = sfp_profile__stack(p, node, s->locs, s->cap);
		if (SFP_NEVER(depth > s->cap))
			depth = s->cap;
	}
	s->n = depth;
	if (!user_only)
		return 0;
	for (i = j = 0; i < depth; i++) {
		const struct sfp_profile_loc *l = sfp_profile__loc(p, s->locs[i]);

		if (l && exp_loc_is_kernel(p, l))
			continue;
		s->locs[j++] = s->locs[i];
	}
	s->n = j;
	return 0;
}

const char *exp_basename(const char *path)
{
	const char *s;

	if (!path)
		return "[unknown]";
	s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

bool exp_name_unknown(const char *name)
{
	return !name || !*name || !strcmp(name, "[unknown]");
}

static void exp_str_grow(struct exp_str *b, size_t more)
{
	size_t cap;
	char *n;

	if (b->err || more < b->cap - b->len)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len <= more) {
		if (cap > SIZE_MAX / 4) {
			b->err = -ENOMEM;
			return;
		}
		cap *= 2;
	}
	n = realloc(b->s, cap);
	if (!n) {
		b->err = -ENOMEM;
		return;
	}
	b->s = n;
	b->cap = cap;
}

void exp_str__add(struct exp_str *b, const char *s, size_t n)
{
	exp_str_grow(b, n);
	if (b->err)
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void exp_str__adds(struct exp_str *b, const char *s)
{
	exp_str__add(b, s, strlen(s));
}

void exp_str__free(struct exp_str *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

const char *exp_frame_dso(const struct sfp_profile *p,
			  const struct sfp_profile_loc *loc, uint32_t line)
{
	const struct sfp_profile_func *f = NULL;
	const struct sfp_profile_mapping *m = NULL;

	if (line < loc->nr_lines)
		f = sfp_profile__func(p, loc->lines[line].func);
	if (f && f->dso)
		return f->dso;
	if (loc->mapping != UINT32_MAX)
		m = sfp_profile__mapping(p, loc->mapping);
	return m ? m->path : NULL;
}

const char *exp_frame_name(const struct sfp_profile *p,
			   const struct sfp_profile_loc *loc, uint32_t line,
			   char *buf, size_t sz)
{
	const struct sfp_profile_func *f = NULL;
	const char *dso;

	if (line < loc->nr_lines)
		f = sfp_profile__func(p, loc->lines[line].func);
	if (f && !exp_name_unknown(f->name))
		return f->name;
	dso = exp_frame_dso(p, loc, line);
	if (exp_name_unknown(dso))
		return "[unknown]";
	snprintf(buf, sz, "[%s]", exp_basename(dso));
	return buf;
}
