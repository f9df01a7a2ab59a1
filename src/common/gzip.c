// SPDX-License-Identifier: MIT
/* gzip of whole buffers (gzip.h).  windowBits 15 + 16 asks zlib for the
 * gzip wrapper rather than zlib's own. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "common/gzip.h"

#define GZIP_WBITS (15 + 16)

bool sfp_is_gzip(const void *p, size_t len)
{
	const unsigned char *b = p;

	return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

int sfp_gzip(const void *in, size_t len, void **out, size_t *out_len)
{
	z_stream z = { 0 };
	unsigned char *buf;
	size_t cap;
	int rc;

	*out = NULL;
	*out_len = 0;
	if (len > UINT32_MAX / 2)
		return -EFBIG;
	if (deflateInit2(&z, 6, Z_DEFLATED, GZIP_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, (uLong)len) + 32;
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	*out_len = cap - z.avail_out;
	return 0;
}

int sfp_gzip_write(FILE *out, const void *data, size_t len)
{
	unsigned char obuf[65536];
	z_stream zs;
	int err = 0, zr = Z_OK;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 6, Z_DEFLATED, GZIP_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)data;
	do {
		/* avail_in is 32 bits: feed a huge buffer in slices */
		size_t chunk = len > (1u << 30) ? (1u << 30) : len;
		int flush = chunk == len ? Z_FINISH : Z_NO_FLUSH;

		zs.avail_in = (uInt)chunk;
		len -= chunk;
		do {
			size_t have;

			zs.next_out = obuf;
			zs.avail_out = sizeof(obuf);
			zr = deflate(&zs, flush);
			if (zr == Z_STREAM_ERROR) {
				err = -EIO;
				goto out;
			}
			have = sizeof(obuf) - zs.avail_out;
			if (have && fwrite(obuf, 1, have, out) != have) {
				err = -EIO;
				goto out;
			}
		} while (zs.avail_out == 0);
	} while (len);
	if (zr != Z_STREAM_END)
		err = -EIO;
out:
	deflateEnd(&zs);
	return err;
}

int sfp_gunzip(const void *in, size_t len, size_t max, void **out,
	       size_t *out_len)
{
	z_stream z = { 0 };
	unsigned char *buf = NULL;
	size_t cap = 0, n = 0;
	int rc, err = 0;

	*out = NULL;
	*out_len = 0;
	if (!sfp_is_gzip(in, len) || len > UINT32_MAX)
		return -EBADMSG;
	if (inflateInit2(&z, GZIP_WBITS) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	for (;;) {
		if (n == cap) {
			size_t nc = cap ? cap * 2 : len * 4 + 4096;
			unsigned char *nb;

			if (cap >= max) {
				err = -EFBIG;
				break;
			}
			if (nc > max)
				nc = max + 1;	/* one byte more tells a bomb */
			if (!(nb = realloc(buf, nc))) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap = nc;
		}
		z.next_out = buf + n;
		z.avail_out = (uInt)(cap - n > UINT32_MAX ? UINT32_MAX : cap - n);
		rc = inflate(&z, Z_NO_FLUSH);
		n = (size_t)(z.next_out - buf);
		if (n > max) {
			err = -EFBIG;
			break;
		}
		if (rc == Z_STREAM_END)
			break;
		if (rc == Z_BUF_ERROR && !z.avail_in) {
			err = -EBADMSG;		/* truncated */
			break;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			err = rc == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
			break;
		}
	}
	inflateEnd(&z);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*out_len = n;
	return 0;
}
