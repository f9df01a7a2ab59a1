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

#include "common/outfile.h"

#define EXIT_INVALID 1
#define EXIT_USAGE 2

/* --off-cpu-thresh (record, agent): perf's default (blocks shorter are
 * summed per stack, as perf 6.16+ does); --off-cpu-max-rate: own samples
 * per second before the rest is summed too. */
#define DEFAULT_OFF_CPU_THRESH_MS 500
#define DEFAULT_OFF_CPU_THRESH_STR "500"
#define DEFAULT_OFF_CPU_MAX_RATE 10000
#define DEFAULT_OFF_CPU_MAX_RATE_STR "10000"

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

/*
 * What a recording lost (its LOST and LOST_SAMPLES records), in one line
 * without a newline: "lost 331412 records in 140 chunks (the recorder's
 * rings overflowed)[, 12 samples]"; "" when nothing was lost.  Every
 * reader says it on stderr (cli_say_lost: "sfprof: FILE: warning: the
 * recording lost ...", as perf report's "lost N chunks!") and, where its
 * output has a place for it, in the output too.
 */
const char *cli_lost_text(char *buf, size_t n, uint64_t records,
			  uint64_t chunks, uint64_t samples);
void cli_say_lost(const char *path, uint64_t records, uint64_t chunks,
		  uint64_t samples);

/*
 * Option values (cli-parse.c).  cli_parse_u64: a number, hex with 0x, else
 * decimal; false if malformed, signed or out of range.  cli_parse_double:
 * a finite decimal in [min, max] (no nan, inf, blanks or trailing text).
 */
bool cli_parse_u64(const char *s, uint64_t *v);
bool cli_parse_double(const char *s, double min, double max, double *v);
/*
 * One rule for every option that takes a size or a duration.
 * cli_parse_size: decimal digits with an optional unit K, KB, KiB, M, MB,
 * MiB, G, GB or GiB (any case; all powers of 1024); *had_unit (may be
 * NULL) says whether a unit was given (-m reads a bare number as pages).
 * cli_parse_duration: a plain decimal number of seconds up to 1e9 with an
 * optional s, m, h or d, as timeout(1) takes it.
 */
bool cli_parse_size(const char *s, uint64_t *out, bool *had_unit);
bool cli_parse_duration(const char *s, double *out);
/*
 * --call-graph MODE, one table for every command that records: a mode as
 * the library names it (sfp_record__call_graph_name()) among those whose
 * bit (1 << mode) is in @allowed, or "auto" (*is_auto; *mode untouched).
 * False: said ("unknown mode", with the modes the command takes).
 */
enum sfp_record_call_graph;
bool cli_parse_call_graph(const char *arg, unsigned int allowed,
			  enum sfp_record_call_graph *mode, bool *is_auto);

/*
 * Check that the input file @path (of @what, e.g. "kallsyms"; may be
 * NULL) can be read, before the library opens it; if not, print
 * "sfprof CMD: cannot open [WHAT ]'PATH': <system error>" and return false
 * (the caller exits 2).  "-" (standard input) always passes.
 */
bool cli_check_input(const char *cmd, const char *what, const char *path);

/*
 * A subcommand's output file ('-': standard output), written beside its
 * path and renamed into place only when the job succeeded (outfile.h).
 */
struct cli_out {
	const char *path;
	FILE *f;
	struct sfp_outfile of;
	bool io_failed;		/* the output's failure, already printed */
};

/* Open; NULL (and the reason printed) on failure. */
FILE *cli_out_open(struct cli_out *o, const char *path);

/*
 * Finish with the job's error ERR (0: keep the file).  Return: ERR, or
 * the output's own write error (printed, io_failed set); the temporary
 * is removed on any error.
 */
int cli_out_finish(struct cli_out *o, int err);

/*
 * True (and said) when OUT is the file IN (same inode, links followed):
 * for commands whose output is of another kind than their input, where
 * writing it would replace the input by mistake.
 */
bool cli_out_is_input(const char *out, const char *in);

/*
 * For commands that read a file and exit: keep freed memory for the next
 * allocation instead of giving it back (cli-heap.c says why).
 */
void cli_batch_heap(void);
/* The heap of a long-running command: big buffers given back (cli-heap.c). */
void cli_daemon_heap(void);
/* Fault in the heap a batch command reading input will use (cli-heap.c). */
void cli_batch_heap_for(const char *input);
/* Whether a batch command frees what it holds before exiting (see
 * cli-heap.c): only under AddressSanitizer. */
bool cli_free_at_exit(void);
/*
 * The calling thread's net heap bytes since it started, as counted by the
 * allocation wrappers of cli-heap-meter.c; NULL where the CLI is built
 * without them (the libraries linked shared, so libdw's allocations
 * would go unseen).  Differences are what matter: the store charges a
 * symbol table what its load and lookups add.
 */
typedef int64_t (*cli_heap_fn)(void);
cli_heap_fn cli_heap_meter(void);

/* Print library diagnostics to stderr (installed by main()). */
void cli_setup_logging(bool verbose);

/*
 * --debuginfod[=URLS], --no-debuginfod, --debuginfod-timeout SECS, shared
 * by the commands that name symbols (report, script, export, flamegraph).
 * Put CLI_DEBUGINFOD_LONGOPTS in the getopt table, hand every option to
 * cli_debuginfod_opt() first, and pass .mode/.timeout_ms on to
 * sfp_profile_opts or sfp_symbolizer_opts.
 */
enum {
	CLI_OPT_DEBUGINFOD = 0x1000,
	CLI_OPT_NO_DEBUGINFOD,
	CLI_OPT_DEBUGINFOD_TIMEOUT,
};
#define CLI_DEBUGINFOD_LONGOPTS                                              \
	{ "debuginfod", optional_argument, NULL, CLI_OPT_DEBUGINFOD },        \
	{ "no-debuginfod", no_argument, NULL, CLI_OPT_NO_DEBUGINFOD },       \
	{ "debuginfod-timeout", required_argument, NULL,                      \
	  CLI_OPT_DEBUGINFOD_TIMEOUT }

struct cli_debuginfod {
	int mode;		/* SFP_DEBUGINFOD_* */
	uint32_t timeout_ms;	/* 0: the library's default */
};

/*
 * Take option c if it is one of the above.  --debuginfod=URLS sets
 * DEBUGINFOD_URLS for this process, as perf does.
 * Return: 1 taken; 0 not one of them; -1 bad value (said so on stderr).
 */
int cli_debuginfod_opt(struct cli_debuginfod *d, int c, const char *arg);

/* Their --help lines, descriptions starting at column col. */
void cli_debuginfod_usage(FILE *f, int col);

/*
 * Where the recorded files are read from, for the commands that name
 * frames without options of their own for it (export, flamegraph):
 * --buildid-dir DIR and --symfs DIR, as report and script take them.
 * Put CLI_SYMPATH_LONGOPTS in the getopt table and hand every option to
 * cli_sympath_opt() first: 1 taken, 0 not one of these, -1 bad (said).
 */
enum {
	CLI_OPT_BUILDID_DIR = 0x1010,
	CLI_OPT_SYMFS,
};
#define CLI_SYMPATH_LONGOPTS                                                 \
	{ "buildid-dir", required_argument, NULL, CLI_OPT_BUILDID_DIR },      \
	{ "symfs", required_argument, NULL, CLI_OPT_SYMFS }
int cli_sympath_opt(int c, const char *arg);
void cli_sympath_usage(FILE *f, int col);

/*
 * The options that start the agent's sinks, one a kind of
 * src/agent/sinks.def ("--output-dir DIR", "--pyroscope URL", ...), taken
 * alike by `sfprof agent` and `sfprof push` (sink-opts.c).  In the getopt
 * table, each sink's option has the value CLI_OPT_SINK + its kind:
 *	#define AGENT_SINK(kind, opt, arg, be, help) CLI_SINK_LONGOPT(kind, opt),
 *	#include "agent/sinks.def"
 *	#undef AGENT_SINK
 * cli_sink_opt(c): the kind (enum agent_sink_kind) option c starts, or -1.
 */
enum {
	CLI_OPT_SINK = 0x1020,
};
#define CLI_SINK_LONGOPT(kind, opt)                                          \
	{ opt, required_argument, NULL, CLI_OPT_SINK + AGENT_SINK_##kind }
int cli_sink_opt(int c);
/* Their --help lines, descriptions starting at column col. */
void cli_sink_usage(FILE *f, int col);
/* "--output-dir DIR | --pyroscope URL | ..." for a synopsis. */
const char *cli_sink_synopsis(void);
/* "--output-dir, --pyroscope, ..." for a message. */
const char *cli_sink_names(void);

#endif /* SFP_CLI_H */
