/* SPDX-License-Identifier: MIT */
/*
 * A process as /proc shows it: its small status files and its pid in its
 * own namespace.  Finding the files it maps is elf/buildid.h's (it needs
 * the build-id, which only elf/ reads).
 */
#ifndef SFP_COMMON_PROCFS_H
#define SFP_COMMON_PROCFS_H

#include "common/internal.h"

/*
 * The start of a small /proc/PID/NAME file (stat, comm, cgroup): at most
 * size - 1 bytes in buf, NUL-terminated, in one read (the kernel makes
 * these whole at the read; a second one could see a later state).
 * Return: the bytes read (> 0); -errno, or -ENODATA for an empty file.
 */
SFP_HIDDEN ssize_t sfp_proc_read(int pid, const char *name, char *buf,
				 size_t size);

/* pid as its own (innermost) pid namespace knows it (NSpid), else pid. */
SFP_HIDDEN int sfp_proc_ns_pid(int pid);

#endif /* SFP_COMMON_PROCFS_H */
