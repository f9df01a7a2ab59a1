// SPDX-License-Identifier: MIT
/*
 * The writer's zstd-compressed data section (PERF_RECORD_COMPRESSED +
 * HEADER_COMPRESSED, as perf record -z writes it): the records read back
 * are byte for byte those written plain, over several chunks and with
 * chunks that need several COMPRESSED records; Debian's perf script reads
 * the file without a word on stderr.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <sfprof/perf.h>

#include "test.h"

#define NR 6000

static const struct sfp_perf_attr *test_attr(void)
{
	static struct sfp_perf_attr a;

	a.type = 1;	/* software: cpu-clock */
	a.config = 0;
	a.sample_period = 250000;
	a.sample_type = SFP_PERF_SAMPLE_IP | SFP_PERF_SAMPLE_TID |
			SFP_PERF_SAMPLE_TIME | SFP_PERF_SAMPLE_PERIOD |
			SFP_PERF_SAMPLE_CALLCHAIN | SFP_PERF_SAMPLE_RAW;
	a.flags = SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL | SFP_PERF_ATTR_FLAG_COMM;
	return &a;
}

/* Write NR samples: repetitive stacks, and (noise) random raw bytes that
 * zstd cannot shrink, so that one chunk needs several records. */
static int write_file(const char *path, int level, bool noise)
{
	SFP_OPTS(sfp_perf_writer_opts, wo, .hostname = "box",
		 .compression_level = level);
	struct sfp_perf_writer *w = NULL;
	struct sfp_perf_sample s = { 0 };
	uint64_t ips[8];
	uint8_t raw[1020], buf[2048];
	unsigned int seed = 7;
	int i, len, err;

	err = sfp_perf_writer__open(path, &wo, &w);
	if (err)
		return err;
	err = sfp_perf_writer__add_evsel(w, test_attr(), NULL, 0, "cpu-clock");
	if (err < 0)
		goto out;
	for (i = 0; i < NR; i++) {
		size_t k;

		ips[0] = SFP_PERF_CONTEXT_USER;
		for (k = 1; k < 8; k++)
			ips[k] = 0x401000 + 0x10 * k + (uint64_t)(i % (int)k);
		for (k = 0; k < sizeof(raw); k++)
			raw[k] = noise ? (uint8_t)rand_r(&seed) : (uint8_t)k;
		s.ip = ips[1];
		s.pid = s.tid = 1000 + i % 3;
		s.time = 1000000 + (uint64_t)i * 250000;
		s.period = 250000;
		s.ips = ips;
		s.nr_ips = 8;
		s.raw_data = raw;
		s.raw_size = (i % 4) ? 4 : sizeof(raw);
		len = sfp_perf_write_sample(test_attr(), SFP_PERF_MISC_USER, &s,
					    buf, sizeof(buf));
		if (len < 0) {
			err = len;
			goto out;
		}
		err = sfp_perf_writer__write(w, buf, (size_t)len);
		if (err)
			goto out;
	}
	return sfp_perf_writer__close(&w);
out:
	sfp_perf_writer__free(&w);
	return err;
}

/* The records of a file, concatenated, and how many COMPRESSED it had. */
static uint8_t *read_all(const char *path, size_t *len, uint64_t *ncomp,
			 bool *feat)
{
	SFP_OPTS(sfp_perf_reader_opts, o, .unordered = true);
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	uint8_t *all = NULL;
	size_t cap = 0;

	*len = 0;
	if (sfp_perf_reader__open(path, &o, &r))
		return NULL;
	while (sfp_perf_reader__next(r, &ev) > 0) {
		if (*len + ev->size > cap) {
			cap = (*len + ev->size) * 2;
			all = realloc(all, cap);
		}
		memcpy(all + *len, ev->raw, ev->size);
		*len += ev->size;
	}
	*ncomp = sfp_perf_reader__stats(r)->nr_compressed;
	*feat = sfp_perf_reader__header(r)->features[0] &
		(1ull << SFP_PERF_FEAT_COMPRESSED);
	sfp_perf_reader__free(&r);
	return all;
}

static off_t fsize(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static void round_trip(bool noise)
{
	char plain[4096], z1[4096], z9[4096];
	uint8_t *a = NULL, *b = NULL, *c = NULL;
	size_t la, lb, lc;
	uint64_t na, nb, nc;
	bool fa, fb, fc;

	snprintf(plain, sizeof(plain), "%s/plain-%d.data", test_tmp_dir(), noise);
	snprintf(z1, sizeof(z1), "%s/z1-%d.data", test_tmp_dir(), noise);
	snprintf(z9, sizeof(z9), "%s/z9-%d.data", test_tmp_dir(), noise);
	if (!ASSERT_OK(write_file(plain, 0, noise)) ||
	    !ASSERT_OK(write_file(z1, 1, noise)) ||
	    !ASSERT_OK(write_file(z9, 9, noise)))
		return;
	a = read_all(plain, &la, &na, &fa);
	b = read_all(z1, &lb, &nb, &fb);
	c = read_all(z9, &lc, &nc, &fc);
	if (!ASSERT_TRUE(a && b && c))
		goto out;
	ASSERT_EQ(na, 0);
	ASSERT_FALSE(fa);
	ASSERT_TRUE(fb && fc);
	/* several chunks of 256 KiB; with noise a chunk needs several
	 * COMPRESSED records (each at most 64 KiB) */
	ASSERT_TRUE(la > 3 * (256u << 10));
	ASSERT_TRUE(nb > 3);
	ASSERT_TRUE(nb * 65535 >= (uint64_t)fsize(z1) - 4096);
	if (noise)	/* more records than chunks: chunks were split */
		ASSERT_TRUE(nb >= 2 * (la / (256u << 10)));
	if (ASSERT_EQ(lb, la))
		ASSERT_TRUE(!memcmp(a, b, la));
	if (ASSERT_EQ(lc, la))
		ASSERT_TRUE(!memcmp(a, c, la));
	if (!noise)
		ASSERT_TRUE(fsize(z1) * 10 < fsize(plain));
out:
	free(a);
	free(b);
	free(c);
}

TEST(compressed_round_trip)
{
	round_trip(false);
}

TEST(compressed_round_trip_incompressible)
{
	round_trip(true);
}

TEST(compressed_bad_level)
{
	SFP_OPTS(sfp_perf_writer_opts, wo, .compression_level = 99);
	struct sfp_perf_writer *w = NULL;
	char path[4096];

	snprintf(path, sizeof(path), "%s/bad.data", test_tmp_dir());
	ASSERT_ERR(sfp_perf_writer__open(path, &wo, &w), -EINVAL);
	ASSERT_TRUE(w == NULL);
	wo.compression_level = -1;
	ASSERT_ERR(sfp_perf_writer__open(path, &wo, &w), -EINVAL);
}

/* perf (5.2+) reads the compressed file: every sample, nothing on stderr. */
TEST(compressed_read_by_perf)
{
	char path[1024], cmd[4096], out[1024], err[1024];
	char line[256];
	int n = 0;
	FILE *f;

	if (system("perf version > /dev/null 2>&1")) {
		test_skip("no perf");
		return;
	}
	snprintf(path, sizeof(path), "%s/perf-z.data", test_tmp_dir());
	snprintf(out, sizeof(out), "%s/perf-z.out", test_tmp_dir());
	snprintf(err, sizeof(err), "%s/perf-z.err", test_tmp_dir());
	if (!ASSERT_OK(write_file(path, 3, true)))
		return;
	snprintf(cmd, sizeof(cmd), "perf script -F tid,time,ip -i %s > %s 2> %s",
		 path, out, err);
	if (!ASSERT_EQ(system(cmd), 0))
		return;
	ASSERT_EQ(fsize(err), 0);
	f = fopen(out, "r");
	if (!ASSERT_TRUE(f))
		return;
	/* one line with tid and time per sample */
	while (fgets(line, sizeof(line), f))
		if (strchr(line, ':') && (strstr(line, "1000 ") ||
					  strstr(line, "1001 ") ||
					  strstr(line, "1002 ")))
			n++;
	fclose(f);
	ASSERT_EQ(n, NR);
}
