// SPDX-License-Identifier: MIT
/*
 * The SFrame API through the shared library: every decoder entry point
 * must be exported and usable from outside.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <sfprof/sframe.h>

#include "test.h"

TEST(api_sframe_exports)
{
	char path[512];
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_info info;
	struct sfp_sframe_func fn;
	struct sfp_sframe_row row;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	SFP_OPTS(sfp_sframe_opts, o, .section_addr = 0x10000);

	snprintf(path, sizeof(path), "%s/sframe/aarch64-v3-le.sframe",
		 test_data_dir());
	if (!ASSERT_OK(sfp_sframe__open_file(path, &o, &sf)))
		return;
	sfp_sframe__info(sf, &info);
	ASSERT_EQ(info.version, 3);
	ASSERT_EQ(sfp_sframe__num_funcs(sf), 2);
	ASSERT_OK(sfp_sframe__func(sf, 1, &fn));
	ASSERT_EQ(fn.start, 0xf040);
	ASSERT_OK(sfp_sframe__row(sf, 1, 1, &row));
	ASSERT_OK(sfp_sframe__find(sf, 0xf044, &row));
	ASSERT_EQ(row.cfa.offset, 400);
	ASSERT_ERR(sfp_sframe__find(sf, 0xf060, &row), -ENOENT);
	f = open_memstream(&buf, &len);
	if (ASSERT_NOT_NULL(f)) {
		ASSERT_OK(sfp_sframe__dump(sf, f));
		ASSERT_OK(sfp_sframe__dump_json(sf, f));
		fclose(f);
		ASSERT_GE(len, 500);
	}
	free(buf);
	{
		SFP_OPTS(sfp_sframe_file_opts, fo, .section_addr = 1);
		ASSERT_ERR(sfp_sframe__write_file(NULL, NULL, 0, &fo), -EINVAL);
	}
	sfp_sframe__free(&sf);
}
