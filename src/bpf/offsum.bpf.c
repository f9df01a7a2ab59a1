// SPDX-License-Identifier: MIT
/*
 * Off-CPU totals in the kernel, beside the tracepoint path of `record
 * --off-cpu` (docs/record.md, "Heavy switching"): every blocking
 * switch-out of every task is timed to its switch-in and the blocked ns
 * summed per task in a map, which user space reads once, after the
 * recording.  Nothing goes through a ring, so nothing is lost however
 * often tasks switch; the tracepoint path's per-block samples (which a
 * switch-heavy load makes overflow their rings) keep the stacks, and the
 * time of the blocks they lost is written from these sums, per thread
 * and without a stack.  No kfunc, no stack: a tp_btf program any kernel
 * with BTF (5.5+) and the sched_switch prev_state argument (5.18+)
 * accepts, where bpf-defer's task_work is refused.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/offsum-shared.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Raw task state bits of a block: TASK_INTERRUPTIBLE, _UNINTERRUPTIBLE,
 * __TASK_STOPPED, __TASK_TRACED, TASK_PARKED (TASK_IDLE is D|NOLOAD);
 * not TASK_DEAD (an exit), never a preemption. */
#define BLOCKED_STATE 0x4fU

/* Blocks that begin before this time (CLOCK_MONOTONIC ns) are not
 * counted: set by user space when the recording starts. */
volatile __u64 armed_ns;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SFO_MAX_TASKS);
	__type(key, __u32);		/* tid */
	__type(value, __u64);		/* switch-out time */
} out_at SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SFO_MAX_TASKS);
	__type(key, __u32);		/* tid */
	__type(value, struct sfo_sum);
} sums SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SFO_NR_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static void count(__u32 i)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &i);

	if (c)
		(*c)++;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns(), *t;
	__u32 ptid = prev->pid, ntid = next->pid;
	struct sfo_sum *s, init = {};

	if (now < armed_ns)
		return 0;
	if (ntid && (t = bpf_map_lookup_elem(&out_at, &ntid))) {
		__u64 ns = now - *t;

		bpf_map_delete_elem(&out_at, &ntid);
		s = bpf_map_lookup_elem(&sums, &ntid);
		if (!s) {
			init.pid = next->tgid;
			if (bpf_map_update_elem(&sums, &ntid, &init,
						BPF_NOEXIST) &&
			    !bpf_map_lookup_elem(&sums, &ntid)) {
				count(SFO_CTR_SUMS_FULL);
				goto out;
			}
			s = bpf_map_lookup_elem(&sums, &ntid);
			if (!s)
				goto out;
		}
		/* one CPU switches a task in: no other writer for this tid */
		__sync_fetch_and_add(&s->ns, ns);
		__sync_fetch_and_add(&s->blocks, 1);
		count(SFO_CTR_WOKEN);
	}
out:
	if (ptid && !preempt && (prev_state & BLOCKED_STATE)) {
		if (bpf_map_update_elem(&out_at, &ptid, &now, BPF_ANY))
			count(SFO_CTR_OUT_FULL);
		else
			count(SFO_CTR_BLOCKS);
	}
	return 0;
}
