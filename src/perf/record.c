// SPDX-License-Identifier: MIT
/*
 * One record's body, decoded into an sfp_perf_event.  The same layouts
 * arrive from a perf.data file (any byte order, via the reader) and from
 * our own live session (host order, via the agent), so both call this one
 * decoder: a fix to a field or to the trailer rule lands in both.
 */
#include <string.h>

#include "perf/perf-int.h"

/*
 * A NUL-terminated copy of the string field [p, end) in str: a string
 * that fills its field without a terminator (a writer's fault that perf
 * tolerates) is cut at the field's end rather than refused.
 */
static const char *take_str(char *str, const uint8_t *p, const uint8_t *end)
{
	size_t n = end > p ? strnlen((const char *)p, (size_t)(end - p)) : 0;

	memcpy(str, p, n);
	str[n] = 0;
	return str;
}

SFP_HIDDEN int sfp_perf_record_decode(const struct sfp_perf_evsel *e,
				      const uint8_t *rec, size_t size,
				      bool swap, struct sfp_perf_event *ev,
				      uint64_t *scratch, size_t scratch_len,
				      char *str, bool in_place)
{
	struct sfp_cursor c;
	size_t body = 0, tail = 0;
	uint64_t v;

	sfp_cursor_init(&c, rec, size, swap);
	c.pos += 8;

	if (ev->type == SFP_PERF_RECORD_SAMPLE) {
		if (!e || sfp_perf_decode_sample_body(&e->attr, &c, &ev->sample,
						      scratch, scratch_len,
						      in_place))
			return -EBADMSG;
		ev->sample.misc = ev->misc;
		return 0;
	}
	if (e && (e->attr.flags & SFP_PERF_ATTR_FLAG_SAMPLE_ID_ALL))
		tail = sfp_perf_id_trailer_size(e->attr.sample_type);
	if (tail + 8 > size)
		return -EBADMSG;
	c.end = rec + size - tail;	/* fixed fields must not eat the trailer */

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
			uint8_t b[24];

			/* With the build-id flag: a size byte, 3 zero bytes
			 * and 20 bytes.  A size over 20 or non-zero padding
			 * is a flag the kernel left set in another session's
			 * header over the device/inode layout (see the
			 * record pipeline's mmap2_stray_build_id()), which
			 * has the same size: read as that. */
			struct sfp_cursor d;

			if (sfp_cursor_bytes(&c, b, 24))
				return -EBADMSG;
			if ((ev->misc & SFP_PERF_MISC_MMAP_BUILD_ID) &&
			    b[0] <= 20 && !b[1] && !b[2] && !b[3]) {
				ev->mmap.build_id_size = b[0];
				memcpy(ev->mmap.build_id, b + 4, 20);
			} else {
				ev->misc &= (uint16_t)~SFP_PERF_MISC_MMAP_BUILD_ID;
				sfp_cursor_init(&d, b, sizeof(b), swap);
				if (sfp_cursor_u32(&d, &ev->mmap.maj) ||
				    sfp_cursor_u32(&d, &ev->mmap.min) ||
				    sfp_cursor_u64(&d, &ev->mmap.ino) ||
				    sfp_cursor_u64(&d, &ev->mmap.ino_generation))
					return -EBADMSG;
			}
			R(sfp_cursor_u32, &ev->mmap.prot);
			R(sfp_cursor_u32, &ev->mmap.flags);
		}
		ev->mmap.filename = take_str(str, c.pos, c.end);
		break;
	case SFP_PERF_RECORD_COMM:
		R(sfp_cursor_u32, &ev->comm.pid);
		R(sfp_cursor_u32, &ev->comm.tid);
		ev->comm.comm = take_str(str, c.pos, c.end);
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
	case SFP_PERF_RECORD_LOST_SAMPLES:
		R(sfp_cursor_u64, &ev->lost_samples.lost);
		break;
	case SFP_PERF_RECORD_THROTTLE:
	case SFP_PERF_RECORD_UNTHROTTLE:
		R(sfp_cursor_u64, &ev->throttle.time);
		R(sfp_cursor_u64, &ev->throttle.id);
		R(sfp_cursor_u64, &ev->throttle.stream_id);
		break;
	case SFP_PERF_RECORD_SWITCH_CPU_WIDE:
		R(sfp_cursor_u32, &ev->context_switch.next_prev_pid);
		R(sfp_cursor_u32, &ev->context_switch.next_prev_tid);
		break;
	case SFP_PERF_RECORD_KSYMBOL:
		R(sfp_cursor_u64, &ev->ksymbol.addr);
		R(sfp_cursor_u32, &ev->ksymbol.len);
		R(sfp_cursor_u16, &ev->ksymbol.ksym_type);
		R(sfp_cursor_u16, &ev->ksymbol.flags);
		ev->ksymbol.name = take_str(str, c.pos, c.end);
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
	case SFP_PERF_RECORD_READ:
	case SFP_PERF_RECORD_ITRACE_START:
	case SFP_PERF_RECORD_NAMESPACES:
		body = 8;	/* pid, tid */
		break;
	case SFP_PERF_RECORD_AUX:
		body = 24;
		break;
	case SFP_PERF_RECORD_BPF_EVENT:
		body = 16;
		break;
	case SFP_PERF_RECORD_CGROUP:
	case SFP_PERF_RECORD_AUX_OUTPUT_HW_ID:
		body = 8;
		break;
	case SFP_PERF_RECORD_TEXT_POKE:
		body = 12;
		break;
	default:
		break;	/* SWITCH: header only */
	}
#undef R
	if (body > sfp_cursor_left(&c))
		return -EBADMSG;
	if (e && sfp_perf_decode_sample_id(&e->attr, rec, size, swap, 8,
					   &ev->sample))
		return -EBADMSG;
	ev->sample.misc = ev->misc;
	return 0;
}
