/* SPDX-License-Identifier: MIT */
/*
 * A string table with interning: each distinct string gets one index, in
 * order of first use.  pprof's string_table and the Firefox Profiler's
 * per-thread stringTable are both built with it.
 */
#ifndef SFP_EXPORT_STRTAB_H
#define SFP_EXPORT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "common/htab.h"
#include "common/internal.h"

struct exp_strtab {
	char **strs;		/* by index, owned copies */
	size_t n, cap;
	struct sfp_htab idx;	/* by sfp_hash_str() */
};

/*
 * exp_strtab__intern() - the index of @s, adding it when new
 * Return: the index (>= 0), or -ENOMEM.
 */
SFP_HIDDEN int64_t exp_strtab__intern(struct exp_strtab *t, const char *s);
/*
 * exp_strtab__index() - exp_strtab__intern() for writers that check once
 * at the end: the index, or 0 with *err set to -ENOMEM (the first error
 * kept).
 */
SFP_HIDDEN int64_t exp_strtab__index(struct exp_strtab *t, const char *s,
				     int *err);
SFP_HIDDEN void exp_strtab__reset(struct exp_strtab *t);	/* keep memory */
SFP_HIDDEN void exp_strtab__free(struct exp_strtab *t);

#endif /* SFP_EXPORT_STRTAB_H */
