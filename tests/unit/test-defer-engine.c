// SPDX-License-Identifier: MIT
/*
 * The deferral engine against the kernel's rules: which samples share a
 * cookie and an unwind, where the deferred records go, and the cookie form.
 * The unwind callback is a fake that returns frames derived from the
 * sample, so that a test can tell whose unwind a record carries.
 */
#include <errno.h>
#include <stdlib.h>

#include "defer/engine.h"
#include "test.h"

enum ev_kind { EV_SAMPLE, EV_DEFERRED };

struct ev {
	enum ev_kind kind;
	uint32_t tid;
	uint64_t time;
	enum sfp_defer_user_kind user;
	uint64_t cookie;
	size_t nr;
	uint64_t ip0;
};

struct log {
	struct ev ev[4096];
	size_t n;
	int unwinds;
	int fail_unwind;	/* return -EFAULT after 2 frames */
};

static int fake_unwind(void *ctx, const struct sfp_defer_sample *s,
		       uint64_t *ips, size_t max)
{
	struct log *l = ctx;

	l->unwinds++;
	if (max < 3)
		return -ENOSPC;
	ips[0] = s->ip;
	ips[1] = 0x1000 + s->tid;
	ips[2] = 0x2000 + s->stack_size;
	if (l->fail_unwind)
		return -EFAULT;
	return 3;
}

static int fake_sample(void *ctx, const struct sfp_defer_sample *s,
		       const struct sfp_defer_user *u)
{
	struct log *l = ctx;
	struct ev *e = &l->ev[l->n++];

	e->kind = EV_SAMPLE;
	e->tid = s->tid;
	e->time = s->time;
	e->user = u->kind;
	e->cookie = u->cookie;
	e->nr = u->nr;
	e->ip0 = u->nr ? u->ips[0] : 0;
	return 0;
}

static int fake_deferred(void *ctx, const struct sfp_defer_origin *o,
			 uint64_t cookie, const uint64_t *ips, size_t nr)
{
	struct log *l = ctx;
	struct ev *e = &l->ev[l->n++];

	e->kind = EV_DEFERRED;
	e->tid = o->tid;
	e->time = o->time;
	e->cookie = cookie;
	e->nr = nr;
	e->ip0 = nr ? ips[0] : 0;
	return 0;
}

static const struct sfp_defer_ops ops = {
	.unwind = fake_unwind,
	.emit_sample = fake_sample,
	.emit_deferred = fake_deferred,
};

static uint8_t stack_a[64], stack_b[64];

static struct sfp_defer_sample mk(uint32_t tid, uint64_t time, bool kmode,
				  uint64_t ip, const uint8_t *stack)
{
	struct sfp_defer_sample s = {
		.pid = tid, .tid = tid, .cpu = 1, .time = time,
		.kernel_mode = kmode, .has_user = true,
		.ip = ip, .sp = 0x7ffd0000, .bp = 0x7ffd0100,
		.stack = stack, .stack_size = sizeof(stack_a),
	};
	return s;
}

static struct log *new_log(void)
{
	struct log *l = calloc(1, sizeof(*l));

	memset(stack_a, 0xaa, sizeof(stack_a));
	memset(stack_b, 0xaa, sizeof(stack_b));
	stack_b[40] = 0xbb;	/* differs from a in one byte */
	return l;
}

TEST(defer_kernel_mode_samples_share_cookie)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct sfp_defer_stats st;
	struct log *l = new_log();

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	s = mk(10, 100, true, 0x401000, stack_a);
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	s.time = 200;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	s.time = 300;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	/* Nothing is emitted for the entry until it is known to be over. */
	ASSERT_EQ(l->n, 3);
	ASSERT_OK(sfp_defer_engine__flush(e));
	ASSERT_EQ(l->n, 4);
	ASSERT_EQ(l->unwinds, 1);
	ASSERT_EQ(l->ev[0].user, SFP_DEFER_USER_DEFERRED);
	ASSERT_NE(l->ev[0].cookie, 0);
	ASSERT_EQ(l->ev[1].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[2].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[3].kind, EV_DEFERRED);
	ASSERT_EQ(l->ev[3].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[3].nr, 3);
	ASSERT_EQ(l->ev[3].ip0, 0x401000);
	/* Stamped with the last sample it serves. */
	ASSERT_EQ(l->ev[3].time, 300);
	sfp_defer_engine__stats(e, &st);
	ASSERT_EQ(st.samples, 3);
	ASSERT_EQ(st.shared, 2);
	ASSERT_EQ(st.deferred, 1);
out:
	sfp_defer_engine__free(&e);
	ASSERT_TRUE(e == NULL);
	free(l);
}

TEST(defer_user_mode_samples_never_share)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct log *l = new_log();

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	s = mk(10, 100, false, 0x401000, stack_a);
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	s.time = 200;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	/* Each user-mode sample's record follows it at once. */
	ASSERT_EQ(l->n, 4);
	ASSERT_EQ(l->ev[0].kind, EV_SAMPLE);
	ASSERT_EQ(l->ev[1].kind, EV_DEFERRED);
	ASSERT_EQ(l->ev[1].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[2].kind, EV_SAMPLE);
	ASSERT_NE(l->ev[2].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[3].kind, EV_DEFERRED);
	ASSERT_EQ(l->ev[3].cookie, l->ev[2].cookie);
	ASSERT_EQ(l->unwinds, 2);
	ASSERT_OK(sfp_defer_engine__flush(e));
	ASSERT_EQ(l->n, 4);
out:
	sfp_defer_engine__free(&e);
	free(l);
}

TEST(defer_kernel_then_user_mode_is_new_entry)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct log *l = new_log();

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	s = mk(10, 100, true, 0x401000, stack_a);
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	s.time = 200;
	s.kernel_mode = false;	/* same regs and bytes, but in user mode */
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_EQ(l->n, 4);
	ASSERT_EQ(l->ev[1].kind, EV_DEFERRED);	/* before the next sample */
	ASSERT_EQ(l->ev[1].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[1].time, 100);
	ASSERT_NE(l->ev[2].cookie, l->ev[0].cookie);
	/* A user-mode sample does not open an entry for a later one. */
	s.time = 300;
	s.kernel_mode = true;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_NE(l->ev[4].cookie, l->ev[2].cookie);
out:
	sfp_defer_engine__free(&e);
	free(l);
}

TEST(defer_same_regs_different_stack_bytes)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct log *l = new_log();

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	s = mk(10, 100, true, 0x401000, stack_a);
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	s = mk(10, 200, true, 0x401000, stack_b);
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_EQ(l->n, 3);
	ASSERT_EQ(l->ev[1].kind, EV_DEFERRED);
	ASSERT_NE(l->ev[2].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->unwinds, 2);
	/* A shorter snapshot with a common prefix is different too. */
	s = mk(10, 300, true, 0x401000, stack_b);
	s.stack_size = 32;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_NE(l->ev[4].cookie, l->ev[2].cookie);
	/* And so are differing registers with the same bytes. */
	s = mk(10, 400, true, 0x401000, stack_b);
	s.stack_size = 32;
	s.bp += 8;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_EQ(l->unwinds, 4);
	s.time = 500;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_EQ(l->unwinds, 4);
out:
	sfp_defer_engine__free(&e);
	free(l);
}

/* Two kernel entries from one call site, same ip, sp, bp and stack bytes,
 * told apart by another user register (a loop counter in rbx). */
TEST(defer_other_registers_tell_entries_apart)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct log *l = new_log();
	uint64_t regs_a[3] = { 1, 2, 3 }, regs_b[3] = { 1, 2, 4 };

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	s = mk(10, 100, true, 0x401000, stack_a);
	s.regs = regs_a;
	s.nr_regs = 3;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	s.time = 200;		/* same registers: the same entry */
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_EQ(l->unwinds, 1);
	ASSERT_EQ(l->ev[1].cookie, l->ev[0].cookie);
	s.time = 300;
	s.regs = regs_b;	/* the counter moved: a new entry */
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_EQ(l->unwinds, 2);
	ASSERT_EQ(l->ev[2].kind, EV_DEFERRED);
	ASSERT_NE(l->ev[3].cookie, l->ev[0].cookie);
	s.time = 400;
	s.nr_regs = 2;		/* a different set: not comparable, new */
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_EQ(l->unwinds, 3);
out:
	sfp_defer_engine__free(&e);
	free(l);
}

TEST(defer_interleaved_tasks)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample a, b;
	struct log *l = new_log();

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	a = mk(10, 100, true, 0x401000, stack_a);
	b = mk(11, 150, true, 0x401000, stack_a);
	ASSERT_OK(sfp_defer_engine__add(e, &a));	/* 0: A1 */
	ASSERT_OK(sfp_defer_engine__add(e, &b));	/* 1: B1 */
	a.time = 200;
	ASSERT_OK(sfp_defer_engine__add(e, &a));	/* 2: A2 shares A1 */
	/* Same bytes in another task are another entry. */
	ASSERT_NE(l->ev[1].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[2].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->n, 3);
	a.ip = 0x402000;
	a.time = 300;
	ASSERT_OK(sfp_defer_engine__add(e, &a));	/* 3: D(A), 4: A3 */
	ASSERT_EQ(l->ev[3].kind, EV_DEFERRED);
	ASSERT_EQ(l->ev[3].tid, 10);
	ASSERT_EQ(l->ev[3].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[3].time, 200);
	ASSERT_EQ(l->ev[4].kind, EV_SAMPLE);
	ASSERT_NE(l->ev[4].cookie, l->ev[0].cookie);
	/* B's record is still owed; its exit settles it. */
	ASSERT_OK(sfp_defer_engine__task_exit(e, 11));
	ASSERT_EQ(l->ev[5].kind, EV_DEFERRED);
	ASSERT_EQ(l->ev[5].tid, 11);
	ASSERT_EQ(l->ev[5].cookie, l->ev[1].cookie);
	ASSERT_OK(sfp_defer_engine__task_exit(e, 11));
	ASSERT_OK(sfp_defer_engine__task_exit(e, 999));
	ASSERT_EQ(l->n, 6);
	ASSERT_OK(sfp_defer_engine__flush(e));
	ASSERT_EQ(l->n, 7);
	ASSERT_EQ(l->ev[6].cookie, l->ev[4].cookie);
	/* Flushing twice emits nothing more: one record per cookie. */
	ASSERT_OK(sfp_defer_engine__flush(e));
	ASSERT_EQ(l->n, 7);
out:
	sfp_defer_engine__free(&e);
	free(l);
}

TEST(defer_cookie_form_and_uniqueness)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct log *l = new_log();
	uint64_t *seen = calloc(2000, sizeof(*seen));
	size_t i, j, n = 0;

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	for (i = 0; i < 1000; i++) {
		s = mk(10 + (uint32_t)(i % 7), i, false, 0x401000 + i, stack_a);
		s.cpu = (uint32_t)(i % 3);
		l->n = 0;
		ASSERT_OK(sfp_defer_engine__add(e, &s));
		seen[n++] = l->ev[0].cookie;
		/* (counter << 32) | (cpu + 1), counter odd. */
		ASSERT_EQ(l->ev[0].cookie & 0xffffffff, s.cpu + 1);
		ASSERT_EQ((l->ev[0].cookie >> 32) & 1, 1);
		ASSERT_NE(l->ev[0].cookie, 0);
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (seen[i] == seen[j]) {
				ASSERT_NE(seen[i], seen[j]);
				goto out;
			}
	/* CPU 0's first cookie is the kernel's first: counter 3. */
	ASSERT_EQ(seen[0], (3ULL << 32) | 1);
	ASSERT_EQ(seen[3], (5ULL << 32) | 1);
	s.cpu = 70000;
	ASSERT_ERR(sfp_defer_engine__add(e, &s), -EINVAL);
out:
	sfp_defer_engine__free(&e);
	free(seen);
	free(l);
}

TEST(defer_kernel_thread_has_no_user_part)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct sfp_defer_stats st;
	struct log *l = new_log();

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	s = mk(2, 100, true, 0, NULL);
	s.has_user = false;
	s.stack_size = 0;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_OK(sfp_defer_engine__flush(e));
	ASSERT_EQ(l->n, 1);
	ASSERT_EQ(l->ev[0].user, SFP_DEFER_USER_NONE);
	ASSERT_EQ(l->unwinds, 0);
	sfp_defer_engine__stats(e, &st);
	ASSERT_EQ(st.deferred, 0);
	ASSERT_EQ(st.user_samples, 0);
out:
	sfp_defer_engine__free(&e);
	free(l);
}

TEST(defer_inline_mode)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct log *l = new_log();

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, true, 0, &e)))
		goto out;
	s = mk(10, 100, true, 0x401000, stack_a);
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	s.time = 200;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	s.kernel_mode = false;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_OK(sfp_defer_engine__flush(e));
	ASSERT_EQ(l->n, 3);	/* no deferred records at all */
	for (size_t i = 0; i < 3; i++) {
		ASSERT_EQ(l->ev[i].kind, EV_SAMPLE);
		ASSERT_EQ(l->ev[i].user, SFP_DEFER_USER_INLINE);
		ASSERT_EQ(l->ev[i].cookie, 0);
		ASSERT_EQ(l->ev[i].nr, 3);
		ASSERT_EQ(l->ev[i].ip0, 0x401000);
	}
	/* The shared entry is unwound once. */
	ASSERT_EQ(l->unwinds, 2);
	/* Inline mode needs no emit_deferred. */
	sfp_defer_engine__free(&e);
	{
		struct sfp_defer_ops o2 = ops;

		o2.emit_deferred = NULL;
		ASSERT_OK(sfp_defer_engine__new(&o2, l, true, 0, &e));
		sfp_defer_engine__free(&e);
		ASSERT_ERR(sfp_defer_engine__new(&o2, l, false, 0, &e), -EINVAL);
	}
out:
	sfp_defer_engine__free(&e);
	free(l);
}

TEST(defer_unwind_error_keeps_partial_chain)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct sfp_defer_stats st;
	struct log *l = new_log();

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	l->fail_unwind = 1;
	s = mk(10, 100, false, 0x401000, stack_a);
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_EQ(l->n, 2);
	ASSERT_EQ(l->ev[1].kind, EV_DEFERRED);
	ASSERT_EQ(l->ev[1].nr, 3);
	sfp_defer_engine__stats(e, &st);
	ASSERT_EQ(st.unwind_errors, 1);
	/* Depth cap: max_depth 2 truncates. */
	sfp_defer_engine__free(&e);
	l->fail_unwind = 0;
	l->n = 0;
	ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 2, &e));
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_EQ(l->ev[1].nr, 0);
out:
	sfp_defer_engine__free(&e);
	free(l);
}

TEST(defer_many_tasks_grow_table)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct sfp_defer_stats st;
	struct log *l = new_log();
	uint32_t t;

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	for (t = 1; t <= 1000; t++) {
		s = mk(t, t, true, 0x401000, stack_a);
		l->n = 0;
		ASSERT_OK(sfp_defer_engine__add(e, &s));
	}
	for (t = 1; t <= 1000; t++) {
		s = mk(t, 2000 + t, true, 0x401000, stack_a);
		l->n = 0;
		ASSERT_OK(sfp_defer_engine__add(e, &s));
		ASSERT_EQ(l->n, 1);	/* shared: no record yet */
	}
	l->n = 0;
	ASSERT_OK(sfp_defer_engine__flush(e));
	sfp_defer_engine__stats(e, &st);
	ASSERT_EQ(st.deferred, 1000);
	ASSERT_EQ(st.shared, 1000);
	ASSERT_EQ(l->unwinds, 1000);
out:
	sfp_defer_engine__free(&e);
	free(l);
}

/*
 * An exited task is forgotten (a host starting processes all day must not
 * grow the table), and forgetting one keeps the others found: tasks
 * whose probe chains ran through the removed slots still share their
 * entries (the tids, multiples of 4096, all hash to one slot: one long
 * chain).  A tid used again starts afresh.
 */
TEST(defer_exit_forgets_tasks)
{
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s;
	struct sfp_defer_stats st;
	struct log *l = new_log();
	uint32_t t;

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 0, &e)))
		goto out;
	for (t = 1; t <= 1000; t++) {
		s = mk(t << 12, t, true, 0x401000, stack_a);
		ASSERT_OK(sfp_defer_engine__add(e, &s));
	}
	l->n = 0;
	for (t = 1; t <= 1000; t += 2)
		ASSERT_OK(sfp_defer_engine__task_exit(e, t << 12));
	ASSERT_EQ(l->n, 500);		/* each exit: its pending record */
	sfp_defer_engine__stats(e, &st);
	ASSERT_EQ(st.tasks, 500);
	for (t = 2; t <= 1000; t += 2) {
		s = mk(t << 12, 2000 + t, true, 0x401000, stack_a);
		l->n = 0;
		ASSERT_OK(sfp_defer_engine__add(e, &s));
		ASSERT_EQ(l->n, 1);	/* still found: shared, no record */
	}
	sfp_defer_engine__stats(e, &st);
	ASSERT_EQ(st.shared, 500);
	s = mk(1 << 12, 3001, true, 0x401000, stack_a);
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	sfp_defer_engine__stats(e, &st);
	ASSERT_EQ(st.shared, 500);	/* tid 1 again: a new entry */
	ASSERT_EQ(st.unwinds, 1001);
	ASSERT_EQ(st.tasks, 501);
out:
	sfp_defer_engine__free(&e);
	free(l);
}

/*
 * A sample read back from a file carries its user chain and no stack
 * bytes: no unwind is made, and kernel-mode samples are one entry exactly
 * while their chains are equal (convert --deferred).
 */
TEST(defer_known_user_chain)
{
	static const uint64_t ca[] = { 0x401000, 0x402000, 0x403000 };
	static const uint64_t cb[] = { 0x401000, 0x402000, 0x404000 };
	struct sfp_defer_engine *e = NULL;
	struct sfp_defer_sample s = {
		.pid = 7, .tid = 7, .cpu = 2, .kernel_mode = true,
		.has_user = true, .user_known = true,
	};
	struct log *l = new_log();

	if (!ASSERT_OK(sfp_defer_engine__new(&ops, l, false, 2, &e)))
		goto out;
	s.user_ips = ca, s.nr_user_ips = 3, s.time = 1;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	s.time = 2;	/* same chain, kernel mode: same entry */
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	/* cut at max_depth (2): equal to ca's first two frames, but the
	 * engine compares what the caller gave, cut the same way */
	s.user_ips = cb, s.time = 3;
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	s.nr_user_ips = 1, s.time = 4;	/* a shorter chain: a new entry */
	ASSERT_OK(sfp_defer_engine__add(e, &s));
	ASSERT_OK(sfp_defer_engine__flush(e));
	ASSERT_EQ(l->unwinds, 0);
	ASSERT_EQ(l->n, 6);
	ASSERT_EQ(l->ev[1].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[2].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[3].kind, EV_DEFERRED);
	ASSERT_EQ(l->ev[3].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[3].nr, 2);
	ASSERT_EQ(l->ev[3].ip0, 0x401000);
	ASSERT_EQ(l->ev[3].time, 3);
	ASSERT_EQ(l->ev[4].kind, EV_SAMPLE);
	ASSERT_NE(l->ev[4].cookie, l->ev[0].cookie);
	ASSERT_EQ(l->ev[5].kind, EV_DEFERRED);
	ASSERT_EQ(l->ev[5].cookie, l->ev[4].cookie);
	ASSERT_EQ(l->ev[5].nr, 1);
out:
	sfp_defer_engine__free(&e);
	free(l);
}
