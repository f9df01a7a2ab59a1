// SPDX-License-Identifier: MIT
/*
 * CFI parser and interpreter: hand-built sections for every encoding and
 * opcode, and real system libraries checked row by row against binutils'
 * `readelf --debug-dump=frames-interp`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cfi/cfi.h"
#include "cfi/dwarf.h"
#include "common/cursor.h"
#include "elf/elf.h"
#include "test.h"

/* --- A tiny assembler for CFI sections. --- */

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put8(struct buf *b, uint8_t v) { b->b[b->n++] = v; }
static void put16(struct buf *b, uint16_t v) { memcpy(b->b + b->n, &v, 2); b->n += 2; }
static void put32(struct buf *b, uint32_t v) { memcpy(b->b + b->n, &v, 4); b->n += 4; }
static void put64(struct buf *b, uint64_t v) { memcpy(b->b + b->n, &v, 8); b->n += 8; }
static void uleb(struct buf *b, uint64_t v)
{
	do {
		uint8_t x = v & 0x7f;

		v >>= 7;
		put8(b, x | (v ? 0x80 : 0));
	} while (v);
}
static void sleb(struct buf *b, int64_t v)
{
	for (;;) {
		uint8_t x = v & 0x7f;

		v >>= 7;
		if ((v == 0 && !(x & 0x40)) || (v == -1 && (x & 0x40))) {
			put8(b, x);
			return;
		}
		put8(b, x | 0x80);
	}
}
static void putn(struct buf *b, const void *p, size_t n) { memcpy(b->b + b->n, p, n); b->n += n; }
static void patch32(struct buf *b, size_t at, uint32_t v) { memcpy(b->b + at, &v, 4); }

/* CIE "zR" (or aug) with the x86-64 initial rules; returns its offset. */
static size_t cie_x86(struct buf *b, const char *aug, const uint8_t *augdata,
		      size_t augn)
{
	size_t at = b->n, body;

	put32(b, 0);
	body = b->n;
	put32(b, 0);		/* CIE id */
	put8(b, 1);		/* version */
	putn(b, aug, strlen(aug) + 1);
	uleb(b, 1);		/* code align */
	sleb(b, -8);		/* data align */
	put8(b, 16);		/* RA column */
	if (aug[0] == 'z') {
		uleb(b, augn);
		putn(b, augdata, augn);
	}
	put8(b, DW_CFA_def_cfa); uleb(b, 7); uleb(b, 8);
	put8(b, DW_CFA_offset | 16); uleb(b, 1);
	while ((b->n - body) % 8)
		put8(b, 0);
	patch32(b, at, (uint32_t)(b->n - body));
	return at;
}

static struct cfi_section mksec(const struct buf *b, uint64_t vaddr)
{
	struct cfi_section s = {
		.data = b->b, .size = b->n, .vaddr = vaddr, .kind = CFI_EH_FRAME,
		.addr_size = 8, .name = "test",
	};
	return s;
}

static const struct cfi_track x86_track = { { 7, 6, 16 }, 3 };

/* An FDE (pcrel sdata4 addresses) with the given instructions. */
static void fde_pcrel(struct buf *b, size_t cie, uint64_t secaddr,
		      uint64_t pc, uint32_t range, const uint8_t *ins,
		      size_t n)
{
	size_t at = b->n, body;

	put32(b, 0);
	body = b->n;
	put32(b, (uint32_t)(b->n - cie));
	put32(b, (uint32_t)(pc - (secaddr + b->n)));
	put32(b, range);
	uleb(b, 0);
	putn(b, ins, n);
	while ((b->n - body) % 8)
		put8(b, 0);
	patch32(b, at, (uint32_t)(b->n - body));
}

TEST(cfi_push_pop_rows)
{
	static const uint8_t zr[] = { DW_EH_PE_pcrel | DW_EH_PE_sdata4 };
	static const uint8_t ins[] = {
		DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16,
		DW_CFA_offset | 6, 2,
		DW_CFA_advance_loc | 3, DW_CFA_def_cfa_register, 6,
		DW_CFA_advance_loc | 10, DW_CFA_remember_state,
		DW_CFA_def_cfa, 7, 8, DW_CFA_restore | 6,
		DW_CFA_advance_loc | 1, DW_CFA_restore_state,
		DW_CFA_advance_loc1, 4, DW_CFA_nop,
	};
	struct buf b = { .n = 0 };
	struct cfi_rows rows = { 0 };
	struct cfi_iter it;
	struct cfi_fde fde;
	size_t cie = cie_x86(&b, "zR", zr, 1);

	fde_pcrel(&b, cie, 0x5000, 0x1000, 0x40, ins, sizeof(ins));
	put32(&b, 0);	/* terminator */
	put32(&b, 0xdeadbeef);	/* never read */
	struct cfi_section s = mksec(&b, 0x5000);

	cfi_iter_init(&it, &s);
	if (!ASSERT_EQ(cfi_iter_next(&it, &fde), 1))
		return;
	ASSERT_EQ(fde.pc_begin, 0x1000);
	ASSERT_EQ(fde.pc_range, 0x40);
	ASSERT_EQ(fde.cie.fde_enc, 0x1b);
	if (!ASSERT_OK(cfi_run(&s, &fde, &x86_track, &rows)))
		goto out;
	if (!ASSERT_EQ(rows.n, 6))
		goto out;
	/* [0x1000,1): sp+8, RA c-8, FP none */
	ASSERT_EQ(rows.rows[0].start, 0x1000);
	ASSERT_EQ(rows.rows[0].cfa.reg, 7);
	ASSERT_EQ(rows.rows[0].cfa.off, 8);
	ASSERT_EQ(rows.rows[0].regs[2].kind, CFI_RULE_OFFSET);
	ASSERT_EQ(rows.rows[0].regs[2].off, -8);
	ASSERT_EQ(rows.rows[0].regs[1].kind, CFI_RULE_NONE);
	/* [1,4): sp+16, FP at c-16 */
	ASSERT_EQ(rows.rows[1].start, 0x1001);
	ASSERT_EQ(rows.rows[1].cfa.off, 16);
	ASSERT_EQ(rows.rows[1].regs[1].kind, CFI_RULE_OFFSET);
	ASSERT_EQ(rows.rows[1].regs[1].off, -16);
	ASSERT_EQ(rows.rows[1].touched, CFI_TOUCH_CFA | CFI_TOUCH_REG(1));
	/* [4,14): fp+16 */
	ASSERT_EQ(rows.rows[2].start, 0x1004);
	ASSERT_EQ(rows.rows[2].cfa.reg, 6);
	ASSERT_EQ(rows.rows[2].cfa.off, 16);
	/* [14,15): sp+8, FP restored to the CIE's (none) */
	ASSERT_EQ(rows.rows[3].start, 0x100e);
	ASSERT_EQ(rows.rows[3].cfa.reg, 7);
	ASSERT_EQ(rows.rows[3].regs[1].kind, CFI_RULE_NONE);
	/* [15,0x40): restored: fp+16, FP c-16 */
	ASSERT_EQ(rows.rows[4].start, 0x100f);
	ASSERT_EQ(rows.rows[4].cfa.reg, 6);
	ASSERT_EQ(rows.rows[4].regs[1].off, -16);
	/* an advance with no change still splits, marked untouched */
	ASSERT_EQ(rows.rows[5].start, 0x1013);
	ASSERT_EQ(rows.rows[5].end, 0x1040);
	ASSERT_EQ(rows.rows[5].touched, 0);
	ASSERT_EQ(cfi_iter_next(&it, &fde), 0);	/* stopped at terminator */
out:
	cfi_rows_free(&rows);
}

/* Every opcode with operands, on tracked and untracked registers. */
TEST(cfi_all_opcodes)
{
	struct buf b = { .n = 0 }, ins = { .n = 0 };
	static const uint8_t zr[] = { DW_EH_PE_udata8 };	/* absptr-ish */
	struct cfi_rows rows = { 0 };
	struct cfi_fde fde;
	size_t cie = cie_x86(&b, "zR", zr, 1), at, body;

	put8(&ins, DW_CFA_advance_loc1); put8(&ins, 2);
	put8(&ins, DW_CFA_offset_extended); uleb(&ins, 3); uleb(&ins, 2);
	put8(&ins, DW_CFA_offset_extended_sf); uleb(&ins, 6); sleb(&ins, 3);
	put8(&ins, DW_CFA_advance_loc2); put16(&ins, 2);		/* 4 */
	put8(&ins, DW_CFA_val_offset); uleb(&ins, 6); uleb(&ins, 1);
	put8(&ins, DW_CFA_advance_loc4); put32(&ins, 2);		/* 6 */
	put8(&ins, DW_CFA_val_offset_sf); uleb(&ins, 6); sleb(&ins, -1);
	put8(&ins, DW_CFA_MIPS_advance_loc8); put64(&ins, 2);	/* 8 */
	put8(&ins, DW_CFA_register); uleb(&ins, 16); uleb(&ins, 10);
	put8(&ins, DW_CFA_undefined); uleb(&ins, 6);
	put8(&ins, DW_CFA_advance_loc | 2);			/* 10 */
	put8(&ins, DW_CFA_same_value); uleb(&ins, 6);
	put8(&ins, DW_CFA_restore_extended); uleb(&ins, 16);
	put8(&ins, DW_CFA_def_cfa_sf); uleb(&ins, 10); sleb(&ins, -2); /* +16 */
	put8(&ins, DW_CFA_set_loc); put64(&ins, 0x200c);		/* 12 */
	put8(&ins, DW_CFA_def_cfa_expression); uleb(&ins, 3);
	put8(&ins, DW_OP_breg0 + 6); sleb(&ins, -8); put8(&ins, DW_OP_deref);
	put8(&ins, DW_CFA_expression); uleb(&ins, 6); uleb(&ins, 2);
	put8(&ins, DW_OP_breg0 + 6); sleb(&ins, 0);
	put8(&ins, DW_CFA_GNU_args_size); uleb(&ins, 16);
	put8(&ins, DW_CFA_advance_loc | 2);			/* 14 */
	put8(&ins, DW_CFA_def_cfa_register); uleb(&ins, 7);
	put8(&ins, DW_CFA_def_cfa_offset_sf); sleb(&ins, -3);	/* 24 */
	put8(&ins, DW_CFA_val_expression); uleb(&ins, 6); uleb(&ins, 2);
	put8(&ins, DW_OP_breg0 + 7); sleb(&ins, 8);
	put8(&ins, DW_CFA_GNU_negative_offset_extended); uleb(&ins, 16);
	uleb(&ins, 2);						/* c+16 */
	put8(&ins, DW_CFA_GNU_window_save);
	put8(&ins, DW_CFA_expression); uleb(&ins, 3); uleb(&ins, 1);
	put8(&ins, DW_OP_nop);

	at = b.n;
	put32(&b, 0);
	body = b.n;
	put32(&b, (uint32_t)(b.n - cie));
	put64(&b, 0x2000);
	put64(&b, 0x20);
	uleb(&b, 0);
	putn(&b, ins.b, ins.n);
	patch32(&b, at, (uint32_t)(b.n - body));
	struct cfi_section s = mksec(&b, 0x9000);

	if (!ASSERT_OK(cfi_parse_fde(&s, at, &fde)))
		return;
	if (!ASSERT_OK(cfi_run(&s, &fde, &x86_track, &rows)))
		goto out;
	if (!ASSERT_EQ(rows.n, 8))
		goto out;
	struct cfi_row *r = rows.rows;
	ASSERT_EQ(r[1].start, 0x2002);
	ASSERT_EQ(r[1].regs[1].kind, CFI_RULE_OFFSET);
	ASSERT_EQ(r[1].regs[1].off, -24);
	ASSERT_EQ(r[1].touched, CFI_TOUCH_REG(1));	/* rbx not tracked */
	ASSERT_EQ(r[2].regs[1].kind, CFI_RULE_VAL_OFFSET);
	ASSERT_EQ(r[2].regs[1].off, -8);
	ASSERT_EQ(r[3].regs[1].off, 8);
	ASSERT_EQ(r[4].regs[2].kind, CFI_RULE_REGISTER);
	ASSERT_EQ(r[4].regs[2].reg, 10);
	ASSERT_EQ(r[4].regs[1].kind, CFI_RULE_UNDEFINED);
	ASSERT_EQ(r[5].start, 0x200a);
	ASSERT_EQ(r[5].regs[1].kind, CFI_RULE_SAME);
	ASSERT_EQ(r[5].regs[2].kind, CFI_RULE_OFFSET);	/* restored */
	ASSERT_EQ(r[5].cfa.reg, 10);
	ASSERT_EQ(r[5].cfa.off, 16);
	ASSERT_EQ(r[6].start, 0x200c);
	ASSERT_EQ(r[6].cfa.kind, CFI_CFA_EXPR);
	{
		uint16_t reg;
		int64_t off;
		bool deref;

		ASSERT_TRUE(cfi_expr_simple(r[6].cfa.expr, r[6].cfa.expr_len,
					    &reg, &off, &deref));
		ASSERT_EQ(reg, 6);
		ASSERT_EQ(off, -8);
		ASSERT_TRUE(deref);
	}
	ASSERT_EQ(r[6].regs[1].kind, CFI_RULE_EXPR);
	ASSERT_EQ(r[6].args_size, 16);
	ASSERT_TRUE(r[6].flags & CFI_ROW_ARGS_SIZE);
	ASSERT_EQ(r[7].cfa.kind, CFI_CFA_REG);
	ASSERT_EQ(r[7].cfa.reg, 7);
	ASSERT_EQ(r[7].cfa.off, 24);
	ASSERT_EQ(r[7].regs[1].kind, CFI_RULE_VAL_EXPR);
	ASSERT_EQ(r[7].regs[2].off, 16);
	ASSERT_TRUE(r[7].flags & CFI_ROW_WINDOW_SAVE);
	ASSERT_EQ(r[7].end, 0x2020);
out:
	cfi_rows_free(&rows);
}

static int fake_read_ptr(void *ctx, uint64_t vaddr, unsigned int size,
			 uint64_t *val)
{
	if (vaddr != 0x7777 || size != 8)
		return -ENOENT;
	*val = 0x123456;
	return 0;
}

TEST(cfi_pointer_encodings)
{
	struct buf b = { .n = 0 };
	struct cfi_section s;
	struct sfp_cursor c;
	uint64_t v;

	put8(&b, 0);			/* 0: pad so aligned has work */
	put16(&b, 0xfffe);		/* 1: udata2 / sdata2 */
	put32(&b, 0xfffffff0);		/* 3: udata4 / sdata4 */
	uleb(&b, 300);			/* 7: uleb (2 bytes) */
	sleb(&b, -300);			/* 9: sleb (2 bytes) */
	put64(&b, 0x1122334455667788);	/* 11 */
	while (b.n % 8)
		put8(&b, 0xaa);
	put64(&b, 0xabcdef);		/* 24: aligned absptr */
	put64(&b, 0x7777 - 0x1020);	/* 32: pcrel|indirect */
	s = mksec(&b, 0x1000);
	s.text_base = 0x100000;
	s.data_base = 0x200000;

#define ENC(off, enc, want)                                                  \
	do {                                                                 \
		sfp_cursor_init(&c, b.b, b.n, false);                        \
		sfp_cursor_seek(&c, off);                                    \
		if (ASSERT_OK(cfi_read_encoded(&s, &c, enc, 8, 0x5000, &v))) \
			ASSERT_EQ(v, want);                                  \
	} while (0)
	ENC(1, DW_EH_PE_udata2, 0xfffe);
	ENC(1, DW_EH_PE_sdata2, (uint64_t)-2);
	ENC(3, DW_EH_PE_udata4, 0xfffffff0);
	ENC(3, DW_EH_PE_sdata4, (uint64_t)-16);
	ENC(3, DW_EH_PE_sdata4 | DW_EH_PE_pcrel, 0x1003 - 16);
	ENC(3, DW_EH_PE_sdata4 | DW_EH_PE_datarel, 0x200000 - 16);
	ENC(3, DW_EH_PE_udata4 | DW_EH_PE_textrel, 0x100000 + 0xfffffff0ull);
	ENC(3, DW_EH_PE_sdata4 | DW_EH_PE_funcrel, 0x5000 - 16);
	ENC(7, DW_EH_PE_uleb128, 300);
	ENC(9, DW_EH_PE_sleb128, (uint64_t)-300);
	ENC(11, DW_EH_PE_udata8, 0x1122334455667788);
	ENC(11, DW_EH_PE_sdata8, 0x1122334455667788);
	ENC(11, DW_EH_PE_absptr, 0x1122334455667788);
	ENC(17, DW_EH_PE_aligned, 0xabcdef);	/* skips to 24 */
	/* indirect without a reader fails, with one it dereferences */
	sfp_cursor_init(&c, b.b, b.n, false);
	sfp_cursor_seek(&c, 32);
	ASSERT_ERR(cfi_read_encoded(&s, &c, DW_EH_PE_indirect | DW_EH_PE_pcrel |
						    DW_EH_PE_sdata8, 8, 0, &v),
		   -EBADMSG);
	s.read_ptr = fake_read_ptr;
	ENC(32, DW_EH_PE_indirect | DW_EH_PE_pcrel | DW_EH_PE_sdata8, 0x123456);
	/* 4-byte addresses wrap */
	sfp_cursor_init(&c, b.b, b.n, false);
	sfp_cursor_seek(&c, 3);
	if (ASSERT_OK(cfi_read_encoded(&s, &c, DW_EH_PE_absptr, 4, 0, &v)))
		ASSERT_EQ(v, 0xfffffff0);
	/* unknown encodings, omit, short reads */
	sfp_cursor_init(&c, b.b, b.n, false);
	ASSERT_ERR(cfi_read_encoded(&s, &c, 0x05, 8, 0, &v), -EOPNOTSUPP);
	ASSERT_ERR(cfi_read_encoded(&s, &c, 0x60 | DW_EH_PE_udata4, 8, 0, &v),
		   -EOPNOTSUPP);
	ASSERT_ERR(cfi_read_encoded(&s, &c, DW_EH_PE_omit, 8, 0, &v), -EBADMSG);
	sfp_cursor_seek(&c, b.n - 2);
	ASSERT_ERR(cfi_read_encoded(&s, &c, DW_EH_PE_udata4, 8, 0, &v), -EBADMSG);
#undef ENC
}

/* Augmentations P, L, S, B; 64-bit lengths; .debug_frame v4 CIEs. */
TEST(cfi_augmentations_and_formats)
{
	struct buf b = { .n = 0 };
	struct cfi_fde fde;
	struct cfi_iter it;
	struct cfi_section s;
	size_t at, body, cie;
	/* zPLRSB: P = pcrel sdata4 personality, L = sdata4, R = sdata4 */
	uint8_t augd[] = { 0x1b, 0, 0, 0, 0, 0x1b, 0x1b };

	cie = cie_x86(&b, "zPLRSB", augd, sizeof(augd));
	at = b.n;
	put32(&b, 0);
	body = b.n;
	put32(&b, (uint32_t)(b.n - cie));
	put32(&b, (uint32_t)(0x3000 - (0x8000 + b.n)));
	put32(&b, 0x10);
	uleb(&b, 4);
	put32(&b, (uint32_t)(0x4444 - (0x8000 + b.n)));	/* LSDA */
	patch32(&b, at, (uint32_t)(b.n - body));
	/* a 64-bit length FDE against the same CIE */
	at = b.n;
	put32(&b, 0xffffffff);
	put64(&b, 0);
	body = b.n;
	put32(&b, (uint32_t)(b.n - cie));
	put32(&b, (uint32_t)(0x3100 - (0x8000 + b.n)));
	put32(&b, 0x20);
	uleb(&b, 4);
	put32(&b, 0);
	memcpy(b.b + at + 4, &(uint64_t){ b.n - body }, 8);
	s = mksec(&b, 0x8000);

	cfi_iter_init(&it, &s);
	if (!ASSERT_EQ(cfi_iter_next(&it, &fde), 1))
		return;
	ASSERT_TRUE(fde.cie.signal);
	ASSERT_TRUE(fde.cie.pauth_b_key);
	ASSERT_TRUE(fde.cie.has_z);
	ASSERT_EQ(fde.pc_begin, 0x3000);
	ASSERT_EQ(fde.lsda, 0x4444);
	if (!ASSERT_EQ(cfi_iter_next(&it, &fde), 1))
		return;
	ASSERT_EQ(fde.pc_begin, 0x3100);
	ASSERT_EQ(fde.pc_range, 0x20);
	ASSERT_EQ(cfi_iter_next(&it, &fde), 0);	/* section end */

	/* .debug_frame: CIE version 4 with address size, 64-bit format */
	b.n = 0;
	at = b.n;
	put32(&b, 0xffffffff);
	put64(&b, 0);
	body = b.n;
	put64(&b, ~(uint64_t)0);	/* CIE id */
	put8(&b, 4);
	put8(&b, 0);			/* no augmentation */
	put8(&b, 8);			/* address size */
	put8(&b, 0);			/* segment selector size */
	uleb(&b, 1); sleb(&b, -8); uleb(&b, 16);
	put8(&b, DW_CFA_def_cfa); uleb(&b, 7); uleb(&b, 8);
	memcpy(b.b + at + 4, &(uint64_t){ b.n - body }, 8);
	put32(&b, 0);			/* empty entry: not a terminator here */
	size_t fde_at = b.n;
	put32(&b, 0);
	body = b.n;
	put32(&b, (uint32_t)at);	/* CIE offset */
	put64(&b, 0x7000);
	put64(&b, 0x30);
	patch32(&b, fde_at, (uint32_t)(b.n - body));
	s = mksec(&b, 0);
	s.kind = CFI_DEBUG_FRAME;
	cfi_iter_init(&it, &s);
	if (ASSERT_EQ(cfi_iter_next(&it, &fde), 1)) {
		ASSERT_EQ(fde.cie.version, 4);
		ASSERT_EQ(fde.pc_begin, 0x7000);
		ASSERT_EQ(fde.pc_range, 0x30);
	}
	ASSERT_EQ(cfi_iter_next(&it, &fde), 0);
}

TEST(cfi_hostile_input)
{
	static const uint8_t zr[] = { 0x1b };
	struct buf b = { .n = 0 };
	struct cfi_rows rows = { 0 };
	struct cfi_section s;
	struct cfi_iter it;
	struct cfi_fde fde;
	size_t cie = cie_x86(&b, "zR", zr, 1), at;
	uint8_t deep[CFI_MAX_STATE_DEPTH + 2];

	/* remember_state nesting beyond the cap */
	memset(deep, DW_CFA_remember_state, sizeof(deep));
	at = b.n;
	fde_pcrel(&b, cie, 0, 0x100, 0x10, deep, sizeof(deep));
	s = mksec(&b, 0);
	if (ASSERT_OK(cfi_parse_fde(&s, at, &fde)))
		ASSERT_ERR(cfi_run(&s, &fde, &x86_track, &rows), -E2BIG);
	/* restore_state with an empty stack; unknown opcode; truncated op */
	static const uint8_t bad1[] = { DW_CFA_restore_state };
	static const uint8_t bad2[] = { 0x3f };
	static const uint8_t bad3[] = { DW_CFA_def_cfa, 7 };
	static const uint8_t bad4[] = { DW_CFA_set_loc, 0, 0, 0, 0 };
	const struct { const uint8_t *p; size_t n; int err; } cases[] = {
		{ bad1, sizeof(bad1), -EBADMSG },
		{ bad2, sizeof(bad2), -EOPNOTSUPP },
		{ bad3, sizeof(bad3), -EBADMSG },
		{ bad4, sizeof(bad4), -EBADMSG },	/* set_loc backwards */
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		b.n = 0;
		cie = cie_x86(&b, "zR", zr, 1);
		at = b.n;
		fde_pcrel(&b, cie, 0, 0x100, 0x10, cases[i].p, cases[i].n);
		s = mksec(&b, 0);
		/* fde_pcrel pads with nops: truncate the padding away */
		if (ASSERT_OK(cfi_parse_fde(&s, at, &fde))) {
			fde.insns_len = cases[i].n;
			ASSERT_ERR(cfi_run(&s, &fde, &x86_track, &rows),
				   cases[i].err);
		}
	}
	/* a length running past the end stops iteration with -EBADMSG */
	b.n = 0;
	put32(&b, 100);
	put32(&b, 0);
	s = mksec(&b, 0);
	cfi_iter_init(&it, &s);
	ASSERT_ERR(cfi_iter_next(&it, &fde), -EBADMSG);
	ASSERT_EQ(cfi_iter_next(&it, &fde), 0);
	/* an FDE whose CIE pointer points before the section */
	b.n = 0;
	put32(&b, 12);
	put32(&b, 0x100);
	put32(&b, 0);
	put32(&b, 0);
	s = mksec(&b, 0);
	cfi_iter_init(&it, &s);
	ASSERT_ERR(cfi_iter_next(&it, &fde), -EBADMSG);
	ASSERT_EQ(cfi_iter_next(&it, &fde), 0);
	/* unknown augmentation without 'z' */
	b.n = 0;
	cie_x86(&b, "xy", NULL, 0);
	s = mksec(&b, 0);
	struct cfi_cie c;
	ASSERT_ERR(cfi_parse_cie(&s, 0, &c), -EOPNOTSUPP);
	cfi_rows_free(&rows);
}

/* --- Real libraries against readelf --debug-dump=frames-interp. --- */

static int elf_read_ptr(void *ctx, uint64_t vaddr, unsigned int size,
			uint64_t *val)
{
	const uint8_t *p;

	if (sfp_elf_vaddr_data(ctx, vaddr, size, &p))
		return -ENOENT;
	*val = 0;
	memcpy(val, p, size);
	return 0;
}

static const char *const x86_names[] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
	"r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

static void fmt_cfa(const struct cfi_rule *r, char *buf, size_t n)
{
	if (r->kind == CFI_CFA_EXPR)
		snprintf(buf, n, "exp");
	else if (r->reg < ARRAY_SIZE(x86_names))
		snprintf(buf, n, "%s%+" PRId64, x86_names[r->reg], r->off);
	else
		snprintf(buf, n, "r%u%+" PRId64, r->reg, r->off);
}

static void fmt_rule(const struct cfi_rule *r, char *buf, size_t n)
{
	switch (r->kind) {
	case CFI_RULE_NONE:
		snprintf(buf, n, "u");
		break;
	case CFI_RULE_UNDEFINED:
		snprintf(buf, n, "u");
		break;
	case CFI_RULE_SAME:
		snprintf(buf, n, "s");
		break;
	case CFI_RULE_OFFSET:
		snprintf(buf, n, "c%+" PRId64, r->off);
		break;
	case CFI_RULE_VAL_OFFSET:
		snprintf(buf, n, "v%+" PRId64, r->off);
		break;
	case CFI_RULE_REGISTER:
		snprintf(buf, n, "r%u", r->reg);
		break;
	case CFI_RULE_EXPR:
		snprintf(buf, n, "exp");
		break;
	default:
		snprintf(buf, n, "vexp");
		break;
	}
}

/*
 * Compare every row readelf prints (CFA, rbp, ra columns) with the row
 * we compute for that address.  Returns the number of rows compared.
 */
static long compare_with_readelf(const char *path)
{
	struct sfp_elf *e = NULL;
	struct sfp_elf_section sec;
	struct cfi_section s;
	struct cfi_rows rows = { 0 };
	struct cfi_iter it;
	struct cfi_fde fde;
	char cmd[512], line[1024];
	FILE *p = NULL;
	long compared = 0, nfde_readelf = 0, nfde = 0;
	int rc, bad = 0;
	/* columns of the current readelf FDE table */
	int col_rbp = -1, col_ra = -1;
	const uint8_t *d;
	size_t dn;
	static const struct cfi_track trk = { { 7, 6, 16 }, 3 };

	if (!ASSERT_OK(sfp_elf_open(path, &e)))
		return -1;
	if (sfp_elf_find_section(e, ".eh_frame", 0, &sec) ||
	    sfp_elf_section_data(e, &sec, &d, &dn)) {
		sfp_elf_close(&e);
		return 0;
	}
	s = (struct cfi_section){ .data = d, .size = dn, .vaddr = sec.addr,
				  .kind = CFI_EH_FRAME, .addr_size = 8,
				  .read_ptr = elf_read_ptr, .ctx = e,
				  .name = path };
	/* Count our FDEs. */
	cfi_iter_init(&it, &s);
	while ((rc = cfi_iter_next(&it, &fde)) != 0)
		if (!ASSERT_EQ(rc, 1))
			goto out;
		else
			nfde++;

	snprintf(cmd, sizeof(cmd),
		 "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!ASSERT_NOT_NULL(p))
		goto out;
	bool have_fde = false;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long off, lo, hi, loc;
		char ccfa[64], cols[8][64];
		int n;

		if (strstr(line, "Contents of the .debug_frame"))
			break;
		if (strstr(line, " CIE") || strstr(line, "ZERO terminator")) {
			have_fde = false;
			continue;
		}
		/* "r9 (r9)": drop the parenthesised names */
		for (char *q; (q = strstr(line, " (")) != NULL;) {
			char *e2 = strchr(q, ')');

			if (!e2)
				break;
			memmove(q, e2 + 1, strlen(e2 + 1) + 1);
		}
		if (sscanf(line, "%llx %*x %*x FDE cie=%*x pc=%llx..%llx", &off,
			   &lo, &hi) == 3) {
			nfde_readelf++;
			have_fde = cfi_parse_fde(&s, off, &fde) == 0 &&
				   fde.pc_begin == lo &&
				   fde.pc_begin + fde.pc_range == hi &&
				   cfi_run(&s, &fde, &trk, &rows) == 0;
			if (!ASSERT_TRUE(have_fde) && ++bad > 5)
				goto out;
			continue;
		}
		if (strstr(line, "LOC") && strstr(line, "CFA")) {
			char *tok = strtok(line, " \n");
			int i = 0;

			col_rbp = col_ra = -1;
			while (tok) {
				if (!strcmp(tok, "rbp"))
					col_rbp = i - 2;
				if (!strcmp(tok, "ra"))
					col_ra = i - 2;
				tok = strtok(NULL, " \n");
				i++;
			}
			continue;
		}
		n = sscanf(line, "%llx %63s %63s %63s %63s %63s %63s %63s %63s %63s",
			   &loc, ccfa, cols[0], cols[1], cols[2], cols[3], cols[4],
			   cols[5], cols[6], cols[7]);
		if (n < 2 || !have_fde)
			continue;
		const struct cfi_row *r = NULL;
		for (size_t i = 0; i < rows.n; i++)
			if (rows.rows[i].start <= loc && loc < rows.rows[i].end)
				r = &rows.rows[i];
		if (!r) {
			fprintf(stderr, "  %s: no row for 0x%llx (fde 0x%llx)\n",
				path, loc, (unsigned long long)fde.off);
			if (!ASSERT_NOT_NULL(r) && ++bad > 5)
				goto out;
			continue;
		}
		char mine[64];
		fmt_cfa(&r->cfa, mine, sizeof(mine));
		if (!ASSERT_STREQ(mine, ccfa) && ++bad > 5)
			goto out;
		if (col_rbp >= 0 && col_rbp < n - 2) {
			fmt_rule(&r->regs[1], mine, sizeof(mine));
			if (!ASSERT_STREQ(mine, cols[col_rbp]) && ++bad > 5)
				goto out;
		}
		if (col_ra >= 0 && col_ra < n - 2) {
			fmt_rule(&r->regs[2], mine, sizeof(mine));
			if (strcmp(mine, cols[col_ra]))
				fprintf(stderr, "  %s: 0x%llx fde 0x%llx\n",
					path, loc, (unsigned long long)fde.off);
			if (!ASSERT_STREQ(mine, cols[col_ra]) && ++bad > 5)
				goto out;
		}
		compared++;
	}
	ASSERT_EQ(nfde, nfde_readelf);
out:
	if (p)
		pclose(p);
	cfi_rows_free(&rows);
	sfp_elf_close(&e);
	return bad ? -1 : compared;
}

TEST(cfi_rows_match_readelf)
{
	static const char *const libs[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/lib64/ld-linux-x86-64.so.2",
		"/usr/bin/ls",
	};
	int tested = 0;

	if (access("/usr/bin/readelf", X_OK)) {
		test_skip("no readelf");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(libs); i++) {
		long n;

		if (access(libs[i], R_OK))
			continue;
		n = compare_with_readelf(libs[i]);
		if (!ASSERT_GE(n, 1))
			fprintf(stderr, "  %s: no rows compared\n", libs[i]);
		tested++;
	}
	ASSERT_GE(tested, 2);
}

TEST(cfi_eh_frame_hdr_matches_fdes)
{
	struct sfp_elf *e = NULL;
	struct sfp_elf_section hs, es;
	const uint8_t *hd, *ed;
	size_t hn, en;
	struct cfi_hdr hdr;
	struct cfi_fde fde;
	uint64_t prev = 0;

	if (!ASSERT_OK(sfp_elf_open("/lib/x86_64-linux-gnu/libc.so.6", &e)))
		return;
	if (!ASSERT_OK(sfp_elf_find_section(e, ".eh_frame_hdr", 0, &hs)) ||
	    !ASSERT_OK(sfp_elf_find_section(e, ".eh_frame", 0, &es)) ||
	    !ASSERT_OK(sfp_elf_section_data(e, &hs, &hd, &hn)) ||
	    !ASSERT_OK(sfp_elf_section_data(e, &es, &ed, &en)))
		goto out;
	struct cfi_section hsec = { .data = hd, .size = hn, .vaddr = hs.addr,
				    .data_base = hs.addr, .addr_size = 8,
				    .name = "hdr" };
	struct cfi_section esec = { .data = ed, .size = en, .vaddr = es.addr,
				    .kind = CFI_EH_FRAME, .addr_size = 8,
				    .name = "eh" };
	if (!ASSERT_OK(cfi_hdr_parse(&hsec, &hdr)))
		goto out;
	ASSERT_EQ(hdr.eh_frame_ptr, es.addr);
	ASSERT_GE(hdr.fde_count, 1000);
	for (uint64_t i = 0; i < hdr.fde_count; i++) {
		uint64_t pc, fa;

		if (!ASSERT_OK(cfi_hdr_entry(&hsec, &hdr, i, &pc, &fa)) ||
		    !ASSERT_GE(pc, prev) ||
		    !ASSERT_OK(cfi_parse_fde(&esec, fa - es.addr, &fde)) ||
		    !ASSERT_EQ(fde.pc_begin, pc))
			break;
		prev = pc;
	}
	ASSERT_ERR(cfi_hdr_entry(&hsec, &hdr, hdr.fde_count, &prev, &prev),
		   -ENOENT);
out:
	sfp_elf_close(&e);
}
