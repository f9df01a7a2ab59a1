// SPDX-License-Identifier: MIT
/*
 * Fault in memory about to be written, in one call (see prefault.h).
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/prefault.h"

/* Below this a call costs about what the faults it saves do. */
#define PREFAULT_MIN (64u << 10)

void sfp_prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p, hi = lo + len;

	if (len < PREFAULT_MIN || !pg || (pg & (pg - 1)) || hi < lo)
		return;
	lo = (lo + pg - 1) & ~(pg - 1);
	hi &= ~(pg - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}
