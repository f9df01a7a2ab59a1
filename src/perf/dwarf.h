/* SPDX-License-Identifier: MIT */
/*
 * perf's dwarf-mode samples (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER)
 * unwound with sfprof's unwinder: one address space per process, fed from
 * the MMAP/MMAP2/FORK/COMM records, and a snapshot reader per sample.
 * The registers are read in the perf_regs order of the machine that
 * recorded the file (HEADER_ARCH: x86_64 or aarch64/arm64), whatever the
 * host; samples of another architecture fail with -EOPNOTSUPP.
 */
#ifndef SFP_PERF_DWARF_H
#define SFP_PERF_DWARF_H

#include <sfprof/perf.h>

#include "common/internal.h"

/* Frames perf unwinds at most (sysctl kernel.perf_event_max_stack). */
#define SFP_PERF_MAX_STACK 127

struct sfp_perf_unwinder;

/* hdr: the recording's header, for its build-ids (perf's build-id cache). */
SFP_HIDDEN int sfp_perf_unwinder__new(const struct sfp_perf_header_info *hdr,
				      struct sfp_perf_unwinder **out);
SFP_HIDDEN void sfp_perf_unwinder__free(struct sfp_perf_unwinder **u);

/*
 * Whether the recording read by @r can hold stack snapshots (an event
 * samples PERF_SAMPLE_STACK_USER), or cannot tell yet (pipe mode, whose
 * attrs come with the stream).  Only then is an unwinder worth having:
 * it tracks every process's mappings, and in a system-wide -g file that
 * tracking (a build-id cache probe per MMAP) was 12 % of `sfprof script`.
 */
SFP_HIDDEN bool sfp_perf_unwinder__wanted(const struct sfp_perf_reader *r);

/* Track the side-band records.  Return: 0 or -ENOMEM. */
SFP_HIDDEN int sfp_perf_unwinder__event(struct sfp_perf_unwinder *u,
					const struct sfp_perf_event *ev);

/*
 * Whether a sample carries what an unwind needs (user regs with ip and sp,
 * and stack bytes).
 */
SFP_HIDDEN bool sfp_perf_sample_has_snapshot(const struct sfp_perf_sample *s);

/*
 * Unwind a sample's user stack snapshot.  *ips (capacity *cap, grown as
 * needed) receives the user frames, the sample's user ip first.
 * callsite: give caller frames as ra - 1, the way perf script prints
 * dwarf-mode chains (a file's callchain holds return addresses as is).
 * Return: number of frames (0 when the sample has no snapshot), -ENOMEM,
 * -EOPNOTSUPP the file was recorded on an architecture sfprof cannot
 * unwind (logged once).
 */
SFP_HIDDEN int sfp_perf_unwinder__unwind(struct sfp_perf_unwinder *u,
					 const struct sfp_perf_event *ev,
					 uint64_t **ips, size_t *cap,
					 bool callsite);

/* Why walks stopped, by enum sfp_unwind_stop (for reports). */
SFP_HIDDEN const uint64_t *sfp_perf_unwinder__stops(const struct sfp_perf_unwinder *u,
						    size_t *n);

#endif /* SFP_PERF_DWARF_H */
