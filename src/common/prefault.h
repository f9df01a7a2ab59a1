/* SPDX-License-Identifier: MIT */
/*
 * Fault in memory that is about to be written, in one call.
 *
 * A first touch of an anonymous page is a page fault.  In a guest whose
 * page tables the host shadows (PVM here: 2 cores, the CI's kind) that
 * fault cost ~10 us, against ~4 us for the same page populated ahead by
 * one madvise(MADV_POPULATE_WRITE) and then touched; on bare metal the
 * call still saves the per-fault entry and exit.  Arrays that grow by
 * doubling and are then filled front to back (the reader's time queue)
 * use it on the part they have just grown.
 */
#ifndef SFP_COMMON_PREFAULT_H
#define SFP_COMMON_PREFAULT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/internal.h"

/*
 * Populate, writable, the whole pages within [p, p + len); smaller spans
 * are left alone, and so is any failure (old kernels: the pages then
 * fault one by one, as before).
 */
SFP_HIDDEN void sfp_prefault(void *p, size_t len);

/*
 * Transparent huge pages.  The first touch of a populated small page
 * still costs ~4.4 us in that guest, as the host fills in its shadow
 * entry; a 2 MiB huge page is one entry (4 MiB of them: 0.1-0.5 ms to
 * populate, 0.02 ms to touch, against 0.45 and 4.5 ms as small pages).
 */
#define SFP_HUGE_PAGE (2u << 20)

/* The kernel gives huge pages to a mapping that asks (madvise) or to
 * every one (always); read once from sysfs. */
SFP_HIDDEN bool sfp_thp_available(void);

/*
 * len bytes (a multiple of SFP_HUGE_PAGE) of fresh memory on a huge page
 * boundary, asked to be huge pages where the kernel offers them; NULL
 * without memory.  Nothing is faulted in.  Freed with munmap(p, len).
 */
SFP_HIDDEN void *sfp_huge_map(size_t len);

#endif
