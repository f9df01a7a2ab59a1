/* SPDX-License-Identifier: MIT */
/*
 * A recording, the same for `sfprof record`, `sfprof agent` and whatever
 * records next: the one object that opens the session and its pipeline,
 * lets the optional backends in, synthesizes what ran before it, runs
 * the reader thread -- which only moves records from the rings into the
 * session's queue so that the kernel never waits on the unwinding
 * (building a large library's table can take a while) -- reads that
 * queue into the pipeline, after a second source of records where there
 * is one, and ends it all: reader stopped, events off, the source
 * flushed, the last records read, the kernel's sums given, the pipeline
 * finished.
 *
 * The backends are BPF's (src/bpf/, a layer above this one), so they
 * come in as callbacks, filled by bpf/backends.h for every caller:
 *   - a second source (bpf-defer): attached to the session's events once
 *     the pipeline exists; its ring is polled before the session's queue
 *     is read, and the session's records pass through it on their way to
 *     the pipeline (it learns the processes' mappings from them);
 *   - deep stacks read at the sample, attached before the pipeline is
 *     made (the pipeline takes the copies);
 *   - off-CPU time summed in the kernel, armed at start, read at the end.
 *
 *   sfp_recorder__open()   session, backends, pipeline, kernel's records
 *   sfp_recorder__start()  events on, running processes from /proc
 *   sfp_recorder__start_reader(), __read()   the running part
 *   sfp_recorder__stop(), __finish()         the end
 */
#ifndef SFP_RECORD_RECORDER_H
#define SFP_RECORD_RECORDER_H

#include <stdbool.h>

#include <sfprof/record.h>

#include "common/internal.h"
#include "record/pipeline.h"

struct sfp_recorder;

struct sfp_recorder_source {
	void *ctx;
	/* Receives the session's records instead of the pipeline. */
	sfp_record_event_fn record;
	/* Its own ring read.  Return: records read, or -errno. */
	int (*poll)(void *ctx);
	/* At the end, before the session's last read: what it holds. */
	int (*flush)(void *ctx);
	/* After that read. */
	void (*finish)(void *ctx);
	/* sfp_recorder__open(): onto the session's events, once the
	 * pipeline exists (ro: the session's options, for its targets).
	 * Return: 0 or -errno. */
	int (*attach)(void *ctx, struct sfp_record *r, struct sfp_rec_pipe *p,
		      const struct sfp_record_opts *ro);
	/* sfp_recorder__open() with async_tables: its tables built off the
	 * reading thread.  Return: 0 or -errno. */
	int (*async_tables)(void *ctx);
};

/* Deep stacks read at the sample (bpf/deepcopy.h). */
struct sfp_recorder_deep {
	void *ctx;
	/* In the sframe mode with deep stacks on, once the session is open
	 * and before the pipeline is made.  Return: the copies for the
	 * pipeline (sfp_rec_pipe_opts.bpf_deep), or NULL -- why not is the
	 * ctx's to keep. */
	struct sfp_bpf_deep *(*attach)(void *ctx, struct sfp_record *r,
				       const struct sfp_record_opts *ro);
};

/* Off-CPU time summed in the kernel beside the session's off-CPU
 * records, so that the blocks whose records the rings lose keep their
 * time (bpf/offsum.h); used with ro->off_cpu, but not with bpf-defer,
 * whose own program on sched_switch has them all. */
struct sfp_recorder_sums {
	void *ctx;
	/* At open.  Return: 0 or -errno (the recording may go on without). */
	int (*load)(void *ctx);
	/* At start: the blocks that begin from now_ns (CLOCK_MONOTONIC). */
	void (*arm)(void *ctx, uint64_t now_ns);
	/* At stop: the sums stop moving. */
	void (*stop)(void *ctx);
	/* At the end: every task's sum into p (sfp_rec_pipe__offcpu_kernel_
	 * sum()).  Return: 0 or -errno. */
	int (*read)(void *ctx, struct sfp_rec_pipe *p);
};

/* The steps of sfp_recorder__open() and __start() that can fail, as
 * opts.failed() hears of them. */
enum sfp_recorder_step {
	SFP_RECORDER_SESSION,		/* sfp_record__open() */
	SFP_RECORDER_PIPELINE,		/* sfp_rec_pipe__new() */
	SFP_RECORDER_ATTACH,		/* the source's attach */
	SFP_RECORDER_ASYNC_TABLES,	/* the source's tables thread */
	SFP_RECORDER_SUMS,		/* the kernel sums' load */
	SFP_RECORDER_KERNEL,		/* the kernel's records synthesized */
	SFP_RECORDER_START,		/* sfp_record__start() */
	SFP_RECORDER_PROCS,		/* running processes from /proc */
};

struct sfp_recorder_opts {
	size_t sz;
	/* How long the reader thread waits for a ring's wakeup before it
	 * drains anyway (0: 50 ms). */
	int poll_ms;
	/* The reader thread turns the events off this long after it
	 * started (0: never), on time even when the unwinding lags
	 * (`record --duration`); see sfp_recorder__timed_out(). */
	double stop_after_s;
	/* Its name in /proc, so that its CPU shows apart (NULL: none). */
	const char *thread_name;
	/* A second source of records (NULL: the rings only); copied. */
	const struct sfp_recorder_source *source;
	/* sfp_recorder__open() only, from here on.  The session's and the
	 * pipeline's options (pipe's bpf_deep is the deep backend's). */
	const struct sfp_record_opts *record;
	const struct sfp_rec_pipe_opts *pipe;
	/* The pipeline's output (sfp_rec_pipe__new()). */
	sfp_rec_out_fn out;
	void *out_ctx;
	/* The other backends (NULL: none); copied. */
	const struct sfp_recorder_deep *deep;
	const struct sfp_recorder_sums *sums;
	/* Ask the source to build its tables off the reading thread. */
	bool async_tables;
	/* The callbacks' context. */
	void *ctx;
	/*
	 * A step failed, err its -errno: the caller says it in its own words
	 * (NULL: pr_warn()).  Return: 0 to go on without the step where the
	 * recording can (ASYNC_TABLES, SUMS, PROCS), or the error the call
	 * ends with; the other steps end it whatever this returns.
	 */
	int (*failed)(void *ctx, enum sfp_recorder_step step, int err);
	/* Session and pipeline made, before the kernel's records are
	 * synthesized into the output: the caller's output gets ready
	 * (record: the file and its events).  Return: 0, or -errno to end
	 * sfp_recorder__open() (said by the caller). */
	int (*ready)(void *ctx, struct sfp_recorder *rc);
	/* The events are on, before the running processes are read: what
	 * the caller does as soon as the recording runs. */
	void (*started)(void *ctx, struct sfp_recorder *rc);
	size_t :0;
};
#define sfp_recorder_opts__last_field started

/*
 * Open the recording: the session (o->record), the deep stacks' backend,
 * the pipeline (o->pipe, o->out), the source attached (and its tables
 * made off the reading thread with o->async_tables), the kernel sums
 * loaded, o->ready(), the kernel's records synthesized.  The backends'
 * objects stay the caller's, to free after the recorder.
 * Return: 0 and *out, or -errno (*out NULL; o->failed() heard which).
 */
SFP_HIDDEN int sfp_recorder__open(const struct sfp_recorder_opts *o,
				  struct sfp_recorder **out);

/*
 * Start what sfp_recorder__open() made: the events on (a command run),
 * the kernel sums armed, o->started(), then the processes already
 * running synthesized from /proc -- the record options' pids, or every
 * one system-wide.  The reader thread is started apart (__start_reader()).
 * Return: 0 or -errno (o->failed() heard which; after PROCS the
 * recording runs and is ended as usual).
 */
SFP_HIDDEN int sfp_recorder__start(struct sfp_recorder *rc);

/* What sfp_recorder__open() made. */
SFP_HIDDEN struct sfp_record *sfp_recorder__session(const struct sfp_recorder *rc);
SFP_HIDDEN struct sfp_rec_pipe *sfp_recorder__pipeline(const struct sfp_recorder *rc);

/*
 * A recorder around a session and a pipeline made by the caller, who
 * opens, starts, synthesizes and finishes them (the fields of o from
 * record on are not used).  r and p stay the caller's (and must outlive
 * the recorder).
 */
SFP_HIDDEN int sfp_recorder__new(struct sfp_record *r, struct sfp_rec_pipe *p,
				 const struct sfp_recorder_opts *o,
				 struct sfp_recorder **out);

/*
 * Start the reader thread, once the session has started.  Return: true
 * when it runs; false when no thread could be made, and the caller's
 * loop waits on the rings itself (sfp_record__poll()).
 */
SFP_HIDDEN bool sfp_recorder__start_reader(struct sfp_recorder *rc);

/* The reader thread runs. */
SFP_HIDDEN bool sfp_recorder__reader_running(const struct sfp_recorder *rc);

/* stop_after_s has passed and the events are off. */
SFP_HIDDEN bool sfp_recorder__timed_out(const struct sfp_recorder *rc);

/*
 * What came in so far, into the pipeline: the source's ring first, then
 * the session's queue (final: every record, the events being off).
 * Return: records read (>= 0), or -errno -- the reader thread's error
 * first, which stops the recording.
 */
SFP_HIDDEN int sfp_recorder__read(struct sfp_recorder *rc, bool final);

/* The reader thread stopped (woken if asleep), the events off, the
 * kernel sums stopped. */
SFP_HIDDEN void sfp_recorder__stop(struct sfp_recorder *rc);

/*
 * After stop: the source polled and flushed, every record left read, the
 * source finished.  The pipeline's own end (sfp_rec_pipe__finish()) is
 * the caller's, who may have more to give it first.  Return: 0 or -errno.
 */
SFP_HIDDEN int sfp_recorder__drain(struct sfp_recorder *rc);

/*
 * After stop, for sfp_recorder__open()'s recorders: drained, the kernel
 * sums read into the pipeline, the pipeline finished -- also when the
 * output's callback cancelled the reading (-ECANCELED: what was read is
 * finished).  Return: 0 or -errno.
 */
SFP_HIDDEN int sfp_recorder__finish(struct sfp_recorder *rc);

/* With sfp_recorder__open(): the pipeline and the session too. */
SFP_HIDDEN void sfp_recorder__free(struct sfp_recorder **rc);

#endif /* SFP_RECORD_RECORDER_H */
