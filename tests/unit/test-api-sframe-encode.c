// SPDX-License-Identifier: MIT
/*
 * The encoder through the shared library: the builder functions are
 * exported, and what they write opens with the exported decoder.
 */
#include <errno.h>
#include <stdlib.h>

#include <sfprof/sframe.h>

#include "test.h"

TEST(api_builder_exported)
{
	SFP_OPTS(sfp_sframe_builder_opts, o, .version = 3,
		 .section_addr = 0x10000);
	SFP_OPTS(sfp_sframe_opts, so, .section_addr = 0x10000);
	struct sfp_sframe_func fn = { .start = 0x11000, .size = 0x20 };
	struct sfp_sframe_row rows[2] = {
		{ .start = 0x11000,
		  .cfa = { .kind = SFP_LOC_REG, .reg = SFP_DWARF_AMD64_SP, .offset = 8 },
		  .ra = { .kind = SFP_LOC_CFA_DEREF, .flags = SFP_LOC_F_FIXED, .offset = -8 } },
		{ .start = 0x11004,
		  .cfa = { .kind = SFP_LOC_REG, .reg = SFP_DWARF_AMD64_SP, .offset = 16 },
		  .ra = { .kind = SFP_LOC_CFA_DEREF, .flags = SFP_LOC_F_FIXED, .offset = -8 },
		  .fp = { .kind = SFP_LOC_CFA_DEREF, .offset = -16 } },
	};
	struct sfp_sframe_builder *b = NULL;
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_row got;
	void *buf = NULL;
	size_t size = 0;

	if (!ASSERT_OK(sfp_sframe_builder__new(&o, &b)))
		return;
	ASSERT_OK(sfp_sframe_builder__add_func(b, &fn, rows, 2));
	if (ASSERT_OK(sfp_sframe_builder__write(b, &buf, &size)) &&
	    ASSERT_OK(sfp_sframe__open_mem(buf, size, &so, &sf))) {
		ASSERT_OK(sfp_sframe__find(sf, 0x11010, &got));
		ASSERT_EQ(got.start, 0x11004);
		ASSERT_EQ(got.cfa.offset, 16);
		ASSERT_EQ(got.fp.offset, -16);
		ASSERT_ERR(sfp_sframe__find(sf, 0x11020, &got), -ENOENT);
	}
	sfp_sframe__free(&sf);
	sfp_sframe_builder__free(&b);
	free(buf);
}
