/* SPDX-License-Identifier: MIT */
/* `sfprof record --call-graph bpf-defer`: the CLI's side (record-bpf.c). */
#ifndef SFP_CLI_RECORD_BPF_H
#define SFP_CLI_RECORD_BPF_H

#include <stdio.h>

#include "bpf/bpf-defer.h"

/*
 * Load the BPF object before the session exists.  On failure the reason
 * is printed and *cg becomes SFP_RECORD_CG_SFRAME (the fallback); *out
 * stays NULL.
 */
void record_bpf_load(enum sfp_record_call_graph *cg, uint32_t max_depth,
		     struct sfp_bpf_defer **out);

/* The summary lines of a bpf-defer recording. */
void record_bpf_summary(FILE *f, const struct sfp_bpf_defer *b);

#endif /* SFP_CLI_RECORD_BPF_H */
