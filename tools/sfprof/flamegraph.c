// SPDX-License-Identifier: MIT
/*
 * `sfprof flamegraph`: write the samples of a perf.data file as one
 * self-contained interactive HTML flame graph (the library's "flamegraph"
 * export; docs/flamegraph.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/export.h>
#include <sfprof/profile.h>

#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfprof flamegraph [-i FILE] -o OUT.html [--title T] [--user-only]\n"
"                         [--view on|off|both]\n"
"\n"
"Write the call stacks of a perf.data file as one self-contained HTML\n"
"flame graph: click a frame to zoom, Esc to zoom out, search with\n"
"highlight, hover for details.  The page loads nothing from the network.\n"
"\n"
"  -i, --input FILE   perf.data file (default: perf.data; '-': a pipe-mode\n"
"                     stream on standard input)\n"
"  -o, --output FILE  the HTML file to write ('-': standard output)\n"
"      --title T      title of the page (default: the recorded command line)\n"
"      --user-only    leave kernel frames out\n"
"      --view V       a file with off-CPU samples (record --off-cpu) is\n"
"                     drawn in time, off-CPU frames in blues: show first\n"
"                     on-CPU time, off-CPU time or both (default both;\n"
"                     the page has a switch)\n"
"      --kallsyms F   kernel symbols to use (default: perf's copy for the\n"
"                     file's build-id, else /proc/kallsyms)\n"
"  -v, --verbose      library debug messages\n");
	cli_sympath_usage(f, 21);
	cli_debuginfod_usage(f, 21);
	fprintf(f,
"  -h, --help         this text\n");
}

int cmd_flamegraph(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 'T' },
		{ "user-only", no_argument, NULL, 'u' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "view", required_argument, NULL, 'V' },
		{ "verbose", no_argument, NULL, 'v' },
		CLI_DEBUGINFOD_LONGOPTS,
		CLI_SYMPATH_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = "perf.data", *outp = NULL, *title = NULL;
	const char *kallsyms = NULL, *view = NULL;
	bool user_only = false, verbose = false;
	struct cli_debuginfod di = { 0 };
	struct sfp_profile *p = NULL;
	struct cli_out co;
	FILE *out = NULL;
	int c, err, rc = 0;

	cli_batch_heap();
	while ((c = getopt_long(argc, argv, "i:o:vh", longopts, NULL)) != -1) {
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
		case 'i': in = optarg; break;
		case 'o': outp = optarg; break;
		case 'T': title = optarg; break;
		case 'u': user_only = true; break;
		case 'k': kallsyms = optarg; break;
		case 'V':
			if (strcmp(optarg, "on") && strcmp(optarg, "off") &&
			    strcmp(optarg, "both")) {
				cli_err("flamegraph: --view takes on, off or both, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			view = optarg;
			break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc || !outp) {
		if (!outp)
			cli_err("flamegraph: -o OUT.html is required");
		usage(stderr);
		return EXIT_USAGE;
	}
	cli_setup_logging(verbose);
	if (cli_out_is_input(outp, in))
		return EXIT_USAGE;
	if (!cli_check_input("flamegraph", NULL, in) ||
	    !cli_check_input("flamegraph", "kallsyms", kallsyms))
		return EXIT_USAGE;
	cli_batch_heap_for(in);

	{
		SFP_OPTS(sfp_profile_opts, po, .kallsyms_path = kallsyms,
			 .debuginfod = di.mode,
			 .debuginfod_timeout_ms = di.timeout_ms,
			 .keep_files = true);

		err = sfp_profile__load(in, &po, &p);
	}
	if (err) {
		/* the library's wording, as report/script/export say it */
		cli_err("%s: %s", in, sfp_strerror(err));
		return err == -ENOENT || err == -EACCES ? EXIT_USAGE : EXIT_INVALID;
	}
	{
		struct sfp_profile_lost lost;

		sfp_profile__lost(p, &lost);
		cli_say_lost(in, lost.records, lost.chunks, lost.samples);
	}
	out = cli_out_open(&co, outp);
	if (!out) {
		sfp_profile__free(&p);
		return EXIT_USAGE;
	}
	{
		SFP_OPTS(sfp_export_opts, eo, .title = title,
			 .user_only = user_only, .view = view);

		err = sfp_profile__export(p, "flamegraph", out, &eo);
	}
	err = cli_out_finish(&co, err);
	if (err) {
		if (!co.io_failed)
			cli_err("%s: %s", outp, strerror(-err));
		rc = co.io_failed || err == -EIO ? EXIT_USAGE : EXIT_INVALID;
	} else if (out != stdout) {
		fprintf(stderr, "sfprof: wrote %s (%zu samples)\n", outp,
			sfp_profile__nr_samples(p));
	}
	if (cli_free_at_exit())
		sfp_profile__free(&p);
	return rc;
}
