/* SPDX-License-Identifier: MIT */
/*
 * A light model of the recorded machine, built from the side-band records
 * of a perf.data stream (MMAP, MMAP2, COMM, FORK, EXIT, KSYMBOL): which file is
 * mapped where in each process, and each thread's command name.  It is
 * what `script` and `convert` need to name DSOs, compute perf's printed
 * addresses and collect the build-ids of the DSOs that samples hit.  (The
 * unwinder keeps its own, heavier address spaces with unwind tables.)
 */
#ifndef SFP_PERF_MACHINE_H
#define SFP_PERF_MACHINE_H

#include <sfprof/perf.h>

#include "common/internal.h"

/* Kernel addresses on x86-64 (and every 64-bit arch we know of). */
#define SFP_KERNEL_START 0xffff800000000000ull

struct sfp_pdso {
	char *name;		/* path as recorded, or "[kernel.kallsyms]" */
	uint8_t build_id[20];
	uint8_t build_id_size;	/* 0: unknown */
	bool build_id_read;	/* the file's own was looked for (live) */
	/* The file's device and inode as its MMAP2 without a build-id gave
	 * them (0: not known): whether a path still names that file. */
	uint64_t dev, ino;
	/*
	 * What the records said the file is (common/fileid.h's rule with
	 * the name as path): the build-id an MMAP2 carried, else the
	 * (dev, ino) it carried, else nothing (MMAP, kernel, JIT).  Two
	 * containers' /srv/app/server are two DSOs; build_id above may be
	 * learnt later (live_build_id) without changing the key.
	 */
	uint8_t key_build_id[20];
	uint8_t key_build_id_size;
	/* The first DSO of the same name (its own index when it is the
	 * first): a name shared by other files. */
	uint32_t first_of_name;
	bool name_shared;	/* another DSO has this name (another file) */
	bool kernel;
	bool jit;		/* executable anon memory: perf's name is
				 * "/tmp/perf-PID.map", symbols from that map */
	bool hit;		/* a sample's chain passed through it */
};

struct sfp_pmap {
	uint64_t start, end, pgoff;
	uint32_t dso;
};

struct sfp_machine;

/* The DSO with index idx and another one share a name (different files
 * at one path, in containers or replaced on disk). */
SFP_HIDDEN bool sfp_machine__dso_name_shared(const struct sfp_machine *m,
					     uint32_t idx);

SFP_HIDDEN int sfp_machine__new(struct sfp_machine **out);
SFP_HIDDEN void sfp_machine__free(struct sfp_machine **m);

/* Apply a side-band record; other types are ignored.  Return: 0, -ENOMEM. */
SFP_HIDDEN int sfp_machine__event(struct sfp_machine *m,
				  const struct sfp_perf_event *ev);

/*
 * A thread exited (PERF_RECORD_EXIT): forget it, and its process with
 * its maps when it was the leader (tid == pid), so that a long-running
 * consumer (sfprof agent) does not grow with every process it outlives.
 * The DSO table keeps its entries (indices stay valid).
 */
SFP_HIDDEN void sfp_machine__exit(struct sfp_machine *m, uint32_t pid,
				  uint32_t tid);
SFP_HIDDEN size_t sfp_machine__nr_procs(const struct sfp_machine *m);

/* Command name of a thread ("" before any COMM; ":<tid>" like perf). */
SFP_HIDDEN const char *sfp_machine__comm(struct sfp_machine *m, uint32_t tid);

/*
 * The mapping holding addr in process pid (kernel addresses: the kernel's
 * maps).  Return: the map or NULL.
 */
SFP_HIDDEN const struct sfp_pmap *sfp_machine__find(struct sfp_machine *m,
						    uint32_t pid, uint64_t addr);

/*
 * Kernel code that is not in kallsyms' files: BPF programs and
 * out-of-line code (trampolines, kprobe slots), known from
 * PERF_RECORD_KSYMBOL.  perf names a frame in one "NAME+0xOFF (NAME)":
 * the symbol is its own DSO.  Registered ranges live until their
 * unregistration, so a program unloaded before the file is read keeps
 * its name, and one loaded later at the same address gets its own.
 */
struct sfp_ksym {
	uint64_t start, end;
	char *name;
};

/* The KSYMBOL range holding addr, or NULL. */
SFP_HIDDEN const struct sfp_ksym *sfp_machine__ksym(struct sfp_machine *m,
						    uint64_t addr);

/* Changes with every KSYMBOL record: kernel names cached before it may
 * no longer hold. */
SFP_HIDDEN uint64_t sfp_machine__ksym_gen(const struct sfp_machine *m);

/*
 * The jitdump (".../jit-PID.dump") process pid mapped, as its MMAP record
 * named it, or NULL: the JIT's code-load records name its frames.
 */
SFP_HIDDEN const char *sfp_machine__jitdump(struct sfp_machine *m,
					    uint32_t pid);

SFP_HIDDEN struct sfp_pdso *sfp_machine__dso(struct sfp_machine *m,
					     uint32_t idx);
SFP_HIDDEN size_t sfp_machine__nr_dsos(const struct sfp_machine *m);

/*
 * A number that changes whenever a map table may have changed (MMAP,
 * MMAP2, FORK): what sfp_machine__find() answered for (pid, addr) holds
 * as long as it stays the same, so callers can cache derived results.
 */
SFP_HIDDEN uint64_t sfp_machine__gen(const struct sfp_machine *m);

/*
 * Changes whenever sfp_machine__comm() may answer differently for some
 * tid (a COMM, a FORK, a new or a removed thread): callers may keep a
 * thread's name while it stays the same.
 */
SFP_HIDDEN uint64_t sfp_machine__comm_gen(const struct sfp_machine *m);

/*
 * The same for one process's map table: changes whenever pid's maps may
 * have changed (an MMAP into pid, the FORK that made it), never back to
 * an earlier value (it is sfp_machine__gen() at the change; 0 while pid
 * has no maps).  What sfp_machine__find() answers for (pid, addr) with a
 * user address holds while it stays the same: in a system-wide file,
 * other processes' mmaps no longer void callers' caches.
 */
SFP_HIDDEN uint64_t sfp_machine__pid_gen(struct sfp_machine *m, uint32_t pid);

/*
 * The file to read for a DSO recorded as `name`: perf's build-id cache
 * copy (~/.debug/.build-id/xx/rest/elf) when the recording names the DSO's
 * build-id (id, or else the header's HEADER_BUILD_ID entry) and the copy
 * exists, else name itself.  buf holds the cache path.
 */
SFP_HIDDEN const char *sfp_perf_dso_path(const struct sfp_perf_header_info *h,
					 const char *name, const uint8_t *id,
					 size_t id_len, char *buf, size_t len);

/*
 * Whether perf names the frames of a DSO from its symbols: files, and the
 * vDSO (from perf's build-id cache copy, or its own image); not [heap],
 * [stack], //anon, [vsyscall] ...
 */
static inline bool sfp_perf_dso_has_symbols(const struct sfp_pdso *d)
{
	return d->name[0] == '/' || !strcmp(d->name, "[vdso]");
}

/*
 * The header's HEADER_BUILD_ID entry for a file name: *id NULL when none,
 * or when entries of that name disagree (different files at one path:
 * the name cannot say which one a mapping was).
 */
SFP_HIDDEN void sfp_perf_header_build_id(const struct sfp_perf_header_info *h,
					 const char *name, const uint8_t **id,
					 size_t *len);

/*
 * The build-id recorded for d (its MMAP2 record's, else the header's
 * HEADER_BUILD_ID entry of the same name): *id NULL when none.
 */
SFP_HIDDEN void sfp_perf_dso_build_id(const struct sfp_perf_header_info *h,
				      const struct sfp_pdso *d,
				      const uint8_t **id, size_t *len);

/*
 * Whether the file at path cannot be shown to be d: d shares its name
 * with another file of the recording, no build-id says which one it is,
 * and path is not the device and inode its MMAP2 gave.  Such a file must
 * not name d's frames (they stay unnamed, as perf leaves them).
 */
SFP_HIDDEN bool sfp_perf_dso_unverifiable(const struct sfp_perf_header_info *h,
					  const struct sfp_pdso *d,
					  const char *path);

#endif /* SFP_PERF_MACHINE_H */
