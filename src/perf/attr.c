// SPDX-License-Identifier: MIT
/*
 * perf_event_attr in files: any size from VER0 (64 bytes) on, either byte
 * order.  The flags word is a C bitfield, and compilers lay bitfields out
 * from the other end on big-endian machines, so a foreign-endian file has
 * its flag bits mirrored inside each byte rather than its bytes swapped;
 * perf undoes that with a per-byte bit reversal, and so do we.
 */
#include "perf/perf-int.h"

static uint8_t rev8(uint8_t b)
{
	b = (uint8_t)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (uint8_t)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	b = (uint8_t)((b & 0xaa) >> 1 | (b & 0x55) << 1);
	return b;
}

SFP_HIDDEN int sfp_perf_attr_parse(struct sfp_cursor *c, size_t avail,
				   struct sfp_perf_attr *attr)
{
	uint8_t buf[SFP_PERF_ATTR_SIZE_VER8] = { 0 };
	struct sfp_cursor b;
	uint32_t size;
	uint8_t fl[8];
	size_t n;
	int i;

	if (avail < SFP_PERF_ATTR_SIZE_VER0 || sfp_cursor_left(c) < avail)
		return -EBADMSG;
	memcpy(&size, c->pos + 4, 4);
	if (c->swap)
		size = sfp_bswap32(size);
	if (!size)
		size = SFP_PERF_ATTR_SIZE_VER0;	/* perf's rule for size 0 */
	if (size < SFP_PERF_ATTR_SIZE_VER0 || size > avail)
		return -EBADMSG;
	/* A newer attr's tail is ignored; an older one's is zero. */
	n = size < sizeof(buf) ? size : sizeof(buf);
	memcpy(buf, c->pos, n);
	c->pos += size;

	sfp_cursor_init(&b, buf, sizeof(buf), c->swap);
	memset(attr, 0, sizeof(*attr));
	sfp_cursor_u32(&b, &attr->type);
	sfp_cursor_u32(&b, &attr->size);
	attr->size = size;
	sfp_cursor_u64(&b, &attr->config);
	sfp_cursor_u64(&b, &attr->sample_period);
	sfp_cursor_u64(&b, &attr->sample_type);
	sfp_cursor_u64(&b, &attr->read_format);
	sfp_cursor_bytes(&b, fl, 8);
	if (c->swap)
		for (i = 0; i < 8; i++)
			fl[i] = rev8(fl[i]);
	attr->flags = 0;
	for (i = 0; i < 8; i++)	/* bit 0 of byte 0 is `disabled` */
		attr->flags |= (uint64_t)fl[i] << (8 * i);
	sfp_cursor_u32(&b, &attr->wakeup_events);
	sfp_cursor_u32(&b, &attr->bp_type);
	sfp_cursor_u64(&b, &attr->config1);
	sfp_cursor_u64(&b, &attr->config2);
	sfp_cursor_u64(&b, &attr->branch_sample_type);
	sfp_cursor_u64(&b, &attr->sample_regs_user);
	sfp_cursor_u32(&b, &attr->sample_stack_user);
	sfp_cursor_i32(&b, &attr->clockid);
	sfp_cursor_u64(&b, &attr->sample_regs_intr);
	sfp_cursor_u32(&b, &attr->aux_watermark);
	sfp_cursor_u16(&b, &attr->sample_max_stack);
	sfp_cursor_u16(&b, &attr->reserved_2);
	sfp_cursor_u32(&b, &attr->aux_sample_size);
	sfp_cursor_u32(&b, &attr->aux_action);
	sfp_cursor_u64(&b, &attr->sig_data);
	sfp_cursor_u64(&b, &attr->config3);
	return 0;
}

#define PUT(off, v) memcpy(out + (off), &(v), sizeof(v))

SFP_HIDDEN void sfp_perf_attr_encode(const struct sfp_perf_attr *a,
				     uint8_t out[SFP_PERF_ATTR_SIZE_VER8])
{
	uint32_t size = a->size ? a->size : SFP_PERF_ATTR_SIZE_VER8;
	uint8_t fl[8];
	int i;

	memset(out, 0, SFP_PERF_ATTR_SIZE_VER8);
	PUT(0, a->type);
	PUT(4, size);
	PUT(8, a->config);
	PUT(16, a->sample_period);
	PUT(24, a->sample_type);
	PUT(32, a->read_format);
	for (i = 0; i < 8; i++)
		fl[i] = (uint8_t)(a->flags >> (8 * i));
	memcpy(out + 40, fl, 8);
	PUT(48, a->wakeup_events);
	PUT(52, a->bp_type);
	PUT(56, a->config1);
	PUT(64, a->config2);
	PUT(72, a->branch_sample_type);
	PUT(80, a->sample_regs_user);
	PUT(88, a->sample_stack_user);
	PUT(92, a->clockid);
	PUT(96, a->sample_regs_intr);
	PUT(104, a->aux_watermark);
	PUT(108, a->sample_max_stack);
	PUT(110, a->reserved_2);
	PUT(112, a->aux_sample_size);
	PUT(116, a->aux_action);
	PUT(120, a->sig_data);
	PUT(128, a->config3);
}
