// SPDX-License-Identifier: MIT
/* `sfprof sframe check`: validate SFrame tables and report problems. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <sfprof/sframe.h>

#include "cli.h"

int cli_sframe_open_exit(const char *path, int err);

/* The library's diagnostics for the file being checked: printed under
 * its verdict line on stdout (they name file, section offset and what). */
static char problems[4096];
static size_t problems_len;

static void collect(enum sfp_log_level level, const char *msg, void *ctx)
{
	int n;

	(void)ctx;
	if (level != SFP_LOG_WARN || problems_len >= sizeof(problems) - 1)
		return;
	n = snprintf(problems + problems_len, sizeof(problems) - problems_len,
		     "  %s\n", msg);
	if (n > 0)
		problems_len += (size_t)n;
	if (problems_len >= sizeof(problems))
		problems_len = sizeof(problems) - 1;
}

/*
 * A relocatable object's FDE starts are relative to their own sections
 * (all at 0 until link time), so they may coincide: no overlap check.
 */
static bool is_relocatable(const char *path)
{
	unsigned char h[18];
	FILE *f = fopen(path, "rb");
	bool rel;

	if (!f)
		return false;
	rel = fread(h, 1, sizeof(h), f) == sizeof(h) && !memcmp(h, "\177ELF", 4) &&
	      (h[5] == 2 ? (h[16] << 8 | h[17]) : (h[17] << 8 | h[16])) == 1;
	fclose(f);
	return rel;
}

static void check_usage(FILE *f)
{
	fprintf(f,
		"usage: sfprof sframe check [-q] FILE...\n"
		"\n"
		"Validate the SFrame table of each FILE (ELF object, sfprof table\n"
		"file or raw section blob): header, sub-section bounds, every FDE\n"
		"and FRE, sortedness, and that no two FDEs cover the same PC.  A\n"
		"section of 0 bytes is invalid (it has no header); a header without\n"
		"FDEs is valid and said so.  Prints one verdict line per file;\n"
		"problems follow, indented, with the file, the byte offset in the\n"
		"section and what was wrong.\n"
		"\n"
		"  -a, --section-addr ADDR  load address of raw blobs\n"
		"  -q, --quiet              print nothing for valid files\n"
		"  -h, --help               this help\n"
		"\n"
		"Exit status: 0 all valid, 1 some file invalid, 2 usage or I/O error.\n");
}

int cmd_sframe_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "section-addr", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t addr = 0;
	bool quiet = false;
	int c, i, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "a:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!cli_parse_u64(optarg, &addr)) {
				cli_err("bad --section-addr '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			check_usage(stdout);
			return 0;
		default:
			check_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		check_usage(stderr);
		return EXIT_USAGE;
	}
	for (i = optind; i < argc; i++) {
		SFP_OPTS(sfp_sframe_opts, opts, .section_addr = addr,
			 .name = argv[i]);
		struct sfp_sframe_info info;
		struct sfp_sframe *sf = NULL;
		int err, frc;

		sfp_log_fn old;

		problems_len = 0;
		problems[0] = '\0';
		old = sfp_set_log(collect, NULL);
		err = sfp_sframe__open_file(argv[i], &opts, &sf);
		sfp_set_log(old, NULL);
		if (err) {
			frc = cli_sframe_open_exit(argv[i], err);
			printf("%s: %s: %s\n%s", argv[i],
			       frc == EXIT_USAGE ? "error" : "invalid",
			       frc == EXIT_USAGE ? strerror(-err) : sfp_strerror(err),
			       problems);
			if (frc > rc)
				rc = frc;
			continue;
		}
		/* What decoding tolerates but a correct section lacks: a
		 * header at all, FDEs that do not overlap. */
		old = sfp_set_log(collect, NULL);
		sfp_sframe__info(sf, &info);
		err = !info.version || !is_relocatable(argv[i])
			      ? sfp_sframe__validate(sf) : 0;
		sfp_set_log(old, NULL);
		sfp_sframe__info(sf, &info);
		if (err) {
			printf("%s: invalid: %s\n%s", argv[i], sfp_strerror(err),
			       problems);
			rc = rc > EXIT_INVALID ? rc : EXIT_INVALID;
		} else if (!quiet) {
			printf("%s: ok (version %u, abi %u, %u FDEs, %u FREs%s%s)\n",
			       argv[i], info.version, info.abi, info.num_fdes,
			       info.num_fres,
			       info.foreign_endian ? ", foreign byte order" : "",
			       info.num_fdes ? "" : "; a header only, no function described");
		}
		sfp_sframe__free(&sf);
	}
	if (fflush(stdout))
		rc = EXIT_USAGE;
	return rc;
}
