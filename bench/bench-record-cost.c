// SPDX-License-Identifier: MIT
/*
 * What recording takes from the profiled task, measured in the task.
 *
 * bench-record and bench-record-bpf compare run times of a CPU-bound
 * workload with and without a profiler.  On this VM two runs of the same
 * bare workload differ by several percent, more than the 2-point margins
 * the recording targets set, so those comparisons cannot settle them.  This
 * benchmark measures the cost directly instead: the workload is a loop
 * that reads the time stamp counter and adds up every gap in its own
 * execution (record-workload.h, `--detour`).  Sampling interrupts, the
 * kernel's stack copies and frame-pointer walks, and BPF task_work
 * callbacks all run in the task and show up as gaps, whatever the speed of
 * the loop itself; so the time stolen from the task is measured, not
 * inferred from two noisy totals.
 *
 * Configurations, at 1 kHz and 4 kHz on cpu-clock: no profiler, perf with
 * the bare event, perf --call-graph fp, perf --call-graph dwarf, sfprof
 * record (sframe, its default) and sfprof --call-graph bpf-defer (when it
 * runs here).  The workload is pinned to CPU 1 and the profiler to CPU 0,
 * so that the profiler's own work never preempts the task: its CPU time is
 * printed separately.  BENCH_RUNS rounds (default 7, at most 101), each
 * running every configuration once for BENCH_SECONDS (default 2) in a
 * rotated order.  BENCH_HZ=1000 or 4000 runs that frequency only;
 * BENCH_CONFIGS (e.g. "sframe,dwarf"; keys bare, fp, dwarf, sframe, nodeep
 * (sframe with --no-deep-stacks, the default mode before issue 37), big
 * (sframe with perf's largest copy, 65528 bytes), nobpf (sframe without
 * the deep stacks' BPF copy at the sample: SFPROF_DEEP_NO_BPF=1), bpf)
 * runs only those beside the unprofiled one: fewer configurations make
 * rounds shorter, so a pair's runs lie closer in time.
 *
 * Per configuration: the median share of the run stolen from the task
 * (points of slowdown), the cost per sample over the unprofiled run of
 * the same round, the samples and lost samples of all rounds, bytes per
 * sample of the files (each tool's default output), the profiler's CPU
 * time per second of run (startup included), and what the cost bought:
 * the share of the last round's samples whose stack, as `sfprof script`
 * prints it, reaches main (perf fp's cannot: the workload has no frame
 * pointers).  Last, at 4 kHz with both CPUs busy (two pinned workloads
 * under one profiler): lost samples.
 *
 * Per target: the median of the per-round differences with a
 * distribution-free (sign test) confidence interval, and a verdict that
 * says "not decided" when the interval straddles the target.  "No worse
 * than perf dwarf" is judged with a 1-point margin: both modes make the
 * kernel copy the user stack at each sample, so their costs are nearly
 * equal and a strict "<= 0" could not be decided by any number of rounds;
 * the interval's upper end says how much worse sfprof could be.
 *
 * What this leaves out: a sample's later cost in the task's caches, which
 * the run-time benchmarks include.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <sfprof/perf.h>

#include "record-workload.h"

#define MAX_ROUNDS 101

enum { NONE, BARE, FP, DWARF, SFRAME, SFRAME_NODEEP, SFRAME_BIG, SFRAME_NOBPF, BPF,
       NCFG };

struct config {
	const char *name;
	const char *key;		/* for BENCH_CONFIGS */
	const char *fmt;		/* NULL: the bare workload */
	char prefix[PATH_MAX + 160];
	bool skip;
	/* per round; NAN where the run failed */
	double stolen[MAX_ROUNDS];	/* points: % of the run */
	double per_sample_us[MAX_ROUNDS];
	double prof_ms_per_s[MAX_ROUNDS];
	uint64_t samples, lost, bytes;
	double complete;		/* % of samples whose stack reaches main */
};

static double seconds = 2;
static bool pin;

/* One run: stolen share into c->stolen[r], counts into the totals. */
static void run_once(struct config *c, int r, uint64_t *samples_out)
{
	char work[PATH_MAX + 128], prof[PATH_MAX + 192];
	const char *cpu0 = pin ? "taskset -c 0 " : "";
	const char *cpu1 = pin ? "taskset -c 1 " : "";
	double run_ns, stolen_ns, cpu_ms, child_ms;
	unsigned long long gaps, loops;
	struct result res = { 0 };
	FILE *f;

	c->stolen[r] = NAN;
	c->prof_ms_per_s[r] = NAN;
	*samples_out = 0;
	snprintf(work, sizeof(work), "%s%s --detour %g %s", cpu1, self,
		 seconds, out_path);
	if (c->fmt)
		snprintf(prof, sizeof(prof), "%s%s", cpu0, c->prefix);
	f = bench_run(c->fmt ? prof : "", work, &child_ms);
	if (!f)
		return;
	if (fscanf(f, "%lf %lf %llu %llu %lf", &run_ns, &stolen_ns, &gaps,
		   &loops, &cpu_ms) == 5 && run_ns > 0) {
		c->stolen[r] = stolen_ns / run_ns * 100;
		/* everything the run's processes used but the task */
		c->prof_ms_per_s[r] = (child_ms - cpu_ms) / (run_ns / 1e9);
		if (c->fmt) {
			count_file(data_path, &res);
			c->samples += res.samples;
			c->lost += res.lost;
			c->bytes += res.bytes;
			*samples_out = res.samples;
		}
	}
	fclose(f);
}

/*
 * The share of @path's samples, as `sfprof script` prints them (stitched
 * and unwound), with main among their frames: what the cost bought.
 * NAN if the file cannot be read.
 */
static double complete_pct(const char *path)
{
	char cmd[PATH_MAX * 2 + 64], line[4096];
	long samples = 0, complete = 0;
	bool in_sample = false, seen = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s script -i %s 2> /dev/null", sfprof,
		 path);
	p = popen(cmd, "r");
	if (!p)
		return NAN;
	while (fgets(line, sizeof(line), p)) {
		if (line[0] == '\n') {
			in_sample = false;
		} else if (line[0] != '\t' && line[0] != ' ') {
			samples++;
			in_sample = true;
			seen = false;
		} else if (in_sample && !seen && strstr(line, " main+0x")) {
			complete++;
			seen = true;
		}
	}
	if (pclose(p) != 0 || !samples)
		return NAN;
	return 100.0 * (double)complete / (double)samples;
}

static double median(const double *v, int n)
{
	double tmp[MAX_ROUNDS];
	int m = 0;

	for (int i = 0; i < n; i++)
		if (!isnan(v[i]))
			tmp[m++] = v[i];
	if (!m)
		return NAN;
	qsort(tmp, (size_t)m, sizeof(double), cmp_double);
	return m % 2 ? tmp[m / 2] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2;
}

/*
 * The sign-test confidence interval of a median from @n sorted values:
 * [v[k-1], v[n-k]] for the largest k with P(Binomial(n, 1/2) < k) <= 2.5%;
 * its exact confidence level into *@level.  False when n is too small for
 * any interval at 95% or better.
 */
static bool median_ci(const double *sorted, int n, double *lo, double *hi,
		      double *level)
{
	double p = ldexp(1, -n), cdf = 0, tail = 0;
	int k = 0;

	/* cdf = P(X <= k), p = P(X = k), built up term by term */
	for (int i = 0; i <= n / 2; i++) {
		cdf += p;
		if (cdf > 0.025)
			break;
		k = i + 1;
		tail = cdf;
		p = p * (n - i) / (i + 1);
	}
	if (k == 0)
		return false;
	*lo = sorted[k - 1];
	*hi = sorted[n - k];
	*level = 1 - 2 * tail;
	return true;
}

/*
 * Target: a's slowdown minus b's at most @margin points.  Prints the
 * median of the per-round differences, its interval and the verdict.
 */
static void compare(const struct config *a, const struct config *b,
		    int rounds, double margin, const char *target)
{
	double d[MAX_ROUNDS], lo, hi, level;
	int n = 0;

	if (a->skip || b->skip)
		return;
	for (int r = 0; r < rounds; r++)
		if (!isnan(a->stolen[r]) && !isnan(b->stolen[r]))
			d[n++] = a->stolen[r] - b->stolen[r];
	if (!n)
		return;
	qsort(d, (size_t)n, sizeof(double), cmp_double);
	printf("  %s - %s: %+.2f points (median of %d rounds", a->name,
	       b->name, median(d, n), n);
	if (!median_ci(d, n, &lo, &hi, &level)) {
		printf("; too few for an interval)");
		if (target)
			printf("; target %s: not decided", target);
		printf("\n");
		return;
	}
	printf(", %.1f%% interval %+.2f .. %+.2f)", level * 100, lo, hi);
	if (target)
		printf("; target %s: %s", target,
		       hi <= margin ? "met" :
		       lo > margin ? "NOT met" : "not decided");
	printf("\n");
}

/*
 * Both CPUs busy: two workload processes, one pinned to each CPU, under
 * one profiler that follows them (per-CPU rings), at @hz for BENCH_SECONDS.
 * The profiler now competes with the workloads for a CPU, so what it
 * cannot keep up with shows as lost samples, and its work shows in the
 * tasks' gaps as preemption.  One run per configuration.
 */
static void both_cpus(struct config *cf, int hz)
{
	static const int rows[] = { FP, DWARF, SFRAME, BPF };
	char work[PATH_MAX * 2 + 256];

	snprintf(work, sizeof(work), "sh -c '%s%s --detour %g %s & "
		 "%s%s --detour %g %s; wait'", pin ? "taskset -c 0 " : "",
		 self, seconds, out_path, pin ? "taskset -c 1 " : "", self,
		 seconds, out_path);
	printf("%d Hz, both CPUs busy      stolen from the tasks  samples   "
	       "lost\n", hz);
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct config *c = &cf[rows[k]];
		double run_ns, stolen_ns, cpu_ms, child_ms, sum = 0;
		unsigned long long gaps, loops;
		struct result res = { 0 };
		int n = 0;
		FILE *f;

		if (c->skip)
			continue;
		f = bench_run(c->prefix, work, &child_ms);
		if (!f) {
			printf("  %-20s failed\n", c->name);
			continue;
		}
		while (fscanf(f, "%lf %lf %llu %llu %lf", &run_ns, &stolen_ns,
			      &gaps, &loops, &cpu_ms) == 5 && run_ns > 0) {
			sum += stolen_ns / run_ns * 100;
			n++;
		}
		fclose(f);
		count_file(data_path, &res);
		printf("  %-20s %8.2f%% (%d tasks)  %9llu %6llu\n", c->name,
		       n ? sum / n : NAN, n, (unsigned long long)res.samples,
		       (unsigned long long)res.lost);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static struct config cf[NCFG] = {
		[NONE] = { .key = "none", .name = "none", .fmt = NULL },
		[BARE] = { .key = "bare", .name = "perf (bare event)", .fmt = "perf record -q -e cpu-clock -F %d" },
		[FP] = { .key = "fp", .name = "perf -g fp", .fmt = "perf record -q -e cpu-clock -F %d --call-graph fp" },
		[DWARF] = { .key = "dwarf", .name = "perf -g dwarf", .fmt = "perf record -q -e cpu-clock -F %d --call-graph dwarf" },
		[SFRAME] = { .key = "sframe", .name = "sfprof -g sframe", .fmt = "%s record -q -F %d --call-graph sframe" },
		/* the default mode as it was before deep stacks (issue 37) */
		[SFRAME_NODEEP] = { .key = "nodeep", .name = "sframe no-deep", .fmt = "%s record -q -F %d --call-graph sframe --no-deep-stacks" },
		/* the alternative: perf's largest copy for every sample */
		[SFRAME_BIG] = { .key = "big", .name = "sframe 64K copy", .fmt = "%s record -q -F %d --call-graph sframe --stack-size 65528" },
		/* deep stacks without the BPF copy at the sample (the
		 * program on every sample is what sframe pays for it) */
		[SFRAME_NOBPF] = { .key = "nobpf", .name = "sframe no BPF copy", .fmt = "env SFPROF_DEEP_NO_BPF=1 %s record -q -F %d --call-graph sframe" },
		[BPF] = { .key = "bpf", .name = "sfprof -g bpf-defer", .fmt = "%s record -q -F %d --call-graph bpf-defer" },
	};
	const int freqs[] = { 1000, 4000 };
	const char *env = getenv("BENCH_SECONDS");
	const char *hz_env = getenv("BENCH_HZ");
	int only_hz = hz_env ? atoi(hz_env) : 0;
	const char *only = getenv("BENCH_CONFIGS");
	int rounds = bench_runs(7, MAX_ROUNDS);

	if (argc == 4 && !strcmp(argv[1], "--detour"))
		return run_detour(atof(argv[2]), argv[3]);
	if (env && atof(env) > 0)
		seconds = atof(env);
	if (!bench_start("bench-record-cost"))
		return 0;
	pin = sysconf(_SC_NPROCESSORS_ONLN) >= 2 &&
	      system("taskset -c 1 true 2> /dev/null") == 0;
	cf[BPF].skip = !bench_bpf_defer_ok();
	printf("bench-record-cost: %d rounds of %g s per configuration%s; "
	       "load ", rounds, seconds,
	       pin ? ", task on CPU 1, profiler on CPU 0" : ", unpinned");
	fflush(stdout);
	if (system("cut -d' ' -f1-3 /proc/loadavg"))
		printf("?\n");
	if (cf[BPF].skip)
		printf("  (bpf-defer does not run here: not root, or no BPF "
		       "task_work; its rows are left out)\n");
	if (only) {
		/* the unprofiled run stays: per-sample costs need it */
		for (int i = 1; i < NCFG; i++)
			if (!strstr(only, cf[i].key))
				cf[i].skip = true;
	}

	for (size_t k = 0; k < sizeof(freqs) / sizeof(freqs[0]); k++) {
		int hz = freqs[k];

		if (only_hz > 0 && hz != only_hz)
			continue;

		for (int i = 0; i < NCFG; i++) {
			struct config *c = &cf[i];

			c->samples = c->lost = c->bytes = 0;
			c->complete = NAN;
			if (!c->fmt)
				continue;
			if (i >= SFRAME)
				snprintf(c->prefix, sizeof(c->prefix), c->fmt,
					 sfprof, hz);
			else
				snprintf(c->prefix, sizeof(c->prefix), c->fmt,
					 hz);
		}
		for (int r = 0; r < rounds; r++) {
			uint64_t n[NCFG];

			/* rotate the order, so no row always runs first */
			for (int j = 0; j < NCFG; j++) {
				int i = (j + r) % NCFG;

				cf[i].per_sample_us[r] = NAN;
				if (cf[i].skip)
					continue;
				run_once(&cf[i], r, &n[i]);
				/* what each file's stacks give, once */
				if (r == rounds - 1 && i != NONE && i != BARE)
					cf[i].complete = complete_pct(data_path);
			}
			for (int i = 1; i < NCFG; i++) {
				double extra = cf[i].stolen[r] -
					       cf[NONE].stolen[r];

				/* points * run length = stolen time */
				if (!cf[i].skip && n[i] && !isnan(extra))
					cf[i].per_sample_us[r] = extra / 100 *
						seconds * 1e6 / (double)n[i];
			}
		}
		printf("%d Hz                 stolen from the task   per sample   "
		       "samples   lost  bytes/smp  profiler CPU  to main\n", hz);
		for (int i = 0; i < NCFG; i++) {
			const struct config *c = &cf[i];

			if (c->skip)
				continue;
			printf("  %-20s %8.2f%% ", c->name,
			       median(c->stolen, rounds));
			if (c->fmt)
				printf("%9.1f us %9llu %6llu %10.0f %8.0f ms/s",
				       median(c->per_sample_us, rounds),
				       (unsigned long long)c->samples,
				       (unsigned long long)c->lost,
				       c->samples ? (double)c->bytes /
						    (double)c->samples : 0,
				       median(c->prof_ms_per_s, rounds));
			if (c->fmt && i != BARE)
				printf(" %7.1f%%", c->complete);
			printf("\n");
		}
		compare(&cf[FP], &cf[BARE], rounds, 0, NULL);
		compare(&cf[DWARF], &cf[BARE], rounds, 0, NULL);
		compare(&cf[SFRAME], &cf[DWARF], rounds, 1,
			hz == 4000 ? "no worse than perf dwarf, i.e. "
				     "<= +1 (issue 6, 4 kHz)" : NULL);
		compare(&cf[SFRAME], &cf[FP], rounds, 2,
			hz == 1000 ? "<= +2 (issue 6, 1 kHz)" : NULL);
		compare(&cf[BPF], &cf[FP], rounds, 2,
			hz == 1000 ? "<= +2 (issue 8, 1 kHz)" : NULL);
		compare(&cf[BPF], &cf[SFRAME], rounds, 0, NULL);
		compare(&cf[SFRAME], &cf[SFRAME_NODEEP], rounds, 0, NULL);
		compare(&cf[SFRAME_BIG], &cf[SFRAME], rounds, 0, NULL);
		compare(&cf[SFRAME], &cf[SFRAME_NOBPF], rounds, 0, NULL);
		fflush(stdout);
		if (hz == 4000)
			both_cpus(cf, hz);
	}
	unlink(data_path);
	unlink(out_path);
	return 0;
}
