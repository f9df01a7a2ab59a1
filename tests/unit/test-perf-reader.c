// SPDX-License-Identifier: MIT
/*
 * perf.data reader and sample codec: real files recorded by perf on this
 * machine (tests/data/perf), files built byte by byte (perf-build.h), and
 * every prefix of real files (no crash, no overread, a clean error).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <sfprof/perf.h>

#include "perf-build.h"
#include "perf/perf-int.h"
#include "test.h"

static uint8_t *slurp(const char *name, size_t *len)
{
	char path[4096];
	struct stat st;
	uint8_t *b;
	int fd;

	snprintf(path, sizeof(path), "%s/perf/%s", test_data_dir(), name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	b = malloc((size_t)st.st_size + 1);
	if (b && read(fd, b, (size_t)st.st_size) != st.st_size) {
		free(b);
		b = NULL;
	}
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

struct tally {
	uint64_t samples, chains, mmaps, comms, deferred, last_time;
	bool ordered;
	int err;
};

static void read_all(struct sfp_perf_reader *r, struct tally *t)
{
	const struct sfp_perf_event *ev;
	int err;

	memset(t, 0, sizeof(*t));
	t->ordered = true;
	while ((err = sfp_perf_reader__next(r, &ev)) > 0) {
		if (ev->sample.present & SFP_PERF_SAMPLE_TIME) {
			if (ev->sample.time < t->last_time)
				t->ordered = false;
			t->last_time = ev->sample.time;
		}
		switch (ev->type) {
		case SFP_PERF_RECORD_SAMPLE:
			t->samples++;
			if (ev->sample.nr_ips && ev->sample.ips[0] >= SFP_PERF_CONTEXT_MAX)
				t->chains++;
			break;
		case SFP_PERF_RECORD_MMAP:
		case SFP_PERF_RECORD_MMAP2:
			t->mmaps++;
			break;
		case SFP_PERF_RECORD_COMM:
			t->comms++;
			break;
		case SFP_PERF_RECORD_CALLCHAIN_DEFERRED:
			t->deferred++;
			break;
		}
	}
	t->err = err;
}

static bool open_fixture(const char *name, uint8_t **buf, size_t *len,
			 struct sfp_perf_reader **r)
{
	*buf = slurp(name, len);
	if (!*buf) {
		test_skip("fixture %s missing", name);
		return false;
	}
	return ASSERT_OK(sfp_perf_reader__open_mem(*buf, *len, NULL, r));
}

TEST(reader_real_fp_file)
{
	const struct sfp_perf_header_info *h;
	const struct sfp_perf_evsel *e;
	struct sfp_perf_reader *r = NULL;
	struct tally t;
	uint8_t *buf;
	size_t len;

	if (!open_fixture("fp.data", &buf, &len, &r))
		goto out;
	ASSERT_EQ(sfp_perf_reader__nr_evsels(r), 1);
	e = sfp_perf_reader__evsel(r, 0);
	ASSERT_STREQ(e->name, "cpu-clock");
	ASSERT_TRUE(e->attr.sample_type & SFP_PERF_SAMPLE_CALLCHAIN);
	ASSERT_TRUE(e->attr.flags & SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL);
	h = sfp_perf_reader__header(r);
	ASSERT_FALSE(h->pipe_mode);
	ASSERT_FALSE(h->swapped);
	ASSERT_NOT_NULL(h->hostname);
	ASSERT_NOT_NULL(h->osrelease);
	ASSERT_GE(h->nr_cpus_online, 1);
	ASSERT_GE(h->nr_cmdline, 2);
	ASSERT_STREQ(h->cmdline[1], "record");
	ASSERT_GE(h->nr_build_ids, 1);
	read_all(r, &t);
	ASSERT_EQ(t.err, 0);
	ASSERT_GE(t.samples, 1);
	ASSERT_EQ(t.chains, t.samples);	/* -g: every chain starts with a context */
	ASSERT_TRUE(t.ordered);
	ASSERT_GE(t.mmaps, 1);
	ASSERT_EQ(t.samples, sfp_perf_reader__stats(r)->nr_records[SFP_PERF_RECORD_SAMPLE]);
	ASSERT_EQ(sfp_perf_reader__stats(r)->nr_unknown, 0);
out:
	sfp_perf_reader__free(&r);
	free(buf);
}

TEST(reader_pipe_and_compressed_files)
{
	static const char *const names[] = { "pipe.data", "z.data", "dwarf.data",
					     "plain.data", "deferred.data" };
	size_t i;

	for (i = 0; i < (sizeof(names) / sizeof(names[0])); i++) {
		struct sfp_perf_reader *r = NULL;
		struct tally t;
		uint8_t *buf;
		size_t len;

		if (!open_fixture(names[i], &buf, &len, &r)) {
			free(buf);
			continue;
		}
		read_all(r, &t);
		ASSERT_EQ(t.err, 0);
		ASSERT_GE(t.samples, 1);
		ASSERT_TRUE(t.ordered);
		ASSERT_GE(sfp_perf_reader__nr_evsels(r), 1);
		if (!strcmp(names[i], "pipe.data")) {
			ASSERT_TRUE(sfp_perf_reader__header(r)->pipe_mode);
			/* named by an EVENT_UPDATE record in pipe mode */
			ASSERT_STREQ(sfp_perf_reader__evsel(r, 0)->name, "cpu-clock");
		}
		if (!strcmp(names[i], "z.data"))
			ASSERT_GE(sfp_perf_reader__stats(r)->nr_compressed, 1);
		if (!strcmp(names[i], "deferred.data")) {
			ASSERT_EQ(t.deferred, t.samples);
			ASSERT_TRUE(sfp_perf_reader__evsel(r, 0)->attr.flags &
				    SFP_PERF_ATTR_FLAG_DEFER_CALLCHAIN);
			ASSERT_TRUE(sfp_perf_reader__evsel(r, 0)->attr.flags &
				    SFP_PERF_ATTR_FLAG_DEFER_OUTPUT);
		}
		sfp_perf_reader__free(&r);
		free(buf);
	}
}

/* Every prefix of a real file: an error or a shorter read, never a crash. */
TEST(reader_every_prefix)
{
	static const char *const names[] = { "fp.data", "pipe.data", "z.data",
					     "deferred.data" };
	size_t i, n;

	for (i = 0; i < (sizeof(names) / sizeof(names[0])); i++) {
		uint8_t *buf;
		size_t len;

		buf = slurp(names[i], &len);
		if (!buf) {
			test_skip("fixture %s missing", names[i]);
			continue;
		}
		for (n = 0; n < len; n += n < 512 ? 1 : 5) {
			/* an exact-size copy so that ASan sees overreads */
			uint8_t *p = malloc(n ? n : 1);
			struct sfp_perf_reader *r = NULL;
			struct tally t;
			int err;

			memcpy(p, buf, n);
			err = sfp_perf_reader__open_mem(p, n, NULL, &r);
			if (!err) {
				read_all(r, &t);
				if (!ASSERT_TRUE(t.err == 0 || t.err == -EBADMSG)) {
					free(p);
					sfp_perf_reader__free(&r);
					break;
				}
			} else if (!ASSERT_TRUE(err == -EBADMSG)) {
				free(p);
				break;
			}
			sfp_perf_reader__free(&r);
			free(p);
		}
		free(buf);
	}
}

TEST(reader_bad_magic_and_version1)
{
	struct sfp_perf_reader *r = NULL;
	uint8_t junk[128] = "not perf data";
	uint8_t v1[128] = "PERFFILE";

	ASSERT_ERR(sfp_perf_reader__open_mem(junk, sizeof(junk), NULL, &r), -EBADMSG);
	ASSERT_ERR(sfp_perf_reader__open_mem(v1, sizeof(v1), NULL, &r), -EOPNOTSUPP);
	ASSERT_ERR(sfp_perf_reader__open_mem(junk, 4, NULL, &r), -EBADMSG);
	ASSERT_TRUE(r == NULL);
	ASSERT_ERR(sfp_perf_reader__open("/nonexistent/perf.data", NULL, &r), -ENOENT);
}

TEST(reader_attr_ver0_and_unknown_records)
{
	uint64_t kc[] = { PB_CTX_KERNEL, 0xffffffff81000000ull, PB_CTX_USER, 0x401000 };
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	struct pb p;
	size_t start;
	int n = 0, err;

	/* a 64-byte (VER0) attr, as very old perf wrote */
	pb_begin(&p, false, PB_SAMPLE_TYPE, 1ull << 18, 64);
	pb_sample(&p, 5, 100, 1, 0x401000, kc, 4);
	start = p.len;			/* kernel type 30: not known to us */
	pb_u32(&p, 30);
	pb_u16(&p, 0);
	pb_u16(&p, 24);
	pb_u64(&p, 1);
	pb_u64(&p, 2);
	(void)start;
	pb_u32(&p, 95);			/* a future perf-tool type */
	pb_u16(&p, 0);
	pb_u16(&p, 16);
	pb_u64(&p, 0);
	pb_sample(&p, 5, 200, 1, 0x401000, kc, 4);
	pb_end(&p);
	if (!ASSERT_OK(sfp_perf_reader__open_mem(p.b, p.len, NULL, &r)))
		goto out;
	ASSERT_EQ(sfp_perf_reader__evsel(r, 0)->attr.size, 64);
	ASSERT_EQ(sfp_perf_reader__evsel(r, 0)->attr.sample_type, PB_SAMPLE_TYPE);
	while ((err = sfp_perf_reader__next(r, &ev)) > 0) {
		ASSERT_EQ(ev->type, SFP_PERF_RECORD_SAMPLE);
		ASSERT_EQ(ev->sample.nr_ips, 4);
		ASSERT_EQ(ev->sample.ips[3], 0x401000);
		ASSERT_EQ(ev->sample.cpu, 1);
		ASSERT_EQ(ev->sample.period, 10000);
		ASSERT_EQ(ev->sample.id, PB_ID);
		n++;
	}
	ASSERT_EQ(err, 0);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(sfp_perf_reader__stats(r)->nr_unknown, 2);
out:
	sfp_perf_reader__free(&r);
	free(p.b);
}

static void order_file(struct pb *p, bool rounds)
{
	static const uint64_t t[] = { 50, 10, 40, 20, 30, 90, 60, 80, 70 };
	uint64_t kc[] = { PB_CTX_KERNEL, 0xffffffff81000000ull };
	size_t i;

	pb_begin(p, false, PB_SAMPLE_TYPE, 1ull << 18, 136);
	for (i = 0; i < 9; i++) {
		pb_sample(p, 1, t[i], (uint32_t)(i & 1), 0, kc, 2);
		if (rounds && i % 3 == 2)
			pb_round(p);
	}
	pb_end(p);
}

TEST(reader_time_order_and_rounds)
{
	SFP_OPTS(sfp_perf_reader_opts, uo, .unordered = true);
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	uint64_t got[9];
	struct pb p;
	int n;

	/* perf's rule: a round's records wait one more round; the stream
	 * here is ordered within two rounds, so the output is sorted */
	order_file(&p, true);
	if (!ASSERT_OK(sfp_perf_reader__open_mem(p.b, p.len, NULL, &r)))
		goto out;
	for (n = 0; n < 9 && sfp_perf_reader__next(r, &ev) > 0; n++)
		got[n] = ev->sample.time;
	ASSERT_EQ(n, 9);
	for (n = 1; n < 9; n++)
		ASSERT_TRUE(got[n - 1] <= got[n]);
	ASSERT_EQ(sfp_perf_reader__stats(r)->nr_unordered, 0);
	sfp_perf_reader__free(&r);
	/* unordered: file order */
	if (!ASSERT_OK(sfp_perf_reader__open_mem(p.b, p.len, &uo, &r)))
		goto out;
	ASSERT_EQ(sfp_perf_reader__next(r, &ev), 1);
	ASSERT_EQ(ev->sample.time, 50);
	ASSERT_EQ(sfp_perf_reader__next(r, &ev), 1);
	ASSERT_EQ(ev->sample.time, 10);
out:
	sfp_perf_reader__free(&r);
	free(p.b);
}

TEST(reader_queue_is_bounded)
{
	SFP_OPTS(sfp_perf_reader_opts, o, .max_queue_bytes = 1024);
	uint64_t kc[] = { PB_CTX_KERNEL, 0xffffffff81000000ull };
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	struct pb p;
	int i, n = 0;

	pb_begin(&p, false, PB_SAMPLE_TYPE, 1ull << 18, 136);
	for (i = 0; i < 1000; i++)	/* no rounds at all */
		pb_sample(&p, 1, 1000 + (uint64_t)i, 0, 0, kc, 2);
	pb_end(&p);
	if (!ASSERT_OK(sfp_perf_reader__open_mem(p.b, p.len, &o, &r)))
		goto out;
	while (sfp_perf_reader__next(r, &ev) > 0)
		n++;
	ASSERT_EQ(n, 1000);
	ASSERT_TRUE(sfp_perf_reader__stats(r)->max_queued_bytes <= 1024 + 256);
out:
	sfp_perf_reader__free(&r);
	free(p.b);
}

/*
 * A file of rounds records of nr_ips-entry chains, each round written
 * newest first, read from disk: every record comes back whole and in time
 * order, also those that wait in the queue while the reader moves on.
 * The file is between min_mb and max_mb MiB, so that it takes the path
 * under test.  Return: the file's size.
 */
static size_t big_file(int nr_ips, int per_round, int rounds, size_t min_mb,
		       size_t max_mb)
{
	uint64_t *ips = malloc((size_t)nr_ips * sizeof(*ips));
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	uint64_t prev = 0, n = 0, bad = 0, k;
	size_t len = 0;
	char path[4096];
	struct pb p;
	int fd, i, j;

	if (!ASSERT_NOT_NULL(ips))
		return 0;
	pb_begin(&p, false, PB_SAMPLE_TYPE, 1ull << 18, 136);
	for (i = 0; i < rounds; i++) {
		for (j = per_round; j-- > 0;) {
			uint64_t t = 1000 + (uint64_t)i * (uint64_t)per_round +
				     (uint64_t)j;

			ips[0] = PB_CTX_KERNEL;
			for (k = 1; k < (uint64_t)nr_ips; k++)
				ips[k] = 0xffffffff81000000ull + t * 4096 + k;
			pb_sample(&p, 1, t, 0, ips[1], ips, (size_t)nr_ips);
		}
		pb_round(&p);
	}
	pb_end(&p);
	len = p.len;
	ASSERT_TRUE(p.len >= (min_mb << 20) && p.len < (max_mb << 20));
	snprintf(path, sizeof(path), "%s/big-%d-%d.data", test_tmp_dir(),
		 nr_ips, per_round);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (!ASSERT_TRUE(fd >= 0))
		goto out;
	ASSERT_EQ(write(fd, p.b, p.len), (ssize_t)p.len);
	close(fd);
	if (!ASSERT_OK(sfp_perf_reader__open(path, NULL, &r)))
		goto out;
	while (sfp_perf_reader__next(r, &ev) > 0) {
		uint64_t t = ev->sample.time;

		if (ev->type != SFP_PERF_RECORD_SAMPLE)
			continue;
		if (t < prev || ev->sample.nr_ips != (uint64_t)nr_ips ||
		    ev->sample.ips[nr_ips - 1] !=
			    0xffffffff81000000ull + t * 4096 +
				    (uint64_t)nr_ips - 1 ||
		    ev->sample.ip != 0xffffffff81000000ull + t * 4096 + 1)
			bad++;
		prev = t;
		n++;
	}
	ASSERT_EQ(n, (uint64_t)rounds * (uint64_t)per_round);
	ASSERT_EQ(bad, 0);
	ASSERT_EQ(sfp_perf_reader__stats(r)->nr_bad_records, 0);
	unlink(path);
out:
	sfp_perf_reader__free(&r);
	free(p.b);
	free(ips);
	return len;
}

/* Over 2 MiB and under the chunked size (16 MiB; 1 MiB where the kernel
 * gives huge pages, so forced here): mapped a 2 MiB window at a time, the
 * pages behind the oldest queued record dropped */
TEST(reader_big_file_windows)
{
	sfp_perf_reader_force_chunked_min(16ull << 20);
	big_file(1000, 600, 2, 6, 16);
	sfp_perf_reader_force_chunked_min(0);
}

/*
 * 16 MiB and more (1 MiB and more with huge pages): read into recycled
 * 256 KiB chunks (perf/chunks.h).  8 KiB records, a round (4.8 MB)
 * spanning many chunks that the queue keeps; then 96-byte records,
 * thousands straddling a chunk's end; then the same from 1 MiB on, with
 * every chunk cut from huge pages where there are some.
 */
TEST(reader_big_file_chunks)
{
	big_file(1000, 600, 12, 40, 64);
	big_file(4, 4000, 60, 16, 40);
	sfp_perf_reader_force_chunked_min(1ull << 20);
	big_file(1000, 600, 2, 6, 16);
	sfp_perf_reader_force_chunked_min(0);
}

/* A chunked file cut short under the reader: the records before the cut,
 * then -EBADMSG (never a crash or a record made of stale bytes). */
TEST(reader_chunked_file_shrinks)
{
	uint64_t kc[] = { PB_CTX_KERNEL, 0xffffffff81000000ull, 0, 0 };
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	uint64_t n = 0, bad = 0;
	char path[4096];
	struct pb p;
	int fd, i, err;

	pb_begin(&p, false, PB_SAMPLE_TYPE, 1ull << 18, 136);
	for (i = 0; i < 300000; i++) {
		kc[2] = kc[3] = (uint64_t)i;
		pb_sample(&p, 1, 1000 + (uint64_t)i, 0, 0, kc, 4);
		if (i % 2000 == 1999)
			pb_round(&p);
	}
	pb_end(&p);
	ASSERT_TRUE(p.len > (16u << 20));
	snprintf(path, sizeof(path), "%s/shrinks.data", test_tmp_dir());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (!ASSERT_TRUE(fd >= 0))
		goto out;
	ASSERT_EQ(write(fd, p.b, p.len), (ssize_t)p.len);
	if (!ASSERT_OK(sfp_perf_reader__open(path, NULL, &r)))
		goto out;
	ASSERT_OK(ftruncate(fd, (off_t)(p.len / 2)));
	close(fd);
	while ((err = sfp_perf_reader__next(r, &ev)) > 0) {
		if (ev->type != SFP_PERF_RECORD_SAMPLE)
			continue;
		if (ev->sample.nr_ips != 4 ||
		    ev->sample.ips[3] != ev->sample.time - 1000)
			bad++;
		n++;
	}
	ASSERT_EQ(err, -EBADMSG);
	ASSERT_TRUE(n > 10000 && n < 300000);
	ASSERT_EQ(bad, 0);
	unlink(path);
out:
	sfp_perf_reader__free(&r);
	free(p.b);
}

/*
 * The reader points a sample's arrays into the record where the record
 * allows it (host order, 8-aligned: the copy was a tenth of reading a
 * system-wide file) and copies them to host order where it does not (a
 * big-endian file here).  Either way the values are the record's.
 */
TEST(reader_arrays_in_place_or_copied)
{
	uint64_t kc[] = { PB_CTX_KERNEL, 0xffffffff81000000ull, PB_CTX_USER,
			  0x401000, 0x402000 };
	int be;

	for (be = 0; be < 2; be++) {
		struct sfp_perf_reader *r = NULL;
		const struct sfp_perf_event *ev;
		struct pb p;
		int i, n = 0, inside = 0;

		pb_begin(&p, be, PB_SAMPLE_TYPE, 1ull << 18, 136);
		for (i = 0; i < 8; i++)
			pb_sample(&p, 1, 100 + (uint64_t)i, 0, 0x401000, kc, 5);
		pb_end(&p);
		if (!ASSERT_OK(sfp_perf_reader__open_mem(p.b, p.len, NULL, &r)))
			goto next;
		while (sfp_perf_reader__next(r, &ev) > 0) {
			const uint8_t *raw = ev->raw;

			if (ev->type != SFP_PERF_RECORD_SAMPLE)
				continue;
			n++;
			if (!ASSERT_EQ(ev->sample.nr_ips, 5) ||
			    !ASSERT_EQ(ev->sample.ips[0], PB_CTX_KERNEL) ||
			    !ASSERT_EQ(ev->sample.ips[4], 0x402000))
				break;
			inside += (const uint8_t *)ev->sample.ips > raw &&
				  (const uint8_t *)(ev->sample.ips + 5) <=
					  raw + ev->size;
		}
		ASSERT_EQ(n, 8);
		ASSERT_EQ(inside, be ? 0 : 8);
next:
		sfp_perf_reader__free(&r);
		free(p.b);
	}
}

/* zstd-compressed records inside a pipe-mode stream, split mid-record. */
TEST(reader_compressed_split_record)
{
	uint64_t kc[] = { PB_CTX_KERNEL, 0xffffffff81000000ull, PB_CTX_USER, 0x401000 };
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	struct pb file, body, out;
	ZSTD_CStream *zs = ZSTD_createCStream();
	size_t d_off, i, cut;
	int n = 0, err;

	/* samples to compress: build a file and take its data section */
	pb_begin(&file, false, PB_SAMPLE_TYPE, 1ull << 18, 136);
	d_off = file.len;
	for (i = 0; i < 4; i++)
		pb_sample(&file, 9, 100 + i, 0, 0x401000, kc, 4);
	memset(&body, 0, sizeof(body));
	pb_raw(&body, file.b + d_off, file.len - d_off);
	cut = body.len / 2 + 3;		/* inside the third record */

	/* pipe header, HEADER_ATTR with the attr and id, 2 COMPRESSED */
	memset(&out, 0, sizeof(out));
	pb_raw(&out, "PERFILE2", 8);
	pb_u64(&out, 16);
	pb_u32(&out, 64);		/* HEADER_ATTR */
	pb_u16(&out, 0);
	pb_u16(&out, 8 + 136 + 8);
	pb_raw(&out, file.b + 104, 136);
	pb_u64(&out, PB_ID);
	ZSTD_initCStream(zs, 3);
	for (i = 0; i < 2; i++) {
		uint8_t zb[4096];
		ZSTD_inBuffer in = { body.b + (i ? cut : 0), i ? body.len - cut : cut, 0 };
		ZSTD_outBuffer o = { zb, sizeof(zb), 0 };
		size_t start = out.len;

		ZSTD_compressStream(zs, &o, &in);
		ZSTD_flushStream(zs, &o);
		pb_u32(&out, 81);	/* PERF_RECORD_COMPRESSED */
		pb_u16(&out, 0);
		pb_u16(&out, 0);
		pb_raw(&out, zb, o.pos);	/* perf does not pad these */
		pb_patch16(&out, start + 6, (uint16_t)(out.len - start));
	}
	ZSTD_freeCStream(zs);
	if (!ASSERT_OK(sfp_perf_reader__open_mem(out.b, out.len, NULL, &r)))
		goto done;
	while ((err = sfp_perf_reader__next(r, &ev)) > 0) {
		ASSERT_EQ(ev->type, SFP_PERF_RECORD_SAMPLE);
		ASSERT_EQ(ev->sample.time, 100 + (uint64_t)n);
		ASSERT_EQ(ev->sample.ips[3], 0x401000);
		n++;
	}
	ASSERT_EQ(err, 0);
	ASSERT_EQ(n, 4);
	ASSERT_EQ(sfp_perf_reader__stats(r)->nr_compressed, 2);
	ASSERT_TRUE(sfp_perf_reader__header(r)->pipe_mode);
done:
	sfp_perf_reader__free(&r);
	free(file.b);
	free(body.b);
	free(out.b);
}

/* Every sample_type bit, built by hand, decoded and re-encoded. */
TEST(sample_every_field)
{
	struct sfp_perf_attr a = { 0 };
	struct sfp_perf_sample s;
	uint64_t scratch[128];
	uint8_t enc[1024];
	struct pb p = { 0 };
	size_t n;
	int i, len;

	a.sample_type = (SFP_PERF_SAMPLE_MAX - 1) & ~SFP_PERF_SAMPLE_WEIGHT_STRUCT;
	a.read_format = SFP_PERF_FORMAT_GROUP | SFP_PERF_FORMAT_ID |
			SFP_PERF_FORMAT_TOTAL_TIME_ENABLED | SFP_PERF_FORMAT_LOST;
	a.branch_sample_type = SFP_PERF_SAMPLE_BRANCH_HW_INDEX;
	a.sample_regs_user = 0x1c0;	/* bp, sp, ip */
	a.sample_regs_intr = 0x3;
	pb_u32(&p, 9); pb_u16(&p, 2); pb_u16(&p, 0);
	pb_u64(&p, 77);				/* identifier */
	pb_u64(&p, 0x401234);			/* ip */
	pb_u32(&p, 10); pb_u32(&p, 11);		/* pid tid */
	pb_u64(&p, 123456789);			/* time */
	pb_u64(&p, 0xadd00);			/* addr */
	pb_u64(&p, 77);				/* id */
	pb_u64(&p, 78);				/* stream id */
	pb_u32(&p, 3); pb_u32(&p, 0);		/* cpu */
	pb_u64(&p, 4000);			/* period */
	pb_u64(&p, 2); pb_u64(&p, 999);		/* read: nr, time_enabled */
	pb_u64(&p, 5); pb_u64(&p, 77); pb_u64(&p, 0);
	pb_u64(&p, 6); pb_u64(&p, 79); pb_u64(&p, 1);
	pb_u64(&p, 2); pb_u64(&p, PB_CTX_USER); pb_u64(&p, 0x401234);
	pb_u32(&p, 4); pb_raw(&p, "raw!", 4);	/* raw: u32 + 4 bytes */
	pb_u64(&p, 1); pb_u64(&p, 42);		/* branches: nr, hw_idx */
	pb_u64(&p, 0x1000); pb_u64(&p, 0x2000); pb_u64(&p, 0x3);
	pb_u64(&p, 2);				/* regs user: abi 64 */
	pb_u64(&p, 0xbb); pb_u64(&p, 0x7ff0); pb_u64(&p, 0x401234);
	pb_u64(&p, 16);				/* stack: size, bytes, dyn */
	pb_raw(&p, "0123456789abcdef", 16);
	pb_u64(&p, 8);
	pb_u64(&p, 7);				/* weight */
	pb_u64(&p, 8);				/* data_src */
	pb_u64(&p, 9);				/* transaction */
	pb_u64(&p, 2); pb_u64(&p, 0xa); pb_u64(&p, 0xb);	/* regs intr */
	pb_u64(&p, 0x1234000);			/* phys */
	pb_u64(&p, 55);				/* cgroup */
	pb_u64(&p, 4096);			/* data page size */
	pb_u64(&p, 2097152);			/* code page size */
	pb_u64(&p, 8); pb_raw(&p, "auxdata!", 8);
	pb_patch16(&p, 6, (uint16_t)p.len);

	if (!ASSERT_OK(sfp_perf_decode_sample(&a, p.b, p.len, false, &s,
					      scratch, 128)))
		goto out;
	ASSERT_EQ(s.id, 77);
	ASSERT_EQ(s.ip, 0x401234);
	ASSERT_EQ(s.pid, 10);
	ASSERT_EQ(s.tid, 11);
	ASSERT_EQ(s.time, 123456789);
	ASSERT_EQ(s.addr, 0xadd00);
	ASSERT_EQ(s.stream_id, 78);
	ASSERT_EQ(s.cpu, 3);
	ASSERT_EQ(s.period, 4000);
	ASSERT_EQ(s.read_nr, 2);
	ASSERT_EQ(s.read_time_enabled, 999);
	ASSERT_EQ(s.read_values[3], 6);
	ASSERT_EQ(s.read_values[4], 79);
	ASSERT_EQ(s.read_values[5], 1);
	ASSERT_EQ(s.nr_ips, 2);
	ASSERT_FALSE(s.deferred);
	ASSERT_EQ(s.raw_size, 4);
	ASSERT_TRUE(!memcmp(s.raw_data, "raw!", 4));
	ASSERT_EQ(s.nr_branches, 1);
	ASSERT_EQ(s.branch_hw_idx, 42);
	ASSERT_EQ(s.branches[1], 0x2000);
	ASSERT_EQ(s.user_regs_abi, 2);
	ASSERT_EQ(s.user_regs[1], 0x7ff0);
	ASSERT_EQ(s.user_stack_size, 16);
	ASSERT_EQ(s.user_stack_dyn_size, 8);
	ASSERT_EQ(s.weight, 7);
	ASSERT_EQ(s.data_src, 8);
	ASSERT_EQ(s.transaction, 9);
	ASSERT_EQ(s.intr_regs[1], 0xb);
	ASSERT_EQ(s.phys_addr, 0x1234000);
	ASSERT_EQ(s.cgroup, 55);
	ASSERT_EQ(s.data_page_size, 4096);
	ASSERT_EQ(s.code_page_size, 2097152);
	ASSERT_EQ(s.aux_size, 8);
	/* the encoder writes the same bytes back */
	len = sfp_perf_write_sample(&a, 2, &s, enc, sizeof(enc));
	if (ASSERT_EQ(len, p.len))
		ASSERT_TRUE(!memcmp(enc, p.b, p.len));
	ASSERT_ERR(sfp_perf_write_sample(&a, 2, &s, enc, 100), -ENOSPC);
	/* every shorter record fails cleanly at the first missing field */
	for (n = 8; n < p.len; n++) {
		uint8_t *q = malloc(n);

		memcpy(q, p.b, n);
		i = sfp_perf_decode_sample(&a, q, n, false, &s, scratch, 128);
		free(q);
		if (!ASSERT_ERR(i, -EBADMSG))
			break;
	}
	/* a lying callchain count cannot reach past the record or scratch */
	ASSERT_ERR(sfp_perf_decode_sample(&a, p.b, p.len, false, &s, scratch, 4),
		   -EBADMSG);
out:
	free(p.b);
}

/* A record header's three fields, as given (already swapped or not). */
static void put_header(uint64_t *rec, uint32_t type, uint16_t misc,
		       uint16_t size)
{
	memcpy(rec, &type, 4);
	memcpy((uint8_t *)rec + 4, &misc, 2);
	memcpy((uint8_t *)rec + 6, &size, 2);
}

/* The header's misc, in either byte order, and a user register found by
 * its perf_regs number among those the mask has (values in bit order). */
TEST(sample_misc_and_user_reg)
{
	struct sfp_perf_attr a = { 0 };
	struct sfp_perf_sample s;
	uint64_t rec[7], sw[7], scratch[16], v = 0;
	uint32_t type = SFP_PERF_RECORD_SAMPLE;
	uint16_t misc = 2, size = sizeof(rec);
	size_t i;

	a.sample_type = SFP_PERF_SAMPLE_IP | SFP_PERF_SAMPLE_REGS_USER;
	a.sample_regs_user = 0x1c1;		/* ax, bp, sp, ip */
	put_header(rec, type, misc, size);
	rec[1] = 0x401000;			/* ip */
	rec[2] = 2;				/* abi 64 */
	rec[3] = 0xa;				/* ax */
	rec[4] = 0xb0;				/* bp */
	rec[5] = 0x5b;				/* sp */
	rec[6] = 0x1b;				/* ip */
	if (!ASSERT_OK(sfp_perf_decode_sample(&a, rec, sizeof(rec), false, &s,
					      NULL, 0)))
		return;
	ASSERT_EQ(s.misc, 2);
	ASSERT_OK(sfp_perf_sample_user_reg(&s, 0, &v));
	ASSERT_EQ(v, 0xa);
	ASSERT_OK(sfp_perf_sample_user_reg(&s, 6, &v));
	ASSERT_EQ(v, 0xb0);
	ASSERT_OK(sfp_perf_sample_user_reg(&s, 7, &v));
	ASSERT_EQ(v, 0x5b);
	ASSERT_OK(sfp_perf_sample_user_reg(&s, 8, &v));
	ASSERT_EQ(v, 0x1b);
	ASSERT_ERR(sfp_perf_sample_user_reg(&s, 1, &v), -ENOENT);
	ASSERT_ERR(sfp_perf_sample_user_reg(&s, 64, &v), -EINVAL);
	/* the other byte order: the header's fields swapped one by one */
	put_header(sw, __builtin_bswap32(type), __builtin_bswap16(misc),
		   __builtin_bswap16(size));
	for (i = 1; i < 7; i++)
		sw[i] = __builtin_bswap64(rec[i]);
	if (!ASSERT_OK(sfp_perf_decode_sample(&a, sw, sizeof(sw), true, &s,
					      scratch, 16)))
		return;
	ASSERT_EQ(s.misc, 2);
	ASSERT_OK(sfp_perf_sample_user_reg(&s, 7, &v));
	ASSERT_EQ(v, 0x5b);
	/* no registers in the sample (abi 0): none to find */
	rec[2] = 0;
	ASSERT_OK(sfp_perf_decode_sample(&a, rec, 24, false, &s, NULL, 0));
	ASSERT_ERR(sfp_perf_sample_user_reg(&s, 7, &v), -ENOENT);
}

TEST(writer_round_trip)
{
	const char *cmd[] = { "sfprof", "test" };
	SFP_OPTS(sfp_perf_writer_opts, wo, .hostname = "box", .osrelease = "6.19.0",
		 .cmdline = cmd, .nr_cmdline = 2);
	struct sfp_perf_attr a = { 0 };
	struct sfp_perf_writer *w = NULL;
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	struct sfp_perf_sample s = { 0 };
	const struct sfp_perf_header_info *h;
	uint64_t ids[] = { 7, 8 }, ips[] = { PB_CTX_USER, 0x401000, 0x402000 };
	uint8_t buf[512], bid[20];
	char path[4096];
	int len, n = 0;

	snprintf(path, sizeof(path), "%s/w.data", test_tmp_dir());
	a.type = 1;
	a.sample_type = SFP_PERF_SAMPLE_IDENTIFIER | SFP_PERF_SAMPLE_IP |
			SFP_PERF_SAMPLE_TID | SFP_PERF_SAMPLE_TIME |
			SFP_PERF_SAMPLE_CALLCHAIN;
	a.flags = SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL | SFP_PERF_ATTR_FLAG_DEFER_CALLCHAIN;
	if (!ASSERT_OK(sfp_perf_writer__open(path, &wo, &w)))
		return;
	ASSERT_EQ(sfp_perf_writer__add_evsel(w, &a, ids, 2, "cpu-clock"), 0);
	memset(bid, 0xab, sizeof(bid));
	ASSERT_OK(sfp_perf_writer__add_build_id(w, SFP_PERF_MISC_USER, -1, bid, 20, "/bin/true"));
	ASSERT_ERR(sfp_perf_writer__add_build_id(w, SFP_PERF_MISC_USER, -1, bid, 21, "/x"), -EINVAL);
	s.id = 8;
	s.ip = 0x401000;
	s.pid = s.tid = 33;
	s.time = 1000;
	s.ips = ips;
	s.nr_ips = 3;
	len = sfp_perf_write_sample(&a, SFP_PERF_MISC_USER, &s, buf, sizeof(buf));
	ASSERT_OK(sfp_perf_writer__write(w, buf, (size_t)len));
	ASSERT_ERR(sfp_perf_writer__write(w, buf, (size_t)len - 8), -EINVAL);
	ASSERT_ERR(sfp_perf_writer__add_evsel(w, &a, ids, 1, "late"), -EINVAL);
	if (!ASSERT_OK(sfp_perf_writer__close(&w)))
		return;
	ASSERT_TRUE(w == NULL);
	if (!ASSERT_OK(sfp_perf_reader__open(path, NULL, &r)))
		return;
	h = sfp_perf_reader__header(r);
	ASSERT_STREQ(h->hostname, "box");
	ASSERT_STREQ(h->osrelease, "6.19.0");
	ASSERT_EQ(h->nr_cmdline, 2);
	ASSERT_STREQ(h->cmdline[1], "test");
	if (ASSERT_EQ(h->nr_build_ids, 1)) {
		ASSERT_STREQ(h->build_ids[0].filename, "/bin/true");
		ASSERT_EQ(h->build_ids[0].size, 20);
		ASSERT_EQ(h->build_ids[0].id[19], 0xab);
	}
	ASSERT_STREQ(sfp_perf_reader__evsel(r, 0)->name, "cpu-clock");
	ASSERT_EQ(sfp_perf_reader__evsel(r, 0)->nr_ids, 2);
	ASSERT_TRUE(sfp_perf_reader__evsel(r, 0)->attr.flags &
		    SFP_PERF_ATTR_FLAG_DEFER_CALLCHAIN);
	while (sfp_perf_reader__next(r, &ev) > 0) {
		ASSERT_EQ(ev->sample.tid, 33);
		ASSERT_EQ(ev->sample.ips[2], 0x402000);
		n++;
	}
	ASSERT_EQ(n, 1);
	sfp_perf_reader__free(&r);
}
