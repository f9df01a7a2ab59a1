// SPDX-License-Identifier: MIT
/*
 * The CLI's part of `sfprof record --call-graph bpf-defer`: load the BPF
 * side or fall back to the sframe mode with the reason, and print what
 * happened at the end (the library never prints).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sfprof/record.h>

#include "bpf/defer-shared.h"
#include "cli.h"
#include "record-bpf.h"

/* Sizes a caller asked for (record_bpf_size()); 0: the library's. */
static uint32_t size_ring, size_fdes, size_fres;

void record_bpf_size(uint32_t ring_bytes, uint32_t max_fdes, uint32_t max_fres)
{
	size_ring = ring_bytes;
	size_fdes = max_fdes;
	size_fres = max_fres;
}

/* -m's size when larger than the library's 16 MiB: -a and --off-cpu on
 * busy machines fill the default ring (0: the default). */
static uint32_t record_ring(const struct sfp_record_opts *ro)
{
	uint64_t n = (uint64_t)ro->mmap_pages * (uint64_t)sysconf(_SC_PAGESIZE);

	return n > (16ULL << 20) && n <= (1ULL << 30) && !(n & (n - 1))
		       ? (uint32_t)n : 0;
}

int record_bpf_try(const struct sfp_record_opts *ro, uint32_t max_depth,
		   struct sfp_bpf_defer **out)
{
	SFP_OPTS(sfp_bpf_defer_opts, bo, .max_depth = max_depth,
		 .ring_bytes = size_ring ? size_ring : record_ring(ro),
		 .max_fdes = size_fdes, .max_fres = size_fres,
		 .off_cpu = ro->off_cpu, .off_cpu_all = ro->system_wide,
		 .no_inherit = ro->no_inherit);
	const char *e;

	/* Table array sizes (entries), for tests of the eviction path and
	 * for machines short of locked memory (docs/record-bpf.md). */
	e = getenv("SFPROF_BPF_MAX_FDES");
	if (e)
		bo.max_fdes = (uint32_t)strtoul(e, NULL, 0);
	e = getenv("SFPROF_BPF_MAX_FRES");
	if (e)
		bo.max_fres = (uint32_t)strtoul(e, NULL, 0);
	return sfp_bpf_defer__load(&bo, out);
}

void record_bpf_load(enum sfp_record_call_graph *cg,
		     const struct sfp_record_opts *ro, uint32_t max_depth,
		     struct sfp_bpf_defer **out)
{
	int err;

	*out = NULL;
	if (*cg != SFP_RECORD_CG_BPF_DEFER)
		return;
	err = record_bpf_try(ro, max_depth, out);
	if (!err)
		return;
	/* The library said why (missing kfunc, verifier log, permission). */
	cli_err("bpf-defer is not available here (%s): falling back to "
		"--call-graph sframe", sfp_strerror(err));
	*cg = SFP_RECORD_CG_SFRAME;
}

static const char *const kstat_names[] = {
	"samples", "scheduled", "shared", "sched-fail", "callbacks",
	"ring-full", "stale", "tid-reuse", "exec", "exiting", "no-table",
	"walked-at-once", "test-dropped", "off-switches", "off-preempted",
	"off-exits", "off-blocks", "off-woken", "off-map-full",
	"off-walked-at-once", "vma-busy", "vma-busy-cut", "off-in-unseen",
	"vma-busy-user", "off-reused", "vma-cache-filled",
};
_Static_assert(sizeof(kstat_names) / sizeof(kstat_names[0]) == SFB_ST__MAX,
	       "a name for every counter of the BPF side");

void record_bpf_summary(FILE *f, const struct sfp_bpf_defer *b)
{
	struct sfp_bpf_defer_stats st;
	size_t i;

	sfp_bpf_defer__stats(b, &st);
	fprintf(f, "  call graph: bpf-defer (BPF task_work, SFrame unwind in "
		"the kernel, no stack bytes copied); %llu samples with a user "
		"stack, %llu deferred records (dedup %.2fx), %.1f frames per "
		"unwind (%llu by SFrame, %llu by frame pointer)\n",
		(unsigned long long)st.user_samples,
		(unsigned long long)st.deferred,
		st.deferred ? (double)st.user_samples / (double)st.deferred : 0.0,
		st.deferred ? (double)st.frames / (double)st.deferred : 0.0,
		(unsigned long long)st.sframe_frames,
		(unsigned long long)st.fp_frames);
	fprintf(f, "  unwind stops:");
	for (i = 1; i < SFP_STOP__MAX; i++)
		if (st.stops[i])
			fprintf(f, " %s %llu", sfp_unwind_stop_str(i),
				(unsigned long long)st.stops[i]);
	fputc('\n', f);
	fprintf(f, "  tables: %llu loaded, %llu evicted, %llu modules without "
		"one; %llu samples (%llu unwinds) met a module without a "
		"table\n",
		(unsigned long long)st.tables_loaded,
		(unsigned long long)st.tables_evicted,
		(unsigned long long)st.tables_failed,
		(unsigned long long)st.no_table_samples,
		(unsigned long long)st.no_table_unwinds);
	fprintf(f, "  kernel side:");
	for (i = 0; i < sizeof(kstat_names) / sizeof(kstat_names[0]); i++)
		/* test hooks' counters only when a hook was on, the
		 * off-CPU program's only with --off-cpu */
		if ((strncmp(kstat_names[i], "test-", 5) &&
		     strncmp(kstat_names[i], "off-", 4)) || st.kernel[i])
			fprintf(f, " %s %llu", kstat_names[i],
			(unsigned long long)st.kernel[i]);
	fprintf(f, "; not written: %llu (exec/exit); program runs skipped "
		"by the kernel: %llu\n",
		(unsigned long long)st.deferred_dropped,
		(unsigned long long)st.prog_misses);
	if (st.late_blocks)
		fprintf(f, "  off-cpu blocks whose switch-in was not seen, "
			"given their entry's record once more: %llu\n",
			(unsigned long long)st.late_blocks);
}
