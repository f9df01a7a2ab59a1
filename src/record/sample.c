// SPDX-License-Identifier: MIT
/*
 * The samples of our own sessions, read with the perf.data component's
 * decoder (src/perf/sample.c) into its struct sfp_perf_sample rather than
 * with a second decoder or into a second struct: the ring's records use
 * the very layout perf.data files do.  This file only turns the kernel's
 * struct perf_event_attr into the decoder's attr and refuses what a
 * session never asks for.  The bytes come from a ring shared with the
 * kernel, so they are untrusted like any file; the decoder reads them
 * through the bounds-checked cursor.
 */
#include <errno.h>

#include "perf/perf-int.h"
#include "record/record.h"

/* What a session asks for; the rewritten samples carry these and no more
 * (record/encode.c writes no branch stacks, say). */
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

int sfp_record_decode_sample_id(uint64_t t, const void *rec, size_t size,
				struct sfp_perf_sample *s)
{
	struct sfp_perf_attr a = {
		.sample_type = t,
		.flags = SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL,
	};

	return sfp_perf_decode_sample_id(&a, rec, size, false,
					 sizeof(struct perf_event_header), s);
}

int sfp_record_decode_sample_pa(const struct sfp_perf_attr *a,
				const void *rec, size_t size,
				struct sfp_perf_sample *s)
{
	const struct perf_event_header *h = rec;
	int err;

	/* (s is zeroed on a refusal only: the decoder zeroes it itself) */
	if (a->sample_type & ~(uint64_t)KNOWN_SAMPLE_BITS) {
		memset(s, 0, sizeof(*s));
		return -EOPNOTSUPP;
	}
	if (size < sizeof(*h) || h->type != PERF_RECORD_SAMPLE ||
	    h->size != size) {
		memset(s, 0, sizeof(*s));
		return -EBADMSG;
	}
	/* no scratch: the arrays stay in the (8-aligned, host-order) copy */
	err = sfp_perf_decode_sample(a, rec, size, false, s, NULL, 0);
	if (err) {
		pr_warn("malformed sample (%zu bytes): %s", size,
			sfp_strerror(err));
		return -EBADMSG;
	}
	return 0;
}

int sfp_record_decode_sample(const struct perf_event_attr *attr,
			     const void *rec, size_t size,
			     struct sfp_perf_sample *s)
{
	struct sfp_perf_attr a;

	sfp_record_perf_attr(attr, &a);
	return sfp_record_decode_sample_pa(&a, rec, size, s);
}
