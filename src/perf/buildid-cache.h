/* SPDX-License-Identifier: MIT */
/*
 * perf's build-id cache, written and read (perf 6.1's layout, which
 * `perf buildid-cache -a` makes):
 *
 *   DIR/<path>/<build-id>/elf       a copy of the mapped file
 *   DIR/<path>/<build-id>/debug     its separate debug file, if any
 *   DIR/.build-id/<xx>/<rest>  ->   ../../<path>/<build-id>   (symlink)
 *
 * DIR is the directory given, else $PERF_BUILDID_DIR (what perf itself
 * sets and honours), else $HOME/.debug.
 */
#ifndef SFP_PERF_BUILDID_CACHE_H
#define SFP_PERF_BUILDID_CACHE_H

#include "common/internal.h"

/*
 * Make dir (NULL: the default above) the directory that reading uses
 * (sfp_perf_dso_path(), the symbolizer's debug directories) for this
 * process, by setting PERF_BUILDID_DIR as perf does.  And symfs, if
 * given: a root under which recorded paths are looked up as well
 * (perf's --symfs).  Return: 0, -ENOMEM.
 */
SFP_HIDDEN int sfp_buildid_set_dirs(const char *dir, const char *symfs);

/* The cache directory now in force.  Return: 0, -ENOENT (no $HOME),
 * -ENAMETOOLONG. */
SFP_HIDDEN int sfp_buildid_dir(char *buf, size_t len);

/* --symfs, or NULL. */
SFP_HIDDEN const char *sfp_buildid_symfs(void);

/*
 * DIR/.build-id/xx/rest[/file] for a build-id (file "elf", "debug" or
 * NULL for the link itself).  Return: 0, -EINVAL bad id, -ENAMETOOLONG.
 */
SFP_HIDDEN int sfp_buildid_cache_path(const char *dir, const uint8_t *id,
				      size_t id_len, const char *file,
				      char *buf, size_t len);

/*
 * Put the file recorded as name (an absolute path, " (deleted)" allowed)
 * with build-id id into the cache at dir: src's bytes as elf, debug_src's
 * (may be NULL) as debug, and the .build-id link.  Entries already there
 * are kept.  *added grows by the bytes copied.  Files are written under a
 * temporary name and renamed, so readers never see half a copy.
 * Return: 0; -EEXIST all there already; -EINVAL bad name or id; -errno.
 */
SFP_HIDDEN int sfp_buildid_cache_add(const char *dir, const char *name,
				     const uint8_t *id, size_t id_len,
				     const char *src, const char *debug_src,
				     uint64_t *added);

#endif /* SFP_PERF_BUILDID_CACHE_H */
