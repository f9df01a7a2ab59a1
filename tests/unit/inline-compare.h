/* SPDX-License-Identifier: MIT */
/*
 * Inline chains of two DWARF readers of the same program, compared at
 * every address of a range: the decompressed image and the cache of it
 * must both read exactly what the uncompressed DWARF says.
 */
#ifndef SFP_TEST_INLINE_COMPARE_H
#define SFP_TEST_INLINE_COMPARE_H

#include <string.h>

#include "symbols/internal.h"

static inline bool ic_same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * Addresses of [lo, hi) whose chains differ (count, name, file, line,
 * column or inlined); *with_chain counts those with an inlined frame.
 */
static inline int ic_mismatches(struct sfp_symbolizer *s, struct sfp_dwarf *da,
				struct sfp_dwarf *db, uint64_t lo, uint64_t hi,
				int *with_chain)
{
	struct sfp_inline_frame fa[16], fb[16];
	int bad = 0;

	*with_chain = 0;
	for (uint64_t a = lo; a < hi; a++) {
		int na = sfp_dwarf_inlines(s, da, a, fa, 16);
		int nb = sfp_dwarf_inlines(s, db, a, fb, 16);

		if (na != nb) {
			bad++;
			continue;
		}
		*with_chain += na > 1;
		for (int k = 0; k < na; k++)
			if (!ic_same_str(fa[k].name, fb[k].name) ||
			    !ic_same_str(fa[k].file, fb[k].file) ||
			    fa[k].line != fb[k].line ||
			    fa[k].column != fb[k].column ||
			    fa[k].inlined != fb[k].inlined)
				bad++;
	}
	return bad;
}

#endif
