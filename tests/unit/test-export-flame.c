// SPDX-License-Identifier: MIT
/*
 * The flamegraph and speedscope writers against a real recording of
 * tests/progs/flame-work (no frame pointers, sfprof record): the files are
 * parsed back and every stack, weight and tree total compared with the
 * profile they were written from.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/export.h>
#include <sfprof/profile.h>

#include "common/json.h"
#include "export/flame-json.h"
#include "profile-test.h"
#include "test.h"

static struct sfp_profile *work_profile(void)
{
	static struct sfp_profile *p;
	static bool tried;
	char path[4096], cmd[4096];

	if (tried)
		return p;
	tried = true;
	pt_tmp(path, sizeof(path), "flame-work.data");
	snprintf(cmd, sizeof(cmd), "%s record -q -F 999 -o %%1$s -- %s/flame-work 400",
		 pt_sfprof(), pt_progs());
	if (!pt_record(path, cmd))
		return NULL;
	if (sfp_profile__load(path, NULL, &p))
		p = NULL;
	return p;
}

/* Export to memory. */
static int export_mem(const struct sfp_profile *p, const char *fmt,
		      const struct sfp_export_opts *o, char **buf, size_t *len)
{
	FILE *m = open_memstream(buf, len);
	int err;

	if (!m)
		return -ENOMEM;
	err = sfp_profile__export(p, fmt, m, o);
	fclose(m);
	return err;
}

/* A stack's function names leaf first, inlined lines expanded. */
static size_t stack_names(const struct sfp_profile *p, uint32_t leaf,
			  const char **names, size_t max, bool user_only)
{
	uint32_t locs[1024];
	size_t d = sfp_profile__stack(p, leaf, locs, 1024), i, n = 0;

	for (i = 0; i < d && i < 1024; i++) {
		const struct sfp_profile_loc *l = sfp_profile__loc(p, locs[i]);
		uint32_t k;

		for (k = 0; k < l->nr_lines && n < max; k++) {
			const struct sfp_profile_func *f =
				sfp_profile__func(p, l->lines[k].func);

			if (user_only && f->kind == SFP_PROFILE_KERNEL)
				continue;
			names[n++] = f->name;
		}
	}
	return n;
}

TEST(speedscope_stacks_and_weights_equal_the_profile)
{
	struct sfp_profile *p = work_profile();
	const struct sfp_json *frames, *prof, *samples, *weights;
	struct sfp_json *j = NULL;
	const char *s, *names[2048];
	char *buf = NULL;
	size_t len = 0, i, ns, nf, pk, seen = 0;
	uint64_t sum = 0, v, start, end;

	if (!p) {
		PT_SFPROF_FAILED("sfprof record of flame-work failed on this machine");
		return;
	}
	if (!ASSERT_OK(export_mem(p, "speedscope", NULL, &buf, &len)))
		goto out;
	if (!ASSERT_OK(sfp_json_parse(buf, len, NULL, &j)))
		goto out;
	ASSERT_OK(sfp_json_str(sfp_json_get(j, "$schema"), &s, NULL));
	ASSERT_STREQ(s, "https://www.speedscope.app/file-format-schema.json");
	frames = sfp_json_get(sfp_json_get(j, "shared"), "frames");
	nf = sfp_json_len(frames);
	ASSERT_TRUE(nf > 0);
	/*
	 * flame-work is one thread of one event, but under ASan its leak
	 * checker runs in a thread of its own at exit: compare every
	 * profile with the samples of its tid, in time order.
	 */
	ns = sfp_profile__nr_samples(p);
	for (pk = 0; pk < sfp_json_len(sfp_json_get(j, "profiles")); pk++) {
		unsigned pid, tid;
		size_t idx = 0;

		prof = sfp_json_at(sfp_json_get(j, "profiles"), pk);
		ASSERT_OK(sfp_json_str(sfp_json_get(prof, "type"), &s, NULL));
		ASSERT_STREQ(s, "sampled");
		ASSERT_OK(sfp_json_str(sfp_json_get(prof, "unit"), &s, NULL));
		ASSERT_STREQ(s, "nanoseconds");	/* cpu-clock periods are time */
		ASSERT_OK(sfp_json_str(sfp_json_get(prof, "name"), &s, NULL));
		if (!ASSERT_EQ(sscanf(s, "flame-work %u/%u", &pid, &tid), 2))
			goto out;
		samples = sfp_json_get(prof, "samples");
		weights = sfp_json_get(prof, "weights");
		if (!ASSERT_EQ(sfp_json_len(samples), sfp_json_len(weights)))
			goto out;
		sum = 0;
		for (i = 0; i < ns; i++) {
			const struct sfp_profile_sample *smp = sfp_profile__sample(p, i);
			const struct sfp_json *st = sfp_json_at(samples, idx);
			size_t d, k;

			if (smp->tid != tid)
				continue;
			d = stack_names(p, smp->stack, names, 2048, false);
			/* root first in the file, leaf first from the profile */
			if (!ASSERT_EQ(sfp_json_len(st), d))
				goto out;
			for (k = 0; k < d; k++) {
				uint64_t fi;
				const char *fname;

				if (!ASSERT_OK(sfp_json_u64(sfp_json_at(st, k), &fi)) ||
				    !ASSERT_TRUE(fi < nf) ||
				    !ASSERT_OK(sfp_json_str(sfp_json_get(sfp_json_at(frames, fi), "name"),
							    &fname, NULL)))
					goto out;
				if (!ASSERT_STREQ(fname, names[d - 1 - k]))
					goto out;
			}
			ASSERT_OK(sfp_json_u64(sfp_json_at(weights, idx), &v));
			ASSERT_EQ(v, smp->period);
			sum += v;
			idx++;
		}
		ASSERT_EQ(idx, sfp_json_len(samples));
		seen += idx;
		ASSERT_OK(sfp_json_u64(sfp_json_get(prof, "startValue"), &start));
		ASSERT_OK(sfp_json_u64(sfp_json_get(prof, "endValue"), &end));
		ASSERT_EQ(end - start, sum);
	}
	ASSERT_EQ(seen, ns);	/* every sample in exactly one profile */
out:
	sfp_json_free(&j);
	free(buf);
}

/* The data block of a flame graph page, parsed. */
static int page_data(const char *html, struct sfp_json **out)
{
	static const char open_tag[] = "<script id=\"sfp-data\" type=\"application/json\">";
	const char *b = strstr(html, open_tag), *e;

	if (!b)
		return -ENOENT;
	b += sizeof(open_tag) - 1;
	e = strstr(b, "</script>");
	if (!e)
		return -EBADMSG;
	return sfp_json_parse(b, (size_t)(e - b), NULL, out);
}

static uint64_t u64_at(const struct sfp_json *a, size_t i)
{
	uint64_t v = UINT64_MAX;

	sfp_json_u64(sfp_json_at(a, i), &v);
	return v;
}

/*
 * Check the tree of a page against the profile: pre-order depths, values
 * that add up (no frame holds less than its children), the root holding
 * every sample, and the samples through @func counted like the viewer's
 * search (outermost match only) equal to the profile's count.
 */
static void check_tree(const struct sfp_profile *p, const char *html,
		       const char *func, bool user_only)
{
	const struct sfp_json *depth, *fn, *val, *names, *fkind;
	struct sfp_json *j = NULL;
	const char *stack[2048];
	size_t n, i, ns = sfp_profile__nr_samples(p), want = 0;
	uint64_t *kids = NULL, got = 0;
	int64_t target = -1, cover = -1;
	size_t *endi = NULL, *st = NULL, sp = 0;

	ASSERT_TRUE(strstr(html, "@@SFP_") == NULL);	/* every marker filled */
	ASSERT_TRUE(strstr(html, "http://") == NULL);
	ASSERT_TRUE(strstr(html, "Content-Security-Policy") != NULL);
	if (!ASSERT_OK(page_data(html, &j)))
		return;
	depth = sfp_json_get(j, "depth");
	fn = sfp_json_get(j, "func");
	val = sfp_json_get(j, "value");
	names = sfp_json_get(j, "names");
	fkind = sfp_json_get(j, "fkind");
	n = sfp_json_len(depth);
	if (!ASSERT_TRUE(n > 1) || !ASSERT_EQ(sfp_json_len(fn), n) ||
	    !ASSERT_EQ(sfp_json_len(val), n))
		goto out;
	ASSERT_EQ(u64_at(depth, 0), 0);
	ASSERT_EQ(u64_at(val, 0), ns);
	for (i = 0; i < sfp_json_len(names); i++) {
		const char *s;

		sfp_json_str(sfp_json_at(names, i), &s, NULL);
		if (!strcmp(s, func))
			target = (int64_t)i;
		if (user_only)
			ASSERT_EQ(u64_at(fkind, i), 0);
	}
	if (!ASSERT_TRUE(target >= 0))
		goto out;

	/* children sums, from the pre-order with a stack of open nodes */
	kids = calloc(n, sizeof(*kids));
	endi = calloc(n, sizeof(*endi));
	st = calloc(n + 1, sizeof(*st));
	if (!ASSERT_TRUE(kids && endi && st))
		goto out;
	for (i = 0; i < n; i++) {
		uint64_t d = u64_at(depth, i);

		while (sp && u64_at(depth, st[sp - 1]) >= d)
			endi[st[--sp]] = i;
		if (i && !ASSERT_TRUE(sp && u64_at(depth, st[sp - 1]) + 1 == d))
			goto out;	/* a child is one deeper than its parent */
		if (sp)
			kids[st[sp - 1]] += u64_at(val, i);
		st[sp++] = i;
	}
	while (sp)
		endi[st[--sp]] = n;
	for (i = 0; i < n; i++) {
		if (!ASSERT_GE(u64_at(val, i), kids[i]) || !ASSERT_TRUE(u64_at(val, i) > 0))
			goto out;
	}
	for (i = 1; i < n; i++) {
		int64_t f = -1;

		if ((int64_t)i < cover)
			continue;
		sfp_json_i64(sfp_json_at(fn, i), &f);
		if (f == target) {
			got += u64_at(val, i);
			cover = (int64_t)endi[i];
		}
	}
	for (i = 0; i < ns; i++) {
		const struct sfp_profile_sample *smp = sfp_profile__sample(p, i);
		size_t d = stack_names(p, smp->stack, stack, 2048, user_only), k;

		for (k = 0; k < d; k++)
			if (!strcmp(stack[k], func)) {
				want++;
				break;
			}
	}
	/*
	 * The check is not vacuous: flame-work spends 0.9 * 0.7 of its 400 ms
	 * of CPU time in the hot leaf, about 252 samples at 999 Hz whatever
	 * the load.  (Not a share of all samples: ASan's start-up and exit
	 * grow with the load; beside two CPU hogs they passed half.)
	 */
	ASSERT_GE(want, 200);
	ASSERT_EQ(got, want);
out:
	free(kids);
	free(endi);
	free(st);
	sfp_json_free(&j);
}

TEST(flamegraph_tree_equals_the_profile)
{
	struct sfp_profile *p = work_profile();
	char *buf = NULL;
	size_t len = 0;

	if (!p) {
		PT_SFPROF_FAILED("sfprof record of flame-work failed on this machine");
		return;
	}
	if (ASSERT_OK(export_mem(p, "flamegraph", NULL, &buf, &len)))
		check_tree(p, buf, "flame_hot_leaf", false);
	free(buf);
}

TEST(flamegraph_user_only_and_title)
{
	struct sfp_profile *p = work_profile();
	SFP_OPTS(sfp_export_opts, o, .user_only = true,
		 .title = "a <b> & \"c\"");
	char *buf = NULL;
	size_t len = 0;

	if (!p) {
		PT_SFPROF_FAILED("sfprof record of flame-work failed on this machine");
		return;
	}
	if (ASSERT_OK(export_mem(p, "flamegraph", &o, &buf, &len))) {
		ASSERT_TRUE(strstr(buf, "<title>a &lt;b&gt; &amp; &quot;c&quot;</title>") != NULL);
		check_tree(p, buf, "flame_hot_leaf", true);
	}
	free(buf);
}

TEST(export_write_errors)
{
	struct sfp_profile *p = work_profile();
	FILE *f;

	if (!p) {
		PT_SFPROF_FAILED("sfprof record of flame-work failed on this machine");
		return;
	}
	ASSERT_ERR(sfp_profile__export(p, "flamegraph", NULL, NULL), -EINVAL);
	f = fopen("/dev/full", "w");
	if (!f) {
		test_skip("no /dev/full");
		return;
	}
	ASSERT_ERR(sfp_profile__export(p, "flamegraph", f, NULL), -EIO);
	fclose(f);
	f = fopen("/dev/full", "w");
	if (f) {
		ASSERT_ERR(sfp_profile__export(p, "speedscope", f, NULL), -EIO);
		fclose(f);
	}
}

TEST(json_strings_are_safe_in_html_and_valid_utf8)
{
	static const char in[] = "a\"b\\c\n\x01</script>\xc3\xa9\xff\xe2\x82\xac\xc0\xaf";
	static const char want[] = "\"a\\\"b\\\\c\\u000a\\u0001\\u003c/script>"
				   "\xc3\xa9\\ufffd\xe2\x82\xac\\ufffd\\ufffd\"";
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!ASSERT_TRUE(m != NULL))
		return;
	sfp_flame_json_str(m, in);
	fclose(m);
	ASSERT_STREQ(buf, want);
	free(buf);
}

/* Two events: one subtree per event below the root, each holding exactly
 * that event's samples; speedscope gets one profile per event. */
TEST(two_events_are_kept_apart)
{
	struct sfp_profile *p = NULL;
	struct sfp_json *j = NULL;
	const struct sfp_json *depth, *fn, *val, *names;
	char path[4096], cmd[4096], *buf = NULL;
	size_t len = 0, i, ns, per_ev[2] = { 0, 0 }, seen = 0;

	pt_tmp(path, sizeof(path), "flame-two.data");
	snprintf(cmd, sizeof(cmd), "%s record -q -e cpu-clock -e page-faults -F 999 "
		 "-o %%1$s -- %s/flame-work 200", pt_sfprof(), pt_progs());
	if (!pt_record(path, cmd) || sfp_profile__load(path, NULL, &p)) {
		PT_SFPROF_FAILED("sfprof record -e cpu-clock -e page-faults failed here");
		return;
	}
	if (!ASSERT_EQ(sfp_profile__nr_events(p), 2))
		goto out;
	ns = sfp_profile__nr_samples(p);
	for (i = 0; i < ns; i++)
		per_ev[sfp_profile__sample(p, i)->event & 1]++;
	if (!ASSERT_OK(export_mem(p, "flamegraph", NULL, &buf, &len)) ||
	    !ASSERT_OK(page_data(buf, &j)))
		goto out;
	depth = sfp_json_get(j, "depth");
	fn = sfp_json_get(j, "func");
	val = sfp_json_get(j, "value");
	names = sfp_json_get(j, "names");
	for (i = 1; i < sfp_json_len(depth); i++) {
		int64_t f = -1;
		const char *name = NULL;
		size_t e;

		if (u64_at(depth, i) != 1)
			continue;
		sfp_json_i64(sfp_json_at(fn, i), &f);
		sfp_json_str(sfp_json_at(names, (size_t)f), &name, NULL);
		for (e = 0; e < 2; e++) {
			if (strcmp(name, sfp_profile__event(p, (uint32_t)e)->name))
				continue;
			ASSERT_EQ(u64_at(val, i), per_ev[e]);
			seen++;
		}
	}
	/* page-faults may have no sample in a short run */
	ASSERT_EQ(seen, (size_t)(per_ev[0] > 0) + (per_ev[1] > 0));
	free(buf);
	buf = NULL;
	sfp_json_free(&j);
	if (!ASSERT_OK(export_mem(p, "speedscope", NULL, &buf, &len)) ||
	    !ASSERT_OK(sfp_json_parse(buf, len, NULL, &j)))
		goto out;
	{
		/* one profile per (tid, event), "comm pid/tid event" */
		const struct sfp_json *profs = sfp_json_get(j, "profiles");
		size_t k, total = 0;

		for (k = 0; k < sfp_json_len(profs); k++) {
			const struct sfp_json *pr = sfp_json_at(profs, k);
			const char *name;
			char ev[64];
			unsigned pid, tid;
			size_t want = 0;

			if (!ASSERT_OK(sfp_json_str(sfp_json_get(pr, "name"), &name, NULL)) ||
			    !ASSERT_EQ(sscanf(name, "flame-work %u/%u %63s", &pid, &tid, ev), 3))
				goto out;
			for (i = 0; i < ns; i++) {
				const struct sfp_profile_sample *smp = sfp_profile__sample(p, i);

				want += smp->tid == tid &&
					!strcmp(sfp_profile__event(p, smp->event)->name, ev);
			}
			ASSERT_TRUE(want > 0);
			ASSERT_EQ(sfp_json_len(sfp_json_get(pr, "samples")), want);
			total += want;
		}
		ASSERT_EQ(total, ns);
	}
out:
	free(buf);
	sfp_json_free(&j);
	sfp_profile__free(&p);
}

/* Three threads: three speedscope profiles, each with its thread's samples. */
TEST(speedscope_one_profile_per_thread)
{
	struct sfp_profile *p = NULL;
	struct sfp_json *j = NULL;
	const struct sfp_json *profs;
	char path[4096], cmd[4096], *buf = NULL;
	size_t len = 0, i, k, ns, total = 0;

	pt_tmp(path, sizeof(path), "flame-threads.data");
	snprintf(cmd, sizeof(cmd), "%s record -q -F 999 -o %%1$s -- %s/flame-work 150 3",
		 pt_sfprof(), pt_progs());
	if (!pt_record(path, cmd) || sfp_profile__load(path, NULL, &p)) {
		PT_SFPROF_FAILED("sfprof record of a threaded flame-work failed here");
		return;
	}
	ns = sfp_profile__nr_samples(p);
	if (!ASSERT_OK(export_mem(p, "speedscope", NULL, &buf, &len)) ||
	    !ASSERT_OK(sfp_json_parse(buf, len, NULL, &j)))
		goto out;
	profs = sfp_json_get(j, "profiles");
	/* at least the three threads (ASan's leak checker may add one) */
	ASSERT_GE(sfp_json_len(profs), 3);
	for (k = 0; k < sfp_json_len(profs); k++) {
		const struct sfp_json *pr = sfp_json_at(profs, k);
		const char *name;
		unsigned pid, tid;
		size_t want = 0;

		if (!ASSERT_OK(sfp_json_str(sfp_json_get(pr, "name"), &name, NULL)) ||
		    !ASSERT_EQ(sscanf(name, "flame-work %u/%u", &pid, &tid), 2))
			goto out;
		for (i = 0; i < ns; i++)
			want += sfp_profile__sample(p, i)->tid == tid;
		ASSERT_TRUE(want > 0);
		ASSERT_EQ(sfp_json_len(sfp_json_get(pr, "samples")), want);
		total += want;
	}
	ASSERT_EQ(total, ns);
out:
	free(buf);
	sfp_json_free(&j);
	sfp_profile__free(&p);
}
