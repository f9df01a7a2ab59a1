/* SPDX-License-Identifier: MIT */
/*
 * Off-CPU time: from a task's blocking switch-out (a sched:sched_switch
 * sample, already given its user part by the deferral engine) to its next
 * switch-in (a PERF_RECORD_SWITCH), written as perf's `offcpu-time` event
 * writes it: one sample per block whose period is the blocked
 * nanoseconds.
 *
 *   switch-out (blocking) ──► pending[tid] ──► switch-in: blocked ns
 *                                               │
 *                 >= thresh and under the rate ─┴─ otherwise
 *                          │                        │
 *                   own sample, now         sum per (task, kernel chain,
 *                   (stamped at the          user chain), written at the
 *                    switch-in)              end: never lost, only merged
 *
 * A pure component like the deferral engine: records in, samples out
 * through a callback, so that its rules are testable without a kernel.
 */
#ifndef SFP_RECORD_OFFCPU_H
#define SFP_RECORD_OFFCPU_H

#include "defer/engine.h"
#include "record/record.h"

/* The sched_switch prev_state bits that mean "blocked" (the kernel's
 * TASK_REPORT letters S D T t P I); 0x100 (TASK_REPORT_MAX, since Linux
 * 4.14) marks a preemption, X and Z (0x10, 0x20) a task that exits. */
#define SFP_OFFCPU_BLOCKED_STATES 0xcfULL
#define SFP_OFFCPU_PREEMPTED 0x100ULL

struct sfp_offcpu_opts {
	size_t sz;
	/* Blocks at least this long are samples of their own; shorter ones
	 * are summed per stack (0: every block is its own sample). */
	uint64_t thresh_ns;
	/* At most this many own samples per second of recording (0: no
	 * bound); the blocks over it are summed like short ones. */
	uint64_t max_rate;
	/* The user chains behind deferred cookies come later, through
	 * sfp_offcpu__user_chain() (--call-graph bpf-defer: the unwind runs
	 * when the task returns to user space, after its switch-in); summed
	 * blocks wait for theirs there. */
	bool late_user;
	/* Every switch-out comes through sfp_offcpu__switch_out() as well
	 * (the tracepoint path's switch records): a block whose sample was
	 * lost keeps its time, summed per thread without a stack. */
	bool switch_records;
	size_t :0;
};
#define sfp_offcpu_opts__last_field switch_records

struct sfp_offcpu_stats {
	uint64_t switches;	/* sched_switch samples seen */
	uint64_t preempted;	/* of which preemptions (not blocks) */
	uint64_t exits;		/* of which a task's last switch-out */
	uint64_t blocks;	/* blocking switch-outs */
	uint64_t unwinds;	/* user unwinds their stacks cost (pipeline) */
	uint64_t woken;		/* blocks ended by a switch-in */
	uint64_t samples;	/* written as their own sample */
	uint64_t summed;	/* summed per stack: shorter than thresh */
	uint64_t over_rate;	/* summed because of max_rate */
	uint64_t sums;		/* per-stack sums written at the end */
	uint64_t unmatched;	/* no switch-in seen (lost, or blocked at end) */
	uint64_t blocked_ns;	/* over every woken block */
	uint64_t no_user;	/* late_user: summed blocks whose user chain
				   never came (summed with the kernel part) */
	uint64_t switch_outs;	/* switch_records: switch-out records */
	uint64_t no_stack;	/* of the blocks, those begun by a switch
				   record alone (their sample was lost) */
	uint64_t no_stack_ns;	/* their blocked time (in blocked_ns too),
				   and kernel_added_ns */
	uint64_t kernel_ns;	/* the kernel's sums, over the tasks of the
				   recording (sfp_offcpu__kernel_total()) */
	uint64_t kernel_blocks;
	uint64_t kernel_added_ns;	/* of which the records had lost */
	uint64_t kernel_added_tasks;	/* ... in that many tasks */
	uint64_t kernel_other_ns;	/* other processes' (not written) */
	uint64_t kernel_skew_ns;	/* nothing lost: stamps' skew (not
					   written) */
};

/* Write one off-CPU sample (period = blocked ns) with user part u. */
typedef int (*sfp_offcpu_emit_fn)(void *ctx,
				  const struct sfp_perf_sample *s,
				  const struct sfp_defer_user *u);

struct sfp_offcpu;

SFP_HIDDEN int sfp_offcpu__new(const struct sfp_offcpu_opts *opts,
			       sfp_offcpu_emit_fn emit, void *ctx,
			       struct sfp_offcpu **out);

/* True when a sched_switch prev_state value is a blocking switch-out;
 * counts it in the stats either way. */
SFP_HIDDEN bool sfp_offcpu__is_block(struct sfp_offcpu *o, uint64_t state);

/*
 * A blocking switch-out: s (its callchain is the kernel part) with the
 * user part u the deferral engine gave it.  Copied; pending until the
 * task's switch-in.  Return: 0 or -ENOMEM.
 */
SFP_HIDDEN int sfp_offcpu__block(struct sfp_offcpu *o,
				 const struct sfp_perf_sample *s,
				 const struct sfp_defer_user *u);

/*
 * switch_records: a switch-out of task tid that is not a preemption (a
 * PERF_RECORD_SWITCH(_CPU_WIDE) without the preempt flag), which comes
 * after the block's sched_switch sample if that was not lost.  A block
 * without its sample begins here: its time is summed per thread with no
 * stack (no_stack).  s: pid, tid, time, cpu and the fields the off-CPU
 * sample is written with (id, misc, ip); its chain is not read.
 * Return: 0 or -ENOMEM.
 */
SFP_HIDDEN int sfp_offcpu__switch_out(struct sfp_offcpu *o,
				      const struct sfp_perf_sample *s);

/* Task tid runs again at time.  Return: 0 or the emit callback's error. */
SFP_HIDDEN int sfp_offcpu__wake(struct sfp_offcpu *o, uint32_t tid,
				uint64_t time);

/* The task is gone: a block still pending has no end. */
SFP_HIDDEN void sfp_offcpu__task_exit(struct sfp_offcpu *o, uint32_t tid);

/*
 * late_user: the user chain (nr frames, 0: none) of the kernel entry
 * cookie; the summed blocks of that entry join their stack's sum.
 * Return: 0 or -ENOMEM.
 */
SFP_HIDDEN int sfp_offcpu__user_chain(struct sfp_offcpu *o, uint64_t cookie,
				      const uint64_t *ips, size_t nr);

/*
 * Switch-outs counted elsewhere (the BPF program on sched_switch, which
 * sends only the blocks): they replace the counts of is_block(); the
 * blocks that were not woken are counted unmatched.
 */
SFP_HIDDEN void sfp_offcpu__set_switches(struct sfp_offcpu *o,
					 uint64_t switches, uint64_t preempted,
					 uint64_t exits, uint64_t blocks);

/*
 * switch_records: the kernel's own sum for task s->tid of process s->pid
 * (s: the fields a stackless sample is written with; any_task: every task
 * is this recording's, -a) (ns blocked in blocks
 * blocks since the recording began, src/bpf/offsum.h), before finish().
 * What it has over the time the records gave this task is the time of
 * blocks the rings lost entirely: summed for the task without a stack.
 * Where nothing was lost (records_lost, the rings' LOST counts, is 0 and
 * no block lacked its sample or its switch-in), the excess is the skew
 * between the kernel's and the records' time stamps: counted
 * (kernel_skew_ns), not written.
 * A task whose process (pid) the records never showed is not this
 * recording's: not written (kernel_other_ns).
 * Return: 0 or -ENOMEM.
 */
SFP_HIDDEN int sfp_offcpu__kernel_total(struct sfp_offcpu *o,
					const struct sfp_perf_sample *s,
					bool any_task, uint64_t records_lost,
					uint64_t ns, uint64_t blocks);

/* End of recording: the per-stack sums, stamped with time. */
SFP_HIDDEN int sfp_offcpu__finish(struct sfp_offcpu *o, uint64_t time);

/*
 * The per-stack sums so far, stamped with time, then forgotten: for a
 * consumer that cuts time into windows (the agent), so that short blocks
 * land in the window they happened in instead of all at the end.  The
 * blocks still pending are kept.  Return: 0 or the emit callback's error.
 */
SFP_HIDDEN int sfp_offcpu__flush_sums(struct sfp_offcpu *o, uint64_t time);

SFP_HIDDEN void sfp_offcpu__stats(const struct sfp_offcpu *o,
				  struct sfp_offcpu_stats *st);
SFP_HIDDEN void sfp_offcpu__add_unwind(struct sfp_offcpu *o);

SFP_HIDDEN void sfp_offcpu__free(struct sfp_offcpu **o);

#endif /* SFP_RECORD_OFFCPU_H */
