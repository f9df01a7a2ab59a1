// SPDX-License-Identifier: MIT
/*
 * pprof: a gzip-compressed perftools.profiles.Profile message (the
 * profile.proto of github.com/google/pprof; the tests decode what this
 * writes with protoc and upstream's file).
 *
 * Mapping of the model:
 *   sample_type  [samples, count] then one column per event: the first
 *                clock event (cpu-clock, task-clock) is [cpu, nanoseconds],
 *                offcpu-time (record --off-cpu, perf's) [off_cpu,
 *                nanoseconds] with the blocked time of each sample,
 *                any other [<event>, count]
 *   sample       one per distinct (stack, pid, tid, comm): value[0] the
 *                number of samples, value[1+e] the sum of their periods for
 *                event e (the event's fixed period for -c recordings);
 *                labels pid, tid (numbers) and comm (string)
 *   location     one per loc on a written stack; id = loc index + 1,
 *                address = the runtime ip, lines innermost (inlined) first
 *                as the model keeps them
 *   function     id = func index + 1; name demangled, system_name raw
 *   mapping      id = mapping index + 1; the first one written is the
 *                mapping of the outermost user frame (the main binary, as
 *                pprof wants mapping[0]); build-id as lowercase hex
 *   duration_nanos  last sample time - first; period_type / period from
 *                the first event; comments: cmdline and hostname
 * time_nanos (wall clock) is not written: the model's times are perf clock
 * (usually CLOCK_MONOTONIC), not UTC.  The samples merged, the locs,
 * functions and mappings they use and the mappings' order are
 * pprof-model.c's, which the OTLP encoder (otlp.c) shares.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/gzip.h"
#include "export-int.h"
#include "export/pb.h"
#include "export/strtab.h"
#include "export/pprof-model.h"
/* profile.proto's field numbers, generated from the one schema,
 * src/agent/proto/pprof.proto, that protobuf-c decodes with */
#include "pprof-fields.h"

struct pprof {
	struct exp_model m;
	struct exp_strtab st;
	struct pb_buf pb;
	const struct sfp_pprof_window *x;	/* the agent's, or NULL */
	int err;
};

static int64_t S(struct pprof *pp, const char *s)
{
	return exp_strtab__index(&pp->st, s, &pp->err);
}

static void value_type(struct pprof *pp, uint32_t field, int64_t type,
		       int64_t unit)
{
	pb_begin(&pp->pb, field);
	pb_int(&pp->pb, VALUETYPE_TYPE, type);
	pb_int(&pp->pb, VALUETYPE_UNIT, unit);
	pb_end(&pp->pb);
}

static void write_sample_types(struct pprof *pp)
{
	for (size_t t = 0; t < pp->m.nr_types; t++) {
		/* one statement each: the strings' order in the table is then
		 * the same whichever order a compiler evaluates arguments in */
		int64_t type = S(pp, pp->m.type[t]);
		int64_t unit = S(pp, pp->m.unit[t]);

		value_type(pp, PROFILE_SAMPLE_TYPE, type, unit);
	}
}

static void label_num(struct pprof *pp, int64_t key, int64_t num)
{
	pb_begin(&pp->pb, SAMPLE_LABEL);
	pb_int(&pp->pb, LABEL_KEY, key);
	/* written even when 0: a label holds a str or a num, and pid 0 is
	 * the idle task */
	pb_key(&pp->pb, LABEL_NUM, PB_VARINT);
	pb_varint(&pp->pb, (uint64_t)num);
	pb_end(&pp->pb);
}

static int write_samples(struct pprof *pp)
{
	const struct exp_model *m = &pp->m;
	size_t i, k, l, ncap = 0;
	uint64_t *ids = NULL;
	int64_t k_pid = S(pp, "pid"), k_tid = S(pp, "tid"),
		k_comm = S(pp, "comm");

	for (i = 0; i < m->nr_samples; i++) {
		const struct exp_model_sample *ms = &m->samples[i];
		const uint32_t *locs = exp_model__stack(m, i);

		if (ms->nr_locs > ncap) {
			uint64_t *n = realloc(ids, ms->nr_locs * sizeof(*n));

			if (!n) {
				free(ids);
				return -ENOMEM;
			}
			ids = n;
			ncap = ms->nr_locs;
		}
		for (k = 0; k < ms->nr_locs; k++)
			ids[k] = (uint64_t)locs[k] + 1;
		pb_begin(&pp->pb, PROFILE_SAMPLE);
		pb_packed_uint(&pp->pb, SAMPLE_LOCATION_ID, ids, ms->nr_locs);
		pb_packed_int(&pp->pb, SAMPLE_VALUE, exp_model__values(m, i),
			      m->nr_types);
		label_num(pp, k_pid, ms->pid);
		label_num(pp, k_tid, ms->tid);
		pb_begin(&pp->pb, SAMPLE_LABEL);
		pb_int(&pp->pb, LABEL_KEY, k_comm);
		pb_int(&pp->pb, LABEL_STR,
		       S(pp, sfp_profile__string(m->p, ms->comm)));
		pb_end(&pp->pb);
		for (l = 0; pp->x && l < pp->x->nr_labels; l++) {
			pb_begin(&pp->pb, SAMPLE_LABEL);
			pb_int(&pp->pb, LABEL_KEY, S(pp, pp->x->labels[l][0]));
			pb_int(&pp->pb, LABEL_STR, S(pp, pp->x->labels[l][1]));
			pb_end(&pp->pb);
		}
		pb_end(&pp->pb);
	}
	free(ids);
	return 0;
}

static void write_mapping(struct pprof *pp, uint32_t idx)
{
	const struct sfp_profile_mapping *mp = sfp_profile__mapping(pp->m.p, idx);
	const struct exp_model_map *mi = &pp->m.maps[idx];
	char bid[EXP_BUILD_ID_HEX];

	if (!mp)
		return;
	exp_model__build_id(mp, bid);
	pb_begin(&pp->pb, PROFILE_MAPPING);
	pb_uint(&pp->pb, MAPPING_ID, (uint64_t)idx + 1);
	pb_uint(&pp->pb, MAPPING_MEMORY_START, mp->start);
	pb_uint(&pp->pb, MAPPING_MEMORY_LIMIT, mp->end);
	pb_uint(&pp->pb, MAPPING_FILE_OFFSET, mp->pgoff);
	pb_int(&pp->pb, MAPPING_FILENAME, S(pp, mp->path));
	pb_int(&pp->pb, MAPPING_BUILD_ID, S(pp, bid));
	pb_bool(&pp->pb, MAPPING_HAS_FUNCTIONS, mi->has_functions);
	pb_bool(&pp->pb, MAPPING_HAS_FILENAMES, mi->has_filenames);
	pb_bool(&pp->pb, MAPPING_HAS_LINE_NUMBERS, mi->has_lines);
	pb_bool(&pp->pb, MAPPING_HAS_INLINE_FRAMES, mi->has_inline);
	pb_end(&pp->pb);
}

static void write_mappings(struct pprof *pp)
{
	for (size_t i = 0; i < pp->m.nr_map_order; i++)
		write_mapping(pp, pp->m.map_order[i]);
}

static void write_locations(struct pprof *pp)
{
	const struct sfp_profile *p = pp->m.p;
	size_t n = sfp_profile__nr_locs(p), i;
	uint32_t l;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_loc *loc;

		if (!pp->m.loc_used[i])
			continue;
		loc = sfp_profile__loc(p, i);
		if (!loc)
			continue;
		pb_begin(&pp->pb, PROFILE_LOCATION);
		pb_uint(&pp->pb, LOCATION_ID, (uint64_t)i + 1);
		if (loc->mapping != UINT32_MAX &&
		    loc->mapping < sfp_profile__nr_mappings(p))
			pb_uint(&pp->pb, LOCATION_MAPPING_ID,
				(uint64_t)loc->mapping + 1);
		pb_uint(&pp->pb, LOCATION_ADDRESS, loc->ip);
		for (l = 0; l < loc->nr_lines; l++) {
			pb_begin(&pp->pb, LOCATION_LINE);
			pb_uint(&pp->pb, LINE_FUNCTION_ID,
				(uint64_t)loc->lines[l].func + 1);
			pb_int(&pp->pb, LINE_LINE, loc->lines[l].line);
			pb_end(&pp->pb);
		}
		pb_end(&pp->pb);
	}
}

static void write_functions(struct pprof *pp)
{
	const struct sfp_profile *p = pp->m.p;
	size_t n = sfp_profile__nr_funcs(p), i;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_func *f;
		const char *name, *sys;
		char buf[512];

		if (!pp->m.func_used[i])
			continue;
		f = sfp_profile__func(p, i);
		if (!f)
			continue;
		exp_model__func_names(f, buf, sizeof(buf), &name, &sys);
		pb_begin(&pp->pb, PROFILE_FUNCTION);
		pb_uint(&pp->pb, FUNCTION_ID, (uint64_t)i + 1);
		pb_int(&pp->pb, FUNCTION_NAME, S(pp, name));
		pb_int(&pp->pb, FUNCTION_SYSTEM_NAME, S(pp, sys));
		if (f->file)
			pb_int(&pp->pb, FUNCTION_FILENAME, S(pp, f->file));
		pb_int(&pp->pb, FUNCTION_START_LINE, f->start_line);
		pb_end(&pp->pb);
	}
}

/* Fields 9-14; their strings must be interned before the table is out. */
struct pp_tail {
	int64_t duration, period;
	int64_t period_type, period_unit;
	int64_t comments[3];
	size_t ncomments;
	int64_t default_type;
};

static void prepare_tail(struct pprof *pp, struct pp_tail *t)
{
	const struct sfp_profile *p = pp->m.p;
	const char *s;

	memset(t, 0, sizeof(*t));
	t->duration = pp->m.duration;
	t->period = pp->m.period;
	if (pp->m.nr_types > 1) {
		/* event 0's sample type, interned already */
		t->period_type = S(pp, pp->m.type[1]);
		t->period_unit = S(pp, pp->m.unit[1]);
	}
	s = sfp_profile__cmdline(p);
	if (s && *s)
		t->comments[t->ncomments++] = S(pp, s);
	s = sfp_profile__hostname(p);
	if (s && *s) {
		char buf[300];

		snprintf(buf, sizeof(buf), "hostname: %s", s);
		t->comments[t->ncomments++] = S(pp, buf);
	}
	{
		/* what the recording lost: the profile is incomplete */
		struct sfp_profile_lost l;
		char buf[200];

		sfp_profile__lost(p, &l);
		if (l.records || l.samples) {
			snprintf(buf, sizeof(buf), "lost: %llu records in %llu "
				 "chunks, %llu samples (the recorder's rings "
				 "overflowed)", (unsigned long long)l.records,
				 (unsigned long long)l.chunks,
				 (unsigned long long)l.samples);
			t->comments[t->ncomments++] = S(pp, buf);
		}
	}
	if (pp->m.cpu_event >= 0)
		t->default_type = S(pp, pp->m.type[1 + pp->m.cpu_event]);
}

static void write_tail(struct pprof *pp, const struct pp_tail *t)
{
	pb_int(&pp->pb, PROFILE_DURATION_NANOS, t->duration);
	if (pp->m.nr_types > 1)
		value_type(pp, PROFILE_PERIOD_TYPE, t->period_type,
			   t->period_unit);
	pb_int(&pp->pb, PROFILE_PERIOD, t->period);
	pb_packed_int(&pp->pb, PROFILE_COMMENT, t->comments, t->ncomments);
	pb_int(&pp->pb, PROFILE_DEFAULT_SAMPLE_TYPE, t->default_type);
}

/* The Profile message into pp->pb; x: the agent's window facts or NULL. */
static int encode(struct pprof *pp, const struct sfp_profile *p,
		  bool user_only, const struct sfp_pprof_window *x)
{
	struct pp_tail tail;
	size_t i;
	int err;

	pp->x = x;
	err = exp_model__build(&pp->m, p, user_only);
	if (err)
		return err;
	S(pp, "");		/* string_table[0] must be "" */
	write_sample_types(pp);
	err = write_samples(pp);
	if (err)
		return err;
	write_mappings(pp);
	write_locations(pp);
	write_functions(pp);
	prepare_tail(pp, &tail);
	for (i = 0; i < pp->st.n; i++)
		pb_string_always(&pp->pb, PROFILE_STRING_TABLE, pp->st.strs[i]);
	if (x) {
		/* a window's span, not its first to last sample */
		tail.duration = x->duration_nanos;
		pb_int(&pp->pb, PROFILE_TIME_NANOS, x->time_nanos);
	}
	write_tail(pp, &tail);
	return pp->err ? pp->err : pp->pb.err;
}

static void pprof_free(struct pprof *pp)
{
	exp_model__free(&pp->m);
	exp_strtab__free(&pp->st);
	pb_buf__free(&pp->pb);
}

int sfp_export_pprof(const struct sfp_profile *p, FILE *out,
		     const struct sfp_export_opts *opts)
{
	struct pprof pp = { 0 };
	int err;

	err = encode(&pp, p, SFP_OPTS_GET(opts, sfp_export_opts, user_only,
					  false), NULL);
	if (!err)
		err = sfp_gzip_write(out, pp.pb.data, pp.pb.len);
	pprof_free(&pp);
	return err;
}

int sfp_pprof_encode(const struct sfp_profile *p,
		     const struct sfp_pprof_window *x, void **out, size_t *len)
{
	struct pprof pp = { 0 };
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	int err;

	*out = NULL;
	*len = 0;
	err = encode(&pp, p, false, x);
	if (err)
		goto out;
	if (!x->gzip) {
		/* hand over the encoder's buffer */
		*out = pp.pb.data;
		*len = pp.pb.len;
		pp.pb.data = NULL;
		goto out;
	}
	f = open_memstream(&buf, &n);
	if (!f) {
		err = -ENOMEM;
		goto out;
	}
	err = sfp_gzip_write(f, pp.pb.data, pp.pb.len);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(buf);
		goto out;
	}
	*out = buf;
	*len = n;
out:
	pprof_free(&pp);
	return err;
}
