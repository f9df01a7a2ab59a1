// SPDX-License-Identifier: MIT
/*
 * opts.srclines on a real recording (sfprof record of report-work-dbg,
 * built with -g): locs get source lines, and the always-inlined body()
 * shows as an inner line of hot_leaf's locs; the outermost line keeps the
 * name the profile gives without srclines (what perf script prints).
 */
#include "profile-test.h"

static const char *recording(char *path, size_t len)
{
	static int state;
	char cmd[1024];

	pt_tmp(path, len, "dbg.data");
	if (!state) {
		snprintf(cmd, sizeof(cmd),
			 "%s record -F 1000 -o %%1$s -- %s/report-work-dbg 300",
			 pt_sfprof(), pt_progs());
		state = pt_record(path, cmd) ? 1 : -1;
	}
	if (state < 0) {
		PT_SFPROF_FAILED("sfprof record of report-work-dbg failed");
		return NULL;
	}
	return path;
}

static const char *outer_name(const struct sfp_profile *p, uint32_t li)
{
	const struct sfp_profile_loc *l = sfp_profile__loc(p, li);

	return sfp_profile__func(p, l->lines[l->nr_lines - 1].func)->name;
}

TEST(profile_srclines_inlines)
{
	SFP_OPTS(sfp_profile_opts, o, .srclines = true);
	struct sfp_profile *p = NULL, *q = NULL;
	char path[512];
	size_t i, hot = 0, inl = 0;

	if (!recording(path, sizeof(path)))
		return;
	if (!ASSERT_OK(sfp_profile__load(path, &o, &p)) ||
	    !ASSERT_OK(sfp_profile__load(path, NULL, &q)) ||
	    !ASSERT_EQ(sfp_profile__nr_samples(p), sfp_profile__nr_samples(q)))
		goto out;
	for (i = 0; i < sfp_profile__nr_locs(p); i++) {
		const struct sfp_profile_loc *l = sfp_profile__loc(p, (uint32_t)i);
		const struct sfp_profile_func *f0 =
			sfp_profile__func(p, l->lines[0].func);
		const struct sfp_profile_func *fo =
			sfp_profile__func(p, l->lines[l->nr_lines - 1].func);

		if (strcmp(fo->name, "hot_leaf"))
			continue;
		hot++;
		if (!ASSERT_NOT_NULL(fo->file) ||
		    !ASSERT_NOT_NULL(strstr(fo->file, "report-work.c")))
			goto out;
		if (l->nr_lines >= 2 && !strcmp(f0->name, "body") &&
		    l->lines[0].line > 0 && f0->file &&
		    strstr(f0->file, "report-work.c"))
			inl++;
	}
	ASSERT_GE(hot, 1);
	/* the samples in hot_leaf are in its inlined loop */
	ASSERT_GE(inl, 1);
	/* the same stacks, the same outer names as without srclines */
	for (i = 0; i < sfp_profile__nr_samples(p); i++) {
		uint32_t a[256], b[256];
		size_t da = sfp_profile__stack(p, sfp_profile__sample(p, i)->stack, a, 256);
		size_t db = sfp_profile__stack(q, sfp_profile__sample(q, i)->stack, b, 256);
		size_t j;

		if (!ASSERT_EQ(da, db))
			goto out;
		for (j = 0; j < da && j < 256; j++)
			if (!ASSERT_STREQ(outer_name(p, a[j]), outer_name(q, b[j])))
				goto out;
	}
out:
	sfp_profile__free(&p);
	sfp_profile__free(&q);
}
