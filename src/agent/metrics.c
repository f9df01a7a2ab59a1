// SPDX-License-Identifier: MIT
/*
 * /metrics: the agent's counters in the Prometheus text exposition format
 * (version 0.0.4): a # HELP and a # TYPE line per family, then one line
 * per series, label values escaped (\\, \", \n).  Counters end in
 * _total, as the format's conventions ask.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent/agent.h"

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(FILE *f, const char *name, const char *type,
		const char *help, uint64_t v)
{
	family(f, name, type, help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void seconds(FILE *f, const char *name, const char *type,
		    const char *help, uint64_t ns)
{
	family(f, name, type, help);
	fprintf(f, "%s %.3f\n", name, (double)ns / 1e9);
}

static void label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* Resident set size from /proc/self/statm (pages), in bytes. */
static uint64_t rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *s = fopen("/proc/self/statm", "re");

	if (!s)
		return 0;
	if (fscanf(s, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(s);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void sink_family(FILE *f, const struct agent_metrics *m,
			const char *name, const char *type, const char *help,
			size_t off)
{
	size_t i;

	family(f, name, type, help);
	for (i = 0; i < m->nr_sinks; i++) {
		uint64_t v;

		memcpy(&v, (const char *)&m->sinks[i].st + off, sizeof(v));
		fprintf(f, "%s{sink=\"", name);
		label_value(f, m->sinks[i].name);
		fprintf(f, "\"} %llu\n", (unsigned long long)v);
	}
}

/* --off-cpu: what became of the blocks (record's summary line, as
 * counters). */
static void offcpu_families(FILE *f, const struct sfp_offcpu_stats *o)
{
	one(f, "sfprof_agent_offcpu_blocks_total", "counter",
	    "Blocking switch-outs of the followed tasks (not preemptions).",
	    o->blocks);
	seconds(f, "sfprof_agent_offcpu_blocked_seconds_total", "counter",
		"Time the blocks lasted, each counted at its switch-in.",
		o->blocked_ns);
	family(f, "sfprof_agent_offcpu_blocks_kept_total", "counter",
	       "Blocks in the profiles: as their own sample (at least "
	       "--off-cpu-thresh), or summed per stack (shorter, or over the "
	       "rate bound).");
	fprintf(f, "sfprof_agent_offcpu_blocks_kept_total{how=\"own\"} %llu\n",
		(unsigned long long)o->samples);
	fprintf(f, "sfprof_agent_offcpu_blocks_kept_total{how=\"summed\"} "
		"%llu\n", (unsigned long long)o->summed);
	fprintf(f, "sfprof_agent_offcpu_blocks_kept_total{how=\"over_rate\"} "
		"%llu\n", (unsigned long long)o->over_rate);
	one(f, "sfprof_agent_offcpu_blocks_unmatched_total", "counter",
	    "Blocks whose switch-in was not seen (lost, or still blocked "
	    "when the task went away).", o->unmatched);
	one(f, "sfprof_agent_offcpu_user_unwinds_total", "counter",
	    "User-stack unwinds the blocks cost (one per kernel entry).",
	    o->unwinds);
	one(f, "sfprof_agent_offcpu_no_user_stack_total", "counter",
	    "Summed blocks whose user stack never came (kept with the "
	    "kernel part).", o->no_user);
}

/* --listen: its connections, what it refused and timed out, the pulls
 * it turned away or that lost their client. */
void agent_metrics_write_listen(FILE *f, const struct agent_listen_stats *l)
{
	one(f, "sfprof_agent_listen_connections", "gauge",
	    "Connections to the listener open now.", l->connections);
	one(f, "sfprof_agent_listen_refused_total", "counter",
	    "Connections closed at accept: --listen-connections were open.",
	    l->refused);
	one(f, "sfprof_agent_listen_timeouts_total", "counter",
	    "Connections closed for bringing no whole request within "
	    "--listen-timeout (idle or slow), or not reading their answer.",
	    l->timeouts);
	one(f, "sfprof_agent_pulls_waiting", "gauge",
	    "Pull requests holding a connection now (at most --max-pulls).",
	    l->pulls_waiting);
	one(f, "sfprof_agent_pulls_refused_total", "counter",
	    "Pull requests answered 503: --max-pulls were in progress.",
	    l->pulls_refused);
	one(f, "sfprof_agent_pulls_abandoned_total", "counter",
	    "Pulls ended before their span was over: their client went away.",
	    l->pulls_abandoned);
}

/* The sinks' families (m's nr_sinks and sinks only). */
void agent_metrics_write_sinks(FILE *f, const struct agent_metrics *m)
{
	sink_family(f, m, "sfprof_agent_sink_windows_delivered_total", "counter",
		    "Windows a sink delivered.",
		    offsetof(struct agent_sink_stats, delivered));
	sink_family(f, m, "sfprof_agent_sink_windows_dropped_total", "counter",
		    "Windows a sink dropped because its queue was full.",
		    offsetof(struct agent_sink_stats, dropped));
	sink_family(f, m, "sfprof_agent_sink_windows_failed_total", "counter",
		    "Windows a sink gave up on (rejected by the backend).",
		    offsetof(struct agent_sink_stats, failed));
	sink_family(f, m, "sfprof_agent_sink_retries_total", "counter",
		    "Requests a sink repeated after a retryable error.",
		    offsetof(struct agent_sink_stats, retries));
	sink_family(f, m, "sfprof_agent_sink_queue_bytes", "gauge",
		    "Bytes waiting in a sink's queue.",
		    offsetof(struct agent_sink_stats, queue_bytes));
}

/* This process's memory and CPU time. */
void agent_metrics_write_process(FILE *f)
{
	struct rusage ru;

	one(f, "sfprof_agent_resident_memory_bytes", "gauge",
	    "Resident set size of the agent.", rss_bytes());
	if (!getrusage(RUSAGE_SELF, &ru)) {
		family(f, "sfprof_agent_cpu_seconds_total", "counter",
		       "CPU time the agent used, user and system.");
		fprintf(f, "sfprof_agent_cpu_seconds_total %.6f\n",
			(double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				(double)ru.ru_stime.tv_sec +
				ru.ru_stime.tv_usec / 1e6);
	}
}

void agent_metrics_write(FILE *f, const struct agent_metrics *m)
{
	size_t i;

	one(f, "sfprof_agent_samples_total", "counter",
	    "Samples read from the kernel, before the filters.", m->samples);
	one(f, "sfprof_agent_samples_kept_total", "counter",
	    "Samples that passed the filters and went into profiles.",
	    m->samples_kept);
	one(f, "sfprof_agent_samples_not_unwound_total", "counter",
	    "Samples of processes --pid, --comm or --cgroup leave out, "
	    "passed over before their user stack was unwound.",
	    m->not_unwound);
	one(f, "sfprof_agent_records_undecoded_total", "counter",
	    "Records of the rings the decoder did not understand, skipped.",
	    m->undecoded);
	one(f, "sfprof_agent_lost_samples_total", "counter",
	    "Samples the kernel could not write (ring buffer full).",
	    m->lost);
	family(f, "sfprof_agent_unwind_stops_total", "counter",
	       "User-stack unwinds by the reason they stopped.");
	for (i = 1; i < SFP_STOP__MAX; i++) {
		fprintf(f, "sfprof_agent_unwind_stops_total{reason=\"");
		label_value(f, sfp_unwind_stop_str((enum sfp_unwind_stop)i));
		fprintf(f, "\"} %llu\n", (unsigned long long)m->stops[i]);
	}
	one(f, "sfprof_agent_windows_total", "counter",
	    "Windows closed (every --interval).", m->windows);
	one(f, "sfprof_agent_windows_sighup_total", "counter",
	    "Windows closed early by a SIGHUP (counted in "
	    "sfprof_agent_windows_total too).", m->windows_hup);
	one(f, "sfprof_agent_profiles_total", "counter",
	    "Profiles made from closed windows, one per service "
	    "(none without a sink).",
	    m->profiles);
	one(f, "sfprof_agent_pulls_total", "counter",
	    "Profiles served on /debug/pprof/profile.", m->pulls);
	one(f, "sfprof_agent_pulls_open", "gauge",
	    "Pulls being collected now (their span has begun).",
	    m->pulls_open);
	one(f, "sfprof_agent_processes", "gauge",
	    "Processes whose maps the agent keeps (dropped at their exit).",
	    m->procs);
	one(f, "sfprof_agent_labeled_processes", "gauge",
	    "Processes whose labels the agent keeps (dropped at their exit).",
	    m->labeled);
	one(f, "sfprof_agent_queued_records", "gauge",
	    "Records read from the rings and not yet processed.",
	    m->queued_records);
	one(f, "sfprof_agent_symbol_resets_total", "counter",
	    "Times the symbol tables were let go for the symbol budget.",
	    m->symbol_resets);
	one(f, "sfprof_agent_symbol_entries_forgotten_total", "counter",
	    "Symbolizer entries of processes gone (sharing another process's "
	    "table) and their perf maps, let go after their last window.",
	    m->symbol_entries_forgotten);
	one(f, "sfprof_agent_symbol_tables_loaded_total", "counter",
	    "Symbol tables made or read from the cache: one per file (its "
	    "build-id), however many paths, processes and containers map it.",
	    m->symbol_tables);
	seconds(f, "sfprof_agent_lag_seconds", "gauge",
		"How far processing trails sampling: now minus the newest "
		"processed record's time, while records wait (0 when none do).",
		m->lag_ns);
	seconds(f, "sfprof_agent_lag_max_seconds", "gauge",
		"The largest sfprof_agent_lag_seconds seen.", m->lag_max_ns);
	seconds(f, "sfprof_agent_window_lateness_seconds", "gauge",
		"The lag when the last window closed (its newest samples "
		"were this old).", m->window_lateness_ns);
	seconds(f, "sfprof_agent_window_lateness_max_seconds", "gauge",
		"The largest window lateness seen.", m->window_lateness_max_ns);
	one(f, "sfprof_agent_windows_late_total", "counter",
	    "Windows closed more than a second behind sampling.",
	    m->windows_late);
	one(f, "sfprof_agent_unwind_tables_pending", "gauge",
	    "Unwind tables waiting to be built on the tables' thread.",
	    m->tables_pending);
	one(f, "sfprof_agent_unwind_tables_built_total", "counter",
	    "Unwind tables the tables' thread built (or found missing).",
	    m->tables_built);
	one(f, "sfprof_agent_unwind_files_total", "counter",
	    "Files the unwinder registered: one per build-id, however many "
	    "paths, processes and containers map it (a file without one: "
	    "per path, device/inode and mount namespace).", m->unwind_files);
	one(f, "sfprof_agent_unwind_tables_reused_total", "counter",
	    "Unwind tables kept after their file's last process exited and "
	    "taken up by a new one instead of being read again.",
	    m->tables_reused);
	one(f, "sfprof_agent_unwind_tables_expired_total", "counter",
	    "Kept unwind tables let go: a minute unused, or the oldest past "
	    "32 MiB of them.", m->tables_expired);
	one(f, "sfprof_agent_unwind_tables_idle", "gauge",
	    "Unwind tables kept now that no process maps.", m->tables_idle);
	one(f, "sfprof_agent_unwind_tables_idle_bytes", "gauge",
	    "What those tables hold (24 bytes a function, 8 a row).",
	    m->tables_idle_bytes);
	one(f, "sfprof_agent_unwind_table_requests_dropped_total", "counter",
	    "Table requests refused because the tables' queue was full.",
	    m->tables_dropped);
	one(f, "sfprof_agent_unwinds_before_table_total", "counter",
	    "Unwinds (bpf-defer) or rule lookups (sframe) that met a table "
	    "still being built; frame pointers stood in.", m->before_table);
	agent_metrics_write_sinks(f, m);
	if (m->off_cpu)
		offcpu_families(f, &m->offcpu);
	if (m->have_listen)
		agent_metrics_write_listen(f, &m->listen);
	agent_metrics_write_process(f);
	family(f, "sfprof_agent_info", "gauge",
	       "The agent's configuration: its call-graph mode.");
	fprintf(f, "sfprof_agent_info{call_graph=\"");
	label_value(f, m->call_graph ? m->call_graph : "");
	fprintf(f, "\"} 1\n");
}
