// SPDX-License-Identifier: MIT
/*
 * sfp_unwind(): the step engine over a reader and an address space.
 */
#include "unwind/addr-space.h"

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

static void as_lookup(void *ctx, uint64_t pc, uint64_t ip,
		      struct unw_rule *rule)
{
	struct as_ctx *c = ctx;

	unw_as_lookup(c->as, c->r, pc, ip, rule);
}

static int as_read_code(void *ctx, uint64_t ip, void *buf, size_t len)
{
	struct as_ctx *c = ctx;

	return unw_as_code_reader(&c->code, ip, buf, len);
}

int sfp_unwind(struct sfp_addr_space *as, struct sfp_reader *r,
	       const struct sfp_regs *regs, struct sfp_frame *frames,
	       size_t max, const struct sfp_unwind_opts *opts,
	       enum sfp_unwind_stop *stop)
{
	struct as_ctx c = { as, r, { as, r } };
	struct unw_env env = {
		.read = as_read,
		.lookup = as_lookup,
		.read_code = as_read_code,
		.ctx = &c,
	};
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
	env.no_fp_fallback =
		SFP_OPTS_GET(opts, sfp_unwind_opts, no_fp_fallback, false);
	unw_reader_begin(r);
	n = unw_walk(&env, regs->ip, regs->sp, regs->fp,
		     regs->valid & SFP_REGS_FP, frames, max, &why);
	*stop = why;
	return (int)n;
}
