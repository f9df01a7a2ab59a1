/* SPDX-License-Identifier: MIT */
/* Writers behind sfp_profile__export(), one file per format. */
#ifndef SFP_EXPORT_INT_H
#define SFP_EXPORT_INT_H

#include <stdio.h>

#include <sfprof/export.h>

#include "common/internal.h"

#define SFP_EXPORT_FORMAT(name, fn)                                  \
	SFP_HIDDEN int fn(const struct sfp_profile *p, FILE *out,     \
			  const struct sfp_export_opts *opts);
#include "formats.def"
#undef SFP_EXPORT_FORMAT

/* What the agent's windows add to a pprof Profile (sfprof agent). */
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

#endif /* SFP_EXPORT_INT_H */
