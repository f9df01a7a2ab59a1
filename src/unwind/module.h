/* SPDX-License-Identifier: MIT */
/*
 * Modules: one mapped object (ELF file or vDSO image) with its SFrame
 * table, shared by every address space that maps it and loaded once, on
 * first use.
 */
#ifndef SFP_UNWIND_MODULE_H
#define SFP_UNWIND_MODULE_H

#include <pthread.h>

#include "common/fileid.h"
#include "unwind/unwind-internal.h"

#define UNW_MAX_LOADS 16
#define UNW_MAX_BUILD_ID 64
/* Processes through which a shared module's file can be opened: the
 * first mapper may be gone by the time the table is loaded. */
#define UNW_MAX_MAPPERS 4

struct unw_mapper {
	int pid;
	uint64_t start, end;
	char *path;			/* as that process maps it */
};

struct unw_load {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
};

struct unw_module {
	struct unw_module *next;	/* registry list */
	int refcnt;			/* under the registry lock */
	/* No reference left, kept for unw_module_linger()'s time (registry
	 * lock): when its table was made and how much it holds. */
	uint64_t idle_since_ns;
	uint64_t idle_bytes;
	/* The one-time loads (table, fallback) take this, not the registry
	 * lock: a table built on the loader thread must not stall the
	 * address spaces that look modules up meanwhile. */
	pthread_mutex_t load_lock;
	bool queued, fb_queued;		/* given to the loader thread */
	/* What file it is (common/fileid.h's rule; key.path is path):
	 * a build-id names it wherever it is mapped, else the path with
	 * the kernel's (device, inode) and the mount namespace. */
	struct sfp_file_id key;
	char *path;			/* as the first mapper maps it */
	char *open_path;		/* root_dir + path, or where one
					   mapper's process sees it */
	/* Processes that mapped it and where: their mount namespace and
	 * map_files entries lead to the mapped bytes (elf/buildid.h).
	 * Added under the registry lock, read by the load (nr_mappers
	 * acquire/release). */
	struct unw_mapper mappers[UNW_MAX_MAPPERS];
	int nr_mappers;
	/* The key's build-id, else the one read from the file. */
	uint8_t build_id[UNW_MAX_BUILD_ID];
	size_t build_id_len;		/* 0 = unknown */
	bool is_vdso;

	/* Set once by unw_module_load (acquire/release on `loaded`). */
	int loaded;
	int load_err;
	struct sfp_sframe *table;
	bool own_sframe;		/* table is the ELF's own .sframe */
	uint8_t arch;			/* enum sfp_arch of the object */
	/* For PCs the own .sframe leaves out (gas makes none for the crt's
	 * _start, for instance): the table built from the CFI, once, on the
	 * first miss (acquire/release on fb_loaded). */
	int fb_loaded;
	struct sfp_sframe *fallback;
	struct unw_load loads[UNW_MAX_LOADS];
	size_t num_loads;
	/* The object's bytes, for reading code (trampoline checks). */
	const uint8_t *image;
	size_t image_size;
	bool image_mapped;		/* munmap, else free */
};

struct unw_table_opts {
	const char *cache_dir;
	bool no_cache;
	const char *root_dir;
};

/*
 * Find or create the module of the file id names (common/fileid.h's rule:
 * one module for every mapping of one build-id, whatever its path); takes
 * a reference.  As unw_module_get() otherwise.
 */
SFP_HIDDEN struct unw_module *unw_module_get_id(const struct sfp_file_id *id,
						const void *image, size_t size,
						const char *root_dir, int pid,
						uint64_t start, uint64_t end);

/*
 * Counters of the registry since the process started: tables loaded
 * (one per module: what N processes of one image must not multiply) and
 * files refused because their build-id was not the mapped one's.
 */
struct unw_module_stats {
	uint64_t modules;	/* modules created */
	uint64_t loaded;	/* ... whose load ran (table or not) */
	uint64_t mismatch;	/* files with another build-id, not used */
	uint64_t revived;	/* idle modules taken up again (linger) */
	uint64_t expired;	/* ... let go: their time or the budget */
	uint64_t idle;		/* idle now, and their tables' bytes */
	uint64_t idle_bytes;
};
SFP_HIDDEN void unw_module_stats(struct unw_module_stats *st);

/*
 * Find or create the module for (path, build-id), device and inode not
 * known; takes a reference.
 * For the vDSO, image/size (may be NULL: this process's own vDSO) are its
 * bytes, copied.  pid (> 0) maps it at [start, end): the file is then
 * opened as that process sees it (see elf/buildid.h) unless root_dir
 * is given.
 */
SFP_HIDDEN struct unw_module *unw_module_get(const char *path,
					     const uint8_t *build_id,
					     size_t build_id_len,
					     const void *image, size_t size,
					     const char *root_dir, int pid,
					     uint64_t start, uint64_t end);
SFP_HIDDEN void unw_module_ref(struct unw_module *m);
SFP_HIDDEN void unw_module_put(struct unw_module *m);

/*
 * Keep a module whose last reference is put for up to linger_ns (0: free
 * it at once, the default) while idle modules' tables hold at most
 * max_bytes, oldest let go first.  For the agent on a build host: every
 * compiler process maps libLLVM, and each exit freed a table the next
 * start decoded again (70 times in 30 s, a quarter of a core).  Only
 * modules whose load made a table linger (a failed load is tried again
 * through the next process); a file is its key, so the process that
 * takes one up again maps the same file.
 */
SFP_HIDDEN void unw_module_linger(uint64_t linger_ns, uint64_t max_bytes);

/*
 * Give back the resident pages of every module's file image (the code
 * bytes the walks read to check trampolines and signal frames): a
 * long-lived module otherwise gathers the pages of every PC it was asked
 * about -- 18 MB of libLLVM's text in 40 s beside a compiler loop.  They
 * are clean, read-only file pages, read again when next needed.
 * Return: the bytes of images given back.
 */
SFP_HIDDEN uint64_t unw_module_release_pages(void);

/* Load headers and table (once).  Return: 0 or the load error. */
SFP_HIDDEN int unw_module_load(struct unw_module *m,
			       const struct unw_table_opts *opts);

/*
 * The CFI-built table for a module whose own .sframe is its table, built
 * on the first call.  Return: the table, or NULL (no own .sframe, no CFI).
 */
SFP_HIDDEN const struct sfp_sframe *unw_module_fallback(struct unw_module *m);

/*
 * Tables built off the caller's path (sfprof agent): once turned on,
 * unw_module_load_nowait() and unw_module_fallback() do not build a
 * missing table themselves but queue it for a loader thread and answer
 * "not yet" (-EAGAIN / NULL); the unwinder then steps such frames by
 * their frame pointer, and the next lookup after the build finds the
 * table.  The loader thread takes references, so modules outlive their
 * address spaces while queued.
 */
struct unw_async_stats {
	uint64_t queued;	/* tables given to the loader thread */
	uint64_t built;		/* ... and built (or found to have none) */
	uint64_t pending;	/* waiting now */
	uint64_t not_ready;	/* lookups that met a table still pending */
};

SFP_HIDDEN int unw_module_async_start(void);
/* Stop the loader thread, dropping what is still queued. */
SFP_HIDDEN void unw_module_async_stop(void);
SFP_HIDDEN void unw_module_async_stats(struct unw_async_stats *st);
/* As unw_module_load, or -EAGAIN (queued) when async loading is on. */
SFP_HIDDEN int unw_module_load_nowait(struct unw_module *m,
				      const struct unw_table_opts *opts);
/* Count a lookup that met a pending table. */
SFP_HIDDEN void unw_module_note_not_ready(void);

/* Runtime - link-time address for a mapping at (start, pgoff). */
SFP_HIDDEN int unw_module_bias(const struct unw_module *m, uint64_t start,
			       uint64_t pgoff, uint64_t *bias);

/* Copy code bytes at file offset off.  Return: 0 or -EFAULT. */
SFP_HIDDEN int unw_module_read(const struct unw_module *m, uint64_t off,
			       void *buf, size_t len);

/* This process's vDSO image (from the auxiliary vector). */
SFP_HIDDEN int unw_self_vdso(const void **image, size_t *size);

/*
 * Open the table of an object: its .sframe, else one built from its CFI.
 * Return: 0 and *out; -ENOENT no unwind information; other errors.
 */
SFP_HIDDEN int unw_open_table(const char *path, const void *image,
			      size_t size, const struct unw_table_opts *opts,
			      struct sfp_sframe **out);

/*
 * A table built from the object's CFI even when it has its own .sframe.
 * Return: 0 and *out; -ENOENT no CFI; other errors of the build.
 */
SFP_HIDDEN int unw_open_cfi_table(const char *path, struct sfp_sframe **out);

#endif /* SFP_UNWIND_MODULE_H */
