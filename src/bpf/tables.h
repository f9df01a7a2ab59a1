/* SPDX-License-Identifier: MIT */
/*
 * SFrame tables for the BPF unwinder: each module's table (its .sframe, or
 * one built from .eh_frame through the on-disk cache) converted to the
 * compact layout of defer-shared.h and written into three maps: the
 * module hash (dev, inode) -> slice, the FDE array and the FRE array.
 * The arrays are mmap'ed (BPF_F_MMAPABLE), so that loading libc is a few
 * memcpy's rather than thousands of syscalls.
 *
 * The arrays have fixed capacities; when a new table does not fit, the
 * least recently used tables are evicted (their module entry is removed
 * first, so that the BPF side never reads a slice being rewritten for
 * long: a walk racing the eviction may see one wrong row, bounded by the
 * walk's own checks).
 */
#ifndef SFP_BPF_TABLES_H
#define SFP_BPF_TABLES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/internal.h"

struct sfb_tables;

struct sfb_tables_stats {
	uint64_t loaded;	/* tables written into the maps */
	uint64_t evicted;	/* tables evicted for room (LRU) */
	uint64_t failed;	/* modules without a usable table */
	uint64_t deferred;	/* prefetches left to the first miss: no
				   free room */
	uint64_t throttled;	/* misses not loaded: the eviction budget
				   was spent */
	uint64_t fdes, fres;	/* entries in use now */
};

/* The maps' fds and capacities; fde_mem/fre_mem are their mmap'ings. */
SFP_HIDDEN int sfb_tables__new(int mods_fd, void *fde_mem, uint32_t fde_cap,
			       void *fre_mem, uint32_t fre_cap,
			       const char *cache_dir, struct sfb_tables **out);

/*
 * Make sure the table of the file at path is in the maps.  dev/ino (the
 * kernel's view, from stat() when 0) name it; path "[vdso]" is this
 * process's vDSO, under the key (0, 0).  Return: 0 (also when the
 * module has no table: it is remembered and counted), -errno.
 */
SFP_HIDDEN int sfb_tables__ensure(struct sfb_tables *t, const char *path,
				  uint64_t dev, uint64_t ino);

/*
 * The same for a module that was only mapped, not yet met by an unwind:
 * loaded when there is free room, never evicting another table for it
 * (the BPF side's first miss of it loads it then, evicting).  On a
 * machine whose programs' tables exceed the arrays (a compiler's 450,000
 * rows and the libraries of every program started), evicting on every
 * new mapping made the tables' thread reload the same tables many times
 * a second.  Return: 1 loaded now, 0 not (in already, or not loaded),
 * -errno.
 */
SFP_HIDDEN int sfb_tables__prefetch(struct sfb_tables *t, const char *path);

/*
 * Whether a prefetch of the module the kernel calls (dev, ino) would do
 * nothing (it is in the maps, known to have no table, or evicted: only a
 * miss brings it back); then it counts as used now.  A mapping's MMAP2
 * record names the file so: most mappings are of modules already known,
 * and this spares them the path's access() and stat().
 */
SFP_HIDDEN bool sfb_tables__prefetch_known(struct sfb_tables *t,
					   uint64_t dev, uint64_t ino);

/*
 * Limit the loads that evict other tables to about rows_per_s FRE rows a
 * second (0, the default: no limit).  A table evicted before and needed
 * again beyond the budget stays out until its next miss (the BPF side
 * reports one each second) finds budget; the unwinds step its frames by
 * frame pointer meanwhile.
 */
SFP_HIDDEN void sfb_tables__evict_budget(struct sfb_tables *t,
					 uint32_t rows_per_s);

/* path as pid sees it: path itself when pid is in our mount namespace
 * and we see a file there, else /proc/PID/root/path (a process in its
 * own mount namespace: a container, whose file at a path we have too is
 * another file). */
SFP_HIDDEN const char *sfb_tables__path_of(pid_t pid, const char *path,
					   char *buf, size_t len);

/* The executable file mappings of a live process (/proc/PID/maps) whose
 * path contains only (every one when NULL). */
SFP_HIDDEN int sfb_tables__preload_pid(struct sfb_tables *t, pid_t pid,
				       const char *only);

/* A module the BPF side met without a table: find its path in pid's maps. */
SFP_HIDDEN int sfb_tables__resolve_miss(struct sfb_tables *t, pid_t pid,
					uint64_t dev, uint64_t ino,
					uint64_t vm_start);

SFP_HIDDEN void sfb_tables__stats(const struct sfb_tables *t,
				  struct sfb_tables_stats *st);

SFP_HIDDEN void sfb_tables__free(struct sfb_tables **t);

/* The kernel's dev_t for a user-space st_dev (MKDEV: major << 20). */
SFP_HIDDEN uint64_t sfb_kernel_dev(uint64_t st_dev);

#endif /* SFP_BPF_TABLES_H */
