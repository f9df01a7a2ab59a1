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

/*
 * Byte → rule, biased towards rules the encoder accepts (the stack and
 * frame pointer of the ABI, offsets in multiples of 8, s390x's 160) so
 * that most inputs get past validation; one bit in each byte still
 * allows anything.
 */
static int32_t take_off(struct rd *r, uint8_t b)
{
	if ((b & 0x60) == 0x60)
		return (int32_t)(uint32_t)take(r, 4);
	return 8 * (int8_t)take(r, 1) + ((b & 0x20) ? 160 : 0);
}

static void take_cfa(struct rd *r, uint8_t abi, struct sfp_loc *l)
{
	static const uint16_t sp[] = { 0, 31, 31, 7, 15 }, fp[] = { 0, 29, 29, 6, 11 };
	uint8_t b = take(r, 1);

	l->kind = (b & 3) == 3 ? SFP_LOC_REG_DEREF : SFP_LOC_REG;
	l->reg = (b & 4) ? fp[abi] : sp[abi];
	if ((b & 0x18) == 0x18)
		l->reg = take(r, 1);
	l->offset = take_off(r, b);
	if (b == 0xff) {		/* anything */
		l->kind = take(r, 1) % 8;
		l->flags = take(r, 1) & 7;
	}
}

static void take_rule(struct rd *r, int8_t fixed, struct sfp_loc *l)
{
	uint8_t b = take(r, 1);

	switch (b & 7) {
	case 0: case 1:
		l->kind = SFP_LOC_NONE;
		break;
	case 2:
		l->kind = SFP_LOC_CFA_DEREF;
		l->offset = fixed;
		l->flags = fixed ? SFP_LOC_F_FIXED : 0;
		if (b & 0x10)
			l->flags |= SFP_LOC_F_PADDING;
		break;
	case 3:
		l->kind = SFP_LOC_NOT_SAVED;
		l->flags = (b & 0x10) ? SFP_LOC_F_PADDING : 0;
		break;
	case 4:
		l->kind = SFP_LOC_REG;
		l->reg = take(r, 1);
		l->offset = (b & 0x10) ? take_off(r, b) : 0;
		break;
	case 5:
		l->kind = SFP_LOC_REG_DEREF;
		l->reg = take(r, 1);
		l->offset = take_off(r, b);
		break;
	case 6:
		l->kind = (b & 0x10) ? SFP_LOC_CFA : SFP_LOC_UNDEFINED;
		l->offset = take_off(r, b);
		break;
	default:
		l->kind = SFP_LOC_CFA_DEREF;
		l->offset = take_off(r, b);
		break;
	}
	if (b == 0xff) {		/* anything */
		l->kind = take(r, 1) % 8;
		l->flags = take(r, 1) & 7;
		l->offset = (int32_t)(uint32_t)take(r, 4);
	}
}

/* Functions the builder accepted, to compare with what decodes. */
struct accepted {
	struct sfp_sframe_func fn;
	struct sfp_sframe_row rows[64];
	uint32_t seq;
};

static int cmp_accepted(const void *pa, const void *pb)
{
	const struct accepted *a = pa, *b = pb;

	if (a->fn.start != b->fn.start)
		return a->fn.start < b->fn.start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* A location whose value is the header's fixed slot, however flagged. */
static bool at_fixed(const struct sfp_loc *l, int8_t fixed)
{
	return fixed && l->kind == SFP_LOC_CFA_DEREF && l->offset == fixed;
}

/* "RA still in its register": no rule, or the not-saved padding. */
static bool ra_in_reg(const struct sfp_loc *l)
{
	return l->kind == SFP_LOC_NONE || l->kind == SFP_LOC_NOT_SAVED;
}

/* Same rule: offsets and registers count only for kinds that have them. */
static bool same_loc(const struct sfp_loc *a, const struct sfp_loc *b)
{
	bool has_off = a->kind != SFP_LOC_NONE &&
		       a->kind != SFP_LOC_UNDEFINED &&
		       a->kind != SFP_LOC_NOT_SAVED;
	bool has_reg = a->kind == SFP_LOC_REG || a->kind == SFP_LOC_REG_DEREF;

	return a->kind == b->kind && (!has_off || a->offset == b->offset) &&
	       (!has_reg || a->reg == b->reg);
}

/*
 * The rules that went in are the rules that come out: the encoder may
 * only change how a rule is flagged (fixed/padding), never what it says.
 */
static void check_semantics(const struct sfp_sframe_builder_opts *bo,
			    struct accepted *acc, size_t n, const void *buf,
			    size_t len)
{
	SFP_OPTS(sfp_sframe_opts, o, .section_addr = bo->section_addr);
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_info info;

	if (sfp_sframe__open_mem(buf, len, &o, &sf))
		__builtin_trap();
	sfp_sframe__info(sf, &info);
	if (sfp_sframe__num_funcs(sf) != n)
		__builtin_trap();
	qsort(acc, n, sizeof(*acc), cmp_accepted);
	for (uint32_t i = 0; i < n; i++) {
		const struct sfp_sframe_func *in = &acc[i].fn;
		struct sfp_sframe_func fn;

		sfp_sframe__func(sf, i, &fn);
		if (fn.start != in->start || fn.size != in->size ||
		    fn.pc_type != in->pc_type || fn.rep_size != in->rep_size ||
		    fn.pauth_key != in->pauth_key || fn.signal != in->signal ||
		    (in->fde_type == SFP_SFRAME_FDE_FLEX &&
		     fn.fde_type != SFP_SFRAME_FDE_FLEX) ||
		    fn.num_rows != in->num_rows)
			__builtin_trap();
		for (uint32_t j = 0; j < fn.num_rows; j++) {
			const struct sfp_sframe_row *x = &acc[i].rows[j];
			uint64_t want = x->start;
			struct sfp_sframe_row y;

			sfp_sframe__row(sf, i, j, &y);
			/* PCINC rows come back as absolute PCs. */
			if (in->pc_type == SFP_SFRAME_PC_INC &&
			    acc[i].rows[0].start != in->start)
				want = in->start + x->start;
			if (y.start != want)
				__builtin_trap();
			if ((x->flags & SFP_ROW_RA_UNDEFINED) ||
			    x->ra.kind == SFP_LOC_UNDEFINED) {
				if (!(y.flags & SFP_ROW_RA_UNDEFINED))
					__builtin_trap();
				continue;
			}
			if ((x->flags ^ y.flags) & SFP_ROW_MANGLED_RA)
				__builtin_trap();
			if (!same_loc(&x->cfa, &y.cfa))
				__builtin_trap();
			if (at_fixed(&x->ra, info.fixed_ra_offset)
				    ? !at_fixed(&y.ra, info.fixed_ra_offset)
				    : ra_in_reg(&x->ra) ? !ra_in_reg(&y.ra)
							: !same_loc(&x->ra, &y.ra))
				__builtin_trap();
			if (at_fixed(&x->fp, info.fixed_fp_offset)
				    ? !at_fixed(&y.fp, info.fixed_fp_offset)
				    : !same_loc(&x->fp, &y.fp))
				__builtin_trap();
		}
	}
	sfp_sframe__free(&sf);
}

static void builder_input(const uint8_t *data, size_t size)
{
	struct rd r = { data + 1, data + size };
	SFP_OPTS(sfp_sframe_builder_opts, bo);
	struct sfp_sframe_builder *b = NULL;
	struct accepted *acc;
	size_t nacc = 0;
	void *buf = NULL;
	size_t len = 0;
	uint8_t sel = take(&r, 1);
	int8_t fixed_ra;

	bo.version = 2 + (sel & 1);
	bo.abi = 1 + (sel >> 1) % 4;
	bo.no_fixed_ra = sel & 0x10;
	bo.flags = (sel & 0x20) ? SFP_SFRAME_BUILDER_F_MERGE_ROWS : 0;
	bo.fixed_fp_offset = (sel & 0x40) ? (int8_t)take(&r, 1) : 0;
	bo.fixed_ra_offset = (sel & 0x80) ? (int8_t)take(&r, 1) : 0;
	bo.section_addr = take(&r, 1) & 1 ? take(&r, 8) : 0x10000;
	/* The fixed RA offset the builder will use (AMD64 default -8). */
	fixed_ra = bo.fixed_ra_offset ? bo.fixed_ra_offset
		 : bo.abi == SFP_SFRAME_ABI_AMD64_LE ? -8 : 0;
	acc = calloc(64, sizeof(*acc));
	if (!acc || sfp_sframe_builder__new(&bo, &b)) {
		free(acc);
		return;
	}
	for (int f = 0; f < 64 && r.p < r.end; f++) {
		struct accepted *a = &acc[nacc];
		struct sfp_sframe_func *fn = &a->fn;
		struct sfp_sframe_row *rows = a->rows;
		uint8_t attr, n;
		uint64_t at = 0;

		memset(a, 0, sizeof(*a));
		attr = take(&r, 1);
		fn->start = (attr & 0x80) ? take(&r, 8) : 0x11000 + take(&r, 2);
		/* Mostly few rows, one row in 8 with a wide gap (ADDR2/4). */
		n = take(&r, 1);
		n = (n & 0xc0) ? n % 8 : n % 64;
		for (uint8_t i = 0; i < n; i++) {
			uint8_t gap = take(&r, 1), fl;

			if (i && (gap & 7) == 7)
				at += 1 + take(&r, 3) % 0x20000;
			else if (i)
				at += 1 + gap % 32;
			rows[i].start = at;
			fl = take(&r, 1);

			rows[i].flags = (fl & 0x80) ? fl & 0x1f
						    : fl & SFP_ROW_MANGLED_RA;
			take_cfa(&r, bo.abi, &rows[i].cfa);
			take_rule(&r, bo.no_fixed_ra ? 0 : fixed_ra, &rows[i].ra);
			take_rule(&r, bo.fixed_fp_offset, &rows[i].fp);
		}
		/* Mostly a size (and block) that holds the rows. */
		fn->size = (attr & 0x40) ? take(&r, 4) : at + 1 + take(&r, 1);
		fn->pc_type = (attr & 0x30) == 0x30;
		fn->fde_type = (attr >> 1) & 1;
		fn->pauth_key = bo.abi <= 2 && ((attr >> 2) & 1);
		fn->signal = (attr >> 3) & 1;
		fn->rep_size = fn->pc_type && at < 255 ? (uint8_t)(at + 1)
							 : (uint8_t)((attr & 1) * 16);
		if (!sfp_sframe_builder__add_func(b, fn, rows, n)) {
			fn->num_rows = n;
			a->seq = (uint32_t)nacc++;
		}
	}
	if (!sfp_sframe_builder__write(b, &buf, &len)) {
		check_section(buf, len, bo.section_addr, bo.version);
		if (!(bo.flags & SFP_SFRAME_BUILDER_F_MERGE_ROWS))
			check_semantics(&bo, acc, nacc, buf, len);
	}
	free(buf);
	free(acc);
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
