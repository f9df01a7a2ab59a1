/* SPDX-License-Identifier: MIT */
/*
 * The state of one load: the perf.data reader's downstream pipeline
 * (stitcher -> machine model + dwarf unwinder -> symbolizer) and the
 * scratch it needs per sample.  Lives only while sfp_profile__load runs.
 */
#ifndef SFP_PROFILE_LOAD_H
#define SFP_PROFILE_LOAD_H

#include <sfprof/perf.h>
#include <sfprof/stitch.h>

#include "profile/profile-int.h"

/* raw callchain entries a memo key holds (longer chains go the long way) */
#define SFP_MEMO_IPS 6

/*
 * merge_samples: what decides a sample's merged twin, as it came in --
 * ids, the raw chain and the generations of what symbolizing it read
 * (ips past nr_ips unused).
 */
struct sfp_memo_key {
	uint64_t ip, pid_gen, ksym_gen;
	uint64_t ips[SFP_MEMO_IPS];
	uint32_t tid, pid, cpu, event, comm;
	uint32_t nr_flags;	/* nr_ips << 8 | MEMO_* flags */
};

struct sfp_memo_ent {
	struct sfp_memo_key k;
	uint32_t hash;
	uint32_t idx1;		/* the twin's index + 1; 0: empty */
	/* the hits not yet added to the twin (load.c, memo_settle()) */
	uint64_t period;
	uint32_t count, last;
};

/* inlined levels kept per location */
#define SFP_PROFILE_MAX_INLINE 16

struct sfp_machine;
struct sfp_perf_unwinder;

struct sfp_profile_loader {
	struct sfp_profile *p;
	struct sfp_perf_reader *rd;
	const struct sfp_perf_header_info *hdr;
	struct sfp_machine *m;
	struct sfp_symbolizer *sym;
	struct sfp_perf_unwinder *uw;
	/* symbol handle per profile mapping, looked up once */
	struct {
		struct sfp_symbolizer_dso *h;
		bool tried;
	} *dh;
	size_t cap_dh;
	/* per machine DSO that shares its name with an earlier one (another
	 * container's file at the same path): the dso string of its
	 * functions, a copy of the path of its own so that they never merge
	 * with the other file's (NULL: none made yet) */
	const char **dso_str;
	size_t cap_dso_str;
	bool srclines;
	bool dwarf_inlines;
	bool *chain_read;	/* per loc: inline chain read (dwarf_inlines) */
	size_t cap_chain_read;
	uint32_t max_depth;
	bool no_symbols;
	/* The processes are running (sfprof agent): a mapping's file is
	 * read through /proc/PID/root of the process whose frame first met
	 * it, so that binaries inside containers are found. */
	bool live;
	uint32_t *frames;	/* locs of the sample at hand, leaf first */
	size_t cap_frames;
	uint64_t *chain;	/* dwarf unwinder output */
	size_t cap_chain;
	/* locs of recent frames by (pid, ip, pid's map generation); kernel
	 * frames by ip alone (pid and generation 0).  chain: made by a
	 * lookup that read the loc's inline chain (dwarf_inlines).
	 * Allocated on the first frame; freed with the loader. */
	struct sfp_frame_cache_ent {
		uint64_t ip, gen;
		uint32_t pid;
		uint32_t loc1;	/* loc + 1; 0: empty (zeroed pages: a
				 * small file touches few of them) */
		bool chain;
	} *fcache;
	uint8_t fcache_bits;	/* its size: 1 << bits entries */
	uint32_t fcache_fill;	/* entries made since it was that size */
	/* per thread slot (tid hashed): the last sample's stack root-first,
	 * as locs and their nodes, so that the next sample of the thread
	 * takes the nodes of the frames it shares with it (its outer
	 * callers, mostly) without a hash lookup each */
	struct sfp_last_stack {
		uint32_t tid;
		uint32_t n, cap;
		uint32_t *locs, *nodes;
	} *last;
	/* string indices of recent threads' names, by tid: hashing the
	 * name of every sample was 7 % of a report (CPUs' samples
	 * interleave, so one entry would miss) */
	struct sfp_comm_cache_ent {
		const struct sfp_profile *p;
		uint32_t tid, idx;
		uint64_t gen;	/* sfp_machine__comm_gen() when checked */
		char name[32];
	} comm[64];
	uint32_t nr_seen;	/* samples so far (their `last` numbers) */
	/* opts->merge_samples: samples by what they must agree on, and
	 * each thread slot's last one (a thread mostly repeats itself) */
	bool merge;
	struct sfp_htab twins;
	uint32_t recent[256];
	/* merge_samples without a dwarf unwinder: the twin of recent raw
	 * samples, so that a sample seen before skips its frames' look-ups,
	 * the stack's and the twin's (a third of a report of short chains).
	 * Starts small and doubles while it fills, like the frame cache. */
	struct sfp_memo_ent *memo;
	uint8_t memo_bits;
	uint32_t memo_fill;
};

/*
 * The interned loc of one frame of process pid (kernel: the frame came
 * from a kernel context; dwarf: from the dwarf unwinder, whose frames
 * get their inline chain with opts->dwarf_inlines).  Return: 0, -ENOMEM.
 */
SFP_HIDDEN int sfp_profile_frame(struct sfp_profile *p,
				 struct sfp_profile_loader *ld, uint32_t pid,
				 uint64_t ip, bool kernel, bool dwarf,
				 uint32_t *out);

/*
 * Intern one stitched sample (a SAMPLE event, merged or passed through
 * by the stitcher) into ld->p: its frames as perf script shows them,
 * the thread's comm from ld->m.  Return: 0, -ENOMEM.
 */
/*
 * Free the loader's own buffers (handles, frames, chains, frame cache);
 * the profile, machine, symbolizer and unwinder belong to whoever set
 * them.  The file loader and the agent's windows both end with it, so a
 * buffer added to the loader is freed in one place.
 */
SFP_HIDDEN void sfp_profile_loader_release(struct sfp_profile_loader *ld);

SFP_HIDDEN int sfp_profile_loader_sample(struct sfp_profile_loader *ld,
					 const struct sfp_perf_event *ev,
					 enum sfp_stitch_how how);

/*
 * perf's build-id cache copy of the recording kernel's kallsyms
 * ($HOME/.debug/[kernel.kallsyms]/<build-id>/kallsyms) into buf.
 * Return: 0, -ENOENT (no build-id in the file or no copy), -ENAMETOOLONG.
 */
SFP_HIDDEN int sfp_profile_kallsyms_cache(const struct sfp_perf_header_info *h,
					  char *buf, size_t len);

/* Event name as perf prints it ("cpu-clock", a tracepoint's name). */
SFP_HIDDEN const char *sfp_profile_event_name(const struct sfp_perf_evsel *e);

#endif /* SFP_PROFILE_LOAD_H */
