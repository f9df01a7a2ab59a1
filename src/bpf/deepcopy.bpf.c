// SPDX-License-Identifier: MIT
/*
 * Deep stacks in the sframe mode at the sample (docs/record.md, "Deep
 * stacks"): a perf_event program on the sampling events which, for the
 * threads user space asked for (a walk of theirs ran out of the perf
 * snapshot), copies the user stack past the snapshot into a ring buffer.
 * It runs in the overflow interrupt before perf copies its snapshot, the
 * task stopped: both are the same instant's bytes, where reading the live
 * task later (record/deep.c's fallback) finds the thread elsewhere or
 * gone.  The reads cannot fault here (bpf_probe_read_user): a page not
 * present ends the copy, counted.  The program returns 1, so perf writes
 * its sample as without it.  No kfunc: loads where bpf-defer's task_work
 * is refused.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/deepcopy-shared.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* The snapshot's size (record's --stack-size), set before loading. */
const volatile __u32 snap_size = 16384;

/* Bytes past the snapshot a thread needs (user space's estimate). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SFD_MAX_TASKS);
	__type(key, __u32);		/* tid */
	__type(value, struct sfd_want);
} wants SEC(".maps");

/* The same for threads not in `wants` yet, by their comm: a new process
 * of a program whose walks ran out (each cc1, each Go compile) is deep
 * from its first sample, before user space has seen it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, char[16]);
	__type(value, struct sfd_want);
} comm_wants SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 32 << 20);	/* resized by user space */
} rb SEC(".maps");

/* One record being built per CPU (an array: a per-CPU value is limited
 * to 32 KiB); the program does not nest on a CPU. */
struct scratch {
	struct sfd_rec h;
	__u8 data[SFD_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* the number of CPUs, set at load */
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SFD_NR_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static void count(__u32 i, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &i);

	if (c)
		*c += n;
}

struct loop_ctx {
	struct scratch *s;
	__u64 start;
	__u32 total, got;
};

/* One page more, or stop (1) at the end or at a page not present. */
static long copy_page(__u32 i, void *arg)
{
	struct loop_ctx *lc = arg;
	__u32 got = lc->got, n;

	if (got >= lc->total || got > SFD_MAX - SFD_PAGE)
		return 1;
	n = lc->total - got;
	if (n > SFD_PAGE)
		n = SFD_PAGE;
	if (bpf_probe_read_user(lc->s->data + got, n,
				(const void *)(lc->start + got)))
		return 1;
	lc->got = got + n;
	return 0;
}

struct chain_ctx {
	__u64 bp, lo, hi;	/* the chain's frame; the bytes copied */
	__u64 out;		/* where it left them */
	__u32 steps;
};

/* One frame up the frame-pointer chain, or stop (1): it left [lo, hi)
 * (out), ended, or went inwards (no chain). */
static long chain_step(__u32 i, void *arg)
{
	struct chain_ctx *c = arg;
	__u64 nbp;

	if (c->bp < c->lo || c->bp >= c->hi) {
		c->out = c->bp;
		return 1;
	}
	if (c->bp & 7 ||
	    bpf_probe_read_user(&nbp, sizeof(nbp), (const void *)c->bp) ||
	    !nbp || (nbp >= c->lo && nbp <= c->bp))
		return 1;
	c->bp = nbp;
	c->steps++;
	return 0;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	/* the events' clock (CLOCK_MONOTONIC), microseconds from the
	 * sample's own stamp: the pairing's key */
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, cpu = bpf_get_smp_processor_id();
	struct sfd_want *w;
	__u32 total, first, got, other;
	struct chain_ctx cc;
	struct loop_ctx lc;
	char comm[16];
	struct scratch *s;
	struct pt_regs *ur;
	__u64 sp, ip, bp, start;

	if (!tid)
		return 1;
	w = bpf_map_lookup_elem(&wants, &tid);
	if (!w) {
		__builtin_memset(comm, 0, sizeof(comm));
		bpf_get_current_comm(comm, sizeof(comm));
		w = bpf_map_lookup_elem(&comm_wants, comm);
		if (!w)
			return 1;
	}
	total = w->bytes;
	other = w->other;
	if (other > SFD_OTHER_MAX)
		other = SFD_OTHER_MAX;
	if (!total && !other)
		return 1;
	if (total)
		total += SFD_OVERLAP;
	if (total > SFD_MAX)
		total = SFD_MAX;
	/* room for the other stack's copy after this one's */
	if (other && total > SFD_MAX - other)
		total = SFD_MAX - other > SFD_OVERLAP + SFD_PAGE
				? SFD_MAX - other
				: 0;
	/* The user registers perf takes for the sample: the interrupted
	 * ones in user mode, else the task's saved ones. */
	if ((*(volatile __u64 *)&ctx->regs.cs & 3) == 3) {
		sp = *(volatile __u64 *)&ctx->regs.sp;
		ip = *(volatile __u64 *)&ctx->regs.ip;
		bp = *(volatile __u64 *)&ctx->regs.bp;
	} else {
		struct task_struct *t = bpf_get_current_task_btf();

		if (t->flags & 0x00200000 /* PF_KTHREAD */) {
			count(SFD_CTR_NO_REGS, 1);
			return 1;
		}
		ur = (struct pt_regs *)bpf_task_pt_regs(t);
		if (!ur) {
			count(SFD_CTR_NO_REGS, 1);
			return 1;
		}
		sp = ur->sp;
		ip = ur->ip;
		bp = ur->bp;
	}
	s = bpf_map_lookup_elem(&scratch, &cpu);
	if (!s)
		return 1;
	start = sp + snap_size - SFD_OVERLAP;
	/* Up to the first page boundary, then page by page: a read is all
	 * or nothing, so a page not present keeps the pages before it. */
	first = SFD_PAGE - (__u32)(start & (SFD_PAGE - 1));
	if (first > total)
		first = total;
	first &= 2 * SFD_PAGE - 1;
	lc.s = s;
	if (!total) {
		/* only the other stack asked for */
		got = 0;
	} else if (bpf_probe_read_user(s->data, first, (const void *)start)) {
		count(SFD_CTR_UNREADABLE, 1);
		/* a short stack (Go's g0) may still lead to another */
		if (!other)
			return 1;
		got = 0;
	} else {
		lc.start = start;
		lc.total = total;
		lc.got = first;
		/* bpf_loop: the body is verified once, not once per page */
		bpf_loop(SFD_MAX / SFD_PAGE, copy_page, &lc, 0);
		got = lc.got;
		if (got < total)
			count(SFD_CTR_SHORT, 1);
	}
	s->h.other = 0;
	s->h.other_len = 0;
	s->h.chain = 0;
	if (other && got <= SFD_MAX - SFD_PAGE) {
		/* Follow the chain from the sample's frame pointer; where it
		 * leaves the bytes copied, copy from the frame it leads to,
		 * after this copy's bytes. */
		cc.bp = bp;
		cc.lo = sp;
		/* (without a copy: the snapshot's end, as far as perf could
		 * read it) */
		cc.hi = got ? start + got : sp + snap_size;
		cc.out = 0;
		cc.steps = 0;
		bpf_loop(SFD_CHAIN_MAX, chain_step, &cc, 0);
		s->h.chain = cc.steps;
		if (cc.out && !(cc.out & 7)) {
			__u32 room = SFD_MAX - got, at = got & (SFD_MAX - 1);
			__u32 head = (__u32)(cc.out & (SFD_PAGE - 1));

			lc.start = cc.out - got;
			lc.got = got;
			lc.total = got + (room < other ? room : other);
			/* Up to the page boundary first, as above: a read
			 * across the stack's end would lose the page below
			 * it, with the outermost frames. */
			if (head) {
				first = SFD_PAGE - head;
				if (first > lc.total - got)
					first = lc.total - got;
				first &= SFD_PAGE - 1;
				if (at <= SFD_MAX - SFD_PAGE && first &&
				    !bpf_probe_read_user(s->data + at, first,
							 (const void *)cc.out))
					lc.got = got + first;
				else
					lc.total = got;
			}
			bpf_loop(SFD_OTHER_MAX / SFD_PAGE + 1, copy_page, &lc,
				 0);
			if (lc.got > got) {
				s->h.other = cc.out;
				s->h.other_len = lc.got - got;
				count(SFD_CTR_OTHER, 1);
				count(SFD_CTR_OTHER_BYTES, lc.got - got);
			}
		}
	}
	s->h.pid = id >> 32;
	s->h.tid = tid;
	s->h.ip = ip;
	s->h.sp = sp;
	s->h.start = start;
	s->h.len = got;
	s->h.asked = total;
	s->h.time = now;
	if (!got && !s->h.other_len)
		return 1;
	got += s->h.other_len;
	if (got > SFD_MAX)
		got = SFD_MAX;
	if (bpf_ringbuf_output(&rb, s, sizeof(s->h) + got, 0)) {
		count(SFD_CTR_RING_FULL, 1);
		return 1;
	}
	count(SFD_CTR_COPIES, 1);
	count(SFD_CTR_BYTES, got);
	return 1;
}
