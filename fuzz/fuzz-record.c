// SPDX-License-Identifier: MIT
/*
 * Fuzz target: what `record` reads from memory the kernel shares with it.
 *
 * Input: u64 sample_type selector, u64 data_head, then the bytes of an
 * 8 KiB ring data area (zero-filled if shorter).  The target walks the
 * ring with the bounds-checked reader, parses every record as a sample and
 * as a sample_id trailer, and re-encodes each parsed sample (deferred and
 * inline forms), checking that the re-encoded record parses back to the
 * same values.  Inputs are capped at 64 KiB.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/encode.h"
#include "record/record.h"

#define MAX_INPUT (64u << 10)
#define DATA_SIZE 8192

static const uint64_t type_choices[] = {
	/* one event, per task: what sfprof record asks for by default */
	PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
		PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
		PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
		PERF_SAMPLE_STACK_USER,
	PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
		PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
		PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
		PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
		PERF_SAMPLE_CALLCHAIN,
};

static void roundtrip(const struct perf_event_attr *attr,
		      const struct sfp_perf_sample *s, uint64_t *out,
		      bool inline_mode)
{
	const uint64_t ips[3] = { 0x401000, 0x402000, 0x403000 };
	struct sfp_defer_user u = {
		.kind = inline_mode ? SFP_DEFER_USER_INLINE
				    : SFP_DEFER_USER_DEFERRED,
		.cookie = (3ULL << 32) | 1,
		.ips = ips,
		.nr = 3,
	};
	struct perf_event_attr oa;
	struct sfp_perf_sample b;
	int n;

	sfp_record_out_attr(attr, !inline_mode, true, &oa);
	n = sfp_record_encode_sample(&oa, s, &u, out, 65536);
	if (n < 0)
		return;	/* too big or an unsupported field: refused cleanly */
	if (sfp_record_decode_sample(&oa, out, (size_t)n, &b))
		__builtin_trap();
	if (b.ip != s->ip || b.pid != s->pid || b.tid != s->tid ||
	    b.time != s->time || b.cpu != s->cpu || b.period != s->period ||
	    b.raw_size != s->raw_size || b.user_stack_dyn_size)
		__builtin_trap();
	if ((oa.sample_type & PERF_SAMPLE_CALLCHAIN) &&
	    b.ips[b.nr_ips - 1] !=
		    (inline_mode ? ips[2] : u.cookie))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_attr attr;
	struct sfp_ring rg;
	uint64_t sel = 0, head = 0;
	uint8_t *map;
	uint64_t *buf, *out;
	int n, guard = 0;

	if (size > MAX_INPUT)
		return 0;
	if (size >= 16) {
		memcpy(&sel, data, 8);
		memcpy(&head, data + 8, 8);
		data += 16;
		size -= 16;
	}
	map = aligned_alloc(4096, 4096 + DATA_SIZE);
	buf = malloc(65536);
	out = malloc(65536);
	if (!map || !buf || !out)
		goto done;
	memset(map, 0, 4096 + DATA_SIZE);
	memcpy(map + 4096, data, size < DATA_SIZE ? size : DATA_SIZE);
	((struct perf_event_mmap_page *)map)->data_head = head;

	memset(&attr, 0, sizeof(attr));
	attr.sample_type = type_choices[sel % 4];
	attr.sample_regs_user = (sel >> 8) & 1 ? SFP_USER_REGS_MASK : 0x1ff;
	attr.sample_id_all = 1;

	memset(&rg, 0, sizeof(rg));
	rg.base = map;
	rg.data = map + 4096;
	rg.data_size = DATA_SIZE;
	rg.tail = (sel >> 16) & 0xffff;
	while ((n = sfp_ring_next(&rg, buf, 65536)) > 0 && guard++ < 4096) {
		struct sfp_perf_sample s;

		if (n < 8 || (size_t)n > 65536)
			__builtin_trap();
		if (!sfp_record_decode_sample(&attr, buf, (size_t)n, &s)) {
			roundtrip(&attr, &s, out, false);
			roundtrip(&attr, &s, out, true);
		}
		sfp_record_decode_sample_id(attr.sample_type, buf, (size_t)n,
					    &s);
	}
done:
	free(map);
	free(buf);
	free(out);
	return 0;
}
