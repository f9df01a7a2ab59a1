// SPDX-License-Identifier: MIT
/*
 * sfp_unwind(): the step engine over a reader and an address space.
 */
#include "unwind/addr-space.h"
#include "unwind/walk.h"

struct as_ctx {
	struct sfp_addr_space *as;
	struct sfp_reader *r;
	struct unw_as_code_ctx code;
};

static int as_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct as_ctx *c = ctx;

	return sfp_reader__read(c->r, addr, buf, len);
}

/* Snapshots are the hot path (one walk per perf sample): no dispatch. */
static int as_read_snapshot(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct sfp_reader *r = ((struct as_ctx *)ctx)->r;
	uint64_t off = addr - r->sp;

	if (addr < r->sp)
		return -EFAULT;
	if (off > r->size || len > r->size - off)
		return -ERANGE;
	memcpy(buf, r->stack + off, len);
	return 0;
}

static __attribute__((always_inline)) inline const struct unw_rule *
as_lookup(void *ctx, uint64_t pc, uint64_t ip, struct unw_rule *buf)
{
	struct as_ctx *c = ctx;

	return unw_as_lookup(c->as, c->r, pc, ip, buf);
}

static int as_read_code(void *ctx, uint64_t ip, void *buf, size_t len)
{
	struct as_ctx *c = ctx;

	return unw_as_code_reader(&c->code, ip, buf, len);
}

/* Instantiations of the walk with constant callbacks (see walk.h). */
static size_t walk_snapshot(struct as_ctx *c, bool no_fp,
			    const struct sfp_regs *regs,
			    struct sfp_frame *frames, size_t max,
			    enum sfp_unwind_stop *stop)
{
	const struct unw_env env = {
		.read = as_read_snapshot,
		.lookup = as_lookup,
		.read_code = as_read_code,
		.ctx = c,
		.no_fp_fallback = no_fp,
	};

	return unw_walk_inline(&env, regs->ip, regs->sp, regs->fp,
			       regs->valid & SFP_REGS_FP, frames, max, stop);
}

static size_t walk_live(struct as_ctx *c, bool no_fp,
			const struct sfp_regs *regs, struct sfp_frame *frames,
			size_t max, enum sfp_unwind_stop *stop)
{
	const struct unw_env env = {
		.read = as_read,
		.lookup = as_lookup,
		.read_code = as_read_code,
		.ctx = c,
		.no_fp_fallback = no_fp,
	};

	return unw_walk_inline(&env, regs->ip, regs->sp, regs->fp,
			       regs->valid & SFP_REGS_FP, frames, max, stop);
}

int sfp_unwind(struct sfp_addr_space *as, struct sfp_reader *r,
	       const struct sfp_regs *regs, struct sfp_frame *frames,
	       size_t max, const struct sfp_unwind_opts *opts,
	       enum sfp_unwind_stop *stop)
{
	struct as_ctx c = { as, r, { as, r } };
	bool no_fp;
	enum sfp_unwind_stop why;
	uint32_t depth;
	size_t n;

	if (!as || !r || !regs || !frames || !max || !stop ||
	    !SFP_OPTS_VALID(opts, sfp_unwind_opts))
		return -EINVAL;
	if ((regs->valid & (SFP_REGS_IP | SFP_REGS_SP)) !=
	    (SFP_REGS_IP | SFP_REGS_SP))
		return -EINVAL;
	depth = SFP_OPTS_GET(opts, sfp_unwind_opts, max_depth, 0);
	if (!depth)
		depth = 512;
	if (max > depth)
		max = depth;
	if (max > INT32_MAX)
		max = INT32_MAX;
	no_fp = SFP_OPTS_GET(opts, sfp_unwind_opts, no_fp_fallback, false);
	unw_reader_begin(r);
	if (as->cache_stale) {
		/* Rules cached for the old mappings may be wrong now. */
		memset(as->cache, 0,
		       ((size_t)as->cache_mask + 1) * sizeof(*as->cache));
		as->cache_stale = false;
	}
	if (r->kind == UNW_READER_SNAPSHOT)
		n = walk_snapshot(&c, no_fp, regs, frames, max, &why);
	else
		n = walk_live(&c, no_fp, regs, frames, max, &why);
	*stop = why;
	return (int)n;
}

/* perf_regs.h, x86: the bits of the registers the walk uses. */
#define PERF_X86_BP 6
#define PERF_X86_SP 7
#define PERF_X86_IP 8

int sfp_regs__from_perf(enum sfp_arch arch, uint64_t mask,
			const uint64_t *vals, size_t nr, struct sfp_regs *regs)
{
	size_t idx = 0;
	unsigned int bit;

	if (!regs || (nr && !vals))
		return -EINVAL;
	if (arch != SFP_ARCH_HOST && arch != SFP_ARCH_X86_64)
		return -EOPNOTSUPP;
	if ((size_t)__builtin_popcountll(mask) != nr)
		return -EINVAL;
	memset(regs, 0, sizeof(*regs));
	for (bit = 0; bit < 64; bit++) {
		if (!(mask & (1ull << bit)))
			continue;
		switch (bit) {
		case PERF_X86_BP:
			regs->fp = vals[idx];
			regs->valid |= SFP_REGS_FP;
			break;
		case PERF_X86_SP:
			regs->sp = vals[idx];
			regs->valid |= SFP_REGS_SP;
			break;
		case PERF_X86_IP:
			regs->ip = vals[idx];
			regs->valid |= SFP_REGS_IP;
			break;
		}
		idx++;
	}
	if (!(regs->valid & SFP_REGS_IP) || !(regs->valid & SFP_REGS_SP))
		return -ENOENT;
	return 0;
}
