// SPDX-License-Identifier: MIT
/*
 * `sfprof symbolize -i IN -o OUT`: a pprof profile taken elsewhere -- by
 * `sfprof agent --no-symbolize`, by another profiler that leaves native
 * frames as addresses -- with its native frames named on this host, from
 * the files its mappings' build-ids lead to.  The account says how many
 * frames were named from where and which build-ids were not found, so
 * that a frame left unnamed is never a silent one.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfprof/symbols.h>

#include "cli.h"
#include "symbolize-listen.h"
#include "symbolize/symbolize.h"

/* What a profile given to us may unpack to (the agent's windows are a
 * few MB; a day of one service, a few hundred). */
#define MAX_PROFILE_BYTES (1024ull << 20)

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfprof symbolize -i IN -o OUT [OPTIONS]\n"
"       sfprof symbolize --listen ADDR:PORT --pyroscope URL|--otlp URL\n"
"                        [OPTIONS]\n"
"\n"
"Name the native frames of a pprof profile or an OTLP profiles request\n"
"(ExportProfilesServiceRequest, profiles v1development; gzipped or not)\n"
"whose locations carry addresses and whose mappings carry build-ids, such\n"
"as those of 'sfprof agent --no-symbolize' or of other profilers that\n"
"leave native frames unnamed: each such location gets its\n"
"function, file:line and inlined frames from the file its mapping's\n"
"build-id leads to -- the path given, if the file there has that build-id;\n"
"copies by build-id in the debug directories, the build-id cache and\n"
"--symfs; then debuginfod.  Where only a debug file is found it stands in\n"
"for the binary.  Locations already named, and those that cannot be named,\n"
"are left as they were: a profile may go through twice.\n"
"\n"
"  -i, --input IN          the profile ('-': standard input)\n"
"  -o, --output OUT        the named profile ('-': standard output), in IN's\n"
"                          format, gzipped when IN was\n"
"      --format FMT        pprof, otlp or auto (default: auto, pprof first)\n"
"      --debug-dir DIR     a debug directory to search (repeat), before\n"
"                          /usr/lib/debug\n");
	cli_sympath_usage(f, 26);
	cli_debuginfod_usage(f, 26);
	fprintf(f,
"The service (--listen; docs/symbolize.md): takes the agent's sinks'\n"
"requests -- Pyroscope Connect POST /push.v1.PusherService/Push and OTLP\n"
"POST /v1development/profiles --, names them and forwards them through the\n"
"same sinks (bounded queues, retries, drops counted); GET /metrics, /healthz.\n"
"      --listen ADDR:PORT  serve there (:PORT is 127.0.0.1)\n"
"      --pyroscope URL     forward to Pyroscope (Connect Push)\n"
"      --otlp URL          forward to an OTLP/HTTP profiles receiver\n"
"      --memory SIZE       symbol tables kept, by their files' sizes; the\n"
"                          least recently used go first (default 512M)\n"
"      --timeout DURATION  a debuginfod fetch, and a request's wait for a\n"
"                          table another request is fetching (default 5s)\n"
"      --max-body SIZE     a request's body (default 64M)\n"
"      --max-profile SIZE  what a gzip body or profile unpacks to\n"
"                          (default 256M)\n"
"      --queue-size SIZE   each sink's queue in bytes (default 16M)\n"
"      --auth-file FILE    the sinks' credentials (as sfprof agent)\n"
"      --tenant ID         X-Scope-OrgID for the sinks\n"
"      --listen-connections N   connections at once (default 256)\n"
"      --listen-timeout DURATION  a whole request within (default 10s)\n"
"      --flush-timeout DURATION   at SIGTERM, for the sinks (default 5s)\n"
"  SIGINT/SIGTERM: stop taking requests, deliver what is queued, exit 0;\n"
"  SIGHUP: let every symbol table go.\n"
"  -q, --quiet             no account on stderr (failures are still said)\n"
"  -h, --help              this text\n"
"The account on stderr: the locations named (by source), already named,\n"
"not native (no mapping or no build-id), unnamed (no symbol covers the\n"
"address) and in files not found, then each build-id not found.\n"
"In pprof, a location of a mapping whose has_functions is false is named\n"
"even if it has lines (producers' placeholders such as \"[libc.so.6]\"); in\n"
"OTLP, a location with lines is named already.\n"
"Exit: 0 written (even if some frames stayed unnamed), 1 IN is not a\n"
"valid profile of the format or could not be named, 2 usage or I/O error.\n");
}

static int read_all(const char *path, void **out, size_t *out_len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	unsigned char *buf = NULL, *nb;
	size_t n = 0, cap = 0, got;
	int err = 0;

	if (!f)
		return -errno;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			if (cap > MAX_PROFILE_BYTES + 1 ||
			    !(nb = realloc(buf, cap))) {
				err = cap > MAX_PROFILE_BYTES + 1 ? -EFBIG :
								    -ENOMEM;
				break;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (!got)
			break;
	}
	if (!err && ferror(f))
		err = -EIO;
	if (f != stdin)
		fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*out_len = n;
	return 0;
}

static void say_account(const char *in, const struct symz_stats *st)
{
	size_t i;

	fprintf(stderr, "sfprof symbolize: %s: %llu locations: %llu named (",
		in, (unsigned long long)st->locations,
		(unsigned long long)st->named);
	for (i = 0; i < SYMZ_SRC__NR; i++)
		fprintf(stderr, "%s%llu %s", i ? ", " : "",
			(unsigned long long)st->by_source[i],
			symz_source_name((enum symz_source)i));
	fprintf(stderr, "; %llu inlined frames added), %llu already named, "
		"%llu not native, %llu unnamed, %llu in files not found\n",
		(unsigned long long)st->inlined,
		(unsigned long long)st->already,
		(unsigned long long)st->not_native,
		(unsigned long long)st->unnamed,
		(unsigned long long)st->missing);
	for (i = 0; i < st->nr_miss; i++)
		fprintf(stderr, "sfprof symbolize: build-id %s (%s) %s: %llu "
			"locations left unnamed\n", st->miss[i].build_id,
			st->miss[i].path,
			st->miss[i].err == -ENOENT ? "not found" :
			strerror(-st->miss[i].err),
			(unsigned long long)st->miss[i].locations);
}

int cmd_symbolize(int argc, char **argv)
{
	enum { OPT_DEBUG_DIR = 256, OPT_FORMAT, OPT_LISTEN, OPT_PYROSCOPE,
	       OPT_OTLP, OPT_MEMORY, OPT_TIMEOUT, OPT_MAX_BODY,
	       OPT_MAX_PROFILE, OPT_QUEUE, OPT_AUTH, OPT_TENANT, OPT_CONNS,
	       OPT_LTIMEOUT, OPT_FLUSH };
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "pyroscope", required_argument, NULL, OPT_PYROSCOPE },
		{ "otlp", required_argument, NULL, OPT_OTLP },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-body", required_argument, NULL, OPT_MAX_BODY },
		{ "max-profile", required_argument, NULL, OPT_MAX_PROFILE },
		{ "queue-size", required_argument, NULL, OPT_QUEUE },
		{ "auth-file", required_argument, NULL, OPT_AUTH },
		{ "tenant", required_argument, NULL, OPT_TENANT },
		{ "listen-connections", required_argument, NULL, OPT_CONNS },
		{ "listen-timeout", required_argument, NULL, OPT_LTIMEOUT },
		{ "flush-timeout", required_argument, NULL, OPT_FLUSH },
		CLI_DEBUGINFOD_LONGOPTS,
		CLI_SYMPATH_LONGOPTS,
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = NULL, *output = NULL, *format = "auto";
	const char *dirs[17] = { 0 };
	size_t nr_dirs = 0;
	struct cli_debuginfod di = { 0 };
	struct sfp_symbolizer *s = NULL;
	struct symz_stats st = { 0 };
	void *in = NULL, *out = NULL;
	size_t in_len = 0, out_len = 0;
	struct cli_out co;
	bool quiet = false;
	struct symz_listen_opts lo = {
		.memory = 512ull << 20, .timeout_ms = 5000,
		.max_body = 64u << 20, .max_profile = 256u << 20,
		.max_conn = 256, .listen_timeout_s = 10, .flush_s = 5,
	};
	uint64_t v;
	double d;
	char why[256];
	FILE *f;
	int c, err, ret = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:qh", longopts, NULL)) != -1) {
		switch (cli_debuginfod_opt(&di, c, optarg)) {
		case 1:
			continue;
		case -1:
			return EXIT_USAGE;
		}
		switch (cli_sympath_opt(c, optarg)) {
		case 1:
			continue;
		case -1:
			return EXIT_USAGE;
		}
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_DEBUG_DIR:
			if (nr_dirs == sizeof(dirs) / sizeof(dirs[0]) - 1) {
				cli_err("symbolize: at most %zu --debug-dir",
					nr_dirs);
				return EXIT_USAGE;
			}
			dirs[nr_dirs++] = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "pprof") && strcmp(optarg, "otlp") &&
			    strcmp(optarg, "auto")) {
				cli_err("symbolize: --format takes pprof, otlp "
					"or auto, not '%s'", optarg);
				return EXIT_USAGE;
			}
			format = optarg;
			break;
		case OPT_LISTEN:
			lo.listen = optarg;
			break;
		case OPT_PYROSCOPE:
			lo.pyroscope = optarg;
			break;
		case OPT_OTLP:
			lo.otlp = optarg;
			break;
		case OPT_AUTH:
			lo.auth_file = optarg;
			break;
		case OPT_TENANT:
			lo.tenant = optarg;
			break;
		case OPT_MEMORY:
		case OPT_MAX_BODY:
		case OPT_MAX_PROFILE:
		case OPT_QUEUE:
			if (!cli_parse_size(optarg, &v, NULL) || !v ||
			    v > (1ull << 40)) {
				cli_err("symbolize: bad size '%s'", optarg);
				return EXIT_USAGE;
			}
			if (c == OPT_MEMORY)
				lo.memory = v;
			else if (c == OPT_MAX_BODY)
				lo.max_body = (size_t)v;
			else if (c == OPT_MAX_PROFILE)
				lo.max_profile = (size_t)v;
			else
				lo.queue_bytes = (size_t)v;
			break;
		case OPT_TIMEOUT:
		case OPT_LTIMEOUT:
		case OPT_FLUSH:
			if (!cli_parse_duration(optarg, &d) || d < 0.001 ||
			    d > 86400) {
				cli_err("symbolize: bad duration '%s'", optarg);
				return EXIT_USAGE;
			}
			if (c == OPT_TIMEOUT)
				lo.timeout_ms = (uint32_t)(d * 1000);
			else if (c == OPT_LTIMEOUT)
				lo.listen_timeout_s = d < 1 ? 1 :
						      (unsigned int)d;
			else
				lo.flush_s = d;
			break;
		case OPT_CONNS:
			if (!cli_parse_size(optarg, &v, NULL) || v < 2 ||
			    v > 65536) {
				cli_err("symbolize: --listen-connections: want "
					"2..65536, not '%s'", optarg);
				return EXIT_USAGE;
			}
			lo.max_conn = (unsigned int)v;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cli_err("symbolize: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (lo.listen) {
		if (input || output || strcmp(format, "auto")) {
			cli_err("symbolize: --listen takes no -i, -o or "
				"--format");
			return EXIT_USAGE;
		}
		if (!lo.pyroscope && !lo.otlp) {
			cli_err("symbolize: --listen needs --pyroscope URL or "
				"--otlp URL to forward to");
			return EXIT_USAGE;
		}
		dirs[nr_dirs++] = "/usr/lib/debug";
		lo.debug_dirs = dirs;
		lo.debuginfod = di.mode;
		if (di.timeout_ms)
			lo.timeout_ms = di.timeout_ms;
		lo.quiet = quiet;
		return symz_listen(&lo);
	}
	if (lo.pyroscope || lo.otlp) {
		cli_err("symbolize: --pyroscope and --otlp are --listen's");
		return EXIT_USAGE;
	}
	if (!input || !output) {
		cli_err("symbolize: %s is required", !input ? "-i" : "-o");
		usage(stderr);
		return EXIT_USAGE;
	}
	dirs[nr_dirs++] = "/usr/lib/debug";
	if (cli_out_is_input(output, input) ||
	    !cli_check_input("symbolize", NULL, input))
		return EXIT_USAGE;
	if (!strcmp(output, "-") && isatty(STDOUT_FILENO)) {
		cli_err("symbolize: a profile is binary; not writing it to a "
			"terminal");
		return EXIT_USAGE;
	}
	err = read_all(input, &in, &in_len);
	if (err) {
		cli_err("symbolize: reading %s: %s", input,
			err == -EFBIG ? "larger than 1 GiB" : strerror(-err));
		return EXIT_USAGE;
	}
	{
		SFP_OPTS(sfp_symbolizer_opts, so, .debug_dirs = dirs, .srclines = true, .debuginfod = di.mode,
			 .debuginfod_timeout_ms = di.timeout_ms,
			 .flags = SFP_SYMBOLIZER_DEBUG_AS_CODE);

		err = sfp_symbolizer__new(&so, &s);
	}
	if (err) {
		cli_err("symbolize: %s", sfp_strerror(err));
		ret = EXIT_INVALID;
		goto out;
	}
	err = -EBADMSG;
	if (strcmp(format, "otlp"))
		err = symz_pprof(&(struct symz_lookup){ .s = s }, in, in_len, MAX_PROFILE_BYTES, &out,
				 &out_len, &st, why, sizeof(why));
	if (err == -EBADMSG && strcmp(format, "pprof")) {
		char why2[256];

		symz_stats_free(&st);
		memset(&st, 0, sizeof(st));
		err = symz_otlp(&(struct symz_lookup){ .s = s }, in, in_len, MAX_PROFILE_BYTES, &out,
				&out_len, &st, why2, sizeof(why2));
		if (err && !strcmp(format, "auto")) {
			cli_err("symbolize: %s: neither a pprof profile (%s) nor "
				"an OTLP profiles request (%s)", input, why,
				why2);
			ret = EXIT_INVALID;
			goto out;
		}
		memcpy(why, why2, sizeof(why2));
	}
	if (err) {
		cli_err("symbolize: %s: not a%s %s sfprof can name: %s", input,
			strcmp(format, "otlp") ? " pprof" : "n OTLP",
			strcmp(format, "otlp") ? "profile" : "profiles request",
			why);
		ret = EXIT_INVALID;
		goto out;
	}
	f = cli_out_open(&co, output);
	if (!f) {
		ret = EXIT_USAGE;
		goto out;
	}
	err = fwrite(out, 1, out_len, f) == out_len ? 0 : -EIO;
	if (cli_out_finish(&co, err)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (!quiet)
		say_account(input, &st);
out:
	symz_stats_free(&st);
	sfp_symbolizer__free(&s);
	free(in);
	free(out);
	return ret;
}
