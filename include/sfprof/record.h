/* SPDX-License-Identifier: MIT */
/*
 * sfprof: recording sessions over perf_event_open.
 *
 * A session opens the requested events for its target (a forked command,
 * attached processes or threads, or every CPU), maps one ring buffer per
 * CPU and hands the records it reads to the caller, in time order, as raw
 * perf_event records (struct perf_event_header first).  It also decodes the
 * samples it asked for (into struct sfp_perf_sample, the type a perf.data
 * file's samples have), so that a caller never touches ring bytes itself.
 *
 * Typical use:
 *
 *   SFP_OPTS(sfp_record_opts, o, .argv = argv);
 *   struct sfp_record *r;
 *   err = sfp_record__open(&o, &r);
 *   err = sfp_record__start(r);           // enables, then execs the command
 *   while (!sfp_record__done(r)) {
 *           sfp_record__poll(r, 100);
 *           sfp_record__read(r, false, on_record, ctx);
 *   }
 *   sfp_record__stop(r);
 *   sfp_record__read(r, true, on_record, ctx);   // the rest, in order
 *   sfp_record__free(&r);
 *
 * Errors are negative errnos; the reason, with what to do about it
 * (perf_event_paranoid, permissions, a PID that is gone, an unknown event
 * name, a kernel without a feature), goes to the log callback.
 */
#ifndef SFPROF_RECORD_H
#define SFPROF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sfprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perf_event_attr;
struct sfp_perf_sample;	/* <sfprof/perf.h>: the samples of sessions too */
struct sfp_record;

/* How user stacks are collected (`--call-graph`). */
enum sfp_record_call_graph {
	/* Kernel chain from the kernel; user regs + stack snapshot for an
	 * unwinder in user space.  The default. */
	SFP_RECORD_CG_SFRAME = 0,
	/* The kernel's frame-pointer walk of the user stack. */
	SFP_RECORD_CG_FP,
	/* Like SFRAME, but the snapshots are meant to be kept (perf's dwarf). */
	SFP_RECORD_CG_DWARF,
	/* The kernel's own deferral (defer_callchain, Linux 6.19+). */
	SFP_RECORD_CG_KERNEL_DEFER,
	/* No callchains. */
	SFP_RECORD_CG_NONE,
	/* BPF task_work deferral with an SFrame unwind in BPF (src/bpf/);
	 * the session opens the events, `record` attaches the program. */
	SFP_RECORD_CG_BPF_DEFER,
};

struct sfp_record_opts {
	size_t sz;
	/* Comma-separated perf event names; NULL means "cpu-clock". */
	const char *events;
	/* Sampling frequency in Hz (default 999) unless period is set. */
	uint64_t freq;
	/* Fixed sample period (perf's -c); 0 means use freq. */
	uint64_t period;
	enum sfp_record_call_graph call_graph;
	/* User stack bytes per sample (default 16384, multiple of 8). */
	uint32_t stack_size;
	/* Data pages per CPU ring, a power of two (0: a default by mode). */
	uint32_t mmap_pages;
	/* Every CPU, every process (-a). */
	bool system_wide;
	/* "PID[,PID...]": every thread of these processes (-p). */
	const char *pids;
	/* "TID[,TID...]": these threads only (-t). */
	const char *tids;
	/* A command to fork and exec once the events are enabled. */
	char *const *argv;
	/* Do not follow children / new threads. */
	bool no_inherit;
	/* Off-CPU time: one more event, sched:sched_switch sampled at every
	 * switch (period 1, raw data for prev_state), and context-switch
	 * records on the first event for the switch-in times. */
	bool off_cpu;
	/* MMAP2 records without build-ids (attr.build_id 0).  For long-lived
	 * samplers that read build-ids from the files themselves: while any
	 * session on the machine has attr.build_id set, perf 6.1's own
	 * `perf record` aborts in its build-id code (kernel 6.18), and a
	 * profiling agent must not break the perf its users run. */
	bool no_build_id;
	/* Emptied blocks (128 KiB) of the queue between the rings and the
	 * caller kept for the next records; 0 means 4, at most 8.  A block
	 * mapped anew faults in each page as it fills: `record` at 1 kHz
	 * keeps 4.  A daemon that counts its resident memory and calls
	 * sfp_record__release_pages() keeps 1 (the agent). */
	uint32_t queue_spare_blocks;
	size_t :0;
};
#define sfp_record_opts__last_field no_build_id

/* Called for each record: raw bytes (8-aligned copy), its size, its CPU ring. */
typedef int (*sfp_record_event_fn)(const void *rec, size_t size, int cpu,
				   void *ctx);

/**
 * sfp_record__open() - open events and rings for a target.
 * @opts: what to record; see struct sfp_record_opts.
 * @out: the new session.
 *
 * A command in opts->argv is forked here and waits; it is exec'd by
 * sfp_record__start() after the events are enabled (enable_on_exec).
 * It runs in a process group of its own (its pid is the group's id), as
 * a shell starts a job: signal -pid to reach what it starts too.  When
 * the caller is the foreground job of a terminal (on fd 0, 1 or 2), the
 * command's group is the terminal's foreground while it runs;
 * sfp_record__done() gives the terminal back when it ends, and when it
 * is stopped (Ctrl-Z) stops the caller with SIGTSTP, then continues the
 * command.  sfp_record__start() returns the exec's -errno when the
 * command cannot be run (-ENOENT: not found).
 *
 * Return: 0, or -EINVAL (bad options, unknown event: see the log),
 * -EACCES/-EPERM (paranoid setting or missing permission), -ESRCH (a
 * target is gone), -EOPNOTSUPP (the kernel or machine lacks what was asked,
 * e.g. defer_callchain or a hardware PMU), another negative errno.
 */
SFP_API int sfp_record__open(const struct sfp_record_opts *opts,
			     struct sfp_record **out);

/* Enable the events and let the command run.  Return: 0 or -errno. */
SFP_API int sfp_record__start(struct sfp_record *r);

/* Wait up to timeout_ms for data.  Return: 0, or -EINTR on a signal. */
SFP_API int sfp_record__poll(struct sfp_record *r, int timeout_ms);

/*
 * Make a sfp_record__poll() that waits now, or the next one, return at
 * once.  Callable from any thread and from a signal handler.
 * Return: 0 or -errno.
 */
SFP_API int sfp_record__wake(struct sfp_record *r);

/**
 * sfp_record__read() - drain the rings and deliver records in time order.
 * @final: deliver everything (after sfp_record__stop()); otherwise records
 *         newer than what every ring is known to have passed are held back
 *         until the next call, so that one task's records never arrive out
 *         of order across CPUs.
 *
 * Return: number of records delivered, a negative errno from the ring
 * (-EBADMSG: corrupt record) or the first negative value fn returned.
 */
SFP_API int sfp_record__read(struct sfp_record *r, bool final,
			     sfp_record_event_fn fn, void *ctx);

/**
 * sfp_record__drain() - move what the rings hold into the session's queue.
 *
 * May run in a thread of its own, concurrently with sfp_record__read()
 * (which drains too): a slow consumer then costs memory, not lost samples.
 *
 * Return: records moved, or a negative errno (-EBADMSG corrupt ring).
 */
SFP_API int sfp_record__drain(struct sfp_record *r);

/* Records drained and not yet delivered. */
SFP_API size_t sfp_record__queued(struct sfp_record *r);

/*
 * sfp_record__release_pages() - give back the queue's idle memory.
 *
 * The queued records live in blocks that are unmapped as they empty; a
 * few emptied blocks are kept for the next records (a fresh block faults
 * in each of its pages; opts.queue_spare_blocks), and the block being
 * filled stays while a record in it waits.  This unmaps the kept ones, and the block being
 * filled when nothing in it waits (a daemon calls it every few seconds).
 *
 * Return: bytes unmapped.
 */
SFP_API uint64_t sfp_record__release_pages(struct sfp_record *r);

/* Disable the events (records already in the rings stay readable). */
SFP_API int sfp_record__stop(struct sfp_record *r);

/* True once the command has exited or every attached target is gone. */
SFP_API bool sfp_record__done(struct sfp_record *r);

/* Exit status of the command (as from waitpid), or -1 if none/running. */
SFP_API int sfp_record__workload_status(const struct sfp_record *r);
SFP_API pid_t sfp_record__workload_pid(const struct sfp_record *r);

/* The events: count, attr as opened, name, and the id of each fd. */
SFP_API int sfp_record__nr_evsels(const struct sfp_record *r);
SFP_API const struct perf_event_attr *
sfp_record__attr(const struct sfp_record *r, int evsel);
SFP_API const char *sfp_record__evsel_name(const struct sfp_record *r,
					   int evsel);
SFP_API size_t sfp_record__ids(const struct sfp_record *r, int evsel,
			       const uint64_t **ids);

/* Number of CPU rings and the samples the kernel reported lost on each. */
SFP_API int sfp_record__nr_cpus(const struct sfp_record *r);
SFP_API uint64_t sfp_record__lost(const struct sfp_record *r, int cpu);

/* True when MMAP2 records carry build ids (kernel accepted attr.build_id). */
SFP_API bool sfp_record__has_build_ids(const struct sfp_record *r);
/* Whether the session records every CPU and task (-a). */
SFP_API bool sfp_record__system_wide(const struct sfp_record *r);

/**
 * sfp_record__decode_sample() - decode a PERF_RECORD_SAMPLE of this session.
 * @rec: the record as delivered (8-aligned, host order), @size bytes.
 * @s: the sample, as sfp_perf_decode_sample() gives a file's; its arrays
 *	and blobs point into @rec and live as long as it does.
 * @evsel: if not NULL, the index of the sample's event in the session.
 *
 * The x86-64 bp, sp, ip are sfp_perf_sample_user_reg() 6, 7 and 8.
 * Return: 0, -EBADMSG for a malformed record, -ENOENT for an unknown id,
 * -EOPNOTSUPP for a sample_type the session never asks for.
 */
SFP_API int sfp_record__decode_sample(const struct sfp_record *r,
				      const void *rec, size_t size,
				      struct sfp_perf_sample *s, int *evsel);

/**
 * sfp_record__decode_id() - the sample_id_all trailer of a non-sample record.
 * Fills pid, tid, time, cpu, id of @s (those present; the rest is zero).
 * Return: 0 or -EBADMSG.
 */
SFP_API int sfp_record__decode_id(const struct sfp_record *r, const void *rec,
				  size_t size, struct sfp_perf_sample *s);

/**
 * sfp_record__probe_defer_callchain() - can this kernel defer user chains?
 *
 * Opens a disabled cpu-clock event on this thread with defer_callchain
 * (attr bit 38).  Return: 1 yes, 0 no (the kernel rejects the bit: EINVAL
 * or E2BIG), or a negative errno for an unrelated failure.
 */
SFP_API int sfp_record__probe_defer_callchain(void);

/* Index of the off-CPU event (sched:sched_switch) of a session opened
 * with opts.off_cpu, -1 without. */
SFP_API int sfp_record__off_cpu_evsel(const struct sfp_record *r);

/* The callchain mode the session records with. */
SFP_API enum sfp_record_call_graph
sfp_record__call_graph(const struct sfp_record *r);

/* Name of a callchain mode as --call-graph spells it. */
SFP_API const char *sfp_record__call_graph_name(enum sfp_record_call_graph m);

/*
 * Close everything.  A command still running gets SIGTERM and, if it is
 * still there 2 s later, SIGKILL; it is always reaped.
 */
SFP_API void sfp_record__free(struct sfp_record **r);

#ifdef __cplusplus
}
#endif

#endif /* SFPROF_RECORD_H */
