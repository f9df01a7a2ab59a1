/* SPDX-License-Identifier: MIT */
/*
 * What the recording benchmarks (bench-record, bench-record-bpf) share:
 * the workload they profile (qsort with a callback, so stacks go program
 * -> libc -> program; run as `BENCH --work N OUT`, so `make bench` needs
 * nothing from the test build) and the counting of a recorded file with
 * sfprof's reader.  Included by exactly one .c per benchmark binary.
 */
#ifndef SFP_BENCH_RECORD_WORKLOAD_H
#define SFP_BENCH_RECORD_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <sfprof/perf.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static NOINLINE int cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;

	sink += x ^ y;
	return x < y ? -1 : x > y;
}

static NOINLINE void sort_once(unsigned long *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = (i * 2654435761u) % 1000003;
	qsort(v, n, sizeof(*v), cmp);
}

static NOINLINE void work(long iters)
{
	static unsigned long v[4096];
	long i;

	for (i = 0; i < iters; i++)
		sort_once(v, 4096);
}

/* The workload: fixed work, then its own CPU and wall time to a file. */
static int run_work(long iters, const char *out)
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

struct result {
	double cpu_ms, wall_ms;
	uint64_t samples, lost, deferred, bytes;
	bool ok;
};

static void count_file(const char *path, struct result *r)
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#endif /* SFP_BENCH_RECORD_WORKLOAD_H */
