// SPDX-License-Identifier: MIT
/*
 * The debuginfod options every symbol-naming command takes (cli.h), and
 * the build-id cache and --symfs options of those without their own.
 * perf report's spelling: --debuginfod[=URLS]; the default follows
 * elfutils' tools (on when DEBUGINFOD_URLS is set).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/symbols.h>

#include "cli.h"
#include "perf/buildid-cache.h"

int cli_debuginfod_opt(struct cli_debuginfod *d, int c, const char *arg)
{
	double secs;

	switch (c) {
	case CLI_OPT_DEBUGINFOD:
		d->mode = SFP_DEBUGINFOD_ON;
		/* libdebuginfod reads the servers from the environment. */
		if (arg && setenv("DEBUGINFOD_URLS", arg, 1)) {
			cli_err("--debuginfod: %s", strerror(errno));
			return -1;
		}
		return 1;
	case CLI_OPT_NO_DEBUGINFOD:
		d->mode = SFP_DEBUGINFOD_OFF;
		return 1;
	case CLI_OPT_DEBUGINFOD_TIMEOUT:
		/* 0 would mean "the default" to the library: refuse it. */
		if (!cli_parse_double(arg, 0.001, 4000000.0, &secs)) {
			cli_err("invalid argument '%s' for --debuginfod-timeout "
				"(seconds, > 0)", arg);
			return -1;
		}
		d->timeout_ms = (uint32_t)(secs * 1000.0 + 0.5);
		return 1;
	default:
		return 0;
	}
}

static void usage_lines(FILE *f, int col, const char *const (*lines)[2],
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int w = fprintf(f, "      %s", lines[i][0]);

		if (w >= col)
			fprintf(f, "\n%*s", col, "");
		else
			fprintf(f, "%*s", col - w, "");
		fprintf(f, "%s\n", lines[i][1]);
	}
}

int cli_sympath_opt(int c, const char *arg)
{
	int err;

	switch (c) {
	case CLI_OPT_BUILDID_DIR:
		err = sfp_buildid_set_dirs(arg, NULL);
		break;
	case CLI_OPT_SYMFS:
		err = sfp_buildid_set_dirs(NULL, arg);
		break;
	default:
		return 0;
	}
	if (err) {
		cli_err("--%s %s: %s", c == CLI_OPT_SYMFS ? "symfs" :
			"buildid-dir", arg, strerror(-err));
		return -1;
	}
	return 1;
}

void cli_sympath_usage(FILE *f, int col)
{
	static const char *const lines[][2] = {
		{ "--buildid-dir DIR",
		  "build-id cache to read DSO copies from (default" },
		{ "", "$PERF_BUILDID_DIR, else ~/.debug)" },
		{ "--symfs DIR", "look for files under DIR too: an unpacked" },
		{ "", "'sfprof archive' or a copy of the recorded" },
		{ "", "machine's files" },
	};

	usage_lines(f, col, lines, sizeof(lines) / sizeof(lines[0]));
}

void cli_debuginfod_usage(FILE *f, int col)
{
	static const char *const lines[][2] = {
		{ "--debuginfod[=URLS]",
		  "fetch debug files missing here by build-id from" },
		{ "", "debuginfod servers (URLS, else DEBUGINFOD_URLS;" },
		{ "", "default: on when DEBUGINFOD_URLS is set)" },
		{ "--no-debuginfod", "never ask debuginfod" },
		{ "--debuginfod-timeout SECS",
		  "time all its lookups may take together" },
		{ "", "(default 30); then one note, raw addresses" },
	};

	usage_lines(f, col, lines, sizeof(lines) / sizeof(lines[0]));
}
