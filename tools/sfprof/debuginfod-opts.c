// SPDX-License-Identifier: MIT
/*
 * The debuginfod options every symbol-naming command takes (cli.h).
 * perf report's spelling: --debuginfod[=URLS]; the default follows
 * elfutils' tools (on when DEBUGINFOD_URLS is set).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/symbols.h>

#include "cli.h"

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
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		int n = fprintf(f, "      %s", lines[i][0]);

		if (n >= col)
			fprintf(f, "\n%*s", col, "");
		else
			fprintf(f, "%*s", col - n, "");
		fprintf(f, "%s\n", lines[i][1]);
	}
}
