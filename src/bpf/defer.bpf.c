// SPDX-License-Identifier: MIT
/*
 * `--call-graph bpf-defer`: the kernel's deferred user callchains (Linux
 * 6.19) done with BPF task_work on kernels that lack them.
 *
 * on_sample (perf_event program, attached to every event record opens):
 *   - takes the kernel callchain (bpf_get_stack) and the sample's fields;
 *   - gives the sample the cookie of the task's current kernel entry, in
 *     the kernel's form (counter << 32 | cpu + 1, counter odd): while a
 *     callback is pending for the task every sample shares its cookie,
 *     otherwise a new cookie is made and one callback scheduled
 *     (bpf_task_work_schedule_resume: runs in the task on its way back to
 *     user space, sleepable);
 *   - writes the sample to the ring buffer and returns 0, so that perf does
 *     not write its own copy (no stack bytes anywhere).
 * on_task_work (the callback): reads the user registers (bpf_task_pt_regs)
 * and walks the user stack with the SFrame tables in the maps, frame
 * pointers as fallback (sframe.bpf.h), and writes one deferred record.
 *
 * What the kernel does to tasks is handled here: an exiting task gets no
 * user part (its callback may never run); an exec between sample and
 * callback is seen by self_exec_id (the stack is another image's: not
 * unwound); a tid reused by a new task is seen by its start_time (the old
 * entry, with its pending work, is deleted); a callback that never came is
 * seen when the task is sampled in user mode with work still pending long
 * after scheduling and the kernel no longer holds it (reported, and a new
 * callback scheduled).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "bpf/defer-shared.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define PF_EXITING 0x00000004
#define PF_KTHREAD 0x00200000
/* Pending work older than this while the task runs in user mode: lost. */
#define STALE_NS 20000000ULL

typedef int (*sfb_task_work_cb)(struct bpf_map *map, void *key, void *value);

/* Not in bpftool 7.1's vmlinux.h: declared here, tested at load. */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task,
					      struct bpf_task_work *tw,
					      void *map__map,
					      sfb_task_work_cb callback,
					      void *aux__prog) __weak __ksym;

/* libbpf 1.1 has no bpf_ksym_exists(). */
#define sfb_ksym_exists(sym) (!!(sym))

/* Set by the loader: most user frames per unwind. */
const volatile __u32 max_depth = SFB_MAX_DEPTH;
/*
 * Test hook (SFPROF_BPF_TEST_DROP_CALLBACK=N, docs/record-bpf.md): every
 * Nth callback a CPU asks for is treated as scheduled but its callback is never
 * asked for, as if the kernel had lost it, so that the tests can go
 * through the stale-work path.  0: off.
 */
const volatile __u32 test_drop_every = 0;

struct task_ent {
	struct bpf_task_work tw;
	__u64 cookie;
	__u64 start_time;	/* task->start_time: tells tid reuse */
	__u64 sched_time;
	__u64 exec_id;		/* task->self_exec_id at the sample */
	__u32 pid;
	__u32 cpu;
	__u32 pending;
	__u32 pad;
};

/*
 * Records are submitted with BPF_RB_NO_WAKEUP: user space polls the ring
 * every 50 ms anyway, and a wakeup is one more self-IPI per record (tens
 * of microseconds each on a VM).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct task_ent);
} tasks SEC(".maps");

/* Per-CPU cookie counters, as the kernel's unwind_ctx_ctr; [1]: callbacks
 * asked for, for the test hook. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} ctr SEC(".maps");

/* The sample being built (the perf_event program is not preemptible). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sfb_sample);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SFB_ST__MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &what);

	if (v)
		*v += 1;
}

#include "bpf/sframe.bpf.h"

static int on_task_work(struct bpf_map *map, void *key, void *value)
{
	struct task_ent *ent = value;
	struct task_struct *task = bpf_get_current_task_btf();
	struct sfb_deferred *rec;
	struct pt_regs *regs;
	struct walk w = {};
	__u32 tid = key ? *(__u32 *)key : 0;

	count(SFB_ST_CALLBACKS);
	rec = bpf_ringbuf_reserve(&rb, sizeof(*rec), 0);
	if (!rec) {
		count(SFB_ST_RB_FULL);
		ent->pending = 0;
		return 0;
	}
	rec->type = SFB_REC_DEFERRED;
	rec->flags = 0;
	rec->pid = ent->pid;
	rec->tid = tid;
	rec->cpu = bpf_get_smp_processor_id();
	rec->cookie = ent->cookie;
	rec->nr = 0;
	rec->stop = 0;
	rec->sframe_frames = 0;
	rec->fp_frames = 0;
	if ((__u32)bpf_get_current_pid_tgid() != tid) {
		rec->flags |= SFB_D_WRONG_TASK;
	} else if (task->self_exec_id != ent->exec_id) {
		/* The user stack now belongs to the new image. */
		rec->flags |= SFB_D_EXEC;
		count(SFB_ST_EXEC);
	} else if (task->flags & PF_EXITING) {
		rec->flags |= SFB_D_EXITING;
		count(SFB_ST_EXITING);
	} else {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (regs) {
			w.rec = rec;
			w.task = task;
			w.ip = BPF_CORE_READ(regs, ip);
			w.sp = BPF_CORE_READ(regs, sp);
			w.fp = BPF_CORE_READ(regs, bp);
			w.fp_valid = 1;
			w.top = 1;
			w.pid = ent->pid;
			w.exec_id = task->self_exec_id;
			w.max = max_depth;
			bpf_loop(SFB_MAX_DEPTH + 1, walk_step, &w, 0);
			rec->nr = w.n;
			if (w.no_table) {
				rec->flags |= SFB_D_NO_TABLE;
				count(SFB_ST_NO_TABLE);
			}
		}
	}
	rec->time = bpf_ktime_get_ns();
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
	/* Last: a sample that comes meanwhile still shares this cookie. */
	ent->pending = 0;
	return 0;
}

static __always_inline __u64 new_cookie(__u32 cpu)
{
	__u32 zero = 0;
	__u64 *c = bpf_map_lookup_elem(&ctr, &zero), cnt;

	if (!c)
		return 0;
	cnt = (*c + 2) | 1;
	*c = cnt;
	return ((cnt & 0xffffffffULL) << 32) | (cpu + 1);
}

/*
 * Does the kernel still hold our callback (being scheduled, queued, or
 * running)?  Its own state of the bpf_task_work (6.18's enum
 * bpf_task_work_state), read through CO-RE.  Without this, a sample that
 * came while the task was running our callback (or the task_works queued
 * before it, which task_work_run() has already taken off task->task_works)
 * more than STALE_NS after scheduling, in the kernel with no task_work
 * queued, was taken for a lost callback: on a busy machine, where the task
 * is preempted inside the sleepable callback, that happened about once a
 * second.  false when the kernel's types are not there (the timing rules
 * of entry_cookie() alone decide then).
 */
static __always_inline bool work_in_kernel(struct task_ent *ent)
{
	struct bpf_task_work_kern *k = (void *)&ent->tw;
	struct bpf_task_work_ctx *c;
	int st;

	if (!bpf_core_type_exists(struct bpf_task_work_kern) ||
	    !bpf_core_type_exists(struct bpf_task_work_ctx))
		return false;
	c = BPF_CORE_READ(k, ctx);
	if (!c)
		return false;	/* never scheduled */
	st = BPF_CORE_READ(c, state);
	return st == bpf_core_enum_value(enum bpf_task_work_state, BPF_TW_PENDING) ||
	       st == bpf_core_enum_value(enum bpf_task_work_state, BPF_TW_SCHEDULING) ||
	       st == bpf_core_enum_value(enum bpf_task_work_state, BPF_TW_SCHEDULED) ||
	       st == bpf_core_enum_value(enum bpf_task_work_state, BPF_TW_RUNNING);
}

/* The cookie of the task's current kernel entry; 0: no user part. */
static __always_inline __u64 entry_cookie(struct task_struct *task, __u32 tid,
					  __u32 pid, __u32 cpu, bool user_mode,
					  __u64 now, __u32 *flags)
{
	struct task_ent *ent, zero = {};
	__u64 start = task->start_time, cookie;
	long err;

	ent = bpf_map_lookup_elem(&tasks, &tid);
	if (ent && ent->start_time != start) {
		/* tid reused by a new task: drop the old one's state. */
		count(SFB_ST_TID_REUSE);
		bpf_map_delete_elem(&tasks, &tid);
		ent = NULL;
	}
	if (ent && ent->pending) {
		/*
		 * Old pending work is lost when the task is back in user mode
		 * (it went back without running it), or, in the kernel, when
		 * the task has no queued task_work at all: ours is not queued,
		 * so no return to user space will run it.  Queued work of
		 * anyone means the same kernel entry may still be going on.
		 * Without the second rule a task that is rarely seen in user
		 * mode (syscall-heavy) shared a lost cookie for seconds.  And
		 * never while the kernel still holds it (work_in_kernel()).
		 */
		if (now - ent->sched_time < STALE_NS ||
		    (!user_mode && BPF_CORE_READ(task, task_works)) ||
		    work_in_kernel(ent)) {
			count(SFB_ST_SHARED);
			return ent->cookie;
		}
		/* Work still pending, not queued, not held: it was lost. */
		{
			struct sfb_stale *st;

			count(SFB_ST_STALE);
			st = bpf_ringbuf_reserve(&rb, sizeof(*st), 0);
			if (st) {
				st->type = SFB_REC_STALE;
				st->tid = tid;
				st->cookie = ent->cookie;
				st->age_ns = now - ent->sched_time;
				bpf_ringbuf_submit(st, BPF_RB_NO_WAKEUP);
			}
		}
		bpf_map_delete_elem(&tasks, &tid);
		ent = NULL;
	}
	if (!ent) {
		zero.start_time = start;
		bpf_map_update_elem(&tasks, &tid, &zero, BPF_NOEXIST);
		ent = bpf_map_lookup_elem(&tasks, &tid);
		if (!ent)
			return 0;
	}
	cookie = new_cookie(cpu);
	if (!cookie)
		return 0;
	ent->cookie = cookie;
	ent->pid = pid;
	ent->cpu = cpu;
	ent->exec_id = task->self_exec_id;
	ent->sched_time = now;
	ent->pending = 1;
	if (!sfb_ksym_exists(bpf_task_work_schedule_resume_impl)) {
		ent->pending = 0;
		return 0;
	}
	if (test_drop_every) {
		__u32 one = 1;
		__u64 *n = bpf_map_lookup_elem(&ctr, &one);

		if (n && ++*n % test_drop_every == 0) {
			count(SFB_ST_TEST_DROPPED);
			return cookie;	/* pending; no callback will come */
		}
	}
	err = bpf_task_work_schedule_resume_impl(task, &ent->tw, &tasks,
						 on_task_work, NULL);
	if (err) {
		ent->pending = 0;
		count(SFB_ST_SCHED_FAIL);
		*flags |= SFB_S_SCHED_FAIL;
		return 0;
	}
	count(SFB_ST_SCHEDULED);
	return cookie;
}

/* Frames the perf_event program walks itself (deeper stacks: deferred). */
#define SYNC_MAX_DEPTH 128

/*
 * A sample that interrupted user mode is its own kernel entry: the kernel
 * unwinds it on the return from this very interrupt, from these very
 * registers.  Scheduling a callback for it costs a self-IPI (tens of µs on
 * a VM), so walk it here when everything it needs is at hand: resident
 * stack pages (non-faulting reads), VMAs a callback already met, tables
 * loaded, at most SYNC_MAX_DEPTH frames.  Anything else, and the walk is
 * dropped and a callback scheduled as for any other sample.
 * Return: the cookie of the record written, 0 when not done.
 */
static __always_inline __u64 sync_unwind(struct bpf_perf_event_data *ctx,
					 struct task_struct *task, __u32 tid,
					 __u32 pid, __u32 cpu)
{
	struct task_ent *ent = bpf_map_lookup_elem(&tasks, &tid);
	struct sfb_deferred *rec;
	struct walk w = {};
	__u64 cookie;

	/* pending work: the stale-callback rules of entry_cookie() apply */
	if (ent && ent->pending)
		return 0;
	rec = bpf_ringbuf_reserve(&rb, sizeof(*rec), 0);
	if (!rec)
		return 0;
	rec->type = SFB_REC_DEFERRED;
	rec->flags = 0;
	rec->pid = pid;
	rec->tid = tid;
	rec->cpu = cpu;
	rec->nr = 0;
	rec->stop = 0;
	rec->sframe_frames = 0;
	rec->fp_frames = 0;
	w.rec = rec;
	w.task = task;
	w.ip = *(volatile __u64 *)&ctx->regs.ip;
	w.sp = *(volatile __u64 *)&ctx->regs.sp;
	w.fp = *(volatile __u64 *)&ctx->regs.bp;
	w.fp_valid = 1;
	w.top = 1;
	w.pid = pid;
	w.exec_id = task->self_exec_id;
	w.max = max_depth < SYNC_MAX_DEPTH ? max_depth : SYNC_MAX_DEPTH;
	bpf_loop(SYNC_MAX_DEPTH + 1, walk_step_nofault, &w, 0);
	if (w.sync_fail || w.no_table || rec->stop == SFB_STOP_UNREADABLE ||
	    (rec->stop == SFB_STOP_DEPTH && w.n < max_depth)) {
		bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
		return 0;
	}
	cookie = new_cookie(cpu);
	if (!cookie) {
		bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
		return 0;
	}
	rec->nr = w.n;
	rec->cookie = cookie;
	rec->time = bpf_ktime_get_ns();
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
	count(SFB_ST_SYNC);
	return cookie;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tid = (__u32)id, pid = id >> 32, zero = 0;
	__u32 cpu = bpf_get_smp_processor_id();
	struct sfb_sample *s;
	bool user_mode;
	long n;

	count(SFB_ST_SAMPLES);
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	/* whole-word loads: the context allows no narrower access here */
	user_mode = (*(volatile __u64 *)&ctx->regs.cs & 3) == 3;
	s->type = SFB_REC_SAMPLE;
	s->flags = user_mode ? 0 : SFB_S_KERNEL;
	s->pid = pid;
	s->tid = tid;
	s->cpu = cpu;
	s->evsel = (__u32)bpf_get_attach_cookie(ctx);
	s->time = now;
	s->ip = *(volatile __u64 *)&ctx->regs.ip;
	s->period = ctx->sample_period;
	s->cookie = 0;
	s->pad = 0;
	n = 0;
	if (!user_mode) {
		n = bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0);
		if (n < 0)
			n = 0;
	}
	s->nr_kstack = (__u32)(n / 8);
	if (tid && !(task->flags & PF_KTHREAD)) {
		if (task->flags & PF_EXITING) {
			/* The kernel refuses to defer here, too. */
			s->flags |= SFB_S_EXITING;
			count(SFB_ST_EXITING);
		} else {
			if (user_mode)
				s->cookie = sync_unwind(ctx, task, tid, pid, cpu);
			if (!s->cookie)
				s->cookie = entry_cookie(task, tid, pid, cpu,
							 user_mode, now,
							 &s->flags);
		}
	}
	n = offsetof(struct sfb_sample, kstack) + (__u64)s->nr_kstack * 8;
	if (n < (long)offsetof(struct sfb_sample, kstack) ||
	    n > (long)sizeof(*s))
		n = sizeof(*s);
	if (bpf_ringbuf_output(&rb, s, n, BPF_RB_NO_WAKEUP))
		count(SFB_ST_RB_FULL);
	/* perf writes nothing: the sample went out through the ring. */
	return 0;
}

/*
 * Test hook, never loaded unless SFPROF_BPF_TEST_VERIFIER_REJECT is set
 * ('?': libbpf leaves it out by default): a program the verifier must
 * refuse (a map value used without the NULL check; the key is not a
 * constant, else the verifier knows the lookup cannot fail), so that the tests can
 * go through a real rejection on any kernel and check the message and the
 * fallback to --call-graph sframe.
 */
SEC("?perf_event")
int verifier_reject(struct bpf_perf_event_data *ctx)
{
	__u32 k = bpf_get_prandom_u32();
	__u64 *v = bpf_map_lookup_elem(&stats, &k);

	(void)ctx;
	return (int)*v;
}
