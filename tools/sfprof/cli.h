/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the sfprof CLI.  The CLI is a thin layer over
 * libsfprof: it parses options, calls the library and prints.
 *
 * Exit codes (every subcommand): 0 success; 1 the input is invalid or the
 * job failed; 2 usage or I/O error.
 */
#ifndef SFP_CLI_H
#define SFP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_INVALID 1
#define EXIT_USAGE 2

#define SFP_COMMAND(name, fn, summary) int fn(int argc, char **argv);
#include "commands.def"
#undef SFP_COMMAND
#define SFP_SFRAME_COMMAND(name, fn, summary) int fn(int argc, char **argv);
#include "sframe-commands.def"
#undef SFP_SFRAME_COMMAND

/* A subcommand of a command group such as `sfprof sframe`. */
struct cli_subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/*
 * Run argv[1] from cmds (argv[0] is the group's name).  Prints the group's
 * help for --help/-h or no subcommand.
 */
int cli_dispatch(const char *group, const struct cli_subcommand *cmds,
		 int argc, char **argv);

/* Print "sfprof: <msg>" to stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse a number: hex with 0x, else decimal.  Return false if malformed. */
bool cli_parse_u64(const char *s, uint64_t *v);

/* Print library diagnostics to stderr (installed by main()). */
void cli_setup_logging(bool verbose);

#endif /* SFP_CLI_H */
