// SPDX-License-Identifier: MIT
/*
 * sfp_sframe__validate(): what decoding tolerates but `sframe check`
 * rejects -- a section of 0 bytes and FDEs that repeat or overlap -- and
 * what stays valid (a header without FDEs, adjacent functions, a
 * zero-size FDE).  Sections come from the public builder.
 */
#include <errno.h>
#include <stdlib.h>

#include <sfprof/sframe.h>

#include "test.h"

static char log_buf[8192];
static size_t log_len;

static void grab(enum sfp_log_level level, const char *msg, void *ctx)
{
	int n;

	(void)level;
	(void)ctx;
	n = snprintf(log_buf + log_len, sizeof(log_buf) - log_len, "%s\n", msg);
	if (n > 0 && (size_t)n < sizeof(log_buf) - log_len)
		log_len += (size_t)n;
}

/* Build a v3 section of nf functions [start, start + size) and decode it. */
static int make(const uint64_t (*fns)[2], size_t nf, struct sfp_sframe **sf)
{
	SFP_OPTS(sfp_sframe_builder_opts, o, .version = 3,
		 .section_addr = 0x10000);
	SFP_OPTS(sfp_sframe_opts, so, .section_addr = 0x10000, .name = "t");
	struct sfp_sframe_builder *b = NULL;
	void *buf = NULL;
	size_t size = 0;
	int err;

	err = sfp_sframe_builder__new(&o, &b);
	for (size_t i = 0; !err && i < nf; i++) {
		struct sfp_sframe_func fn = { .start = fns[i][0],
					      .size = (uint32_t)fns[i][1] };
		struct sfp_sframe_row row = {
			.start = fns[i][0],
			.cfa = { .kind = SFP_LOC_REG, .reg = SFP_DWARF_AMD64_SP,
				 .offset = 8 },
			.ra = { .kind = SFP_LOC_CFA_DEREF,
				.flags = SFP_LOC_F_FIXED, .offset = -8 },
		};

		err = sfp_sframe_builder__add_func(b, &fn, &row,
						   fns[i][1] ? 1 : 0);
	}
	if (!err)
		err = sfp_sframe_builder__write(b, &buf, &size);
	if (!err)
		err = sfp_sframe__open_mem(buf, size, &so, sf);
	free(buf);
	sfp_sframe_builder__free(&b);
	return err;
}

static int validate(const struct sfp_sframe *sf)
{
	sfp_log_fn old;
	int err;

	log_len = 0;
	log_buf[0] = 0;
	old = sfp_set_log(grab, NULL);
	err = sfp_sframe__validate(sf);
	sfp_set_log(old, NULL);
	return err;
}

TEST(sframe_validate_empty_and_header_only)
{
	struct sfp_sframe *sf = NULL;
	uint8_t none = 0;

	ASSERT_ERR(sfp_sframe__validate(NULL), -EINVAL);
	/* 0 bytes: decodes (an unwinder can live with it), not valid. */
	if (ASSERT_OK(sfp_sframe__open_mem(&none, 0, NULL, &sf))) {
		ASSERT_ERR(validate(sf), -EBADMSG);
		ASSERT_TRUE(strstr(log_buf, "offset 0x0: empty section (0 bytes)"));
	}
	sfp_sframe__free(&sf);
	/* A header and no FDE: valid. */
	if (ASSERT_OK(make(NULL, 0, &sf))) {
		ASSERT_EQ(sfp_sframe__num_funcs(sf), 0);
		ASSERT_OK(validate(sf));
	}
	sfp_sframe__free(&sf);
}

TEST(sframe_validate_adjacent_is_valid)
{
	static const uint64_t fns[][2] = {
		{ 0x11000, 0x40 }, { 0x11040, 0x10 }, { 0x11050, 0 },
		{ 0x11050, 0x30 }, { 0x12000, 0x10 },
	};
	struct sfp_sframe *sf = NULL;

	if (ASSERT_OK(make(fns, 5, &sf)))
		ASSERT_OK(validate(sf));
	sfp_sframe__free(&sf);
}

TEST(sframe_validate_overlap_and_repeat)
{
	static const uint64_t fns[][2] = {
		{ 0x11000, 0x100 },	/* 0 */
		{ 0x11080, 0x100 },	/* 1: overlaps 0 */
		{ 0x11200, 0x20 },	/* 2 */
		{ 0x11200, 0x20 },	/* 3: repeats 2 */
		{ 0x11300, 0 },		/* 4 */
		{ 0x11300, 0 },		/* 5: repeats 4 (zero size) */
	};
	struct sfp_sframe *sf = NULL;

	if (!ASSERT_OK(make(fns, 6, &sf)))
		goto out;
	ASSERT_ERR(validate(sf), -EBADMSG);
	ASSERT_TRUE(strstr(log_buf, "FDE 1 [0x11080, 0x11180) overlaps FDE 0 [0x11000, 0x11100)"));
	ASSERT_TRUE(strstr(log_buf, "FDE 3 [0x11200, 0x11220) repeats FDE 2"));
	ASSERT_TRUE(strstr(log_buf, "FDE 5 [0x11300, 0x11300) repeats FDE 4"));
	/* Each message names the FDE's offset in the section. */
	ASSERT_TRUE(strstr(log_buf, "t: SFrame offset 0x"));
out:
	sfp_sframe__free(&sf);
}

TEST(sframe_validate_many_repeats_counted)
{
	enum { N = 20000 };
	uint64_t (*fns)[2] = calloc(N, sizeof(*fns));
	struct sfp_sframe *sf = NULL;
	char want[64];

	if (!ASSERT_TRUE(fns))
		return;
	for (size_t i = 0; i < N; i++) {
		fns[i][0] = 0x11000;
		fns[i][1] = 0x40;
	}
	if (ASSERT_OK(make((const uint64_t (*)[2])fns, N, &sf))) {
		ASSERT_ERR(validate(sf), -EBADMSG);
		snprintf(want, sizeof(want), "%d FDEs overlap or repeat", N - 1);
		ASSERT_TRUE(strstr(log_buf, want));
		/* 10 described, then the count: not 20,000 lines. */
		ASSERT_TRUE(strstr(log_buf, "FDE 10 ") && !strstr(log_buf, "FDE 11 "));
	}
	sfp_sframe__free(&sf);
	free(fns);
}
