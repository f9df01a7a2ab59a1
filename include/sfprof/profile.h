/* SPDX-License-Identifier: MIT */
/*
 * A symbolized profile: every sample of a perf.data file with its stitched,
 * unwound and symbolized call stack, in interned tables that the reports
 * and exports (report, flamegraph, folded, pprof, Firefox, speedscope)
 * read without touching perf.data again.
 *
 * Tables, each indexed from 0, each entry immutable once loaded:
 *
 *   strings   every name and path once (const char *, stable until free)
 *   mappings  one per distinct (dso, start, end, pgoff) seen by a sample,
 *             plus one for the kernel
 *   funcs     one per distinct (name, dso, file): what reports group by
 *   locs      one per distinct (mapping, address): what pprof calls a
 *             location; a loc has one or more lines, innermost inline first
 *   nodes     a prefix tree of locs; node 0 is the root (no loc), every
 *             other node has a parent and a loc.  A stack is named by its
 *             leaf node: walk `parent` to reach the root (leaf -> main).
 *   samples   in time order (perf's delivery order), each naming its leaf
 *             node, thread, cpu, time, period and event
 *
 * Locs are interned by address; each address is symbolized as `perf
 * script` symbolizes it, so names and offsets match its output.
 */
#ifndef SFPROF_PROFILE_H
#define SFPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sfprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sfp_profile;

struct sfp_profile_opts {
	size_t sz;
	/* don't stitch deferred user callchains (perf --no-merge-callchains) */
	bool no_merge;
	/* source file:line for every loc, and inlined functions expanded
	 * into extra lines of a loc (libdw; slower) */
	bool srclines;
	/* kallsyms to use; NULL: perf's build-id cache copy named by the
	 * file, else /proc/kallsyms */
	const char *kallsyms_path;
	/* max frames kept per stack (0: 1024); deeper stacks keep their
	 * leaf-side frames and count as truncated */
	uint32_t max_depth;
	/* debuginfod lookups for missing debug files: SFP_DEBUGINFOD_*
	 * and the total time they may take in ms (0: 30000); see
	 * sfp_symbolizer_opts in <sfprof/symbols.h> */
	int debuginfod;
	uint32_t debuginfod_timeout_ms;
	/* no names: every loc "[unknown]" with its mapping and address
	 * (which files the samples hit, fast: `record`'s build-id cache) */
	bool no_symbols;
	/* inline chains (lines of a loc, as srclines gives them but without
	 * source files) only for the user frames the dwarf unwinder found,
	 * the frames perf report expands: libdw is read only for the DSOs
	 * those frames hit, not at all for a file without dwarf samples.
	 * sample->dwarf (set in every mode) says which samples those are. */
	bool dwarf_inlines;
	/* keep one sample for all those that agree on everything but time
	 * and period (pid, tid, cpu, stack, comm, event, flags), with the
	 * summed period and their count: for readers that need no times
	 * (a report without --time; the exports but "firefox", a timeline
	 * that refuses such a profile with -EINVAL).  A system-wide file
	 * of 319k samples then holds a few thousand. */
	bool merge_samples;
	/* keep the files symbols were read from open and mapped until
	 * sfp_profile__free() (up to two descriptors a DSO): a command
	 * that exits without freeing the profile leaves their unmapping to
	 * the exit, cheaper than a munmap() a file (~2 ms of a 50 ms report
	 * in a guest whose page tables the host shadows) */
	bool keep_files;
	size_t :0;
};
#define sfp_profile_opts__last_field keep_files

enum sfp_profile_kind {
	SFP_PROFILE_USER = 0,
	SFP_PROFILE_KERNEL = 1,
};

struct sfp_profile_mapping {
	uint64_t start, end, pgoff;	/* runtime range, file offset */
	const char *path;	/* as recorded; "[kernel.kallsyms]", "[unknown]" */
	uint8_t build_id[20];
	uint8_t build_id_size;	/* 0: unknown */
	enum sfp_profile_kind kind;
};

struct sfp_profile_func {
	const char *name;	/* demangled; "[unknown]" when unresolved */
	const char *raw_name;	/* as in the symbol table (== name if none) */
	const char *dso;	/* mapping path ("[kernel.kallsyms]", module) */
	const char *file;	/* source file, NULL unless opts->srclines */
	uint32_t start_line;	/* 0 unknown */
	enum sfp_profile_kind kind;
};

struct sfp_profile_line {
	uint32_t func;		/* index into funcs */
	uint32_t line;		/* 0 unknown */
};

struct sfp_profile_loc {
	uint64_t ip;		/* runtime address */
	uint64_t addr;		/* as perf script prints it: file offset in
				 * the mapping for user frames, raw for kernel */
	uint64_t sym_off;	/* offset from the symbol start */
	uint32_t mapping;	/* index into mappings; UINT32_MAX none */
	uint32_t nr_lines;	/* >= 1; lines[0] innermost (inlined) */
	const struct sfp_profile_line *lines;
	/* DWARF's name of the real (outermost) function at ip, demangled
	 * as the symbol is: it may differ from the symbol's name
	 * ("__libc_start_main_impl" in "__libc_start_main@@GLIBC_2.34").
	 * NULL when the inline chain was not read (see opts->srclines,
	 * opts->dwarf_inlines) or DWARF does not name it. */
	const char *dwarf_name;
};

struct sfp_profile_node {
	uint32_t parent;	/* node index; the root's is UINT32_MAX */
	uint32_t loc;		/* loc index; UINT32_MAX for the root */
	uint32_t depth;		/* root 0, its children 1, ... */
};

struct sfp_profile_sample {
	uint64_t time;		/* ns, perf clock; 0 if not recorded */
	uint64_t period;	/* 1 if not recorded */
	uint32_t pid, tid;
	uint32_t cpu;		/* UINT32_MAX if not recorded */
	uint32_t stack;		/* leaf node index (0: no frames at all) */
	uint32_t comm;		/* string index of the thread's name then */
	uint32_t event;		/* index into events */
	bool truncated;		/* deeper than opts->max_depth */
	bool unmerged;		/* deferred user chain never arrived */
	/*
	 * The loc of the sample's ip when its callchain gave no frames at
	 * all (stack 0: markers only, an empty user part, a chain perf drops
	 * for an unknown context value, an unwind that found nothing):
	 * perf report still counts the sample there, perf script shows no
	 * frames.  UINT32_MAX otherwise, or when no ip was recorded.
	 */
	uint32_t ip_loc;
	/* its user frames came from the dwarf unwinder (a --call-graph
	 * dwarf stack snapshot), not from a recorded callchain */
	bool dwarf;
	/* the samples it stands for: 1, or with opts->merge_samples every
	 * sample that differed from it only in time and period (period is
	 * then their sum, time the first one's) */
	uint32_t count;
	/* the number in file order (from 0) of the last sample it stands
	 * for: what decides which of two samples came later */
	uint32_t last;
};

/* What an event's samples measure, decided once from its name
 * (sfp_profile_event_kind()) when the profile is made. */
enum sfp_profile_event_kind {
	SFP_PROFILE_EV_COUNT = 0,	/* anything else: samples count */
	SFP_PROFILE_EV_CLOCK,		/* cpu-clock, task-clock: periods are ns on CPU */
	SFP_PROFILE_EV_OFF_CPU,		/* offcpu-time: each period is ns blocked */
};

struct sfp_profile_event {
	const char *name;	/* "cpu-clock", "sched:sched_switch" */
	uint64_t sample_freq;	/* 0 if a period was given */
	uint64_t sample_period;
	enum sfp_profile_event_kind kind;
};

/**
 * sfp_profile_event_kind() - the kind of the event perf names @name:
 * "cpu-clock" and "task-clock" are clocks, SFP_OFF_CPU_EVENT_NAME is
 * off-CPU time, each also with perf's modifiers ("cpu-clock:pppH"); any
 * other name (or NULL) counts.  The one place event names are compared.
 */
SFP_API enum sfp_profile_event_kind sfp_profile_event_kind(const char *name);

/**
 * sfp_profile__load() - read, stitch, unwind and symbolize a perf.data file
 * @path: file name, "-" for standard input (perf's pipe mode)
 * @opts: NULL or size-versioned options
 * @out: the profile, to be released with sfp_profile__free()
 *
 * Files recorded with --call-graph dwarf are unwound with SFrame (built
 * from .eh_frame where a DSO has none); deferred user chains are stitched
 * like perf 6.19.
 *
 * Return: 0, -ENOENT / -EACCES opening, -EBADMSG malformed input (the log
 * callback says where), -ENOMEM.
 */
SFP_API int sfp_profile__load(const char *path,
			      const struct sfp_profile_opts *opts,
			      struct sfp_profile **out);
SFP_API void sfp_profile__free(struct sfp_profile **p);

/**
 * sfp_profile__load_mem() - sfp_profile__load() of a perf.data image in
 * memory (file or pipe layout); @data must stay valid during the call.
 *
 * Return: as sfp_profile__load().
 */
SFP_API int sfp_profile__load_mem(const void *data, size_t size,
				  const struct sfp_profile_opts *opts,
				  struct sfp_profile **out);

SFP_API size_t sfp_profile__nr_samples(const struct sfp_profile *p);
SFP_API const struct sfp_profile_sample *
sfp_profile__sample(const struct sfp_profile *p, size_t idx);

SFP_API size_t sfp_profile__nr_nodes(const struct sfp_profile *p);
SFP_API const struct sfp_profile_node *
sfp_profile__node(const struct sfp_profile *p, uint32_t idx);

SFP_API size_t sfp_profile__nr_locs(const struct sfp_profile *p);
SFP_API const struct sfp_profile_loc *
sfp_profile__loc(const struct sfp_profile *p, uint32_t idx);

SFP_API size_t sfp_profile__nr_funcs(const struct sfp_profile *p);
SFP_API const struct sfp_profile_func *
sfp_profile__func(const struct sfp_profile *p, uint32_t idx);

SFP_API size_t sfp_profile__nr_mappings(const struct sfp_profile *p);
SFP_API const struct sfp_profile_mapping *
sfp_profile__mapping(const struct sfp_profile *p, uint32_t idx);

SFP_API size_t sfp_profile__nr_events(const struct sfp_profile *p);
SFP_API const struct sfp_profile_event *
sfp_profile__event(const struct sfp_profile *p, uint32_t idx);

SFP_API const char *sfp_profile__string(const struct sfp_profile *p,
					uint32_t idx);

/* File facts for report headers; NULL when the file lacks them. */
SFP_API const char *sfp_profile__hostname(const struct sfp_profile *p);
SFP_API const char *sfp_profile__cmdline(const struct sfp_profile *p);

/*
 * What the recording lost, as its file says (PERF_RECORD_LOST: records the
 * kernel could not write into a full ring, in `chunks` LOST records;
 * PERF_RECORD_LOST_SAMPLES: samples).  All 0: nothing was reported lost.
 */
struct sfp_profile_lost {
	uint64_t records;	/* sum of the LOST records' counts */
	uint64_t chunks;	/* LOST records */
	uint64_t samples;	/* sum of the LOST_SAMPLES records' counts */
};
SFP_API void sfp_profile__lost(const struct sfp_profile *p,
			       struct sfp_profile_lost *lost);

/**
 * sfp_profile__stack() - the locs of a stack, leaf first
 * @p: profile
 * @node: a leaf node index (sample->stack)
 * @locs: filled with up to @max loc indices, leaf first
 * @max: room in @locs
 *
 * Return: the stack's depth (may exceed @max: only @max were written).
 */
SFP_API size_t sfp_profile__stack(const struct sfp_profile *p, uint32_t node,
				  uint32_t *locs, size_t max);

#ifdef __cplusplus
}
#endif

#endif /* SFPROF_PROFILE_H */
