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

/*
 * Snapshots are the hot path (one walk per perf sample): no dispatch, and
 * a context of plain copies (snapshot bounds, cache base and mask) whose
 * address never leaves walk_snapshot(), so that the compiler may keep
 * them in registers instead of reloading them through the reader and the
 * address space after every frames[] store.
 */
struct snap_ctx {
	uint64_t sp;		/* the reader's snapshot, copied */
	uint64_t size;
	uintptr_t base;		/* stack - sp: addressed from addr */
	struct unw_cache_ent *cache;
	uint32_t cache_mask;
	struct sfp_addr_space *as;
	struct sfp_reader *r;
};

static __attribute__((always_inline)) inline int
snap_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct snap_ctx *c = ctx;
	uint64_t off = addr - c->sp;

	if (addr < c->sp)
		return -EFAULT;
	if (off > c->size || len > c->size - off)
		return -ERANGE;
	/* Same bytes as stack + off, but addressed from addr: the load
	 * then hangs off the CFA directly instead of CFA - sp, one
	 * subtraction less on the walk's serial chain.  (Integer
	 * arithmetic: the checks above keep the result inside the
	 * snapshot.) */
	memcpy(buf, (const void *)(c->base + (uintptr_t)addr), len);
	return 0;
}

/* unw_as_lookup() over the copied cache base and mask. */
static __attribute__((always_inline)) inline const struct unw_rule *
snap_lookup(void *ctx, uint64_t pc, uint64_t ip, struct unw_rule *buf)
{
	const struct snap_ctx *c = ctx;
	uint64_t key = (ip << 1) | (pc == ip);
	struct unw_cache_ent *e = &c->cache[ip & c->cache_mask];

	if (sfp_likely(e->key == key))
		return &e->rule;
	unw_as_lookup_miss(c->as, c->r, pc, ip, e, buf);
	return &e->rule;
}

static __attribute__((always_inline)) inline const struct unw_rule *
as_lookup(void *ctx, uint64_t pc, uint64_t ip, struct unw_rule *buf)
{
	struct as_ctx *c = ctx;

	return unw_as_lookup(c->as, c->r, pc, ip, buf);
}

static const struct unw_rule *as_lookup_fn(void *ctx, uint64_t pc,
					    uint64_t ip, struct unw_rule *buf)
{
	return as_lookup(ctx, pc, ip, buf);
}

static int as_read_code(void *ctx, uint64_t ip, void *buf, size_t len)
{
	struct as_ctx *c = ctx;

	return unw_as_code_reader(&c->code, ip, buf, len);
}

/* Instantiations of the walk with constant callbacks (see walk.h). */
static size_t walk_snapshot(struct as_ctx *ac, bool no_fp,
			    const struct sfp_regs *regs,
			    struct sfp_frame *frames, size_t max,
			    enum sfp_unwind_stop *stop)
{
	struct snap_ctx c = {
		.sp = ac->r->sp,
		.size = ac->r->size,
		.base = (uintptr_t)ac->r->stack - (uintptr_t)ac->r->sp,
		.cache = ac->as->cache,
		.cache_mask = ac->as->cache_mask,
		.as = ac->as,
		.r = ac->r,
	};
	const struct unw_env env = {
		.read = snap_read,
		.lookup = snap_lookup,
		.read_code = unw_as_code_reader,
		.code_ctx = &ac->code,
		.ctx = &c,
		.no_fp_fallback = no_fp,
	};

	return unw_walk_inline(&env, regs->ip, regs->sp, regs->fp,
			       regs->valid & SFP_REGS_FP, frames, max, stop);
}

/* A walk through the reader (any kind), with or without a second
 * stack; each caller passes constants, so each gets its own copy. */
static __attribute__((always_inline)) inline size_t
walk_reader(struct as_ctx *c, bool no_fp, const struct sfp_regs *regs,
	    struct sfp_frame *frames, size_t max, enum sfp_unwind_stop *stop,
	    bool (*other_stack)(void *ctx, uint64_t addr))
{
	const struct unw_env env = {
		.read = as_read,
		.lookup = as_lookup,
		.read_code = as_read_code,
		.ctx = c,
		.no_fp_fallback = no_fp,
		.other_stack = other_stack,
	};

	return unw_walk_inline(&env, regs->ip, regs->sp, regs->fp,
			       regs->valid & SFP_REGS_FP, frames, max, stop);
}

static size_t walk_live(struct as_ctx *c, bool no_fp,
			const struct sfp_regs *regs, struct sfp_frame *frames,
			size_t max, enum sfp_unwind_stop *stop)
{
	return walk_reader(c, no_fp, regs, frames, max, stop, NULL);
}

static bool as_other_stack(void *ctx, uint64_t addr)
{
	const struct as_ctx *c = ctx;

	return unw_reader_other_stack(c->r, addr);
}

/* A snapshot with a second region: off the hot path (walk_snapshot's
 * reads know one region), and the only walk that may change stacks. */
static size_t walk_two_stacks(struct as_ctx *c, bool no_fp,
			      const struct sfp_regs *regs,
			      struct sfp_frame *frames, size_t max,
			      enum sfp_unwind_stop *stop)
{
	return walk_reader(c, no_fp, regs, frames, max, stop,
			   as_other_stack);
}

/*
 * AArch64: one out-of-line walk for every reader (walk-aarch64.c).  The
 * return-address mask follows the address space: 52-bit VA only when
 * something is mapped above 2^48.
 */
static size_t walk_aarch64(struct as_ctx *c, bool no_fp,
			   const struct sfp_regs *regs,
			   struct sfp_frame *frames, size_t max,
			   enum sfp_unwind_stop *stop)
{
	struct sfp_addr_space *as = c->as;
	unsigned int bits = as->num_maps && as->maps[as->num_maps - 1].end >
						     (1ull << UNW_A64_VA_BITS)
				    ? UNW_A64_VA_BITS_LARGE
				    : UNW_A64_VA_BITS;
	const struct unw_env e = {
		.read = as_read,
		.lookup = as_lookup_fn,
		.read_code = as_read_code,
		.ctx = c,
		.no_fp_fallback = no_fp,
		.ra_mask = (1ull << bits) - 1,
		.other_stack = c->r->kind == UNW_READER_SNAPSHOT &&
				       c->r->other_len
			       ? as_other_stack
			       : NULL,
	};

	return unw_walk_aarch64(&e, regs, frames, max, stop);
}

int sfp_unwind(struct sfp_addr_space *as, struct sfp_reader *r,
	       const struct sfp_regs *regs, struct sfp_frame *frames,
	       size_t max, const struct sfp_unwind_opts *opts,
	       enum sfp_unwind_stop *stop)
{
	struct as_ctx c = { as, r, { as, r, false } };
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
	if (!as->cache || unw_as_cache_outgrown(as)) {
		int err = unw_as_size_cache(as);

		if (err)
			return err;
	} else if (as->cache_stale) {
		/* Rules cached for the old mappings may be wrong now. */
		memset(as->cache, 0,
		       ((size_t)as->cache_mask + 1) * sizeof(*as->cache));
		as->cache_stale = false;
	}
	if (as->arch == SFP_ARCH_AARCH64)
		n = walk_aarch64(&c, no_fp, regs, frames, max, &why);
	else if (r->kind == UNW_READER_SNAPSHOT && r->other_len)
		n = walk_two_stacks(&c, no_fp, regs, frames, max, &why);
	else if (r->kind == UNW_READER_SNAPSHOT)
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
/* arch/arm64 perf_regs.h: X0..X28, then X29 (FP), LR (X30), SP, PC. */
#define PERF_ARM64_FP 29
#define PERF_ARM64_LR 30
#define PERF_ARM64_SP 31
#define PERF_ARM64_PC 32

int sfp_regs__from_perf(enum sfp_arch arch, uint64_t mask,
			const uint64_t *vals, size_t nr, struct sfp_regs *regs)
{
	unsigned int fp_bit, sp_bit, ip_bit, lr_bit = 64, bit;
	size_t idx = 0;

	if (!regs || (nr && !vals))
		return -EINVAL;
	if (arch == SFP_ARCH_HOST)
		arch = UNW_HOST_ARCH;
	if (arch == SFP_ARCH_X86_64) {
		fp_bit = PERF_X86_BP;
		sp_bit = PERF_X86_SP;
		ip_bit = PERF_X86_IP;
	} else if (arch == SFP_ARCH_AARCH64) {
		/* A sample recorded on arm64, read anywhere. */
		fp_bit = PERF_ARM64_FP;
		sp_bit = PERF_ARM64_SP;
		ip_bit = PERF_ARM64_PC;
		lr_bit = PERF_ARM64_LR;
	} else {
		return -EOPNOTSUPP;
	}
	if ((size_t)__builtin_popcountll(mask) != nr)
		return -EINVAL;
	memset(regs, 0, sizeof(*regs));
	for (bit = 0; bit < 64; bit++) {
		if (!(mask & (1ull << bit)))
			continue;
		if (bit == fp_bit) {
			regs->fp = vals[idx];
			regs->valid |= SFP_REGS_FP;
		} else if (bit == sp_bit) {
			regs->sp = vals[idx];
			regs->valid |= SFP_REGS_SP;
		} else if (bit == ip_bit) {
			regs->ip = vals[idx];
			regs->valid |= SFP_REGS_IP;
		} else if (bit == lr_bit) {
			regs->lr = vals[idx];
			regs->valid |= SFP_REGS_LR;
		}
		idx++;
	}
	if (!(regs->valid & SFP_REGS_IP) || !(regs->valid & SFP_REGS_SP))
		return -ENOENT;
	return 0;
}
