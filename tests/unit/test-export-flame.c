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
#include "export/flame-tree.h"
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

static uint64_t u64_at(const struct sfp_json *a, size_t i)
{
	uint64_t v = UINT64_MAX;

	sfp_json_u64(sfp_json_at(a, i), &v);
	return v;
}

/* The text of the page's <script id="@id" ...> element. */
static int script_text(const char *html, const char *id, const char **b,
		       size_t *len)
{
	char open_tag[128];
	const char *s, *e;

	snprintf(open_tag, sizeof(open_tag), "<script id=\"%s\" type=\"", id);
	s = strstr(html, open_tag);
	if (!s || !(s = strchr(s + strlen(open_tag), '>')))
		return -ENOENT;
	s++;
	e = strstr(s, "</script>");
	if (!e)
		return -EBADMSG;
	*b = s;
	*len = (size_t)(e - s);
	return 0;
}

/* The data block of a flame graph page, parsed. */
static int page_data(const char *html, struct sfp_json **out)
{
	const char *b;
	size_t len;
	int err = script_text(html, "sfp-data", &b, &len);

	return err ? err : sfp_json_parse(b, len, NULL, out);
}

/*
 * A page's tree (or its preview), unpacked with the checking decoder; the
 * sizes it needs come from the data block @j.
 */
static int page_tree(const char *html, const struct sfp_json *j, bool preview,
		     struct sfp_flame_tree *t)
{
	uint64_t n = 0, c;
	bool timed = sfp_json_get(j, "offcpu") != NULL;
	const struct sfp_json *code = sfp_json_get(j, "funcCode");
	uint32_t count[SFP_FLAME_CODE_MAX + 1] = { 0 };
	const char *b;
	size_t len, l;
	char err[256];
	int rc;

	if (sfp_json_u64(sfp_json_get(j, preview ? "previewNodes" : "nodes"), &n) ||
	    !code || sfp_json_len(code) > SFP_FLAME_CODE_MAX)
		return -EBADMSG;
	for (l = 0; l < sfp_json_len(code); l++) {
		if (sfp_json_u64(sfp_json_at(code, l), &c) || c > UINT32_MAX)
			return -EBADMSG;
		count[l + 1] = (uint32_t)c;
	}
	rc = script_text(html, preview ? "sfp-preview" : "sfp-tree", &b, &len);
	if (rc)
		return rc;
	rc = sfp_flame_tree_decode(b, len, n, count, (unsigned int)sfp_json_len(code),
				   timed, preview, t, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  the page's %s: %s\n",
			preview ? "preview" : "tree", err);
	return rc;
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
	const struct sfp_json *names, *fkind;
	struct sfp_json *j = NULL;
	struct sfp_flame_tree t = { 0 };
	const char *stack[2048];
	size_t n, i, ns = sfp_profile__nr_samples(p), want = 0;
	uint64_t *kids = NULL, got = 0;
	int64_t target = -1, cover = -1;
	size_t *endi = NULL, *st = NULL, sp = 0;

	ASSERT_TRUE(strstr(html, "@@SFP_") == NULL);	/* every marker filled */
	ASSERT_TRUE(strstr(html, "http://") == NULL);
	ASSERT_TRUE(strstr(html, "Content-Security-Policy") != NULL);
	if (!ASSERT_OK(page_data(html, &j)) || !ASSERT_OK(page_tree(html, j, false, &t)))
		goto out;
	names = sfp_json_get(j, "names");
	fkind = sfp_json_get(j, "fkind");
	n = t.n;
	if (!ASSERT_TRUE(n > 1))
		goto out;
	ASSERT_EQ(t.depth[0], 0);
	ASSERT_EQ(t.value[0], ns);
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
		uint64_t d = t.depth[i];

		while (sp && t.depth[st[sp - 1]] >= d)
			endi[st[--sp]] = i;
		if (i && !ASSERT_TRUE(sp && t.depth[st[sp - 1]] + 1 == d))
			goto out;	/* a child is one deeper than its parent */
		if (sp)
			kids[st[sp - 1]] += t.value[i];
		st[sp++] = i;
	}
	while (sp)
		endi[st[--sp]] = n;
	for (i = 0; i < n; i++) {
		if (!ASSERT_GE(t.value[i], kids[i]) || !ASSERT_TRUE(t.value[i] > 0))
			goto out;
	}
	for (i = 1; i < n; i++) {
		if ((int64_t)i < cover)
			continue;
		if (t.func[i] == target) {
			got += t.value[i];
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
	sfp_flame_tree_free(&t);
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
	struct sfp_flame_tree t = { 0 };
	const struct sfp_json *names;
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
	    !ASSERT_OK(page_data(buf, &j)) || !ASSERT_OK(page_tree(buf, j, false, &t)))
		goto out;
	names = sfp_json_get(j, "names");
	for (i = 1; i < t.n; i++) {
		const char *name = NULL;
		size_t e;

		if (t.depth[i] != 1)
			continue;
		sfp_json_str(sfp_json_at(names, (size_t)t.func[i]), &name, NULL);
		for (e = 0; e < 2; e++) {
			if (strcmp(name, sfp_profile__event(p, (uint32_t)e)->name))
				continue;
			ASSERT_EQ(t.value[i], per_ev[e]);
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
	sfp_flame_tree_free(&t);
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

/* An encoded tree in memory. */
struct packed {
	char *buf;
	size_t len;
	FILE *m;
	struct sfp_flame_bits b;
};

static bool pack_open(struct packed *pk)
{
	pk->buf = NULL;
	pk->m = open_memstream(&pk->buf, &pk->len);
	if (!pk->m)
		return false;
	sfp_flame_bits_init(&pk->b, pk->m);
	return true;
}

static void pack_close(struct packed *pk)
{
	sfp_flame_bits_end(&pk->b);
	fclose(pk->m);
}

/*
 * The codes at their edges: values of 1, around 2^13, 2^32, 2^53 and up
 * to 2^64 - 2, a climb of many levels, every off-CPU kind; what goes in
 * comes out.  Then damaged texts are refused, never read past.
 */
TEST(flame_tree_codes_round_trip)
{
	/* depth: root, a(1) b(2) c(3) d(4) [climb 3] e(2)... */
	static const uint32_t depth[] = { 0, 1, 2, 3, 4, 2, 3, 1, 2 };
	static const uint64_t value[] = {
		UINT64_MAX - 2, 1, 8192, 8191, 1, (1ull << 53) + 1,
		(1ull << 32) - 1, UINT64_MAX - 3, 1ull << 32,
	};
	static const uint64_t off[] = {
		7, 0, 8192, 1, 1, 1ull << 40, 0, UINT64_MAX - 4, 1ull << 32,
	};
	size_t n = ARRAY_SIZE(depth), i;
	struct sfp_flame_tree t = { 0 };
	struct packed pk;
	char err[200];
	/* 8192 codes of 13 bits: function f's code is f */
	uint32_t count[14] = { [13] = 8192 }, fb = 13;

	if (!ASSERT_TRUE(pack_open(&pk)))
		return;
	sfp_flame_tree_put_root(&pk.b, value[0], true, off[0]);
	for (i = 1; i < n; i++) {
		uint32_t next = i + 1 < n ? depth[i + 1] : 1;

		sfp_flame_tree_put(&pk.b, (uint32_t)(i * 1000), fb,
				   depth[i] + 1 - next, value[i], true, off[i]);
		sfp_flame_bits_delta(&pk.b, i * 77777777777ull + 1);	/* a gap */
	}
	pack_close(&pk);
	/* only letters of the alphabet: nothing HTML or a URL scan sees */
	ASSERT_TRUE(strpbrk(pk.buf, "<\"/ \n\r\t") == NULL);
	ASSERT_EQ(pk.len % 2, 0);
	if (ASSERT_OK(sfp_flame_tree_decode(pk.buf, pk.len, n, count, fb, true,
					    true, &t, err, sizeof(err)))) {
		for (i = 0; i < n; i++) {
			ASSERT_EQ(t.depth[i], depth[i]);
			ASSERT_EQ(t.func[i], i ? (int64_t)i * 1000 : -1);
			ASSERT_EQ(t.value[i], value[i]);
			ASSERT_EQ(t.off[i], off[i] < value[i] ? off[i] : value[i]);
			if (i)
				ASSERT_EQ(t.gap[i], i * 77777777777ull);
		}
		sfp_flame_tree_free(&t);
	}
	/* a code no function has */
	count[13] = 7000;
	ASSERT_ERR(sfp_flame_tree_decode(pk.buf, pk.len, n, count, fb, true,
					 true, &t, err, sizeof(err)), -EBADMSG);
	ASSERT_TRUE(strstr(err, "no function has this code") != NULL);
	count[13] = 8192;
	/* truncated, one letter more, a letter not in the alphabet */
	ASSERT_ERR(sfp_flame_tree_decode(pk.buf, pk.len - 2, n, count, fb, true,
					 true, &t, err, sizeof(err)), -EBADMSG);
	ASSERT_TRUE(strstr(err, "ends inside") != NULL);
	pk.buf = realloc(pk.buf, pk.len + 3);
	if (!ASSERT_TRUE(pk.buf != NULL))
		return;
	memcpy(pk.buf + pk.len, "!!", 3);
	ASSERT_ERR(sfp_flame_tree_decode(pk.buf, pk.len + 2, n, count, fb, true,
					 true, &t, err, sizeof(err)), -EBADMSG);
	ASSERT_TRUE(strstr(err, "after the last frame") != NULL);
	pk.buf[3] = '<';
	ASSERT_ERR(sfp_flame_tree_decode(pk.buf, pk.len, n, count, fb, true,
					 true, &t, err, sizeof(err)), -EBADMSG);
	ASSERT_TRUE(strstr(err, "0x3c") != NULL);
	/* more frames than the text can hold */
	ASSERT_ERR(sfp_flame_tree_decode(pk.buf, pk.len, (size_t)1 << 40, count,
					 fb, true, true, &t, err, sizeof(err)),
		   -EBADMSG);
	free(pk.buf);

	/* a frame that climbs above the root */
	if (!ASSERT_TRUE(pack_open(&pk)))
		return;
	sfp_flame_tree_put_root(&pk.b, 1, false, 0);
	sfp_flame_tree_put(&pk.b, 0, 1, 2, 1, false, 0);
	pack_close(&pk);
	count[1] = 1;
	ASSERT_ERR(sfp_flame_tree_decode(pk.buf, pk.len, 2, count, 1, false, false,
					 &t, err, sizeof(err)), -EBADMSG);
	ASSERT_TRUE(strstr(err, "climbs 2 levels") != NULL);
	free(pk.buf);
}

/*
 * The functions' code lengths: a complete prefix code (Kraft sum 1), a
 * more frequent function never with a longer code, and no code longer
 * than SFP_FLAME_CODE_MAX even for Fibonacci frequencies, whose Huffman
 * code is as deep as there are symbols.
 */
TEST(flame_code_lengths)
{
	uint64_t freq[60], kraft = 0;
	uint8_t len[60];
	size_t i, j;

	for (i = 0; i < 60; i++)
		freq[i] = i < 2 ? 1 : freq[i - 1] + freq[i - 2];
	if (!ASSERT_OK(sfp_flame_code_lengths(freq, 60, len)))
		return;
	for (i = 0; i < 60; i++) {
		ASSERT_TRUE(len[i] >= 1 && len[i] <= SFP_FLAME_CODE_MAX);
		kraft += 1ull << (SFP_FLAME_CODE_MAX - len[i]);
		for (j = 0; j < 60; j++)
			if (freq[i] > freq[j])
				ASSERT_TRUE(len[i] <= len[j]);
	}
	ASSERT_EQ(kraft, 1ull << SFP_FLAME_CODE_MAX);
	/* a few: the textbook lengths */
	{
		static const uint64_t f[] = { 5, 9, 12, 13, 16, 45 };
		static const uint8_t want[] = { 4, 4, 3, 3, 3, 1 };

		if (ASSERT_OK(sfp_flame_code_lengths(f, 6, len)))
			for (i = 0; i < 6; i++)
				ASSERT_EQ(len[i], want[i]);
	}
	ASSERT_OK(sfp_flame_code_lengths(freq, 1, len));
	ASSERT_EQ(len[0], 1);
}

/*
 * A big profile (flame-synth: 40,000 samples, nearly every stack distinct,
 * ~7 frames each; the preview takes frames of 2 or more samples) gets a
 * preview: exactly the frames of at least previewMin, in
 * pre-order, each with the same function and values as in the whole tree
 * and the gap its left-out siblings before it weigh, and small enough to
 * be worth it.  With that the preview's picture is the whole tree's.
 */
TEST(flamegraph_preview_is_the_top_of_the_tree)
{
	struct sfp_profile *p = NULL;
	struct sfp_json *j = NULL;
	struct sfp_flame_tree t = { 0 }, pv = { 0 };
	char path[4096], cmd[8192], *buf = NULL;
	size_t len = 0, i, k = 0, *open = NULL;
	uint64_t min = 0, *gap = NULL;
	uint32_t maxd = 0;

	pt_tmp(path, sizeof(path), "flame-synth.data");
	snprintf(cmd, sizeof(cmd), "%s/flame-synth %s 40000 > /dev/null", pt_progs(),
		 path);
	if (!ASSERT_EQ(system(cmd), 0) || !ASSERT_OK(sfp_profile__load(path, NULL, &p)))
		goto out;
	if (!ASSERT_OK(export_mem(p, "flamegraph", NULL, &buf, &len)) ||
	    !ASSERT_OK(page_data(buf, &j)) || !ASSERT_OK(page_tree(buf, j, false, &t)) ||
	    !ASSERT_OK(sfp_json_u64(sfp_json_get(j, "previewMin"), &min)) ||
	    !ASSERT_OK(page_tree(buf, j, true, &pv)))
		goto out;
	ASSERT_GE(t.n, 20000);
	ASSERT_TRUE(pv.n > 1 && pv.n <= t.n / 8);
	/* wide enough for a canvas of 8192 px */
	ASSERT_TRUE(min >= 1 && min <= t.value[0] / 16384 + 1);
	for (i = 0; i < t.n; i++)
		if (t.depth[i] > maxd)
			maxd = t.depth[i];
	gap = calloc(maxd + 2, sizeof(*gap));
	open = calloc(maxd + 2, sizeof(*open));
	if (!ASSERT_TRUE(gap && open))
		goto out;
	/* walk the whole tree; k follows the preview */
	for (i = 0; i < t.n; i++) {
		uint32_t d = t.depth[i];

		if (i && !open[d - 1]) {	/* below a left-out frame */
			open[d] = 0;
			continue;
		}
		open[d] = !i || t.value[i] >= min;
		if (!open[d]) {
			gap[d] += t.value[i];
			continue;
		}
		if (!ASSERT_TRUE(k < pv.n) || !ASSERT_EQ(pv.depth[k], d) ||
		    !ASSERT_EQ(pv.func[k], t.func[i]) ||
		    !ASSERT_EQ(pv.value[k], t.value[i]) ||
		    (k && !ASSERT_EQ(pv.gap[k], gap[d])))
			goto out;
		gap[d] = 0;
		gap[d + 1] = 0;
		k++;
	}
	ASSERT_EQ(k, pv.n);
out:
	free(gap);
	free(open);
	free(buf);
	sfp_flame_tree_free(&t);
	sfp_flame_tree_free(&pv);
	sfp_json_free(&j);
	sfp_profile__free(&p);
}
