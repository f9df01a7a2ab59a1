// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perf.data bytes through sfp_profile__load_mem() -- reader,
 * stitcher, machine model, dwarf-mode unwinder, symbolizer and the
 * interning tables -- then every table walked the way a report walks it.
 * Then the report engine (src/report) prints it in several modes, and
 * the same bytes are loaded again with merge_samples (what sfprof report
 * asks for), whose twins must stand for every sample and all their
 * period, or the target aborts.  The
 * first byte picks options (unless the input starts like a real perf.data
 * file, which the seed corpus keeps intact).  Kernel symbols
 * come from a file that does not exist: reading this machine's kallsyms
 * for every input would only slow the fuzzer down.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/profile.h>

#include "report/report.h"
#include "perfdata-input.h"

#define MAX_INPUT (1u << 20)

static uint64_t acc;

static void walk(const struct sfp_profile *p)
{
	uint32_t locs[64];
	size_t i, j, n;

	for (i = 0; i < sfp_profile__nr_samples(p); i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);

		n = sfp_profile__stack(p, s->stack, locs, 64);
		for (j = 0; j < n && j < 64; j++) {
			const struct sfp_profile_loc *l = sfp_profile__loc(p, locs[j]);
			const struct sfp_profile_func *f;

			uint32_t k;

			if (!l || !l->nr_lines)
				abort();
			/* every line of an inline chain names a function */
			for (k = 0; k < l->nr_lines; k++)
				if (!sfp_profile__func(p, l->lines[k].func))
					abort();
			if (l->dwarf_name)
				acc += strlen(l->dwarf_name);
			f = sfp_profile__func(p, l->lines[l->nr_lines - 1].func);
			if (!f || !f->name || !f->dso)
				abort();
			acc += strlen(f->name) + l->addr;
			if (l->mapping != UINT32_MAX &&
			    !sfp_profile__mapping(p, l->mapping))
				abort();
		}
		if (!sfp_profile__string(p, s->comm) ||
		    !sfp_profile__event(p, s->event))
			abort();
	}
	for (i = 1; i < sfp_profile__nr_nodes(p); i++)
		if (sfp_profile__node(p, (uint32_t)i)->parent >= i)
			abort();
}

static void report(const struct sfp_profile *p, uint8_t mode)
{
	static FILE *devnull;
	struct sfp_report_opts o = {
		.keys = { SFP_REPORT_SYM, SFP_REPORT_DSO, SFP_REPORT_COMM,
			  SFP_REPORT_PID },
		.nr_keys = 4,
		.graph_limit = 0.5,
		.inline_frames = true,
	};
	int pass;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!devnull)
		return;
	for (pass = 0; pass < 2; pass++) {
		o.children = !pass ^ !!(mode & 8);
		o.callee = pass ^ !!(mode & 16);
		o.graph = (enum sfp_report_graph)((pass * 2 + (mode >> 5)) & 3);
		o.plain = pass;
		o.nr_keys = 1 + (size_t)((mode >> 5) & 3);
		if (sfp_report_print(p, &o, devnull) == -EINVAL)
			abort();
	}
}

/* The merged load of the same bytes against p, loaded without merging. */
static void merged(const uint8_t *data, size_t size,
		   const struct sfp_profile_opts *o,
		   const struct sfp_profile *p)
{
	SFP_OPTS(sfp_profile_opts, om, .kallsyms_path = o->kallsyms_path,
		 .no_merge = o->no_merge, .max_depth = o->max_depth,
		 .srclines = o->srclines, .dwarf_inlines = o->dwarf_inlines,
		 .merge_samples = true);
	struct sfp_profile *m = NULL;
	uint64_t count = 0, period = 0, want = 0;
	size_t i;

	if (sfp_profile__load_mem(data, size, &om, &m))
		return;		/* out of memory: the first load passed */
	walk(m);
	for (i = 0; i < sfp_profile__nr_samples(p); i++)
		want += sfp_profile__sample(p, i)->period;
	for (i = 0; i < sfp_profile__nr_samples(m); i++) {
		count += sfp_profile__sample(m, i)->count;
		period += sfp_profile__sample(m, i)->period;
	}
	if (count != sfp_profile__nr_samples(p) || period != want)
		abort();
	sfp_profile__free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SFP_OPTS(sfp_profile_opts, o, .kallsyms_path = "/nonexistent/kallsyms");
	struct sfp_profile *p = NULL;
	uint8_t mode;

	if (size < 1 || size > MAX_INPUT)
		return 0;
	mode = perfdata_input(&data, &size);
	o.no_merge = mode & 1;
	o.max_depth = (mode & 2) ? 4 : 0;
	o.srclines = mode & 4;
	/* sfprof report's load: inline chains of dwarf frames only */
	o.dwarf_inlines = !(mode & 4) && !(mode & 2);
	if (!sfp_profile__load_mem(data, size, &o, &p)) {
		walk(p);
		report(p, mode);
		merged(data, size, &o, p);
	}
	sfp_profile__free(&p);
	return 0;
}
