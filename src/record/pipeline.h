/* SPDX-License-Identifier: MIT */
/*
 * The record pipeline: what happens to each record a session reads before
 * it reaches the output file.
 *
 *   session records ──► side-band (MMAP2/COMM/FORK/EXIT) ──► address spaces
 *                  └──► samples ──► deferral engine ──► unwinder (snapshot)
 *                                        │
 *                                        ▼
 *                     rewritten samples + CALLCHAIN_DEFERRED ──► out()
 *
 * In the sframe mode the samples are unwound here and written in the
 * deferred (or, with inline, classic) form without their stack bytes; in
 * the other modes every record goes out unchanged.  Processes that were
 * running before recording began (-p, -a) get MMAP2/COMM records made from
 * /proc, as perf synthesizes them, so that both the unwinder and the
 * file's readers know their mappings.
 */
#ifndef SFP_RECORD_PIPELINE_H
#define SFP_RECORD_PIPELINE_H

#include <sfprof/perf.h>
#include <sfprof/stitch.h>
#include <sfprof/unwind.h>

#include "defer/engine.h"
#include "record/deep.h"
#include "record/offcpu.h"
#include "record/record.h"

struct sfp_rec_pipe;
struct sfp_bpf_deep;

/* Receives each output record (host order, 8-aligned, header.size bytes). */
typedef int (*sfp_rec_out_fn)(void *ctx, const void *rec, size_t size);

/*
 * Or receives each output event typed, with no bytes in between: the
 * consumer that aggregates (the agent) instead of the one that writes a
 * file.  A sample comes with its whole chain -- the kernel's part, then
 * PERF_CONTEXT_USER and the user frames (the sframe mode's engine runs
 * inline for it) -- built from the unwind, never encoded and decoded
 * again; how is SFP_STITCH_PASS.  With bpf-defer the user chains come
 * from the BPF side as records of their own: the pipeline stitches them
 * onto their samples (defer/stitch.c) and how says what became of each.
 * Side-band records are decoded once, from the kernel's bytes; the last
 * off-CPU sums go out before each EXIT, so that a consumer may forget a
 * task at its exit.  ev, and what it points to, live during the call; a
 * negative return stops the read and is passed back.
 */
typedef int (*sfp_rec_event_fn)(void *ctx, const struct sfp_perf_event *ev,
				enum sfp_stitch_how how);

struct sfp_rec_pipe_opts {
	size_t sz;
	bool inline_mode;	/* classic user chains instead of deferred */
	uint32_t max_depth;	/* user frames (0: 510, the kernel's cap) */
	const char *cache_dir;	/* for tables built from .eh_frame */
	/* With the session's off-CPU event (record/offcpu.h): blocks at
	 * least this long are their own sample, at most max_rate of them a
	 * second; the others are summed per stack. */
	uint64_t off_cpu_thresh_ns;
	uint64_t off_cpu_max_rate;
	/* A session without attr.build_id: the kernel's MMAP2 records get
	 * their file's build-id, read by user space (the output as with
	 * attr.build_id, without its hazards: pipeline.c) */
	bool fill_build_ids;
	/* The tracepoint path: a switch-out record begins a block too, so
	 * that a block whose sample was lost keeps its time (`record`; the
	 * agent filters its targets' samples and leaves this off). */
	bool off_cpu_switch_records;
	/* Leave walks that run out of the stack snapshot truncated instead
	 * of completing them from the thread's previous unwind or live
	 * memory (record/deep.h; `record --no-deep-stacks`). */
	bool no_deep_stacks;
	/* With deep stacks: the copies a BPF program takes at the samples
	 * (bpf/deepcopy.h; NULL: none), the caller's to load and free. */
	struct sfp_bpf_deep *bpf_deep;
	/* Which processes the caller keeps (the agent's --pid, --comm,
	 * --cgroup): a sample of one it does not is passed on without its
	 * user stack, which is not unwound, so that the unwinder builds no
	 * table and keeps no state for processes whose samples are thrown
	 * away.  Asked once per process and again after its exec; NULL:
	 * every one.  comm: its name as the records last gave it ("" when
	 * they gave none), the answer for a process already gone. */
	bool (*want)(void *want_ctx, uint32_t pid, const char *comm);
	void *want_ctx;
	/* Typed events to this consumer instead of records to out (which
	 * is then NULL): see sfp_rec_event_fn. */
	sfp_rec_event_fn on_event;
	void *event_ctx;
	/* Unwind tables are built on a thread of their own (the unwinder's
	 * loader, unwind/module.h) while the pipeline goes on: a program the
	 * machine starts must not make a daemon fall behind its rings.  A
	 * sample that meets a table still being built keeps what the walk
	 * had (counted: stats' tables_not_ready).  One pipeline of a process
	 * at a time. */
	bool async_tables;
	/* A table whose last process exits stays this long (0: freed at
	 * once) while such tables hold at most table_linger_bytes: the
	 * next process of the same file takes it up instead of decoding it
	 * again (unw_module_linger(); process-wide, like the tables). */
	uint32_t table_linger_ms;
	uint64_t table_linger_bytes;
	size_t :0;
};
#define sfp_rec_pipe_opts__last_field table_linger_bytes

struct sfp_rec_pipe_stats {
	uint64_t records_in, records_out, bytes_out;
	uint64_t undecoded;		/* records skipped: not understood
					   (event consumer only) */
	uint64_t samples;
	uint64_t lost;			/* sum of LOST records seen */
	struct sfp_defer_stats defer;	/* zero unless the engine runs */
	uint64_t stops[SFP_STOP__MAX];	/* unwind stop reasons */
	bool deep_on;			/* the next field is valid */
	struct sfp_rec_deep_stats deep;	/* walks past the snapshot */
	uint64_t tramp_frames;		/* stepped through interpreters'
					   perf trampolines (by their bytes) */
	uint64_t synthesized;		/* records made from /proc */
	uint64_t procs;			/* address spaces created */
	uint64_t mmap_stray_build_id;	/* MMAP2 flags cleared (see .c) */
	uint64_t mmap_build_id_filled;	/* fill_build_ids: MMAP2 filled */
	uint64_t mmap_no_build_id;	/* ... whose file was not found */
	uint64_t unwanted;		/* samples not unwound: want() said no */
	/* The unwinder's files (unwind/module.h): one table per file,
	 * however many processes and paths map it; files refused because
	 * their build-id (or device/inode) was not the mapped one's. */
	uint64_t unwind_files, unwind_tables, unwind_mismatch;
	/* opts.async_tables: tables given to the thread, built (or found
	 * to have none), waiting now; lookups that met one still waiting */
	uint64_t tables_queued, tables_built, tables_pending, tables_not_ready;
	/* table_linger_ms: tables taken up again, let go, idle now and
	 * their bytes (estimated: unwind/module.c) */
	uint64_t tables_revived, tables_expired, tables_idle;
	uint64_t tables_idle_bytes;
	bool off_cpu;			/* the next field is valid */
	struct sfp_offcpu_stats offcpu;
};

/* out, ctx: the records' consumer; NULL with opts->on_event. */
SFP_HIDDEN int sfp_rec_pipe__new(struct sfp_record *r,
				 const struct sfp_rec_pipe_opts *opts,
				 sfp_rec_out_fn out, void *ctx,
				 struct sfp_rec_pipe **p);

/* True when samples are rewritten (sframe mode). */
SFP_HIDDEN bool sfp_rec_pipe__rewrites(const struct sfp_rec_pipe *p);

/* The attr the output file must declare for evsel. */
SFP_HIDDEN const struct perf_event_attr *
sfp_rec_pipe__out_attr(const struct sfp_rec_pipe *p, int evsel);

/* With opts->on_event: the evsel the events of output evsel point to
 * (its idx is evsel), NULL without or out of range. */
SFP_HIDDEN const struct sfp_perf_evsel *
sfp_rec_pipe__evsel(const struct sfp_rec_pipe *p, int evsel);

/* The name the output file gives evsel ("offcpu-time" for the off-CPU
 * event, as perf names its own). */
SFP_HIDDEN const char *sfp_rec_pipe__out_name(const struct sfp_rec_pipe *p,
					      int evsel);

/*
 * MMAP2 and COMM records from /proc for the processes of -p targets, or of
 * every process with -a.  Call after the events are enabled, as perf does
 * (a mapping made in between shows up twice, which is harmless).
 */
SFP_HIDDEN int sfp_rec_pipe__synthesize(struct sfp_rec_pipe *p,
					const pid_t *pids, size_t nr_pids,
					bool all);

/*
 * The kernel image's PERF_RECORD_MMAP ("[kernel.kallsyms]_text"), which
 * perf's tools need to resolve kernel addresses.  Return: 0 or -errno.
 */
SFP_HIDDEN int sfp_rec_pipe__synthesize_kernel(struct sfp_rec_pipe *p);

/* One record from the session (an sfp_record_event_fn). */
SFP_HIDDEN int sfp_rec_pipe__record(const void *rec, size_t size, int cpu,
				    void *pipe);

/* End of recording: emit the deferred records still owed (and, with
 * opts->on_event and bpf-defer, the samples still waiting for theirs,
 * unmerged). */
SFP_HIDDEN int sfp_rec_pipe__finish(struct sfp_rec_pipe *p);

/*
 * Off-CPU time (a session with opts.off_cpu, sframe mode): write the
 * per-stack sums of the short blocks so far (sfp_offcpu__flush_sums()),
 * stamped with the newest record's time.  Return: 0 or -errno.
 */
SFP_HIDDEN int sfp_rec_pipe__flush_offcpu(struct sfp_rec_pipe *p);

/* True when evsel's output is the off-CPU event (offcpu-time). */
SFP_HIDDEN bool sfp_rec_pipe__is_offcpu(const struct sfp_rec_pipe *p,
					int evsel);

/*
 * --call-graph bpf-defer --off-cpu (src/bpf/records.c): one block the BPF
 * program on sched_switch matched with its switch-in at time_in.  s: the
 * switch-out of the off-CPU event (ips: the kernel part); u:
 * its entry's cookie or no user part; new_entry: the block asked for its
 * entry's user unwind.  The off-CPU samples go back into the session (in
 * time order with the rest), the sums at sfp_rec_pipe__finish().
 * Return: 0 or -errno.
 */
SFP_HIDDEN int sfp_rec_pipe__offcpu_block(struct sfp_rec_pipe *p,
					  const struct sfp_perf_sample *s,
					  const struct sfp_defer_user *u,
					  uint64_t time_in, bool new_entry);

/* The user chain of a kernel entry (a deferred record of the BPF side). */
SFP_HIDDEN int sfp_rec_pipe__offcpu_user(struct sfp_rec_pipe *p,
					 uint64_t cookie, const uint64_t *ips,
					 size_t nr);

/* The BPF side's switch-out counts (sfp_offcpu__set_switches()). */
SFP_HIDDEN void sfp_rec_pipe__offcpu_switches(struct sfp_rec_pipe *p,
					      uint64_t switches,
					      uint64_t preempted,
					      uint64_t exits, uint64_t blocks);

/* The kernel's off-CPU sum of a task (sfp_offcpu__kernel_total()), before
 * sfp_rec_pipe__finish(); the signature of sfp_bpf_offsum_fn. */
SFP_HIDDEN int sfp_rec_pipe__offcpu_kernel_sum(void *pipe, uint32_t pid,
					       uint32_t tid, uint64_t ns,
					       uint64_t blocks);

/*
 * For a daemon between batches: give back the resident pages of the
 * files the unwinder reads code from (unw_module_release_pages()).
 * Return: bytes of mappings given back.
 */
SFP_HIDDEN uint64_t sfp_rec_pipe__release_pages(struct sfp_rec_pipe *p);

SFP_HIDDEN void sfp_rec_pipe__stats(const struct sfp_rec_pipe *p,
				    struct sfp_rec_pipe_stats *st);

/*
 * The i-th DSO where an unwind stopped for lack of a table, with the
 * number of unwinds it stopped.  Return: its path, NULL past the end.
 */
SFP_HIDDEN const char *sfp_rec_pipe__no_table(const struct sfp_rec_pipe *p,
					      size_t i, uint64_t *count);

SFP_HIDDEN void sfp_rec_pipe__free(struct sfp_rec_pipe **p);

#endif /* SFP_RECORD_PIPELINE_H */
