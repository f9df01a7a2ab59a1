// SPDX-License-Identifier: MIT
/*
 * sfp_profile__export() through the shared library: the format list, the
 * error paths (unknown format, bad arguments and opts, a full disk) and
 * the invariants every format keeps on the committed perf.data fixture
 * (tests/data/perf/fp.data): folded counts add up to the samples, pprof
 * is gzip, Firefox JSON is one closed object.  The outputs' contents are
 * checked against real tools in tests/cli/run-export.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/export.h>
#include <sfprof/profile.h>

#include "test.h"

static struct sfp_profile *load_fixture(void)
{
	struct sfp_profile *p = NULL;
	char path[512];
	int err;

	snprintf(path, sizeof(path), "%s/perf/fp.data", test_data_dir());
	err = sfp_profile__load(path, NULL, &p);
	if (!ASSERT_EQ(err, 0))
		return NULL;
	return p;
}

TEST(export_formats_listed)
{
	const char *const *f = sfp_export_formats();
	bool folded = false, pprof = false, firefox = false;

	for (; *f; f++) {
		folded |= !strcmp(*f, "folded");
		pprof |= !strcmp(*f, "pprof");
		firefox |= !strcmp(*f, "firefox");
	}
	ASSERT_TRUE(folded);
	ASSERT_TRUE(pprof);
	ASSERT_TRUE(firefox);
}

TEST(export_bad_arguments)
{
	struct sfp_profile *p = load_fixture();
	struct { struct sfp_export_opts o; char tail[16]; } big;
	FILE *f = tmpfile();

	if (!p || !ASSERT_TRUE(f))
		goto out;
	ASSERT_EQ(sfp_profile__export(p, "no-such-format", f, NULL), -EINVAL);
	ASSERT_EQ(sfp_profile__export(NULL, "folded", f, NULL), -EINVAL);
	ASSERT_EQ(sfp_profile__export(p, NULL, f, NULL), -EINVAL);
	ASSERT_EQ(sfp_profile__export(p, "folded", NULL, NULL), -EINVAL);
	/* a newer caller's field we do not know, set: refused */
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.tail[3] = 1;
	ASSERT_EQ(sfp_profile__export(p, "folded", f, &big.o), -EINVAL);
	/* ... and left zero: fine */
	big.tail[3] = 0;
	ASSERT_EQ(sfp_profile__export(p, "folded", f, &big.o), 0);
out:
	if (f)
		fclose(f);
	sfp_profile__free(&p);
}

TEST(export_full_disk_is_eio)
{
	struct sfp_profile *p = load_fixture();
	const char *const *fmt;

	if (!p)
		return;
	for (fmt = sfp_export_formats(); *fmt; fmt++) {
		FILE *f = fopen("/dev/full", "wb");

		if (!f) {
			test_skip("no /dev/full");
			break;
		}
		if (!ASSERT_EQ(sfp_profile__export(p, *fmt, f, NULL), -EIO))
			fprintf(stderr, "  format %s\n", *fmt);
		fclose(f);
	}
	sfp_profile__free(&p);
}

/* Folded counts add up to the samples, with and without kernel frames. */
TEST(export_folded_counts)
{
	struct sfp_profile *p = load_fixture();
	int pass;

	if (!p)
		return;
	for (pass = 0; pass < 2; pass++) {
		SFP_OPTS(sfp_export_opts, o, .user_only = pass == 1);
		unsigned long long total = 0;
		char line[65536], prev[65536] = "";
		FILE *f = tmpfile();

		if (!ASSERT_TRUE(f))
			break;
		if (!ASSERT_EQ(sfp_profile__export(p, "folded", f, &o), 0))
			goto next;
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			char *sp = strrchr(line, ' ');

			if (!ASSERT_TRUE(sp && sp[1] >= '1' && sp[1] <= '9'))
				break;
			total += strtoull(sp + 1, NULL, 10);
			*sp = '\0';
			/* sorted, each stack once */
			ASSERT_TRUE(strcmp(prev, line) < 0);
			snprintf(prev, sizeof(prev), "%s", line);
			if (pass == 1)
				ASSERT_TRUE(!strstr(line, "entry_SYSCALL_64"));
		}
		ASSERT_EQ(total, sfp_profile__nr_samples(p));
next:
		fclose(f);
	}
	sfp_profile__free(&p);
}

TEST(export_pprof_is_gzip_firefox_is_json_object)
{
	struct sfp_profile *p = load_fixture();
	unsigned char hdr[3];
	char tail[8];
	FILE *f = tmpfile(), *g = tmpfile();
	long n;

	if (!p || !ASSERT_TRUE(f && g))
		goto out;
	if (ASSERT_EQ(sfp_profile__export(p, "pprof", f, NULL), 0)) {
		rewind(f);
		ASSERT_EQ(fread(hdr, 1, 3, f), 3);
		/* gzip magic and deflate */
		ASSERT_EQ(hdr[0], 0x1f);
		ASSERT_EQ(hdr[1], 0x8b);
		ASSERT_EQ(hdr[2], 8);
	}
	if (ASSERT_EQ(sfp_profile__export(p, "firefox", g, NULL), 0)) {
		n = ftell(g);
		ASSERT_TRUE(n > 100);
		rewind(g);
		ASSERT_EQ(fread(tail, 1, 8, g), 8);
		ASSERT_EQ(memcmp(tail, "{\"meta\":", 8), 0);
		fseek(g, n - 3, SEEK_SET);
		ASSERT_EQ(fread(tail, 1, 3, g), 3);
		ASSERT_EQ(memcmp(tail, "]}\n", 3), 0);
	}
out:
	if (f)
		fclose(f);
	if (g)
		fclose(g);
	sfp_profile__free(&p);
}

/* Bytes of format's export of p (malloc()ed, *len), NULL on failure. */
static char *exported(struct sfp_profile *p, const char *format, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!ASSERT_TRUE(f))
		return NULL;
	if (!ASSERT_EQ(sfp_profile__export(p, format, f, NULL), 0)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

/*
 * A profile loaded with merge_samples holds one sample for each run of
 * twins (its count and summed period): exported, it says what the
 * unmerged profile says, to the byte -- in the formats without times
 * (speedscope's sampled profile lists samples, so its bytes differ while
 * its weights agree).  Firefox's format is a timeline with a row per
 * sample: a merged profile, whose samples lost their times, is refused.
 */
TEST(export_merged_samples_count_as_many)
{
	SFP_OPTS(sfp_profile_opts, mo, .merge_samples = true);
	const char *formats[] = { "folded", "pprof", "flamegraph", "otlp" };
	struct sfp_profile *p = load_fixture(), *m = NULL;
	char path[512];
	size_t i;

	snprintf(path, sizeof(path), "%s/perf/fp.data", test_data_dir());
	if (!p || !ASSERT_EQ(sfp_profile__load(path, &mo, &m), 0))
		goto out;
	/* (the fixture has twins: else this proves nothing) */
	ASSERT_TRUE(sfp_profile__nr_samples(m) < sfp_profile__nr_samples(p));
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		size_t la = 0, lb = 0;
		char *a = exported(p, formats[i], &la);
		char *b = exported(m, formats[i], &lb);

		if (a && b && !(ASSERT_EQ(la, lb) && ASSERT_TRUE(!memcmp(a, b, la))))
			sfp_test_fail_at(__FILE__, __LINE__, "format %s", formats[i]);
		free(a);
		free(b);
	}
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (ASSERT_TRUE(f)) {
			ASSERT_EQ(sfp_profile__export(m, "firefox", f, NULL),
				  -EINVAL);
			fclose(f);
		}
		free(buf);
	}
out:
	sfp_profile__free(&m);
	sfp_profile__free(&p);
}
