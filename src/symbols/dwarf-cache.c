// SPDX-License-Identifier: MIT
/*
 * Decompressed DWARF images (dwarf-image.c) kept on disk between runs.
 *
 * Inflating libc's debug file is most of a small dwarf-mode report with
 * inline frames (18 of 49 ms of CPU on bench-report's file), and every
 * report of every program that calls into libc pays it again: perf does
 * too, through libdw.  The image does not change while the debug file
 * does not, so the first run stores it in <cache dir>/dwarf
 * (common/filecache.h: tied to the file's size, mtime, inode and
 * build-id, CRC-checked, under a byte budget) and later runs map it.
 * Beside the image goes what the reader built from it that is worth
 * keeping too: dwarf.c's index of the compile units' ranges, ~5 ms of
 * libdw walking libc's 1,937 CUs.  Entries are named
 * "<build-id>-<size>.dwarf": a binary and its separate debug file share
 * a build-id, not a size.
 */
#include "common/filecache.h"
#include "elf/elf.h"
#include "symbols/internal.h"

#define SUFFIX ".dwarf"
/* Bump when the image's layout or the sections it carries change. */
#define CACHE_GEN 1
#define DEFAULT_BUDGET (1ull << 30)

/* The entry's name and what it must match; -ENOENT: not for caching. */
static int describe(struct sfp_elf *e, struct sfp_fc_src *src, char *name,
		    size_t name_len)
{
	const uint8_t *id;
	size_t idlen, o;
	struct stat st;

	if (sfp_elf_build_id(e, &id, &idlen) || !idlen ||
	    idlen > SFP_FC_ID_MAX || sfp_elf_stat(e, &st))
		return -ENOENT;
	sfp_fc_src_init(src, "DWARF", CACHE_GEN, &st, id, idlen);
	for (o = 0; o < idlen; o++)
		snprintf(name + 2 * o, 3, "%02x", id[o]);
	return sfp_fmt(name + 2 * idlen, name_len - 2 * idlen,
		       "-%llx" SUFFIX, (unsigned long long)st.st_size) ?
		       0 : -ENAMETOOLONG;
}

int sfp_dwarf_cache_load(const struct sfp_dwarf_cache *c, struct sfp_elf *e,
			 void **image, size_t *size, const void **extra,
			 size_t *extra_size)
{
	char name[2 * SFP_FC_ID_MAX + 32];
	struct sfp_fc_src src;
	struct sfp_fc_entry ent;
	int err;

	*image = NULL;
	*size = 0;
	*extra = NULL;
	*extra_size = 0;
	if (!c || !c->dir || describe(e, &src, name, sizeof(name)))
		return -ENOENT;
	err = sfp_fc_load(c->dir, name, &src, &ent);
	if (err)
		return err;
	*image = ent.map;
	*size = ent.size[0];
	*extra = ent.size[1] ? (const uint8_t *)ent.map + ent.size[0] : NULL;
	*extra_size = ent.size[1];
	return 0;
}

void sfp_dwarf_cache_unmap(void *image, size_t size, size_t extra_size)
{
	struct sfp_fc_entry ent = { image, { size, extra_size } };

	sfp_fc_unmap(&ent);
}

void sfp_dwarf_cache_store(const struct sfp_dwarf_cache *c, struct sfp_elf *e,
			   const void *image, size_t size, const void *extra,
			   size_t extra_size)
{
	char name[2 * SFP_FC_ID_MAX + 32];
	struct sfp_fc_src src;

	if (!c || !c->dir || !size || describe(e, &src, name, sizeof(name)))
		return;
	sfp_fc_store(c->dir, name, SUFFIX, &src, image, size, extra,
		     extra_size, c->budget ? c->budget : DEFAULT_BUDGET);
}
