/* SPDX-License-Identifier: MIT */
/*
 * Deep stacks in the sframe mode (docs/record.md, "Deep stacks"): a walk
 * that runs out of the sample's stack snapshot is completed, where a check
 * allows it, from the thread's previous complete unwind or from the live
 * process's memory; otherwise it stays truncated.  Every way is counted.
 */
#ifndef SFP_RECORD_DEEP_H
#define SFP_RECORD_DEEP_H

#include <stddef.h>
#include <stdint.h>

#include <sfprof/unwind.h>

#include "common/internal.h"

struct sfp_rec_deep;
struct sfp_bpf_deep;

struct sfp_rec_deep_stats {
	uint64_t ran_out;	/* walks that ran out of the snapshot */
	uint64_t from_sample;	/* completed over the copy taken at the
				   sample (bpf/deepcopy.h) */
	uint64_t sample_cut;	/* ran out of that copy too (then tried as
				   below from where it ended) */
	uint64_t from_prev;	/* completed from the thread's last unwind */
	uint64_t from_live;	/* completed from live memory */
	uint64_t truncated;	/* left truncated: the sum of the below */
	uint64_t changed;	/* live bytes at the seam not the snapshot's,
				   or changing between two reads */
	uint64_t unreadable;	/* the process could not be read (gone,
				   no permission) */
	uint64_t too_deep;	/* still truncated after the largest read
				   (deeper, or a frame address on another
				   stack: Go's g0 switches) */
	uint64_t depth_cap;	/* the frame buffer was full */
	/* walks that stopped where the frame-pointer chain leaves the
	 * stack for another (Go: from g0 to a goroutine's stack) */
	uint64_t left_stack;
	uint64_t from_other;	/* completed over that stack's bytes,
				   copied at the sample */
	uint64_t other_missing;	/* no copy of it (the thread not asked for
				   yet, or its copy not the sample's) */
	uint64_t other_short;	/* the walk went on there and ran out of the
				   copy (the next copies are larger) */
	uint64_t other_failed;	/* a copy, and the walk over it went no
				   further (the chain did not lead to a
				   caller's frame) */
};

/* What one completion needs from the pipeline. */
struct sfp_rec_deep_walk {
	struct sfp_addr_space *as;
	struct sfp_reader *reader;	/* a snapshot reader to reuse */
	const struct sfp_regs *regs;
	uint32_t pid, tid;
	uint64_t time;			/* the sample's */
	const char *comm;		/* the process's, as the records gave
					   it; NULL: not known */
	const uint8_t *stack;		/* the sample's snapshot */
	size_t stack_size;
};

SFP_HIDDEN int sfp_rec_deep__new(struct sfp_rec_deep **out);
SFP_HIDDEN void sfp_rec_deep__free(struct sfp_rec_deep **d);

/*
 * After a walk of frames[0..n) that ended with *stop: complete it if it ran
 * out of the snapshot and a check allows it (frames[] and *stop updated),
 * and remember complete unwinds of threads that needed this.  Return: the
 * number of frames (n when nothing changed).
 */
SFP_HIDDEN size_t sfp_rec_deep__complete(struct sfp_rec_deep *d,
					 const struct sfp_rec_deep_walk *w,
					 struct sfp_frame *frames, size_t n,
					 size_t max,
					 enum sfp_unwind_stop *stop);

/* Complete walks first over the copies bd takes at the samples (NULL:
 * none). */
SFP_HIDDEN void sfp_rec_deep__set_bpf(struct sfp_rec_deep *d,
				      struct sfp_bpf_deep *bd);

/* The thread exited: forget its unwind. */
SFP_HIDDEN void sfp_rec_deep__task_exit(struct sfp_rec_deep *d,
					uint32_t tid);

SFP_HIDDEN void sfp_rec_deep__stats(const struct sfp_rec_deep *d,
				    struct sfp_rec_deep_stats *st);

#endif
