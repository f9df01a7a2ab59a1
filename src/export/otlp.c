// SPDX-License-Identifier: MIT
/*
 * OTLP profiles (profiles/v1development, the schema of
 * src/agent/proto/otlp-profiles.proto): an ExportProfilesServiceRequest
 * written from the profile's tables, through the model pprof is written
 * from (pprof-model.c), so that it says what the window's pprof says:
 *
 * - one shared ProfilesDictionary whose tables start with their zero
 *   entry, as the schema requires (string_table[0] = "", mapping_table[0]
 *   = Mapping{}, ..., link_table[0] with all-zero 16- and 8-byte ids);
 * - the mappings in pprof's order (main binary first), the used
 *   functions and locations in the profile's order, a Stack per merged
 *   sample (leaf first), an inlined location's lines callee first;
 * - one Profile per sample type (OTLP has one sample type per Profile),
 *   all sharing the stacks;
 * - a mapping's build-id as its attribute process.executable.build_id.gnu;
 * - each sample's pid, tid (ints), comm and the window's labels (strings)
 *   as its attributes, one attribute_table entry per distinct one.  An
 *   empty string is the int 0, as in pprof, where a label with no string
 *   is a number;
 * - Resource attributes from the window's resource labels, and
 *   process.executable.name from the main mapping's file;
 * - a location of a mapping with a build-id but no function names (the
 *   agent's --no-symbolize, a stripped file) has no lines: pprof's
 *   placeholder names ("[app]") are not names, and a backend's
 *   symbolizer (sfprof symbolize among them) looks for such frames.
 *
 * The request is the one otlp_convert() (src/agent/otlp-convert.c)
 * builds from the window's pprof, string indices and all; the unit test
 * test-export-otlp compares the two.  Interning follows that order: ""
 * first, then the mappings', the functions', the attributes' and the
 * sample types' strings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/htab.h"
#include "export-int.h"
#include "export/otlp-window.h"
#include "export/pb.h"
#include "export/pprof-model.h"
#include "export/strtab.h"
/* otlp-profiles.proto's field numbers, generated from the schema
 * protobuf-c decodes the requests sfprof symbolize receives with */
#include "otlp-profiles-fields.h"

/* An attribute_table entry: a string or an int value. */
struct otlp_attr {
	int64_t key;		/* string_table index */
	const char *str;	/* NULL: an int */
	int64_t num;		/* the int, or str's index in otlp.vals */
	bool build_id;		/* a mapping's, not a sample label's */
};

struct otlp {
	struct exp_model m;
	const struct sfp_otlp_window *x;
	struct exp_strtab st;		/* the request's string_table */
	struct exp_strtab vals;		/* attribute string values, to tell
					 * equal ones */
	struct pb_buf pb;
	/* by the profile's indices: the table index, 0 when not written */
	uint32_t *map_index, *loc_index, *func_index;
	/* per written mapping (table index - 1) */
	int64_t *map_file;
	char (*bid)[EXP_BUILD_ID_HEX];
	uint64_t *map_attr;		/* its build-id's attribute, or 0 */
	struct otlp_func {		/* per written function */
		int64_t name, system_name, file, start_line;
	} *funcs;
	size_t nr_funcs;
	/* attribute_table from [1], and an index of its sample labels */
	struct otlp_attr *attrs;
	size_t nr_attrs, cap_attrs;
	struct sfp_htab attr_index;	/* attrs (label ones) by value */
	uint64_t *sample_attrs;		/* per merged sample: per_sample */
	size_t per_sample;
	int64_t *type_str, *unit_str;	/* per sample type */
	uint64_t duration;		/* each Profile's duration_nano */
	int err;
};

static int64_t S(struct otlp *o, const char *s)
{
	return exp_strtab__index(&o->st, s, &o->err);
}

/* --- shared with otlp-convert.c --------------------------------------- */

const char *sfp_otlp_resource_key(const char *label)
{
	static const char *const names[][2] = {
		{ "service_name", "service.name" },
		{ "host", "host.name" },
		{ "pid", "process.pid" },
		{ "container_id", "container.id" },
	};

	for (size_t k = 0; k < ARRAY_SIZE(names); k++)
		if (!strcmp(label, names[k][0]))
			return names[k][1];
	return label;
}

bool sfp_otlp_resource_int(const char *key, const char *value, int64_t *v)
{
	char *end;
	long long x;

	if (strcmp(key, "process.pid") || !value || !*value)
		return false;
	errno = 0;
	x = strtoll(value, &end, 10);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

const char *sfp_otlp_executable_name(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	return base && *base && base[0] != '[' ? base : NULL;
}

void sfp_otlp_profile_id(uint64_t start_ns, uint64_t seq, size_t type,
			 uint8_t id[16])
{
	uint64_t a = start_ns ^ 0x736670726f66ull, b = seq * 131 + type + 1;

	memcpy(id, &a, 8);
	memcpy(id + 8, &b, 8);
}

/* --- what the tables hold, interned in the converter's order ---------- */

static int plan_mappings(struct otlp *o)
{
	const struct exp_model *m = &o->m;
	size_t n = m->nr_map_order;

	o->map_file = calloc(n + 1, sizeof(*o->map_file));
	o->bid = calloc(n + 1, sizeof(*o->bid));
	o->map_attr = calloc(n + 1, sizeof(*o->map_attr));
	if (!o->map_file || !o->bid || !o->map_attr)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct sfp_profile_mapping *mp =
			sfp_profile__mapping(m->p, m->map_order[i]);

		o->map_index[m->map_order[i]] = (uint32_t)(i + 1);
		if (!mp)
			continue;
		o->map_file[i] = S(o, mp->path);
		exp_model__build_id(mp, o->bid[i]);
		if (!o->bid[i][0])
			continue;
		/* build-ids first in attribute_table: one entry each */
		o->attrs[o->nr_attrs] = (struct otlp_attr){
			.key = S(o, SFP_OTLP_BUILD_ID_KEY), .str = o->bid[i],
			.build_id = true,
		};
		o->map_attr[i] = ++o->nr_attrs;
	}
	return 0;
}

static int plan_functions(struct otlp *o)
{
	const struct sfp_profile *p = o->m.p;
	size_t n = sfp_profile__nr_funcs(p), i;

	o->funcs = calloc(n + 1, sizeof(*o->funcs));
	if (!o->funcs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_func *f;
		const char *name, *sys;
		char buf[512];

		if (!o->m.func_used[i] || !(f = sfp_profile__func(p, i)))
			continue;
		exp_model__func_names(f, buf, sizeof(buf), &name, &sys);
		o->funcs[o->nr_funcs] = (struct otlp_func){
			.name = S(o, name), .system_name = S(o, sys),
			.file = S(o, f->file), .start_line = f->start_line,
		};
		o->func_index[i] = (uint32_t)++o->nr_funcs;
	}
	return 0;
}

static uint32_t attr_hash(const struct otlp_attr *a)
{
	return sfp_hash64((uint64_t)a->num,
			  sfp_hash64((uint64_t)a->key, a->str != NULL));
}

static bool attr_row_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp_attr *b = &((const struct otlp *)ctx)->attrs[idx];
	const struct otlp_attr *a = key;

	return b->key == a->key && !b->str == !a->str && b->num == a->num;
}

/* Room for one more attribute_table entry. */
static int attrs_reserve(struct otlp *o)
{
	if (o->nr_attrs == o->cap_attrs) {
		size_t nc = o->cap_attrs ? 2 * o->cap_attrs : 64;
		struct otlp_attr *na = realloc(o->attrs, nc * sizeof(*na));

		if (!na)
			return -ENOMEM;
		o->attrs = na;
		o->cap_attrs = nc;
	}
	return 0;
}

/*
 * The attribute_table index of the sample label KEY with string STR, or
 * with no string the int NUM; added when new.  Equal labels share one
 * entry, a build-id's entry is no label's.
 */
static uint64_t sample_attr(struct otlp *o, const char *key, const char *str,
			    int64_t num)
{
	struct otlp_attr a = { .key = S(o, key), .num = num };
	uint32_t hash, i;

	if (o->err)
		return 0;
	/* a pprof label with no string is a number: "" is the int 0 */
	if (str && *str) {
		a.str = str;
		a.num = exp_strtab__intern(&o->vals, str);
	}
	if (a.num < 0 || attrs_reserve(o)) {
		o->err = -ENOMEM;
		return 0;
	}
	/* a build-id's entry is not indexed: no label finds it */
	hash = attr_hash(&a);
	i = sfp_htab_find(&o->attr_index, hash, attr_row_is, o, &a);
	if (i != SFP_HTAB_NONE)
		return i + 1;
	if (sfp_htab_add(&o->attr_index, hash, (uint32_t)o->nr_attrs)) {
		o->err = -ENOMEM;
		return 0;
	}
	o->attrs[o->nr_attrs] = a;
	return ++o->nr_attrs;
}

/* Every merged sample's attributes: pid, tid, comm, the window's labels. */
static int plan_sample_attrs(struct otlp *o)
{
	const struct exp_model *m = &o->m;
	const struct sfp_otlp_window *x = o->x;
	uint64_t *sa;

	o->per_sample = 3 + x->nr_labels;
	o->sample_attrs = calloc(m->nr_samples * o->per_sample + 1,
				 sizeof(*o->sample_attrs));
	if (!o->sample_attrs)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_samples && !o->err; i++) {
		const struct exp_model_sample *ms = &m->samples[i];

		sa = &o->sample_attrs[i * o->per_sample];
		sa[0] = sample_attr(o, "pid", NULL, ms->pid);
		sa[1] = sample_attr(o, "tid", NULL, ms->tid);
		sa[2] = sample_attr(o, "comm",
				    sfp_profile__string(m->p, ms->comm), 0);
		for (size_t l = 0; l < x->nr_labels; l++)
			sa[3 + l] = sample_attr(o, x->labels[l][0],
						x->labels[l][1], 0);
	}
	return o->err;
}

static int plan_types(struct otlp *o)
{
	size_t n = o->m.nr_types;

	o->type_str = calloc(n, sizeof(*o->type_str));
	o->unit_str = calloc(n, sizeof(*o->unit_str));
	if (!o->type_str || !o->unit_str)
		return -ENOMEM;
	for (size_t t = 0; t < n; t++) {
		o->type_str[t] = S(o, o->m.type[t]);
		o->unit_str[t] = S(o, o->m.unit[t]);
	}
	return 0;
}

/* Everything the tables index, in the converter's order of interning. */
static int plan(struct otlp *o)
{
	const struct sfp_profile *p = o->m.p;
	int err;

	o->map_index = calloc(sfp_profile__nr_mappings(p) + 1,
			      sizeof(*o->map_index));
	o->loc_index = calloc(sfp_profile__nr_locs(p) + 1,
			      sizeof(*o->loc_index));
	o->func_index = calloc(sfp_profile__nr_funcs(p) + 1,
			       sizeof(*o->func_index));
	o->cap_attrs = o->m.nr_map_order + 64;
	o->attrs = calloc(o->cap_attrs, sizeof(*o->attrs));
	if (!o->map_index || !o->loc_index || !o->func_index || !o->attrs)
		return -ENOMEM;
	S(o, "");		/* string_table[0] must be "" */
	err = plan_mappings(o);
	if (!err)
		err = plan_functions(o);
	if (!err)
		err = plan_sample_attrs(o);
	if (!err)
		err = plan_types(o);
	return err ? err : o->err;
}

/* --- the request ------------------------------------------------------- */

static void write_value(struct pb_buf *pb, uint32_t field, const char *str,
			int64_t num)
{
	pb_begin(pb, field);
	if (str) {
		/* a oneof member is written even when empty */
		pb_string_always(pb, ANYVALUE_STRING_VALUE, str);
	} else {
		pb_key(pb, ANYVALUE_INT_VALUE, PB_VARINT);
		pb_varint(pb, (uint64_t)num);
	}
	pb_end(pb);
}

static void write_resource(struct otlp *o)
{
	const struct sfp_otlp_window *x = o->x;
	struct pb_buf *pb = &o->pb;
	const char *exe = NULL;

	pb_begin(pb, RESOURCEPROFILES_RESOURCE);
	for (size_t i = 0; i < x->nr_resource; i++) {
		const char *key = sfp_otlp_resource_key(x->resource[i][0]);
		const char *val = x->resource[i][1] ? x->resource[i][1] : "";
		int64_t v;

		pb_begin(pb, RESOURCE_ATTRIBUTES);
		if (*key)
			pb_string_always(pb, KEYVALUE_KEY, key);
		if (sfp_otlp_resource_int(key, val, &v))
			write_value(pb, KEYVALUE_VALUE, NULL, v);
		else
			write_value(pb, KEYVALUE_VALUE, val, 0);
		pb_end(pb);
	}
	if (o->m.nr_map_order) {
		const struct sfp_profile_mapping *mp =
			sfp_profile__mapping(o->m.p, o->m.map_order[0]);

		exe = sfp_otlp_executable_name(mp ? mp->path : NULL);
	}
	if (exe) {
		pb_begin(pb, RESOURCE_ATTRIBUTES);
		pb_string_always(pb, KEYVALUE_KEY, "process.executable.name");
		write_value(pb, KEYVALUE_VALUE, exe, 0);
		pb_end(pb);
	}
	pb_end(pb);
}

static void value_type(struct pb_buf *pb, uint32_t field, int64_t type,
		       int64_t unit)
{
	pb_begin(pb, field);
	pb_int(pb, VALUETYPE_TYPE_STRINDEX, type);
	pb_int(pb, VALUETYPE_UNIT_STRINDEX, unit);
	pb_end(pb);
}

/* Sample type T's Profile: every merged sample with its value of T. */
static void write_profile(struct otlp *o, size_t t)
{
	const struct exp_model *m = &o->m;
	struct pb_buf *pb = &o->pb;
	uint8_t id[16];

	pb_begin(pb, SCOPEPROFILES_PROFILES);
	value_type(pb, PROFILE_SAMPLE_TYPE, o->type_str[t], o->unit_str[t]);
	for (size_t i = 0; i < m->nr_samples; i++) {
		pb_begin(pb, PROFILE_SAMPLES);
		pb_uint(pb, SAMPLE_STACK_INDEX, i + 1);
		pb_packed_uint(pb, SAMPLE_ATTRIBUTE_INDICES,
			       &o->sample_attrs[i * o->per_sample],
			       o->per_sample);
		pb_packed_int(pb, SAMPLE_VALUES, &exp_model__values(m, i)[t], 1);
		pb_end(pb);
	}
	pb_fixed64(pb, PROFILE_TIME_UNIX_NANO, o->x->time_nanos);
	pb_uint(pb, PROFILE_DURATION_NANO, o->duration);
	if (m->nr_types > 1)	/* event 0's, as pprof's period_type */
		value_type(pb, PROFILE_PERIOD_TYPE, o->type_str[1],
			   o->unit_str[1]);
	pb_int(pb, PROFILE_PERIOD, m->period);
	sfp_otlp_profile_id(o->x->time_nanos, o->x->seq, t, id);
	pb_bytes_always(pb, PROFILE_PROFILE_ID, id, sizeof(id));
	pb_end(pb);
}

static void write_resource_profiles(struct otlp *o)
{
	struct pb_buf *pb = &o->pb;

	pb_begin(pb, EXPORTPROFILESSERVICEREQUEST_RESOURCE_PROFILES);
	write_resource(o);
	pb_begin(pb, RESOURCEPROFILES_SCOPE_PROFILES);
	pb_begin(pb, SCOPEPROFILES_SCOPE);
	pb_string_always(pb, INSTRUMENTATIONSCOPE_NAME, "sfprof");
	pb_end(pb);
	for (size_t t = 0; t < o->m.nr_types; t++)
		write_profile(o, t);
	pb_end(pb);
	pb_end(pb);
}

/* Entry [0] of a table: the empty message. */
static void zero_entry(struct pb_buf *pb, uint32_t field)
{
	pb_begin(pb, field);
	pb_end(pb);
}

static void write_mappings(struct otlp *o)
{
	const struct exp_model *m = &o->m;
	struct pb_buf *pb = &o->pb;

	zero_entry(pb, PROFILESDICTIONARY_MAPPING_TABLE);
	for (size_t i = 0; i < m->nr_map_order; i++) {
		const struct sfp_profile_mapping *mp =
			sfp_profile__mapping(m->p, m->map_order[i]);

		pb_begin(pb, PROFILESDICTIONARY_MAPPING_TABLE);
		if (mp) {
			pb_uint(pb, MAPPING_MEMORY_START, mp->start);
			pb_uint(pb, MAPPING_MEMORY_LIMIT, mp->end);
			pb_uint(pb, MAPPING_FILE_OFFSET, mp->pgoff);
		}
		pb_int(pb, MAPPING_FILENAME_STRINDEX, o->map_file[i]);
		pb_packed_uint(pb, MAPPING_ATTRIBUTE_INDICES, &o->map_attr[i],
			       o->map_attr[i] ? 1 : 0);
		pb_end(pb);
	}
}

/* Does a loc of mapping MAP (profile index) keep its lines? */
static bool keeps_lines(const struct otlp *o, uint32_t map)
{
	uint32_t mi = map < sfp_profile__nr_mappings(o->m.p) ?
		      o->map_index[map] : 0;

	/* a file with a build-id the window has no names for: no lines */
	return !mi || o->m.maps[map].has_functions || !o->map_attr[mi - 1];
}

static void write_locations(struct otlp *o)
{
	const struct sfp_profile *p = o->m.p;
	size_t n = sfp_profile__nr_locs(p), i;
	struct pb_buf *pb = &o->pb;
	uint32_t nr = 0;

	zero_entry(pb, PROFILESDICTIONARY_LOCATION_TABLE);
	for (i = 0; i < n; i++) {
		const struct sfp_profile_loc *loc;

		if (!o->m.loc_used[i] || !(loc = sfp_profile__loc(p, i)))
			continue;
		o->loc_index[i] = ++nr;
		pb_begin(pb, PROFILESDICTIONARY_LOCATION_TABLE);
		if (loc->mapping < sfp_profile__nr_mappings(p))
			pb_uint(pb, LOCATION_MAPPING_INDEX,
				o->map_index[loc->mapping]);
		pb_uint(pb, LOCATION_ADDRESS, loc->ip);
		for (uint32_t l = 0; keeps_lines(o, loc->mapping) &&
				     l < loc->nr_lines; l++) {
			const struct sfp_profile_line *ln = &loc->lines[l];

			pb_begin(pb, LOCATION_LINES);
			if (ln->func < sfp_profile__nr_funcs(p))
				pb_uint(pb, LINE_FUNCTION_INDEX,
					o->func_index[ln->func]);
			pb_int(pb, LINE_LINE, ln->line);
			pb_end(pb);
		}
		pb_end(pb);
	}
}

static void write_functions(struct otlp *o)
{
	struct pb_buf *pb = &o->pb;

	zero_entry(pb, PROFILESDICTIONARY_FUNCTION_TABLE);
	for (size_t i = 0; i < o->nr_funcs; i++) {
		const struct otlp_func *f = &o->funcs[i];

		pb_begin(pb, PROFILESDICTIONARY_FUNCTION_TABLE);
		pb_int(pb, FUNCTION_NAME_STRINDEX, f->name);
		pb_int(pb, FUNCTION_SYSTEM_NAME_STRINDEX, f->system_name);
		pb_int(pb, FUNCTION_FILENAME_STRINDEX, f->file);
		pb_int(pb, FUNCTION_START_LINE, f->start_line);
		pb_end(pb);
	}
}

static void write_attributes(struct otlp *o)
{
	struct pb_buf *pb = &o->pb;

	zero_entry(pb, PROFILESDICTIONARY_ATTRIBUTE_TABLE);
	for (size_t i = 0; i < o->nr_attrs; i++) {
		const struct otlp_attr *a = &o->attrs[i];

		pb_begin(pb, PROFILESDICTIONARY_ATTRIBUTE_TABLE);
		pb_int(pb, KEYVALUEANDUNIT_KEY_STRINDEX, a->key);
		write_value(pb, KEYVALUEANDUNIT_VALUE, a->str, a->num);
		/* unit_strindex: "" (0), pprof's labels here have no unit */
		pb_end(pb);
	}
}

/* One Stack per merged sample, its locs as location_table indices. */
static int write_stacks(struct otlp *o)
{
	const struct exp_model *m = &o->m;
	struct pb_buf *pb = &o->pb;
	uint64_t *idx = NULL;
	size_t cap = 0;

	zero_entry(pb, PROFILESDICTIONARY_STACK_TABLE);
	for (size_t i = 0; i < m->nr_samples; i++) {
		const uint32_t *locs = exp_model__stack(m, i);
		size_t n = m->samples[i].nr_locs;

		if (n > cap) {
			uint64_t *ni = realloc(idx, n * sizeof(*ni));

			if (!ni) {
				free(idx);
				return -ENOMEM;
			}
			idx = ni;
			cap = n;
		}
		for (size_t k = 0; k < n; k++)
			idx[k] = o->loc_index[locs[k]];
		pb_begin(pb, PROFILESDICTIONARY_STACK_TABLE);
		pb_packed_uint(pb, STACK_LOCATION_INDICES, idx, n);
		pb_end(pb);
	}
	free(idx);
	return 0;
}

static int write_dictionary(struct otlp *o)
{
	static const uint8_t zero_ids[16];
	struct pb_buf *pb = &o->pb;
	int err;

	pb_begin(pb, EXPORTPROFILESSERVICEREQUEST_DICTIONARY);
	write_mappings(o);
	write_locations(o);
	write_functions(o);
	/* link_table[0]: ids of 16 and 8 zero bytes, as the schema advises */
	pb_begin(pb, PROFILESDICTIONARY_LINK_TABLE);
	pb_bytes_always(pb, LINK_TRACE_ID, zero_ids, 16);
	pb_bytes_always(pb, LINK_SPAN_ID, zero_ids, 8);
	pb_end(pb);
	for (size_t i = 0; i < o->st.n; i++)
		pb_string_always(pb, PROFILESDICTIONARY_STRING_TABLE,
				 o->st.strs[i]);
	write_attributes(o);
	err = write_stacks(o);
	pb_end(pb);
	return err;
}

static void otlp_free(struct otlp *o)
{
	exp_model__free(&o->m);
	exp_strtab__free(&o->st);
	exp_strtab__free(&o->vals);
	pb_buf__free(&o->pb);
	free(o->map_index);
	free(o->loc_index);
	free(o->func_index);
	free(o->map_file);
	free(o->bid);
	free(o->map_attr);
	free(o->funcs);
	free(o->attrs);
	sfp_htab_free(&o->attr_index);
	free(o->sample_attrs);
	free(o->type_str);
	free(o->unit_str);
}

/* The request into o->pb; with SPAN, the samples' span as duration
 * rather than the window's. */
static int encode(struct otlp *o, const struct sfp_profile *p, bool user_only,
		  bool span)
{
	int err = exp_model__build(&o->m, p, user_only);

	if (err)
		return err;
	o->duration = span ? (uint64_t)o->m.duration : o->x->duration_nanos;
	err = plan(o);
	if (err)
		return err;
	/* the request's fields in their order: resource_profiles, then the
	 * dictionary their indices point into */
	write_resource_profiles(o);
	err = write_dictionary(o);
	if (err)
		return err;
	return o->err ? o->err : o->pb.err;
}

int sfp_otlp_encode(const struct sfp_profile *p,
		    const struct sfp_otlp_window *x, void **out, size_t *len)
{
	struct otlp o = { .x = x };
	int err;

	*out = NULL;
	*len = 0;
	err = encode(&o, p, false, false);
	if (!err) {
		*out = o.pb.data;
		*len = o.pb.len;
		o.pb.data = NULL;
	}
	otlp_free(&o);
	return err;
}

/*
 * sfprof export -f otlp: the request, uncompressed, for a file.  No
 * window: no time (the model's is the perf clock, not Unix time), the
 * samples' span as duration, no labels or Resource beyond the main
 * binary's name.
 */
int sfp_export_otlp(const struct sfp_profile *p, FILE *out,
		    const struct sfp_export_opts *opts)
{
	static const struct sfp_otlp_window none;
	struct otlp o = { .x = &none };
	int err;

	err = encode(&o, p, SFP_OPTS_GET(opts, sfp_export_opts, user_only,
					 false), true);
	if (!err && fwrite(o.pb.data, 1, o.pb.len, out) != o.pb.len)
		err = -EIO;
	otlp_free(&o);
	return err;
}
