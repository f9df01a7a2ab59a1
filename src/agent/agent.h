/* SPDX-License-Identifier: MIT */
/*
 * `sfprof agent`: always-on, system-wide sampling cut into windows.
 *
 *   session (every CPU) ─► record pipeline (unwind; bpf-defer: stitch)
 *        └─► reader thread drains the rings (sampling never waits)
 *   main loop: typed events ─► filters ─► per-service aggregates
 *        every interval: one profile per service ─► every sink, as
 *        pprof or (OTLP sinks) OTLP, each format encoded once
 *        pull requests (/debug/pprof/profile?seconds=N): an aggregate of
 *        their own, encoded when their span ends
 *   listener threads (libmicrohttpd) only wait for results and read a
 *   snapshot of the counters; they never touch the sampling state.
 *
 * The pieces: agent.c (the loop), window.c (aggregates as pprof or OTLP),
 * labels.c (service name, container id), listen.c (HTTP), metrics.c
 * (Prometheus text).
 */
#ifndef SFP_AGENT_H
#define SFP_AGENT_H

#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <sfprof/perf.h>
#include <sfprof/record.h>
#include <sfprof/stitch.h>
#include <sfprof/unwind.h>

#include "agent/sink.h"
#include "common/internal.h"
#include "record/offcpu.h"

struct sfp_bpf_defer;
struct sfp_machine;
struct sfp_symbolizer;

enum agent_service_from {
	AGENT_SERVICE_EXE,	/* the executable's file name */
	AGENT_SERVICE_COMM,	/* the process's comm */
	AGENT_SERVICE_CGROUP,	/* the last component of its cgroup path */
};

struct agent_opts {
	uint64_t freq;			/* Hz per CPU */
	uint64_t interval_ns;		/* window length */
	enum sfp_record_call_graph call_graph;
	struct sfp_bpf_defer *bpf;	/* loaded when call_graph is bpf-defer */
	uint32_t max_depth;		/* user frames, 0: 510 */
	uint32_t mmap_pages;		/* per CPU ring */
	/* filters (all that are given must match) */
	const pid_t *pids;
	size_t nr_pids;
	const regex_t *comm_re;		/* NULL: any */
	const char *cgroup;		/* path prefix (cgroup v2), NULL: any */
	enum agent_service_from service_from;
	bool no_symbolize;
	const char *listen;		/* "ADDR:PORT", NULL: no listener */
	/* the listener's limits (listen.c); 0: the defaults */
	unsigned int listen_max_conn;	/* connections at once (256) */
	unsigned int listen_timeout_s;	/* a whole request within (10 s) */
	unsigned int max_pulls;		/* pulls waiting at once (32) */
	struct agent_sink *const *sinks;
	size_t nr_sinks;
	double flush_deadline_s;	/* SIGTERM: time left for the sinks */
	uint64_t max_pull_seconds;	/* cap of ?seconds= */
	/* byte budgets (0: defaults) */
	uint64_t symbol_budget;		/* symbol tables kept across windows */
	uint64_t proc_budget;		/* per-process label cache entries */
	const volatile sig_atomic_t *stop;	/* set by SIGINT/SIGTERM */
	/* bumped by SIGHUP (NULL: none): each change closes the open window
	 * at once and hands it to the sinks, and the agent goes on */
	const volatile sig_atomic_t *hup;
	/* an eventfd the signal handler writes after setting *stop, so that
	 * the loop's sleep (up to a second when idle) ends at once; -1: the
	 * loop makes its own, and a signal taken by another thread is seen
	 * at the end of the sleep */
	int wake_fd;
	/* What the agent has to tell its user -- the listener's port, the
	 * start line, the account at exit -- one line at a time without
	 * its newline; NULL: nothing.  The library never prints: the
	 * caller decides where the lines go (sfprof agent: stderr, unless
	 * --quiet). */
	void (*say)(void *ctx, const char *line);
	void *say_ctx;
	/* Off-CPU time (record's --off-cpu machinery, sframe mode): a
	 * second profile per service and window, off_cpu/nanoseconds.
	 * Blocks shorter than the threshold are summed per stack and
	 * written every loop turn; at most max_rate own samples a second. */
	bool off_cpu;
	uint64_t off_cpu_thresh_ns;
	uint64_t off_cpu_max_rate;
};

/*
 * Sample until *opts->stop; close the open window and hand it to the
 * sinks, then give them until the deadline.  Return: 0, or -errno with
 * the reason logged (the session could not be opened, the listener's
 * address is taken ...).
 */
SFP_HIDDEN int agent_run(const struct agent_opts *opts);

/* --- labels.c ------------------------------------------------------- */

/*
 * The container id in a cgroup v2 path (one line of /proc/PID/cgroup
 * past "0::"): docker (docker-<64 hex>.scope, /docker/<64 hex>),
 * containerd and CRI-O (cri-containerd-, crio-, kubepods .../<64 hex>),
 * podman and libpod (libpod-<64 hex>.scope, libpod-conmon- excluded).
 * Return: true and the id (lowercase hex) in id, or false (not a
 * container, e.g. a systemd service or user slice).
 */
SFP_HIDDEN bool agent_container_id(const char *cgroup_path, char *id,
				   size_t len);

/* The cgroup v2 path of pid ("/system.slice/x.service"); false if none. */
SFP_HIDDEN bool agent_read_cgroup(pid_t pid, char *path, size_t len);

/* The service name a cgroup path stands for: its last component without
 * a .service/.scope suffix ("nginx.service" -> "nginx"). */
SFP_HIDDEN void agent_cgroup_service(const char *cgroup_path, char *out,
				     size_t len);

/* --- window.c ------------------------------------------------------- */

/*
 * A window's or a pull's samples are a live profile (profile/live.h),
 * one per service: interned as they come, encoded to pprof at the end.
 */
struct sfp_live_profile;

/* pprof bytes (malloc'ed) of what lp holds over [start_ns, end_ns). */
SFP_HIDDEN int agent_window_encode(struct sfp_live_profile *lp,
				   uint64_t start_ns, uint64_t end_ns,
				   bool gzip, const char *const (*labels)[2],
				   size_t nr_labels, void **out, size_t *len);

/* A window as OTLP: what the pprof's carries, and the Resource. */
struct agent_window_otlp {
	uint64_t start_ns, end_ns;	/* CLOCK_REALTIME */
	uint64_t seq;			/* the agent's window number */
	const char *const (*labels)[2];	/* every sample's, as the pprof's */
	size_t nr_labels;
	const char *const (*resource)[2];	/* the sink labels */
	size_t nr_resource;
};

/* The uncompressed OTLP ExportProfilesServiceRequest (malloc'ed) of what
 * lp holds, written from its tables (export/otlp.c). */
SFP_HIDDEN int agent_window_encode_otlp(struct sfp_live_profile *lp,
					const struct agent_window_otlp *w,
					void **out, size_t *len);

/* --- metrics.c ------------------------------------------------------ */

#define AGENT_MAX_SINKS 8

/* The listener's figures (listen.c keeps them, /metrics shows them). */
struct agent_listen_stats {
	uint64_t connections;		/* open now */
	uint64_t refused;		/* closed at accept: the limit */
	uint64_t timeouts;		/* no whole request in time, or an
					   answer nobody read */
	uint64_t pulls_waiting;		/* pulls holding a connection now */
	uint64_t pulls_refused;		/* 503: --max-pulls were waiting */
	uint64_t pulls_abandoned;	/* their client went away */
};

/* The counters /metrics shows: a snapshot the loop refreshes. */
struct agent_metrics {
	uint64_t samples;		/* samples taken (before filters) */
	uint64_t samples_kept;		/* ... that passed the filters */
	uint64_t lost;			/* samples the kernel lost */
	uint64_t stops[SFP_STOP__MAX];	/* unwind stops by reason */
	uint64_t windows;		/* windows closed */
	uint64_t windows_hup;		/* ... of them closed early by SIGHUP */
	uint64_t profiles;		/* profiles made (one per service) */
	uint64_t pulls;			/* /debug/pprof/profile answered */
	uint64_t pulls_open;		/* ... being collected now */
	uint64_t procs;			/* processes in the machine model now */
	uint64_t labeled;		/* processes with cached labels now */
	uint64_t queued_records;	/* records read, not yet processed */
	uint64_t symbol_resets;		/* symbolizer replaced (budget) */
	uint64_t symbol_entries_forgotten; /* of processes gone */
	uint64_t not_unwound;		/* samples of processes left out:
					   not unwound */
	uint64_t undecoded;		/* records skipped: not understood */
	uint64_t symbol_tables;		/* symbol tables loaded, all
					   symbolizers (one per file) */
	/* How far processing trails the rings: now - the newest processed
	 * record's time while records wait (0 when none wait). */
	uint64_t lag_ns, lag_max_ns;
	/* ... when the last window closed, the worst, and the windows
	 * closed more than a second behind */
	uint64_t window_lateness_ns, window_lateness_max_ns, windows_late;
	/* unwind tables built off the reading thread */
	uint64_t tables_pending;	/* waiting to be built now */
	uint64_t tables_built;		/* built (or found missing) */
	uint64_t tables_dropped;	/* requests its full queue refused */
	uint64_t unwind_files;		/* files the unwinder registered
					   (one per build-id) */
	/* tables kept after their last process (TABLE_LINGER_MS): taken
	 * up again, let go, kept now and their bytes */
	uint64_t tables_reused, tables_expired, tables_idle;
	uint64_t tables_idle_bytes;
	uint64_t before_table;		/* unwinds (bpf-defer) or rule
					   lookups (sframe) that met a
					   table still being built: frame
					   pointers stood in */
	size_t nr_sinks;
	struct {
		char name[64];
		struct agent_sink_stats st;
	} sinks[AGENT_MAX_SINKS];
	const char *call_graph;
	/* --off-cpu: the pipeline's off-CPU counters (none without it) */
	bool off_cpu;
	struct sfp_offcpu_stats offcpu;
	/* --listen: filled in by the listener when it answers /metrics */
	bool have_listen;
	struct agent_listen_stats listen;
};

/* Append the Prometheus text exposition of m (and of this process's RSS
 * and CPU time) to f. */
SFP_HIDDEN void agent_metrics_write(FILE *f, const struct agent_metrics *m);
/* Its parts that another server of the same sinks and listener shows
 * too (sfprof symbolize --listen): the sinks' families (of m->sinks),
 * the listener's, this process's memory and CPU time. */
SFP_HIDDEN void agent_metrics_write_sinks(FILE *f, const struct agent_metrics *m);
SFP_HIDDEN void agent_metrics_write_listen(FILE *f,
					   const struct agent_listen_stats *l);
SFP_HIDDEN void agent_metrics_write_process(FILE *f);

/* --- listen.c ------------------------------------------------------- */

struct agent_listener;

/* What a pull asks for, and what it gets. */
struct agent_pull {
	uint64_t seconds;
	uint32_t pid;			/* 0: every process */
	/* filled by the loop */
	void *body;			/* gzip pprof, malloc'ed */
	size_t len;
	int err;
	bool done;
	struct agent_pull *next;	/* the loop's list */
	struct sfp_live_profile *agg;
	uint64_t start_mono, end_mono;	/* CLOCK_MONOTONIC ns */
	uint64_t start_real;
	char service[128];		/* with pid: its labels */
	char container[72];
	bool off_cpu;			/* /debug/pprof/offcpu: blocked time */
	/* an eventfd the loop writes once done is set; the request thread
	 * waits on it and on its client's socket */
	int done_fd;
	/* the client went away (set by the request thread, sh.lock held,
	 * while !done): the loop frees the pull, done_fd included */
	bool abandoned;
};

/*
 * The loop's side of the listener: pulls to serve, and the metrics.
 * Every field is guarded by lock.
 */
struct agent_shared {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a pull is done */
	struct agent_pull *incoming;	/* new pulls, taken by the loop */
	int wake_fd;			/* written: the loop wakes (set once,
					 * before the listener starts) */
	struct agent_metrics metrics;
	uint64_t max_seconds;
	bool stopping;
	bool off_cpu;			/* the agent takes off-CPU time */
	/* not the agent but a service of POSTs (sfprof symbolize
	 * --listen): set before the listener starts, NULL for the agent */
	const struct agent_listen_service *svc;
};

/* One POST to a service, as received, and its answer. */
struct agent_listen_req {
	const char *url;
	const char *content_type;	/* NULL: none given */
	const char *content_encoding;	/* NULL: none given */
	const void *body;		/* whole, at most svc->max_body */
	size_t len;
	/* the body was over max_body: not kept (body, len empty); the
	 * service answers 413 (and counts it) */
	bool too_big;
	size_t max_body;
	/* the answer: a status, a malloc()ed text body (NULL: none) */
	unsigned int status;
	char *reply;
};

/*
 * A service on the listener instead of the agent's pulls: POST bodies up
 * to max_body (a longer one is read and dropped: rq.too_big), the
 * listener's limits, watchdog, /healthz as for the agent; /metrics is the
 * service's.  Its handlers run on the connection's thread, any number at
 * once.
 */
struct agent_listen_service {
	size_t max_body;
	size_t stack_size;	/* a connection thread's stack; 0: 256 KiB */
	void (*post)(void *ctx, struct agent_listen_req *rq);
	/* /metrics: the service's families, given the listener's figures */
	void (*metrics)(void *ctx, FILE *f, const struct agent_listen_stats *l);
	void *ctx;
};

/* What the listener allows (agent_opts' listen_*, max_pulls), and its
 * defaults: room for a few hundred clients, the pulls a fraction of it;
 * a request's 10 s are plenty for any client on a network. */
#define AGENT_LISTEN_MAX_CONN 256
#define AGENT_LISTEN_TIMEOUT_S 10
#define AGENT_MAX_PULLS 32

struct agent_listen_limits {
	unsigned int max_conn;		/* connections at once */
	unsigned int timeout_s;		/* a whole request within */
	unsigned int max_pulls;		/* pulls waiting at once, < max_conn */
};

SFP_HIDDEN int agent_listener__start(const char *addr,
				     const struct agent_listen_limits *lim,
				     struct agent_shared *sh,
				     struct agent_listener **out);
/* The port bound (the one asked for, or the kernel's pick for port 0). */
SFP_HIDDEN uint16_t agent_listener__port(const struct agent_listener *l);
SFP_HIDDEN void agent_listener__stop(struct agent_listener **l);

#endif /* SFP_AGENT_H */
