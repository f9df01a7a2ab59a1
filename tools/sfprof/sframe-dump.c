// SPDX-License-Identifier: MIT
/* `sfprof sframe dump`: print an SFrame section like objdump --sframe. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sfprof/sframe.h>

#include "cli.h"

static void dump_usage(FILE *f)
{
	fprintf(f,
		"usage: sfprof sframe dump [--section-addr ADDR] [--json] FILE\n"
		"\n"
		"Print the SFrame section of FILE as GNU objdump --sframe of the\n"
		"binutils release that produced it prints it (from the line after\n"
		"\"Contents of the SFrame section .sframe:\"), or as JSON.\n"
		"\n"
		"FILE is an ELF object (.sframe section or PT_GNU_SFRAME), an sfprof\n"
		"table file, or a raw section blob.\n"
		"\n"
		"  -a, --section-addr ADDR  load address of a raw blob (0x... or decimal)\n"
		"  -j, --json               print JSON (docs/sframe-json.md)\n"
		"  -h, --help               this help\n");
}

/* Map an open error to an exit code: unreadable file -> usage/IO. */
int cli_sframe_open_exit(const char *path, int err);

int cli_sframe_open_exit(const char *path, int err)
{
	if (access(path, R_OK) || err == -EFBIG || err == -EINVAL ||
	    err == -ENOMEM || err == -EIO || err == -EISDIR)
		return EXIT_USAGE;
	return EXIT_INVALID;
}

int cmd_sframe_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "section-addr", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	SFP_OPTS(sfp_sframe_opts, opts);
	struct sfp_sframe *sf = NULL;
	bool json = false;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "a:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!cli_parse_u64(optarg, &opts.section_addr)) {
				cli_err("bad --section-addr '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			dump_usage(stdout);
			return 0;
		default:
			dump_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		dump_usage(stderr);
		return EXIT_USAGE;
	}
	opts.name = argv[optind];
	err = sfp_sframe__open_file(argv[optind], &opts, &sf);
	if (err) {
		int rc = cli_sframe_open_exit(argv[optind], err);

		cli_err("%s: %s", argv[optind],
			rc == EXIT_USAGE ? strerror(-err) : sfp_strerror(err));
		return rc;
	}
	err = json ? sfp_sframe__dump_json(sf, stdout) : sfp_sframe__dump(sf, stdout);
	sfp_sframe__free(&sf);
	if (!err && fflush(stdout))
		err = -EIO;
	if (err) {
		cli_err("writing the dump: %s", sfp_strerror(err));
		return EXIT_USAGE;
	}
	return 0;
}
