// SPDX-License-Identifier: MIT
/* `sfprof sframe encode`: the JSON form of a section → SFrame bytes. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfprof/sframe.h>

#include "cli.h"
#include "sframe/json-read.h"

/* The JSON parser refuses more than this anyway; stop reading early. */
#define MAX_JSON_INPUT (256u << 20)

static void encode_usage(FILE *f)
{
	fprintf(f,
		"usage: sfprof sframe encode [-o OUT] [--version 2|3] [--section-addr ADDR]\n"
		"                            [--raw] [--merge-rows] IN.json\n"
		"\n"
		"Encode the JSON form of an SFrame section (what `sfprof sframe dump\n"
		"--json` prints; docs/sframe-json.md) as a version 2 or 3 section:\n"
		"FDEs sorted, FUNC_START_PCREL set, the smallest FRE start-address\n"
		"and data-word sizes.  IN.json may be - for standard input.\n"
		"\n"
		"By default the output is an sfprof table file that records the\n"
		"section address (sfprof sframe dump/check read it); --raw writes\n"
		"the bare section instead.\n"
		"\n"
		"  -o, --output OUT         write to OUT (default: standard output)\n"
		"  -V, --version N          SFrame version 2 or 3 (default: the\n"
		"                           JSON's version if 2 or 3, else 3)\n"
		"  -a, --section-addr ADDR  address the section is encoded for\n"
		"                           (default: the JSON's header.section_addr)\n"
		"  -r, --raw                write the bare section, no table header\n"
		"  -m, --merge-rows         drop rows equal to the row before them\n"
		"  -h, --help               this help\n"
		"\n"
		"Exit status: 0 written; 1 the input is invalid or cannot be\n"
		"expressed in the chosen version; 2 usage or I/O error.\n");
}

static char *read_input(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	size_t cap = 1 << 16, n = 0;
	char *buf = NULL, *nb;

	if (!f) {
		cli_err("%s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t got;

		if (!buf || n == cap) {
			if (buf)
				cap *= 2;
			if (cap > MAX_JSON_INPUT + 1)
				cap = MAX_JSON_INPUT + 1;
			nb = realloc(buf, cap);
			if (!nb) {
				cli_err("%s: out of memory", path);
				goto fail;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n > MAX_JSON_INPUT) {
			cli_err("%s: larger than %u MiB", path,
				MAX_JSON_INPUT >> 20);
			goto fail;
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		cli_err("%s: read error", path);
		goto fail;
	}
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
fail:
	if (f != stdin)
		fclose(f);
	free(buf);
	return NULL;
}

static int write_raw(const char *out, const void *buf, size_t size)
{
	struct cli_out co;
	FILE *f = cli_out_open(&co, out ? out : "-");
	int err = 0;

	if (!f)
		return -ECANCELED;
	if (size && fwrite(buf, 1, size, f) != size)
		err = -EIO;
	err = cli_out_finish(&co, err);
	/* cli_out said what went wrong with the file */
	return err && co.io_failed ? -ECANCELED : err;
}

int cmd_sframe_encode(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "version", required_argument, NULL, 'V' },
		{ "section-addr", required_argument, NULL, 'a' },
		{ "raw", no_argument, NULL, 'r' },
		{ "merge-rows", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sfp_sframe_json_opts jo = { 0 };
	const char *out = NULL, *in;
	bool raw = false;
	uint64_t v, addr = 0;
	void *buf = NULL;
	char *text;
	size_t len = 0, size = 0;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:V:a:rmh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = strcmp(optarg, "-") ? optarg : NULL;
			break;
		case 'V':
			if (!cli_parse_u64(optarg, &v) || (v != 2 && v != 3)) {
				cli_err("--version must be 2 or 3, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			jo.version = (uint8_t)v;
			break;
		case 'a':
			if (!cli_parse_u64(optarg, &jo.section_addr)) {
				cli_err("bad --section-addr '%s'", optarg);
				return EXIT_USAGE;
			}
			jo.set_section_addr = true;
			break;
		case 'r':
			raw = true;
			break;
		case 'm':
			jo.merge_rows = true;
			break;
		case 'h':
			encode_usage(stdout);
			return 0;
		default:
			encode_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		encode_usage(stderr);
		return EXIT_USAGE;
	}
	in = argv[optind];
	if (out && cli_out_is_input(out, in))
		return EXIT_USAGE;
	if (!out && isatty(STDOUT_FILENO)) {
		cli_err("refusing to write binary SFrame data to a terminal (use -o OUT)");
		return EXIT_USAGE;
	}

	text = read_input(in, &len);
	if (!text)
		return EXIT_USAGE;
	jo.name = strcmp(in, "-") ? in : "<stdin>";
	err = sfp_sframe_json__encode(text, len, &jo, &buf, &size, &addr);
	free(text);
	if (err) {
		/* The library already said where and why. */
		cli_err("%s: not encoded: %s", jo.name, sfp_strerror(err));
		return err == -ENOMEM ? EXIT_USAGE : EXIT_INVALID;
	}

	if (raw) {
		err = write_raw(out, buf, size);
	} else {
		SFP_OPTS(sfp_sframe_file_opts, fo, .section_addr = addr);

		if (!out)
			fflush(stdout);
		err = sfp_sframe__write_file(out ? out : "/dev/stdout", buf,
					     size, &fo);
	}
	free(buf);
	if (err) {
		if (err != -ECANCELED)
			cli_err("cannot write %s: %s", out ? out : "<stdout>",
				strerror(-err));
		return EXIT_USAGE;
	}
	return 0;
}
