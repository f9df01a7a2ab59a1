// SPDX-License-Identifier: MIT
/*
 * PC -> row lookup and iteration over a decoded table.
 *
 * Everything here reads only the private arrays built by decode.c, never
 * allocates and takes no locks, so sfp_sframe__find() is async-signal-safe
 * and may run concurrently on one table.
 *
 * Function step: a bucket table (sframe_int.h) narrows the range to the
 * functions near pc, then a branch-free binary search (the compare feeds
 * a conditional move, not a branch the predictor must guess) over lk[],
 * whose entries carry what the row step needs.  Row step: the function's
 * (start, rule) pairs are contiguous; up to ROW_SCAN_MAX of them are
 * counted in a straight loop (the compiler vectorises it), longer slices
 * are bisected the same branch-free way.  Then one read of the small,
 * de-duplicated rule table.
 */
#include <errno.h>
#include <string.h>

#include "sframe/sframe_int.h"

/* Slices up to this many rows are scanned instead of bisected. */
#define ROW_SCAN_MAX 16

/* How many lk[] entries before the candidate are also tried: earlier
 * functions may share its start (zero-sized FDEs) or enclose it. */
#define LOOK_BACK 4

void sfp_sframe__info(const struct sfp_sframe *sf, struct sfp_sframe_info *info)
{
	if (!sf || !info)
		return;
	*info = sf->info;
}

uint32_t sfp_sframe__num_funcs(const struct sfp_sframe *sf)
{
	return sf ? sf->num_fns : 0;
}

size_t sfp_sframe__mem_bytes(const struct sfp_sframe *sf)
{
	size_t n;

	if (!sf)
		return 0;
	n = sizeof(*sf) + strlen(sf->name) + 1;
	n += (size_t)sf->num_fns * sizeof(*sf->lk);
	n += (size_t)sf->info.num_fres * sizeof(*sf->fres);
	n += (size_t)sf->num_rules * sizeof(*sf->rules);
	if (sf->lk_of_fde)
		n += (size_t)sf->num_fns * 2 * sizeof(*sf->lk_of_fde);
	if (sf->bucket)
		n += (size_t)sf->num_buckets * sizeof(*sf->bucket);
	return n;
}

int sfp_sframe__func(const struct sfp_sframe *sf, uint32_t idx,
		     struct sfp_sframe_func *out)
{
	const struct sfp_sframe_lk *l;

	if (!sf || !out || idx >= sf->num_fns)
		return -ENOENT;
	l = sfp_sframe_fde_lk(sf, idx);
	out->start = l->start + sf->info.bias;
	out->size = l->size;
	out->num_rows = l->num_rows;
	out->pc_type = l->pc_type;
	out->fde_type = l->fde_type;
	out->rep_size = l->rep_size;
	out->pauth_key = !!(l->attr & SFP_SFRAME_LK_PAUTH_B);
	out->signal = !!(l->attr & SFP_SFRAME_LK_SIGNAL);
	return 0;
}

static void fill(const struct sfp_sframe *sf, const struct sfp_sframe_lk *l,
		 uint32_t ri, struct sfp_sframe_row *out)
{
	uint32_t k = l->first_row + ri;
	const struct sfp_sframe_rule *r = &sf->rules[sf->fres[k].rule];
	uint64_t end;

	if (ri + 1 < l->num_rows)
		end = sf->fres[k + 1].start;
	else if (l->pc_type == SFP_SFRAME_PC_MASK && l->rep_size)
		end = l->rep_size;
	else
		end = l->size;
	out->start = sf->fres[k].start;
	out->end = end;
	if (l->pc_type != SFP_SFRAME_PC_MASK) {
		uint64_t base = l->start + sf->info.bias;

		out->start += base;
		out->end += base;
	}
	out->func_idx = sfp_sframe_lk_fde(sf, l);
	out->row_idx = ri;
	out->flags = r->flags;
	out->cfa = r->cfa;
	out->ra = r->ra;
	out->fp = r->fp;
}

void sfp_sframe_fill_row(const struct sfp_sframe *sf, uint32_t fi, uint32_t ri,
			 struct sfp_sframe_row *out)
{
	fill(sf, sfp_sframe_fde_lk(sf, fi), ri, out);
}

int sfp_sframe__row(const struct sfp_sframe *sf, uint32_t func_idx,
		    uint32_t row_idx, struct sfp_sframe_row *out)
{
	if (!sf || !out || func_idx >= sf->num_fns ||
	    row_idx >= sfp_sframe_fde_lk(sf, func_idx)->num_rows)
		return -ENOENT;
	sfp_sframe_fill_row(sf, func_idx, row_idx, out);
	return 0;
}

/* Index (into rs[0..n), n > 0) of the last start <= key, or -1. */
static long last_le(const struct sfp_sframe_fre *rs, uint32_t n, uint32_t key)
{
	const struct sfp_sframe_fre *base = rs;

	if (n <= ROW_SCAN_MAX) {
		uint32_t i, cnt = 0;

		/* Starts ascend: counting those <= key finds the row. */
		for (i = 0; i < n; i++)
			cnt += rs[i].start <= key;
		return (long)cnt - 1;
	}
	if (rs[0].start > key)
		return -1;
	while (n > 1) {
		uint32_t half = n / 2;

		base = base[half].start <= key ? base + half : base;
		n -= half;
	}
	return base - rs;
}

/* Row of function l covering pc (pre-bias, inside l), or -1. */
static long func_row(const struct sfp_sframe *sf, const struct sfp_sframe_lk *l,
		     uint64_t pc)
{
	uint64_t off = pc - l->start;

	if (!l->num_rows)
		return -1;
	if (l->pc_type == SFP_SFRAME_PC_MASK) {
		/*
		 * v1 has no rep_size.  Its only producer of PCMASK FDEs is
		 * ld 2.40's x86-64 PLT, whose entries are 16 bytes: use that.
		 * libsframe 2.40 instead compares the low 8 bits of the PC
		 * with those of (start + row start) -- a rule its own source
		 * marks FIXME, which picks the second row at the first
		 * instruction of every PLT entry past the first few, and so
		 * breaks unwinding from a sample taken there.
		 */
		off %= l->rep_size ? l->rep_size : SFRAME_V1_PLT_ENTRY_SIZE;
	}
	/* off < size <= UINT32_MAX */
	return last_le(sf->fres + l->first_row, l->num_rows, (uint32_t)off);
}

int sfp_sframe__find(const struct sfp_sframe *sf, uint64_t pc,
		     struct sfp_sframe_row *out)
{
	const struct sfp_sframe_lk *base;
	uint32_t n, back;
	uint64_t rel;

	if (!sf || !out || !sf->num_fns)
		return -ENOENT;
	rel = pc - sf->info.bias;
	base = sf->lk;
	if (base[0].start > rel)
		return -ENOENT;
	n = sf->num_fns;
	if (sf->bucket) {
		uint64_t d = (rel - sf->bucket_lo) >> sf->bucket_shift;
		uint32_t b = d >= sf->num_buckets ? sf->num_buckets - 1 : (uint32_t)d;
		uint32_t first = sf->bucket[b];
		uint32_t last = b + 1 < sf->num_buckets ? sf->bucket[b + 1]
							: sf->num_fns - 1;

		base = sf->lk + first;
		n = last - first + 1;
	}
	while (n > 1) {
		uint32_t half = n / 2;

		/* Both possible next probes: the loads overlap instead of
		 * waiting on each other when the table is not in cache. */
		__builtin_prefetch(&base[half / 2]);
		__builtin_prefetch(&base[half + half / 2]);
		base = base[half].start <= rel ? base + half : base;
		n -= half;
	}
	/* base: the last function starting at or below pc. */
	for (back = 0; back <= LOOK_BACK; back++) {
		const struct sfp_sframe_lk *l = base - back;
		long ri;

		if (rel - l->start < l->size) {
			ri = func_row(sf, l, rel);
			if (ri < 0)
				return -ENOENT;
			fill(sf, l, (uint32_t)ri, out);
			return 0;
		}
		if (l == sf->lk)
			break;
	}
	return -ENOENT;
}
