// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the bounded JSON parser (src/common/json.c), then a walk
 * over the tree with the typed getters and a re-serialisation of every
 * string.  Inputs are capped at 256 KiB.
 */
#include <stdint.h>
#include <stdio.h>

#include "common/json.h"

#define MAX_INPUT (256u << 10)

static void walk(const struct sfp_json *v, FILE *f, int depth)
{
	size_t i, n = sfp_json_len(v);
	const char *s;
	size_t len;
	int64_t i64;
	uint64_t u64;
	bool b;

	if (!v || depth > 100)
		return;
	sfp_json_i64(v, &i64);
	sfp_json_u64(v, &u64);
	sfp_json_bool(v, &b);
	if (!sfp_json_str(v, &s, &len) && f)
		sfp_json_write_str(f, s, len);
	if (v->type == SFP_JSON_ARRAY)
		for (i = 0; i < n; i++)
			walk(sfp_json_at(v, i), f, depth + 1);
	if (v->type == SFP_JSON_OBJECT)
		for (i = 0; i < n; i++) {
			if (f)
				sfp_json_write_str(f, v->obj.m[i].key,
						   v->obj.m[i].key_len);
			sfp_json_get(v, v->obj.m[i].key);
			walk(v->obj.m[i].val, f, depth + 1);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sfp_json_parse_opts o = { .max_depth = 64, .name = "fuzz" };
	struct sfp_json *v = NULL;
	FILE *f;

	if (size > MAX_INPUT)
		return 0;
	if (sfp_json_parse((const char *)data, size, &o, &v))
		return 0;
	f = fopen("/dev/null", "w");
	walk(v, f, 0);
	if (f)
		fclose(f);
	sfp_json_free(&v);
	return 0;
}
