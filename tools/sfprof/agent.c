// SPDX-License-Identifier: MIT
/*
 * `sfprof agent`: always-on, system-wide profiling cut into windows and
 * delivered as pprof (pulled over HTTP, or pushed by the sinks).  The
 * library does the work (src/agent/); this file parses options, picks the
 * call-graph mode, starts the sinks and handles SIGINT/SIGTERM.
 */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <sfprof/record.h>

#include "agent/agent.h"
#include "cli.h"
#include "record-bpf.h"

#define DEFAULT_FREQ 19
#define DEFAULT_INTERVAL_S 10.0
#define DEFAULT_FLUSH_S 5.0
/* At 19 Hz a ring holds seconds of samples even with 16 KiB stack
 * snapshots; the reader empties it every 50 ms. */
#define DEFAULT_MMAP_PAGES 128
/* With --off-cpu every blocking switch-out on the machine copies a 16 KiB
 * stack snapshot into the ring: 512 KiB held 32 of them, and a busy
 * 2-CPU machine lost a thousand records in 10 s; 4 MiB holds 250 per CPU
 * between two reads (50 ms). */
#define DEFAULT_MMAP_PAGES_OFF_CPU 1024

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t hups;	/* SIGHUPs taken */
/* written after stop_requested is set: the agent's loop may be asleep */
static int wake_fd = -1;

/* The first SIGINT/SIGTERM ends the agent cleanly (the open window goes
 * to the sinks); a second one ends it at once. */
static void on_signal(int sig)
{
	if (stop_requested) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	stop_requested = 1;
	if (wake_fd >= 0) {
		uint64_t one = 1;
		int e = errno;

		(void)!write(wake_fd, &one, sizeof(one));
		errno = e;
	}
}

/* SIGHUP, as supervisors send it to reopen logs: the open window goes to
 * the sinks now and sampling goes on (the loop compares the count). */
static void on_hup(int sig)
{
	int e = errno;
	uint64_t one = 1;

	(void)sig;
	hups++;
	if (wake_fd >= 0)
		(void)!write(wake_fd, &one, sizeof(one));
	errno = e;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfprof agent [OPTIONS]\n"
"\n"
"Sample every CPU at a low rate until SIGINT or SIGTERM, with complete\n"
"user stacks also for programs built without frame pointers, and cut the\n"
"samples into windows: every --interval, one profile per service (pprof;\n"
"OTLP for --otlp sinks, written from the same tables).\n"
"\n"
"Sampling:\n"
"  -F, --freq HZ         samples per second per CPU (default 19, off the\n"
"                        common timer rates)\n"
"      --call-graph MODE auto (default): bpf-defer where its BPF program\n"
"                        loads, else sframe, saying which and why in one\n"
"                        line; or sframe, bpf-defer, fp (see sfprof record\n"
"                        --help).  Kernel stacks are always included\n"
"      --max-depth N     at most N user frames (default and cap 510)\n"
"  -m, --mmap-pages N    ring pages per CPU, a power of two (default 128;\n"
"                        1024 with --off-cpu)\n"
"      --off-cpu         also where threads wait (record --off-cpu's\n"
"                        sched:sched_switch path; --call-graph sframe, which\n"
"                        auto then picks): a second profile per service and\n"
"                        window, off_cpu/nanoseconds (Pyroscope __name__\n"
"                        off_cpu, files off_cpu-*, /debug/pprof/offcpu)\n"
"      --off-cpu-thresh MS\n"
"                        blocks at least MS ms long are samples of their\n"
"                        own (default " DEFAULT_OFF_CPU_THRESH_STR "); shorter ones are summed per\n"
"                        thread and stack, in the window they ended in\n"
"      --off-cpu-max-rate N\n"
"                        at most N own off-CPU samples per second (default\n"
"                        " DEFAULT_OFF_CPU_MAX_RATE_STR "; 0: no bound); the rest is summed\n"
"\n"
"Which processes (every one by default, also those started later):\n"
"  -p, --pid PID[,PID]   only these processes\n"
"      --comm REGEX      only processes whose name (comm) matches REGEX\n"
"                        (POSIX extended)\n"
"      --cgroup PATH     only processes in the cgroup v2 PATH or below it\n"
"                        (as /proc/PID/cgroup shows it: /system.slice/...)\n"
"\n"
"Windows:\n"
"      --interval DURATION\n"
"                        window length: seconds, or with suffix s, m, h\n"
"                        (default 10 s)\n"
"      --service-name-from exe|comm|cgroup\n"
"                        the service_name label: the executable's file name\n"
"                        (default), the process name, or the cgroup's last\n"
"                        component (nginx.service -> nginx)\n"
"      --no-symbolize    no function names: addresses, mappings and\n"
"                        build-ids for the backend to symbolize\n"
"  Each profile has sample types samples/count and cpu/nanoseconds (an\n"
"  off-CPU one samples/count and off_cpu/nanoseconds), the\n"
"  window's start and length, mappings with build-ids and file offsets,\n"
"  and the labels service_name, host, container_id (docker, containerd,\n"
"  CRI-O, podman: from the cgroup path) and pid (one process only).\n"
"\n"
"Delivery (any combination):\n"
"      --listen ADDR:PORT\n"
"                        serve over HTTP (ADDR 127.0.0.1 when only :PORT):\n"
"                        /debug/pprof/profile?seconds=N[&pid=P] blocks N\n"
"                        seconds and answers them as gzip pprof (Go's\n"
"                        net/http/pprof contract: go tool pprof reads it);\n"
"                        /debug/pprof/offcpu?seconds=N[&pid=P] the same\n"
"                        for off-CPU time (--off-cpu);\n"
"                        /metrics (Prometheus text); /healthz\n"
"      --max-pull-seconds N\n"
"                        longest ?seconds= accepted (default 3600)\n"
"      --max-pulls N     pulls waiting at once (default 32, or half of a\n"
"                        smaller --listen-connections; one more is\n"
"                        a 503), below --listen-connections\n"
"      --listen-connections N\n"
"                        connections at once (default 256); one more is\n"
"                        closed at accept, counted in /metrics\n"
"      --listen-timeout DURATION\n"
"                        a connection's whole request within this, from its\n"
"                        opening or its last answer (default 10 s, whole\n"
"                        seconds): idle and slow clients are closed\n");
	/* the sinks (src/agent/sinks.def), then what only some of them take */
	cli_sink_usage(f, 24);
	fprintf(f,
"      --max-disk SIZE   bytes kept in --output-dir, oldest removed first\n"
"      --pyroscope-api push|ingest\n"
"                        the Connect push (default) or the legacy /ingest\n"
"      --pyroscope-tenant ID\n"
"                        X-Scope-OrgID\n"
"      --auth-file FILE  credentials for --pyroscope/--otlp: user:password\n"
"                        (basic) or a bearer token; never on the command line\n"
"      --queue-size SIZE byte budget of each sink's queue (K/M/G suffix);\n"
"                        when full the oldest window is dropped and counted\n"
"      --flush-timeout DURATION\n"
"                        at SIGTERM, time the sinks get to deliver what is\n"
"                        queued (default 5 s)\n"
"\n"
"  -q, --quiet           no start lines\n"
"  -v, --verbose         library diagnostics\n"
"  -h, --help            this help\n"
"\n"
"Needs CAP_PERFMON (or root, or perf_event_paranoid <= -1), CAP_BPF for\n"
"bpf-defer, CAP_SYS_PTRACE to read other processes' files; see\n"
"docs/agent.md and contrib/sfprof-agent.service.\n"
"Signals: SIGINT/SIGTERM deliver the open window and exit; SIGHUP delivers\n"
"it and goes on sampling.\n"
"Exit: 0 after SIGINT/SIGTERM, 1 the agent could not run, 2 usage error.\n");
}

enum {
	OPT_CALL_GRAPH = 256,
	OPT_MAX_DEPTH,
	OPT_COMM,
	OPT_CGROUP,
	OPT_INTERVAL,
	OPT_SERVICE_FROM,
	OPT_NO_SYMBOLIZE,
	OPT_LISTEN,
	OPT_MAX_PULL,
	OPT_MAX_DISK,
	OPT_PYROSCOPE_API,
	OPT_PYROSCOPE_TENANT,
	OPT_AUTH_FILE,
	OPT_QUEUE_SIZE,
	OPT_FLUSH_TIMEOUT,
	OPT_OFF_CPU,
	OPT_OFF_CPU_THRESH,
	OPT_OFF_CPU_MAX_RATE,
	OPT_MAX_PULLS,
	OPT_LISTEN_CONNECTIONS,
	OPT_LISTEN_TIMEOUT,
};

#define MAX_PIDS 1024

/* The agent's lines to its user, on stderr as sfprof's others. */
static void say_stderr(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "sfprof agent: %s\n", line);
}

static const struct option longopts[] = {
	{ "freq", required_argument, NULL, 'F' },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
	{ "mmap-pages", required_argument, NULL, 'm' },
	{ "pid", required_argument, NULL, 'p' },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "service-name-from", required_argument, NULL,
	  OPT_SERVICE_FROM },
	{ "no-symbolize", no_argument, NULL, OPT_NO_SYMBOLIZE },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "max-pull-seconds", required_argument, NULL, OPT_MAX_PULL },
	{ "max-pulls", required_argument, NULL, OPT_MAX_PULLS },
	{ "listen-connections", required_argument, NULL,
	  OPT_LISTEN_CONNECTIONS },
	{ "listen-timeout", required_argument, NULL, OPT_LISTEN_TIMEOUT },
#define AGENT_SINK(kind, opt, arg, be, help) CLI_SINK_LONGOPT(kind, opt),
#include "agent/sinks.def"
#undef AGENT_SINK
	{ "max-disk", required_argument, NULL, OPT_MAX_DISK },
	{ "pyroscope-api", required_argument, NULL, OPT_PYROSCOPE_API },
	{ "pyroscope-tenant", required_argument, NULL,
	  OPT_PYROSCOPE_TENANT },
	{ "auth-file", required_argument, NULL, OPT_AUTH_FILE },
	{ "queue-size", required_argument, NULL, OPT_QUEUE_SIZE },
	{ "flush-timeout", required_argument, NULL, OPT_FLUSH_TIMEOUT },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "off-cpu-thresh", required_argument, NULL,
	  OPT_OFF_CPU_THRESH },
	{ "off-cpu-max-rate", required_argument, NULL,
	  OPT_OFF_CPU_MAX_RATE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What the command line gives: the agent's options and what makes them. */
struct agent_cli {
	struct agent_opts o;
	bool quiet, auto_cg, mmap_given;
	/* each sink's --option argument, by kind; NULL: not asked for */
	const char *targets[AGENT_SINK_NR];
	/* what only some sinks take */
	const char *tenant, *auth_file;
	bool legacy;
	uint64_t max_disk, queue;
	pid_t pids[MAX_PIDS];
	regex_t re;
	bool have_re;
};

/* One option of what is sampled and how.  Return: 1 taken, 0 not one of
 * these, -1 bad (said). */
static int sampling_opt(struct agent_cli *c, int opt, const char *arg)
{
	uint64_t v;
	double d;
	int err;

	switch (opt) {
	case 'F':
		if (!cli_parse_u64(arg, &v) || !v || v > 100000) {
			cli_err("-F: bad frequency '%s'", arg);
			return -1;
		}
		c->o.freq = v;
		return 1;
	case OPT_CALL_GRAPH:
		/* the modes the agent takes (docs/agent.md) */
		return cli_parse_call_graph(arg,
					    1u << SFP_RECORD_CG_SFRAME |
						    1u << SFP_RECORD_CG_FP |
						    1u << SFP_RECORD_CG_BPF_DEFER,
					    &c->o.call_graph, &c->auto_cg)
			       ? 1 : -1;
	case OPT_MAX_DEPTH:
		if (!cli_parse_u64(arg, &v) || !v || v > 510) {
			cli_err("--max-depth: want 1..510");
			return -1;
		}
		c->o.max_depth = (uint32_t)v;
		return 1;
	case 'm':
		if (!cli_parse_u64(arg, &v) || !v || v > (1u << 20) ||
		    (v & (v - 1))) {
			cli_err("-m: want a power-of-two page count, "
				"not '%s'", arg);
			return -1;
		}
		c->o.mmap_pages = (uint32_t)v;
		c->mmap_given = true;
		return 1;
	case 'p': {
		const char *s = arg;

		while (*s) {
			char *end;
			long n;

			errno = 0;
			n = strtol(s, &end, 10);
			if (errno || end == s || n <= 0 ||
			    n > 0x3fffffff || (*end && *end != ',') ||
			    c->o.nr_pids >= MAX_PIDS) {
				cli_err("--pid: bad list '%s' (want "
					"PID[,PID...])", arg);
				return -1;
			}
			c->pids[c->o.nr_pids++] = (pid_t)n;
			s = *end ? end + 1 : end;
		}
		c->o.pids = c->pids;
		return 1;
	}
	case OPT_COMM:
		if (c->have_re)
			regfree(&c->re);
		if ((err = regcomp(&c->re, arg, REG_EXTENDED | REG_NOSUB))) {
			char msg[256];

			regerror(err, &c->re, msg, sizeof(msg));
			cli_err("--comm: bad regular expression '%s': %s",
				arg, msg);
			c->have_re = false;
			return -1;
		}
		c->have_re = true;
		c->o.comm_re = &c->re;
		return 1;
	case OPT_CGROUP:
		if (arg[0] != '/') {
			cli_err("--cgroup: want a path as /proc/PID/cgroup "
				"shows it (/system.slice/...), not '%s'",
				arg);
			return -1;
		}
		c->o.cgroup = arg;
		return 1;
	case OPT_INTERVAL:
		if (!cli_parse_duration(arg, &d) || d < 0.1) {
			cli_err("--interval: want a duration of at least "
				"0.1 s, not '%s'", arg);
			return -1;
		}
		c->o.interval_ns = (uint64_t)(d * 1e9);
		return 1;
	case OPT_SERVICE_FROM:
		if (!strcmp(arg, "exe"))
			c->o.service_from = AGENT_SERVICE_EXE;
		else if (!strcmp(arg, "comm"))
			c->o.service_from = AGENT_SERVICE_COMM;
		else if (!strcmp(arg, "cgroup"))
			c->o.service_from = AGENT_SERVICE_CGROUP;
		else {
			cli_err("--service-name-from: want exe, comm or "
				"cgroup, not '%s'", arg);
			return -1;
		}
		return 1;
	case OPT_NO_SYMBOLIZE:
		c->o.no_symbolize = true;
		return 1;
	case OPT_OFF_CPU:
		c->o.off_cpu = true;
		return 1;
	case OPT_OFF_CPU_THRESH:
		if (!cli_parse_double(arg, 0, 1e9, &d)) {
			cli_err("--off-cpu-thresh: want milliseconds, "
				"not '%s'", arg);
			return -1;
		}
		c->o.off_cpu_thresh_ns = (uint64_t)(d * 1e6 + 0.5);
		return 1;
	case OPT_OFF_CPU_MAX_RATE:
		if (!cli_parse_u64(arg, &v)) {
			cli_err("--off-cpu-max-rate: bad rate '%s'",
				arg);
			return -1;
		}
		c->o.off_cpu_max_rate = v;
		return 1;
	default:
		return 0;
	}
}

/* One option of how the windows go out.  Return: as sampling_opt(). */
static int delivery_opt(struct agent_cli *c, int opt, const char *arg)
{
	uint64_t v;
	double d;

	switch (opt) {
	case OPT_LISTEN:
		c->o.listen = arg;
		return 1;
	case OPT_MAX_PULL:
		if (!cli_parse_u64(arg, &v) || !v) {
			cli_err("--max-pull-seconds: bad number '%s'",
				arg);
			return -1;
		}
		c->o.max_pull_seconds = v;
		return 1;
	case OPT_MAX_PULLS:
		if (!cli_parse_u64(arg, &v) || !v || v > 65535) {
			cli_err("--max-pulls: want 1..65535, not '%s'",
				arg);
			return -1;
		}
		c->o.max_pulls = (unsigned int)v;
		return 1;
	case OPT_LISTEN_CONNECTIONS:
		if (!cli_parse_u64(arg, &v) || v < 2 || v > 65536) {
			cli_err("--listen-connections: want 2..65536, "
				"not '%s'", arg);
			return -1;
		}
		c->o.listen_max_conn = (unsigned int)v;
		return 1;
	case OPT_LISTEN_TIMEOUT:
		if (!cli_parse_duration(arg, &d) || d < 1 || d > 86400) {
			cli_err("--listen-timeout: want 1 s to 24 h, not "
				"'%s'", arg);
			return -1;
		}
		c->o.listen_timeout_s = (unsigned int)(d + 0.999);
		return 1;
	case OPT_MAX_DISK:
		if (!cli_parse_size(arg, &c->max_disk, NULL) || !c->max_disk) {
			cli_err("--max-disk: bad size '%s'", arg);
			return -1;
		}
		return 1;
	case OPT_PYROSCOPE_API:
		if (!strcmp(arg, "ingest"))
			c->legacy = true;
		else if (!strcmp(arg, "push"))
			c->legacy = false;
		else {
			cli_err("--pyroscope-api: want push or ingest");
			return -1;
		}
		return 1;
	case OPT_PYROSCOPE_TENANT:
		c->tenant = arg;
		return 1;
	case OPT_AUTH_FILE:
		c->auth_file = arg;
		return 1;
	case OPT_QUEUE_SIZE:
		if (!cli_parse_size(arg, &c->queue, NULL) || !c->queue) {
			cli_err("--queue-size: bad size '%s'", arg);
			return -1;
		}
		return 1;
	case OPT_FLUSH_TIMEOUT:
		if (!cli_parse_duration(arg, &c->o.flush_deadline_s)) {
			cli_err("--flush-timeout: bad duration '%s'",
				arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

/* Return: 0 parsed, 1 --help printed, -1 usage error (said). */
static int parse_args(struct agent_cli *c, int argc, char **argv)
{
	int opt, k, r;

	while ((opt = getopt_long(argc, argv, "F:m:p:qvh", longopts, NULL)) !=
	       -1) {
		if ((k = cli_sink_opt(opt)) >= 0) {
			c->targets[k] = optarg;
			continue;
		}
		if ((r = sampling_opt(c, opt, optarg)) ||
		    (r = delivery_opt(c, opt, optarg))) {
			if (r < 0)
				return -1;
			continue;
		}
		switch (opt) {
		case 'q':
			c->quiet = true;
			break;
		case 'v':
			cli_setup_logging(true);
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		cli_err("unexpected argument '%s' (the agent samples every "
			"process; use --pid, --comm or --cgroup to choose)",
			argv[optind]);
		return -1;
	}
	return 0;
}

/* The options against each other.  Return: 0, -1 usage error (said). */
static int check_args(struct agent_cli *c)
{
	unsigned int conns = c->o.listen_max_conn ? c->o.listen_max_conn :
			     AGENT_LISTEN_MAX_CONN;
	unsigned int pulls = c->o.max_pulls ? c->o.max_pulls : AGENT_MAX_PULLS;

	/* off-CPU time is record's sframe path: the blocked task's user
	 * stack is unwound from its snapshot */
	if (c->o.off_cpu && c->auto_cg) {
		c->auto_cg = false;
		c->o.call_graph = SFP_RECORD_CG_SFRAME;
		if (!c->quiet)
			cli_err("--call-graph auto: sframe (--off-cpu takes the "
				"blocked task's user stack from its snapshot)");
	} else if (c->o.off_cpu && c->o.call_graph != SFP_RECORD_CG_SFRAME) {
		cli_err("--off-cpu works with --call-graph sframe only");
		return -1;
	}
	if (c->o.listen_max_conn && !c->o.max_pulls && pulls >= conns)
		c->o.max_pulls = pulls = conns / 2;
	if (pulls >= conns) {
		cli_err("--max-pulls %u: want fewer than --listen-connections "
			"(%u), so that /metrics and /healthz keep room while "
			"pulls wait", pulls, conns);
		return -1;
	}
	if (c->o.off_cpu && !c->mmap_given)
		c->o.mmap_pages = DEFAULT_MMAP_PAGES_OFF_CPU;
	return 0;
}

/*
 * Every sink asked for, started.  Each gets every option and takes what
 * is its own (files --max-disk, the HTTP ones --auth-file, ...); the
 * tenant only Pyroscope: the agent's option is --pyroscope-tenant.
 * Return: 0, or the exit status (said).
 */
static int start_sinks(const struct agent_cli *c, struct agent_sink **sinks,
		       size_t *nr_sinks)
{
	struct agent_sink_opts so;
	int k, err;

	*nr_sinks = 0;
	for (k = 0; k < AGENT_SINK_NR; k++) {
		if (!c->targets[k])
			continue;
		so = (struct agent_sink_opts){
			.sz = sizeof(so),
			.kind = (enum agent_sink_kind)k,
			.target = c->targets[k], .queue_bytes = c->queue,
			.max_disk = c->max_disk, .auth_file = c->auth_file,
			.legacy_ingest = c->legacy,
			.tenant = k == AGENT_SINK_PYROSCOPE ? c->tenant : NULL,
		};
		err = agent_sink__new(&so, &sinks[*nr_sinks]);
		if (err) {
			cli_err("cannot start the sink for %s: %s", so.target,
				sfp_strerror(err));
			/* a URL that can never work (said above) is a usage
			 * error, refused before sampling starts */
			return err == -EINVAL ? EXIT_USAGE : EXIT_INVALID;
		}
		(*nr_sinks)++;
	}
	if (!*nr_sinks && !c->o.listen && !c->quiet)
		cli_err("warning: no --listen and no sink: the windows go "
			"nowhere");
	return 0;
}

/* The call-graph mode: auto's choice or bpf-defer where it loads. */
static void choose_call_graph(struct agent_cli *c, struct sfp_bpf_defer **bd)
{
	SFP_OPTS(sfp_record_opts, ro, .system_wide = true);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	uint32_t ring = 1u << 20;
	char why[4096];

	/* bpf-defer sized for an agent's rates and memory budget: the ring
	 * 256 KiB per CPU (1 to 16 MiB; record's 16 MiB would be 32 MiB
	 * resident, mapped twice), tables half of record's arrays (10 MiB
	 * at most, least recently used evicted) */
	while (ring < (1u << 24) && ncpu > 0 &&
	       (uint64_t)ring < (uint64_t)ncpu * (256u << 10))
		ring <<= 1;
	record_bpf_size(ring, 1u << 17, 1u << 19);
	if (c->auto_cg) {
		c->o.call_graph = record_auto_choose(&ro, c->o.max_depth, bd,
						     why, sizeof(why));
		if (!c->quiet)
			cli_err("--call-graph auto: %s", why);
	} else if (c->o.call_graph == SFP_RECORD_CG_BPF_DEFER) {
		record_bpf_load(&c->o.call_graph, &ro, c->o.max_depth, bd);
	}
	c->o.bpf = *bd;
}

int cmd_agent(int argc, char **argv)
{
	struct agent_cli *c = calloc(1, sizeof(*c));
	struct agent_sink *sinks[AGENT_SINK_NR];
	struct sfp_bpf_defer *bd = NULL;
	size_t nr_sinks = 0, i;
	int err, ret = 0;

	if (!c) {
		cli_err("agent: %s", strerror(ENOMEM));
		return EXIT_INVALID;
	}
	c->auto_cg = true;
	c->o = (struct agent_opts){
		.freq = DEFAULT_FREQ,
		.interval_ns = (uint64_t)(DEFAULT_INTERVAL_S * 1e9),
		.mmap_pages = DEFAULT_MMAP_PAGES,
		.flush_deadline_s = DEFAULT_FLUSH_S,
		.stop = &stop_requested,
		.hup = &hups,
		.wake_fd = -1,
		.off_cpu_thresh_ns = DEFAULT_OFF_CPU_THRESH_MS * 1000000ull,
		.off_cpu_max_rate = DEFAULT_OFF_CPU_MAX_RATE,
	};
	cli_daemon_heap();
	/* at once: loading BPF and reading /proc take a while */
	wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	c->o.wake_fd = wake_fd;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_hup);
	signal(SIGPIPE, SIG_IGN);
	switch (parse_args(c, argc, argv)) {
	case 0:
		break;
	case 1:
		goto out;
	default:
		usage(stderr);
		ret = EXIT_USAGE;
		goto out;
	}
	if (check_args(c)) {
		usage(stderr);
		ret = EXIT_USAGE;
		goto out;
	}
	if ((ret = start_sinks(c, sinks, &nr_sinks)))
		goto out;
	c->o.sinks = sinks;
	c->o.nr_sinks = nr_sinks;
	choose_call_graph(c, &bd);
	if (!c->quiet)
		c->o.say = say_stderr;
	err = agent_run(&c->o);
	if (err) {
		cli_err("agent: %s", sfp_strerror(err));
		ret = EXIT_INVALID;
	}
out:
	for (i = nr_sinks; i > 0; i--)
		agent_sink__free(sinks[i - 1]);
	sfp_bpf_defer__free(&bd);
	if (c->have_re)
		regfree(&c->re);
	free(c);
	return ret;
}
