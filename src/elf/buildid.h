/* SPDX-License-Identifier: MIT */
/*
 * A file is its build-id (common/fileid.h): this reads it from a file on
 * disk, and finds the file a process maps as it sees it -- the one place
 * that knows how to reach a mapped file of a process in another mount
 * namespace (a container) or one replaced on disk while it runs.  Used
 * by the recorder (synthesized maps), the unwinder (tables) and the
 * symbolizer (names).  In elf/ because the build-id is an ELF note.
 */
#ifndef SFP_ELF_BUILDID_H
#define SFP_ELF_BUILDID_H

#include "common/internal.h"

#define SFP_PROC_BUILD_ID_MAX 64

/*
 * The build-id of the ELF file at path: 0 and *len set (at most cap
 * bytes); -ENOENT no build-id note; other -errno opening or reading it.
 */
SFP_HIDDEN int sfp_file_build_id(const char *path, uint8_t *id, size_t cap,
				 size_t *len);

/*
 * A path through which the file that process pid maps as `path` can be
 * opened now, written to out:
 *  1. /proc/PID/root/PATH: the file in the process's mount namespace,
 *     when its build-id equals id (or no id is given and the mapping is
 *     not marked " (deleted)");
 *  2. /proc/PID/map_files/START-END: the very inode the kernel mapped
 *     (a deleted or replaced binary: "upgraded while running"), for the
 *     mapping [start, end), or, with start == end == 0, any mapping of
 *     path in /proc/PID/maps; checked against id when given (needs root);
 *  3. PATH on our side, checked against id when given.
 * pid <= 0 tries 3 only.  A " (deleted)" suffix on path is ignored.
 * Return: 0; -ESTALE only files with another build-id exist; -ENOENT
 * none; -ENAMETOOLONG.
 */
SFP_HIDDEN int sfp_proc_mapped_file(int pid, const char *path, uint64_t start,
				    uint64_t end, const uint8_t *id,
				    size_t id_len, char *out, size_t size);

#endif /* SFP_ELF_BUILDID_H */
