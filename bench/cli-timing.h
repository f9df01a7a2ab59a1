/* SPDX-License-Identifier: MIT */
/*
 * What the CLI-speed benchmarks (bench-report, bench-script) share: the
 * clock, the timing of a shell command (best wall and CPU time of a few
 * runs) and the counting of a file's samples with sfprof's reader.
 * Included by exactly one .c per benchmark binary.
 */
#ifndef SFP_BENCH_CLI_TIMING_H
#define SFP_BENCH_CLI_TIMING_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <sfprof/perf.h>

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double children_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/*
 * Best wall and CPU (user + sys of the children) seconds of @runs runs of
 * the shell command @cmd; -1 if it failed, saying so on stderr.  On a
 * loaded machine the wall time is mostly waiting for a CPU; the CPU time
 * is the steadier figure.
 */
static __attribute__((unused)) double best_of(const char *cmd, int runs,
					     double *best_cpu)
{
	double best = -1;

	*best_cpu = -1;
	for (int i = 0; i < runs; i++) {
		double c0 = children_cpu_s(), t, c;
		int64_t t0 = mono_ns();
		int rc = system(cmd);

		if (rc != 0) {
			fprintf(stderr, "'%s' failed (%d)\n", cmd, rc);
			return -1;
		}
		t = (double)(mono_ns() - t0) / 1e9;
		c = children_cpu_s() - c0;
		if (best < 0 || t < best)
			best = t;
		if (*best_cpu < 0 || c < *best_cpu)
			*best_cpu = c;
	}
	return best;
}

/*
 * Run what this process starts next on one CPU: the i-th (modulo their
 * number) of those it was allowed at its first call; i < 0 gives it all
 * of them back.  This guest's two vCPUs are not always equally fast:
 * at times one ran a plain loop 1.4-3x slower than the other, for
 * minutes (bench/RESULTS.md, tenth round), so two unpinned commands of a
 * pair could each land on either and their ratio swung with the
 * placement.  A pair on one CPU meets the same machine; pairs take turns
 * over the CPUs.  Errors leave the affinity as it was.
 */
static __attribute__((unused)) void pin_to(int i)
{
	static cpu_set_t all;
	static int n = -1;
	cpu_set_t one;
	int c, k = 0;

	if (n < 0) {
		n = sched_getaffinity(0, sizeof(all), &all) ? 0 :
							      CPU_COUNT(&all);
	}
	if (!n)
		return;
	if (i < 0) {
		(void)sched_setaffinity(0, sizeof(all), &all);
		return;
	}
	i %= n;
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all) || k++ != i)
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		(void)sched_setaffinity(0, sizeof(one), &one);
		return;
	}
}

/* The samples in a perf.data file, read with sfprof's reader; -1 if it
 * cannot be read. */
static __attribute__((unused)) long count_samples(const char *path)
{
	struct sfp_perf_reader *r = NULL;
	const struct sfp_perf_event *ev;
	long n = 0;

	if (sfp_perf_reader__open(path, NULL, &r))
		return -1;
	while (sfp_perf_reader__next(r, &ev) > 0)
		n += ev->type == SFP_PERF_RECORD_SAMPLE;
	sfp_perf_reader__free(&r);
	return n;
}

/* The 1-minute load average, -1 if unknown. */
static double load_avg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

#endif /* SFP_BENCH_CLI_TIMING_H */
