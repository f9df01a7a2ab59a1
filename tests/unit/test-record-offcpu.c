// SPDX-License-Identifier: MIT
/*
 * The off-CPU accounting (src/record/offcpu.c) without a kernel: which
 * switch-outs are blocks, the blocked time from switch-out to switch-in,
 * the threshold's per-stack sums, the rate bound, and blocks without an
 * end.  Nothing may be lost: every woken block's time is in one sample.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record/offcpu.h"
#include "test.h"

struct out {
	size_t n;
	uint32_t tid[64];
	uint64_t period[64], time[64];
	enum sfp_defer_user_kind kind[64];
	uint64_t cookie[64];
	size_t nr_user[64], nr_chain[64];
	uint32_t pid[64], cpu[64];
	uint64_t id[64], ip[64];
	uint16_t misc[64];
	uint64_t total;
};

static int on_emit(void *ctx, const struct sfp_perf_sample *s,
		   const struct sfp_defer_user *u)
{
	struct out *o = ctx;

	o->total += s->period;
	if (o->n >= 64) {
		o->n++;		/* counted, not kept */
		return 0;
	}
	o->tid[o->n] = s->tid;
	o->period[o->n] = s->period;
	o->time[o->n] = s->time;
	o->kind[o->n] = u->kind;
	o->cookie[o->n] = u->cookie;
	o->nr_user[o->n] = u->nr;
	o->nr_chain[o->n] = s->nr_ips;
	o->pid[o->n] = s->pid;
	o->cpu[o->n] = s->cpu;
	o->id[o->n] = s->id;
	o->ip[o->n] = s->ip;
	o->misc[o->n] = s->misc;
	o->n++;
	return 0;
}

static const uint64_t kchain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010,
				   0xffffffff81000020 };
static const uint64_t ustack_a[] = { 0x401000, 0x402000, 0x403000 };
static const uint64_t ustack_b[] = { 0x501000, 0x502000 };

static void block(struct sfp_offcpu *oc, uint32_t tid, uint64_t time,
		  const uint64_t *u, size_t nu, uint64_t cookie)
{
	struct sfp_perf_sample s = {
		.pid = 100, .tid = tid, .time = time, .ip = kchain[1],
		.ips = kchain, .nr_ips = 3,
	};
	struct sfp_defer_user du = { .kind = SFP_DEFER_USER_DEFERRED,
				     .cookie = cookie, .unwound = u,
				     .nr_unwound = nu };

	ASSERT_EQ(sfp_offcpu__block(oc, &s, &du), 0);
}

TEST(offcpu_states)
{
	SFP_OPTS(sfp_offcpu_opts, oo);
	struct out o = { 0 };
	struct sfp_offcpu *oc = NULL;
	struct sfp_offcpu_stats st;

	if (!ASSERT_EQ(sfp_offcpu__new(&oo, on_emit, &o, &oc), 0))
		return;
	ASSERT_TRUE(sfp_offcpu__is_block(oc, 0x1));	/* S */
	ASSERT_TRUE(sfp_offcpu__is_block(oc, 0x2));	/* D */
	ASSERT_TRUE(sfp_offcpu__is_block(oc, 0x80));	/* I */
	ASSERT_FALSE(sfp_offcpu__is_block(oc, 0));	/* R: preempted */
	ASSERT_FALSE(sfp_offcpu__is_block(oc, 0x100));	/* R+ */
	ASSERT_FALSE(sfp_offcpu__is_block(oc, 0x10));	/* X */
	ASSERT_FALSE(sfp_offcpu__is_block(oc, 0x20));	/* Z */
	sfp_offcpu__stats(oc, &st);
	ASSERT_EQ(st.switches, 7);
	ASSERT_EQ(st.blocks, 3);
	ASSERT_EQ(st.preempted, 2);
	ASSERT_EQ(st.exits, 2);
	sfp_offcpu__free(&oc);
}

TEST(offcpu_own_samples_at_switch_in)
{
	SFP_OPTS(sfp_offcpu_opts, oo);
	struct out o = { 0 };
	struct sfp_offcpu *oc = NULL;

	if (!ASSERT_EQ(sfp_offcpu__new(&oo, on_emit, &o, &oc), 0))
		return;
	block(oc, 7, 1000, ustack_a, 3, 0x300000001);
	block(oc, 8, 1500, ustack_b, 2, 0x500000001);
	ASSERT_EQ(sfp_offcpu__wake(oc, 9, 1800), 0);	/* not blocked */
	ASSERT_EQ(o.n, 0);
	ASSERT_EQ(sfp_offcpu__wake(oc, 7, 5000), 0);
	ASSERT_EQ(sfp_offcpu__wake(oc, 7, 6000), 0);	/* already woken */
	ASSERT_EQ(sfp_offcpu__wake(oc, 8, 2500), 0);
	if (!ASSERT_EQ(o.n, 2))
		goto out;
	ASSERT_EQ(o.tid[0], 7);
	ASSERT_EQ(o.period[0], 4000);
	ASSERT_EQ(o.time[0], 5000);	/* stamped at the switch-in */
	ASSERT_EQ(o.kind[0], SFP_DEFER_USER_DEFERRED);
	ASSERT_EQ(o.cookie[0], 0x300000001);
	ASSERT_EQ(o.nr_chain[0], 3);
	ASSERT_EQ(o.period[1], 1000);
	ASSERT_EQ(o.cookie[1], 0x500000001);
	ASSERT_EQ(sfp_offcpu__finish(oc, 9000), 0);
	ASSERT_EQ(o.n, 2);
out:
	sfp_offcpu__free(&oc);
}

TEST(offcpu_short_blocks_summed_per_stack)
{
	SFP_OPTS(sfp_offcpu_opts, oo, .thresh_ns = 1000);
	struct out o = { 0 };
	struct sfp_offcpu *oc = NULL;
	struct sfp_offcpu_stats st;
	uint64_t t = 0;
	int i;

	if (!ASSERT_EQ(sfp_offcpu__new(&oo, on_emit, &o, &oc), 0))
		return;
	/* 100 short blocks on one stack (different entries: cookies),
	 * 10 on another, one long one */
	for (i = 0; i < 100; i++, t += 1000) {
		block(oc, 7, t, ustack_a, 3, 0x100000001 + 2 * (uint64_t)i);
		ASSERT_EQ(sfp_offcpu__wake(oc, 7, t + 300), 0);
	}
	for (i = 0; i < 10; i++, t += 1000) {
		block(oc, 7, t, ustack_b, 2, 0x900000001);
		ASSERT_EQ(sfp_offcpu__wake(oc, 7, t + 999), 0);
	}
	block(oc, 7, t, ustack_a, 3, 0x700000001);
	ASSERT_EQ(sfp_offcpu__wake(oc, 7, t + 1000), 0);
	ASSERT_EQ(o.n, 1);
	ASSERT_EQ(o.period[0], 1000);
	ASSERT_EQ(sfp_offcpu__finish(oc, 200000), 0);
	if (!ASSERT_EQ(o.n, 3))
		goto out;
	/* the sums: inline user chains, stamped at the end, all the time */
	ASSERT_EQ(o.kind[1], SFP_DEFER_USER_INLINE);
	ASSERT_EQ(o.kind[2], SFP_DEFER_USER_INLINE);
	ASSERT_EQ(o.time[1], 200000);
	ASSERT_EQ(o.period[1] + o.period[2], 100 * 300 + 10 * 999);
	ASSERT_TRUE(o.period[1] == 30000 || o.period[2] == 30000);
	ASSERT_EQ(o.total, 1000 + 100 * 300 + 10 * 999);
	sfp_offcpu__stats(oc, &st);
	ASSERT_EQ(st.summed, 110);
	ASSERT_EQ(st.sums, 2);
	ASSERT_EQ(st.samples, 1);
	ASSERT_EQ(st.blocked_ns, o.total);
out:
	sfp_offcpu__free(&oc);
}

TEST(offcpu_rate_bound_sums_the_rest)
{
	SFP_OPTS(sfp_offcpu_opts, oo, .max_rate = 3);
	struct out o = { 0 };
	struct sfp_offcpu *oc = NULL;
	struct sfp_offcpu_stats st;
	uint64_t t = 5000000000ULL;
	int i;

	if (!ASSERT_EQ(sfp_offcpu__new(&oo, on_emit, &o, &oc), 0))
		return;
	/* 10 blocks in one second, 10 in the next */
	for (i = 0; i < 20; i++) {
		uint64_t at = t + (uint64_t)(i / 10) * 1000000000ULL +
			      (uint64_t)(i % 10) * 1000000;

		block(oc, 7, at, ustack_a, 3, 0x100000001);
		ASSERT_EQ(sfp_offcpu__wake(oc, 7, at + 500), 0);
	}
	ASSERT_EQ(o.n, 6);
	ASSERT_EQ(sfp_offcpu__finish(oc, t + 3000000000ULL), 0);
	ASSERT_EQ(o.n, 7);
	ASSERT_EQ(o.period[6], 14 * 500);
	ASSERT_EQ(o.total, 20 * 500);
	sfp_offcpu__stats(oc, &st);
	ASSERT_EQ(st.over_rate, 14);
	ASSERT_EQ(st.samples, 6);
	sfp_offcpu__free(&oc);
}

TEST(offcpu_unmatched_and_exit)
{
	SFP_OPTS(sfp_offcpu_opts, oo);
	struct out o = { 0 };
	struct sfp_offcpu *oc = NULL;
	struct sfp_offcpu_stats st;
	uint32_t tid;

	if (!ASSERT_EQ(sfp_offcpu__new(&oo, on_emit, &o, &oc), 0))
		return;
	/* many tasks: the table grows and deletes keep the others */
	for (tid = 1; tid <= 300; tid++)
		block(oc, tid, 100, ustack_a, 3, 0x100000001);
	for (tid = 1; tid <= 300; tid += 2)
		ASSERT_EQ(sfp_offcpu__wake(oc, tid, 200 + tid), 0);
	ASSERT_EQ(o.n, 150);
	block(oc, 2, 150, ustack_b, 2, 0x300000001);	/* switch-in lost */
	sfp_offcpu__task_exit(oc, 4);
	ASSERT_EQ(sfp_offcpu__finish(oc, 1000), 0);
	sfp_offcpu__stats(oc, &st);
	ASSERT_EQ(st.woken, 150);
	/* tid 2 twice (replaced, then never woken), 4 at its exit, the
	 * 148 other even tids at the end */
	ASSERT_EQ(st.unmatched, 2 + 1 + 148);
	sfp_offcpu__free(&oc);
}

/* The agent's windows: sums written as they stand and forgotten, the
 * blocks still pending kept, the next sums only what came after. */
TEST(offcpu_flush_sums_per_window)
{
	SFP_OPTS(sfp_offcpu_opts, oo, .thresh_ns = 1000);
	struct out o = { 0 };
	struct sfp_offcpu *oc = NULL;
	struct sfp_offcpu_stats st;

	if (!ASSERT_EQ(sfp_offcpu__new(&oo, on_emit, &o, &oc), 0))
		return;
	block(oc, 7, 0, ustack_a, 3, 0x100000001);
	ASSERT_EQ(sfp_offcpu__wake(oc, 7, 300), 0);
	block(oc, 8, 100, ustack_b, 2, 0x200000001);	/* still blocked */
	ASSERT_EQ(sfp_offcpu__flush_sums(oc, 500), 0);
	if (!ASSERT_EQ(o.n, 1))
		goto out;
	ASSERT_EQ(o.tid[0], 7);
	ASSERT_EQ(o.period[0], 300);
	ASSERT_EQ(o.time[0], 500);
	ASSERT_EQ(o.kind[0], SFP_DEFER_USER_INLINE);
	ASSERT_EQ(o.nr_user[0], 3);
	/* nothing new: nothing written */
	ASSERT_EQ(sfp_offcpu__flush_sums(oc, 600), 0);
	ASSERT_EQ(o.n, 1);
	/* the pending block ends after the flush: in the next sums only */
	ASSERT_EQ(sfp_offcpu__wake(oc, 8, 700), 0);
	block(oc, 7, 800, ustack_a, 3, 0x100000003);
	ASSERT_EQ(sfp_offcpu__wake(oc, 7, 900), 0);
	ASSERT_EQ(sfp_offcpu__finish(oc, 1000), 0);
	if (!ASSERT_EQ(o.n, 3))
		goto out;
	ASSERT_EQ(o.period[1] + o.period[2], 600 + 100);
	ASSERT_EQ(o.time[1], 1000);
	ASSERT_EQ(o.total, 300 + 600 + 100);
	sfp_offcpu__stats(oc, &st);
	ASSERT_EQ(st.sums, 3);
	ASSERT_EQ(st.unmatched, 0);
	ASSERT_EQ(st.blocked_ns, o.total);
out:
	sfp_offcpu__free(&oc);
}

/*
 * late_user (bpf-defer): a block's user chain comes after its switch-in,
 * with its entry's deferred record.  Short blocks wait for it by cookie and
 * then join the sum of their whole stack (two entries with one stack: one
 * sum); an entry whose chain never comes is summed with its kernel part.
 */
TEST(offcpu_late_user_chains)
{
	SFP_OPTS(sfp_offcpu_opts, oo, .thresh_ns = 1000, .late_user = true);
	struct out o = { 0 };
	struct sfp_offcpu *oc = NULL;
	struct sfp_offcpu_stats st;
	int i, a = -1, k = -1;

	if (!ASSERT_EQ(sfp_offcpu__new(&oo, on_emit, &o, &oc), 0))
		return;
	/* entry 1: 5 short blocks in one kernel entry, one cookie */
	for (i = 0; i < 5; i++) {
		block(oc, 7, 100 + (uint64_t)i * 1000, NULL, 0, 0x100000001);
		ASSERT_EQ(sfp_offcpu__wake(oc, 7, 300 + (uint64_t)i * 1000), 0);
	}
	/* a long block of entry 1: its own sample, deferred form */
	block(oc, 7, 10000, NULL, 0, 0x100000001);
	ASSERT_EQ(sfp_offcpu__wake(oc, 7, 12000), 0);
	if (!ASSERT_EQ(o.n, 1))
		goto out;
	ASSERT_EQ(o.kind[0], SFP_DEFER_USER_DEFERRED);
	ASSERT_EQ(o.cookie[0], 0x100000001);
	ASSERT_EQ(sfp_offcpu__user_chain(oc, 0x100000001, ustack_a, 3), 0);
	/* entry 2, same stack: joins entry 1's sum */
	block(oc, 7, 20000, NULL, 0, 0x300000001);
	ASSERT_EQ(sfp_offcpu__wake(oc, 7, 20050), 0);
	ASSERT_EQ(sfp_offcpu__user_chain(oc, 0x300000001, ustack_a, 3), 0);
	/* a chain for a cookie nobody waits for: nothing happens */
	ASSERT_EQ(sfp_offcpu__user_chain(oc, 0x500000001, ustack_b, 2), 0);
	/* entry 3: its chain never comes */
	block(oc, 7, 30000, NULL, 0, 0x700000001);
	ASSERT_EQ(sfp_offcpu__wake(oc, 7, 30070), 0);
	ASSERT_EQ(sfp_offcpu__finish(oc, 90000), 0);
	if (!ASSERT_EQ(o.n, 3))
		goto out;
	for (i = 1; i < 3; i++) {
		if (o.nr_user[i] == 3)
			a = i;
		else if (o.nr_user[i] == 0)
			k = i;
	}
	if (!ASSERT_TRUE(a > 0 && k > 0))
		goto out;
	ASSERT_EQ(o.kind[a], SFP_DEFER_USER_INLINE);
	ASSERT_EQ(o.period[a], 5 * 200 + 50);
	ASSERT_EQ(o.kind[k], SFP_DEFER_USER_NONE);
	ASSERT_EQ(o.period[k], 70);
	ASSERT_EQ(o.total, 5 * 200 + 2000 + 50 + 70);
	sfp_offcpu__stats(oc, &st);
	ASSERT_EQ(st.no_user, 1);
	/* the BPF side's counts: 9 blocks, 8 of them woken */
	sfp_offcpu__set_switches(oc, 20, 9, 2, 9);
	sfp_offcpu__stats(oc, &st);
	ASSERT_EQ(st.blocks, 9);
	ASSERT_EQ(st.switches, 20);
	ASSERT_EQ(st.unmatched, 1);
out:
	sfp_offcpu__free(&oc);
}

static void switch_out(struct sfp_offcpu *oc, uint32_t tid, uint64_t time)
{
	/* (cpu, id, ip and misc: a block made of it carries them) */
	struct sfp_perf_sample s = { .pid = 100, .tid = tid, .time = time,
				     .cpu = 7 + tid, .id = 500 + tid,
				     .ip = kchain[2], .misc = 1 };

	ASSERT_EQ(sfp_offcpu__switch_out(oc, &s), 0);
}

/*
 * switch_records (the tracepoint path under heavy switching): a block
 * whose sample was lost begins at its switch-out record and keeps its
 * time, stackless; a block with its sample is not counted twice; an
 * exiting task's last switch-out begins nothing; the kernel's sums add
 * what the records lost entirely, for this recording's processes only.
 */
TEST(offcpu_switch_records_and_kernel_sums)
{
	SFP_OPTS(sfp_offcpu_opts, oo, .switch_records = true);
	struct out o = { 0 };
	struct sfp_offcpu *oc = NULL;
	struct sfp_offcpu_stats st;
	struct sfp_perf_sample ks = { .pid = 100, .tid = 1, .cpu = 99,
				      .id = 999, .ip = 1, .misc = 3 };
	size_t i, stackless = 0, stacked = 0;

	if (!ASSERT_EQ(sfp_offcpu__new(&oo, on_emit, &o, &oc), 0))
		return;
	/* tid 1: sample then its switch-out record: one block of 100 */
	block(oc, 1, 1000, ustack_a, 3, 0);
	switch_out(oc, 1, 1001);
	ASSERT_EQ(sfp_offcpu__wake(oc, 1, 1100), 0);
	/* tid 1: the sample lost: the record alone, 300 */
	switch_out(oc, 1, 2000);
	ASSERT_EQ(sfp_offcpu__wake(oc, 1, 2300), 0);
	/* tid 2 exits: its last switch-out is no block */
	switch_out(oc, 2, 500);
	ASSERT_EQ(sfp_offcpu__wake(oc, 2, 600), 0);	/* 100 */
	sfp_offcpu__task_exit(oc, 2);
	switch_out(oc, 2, 700);
	/* the kernel: tid 1 blocked 1000 in all (600 lost entirely), tid 3
	 * of the same process 50 (never seen), tid 9 of another 70 */
	ASSERT_EQ(sfp_offcpu__kernel_total(oc, &ks, false, 0, 1000, 4), 0);
	ks.tid = 3;
	ASSERT_EQ(sfp_offcpu__kernel_total(oc, &ks, false, 0, 50, 1), 0);
	ks.pid = 900;
	ks.tid = 9;
	ASSERT_EQ(sfp_offcpu__kernel_total(oc, &ks, false, 0, 70, 1), 0);
	ASSERT_EQ(sfp_offcpu__finish(oc, 9000), 0);
	for (i = 0; i < o.n && i < 64; i++) {
		if (o.nr_chain[i] == 0 && o.nr_user[i] == 0)
			stackless += o.period[i];
		else
			stacked += o.period[i];
		/* A stackless block of a task seen switching out -- the
		 * kernel's 600 of tid 1 too -- is that task's: its first
		 * switch-out's pid, cpu, event id, ip and mode; tid 3's,
		 * never seen, the kernel sum's. */
		if (o.nr_chain[i] == 0 && o.tid[i] != 3) {
			ASSERT_EQ(o.pid[i], 100);
			ASSERT_EQ(o.cpu[i], 7 + o.tid[i]);
			ASSERT_EQ(o.id[i], 500 + o.tid[i]);
			ASSERT_EQ(o.ip[i], kchain[2]);
			ASSERT_EQ(o.misc[i], 1);
		} else if (o.tid[i] == 3) {
			ASSERT_EQ(o.cpu[i], 99);
			ASSERT_EQ(o.id[i], 999);
			ASSERT_EQ(o.misc[i], 3);
		}
	}
	ASSERT_EQ(stacked, 100);
	ASSERT_EQ(stackless, 300 + 600 + 100 + 50);
	ASSERT_EQ(o.total, 1000 + 100 + 50);
	sfp_offcpu__stats(oc, &st);
	ASSERT_EQ(st.no_stack, 2);		/* tid 1's second, tid 2's */
	ASSERT_EQ(st.unmatched, 0);		/* the exit is no block */
	ASSERT_EQ(st.kernel_added_ns, 600 + 50);
	ASSERT_EQ(st.kernel_added_tasks, 2);
	ASSERT_EQ(st.kernel_other_ns, 70);
	ASSERT_EQ(st.blocked_ns, 1000 + 100 + 50);
	sfp_offcpu__free(&oc);
}

/* Nothing lost: what the kernel's sums have over the records is the
 * stamps' skew, counted and not written. */
TEST(offcpu_kernel_sums_without_loss)
{
	SFP_OPTS(sfp_offcpu_opts, oo, .switch_records = true);
	struct out o = { 0 };
	struct sfp_offcpu *oc = NULL;
	struct sfp_offcpu_stats st;
	struct sfp_perf_sample ks = { .pid = 100, .tid = 1 };

	if (!ASSERT_EQ(sfp_offcpu__new(&oo, on_emit, &o, &oc), 0))
		return;
	block(oc, 1, 1000, ustack_a, 3, 0);
	switch_out(oc, 1, 1001);
	ASSERT_EQ(sfp_offcpu__wake(oc, 1, 1100), 0);
	ASSERT_EQ(sfp_offcpu__kernel_total(oc, &ks, false, 0, 103, 1), 0);
	ASSERT_EQ(sfp_offcpu__finish(oc, 9000), 0);
	ASSERT_EQ(o.n, 1);
	ASSERT_EQ(o.total, 100);
	sfp_offcpu__stats(oc, &st);
	ASSERT_EQ(st.kernel_skew_ns, 3);
	ASSERT_EQ(st.kernel_added_ns, 0);
	/* with a lost record, the same excess is written */
	sfp_offcpu__free(&oc);
	memset(&o, 0, sizeof(o));
	if (!ASSERT_EQ(sfp_offcpu__new(&oo, on_emit, &o, &oc), 0))
		return;
	block(oc, 1, 1000, ustack_a, 3, 0);
	ASSERT_EQ(sfp_offcpu__wake(oc, 1, 1100), 0);
	ASSERT_EQ(sfp_offcpu__kernel_total(oc, &ks, false, 1, 103, 1), 0);
	ASSERT_EQ(sfp_offcpu__finish(oc, 9000), 0);
	ASSERT_EQ(o.total, 103);
	sfp_offcpu__free(&oc);
}
