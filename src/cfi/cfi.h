/* SPDX-License-Identifier: MIT */
/*
 * DWARF call-frame information: parser (.eh_frame, .debug_frame,
 * .eh_frame_hdr) and the CFA-row interpreter.  Internal to libsfprof.
 *
 * Everything reads untrusted bytes through src/common/cursor.h.  CIEs and
 * FDEs point into the caller's section buffer, which must outlive them.
 * Counts are capped (CFI_MAX_*) so hostile input cannot make us loop or
 * allocate without bound.
 */
#ifndef SFP_CFI_H
#define SFP_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

/* Caps on hostile input. */
#define CFI_MAX_FDES (1u << 22)		/* per section */
#define CFI_MAX_ROWS 65535u		/* per FDE; SFrame's v3 limit too */
#define CFI_MAX_STATE_DEPTH 64u		/* remember_state nesting */
#define CFI_MAX_OPS (1u << 20)		/* instructions per FDE */
#define CFI_MAX_TRACK 8u		/* registers one run tracks */

enum cfi_kind {
	CFI_EH_FRAME = 0,
	CFI_DEBUG_FRAME = 1,
};

/*
 * One CFI section and what its pointer encodings need.  read_ptr is used
 * for DW_EH_PE_indirect: it reads an address-sized word at a virtual
 * address (NULL: indirect pointers are an error).
 */
struct cfi_section {
	const uint8_t *data;
	size_t size;
	uint64_t vaddr;		/* address of data[0] (pcrel base) */
	uint64_t text_base;	/* DW_EH_PE_textrel base */
	uint64_t data_base;	/* DW_EH_PE_datarel base */
	uint8_t kind;		/* enum cfi_kind */
	uint8_t addr_size;	/* 4 or 8 (ELF class) */
	bool swap;		/* other byte order than the host */
	int (*read_ptr)(void *ctx, uint64_t vaddr, unsigned int size,
			uint64_t *val);
	void *ctx;
	const char *name;	/* for messages: "libc.so.6:.eh_frame" */
};

struct cfi_cie {
	uint64_t off;		/* of the length field */
	uint8_t version;
	uint8_t fde_enc;	/* DW_EH_PE_* of FDE addresses */
	uint8_t lsda_enc;
	uint8_t addr_size;
	uint8_t seg_size;
	bool has_z;		/* augmentation data present */
	bool signal;		/* 'S': signal frame */
	bool pauth_b_key;	/* 'B': AArch64 return addresses are
				   signed with the B key (not BTI) */
	bool tagged;		/* 'G': AArch64 MTE */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_col;
	uint64_t personality;	/* 0 when absent */
	const uint8_t *insns;
	size_t insns_len;
	uint64_t insns_off;	/* section offset of insns (messages) */
};

struct cfi_fde {
	uint64_t off;		/* of the length field */
	struct cfi_cie cie;	/* copy of its CIE */
	uint64_t pc_begin;
	uint64_t pc_range;
	uint64_t lsda;		/* 0 when absent */
	const uint8_t *insns;
	size_t insns_len;
	uint64_t insns_off;
};

/*
 * Iteration over a section's FDEs, in section order.  CIEs are parsed when
 * an FDE refers to them (and cached).
 */
struct cfi_iter {
	const struct cfi_section *sec;
	uint64_t pos;
	uint32_t nfdes;
	bool done;
	struct {
		uint64_t off;
		bool valid;
		struct cfi_cie cie;
	} cache[64];
};

/* ".eh_frame" or ".debug_frame", for messages. */
SFP_HIDDEN const char *cfi_section_label(const struct cfi_section *sec);

SFP_HIDDEN void cfi_iter_init(struct cfi_iter *it,
			      const struct cfi_section *sec);

/*
 * Next FDE.  Return: 1 and *fde set; 0 at the end (section end or zero
 * terminator in .eh_frame); -EBADMSG for a bad entry: when its length was
 * sane the iterator has moved past it and the caller may go on, otherwise
 * the next call returns 0.  -E2BIG when CFI_MAX_FDES is reached.
 */
SFP_HIDDEN int cfi_iter_next(struct cfi_iter *it, struct cfi_fde *fde);

/* Parse the CIE at section offset off.  Return 0 or -EBADMSG/-EOPNOTSUPP. */
SFP_HIDDEN int cfi_parse_cie(const struct cfi_section *sec, uint64_t off,
			     struct cfi_cie *cie);

/* Parse the FDE at section offset off (its CIE too). */
SFP_HIDDEN int cfi_parse_fde(const struct cfi_section *sec, uint64_t off,
			     struct cfi_fde *fde);

/*
 * Read one pointer of encoding enc at the cursor (whose base is the
 * section start).  func_base is the DW_EH_PE_funcrel base.
 * Return: 0; -EBADMSG short/bad; -EOPNOTSUPP unknown encoding.
 */
struct sfp_cursor;
SFP_HIDDEN int cfi_read_encoded(const struct cfi_section *sec,
				struct sfp_cursor *c, uint8_t enc,
				uint8_t addr_size, uint64_t func_base,
				uint64_t *val);

/* --- .eh_frame_hdr --- */

struct cfi_hdr {
	uint64_t eh_frame_ptr;	/* decoded address of .eh_frame */
	uint64_t fde_count;
	uint8_t table_enc;
	const uint8_t *table;	/* fde_count pairs of table_enc values */
	size_t entry_size;
};

/*
 * Parse .eh_frame_hdr (sec->kind is ignored; sec->vaddr is the hdr's
 * address).  A hdr without a binary-search table gives fde_count 0.
 */
SFP_HIDDEN int cfi_hdr_parse(const struct cfi_section *sec,
			     struct cfi_hdr *hdr);

/* Entry idx of the table (0 <= idx < fde_count). */
SFP_HIDDEN int cfi_hdr_entry(const struct cfi_section *sec,
			     const struct cfi_hdr *hdr, uint64_t idx,
			     uint64_t *pc, uint64_t *fde_addr);

/* --- The interpreter. --- */

enum cfi_rule_kind {
	CFI_RULE_NONE = 0,	/* no rule given (DWARF: unspecified) */
	CFI_RULE_UNDEFINED,	/* DW_CFA_undefined */
	CFI_RULE_SAME,		/* DW_CFA_same_value */
	CFI_RULE_OFFSET,	/* saved at CFA + off */
	CFI_RULE_VAL_OFFSET,	/* value is CFA + off */
	CFI_RULE_REGISTER,	/* value is in register reg */
	CFI_RULE_EXPR,		/* saved at address given by expr */
	CFI_RULE_VAL_EXPR,	/* value is expr */
};

enum cfi_cfa_kind {
	CFI_CFA_NONE = 0,	/* no CFA rule yet */
	CFI_CFA_REG,		/* reg + off */
	CFI_CFA_EXPR,		/* expression */
};

struct cfi_rule {
	uint8_t kind;		/* enum cfi_rule_kind / enum cfi_cfa_kind */
	uint16_t reg;
	int64_t off;
	const uint8_t *expr;	/* EXPR kinds: the block */
	uint32_t expr_len;
};

/* Bits of cfi_row.touched / cfi_row.flags. */
#define CFI_TOUCH_CFA 0x1u
#define CFI_TOUCH_REG(i) (0x2u << (i))	/* tracked register i */
#define CFI_TOUCH_RA_STATE 0x1000u	/* AArch64 negate_ra_state */

#define CFI_ROW_ARGS_SIZE 0x1u	/* DW_CFA_GNU_args_size seen (non-zero) */
#define CFI_ROW_WINDOW_SAVE 0x2u	/* DW_CFA_GNU_window_save seen */
#define CFI_ROW_NEG_RA_PC 0x4u	/* AArch64 negate_ra_state_with_pc */
#define CFI_ROW_RA_SIGNED 0x8u	/* AArch64: the RA is PAC-signed here (an
				   odd number of negate_ra_state ops; part
				   of the remembered state) */

/*
 * The rules that hold for PCs [start, end).  `touched` says which tracked
 * items an instruction set (even to the same value) since the previous row:
 * this is how gas decides to start a new SFrame FRE.
 */
struct cfi_row {
	uint64_t start;
	uint64_t end;
	struct cfi_rule cfa;
	struct cfi_rule regs[CFI_MAX_TRACK];
	uint64_t args_size;
	uint32_t touched;
	uint32_t flags;
};

/* Which registers a run tracks (DWARF numbers, at most CFI_MAX_TRACK). */
struct cfi_track {
	uint16_t regs[CFI_MAX_TRACK];
	unsigned int nregs;
};

/* A growable row buffer, reused across FDEs. */
struct cfi_rows {
	struct cfi_row *rows;
	size_t n;
	size_t cap;
	void *scratch;		/* the interpreter's reusable state */
};

SFP_HIDDEN void cfi_rows_free(struct cfi_rows *r);

/*
 * Run the CIE's initial instructions and the FDE's instructions and fill
 * *out with the rows covering [pc_begin, pc_begin + pc_range), addresses
 * absolute.  Rows of zero width are not produced.
 * Return: 0; -EBADMSG malformed instructions; -EOPNOTSUPP an unknown
 * opcode; -E2BIG a cap reached; -ENOMEM.
 */
SFP_HIDDEN int cfi_run(const struct cfi_section *sec, const struct cfi_fde *fde,
		       const struct cfi_track *track, struct cfi_rows *out);

/*
 * Recognise the simple expression forms: "DW_OP_bregN off" (*deref false)
 * and "DW_OP_bregN off; DW_OP_deref" (*deref true).  Return true if expr
 * is one of them.
 */
SFP_HIDDEN bool cfi_expr_simple(const uint8_t *expr, size_t len,
				uint16_t *reg, int64_t *off, bool *deref);

#endif /* SFP_CFI_H */
