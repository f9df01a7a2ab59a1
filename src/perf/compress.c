// SPDX-License-Identifier: MIT
/*
 * zstd-compressed data sections, as `perf record -z` writes them.
 *
 * The records are gathered into chunks of at most SFP_PERF_ZCHUNK bytes;
 * each chunk is fed to ONE zstd stream that lives as long as the file and
 * is flushed at the chunk's end, and the flushed bytes are cut into
 * PERF_RECORD_COMPRESSED records (type 81: the 8-byte header and the zstd
 * bytes, no padding, so the next record may start unaligned, exactly like
 * perf's), each ending at a flush (see sfp_perf_zw__flush()).  Readers keep one decompression stream for the whole file.
 *
 * perf (6.1) decompresses each COMPRESSED record into a buffer of the
 * HEADER_COMPRESSED feature's mmap_len plus what was left over from the
 * previous one, so no record may decompress to more than that: a record
 * only ever holds bytes of one chunk, and the feature declares the chunk
 * size.  A record never spans chunks because every chunk ends in a flush.
 */
#include <zstd.h>

#include "perf/perf-int.h"

/* Payload of one COMPRESSED record: the u16 size minus the header. */
#define ZREC_MAX (65535u - 8u)

struct sfp_perf_zw {
	ZSTD_CStream *cs;
	uint8_t *in;		/* records of the current chunk */
	size_t in_len;
	uint8_t *out;		/* one COMPRESSED record being filled */
	int level;
	uint64_t raw_bytes, comp_bytes;
};

int sfp_perf_zw__new(int level, struct sfp_perf_zw **out)
{
	struct sfp_perf_zw *z;
	size_t ret;

	*out = NULL;
	if (level < 1 || level > ZSTD_maxCLevel())
		return -EINVAL;
	z = calloc(1, sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->level = level;
	z->cs = ZSTD_createCStream();
	z->in = malloc(SFP_PERF_ZCHUNK);
	z->out = malloc(8 + ZREC_MAX);
	if (!z->cs || !z->in || !z->out) {
		sfp_perf_zw__free(&z);
		return -ENOMEM;
	}
	ret = ZSTD_initCStream(z->cs, level);
	if (ZSTD_isError(ret)) {
		pr_warn("zstd: %s", ZSTD_getErrorName(ret));
		sfp_perf_zw__free(&z);
		return -EINVAL;
	}
	*out = z;
	return 0;
}

void sfp_perf_zw__free(struct sfp_perf_zw **zp)
{
	struct sfp_perf_zw *z = *zp;

	if (!z)
		return;
	ZSTD_freeCStream(z->cs);
	free(z->in);
	free(z->out);
	free(z);
	*zp = NULL;
}

/* Hand the filled COMPRESSED record to the writer and start the next. */
static int emit_rec(struct sfp_perf_zw *z, size_t payload,
		    sfp_perf_zw_emit_fn emit, void *ctx)
{
	uint32_t type = SFP_PERF_RECORD_COMPRESSED;
	uint16_t misc = 0, size = (uint16_t)(8 + payload);

	memcpy(z->out, &type, 4);
	memcpy(z->out + 4, &misc, 2);
	memcpy(z->out + 6, &size, 2);
	z->comp_bytes += size;
	return emit(ctx, z->out, size);
}

/*
 * Every COMPRESSED record ends at a flush: perf 6.1 takes a record that
 * decompresses to nothing (a zstd block cut in two) for an error.  So the
 * chunk goes in as pieces small enough that even incompressible bytes fit
 * the room left in the record (ZSTD_compressBound: n + n/256 + at most 64
 * for a block under 128 KiB), each piece flushed; a record goes out when
 * the next piece would not fit, and at the chunk's end.
 */
int sfp_perf_zw__flush(struct sfp_perf_zw *z, sfp_perf_zw_emit_fn emit,
		       void *ctx)
{
	size_t pos = 0, used = 0;
	int err;

	while (pos < z->in_len) {
		size_t room = ZREC_MAX - used, piece, left;
		ZSTD_inBuffer in;
		ZSTD_outBuffer out;

		if (room < 4096) {
			err = emit_rec(z, used, emit, ctx);
			if (err)
				return err;
			used = 0;
			continue;
		}
		piece = room - 128 - (room >> 7);
		if (piece > z->in_len - pos)
			piece = z->in_len - pos;
		in = (ZSTD_inBuffer){ z->in + pos, piece, 0 };
		out = (ZSTD_outBuffer){ z->out + 8, ZREC_MAX, used };
		left = ZSTD_compressStream2(z->cs, &out, &in, ZSTD_e_flush);
		if (ZSTD_isError(left) || left || in.pos != in.size) {
			/* cannot happen with room >= the bound */
			pr_warn("zstd: %s", ZSTD_isError(left) ?
				ZSTD_getErrorName(left) : "flush did not fit");
			return -EIO;
		}
		used = out.pos;
		pos += piece;
	}
	z->in_len = 0;
	return used ? emit_rec(z, used, emit, ctx) : 0;
}

int sfp_perf_zw__add(struct sfp_perf_zw *z, const void *rec, size_t size,
		     sfp_perf_zw_emit_fn emit, void *ctx)
{
	int err;

	if (size > SFP_PERF_ZCHUNK)
		return -EINVAL;
	if (z->in_len + size > SFP_PERF_ZCHUNK) {
		err = sfp_perf_zw__flush(z, emit, ctx);
		if (err)
			return err;
	}
	memcpy(z->in + z->in_len, rec, size);
	z->in_len += size;
	z->raw_bytes += size;
	return 0;
}

uint32_t sfp_perf_zw__ratio(const struct sfp_perf_zw *z)
{
	/* perf stores the ratio rounded to an integer (comp_ratio). */
	if (!z->comp_bytes)
		return 1;
	return (uint32_t)((z->raw_bytes + z->comp_bytes / 2) / z->comp_bytes);
}

int sfp_perf_zw__level(const struct sfp_perf_zw *z)
{
	return z->level;
}
