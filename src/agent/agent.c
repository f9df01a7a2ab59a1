// SPDX-License-Identifier: MIT
/*
 * The agent's loop (see agent.h for the picture).
 *
 * It reuses `sfprof record`'s parts as they are, through the same
 * recorder (record/recorder.h): the session (every CPU, inherited by new
 * processes), the record pipeline (synthesized maps of running
 * processes, the unwinder, the deferral engine) or the bpf-defer
 * backend, and the reader thread that only moves records from the rings
 * to the session's queue, so the kernel never waits on us.  Where record
 * has the pipeline write perf.data, the agent takes its events typed --
 * samples with their whole chains, side-band decoded once -- and interns
 * them into per-service aggregates (window.c): no sample is encoded into
 * perf bytes and decoded again on the way.
 *
 * State that would grow with the processes the agent outlives is dropped
 * at their EXIT record: the machine model's maps and threads, the
 * pipeline's address spaces (its own doing), the labels cached here.  The
 * symbol tables are kept across windows for speed and let go of when the
 * agent's resident size passes its symbol budget.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sfprof/symbols.h>

#include "agent/agent.h"
#include "bpf/backends.h"
#include "common/clock.h"
#include "common/procfs.h"
#include "perf/machine.h"
#include "profile/live.h"
#include "record/pipeline.h"
#include "record/recorder.h"
#include "record/record.h"

#define PROC_BUCKETS 4096
#define DEFAULT_PROC_BUDGET 65536
#define DEFAULT_SYMBOL_BUDGET (512ull << 20)
/*
 * An unwind table whose last process exits is kept this long, within
 * this many bytes of such tables: on a build host every compiler
 * process maps libLLVM (a 9 MB table), and freeing it at each exit had
 * the agent decode it again at the next start, 70 times in 30 s, a
 * quarter of a core (bench/RESULTS.md).
 */
#define TABLE_LINGER_MS 60000
#define TABLE_LINGER_BYTES (32ull << 20)
/*
 * The loop's period: records are processed, windows closed and pulls
 * answered this often while there is work.  Each round has a fixed cost
 * (a wake-up, draining both rings and the BPF ring, sorting what came,
 * the pulls' checks), and every wake-up preempts a task of the machine,
 * so a round that found little (at most LOOP_QUIET records) doubles the
 * period, up to LOOP_IDLE_MS: at the default 19 Hz a round then finds
 * about 20 samples per CPU, and the agent wakes once a second instead of
 * ten times.  A round with more work returns to LOOP_MS; a window's end
 * and a pull's span shorten the wait; a new pull or SIGINT/SIGTERM wakes
 * the loop at once (wake_fd), and so does the BPF side when a walk meets
 * a module without a table (a program that just started: its table is
 * asked for at once, not up to a second later).
 */
#define LOOP_MS 100
#define LOOP_IDLE_MS 1000
#define LOOP_QUIET 1024
/* The reader thread waits this long for a ring's wakeup (a quarter of a
 * ring full) before it drains anyway; the loop drains too every round,
 * and sfp_record__wake() ends the wait when the agent stops, so this only
 * matters while the loop is busy elsewhere for longer. */
#define READER_POLL_MS 5000
/* /metrics' figures are refreshed this often (and at every window's
 * close): reading the BPF side's counters is a dozen system calls. */
#define SNAPSHOT_NS 1000000000ull
/*
 * How often the pages of files read (what symbol tables were made from,
 * names and code bytes looked at) and the heap's free pages are given
 * back (release_pages()).  Beside a compiler loop the walks' code reads
 * alone touched 20 MB of libLLVM's text within one 10 s window; a re-read
 * page costs a minor fault, a few hundred of them a second at most.
 */
#define RELEASE_PAGES_NS 2000000000ull
/* A pull is over when the records have passed its end; on a machine
 * with no records coming, a grace after its end with nothing queued; and
 * when the loop lags far behind the rings (reading a large program's
 * unwind table, say), at the latest this long after, with what came. */
#define PULL_GRACE_NS 1000000000ull
#define PULL_MAX_LAG_NS 30000000000ull
/* At SIGINT/SIGTERM: what is queued is processed for at most this long. */
#define FINAL_READ_NS 2000000000ull
struct proc_info {
	struct proc_info *next;
	uint32_t pid;
	bool kept;			/* passes the filters */
	char service[128];
	char container[72];
};

struct service {
	char *key;			/* service \0 container \0 */
	const char *name, *container;	/* inside key */
	struct sfp_live_profile *agg;
	struct sfp_live_profile *off_agg;	/* --off-cpu: made at its first block */
};

struct agent {
	const struct agent_opts *o;
	/* the session and its pipeline, the recorder's (record/recorder.h:
	 * it opens them, starts them, runs the reader thread and ends them) */
	struct sfp_recorder *rc;
	struct sfp_record *r;
	struct sfp_rec_pipe *p;
	struct sfp_bpf_backends bk;	/* bpf-defer as the recorder's source */
	bool opened;			/* the session was: a summary at exit */
	struct sfp_machine *m;
	struct sfp_symbolizer *sym;
	/* --off-cpu: the pipeline's offcpu-time events, and the evsel its
	 * aggregates see (event 0: one event a profile) */
	const struct sfp_perf_evsel *off_out;
	struct sfp_perf_evsel off_evsel;
	char host[256];
	/* labels by pid */
	struct proc_info *procs[PROC_BUCKETS];
	size_t nr_procs;
	/* the open window */
	struct service *svc;
	size_t nr_svc, cap_svc;
	uint64_t win_start_mono, win_start_real;
	/* pulls being collected */
	struct agent_pull *pulls;
	struct agent_shared sh;
	struct agent_metrics mt;	/* the loop's copy */
	uint8_t *dso_seen;		/* machine dso index -> counted */
	size_t cap_seen;
	uint64_t sym_bytes;		/* file bytes behind the symbolizer */
	uint64_t sym_tables_gone;	/* tables loaded by symbolizers let go */
	/* processes gone since the symbolizer last forgot theirs */
	int *gone;
	size_t nr_gone, cap_gone;
	uint64_t last_time;		/* of the newest record processed */
	uint64_t events, records;
	/* the loop's own CPU by phase (ns of CLOCK_THREAD_CPUTIME_ID),
	 * said at exit with -v: where an agent's time goes is a question
	 * its users ask */
	uint64_t cpu_records, cpu_windows, cpu_snapshots, cpu_release,
		 cpu_loop;
	uint64_t loops;
	bool final;			/* the last read, after the signal */
	uint64_t final_deadline;
	int own_wake_fd;		/* made here when opts gave none */
};

/* --- per-process labels and filters ----------------------------------- */

static void proc_forget(struct agent *a, uint32_t pid)
{
	struct proc_info **pp = &a->procs[pid % PROC_BUCKETS], *p;

	for (; (p = *pp); pp = &p->next)
		if (p->pid == pid) {
			*pp = p->next;
			free(p);
			a->nr_procs--;
			return;
		}
}

/*
 * The process pid exited: the symbolizer's entries for it are let go
 * once the window that may still hold its samples is encoded
 * (symbols_forget_gone()).
 */
static void proc_gone(struct agent *a, uint32_t pid)
{
	if (!pid || pid > INT32_MAX)
		return;
	if (a->nr_gone == a->cap_gone) {
		size_t cap = a->cap_gone ? 2 * a->cap_gone : 256;
		int *n;

		/* (open pulls hold the list: bounded by their length) */
		if (cap > (1u << 22))
			return;
		n = realloc(a->gone, cap * sizeof(*n));
		if (!n)
			return;
		a->gone = n;
		a->cap_gone = cap;
	}
	a->gone[a->nr_gone++] = (int)pid;
}

static void proc_forget_all(struct agent *a)
{
	size_t i;

	for (i = 0; i < PROC_BUCKETS; i++)
		while (a->procs[i]) {
			struct proc_info *n = a->procs[i]->next;

			free(a->procs[i]);
			a->procs[i] = n;
		}
	a->nr_procs = 0;
}

static bool pid_listed(const struct agent_opts *o, uint32_t pid)
{
	size_t i;

	for (i = 0; i < o->nr_pids; i++)
		if ((uint32_t)o->pids[i] == pid)
			return true;
	return false;
}

/* The executable's file name, "" when /proc has none (a kernel thread,
 * or a process already gone). */
static bool exe_name(uint32_t pid, char *out, size_t len, bool *kthread)
{
	char fn[64], buf[PATH_MAX];
	ssize_t n;
	const char *b;

	*kthread = false;
	snprintf(fn, sizeof(fn), "/proc/%u/exe", pid);
	n = readlink(fn, buf, sizeof(buf) - 1);
	if (n <= 0) {
		snprintf(fn, sizeof(fn), "/proc/%u", pid);
		/* there, but no executable: a kernel thread */
		*kthread = errno == ENOENT && !access(fn, F_OK);
		return false;
	}
	buf[n] = 0;
	/* " (deleted)": the file was replaced or removed while running */
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)"))
		buf[n - 10] = 0;
	b = strrchr(buf, '/');
	b = b ? b + 1 : buf;
	n = (ssize_t)strlen(b);
	if ((size_t)n >= len)
		n = (ssize_t)len - 1;
	memcpy(out, b, (size_t)n);
	out[n] = 0;
	return true;
}

/* --cgroup: is a process in cgroup cg (NULL: not known) kept? */
static bool cgroup_keep(const struct agent_opts *o, const char *cg)
{
	size_t n;

	if (!o->cgroup)
		return true;
	n = strlen(o->cgroup);
	while (n > 1 && o->cgroup[n - 1] == '/')
		n--;
	return cg && !strncmp(cg, o->cgroup, n) &&
	       (cg[n] == '/' || cg[n] == 0 || n == 1);
}

/* --pid, --comm, --cgroup: is process pid (its comm, its cgroup path or
 * NULL when unknown) kept? */
static bool filters_keep(const struct agent_opts *o, uint32_t pid,
			 const char *comm, const char *cg)
{
	if (o->nr_pids && !pid_listed(o, pid))
		return false;
	if (o->comm_re && regexec(o->comm_re, comm, 0, NULL, 0))
		return false;
	return cgroup_keep(o, cg);
}

/*
 * The record pipeline's question before it unwinds a sample (its opts'
 * want): the filters as proc_get() applies them (the pipeline asks
 * before this sample's records reach the machine model, so --comm is
 * judged on the name the pipeline kept from the records, and the rest
 * from /proc now).  Not readable (gone, a race): yes, and proc_get()
 * decides as ever.
 * Processes left out cost no unwind, no table and no stack copy: with
 * --comm on a busy host, the host's other programs no longer set the
 * agent's memory.
 */
static bool want_pid(void *ctx, uint32_t pid, const char *rec_comm)
{
	const struct agent_opts *o = ctx;
	char comm[64], cg[1024];
	ssize_t n;

	if (!pid)
		return false;
	if (o->nr_pids && !pid_listed(o, pid))
		return false;
	if (o->comm_re) {
		/*
		 * The name its records gave at this sample's time, as
		 * proc_get() judges it (the machine model's): /proc has the
		 * name of now, which for a sample taken before an exec (a
		 * container's sh and chroot before its program) is the
		 * program's, and for a process gone (a build's compilers
		 * on a busy host) nothing.  /proc only for a process whose
		 * records gave no name (running before the recording).
		 */
		if (*rec_comm) {
			snprintf(comm, sizeof(comm), "%s", rec_comm);
		} else {
			n = sfp_proc_read((int)pid, "comm", comm,
					  sizeof(comm) - 1);
			if (n <= 0)
				return true;
			comm[n] = 0;
			if (comm[n - 1] == '\n')
				comm[n - 1] = 0;
		}
		if (regexec(o->comm_re, comm, 0, NULL, 0))
			return false;
	}
	if (o->cgroup && agent_read_cgroup((pid_t)pid, cg, sizeof(cg)))
		return cgroup_keep(o, cg);
	return true;
}

static struct proc_info *proc_get(struct agent *a, uint32_t pid)
{
	const struct agent_opts *o = a->o;
	struct proc_info *p;
	char cg[1024] = "", exe[sizeof(((struct proc_info *)0)->service)];
	const char *comm;
	bool have_cg, kthread;

	for (p = a->procs[pid % PROC_BUCKETS]; p; p = p->next)
		if (p->pid == pid)
			return p;
	if (a->nr_procs >= (o->proc_budget ? o->proc_budget
					   : DEFAULT_PROC_BUDGET))
		proc_forget_all(a);	/* re-read lazily */
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	comm = sfp_machine__comm(a->m, pid);
	if (comm[0] == ':')	/* perf's ":<tid>": no COMM seen yet */
		comm = "unknown";
	have_cg = agent_read_cgroup((pid_t)pid, cg, sizeof(cg));
	if (have_cg)
		agent_container_id(cg, p->container, sizeof(p->container));
	switch (o->service_from) {
	case AGENT_SERVICE_EXE:
		if (exe_name(pid, exe, sizeof(exe), &kthread))
			snprintf(p->service, sizeof(p->service), "%s", exe);
		else if (kthread)
			snprintf(p->service, sizeof(p->service), "kernel");
		else
			snprintf(p->service, sizeof(p->service), "%s", comm);
		break;
	case AGENT_SERVICE_COMM:
		snprintf(p->service, sizeof(p->service), "%s", comm);
		break;
	case AGENT_SERVICE_CGROUP:
		if (have_cg)
			agent_cgroup_service(cg, p->service, sizeof(p->service));
		else
			snprintf(p->service, sizeof(p->service), "%s", comm);
		break;
	}
	if (!p->service[0])
		snprintf(p->service, sizeof(p->service), "unknown");
	p->kept = pid != 0 &&	/* the idle task is not a service */
		  filters_keep(o, pid, comm, have_cg ? cg : NULL);
	p->next = a->procs[pid % PROC_BUCKETS];
	a->procs[pid % PROC_BUCKETS] = p;
	a->nr_procs++;
	return p;
}

/* --- the open window --------------------------------------------------- */

/* A live profile of the agent's samples (off_cpu: of its blocks). */
static int agg_new(const struct agent *a, bool off_cpu,
		   struct sfp_live_profile **out)
{
	SFP_OPTS(sfp_live_profile_opts, o, .m = a->m, .sym = a->sym,
		 .no_symbols = a->o->no_symbolize, .freq = a->o->freq,
		 .off_cpu = off_cpu);

	return sfp_live_profile__new(&o, out);
}

static struct service *service_get(struct agent *a, const struct proc_info *pi)
{
	size_t kl = strlen(pi->service) + 1 + strlen(pi->container) + 1, i;
	struct service *s;
	char *key = malloc(kl);

	if (!key)
		return NULL;
	memcpy(key, pi->service, strlen(pi->service) + 1);
	memcpy(key + strlen(pi->service) + 1, pi->container,
	       strlen(pi->container) + 1);
	for (i = 0; i < a->nr_svc; i++)
		if (!strcmp(a->svc[i].name, pi->service) &&
		    !strcmp(a->svc[i].container, pi->container)) {
			free(key);
			return &a->svc[i];
		}
	if (a->nr_svc == a->cap_svc) {
		size_t nc = a->cap_svc ? a->cap_svc * 2 : 16;
		struct service *n = realloc(a->svc, nc * sizeof(*n));

		if (!n) {
			free(key);
			return NULL;
		}
		a->svc = n;
		a->cap_svc = nc;
	}
	s = &a->svc[a->nr_svc];
	memset(s, 0, sizeof(*s));
	if (agg_new(a, false, &s->agg)) {
		free(key);
		return NULL;
	}
	s->key = key;
	s->name = key;
	s->container = key + strlen(pi->service) + 1;
	a->nr_svc++;
	return s;
}

/*
 * A window's bytes in one format, made when the first sink that wants
 * that format comes: pprof for the pprof sinks, OTLP for the OTLP ones,
 * each written from the profile's tables once (an OTLP sink is not
 * handed pprof to unpack).
 */
struct window_bytes {
	void *buf;
	size_t len;
	int err;		/* why there are none */
	bool tried;
};

/* One window of service s: its CPU profile (agg), or with name "off_cpu"
 * its off-CPU one. */
static void submit_agg(struct agent *a, struct service *s,
		       struct sfp_live_profile *agg, const char *name,
		       uint64_t start, uint64_t end)
{
	struct agent_label labels[4];
	struct agent_window w = { .labels = labels, .name = name };
	struct window_bytes fmt[2] = { 0 };	/* [0] pprof, [1] OTLP */
	const char *rl[4][2];
	char pid[16];
	size_t i;
	uint32_t one_pid = sfp_live_profile__pid(agg);
	int err;

	const char *sl[3][2] = { { "service_name", s->name },
				 { "host", a->host },
				 { "container_id", s->container } };
	size_t nr_sl = s->container[0] ? 3 : 2;

	labels[w.nr_labels++] = (struct agent_label){ "service_name", s->name };
	labels[w.nr_labels++] = (struct agent_label){ "host", a->host };
	if (s->container[0])
		labels[w.nr_labels++] =
			(struct agent_label){ "container_id", s->container };
	if (one_pid) {
		snprintf(pid, sizeof(pid), "%u", one_pid);
		labels[w.nr_labels++] = (struct agent_label){ "pid", pid };
	}
	for (i = 0; i < w.nr_labels; i++) {
		rl[i][0] = labels[i].key;
		rl[i][1] = labels[i].value;
	}
	w.start_ns = start;
	w.end_ns = end;
	a->mt.profiles++;
	for (i = 0; i < a->o->nr_sinks; i++) {
		struct agent_sink *sk = a->o->sinks[i];
		bool otlp = agent_sink__wants_otlp(sk);
		struct window_bytes *b = &fmt[otlp];

		if (!b->tried) {
			struct agent_window_otlp wo = {
				.start_ns = start, .end_ns = end,
				.seq = a->mt.profiles,
				.labels = (const char *const (*)[2])sl,
				.nr_labels = nr_sl,
				.resource = (const char *const (*)[2])rl,
				.nr_resource = w.nr_labels,
			};

			b->tried = true;
			b->err = otlp ? agent_window_encode_otlp(agg, &wo,
								 &b->buf,
								 &b->len) :
			      agent_window_encode(agg, start, end, false,
						  (const char *const (*)[2])sl,
						  nr_sl, &b->buf, &b->len);
			if (b->err)
				pr_warn("agent: window of %s not encoded as %s: %s",
					s->name, otlp ? "OTLP" : "pprof",
					sfp_strerror(b->err));
		}
		if (b->err)
			continue;
		w.pprof = b->buf;
		w.pprof_len = b->len;
		w.otlp = otlp;
		if ((err = agent_sink__submit(sk, &w)))
			pr_warn("agent: window of %s not queued for %s: %s",
				s->name, agent_sink__name(sk),
				sfp_strerror(err));
	}
	free(fmt[0].buf);
	free(fmt[1].buf);
}

static void submit_window(struct agent *a, struct service *s, uint64_t start,
			  uint64_t end)
{
	submit_agg(a, s, s->agg, NULL, start, end);
}

/*
 * The symbol tables the symbolizer holds, estimated by the sizes of the
 * files it was asked about (their symbol tables, line tables and the
 * index over them are a fraction of that): each mapping a closed window
 * used counts once per symbolizer.  Past the budget the symbolizer is
 * replaced, and the tables are read again as frames need them.
 */
static void symbols_account(struct agent *a, struct sfp_live_profile *g)
{
	const struct sfp_profile *p = sfp_live_profile__profile(g);
	size_t i;

	for (i = 0; i < sfp_profile__nr_mappings(p); i++) {
		const struct sfp_profile_mapping *mp = sfp_profile__mapping(p, i);
		uint32_t key = sfp_live_profile__file_key(g, i);
		struct stat sb;

		if (mp->kind != SFP_PROFILE_USER || !mp->path ||
		    mp->path[0] != '/')
			continue;
		if (key >= a->cap_seen) {
			size_t nc = (size_t)key * 2 + 64;
			uint8_t *n = realloc(a->dso_seen, nc);

			if (!n)
				continue;
			memset(n + a->cap_seen, 0, nc - a->cap_seen);
			a->dso_seen = n;
			a->cap_seen = nc;
		}
		if (a->dso_seen[key])
			continue;
		a->dso_seen[key] = 1;
		if (!stat(mp->path, &sb))
			a->sym_bytes += (uint64_t)sb.st_size;
	}
}

/*
 * What the symbolizer keeps per process (an entry per DSO that shares
 * another process's table, its perf map) for the processes gone: let go
 * once no window nor pull can hold their handles.  On a host starting 20
 * programs a second the agent grew by 0.6-0.9 MB a minute without it
 * (bench/agent-soak.sh).  With pulls open the list waits for them.
 */
static void symbols_forget_gone(struct agent *a)
{
	if (!a->nr_gone || a->pulls || !a->sym)
		return;
	a->mt.symbol_entries_forgotten +=
		sfp_symbolizer__forget_pids(a->sym, a->gone, a->nr_gone);
	a->nr_gone = 0;
}

/*
 * The agent's symbolizer: raw names (the backend demangles), and the
 * pages of files it read given back once their table is made -- a
 * window looks up a few hundred names, not libLLVM's 12 MB of symbols
 * and relocations.
 */
static int symbolizer_new(struct sfp_symbolizer **out)
{
	SFP_OPTS(sfp_symbolizer_opts, so, .no_demangle = true,
		 .flags = SFP_SYMBOLIZER_RELEASE_PAGES);

	return sfp_symbolizer__new(&so, out);
}

static void symbols_budget(struct agent *a)
{
	uint64_t budget = a->o->symbol_budget ? a->o->symbol_budget
					      : DEFAULT_SYMBOL_BUDGET;
	struct sfp_symbolizer *n = NULL;
	struct agent_pull *pl;

	if (a->sym_bytes <= budget)
		return;
	if (symbolizer_new(&n))
		return;
	for (pl = a->pulls; pl; pl = pl->next)
		sfp_live_profile__set_symbolizer(pl->agg, n);
	a->sym_tables_gone += sfp_symbolizer__tables_loaded(a->sym);
	sfp_symbolizer__free(&a->sym);
	a->sym = n;
	memset(a->dso_seen, 0, a->cap_seen);
	pr_info("agent: symbol tables let go (%llu MB of files read)",
		(unsigned long long)(a->sym_bytes >> 20));
	a->sym_bytes = 0;
	a->mt.symbol_resets++;
	malloc_trim(0);
}

/*
 * Give back the file pages the agent has read since the last time: they
 * are the page cache's, mapped by the symbolizer and the unwinder, and
 * counted as the agent's resident memory while mapped (libLLVM's 12 MB
 * of relocations and symbols, the text pages of every PC checked).
 * And the heap's free pages: the arenas keep what a burst freed (twenty
 * containers starting at once left 0.7 MB free in one thread's arena, 7
 * Dec 2026) until a trim asks for it, the top of each arena only past the
 * trim threshold.
 */
static void release_pages(struct agent *a)
{
	sfp_symbolizer__release_pages(a->sym);
	sfp_rec_pipe__release_pages(a->p);
	sfp_record__release_pages(a->r);
	malloc_trim(0);
}

/* Labels of processes that are gone: a sample delivered after its
 * process's EXIT (it waited for its user chain) makes an entry that no
 * EXIT will remove. */
static void proc_sweep(struct agent *a)
{
	size_t i;

	for (i = 0; i < PROC_BUCKETS; i++) {
		struct proc_info **pp = &a->procs[i], *p;

		while ((p = *pp)) {
			if (p->pid && kill((pid_t)p->pid, 0) && errno == ESRCH) {
				*pp = p->next;
				free(p);
				a->nr_procs--;
			} else {
				pp = &p->next;
			}
		}
	}
}

/* How far processing trails the rings now (0 when nothing waits). */
static uint64_t lag_now(struct agent *a, uint64_t now_mono)
{
	uint64_t lag = 0;

	if (sfp_record__queued(a->r) && a->last_time &&
	    now_mono > a->last_time)
		lag = now_mono - a->last_time;
	a->mt.lag_ns = lag;
	if (lag > a->mt.lag_max_ns)
		a->mt.lag_max_ns = lag;
	return lag;
}

/* The off-CPU profile of a service's window, if it blocked at all. */
static void off_window(struct agent *a, struct service *s, uint64_t end_real)
{
	if (!s->off_agg)
		return;
	if (sfp_live_profile__samples(s->off_agg))
		submit_agg(a, s, s->off_agg, "off_cpu", a->win_start_real,
			   end_real);
	symbols_account(a, s->off_agg);
	sfp_live_profile__free(&s->off_agg);
}

static void close_window(struct agent *a, uint64_t now_mono)
{
	uint64_t end_real = a->win_start_real + (now_mono - a->win_start_mono);
	uint64_t late = lag_now(a, now_mono);
	size_t i;

	a->mt.window_lateness_ns = late;
	if (late > a->mt.window_lateness_max_ns)
		a->mt.window_lateness_max_ns = late;
	if (late > 1000000000ull)
		a->mt.windows_late++;

	for (i = 0; i < a->nr_svc; i++) {
		if (sfp_live_profile__samples(a->svc[i].agg))
			submit_window(a, &a->svc[i], a->win_start_real, end_real);
		symbols_account(a, a->svc[i].agg);
		sfp_live_profile__free(&a->svc[i].agg);
		off_window(a, &a->svc[i], end_real);
		free(a->svc[i].key);
	}
	a->nr_svc = 0;
	a->mt.windows++;
	a->win_start_mono = now_mono;
	a->win_start_real = end_real;
	symbols_forget_gone(a);
	symbols_budget(a);
	proc_sweep(a);
}

/* --- pulls --------------------------------------------------------------- */

/*
 * The pull figures of /metrics, set as pulls begin and end (sh.lock
 * held), not at the next snapshot: a client that waits for its pull's
 * span to begin (sfprof_agent_pulls_open) must not see the last pull's
 * figure a second late, nor, once its pull is answered, a gauge that
 * still counts it.
 */
static void pull_figures(struct agent *a)
{
	struct agent_pull *pl;

	a->mt.pulls_open = 0;
	for (pl = a->pulls; pl; pl = pl->next)
		a->mt.pulls_open++;
	a->sh.metrics.pulls_open = a->mt.pulls_open;
	a->sh.metrics.pulls = a->mt.pulls;
}

static void take_pulls(struct agent *a, uint64_t now_mono)
{
	struct agent_pull *in, *p;
	bool taken = false;

	pthread_mutex_lock(&a->sh.lock);
	in = a->sh.incoming;
	a->sh.incoming = NULL;
	pthread_mutex_unlock(&a->sh.lock);
	while ((p = in)) {
		in = p->next;
		p->start_mono = now_mono;
		p->end_mono = now_mono + p->seconds * 1000000000ull;
		p->start_real = sfp_clock_ns(CLOCK_REALTIME);
		p->err = agg_new(a, p->off_cpu, &p->agg);
		if (p->pid) {
			struct proc_info *pi = proc_get(a, p->pid);

			if (pi) {
				snprintf(p->service, sizeof(p->service), "%s",
					 pi->service);
				snprintf(p->container, sizeof(p->container),
					 "%s", pi->container);
			}
		}
		p->next = a->pulls;
		a->pulls = p;
		taken = true;
	}
	if (taken) {
		pthread_mutex_lock(&a->sh.lock);
		pull_figures(a);
		pthread_mutex_unlock(&a->sh.lock);
	}
}

/* Free a pull its client left (the request thread has let go of it). */
static void drop_pull(struct agent_pull *p)
{
	sfp_live_profile__free(&p->agg);
	free(p->body);
	if (p->done_fd >= 0)
		close(p->done_fd);
	free(p);
}

/* Encode the pulls whose span is over (all of them with force); drop
 * those whose client went away. */
static void finish_pulls(struct agent *a, uint64_t now_mono, bool force)
{
	struct agent_pull **pp = &a->pulls, *p;

	while ((p = *pp)) {
		bool gone;

		pthread_mutex_lock(&a->sh.lock);
		gone = p->abandoned;
		pthread_mutex_unlock(&a->sh.lock);
		if (gone) {
			*pp = p->next;
			drop_pull(p);
			pthread_mutex_lock(&a->sh.lock);
			pull_figures(a);
			pthread_mutex_unlock(&a->sh.lock);
			continue;
		}
		/* over when the records have passed its end (they come in
		 * time order), or, when the loop lags, a grace later */
		if (!force && a->last_time < p->end_mono &&
		    !(now_mono >= p->end_mono + PULL_GRACE_NS &&
		      !sfp_record__queued(a->r)) &&
		    now_mono < p->end_mono + PULL_MAX_LAG_NS) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		if (!p->err) {
			const char *sl[3][2] = {
				{ "host", a->host },
				{ "service_name", p->service },
				{ "container_id", p->container },
			};

			p->err = agent_window_encode(
				p->agg, p->start_real,
				p->start_real + (now_mono - p->start_mono), true,
				(const char *const (*)[2])sl,
				!p->service[0] ? 1 : p->container[0] ? 3 : 2,
				&p->body, &p->len);
		}
		sfp_live_profile__free(&p->agg);
		pthread_mutex_lock(&a->sh.lock);
		if (p->abandoned) {
			/* its client left while it was encoded */
			pull_figures(a);
			pthread_mutex_unlock(&a->sh.lock);
			drop_pull(p);
			continue;
		}
		a->mt.pulls++;
		pull_figures(a);
		p->done = true;		/* the request thread owns p now */
		{
			uint64_t one = 1;

			(void)!write(p->done_fd, &one, sizeof(one));
		}
		pthread_mutex_unlock(&a->sh.lock);
	}
}

/* --- records -------------------------------------------------------------- */

/* An off-CPU sample (--off-cpu): its period is the blocked ns. */
static int on_off_cpu(struct agent *a, const struct sfp_perf_event *ev,
		      enum sfp_stitch_how how)
{
	struct proc_info *pi = proc_get(a, ev->sample.pid);
	struct agent_pull *pl;
	struct service *s;
	int err;

	if (!pi)
		return -ENOMEM;
	if (!pi->kept)
		return 0;
	s = service_get(a, pi);
	if (!s)
		return -ENOMEM;
	if (!s->off_agg && (err = agg_new(a, true, &s->off_agg)))
		return err;
	if ((err = sfp_live_profile__add(s->off_agg, ev, how)))
		return err;
	for (pl = a->pulls; pl; pl = pl->next)
		if (!pl->err && pl->off_cpu &&
		    (!pl->pid || pl->pid == ev->sample.pid) &&
		    ev->sample.time >= pl->start_mono &&
		    ev->sample.time < pl->end_mono &&
		    (err = sfp_live_profile__add(pl->agg, ev, how)))
			pl->err = err;
	return 0;
}

static int on_event(void *ctx, const struct sfp_perf_event *ev,
		    enum sfp_stitch_how how)
{
	struct agent *a = ctx;
	struct proc_info *pi;
	struct service *s;
	struct agent_pull *pl;
	int err;

	if (ev->sample.time > a->last_time)
		a->last_time = ev->sample.time;
	if (a->pulls && !(++a->events & 255))
		finish_pulls(a, sfp_clock_ns(CLOCK_MONOTONIC), false);
	switch (ev->type) {
	case SFP_PERF_RECORD_SAMPLE:
		if (a->off_out && ev->evsel == a->off_out) {
			struct sfp_perf_event off = *ev;

			off.evsel = &a->off_evsel;
			return on_off_cpu(a, &off, how);
		}
		a->mt.samples++;
		pi = proc_get(a, ev->sample.pid);
		if (!pi)
			return -ENOMEM;
		if (!pi->kept)
			return 0;
		a->mt.samples_kept++;
		/* windows are for the sinks: with none (pulls only), no
		 * window is built, encoded or symbolized */
		if (a->o->nr_sinks) {
			s = service_get(a, pi);
			if (!s)
				return -ENOMEM;
			if ((err = sfp_live_profile__add(s->agg, ev, how)))
				return err;
		}
		for (pl = a->pulls; pl; pl = pl->next)
			if (!pl->err && !pl->off_cpu &&
			    (!pl->pid || pl->pid == ev->sample.pid) &&
			    ev->sample.time >= pl->start_mono &&
			    ev->sample.time < pl->end_mono &&
			    (err = sfp_live_profile__add(pl->agg, ev, how)))
				pl->err = err;
		return 0;
	case SFP_PERF_RECORD_EXIT:
		/* the process (or thread) is gone: so is what we knew */
		sfp_machine__exit(a->m, ev->fork.pid, ev->fork.tid);
		if (ev->fork.pid == ev->fork.tid) {
			proc_forget(a, ev->fork.pid);
			proc_gone(a, ev->fork.pid);
		}
		return 0;
	case SFP_PERF_RECORD_COMM:
		/* exec: another program, maybe another service */
		if (ev->misc & (1u << 13) /* PERF_RECORD_MISC_COMM_EXEC */)
			proc_forget(a, ev->comm.pid);
		return sfp_machine__event(a->m, ev);
	case SFP_PERF_RECORD_FORK:
		/* a reused pid starts afresh */
		if (ev->fork.pid != ev->fork.ppid &&
		    ev->fork.pid == ev->fork.tid) {
			proc_forget(a, ev->fork.pid);
			sfp_machine__exit(a->m, ev->fork.pid, ev->fork.tid);
		}
		return sfp_machine__event(a->m, ev);
	case SFP_PERF_RECORD_LOST:
		return 0;	/* the session counts them (snapshot()) */
	default:
		return sfp_machine__event(a->m, ev);
	}
}

/* The pipeline's events (an sfp_rec_event_fn): typed, no bytes. */
static int pipe_event(void *ctx, const struct sfp_perf_event *ev,
		      enum sfp_stitch_how how)
{
	struct agent *a = ctx;

	/* a signal, or the end's time is up: leave the rest unread */
	if (!(++a->records & 255)) {
		if (a->final ? sfp_clock_ns(CLOCK_MONOTONIC) > a->final_deadline
			     : *a->o->stop != 0)
			return -ECANCELED;
	}
	switch (ev->type) {
	case SFP_PERF_RECORD_SAMPLE:
	case SFP_PERF_RECORD_MMAP:
	case SFP_PERF_RECORD_MMAP2:
	case SFP_PERF_RECORD_COMM:
	case SFP_PERF_RECORD_FORK:
	case SFP_PERF_RECORD_EXIT:
	case SFP_PERF_RECORD_LOST:
		return on_event(a, ev, how);
	default:
		return 0;	/* not the agent's */
	}
}

static void snapshot(struct agent *a)
{
	struct sfp_rec_pipe_stats ps;
	size_t i;

	sfp_rec_pipe__stats(a->p, &ps);
	memcpy(a->mt.stops, ps.stops, sizeof(a->mt.stops));
	a->mt.off_cpu = a->o->off_cpu;
	a->mt.offcpu = ps.offcpu;
	a->mt.tables_pending = ps.tables_pending;
	a->mt.tables_built = ps.tables_built;
	a->mt.tables_dropped = 0;
	a->mt.before_table = ps.tables_not_ready;
	a->mt.unwind_files = ps.unwind_files;
	a->mt.tables_reused = ps.tables_revived;
	a->mt.tables_expired = ps.tables_expired;
	a->mt.tables_idle = ps.tables_idle;
	a->mt.tables_idle_bytes = ps.tables_idle_bytes;
	a->mt.not_unwound = ps.unwanted;
	a->mt.undecoded = ps.undecoded;
	a->mt.symbol_tables = a->sym_tables_gone +
			      sfp_symbolizer__tables_loaded(a->sym);
	if (a->o->bpf) {
		struct sfp_bpf_defer_stats bs;

		sfp_bpf_defer__stats(a->o->bpf, &bs);
		memcpy(a->mt.stops, bs.stops, sizeof(a->mt.stops));
		a->mt.tables_pending += bs.tables_pending;
		a->mt.tables_built += bs.tables_loaded + bs.tables_failed;
		a->mt.tables_dropped += bs.tables_dropped;
		a->mt.before_table += bs.no_table_unwinds;
	}
	a->mt.lost = 0;
	for (i = 0; i < (size_t)sfp_record__nr_cpus(a->r); i++)
		a->mt.lost += sfp_record__lost(a->r, (int)i);
	a->mt.procs = sfp_machine__nr_procs(a->m);
	a->mt.labeled = a->nr_procs;
	a->mt.queued_records = sfp_record__queued(a->r);
	lag_now(a, sfp_clock_ns(CLOCK_MONOTONIC));
	a->mt.nr_sinks = 0;
	for (i = 0; i < a->o->nr_sinks && i < AGENT_MAX_SINKS; i++) {
		agent_sink__stats(a->o->sinks[i], &a->mt.sinks[i].st);
		snprintf(a->mt.sinks[i].name, sizeof(a->mt.sinks[i].name),
			 "%s", agent_sink__name(a->o->sinks[i]));
		a->mt.nr_sinks++;
	}
	a->mt.call_graph = sfp_record__call_graph_name(a->o->call_graph);
	pthread_mutex_lock(&a->sh.lock);
	a->sh.metrics = a->mt;
	pthread_mutex_unlock(&a->sh.lock);
}

static void say(const struct agent_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One line for the caller's o->say (nothing when it has none). */
static void say(const struct agent_opts *o, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!o->say)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	o->say(o->say_ctx, line);
}

/*
 * The account at exit, the figures /metrics gave while running, so that
 * what happened to every window is known after the last scrape: each is
 * delivered, dropped (queue full), failed (refused) or unsent (still
 * queued when the flush deadline passed).
 */
static void summary(const struct agent *a)
{
	size_t i;

	pr_debug("agent: the loop's CPU: %.1f ms reading records, %.1f ms "
		 "closing windows, %.1f ms for /metrics, %.1f ms giving pages "
		 "back, %.1f ms in all (%llu rounds)", a->cpu_records / 1e6,
		 a->cpu_windows / 1e6, a->cpu_snapshots / 1e6,
		 a->cpu_release / 1e6, a->cpu_loop / 1e6,
		 (unsigned long long)a->loops);
	say(a->o, "%llu samples, %llu kept, %llu lost; %llu windows, "
		"%llu profiles",
		(unsigned long long)a->mt.samples,
		(unsigned long long)a->mt.samples_kept,
		(unsigned long long)a->mt.lost,
		(unsigned long long)a->mt.windows,
		(unsigned long long)a->mt.profiles);
	for (i = 0; i < a->o->nr_sinks; i++) {
		struct agent_sink_stats st;

		agent_sink__stats(a->o->sinks[i], &st);
		say(a->o, "sink %s: delivered=%llu dropped=%llu failed=%llu "
		    "retries=%llu unsent=%llu",
			agent_sink__name(a->o->sinks[i]),
			(unsigned long long)st.delivered,
			(unsigned long long)st.dropped,
			(unsigned long long)st.failed,
			(unsigned long long)st.retries,
			(unsigned long long)st.unsent);
	}
}

/* A step of the recorder failed: said (the kernel's records and the
 * start say nothing more than the library did).  Return: err, which
 * ends the agent. */
static int recorder_failed(void *ctx, enum sfp_recorder_step step, int err)
{
	struct agent *a = ctx;

	a->opened = step != SFP_RECORDER_SESSION;
	if (step == SFP_RECORDER_SESSION)
		pr_warn("agent: cannot sample: %s", sfp_strerror(err));
	else if (step == SFP_RECORDER_PIPELINE)
		pr_warn("agent: cannot start the record pipeline: %s",
			sfp_strerror(err));
	else if (step == SFP_RECORDER_ATTACH)
		pr_warn("agent: bpf-defer: cannot attach: %s",
			sfp_strerror(err));
	else if (step == SFP_RECORDER_ASYNC_TABLES)
		pr_warn("agent: cannot start the tables' thread: %s",
			sfp_strerror(err));
	else if (step == SFP_RECORDER_PROCS)
		pr_warn("agent: reading /proc: %s", sfp_strerror(err));
	return err;
}

/* Session and pipeline made, before the kernel's records come: the
 * off-CPU event, the machine and the symbolizer they go to.  Return: 0
 * or -errno. */
static int recorder_ready(void *ctx, struct sfp_recorder *rc)
{
	struct agent *a = ctx;
	int err;

	a->opened = true;
	a->r = sfp_recorder__session(rc);
	a->p = sfp_recorder__pipeline(rc);
	if (a->o->off_cpu) {
		int oe = sfp_record__off_cpu_evsel(a->r);

		if (oe < 0 || !sfp_rec_pipe__is_offcpu(a->p, oe) ||
		    !(a->off_out = sfp_rec_pipe__evsel(a->p, oe))) {
			pr_warn("agent: --off-cpu: no off-CPU event "
				"(--call-graph sframe only)");
			return -EOPNOTSUPP;
		}
		sfp_record_perf_attr(sfp_rec_pipe__out_attr(a->p, oe),
				     &a->off_evsel.attr);
	}
	if ((err = sfp_machine__new(&a->m)) ||
	    (err = symbolizer_new(&a->sym)))
		return err;
	return 0;
}

/* The recorder: session, pipeline, bpf-defer attached, the kernel's
 * records.  Return: 0 or -errno (said). */
static int setup(struct agent *a)
{
	const struct agent_opts *o = a->o;
	SFP_OPTS(sfp_record_opts, ro, .call_graph = o->call_graph,
		 .freq = o->freq, .system_wide = true,
		 .mmap_pages = o->mmap_pages,
		 /* build-ids from the files (profile/symbolize.c): with
		  * attr.build_id, the perf its users run would abort */
		 .no_build_id = true,
		 /* one emptied queue block kept, not record's four: at 99
		  * Hz a fresh block's faults cost little, and four kept
		  * between page releases were 0.2 MB of the agent's RSS */
		 .queue_spare_blocks = 1,
		 /* record's off-CPU machinery: sched_switch + switch-ins */
		 .off_cpu = o->off_cpu);
	/* With off-CPU time the user chains are inline: a block's sample
	 * comes at its switch-in, and a thread that blocks again and again
	 * from one stack keeps one cookie, whose deferred record would come
	 * only when its stack changes, long after the window closed. */
	/* fill_build_ids: the kernel's MMAP2 records name a file by device
	 * and inode, and every container's copy of an image is another
	 * inode (another tmpfs, overlay layer, mount namespace): keyed so,
	 * the unwinder built one table per container and per short-lived
	 * process's namespace.  With the build-id read from the mapped
	 * inode (once per inode) one image is one table and one symbol set,
	 * however many containers run it (issue 35). */
	SFP_OPTS(sfp_rec_pipe_opts, po, .max_depth = o->max_depth,
		 .fill_build_ids = true,
		 .want = o->nr_pids || o->comm_re || o->cgroup ? want_pid : NULL,
		 .want_ctx = (void *)o,
		 .inline_mode = o->off_cpu,
		 .off_cpu_thresh_ns = o->off_cpu_thresh_ns,
		 .off_cpu_max_rate = o->off_cpu_max_rate,
		 .on_event = pipe_event, .event_ctx = a,
		 /* tables are built off the reading thread: a program the
		  * machine starts must not make the agent fall behind the
		  * rings */
		 .async_tables = true,
		 .table_linger_ms = TABLE_LINGER_MS,
		 .table_linger_bytes = TABLE_LINGER_BYTES);
	SFP_OPTS(sfp_recorder_opts, rco, .poll_ms = READER_POLL_MS,
		 /* named, so that its CPU shows apart in /proc */
		 .thread_name = "sfp-reader",
		 .record = &ro, .pipe = &po,
		 /* BPF's tables too are built off the reading thread */
		 .async_tables = true,
		 .ctx = a, .failed = recorder_failed, .ready = recorder_ready);
	int err;

	if (gethostname(a->host, sizeof(a->host) - 1))
		snprintf(a->host, sizeof(a->host), "localhost");
	a->bk.defer = o->bpf;
	sfp_bpf_backends__ops(&a->bk, false, false, &rco);
	err = sfp_recorder__open(&rco, &a->rc);
	if (err) {
		a->r = NULL;	/* the recorder's, gone with it */
		a->p = NULL;
	}
	return err;
}

/*
 * How long the loop may sleep: its period, but no later than the open
 * window's end, and LOOP_MS while pulls are open (a pull ends when the
 * records pass its end, which only reading finds out).
 */
static int loop_timeout_ms(const struct agent *a, uint64_t now,
			   uint64_t period_ms)
{
	uint64_t t = (a->pulls ? LOOP_MS : period_ms) * 1000000ull;
	uint64_t end = a->win_start_mono + a->o->interval_ns;

	if (end <= now)
		return 0;
	if (end - now < t)
		t = end - now;
	return (int)((t + 999999) / 1000000);
}

/* Sleep up to timeout_ms, until someone writes wake_fd, or until the BPF
 * side asks for a table (bpf_fd, -1: none). */
static void loop_wait(int wake_fd, int bpf_fd, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = wake_fd, .events = POLLIN },
		{ .fd = bpf_fd, .events = POLLIN },
	};
	uint64_t v;

	if (poll(pfd, bpf_fd >= 0 ? 2 : 1, timeout_ms) > 0 &&
	    (pfd[0].revents & POLLIN))
		(void)!read(wake_fd, &v, sizeof(v));
}

int agent_run(const struct agent_opts *o)
{
	struct agent a = { .o = o };
	struct agent_listener *l = NULL;
	bool reader_running = false;
	uint64_t now, last_snapshot = 0, last_release = 0, t0, t1;
	uint64_t period = LOOP_MS;
	sig_atomic_t hup, last_hup = o->hup ? *o->hup : 0;
	size_t i;
	int err;

	a.own_wake_fd = -1;
	a.sh.wake_fd = o->wake_fd;
	if (a.sh.wake_fd < 0) {
		a.sh.wake_fd = a.own_wake_fd =
			eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (a.sh.wake_fd < 0)
			return -errno;
	}
	pthread_mutex_init(&a.sh.lock, NULL);
	pthread_cond_init(&a.sh.cond, NULL);
	a.sh.max_seconds = o->max_pull_seconds ? o->max_pull_seconds : 3600;
	a.sh.off_cpu = o->off_cpu;
	if ((err = setup(&a)))
		goto out;
	if (o->listen) {
		struct agent_listen_limits lim = {
			.max_conn = o->listen_max_conn ? o->listen_max_conn :
				    AGENT_LISTEN_MAX_CONN,
			.timeout_s = o->listen_timeout_s ? o->listen_timeout_s :
				     AGENT_LISTEN_TIMEOUT_S,
			.max_pulls = o->max_pulls ? o->max_pulls :
				     AGENT_MAX_PULLS,
		};

		if ((err = agent_listener__start(o->listen, &lim, &a.sh, &l)))
			goto out;
		say(o, "listening on %s (port %u)", o->listen,
		    agent_listener__port(l));
	}
	/* sampling, and the processes already running: their maps from
	 * /proc */
	if ((err = sfp_recorder__start(a.rc)))
		goto out;
	reader_running = sfp_recorder__start_reader(a.rc);
	a.win_start_mono = sfp_clock_ns(CLOCK_MONOTONIC);
	a.win_start_real = sfp_clock_ns(CLOCK_REALTIME);
	say(o, "sampling every CPU at %llu Hz, a window every %.3g s",
	    (unsigned long long)o->freq, (double)o->interval_ns / 1e9);
	while (!*o->stop) {
		int timeout = loop_timeout_ms(&a, sfp_clock_ns(CLOCK_MONOTONIC),
					      period);

		if (reader_running)
			loop_wait(a.sh.wake_fd,
				  o->bpf ? sfp_bpf_defer__wait_fd(o->bpf) : -1,
				  timeout);
		else
			sfp_record__poll(a.r, timeout);
		if (*o->stop)
			break;
		t0 = sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		a.loops++;
		err = sfp_recorder__read(a.rc, false);
		t1 = sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		a.cpu_records += t1 - t0;
		if (err == -ECANCELED)
			break;		/* the signal came while reading */
		if (err < 0) {
			pr_warn("agent: reading the rings: %s",
				sfp_strerror(err));
			goto stop;
		}
		period = err > LOOP_QUIET ? LOOP_MS
		       : period * 2 < LOOP_IDLE_MS ? period * 2 : LOOP_IDLE_MS;
		/* the short blocks' sums so far, into this window */
		if (o->off_cpu && (err = sfp_rec_pipe__flush_offcpu(a.p)) < 0 &&
		    err != -ECANCELED) {
			pr_warn("agent: off-CPU sums: %s", sfp_strerror(err));
			goto stop;
		}
		now = sfp_clock_ns(CLOCK_MONOTONIC);
		take_pulls(&a, now);
		finish_pulls(&a, now, false);
		hup = o->hup ? *o->hup : 0;
		if (hup != last_hup) {
			/* a supervisor's or a person's SIGHUP: the open
			 * window goes out now, a new one starts; the files
			 * sink opens its directory and files anew at each
			 * window, so nothing else needs reopening */
			last_hup = hup;
			a.mt.windows_hup++;
			pr_info("agent: SIGHUP: the open window delivered "
				"early, sampling goes on");
			t1 = sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
			close_window(&a, now);
			last_snapshot = 0;
			a.cpu_windows += sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t1;
		} else if (now - a.win_start_mono >= o->interval_ns) {
			t1 = sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
			close_window(&a, now);
			last_snapshot = 0;
			a.cpu_windows += sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t1;
		}
		if (now - last_release >= RELEASE_PAGES_NS) {
			t1 = sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
			release_pages(&a);
			last_release = now;
			a.cpu_release += sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t1;
		}
		if (now - last_snapshot >= SNAPSHOT_NS) {
			t1 = sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID);
			snapshot(&a);
			last_snapshot = now;
			a.cpu_snapshots += sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t1;
		}
		a.cpu_loop += sfp_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	}
	err = 0;
stop:
	/* no new pulls from here on */
	pthread_mutex_lock(&a.sh.lock);
	a.sh.stopping = true;
	pthread_mutex_unlock(&a.sh.lock);
	sfp_recorder__stop(a.rc);
	a.final = true;
	a.final_deadline = sfp_clock_ns(CLOCK_MONOTONIC) + FINAL_READ_NS;
	if (!err)	/* the last records, what was read when cancelled */
		sfp_recorder__finish(a.rc);
	now = sfp_clock_ns(CLOCK_MONOTONIC);
	take_pulls(&a, now);
	finish_pulls(&a, now, true);
	close_window(&a, now);
	snapshot(&a);
out:
	/* pulls that came in while we ended get a 503 or what there was */
	pthread_mutex_lock(&a.sh.lock);
	a.sh.stopping = true;
	pthread_mutex_unlock(&a.sh.lock);
	now = sfp_clock_ns(CLOCK_MONOTONIC);
	take_pulls(&a, now);
	finish_pulls(&a, now, true);
	{
		uint64_t deadline = sfp_clock_ns(CLOCK_MONOTONIC) +
				    (uint64_t)(o->flush_deadline_s * 1e9);

		for (i = 0; i < o->nr_sinks; i++)
			agent_sink__close(o->sinks[i], deadline);
	}
	if (a.opened)
		summary(&a);
	agent_listener__stop(&l);
	for (i = 0; i < a.nr_svc; i++) {
		sfp_live_profile__free(&a.svc[i].agg);
		sfp_live_profile__free(&a.svc[i].off_agg);
		free(a.svc[i].key);
	}
	free(a.svc);
	proc_forget_all(&a);
	sfp_recorder__free(&a.rc);	/* the pipeline and the session */
	a.r = NULL;
	a.p = NULL;
	sfp_bpf_backends__free(&a.bk);
	sfp_symbolizer__free(&a.sym);
	free(a.gone);
	sfp_machine__free(&a.m);
	free(a.dso_seen);
	pthread_cond_destroy(&a.sh.cond);
	pthread_mutex_destroy(&a.sh.lock);
	if (a.own_wake_fd >= 0)
		close(a.own_wake_fd);
	return err;
}
