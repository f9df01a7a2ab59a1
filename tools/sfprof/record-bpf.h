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
void record_bpf_load(enum sfp_record_call_graph *cg,
		     const struct sfp_record_opts *ro, uint32_t max_depth,
		     struct sfp_bpf_defer **out);

/* Ring and table array sizes for the loads that follow (0: the
 * library's defaults, sized for record; the agent asks for less). */
void record_bpf_size(uint32_t ring_bytes, uint32_t max_fdes, uint32_t max_fres);

/* Load the BPF object (with ro->off_cpu its sched_switch program too);
 * the library's warnings say why it failed.
 * Return: 0 and *out, or -errno (sfp_bpf_defer__load()). */
int record_bpf_try(const struct sfp_record_opts *ro, uint32_t max_depth,
		   struct sfp_bpf_defer **out);

/*
 * --call-graph auto (record-auto.c): pick kernel-defer, bpf-defer or
 * sframe for the target of ro; *bd is loaded when bpf-defer is chosen.
 * why gets the reason (one line, also for the summary).
 * Return: the mode chosen.
 */
enum sfp_record_call_graph record_auto_choose(const struct sfp_record_opts *ro,
					      uint32_t max_depth,
					      struct sfp_bpf_defer **bd,
					      char *why, size_t why_len);

/* The summary lines of a bpf-defer recording. */
void record_bpf_summary(FILE *f, const struct sfp_bpf_defer *b);

#endif /* SFP_CLI_RECORD_BPF_H */
