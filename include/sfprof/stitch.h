/* SPDX-License-Identifier: MIT */
/*
 * sfprof: stitching deferred user callchains (Linux 6.19 ABI) onto the
 * samples that wait for them, with exactly perf 6.19's semantics:
 *
 *  - a sample whose callchain ends in PERF_CONTEXT_USER_DEFERRED, cookie
 *    waits (it is copied; the caller's event may go away);
 *  - on each PERF_RECORD_CALLCHAIN_DEFERRED every waiting sample of the
 *    record's tid is delivered, in arrival order: with the same cookie it
 *    is merged (its chain minus the cookie, so the marker stays as the
 *    user context, followed by the record's ips), with another cookie it
 *    is delivered unmerged; samples of other tids keep waiting; the record
 *    itself is consumed;
 *  - everything else, including samples that carry a classic
 *    PERF_CONTEXT_USER part, passes through at once;
 *  - sfp_stitcher__flush() delivers what still waits, unmerged, and counts
 *    it.
 *
 * With no_merge every event passes through untouched (perf script
 * --no-merge-callchains), deferred records included.
 */
#ifndef SFPROF_STITCH_H
#define SFPROF_STITCH_H

#include <stdbool.h>
#include <stdint.h>

#include <sfprof/perf.h>

#ifdef __cplusplus
extern "C" {
#endif

enum sfp_stitch_how {
	SFP_STITCH_PASS = 0,	/* not a waiting sample: as it came */
	SFP_STITCH_MERGED,	/* user part appended from a deferred record */
	SFP_STITCH_OTHER_COOKIE,/* same tid, other cookie: unmerged */
	SFP_STITCH_LEFTOVER,	/* never matched (flush or cap): unmerged */
};

/*
 * Receives every event in delivery order.  A non-zero return stops the
 * stitcher and is passed back to the caller of push/flush.
 */
typedef int (*sfp_stitch_fn)(void *ctx, const struct sfp_perf_event *ev,
			     enum sfp_stitch_how how);

struct sfp_stitch_stats {
	uint64_t nr_waited;		/* samples that were queued */
	uint64_t nr_merged;
	uint64_t nr_other_cookie;
	uint64_t nr_leftover;		/* delivered unmerged at flush/cap */
	uint64_t nr_deferred_records;
	uint64_t nr_unused_records;	/* deferred records that merged nothing */
	uint64_t max_waiting;
};

struct sfp_stitch_opts {
	size_t sz;
	bool no_merge;
	/* Waiting samples kept at most; beyond it the oldest is delivered
	 * unmerged (a memory bound perf does not have). 0: 1 << 20. */
	uint64_t max_waiting;
	size_t :0;
};
#define sfp_stitch_opts__last_field max_waiting

struct sfp_stitcher;

/**
 * sfp_stitcher__new() - make a stitcher.
 * @fn: delivery callback; @ctx its argument.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
SFP_API int sfp_stitcher__new(const struct sfp_stitch_opts *opts,
			      sfp_stitch_fn fn, void *ctx,
			      struct sfp_stitcher **out);

/**
 * sfp_stitcher__push() - feed the next event (in time order).
 *
 * Return: 0; the callback's non-zero value; -EBADMSG for a waiting sample
 * that cannot be re-decoded; -ENOMEM.
 */
SFP_API int sfp_stitcher__push(struct sfp_stitcher *st,
			       const struct sfp_perf_event *ev);

/**
 * sfp_stitcher__flush() - deliver every sample still waiting, unmerged.
 *
 * Return: as sfp_stitcher__push().
 */
SFP_API int sfp_stitcher__flush(struct sfp_stitcher *st);

/**
 * sfp_stitcher__position() - where the event being delivered came in.
 *
 * Valid inside the callback: the 0-based index, in push order, of the
 * event it is given (a waiting sample keeps the index of its push).  A
 * consumer that must keep the input order (convert writing a file)
 * puts a late sample back in its place with it.
 */
SFP_API uint64_t sfp_stitcher__position(const struct sfp_stitcher *st);

SFP_API const struct sfp_stitch_stats *
sfp_stitcher__stats(const struct sfp_stitcher *st);

/* Free (waiting samples are dropped, not delivered). */
SFP_API void sfp_stitcher__free(struct sfp_stitcher **st);

#ifdef __cplusplus
}
#endif

#endif /* SFPROF_STITCH_H */
