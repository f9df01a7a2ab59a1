// SPDX-License-Identifier: MIT
/*
 * perf.data writer (file mode, host byte order).
 *
 * Layout, as perf record lays it out: the 104-byte header; the ids of
 * every event; the attr section (attr + file section of its ids); the
 * data section; the feature section table and the feature contents.  The
 * attrs go out when the first record is written (or at close), the
 * features and the final header at close.  Records are buffered.
 *
 * Features written: BUILD_ID (the DSOs the caller registered), HOSTNAME,
 * OSRELEASE, VERSION, ARCH, NRCPUS, CPUDESC, TOTAL_MEM, CMDLINE,
 * EVENT_DESC and SAMPLE_TIME; that is what perf 6.1's script, report and
 * evlist need to read the file without complaint.  With a compression
 * level the data section is zstd-compressed (compress.c) and COMPRESSED
 * says how, as `perf record -z` writes it.
 *
 * The file is written beside its path and renamed into place at close
 * (common/outfile.h), so a failed job leaves the old file as it was.  As
 * soon as the attrs are known a provisional header goes out (data size 0,
 * no features: perf's mark of an unfinished file), and with flush_ms the
 * buffered records (and the zstd stream) are flushed at least that
 * often: a writer killed after sfp_perf_writer__publish() leaves a file
 * whose records up to the last flush can be read.
 */
#include <fcntl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/outfile.h"
#include "perf/perf-int.h"

#define ATTR_SIZE_VER7 128

struct wevsel {
	struct sfp_perf_attr attr;
	uint64_t *ids;
	size_t nr_ids;
	char *name;
};

struct wbid {
	uint16_t misc;
	int32_t pid;
	uint8_t id[20];
	uint8_t size;
	char *filename;
};

struct sfp_perf_writer {
	int fd;
	struct sfp_outfile out;
	char *path;
	struct wevsel *evsels;
	size_t nr_evsels;
	struct wbid *bids;
	size_t nr_bids;
	bool started;
	uint64_t attr_off, data_off, off;	/* off: file position */
	uint8_t *buf;
	size_t blen;
	int err;
	uint64_t first_time, last_time;
	uint32_t attr_size;	/* of every attr in the file */
	char *hostname, *osrelease, *arch, *version;
	char **cmdline;
	size_t nr_cmdline;
	struct sfp_perf_zw *z;	/* NULL: records go out as they are */
	uint64_t flush_ns, last_flush;	/* flush_ms; CLOCK_MONOTONIC */
	unsigned int nr_since_check;
};

#define WBUF (256u << 10)

static int flush_buf(struct sfp_perf_writer *w)
{
	size_t done = 0;

	while (done < w->blen) {
		ssize_t k = write(w->fd, w->buf + done, w->blen - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			w->err = -errno;
			pr_warn("%s: write: %s", w->path, strerror(errno));
			return w->err;
		}
		done += (size_t)k;
	}
	w->blen = 0;
	return 0;
}

static int put(struct sfp_perf_writer *w, const void *d, size_t n)
{
	const uint8_t *p = d;

	if (w->err)
		return w->err;
	while (n) {
		size_t k = WBUF - w->blen < n ? WBUF - w->blen : n;

		memcpy(w->buf + w->blen, p, k);
		w->blen += k;
		w->off += k;
		p += k;
		n -= k;
		if (w->blen == WBUF && flush_buf(w))
			return w->err;
	}
	return 0;
}

static int put64(struct sfp_perf_writer *w, uint64_t v)
{
	return put(w, &v, 8);
}

static int put32(struct sfp_perf_writer *w, uint32_t v)
{
	return put(w, &v, 4);
}

static int put_zeros(struct sfp_perf_writer *w, size_t n)
{
	static const uint8_t z[64];

	while (n) {
		size_t k = n < sizeof(z) ? n : sizeof(z);

		put(w, z, k);
		n -= k;
	}
	return w->err;
}

/* perf's do_write_string: u32 padded length, string, zero padding. */
static int put_string(struct sfp_perf_writer *w, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t len = (n + SFP_PERF_NAME_ALIGN - 1) & ~(size_t)(SFP_PERF_NAME_ALIGN - 1);

	put32(w, (uint32_t)len);
	put(w, s, n);
	return put_zeros(w, len - n);
}

static char *dup_or(const char *s, const char *dflt)
{
	return strdup(s ? s : dflt);
}

SFP_API int sfp_perf_writer__open(const char *path,
				  const struct sfp_perf_writer_opts *opts,
				  struct sfp_perf_writer **out)
{
	const char *const *cmd;
	struct sfp_perf_writer *w;
	struct utsname u;
	size_t i, ncmd;
	int err;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	if (!SFP_OPTS_VALID(opts, sfp_perf_writer_opts))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	w->path = strdup(path);
	w->buf = malloc(WBUF);
	w->hostname = dup_or(SFP_OPTS_GET(opts, sfp_perf_writer_opts, hostname, NULL),
			     u.nodename);
	w->osrelease = dup_or(SFP_OPTS_GET(opts, sfp_perf_writer_opts, osrelease, NULL),
			      u.release);
	w->arch = dup_or(SFP_OPTS_GET(opts, sfp_perf_writer_opts, arch, NULL),
			 u.machine);
	w->version = dup_or(SFP_OPTS_GET(opts, sfp_perf_writer_opts, version, NULL),
			    "6.1.sfprof");
	cmd = SFP_OPTS_GET(opts, sfp_perf_writer_opts, cmdline, NULL);
	ncmd = cmd ? SFP_OPTS_GET(opts, sfp_perf_writer_opts, nr_cmdline, 0) : 0;
	w->cmdline = calloc(ncmd + 1, sizeof(char *));
	if (!w->path || !w->buf || !w->hostname || !w->osrelease || !w->arch ||
	    !w->version || !w->cmdline) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < ncmd; i++) {
		w->cmdline[i] = strdup(cmd[i] ? cmd[i] : "");
		if (!w->cmdline[i]) {
			err = -ENOMEM;
			goto fail;
		}
		w->nr_cmdline++;
	}
	w->first_time = UINT64_MAX;
	w->attr_size = ATTR_SIZE_VER7;
	i = (size_t)SFP_OPTS_GET(opts, sfp_perf_writer_opts, compression_level, 0);
	if (i) {
		err = sfp_perf_zw__new((int)i, &w->z);
		if (err)
			goto fail;
	}
	w->flush_ns = (uint64_t)SFP_OPTS_GET(opts, sfp_perf_writer_opts,
					     flush_ms, 0) * 1000000u;
	/* perf's mode for perf.data: the samples may show what a program
	 * did, for its owner's eyes only */
	err = sfp_outfile_open(&w->out, path, SFP_OUTFILE_SEEKABLE |
			       (SFP_OPTS_GET(opts, sfp_perf_writer_opts, keep_old,
					     false) ? SFP_OUTFILE_KEEP_OLD : 0),
			       0600);
	if (err)
		goto fail;
	w->fd = w->out.fd;
	w->last_flush = sfp_mono_ns();
	/* header placeholder; rewritten at close */
	put_zeros(w, SFP_PERF_FILE_HEADER_SIZE);
	*out = w;
	return 0;
fail:
	sfp_perf_writer__free(&w);
	return err;
}

SFP_API int sfp_perf_writer__add_evsel(struct sfp_perf_writer *w,
				       const struct sfp_perf_attr *attr,
				       const uint64_t *ids, size_t nr_ids,
				       const char *name)
{
	struct wevsel *v, *e;

	if (!w || !attr || (nr_ids && !ids) || w->started || nr_ids > (1u << 20))
		return -EINVAL;
	v = realloc(w->evsels, (w->nr_evsels + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->evsels = v;
	e = &v[w->nr_evsels];
	memset(e, 0, sizeof(*e));
	e->attr = *attr;
	/* perf before 6.3 refuses attrs longer than its own 128 bytes, so
	 * the config3 word (VER8) is written only when it is used */
	e->attr.size = attr->config3 ? SFP_PERF_ATTR_SIZE_VER8 : ATTR_SIZE_VER7;
	if (attr->config3)
		w->attr_size = SFP_PERF_ATTR_SIZE_VER8;
	e->name = strdup(name ? name : "unknown");
	e->ids = nr_ids ? malloc(nr_ids * sizeof(*ids)) : NULL;
	if (!e->name || (nr_ids && !e->ids)) {
		free(e->name);
		free(e->ids);
		return -ENOMEM;
	}
	if (nr_ids)
		memcpy(e->ids, ids, nr_ids * sizeof(*ids));
	e->nr_ids = nr_ids;
	return (int)w->nr_evsels++;
}

/*
 * The file header.  DATA_SIZE 0 and no feature bitmap make the
 * provisional one: readers take the data to the end of the file.
 */
static int write_header(struct sfp_perf_writer *w, uint64_t data_size,
			const uint64_t *bitmap)
{
	uint8_t hdr[SFP_PERF_FILE_HEADER_SIZE];
	uint64_t v;

	memset(hdr, 0, sizeof(hdr));
	v = SFP_PERF_MAGIC2;
	memcpy(hdr, &v, 8);
	v = SFP_PERF_FILE_HEADER_SIZE;
	memcpy(hdr + 8, &v, 8);
	v = w->attr_size + 16;
	memcpy(hdr + 16, &v, 8);
	memcpy(hdr + 24, &w->attr_off, 8);
	v = w->nr_evsels * (w->attr_size + 16);
	memcpy(hdr + 32, &v, 8);
	memcpy(hdr + 40, &w->data_off, 8);
	memcpy(hdr + 48, &data_size, 8);
	if (bitmap)
		memcpy(hdr + 72, bitmap, 32);
	errno = 0;
	if (pwrite(w->fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		w->err = errno ? -errno : -EIO;
		pr_warn("%s: write: %s", w->path, strerror(-w->err));
	}
	return w->err;
}

/* ids, then the attr section; the data section follows. */
static int start_data(struct sfp_perf_writer *w)
{
	uint8_t a[SFP_PERF_ATTR_SIZE_VER8];
	uint64_t ids_off = w->off;
	size_t i, j;

	w->started = true;
	for (i = 0; i < w->nr_evsels; i++)
		for (j = 0; j < w->evsels[i].nr_ids; j++)
			put64(w, w->evsels[i].ids[j]);
	w->attr_off = w->off;
	for (i = 0; i < w->nr_evsels; i++) {
		w->evsels[i].attr.size = w->attr_size;
		sfp_perf_attr_encode(&w->evsels[i].attr, a);
		put(w, a, w->attr_size);
		put64(w, ids_off);
		put64(w, w->evsels[i].nr_ids * 8);
		ids_off += w->evsels[i].nr_ids * 8;
	}
	w->data_off = w->off;
	/* attrs on disk, then a header that points at them */
	if (!flush_buf(w))
		write_header(w, 0, NULL);
	return w->err;
}

/* Keep first/last sample time for HEADER_SAMPLE_TIME. */
static void note_time(struct sfp_perf_writer *w, const uint8_t *rec,
		      size_t size)
{
	struct sfp_perf_sample s;
	uint64_t scratch[1];
	uint32_t type;
	struct sfp_cursor c;

	memcpy(&type, rec, 4);
	if (type != SFP_PERF_RECORD_SAMPLE || w->nr_evsels != 1)
		return;
	/* parse just far enough: arrays may not fit the 1-entry scratch */
	{
		struct sfp_perf_attr a = w->evsels[0].attr;

		a.sample_type &= SFP_PERF_SAMPLE_IDENTIFIER | SFP_PERF_SAMPLE_IP |
				 SFP_PERF_SAMPLE_TID | SFP_PERF_SAMPLE_TIME;
		if (!(a.sample_type & SFP_PERF_SAMPLE_TIME))
			return;
		sfp_cursor_init(&c, rec, size, false);
		c.pos += 8;
		if (sfp_perf_decode_sample_body(&a, &c, &s, scratch, 1, false))
			return;
	}
	if (s.time < w->first_time)
		w->first_time = s.time;
	if (s.time > w->last_time)
		w->last_time = s.time;
}

/* Where the compressor's COMPRESSED records go. */
static int put_rec(void *w, const void *rec, size_t size)
{
	return put(w, rec, size);
}

SFP_API int sfp_perf_writer__write(struct sfp_perf_writer *w, const void *rec,
				   size_t size)
{
	uint16_t hsize;
	int err;

	if (!w || !rec || size < 8 || size > 65535 || size % 8)
		return -EINVAL;
	memcpy(&hsize, (const uint8_t *)rec + 6, 2);
	if (hsize != size)
		return -EINVAL;
	if (!w->started && start_data(w))
		return w->err;
	note_time(w, rec, size);
	err = w->z ? sfp_perf_zw__add(w->z, rec, size, put_rec, w)
		   : put(w, rec, size);
	/* the clock is read every 16 records: cheap, and still bounded by
	 * the caller's own sfp_perf_writer__flush() calls when idle */
	if (!err && w->flush_ns && !(++w->nr_since_check & 15) &&
	    sfp_mono_ns() - w->last_flush >= w->flush_ns)
		err = sfp_perf_writer__flush(w);
	return err;
}

SFP_API int sfp_perf_writer__flush(struct sfp_perf_writer *w)
{
	int err;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->started)
		return start_data(w);
	if (w->z) {
		/* ends the chunk: every COMPRESSED record out is whole */
		err = sfp_perf_zw__flush(w->z, put_rec, w);
		if (err && !w->err)
			w->err = err;
	}
	if (!w->err)
		flush_buf(w);
	w->last_flush = sfp_mono_ns();
	return w->err;
}

SFP_API int sfp_perf_writer__publish(struct sfp_perf_writer *w)
{
	int err;

	if (!w)
		return -EINVAL;
	err = sfp_perf_writer__flush(w);
	if (err)
		return err;
	err = sfp_outfile_publish(&w->out);
	if (err) {
		pr_warn("%s: cannot move %s into place: %s", w->path,
			w->out.tmp, strerror(-err));
		w->err = err;
	}
	return err;
}

SFP_API int sfp_perf_writer__add_build_id(struct sfp_perf_writer *w,
					  uint16_t misc, int32_t pid,
					  const uint8_t *id, size_t id_size,
					  const char *filename)
{
	struct wbid *v, *b;
	size_t i;

	if (!w || !id || !filename || id_size == 0 || id_size > 20)
		return -EINVAL;
	for (i = 0; i < w->nr_bids; i++)
		if (!strcmp(w->bids[i].filename, filename) &&
		    w->bids[i].pid == pid && w->bids[i].size == id_size &&
		    !memcmp(w->bids[i].id, id, id_size))
			return 0;	/* (one path, two builds: two) */
	v = realloc(w->bids, (w->nr_bids + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->bids = v;
	b = &v[w->nr_bids];
	memset(b, 0, sizeof(*b));
	b->filename = strdup(filename);
	if (!b->filename)
		return -ENOMEM;
	b->misc = misc;
	b->pid = pid;
	memcpy(b->id, id, id_size);
	b->size = (uint8_t)id_size;
	w->nr_bids++;
	return 0;
}

static void write_build_ids(struct sfp_perf_writer *w)
{
	size_t i;

	for (i = 0; i < w->nr_bids; i++) {
		struct wbid *b = &w->bids[i];
		size_t n = strlen(b->filename) + 1;
		size_t len = (n + SFP_PERF_NAME_ALIGN - 1) &
			     ~(size_t)(SFP_PERF_NAME_ALIGN - 1);
		uint16_t misc = b->misc | SFP_PERF_MISC_BUILD_ID_SIZE;
		uint16_t size = (uint16_t)(36 + len);
		uint8_t raw[24] = { 0 };

		put32(w, 0);
		put(w, &misc, 2);
		put(w, &size, 2);
		put(w, &b->pid, 4);
		memcpy(raw, b->id, 20);
		raw[20] = b->size;
		put(w, raw, sizeof(raw));
		put(w, b->filename, n);
		put_zeros(w, len - n);
	}
}

static void cpu_desc(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			c++;
			while (*c == ' ')
				c++;
			c[strcspn(c, "\n")] = 0;
			snprintf(buf, len, "%s", c);
			break;
		}
	}
	fclose(f);
}

static void write_feature(struct sfp_perf_writer *w, unsigned int feat)
{
	size_t i, j;
	long n;

	switch (feat) {
	case SFP_PERF_FEAT_BUILD_ID:
		write_build_ids(w);
		break;
	case SFP_PERF_FEAT_HOSTNAME:
		put_string(w, w->hostname);
		break;
	case SFP_PERF_FEAT_OSRELEASE:
		put_string(w, w->osrelease);
		break;
	case SFP_PERF_FEAT_VERSION:
		put_string(w, w->version);
		break;
	case SFP_PERF_FEAT_ARCH:
		put_string(w, w->arch);
		break;
	case SFP_PERF_FEAT_NRCPUS:
		n = sysconf(_SC_NPROCESSORS_CONF);
		put32(w, n > 0 ? (uint32_t)n : 1);
		n = sysconf(_SC_NPROCESSORS_ONLN);
		put32(w, n > 0 ? (uint32_t)n : 1);
		break;
	case SFP_PERF_FEAT_CPUDESC: {
		char d[256];

		cpu_desc(d, sizeof(d));
		put_string(w, d);
		break;
	}
	case SFP_PERF_FEAT_TOTAL_MEM: {
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

		put64(w, pages > 0 && psz > 0 ?
				 (uint64_t)pages * (uint64_t)psz / 1024 : 0);
		break;
	}
	case SFP_PERF_FEAT_CMDLINE:
		put32(w, (uint32_t)w->nr_cmdline);
		for (i = 0; i < w->nr_cmdline; i++)
			put_string(w, w->cmdline[i]);
		break;
	case SFP_PERF_FEAT_EVENT_DESC:
		put32(w, (uint32_t)w->nr_evsels);
		put32(w, w->attr_size);
		for (i = 0; i < w->nr_evsels; i++) {
			uint8_t a[SFP_PERF_ATTR_SIZE_VER8];

			sfp_perf_attr_encode(&w->evsels[i].attr, a);
			put(w, a, w->attr_size);
			put32(w, (uint32_t)w->evsels[i].nr_ids);
			put_string(w, w->evsels[i].name);
			for (j = 0; j < w->evsels[i].nr_ids; j++)
				put64(w, w->evsels[i].ids[j]);
		}
		break;
	case SFP_PERF_FEAT_SAMPLE_TIME:
		put64(w, w->first_time == UINT64_MAX ? 0 : w->first_time);
		put64(w, w->last_time);
		break;
	case SFP_PERF_FEAT_COMPRESSED:
		/* version 1, type zstd (1), level, ratio, decompression
		 * buffer size: no COMPRESSED record expands beyond it */
		put32(w, 1);
		put32(w, 1);
		put32(w, (uint32_t)sfp_perf_zw__level(w->z));
		put32(w, sfp_perf_zw__ratio(w->z));
		put32(w, SFP_PERF_ZCHUNK);
		break;
	}
}

SFP_API int sfp_perf_writer__close(struct sfp_perf_writer **wp)
{
	static const unsigned int feats[] = {
		SFP_PERF_FEAT_BUILD_ID, SFP_PERF_FEAT_HOSTNAME,
		SFP_PERF_FEAT_OSRELEASE, SFP_PERF_FEAT_VERSION,
		SFP_PERF_FEAT_ARCH, SFP_PERF_FEAT_NRCPUS,
		SFP_PERF_FEAT_CPUDESC, SFP_PERF_FEAT_TOTAL_MEM,
		SFP_PERF_FEAT_CMDLINE, SFP_PERF_FEAT_EVENT_DESC,
		SFP_PERF_FEAT_SAMPLE_TIME, SFP_PERF_FEAT_COMPRESSED,
	};
	uint64_t secs[ARRAY_SIZE(feats)][2], bitmap[4] = { 0 }, table, data_end;
	struct sfp_perf_writer *w;
	/* COMPRESSED, the last one, only for compressed data */
	size_t i, nfeat = ARRAY_SIZE(feats);
	int err;

	if (!wp || !*wp)
		return -EINVAL;
	w = *wp;
	if (!w->started)
		start_data(w);
	if (w->z) {
		err = sfp_perf_zw__flush(w->z, put_rec, w);
		if (err && !w->err)
			w->err = err;
	} else {
		nfeat--;
	}
	data_end = w->off;
	table = w->off;
	put_zeros(w, nfeat * sizeof(secs[0]));	/* section table, below */
	for (i = 0; i < nfeat; i++) {
		secs[i][0] = w->off;
		write_feature(w, feats[i]);
		secs[i][1] = w->off - secs[i][0];
		bitmap[feats[i] / 64] |= 1ull << (feats[i] % 64);
	}
	flush_buf(w);
	err = w->err;
	errno = 0;
	if (!err && pwrite(w->fd, secs, nfeat * sizeof(secs[0]), (off_t)table) !=
			    (ssize_t)(nfeat * sizeof(secs[0]))) {
		err = errno ? -errno : -EIO;
		pr_warn("%s: write: %s", w->path, strerror(-err));
	}
	/* the final header, last: until here the provisional one stands */
	if (!err)
		err = write_header(w, data_end - w->data_off, bitmap);
	if (!err) {
		/* fsync, close, rename into place (PATH.old kept if asked) */
		err = sfp_outfile_commit(&w->out);
		w->fd = -1;
		if (err)
			pr_warn("%s: %s", w->path, strerror(-err));
	}
	sfp_perf_writer__free(wp);
	return err;
}

SFP_API void sfp_perf_writer__free(struct sfp_perf_writer **wp)
{
	struct sfp_perf_writer *w;
	size_t i;

	if (!wp || !*wp)
		return;
	w = *wp;
	/* unfinished: the temporary goes, a published file stays as the
	 * last flush left it (readable, marked unfinished) */
	if (w->fd >= 0)
		sfp_outfile_abort(&w->out);
	for (i = 0; i < w->nr_evsels; i++) {
		free(w->evsels[i].ids);
		free(w->evsels[i].name);
	}
	free(w->evsels);
	sfp_perf_zw__free(&w->z);
	for (i = 0; i < w->nr_bids; i++)
		free(w->bids[i].filename);
	free(w->bids);
	for (i = 0; i < w->nr_cmdline; i++)
		free(w->cmdline[i]);
	free(w->cmdline);
	free(w->hostname);
	free(w->osrelease);
	free(w->arch);
	free(w->version);
	free(w->buf);
	free(w->path);
	free(w);
	*wp = NULL;
}

/* --- record encoders ---------------------------------------------------- */

struct enc {
	uint8_t *p, *end;
	bool overflow;
};

static void e_put(struct enc *e, const void *d, size_t n)
{
	if (e->overflow || n > (size_t)(e->end - e->p)) {
		e->overflow = true;
		return;
	}
	if (n)
		memcpy(e->p, d, n);
	e->p += n;
}

static void e64(struct enc *e, uint64_t v)
{
	e_put(e, &v, 8);
}

static void e32(struct enc *e, uint32_t v)
{
	e_put(e, &v, 4);
}

static void e_regs(struct enc *e, uint64_t abi, uint64_t mask,
		   const uint64_t *regs)
{
	e64(e, abi);
	if (abi)
		e_put(e, regs, 8u * (size_t)__builtin_popcountll(mask));
}

SFP_API int sfp_perf_write_sample(const struct sfp_perf_attr *attr,
				  uint16_t misc,
				  const struct sfp_perf_sample *s, void *buf,
				  size_t buf_len)
{
	uint64_t t, rf, i;
	struct enc e;
	size_t size;
	uint16_t sz16;

	if (!attr || !s || !buf)
		return -EINVAL;
	t = attr->sample_type;
	rf = attr->read_format;
	e.p = buf;
	e.end = e.p + buf_len;
	e.overflow = false;
	e32(&e, SFP_PERF_RECORD_SAMPLE);
	e_put(&e, &misc, 2);
	e_put(&e, "\0", 2);	/* size, patched */
	if (t & SFP_PERF_SAMPLE_IDENTIFIER)
		e64(&e, s->id);
	if (t & SFP_PERF_SAMPLE_IP)
		e64(&e, s->ip);
	if (t & SFP_PERF_SAMPLE_TID) {
		e32(&e, s->pid);
		e32(&e, s->tid);
	}
	if (t & SFP_PERF_SAMPLE_TIME)
		e64(&e, s->time);
	if (t & SFP_PERF_SAMPLE_ADDR)
		e64(&e, s->addr);
	if (t & SFP_PERF_SAMPLE_ID)
		e64(&e, s->id);
	if (t & SFP_PERF_SAMPLE_STREAM_ID)
		e64(&e, s->stream_id);
	if (t & SFP_PERF_SAMPLE_CPU) {
		e32(&e, s->cpu);
		e32(&e, 0);
	}
	if (t & SFP_PERF_SAMPLE_PERIOD)
		e64(&e, s->period);
	if (t & SFP_PERF_SAMPLE_READ) {
		uint64_t nr = (rf & SFP_PERF_FORMAT_GROUP) ? s->read_nr : 1;

		if (!s->read_values || (!(rf & SFP_PERF_FORMAT_GROUP) &&
					s->read_nr != 1))
			return -EINVAL;
		if (rf & SFP_PERF_FORMAT_GROUP) {
			e64(&e, nr);
			if (rf & SFP_PERF_FORMAT_TOTAL_TIME_ENABLED)
				e64(&e, s->read_time_enabled);
			if (rf & SFP_PERF_FORMAT_TOTAL_TIME_RUNNING)
				e64(&e, s->read_time_running);
			for (i = 0; i < nr && !e.overflow; i++) {
				e64(&e, s->read_values[3 * i]);
				if (rf & SFP_PERF_FORMAT_ID)
					e64(&e, s->read_values[3 * i + 1]);
				if (rf & SFP_PERF_FORMAT_LOST)
					e64(&e, s->read_values[3 * i + 2]);
			}
		} else {
			e64(&e, s->read_values[0]);
			if (rf & SFP_PERF_FORMAT_TOTAL_TIME_ENABLED)
				e64(&e, s->read_time_enabled);
			if (rf & SFP_PERF_FORMAT_TOTAL_TIME_RUNNING)
				e64(&e, s->read_time_running);
			if (rf & SFP_PERF_FORMAT_ID)
				e64(&e, s->read_values[1]);
			if (rf & SFP_PERF_FORMAT_LOST)
				e64(&e, s->read_values[2]);
		}
	}
	if (t & SFP_PERF_SAMPLE_CALLCHAIN) {
		if (s->nr_ips > 65535 / 8)
			return -EINVAL;
		e64(&e, s->nr_ips);
		e_put(&e, s->ips, (size_t)s->nr_ips * 8);
	}
	if (t & SFP_PERF_SAMPLE_RAW) {
		/* u32 size + data must keep the record u64-aligned */
		if ((s->raw_size + 4) % 8 || s->raw_size > 65535)
			return -EINVAL;
		e32(&e, s->raw_size);
		e_put(&e, s->raw_data, s->raw_size);
	}
	if (t & SFP_PERF_SAMPLE_BRANCH_STACK) {
		if (s->nr_branches > 65535 / 24)
			return -EINVAL;
		e64(&e, s->nr_branches);
		if (attr->branch_sample_type & SFP_PERF_SAMPLE_BRANCH_HW_INDEX)
			e64(&e, s->branch_hw_idx);
		e_put(&e, s->branches, (size_t)s->nr_branches * 24);
		if (attr->branch_sample_type & SFP_PERF_SAMPLE_BRANCH_COUNTERS)
			e_put(&e, s->branch_counters, (size_t)s->nr_branches * 8);
	}
	if (t & SFP_PERF_SAMPLE_REGS_USER)
		e_regs(&e, s->user_regs_abi, attr->sample_regs_user,
		       s->user_regs);
	if (t & SFP_PERF_SAMPLE_STACK_USER) {
		if (s->user_stack_size > 65535 || s->user_stack_size % 8)
			return -EINVAL;
		e64(&e, s->user_stack_size);
		e_put(&e, s->user_stack, (size_t)s->user_stack_size);
		if (s->user_stack_size)
			e64(&e, s->user_stack_dyn_size);
	}
	if (t & (SFP_PERF_SAMPLE_WEIGHT | SFP_PERF_SAMPLE_WEIGHT_STRUCT))
		e64(&e, s->weight);
	if (t & SFP_PERF_SAMPLE_DATA_SRC)
		e64(&e, s->data_src);
	if (t & SFP_PERF_SAMPLE_TRANSACTION)
		e64(&e, s->transaction);
	if (t & SFP_PERF_SAMPLE_REGS_INTR)
		e_regs(&e, s->intr_regs_abi, attr->sample_regs_intr,
		       s->intr_regs);
	if (t & SFP_PERF_SAMPLE_PHYS_ADDR)
		e64(&e, s->phys_addr);
	if (t & SFP_PERF_SAMPLE_CGROUP)
		e64(&e, s->cgroup);
	if (t & SFP_PERF_SAMPLE_DATA_PAGE_SIZE)
		e64(&e, s->data_page_size);
	if (t & SFP_PERF_SAMPLE_CODE_PAGE_SIZE)
		e64(&e, s->code_page_size);
	if (t & SFP_PERF_SAMPLE_AUX) {
		if (s->aux_size > 65535 || s->aux_size % 8)
			return -EINVAL;
		e64(&e, s->aux_size);
		e_put(&e, s->aux_data, (size_t)s->aux_size);
	}
	if (e.overflow)
		return -ENOSPC;
	size = (size_t)(e.p - (uint8_t *)buf);
	if (size > 65535 || size % 8)
		return -EINVAL;
	sz16 = (uint16_t)size;
	memcpy((uint8_t *)buf + 6, &sz16, 2);
	return (int)size;
}

SFP_API int sfp_perf_write_sample_id(const struct sfp_perf_attr *attr,
				     const struct sfp_perf_sample *s,
				     void *buf, size_t buf_len)
{
	uint64_t t;
	struct enc e;

	if (!attr || !s || !buf)
		return -EINVAL;
	if (!(attr->flags & SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL))
		return 0;
	t = attr->sample_type;
	e.p = buf;
	e.end = e.p + buf_len;
	e.overflow = false;
	if (t & SFP_PERF_SAMPLE_TID) {
		e32(&e, s->pid);
		e32(&e, s->tid);
	}
	if (t & SFP_PERF_SAMPLE_TIME)
		e64(&e, s->time);
	if (t & SFP_PERF_SAMPLE_ID)
		e64(&e, s->id);
	if (t & SFP_PERF_SAMPLE_STREAM_ID)
		e64(&e, s->stream_id);
	if (t & SFP_PERF_SAMPLE_CPU) {
		e32(&e, s->cpu);
		e32(&e, 0);
	}
	if (t & SFP_PERF_SAMPLE_IDENTIFIER)
		e64(&e, s->id);
	if (e.overflow)
		return -ENOSPC;
	return (int)(e.p - (uint8_t *)buf);
}
