/* SPDX-License-Identifier: MIT */
/*
 * `--call-graph bpf-defer`: the BPF task_work backend of `record`.
 *
 *   sfp_bpf_defer__load()    open + verify the BPF object (before the
 *                            session: a rejection falls back to sframe)
 *   sfp_bpf_defer__attach()  attach to every event fd of the session;
 *                            preload tables of what the target maps
 *   sfp_bpf_defer__poll()    ring buffer -> perf records (samples in the
 *                            deferred form, PERF_RECORD_CALLCHAIN_DEFERRED)
 *                            queued into the session, which delivers them
 *                            in time order with its side-band records
 *   sfp_bpf_defer__record()  the session's record callback: loads tables
 *                            for new executable mappings, then hands the
 *                            record on to the pipeline
 */
#ifndef SFP_BPF_DEFER_H
#define SFP_BPF_DEFER_H

#include <sfprof/unwind.h>

#include "record/pipeline.h"

struct sfp_bpf_defer;

struct sfp_bpf_defer_opts {
	size_t sz;
	uint32_t max_depth;	/* user frames (0: 510) */
	uint32_t max_fdes;	/* FDE array entries (0: 262144) */
	uint32_t max_fres;	/* FRE array entries (0: 1048576) */
	const char *cache_dir;	/* for tables built from .eh_frame */
	/* BPF ring buffer bytes, a power of two of at least a page
	 * (0: 16 MiB, for record's rates; the agent's 19 Hz needs far less,
	 * and the ring's pages are resident: mapped twice, counted twice) */
	uint32_t ring_bytes;
	/* --off-cpu: the program on sched_switch too (record/offcpu.h),
	 * for every task (-a) or the targets given at attach, following
	 * their forks unless no_inherit. */
	bool off_cpu;
	bool off_cpu_all;
	bool no_inherit;
	size_t :0;
};
#define sfp_bpf_defer_opts__last_field no_inherit

/* Room for the BPF side's counters (SFB_ST__MAX, checked at build). */
#define SFP_BPF_KSTATS 32

struct sfp_bpf_defer_stats {
	uint64_t samples;		/* sample records received */
	uint64_t user_samples;		/* of which with a cookie */
	uint64_t deferred;		/* deferred records written */
	uint64_t deferred_dropped;	/* exec/exit/wrong task: not written */
	uint64_t frames, sframe_frames, fp_frames;
	uint64_t stops[SFP_STOP__MAX];
	uint64_t no_table_unwinds;	/* unwinds that met a module without
					   a table */
	uint64_t no_table_samples;	/* samples served by those */
	uint64_t misses;		/* modules reported missing by BPF */
	uint64_t stale;			/* callbacks that never came */
	uint64_t late_blocks;		/* blocks whose switch-in BPF missed,
					   given their entry's record again */
	uint64_t kernel[SFP_BPF_KSTATS]; /* the BPF side's counters
					    (SFB_ST_*) */
	uint64_t tables_loaded, tables_evicted, tables_failed;
	uint64_t tables_pending;	/* requests the tables' thread has
					   not answered yet */
	uint64_t tables_dropped;	/* requests its full queue refused */
	uint64_t prog_misses;		/* runs of the programs the kernel
					   skipped (its recursion guard):
					   on_switch's lose a block */
};

/*
 * Load and verify the programs.  Return: 0; -EOPNOTSUPP the kernel lacks
 * BPF task_work (the kfunc) or BTF; -EPERM not allowed to load BPF;
 * -EINVAL the verifier rejected the program (its log went to pr_warn).
 */
SFP_HIDDEN int sfp_bpf_defer__load(const struct sfp_bpf_defer_opts *opts,
				   struct sfp_bpf_defer **out);

/*
 * Attach to the session's events (left disabled: the session enables
 * them); p gives the output attrs.  The tables of the command (argv) or of
 * the attached processes ("PID[,PID...]") are loaded before any sample.
 * With off_cpu, the sched_switch program is attached too, for the command
 * (from its exec), the processes pids or the threads tids.
 */
SFP_HIDDEN int sfp_bpf_defer__attach(struct sfp_bpf_defer *b,
				     struct sfp_record *r,
				     struct sfp_rec_pipe *p,
				     const char *const *argv,
				     const char *pids, const char *tids);

/* After the last poll: the deferred records still held (entries walked
 * at a block, docs/record-bpf.md) into the session, before its last read.
 * Return: 0 or -errno. */
SFP_HIDDEN int sfp_bpf_defer__flush(struct sfp_bpf_defer *b);

/* After the last read: the BPF side's switch counters into the off-CPU
 * statistics of the pipeline. */
SFP_HIDDEN void sfp_bpf_defer__finish(struct sfp_bpf_defer *b);

/* Move what the ring buffer holds into the session.  Return: records or
 * -errno. */
SFP_HIDDEN int sfp_bpf_defer__poll(struct sfp_bpf_defer *b);

/*
 * A descriptor that polls readable when the BPF side asked for prompt
 * attention: a module without a table met by a walk (at most once a
 * second per module).  Records come without a wakeup, so a loop that
 * sleeps between polls learns of a new program at once, not at its next
 * round.  -1 when there is none.
 */
SFP_HIDDEN int sfp_bpf_defer__wait_fd(const struct sfp_bpf_defer *b);

/* An sfp_record_event_fn; ctx is the sfp_bpf_defer. */
SFP_HIDDEN int sfp_bpf_defer__record(const void *rec, size_t size, int cpu,
				     void *ctx);

SFP_HIDDEN void sfp_bpf_defer__stats(const struct sfp_bpf_defer *b,
				     struct sfp_bpf_defer_stats *st);

/*
 * From now on, build the tables on a thread of their own, not in
 * sfp_bpf_defer__record() and __poll() (sfprof agent: the reader must keep
 * up with the rings whatever programs start).  Return: 0 or -errno.
 */
SFP_HIDDEN int sfp_bpf_defer__async_tables(struct sfp_bpf_defer *b);

SFP_HIDDEN void sfp_bpf_defer__free(struct sfp_bpf_defer **b);

#endif /* SFP_BPF_DEFER_H */
