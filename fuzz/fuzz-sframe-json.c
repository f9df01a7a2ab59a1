// SPDX-License-Identifier: MIT
/*
 * Fuzz target: JSON form → builder → section → decoder, as v3 and as v2.
 *
 * Oracles beyond "no crash, no sanitizer report":
 *  - whatever the encoder writes, the decoder must accept;
 *  - encoding the decoded table again gives the very same bytes
 *    (encode ∘ decode is the identity on the encoder's output).
 * A broken oracle traps, so libFuzzer keeps the input.
 *
 * Input: JSON text (docs/sframe-json.md), capped at 1 MiB.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/sframe.h>

#include "sframe/json-read.h"

#define MAX_INPUT (1u << 20)

/* Re-encode a decoded table with the same header choices. */
static int reencode(const struct sfp_sframe *sf, uint8_t version, void **buf,
		    size_t *size)
{
	struct sfp_sframe_info info;
	struct sfp_sframe_builder *b = NULL;
	struct sfp_sframe_row *rows = NULL;
	int err;

	sfp_sframe__info(sf, &info);
	{
		SFP_OPTS(sfp_sframe_builder_opts, o, .version = version,
			 .abi = info.abi,
			 .fixed_fp_offset = info.fixed_fp_offset,
			 .fixed_ra_offset = info.fixed_ra_offset,
			 .no_fixed_ra = info.fixed_ra_offset == 0,
			 .section_addr = info.section_addr);

		err = sfp_sframe_builder__new(&o, &b);
	}
	for (uint32_t i = 0; !err && i < sfp_sframe__num_funcs(sf); i++) {
		struct sfp_sframe_func fn;

		if (sfp_sframe__func(sf, i, &fn))
			__builtin_trap();
		free(rows);
		rows = calloc((size_t)fn.num_rows + 1, sizeof(*rows));
		if (!rows) {
			err = -ENOMEM;
			break;
		}
		for (uint32_t j = 0; j < fn.num_rows; j++)
			if (sfp_sframe__row(sf, i, j, &rows[j]))
				__builtin_trap();
		err = sfp_sframe_builder__add_func(b, &fn, rows, fn.num_rows);
	}
	if (!err)
		err = sfp_sframe_builder__write(b, buf, size);
	free(rows);
	sfp_sframe_builder__free(&b);
	return err;
}

static void one(const uint8_t *data, size_t size, uint8_t version, bool merge)
{
	struct sfp_sframe_json_opts jo = { .version = version,
					   .merge_rows = merge,
					   .name = "fuzz" };
	SFP_OPTS(sfp_sframe_opts, o, .name = "fuzz-encoded");
	struct sfp_sframe *sf = NULL;
	void *buf = NULL, *again = NULL;
	size_t len = 0, len2 = 0;
	uint64_t addr = 0;
	int err;

	if (sfp_sframe_json__encode((const char *)data, size, &jo, &buf, &len,
				    &addr))
		return;
	o.section_addr = addr;
	if (sfp_sframe__open_mem(buf, len, &o, &sf))
		__builtin_trap();	/* we wrote something we cannot read */
	err = reencode(sf, version, &again, &len2);
	if (err || len2 != len || memcmp(buf, again, len))
		__builtin_trap();	/* decode → encode is not the identity */
	sfp_sframe__free(&sf);
	free(buf);
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	one(data, size, 3, false);
	one(data, size, 2, true);
	return 0;
}
