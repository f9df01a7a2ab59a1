// SPDX-License-Identifier: MIT
/*
 * CFA rows → SFrame rows for AMD64, following GNU as --gsframe
 * (gas/gen-sframe.c; see docs sframe-format.md §4):
 *  - the CFA must be SP- or FP-based with an int32 offset; v3 also takes
 *    any other register and the DRAP form "DW_OP_bregN off; DW_OP_deref"
 *    as a flexible FDE;
 *  - the RA is always at CFA-8 (the header's fixed offset); in v3 an RA
 *    elsewhere, in a register or undefined (outermost frame) is expressed
 *    too;
 *  - the FP is untracked or saved at CFA+off; in v3 also in a register or
 *    at *(reg+off) (the rbp expression of DRAP prologues);
 *  - SP may only have the trivial rules;
 *  - a new row starts where gas starts a new FRE: where an instruction
 *    touched the CFA or FP rule (even to the same value; restore_state
 *    counts), where the converted rule changes, and at the last advance
 *    of the FDE.
 */
#include "cfi/convert.h"
#include "cfi/dwarf.h"

/* Tracked register slots (see cfi_amd64_track). */
#define SLOT_SP 0
#define SLOT_FP 1
#define SLOT_RA 2

const struct cfi_track cfi_amd64_track = {
	{ SFP_DWARF_AMD64_SP, SFP_DWARF_AMD64_FP, SFP_DWARF_AMD64_RA }, 3
};

static bool is_default_base(uint16_t reg)
{
	return reg == SFP_DWARF_AMD64_SP || reg == SFP_DWARF_AMD64_FP;
}

static int conv_cfa(const struct cfi_rule *r, bool v3, struct sfp_loc *l,
		    bool *flex)
{
	uint16_t reg;
	int64_t off;
	bool deref;

	switch (r->kind) {
	case CFI_CFA_REG:
		reg = r->reg;
		off = r->off;
		deref = false;
		break;
	case CFI_CFA_EXPR:
		if (!cfi_expr_simple(r->expr, r->expr_len, &reg, &off, &deref))
			return SFP_CFI_SKIP_CFA_EXPR;
		if (deref && !v3)
			return SFP_CFI_SKIP_CFA_EXPR;
		break;
	default:
		return SFP_CFI_SKIP_CFA_UNDEF;
	}
	if (!cfi_fits_i32(off))
		return SFP_CFI_SKIP_CFA_OFFSET;
	if (!deref && !is_default_base(reg)) {
		if (!v3)
			return SFP_CFI_SKIP_CFA_REG;
		*flex = true;
	}
	if (deref)
		*flex = true;
	*l = (struct sfp_loc){ .kind = deref ? SFP_LOC_REG_DEREF : SFP_LOC_REG,
			       .reg = reg, .offset = (int32_t)off };
	return -1;
}

/*
 * A saved-register rule as a location (RA or FP).  Return -1 when it
 * converted, else a skip reason.
 */
static int conv_saved(const struct cfi_rule *r, bool v3, bool is_ra,
		      struct sfp_loc *l, uint32_t *row_flags, bool *flex)
{
	int reason = is_ra ? SFP_CFI_SKIP_RA_RULE : SFP_CFI_SKIP_FP_RULE;
	uint16_t reg;
	int64_t off;
	bool deref;

	switch (r->kind) {
	case CFI_RULE_NONE:
	case CFI_RULE_SAME:
		if (is_ra)
			return reason;	/* RA with no rule: not a frame */
		*l = (struct sfp_loc){ .kind = SFP_LOC_NONE };
		return -1;
	case CFI_RULE_UNDEFINED:
		if (!is_ra)
			return reason;	/* gas: .cfi_undefined on FP */
		if (!v3) {
			/* gas before 2.46 ignores .cfi_undefined: RA stays
			 * at its fixed slot. */
			*l = (struct sfp_loc){ .kind = SFP_LOC_CFA_DEREF,
					       .flags = SFP_LOC_F_FIXED,
					       .offset = -8 };
			return -1;
		}
		*l = (struct sfp_loc){ .kind = SFP_LOC_UNDEFINED };
		*row_flags |= SFP_ROW_RA_UNDEFINED;
		return -1;
	case CFI_RULE_OFFSET:
		if (!cfi_fits_i32(r->off))
			return reason;
		if (is_ra && r->off == -8) {
			*l = (struct sfp_loc){ .kind = SFP_LOC_CFA_DEREF,
					       .flags = SFP_LOC_F_FIXED,
					       .offset = -8 };
			return -1;
		}
		if (is_ra) {
			if (!v3 || r->off == 0)
				return reason;
			*flex = true;
		}
		*l = (struct sfp_loc){ .kind = SFP_LOC_CFA_DEREF,
				       .offset = (int32_t)r->off };
		return -1;
	case CFI_RULE_REGISTER:
		if (!v3)
			return reason;
		*flex = true;
		*l = (struct sfp_loc){ .kind = SFP_LOC_REG, .reg = r->reg };
		return -1;
	case CFI_RULE_EXPR:
		/* Saved at the address reg+off: value is *(reg+off). */
		if (!v3 ||
		    !cfi_expr_simple(r->expr, r->expr_len, &reg, &off, &deref) ||
		    deref || !cfi_fits_i32(off))
			return reason;
		*flex = true;
		*l = (struct sfp_loc){ .kind = SFP_LOC_REG_DEREF, .reg = reg,
				       .offset = (int32_t)off };
		return -1;
	default:
		/* val_offset / val_expression: gas refuses them for FP and
		 * RA; an unwinder would need the value itself. */
		return reason;
	}
}

int cfi_convert_amd64(const struct cfi_fde *fde, const struct cfi_rows *rows,
		      uint8_t version, struct sfp_sframe_row *out,
		      size_t *nout, bool *flex, enum sfp_cfi_skip *why)
{
	bool v3 = version >= 3;
	size_t n = 0;
	int r;

	*flex = false;
	*nout = 0;
	if (fde->cie.ra_col != SFP_DWARF_AMD64_RA) {
		*why = SFP_CFI_SKIP_RA_COLUMN;
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < rows->n; i++) {
		const struct cfi_row *cr = &rows->rows[i];
		const struct cfi_rule *sp = &cr->regs[SLOT_SP];
		struct sfp_sframe_row row = { 0 };

		if (cr->flags & (CFI_ROW_WINDOW_SAVE | CFI_ROW_NEG_RA_PC)) {
			*why = SFP_CFI_SKIP_ARCH;
			return -EOPNOTSUPP;
		}
		if (!(sp->kind == CFI_RULE_NONE || sp->kind == CFI_RULE_SAME ||
		      (sp->kind == CFI_RULE_VAL_OFFSET && sp->off == 0))) {
			*why = SFP_CFI_SKIP_SP_RULE;
			return -EOPNOTSUPP;
		}
		r = conv_saved(&cr->regs[SLOT_RA], v3, true, &row.ra,
			       &row.flags, flex);
		if (r < 0 && !(row.flags & SFP_ROW_RA_UNDEFINED))
			r = conv_cfa(&cr->cfa, v3, &row.cfa, flex);
		if (r < 0 && !(row.flags & SFP_ROW_RA_UNDEFINED))
			r = conv_saved(&cr->regs[SLOT_FP], v3, false, &row.fp,
				       &row.flags, flex);
		if (r >= 0) {
			*why = (enum sfp_cfi_skip)r;
			return -EOPNOTSUPP;
		}
		if (row.flags & SFP_ROW_RA_UNDEFINED) {
			/* The outermost frame: nothing else matters. */
			row.cfa = (struct sfp_loc){ 0 };
			row.fp = (struct sfp_loc){ 0 };
		}
		row.start = cr->start - fde->pc_begin;
		row.end = cr->end - fde->pc_begin;
		/* gas always links in the FRE opened by the last advance,
		 * changed or not (gen-sframe.c adds the pending cur_fre at
		 * the end of the FDE); earlier unchanged ones are merged. */
		if (n > 0 && i + 1 < rows->n) {
			struct sfp_sframe_row *p = &out[n - 1];
			bool touched = cr->touched &
				       (CFI_TOUCH_CFA | CFI_TOUCH_REG(SLOT_FP));

			if (!touched && p->flags == row.flags &&
			    cfi_same_loc(&p->cfa, &row.cfa) &&
			    cfi_same_loc(&p->ra, &row.ra) &&
			    cfi_same_loc(&p->fp, &row.fp)) {
				p->end = row.end;
				continue;
			}
		}
		row.row_idx = (uint32_t)n;
		out[n++] = row;
	}
	*nout = n;
	return 0;
}

static const char *const skip_names[SFP_CFI_SKIP__COUNT] = {
	[SFP_CFI_SKIP_BAD_CFI] = "malformed-cfi",
	[SFP_CFI_SKIP_UNKNOWN_OP] = "unknown-cfa-op",
	[SFP_CFI_SKIP_TOO_BIG] = "too-big",
	[SFP_CFI_SKIP_EMPTY] = "empty",
	[SFP_CFI_SKIP_OUTSIDE_TEXT] = "outside-text",
	[SFP_CFI_SKIP_OVERLAP] = "overlap",
	[SFP_CFI_SKIP_PLT] = "plt-replaced",
	[SFP_CFI_SKIP_RA_COLUMN] = "ra-column",
	[SFP_CFI_SKIP_CFA_REG] = "cfa-register",
	[SFP_CFI_SKIP_CFA_EXPR] = "cfa-expression",
	[SFP_CFI_SKIP_CFA_OFFSET] = "cfa-offset",
	[SFP_CFI_SKIP_CFA_UNDEF] = "cfa-undefined",
	[SFP_CFI_SKIP_RA_RULE] = "ra-rule",
	[SFP_CFI_SKIP_FP_RULE] = "fp-rule",
	[SFP_CFI_SKIP_SP_RULE] = "sp-rule",
	[SFP_CFI_SKIP_SIGNAL] = "signal-frame",
	[SFP_CFI_SKIP_ARCH] = "arch-op",
	[SFP_CFI_SKIP_ENCODER] = "encoder-refused",
};

const char *sfp_cfi_skip__str(enum sfp_cfi_skip reason)
{
	if ((unsigned int)reason >= SFP_CFI_SKIP__COUNT)
		return "unknown";
	return skip_names[reason];
}
