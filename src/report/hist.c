// SPDX-License-Identifier: MIT
/*
 * Grouping samples into report entries, as perf's hists do:
 *
 *  - each frame of a sample maps to the entry of its sort-key tuple
 *    (symbol, dso, comm, pid); the leaf frame's entry gets the sample's
 *    period as self, and with children every entry met in the stack gets
 *    it once as children (recursion does not count twice); a sample with
 *    no frames counts at its sample ip's loc, as perf report's entry
 *    comes from the sample ip;
 *  - unresolved frames are separate symbols per address, as perf lists
 *    them, in entries and in call graphs (there named by the address);
 *  - --pid, --tid and --comm drop samples, but percentages stay relative
 *    to all samples of the event (perf's default "absolute" percentage),
 *    so filtered numbers compare with unfiltered ones; --time drops
 *    samples from the total too, as perf does; --dso keeps only frames of
 *    those dsos as entries;
 *  - the "pid" key is the thread, shown tid:comm, as in perf.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-int.h"

#define GROW(arr, cap, need) \
	sfp_profile_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

const struct sfp_profile_func *sfp_rep_func(const struct sfp_profile *p,
					    uint32_t loc)
{
	const struct sfp_profile_loc *l = sfp_profile__loc(p, loc);

	return l ? sfp_profile__func(p, l->lines[l->nr_lines - 1].func) : NULL;
}

static bool is_unknown(const struct sfp_profile_func *f)
{
	return !strcmp(f->name, "[unknown]");
}

uint64_t sfp_rep_sym(const struct sfp_profile *p, uint32_t loc)
{
	const struct sfp_profile_loc *l = sfp_profile__loc(p, loc);
	const struct sfp_profile_func *f = sfp_rep_func(p, loc);

	if (is_unknown(f))
		return SYM_UNKNOWN_BIT | loc;
	return l->lines[l->nr_lines - 1].func;
}

/* The name of inline level `line` of a loc (the outermost: DWARF's name
 * of the real function, else its symbol). */
const char *sfp_rep_fname(const struct sfp_profile *p, uint32_t loc,
			  int32_t line)
{
	const struct sfp_profile_loc *l = sfp_profile__loc(p, loc);

	if (line < 0)
		return sfp_rep_func(p, loc)->name;
	if ((uint32_t)line + 1 == l->nr_lines && l->dwarf_name)
		return l->dwarf_name;
	return sfp_profile__func(p, l->lines[line].func)->name;
}

uint64_t sfp_rep_fsym(const struct sfp_profile *p, uint32_t loc, int32_t line)
{
	if (line < 0)
		return sfp_rep_sym(p, loc);
	return SYM_INLINE_BIT | (uintptr_t)sfp_rep_fname(p, loc, line);
}

static bool in_u32(const uint32_t *v, size_t n, uint32_t x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool in_str(const char *const *v, size_t n, const char *x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], x))
			return true;
	return false;
}

bool sfp_rep_time_ok(const struct rep *r, const struct sfp_profile_sample *s)
{
	const struct sfp_report_opts *o = r->o;

	return !o->has_time || (s->time >= o->time_start &&
				(!o->time_stop || s->time <= o->time_stop));
}

bool sfp_rep_sample_ok(const struct rep *r, const struct sfp_profile_sample *s)
{
	const struct sfp_report_opts *o = r->o;

	if (s->event != r->event || !sfp_rep_time_ok(r, s))
		return false;
	if (o->nr_pids && !in_u32(o->pids, o->nr_pids, s->pid))
		return false;
	if (o->nr_tids && !in_u32(o->tids, o->nr_tids, s->tid))
		return false;
	if (o->nr_comms &&
	    !in_str(o->comms, o->nr_comms, sfp_profile__string(r->p, s->comm)))
		return false;
	return true;
}

long sfp_rep_stack(struct rep *r, const struct sfp_profile_sample *s)
{
	size_t d = sfp_profile__stack(r->p, s->stack, r->locs, r->cap_locs);

	if (d > r->cap_locs) {
		if (GROW(r->locs, r->cap_locs, d))
			return -ENOMEM;
		d = sfp_profile__stack(r->p, s->stack, r->locs, r->cap_locs);
	}
	if (GROW(r->fent, r->cap_fent, d + 1))
		return -ENOMEM;
	return (long)d;
}

/*
 * The frames of the sample at hand (r->locs, d deep) into r->fr.  As
 * perf 6.1 does for frames of its dwarf unwinder only (append_inlines()):
 * a user frame with DWARF becomes its inline chain, innermost first, each
 * level an "(inlined)" frame of its own; the outermost level is the real
 * function when DWARF names it as the symbol is named, else it too is an
 * inlined frame under DWARF's name.  Return: the count or -ENOMEM.
 */
static long expand_frames(struct rep *r, const struct sfp_profile_sample *s,
			  const uint32_t *locs, long d)
{
	long j, n = 0;

	for (j = 0; j < d; j++) {
		const struct sfp_profile_loc *l = sfp_profile__loc(r->p, locs[j]);
		const struct sfp_profile_func *f = sfp_rep_func(r->p, locs[j]);
		bool inl = r->o->inline_frames && s->dwarf &&
			   f->kind == SFP_PROFILE_USER &&
			   (l->dwarf_name || l->nr_lines > 1);
		uint32_t k, nl = inl ? l->nr_lines : 1;

		if (GROW(r->fr, r->cap_fr, (size_t)n + nl) ||
		    GROW(r->fent, r->cap_fent, (size_t)n + nl + 1))
			return -ENOMEM;
		if (!inl) {
			r->fr[n].loc = locs[j];
			r->fr[n++].line = -1;
			continue;
		}
		for (k = 0; k < nl; k++) {
			r->fr[n].loc = locs[j];
			r->fr[n].line = (int32_t)k;
			if (k + 1 == nl && !strcmp(sfp_rep_fname(r->p, locs[j],
								 (int32_t)k),
						   f->name))
				r->fr[n].line = -1;
			n++;
		}
	}
	return n;
}

/* dso name as perf matches --dsos: full path or its last component */
static bool dso_ok(const struct sfp_report_opts *o, const char *dso)
{
	const char *b, *tag;
	char plain[PATH_MAX];
	size_t n;

	if (!o->nr_dsos)
		return true;
	b = strrchr(dso, '/');
	if (in_str(o->dsos, o->nr_dsos, dso) ||
	    (b && in_str(o->dsos, o->nr_dsos, b + 1)))
		return true;
	/* "PATH [SHORT]", one of several files at PATH: PATH and its
	 * basename select every one of them */
	n = strlen(dso);
	tag = dso[0] == '/' && n && dso[n - 1] == ']' ? strrchr(dso, '[') : NULL;
	if (tag && (tag == dso || tag[-1] != ' '))
		tag = NULL;
	else if (tag)
		tag--;
	if (!tag || (n = (size_t)(tag - dso)) >= sizeof(plain))
		return false;
	memcpy(plain, dso, n);
	plain[n] = 0;
	b = strrchr(plain, '/');
	return in_str(o->dsos, o->nr_dsos, plain) ||
	       (b && in_str(o->dsos, o->nr_dsos, b + 1));
}

static bool ikey_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct rep *r = ctx;
	const struct rep_ikey *k = key;

	return r->ikeys[idx].name == k->name && r->ikeys[idx].base == k->base;
}

/*
 * The symbol key of an inlined frame's entry.  perf's entries compare
 * inlined symbols by name and then by the address range of the symbol
 * they were made from (_sort__sym_cmp()): the same function inlined into
 * two functions is two entries.  Return: the key or -ENOMEM.
 */
static int64_t inline_key(struct rep *r, uint32_t loc, int32_t line)
{
	struct rep_ikey k = { sfp_rep_fname(r->p, loc, line),
			      sfp_rep_sym(r->p, loc) };
	uint32_t h = sfp_hash64((uintptr_t)k.name * 0x9e3779b97f4a7c15ull ^
				k.base, 0x1b1);
	uint32_t i = sfp_htab_find(&r->iktab, h, ikey_eq, r, &k);

	if (i == SFP_PROFILE_NONE) {
		if (GROW(r->ikeys, r->cap_ikeys, r->nr_ikeys + 1))
			return -ENOMEM;
		i = (uint32_t)r->nr_ikeys;
		if (sfp_htab_add(&r->iktab, h, i))
			return -ENOMEM;
		r->ikeys[r->nr_ikeys++] = k;
	}
	return (int64_t)(SYM_INLINE_BIT | i);
}

static int frame_key(struct rep *r, const struct sfp_profile_sample *s,
		     uint32_t loc, int32_t line, uint64_t *key)
{
	int64_t ik;
	size_t i;

	for (i = 0; i < r->o->nr_keys; i++) {
		switch (r->o->keys[i]) {
		case SFP_REPORT_SYM:
			if (line < 0) {
				key[i] = sfp_rep_sym(r->p, loc);
				break;
			}
			if ((ik = inline_key(r, loc, line)) < 0)
				return (int)ik;
			key[i] = (uint64_t)ik;
			break;
		case SFP_REPORT_DSO:
			key[i] = (uintptr_t)sfp_rep_func(r->p, loc)->dso;
			break;
		case SFP_REPORT_COMM:
			key[i] = s->comm;
			break;
		case SFP_REPORT_PID:
			key[i] = s->tid;	/* perf's "pid" key is the thread */
			break;
		}
	}
	return 0;
}

static uint32_t key_hash(const uint64_t *key, size_t n)
{
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < n; i++)
		h = h * 0x100000001b3ull ^ key[i];
	return sfp_hash64(h, (uint32_t)n);
}

static bool entry_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct rep *r = ctx;

	return !memcmp(r->e[idx].key, key, r->o->nr_keys * sizeof(uint64_t));
}

#define FEC_SLOTS 4096

/* The entry of a frame (created on first sight); NONE when filtered. */
static int64_t frame_entry(struct rep *r, const struct sfp_profile_sample *s,
			   uint32_t loc, int32_t line, bool create)
{
	uint64_t key[SFP_REPORT_MAX_KEYS] = { 0 };
	uint32_t h, i;
	struct rep_entry *e;
	struct rep_fe_cache *c = NULL;
	int err;

	if (!r->fec) {
		r->fec = malloc(FEC_SLOTS * sizeof(*r->fec));
		for (i = 0; r->fec && i < FEC_SLOTS; i++)
			r->fec[i].entry = SFP_PROFILE_NONE;
	}
	if (r->fec) {
		c = &r->fec[sfp_hash64(((uint64_t)loc << 32) ^ s->comm ^
					       ((uint64_t)s->tid << 12),
				       (uint32_t)line) &
			    (FEC_SLOTS - 1)];
		if (c->entry != SFP_PROFILE_NONE && c->loc == loc &&
		    c->line == line && c->comm == s->comm && c->tid == s->tid)
			return c->entry;
	}
	if (!dso_ok(r->o, sfp_rep_func(r->p, loc)->dso))
		return SFP_PROFILE_NONE;
	err = frame_key(r, s, loc, line, key);
	if (err)
		return err;
	h = key_hash(key, r->o->nr_keys);
	i = sfp_htab_find(&r->etab, h, entry_eq, r, key);
	if (i != SFP_PROFILE_NONE || !create) {
		if (i != SFP_PROFILE_NONE && c)
			*c = (struct rep_fe_cache){ loc, s->comm, s->tid, i,
						    line };
		return i;
	}
	if (GROW(r->e, r->cap_e, r->nr_e + 1))
		return -ENOMEM;
	i = (uint32_t)r->nr_e;
	if (sfp_htab_add(&r->etab, h, i))
		return -ENOMEM;
	e = &r->e[r->nr_e++];
	memset(e, 0, sizeof(*e));
	memcpy(e->key, key, sizeof(key));
	e->loc = loc;
	e->line = line;
	e->comm = s->comm;
	e->tid = s->tid;
	e->graph = SFP_PROFILE_NONE;
	if (c)
		*c = (struct rep_fe_cache){ loc, s->comm, s->tid, i, line };
	return i;
}

static uint64_t shown_period(const struct rep *r, const struct rep_entry *e)
{
	return r->o->children ? e->children : e->self;
}

/* qsort_r comparator: the report is the context, no global state */
static int entry_cmp(const void *a, const void *b, void *ctx)
{
	const struct rep *r = ctx;
	const struct rep_entry *x = &r->e[*(const uint32_t *)a];
	const struct rep_entry *y = &r->e[*(const uint32_t *)b];
	uint64_t px = shown_period(r, x), py = shown_period(r, y);

	if (px != py)
		return px > py ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	/* equal overheads in the order perf prints them (as measured on its
	 * output): with children the entry made last first (outermost
	 * callers before the frames they lead to), else first seen first */
	if (r->o->children)
		return *(const uint32_t *)a > *(const uint32_t *)b ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/*
 * Samples that count alike: the same stack (or, without one, the same ip
 * loc), unwound the same way (expand_frames() gives inline frames to
 * dwarf-unwound samples only), comm and, where the sort keys read it,
 * thread -- frame_entry()'s key.  Entries and call-graph paths are then
 * made once per group with its summed period.  Groups run in order of
 * their first sample, so every entry and tree node is made by the same
 * sample as before, in the same order (ties print in that order); an
 * entry's comm is its latest sample's, kept by the groups' last samples.
 */
static bool group_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct rep_group *a = &((const struct rep *)ctx)->grp[idx];
	const struct rep_group *b = key;

	return a->stack == b->stack && a->ip_loc == b->ip_loc &&
	       a->comm == b->comm && a->tid == b->tid && a->dwarf == b->dwarf;
}

/* The groups of the event's samples that pass the filters; r->total and
 * r->nr_samples as perf counts them. */
static int group_samples(struct rep *r)
{
	const struct sfp_profile *p = r->p;
	size_t i, n = sfp_profile__nr_samples(p), k;
	bool by_tid = false;
	struct sfp_htab tab = { 0 };
	/* each thread's last group: a thread's samples mostly repeat its
	 * stack, and a hit skips the hash and the probe */
	uint32_t recent[256];
	int err = 0;

	memset(recent, 0xff, sizeof(recent));
	for (k = 0; k < r->o->nr_keys; k++)
		by_tid |= r->o->keys[k] == SFP_REPORT_PID;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);
		struct rep_group key = { 0 }, *g;
		uint32_t h, gi;

		if (s->event != r->event || !sfp_rep_time_ok(r, s))
			continue;
		/* the base of the percentages: every sample of the event in
		 * the time window */
		r->total += s->period;
		if (!sfp_rep_sample_ok(r, s))
			continue;
		r->nr_samples += s->count;
		key.stack = s->stack;
		key.ip_loc = s->stack ? SFP_PROFILE_NONE : s->ip_loc;
		key.comm = s->comm;
		key.tid = by_tid ? s->tid : 0;
		key.dwarf = s->dwarf;
		gi = recent[(s->tid * 0x9e3779b1u) >> 24];
		if (gi != SFP_PROFILE_NONE && group_eq(r, gi, &key))
			goto found;
		h = sfp_hash64((uint64_t)key.comm << 32 | key.tid,
			       key.stack ^ key.ip_loc ^
			       (uint32_t)key.dwarf << 31);
		gi = sfp_htab_find(&tab, h, group_eq, r, &key);
		recent[(s->tid * 0x9e3779b1u) >> 24] = gi;
		if (gi == SFP_PROFILE_NONE) {
			if (GROW(r->grp, r->cap_grp, r->nr_grp + 1) ||
			    sfp_htab_add(&tab, h, (uint32_t)r->nr_grp)) {
				err = -ENOMEM;
				break;
			}
			gi = (uint32_t)r->nr_grp++;
			key.first = (uint32_t)i;
			r->grp[gi] = key;
			recent[(s->tid * 0x9e3779b1u) >> 24] = gi;
		}
found:
		g = &r->grp[gi];
		/* merged samples come in order of their first, not last */
		if (s->last > g->last)
			g->last = s->last;
		g->period += s->period;
		g->count += s->count;
	}
	sfp_htab_free(&tab);
	return err;
}

int sfp_rep_build(struct rep *r)
{
	const struct sfp_profile *p = r->p;
	size_t i;
	const uint32_t *locs;
	long d, j, nf;
	int64_t ei;
	struct rep_entry *e;
	int err = group_samples(r);

	if (err)
		return err;
	for (i = 0; i < r->nr_grp; i++) {
		const struct rep_group *g = &r->grp[i];
		const struct sfp_profile_sample *s = sfp_profile__sample(p, g->first);

		d = sfp_rep_stack(r, s);
		if (d < 0)
			return (int)d;
		locs = r->locs;
		/* no frames: perf's entry for the sample ip all the same
		 * (call graphs get nothing from it, as in perf) */
		if (!d && s->ip_loc != SFP_PROFILE_NONE) {
			locs = &s->ip_loc;
			d = 1;
		}
		if (!d)
			continue;
		/* self: the sample's own entry, its real function (perf's
		 * entry comes from the sample ip, never an inline level) */
		ei = frame_entry(r, s, locs[0], -1, true);
		if (ei < 0)
			return (int)ei;
		if (ei != SFP_PROFILE_NONE) {
			e = &r->e[ei];
			/* a thread shows its latest comm (after exec), as
			 * perf's pid column does */
			if (g->last >= e->comm_at) {
				e->comm = g->comm;
				e->comm_at = g->last;
			}
			e->self += g->period;
			e->nr_samples += g->count;
			e->stamp = i + 1;
			e->children += g->period;
		}
		if (!r->o->children)
			continue;
		nf = expand_frames(r, s, locs, d);
		if (nf < 0)
			return (int)nf;
		for (j = 0; j < nf; j++) {
			ei = frame_entry(r, s, r->fr[j].loc, r->fr[j].line, true);
			if (ei < 0)
				return (int)ei;
			if (ei == SFP_PROFILE_NONE)
				continue;
			e = &r->e[ei];
			/* a thread shows its latest comm (after exec), as
			 * perf's pid column does */
			if (g->last >= e->comm_at) {
				e->comm = g->comm;
				e->comm_at = g->last;
			}
			if (e->stamp != i + 1) {
				e->stamp = i + 1;
				e->children += g->period;
			}
		}
	}
	r->order = malloc((r->nr_e ? r->nr_e : 1) * sizeof(*r->order));
	if (!r->order)
		return -ENOMEM;
	for (i = 0; i < r->nr_e; i++) {
		const struct rep_entry *x = &r->e[i];
		uint64_t v = shown_period(r, x);

		if (!v)
			continue;
		if (r->o->percent_limit > 0 &&
		    100.0 * (double)v < r->o->percent_limit * (double)r->total)
			continue;
		r->order[r->nr_order++] = (uint32_t)i;
	}
	qsort_r(r->order, r->nr_order, sizeof(*r->order), entry_cmp, r);
	return 0;
}

/* --- call graphs --- */

struct gkey {
	uint32_t parent;
	uint64_t sym;
};

static bool gnode_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct rep *r = ctx;
	const struct gkey *k = key;

	return r->g[idx].parent == k->parent && r->g[idx].sym == k->sym;
}

static int64_t gnode_new(struct rep *r, uint32_t parent, uint64_t sym,
			 uint32_t loc, int32_t line)
{
	struct rep_gnode *g;

	if (GROW(r->g, r->cap_g, r->nr_g + 1))
		return -ENOMEM;
	g = &r->g[r->nr_g];
	g->sym = sym;
	g->loc = loc;
	g->line = line;
	g->parent = parent;
	g->period = 0;
	g->first_child = SFP_PROFILE_NONE;
	g->next = SFP_PROFILE_NONE;
	return (int64_t)r->nr_g++;
}

/* Child of `parent` for frame sym: found by hash, chained for printing. */
static int64_t gnode_child(struct rep *r, uint32_t parent, uint64_t sym,
			   uint32_t loc, int32_t line)
{
	struct gkey k = { parent, sym };
	uint32_t h = sfp_hash64(sym, parent), i;
	int64_t c;

	i = sfp_htab_find(&r->gtab, h, gnode_eq, r, &k);
	if (i != SFP_PROFILE_NONE)
		return i;
	c = gnode_new(r, parent, sym, loc, line);
	if (c < 0)
		return c;
	if (sfp_htab_add(&r->gtab, h, (uint32_t)c))
		return -ENOMEM;
	r->g[c].next = r->g[parent].first_child;
	r->g[parent].first_child = (uint32_t)c;
	return c;
}

/*
 * Graph identity of a frame: perf's function; an unresolved frame is its
 * own address (perf's match_chain() falls back to dso and address).
 */
static uint64_t graph_sym(const struct rep *r, const struct rep_frame *f)
{
	return sfp_rep_fsym(r->p, f->loc, f->line);
}

static int add_path(struct rep *r, struct rep_entry *e, long from, long to,
		    uint64_t period)
{
	long step = from <= to ? 1 : -1, j;
	uint32_t cur;
	int64_t c;

	if (e->graph == SFP_PROFILE_NONE) {
		c = gnode_new(r, SFP_PROFILE_NONE, 0, SFP_PROFILE_NONE, -1);
		if (c < 0)
			return (int)c;
		e->graph = (uint32_t)c;
	}
	cur = e->graph;
	r->g[cur].period += period;
	if (!e->graph_full)
		return 0;	/* nothing below it could be shown */
	for (j = from;; j += step) {
		c = gnode_child(r, cur, graph_sym(r, &r->fr[j]), r->fr[j].loc,
				r->fr[j].line);
		if (c < 0)
			return (int)c;
		cur = (uint32_t)c;
		r->g[cur].period += period;
		if (j == to)
			break;
	}
	return 0;
}

int sfp_rep_graphs(struct rep *r)
{
	const struct sfp_profile *p = r->p;
	size_t i, k;
	bool *shown = calloc(r->nr_e ? r->nr_e : 1, sizeof(*shown));
	long d, j, nf;
	int64_t se;
	int err = 0;

	if (!shown)
		return -ENOMEM;
	/*
	 * Only entries whose graph can show a line get a whole tree.  Every
	 * printer draws a node only when its period is at or above
	 * graph_limit % of the total, and no node of an entry's tree weighs
	 * more than the samples added to it: at most the entry's children
	 * (or self) period.  A system-wide file has ~100k entries, nearly
	 * all far below 0.5 %: their trees were 95 % of the graph nodes
	 * built.  The others keep their root (whether an entry has a graph
	 * at all still shows: folded output ends each with a blank line).
	 */
	for (k = 0; k < r->nr_order; k++) {
		struct rep_entry *e = &r->e[r->order[k]];
		uint64_t most = e->children > e->self ? e->children : e->self;

		shown[r->order[k]] = true;
		e->graph_full = sfp_rep_pct(most, r->total) >=
				r->o->graph_limit;
	}
	for (i = 0; i < r->nr_e; i++)
		r->e[i].stamp = 0;
	for (i = 0; i < r->nr_grp && !err; i++) {
		const struct sfp_profile_sample *s =
			sfp_profile__sample(p, r->grp[i].first);
		uint64_t period = r->grp[i].period;

		d = sfp_rep_stack(r, s);
		if (d < 0) {
			err = (int)d;
			break;
		}
		if (!d)
			continue;
		nf = expand_frames(r, s, r->locs, d);
		if (nf < 0) {
			err = (int)nf;
			break;
		}
		/* the sample's own entry (its leaf's real function) gets the
		 * whole stack, root to leaf (callee order: leaf to root) */
		se = frame_entry(r, s, r->locs[0], -1, false);
		if (se < 0 || (se != SFP_PROFILE_NONE && !shown[se]))
			se = SFP_PROFILE_NONE;
		if (se != SFP_PROFILE_NONE)
			err = r->o->callee ?
				add_path(r, &r->e[se], 0, nf - 1, period) :
				add_path(r, &r->e[se], nf - 1, 0, period);
		if (!r->o->children)
			continue;
		/* where each other entry sits in this stack: innermost,
		 * outermost */
		for (j = 0; j < nf; j++) {
			int64_t ei = frame_entry(r, s, r->fr[j].loc,
						 r->fr[j].line, false);

			r->fent[j] = SFP_PROFILE_NONE;
			if (ei < 0 || ei == SFP_PROFILE_NONE || !shown[ei] ||
			    ei == se)
				continue;
			r->fent[j] = (uint32_t)ei;
			if (r->e[ei].stamp != i + 1) {
				r->e[ei].stamp = i + 1;
				r->e[ei].inner = (int)j;
			}
			r->e[ei].outer = (int)j;
		}
		for (j = 0; j < nf && !err; j++) {
			struct rep_entry *e;

			if (r->fent[j] == SFP_PROFILE_NONE)
				continue;
			e = &r->e[r->fent[j]];
			if (e->inner != j)
				continue;	/* once per sample */
			/*
			 * As perf: from the entry's outermost frame down to
			 * the leaf.  Callee order: from the entry's innermost
			 * frame up to the root.
			 */
			if (r->o->callee)
				err = add_path(r, e, e->inner, nf - 1, period);
			else
				err = add_path(r, e, e->outer, 0, period);
		}
	}
	free(shown);
	return err;
}

void sfp_rep_free(struct rep *r)
{
	free(r->e);
	sfp_htab_free(&r->etab);
	free(r->g);
	sfp_htab_free(&r->gtab);
	free(r->locs);
	free(r->fent);
	free(r->fr);
	free(r->order);
	free(r->ikeys);
	sfp_htab_free(&r->iktab);
	free(r->grp);
	free(r->fec);
	memset(r, 0, sizeof(*r));
}
