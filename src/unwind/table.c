// SPDX-License-Identifier: MIT
/*
 * Where a module's table comes from.  With the CFI component
 * (sfp_sframe__open_elf_table*) that is the ELF's own .sframe, else a table
 * built from .eh_frame and cached by build-id.  Without it (a build of the
 * unwinder alone) only the ELF's own .sframe section is used.
 */
#include "elf/elf.h"
#include "unwind/module.h"

#if __has_include(<sfprof/cfi.h>)
#include <sfprof/cfi.h>
#define HAVE_CFI 1
#endif

#ifndef HAVE_CFI
static int open_own_sframe(struct sfp_elf *e, const char *name,
			   struct sfp_sframe **out)
{
	struct sfp_elf_section sec;
	const uint8_t *data;
	size_t size;
	int err;

	err = sfp_elf_find_section(e, ".sframe", 0, &sec);
	if (err)
		err = sfp_elf_find_section(e, NULL, SHT_GNU_SFRAME, &sec);
	if (err)
		return -ENOENT;
	err = sfp_elf_section_data(e, &sec, &data, &size);
	if (err)
		return err;
	SFP_OPTS(sfp_sframe_opts, so, .section_addr = sec.addr, .name = name);
	return sfp_sframe__open_mem(data, size, &so, out);
}
#endif

int unw_open_table(const char *path, const void *image, size_t size,
		   const struct unw_table_opts *opts, struct sfp_sframe **out)
{
#ifdef HAVE_CFI
	SFP_OPTS(sfp_table_opts, to, .cache_dir = opts->cache_dir,
		 .no_cache = opts->no_cache);

	if (image)
		return sfp_sframe__open_elf_table_mem(image, size, path, &to,
						      out);
	return sfp_sframe__open_elf_table(path, &to, out);
#else
	struct sfp_elf *e = NULL;
	int err;

	err = image ? sfp_elf_open_mem(image, size, path, &e)
		    : sfp_elf_open(path, &e);
	if (err)
		return err;
	err = open_own_sframe(e, path, out);
	sfp_elf_close(&e);
	return err;
#endif
}
