/* SPDX-License-Identifier: MIT */
/*
 * Bounds-checked reading of untrusted bytes.
 *
 * A cursor is (base, pos, end) plus a byte-order flag.  Every read checks
 * the remaining length first and fails with -EBADMSG without moving; values
 * are copied with memcpy, so unaligned data (SFrame, DWARF, perf.data) is
 * never loaded through a misaligned pointer.  Positions are reported as
 * offsets from base, which is what error messages print.
 */
#ifndef SFP_CURSOR_H
#define SFP_CURSOR_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sfp_cursor {
	const uint8_t *base;	/* start of the whole buffer (for offsets) */
	const uint8_t *pos;
	const uint8_t *end;
	bool swap;		/* data is in the other byte order */
};

static inline void sfp_cursor_init(struct sfp_cursor *c, const void *data,
				   size_t size, bool swap)
{
	c->base = data;
	c->pos = data;
	/* (an empty section's data may be NULL: no arithmetic on it) */
	c->end = size ? c->base + size : c->base;
	c->swap = swap;
}

static inline size_t sfp_cursor_left(const struct sfp_cursor *c)
{
	return (size_t)(c->end - c->pos);
}

static inline size_t sfp_cursor_off(const struct sfp_cursor *c)
{
	return (size_t)(c->pos - c->base);
}

/*
 * Place the cursor at offset off of the buffer (relative to base).
 * Return: 0, or -EBADMSG when off lies beyond the end.
 */
static inline int sfp_cursor_seek(struct sfp_cursor *c, uint64_t off)
{
	if (off > (uint64_t)(c->end - c->base))
		return -EBADMSG;
	c->pos = c->base + off;
	return 0;
}

static inline int sfp_cursor_skip(struct sfp_cursor *c, size_t n)
{
	if (n > sfp_cursor_left(c))
		return -EBADMSG;
	c->pos += n;
	return 0;
}

static inline int sfp_cursor_bytes(struct sfp_cursor *c, void *dst, size_t n)
{
	if (n > sfp_cursor_left(c))
		return -EBADMSG;
	memcpy(dst, c->pos, n);
	c->pos += n;
	return 0;
}

static inline int sfp_cursor_u8(struct sfp_cursor *c, uint8_t *v)
{
	if (c->pos >= c->end)
		return -EBADMSG;
	*v = *c->pos++;
	return 0;
}

static inline int sfp_cursor_u16(struct sfp_cursor *c, uint16_t *v)
{
	uint16_t x;

	if (sizeof(x) > sfp_cursor_left(c))
		return -EBADMSG;
	memcpy(&x, c->pos, sizeof(x));
	c->pos += sizeof(x);
	*v = c->swap ? __builtin_bswap16(x) : x;
	return 0;
}

static inline int sfp_cursor_u32(struct sfp_cursor *c, uint32_t *v)
{
	uint32_t x;

	if (sizeof(x) > sfp_cursor_left(c))
		return -EBADMSG;
	memcpy(&x, c->pos, sizeof(x));
	c->pos += sizeof(x);
	*v = c->swap ? __builtin_bswap32(x) : x;
	return 0;
}

static inline int sfp_cursor_u64(struct sfp_cursor *c, uint64_t *v)
{
	uint64_t x;

	if (sizeof(x) > sfp_cursor_left(c))
		return -EBADMSG;
	memcpy(&x, c->pos, sizeof(x));
	c->pos += sizeof(x);
	*v = c->swap ? __builtin_bswap64(x) : x;
	return 0;
}

static inline int sfp_cursor_i8(struct sfp_cursor *c, int8_t *v)
{
	return sfp_cursor_u8(c, (uint8_t *)v);
}

static inline int sfp_cursor_i16(struct sfp_cursor *c, int16_t *v)
{
	return sfp_cursor_u16(c, (uint16_t *)v);
}

static inline int sfp_cursor_i32(struct sfp_cursor *c, int32_t *v)
{
	return sfp_cursor_u32(c, (uint32_t *)v);
}

static inline int sfp_cursor_i64(struct sfp_cursor *c, int64_t *v)
{
	return sfp_cursor_u64(c, (uint64_t *)v);
}

/* Unsigned LEB128, at most 10 bytes; overlong values fail. */
static inline int sfp_cursor_uleb(struct sfp_cursor *c, uint64_t *v)
{
	uint64_t r = 0;
	unsigned int shift = 0;

	for (;;) {
		uint8_t b;

		if (c->pos >= c->end)
			return -EBADMSG;
		b = *c->pos++;
		if (shift >= 64 || (shift == 63 && (b & 0x7e)))
			return -EBADMSG;
		r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	*v = r;
	return 0;
}

/* Signed LEB128, at most 10 bytes. */
static inline int sfp_cursor_sleb(struct sfp_cursor *c, int64_t *v)
{
	uint64_t r = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (c->pos >= c->end || shift >= 64)
			return -EBADMSG;
		b = *c->pos++;
		r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << shift;
	*v = (int64_t)r;
	return 0;
}

#endif /* SFP_CURSOR_H */
