// SPDX-License-Identifier: MIT
/*
 * The frame-pointer-code classifier of `record --call-graph auto` on real
 * binaries: the same workload built with and without frame pointers
 * (tests/progs/progs.mk: perf-work, perf-work-nofp), programs with their
 * own .sframe, and Debian's /usr/bin programs: most are built without
 * frame pointers (Debian 12's default flags omit them on x86-64), perf
 * with them (its own Makefile adds -fno-omit-frame-pointer).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "record/fp-code.h"
#include "test.h"

static const char *prog(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/tests/progs/%s",
		 getenv("SFP_BUILD") ? getenv("SFP_BUILD") : "build", name);
	return path;
}

static void check(const char *path, bool want_fp)
{
	struct sfp_fp_code fc;

	if (access(path, R_OK)) {
		test_skip("%s is not here", path);
		return;
	}
	if (!ASSERT_OK(sfp_fp_code__classify(path, &fc)))
		return;
	printf("  %s: %u of %u functions FP-based\n", path, fc.fp_funcs,
	       fc.funcs);
	ASSERT_TRUE(fc.funcs > 0);
	ASSERT_TRUE(fc.fp_funcs <= fc.funcs);
	ASSERT_EQ(fc.fp_code, want_fp);
	/* Clear-cut either way, not a coin toss around the threshold (but
	 * crti's _init, never FP-based, weighs in a two-function program). */
	if (fc.funcs < 5)
		return;
	if (want_fp)
		ASSERT_TRUE(fc.fp_funcs * 4 >= fc.funcs * 3);
	else
		ASSERT_TRUE(fc.fp_funcs * 4 <= fc.funcs);
}

TEST(fpcode_built_with_frame_pointers)
{
	check(prog("perf-work"), true);
	check(prog("export-inline"), true);
}

TEST(fpcode_built_without_frame_pointers)
{
	check(prog("perf-work-nofp"), false);
	check(prog("bpf-deep"), false);
	check(prog("report-work"), false);
}

TEST(fpcode_own_sframe_without_frame_pointers)
{
	/* record-spin carries its own .sframe (-Wa,--gsframe). */
	check(prog("record-spin"), false);
}

TEST(fpcode_debian_binaries)
{
	check("/usr/bin/ls", false);
	check("/usr/bin/bash", false);
	check("/usr/bin/perf", true);
}

TEST(fpcode_errors)
{
	struct sfp_fp_code fc;
	char path[4096];
	FILE *f;

	ASSERT_EQ(sfp_fp_code__classify("/nonexistent/sfprof-fp", &fc),
		  -ENOENT);
	ASSERT_EQ(fc.funcs, 0u);
	snprintf(path, sizeof(path), "%s/fpcode-text", test_tmp_dir());
	f = fopen(path, "w");
	if (!ASSERT_TRUE(f != NULL))
		return;
	fputs("#!/bin/sh\necho not an ELF file\n", f);
	fclose(f);
	ASSERT_EQ(sfp_fp_code__classify(path, &fc), -EBADMSG);
	ASSERT_FALSE(fc.fp_code);
}
