// SPDX-License-Identifier: MIT
/*
 * The record pipeline's output, one record at a time, as the events the
 * stitcher and the machine model take.  The perf.data reader decodes the
 * same layouts from a file; here the records come straight from our own
 * session (host order, 8-aligned, one evsel), and only the types the
 * agent uses are decoded.  Every field is read through a bounds-checked
 * cursor all the same: the bytes were written by the kernel or BPF.
 */
#include <string.h>

#include "agent/agent.h"
#include "common/cursor.h"
#include "perf/perf-int.h"

/* A string that ends inside [p, end), or NULL. */
static const char *str_in(const uint8_t *p, const uint8_t *end)
{
	return p < end && memchr(p, 0, (size_t)(end - p)) ? (const char *)p
							  : NULL;
}

int agent_decode(const struct sfp_perf_evsel *e, const void *rec_,
		 size_t size, struct sfp_perf_event *ev, uint64_t *scratch,
		 size_t scratch_len)
{
	const uint8_t *rec = rec_;
	const struct perf_event_header_s {
		uint32_t type;
		uint16_t misc, size;
	} *h = rec_;
	struct sfp_cursor c;
	size_t tail = 0;
	uint64_t v;

	if (size < 8)
		return -EBADMSG;
	memset(ev, 0, sizeof(*ev));
	ev->type = h->type;
	ev->misc = h->misc;
	ev->size = h->size;
	ev->raw = rec;
	ev->evsel = e;
	sfp_cursor_init(&c, rec, size, false);
	c.pos += 8;
	if (ev->type == SFP_PERF_RECORD_SAMPLE)
		return sfp_perf_parse_sample(&e->attr, rec, size, false,
					     &ev->sample, scratch, scratch_len)
			       ? -EBADMSG : 0;
	if (e->attr.flags & SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL)
		tail = sfp_perf_id_trailer_size(e->attr.sample_type);
	if (tail + 8 > size)
		return -EBADMSG;
	c.end = rec + size - tail;

#define R(fn, dst) do { if (fn(&c, dst)) return -EBADMSG; } while (0)
	switch (ev->type) {
	case SFP_PERF_RECORD_MMAP:
	case SFP_PERF_RECORD_MMAP2:
		R(sfp_cursor_u32, &ev->mmap.pid);
		R(sfp_cursor_u32, &ev->mmap.tid);
		R(sfp_cursor_u64, &ev->mmap.start);
		R(sfp_cursor_u64, &ev->mmap.len);
		R(sfp_cursor_u64, &ev->mmap.pgoff);
		if (ev->type == SFP_PERF_RECORD_MMAP2) {
			if (ev->misc & SFP_PERF_MISC_MMAP_BUILD_ID) {
				uint8_t hb[3];

				R(sfp_cursor_u8, &ev->mmap.build_id_size);
				if (sfp_cursor_bytes(&c, hb, 3) ||
				    sfp_cursor_bytes(&c, ev->mmap.build_id, 20))
					return -EBADMSG;
				if (ev->mmap.build_id_size > 20)
					ev->mmap.build_id_size = 20;
			} else {
				R(sfp_cursor_u32, &ev->mmap.maj);
				R(sfp_cursor_u32, &ev->mmap.min);
				R(sfp_cursor_u64, &ev->mmap.ino);
				R(sfp_cursor_u64, &ev->mmap.ino_generation);
			}
			R(sfp_cursor_u32, &ev->mmap.prot);
			R(sfp_cursor_u32, &ev->mmap.flags);
		}
		ev->mmap.filename = str_in(c.pos, c.end);
		if (!ev->mmap.filename)
			return -EBADMSG;
		break;
	case SFP_PERF_RECORD_COMM:
		R(sfp_cursor_u32, &ev->comm.pid);
		R(sfp_cursor_u32, &ev->comm.tid);
		ev->comm.comm = str_in(c.pos, c.end);
		if (!ev->comm.comm)
			return -EBADMSG;
		break;
	case SFP_PERF_RECORD_FORK:
	case SFP_PERF_RECORD_EXIT:
		R(sfp_cursor_u32, &ev->fork.pid);
		R(sfp_cursor_u32, &ev->fork.ppid);
		R(sfp_cursor_u32, &ev->fork.tid);
		R(sfp_cursor_u32, &ev->fork.ptid);
		R(sfp_cursor_u64, &ev->fork.time);
		break;
	case SFP_PERF_RECORD_LOST:
		R(sfp_cursor_u64, &ev->lost.id);
		R(sfp_cursor_u64, &ev->lost.lost);
		break;
	case SFP_PERF_RECORD_CALLCHAIN_DEFERRED:
		R(sfp_cursor_u64, &ev->deferred.cookie);
		R(sfp_cursor_u64, &v);
		if (v > sfp_cursor_left(&c) / 8 || v > scratch_len)
			return -EBADMSG;
		ev->deferred.nr = v;
		for (uint64_t i = 0; i < v; i++)
			sfp_cursor_u64(&c, &scratch[i]);
		ev->deferred.ips = scratch;
		break;
	default:
		return 1;
	}
#undef R
	return sfp_perf_sample_id_parse(&e->attr, rec, size, false, 8,
					&ev->sample) ? -EBADMSG : 0;
}
