// SPDX-License-Identifier: MIT
/*
 * Text dump in the layout of GNU objdump --sframe.
 *
 * The output follows the dumper of the binutils release that produces the
 * section's version, because the golden outputs we compare against come
 * from those releases and the dumpers differ in small ways:
 *   v1 (2.40):           one-line flags, no fixed-offset lines, RA "u"
 *                        (with "[s]" if mangled) unless a data word gives
 *                        it, "c-8" where later dumpers print "f";
 *   v2 without PCREL (2.41-2.44): one-line flags, fixed-offset lines, "f";
 *   v2 with PCREL (2.45), v3 (2.46): one flag per line, attributes
 *                        ("S" signal, "F" flexible), "RA undefined" rows,
 *                        flexible-FDE cells such as "r10+0" and "(fp-8)".
 * Everything printed comes from the decoded arrays (sframe_int.h).
 *
 * Flexible-FDE cells follow the 2.46 dumper's rules: a register-based
 * rule prints as "reg+N" or, dereferenced, "(reg+N)" with sp/fp named
 * per ABI and other registers as "rN"; a CFA-based rule prints "c+N"
 * whatever its deref bit; an RA padding word prints "U"; a missing RA
 * pair prints "f" (fixed RA offset) or "u".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "sframe/sframe_int.h"

enum dialect {
	D_240,
	D_244,
	D_246,
};

static enum dialect dialect_of(const struct sfp_sframe *sf)
{
	if (sf->info.version == SFRAME_VERSION_1)
		return D_240;
	if (sf->info.version == SFRAME_VERSION_2 &&
	    !(sf->info.flags & SFRAME_F_FDE_FUNC_START_PCREL))
		return D_244;
	return D_246;
}

static void dump_flags(const struct sfp_sframe *sf, enum dialect d, FILE *f)
{
	unsigned int flags = sf->info.flags;
	const char *prefix = "Flags: ";

	if (d != D_246) {
		/* The 2.40-2.44 dumpers build one string; a second flag
		 * overwrote the first (their strcpy), which we reproduce. */
		const char *s = "NONE";

		if (flags & SFRAME_F_FRAME_POINTER)
			s = "SFRAME_F_FRAME_POINTER";
		else if (flags & SFRAME_F_FDE_SORTED)
			s = "SFRAME_F_FDE_SORTED";
		else if (flags)
			s = "";
		fprintf(f, "    Flags: %s\n", s);
		return;
	}
	if (!flags) {
		fprintf(f, "%11sNONE\n", prefix);
		return;
	}
#define PRINT_FLAG(x)                                                   \
	if (flags & (x)) {                                              \
		flags &= ~(unsigned int)(x);                            \
		fprintf(f, "%11s%s%s\n", prefix, #x, flags ? "," : ""); \
		prefix = " ";                                           \
	}
	PRINT_FLAG(SFRAME_F_FDE_SORTED);
	PRINT_FLAG(SFRAME_F_FRAME_POINTER);
	PRINT_FLAG(SFRAME_F_FDE_FUNC_START_PCREL);
#undef PRINT_FLAG
	if (flags)
		fprintf(f, "%11s%u\n", prefix, flags);
}

static void dump_header(const struct sfp_sframe *sf, enum dialect d, FILE *f)
{
	fprintf(f, "  Header :\n\n");
	fprintf(f, "    Version: SFRAME_VERSION_%u\n", sf->info.version);
	dump_flags(sf, d, f);
	if (d != D_240) {
		if (sf->info.fixed_fp_offset)
			fprintf(f, "    CFA fixed FP offset: %d\n",
				sf->info.fixed_fp_offset);
		if (sf->info.fixed_ra_offset)
			fprintf(f, "    CFA fixed RA offset: %d\n",
				sf->info.fixed_ra_offset);
	}
	fprintf(f, "    Num FDEs: %d\n", (int)sf->info.num_fdes);
	fprintf(f, "    Num FREs: %d\n", (int)sf->info.num_fres);
}

static const char *reg_name(const struct sfp_sframe *sf, unsigned int reg,
			    char *buf, size_t len)
{
	uint16_t sp, fp;

	sfp_sframe_abi_regs(sf->info.abi, &sp, &fp);
	if (reg == sp)
		return "sp";
	if (reg == fp)
		return "fp";
	snprintf(buf, len, "r%u", reg);
	return buf;
}

/* A RA/FP cell of a flexible FDE, or of a default one (same notation
 * where they overlap: "c-16", "u", s390x "rN"). */
static void loc_cell(const struct sfp_sframe *sf, const struct sfp_loc *l,
		     bool flex, char *buf, size_t len)
{
	char rb[16];

	switch (l->kind) {
	case SFP_LOC_CFA_DEREF:
		snprintf(buf, len, "c%+d", l->offset);
		break;
	case SFP_LOC_CFA:
		/* The 2.46 dumper reads deref_p only for register-based
		 * rules: CFA-based ones print "c+N" either way. */
		snprintf(buf, len, "c%+d", l->offset);
		break;
	case SFP_LOC_REG:
		if (!flex)	/* s390x v2: value kept in a register */
			snprintf(buf, len, "r%u", l->reg);
		else
			snprintf(buf, len, "%s%+d",
				 reg_name(sf, l->reg, rb, sizeof(rb)), l->offset);
		break;
	case SFP_LOC_REG_DEREF:
		snprintf(buf, len, "(%s%+d)", reg_name(sf, l->reg, rb, sizeof(rb)),
			 l->offset);
		break;
	case SFP_LOC_NOT_SAVED:
		snprintf(buf, len, "U");
		break;
	default:
		snprintf(buf, len, "u");
		break;
	}
}

static void dump_row(const struct sfp_sframe *sf, enum dialect d,
		     const struct sfp_sframe_lk *fn, uint32_t k, FILE *f)
{
	const struct sfp_sframe_rule *r = &sf->rules[sf->fres[k].rule];
	bool flex = fn->fde_type == SFP_SFRAME_FDE_FLEX;
	uint64_t pc = sf->fres[k].start;
	char cell[64], rb[16];
	size_t n;

	if (fn->pc_type != SFP_SFRAME_PC_MASK)
		pc += fn->start + sf->info.bias;
	fprintf(f, "\n    %016" PRIx64, pc);

	if (r->flags & SFP_ROW_RA_UNDEFINED) {
		if (d == D_246) {
			fprintf(f, "  RA undefined");
			return;
		}
		/* Older dumpers knew no such row: their getters failed and
		 * left the FP base with offset 0. */
		fprintf(f, "  %-10s%-10s", "fp+0", "u");
		snprintf(cell, sizeof(cell), "%s   ",
			 d != D_240 && sf->info.fixed_ra_offset ? "f" : "u");
		fprintf(f, "%-13s", d == D_240 ? "u" : cell);
		return;
	}

	/* CFA */
	if (!flex)
		snprintf(cell, sizeof(cell), "%s+%d",
			 reg_name(sf, r->cfa.reg, rb, sizeof(rb)), r->cfa.offset);
	else if (r->cfa.kind == SFP_LOC_REG_DEREF)
		snprintf(cell, sizeof(cell), "(%s%+d)",
			 reg_name(sf, r->cfa.reg, rb, sizeof(rb)), r->cfa.offset);
	else
		snprintf(cell, sizeof(cell), "%s%+d",
			 reg_name(sf, r->cfa.reg, rb, sizeof(rb)), r->cfa.offset);
	fprintf(f, "  %-10s", cell);

	/* FP.  A flexible FDE without an FP pair prints "u" even when the
	 * header has a fixed FP offset (the 2.46 dumper looks for the pair). */
	if (flex && (r->fp.flags & SFP_LOC_F_FIXED))
		snprintf(cell, sizeof(cell), "u");
	else
		loc_cell(sf, &r->fp, flex, cell, sizeof(cell));
	fprintf(f, "%-10s", cell);

	/* RA */
	if (d == D_240) {
		if (r->ra.kind == SFP_LOC_CFA_DEREF &&
		    !(r->ra.flags & SFP_LOC_F_FIXED))
			snprintf(cell, sizeof(cell), "c%+d%-3s", r->ra.offset,
				 r->flags & SFP_ROW_MANGLED_RA ? "[s]" : "");
		else	/* the mangled bit shows on an untracked RA too */
			snprintf(cell, sizeof(cell), "u%s",
				 r->flags & SFP_ROW_MANGLED_RA ? "[s]" : "");
		fprintf(f, "%-13s", cell);
		return;
	}
	if (r->ra.flags & SFP_LOC_F_PADDING)
		snprintf(cell, sizeof(cell), "U");
	else if (sf->info.fixed_ra_offset && (!flex || r->ra.flags & SFP_LOC_F_FIXED))
		snprintf(cell, sizeof(cell), "f");
	else
		loc_cell(sf, &r->ra, flex, cell, sizeof(cell));
	n = strlen(cell);
	snprintf(cell + n, sizeof(cell) - n, "%s",
		 r->flags & SFP_ROW_MANGLED_RA ? "[s]" : "   ");
	fprintf(f, "%-13s", cell);
}

static void dump_func(const struct sfp_sframe *sf, enum dialect d, uint32_t i,
		      FILE *f)
{
	const struct sfp_sframe_lk *fn = sfp_sframe_fde_lk(sf, i);
	bool signal = fn->attr & SFP_SFRAME_LK_SIGNAL;
	bool mask = fn->pc_type == SFP_SFRAME_PC_MASK;
	uint32_t j;

	fprintf(f, "\n    func idx [%d]: pc = 0x%" PRIx64 ", size = %d bytes",
		(int)i, fn->start + sf->info.bias, (int)fn->size);
	if (d == D_246 && (signal || fn->fde_type == SFP_SFRAME_FDE_FLEX))
		fprintf(f, ", attr = \"%s%s\"", signal ? "S" : "",
			fn->fde_type == SFP_SFRAME_FDE_FLEX ? "F" : "");
	if ((fn->attr & SFP_SFRAME_LK_PAUTH_B) &&
	    (sf->info.abi == SFP_SFRAME_ABI_AARCH64_BE ||
	     sf->info.abi == SFP_SFRAME_ABI_AARCH64_LE))
		fprintf(f, ", pauth = B key");
	fprintf(f, "\n    %-7s%-8s %-10s%-10s%-13s", "STARTPC",
		mask ? "[m]" : "   ", "CFA", "FP", "RA");
	for (j = 0; j < fn->num_rows; j++)
		dump_row(sf, d, fn, fn->first_row + j, f);
	fprintf(f, "\n");
}

int sfp_sframe__dump(const struct sfp_sframe *sf, FILE *f)
{
	enum dialect d;
	uint32_t i;

	if (!sf || !f)
		return -EINVAL;
	if (sf->empty)
		return 0;
	d = dialect_of(sf);
	dump_header(sf, d, f);
	fprintf(f, "\n  Function Index :\n");
	for (i = 0; i < sf->num_fns; i++)
		dump_func(sf, d, i, f);
	return ferror(f) ? -EIO : 0;
}
