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

#include <stddef.h>

#include "common/internal.h"

/*
 * Populate, writable, the whole pages within [p, p + len); smaller spans
 * are left alone, and so is any failure (old kernels: the pages then
 * fault one by one, as before).
 */
SFP_HIDDEN void sfp_prefault(void *p, size_t len);

#endif
