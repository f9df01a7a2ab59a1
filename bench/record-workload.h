/* SPDX-License-Identifier: MIT */
/*
 * What the recording benchmarks (bench-record, bench-record-bpf,
 * bench-record-cost) share: the workloads they profile (qsort with a
 * callback, so stacks go program -> libc -> program; run as `BENCH --work
 * N OUT` or `BENCH --detour SECONDS OUT`, so `make bench` needs nothing
 * from the test build) and the counting of a recorded file with sfprof's
 * reader.  Included by exactly one .c per benchmark binary.
 */
#ifndef SFP_BENCH_RECORD_WORKLOAD_H
#define SFP_BENCH_RECORD_WORKLOAD_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/perf.h>

#define NOINLINE __attribute__((noinline))
/* Each benchmark uses the part of this file that it needs. */
#define WORKLOAD_FN static __attribute__((unused))

static volatile unsigned long sink;

WORKLOAD_FN double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

WORKLOAD_FN NOINLINE int cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;

	sink += x ^ y;
	return x < y ? -1 : x > y;
}

WORKLOAD_FN NOINLINE void sort_once(unsigned long *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = (i * 2654435761u) % 1000003;
	qsort(v, n, sizeof(*v), cmp);
}

WORKLOAD_FN NOINLINE void work(long iters)
{
	static unsigned long v[4096];
	long i;

	for (i = 0; i < iters; i++)
		sort_once(v, 4096);
}

/* How many sorts take about @cpu_ms of CPU time (CPU time, not wall
 * time: the machine may be shared). */
WORKLOAD_FN long work_iters_for(double cpu_ms)
{
	struct timespec a, b;
	double t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	work(50);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	t = ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6) / 50;
	return (long)(cpu_ms / (t > 0.01 ? t : 0.01));
}

/* The workload: fixed work, then its own CPU and wall time to a file. */
WORKLOAD_FN int run_work(long iters, const char *out)
{
	double t0 = now_ms(), t1;
	struct rusage ru;
	FILE *f;

	work(iters);
	t1 = now_ms();
	getrusage(RUSAGE_SELF, &ru);
	f = fopen(out, "w");
	if (!f)
		return 1;
	fprintf(f, "%f %f %f\n",
		ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3,
		ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3, t1 - t0);
	fclose(f);
	return 0;
}

/*
 * The second workload, for measuring what sampling takes from a task
 * directly rather than from the noisy difference of two run times: a loop
 * that reads the time stamp counter and adds up every gap between two
 * reads longer than DETOUR_GAP_NS.  A gap is time the task did not run its
 * own code: a sampling interrupt, the kernel's stack copy, a BPF callback
 * on the way back to user space, a timer tick.  The loop runs inside a
 * qsort comparison callback, so samples land under program -> libc ->
 * program frames like the first workload's.  The TSC is read directly (not
 * through the vDSO) so that every sample's leaf is our own code, which
 * every unwinder compared here can walk.
 */
#define DETOUR_GAP_NS 500

static struct {
	uint64_t start, end;		/* TSC ticks */
	uint64_t prev, stolen, gaps, loops, gap_ticks;
	bool done;
} dt;

WORKLOAD_FN inline uint64_t detour_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* Spin for about @chunk ticks, counting the gaps. */
WORKLOAD_FN NOINLINE void detour_spin(uint64_t chunk)
{
	uint64_t end = dt.prev + chunk, t;

	do {
		t = detour_ticks();
		if (t - dt.prev > dt.gap_ticks) {
			dt.stolen += t - dt.prev;
			dt.gaps++;
		}
		dt.prev = t;
		dt.loops++;
	} while (t < end);
	if (t >= dt.end)
		dt.done = true;
}

static uint64_t detour_chunk;

WORKLOAD_FN NOINLINE int detour_cmp(const void *a, const void *b)
{
	if (!dt.done)
		detour_spin(detour_chunk);
	return *(const int *)a - *(const int *)b;
}

WORKLOAD_FN NOINLINE void detour_sort(void)
{
	int v[64];
	int i;

	for (i = 0; i < 64; i++)
		v[i] = (i * 7919) % 64;
	qsort(v, 64, sizeof(v[0]), detour_cmp);
}

/* Calibrate ticks against CLOCK_MONOTONIC over 50 ms. */
WORKLOAD_FN double detour_ticks_per_ns(void)
{
	double t0 = now_ms(), t1;
	uint64_t k0 = detour_ticks(), k1;

	do
		t1 = now_ms();
	while (t1 - t0 < 50);
	k1 = detour_ticks();
	return (double)(k1 - k0) / ((t1 - t0) * 1e6);
}

/*
 * Run the detour loop for @seconds and write "run_ns stolen_ns gaps
 * loops cpu_ms" to @out: the run's length, the time inside gaps, their
 * count, the loop's iterations and the task's own CPU time.
 */
WORKLOAD_FN int run_detour(double seconds, const char *out)
{
	double tpn = detour_ticks_per_ns();
	struct rusage ru;
	uint64_t t1;
	FILE *f;

	dt.gap_ticks = (uint64_t)(DETOUR_GAP_NS * tpn);
	detour_chunk = (uint64_t)(50e3 * tpn);	/* 50 us per comparison */
	dt.start = dt.prev = detour_ticks();
	dt.end = dt.start + (uint64_t)(seconds * 1e9 * tpn);
	while (!dt.done)
		detour_sort();
	t1 = detour_ticks();
	getrusage(RUSAGE_SELF, &ru);
	f = fopen(out, "a");	/* several workloads may share @out */
	if (!f)
		return 1;
	fprintf(f, "%.0f %.0f %llu %llu %f\n", (t1 - dt.start) / tpn,
		dt.stolen / tpn, (unsigned long long)dt.gaps,
		(unsigned long long)dt.loops,
		ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
		ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3);
	fclose(f);
	return 0;
}

WORKLOAD_FN int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct result {
	double cpu_ms, wall_ms;
	uint64_t samples, lost, deferred, bytes;
	bool ok;
};

WORKLOAD_FN void count_file(const char *path, struct result *r)
{
	struct sfp_perf_reader *rd = NULL;
	const struct sfp_perf_event *ev;
	struct stat st;

	if (stat(path, &st))
		return;
	r->bytes = (uint64_t)st.st_size;
	SFP_OPTS(sfp_perf_reader_opts, o, .unordered = true);
	if (sfp_perf_reader__open(path, &o, &rd))
		return;
	while (sfp_perf_reader__next(rd, &ev) > 0) {
		switch (ev->type) {
		case SFP_PERF_RECORD_SAMPLE:
			r->samples++;
			break;
		case SFP_PERF_RECORD_LOST:
			r->lost += ev->lost.lost;
			break;
		case SFP_PERF_RECORD_LOST_SAMPLES:
			r->lost += ev->lost_samples.lost;
			break;
		case SFP_PERF_RECORD_CALLCHAIN_DEFERRED:
			r->deferred++;
			break;
		default:
			break;
		}
	}
	sfp_perf_reader__free(&rd);
}

/* This binary, the sfprof CLI next to it and the run's scratch files. */
static char self[PATH_MAX], sfprof[PATH_MAX];
static char data_path[80], out_path[80];

/*
 * Fill in the paths above (build/bench/bench-X -> build/sfprof; files in
 * /tmp named after @name and the pid).  False, with a line saying why,
 * when sfprof or perf is missing: the benchmark then has nothing to run.
 */
WORKLOAD_FN bool bench_start(const char *name)
{
	char *slash;

	if (!realpath("/proc/self/exe", self))
		return false;
	snprintf(sfprof, sizeof(sfprof), "%s", self);
	for (int i = 0; i < 2; i++) {
		slash = strrchr(sfprof, '/');
		if (slash)
			*slash = '\0';
	}
	if (strlen(sfprof) + sizeof("/sfprof") > sizeof(sfprof))
		return false;
	strcat(sfprof, "/sfprof");
	if (access(sfprof, X_OK) || system("perf version > /dev/null 2>&1")) {
		printf("%s: needs the sfprof CLI (%s) and perf\n", name, sfprof);
		return false;
	}
	snprintf(data_path, sizeof(data_path), "/tmp/%s.%d.data", name,
		 (int)getpid());
	snprintf(out_path, sizeof(out_path), "/tmp/%s.%d.out", name,
		 (int)getpid());
	return true;
}

/* Does `--call-graph bpf-defer` run here (root, BPF task_work), rather
 * than fall back to sframe? */
WORKLOAD_FN bool bench_bpf_defer_ok(void)
{
	char probe[PATH_MAX + 160];

	snprintf(probe, sizeof(probe), "%s record --call-graph bpf-defer "
		 "-o %s -- true 2>&1 | grep -q 'falling back'", sfprof,
		 data_path);
	return system(probe) != 0;
}

/*
 * One run: @workload (the command line that runs this binary's workload,
 * leaving its figures in out_path) alone when @profiler is "", else under
 * `@profiler -o data_path --`; then open the figures.  The CPU time
 * of all the run's processes goes into *@child_ms.  NULL if the run or the
 * figures failed.
 */
WORKLOAD_FN FILE *bench_run(const char *profiler, const char *workload,
			    double *child_ms)
{
	char cmd[PATH_MAX * 4];
	struct rusage a, b;

	unlink(data_path);
	unlink(out_path);
	if (*profiler)
		snprintf(cmd, sizeof(cmd), "%s -o %s -- %s > /dev/null 2>&1",
			 profiler, data_path, workload);
	else
		snprintf(cmd, sizeof(cmd), "%s", workload);
	getrusage(RUSAGE_CHILDREN, &a);
	if (system(cmd) != 0)
		return NULL;
	getrusage(RUSAGE_CHILDREN, &b);
	*child_ms = (b.ru_utime.tv_sec - a.ru_utime.tv_sec) * 1e3 +
		    (b.ru_utime.tv_usec - a.ru_utime.tv_usec) / 1e3 +
		    (b.ru_stime.tv_sec - a.ru_stime.tv_sec) * 1e3 +
		    (b.ru_stime.tv_usec - a.ru_stime.tv_usec) / 1e3;
	return fopen(out_path, "r");
}

/*
 * One run of the qsort workload (@iters sorts), under @profiler or alone
 * (""): the workload's own CPU and wall time, and what the run's other
 * processes used (the profiler's CPU), in ms.  False if the run failed.
 */
WORKLOAD_FN bool bench_run_work(const char *profiler, long iters,
				double *cpu_ms, double *wall_ms,
				double *prof_ms)
{
	char work[PATH_MAX + 128];
	double u, s, child_ms;
	bool ok;
	FILE *f;

	snprintf(work, sizeof(work), "%s --work %ld %s", self, iters,
		 out_path);
	f = bench_run(profiler, work, &child_ms);
	if (!f)
		return false;
	ok = fscanf(f, "%lf %lf %lf", &u, &s, wall_ms) == 3;
	fclose(f);
	*cpu_ms = u + s;
	*prof_ms = child_ms - *cpu_ms;
	return ok;
}

/*
 * The run-time comparison (bench-record, bench-record-bpf): one profiler
 * configuration, its runs' figures and, after work_finish(), their
 * medians.
 */
struct work_config {
	const char *name;
	char prefix[PATH_MAX + 128];	/* "" = the bare workload */
	double cpu[16], wall[16], prof[16];
	int n;
	uint64_t lost;
	struct result r;
	double prof_ms;
	double min_ms;		/* the least disturbed run (shared machine) */
};

/* One run of @c; the file's counts are kept from the last run. */
WORKLOAD_FN void work_run_once(struct work_config *c, long iters)
{
	double cpu, wall, prof;

	if (c->n >= 16 || !bench_run_work(c->prefix, iters, &cpu, &wall, &prof))
		return;
	c->cpu[c->n] = cpu;
	c->wall[c->n] = wall;
	c->prof[c->n] = prof;
	c->n++;
	if (*c->prefix) {
		memset(&c->r, 0, sizeof(c->r));
		count_file(data_path, &c->r);
		c->lost += c->r.lost;	/* lost adds up over runs */
	}
}

/* Medians (and the least disturbed run) over @c's runs. */
WORKLOAD_FN void work_finish(struct work_config *c)
{
	if (!c->n)
		return;
	qsort(c->cpu, (size_t)c->n, sizeof(double), cmp_double);
	qsort(c->wall, (size_t)c->n, sizeof(double), cmp_double);
	qsort(c->prof, (size_t)c->n, sizeof(double), cmp_double);
	c->r.cpu_ms = c->cpu[c->n / 2];
	c->r.wall_ms = c->wall[c->n / 2];
	c->prof_ms = c->prof[c->n / 2];
	c->min_ms = c->cpu[0];
	c->r.lost = c->lost;
	c->r.ok = true;
}

/* BENCH_RUNS from the environment, or @dflt, clamped to [1, @max]. */
WORKLOAD_FN int bench_runs(int dflt, int max)
{
	const char *env = getenv("BENCH_RUNS");
	int n = env ? atoi(env) : dflt;

	return n < 1 ? 1 : n > max ? max : n;
}

#endif /* SFP_BENCH_RECORD_WORKLOAD_H */
