// SPDX-License-Identifier: MIT
/*
 * Finished symbol tables of ELF files kept on disk between runs, in the
 * packed form of symtab-packed.c.
 *
 * A DSO's table is made from its code file (.symtab or .dynsym,
 * MiniDebugInfo, PLT stubs, a Go function table) and, when there is one,
 * its separate debug file: the entry is tied to the code file
 * (common/filecache.h: size, mtime, inode, device, build-id) and its
 * name to the debug file that was used, by path, size, mtime and inode
 * ("none" without one), so a debug package installed or updated later
 * makes a new entry and the old one ages out under the budget.  Entries
 * are "<hash of both>-<code file size>.syms" in <cache dir>/symtab.
 *
 * A table is kept only when making it logged no warning: a report of a
 * damaged file warns on every run, not only the first.
 */
#include "common/filecache.h"
#include "elf/elf.h"
#include "symbols/internal.h"

#define SUFFIX ".syms"
/* Bump when the packed layout or what goes into a table changes. */
#define CACHE_GEN 2	/* 2: Go function tables */
#define DEFAULT_BUDGET (256ull << 20)

struct debug_key {
	uint64_t size, ino, dev;
	int64_t mtime_sec, mtime_nsec;
};

/* The entry's name and what it must match; -ENOENT: not for caching. */
static int describe(const struct sfp_symbolizer_dso *d, struct sfp_fc_src *src,
		    char *name, size_t name_len)
{
	struct debug_key k = { 0 };
	const uint8_t *id = NULL;
	size_t idlen = 0;
	struct stat st;
	uint64_t h;

	if (sfp_elf_stat(d->elf, &st))
		return -ENOENT;
	if (sfp_elf_build_id(d->elf, &id, &idlen) || idlen > SFP_FC_ID_MAX)
		idlen = 0;
	sfp_fc_src_init(src, "SYMTAB", CACHE_GEN, &st, idlen ? id : NULL,
			idlen);
	h = sfp_fnv1a64(d->path, strlen(d->path));
	if (d->debug) {
		struct stat ds;

		if (sfp_elf_stat(d->debug, &ds) || !d->debug_path)
			return -ENOENT;
		k.size = (uint64_t)ds.st_size;
		k.ino = (uint64_t)ds.st_ino;
		k.dev = (uint64_t)ds.st_dev;
		k.mtime_sec = ds.st_mtim.tv_sec;
		k.mtime_nsec = ds.st_mtim.tv_nsec;
		h ^= sfp_fnv1a64(d->debug_path, strlen(d->debug_path));
		h = h * 0x100000001b3ull ^ sfp_fnv1a64(&k, sizeof(k));
	} else {
		h ^= sfp_fnv1a64("none", 4);
	}
	return sfp_fmt(name, name_len, "%016llx-%llx" SUFFIX,
		       (unsigned long long)h,
		       (unsigned long long)st.st_size) ? 0 : -ENAMETOOLONG;
}

int sfp_symtab_cache_load(const struct sfp_symbolizer *s,
			  struct sfp_symbolizer_dso *d)
{
	char name[64];
	struct sfp_fc_src src;
	struct sfp_fc_entry ent;
	int err;

	if (!s->symtab_cache_dir || describe(d, &src, name, sizeof(name)))
		return -ENOENT;
	err = sfp_fc_load(s->symtab_cache_dir, name, &src, &ent);
	if (err)
		return err;
	err = sfp_symtab_unpack(&d->tab, ent.map, ent.size[0], ent.size[1]);
	if (err) {
		pr_info("%s: cached symbol table of %s unfit; making it again",
			s->symtab_cache_dir, d->path);
		sfp_fc_unmap(&ent);
	}
	return err;
}

void sfp_symtab_cache_store(const struct sfp_symbolizer *s,
			    const struct sfp_symbolizer_dso *d)
{
	char name[64];
	struct sfp_fc_src src;
	void *p0, *p1;
	size_t n0, n1;

	if (!s->symtab_cache_dir || !d->tab.nr || d->tab.psyms ||
	    describe(d, &src, name, sizeof(name)) ||
	    sfp_symtab_pack(&d->tab, &p0, &n0, &p1, &n1))
		return;
	sfp_fc_store(s->symtab_cache_dir, name, SUFFIX, &src, p0, n0, p1, n1,
		     s->symtab_cache_budget ? s->symtab_cache_budget :
					      DEFAULT_BUDGET);
	free(p0);
	free(p1);
}
