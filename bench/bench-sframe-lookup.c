// SPDX-License-Identifier: MIT
/*
 * Lookup cost: sfp_sframe__find() next to libsframe's sframe_find_fre() on
 * the same large synthetic table, in one run.
 *
 * Debian's libsframe (binutils 2.40) reads only SFrame version 1, so the
 * table is a v1 section: 50,000 functions of 32..2048 bytes (ADDR1 or
 * ADDR2 FRE starts), 2..12 rows each, AMD64, sorted.  Both libraries get
 * the same bytes.  PC sets:
 *   random   - 1M PCs spread over the whole text (about 3% fall in the
 *              gaps between functions: misses for both);
 *   repeated - 64 hot PCs cycled 1M times (the profiler's common case of
 *              the same few frames).
 * Each set runs 5 times; the best round is reported.  Both lookups are
 * checked to agree (same CFA offset) on every PC before timing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sframe-api.h>
#include <sfprof/sframe.h>

#define NFUNCS 50000
#define NPCS 1000000
#define NHOT 64
#define ROUNDS 5

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

struct buf {
	uint8_t *b;
	size_t n, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->cap + n) * 2;
		b->b = realloc(b->b, b->cap);
		if (!b->b)
			abort();
	}
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }

static uint32_t text_end;

/* v1 section: header, FDEs (17 bytes), FREs.  Functions from 0x10000
 * (section-relative, the section itself at address 0). */
static struct buf make_v1(void)
{
	struct buf fdes = { 0 }, fres = { 0 }, out = { 0 };
	uint32_t addr = 0x10000, nfres = 0, i;

	for (i = 0; i < NFUNCS; i++) {
		uint32_t size = 32 + rnd() % 2017, n = 2 + rnd() % 11, j;
		uint8_t fre_type = size < 256 ? 0 : 1, info = fre_type;
		uint32_t fre_off = (uint32_t)fres.n;

		put32(&fdes, addr);
		put32(&fdes, size);
		put32(&fdes, fre_off);
		put32(&fdes, n);
		put(&fdes, &info, 1);
		for (j = 0; j < n; j++) {
			uint32_t start = j ? (size * j) / n : 0;
			uint8_t fi = j % 3 ? 0x05 : 0x03;	/* SP, 2 or 1 words */
			int8_t w[2] = { (int8_t)(8 + 8 * (j % 8)), -16 };

			if (fre_type == 0) {
				uint8_t s8 = (uint8_t)start;
				put(&fres, &s8, 1);
			} else {
				uint16_t s16 = (uint16_t)start;
				put(&fres, &s16, 2);
			}
			put(&fres, &fi, 1);
			put(&fres, w, fi == 0x05 ? 2 : 1);
			nfres++;
		}
		addr += size + (rnd() % 8 ? 0 : 16 + rnd() % 64);
	}
	text_end = addr;
	{
		uint16_t magic = 0xdee2;
		uint8_t pre[6] = { 1, 1, 3, 0, (uint8_t)-8, 0 };

		put(&out, &magic, 2);
		put(&out, pre, 6);
		put32(&out, NFUNCS);
		put32(&out, nfres);
		put32(&out, (uint32_t)fres.n);
		put32(&out, 0);
		put32(&out, (uint32_t)fdes.n);
	}
	put(&out, fdes.b, fdes.n);
	put(&out, fres.b, fres.n);
	free(fdes.b);
	free(fres.b);
	return out;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static volatile int64_t sink;

static double time_sfprof(const struct sfp_sframe *sf, const uint32_t *pcs,
			  size_t n)
{
	double best = 1e30;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		struct sfp_sframe_row row;
		int64_t acc = 0;
		double t0 = now_ns(), dt;
		size_t i;

		for (i = 0; i < n; i++)
			if (!sfp_sframe__find(sf, pcs[i], &row))
				acc += row.cfa.offset;
		dt = (now_ns() - t0) / n;
		sink = acc;
		if (dt < best)
			best = dt;
	}
	return best;
}

static double time_libsframe(sframe_decoder_ctx *dc, const uint32_t *pcs,
			     size_t n)
{
	double best = 1e30;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		sframe_frame_row_entry fre;
		int64_t acc = 0;
		double t0 = now_ns(), dt;
		size_t i;

		for (i = 0; i < n; i++)
			if (!sframe_find_fre(dc, (int32_t)pcs[i], &fre))
				acc += fre.fre_info;
		dt = (now_ns() - t0) / n;
		sink = acc;
		if (dt < best)
			best = dt;
	}
	return best;
}

static size_t compare(const struct sfp_sframe *sf, sframe_decoder_ctx *dc,
		      const uint32_t *pcs, size_t n, size_t *hits)
{
	size_t i, bad = 0;

	*hits = 0;
	for (i = 0; i < n; i++) {
		struct sfp_sframe_row row;
		sframe_frame_row_entry fre;
		int e1 = sfp_sframe__find(sf, pcs[i], &row);
		int e2 = sframe_find_fre(dc, (int32_t)pcs[i], &fre);
		int err = 0;

		if (!e1 != !e2) {
			bad++;
			continue;
		}
		if (e1)
			continue;
		(*hits)++;
		if (sframe_fre_get_cfa_offset(dc, &fre, &err) != row.cfa.offset || err)
			bad++;
	}
	return bad;
}

int main(void)
{
	struct buf sec = make_v1();
	uint32_t *rand_pcs = malloc(sizeof(*rand_pcs) * NPCS);
	uint32_t *hot_pcs = malloc(sizeof(*hot_pcs) * NPCS);
	uint32_t hot[NHOT];
	struct sfp_sframe *sf = NULL;
	struct sfp_sframe_info info;
	sframe_decoder_ctx *dc;
	size_t i, hits, bad;
	double a, b;
	int err = 0;

	if (!rand_pcs || !hot_pcs)
		return 1;
	for (i = 0; i < NPCS; i++)
		rand_pcs[i] = 0x10000 + rnd() % (text_end - 0x10000);
	for (i = 0; i < NHOT; i++)
		hot[i] = 0x10000 + rnd() % (text_end - 0x10000);
	for (i = 0; i < NPCS; i++)
		hot_pcs[i] = hot[i % NHOT];

	if (sfp_sframe__open_mem(sec.b, sec.n, NULL, &sf)) {
		fprintf(stderr, "sfprof cannot open the table\n");
		return 1;
	}
	dc = sframe_decode((const char *)sec.b, sec.n, &err);
	if (!dc) {
		fprintf(stderr, "libsframe cannot decode the table: %d\n", err);
		return 1;
	}
	sfp_sframe__info(sf, &info);
	bad = compare(sf, dc, rand_pcs, NPCS, &hits);
	printf("bench-sframe-lookup: v1 table, %u FDEs, %u FREs, %zu bytes; "
	       "results agree on %zu/%d PCs (%zu hits)\n",
	       sframe_decoder_get_num_fidx(dc), info.num_fres, sec.n,
	       (size_t)NPCS - bad, NPCS, hits);
	if (bad) {
		printf("  MISMATCH: %zu lookups differ\n", bad);
		return 1;
	}
	a = time_sfprof(sf, rand_pcs, NPCS);
	b = time_libsframe(dc, rand_pcs, NPCS);
	printf("  random PCs:   sfprof %7.1f ns/lookup   libsframe %7.1f ns/lookup   libsframe/sfprof %.1fx\n",
	       a, b, b / a);
	a = time_sfprof(sf, hot_pcs, NPCS);
	b = time_libsframe(dc, hot_pcs, NPCS);
	printf("  repeated PCs: sfprof %7.1f ns/lookup   libsframe %7.1f ns/lookup   libsframe/sfprof %.1fx\n",
	       a, b, b / a);
	sframe_decoder_free(&dc);
	sfp_sframe__free(&sf);
	free(rand_pcs);
	free(hot_pcs);
	free(sec.b);
	return 0;
}
