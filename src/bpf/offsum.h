/* SPDX-License-Identifier: MIT */
/*
 * Off-CPU totals summed in the kernel (offsum.bpf.c) beside the
 * tracepoint path of `record --off-cpu`, so that the blocks whose
 * samples or switch records a switch-heavy load makes the rings lose keep
 * their time (record/offcpu.h, sfp_offcpu__kernel_total()).
 *
 *   sfp_bpf_offsum__load()   load and attach (counting nothing yet)
 *   sfp_bpf_offsum__arm()    count the blocks that begin from now on
 *   sfp_bpf_offsum__stop()   detach: the sums stop moving
 *   sfp_bpf_offsum__read()   every task's sum, once stopped
 */
#ifndef SFP_BPF_OFFSUM_H
#define SFP_BPF_OFFSUM_H

#include <stdint.h>

#include "common/internal.h"

/* The tasks its maps hold (offsum.bpf.c). */
#define SFO_MAX_TASKS_USER 65536

struct sfp_bpf_offsum;

struct sfp_bpf_offsum_stats {
	uint64_t blocks;	/* blocking switch-outs timed */
	uint64_t woken;		/* of which ended by a switch-in */
	uint64_t out_full;	/* not timed: the map of tasks was full */
	uint64_t sums_full;	/* not summed: the map of sums was full */
	uint64_t tasks;		/* tasks with a sum */
};

/* Return: 0, or -errno with the reason in the log (-EOPNOTSUPP in a
 * build without BPF). */
SFP_HIDDEN int sfp_bpf_offsum__load(struct sfp_bpf_offsum **out);
/* Blocks beginning at or after now_ns (CLOCK_MONOTONIC) are counted. */
SFP_HIDDEN void sfp_bpf_offsum__arm(struct sfp_bpf_offsum *b, uint64_t now_ns);
SFP_HIDDEN void sfp_bpf_offsum__stop(struct sfp_bpf_offsum *b);

typedef int (*sfp_bpf_offsum_fn)(void *ctx, uint32_t pid, uint32_t tid,
				 uint64_t ns, uint64_t blocks);
/* Each task's sum to fn (stop first).  Return: 0 or fn's error. */
SFP_HIDDEN int sfp_bpf_offsum__read(struct sfp_bpf_offsum *b,
				    sfp_bpf_offsum_fn fn, void *ctx);
SFP_HIDDEN void sfp_bpf_offsum__stats(const struct sfp_bpf_offsum *b,
				      struct sfp_bpf_offsum_stats *st);
SFP_HIDDEN void sfp_bpf_offsum__free(struct sfp_bpf_offsum **b);

#endif /* SFP_BPF_OFFSUM_H */
