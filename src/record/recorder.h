/* SPDX-License-Identifier: MIT */
/*
 * A recording's running part, the same for `sfprof record` and `sfprof
 * agent`: the reader thread, which only moves records from the rings into
 * the session's queue so that the kernel never waits on the unwinding
 * (building a large library's table can take a while); the reading of
 * that queue into the record pipeline, after a second source of records
 * where there is one; and the end -- reader stopped, events off, the
 * source flushed, the last records read.
 *
 * The second source is bpf-defer (src/bpf/, a layer above this one), so
 * it comes in as callbacks: its ring is polled before the session's
 * queue is read, and the session's records pass through it on their way
 * to the pipeline (it learns the processes' mappings from them).
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
	size_t :0;
};
#define sfp_recorder_opts__last_field source

/* r and p stay the caller's (and must outlive the recorder). */
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

/* The reader thread stopped (woken if asleep) and the events off. */
SFP_HIDDEN void sfp_recorder__stop(struct sfp_recorder *rc);

/*
 * After stop: the source polled and flushed, every record left read, the
 * source finished.  The pipeline's own end (sfp_rec_pipe__finish()) is
 * the caller's, who may have more to give it first.  Return: 0 or -errno.
 */
SFP_HIDDEN int sfp_recorder__drain(struct sfp_recorder *rc);

SFP_HIDDEN void sfp_recorder__free(struct sfp_recorder **rc);

#endif /* SFP_RECORD_RECORDER_H */
