// SPDX-License-Identifier: MIT
/*
 * Can this kernel's verifier take what `--call-graph bpf-defer` is made
 * of: a perf_event program that schedules a task_work callback
 * (bpf_task_work_schedule_resume_impl, 6.18)?  Some 6.18 builds have the
 * kfunc but refuse its (sleepable) callback in a program that is not
 * sleepable, which a perf_event program never is.  tests/cli/test-subr.sh
 * loads this with bpftool to learn that from the kernel, not from sfprof.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

typedef int (*probe_cb)(struct bpf_map *map, void *key, void *value);

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task,
					      struct bpf_task_work *tw,
					      void *map__map, probe_cb callback,
					      void *aux__prog) __ksym;

struct slot {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slot);
} slots SEC(".maps");

static int later(struct bpf_map *map, void *key, void *value)
{
	return 0;
}

SEC("perf_event")
int probe(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 k = 0;
	struct slot *s = bpf_map_lookup_elem(&slots, &k);

	if (s)
		bpf_task_work_schedule_resume_impl(task, &s->tw, &slots, later,
						   NULL);
	return 0;
}
