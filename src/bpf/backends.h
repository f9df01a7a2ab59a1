/* SPDX-License-Identifier: MIT */
/*
 * The BPF parts of a recording as the recorder's backends (record/
 * recorder.h, a layer below, knows them only by callbacks): bpf-defer as
 * the second source of records, the deep stacks' copies taken at the
 * sample, the off-CPU sums kept in the kernel.  `sfprof record` and
 * `sfprof agent` both fill their recorder's options here, so that the
 * adapter is written once.  Built with and without BPF (none.c stands in
 * for the programs).
 */
#ifndef SFP_BPF_BACKENDS_H
#define SFP_BPF_BACKENDS_H

#include <stdbool.h>

#include "bpf/bpf-defer.h"
#include "bpf/deepcopy.h"
#include "bpf/offsum.h"
#include "record/recorder.h"

struct sfp_bpf_backends {
	/* Loaded by the caller before the session (NULL: none); attached
	 * by the recorder, which polls, flushes and finishes it. */
	struct sfp_bpf_defer *defer;
	/* Loaded and attached by the recorder where deep stacks apply;
	 * otherwise NULL and deep_why says why not. */
	struct sfp_bpf_deep *deep;
	char deep_why[256];
	/* Loaded by the recorder where off-CPU records need them. */
	struct sfp_bpf_offsum *sums;
	/* The callbacks the recorder's options point at. */
	struct sfp_recorder_source src_ops;
	struct sfp_recorder_deep deep_ops;
	struct sfp_recorder_sums sums_ops;
};

/*
 * Point o->source at b->defer (when loaded), o->deep at the deep stacks'
 * program (with deep) and o->sums at the kernel sums (with sums).  b must
 * outlive the recorder.
 */
SFP_HIDDEN void sfp_bpf_backends__ops(struct sfp_bpf_backends *b, bool deep,
				      bool sums, struct sfp_recorder_opts *o);

/* What the recorder loaded (deep stacks, sums), after the recorder is
 * freed: the pipeline reads the deep copies until then.  b->defer stays
 * the caller's. */
SFP_HIDDEN void sfp_bpf_backends__free(struct sfp_bpf_backends *b);

#endif /* SFP_BPF_BACKENDS_H */
