// SPDX-License-Identifier: MIT
/*
 * Samples whose callchain gives no frames.  perf report takes a sample's
 * entry from its sample ip (the record's cpumode says whose), not from
 * the chain, so it counts such a sample there all the same; perf script
 * shows no frames for it.  The model keeps the stack empty and gives the
 * sample the loc of its ip (ip_loc); samples with frames get none.
 *
 * Cases, in a perf.data built byte by byte (perf-build.h): a chain of
 * markers only (user, and kernel), an empty chain, a chain perf drops for
 * an unknown context value (a broken frame-pointer chain, as seen inside
 * libasan), a deferred sample's chain left unmerged (the marker and its
 * cookie only), and ordinary chains.  The CLI's report is checked against
 * these, and against perf report itself where perf can read the file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/profile.h>

#include "perf-build.h"
#include "test.h"

#define SAMPLE_ID_ALL (1ull << 18)
#define DEFER_CALLCHAIN (1ull << 38)
#define MISC_KERNEL 1
#define MISC_USER 2
#define NONE UINT32_MAX

static void sample(struct pb *p, uint16_t misc, uint64_t time, uint64_t ip,
		   const uint64_t *ips, uint64_t nr)
{
	size_t start = p->len;

	pb_sample(p, 100, time, 0, ip, ips, nr);
	pb_patch16(p, start + 4, misc);
}

struct want {
	uint64_t ip;		/* the sample ip */
	bool frames;		/* the chain gives frames */
};

static const uint64_t c_user[] = { PB_CTX_USER };
static const uint64_t c_kernel[] = { PB_CTX_KERNEL };
static const uint64_t c_both[] = { PB_CTX_KERNEL, PB_CTX_USER };
static const uint64_t c_bad[] = { PB_CTX_USER, 0x403333, (uint64_t)-1000,
				  0x404444 };
static const uint64_t c_ok[] = { PB_CTX_USER, 0x405555, 0x406666 };
static const uint64_t c_one[] = { PB_CTX_USER, 0x408888 };
static const uint64_t c_defer[] = { PB_CTX_USER_DEFERRED, 0xc00c1e };

/*
 * attr_sz 128 (VER7) so that older perf reads the file too; with_kernel
 * adds the kernel-mode sample (its symbol depends on kallsyms access).
 */
static void build(struct pb *p, bool with_kernel, bool with_deferred)
{
	pb_begin(p, false, PB_SAMPLE_TYPE,
		 SAMPLE_ID_ALL | (with_deferred ? DEFER_CALLCHAIN : 0), 128);
	pb_comm(p, 100, 1000, "t");
	pb_mmap(p, 100, 1100, 0x400000, 0x10000, 0, "/nonexistent/a");
	sample(p, MISC_USER, 2000, 0x401111, c_user, 1);
	sample(p, MISC_USER, 2100, 0x402222, NULL, 0);
	sample(p, MISC_USER, 2200, 0x403333, c_bad, 4);
	sample(p, MISC_USER, 2300, 0x405555, c_ok, 3);
	sample(p, MISC_USER, 2400, 0x407777, c_both, 2);
	sample(p, MISC_USER, 2500, 0x408888, c_one, 2);
	sample(p, MISC_USER, 2600, 0x408888, c_user, 1);
	if (with_kernel)
		sample(p, MISC_KERNEL, 2700, 0xffffffff81001234ull, c_kernel,
		       1);
	if (with_deferred)	/* never followed by its deferred record */
		sample(p, MISC_USER, 2800, 0x409999, c_defer, 2);
	pb_round(p);
	pb_end(p);
}

static const struct want wants[] = {
	{ 0x401111, false },
	{ 0x402222, false },
	{ 0x403333, false },
	{ 0x405555, true },
	{ 0x407777, false },
	{ 0x408888, true },
	{ 0x408888, false },
	{ 0xffffffff81001234ull, false },
	{ 0x409999, false },
};

TEST(profile_frameless_samples_get_their_ip)
{
	struct sfp_profile *p = NULL;
	struct pb b;
	size_t i, n;

	build(&b, true, true);
	if (!ASSERT_OK(sfp_profile__load_mem(b.b, b.len, NULL, &p)))
		goto out;
	n = sfp_profile__nr_samples(p);
	if (!ASSERT_EQ(n, sizeof(wants) / sizeof(wants[0])))
		goto out;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);
		const struct sfp_profile_loc *l;
		const struct sfp_profile_func *f;

		if (wants[i].frames) {
			ASSERT_NE(s->stack, 0);
			ASSERT_EQ(s->ip_loc, NONE);
			continue;
		}
		/* the stack stays what perf script shows: nothing */
		ASSERT_EQ(s->stack, 0);
		if (!ASSERT_NE(s->ip_loc, NONE))
			continue;
		l = sfp_profile__loc(p, s->ip_loc);
		if (!ASSERT_NOT_NULL(l))
			continue;
		ASSERT_EQ(l->ip, wants[i].ip);
		f = sfp_profile__func(p, l->lines[0].func);
		if (!ASSERT_NOT_NULL(f))
			continue;
		/* whose address: the record's cpumode */
		if (wants[i].ip >= 0xffffffff80000000ull) {
			ASSERT_EQ(f->kind, SFP_PROFILE_KERNEL);
		} else {
			ASSERT_EQ(l->addr, wants[i].ip - 0x400000);
			ASSERT_STREQ(f->dso, "/nonexistent/a");
		}
	}
	/* the last sample waits for a deferred chain that never comes */
	ASSERT_TRUE(sfp_profile__sample(p, n - 1)->unmerged);
out:
	sfp_profile__free(&p);
	free(b.b);
}

TEST(profile_frameless_not_for_samples_without_ip)
{
	struct sfp_profile *p = NULL;
	struct pb b;

	/* PERF_SAMPLE_IP left out of the attr: no ip to count at */
	pb_begin(&b, false, PB_SAMPLE_TYPE & ~(uint64_t)PB_ST_IP,
		 SAMPLE_ID_ALL, 128);
	{
		size_t start = b.len;

		pb_u32(&b, 9);
		pb_u16(&b, MISC_USER);
		pb_u16(&b, 0);
		pb_u64(&b, PB_ID);
		pb_u32(&b, 100);
		pb_u32(&b, 100);
		pb_u64(&b, 2000);
		pb_u32(&b, 0);
		pb_u32(&b, 0);
		pb_u64(&b, 10000);
		pb_u64(&b, 1);
		pb_u64(&b, PB_CTX_USER);
		pb_patch16(&b, start + 6, (uint16_t)(b.len - start));
	}
	pb_end(&b);
	if (ASSERT_OK(sfp_profile__load_mem(b.b, b.len, NULL, &p)) &&
	    ASSERT_EQ(sfp_profile__nr_samples(p), 1)) {
		ASSERT_EQ(sfp_profile__sample(p, 0)->stack, 0);
		ASSERT_EQ(sfp_profile__sample(p, 0)->ip_loc, NONE);
	}
	sfp_profile__free(&p);
	free(b.b);
}

/* Entry lines of a --stdio report, spaces squeezed, sorted. */
static int report_lines(const char *cmd, char lines[][128], int max)
{
	char line[512];
	int n = 0, i, j;
	FILE *f = popen(cmd, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *d = line;
		bool sp = true;

		if (line[0] == '#' || !strchr(line, '%'))
			continue;
		for (; *s && *s != '\n'; s++) {
			if (*s == ' ' || *s == '\t') {
				if (!sp)
					*d++ = ' ';
				sp = true;
			} else {
				*d++ = *s;
				sp = false;
			}
		}
		while (d > line && d[-1] == ' ')
			d--;
		*d = 0;
		if (n < max && strlen(line) < 128)
			memcpy(lines[n++], line, strlen(line) + 1);
	}
	if (pclose(f) != 0)
		return -1;
	for (i = 1; i < n; i++)	/* insertion sort: a handful of lines */
		for (j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
			char t[128];

			memcpy(t, lines[j], 128);
			memcpy(lines[j], lines[j - 1], 128);
			memcpy(lines[j - 1], t, 128);
		}
	return n;
}

TEST(profile_frameless_report_counts_them_as_perf)
{
	const char *sfprof = getenv("SFPROF");
	static const char *const want[] = {
		"14.29% [.] 0x0000000000001111",
		"14.29% [.] 0x0000000000002222",
		"14.29% [.] 0x0000000000003333",
		"14.29% [.] 0x0000000000005555",
		"14.29% [.] 0x0000000000007777",
		"28.57% [.] 0x0000000000008888",
	};
	char path[600], cmd[1400];
	char ours[16][128], theirs[16][128];
	int n, m, i;
	struct pb b;
	FILE *f;

	if (!sfprof) {
		test_skip("SFPROF not set (run through tests/run-tests.sh)");
		return;
	}
	build(&b, false, false);
	snprintf(path, sizeof(path), "%s/frameless.data", test_tmp_dir());
	f = fopen(path, "wb");
	if (!ASSERT_NOT_NULL(f)) {
		free(b.b);
		return;
	}
	ASSERT_EQ(fwrite(b.b, 1, b.len, f), b.len);
	fclose(f);
	free(b.b);

	snprintf(cmd, sizeof(cmd),
		 "'%s' report --no-children --sort sym -g none -i '%s'",
		 sfprof, path);
	n = report_lines(cmd, ours, 16);
	if (!ASSERT_EQ(n, 6))
		return;
	for (i = 0; i < n; i++)
		ASSERT_STREQ(ours[i], want[i]);

	/* and perf report itself, where this machine has a perf */
	snprintf(cmd, sizeof(cmd),
		 "perf report --stdio --no-children --sort sym -g none -i '%s' 2>/dev/null",
		 path);
	m = report_lines(cmd, theirs, 16);
	if (m < 0) {
		test_skip("perf report cannot read the file here");
		return;
	}
	if (!ASSERT_EQ(m, n))
		return;
	for (i = 0; i < n; i++)
		ASSERT_STREQ(ours[i], theirs[i]);
}
