// SPDX-License-Identifier: MIT
/*
 * Recording sessions on this machine's kernel: real perf_event_open, real
 * rings, a real child process (tests/progs/record-spin).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sfprof/perf.h>
#include <sfprof/record.h>

#include "record/rec-blocks.h"
#include "record/record.h"
#include "test.h"

struct seen {
	const struct sfp_record *r;
	uint64_t samples, child_samples, mmap2, comm, fork_, exit_, lost_recs,
		lost, with_stack, with_regs, kernel_mode, bad;
	uint64_t last_time;
	bool out_of_order;
	pid_t child;
	/* Processes the child forked (FORK records), and the other pids
	 * samples came from: what a per-thread event may see besides the
	 * thread is what it forks (inherit), and nothing else. */
	pid_t forked[16], others[16];
	unsigned int nforked, nothers;
};

static bool pid_in(const pid_t *set, unsigned int n, pid_t p)
{
	for (unsigned int i = 0; i < n; i++)
		if (set[i] == p)
			return true;
	return false;
}

static void add_pid(pid_t *set, unsigned int *n, pid_t p)
{
	if (!pid_in(set, *n, p) && *n < 16)
		set[(*n)++] = p;
}

static int on_rec(const void *rec, size_t size, int cpu, void *ctx)
{
	const struct perf_event_header *h = rec;
	struct seen *s = ctx;
	struct sfp_perf_sample smp;
	uint64_t sp;
	int err;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		err = sfp_record__decode_sample(s->r, rec, size, &smp, NULL);
		if (err) {
			s->bad++;
			break;
		}
		s->samples++;
		if (smp.time < s->last_time)
			s->out_of_order = true;
		s->last_time = smp.time;
		if (smp.pid == (uint32_t)s->child)
			s->child_samples++;
		else
			add_pid(s->others, &s->nothers, (pid_t)smp.pid);
		/* 7: x86-64 sp in perf_regs numbering */
		if (smp.user_regs_abi &&
		    !sfp_perf_sample_user_reg(&smp, 7, &sp) && sp)
			s->with_regs++;
		if (smp.user_stack_dyn_size)
			s->with_stack++;
		if ((smp.misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
		    PERF_RECORD_MISC_KERNEL)
			s->kernel_mode++;
		break;
	case PERF_RECORD_MMAP2:
		s->mmap2++;
		break;
	case PERF_RECORD_COMM:
		s->comm++;
		break;
	case PERF_RECORD_FORK: {
		uint32_t ids[2];	/* pid, ppid */

		memcpy(ids, (const uint8_t *)rec + sizeof(*h), sizeof(ids));
		s->fork_++;
		if (ids[0] != ids[1] &&
		    (ids[1] == (uint32_t)s->child ||
		     pid_in(s->forked, s->nforked, (pid_t)ids[1])))
			add_pid(s->forked, &s->nforked, (pid_t)ids[0]);
		break;
	}
	case PERF_RECORD_EXIT:
		s->exit_++;
		break;
	case PERF_RECORD_LOST: {
		uint64_t n;

		memcpy(&n, (const uint8_t *)rec + 16, 8);
		s->lost_recs++;
		s->lost += n;
		break;
	}
	default:
		break;
	}
	(void)cpu;
	return 0;
}

static char prog[512];

static char *const *spin_argv(const char *mode, const char *ms)
{
	static char *argv[4];

	snprintf(prog, sizeof(prog), "%s/tests/progs/record-spin",
		 getenv("SFP_BUILD") ? getenv("SFP_BUILD") : "build");
	argv[0] = prog;
	argv[1] = (char *)mode;
	argv[2] = (char *)ms;
	argv[3] = NULL;
	return argv;
}

static int run(struct sfp_record *r, struct seen *s, bool read_live)
{
	int n, err = 0;

	s->r = r;
	s->child = sfp_record__workload_pid(r);
	if (!ASSERT_OK(sfp_record__start(r)))
		return -1;
	while (!sfp_record__done(r)) {
		sfp_record__poll(r, 50);
		if (read_live) {
			n = sfp_record__read(r, false, on_rec, s);
			if (n < 0)
				err = n;
		}
	}
	sfp_record__stop(r);
	n = sfp_record__read(r, true, on_rec, s);
	return n < 0 ? n : err;
}

TEST(record_samples_a_child)
{
	SFP_OPTS(sfp_record_opts, o, .argv = spin_argv("fork", "400"));
	struct sfp_record *r = NULL;
	struct seen s = { 0 };
	uint64_t given;
	int err;

	err = sfp_record__open(&o, &r);
	if (err == -EACCES || err == -EPERM) {
		test_skip("perf_event_open not permitted here");
		return;
	}
	if (!ASSERT_OK(err))
		return;
	ASSERT_EQ(sfp_record__nr_evsels(r), 1);
	ASSERT_STREQ(sfp_record__evsel_name(r, 0), "cpu-clock");
	ASSERT_EQ(sfp_record__attr(r, 0)->sample_stack_user, 16384);
	ASSERT_TRUE(sfp_record__attr(r, 0)->exclude_callchain_user);
	if (!ASSERT_OK(run(r, &s, true)))
		goto out;
	ASSERT_EQ(sfp_record__workload_status(r), 0);
	/* 0.5 s of CPU at 999 Hz: 0.1 s in the command, 0.4 s in its child. */
	ASSERT_GE(s.samples, 250);
	ASSERT_GE(s.child_samples, 50);
	ASSERT_GE(s.samples - s.child_samples, 200);
	ASSERT_EQ(s.bad, 0);
	ASSERT_FALSE(s.out_of_order);
	ASSERT_EQ(s.with_regs, s.samples);
	ASSERT_GE(s.with_stack * 10, s.samples * 9);
	ASSERT_GE(s.mmap2, 3);	/* the program, ld.so, libc */
	ASSERT_GE(s.comm, 1);	/* the exec */
	ASSERT_GE(s.fork_, 1);	/* the child the workload forks */
	ASSERT_GE(s.exit_, 1);
	/* Everything delivered: the queue's last block and its spares are
	 * all it still maps, given back on request, then nothing. */
	ASSERT_EQ(sfp_record__queued(r), 0);
	given = sfp_record__release_pages(r);
	ASSERT_GE(given, REC_BLOCK_SIZE);
	ASSERT_GE((1 + REC_BLOCKS_SPARE) * REC_BLOCK_SIZE, given);
	ASSERT_EQ(sfp_record__release_pages(r), 0);
out:
	sfp_record__free(&r);
}

TEST(record_counts_lost_samples)
{
	/* A 2-page ring that nobody reads while 8 KiB snapshots pour in. */
	SFP_OPTS(sfp_record_opts, o, .argv = spin_argv("cpu", "300"),
		 .mmap_pages = 2, .stack_size = 4096, .freq = 2000);
	struct sfp_record *r = NULL;
	struct seen s = { 0 };
	uint64_t lost = 0;
	int c;

	if (!ASSERT_OK(sfp_record__open(&o, &r)))
		return;
	if (!ASSERT_OK(run(r, &s, false)))
		goto out;
	for (c = 0; c < sfp_record__nr_cpus(r); c++)
		lost += sfp_record__lost(r, c);
	ASSERT_GE(s.lost_recs, 1);
	ASSERT_GE(lost, 1);
	/* The per-CPU counts are the sum of the LOST records delivered. */
	ASSERT_EQ(lost, s.lost);
	ASSERT_EQ(sfp_record__lost(r, -1), 0);
out:
	sfp_record__free(&r);
}

TEST(record_fp_mode_and_period)
{
	SFP_OPTS(sfp_record_opts, o, .argv = spin_argv("cpu", "200"),
		 .call_graph = SFP_RECORD_CG_FP, .period = 1000000,
		 .events = "task-clock,page-faults");
	struct sfp_record *r = NULL;
	const struct perf_event_attr *a;
	struct seen s = { 0 };

	if (!ASSERT_OK(sfp_record__open(&o, &r)))
		return;
	ASSERT_EQ(sfp_record__nr_evsels(r), 2);
	a = sfp_record__attr(r, 0);
	ASSERT_EQ(a->sample_period, 1000000);
	ASSERT_EQ(a->freq, 0);
	ASSERT_FALSE(a->exclude_callchain_user);
	ASSERT_EQ(a->sample_type & PERF_SAMPLE_STACK_USER, 0);
	ASSERT_EQ(sfp_record__attr(r, 1)->config, PERF_COUNT_SW_PAGE_FAULTS);
	ASSERT_EQ(sfp_record__attr(r, 1)->mmap, 0);	/* one tracking event */
	if (ASSERT_OK(run(r, &s, true))) {
		ASSERT_GE(s.samples, 50);	/* 200 ms at 1 ms period */
		ASSERT_EQ(s.with_stack, 0);
		ASSERT_EQ(s.bad, 0);
	}
	sfp_record__free(&r);
}

TEST(record_kernel_defer_probe)
{
	struct utsname u;
	int major = 0, minor = 0, p;
	SFP_OPTS(sfp_record_opts, o, .argv = spin_argv("cpu", "10"),
		 .call_graph = SFP_RECORD_CG_KERNEL_DEFER);
	struct sfp_record *r = NULL;
	int err;

	p = sfp_record__probe_defer_callchain();
	if (!ASSERT_OK(p))
		return;
	uname(&u);
	sscanf(u.release, "%d.%d", &major, &minor);
	/* defer_callchain appeared in 6.19; older kernels must say no. */
	if (major < 6 || (major == 6 && minor < 19))
		ASSERT_EQ(p, 0);
	err = sfp_record__open(&o, &r);
	if (p)
		ASSERT_OK(err);
	else
		ASSERT_ERR(err, -EOPNOTSUPP);
	sfp_record__free(&r);
}

TEST(record_bad_options)
{
	SFP_OPTS(sfp_record_opts, o, .argv = spin_argv("cpu", "10"),
		 .events = "no-such-event");
	struct sfp_record *r = NULL;

	ASSERT_ERR(sfp_record__open(&o, &r), -EINVAL);
	ASSERT_TRUE(r == NULL);
	o.events = "cycles";
	if (access("/sys/bus/event_source/devices/cpu", F_OK))
		ASSERT_ERR(sfp_record__open(&o, &r), -EOPNOTSUPP);
	sfp_record__free(&r);
	o.events = NULL;
	o.stack_size = 100;
	ASSERT_ERR(sfp_record__open(&o, &r), -EINVAL);
	o.stack_size = 0;
	o.mmap_pages = 3;
	ASSERT_ERR(sfp_record__open(&o, &r), -EINVAL);
	o.mmap_pages = 0;
	o.system_wide = true;	/* and a command: two targets */
	ASSERT_ERR(sfp_record__open(&o, &r), -EINVAL);
	o.system_wide = false;
	o.argv = NULL;
	o.pids = "99999999999";
	ASSERT_ERR(sfp_record__open(&o, &r), -EINVAL);
	o.pids = "4000000";	/* above pid_max: no such process */
	ASSERT_ERR(sfp_record__open(&o, &r), -ESRCH);
	o.pids = "1,x";
	ASSERT_ERR(sfp_record__open(&o, &r), -EINVAL);
	o.pids = NULL;
	o.tids = "4000000";
	ASSERT_ERR(sfp_record__open(&o, &r), -ESRCH);
	ASSERT_TRUE(r == NULL);
}

TEST(record_tracepoint_names)
{
	struct sfp_event_desc d;
	int err;

	ASSERT_ERR(sfp_event_parse("sched:", &d), -ENOENT);
	ASSERT_ERR(sfp_event_parse("sched:../../x", &d), -ENOENT);
	ASSERT_OK(sfp_event_parse("faults", &d));
	ASSERT_EQ(d.config, PERF_COUNT_SW_PAGE_FAULTS);
	ASSERT_OK(sfp_event_parse("cs", &d));
	ASSERT_EQ(d.config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	err = sfp_event_parse("sched:sched_switch", &d);
	if (access("/sys/kernel/tracing/events", R_OK) &&
	    access("/sys/kernel/debug/tracing/events", R_OK)) {
		ASSERT_ERR(err, -EOPNOTSUPP);
		test_skip("tracefs not mounted");
		return;
	}
	if (!ASSERT_OK(err))
		return;
	ASSERT_EQ(d.type, PERF_TYPE_TRACEPOINT);
	ASSERT_NE(d.config, 0);
	ASSERT_ERR(sfp_event_parse("sched:no_such_tracepoint", &d), -ENOENT);
}

TEST(record_attach_pid)
{
	SFP_OPTS(sfp_record_opts, o);
	struct sfp_record *r = NULL;
	struct seen s = { 0 };
	char pidstr[32];
	pid_t p;
	int i;

	p = fork();
	if (p == 0) {
		execv(spin_argv("cpu", "600")[0], spin_argv("cpu", "600"));
		_exit(127);
	}
	if (!ASSERT_GE(p, 1))
		return;
	usleep(50000);
	snprintf(pidstr, sizeof(pidstr), "%d", p);
	o.pids = pidstr;
	if (!ASSERT_OK(sfp_record__open(&o, &r)))
		goto out;
	s.r = r;
	s.child = p;
	ASSERT_OK(sfp_record__start(r));
	for (i = 0; i < 100 && !sfp_record__done(r); i++) {
		sfp_record__poll(r, 20);
		sfp_record__read(r, false, on_rec, &s);
	}
	sfp_record__stop(r);
	sfp_record__read(r, true, on_rec, &s);
	ASSERT_GE(s.child_samples, 50);
	ASSERT_EQ(s.bad, 0);
out:
	sfp_record__free(&r);
	waitpid(p, NULL, 0);
}

TEST(record_attach_tid)
{
	SFP_OPTS(sfp_record_opts, o);
	struct sfp_record *r = NULL;
	struct seen s = { 0 };
	char tidstr[32];
	pid_t p;
	int i;

	p = fork();
	if (p == 0) {
		execv(spin_argv("cpu", "400")[0], spin_argv("cpu", "400"));
		_exit(127);
	}
	if (!ASSERT_GE(p, 1))
		return;
	usleep(50000);
	/* The main thread's tid is the pid. */
	snprintf(tidstr, sizeof(tidstr), "%d", p);
	o.tids = tidstr;
	o.call_graph = SFP_RECORD_CG_NONE;
	if (!ASSERT_OK(sfp_record__open(&o, &r)))
		goto out;
	ASSERT_EQ(sfp_record__attr(r, 0)->sample_type & PERF_SAMPLE_CALLCHAIN,
		  0);
	s.r = r;
	s.child = p;
	ASSERT_OK(sfp_record__start(r));
	for (i = 0; i < 100 && !sfp_record__done(r); i++) {
		sfp_record__poll(r, 20);
		sfp_record__read(r, false, on_rec, &s);
	}
	sfp_record__stop(r);
	sfp_record__read(r, true, on_rec, &s);
	ASSERT_GE(s.child_samples, 50);
	/* Only that thread, and what it forks (LeakSanitizer's tracer at
	 * exit in the ASan tier, whose share of the samples depends on
	 * how much CPU the thread got before the attach): every other pid
	 * sampled came from a FORK record of the thread's process. */
	for (unsigned int k = 0; k < s.nothers; k++)
		if (!ASSERT_TRUE(pid_in(s.forked, s.nforked, s.others[k])))
			fprintf(stderr, "  pid %d sampled, not forked by %d\n",
				(int)s.others[k], (int)p);
	ASSERT_TRUE(s.nothers < 16);
	ASSERT_EQ(s.bad, 0);
out:
	sfp_record__free(&r);
	waitpid(p, NULL, 0);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *wake_later(void *arg)
{
	usleep(100000);
	sfp_record__wake(arg);
	return NULL;
}

/*
 * sfp_record__wake(): a poll with a long timeout on a target that never
 * runs (so no ring ever has data) returns at once after a wake, whether
 * the wake came before the poll or from another thread during it; one
 * wake ends one wait (the next poll sleeps its timeout).
 */
TEST(record_wake_ends_poll)
{
	SFP_OPTS(sfp_record_opts, o);
	struct sfp_record *r = NULL;
	char pidstr[32];
	pthread_t th;
	double t;
	pid_t p;

	p = fork();
	if (p == 0) {
		pause();
		_exit(0);
	}
	if (!ASSERT_GE(p, 1))
		return;
	snprintf(pidstr, sizeof(pidstr), "%d", p);
	o.pids = pidstr;
	o.call_graph = SFP_RECORD_CG_NONE;
	if (!ASSERT_OK(sfp_record__open(&o, &r)) ||
	    !ASSERT_OK(sfp_record__start(r)))
		goto out;
	ASSERT_OK(sfp_record__wake(r));
	t = mono_s();
	ASSERT_OK(sfp_record__poll(r, 20000));
	ASSERT_TRUE(mono_s() - t < 10.0);
	/* the wake was taken: this one sleeps its 150 ms */
	t = mono_s();
	ASSERT_OK(sfp_record__poll(r, 150));
	ASSERT_TRUE(mono_s() - t >= 0.14);
	if (!ASSERT_EQ(pthread_create(&th, NULL, wake_later, r), 0))
		goto out;
	t = mono_s();
	ASSERT_OK(sfp_record__poll(r, 20000));
	ASSERT_TRUE(mono_s() - t < 10.0);
	pthread_join(th, NULL);
out:
	sfp_record__free(&r);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}
