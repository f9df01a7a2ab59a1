// SPDX-License-Identifier: MIT
/*
 * Deep stacks (deep.h, docs/record.md "Deep stacks"): the sframe mode copies
 * a fixed --stack-size of user stack per sample, and PERF_SAMPLE_STACK_USER's
 * size is fixed per event when it is opened.  A walk that runs out of that
 * snapshot ends "truncated".  Here such a walk is completed in one of two
 * ways, each with a check, and left truncated when the check fails:
 *
 *  1. from the thread's previous complete unwind, when it holds the frame
 *     at which this walk stopped (the seam): the same return address at the
 *     same stack address.  The outer frames of a thread rarely change; when
 *     they did, the seam frame is (in all but a re-entry of the very same
 *     call site at the very same depth between two samples) a different
 *     one.  A complete unwind of the thread that does not reach as deep
 *     replaces the remembered one, so a thread seen returning above the
 *     seam is never stitched to its old frames.
 *  2. from the live process (process_vm_readv of the thread), when the
 *     bytes at the seam -- the last 4 KiB of the snapshot, with the return
 *     addresses of the frames below the seam -- are still the snapshot's,
 *     so the thread has not returned past them and called elsewhere (or
 *     has come back through the very same call sites), and when a second read of
 *     the bytes the walk used gives the same bytes (not torn by a write
 *     during the read).
 *
 * Before both, where record loaded it (bpf/deepcopy.h), the copy of the
 * stack past the snapshot that a BPF program took at the sample itself:
 * the same instant's bytes, so no check of the thread's later state is
 * needed, only that the copy is this sample's (deepcopy.c pairs them by
 * thread, registers and the bytes at the seam).  Each walk's result tells
 * it how much the thread needs.
 *
 * The snapshot itself is not kept: the completed chain is the sample's user
 * callchain, as any other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "bpf/deepcopy.h"
#include "common/idmap.h"
#include "record/deep.h"

/* Live reads: the first one, then one large one if that was not enough. */
#define LIVE_FIRST (64u << 10)
#define LIVE_MAX (1u << 20)
/* A frame pointer this far above the snapshot is on another stack: no
 * copy of this one reaches it (the BPF side's most, SFD_MAX). */
#define OTHER_FAR (256u << 10)
/* Frame records followed through a snapshot, at most. */
#define CHAIN_MAX 512u
/* Bytes of the snapshot's end compared with live memory. */
#define SEAM_MAX 4096u

struct thr {
	uint32_t tid;		/* first: the idmap's key */
	enum sfp_unwind_stop stop;	/* how its last unwind ended */
	size_t nr, cap;
	struct sfp_frame *fr;
};

struct sfp_rec_deep {
	struct sfp_idmap thr;		/* struct thr by tid */
	uint8_t *buf;			/* snapshot + live bytes */
	uint8_t *live;			/* one live read */
	uint8_t *again;			/* the second read */
	struct sfp_frame *tmp;
	size_t tmp_cap;
	struct sfp_bpf_deep *bpf;	/* copies taken at the sample */
	struct sfp_rec_deep_stats st;
};

void sfp_rec_deep__set_bpf(struct sfp_rec_deep *d, struct sfp_bpf_deep *bd)
{
	d->bpf = bd;
}

int sfp_rec_deep__new(struct sfp_rec_deep **out)
{
	struct sfp_rec_deep *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	/* small entries: a load of 1/2 costs little and probes less */
	sfp_idmap_init(&d->thr, sizeof(struct thr), 64, 50);
	*out = d;
	return 0;
}

void sfp_rec_deep__free(struct sfp_rec_deep **dp)
{
	struct sfp_rec_deep *d = *dp;
	struct thr *t;
	size_t pos = 0;

	if (!d)
		return;
	while ((t = sfp_idmap_next(&d->thr, &pos)))
		free(t->fr);
	sfp_idmap_free(&d->thr);
	free(d->buf);
	free(d->live);
	free(d->again);
	free(d->tmp);
	free(d);
	*dp = NULL;
}

void sfp_rec_deep__stats(const struct sfp_rec_deep *d,
			 struct sfp_rec_deep_stats *st)
{
	*st = d->st;
}

/* --- threads' last unwinds ---------------------------------------------- */

static struct thr *thr_find(struct sfp_rec_deep *d, uint32_t tid)
{
	return sfp_idmap_find(&d->thr, tid);
}

static struct thr *thr_add(struct sfp_rec_deep *d, uint32_t tid)
{
	bool added;

	return sfp_idmap_get(&d->thr, tid, &added);
}

void sfp_rec_deep__task_exit(struct sfp_rec_deep *d, uint32_t tid)
{
	struct thr *t = thr_find(d, tid);

	if (d->bpf)
		sfp_bpf_deep__task_exit(d->bpf, tid);
	if (!t)
		return;
	free(t->fr);
	sfp_idmap_delete(&d->thr, t);
}

static void remember(struct thr *t, const struct sfp_frame *fr, size_t n,
		     enum sfp_unwind_stop stop)
{
	if (n > t->cap) {
		struct sfp_frame *nf = realloc(t->fr, n * sizeof(*nf));

		if (!nf) {
			/* Nothing remembered rather than something stale. */
			t->nr = 0;
			return;
		}
		t->fr = nf;
		t->cap = n;
	}
	memcpy(t->fr, fr, n * sizeof(*fr));
	t->nr = n;
	t->stop = stop;
}

/* --- completion ---------------------------------------------------------- */

/* The thread's previous unwind from the seam on, if it holds the seam. */
static size_t from_prev(struct thr *t, struct sfp_frame *frames, size_t n,
			size_t max, enum sfp_unwind_stop *stop)
{
	const struct sfp_frame *seam = &frames[n - 1];
	size_t j, tail;

	/* Frame 0's ip is no return address: nothing to match it by. */
	if (n < 2 || !t || !t->nr)
		return 0;
	for (j = 1; j < t->nr; j++) {
		if (t->fr[j].sp > seam->sp)
			return 0;	/* frames' sp only grow outwards */
		if (t->fr[j].sp == seam->sp && t->fr[j].ip == seam->ip)
			break;
	}
	if (j >= t->nr || (t->fr[j - 1].flags & SFP_FRAME_SIGNAL))
		return 0;
	tail = t->nr - j - 1;
	if (tail > max - n) {
		tail = max - n;
		*stop = SFP_STOP_DEPTH;
	} else {
		*stop = t->stop;
	}
	frames[n - 1].flags = t->fr[j].flags;
	memcpy(&frames[n], &t->fr[j + 1], tail * sizeof(*frames));
	return n + tail;
}

static ssize_t vm_read(uint32_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { .iov_base = buf, .iov_len = len };
	struct iovec r = { .iov_base = (void *)(uintptr_t)addr,
			   .iov_len = len };

	return process_vm_readv((pid_t)tid, &l, 1, &r, 1, 0);
}

static int grow(uint8_t **p, size_t size)
{
	/* Never 0: realloc(p, 0) frees p and returns NULL, which would
	 * leave *p dangling (a sample whose stack perf could not copy,
	 * with only another stack's bytes). */
	uint8_t *n = realloc(*p, size ? size : 1);

	if (!n)
		return -ENOMEM;
	*p = n;
	return 0;
}

enum live_res { LIVE_OK, LIVE_CHANGED, LIVE_UNREADABLE, LIVE_TOO_DEEP };

/*
 * Read the stack past the snapshot from the live thread and walk again
 * over the snapshot followed by those bytes.
 */
static enum live_res from_live(struct sfp_rec_deep *d,
			       const struct sfp_rec_deep_walk *w,
			       struct sfp_frame *frames, size_t *np,
			       size_t max, enum sfp_unwind_stop *stop)
{
	uint64_t sp = w->regs->sp, end = sp + w->stack_size;
	uint64_t from, used_end;
	size_t want, seam_len;
	enum sfp_unwind_stop st2 = SFP_STOP_NONE;
	ssize_t got;
	int n2;
	size_t i;

	/* The last SEAM_MAX bytes of the snapshot, not only the seam
	 * frame's part of them: the seam frame's own return address lies past
	 * the snapshot, and the lower part of a frame (locals, often stale
	 * bytes) can be the same under another caller; the return addresses
	 * of the frames below it are what tells two paths apart. */
	from = w->stack_size > SEAM_MAX ? end - SEAM_MAX : sp;
	seam_len = (size_t)(end - from);
	if (max > d->tmp_cap) {
		struct sfp_frame *nf = realloc(d->tmp, max * sizeof(*nf));

		if (!nf)
			return LIVE_UNREADABLE;
		d->tmp = nf;
		d->tmp_cap = max;
	}
	for (want = LIVE_FIRST;; want = LIVE_MAX) {
		SFP_OPTS(sfp_unwind_opts, uo, .max_depth = (uint32_t)max);

		if (grow(&d->buf, w->stack_size + want) ||
		    grow(&d->live, seam_len + want) ||
		    grow(&d->again, want))
			return LIVE_UNREADABLE;
		got = vm_read(w->tid, from, d->live, seam_len + want);
		if (got < 0 || (size_t)got <= seam_len)
			return LIVE_UNREADABLE;
		/* The seam: the thread has not rewritten it since the
		 * sample (it would have, had it returned past it and called
		 * something else). */
		if (memcmp(d->live, w->stack + (from - sp), seam_len))
			return LIVE_CHANGED;
		got -= (ssize_t)seam_len;
		memcpy(d->buf, w->stack, w->stack_size);
		memcpy(d->buf + w->stack_size, d->live + seam_len,
		       (size_t)got);
		if (sfp_reader__set_snapshot(w->reader, d->buf,
					     w->stack_size + (size_t)got, sp))
			return LIVE_UNREADABLE;
		n2 = sfp_unwind(w->as, w->reader, w->regs, d->tmp, max, &uo,
				&st2);
		if (n2 < (int)*np)
			return LIVE_CHANGED;
		if (st2 != SFP_STOP_TRUNCATED)
			break;
		if ((size_t)got < want || want == LIVE_MAX)
			return LIVE_TOO_DEEP;
	}
	/* The same frames as the snapshot gave, up to the seam. */
	for (i = 0; i + 1 < *np; i++)
		if (d->tmp[i].ip != frames[i].ip || d->tmp[i].sp != frames[i].sp)
			return LIVE_CHANGED;
	/* Read again what the walk used: a write during the first read
	 * would show. */
	used_end = d->tmp[n2 - 1].sp + 64;
	if (used_end > end + (uint64_t)got)
		used_end = end + (uint64_t)got;
	if (used_end > end) {
		size_t len = (size_t)(used_end - end);

		if (vm_read(w->tid, end, d->again, len) != (ssize_t)len)
			return LIVE_UNREADABLE;
		if (memcmp(d->again, d->buf + w->stack_size, len))
			return LIVE_CHANGED;
	}
	memcpy(frames, d->tmp, (size_t)n2 * sizeof(*frames));
	*np = (size_t)n2;
	*stop = st2;
	return LIVE_OK;
}

static size_t complete_later(struct sfp_rec_deep *d,
			     const struct sfp_rec_deep_walk *w, struct thr *t,
			     struct sfp_frame *frames, size_t n, size_t max,
			     enum sfp_unwind_stop *stop);

/*
 * Walk again over the snapshot and the copy taken at the sample.  Return:
 * the frames (more than n), 0 when the copy did not take the walk further.
 */
static size_t from_sample(struct sfp_rec_deep *d,
			  const struct sfp_rec_deep_walk *w,
			  const uint8_t *extra, size_t len,
			  const struct sfp_bpf_deep_other *other,
			  struct sfp_frame *frames, size_t n, size_t max,
			  enum sfp_unwind_stop *stop)
{
	SFP_OPTS(sfp_unwind_opts, uo, .max_depth = (uint32_t)max);
	enum sfp_unwind_stop st2 = SFP_STOP_NONE;
	size_t i;
	int n2;

	if (max > d->tmp_cap) {
		struct sfp_frame *nf = realloc(d->tmp, max * sizeof(*nf));

		if (!nf)
			return 0;
		d->tmp = nf;
		d->tmp_cap = max;
	}
	if (grow(&d->buf, w->stack_size + len))
		return 0;
	/* (a snapshot perf could not take at all, and only another
	 * stack's bytes: both may be empty) */
	if (w->stack_size)
		memcpy(d->buf, w->stack, w->stack_size);
	if (len)
		memcpy(d->buf + w->stack_size, extra, len);
	if (sfp_reader__set_snapshot(w->reader, d->buf, w->stack_size + len,
				     w->regs->sp))
		return 0;
	if (other->len) {
		uint64_t lo = w->regs->sp, hi = lo + w->stack_size + len;
		size_t olen = other->len;

		/* the chain left [lo, hi): the other stack starts outside
		 * it, and what of it runs into it is the same bytes */
		if (other->addr < lo && other->addr + olen > lo)
			olen = (size_t)(lo - other->addr);
		if (other->addr >= lo && other->addr < hi)
			olen = 0;
		if (olen)
			sfp_reader__set_other_stack(w->reader, other->bytes,
						    olen, other->addr);
	}
	n2 = sfp_unwind(w->as, w->reader, w->regs, d->tmp, max, &uo, &st2);
	if (n2 <= (int)n)
		return 0;
	/* the same bytes up to the seam: the same frames */
	for (i = 0; i + 1 < n; i++)
		if (d->tmp[i].ip != frames[i].ip || d->tmp[i].sp != frames[i].sp)
			return 0;
	memcpy(frames, d->tmp, (size_t)n2 * sizeof(*frames));
	*stop = st2;
	return (size_t)n2;
}

/* Bytes past the snapshot the walk of frames[0..n) used. */
static size_t past_snapshot(const struct sfp_rec_deep_walk *w,
			    const struct sfp_frame *frames, size_t n)
{
	uint64_t end = w->regs->sp + w->stack_size;
	size_t i;

	/* this stack's frames only: not those past a switch to another */
	for (i = 0; i + 1 < n; i++)
		if (frames[i].flags & SFP_FRAME_OTHER_STACK) {
			n = i + 1;
			break;
		}
	if (!n || frames[n - 1].sp + 64 <= end)
		return 0;
	return (size_t)(frames[n - 1].sp + 64 - end);
}

/*
 * The walk stopped where the frame-pointer chain leaves the stack: the
 * chain from the sample's frame pointer, followed through the snapshot,
 * leads below the stack pointer or further above the snapshot than a
 * copy of this stack reaches, and the walk stopped at the frame whose
 * record is the chain's last on this stack (or at frame 0 when the frame
 * pointer is elsewhere from the start).  Go on g0: the frame pointer
 * there is the goroutine's, on its own stack anywhere in the heap.  A
 * frame pointer that is no frame pointer (code built without them)
 * rarely forms such a chain; it only asks for a copy, and the walk over
 * that copy checks every frame as any walk does.
 */
static bool left_stack(const struct sfp_rec_deep_walk *w,
		       const struct sfp_frame *frames, size_t n,
		       enum sfp_unwind_stop stop)
{
	uint64_t sp = w->regs->sp, end = sp + w->stack_size;
	uint64_t fp, nfp, at = 0;
	unsigned int k;

	if (stop != SFP_STOP_TRUNCATED && stop != SFP_STOP_NO_INFO &&
	    stop != SFP_STOP_UNREADABLE && stop != SFP_STOP_SP_NOT_INCREASING)
		return false;
	if (!(w->regs->valid & SFP_REGS_FP))
		return false;
	fp = w->regs->fp;
	for (k = 0; k < CHAIN_MAX && fp >= sp && fp < end && end - fp >= 16 &&
		    !(fp & 7);
	     k++) {
		memcpy(&nfp, w->stack + (fp - sp), 8);
		if (nfp >= sp && nfp < end && nfp <= fp)
			return false;	/* inwards: no chain */
		at = fp;
		fp = nfp;
	}
	if (!fp || fp & 7 || (fp >= sp && fp - sp < w->stack_size + OTHER_FAR))
		return false;
	return at ? frames[n - 1].sp == at + 16 : n == 1;
}

/* A step of frames[0..n) went onto another stack. */
static bool crossed(const struct sfp_frame *frames, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if (frames[i].flags & SFP_FRAME_OTHER_STACK)
			return true;
	return false;
}

size_t sfp_rec_deep__complete(struct sfp_rec_deep *d,
			      const struct sfp_rec_deep_walk *w,
			      struct sfp_frame *frames, size_t n, size_t max,
			      enum sfp_unwind_stop *stop)
{
	struct thr *t = thr_find(d, w->tid);
	const uint8_t *extra = NULL;
	struct sfp_bpf_deep_other other = { 0 };
	enum sfp_bpf_deep_switch sw = SFP_DEEP_SW_NONE;
	bool cut = *stop == SFP_STOP_TRUNCATED;
	bool left = d->bpf && n && left_stack(w, frames, n, *stop);
	size_t m = 0, had = 0;

	if (!n || (!cut && !left)) {
		/* Keep the remembered unwind current: a thread that
		 * returned above its old seam must not be stitched to
		 * frames it left. */
		if (t)
			remember(t, frames, n, *stop);
		if (d->bpf && n)
			sfp_bpf_deep__need(d->bpf, w->tid, w->comm, 0, false, 0,
					   SFP_DEEP_SW_NONE);
		return n;
	}
	if (cut)
		d->st.ran_out++;
	if (left) {
		d->st.left_stack++;
		sw = SFP_DEEP_SW_LEFT;
	}
	if (d->bpf) {
		had = sfp_bpf_deep__take(d->bpf, w->tid, w->time, w->regs->ip,
					 w->regs->sp, w->stack, w->stack_size,
					 &extra, &other);
		if (had || other.len)
			m = from_sample(d, w, extra, had, &other, frames, n,
					max, stop);
		if (left && m && *stop == SFP_STOP_TRUNCATED &&
		    crossed(frames, m)) {
			d->st.other_short++;
			sw = SFP_DEEP_SW_SHORT;
		} else if (left && m) {
			d->st.from_other++;
			sw = SFP_DEEP_SW_HELPED;
		} else if (left && other.len) {
			d->st.other_failed++;
			sw = SFP_DEEP_SW_FAILED;
		} else if (left) {
			d->st.other_missing++;
		}
		if (m && *stop != SFP_STOP_TRUNCATED) {
			if (cut)
				d->st.from_sample++;
			if (*stop == SFP_STOP_DEPTH)
				d->st.depth_cap++;
			sfp_bpf_deep__need(d->bpf, w->tid, w->comm,
					   past_snapshot(w, frames, m), false,
					   had, sw);
			if (t)
				remember(t, frames, m, *stop);
			return m;
		}
		if (m) {
			/* further, still cut: on from there as below */
			if (cut)
				d->st.sample_cut++;
			n = m;
		}
	}
	if (cut && !crossed(frames, n)) {
		m = complete_later(d, w, t, frames, n, max, stop);
	} else {
		/* Nothing later continues a walk on another stack: the
		 * previous unwind and live memory know this one. */
		m = n;
		if (cut) {
			d->st.too_deep++;
			d->st.truncated++;
		}
		if (t)
			remember(t, frames, m, *stop);
	}
	/* (a walk that left the stack ran out of nothing more of this
	 * stack would give it) */
	if (d->bpf)
		sfp_bpf_deep__need(d->bpf, w->tid, w->comm,
				   past_snapshot(w, frames, m),
				   *stop == SFP_STOP_TRUNCATED && !left &&
					   !crossed(frames, m),
				   had, sw);
	return m;
}

/* The thread's previous unwind or live memory (the comment at the top). */
static size_t complete_later(struct sfp_rec_deep *d,
			     const struct sfp_rec_deep_walk *w, struct thr *t,
			     struct sfp_frame *frames, size_t n, size_t max,
			     enum sfp_unwind_stop *stop)
{
	enum sfp_unwind_stop st2;
	size_t m;

	st2 = *stop;
	m = from_prev(t, frames, n, max, &st2);
	if (m) {
		d->st.from_prev++;
		if (st2 == SFP_STOP_DEPTH)
			d->st.depth_cap++;
		*stop = st2;
		remember(t, frames, m, st2);
		return m;
	}
	m = n;
	switch (from_live(d, w, frames, &m, max, stop)) {
	case LIVE_OK:
		d->st.from_live++;
		if (*stop == SFP_STOP_DEPTH)
			d->st.depth_cap++;
		if (!t)
			t = thr_add(d, w->tid);
		if (t)
			remember(t, frames, m, *stop);
		return m;
	case LIVE_CHANGED:
		d->st.changed++;
		break;
	case LIVE_UNREADABLE:
		d->st.unreadable++;
		break;
	case LIVE_TOO_DEEP:
		d->st.too_deep++;
		break;
	}
	d->st.truncated++;
	/* A truncated walk says nothing about the outer frames: the
	 * remembered ones stay for the next sample. */
	return n;
}
