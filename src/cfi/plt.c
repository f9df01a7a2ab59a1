// SPDX-License-Identifier: MIT
/*
 * SFrame FDEs for x86-64 PLT stubs, as ld makes them: PLT0 a PCINC FDE,
 * the PLTn entries one PCMASK FDE whose rows repeat every entry.
 *
 * Rather than trusting templates, the rows are derived from the stub bytes:
 * a stub is a short sequence of endbr64, push and jmp instructions, and
 * each push moves the CFA 8 bytes further from SP.  The sweep is linear,
 * and goes on past an indirect jmp: a lazy stub's GOT slot first points
 * back to the push that follows it.  This covers the lazy
 * PLT ({0: sp+8, 11: sp+16}), the IBT PLT (push after endbr64: {0: sp+8,
 * 9: sp+16}), MPX "bnd jmp" forms, .plt.sec and .plt.got (a lone jmp:
 * {0: sp+8}), and refuses anything else so the caller keeps the CFI.
 * (ld 2.40 gives IBT PLTs the non-IBT rows, which is wrong: the push there
 * ends at offset 9, as objdump -d shows.)
 */
#include "cfi/convert.h"

/*
 * Decode one stub of len bytes whose CFA at offset 0 is sp+cfa0.  Rows go
 * to rows (at most 4).  Return the number of rows, 0 if not a stub.
 */
static size_t decode_stub(const uint8_t *p, size_t len, int32_t cfa0,
			  struct sfp_sframe_row *rows, size_t max)
{
	size_t off = 0, n = 0;
	int32_t cfa = cfa0;
	bool jumped = false;

	rows[n++] = (struct sfp_sframe_row){
		.start = 0,
		.cfa = { .kind = SFP_LOC_REG, .reg = SFP_DWARF_AMD64_SP,
			 .offset = cfa },
		.ra = { .kind = SFP_LOC_CFA_DEREF, .flags = SFP_LOC_F_FIXED,
			.offset = -8 },
	};
	while (off < len) {
		size_t left = len - off;
		const uint8_t *q = p + off;

		if (left >= 4 && q[0] == 0xf3 && q[1] == 0x0f && q[2] == 0x1e &&
		    q[3] == 0xfa) {
			off += 4;	/* endbr64 */
			continue;
		}
		if ((left >= 5 && q[0] == 0xe9) ||			/* jmp rel */
		    (left >= 6 && q[0] == 0xf2 && q[1] == 0xe9)) {
			rows[n - 1].end = len;
			return n;	/* the rest is padding */
		}
		/* An indirect jump through the GOT: the lazy stub resumes
		 * after it (the GOT first points there), others end. */
		if (left >= 6 && q[0] == 0xff && q[1] == 0x25) {
			off += 6;
			jumped = true;
			continue;
		}
		if (left >= 7 && q[0] == 0xf2 && q[1] == 0xff && q[2] == 0x25) {
			off += 7;
			jumped = true;
			continue;
		}
		if (left >= 6 && q[0] == 0xff && q[1] == 0x35) {
			off += 6;	/* push m(%rip) */
		} else if (left >= 5 && q[0] == 0x68) {
			off += 5;	/* push $imm32 */
		} else if (jumped) {
			rows[n - 1].end = len;
			return n;	/* padding after the last jump */
		} else {
			return 0;
		}
		if (n == max || off >= len)
			return 0;
		cfa += 8;
		rows[n - 1].end = off;
		rows[n] = rows[n - 1];
		rows[n].start = off;
		rows[n].cfa.offset = cfa;
		n++;
	}
	if (jumped) {
		rows[n - 1].end = len;
		return n;
	}
	return 0;	/* ran off the end without a jump */
}

static bool same_rows(const struct sfp_sframe_row *a,
		      const struct sfp_sframe_row *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].start != b[i].start ||
		    a[i].cfa.offset != b[i].cfa.offset)
			return false;
	return true;
}

/* A PCMASK FDE over [addr, addr+size) of entries of entsz bytes. */
static bool pcmask_func(uint64_t addr, const uint8_t *data, size_t size,
			size_t entsz, struct cfi_plt_func *f)
{
	struct sfp_sframe_row tmp[4];

	if (!size || size % entsz || entsz > 255)
		return false;
	f->nrows = decode_stub(data, entsz, 8, f->rows, ARRAY_SIZE(f->rows));
	if (!f->nrows)
		return false;
	for (size_t o = entsz; o < size; o += entsz)
		if (decode_stub(data + o, entsz, 8, tmp, ARRAY_SIZE(tmp)) !=
			    f->nrows ||
		    !same_rows(tmp, f->rows, f->nrows))
			return false;
	f->fn = (struct sfp_sframe_func){
		.start = addr, .size = (uint32_t)size,
		.num_rows = (uint32_t)f->nrows,
		.pc_type = SFP_SFRAME_PC_MASK, .rep_size = (uint8_t)entsz,
	};
	for (size_t i = 0; i < f->nrows; i++)
		f->rows[i].flags |= SFP_ROW_PCMASK;
	return true;
}

int cfi_plt_amd64(const char *name, uint64_t addr, const uint8_t *data,
		  size_t size, struct cfi_plt_func *out)
{
	bool ibt = size >= 4 && data[0] == 0xf3 && data[1] == 0x0f &&
		   data[2] == 0x1e && data[3] == 0xfa;

	if (size > UINT32_MAX)
		return 0;
	if (!strcmp(name, ".plt")) {
		struct cfi_plt_func *p0 = &out[0];
		int n = 0;

		/* PLT0 pushes the link map and jumps to the resolver. */
		if (size >= 16 && data[0] == 0xff && data[1] == 0x35) {
			p0->nrows = decode_stub(data, 16, 16, p0->rows,
						ARRAY_SIZE(p0->rows));
			if (!p0->nrows)
				return 0;
			p0->fn = (struct sfp_sframe_func){
				.start = addr, .size = 16,
				.num_rows = (uint32_t)p0->nrows,
				.pc_type = SFP_SFRAME_PC_INC,
			};
			n = 1;
		}
		if (size > (size_t)n * 16) {
			if (!pcmask_func(addr + n * 16, data + n * 16,
					 size - n * 16, 16, &out[n]))
				return 0;
			n++;
		}
		return n;
	}
	if (!strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got")) {
		/* IBT entries are 16 bytes, the others 8 (.plt.got) or 16. */
		size_t entsz = ibt || !strcmp(name, ".plt.sec") ? 16 : 8;

		return pcmask_func(addr, data, size, entsz, &out[0]) ? 1 : 0;
	}
	return 0;
}
