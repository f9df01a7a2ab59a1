/* SPDX-License-Identifier: MIT */
/* gzip of whole buffers: files, Pyroscope's rawProfile, OTLP bodies. */
#include <stdlib.h>
#include <zlib.h>

#include "agent/sink-int.h"

int sink_gzip(const void *in, size_t len, void **out, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap;
	unsigned char *buf;
	int rc;

	*out = NULL;
	*out_len = 0;
	if (len > UINT32_MAX / 2)
		return -EFBIG;
	/* 15 + 16: zlib's way of asking for a gzip header and trailer. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8,
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
