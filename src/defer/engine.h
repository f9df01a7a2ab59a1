/* SPDX-License-Identifier: MIT */
/*
 * The deferral engine: the kernel's deferred user callchains (Linux 6.19),
 * done in user space.
 *
 * It sees the samples of a recording in time order, each with the user
 * registers and user stack snapshot the kernel copied, and decides what the
 * kernel would have done:
 *
 *  - consecutive samples of one task taken in kernel mode with identical
 *    user registers (ip, sp, bp and the others given) and identical user
 *    stack bytes belong to one kernel entry: they share one cookie and one
 *    unwind;
 *  - every other sample gets a fresh cookie (a user-mode sample is its own
 *    entry: the kernel unwinds on the return from that interrupt);
 *  - cookie = (counter << 32) | (cpu + 1), counter odd, per CPU, so a cookie
 *    is never 0 and never repeats within one engine;
 *  - one deferred record per cookie, emitted after the samples it serves and
 *    before the next sample of that task (or at the task's exit / flush).
 *
 * It is a pure component: samples in, records out through callbacks, the
 * unwind done by a callback, so that every rule is testable without a
 * kernel.  In inline mode it writes classic user chains into each sample
 * instead (still one unwind per shared entry).
 */
#ifndef SFP_DEFER_ENGINE_H
#define SFP_DEFER_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

/* The kernel's cap on a deferred user chain (4 KiB cache, 64-bit). */
#define SFP_DEFER_MAX_DEPTH 510
/* User registers compared besides ip, sp, bp. */
#define SFP_DEFER_MAX_REGS 32

/* One sample as the engine needs it. */
struct sfp_defer_sample {
	uint32_t pid, tid;
	uint32_t cpu;
	uint64_t time;
	bool kernel_mode;	/* the interrupted context was the kernel */
	bool has_user;		/* user regs present (not a kernel thread) */
	uint64_t ip, sp, bp;	/* user registers */
	const uint8_t *stack;	/* user stack snapshot from sp upwards */
	size_t stack_size;
	/* More user registers, if the kernel copied them (the same set for
	 * every sample of a task; the first SFP_DEFER_MAX_REGS compared):
	 * two kernel entries from one call site with the same stack bytes
	 * usually differ here (a loop counter or pointer in rbx, rsi...). */
	const uint64_t *regs;
	size_t nr_regs;
	/* The user chain, when it is already known (a sample read back from
	 * a file that carries it: `convert`): no unwind callback is made, and
	 * two kernel-mode samples are one entry while their chains are equal
	 * (a file keeps no registers or stack bytes to compare).  At most
	 * max_depth frames are kept. */
	bool user_known;
	const uint64_t *user_ips;
	size_t nr_user_ips;
	const void *priv;	/* the caller's sample, passed back */
};

/* The user part the engine decided for a sample. */
enum sfp_defer_user_kind {
	SFP_DEFER_USER_NONE,	 /* no user context: kernel chain only */
	SFP_DEFER_USER_DEFERRED, /* chain ends USER_DEFERRED, cookie */
	SFP_DEFER_USER_INLINE,	 /* chain ends USER, ips[] */
};

struct sfp_defer_user {
	enum sfp_defer_user_kind kind;
	uint64_t cookie;
	const uint64_t *ips;
	size_t nr;
	/* The entry's unwound user chain in either form (off-CPU time sums
	 * blocks per stack, so it needs the frames behind a cookie too). */
	const uint64_t *unwound;
	size_t nr_unwound;
};

/* The task/time a deferred record is stamped with (its sample_id). */
struct sfp_defer_origin {
	uint32_t pid, tid, cpu;
	uint64_t time;
};

struct sfp_defer_ops {
	/*
	 * Unwind the user stack of s into ips (at most max).  Return the
	 * number of frames (>= 0; the first is the user ip) or a negative
	 * errno; frames stored before an error are still used.
	 */
	int (*unwind)(void *ctx, const struct sfp_defer_sample *s,
		      uint64_t *ips, size_t max);
	/* Write sample s with user part u.  Negative return aborts. */
	int (*emit_sample)(void *ctx, const struct sfp_defer_sample *s,
			   const struct sfp_defer_user *u);
	/* Write PERF_RECORD_CALLCHAIN_DEFERRED.  Negative return aborts. */
	int (*emit_deferred)(void *ctx, const struct sfp_defer_origin *o,
			     uint64_t cookie, const uint64_t *ips, size_t nr);
};

struct sfp_defer_stats {
	uint64_t samples;
	uint64_t user_samples;		/* samples with a user part */
	uint64_t unwinds;		/* unwind callbacks made */
	uint64_t unwind_errors;		/* of which returned < 0 */
	uint64_t shared;		/* samples that reused a cookie */
	uint64_t deferred;		/* deferred records emitted */
	uint64_t frames;		/* user frames over all unwinds */
	uint64_t tasks;			/* tasks known now (exits forget) */
};

struct sfp_defer_engine;

/* inline: write classic chains.  max_depth 0 = SFP_DEFER_MAX_DEPTH. */
SFP_HIDDEN int sfp_defer_engine__new(const struct sfp_defer_ops *ops,
				     void *ctx, bool inline_mode,
				     size_t max_depth,
				     struct sfp_defer_engine **out);

/* Process the next sample (time order).  Return: 0 or a callback's error. */
SFP_HIDDEN int sfp_defer_engine__add(struct sfp_defer_engine *e,
				     const struct sfp_defer_sample *s);

/* The task exited (PERF_RECORD_EXIT): emit its pending record now. */
SFP_HIDDEN int sfp_defer_engine__task_exit(struct sfp_defer_engine *e,
					   uint32_t tid);

/* Emit every pending record (end of recording). */
SFP_HIDDEN int sfp_defer_engine__flush(struct sfp_defer_engine *e);

SFP_HIDDEN void sfp_defer_engine__stats(const struct sfp_defer_engine *e,
					struct sfp_defer_stats *st);

SFP_HIDDEN void sfp_defer_engine__free(struct sfp_defer_engine **e);

#endif /* SFP_DEFER_ENGINE_H */
