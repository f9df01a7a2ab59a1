// SPDX-License-Identifier: MIT
/*
 * `sfprof report` against `perf report --stdio` on the same perf.data
 * files, recorded here from this binary's own workload (a hot leaf under
 * a fixed call path, a recursion and qsort callbacks through libc; built
 * without frame pointers): one frame-pointer file (perf record -g) and one
 * dwarf-mode file (--call-graph dwarf), each of about N samples.  Both
 * tools print their default view (children, call graphs) to /dev/null,
 * inlined functions included (both read DWARF for the frames of dwarf
 * samples only), and again with --no-inline, which skips those DWARF
 * lookups.  Reported: best wall and CPU time of a few runs and the ratios
 * perf / sfprof (of the same view).
 *
 *   bench-report [--samples N] [--runs N]
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/perf.h>

#include "cli-timing.h"

static volatile uint64_t sink;

__attribute__((noinline)) static void leaf(unsigned int n)
{
	uint64_t x = sink;
	unsigned int i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	sink = x;
}

__attribute__((noinline)) static void deep(int d)
{
	if (d > 0) {
		deep(d - 1);
		sink++;
		return;
	}
	leaf(20000);
}

__attribute__((noinline)) static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	leaf(4);
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void mixed(int64_t until)
{
	uint32_t v[256];
	unsigned int i;

	while (mono_ns() < until) {
		leaf(100000);
		deep(25);
		for (i = 0; i < 256; i++)
			v[i] = (i * 2654435761u) >> 5;
		qsort(v, 256, sizeof(v[0]), by_value);
		sink += v[3];
	}
}

/* record until the file holds `want` samples (the CPU we get varies) */
static long record(const char *self, const char *mode, const char *out,
		   long want)
{
	char cmd[3 * PATH_MAX];
	long ms = want / 4 + 200, n = 0;
	int t;

	for (t = 0; t < 4 && n < want; t++) {
		snprintf(cmd, sizeof(cmd),
			 "perf record -q -e cpu-clock -F 4000 %s -o %s -- %s --work %ld >/dev/null 2>&1",
			 mode, out, self, ms);
		if (system(cmd))
			return -1;
		n = count_samples(out);
		if (n > 0 && n < want)
			ms = ms * want / n * 11 / 10;
	}
	return n;
}

static int compare(const char *sfprof, const char *label, const char *data,
		   long n, int runs)
{
	char cmd[3 * PATH_MAX];
	double ts, tsn, tp, tpn, cs, csn, cp, cpn;

	snprintf(cmd, sizeof(cmd), "%s report -i %s >/dev/null", sfprof, data);
	ts = best_of(cmd, runs, &cs);
	snprintf(cmd, sizeof(cmd), "%s report --no-inline -i %s >/dev/null",
		 sfprof, data);
	tsn = best_of(cmd, runs, &csn);
	snprintf(cmd, sizeof(cmd), "perf report --stdio -i %s >/dev/null 2>&1", data);
	tp = best_of(cmd, runs, &cp);
	snprintf(cmd, sizeof(cmd), "perf report --stdio --no-inline -i %s >/dev/null 2>&1",
		 data);
	tpn = best_of(cmd, runs, &cpn);
	if (ts <= 0 || tsn <= 0 || tp <= 0 || tpn <= 0)
		return 1;
	if (cs <= 0)
		cs = 1e-3;
	if (csn <= 0)
		csn = 1e-3;
	printf("  %s file, %ld samples:\n", label, n);
	printf("    %-32s %7.3f s wall %7.3f s cpu\n", "sfprof report", ts, cs);
	printf("    %-32s %7.3f s wall %7.3f s cpu\n", "sfprof report --no-inline",
	       tsn, csn);
	printf("    %-32s %7.3f s wall %7.3f s cpu  ratio wall %.1fx cpu %.1fx\n",
	       "perf report --stdio", tp, cp, tp / ts, cp / cs);
	printf("    %-32s %7.3f s wall %7.3f s cpu  ratio wall %.1fx cpu %.1fx\n",
	       "perf report --stdio --no-inline", tpn, cpn, tpn / tsn,
	       cpn / csn);
	return 0;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], sfprof[PATH_MAX], fp[PATH_MAX], dw[PATH_MAX];
	long want = 10000, nfp, ndw;
	int runs = 3, i, rc;
	ssize_t len;

	if (argc == 3 && !strcmp(argv[1], "--work")) {
		mixed(mono_ns() + atol(argv[2]) * 1000000);
		return 0;
	}
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--samples"))
			want = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--runs"))
			runs = atoi(argv[i + 1]);
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 2;
	self[len] = 0;
	snprintf(sfprof, sizeof(sfprof), "%.*s/../sfprof",
		 (int)(strrchr(self, '/') - self), self);
	if (access(sfprof, X_OK)) {
		fprintf(stderr, "bench-report: %s not built\n", sfprof);
		return 2;
	}
	if (system("perf --version >/dev/null 2>&1")) {
		printf("bench-report: SKIP (no perf)\n");
		return 0;
	}
	snprintf(fp, sizeof(fp), "/tmp/sfprof-bench-report-fp.%d.data", (int)getpid());
	snprintf(dw, sizeof(dw), "/tmp/sfprof-bench-report-dwarf.%d.data", (int)getpid());
	nfp = record(self, "-g", fp, want);
	ndw = record(self, "--call-graph dwarf,8192", dw, want);
	if (nfp < want / 2 || ndw < want / 2) {
		fprintf(stderr, "bench-report: recording failed (%ld, %ld samples)\n",
			nfp, ndw);
		unlink(fp);
		unlink(dw);
		return 1;
	}
	printf("bench-report: sfprof report vs perf report --stdio, default views "
	       "(load %.2f)\n", load_avg());
	rc = compare(sfprof, "frame-pointer (-g)", fp, nfp, runs) ||
	     compare(sfprof, "dwarf-mode", dw, ndw, runs);
	unlink(fp);
	unlink(dw);
	return rc;
}
