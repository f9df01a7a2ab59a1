/* SPDX-License-Identifier: MIT */
/*
 * sfprof SFrame library: decode, validate, look up, iterate and encode
 * SFrame sections (versions 1, 2 and 3; AMD64, AArch64 LE/BE, s390x; either
 * byte order).
 *
 * A decoded section is a `struct sfp_sframe`.  Opening validates the whole
 * section (header, sub-section bounds, every FDE and FRE, sortedness) and
 * decodes it into a private, host-order form, so that lookups afterwards
 * never touch the untrusted bytes again and cannot fail with -EBADMSG.
 *
 * Threading: an opened `struct sfp_sframe` is immutable; any number of
 * threads may look up in it concurrently.  Lookups allocate nothing, take no
 * locks and are async-signal-safe.
 *
 * Addresses: every address the API reports or accepts is a virtual address
 * in the address space the section describes (the ELF's link-time addresses,
 * or the section's runtime address if the caller passed that), plus the
 * optional `bias` from the open options.
 */
#ifndef SFPROF_SFRAME_H
#define SFPROF_SFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sfprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --- Format constants (values are those of the on-disk format). --- */

#define SFP_SFRAME_MAGIC 0xdee2

enum sfp_sframe_abi {
	SFP_SFRAME_ABI_AARCH64_BE = 1,
	SFP_SFRAME_ABI_AARCH64_LE = 2,
	SFP_SFRAME_ABI_AMD64_LE = 3,
	SFP_SFRAME_ABI_S390X_BE = 4,
};

/* Header flags. */
#define SFP_SFRAME_F_FDE_SORTED 0x1
#define SFP_SFRAME_F_FRAME_POINTER 0x2 /* v1/v2 only; invalid in v3 */
#define SFP_SFRAME_F_FDE_FUNC_START_PCREL 0x4 /* v2 errata 1 and v3 */

/* How a function's rows map onto PCs. */
enum sfp_sframe_pc_type {
	SFP_SFRAME_PC_INC = 0,  /* rows start at func start + row start */
	SFP_SFRAME_PC_MASK = 1, /* rows repeat every rep_size bytes (PLT) */
};

/* v3 FDE types. */
enum sfp_sframe_fde_type {
	SFP_SFRAME_FDE_DEFAULT = 0,
	SFP_SFRAME_FDE_FLEX = 1,
};

/* DWARF register numbers the rules below refer to, per ABI. */
#define SFP_DWARF_AMD64_FP 6
#define SFP_DWARF_AMD64_SP 7
#define SFP_DWARF_AMD64_RA 16
#define SFP_DWARF_AARCH64_FP 29
#define SFP_DWARF_AARCH64_LR 30
#define SFP_DWARF_AARCH64_SP 31
#define SFP_DWARF_S390X_FP 11
#define SFP_DWARF_S390X_RA 14
#define SFP_DWARF_S390X_SP 15

/* --- Rules. --- */

/*
 * Where a value (CFA, return address or frame pointer) is found.  "base" is
 * the register `reg` for the REG kinds and the CFA for the CFA kinds.
 */
enum sfp_loc_kind {
	SFP_LOC_NONE = 0,	/* no rule: FP keeps its value, RA stays
				   where the ABI keeps it (AArch64: LR) */
	SFP_LOC_CFA_DEREF,	/* value = *(CFA + offset) ("c-16") */
	SFP_LOC_CFA,		/* value = CFA + offset */
	SFP_LOC_REG,		/* value = reg + offset ("sp+16", "r10+0") */
	SFP_LOC_REG_DEREF,	/* value = *(reg + offset) ("(fp-8)") */
	SFP_LOC_UNDEFINED,	/* RA undefined: this is the outermost frame */
	SFP_LOC_NOT_SAVED,	/* s390x padding word: RA not saved ("U") */
};

/* Flags of a location. */
#define SFP_LOC_F_FIXED 0x1	/* offset comes from the header's fixed
				   RA/FP offset, not from the FRE */
#define SFP_LOC_F_PADDING 0x2	/* came from a padding data word (0):
				   s390x "RA not saved", or a v3 flex FDE
				   whose RA has no rule (AMD64: the rule is
				   then the fixed RA offset) */

struct sfp_loc {
	uint8_t kind;		/* enum sfp_loc_kind */
	uint8_t flags;		/* SFP_LOC_F_* */
	uint16_t reg;		/* DWARF register number for REG kinds */
	int32_t offset;
};

/* Row flags. */
#define SFP_ROW_MANGLED_RA 0x1	/* AArch64: RA is PAC-signed */
#define SFP_ROW_RA_UNDEFINED 0x2	/* outermost frame: stop the walk */
#define SFP_ROW_SIGNAL 0x4	/* function is a signal trampoline (v3) */
#define SFP_ROW_FLEX 0x8	/* came from a v3 flexible FDE */
#define SFP_ROW_PCMASK 0x10	/* start/end are offsets in a PLT block */

/*
 * One row of a function: the rules that hold for PCs in [start, end).
 * For PCMASK functions start and end are offsets inside one repeated block.
 */
struct sfp_sframe_row {
	uint64_t start;
	uint64_t end;
	uint32_t func_idx;	/* index of the function (FDE) */
	uint32_t row_idx;	/* index of the row within it */
	uint32_t flags;		/* SFP_ROW_* */
	struct sfp_loc cfa;	/* kind REG or REG_DEREF */
	struct sfp_loc ra;
	struct sfp_loc fp;
};

/* One function (FDE). */
struct sfp_sframe_func {
	uint64_t start;		/* first PC */
	uint32_t size;		/* bytes */
	uint32_t num_rows;
	uint8_t pc_type;	/* enum sfp_sframe_pc_type */
	uint8_t fde_type;	/* enum sfp_sframe_fde_type (v3) */
	uint8_t rep_size;	/* PCMASK block size (v2+) */
	uint8_t pauth_key;	/* AArch64: 0 = A, 1 = B */
	bool signal;		/* v3 signal-frame bit */
};

/* The header, in host order. */
struct sfp_sframe_info {
	uint8_t version;
	uint8_t flags;
	uint8_t abi;		/* enum sfp_sframe_abi */
	int8_t fixed_fp_offset;
	int8_t fixed_ra_offset;
	uint8_t auxhdr_len;
	bool foreign_endian;	/* the bytes were byte-swapped on open */
	uint32_t num_fdes;
	uint32_t num_fres;
	uint32_t fre_len;
	uint64_t section_addr;	/* VMA of the section (before bias) */
	uint64_t bias;
};

/* --- Decoder. --- */

struct sfp_sframe;

struct sfp_sframe_opts {
	size_t sz;
	/* Virtual address of the section's first byte.  Needed for raw blobs;
	 * taken from the ELF section header (or the sfprof container) when
	 * opening a file. */
	uint64_t section_addr;
	/* Added to every address the table reports and subtracted from every
	 * address looked up (a module's load bias). */
	uint64_t bias;
	/* Name used in diagnostics (file name).  Copied. */
	const char *name;
	size_t :0;
};
#define sfp_sframe_opts__last_field name

/*
 * Decode and validate an SFrame section held in memory.  The bytes are
 * copied; the caller may free them after the call.
 *
 * Return: 0 and *out set; -EBADMSG corrupt (the log callback gets the byte
 * offset and what was wrong); -EOPNOTSUPP unknown version or ABI;
 * -EINVAL bad arguments; -ENOMEM.
 */
SFP_API int sfp_sframe__open_mem(const void *data, size_t size,
				 const struct sfp_sframe_opts *opts,
				 struct sfp_sframe **out);

/*
 * Open the SFrame table of a file: an ELF object (section of type
 * SHT_GNU_SFRAME or named .sframe, else the PT_GNU_SFRAME segment), an
 * sfprof table file (see sfp_sframe__write_file) or a raw section blob
 * (opts->section_addr gives its address).
 *
 * Return: as sfp_sframe__open_mem, plus -ENOENT when an ELF file has no
 * SFrame section and -errno for I/O errors.
 */
SFP_API int sfp_sframe__open_file(const char *path,
				  const struct sfp_sframe_opts *opts,
				  struct sfp_sframe **out);

/*
 * Check what decoding tolerates because an unwinder can still use it, but
 * a correct section never has: no bytes at all (a section holds at least
 * its header; one with a header and no FDE is valid), and FDEs whose PC
 * ranges overlap or repeat (a lookup would pick one of them).  Each
 * problem goes to the log callback with the FDE indexes, their address
 * ranges and the FDE's offset in the section (the first 10, then a count).
 *
 * Return: 0 valid; -EBADMSG; -EINVAL sf is NULL.
 */
SFP_API int sfp_sframe__validate(const struct sfp_sframe *sf);

/* Free a table and set *sf to NULL.  Accepts NULL and *sf == NULL. */
SFP_API void sfp_sframe__free(struct sfp_sframe **sf);

SFP_API void sfp_sframe__info(const struct sfp_sframe *sf,
			      struct sfp_sframe_info *info);

SFP_API uint32_t sfp_sframe__num_funcs(const struct sfp_sframe *sf);

/*
 * The bytes the decoded table holds in memory (its functions, rows,
 * distinct rules, lookup index and name), for a caller that budgets the
 * tables it keeps.  0 for NULL.
 */
SFP_API size_t sfp_sframe__mem_bytes(const struct sfp_sframe *sf);

/* Return: 0, or -ENOENT when idx is out of range. */
SFP_API int sfp_sframe__func(const struct sfp_sframe *sf, uint32_t idx,
			     struct sfp_sframe_func *out);

/* Return: 0, or -ENOENT when an index is out of range. */
SFP_API int sfp_sframe__row(const struct sfp_sframe *sf, uint32_t func_idx,
			    uint32_t row_idx, struct sfp_sframe_row *out);

/*
 * Find the row that covers pc.  For a return address look up pc - 1.
 *
 * Return: 0 and *out filled; -ENOENT when no function or no row covers pc.
 * Async-signal-safe.
 */
SFP_API int sfp_sframe__find(const struct sfp_sframe *sf, uint64_t pc,
			     struct sfp_sframe_row *out);

/*
 * Print the section as GNU objdump --sframe of the binutils release that
 * produces this version prints it, starting after the line "Contents of
 * the SFrame section .sframe:" (v1: 2.40; v2 without FUNC_START_PCREL:
 * 2.41-2.44; v2 with it: 2.45; v3: 2.46).  An empty section prints
 * nothing.
 *
 * Return: 0, or -EIO when writing failed.
 */
SFP_API int sfp_sframe__dump(const struct sfp_sframe *sf, FILE *f);

/*
 * Print the section as JSON (schema in docs/sframe-json.md; the input
 * format of `sfprof sframe encode`).
 *
 * Return: 0, or -EIO when writing failed.
 */
SFP_API int sfp_sframe__dump_json(const struct sfp_sframe *sf, FILE *f);

/* --- Encoder. --- */

struct sfp_sframe_builder;

struct sfp_sframe_builder_opts {
	size_t sz;
	uint8_t version;	/* 2 or 3; 0 means 3 */
	uint8_t abi;		/* enum sfp_sframe_abi; 0 means AMD64 */
	/* Fixed offsets written in the header.  Zero means "ABI default":
	 * AMD64 RA at -8, nothing else.  no_fixed_ra forces a 0 RA offset. */
	int8_t fixed_fp_offset;
	int8_t fixed_ra_offset;
	bool no_fixed_ra;	/* write 0 even where the ABI has a default */
	uint64_t section_addr;	/* VMA the section will be loaded at */
	/* SFP_SFRAME_BUILDER_F_*.  64 bits wide so that the struct has no
	 * tail padding (SFP_OPTS() does not zero padding, and the options
	 * check rejects non-zero bytes past the last known field). */
	uint64_t flags;
	size_t :0;
};
#define sfp_sframe_builder_opts__last_field flags

/* Drop a row whose rules and flags equal the previous row's.  Off by
 * default so that decode(encode(x)) == x. */
#define SFP_SFRAME_BUILDER_F_MERGE_ROWS 0x1

/* Return: 0, -EINVAL (bad options or ABI), -EOPNOTSUPP (version other
 * than 2 or 3), -ENOMEM. */
SFP_API int sfp_sframe_builder__new(const struct sfp_sframe_builder_opts *opts,
				    struct sfp_sframe_builder **out);

/*
 * Add one function and its rows (as the decoder reports them; func_idx,
 * row_idx, end and the SIGNAL/FLEX/PCMASK row flags are ignored).  Row
 * starts must increase strictly and stay inside the function (PCMASK: the
 * block); they are absolute PCs when the first equals fn->start (PCINC),
 * else offsets and the first must be 0.  A function with fde_type FLEX
 * stays flexible in version 3; otherwise rows that a default FDE cannot
 * express make it flexible.  Rows are kept as given unless
 * SFP_SFRAME_BUILDER_F_MERGE_ROWS is set.  docs/sframe-encoder.md lists
 * every choice.
 *
 * Return: 0; -EOPNOTSUPP when the rows cannot be expressed in the output
 * version (v2: flexible FDEs, signal frames, RA-undefined rows; v3: more
 * than 65535 rows); -EINVAL for inconsistent input; -E2BIG too many
 * functions; -ENOMEM.  A warning through the log callback names the
 * function, the row and the reason.
 */
SFP_API int sfp_sframe_builder__add_func(struct sfp_sframe_builder *b,
					 const struct sfp_sframe_func *fn,
					 const struct sfp_sframe_row *rows,
					 size_t num_rows);

/*
 * Write the section: FDEs sorted by start address, SORTED and
 * FUNC_START_PCREL set, the smallest FRE start-address and data-word sizes,
 * in the ABI's byte order.  *buf is malloc'd and owned by the caller.  The
 * builder stays usable (more functions may be added and written again).
 *
 * Return: 0; -EOPNOTSUPP a v2 start address is more than 2 GiB from its
 * FDE; -E2BIG the counts or sizes overflow the header; -EINVAL; -ENOMEM.
 */
SFP_API int sfp_sframe_builder__write(struct sfp_sframe_builder *b,
				      void **buf, size_t *size);

SFP_API void sfp_sframe_builder__free(struct sfp_sframe_builder **b);

/*
 * sfprof table files: a small container around a raw section that records
 * the address it describes (and, when known, the build-id of the ELF it was
 * made from), so that it can be dumped and used without the ELF.  Layout in
 * docs/sframe-file.md.  sfp_sframe__open_file() reads them.
 */
struct sfp_sframe_file_opts {
	size_t sz;
	uint64_t section_addr;
	const uint8_t *build_id;
	size_t build_id_len;	/* at most 64 */
	size_t :0;
};
#define sfp_sframe_file_opts__last_field build_id_len

SFP_API int sfp_sframe__write_file(const char *path, const void *section,
				   size_t size,
				   const struct sfp_sframe_file_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* SFPROF_SFRAME_H */
