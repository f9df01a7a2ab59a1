/* SPDX-License-Identifier: MIT */
/*
 * sfprof's on-disk cache directory: where it is, and how to use it without
 * being led astray.  Two kinds of entries live under it -- SFrame tables
 * built from CFI (cfi/cache.c) and decompressed DWARF images
 * (symbols/dwarf-cache.c) -- and both follow the same rules: the
 * directory is created 0700 and must be ours, not a symbolic link and not
 * writable by others; entries are opened without following links and
 * without blocking, and used only when they are regular files of ours;
 * they are written under a temporary name and renamed, so that a reader
 * never sees half a file.
 */
#ifndef SFP_COMMON_CACHEDIR_H
#define SFP_COMMON_CACHEDIR_H

#include "common/internal.h"

/* Leftover temporaries start with this (a writer that died). */
#define SFP_CACHEDIR_TMP_PREFIX ".tmp-"

/*
 * The cache directory: dir when non-empty, else $SFPROF_CACHE_DIR, else
 * $XDG_CACHE_HOME/sfprof (an absolute one), else ~/.cache/sfprof; with
 * "/sub" appended when sub is not NULL.  Return 0, -ENOENT (no HOME),
 * -ENAMETOOLONG.
 */
SFP_HIDDEN int sfp_cachedir_path(const char *dir, const char *sub, char *buf,
				 size_t size);

/*
 * Open the directory itself (never through a symbolic link, trailing
 * slashes or not; a link higher up the path only when root or we own it
 * and others cannot swap it) and check that it is ours and not writable
 * by group or others.  Return the
 * descriptor, -ENOENT when it does not exist, -EPERM (the reason logged)
 * when it must not be used, or -errno.
 */
SFP_HIDDEN int sfp_cachedir_open(const char *dir);

/* Create dir and missing parents 0700, then check it as above. */
SFP_HIDDEN int sfp_cachedir_ensure(const char *dir);

/*
 * Open entry name of the checked directory dirfd for reading (path is
 * for messages): no link followed, no blocking on a FIFO, a regular file
 * of ours only.  Return the descriptor, -EPERM, or -errno.
 */
SFP_HIDDEN int sfp_cachedir_open_entry(int dirfd, const char *name,
				       const char *path);

/* A temporary file name in dir, unique to this process and moment. */
SFP_HIDDEN int sfp_cachedir_tmp_path(const char *dir, char *buf, size_t size);

#endif
