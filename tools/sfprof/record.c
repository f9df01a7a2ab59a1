// SPDX-License-Identifier: MIT
/*
 * `sfprof record`: sample a command, processes or the whole machine and
 * write perf.data with complete user stacks, in the Linux 6.19 deferred
 * form by default (or the classic inline form).  The library does the
 * work: the recorder (record/recorder.h) opens a session that reads the
 * rings and a pipeline that unwinds and rewrites, the perf writer
 * writes; this file parses options, handles signals, gives the recorder
 * its BPF parts and its output file, shows a status line and the
 * summary, and says what failed.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/perf.h>
#include <sfprof/record.h>
#include <sfprof/unwind.h>

#include "cli.h"
#include "common/procfs.h"
#include "record/pipeline.h"
#include "record/record.h"
#include "record/recorder.h"
#include "bpf/backends.h"
#include "record-bpf.h"
#include "record-buildid.h"

/* SIGINT/SIGTERM received: 1 stops the recording, 2 kills the command. */
static volatile sig_atomic_t stop_requested;
/* The command, for the signal handler: a pidfd (never reused, unlike a
 * pid once the command is reaped) or, where pidfd_open() is missing, the
 * pid until the command has been reaped; -1/0 when none. */
static volatile sig_atomic_t workload_pidfd = -1;
static volatile sig_atomic_t workload_pid;

/* --kill-after: the command's grace between SIGTERM and SIGKILL. */
#define DEFAULT_KILL_AFTER 5.0
#define DEFAULT_KILL_AFTER_STR "5"

/* Compressed by default: the deferred records repeat stacks, which zstd
 * takes down to about a ninth (bench/RESULTS.md).  Level 5 makes files a
 * sixth smaller than perf's default 1 and still runs at >100 MB/s here,
 * while a busy 2-CPU recording at 4 kHz produces about 2 MB/s; from level
 * 7 on zstd gets several times slower for a few percent. */
#define DEFAULT_ZLEVEL 5
#define DEFAULT_ZLEVEL_STR "5"


/* At most this long between writes of the records to the file: what a
 * recording killed with SIGKILL (or a crash) loses at most. */
#define FLUSH_MS 1000

static double now_s(void);

/*
 * The command's whole process group (the library starts it in one of its
 * own, as a shell starts a job): what it started goes with it.  The
 * group's id cannot name another group while any of its members lives.
 */
static void kill_workload(int sig)
{
	if (workload_pid > 0)
		kill(-workload_pid, sig);
}

/*
 * Does anything of the command's group still run?  A zombie does not
 * count: an orphan that died is reaped by init (or not at all, where
 * pid 1 reaps nothing), not by us, and kill(-pgrp, 0) still finds it.
 */
static bool workload_group_alive(void)
{
	struct dirent *de;
	bool alive = false;
	DIR *d;

	if (workload_pid <= 0 || (kill(-workload_pid, 0) && errno != EPERM))
		return false;
	d = opendir("/proc");
	if (!d)
		return true;	/* cannot tell: as kill() said */
	while (!alive && (de = readdir(d))) {
		char buf[512], *p, state;
		long pid = strtol(de->d_name, &p, 10);
		int pgrp;

		if (pid <= 0 || *p || sfp_proc_read((int)pid, "stat", buf,
						    sizeof(buf)) <= 0)
			continue;
		/* "pid (comm) S ppid pgrp ...": after the last ')' */
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %c %*d %d", &state, &pgrp) == 2 &&
		    pgrp == workload_pid && state != 'Z' && state != 'X')
			alive = true;
	}
	closedir(d);
	return alive;
}

/*
 * The first SIGINT/SIGTERM stops the recording cleanly (the command gets
 * SIGTERM, then SIGKILL after --kill-after); a second one kills the
 * command at once, so that a command ignoring SIGTERM cannot hold sfprof;
 * a third ends sfprof itself, as the signal would have without us.
 */
static void on_signal(int sig)
{
	int e = errno;

	if (stop_requested >= 2) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	if (++stop_requested == 2)
		kill_workload(SIGKILL);
	errno = e;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfprof record [OPTIONS] -- COMMAND [ARGS]\n"
"       sfprof record [OPTIONS] -p PID[,PID] | -t TID[,TID] | -a\n"
"\n"
"Sample with perf_event_open and write perf.data with complete user call\n"
"stacks, also for programs built without frame pointers.\n"
"\n"
"Target (exactly one):\n"
"  -- COMMAND [ARGS]     run COMMAND; the events are enabled when it execs;\n"
"                        its children and threads are followed\n"
"  -p, --pid PID[,PID]   attach to every thread of these processes\n"
"  -t, --tid TID[,TID]   attach to these threads only\n"
"  -a, --all-cpus        every CPU and every process, kernel threads too\n"
"\n"
"Events:\n"
"  -e, --event LIST      perf event names, comma-separated or repeated:\n"
"                        cpu-clock (default), task-clock, page-faults (faults),\n"
"                        context-switches (cs), cpu-migrations, minor-faults,\n"
"                        major-faults, tracepoints as SUBSYS:NAME; hardware\n"
"                        events (cycles, ...) need a PMU, which VMs often lack\n"
"  -F, --freq HZ         samples per second (default 999; tracepoints: every\n"
"                        event unless -c)\n"
"  -c, --count PERIOD    a sample every PERIOD events instead of -F\n"
"      --no-inherit      do not follow children and new threads\n"
"      --off-cpu         also record where threads wait: every blocking\n"
"                        switch-out (sched:sched_switch, not preemptions)\n"
"                        with its kernel and user stack, as perf's\n"
"                        offcpu-time event whose period is the blocked ns\n"
"                        until the switch-in; one user unwind per kernel\n"
"                        entry however often it blocks.  With sframe: the\n"
"                        tracepoint and a stack copy per block; with\n"
"                        bpf-defer (and auto where it loads): a BPF program\n"
"                        on sched_switch, no copies (the first line says\n"
"                        which and why)\n"
"      --off-cpu-thresh MS\n"
"                        blocks at least MS milliseconds long are samples\n"
"                        of their own (default " DEFAULT_OFF_CPU_THRESH_STR ", as perf); shorter\n"
"                        ones are summed per thread and stack, written at\n"
"                        the end (0: every block its own sample)\n"
"      --off-cpu-max-rate N\n"
"                        at most N own off-CPU samples per second (default\n"
"                        " DEFAULT_OFF_CPU_MAX_RATE_STR "; 0: no bound); the blocks over it are\n"
"                        summed per stack, counted in the summary\n"
"\n"
"Call stacks:\n"
"  -g                    same as --call-graph sframe\n"
"      --call-graph MODE how user stacks are collected:\n"
"        sframe          (default) the kernel gives its own chain plus the user\n"
"                        registers and a stack snapshot; sfprof unwinds the\n"
"                        snapshot with SFrame tables (the ELF's .sframe, else\n"
"                        built from .eh_frame), frame pointers as fallback,\n"
"                        once per task kernel entry as Linux 6.19 does, and\n"
"                        writes the 6.19 deferred form without the stack bytes\n"
"        fp              the kernel walks frame pointers (incomplete for code\n"
"                        built without them); the file is what perf writes\n"
"        dwarf           keep the raw snapshots in the file, like perf's dwarf\n"
"        kernel-defer    let the kernel defer (defer_callchain, Linux 6.19+);\n"
"                        probed at start, with a clear error when the kernel\n"
"                        lacks it\n"
"        none            no call stacks\n"
"        bpf-defer       the kernel's deferral done with BPF task_work (kernel\n"
"                        6.18+, root): a BPF program takes the kernel chain,\n"
"                        and once per task kernel entry, in the task on its\n"
"                        way back to user space, unwinds the user stack with\n"
"                        SFrame tables loaded into BPF maps (frame pointers as\n"
"                        fallback); no stack bytes are copied, stacks are not\n"
"                        truncated.  Falls back to sframe, with the reason,\n"
"                        where the kernel lacks BPF task_work or rejects the\n"
"                        program\n"
"        auto            choose, probing this machine, and say which and why\n"
"                        (one line, and in the summary): kernel-defer when\n"
"                        the target's main executable (COMMAND, or\n"
"                        /proc/PID/exe) is frame-pointer code (at least half\n"
"                        its framed functions have an rbp-based CFA in its\n"
"                        .sframe/.eh_frame) and the kernel has\n"
"                        defer_callchain (the kernel walks frame pointers\n"
"                        only); else (and with -a) bpf-defer when it loads;\n"
"                        else sframe.  Not the default: sframe stays the default\n"
"                        because it needs no BPF rights and no verifier time\n"
"                        (~0.6 s of CPU) at start\n"
"      --inline          with sframe: write classic user chains in each sample\n"
"                        (PERF_CONTEXT_USER) for tools older than perf 6.19\n"
"      --stack-size N    user stack bytes copied per sample (default 16384,\n"
"                        multiple of 8, at most 65528); sframe and dwarf\n"
"      --max-depth N     at most N user frames (default and cap 510)\n"
"      --no-deep-stacks  with sframe: leave a walk that runs out of the stack\n"
"                        copy truncated (by default it is completed from the\n"
"                        thread's previous unwind or its live memory, where a\n"
"                        check allows: docs/record.md, \"Deep stacks\")\n"
"\n"
"Recording:\n"
"  -o, --output FILE     output file (default perf.data); an existing one is\n"
"                        kept as FILE.old once the recording starts, as perf\n"
"                        does; records reach the file at least every second,\n"
"                        so a killed recording leaves a readable file\n"
"  -z, --compression-level[=N]\n"
"                        zstd level 1..22 of the file's records, written as\n"
"                        'perf record -z' does (perf 5.2+ reads it); default\n"
"                        " DEFAULT_ZLEVEL_STR "; -z alone: 1, perf's default;\n"
"                        a level goes attached: -z5, --compression-level=5\n"
"      --no-compress     plain records (same as --compression-level=0)\n"
"  -m, --mmap-pages N    ring pages per CPU, a power of two, or a size with\n"
"                        K/M suffix (default 4 MiB for sframe/dwarf, 512 KiB\n"
"                        otherwise); with bpf-defer also the BPF ring's size\n"
"                        when over its 16 MiB\n"
"      --duration DURATION\n"
"                        stop after DURATION: seconds, or a number with\n"
"                        suffix s, m, h or d as timeout(1) takes it; the\n"
"                        command then gets SIGTERM\n"
"      --kill-after DURATION\n"
"                        when the recording stops while the command runs,\n"
"                        it gets SIGTERM, then SIGKILL if it is still there\n"
"                        DURATION later (default " DEFAULT_KILL_AFTER_STR " s; 0: never)\n"
"      --buildid-dir DIR build-id cache to fill (default $PERF_BUILDID_DIR,\n"
"                        else ~/.debug; perf's layout): at the end, every DSO\n"
"                        the samples hit and its debug file are copied there,\n"
"                        as their processes mapped them (also from containers\n"
"                        and binaries replaced while running), so that report\n"
"                        and perf report read the right bytes later\n"
"      --no-buildid-cache\n"
"                        do not copy DSOs into the build-id cache\n"
"      --buildid-cache-size SIZE\n"
"                        copy at most SIZE bytes (K/M/G suffix) per recording\n"
"                        into the cache (default 2G)\n"
"  -q, --quiet           no status line and no summary\n"
"  -v, --verbose         library diagnostics\n"
"  -h, --help            this help\n"
"\n"
"SIGINT (Ctrl-C) or SIGTERM stop the recording cleanly; the file is valid.\n"
"A second one kills the command with SIGKILL (the file is still finished);\n"
"a third ends sfprof at once.  The command runs in a process group of its\n"
"own, as a shell runs a job (the terminal's foreground while it runs, so\n"
"Ctrl-C and Ctrl-Z reach it as from the shell): the signals that end it\n"
"go to the group, so what it started ends too.\n"
"On a terminal a status line shows elapsed time, samples, lost samples and\n"
"MB written; at the end a summary gives samples, lost, deferred records and\n"
"the dedup ratio, bytes per sample, why unwinds stopped and which DSOs had no\n"
"table.  Read the file with 'sfprof script' or, with --inline, 'perf script'.\n"
"Exit: the command's status when it ended by itself (128+N when signal N\n"
"killed it, as perf and the shell report it), 0 when the recording\n"
"stopped it (--duration, SIGINT, SIGTERM); 1 the recording could not be\n"
"made, 2 usage or I/O error; as a shell, 127 when the command is not\n"
"found and 126 when it cannot be run.\n");
}

struct ctx {
	struct sfp_perf_writer *w;
	const char *path;
	uint64_t bytes, samples;
	int write_err;
	char **bid_paths;
	size_t nr_bid;
	struct bid_collect *bc;		/* NULL: --no-buildid-cache */
	int zlevel;
	/* the BPF parts, for the summary: deep stacks read at the sample
	 * (bpf/deepcopy.h) or why not */
	const struct sfp_bpf_backends *bk;
	bool status_shown;		/* a status line is on the terminal */
};

/*
 * The header's build-id table gets one entry per (path, build-id): in
 * containers, one path holds a different build in each (a table keyed by
 * path alone gave them all the first one's).
 */
static void note_build_id(struct ctx *c, const void *rec, size_t size)
{
	const struct perf_event_header *h = rec;
	const uint8_t *b = rec;
	const char *name;
	char **n, *key;
	size_t i, klen;

	/* MMAP2 with a build id: header, pid, tid, addr, len, pgoff, then
	 * size(1) + 3 reserved + id[20], prot, flags, filename. */
	if (h->type != PERF_RECORD_MMAP2 ||
	    !(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) || size < 80 ||
	    b[40] == 0 || b[40] > 20 || !memchr(b + 72, 0, size - 72))
		return;
	name = (const char *)b + 72;
	/* key: the build-id in hex, a space, the path */
	klen = 2 * (size_t)b[40] + 1 + strlen(name) + 1;
	key = malloc(klen);
	if (!key)
		return;
	for (i = 0; i < b[40]; i++)
		snprintf(key + 2 * i, 3, "%02x", b[44 + i]);
	snprintf(key + 2 * (size_t)b[40], klen - 2 * (size_t)b[40], " %s",
		 name);
	for (i = 0; i < c->nr_bid; i++)
		if (!strcmp(c->bid_paths[i], key)) {
			free(key);
			return;
		}
	if (c->nr_bid >= 4096 ||
	    !(n = realloc(c->bid_paths, (c->nr_bid + 1) * sizeof(*n)))) {
		free(key);
		return;
	}
	c->bid_paths = n;
	n[c->nr_bid++] = key;
	sfp_perf_writer__add_build_id(c->w, SFP_PERF_MISC_USER, -1, b + 44,
				      b[40], name);
}

static int out_record(void *p, const void *rec, size_t size)
{
	struct ctx *c = p;
	int err;

	err = sfp_perf_writer__write(c->w, rec, size);
	if (err) {
		c->write_err = err;
		return err;
	}
	c->bytes += size;
	if (((const struct perf_event_header *)rec)->type == PERF_RECORD_SAMPLE)
		c->samples++;
	else {
		note_build_id(c, rec, size);
		bid_collect_mmap2(c->bc, rec, size);
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t total_lost(const struct sfp_record *r)
{
	uint64_t n = 0;
	int c;

	for (c = 0; c < sfp_record__nr_cpus(r); c++)
		n += sfp_record__lost(r, c);
	return n;
}

static void status_line(const struct ctx *c, const struct sfp_record *r,
			double elapsed)
{
	struct stat sb;

	/* What is on disk (compressed, and up to the writer's buffer). */
	fprintf(stderr, "\r[%7.1fs] %llu samples, %llu lost, %.1f MB written ",
		elapsed, (unsigned long long)c->samples,
		(unsigned long long)total_lost(r),
		stat(c->path, &sb) == 0 ? (double)sb.st_size / 1e6 : 0.0);
	fflush(stderr);
}

/* How the command ended, for the summary. */
struct wl_end {
	bool have;		/* there was a command */
	bool by_itself;		/* it ended before the recording stopped */
	int status;		/* as from waitpid; -1 unknown */
	const char *sent;	/* what we sent it, NULL if nothing */
};

static void describe_status(FILE *f, int st)
{
	if (st < 0) {
		fprintf(f, "status unknown");
	} else if (WIFEXITED(st)) {
		fprintf(f, "exited with status %d", WEXITSTATUS(st));
	} else if (WIFSIGNALED(st)) {
		const char *name = sigabbrev_np(WTERMSIG(st));

		fprintf(f, "killed by signal %d (SIG%s)%s", WTERMSIG(st),
			name ? name : "?", WCOREDUMP(st) ? ", core dumped" : "");
	}
}

static void summary_command(const struct wl_end *we)
{
	if (!we->have)
		return;
	fprintf(stderr, "  command: ");
	if (we->sent)
		fprintf(stderr, "%s; ", we->sent);
	describe_status(stderr, we->status);
	if (we->by_itself && we->status > 0)
		fprintf(stderr, "; sfprof exits %d as the command did",
			WIFEXITED(we->status) ? WEXITSTATUS(we->status)
					      : 128 + WTERMSIG(we->status));
	fputc('\n', stderr);
}

static void summary_off_cpu(const struct sfp_offcpu_stats *o)
{
	fprintf(stderr,
		"  off-cpu: %llu blocks (%.3f s blocked) in %llu switch-outs "
		"(%llu preemptions, %llu exits not counted), %llu user unwinds "
		"(%.1f blocks per unwind); %llu own samples, %llu blocks summed "
		"per stack into %llu samples (%llu under the threshold, %llu "
		"over the rate bound); %llu without a switch-in\n",
		(unsigned long long)o->blocks, (double)o->blocked_ns / 1e9,
		(unsigned long long)o->switches,
		(unsigned long long)o->preempted, (unsigned long long)o->exits,
		(unsigned long long)o->unwinds,
		o->unwinds ? (double)o->blocks / (double)o->unwinds : 0.0,
		(unsigned long long)o->samples,
		(unsigned long long)(o->summed + o->over_rate),
		(unsigned long long)o->sums, (unsigned long long)o->summed,
		(unsigned long long)o->over_rate,
		(unsigned long long)o->unmatched);
	if (o->switch_outs || o->kernel_ns)
		fprintf(stderr, "  off-cpu: %llu blocks (%.3f s) without their "
			"stack sample (lost: summed per thread, no stack), of "
			"which %.3f s in %llu threads only from the kernel's "
			"sums (%.3f s in %llu blocks; %s)\n",
			(unsigned long long)o->no_stack,
			(double)o->no_stack_ns / 1e9,
			(double)o->kernel_added_ns / 1e9,
			(unsigned long long)o->kernel_added_tasks,
			(double)o->kernel_ns / 1e9,
			(unsigned long long)o->kernel_blocks,
			o->kernel_ns ? "BPF on sched_switch"
				     : "none: no BPF, see above");
	if (o->kernel_skew_ns)	/* nothing lost: not written */
		fprintf(stderr, "  off-cpu: the kernel's sums exceed the "
			"records by %.6f s, nothing being lost: their time "
			"stamps' skew, not written\n",
			(double)o->kernel_skew_ns / 1e9);
	if (o->no_user)	/* bpf-defer: an entry's unwind that never came */
		fprintf(stderr, "  off-cpu: %llu summed kernel entries without "
			"their user stack (kernel part only)\n",
			(unsigned long long)o->no_user);
}

static void summary(const struct ctx *c, const struct sfp_record *r,
		    const struct sfp_rec_pipe *p, enum sfp_record_call_graph cg,
		    bool inline_mode, double elapsed, const struct wl_end *we)
{
	struct sfp_rec_pipe_stats st;
	uint64_t lost = total_lost(r), cnt;
	const char *path;
	size_t i;
	int cpu;

	struct stat sb;
	double fbytes;

	sfp_rec_pipe__stats(p, &st);
	/* The file's size: with compression far less than the records. */
	fbytes = stat(c->path, &sb) == 0 ? (double)sb.st_size : (double)c->bytes;
	fprintf(stderr,
		"sfprof record: %llu samples in %.1f s, %.2f MB written to %s "
		"(%.0f bytes/sample",
		(unsigned long long)c->samples, elapsed, fbytes / 1e6,
		c->path, c->samples ? fbytes / (double)c->samples : 0.0);
	if (c->zlevel)
		fprintf(stderr, "; zstd level %d, %.2f MB of records",
			c->zlevel, (double)c->bytes / 1e6);
	fprintf(stderr, ")\n");
	summary_command(we);
	fprintf(stderr, "  lost: %llu", (unsigned long long)lost);
	if (lost)
		for (cpu = 0; cpu < sfp_record__nr_cpus(r); cpu++)
			fprintf(stderr, "%s cpu%d %llu", cpu ? "," : " (",
				cpu, (unsigned long long)sfp_record__lost(r, cpu));
	fprintf(stderr, "%s\n", lost ? ")" : "");
	if (st.mmap_no_build_id)
		fprintf(stderr, "  build-ids: %llu of %llu file mappings "
			"without one (the file has none, or was gone or "
			"replaced before it was read): those keep device and "
			"inode\n",
			(unsigned long long)st.mmap_no_build_id,
			(unsigned long long)(st.mmap_no_build_id +
					     st.mmap_build_id_filled));
	if (!sfp_rec_pipe__rewrites(p)) {
		if (cg != SFP_RECORD_CG_BPF_DEFER)	/* record_bpf_summary() */
			fprintf(stderr, "  call graph: %s (records written as "
				"the kernel gave them)\n",
				sfp_record__call_graph_name(cg));
		if (st.off_cpu)		/* bpf-defer's */
			summary_off_cpu(&st.offcpu);
		return;
	}
	fprintf(stderr, "  call graph: sframe, %s form; %llu samples with a "
		"user stack, %llu unwinds",
		inline_mode ? "inline" : "deferred",
		(unsigned long long)st.defer.user_samples,
		(unsigned long long)st.defer.unwinds);
	if (!inline_mode)
		fprintf(stderr, ", %llu deferred records (dedup %.2fx)",
			(unsigned long long)st.defer.deferred,
			st.defer.deferred ? (double)st.defer.user_samples /
						    (double)st.defer.deferred
					  : 0.0);
	fprintf(stderr, ", %.1f frames per unwind\n",
		st.defer.unwinds ? (double)st.defer.frames /
					   (double)st.defer.unwinds
				 : 0.0);
	if (st.off_cpu)
		summary_off_cpu(&st.offcpu);
	if (st.deep_on && st.deep.ran_out)
		fprintf(stderr, "  deep stacks: %llu walks ran out of the stack "
			"copy: %llu completed over the copy taken at the "
			"sample, %llu from the thread's previous "
			"unwind, %llu from live memory, %llu left truncated "
			"(%llu: memory changed since the sample, %llu: "
			"unreadable, %llu: still cut with 1 MiB read past the copy: deeper, or the walk left the stack)"
			"%s\n",
			(unsigned long long)st.deep.ran_out,
			(unsigned long long)st.deep.from_sample,
			(unsigned long long)st.deep.from_prev,
			(unsigned long long)st.deep.from_live,
			(unsigned long long)st.deep.truncated,
			(unsigned long long)st.deep.changed,
			(unsigned long long)st.deep.unreadable,
			(unsigned long long)st.deep.too_deep,
			st.deep.depth_cap ? "; some completed ones cut at "
					    "--max-depth" : "");
	if (st.deep_on && c->bk->deep) {
		struct sfp_bpf_deep_stats ds;

		sfp_bpf_deep__stats(c->bk->deep, &ds);
		if (ds.threads || ds.copies)
			fprintf(stderr, "  deep stacks at the sample: %llu "
				"copies (%.1f MB) for %llu threads: %llu paired "
				"with their sample's walk, %llu unused "
				"(shallower samples); %llu walks ran out "
				"without their copy (%llu: the copy nearest it "
				"was another sample's: registers or seam bytes); "
				"%llu copies ended at a page not present or the "
				"stack's end, %llu not taken (%llu: the stack ends "
				"inside the snapshot, %llu: ring full); %llu walks "
				"ran out of the copy "
				"too%s\n",
				(unsigned long long)ds.copies,
				(double)ds.bytes / 1e6,
				(unsigned long long)ds.threads,
				(unsigned long long)ds.paired,
				(unsigned long long)ds.unused,
				(unsigned long long)ds.no_copy,
				(unsigned long long)ds.seam_refused,
				(unsigned long long)ds.short_copies,
				(unsigned long long)(ds.unreadable +
						     ds.ring_full),
				(unsigned long long)ds.unreadable,
				(unsigned long long)ds.ring_full,
				(unsigned long long)st.deep.sample_cut,
				ds.test_dropped ? "; test hook" : "");
		if (st.deep.left_stack)
			fprintf(stderr, "  stack switches: %llu walks stopped "
				"where the frame-pointer chain leaves the stack "
				"(Go: g0 to a goroutine's): %llu completed over "
				"the other stack copied at the sample (%llu "
				"copies, %.1f MB, %llu threads followed, %llu "
				"of them no longer: their copies led nowhere), "
				"%llu "
				"without that copy (the first samples of a "
				"thread or program, or no copy paired), %llu "
				"that ran out of it, %llu whose copy led no "
				"further\n",
				(unsigned long long)st.deep.left_stack,
				(unsigned long long)st.deep.from_other,
				(unsigned long long)ds.other_copies,
				(double)ds.other_bytes / 1e6,
				(unsigned long long)ds.other_threads,
				(unsigned long long)ds.other_dropped,
				(unsigned long long)st.deep.other_missing,
				(unsigned long long)st.deep.other_short,
				(unsigned long long)st.deep.other_failed);
		if (ds.test_dropped)
			fprintf(stderr, "  deep stacks: %llu copies dropped by "
				"SFPROF_BPF_TEST_DEEP_DROP\n",
				(unsigned long long)ds.test_dropped);
	} else if (st.deep_on && st.deep.ran_out) {
		fprintf(stderr, "  deep stacks: no copy at the sample: %s\n",
			c->bk->deep_why);
	}
	fprintf(stderr, "  unwind stops:");
	for (i = 1; i < SFP_STOP__MAX; i++)
		if (st.stops[i])
			fprintf(stderr, " %s %llu", sfp_unwind_stop_str(i),
				(unsigned long long)st.stops[i]);
	fputc('\n', stderr);
	if (st.tramp_frames)
		fprintf(stderr, "  %llu frames stepped through interpreter "
			"trampolines (CPython -X perf, by their code bytes)\n",
			(unsigned long long)st.tramp_frames);
	fprintf(stderr, "  unwind tables: %llu loaded for %llu files",
		(unsigned long long)st.unwind_tables,
		(unsigned long long)st.unwind_files);
	if (st.unwind_mismatch)
		fprintf(stderr, "; %llu files refused: not the mapped one "
			"(another build-id or inode)",
			(unsigned long long)st.unwind_mismatch);
	fputc('\n', stderr);
	for (i = 0; (path = sfp_rec_pipe__no_table(p, i, &cnt)); i++)
		fprintf(stderr, "%s%s (%llu)", i ? ", " :
			"  DSOs without a table (unwinds stopped there): ",
			path, (unsigned long long)cnt);
	if (i)
		fputc('\n', stderr);
}

/* -m: pages (power of two) or a size with a unit (cli_parse_size). */
static bool parse_pages(const char *s, uint32_t *pages)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), v;
	bool had_unit;

	if (!cli_parse_size(s, &v, &had_unit) || v > (1ULL << 40))
		return false;
	if (had_unit)
		v /= page;
	if (!v || v > (1U << 20) || (v & (v - 1)))
		return false;
	*pages = (uint32_t)v;
	return true;
}

/* The output could not be written: say which file and why. */
static void write_failed(const char *path, int err, const char *what)
{
	if (err == -ENOSPC || err == -EDQUOT)
		cli_err("%s: disk full; free space or write elsewhere with -o "
			"(%s)", path, what);
	else
		cli_err("writing %s: %s (%s)", path, strerror(-err), what);
}

/*
 * The recording is over and the command still runs: SIGTERM, then
 * SIGKILL after kill_after seconds (0: never) or at a second SIGINT/
 * SIGTERM, to its process group, and wait for it -- on its pidfd, so
 * that a signal or the deadline is seen at once -- and for the rest of
 * the group (a child that ignores SIGTERM would outlive it otherwise;
 * after SIGKILL only the command itself is waited for, so that a zombie
 * nobody reaps cannot hold us).  Before this, sfprof waited for the
 * command unconditionally and one that ignored SIGTERM held it forever.
 */
static void end_workload(struct sfp_record *r, double kill_after, bool quiet,
			 struct wl_end *we)
{
	double t0 = now_s();
	bool told = false, killed = false;

	if (sfp_record__done(r)) {
		if (stop_requested >= 2 && !we->by_itself)
			we->sent = "sent SIGKILL at a second signal";
		goto out;
	}
	we->sent = "sent SIGTERM";
	kill_workload(SIGTERM);
	while (!sfp_record__done(r) || (!killed && workload_group_alive())) {
		double t = now_s() - t0, wait = 0.1;

		if (!killed && (stop_requested >= 2 ||
				(kill_after > 0 && t >= kill_after))) {
			/* (the handler already sent it at a second signal) */
			kill_workload(SIGKILL);
			killed = true;
			we->sent = stop_requested >= 2
					   ? "sent SIGTERM, then SIGKILL at a second signal"
					   : "sent SIGTERM, then SIGKILL after --kill-after";
		}
		if (!quiet && !told && !killed && t >= 0.25) {
			fprintf(stderr, "sfprof record: waiting for the command "
				"(pid %d) to exit after SIGTERM",
				(int)sfp_record__workload_pid(r));
			if (kill_after > 0)
				fprintf(stderr, "; SIGKILL in %.1f s",
					kill_after - t);
			fprintf(stderr, "; Ctrl-C again to kill it now\n");
			told = true;
		}
		if (!killed && kill_after > 0 && kill_after - t < wait)
			wait = kill_after - t > 0 ? kill_after - t : 0;
		if (workload_pidfd >= 0 && sfp_record__workload_status(r) < 0) {
			struct pollfd pfd = { .fd = workload_pidfd,
					      .events = POLLIN };

			/* EINTR at a signal: the loop looks again. */
			poll(&pfd, 1, (int)(wait * 1000) + 1);
		} else {
			usleep((useconds_t)(wait * 1e6) + 1000);
		}
	}
out:
	workload_pid = 0;	/* reaped: the pid may be reused */
	we->status = sfp_record__workload_status(r);
}

static int exit_for(int err)
{
	/* Resource and I/O trouble is exit 2; a recording that cannot be
	 * made as asked (permissions, targets, events, kernel) is 1. */
	return err == -ENOSPC || err == -EIO || err == -EDQUOT ? EXIT_USAGE
							       : EXIT_INVALID;
}

enum {
	OPT_CALL_GRAPH = 256,
	OPT_INLINE,
	OPT_STACK_SIZE,
	OPT_DURATION,
	OPT_NO_INHERIT,
	OPT_MAX_DEPTH,
	OPT_NO_COMPRESS,
	OPT_NO_DEEP_STACKS,
	OPT_BUILDID_DIR,
	OPT_NO_BUILDID_CACHE,
	OPT_BUILDID_CACHE_SIZE,
	OPT_KILL_AFTER,
	OPT_OFF_CPU,
	OPT_OFF_CPU_THRESH,
	OPT_OFF_CPU_MAX_RATE,
};

static const struct option longopts[] = {
	{ "event", required_argument, NULL, 'e' },
	{ "freq", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "output", required_argument, NULL, 'o' },
	{ "mmap-pages", required_argument, NULL, 'm' },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "kill-after", required_argument, NULL, OPT_KILL_AFTER },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "off-cpu-thresh", required_argument, NULL, OPT_OFF_CPU_THRESH },
	{ "off-cpu-max-rate", required_argument, NULL, OPT_OFF_CPU_MAX_RATE },
	{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT },
	{ "compression-level", optional_argument, NULL, 'z' },
	{ "no-compress", no_argument, NULL, OPT_NO_COMPRESS },
	{ "no-deep-stacks", no_argument, NULL, OPT_NO_DEEP_STACKS },
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
	{ "no-buildid-cache", no_argument, NULL, OPT_NO_BUILDID_CACHE },
	{ "buildid-cache-size", required_argument, NULL,
	  OPT_BUILDID_CACHE_SIZE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One recording: what its options asked for, then what runs. */
struct rec {
	struct sfp_record_opts ro;
	struct sfp_perf_writer_opts wo;
	struct sfp_rec_pipe_opts po;
	char *events;			/* -e, comma-joined */
	bool quiet, inline_mode, auto_cg;
	double duration, kill_after;
	const char *bid_dir;
	uint64_t bid_budget;
	bool no_bid_cache;
	int bare_z;			/* optind after a bare -z */
	char auto_why[4096];
	const char *off_why;		/* why off-CPU is not bpf-defer's */

	struct ctx c;
	/* the session and its pipeline, the recorder's (record/recorder.h);
	 * its reader thread only moves records from the rings into the
	 * session's queue, so that the kernel never runs out of ring space
	 * while we unwind (building a large library's table can take a
	 * while); it turns the events off at --duration */
	struct sfp_recorder *rc;
	struct sfp_record *r;
	struct sfp_rec_pipe *p;
	/* bpf-defer (loaded before the session), deep stacks, kernel sums */
	struct sfp_bpf_backends bk;
	/* the exit status of a step of the recorder that failed (said) */
	int fail_exit;
	bool procs_failed;
	struct wl_end we;
	bool started;
	double t0, t_stop;
};

/* One option of what is sampled and how it is unwound.  Return: 1 taken,
 * 0 not one of these, -1 bad (said). */
static int sampling_opt(struct rec *x, int opt, const char *arg)
{
	uint64_t v;
	double ms;

	switch (opt) {
	case 'e': {
		size_t n = (x->events ? strlen(x->events) + 1 : 0) +
			   strlen(arg) + 1;
		char *e = malloc(n);

		if (!e)
			return -1;
		snprintf(e, n, "%s%s%s", x->events ? x->events : "",
			 x->events ? "," : "", arg);
		free(x->events);
		x->events = e;
		return 1;
	}
	case 'F':
		if (!cli_parse_u64(arg, &v) || !v) {
			cli_err("-F: bad frequency '%s'", arg);
			return -1;
		}
		x->ro.freq = v;
		return 1;
	case 'c':
		if (!cli_parse_u64(arg, &v) || !v) {
			cli_err("-c: bad period '%s'", arg);
			return -1;
		}
		x->ro.period = v;
		return 1;
	case 'p':
		x->ro.pids = arg;
		return 1;
	case 't':
		x->ro.tids = arg;
		return 1;
	case 'a':
		x->ro.system_wide = true;
		return 1;
	case 'm':
		if (!parse_pages(arg, &x->ro.mmap_pages)) {
			cli_err("-m: '%s' is not a power-of-two page count or "
				"size", arg);
			return -1;
		}
		return 1;
	case 'g':
		x->ro.call_graph = SFP_RECORD_CG_SFRAME;
		x->auto_cg = false;
		return 1;
	case OPT_CALL_GRAPH:
		/* every mode the library has */
		return cli_parse_call_graph(arg,
					    (1u << (SFP_RECORD_CG_BPF_DEFER + 1)) - 1,
					    &x->ro.call_graph, &x->auto_cg)
			       ? 1 : -1;
	case OPT_INLINE:
		x->inline_mode = true;
		return 1;
	case OPT_STACK_SIZE:
		if (!cli_parse_u64(arg, &v) || !v || v > 65528 || (v & 7)) {
			cli_err("--stack-size: want a multiple of 8 up to "
				"65528, not '%s'", arg);
			return -1;
		}
		x->ro.stack_size = (uint32_t)v;
		return 1;
	case OPT_MAX_DEPTH:
		if (!cli_parse_u64(arg, &v) || !v || v > 510) {
			cli_err("--max-depth: want 1..510");
			return -1;
		}
		x->po.max_depth = (uint32_t)v;
		return 1;
	case OPT_NO_DEEP_STACKS:
		x->po.no_deep_stacks = true;
		return 1;
	case OPT_NO_INHERIT:
		x->ro.no_inherit = true;
		return 1;
	case OPT_OFF_CPU:
		x->ro.off_cpu = true;
		return 1;
	case OPT_OFF_CPU_THRESH:
		if (!cli_parse_double(arg, 0, 1e9, &ms)) {
			cli_err("--off-cpu-thresh: want milliseconds, not '%s'",
				arg);
			return -1;
		}
		x->po.off_cpu_thresh_ns = (uint64_t)(ms * 1e6 + 0.5);
		return 1;
	case OPT_OFF_CPU_MAX_RATE:
		if (!cli_parse_u64(arg, &v)) {
			cli_err("--off-cpu-max-rate: bad rate '%s'", arg);
			return -1;
		}
		x->po.off_cpu_max_rate = v;
		return 1;
	default:
		return 0;
	}
}

/* One option of the output and of the command's end.  Return: as
 * sampling_opt(). */
static int output_opt(struct rec *x, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'o':
		x->c.path = arg;
		return 1;
	case OPT_DURATION:
		if (!cli_parse_duration(arg, &x->duration) ||
		    !(x->duration > 0)) {
			cli_err("--duration: bad duration '%s'", arg);
			return -1;
		}
		return 1;
	case OPT_KILL_AFTER:
		if (!cli_parse_duration(arg, &x->kill_after)) {
			cli_err("--kill-after: bad duration '%s'", arg);
			return -1;
		}
		return 1;
	case 'z':
		/* perf's -z: level 1 unless one is given, attached (-z5,
		 * --compression-level=5) as getopt wants it */
		if (!arg) {
			x->wo.compression_level = 1;
			x->bare_z = optind;
			return 1;
		}
		x->bare_z = 0;
		if (!cli_parse_u64(arg, &v) || v > 22) {
			cli_err("--compression-level: want 0..22, not '%s'",
				arg);
			return -1;
		}
		x->wo.compression_level = (int)v;
		return 1;
	case OPT_NO_COMPRESS:
		x->wo.compression_level = 0;
		return 1;
	case OPT_BUILDID_DIR:
		x->bid_dir = arg;
		return 1;
	case OPT_NO_BUILDID_CACHE:
		x->no_bid_cache = true;
		return 1;
	case OPT_BUILDID_CACHE_SIZE:
		if (!cli_parse_size(arg, &x->bid_budget, NULL) ||
		    !x->bid_budget) {
			cli_err("--buildid-cache-size: bad size '%s'", arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

/* The options and the command.  Return: 0, 1 --help printed, -1 usage
 * error (said), -2 usage error without the usage text (said). */
static int parse_args(struct rec *x, int argc, char **argv)
{
	struct sfp_record_opts *ro = &x->ro;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "+e:F:c:p:t:ao:m:gz::qvh",
				  longopts, NULL)) != -1) {
		if ((r = sampling_opt(x, opt, optarg)) ||
		    (r = output_opt(x, opt, optarg))) {
			if (r < 0)
				return -1;
			continue;
		}
		switch (opt) {
		case 'q':
			x->quiet = true;
			break;
		case 'v':
			cli_setup_logging(true);
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (!strcmp(x->c.path, "-")) {
		/* perf writes a pipe-mode stream there; our writer makes
		 * seekable files only */
		cli_err("-o -: writing perf.data to standard output (pipe "
			"mode) is not supported; give a file name");
		return -2;
	}
	/* "-z 5" would run a command named "5": perf does, silently.  A
	 * command that is a number right after a bare -z (no "--" between)
	 * is almost surely a level given the wrong way. */
	if (x->bare_z && x->bare_z == optind && optind < argc &&
	    argv[optind][0] &&
	    argv[optind][strspn(argv[optind], "0123456789")] == 0) {
		cli_err("-z takes its level attached (-z%s or "
			"--compression-level=%s); '%s' would be run as the "
			"command (put -- before a command of that name)",
			argv[optind], argv[optind], argv[optind]);
		return -1;
	}
	if (optind < argc)
		ro->argv = argv + optind;
	if (!!ro->argv + !!ro->pids + !!ro->tids + !!ro->system_wide != 1) {
		cli_err("give exactly one target: -- COMMAND, -p PID, -t TID "
			"or -a");
		return -1;
	}
	if (ro->off_cpu && !x->auto_cg &&
	    ro->call_graph != SFP_RECORD_CG_SFRAME &&
	    ro->call_graph != SFP_RECORD_CG_BPF_DEFER) {
		cli_err("--off-cpu works with --call-graph sframe, bpf-defer "
			"or auto only");
		return -1;
	}
	if (x->inline_mode &&
	    (ro->call_graph != SFP_RECORD_CG_SFRAME || x->auto_cg)) {
		/* (bpf-defer writes the deferred form only) */
		cli_err("--inline applies to --call-graph sframe only");
		return -1;
	}
	return 0;
}

/* The call-graph mode (auto's choice, bpf-defer where it loads) and the
 * off-CPU path, each said as auto says its choice. */
static void choose_call_graph(struct rec *x)
{
	struct sfp_record_opts *ro = &x->ro;

	if (x->auto_cg) {
		ro->call_graph = record_auto_choose(ro, x->po.max_depth, &x->bk.defer,
						    x->auto_why,
						    sizeof(x->auto_why));
		if (!x->quiet)
			cli_err("--call-graph auto: %s", x->auto_why);
	} else {
		enum sfp_record_call_graph asked = ro->call_graph;

		record_bpf_load(&ro->call_graph, ro, x->po.max_depth, &x->bk.defer);
		if (asked != ro->call_graph)
			x->off_why = "bpf-defer did not load, see above";
	}
	if (ro->off_cpu && !x->quiet &&
	    ro->call_graph == SFP_RECORD_CG_BPF_DEFER)
		cli_err("--off-cpu: BPF program on sched_switch (bpf-defer "
			"loaded): kernel stack at each block, one user unwind "
			"per kernel entry by its task_work");
	else if (ro->off_cpu && !x->quiet)
		cli_err("--off-cpu: sched:sched_switch tracepoint with a user "
			"stack copy per block (%s)",
			x->off_why ? x->off_why
			: x->auto_cg ? "--call-graph auto chose sframe"
			: "--call-graph sframe; bpf-defer or auto use BPF "
			  "where it loads");
}

/*
 * A step of the recorder failed: said as record says it, the exit status
 * kept for cmd_record.  Return: 0 to go on without the step (the tables
 * thread, the kernel sums, /proc after a write error: said later), or
 * err.
 */
static int recorder_failed(void *ctx, enum sfp_recorder_step step, int err)
{
	struct rec *x = ctx;
	int ex = EXIT_INVALID;

	switch (step) {
	case SFP_RECORDER_SESSION:
		/* The library said why, with the fix; add the code. */
		cli_err("cannot record: %s", sfp_strerror(err));
		ex = exit_for(err);
		break;
	case SFP_RECORDER_PIPELINE:
		cli_err("cannot set up the pipeline: %s", sfp_strerror(err));
		break;
	case SFP_RECORDER_ATTACH:
		cli_err("bpf-defer: cannot attach: %s", sfp_strerror(err));
		break;
	case SFP_RECORDER_ASYNC_TABLES:
		cli_err("bpf-defer: tables built on the reading thread (%s)",
			sfp_strerror(err));
		return 0;
	case SFP_RECORDER_SUMS:
		if (!x->quiet)
			cli_err("--off-cpu: no kernel sums (BPF program on "
				"sched_switch: %s): the time of blocks whose "
				"records the rings lose is lost (counted)",
				sfp_strerror(err));
		return 0;
	case SFP_RECORDER_KERNEL:
		if (x->c.write_err)
			write_failed(x->c.path, err, "nothing recorded");
		else
			cli_err("synthesizing the kernel's records: %s",
				strerror(-err));
		ex = EXIT_USAGE;
		break;
	case SFP_RECORDER_START:
		/* The library said why (e.g. the command cannot be run).  A
		 * command that cannot be run exits as a shell says it: 127
		 * not found, 126 found but not executable. */
		cli_err("recording not started");
		ex = !x->we.have ? EXIT_INVALID : err == -ENOENT ? 127 : 126;
		break;
	case SFP_RECORDER_PROCS:
		if (x->c.write_err)
			return 0;	/* the write error is said at the end */
		cli_err("reading /proc: %s", sfp_strerror(err));
		x->procs_failed = true;
		break;
	}
	x->fail_exit = ex;
	return err;
}

/* Session and pipeline made: the command kept for the signals, the
 * output file with its events, before the kernel's records go in.
 * Return: 0, or -errno (said, x->fail_exit set). */
static int recorder_ready(void *ctx, struct sfp_recorder *rc)
{
	struct rec *x = ctx;
	struct ctx *c = &x->c;
	int err, i;

	x->r = sfp_recorder__session(rc);
	x->p = sfp_recorder__pipeline(rc);
	if (sfp_record__workload_pid(x->r) > 0) {
		/* Forked, waiting for start(): not reaped before we are done. */
		x->we.have = true;
		workload_pid = sfp_record__workload_pid(x->r);
		workload_pidfd = pidfd_open(workload_pid, 0);
	}
	x->fail_exit = EXIT_USAGE;
	err = sfp_perf_writer__open(c->path, &x->wo, &c->w);
	if (err) {
		if (err == -EEXIST)	/* FILE.old: the library said */
			cli_err("cannot create %s: %s.old is in the way; the "
				"command was not run", c->path, c->path);
		else
			cli_err("cannot create %s: %s%s", c->path,
				strerror(-err),
				err == -ESPIPE ? " (a perf.data file must be "
				"seekable; pipe mode is not supported)" : "");
		return err;
	}
	for (i = 0; i < sfp_record__nr_evsels(x->r); i++) {
		struct sfp_perf_attr pa;
		const uint64_t *ids;
		size_t nr = sfp_record__ids(x->r, i, &ids);

		sfp_record_perf_attr(sfp_rec_pipe__out_attr(x->p, i), &pa);
		err = sfp_perf_writer__add_evsel(c->w, &pa, ids, nr,
						 sfp_rec_pipe__out_name(x->p, i));
		if (err < 0) {
			write_failed(c->path, err, "nothing recorded");
			return err;
		}
	}
	x->fail_exit = 0;
	return 0;
}

/* Running: the file takes its name now (FILE.old kept), so that a killed
 * recording leaves it readable at the path asked for; until here it was
 * a temporary that a failed start removes. */
static void recorder_started(void *ctx, struct sfp_recorder *rc)
{
	struct rec *x = ctx;
	int err;

	(void)rc;
	err = sfp_perf_writer__publish(x->c.w);
	if (err)
		x->c.write_err = err;
	x->started = true;
}

/* The session, its pipeline and BPF parts, the output file with its
 * events, the kernel's records: the recorder's, with deep stacks read at
 * the sample by a BPF program where it loads (root or CAP_BPF+
 * CAP_PERFMON, BTF; otherwise the walks that run out are completed
 * later, as before, and the summary says why), the kernel's off-CPU sums
 * beside the tracepoint path, so that the blocks the rings lose keep
 * their time, and -a's tables built off the reading thread, as the
 * agent's, so that the rings do not fill while every program the machine
 * starts brings tables to build.  Return: 0, or the exit status (said). */
static int open_recording(struct rec *x)
{
	const char *no = getenv("SFPROF_DEEP_NO_BPF");
	bool no_deep = no && *no && strcmp(no, "0");
	SFP_OPTS(sfp_recorder_opts, o, .poll_ms = 50,
		 .stop_after_s = x->duration, .thread_name = "sfp-reader",
		 .record = &x->ro, .pipe = &x->po, .out = out_record,
		 .out_ctx = &x->c, .async_tables = x->ro.system_wide,
		 .ctx = x, .failed = recorder_failed, .ready = recorder_ready,
		 .started = recorder_started);
	int err;

	if (no_deep)
		snprintf(x->bk.deep_why, sizeof(x->bk.deep_why),
			 "SFPROF_DEEP_NO_BPF is set");
	x->c.bk = &x->bk;
	x->c.zlevel = x->wo.compression_level;
	sfp_bpf_backends__ops(&x->bk, !no_deep, true, &o);
	err = sfp_recorder__open(&o, &x->rc);
	if (!err)
		return 0;
	x->r = NULL;	/* the recorder's, gone with it */
	x->p = NULL;
	if (!x->fail_exit) {
		cli_err("cannot set up the recording: %s", sfp_strerror(err));
		x->fail_exit = EXIT_INVALID;
	}
	return x->fail_exit;
}

/* The events on, the command run, the file named, the processes already
 * running synthesized.  Return: 0; -1 started, but /proc could not be
 * read (said: stop and finish); or the exit status (said). */
static int start_recording(struct rec *x)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!sfp_recorder__start(x->rc))
		return 0;
	return x->procs_failed ? -1 : x->fail_exit;
}

/* Records from the rings to the file until the command ends, the time is
 * up or a signal comes.  Return: 0, or the exit status (said). */
static int run_loop(struct rec *x)
{
	struct ctx *c = &x->c;
	bool tty = !x->quiet && isatty(STDERR_FILENO);
	bool threaded = sfp_recorder__reader_running(x->rc);
	double last_flush = 0, last_status = 0, t;
	int err, ret = 0;

	while (!stop_requested && !c->write_err) {
		if (sfp_record__done(x->r))
			break;
		if (threaded)
			usleep(50000);
		else
			sfp_record__poll(x->r, 100);
		err = sfp_recorder__read(x->rc, false);
		/* the VMAs of processes whose MMAP2 was just read: now, not
		 * one loop later (a walk that finds the mmap lock taken
		 * before then has only the callbacks' cache) */
		if (err >= 0 && x->bk.defer)
			err = sfp_bpf_defer__poll(x->bk.defer);
		if (err < 0 && !c->write_err) {
			cli_err("reading the rings: %s", sfp_strerror(err));
			ret = EXIT_INVALID;
			break;
		}
		t = now_s();
		if (t - last_flush >= FLUSH_MS / 1000.0) {
			/* idle or not, what came in reaches the file */
			err = sfp_perf_writer__flush(c->w);
			if (err && !c->write_err)
				c->write_err = err;
			last_flush = t;
		}
		if (sfp_recorder__timed_out(x->rc) ||
		    (x->duration > 0 && t - x->t0 >= x->duration))
			break;
		if (tty && t - last_status >= 0.5) {
			status_line(c, x->r, t - x->t0);
			last_status = t;
		}
	}
	if (tty && last_status > 0)
		x->c.status_shown = true;
	return ret;
}

/* The events stopped, the last records read and flushed, the pipeline
 * finished.  Return: 0, or the exit status (said). */
static int stop_recording(struct rec *x)
{
	int err;

	x->t_stop = now_s();
	/* Ended by itself, not by --duration or our signals: its status
	 * becomes ours. */
	x->we.by_itself = x->we.have && !stop_requested &&
			  sfp_record__done(x->r);
	sfp_recorder__stop(x->rc);	/* and the kernel sums */
	if (x->c.write_err)
		return 0;
	err = sfp_recorder__finish(x->rc);
	if (err < 0 && !x->c.write_err) {
		cli_err("reading the rings: %s", sfp_strerror(err));
		return EXIT_INVALID;
	}
	return 0;
}

/* The file closed, the command ended, the summary said.  Return: the
 * exit status: ret, or the command's own or a write error's. */
static int finish_recording(struct rec *x, int ret)
{
	struct ctx *c = &x->c;
	int err;

	if (c->status_shown)
		fputc('\n', stderr);
	if (c->write_err) {
		write_failed(c->path, c->write_err, "the file is incomplete");
		sfp_perf_writer__free(&c->w);
		return EXIT_USAGE;
	}
	err = sfp_perf_writer__close(&c->w);
	if (err) {
		write_failed(c->path, err, "the file is incomplete");
		return EXIT_USAGE;
	}
	/* The file is complete; now the command must go. */
	if (x->we.have)
		end_workload(x->r, x->kill_after, x->quiet, &x->we);
	if (x->we.by_itself && x->we.status > 0)
		ret = WIFEXITED(x->we.status)	? WEXITSTATUS(x->we.status)
		      : WIFSIGNALED(x->we.status) ? 128 + WTERMSIG(x->we.status)
						  : ret;
	if (!x->quiet)
		summary(c, x->r, x->p, x->ro.call_graph, x->inline_mode,
			x->t_stop - x->t0, &x->we);
	if (!x->quiet && x->bk.defer)
		record_bpf_summary(stderr, x->bk.defer);
	if (!x->quiet && x->bk.sums) {
		struct sfp_bpf_offsum_stats ks;

		sfp_bpf_offsum__stats(x->bk.sums, &ks);
		if (ks.out_full || ks.sums_full)
			fprintf(stderr, "  off-cpu: the kernel's sums are "
				"short: %llu blocks not timed and %llu not "
				"summed (its maps of %u tasks were full)\n",
				(unsigned long long)ks.out_full,
				(unsigned long long)ks.sums_full,
				SFO_MAX_TASKS_USER);
	}
	if (!x->quiet && x->auto_cg)
		fprintf(stderr, "  chosen by --call-graph auto: %s\n",
			x->auto_why);
	/* After the file is complete: the hits are read back from it. */
	bid_collect_finish(c->bc, c->path, x->quiet);
	return ret;
}

static void rec_free(struct rec *x)
{
	size_t k;

	bid_collect_free(&x->c.bc);
	/* Error paths: never wait unboundedly for a command that ignores
	 * SIGTERM (sfp_record__free() would). */
	if (x->we.have && x->started && x->we.status < 0)
		end_workload(x->r, x->kill_after, true, &x->we);
	if (workload_pidfd >= 0)
		close(workload_pidfd);
	workload_pidfd = -1;
	workload_pid = 0;
	sfp_perf_writer__free(&x->c.w);
	sfp_recorder__free(&x->rc);	/* the pipeline and the session */
	sfp_bpf_backends__free(&x->bk);	/* after the pipeline's use */
	sfp_bpf_defer__free(&x->bk.defer);
	for (k = 0; k < x->c.nr_bid; k++)
		free(x->c.bid_paths[k]);
	free(x->c.bid_paths);
	free(x->events);
	free(x);
}

int cmd_record(int argc, char **argv)
{
	struct rec *x = calloc(1, sizeof(*x));
	int err, ret;

	if (!x)
		return EXIT_USAGE;
	x->ro = (struct sfp_record_opts){
		.sz = sizeof(x->ro), .call_graph = SFP_RECORD_CG_SFRAME };
	x->wo = (struct sfp_perf_writer_opts){
		.sz = sizeof(x->wo), .compression_level = DEFAULT_ZLEVEL,
		.keep_old = true, .flush_ms = FLUSH_MS };
	x->po = (struct sfp_rec_pipe_opts){
		.sz = sizeof(x->po),
		.off_cpu_thresh_ns = DEFAULT_OFF_CPU_THRESH_MS * 1000000ULL,
		.off_cpu_max_rate = DEFAULT_OFF_CPU_MAX_RATE,
		.off_cpu_switch_records = true };
	x->c.path = "perf.data";
	x->t0 = now_s();
	x->bid_budget = 2ull << 30;
	x->kill_after = DEFAULT_KILL_AFTER;
	x->we.status = -1;
	switch (parse_args(x, argc, argv)) {
	case 0:
		break;
	case 1:
		ret = 0;
		goto out;
	case -1:
		usage(stderr);
		/* fall through */
	default:
		ret = EXIT_USAGE;
		goto out;
	}
	x->ro.events = x->events;
	/* build-ids read by us, not by the kernel (src/record/pipeline.c,
	 * mmap2_fill_build_id(): a perf 6.1 recording beside us aborts
	 * while any session has attr.build_id) */
	x->ro.no_build_id = true;
	x->po.fill_build_ids = true;
	x->po.inline_mode = x->inline_mode;
	if (!x->no_bid_cache &&
	    (err = bid_collect_new(x->bid_dir, x->bid_budget, &x->c.bc)))
		cli_err("no build-id cache: %s", sfp_strerror(err));
	choose_call_graph(x);
	x->wo.cmdline = (const char *const *)argv - 1;
	x->wo.nr_cmdline = (size_t)argc + 1;
	if ((ret = open_recording(x)))
		goto out;
	ret = start_recording(x);
	if (ret > 0)
		goto out;
	if (!ret) {
		x->t0 = now_s();
		sfp_recorder__start_reader(x->rc);
		ret = run_loop(x);
	} else {
		ret = EXIT_INVALID;	/* reading /proc failed: said */
	}
	err = stop_recording(x);
	if (!ret)
		ret = err;
	ret = finish_recording(x, ret);
out:
	rec_free(x);
	return ret;
}
