/* SPDX-License-Identifier: MIT */
/*
 * sfprof symbolizer: addresses to function names, source lines and
 * inlined frames.
 *
 * One `struct sfp_symbolizer` loads each DSO's symbols once (cached by
 * path and build-id) and answers lookups by binary search.  A DSO's
 * function symbols come, as perf picks them, from the first of:
 *  - the .symtab of a separate debug file, found by build-id
 *    (DIR/.build-id/xx/rest.debug) or .gnu_debuglink (next to the file,
 *    in .debug/, and DIR/<dir>/) for every DIR in opts->debug_dirs;
 *  - the file's own .symtab;
 *  - its .dynsym plus MiniDebugInfo (.gnu_debugdata, xz-compressed ELF);
 *  (a debug file neither on disk nor in the file itself may be fetched
 *  by build-id from debuginfod servers: opts->debuginfod);
 * plus synthetic `func@plt` entries for its PLT stubs (x86-64).  Kernel
 * addresses use /proc/kallsyms (+ /proc/modules for module ends), JIT code
 * /tmp/perf-PID.map.  Names are demangled (C++ and Rust, via libiberty)
 * unless opts say not to.  Aliases at one address resolve like perf's
 * (see docs/symbols.md).
 *
 * Addresses given to the DSO calls are link-time virtual addresses (as
 * in the ELF's symbol table); sfp_symbolizer_dso__vaddr() turns a runtime
 * address inside a mapping (start, pgoff) into one.
 *
 * All strings handed out (names, paths) are owned by the symbolizer and
 * stay valid until sfp_symbolizer__free().  A symbolizer is not
 * thread-safe: use one per thread or lock around it.
 */
#ifndef SFPROF_SYMBOLS_H
#define SFPROF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sfprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sfp_symbolizer;
struct sfp_symbolizer_dso;

/*
 * Fields are laid out so that the struct ends without padding: SFP_OPTS()
 * initialises members only, and the library refuses unknown non-zero
 * bytes past the last field it knows, so tail padding full of stack
 * garbage (clang leaves it) would be rejected.  Keep it so when appending.
 */
struct sfp_symbolizer_opts {
	size_t sz;
	/*
	 * Directories searched for separate debug files (and, by build-id,
	 * for DSOs whose path does not lead to them), NULL-terminated.
	 * NULL: { "/usr/lib/debug", "$HOME/.debug" (perf's build-id cache) }.
	 */
	const char *const *debug_dirs;
	/* Kernel symbol file; NULL: "/proc/kallsyms". */
	const char *kallsyms_path;
	/* Kernel module list; NULL: "/proc/modules". */
	const char *modules_path;
	/* Directory of perf-PID.map files; NULL: "/tmp". */
	const char *perf_map_dir;
	/*
	 * Default target process: DSO paths are first looked up under
	 * /proc/PID/root (its mount namespace).  0: paths are ours.
	 */
	int pid;
	/* Keep raw (mangled) names in sfp_symbol.name. */
	bool no_demangle;
	/* Fill sfp_symbol.file/.line from DWARF (costs a line-table lookup). */
	bool srclines;
	/*
	 * Demangle without parameter lists, as perf does unless -v
	 * ("ns::Widget::frob" rather than "ns::Widget::frob(int) const").
	 */
	bool demangle_no_params;
	/*
	 * Do not look for separate debug files: symbols from the file's own
	 * tables and MiniDebugInfo only, no DWARF from elsewhere (faster).
	 */
	bool no_debug_files;
	/*
	 * Fetch missing debug files by build-id from debuginfod servers
	 * (libdebuginfod, loaded at first use; $DEBUGINFOD_URLS, its cache
	 * $DEBUGINFOD_CACHE_PATH and $DEBUGINFOD_TIMEOUT): a DSO with no
	 * DWARF of its own and no local debug file is looked up.  One
	 * of SFP_DEBUGINFOD_*; the default, AUTO, is on when
	 * $DEBUGINFOD_URLS is set, as in elfutils' tools.
	 */
	int debuginfod;
	/*
	 * Time all debuginfod lookups of this symbolizer may take
	 * together, in ms (0: 30000).  A lookup still running then is cut
	 * off; the first failure other than "not found" (server down,
	 * budget spent) logs one warning and stops all further lookups.
	 */
	uint32_t debuginfod_timeout_ms;
	/*
	 * sfprof's cache directory (default $SFPROF_CACHE_DIR, else
	 * $XDG_CACHE_HOME/sfprof, else ~/.cache/sfprof).  Compressed DWARF
	 * (Debian's debug files) is kept decompressed in its "dwarf"
	 * subdirectory, by build-id, so that later runs need not inflate it
	 * again; cache_budget bytes at most for all of it (0: 1 GiB), the
	 * least recently used going first.  no_cache: neither read nor
	 * write it.
	 */
	bool no_cache;
	const char *cache_dir;
	uint64_t cache_budget;
	/* SFP_SYMBOLIZER_* flags below */
	uint64_t flags;
	size_t :0;
};
#define sfp_symbolizer_opts__last_field flags

/*
 * For profiles taken on other hosts (sfprof symbolize): when a file is
 * found neither at its path nor as a copy by build-id, its separate debug
 * file (the debug directories, then debuginfod) is used in its place -- a
 * debug file keeps the program headers and the symbol table, which is all
 * naming needs.
 */
#define SFP_SYMBOLIZER_DEBUG_AS_CODE	(1ull << 0)
/*
 * For long-running callers whose lookups are few (the agent): once a
 * table is made, the pages of the files it was made from are given
 * back, as sfp_symbolizer__release_pages() does for all of them.  Made
 * from libLLVM's relocations and dynamic symbols, a table left 12 MB of
 * them resident; lookups fault in the few they read.
 */
#define SFP_SYMBOLIZER_RELEASE_PAGES	(1ull << 1)

/* sfp_symbolizer_opts.debuginfod */
enum {
	SFP_DEBUGINFOD_AUTO = 0,	/* on when $DEBUGINFOD_URLS is set */
	SFP_DEBUGINFOD_ON = 1,		/* on (a warning if no URLs) */
	SFP_DEBUGINFOD_OFF = 2,
};

/* sfp_symbol.flags */
enum {
	SFP_SYM_GLOBAL	= 1u << 0,	/* STB_GLOBAL (or exported kernel 'T') */
	SFP_SYM_WEAK	= 1u << 1,	/* STB_WEAK */
	SFP_SYM_PLT	= 1u << 2,	/* synthetic func@plt entry */
	SFP_SYM_KERNEL	= 1u << 3,	/* from kallsyms */
	SFP_SYM_JIT	= 1u << 4,	/* from a perf-PID.map file */
	SFP_SYM_SIZE_GUESSED = 1u << 5,	/* size 0 in the table: up to next */
};

struct sfp_symbol {
	const char *name;	/* demangled (unless opts->no_demangle) */
	const char *raw_name;	/* as in the symbol table */
	uint64_t start;		/* link-time (kernel: runtime) address */
	uint64_t size;
	uint64_t offset;	/* looked-up address - start */
	const char *dso;	/* path as given, "[kernel.kallsyms]", "[mod]",
				 * or the perf map file */
	const char *file;	/* source file (opts->srclines), else NULL */
	unsigned int line;	/* source line, 0 unknown */
	uint32_t flags;		/* SFP_SYM_* */
};

/* One frame of an inline chain (see sfp_symbolizer_dso__inlines()). */
struct sfp_inline_frame {
	const char *name;	/* function (demangled), NULL if unknown */
	const char *file;	/* source file, NULL if unknown */
	unsigned int line;
	unsigned int column;
	bool inlined;		/* this frame was inlined into the next one */
};

/**
 * sfp_symbolizer__new() - create a symbolizer.
 * @opts: options, or NULL for defaults.
 * @out: receives the symbolizer.
 *
 * Return: 0; -EINVAL bad opts; -ENOMEM.
 */
SFP_API int sfp_symbolizer__new(const struct sfp_symbolizer_opts *opts,
				struct sfp_symbolizer **out);

/* Free everything (all strings handed out die); NULLs *s.  NULL is fine. */
SFP_API void sfp_symbolizer__free(struct sfp_symbolizer **s);

/**
 * sfp_symbolizer__get_dso() - find or load a DSO.
 * @s: symbolizer.
 * @pid: target process whose mount namespace holds @path (its
 *       /proc/PID/root is tried first); 0: opts->pid; -1: none.
 * @path: the file as the target sees it (e.g. a perf MMAP2 filename).
 *        "[vdso]" is our own vDSO image (the same kernel maps the same
 *        one into every process), checked against @build_id if given.
 * @build_id: expected build-id, or NULL.  When given, a file whose
 *            build-id differs is not used; the DSO is then looked up by
 *            build-id in the debug directories (.build-id/xx/rest).
 * @build_id_len: its length.
 * @out: receives a handle owned by @s (valid until sfp_symbolizer__free()).
 *
 * Loading happens once per (path, build-id); failures are cached too.
 * Return: 0; -ENOENT file not found (or build-id mismatch and no other
 * copy); -ENOEXEC not ELF; -EBADMSG corrupt; -ENOMEM.
 */
SFP_API int sfp_symbolizer__get_dso(struct sfp_symbolizer *s, int pid,
				    const char *path, const uint8_t *build_id,
				    size_t build_id_len,
				    struct sfp_symbolizer_dso **out);

/**
 * sfp_symbolizer_dso__find() - the symbol covering a link-time address.
 * Return: 0; -ENOENT no symbol covers @vaddr.
 */
SFP_API int sfp_symbolizer_dso__find(struct sfp_symbolizer_dso *dso,
				     uint64_t vaddr, struct sfp_symbol *out);

/**
 * sfp_symbolizer_dso__vaddr() - runtime address to link-time address.
 * @dso: the DSO mapped at @map_start with file offset @map_pgoff (what
 *       perf MMAP2 records and /proc/PID/maps give).
 * @addr: runtime address inside that mapping.
 * @vaddr: receives the address in the ELF's own terms, through the PT_LOAD
 *         segment that holds file offset addr - map_start + map_pgoff.
 *
 * Return: 0; -ENOENT the offset is in no PT_LOAD segment.
 */
SFP_API int sfp_symbolizer_dso__vaddr(struct sfp_symbolizer_dso *dso,
				      uint64_t map_start, uint64_t map_pgoff,
				      uint64_t addr, uint64_t *vaddr);

/**
 * sfp_symbolizer_dso__inlines() - source location and inline chain.
 * @frames: receives up to @max frames, innermost first: frames[0] is the
 *          code at @vaddr (file:line from the line table); each frame with
 *          .inlined set was inlined into frames[i + 1], whose file:line is
 *          the call site.  The last frame is the real (out-of-line)
 *          function.
 *
 * Return: number of frames (may exceed @max: the chain is truncated);
 * -ENOENT no DWARF covers @vaddr (no debug info); -EBADMSG bad DWARF.
 */
SFP_API int sfp_symbolizer_dso__inlines(struct sfp_symbolizer_dso *dso,
					uint64_t vaddr,
					struct sfp_inline_frame *frames,
					size_t max);

/* The path the DSO's code was read from (after container/build-id
 * resolution), and the one its symbols came from (maybe a debug file). */
SFP_API const char *sfp_symbolizer_dso__path(const struct sfp_symbolizer_dso *dso);
SFP_API const char *sfp_symbolizer_dso__debug_path(const struct sfp_symbolizer_dso *dso);
/* Number of function symbols loaded (after merging aliases). */
SFP_API size_t sfp_symbolizer_dso__num_symbols(const struct sfp_symbolizer_dso *dso);

/*
 * Symbol tables @s has made or read from its cache since it was created:
 * one per file, however many paths, processes and containers map it (a
 * file is its build-id: common/fileid.h).  For counters and tests.
 */
SFP_API uint64_t sfp_symbolizer__tables_loaded(const struct sfp_symbolizer *s);

/*
 * Give back the pages of the files @s reads that are resident in this
 * process: the symbol, string and relocation sections a table was made
 * from stay mapped after it is made (12 MB of libLLVM's), and so do
 * tables read from the symbol cache and the kernel's symbol index (a
 * mapped kallsyms copy and its cached line index).  They are clean pages of the page
 * cache, read again on the next lookup that needs them; no handle,
 * symbol or name is invalidated.  For long-running callers between
 * batches of lookups (the agent, once a window is delivered).
 *
 * Return: the bytes of mappings given back (not all of them were
 * resident).
 */
SFP_API size_t sfp_symbolizer__release_pages(struct sfp_symbolizer *s);

/*
 * DSOs that get_dso() left without a file because the only files found
 * at their path (in the target process's root or map_files, or on our
 * side) had another build-id than the one given, and no copy with the
 * given one was found (build-id cache, debug directories): a rebuilt or
 * upgraded file, or another container's file at the same path.  Their
 * frames stay unnamed; callers say how many.
 */
SFP_API uint64_t sfp_symbolizer__mismatched(const struct sfp_symbolizer *s);

/*
 * Let go of what the symbolizer keeps for processes that are gone (pids
 * of n of them): their DSO entries that hold no table of their own (the
 * ones sharing another process's table, by build-id, and failed
 * look-ups) and their perf maps and jitdumps.  Tables of their own stay:
 * other processes' entries may share them, and the caller's byte budget
 * bounds them.  Without this a long-running caller keeps an entry per
 * DSO of every process it ever symbolized.  Handles that get_dso() gave
 * for those pids, and symbols from their perf maps, are invalid after.
 *
 * Return: how many entries and maps were let go.
 */
SFP_API size_t sfp_symbolizer__forget_pids(struct sfp_symbolizer *s,
					   const int *pids, size_t n);

/**
 * sfp_symbolizer__dso() - get_dso() with @pid 0 and find() in one call.
 * Return: as those two.
 */
SFP_API int sfp_symbolizer__dso(struct sfp_symbolizer *s, const char *path,
				const uint8_t *build_id, size_t build_id_len,
				uint64_t vaddr, struct sfp_symbol *out);

/**
 * sfp_symbolizer__kernel() - a kernel (or module) text address.
 *
 * kallsyms is read on first use; symbol sizes run to the next symbol
 * (module symbols stop at the module's end when /proc/modules says it).
 * Return: 0; -ENOENT no symbol covers @addr, or kallsyms unreadable or all
 * addresses zero (kptr_restrict).
 */
SFP_API int sfp_symbolizer__kernel(struct sfp_symbolizer *s, uint64_t addr,
				   struct sfp_symbol *out);

/**
 * sfp_symbolizer__jit() - an address in JIT code of process @pid, from
 * PERF_MAP_DIR/perf-PID.map ("START SIZE name" lines, hex), or for a
 * process in a container /proc/PID/root/PERF_MAP_DIR/perf-NSPID.map (its
 * pid in its own namespace).  The file is read again when it has grown
 * since the last read.
 * Return: 0; -ENOENT no map file or no entry covers @addr.
 */
SFP_API int sfp_symbolizer__jit(struct sfp_symbolizer *s, int pid,
				uint64_t addr, struct sfp_symbol *out);

/**
 * sfp_demangle() - demangle a C++ (Itanium) or Rust symbol name.
 * Return: a malloc()ed string the caller frees, or NULL when @name is not
 * a mangled name (or out of memory).
 */
SFP_API char *sfp_demangle(const char *name);

/* sfp_demangle() without parameter lists (what perf shows by default). */
SFP_API char *sfp_demangle_no_params(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* SFPROF_SYMBOLS_H */
