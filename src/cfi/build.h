/* SPDX-License-Identifier: MIT */
/* The ELF → SFrame driver and the table cache.  Internal. */
#ifndef SFP_CFI_BUILD_H
#define SFP_CFI_BUILD_H

#include <sfprof/cfi.h>

#include "common/internal.h"

struct sfp_elf;

/* sfp_sframe__build_from_elf() on an opened ELF. */
SFP_HIDDEN int cfi_build_elf(struct sfp_elf *e,
			     const struct sfp_build_opts *opts,
			     void **section, size_t *size,
			     uint64_t *section_addr,
			     struct sfp_build_stats *stats);

#endif /* SFP_CFI_BUILD_H */
