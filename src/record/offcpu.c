// SPDX-License-Identifier: MIT
/*
 * Off-CPU time (see offcpu.h): blocking switch-outs wait, per task, for
 * the switch-in that ends them; the blocked time becomes a sample's period
 * or, for short blocks and those over the rate bound, part of a per-stack
 * sum written at the end.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/idmap.h"
#include "record/offcpu.h"

/* One blocking switch-out waiting for its switch-in. */
struct pend {
	uint32_t tid;			/* first: the idmap's key */
	bool stack;			/* from a sched_switch sample */
	bool out_seen;			/* its switch-out record came */
	bool dead;			/* the task exited: no more blocks */
	struct sfp_perf_sample s;	/* ips -> kchain */
	uint64_t *kchain;		/* kernel part, owned */
	size_t cap_k;
	enum sfp_defer_user_kind kind;
	uint64_t cookie;
	uint64_t *uips;			/* the entry's user chain, owned */
	size_t nr_u, cap_u;
};

/* Blocked time summed per task and stack. */
struct sum {
	uint64_t hash;
	struct sfp_perf_sample s;	/* first block's fields */
	uint64_t *chain;		/* kernel part then user part, owned */
	size_t nr_k, nr_u;
	uint64_t ns;
	struct sum *next;
};

#define SUM_BUCKETS 4096

/* late_user: blocked time of one entry (cookie) and kernel chain, summed
 * until the entry's user chain comes. */
struct wait {
	uint64_t cookie;
	struct sfp_perf_sample s;
	uint64_t *kchain;		/* owned */
	size_t nr_k;
	uint64_t ns;
	struct wait *next;
};

#define WAIT_BUCKETS 1024

/* Blocked time written per task (switch_records: the kernel's sums are
 * compared with it at the end). */
struct tot {
	uint32_t tid;			/* first: the idmap's key */
	uint32_t pid;
	uint64_t ns;
	/* A template for the blocks the rings lost (their id, ip, cpu,
	 * misc ...): the sample's leading fields, the scalars before its
	 * first array.  Not the whole sample: a task's total is kept for
	 * the whole recording, and a system-wide one sees every task the
	 * host ever ran (88 bytes an entry against 344). */
	uint8_t head[offsetof(struct sfp_perf_sample, read_time_enabled)];
};
/* (period the last of those scalars: no pointer is kept) */
_Static_assert(offsetof(struct sfp_perf_sample, period) +
		       sizeof(uint64_t) ==
	       offsetof(struct sfp_perf_sample, read_time_enabled),
	       "struct tot's head holds the sample's leading scalars");

struct sfp_offcpu {
	uint64_t thresh_ns, max_rate;
	bool late_user;
	struct wait **waits;		/* WAIT_BUCKETS chains, by cookie */
	sfp_offcpu_emit_fn emit;
	void *ctx;
	struct sfp_idmap pend;		/* struct pend by tid */
	struct sum **sums;		/* SUM_BUCKETS chains */
	struct sfp_idmap tots;		/* switch_records: struct tot by tid */
	uint64_t rate_window, rate_count;
	bool switch_records;		/* blocks also begin at switch_out() */
	struct sfp_offcpu_stats st;
};

int sfp_offcpu__new(const struct sfp_offcpu_opts *opts, sfp_offcpu_emit_fn emit,
		    void *ctx, struct sfp_offcpu **out)
{
	struct sfp_offcpu *o;

	*out = NULL;
	if (!SFP_OPTS_VALID(opts, sfp_offcpu_opts) || !emit)
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->thresh_ns = SFP_OPTS_GET(opts, sfp_offcpu_opts, thresh_ns, 0);
	o->max_rate = SFP_OPTS_GET(opts, sfp_offcpu_opts, max_rate, 0);
	o->late_user = SFP_OPTS_GET(opts, sfp_offcpu_opts, late_user, false);
	o->switch_records = SFP_OPTS_GET(opts, sfp_offcpu_opts, switch_records,
					 false);
	o->emit = emit;
	o->ctx = ctx;
	sfp_idmap_init(&o->pend, sizeof(struct pend), 64, 75);
	sfp_idmap_init(&o->tots, sizeof(struct tot), 256, 75);
	o->sums = calloc(SUM_BUCKETS, sizeof(*o->sums));
	o->waits = calloc(WAIT_BUCKETS, sizeof(*o->waits));
	if (!o->sums || !o->waits) {
		sfp_offcpu__free(&o);
		return -ENOMEM;
	}
	o->rate_window = UINT64_MAX;
	*out = o;
	return 0;
}

bool sfp_offcpu__is_block(struct sfp_offcpu *o, uint64_t state)
{
	o->st.switches++;
	if ((state & SFP_OFFCPU_PREEMPTED) || !(state & 0xff)) {
		o->st.preempted++;
		return false;
	}
	if (!(state & SFP_OFFCPU_BLOCKED_STATES)) {
		o->st.exits++;	/* X or Z: never switched in again */
		return false;
	}
	o->st.blocks++;
	return true;
}

void sfp_offcpu__add_unwind(struct sfp_offcpu *o)
{
	o->st.unwinds++;
}

/* --- pending blocks ------------------------------------------------------ */

/* Ensure *buf holds n entries. */
static int reserve(uint64_t **buf, size_t *cap, size_t n)
{
	uint64_t *p;

	if (n <= *cap)
		return 0;
	p = realloc(*buf, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

/*
 * s kept past its record: what points into the ring's bytes (raw data,
 * user registers and stack, any array) is dropped; the chain is the
 * caller's to point at a copy.
 */
static void keep_sample(struct sfp_perf_sample *dst,
			const struct sfp_perf_sample *s)
{
	*dst = *s;
	dst->raw_data = NULL;
	dst->raw_size = 0;
	dst->user_regs = NULL;
	dst->user_stack = NULL;
	dst->user_stack_size = 0;
	dst->user_stack_dyn_size = 0;
	dst->ips = NULL;
	dst->nr_ips = 0;
	dst->read_values = NULL;
	dst->branches = NULL;
	dst->branch_counters = NULL;
	dst->intr_regs = NULL;
	dst->aux_data = NULL;
}

int sfp_offcpu__block(struct sfp_offcpu *o, const struct sfp_perf_sample *s,
		      const struct sfp_defer_user *u)
{
	size_t nk = sfp_sample_kernel_len(s);
	bool added;
	struct pend *p = sfp_idmap_get(&o->pend, s->tid, &added);

	if (!p)
		return -ENOMEM;
	if (!added && p->dead) {
		p->dead = false;	/* a reused tid (its exit's last
					   switch-out was lost): a new task */
	} else if (!added && !p->stack && s->time <= p->s.time) {
		/* Its switch-out record came first (sorted by time, it
		 * cannot: kept for a kernel that stamps them otherwise). */
		o->st.no_stack--;
		o->st.blocks--;
	} else if (!added) {
		o->st.unmatched++;	/* its switch-in was lost */
	}
	if (reserve(&p->kchain, &p->cap_k, nk ? nk : 1) ||
	    reserve(&p->uips, &p->cap_u, u->nr_unwound ? u->nr_unwound : 1))
		return -ENOMEM;
	p->stack = true;
	p->out_seen = false;
	keep_sample(&p->s, s);
	if (nk)
		memcpy(p->kchain, s->ips, nk * 8);
	p->s.ips = p->kchain;
	p->s.nr_ips = nk;
	p->kind = u->kind;
	p->cookie = u->cookie;
	p->nr_u = u->nr_unwound;
	if (p->nr_u)
		memcpy(p->uips, u->unwound, p->nr_u * 8);
	return 0;
}

static void drop(struct sfp_offcpu *o, struct pend *p);

/* The task's written total, made when missing (NULL: no memory). */
static struct tot *get_tot(struct sfp_offcpu *o,
			   const struct sfp_perf_sample *s)
{
	struct tot *t;
	bool added;

	if (!o->switch_records)
		return NULL;
	t = sfp_idmap_get(&o->tots, s->tid, &added);
	if (t && added) {
		t->pid = s->pid;
		memcpy(t->head, s, sizeof(t->head));
	}
	return t;
}

int sfp_offcpu__switch_out(struct sfp_offcpu *o,
			   const struct sfp_perf_sample *s)
{
	struct pend *p;
	bool added;

	if (!o->switch_records)
		return 0;
	o->st.switch_outs++;
	if (!get_tot(o, s))
		return -ENOMEM;
	p = sfp_idmap_get(&o->pend, s->tid, &added);
	if (!p)
		return -ENOMEM;
	if (!added && p->dead) {
		drop(o, p);	/* the exiting task's last switch-out */
		return 0;
	}
	if (!added && p->stack && !p->out_seen) {
		p->out_seen = true;	/* the block its sample began */
		return 0;
	}
	if (!added)
		o->st.unmatched++;	/* the previous block's switch-in */
	/* Its sample was lost (or filtered out: not a block, then the
	 * preempt flag said so already): the time without a stack. */
	keep_sample(&p->s, s);
	p->s.ips = p->kchain;
	p->stack = false;
	p->out_seen = true;
	p->kind = SFP_DEFER_USER_NONE;
	p->cookie = 0;
	p->nr_u = 0;
	o->st.no_stack++;
	o->st.blocks++;
	return 0;
}

static void drop(struct sfp_offcpu *o, struct pend *p)
{
	free(p->kchain);
	free(p->uips);
	sfp_idmap_delete(&o->pend, p);
}

/* --- per-stack sums ------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static int add_sum(struct sfp_offcpu *o, const struct pend *p, uint64_t ns)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	struct sum *sm;
	size_t i;

	h = mix(h, ((uint64_t)p->s.pid << 32) | p->s.tid);
	for (i = 0; i < p->s.nr_ips; i++)
		h = mix(h, p->kchain[i]);
	h = mix(h, ~0ULL);
	for (i = 0; i < p->nr_u; i++)
		h = mix(h, p->uips[i]);
	for (sm = o->sums[h % SUM_BUCKETS]; sm; sm = sm->next)
		if (sm->hash == h && sm->s.pid == p->s.pid &&
		    sm->s.tid == p->s.tid && sm->nr_k == p->s.nr_ips &&
		    sm->nr_u == p->nr_u &&
		    (!sm->nr_k || !memcmp(sm->chain, p->kchain, sm->nr_k * 8)) &&
		    (!sm->nr_u ||
		     !memcmp(sm->chain + sm->nr_k, p->uips, sm->nr_u * 8))) {
			sm->ns += ns;
			return 0;
		}
	sm = calloc(1, sizeof(*sm));
	if (!sm)
		return -ENOMEM;
	sm->chain = malloc((p->s.nr_ips + p->nr_u + 1) * 8);
	if (!sm->chain) {
		free(sm);
		return -ENOMEM;
	}
	sm->hash = h;
	sm->s = p->s;
	sm->nr_k = p->s.nr_ips;
	sm->nr_u = p->nr_u;
	if (sm->nr_k)
		memcpy(sm->chain, p->kchain, sm->nr_k * 8);
	if (sm->nr_u)	/* (no user chain: uips may be NULL) */
		memcpy(sm->chain + sm->nr_k, p->uips, sm->nr_u * 8);
	sm->s.ips = sm->chain;
	sm->ns = ns;
	sm->next = o->sums[h % SUM_BUCKETS];
	o->sums[h % SUM_BUCKETS] = sm;
	return 0;
}

static size_t wait_bucket(uint64_t cookie)
{
	return (size_t)((cookie * 0x9e3779b97f4a7c15ULL) >> 54) &
	       (WAIT_BUCKETS - 1);
}

/* late_user: a short block of an entry whose user chain is still to come. */
static int add_wait(struct sfp_offcpu *o, const struct pend *p, uint64_t ns)
{
	struct wait **head = &o->waits[wait_bucket(p->cookie)], *w;
	size_t nk = p->s.nr_ips;

	for (w = *head; w; w = w->next)
		if (w->cookie == p->cookie && w->s.tid == p->s.tid &&
		    w->s.pid == p->s.pid && w->nr_k == nk &&
		    (!nk || !memcmp(w->kchain, p->kchain, nk * 8))) {
			w->ns += ns;
			return 0;
		}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->kchain = malloc((nk ? nk : 1) * 8);
	if (!w->kchain) {
		free(w);
		return -ENOMEM;
	}
	if (nk)
		memcpy(w->kchain, p->kchain, nk * 8);
	w->cookie = p->cookie;
	w->s = p->s;
	w->s.ips = w->kchain;
	w->nr_k = nk;
	w->ns = ns;
	w->next = *head;
	*head = w;
	return 0;
}

/* Sum a waiting entry's blocked time with its user chain (nr may be 0). */
static int resolve_wait(struct sfp_offcpu *o, struct wait *w,
			const uint64_t *ips, size_t nr)
{
	struct pend p = {
		.s = w->s, .kchain = w->kchain, .uips = (uint64_t *)ips,
		.nr_u = nr,
	};

	p.s.nr_ips = w->nr_k;
	return add_sum(o, &p, w->ns);
}

int sfp_offcpu__user_chain(struct sfp_offcpu *o, uint64_t cookie,
			   const uint64_t *ips, size_t nr)
{
	struct wait **pw = &o->waits[wait_bucket(cookie)], *w;
	int err = 0;

	while ((w = *pw)) {
		if (w->cookie != cookie) {
			pw = &w->next;
			continue;
		}
		if (!err)
			err = resolve_wait(o, w, ips, nr);
		*pw = w->next;
		free(w->kchain);
		free(w);
	}
	return err;
}

void sfp_offcpu__set_switches(struct sfp_offcpu *o, uint64_t switches,
			      uint64_t preempted, uint64_t exits,
			      uint64_t blocks)
{
	o->st.switches = switches;
	o->st.preempted = preempted;
	o->st.exits = exits;
	o->st.blocks = blocks;
	o->st.unmatched = blocks > o->st.woken ? blocks - o->st.woken : 0;
}

/* Under the rate bound: count one more own sample in time's second. */
static bool rate_ok(struct sfp_offcpu *o, uint64_t time)
{
	uint64_t w = time / 1000000000ULL;

	if (!o->max_rate)
		return true;
	if (w != o->rate_window) {
		o->rate_window = w;
		o->rate_count = 0;
	}
	if (o->rate_count >= o->max_rate)
		return false;
	o->rate_count++;
	return true;
}

int sfp_offcpu__wake(struct sfp_offcpu *o, uint32_t tid, uint64_t time)
{
	struct pend *p = sfp_idmap_find(&o->pend, tid);
	struct sfp_defer_user u = { .kind = SFP_DEFER_USER_NONE };
	uint64_t ns;
	int err;

	if (!p)
		return 0;	/* a preemption, or not ours */
	if (p->dead)
		return 0;
	ns = time > p->s.time ? time - p->s.time : 0;
	o->st.woken++;
	o->st.blocked_ns += ns;
	if (o->switch_records) {
		struct tot *t = get_tot(o, &p->s);

		if (!t)
			return -ENOMEM;
		t->ns += ns;
	}
	if (!p->stack) {
		/* summed per thread, with no stack: said in the summary */
		o->st.no_stack_ns += ns;
		err = add_sum(o, p, ns);
		drop(o, p);
		return err;
	}
	if (ns < o->thresh_ns || !rate_ok(o, time)) {
		if (ns >= o->thresh_ns)
			o->st.over_rate++;
		else
			o->st.summed++;
		/* late_user: the entry's user chain is not known yet */
		if (o->late_user && p->kind == SFP_DEFER_USER_DEFERRED &&
		    !p->nr_u)
			err = add_wait(o, p, ns);
		else
			err = add_sum(o, p, ns);
		drop(o, p);
		return err;
	}
	p->s.period = ns;
	/* Stamped at the switch-in: the file stays in time order, and the
	 * sample says "blocked for period ns until time". */
	p->s.time = time;
	u.kind = p->kind;
	u.cookie = p->cookie;
	if (p->kind == SFP_DEFER_USER_INLINE) {
		u.ips = p->uips;
		u.nr = p->nr_u;
	}
	o->st.samples++;
	err = o->emit(o->ctx, &p->s, &u);
	drop(o, p);
	return err < 0 ? err : 0;
}

void sfp_offcpu__task_exit(struct sfp_offcpu *o, uint32_t tid)
{
	struct pend *p = sfp_idmap_find(&o->pend, tid);
	bool added;

	if (p && !p->dead)
		o->st.unmatched++;
	if (!o->switch_records)
		goto out;
	/* Its last switch-out (not a preemption) comes after the EXIT
	 * record: remember the tid as gone, so that it starts no block. */
	if (!p) {
		p = sfp_idmap_get(&o->pend, tid, &added);
		if (!p)
			return;	/* then counted unmatched at worst */
	}
	p->dead = true;
	p->stack = false;
	return;
out:
	if (p)
		drop(o, p);
}

/* Was a block of any thread of pid written? */
static bool has_pid(const struct sfp_offcpu *o, uint32_t pid)
{
	const struct tot *t;
	size_t pos = 0;

	while ((t = sfp_idmap_next(&o->tots, &pos)))
		if (t->pid == pid)
			return true;
	return false;
}

int sfp_offcpu__kernel_total(struct sfp_offcpu *o,
			     const struct sfp_perf_sample *s, bool any_task,
			     uint64_t records_lost, uint64_t ns,
			     uint64_t blocks)
{
	struct tot *t;
	struct pend p = { 0 };
	uint64_t more;

	if (!o->switch_records)
		return 0;
	t = sfp_idmap_find(&o->tots, s->tid);
	if (!t) {
		/* A thread all of whose records were lost: this
		 * recording's if its process is (-a: every task). */
		if (!any_task && !has_pid(o, s->pid)) {
			o->st.kernel_other_ns += ns;	/* not ours */
			return 0;
		}
		t = get_tot(o, s);
		if (!t)
			return -ENOMEM;
	}
	o->st.kernel_ns += ns;
	o->st.kernel_blocks += blocks;
	if (ns <= t->ns)
		return 0;
	more = ns - t->ns;
	if (!records_lost && !o->st.no_stack && !o->st.unmatched) {
		/* Nothing lost: the records have every block, and what
		 * the sums have over them is the few microseconds per
		 * block between the kernel's and the records' stamps. */
		o->st.kernel_skew_ns += more;
		return 0;
	}
	t->ns = ns;
	/* The blocks the rings lost entirely: their time, no stack. */
	memcpy(&p.s, t->head, sizeof(t->head));	/* (the rest: 0) */
	o->st.kernel_added_ns += more;
	o->st.kernel_added_tasks++;
	o->st.no_stack_ns += more;
	o->st.blocked_ns += more;
	return add_sum(o, &p, more);
}

int sfp_offcpu__finish(struct sfp_offcpu *o, uint64_t time)
{
	struct pend *p;
	size_t i, pos = 0;
	int err = 0;

	while ((p = sfp_idmap_next(&o->pend, &pos))) {
		if (!p->dead)
			o->st.unmatched++;
		free(p->kchain);
		free(p->uips);
	}
	sfp_idmap_clear(&o->pend);
	/* Entries whose user chain never came: their kernel part alone. */
	for (i = 0; i < WAIT_BUCKETS; i++) {
		struct wait *w, *n;

		for (w = o->waits[i]; w; w = n) {
			n = w->next;
			o->st.no_user++;
			if (!err)
				err = resolve_wait(o, w, NULL, 0);
			free(w->kchain);
			free(w);
		}
		o->waits[i] = NULL;
	}
	for (i = 0; i < SUM_BUCKETS && !err; i++) {
		struct sum *sm;

		for (sm = o->sums[i]; sm && !err; sm = sm->next) {
			/* Inline: the entries' deferred records are long
			 * written, and one sum stands for many entries. */
			struct sfp_defer_user u = {
				.kind = sm->nr_u ? SFP_DEFER_USER_INLINE
						 : SFP_DEFER_USER_NONE,
				.ips = sm->chain + sm->nr_k, .nr = sm->nr_u,
			};

			sm->s.period = sm->ns;
			sm->s.time = time;
			sm->s.nr_ips = sm->nr_k;
			o->st.sums++;
			err = o->emit(o->ctx, &sm->s, &u);
		}
	}
	return err < 0 ? err : 0;
}

int sfp_offcpu__flush_sums(struct sfp_offcpu *o, uint64_t time)
{
	size_t i;
	int err = 0;

	for (i = 0; i < SUM_BUCKETS; i++) {
		struct sum *sm, *n;

		for (sm = o->sums[i]; sm; sm = n) {
			struct sfp_defer_user u = {
				.kind = sm->nr_u ? SFP_DEFER_USER_INLINE
						 : SFP_DEFER_USER_NONE,
				.ips = sm->chain + sm->nr_k, .nr = sm->nr_u,
			};

			n = sm->next;
			sm->s.period = sm->ns;
			sm->s.time = time;
			sm->s.nr_ips = sm->nr_k;
			o->st.sums++;
			if (!err)
				err = o->emit(o->ctx, &sm->s, &u);
			free(sm->chain);
			free(sm);
		}
		o->sums[i] = NULL;
	}
	return err < 0 ? err : 0;
}

void sfp_offcpu__stats(const struct sfp_offcpu *o, struct sfp_offcpu_stats *st)
{
	*st = o->st;
}

void sfp_offcpu__free(struct sfp_offcpu **op)
{
	struct sfp_offcpu *o = *op;
	struct pend *p;
	size_t i, pos = 0;

	if (!o)
		return;
	while ((p = sfp_idmap_next(&o->pend, &pos))) {
		free(p->kchain);
		free(p->uips);
	}
	for (i = 0; o->sums && i < SUM_BUCKETS; i++) {
		struct sum *sm = o->sums[i], *n;

		for (; sm; sm = n) {
			n = sm->next;
			free(sm->chain);
			free(sm);
		}
	}
	for (i = 0; o->waits && i < WAIT_BUCKETS; i++) {
		struct wait *w = o->waits[i], *n;

		for (; w; w = n) {
			n = w->next;
			free(w->kchain);
			free(w);
		}
	}
	free(o->waits);
	sfp_idmap_free(&o->tots);
	sfp_idmap_free(&o->pend);
	free(o->sums);
	free(o);
	*op = NULL;
}
