// SPDX-License-Identifier: MIT
/*
 * The BPF parts of a recording as the recorder's callbacks (backends.h).
 */
#include <stdio.h>
#include <string.h>

#include "bpf/backends.h"

/* --- bpf-defer: the second source of records ------------------------------ */

static int source_poll(void *ctx)
{
	return sfp_bpf_defer__poll(ctx);
}

static int source_flush(void *ctx)
{
	return sfp_bpf_defer__flush(ctx);
}

static void source_finish(void *ctx)
{
	sfp_bpf_defer__finish(ctx);
}

/* The tables of the command (ro->argv) or of the processes (ro->pids,
 * ro->tids) are loaded before any sample. */
static int source_attach(void *ctx, struct sfp_record *r,
			 struct sfp_rec_pipe *p,
			 const struct sfp_record_opts *ro)
{
	return sfp_bpf_defer__attach(ctx, r, p, (const char *const *)ro->argv,
				     ro->pids, ro->tids);
}

static int source_async_tables(void *ctx)
{
	return sfp_bpf_defer__async_tables(ctx);
}

/* --- deep stacks read at the sample -------------------------------------- */

/* Where it loads (root or CAP_BPF+CAP_PERFMON, BTF); otherwise the walks
 * that run out are completed later, and deep_why says why. */
static struct sfp_bpf_deep *deep_attach(void *ctx, struct sfp_record *r,
					const struct sfp_record_opts *ro)
{
	struct sfp_bpf_backends *b = ctx;
	int err;

	if (sfp_bpf_deep__load(ro->stack_size ? ro->stack_size : 16384,
			       &b->deep, b->deep_why, sizeof(b->deep_why)))
		return NULL;
	err = sfp_bpf_deep__attach(b->deep, r);
	if (err) {
		snprintf(b->deep_why, sizeof(b->deep_why),
			 "cannot attach the BPF program: %s", strerror(-err));
		sfp_bpf_deep__free(&b->deep);
	}
	return b->deep;
}

/* --- the off-CPU sums kept in the kernel ---------------------------------- */

static int sums_load(void *ctx)
{
	struct sfp_bpf_backends *b = ctx;

	return sfp_bpf_offsum__load(&b->sums);
}

static void sums_arm(void *ctx, uint64_t now_ns)
{
	struct sfp_bpf_backends *b = ctx;

	sfp_bpf_offsum__arm(b->sums, now_ns);
}

static void sums_stop(void *ctx)
{
	struct sfp_bpf_backends *b = ctx;

	sfp_bpf_offsum__stop(b->sums);
}

static int sums_read(void *ctx, struct sfp_rec_pipe *p)
{
	struct sfp_bpf_backends *b = ctx;

	return sfp_bpf_offsum__read(b->sums, sfp_rec_pipe__offcpu_kernel_sum,
				    p);
}

void sfp_bpf_backends__ops(struct sfp_bpf_backends *b, bool deep, bool sums,
			   struct sfp_recorder_opts *o)
{
	b->src_ops = (struct sfp_recorder_source){
		.ctx = b->defer,
		.record = sfp_bpf_defer__record,
		.poll = source_poll,
		.flush = source_flush,
		.finish = source_finish,
		.attach = source_attach,
		.async_tables = source_async_tables,
	};
	b->deep_ops = (struct sfp_recorder_deep){ .ctx = b,
						  .attach = deep_attach };
	b->sums_ops = (struct sfp_recorder_sums){
		.ctx = b, .load = sums_load, .arm = sums_arm,
		.stop = sums_stop, .read = sums_read,
	};
	o->source = b->defer ? &b->src_ops : NULL;
	o->deep = deep ? &b->deep_ops : NULL;
	o->sums = sums ? &b->sums_ops : NULL;
}

void sfp_bpf_backends__free(struct sfp_bpf_backends *b)
{
	sfp_bpf_offsum__free(&b->sums);
	sfp_bpf_deep__free(&b->deep);
}
