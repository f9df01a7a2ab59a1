// SPDX-License-Identifier: MIT
/*
 * An OTLP profiles request (ExportProfilesServiceRequest, profiles
 * v1development) named: every location of the shared dictionary that has
 * no lines and whose mapping carries a GNU build-id attribute gets its
 * lines; functions and strings are appended to the dictionary's tables,
 * nothing present is renumbered.  In OTLP a native frame nobody named
 * has no lines (the OpenTelemetry eBPF profiler's, the agent's with
 * --no-symbolize); interpreter frames come named and are left alone.
 *
 * Every index the filler follows is checked against its table: a
 * request that points outside one is refused, never followed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/gzip.h"
#include "export/strtab.h"
#include "otlp-profiles.pb-c.h"
#include "symbolize/symbolize.h"

/* The build-id attribute of a mapping (semantic conventions). */
#define BUILD_ID_KEY "process.executable.build_id.gnu"

struct fill {
	Sfpotlp__ProfilesDictionary *d;
	const struct symz_lookup *lk;
	struct symz_stats *st;
	struct symz_map *maps;		/* by mapping_table index */
	bool *map_done;
	struct exp_strtab strs;		/* strings added */
	struct exp_strtab funcs;	/* functions added, by key */
	size_t old_funcs;
	char *why;
	size_t why_len;
};

static int32_t str_index(struct fill *f, const char *s)
{
	int64_t i = exp_strtab__intern(&f->strs, s ? s : "");

	if (i < 0 || (uint64_t)i + f->d->n_string_table > INT32_MAX)
		return -ENOMEM;
	return (int32_t)(f->d->n_string_table + (size_t)i);
}

static int bad(struct fill *f, const char *what, size_t i, int64_t v)
{
	snprintf(f->why, f->why_len, "%s %zu: index %lld outside its table",
		 what, i, (long long)v);
	return -EBADMSG;
}

/* The mapping's build-id as hex, or "" (none, or not a string). */
static int build_id_of(struct fill *f, size_t mi, const char **out)
{
	const Sfpotlp__Mapping *m = f->d->mapping_table[mi];
	size_t i;

	*out = "";
	for (i = 0; i < m->n_attribute_indices; i++) {
		int32_t ai = m->attribute_indices[i];
		const Sfpotlp__KeyValueAndUnit *a;

		if (ai < 0 || (size_t)ai >= f->d->n_attribute_table)
			return bad(f, "mapping", mi, ai);
		a = f->d->attribute_table[ai];
		if (a->key_strindex < 0 ||
		    (size_t)a->key_strindex >= f->d->n_string_table)
			return bad(f, "attribute", (size_t)ai, a->key_strindex);
		if (strcmp(f->d->string_table[a->key_strindex], BUILD_ID_KEY) ||
		    !a->value || a->value->value_case !=
				 SFPOTLP__ANY_VALUE__VALUE_STRING_VALUE)
			continue;
		*out = a->value->string_value;
		return 0;
	}
	return 0;
}

static int32_t func_index(struct fill *f, const struct symz_frame *fr)
{
	Sfpotlp__ProfilesDictionary *d = f->d;
	Sfpotlp__Function *fn, **nt;
	char key[4096];
	size_t had = f->funcs.n;
	int32_t name, sys, file;
	int64_t k;
	int n;

	n = snprintf(key, sizeof(key), "%s\x1f%s\x1f%s", fr->name,
		     fr->system_name, fr->file ? fr->file : "");
	if (n < 0 || (size_t)n >= sizeof(key))
		return -ENAMETOOLONG;
	k = exp_strtab__intern(&f->funcs, key);
	if (k < 0 || f->old_funcs + (uint64_t)k > INT32_MAX)
		return -ENOMEM;
	if (f->funcs.n == had)
		return (int32_t)(f->old_funcs + (size_t)k);
	nt = realloc(d->function_table,
		     (d->n_function_table + 1) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	d->function_table = nt;
	name = str_index(f, fr->name);
	sys = str_index(f, fr->system_name);
	file = fr->file ? str_index(f, fr->file) : 0;
	if (name < 0 || sys < 0 || file < 0 || !(fn = malloc(sizeof(*fn))))
		return -ENOMEM;
	sfpotlp__function__init(fn);
	fn->name_strindex = name;
	fn->system_name_strindex = sys;
	fn->filename_strindex = file;
	d->function_table[d->n_function_table++] = fn;
	return (int32_t)(d->n_function_table - 1);
}

static int fill_location(struct fill *f, size_t li)
{
	Sfpotlp__Location *loc = f->d->location_table[li];
	struct symz_frame fr[SYMZ_MAX_FRAMES];
	const Sfpotlp__Mapping *pm;
	struct symz_mapping m;
	struct symz_map *mp;
	Sfpotlp__Line **lines;
	size_t mi;
	int n, i, err;

	if (loc->mapping_index < 0 ||
	    (size_t)loc->mapping_index >= f->d->n_mapping_table)
		return bad(f, "location", li, loc->mapping_index);
	for (i = 0; i < (int)loc->n_lines; i++)
		if (loc->lines[i]->function_index < 0 ||
		    (size_t)loc->lines[i]->function_index >=
		    f->d->n_function_table)
			return bad(f, "location", li,
				   loc->lines[i]->function_index);
	if (loc->n_lines) {
		f->st->already++;
		return 0;
	}
	mi = (size_t)loc->mapping_index;
	pm = f->d->mapping_table[mi];
	if (pm->filename_strindex < 0 ||
	    (size_t)pm->filename_strindex >= f->d->n_string_table)
		return bad(f, "mapping", mi, pm->filename_strindex);
	if ((err = build_id_of(f, mi, &m.build_id)))
		return err;
	m.path = f->d->string_table[pm->filename_strindex];
	if (!mi || !*m.build_id) {	/* [0] is the "no mapping" entry */
		f->st->not_native++;
		return 0;
	}
	m.start = pm->memory_start;
	m.limit = pm->memory_limit;
	m.offset = pm->file_offset;
	mp = &f->maps[mi];
	n = symz_name_loc(f->lk, &m, mp, &f->map_done[mi], loc->address, f->st,
			  fr, SYMZ_MAX_FRAMES);
	if (!n)
		return 0;
	lines = calloc((size_t)n, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		int32_t fi = func_index(f, &fr[i]);

		if (fi < 0 || !(lines[i] = malloc(sizeof(**lines)))) {
			while (i-- > 0)
				free(lines[i]);
			free(lines);
			return fi < 0 ? fi : -ENOMEM;
		}
		sfpotlp__line__init(lines[i]);
		lines[i]->function_index = fi;
		lines[i]->line = fr[i].line;
		lines[i]->column = fr[i].column;
	}
	loc->lines = lines;
	loc->n_lines = (size_t)n;
	return 0;
}

int symz_otlp(const struct symz_lookup *lk, const void *in, size_t len,
	      size_t max_len, void **out, size_t *out_len,
	      struct symz_stats *st, char *why, size_t why_len)
{
	struct fill f = { .lk = lk, .st = st, .why = why, .why_len = why_len };
	Sfpotlp__ExportProfilesServiceRequest *req = NULL;
	void *raw = NULL, *packed = NULL;
	const void *pb = in;
	size_t pb_len = len, i, n;
	bool gz = sfp_is_gzip(in, len);
	int err;

	*out = NULL;
	*out_len = 0;
	why[0] = 0;
	err = symz_unwrap(in, len, max_len, &raw, &pb, &pb_len, why, why_len);
	if (err)
		return err;
	req = sfpotlp__export_profiles_service_request__unpack(NULL, pb_len,
							       pb);
	if (!req || !req->dictionary) {
		snprintf(why, why_len, "%s", req ? "no dictionary" :
			 "protobuf-c could not decode it");
		err = -EBADMSG;
		goto out;
	}
	f.d = req->dictionary;
	if (!f.d->n_string_table || !f.d->n_mapping_table ||
	    !f.d->n_function_table || !f.d->n_location_table) {
		snprintf(why, why_len, "a dictionary table without its zero "
			 "entry");
		err = -EBADMSG;
		goto out;
	}
	f.old_funcs = f.d->n_function_table;
	f.maps = calloc(f.d->n_mapping_table, sizeof(*f.maps));
	f.map_done = calloc(f.d->n_mapping_table, sizeof(*f.map_done));
	if (!f.maps || !f.map_done) {
		err = -ENOMEM;
		goto out;
	}
	/* [0] is the zero entry, not a location of any stack */
	st->locations += f.d->n_location_table - 1;
	for (i = 1; i < f.d->n_location_table; i++)
		if ((err = fill_location(&f, i)))
			goto out;
	if ((err = symz_take_strings(&f.strs, &f.d->string_table,
				     &f.d->n_string_table)))
		goto out;
	n = sfpotlp__export_profiles_service_request__get_packed_size(req);
	packed = malloc(n ? n : 1);
	if (!packed) {
		err = -ENOMEM;
		goto out;
	}
	sfpotlp__export_profiles_service_request__pack(req, packed);
	err = symz_wrap(packed, n, gz, out, out_len);
	packed = NULL;
out:
	if (err && !why[0])
		snprintf(why, why_len, "%s", strerror(-err));
	/* the tables' strings were copied into the output's */
	symz_maps_release(f.maps, f.maps && f.d ? f.d->n_mapping_table : 0);
	if (req)
		sfpotlp__export_profiles_service_request__free_unpacked(req,
									NULL);
	exp_strtab__free(&f.strs);
	exp_strtab__free(&f.funcs);
	free(f.maps);
	free(f.map_done);
	free(packed);
	free(raw);
	return err;
}
