// SPDX-License-Identifier: MIT
/*
 * The DWARF CFA-row interpreter (DWARF 5 §6.4.2).
 *
 * Only the CFA and the registers the caller asks for are kept: a row is
 * then small and remember/restore copies are cheap, which matters when a
 * whole libc is converted in a few milliseconds.  Instructions on other
 * registers are decoded (their operands must be skipped correctly) and
 * otherwise ignored.
 */
#include <inttypes.h>

#include "cfi/cfi.h"
#include "cfi/dwarf.h"
#include "common/cursor.h"

struct state {
	struct cfi_rule cfa;
	struct cfi_rule regs[CFI_MAX_TRACK];
	uint64_t args_size;
	bool ra_signed;		/* AArch64 RA sign state (DWARF treats it
				   as a pseudo-register: remembered and
				   restored with the others) */
};

struct interp {
	const struct cfi_section *sec;
	const struct cfi_fde *fde;
	const struct cfi_track *track;
	struct cfi_rows *out;
	struct state cur;
	struct state init;	/* after the CIE's instructions */
	unsigned int depth;
	uint64_t loc;		/* absolute PC of the pending row */
	uint64_t end;
	uint32_t touched;
	uint32_t flags;
	unsigned int ops;
	bool in_cie;
	/* Last: not cleared between runs (only [0, depth) is live). */
	struct state stack[CFI_MAX_STATE_DEPTH];
};

void cfi_rows_free(struct cfi_rows *r)
{
	free(r->rows);
	free(r->scratch);
	r->scratch = NULL;
	r->rows = NULL;
	r->n = r->cap = 0;
}

static int track_idx(const struct interp *in, uint64_t reg)
{
	for (unsigned int i = 0; i < in->track->nregs; i++)
		if (in->track->regs[i] == reg)
			return (int)i;
	return -1;
}

/* Close the pending row at new_loc (if it has any width). */
static int emit_row(struct interp *in, uint64_t new_loc)
{
	struct cfi_rows *o = in->out;
	struct cfi_row *r;

	if (new_loc > in->end)
		new_loc = in->end;
	if (new_loc <= in->loc)
		return 0;
	if (o->n >= CFI_MAX_ROWS)
		return -E2BIG;
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		struct cfi_row *p = realloc(o->rows, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		o->rows = p;
		o->cap = cap;
	}
	r = &o->rows[o->n++];
	r->start = in->loc;
	r->end = new_loc;
	r->cfa = in->cur.cfa;
	memcpy(r->regs, in->cur.regs, sizeof(r->regs));
	r->args_size = in->cur.args_size;
	r->touched = in->touched;
	r->flags = in->flags;
	if (in->cur.ra_signed)
		r->flags |= CFI_ROW_RA_SIGNED;
	in->touched = 0;
	in->loc = new_loc;
	return 0;
}

static int advance(struct interp *in, uint64_t delta)
{
	uint64_t n;

	if (in->in_cie)
		return -EBADMSG;	/* CIE instructions have no location */
	if (sfp_mul_overflow(delta, in->fde->cie.code_align, &delta) ||
	    sfp_add_overflow(in->loc, delta, &n))
		return -EBADMSG;
	return emit_row(in, n);
}

static void set_reg(struct interp *in, uint64_t reg, uint8_t kind,
		    int64_t off, uint64_t reg2, const uint8_t *expr,
		    uint32_t expr_len)
{
	int i = track_idx(in, reg);
	struct cfi_rule *r;

	if (i < 0)
		return;
	r = &in->cur.regs[i];
	r->kind = kind;
	r->off = off;
	r->reg = (uint16_t)reg2;
	r->expr = expr;
	r->expr_len = expr_len;
	in->touched |= CFI_TOUCH_REG(i);
}

static int read_block(struct sfp_cursor *c, const uint8_t **p, uint32_t *len)
{
	uint64_t n;

	if (sfp_cursor_uleb(c, &n) || n > sfp_cursor_left(c))
		return -EBADMSG;
	*p = c->pos;
	*len = (uint32_t)n;
	c->pos += n;
	return 0;
}

/* Factored offsets: reject products that do not fit. */
static int factor(int64_t v, int64_t f, int64_t *out)
{
	return sfp_mul_overflow(v, f, out) ? -EBADMSG : 0;
}

static int run_insns(struct interp *in, const uint8_t *p, size_t len,
		     uint64_t insns_off)
{
	const struct cfi_cie *cie = &in->fde->cie;
	struct sfp_cursor c;

	/* Base the cursor at the section so offsets in messages are real. */
	c.base = p - insns_off;
	c.pos = p;
	c.end = p + len;
	c.swap = in->sec->swap;

	while (sfp_cursor_left(&c)) {
		uint8_t op = 0, lo;
		uint64_t reg = 0, u = 0;
		int64_t s = 0, off;
		const uint8_t *blk;
		uint32_t blen;
		int err = 0;

		if (++in->ops > CFI_MAX_OPS)
			return -E2BIG;
		sfp_cursor_u8(&c, &op);
		lo = op & 0x3f;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			err = advance(in, lo);
			goto next;
		case DW_CFA_offset:
			if (sfp_cursor_uleb(&c, &u) ||
			    factor((int64_t)u, cie->data_align, &off))
				return -EBADMSG;
			set_reg(in, lo, CFI_RULE_OFFSET, off, 0, NULL, 0);
			goto next;
		case DW_CFA_restore:
			reg = lo;
			goto restore;
		}

		switch (op) {
		case DW_CFA_nop:
			break;
		case DW_CFA_set_loc: {
			uint8_t enc = in->sec->kind == CFI_EH_FRAME
					      ? cie->fde_enc
					      : DW_EH_PE_absptr;

			if (in->in_cie)
				return -EBADMSG;
			err = cfi_read_encoded(in->sec, &c, enc, cie->addr_size,
					       in->fde->pc_begin, &u);
			if (err)
				return -EBADMSG;
			if (u < in->loc)
				return -EBADMSG;	/* must not go back */
			err = emit_row(in, u);
			break;
		}
		case DW_CFA_advance_loc1: {
			uint8_t d = 0;

			if (sfp_cursor_u8(&c, &d))
				return -EBADMSG;
			err = advance(in, d);
			break;
		}
		case DW_CFA_advance_loc2: {
			uint16_t d = 0;

			if (sfp_cursor_u16(&c, &d))
				return -EBADMSG;
			err = advance(in, d);
			break;
		}
		case DW_CFA_advance_loc4: {
			uint32_t d = 0;

			if (sfp_cursor_u32(&c, &d))
				return -EBADMSG;
			err = advance(in, d);
			break;
		}
		case DW_CFA_MIPS_advance_loc8:
			if (sfp_cursor_u64(&c, &u))
				return -EBADMSG;
			err = advance(in, u);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_val_offset:
			if (sfp_cursor_uleb(&c, &reg) || sfp_cursor_uleb(&c, &u) ||
			    factor((int64_t)u, cie->data_align, &off))
				return -EBADMSG;
			set_reg(in, reg,
				op == DW_CFA_val_offset ? CFI_RULE_VAL_OFFSET
							: CFI_RULE_OFFSET,
				off, 0, NULL, 0);
			break;
		case DW_CFA_offset_extended_sf:
		case DW_CFA_val_offset_sf:
			if (sfp_cursor_uleb(&c, &reg) || sfp_cursor_sleb(&c, &s) ||
			    factor(s, cie->data_align, &off))
				return -EBADMSG;
			set_reg(in, reg,
				op == DW_CFA_val_offset_sf ? CFI_RULE_VAL_OFFSET
							   : CFI_RULE_OFFSET,
				off, 0, NULL, 0);
			break;
		case DW_CFA_GNU_negative_offset_extended:
			if (sfp_cursor_uleb(&c, &reg) || sfp_cursor_uleb(&c, &u) ||
			    factor(-(int64_t)u, cie->data_align, &off))
				return -EBADMSG;
			set_reg(in, reg, CFI_RULE_OFFSET, off, 0, NULL, 0);
			break;
		case DW_CFA_restore_extended:
			if (sfp_cursor_uleb(&c, &reg))
				return -EBADMSG;
			goto restore;
		case DW_CFA_undefined:
		case DW_CFA_same_value:
			if (sfp_cursor_uleb(&c, &reg))
				return -EBADMSG;
			set_reg(in, reg,
				op == DW_CFA_undefined ? CFI_RULE_UNDEFINED
						       : CFI_RULE_SAME,
				0, 0, NULL, 0);
			break;
		case DW_CFA_register:
			if (sfp_cursor_uleb(&c, &reg) || sfp_cursor_uleb(&c, &u))
				return -EBADMSG;
			if (u > 0xffff)
				return -EBADMSG;
			set_reg(in, reg, CFI_RULE_REGISTER, 0, u, NULL, 0);
			break;
		case DW_CFA_remember_state:
			if (in->depth >= CFI_MAX_STATE_DEPTH)
				return -E2BIG;
			in->stack[in->depth++] = in->cur;
			break;
		case DW_CFA_restore_state:
			if (!in->depth)
				return -EBADMSG;
			in->cur = in->stack[--in->depth];
			/* gas treats this as a change even if nothing
			 * differs; so do we (see cfi_row.touched). */
			in->touched |= CFI_TOUCH_CFA;
			for (unsigned int i = 0; i < in->track->nregs; i++)
				in->touched |= CFI_TOUCH_REG(i);
			break;
		case DW_CFA_def_cfa:
			if (sfp_cursor_uleb(&c, &reg) || sfp_cursor_uleb(&c, &u))
				return -EBADMSG;
			if (reg > 0xffff || u > INT64_MAX)
				return -EBADMSG;
			in->cur.cfa = (struct cfi_rule){ .kind = CFI_CFA_REG,
							 .reg = (uint16_t)reg,
							 .off = (int64_t)u };
			in->touched |= CFI_TOUCH_CFA;
			break;
		case DW_CFA_def_cfa_sf:
			if (sfp_cursor_uleb(&c, &reg) || sfp_cursor_sleb(&c, &s) ||
			    factor(s, cie->data_align, &off))
				return -EBADMSG;
			if (reg > 0xffff)
				return -EBADMSG;
			in->cur.cfa = (struct cfi_rule){ .kind = CFI_CFA_REG,
							 .reg = (uint16_t)reg,
							 .off = off };
			in->touched |= CFI_TOUCH_CFA;
			break;
		case DW_CFA_def_cfa_register:
			if (sfp_cursor_uleb(&c, &reg) || reg > 0xffff)
				return -EBADMSG;
			/* Only meaningful on a register rule; on an
			 * expression the offset is undefined: keep 0. */
			if (in->cur.cfa.kind != CFI_CFA_REG)
				in->cur.cfa.off = 0;
			in->cur.cfa.kind = CFI_CFA_REG;
			in->cur.cfa.reg = (uint16_t)reg;
			in->cur.cfa.expr = NULL;
			in->touched |= CFI_TOUCH_CFA;
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
			if (op == DW_CFA_def_cfa_offset) {
				if (sfp_cursor_uleb(&c, &u) || u > INT64_MAX)
					return -EBADMSG;
				off = (int64_t)u;
			} else if (sfp_cursor_sleb(&c, &s) ||
				   factor(s, cie->data_align, &off)) {
				return -EBADMSG;
			}
			/* With no register rule this is meaningless; keep
			 * the kind so the converter can say why. */
			in->cur.cfa.off = off;
			in->touched |= CFI_TOUCH_CFA;
			break;
		case DW_CFA_def_cfa_expression:
			if (read_block(&c, &blk, &blen))
				return -EBADMSG;
			in->cur.cfa = (struct cfi_rule){ .kind = CFI_CFA_EXPR,
							 .expr = blk,
							 .expr_len = blen };
			in->touched |= CFI_TOUCH_CFA;
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (sfp_cursor_uleb(&c, &reg) ||
			    read_block(&c, &blk, &blen))
				return -EBADMSG;
			set_reg(in, reg,
				op == DW_CFA_expression ? CFI_RULE_EXPR
							: CFI_RULE_VAL_EXPR,
				0, 0, blk, blen);
			break;
		case DW_CFA_GNU_args_size:
			if (sfp_cursor_uleb(&c, &u))
				return -EBADMSG;
			in->cur.args_size = u;
			if (u)
				in->flags |= CFI_ROW_ARGS_SIZE;
			break;
		case DW_CFA_GNU_window_save:
			/* SPARC's window save; on AArch64 the same opcode is
			 * DW_CFA_AARCH64_negate_ra_state.  The flag stays set
			 * so other ABIs can refuse the FDE. */
			in->flags |= CFI_ROW_WINDOW_SAVE;
			in->cur.ra_signed = !in->cur.ra_signed;
			in->touched |= CFI_TOUCH_RA_STATE;
			break;
		case DW_CFA_AARCH64_negate_ra_state_with_pc:
			in->flags |= CFI_ROW_NEG_RA_PC;
			break;
		default:
			/* Operand length unknown: we cannot go on. */
			pr_debug("%s: offset 0x%zx: unknown CFA opcode 0x%02x",
				 in->sec->name, sfp_cursor_off(&c) - 1, op);
			return -EOPNOTSUPP;
		}
		goto next;
restore:
		{
			int i = track_idx(in, reg);

			if (in->in_cie)
				return -EBADMSG;	/* nothing to restore to */
			if (i >= 0) {
				in->cur.regs[i] = in->init.regs[i];
				in->touched |= CFI_TOUCH_REG(i);
			}
		}
next:
		if (err)
			return err;
	}
	return 0;
}

int cfi_run(const struct cfi_section *sec, const struct cfi_fde *fde,
	    const struct cfi_track *track, struct cfi_rows *out)
{
	struct interp *in;
	int err;

	if (track->nregs > CFI_MAX_TRACK)
		return -EINVAL;
	out->n = 0;
	if (fde->pc_range == 0)
		return 0;
	/* The state stack is ~20 KiB: keep it off the caller's stack, and
	 * reuse it across FDEs (clearing it each time would cost more than
	 * the interpretation itself). */
	if (!out->scratch) {
		out->scratch = malloc(sizeof(*in));
		if (!out->scratch)
			return -ENOMEM;
	}
	in = out->scratch;
	memset(in, 0, offsetof(struct interp, stack));
	in->sec = sec;
	in->fde = fde;
	in->track = track;
	in->out = out;
	in->loc = fde->pc_begin;
	if (sfp_add_overflow(fde->pc_begin, fde->pc_range, &in->end)) {
		err = -EBADMSG;
		goto out;
	}
	in->in_cie = true;
	err = run_insns(in, fde->cie.insns, fde->cie.insns_len,
			fde->cie.insns_off);
	if (err)
		goto out;
	in->init = in->cur;
	in->in_cie = false;
	/* remember_state in a CIE does not carry over to the FDE. */
	in->depth = 0;
	err = run_insns(in, fde->insns, fde->insns_len, fde->insns_off);
	if (err)
		goto out;
	err = emit_row(in, in->end);
out:
	return err;
}

bool cfi_expr_simple(const uint8_t *expr, size_t len, uint16_t *reg,
		     int64_t *off, bool *deref)
{
	struct sfp_cursor c;
	uint8_t op;
	uint64_t r;

	if (!expr)
		return false;
	sfp_cursor_init(&c, expr, len, false);
	if (sfp_cursor_u8(&c, &op))
		return false;
	if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
		r = op - DW_OP_breg0;
	} else if (op == DW_OP_bregx) {
		if (sfp_cursor_uleb(&c, &r) || r > 0xffff)
			return false;
	} else {
		return false;
	}
	if (sfp_cursor_sleb(&c, off))
		return false;
	*reg = (uint16_t)r;
	*deref = false;
	if (!sfp_cursor_left(&c))
		return true;
	if (sfp_cursor_u8(&c, &op) || op != DW_OP_deref || sfp_cursor_left(&c))
		return false;
	*deref = true;
	return true;
}
