/* SPDX-License-Identifier: MIT */
/* What deepcopy.bpf.c and its user side (deepcopy.c) share. */
#ifndef SFP_BPF_DEEPCOPY_SHARED_H
#define SFP_BPF_DEEPCOPY_SHARED_H

/* The most bytes copied past the snapshot for one sample. */
#define SFD_MAX (256u << 10)
/* Bytes of the snapshot's end copied again at the start of the record:
 * user space compares them with the snapshot (the seam). */
#define SFD_OVERLAP 256u
#define SFD_MAX_TASKS 16384
#define SFD_PAGE 4096u

/* One sample's stack past its snapshot, followed by len bytes read from
 * user address start (= sp + the snapshot's size - SFD_OVERLAP). */
struct sfd_rec {
	__u32 pid, tid;
	__u64 time;		/* CLOCK_MONOTONIC ns, at the program's
				   start in the sample's interrupt */
	__u64 ip, sp;		/* the sample's user registers */
	__u64 start;
	__u32 len;		/* bytes that follow (a prefix of asked) */
	__u32 asked;
};

enum {
	SFD_CTR_COPIES,		/* records written */
	SFD_CTR_BYTES,		/* bytes of stack in them */
	SFD_CTR_SHORT,		/* stopped at a page not present (or the
				   stack's end) before the asked size */
	SFD_CTR_UNREADABLE,	/* not even the first page (the stack ends
				   inside the snapshot): no record */
	SFD_CTR_RING_FULL,	/* the ring had no room: no record */
	SFD_CTR_NO_REGS,	/* no user registers (kernel thread) */
	SFD_NR_COUNTERS
};

#endif
