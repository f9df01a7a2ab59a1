// SPDX-License-Identifier: MIT
/*
 * The record pipeline's output, one record at a time, as the events the
 * stitcher and the machine model take.  The records come straight from
 * our own session (host order, 8-aligned, one evsel); their bodies are
 * decoded by the perf.data reader's own decoder all the same, through
 * bounds-checked cursors: the bytes were written by the kernel or BPF.
 * Only the types the agent uses get that far.
 */
#include <string.h>

#include "agent/agent.h"
#include "perf/perf-int.h"

static bool agent_uses(uint32_t type)
{
	switch (type) {
	case SFP_PERF_RECORD_SAMPLE:
	case SFP_PERF_RECORD_MMAP:
	case SFP_PERF_RECORD_MMAP2:
	case SFP_PERF_RECORD_COMM:
	case SFP_PERF_RECORD_FORK:
	case SFP_PERF_RECORD_EXIT:
	case SFP_PERF_RECORD_LOST:
	case SFP_PERF_RECORD_CALLCHAIN_DEFERRED:
		return true;
	default:
		return false;
	}
}

int agent_decode(const struct sfp_perf_evsel *e, const void *rec_,
		 size_t size, struct sfp_perf_event *ev, uint64_t *scratch,
		 size_t scratch_len, char *str)
{
	const uint8_t *rec = rec_;

	if (size < 8)
		return -EBADMSG;
	memset(ev, 0, sizeof(*ev));
	memcpy(&ev->type, rec, 4);
	memcpy(&ev->misc, rec + 4, 2);
	memcpy(&ev->size, rec + 6, 2);
	if (!agent_uses(ev->type))
		return 1;
	ev->raw = rec;
	ev->evsel = e;
	return sfp_perf_record_decode(e, rec, size, false, ev, scratch,
				      scratch_len, str, false);
}
