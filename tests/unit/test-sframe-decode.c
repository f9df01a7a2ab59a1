// SPDX-License-Identifier: MIT
/*
 * Decoder validation: every error path with its exact code, on sections
 * built byte by byte; lookups (PCINC, PCMASK, v1 mask, unsorted tables),
 * flexible FDEs, byte order, the caller's buffer left untouched.
 */
#include "sframe-test-util.h"
#include "sframe/sframe_int.h"

/*
 * Baseline: v2, AMD64, SORTED|PCREL, section at 0.
 *   FDE0 @28: func 0x1000 size 0x20, FREs {0: sp+8}, {4: sp+16, fp c-16}
 *   FDE1 @48: func 0x1100 size 0x40, PCMASK rep 16, FREs {0: sp+8}, {6: sp+16}
 *   FREs @68: 68 [00 03 08] 71 [04 05 10 f0] 75 [00 03 08] 78 [06 03 10]
 */
#define OFF_FDE0 28
#define OFF_FDE1 48
#define OFF_FRE 68
static void base_v2(struct sbuf *s, bool be)
{
	memset(s, 0, sizeof(*s));
	s->be = be;
	sb_header(s, 2, 0x5, 3, 0, -8, 2, 4, 13, 0, 40);
	sb_uN(s, (uint32_t)(0x1000 - OFF_FDE0), 4);
	sb_uN(s, 0x20, 4);
	sb_uN(s, 0, 4);
	sb_uN(s, 2, 4);
	sb_u8(s, 0x00);
	sb_u8(s, 0);
	sb_uN(s, 0, 2);
	sb_uN(s, (uint32_t)(0x1100 - OFF_FDE1), 4);
	sb_uN(s, 0x40, 4);
	sb_uN(s, 7, 4);
	sb_uN(s, 2, 4);
	sb_u8(s, 0x10);
	sb_u8(s, 16);
	sb_uN(s, 0, 2);
	sb_u8(s, 0x00); sb_u8(s, 0x03); sb_u8(s, 0x08);
	sb_u8(s, 0x04); sb_u8(s, 0x05); sb_u8(s, 0x10); sb_u8(s, 0xf0);
	sb_u8(s, 0x00); sb_u8(s, 0x03); sb_u8(s, 0x08);
	sb_u8(s, 0x06); sb_u8(s, 0x03); sb_u8(s, 0x10);
}

static int open_sb(const struct sbuf *s, struct sfp_sframe **sf)
{
	SFP_OPTS(sfp_sframe_opts, o, .name = "test");

	return sfp_sframe__open_mem(s->b, s->n, &o, sf);
}

/* Open, expect err, free whatever came back. */
static bool expect(const struct sbuf *s, int err)
{
	struct sfp_sframe *sf = NULL;
	int r = open_sb(s, &sf);

	sfp_sframe__free(&sf);
	return ASSERT_EQ(r, err);
}

TEST(sframe_decode_baseline)
{
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_info info;
	struct sfp_sframe_row r;
	struct sbuf s;

	base_v2(&s, false);
	if (!ASSERT_OK(open_sb(&s, &sf)))
		return;
	sfp_sframe__info(sf, &info);
	ASSERT_EQ(info.version, 2);
	ASSERT_EQ(info.num_fdes, 2);
	ASSERT_FALSE(info.foreign_endian);
	ASSERT_EQ(sfp_sframe__num_funcs(sf), 2);
	ASSERT_OK(sfp_sframe__find(sf, 0x1005, &r));
	ASSERT_EQ(r.func_idx, 0);
	ASSERT_EQ(r.row_idx, 1);
	ASSERT_EQ(r.start, 0x1004);
	ASSERT_EQ(r.end, 0x1020);
	ASSERT_EQ(r.cfa.kind, SFP_LOC_REG);
	ASSERT_EQ(r.cfa.reg, SFP_DWARF_AMD64_SP);
	ASSERT_EQ(r.cfa.offset, 16);
	ASSERT_EQ(r.fp.kind, SFP_LOC_CFA_DEREF);
	ASSERT_EQ(r.fp.offset, -16);
	ASSERT_EQ(r.ra.kind, SFP_LOC_CFA_DEREF);
	ASSERT_EQ(r.ra.flags, SFP_LOC_F_FIXED);
	ASSERT_EQ(r.ra.offset, -8);
	ASSERT_OK(sfp_sframe__find(sf, 0x1003, &r));
	ASSERT_EQ(r.row_idx, 0);
	ASSERT_EQ(r.fp.kind, SFP_LOC_NONE);
	/* PCMASK: offset inside each 16-byte block. */
	ASSERT_OK(sfp_sframe__find(sf, 0x1100 + 3 * 16 + 7, &r));
	ASSERT_EQ(r.func_idx, 1);
	ASSERT_EQ(r.row_idx, 1);
	ASSERT_EQ(r.start, 6);
	ASSERT_EQ(r.end, 16);
	ASSERT_EQ(r.flags, SFP_ROW_PCMASK);
	ASSERT_OK(sfp_sframe__find(sf, 0x1100 + 2 * 16 + 5, &r));
	ASSERT_EQ(r.row_idx, 0);
	/* Gaps. */
	ASSERT_ERR(sfp_sframe__find(sf, 0xfff, &r), -ENOENT);
	ASSERT_ERR(sfp_sframe__find(sf, 0x1020, &r), -ENOENT);
	ASSERT_ERR(sfp_sframe__find(sf, 0x1140, &r), -ENOENT);
	ASSERT_ERR(sfp_sframe__find(sf, 0, &r), -ENOENT);
	ASSERT_ERR(sfp_sframe__row(sf, 0, 2, &r), -ENOENT);
	ASSERT_ERR(sfp_sframe__row(sf, 2, 0, &r), -ENOENT);
	ASSERT_ERR(sfp_sframe__func(sf, 2, NULL), -ENOENT);
	sfp_sframe__free(&sf);
	ASSERT_TRUE(sf == NULL);
	sfp_sframe__free(&sf);
	sfp_sframe__free(NULL);
}

TEST(sframe_decode_empty_and_truncated)
{
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_row r;
	struct sbuf s;
	char *out;

	base_v2(&s, false);
	if (ASSERT_OK(sfp_sframe__open_mem(s.b, 0, NULL, &sf))) {
		ASSERT_EQ(sfp_sframe__num_funcs(sf), 0);
		ASSERT_ERR(sfp_sframe__find(sf, 0x1000, &r), -ENOENT);
		out = dump_str(sf, false);
		ASSERT_STREQ(out, "");
		free(out);
	}
	sfp_sframe__free(&sf);
	s.n = 3;
	expect(&s, -EBADMSG);
	s.n = 27;
	expect(&s, -EBADMSG);
	base_v2(&s, false);
	s.n -= 1;	/* FRE sub-section cut */
	expect(&s, -EBADMSG);
	ASSERT_ERR(sfp_sframe__open_mem(NULL, 10, NULL, &sf), -EINVAL);
	ASSERT_ERR(sfp_sframe__open_mem(s.b, s.n, NULL, NULL), -EINVAL);
}

TEST(sframe_decode_header_errors)
{
	struct sbuf s;

	base_v2(&s, false);
	sb_put_at(&s, 0, 0x1234, 2);
	expect(&s, -EBADMSG);			/* bad magic */
	base_v2(&s, false);
	s.b[2] = 4;
	expect(&s, -EOPNOTSUPP);		/* version 4 */
	s.b[2] = 0;
	expect(&s, -EOPNOTSUPP);		/* version 0 */
	base_v2(&s, false);
	s.b[3] |= 0x8;
	expect(&s, -EBADMSG);			/* unknown flag */
	base_v2(&s, false);
	s.b[4] = 5;
	expect(&s, -EOPNOTSUPP);		/* unknown ABI */
	s.b[4] = 0;
	expect(&s, -EOPNOTSUPP);
	base_v2(&s, false);
	s.b[7] = 200;
	expect(&s, -EBADMSG);			/* aux header past the end */
	base_v2(&s, false);
	sb_put_at(&s, 8, 0xffffffff, 4);
	expect(&s, -EBADMSG);			/* overlong FDE count */
	base_v2(&s, false);
	sb_put_at(&s, 12, 0xffffffff, 4);
	expect(&s, -EBADMSG);			/* overlong FRE count */
	base_v2(&s, false);
	sb_put_at(&s, 16, 0xffffffff, 4);
	expect(&s, -EBADMSG);			/* fre_len past the end */
	base_v2(&s, false);
	sb_put_at(&s, 24, 0xfffffff0, 4);
	expect(&s, -EBADMSG);			/* freoff past the end */
	base_v2(&s, false);
	sb_put_at(&s, 20, 30, 4);
	expect(&s, -EBADMSG);			/* FDEs past the end */
	base_v2(&s, false);
	sb_put_at(&s, 12, 5, 4);
	expect(&s, -EBADMSG);			/* FDEs hold fewer FREs */
	sb_put_at(&s, 12, 3, 4);
	expect(&s, -EBADMSG);			/* FDEs hold more FREs */
	/* Version-specific flags: PCREL is not a v1 flag. */
	base_v2(&s, false);
	s.b[2] = 1;
	expect(&s, -EBADMSG);
}

TEST(sframe_decode_fde_fre_errors)
{
	struct sbuf s;

	base_v2(&s, false);
	sb_put_at(&s, OFF_FDE0 + 8, 100, 4);
	expect(&s, -EBADMSG);			/* FREs beyond the sub-section */
	base_v2(&s, false);
	s.b[OFF_FDE0 + 16] = 3;
	expect(&s, -EBADMSG);			/* FRE type 3 */
	base_v2(&s, false);
	s.b[OFF_FRE + 4] = 0x05 | 3 << 5;
	expect(&s, -EBADMSG);			/* data-word size code 3 */
	base_v2(&s, false);
	s.b[OFF_FRE + 4] = 0x09;
	expect(&s, -EBADMSG);			/* 4 words in a default FDE */
	base_v2(&s, false);
	s.b[OFF_FRE + 4] = 0x07;
	expect(&s, -EBADMSG);			/* 3 words: too many for AMD64 */
	base_v2(&s, false);
	s.b[OFF_FRE] = 5;
	expect(&s, -EBADMSG);			/* FRE starts go backwards */
	base_v2(&s, false);
	s.b[OFF_FDE1 + 17] = 0;
	expect(&s, -EBADMSG);			/* PCMASK with rep_size 0 */
	base_v2(&s, false);
	sb_put_at(&s, OFF_FDE0 + 12, 0x7fffffff, 4);
	expect(&s, -EBADMSG);			/* per-FDE FRE count overlong */
}

TEST(sframe_decode_sortedness)
{
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_func fn;
	struct sfp_sframe_row r;
	struct sbuf s;

	base_v2(&s, false);
	sb_put_at(&s, OFF_FDE1, (uint32_t)(0x0f00 - OFF_FDE1), 4);
	expect(&s, -EBADMSG);			/* SORTED set, not sorted */
	s.b[3] &= (uint8_t)~0x1;		/* gas object output: no flag */
	if (!ASSERT_OK(open_sb(&s, &sf)))
		return;
	ASSERT_OK(sfp_sframe__find(sf, 0x0f00 + 16 + 6, &r));
	ASSERT_EQ(r.func_idx, 1);
	ASSERT_EQ(r.row_idx, 1);
	ASSERT_OK(sfp_sframe__find(sf, 0x1004, &r));
	ASSERT_EQ(r.func_idx, 0);
	ASSERT_ERR(sfp_sframe__find(sf, 0x0f40, &r), -ENOENT);
	/* by FDE index, the stored order, not the sorted one */
	ASSERT_OK(sfp_sframe__func(sf, 0, &fn));
	ASSERT_EQ(fn.start, 0x1000);
	ASSERT_OK(sfp_sframe__func(sf, 1, &fn));
	ASSERT_EQ(fn.start, 0x0f00);
	ASSERT_OK(sfp_sframe__row(sf, 1, 1, &r));
	ASSERT_EQ(r.func_idx, 1);
	ASSERT_EQ(r.start, 6);		/* a PCMASK FDE: within the block */
	sfp_sframe__free(&sf);
}

static char last_msg[512];
static void grab(enum sfp_log_level l, const char *msg, void *ctx)
{
	(void)l;
	(void)ctx;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

TEST(sframe_decode_message_names_offset)
{
	sfp_log_fn old = sfp_set_log(grab, NULL);
	struct sbuf s;

	base_v2(&s, false);
	s.b[OFF_FRE + 4] = 0x05 | 3 << 5;
	expect(&s, -EBADMSG);
	sfp_set_log(old, NULL);
	ASSERT_TRUE(strstr(last_msg, "test: SFrame offset 0x47:") != NULL);
	ASSERT_TRUE(strstr(last_msg, "size code 3") != NULL);
	if (!strstr(last_msg, "offset 0x47"))
		sfp_test_fail_at(__FILE__, __LINE__, "message: %s", last_msg);
}

TEST(sframe_decode_big_endian)
{
	struct sfp_sframe *le = NULL, *be = NULL;
	struct sfp_sframe_info info;
	struct sbuf s, t;
	char *a, *b;

	base_v2(&s, false);
	base_v2(&t, true);
	memcpy(s.b + 200, t.b, t.n);	/* keep a pristine copy */
	if (!ASSERT_OK(open_sb(&s, &le)) || !ASSERT_OK(open_sb(&t, &be)))
		goto out;
	ASSERT_TRUE(memcmp(s.b + 200, t.b, t.n) == 0);	/* untouched */
	sfp_sframe__info(be, &info);
	ASSERT_TRUE(info.foreign_endian);
	a = dump_str(le, false);
	b = dump_str(be, false);
	if (a && b)
		text_eq("big-endian dump", a, b);
	free(a);
	free(b);
out:
	sfp_sframe__free(&le);
	sfp_sframe__free(&be);
}

TEST(sframe_decode_opts)
{
	struct {
		struct sfp_sframe_opts o;
		uint64_t future;
	} big = { .o = { .sz = sizeof(big) }, .future = 1 };
	struct sfp_sframe *sf = NULL;
	struct sbuf s;

	base_v2(&s, false);
	ASSERT_ERR(sfp_sframe__open_mem(s.b, s.n, &big.o, &sf), -EINVAL);
	big.future = 0;
	ASSERT_OK(sfp_sframe__open_mem(s.b, s.n, &big.o, &sf));
	sfp_sframe__free(&sf);
}

/*
 * v3, AMD64: one flexible FDE at 0x2000 (size 0x40), signal bit set.
 *   index @28 (16 bytes); FRE sub-section @44: attr (5) then
 *   FRE0 [00 05 08]                 sp+8 (words: ctrl 0x39 = r7|reg_p, 8)
 *        info 0x05 = SP, 2 words, 1 byte -> words {0x39, 8}
 *   FRE1 [10 0b 33 f8 00 33 00]     CFA *(fp-8), RA padding, FP *(fp+0)
 *   FRE2 [20 00]                    RA undefined
 */
#define V3_ATTR 44
static void base_v3(struct sbuf *s)
{
	memset(s, 0, sizeof(*s));
	sb_header(s, 3, 0x5, 3, 0, -8, 1, 3, 5 + 4 + 7 + 2, 0, 16);
	sb_uN(s, (uint64_t)(int64_t)(0x2000 - 28), 8);
	sb_uN(s, 0x40, 4);
	sb_uN(s, 0, 4);
	sb_uN(s, 3, 2);
	sb_u8(s, 0x80);		/* ADDR1, PCINC, signal */
	sb_u8(s, 1);		/* flex */
	sb_u8(s, 0);
	sb_u8(s, 0x00); sb_u8(s, 0x05); sb_u8(s, 0x39); sb_u8(s, 8);
	sb_u8(s, 0x10); sb_u8(s, 0x0b); sb_u8(s, 0x33); sb_u8(s, 0xf8);
	sb_u8(s, 0x00); sb_u8(s, 0x33); sb_u8(s, 0x00);
	sb_u8(s, 0x20); sb_u8(s, 0x00);
}

TEST(sframe_decode_v3_flex)
{
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_func fn;
	struct sfp_sframe_row r;
	struct sbuf s;
	char *out;

	base_v3(&s);
	if (!ASSERT_OK(open_sb(&s, &sf)))
		return;
	ASSERT_OK(sfp_sframe__func(sf, 0, &fn));
	ASSERT_EQ(fn.start, 0x2000);
	ASSERT_EQ(fn.fde_type, SFP_SFRAME_FDE_FLEX);
	ASSERT_TRUE(fn.signal);
	ASSERT_OK(sfp_sframe__find(sf, 0x2001, &r));
	ASSERT_EQ(r.cfa.kind, SFP_LOC_REG);
	ASSERT_EQ(r.cfa.reg, 7);
	ASSERT_EQ(r.cfa.offset, 8);
	ASSERT_EQ(r.flags, SFP_ROW_SIGNAL | SFP_ROW_FLEX);
	ASSERT_OK(sfp_sframe__find(sf, 0x201f, &r));
	ASSERT_EQ(r.cfa.kind, SFP_LOC_REG_DEREF);
	ASSERT_EQ(r.cfa.reg, 6);
	ASSERT_EQ(r.cfa.offset, -8);
	ASSERT_EQ(r.ra.kind, SFP_LOC_CFA_DEREF);
	ASSERT_EQ(r.ra.flags, SFP_LOC_F_FIXED | SFP_LOC_F_PADDING);
	ASSERT_EQ(r.fp.kind, SFP_LOC_REG_DEREF);
	ASSERT_EQ(r.fp.reg, 6);
	ASSERT_OK(sfp_sframe__find(sf, 0x203f, &r));
	ASSERT_EQ(r.ra.kind, SFP_LOC_UNDEFINED);
	ASSERT_TRUE(r.flags & SFP_ROW_RA_UNDEFINED);
	ASSERT_ERR(sfp_sframe__find(sf, 0x2040, &r), -ENOENT);
	out = dump_str(sf, false);
	if (ASSERT_NOT_NULL(out)) {
		ASSERT_TRUE(strstr(out, "size = 64 bytes, attr = \"SF\"\n") != NULL);
		ASSERT_TRUE(strstr(out, "    0000000000002010  (fp-8)    (fp+0)    U            \n") != NULL);
		ASSERT_TRUE(strstr(out, "    0000000000002020  RA undefined\n") != NULL);
	}
	free(out);
	sfp_sframe__free(&sf);
}

TEST(sframe_decode_v3_errors)
{
	struct sbuf s;

	base_v3(&s);
	s.b[V3_ATTR + 3] = 2;
	expect(&s, -EOPNOTSUPP);		/* unknown FDE type */
	base_v3(&s);
	s.b[3] |= 0x2;
	expect(&s, -EBADMSG);			/* FRAME_POINTER is not v3 */
	base_v3(&s);
	s.b[V3_ATTR + 5 + 1] = 0x07;		/* 3 words: not a flex shape */
	expect(&s, -EBADMSG);
	base_v3(&s);
	s.b[V3_ATTR + 5 + 2] = 0x38;		/* CFA ctrl without reg_p */
	expect(&s, -EBADMSG);
	base_v3(&s);
	s.b[V3_ATTR + 5 + 2] = 0x3d;		/* reserved bit */
	expect(&s, -EBADMSG);
	base_v3(&s);
	s.b[V3_ATTR + 9 + 4] = 0x01;		/* 5 words, word 2 not 0 */
	expect(&s, -EBADMSG);
	base_v3(&s);
	s.b[V3_ATTR + 9 + 1] = 0x09;		/* 4 words, word 2 is padding */
	expect(&s, -EBADMSG);
	base_v3(&s);
	sb_put_at(&s, 28 + 12, 100, 4);		/* attr beyond fre_len */
	expect(&s, -EBADMSG);
	base_v3(&s);
	s.b[V3_ATTR + 2] = 0x83;		/* FRE type 3 */
	expect(&s, -EBADMSG);
}

/* v1 PCMASK: no rep_size in v1; the 16-byte x86-64 PLT entry repeats.
 * (libsframe 2.40 compares low 8 bits instead and gets 0x1040 wrong.) */
TEST(sframe_lookup_v1_pcmask)
{
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_row r;
	struct sbuf s;

	memset(&s, 0, sizeof(s));
	sb_header(&s, 1, 0x1, 3, 0, -8, 1, 2, 6, 0, 17);
	sb_uN(&s, 0x1030, 4);		/* relative to the section */
	sb_uN(&s, 0x30, 4);
	sb_uN(&s, 0, 4);
	sb_uN(&s, 2, 4);
	sb_u8(&s, 0x10);
	sb_u8(&s, 0x00); sb_u8(&s, 0x03); sb_u8(&s, 0x08);
	sb_u8(&s, 0x0b); sb_u8(&s, 0x03); sb_u8(&s, 0x10);
	if (!ASSERT_OK(open_sb(&s, &sf)))
		return;
	ASSERT_OK(sfp_sframe__find(sf, 0x1031, &r));
	ASSERT_EQ(r.row_idx, 0);
	ASSERT_OK(sfp_sframe__find(sf, 0x103b, &r));
	ASSERT_EQ(r.row_idx, 1);
	ASSERT_EQ(r.cfa.offset, 16);
	ASSERT_OK(sfp_sframe__find(sf, 0x1040, &r));	/* next entry, 1st insn */
	ASSERT_EQ(r.row_idx, 0);
	ASSERT_EQ(r.cfa.offset, 8);
	ASSERT_OK(sfp_sframe__find(sf, 0x104f, &r));
	ASSERT_EQ(r.row_idx, 1);
	ASSERT_ERR(sfp_sframe__find(sf, 0x1060, &r), -ENOENT);
	sfp_sframe__free(&sf);
}

/* The hand-built AArch64 fixture in both byte orders decodes the same. */
TEST(sframe_decode_aarch64_fixtures)
{
	char p1[512], p2[512];
	struct sfp_sframe *a = NULL, *b = NULL;
	struct sfp_sframe_info ia, ib;
	struct sfp_sframe_row ra, rb;
	struct sfp_sframe_func fa;
	SFP_OPTS(sfp_sframe_opts, o, .section_addr = 0x10000);

	snprintf(p1, sizeof(p1), "%s/sframe/aarch64-v3-le.sframe", test_data_dir());
	snprintf(p2, sizeof(p2), "%s/sframe/aarch64-v2-be.sframe", test_data_dir());
	if (!ASSERT_OK(sfp_sframe__open_file(p1, &o, &a)) ||
	    !ASSERT_OK(sfp_sframe__open_file(p2, &o, &b)))
		goto out;
	sfp_sframe__info(a, &ia);
	sfp_sframe__info(b, &ib);
	ASSERT_EQ(ia.abi, SFP_SFRAME_ABI_AARCH64_LE);
	ASSERT_EQ(ib.abi, SFP_SFRAME_ABI_AARCH64_BE);
	ASSERT_TRUE(ib.foreign_endian);
	ASSERT_OK(sfp_sframe__func(a, 0, &fa));
	ASSERT_EQ(fa.pauth_key, 1);
	ASSERT_OK(sfp_sframe__find(a, 0xf00c, &ra));
	ASSERT_OK(sfp_sframe__find(b, 0xf00c, &rb));
	ASSERT_EQ(ra.cfa.reg, SFP_DWARF_AARCH64_FP);
	ASSERT_EQ(ra.cfa.offset, 32);
	ASSERT_EQ(ra.ra.kind, SFP_LOC_CFA_DEREF);
	ASSERT_EQ(ra.ra.offset, -8);
	ASSERT_EQ(ra.fp.offset, -16);
	ASSERT_TRUE(ra.flags & SFP_ROW_MANGLED_RA);
	ASSERT_TRUE(memcmp(&ra.cfa, &rb.cfa, sizeof(ra.cfa)) == 0);
	ASSERT_TRUE(memcmp(&ra.ra, &rb.ra, sizeof(ra.ra)) == 0);
	ASSERT_OK(sfp_sframe__find(a, 0xf000, &ra));
	ASSERT_EQ(ra.ra.kind, SFP_LOC_NONE);	/* RA still in LR */
	ASSERT_OK(sfp_sframe__find(a, 0xf045, &ra));
	ASSERT_EQ(ra.cfa.offset, 400);
	ASSERT_EQ(ra.ra.offset, -392);
out:
	sfp_sframe__free(&a);
	sfp_sframe__free(&b);
}

TEST(sframe_decode_s390x_fixture)
{
	char p[512];
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_row r;
	SFP_OPTS(sfp_sframe_opts, o, .section_addr = 0x10000);

	snprintf(p, sizeof(p), "%s/sframe/s390x-v2-be.sframe", test_data_dir());
	if (!ASSERT_OK(sfp_sframe__open_file(p, &o, &sf)))
		return;
	ASSERT_OK(sfp_sframe__find(sf, 0xe107, &r));
	ASSERT_EQ(r.cfa.reg, SFP_DWARF_S390X_SP);
	ASSERT_EQ(r.cfa.offset, 168);
	ASSERT_EQ(r.ra.kind, SFP_LOC_NOT_SAVED);
	ASSERT_EQ(r.fp.offset, -72);
	ASSERT_OK(sfp_sframe__find(sf, 0xe10e, &r));
	ASSERT_EQ(r.ra.kind, SFP_LOC_REG);
	ASSERT_EQ(r.ra.reg, 14);
	ASSERT_EQ(r.fp.kind, SFP_LOC_REG);
	ASSERT_EQ(r.fp.reg, 11);
	/* PLT: 32-byte blocks. */
	ASSERT_OK(sfp_sframe__find(sf, 0xe000 + 32 + 0xf, &r));
	ASSERT_EQ(r.row_idx, 1);
	ASSERT_OK(sfp_sframe__find(sf, 0xe000 + 32 + 0xd, &r));
	ASSERT_EQ(r.row_idx, 0);
	sfp_sframe__free(&sf);
}

/*
 * Long functions take the bisecting row search (more than 16 rows), and
 * more than 64 functions the bucket index (with one far-away function, so
 * the buckets are coarse): every row boundary of every function, and the
 * gaps between functions, on a generated v2 table with ADDR2 starts and
 * 2-byte data words.
 */
#define FAR 0x10000000u
#define FSTART(i) (0x10000u + (i) * (FSIZE + GAP) + ((i) == NF - 1 ? FAR : 0))
TEST(sframe_lookup_many_rows)
{
	enum { NF = 100, NR = 37, FSIZE = 0x400, GAP = 0x40 };
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_row r;
	uint32_t i, j, fre_off = 0, freoff = NF * 20;
	size_t fre_len = (size_t)NF * NR * (2 + 1 + 2);
	bool ok = true;

	/* Too big for struct sbuf: write the bytes directly. */
	{
		uint8_t *big = calloc(1, 28 + freoff + fre_len);
		size_t n = 0;

		if (!ASSERT_NOT_NULL(big))
			return;
#define P8(v) (big[n++] = (uint8_t)(v))
#define P16(v) (P8(v), P8((v) >> 8))
#define P32(v) (P16(v), P16((v) >> 16))
		P16(0xdee2); P8(2); P8(0x5); P8(3); P8(0); P8(-8); P8(0);
		P32(NF); P32(NF * NR); P32(fre_len); P32(0); P32(freoff);
		for (i = 0; i < NF; i++) {
			uint32_t start = FSTART(i);

			P32(start - (28 + i * 20));
			P32(FSIZE);
			P32(fre_off);
			P32(NR);
			P8(0x01);	/* ADDR2, PCINC */
			P8(0);
			P16(0);
			fre_off += NR * 5;
		}
		for (i = 0; i < NF; i++)
			for (j = 0; j < NR; j++) {
				P16(j * (FSIZE / NR));
				P8(0x23);	/* SP, 1 word, 2 bytes */
				P16(8 + 16 * j + i);
			}
		if (!ASSERT_OK(sfp_sframe__open_mem(big, n, NULL, &sf))) {
			free(big);
			return;
		}
		free(big);
	}
	for (i = 0; i < NF && ok; i++) {
		uint64_t fstart = FSTART(i);

		for (j = 0; j < NR && ok; j++) {
			uint64_t pc = fstart + j * (FSIZE / NR);
			uint64_t last = j + 1 < NR ? pc + FSIZE / NR - 1
						   : fstart + FSIZE - 1;

			ok = ASSERT_OK(sfp_sframe__find(sf, pc, &r)) &&
			     ASSERT_EQ(r.func_idx, i) && ASSERT_EQ(r.row_idx, j) &&
			     ASSERT_EQ(r.cfa.offset, 8 + 16 * j + i) &&
			     ASSERT_OK(sfp_sframe__find(sf, last, &r)) &&
			     ASSERT_EQ(r.row_idx, j);
		}
		ok = ok && ASSERT_ERR(sfp_sframe__find(sf, fstart + FSIZE, &r), -ENOENT) &&
		     ASSERT_ERR(sfp_sframe__find(sf, fstart + FSIZE + GAP - 1, &r), -ENOENT);
	}
	if (!ok)
		sfp_test_fail_at(__FILE__, __LINE__, "function %u row %u", i, j);
	/* what it holds: every function, row, distinct rule and bucket */
	{
		size_t want = sizeof(*sf) + strlen("<memory>") + 1 +
			      (size_t)NF * sizeof(struct sfp_sframe_lk) +
			      (size_t)NF * NR * sizeof(struct sfp_sframe_fre) +
			      (size_t)sf->num_rules * sizeof(*sf->rules) +
			      (size_t)sf->num_buckets * sizeof(uint32_t);

		ASSERT_NOT_NULL(sf->bucket);
		ASSERT_GE(sf->num_rules, NR);
		ASSERT_EQ(sfp_sframe__mem_bytes(sf), want);
		ASSERT_EQ(sfp_sframe__mem_bytes(NULL), 0);
	}
	sfp_sframe__free(&sf);
}

/* An opened table is immutable: concurrent lookups from several threads
 * give exactly the single-threaded answers. */
#include <pthread.h>
#include <stdlib.h>

struct thr_arg {
	const struct sfp_sframe *sf;
	uint64_t lo, hi;
	uint64_t sum;		/* of (row_idx + cfa offset) over all hits */
	uint64_t misses;
};

static void *thr_lookup(void *p)
{
	struct thr_arg *a = p;
	struct sfp_sframe_row r;
	uint64_t pc;
	int rep;

	for (rep = 0; rep < 20; rep++)
		for (pc = a->lo; pc < a->hi; pc += 3) {
			if (sfp_sframe__find(a->sf, pc, &r)) {
				a->misses++;
				continue;
			}
			a->sum += r.row_idx + (uint64_t)(int64_t)r.cfa.offset;
		}
	return NULL;
}

TEST(sframe_lookup_threads)
{
	char path[512];
	struct sfp_sframe *sf = NULL;
	struct thr_arg one, many[4];
	pthread_t th[4];
	struct vec v;
	int i;

	/* make check-aarch64 says so: its qemu-user (7.2 on this kernel)
	 * hangs in any program that starts a thread. */
	if (getenv("SFP_TEST_NO_THREADS")) {
		test_skip("no threads under this emulator");
		return;
	}
	snprintf(path, sizeof(path), "%s/test-x86_64-2.46.json", test_vectors_dir());
	if (vec_load(path, &v))
		return;
	{
		SFP_OPTS(sfp_sframe_opts, o, .section_addr = v.section_base);

		if (!ASSERT_OK(sfp_sframe__open_mem(v.content, v.size, &o, &sf)))
			goto out;
	}
	one = (struct thr_arg){ .sf = sf, .lo = 0x1000, .hi = 0x1200 };
	thr_lookup(&one);
	ASSERT_NE(one.sum, 0);
	for (i = 0; i < 4; i++) {
		many[i] = one;
		many[i].sum = many[i].misses = 0;
		if (pthread_create(&th[i], NULL, thr_lookup, &many[i]))
			th[i] = 0;
	}
	for (i = 0; i < 4; i++) {
		if (!ASSERT_TRUE(th[i] != 0))
			continue;
		pthread_join(th[i], NULL);
		ASSERT_EQ(many[i].sum, one.sum);
		ASSERT_EQ(many[i].misses, one.misses);
	}
out:
	sfp_sframe__free(&sf);
	vec_free(&v);
}

/* Dump functions report write errors instead of ignoring them. */
TEST(sframe_dump_write_error)
{
	struct sfp_sframe *sf = NULL;
	struct sbuf s;
	FILE *f;

	base_v2(&s, false);
	if (!ASSERT_OK(open_sb(&s, &sf)))
		return;
	f = fopen("/dev/full", "w");
	if (!f) {
		test_skip("no /dev/full");
		goto out;
	}
	setvbuf(f, NULL, _IONBF, 0);
	ASSERT_ERR(sfp_sframe__dump(sf, f), -EIO);
	clearerr(f);
	ASSERT_ERR(sfp_sframe__dump_json(sf, f), -EIO);
	fclose(f);
	ASSERT_ERR(sfp_sframe__dump(NULL, stdout), -EINVAL);
out:
	sfp_sframe__free(&sf);
}
