// SPDX-License-Identifier: MIT
/*
 * pprof's model of a profile (pprof-model.h), shared by the encoders
 * that write it.
 *
 *   sample types  [samples, count] then one per event: the first clock
 *                 event (cpu-clock, task-clock) is [cpu, nanoseconds],
 *                 offcpu-time [off_cpu, nanoseconds] (each sample's
 *                 blocked time), any other [<event>, count]
 *   samples       one per distinct (stack, pid, tid, comm): value[0] the
 *                 number of samples, value[1+e] the sum of their periods
 *                 for event e (the event's fixed period for -c ones)
 *   mappings      those the used locs are in, the main binary first
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/pprof-model.h"
#include "export/walk.h"

struct model_key {
	uint32_t node, pid, tid, comm;
	uint32_t event;
	uint32_t count;		/* samples it stands for */
	uint64_t period;
};

static int cmp_key(const void *a, const void *b)
{
	const struct model_key *x = a, *y = b;

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

static void sample_types(struct exp_model *m)
{
	size_t nev = m->nr_types - 1, e;

	m->type[0] = "samples";
	m->unit[0] = "count";
	m->cpu_event = -1;
	for (e = 0; e < nev; e++) {
		const struct sfp_profile_event *ev = sfp_profile__event(m->p, e);
		enum sfp_profile_event_kind kind =
			ev ? ev->kind : SFP_PROFILE_EV_COUNT;

		if (ev && !ev->sample_freq && ev->sample_period <= INT64_MAX &&
		    kind != SFP_PROFILE_EV_OFF_CPU)
			m->fixed_period[e] = ev->sample_period;
		if (kind == SFP_PROFILE_EV_OFF_CPU) {
			/* each sample's period is the time it was blocked */
			m->type[1 + e] = "off_cpu";
			m->unit[1 + e] = "nanoseconds";
		} else if (m->cpu_event < 0 && kind == SFP_PROFILE_EV_CLOCK) {
			m->cpu_event = (int)e;
			m->type[1 + e] = "cpu";
			m->unit[1 + e] = "nanoseconds";
		} else {
			m->type[1 + e] = ev && ev->name ? ev->name : "[unknown]";
			m->unit[1 + e] = kind == SFP_PROFILE_EV_CLOCK ?
					 "nanoseconds" : "count";
		}
	}
}

/* Append the stack's locs to stack_locs; remembers which locs are used. */
static int add_stack(struct exp_model *m, struct exp_stack *st,
		     struct exp_model_sample *ms, size_t *cap, bool user_only)
{
	int err = exp_stack__get(st, m->p, ms->node, user_only);
	size_t i;

	if (err)
		return err;
	if (m->nr_stack_locs + st->n > *cap) {
		size_t nc = *cap ? *cap : 1024;
		uint32_t *n;

		while (nc < m->nr_stack_locs + st->n)
			nc *= 2;
		n = realloc(m->stack_locs, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		m->stack_locs = n;
		*cap = nc;
	}
	ms->first_loc = m->nr_stack_locs;
	ms->nr_locs = st->n;
	for (i = 0; i < st->n; i++) {
		m->stack_locs[m->nr_stack_locs++] = st->locs[i];
		m->loc_used[st->locs[i]] = 1;
	}
	return 0;
}

static int merge_samples(struct exp_model *m, bool user_only)
{
	size_t n = sfp_profile__nr_samples(m->p), nev = m->nr_types - 1;
	size_t i, j, cap = 0;
	struct exp_stack st = { 0 };
	struct model_key *keys;
	int err = 0;

	keys = calloc(n ? n : 1, sizeof(*keys));
	m->samples = calloc(n ? n : 1, sizeof(*m->samples));
	m->values = calloc((n ? n : 1) * m->nr_types, sizeof(*m->values));
	if (!keys || !m->samples || !m->values) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(m->p, i);

		keys[i] = (struct model_key){
			.node = s->stack, .pid = s->pid, .tid = s->tid,
			.comm = s->comm, .event = s->event, .period = s->period,
			.count = s->count,
		};
	}
	qsort(keys, n, sizeof(*keys), cmp_key);
	for (i = 0; i < n; i = j) {
		struct exp_model_sample *ms = &m->samples[m->nr_samples];
		int64_t *vals = &m->values[m->nr_samples * m->nr_types];

		for (j = i; j < n && !cmp_key(&keys[i], &keys[j]); j++) {
			uint32_t e = keys[j].event;

			/* a sample the loader merged (opts.merge_samples)
			 * stands for count samples, its period their sum */
			vals[0] += keys[j].count;
			if (e < nev)
				vals[1 + e] += (int64_t)(m->fixed_period[e] ?
							 m->fixed_period[e] *
								 keys[j].count :
							 keys[j].period);
		}
		ms->node = keys[i].node;
		ms->pid = keys[i].pid;
		ms->tid = keys[i].tid;
		ms->comm = keys[i].comm;
		err = add_stack(m, &st, ms, &cap, user_only);
		if (err)
			goto out;
		m->nr_samples++;
	}
out:
	exp_stack__free(&st);
	free(keys);
	return err;
}

/* Which mappings and functions the used locs need, and what they say. */
static void scan_locs(struct exp_model *m)
{
	size_t n = sfp_profile__nr_locs(m->p), i;
	uint32_t l;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_loc *loc;
		struct exp_model_map *mi = NULL;

		if (!m->loc_used[i])
			continue;
		loc = sfp_profile__loc(m->p, i);
		if (!loc)
			continue;
		if (loc->mapping != UINT32_MAX &&
		    loc->mapping < sfp_profile__nr_mappings(m->p)) {
			mi = &m->maps[loc->mapping];
			mi->used = true;
			if (loc->nr_lines > 1)
				mi->has_inline = true;
		}
		for (l = 0; l < loc->nr_lines; l++) {
			const struct sfp_profile_func *f =
				sfp_profile__func(m->p, loc->lines[l].func);

			if (!f)
				continue;
			m->func_used[loc->lines[l].func] = 1;
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
 * ld.so, before main exists.)  UINT32_MAX: none.
 */
static int find_main_map(const struct exp_model *m, uint32_t *main_map)
{
	size_t n = sfp_profile__nr_samples(m->p), i, k;
	size_t nm = sfp_profile__nr_mappings(m->p);
	uint64_t *by_comm, *by_root, best_c = 0, best_r = 0;
	struct exp_stack st = { 0 };
	int err = 0;

	*main_map = UINT32_MAX;
	by_comm = calloc(nm + 1, sizeof(*by_comm));
	by_root = calloc(nm + 1, sizeof(*by_root));
	if (!by_comm || !by_root) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(m->p, i);
		const char *comm = sfp_profile__string(m->p, s->comm);
		bool root_seen = false;

		err = exp_stack__get(&st, m->p, s->stack, true);
		if (err)
			goto out;
		for (k = st.n; k-- > 0;) {
			const struct sfp_profile_loc *loc =
				sfp_profile__loc(m->p, st.locs[k]);
			const struct sfp_profile_mapping *mp;

			if (!loc || loc->mapping >= nm)
				continue;
			if (!root_seen) {
				by_root[loc->mapping]++;
				root_seen = true;
			}
			mp = sfp_profile__mapping(m->p, loc->mapping);
			if (mp && comm && *comm &&
			    !strncmp(exp_basename(mp->path), comm, strlen(comm))) {
				by_comm[loc->mapping]++;
				break;
			}
		}
	}
	for (k = 0; k < nm; k++) {
		if (by_comm[k] > best_c) {
			best_c = by_comm[k];
			*main_map = (uint32_t)k;
		}
	}
	for (k = 0; k < nm && !best_c; k++) {
		if (by_root[k] > best_r) {
			best_r = by_root[k];
			*main_map = (uint32_t)k;
		}
	}
out:
	free(by_comm);
	free(by_root);
	exp_stack__free(&st);
	return err;
}

static int order_maps(struct exp_model *m)
{
	size_t n = sfp_profile__nr_mappings(m->p), i;
	uint32_t main_map;
	int err = find_main_map(m, &main_map);

	if (err)
		return err;
	m->map_order = calloc(n ? n : 1, sizeof(*m->map_order));
	if (!m->map_order)
		return -ENOMEM;
	if (main_map != UINT32_MAX && m->maps[main_map].used)
		m->map_order[m->nr_map_order++] = main_map;
	for (i = 0; i < n; i++)
		if (m->maps[i].used && i != main_map)
			m->map_order[m->nr_map_order++] = (uint32_t)i;
	return 0;
}

/* The span of the samples' times, and event 0's period. */
static void span_and_period(struct exp_model *m)
{
	size_t n = sfp_profile__nr_samples(m->p), i;
	uint64_t lo = UINT64_MAX, hi = 0;

	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(m->p, i);

		if (!s->time)
			continue;
		lo = s->time < lo ? s->time : lo;
		hi = s->time > hi ? s->time : hi;
	}
	if (hi > lo && hi - lo <= INT64_MAX)
		m->duration = (int64_t)(hi - lo);
	if (m->nr_types > 1) {
		const struct sfp_profile_event *ev = sfp_profile__event(m->p, 0);

		if (ev && ev->sample_period && ev->sample_period <= INT64_MAX)
			m->period = (int64_t)ev->sample_period;
		else if (ev && ev->sample_freq && m->cpu_event == 0)
			m->period = (int64_t)(1000000000ull / ev->sample_freq);
	}
}

int exp_model__build(struct exp_model *m, const struct sfp_profile *p,
		     bool user_only)
{
	size_t nev = sfp_profile__nr_events(p);
	int err;

	memset(m, 0, sizeof(*m));
	m->p = p;
	m->nr_types = nev + 1;
	m->type = calloc(m->nr_types, sizeof(*m->type));
	m->unit = calloc(m->nr_types, sizeof(*m->unit));
	m->fixed_period = calloc(m->nr_types, sizeof(*m->fixed_period));
	m->loc_used = calloc(sfp_profile__nr_locs(p) + 1, 1);
	m->func_used = calloc(sfp_profile__nr_funcs(p) + 1, 1);
	m->maps = calloc(sfp_profile__nr_mappings(p) + 1, sizeof(*m->maps));
	if (!m->type || !m->unit || !m->fixed_period || !m->loc_used ||
	    !m->func_used || !m->maps)
		return -ENOMEM;
	sample_types(m);
	err = merge_samples(m, user_only);
	if (err)
		return err;
	scan_locs(m);
	err = order_maps(m);
	if (err)
		return err;
	span_and_period(m);
	return 0;
}

void exp_model__free(struct exp_model *m)
{
	free(m->type);
	free(m->unit);
	free(m->fixed_period);
	free(m->samples);
	free(m->values);
	free(m->stack_locs);
	free(m->loc_used);
	free(m->func_used);
	free(m->maps);
	free(m->map_order);
	memset(m, 0, sizeof(*m));
}

void exp_model__build_id(const struct sfp_profile_mapping *mp,
			 char hex[EXP_BUILD_ID_HEX])
{
	static const char digits[] = "0123456789abcdef";
	size_t i, nb = mp->build_id_size < sizeof(mp->build_id) ?
		       mp->build_id_size : sizeof(mp->build_id);

	for (i = 0; i < nb; i++) {
		hex[2 * i] = digits[mp->build_id[i] >> 4];
		hex[2 * i + 1] = digits[mp->build_id[i] & 15];
	}
	hex[2 * nb] = '\0';
}

void exp_model__func_names(const struct sfp_profile_func *f, char *buf,
			   size_t sz, const char **name,
			   const char **system_name)
{
	if (exp_name_unknown(f->name)) {
		if (exp_name_unknown(f->dso))
			snprintf(buf, sz, "[unknown]");
		else
			snprintf(buf, sz, "[%s]", exp_basename(f->dso));
		*name = buf;
		*system_name = buf;
	} else {
		*name = f->name;
		*system_name = f->raw_name ? f->raw_name : f->name;
	}
}
