/* SPDX-License-Identifier: MIT */
/*
 * Where the agent's windows go: the contract between the agent core
 * (windows, sampling, the pull listener) and the delivery sinks (files,
 * Pyroscope, OpenTelemetry).
 *
 * A window is one service's profile over one interval, already encoded as
 * an uncompressed pprof Profile, or for a sink that speaks OTLP
 * (agent_sink__wants_otlp()) as an OTLP request written from the same
 * profile.  The OTLP sink converts a pprof window it is given (sfprof
 * push, sfprof symbolize --listen forwarding a Pyroscope push), so every
 * sink sends the same stacks.
 *
 * agent_sink__submit() copies the window into the sink's bounded queue and
 * returns at once; it never waits on the network or the disk, because the
 * caller drains the ring buffers.  When the queue's byte budget is full the
 * oldest queued window is dropped and counted.  Each sink delivers from
 * its own thread with retries (exponential backoff with jitter on connect
 * errors, timeouts, 5xx and 429; other 4xx are logged and not retried).
 */
#ifndef SFP_AGENT_SINK_H
#define SFP_AGENT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

struct agent_label {
	const char *key;	/* "service_name", "pid", "host", "container_id" */
	const char *value;
};

struct agent_window {
	const struct agent_label *labels;	/* service_name first */
	size_t nr_labels;
	uint64_t start_ns;	/* CLOCK_REALTIME, the window's first instant */
	uint64_t end_ns;	/* ... and its end */
	const void *pprof;	/* uncompressed perftools.profiles.Profile */
	size_t pprof_len;
	/* What the profile measures, as a series name: NULL for CPU time
	 * (Pyroscope's process_cpu, files profile-*), "off_cpu" for blocked
	 * time (__name__ off_cpu, files off_cpu-*). */
	const char *name;
	/* pprof holds an (uncompressed) OTLP ExportProfilesServiceRequest
	 * already made, which only the OTLP sink takes, and sends as it is
	 * (the agent's windows for OTLP sinks; sfprof symbolize --listen
	 * forwarding what it was sent) */
	bool otlp;
};

/* AGENT_SINK_FILES, AGENT_SINK_PYROSCOPE, ...: the sinks of sinks.def */
enum agent_sink_kind {
#define AGENT_SINK(kind, opt, arg, backend, help) AGENT_SINK_##kind,
#include "agent/sinks.def"
#undef AGENT_SINK
	AGENT_SINK_NR		/* how many kinds there are */
};

/*
 * What a queued window costs of the queue's byte budget: its pprof bytes,
 * its labels' key and value bytes, and this fixed overhead (the copy's
 * housekeeping), so that a budget can be given in windows exactly.
 */
#define AGENT_SINK_WINDOW_OVERHEAD 256

struct agent_sink_opts {
	size_t sz;		/* sizeof(struct agent_sink_opts) */
	enum agent_sink_kind kind;
	const char *target;	/* URL, or the directory for FILES */
	size_t queue_bytes;	/* byte budget of the queue; 0: default */
	uint64_t max_disk;	/* FILES: bytes kept on disk; 0: default */
	const char *tenant;	/* PYROSCOPE: X-Scope-OrgID, or NULL */
	const char *auth_file;	/* "user:password" or a bearer token file */
	int legacy_ingest;	/* PYROSCOPE: /ingest instead of Push */
	unsigned int timeout_ms;	/* one request; 0: default */
};

struct agent_sink_stats {
	uint64_t delivered;	/* windows accepted by the backend */
	uint64_t dropped;	/* windows dropped because the queue was full */
	uint64_t failed;	/* windows given up on (4xx other than 429) */
	uint64_t retries;	/* requests repeated after a retryable error */
	uint64_t queue_bytes;	/* bytes waiting now */
	uint64_t unsent;	/* windows still queued when close() gave up */
};

struct agent_sink;

/* Start a sink and its delivery thread.  Return: 0 or -errno. */
SFP_HIDDEN int agent_sink__new(const struct agent_sink_opts *opts,
			       struct agent_sink **out);
/*
 * Queue a copy of W; never blocks.  A W whose bytes are not a pprof
 * Profile (agent_pprof_check()) is not queued: it counts as failed and is
 * said (at most once a minute).  An OTLP W (w->otlp) is not checked here
 * (its sender decoded it) and only an OTLP sink takes it.  Return: 0,
 * -EBADMSG (not a pprof), -EPROTOTYPE (OTLP to another sink), or -ENOMEM.
 */
SFP_HIDDEN int agent_sink__submit(struct agent_sink *s,
				  const struct agent_window *w);
/* Does the sink send OTLP: then give it windows encoded as OTLP (w->otlp)
 * rather than pprof it would convert. */
SFP_HIDDEN bool agent_sink__wants_otlp(const struct agent_sink *s);
/* Deliver what is queued until DEADLINE_NS (CLOCK_MONOTONIC), then stop. */
SFP_HIDDEN void agent_sink__close(struct agent_sink *s, uint64_t deadline_ns);
SFP_HIDDEN void agent_sink__stats(const struct agent_sink *s,
				  struct agent_sink_stats *st);
SFP_HIDDEN const char *agent_sink__name(const struct agent_sink *s);
SFP_HIDDEN void agent_sink__free(struct agent_sink *s);

/*
 * Are these SIZE bytes an (uncompressed) pprof Profile: its wire format
 * through the schema, then its string indices and ids (pprof-check.c)?
 * Return: 0, or -EBADMSG with what is wrong (and at which offset) in WHY.
 */
SFP_HIDDEN int agent_pprof_check(const void *pprof, size_t size, char *why,
				 size_t why_len);

#endif
