/* SPDX-License-Identifier: MIT */
/*
 * pprof -> OTLP profiles (profiles/v1development), so that the OTLP sink
 * sends the very stacks of a window that comes as pprof: the files of
 * sfprof push, the Pyroscope pushes sfprof symbolize --listen forwards.
 * (The agent's own windows are written as OTLP from their profiles, by
 * export/otlp.c, which follows the same rules to the byte; the rules
 * both share are in export/otlp-window.h, and test-export-otlp holds the
 * two to each other.)
 *
 * The pprof is decoded by protobuf-c (src/agent/proto/pprof.proto) and
 * the request built from src/agent/proto/otlp-profiles.proto:
 * - one shared ProfilesDictionary whose tables start with their zero
 *   entry, as the schema requires (string_table[0] = "", mapping_table[0]
 *   = Mapping{}, ..., link_table[0] with all-zero 16- and 8-byte ids);
 * - mappings, functions and locations one for one (pprof ids become table
 *   indices), a Stack per pprof sample (leaf first in both schemas), an
 *   inlined location's lines in the same order (callee first);
 * - one Profile per pprof sample type (OTLP has one sample type per
 *   Profile), all sharing the stacks;
 * - the build-id of a mapping as its attribute
 *   process.executable.build_id.gnu (semantic conventions);
 * - Resource attributes from the window's labels: service.name,
 *   host.name, process.pid (an int), container.id, and
 *   process.executable.name from the main (first) mapping's file; other
 *   labels keep their own key.
 * pprof's sample labels become sample attributes.  A location of a
 * mapping with a build-id but no functions (has_functions false: the
 * agent's --no-symbolize, a stripped file) has no lines: pprof's
 * placeholder names are not names.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/sink-int.h"
#include "common/htab.h"
#include "export/otlp-window.h"
#include "otlp-profiles.pb-c.h"
#include "pprof.pb-c.h"

/* Everything the request points to, freed together. */
struct conv {
	void **allocs;
	size_t nr_allocs, cap_allocs;
	/* string_table with a hash index */
	char **strs;
	size_t nr_strs, cap_strs;
	struct sfp_htab str_idx;	/* by sfp_hash_str() */
	bool oom;
};

static void *conv_alloc(struct conv *c, size_t n)
{
	void *p;

	if (c->oom)
		return NULL;
	if (c->nr_allocs == c->cap_allocs) {
		size_t nc = c->cap_allocs ? c->cap_allocs * 2 : 64;
		void **na = realloc(c->allocs, nc * sizeof(*na));
		if (!na) {
			c->oom = true;
			return NULL;
		}
		c->allocs = na;
		c->cap_allocs = nc;
	}
	p = calloc(1, n ? n : 1);
	if (!p) {
		c->oom = true;
		return NULL;
	}
	c->allocs[c->nr_allocs++] = p;
	return p;
}

#define CONV_ARRAY(c, type, n) ((type *)conv_alloc((c), sizeof(type) * (n)))

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct conv *c = ctx;

	return !strcmp(c->strs[idx], key);
}

/* The string's index in the OTLP string_table, added if new. */
static int32_t intern(struct conv *c, const char *s)
{
	uint32_t h, i;

	if (c->oom)
		return 0;
	if (!s)
		s = "";
	h = sfp_hash_str(s);
	i = sfp_htab_find(&c->str_idx, h, str_eq, c, s);
	if (i != SFP_HTAB_NONE)
		return (int32_t)i;
	if (c->nr_strs == c->cap_strs) {
		size_t nc = c->cap_strs ? c->cap_strs * 2 : 256;
		char **ns = realloc(c->strs, nc * sizeof(*ns));
		if (!ns)
			goto oom;
		c->strs = ns;
		c->cap_strs = nc;
	}
	if (c->nr_strs >= INT32_MAX ||
	    sfp_htab_add(&c->str_idx, h, (uint32_t)c->nr_strs))
		goto oom;
	c->strs[c->nr_strs] = (char *)s;	/* points into the pprof or a literal */
	return (int32_t)c->nr_strs++;
oom:
	c->oom = true;
	return 0;
}

/*
 * Sample labels repeat from sample to sample (pid, tid of one process):
 * one attribute_table entry per distinct pprof label.
 */
struct label_slot {
	int64_t key, str, num, unit;
	int32_t idx;		/* 0: empty */
};

/* Not sfp_htab: sized once in the conversion's arena for every label
 * of the request, it never grows and needs no rows beside it. */
struct label_set {
	struct label_slot *slots;
	size_t nr_slots;
};

static int32_t *label_find(struct label_set *ls, const Sfppprof__Label *lb)
{
	uint32_t h = sfp_hash64((uint64_t)lb->key, 0);
	size_t j;

	h = sfp_hash64((uint64_t)lb->str, h);
	h = sfp_hash64((uint64_t)lb->num, h);
	j = sfp_hash64((uint64_t)lb->num_unit, h) & (ls->nr_slots - 1);

	for (;; j = (j + 1) & (ls->nr_slots - 1)) {
		struct label_slot *sl = &ls->slots[j];
		if (!sl->idx) {
			sl->key = lb->key;
			sl->str = lb->str;
			sl->num = lb->num;
			sl->unit = lb->num_unit;
			return &sl->idx;
		}
		if (sl->key == lb->key && sl->str == lb->str &&
		    sl->num == lb->num && sl->unit == lb->num_unit)
			return &sl->idx;
	}
}

struct id_map {
	uint64_t id;
	int32_t idx;
};

static int cmp_id(const void *a, const void *b)
{
	const struct id_map *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Index of pprof ID in MAP (sorted), 0 for id 0, -1 if unknown. */
static int32_t find_id(const struct id_map *map, size_t n, uint64_t id)
{
	struct id_map key = { .id = id };
	const struct id_map *hit;

	if (!id)
		return 0;
	hit = bsearch(&key, map, n, sizeof(*map), cmp_id);
	return hit ? hit->idx : -1;
}

static struct id_map *build_map(struct conv *c, size_t n, uint64_t (*get)(void *, size_t),
				void *arr)
{
	struct id_map *m = CONV_ARRAY(c, struct id_map, n);

	if (!m)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		m[i].id = get(arr, i);
		m[i].idx = (int32_t)(i + 1);
	}
	qsort(m, n, sizeof(*m), cmp_id);
	for (size_t i = 1; i < n; i++)
		if (m[i].id == m[i - 1].id)
			return NULL;	/* duplicate ids: inconsistent */
	return m;
}

static uint64_t mapping_id(void *a, size_t i)
{
	return ((Sfppprof__Mapping **)a)[i]->id;
}

static uint64_t function_id(void *a, size_t i)
{
	return ((Sfppprof__Function **)a)[i]->id;
}

static uint64_t location_id(void *a, size_t i)
{
	return ((Sfppprof__Location **)a)[i]->id;
}

/* pprof string index -> the string, NULL when out of range. */
static const char *pstr(const Sfppprof__Profile *p, int64_t i)
{
	if (i < 0 || (uint64_t)i >= p->n_string_table)
		return NULL;
	return p->string_table[i];
}

static Sfpotlp__KeyValue *kv_new(struct conv *c, const char *key,
				 const char *sval, const int64_t *ival)
{
	Sfpotlp__KeyValue *kv = CONV_ARRAY(c, Sfpotlp__KeyValue, 1);
	Sfpotlp__AnyValue *v = CONV_ARRAY(c, Sfpotlp__AnyValue, 1);

	if (!kv || !v)
		return NULL;
	sfpotlp__key_value__init(kv);
	sfpotlp__any_value__init(v);
	kv->key = (char *)key;
	if (ival) {
		v->value_case = SFPOTLP__ANY_VALUE__VALUE_INT_VALUE;
		v->int_value = *ival;
	} else {
		v->value_case = SFPOTLP__ANY_VALUE__VALUE_STRING_VALUE;
		v->string_value = (char *)sval;
	}
	kv->value = v;
	return kv;
}

static Sfpotlp__Resource *make_resource(struct conv *c,
					const struct sink_item *it,
					const Sfppprof__Profile *p)
{
	Sfpotlp__Resource *r = CONV_ARRAY(c, Sfpotlp__Resource, 1);
	Sfpotlp__KeyValue **attrs = CONV_ARRAY(c, Sfpotlp__KeyValue *,
					       it->nr_labels + 1);
	size_t n = 0;

	if (!r || !attrs)
		return NULL;
	sfpotlp__resource__init(r);
	for (size_t i = 0; i < it->nr_labels; i++) {
		const char *key = sfp_otlp_resource_key(it->keys[i]);
		int64_t v;

		if (sfp_otlp_resource_int(key, it->values[i], &v))
			attrs[n] = kv_new(c, key, NULL, &v);
		else
			attrs[n] = kv_new(c, key, it->values[i], NULL);
		if (!attrs[n])
			return NULL;
		n++;
	}
	if (p->n_mapping) {
		const char *exe = sfp_otlp_executable_name(
			pstr(p, p->mapping[0]->filename));

		if (exe) {
			attrs[n] = kv_new(c, "process.executable.name", exe, NULL);
			if (!attrs[n])
				return NULL;
			n++;
		}
	}
	r->attributes = attrs;
	r->n_attributes = n;
	return r;
}

static int build(struct conv *c, const struct sink_item *it,
		 const Sfppprof__Profile *p,
		 Sfpotlp__ExportProfilesServiceRequest *req)
{
	Sfpotlp__ProfilesDictionary *d = CONV_ARRAY(c, Sfpotlp__ProfilesDictionary, 1);
	size_t nm = p->n_mapping, nf = p->n_function, nl = p->n_location;
	size_t ns = p->n_sample, nattr = 1, nbuild = 0, nslabel = 0;
	struct id_map *mmap = NULL, *fmap = NULL, *lmap = NULL;

	if (!d)
		return -ENOMEM;
	sfpotlp__profiles_dictionary__init(d);
	req->dictionary = d;
	intern(c, "");
	if ((nm && !(mmap = build_map(c, nm, mapping_id, p->mapping))) ||
	    (nf && !(fmap = build_map(c, nf, function_id, p->function))) ||
	    (nl && !(lmap = build_map(c, nl, location_id, p->location))))
		return c->oom ? -ENOMEM : -EINVAL;
	for (size_t i = 0; i < nm; i++)
		if (pstr(p, p->mapping[i]->build_id) &&
		    *pstr(p, p->mapping[i]->build_id))
			nbuild++;
	for (size_t i = 0; i < ns; i++)
		nslabel += p->sample[i]->n_label;

	/* attribute_table: [0], build-ids, then sample labels. */
	d->attribute_table = CONV_ARRAY(c, Sfpotlp__KeyValueAndUnit *,
					1 + nbuild + nslabel);
	Sfpotlp__KeyValueAndUnit *attrs = CONV_ARRAY(c, Sfpotlp__KeyValueAndUnit,
						     1 + nbuild + nslabel);
	Sfpotlp__AnyValue *avals = CONV_ARRAY(c, Sfpotlp__AnyValue,
					      1 + nbuild + nslabel);
	if (!d->attribute_table || !attrs || !avals)
		return -ENOMEM;
	sfpotlp__key_value_and_unit__init(&attrs[0]);
	d->attribute_table[0] = &attrs[0];

	/* mapping_table */
	d->mapping_table = CONV_ARRAY(c, Sfpotlp__Mapping *, nm + 1);
	Sfpotlp__Mapping *maps = CONV_ARRAY(c, Sfpotlp__Mapping, nm + 1);
	int32_t *maps_attr = CONV_ARRAY(c, int32_t, nm + 1);
	if (!d->mapping_table || !maps || !maps_attr)
		return -ENOMEM;
	d->n_mapping_table = nm + 1;
	for (size_t i = 0; i <= nm; i++) {
		sfpotlp__mapping__init(&maps[i]);
		d->mapping_table[i] = &maps[i];
		if (!i)
			continue;
		const Sfppprof__Mapping *m = p->mapping[i - 1];
		const char *file = pstr(p, m->filename);
		const char *bid = pstr(p, m->build_id);
		if (!file || !bid)
			return -EINVAL;
		maps[i].memory_start = m->memory_start;
		maps[i].memory_limit = m->memory_limit;
		maps[i].file_offset = m->file_offset;
		maps[i].filename_strindex = intern(c, file);
		if (*bid) {
			Sfpotlp__KeyValueAndUnit *a = &attrs[nattr];
			Sfpotlp__AnyValue *v = &avals[nattr];
			sfpotlp__key_value_and_unit__init(a);
			sfpotlp__any_value__init(v);
			v->value_case = SFPOTLP__ANY_VALUE__VALUE_STRING_VALUE;
			v->string_value = (char *)bid;
			a->key_strindex = intern(c, SFP_OTLP_BUILD_ID_KEY);
			a->value = v;
			d->attribute_table[nattr] = a;
			maps_attr[i] = (int32_t)nattr++;
			maps[i].attribute_indices = &maps_attr[i];
			maps[i].n_attribute_indices = 1;
		}
	}

	/* function_table */
	d->function_table = CONV_ARRAY(c, Sfpotlp__Function *, nf + 1);
	Sfpotlp__Function *funcs = CONV_ARRAY(c, Sfpotlp__Function, nf + 1);
	if (!d->function_table || !funcs)
		return -ENOMEM;
	d->n_function_table = nf + 1;
	for (size_t i = 0; i <= nf; i++) {
		sfpotlp__function__init(&funcs[i]);
		d->function_table[i] = &funcs[i];
		if (!i)
			continue;
		const Sfppprof__Function *f = p->function[i - 1];
		const char *name = pstr(p, f->name), *sys = pstr(p, f->system_name);
		const char *file = pstr(p, f->filename);
		if (!name || !sys || !file)
			return -EINVAL;
		funcs[i].name_strindex = intern(c, name);
		funcs[i].system_name_strindex = intern(c, sys);
		funcs[i].filename_strindex = intern(c, file);
		funcs[i].start_line = f->start_line;
	}

	/* location_table */
	d->location_table = CONV_ARRAY(c, Sfpotlp__Location *, nl + 1);
	Sfpotlp__Location *locs = CONV_ARRAY(c, Sfpotlp__Location, nl + 1);
	if (!d->location_table || !locs)
		return -ENOMEM;
	d->n_location_table = nl + 1;
	for (size_t i = 0; i <= nl; i++) {
		sfpotlp__location__init(&locs[i]);
		d->location_table[i] = &locs[i];
		if (!i)
			continue;
		const Sfppprof__Location *l = p->location[i - 1];
		int32_t mi = find_id(mmap, nm, l->mapping_id);
		if (mi < 0)
			return -EINVAL;
		locs[i].mapping_index = mi;
		locs[i].address = l->address;
		/* A file the window has no names for (--no-symbolize, or a
		 * stripped binary): its pprof placeholders ("[app]") are not
		 * carried over -- in OTLP a native frame that is not named has
		 * no lines, which is what backend-side symbolizers (sfprof
		 * symbolize among them) look for, with the build-id. */
		if (!l->n_line ||
		    (mi > 0 && !p->mapping[mi - 1]->has_functions &&
		     maps[mi].n_attribute_indices))
			continue;
		Sfpotlp__Line **lines = CONV_ARRAY(c, Sfpotlp__Line *, l->n_line);
		Sfpotlp__Line *la = CONV_ARRAY(c, Sfpotlp__Line, l->n_line);
		if (!lines || !la)
			return -ENOMEM;
		for (size_t j = 0; j < l->n_line; j++) {
			int32_t fi = find_id(fmap, nf, l->line[j]->function_id);
			if (fi < 0)
				return -EINVAL;
			sfpotlp__line__init(&la[j]);
			la[j].function_index = fi;
			la[j].line = l->line[j]->line;
			la[j].column = l->line[j]->column;
			lines[j] = &la[j];
		}
		locs[i].lines = lines;
		locs[i].n_lines = l->n_line;
	}

	/* link_table[0]: ids of 16 and 8 zero bytes, as the schema advises. */
	static uint8_t zero_ids[16];
	Sfpotlp__Link *link = CONV_ARRAY(c, Sfpotlp__Link, 1);
	d->link_table = CONV_ARRAY(c, Sfpotlp__Link *, 1);
	if (!link || !d->link_table)
		return -ENOMEM;
	sfpotlp__link__init(link);
	link->trace_id.data = zero_ids;
	link->trace_id.len = 16;
	link->span_id.data = zero_ids;
	link->span_id.len = 8;
	d->link_table[0] = link;
	d->n_link_table = 1;

	/* stack_table: [0], then one per pprof sample; sample attributes. */
	d->stack_table = CONV_ARRAY(c, Sfpotlp__Stack *, ns + 1);
	Sfpotlp__Stack *stacks = CONV_ARRAY(c, Sfpotlp__Stack, ns + 1);
	int32_t **sattr = CONV_ARRAY(c, int32_t *, ns + 1);
	if (!d->stack_table || !stacks || !sattr)
		return -ENOMEM;
	d->n_stack_table = ns + 1;
	struct label_set ls = { 0 };
	for (ls.nr_slots = 16; ls.nr_slots < 2 * nslabel + 2; ls.nr_slots *= 2)
		;
	ls.slots = CONV_ARRAY(c, struct label_slot, ls.nr_slots);
	if (!ls.slots)
		return -ENOMEM;
	for (size_t i = 0; i <= ns; i++) {
		sfpotlp__stack__init(&stacks[i]);
		d->stack_table[i] = &stacks[i];
		if (!i)
			continue;
		const Sfppprof__Sample *s = p->sample[i - 1];
		int32_t *li = CONV_ARRAY(c, int32_t, s->n_location_id);
		if (!li)
			return -ENOMEM;
		for (size_t j = 0; j < s->n_location_id; j++) {
			int32_t x = find_id(lmap, nl, s->location_id[j]);
			if (x <= 0)
				return -EINVAL;
			li[j] = x;
		}
		stacks[i].location_indices = li;
		stacks[i].n_location_indices = s->n_location_id;
		if (s->n_value != p->n_sample_type)
			return -EINVAL;
		if (!s->n_label)
			continue;
		sattr[i] = CONV_ARRAY(c, int32_t, s->n_label);
		if (!sattr[i])
			return -ENOMEM;
		for (size_t j = 0; j < s->n_label; j++) {
			const Sfppprof__Label *lb = s->label[j];
			int32_t *known = label_find(&ls, lb);
			if (*known) {
				sattr[i][j] = *known;
				continue;
			}
			Sfpotlp__KeyValueAndUnit *a = &attrs[nattr];
			Sfpotlp__AnyValue *v = &avals[nattr];
			const char *key = pstr(p, lb->key), *str = pstr(p, lb->str);
			const char *unit = pstr(p, lb->num_unit);
			if (!key || !str || !unit)
				return -EINVAL;
			sfpotlp__key_value_and_unit__init(a);
			sfpotlp__any_value__init(v);
			a->key_strindex = intern(c, key);
			if (lb->str) {
				v->value_case = SFPOTLP__ANY_VALUE__VALUE_STRING_VALUE;
				v->string_value = (char *)str;
			} else {
				v->value_case = SFPOTLP__ANY_VALUE__VALUE_INT_VALUE;
				v->int_value = lb->num;
				a->unit_strindex = intern(c, unit);
			}
			a->value = v;
			d->attribute_table[nattr] = a;
			*known = (int32_t)nattr;
			sattr[i][j] = (int32_t)nattr++;
		}
	}
	d->n_attribute_table = nattr;

	/* One Profile per sample type. */
	size_t nt = p->n_sample_type;
	Sfpotlp__Profile **profs = CONV_ARRAY(c, Sfpotlp__Profile *, nt ? nt : 1);
	Sfpotlp__Profile *pa = CONV_ARRAY(c, Sfpotlp__Profile, nt ? nt : 1);
	Sfpotlp__ValueType *vt = CONV_ARRAY(c, Sfpotlp__ValueType, 2 * nt + 2);
	uint8_t *ids = CONV_ARRAY(c, uint8_t, 16 * (nt ? nt : 1));
	if (!profs || !pa || !vt || !ids)
		return -ENOMEM;
	for (size_t t = 0; t < nt; t++) {
		Sfpotlp__Profile *pr = &pa[t];
		const char *ty = pstr(p, p->sample_type[t]->type);
		const char *un = pstr(p, p->sample_type[t]->unit);
		if (!ty || !un)
			return -EINVAL;
		sfpotlp__profile__init(pr);
		sfpotlp__value_type__init(&vt[2 * t]);
		vt[2 * t].type_strindex = intern(c, ty);
		vt[2 * t].unit_strindex = intern(c, un);
		pr->sample_type = &vt[2 * t];
		if (p->period_type) {
			const char *pt = pstr(p, p->period_type->type);
			const char *pu = pstr(p, p->period_type->unit);
			if (!pt || !pu)
				return -EINVAL;
			sfpotlp__value_type__init(&vt[2 * t + 1]);
			vt[2 * t + 1].type_strindex = intern(c, pt);
			vt[2 * t + 1].unit_strindex = intern(c, pu);
			pr->period_type = &vt[2 * t + 1];
		}
		pr->period = p->period;
		pr->time_unix_nano = p->time_nanos > 0 ? (uint64_t)p->time_nanos :
				     it->start_ns;
		pr->duration_nano = p->duration_nanos > 0 ?
				    (uint64_t)p->duration_nanos :
				    it->end_ns - it->start_ns;
		/* profile_id: the window and the type, never all zero. */
		uint8_t *id = &ids[16 * t];
		sfp_otlp_profile_id(it->start_ns, it->seq, t, id);
		pr->profile_id.data = id;
		pr->profile_id.len = 16;

		Sfpotlp__Sample **sp = CONV_ARRAY(c, Sfpotlp__Sample *, ns ? ns : 1);
		Sfpotlp__Sample *sa = CONV_ARRAY(c, Sfpotlp__Sample, ns ? ns : 1);
		int64_t *vals = CONV_ARRAY(c, int64_t, ns ? ns : 1);
		if (!sp || !sa || !vals)
			return -ENOMEM;
		for (size_t i = 0; i < ns; i++) {
			sfpotlp__sample__init(&sa[i]);
			sa[i].stack_index = (int32_t)(i + 1);
			vals[i] = p->sample[i]->value[t];
			sa[i].values = &vals[i];
			sa[i].n_values = 1;
			sa[i].attribute_indices = sattr[i + 1];
			sa[i].n_attribute_indices = p->sample[i]->n_label;
			sp[i] = &sa[i];
		}
		pr->samples = sp;
		pr->n_samples = ns;
		profs[t] = pr;
	}

	Sfpotlp__ResourceProfiles *rp = CONV_ARRAY(c, Sfpotlp__ResourceProfiles, 1);
	Sfpotlp__ResourceProfiles **rpp = CONV_ARRAY(c, Sfpotlp__ResourceProfiles *, 1);
	Sfpotlp__ScopeProfiles *sc = CONV_ARRAY(c, Sfpotlp__ScopeProfiles, 1);
	Sfpotlp__ScopeProfiles **scp = CONV_ARRAY(c, Sfpotlp__ScopeProfiles *, 1);
	Sfpotlp__InstrumentationScope *scope = CONV_ARRAY(c, Sfpotlp__InstrumentationScope, 1);
	if (!rp || !rpp || !sc || !scp || !scope)
		return -ENOMEM;
	sfpotlp__resource_profiles__init(rp);
	sfpotlp__scope_profiles__init(sc);
	sfpotlp__instrumentation_scope__init(scope);
	scope->name = (char *)"sfprof";
	sc->scope = scope;
	sc->profiles = profs;
	sc->n_profiles = nt;
	scp[0] = sc;
	rp->scope_profiles = scp;
	rp->n_scope_profiles = 1;
	rp->resource = make_resource(c, it, p);
	if (!rp->resource)
		return -ENOMEM;
	rpp[0] = rp;
	req->resource_profiles = rpp;
	req->n_resource_profiles = 1;

	if (c->oom)
		return -ENOMEM;
	d->string_table = c->strs;
	d->n_string_table = c->nr_strs;
	return 0;
}

int otlp_convert(const struct sink_item *it, void **out, size_t *out_len)
{
	Sfpotlp__ExportProfilesServiceRequest req =
		SFPOTLP__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	Sfppprof__Profile *p;
	struct conv c = { 0 };
	int err;

	*out = NULL;
	*out_len = 0;
	p = sfppprof__profile__unpack(NULL, it->pprof_len, it->pprof);
	if (!p)
		return -EINVAL;
	err = build(&c, it, p, &req);
	if (!err) {
		size_t len = sfpotlp__export_profiles_service_request__get_packed_size(&req);
		uint8_t *buf = malloc(len ? len : 1);
		if (!buf) {
			err = -ENOMEM;
		} else {
			sfpotlp__export_profiles_service_request__pack(&req, buf);
			*out = buf;
			*out_len = len;
		}
	}
	for (size_t i = 0; i < c.nr_allocs; i++)
		free(c.allocs[i]);
	free(c.allocs);
	free(c.strs);
	sfp_htab_free(&c.str_idx);
	sfppprof__profile__free_unpacked(p, NULL);
	return err;
}
