/* SPDX-License-Identifier: MIT */
/*
 * sfprof push: deliver pprof files through one of the agent's sinks
 * (Pyroscope, OTLP, a rotated directory), each file as one window, then
 * print what the sink counted.  It drives the same queue, thread, retries
 * and converters as `sfprof agent`, without sampling: for trying a backend
 * and for the delivery tests (tests/cli/run-push.sh).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/sink.h"
#include "common/gzip.h"
#include "cli.h"

#define MAX_PPROF_BYTES (256u << 20)
#define MAX_LABELS 32

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfprof push (%s)\n"
"                   [OPTIONS] FILE...\n"
"\n"
"Deliver pprof files (gzip or not, as `sfprof export --format pprof`\n"
"writes them) the way `sfprof agent` delivers its windows: each FILE is\n"
"one window, queued in a bounded queue and sent by the sink's thread with\n"
"retries; then the sink is closed and its counts are printed:\n"
"(once all windows are queued, \"sfprof: push: submitted=N\" goes to stderr)\n"
"  delivered=N dropped=N failed=N retries=N unsent=N\n"
"\n", cli_sink_synopsis());
	/* the sinks (src/agent/sinks.def), then what only some of them take */
	cli_sink_usage(f, 26);
	fprintf(f,
"      --pyroscope-api API push (default) or ingest (legacy URL/ingest)\n"
"      --max-disk SIZE     --output-dir: bytes kept, K/M/G suffix (default\n"
"                          100 MiB)\n"
"      --tenant ID         X-Scope-OrgID header (or --pyroscope-tenant, as\n"
"                          sfprof agent names it)\n"
"      --auth-file FILE    credentials: \"user:password\" (basic) or a token\n"
"                          (bearer); never on the command line\n"
"  -l, --label KEY=VALUE   a window label (service_name, pid, host,\n"
"                          container_id; repeat; default service_name=sfprof)\n"
"      --from NS           window start, ns since the epoch (default: now-10s)\n"
"      --until NS          window end (default: now)\n"
"      --repeat N          submit each file N times (default 1)\n"
"      --queue-bytes N     the queue's byte budget (default 16 MiB; or\n"
"                          --queue-size)\n"
"      --timeout MS        one request's time limit (default 10000)\n"
"      --deadline MS       close: stop delivering after MS (default 30000)\n"
"  -v, --verbose           debug messages\n"
"  -h, --help              this text\n"
"Exit: 0 every window delivered, 1 some dropped, refused or unsent,\n"
"2 usage or I/O error.\n");
}

/* The file's pprof, gunzipped when it is gzip. */
static int read_pprof(const char *path, void **out, size_t *out_len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *raw = NULL;
	size_t n = 0, cap = 0;
	int ret = -EIO;

	*out = NULL;
	if (!f)
		return -errno;
	for (;;) {
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 65536;
			unsigned char *nr;
			if (nc > MAX_PPROF_BYTES || !(nr = realloc(raw, nc))) {
				ret = -EFBIG;
				goto out;
			}
			raw = nr;
			cap = nc;
		}
		size_t got = fread(raw + n, 1, cap - n, f);
		n += got;
		if (!got)
			break;
	}
	if (ferror(f))
		goto out;
	if (!sfp_is_gzip(raw, n)) {
		*out = raw;
		*out_len = n;
		raw = NULL;
		ret = 0;
		goto out;
	}
	ret = sfp_gunzip(raw, n, MAX_PPROF_BYTES, out, out_len);
out:
	fclose(f);
	free(raw);
	return ret;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool opt_u64(const char *name, const char *s, uint64_t *v)
{
	if (cli_parse_u64(s, v))
		return true;
	cli_err("push: --%s: '%s' is not a number", name, s);
	return false;
}

/* A byte count, with K/M/G as every sfprof command takes it. */
static bool opt_size(const char *name, const char *s, uint64_t *v)
{
	if (cli_parse_size(s, v, NULL))
		return true;
	cli_err("push: --%s: '%s' is not a size", name, s);
	return false;
}

int cmd_push(int argc, char **argv)
{
	enum { O_API = 256, O_DISK, O_TENANT, O_AUTH,
	       O_FROM, O_UNTIL, O_REPEAT, O_QUEUE, O_TIMEOUT, O_DEADLINE };
	static const struct option longopts[] = {
#define AGENT_SINK(kind, opt, arg, be, help) CLI_SINK_LONGOPT(kind, opt),
#include "agent/sinks.def"
#undef AGENT_SINK
		{ "pyroscope-api", required_argument, NULL, O_API },
		{ "max-disk", required_argument, NULL, O_DISK },
		{ "tenant", required_argument, NULL, O_TENANT },
		{ "pyroscope-tenant", required_argument, NULL, O_TENANT },
		{ "auth-file", required_argument, NULL, O_AUTH },
		{ "label", required_argument, NULL, 'l' },
		{ "from", required_argument, NULL, O_FROM },
		{ "until", required_argument, NULL, O_UNTIL },
		{ "repeat", required_argument, NULL, O_REPEAT },
		{ "queue-bytes", required_argument, NULL, O_QUEUE },
		{ "queue-size", required_argument, NULL, O_QUEUE },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "deadline", required_argument, NULL, O_DEADLINE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct agent_sink_opts so = { .sz = sizeof(so) };
	struct agent_label labels[MAX_LABELS + 1];
	struct agent_sink_stats st;
	struct agent_sink *sink = NULL;
	uint64_t from = 0, until = 0, repeat = 1, v, deadline_ms = 30000;
	size_t nr_labels = 0, nr_targets = 0, submitted = 0;
	bool have_svc = false, verbose = false;
	int c, k, err, ret = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "l:vh", longopts, NULL)) != -1) {
		if ((k = cli_sink_opt(c)) >= 0) {
			so.kind = (enum agent_sink_kind)k;
			so.target = optarg;
			nr_targets++;
			continue;
		}
		switch (c) {
		case O_API:
			if (!strcmp(optarg, "ingest"))
				so.legacy_ingest = 1;
			else if (strcmp(optarg, "push")) {
				cli_err("push: --pyroscope-api: 'push' or 'ingest', not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case O_DISK:
			if (!opt_size("max-disk", optarg, &so.max_disk))
				return EXIT_USAGE;
			break;
		case O_TENANT:
			so.tenant = optarg;
			break;
		case O_AUTH:
			so.auth_file = optarg;
			break;
		case 'l': {
			char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || nr_labels == MAX_LABELS) {
				cli_err("push: --label: KEY=VALUE, at most %d, not '%s'",
					MAX_LABELS, optarg);
				return EXIT_USAGE;
			}
			*eq = 0;
			labels[nr_labels].key = optarg;
			labels[nr_labels].value = eq + 1;
			if (!strcmp(optarg, "service_name")) {
				/* service_name first, as the contract says. */
				struct agent_label t = labels[0];
				labels[0] = labels[nr_labels];
				labels[nr_labels] = t;
				have_svc = true;
			}
			nr_labels++;
			break;
		}
		case O_FROM:
			if (!opt_u64("from", optarg, &from))
				return EXIT_USAGE;
			break;
		case O_UNTIL:
			if (!opt_u64("until", optarg, &until))
				return EXIT_USAGE;
			break;
		case O_REPEAT:
			if (!opt_u64("repeat", optarg, &repeat))
				return EXIT_USAGE;
			break;
		case O_QUEUE:
			if (!opt_size("queue-bytes", optarg, &v))
				return EXIT_USAGE;
			so.queue_bytes = (size_t)v;
			break;
		case O_TIMEOUT:
			if (!opt_u64("timeout", optarg, &v) || !v || v > 3600000) {
				cli_err("push: --timeout: 1..3600000 ms");
				return EXIT_USAGE;
			}
			so.timeout_ms = (unsigned int)v;
			break;
		case O_DEADLINE:
			if (!opt_u64("deadline", optarg, &deadline_ms) ||
			    deadline_ms > 3600000) {
				cli_err("push: --deadline: 0..3600000 ms");
				return EXIT_USAGE;
			}
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (nr_targets != 1) {
		cli_err("push: give one of %s", cli_sink_names());
		usage(stderr);
		return EXIT_USAGE;
	}
	if (optind == argc) {
		cli_err("push: no pprof file given");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!have_svc) {
		labels[nr_labels] = labels[0];
		labels[0] = (struct agent_label){ "service_name", "sfprof" };
		nr_labels++;
	}
	cli_setup_logging(verbose);
	if (!until)
		until = realtime_ns();
	if (!from)
		from = until > 10000000000ull ? until - 10000000000ull : 0;
	if (from > until) {
		cli_err("push: --from is after --until");
		return EXIT_USAGE;
	}
	for (int i = optind; i < argc; i++)
		if (!cli_check_input("push", "pprof", argv[i]))
			return EXIT_USAGE;

	err = agent_sink__new(&so, &sink);
	if (err) {
		cli_err("push: cannot start the sink for '%s': %s", so.target,
			strerror(-err));
		return EXIT_USAGE;
	}
	for (int i = optind; i < argc && !ret; i++) {
		void *pb;
		size_t len = 0;

		err = read_pprof(argv[i], &pb, &len);
		if (err) {
			cli_err("push: %s: %s", argv[i], err == -EBADMSG ?
				"not a valid gzip stream" : strerror(-err));
			ret = err == -EBADMSG ? EXIT_INVALID : EXIT_USAGE;
			break;
		}
		struct agent_window w = {
			.labels = labels, .nr_labels = nr_labels,
			.start_ns = from, .end_ns = until,
			.pprof = pb, .pprof_len = len,
		};
		for (uint64_t r = 0; r < repeat; r++) {
			err = agent_sink__submit(sink, &w);
			if (err == -EBADMSG) {
				/* counted failed by the sink, which said why */
				if (!r)
					cli_err("push: %s: not sent: not a pprof "
						"Profile", argv[i]);
			} else if (err) {
				cli_err("push: out of memory");
				ret = EXIT_USAGE;
				break;
			}
			submitted++;
		}
		free(pb);
	}
	/* For scripts: everything is queued; delivery may still be going on. */
	fprintf(stderr, "sfprof: push: submitted=%zu\n", submitted);
	fflush(stderr);
	agent_sink__close(sink, monotonic_ns() + deadline_ms * 1000000ull);
	agent_sink__stats(sink, &st);
	printf("delivered=%llu dropped=%llu failed=%llu retries=%llu unsent=%llu\n",
	       (unsigned long long)st.delivered,
	       (unsigned long long)st.dropped, (unsigned long long)st.failed,
	       (unsigned long long)st.retries, (unsigned long long)st.unsent);
	agent_sink__free(sink);
	if (!ret && st.delivered != submitted)
		ret = EXIT_INVALID;
	return ret;
}
