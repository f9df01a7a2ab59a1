/* SPDX-License-Identifier: MIT */
/*
 * The symbolizer object and its per-DSO state, shared by the files of
 * src/symbols/ (symbolizer.c: cache and DSO loading; debugfile.c: where
 * debug files live; dwarf.c: lines and inlines; kernel.c: kallsyms and
 * perf maps).
 */
#ifndef SFP_SYMBOLS_INTERNAL_H
#define SFP_SYMBOLS_INTERNAL_H

#include <sys/types.h>

#include "common/htab.h"
#include "symbols/symtab.h"

struct sfp_elf;
struct Dwarf;

#define SFP_BUILD_ID_MAX 64

struct sfp_symbolizer_dso {
	struct sfp_symbolizer *s;
	/* Key: the caller's path, the pid whose root it is in, build-id. */
	char *key;
	int key_pid;
	uint32_t key_hash;		/* for the index's rebuild */
	uint8_t build_id[SFP_BUILD_ID_MAX];
	size_t build_id_len;
	int err;			/* cached load failure, 0 when loaded */
	/* The loaded file's own build-id (for sharing across paths). */
	uint8_t file_id[SFP_BUILD_ID_MAX];
	size_t file_id_len;
	/* Another entry holding the same file (same build-id) or NULL. */
	struct sfp_symbolizer_dso *same;

	char *path;			/* file opened for code and headers */
	char root[32];			/* "/proc/PID/root" it came through, or "" */
	char *debug_path;		/* separate debug file or NULL */
	struct sfp_elf *elf;
	struct sfp_elf *debug;
	struct sfp_elf *mini;		/* MiniDebugInfo */
	struct sfp_symtab tab;
	struct sfp_dwarf *dw;		/* NULL: not tried yet */
	bool dw_tried;
	/* The PT_LOAD headers of elf, read when it is loaded (libelf's
	 * gelf_getphdr() per header per address translation was 5 % of a
	 * system-wide script) */
	struct sfp_load_seg {
		uint64_t vaddr, offset, filesz, memsz;
	} *segs;
	size_t nsegs;
	bool segs_lost;			/* offsets_lost() */
	uint64_t segs_base;
};

struct sfp_jitmap {
	struct sfp_jitmap *next;
	int pid;
	off_t size;			/* file size when read */
	bool missing;
	bool dump;			/* a jitdump, not a perf map */
	char *path;
	struct sfp_symtab tab;
};

/* Where decompressed DWARF images are kept between runs (dwarf-cache.c). */
struct sfp_dwarf_cache {
	char *dir;		/* NULL: no cache */
	uint64_t budget;	/* bytes for all entries; 0: 1 GiB */
};

struct sfp_symbolizer {
	char **debug_dirs;		/* NULL-terminated, owned */
	int pid;
	bool no_demangle;
	bool demangle_no_params;
	bool no_debug_files;
	bool debug_file_as_code;	/* opts: a debug file stands in */
	bool release_pages;		/* opts: SFP_SYMBOLIZER_RELEASE_PAGES */
	uint64_t debug_as_code;		/* DSOs opened that way */
	bool srclines;
	struct sfp_debuginfod *debuginfod;	/* NULL: not used */
	char *kallsyms_path;
	char *modules_path;
	char *perf_map_dir;
	struct sfp_dwarf_cache dwarf_cache;
	char *ksyms_cache_dir;		/* NULL: no cache */
	char *symtab_cache_dir;		/* NULL: no cache */
	uint64_t symtab_cache_budget;	/* 0: 256 MiB */

	/* Every entry, and an index of them by key (rebuilt when
	 * forget_pids() removes some: sfp_htab has no delete). */
	struct sfp_symbolizer_dso **dsos;
	size_t ndsos, dsos_cap;
	struct sfp_htab dso_index;
	/* The loaded entries (not errors, not "same") by their file's own
	 * build-id: a new path or process finds its file's tables at once,
	 * not by a scan of every entry (an agent keys libc once per pid).
	 * Of entries of one build-id the index has the last loaded. */
	struct sfp_symbolizer_dso **owners;
	size_t nowners, owners_cap;
	struct sfp_htab owner_index;
	/* Symbol tables built or read from the cache: one per file, however
	 * many paths and processes map it (counted for the tests). */
	uint64_t tables_loaded;
	/* DSOs left without a file because every file found at their path
	 * (the target's root and map_files, ours) had another build-id
	 * than the one asked for, and no copy by build-id was found. */
	uint64_t mismatched;

	bool kernel_tried;
	int kernel_err;
	struct sfp_symtab kernel;
	struct sfp_kallsyms_index *kidx;	/* instead of kernel, lazily */

	struct sfp_jitmap *jit;
	struct sfp_strpool pool;	/* interned demangled names etc. */
};

/* Demangle as the options say; NULL: keep the raw name. */
SFP_HIDDEN char *sfp_symbolizer_demangle(const struct sfp_symbolizer *s,
					 const char *raw);

/* Resolve the symbol's display name (demangling once) and fill out. */
SFP_HIDDEN void sfp_symbolizer_fill(struct sfp_symbolizer *s,
				    struct sfp_symtab *t, struct sfp_sym *sym,
				    uint64_t addr, const char *dso,
				    struct sfp_symbol *out);

/*
 * Find the separate debug file of elf, opened from path (maybe through
 * root, "/proc/PID/root" of a container, or "") and known to the target
 * as logical: by build-id in the debug dirs, then by .gnu_debuglink.
 * Debug dirs are tried on our side, then inside root.
 * Return: 0 with *out and *out_path (malloc()ed); -ENOENT none.
 */
SFP_HIDDEN int sfp_debugfile_find(struct sfp_symbolizer *s,
				  struct sfp_elf *elf, const char *path,
				  const char *logical, const char *root,
				  struct sfp_elf **out, char **out_path);

/*
 * A file whose build-id is id, through DIR/.build-id/xx/rest (the link
 * to the binary) or, failing that, rest.debug; DIR on our side, then
 * inside root ("" none).  Return: 0; -ENOENT.
 */
SFP_HIDDEN int sfp_debugfile_by_build_id(struct sfp_symbolizer *s,
					 const char *root, const uint8_t *id,
					 size_t len, bool debug_only,
					 struct sfp_elf **out, char **out_path);

/*
 * debuginfod (debuginfod.c): the client for mode SFP_DEBUGINFOD_*, with
 * a total time budget (0: the default); *out stays NULL when lookups
 * are off.  Return: 0; -EINVAL bad mode; -ENOMEM.
 */
struct sfp_debuginfod;
SFP_HIDDEN int sfp_debuginfod_new(int mode, uint32_t budget_ms,
				  struct sfp_debuginfod **out);
SFP_HIDDEN void sfp_debuginfod_free(struct sfp_debuginfod **d);
/*
 * The debug file of build-id id from the servers (or the client's
 * cache), checked to carry that build-id.  d may be NULL.  Server
 * failures are reported once and end all lookups of d.
 * Return: 0 with *out and *out_path (malloc()ed); -ENOENT none.
 */
SFP_HIDDEN int sfp_debuginfod_find_debuginfo(struct sfp_debuginfod *d,
					     const uint8_t *id, size_t len,
					     struct sfp_elf **out,
					     char **out_path);

/* DWARF of a DSO (from libdw); cache may be NULL. */
struct sfp_dwarf;
SFP_HIDDEN int sfp_dwarf_open(struct sfp_elf *e,
			      const struct sfp_dwarf_cache *cache,
			      struct sfp_dwarf **out);
SFP_HIDDEN void sfp_dwarf_free(struct sfp_dwarf **dw);
/*
 * The file's DWARF sections decompressed into a minimal ELF image for
 * elf_memory() (dwarf-image.c).  Return: 0 and a malloc()ed image;
 * -ENOENT nothing gained or a layout it leaves to libdw (open the file as
 * it is); -EBADMSG bad compressed data; -ENOMEM.
 */
SFP_HIDDEN int sfp_dwarf_image(struct sfp_elf *e, void **image, size_t *size);
/*
 * The cached image of e's DWARF and the extra bytes stored with it (CRC
 * checked, otherwise untrusted; NULL if none): 0 and a private mapping
 * of both (free with sfp_dwarf_cache_unmap()); -ENOENT none or no cache;
 * -EBADMSG a stale or damaged entry (removed); -errno.
 */
SFP_HIDDEN int sfp_dwarf_cache_load(const struct sfp_dwarf_cache *c,
				    struct sfp_elf *e, void **image,
				    size_t *size, const void **extra,
				    size_t *extra_size);
SFP_HIDDEN void sfp_dwarf_cache_unmap(void *image, size_t size,
				      size_t extra_size);
/* Keep e's image (and extra) for later runs; failures only logged. */
SFP_HIDDEN void sfp_dwarf_cache_store(const struct sfp_dwarf_cache *c,
				      struct sfp_elf *e, const void *image,
				      size_t size, const void *extra,
				      size_t extra_size);
/*
 * d's finished symbol table from the cache into d->tab (empty), for d's
 * code file and debug file as opened: 0; -ENOENT none or no cache;
 * -EBADMSG a stale, damaged or unfit entry; -errno.
 */
SFP_HIDDEN int sfp_symtab_cache_load(const struct sfp_symbolizer *s,
				     struct sfp_symbolizer_dso *d);
/* Keep d's finished table for later runs; failures only logged. */
SFP_HIDDEN void sfp_symtab_cache_store(const struct sfp_symbolizer *s,
				       const struct sfp_symbolizer_dso *d);
/* (bfd-name.c) addr2line's names of frames[0..n) at vaddr (dwarf.c). */
SFP_HIDDEN void sfp_dwarf_a2l_names(struct sfp_dwarf *d, uint64_t vaddr,
				    struct sfp_inline_frame *frames, size_t n,
				    const char *(*bfd_name)(void *, uint64_t,
							    uint64_t *),
				    void *arg);
SFP_HIDDEN int sfp_dwarf_inlines(struct sfp_symbolizer *s,
				 struct sfp_dwarf *dw, uint64_t vaddr,
				 struct sfp_inline_frame *frames, size_t max);

#endif /* SFP_SYMBOLS_INTERNAL_H */
