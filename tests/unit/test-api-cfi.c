// SPDX-License-Identifier: MIT
/* The CFI API through the shared library: every symbol is exported. */
#include <errno.h>
#include <stdlib.h>

#include <sfprof/cfi.h>
#include <sfprof/sframe.h>

#include "test.h"

TEST(api_cfi_exports)
{
	SFP_OPTS(sfp_table_opts, to, .no_cache = true);
	struct sfp_build_stats st = { .sz = sizeof(st) };
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_row row;
	void *sec = NULL;
	size_t size = 0;
	uint64_t addr = 0;
	char dir[256];

	if (ASSERT_OK(sfp_sframe__build_from_elf("/bin/true", NULL, &sec, &size,
						 &addr, &st))) {
		ASSERT_GE(st.emitted, 1);
		ASSERT_GE(size, 28);
	}
	free(sec);
	if (ASSERT_OK(sfp_sframe__open_elf_table("/bin/true", &to, &sf))) {
		struct sfp_sframe_func f;

		if (ASSERT_OK(sfp_sframe__func(sf, 0, &f)))
			ASSERT_OK(sfp_sframe__find(sf, f.start, &row));
	}
	sfp_sframe__free(&sf);
	ASSERT_ERR(sfp_sframe__open_elf_table_mem("junk", 4, "junk", &to, &sf),
		   -EBADMSG);
	ASSERT_OK(sfp_sframe_cache__dir(NULL, dir, sizeof(dir)));
	ASSERT_ERR(sfp_sframe_cache__dir(NULL, dir, 2), -ENAMETOOLONG);
	ASSERT_STREQ(sfp_cfi_skip__str(SFP_CFI_SKIP_FP_RULE), "fp-rule");
	ASSERT_ERR(sfp_sframe__build_from_elf_mem("x", 1, "x", NULL, &sec,
						  &size, &addr, NULL),
		   -EBADMSG);
}
