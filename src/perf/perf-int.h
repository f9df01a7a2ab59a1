/* SPDX-License-Identifier: MIT */
/*
 * Internals of the perf.data component shared by its files (reader,
 * sample decoder, writer) and by the stitcher and the CLI.
 */
#ifndef SFP_PERF_INT_H
#define SFP_PERF_INT_H

#include <string.h>

#include <sfprof/perf.h>

#include "common/cursor.h"
#include "common/internal.h"

/* "PERFILE2" read as a little-endian u64. */
#define SFP_PERF_MAGIC2 0x32454c4946524550ull
#define SFP_PERF_FILE_HEADER_SIZE 104
#define SFP_PERF_PIPE_HEADER_SIZE 16
/* perf pads strings in feature sections and build-id names to this. */
#define SFP_PERF_NAME_ALIGN 64
/* HEADER_BUILD_ID's misc: the size byte is valid. */
#define SFP_PERF_MISC_BUILD_ID_SIZE (1u << 15)

/*
 * The sample decoder: one, for the files' samples and the rings' alike
 * (sfp_perf_decode_sample() is its public entry, the record/ component
 * reads its sessions' samples through it).  The body of a sample at the
 * cursor, which stands after the 8-byte header (the caller sets s->misc
 * from that header after the call).  Arrays are copied into scratch, or
 * point into the record when scratch is NULL (which must then be host
 * order and 8-aligned) or when in_place is set and this array is host
 * order and 8-aligned: then the record must live as long as the sample
 * is used.
 */
SFP_HIDDEN int sfp_perf_decode_sample_body(const struct sfp_perf_attr *attr,
					   struct sfp_cursor *c,
					   struct sfp_perf_sample *s,
					   uint64_t *scratch,
					   size_t scratch_len, bool in_place);

/*
 * The decoder's specialisation for a sample_type of only the fixed-size
 * fields and a callchain (a system-wide -g file): where those fields lie,
 * at offsets known once per event, so that sfp_perf_decode_sample_fixed()
 * reads a sample without the general decoder's cursor, its test a bit
 * and its zeroing of every field (a tenth of a report of such a file).
 * ok: the type allows it.
 */
struct sfp_perf_sample_layout {
	bool ok, chain, defer;
	uint8_t head;		/* bytes of the fixed fields */
	/* offsets after the record header; -1: not in the type */
	int8_t identifier, ip, tid, time, addr, id, stream_id, cpu, period;
};

SFP_HIDDEN void sfp_perf_sample_layout(const struct sfp_perf_attr *attr,
				       struct sfp_perf_sample_layout *l);

static inline uint64_t sfp_perf_field64(const uint8_t *b, int8_t off)
{
	uint64_t v = 0;

	if (off >= 0)
		memcpy(&v, b + off, 8);
	return v;
}

/*
 * Sample record rec (size bytes, host order, 8-aligned) decoded through
 * layout l into s, as sfp_perf_decode_sample() would with in_place: the
 * chain points into the record.  Only the layout's fields (and present,
 * misc, the chain, the deferred marker) are written: every other field of
 * s must be zero already.  Its reads stay within size as the cursor's
 * would: the fixed fields and the chain's length are checked against it
 * first.  False, with s partly written: the record does not fit its
 * layout (the general decoder says what is wrong).
 */
static inline bool
sfp_perf_decode_sample_fixed(const struct sfp_perf_sample_layout *l,
			     uint64_t sample_type, const uint8_t *rec,
			     size_t size, struct sfp_perf_sample *s)
{
	const uint8_t *b = rec + 8;
	uint64_t nr = 0, left;
	uint32_t two[2] = { 0, 0 };

	if (size < 8u + l->head + (l->chain ? 8u : 0u))
		return false;
	left = size - 8 - l->head;
	s->present = sample_type & (SFP_PERF_SAMPLE_MAX - 1);
	memcpy(&s->misc, rec + 4, sizeof(s->misc));	/* header.misc */
	/* as the general parser: an ID after an IDENTIFIER wins */
	s->id = l->id >= 0 ? sfp_perf_field64(b, l->id) :
			     sfp_perf_field64(b, l->identifier);
	s->ip = sfp_perf_field64(b, l->ip);
	if (l->tid >= 0)
		memcpy(two, b + l->tid, 8);
	s->pid = two[0];
	s->tid = two[1];
	s->time = sfp_perf_field64(b, l->time);
	s->addr = sfp_perf_field64(b, l->addr);
	s->stream_id = sfp_perf_field64(b, l->stream_id);
	two[0] = 0;
	if (l->cpu >= 0)
		memcpy(two, b + l->cpu, 4);
	s->cpu = two[0];
	s->period = sfp_perf_field64(b, l->period);
	s->ips = NULL;
	s->deferred = false;
	s->deferred_cookie = 0;
	if (l->chain) {
		memcpy(&nr, b + l->head, 8);
		if (nr > (left - 8) / 8)
			return false;
		if (nr)
			s->ips = (const uint64_t *)(const void *)(b + l->head + 8);
		if (l->defer && nr >= 2 &&
		    s->ips[nr - 2] == SFP_PERF_CONTEXT_USER_DEFERRED) {
			s->deferred = true;
			s->deferred_cookie = s->ips[nr - 1];
		}
	}
	s->nr_ips = nr;
	return true;
}

/* Size of the sample_id trailer for a sample_type. */
SFP_HIDDEN size_t sfp_perf_id_trailer_size(uint64_t sample_type);

/* Files of min bytes and more are read into chunks (0: the reader's own
 * choice): the tests' way to the mapped windows on any kernel. */
SFP_HIDDEN void sfp_perf_reader_force_chunked_min(uint64_t min);

/*
 * Decode the sample_id trailer of a non-sample record (nothing unless the
 * attr has sample_id_all).  body_min: bytes of the record that precede any
 * trailer (header + fixed fields).  Return: 0 or -EBADMSG.
 */
SFP_HIDDEN int sfp_perf_decode_sample_id(const struct sfp_perf_attr *attr,
					 const uint8_t *rec, size_t size,
					 bool swap, size_t body_min,
					 struct sfp_perf_sample *s);

/*
 * Decode the body of one record (record.c) into ev, whose type, misc and
 * size the caller has set from the header (in the file's byte order).
 * Samples go through e's attr; other records get their fixed fields and
 * their sample_id trailer.  Arrays land in scratch (at least size / 8
 * entries), strings in str (at least size + 1 bytes), NUL-terminated.
 * Return: 0 or -EBADMSG.
 */
SFP_HIDDEN int sfp_perf_record_decode(const struct sfp_perf_evsel *e,
				      const uint8_t *rec, size_t size,
				      bool swap, struct sfp_perf_event *ev,
				      uint64_t *scratch, size_t scratch_len,
				      char *str, bool in_place);

/*
 * Decode a perf_event_attr of `avail` bytes at the cursor (its own size
 * field says how much of it there is; the cursor moves past that much).
 * Return: 0 or -EBADMSG.
 */
SFP_HIDDEN int sfp_perf_attr_parse(struct sfp_cursor *c, size_t avail,
				   struct sfp_perf_attr *attr);

/* Encode an attr as the 136-byte v8 layout in host order. */
SFP_HIDDEN void sfp_perf_attr_encode(const struct sfp_perf_attr *attr,
				     uint8_t out[SFP_PERF_ATTR_SIZE_VER8]);

/* --- compress.c: zstd-compressed data (PERF_RECORD_COMPRESSED) --- */

/* Records per compressed chunk, and the mmap_len HEADER_COMPRESSED says. */
#define SFP_PERF_ZCHUNK (256u << 10)

struct sfp_perf_zw;
typedef int (*sfp_perf_zw_emit_fn)(void *ctx, const void *rec, size_t size);

/* A compressor at zstd level (1..max).  Return: 0, -EINVAL, -ENOMEM. */
SFP_HIDDEN int sfp_perf_zw__new(int level, struct sfp_perf_zw **z);
SFP_HIDDEN void sfp_perf_zw__free(struct sfp_perf_zw **z);
/* Queue one record; full chunks go out through emit as COMPRESSED
 * records.  Return: 0, -EIO (zstd failed) or what emit returned. */
SFP_HIDDEN int sfp_perf_zw__add(struct sfp_perf_zw *z, const void *rec,
				size_t size, sfp_perf_zw_emit_fn emit,
				void *ctx);
/* Compress and emit what is queued. */
SFP_HIDDEN int sfp_perf_zw__flush(struct sfp_perf_zw *z,
				  sfp_perf_zw_emit_fn emit, void *ctx);
/* For HEADER_COMPRESSED: raw/compressed bytes (rounded), the level. */
SFP_HIDDEN uint32_t sfp_perf_zw__ratio(const struct sfp_perf_zw *z);
SFP_HIDDEN int sfp_perf_zw__level(const struct sfp_perf_zw *z);

#endif /* SFP_PERF_INT_H */
