/* SPDX-License-Identifier: MIT */
/*
 * gzip (RFC 1952) of whole buffers, through zlib, in one place: pprof
 * files and window bodies are written with it, pushed files and
 * profiles given to `sfprof symbolize` are read with it.
 */
#ifndef SFP_COMMON_GZIP_H
#define SFP_COMMON_GZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/internal.h"

/* Whether len bytes at p start with gzip's magic (1f 8b). */
SFP_HIDDEN bool sfp_is_gzip(const void *p, size_t len);

/* gzip len bytes of in into a new buffer.  0 or -errno. */
SFP_HIDDEN int sfp_gzip(const void *in, size_t len, void **out,
			size_t *out_len);

/* gzip len bytes of data onto out as they are compressed.  0 or -EIO. */
SFP_HIDDEN int sfp_gzip_write(FILE *out, const void *data, size_t len);

/*
 * Unpack one gzip member of len bytes into a new buffer of at most max
 * bytes.  Return: 0; -EFBIG it unpacks to more than max (a bomb is
 * stopped there); -EBADMSG not gzip, corrupt or truncated; -ENOMEM.
 */
SFP_HIDDEN int sfp_gunzip(const void *in, size_t len, size_t max, void **out,
			  size_t *out_len);

#endif /* SFP_COMMON_GZIP_H */
