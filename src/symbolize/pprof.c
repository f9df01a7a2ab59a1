// SPDX-License-Identifier: MIT
/*
 * A pprof profile (perftools.profiles.Profile) named: every location
 * whose mapping has a build-id and which has no line yet gets its lines
 * (innermost inlined function first, the real function last, as pprof
 * orders them); new functions and strings are appended to the tables,
 * nothing present is renumbered or rewritten, and fields this schema
 * does not know are packed back as they came.
 *
 * Addresses are named as they are given: a caller's frame is its return
 * address, named as sfprof's own exports and perf script name it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sink.h"
#include "common/gzip.h"
#include "export/strtab.h"
#include "pprof.pb-c.h"
#include "symbolize/symbolize.h"

/* What one call holds; freed together. */
struct fill {
	Sfppprof__Profile *p;
	const struct symz_lookup *lk;
	struct symz_stats *st;
	struct symz_map *maps;		/* by p->mapping index */
	bool *map_done;
	bool *had_functions;		/* has_functions as the input said */
	struct exp_strtab strs;		/* strings added, after the old ones */
	struct exp_strtab funcs;	/* "name\x1fsystem\x1ffile": added */
	uint64_t next_func_id;
};

static int64_t str_index(struct fill *f, const char *s)
{
	int64_t i = exp_strtab__intern(&f->strs, s ? s : "");

	return i < 0 ? i : (int64_t)f->p->n_string_table + i;
}

static const char *str_at(const Sfppprof__Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] :
							 "";
}

/* The function id for a frame, appending the function when new. */
static int64_t func_id(struct fill *f, const struct symz_frame *fr)
{
	char key[4096];
	size_t had;
	int64_t k;
	int n;

	n = snprintf(key, sizeof(key), "%s\x1f%s\x1f%s", fr->name,
		     fr->system_name, fr->file ? fr->file : "");
	if (n < 0 || (size_t)n >= sizeof(key))
		return -ENAMETOOLONG;
	had = f->funcs.n;
	k = exp_strtab__intern(&f->funcs, key);
	if (k < 0)
		return k;
	if (f->funcs.n == had)		/* added before */
		return (int64_t)(f->next_func_id + (uint64_t)k);
	/* new: a Function message of its own, freed with the profile */
	{
		Sfppprof__Profile *p = f->p;
		Sfppprof__Function *fn, **nf;
		int64_t name, sys, file;

		nf = realloc(p->function, (p->n_function + 1) * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		p->function = nf;
		fn = malloc(sizeof(*fn));
		if (!fn)
			return -ENOMEM;
		sfppprof__function__init(fn);
		name = str_index(f, fr->name);
		sys = str_index(f, fr->system_name);
		file = fr->file ? str_index(f, fr->file) : 0;
		if (name < 0 || sys < 0 || file < 0) {
			free(fn);
			return -ENOMEM;
		}
		fn->id = f->next_func_id + (uint64_t)k;
		fn->name = name;
		fn->system_name = sys;
		fn->filename = file;
		p->function[p->n_function++] = fn;
		return (int64_t)fn->id;
	}
}

static Sfppprof__Mapping *mapping_of(const Sfppprof__Profile *p, uint64_t id,
				     size_t *idx)
{
	size_t i;

	if (!id)
		return NULL;
	/* ids are usually 1..n in order */
	if (id <= p->n_mapping && p->mapping[id - 1]->id == id) {
		*idx = (size_t)id - 1;
		return p->mapping[id - 1];
	}
	for (i = 0; i < p->n_mapping; i++)
		if (p->mapping[i]->id == id) {
			*idx = i;
			return p->mapping[i];
		}
	return NULL;
}

static int fill_location(struct fill *f, Sfppprof__Location *loc)
{
	struct symz_frame fr[SYMZ_MAX_FRAMES];
	Sfppprof__Mapping *pm;
	struct symz_mapping m;
	struct symz_map *mp;
	Sfppprof__Line **lines;
	size_t idx = 0;
	int n, i;

	pm = mapping_of(f->p, loc->mapping_id, &idx);
	/* Lines under a mapping that says it has no functions are a
	 * producer's placeholders ("[libc.so.6]"), which pprof's own
	 * symbolizer replaces too; any other line is a name. */
	if (loc->n_line && (!pm || f->had_functions[idx])) {
		f->st->already++;
		return 0;
	}
	m.path = pm ? str_at(f->p, pm->filename) : "";
	m.build_id = pm ? str_at(f->p, pm->build_id) : "";
	if (!pm || !*m.build_id) {
		f->st->not_native++;
		return 0;
	}
	m.start = pm->memory_start;
	m.limit = pm->memory_limit;
	m.offset = pm->file_offset;
	mp = &f->maps[idx];
	n = symz_name_loc(f->lk, &m, mp, &f->map_done[idx], loc->address, f->st,
			  fr, SYMZ_MAX_FRAMES);
	if (!n)
		return 0;
	lines = calloc((size_t)n, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		int64_t fid = func_id(f, &fr[i]);

		if (fid < 0 || !(lines[i] = malloc(sizeof(**lines)))) {
			while (i-- > 0)
				free(lines[i]);
			free(lines);
			return fid < 0 ? (int)fid : -ENOMEM;
		}
		sfppprof__line__init(lines[i]);
		lines[i]->function_id = (uint64_t)fid;
		lines[i]->line = fr[i].line;
		lines[i]->column = fr[i].column;
		if (fr[i].file)
			pm->has_filenames = true;
		if (fr[i].line)
			pm->has_line_numbers = true;
	}
	for (i = 0; i < (int)loc->n_line; i++)
		sfppprof__line__free_unpacked(loc->line[i], NULL);
	free(loc->line);
	loc->line = lines;
	loc->n_line = (size_t)n;
	pm->has_functions = true;
	if (n > 1)
		pm->has_inline_frames = true;
	return 0;
}

int symz_pprof(const struct symz_lookup *lk, const void *in, size_t len,
	       size_t max_len, void **out, size_t *out_len,
	       struct symz_stats *st, char *why, size_t why_len)
{
	struct fill f = { .lk = lk, .st = st };
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
	err = agent_pprof_check(pb, pb_len, why, why_len);
	if (err)
		goto out;
	f.p = sfppprof__profile__unpack(NULL, pb_len, pb);
	if (!f.p) {
		snprintf(why, why_len, "protobuf-c could not decode it");
		err = -EBADMSG;
		goto out;
	}
	for (i = 0; i < f.p->n_function; i++)
		if (f.p->function[i]->id >= f.next_func_id)
			f.next_func_id = f.p->function[i]->id + 1;
	if (!f.next_func_id)
		f.next_func_id = 1;
	f.maps = calloc(f.p->n_mapping + 1, sizeof(*f.maps));
	f.map_done = calloc(f.p->n_mapping + 1, sizeof(*f.map_done));
	f.had_functions = calloc(f.p->n_mapping + 1,
				 sizeof(*f.had_functions));
	if (!f.maps || !f.map_done || !f.had_functions) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < f.p->n_mapping; i++)
		f.had_functions[i] = f.p->mapping[i]->has_functions;
	st->locations += f.p->n_location;
	st->time_ns = f.p->time_nanos;
	st->duration_ns = f.p->duration_nanos;
	for (i = 0; i < f.p->n_location; i++)
		if ((err = fill_location(&f, f.p->location[i])))
			goto out;
	if ((err = symz_take_strings(&f.strs, &f.p->string_table,
				     &f.p->n_string_table)))
		goto out;
	n = sfppprof__profile__get_packed_size(f.p);
	packed = malloc(n ? n : 1);
	if (!packed) {
		err = -ENOMEM;
		goto out;
	}
	sfppprof__profile__pack(f.p, packed);
	err = symz_wrap(packed, n, gz, out, out_len);
	packed = NULL;
out:
	if (err && !why[0])
		snprintf(why, why_len, "%s", strerror(-err));
	/* the tables' strings were copied into the output's */
	symz_maps_release(f.maps, f.maps && f.p ? f.p->n_mapping + 1 : 0);
	if (f.p)
		sfppprof__profile__free_unpacked(f.p, NULL);
	exp_strtab__free(&f.strs);
	exp_strtab__free(&f.funcs);
	free(f.maps);
	free(f.map_done);
	free(f.had_functions);
	free(packed);
	free(raw);
	return err;
}
