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
 * Input: JSON text (docs/sframe-json.md), capped at 1 MiB.  An input whose
 * first byte is 0xb1 is instead a compact binary list of functions and
 * rows fed straight to the builder (see builder_input()), which reaches
 * row combinations that byte mutations of JSON rarely produce.
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

/* Decode what we wrote; re-encoding the decoded table must give it back. */
static void check_section(const void *buf, size_t len, uint64_t addr,
			  uint8_t version)
{
	SFP_OPTS(sfp_sframe_opts, o, .name = "fuzz-encoded",
		 .section_addr = addr);
	struct sfp_sframe *sf = NULL;
	void *again = NULL;
	size_t len2 = 0;
	int err;

	if (sfp_sframe__open_mem(buf, len, &o, &sf))
		__builtin_trap();	/* we wrote something we cannot read */
	err = reencode(sf, version, &again, &len2);
	if (err || len2 != len || memcmp(buf, again, len))
		__builtin_trap();	/* decode → encode is not the identity */
	sfp_sframe__free(&sf);
	free(again);
}

/* Bytes → builder input, little-endian, stops where the data ends. */
struct rd {
	const uint8_t *p, *end;
};

static uint64_t take(struct rd *r, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)(r->p < r->end ? *r->p++ : 0) << (8 * i);
	return v;
}

static void take_loc(struct rd *r, struct sfp_loc *l)
{
	l->kind = take(r, 1) % 8;
	l->flags = take(r, 1) & 7;
	l->reg = take(r, 1);
	/* Mostly small offsets, sometimes any 32-bit value. */
	if (take(r, 1) & 1)
		l->offset = (int32_t)(uint32_t)take(r, 4);
	else
		l->offset = (int8_t)take(r, 1);
}

static void builder_input(const uint8_t *data, size_t size)
{
	struct rd r = { data + 1, data + size };
	SFP_OPTS(sfp_sframe_builder_opts, bo);
	struct sfp_sframe_builder *b = NULL;
	struct sfp_sframe_row rows[64];
	void *buf = NULL;
	size_t len = 0;
	uint8_t sel = take(&r, 1);

	bo.version = 2 + (sel & 1);
	bo.abi = 1 + (sel >> 1) % 4;
	bo.no_fixed_ra = sel & 0x10;
	bo.flags = (sel & 0x20) ? SFP_SFRAME_BUILDER_F_MERGE_ROWS : 0;
	bo.fixed_fp_offset = (sel & 0x40) ? (int8_t)take(&r, 1) : 0;
	bo.fixed_ra_offset = (sel & 0x80) ? (int8_t)take(&r, 1) : 0;
	bo.section_addr = take(&r, 1) & 1 ? take(&r, 8) : 0x10000;
	if (sfp_sframe_builder__new(&bo, &b))
		return;
	for (int f = 0; f < 64 && r.p < r.end; f++) {
		struct sfp_sframe_func fn = { 0 };
		uint8_t attr, n;
		uint64_t at = 0;

		fn.start = take(&r, 1) & 1 ? take(&r, 8) : 0x11000 + take(&r, 2);
		fn.size = take(&r, 1) & 1 ? take(&r, 4) : take(&r, 1);
		attr = take(&r, 1);
		fn.pc_type = attr & 1;
		fn.fde_type = (attr >> 1) & 1;
		fn.pauth_key = (attr >> 2) & 1;
		fn.signal = (attr >> 3) & 1;
		fn.rep_size = (attr & 0x10) ? take(&r, 1) : 16;
		n = take(&r, 1) % 64;
		for (uint8_t i = 0; i < n; i++) {
			memset(&rows[i], 0, sizeof(rows[i]));
			at += i ? 1 + take(&r, 1) : 0;
			rows[i].start = at;
			rows[i].flags = take(&r, 1) & 0x1f;
			take_loc(&r, &rows[i].cfa);
			take_loc(&r, &rows[i].ra);
			take_loc(&r, &rows[i].fp);
		}
		sfp_sframe_builder__add_func(b, &fn, rows, n);
	}
	if (!sfp_sframe_builder__write(b, &buf, &len))
		check_section(buf, len, bo.section_addr, bo.version);
	free(buf);
	sfp_sframe_builder__free(&b);
}

static void one(const uint8_t *data, size_t size, uint8_t version, bool merge)
{
	struct sfp_sframe_json_opts jo = { .version = version,
					   .merge_rows = merge,
					   .name = "fuzz" };
	void *buf = NULL;
	size_t len = 0;
	uint64_t addr = 0;

	if (sfp_sframe_json__encode((const char *)data, size, &jo, &buf, &len,
				    &addr))
		return;
	check_section(buf, len, addr, version);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	if (size && data[0] == 0xb1) {
		builder_input(data, size);
		return 0;
	}
	one(data, size, 3, false);
	one(data, size, 2, true);
	return 0;
}
