// SPDX-License-Identifier: MIT
/*
 * Fuzz target: perf.data bytes through the reader (file or pipe mode,
 * ordering queue, zstd), the sample decoder and re-encoder, and the
 * stitcher.  The first byte picks reader options so that the small-queue
 * draining path and unordered delivery get exercised too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/perf.h>
#include <sfprof/stitch.h>

#include "perfdata-input.h"

#define MAX_INPUT (1u << 20)

static uint64_t acc;

static int touch(void *ctx, const struct sfp_perf_event *ev,
		 enum sfp_stitch_how how)
{
	const struct sfp_perf_sample *s = &ev->sample;
	uint8_t buf[65536];
	uint64_t i, scratch[8200];
	struct sfp_perf_sample back;
	int n;

	(void)ctx;
	acc += how + ev->type + s->tid;
	for (i = 0; i < s->nr_ips; i++)
		acc += s->ips[i];
	if (s->user_stack_size)
		acc += ((const uint8_t *)s->user_stack)[s->user_stack_size - 1];
	if (ev->type == SFP_PERF_RECORD_CALLCHAIN_DEFERRED)
		for (i = 0; i < ev->deferred.nr; i++)
			acc += ev->deferred.ips[i];
	if (ev->type == SFP_PERF_RECORD_MMAP2)
		acc += strlen(ev->mmap.filename);
	/* what decodes must encode back to something that decodes alike */
	if (ev->type == SFP_PERF_RECORD_SAMPLE && ev->evsel && !ev->swapped) {
		n = sfp_perf_write_sample(&ev->evsel->attr, ev->misc, s, buf,
					  sizeof(buf));
		if (n > 0) {
			if (sfp_perf_decode_sample(&ev->evsel->attr, buf,
						   (size_t)n, false, &back,
						   scratch, 8200) ||
			    back.nr_ips != s->nr_ips || back.time != s->time)
				abort();
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SFP_OPTS(sfp_perf_reader_opts, ro);
	SFP_OPTS(sfp_stitch_opts, so);
	struct sfp_perf_reader *r = NULL;
	struct sfp_stitcher *st = NULL;
	const struct sfp_perf_event *ev;
	uint8_t mode;

	if (size < 1 || size > MAX_INPUT)
		return 0;
	mode = perfdata_input(&data, &size);
	ro.unordered = mode & 1;
	ro.max_queue_bytes = (mode & 2) ? 512 : 0;
	so.no_merge = mode & 4;
	so.max_waiting = (mode & 8) ? 2 : 0;
	if (sfp_perf_reader__open_mem(data, size, &ro, &r))
		return 0;
	if (!sfp_stitcher__new(&so, touch, NULL, &st)) {
		while (sfp_perf_reader__next(r, &ev) > 0)
			if (sfp_stitcher__push(st, ev))
				break;
		sfp_stitcher__flush(st);
	}
	sfp_stitcher__free(&st);
	sfp_perf_reader__free(&r);
	return 0;
}
