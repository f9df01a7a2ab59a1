// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perf.data bytes through sfp_profile__load_mem(), then the
 * flamegraph and speedscope writers.  Whatever the input, both must write
 * JSON that parses (the page's data block and the speedscope file), with
 * every template marker filled: a name with odd bytes or a broken tree
 * must never produce a page the browser cannot read.  The first byte picks
 * options unless the input starts like a real perf.data file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/export.h>
#include <sfprof/profile.h>

#include "common/json.h"
#include "perfdata-input.h"

#define MAX_INPUT (1u << 20)

static char *export_mem(const struct sfp_profile *p, const char *fmt,
			const struct sfp_export_opts *o, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);

	if (!m)
		return NULL;
	if (sfp_profile__export(p, fmt, m, o)) {
		fclose(m);
		free(buf);
		return NULL;
	}
	fclose(m);
	return buf;
}

static void must_parse(const char *s, size_t len)
{
	struct sfp_json *j = NULL;

	if (sfp_json_parse(s, len, NULL, &j))
		abort();
	sfp_json_free(&j);
}

static void check(const struct sfp_profile *p, bool user_only)
{
	static const char tag[] = "<script id=\"sfp-data\" type=\"application/json\">";
	SFP_OPTS(sfp_export_opts, o, .user_only = user_only);
	const char *b, *e;
	size_t len = 0;
	char *s;

	s = export_mem(p, "flamegraph", &o, &len);
	if (!s)
		abort();	/* only -ENOMEM could fail, and not at this size */
	if (strstr(s, "@@SFP_"))
		abort();
	b = strstr(s, tag);
	if (!b)
		abort();
	b += sizeof(tag) - 1;
	e = strstr(b, "</script>");
	if (!e)
		abort();
	must_parse(b, (size_t)(e - b));
	free(s);

	s = export_mem(p, "speedscope", &o, &len);
	if (!s)
		abort();
	must_parse(s, len);
	free(s);
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
	if (!sfp_profile__load_mem(data, size, &o, &p))
		check(p, mode & 8);
	sfp_profile__free(&p);
	return 0;
}
