// SPDX-License-Identifier: MIT
/*
 * Fuzz target: SFrame decode + validate, then everything a consumer does
 * with a table that opened: iteration, lookups at and around every row
 * and function boundary, the text and JSON dumps.
 *
 * Input: the first 8 bytes (if present) are the section address, then the
 * section.  Inputs are capped at 1 MiB.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sfprof/sframe.h>

#define MAX_INPUT (1u << 20)

static void lookups(const struct sfp_sframe *sf)
{
	uint32_t i, j, n = sfp_sframe__num_funcs(sf);
	struct sfp_sframe_row row;

	for (i = 0; i < n && i < 4096; i++) {
		struct sfp_sframe_func fn;

		if (sfp_sframe__func(sf, i, &fn))
			__builtin_trap();
		sfp_sframe__find(sf, fn.start - 1, &row);
		sfp_sframe__find(sf, fn.start, &row);
		sfp_sframe__find(sf, fn.start + fn.size, &row);
		sfp_sframe__find(sf, fn.start + fn.size / 2, &row);
		for (j = 0; j < fn.num_rows && j < 64; j++) {
			if (sfp_sframe__row(sf, i, j, &row))
				__builtin_trap();
			if (row.func_idx != i || row.row_idx != j)
				__builtin_trap();
			sfp_sframe__find(sf, row.start, &row);
			if (fn.pc_type == SFP_SFRAME_PC_MASK)
				sfp_sframe__find(sf, fn.start + row.start, &row);
		}
		if (!sfp_sframe__row(sf, i, fn.num_rows, &row))
			__builtin_trap();
	}
	if (!sfp_sframe__func(sf, n, NULL))
		__builtin_trap();
	sfp_sframe__find(sf, 0, &row);
	sfp_sframe__find(sf, UINT64_MAX, &row);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SFP_OPTS(sfp_sframe_opts, opts, .name = "fuzz");
	struct sfp_sframe *sf = NULL;
	FILE *devnull;

	if (size > MAX_INPUT)
		return 0;
	if (size >= 8) {
		memcpy(&opts.section_addr, data, 8);
		data += 8;
		size -= 8;
	}
	if (sfp_sframe__open_mem(data, size, &opts, &sf))
		return 0;
	lookups(sf);
	sfp_sframe__validate(sf);	/* sframe check's extra pass */
	devnull = fopen("/dev/null", "w");
	if (devnull) {
		sfp_sframe__dump(sf, devnull);
		sfp_sframe__dump_json(sf, devnull);
		fclose(devnull);
	}
	sfp_sframe__free(&sf);
	return 0;
}
