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
/* What a thread (or a comm) is asked for: the bytes past the snapshot,
 * and, where its frame-pointer chain leaves the stack for another (Go's
 * switch from g0 to the goroutine's stack), the bytes to copy there (0:
 * the chain is not followed). */
struct sfd_want {
	__u32 bytes;
	__u32 other;
};
/* The other stack's copy: first, and at most (grown while walks run out
 * of it; a goroutine's stack past the frame the chain leads to is
 * usually a few KiB) */
#define SFD_OTHER_FIRST (32u << 10)
#define SFD_OTHER_MAX (128u << 10)
/* Frames followed on the chain before it leaves the stack, at most. */
#define SFD_CHAIN_MAX 256

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
	/* then other_len bytes read from user address other: where the
	 * frame-pointer chain left the bytes above (0: it did not, or not
	 * asked) */
	__u64 other;
	__u32 other_len;
	__u32 chain;		/* frames followed to find it */
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
	SFD_CTR_OTHER,		/* records with another stack's bytes */
	SFD_CTR_OTHER_BYTES,	/* those bytes */
	SFD_NR_COUNTERS
};

#endif
