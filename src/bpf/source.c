// SPDX-License-Identifier: MIT
/*
 * bpf-defer as a recorder's second source of records (record/recorder.h):
 * the recorder is a layer below and knows it only by these callbacks.
 * Built with and without BPF (none.c stands in for the rest).
 */
#include "bpf/bpf-defer.h"
#include "record/recorder.h"

static int source_poll(void *ctx)
{
	return sfp_bpf_defer__poll(ctx);
}

static int source_flush(void *ctx)
{
	return sfp_bpf_defer__flush(ctx);
}

static void source_finish(void *ctx)
{
	sfp_bpf_defer__finish(ctx);
}

void sfp_bpf_defer__source(struct sfp_bpf_defer *b,
			   struct sfp_recorder_source *src)
{
	*src = (struct sfp_recorder_source){
		.ctx = b,
		.record = sfp_bpf_defer__record,
		.poll = source_poll,
		.flush = source_flush,
		.finish = source_finish,
	};
}
