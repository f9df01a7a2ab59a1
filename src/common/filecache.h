/* SPDX-License-Identifier: MIT */
/*
 * Data derived from a file, kept in sfprof's cache directory and used
 * again while that file is unchanged: decompressed DWARF images
 * (symbols/dwarf-cache.c) and the index of a kallsyms copy
 * (symbols/kallsyms.c).  An entry is its payload -- one or two parts --
 * followed by a trailer:
 *
 *	magic "SFPCACHE", kind, generation, CRC-32 of the payload, the
 *	parts' sizes, the source's size, mtime (s, ns), inode and device,
 *	and an id of the source (a build-id) when it has one
 *
 * An entry is used only when the trailer matches the source as it is now
 * and the CRC holds; otherwise it is removed, and the caller builds the
 * data again and stores it.  Directory and entries follow the rules of
 * common/cachedir.h, and so does the directory above (the cache root).  The entries of one directory stay under a byte
 * budget: a new entry evicts the least recently used ones (a load
 * refreshes an entry's mtime), and a payload over a quarter of the budget
 * is not kept.
 */
#ifndef SFP_COMMON_FILECACHE_H
#define SFP_COMMON_FILECACHE_H

#include <sys/stat.h>

#include "common/internal.h"

#define SFP_FC_ID_MAX 64

/* What an entry must say about the source it was derived from. */
struct sfp_fc_src {
	char kind[8];
	uint32_t gen;		/* bumped when the payload's format changes */
	uint64_t size;
	int64_t mtime_sec, mtime_nsec;
	uint64_t ino, dev;
	uint8_t id_len;
	uint8_t id[SFP_FC_ID_MAX];
};

/* kind: up to 8 letters; id may be NULL (id_len <= SFP_FC_ID_MAX). */
SFP_HIDDEN void sfp_fc_src_init(struct sfp_fc_src *s, const char *kind,
				uint32_t gen, const struct stat *st,
				const uint8_t *id, size_t id_len);

/* A loaded entry: a private mapping of the payload. */
struct sfp_fc_entry {
	void *map;		/* part 0 starts here, part 1 right after */
	size_t size[2];
};

/*
 * Load entry name of dir for src.  Return 0 (unmap with sfp_fc_unmap());
 * -ENOENT no such entry; -EBADMSG a stale or damaged one (removed);
 * -EPERM not a usable directory or entry (left alone); -errno.
 */
SFP_HIDDEN int sfp_fc_load(const char *dir, const char *name,
			   const struct sfp_fc_src *src,
			   struct sfp_fc_entry *out);
SFP_HIDDEN void sfp_fc_unmap(struct sfp_fc_entry *e);

/*
 * Store parts p0 (n0 bytes) and p1 (n1, p1 may be NULL) as entry name of
 * dir (created if missing), then evict entries whose names end in suffix
 * while over budget bytes.  Failures are logged at info level only: the
 * cache is never a reason to fail.
 */
SFP_HIDDEN void sfp_fc_store(const char *dir, const char *name,
			     const char *suffix, const struct sfp_fc_src *src,
			     const void *p0, size_t n0, const void *p1,
			     size_t n1, uint64_t budget);

#endif
