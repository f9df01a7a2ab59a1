/* SPDX-License-Identifier: MIT */
/*
 * The report's working tables: entries (one per distinct sort-key tuple)
 * and, per shown entry, a call-graph tree of function-level frames.
 */
#ifndef SFP_REPORT_INT_H
#define SFP_REPORT_INT_H

#include "profile/profile-int.h"
#include "report/report.h"

/* A frame's identity as perf groups it ("function" call-graph key). */
#define SYM_UNKNOWN_BIT (1ull << 62)
/* An inlined frame.  Call graphs match those by name (its interned
 * pointer); entries by name and the real function it was inlined into
 * (an index into rep.ikeys). */
#define SYM_INLINE_BIT (1ull << 61)

struct rep_ikey {
	const char *name;
	uint64_t base;		/* sfp_rep_sym() of the real function */
};

/* A frame of a sample's stack: a loc, or one inline level of it (line
 * index into the loc's lines; -1: the loc's real function). */
struct rep_frame {
	uint32_t loc;
	int32_t line;
};

struct rep_entry {
	uint64_t key[SFP_REPORT_MAX_KEYS];
	uint64_t self, children, nr_samples;
	uint32_t loc;		/* a loc of the entry's symbol (display) */
	int32_t line;		/* its inline level, -1: the real function */
	uint32_t comm;		/* string index */
	uint32_t tid;
	uint32_t graph;		/* root graph node, NONE: not built */
	size_t stamp;		/* last sample counted + 1 */
	int inner, outer;	/* its frame positions in the sample at hand */
	bool graph_full;	/* graph below the root: some line can show */
	uint32_t comm_at;	/* the sample its comm came from */
};

struct rep_gnode {
	uint64_t sym;
	uint64_t period;
	uint32_t loc;
	int32_t line;
	uint32_t parent;
	uint32_t first_child, next;
};

/* Samples that count alike (hist.c's group_samples()). */
struct rep_group {
	uint32_t first, last;	/* its first and last sample */
	uint32_t stack, ip_loc, comm, tid;
	bool dwarf;		/* its user frames from the dwarf unwinder */
	uint64_t period, count;
};

struct rep {
	const struct sfp_profile *p;
	const struct sfp_report_opts *o;
	uint32_t event;
	uint64_t total, nr_samples;
	struct rep_entry *e;
	size_t nr_e, cap_e;
	struct sfp_htab etab;
	struct rep_gnode *g;
	size_t nr_g, cap_g;
	struct sfp_htab gtab;
	uint32_t *locs;		/* the sample at hand, leaf first */
	size_t cap_locs;
	struct rep_frame *fr;	/* its frames, inlines expanded */
	size_t cap_fr;
	uint32_t *fent;		/* entry of each of its frames (NONE: none) */
	size_t cap_fent;
	struct rep_group *grp;	/* in order of their first samples */
	size_t nr_grp, cap_grp;
	uint32_t *order;	/* shown entries, best first */
	size_t nr_order;
	struct rep_ikey *ikeys;	/* identities of inlined entries */
	size_t nr_ikeys, cap_ikeys;
	struct sfp_htab iktab;
	/* entries of recent frames by what their key is made of (loc,
	 * line, comm, thread): a hit skips the key, its hash and the
	 * table probe (frame_entry() was the top of a system-wide report) */
	struct rep_fe_cache {
		uint32_t loc, comm, tid, entry;	/* entry NONE: empty */
		int32_t line;
	} *fec;
};

/* A period as a percentage of the total, as every threshold compares it
 * (one formula, so hist.c's pruning agrees with print.c's limits). */
static inline double sfp_rep_pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* Tables of one event's section: entries, sorted and limited. */
SFP_HIDDEN int sfp_rep_build(struct rep *r);
/* "# Total Lost Samples: N" and "# Lost records: ..." when the recording
 * lost anything (perf report's header line, then the LOST records'). */
SFP_HIDDEN void sfp_rep_print_lost(const struct sfp_profile *p, FILE *out);
/* The call-graph trees of the shown entries. */
SFP_HIDDEN int sfp_rep_graphs(struct rep *r);
SFP_HIDDEN void sfp_rep_free(struct rep *r);

/* Whether sample s lies in the --time window. */
SFP_HIDDEN bool sfp_rep_time_ok(const struct rep *r,
				const struct sfp_profile_sample *s);
/* Whether sample s passes every sample-level filter. */
SFP_HIDDEN bool sfp_rep_sample_ok(const struct rep *r,
				  const struct sfp_profile_sample *s);
/* Stack of s into r->locs; Return: depth or -ENOMEM. */
SFP_HIDDEN long sfp_rep_stack(struct rep *r, const struct sfp_profile_sample *s);

/* The function of a loc (outermost line: the real, not inlined one). */
SFP_HIDDEN const struct sfp_profile_func *sfp_rep_func(const struct sfp_profile *p,
						       uint32_t loc);
SFP_HIDDEN uint64_t sfp_rep_sym(const struct sfp_profile *p, uint32_t loc);
/* Identity and name of a frame (loc, inline level); *inlined: whether
 * perf marks it "(inlined)". */
SFP_HIDDEN uint64_t sfp_rep_fsym(const struct sfp_profile *p, uint32_t loc,
				 int32_t line);
SFP_HIDDEN const char *sfp_rep_fname(const struct sfp_profile *p, uint32_t loc,
				     int32_t line);

#endif /* SFP_REPORT_INT_H */
