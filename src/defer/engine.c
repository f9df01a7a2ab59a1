// SPDX-License-Identifier: MIT
/*
 * The deferral engine (see engine.h for the rules it implements and why).
 *
 * Per task it keeps the state of the kernel entry that may still be
 * shared: the cookie, the user registers and a digest of the user stack
 * bytes of the last kernel-mode sample, and the unwind made for it.  The
 * record for that cookie stays pending until a sample of the task shows
 * that the entry is over (a different sample, or any user-mode sample), the
 * task exits, or the recording ends; then the task is forgotten.
 *
 * Memory per task is what a host of many small processes multiplies (the
 * agent on 20 containers of one image): the stack bytes are kept as a
 * 64-bit digest, not a 16 KiB copy, and the unwind as many frames as it
 * had, not max_depth.  Two different snapshots with equal registers and
 * equal digests would be taken for one entry: about 2^-64 per comparison.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/idmap.h"
#include "defer/engine.h"

#define MAX_CPUS 65536

struct task {
	uint32_t tid;		/* first: the idmap's key */
	bool pending;		/* a deferred record is owed for cookie */
	bool open;		/* the entry may still be shared */
	uint64_t cookie;
	uint64_t ip, sp, bp;
	uint64_t regs[SFP_DEFER_MAX_REGS];
	size_t nr_regs;
	uint64_t stack_digest;	/* of the snapshot, when stack_size */
	size_t stack_size;
	uint64_t *ips;
	size_t nr, cap_ips;
	struct sfp_defer_origin origin;	/* of the last sample served */
};

struct sfp_defer_engine {
	struct sfp_defer_ops ops;
	void *ctx;
	bool inline_mode;
	size_t max_depth;
	struct sfp_idmap tasks;	/* struct task by tid */
	uint64_t *scratch;	/* max_depth frames: the unwind's output */
	uint32_t *ctr;		/* per-CPU cookie counters */
	size_t nr_ctr;
	struct sfp_defer_stats st;
};

int sfp_defer_engine__new(const struct sfp_defer_ops *ops, void *ctx,
			  bool inline_mode, size_t max_depth,
			  struct sfp_defer_engine **out)
{
	struct sfp_defer_engine *e;

	*out = NULL;
	if (!ops || !ops->unwind || !ops->emit_sample ||
	    (!inline_mode && !ops->emit_deferred))
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->ops = *ops;
	e->ctx = ctx;
	e->inline_mode = inline_mode;
	e->max_depth = max_depth && max_depth < SFP_DEFER_MAX_DEPTH
			       ? max_depth
			       : SFP_DEFER_MAX_DEPTH;
	sfp_idmap_init(&e->tasks, sizeof(struct task), 64, 75);
	e->scratch = malloc(e->max_depth * sizeof(*e->scratch));
	if (!e->scratch) {
		free(e);
		return -ENOMEM;
	}
	*out = e;
	return 0;
}

/* The task's state; with create, made (zeroed) when missing: NULL then
 * means no memory. */
static struct task *find_task(struct sfp_defer_engine *e, uint32_t tid,
			      bool create)
{
	bool added;

	if (!create)
		return sfp_idmap_find(&e->tasks, tid);
	return sfp_idmap_get(&e->tasks, tid, &added);
}

/* The kernel's get_cookie(): odd per-CPU counter above, cpu + 1 below. */
static int new_cookie(struct sfp_defer_engine *e, uint32_t cpu,
		      uint64_t *cookie)
{
	uint32_t c;

	if (cpu >= MAX_CPUS)
		return -EINVAL;
	if (cpu >= e->nr_ctr) {
		size_t n = (size_t)cpu + 1;
		uint32_t *p = realloc(e->ctr, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		memset(p + e->nr_ctr, 0, (n - e->nr_ctr) * sizeof(*p));
		e->ctr = p;
		e->nr_ctr = n;
	}
	c = e->ctr[cpu];
	if (c > UINT32_MAX - 3)
		return -EOVERFLOW;	/* would repeat a cookie */
	c = (c + 2) | 1;
	e->ctr[cpu] = c;
	*cookie = ((uint64_t)c << 32) | (cpu + 1);
	return 0;
}

static int emit_pending(struct sfp_defer_engine *e, struct task *t)
{
	int err = 0;

	if (t->pending && !e->inline_mode) {
		err = e->ops.emit_deferred(e->ctx, &t->origin, t->cookie,
					   t->ips, t->nr);
		e->st.deferred++;
	}
	t->pending = false;
	t->open = false;
	return err < 0 ? err : 0;
}

static size_t nr_regs(const struct sfp_defer_sample *s)
{
	return s->regs && s->nr_regs < SFP_DEFER_MAX_REGS ? s->nr_regs
			 : s->regs ? SFP_DEFER_MAX_REGS : 0;
}

static size_t known_nr(const struct sfp_defer_engine *e,
		       const struct sfp_defer_sample *s)
{
	return s->nr_user_ips < e->max_depth ? s->nr_user_ips : e->max_depth;
}

/*
 * A 64-bit digest of a stack snapshot: 8 bytes a step, each folded in by
 * a multiply and the high half fed back (the mixing of wyhash-style
 * hashes, written here for a fixed purpose: no seed, no attacker).
 */
static uint64_t digest(const uint8_t *b, size_t n)
{
	const uint64_t k1 = 0x9e3779b97f4a7c15ull, k2 = 0xc2b2ae3d27d4eb4full;
	uint64_t h = n * k2, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		unsigned __int128 m;

		memcpy(&w, b + i, 8);
		m = (unsigned __int128)(h ^ w ^ k1) * (w ^ k2 ^ i);
		h = (uint64_t)m ^ (uint64_t)(m >> 64);
	}
	for (w = 0; i < n; i++)
		w = w << 8 | b[i];
	h ^= w;
	h ^= h >> 33;
	h *= k2;
	h ^= h >> 29;
	return h;
}

/* Room for n frames in t's unwind (a little more, to grow rarely). */
static int reserve_ips(struct task *t, size_t n)
{
	uint64_t *p;
	size_t cap;

	if (n <= t->cap_ips && t->ips)
		return 0;
	cap = (n + 16) & ~(size_t)15;	/* never 0 */
	p = realloc(t->ips, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	t->ips = p;
	t->cap_ips = cap;
	return 0;
}

static bool same_entry(const struct sfp_defer_engine *e, const struct task *t,
		       const struct sfp_defer_sample *s)
{
	size_t nr = nr_regs(s);

	if (s->user_known)
		return t->open && s->kernel_mode && t->nr == known_nr(e, s) &&
		       (!t->nr || !memcmp(t->ips, s->user_ips,
					  t->nr * sizeof(*t->ips)));
	return t->open && s->kernel_mode && t->ip == s->ip && t->sp == s->sp &&
	       t->bp == s->bp && t->nr_regs == nr &&
	       (!nr || !memcmp(t->regs, s->regs, nr * sizeof(*s->regs))) &&
	       t->stack_size == s->stack_size &&
	       (!s->stack_size ||
		t->stack_digest == digest(s->stack, s->stack_size));
}

static void set_origin(struct task *t, const struct sfp_defer_sample *s)
{
	t->origin.pid = s->pid;
	t->origin.tid = s->tid;
	t->origin.cpu = s->cpu;
	t->origin.time = s->time;
}

static struct sfp_defer_user user_part(const struct sfp_defer_engine *e,
				       const struct task *t)
{
	struct sfp_defer_user u = { .kind = SFP_DEFER_USER_DEFERRED,
				    .cookie = t->cookie,
				    .unwound = t->ips, .nr_unwound = t->nr };

	if (e->inline_mode) {
		u.kind = SFP_DEFER_USER_INLINE;
		u.cookie = 0;
		u.ips = t->ips;
		u.nr = t->nr;
	}
	return u;
}

/* Start a new entry for t from s: cookie, unwind, remembered state. */
static int begin_entry(struct sfp_defer_engine *e, struct task *t,
		       const struct sfp_defer_sample *s)
{
	int n, err;

	if (!e->inline_mode) {
		err = new_cookie(e, s->cpu, &t->cookie);
		if (err)
			return err;
	}
	if (s->user_known) {
		/* Read from the sample; the chain is the entry's identity. */
		n = (int)known_nr(e, s);
		if (reserve_ips(t, (size_t)n))
			return -ENOMEM;
		if (n)
			memcpy(t->ips, s->user_ips, (size_t)n * sizeof(*t->ips));
		goto unwound;
	}
	/* The callback may fill part of ips before failing: count those. */
	memset(e->scratch, 0, e->max_depth * sizeof(*e->scratch));
	n = e->ops.unwind(e->ctx, s, e->scratch, e->max_depth);
	e->st.unwinds++;
	if (n < 0) {
		e->st.unwind_errors++;
		for (n = 0; (size_t)n < e->max_depth && e->scratch[n]; n++)
			;
	}
	if ((size_t)n > e->max_depth)
		n = (int)e->max_depth;
	if (reserve_ips(t, (size_t)n))
		return -ENOMEM;
	memcpy(t->ips, e->scratch, (size_t)n * sizeof(*t->ips));
unwound:
	t->nr = (size_t)n > e->max_depth ? e->max_depth : (size_t)n;
	e->st.frames += t->nr;
	t->pending = true;
	t->open = s->kernel_mode;
	t->ip = s->ip;
	t->sp = s->sp;
	t->bp = s->bp;
	t->nr_regs = nr_regs(s);
	if (t->nr_regs)
		memcpy(t->regs, s->regs, t->nr_regs * sizeof(*s->regs));
	t->stack_size = 0;
	if (t->open && s->stack_size && !s->user_known) {
		t->stack_digest = digest(s->stack, s->stack_size);
		t->stack_size = s->stack_size;
	}
	return 0;
}

int sfp_defer_engine__add(struct sfp_defer_engine *e,
			  const struct sfp_defer_sample *s)
{
	struct sfp_defer_user u = { .kind = SFP_DEFER_USER_NONE };
	struct task *t;
	int err;

	e->st.samples++;
	t = find_task(e, s->tid, s->has_user);
	if (!s->has_user) {
		/* A kernel thread (or no user regs): nothing to defer.  A
		 * pending entry of this tid ends before this sample. */
		if (t) {
			err = emit_pending(e, t);
			if (err)
				return err;
		}
		err = e->ops.emit_sample(e->ctx, s, &u);
		return err < 0 ? err : 0;
	}
	if (!t)
		return -ENOMEM;
	e->st.user_samples++;
	if (same_entry(e, t, s)) {
		e->st.shared++;
	} else {
		err = emit_pending(e, t);
		if (!err)
			err = begin_entry(e, t, s);
		if (err)
			return err;
	}
	set_origin(t, s);
	u = user_part(e, t);
	err = e->ops.emit_sample(e->ctx, s, &u);
	if (err < 0)
		return err;
	/* In user mode the kernel unwinds on this interrupt's return to
	 * user space, before the task can be sampled again. */
	if (!s->kernel_mode)
		return emit_pending(e, t);
	return 0;
}

int sfp_defer_engine__task_exit(struct sfp_defer_engine *e, uint32_t tid)
{
	struct task *t = find_task(e, tid, false);
	int err;

	if (!t)
		return 0;
	err = emit_pending(e, t);
	/* Forget it: a host starting 150 processes a second must not grow
	 * the table. */
	free(t->ips);
	sfp_idmap_delete(&e->tasks, t);
	return err;
}

int sfp_defer_engine__flush(struct sfp_defer_engine *e)
{
	struct task *t;
	size_t pos = 0;
	int err;

	while ((t = sfp_idmap_next(&e->tasks, &pos))) {
		err = emit_pending(e, t);
		if (err)
			return err;
	}
	return 0;
}

void sfp_defer_engine__stats(const struct sfp_defer_engine *e,
			     struct sfp_defer_stats *st)
{
	*st = e->st;
	st->tasks = e->tasks.n;
}

void sfp_defer_engine__free(struct sfp_defer_engine **ep)
{
	struct sfp_defer_engine *e = *ep;
	struct task *t;
	size_t pos = 0;

	if (!e)
		return;
	while ((t = sfp_idmap_next(&e->tasks, &pos)))
		free(t->ips);
	sfp_idmap_free(&e->tasks);
	free(e->scratch);
	free(e->ctr);
	free(e);
	*ep = NULL;
}
