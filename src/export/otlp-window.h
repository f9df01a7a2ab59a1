/* SPDX-License-Identifier: MIT */
/*
 * OTLP bytes in memory for one window of a profile: the request an OTLP
 * sink of the agent posts, written from the profile's tables (otlp.c),
 * beside the pprof of pprof-window.h.
 */
#ifndef SFP_EXPORT_OTLP_WINDOW_H
#define SFP_EXPORT_OTLP_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sfprof/profile.h>

#include "common/internal.h"

/* What a window adds to an ExportProfilesServiceRequest. */
struct sfp_otlp_window {
	uint64_t time_nanos;	/* the window's start, Unix time */
	uint64_t duration_nanos;	/* its length */
	uint64_t seq;		/* its number: with time_nanos, the profile ids */
	/* string attributes every sample gets (key, value), as the pprof's
	 * window labels */
	const char *const (*labels)[2];
	size_t nr_labels;
	/* the Resource's attributes (key, value): the agent's label names
	 * become the semantic conventions' (sfp_otlp_resource_key()) */
	const char *const (*resource)[2];
	size_t nr_resource;
};

/*
 * The ExportProfilesServiceRequest (profiles/v1development, uncompressed)
 * of p with x's facts, in a malloc'ed buffer (*out, *len): the request
 * otlp_convert() (src/agent/otlp-convert.c) builds from the same window's
 * pprof, without the pprof.  Return: 0, -ENOMEM.
 */
SFP_HIDDEN int sfp_otlp_encode(const struct sfp_profile *p,
			       const struct sfp_otlp_window *x, void **out,
			       size_t *len);

/* --- the rules both OTLP writers follow (otlp.c, otlp-convert.c) --- */

/* A mapping's build-id attribute (semantic conventions). */
#define SFP_OTLP_BUILD_ID_KEY "process.executable.build_id.gnu"

/* The Resource attribute a window label is: service_name is service.name,
 * host host.name, pid process.pid, container_id container.id; any other
 * keeps its key. */
SFP_HIDDEN const char *sfp_otlp_resource_key(const char *label);
/* True (and *v) when resource attribute KEY with VALUE is an int:
 * process.pid of a decimal number. */
SFP_HIDDEN bool sfp_otlp_resource_int(const char *key, const char *value,
				      int64_t *v);
/* process.executable.name of the main mapping's PATH: its basename, NULL
 * when there is none or it is a pseudo-file ("[vdso]"). */
SFP_HIDDEN const char *sfp_otlp_executable_name(const char *path);
/* The profile_id of sample type TYPE of a window: never all zero. */
SFP_HIDDEN void sfp_otlp_profile_id(uint64_t start_ns, uint64_t seq,
				    size_t type, uint8_t id[16]);

#endif /* SFP_EXPORT_OTLP_WINDOW_H */
