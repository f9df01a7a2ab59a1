// SPDX-License-Identifier: MIT
/*
 * The BPF side of `--call-graph bpf-defer` run by BPF_PROG_TEST_RUN, for
 * tests/unit/test-bpf-walk.c, on any kernel that has the syscall program
 * type, whether or not its verifier takes a task_work callback in a
 * perf_event program (6.18.44 here does not: docs/record-bpf.md).
 *
 * The object is src/bpf/defer.bpf.c itself, included whole (its SFrame
 * walker sframe.bpf.h, its maps, the task_work callback's body), plus
 * syscall programs that call into it.  A syscall program runs in the task
 * that calls BPF_PROG_TEST_RUN and may sleep, so it can do exactly what
 * the callback does in the sampled task: walk that task's own user stack
 * with bpf_find_vma() and faulting reads, or as the perf_event program
 * does, with the VMAs the callbacks cached and non-faulting reads.  The
 * loader of the test leaves every program of defer.bpf.c out but these.
 */
#include "bpf/defer.bpf.c"

/* walk_regs' context: in and out (BPF_PROG_TEST_RUN copies it back). */
struct walk_args {
	__u64 ip, sp, bp;	/* in: the user registers to walk from */
	__u32 nofault;		/* in: the perf_event program's walk */
	__u32 max;		/* in: most frames */
	__u32 sync_fail;	/* out: the non-faulting walk gave up */
	__u32 no_table;		/* out: a module had no table */
};

/* The record walk_regs fills (read by user space through the skeleton). */
struct sfb_deferred walk_out;

/*
 * A walk from the registers user space gives: the calling task's stack
 * from any point of its own code.
 */
SEC("syscall")
int walk_regs(struct walk_args *a)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct walk w = {};
	__u32 max = a->max;

	if (!max || max > SFB_MAX_DEPTH)
		max = SFB_MAX_DEPTH;
	deferred_init(&walk_out, 0, task->tgid, task->pid, 0);
	walk_init(&w, &walk_out, task, task->tgid, a->ip, a->sp, a->bp, max);
	if (a->nofault)
		bpf_loop(SFB_MAX_DEPTH + 1, walk_step_nofault, &w, 0);
	else
		bpf_loop(SFB_MAX_DEPTH + 1, walk_step, &w, 0);
	walk_out.nr = w.n;
	a->sync_fail = w.sync_fail;
	a->no_table = w.no_table;
	return 0;
}

/* The callbacks' read of every executable VMA of the task's process. */
SEC("syscall")
int fill_cache(void *ctx)
{
	fill_vmas(bpf_get_current_task_btf());
	return 0;
}

/* task_work_now's context. */
struct tw_args {
	__u64 cookie;		/* in: the entry's */
	__u32 tid;		/* in: the entry's task (the caller's, or not) */
	__u32 exec_delta;	/* in: the entry's exec_id is the task's less
				   this (1: an exec since the sample) */
	__u32 pending;		/* out: the entry's after the callback */
	__u32 pad;
};

/*
 * The task_work callback, called as the kernel would call it in the
 * sampled task on its way back to user space: here the way back from
 * BPF_PROG_TEST_RUN, whose user registers bpf_task_pt_regs() gives.
 */
SEC("syscall")
int task_work_now(struct tw_args *a)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct task_ent zero = {}, *ent;
	__u32 tid = a->tid;

	zero.start_time = task->start_time;
	bpf_map_update_elem(&tasks, &tid, &zero, BPF_ANY);
	ent = bpf_map_lookup_elem(&tasks, &tid);
	if (!ent)
		return 1;
	ent->cookie = a->cookie;
	ent->pid = task->tgid;
	ent->exec_id = task->self_exec_id - a->exec_delta;
	ent->pending = 1;
	on_task_work((struct bpf_map *)&tasks, &tid, ent);
	a->pending = ent->pending;
	return 0;
}
