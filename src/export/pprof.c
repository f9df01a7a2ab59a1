// SPDX-License-Identifier: MIT
/*
 * pprof: a gzip-compressed perftools.profiles.Profile message (the
 * profile.proto of github.com/google/pprof; our own copy of the schema,
 * written from its published text, is tests/data/profile.proto).
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
 * (usually CLOCK_MONOTONIC), not UTC.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/gzip.h"
#include "export-int.h"
#include "export/pb.h"
#include "export/strtab.h"
#include "export/walk.h"
/* profile.proto's field numbers, generated from the one schema,
 * src/agent/proto/pprof.proto, that protobuf-c decodes with */
#include "pprof-fields.h"

struct pp_key {
	uint32_t node, pid, tid, comm;
	uint32_t event;
	uint64_t period;
};

/* What each mapping's written locs tell about its symbols. */
struct pp_mapinfo {
	bool used, has_functions, has_filenames, has_lines, has_inline;
};

struct pprof {
	const struct sfp_profile *p;
	struct exp_strtab st;
	struct pb_buf pb;
	bool user_only;
	size_t nev;
	int64_t *ev_type, *ev_unit;
	int cpu_event;			/* event index shown as "cpu", or -1 */
	/* per event: its fixed period (-c), 0 when sampled by frequency.
	 * perf leaves PERF_SAMPLE_PERIOD out of fixed-period samples, and
	 * the model then reports a period of 1 */
	uint64_t *fixed_period;
	uint8_t *loc_used, *func_used;
	struct pp_mapinfo *maps;
	uint32_t main_map;		/* UINT32_MAX: none found */
	const struct sfp_pprof_window *x;	/* the agent's, or NULL */
	int err;
};

static int64_t S(struct pprof *pp, const char *s)
{
	int64_t i = exp_strtab__intern(&pp->st, s);

	if (i < 0 && !pp->err)
		pp->err = (int)i;
	return i < 0 ? 0 : i;
}

static int cmp_key(const void *a, const void *b)
{
	const struct pp_key *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	return 0;
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
	size_t e;

	value_type(pp, PROFILE_SAMPLE_TYPE, S(pp, "samples"), S(pp, "count"));
	pp->cpu_event = -1;
	for (e = 0; e < pp->nev; e++) {
		const struct sfp_profile_event *ev = sfp_profile__event(pp->p, e);
		const char *name = ev && ev->name ? ev->name : "[unknown]";
		enum sfp_profile_event_kind kind =
			ev ? ev->kind : SFP_PROFILE_EV_COUNT;

		if (ev && !ev->sample_freq && ev->sample_period <= INT64_MAX &&
		    kind != SFP_PROFILE_EV_OFF_CPU)
			pp->fixed_period[e] = ev->sample_period;
		if (kind == SFP_PROFILE_EV_OFF_CPU) {
			/* each sample's period is the time it was blocked */
			pp->ev_type[e] = S(pp, "off_cpu");
			pp->ev_unit[e] = S(pp, "nanoseconds");
		} else if (pp->cpu_event < 0 && kind == SFP_PROFILE_EV_CLOCK) {
			pp->cpu_event = (int)e;
			pp->ev_type[e] = S(pp, "cpu");
			pp->ev_unit[e] = S(pp, "nanoseconds");
		} else {
			pp->ev_type[e] = S(pp, name);
			pp->ev_unit[e] = S(pp, kind == SFP_PROFILE_EV_CLOCK ?
					       "nanoseconds" : "count");
		}
		value_type(pp, PROFILE_SAMPLE_TYPE, pp->ev_type[e],
			   pp->ev_unit[e]);
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

/* The stack's locs as location ids; remembers which locs are used. */
static int stack_ids(struct pprof *pp, struct exp_stack *st, uint32_t node,
		     uint64_t **ids, size_t *cap)
{
	size_t i;
	int err = exp_stack__get(st, pp->p, node, pp->user_only);

	if (err)
		return err;
	if (st->n > *cap) {
		uint64_t *n = realloc(*ids, st->n * sizeof(*n));

		if (!n)
			return -ENOMEM;
		*ids = n;
		*cap = st->n;
	}
	for (i = 0; i < st->n; i++) {
		(*ids)[i] = (uint64_t)st->locs[i] + 1;
		pp->loc_used[st->locs[i]] = 1;
	}
	return 0;
}

static int write_samples(struct pprof *pp)
{
	size_t n = sfp_profile__nr_samples(pp->p), i, j, l, ncap = 0;
	struct pp_key *keys;
	int64_t *vals = NULL;
	uint64_t *ids = NULL;
	struct exp_stack st = { 0 };
	int64_t k_pid = S(pp, "pid"), k_tid = S(pp, "tid"),
		k_comm = S(pp, "comm");
	int err = 0;

	keys = calloc(n ? n : 1, sizeof(*keys));
	vals = calloc(pp->nev + 1, sizeof(*vals));
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(pp->p, i);

		keys[i] = (struct pp_key){
			.node = s->stack, .pid = s->pid, .tid = s->tid,
			.comm = s->comm, .event = s->event, .period = s->period,
		};
	}
	qsort(keys, n, sizeof(*keys), cmp_key);
	for (i = 0; i < n; i = j) {
		memset(vals, 0, (pp->nev + 1) * sizeof(*vals));
		for (j = i; j < n && !cmp_key(&keys[i], &keys[j]); j++) {
			uint32_t e = keys[j].event;

			vals[0]++;
			if (e < pp->nev)
				vals[1 + e] += (int64_t)(pp->fixed_period[e] ?
							 pp->fixed_period[e] :
							 keys[j].period);
		}
		err = stack_ids(pp, &st, keys[i].node, &ids, &ncap);
		if (err)
			goto out;
		pb_begin(&pp->pb, PROFILE_SAMPLE);
		pb_packed_uint(&pp->pb, SAMPLE_LOCATION_ID, ids, st.n);
		pb_packed_int(&pp->pb, SAMPLE_VALUE, vals, pp->nev + 1);
		label_num(pp, k_pid, keys[i].pid);
		label_num(pp, k_tid, keys[i].tid);
		pb_begin(&pp->pb, SAMPLE_LABEL);
		pb_int(&pp->pb, LABEL_KEY, k_comm);
		pb_int(&pp->pb, LABEL_STR,
		       S(pp, sfp_profile__string(pp->p, keys[i].comm)));
		pb_end(&pp->pb);
		for (l = 0; pp->x && l < pp->x->nr_labels; l++) {
			pb_begin(&pp->pb, SAMPLE_LABEL);
			pb_int(&pp->pb, LABEL_KEY, S(pp, pp->x->labels[l][0]));
			pb_int(&pp->pb, LABEL_STR, S(pp, pp->x->labels[l][1]));
			pb_end(&pp->pb);
		}
		pb_end(&pp->pb);
	}
out:
	exp_stack__free(&st);
	free(ids);
	free(vals);
	free(keys);
	return err;
}

/* Which mappings and functions the written locs need, and what they say. */
static void scan_locs(struct pprof *pp)
{
	size_t n = sfp_profile__nr_locs(pp->p), i;
	uint32_t l;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_loc *loc;
		struct pp_mapinfo *mi = NULL;

		if (!pp->loc_used[i])
			continue;
		loc = sfp_profile__loc(pp->p, i);
		if (!loc)
			continue;
		if (loc->mapping != UINT32_MAX &&
		    loc->mapping < sfp_profile__nr_mappings(pp->p)) {
			mi = &pp->maps[loc->mapping];
			mi->used = true;
			if (loc->nr_lines > 1)
				mi->has_inline = true;
		}
		for (l = 0; l < loc->nr_lines; l++) {
			const struct sfp_profile_func *f =
				sfp_profile__func(pp->p, loc->lines[l].func);

			if (!f)
				continue;
			pp->func_used[loc->lines[l].func] = 1;
			if (!mi)
				continue;
			if (!exp_name_unknown(f->name))
				mi->has_functions = true;
			if (f->file)
				mi->has_filenames = true;
			if (loc->lines[l].line)
				mi->has_lines = true;
		}
	}
}

/*
 * The main binary, which pprof wants as mapping[0]: the mapping whose file
 * the threads are named after (comm is the executable's name, cut to 15
 * bytes) in the most samples; failing that, the mapping of the outermost
 * user frame in the most samples.  (The first sample alone is often in
 * ld.so, before main exists.)
 */
static int find_main_map(struct pprof *pp)
{
	size_t n = sfp_profile__nr_samples(pp->p), i, k;
	size_t nm = sfp_profile__nr_mappings(pp->p);
	uint64_t *by_comm, *by_root, best_c = 0, best_r = 0;
	struct exp_stack st = { 0 };
	int err = 0;

	pp->main_map = UINT32_MAX;
	by_comm = calloc(nm + 1, sizeof(*by_comm));
	by_root = calloc(nm + 1, sizeof(*by_root));
	if (!by_comm || !by_root) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(pp->p, i);
		const char *comm = sfp_profile__string(pp->p, s->comm);
		bool root_seen = false;

		err = exp_stack__get(&st, pp->p, s->stack, true);
		if (err)
			goto out;
		for (k = st.n; k-- > 0;) {
			const struct sfp_profile_loc *loc =
				sfp_profile__loc(pp->p, st.locs[k]);
			const struct sfp_profile_mapping *m;

			if (!loc || loc->mapping >= nm)
				continue;
			if (!root_seen) {
				by_root[loc->mapping]++;
				root_seen = true;
			}
			m = sfp_profile__mapping(pp->p, loc->mapping);
			if (m && comm && *comm &&
			    !strncmp(exp_basename(m->path), comm, strlen(comm))) {
				by_comm[loc->mapping]++;
				break;
			}
		}
	}
	for (k = 0; k < nm; k++) {
		if (by_comm[k] > best_c) {
			best_c = by_comm[k];
			pp->main_map = (uint32_t)k;
		}
	}
	for (k = 0; k < nm && !best_c; k++) {
		if (by_root[k] > best_r) {
			best_r = by_root[k];
			pp->main_map = (uint32_t)k;
		}
	}
out:
	free(by_comm);
	free(by_root);
	exp_stack__free(&st);
	return err;
}

static void write_mapping(struct pprof *pp, uint32_t idx)
{
	const struct sfp_profile_mapping *m = sfp_profile__mapping(pp->p, idx);
	const struct pp_mapinfo *mi = &pp->maps[idx];
	static const char hex[] = "0123456789abcdef";
	char bid[2 * sizeof(m->build_id) + 1];
	size_t i, nb;

	if (!m)
		return;
	nb = m->build_id_size < sizeof(m->build_id) ?
	     m->build_id_size : sizeof(m->build_id);
	for (i = 0; i < nb; i++) {
		bid[2 * i] = hex[m->build_id[i] >> 4];
		bid[2 * i + 1] = hex[m->build_id[i] & 15];
	}
	bid[2 * nb] = '\0';
	pb_begin(&pp->pb, PROFILE_MAPPING);
	pb_uint(&pp->pb, MAPPING_ID, (uint64_t)idx + 1);
	pb_uint(&pp->pb, MAPPING_MEMORY_START, m->start);
	pb_uint(&pp->pb, MAPPING_MEMORY_LIMIT, m->end);
	pb_uint(&pp->pb, MAPPING_FILE_OFFSET, m->pgoff);
	pb_int(&pp->pb, MAPPING_FILENAME, S(pp, m->path));
	pb_int(&pp->pb, MAPPING_BUILD_ID, S(pp, bid));
	pb_bool(&pp->pb, MAPPING_HAS_FUNCTIONS, mi->has_functions);
	pb_bool(&pp->pb, MAPPING_HAS_FILENAMES, mi->has_filenames);
	pb_bool(&pp->pb, MAPPING_HAS_LINE_NUMBERS, mi->has_lines);
	pb_bool(&pp->pb, MAPPING_HAS_INLINE_FRAMES, mi->has_inline);
	pb_end(&pp->pb);
}

static void write_mappings(struct pprof *pp)
{
	size_t n = sfp_profile__nr_mappings(pp->p), i;

	if (pp->main_map != UINT32_MAX && pp->maps[pp->main_map].used)
		write_mapping(pp, pp->main_map);
	for (i = 0; i < n; i++)
		if (pp->maps[i].used && i != pp->main_map)
			write_mapping(pp, (uint32_t)i);
}

static void write_locations(struct pprof *pp)
{
	size_t n = sfp_profile__nr_locs(pp->p), i;
	uint32_t l;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_loc *loc;

		if (!pp->loc_used[i])
			continue;
		loc = sfp_profile__loc(pp->p, i);
		if (!loc)
			continue;
		pb_begin(&pp->pb, PROFILE_LOCATION);
		pb_uint(&pp->pb, LOCATION_ID, (uint64_t)i + 1);
		if (loc->mapping != UINT32_MAX &&
		    loc->mapping < sfp_profile__nr_mappings(pp->p))
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
	size_t n = sfp_profile__nr_funcs(pp->p), i;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_func *f;

		if (!pp->func_used[i])
			continue;
		f = sfp_profile__func(pp->p, i);
		if (!f)
			continue;
		pb_begin(&pp->pb, PROFILE_FUNCTION);
		pb_uint(&pp->pb, FUNCTION_ID, (uint64_t)i + 1);
		if (exp_name_unknown(f->name)) {
			/* "[libc.so.6]" as perf report and the folded
			 * export show it, not one "[unknown]" for all DSOs */
			char buf[512];

			if (exp_name_unknown(f->dso))
				snprintf(buf, sizeof(buf), "[unknown]");
			else
				snprintf(buf, sizeof(buf), "[%s]",
					 exp_basename(f->dso));
			pb_int(&pp->pb, FUNCTION_NAME, S(pp, buf));
			pb_int(&pp->pb, FUNCTION_SYSTEM_NAME, S(pp, buf));
		} else {
			pb_int(&pp->pb, FUNCTION_NAME, S(pp, f->name));
			pb_int(&pp->pb, FUNCTION_SYSTEM_NAME,
			       S(pp, f->raw_name ? f->raw_name : f->name));
		}
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
	size_t n = sfp_profile__nr_samples(pp->p), i;
	uint64_t lo = UINT64_MAX, hi = 0;
	const char *s;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *smp = sfp_profile__sample(pp->p, i);

		if (!smp->time)
			continue;
		lo = smp->time < lo ? smp->time : lo;
		hi = smp->time > hi ? smp->time : hi;
	}
	if (hi > lo && hi - lo <= INT64_MAX)
		t->duration = (int64_t)(hi - lo);
	if (pp->nev) {
		const struct sfp_profile_event *ev = sfp_profile__event(pp->p, 0);

		t->period_type = pp->ev_type[0];
		t->period_unit = pp->ev_unit[0];
		if (ev && ev->sample_period && ev->sample_period <= INT64_MAX)
			t->period = (int64_t)ev->sample_period;
		else if (ev && ev->sample_freq && pp->cpu_event == 0)
			t->period = (int64_t)(1000000000ull / ev->sample_freq);
	}
	s = sfp_profile__cmdline(pp->p);
	if (s && *s)
		t->comments[t->ncomments++] = S(pp, s);
	s = sfp_profile__hostname(pp->p);
	if (s && *s) {
		char buf[300];

		snprintf(buf, sizeof(buf), "hostname: %s", s);
		t->comments[t->ncomments++] = S(pp, buf);
	}
	{
		/* what the recording lost: the profile is incomplete */
		struct sfp_profile_lost l;
		char buf[200];

		sfp_profile__lost(pp->p, &l);
		if (l.records || l.samples) {
			snprintf(buf, sizeof(buf), "lost: %llu records in %llu "
				 "chunks, %llu samples (the recorder's rings "
				 "overflowed)", (unsigned long long)l.records,
				 (unsigned long long)l.chunks,
				 (unsigned long long)l.samples);
			t->comments[t->ncomments++] = S(pp, buf);
		}
	}
	if (pp->cpu_event >= 0)
		t->default_type = pp->ev_type[pp->cpu_event];
}

static void write_tail(struct pprof *pp, const struct pp_tail *t)
{
	pb_int(&pp->pb, PROFILE_DURATION_NANOS, t->duration);
	if (pp->nev)
		value_type(pp, PROFILE_PERIOD_TYPE, t->period_type,
			   t->period_unit);
	pb_int(&pp->pb, PROFILE_PERIOD, t->period);
	pb_packed_int(&pp->pb, PROFILE_COMMENT, t->comments, t->ncomments);
	pb_int(&pp->pb, PROFILE_DEFAULT_SAMPLE_TYPE, t->default_type);
}

/* The Profile message into pp->pb; x: the agent's window facts or NULL. */
static int encode(struct pprof *pp, const struct sfp_profile *p,
		  const struct sfp_pprof_window *x)
{
	struct pp_tail tail;
	size_t i;
	int err;

	pp->x = x;
	pp->nev = sfp_profile__nr_events(p);
	pp->ev_type = calloc(pp->nev + 1, sizeof(*pp->ev_type));
	pp->ev_unit = calloc(pp->nev + 1, sizeof(*pp->ev_unit));
	pp->fixed_period = calloc(pp->nev + 1, sizeof(*pp->fixed_period));
	pp->loc_used = calloc(sfp_profile__nr_locs(p) + 1, 1);
	pp->func_used = calloc(sfp_profile__nr_funcs(p) + 1, 1);
	pp->maps = calloc(sfp_profile__nr_mappings(p) + 1, sizeof(*pp->maps));
	if (!pp->ev_type || !pp->ev_unit || !pp->fixed_period || !pp->loc_used ||
	    !pp->func_used || !pp->maps) {
		err = -ENOMEM;
		goto out;
	}
	S(pp, "");		/* string_table[0] must be "" */
	write_sample_types(pp);
	err = write_samples(pp);
	if (err)
		goto out;
	scan_locs(pp);
	err = find_main_map(pp);
	if (err)
		goto out;
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
	err = pp->err ? pp->err : pp->pb.err;
out:
	return err;
}

static void pprof_free(struct pprof *pp)
{
	exp_strtab__free(&pp->st);
	pb_buf__free(&pp->pb);
	free(pp->ev_type);
	free(pp->ev_unit);
	free(pp->fixed_period);
	free(pp->loc_used);
	free(pp->func_used);
	free(pp->maps);
}

int sfp_export_pprof(const struct sfp_profile *p, FILE *out,
		     const struct sfp_export_opts *opts)
{
	struct pprof pp = { .p = p };
	int err;

	pp.user_only = SFP_OPTS_GET(opts, sfp_export_opts, user_only, false);
	err = encode(&pp, p, NULL);
	if (!err)
		err = sfp_gzip_write(out, pp.pb.data, pp.pb.len);
	pprof_free(&pp);
	return err;
}

int sfp_pprof_encode(const struct sfp_profile *p,
		     const struct sfp_pprof_window *x, void **out, size_t *len)
{
	struct pprof pp = { .p = p };
	char *buf = NULL;
	size_t n = 0;
	FILE *f;
	int err;

	*out = NULL;
	*len = 0;
	err = encode(&pp, p, x);
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
