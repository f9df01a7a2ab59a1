// SPDX-License-Identifier: MIT
/*
 * Checks of a decoded SFrame table that decoding itself does not make.
 *
 * The decoder accepts what an unwinder can still use: a zero-byte
 * section (a linker may keep one with no content) and FDEs whose ranges
 * overlap (a lookup then finds one of them).  libsframe 2.40 and objdump
 * --sframe accept both silently too.  A correct section has neither --
 * every section has at least its header, and a PC belongs to one function
 * -- so `sframe check` asks for these as well.
 */
#include <errno.h>

#include "sframe/sframe_int.h"

/* Conflicts described one by one before the rest are only counted. */
#define MAX_REPORTED 10

static uint64_t fn_end(const struct sfp_sframe_lk *l)
{
	uint64_t end = l->start + l->size;

	return end < l->start ? UINT64_MAX : end;	/* saturate at the top */
}

int sfp_sframe__validate(const struct sfp_sframe *sf)
{
	uint32_t i, far = 0, nbad = 0;
	unsigned int fde_size;

	if (!sf)
		return -EINVAL;
	if (sf->empty) {
		pr_warn("%s: SFrame offset 0x0: empty section (0 bytes): an SFrame section holds at least its %u-byte header",
			sf->name, SFRAME_HDR_SIZE);
		return -EBADMSG;
	}
	fde_size = sframe_fde_size(sf->info.version);
	/*
	 * lk[] is in ascending start order; far is the entry reaching
	 * furthest so far, so each FDE is compared with the one it can
	 * overlap first, in one pass (the same function 200,000 times is
	 * 199,999 conflicts, not 2e10 comparisons).
	 */
	for (i = 1; i < sf->num_fns; i++) {
		const struct sfp_sframe_lk *a = &sf->lk[far], *b = &sf->lk[i];
		bool dup = a->start == b->start && a->size == b->size;
		uint32_t afi = sfp_sframe_lk_fde(sf, a);
		uint32_t bfi = sfp_sframe_lk_fde(sf, b);

		/* (A zero-size FDE covers no PC: only its repeat counts.) */
		if (dup || (b->size && b->start < fn_end(a))) {
			if (nbad++ < MAX_REPORTED)
				pr_warn("%s: SFrame offset 0x%llx: FDE %u [0x%llx, 0x%llx) %s FDE %u [0x%llx, 0x%llx)",
					sf->name,
					(unsigned long long)(sf->fde_base +
							     (uint64_t)bfi * fde_size),
					bfi, (unsigned long long)b->start,
					(unsigned long long)fn_end(b),
					dup ? "repeats" : "overlaps", afi,
					(unsigned long long)a->start,
					(unsigned long long)fn_end(a));
		}
		if (fn_end(b) > fn_end(a))
			far = i;
	}
	if (nbad > MAX_REPORTED)
		pr_warn("%s: %u FDEs overlap or repeat an earlier one (%u more not listed)",
			sf->name, nbad, nbad - MAX_REPORTED);
	return nbad ? -EBADMSG : 0;
}
