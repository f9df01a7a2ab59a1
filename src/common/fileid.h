/* SPDX-License-Identifier: MIT */
/*
 * What makes a mapped file the file it is: the one rule every component
 * that keys on a file uses (the machine model, the unwinder's module
 * registry and table cache, the symbolizer's caches, the profile's DSO
 * table, report's dso key, the agent's mappings, the build-id cache).
 *
 * Containers put different builds at one path (/srv/app/server,
 * /lib/x86_64-linux-gnu/libc.so.6), and a deployment replaces a binary on
 * disk while the old one runs, so a path alone names nothing.  The rule:
 *
 *  1. Two files with build-ids are the same file exactly when the
 *     build-ids are equal, whatever their paths (one table and one symbol
 *     set for every container running one image).
 *  2. A file with a build-id and one without are not known to be the
 *     same: they are different (the caller may learn the missing one by
 *     reading the file, and ask again).
 *  3. Two files without build-ids are the same when their paths are
 *     equal and, where the kernel gave them, their (device, inode) and
 *     mount namespace are equal too.  0 stands for "not known" in dev,
 *     ino and mntns (perf's old MMAP record, a file from before the
 *     namespace was read); "not known" matches only "not known".
 */
#ifndef SFP_COMMON_FILEID_H
#define SFP_COMMON_FILEID_H

#include "common/internal.h"

#define SFP_FILE_ID_MAX 20	/* GNU build-ids: SHA-1 at most */

struct sfp_file_id {
	const char *path;	/* as mapped (borrowed, never NULL) */
	uint64_t dev, ino;	/* the kernel's device and inode, 0: not known */
	uint64_t mntns;		/* mount namespace inode, 0: not known */
	uint8_t build_id[SFP_FILE_ID_MAX];
	uint8_t build_id_len;	/* 0: none known */
};

/* The rule above. */
SFP_HIDDEN bool sfp_file_id_same(const struct sfp_file_id *a,
				 const struct sfp_file_id *b);

/* A hash consistent with sfp_file_id_same(): same files hash alike. */
SFP_HIDDEN uint32_t sfp_file_id_hash(const struct sfp_file_id *id);

/*
 * The short form of a build-id that outputs print beside a name shared
 * by different files ("server [3f2a9c01]"): its first 4 bytes in hex, or,
 * for a file without one, device and inode in hex ("inode 8:1:4a2f"; no
 * '/', so that a basename of "path [short]" keeps it whole).  buf holds
 * at least SFP_FILE_ID_SHORT bytes.  Return: buf.
 */
#define SFP_FILE_ID_SHORT 48
SFP_HIDDEN const char *sfp_file_id_short(const struct sfp_file_id *id,
					 char *buf, size_t size);

/* The mount namespace of process pid (the inode of /proc/PID/ns/mnt),
 * 0 when it cannot be read (gone, no permission). */
SFP_HIDDEN uint64_t sfp_proc_mntns(int pid);

#endif /* SFP_COMMON_FILEID_H */
