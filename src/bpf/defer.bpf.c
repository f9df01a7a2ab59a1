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
/* Test hook (SFPROF_BPF_TEST_NO_WALK_AT_ONCE): never walk at once, every
 * kernel entry goes through the task_work callback. */
const volatile __u32 test_no_sync = 0;
/* Test hook (SFPROF_BPF_TEST_BUSY_USER_TABLE): a walk that finds the mmap
 * lock taken asks user space's table of the VMAs first, before the
 * callbacks' cache, so that the tests see that table answer (the cache
 * still answers for a process user space has not read yet). */
const volatile __u32 test_busy_user = 0;
/*
 * Test hook (SFPROF_BPF_TEST_MISS_SWITCH_IN=N): every Nth switch-in of a
 * blocked task a CPU sees is left unseen, as this kernel now and then
 * leaves one (on_switch()), so that the tests go through that path.
 */
const volatile __u32 test_miss_in_every = 0;
/* Test hook (SFPROF_BPF_TEST_NO_REUSE): every kernel entry of a block is
 * walked, none reuses the last walk's stack (same_stack()). */
const volatile __u32 test_no_reuse = 0;

struct task_ent {
	struct bpf_task_work tw;
	__u64 cookie;
	__u64 start_time;	/* task->start_time: tells tid reuse */
	__u64 sched_time;
	__u64 exec_id;		/* task->self_exec_id at the sample */
	__u32 pid;
	__u32 cpu;
	__u32 pending;
	/* An entry walked at once at a block (block_entry()): its cookie
	 * and a hash of the user registers it was entered with. */
	__u32 sync_open;
	__u64 sync_cookie;
	__u64 sync_regs;
	/* The cookie of the task's last record (sample or block; 0 after a
	 * callback's record): user space holds a walked entry's record only
	 * until a record of another cookie of the task comes. */
	__u64 last_cookie;
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
 * asked for, [2]: switch-ins of blocked tasks, for the test hooks. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
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

/* A deferred record's header before its walk: no frames, no stop yet. */
static __always_inline void deferred_init(struct sfb_deferred *rec,
					  __u32 flags, __u32 pid, __u32 tid,
					  __u32 cpu)
{
	rec->type = SFB_REC_DEFERRED;
	rec->flags = flags;
	rec->pid = pid;
	rec->tid = tid;
	rec->cpu = cpu;
	rec->nr = 0;
	rec->stop = 0;
	rec->sframe_frames = 0;
	rec->fp_frames = 0;
}

/* A walk of task's user stack into rec from the registers of its user
 * context (ip, sp, bp), at most max frames. */
static __always_inline void walk_init(struct walk *w, struct sfb_deferred *rec,
				      struct task_struct *task, __u32 pid,
				      __u64 ip, __u64 sp, __u64 fp, __u32 max)
{
	w->rec = rec;
	w->task = task;
	w->ip = ip;
	w->sp = sp;
	w->fp = fp;
	w->fp_valid = 1;
	w->top = 1;
	w->pid = pid;
	w->exec_id = task->self_exec_id;
	w->max = max;
}

/* Every record of task tid carries cookie (0: none). */
static __always_inline void note_cookie(__u32 tid, __u64 cookie)
{
	struct task_ent *ent = bpf_map_lookup_elem(&tasks, &tid);

	if (ent)
		ent->last_cookie = cookie;
}

static int on_task_work(struct bpf_map *map, void *key, void *value)
{
	struct task_ent *ent = value;
	struct task_struct *task = bpf_get_current_task_btf();
	struct sfb_deferred *rec;
	struct pt_regs *regs;
	struct walk w = {};
	__u32 tid = key ? *(__u32 *)key : 0;
	bool walked = false;

	count(SFB_ST_CALLBACKS);
	rec = bpf_ringbuf_reserve(&rb, sizeof(*rec), 0);
	if (!rec) {
		count(SFB_ST_RB_FULL);
		ent->pending = 0;
		return 0;
	}
	deferred_init(rec, 0, ent->pid, tid, bpf_get_smp_processor_id());
	rec->cookie = ent->cookie;
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
			walk_init(&w, rec, task, ent->pid,
				  BPF_CORE_READ(regs, ip),
				  BPF_CORE_READ(regs, sp),
				  BPF_CORE_READ(regs, bp), max_depth);
			bpf_loop(SFB_MAX_DEPTH + 1, walk_step, &w, 0);
			walked = true;
			rec->nr = w.n;
			if (w.no_table) {
				rec->flags |= SFB_D_NO_TABLE;
				count(SFB_ST_NO_TABLE);
			}
		}
	}
	rec->time = bpf_ktime_get_ns();
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
	/* the task returns to user space: any entry is over, and user
	 * space writes and forgets a record it held for the task */
	ent->sync_open = 0;
	ent->last_cookie = 0;
	/* Last: a sample that comes meanwhile still shares this cookie. */
	ent->pending = 0;
	/* After the record: its walk is not delayed by the read. */
	if (walked)
		fill_vmas(task);
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
	*flags |= SFB_S_NEW_ENTRY;
	ent->sync_open = 0;
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

/* The user registers of a blocking task (the per-CPU copy). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pt_regs);
} regs_scratch SEC(".maps");

static __always_inline __u64 mix64(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/*
 * A hash of the task's user registers as its kernel entry saved them
 * (ip, sp, bp, flags, orig_ax, the general registers but ax): what tells
 * one kernel entry from the next at the same call site (block_entry()).
 * Return: 0 or -1 (not readable).
 */
static __always_inline int user_regs_hash(struct task_struct *task, __u64 *hash,
					  struct pt_regs **regs)
{
	__u64 h = 0xcbf29ce484222325ULL;
	struct pt_regs *r;
	__u32 z = 0;

	r = bpf_map_lookup_elem(&regs_scratch, &z);
	if (!r || bpf_probe_read_kernel(r, sizeof(*r),
					(void *)bpf_task_pt_regs(task)))
		return -1;
	h = mix64(h, r->ip);
	h = mix64(h, r->sp);
	h = mix64(h, r->bp);
	h = mix64(h, r->bx);
	h = mix64(h, r->cx);
	h = mix64(h, r->dx);
	h = mix64(h, r->si);
	h = mix64(h, r->di);
	h = mix64(h, r->r8);
	h = mix64(h, r->r9);
	h = mix64(h, r->r10);
	h = mix64(h, r->r11);
	h = mix64(h, r->r12);
	h = mix64(h, r->r13);
	h = mix64(h, r->r14);
	h = mix64(h, r->r15);
	h = mix64(h, r->flags);
	h = mix64(h, r->orig_ax);
	*hash = h;
	*regs = r;
	return 0;
}

/*
 * A kernel-mode sample of a task whose entry was walked at a block and is
 * still open (same user registers): the entry's cookie, no task_work.
 * 0: none open.
 */
static __always_inline __u64 open_entry_cookie(struct task_struct *task,
					       __u32 tid)
{
	struct task_ent *ent = bpf_map_lookup_elem(&tasks, &tid);
	struct pt_regs *r;
	__u64 h;

	if (!ent || !ent->sync_open || ent->pending ||
	    ent->start_time != task->start_time ||
	    user_regs_hash(task, &h, &r) || h != ent->sync_regs)
		return 0;
	count(SFB_ST_SHARED);
	return ent->sync_cookie;
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

	/* in user mode: a block's entry walked at once is over */
	if (ent)
		ent->sync_open = 0;
	/* pending work: the stale-callback rules of entry_cookie() apply */
	if (test_no_sync || (ent && ent->pending))
		return 0;
	rec = bpf_ringbuf_reserve(&rb, sizeof(*rec), 0);
	if (!rec)
		return 0;
	deferred_init(rec, 0, pid, tid, cpu);
	walk_init(&w, rec, task, pid, *(volatile __u64 *)&ctx->regs.ip,
		  *(volatile __u64 *)&ctx->regs.sp,
		  *(volatile __u64 *)&ctx->regs.bp,
		  max_depth < SYNC_MAX_DEPTH ? max_depth : SYNC_MAX_DEPTH);
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
			else
				s->cookie = open_entry_cookie(task, tid);
			if (!s->cookie)
				s->cookie = entry_cookie(task, tid, pid, cpu,
							 user_mode, now,
							 &s->flags);
		}
	}
	if (tid)
		note_cookie(tid, s->cookie);
	n = offsetof(struct sfb_sample, kstack) + (__u64)s->nr_kstack * 8;
	if (n < (long)offsetof(struct sfb_sample, kstack) ||
	    n > (long)sizeof(*s))
		n = sizeof(*s);
	if (bpf_ringbuf_output(&rb, s, n, BPF_RB_NO_WAKEUP))
		count(SFB_ST_RB_FULL);
	/* perf writes nothing: the sample went out through the ring. */
	return 0;
}

/* --- off-CPU time (--off-cpu) ------------------------------------------- */

/*
 * Set by the loader for --off-cpu: every task's blocks (-a), else those of
 * the tasks in `targets`; forked processes of a target process become
 * targets (perf's inherit).
 */
const volatile __u32 offcpu_all = 0;
const volatile __u32 offcpu_follow = 0;
/* Kernel frames bpf_get_stack() gives before __schedule's caller chain
 * begins (the BPF program and the tracepoint's trampolines), measured by
 * the loader. */
const volatile __u32 offcpu_kskip = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u32);	/* SFB_TGT_* */
} targets SEC(".maps");

/* Blocked target tasks, by tid: their record, written at the switch-in.
 * Preallocated (18 MiB): an allocation in sched_switch may fail when the
 * per-CPU free lists run dry (their refill is an irq_work), and a block
 * lost is time lost. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct sfb_offcpu);
} blocked SEC(".maps");

/* The block being built (sched_switch runs with interrupts off). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sfb_offcpu);
} off_scratch SEC(".maps");

static __always_inline bool is_target(struct task_struct *t)
{
	__u32 tgid = t->tgid, tid = t->pid, *v;

	if (offcpu_all)
		return true;
	v = bpf_map_lookup_elem(&targets, &tgid);
	if (v && (*v & SFB_TGT_PROCESS))
		return true;
	if (tid == tgid)
		return false;
	v = bpf_map_lookup_elem(&targets, &tid);
	return v && (*v & SFB_TGT_THREAD);
}

/*
 * The state letter sched:sched_switch reports for prev (the kernel's
 * __trace_sched_switch_state()): preempted 0x100; else the highest bit of
 * (state | exit_state) & TASK_REPORT, TASK_IDLE as I (0x80), an rtlock
 * wait as D; R (running) 0.  The tracepoint path (record/offcpu.c) reads
 * the same letters from the event, so both count blocks alike.
 */
static __always_inline __u32 report_state(bool preempt, struct task_struct *t,
					  unsigned int ps)
{
	__u32 st = (ps | (__u32)t->exit_state) & 0x7f;

	if (preempt)
		return 0x100;
	if ((ps & 0x402) == 0x402)	/* TASK_IDLE */
		st = 0x80;
	if (ps & 0x1000)		/* TASK_RTLOCK_WAIT */
		st = 0x2;
	if (st & 0x80)
		return 0x80;
	if (st & 0x40)
		return 0x40;
	if (st & 0x20)
		return 0x20;
	if (st & 0x10)
		return 0x10;
	if (st & 0x8)
		return 0x8;
	if (st & 0x4)
		return 0x4;
	if (st & 0x2)
		return 0x2;
	return st & 0x1;
}

/* The record of a block's entry walked at once (sched_switch runs with
 * interrupts off: one per CPU is enough). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sfb_deferred);
} held_scratch SEC(".maps");

/* The last walk at a block of each task, with what it read. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct walk_log);
} walks SEC(".maps");

/* The log of the walk being made (sched_switch runs with interrupts off). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_log);
} walk_log_scratch SEC(".maps");

/*
 * A new kernel entry of a blocking task whose user stack is the one its
 * last walk found: same ip, sp and bp, same image, and every stack slot
 * that walk read still holding what it read -- a walk is a function of
 * those (and of tables, which only come and never change).  A pipe
 * ping-pong blocks in read() from the same frame every time, with other
 * loop registers: each block a new entry, its stack the same.  Its
 * cookie then serves the new entry too, while user space still holds
 * that cookie's record (no record of another cookie since): the record
 * is written again after the new blocks, which is how readers pair a
 * sample with the next record of its cookie.  No walk, no record.
 * Return: the cookie, 0 when the stack must be walked.
 */
static __always_inline __u64 same_stack(struct task_struct *task, __u32 tid,
					 const struct task_ent *ent,
					 const struct pt_regs *r, __u64 start)
{
	struct walk_log *wl = bpf_map_lookup_elem(&walks, &tid);
	__u32 i, n;
	__u64 v;

	if (!wl || !wl->cookie || wl->cookie != ent->last_cookie ||
	    wl->ip != r->ip || wl->sp != r->sp || wl->bp != r->bp ||
	    wl->exec_id != task->self_exec_id || wl->start_time != start)
		return 0;
	n = wl->n;
	if (n > SFB_WLOG_SLOTS)
		return 0;
	for (i = 0; i < SFB_WLOG_SLOTS; i++) {
		if (i >= n)
			break;
		if (bpf_probe_read_user(&v, sizeof(v), (void *)wl->addr[i]) ||
		    v != wl->val[i])
			return 0;
	}
	return wl->cookie;
}

/*
 * The cookie of a blocking task's kernel entry without a task_work when
 * the entry can be unwound at once: scheduling one sends a self-IPI
 * (irq_work), tens of microseconds on a VM, and a task blocking in a
 * syscall is a new entry nearly every time (a pipe ping-pong: every
 * read).  Its user stack cannot change until it returns to user space,
 * so the walk at the block is the walk the task_work would do -- when it
 * needs no fault (resident stack, VMAs the callbacks met, tables loaded),
 * as for a user-mode sample (sync_unwind()).  The record goes to the ring
 * flagged SFB_D_HELD: user space writes it after the entry's last block
 * (the stitcher wants it after the samples it serves).
 *
 * Later blocks share the cookie while the entry is open: from the walk
 * until the task is seen in user mode (a user-mode sample, a callback)
 * or blocks with other user registers (ip, sp, bp, flags, orig_ax and
 * the general registers but ax: another entry from the same call site
 * nearly always differs in a loop counter or pointer -- the rule the
 * user-space deferral engine applies to the tracepoint path's blocks).
 * Return: the cookie, 0 when the task_work path must decide.
 */
static __always_inline __u64 block_entry(struct task_struct *task, __u32 tid,
					 __u32 pid, __u32 cpu, __u32 *flags)
{
	struct task_ent *ent = bpf_map_lookup_elem(&tasks, &tid), zero = {};
	__u64 start = task->start_time, h, cookie;
	struct walk_log *wl;
	struct sfb_deferred *rec;
	struct walk w = {};
	struct pt_regs *r;
	__u32 z = 0;
	long n;

	if (test_no_sync ||
	    (ent && (ent->start_time != start || ent->pending)))
		return 0;	/* tid reuse, pending work: entry_cookie() */
	if (user_regs_hash(task, &h, &r))
		return 0;
	if (ent && ent->sync_open && ent->sync_regs == h) {
		count(SFB_ST_SHARED);
		return ent->sync_cookie;
	}
	if (ent)
		ent->sync_open = 0;
	if ((r->cs & 3) != 3)
		return 0;	/* no user context */
	if (ent && !test_no_reuse &&
	    (cookie = same_stack(task, tid, ent, r, start))) {
		ent->pid = pid;
		ent->sync_open = 1;
		ent->sync_regs = h;
		ent->sync_cookie = cookie;
		count(SFB_ST_OFF_REUSED);
		return cookie;
	}
	/* walked into a per-CPU copy, written with its frames only: a
	 * switch-heavy task would fill the ring with 4 KiB reservations */
	rec = bpf_map_lookup_elem(&held_scratch, &z);
	if (!rec)
		return 0;
	deferred_init(rec, SFB_D_HELD, pid, tid, cpu);
	walk_init(&w, rec, task, pid, r->ip, r->sp, r->bp,
		  max_depth < SYNC_MAX_DEPTH ? max_depth : SYNC_MAX_DEPTH);
	wl = bpf_map_lookup_elem(&walk_log_scratch, &z);
	if (wl)
		wl->n = 0;
	w.log = wl;
	bpf_loop(SYNC_MAX_DEPTH + 1, walk_step_nofault, &w, 0);
	if (w.sync_fail || w.no_table || rec->stop == SFB_STOP_UNREADABLE ||
	    (rec->stop == SFB_STOP_DEPTH && w.n < max_depth))
		return 0;
	if (!ent) {
		zero.start_time = start;
		bpf_map_update_elem(&tasks, &tid, &zero, BPF_NOEXIST);
		ent = bpf_map_lookup_elem(&tasks, &tid);
	}
	cookie = new_cookie(cpu);
	if (!ent || !cookie)
		return 0;
	rec->nr = w.n;
	rec->cookie = cookie;
	rec->time = bpf_ktime_get_ns();
	n = offsetof(struct sfb_deferred, ips) + (__u64)(w.n & 1023) * 8;
	if (n > (long)sizeof(*rec))
		n = sizeof(*rec);
	if (bpf_ringbuf_output(&rb, rec, n, BPF_RB_NO_WAKEUP)) {
		count(SFB_ST_RB_FULL);
		return 0;
	}
	ent->pid = pid;
	ent->sync_open = 1;
	ent->sync_regs = h;
	ent->sync_cookie = cookie;
	*flags |= SFB_S_NEW_ENTRY;
	count(SFB_ST_OFF_WALKED);
	if (wl && wl->n <= SFB_WLOG_SLOTS) {
		wl->ip = r->ip;
		wl->sp = r->sp;
		wl->bp = r->bp;
		wl->exec_id = task->self_exec_id;
		wl->start_time = start;
		wl->cookie = cookie;
		bpf_map_update_elem(&walks, &tid, wl, BPF_ANY);
	}
	return cookie;
}

/*
 * Every context switch.  next: if it is a blocked target, its block ends
 * now and goes to the ring.  prev (the current task): a blocking
 * switch-out of a target takes its kernel stack and the cookie of its
 * kernel entry -- shared when the entry already has one (a sample, an
 * earlier block of the same entry), else new with the entry's one user
 * unwind scheduled (the same task_work as the samples') -- and waits in
 * `blocked` for the switch-in.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 ntid = next->pid, ptid = prev->pid, pid, zero = 0, rep, cpu;
	struct task_struct *task;
	struct sfb_offcpu *o;
	long n;

	if (ntid) {
		o = bpf_map_lookup_elem(&blocked, &ntid);
		if (o && test_miss_in_every) {
			__u32 two = 2;
			__u64 *c = bpf_map_lookup_elem(&ctr, &two);

			if (c && ++*c % test_miss_in_every == 0)
				o = NULL;	/* the hook: not seen */
		}
		if (o) {
			o->time_in = now;
			n = offsetof(struct sfb_offcpu, kstack) +
			    (__u64)o->nr_kstack * 8;
			if (n < (long)offsetof(struct sfb_offcpu, kstack) ||
			    n > (long)sizeof(*o))
				n = sizeof(*o);
			if (bpf_ringbuf_output(&rb, o, n, BPF_RB_NO_WAKEUP))
				count(SFB_ST_RB_FULL);
			else
				count(SFB_ST_OFF_WOKEN);
			bpf_map_delete_elem(&blocked, &ntid);
		}
	}
	if (!ptid || !is_target(prev))
		return 0;
	count(SFB_ST_OFF_SWITCHES);
	/*
	 * prev still has a block waiting for its switch-in, yet it ran:
	 * this program did not see that switch-in.  Seen on this kernel
	 * under load about once in 50 runs of the test's 1.3 s workload
	 * (a thread woken from a sleep while both CPUs ran busy loops;
	 * the program's recursion_misses stayed 0, and the task's nvcsw
	 * had moved on by exactly that block).  The block ended when the
	 * task was switched in: now, less the CPU time it has run since
	 * (time_in holds its sum_exec_runtime at the switch-out) -- exact
	 * unless it was also preempted meanwhile.  Written now, counted.
	 */
	o = bpf_map_lookup_elem(&blocked, &ptid);
	if (o) {
		__u64 ran = prev->se.sum_exec_runtime - o->time_in;

		o->time_in = now - ran > o->time_out && ran < now ?
				     now - ran : o->time_out;
		o->flags |= SFB_S_IN_UNSEEN;
		n = offsetof(struct sfb_offcpu, kstack) +
		    (__u64)o->nr_kstack * 8;
		if (n < (long)offsetof(struct sfb_offcpu, kstack) ||
		    n > (long)sizeof(*o))
			n = sizeof(*o);
		if (bpf_ringbuf_output(&rb, o, n, BPF_RB_NO_WAKEUP)) {
			count(SFB_ST_RB_FULL);
		} else {
			count(SFB_ST_OFF_WOKEN);
			count(SFB_ST_OFF_IN_UNSEEN);
		}
		bpf_map_delete_elem(&blocked, &ptid);
	}
	rep = report_state(preempt, prev, prev_state);
	if (!(rep & 0xcf)) {
		count(rep & 0x30 ? SFB_ST_OFF_EXITS : SFB_ST_OFF_PREEMPTED);
		return 0;
	}
	count(SFB_ST_OFF_BLOCKS);
	o = bpf_map_lookup_elem(&off_scratch, &zero);
	if (!o)
		return 0;
	task = bpf_get_current_task_btf();	/* prev */
	pid = task->tgid;
	cpu = bpf_get_smp_processor_id();
	o->type = SFB_REC_OFFCPU;
	o->flags = SFB_S_KERNEL;
	o->pid = pid;
	o->tid = ptid;
	o->cpu = cpu;
	o->time_out = now;
	/* until the switch-in: the task's CPU time (see above) */
	o->time_in = prev->se.sum_exec_runtime;
	o->cookie = 0;
	n = bpf_get_stack(ctx, o->kstack, sizeof(o->kstack),
			  offcpu_kskip & BPF_F_SKIP_FIELD_MASK);
	o->nr_kstack = n > 0 ? (__u32)((__u64)n / 8) : 0;
	if (!(task->flags & PF_KTHREAD) && task->pid == ptid) {
		if (task->flags & PF_EXITING) {
			o->flags |= SFB_S_EXITING;
			count(SFB_ST_EXITING);
		} else {
			o->cookie = block_entry(task, ptid, pid, cpu, &o->flags);
			if (!o->cookie)
				o->cookie = entry_cookie(task, ptid, pid, cpu,
							 false, now, &o->flags);
		}
	}
	note_cookie(ptid, o->cookie);
	if (bpf_map_update_elem(&blocked, &ptid, o, BPF_ANY))
		count(SFB_ST_OFF_LOST);
	return 0;
}

/* A target process's children are targets (perf's inherit). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid, *v,
	      kind = SFB_TGT_PROCESS;

	if (offcpu_all || !offcpu_follow || ptgid == ctgid)
		return 0;
	v = bpf_map_lookup_elem(&targets, &ptgid);
	if (v && (*v & SFB_TGT_PROCESS))
		bpf_map_update_elem(&targets, &ctgid, &kind, BPF_ANY);
	return 0;
}

/* The command is a target from its exec on (perf's enable_on_exec): its
 * blocks before, in sfprof's own code, are not the command's. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid, *v;

	v = bpf_map_lookup_elem(&targets, &tgid);
	if (v && (*v & SFB_TGT_AT_EXEC))
		*v = SFB_TGT_PROCESS;
	return 0;
}

/*
 * The executable VMAs of a process (or of all), for user space's table
 * (proc_uvmas): read here, under the mmap lock the iterator takes, with
 * the self_exec_id that says which image they belong to.  exec() installs
 * its new mm before it raises self_exec_id: with the id read first and
 * the task's mm seen to be still the VMA's after, the id is the VMAs'
 * image's (on an exec in between the VMA is left out, and the next MMAP2
 * brings a new read).
 */
SEC("iter/task_vma")
int dump_vmas(struct bpf_iter__task_vma *ctx)
{
	struct task_struct *task = ctx->task;
	struct vm_area_struct *vma = ctx->vma;
	struct sfb_uvma_rec r = {};
	struct file *f;

	if (!task || !vma || !(vma->vm_flags & VM_EXEC_FLAG))
		return 0;
	r.exec_id = task->self_exec_id;
	/* (exec's de_thread() gives a new leader the old one's) */
	r.lstart = BPF_CORE_READ(task, group_leader, start_time);
	asm volatile("" ::: "memory");
	if (task->mm != vma->vm_mm)
		return 0;
	f = vma->vm_file;
	if (f) {
		r.ino = BPF_CORE_READ(f, f_inode, i_ino);
		r.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	} else if ((__u64)BPF_CORE_READ(vma, vm_mm, context.vdso) ==
		   vma->vm_start) {
		r.dev = SFB_VDSO_DEV;	/* as vma_cb names it */
		r.ino = SFB_VDSO_INO;
	} else {
		return 0;		/* anonymous code: no table */
	}
	r.start = vma->vm_start;
	r.end = vma->vm_end;
	r.pgoff = vma->vm_pgoff;
	r.tgid = task->tgid;
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
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
