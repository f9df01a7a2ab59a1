// SPDX-License-Identifier: MIT
/*
 * Recording overhead: the same workload (qsort with a callback, so stacks
 * go program -> libc -> program) run bare, under perf record with the bare
 * cpu-clock event, perf --call-graph fp and dwarf (plain and with -z), and
 * sfprof record (deferred and inline forms, zstd-compressed as by default
 * and plain), at 4 kHz and 1 kHz.
 *
 * Slowdown is the workload's own CPU time (user + sys from getrusage in
 * the workload: the sampling interrupts, the kernel's stack copies and the
 * ring writes are charged to it) relative to the bare run, median of
 * BENCH_RUNS runs (default 5, round robin over the configurations).
 * Bytes per sample is the file size over the samples in it; samples and
 * lost samples (summed over all runs) are counted by reading each file
 * with sfprof's perf.data reader (perf's files and ours alike).
 *
 * The workload is this binary (--work N), so `make bench` needs nothing
 * from the test build.  The machine is shared: expect noise, compare the
 * rows of one run.  The slowdown targets are judged by bench-record-cost,
 * which measures the time taken from the task directly; the spread of
 * these run times is larger than the targets' margins.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/perf.h>

#include "record-workload.h"

static void row(const char *name, const struct result *r,
		const struct result *base, const struct result *bare)
{
	if (!r->ok) {
		printf("  %-22s failed\n", name);
		return;
	}
	printf("  %-22s %8.0f ms %+7.1f%% %+7.1f%%", name, r->cpu_ms,
	       (r->cpu_ms / base->cpu_ms - 1) * 100,
	       bare && bare->ok ? (r->cpu_ms / bare->cpu_ms - 1) * 100 : 0.0);
	if (r->samples)
		printf(" %8llu %6llu %9.0f",
		       (unsigned long long)r->samples,
		       (unsigned long long)r->lost,
		       (double)r->bytes / (double)r->samples);
	printf("\n");
}

static double bps(const struct result *r)
{
	return r->ok && r->samples ? (double)r->bytes / (double)r->samples : 0;
}

/* The targets' ratios for one sfprof row: slowdown against perf dwarf and
 * fp, bytes per sample against each perf file, plain and -z. */
static void compare(const struct result *s, const char *name,
		    const struct result *none, const struct result *fp,
		    const struct result *fpz, const struct result *dw,
		    const struct result *dwz)
{
	double b = bps(s);

	if (!b || !bps(fp) || !bps(fpz) || !bps(dw) || !bps(dwz))
		return;
	printf("  %s: slowdown %+.1f (perf dwarf %+.1f, fp %+.1f); "
	       "bytes/sample %.2f%% of dwarf's, %.1f%% of dwarf -z's, "
	       "%.2fx fp's, %.2fx fp -z's\n", name,
	       (s->cpu_ms / none->cpu_ms - 1) * 100,
	       (dw->cpu_ms / none->cpu_ms - 1) * 100,
	       (fp->cpu_ms / none->cpu_ms - 1) * 100,
	       b / bps(dw) * 100, b / bps(dwz) * 100, b / bps(fp),
	       b / bps(fpz));
}

int main(int argc, char **argv)
{
	int runs = bench_runs(5, 16);
	const int freqs[] = { 4000, 1000 };
	long iters;
	size_t k;

	if (argc == 4 && !strcmp(argv[1], "--work"))
		return run_work(atol(argv[2]), argv[3]);
	if (!bench_start("bench-record"))
		return 0;

	iters = work_iters_for(1000);
	printf("bench-record: %ld sorts (~1 s CPU) per run, median of %d runs; "
	       "load ", iters, runs);
	fflush(stdout);
	if (system("cut -d' ' -f1-3 /proc/loadavg"))
		printf("?\n");

	for (k = 0; k < sizeof(freqs) / sizeof(freqs[0]); k++) {
		/* perf as users run it (plain) and with -z (zstd level 1,
		 * perf's default), sfprof compressed (its default) and
		 * plain: the fair size comparisons are plain vs plain and
		 * compressed vs compressed; both are printed. */
		static const struct {
			const char *name, *fmt;
		} cfgs[] = {
			{ "none", NULL },
			{ "perf cpu-clock (bare)", "perf record -q -e cpu-clock -F %d" },
			{ "perf -g fp", "perf record -q -e cpu-clock -F %d --call-graph fp" },
			{ "perf -g fp -z", "perf record -q -z -e cpu-clock -F %d --call-graph fp" },
			{ "perf -g dwarf", "perf record -q -e cpu-clock -F %d --call-graph dwarf" },
			{ "perf -g dwarf -z", "perf record -q -z -e cpu-clock -F %d --call-graph dwarf" },
			{ "sfprof (deferred)", "%s record -q -F %d" },
			{ "sfprof --no-compress", "%s record -q --no-compress -F %d" },
			{ "sfprof --inline", "%s record -q --inline -F %d" },
			{ "sfprof --inline plain", "%s record -q --inline --no-compress -F %d" },
		};
		enum { NONE, BARE, FP, FPZ, DWARF, DWARFZ, SFP, SFP_PLAIN,
		       INL, INL_PLAIN, NCFG };
		static struct work_config cf[NCFG];
		int hz = freqs[k], run;
		size_t i;

		memset(cf, 0, sizeof(cf));
		for (i = 0; i < NCFG; i++) {
			cf[i].name = cfgs[i].name;
			if (!cfgs[i].fmt)
				continue;
			if (i >= SFP)
				snprintf(cf[i].prefix, sizeof(cf[i].prefix),
					 cfgs[i].fmt, sfprof, hz);
			else
				snprintf(cf[i].prefix, sizeof(cf[i].prefix),
					 cfgs[i].fmt, hz);
		}
		/* Round robin, so that load drifts hit every row alike. */
		for (run = 0; run < runs; run++)
			for (i = 0; i < NCFG; i++)
				work_run_once(&cf[i], iters);
		for (i = 0; i < NCFG; i++)
			work_finish(&cf[i]);
		printf("%d Hz            workload CPU  vs none  vs bare  samples   lost bytes/smp\n",
		       hz);
		if (!cf[NONE].r.ok) {
			printf("  the bare workload failed\n");
			continue;
		}
		row(cf[NONE].name, &cf[NONE].r, &cf[NONE].r, NULL);
		for (i = 1; i < NCFG; i++)
			row(cf[i].name, &cf[i].r, &cf[NONE].r, &cf[BARE].r);
		compare(&cf[SFP].r, "sfprof (deferred, zstd)", &cf[NONE].r,
			&cf[FP].r, &cf[FPZ].r, &cf[DWARF].r, &cf[DWARFZ].r);
		compare(&cf[SFP_PLAIN].r, "sfprof (deferred, plain)", &cf[NONE].r,
			&cf[FP].r, &cf[FPZ].r, &cf[DWARF].r, &cf[DWARFZ].r);
		compare(&cf[INL].r, "sfprof --inline (zstd)", &cf[NONE].r,
			&cf[FP].r, &cf[FPZ].r, &cf[DWARF].r, &cf[DWARFZ].r);
		if (cf[SFP].r.ok)
			printf("  %llu deferred records for %llu samples\n",
			       (unsigned long long)cf[SFP].r.deferred,
			       (unsigned long long)cf[SFP].r.samples);
	}
	unlink(data_path);
	unlink(out_path);
	return 0;
}
