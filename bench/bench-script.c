// SPDX-License-Identifier: MIT
/*
 * `sfprof script` against `perf script` on the same perf dwarf-mode file
 * (perf record --call-graph dwarf) of at least 10k samples, recorded here
 * from this binary's own workload (two threads, recursion, qsort
 * callbacks; built without frame pointers).  Both print to /dev/null; the
 * best wall time of a few runs each is compared, pair by pair: both with
 * --no-inline, and both as they come (perf script's and sfprof script's
 * "(inlined)" lines, from the debug files of libc and ld.so when those
 * are installed).  --sfprof PATH times another build (a before/after
 * comparison in one run: --sfprof given twice times both).
 *
 *   bench-script [--samples N] [--stack BYTES] [--runs N] [--keep FILE]
 *                [--sfprof PATH]...
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/perf.h>

#include "cli-timing.h"
#include "cli-workload.h"

int main(int argc, char **argv)
{
	char self[PATH_MAX], own[PATH_MAX], data[PATH_MAX], cmd[3 * PATH_MAX];
	long want = 10000, stack = 8192, ms = 4000, n = 0;
	const char *keep = NULL, *sfprof[4] = { NULL };
	double t_sfp, t_sfp_inl, t_perf, t_perf_inl;
	double c_sfp, c_sfp_inl, c_perf, c_perf_inl;
	int runs = 3, i, tries, nsfp = 0;
	ssize_t len;

	if (argc == 3 && !strcmp(argv[1], "--work"))
		return workload(atol(argv[2]));
	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--samples"))
			want = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--stack"))
			stack = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--runs"))
			runs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--keep"))
			keep = argv[i + 1];
		else if (!strcmp(argv[i], "--sfprof") && nsfp < 4)
			sfprof[nsfp++] = argv[i + 1];
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 2;
	self[len] = 0;
	snprintf(own, sizeof(own), "%.*s/../sfprof",
		 (int)(strrchr(self, '/') - self), self);
	if (!nsfp)
		sfprof[nsfp++] = own;
	for (i = 0; i < nsfp; i++) {
		if (access(sfprof[i], X_OK)) {
			fprintf(stderr, "bench-script: %s not built\n", sfprof[i]);
			return 2;
		}
	}
	snprintf(data, sizeof(data), "%s", keep ? keep : "/tmp/sfprof-bench-script.data");
	if (system("perf --version >/dev/null 2>&1")) {
		printf("bench-script: SKIP (no perf)\n");
		return 0;
	}
	/* record until the file has enough samples (the machine is shared:
	 * the workload gets what CPU it gets) */
	for (tries = 0; tries < 4 && n < want; tries++) {
		snprintf(cmd, sizeof(cmd),
			 "perf record -q -e cpu-clock -F 4000 --call-graph dwarf,%ld "
			 "-o %s -- %s --work %ld >/dev/null 2>&1",
			 stack, data, self, ms);
		if (system(cmd)) {
			fprintf(stderr, "bench-script: perf record failed\n");
			return 1;
		}
		n = count_samples(data);
		if (n < want && n > 0)
			ms = ms * want / n * 11 / 10;
	}
	if (n < want) {
		fprintf(stderr, "bench-script: only %ld samples recorded\n", n);
		return 1;
	}
	printf("bench-script: dwarf-mode file, %ld samples, stack %ld bytes "
	       "(load %.2f)\n", n, stack, load_avg());
	snprintf(cmd, sizeof(cmd), "perf script --no-inline -i %s >/dev/null 2>&1", data);
	t_perf = best_of(cmd, runs, &c_perf);
	snprintf(cmd, sizeof(cmd), "perf script -i %s >/dev/null 2>&1", data);
	t_perf_inl = best_of(cmd, runs, &c_perf_inl);
	if (t_perf <= 0 || t_perf_inl <= 0)
		return 1;
	printf("  %-26s %7.3f s wall  %7.3f s cpu (best of %d)\n",
	       "perf script --no-inline", t_perf, c_perf, runs);
	printf("  %-26s %7.3f s wall  %7.3f s cpu (best of %d)\n",
	       "perf script", t_perf_inl, c_perf_inl, runs);
	for (i = 0; i < nsfp; i++) {
		/* (an older build does not know --no-inline: it printed no
		 * inlined lines anyway) */
		bool has_opt;

		snprintf(cmd, sizeof(cmd),
			 "%s script --help 2>&1 | grep -q -e --no-inline",
			 sfprof[i]);
		has_opt = !system(cmd);
		snprintf(cmd, sizeof(cmd), "%s script%s -i %s >/dev/null",
			 sfprof[i], has_opt ? " --no-inline" : "", data);
		t_sfp = best_of(cmd, runs, &c_sfp);
		snprintf(cmd, sizeof(cmd), "%s script -i %s >/dev/null",
			 sfprof[i], data);
		t_sfp_inl = best_of(cmd, runs, &c_sfp_inl);
		if (t_sfp <= 0 || t_sfp_inl <= 0)
			return 1;
		if (c_sfp <= 0)
			c_sfp = 1e-3;
		if (c_sfp_inl <= 0)
			c_sfp_inl = 1e-3;
		printf("  %s\n", sfprof[i]);
		printf("  %-26s %7.3f s wall  %7.3f s cpu (best of %d)  perf/sfprof wall %.1fx, cpu %.1fx\n",
		       "sfprof script --no-inline", t_sfp, c_sfp, runs,
		       t_perf / t_sfp, c_perf / c_sfp);
		printf("  %-26s %7.3f s wall  %7.3f s cpu (best of %d)  perf/sfprof wall %.1fx, cpu %.1fx\n",
		       "sfprof script", t_sfp_inl, c_sfp_inl, runs,
		       t_perf_inl / t_sfp_inl, c_perf_inl / c_sfp_inl);
	}
	if (!keep)
		unlink(data);
	return 0;
}
