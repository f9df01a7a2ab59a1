// SPDX-License-Identifier: MIT
/*
 * Where a module's table comes from: the CFI component's
 * sfp_sframe__open_elf_table*(), i.e. the ELF's own .sframe section, else
 * a table built from its DWARF CFI and kept in the on-disk cache by
 * build-id (so the second process that maps libc does not rebuild it).
 */
#include <sfprof/cfi.h>

#include "unwind/module.h"

int unw_open_table(const char *path, const void *image, size_t size,
		   const struct unw_table_opts *opts, struct sfp_sframe **out)
{
	struct sfp_table_opts to;

	/* memset, not SFP_OPTS(): the struct ends in padding that a
	 * designated initializer may leave as garbage, and the size check
	 * rejects non-zero bytes past the last known field. */
	memset(&to, 0, sizeof(to));
	to.sz = sizeof(to);
	to.cache_dir = opts->cache_dir;
	to.no_cache = opts->no_cache;

	if (image)
		return sfp_sframe__open_elf_table_mem(image, size, path, &to,
						      out);
	return sfp_sframe__open_elf_table(path, &to, out);
}
