// SPDX-License-Identifier: MIT
/*
 * SFrame FDEs for AArch64 PLT stubs.  ld gives them neither .eh_frame nor
 * .sframe (2.40 to 2.46), so an unwinder that stops in one finds no row and
 * would fall back to the frame record -- which skips the caller, since the
 * stub's return address is still in LR.  The stubs as ld emits them:
 *
 *   PLT0 (32 bytes)   [bti c]  stp x16, x30, [sp, #-16]!
 *                     adrp x16; ldr x17, [x16, #..]; add x16, x16, #..
 *                     br x17; nop...
 *   PLTn (16/24)      [bti c]  adrp x16; ldr x17, [x16, #..];
 *                     add x16, x16, #..; [autia1716|autib1716]; br x17; [nop]
 *
 *   TLSDESC (32, last; only with lazy TLS descriptors)
 *                     [bti c]  stp x2, x3, [sp, #-16]!; adrp x2; adrp x3;
 *                     ldr x2, [x2, #..]; add x3, x3, #..; br x2; nop...
 *
 * PLTn never touch the stack: one row, CFA = sp, RA in LR.  PLT0 pushes
 * x16 and x30: from the instruction after the stp, CFA = sp + 16 with the
 * RA at CFA - 8.  The TLSDESC trampoline pushes x2 and x3: CFA = sp + 16
 * after its stp, the RA still in LR.  Every word of the section is checked against these
 * instruction forms; anything else and the section is left alone.
 * Instructions are little-endian whatever the data byte order.
 */
#include "cfi/convert.h"

#define PLT0_SIZE 32u

#define INSN_STP_X16_X30_PRE 0xa9bf7bf0u	/* stp x16, x30, [sp, #-16]! */
#define INSN_STP_X2_X3_PRE 0xa9bf0fe2u	/* stp x2, x3, [sp, #-16]! */
#define INSN_BR_X2 0xd61f0040u
#define INSN_BTI_C 0xd503245fu
#define INSN_NOP 0xd503201fu
#define INSN_BR_X17 0xd61f0220u
#define INSN_AUTIA1716 0xd503219fu
#define INSN_AUTIB1716 0xd50321dfu

static uint32_t insn_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* One of the instructions a PLT stub is made of (after the stp). */
static bool stub_insn(uint32_t w)
{
	return (w & 0x9f00001fu) == 0x90000010u ||	/* adrp x16, .. */
	       (w & 0xffc003ffu) == 0xf9400211u ||	/* ldr x17, [x16, #..] */
	       (w & 0xffc003ffu) == 0x91000210u ||	/* add x16, x16, #.. */
	       w == INSN_BR_X17 || w == INSN_AUTIA1716 ||
	       w == INSN_AUTIB1716 || w == INSN_BTI_C || w == INSN_NOP;
}

/* The TLSDESC trampoline's instructions after its stp. */
static bool tlsdesc_insn(uint32_t w)
{
	return (w & 0x9f00001fu) == 0x90000002u ||	/* adrp x2, .. */
	       (w & 0x9f00001fu) == 0x90000003u ||	/* adrp x3, .. */
	       (w & 0xffc003ffu) == 0xf9400042u ||	/* ldr x2, [x2, #..] */
	       (w & 0xffc003ffu) == 0x91000063u ||	/* add x3, x3, #.. */
	       w == INSN_BR_X2 || w == INSN_NOP;
}

static struct sfp_sframe_row sp_row(uint64_t start, uint64_t end,
				    int32_t cfa, bool ra_saved)
{
	struct sfp_sframe_row r = {
		.start = start,
		.end = end,
		.cfa = { .kind = SFP_LOC_REG, .reg = SFP_DWARF_AARCH64_SP,
			 .offset = cfa },
	};

	if (ra_saved)
		r.ra = (struct sfp_loc){ .kind = SFP_LOC_CFA_DEREF,
					 .offset = -8 };
	return r;
}

int cfi_plt_aarch64(const char *name, uint64_t addr, const uint8_t *data,
		    size_t size, struct cfi_plt_func *out)
{
	size_t stp, off, end, tls = 0, tls_stp = 0;
	unsigned int branches = 0;
	int n;

	if (strcmp(name, ".plt") || size <= PLT0_SIZE || size % 4 ||
	    size - PLT0_SIZE > UINT32_MAX)
		return 0;
	stp = insn_at(data) == INSN_BTI_C ? 4 : 0;
	if (insn_at(data + stp) != INSN_STP_X16_X30_PRE)
		return 0;
	end = size;
	for (off = stp + 4; off < end; off += 4) {
		uint32_t w = insn_at(data + off);

		if (w == INSN_STP_X2_X3_PRE && !tls) {
			/* The TLSDESC trampoline: the rest is its own. */
			tls_stp = off;
			tls = off >= 4 && insn_at(data + off - 4) == INSN_BTI_C
				      ? off - 4 : off;
			if (tls < PLT0_SIZE || size - tls != PLT0_SIZE)
				return 0;
			for (size_t k = off + 4; k < size; k += 4)
				if (!tlsdesc_insn(insn_at(data + k)))
					return 0;
			end = tls;
			break;
		}
		if (!stub_insn(w))
			return 0;
		branches += w == INSN_BR_X17;
	}
	/* PLT0's branch and at least one entry's. */
	if (branches < 2)
		return 0;

	out[0] = (struct cfi_plt_func){
		.fn = { .start = addr, .size = PLT0_SIZE, .num_rows = 2,
			.pc_type = SFP_SFRAME_PC_INC },
		.nrows = 2,
	};
	out[0].rows[0] = sp_row(0, stp + 4, 0, false);
	out[0].rows[1] = sp_row(stp + 4, PLT0_SIZE, 16, true);
	out[0].rows[1].row_idx = 1;
	n = 1;
	if (end > PLT0_SIZE) {
		out[n] = (struct cfi_plt_func){
			.fn = { .start = addr + PLT0_SIZE,
				.size = (uint32_t)(end - PLT0_SIZE),
				.num_rows = 1, .pc_type = SFP_SFRAME_PC_INC },
			.nrows = 1,
		};
		out[n++].rows[0] = sp_row(0, end - PLT0_SIZE, 0, false);
	}
	if (tls) {
		out[n] = (struct cfi_plt_func){
			.fn = { .start = addr + tls, .size = PLT0_SIZE,
				.num_rows = 2, .pc_type = SFP_SFRAME_PC_INC },
			.nrows = 2,
		};
		out[n].rows[0] = sp_row(0, tls_stp - tls + 4, 0, false);
		out[n].rows[1] = sp_row(tls_stp - tls + 4, PLT0_SIZE, 16,
					false);
		out[n++].rows[1].row_idx = 1;
	}
	return n;
}
