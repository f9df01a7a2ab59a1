// SPDX-License-Identifier: MIT
/*
 * Where a module's table comes from: the ELF's own .sframe section, else a
 * table built from its DWARF CFI (src/cfi).
 *
 * The CFI component's sfp_sframe__open_elf_table*() (with its on-disk
 * cache by build-id) is used when it is built (UNW_USE_OPEN_ELF_TABLE);
 * until then this file does the same two steps itself, without the cache.
 */
#include <sfprof/cfi.h>

#include "elf/elf.h"
#include "unwind/module.h"

#ifndef UNW_USE_OPEN_ELF_TABLE
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

static int open_table(const char *path, const void *image, size_t size,
		      struct sfp_sframe **out)
{
	SFP_OPTS(sfp_build_opts, bo);
	struct sfp_elf *e = NULL;
	void *sec = NULL;
	size_t sec_size = 0;
	uint64_t sec_addr = 0;
	int err;

	err = image ? sfp_elf_open_mem(image, size, path, &e)
		    : sfp_elf_open(path, &e);
	if (err)
		return err;
	err = open_own_sframe(e, path, out);
	sfp_elf_close(&e);
	if (err != -ENOENT && err != -EBADMSG && err != -EOPNOTSUPP)
		return err;
	err = image ? sfp_sframe__build_from_elf_mem(image, size, path, &bo,
						     &sec, &sec_size,
						     &sec_addr, NULL)
		    : sfp_sframe__build_from_elf(path, &bo, &sec, &sec_size,
						 &sec_addr, NULL);
	if (err)
		return err;
	SFP_OPTS(sfp_sframe_opts, so, .section_addr = sec_addr, .name = path);
	err = sfp_sframe__open_mem(sec, sec_size, &so, out);
	free(sec);
	return err;
}
#endif

int unw_open_table(const char *path, const void *image, size_t size,
		   const struct unw_table_opts *opts, struct sfp_sframe **out)
{
#ifdef UNW_USE_OPEN_ELF_TABLE
	SFP_OPTS(sfp_table_opts, to, .cache_dir = opts->cache_dir,
		 .no_cache = opts->no_cache);

	if (image)
		return sfp_sframe__open_elf_table_mem(image, size, path, &to,
						      out);
	return sfp_sframe__open_elf_table(path, &to, out);
#else
	(void)opts;
	return open_table(path, image, size, out);
#endif
}
