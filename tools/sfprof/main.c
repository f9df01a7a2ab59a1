// SPDX-License-Identifier: MIT
/* sfprof: entry point and subcommand dispatch. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/common.h>

#include "cli.h"

static const struct cli_subcommand commands[] = {
#define SFP_COMMAND(name, fn, summary) { name, fn, summary },
#include "commands.def"
#undef SFP_COMMAND
	{ NULL, NULL, NULL },
};

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("sfprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *cli_lost_text(char *buf, size_t n, uint64_t records,
			  uint64_t chunks, uint64_t samples)
{
	int k = 0;

	buf[0] = 0;
	if (records)
		k = snprintf(buf, n, "lost %llu records in %llu chunks (the "
			     "recorder's rings overflowed: what they held is "
			     "missing from the profile)",
			     (unsigned long long)records,
			     (unsigned long long)chunks);
	if (samples && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "%slost %llu samples",
			 k ? "; " : "", (unsigned long long)samples);
	return buf;
}

void cli_say_lost(const char *path, uint64_t records, uint64_t chunks,
		  uint64_t samples)
{
	char buf[256];

	if (records || samples)
		cli_err("%s: warning: the recording %s", path,
			cli_lost_text(buf, sizeof(buf), records, chunks,
				      samples));
}

static void log_stderr(enum sfp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "sfprof: %s%s\n",
		level == SFP_LOG_WARN ? "" : "debug: ", msg);
}

void cli_setup_logging(bool verbose)
{
	sfp_set_log(log_stderr, NULL);
	sfp_set_log_level(verbose ? SFP_LOG_DEBUG : SFP_LOG_WARN);
}

static void usage(FILE *f, const char *group,
		  const struct cli_subcommand *cmds)
{
	size_t i;

	fprintf(f, "usage: sfprof %s%sCOMMAND [OPTIONS]\n\n", group ? group : "",
		group ? " " : "");
	fprintf(f, "Commands:\n");
	for (i = 0; cmds[i].name; i++)
		fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\nRun 'sfprof %s%sCOMMAND --help' for a command's options.\n",
		group ? group : "", group ? " " : "");
}

int cli_dispatch(const char *group, const struct cli_subcommand *cmds,
		 int argc, char **argv)
{
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout, group, cmds);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	for (i = 0; cmds[i].name; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	cli_err("unknown command '%s%s%s'", group ? group : "",
		group ? " " : "", argv[1]);
	usage(stderr, group, cmds);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	cli_setup_logging(getenv("SFPROF_DEBUG") != NULL);
	if (argc >= 2 && (!strcmp(argv[1], "--version") ||
			  !strcmp(argv[1], "version"))) {
		printf("sfprof %s\n", sfp_version());
		return 0;
	}
	return cli_dispatch(NULL, commands, argc, argv);
}
