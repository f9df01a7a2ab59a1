// SPDX-License-Identifier: MIT
/*
 * The stitcher against perf 6.19's merge rules, on perf.data files built
 * byte by byte in the tests (perf-build.h), read by the real reader.
 */
#include <errno.h>
#include <stdlib.h>

#include <sfprof/perf.h>
#include <sfprof/stitch.h>

#include "perf-build.h"
#include "test.h"

#define DEFER_FLAGS ((1ull << 18) | (1ull << 38) | (1ull << 39))
#define K1 0xffffffff81000010ull
#define K2 0xffffffff81000020ull
#define U1 0x401000ull
#define U2 0x402000ull
#define U3 0x403000ull
#define CA 0x0000000b00000001ull
#define CB 0x0000000d00000002ull

struct got {
	uint32_t type;
	uint32_t tid;
	uint64_t time;
	enum sfp_stitch_how how;
	uint64_t nr;
	uint64_t ips[16];
	uint64_t cookie;	/* deferred record */
	uint64_t pos;		/* sfp_stitcher__position() */
};

struct sink {
	struct got g[64];
	int n;
	struct sfp_stitcher *st;
};

static int collect(void *ctx, const struct sfp_perf_event *ev,
		   enum sfp_stitch_how how)
{
	struct sink *s = ctx;
	struct got *g;
	uint64_t i;

	if (s->n >= 64)
		return -ENOSPC;
	g = &s->g[s->n++];
	memset(g, 0, sizeof(*g));
	g->type = ev->type;
	g->tid = ev->sample.tid;
	g->time = ev->sample.time;
	g->how = how;
	g->pos = sfp_stitcher__position(s->st);
	if (ev->type == SFP_PERF_RECORD_SAMPLE) {
		g->nr = ev->sample.nr_ips;
		for (i = 0; i < g->nr && i < 16; i++)
			g->ips[i] = ev->sample.ips[i];
	} else if (ev->type == SFP_PERF_RECORD_CALLCHAIN_DEFERRED) {
		g->cookie = ev->deferred.cookie;
		g->nr = ev->deferred.nr;
		for (i = 0; i < g->nr && i < 16; i++)
			g->ips[i] = ev->deferred.ips[i];
	}
	return 0;
}

/* Read the built file through reader + stitcher into sink. */
static bool run(struct pb *p, bool no_merge, struct sink *s,
		struct sfp_stitch_stats *stats)
{
	SFP_OPTS(sfp_stitch_opts, so, .no_merge = no_merge);
	struct sfp_perf_reader *r = NULL;
	struct sfp_stitcher *st = NULL;
	const struct sfp_perf_event *ev;
	bool ok = false;
	int err;

	memset(s, 0, sizeof(*s));
	pb_end(p);
	if (!ASSERT_OK(sfp_perf_reader__open_mem(p->b, p->len, NULL, &r)))
		goto out;
	if (!ASSERT_OK(sfp_stitcher__new(&so, collect, s, &st)))
		goto out;
	s->st = st;
	while ((err = sfp_perf_reader__next(r, &ev)) > 0)
		if (!ASSERT_OK(sfp_stitcher__push(st, ev)))
			goto out;
	if (!ASSERT_EQ(err, 0) || !ASSERT_OK(sfp_stitcher__flush(st)))
		goto out;
	*stats = *sfp_stitcher__stats(st);
	ok = true;
out:
	sfp_stitcher__free(&st);
	sfp_perf_reader__free(&r);
	free(p->b);
	p->b = NULL;
	return ok;
}

static bool chain_is(const struct got *g, const uint64_t *want, uint64_t n)
{
	uint64_t i;

	if (!ASSERT_EQ(g->nr, n))
		return false;
	for (i = 0; i < n; i++)
		if (!ASSERT_EQ(g->ips[i], want[i]))
			return false;
	return true;
}

TEST(stitch_same_tid_same_cookie_merges)
{
	uint64_t kc[] = { PB_CTX_KERNEL, K1, K2, PB_CTX_USER_DEFERRED, CA };
	uint64_t u[] = { U1, U2, U3 };
	uint64_t want[] = { PB_CTX_KERNEL, K1, K2, PB_CTX_USER_DEFERRED, U1, U2, U3 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 10, 100, 0, K1, kc, 5);
	pb_sample(&p, 10, 110, 0, K2, kc, 5);	/* same kernel entry */
	pb_deferred(&p, 10, 120, 0, CA, u, 3);
	if (!run(&p, false, &s, &st))
		return;
	/* the record itself is consumed; both samples merged, in order */
	if (!ASSERT_EQ(s.n, 2))
		return;
	ASSERT_EQ(s.g[0].time, 100);
	ASSERT_EQ(s.g[1].time, 110);
	ASSERT_EQ(s.g[0].how, SFP_STITCH_MERGED);
	ASSERT_EQ(s.g[1].how, SFP_STITCH_MERGED);
	chain_is(&s.g[0], want, 7);
	chain_is(&s.g[1], want, 7);
	ASSERT_EQ(st.nr_merged, 2);
	ASSERT_EQ(st.nr_leftover, 0);
	ASSERT_EQ(st.nr_deferred_records, 1);
}

/*
 * A waiting sample is delivered after the events pushed behind it; its
 * position is still its own push index, so a consumer can put it back.
 */
TEST(stitch_position_is_the_push_index)
{
	uint64_t kc[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	uint64_t uc[] = { PB_CTX_USER, U3 };
	uint64_t u[] = { U1, U2 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 10, 100, 0, K1, kc, 4);	/* 0: waits */
	pb_sample(&p, 20, 100, 1, U3, uc, 2);	/* 1: same time, passes */
	pb_deferred(&p, 10, 120, 0, CA, u, 2);	/* 2: delivers 0 */
	pb_sample(&p, 20, 130, 1, U3, uc, 2);	/* 3 */
	if (!run(&p, false, &s, &st) || !ASSERT_EQ(s.n, 3))
		return;
	ASSERT_EQ(s.g[0].tid, 20);
	ASSERT_EQ(s.g[0].pos, 1);
	ASSERT_EQ(s.g[1].tid, 10);
	ASSERT_EQ(s.g[1].how, SFP_STITCH_MERGED);
	ASSERT_EQ(s.g[1].pos, 0);
	ASSERT_EQ(s.g[2].pos, 3);
}

TEST(stitch_user_mode_sample_has_no_kernel_part)
{
	uint64_t kc[] = { PB_CTX_USER_DEFERRED, CA };
	uint64_t u[] = { U1, U2 };
	uint64_t want[] = { PB_CTX_USER_DEFERRED, U1, U2 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 7, 100, 1, U1, kc, 2);
	pb_deferred(&p, 7, 101, 1, CA, u, 2);
	if (!run(&p, false, &s, &st) || !ASSERT_EQ(s.n, 1))
		return;
	chain_is(&s.g[0], want, 3);
}

TEST(stitch_same_tid_other_cookie_unmerged)
{
	uint64_t ka[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	uint64_t kb[] = { PB_CTX_KERNEL, K2, PB_CTX_USER_DEFERRED, CB };
	uint64_t u[] = { U1 };
	uint64_t wantb[] = { PB_CTX_KERNEL, K2, PB_CTX_USER_DEFERRED, U1 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 10, 100, 0, K1, ka, 4);	/* its record was lost */
	pb_sample(&p, 10, 200, 0, K2, kb, 4);
	pb_deferred(&p, 10, 210, 0, CB, u, 1);
	if (!run(&p, false, &s, &st) || !ASSERT_EQ(s.n, 2))
		return;
	/* walked in arrival order: the CA sample goes out unmerged first */
	ASSERT_EQ(s.g[0].how, SFP_STITCH_OTHER_COOKIE);
	chain_is(&s.g[0], ka, 4);	/* marker + cookie kept */
	ASSERT_EQ(s.g[1].how, SFP_STITCH_MERGED);
	chain_is(&s.g[1], wantb, 4);
	ASSERT_EQ(st.nr_other_cookie, 1);
	ASSERT_EQ(st.nr_merged, 1);
}

TEST(stitch_other_tids_keep_waiting)
{
	uint64_t k10[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	uint64_t k11[] = { PB_CTX_KERNEL, K2, PB_CTX_USER_DEFERRED, CB };
	uint64_t u10[] = { U1 }, u11[] = { U2, U3 };
	uint64_t w10[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, U1 };
	uint64_t w11[] = { PB_CTX_KERNEL, K2, PB_CTX_USER_DEFERRED, U2, U3 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 10, 100, 0, K1, k10, 4);
	pb_sample(&p, 11, 105, 1, K2, k11, 4);
	pb_comm(&p, 12, 106, "other");		/* passes through at once */
	pb_deferred(&p, 11, 110, 1, CB, u11, 2);
	pb_deferred(&p, 10, 120, 0, CA, u10, 1);
	if (!run(&p, false, &s, &st) || !ASSERT_EQ(s.n, 3))
		return;
	ASSERT_EQ(s.g[0].type, SFP_PERF_RECORD_COMM);
	ASSERT_EQ(s.g[1].tid, 11);
	chain_is(&s.g[1], w11, 5);
	ASSERT_EQ(s.g[2].tid, 10);
	chain_is(&s.g[2], w10, 4);
	ASSERT_EQ(st.max_waiting, 2);
}

TEST(stitch_lost_record_leftover_at_end)
{
	uint64_t ka[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	uint64_t kb[] = { PB_CTX_KERNEL, K2, PB_CTX_USER_DEFERRED, CB };
	uint64_t u[] = { U1 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 10, 100, 0, K1, ka, 4);
	pb_sample(&p, 11, 101, 0, K2, kb, 4);	/* tid 11's record lost */
	pb_deferred(&p, 10, 120, 0, CA, u, 1);
	if (!run(&p, false, &s, &st) || !ASSERT_EQ(s.n, 2))
		return;
	ASSERT_EQ(s.g[0].how, SFP_STITCH_MERGED);
	ASSERT_EQ(s.g[1].how, SFP_STITCH_LEFTOVER);
	ASSERT_EQ(s.g[1].tid, 11);
	chain_is(&s.g[1], kb, 4);
	ASSERT_EQ(st.nr_leftover, 1);
	ASSERT_EQ(st.nr_unused_records, 0);
}

TEST(stitch_classic_user_part_passes_through)
{
	uint64_t kc[] = { PB_CTX_KERNEL, K1, PB_CTX_USER, U1, U2 };
	uint64_t kd[] = { PB_CTX_KERNEL, K2, PB_CTX_USER_DEFERRED, CA };
	uint64_t u[] = { U3 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 10, 90, 0, K2, kd, 4);
	pb_sample(&p, 10, 100, 0, K1, kc, 5);	/* kernel fell back: classic */
	pb_deferred(&p, 10, 120, 0, CA, u, 1);
	if (!run(&p, false, &s, &st) || !ASSERT_EQ(s.n, 2))
		return;
	/* the classic one is not held back behind the waiting one */
	ASSERT_EQ(s.g[0].time, 100);
	ASSERT_EQ(s.g[0].how, SFP_STITCH_PASS);
	chain_is(&s.g[0], kc, 5);
	ASSERT_EQ(s.g[1].time, 90);
	ASSERT_EQ(s.g[1].how, SFP_STITCH_MERGED);
	ASSERT_EQ(st.nr_waited, 1);
}

TEST(stitch_interleaved_cpus_time_ordered)
{
	uint64_t k10[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	uint64_t k11[] = { PB_CTX_KERNEL, K2, PB_CTX_USER_DEFERRED, CB };
	uint64_t u10[] = { U1 }, u11[] = { U2 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	/*
	 * Ring of CPU 1 read first within a round; tid 10's deferred record
	 * lands on CPU 1 (the task returned to user space there) before its
	 * sample of CPU 0 in file order.  Only time order makes it match.
	 */
	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 11, 300, 1, K2, k11, 4);
	pb_deferred(&p, 10, 150, 1, CA, u10, 1);
	pb_sample(&p, 10, 100, 0, K1, k10, 4);
	pb_round(&p);
	pb_deferred(&p, 11, 350, 0, CB, u11, 1);
	pb_round(&p);
	pb_round(&p);
	if (!run(&p, false, &s, &st) || !ASSERT_EQ(s.n, 2))
		return;
	ASSERT_EQ(s.g[0].tid, 10);
	ASSERT_EQ(s.g[0].how, SFP_STITCH_MERGED);
	ASSERT_EQ(s.g[0].ips[3], U1);
	ASSERT_EQ(s.g[1].tid, 11);
	ASSERT_EQ(s.g[1].how, SFP_STITCH_MERGED);
	ASSERT_EQ(s.g[1].ips[3], U2);
	ASSERT_EQ(st.nr_leftover, 0);
}

TEST(stitch_no_merge_passes_records)
{
	uint64_t kc[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	uint64_t u[] = { U1, U2 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 10, 100, 0, K1, kc, 4);
	pb_deferred(&p, 10, 120, 0, CA, u, 2);
	if (!run(&p, true, &s, &st) || !ASSERT_EQ(s.n, 2))
		return;
	chain_is(&s.g[0], kc, 4);
	ASSERT_EQ(s.g[1].type, SFP_PERF_RECORD_CALLCHAIN_DEFERRED);
	ASSERT_EQ(s.g[1].cookie, CA);
	ASSERT_EQ(s.g[1].tid, 10);
	chain_is(&s.g[1], u, 2);
	ASSERT_EQ(st.nr_merged, 0);
}

TEST(stitch_without_defer_callchain_attr_no_wait)
{
	uint64_t kc[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	uint64_t u[] = { U1 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	/* perf only recognizes the marker when attr.defer_callchain is set */
	pb_begin(&p, false, PB_SAMPLE_TYPE, 1ull << 18, 136);
	pb_sample(&p, 10, 100, 0, K1, kc, 4);
	pb_deferred(&p, 10, 120, 0, CA, u, 1);
	if (!run(&p, false, &s, &st) || !ASSERT_EQ(s.n, 1))
		return;
	ASSERT_EQ(s.g[0].how, SFP_STITCH_PASS);
	chain_is(&s.g[0], kc, 4);
	ASSERT_EQ(st.nr_unused_records, 1);
}

TEST(stitch_big_endian_file)
{
	uint64_t kc[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	uint64_t u[] = { U1, U2 };
	uint64_t want[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, U1, U2 };
	struct sfp_stitch_stats st;
	struct sink s;
	struct pb p;

	pb_begin(&p, true, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 0x01020304, 100, 3, K1, kc, 4);
	pb_deferred(&p, 0x01020304, 120, 2, CA, u, 2);
	if (!run(&p, false, &s, &st) || !ASSERT_EQ(s.n, 1))
		return;
	ASSERT_EQ(s.g[0].tid, 0x01020304);
	ASSERT_EQ(s.g[0].how, SFP_STITCH_MERGED);
	chain_is(&s.g[0], want, 5);
}

TEST(stitch_max_waiting_cap)
{
	SFP_OPTS(sfp_stitch_opts, so, .max_waiting = 2);
	uint64_t kc[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	struct sfp_perf_reader *r = NULL;
	struct sfp_stitcher *st = NULL;
	const struct sfp_perf_event *ev;
	struct sink s = { 0 };
	struct pb p;
	int i;

	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	for (i = 0; i < 5; i++)
		pb_sample(&p, (uint32_t)(20 + i), 100 + (uint64_t)i, 0, K1, kc, 4);
	pb_end(&p);
	if (!ASSERT_OK(sfp_perf_reader__open_mem(p.b, p.len, NULL, &r)) ||
	    !ASSERT_OK(sfp_stitcher__new(&so, collect, &s, &st)))
		goto out;
	while (sfp_perf_reader__next(r, &ev) > 0)
		ASSERT_OK(sfp_stitcher__push(st, ev));
	ASSERT_EQ(s.n, 3);	/* oldest pushed out as leftovers */
	ASSERT_EQ(s.g[0].tid, 20);
	ASSERT_OK(sfp_stitcher__flush(st));
	ASSERT_EQ(s.n, 5);
	ASSERT_EQ(sfp_stitcher__stats(st)->nr_leftover, 5);
	ASSERT_ERR(sfp_stitcher__new(NULL, NULL, NULL, &st), -EINVAL);
out:
	sfp_stitcher__free(&st);
	sfp_perf_reader__free(&r);
	free(p.b);
}
