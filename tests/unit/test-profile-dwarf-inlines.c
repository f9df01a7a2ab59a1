// SPDX-License-Identifier: MIT
/*
 * opts.dwarf_inlines (what sfprof report loads: perf report's inlined
 * frames, which perf shows for the frames of its dwarf unwinder only) on
 * real recordings of tests/progs/report-inline (main -> hot -> mix_many
 * -> mix and main -> warm -> mix, both inlined; main ->
 * scaled.constprop.0, which DWARF names "scaled"):
 *
 *  - perf record --call-graph dwarf: samples marked dwarf, the locs of
 *    their user frames carry the inline chain (and DWARF's name of the
 *    real function), no other loc does, and every loc's real function is
 *    the one the profile has without the option (no source files);
 *  - one file with an fp event and a dwarf event hitting the same
 *    addresses: a loc first met in an fp chain gets its chain when a
 *    dwarf frame meets it later, and the fp samples stay unmarked;
 *  - perf record -g and sfprof record (callchains recorded, nothing
 *    unwound from stack snapshots): no sample marked, no loc with a chain.
 */
#include "profile-test.h"

/* The workload, built here without sanitizers (as run-report.sh does) so
 * that the compiler's clone and inlining decisions are the plain ones. */
static const char *workload(void)
{
	static char out[512];
	static const char *path;

	if (!path) {
		pt_tmp(out, sizeof(out), "report-inline");
		path = pt_sh("cc -O2 -g -fno-omit-frame-pointer -o '%s' "
			     "tests/progs/report-inline.c 2>/dev/null", out)
			       ? out
			       : pt_fmt("%s/report-inline", pt_progs());
		if (path != out) {
			snprintf(out, sizeof(out), "%s", path);
			path = out;
		}
	}
	return path;
}

enum rec { REC_DWARF, REC_MIXED, REC_FP, REC_SFPROF, REC_N };

static const char *const rec_names[REC_N] = { "dwarf", "mixed", "fp",
					       "sfprof" };

/* The recording of kind k (made on first use); NULL: skipped or failed. */
static const char *recording(enum rec k, char *path, size_t len)
{
	static int state[REC_N];	/* 0 untried, 1 ok, -1 skip, -2 fail */
	char cmd[2048], nm[64];

	snprintf(nm, sizeof(nm), "inl-%s.data", rec_names[k]);
	pt_tmp(path, len, nm);
	if (!state[k]) {
		switch (k) {
		case REC_DWARF:
			snprintf(cmd, sizeof(cmd),
				 "perf record -q -e cpu-clock -F 1000 --call-graph dwarf,16384 -o %%1$s -- %s 400",
				 workload());
			break;
		case REC_MIXED:
			/* perf's per-event call-graph terms */
			snprintf(cmd, sizeof(cmd),
				 "perf record -q -e cpu-clock/call-graph=fp/ -e task-clock/call-graph=dwarf,stack-size=16384/ -F 1000 -o %%1$s -- %s 400",
				 workload());
			break;
		case REC_FP:
			snprintf(cmd, sizeof(cmd),
				 "perf record -q -e cpu-clock -F 1000 -g -o %%1$s -- %s 300",
				 workload());
			break;
		default:
			snprintf(cmd, sizeof(cmd),
				 "%s record -F 1000 -o %%1$s -- %s 300",
				 pt_sfprof(), workload());
			break;
		}
		if (pt_record(path, cmd))
			state[k] = 1;
		else
			state[k] = k == REC_SFPROF ? -2 : -1;
	}
	if (state[k] == -2) {
		PT_SFPROF_FAILED("sfprof record of report-inline failed");
		return NULL;
	}
	if (state[k] < 0) {
		test_skip("perf could not make the %s recording", rec_names[k]);
		return NULL;
	}
	return path;
}

static const struct sfp_profile_func *line_func(const struct sfp_profile *p,
						const struct sfp_profile_loc *l,
						uint32_t i)
{
	return sfp_profile__func(p, l->lines[i].func);
}

static const char *outer_name(const struct sfp_profile *p, uint32_t li)
{
	const struct sfp_profile_loc *l = sfp_profile__loc(p, li);

	return line_func(p, l, l->nr_lines - 1)->name;
}

/* Has loc li an inline chain (more than its real function's line)? */
static bool has_chain(const struct sfp_profile *p, uint32_t li)
{
	const struct sfp_profile_loc *l = sfp_profile__loc(p, li);

	return l->nr_lines > 1 || l->dwarf_name;
}

/* The locs of the user frames of samples marked dwarf: true in *hit. */
static bool dwarf_locs(const struct sfp_profile *p, bool *hit,
		       size_t *nr_dwarf)
{
	size_t i, j, n = sfp_profile__nr_samples(p);
	uint32_t locs[1024];

	*nr_dwarf = 0;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);
		size_t d = sfp_profile__stack(p, s->stack, locs, 1024);

		if (!s->dwarf)
			continue;
		(*nr_dwarf)++;
		for (j = 0; j < d && j < 1024; j++) {
			const struct sfp_profile_loc *l = sfp_profile__loc(p, locs[j]);
			const struct sfp_profile_func *f =
				line_func(p, l, l->nr_lines - 1);

			if (f->kind == SFP_PROFILE_USER)
				hit[locs[j]] = true;
		}
	}
	return true;
}

/* Names of loc li's lines, innermost first, as "a;b;c". */
static void chain_text(const struct sfp_profile *p, uint32_t li, char *buf,
		       size_t len)
{
	const struct sfp_profile_loc *l = sfp_profile__loc(p, li);
	size_t o = 0;
	uint32_t i;

	buf[0] = 0;
	for (i = 0; i < l->nr_lines && o < len; i++) {
		int w = snprintf(buf + o, len - o, "%s%s", i ? ";" : "",
				 line_func(p, l, i)->name);

		if (w < 0)
			break;
		o += (size_t)w;
	}
}

/*
 * The profile of a file with dwarf samples, loaded with dwarf_inlines,
 * against the same file loaded without: the chains where perf shows
 * them and nowhere else; the same real functions, without source files.
 */
static void check_dwarf_file(const char *path, bool mixed)
{
	SFP_OPTS(sfp_profile_opts, o, .dwarf_inlines = true);
	SFP_OPTS(sfp_profile_opts, so, .srclines = true);
	struct sfp_profile *p = NULL, *q = NULL, *r = NULL;
	bool *hit = NULL;
	size_t i, n, nr_dwarf = 0, hot = 0, warm = 0, scaled = 0, bad = 0;
	size_t differ = 0;
	char buf[1024], all[1024];

	if (!ASSERT_OK(sfp_profile__load(path, &o, &p)) ||
	    !ASSERT_OK(sfp_profile__load(path, NULL, &q)) ||
	    !ASSERT_OK(sfp_profile__load(path, &so, &r)))
		goto out;
	n = sfp_profile__nr_samples(p);
	/* the same frames make the same locs in the same order */
	if (!ASSERT_EQ(n, sfp_profile__nr_samples(q)) ||
	    !ASSERT_EQ(sfp_profile__nr_locs(p), sfp_profile__nr_locs(r)))
		goto out;
	hit = calloc(sfp_profile__nr_locs(p) + 1, sizeof(*hit));
	if (!ASSERT_NOT_NULL(hit) || !dwarf_locs(p, hit, &nr_dwarf))
		goto out;
	/* perf's --call-graph dwarf samples are unwound; the fp event's
	 * samples of a mixed file are not */
	ASSERT_GE(nr_dwarf, n / 4);
	if (mixed)
		ASSERT_TRUE(nr_dwarf < n);
	for (i = 0; i < sfp_profile__nr_locs(p); i++) {
		const struct sfp_profile_loc *l = sfp_profile__loc(p, (uint32_t)i);
		const char *on = outer_name(p, (uint32_t)i);

		if (!hit[i]) {
			/* kernel frames, fp chains, sample ips alone */
			if (has_chain(p, (uint32_t)i))
				bad++;
			continue;
		}
		chain_text(p, (uint32_t)i, buf, sizeof(buf));
		/* the chain srclines reads for every loc, names alike (the
		 * loc may have been made by an fp chain first and had its
		 * chain read when a dwarf frame met it) */
		chain_text(r, (uint32_t)i, all, sizeof(all));
		if (sfp_profile__loc(r, (uint32_t)i)->ip != l->ip ||
		    strcmp(buf, all))
			differ++;
		if (!strcmp(on, "hot") &&
		    (!strcmp(buf, "mix;mix_many;hot") ||
		     !strcmp(buf, "mix_many;hot")))
			hot++;
		if (!strcmp(buf, "mix;warm"))
			warm++;
		if (!strcmp(on, "scaled.constprop.0") && l->nr_lines == 1 &&
		    l->dwarf_name && !strcmp(l->dwarf_name, "scaled"))
			scaled++;
	}
	ASSERT_EQ(bad, 0);
	ASSERT_EQ(differ, 0);
	ASSERT_GE(hot, 1);
	ASSERT_GE(warm, 1);
	ASSERT_GE(scaled, 1);
	/* the same stacks and real functions as without the option, and
	 * no source files: a function keeps one identity in the report */
	for (i = 0; i < n; i++) {
		uint32_t a[1024], b[1024];
		size_t da = sfp_profile__stack(p, sfp_profile__sample(p, i)->stack, a, 1024);
		size_t db = sfp_profile__stack(q, sfp_profile__sample(q, i)->stack, b, 1024);
		size_t j;

		if (!ASSERT_EQ(da, db) ||
		    !ASSERT_EQ(sfp_profile__sample(p, i)->dwarf,
			       sfp_profile__sample(q, i)->dwarf))
			goto out;
		for (j = 0; j < da && j < 1024; j++) {
			const struct sfp_profile_loc *l = sfp_profile__loc(p, a[j]);
			uint32_t k;

			if (!ASSERT_STREQ(outer_name(p, a[j]), outer_name(q, b[j])))
				goto out;
			for (k = 0; k < l->nr_lines; k++)
				if (!ASSERT_TRUE(line_func(p, l, k)->file == NULL))
					goto out;
		}
	}
out:
	free(hit);
	sfp_profile__free(&p);
	sfp_profile__free(&q);
	sfp_profile__free(&r);
}

TEST(profile_dwarf_inlines_dwarf_file)
{
	char path[512];

	if (recording(REC_DWARF, path, sizeof(path)))
		check_dwarf_file(path, false);
}

TEST(profile_dwarf_inlines_mixed_file)
{
	char path[512];

	if (recording(REC_MIXED, path, sizeof(path)))
		check_dwarf_file(path, true);
}

/* Nothing unwound from stack snapshots: no sample marked, no chain. */
static void check_no_dwarf(enum rec k)
{
	SFP_OPTS(sfp_profile_opts, o, .dwarf_inlines = true);
	struct sfp_profile *p = NULL;
	char path[512];
	size_t i, marked = 0, chains = 0, n;

	if (!recording(k, path, sizeof(path)) ||
	    !ASSERT_OK(sfp_profile__load(path, &o, &p)))
		return;
	n = sfp_profile__nr_samples(p);
	ASSERT_GE(n, 10);
	for (i = 0; i < n; i++)
		marked += sfp_profile__sample(p, i)->dwarf;
	for (i = 0; i < sfp_profile__nr_locs(p); i++)
		chains += has_chain(p, (uint32_t)i);
	ASSERT_EQ(marked, 0);
	ASSERT_EQ(chains, 0);
	sfp_profile__free(&p);
}

TEST(profile_dwarf_inlines_fp_file)
{
	check_no_dwarf(REC_FP);
}

TEST(profile_dwarf_inlines_sfprof_file)
{
	check_no_dwarf(REC_SFPROF);
}
