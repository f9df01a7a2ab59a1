// SPDX-License-Identifier: MIT
/*
 * `sfprof report` / `sfprof script` against `perf report --stdio` /
 * `perf script` on large files, and whether the cost per sample stays flat
 * as files grow (issue 17).
 *
 * Inputs, recorded here with perf unless given:
 *  - a system-wide frame-pointer file: perf record -a -g -F 4000 while two
 *    copies of this binary's workload keep both cores busy (>= 300k
 *    samples: whatever else runs on the machine is in it too, as in any
 *    system-wide recording);
 *  - a dwarf-mode file: perf record --call-graph dwarf,8192 -F 4000 of the
 *    two-thread workload (>= 100k samples).
 * From the fp file two more sizes are derived with sfprof's reader and
 * writer, every side-band record kept: every 10th sample (the same run at
 * 400 Hz) and each sample 10 times (at 40 kHz), so the three sizes show
 * the same workload at 1/10, 1 and 10 times the samples.
 *
 * Each run times sfprof and perf one after the other on the same file
 * (paired), both on the same CPU (pairs take turns over the CPUs: see
 * pin_to()), both printing to /dev/null; reported are the medians over the
 * runs of wall time, CPU time (user + sys) and peak RSS (wait4's
 * ru_maxrss) of each, the median of the per-pair ratios, and µs of CPU
 * per sample.  The machine may be shared: the load average is printed.
 *
 *   bench-scale [--fp FILE] [--dwarf FILE] [--runs N] [--big-runs N]
 *               [--no-big] [--keep DIR]
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/perf.h>

#include "cli-timing.h"
#include "cli-workload.h"

/* perf record with @how until the file holds @want samples */
static long record(const char *how, const char *out, long want, long ms)
{
	char self[PATH_MAX], cmd[4 * PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	bool wide = strstr(how, "-a") != NULL;
	long n = 0;
	int t;

	if (len <= 0)
		return -1;
	self[len] = 0;
	for (t = 0; t < 3 && n < want; t++) {
		/* system-wide: two busy copies of the workload */
		if (wide)
			snprintf(cmd, sizeof(cmd),
				 "perf record -q -e cpu-clock -F 4000 %s -o %s -- "
				 "sh -c '%s --work %ld & %s --work %ld; wait' >/dev/null 2>&1",
				 how, out, self, ms, self, ms);
		else
			snprintf(cmd, sizeof(cmd),
				 "perf record -q -e cpu-clock -F 4000 %s -o %s -- "
				 "%s --work %ld >/dev/null 2>&1",
				 how, out, self, ms);
		if (system(cmd))
			return -1;
		n = count_samples(out);
		if (n > 0 && n < want)
			ms = ms * want / n * 11 / 10;
	}
	return n;
}

/*
 * Copy @in to @out keeping every side-band record and, of the samples,
 * every @keep_every-th one, each written @copies times.  The reader
 * delivers records in time order, so a FINISHED_ROUND every 4096 records
 * written lets perf release them as it would a recording's.  (A round is
 * what perf record drains from its buffers at one wake-up, so it holds
 * as many records at 10 times the rate, not 10 times as many: counting
 * the copies as one made the x10 file's rounds 40k records.)
 */
static long derive(const char *in, const char *out, int keep_every, int copies)
{
	SFP_OPTS(sfp_perf_writer_opts, wo);
	struct sfp_perf_reader *r = NULL;
	struct sfp_perf_writer *w = NULL;
	const struct sfp_perf_event *ev;
	const struct sfp_perf_header_info *h;
	static const uint64_t round[1] = { (uint64_t)8 << 48 |
					   SFP_PERF_RECORD_FINISHED_ROUND };
	long n = 0, seen = 0, since = 0;
	size_t i;
	int err;

	if (sfp_perf_reader__open(in, NULL, &r))
		return -1;
	h = sfp_perf_reader__header(r);
	wo.hostname = h->hostname;
	wo.osrelease = h->osrelease;
	wo.arch = h->arch;
	wo.version = h->version;
	wo.cmdline = h->cmdline;
	wo.nr_cmdline = h->nr_cmdline;
	err = sfp_perf_writer__open(out, &wo, &w);
	for (i = 0; !err && i < sfp_perf_reader__nr_evsels(r); i++) {
		const struct sfp_perf_evsel *e = sfp_perf_reader__evsel(r, i);

		if (sfp_perf_writer__add_evsel(w, &e->attr, e->ids, e->nr_ids,
					       e->name ? e->name : "cpu-clock") < 0)
			err = -EINVAL;
	}
	for (i = 0; !err && i < h->nr_build_ids; i++)
		err = sfp_perf_writer__add_build_id(w, h->build_ids[i].misc,
						    (int32_t)h->build_ids[i].pid,
						    h->build_ids[i].id,
						    h->build_ids[i].size,
						    h->build_ids[i].filename);
	while (!err && sfp_perf_reader__next(r, &ev) > 0) {
		int c = 1;

		if (ev->type == SFP_PERF_RECORD_SAMPLE) {
			if (seen++ % keep_every)
				continue;
			c = copies;
			n += copies;
		}
		since += c;
		while (!err && c--)
			err = sfp_perf_writer__write(w, ev->raw, ev->size);
		if (!err && since >= 4096) {
			since = 0;
			err = sfp_perf_writer__write(w, round, sizeof(round));
		}
	}
	sfp_perf_reader__free(&r);
	if (err) {
		sfp_perf_writer__free(&w);
		return -1;
	}
	if (sfp_perf_writer__close(&w))
		return -1;
	return n;
}

struct run {
	double wall, cpu, rss_mb;
};

/*
 * Run argv with stdout/stderr to /dev/null; -1 failed.  Executed
 * directly: through sh -c each run also timed dash's start, ~1.7 ms of
 * CPU -- a tenth of what sfprof takes on the 1/10 file.  Started with
 * posix_spawn (vfork-like; environ from <unistd.h> under _GNU_SOURCE):
 * a forked child's exec tears down its copy of this process's address
 * space and is charged for it, 0.2-1 ms of CPU per run in this guest
 * (more the more the parent holds), the bench's cost and not the tool's.
 */
static int timed(char *const argv[], struct run *out)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	int64_t t0;
	int st, err;
	pid_t pid;

	if (posix_spawn_file_actions_init(&fa))
		return -1;
	if (posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY,
					     0) ||
	    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY,
					     0)) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	t0 = mono_ns();
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return -1;
	if (wait4(pid, &st, 0, &ru) != pid)
		return -1;
	out->wall = (double)(mono_ns() - t0) / 1e9;
	out->cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		   (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	out->rss_mb = (double)ru.ru_maxrss / 1024.0;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench-scale: '%s %s' failed (%d)\n", argv[0],
			argv[1], st);
		return -1;
	}
	return 0;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAX_RUNS 15

static int pair(const char *label, char *const sfp_cmd[],
		char *const perf_cmd[], long samples, int runs)
{
	double sw[MAX_RUNS], sc[MAX_RUNS], sr[MAX_RUNS];
	double pw[MAX_RUNS], pc[MAX_RUNS], pr[MAX_RUNS];
	double rw[MAX_RUNS], rc[MAX_RUNS], load = load_avg();
	double msw, msc, msr, mpw, mpc, mpr;
	int i;

	for (i = 0; i < runs; i++) {
		struct run s, p;
		int err;

		/* both of a pair on one CPU, the pairs taking turns */
		pin_to(i);
		err = timed(sfp_cmd, &s) || timed(perf_cmd, &p);
		pin_to(-1);
		if (err)
			return 1;
		sw[i] = s.wall;
		sc[i] = s.cpu > 1e-3 ? s.cpu : 1e-3;
		sr[i] = s.rss_mb;
		pw[i] = p.wall;
		pc[i] = p.cpu;
		pr[i] = p.rss_mb;
		rw[i] = p.wall / s.wall;
		rc[i] = p.cpu / sc[i];
	}
	msw = median(sw, runs);
	msc = median(sc, runs);
	msr = median(sr, runs);
	mpw = median(pw, runs);
	mpc = median(pc, runs);
	mpr = median(pr, runs);
	printf("  %-7s %9ld samples  sfprof %7.3f s wall %7.3f s cpu %6.1f MB %6.2f us/sample | "
	       "perf %7.3f s wall %7.3f s cpu %6.1f MB %6.2f us/sample | "
	       "ratio wall %5.1fx cpu %5.1fx rss %.2f (runs %d, load %.1f-%.1f)\n",
	       label, samples, msw, msc, msr, msc * 1e6 / (double)samples,
	       mpw, mpc, mpr, mpc * 1e6 / (double)samples,
	       median(rw, runs), median(rc, runs), msr / mpr, runs, load,
	       load_avg());
	fflush(stdout);
	return 0;
}

static int both(const char *sfprof, const char *label, const char *file,
		long samples, int runs)
{
	char *f = (char *)file, *sp = (char *)sfprof;
	char *sr[] = { sp, "report", "-i", f, NULL };
	char *pr[] = { "perf", "report", "--stdio", "-i", f, NULL };
	char *ss[] = { sp, "script", "-i", f, NULL };
	char *ps[] = { "perf", "script", "-i", f, NULL };
	int rc;

	printf(" %s\n", label);
	rc = pair("report", sr, pr, samples, runs);
	rc |= pair("script", ss, ps, samples, runs);
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench-scale [--fp FILE] [--dwarf FILE] [--runs N] [--big-runs N] [--no-big] [--keep DIR]\n"
		"  records (or takes) a system-wide fp file and a dwarf file, derives 1/10 and x10,\n"
		"  and times sfprof report/script against perf's in paired runs\n");
	return 2;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], sfprof[PATH_MAX], dir[PATH_MAX];
	char fp[2 * PATH_MAX], dw[2 * PATH_MAX], small[2 * PATH_MAX],
		big[2 * PATH_MAX];
	const char *fp_in = NULL, *dw_in = NULL, *keep = NULL;
	long nfp, ndw, nsmall, nbig;
	int runs = 3, big_runs = 1, no_big = 0, i, rc = 0;
	ssize_t len;

	if (argc == 3 && !strcmp(argv[1], "--work"))
		return workload(atol(argv[2]));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-big"))
			no_big = 1;
		else if (i + 1 >= argc || argv[i][0] != '-' ||
			 !strcmp(argv[i], "--help"))
			return usage();
		else if (!strcmp(argv[i], "--fp"))
			fp_in = argv[++i];
		else if (!strcmp(argv[i], "--dwarf"))
			dw_in = argv[++i];
		else if (!strcmp(argv[i], "--runs"))
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--big-runs"))
			big_runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--keep"))
			keep = argv[++i];
		else
			return usage();
	}
	if (runs < 1 || runs > MAX_RUNS || big_runs < 1 || big_runs > MAX_RUNS) {
		fprintf(stderr, "bench-scale: --runs 1..%d\n", MAX_RUNS);
		return 2;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 2;
	self[len] = 0;
	snprintf(sfprof, sizeof(sfprof), "%.*s/../sfprof",
		 (int)(strrchr(self, '/') - self), self);
	if (access(sfprof, X_OK)) {
		fprintf(stderr, "bench-scale: %s not built\n", sfprof);
		return 2;
	}
	if (system("perf --version >/dev/null 2>&1")) {
		printf("bench-scale: SKIP (no perf)\n");
		return 0;
	}
	if (keep)
		snprintf(dir, sizeof(dir), "%s", keep);
	else
		snprintf(dir, sizeof(dir), "/tmp/sfprof-bench-scale.%d", (int)getpid());
	if (mkdir(dir, 0755) && errno != EEXIST)
		return 2;
	snprintf(fp, sizeof(fp), "%s/fp.data", dir);
	snprintf(dw, sizeof(dw), "%s/dwarf.data", dir);
	snprintf(small, sizeof(small), "%s/fp-tenth.data", dir);
	snprintf(big, sizeof(big), "%s/fp-x10.data", dir);
	if (fp_in)
		snprintf(fp, sizeof(fp), "%s", fp_in);
	if (dw_in)
		snprintf(dw, sizeof(dw), "%s", dw_in);
	nfp = fp_in ? count_samples(fp) : record("-a -g", fp, 300000, 40000);
	ndw = dw_in ? count_samples(dw)
		    : record("--call-graph dwarf,8192", dw, 100000, 15000);
	if (nfp <= 0 || ndw <= 0) {
		fprintf(stderr, "bench-scale: recording failed (%ld, %ld samples)\n",
			nfp, ndw);
		rc = 1;
		goto out;
	}
	nsmall = derive(fp, small, 10, 1);
	nbig = no_big ? 0 : derive(fp, big, 1, 10);
	if (nsmall <= 0 || nbig < 0) {
		fprintf(stderr, "bench-scale: deriving the 1/10 and x10 files failed\n");
		rc = 1;
		goto out;
	}
	printf("bench-scale: sfprof vs perf 6.x, median of paired runs, each "
	       "pair on one CPU (sfprof single-threaded but for inflating "
	       "compressed DWARF; load %.2f)\n", load_avg());
	rc |= both(sfprof, "system-wide -a -g fp, 1/10 of the samples", small,
		   nsmall, runs);
	rc |= both(sfprof, "system-wide -a -g fp", fp, nfp, runs);
	if (!no_big)
		rc |= both(sfprof, "system-wide -a -g fp, each sample x10", big,
			   nbig, big_runs);
	rc |= both(sfprof, "--call-graph dwarf,8192", dw, ndw, runs);
out:
	if (!keep) {
		if (!fp_in)
			unlink(fp);
		if (!dw_in)
			unlink(dw);
		unlink(small);
		unlink(big);
		rmdir(dir);
	}
	return rc;
}
