// SPDX-License-Identifier: MIT
/*
 * Parsing the records of our own sessions: PERF_RECORD_SAMPLE for the
 * sample_type bits we ask for, and the sample_id_all trailer of the other
 * records.  The bytes come from a ring shared with the kernel, so they are
 * read with the bounds-checked cursor like any other untrusted input.
 */
#include <errno.h>

#include "common/cursor.h"
#include "record/record.h"

/* The sample_type bits this parser understands. */
#define KNOWN_SAMPLE_BITS                                                   \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |         \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |              \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |      \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |   \
	 PERF_SAMPLE_STACK_USER)

/* Callchains longer than this are corrupt (the kernel caps at 127 + marks). */
#define MAX_CALLCHAIN 4096

size_t sfp_sample_id_size(uint64_t t)
{
	size_t n = 0;

	n += (t & PERF_SAMPLE_TID) ? 8 : 0;
	n += (t & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (t & PERF_SAMPLE_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

int sfp_sample_parse_id(uint64_t t, const void *rec, size_t size,
			struct sfp_record_sample *s)
{
	size_t n = sfp_sample_id_size(t);
	struct sfp_cursor c;
	uint64_t v;

	if (size < sizeof(struct perf_event_header) + n)
		return -EBADMSG;
	sfp_cursor_init(&c, rec, size, false);
	if (sfp_cursor_seek(&c, size - n))
		return -EBADMSG;
	if (t & PERF_SAMPLE_TID) {
		if (sfp_cursor_u32(&c, &s->pid) || sfp_cursor_u32(&c, &s->tid))
			return -EBADMSG;
	}
	if ((t & PERF_SAMPLE_TIME) && sfp_cursor_u64(&c, &s->time))
		return -EBADMSG;
	if ((t & PERF_SAMPLE_ID) && sfp_cursor_u64(&c, &s->id))
		return -EBADMSG;
	if ((t & PERF_SAMPLE_STREAM_ID) && sfp_cursor_u64(&c, &s->stream_id))
		return -EBADMSG;
	if (t & PERF_SAMPLE_CPU) {
		if (sfp_cursor_u64(&c, &v))
			return -EBADMSG;
		s->cpu = (uint32_t)v;
	}
	if ((t & PERF_SAMPLE_IDENTIFIER) && sfp_cursor_u64(&c, &s->id))
		return -EBADMSG;
	return 0;
}

int sfp_sample_parse(const struct perf_event_attr *attr, const void *rec,
		     size_t size, struct sfp_record_sample *s)
{
	uint64_t t = attr->sample_type, v;
	struct perf_event_header h;
	struct sfp_cursor c;

	memset(s, 0, sizeof(*s));
	if (t & ~KNOWN_SAMPLE_BITS)
		return -EOPNOTSUPP;
	sfp_cursor_init(&c, rec, size, false);
	if (sfp_cursor_bytes(&c, &h, sizeof(h)) ||
	    h.type != PERF_RECORD_SAMPLE || h.size != size)
		return -EBADMSG;
	s->sample_type = t;
	s->misc = h.misc;
	if ((t & PERF_SAMPLE_IDENTIFIER) && sfp_cursor_u64(&c, &s->id))
		goto bad;
	if ((t & PERF_SAMPLE_IP) && sfp_cursor_u64(&c, &s->ip))
		goto bad;
	if ((t & PERF_SAMPLE_TID) &&
	    (sfp_cursor_u32(&c, &s->pid) || sfp_cursor_u32(&c, &s->tid)))
		goto bad;
	if ((t & PERF_SAMPLE_TIME) && sfp_cursor_u64(&c, &s->time))
		goto bad;
	if ((t & PERF_SAMPLE_ADDR) && sfp_cursor_u64(&c, &s->addr))
		goto bad;
	if ((t & PERF_SAMPLE_ID) && sfp_cursor_u64(&c, &s->id))
		goto bad;
	if ((t & PERF_SAMPLE_STREAM_ID) && sfp_cursor_u64(&c, &s->stream_id))
		goto bad;
	if (t & PERF_SAMPLE_CPU) {
		if (sfp_cursor_u64(&c, &v))
			goto bad;
		s->cpu = (uint32_t)v;
	}
	if ((t & PERF_SAMPLE_PERIOD) && sfp_cursor_u64(&c, &s->period))
		goto bad;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (sfp_cursor_u64(&c, &s->nr_callchain) ||
		    s->nr_callchain > MAX_CALLCHAIN ||
		    s->nr_callchain * 8 > sfp_cursor_left(&c))
			goto bad;
		/* The record is an 8-aligned copy: the array is aligned. */
		s->callchain = (const uint64_t *)c.pos;
		c.pos += s->nr_callchain * 8;
	}
	if (t & PERF_SAMPLE_RAW) {
		if (sfp_cursor_u32(&c, &s->raw_size) ||
		    s->raw_size > sfp_cursor_left(&c))
			goto bad;
		s->raw = c.pos;
		c.pos += s->raw_size;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		if (sfp_cursor_u64(&c, &s->user_abi))
			goto bad;
		if (s->user_abi) {
			uint64_t mask = attr->sample_regs_user;
			int bit;

			/* Values come in ascending bit order; keep bp (6),
			 * sp (7) and ip (8) of x86-64 wherever they fall. */
			s->user_regs_mask = mask;
			for (bit = 0; bit < 64; bit++) {
				if (!(mask & (1ULL << bit)))
					continue;
				if (sfp_cursor_u64(&c, &v))
					goto bad;
				if (bit >= 6 && bit <= 8)
					s->user_regs[bit - 6] = v;
			}
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		uint64_t sz;

		if (sfp_cursor_u64(&c, &sz))
			goto bad;
		if (sz) {
			if (sz > sfp_cursor_left(&c))
				goto bad;
			s->user_stack = c.pos;
			c.pos += sz;
			if (sfp_cursor_u64(&c, &s->user_stack_size) ||
			    s->user_stack_size > sz)
				goto bad;
		}
	}
	return 0;
bad:
	pr_warn("malformed sample (%zu bytes) at offset %zu", size,
		sfp_cursor_off(&c));
	return -EBADMSG;
}
