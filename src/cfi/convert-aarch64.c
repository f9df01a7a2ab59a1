// SPDX-License-Identifier: MIT
/*
 * CFA rows → SFrame rows for AArch64, following GNU as --gsframe
 * (sframe-format.md §1.8 and §4):
 *  - the CFA must be SP + int32 or FP (x29) + int32; anything else leaves
 *    the function out (gas writes no flexible FDEs for AArch64, so
 *    neither do we, in v2 or v3);
 *  - the RA (x30, LR) is tracked: saved at CFA + off, or not saved at all,
 *    i.e. still in LR (no RA word: only the topmost frame may be there);
 *    in a register or as an expression it cannot be expressed;
 *  - the FP is untracked or saved at CFA + off, and a saved FP needs a
 *    saved RA (the RA word comes before the FP word);
 *  - DW_CFA_AARCH64_negate_ra_state (the opcode of GNU_window_save) flips
 *    the row's mangled-RA bit: the RA is PAC-signed there; the CIE's 'B'
 *    augmentation gives the B key (the FDE's pauth_key);
 *    negate_ra_state_with_pc (PAuth_LR) has no SFrame form;
 *  - `.cfi_undefined x30` is an RA-undefined row in v3 and is ignored in
 *    v2, as gas before 2.46 does;
 *  - a new row starts where gas starts a new FRE: where an instruction
 *    touched the CFA, FP or RA rule or the RA sign state (restore_state
 *    counts), where the converted rule changes, and at the last advance
 *    of the FDE.
 */
#include "cfi/convert.h"

#define SLOT_SP 0
#define SLOT_FP 1
#define SLOT_RA 2

const struct cfi_track cfi_aarch64_track = {
	{ SFP_DWARF_AARCH64_SP, SFP_DWARF_AARCH64_FP, SFP_DWARF_AARCH64_LR }, 3
};

static int conv_cfa(const struct cfi_rule *r, struct sfp_loc *l)
{
	switch (r->kind) {
	case CFI_CFA_REG:
		break;
	case CFI_CFA_EXPR:
		return SFP_CFI_SKIP_CFA_EXPR;
	default:
		return SFP_CFI_SKIP_CFA_UNDEF;
	}
	if (r->reg != SFP_DWARF_AARCH64_SP && r->reg != SFP_DWARF_AARCH64_FP)
		return SFP_CFI_SKIP_CFA_REG;
	if (!cfi_fits_i32(r->off))
		return SFP_CFI_SKIP_CFA_OFFSET;
	*l = (struct sfp_loc){ .kind = SFP_LOC_REG, .reg = r->reg,
			       .offset = (int32_t)r->off };
	return -1;
}

/* The RA or FP rule as a location; -1 when it converted, else why not. */
static int conv_saved(const struct cfi_rule *r, bool v3, bool is_ra,
		      struct sfp_loc *l, uint32_t *row_flags)
{
	int reason = is_ra ? SFP_CFI_SKIP_RA_RULE : SFP_CFI_SKIP_FP_RULE;

	switch (r->kind) {
	case CFI_RULE_NONE:
	case CFI_RULE_SAME:
		/* RA: still in LR.  FP: unchanged. */
		*l = (struct sfp_loc){ .kind = SFP_LOC_NONE };
		return -1;
	case CFI_RULE_UNDEFINED:
		if (!is_ra)
			return reason;
		if (v3) {
			*l = (struct sfp_loc){ .kind = SFP_LOC_UNDEFINED };
			*row_flags |= SFP_ROW_RA_UNDEFINED;
		} else {
			*l = (struct sfp_loc){ .kind = SFP_LOC_NONE };
		}
		return -1;
	case CFI_RULE_OFFSET:
		/* An RA word of 0 reads as "no RA offset". */
		if (!cfi_fits_i32(r->off) || (is_ra && r->off == 0))
			return reason;
		*l = (struct sfp_loc){ .kind = SFP_LOC_CFA_DEREF,
				       .offset = (int32_t)r->off };
		return -1;
	default:
		return reason;
	}
}

int cfi_convert_aarch64(const struct cfi_fde *fde, const struct cfi_rows *rows,
			uint8_t version, struct sfp_sframe_row *out,
			size_t *nout, bool *flex, enum sfp_cfi_skip *why)
{
	const uint32_t fre_touch = CFI_TOUCH_CFA | CFI_TOUCH_REG(SLOT_FP) |
				   CFI_TOUCH_REG(SLOT_RA) | CFI_TOUCH_RA_STATE;
	bool v3 = version >= 3;
	size_t n = 0;
	int r;

	*flex = false;
	*nout = 0;
	if (fde->cie.ra_col != SFP_DWARF_AARCH64_LR) {
		*why = SFP_CFI_SKIP_RA_COLUMN;
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < rows->n; i++) {
		const struct cfi_row *cr = &rows->rows[i];
		const struct cfi_rule *sp = &cr->regs[SLOT_SP];
		struct sfp_sframe_row row = { 0 };

		if (cr->flags & CFI_ROW_NEG_RA_PC) {
			*why = SFP_CFI_SKIP_ARCH;
			return -EOPNOTSUPP;
		}
		if (!(sp->kind == CFI_RULE_NONE || sp->kind == CFI_RULE_SAME ||
		      (sp->kind == CFI_RULE_VAL_OFFSET && sp->off == 0))) {
			*why = SFP_CFI_SKIP_SP_RULE;
			return -EOPNOTSUPP;
		}
		r = conv_saved(&cr->regs[SLOT_RA], v3, true, &row.ra,
			       &row.flags);
		if (r < 0 && !(row.flags & SFP_ROW_RA_UNDEFINED)) {
			r = conv_cfa(&cr->cfa, &row.cfa);
			if (r < 0)
				r = conv_saved(&cr->regs[SLOT_FP], v3, false,
					       &row.fp, &row.flags);
			/* FP word without an RA word before it: gas
			 * refuses the whole function. */
			if (r < 0 && row.fp.kind != SFP_LOC_NONE &&
			    row.ra.kind == SFP_LOC_NONE)
				r = SFP_CFI_SKIP_FP_RULE;
		}
		if (r >= 0) {
			*why = (enum sfp_cfi_skip)r;
			return -EOPNOTSUPP;
		}
		if (row.flags & SFP_ROW_RA_UNDEFINED) {
			/* The outermost frame: nothing else matters, and the
			 * marker FRE has no bits to spare. */
			row.cfa = (struct sfp_loc){ 0 };
			row.fp = (struct sfp_loc){ 0 };
		} else if (cr->flags & CFI_ROW_RA_SIGNED) {
			row.flags |= SFP_ROW_MANGLED_RA;
		}
		row.start = cr->start - fde->pc_begin;
		row.end = cr->end - fde->pc_begin;
		/* As for AMD64: the FRE opened by the last advance is always
		 * kept; earlier unchanged, untouched ones are merged. */
		if (n > 0 && i + 1 < rows->n) {
			struct sfp_sframe_row *p = &out[n - 1];

			if (!(cr->touched & fre_touch) &&
			    p->flags == row.flags &&
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
