// SPDX-License-Identifier: MIT
/*
 * PC -> row lookup and iteration over a decoded table.
 *
 * Everything here reads only the private arrays built by decode.c, never
 * allocates and takes no locks, so sfp_sframe__find() is async-signal-safe
 * and may run concurrently on one table.
 *
 * Function step: binary search over the ascending start array (a separate
 * array of 8-byte keys, so the search touches few cache lines).  Row step:
 * binary search over the function's slice of the contiguous row_start[]
 * array (4-byte keys); short slices are scanned linearly, which the
 * compiler can vectorise and which beats branchy bisection for the usual
 * handful of rows.
 */
#include <errno.h>

#include "sframe/sframe_int.h"

/* Slices up to this many rows are scanned instead of bisected. */
#define ROW_SCAN_MAX 16

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

int sfp_sframe__func(const struct sfp_sframe *sf, uint32_t idx,
		     struct sfp_sframe_func *out)
{
	const struct sfp_sframe_fn *fn;

	if (!sf || !out || idx >= sf->num_fns)
		return -ENOENT;
	fn = &sf->fns[idx];
	out->start = fn->start + sf->info.bias;
	out->size = fn->size;
	out->num_rows = fn->num_rows;
	out->pc_type = fn->pc_type;
	out->fde_type = fn->fde_type;
	out->rep_size = fn->rep_size;
	out->pauth_key = fn->pauth_key;
	out->signal = fn->signal;
	return 0;
}

void sfp_sframe_fill_row(const struct sfp_sframe *sf, uint32_t fi, uint32_t ri,
			 struct sfp_sframe_row *out)
{
	const struct sfp_sframe_fn *fn = &sf->fns[fi];
	uint32_t k = fn->first_row + ri;
	const struct sfp_sframe_rule *r = &sf->rows[k];
	uint64_t end;

	if (ri + 1 < fn->num_rows)
		end = sf->row_start[k + 1];
	else if (fn->pc_type == SFP_SFRAME_PC_MASK && fn->rep_size)
		end = fn->rep_size;
	else
		end = fn->size;
	out->start = sf->row_start[k];
	out->end = end;
	if (fn->pc_type != SFP_SFRAME_PC_MASK) {
		uint64_t base = fn->start + sf->info.bias;

		out->start += base;
		out->end += base;
	}
	out->func_idx = fi;
	out->row_idx = ri;
	out->flags = r->flags;
	out->cfa = r->cfa;
	out->ra = r->ra;
	out->fp = r->fp;
}

int sfp_sframe__row(const struct sfp_sframe *sf, uint32_t func_idx,
		    uint32_t row_idx, struct sfp_sframe_row *out)
{
	if (!sf || !out || func_idx >= sf->num_fns ||
	    row_idx >= sf->fns[func_idx].num_rows)
		return -ENOENT;
	sfp_sframe_fill_row(sf, func_idx, row_idx, out);
	return 0;
}

/* Index (into rs[0..n)) of the last start <= key, or -1. */
static long last_le(const uint32_t *rs, uint32_t n, uint32_t key)
{
	uint32_t lo = 0, hi = n;

	if (n <= ROW_SCAN_MAX) {
		uint32_t i, cnt = 0;

		/* Starts ascend: counting those <= key finds the row without
		 * a data-dependent branch. */
		for (i = 0; i < n; i++)
			cnt += rs[i] <= key;
		return (long)cnt - 1;
	}
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rs[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* v1 PCMASK (libsframe 2.40): low 8 bits of the PC against the low 8
 * bits of function start + row start. */
static long v1_mask_row(const struct sfp_sframe_fn *fn, const uint32_t *rs,
			uint64_t pc)
{
	uint32_t key = pc & SFRAME_V1_PCMASK_MASK, i;
	long found = -1;

	for (i = 0; i < fn->num_rows; i++)
		if (((fn->start + rs[i]) & SFRAME_V1_PCMASK_MASK) <= key)
			found = i;
	return found;
}

/* Row of function fi covering pc (pre-bias), or -1. */
static long func_row(const struct sfp_sframe *sf, uint32_t fi, uint64_t pc)
{
	const struct sfp_sframe_fn *fn = &sf->fns[fi];
	const uint32_t *rs = sf->row_start + fn->first_row;
	uint64_t off = pc - fn->start;
	uint32_t key;

	if (!fn->num_rows)
		return -1;
	if (fn->pc_type == SFP_SFRAME_PC_MASK) {
		if (!fn->rep_size)
			return v1_mask_row(fn, rs, pc);
		off %= fn->rep_size;
	}
	key = (uint32_t)off;	/* off < size <= UINT32_MAX */
	return last_le(rs, fn->num_rows, key);
}

int sfp_sframe__find(const struct sfp_sframe *sf, uint64_t pc,
		     struct sfp_sframe_row *out)
{
	uint32_t lo = 0, hi, n, back;
	uint64_t rel;

	if (!sf || !out || !sf->num_fns)
		return -ENOENT;
	rel = pc - sf->info.bias;
	n = sf->num_fns;
	hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (sf->sorted_start[mid] <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo - 1 is the last function starting at or below pc.  A few
	 * earlier ones may share its start (e.g. a zero-sized FDE) or
	 * enclose it, so look back a little. */
	for (back = 0; back < 4 && lo > 0; back++, lo--) {
		uint32_t pos = lo - 1;
		uint32_t fi = sf->sorted_idx ? sf->sorted_idx[pos] : pos;
		const struct sfp_sframe_fn *fn = &sf->fns[fi];
		long ri;

		if (rel - fn->start >= fn->size)
			continue;
		ri = func_row(sf, fi, rel);
		if (ri < 0)
			return -ENOENT;
		sfp_sframe_fill_row(sf, fi, (uint32_t)ri, out);
		return 0;
	}
	return -ENOENT;
}
