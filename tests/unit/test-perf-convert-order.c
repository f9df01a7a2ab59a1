// SPDX-License-Identifier: MIT
/*
 * `sfprof convert` keeps the input's order: a deferred sample that waits
 * for its record is written at its own place, not when the record comes.
 * Two threads' samples of one nanosecond are the case that shows it: perf
 * orders such ties by their place in the file, so writing the waiting one
 * late swaps them in `perf script`.  The file is built byte by byte
 * (perf-build.h), converted by the real CLI and read back by the reader,
 * which keeps ties in file order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/perf.h>

#include "perf-build.h"
#include "test.h"

#define DEFER_FLAGS ((1ull << 18) | (1ull << 38) | (1ull << 39))
#define K1 0xffffffff81000010ull
#define U1 0x401000ull
#define U2 0x402000ull
#define U3 0x403000ull
#define CA 0x0000000b00000001ull

struct seen {
	uint32_t tid;
	uint64_t time;
	uint64_t nr;
	uint64_t last;		/* outermost frame */
};

static int convert_and_read(const struct pb *p, struct seen *out, int max)
{
	const char *sfprof = getenv("SFPROF");
	char in[600], o[600], cmd[2000];
	const struct sfp_perf_event *ev;
	struct sfp_perf_reader *r = NULL;
	int n = 0, err;
	FILE *f;

	snprintf(in, sizeof(in), "%s/order-in.data", test_tmp_dir());
	snprintf(o, sizeof(o), "%s/order-out.data", test_tmp_dir());
	f = fopen(in, "wb");
	if (!ASSERT_NOT_NULL(f))
		return -1;
	ASSERT_EQ(fwrite(p->b, 1, p->len, f), p->len);
	fclose(f);
	remove(o);
	snprintf(cmd, sizeof(cmd), "'%s' convert --inline -i '%s' -o '%s' 2>/dev/null",
		 sfprof, in, o);
	if (!ASSERT_EQ(system(cmd), 0))
		return -1;
	if (!ASSERT_OK(sfp_perf_reader__open(o, NULL, &r)))
		return -1;
	while ((err = sfp_perf_reader__next(r, &ev)) > 0) {
		if (ev->type != SFP_PERF_RECORD_SAMPLE || n >= max)
			continue;
		out[n].tid = ev->sample.tid;
		out[n].time = ev->sample.time;
		out[n].nr = ev->sample.nr_ips;
		out[n].last = ev->sample.nr_ips ?
			ev->sample.ips[ev->sample.nr_ips - 1] : 0;
		n++;
	}
	ASSERT_EQ(err, 0);
	sfp_perf_reader__free(&r);
	return n;
}

TEST(convert_inline_keeps_ties_in_input_order)
{
	uint64_t kc[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	uint64_t uc[] = { PB_CTX_USER, U3 };
	uint64_t u[] = { U1, U2 };
	struct seen s[8];
	struct pb p;
	int n;

	if (!getenv("SFPROF")) {
		test_skip("SFPROF not set (run through tests/run-tests.sh)");
		return;
	}
	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_comm(&p, 10, 50, "a");
	pb_comm(&p, 20, 60, "b");
	pb_sample(&p, 10, 100, 0, K1, kc, 4);	/* waits for its record */
	pb_sample(&p, 20, 100, 1, U3, uc, 2);	/* same nanosecond */
	pb_sample(&p, 20, 110, 1, U3, uc, 2);
	pb_deferred(&p, 10, 120, 0, CA, u, 2);
	pb_sample(&p, 20, 130, 1, U3, uc, 2);
	pb_round(&p);
	pb_end(&p);
	n = convert_and_read(&p, s, 8);
	free(p.b);
	if (!ASSERT_EQ(n, 4))
		return;
	/* tid 10's sample first, as in the input, and merged */
	ASSERT_EQ(s[0].tid, 10);
	ASSERT_EQ(s[0].time, 100);
	ASSERT_EQ(s[0].nr, 5);		/* kernel, K1, user, U1, U2 */
	ASSERT_EQ(s[0].last, U2);
	ASSERT_EQ(s[1].tid, 20);
	ASSERT_EQ(s[1].time, 100);
	ASSERT_EQ(s[2].time, 110);
	ASSERT_EQ(s[3].time, 130);
}

/* A record that never comes: the sample is written unmerged, in place. */
TEST(convert_inline_sample_whose_record_never_comes)
{
	uint64_t kc[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, CA };
	uint64_t uc[] = { PB_CTX_USER, U3 };
	struct seen s[8];
	struct pb p;
	int n;

	if (!getenv("SFPROF")) {
		test_skip("SFPROF not set (run through tests/run-tests.sh)");
		return;
	}
	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	pb_sample(&p, 10, 100, 0, K1, kc, 4);
	pb_sample(&p, 20, 100, 1, U3, uc, 2);
	pb_sample(&p, 20, 200, 1, U3, uc, 2);
	pb_round(&p);
	pb_end(&p);
	n = convert_and_read(&p, s, 8);
	free(p.b);
	if (!ASSERT_EQ(n, 3))
		return;
	ASSERT_EQ(s[0].tid, 10);
	ASSERT_EQ(s[0].last, K1);	/* no user part to add */
	ASSERT_EQ(s[1].tid, 20);
	ASSERT_EQ(s[1].time, 100);
	ASSERT_EQ(s[2].time, 200);
}

/*
 * Two threads whose waits overlap, a third that never waits: some sample
 * always waits, so the places never all get written at once; past 1,024
 * written ones they are compacted.  Every sample must still come out in
 * its input place.
 */
TEST(convert_inline_order_with_waits_that_always_overlap)
{
	enum { ROUNDS = 1500, MAX = 4 * ROUNDS + 8 };
	uint64_t ca[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, 0 };
	uint64_t cb[] = { PB_CTX_KERNEL, K1, PB_CTX_USER_DEFERRED, 0 };
	uint64_t uc[] = { PB_CTX_USER, U3 };
	uint64_t u[] = { U1, U2 };
	static struct seen s[MAX];
	static uint32_t want[MAX];
	uint64_t t = 100;
	struct pb p;
	int i, n, nw = 0, bad = 0;

	if (!getenv("SFPROF")) {
		test_skip("SFPROF not set (run through tests/run-tests.sh)");
		return;
	}
	pb_begin(&p, false, PB_SAMPLE_TYPE, DEFER_FLAGS, 136);
	/* A waits; B waits; C passes; A's record; A again; C; B's record:
	 * whenever places are written, one with bytes waits behind a sample */
	ca[3] = ((uint64_t)1 << 32) | 1;
	pb_sample(&p, 10, t++, 0, K1, ca, 4);
	want[nw++] = 10;
	for (i = 0; i < ROUNDS; i++) {
		cb[3] = ((uint64_t)(2 * i + 2) << 32) | 2;
		pb_sample(&p, 20, t++, 1, K1, cb, 4);
		want[nw++] = 20;
		pb_sample(&p, 30, t++, 1, U3, uc, 2);
		want[nw++] = 30;
		pb_deferred(&p, 10, t++, 0, ca[3], u, 2);
		ca[3] = ((uint64_t)(2 * i + 3) << 32) | 1;
		pb_sample(&p, 10, t++, 0, K1, ca, 4);
		want[nw++] = 10;
		pb_sample(&p, 30, t++, 1, U3, uc, 2);
		want[nw++] = 30;
		pb_deferred(&p, 20, t++, 1, cb[3], u, 2);
	}
	pb_deferred(&p, 10, t++, 0, ca[3], u, 2);
	pb_round(&p);
	pb_end(&p);
	n = convert_and_read(&p, s, MAX);
	free(p.b);
	if (!ASSERT_EQ(n, nw))
		return;
	for (i = 0; i < n; i++)
		bad += s[i].tid != want[i] ||
		       s[i].last != (want[i] == 30 ? U3 : U2) ||
		       (i && s[i].time <= s[i - 1].time);
	ASSERT_EQ(bad, 0);
}
