// SPDX-License-Identifier: MIT
/*
 * Protocol-buffers wire encoding (see pb.h).  The encoding rules: every
 * field is a key varint (field number << 3 | wire type) followed by a
 * varint, a fixed 4/8 bytes, or a varint length and that many bytes;
 * negative int64 values are varints of their two's complement (10 bytes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/pb.h"

void pb_buf__free(struct pb_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static bool pb_reserve(struct pb_buf *b, size_t more)
{
	size_t cap;
	uint8_t *d;

	if (b->err)
		return false;
	if (more <= b->cap - b->len)
		return true;
	if (more > SIZE_MAX / 2 - b->len) {
		b->err = -ENOMEM;
		return false;
	}
	cap = b->cap ? b->cap : 4096;
	while (cap - b->len < more)
		cap *= 2;
	d = realloc(b->data, cap);
	if (!d) {
		b->err = -ENOMEM;
		return false;
	}
	b->data = d;
	b->cap = cap;
	return true;
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p = (uint8_t)v;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
	size_t n = varint_size(v);

	if (!pb_reserve(b, n))
		return;
	put_varint(b->data + b->len, v);
	b->len += n;
}

void pb_key(struct pb_buf *b, uint32_t field, enum pb_wire wt)
{
	pb_varint(b, ((uint64_t)field << 3) | (uint64_t)wt);
}

void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, PB_VARINT);
	pb_varint(b, v);
}

void pb_int(struct pb_buf *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

void pb_bool(struct pb_buf *b, uint32_t field, bool v)
{
	pb_uint(b, field, v ? 1 : 0);
}

void pb_fixed64(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, PB_I64);
	if (!pb_reserve(b, 8))
		return;
	for (int i = 0; i < 8; i++)
		b->data[b->len++] = (uint8_t)(v >> (8 * i));
}

void pb_bytes_always(struct pb_buf *b, uint32_t field, const void *p,
		     size_t n)
{
	pb_key(b, field, PB_LEN);
	pb_varint(b, n);
	if (!n || !pb_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void pb_string_always(struct pb_buf *b, uint32_t field, const char *s)
{
	pb_bytes_always(b, field, s ? s : "", s ? strlen(s) : 0);
}

void pb_packed_uint(struct pb_buf *b, uint32_t field, const uint64_t *v,
		    size_t n)
{
	size_t i, sz = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		sz += varint_size(v[i]);
	pb_key(b, field, PB_LEN);
	pb_varint(b, sz);
	if (!pb_reserve(b, sz))
		return;
	for (i = 0; i < n; i++) {
		put_varint(b->data + b->len, v[i]);
		b->len += varint_size(v[i]);
	}
}

void pb_packed_int(struct pb_buf *b, uint32_t field, const int64_t *v,
		   size_t n)
{
	/* same bits on the wire: int64 varints are two's complement */
	pb_packed_uint(b, field, (const uint64_t *)v, n);
}

void pb_begin(struct pb_buf *b, uint32_t field)
{
	if (b->err)
		return;
	if (SFP_NEVER(b->depth >= PB_MAX_NEST)) {
		b->err = -EINVAL;
		return;
	}
	pb_key(b, field, PB_LEN);
	b->nest[b->depth++] = b->len;
}

void pb_end(struct pb_buf *b)
{
	size_t start, n, k;

	if (b->err)
		return;
	if (SFP_NEVER(!b->depth)) {
		b->err = -EINVAL;
		return;
	}
	start = b->nest[--b->depth];
	n = b->len - start;
	k = varint_size(n);
	if (!pb_reserve(b, k))
		return;
	memmove(b->data + start + k, b->data + start, n);
	put_varint(b->data + start, n);
	b->len += k;
}
