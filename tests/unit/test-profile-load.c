// SPDX-License-Identifier: MIT
/*
 * The profile model on real recordings made here: perf record -g (frame
 * pointers), perf record --call-graph dwarf, sfprof record (deferred user
 * chains) and a dwarf file converted to the deferred form.  Every sample's
 * frames, as the profile holds them, must print exactly as `sfprof script`
 * prints that sample; for perf's own fp file they must also agree with
 * `perf script`.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>

#include "profile-test.h"
#include "report/report.h"

enum rec { REC_FP, REC_DWARF, REC_SFPROF, REC_DEFERRED, REC_N };

static const char *rec_names[REC_N] = { "fp", "dwarf", "sfprof", "deferred" };
static int rec_state[REC_N];	/* 0 untried, 1 ok, -1 failed */

static bool perf_usable(void)
{
	static int ok;
	char out[512];

	if (!ok)
		ok = pt_sh("perf record -q -e cpu-clock -o %s true >/dev/null 2>&1",
			   pt_tmp(out, sizeof(out), "probe.data")) ? 1 : -1;
	return ok > 0;
}

/* The recording of kind k (made on first use); NULL: test skipped. */
static const char *recording(enum rec k, char *path, size_t len)
{
	char cmd[2048], src[512];

	char nm[64];

	snprintf(nm, sizeof(nm), "%s.data", rec_names[k]);
	pt_tmp(path, len, nm);
	cmd[0] = 0;
	if (rec_state[k])
		goto done;
	rec_state[k] = -1;
	switch (k) {
	case REC_FP:
		if (!perf_usable())
			break;
		snprintf(cmd, sizeof(cmd),
			 "perf record -q -e cpu-clock -F 2000 -g -o %%1$s -- %s/perf-work 250",
			 pt_progs());
		break;
	case REC_DWARF:
		if (!perf_usable())
			break;
		snprintf(cmd, sizeof(cmd),
			 "perf record -q -e cpu-clock -F 1000 --call-graph dwarf,16384 -o %%1$s -- %s/perf-work-nofp 250",
			 pt_progs());
		break;
	case REC_SFPROF:
		snprintf(cmd, sizeof(cmd),
			 "%s record -F 1000 -o %%1$s -- %s/perf-work-nofp 250",
			 pt_sfprof(), pt_progs());
		break;
	case REC_DEFERRED:
		if (!recording(REC_DWARF, src, sizeof(src)))
			break;
		snprintf(cmd, sizeof(cmd), "%s convert --deferred -i %s -o %%1$s",
			 pt_sfprof(), src);
		break;
	default:
		break;
	}
	if (cmd[0] && strchr(cmd, '%')) {
		if (pt_record(path, cmd))
			rec_state[k] = 1;
		else if (strncmp(cmd, "perf ", 5))
			rec_state[k] = -2;	/* sfprof failed: not a skip */
	}
done:
	if (rec_state[k] == -2) {
		PT_SFPROF_FAILED("sfprof could not make the %s recording",
				 rec_names[k]);
		return NULL;
	}
	if (rec_state[k] < 0) {
		test_skip("perf could not make the %s recording", rec_names[k]);
		return NULL;
	}
	return path;
}

/*
 * Compare each sample's frames with the script output block of the same
 * position.  Returns the number of samples compared, -1 after a failure.
 */
static long compare(const struct sfp_profile *p, const struct pt_script *s,
		    bool exact, long *same_lines, long *all_lines)
{
	size_t i, j, n = sfp_profile__nr_samples(p);
	uint32_t locs[2048];
	char buf[8192];

	if (!ASSERT_EQ(n, s->nr))
		return -1;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *sm = sfp_profile__sample(p, i);
		size_t d = sfp_profile__stack(p, sm->stack, locs, 2048);
		const char *comm = sfp_profile__string(p, sm->comm);
		const char *h = s->b[i].header;

		while (*h == ' ')
			h++;
		if (exact && !ASSERT_TRUE(!strncmp(h, comm, strlen(comm)))) {
			fprintf(stderr, "  sample %zu: comm %s, header %s\n", i,
				comm, s->b[i].header);
			return -1;
		}
		if (exact && !ASSERT_EQ(d, s->b[i].nr)) {
			fprintf(stderr, "  sample %zu (%s): %zu frames, script %zu\n",
				i, s->b[i].header, d, s->b[i].nr);
			return -1;
		}
		for (j = 0; j < d && j < 2048; j++) {
			pt_frame_line(p, locs[j], buf, sizeof(buf));
			(*all_lines)++;
			if (j < s->b[i].nr && !strcmp(buf, s->b[i].frames[j])) {
				(*same_lines)++;
				continue;
			}
			if (exact) {
				fprintf(stderr, "  sample %zu frame %zu:\n  profile %s\n  script  %s\n",
					i, j, buf,
					j < s->b[i].nr ? s->b[i].frames[j] : "-");
				ASSERT_TRUE(false);
				return -1;
			}
		}
	}
	return (long)n;
}

static void check_file(enum rec k, bool no_merge)
{
	SFP_OPTS(sfp_profile_opts, o, .no_merge = no_merge);
	struct sfp_profile *p = NULL;
	struct pt_script s = { 0 };
	char path[512], out[512], name[64];
	long same = 0, all = 0, n;

	if (!recording(k, path, sizeof(path)))
		return;
	snprintf(name, sizeof(name), "%s%s.script", rec_names[k],
		 no_merge ? "-nomerge" : "");
	pt_tmp(out, sizeof(out), name);
	/* --no-inline: the profile keeps one frame a return address, as
	 * script does without perf's "(inlined)" lines */
	if (!ASSERT_TRUE(pt_sh("%s script --no-inline %s -i %s > %s",
			       pt_sfprof(),
			       no_merge ? "--no-merge-callchains" : "", path,
			       out)))
		return;
	if (!ASSERT_OK(sfp_profile__load(path, &o, &p)))
		return;
	if (!ASSERT_TRUE(pt_script_read(out, &s)))
		goto out;
	n = compare(p, &s, true, &same, &all);
	if (ASSERT_GE(n, 20))
		ASSERT_EQ(same, all);
	/* frames were compared: merged samples have at least one each */
	if (!no_merge)
		ASSERT_GE(all, n);
out:
	pt_script_free(&s);
	sfp_profile__free(&p);
}

TEST(profile_fp_equals_script)
{
	check_file(REC_FP, false);
}

TEST(profile_dwarf_equals_script)
{
	check_file(REC_DWARF, false);
}

TEST(profile_sfprof_record_equals_script)
{
	check_file(REC_SFPROF, false);
}

TEST(profile_deferred_equals_script)
{
	check_file(REC_DEFERRED, false);
}

TEST(profile_deferred_no_merge_equals_script)
{
	check_file(REC_DEFERRED, true);
}

/* Deferred stitching: the converted file gives the dwarf file's stacks. */
TEST(profile_deferred_stitched_like_dwarf)
{
	struct sfp_profile *a = NULL, *b = NULL, *c = NULL;
	char pa[512], pb[512];
	size_t i, na, merged = 0, unmerged = 0, user = 0, names = 0, boundary = 0;
	uint32_t la[512], lb[512];
	SFP_OPTS(sfp_profile_opts, nm, .no_merge = true);

	if (!recording(REC_DWARF, pa, sizeof(pa)) ||
	    !recording(REC_DEFERRED, pb, sizeof(pb)))
		return;
	if (!ASSERT_OK(sfp_profile__load(pa, NULL, &a)) ||
	    !ASSERT_OK(sfp_profile__load(pb, NULL, &b)) ||
	    !ASSERT_OK(sfp_profile__load(pb, &nm, &c)))
		goto out;
	na = sfp_profile__nr_samples(a);
	if (!ASSERT_EQ(na, sfp_profile__nr_samples(b)) ||
	    !ASSERT_EQ(na, sfp_profile__nr_samples(c)))
		goto out;
	/* as a multiset of (tid, time, stack text): delivery order differs */
	for (i = 0; i < na; i++) {
		const struct sfp_profile_sample *sb = sfp_profile__sample(b, i);
		const struct sfp_profile_sample *sc = sfp_profile__sample(c, i);
		size_t j, k, db, da;
		bool found = false;

		if (sc->unmerged)
			unmerged++;
		if (sb->unmerged)
			continue;
		merged++;
		db = sfp_profile__stack(b, sb->stack, lb, 512);
		for (k = 0; k < na && !found; k++) {
			const struct sfp_profile_sample *sa = sfp_profile__sample(a, k);

			if (sa->tid != sb->tid || sa->time != sb->time)
				continue;
			found = true;
			da = sfp_profile__stack(a, sa->stack, la, 512);
			if (!ASSERT_EQ(da, db))
				goto out;
			for (j = 0; j < da && j < 512; j++) {
				const struct sfp_profile_loc *x = sfp_profile__loc(a, la[j]);
				const struct sfp_profile_loc *y = sfp_profile__loc(b, lb[j]);

				/* dwarf mode names callers by call site
				 * (ra - 1); the deferred chain holds ra */
				bool caller = j > 0 && sfp_profile__func(a, x->lines[0].func)->kind ==
						SFP_PROFILE_USER &&
					sfp_profile__func(a, sfp_profile__loc(a, la[j - 1])->lines[0].func)->kind ==
						SFP_PROFILE_USER;

				const char *na_ = sfp_profile__func(a, x->lines[0].func)->name;
				const char *nb_ = sfp_profile__func(b, y->lines[0].func)->name;

				if (!ASSERT_EQ(x->addr + caller, y->addr))
					goto out;
				/* a call to a noreturn function that ends its
				 * caller: ra is past the caller's end, ra - 1
				 * inside; only there may the names differ */
				if (strcmp(na_, nb_)) {
					if (!ASSERT_TRUE(caller))
						goto out;
					boundary++;
				}
				names++;
				if (sfp_profile__func(b, y->lines[0].func)->kind ==
				    SFP_PROFILE_USER)
					user++;
			}
		}
		if (!ASSERT_TRUE(found))
			goto out;
	}
	ASSERT_TRUE(boundary * 100 <= names);
	/* almost every sample got its user part; unmerged, none did */
	ASSERT_GE(merged * 100, na * 95);
	ASSERT_GE(user, merged);
	ASSERT_GE(unmerged * 100, na * 95);
out:
	sfp_profile__free(&a);
	sfp_profile__free(&b);
	sfp_profile__free(&c);
}

/* perf's own reading of its fp file: >= 99% of the frame lines agree. */
TEST(profile_fp_agrees_with_perf_script)
{
	struct sfp_profile *p = NULL;
	struct pt_script s = { 0 };
	char path[512], out[512];
	long same = 0, all = 0;

	if (!recording(REC_FP, path, sizeof(path)))
		return;
	pt_tmp(out, sizeof(out), "fp.perf-script");
	if (!ASSERT_TRUE(pt_sh("perf script --no-inline -i %s > %s 2>/dev/null",
			       path, out)))
		return;
	if (!ASSERT_OK(sfp_profile__load(path, NULL, &p)) ||
	    !ASSERT_TRUE(pt_script_read(out, &s)))
		goto out;
	if (compare(p, &s, false, &same, &all) < 0)
		goto out;
	fprintf(stderr, "  fp: %ld of %ld frame lines as perf script\n", same,
		all);
	ASSERT_GE(same * 100, all * 99);
out:
	pt_script_free(&s);
	sfp_profile__free(&p);
}

/* The tree is consistent: depths, parents before children, locs valid. */
TEST(profile_tables_consistent)
{
	struct sfp_profile *p = NULL;
	char path[512];
	size_t i, hits = 0;

	if (!recording(REC_FP, path, sizeof(path)))
		return;
	if (!ASSERT_OK(sfp_profile__load(path, NULL, &p)))
		return;
	ASSERT_EQ(sfp_profile__node(p, 0)->parent, UINT32_MAX);
	for (i = 1; i < sfp_profile__nr_nodes(p); i++) {
		const struct sfp_profile_node *n = sfp_profile__node(p, (uint32_t)i);

		if (!ASSERT_TRUE(n->parent < i) ||
		    !ASSERT_EQ(n->depth, sfp_profile__node(p, n->parent)->depth + 1) ||
		    !ASSERT_TRUE(n->loc < sfp_profile__nr_locs(p)))
			goto out;
	}
	for (i = 0; i < sfp_profile__nr_locs(p); i++) {
		const struct sfp_profile_loc *l = sfp_profile__loc(p, (uint32_t)i);
		const struct sfp_profile_func *f;

		if (!ASSERT_GE(l->nr_lines, 1))
			goto out;
		f = sfp_profile__func(p, l->lines[0].func);
		if (!ASSERT_NOT_NULL(f))
			goto out;
		if (l->mapping != UINT32_MAX &&
		    !ASSERT_NOT_NULL(sfp_profile__mapping(p, l->mapping)))
			goto out;
		if (!strcmp(f->name, "spin"))
			hits++;
	}
	ASSERT_GE(hits, 1);
	ASSERT_GE(sfp_profile__nr_events(p), 1);
	ASSERT_STREQ(sfp_profile__event(p, 0)->name, "cpu-clock");
	ASSERT_TRUE(sfp_profile__event(p, 0)->sample_freq == 2000);
	ASSERT_NOT_NULL(sfp_profile__cmdline(p));
	ASSERT_NOT_NULL(sfp_profile__hostname(p));
	ASSERT_NOT_NULL(strstr(sfp_profile__cmdline(p), "perf-work"));
	/* out of range: no crash, NULL */
	ASSERT_TRUE(sfp_profile__loc(p, UINT32_MAX) == NULL);
	ASSERT_EQ(sfp_profile__stack(p, UINT32_MAX, NULL, 0), 0);
out:
	sfp_profile__free(&p);
}

/* The report of p under o, as text (NULL on a failure). */
static char *report_text(const struct sfp_profile *p,
			 const struct sfp_report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!ASSERT_NOT_NULL(f))
		return NULL;
	if (!ASSERT_OK(sfp_report_print(p, o, f))) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

/*
 * merge_samples against every sample kept: the merged profile holds, in
 * order of first appearance, one sample per distinct (pid, tid, cpu,
 * stack, comm, event, flags) with the count, the summed period, the
 * first's time and the number of the last of the samples it stands for;
 * and the report prints the same from either.
 */
static void check_merge(enum rec k)
{
	SFP_OPTS(sfp_profile_opts, om, .merge_samples = true);
	struct sfp_profile *p = NULL, *m = NULL;
	struct sfp_profile_sample *want = NULL;
	size_t i, j, n, nw = 0;
	char path[512];
	static const struct sfp_report_opts views[] = {
		{ .children = true, .keys = { SFP_REPORT_COMM, SFP_REPORT_DSO,
					      SFP_REPORT_SYM }, .nr_keys = 3,
		  .graph = SFP_REPORT_GRAPH, .graph_limit = 0.5 },
		{ .keys = { SFP_REPORT_PID, SFP_REPORT_SYM }, .nr_keys = 2,
		  .graph = SFP_REPORT_FOLDED, .callee = true },
		{ .children = true, .keys = { SFP_REPORT_SYM }, .nr_keys = 1,
		  .graph = SFP_REPORT_NONE, .plain = true },
	};

	if (!recording(k, path, sizeof(path)))
		return;
	if (!ASSERT_OK(sfp_profile__load(path, NULL, &p)) ||
	    !ASSERT_OK(sfp_profile__load(path, &om, &m)))
		goto out;
	n = sfp_profile__nr_samples(p);
	want = calloc(n ? n : 1, sizeof(*want));
	if (!ASSERT_NOT_NULL(want))
		goto out;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);

		if (!ASSERT_EQ(s->count, 1) || !ASSERT_EQ(s->last, i))
			goto out;
		for (j = 0; j < nw; j++) {
			const struct sfp_profile_sample *w = &want[j];

			if (w->pid == s->pid && w->tid == s->tid &&
			    w->cpu == s->cpu && w->stack == s->stack &&
			    w->comm == s->comm && w->event == s->event &&
			    w->ip_loc == s->ip_loc && w->dwarf == s->dwarf &&
			    w->truncated == s->truncated &&
			    w->unmerged == s->unmerged)
				break;
		}
		if (j == nw)
			want[nw++] = *s;
		else {
			want[j].count++;
			want[j].period += s->period;
			want[j].last = (uint32_t)i;
		}
	}
	/* merging is worth it here, and it must not merge everything */
	ASSERT_TRUE(nw < n);
	ASSERT_GE(nw, 2);
	if (!ASSERT_EQ(sfp_profile__nr_samples(m), nw))
		goto out;
	for (j = 0; j < nw; j++) {
		const struct sfp_profile_sample *g = sfp_profile__sample(m, j);

		const struct sfp_profile_sample *w = &want[j];

		/* both profiles intern in the same order: same indices */
		if (!ASSERT_EQ(g->time, w->time) ||
		    !ASSERT_EQ(g->period, w->period) ||
		    !ASSERT_EQ(g->count, w->count) ||
		    !ASSERT_EQ(g->last, w->last) ||
		    !ASSERT_EQ(g->pid, w->pid) || !ASSERT_EQ(g->tid, w->tid) ||
		    !ASSERT_EQ(g->cpu, w->cpu) ||
		    !ASSERT_EQ(g->stack, w->stack) ||
		    !ASSERT_EQ(g->comm, w->comm) ||
		    !ASSERT_EQ(g->event, w->event) ||
		    !ASSERT_EQ(g->ip_loc, w->ip_loc) ||
		    !ASSERT_EQ(g->truncated, w->truncated) ||
		    !ASSERT_EQ(g->unmerged, w->unmerged) ||
		    !ASSERT_EQ(g->dwarf, w->dwarf))
			break;
	}
	for (i = 0; i < ARRAY_SIZE(views); i++) {
		char *a = report_text(p, &views[i]), *b = report_text(m, &views[i]);

		if (ASSERT_NOT_NULL(a) && ASSERT_NOT_NULL(b)) {
			ASSERT_GE(strlen(a), 200);
			ASSERT_STREQ(a, b);
		}
		free(a);
		free(b);
	}
out:
	free(want);
	sfp_profile__free(&p);
	sfp_profile__free(&m);
}

TEST(profile_merge_samples_fp)
{
	check_merge(REC_FP);
}

TEST(profile_merge_samples_dwarf)
{
	check_merge(REC_DWARF);
}

TEST(profile_merge_samples_deferred)
{
	check_merge(REC_DEFERRED);
}

/* max_depth keeps the leaf side and marks the sample. */
TEST(profile_max_depth)
{
	SFP_OPTS(sfp_profile_opts, o, .max_depth = 3);
	struct sfp_profile *p = NULL, *q = NULL;
	char path[512];
	size_t i, trunc = 0;
	uint32_t a[4096], b[8];

	if (!recording(REC_FP, path, sizeof(path)))
		return;
	if (!ASSERT_OK(sfp_profile__load(path, NULL, &p)) ||
	    !ASSERT_OK(sfp_profile__load(path, &o, &q)) ||
	    !ASSERT_EQ(sfp_profile__nr_samples(p), sfp_profile__nr_samples(q)))
		goto out;
	for (i = 0; i < sfp_profile__nr_samples(p); i++) {
		const struct sfp_profile_sample *x = sfp_profile__sample(p, i);
		const struct sfp_profile_sample *y = sfp_profile__sample(q, i);
		size_t dx = sfp_profile__stack(p, x->stack, a, 4096);
		size_t dy = sfp_profile__stack(q, y->stack, b, 8), j;

		if (!ASSERT_EQ(dy, dx > 3 ? 3 : dx) ||
		    !ASSERT_EQ(y->truncated, dx > 3))
			goto out;
		trunc += y->truncated;
		for (j = 0; j < dy; j++)
			if (!ASSERT_EQ(sfp_profile__loc(p, a[j])->ip,
				       sfp_profile__loc(q, b[j])->ip))
				goto out;
	}
	ASSERT_GE(trunc, 1);
out:
	sfp_profile__free(&p);
	sfp_profile__free(&q);
}

/* Descriptors this process has open. */
static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

/*
 * keep_files: the same profile, with the symbolized files still open
 * until the profile is freed; without it the load leaves none open.
 */
TEST(profile_keep_files)
{
	SFP_OPTS(sfp_profile_opts, keep, .keep_files = true);
	struct sfp_profile *p = NULL, *q = NULL;
	char path[512];
	long base, mid;
	size_t i;

	if (!recording(REC_FP, path, sizeof(path)))
		return;
	base = open_fds();
	if (!ASSERT_GE(base, 3) || !ASSERT_OK(sfp_profile__load(path, NULL, &p)))
		goto out;
	if (!ASSERT_EQ(open_fds(), base) ||
	    !ASSERT_OK(sfp_profile__load(path, &keep, &q)))
		goto out;
	/* the test program and libc at least */
	mid = open_fds();
	ASSERT_GE(mid, base + 2);
	if (!ASSERT_EQ(sfp_profile__nr_samples(p), sfp_profile__nr_samples(q)) ||
	    !ASSERT_EQ(sfp_profile__nr_locs(p), sfp_profile__nr_locs(q)))
		goto out;
	for (i = 0; i < sfp_profile__nr_locs(p); i++)
		if (!ASSERT_STREQ(sfp_profile__func(p, sfp_profile__loc(p, i)->lines[0].func)->name,
				  sfp_profile__func(q, sfp_profile__loc(q, i)->lines[0].func)->name))
			goto out;
	sfp_profile__free(&q);
	ASSERT_EQ(open_fds(), base);
out:
	sfp_profile__free(&p);
	sfp_profile__free(&q);
}

TEST(profile_errors)
{
	struct sfp_profile *p = NULL;
	char path[512];
	static const char junk[] = "PERFILE2 this is not a perf.data file at all";
	struct { size_t sz; bool no_merge; char pad[64]; } big;

	ASSERT_ERR(sfp_profile__load("/nonexistent/perf.data", NULL, &p),
		   -ENOENT);
	ASSERT_TRUE(p == NULL);
	ASSERT_ERR(sfp_profile__load(NULL, NULL, &p), -EINVAL);
	ASSERT_ERR(sfp_profile__load_mem(junk, sizeof(junk), NULL, &p),
		   -EBADMSG);
	ASSERT_TRUE(p == NULL);
	/* unknown non-zero option bytes are refused */
	memset(&big, 0, sizeof(big));
	big.sz = sizeof(big);
	big.pad[40] = 1;
	ASSERT_ERR(sfp_profile__load(pt_tmp(path, sizeof(path), "x"),
				     (const void *)&big, &p),
		   -EINVAL);
	sfp_profile__free(&p);
	sfp_profile__free(NULL);
}
