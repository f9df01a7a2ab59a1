/* SPDX-License-Identifier: MIT */
/*
 * pprof bytes in memory for one window of a profile: what a daemon hands
 * its sinks (sfprof agent), beside the file exporters of export-int.h.
 */
#ifndef SFP_EXPORT_PPROF_WINDOW_H
#define SFP_EXPORT_PPROF_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sfprof/profile.h>

#include "common/internal.h"

/* What a window adds to a pprof Profile. */
struct sfp_pprof_window {
	int64_t time_nanos;	/* the window's start, Unix time */
	int64_t duration_nanos;	/* its length */
	bool gzip;		/* gzip the bytes (HTTP), or leave them raw */
	/* string labels every sample gets (key, value) */
	const char *const (*labels)[2];
	size_t nr_labels;
};

/*
 * The pprof of p with x's facts, in a malloc'ed buffer (*out, *len).
 * Return: 0, -ENOMEM.
 */
SFP_HIDDEN int sfp_pprof_encode(const struct sfp_profile *p,
				const struct sfp_pprof_window *x, void **out,
				size_t *len);

#endif /* SFP_EXPORT_PPROF_WINDOW_H */
