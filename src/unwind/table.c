// SPDX-License-Identifier: MIT
/*
 * Where a module's table comes from: the CFI component's
 * sfp_sframe__open_elf_table*(), i.e. the ELF's own .sframe section, else
 * a table built from its DWARF CFI and kept in the on-disk cache by
 * build-id (so the second process that maps libc does not rebuild it).
 * An object with its own .sframe may get the CFI-built table as well, for
 * the code its .sframe does not cover (unw_module_fallback()).
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

int unw_open_cfi_table(const char *path, struct sfp_sframe **out)
{
	SFP_OPTS(sfp_build_opts, bo);
	SFP_OPTS(sfp_sframe_opts, so, .name = path);
	void *sec = NULL;
	size_t size = 0;
	uint64_t addr = 0;
	int err;

	*out = NULL;
	/* Not through the cache: its entries stand for "the" table of an
	 * object, which for this one is its own .sframe.  Such objects are
	 * rare and the build runs once per object. */
	err = sfp_sframe__build_from_elf(path, &bo, &sec, &size, &addr, NULL);
	if (err)
		return err;
	so.section_addr = addr;
	err = sfp_sframe__open_mem(sec, size, &so, out);
	free(sec);
	return err;
}
