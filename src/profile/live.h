/* SPDX-License-Identifier: MIT */
/*
 * A profile filled from live events, sample by sample, through the same
 * path that loads perf.data files (load.c: perf script's frames,
 * symbolized on this host) -- the agent's windows and pulls.  Interning
 * at the sample, not at the end, is what lets a process that exits
 * mid-window keep its frames: the machine model drops its maps at its
 * EXIT.  Each live profile owns its tables, so one costs what its
 * distinct stacks cost, whatever ran before.
 */
#ifndef SFP_PROFILE_LIVE_H
#define SFP_PROFILE_LIVE_H

#include <sfprof/perf.h>
#include <sfprof/profile.h>
#include <sfprof/stitch.h>

#include "common/internal.h"

struct sfp_machine;
struct sfp_symbolizer;
struct sfp_live_profile;

struct sfp_live_profile_opts {
	size_t sz;
	struct sfp_machine *m;		/* the events' machine model, shared */
	struct sfp_symbolizer *sym;	/* shared; replaceable, see below */
	bool no_symbols;		/* leave native frames unnamed */
	/* Its one event: cpu-clock sampled at freq Hz (each sample worth
	 * 1e9 / freq ns), or off-CPU time (each sample's period its
	 * blocked ns). */
	uint64_t freq;
	bool off_cpu;
	size_t :0;
};
#define sfp_live_profile_opts__last_field off_cpu

SFP_HIDDEN int sfp_live_profile__new(const struct sfp_live_profile_opts *o,
				     struct sfp_live_profile **out);

/* One sample (other event types are the machine model's, not ours). */
SFP_HIDDEN int sfp_live_profile__add(struct sfp_live_profile *lp,
				     const struct sfp_perf_event *ev,
				     enum sfp_stitch_how how);

SFP_HIDDEN uint64_t sfp_live_profile__samples(const struct sfp_live_profile *lp);

/* The single pid of its samples, or 0 when several. */
SFP_HIDDEN uint32_t sfp_live_profile__pid(const struct sfp_live_profile *lp);

/* Its tables as filled so far (mappings, functions, samples), before
 * finish: what to look at, not to encode. */
SFP_HIDDEN const struct sfp_profile *
sfp_live_profile__profile(const struct sfp_live_profile *lp);

/* The profile, with its event set: what to encode.  Return: NULL when
 * out of memory. */
SFP_HIDDEN const struct sfp_profile *
sfp_live_profile__finish(struct sfp_live_profile *lp);

/*
 * The machine model's key of the file behind mapping i of the profile:
 * the same file gets the same key in every live profile of one machine,
 * so that a caller can tell which files it has already met.
 */
SFP_HIDDEN uint32_t sfp_live_profile__file_key(const struct sfp_live_profile *lp,
					       size_t i);

/* Name the next frames with sym (the old symbolizer is about to be
 * freed: no handle into it is kept). */
SFP_HIDDEN void sfp_live_profile__set_symbolizer(struct sfp_live_profile *lp,
						 struct sfp_symbolizer *sym);

SFP_HIDDEN void sfp_live_profile__free(struct sfp_live_profile **lp);

#endif /* SFP_PROFILE_LIVE_H */
