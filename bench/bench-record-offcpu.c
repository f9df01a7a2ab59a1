// SPDX-License-Identifier: MIT
/*
 * What off-CPU recording costs a switch-heavy program: two threads of this
 * binary ping-pong a byte over two pipes (BENCH_TRIPS round trips, default
 * 100,000: every trip blocks and wakes each thread once), timed by the
 * workload itself, under
 *
 *   - nothing;
 *   - sfprof record --off-cpu --off-cpu-thresh 0 (every block a sample);
 *   - the same with --stack-size 2048 (the workload's stacks are shallow:
 *     the kernel copies 2 KiB per switch instead of 16);
 *   - sfprof record --call-graph bpf-defer --off-cpu --off-cpu-thresh 0:
 *     the BPF path (a program on sched_switch, no stack copies, one user
 *     unwind per kernel entry by BPF task_work; docs/record-bpf.md), run
 *     when bpf-defer loads here;
 *   - bpftrace running the classic offcputime program (sched_switch,
 *     per-tid time stamps, kstack and ustack, blocked time summed per
 *     stack in a map), filtered to this workload: the peer issue 16
 *     names, which takes the same two stacks as sfprof;
 *   - the same without kstack (user stacks only, as the tests' program:
 *     less work than sfprof does, shown for reference);
 *   - sfprof record --call-graph bpf-defer --off-cpu at its default
 *     threshold: blocks shorter than 500 ms summed per stack, as
 *     bpftrace sums every block (the same information as bpftrace's
 *     output and more: the longer blocks stay samples of their own).
 *
 * BENCH_RUNS rounds (default 5), every configuration once per round in a
 * rotated order; the slowdown is the median of the per-round ratios to the
 * bare run of the same round, so that load that changes between rounds
 * cancels: of the workload's wall time, and of its CPU time (its two
 * threads' user + sys: a program on sched_switch runs in the task that
 * switches out, so this holds the cost of every block, not that of a
 * switch-in from the idle task; and not the wake-up latencies that make
 * a ping-pong's wall time swing).  Then bpf-defer
 * against bpftrace (kstack+ustack) round by round: the medians of the
 * differences of their slowdowns, and in how many rounds bpf-defer's was
 * the smaller.  Bytes per off-CPU event: sfprof's file size over the
 * blocks its summary counts; bpftrace's printed output over its own count.
 *
 * BENCH_PIN=CPU runs both threads of the workload on that one CPU: every
 * trip is then two direct switches on it (no idle CPU, no wake-up IPI, no
 * choice of where the woken thread runs), so the wall time stops swinging
 * with the scheduler's placement and holds every switch's whole cost --
 * the switch-out and the switch-in halves of each program -- while the
 * profilers' user space runs on the other CPU.  BENCH_CONFS=0,4,6 runs only
 * those rows (the order of the table; row 0, the bare run, always runs).
 *
 * Usage: bench-record-offcpu [pingpong TRIPS]   (the second form is the
 * workload, run by the first)
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NCONF 7
#define MAX_RUNS 51

static int ping[2], pong[2];
static long trips;

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *ponger(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < trips; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			exit(3);
	return NULL;
}

static int pingpong(long n)
{
	struct rusage ru;
	const char *e;
	pthread_t t;
	int64_t t0;
	char c = 'x';

	trips = n;
	if ((e = getenv("BENCH_PIN")) && *e) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(e), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "pingpong: BENCH_PIN=%s: %s\n", e,
				strerror(errno));
			return 2;
		}	/* the thread inherits it */
	}
	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, ponger, NULL))
		return 2;
	t0 = mono_ns();
	for (long i = 0; i < n; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 3;
	pthread_join(t, NULL);
	printf("ns=%lld\n", (long long)(mono_ns() - t0));
	/* both threads' CPU (the kernel's work in their switches with it) */
	if (!getrusage(RUSAGE_SELF, &ru))
		printf("cpu=%lld\n",
		       (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
				       1000000000LL +
			       (long long)(ru.ru_utime.tv_usec +
					   ru.ru_stime.tv_usec) * 1000);
	return 0;
}

struct conf {
	const char *name;
	double ratio[MAX_RUNS];
	double cpu_ratio[MAX_RUNS];
	double ns[MAX_RUNS];
	int nr;
	unsigned long long bytes, events;
	int failed;
};

static char self[PATH_MAX], sfprof[PATH_MAX], tmpdir[PATH_MAX];
/* the workload's CPU ns in the last run_cmd(), -1: not known */
static double last_cpu;

/* Run cmd (its stdout into a file), return the workload's ns, -1 failed. */
static double run_cmd(const char *cmd)
{
	char full[PATH_MAX * 9], path[PATH_MAX + 16], line[128];
	double ns = -1;
	FILE *f;

	last_cpu = -1;
	snprintf(path, sizeof(path), "%s/out", tmpdir);
	snprintf(full, sizeof(full), "%s > %s", cmd, path);
	if (system(full) != 0)
		return -1;
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "ns=", 3))
			ns = atof(line + 3);
		else if (!strncmp(line, "cpu=", 4))
			last_cpu = atof(line + 4);
	if (f)
		fclose(f);
	return ns;
}

static unsigned long long file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) ? 0 : (unsigned long long)st.st_size;
}

/* "off-cpu: N blocks" from sfprof's summary. */
static unsigned long long summary_blocks(const char *p)
{
	char line[1024];
	unsigned long long n = 0;
	FILE *f = fopen(p, "r");

	while (f && fgets(line, sizeof(line), f)) {
		const char *s = strstr(line, "  off-cpu: ");

		if (s && strstr(s, " blocks ("))
			n = strtoull(s + 11, NULL, 10);
	}
	if (f)
		fclose(f);
	return n;
}

static const char bt_prog_u[] =
	"BEGIN { printf(\"probes attached\\n\"); }\n"
	"tracepoint:sched:sched_switch\n"
	"/ curtask->group_leader->comm == \"bench-record-of\" /\n"
	"{ if (args->prev_state & 0xcf) { @start[args->prev_pid] = nsecs;\n"
	"  @ust[args->prev_pid] = ustack(perf); @n = count(); } }\n"
	"tracepoint:sched:sched_switch\n"
	"{ $t = @start[args->next_pid]; if ($t) {\n"
	"  @stacks[args->next_pid, @ust[args->next_pid]] = sum(nsecs - $t);\n"
	"  delete(@start[args->next_pid]); } }\n"
	"END { clear(@start); clear(@ust); }\n";

/* The same with the kernel stack of the block, as sfprof takes it. */
static const char bt_prog_ku[] =
	"BEGIN { printf(\"probes attached\\n\"); }\n"
	"tracepoint:sched:sched_switch\n"
	"/ curtask->group_leader->comm == \"bench-record-of\" /\n"
	"{ if (args->prev_state & 0xcf) { @start[args->prev_pid] = nsecs;\n"
	"  @kst[args->prev_pid] = kstack(perf);\n"
	"  @ust[args->prev_pid] = ustack(perf); @n = count(); } }\n"
	"tracepoint:sched:sched_switch\n"
	"{ $t = @start[args->next_pid]; if ($t) {\n"
	"  @stacks[args->next_pid, @kst[args->next_pid],\n"
	"          @ust[args->next_pid]] = sum(nsecs - $t);\n"
	"  delete(@start[args->next_pid]); } }\n"
	"END { clear(@start); clear(@kst); clear(@ust); }\n";

/* bpftrace around one bare run: the workload's ns, -1 failed. */
static double run_bpftrace(const char *work, const char *bt_prog,
			   struct conf *c)
{
	char prog[PATH_MAX + 16], out[PATH_MAX + 16], line[256];
	pid_t pid;
	double ns = -1;
	int i, st;
	FILE *f;

	snprintf(prog, sizeof(prog), "%s/off.bt", tmpdir);
	snprintf(out, sizeof(out), "%s/bt.out", tmpdir);
	f = fopen(prog, "w");
	if (!f || fputs(bt_prog, f) < 0 || fclose(f))
		return -1;
	pid = fork();
	if (pid == 0) {
		if (!freopen(out, "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execlp("bpftrace", "bpftrace", prog, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	for (i = 0; i < 600; i++) {	/* BEGIN: every probe attached */
		char buf[64] = "";

		f = fopen(out, "r");
		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
		}
		if (strstr(buf, "probes attached") ||
		    waitpid(pid, &st, WNOHANG) == pid)
			break;
		usleep(100000);
	}
	ns = run_cmd(work);
	/* 0.17 can miss a SIGINT that comes while it is busy: repeat */
	for (i = 0; i < 150 && waitpid(pid, &st, WNOHANG) == 0; i++) {
		if (i % 10 == 0)
			kill(pid, SIGINT);
		usleep(200000);
	}
	if (i == 150) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return -1;
	}
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "@n: ", 4))
			c->events += strtoull(line + 4, NULL, 10);
	if (f)
		fclose(f);
	c->bytes += file_size(out);
	return ns;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n ? (n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

int main(int argc, char **argv)
{
	struct conf cf[NCONF] = {
		{ .name = "none" },
		{ .name = "sfprof --off-cpu-thresh 0" },
		{ .name = "sfprof ... --stack-size 2048" },
		{ .name = "bpftrace, ustack only" },
		{ .name = "sfprof bpf-defer" },
		{ .name = "sfprof bpf-defer, default thresh" },
		{ .name = "bpftrace offcputime k+ustack" },
	};
	double diff[2][MAX_RUNS], cdiff[2][MAX_RUNS];
	int nd[2] = { 0, 0 }, below[2] = { 0, 0 }, cbelow[2] = { 0, 0 };
	char work[PATH_MAX * 2], cmd[PATH_MAX * 8], data[PATH_MAX + 16],
		err[PATH_MAX + 16], *slash;
	const char *e, *pin;
	long n = 100000;
	unsigned int confs = (1u << NCONF) - 1;
	int runs = 5, r, k, have_bt, have_bpf;
	ssize_t len;

	if (argc > 2 && !strcmp(argv[1], "pingpong"))
		return pingpong(atol(argv[2]));
	if ((e = getenv("BENCH_RUNS")) && atoi(e) > 0)
		runs = atoi(e) > MAX_RUNS ? MAX_RUNS : atoi(e);
	if ((e = getenv("BENCH_TRIPS")) && atol(e) > 0)
		n = atol(e);
	if ((pin = getenv("BENCH_PIN")) && *pin) {
		char *end;
		long cpu = strtol(pin, &end, 10);

		/* checked here, where a typo can be said; pingpong pins */
		if (*end || cpu < 0 || cpu >= CPU_SETSIZE) {
			fprintf(stderr, "BENCH_PIN: want a CPU number, not '%s'\n",
				pin);
			return 2;
		}
	} else {
		pin = NULL;
	}
	if ((e = getenv("BENCH_CONFS")) && *e) {
		char *end;

		confs = 1;
		for (;;) {
			long i = strtol(e, &end, 10);

			if (end == e || i < 0 || i >= NCONF) {
				fprintf(stderr, "BENCH_CONFS: want row numbers "
					"0-%d, comma-separated\n", NCONF - 1);
				return 2;
			}
			confs |= 1u << i;
			if (*end != ',')
				break;
			e = end + 1;
		}
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 2;
	self[len] = 0;
	snprintf(sfprof, sizeof(sfprof), "%s", self);
	slash = strrchr(sfprof, '/');
	if (!slash || (size_t)(slash - sfprof) + 16 > sizeof(sfprof))
		return 2;
	strcpy(slash, "/../sfprof");
	if (access(sfprof, X_OK) || geteuid() != 0 ||
	    access("/sys/kernel/tracing/events/sched/sched_switch", F_OK)) {
		printf("  skipped: needs root, %s and tracefs\n", sfprof);
		return 0;
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bench-offcpu.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 2;
	have_bt = system("command -v bpftrace > /dev/null") == 0;
	/* the BPF path where it loads here (else record falls back to the
	 * tracepoint, which the other rows measure already) */
	snprintf(cmd, sizeof(cmd), "%s record -q --call-graph bpf-defer -o "
		 "%s/probe.data -- true 2>&1 | grep -q 'falling back'",
		 sfprof, tmpdir);
	have_bpf = system(cmd) != 0;
	snprintf(work, sizeof(work), "%s pingpong %ld", self, n);
	snprintf(data, sizeof(data), "%s/off.data", tmpdir);
	snprintf(err, sizeof(err), "%s/err", tmpdir);
	printf("pipe ping-pong, %ld round trips, %d rounds%s%s; load ", n, runs,
	       pin ? ", both threads on CPU " : "", pin ? pin : "");
	fflush(stdout);
	if (system("cut -d' ' -f1-3 /proc/loadavg"))
		printf("?\n");
	for (r = 0; r < runs; r++) {
		double ns[NCONF], cpu[NCONF];

		for (k = 0; k < NCONF; k++) {
			int i = (k + r) % NCONF;

			ns[i] = -1;
			cpu[i] = last_cpu = -1;
			if (!(confs & (1u << i)))
				continue;	/* not asked for: no row */
			switch (i) {
			case 0:
				ns[i] = run_cmd(work);
				break;
			case 1:
			case 2:
				snprintf(cmd, sizeof(cmd),
					 "%s record -m 64M --off-cpu --off-cpu-thresh 0%s -o %s -- %s 2> %s",
					 sfprof, i == 2 ? " --stack-size 2048" : "",
					 data, work, err);
				ns[i] = run_cmd(cmd);
				cf[i].bytes += file_size(data);
				cf[i].events += summary_blocks(err);
				break;
			case 3:
			case 6:
				if (have_bt)
					ns[i] = run_bpftrace(work, i == 3 ? bt_prog_u
									  : bt_prog_ku,
							     &cf[i]);
				break;
			case 4:
			case 5:
				if (!have_bpf)
					break;
				snprintf(cmd, sizeof(cmd),
					 "%s record -m 64M --call-graph bpf-defer --off-cpu%s -o %s -- %s 2> %s",
					 sfprof, i == 4 ? " --off-cpu-thresh 0" : "",
					 data, work, err);
				ns[i] = run_cmd(cmd);
				cf[i].bytes += file_size(data);
				cf[i].events += summary_blocks(err);
				break;
			}
			cpu[i] = last_cpu;
		}
		for (k = 0; k < NCONF; k++) {
			if (ns[k] <= 0 || ns[0] <= 0) {
				cf[k].failed++;
				continue;
			}
			cf[k].ns[cf[k].nr] = ns[k];
			cf[k].cpu_ratio[cf[k].nr] =
				cpu[k] > 0 && cpu[0] > 0 ? cpu[k] / cpu[0] : 0;
			cf[k].ratio[cf[k].nr++] = ns[k] / ns[0];
		}
		for (k = 0; k < 2; k++)
			if (ns[0] > 0 && ns[4 + k] > 0 && ns[6] > 0 &&
			    cpu[0] > 0 && cpu[4 + k] > 0 && cpu[6] > 0) {
				diff[k][nd[k]] = (ns[4 + k] - ns[6]) / ns[0] * 100;
				cdiff[k][nd[k]] = (cpu[4 + k] - cpu[6]) / cpu[0] * 100;
				below[k] += diff[k][nd[k]] < 0;
				cbelow[k] += cdiff[k][nd[k]++] < 0;
			}
	}
	printf("  %-32s %12s %10s %10s %12s %10s\n", "", "median ms", "slowdown",
	       "CPU", "events", "bytes/ev");
	for (k = 0; k < NCONF; k++) {
		if (!(confs & (1u << k)))
			continue;
		if (!cf[k].nr) {
			printf("  %-32s %s\n", cf[k].name,
			       (k == 3 || k == 6) && !have_bt ? "not run (no bpftrace)"
			       : (k == 4 || k == 5) && !have_bpf ?
					"not run (bpf-defer does not load here)"
			       : "failed");
			continue;
		}
		printf("  %-32s %12.1f %+9.1f%% %+9.1f%%", cf[k].name,
		       median(cf[k].ns, cf[k].nr) / 1e6,
		       (median(cf[k].ratio, cf[k].nr) - 1) * 100,
		       (median(cf[k].cpu_ratio, cf[k].nr) - 1) * 100);
		if (k)
			printf(" %12llu %10.1f", cf[k].events / (unsigned)cf[k].nr,
			       cf[k].events ? (double)cf[k].bytes /
						      (double)cf[k].events : 0.0);
		if (cf[k].failed)
			printf("  (%d runs failed)", cf[k].failed);
		putchar('\n');
	}
	for (k = 0; k < 2; k++) {
		int m = nd[k];

		if (!m)
			continue;
		printf("  %s - bpftrace k+ustack, paired rounds: wall %+.1f "
		       "points (lower in %d of %d), CPU %+.1f points (lower in "
		       "%d of %d)\n", cf[4 + k].name, median(diff[k], m),
		       below[k], m, median(cdiff[k], m), cbelow[k], m);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		return 1;
	return 0;
}
