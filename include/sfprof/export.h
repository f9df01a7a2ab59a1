/* SPDX-License-Identifier: MIT */
/*
 * Exports of a symbolized profile (include/sfprof/profile.h) to the
 * formats other tools read: folded stacks (flamegraph.pl, inferno), pprof
 * (gzipped profile.proto), the Firefox Profiler, speedscope, and sfprof's
 * own self-contained interactive flame graph (HTML).
 */
#ifndef SFPROF_EXPORT_H
#define SFPROF_EXPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <sfprof/common.h>
#include <sfprof/profile.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sfp_export_opts {
	size_t sz;
	/* title shown by viewers that have one (NULL: the file's cmdline) */
	const char *title;
	/* leave kernel frames out of every stack */
	bool user_only;
	/* append " [k]" / " [u]"-style annotations where a format has no
	 * other way to tell kernel from user frames (folded) */
	bool annotate_kind;
	/* only the samples of this event (its name, e.g. "offcpu-time");
	 * NULL: every event.  Folded weighs offcpu-time samples by their
	 * period (blocked nanoseconds) and leaves them out unless named
	 * here: a sample count and a time do not add up. */
	const char *event;
	/* the flame graph's initial view of a file with off-CPU samples:
	 * "on", "off" or "both" (NULL: both); the page can switch */
	const char *view;
	size_t :0;
};
#define sfp_export_opts__last_field view

/**
 * sfp_profile__export() - write a profile in a named format
 * @p: the profile
 * @format: one of sfp_export_formats() ("folded", "pprof", ...)
 * @out: destination, written from its current position (binary formats
 *       need a stream opened in binary mode)
 * @opts: NULL or size-versioned options
 *
 * Return: 0, -EINVAL unknown format, -EIO write error, -ENOMEM.
 */
SFP_API int sfp_profile__export(const struct sfp_profile *p,
				const char *format, FILE *out,
				const struct sfp_export_opts *opts);

/* NULL-terminated list of the format names sfp_profile__export() takes. */
SFP_API const char *const *sfp_export_formats(void);

#ifdef __cplusplus
}
#endif

#endif /* SFPROF_EXPORT_H */
