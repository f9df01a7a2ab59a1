/* SPDX-License-Identifier: MIT */
/*
 * Deep stacks in the sframe mode, read at the sample (deepcopy.bpf.c,
 * docs/record.md "Deep stacks"): a BPF program on the sampling events
 * copies, for the threads whose walks ran out of the perf snapshot, the
 * stack past the snapshot into a ring; record/deep.c pairs each truncated
 * walk with its sample's copy and walks on over it.
 *
 *   sfp_bpf_deep__load()      load (the snapshot size given), or say why not
 *   sfp_bpf_deep__attach()    on the session's sampling events
 *   sfp_bpf_deep__take()      the copy of one sample, checked at the seam
 *   sfp_bpf_deep__need()      how far past the snapshot a thread's walk
 *                             went: grows or (slowly) shrinks its copy
 */
#ifndef SFP_BPF_DEEPCOPY_H
#define SFP_BPF_DEEPCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

struct sfp_bpf_deep;
struct sfp_record;

struct sfp_bpf_deep_stats {
	/* the BPF side's */
	uint64_t copies, bytes;	/* records written, stack bytes in them */
	uint64_t short_copies;	/* ended at a page not present */
	uint64_t unreadable;	/* not even the first page */
	uint64_t ring_full;	/* lost: no room in the ring */
	uint64_t no_regs;
	/* user space's */
	uint64_t paired;	/* copies given to their sample's walk */
	uint64_t no_copy;	/* a walk ran out and no copy was its sample's */
	uint64_t seam_refused;	/* of which: the copy stamped nearest it did
				   not have its registers or seam bytes */
	uint64_t unused;	/* copies no walk asked for (shallower samples
				   of a deep thread, shared kernel entries) */
	uint64_t test_dropped;	/* SFPROF_BPF_TEST_DEEP_DROP's */
	uint64_t threads;	/* threads asked for */
	/* another stack where the frame-pointer chain left the stack */
	uint64_t other_threads;	/* threads asked to follow it */
	uint64_t other_dropped;	/* of which: no longer, their copies led
				   nowhere */
	uint64_t other_copies;	/* copies holding such bytes (BPF's) */
	uint64_t other_bytes;
};

/* The bytes of another stack a copy holds, valid as *extra is. */
struct sfp_bpf_deep_other {
	const uint8_t *bytes;	/* NULL: none */
	size_t len;
	uint64_t addr;
};

/* Return: 0, or -errno with why in why[] (-EOPNOTSUPP without BPF). */
SFP_HIDDEN int sfp_bpf_deep__load(uint32_t snap_size,
				  struct sfp_bpf_deep **out, char *why,
				  size_t why_len);
SFP_HIDDEN int sfp_bpf_deep__attach(struct sfp_bpf_deep *b,
				    struct sfp_record *r);

/*
 * The copy of the sample of tid at time (the events' CLOCK_MONOTONIC)
 * with user registers (ip, sp), whose
 * snapshot is snap[0..snap_size): the bytes from sp + snap_size on, valid
 * until the next call.  Only a copy taken at that very sample is given:
 * same thread, registers and snapshot end (the bytes the copy repeats
 * from the snapshot's end equal the snapshot's).  Return: the number of
 * bytes, 0 when there is none.
 */
SFP_HIDDEN size_t sfp_bpf_deep__take(struct sfp_bpf_deep *b, uint32_t tid,
				     uint64_t time, uint64_t ip, uint64_t sp,
				     const uint8_t *snap, size_t snap_size,
				     const uint8_t **extra,
				     struct sfp_bpf_deep_other *other);

/* What a walk showed of the frame-pointer chain leaving its stack. */
enum sfp_bpf_deep_switch {
	SFP_DEEP_SW_NONE,	/* nothing */
	SFP_DEEP_SW_LEFT,	/* it left, and there was no copy of where */
	SFP_DEEP_SW_HELPED,	/* the copy of where it went completed it */
	SFP_DEEP_SW_SHORT,	/* ... took it further, and it ran out of it */
	SFP_DEEP_SW_FAILED,	/* a copy, and the walk went no further */
};

/*
 * A walk of tid's sample ended: past = the bytes past the snapshot it
 * needed (0: it fitted), cut = it still ran out of what it had (had:
 * the bytes past the snapshot it had), sw = what it showed of its
 * frame-pointer chain leaving the stack: once it left, the program
 * follows the chain at tid's samples and its comm's, and copies where it
 * leads; a thread whose copies of that kind led nowhere 16 times in a
 * row (a frame pointer that is no frame pointer) is no longer followed
 * that way.  comm:
 * the process's name as the records gave it (NULL: read from /proc,
 * which a short-lived process may have left already).
 */
SFP_HIDDEN void sfp_bpf_deep__need(struct sfp_bpf_deep *b, uint32_t tid,
				   const char *comm, size_t past, bool cut,
				   size_t had, enum sfp_bpf_deep_switch sw);
SFP_HIDDEN void sfp_bpf_deep__task_exit(struct sfp_bpf_deep *b, uint32_t tid);
SFP_HIDDEN void sfp_bpf_deep__stats(const struct sfp_bpf_deep *b,
				    struct sfp_bpf_deep_stats *st);
SFP_HIDDEN void sfp_bpf_deep__free(struct sfp_bpf_deep **b);

#endif /* SFP_BPF_DEEPCOPY_H */
