// SPDX-License-Identifier: MIT
/*
 * `sfprof record --call-graph auto`: the kernel's own deferral where it
 * can give complete stacks (it walks frame pointers, so for frame-pointer
 * code, and only where the kernel has defer_callchain), the BPF task_work
 * backend for the rest, and the sframe mode where BPF cannot be loaded.
 * Every part of the decision is probed on this machine, never guessed
 * from a version number: the kernel's deferral by opening an event with
 * it, BPF by loading the object, the code by its unwind table.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfprof/record.h>

#include "cli.h"
#include "record-bpf.h"
#include "record/fp-code.h"

/* The main executable of the target, as the kernel will run or runs it. */
static bool target_exe(const struct sfp_record_opts *ro, char *path,
		       size_t len)
{
	const char *cmd, *dirs, *p;

	if (ro->pids || ro->tids) {
		/* the first process (a tid has its /proc entry too) */
		snprintf(path, len, "/proc/%ld/exe",
			 strtol(ro->pids ? ro->pids : ro->tids, NULL, 10));
		return true;
	}
	if (!ro->argv || !ro->argv[0])
		return false;	/* -a: every program on the machine */
	cmd = ro->argv[0];
	if (strchr(cmd, '/')) {
		snprintf(path, len, "%s", cmd);
		return true;
	}
	dirs = getenv("PATH");
	for (p = dirs ? dirs : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(path, len, "%.*s/%s", (int)n, p, cmd);
		if (!access(path, X_OK))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

/* While BPF loads: keep the library's last warning (why it failed) for
 * the one line of the choice; debug messages (-v) go on as usual. */
struct capture {
	sfp_log_fn prev;
	char msg[600];
};

static struct capture *cap;

static void capture_log(enum sfp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == SFP_LOG_WARN)
		snprintf(cap->msg, sizeof(cap->msg), "%s", msg);
	else if (cap->prev)
		cap->prev(level, msg, NULL);
}

enum sfp_record_call_graph record_auto_choose(const struct sfp_record_opts *ro,
					      uint32_t max_depth,
					      struct sfp_bpf_defer **bd,
					      char *why, size_t why_len)
{
	struct capture c = { 0 };
	struct sfp_fp_code fc = { 0 };
	char exe[PATH_MAX], code[PATH_MAX + 128];
	bool fp = false;
	int kd, err;

	*bd = NULL;
	if (!target_exe(ro, exe, sizeof(exe))) {
		snprintf(code, sizeof(code), "%s",
			 ro->system_wide ? "the whole system (mixed code)"
					 : "the command was not found");
	} else if ((err = sfp_fp_code__classify(exe, &fc)) < 0) {
		snprintf(code, sizeof(code), "%s: no unwind table to judge "
			 "its code by (%s)", exe, sfp_strerror(err));
	} else {
		fp = fc.fp_code;
		snprintf(code, sizeof(code), "%s: %s, %u of %u framed "
			 "functions FP-based", exe,
			 fp ? "frame-pointer code" : "code without frame "
			 "pointers", fc.fp_funcs, fc.funcs);
	}
	kd = sfp_record__probe_defer_callchain();
	/* (the kernel's deferral has no off-CPU program) */
	if (fp && kd == 1 && !ro->off_cpu) {
		snprintf(why, why_len, "kernel-defer (%s; the kernel has "
			 "defer_callchain)", code);
		return SFP_RECORD_CG_KERNEL_DEFER;
	}
	if (ro->events && strchr(ro->events, ':')) {
		/* a perf_event program cannot sit on a tracepoint */
		snprintf(why, why_len, "sframe (%s; tracepoint events, which "
			 "bpf-defer cannot attach to)", code);
		return SFP_RECORD_CG_SFRAME;
	}
	cap = &c;
	c.prev = sfp_set_log(capture_log, NULL);
	err = record_bpf_try(ro, max_depth, bd);
	sfp_set_log(c.prev, NULL);
	cap = NULL;
	if (!err) {
		snprintf(why, why_len, "bpf-defer (%s; %s)", code,
			 fp ? (kd == 0 ? "kernel lacks defer_callchain"
				       : "cannot probe the kernel's "
					 "defer_callchain")
			 : kd == 1 ? "the kernel's deferral walks frame "
				     "pointers only"
				   : "kernel lacks defer_callchain, and its "
				     "deferral walks frame pointers only");
		return SFP_RECORD_CG_BPF_DEFER;
	}
	snprintf(why, why_len, "sframe (%s; %s; bpf-defer not available: "
		 "%s)", code, kd == 1 ? "the kernel's deferral walks frame "
					"pointers only"
				      : "kernel lacks defer_callchain",
		 c.msg[0] ? c.msg : sfp_strerror(err));
	return SFP_RECORD_CG_SFRAME;
}
