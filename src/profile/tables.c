// SPDX-License-Identifier: MIT
/*
 * The profile's interned tables: strings, mappings, functions, locations,
 * stack nodes and samples.  Each table is an array plus an open-addressed
 * index (struct sfp_htab) that stores row numbers and their hashes, so
 * the index can grow without touching the rows and rows can be compared
 * against a key the caller describes.
 */
#include "profile/profile-int.h"

#define STRCHUNK_MIN (64u * 1024)

int sfp_profile_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	/* the tables' rows are what sfp_htab numbers (SFP_PROFILE_NONE is
	 * its SFP_HTAB_NONE); the check first: most calls need no room */
	if (need <= *cap)
		return 0;
	return sfp_htab_rows_reserve(arr, cap, need, elem);
}

#define GROW(arr, cap, need) \
	sfp_profile_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

int sfp_profile_new(struct sfp_profile **out)
{
	struct sfp_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	/* node 0 is the root: the stack of a sample without frames */
	if (GROW(p->nodes, p->cap_nodes, 1)) {
		free(p);
		return -ENOMEM;
	}
	p->nodes[0].parent = SFP_PROFILE_NONE;
	p->nodes[0].loc = SFP_PROFILE_NONE;
	p->nodes[0].depth = 0;
	p->nr_nodes = 1;
	*out = p;
	return 0;
}

/* --- strings --- */

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sfp_profile *p = ctx;

	return !strcmp(p->strs[idx], key);
}

static char *str_store(struct sfp_profile *p, const char *s, size_t len)
{
	struct sfp_strchunk *c = p->chunks;
	char *d;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > STRCHUNK_MIN ? len + 1 : STRCHUNK_MIN;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = p->chunks;
		p->chunks = c;
	}
	d = c->data + c->used;
	memcpy(d, s, len + 1);
	c->used += len + 1;
	return d;
}

int sfp_profile_intern(struct sfp_profile *p, const char *s, uint32_t *idx)
{
	uint32_t h = sfp_hash_str(s), i;
	char *d;

	i = sfp_htab_find(&p->str_tab, h, str_eq, p, s);
	if (i != SFP_PROFILE_NONE) {
		*idx = i;
		return 0;
	}
	if (GROW(p->strs, p->cap_strs, p->nr_strs + 1))
		return -ENOMEM;
	d = str_store(p, s, strlen(s));
	if (!d)
		return -ENOMEM;
	i = (uint32_t)p->nr_strs;
	if (sfp_htab_add(&p->str_tab, h, i))
		return -ENOMEM;
	p->strs[p->nr_strs++] = d;
	*idx = i;
	return 0;
}

const char *sfp_profile_str_copy(struct sfp_profile *p, const char *s)
{
	return str_store(p, s, strlen(s));
}

int sfp_profile_find_str(const struct sfp_profile *p, const char *s,
			 uint32_t *idx)
{
	uint32_t i = sfp_htab_find(&p->str_tab, sfp_hash_str(s), str_eq, p, s);

	if (i == SFP_PROFILE_NONE)
		return -ENOENT;
	*idx = i;
	return 0;
}

const char *sfp_profile_str(struct sfp_profile *p, const char *s)
{
	uint32_t i;

	return sfp_profile_intern(p, s, &i) ? NULL : p->strs[i];
}

/* --- mappings --- */

struct map_key {
	uint32_t key;
	const struct sfp_profile_mapping *m;
};

static uint32_t map_hash(uint32_t key, const struct sfp_profile_mapping *m)
{
	return sfp_hash64(m->start ^ (m->pgoff << 7) ^ m->end,
			  key * 2 + (uint32_t)m->kind);
}

static bool map_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sfp_profile *p = ctx;
	const struct map_key *k = key;
	const struct sfp_profile_mapping *a = &p->maps[idx];

	return p->map_key[idx] == k->key && a->kind == k->m->kind &&
	       a->start == k->m->start && a->end == k->m->end &&
	       a->pgoff == k->m->pgoff;
}

uint32_t sfp_profile_find_mapping(const struct sfp_profile *p, uint32_t key,
				  const struct sfp_profile_mapping *m)
{
	struct map_key k = { key, m };

	return sfp_htab_find(&p->map_tab, map_hash(key, m), map_eq, p, &k);
}

int64_t sfp_profile_mapping(struct sfp_profile *p, uint32_t key,
			    const struct sfp_profile_mapping *m)
{
	struct map_key k = { key, m };
	uint32_t h = map_hash(key, m), i;
	size_t cap;

	i = sfp_htab_find(&p->map_tab, h, map_eq, p, &k);
	if (i != SFP_PROFILE_NONE)
		return i;
	cap = p->cap_maps;
	if (GROW(p->maps, cap, p->nr_maps + 1))
		return -ENOMEM;
	cap = p->cap_maps;
	if (GROW(p->map_key, cap, p->nr_maps + 1))
		return -ENOMEM;
	p->cap_maps = cap;
	i = (uint32_t)p->nr_maps;
	if (sfp_htab_add(&p->map_tab, h, i))
		return -ENOMEM;
	p->maps[i] = *m;
	p->map_key[i] = key;
	p->nr_maps++;
	return i;
}

/* --- functions: (name, dso, file), all interned so pointers compare --- */

static uint32_t func_hash(const struct sfp_profile_func *f)
{
	return sfp_hash64((uintptr_t)f->name ^ ((uint64_t)(uintptr_t)f->dso << 1) ^
			  ((uint64_t)(uintptr_t)f->file << 2), 3);
}

static bool func_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sfp_profile *p = ctx;
	const struct sfp_profile_func *a = &p->funcs[idx], *b = key;

	return a->name == b->name && a->dso == b->dso && a->file == b->file;
}

int64_t sfp_profile_func(struct sfp_profile *p, const struct sfp_profile_func *f)
{
	uint32_t h = func_hash(f), i;

	i = sfp_htab_find(&p->func_tab, h, func_eq, p, f);
	if (i != SFP_PROFILE_NONE)
		return i;
	if (GROW(p->funcs, p->cap_funcs, p->nr_funcs + 1))
		return -ENOMEM;
	i = (uint32_t)p->nr_funcs;
	if (sfp_htab_add(&p->func_tab, h, i))
		return -ENOMEM;
	p->funcs[p->nr_funcs++] = *f;
	return i;
}

/* --- locations: (mapping, ip) --- */

static size_t loc_slot_hash(uint64_t ip, uint32_t mapping)
{
	return sfp_hash64(ip, mapping);
}

/* The slot of (mapping, ip): its row, or the empty slot to put it in. */
static struct sfp_loc_slot *loc_slot(const struct sfp_loc_index *t,
				     uint32_t mapping, uint64_t ip)
{
	size_t mask = t->cap - 1, i;

	for (i = loc_slot_hash(ip, mapping) & mask;
	     t->slots[i].idx != SFP_PROFILE_NONE; i = (i + 1) & mask)
		if (t->slots[i].ip == ip && t->slots[i].mapping == mapping)
			break;
	return &t->slots[i];
}

uint32_t sfp_profile_find_loc(const struct sfp_profile *p, uint32_t mapping,
			      uint64_t ip)
{
	if (!p->loc_tab.cap)
		return SFP_PROFILE_NONE;
	return loc_slot(&p->loc_tab, mapping, ip)->idx;
}

/* Room for one more key at a load under 1/2.  Return: 0, -ENOMEM. */
#define INDEX_RESERVE(t, rehash)					\
	do {								\
		if (((t)->n + 1) * 2 > (t)->cap) {			\
			__typeof__((t)->slots) old_ = (t)->slots, ns_;	\
			size_t ocap_ = (t)->cap, ncap_ = ocap_ ? ocap_ * 2 : 256, \
			       i_;					\
									\
			if (ncap_ > ((size_t)1 << 40))			\
				return -ENOMEM;				\
			ns_ = malloc(ncap_ * sizeof(*ns_));		\
			if (!ns_)					\
				return -ENOMEM;				\
			for (i_ = 0; i_ < ncap_; i_++)			\
				ns_[i_].idx = SFP_PROFILE_NONE;		\
			(t)->slots = ns_;				\
			(t)->cap = ncap_;				\
			for (i_ = 0; i_ < ocap_; i_++)			\
				if (old_[i_].idx != SFP_PROFILE_NONE)	\
					*rehash(t, &old_[i_]) = old_[i_]; \
			free(old_);					\
		}							\
	} while (0)

static struct sfp_loc_slot *loc_rehash(const struct sfp_loc_index *t,
				       const struct sfp_loc_slot *o)
{
	return loc_slot(t, o->mapping, o->ip);
}

static int loc_index_add(struct sfp_loc_index *t, uint32_t mapping,
			 uint64_t ip, uint32_t idx)
{
	struct sfp_loc_slot *sl;

	INDEX_RESERVE(t, loc_rehash);
	sl = loc_slot(t, mapping, ip);
	sl->ip = ip;
	sl->mapping = mapping;
	sl->idx = idx;
	t->n++;
	return 0;
}

int64_t sfp_profile_add_loc(struct sfp_profile *p,
			    const struct sfp_profile_loc *l,
			    const struct sfp_profile_line *lines,
			    size_t nr_lines)
{
	size_t cap;
	uint32_t i;

	if (!nr_lines || nr_lines > SFP_PROFILE_NONE)
		return -EINVAL;
	cap = p->cap_locs;
	if (GROW(p->locs, cap, p->nr_locs + 1))
		return -ENOMEM;
	cap = p->cap_locs;
	if (GROW(p->loc_line0, cap, p->nr_locs + 1))
		return -ENOMEM;
	p->cap_locs = cap;
	if (p->nr_lines + nr_lines < p->nr_lines ||
	    GROW(p->lines, p->cap_lines, p->nr_lines + nr_lines))
		return -ENOMEM;
	i = (uint32_t)p->nr_locs;
	if (loc_index_add(&p->loc_tab, l->mapping, l->ip, i))
		return -ENOMEM;
	p->locs[i] = *l;
	p->locs[i].nr_lines = (uint32_t)nr_lines;
	p->locs[i].lines = NULL;	/* set by sfp_profile_finish() */
	p->loc_line0[i] = p->nr_lines;
	memcpy(p->lines + p->nr_lines, lines, nr_lines * sizeof(*lines));
	p->nr_lines += nr_lines;
	p->nr_locs++;
	return i;
}

int sfp_profile_set_loc_lines(struct sfp_profile *p, uint32_t loc,
			      const struct sfp_profile_line *lines,
			      size_t nr_lines, const char *dwarf_name)
{
	if (loc >= p->nr_locs || !nr_lines || nr_lines > SFP_PROFILE_NONE)
		return -EINVAL;
	/* the old lines stay behind, unused: a loc is re-read at most once */
	if (p->nr_lines + nr_lines < p->nr_lines ||
	    GROW(p->lines, p->cap_lines, p->nr_lines + nr_lines))
		return -ENOMEM;
	p->loc_line0[loc] = p->nr_lines;
	p->locs[loc].nr_lines = (uint32_t)nr_lines;
	p->locs[loc].dwarf_name = dwarf_name;
	memcpy(p->lines + p->nr_lines, lines, nr_lines * sizeof(*lines));
	p->nr_lines += nr_lines;
	return 0;
}

/* --- nodes: (parent, loc) --- */

static struct sfp_node_slot *node_slot(const struct sfp_node_index *t,
				       uint32_t parent, uint32_t loc)
{
	size_t mask = t->cap - 1, i;

	for (i = sfp_hash64(((uint64_t)parent << 32) | loc, 5) & mask;
	     t->slots[i].idx != SFP_PROFILE_NONE; i = (i + 1) & mask)
		if (t->slots[i].parent == parent && t->slots[i].loc == loc)
			break;
	return &t->slots[i];
}

static struct sfp_node_slot *node_rehash(const struct sfp_node_index *t,
					 const struct sfp_node_slot *o)
{
	return node_slot(t, o->parent, o->loc);
}

int64_t sfp_profile_node(struct sfp_profile *p, uint32_t parent, uint32_t loc)
{
	struct sfp_node_index *t = &p->node_tab;
	struct sfp_node_slot *sl;
	uint32_t i;

	/* room first, so that the probe's empty slot is where it goes */
	INDEX_RESERVE(t, node_rehash);
	sl = node_slot(t, parent, loc);
	if (sl->idx != SFP_PROFILE_NONE)
		return sl->idx;
	if (GROW(p->nodes, p->cap_nodes, p->nr_nodes + 1))
		return -ENOMEM;
	i = (uint32_t)p->nr_nodes;
	sl->parent = parent;
	sl->loc = loc;
	sl->idx = i;
	t->n++;
	p->nodes[i].parent = parent;
	p->nodes[i].loc = loc;
	p->nodes[i].depth = p->nodes[parent].depth + 1;
	p->nr_nodes++;
	return i;
}

int sfp_profile_add_sample(struct sfp_profile *p,
			   const struct sfp_profile_sample *s)
{
	if (GROW(p->samples, p->cap_samples, p->nr_samples + 1))
		return -ENOMEM;
	p->samples[p->nr_samples++] = *s;
	return 0;
}

void sfp_profile_finish(struct sfp_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_locs; i++)
		p->locs[i].lines = p->lines + p->loc_line0[i];
}

void sfp_profile__free(struct sfp_profile **pp)
{
	struct sfp_profile *p = pp ? *pp : NULL;
	struct sfp_strchunk *c, *n;

	if (!p)
		return;
	sfp_symbolizer__free(&p->sym);
	for (c = p->chunks; c; c = n) {
		n = c->next;
		free(c);
	}
	free(p->strs);
	sfp_htab_free(&p->str_tab);
	free(p->maps);
	free(p->map_key);
	sfp_htab_free(&p->map_tab);
	free(p->funcs);
	sfp_htab_free(&p->func_tab);
	free(p->locs);
	free(p->loc_line0);
	free(p->loc_tab.slots);
	free(p->lines);
	free(p->nodes);
	free(p->node_tab.slots);
	free(p->samples);
	free(p->events);
	free(p);
	*pp = NULL;
}
