// SPDX-License-Identifier: MIT
/*
 * The stitcher: perf 6.19's merging of deferred user callchains
 * (evlist__deliver_deferred_callchain / evlist__flush_deferred_samples),
 * on top of the reader's decoded events.
 *
 * A waiting sample is kept as a copy of its raw record plus its event
 * header and re-decoded when it is delivered, so that every pointer of
 * the delivered sample (registers, stack bytes, raw data) refers to memory
 * the stitcher owns.  Waiting samples sit in one list in arrival order,
 * as in perf, which walks the whole list for every deferred record; the
 * list is short in practice (samples wait only until the task returns to
 * user space), and max_waiting bounds it when records are lost.
 */
#include <sfprof/stitch.h>

#include "perf/perf-int.h"

struct waiter {
	struct waiter *next;
	struct sfp_perf_event ev;	/* header fields; pointers unused */
	uint64_t pos;			/* push index */
	uint64_t cookie;
	uint32_t tid;
	uint8_t raw[];
};

struct sfp_stitcher {
	sfp_stitch_fn fn;
	void *ctx;
	bool no_merge;
	uint64_t max_waiting, nr_waiting;
	struct waiter *head, **tail;
	struct sfp_stitch_stats stats;
	uint64_t next_pos;		/* push index of the next event */
	uint64_t cur_pos;		/* of the event being delivered */
	uint64_t *scratch;
	size_t scratch_len;
	uint64_t *chain;
	size_t chain_len;
};

SFP_API int sfp_stitcher__new(const struct sfp_stitch_opts *opts,
			      sfp_stitch_fn fn, void *ctx,
			      struct sfp_stitcher **out)
{
	struct sfp_stitcher *st;

	if (!out || !fn)
		return -EINVAL;
	*out = NULL;
	if (!SFP_OPTS_VALID(opts, sfp_stitch_opts))
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->fn = fn;
	st->ctx = ctx;
	st->no_merge = SFP_OPTS_GET(opts, sfp_stitch_opts, no_merge, false);
	st->max_waiting = SFP_OPTS_GET(opts, sfp_stitch_opts, max_waiting, 0);
	if (!st->max_waiting)
		st->max_waiting = 1u << 20;
	st->tail = &st->head;
	*out = st;
	return 0;
}

static int grow(uint64_t **p, size_t *len, size_t need)
{
	uint64_t *n;

	if (*len >= need)
		return 0;
	n = realloc(*p, need * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*p = n;
	*len = need;
	return 0;
}

/*
 * Rebuild the waiting sample's event and deliver it; with ips != NULL the
 * user part is merged: chain minus the trailing cookie, then ips.
 */
static int deliver_waiter(struct sfp_stitcher *st, struct waiter *w,
			  const uint64_t *ips, uint64_t nr,
			  enum sfp_stitch_how how)
{
	struct sfp_perf_event ev = w->ev;
	int err;

	if ((err = grow(&st->scratch, &st->scratch_len, w->ev.size / 8u + 16)))
		return err;
	ev.raw = w->raw;
	err = sfp_perf_decode_sample(&w->ev.evsel->attr, w->raw, w->ev.size,
				     w->ev.swapped, &ev.sample, st->scratch,
				     st->scratch_len);
	if (err)
		return err;	/* it decoded once; cannot happen */
	st->cur_pos = w->pos;
	if (ips) {
		size_t keep = (size_t)ev.sample.nr_ips - 1, n = keep + (size_t)nr;

		if ((err = grow(&st->chain, &st->chain_len, n + 1)))
			return err;
		memcpy(st->chain, ev.sample.ips, keep * sizeof(uint64_t));
		if (nr)
			memcpy(st->chain + keep, ips, (size_t)nr * sizeof(uint64_t));
		ev.sample.ips = st->chain;
		ev.sample.nr_ips = n;
		ev.sample.deferred = false;
	}
	return st->fn(st->ctx, &ev, how);
}

static struct waiter *unlink_next(struct sfp_stitcher *st, struct waiter **pp)
{
	struct waiter *w = *pp;

	*pp = w->next;
	if (st->tail == &w->next)
		st->tail = pp;
	st->nr_waiting--;
	return w;
}

static int merge(struct sfp_stitcher *st, const struct sfp_perf_event *ev)
{
	uint32_t tid = ev->sample.tid;
	struct waiter **pp = &st->head;
	uint64_t merged = 0;
	int err = 0;

	st->stats.nr_deferred_records++;
	while (*pp) {
		struct waiter *w = *pp;
		bool same;

		if (w->tid != tid) {
			pp = &w->next;
			continue;
		}
		unlink_next(st, pp);
		same = w->cookie == ev->deferred.cookie;
		if (same) {
			st->stats.nr_merged++;
			merged++;
			err = deliver_waiter(st, w, ev->deferred.ips,
					     ev->deferred.nr,
					     SFP_STITCH_MERGED);
		} else {
			st->stats.nr_other_cookie++;
			err = deliver_waiter(st, w, NULL, 0,
					     SFP_STITCH_OTHER_COOKIE);
		}
		free(w);
		if (err)
			return err;
	}
	if (!merged)
		st->stats.nr_unused_records++;
	return 0;
}

static int wait_sample(struct sfp_stitcher *st, const struct sfp_perf_event *ev,
		       uint64_t pos)
{
	struct waiter *w;
	int err;

	if (st->nr_waiting >= st->max_waiting) {
		w = unlink_next(st, &st->head);
		st->stats.nr_leftover++;
		err = deliver_waiter(st, w, NULL, 0, SFP_STITCH_LEFTOVER);
		free(w);
		if (err)
			return err;
	}
	w = malloc(sizeof(*w) + ev->size);
	if (!w)
		return -ENOMEM;
	w->next = NULL;
	w->ev = *ev;
	w->pos = pos;
	w->cookie = ev->sample.deferred_cookie;
	w->tid = ev->sample.tid;
	memcpy(w->raw, ev->raw, ev->size);
	*st->tail = w;
	st->tail = &w->next;
	st->nr_waiting++;
	st->stats.nr_waited++;
	if (st->nr_waiting > st->stats.max_waiting)
		st->stats.max_waiting = st->nr_waiting;
	return 0;
}

SFP_API int sfp_stitcher__push(struct sfp_stitcher *st,
			       const struct sfp_perf_event *ev)
{
	uint64_t pos;

	if (!st || !ev)
		return -EINVAL;
	pos = st->next_pos++;
	if (st->no_merge) {
		st->cur_pos = pos;
		return st->fn(st->ctx, ev, SFP_STITCH_PASS);
	}
	if (ev->type == SFP_PERF_RECORD_SAMPLE && ev->sample.deferred &&
	    ev->evsel)
		return wait_sample(st, ev, pos);
	if (ev->type == SFP_PERF_RECORD_CALLCHAIN_DEFERRED)
		return merge(st, ev);
	st->cur_pos = pos;
	return st->fn(st->ctx, ev, SFP_STITCH_PASS);
}

SFP_API int sfp_stitcher__flush(struct sfp_stitcher *st)
{
	int err = 0;

	if (!st)
		return -EINVAL;
	while (st->head && !err) {
		struct waiter *w = unlink_next(st, &st->head);

		st->stats.nr_leftover++;
		err = deliver_waiter(st, w, NULL, 0, SFP_STITCH_LEFTOVER);
		free(w);
	}
	return err;
}

SFP_API uint64_t sfp_stitcher__position(const struct sfp_stitcher *st)
{
	return st ? st->cur_pos : 0;
}

SFP_API const struct sfp_stitch_stats *
sfp_stitcher__stats(const struct sfp_stitcher *st)
{
	return st ? &st->stats : NULL;
}

SFP_API void sfp_stitcher__free(struct sfp_stitcher **stp)
{
	struct sfp_stitcher *st;

	if (!stp || !*stp)
		return;
	st = *stp;
	while (st->head) {
		struct waiter *w = st->head;

		st->head = w->next;
		free(w);
	}
	free(st->scratch);
	free(st->chain);
	free(st);
	*stp = NULL;
}
