// SPDX-License-Identifier: MIT
/*
 * `sfprof report`: perf-report-style text of a perf.data file, with
 * deferred user callchains stitched and dwarf-mode stacks unwound with
 * SFrame.  The work is in src/report; this file parses perf's options.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <sfprof/profile.h>

#include "cli.h"
#include "perf/buildid-cache.h"
#include "report/report.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: sfprof report [-i FILE] [options]\n"
"\n"
"Overhead of a perf.data file by symbol (and by dso, comm, pid), by\n"
"children and by self, with a call graph under each entry, like\n"
"`perf report --stdio`.\n"
"\n"
"  -i, --input FILE          perf.data file (default: perf.data; '-': a\n"
"                            pipe-mode stream on standard input)\n"
"      --children            cumulate callees' overhead into callers (default)\n"
"      --no-children         self overhead only\n"
"  -s, --sort KEYS           comma list of sym, dso, comm, pid\n"
"                            (default: comm,dso,sym)\n"
"  -g, --call-graph SPEC     MODE[,THRESHOLD][,ORDER]: MODE graph (default),\n"
"                            flat, folded or none; THRESHOLD in %% (0.5);\n"
"                            ORDER caller (root first; the default with\n"
"                            children) or callee (leaf first; the default\n"
"                            with --no-children), as perf\n"
"  -G, --inverted            caller order\n"
"      --percent-limit PCT   hide entries below PCT %%, and call paths\n"
"                            too unless -g gives a THRESHOLD (as perf)\n"
"      --pid PIDS            only samples of these processes (comma list)\n"
"      --tid TIDS            only samples of these threads\n"
"      --comm, --comms NAMES only samples of these commands\n"
"      --dso, --dsos NAMES   only symbols of these dsos (path or file name)\n"
"      --time START,STOP     only samples in this window (seconds, as perf\n"
"                            script prints them; either side may be empty)\n"
"      --stdio               perf's text layout (the default)\n"
"      --plain               tab-separated lines for scripts (docs/report.md)\n"
"      --threads             per thread: on-CPU time (cpu-clock, task-clock),\n"
"                            off-CPU time (offcpu-time, record --off-cpu) and\n"
"                            their sum, the wall-clock view\n"
"      --no-merge-callchains leave deferred user callchains unstitched\n"
"      --inline, --no-inline inlined functions as frames of their own (\"mix\n"
"                            (inlined)\") in frames the dwarf unwinder found,\n"
"                            as perf (default: on)\n"
"      --buildid-dir DIR     build-id cache to read DSO copies from (default\n"
"                            $PERF_BUILDID_DIR, else ~/.debug)\n"
"      --symfs DIR           look for files under DIR too: an unpacked\n"
"                            'sfprof archive' (its .build-id) or a copy of the\n"
"                            recorded machine's files\n");
	cli_debuginfod_usage(f, 28);
	fprintf(f,
"  -h, --help                this text\n"
"\n"
"Percentages are of all samples of the event in the --time window; the\n"
"other filters hide samples but keep that base (perf's default\n"
"--percentage absolute).  [k] marks kernel symbols, [.] user ones.\n");
}

/* A comma list of numbers into a new array. */
static int parse_ids(const char *s, uint32_t **out, size_t *n)
{
	char *dup = strdup(s), *tok, *save = NULL;
	uint32_t *v = NULL;

	if (!dup)
		return -ENOMEM;
	*n = 0;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t x;
		void *nv;

		if (!cli_parse_u64(tok, &x) || x > UINT32_MAX) {
			free(dup);
			free(v);
			return -EINVAL;
		}
		nv = realloc(v, (*n + 1) * sizeof(*v));
		if (!nv) {
			free(dup);
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[(*n)++] = (uint32_t)x;
	}
	free(dup);
	*out = v;
	return *n ? 0 : -EINVAL;
}

/* A comma list of names; the strings point into *buf. */
static int parse_names(const char *s, char **buf, const char ***out, size_t *n)
{
	char *tok, *save = NULL;
	const char **v = NULL;

	*buf = strdup(s);
	if (!*buf)
		return -ENOMEM;
	*n = 0;
	for (tok = strtok_r(*buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		void *nv = realloc(v, (*n + 1) * sizeof(*v));

		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[(*n)++] = tok;
	}
	*out = v;
	return *n ? 0 : -EINVAL;
}

static bool graph_word(const char *w, size_t len)
{
	static const char *const words[] = {
		"graph", "flat", "folded", "none", "fractal", "caller", "callee",
		"function", "address", "percent",
	};
	size_t i;

	if (len && ((w[0] >= '0' && w[0] <= '9') || w[0] == '.'))
		return true;
	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (strlen(words[i]) == len && !strncmp(words[i], w, len))
			return true;
	return false;
}

/* perf's --call-graph value: print type, threshold, order, in any order. */
static int parse_graph(const char *s, struct sfp_report_opts *o,
		       bool *order_given, bool *limit_given)
{
	const char *p = s;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (!graph_word(p, len))
			return -EINVAL;
		if (len == 5 && !strncmp(p, "graph", 5))
			o->graph = SFP_REPORT_GRAPH;
		else if (len == 7 && !strncmp(p, "fractal", 7))
			o->graph = SFP_REPORT_GRAPH;
		else if (len == 4 && !strncmp(p, "flat", 4))
			o->graph = SFP_REPORT_FLAT;
		else if (len == 6 && !strncmp(p, "folded", 6))
			o->graph = SFP_REPORT_FOLDED;
		else if (len == 4 && !strncmp(p, "none", 4))
			o->graph = SFP_REPORT_NONE;
		else if (len == 6 && !strncmp(p, "caller", 6))
			o->callee = false, *order_given = true;
		else if (len == 6 && !strncmp(p, "callee", 6))
			o->callee = true, *order_given = true;
		else if ((p[0] >= '0' && p[0] <= '9') || p[0] == '.') {
			char num[32];

			if (len >= sizeof(num))
				return -EINVAL;
			memcpy(num, p, len);
			num[len] = 0;
			if (!cli_parse_double(num, 0, 100, &o->graph_limit))
				return -EINVAL;
			*limit_given = true;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

enum {
	OPT_CHILDREN = 256, OPT_NO_CHILDREN, OPT_PERCENT_LIMIT, OPT_PID,
	OPT_TID, OPT_COMM, OPT_DSO, OPT_TIME, OPT_STDIO, OPT_PLAIN, OPT_THREADS,
	OPT_NO_MERGE, OPT_BUILDID_DIR, OPT_SYMFS, OPT_INLINE, OPT_NO_INLINE,
};

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "children", no_argument, NULL, OPT_CHILDREN },
		{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
		{ "sort", required_argument, NULL, 's' },
		{ "call-graph", optional_argument, NULL, 'g' },
		{ "inverted", no_argument, NULL, 'G' },
		{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "comms", required_argument, NULL, OPT_COMM },
		{ "dso", required_argument, NULL, OPT_DSO },
		{ "dsos", required_argument, NULL, OPT_DSO },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "plain", no_argument, NULL, OPT_PLAIN },
		{ "threads", no_argument, NULL, OPT_THREADS },
		{ "no-merge-callchains", no_argument, NULL, OPT_NO_MERGE },
		{ "inline", no_argument, NULL, OPT_INLINE },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		CLI_DEBUGINFOD_LONGOPTS,
		{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sfp_report_opts o = {
		.children = true,
		.keys = { SFP_REPORT_COMM, SFP_REPORT_DSO, SFP_REPORT_SYM },
		.nr_keys = 3,
		.graph = SFP_REPORT_GRAPH,
		.graph_limit = 0.5,
		.inline_frames = true,
	};
	const char *input = "perf.data";
	uint32_t *pids = NULL, *tids = NULL;
	const char **comms = NULL, **dsos = NULL;
	char *comm_buf = NULL, *dso_buf = NULL;
	struct sfp_profile *p = NULL;
	bool no_merge = false, order_given = false, limit_given = false;
	bool pct_given = false, threads = false;
	struct cli_debuginfod di = { 0 };
	int c, err, ret = 0;

	optind = 1;
	cli_batch_heap();
	while ((c = getopt_long(argc, argv, "i:s:g::Gh", longopts, NULL)) != -1) {
		err = cli_debuginfod_opt(&di, c, optarg);
		if (err) {
			if (err > 0)
				continue;
			ret = EXIT_USAGE;
			goto out;
		}
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case OPT_CHILDREN:
			o.children = true;
			break;
		case OPT_NO_CHILDREN:
			o.children = false;
			break;
		case 's':
			err = sfp_report_parse_sort(optarg, &o);
			break;
		case 'g':
			/* perf takes "-g" alone and "-g SPEC"; take the next
			 * word when it is a call-graph spec */
			if (!optarg && optind < argc &&
			    graph_word(argv[optind], strcspn(argv[optind], ",")))
				optarg = argv[optind++];
			if (o.graph == SFP_REPORT_NONE)
				o.graph = SFP_REPORT_GRAPH;
			if (optarg)
				err = parse_graph(optarg, &o, &order_given,
						  &limit_given);
			break;
		case 'G':
			o.callee = false;
			order_given = true;
			break;
		case OPT_PERCENT_LIMIT:
			if (!cli_parse_double(optarg, 0, 100, &o.percent_limit))
				err = -EINVAL;
			pct_given = true;
			break;
		case OPT_PID:
			free(pids);
			err = parse_ids(optarg, &pids, &o.nr_pids);
			o.pids = pids;
			break;
		case OPT_TID:
			free(tids);
			err = parse_ids(optarg, &tids, &o.nr_tids);
			o.tids = tids;
			break;
		case OPT_COMM:
			free(comms);
			free(comm_buf);
			err = parse_names(optarg, &comm_buf, &comms, &o.nr_comms);
			o.comms = comms;
			break;
		case OPT_DSO:
			free(dsos);
			free(dso_buf);
			err = parse_names(optarg, &dso_buf, &dsos, &o.nr_dsos);
			o.dsos = dsos;
			break;
		case OPT_TIME:
			err = sfp_report_parse_time(optarg, &o.time_start,
						    &o.time_stop);
			o.has_time = true;
			break;
		case OPT_STDIO:
			o.plain = false;
			break;
		case OPT_THREADS:
			threads = true;
			break;
		case OPT_PLAIN:
			o.plain = true;
			break;
		case OPT_NO_MERGE:
			no_merge = true;
			break;
		case OPT_INLINE:
			o.inline_frames = true;
			break;
		case OPT_NO_INLINE:
			o.inline_frames = false;
			break;
		case OPT_BUILDID_DIR:
			err = sfp_buildid_set_dirs(optarg, NULL);
			break;
		case OPT_SYMFS:
			err = sfp_buildid_set_dirs(NULL, optarg);
			break;
		case 'h':
			usage(stdout);
			goto out;
		default:
			usage(stderr);
			ret = EXIT_USAGE;
			goto out;
		}
		if (err) {
			cli_err("report: invalid argument '%s' for --%s", optarg ? optarg : "",
				c == 's' ? "sort" : c == 'g' ? "call-graph" :
				c == OPT_TIME ? "time" : c == OPT_PERCENT_LIMIT ?
				"percent-limit" : c == OPT_PID ? "pid" :
				c == OPT_TID ? "tid" : c == OPT_COMM ? "comm" : "dso");
			ret = EXIT_USAGE;
			goto out;
		}
	}
	if (optind != argc) {
		cli_err("report: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		ret = EXIT_USAGE;
		goto out;
	}
	/* perf: caller order by default with children, callee without */
	if (!order_given)
		o.callee = !o.children;
	/* perf: --percent-limit is the call graphs' threshold too, unless
	 * --call-graph gives one */
	if (pct_given && !limit_given)
		o.graph_limit = o.percent_limit;
	o.input = input;
	if (!cli_check_input("report", NULL, input)) {
		ret = EXIT_USAGE;
		goto out;
	}
	cli_batch_heap_for(input);
	{
		/* inline chains (libdw) only where perf shows them: the
		 * frames of the dwarf unwinder, so an fp file costs nothing */
		/* samples that differ only in time are one for a report
		 * that reads no times */
		SFP_OPTS(sfp_profile_opts, po, .no_merge = no_merge,
			 .dwarf_inlines = o.inline_frames,
			 .merge_samples = !o.has_time && !threads,
			 .debuginfod = di.mode,
			 .debuginfod_timeout_ms = di.timeout_ms,
			 .keep_files = true);

		err = sfp_profile__load(input, &po, &p);
	}
	if (err) {
		cli_err("%s: %s", input, sfp_strerror(err));
		ret = err == -EBADMSG || err == -EOPNOTSUPP ? EXIT_INVALID :
							       EXIT_USAGE;
		goto out;
	}
	{
		struct sfp_profile_lost lost;

		sfp_profile__lost(p, &lost);
		cli_say_lost(input, lost.records, lost.chunks, lost.samples);
	}
	err = threads ? sfp_report_print_threads(p, o.plain, stdout)
		      : sfp_report_print(p, &o, stdout);
	if (err) {
		cli_err("report: %s", err == -EIO ? "write error" : sfp_strerror(err));
		ret = EXIT_USAGE;
	}
out:
	if (cli_free_at_exit())
		sfp_profile__free(&p);
	free(pids);
	free(tids);
	free(comms);
	free(comm_buf);
	free(dsos);
	free(dso_buf);
	return ret;
}
