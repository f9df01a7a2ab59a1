/* SPDX-License-Identifier: MIT */
/*
 * Reading a sample's recorded callchain the way perf does, in one place
 * for `sfprof script` (which prints it) and the profile model (which
 * interns it):
 *
 *  - entries at or above PERF_CONTEXT_MAX are context markers, not frames;
 *    the marker before a frame says whether it is a kernel one
 *    (PERF_CONTEXT_KERNEL, PERF_CONTEXT_GUEST_KERNEL) or not;
 *  - a marker perf does not know makes perf drop the whole chain (its
 *    callchain cursor is reset), so the walk then yields nothing;
 *  - perf shows at most kernel.perf_event_max_stack (127) frames of a
 *    recorded chain;
 *  - a Linux 6.19 deferred sample still waiting for its user part ends in
 *    PERF_CONTEXT_USER_DEFERRED, cookie: the cookie is not a frame;
 *  - with a PERF_CONTEXT_USER(_DEFERRED) marker the user part is in the
 *    chain (or comes with the deferred record); without one, a dwarf-mode
 *    sample's user part is unwound from its stack snapshot.
 */
#ifndef SFP_PERF_CALLCHAIN_H
#define SFP_PERF_CALLCHAIN_H

#include <sfprof/perf.h>

#include "perf/dwarf.h"

/*
 * All inline: `sfprof script` walks every chain it prints through these,
 * and a call per frame showed in its instruction count.
 */

/* State of one walk; callers read kernel and user_seen. */
struct sfp_perf_chain_walk {
	const uint64_t *ips;
	uint64_t nr, i;
	unsigned int taken;
	bool deferred;		/* the sample waits for its user part */
	bool kernel;		/* the entry last returned is a kernel frame */
	bool user_seen;		/* a PERF_CONTEXT_USER(_DEFERRED) walked past */
};

/* Whether perf knows a context marker (it drops a chain with another). */
static inline bool sfp_perf_chain__known_context(uint64_t v)
{
	switch (v) {
	case SFP_PERF_CONTEXT_HV:
	case SFP_PERF_CONTEXT_KERNEL:
	case SFP_PERF_CONTEXT_USER:
	case SFP_PERF_CONTEXT_USER_DEFERRED:
	case SFP_PERF_CONTEXT_GUEST:
	case SFP_PERF_CONTEXT_GUEST_KERNEL:
	case SFP_PERF_CONTEXT_GUEST_USER:
		return true;
	}
	return false;
}

/*
 * Start walking sm's callchain (none when the sample has no
 * PERF_SAMPLE_CALLCHAIN, or perf would drop it for an unknown marker).
 */
static inline void sfp_perf_chain__begin(struct sfp_perf_chain_walk *w,
					 const struct sfp_perf_sample *sm)
{
	uint64_t nr = sm->nr_ips;	/* 0 without PERF_SAMPLE_CALLCHAIN */
	uint64_t i;

	for (i = 0; i < nr; i++)
		if (sm->ips[i] >= SFP_PERF_CONTEXT_MAX &&
		    !sfp_perf_chain__known_context(sm->ips[i]))
			nr = 0;
	*w = (struct sfp_perf_chain_walk){
		.ips = sm->ips,
		.nr = nr,
		.deferred = sm->deferred,
	};
}

/*
 * The next entry of the walk in *ip: a frame (w->kernel says whose) or,
 * when sfp_perf_chain__at_cookie() says so, a deferred sample's cookie.
 * Markers are skipped; at most 127 entries come (perf's
 * kernel.perf_event_max_stack).
 * Return: false when done.
 */
static inline bool sfp_perf_chain__next(struct sfp_perf_chain_walk *w,
					uint64_t *ip)
{
	while (w->i < w->nr && w->taken < SFP_PERF_MAX_STACK) {
		uint64_t v = w->ips[w->i++];

		if (v >= SFP_PERF_CONTEXT_MAX) {
			w->kernel = v == SFP_PERF_CONTEXT_KERNEL ||
				    v == SFP_PERF_CONTEXT_GUEST_KERNEL;
			if (v == SFP_PERF_CONTEXT_USER ||
			    v == SFP_PERF_CONTEXT_USER_DEFERRED)
				w->user_seen = true;
			continue;
		}
		w->taken++;
		*ip = v;
		return true;
	}
	return false;
}

/*
 * Whether the entry last returned is the cookie ending the chain of a
 * deferred sample still waiting for its user part: not a frame.
 */
static inline bool
sfp_perf_chain__at_cookie(const struct sfp_perf_chain_walk *w)
{
	/* only the very last entry, right after the deferred marker */
	return w->deferred && w->i == w->nr && w->nr >= 2 &&
	       w->ips[w->nr - 2] == SFP_PERF_CONTEXT_USER_DEFERRED;
}

/*
 * After the walk: whether perf would unwind the sample's user part from
 * its stack snapshot (dwarf mode: no user marker in the chain, user regs
 * and stack bytes recorded).
 */
static inline bool
sfp_perf_chain__unwind_user(const struct sfp_perf_chain_walk *w,
			    const struct sfp_perf_sample *sm)
{
	return !w->user_seen && sm->user_stack_size && sm->user_regs_abi;
}

#endif /* SFP_PERF_CALLCHAIN_H */
