// SPDX-License-Identifier: MIT
/*
 * `sfprof export`: load a perf.data file into the symbolized profile
 * model and write it in a format another tool reads (folded stacks,
 * pprof, the Firefox Profiler, speedscope, ...: whatever
 * sfp_export_formats() lists, so a format added to the library is a
 * format of this command without touching it).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfprof/export.h>
#include <sfprof/profile.h>

#include "cli.h"

static void usage(FILE *f)
{
	const char *const *fmt;

	fprintf(f,
"usage: sfprof export --format FORMAT [-i FILE] -o OUT [options]\n"
"\n"
"Write the samples of a perf.data file, stitched, unwound and symbolized,\n"
"in a format other tools read.\n"
"\n"
"  -f, --format FORMAT   one of:");
	for (fmt = sfp_export_formats(); *fmt; fmt++)
		fprintf(f, " %s", *fmt);
	fprintf(f,
"\n"
"                          folded    'comm;main;...;leaf COUNT' lines for\n"
"                                    flamegraph.pl and inferno\n"
"                          pprof     gzipped profile.proto (go tool pprof)\n"
"                          firefox   Gecko profile JSON for the Firefox\n"
"                                    Profiler (profiler.firefox.com)\n");
	/* formats other parts of the library add: named, see their docs */
	for (fmt = sfp_export_formats(); *fmt; fmt++)
		if (strcmp(*fmt, "folded") && strcmp(*fmt, "pprof") &&
		    strcmp(*fmt, "firefox"))
			fprintf(f, "                          %-9s see docs/\n", *fmt);
	fprintf(f,
"  -i, --input FILE      perf.data file (default: perf.data; '-': a\n"
"                        pipe-mode stream on standard input)\n"
"  -o, --output OUT      file to write ('-': standard output)\n"
"      --user-only       leave kernel frames out of every stack\n"
"      --annotate        folded: mark kernel frames _[k], JIT frames _[j]\n"
"                        and inlined frames _[i] (stackcollapse-perf's\n"
"                        --all)\n"
"      --inline          source lines and inlined functions from DWARF\n"
"                        (slower; pprof and firefox carry line numbers)\n"
"      --no-merge-callchains  don't stitch deferred user callchains\n"
"      --event NAME      folded: only this event's samples; offcpu-time\n"
"                        (record --off-cpu) counts blocked nanoseconds and\n"
"                        is left out unless named\n"
"      --view on|off|both  flamegraph: the first view of a file with off-CPU\n"
"                        samples (default both; the page has a switch)\n"
"      --kallsyms FILE   kernel symbols (default: perf's build-id cache copy\n"
"                        named by the file, else /proc/kallsyms)\n");
	cli_sympath_usage(f, 24);
	cli_debuginfod_usage(f, 24);
	fprintf(f,
"      --title TEXT      title for viewers that show one (default: the\n"
"                        recorded command line)\n"
"  -h, --help            this text\n");
}

static bool known_format(const char *name)
{
	const char *const *fmt;

	for (fmt = sfp_export_formats(); *fmt; fmt++)
		if (!strcmp(*fmt, name))
			return true;
	return false;
}

int cmd_export(int argc, char **argv)
{
	enum { OPT_USER_ONLY = 256, OPT_ANNOTATE, OPT_INLINE, OPT_NO_MERGE,
	       OPT_TITLE, OPT_KALLSYMS, OPT_EVENT, OPT_VIEW };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "user-only", no_argument, NULL, OPT_USER_ONLY },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		{ "inline", no_argument, NULL, OPT_INLINE },
		{ "no-merge-callchains", no_argument, NULL, OPT_NO_MERGE },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "event", required_argument, NULL, OPT_EVENT },
		{ "view", required_argument, NULL, OPT_VIEW },
		CLI_DEBUGINFOD_LONGOPTS,
		CLI_SYMPATH_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = "perf.data", *output = NULL, *format = NULL;
	const char *title = NULL, *kallsyms = NULL, *event = NULL;
	const char *view = NULL;
	bool user_only = false, annotate = false, srclines = false;
	bool no_merge = false, to_stdout;
	struct cli_debuginfod di = { 0 };
	struct sfp_profile *p = NULL;
	struct cli_out co;
	FILE *out = NULL;
	int c, err, ret = 0;

	optind = 1;
	cli_batch_heap();
	while ((c = getopt_long(argc, argv, "f:i:o:h", longopts, NULL)) != -1) {
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
		case 'f':
			format = optarg;
			break;
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_USER_ONLY:
			user_only = true;
			break;
		case OPT_ANNOTATE:
			annotate = true;
			break;
		case OPT_INLINE:
			srclines = true;
			break;
		case OPT_NO_MERGE:
			no_merge = true;
			break;
		case OPT_EVENT:
			event = optarg;
			break;
		case OPT_VIEW:
			if (strcmp(optarg, "on") && strcmp(optarg, "off") &&
			    strcmp(optarg, "both")) {
				cli_err("export: --view takes on, off or both, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			view = optarg;
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_KALLSYMS:
			kallsyms = optarg;
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
		cli_err("export: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!format || !output) {
		cli_err("export: %s is required", !format ? "--format" : "-o");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!known_format(format)) {
		cli_err("export: unknown format '%s' (see --help)", format);
		return EXIT_USAGE;
	}
	if (cli_out_is_input(output, input))
		return EXIT_USAGE;
	to_stdout = !strcmp(output, "-");
	if (to_stdout && !strcmp(format, "pprof") && isatty(STDOUT_FILENO)) {
		cli_err("export: pprof is binary; not writing it to a terminal");
		return EXIT_USAGE;
	}

	if (!cli_check_input("export", NULL, input) ||
	    !cli_check_input("export", "kallsyms", kallsyms))
		return EXIT_USAGE;
	cli_batch_heap_for(input);
	SFP_OPTS(sfp_profile_opts, po, .no_merge = no_merge,
		 .srclines = srclines, .kallsyms_path = kallsyms,
		 .debuginfod = di.mode, .debuginfod_timeout_ms = di.timeout_ms,
		 .keep_files = true);
	err = sfp_profile__load(input, &po, &p);
	if (err) {
		cli_err("%s: %s", input, sfp_strerror(err));
		return err == -EBADMSG || err == -EOPNOTSUPP ? EXIT_INVALID :
							       EXIT_USAGE;
	}
	{
		struct sfp_profile_lost lost;

		sfp_profile__lost(p, &lost);
		cli_say_lost(input, lost.records, lost.chunks, lost.samples);
	}

	/* written beside OUT and renamed when complete: a failure leaves
	 * what was there, and a device or FIFO is written in place and
	 * never removed */
	out = cli_out_open(&co, output);
	if (!out) {
		ret = EXIT_USAGE;
		goto out;
	}
	SFP_OPTS(sfp_export_opts, eo, .title = title, .user_only = user_only,
		 .annotate_kind = annotate, .event = event,
		 .view = view);
	err = sfp_profile__export(p, format, out, &eo);
	err = cli_out_finish(&co, err);
	if (err) {
		if (!co.io_failed)
			cli_err("export: %s: %s", output, sfp_strerror(err));
		ret = err == -EINVAL ? EXIT_INVALID : EXIT_USAGE;
	}
out:
	if (cli_free_at_exit())
		sfp_profile__free(&p);
	return ret;
}
