// SPDX-License-Identifier: MIT
/*
 * The options that start the agent's sinks, for `sfprof agent` and
 * `sfprof push`: all of them come from src/agent/sinks.def, so that a
 * sink added there is an option of both commands, in their --help too,
 * without touching either.
 */
#include <stdio.h>
#include <string.h>

#include "agent/sink.h"
#include "cli.h"

int cli_sink_opt(int c)
{
	if (c < CLI_OPT_SINK || c >= CLI_OPT_SINK + AGENT_SINK_NR)
		return -1;
	return c - CLI_OPT_SINK;
}

/* "      --opt ARG" padded to COL (a line of its own when it is wider),
 * then HELP, each of its '\n'-separated lines starting at COL. */
static void sink_usage(FILE *f, int col, const char *opt, const char *arg,
		       const char *help)
{
	int w = fprintf(f, "      --%s %s", opt, arg);

	if (w >= col)
		fprintf(f, "\n%*s", col, "");
	else
		fprintf(f, "%*s", col - w, "");
	for (;;) {
		const char *nl = strchr(help, '\n');

		if (!nl) {
			fprintf(f, "%s\n", help);
			return;
		}
		fprintf(f, "%.*s\n%*s", (int)(nl - help), help, col, "");
		help = nl + 1;
	}
}

void cli_sink_usage(FILE *f, int col)
{
#define AGENT_SINK(kind, opt, arg, be, help) sink_usage(f, col, opt, arg, help);
#include "agent/sinks.def"
#undef AGENT_SINK
}

/* Built by the compiler from the list; each starts past its first
 * separator. */
const char *cli_sink_synopsis(void)
{
	static const char s[] =
#define AGENT_SINK(kind, opt, arg, be, help) " | --" opt " " arg
#include "agent/sinks.def"
#undef AGENT_SINK
		;

	return s + strlen(" | ");
}

const char *cli_sink_names(void)
{
	static const char s[] =
#define AGENT_SINK(kind, opt, arg, be, help) ", --" opt
#include "agent/sinks.def"
#undef AGENT_SINK
		;

	return s + strlen(", ");
}
