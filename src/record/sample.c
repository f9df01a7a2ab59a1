// SPDX-License-Identifier: MIT
/*
 * The samples of our own sessions, read with the perf.data component's
 * decoder (src/perf/sample.c) rather than a second one: the ring's
 * records use the very layout perf.data files do.  This file only turns
 * the kernel's struct perf_event_attr into the decoder's attr and the
 * decoded sample into the session's view (struct sfp_record_sample: the
 * x86-64 bp, sp, ip picked out of the user registers).  The bytes come
 * from a ring shared with the kernel, so they are untrusted like any file;
 * the decoder reads them through the bounds-checked cursor.
 */
#include <errno.h>

#include "perf/perf-int.h"
#include "record/record.h"

/* What a session asks for; the rewritten samples carry these and no more
 * (struct sfp_record_sample has no room for, say, branch stacks). */
#define KNOWN_SAMPLE_BITS                                                   \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |         \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |              \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |      \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |   \
	 PERF_SAMPLE_STACK_USER)

void sfp_record_perf_attr(const struct perf_event_attr *in,
			  struct sfp_perf_attr *out)
{
	struct perf_event_attr a = *in;
	struct sfp_cursor c;

	/* Our own attr in host order is the ABI's byte layout. */
	a.size = sizeof(a);
	sfp_cursor_init(&c, &a, sizeof(a), false);
	if (sfp_perf_attr_parse(&c, sizeof(a), out))
		memset(out, 0, sizeof(*out));	/* cannot happen: size >= VER0 */
}

size_t sfp_sample_id_size(uint64_t sample_type)
{
	return sfp_perf_id_trailer_size(sample_type);
}

int sfp_sample_parse_id(uint64_t t, const void *rec, size_t size,
			struct sfp_record_sample *s)
{
	struct sfp_perf_attr a = {
		.sample_type = t,
		.flags = SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL,
	};
	struct sfp_perf_sample ps;
	int err;

	err = sfp_perf_decode_sample_id(&a, rec, size, false,
					sizeof(struct perf_event_header), &ps);
	if (err)
		return err;
	if (t & PERF_SAMPLE_TID) {
		s->pid = ps.pid;
		s->tid = ps.tid;
	}
	if (t & PERF_SAMPLE_TIME)
		s->time = ps.time;
	if (t & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER))
		s->id = ps.id;
	if (t & PERF_SAMPLE_STREAM_ID)
		s->stream_id = ps.stream_id;
	if (t & PERF_SAMPLE_CPU)
		s->cpu = ps.cpu;
	return 0;
}

int sfp_sample_parse(const struct perf_event_attr *attr, const void *rec,
		     size_t size, struct sfp_record_sample *s)
{
	const struct perf_event_header *h = rec;
	struct sfp_perf_sample ps;
	struct sfp_perf_attr a;
	size_t i = 0;
	uint64_t bit;
	int err;

	memset(s, 0, sizeof(*s));
	if (attr->sample_type & ~(uint64_t)KNOWN_SAMPLE_BITS)
		return -EOPNOTSUPP;
	if (size < sizeof(*h) || h->type != PERF_RECORD_SAMPLE ||
	    h->size != size)
		return -EBADMSG;
	sfp_record_perf_attr(attr, &a);
	/* no scratch: the arrays stay in the (8-aligned, host-order) copy */
	err = sfp_perf_decode_sample(&a, rec, size, false, &ps, NULL, 0);
	if (err) {
		pr_warn("malformed sample (%zu bytes): %s", size,
			sfp_strerror(err));
		return -EBADMSG;
	}
	s->sample_type = a.sample_type;
	s->misc = h->misc;
	s->id = ps.id;
	s->ip = ps.ip;
	s->pid = ps.pid;
	s->tid = ps.tid;
	s->time = ps.time;
	s->addr = ps.addr;
	s->stream_id = ps.stream_id;
	s->cpu = ps.cpu;
	s->period = ps.period;
	s->nr_callchain = ps.nr_ips;
	s->callchain = ps.ips;
	s->raw_size = ps.raw_size;
	s->raw = ps.raw_data;
	s->user_abi = ps.user_regs_abi;
	if (ps.user_regs_abi) {
		/* Values in ascending bit order; keep bp (6), sp (7) and
		 * ip (8) of x86-64 wherever they fall. */
		s->user_regs_mask = ps.user_regs_mask;
		s->user_regs_all = ps.user_regs;
		for (bit = 0; bit < 64; bit++) {
			if (!(ps.user_regs_mask & (1ULL << bit)))
				continue;
			if (bit >= 6 && bit <= 8)
				s->user_regs[bit - 6] = ps.user_regs[i];
			i++;
		}
	}
	if (ps.user_stack_size) {
		s->user_stack = ps.user_stack;
		s->user_stack_size = ps.user_stack_dyn_size;
	}
	return 0;
}
