// SPDX-License-Identifier: MIT
/*
 * perf.data reader: sources, records, compression and time ordering.
 *
 * Sources are either memory (a mapped regular file or a caller buffer;
 * file mode or a pipe-mode stream stored in a file) or a descriptor that
 * is streamed (pipe mode, `-i -`).  Records are taken one at a time;
 * PERF_RECORD_COMPRESSED payloads are fed to one zstd stream for the whole
 * file (perf compresses with flushes, not frame ends, so a frame spans
 * records) and the records inside are read from the decompressed buffer.
 *
 * Ordering follows perf's ordered_events: every kernel record with a
 * timestamp is queued; a FINISHED_ROUND releases what is not newer than
 * the newest timestamp seen when the *previous* round ended (the kernel
 * only guarantees ordering per ring, so one round of slack is needed);
 * the queue is drained to half when it exceeds its byte limit; records
 * without a timestamp are delivered at once; the end flushes everything.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "perf/perf-int.h"
#include "common/prefault.h"
#include "perf/chunks.h"
#include "perf/time-queue.h"

#define NO_TIME UINT64_MAX
/* Cap on one COMPRESSED record's output, against decompression bombs. */
#define MAX_DECOMP (256u << 20)
#define MAX_EVSELS 4096
#define MAX_IDS (1u << 20)
/* Prefetch distances (see read_raw and prefetch_rec), tuned on a 30k
 * sample dwarf-mode file: 4 and 16 headers ahead, 8, 12 and 48 lines
 * were no better. */
#define HDR_AHEAD 8
/*
 * Files larger than a window are not populated whole: a window of WIN bytes
 * ahead of the reader is (in one go, as MAP_POPULATE did for the whole
 * file), and what lies before every record still queued is dropped from
 * the mapping (MADV_DONTNEED: a clean private file mapping refaults the
 * same bytes if touched again).  Peak RSS on a 550 MB dwarf-mode file was
 * the file's size, as perf's.  2 MiB windows: 8 MiB ones (and files up to
 * 32 MiB populated whole) kept 16-24 MiB of a 26 MB system-wide file
 * resident, and 2 MiB ones read as fast.
 */
#define WIN (2ull << 20)
/*
 * Files from this size on are read into chunks (perf/chunks.h).  The
 * chunks the time queue spans are fresh memory, ~1 MiB.  As small pages
 * a fresh page cost 5-10 us in the guest measured (the host backs it),
 * against ~1.3 us for a page of the file mapped: a 2.6 MB file's report
 * took 3.7 ms more read into chunks, a 26 MB file's 4 ms less.  As huge
 * pages they cost one fault of ~0.1-0.3 ms, and every file but a small
 * one is read faster into them (the 2.6 MB file: 12.7 -> 12.2 ms).
 */
#define CHUNKED_MIN (16ull << 20)
#define CHUNKED_MIN_HUGE (1ull << 20)

/* 0: by the kernel's huge pages, as above; else the size (tests) */
static uint64_t chunked_min_forced;

void sfp_perf_reader_force_chunked_min(uint64_t min)
{
	chunked_min_forced = min;
}

static uint64_t chunked_min(void)
{
	if (chunked_min_forced)
		return chunked_min_forced;
	return sfp_thp_available() ? CHUNKED_MIN_HUGE : CHUNKED_MIN;
}
#define PREFETCH_LINES 24

struct idmap {
	uint64_t id;
	size_t idx;
};

struct sfp_perf_reader {
	char *name;
	/* memory source */
	const uint8_t *mem;
	size_t mem_size;
	void *map;
	size_t map_len;
	/* a big file is made resident a window at a time and let go behind
	 * the reader: [win_dropped, win_ahead) may be resident */
	bool windowed;
	uint64_t win_ahead, win_dropped;
	uint64_t pos, data_end;
	/* a big regular file's records are read into recycled chunks instead
	 * (perf/chunks.h); the mapping serves the header and features */
	bool chunked;
	struct sfp_chunks chunks;
	/* stream source */
	bool stream;
	int fd;
	int own_fd;
	uint8_t *pbuf;
	uint64_t spos;		/* bytes consumed from the stream */
	bool swap;
	/* decompression */
	ZSTD_DStream *zd;
	uint8_t *dbuf;
	size_t dlen, dpos, dcap;
	uint64_t doff;		/* offset of the COMPRESSED record */
	/* events */
	struct sfp_perf_evsel **evsels;
	size_t nr_evsels;
	struct idmap *ids;
	size_t nr_ids;
	uint64_t last_id;	/* evsel_by_id()'s last answer */
	struct sfp_perf_evsel *last_evsel;
	/* where records carry their event's id, from the first event's
	 * attr (which never changes): bytes from a sample's start, bytes
	 * back from the end of other records; 0: no id there */
	bool id_where_known;
	uint32_t id_pos, id_back;
	/* header */
	struct sfp_perf_header_info hdr;
	char **strs;		/* every string we own, for free() */
	size_t nr_strs;
	struct sfp_perf_build_id *bids;
	const char **cmdline;
	struct sfp_perf_stats stats;
	/* ordering */
	bool unordered;
	uint64_t max_bytes, queued_bytes;
	struct sfp_time_queue queue;
	uint64_t seq, max_ts, next_flush, flush_limit, last_flush;
	bool draining, eof;
	struct sfp_tq_slot cur;	/* the delivered record's, if a copy */
	/* the delivered record */
	struct sfp_perf_event ev;
	/* ev is zero but for what sfp_perf_decode_sample_fixed() writes */
	bool ev_clean;
	uint64_t *scratch;
	size_t scratch_len;
	char *str;
	size_t str_cap;
};

/* --- small helpers ------------------------------------------------------ */

static char *own_str(struct sfp_perf_reader *r, const char *s, size_t n)
{
	char **v = realloc(r->strs, (r->nr_strs + 1) * sizeof(*v));
	char *p;

	if (!v)
		return NULL;
	r->strs = v;
	p = malloc(n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = 0;
	r->strs[r->nr_strs++] = p;
	return p;
}

/* perf's string: u32 len (padded), then len bytes holding a NUL string. */
static int read_string(struct sfp_perf_reader *r, struct sfp_cursor *c,
		       const char **out)
{
	uint32_t len;
	const char *s;
	int err = sfp_cursor_u32(c, &len);

	if (err)
		return err;
	if (len > sfp_cursor_left(c))
		return -EBADMSG;
	s = (const char *)c->pos;
	c->pos += len;
	*out = own_str(r, s, strnlen(s, len));
	return *out ? 0 : -ENOMEM;
}

static int bad(struct sfp_perf_reader *r, uint64_t off, const char *what)
{
	pr_warn("%s: offset %llu: %s", r->name, (unsigned long long)off, what);
	return -EBADMSG;
}

/* --- events and ids ----------------------------------------------------- */

/* An event as the reader keeps it: the public part first, so that a
 * pointer to either is a pointer to both. */
struct evsel_priv {
	struct sfp_perf_evsel pub;
	struct sfp_perf_sample_layout layout;	/* for host-order samples */
};

static const struct sfp_perf_sample_layout *
layout_of(const struct sfp_perf_evsel *e)
{
	return &((const struct evsel_priv *)(const void *)e)->layout;
}

static int idmap_cmp(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int add_evsel(struct sfp_perf_reader *r, const struct sfp_perf_attr *a,
		     struct sfp_cursor *ids, uint64_t nr_ids)
{
	struct sfp_perf_evsel **v, *e;
	uint64_t *idv = NULL, i;
	struct idmap *m;

	if (r->nr_evsels >= MAX_EVSELS || nr_ids > MAX_IDS ||
	    r->nr_ids + nr_ids > MAX_IDS)
		return -EBADMSG;
	v = realloc(r->evsels, (r->nr_evsels + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->evsels = v;
	e = calloc(1, sizeof(struct evsel_priv));
	if (!e)
		return -ENOMEM;
	if (nr_ids) {
		idv = calloc(nr_ids, sizeof(*idv));
		m = realloc(r->ids, (r->nr_ids + nr_ids) * sizeof(*m));
		if (!idv || !m) {
			free(idv);
			free(e);
			if (m)
				r->ids = m;
			return -ENOMEM;
		}
		r->ids = m;
		for (i = 0; i < nr_ids; i++) {
			if (sfp_cursor_u64(ids, &idv[i])) {
				free(idv);
				free(e);
				return -EBADMSG;
			}
			m[r->nr_ids + i].id = idv[i];
			m[r->nr_ids + i].idx = r->nr_evsels;
		}
		r->nr_ids += nr_ids;
		/* stable enough: duplicates resolve to any owner */
		qsort(r->ids, r->nr_ids, sizeof(*m), idmap_cmp);
		r->last_evsel = NULL;
	}
	e->attr = *a;
	sfp_perf_sample_layout(a, &((struct evsel_priv *)(void *)e)->layout);
	e->ids = idv;
	e->nr_ids = nr_ids;
	e->idx = r->nr_evsels;
	r->evsels[r->nr_evsels++] = e;
	return 0;
}

static struct sfp_perf_evsel *evsel_by_id(struct sfp_perf_reader *r,
					  uint64_t id)
{
	size_t lo = 0, hi = r->nr_ids;

	/* a CPU's ring is read in one go: its records share their id */
	if (r->last_evsel && r->last_id == id)
		return r->last_evsel;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ids[mid].id == id) {
			r->last_id = id;
			r->last_evsel = r->evsels[r->ids[mid].idx];
			return r->last_evsel;
		}
		if (r->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static uint64_t rd64(const struct sfp_perf_reader *r, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return r->swap ? sfp_bswap64(v) : v;
}

/* Where the first event's attr puts the ids (evsel_of()), once. */
static void find_id_where(struct sfp_perf_reader *r)
{
	const struct sfp_perf_attr *a = &r->evsels[0]->attr;
	uint64_t st = a->sample_type;

	if (st & SFP_PERF_SAMPLE_IDENTIFIER)
		r->id_pos = 8;
	else if (st & SFP_PERF_SAMPLE_ID)
		r->id_pos = 8 + 8 * (!!(st & SFP_PERF_SAMPLE_IP) +
				     !!(st & SFP_PERF_SAMPLE_TID) +
				     !!(st & SFP_PERF_SAMPLE_TIME) +
				     !!(st & SFP_PERF_SAMPLE_ADDR));
	/* without sample_id_all no record but a sample carries an id */
	if (!(a->flags & SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL))
		r->id_back = 0;
	else if (st & SFP_PERF_SAMPLE_IDENTIFIER)
		r->id_back = 8;
	else if (st & SFP_PERF_SAMPLE_ID)
		r->id_back = 8 * (1 + !!(st & SFP_PERF_SAMPLE_STREAM_ID) +
				  !!(st & SFP_PERF_SAMPLE_CPU));
	r->id_where_known = true;
}

/*
 * Which event a record belongs to: by the id at perf's id_pos (samples)
 * or is_pos (sample_id trailers), computed from the first event's
 * sample_type as perf does; a single event owns everything.
 */
static struct sfp_perf_evsel *evsel_of(struct sfp_perf_reader *r,
				       const uint8_t *rec, size_t size,
				       uint32_t type)
{
	uint64_t pos;

	if (!r->nr_evsels)
		return NULL;
	if (r->nr_evsels == 1)
		return r->evsels[0];
	if (!r->id_where_known)
		find_id_where(r);
	if (type == SFP_PERF_RECORD_SAMPLE) {
		if (!r->id_pos)
			return r->evsels[0];
		pos = r->id_pos;
		if (pos + 8 > size)
			return NULL;
	} else {
		if (!r->id_back)
			return r->evsels[0];
		if ((uint64_t)r->id_back + 8 > size)
			return NULL;
		pos = size - r->id_back;
	}
	return evsel_by_id(r, rd64(r, rec + pos));
}

static uint64_t timestamp_of(struct sfp_perf_reader *r,
			     const struct sfp_perf_evsel *e,
			     const uint8_t *rec, size_t size, uint32_t type)
{
	uint64_t st, off;

	if (!e)
		return NO_TIME;
	st = e->attr.sample_type;
	if (!(st & SFP_PERF_SAMPLE_TIME))
		return NO_TIME;
	if (type == SFP_PERF_RECORD_SAMPLE) {
		off = 8 + 8 * (!!(st & SFP_PERF_SAMPLE_IDENTIFIER) +
			       !!(st & SFP_PERF_SAMPLE_IP) +
			       !!(st & SFP_PERF_SAMPLE_TID));
	} else {
		size_t n = sfp_perf_id_trailer_size(st);

		if (!(e->attr.flags & SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL) ||
		    n + 8 > size)
			return NO_TIME;
		off = size - n + 8 * !!(st & SFP_PERF_SAMPLE_TID);
	}
	if (off + 8 > size)
		return NO_TIME;
	return rd64(r, rec + off);
}

/* --- feature sections ---------------------------------------------------- */

static int parse_build_ids(struct sfp_perf_reader *r, struct sfp_cursor *c)
{
	while (sfp_cursor_left(c) >= 8) {
		struct sfp_perf_build_id b = { 0 };
		struct sfp_cursor rc;
		uint32_t type = 0;
		uint16_t misc = 0, size = 0;
		int32_t pid = 0;
		uint8_t raw[24] = { 0 };
		const char *fn;
		void *v;

		sfp_cursor_init(&rc, c->pos, sfp_cursor_left(c), c->swap);
		sfp_cursor_u32(&rc, &type);
		sfp_cursor_u16(&rc, &misc);
		sfp_cursor_u16(&rc, &size);
		if (size < 36 || size > sfp_cursor_left(c))
			return -EBADMSG;
		sfp_cursor_i32(&rc, &pid);
		sfp_cursor_bytes(&rc, raw, 24);
		fn = (const char *)rc.pos;
		b.pid = (uint32_t)pid;
		b.misc = misc;
		memcpy(b.id, raw, 20);
		b.size = (misc & SFP_PERF_MISC_BUILD_ID_SIZE) && raw[20] <= 20 ?
				 raw[20] : 20;
		b.filename = own_str(r, fn, strnlen(fn, size - 36u));
		if (!b.filename)
			return -ENOMEM;
		if (r->hdr.nr_build_ids >= 1u << 20)
			return -EBADMSG;
		v = realloc(r->bids, (r->hdr.nr_build_ids + 1) * sizeof(b));
		if (!v)
			return -ENOMEM;
		r->bids = v;
		r->bids[r->hdr.nr_build_ids++] = b;
		r->hdr.build_ids = r->bids;
		c->pos += size;
	}
	return 0;
}

static int parse_event_desc(struct sfp_perf_reader *r, struct sfp_cursor *c)
{
	uint32_t nr, asz, i, nids;
	int err;

	if ((err = sfp_cursor_u32(c, &nr)) || (err = sfp_cursor_u32(c, &asz)))
		return err;
	if (asz < SFP_PERF_ATTR_SIZE_VER0 || nr > sfp_cursor_left(c) / asz)
		return -EBADMSG;
	for (i = 0; i < nr; i++) {
		struct sfp_perf_attr a;
		const char *name;

		if ((err = sfp_perf_attr_parse(c, asz, &a)))
			return err;
		/* the attr's own size may be below the stride */
		if ((err = sfp_cursor_seek(c, sfp_cursor_off(c) - a.size + asz)))
			return err;
		if ((err = sfp_cursor_u32(c, &nids)) ||
		    (err = read_string(r, c, &name)))
			return err;
		if ((err = sfp_cursor_skip(c, (size_t)nids * 8)))
			return err;
		if (i < r->nr_evsels && !r->evsels[i]->name)
			r->evsels[i]->name = name;
	}
	return 0;
}

static int parse_feature(struct sfp_perf_reader *r, unsigned int feat,
			 struct sfp_cursor *c)
{
	struct sfp_perf_header_info *h = &r->hdr;
	uint32_t nr, i;
	int err = 0;

	if (feat < SFP_PERF_FEAT_MAX)
		h->features[feat / 64] |= 1ull << (feat % 64);
	switch (feat) {
	case SFP_PERF_FEAT_HOSTNAME:
		return read_string(r, c, &h->hostname);
	case SFP_PERF_FEAT_OSRELEASE:
		return read_string(r, c, &h->osrelease);
	case SFP_PERF_FEAT_VERSION:
		return read_string(r, c, &h->version);
	case SFP_PERF_FEAT_ARCH:
		return read_string(r, c, &h->arch);
	case SFP_PERF_FEAT_CPUDESC:
		return read_string(r, c, &h->cpudesc);
	case SFP_PERF_FEAT_CPUID:
		return read_string(r, c, &h->cpuid);
	case SFP_PERF_FEAT_NRCPUS:
		if ((err = sfp_cursor_u32(c, &h->nr_cpus_avail)))
			return err;
		return sfp_cursor_u32(c, &h->nr_cpus_online);
	case SFP_PERF_FEAT_TOTAL_MEM:
		return sfp_cursor_u64(c, &h->total_mem);
	case SFP_PERF_FEAT_CMDLINE: {
		const char **v;

		if ((err = sfp_cursor_u32(c, &nr)))
			return err;
		if (nr > sfp_cursor_left(c) / 4)
			return -EBADMSG;
		v = calloc(nr + 1, sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (i = 0; i < nr && !err; i++)
			err = read_string(r, c, &v[i]);
		if (err) {
			free(v);
			return err;
		}
		free(r->cmdline);
		r->cmdline = v;
		h->cmdline = v;
		h->nr_cmdline = nr;
		return 0;
	}
	case SFP_PERF_FEAT_EVENT_DESC:
		return parse_event_desc(r, c);
	case SFP_PERF_FEAT_BUILD_ID:
		return parse_build_ids(r, c);
	default:
		return 0;	/* known to perf, not needed here: skipped */
	}
}

/* --- headers -------------------------------------------------------------- */

static int check_magic(struct sfp_perf_reader *r, const uint8_t *p)
{
	uint64_t m;

	memcpy(&m, p, 8);
	if (m == SFP_PERF_MAGIC2) {
		r->swap = false;
	} else if (sfp_bswap64(m) == SFP_PERF_MAGIC2) {
		r->swap = true;
	} else if (!memcmp(p, "PERFFILE", 8)) {
		pr_warn("%s: version 1 perf.data (PERFFILE) is not supported",
			r->name);
		return -EOPNOTSUPP;
	} else {
		pr_warn("%s: not a perf.data file (bad magic)", r->name);
		return -EBADMSG;
	}
	r->hdr.swapped = r->swap;
	return 0;
}

/*
 * Does a feature table of NFEAT entries at OFF, each section inside the
 * file after the table, stand there?  For a header with data size 0:
 * an empty data section of a finished file, or an unfinished file.
 */
static bool feature_table_fits(struct sfp_perf_reader *r, uint64_t off,
			       unsigned int nfeat)
{
	uint64_t end = off + (uint64_t)nfeat * 16, so, ss;
	struct sfp_cursor c;
	unsigned int i;

	if (!nfeat || end > r->mem_size)
		return false;
	sfp_cursor_init(&c, r->mem, r->mem_size, r->swap);
	if (sfp_cursor_seek(&c, off))
		return false;
	for (i = 0; i < nfeat; i++) {
		if (sfp_cursor_u64(&c, &so) || sfp_cursor_u64(&c, &ss) ||
		    so < end || so > r->mem_size || ss > r->mem_size - so)
			return false;
	}
	return true;
}

static int parse_file_header(struct sfp_perf_reader *r)
{
	uint64_t hsize = 0, attr_size, a_off, a_size, d_off, d_size, t_off, t_size;
	uint64_t feats[4] = { 0 }, i, nr;
	struct sfp_cursor c;
	unsigned int f, nfeat = 0;
	int err;

	if (r->mem_size < SFP_PERF_PIPE_HEADER_SIZE)
		return bad(r, 0, "file too short for a perf.data header");
	if ((err = check_magic(r, r->mem)))
		return err;
	sfp_cursor_init(&c, r->mem, r->mem_size, r->swap);
	c.pos += 8;
	sfp_cursor_u64(&c, &hsize);
	if (hsize == SFP_PERF_PIPE_HEADER_SIZE) {
		/* a pipe-mode stream saved to a file */
		r->hdr.pipe_mode = true;
		r->pos = SFP_PERF_PIPE_HEADER_SIZE;
		r->data_end = r->mem_size;
		return 0;
	}
	if (hsize != SFP_PERF_FILE_HEADER_SIZE && hsize != 72)
		return bad(r, 8, "unexpected header size");
	if (sfp_cursor_u64(&c, &attr_size) || sfp_cursor_u64(&c, &a_off) ||
	    sfp_cursor_u64(&c, &a_size) || sfp_cursor_u64(&c, &d_off) ||
	    sfp_cursor_u64(&c, &d_size) || sfp_cursor_u64(&c, &t_off) ||
	    sfp_cursor_u64(&c, &t_size))
		return bad(r, sfp_cursor_off(&c), "truncated header");
	if (hsize == SFP_PERF_FILE_HEADER_SIZE)
		for (i = 0; i < 4; i++)
			if (sfp_cursor_u64(&c, &feats[i]))
				return bad(r, sfp_cursor_off(&c),
					   "truncated feature bitmap");

	/* attrs, each followed by the file section of its ids */
	if (attr_size < SFP_PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096)
		return bad(r, 16, "bad attr_size");
	if (a_off > r->mem_size || a_size > r->mem_size - a_off)
		return bad(r, 24, "attr section outside the file");
	nr = a_size / attr_size;
	for (i = 0; i < nr; i++) {
		struct sfp_perf_attr a;
		struct sfp_cursor ac, ic;
		uint64_t ioff = 0, isz = 0, eoff = a_off + i * attr_size;

		sfp_cursor_init(&ac, r->mem, r->mem_size, r->swap);
		sfp_cursor_seek(&ac, eoff);
		if (sfp_perf_attr_parse(&ac, attr_size - 16, &a))
			return bad(r, eoff, "bad perf_event_attr");
		sfp_cursor_seek(&ac, eoff + attr_size - 16);
		sfp_cursor_u64(&ac, &ioff);
		sfp_cursor_u64(&ac, &isz);
		if (ioff > r->mem_size || isz > r->mem_size - ioff)
			return bad(r, eoff + attr_size - 16,
				   "attr ids outside the file");
		sfp_cursor_init(&ic, r->mem + ioff, isz, r->swap);
		if ((err = add_evsel(r, &a, &ic, isz / 8)))
			return err == -EBADMSG ? bad(r, eoff, "too many ids") : err;
	}
	if (!r->nr_evsels)
		return bad(r, 24, "no events in the attr section");

	if (d_off > r->mem_size || d_size > r->mem_size - d_off)
		return bad(r, 40, "data section outside the file");
	r->pos = d_off;
	r->data_end = d_off + d_size;
	for (f = 0; f < SFP_PERF_FEAT_MAX; f++)
		nfeat += !!(feats[f / 64] & (1ull << (f % 64)));
	if (!d_size && d_off >= hsize && d_off < r->mem_size &&
	    !feature_table_fits(r, d_off, nfeat)) {
		/* perf's (and sfprof's) provisional header: the writer was
		 * stopped before it finished; the records it flushed run to
		 * the end of the file (perf's own killed files have their
		 * feature bits set already, but no feature table) */
		r->hdr.unfinished = true;
		r->data_end = r->mem_size;
		pr_warn("%s: the file was not finished (the recording was "
			"killed or crashed?): reading the %llu bytes of records "
			"up to the end of the file", r->name,
			(unsigned long long)(r->mem_size - d_off));
		return 0;
	}

	/* feature sections: one {offset, size} per set bit, after data */
	sfp_cursor_init(&c, r->mem, r->mem_size, r->swap);
	if (nfeat && sfp_cursor_seek(&c, r->data_end)) {
		pr_warn("%s: feature sections missing", r->name);
		return 0;
	}
	for (f = 0; f < SFP_PERF_FEAT_MAX && nfeat; f++) {
		uint64_t so, ss;
		struct sfp_cursor fc;

		if (!(feats[f / 64] & (1ull << (f % 64))))
			continue;
		if (sfp_cursor_u64(&c, &so) || sfp_cursor_u64(&c, &ss)) {
			pr_warn("%s: truncated feature table", r->name);
			return 0;
		}
		if (so > r->mem_size || ss > r->mem_size - so) {
			pr_warn("%s: feature %u outside the file, skipped",
				r->name, f);
			continue;
		}
		sfp_cursor_init(&fc, r->mem + so, ss, r->swap);
		err = parse_feature(r, f, &fc);
		if (err == -ENOMEM)
			return err;
		if (err)
			pr_warn("%s: offset %llu: bad feature section %u, skipped",
				r->name, (unsigned long long)so, f);
	}
	return 0;
}

/* --- raw record sources -------------------------------------------------- */

static int read_full(struct sfp_perf_reader *r, void *buf, size_t n)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(r->fd, p + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = -errno;

			pr_warn("%s: read: %s", r->name, strerror(errno));
			return e;
		}
		if (k == 0)
			return got ? -EBADMSG : 0;
		got += (size_t)k;
	}
	r->spos += n;
	return 1;
}

static int stream_skip(struct sfp_perf_reader *r, uint64_t n)
{
	uint8_t tmp[4096];

	while (n) {
		size_t k = n < sizeof(tmp) ? (size_t)n : sizeof(tmp);
		int err = read_full(r, tmp, k);

		if (err <= 0)
			return err < 0 ? err : -EBADMSG;
		n -= k;
	}
	return 0;
}

/* Extra payload that follows some records outside their header.size. */
static uint64_t trailing_payload(struct sfp_perf_reader *r, uint32_t type,
				 const uint8_t *rec, size_t size)
{
	uint32_t v32;

	if (type == SFP_PERF_RECORD_AUXTRACE && size >= 16)
		return rd64(r, rec + 8);
	if (type == SFP_PERF_RECORD_HEADER_TRACING_DATA && size >= 12) {
		memcpy(&v32, rec + 8, 4);
		return r->swap ? sfp_bswap32(v32) : v32;
	}
	return 0;
}

static void hdr_of(const struct sfp_perf_reader *r, const uint8_t *p,
		   uint32_t *type, uint16_t *misc, uint16_t *size)
{
	memcpy(type, p, 4);
	memcpy(misc, p + 4, 2);
	memcpy(size, p + 6, 2);
	if (r->swap) {
		*type = sfp_bswap32(*type);
		*misc = sfp_bswap16(*misc);
		*size = sfp_bswap16(*size);
	}
}

/*
 * An unfinished file may end inside the record its writer was writing
 * when it was killed: that is the end, not an error.  True: it was that.
 */
static bool cut_off(struct sfp_perf_reader *r)
{
	if (!r->hdr.unfinished)
		return false;
	pr_warn("%s: offset %llu: the last %llu bytes are a record cut off "
		"when the writer stopped; ignored", r->name,
		(unsigned long long)r->pos,
		(unsigned long long)(r->data_end - r->pos));
	r->pos = r->data_end;
	return true;
}

/*
 * The next record from the decompressed buffer, the mapped data or the
 * stream.  Return: 1, 0 at the end, or -errno.
 */
/* Populate [from, from + len) of the mapping (clamped). */
static void populate(struct sfp_perf_reader *r, uint64_t from, uint64_t len)
{
	if (from >= r->map_len)
		return;
	if (len > r->map_len - from)
		len = r->map_len - from;
#ifdef MADV_POPULATE_READ
	if (!madvise((uint8_t *)r->map + from, len, MADV_POPULATE_READ))
		return;
#endif
	(void)madvise((uint8_t *)r->map + from, len, MADV_WILLNEED);
}

/* sfp_tq_each() callback: the lowest offset of a queued mapped record */
static void lowest_mapped(const struct sfp_tq_slot *s, void *arg)
{
	uint64_t *low = arg;

	if (!s->copy && s->off < *low)
		*low = s->off;
}

/*
 * The reader is within WIN of the populated end: populate the next
 * window, and drop the pages before the lowest record still needed (the
 * one just read at `cur`, and every mapped one in the queue).
 */
static void slide_window(struct sfp_perf_reader *r, uint64_t cur)
{
	uint64_t low = cur, pg = (uint64_t)sysconf(_SC_PAGESIZE);

	if (!pg || (pg & (pg - 1)))
		pg = 4096;
	populate(r, r->win_ahead, WIN);
	r->win_ahead += WIN;
	sfp_tq_each(&r->queue, lowest_mapped, &low);
	low &= ~(pg - 1);
	if (low > r->win_dropped + WIN) {
		(void)madvise((uint8_t *)r->map + r->win_dropped,
			      low - r->win_dropped, MADV_DONTNEED);
		r->win_dropped = low;
	}
}

/* A chunk read failed: the file changed under us, or the system said no. */
static int chunk_err(struct sfp_perf_reader *r, int err)
{
	if (err == -EBADMSG)
		return bad(r, r->pos, "file shorter than when it was opened");
	pr_warn("%s: offset %llu: read: %s", r->name,
		(unsigned long long)r->pos, sfp_strerror(err));
	return err;
}

static int read_raw(struct sfp_perf_reader *r, const uint8_t **rec,
		    size_t *size, uint64_t *off, bool *from_decomp)
{
	uint32_t type;
	uint16_t misc, sz;
	int err;

	*from_decomp = false;
	if (r->dlen - r->dpos >= 8) {
		hdr_of(r, r->dbuf + r->dpos, &type, &misc, &sz);
		if (sz < 8)
			return bad(r, r->doff,
				   "record of size < 8 in compressed data");
		if (sz <= r->dlen - r->dpos) {
			*rec = r->dbuf + r->dpos;
			*size = sz;
			*off = r->doff;
			r->dpos += sz;
			*from_decomp = true;
			return 1;
		}
		/* partial record: completed by the next COMPRESSED */
	}
	if (!r->stream) {
		uint64_t pl;

		if (r->pos >= r->data_end)
			return 0;
		if (r->data_end - r->pos < 8)
			return cut_off(r) ? 0 : bad(r, r->pos,
						    "truncated record header");
		if (r->chunked) {
			const uint8_t *h = sfp_chunks_get(&r->chunks, r->pos, 8,
							  &err);

			if (!h)
				return chunk_err(r, err);
			hdr_of(r, h, &type, &misc, &sz);
		} else {
			hdr_of(r, r->mem + r->pos, &type, &misc, &sz);
		}
		if (sz >= 8 && sz > r->data_end - r->pos && cut_off(r))
			return 0;
		if (sz < 8 || sz > r->data_end - r->pos)
			return bad(r, r->pos, "record size out of bounds");
		if (r->chunked) {
			*rec = sfp_chunks_get(&r->chunks, r->pos, sz, &err);
			if (!*rec)
				return chunk_err(r, err);
		} else {
			*rec = r->mem + r->pos;
		}
		*size = sz;
		*off = r->pos;
		r->pos += sz;
		pl = trailing_payload(r, type, *rec, sz);
		if (pl > r->data_end - r->pos)
			return bad(r, *off, "record payload past the end");
		r->pos += pl;
		if (r->windowed && r->pos + WIN > r->win_ahead)
			slide_window(r, *off);
		/*
		 * Headers are a pointer chase through cold pages (each size
		 * leads to the next record).  Records of one kind often have
		 * one size (dwarf-mode samples: a fixed stack copy), so guess
		 * where the header HDR_AHEAD records on will be and start
		 * loading it; a wrong guess costs one useless prefetch.
		 */
		if (!r->chunked && r->data_end - r->pos > HDR_AHEAD * (uint64_t)sz)
			__builtin_prefetch(r->mem + r->pos +
					   HDR_AHEAD * (uint64_t)sz);
		return 1;
	}
	*off = r->spos;
	err = read_full(r, r->pbuf, 8);
	if (err <= 0)
		return err == -EBADMSG ? bad(r, *off, "truncated record") : err;
	hdr_of(r, r->pbuf, &type, &misc, &sz);
	if (sz < 8)
		return bad(r, *off, "record size < 8");
	if (sz > 8) {
		err = read_full(r, r->pbuf + 8, sz - 8u);
		if (err <= 0)
			return bad(r, *off, "truncated record");
	}
	*rec = r->pbuf;
	*size = sz;
	err = stream_skip(r, trailing_payload(r, type, r->pbuf, sz));
	if (err)
		return err == -EBADMSG ? bad(r, *off, "truncated payload") : err;
	return 1;
}

static int decompress(struct sfp_perf_reader *r, const uint8_t *rec,
		      size_t size, uint64_t off, size_t hdr, size_t data_size)
{
	ZSTD_inBuffer in = { rec + hdr, data_size, 0 };
	size_t left = r->dlen - r->dpos;

	if (!r->zd) {
		r->zd = ZSTD_createDStream();
		if (!r->zd || ZSTD_isError(ZSTD_initDStream(r->zd)))
			return -ENOMEM;
	}
	/* keep an incomplete record at the front */
	if (left)
		memmove(r->dbuf, r->dbuf + r->dpos, left);
	r->dpos = 0;
	r->dlen = left;
	r->doff = off;
	while (in.pos < in.size) {
		ZSTD_outBuffer out;
		size_t ret;

		if (r->dcap - r->dlen < 65536) {
			size_t ncap = r->dcap ? r->dcap * 2 : 1u << 20;
			uint8_t *n;

			if (ncap > MAX_DECOMP)
				return bad(r, off, "compressed data expands too much");
			n = realloc(r->dbuf, ncap);
			if (!n)
				return -ENOMEM;
			r->dbuf = n;
			r->dcap = ncap;
		}
		out = (ZSTD_outBuffer){ r->dbuf, r->dcap, r->dlen };
		ret = ZSTD_decompressStream(r->zd, &out, &in);
		if (ZSTD_isError(ret)) {
			pr_warn("%s: offset %llu: zstd: %s", r->name,
				(unsigned long long)off, ZSTD_getErrorName(ret));
			return -EBADMSG;
		}
		r->dlen = out.pos;
		if (out.pos < out.size && in.pos == in.size)
			break;
	}
	return 0;
}

static int user_record(struct sfp_perf_reader *r, const uint8_t *rec,
		       size_t size, uint64_t off, uint32_t type, bool nested)
{
	struct sfp_cursor c;
	int err;

	sfp_cursor_init(&c, rec, size, r->swap);
	c.pos += 8;
	switch (type) {
	case SFP_PERF_RECORD_FINISHED_ROUND:
		r->flush_limit = r->next_flush;
		r->next_flush = r->max_ts;
		return 0;
	case SFP_PERF_RECORD_HEADER_ATTR: {
		struct sfp_perf_attr a;

		if (sfp_perf_attr_parse(&c, size - 8, &a))
			return bad(r, off, "bad HEADER_ATTR");
		err = add_evsel(r, &a, &c, sfp_cursor_left(&c) / 8);
		return err == -EBADMSG ? bad(r, off, "too many events") : err;
	}
	case SFP_PERF_RECORD_HEADER_FEATURE: {
		uint64_t feat;

		if (sfp_cursor_u64(&c, &feat))
			return bad(r, off, "short HEADER_FEATURE");
		if (feat >= SFP_PERF_FEAT_MAX)
			return 0;
		err = parse_feature(r, (unsigned int)feat, &c);
		if (err == -ENOMEM)
			return err;
		if (err)
			pr_warn("%s: offset %llu: bad feature %u, skipped",
				r->name, (unsigned long long)off,
				(unsigned int)feat);
		return 0;
	}
	case SFP_PERF_RECORD_EVENT_UPDATE: {
		/* pipe mode names its events here: u64 type, u64 id, data;
		 * type 2 (PERF_EVENT_UPDATE__NAME) carries the name */
		uint64_t utype, id;
		struct sfp_perf_evsel *e;
		const char *nm;

		if (sfp_cursor_u64(&c, &utype) || sfp_cursor_u64(&c, &id))
			return bad(r, off, "short EVENT_UPDATE");
		e = evsel_by_id(r, id);
		if (utype != 2 || !e || e->name)
			return 0;
		nm = own_str(r, (const char *)c.pos,
			     strnlen((const char *)c.pos, sfp_cursor_left(&c)));
		if (!nm)
			return -ENOMEM;
		e->name = nm;
		return 0;
	}
	case SFP_PERF_RECORD_HEADER_BUILD_ID:
		sfp_cursor_init(&c, rec, size, r->swap);
		if (parse_build_ids(r, &c) == -ENOMEM)
			return -ENOMEM;
		return 0;
	case SFP_PERF_RECORD_COMPRESSED:
	case SFP_PERF_RECORD_COMPRESSED2: {
		uint64_t dsz = size - 8;

		r->stats.nr_compressed++;
		if (nested)
			return bad(r, off, "COMPRESSED inside compressed data");
		/* COMPRESSED2 (perf 6.16+): u64 data_size, data padded to 8 */
		if (type == SFP_PERF_RECORD_COMPRESSED2 &&
		    (sfp_cursor_u64(&c, &dsz) || dsz > size - 16))
			return bad(r, off, "bad COMPRESSED2 data size");
		return decompress(r, rec, size, off,
				  type == SFP_PERF_RECORD_COMPRESSED ? 8 : 16,
				  (size_t)dsz);
	}
	default:
		return 0;	/* FINISHED_INIT, ID_INDEX, ...: nothing to do */
	}
}

/* --- decoding the delivered record --------------------------------------- */

static int ensure_scratch(struct sfp_perf_reader *r, size_t size)
{
	size_t need = size / 8 + 16;

	if (r->scratch_len < need) {
		uint64_t *n = realloc(r->scratch, need * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->scratch = n;
		r->scratch_len = need;
	}
	if (r->str_cap < size + 1) {
		char *s = realloc(r->str, size + 1);

		if (!s)
			return -ENOMEM;
		r->str = s;
		r->str_cap = size + 1;
	}
	return 0;
}

/* What every delivered event says of its record. */
static void event_head(const struct sfp_perf_reader *r,
		       struct sfp_perf_event *ev, uint32_t type, uint16_t misc,
		       uint16_t sz, uint64_t off, const uint8_t *rec,
		       const struct sfp_perf_evsel *e)
{
	ev->type = type;
	ev->misc = misc;
	ev->size = sz;
	ev->file_offset = off;
	ev->raw = rec;
	ev->swapped = r->swap;
	ev->evsel = e;
}

static int decode(struct sfp_perf_reader *r, const uint8_t *rec, size_t size,
		  uint64_t off, struct sfp_perf_evsel *e)
{
	const size_t after_sample = offsetof(struct sfp_perf_event, sample) +
				    sizeof(r->ev.sample);
	struct sfp_perf_event *ev = &r->ev;
	uint32_t type;
	uint16_t misc, sz;
	int err;

	hdr_of(r, rec, &type, &misc, &sz);
	/* a sample of fixed fields and a chain: read where they lie, into
	 * an event whose other fields are still zero (ev_clean) */
	if (type == SFP_PERF_RECORD_SAMPLE && e && !r->swap &&
	    layout_of(e)->ok && !((uintptr_t)rec & 7)) {
		if (!r->ev_clean) {
			memset(ev, 0, sizeof(*ev));
			r->ev_clean = true;
		}
		if (sfp_perf_decode_sample_fixed(layout_of(e),
						 e->attr.sample_type, rec,
						 size, &ev->sample)) {
			event_head(r, ev, type, misc, sz, off, rec, e);
			return 0;
		}
	}
	r->ev_clean = false;
	if ((err = ensure_scratch(r, size)))
		return err;
	/* a sample's part is zeroed by its parser: not twice */
	if (e && type == SFP_PERF_RECORD_SAMPLE)
		memset((char *)ev + after_sample, 0,
		       sizeof(*ev) - after_sample);
	else
		memset(ev, 0, sizeof(*ev));
	event_head(r, ev, type, misc, sz, off, rec, e);
	/* arrays point into the record where they can: it outlives the
	 * event (the mapped file, the delivered copy in r->cur, or a
	 * stream or zstd buffer that the next call reuses) */
	if (sfp_perf_record_decode(e, rec, size, r->swap, ev, r->scratch,
				   r->scratch_len, r->str, true)) {
		r->stats.nr_bad_records++;
		pr_warn("%s: offset %llu: malformed %s record (size %zu), "
			"skipped", r->name, (unsigned long long)off,
			sfp_perf_record_name(ev->type) ?: "?", size);
		return -EBADMSG;
	}
	if (ev->type == SFP_PERF_RECORD_LOST)
		r->stats.nr_lost += ev->lost.lost;
	else if (ev->type == SFP_PERF_RECORD_LOST_SAMPLES)
		r->stats.nr_lost_samples += ev->lost_samples.lost;
	return 0;
}

/* --- the time-ordered queue ---------------------------------------------- */

/*
 * Queue a record.  Records of a mapped file stay where they are (the map
 * lives as long as the reader); those of a stream or of decompressed data
 * are copied, since their buffers are reused.
 */
static int enqueue(struct sfp_perf_reader *r, const uint8_t *rec, size_t size,
		   uint64_t off, uint64_t ts, bool copy,
		   const struct sfp_perf_evsel *e)
{
	struct sfp_tq_slot q = {
		.time = ts, .seq = r->seq++, .off = off, .rec = rec,
		.size = (uint32_t)size, .copy = copy, .tag = e,
	};
	size_t cost = sizeof(q) + size;
	int err;

	/* a record of a chunk keeps it (out of chunk ids: a copy) */
	if (!copy && r->chunked && !(q.chunk = sfp_chunks_ref(&r->chunks)))
		copy = q.copy = true;
	if (copy) {
		uint8_t *data = malloc(size);

		if (!data)
			return -ENOMEM;
		memcpy(data, rec, size);
		q.rec = data;
	}
	if ((err = sfp_tq_push(&r->queue, &q))) {
		if (copy)
			free((void *)q.rec);
		sfp_chunks_unref(&r->chunks, q.chunk);
		return err;
	}
	if (ts < r->last_flush)
		r->stats.nr_unordered++;
	if (ts > r->max_ts)
		r->max_ts = ts;
	/* mapped records count too: the bound is on what waits, which is
	 * what a stream would have to hold */
	r->queued_bytes += cost;
	if (r->queued_bytes > r->stats.max_queued_bytes)
		r->stats.max_queued_bytes = r->queued_bytes;
	if (r->queued_bytes > r->max_bytes)
		r->draining = true;
	return 0;
}

/*
 * Start loading the record delivered after this one while the caller
 * works on this one.  A dwarf-mode sample is ~8 KiB, so each starts on a
 * cold page the hardware prefetcher does not cross into; its header,
 * registers and the top of the stack snapshot (what an unwinder reads
 * first, serially: one return address leads to the next) were the
 * largest stall of `sfprof script`.  The last line holds dyn_size.
 */
static void prefetch_rec(const struct sfp_tq_slot *q)
{
	size_t n = q->size < PREFETCH_LINES * 64 ? q->size :
						   PREFETCH_LINES * 64;
	size_t i;

	for (i = 0; i < n; i += 64)
		__builtin_prefetch(q->rec + i);
	__builtin_prefetch(q->rec + q->size - 8);
}

/* Done with the delivered record: its copy, if it had one, is freed. */
static void release_cur(struct sfp_perf_reader *r)
{
	if (r->cur.copy)
		free((void *)r->cur.rec);
	r->cur.copy = false;
	if (r->cur.chunk)
		sfp_chunks_unref(&r->chunks, r->cur.chunk);
	r->cur.chunk = 0;
}

SFP_API int sfp_perf_reader__next(struct sfp_perf_reader *r,
				  const struct sfp_perf_event **out)
{
	if (!r || !out)
		return -EINVAL;
	release_cur(r);
	for (;;) {
		const uint8_t *rec;
		struct sfp_perf_evsel *e;
		uint64_t off, ts;
		size_t size;
		uint32_t type;
		uint16_t misc, sz;
		bool nested;
		int err;
		const struct sfp_tq_slot *next = sfp_tq_peek(&r->queue);

		if (next && (r->eof || r->draining ||
			     next->time <= r->flush_limit)) {
			struct sfp_tq_slot *q = &r->cur;

			release_cur(r);	/* a bad record popped before */
			sfp_tq_pop(&r->queue, q);
			r->queued_bytes -= sizeof(*q) + q->size;
			if (r->draining && r->queued_bytes <= r->max_bytes / 2)
				r->draining = false;
			if (q->time > r->last_flush)
				r->last_flush = q->time;
			if ((next = sfp_tq_peek(&r->queue)))
				prefetch_rec(next);
			hdr_of(r, q->rec, &type, &misc, &sz);
			/* found when queued; an event's ids never change */
			e = (struct sfp_perf_evsel *)q->tag ?:
			    evsel_of(r, q->rec, q->size, type);
			err = decode(r, q->rec, q->size, q->off, e);
			if (err == -ENOMEM)
				return err;
			if (err)
				continue;
			*out = &r->ev;
			return 1;
		}
		if (r->eof)
			return 0;
		err = read_raw(r, &rec, &size, &off, &nested);
		if (err < 0)
			return err;
		if (!err) {
			if (r->dlen > r->dpos)
				pr_warn("%s: %zu bytes of an incomplete record at the end of compressed data",
					r->name, r->dlen - r->dpos);
			r->eof = true;
			continue;
		}
		hdr_of(r, rec, &type, &misc, &sz);
		if (type >= SFP_PERF_RECORD_HEADER_ATTR) {
			r->stats.nr_user_records++;
			if (type > SFP_PERF_RECORD_COMPRESSED2)
				r->stats.nr_unknown++;
			err = user_record(r, rec, size, off, type, nested);
			if (err)
				return err;
			continue;
		}
		if (type == 0 || type >= SFP_PERF_RECORD_KERNEL_MAX) {
			r->stats.nr_unknown++;	/* skipped by its size */
			continue;
		}
		r->stats.nr_records[type]++;
		e = evsel_of(r, rec, size, type);
		if (!e && type == SFP_PERF_RECORD_SAMPLE) {
			r->stats.nr_unknown_id++;
			continue;
		}
		ts = r->unordered ? NO_TIME : timestamp_of(r, e, rec, size, type);
		if (ts == NO_TIME) {
			err = decode(r, rec, size, off, e);
			if (err == -ENOMEM)
				return err;
			if (err)
				continue;
			*out = &r->ev;
			return 1;
		}
		if ((err = enqueue(r, rec, size, off, ts,
				   r->stream || nested, e)))
			return err;
	}
}

/* --- opening and closing ------------------------------------------------- */

static int reader_new(const char *name, const struct sfp_perf_reader_opts *opts,
		      struct sfp_perf_reader **out)
{
	struct sfp_perf_reader *r;

	*out = NULL;
	if (!SFP_OPTS_VALID(opts, sfp_perf_reader_opts))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->name = strdup(name ? name : "perf.data");
	if (!r->name) {
		free(r);
		return -ENOMEM;
	}
	r->fd = -1;
	r->own_fd = -1;
	r->chunks.fd = -1;
	sfp_tq_init(&r->queue);
	r->unordered = SFP_OPTS_GET(opts, sfp_perf_reader_opts, unordered, false);
	r->max_bytes = SFP_OPTS_GET(opts, sfp_perf_reader_opts,
				    max_queue_bytes, 0);
	if (!r->max_bytes)
		r->max_bytes = 64ull << 20;
	*out = r;
	return 0;
}

static int finish_open(struct sfp_perf_reader *r, struct sfp_perf_reader **out)
{
	int err;

	if (r->stream) {
		uint8_t h[16];
		uint64_t hs;

		r->pbuf = malloc(65536);
		if (!r->pbuf) {
			err = -ENOMEM;
			goto fail;
		}
		err = read_full(r, h, sizeof(h));
		if (err <= 0) {
			err = bad(r, 0, "stream too short for a perf.data header");
			goto fail;
		}
		if ((err = check_magic(r, h)))
			goto fail;
		memcpy(&hs, h + 8, 8);
		if (r->swap)
			hs = sfp_bswap64(hs);
		if (hs != SFP_PERF_PIPE_HEADER_SIZE) {
			pr_warn("%s: a file-mode perf.data cannot be streamed; read it as a file",
				r->name);
			err = -EOPNOTSUPP;
			goto fail;
		}
		r->hdr.pipe_mode = true;
	} else if ((err = parse_file_header(r))) {
		goto fail;
	}
	*out = r;
	return 0;
fail:
	sfp_perf_reader__free(&r);
	return err;
}

SFP_API int sfp_perf_reader__open_mem(const void *data, size_t size,
				      const struct sfp_perf_reader_opts *opts,
				      struct sfp_perf_reader **out)
{
	struct sfp_perf_reader *r;
	int err;

	if (!out || (!data && size))
		return -EINVAL;
	if ((err = reader_new("<memory>", opts, &r)))
		return err;
	r->mem = data;
	r->mem_size = size;
	*out = NULL;
	return finish_open(r, out);
}

SFP_API int sfp_perf_reader__open_fd(int fd, const char *name,
				     const struct sfp_perf_reader_opts *opts,
				     struct sfp_perf_reader **out)
{
	struct sfp_perf_reader *r;
	struct stat st;
	int err;

	if (!out || fd < 0)
		return -EINVAL;
	if ((err = reader_new(name, opts, &r)))
		return err;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		sfp_perf_reader__free(&r);
		return err;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		r->map_len = (size_t)st.st_size;
		/*
		 * The records of a big file are read into recycled chunks
		 * (perf/chunks.h); the mapping is for the header and the
		 * feature sections.  Otherwise the mapping serves all: read
		 * ahead in one go (page faults one page at a time were a
		 * fifth of a big script run; big files: a window at a time).
		 */
		r->chunked = r->map_len >= chunked_min() &&
			     !sfp_chunks_init(&r->chunks, fd, r->map_len);
		r->windowed = !r->chunked && r->map_len > WIN;
		r->map = mmap(NULL, r->map_len, PROT_READ,
			      MAP_PRIVATE | (r->windowed || r->chunked ? 0 :
							      MAP_POPULATE),
			      fd, 0);
		if (r->map == MAP_FAILED) {
			err = -errno;
			r->map = NULL;
			sfp_perf_reader__free(&r);
			return err;
		}
		r->mem = r->map;
		r->mem_size = r->map_len;
	} else if (S_ISREG(st.st_mode)) {
		pr_warn("%s: empty file", r->name);
		sfp_perf_reader__free(&r);
		return -EBADMSG;
	} else {
		r->stream = true;
		r->fd = fd;
	}
	return finish_open(r, out);
}

SFP_API int sfp_perf_reader__open(const char *path,
				  const struct sfp_perf_reader_opts *opts,
				  struct sfp_perf_reader **out)
{
	int fd, err;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	if (!strcmp(path, "-"))
		return sfp_perf_reader__open_fd(0, "<stdin>", opts, out);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("%s: %s", path, strerror(errno));
		return err;
	}
	err = sfp_perf_reader__open_fd(fd, path, opts, out);
	if (err || !(*out)->stream)
		close(fd);	/* a mapping outlives its descriptor */
	else
		(*out)->own_fd = fd;
	return err;
}

SFP_API void sfp_perf_reader__free(struct sfp_perf_reader **rp)
{
	struct sfp_perf_reader *r;
	size_t i;

	if (!rp || !*rp)
		return;
	r = *rp;
	if (r->map)
		munmap(r->map, r->map_len);
	if (r->own_fd >= 0)
		close(r->own_fd);
	sfp_tq_fini(&r->queue);
	release_cur(r);
	sfp_chunks_fini(&r->chunks);
	for (i = 0; i < r->nr_evsels; i++) {
		free((void *)r->evsels[i]->ids);
		free(r->evsels[i]);
	}
	free(r->evsels);
	free(r->ids);
	for (i = 0; i < r->nr_strs; i++)
		free(r->strs[i]);
	free(r->strs);
	free(r->bids);
	free(r->cmdline);
	if (r->zd)
		ZSTD_freeDStream(r->zd);
	free(r->dbuf);
	free(r->pbuf);
	free(r->scratch);
	free(r->str);
	free(r->name);
	free(r);
	*rp = NULL;
}

SFP_API size_t sfp_perf_reader__nr_evsels(const struct sfp_perf_reader *r)
{
	return r ? r->nr_evsels : 0;
}

SFP_API const struct sfp_perf_evsel *
sfp_perf_reader__evsel(const struct sfp_perf_reader *r, size_t idx)
{
	return r && idx < r->nr_evsels ? r->evsels[idx] : NULL;
}

SFP_API const struct sfp_perf_header_info *
sfp_perf_reader__header(const struct sfp_perf_reader *r)
{
	return r ? &r->hdr : NULL;
}

SFP_API const struct sfp_perf_stats *
sfp_perf_reader__stats(const struct sfp_perf_reader *r)
{
	return r ? &r->stats : NULL;
}

SFP_API const char *sfp_perf_record_name(uint32_t type)
{
	static const char *const names[] = {
		[1] = "MMAP", [2] = "LOST", [3] = "COMM", [4] = "EXIT",
		[5] = "THROTTLE", [6] = "UNTHROTTLE", [7] = "FORK",
		[8] = "READ", [9] = "SAMPLE", [10] = "MMAP2", [11] = "AUX",
		[12] = "ITRACE_START", [13] = "LOST_SAMPLES", [14] = "SWITCH",
		[15] = "SWITCH_CPU_WIDE", [16] = "NAMESPACES",
		[17] = "KSYMBOL", [18] = "BPF_EVENT", [19] = "CGROUP",
		[20] = "TEXT_POKE", [21] = "AUX_OUTPUT_HW_ID",
		[22] = "CALLCHAIN_DEFERRED",
	};
	static const char *const unames[] = {
		"ATTR", "EVENT_TYPE", "TRACING_DATA", "BUILD_ID",
		"FINISHED_ROUND", "ID_INDEX", "AUXTRACE_INFO", "AUXTRACE",
		"AUXTRACE_ERROR", "THREAD_MAP", "CPU_MAP", "STAT_CONFIG",
		"STAT", "STAT_ROUND", "EVENT_UPDATE", "TIME_CONV",
		"FEATURE", "COMPRESSED", "FINISHED_INIT", "COMPRESSED2",
	};

	if (type < ARRAY_SIZE(names))
		return names[type];
	if (type >= 64 && type - 64 < ARRAY_SIZE(unames))
		return unames[type - 64];
	return NULL;
}
