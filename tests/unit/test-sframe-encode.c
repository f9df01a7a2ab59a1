// SPDX-License-Identifier: MIT
/*
 * SFrame encoder: the choices it makes, checked byte for byte against
 * sections computed by hand from the format (docs/sframe-encoder.md,
 * /work/shared/docs/sframe-format.md), and its error paths.
 */
#include <errno.h>
#include <stdlib.h>

#include <sfprof/sframe.h>

#include "test.h"

#define NONE ((struct sfp_loc){ .kind = SFP_LOC_NONE })
#define REG(r, o) ((struct sfp_loc){ .kind = SFP_LOC_REG, .reg = (r), .offset = (o) })
#define REGD(r, o) \
	((struct sfp_loc){ .kind = SFP_LOC_REG_DEREF, .reg = (r), .offset = (o) })
#define CFAD(o) ((struct sfp_loc){ .kind = SFP_LOC_CFA_DEREF, .offset = (o) })
#define FIXED(o) \
	((struct sfp_loc){ .kind = SFP_LOC_CFA_DEREF, \
			   .flags = SFP_LOC_F_FIXED, .offset = (o) })
#define PADFIX(o) \
	((struct sfp_loc){ .kind = SFP_LOC_CFA_DEREF, \
			   .flags = SFP_LOC_F_FIXED | SFP_LOC_F_PADDING, \
			   .offset = (o) })
#define NOTSAVED ((struct sfp_loc){ .kind = SFP_LOC_NOT_SAVED })
#define UNDEF ((struct sfp_loc){ .kind = SFP_LOC_UNDEFINED })

#define ROW(s, c, r, f) \
	((struct sfp_sframe_row){ .start = (s), .cfa = c, .ra = r, .fp = f })
#define ROWF(s, c, r, f, fl) \
	((struct sfp_sframe_row){ .start = (s), .cfa = c, .ra = r, .fp = f, \
				  .flags = (fl) })
#define RA_UNDEF_ROW(s) \
	((struct sfp_sframe_row){ .start = (s), .ra = UNDEF, \
				  .flags = SFP_ROW_RA_UNDEFINED })

#define AMD64_SP 7
#define AMD64_FP 6

/* Messages the library logged (the last one is kept). */
static char last_log[512];

static void save_log(enum sfp_log_level level, const char *msg, void *ctx)
{
	snprintf(last_log, sizeof(last_log), "%s", msg);
}

static bool mem_eq(const char *what, const uint8_t *got, size_t got_len,
		   const uint8_t *want, size_t want_len)
{
	size_t i, n = got_len < want_len ? got_len : want_len;

	for (i = 0; i < n && got[i] == want[i]; i++)
		;
	if (i == n && got_len == want_len)
		return true;
	printf("  %s: differs at byte %zu (got %zu bytes, want %zu)\n", what,
	       i, got_len, want_len);
	printf("  got: ");
	for (size_t k = 0; k < got_len; k++)
		printf("%02x%s", got[k], k + 1 < got_len ? " " : "\n");
	printf("  want:");
	for (size_t k = 0; k < want_len; k++)
		printf(" %02x", want[k]);
	printf("\n");
	return ASSERT_TRUE(false && "bytes differ");
}

/* Build a section of one function. */
static int build1(uint8_t version, uint8_t abi, uint64_t section_addr,
		  const struct sfp_sframe_func *fn,
		  const struct sfp_sframe_row *rows, size_t n, void **buf,
		  size_t *size)
{
	SFP_OPTS(sfp_sframe_builder_opts, o, .version = version, .abi = abi,
		 .section_addr = section_addr);
	struct sfp_sframe_builder *b = NULL;
	int err;

	*buf = NULL;
	*size = 0;
	/* Keep the library's last message for the tests to check. */
	sfp_set_log(save_log, NULL);
	last_log[0] = 0;
	err = sfp_sframe_builder__new(&o, &b);
	if (err)
		return err;
	err = sfp_sframe_builder__add_func(b, fn, rows, n);
	if (!err)
		err = sfp_sframe_builder__write(b, buf, size);
	sfp_sframe_builder__free(&b);
	return err;
}

/* The worked example of the format notes, as absolute-PC rows. */
#define AMD64_ROWS							\
	struct sfp_sframe_row amd64_rows[] = {				\
		ROW(0x1100, REG(AMD64_SP, 8), FIXED(-8), NONE),		\
		ROW(0x1101, REG(AMD64_SP, 16), FIXED(-8), CFAD(-16)),	\
		ROW(0x1104, REG(AMD64_FP, 16), FIXED(-8), CFAD(-16)),	\
	}

TEST(encode_amd64_v2_bytes)
{
	AMD64_ROWS;
	const struct sfp_sframe_func fn = { .start = 0x1100, .size = 0x10 };
	const uint8_t want[] = {
		/* header: magic, v2, SORTED|PCREL, AMD64, fixed FP 0, RA -8 */
		0xe2, 0xde, 0x02, 0x05, 0x03, 0x00, 0xf8, 0x00,
		0x01, 0, 0, 0,		/* 1 FDE */
		0x03, 0, 0, 0,		/* 3 FREs */
		0x0b, 0, 0, 0,		/* fre_len 11 */
		0x00, 0, 0, 0,		/* fdeoff */
		0x14, 0, 0, 0,		/* freoff = 1 x 20 */
		/* FDE: 0x1100 - (0x1000 + 28) = 0xe4 */
		0xe4, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x03, 0, 0, 0,
		0x00,			/* ADDR1, PCINC */
		0x00, 0, 0,		/* rep_size, padding */
		/* FREs: start, info (base | N << 1 | size << 5), words */
		0x00, 0x03, 0x08,	/* sp+8 */
		0x01, 0x05, 0x10, 0xf0,	/* sp+16, FP c-16 */
		0x04, 0x04, 0x10, 0xf0,	/* fp+16, FP c-16 */
	};
	void *buf = NULL;
	size_t size = 0;

	if (ASSERT_OK(build1(2, SFP_SFRAME_ABI_AMD64_LE, 0x1000, &fn,
			     amd64_rows, 3, &buf, &size)))
		mem_eq("amd64 v2", buf, size, want, sizeof(want));
	free(buf);
}

TEST(encode_amd64_v3_bytes)
{
	AMD64_ROWS;
	const struct sfp_sframe_func fn = { .start = 0x1100, .size = 0x10 };
	const uint8_t want[] = {
		0xe2, 0xde, 0x03, 0x05, 0x03, 0x00, 0xf8, 0x00,
		0x01, 0, 0, 0, 0x03, 0, 0, 0,
		0x10, 0, 0, 0,		/* fre_len: 5 + 11 */
		0x00, 0, 0, 0, 0x10, 0, 0, 0,	/* freoff = 1 x 16 */
		/* FDE index: i64 start, size, offset of the attributes */
		0xe4, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0,
		/* attributes: u16 num_fres, info, info2 (default), rep */
		0x03, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x03, 0x08,
		0x01, 0x05, 0x10, 0xf0,
		0x04, 0x04, 0x10, 0xf0,
	};
	void *buf = NULL;
	size_t size = 0;

	if (ASSERT_OK(build1(3, SFP_SFRAME_ABI_AMD64_LE, 0x1000, &fn,
			     amd64_rows, 3, &buf, &size)))
		mem_eq("amd64 v3", buf, size, want, sizeof(want));
	free(buf);
}

/* Row starts may also be given as offsets from the function start. */
TEST(encode_relative_row_starts)
{
	AMD64_ROWS;
	const struct sfp_sframe_func fn = { .start = 0x1100, .size = 0x10 };
	struct sfp_sframe_row rel[3];
	void *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;

	memcpy(rel, amd64_rows, sizeof(rel));
	for (int i = 0; i < 3; i++)
		rel[i].start -= 0x1100;
	if (ASSERT_OK(build1(3, 0, 0x1000, &fn, amd64_rows, 3, &a, &na)) &&
	    ASSERT_OK(build1(3, 0, 0x1000, &fn, rel, 3, &b, &nb)))
		mem_eq("relative starts", b, nb, a, na);
	free(a);
	free(b);
}

/* FRE start-address type follows the largest row start, word size the
 * largest word of each FRE. */
TEST(encode_size_choices)
{
	struct sfp_sframe_func fn = { .start = 0x4000, .size = 0x20000 };
	struct sfp_sframe_row rows[] = {
		ROW(0x4000, REG(AMD64_SP, 8), FIXED(-8), NONE),
		ROW(0x4001, REG(AMD64_SP, 0x100), FIXED(-8), NONE),
		ROW(0x4002, REG(AMD64_SP, 16), FIXED(-8), CFAD(-0x10000)),
		ROW(0x40ff, REG(AMD64_SP, -128), FIXED(-8), CFAD(127)),
	};
	void *buf = NULL;
	size_t size = 0;
	const uint8_t *p;

	/* Largest start 0xff: ADDR1 even though the function is large. */
	if (!ASSERT_OK(build1(2, 0, 0, &fn, rows, 4, &buf, &size)))
		return;
	p = buf;
	ASSERT_EQ(p[28 + 16] & 0xf, 0);		/* FDE info: ADDR1 */
	/* FRE 0: 1-byte words; FRE 1: 2 bytes (0x100); FRE 2: 4 bytes
	 * (-0x10000 needs them) for both words; FRE 3: -128/127 fit 1. */
	{
		const uint8_t want[] = {
			0x00, 0x03, 0x08,
			0x01, 0x23, 0x00, 0x01,
			0x02, 0x45, 0x10, 0, 0, 0, 0x00, 0x00, 0xff, 0xff,
			0xff, 0x05, 0x80, 0x7f,
		};
		mem_eq("sized FREs", p + 48, size - 48, want, sizeof(want));
	}
	free(buf);

	/* A row at 0x100 needs ADDR2, one at 0x10000 ADDR4. */
	rows[3].start = 0x4100;
	if (!ASSERT_OK(build1(2, 0, 0, &fn, rows, 4, &buf, &size)))
		return;
	ASSERT_EQ(((uint8_t *)buf)[28 + 16] & 0xf, 1);
	ASSERT_EQ(size, 48 + 21 + 4 * 1);	/* one more byte per start */
	free(buf);
	rows[3].start = 0x14000;
	if (!ASSERT_OK(build1(3, 0, 0, &fn, rows, 4, &buf, &size)))
		return;
	ASSERT_EQ(((uint8_t *)buf)[28 + 16 + 2] & 0xf, 2);
	ASSERT_EQ(size, 28 + 16 + 5 + 21 + 4 * 3);
	free(buf);
}

TEST(encode_aarch64_le_v3_bytes)
{
	const struct sfp_sframe_func fn = { .start = 0x10400, .size = 0x40,
					    .pauth_key = 1 };
	const struct sfp_sframe_row rows[] = {
		ROW(0x10400, REG(31, 0), NONE, NONE),
		ROWF(0x10404, REG(31, 16), CFAD(-8), CFAD(-16),
		     SFP_ROW_MANGLED_RA),
		ROWF(0x10408, REG(29, 16), CFAD(-8), CFAD(-16),
		     SFP_ROW_MANGLED_RA),
		ROW(0x1040c, REG(31, 16), CFAD(-8), NONE),
	};
	const uint8_t want[] = {
		/* no fixed RA on AArch64 */
		0xe2, 0xde, 0x03, 0x05, 0x02, 0x00, 0x00, 0x00,
		0x01, 0, 0, 0, 0x04, 0, 0, 0, 0x16, 0, 0, 0,
		0x00, 0, 0, 0, 0x10, 0, 0, 0,
		0xe4, 0x03, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0,
		0x04, 0x00, 0x20, 0x00, 0x00,	/* info: key B */
		0x00, 0x03, 0x00,		/* CFA only: RA in LR */
		0x04, 0x87, 0x10, 0xf8, 0xf0,	/* CFA, RA, FP; mangled */
		0x08, 0x86, 0x10, 0xf8, 0xf0,	/* FP-based */
		0x0c, 0x05, 0x10, 0xf8,		/* RA saved, FP not */
	};
	void *buf = NULL;
	size_t size = 0;

	if (ASSERT_OK(build1(3, SFP_SFRAME_ABI_AARCH64_LE, 0x10000, &fn,
			     rows, 4, &buf, &size)))
		mem_eq("aarch64 le", buf, size, want, sizeof(want));
	free(buf);
}

TEST(encode_aarch64_be_v2_bytes)
{
	const struct sfp_sframe_func fn = { .start = 0x10400, .size = 0x200 };
	const struct sfp_sframe_row rows[] = {
		ROW(0x10400, REG(31, 0), NONE, NONE),
		ROW(0x10500, REG(31, 0x210), CFAD(-0x208), CFAD(-0x210)),
	};
	const uint8_t want[] = {
		0xde, 0xe2, 0x02, 0x05, 0x01, 0x00, 0x00, 0x00,
		0, 0, 0, 0x01, 0, 0, 0, 0x02, 0, 0, 0, 0x0d,
		0, 0, 0, 0x00, 0, 0, 0, 0x14,
		0, 0, 0x03, 0xe4, 0, 0, 0x02, 0x00, 0, 0, 0, 0,
		0, 0, 0, 0x02, 0x01, 0x00, 0x00, 0x00,	/* ADDR2 */
		0x00, 0x00, 0x03, 0x00,
		0x01, 0x00, 0x27, 0x02, 0x10, 0xfd, 0xf8, 0xfd, 0xf0,
	};
	void *buf = NULL;
	size_t size = 0;

	if (ASSERT_OK(build1(2, SFP_SFRAME_ABI_AARCH64_BE, 0x10000, &fn,
			     rows, 2, &buf, &size)))
		mem_eq("aarch64 be", buf, size, want, sizeof(want));
	free(buf);
}

TEST(encode_aarch64_fp_without_ra)
{
	const struct sfp_sframe_func fn = { .start = 0x1000, .size = 0x10 };
	const struct sfp_sframe_row rows[] = {
		ROW(0x1000, REG(31, 16), NONE, CFAD(-16)),
	};
	void *buf = NULL;
	size_t size = 0;

	/* Default FDE words are positional: FP cannot come without RA. */
	last_log[0] = 0;
	ASSERT_ERR(build1(2, SFP_SFRAME_ABI_AARCH64_LE, 0, &fn, rows, 1, &buf,
			  &size), -EOPNOTSUPP);
	ASSERT_TRUE(strstr(last_log, "FP is saved but the RA has no rule"));
	/* v3 writes a flexible FDE: CFA pair, RA padding, FP pair. */
	if (ASSERT_OK(build1(3, SFP_SFRAME_ABI_AARCH64_LE, 0, &fn, rows, 1,
			     &buf, &size))) {
		const uint8_t *p = buf;
		/* 31 << 3 | reg_p = 249 does not fit an i8: 2-byte words */
		const uint8_t want[] = { 0x00, 0x2a, 0xf9, 0x00, 0x10, 0x00,
					 0x00, 0x00, 0x02, 0x00, 0xf0, 0xff };

		ASSERT_EQ(p[28 + 16 + 3], 1);	/* info2: FLEX */
		mem_eq("aarch64 flex", p + 49, size - 49, want, sizeof(want));
	}
	free(buf);
}

TEST(encode_s390x_v2_bytes)
{
	const struct sfp_sframe_func fn = { .start = 0x3000, .size = 0x120 };
	const struct sfp_sframe_row rows[] = {
		ROW(0x3000, REG(15, 160), NONE, NONE),
		ROW(0x3006, REG(15, 320), CFAD(-48), CFAD(-72)),
		ROW(0x3110, REG(11, 320), NOTSAVED, REG(16, 0)),
		ROW(0x3118, REG(15, 16160), REG(20, 0), NONE),
	};
	const uint8_t want[] = {
		0xde, 0xe2, 0x02, 0x05, 0x04, 0x00, 0x00, 0x00,
		0, 0, 0, 0x01, 0, 0, 0, 0x04, 0, 0, 0, 0x17,
		0, 0, 0, 0x00, 0, 0, 0, 0x14,
		0, 0, 0x0f, 0xe4, 0, 0, 0x01, 0x20, 0, 0, 0, 0,
		0, 0, 0, 0x04, 0x01, 0x00, 0x00, 0x00,
		/* CFA word (off - 160) / 8 */
		0x00, 0x00, 0x03, 0x00,
		0x00, 0x06, 0x07, 0x14, 0xd0, 0xb8,
		/* RA padding 0, FP in r16: (16 << 1) | 1 */
		0x01, 0x10, 0x06, 0x14, 0x00, 0x21,
		/* CFA word 2000 needs 2 bytes; RA in r20 */
		0x01, 0x18, 0x25, 0x07, 0xd0, 0x00, 0x29,
	};
	void *buf = NULL;
	size_t size = 0;

	if (ASSERT_OK(build1(2, SFP_SFRAME_ABI_S390X_BE, 0x2000, &fn, rows,
			     4, &buf, &size)))
		mem_eq("s390x v2", buf, size, want, sizeof(want));
	free(buf);
}

TEST(encode_s390x_unrepresentable)
{
	const struct sfp_sframe_func fn = { .start = 0x3000, .size = 0x20 };
	struct sfp_sframe_row rows[] = {
		ROW(0x3000, REG(15, 164), NONE, NONE),
	};
	void *buf = NULL;
	size_t size = 0;

	/* 164 is not 160 + 8k: no default encoding. */
	ASSERT_ERR(build1(2, SFP_SFRAME_ABI_S390X_BE, 0, &fn, rows, 1, &buf,
			  &size), -EOPNOTSUPP);
	ASSERT_TRUE(strstr(last_log, "not 160 + 8k"));
	/* An odd stack slot would read as a register number in v2. */
	rows[0] = ROW(0x3000, REG(15, 160), CFAD(-47), NONE);
	ASSERT_ERR(build1(2, SFP_SFRAME_ABI_S390X_BE, 0, &fn, rows, 1, &buf,
			  &size), -EOPNOTSUPP);
	/* Registers are v2-only in default FDEs: v3 goes flexible. */
	rows[0] = ROW(0x3000, REG(15, 160), REG(20, 0), NONE);
	if (ASSERT_OK(build1(3, SFP_SFRAME_ABI_S390X_BE, 0, &fn, rows, 1,
			     &buf, &size)))
		ASSERT_EQ(((uint8_t *)buf)[28 + 16 + 3], 1);
	free(buf);
}

/*
 * Flexible FDE control words: (reg << 3) | deref_p << 1 | reg_p; the base
 * bit of fre_info is 0; RA without a pair before an FP pair is a 0 word.
 */
TEST(encode_flex_control_words)
{
	const struct sfp_sframe_func fn = { .start = 0x401000, .size = 0x40 };
	const struct sfp_sframe_row rows[] = {
		/* DRAP: CFA = *(rbp - 8); FP = *(rbp + 0) */
		ROW(0x401000, REGD(AMD64_FP, -8), FIXED(-8), REGD(AMD64_FP, 0)),
		/* CFA = r10 + 0, RA = *(r16 + 8) (control word 131: 2 bytes) */
		ROW(0x401004, REG(10, 0), REGD(16, 8), NONE),
		/* RA = CFA - 16 (not the fixed -8), FP kept in rbx */
		ROW(0x401008, REG(AMD64_SP, 16), CFAD(-16), REG(3, 0)),
	};
	const uint8_t want_fres[] = {
		0x00, 0x0a, 0x33, 0xf8, 0x00, 0x33, 0x00,
		0x04, 0x28, 0x51, 0x00, 0x00, 0x00, 0x83, 0x00, 0x08, 0x00,
		0x08, 0x0c, 0x39, 0x10, 0x02, 0xf0, 0x19, 0x00,
	};
	void *buf = NULL;
	size_t size = 0;

	if (!ASSERT_OK(build1(3, 0, 0x400000, &fn, rows, 3, &buf, &size)))
		return;
	ASSERT_EQ(((uint8_t *)buf)[28 + 16 + 3], 1);	/* info2: FLEX */
	mem_eq("flex FREs", (uint8_t *)buf + 28 + 16 + 5, size - 49,
	       want_fres, sizeof(want_fres));
	free(buf);
	/* The same rows cannot be written as version 2. */
	last_log[0] = 0;
	ASSERT_ERR(build1(2, 0, 0x400000, &fn, rows, 3, &buf, &size),
		   -EOPNOTSUPP);
	ASSERT_TRUE(strstr(last_log, "row 0") && strstr(last_log, "CFA"));
}

/* A function that could be default stays flexible when asked to. */
TEST(encode_flex_kept)
{
	AMD64_ROWS;
	const struct sfp_sframe_func fn = { .start = 0x1100, .size = 0x10,
					    .fde_type = SFP_SFRAME_FDE_FLEX };
	const uint8_t want_fres[] = {
		0x00, 0x04, 0x39, 0x08,			/* sp+8, RA fixed */
		0x01, 0x0a, 0x39, 0x10, 0x00, 0x02, 0xf0, /* FP c-16 */
		0x04, 0x0a, 0x31, 0x10, 0x00, 0x02, 0xf0,
	};
	void *buf = NULL;
	size_t size = 0;

	if (ASSERT_OK(build1(3, 0, 0x1000, &fn, amd64_rows, 3, &buf, &size)))
		mem_eq("flex FREs", (uint8_t *)buf + 49, size - 49, want_fres,
		       sizeof(want_fres));
	free(buf);
	ASSERT_ERR(build1(2, 0, 0x1000, &fn, amd64_rows, 3, &buf, &size),
		   -EOPNOTSUPP);
	ASSERT_TRUE(strstr(last_log, "flexible FDEs need version 3"));
}

TEST(encode_signal_and_ra_undefined)
{
	const struct sfp_sframe_func fn = { .start = 0x1000, .size = 8,
					    .signal = true };
	const struct sfp_sframe_row rows[] = {
		ROW(0x1000, REG(AMD64_SP, 8), FIXED(-8), NONE),
		RA_UNDEF_ROW(0x1004),
	};
	struct sfp_sframe_func plain = fn;
	void *buf = NULL;
	size_t size = 0;

	if (ASSERT_OK(build1(3, 0, 0, &fn, rows, 2, &buf, &size))) {
		const uint8_t *a = (uint8_t *)buf + 28 + 16;
		const uint8_t want[] = { 0x02, 0x00, 0x80, 0x00, 0x00,
					 0x00, 0x03, 0x08, 0x04, 0x00 };

		mem_eq("signal + RA undefined", a, size - 44, want,
		       sizeof(want));
	}
	free(buf);
	ASSERT_ERR(build1(2, 0, 0, &fn, rows, 1, &buf, &size), -EOPNOTSUPP);
	ASSERT_TRUE(strstr(last_log, "signal"));
	plain.signal = false;
	ASSERT_ERR(build1(2, 0, 0, &plain, rows, 2, &buf, &size), -EOPNOTSUPP);
	ASSERT_TRUE(strstr(last_log, "row 1") &&
		    strstr(last_log, "RA-undefined rows need version 3"));
}

TEST(encode_sorts_fdes)
{
	SFP_OPTS(sfp_sframe_builder_opts, o, .version = 2,
		 .section_addr = 0x10000);
	struct sfp_sframe_builder *b = NULL;
	const uint64_t starts[] = { 0x3000, 0x1000, 0x2000 };
	struct sfp_sframe_row row = ROW(0, REG(AMD64_SP, 8), FIXED(-8), NONE);
	void *buf = NULL;
	size_t size = 0;
	int i;

	if (!ASSERT_OK(sfp_sframe_builder__new(&o, &b)))
		return;
	for (i = 0; i < 3; i++) {
		struct sfp_sframe_func fn = { .start = starts[i], .size = 0x10 };

		row.start = starts[i];
		ASSERT_OK(sfp_sframe_builder__add_func(b, &fn, &row, 1));
	}
	if (ASSERT_OK(sfp_sframe_builder__write(b, &buf, &size))) {
		const uint8_t *p = buf;

		ASSERT_EQ(p[3], 0x05);		/* SORTED | PCREL */
		for (i = 0; i < 3; i++) {
			int32_t rel;
			uint32_t fre_off;

			memcpy(&rel, p + 28 + 20 * i, 4);
			memcpy(&fre_off, p + 28 + 20 * i + 8, 4);
			/* start field address + rel = 0x1000 * (i + 1) */
			ASSERT_EQ(0x10000 + 28 + 20 * i + (int64_t)rel,
				  0x1000 * (i + 1));
			/* FREs stay with their function: 3 bytes each, in
			 * the order the FDEs are written. */
			ASSERT_EQ(fre_off, 3 * i);
		}
	}
	free(buf);
	sfp_sframe_builder__free(&b);
	ASSERT_TRUE(b == NULL);
}

TEST(encode_merge_rows_option)
{
	const struct sfp_sframe_func fn = { .start = 0x1000, .size = 0x10 };
	const struct sfp_sframe_row rows[] = {
		ROW(0x1000, REG(AMD64_SP, 8), FIXED(-8), NONE),
		ROW(0x1002, REG(AMD64_SP, 8), FIXED(-8), NONE),
		ROW(0x1004, REG(AMD64_SP, 16), FIXED(-8), NONE),
	};
	struct sfp_sframe_builder *b = NULL;
	void *buf = NULL;
	size_t size = 0;

	/* Without the option, rows are kept as given. */
	if (ASSERT_OK(build1(3, 0, 0, &fn, rows, 3, &buf, &size)))
		ASSERT_EQ(((uint8_t *)buf)[12], 3);
	free(buf);
	{
		SFP_OPTS(sfp_sframe_builder_opts, o,
			 .flags = SFP_SFRAME_BUILDER_F_MERGE_ROWS);

		if (!ASSERT_OK(sfp_sframe_builder__new(&o, &b)))
			return;
	}
	if (ASSERT_OK(sfp_sframe_builder__add_func(b, &fn, rows, 3)) &&
	    ASSERT_OK(sfp_sframe_builder__write(b, &buf, &size))) {
		const uint8_t want[] = { 0x02, 0, 0, 0, 0,
					 0x00, 0x03, 0x08, 0x04, 0x03, 0x10 };

		mem_eq("merged", (uint8_t *)buf + 44, size - 44, want,
		       sizeof(want));
	}
	free(buf);
	sfp_sframe_builder__free(&b);
}

TEST(encode_empty_and_rowless)
{
	const struct sfp_sframe_func fn = { .start = 0x1000, .size = 0x10 };
	void *buf = NULL;
	size_t size = 0;
	struct sfp_sframe_builder *b = NULL;

	/* No functions at all: a bare header. */
	if (ASSERT_OK(sfp_sframe_builder__new(NULL, &b)) &&
	    ASSERT_OK(sfp_sframe_builder__write(b, &buf, &size))) {
		const uint8_t want[28] = { 0xe2, 0xde, 3, 5, 3, 0, 0xf8, 0 };

		mem_eq("empty", buf, size, want, sizeof(want));
	}
	free(buf);
	sfp_sframe_builder__free(&b);
	/* A function without rows (a signal trampoline gas could not
	 * describe) is an FDE with no FREs. */
	if (ASSERT_OK(build1(3, 0, 0, &fn, NULL, 0, &buf, &size)))
		ASSERT_EQ(size, 28 + 16 + 5);
	free(buf);
}

TEST(encode_bad_options)
{
	struct sfp_sframe_builder *b = NULL;
	struct {
		struct sfp_sframe_builder_opts o;
		uint64_t extra;
	} big = { .o = { .sz = sizeof(big) }, .extra = 1 };

	{
		SFP_OPTS(sfp_sframe_builder_opts, o, .version = 1);
		ASSERT_ERR(sfp_sframe_builder__new(&o, &b), -EOPNOTSUPP);
	}
	{
		SFP_OPTS(sfp_sframe_builder_opts, o, .version = 4);
		ASSERT_ERR(sfp_sframe_builder__new(&o, &b), -EOPNOTSUPP);
	}
	{
		SFP_OPTS(sfp_sframe_builder_opts, o, .abi = 5);
		ASSERT_ERR(sfp_sframe_builder__new(&o, &b), -EINVAL);
	}
	{
		SFP_OPTS(sfp_sframe_builder_opts, o, .flags = 0x2);
		ASSERT_ERR(sfp_sframe_builder__new(&o, &b), -EINVAL);
	}
	/* Non-zero bytes beyond the fields this library knows. */
	ASSERT_ERR(sfp_sframe_builder__new(&big.o, &b), -EINVAL);
	ASSERT_ERR(sfp_sframe_builder__new(NULL, NULL), -EINVAL);
	ASSERT_TRUE(b == NULL);
	sfp_sframe_builder__free(&b);
	sfp_sframe_builder__free(NULL);
}

TEST(encode_fixed_offsets_options)
{
	SFP_OPTS(sfp_sframe_builder_opts, o, .no_fixed_ra = true);
	const struct sfp_sframe_func fn = { .start = 0x1000, .size = 0x10 };
	const struct sfp_sframe_row rows[] = {
		ROW(0x1000, REG(AMD64_SP, 8), CFAD(-8), NONE),
	};
	struct sfp_sframe_builder *b = NULL;
	void *buf = NULL;
	size_t size = 0;

	/* Without a fixed RA the RA is a data word. */
	if (ASSERT_OK(sfp_sframe_builder__new(&o, &b)) &&
	    ASSERT_OK(sfp_sframe_builder__add_func(b, &fn, rows, 1)) &&
	    ASSERT_OK(sfp_sframe_builder__write(b, &buf, &size))) {
		const uint8_t *p = buf;
		const uint8_t want[] = { 0x00, 0x05, 0x08, 0xf8 };

		ASSERT_EQ(p[6], 0);
		mem_eq("RA word", p + 49, size - 49, want, sizeof(want));
	}
	free(buf);
	sfp_sframe_builder__free(&b);
}

TEST(encode_invalid_rows)
{
	struct sfp_sframe_func fn = { .start = 0x1000, .size = 0x10 };
	struct sfp_sframe_row rows[3];
	struct sfp_sframe_builder *b = NULL;
	void *buf = NULL;
	size_t size = 0;

	rows[0] = ROW(0x1000, REG(AMD64_SP, 8), FIXED(-8), NONE);
	rows[1] = ROW(0x1004, REG(AMD64_SP, 16), FIXED(-8), NONE);
	rows[2] = ROW(0x1004, REG(AMD64_SP, 24), FIXED(-8), NONE);
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	ASSERT_TRUE(strstr(last_log, "row 2 starts at 0x1004, not after row 1"));
	rows[2].start = 0x1010;		/* at the end: beyond the function */
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	rows[2].start = 0x1008;
	rows[0].start = 0x1001;		/* neither 0 nor the function start */
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	rows[0].start = 0x1000;
	ASSERT_OK(build1(3, 0, 0, &fn, rows, 3, &buf, &size));
	free(buf);

	rows[1].cfa = CFAD(16);		/* the CFA cannot be CFA-based */
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	rows[1].cfa = REG(AMD64_SP, 16);
	rows[1].ra = FIXED(-16);	/* "fixed" but not the header's -8 */
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	rows[1].ra = FIXED(-8);
	rows[1].fp.kind = 99;
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	rows[1].fp = NOTSAVED;		/* only the RA can be "not saved" */
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	rows[1].fp = NONE;
	rows[1].flags = 0x100;
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	rows[1].flags = 0;

	fn.pc_type = SFP_SFRAME_PC_MASK;	/* PCMASK needs rep_size */
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	fn.pc_type = 7;
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	fn.pc_type = SFP_SFRAME_PC_INC;
	fn.pauth_key = 1;		/* key B only exists on AArch64 */
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	fn.pauth_key = 0;
	fn.num_rows = 2;		/* disagrees with the array */
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 3, &buf, &size), -EINVAL);
	fn.num_rows = 0;
	ASSERT_ERR(build1(3, 0, 0, &fn, NULL, 3, &buf, &size), -EINVAL);
	fn.start = UINT64_MAX - 4;
	ASSERT_ERR(build1(3, 0, 0, &fn, rows, 1, &buf, &size), -EINVAL);

	if (ASSERT_OK(sfp_sframe_builder__new(NULL, &b))) {
		ASSERT_ERR(sfp_sframe_builder__add_func(b, NULL, rows, 1),
			   -EINVAL);
		ASSERT_ERR(sfp_sframe_builder__write(b, NULL, &size), -EINVAL);
	}
	sfp_sframe_builder__free(&b);
}

TEST(encode_pcmask)
{
	const struct sfp_sframe_func fn = { .start = 0x1020, .size = 0x40,
					    .pc_type = SFP_SFRAME_PC_MASK,
					    .rep_size = 16 };
	struct sfp_sframe_row rows[] = {
		ROW(0, REG(AMD64_SP, 8), FIXED(-8), NONE),
		ROW(11, REG(AMD64_SP, 16), FIXED(-8), NONE),
	};
	void *buf = NULL;
	size_t size = 0;

	/* The x86-64 PLTn FDE that ld writes: rep 16, FREs at 0 and 11. */
	if (ASSERT_OK(build1(2, 0, 0x1000, &fn, rows, 2, &buf, &size))) {
		const uint8_t *p = buf;
		const uint8_t want[] = { 0x00, 0x03, 0x08, 0x0b, 0x03, 0x10 };

		ASSERT_EQ(p[28 + 16], 0x10);	/* info: PCMASK, ADDR1 */
		ASSERT_EQ(p[28 + 17], 16);	/* rep_size */
		mem_eq("plt", p + 48, size - 48, want, sizeof(want));
	}
	free(buf);
	rows[1].start = 16;		/* beyond the repeated block */
	ASSERT_ERR(build1(2, 0, 0x1000, &fn, rows, 2, &buf, &size), -EINVAL);
}

TEST(encode_limits)
{
	const struct sfp_sframe_func far = { .start = 0x100000000ull,
					     .size = 0x10 };
	struct sfp_sframe_row row = ROW(0, REG(AMD64_SP, 8), FIXED(-8), NONE);
	struct sfp_sframe_func big = { .start = 0x1000, .size = 0x20000 };
	struct sfp_sframe_row *rows;
	void *buf = NULL;
	size_t size = 0, i, n = 0x10001;

	/* v2's start field is 32 bits; v3's is 64. */
	ASSERT_ERR(build1(2, 0, 0, &far, &row, 1, &buf, &size), -EOPNOTSUPP);
	ASSERT_TRUE(strstr(last_log, "too far for version 2"));
	if (ASSERT_OK(build1(3, 0, 0, &far, &row, 1, &buf, &size))) {
		int64_t rel;

		memcpy(&rel, (uint8_t *)buf + 28, 8);
		ASSERT_EQ(rel, 0x100000000ll - 28);
	}
	free(buf);

	/* v3 counts rows in a u16. */
	rows = calloc(n, sizeof(*rows));
	if (!ASSERT_NOT_NULL(rows))
		return;
	for (i = 0; i < n; i++)
		rows[i] = ROW(i, REG(AMD64_SP, 8 + (int)(i & 1) * 8), FIXED(-8),
			      NONE);
	ASSERT_ERR(build1(3, 0, 0, &big, rows, n, &buf, &size), -EOPNOTSUPP);
	ASSERT_TRUE(strstr(last_log, "at most 65535"));
	if (ASSERT_OK(build1(2, 0, 0, &big, rows, n, &buf, &size))) {
		const uint8_t *p = buf;
		uint32_t num;

		memcpy(&num, p + 28 + 12, 4);
		ASSERT_EQ(num, n);
		ASSERT_EQ(p[28 + 16] & 0xf, 2);	/* ADDR4: last start 0x10000 */
	}
	free(buf);
	free(rows);
}

/* write() leaves the builder usable: add more, write again. */
TEST(encode_write_twice)
{
	SFP_OPTS(sfp_sframe_builder_opts, o, .version = 3);
	struct sfp_sframe_builder *b = NULL;
	struct sfp_sframe_func fn = { .start = 0x2000, .size = 0x10 };
	struct sfp_sframe_row row = ROW(0x2000, REG(AMD64_SP, 8), FIXED(-8), NONE);
	void *one = NULL, *two = NULL;
	size_t n1 = 0, n2 = 0;

	if (!ASSERT_OK(sfp_sframe_builder__new(&o, &b)))
		return;
	ASSERT_OK(sfp_sframe_builder__add_func(b, &fn, &row, 1));
	ASSERT_OK(sfp_sframe_builder__write(b, &one, &n1));
	fn.start = row.start = 0x1000;
	ASSERT_OK(sfp_sframe_builder__add_func(b, &fn, &row, 1));
	if (ASSERT_OK(sfp_sframe_builder__write(b, &two, &n2))) {
		const uint8_t *p = two;
		int64_t rel0, rel1;
		uint32_t off0, off1;

		ASSERT_EQ(n2, n1 + 16 + 5 + 3);
		ASSERT_EQ(p[8], 2);			/* two FDEs */
		memcpy(&rel0, p + 28, 8);
		memcpy(&rel1, p + 28 + 16, 8);
		memcpy(&off0, p + 28 + 12, 4);
		memcpy(&off1, p + 28 + 16 + 12, 4);
		/* Sorted again, and each FRE block follows its FDE. */
		ASSERT_EQ(28 + rel0, 0x1000);
		ASSERT_EQ(28 + 16 + rel1, 0x2000);
		ASSERT_EQ(off0, 0);
		ASSERT_EQ(off1, 5 + 3);
	}
	free(one);
	free(two);
	sfp_sframe_builder__free(&b);
}

/*
 * A flexible FDE's padding word means "RA not saved" only without a fixed
 * RA offset; with one (AMD64) readers take it for the fixed slot, so "not
 * saved" cannot be written there (found by fuzz-sframe-json).
 */
TEST(encode_flex_not_saved_needs_no_fixed_ra)
{
	const struct sfp_sframe_func fn = { .start = 0x1000, .size = 0x10,
					    .fde_type = SFP_SFRAME_FDE_FLEX };
	const struct sfp_sframe_row rows[] = {
		ROW(0x1000, REG(AMD64_SP, 16), NOTSAVED, CFAD(-16)),
	};
	void *buf = NULL;
	size_t size = 0;

	ASSERT_ERR(build1(3, SFP_SFRAME_ABI_AMD64_LE, 0, &fn, rows, 1, &buf,
			  &size), -EOPNOTSUPP);
	ASSERT_TRUE(strstr(last_log, "would read as the header's fixed c-8"));
	/* Without a fixed RA (AArch64) it is the padding word. */
	{
		struct sfp_sframe_row a64 = ROW(0x1000, REG(31, 16), NOTSAVED,
						CFAD(-16));

		if (ASSERT_OK(build1(3, SFP_SFRAME_ABI_AARCH64_LE, 0, &fn,
				     &a64, 1, &buf, &size))) {
			const uint8_t want[] = { 0x00, 0x2a, 0xf9, 0x00, 0x10,
						 0x00, 0x00, 0x00, 0x02, 0x00,
						 0xf0, 0xff };

			mem_eq("aarch64 not saved", (uint8_t *)buf + 49,
			       size - 49, want, sizeof(want));
		}
		free(buf);
	}
	/* ... and "not saved" with no FP pair after it has no encoding. */
	{
		struct sfp_sframe_row a64 = ROW(0x1000, REG(31, 16), NOTSAVED,
						NONE);

		ASSERT_ERR(build1(3, SFP_SFRAME_ABI_AARCH64_LE, 0, &fn, &a64, 1,
				  &buf, &size), -EOPNOTSUPP);
		ASSERT_TRUE(strstr(last_log, "padding word without an FP pair"));
	}
}
