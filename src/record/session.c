// SPDX-License-Identifier: MIT
/*
 * A recording session: the events of one `record` run, opened for every
 * (event, CPU, thread) the target needs, with one mmap ring per CPU that
 * all fds of that CPU write into (PERF_EVENT_IOC_SET_OUTPUT, as perf does:
 * inherited per-task events cannot be mapped with cpu == -1).
 *
 * The reader drains every ring into a batch and delivers it sorted by time,
 * holding back what is newer than a watermark taken before the drain, so
 * that the records of a task that migrated between CPUs reach the caller in
 * the order they happened.  The deferral engine depends on that: it judges
 * "consecutive samples of one task".  Timestamps use CLOCK_MONOTONIC
 * (use_clockid) so that the watermark can be read with clock_gettime().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/procfs.h"
#include "record/rec-blocks.h"
#include "record/record.h"

#define DEFAULT_FREQ 999
#define DEFAULT_STACK 16384
#define MAX_STACK 65528		/* the kernel's u16 record size limit */
#define MAX_THREADS 65536
/*
 * The off-CPU event's filter, in the kernel: blocking switch-outs only
 * (prev_state S D T t P I; a preemption reports TASK_REPORT_MAX alone, an
 * exit X or Z).  A preempted CPU-bound thread would otherwise cost a user
 * stack copy per time slice for nothing.
 */
#define OFF_CPU_FILTER "prev_state & 0xcf"
/* How far behind "now" the reader stays to let late writers finish. */
#define WATERMARK_SLACK_NS 20000000ULL
/* The queue's index at its first record (pend_shrink()). */
#define PEND_FIRST 1024u

struct evsel {
	struct perf_event_attr attr;
	/* attr in the sample decoder's terms, once it is opened (open_one()
	 * may still change it until then) */
	struct sfp_perf_attr pattr;
	struct sfp_event_desc desc;
	bool off_cpu;		/* the sched_switch event of opts.off_cpu */
	bool filter_refused;
	uint64_t *ids;
	size_t nr_ids;
};

struct pending_rec {
	uint64_t time;
	uint64_t seq;
	int cpu;
	uint32_t size;
	uint64_t *data;		/* 8-aligned copy, in blk */
	struct rec_block *blk;
};

struct sfp_record {
	struct evsel *evsels;
	int nr_evsels;
	int nr_cpus;
	/*
	 * [nr_rings]: one per CPU; with the off-CPU tracepoint a second set
	 * (rings[nr_cpus + cpu]) for its samples alone, so that their stack
	 * copies, which a switch-heavy load makes overflow, cannot crowd out
	 * the small records every block's time is taken from (the switch
	 * records, in the first set: see offcpu_ring()).
	 */
	struct sfp_ring *rings;
	int nr_rings;
	uint64_t *lost;			/* [nr_cpus] */
	int *fds;
	size_t nr_fds;
	pid_t *threads;			/* -1 for system-wide */
	size_t nr_threads;
	pid_t *procs;			/* -p targets, to notice them gone */
	size_t nr_procs;
	bool system_wide;
	bool has_build_ids;
	bool started;
	pid_t workload;			/* also its process group's id */
	int workload_status;
	int go_fd;			/* write end of the child's start pipe */
	int tty_fd;			/* the terminal handed to the command, or -1 */
	struct pending_rec *pend;
	size_t nr_pend, cap_pend;
	struct rec_blocks blocks;	/* the queued records' bytes */
	uint64_t seq;
	uint64_t *buf;			/* one record, 8-aligned */
	enum sfp_record_call_graph cg;
	int off_cpu_evsel;		/* -1: no off-CPU event */
	/* An eventfd in every sfp_record__poll(): sfp_record__wake() ends a
	 * wait at once, so that a thread polling with a long timeout (the
	 * agent's reader) stops when told, not when the timeout runs out */
	int wake_fd;
	/* Guards the rings' tails, pend, buf and lost: a reader thread may
	 * drain while another thread delivers (sfp_record__drain()). */
	pthread_mutex_t lock;
};

const char *sfp_record__call_graph_name(enum sfp_record_call_graph m)
{
	switch (m) {
	case SFP_RECORD_CG_SFRAME: return "sframe";
	case SFP_RECORD_CG_FP: return "fp";
	case SFP_RECORD_CG_DWARF: return "dwarf";
	case SFP_RECORD_CG_KERNEL_DEFER: return "kernel-defer";
	case SFP_RECORD_CG_NONE: return "none";
	case SFP_RECORD_CG_BPF_DEFER: return "bpf-defer";
	}
	return "?";
}

static int read_int_file(const char *path, long *v)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	*v = strtol(buf, NULL, 10);
	return 0;
}

static bool have_hw_pmu(void)
{
	return !access("/sys/bus/event_source/devices/cpu", F_OK) ||
	       !access("/sys/bus/event_source/devices/cpu_core", F_OK) ||
	       !access("/sys/bus/event_source/devices/armv8_pmuv3_0", F_OK);
}

/* --- targets ------------------------------------------------------------ */

static int add_thread(struct sfp_record *r, pid_t tid)
{
	pid_t *n;

	if (r->nr_threads >= MAX_THREADS)
		return -E2BIG;
	n = realloc(r->threads, (r->nr_threads + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	r->threads = n;
	r->threads[r->nr_threads++] = tid;
	return 0;
}

/* Parse "1,2,3" into positive ids; calls fn for each. */
static int parse_id_list(const char *list, const char *what,
			 int (*fn)(struct sfp_record *, pid_t),
			 struct sfp_record *r)
{
	const char *p = list;

	while (*p) {
		char *end;
		long v;
		int err;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v <= 0 || v > 0x3fffffff ||
		    (*end && *end != ',')) {
			pr_warn("bad %s list '%s' (want N[,N...])", what, list);
			return -EINVAL;
		}
		err = fn(r, (pid_t)v);
		if (err)
			return err;
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int add_process(struct sfp_record *r, pid_t pid)
{
	char path[64];
	struct dirent *de;
	pid_t *n;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d) {
		pr_warn("process %d not found: it is gone or never existed "
			"(check the PID with 'ps -p %d')", pid, pid);
		return -ESRCH;
	}
	while (!err && (de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid > 0)
			err = add_thread(r, (pid_t)tid);
	}
	closedir(d);
	if (err)
		return err;
	n = realloc(r->procs, (r->nr_procs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	r->procs = n;
	r->procs[r->nr_procs++] = pid;
	return 0;
}

static int add_tid(struct sfp_record *r, pid_t tid)
{
	char path[64];
	pid_t *n;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	if (access(path, F_OK)) {
		pr_warn("thread %d not found: it is gone or never existed", tid);
		return -ESRCH;
	}
	n = realloc(r->procs, (r->nr_procs + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	r->procs = n;
	r->procs[r->nr_procs++] = tid;
	return add_thread(r, tid);
}

/*
 * The command runs in a process group of its own, as a shell's job
 * control starts a job: ending it (--duration, the first SIGINT) signals
 * the group, so that what it started goes too, not only its first
 * process.  When we are the foreground job of a terminal, the command's
 * group becomes the foreground one while it runs (reading the terminal
 * would stop it otherwise; Ctrl-C and Ctrl-Z then reach it as they would
 * from the shell), and the terminal is ours again once it has ended or
 * stopped.  SIGTTOU is blocked around tcsetpgrp(): a background group
 * (ours, while the command has the terminal) would be stopped by it.
 */
static int our_terminal(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++)
		if (isatty(fd) && tcgetpgrp(fd) == getpgrp())
			return fd;
	return -1;
}

static void give_terminal(int fd, pid_t pgrp)
{
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	(void)tcsetpgrp(fd, pgrp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void take_terminal_back(struct sfp_record *r)
{
	if (r->tty_fd >= 0)
		give_terminal(r->tty_fd, getpgrp());
}

/* Fork the command; it waits on a pipe until sfp_record__start(). */
static int fork_workload(struct sfp_record *r, char *const *argv)
{
	int go[2], err_pipe[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(err_pipe, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(err_pipe[0]);
		close(err_pipe[1]);
		return err;
	}
	if (!pid) {
		char c;
		int e;

		close(go[1]);
		close(err_pipe[0]);
		/* (the parent does it too: whichever runs first) */
		setpgid(0, 0);
		/* EOF without a byte means the parent gave up: do not run. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(err_pipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err_pipe[1]);
	setpgid(pid, pid);
	r->workload = pid;
	r->go_fd = go[1];
	/* Kept for exec errors: read in start(). */
	r->procs = malloc(sizeof(*r->procs));
	if (!r->procs) {
		close(err_pipe[0]);
		return -ENOMEM;
	}
	r->procs[0] = err_pipe[0];	/* borrowed slot until start() */
	r->nr_procs = 0;
	return add_thread(r, pid);
}

/* --- attrs -------------------------------------------------------------- */

static void init_attr(struct sfp_record *r, const struct sfp_record_opts *o,
		      struct evsel *ev, bool tracking, uint32_t stack_size,
		      uint32_t data_bytes)
{
	struct perf_event_attr *a = &ev->attr;
	uint64_t period = SFP_OPTS_GET(o, sfp_record_opts, period, 0);
	uint64_t freq = SFP_OPTS_GET(o, sfp_record_opts, freq, 0);

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = ev->desc.type;
	a->config = ev->desc.config;
	/*
	 * As perf does: IDENTIFIER only when several events share a ring,
	 * CPU only system-wide (the ring tells the CPU otherwise).  Every
	 * byte here is paid twice per sample in the deferred form: in the
	 * sample and in the deferred record's sample_id.
	 */
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_PERIOD;
	if (r->nr_evsels > 1)
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (r->system_wide)
		a->sample_type |= PERF_SAMPLE_CPU;
	if (ev->off_cpu) {
		/* every switch: a block missed is time lost (not -c); with
		 * bpf-defer a bpf-output event that never fires (the BPF
		 * program on sched_switch writes the blocks) */
		if (r->cg != SFP_RECORD_CG_BPF_DEFER)
			a->sample_type |= PERF_SAMPLE_RAW;
		a->sample_period = 1;
	} else if (ev->desc.kind == SFP_EV_TRACEPOINT) {
		a->sample_type |= PERF_SAMPLE_RAW;
		a->sample_period = period ? period : 1;
	} else if (period) {
		a->sample_period = period;
	} else {
		a->freq = 1;
		a->sample_freq = freq ? freq : DEFAULT_FREQ;
	}
	switch (r->cg) {
	case SFP_RECORD_CG_SFRAME:
	case SFP_RECORD_CG_DWARF:
		a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
				  PERF_SAMPLE_STACK_USER;
		a->exclude_callchain_user = 1;
		a->sample_regs_user = r->cg == SFP_RECORD_CG_DWARF
					      ? SFP_DWARF_REGS_MASK
					      : SFP_SFRAME_REGS_MASK;
		a->sample_stack_user = stack_size;
		break;
	case SFP_RECORD_CG_FP:
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		break;
	case SFP_RECORD_CG_KERNEL_DEFER:
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		sfp_attr_set_flag_bit(a, SFP_ATTR_BIT_DEFER_CALLCHAIN);
		if (tracking)
			sfp_attr_set_flag_bit(a, SFP_ATTR_BIT_DEFER_OUTPUT);
		break;
	case SFP_RECORD_CG_BPF_DEFER:
		/* A BPF program writes the samples (src/bpf/): the kernel
		 * chain is all it asks of perf. */
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_user = 1;
		break;
	case SFP_RECORD_CG_NONE:
		break;
	}
	a->disabled = 1;
	a->enable_on_exec = r->workload > 0;
	a->inherit = !r->system_wide &&
		     !SFP_OPTS_GET(o, sfp_record_opts, no_inherit, false);
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = data_bytes / 4;
	if (tracking) {
		a->mmap = 1;
		a->mmap2 = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->build_id = r->has_build_ids;
		/* The switch-in ends a block: PERF_RECORD_SWITCH(_CPU_WIDE)
		 * is the one record the kernel writes for it per task. */
		a->context_switch = r->off_cpu_evsel >= 0 &&
				    r->cg != SFP_RECORD_CG_BPF_DEFER;
	}
}

/* The real uid owning process @pid, (uid_t)-1 if unknown. */
static uid_t proc_owner(pid_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) ? (uid_t)-1 : st.st_uid;
}

static int open_error(struct sfp_record *r, struct evsel *ev, pid_t pid,
		      int cpu, int err)
{
	long paranoid = 2, max_rate = 0;
	uid_t owner;

	read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid);
	switch (err) {
	case EACCES:
	case EPERM:
		if (pid > 0 && pid != r->workload && geteuid() != 0 &&
		    (owner = proc_owner(pid)) != (uid_t)-1 &&
		    owner != geteuid()) {
			/* Another user's process: perf_event_open needs ptrace
			 * access to it, which no perf_event_paranoid setting
			 * gives, so do not send the user to the sysctl. */
			pr_warn("no permission to attach to %d for '%s': it "
				"belongs to uid %u, and a user may profile only "
				"its own processes (perf_event_open needs ptrace "
				"access, as with CAP_SYS_PTRACE): run as root or "
				"as uid %u", pid, ev->desc.name, (unsigned)owner,
				(unsigned)owner);
		} else if (getuid() != 0 && paranoid >= 2 &&
			   !ev->attr.exclude_kernel) {
			pr_warn("perf_event_open('%s') not permitted: "
				"kernel.perf_event_paranoid is %ld, which lets "
				"users other than root sample user space only; "
				"run as root, or 'sysctl -w "
				"kernel.perf_event_paranoid=1'", ev->desc.name,
				paranoid);
		} else if (pid > 0 && getuid() != 0 && pid != r->workload) {
			pr_warn("no permission to attach to %d for '%s' "
				"(perf_event_paranoid is %ld): run as root or "
				"as the process's owner, or lower "
				"kernel.perf_event_paranoid", pid,
				ev->desc.name, paranoid);
		} else {
			pr_warn("perf_event_open('%s') not permitted: "
				"kernel.perf_event_paranoid is %ld; run as root, "
				"or 'sysctl -w kernel.perf_event_paranoid=%d'",
				ev->desc.name, paranoid,
				r->system_wide ? -1 : 1);
		}
		return -err;
	case ESRCH:
		pr_warn("target %d is gone (it exited before recording began)",
			pid);
		return -ESRCH;
	case EMFILE:
		pr_warn("out of file descriptors (%zu open): raise 'ulimit -n'",
			r->nr_fds);
		return -EMFILE;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (ev->desc.kind == SFP_EV_HARDWARE && !have_hw_pmu()) {
			pr_warn("event '%s' needs a hardware PMU and this machine "
				"has none (no /sys/bus/event_source/devices/cpu, "
				"typical of a VM); use a software event such as "
				"-e cpu-clock", ev->desc.name);
			return -EOPNOTSUPP;
		}
		if (err == ENODEV)
			break;
		pr_warn("event '%s' is not supported here: %s", ev->desc.name,
			strerror(err));
		return -EOPNOTSUPP;
	case EINVAL:
	case E2BIG:
		if (r->cg == SFP_RECORD_CG_KERNEL_DEFER) {
			pr_warn("this kernel lacks deferred user callchains "
				"(perf_event_open rejects attr.defer_callchain: %s); "
				"use --call-graph sframe, which emulates the "
				"kernel's deferral in user space", strerror(err));
			return -EOPNOTSUPP;
		}
		read_int_file("/proc/sys/kernel/perf_event_max_sample_rate",
			      &max_rate);
		if (ev->attr.freq && max_rate > 0 &&
		    ev->attr.sample_freq > (uint64_t)max_rate) {
			pr_warn("-F %llu exceeds kernel.perf_event_max_sample_rate "
				"(%ld): lower -F or raise the sysctl",
				(unsigned long long)ev->attr.sample_freq,
				max_rate);
			return -EINVAL;
		}
		break;
	default:
		break;
	}
	pr_warn("perf_event_open('%s', pid %d, cpu %d) failed: %s",
		ev->desc.name, pid, cpu, strerror(err));
	return -err;
}

static int push_fd(struct sfp_record *r, int fd)
{
	int *n = realloc(r->fds, (r->nr_fds + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	r->fds = n;
	r->fds[r->nr_fds++] = fd;
	return 0;
}

static int push_id(struct evsel *ev, uint64_t id)
{
	uint64_t *n = realloc(ev->ids, (ev->nr_ids + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	ev->ids = n;
	ev->ids[ev->nr_ids++] = id;
	return 0;
}

/*
 * The off-CPU tracepoint's samples (a user stack copy each) go to rings of
 * their own: under heavy switching they overflow, and the blocks whose
 * sample is lost still get their time from the switch records of the
 * tracking event's rings (record/offcpu.h, sfp_offcpu__switch_out()).
 */
static bool offcpu_ring(const struct sfp_record *r, const struct evsel *ev)
{
	return ev->off_cpu && r->cg != SFP_RECORD_CG_BPF_DEFER;
}

static int open_one(struct sfp_record *r, struct evsel *ev, pid_t pid,
		    int cpu, uint32_t pages)
{
	struct sfp_ring *rg = &r->rings[offcpu_ring(r, ev) ? r->nr_cpus + cpu
							     : cpu];
	uint64_t id = 0;
	int fd, err;

	fd = sfp_perf_event_open(&ev->attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL && ev->attr.build_id) {
		/* Kernels before 5.12 reject build_id: plain MMAP2 then. */
		ev->attr.build_id = 0;
		r->has_build_ids = false;
		fd = sfp_perf_event_open(&ev->attr, pid, cpu, -1,
					 PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0 && (errno == EACCES || errno == EPERM) && !r->system_wide &&
	    !ev->attr.exclude_kernel && getuid() != 0) {
		/* As perf does: a paranoid setting of 2 still allows user
		 * space, which is what sframe mode unwinds anyway. */
		int saved = errno;

		ev->attr.exclude_kernel = 1;
		ev->attr.exclude_hv = 1;
		fd = sfp_perf_event_open(&ev->attr, pid, cpu, -1,
					 PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0) {
			pr_warn("kernel.perf_event_paranoid lets this user "
				"sample user space only: kernel stacks are not "
				"recorded ('sysctl -w kernel.perf_event_paranoid=1' "
				"or root for them)");
		} else {
			ev->attr.exclude_kernel = 0;
			ev->attr.exclude_hv = 0;
			errno = saved;
		}
	}
	if (fd < 0) {
		err = errno;
		/* An offline CPU: skip it, as perf does. */
		if (err == ENODEV && ev->desc.kind != SFP_EV_HARDWARE)
			return 0;
		/* A thread of an attached process may exit meanwhile. */
		if (err == ESRCH && r->nr_procs && pid != r->procs[0] &&
		    r->workload <= 0)
			return 0;
		return open_error(r, ev, pid, cpu, err);
	}
	/* the attr as the kernel took it: what its samples are laid out by */
	sfp_record_perf_attr(&ev->attr, &ev->pattr);
	err = push_fd(r, fd);
	if (err) {
		close(fd);
		return err;
	}
	if (!rg->base) {
		err = sfp_ring_map(rg, fd, cpu, pages);
		if (err) {
			if (err == -EPERM)
				pr_warn("mmap of a %u-page ring refused: over "
					"kernel.perf_event_mlock_kb; lower -m or "
					"raise the sysctl", pages);
			else
				pr_warn("mmap of the ring of cpu %d: %s", cpu,
					strerror(-err));
			return err;
		}
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rg->fd)) {
		err = -errno;
		pr_warn("redirecting an event to the ring of cpu %d: %s", cpu,
			strerror(errno));
		return err;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id)) {
		err = -errno;
		pr_warn("PERF_EVENT_IOC_ID: %s", strerror(errno));
		return err;
	}
	if (ev->off_cpu && r->cg != SFP_RECORD_CG_BPF_DEFER &&
	    !ev->filter_refused &&
	    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, OFF_CPU_FILTER)) {
		/* The pipeline drops the preemptions too: only costlier. */
		pr_info("tracepoint filter '%s' refused (%s): preemptions "
			"are dropped in user space", OFF_CPU_FILTER,
			strerror(errno));
		ev->filter_refused = true;
	}
	return push_id(ev, id);
}

static int parse_events(struct sfp_record *r, const char *list)
{
	char *copy, *tok, *save = NULL;
	int err = 0;

	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct evsel *n;

		if (r->nr_evsels >= 64) {
			err = -E2BIG;
			break;
		}
		n = realloc(r->evsels, (r->nr_evsels + 1) * sizeof(*n));
		if (!n) {
			err = -ENOMEM;
			break;
		}
		r->evsels = n;
		memset(&n[r->nr_evsels], 0, sizeof(*n));
		err = sfp_event_parse(tok, &n[r->nr_evsels].desc);
		if (err) {
			if (err == -ENOENT)
				err = -EINVAL;
			break;
		}
		r->nr_evsels++;
	}
	free(copy);
	if (!err && !r->nr_evsels) {
		pr_warn("empty event list");
		err = -EINVAL;
	}
	return err;
}

/*
 * opts.off_cpu: sched:sched_switch, taken in the task switched out; with
 * bpf-defer, a bpf-output event (what perf's offcpu-time is) that only
 * gives the file's off-CPU samples their event and ids: the BPF program
 * on sched_switch (src/bpf/) writes them.
 */
static int add_off_cpu_event(struct sfp_record *r)
{
	struct evsel *n;
	int err;

	if (r->cg != SFP_RECORD_CG_SFRAME && r->cg != SFP_RECORD_CG_BPF_DEFER) {
		pr_warn("off-CPU recording needs --call-graph sframe or "
			"bpf-defer (the user stack of a blocked task is "
			"unwound from its snapshot, or by BPF task_work)");
		return -EINVAL;
	}
	if (r->nr_evsels >= 64)
		return -E2BIG;
	n = realloc(r->evsels, (r->nr_evsels + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	r->evsels = n;
	n += r->nr_evsels;
	memset(n, 0, sizeof(*n));
	if (r->cg == SFP_RECORD_CG_BPF_DEFER) {
		snprintf(n->desc.name, sizeof(n->desc.name), "%s",
			 SFP_OFF_CPU_EVENT_NAME);
		n->desc.type = PERF_TYPE_SOFTWARE;
		n->desc.config = PERF_COUNT_SW_BPF_OUTPUT;
		n->desc.kind = SFP_EV_SOFTWARE;
		n->off_cpu = true;
		r->off_cpu_evsel = r->nr_evsels++;
		return 0;
	}
	err = sfp_event_parse("sched:sched_switch", &n->desc);
	if (err)
		return err == -ENOENT ? -EOPNOTSUPP : err;
	n->off_cpu = true;
	r->off_cpu_evsel = r->nr_evsels++;
	return 0;
}

int sfp_record__off_cpu_evsel(const struct sfp_record *r)
{
	return r->off_cpu_evsel;
}

int sfp_record__probe_defer_callchain(void)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000;
	a.sample_type = PERF_SAMPLE_CALLCHAIN;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	sfp_attr_set_flag_bit(&a, SFP_ATTR_BIT_DEFER_CALLCHAIN);
	fd = sfp_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (errno == EINVAL || errno == E2BIG)
		return 0;
	return -errno;
}

int sfp_record__open(const struct sfp_record_opts *o,
		     struct sfp_record **out)
{
	const char *events, *pids, *tids;
	char *const *argv;
	uint32_t pages, stack_size;
	long page = sysconf(_SC_PAGESIZE);
	struct sfp_record *r;
	int err, i, c;
	size_t t;

	*out = NULL;
	if (!SFP_OPTS_VALID(o, sfp_record_opts))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	r->go_fd = -1;
	r->tty_fd = -1;
	r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->wake_fd < 0) {
		err = -errno;
		pthread_mutex_destroy(&r->lock);
		free(r);
		return err;
	}
	r->workload_status = -1;
	r->blocks.nspare = SFP_OPTS_GET(o, sfp_record_opts, queue_spare_blocks,
					0);
	r->has_build_ids = !SFP_OPTS_GET(o, sfp_record_opts, no_build_id,
					 false);
	r->off_cpu_evsel = -1;
	r->cg = SFP_OPTS_GET(o, sfp_record_opts, call_graph,
			     SFP_RECORD_CG_SFRAME);
	r->system_wide = SFP_OPTS_GET(o, sfp_record_opts, system_wide, false);
	events = SFP_OPTS_GET(o, sfp_record_opts, events, NULL);
	pids = SFP_OPTS_GET(o, sfp_record_opts, pids, NULL);
	tids = SFP_OPTS_GET(o, sfp_record_opts, tids, NULL);
	argv = SFP_OPTS_GET(o, sfp_record_opts, argv, NULL);
	stack_size = SFP_OPTS_GET(o, sfp_record_opts, stack_size, 0);
	pages = SFP_OPTS_GET(o, sfp_record_opts, mmap_pages, 0);
	if (!stack_size)
		stack_size = DEFAULT_STACK;
	if ((stack_size & 7) || stack_size > MAX_STACK) {
		pr_warn("stack size %u: must be a multiple of 8, at most %u",
			stack_size, MAX_STACK);
		err = -EINVAL;
		goto fail;
	}
	if (!pages)
		pages = (r->cg == SFP_RECORD_CG_SFRAME ||
			 r->cg == SFP_RECORD_CG_DWARF) ? 1024 : 128;
	if (pages & (pages - 1) || pages > (1U << 20)) {
		pr_warn("ring size of %u pages: must be a power of two", pages);
		err = -EINVAL;
		goto fail;
	}
	if ((int)r->cg < 0 || r->cg > SFP_RECORD_CG_BPF_DEFER) {
		err = -EINVAL;
		goto fail;
	}
	if (!!r->system_wide + !!(pids && *pids) + !!(tids && *tids) +
	    !!(argv && argv[0]) != 1) {
		pr_warn("give exactly one target: a command, -p, -t or -a");
		err = -EINVAL;
		goto fail;
	}
	if (r->cg == SFP_RECORD_CG_KERNEL_DEFER) {
		err = sfp_record__probe_defer_callchain();
		if (err == 0) {
			pr_warn("this kernel lacks deferred user callchains "
				"(perf_event_open rejects attr.defer_callchain, "
				"bit 38; Linux 6.19 has it): use --call-graph "
				"sframe, which emulates the deferral in user space");
			err = -EOPNOTSUPP;
			goto fail;
		}
		if (err < 0) {
			pr_warn("probing defer_callchain: %s", strerror(-err));
			goto fail;
		}
	}
	err = parse_events(r, events && *events ? events : "cpu-clock");
	if (!err && SFP_OPTS_GET(o, sfp_record_opts, off_cpu, false))
		err = add_off_cpu_event(r);
	if (err)
		goto fail;

	r->nr_cpus = get_nprocs_conf();
	if (r->nr_cpus <= 0 || r->nr_cpus > 4096) {
		err = -EINVAL;
		goto fail;
	}
	r->nr_rings = r->nr_cpus;
	if (r->off_cpu_evsel >= 0 &&
	    offcpu_ring(r, &r->evsels[r->off_cpu_evsel]))
		r->nr_rings *= 2;
	r->rings = calloc((size_t)r->nr_rings, sizeof(*r->rings));
	r->lost = calloc((size_t)r->nr_cpus, sizeof(*r->lost));
	r->buf = malloc(65536);
	if (!r->rings || !r->lost || !r->buf) {
		err = -ENOMEM;
		goto fail;
	}

	if (r->system_wide)
		err = add_thread(r, -1);
	else if (pids && *pids)
		err = parse_id_list(pids, "PID", add_process, r);
	else if (tids && *tids)
		err = parse_id_list(tids, "TID", add_tid, r);
	else
		err = fork_workload(r, argv);
	if (err)
		goto fail;

	for (i = 0; i < r->nr_evsels; i++)
		init_attr(r, o, &r->evsels[i], i == 0, stack_size,
			  pages * (uint32_t)page);
	for (i = 0; i < r->nr_evsels; i++)
		for (c = 0; c < r->nr_cpus; c++)
			for (t = 0; t < r->nr_threads; t++) {
				err = open_one(r, &r->evsels[i], r->threads[t],
					       c, pages);
				if (err)
					goto fail;
			}
	for (c = 0; c < r->nr_cpus; c++)
		if (r->rings[c].base)
			break;
	if (c == r->nr_cpus) {
		pr_warn("no CPU could be opened");
		err = -ENODEV;
		goto fail;
	}
	*out = r;
	return 0;
fail:
	sfp_record__free(&r);
	return err;
}

int sfp_record__start(struct sfp_record *r)
{
	size_t i;

	if (r->started)
		return 0;
	r->started = true;
	if (r->workload > 0) {
		int e = 0, efd = r->procs[0];
		ssize_t n;

		/* The terminal goes with the command, as a shell gives it
		 * to the job it starts. */
		r->tty_fd = our_terminal();
		if (r->tty_fd >= 0)
			give_terminal(r->tty_fd, r->workload);
		/* The events enable themselves at exec (enable_on_exec). */
		if (write(r->go_fd, "x", 1) != 1) {
			close(efd);
			return -errno;
		}
		close(r->go_fd);
		r->go_fd = -1;
		/* The pipe closes on a successful exec (O_CLOEXEC). */
		n = read(efd, &e, sizeof(e));
		close(efd);
		r->procs[0] = r->workload;
		r->nr_procs = 1;
		if (n == (ssize_t)sizeof(e)) {
			take_terminal_back(r);
			pr_warn("cannot run the command: %s", strerror(e));
			return -e;
		}
		return 0;
	}
	for (i = 0; i < r->nr_fds; i++)
		if (ioctl(r->fds[i], PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
	return 0;
}

int sfp_record__stop(struct sfp_record *r)
{
	size_t i;

	for (i = 0; i < r->nr_fds; i++)
		ioctl(r->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	return 0;
}

int sfp_record__poll(struct sfp_record *r, int timeout_ms)
{
	struct pollfd pfd[4096];
	uint64_t v;
	int c, n = 1;

	pfd[0].fd = r->wake_fd;
	pfd[0].events = POLLIN;
	pfd[0].revents = 0;
	for (c = 0; c < r->nr_rings && n < (int)ARRAY_SIZE(pfd); c++) {
		if (!r->rings[c].base)
			continue;
		pfd[n].fd = r->rings[c].fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	if (poll(pfd, (nfds_t)n, timeout_ms) < 0)
		return -errno;
	/* one wake ends one wait: take it (nonblocking, so a race with
	 * another poller only finds it gone) */
	if (pfd[0].revents & POLLIN)
		(void)!read(r->wake_fd, &v, sizeof(v));
	return 0;
}

int sfp_record__wake(struct sfp_record *r)
{
	uint64_t one = 1;

	/* write(2) is async-signal-safe; a counter at its limit (EAGAIN)
	 * is a wake still pending, which is all that was asked */
	if (write(r->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

static bool target_alive(pid_t pid)
{
	char buf[256], *p;

	if (sfp_proc_read(pid, "stat", buf, sizeof(buf)) < 0)
		return false;
	/* "pid (comm) S ...": the state follows the last ')'. */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

bool sfp_record__done(struct sfp_record *r)
{
	size_t i;

	if (r->workload > 0) {
		int st;

		if (r->workload_status >= 0)
			return true;
		if (waitpid(r->workload, &st,
			    WNOHANG | (r->tty_fd >= 0 ? WUNTRACED : 0)) !=
		    r->workload)
			return false;
		if (WIFSTOPPED(st)) {
			/* Ctrl-Z at the command: stop with it, as the job it
			 * is part of, so that the shell gets the terminal;
			 * continued, give it back and continue the command. */
			take_terminal_back(r);
			raise(SIGTSTP);
			/* continued: in the foreground (fg) the terminal
			 * goes back to the command; not in the background
			 * (bg), where it is the shell's */
			if (tcgetpgrp(r->tty_fd) == getpgrp())
				give_terminal(r->tty_fd, r->workload);
			kill(-r->workload, SIGCONT);
			return false;
		}
		r->workload_status = st;
		take_terminal_back(r);
		return true;
	}
	if (r->system_wide)
		return false;
	for (i = 0; i < r->nr_procs; i++)
		if (target_alive(r->procs[i]))
			return false;
	return true;
}

int sfp_record__workload_status(const struct sfp_record *r)
{
	return r->workload_status;
}

pid_t sfp_record__workload_pid(const struct sfp_record *r)
{
	return r->workload;
}

/* --- reading ----------------------------------------------------------- */

/* Time of a record: in the sample body, or in its sample_id trailer. */
static uint64_t rec_time(const struct sfp_record *r, const void *rec,
			 size_t size)
{
	const struct perf_event_attr *a = &r->evsels[0].attr;
	struct sfp_perf_sample s;
	const struct perf_event_header *h = rec;

	if (h->type == PERF_RECORD_SAMPLE) {
		/* Every evsel starts [IDENTIFIER], IP, TID, TIME. */
		size_t off = (a->sample_type & PERF_SAMPLE_IDENTIFIER) ? 32 : 24;
		uint64_t t;

		if (size < off + 8)
			return 0;
		memcpy(&t, (const uint8_t *)rec + off, sizeof(t));
		return t;
	}
	if (sfp_record_decode_sample_id(a->sample_type, rec, size, &s))
		return 0;
	return s.time;
}

/*
 * The bytes of rec to queue.  In the sframe mode a sample's user stack is
 * read by the unwinder up to its dyn_size and never written out, and the
 * kernel reserves the whole --stack-size in the record however little it
 * could copy (a shallow main thread: a few KiB up to the end of its stack
 * mapping).  The queue holds every record for the watermark and longer
 * when the reader lags, so a burst (twenty containers starting) cost the
 * agent megabytes of 16 KiB copies; the copy keeps only the valid bytes:
 * the record as the kernel would have written it with a size of dyn_size
 * rounded up to 8.  The user stack is the last field a session asks for
 * (sample.c), so the record ends with it; anything else is queued as is.
 */
static size_t queued_size(const struct sfp_record *r, const void *rec,
			  size_t size, size_t *stack_off, uint64_t *keep)
{
	const struct perf_event_header *h = rec;
	struct sfp_perf_sample s;
	uint64_t full;
	size_t off;

	if (r->cg != SFP_RECORD_CG_SFRAME || h->type != PERF_RECORD_SAMPLE ||
	    sfp_record__decode_sample(r, rec, size, &s, NULL) || !s.user_stack)
		return size;
	off = (size_t)((const uint8_t *)s.user_stack - (const uint8_t *)rec);
	memcpy(&full, (const uint8_t *)rec + off - 8, sizeof(full));
	/* (a dyn_size of 0 would end the field without it: keep 8) */
	*keep = s.user_stack_dyn_size ?
		(s.user_stack_dyn_size + 7) & ~(uint64_t)7 : 8;
	if (off + full + 8 != size || *keep + 64 > full)
		return size;
	*stack_off = off;
	return off + *keep + 8;
}

static int pend_push(struct sfp_record *r, int cpu, const void *rec,
		     size_t size)
{
	struct pending_rec *p;
	size_t qsize, stack_off = 0;
	uint64_t keep = 0;

	if (r->nr_pend == r->cap_pend) {
		size_t cap = r->cap_pend ? r->cap_pend * 2 : PEND_FIRST;

		p = realloc(r->pend, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		r->pend = p;
		r->cap_pend = cap;
	}
	p = &r->pend[r->nr_pend];
	qsize = queued_size(r, rec, size, &stack_off, &keep);
	p->data = rec_blocks_alloc(&r->blocks, qsize, &p->blk);
	if (!p->data)
		return -ENOMEM;
	if (qsize == size) {
		memcpy(p->data, rec, size);
	} else {
		uint8_t *d = (uint8_t *)p->data;
		struct perf_event_header *h = (struct perf_event_header *)d;

		/* header .. stack size field, the valid bytes, dyn_size */
		memcpy(d, rec, stack_off + keep);
		memcpy(d + stack_off - 8, &keep, 8);
		memcpy(d + stack_off + keep,
		       (const uint8_t *)rec + size - 8, 8);
		h->size = (uint16_t)qsize;
	}
	p->size = (uint32_t)qsize;
	p->cpu = cpu;
	p->seq = r->seq++;
	p->time = rec_time(r, rec, size);
	r->nr_pend++;
	return 0;
}

/*
 * The index of queued records shrinks back after a burst: it doubles
 * while a burst fills the queue (twenty containers starting: thousands of
 * records within the watermark) and would otherwise keep its largest size
 * for the agent's life.  Halved once a quarter of it is in use, never
 * under its first size.
 */
static void pend_shrink(struct sfp_record *r)
{
	size_t cap = r->cap_pend / 2;
	struct pending_rec *p;

	if (r->cap_pend <= PEND_FIRST || r->nr_pend > r->cap_pend / 4)
		return;
	p = realloc(r->pend, cap * sizeof(*p));
	if (p) {
		r->pend = p;
		r->cap_pend = cap;
	}
}

static int pend_cmp(const void *a, const void *b)
{
	const struct pending_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void count_lost(struct sfp_record *r, int cpu, const void *rec,
		       size_t size)
{
	const struct perf_event_header *h = rec;
	uint64_t n;

	if (h->type == PERF_RECORD_LOST && size >= 24) {
		memcpy(&n, (const uint8_t *)rec + 16, sizeof(n));
		r->lost[cpu] += n;
	} else if (h->type == PERF_RECORD_LOST_SAMPLES && size >= 16) {
		memcpy(&n, (const uint8_t *)rec + 8, sizeof(n));
		r->lost[cpu] += n;
	}
}

int sfp_record__drain(struct sfp_record *r)
{
	int c, n = 0, err = 0, got = 0;

	pthread_mutex_lock(&r->lock);
	for (c = 0; c < r->nr_rings && !err; c++) {
		struct sfp_ring *rg = &r->rings[c];
		int cpu = c % r->nr_cpus;

		while ((n = sfp_ring_next(rg, r->buf, 65536)) > 0) {
			count_lost(r, cpu, r->buf, (size_t)n);
			err = pend_push(r, cpu, r->buf, (size_t)n);
			if (err)
				break;
			got++;
		}
		/* Hand the space back at once: the kernel may write again. */
		sfp_ring_consume(rg);
		if (n < 0)
			err = n;
	}
	pthread_mutex_unlock(&r->lock);
	return err ? err : got;
}

int sfp_record__read(struct sfp_record *r, bool final, sfp_record_event_fn fn,
		     void *ctx)
{
	uint64_t mark = final ? UINT64_MAX : sfp_mono_ns() - WATERMARK_SLACK_NS;
	struct pending_rec *ready = NULL;
	size_t i, done = 0;
	int err, delivered = 0;

	/* Everything stamped before mark is in a ring by now: drain it. */
	err = sfp_record__drain(r);
	if (err < 0)
		return err;
	err = 0;
	pthread_mutex_lock(&r->lock);
	if (r->nr_pend > 1)	/* (pend is NULL until the first record) */
		qsort(r->pend, r->nr_pend, sizeof(*r->pend), pend_cmp);
	while (done < r->nr_pend && r->pend[done].time <= mark)
		done++;
	if (done) {
		ready = malloc(done * sizeof(*ready));
		if (!ready) {
			pthread_mutex_unlock(&r->lock);
			return -ENOMEM;
		}
		memcpy(ready, r->pend, done * sizeof(*ready));
		memmove(r->pend, r->pend + done,
			(r->nr_pend - done) * sizeof(*r->pend));
		r->nr_pend -= done;
		pend_shrink(r);
	}
	pthread_mutex_unlock(&r->lock);
	/* Deliver without the lock, so that draining goes on meanwhile. */
	for (i = 0; i < done; i++) {
		if (!err) {
			err = fn(ready[i].data, ready[i].size, ready[i].cpu, ctx);
			delivered++;
		}
		rec_blocks_put(&r->blocks, ready[i].blk);
	}
	free(ready);
	return err < 0 ? err : delivered;
}

size_t sfp_record_fds(const struct sfp_record *r, const int **fds)
{
	*fds = r->fds;
	return r->nr_fds;
}

int sfp_record_inject(struct sfp_record *r, const void *rec, size_t size,
		      int cpu)
{
	int err;

	pthread_mutex_lock(&r->lock);
	err = pend_push(r, cpu, rec, size);
	pthread_mutex_unlock(&r->lock);
	return err;
}

uint64_t sfp_record__release_pages(struct sfp_record *r)
{
	uint64_t before, after;

	pthread_mutex_lock(&r->lock);
	before = __atomic_load_n(&r->blocks.live, __ATOMIC_RELAXED);
	rec_blocks_trim(&r->blocks);
	after = __atomic_load_n(&r->blocks.live, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	return before > after ? (before - after) * REC_BLOCK_SIZE : 0;
}

size_t sfp_record__queued(struct sfp_record *r)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->nr_pend;
	pthread_mutex_unlock(&r->lock);
	return n;
}

/* --- accessors ----------------------------------------------------------- */

enum sfp_record_call_graph sfp_record__call_graph(const struct sfp_record *r)
{
	return r->cg;
}

int sfp_record__nr_evsels(const struct sfp_record *r)
{
	return r->nr_evsels;
}

const struct perf_event_attr *sfp_record__attr(const struct sfp_record *r,
					       int evsel)
{
	if (evsel < 0 || evsel >= r->nr_evsels)
		return NULL;
	return &r->evsels[evsel].attr;
}

const char *sfp_record__evsel_name(const struct sfp_record *r, int evsel)
{
	if (evsel < 0 || evsel >= r->nr_evsels)
		return NULL;
	return r->evsels[evsel].desc.name;
}

size_t sfp_record__ids(const struct sfp_record *r, int evsel,
		       const uint64_t **ids)
{
	if (evsel < 0 || evsel >= r->nr_evsels) {
		*ids = NULL;
		return 0;
	}
	*ids = r->evsels[evsel].ids;
	return r->evsels[evsel].nr_ids;
}

int sfp_record__nr_cpus(const struct sfp_record *r)
{
	return r->nr_cpus;
}

uint64_t sfp_record__lost(const struct sfp_record *r, int cpu)
{
	if (cpu < 0 || cpu >= r->nr_cpus)
		return 0;
	return r->lost[cpu];
}

bool sfp_record__system_wide(const struct sfp_record *r)
{
	return r->system_wide;
}

bool sfp_record__has_build_ids(const struct sfp_record *r)
{
	return r->has_build_ids;
}

static int find_evsel(const struct sfp_record *r, uint64_t id)
{
	int i;
	size_t k;

	if (r->nr_evsels == 1)
		return 0;
	for (i = 0; i < r->nr_evsels; i++)
		for (k = 0; k < r->evsels[i].nr_ids; k++)
			if (r->evsels[i].ids[k] == id)
				return i;
	return -1;
}

int sfp_record_sample_evsel(const struct sfp_record *r, const void *rec,
			    size_t size)
{
	uint64_t id;
	int ev;

	/* With several events IDENTIFIER comes first and names the event. */
	if (r->nr_evsels == 1)
		return 0;
	if (size < 16)
		return -EBADMSG;
	memcpy(&id, (const uint8_t *)rec + 8, sizeof(id));
	ev = find_evsel(r, id);
	return ev < 0 ? -ENOENT : ev;
}

int sfp_record__decode_sample(const struct sfp_record *r, const void *rec,
			      size_t size, struct sfp_perf_sample *s,
			      int *evsel)
{
	int ev = sfp_record_sample_evsel(r, rec, size), err;

	if (ev < 0) {
		memset(s, 0, sizeof(*s));
		return ev;
	}
	err = sfp_record_decode_sample_pa(&r->evsels[ev].pattr, rec, size, s);
	if (!err && evsel)
		*evsel = ev;
	return err;
}

int sfp_record__decode_id(const struct sfp_record *r, const void *rec,
			  size_t size, struct sfp_perf_sample *s)
{
	return sfp_record_decode_sample_id(r->evsels[0].attr.sample_type, rec,
					   size, s);
}

void sfp_record__free(struct sfp_record **rp)
{
	struct sfp_record *r = *rp;
	size_t i;
	int c;

	if (!r)
		return;
	if (r->workload > 0 && r->workload_status < 0) {
		/* Never started or still running: do not leave it behind. */
		if (r->go_fd >= 0) {
			close(r->go_fd);	/* the child sees EOF and exits */
			r->go_fd = -1;
			if (r->procs)
				close(r->procs[0]);
		} else {
			/* SIGTERM, and SIGKILL when it is ignored: freeing
			 * must not wait forever (callers that want a longer
			 * grace end the command themselves first).  To its
			 * process group: what it started goes too. */
			kill(-r->workload, SIGTERM);
			for (int tries = 0; tries < 200; tries++) {
				if (waitpid(r->workload, &r->workload_status,
					    WNOHANG) == r->workload)
					break;
				usleep(10000);
			}
			if (r->workload_status < 0)
				kill(-r->workload, SIGKILL);
		}
		if (r->workload_status < 0)
			waitpid(r->workload, &r->workload_status, 0);
		take_terminal_back(r);
	}
	if (r->go_fd >= 0)
		close(r->go_fd);
	close(r->wake_fd);
	for (c = 0; r->rings && c < r->nr_rings; c++)
		sfp_ring_unmap(&r->rings[c]);
	for (i = 0; i < r->nr_fds; i++)
		close(r->fds[i]);
	for (i = 0; i < r->nr_pend; i++)
		rec_blocks_put(&r->blocks, r->pend[i].blk);
	rec_blocks_fini(&r->blocks);
	for (c = 0; c < r->nr_evsels; c++)
		free(r->evsels[c].ids);
	free(r->pend);
	free(r->evsels);
	free(r->rings);
	free(r->lost);
	free(r->fds);
	free(r->threads);
	free(r->procs);
	free(r->buf);
	pthread_mutex_destroy(&r->lock);
	free(r);
	*rp = NULL;
}
