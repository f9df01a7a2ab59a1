// SPDX-License-Identifier: MIT
/*
 * merge_samples when the same raw sample comes again after what it
 * depends on changed.  The loader remembers the twin of recent raw
 * samples (chain, ids, the process's map and kernel-symbol generations,
 * the thread's name) to skip their look-ups; a sample repeated after a
 * COMM, after a new MMAP over its address or on another CPU must start a
 * twin of its own, and a chain too long for that memory must merge all
 * the same.  The file is built byte by byte (perf-build.h), and the
 * expected twins follow from what each record means, not from a run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/profile.h>

#include "perf-build.h"
#include "test.h"

#define SAMPLE_ID_ALL (1ull << 18)
#define MISC_USER 2

static const uint64_t c_short[] = { PB_CTX_USER, 0x401000 };
/* longer than the memo's key holds (6 entries) */
static const uint64_t c_long[] = { PB_CTX_USER, 0x401000, 0x402000, 0x403000,
				   0x404000, 0x405000, 0x406000, 0x407000 };

static void sample(struct pb *p, uint64_t time, uint32_t cpu,
		   const uint64_t *ips, uint64_t nr)
{
	size_t start = p->len;

	pb_sample(p, 100, time, cpu, ips[1], ips, nr);
	pb_patch16(p, start + 4, MISC_USER);
}

static void build(struct pb *p)
{
	uint64_t t = 2000;
	int i;

	pb_begin(p, false, PB_SAMPLE_TYPE, SAMPLE_ID_ALL, 128);
	pb_comm(p, 100, 1000, "one");
	pb_mmap(p, 100, 1100, 0x400000, 0x10000, 0, "/nonexistent/a");
	for (i = 0; i < 3; i++)
		sample(p, t += 100, 0, c_short, 2);
	sample(p, t += 100, 1, c_short, 2);		/* another CPU */
	pb_comm(p, 100, t += 100, "two");
	for (i = 0; i < 2; i++)
		sample(p, t += 100, 0, c_short, 2);
	pb_mmap(p, 100, t += 100, 0x400000, 0x10000, 0, "/nonexistent/b");
	for (i = 0; i < 2; i++)
		sample(p, t += 100, 0, c_short, 2);
	for (i = 0; i < 2; i++)
		sample(p, t += 100, 0, c_long, 8);
	sample(p, t += 100, 0, c_short, 2);	/* back to the 4th twin */
	pb_round(p);
	pb_end(p);
}

struct want {
	const char *comm, *dso;
	uint32_t cpu, count, depth;
};

/* in order of first appearance */
static const struct want wants[] = {
	{ "one", "/nonexistent/a", 0, 3, 1 },
	{ "one", "/nonexistent/a", 1, 1, 1 },
	{ "two", "/nonexistent/a", 0, 2, 1 },
	{ "two", "/nonexistent/b", 0, 3, 1 },
	{ "two", "/nonexistent/b", 0, 2, 7 },
};

static const char *leaf_dso(const struct sfp_profile *p,
			    const struct sfp_profile_sample *s, size_t *depth)
{
	uint32_t locs[16];
	const struct sfp_profile_loc *l;
	const struct sfp_profile_func *f;

	*depth = sfp_profile__stack(p, s->stack, locs, 16);
	if (!*depth || !(l = sfp_profile__loc(p, locs[0])) ||
	    !(f = sfp_profile__func(p, l->lines[0].func)))
		return NULL;
	return f->dso;
}

TEST(profile_merge_follows_comm_mmap_and_cpu)
{
	SFP_OPTS(sfp_profile_opts, om, .merge_samples = true);
	struct sfp_profile *p = NULL, *all = NULL;
	struct pb b;
	size_t i, n, depth;

	build(&b);
	if (!ASSERT_OK(sfp_profile__load_mem(b.b, b.len, &om, &p)) ||
	    !ASSERT_OK(sfp_profile__load_mem(b.b, b.len, NULL, &all)))
		goto out;
	ASSERT_EQ(sfp_profile__nr_samples(all), 11);
	n = sfp_profile__nr_samples(p);
	if (!ASSERT_EQ(n, sizeof(wants) / sizeof(wants[0])))
		goto out;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);
		const char *dso = leaf_dso(p, s, &depth);

		ASSERT_STREQ(sfp_profile__string(p, s->comm), wants[i].comm);
		ASSERT_STREQ(dso ? dso : "(none)", wants[i].dso);
		ASSERT_EQ(s->cpu, wants[i].cpu);
		ASSERT_EQ(s->count, wants[i].count);
		ASSERT_EQ(s->period, 10000ull * wants[i].count);
		ASSERT_EQ(depth, wants[i].depth);
	}
	/* the last sample (number 10) went back to the 4th twin */
	ASSERT_EQ(sfp_profile__sample(p, 3)->last, 10);
out:
	sfp_profile__free(&p);
	sfp_profile__free(&all);
	free(b.b);
}

/*
 * N distinct one-frame chains, each sampled twice in a row and then once
 * more in a second pass: the memo (at most 4096 entries) grows while the
 * first pass fills it, moving entries that hold a waiting count, and
 * both passes replace such entries.  Every twin stands for exactly its
 * three samples, the last one numbered 2 N + its index.
 */
#define MANY 6000

TEST(profile_merge_many_chains)
{
	SFP_OPTS(sfp_profile_opts, om, .merge_samples = true);
	struct sfp_profile *p = NULL;
	uint64_t t = 2000, ips[2] = { PB_CTX_USER, 0 };
	struct pb b;
	size_t i, n;
	int pass;

	pb_begin(&b, false, PB_SAMPLE_TYPE, SAMPLE_ID_ALL, 128);
	pb_comm(&b, 100, 1000, "many");
	pb_mmap(&b, 100, 1100, 0x400000, 0x100000, 0, "/nonexistent/many");
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < MANY; i++) {
			ips[1] = 0x401000 + 16 * i;
			sample(&b, t += 10, 0, ips, 2);
			if (!pass)
				sample(&b, t += 10, 0, ips, 2);
		}
		pb_round(&b);
	}
	pb_end(&b);
	if (!ASSERT_OK(sfp_profile__load_mem(b.b, b.len, &om, &p)))
		goto out;
	n = sfp_profile__nr_samples(p);
	if (!ASSERT_EQ(n, MANY))
		goto out;
	for (i = 0; i < n; i++) {
		const struct sfp_profile_sample *s = sfp_profile__sample(p, i);

		if (!ASSERT_EQ(s->count, 3) || !ASSERT_EQ(s->period, 30000) ||
		    !ASSERT_EQ(s->last, 2 * MANY + i))
			break;
	}
out:
	sfp_profile__free(&p);
	free(b.b);
}
