// SPDX-License-Identifier: MIT
/*
 * Fuzz the interpreter-trampoline matcher (src/unwind/interp-tramp.c):
 * the input is a window of code bytes as read from a process; every
 * position in it is tried as a return address and as an exact PC.  A
 * match must give a rule the walk can use: CFA = SP + 8 or 16, RA at
 * CFA - 8, the caller's FP (if saved) at CFA - 16.
 */
#include <stdint.h>
#include <stdlib.h>

#include "unwind/unwind-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unw_rule r;
	size_t at;
	int exact, m;

	if (size > 256)
		size = 256;
	for (at = 0; at <= size; at++)
		for (exact = 0; exact < 2; exact++) {
			m = unw_tramp_match(data, size, at, exact, &r);
			if (m < 0)
				continue;
			if (!unw_tramp_name(m) || r.kind != UNW_R_TRAMP ||
			    r.cfa.kind != SFP_LOC_REG ||
			    r.cfa.reg != SFP_DWARF_AMD64_SP ||
			    (r.cfa.offset != 8 && r.cfa.offset != 16) ||
			    r.ra.kind != SFP_LOC_CFA_DEREF || r.ra.offset != -8 ||
			    (r.fp.kind != SFP_LOC_NONE &&
			     (r.fp.kind != SFP_LOC_CFA_DEREF ||
			      r.fp.offset != -16)))
				abort();
		}
	return 0;
}
