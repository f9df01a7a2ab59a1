// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perf.data bytes through sfp_profile__load_mem(), then the
 * flamegraph and speedscope writers.  Whatever the input, both must write
 * JSON that parses (the page's data block and the speedscope file), with
 * every template marker filled, and a packed tree (and preview) that the
 * checking decoder reads back whole: a name with odd bytes or a broken
 * tree must never produce a page the browser cannot read.  The first byte picks
 * options unless the input starts like a real perf.data file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/export.h>
#include <sfprof/profile.h>

#include "common/json.h"
#include "export/flame-tree.h"
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

/* The text of the page's <script id="@id" ...> element; abort if none. */
static const char *script_text(const char *html, const char *id, size_t *len)
{
	char tag[64];
	const char *b, *e;

	snprintf(tag, sizeof(tag), "<script id=\"%s\" type=\"", id);
	b = strstr(html, tag);
	if (!b || !(b = strchr(b + strlen(tag), '>')))
		abort();
	e = strstr(++b, "</script>");
	if (!e)
		abort();
	*len = (size_t)(e - b);
	return b;
}

/* The tree or preview of the page, as the data block sizes it. */
static void must_decode(const char *html, const struct sfp_json *j,
			bool preview)
{
	struct sfp_flame_tree t;
	const struct sfp_json *code = sfp_json_get(j, "funcCode");
	uint32_t count[SFP_FLAME_CODE_MAX + 1] = { 0 };
	uint64_t n, c;
	const char *b;
	size_t len, l;
	char err[128];

	b = script_text(html, preview ? "sfp-preview" : "sfp-tree", &len);
	if (sfp_json_u64(sfp_json_get(j, preview ? "previewNodes" : "nodes"), &n) ||
	    !code || sfp_json_len(code) > SFP_FLAME_CODE_MAX)
		abort();
	for (l = 0; l < sfp_json_len(code); l++) {
		if (sfp_json_u64(sfp_json_at(code, l), &c) || c > UINT32_MAX)
			abort();
		count[l + 1] = (uint32_t)c;
	}
	if (preview && !n) {
		if (len)
			abort();
		return;
	}
	if (sfp_flame_tree_decode(b, len, n, count, (unsigned int)sfp_json_len(code),
				  sfp_json_get(j, "offcpu") != NULL, preview, &t,
				  err, sizeof(err)))
		abort();
	sfp_flame_tree_free(&t);
}

static void check(const struct sfp_profile *p, bool user_only)
{
	SFP_OPTS(sfp_export_opts, o, .user_only = user_only);
	struct sfp_json *j = NULL;
	const char *b;
	size_t len = 0;
	char *s;

	s = export_mem(p, "flamegraph", &o, &len);
	if (!s)
		abort();	/* only -ENOMEM could fail, and not at this size */
	if (strstr(s, "@@SFP_"))
		abort();
	b = script_text(s, "sfp-data", &len);
	if (sfp_json_parse(b, len, NULL, &j))
		abort();
	must_decode(s, j, false);
	must_decode(s, j, true);
	sfp_json_free(&j);
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
