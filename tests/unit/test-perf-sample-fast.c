// SPDX-License-Identifier: MIT
/*
 * The reader's short way through samples of fixed fields and a chain
 * (sfp_perf_decode_sample_fixed()) against the general decoder: for every
 * mix of the fixed sample_type bits, with and without a chain and the
 * deferred marker, between non-sample records and next to malformed
 * samples, each sample the reader delivers must be what
 * sfp_perf_decode_sample() makes of its raw bytes, field by field, and
 * every other field zero.
 */
#include <stdlib.h>

#include <sfprof/perf.h>

#include "perf-build.h"
#include "test.h"

#define ST_ADDR (1u << 3)
#define ST_ID (1u << 6)
#define ST_STREAM_ID (1u << 9)
#define ST_RAW (1u << 10)
#define FLAG_SAMPLE_ID_ALL (1ull << 18)
#define FLAG_DEFER (1ull << 38)

/* the fixed fields in the order of the UAPI */
static const uint64_t fixed[] = {
	PB_ST_IDENT, PB_ST_IP, PB_ST_TID, PB_ST_TIME, ST_ADDR, ST_ID,
	ST_STREAM_ID, PB_ST_CPU, PB_ST_PERIOD,
};
#define NFIXED (sizeof(fixed) / sizeof(fixed[0]))

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * A sample of type st: random values; a chain of nr entries (with the
 * deferred marker and a cookie last when defer); cut short by `cut`
 * bytes (a malformed record the reader must skip either way).
 */
static void sample(struct pb *p, uint64_t st, uint64_t *seed, uint64_t time,
		   uint64_t nr, bool defer, size_t cut)
{
	size_t start = p->len, i;
	uint64_t k;

	pb_u32(p, 9);
	pb_u16(p, 1);
	pb_u16(p, 0);
	for (i = 0; i < NFIXED; i++) {
		if (!(st & fixed[i]))
			continue;
		if (fixed[i] == PB_ST_IDENT || fixed[i] == ST_ID)
			pb_u64(p, PB_ID);
		else if (fixed[i] == PB_ST_TIME)
			pb_u64(p, time);
		else
			pb_u64(p, rnd(seed));
	}
	if (st & PB_ST_CALLCHAIN) {
		pb_u64(p, nr);
		for (k = 0; k < nr; k++) {
			if (defer && k == nr - 2)
				pb_u64(p, PB_CTX_USER_DEFERRED);
			else if (!k)
				pb_u64(p, PB_CTX_KERNEL);
			else
				pb_u64(p, 0xffffffff81000000ull + rnd(seed) % 4096);
		}
	}
	if (st & ST_RAW) {	/* u32 size, bytes, padded to 8 */
		pb_u32(p, 4);
		pb_u32(p, (uint32_t)rnd(seed));
	}
	p->len -= cut;
	pb_patch16(p, start + 6, (uint16_t)(p->len - start));
}

static bool same_u64s(const uint64_t *a, const uint64_t *b, uint64_t n)
{
	return n == 0 ? a == NULL && b == NULL : a && b &&
		!memcmp(a, b, n * sizeof(*a));
}

/* ev's sample is ref, every field (arrays by content) */
static bool same_sample(const struct sfp_perf_sample *a,
			const struct sfp_perf_sample *b)
{
	struct sfp_perf_sample x = *a, y = *b;

	if (!same_u64s(a->ips, b->ips, a->nr_ips) ||
	    a->nr_ips != b->nr_ips ||
	    (a->raw_size != b->raw_size) ||
	    (a->raw_size && memcmp(a->raw_data, b->raw_data, a->raw_size)))
		return false;
	/* the pointers compared by content above */
	x.ips = y.ips = NULL;
	x.raw_data = y.raw_data = NULL;
	return !memcmp(&x, &y, sizeof(x));
}

/* One file of sample_type st: samples, comm records, bad samples. */
static void check_type(uint64_t st, bool defer, uint64_t seed)
{
	SFP_OPTS(sfp_perf_reader_opts, uo, .unordered = true);
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	uint64_t scratch[256], n = 0, bad = 0, want = 0, i;
	struct pb p;
	int err;

	/* sample_id_all trailers need TID, TIME, ID: pb_comm writes them */
	pb_begin(&p, false, st, defer ? FLAG_DEFER : 0, 136);
	for (i = 0; i < 64; i++) {
		uint64_t nr = rnd(&seed) % 12;
		bool d = defer && nr >= 3 && rnd(&seed) % 2;
		/* cut by 8 bytes: a chain or a fixed field broken (a record
		 * of no fields has nothing to cut) */
		size_t cut = st && !(rnd(&seed) % 9) ? 8 : 0;

		sample(&p, st, &seed, 1000 + i, nr, d, cut);
		if (!cut)
			want++;
		if (!(rnd(&seed) % 5))
			pb_comm(&p, 7, 1000 + i, "other");
	}
	pb_end(&p);
	err = sfp_perf_reader__open_mem(p.b, p.len, &uo, &r);
	if (!ASSERT_OK(err))
		goto out;
	while ((err = sfp_perf_reader__next(r, &ev)) > 0) {
		struct sfp_perf_sample ref;

		if (ev->type != SFP_PERF_RECORD_SAMPLE)
			continue;
		n++;
		if (sfp_perf_decode_sample(&ev->evsel->attr, ev->raw, ev->size,
					   false, &ref, scratch, 256) ||
		    !same_sample(&ev->sample, &ref)) {
			bad++;
			fprintf(stderr, "  type %#llx%s: sample %llu differs\n",
				(unsigned long long)st, defer ? " defer" : "",
				(unsigned long long)n);
		}
	}
	ASSERT_EQ(err, 0);
	ASSERT_EQ(bad, 0);
	/* the malformed ones: skipped and counted, whichever way */
	ASSERT_EQ(n + sfp_perf_reader__stats(r)->nr_bad_records, 64);
	ASSERT_EQ(n, want);
out:
	sfp_perf_reader__free(&r);
	free(p.b);
}

TEST(sample_fast_matches_parser)
{
	uint64_t mask, seed = 0x9e3779b97f4a7c15ull;

	/* every subset of the fixed fields, with and without a chain */
	for (mask = 0; mask < (1u << NFIXED); mask++) {
		uint64_t st = 0;
		size_t i;

		for (i = 0; i < NFIXED; i++)
			if (mask & (1u << i))
				st |= fixed[i];
		check_type(st, false, seed + mask);
		check_type(st | PB_ST_CALLCHAIN, false, seed + mask);
	}
	/* the deferred marker; a type the short way does not take */
	check_type(PB_SAMPLE_TYPE, true, seed);
	check_type(PB_SAMPLE_TYPE | ST_RAW, false, seed);
	check_type(PB_SAMPLE_TYPE | ST_RAW, true, seed);
}
