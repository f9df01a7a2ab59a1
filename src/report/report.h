/* SPDX-License-Identifier: MIT */
/*
 * `sfprof report`'s engine: a profile's samples grouped into entries by
 * perf's sort keys, with overhead by children (every sample whose stack
 * passes through the entry, once per sample) and by self (the entry is the
 * sample's leaf), and a call graph per entry; printed like `perf report
 * --stdio` or in the plain tab-separated format of docs/report.md.
 */
#ifndef SFP_REPORT_H
#define SFP_REPORT_H

#include <stdio.h>

#include <sfprof/profile.h>

#include "common/internal.h"

enum sfp_report_key {
	SFP_REPORT_SYM,
	SFP_REPORT_DSO,
	SFP_REPORT_COMM,
	SFP_REPORT_PID,
};

#define SFP_REPORT_MAX_KEYS 4

enum sfp_report_graph {
	SFP_REPORT_GRAPH,	/* a tree with branch percentages */
	SFP_REPORT_FLAT,	/* every distinct path, one frame a line */
	SFP_REPORT_FOLDED,	/* every distinct path on one line, ';' joined */
	SFP_REPORT_NONE,
};

struct sfp_report_opts {
	bool children;			/* cumulate callers' overhead */
	enum sfp_report_key keys[SFP_REPORT_MAX_KEYS];
	size_t nr_keys;
	enum sfp_report_graph graph;
	bool callee;			/* graph from the entry toward callers */
	double graph_limit;		/* %: call paths below are not shown */
	double percent_limit;		/* %: entries below are not shown */
	/* filters (NULL/0: none) */
	const uint32_t *pids;
	size_t nr_pids;
	const uint32_t *tids;
	size_t nr_tids;
	const char *const *comms;
	size_t nr_comms;
	const char *const *dsos;
	size_t nr_dsos;
	bool has_time;
	uint64_t time_start, time_stop;	/* ns; stop 0: open-ended */
	bool plain;			/* docs/report.md's format */
	/* inlined functions as frames of their own, where perf shows them:
	 * user frames the dwarf unwinder found (needs a profile loaded
	 * with srclines) */
	bool inline_frames;
	/* for the header */
	const char *input;
};

/*
 * Print the report of p to out.  Return: 0, -ENOMEM, -EIO (write error).
 */
SFP_HIDDEN int sfp_report_print(const struct sfp_profile *p,
				const struct sfp_report_opts *o, FILE *out);

/*
 * The per-thread wall-clock view (report --threads): for every thread its
 * on-CPU time (cpu-clock / task-clock periods), off-CPU time (offcpu-time
 * periods, record --off-cpu) and their sum, busiest first.  Return: 0,
 * -ENOMEM, -EIO.
 */
SFP_HIDDEN int sfp_report_print_threads(const struct sfp_profile *p,
					bool plain, FILE *out);

/*
 * perf's --time argument: "start,stop" in seconds with up to nine decimals
 * ("1234.5678,1234.6"), either side may be empty.  Return: 0, -EINVAL.
 */
SFP_HIDDEN int sfp_report_parse_time(const char *s, uint64_t *start,
				     uint64_t *stop);

/* A --sort list ("sym,dso"); perf's names, "symbol" too.  Return: 0, -EINVAL. */
SFP_HIDDEN int sfp_report_parse_sort(const char *s, struct sfp_report_opts *o);

#endif /* SFP_REPORT_H */
