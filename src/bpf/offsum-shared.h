/* SPDX-License-Identifier: MIT */
/* What offsum.bpf.c and its loader (offsum.c) share. */
#ifndef SFP_BPF_OFFSUM_SHARED_H
#define SFP_BPF_OFFSUM_SHARED_H

#define SFO_MAX_TASKS 65536

/* One task's blocked time since the recording started. */
struct sfo_sum {
	__u32 pid;		/* tgid */
	__u32 pad;
	__u64 ns;
	__u64 blocks;
};

enum {
	SFO_CTR_BLOCKS,		/* blocking switch-outs timed */
	SFO_CTR_WOKEN,		/* of which ended by a switch-in */
	SFO_CTR_OUT_FULL,	/* not timed: out_at full */
	SFO_CTR_SUMS_FULL,	/* not summed: sums full */
	SFO_NR_COUNTERS
};

#endif
