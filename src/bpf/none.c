// SPDX-License-Identifier: MIT
/*
 * `--call-graph bpf-defer` in a build without it (NO_BPF=1, the AArch64
 * cross build: its BPF object is compiled against the running kernel's
 * BTF, and an x86-64 host has no arm64 one).  Loading says so, and
 * `record` goes on with the other backends, as when a kernel rejects the
 * program.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bpf/bpf-defer.h"
#include "bpf/deepcopy.h"
#include "bpf/offsum.h"

int sfp_bpf_defer__load(const struct sfp_bpf_defer_opts *opts,
			struct sfp_bpf_defer **out)
{
	if (out)
		*out = NULL;
	return -EOPNOTSUPP;
}

int sfp_bpf_defer__attach(struct sfp_bpf_defer *b, struct sfp_record *r,
			  struct sfp_rec_pipe *p, const char *const *argv,
			  const char *pids, const char *tids)
{
	return -EOPNOTSUPP;
}

int sfp_bpf_defer__flush(struct sfp_bpf_defer *b)
{
	return 0;
}

void sfp_bpf_defer__finish(struct sfp_bpf_defer *b)
{
}

int sfp_bpf_defer__poll(struct sfp_bpf_defer *b)
{
	return 0;
}

int sfp_bpf_defer__wait_fd(const struct sfp_bpf_defer *b)
{
	return -1;
}

int sfp_bpf_defer__record(const void *rec, size_t size, int cpu, void *ctx)
{
	return -EOPNOTSUPP;
}

void sfp_bpf_defer__stats(const struct sfp_bpf_defer *b,
			  struct sfp_bpf_defer_stats *st)
{
	memset(st, 0, sizeof(*st));
}

int sfp_bpf_defer__async_tables(struct sfp_bpf_defer *b)
{
	return -EOPNOTSUPP;
}

void sfp_bpf_defer__free(struct sfp_bpf_defer **b)
{
	if (b)
		*b = NULL;
}

/* --- the off-CPU kernel sums (offsum.h) ---------------------------------- */

int sfp_bpf_offsum__load(struct sfp_bpf_offsum **out)
{
	*out = NULL;
	return -EOPNOTSUPP;
}

void sfp_bpf_offsum__arm(struct sfp_bpf_offsum *b, uint64_t now_ns)
{
}

void sfp_bpf_offsum__stop(struct sfp_bpf_offsum *b)
{
}

int sfp_bpf_offsum__read(struct sfp_bpf_offsum *b, sfp_bpf_offsum_fn fn,
			 void *ctx)
{
	return 0;
}

void sfp_bpf_offsum__stats(const struct sfp_bpf_offsum *b,
			   struct sfp_bpf_offsum_stats *st)
{
	memset(st, 0, sizeof(*st));
}

void sfp_bpf_offsum__free(struct sfp_bpf_offsum **b)
{
	*b = NULL;
}

/* --- deep stacks read at the sample (deepcopy.h) -------------------------- */

int sfp_bpf_deep__load(uint32_t snap_size, struct sfp_bpf_deep **out,
		       char *why, size_t why_len)
{
	*out = NULL;
	snprintf(why, why_len, "a build without BPF");
	return -EOPNOTSUPP;
}

int sfp_bpf_deep__attach(struct sfp_bpf_deep *b, struct sfp_record *r)
{
	return -EOPNOTSUPP;
}

size_t sfp_bpf_deep__take(struct sfp_bpf_deep *b, uint32_t tid,
			  uint64_t time, uint64_t ip, uint64_t sp, const uint8_t *snap, size_t snap_size,
			  const uint8_t **extra, struct sfp_bpf_deep_other *other)
{
	*extra = NULL;
	memset(other, 0, sizeof(*other));
	return 0;
}

void sfp_bpf_deep__need(struct sfp_bpf_deep *b, uint32_t tid,
			const char *comm, size_t past, bool cut, size_t had,
			enum sfp_bpf_deep_switch sw)
{
}

void sfp_bpf_deep__task_exit(struct sfp_bpf_deep *b, uint32_t tid)
{
}

void sfp_bpf_deep__stats(const struct sfp_bpf_deep *b,
			 struct sfp_bpf_deep_stats *st)
{
	memset(st, 0, sizeof(*st));
}

void sfp_bpf_deep__free(struct sfp_bpf_deep **b)
{
	*b = NULL;
}
