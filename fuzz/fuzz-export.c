// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perf.data bytes loaded into the profile model
 * (sfp_profile__load_mem()), then written in every export format: odd
 * models (no frames, unknown mappings, truncated stacks, empty comms,
 * inline lines) through the folded, pprof and Firefox writers and
 * whatever else sfp_export_formats() lists.  The first byte picks load
 * and export options unless the input starts like a real perf.data file
 * (the seed corpus keeps those intact).  Output goes to /dev/null: the
 * point is that no writer crashes, leaks or reads out of bounds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <sfprof/export.h>
#include <sfprof/profile.h>

#include "perfdata-input.h"

#define MAX_INPUT (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SFP_OPTS(sfp_profile_opts, o, .kallsyms_path = "/nonexistent/kallsyms");
	static FILE *sink;
	struct sfp_profile *p = NULL;
	const char *const *fmt;
	uint8_t mode;

	if (size < 1 || size > MAX_INPUT)
		return 0;
	if (!sink)
		sink = fopen("/dev/null", "wb");
	if (!sink)
		abort();
	mode = perfdata_input(&data, &size);
	o.no_merge = mode & 1;
	o.max_depth = (mode & 2) ? 4 : 0;
	if (sfp_profile__load_mem(data, size, &o, &p))
		return 0;
	for (fmt = sfp_export_formats(); *fmt; fmt++) {
		SFP_OPTS(sfp_export_opts, eo, .user_only = mode & 8,
			 .annotate_kind = mode & 16);
		int err = sfp_profile__export(p, *fmt, sink, &eo);

		/* only running out of memory may fail on a loaded model */
		if (err && err != -ENOMEM)
			abort();
	}
	sfp_profile__free(&p);
	return 0;
}
