/* SPDX-License-Identifier: MIT */
/*
 * The shared libraries a program will map before its main(): its
 * DT_NEEDED entries and theirs, found as the dynamic loader would find
 * them in the usual places, so that a recorder can prepare their unwind
 * tables before the program's first thread runs (the BPF walk cannot wait
 * for a table: a walk that meets a module without one is cut).
 */
#ifndef SFP_ELF_NEEDED_H
#define SFP_ELF_NEEDED_H

#include <stddef.h>

#include "common/internal.h"

/*
 * Call fn(ctx, path) for each library of program exe's DT_NEEDED closure
 * that exists in the search path, each file once, at most max of them.
 * The search, in the loader's order where we can follow it: DT_RPATH
 * (when there is no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH ($ORIGIN
 * expanded), then the directories of the libraries this process has
 * loaded (its libc's directory is the system's), Debian's multiarch
 * directories of exe's machine (/lib/TRIPLET, /usr/lib/TRIPLET), /lib64,
 * /usr/lib64, /lib and /usr/lib.  /etc/ld.so.cache is not read: a library found only
 * through it is left to the recorder's later means (its MMAP2).  A
 * candidate of another ELF class or machine than exe is passed over, as
 * the loader does.  fn's non-zero return ends the walk and is returned.
 * Return: 0, the first non-zero fn return, or -errno when exe cannot be
 * read as ELF.
 */
SFP_HIDDEN int sfp_elf_needed_closure(const char *exe, size_t max,
				      int (*fn)(void *ctx, const char *path),
				      void *ctx);

#endif /* SFP_ELF_NEEDED_H */
