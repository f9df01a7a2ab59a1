// SPDX-License-Identifier: MIT
/*
 * The "speedscope" export: speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json).
 *
 *  - shared.frames: one frame per function the samples reach (inlined
 *    functions are frames of their own): name, file (the source file when
 *    known, else the DSO), line (the function's first line when known);
 *  - one "sampled" profile per thread and event, named "comm pid/tid",
 *    its samples in time order, each stack root first as speedscope wants;
 *  - weights: the sample periods.  For cpu-clock and task-clock the period
 *    is time, so the unit is "nanoseconds" (offcpu-time too: blocked
 *    time, one profile per thread of where it waited); for other events (cycles,
 *    page-faults, tracepoints) it is a count and the unit "none";
 *  - activeProfileIndex: the thread with the most weight;
 *  - startValue: the thread's first sample time relative to the file's
 *    first sample (ns, when times were recorded), endValue startValue plus
 *    the thread's weight, so threads line up in time in speedscope's
 *    time-order view.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/htab.h"
#include "export-int.h"
#include "flame-json.h"

#define NONE UINT32_MAX

/* One output profile: the samples of one (tid, event). */
struct ss_thread {
	uint32_t pid, tid, event;
	uint32_t comm;		/* string index of the last comm seen */
	uint64_t first_time;
	uint64_t weight;
	size_t nr;		/* samples */
	size_t first;		/* first index into the by-thread order */
};

struct ss {
	const struct sfp_profile *p;
	bool user_only;
	struct ss_thread *th;
	size_t nr_th, cap_th;
	struct sfp_htab th_index;	/* th by (tid, event) */
	uint32_t *sample_th;	/* per sample: its thread */
	uint32_t *fmap;		/* profile func -> frame index, NONE unused */
	uint32_t *frames;	/* frame index -> profile func */
	size_t nr_frames;
	uint32_t *locs;		/* stack scratch */
	size_t locs_cap;
};

/* Clock events and off-CPU time are nanoseconds, the rest counts. */
static bool is_time_event(const struct sfp_profile_event *e)
{
	return e && e->kind != SFP_PROFILE_EV_COUNT;
}

static bool th_row_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct ss *s = ctx;
	const struct sfp_profile_sample *smp = key;

	return s->th[idx].tid == smp->tid && s->th[idx].event == smp->event;
}

static int64_t thread_of(struct ss *s, const struct sfp_profile_sample *smp)
{
	uint32_t hash = sfp_hash64(smp->tid, smp->event);
	uint32_t i = sfp_htab_find(&s->th_index, hash, th_row_is, s, smp);

	if (i != SFP_HTAB_NONE)
		return i;
	if (s->nr_th == s->cap_th) {
		size_t ncap = s->cap_th ? s->cap_th * 2 : 16;
		struct ss_thread *n = realloc(s->th, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->th = n;
		s->cap_th = ncap;
	}
	if (sfp_htab_add(&s->th_index, hash, (uint32_t)s->nr_th))
		return -ENOMEM;
	s->th[s->nr_th] = (struct ss_thread){
		.pid = smp->pid, .tid = smp->tid, .event = smp->event,
		.comm = smp->comm, .first_time = smp->time,
	};
	return (int64_t)s->nr_th++;
}

static int cmp_threads(const void *a, const void *b)
{
	const struct ss_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

static uint32_t frame_of(struct ss *s, uint32_t func)
{
	if (s->fmap[func] == NONE) {
		s->fmap[func] = (uint32_t)s->nr_frames;
		s->frames[s->nr_frames++] = func;
	}
	return s->fmap[func];
}

/* The stack of @smp, root first, as frame indices. */
static int write_stack(struct ss *s, FILE *out,
		       const struct sfp_profile_sample *smp)
{
	const struct sfp_profile *p = s->p;
	size_t depth, i;
	bool first = true;

	depth = smp->stack ? sfp_profile__stack(p, smp->stack, s->locs,
						s->locs_cap) : 0;
	if (depth > s->locs_cap) {
		uint32_t *n = realloc(s->locs, depth * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->locs = n;
		s->locs_cap = depth;
		depth = sfp_profile__stack(p, smp->stack, s->locs, s->locs_cap);
	}
	putc('[', out);
	/* locs are leaf first; within a loc lines[0] is the innermost */
	for (i = depth; i-- > 0;) {
		const struct sfp_profile_loc *l = sfp_profile__loc(p, s->locs[i]);
		uint32_t k;

		if (!l)
			continue;
		if (s->user_only && l->mapping != NONE) {
			const struct sfp_profile_mapping *m =
				sfp_profile__mapping(p, l->mapping);

			if (m && m->kind == SFP_PROFILE_KERNEL)
				continue;
		}
		for (k = l->nr_lines; k-- > 0;) {
			const struct sfp_profile_func *f =
				sfp_profile__func(p, l->lines[k].func);

			if (s->user_only && f && f->kind == SFP_PROFILE_KERNEL)
				continue;
			fprintf(out, first ? "%" PRIu32 : ",%" PRIu32,
				frame_of(s, l->lines[k].func));
			first = false;
		}
	}
	putc(']', out);
	return 0;
}

static void write_frames(struct ss *s, FILE *out)
{
	size_t i;

	fputs("\"shared\":{\"frames\":[", out);
	for (i = 0; i < s->nr_frames; i++) {
		const struct sfp_profile_func *f = sfp_profile__func(s->p, s->frames[i]);

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		sfp_flame_json_str(out, f && f->name ? f->name : "[unknown]");
		if (f && (f->file || f->dso)) {
			fputs(",\"file\":", out);
			sfp_flame_json_str(out, f->file ? f->file : f->dso);
		}
		if (f && f->file && f->start_line)
			fprintf(out, ",\"line\":%" PRIu32, f->start_line);
		putc('}', out);
	}
	fputs("]}", out);
}

static int write_profiles(struct ss *s, FILE *out, uint64_t t0)
{
	const struct sfp_profile *p = s->p;
	size_t ns = sfp_profile__nr_samples(p), t, i;
	size_t *by_th = malloc((ns ? ns : 1) * sizeof(*by_th));
	size_t *fill = calloc(s->nr_th ? s->nr_th : 1, sizeof(*fill));
	bool multi_ev = sfp_profile__nr_events(p) > 1;
	int err = -ENOMEM;

	if (!by_th || !fill)
		goto out;
	/* sample indices grouped by thread, each group in time order */
	for (t = 0, i = 0; t < s->nr_th; t++) {
		s->th[t].first = i;
		i += s->th[t].nr;
	}
	for (i = 0; i < ns; i++) {
		struct ss_thread *th = &s->th[s->sample_th[i]];

		by_th[th->first + fill[s->sample_th[i]]++] = i;
	}

	fputs("\"profiles\":[", out);
	for (t = 0; t < s->nr_th; t++) {
		struct ss_thread *th = &s->th[t];
		const struct sfp_profile_event *ev = sfp_profile__event(p, th->event);
		const char *comm = sfp_profile__string(p, th->comm);
		bool ns_unit = is_time_event(ev);
		uint64_t start = th->first_time >= t0 && ns_unit ?
				 th->first_time - t0 : 0;
		char name[256];

		snprintf(name, sizeof(name), "%s %" PRIu32 "/%" PRIu32 "%s%s",
			 comm && *comm ? comm : "?", th->pid, th->tid,
			 multi_ev ? " " : "",
			 multi_ev && ev && ev->name ? ev->name : "");
		fputs(t ? ",\n{\"type\":\"sampled\",\"name\":" :
			  "\n{\"type\":\"sampled\",\"name\":", out);
		sfp_flame_json_str(out, name);
		fprintf(out, ",\"unit\":\"%s\",\"startValue\":%" PRIu64
			",\"endValue\":%" PRIu64 ",\n\"samples\":[",
			ns_unit ? "nanoseconds" : "none", start,
			start + th->weight);
		for (i = 0; i < th->nr; i++) {
			if (i)
				putc(',', out);
			err = write_stack(s, out, sfp_profile__sample(p, by_th[th->first + i]));
			if (err)
				goto out;
		}
		fputs("],\n\"weights\":[", out);
		for (i = 0; i < th->nr; i++) {
			const struct sfp_profile_sample *smp =
				sfp_profile__sample(p, by_th[th->first + i]);

			fprintf(out, i ? ",%" PRIu64 : "%" PRIu64,
				smp->period ? smp->period : 1);
		}
		fputs("]}", out);
	}
	fputs("]", out);
	err = 0;
out:
	free(by_th);
	free(fill);
	return err;
}

int sfp_export_speedscope(const struct sfp_profile *p, FILE *out,
			  const struct sfp_export_opts *opts)
{
	const char *title = SFP_OPTS_GET(opts, sfp_export_opts, title, NULL);
	size_t ns = sfp_profile__nr_samples(p), nf = sfp_profile__nr_funcs(p);
	struct ss s = { .p = p };
	uint32_t *remap = NULL;
	uint64_t t0 = UINT64_MAX;
	size_t i, busiest = 0;
	int err = -ENOMEM;

	s.user_only = SFP_OPTS_GET(opts, sfp_export_opts, user_only, false);
	if (!title || !*title)
		title = sfp_profile__cmdline(p);
	if (!title || !*title)
		title = "sfprof profile";
	s.sample_th = malloc((ns ? ns : 1) * sizeof(*s.sample_th));
	s.fmap = malloc((nf ? nf : 1) * sizeof(*s.fmap));
	s.frames = malloc((nf ? nf : 1) * sizeof(*s.frames));
	s.locs_cap = 256;
	s.locs = malloc(s.locs_cap * sizeof(*s.locs));
	if (!s.sample_th || !s.fmap || !s.frames || !s.locs)
		goto out;
	memset(s.fmap, 0xff, (nf ? nf : 1) * sizeof(*s.fmap));

	for (i = 0; i < ns; i++) {
		const struct sfp_profile_sample *smp = sfp_profile__sample(p, i);
		int64_t t = thread_of(&s, smp);

		if (t < 0) {
			err = (int)t;
			goto out;
		}
		s.sample_th[i] = (uint32_t)t;
		s.th[t].nr++;
		s.th[t].weight += smp->period ? smp->period : 1;
		s.th[t].comm = smp->comm;
		if (smp->time && smp->time < t0)
			t0 = smp->time;
	}
	/* profiles in pid, tid order: renumber the threads */
	if (s.nr_th > 1) {
		struct ss_thread *sorted = malloc(s.nr_th * sizeof(*sorted));

		remap = malloc(s.nr_th * sizeof(*remap));
		if (!sorted || !remap) {
			free(sorted);
			goto out;
		}
		memcpy(sorted, s.th, s.nr_th * sizeof(*sorted));
		for (i = 0; i < s.nr_th; i++)
			sorted[i].first = i;	/* remember the old index */
		qsort(sorted, s.nr_th, sizeof(*sorted), cmp_threads);
		for (i = 0; i < s.nr_th; i++)
			remap[sorted[i].first] = (uint32_t)i;
		for (i = 0; i < ns; i++)
			s.sample_th[i] = remap[s.sample_th[i]];
		free(s.th);
		s.th = sorted;
	}

	/* frames are numbered as the stacks reach them, so the profiles are
	 * written to a memory buffer first and the frame table before them */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		if (!m)
			goto out;
		err = write_profiles(&s, m, t0 == UINT64_MAX ? 0 : t0);
		if (fclose(m) && !err)
			err = -ENOMEM;
		if (err) {
			free(buf);
			goto out;
		}
		fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
		      "\"exporter\":\"sfprof\",\"name\":", out);
		sfp_flame_json_str(out, title);
		/* open on the busiest thread */
		for (i = 1; i < s.nr_th; i++)
			if (s.th[i].weight > s.th[busiest].weight)
				busiest = i;
		fprintf(out, ",\"activeProfileIndex\":%zu,\n", busiest);
		write_frames(&s, out);
		fputs(",\n", out);
		fwrite(buf, 1, len, out);
		fputs("}\n", out);
		free(buf);
	}
	err = ferror(out) ? -EIO : 0;
out:
	free(remap);
	free(s.th);
	sfp_htab_free(&s.th_index);
	free(s.sample_th);
	free(s.fmap);
	free(s.frames);
	free(s.locs);
	return err;
}
