/* SPDX-License-Identifier: MIT */
/*
 * What every export needs from the profile model: a sample's stack as loc
 * indices (kernel frames dropped on request), which side of the
 * user/kernel boundary a loc is on, and printable frame names.
 */
#ifndef SFP_EXPORT_WALK_H
#define SFP_EXPORT_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sfprof/profile.h>

#include "common/internal.h"

struct exp_stack {
	uint32_t *locs;		/* leaf first */
	size_t n, cap;
};

/*
 * exp_stack__get() - the locs of the stack ending at @node, leaf first
 * @user_only: leave kernel locs out
 *
 * Return: 0 or -ENOMEM.
 */
SFP_HIDDEN int exp_stack__get(struct exp_stack *s, const struct sfp_profile *p,
			      uint32_t node, bool user_only);
SFP_HIDDEN void exp_stack__free(struct exp_stack *s);

/* A loc of the kernel (its mapping's kind, else its innermost function's). */
SFP_HIDDEN bool exp_loc_is_kernel(const struct sfp_profile *p,
				  const struct sfp_profile_loc *loc);

/* The last path component ("libc.so.6" for "/usr/lib/.../libc.so.6"). */
SFP_HIDDEN const char *exp_basename(const char *path);

/* True when a function name is the model's "unresolved" marker. */
SFP_HIDDEN bool exp_name_unknown(const char *name);

/* A growable byte string (for building names and lines). */
struct exp_str {
	char *s;
	size_t len, cap;
	int err;		/* sticky -ENOMEM */
};

SFP_HIDDEN void exp_str__add(struct exp_str *b, const char *s, size_t n);
SFP_HIDDEN void exp_str__adds(struct exp_str *b, const char *s);
SFP_HIDDEN void exp_str__free(struct exp_str *b);

/*
 * The name a frame is shown with: its function's name, or when that is
 * unresolved "[<DSO basename>]" as stackcollapse-perf and perf report
 * show it ("[unknown]" when the DSO is unknown too).  @buf holds the
 * bracketed form when one is made.
 */
SFP_HIDDEN const char *exp_frame_name(const struct sfp_profile *p,
				      const struct sfp_profile_loc *loc,
				      uint32_t line, char *buf, size_t sz);

/* The frame's DSO path (function's, else the loc's mapping's) or NULL. */
SFP_HIDDEN const char *exp_frame_dso(const struct sfp_profile *p,
				     const struct sfp_profile_loc *loc,
				     uint32_t line);

#endif /* SFP_EXPORT_WALK_H */
