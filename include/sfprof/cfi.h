/* SPDX-License-Identifier: MIT */
/*
 * sfprof: SFrame tables for every ELF object, built from its DWARF CFI.
 *
 * sfp_sframe__build_from_elf() converts an object's .eh_frame (else its
 * .debug_frame, also from a separate debug file) into an SFrame section the
 * way GNU as --gsframe would have: SP/FP-based CFA rows, AMD64 RA at CFA-8,
 * FP saved at CFA+offset; what v2 cannot express is skipped with a counted
 * reason, or emitted as a v3 flexible FDE (DRAP, register-held RA/FP).  PLT
 * stubs get PCMASK FDEs like ld makes them.
 *
 * sfp_sframe__open_elf_table() is what an unwinder wants: the object's own
 * .sframe when it has one, else the built table, kept in an on-disk cache
 * keyed by build-id.
 *
 * Addresses in every table are the ELF's link-time virtual addresses.
 * Supported: x86-64 (AMD64) objects.
 */
#ifndef SFPROF_CFI_H
#define SFPROF_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sfprof/common.h>
#include <sfprof/sframe.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Why an FDE of the CFI did not become an SFrame FDE. */
enum sfp_cfi_skip {
	SFP_CFI_SKIP_BAD_CFI = 0,	/* malformed CIE/FDE or instructions */
	SFP_CFI_SKIP_UNKNOWN_OP,	/* an opcode we cannot decode */
	SFP_CFI_SKIP_TOO_BIG,		/* caps: rows, state depth, size */
	SFP_CFI_SKIP_EMPTY,		/* zero-length FDE */
	SFP_CFI_SKIP_OUTSIDE_TEXT,	/* range not in executable code */
	SFP_CFI_SKIP_OVERLAP,		/* overlaps an FDE already taken */
	SFP_CFI_SKIP_PLT,		/* replaced by ld-style PLT FDEs */
	SFP_CFI_SKIP_RA_COLUMN,		/* non-default return column */
	SFP_CFI_SKIP_CFA_REG,		/* CFA not SP/FP based (v2) */
	SFP_CFI_SKIP_CFA_EXPR,		/* CFA expression (not DRAP / v2) */
	SFP_CFI_SKIP_CFA_OFFSET,	/* CFA offset outside int32 */
	SFP_CFI_SKIP_CFA_UNDEF,		/* no CFA rule */
	SFP_CFI_SKIP_RA_RULE,		/* RA not at CFA-8 (v2) or not
					   expressible */
	SFP_CFI_SKIP_FP_RULE,		/* FP rule not expressible */
	SFP_CFI_SKIP_SP_RULE,		/* a rule for SP */
	SFP_CFI_SKIP_SIGNAL,		/* signal frame not expressible */
	SFP_CFI_SKIP_ARCH,		/* AArch64 window/PAuth op etc. */
	SFP_CFI_SKIP_ENCODER,		/* the SFrame encoder refused it */
	SFP_CFI_SKIP__COUNT,
};

/* "cfa-expression" etc.; never NULL. */
SFP_API const char *sfp_cfi_skip__str(enum sfp_cfi_skip reason);

struct sfp_build_opts {
	size_t sz;
	uint8_t version;	/* SFrame version: 2 or 3; 0 means 3 */
	bool no_plt;		/* do not add PLT FDEs */
	bool no_debug_frame;	/* never fall back to .debug_frame */
	/* Where separate debug files live (default /usr/lib/debug). */
	const char *debug_dir;
	/* Also the Go functions no CFI describes, from the SP deltas of the
	 * ELF's Go function table (.gopclntab).  Off by default: the
	 * unwinder's tables leave Go code to frame pointers for now
	 * (docs/cfi.md "Go code"). */
	bool go_pclntab;
	size_t :0;
};
#define sfp_build_opts__last_field go_pclntab

#define SFP_CFI_SRC_EH_FRAME 0x1
#define SFP_CFI_SRC_DEBUG_FRAME 0x2
#define SFP_CFI_SRC_DEBUG_FILE 0x4	/* .debug_frame of a separate file */
#define SFP_CFI_SRC_GOPCLNTAB 0x8	/* Go's function table: SP deltas */

struct sfp_build_stats {
	size_t sz;
	uint32_t fdes;		/* FDEs read from the CFI */
	uint32_t emitted;	/* SFrame FDEs made from CFI FDEs */
	uint32_t flex;		/* of these, v3 flexible FDEs */
	uint32_t plt_fdes;	/* PLT FDEs added */
	uint32_t rows;		/* FREs written */
	uint32_t skipped[SFP_CFI_SKIP__COUNT];	/* by reason */
	uint32_t sources;	/* SFP_CFI_SRC_* used */
	uint64_t text_bytes;	/* bytes of executable sections */
	uint64_t fde_bytes;	/* bytes the CFI's FDEs describe */
	uint64_t covered_bytes;	/* bytes the SFrame FDEs describe */
	/* Go functions without CFI (SFP_CFI_SRC_GOPCLNTAB): FDEs made from
	 * their SP deltas (outermost ones included), and those left to
	 * frame pointers (stack switchers; damaged records). */
	uint32_t go_fdes;
	uint32_t go_left;
	size_t :0;
};
#define sfp_build_stats__last_field go_left

/*
 * Build an SFrame section from the DWARF CFI of the ELF file at path.
 * *section (malloc'd, caller frees) is placed at *section_addr, the
 * address just past the object's highest loaded byte, rounded to 8, which
 * is also where --add-section style tools would put it; FDE addresses are
 * PC-relative to it.  stats may be NULL; set stats->sz first.
 *
 * Return: 0; -ENOENT no CFI at all; -EOPNOTSUPP not x86-64 or bad version;
 * -EBADMSG the ELF is corrupt; -errno I/O; -ENOMEM.
 */
SFP_API int sfp_sframe__build_from_elf(const char *path,
				       const struct sfp_build_opts *opts,
				       void **section, size_t *size,
				       uint64_t *section_addr,
				       struct sfp_build_stats *stats);

/* As sfp_sframe__build_from_elf() on an ELF image in memory (copied). */
SFP_API int sfp_sframe__build_from_elf_mem(const void *image, size_t size,
					   const char *name,
					   const struct sfp_build_opts *opts,
					   void **section, size_t *sec_size,
					   uint64_t *section_addr,
					   struct sfp_build_stats *stats);

/*
 * Build as sfp_sframe__build_from_elf() and write the result to out as an
 * sfprof table file (see sfp_sframe__write_file) that records the section
 * address and the ELF's build-id, so `sfprof sframe dump out` shows the
 * functions at their ELF addresses.
 *
 * Return: as sfp_sframe__build_from_elf(), plus -errno from writing.
 */
SFP_API int sfp_sframe__build_table_file(const char *elf_path,
					 const char *out_path,
					 const struct sfp_build_opts *opts,
					 struct sfp_build_stats *stats);

struct sfp_table_opts {
	size_t sz;
	/* Cache directory; default $SFPROF_CACHE_DIR, else
	 * $XDG_CACHE_HOME/sfprof, else ~/.cache/sfprof. */
	const char *cache_dir;
	bool no_cache;		/* neither read nor write the cache */
	uint8_t version;	/* of built tables: 2 or 3; 0 means 3 */
	size_t :0;
};
#define sfp_table_opts__last_field version

/*
 * The SFrame table an unwinder should use for the ELF at path: its own
 * .sframe section when present (and decodable), else one built from CFI
 * (through the cache).  Addresses are the ELF's link-time addresses.
 *
 * Return: 0 and *out; -ENOENT neither .sframe nor CFI; other errors as
 * sfp_sframe__build_from_elf() and sfp_sframe__open_mem().
 */
SFP_API int sfp_sframe__open_elf_table(const char *path,
				       const struct sfp_table_opts *opts,
				       struct sfp_sframe **out);

/* The same for an ELF image in memory (the vDSO); name for messages. */
SFP_API int sfp_sframe__open_elf_table_mem(const void *image, size_t size,
					   const char *name,
					   const struct sfp_table_opts *opts,
					   struct sfp_sframe **out);

/* --- The cache. --- */

/*
 * The cache directory the options select (see sfp_table_opts), copied to
 * buf.  Return: 0, -ENAMETOOLONG, -ENOENT (no HOME).
 */
SFP_API int sfp_sframe_cache__dir(const struct sfp_table_opts *opts,
				  char *buf, size_t size);

struct sfp_sframe_cache_entry {
	const char *file;	/* file name in the cache directory */
	uint64_t size;		/* bytes */
	int64_t mtime;		/* seconds since the epoch */
	bool valid;		/* checksum and decoding OK */
};

typedef int (*sfp_sframe_cache_fn)(const struct sfp_sframe_cache_entry *e,
				   void *ctx);

/*
 * Call fn for each table in the cache (a non-zero return stops and is
 * returned).  Return: 0, -ENOENT no cache directory, -errno.
 */
SFP_API int sfp_sframe_cache__list(const struct sfp_table_opts *opts,
				   sfp_sframe_cache_fn fn, void *ctx);

/* Remove every table from the cache.  Return: number removed or -errno. */
SFP_API int sfp_sframe_cache__clear(const struct sfp_table_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* SFPROF_CFI_H */
