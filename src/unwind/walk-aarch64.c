// SPDX-License-Identifier: MIT
/*
 * The AArch64 step engine: from one frame's (pc, sp, fp, lr) to its
 * caller's, with the same rule lookups, readers and stop reasons as the
 * x86-64 walk (walk.h), which stays as it is: AArch64 differs in enough
 * places that one loop for both would put a branch on every x86-64 step.
 *
 *  - The return address of a function that has not saved it yet (a leaf,
 *    a prologue, a PLT stub) is in LR.  SFrame says so by giving no RA
 *    offset.  LR is known only for the topmost frame and for the frame a
 *    signal interrupted; everywhere else such a row cannot be stepped and
 *    the frame record is tried instead.  A leaf may leave SP where it was
 *    (CFA = SP + 0): that step is allowed to keep SP, once.
 *  - With pointer authentication (-mbranch-protection=pac-ret) saved
 *    return addresses carry a signature above the virtual-address bits.
 *    SFrame's mangled-RA bit says which rows have it; an address without
 *    one is unchanged by the strip, so every return address is stripped
 *    (also those read from frame records and ucontexts, where nothing
 *    says whether they were signed).
 *  - The frame record: x29 points at {caller's x29, LR}.
 *  - Signal frames: the kernel (and qemu-user) return through
 *    `mov x8, #139; svc #0` (__kernel_rt_sigreturn in the vDSO) with SP
 *    at the rt_sigframe: siginfo (128 bytes), then the ucontext, whose
 *    uc_mcontext (struct sigcontext) starts at +176 with fault_address,
 *    then x0..x30, sp, pc (arch/arm64 uapi sigcontext.h and ucontext.h).
 */
#include "unwind/unwind-internal.h"

#define A64_SIGINFO_SIZE 128
#define A64_UC_MCONTEXT 176
#define A64_SC_REGS 8
#define A64_FRAME_REGS (A64_SIGINFO_SIZE + A64_UC_MCONTEXT + A64_SC_REGS)
#define A64_FRAME_X29 (A64_FRAME_REGS + 29 * 8)
#define A64_FRAME_X30 (A64_FRAME_REGS + 30 * 8)
#define A64_FRAME_SP (A64_FRAME_REGS + 31 * 8)
#define A64_FRAME_PC (A64_FRAME_REGS + 32 * 8)

struct a64_regs {
	uint64_t ip, sp, fp, lr;
	bool fp_valid, lr_valid;
};

bool unw_is_a64_sigreturn(const uint8_t *code, size_t len)
{
	/* d2801168 mov x8, #139 (rt_sigreturn); d4000001 svc #0 */
	static const uint8_t insn[UNW_A64_SIGRETURN_LEN] = {
		0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4,
	};

	return len >= sizeof(insn) && !memcmp(code, insn, sizeof(insn));
}

bool unw_check_sigreturn_a64(int (*read_code)(void *, uint64_t, void *,
					      size_t),
			     void *ctx, uint64_t ip, bool exact)
{
	/* A return address is the trampoline's first instruction; a
	 * sampled PC may also be on the svc. */
	uint8_t code[UNW_A64_SIGRETURN_LEN];
	unsigned int back;

	for (back = 0; back <= (exact ? 4u : 0u); back += 4) {
		if (ip < back || (ip & 3))
			break;
		if (read_code(ctx, ip - back, code, sizeof(code)))
			continue;
		if (unw_is_a64_sigreturn(code, sizeof(code)))
			return true;
	}
	return false;
}

static enum sfp_unwind_stop read_stop(int err)
{
	return err == -ERANGE ? SFP_STOP_TRUNCATED : SFP_STOP_UNREADABLE;
}

static int read_u64(const struct unw_env *env, uint64_t addr, uint64_t *v)
{
	return env->read(env->ctx, addr, v, sizeof(*v));
}

static bool reg_value(const struct a64_regs *r, uint16_t dwarf, uint64_t *v)
{
	switch (dwarf) {
	case SFP_DWARF_AARCH64_SP:
		*v = r->sp;
		return true;
	case SFP_DWARF_AARCH64_FP:
		*v = r->fp;
		return r->fp_valid;
	case SFP_DWARF_AARCH64_LR:
		*v = r->lr;
		return r->lr_valid;
	default:
		return false;
	}
}

/* As walk.h's eval_loc: 0 and *v; 1 no rule; -ENOENT a register we lack;
 * a read error. */
static int eval_loc(const struct unw_env *env, const struct a64_regs *r,
		    uint64_t cfa, const struct sfp_loc *loc, uint64_t *v)
{
	uint64_t base;

	switch (loc->kind) {
	case SFP_LOC_CFA:
		*v = cfa + (int64_t)loc->offset;
		return 0;
	case SFP_LOC_CFA_DEREF:
		return read_u64(env, cfa + (int64_t)loc->offset, v);
	case SFP_LOC_REG:
		if (!reg_value(r, loc->reg, &base))
			return -ENOENT;
		*v = base + (int64_t)loc->offset;
		return 0;
	case SFP_LOC_REG_DEREF:
		if (!reg_value(r, loc->reg, &base))
			return -ENOENT;
		return read_u64(env, base + (int64_t)loc->offset, v);
	default:
		return 1;
	}
}

/* One step through a row.  Return: 0 and *next (*from_lr when the RA was
 * LR's value); >0 a stop reason. */
static int step_row(const struct unw_env *env, const struct a64_regs *cur,
		    const struct unw_rule *rule, struct a64_regs *next,
		    bool *from_lr)
{
	uint64_t cfa, ra, fp;
	int err;

	if (rule->flags & SFP_ROW_RA_UNDEFINED ||
	    rule->ra.kind == SFP_LOC_UNDEFINED)
		return SFP_STOP_OUTERMOST;
	if (rule->cfa.kind != SFP_LOC_REG && rule->cfa.kind != SFP_LOC_REG_DEREF)
		return SFP_STOP_NO_INFO;
	err = eval_loc(env, cur, 0, &rule->cfa, &cfa);
	if (err == -ENOENT || err > 0)
		return SFP_STOP_NO_INFO;
	if (err)
		return read_stop(err);

	err = eval_loc(env, cur, cfa, &rule->ra, &ra);
	if (err > 0) {
		/* No RA rule: it is still in LR. */
		if (!cur->lr_valid)
			return SFP_STOP_NO_INFO;
		ra = cur->lr;
		*from_lr = true;
		err = 0;
	}
	if (err == -ENOENT)
		return SFP_STOP_NO_INFO;
	if (err)
		return read_stop(err);

	next->fp = cur->fp;
	next->fp_valid = cur->fp_valid;
	/* The FP slot below SP: the epilogue has restored x29 already (and
	 * a snapshot, which starts at SP, lacks the bytes). */
	if (rule->fp.kind == SFP_LOC_CFA_DEREF &&
	    cfa + (int64_t)rule->fp.offset < cur->sp)
		goto done;
	err = eval_loc(env, cur, cfa, &rule->fp, &fp);
	if (err == 0) {
		next->fp = fp;
		next->fp_valid = true;
	} else if (err == -ENOENT) {
		next->fp_valid = false;
	} else if (err < 0) {
		return read_stop(err);
	}
done:
	next->ip = ra;
	next->sp = cfa;
	return 0;
}

/* The frame record: x29 -> {caller's x29, return address}. */
static int step_fp(const struct unw_env *env, const struct a64_regs *cur,
		   struct a64_regs *next)
{
	uint64_t v[2];
	int err;

	if (env->no_fp_fallback || !cur->fp_valid || cur->fp & 7 ||
	    (cur->fp < cur->sp &&
	     !(env->other_stack && env->other_stack(env->ctx, cur->fp))))
		return SFP_STOP_NO_INFO;
	err = env->read(env->ctx, cur->fp, v, sizeof(v));
	if (err)
		return read_stop(err);
	next->fp = v[0];
	next->fp_valid = true;
	next->ip = v[1];
	/* The caller's SP is at least this (the record is the lowest part
	 * of the frame gcc builds); exact for frames that save nothing
	 * else. */
	next->sp = cur->fp + 16;
	return 0;
}

static int step_signal(const struct unw_env *env, const struct a64_regs *cur,
		       struct a64_regs *next)
{
	int err;

	err = read_u64(env, cur->sp + A64_FRAME_PC, &next->ip);
	if (!err)
		err = read_u64(env, cur->sp + A64_FRAME_SP, &next->sp);
	if (!err)
		err = read_u64(env, cur->sp + A64_FRAME_X29, &next->fp);
	if (!err)
		err = read_u64(env, cur->sp + A64_FRAME_X30, &next->lr);
	if (err)
		return read_stop(err);
	next->fp_valid = true;
	next->lr_valid = true;
	return 0;
}

/* Does a BL or BLR (any PAuth form) sit right before ra? */
static bool after_call(const struct unw_env *env, uint64_t ra)
{
	uint8_t b[4];
	uint32_t insn;

	if (!env->read_code || ra < 4 || (ra & 3) ||
	    env->read_code(env->code_ctx ?: env->ctx, ra - 4, b, sizeof(b)))
		return false;
	insn = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
	return (insn & 0xfc000000u) == 0x94000000u ||	/* bl */
	       (insn & 0xfffffc1fu) == 0xd63f0000u ||	/* blr */
	       (insn & 0xfefff800u) == 0xd63f0800u;	/* blraa/ab(z) */
}

size_t unw_walk_aarch64(const struct unw_env *env, const struct sfp_regs *regs,
			struct sfp_frame *frames, size_t max,
			enum sfp_unwind_stop *stop)
{
	struct a64_regs cur = {
		.ip = regs->ip,
		.sp = regs->sp,
		.fp = regs->fp,
		.lr = regs->lr,
		.fp_valid = regs->valid & SFP_REGS_FP,
		.lr_valid = regs->valid & SFP_REGS_LR,
	}, next;
	bool exact = !env->first_is_ra, top = exact, switched = false;
	uint64_t mask = env->ra_mask ? env->ra_mask : ~0ull;
	struct unw_rule rulebuf;
	const struct unw_rule *rule;
	size_t n = 0;
	int why = 0;

	for (;;) {
		uint32_t how = 0;
		bool from_lr = false;

		rule = env->lookup(env->ctx, exact ? cur.ip : cur.ip - 1,
				   cur.ip, &rulebuf);
		if (rule->kind == UNW_R_NOT_CODE && n > 0) {
			why = SFP_STOP_BAD_RA;
			break;
		}
		if (n >= max) {
			why = SFP_STOP_DEPTH;
			break;
		}
		if (env->ips) {
			env->ips[n] = (void *)(uintptr_t)cur.ip;
		} else {
			frames[n].ip = cur.ip;
			frames[n].sp = cur.sp;
			frames[n].flags = exact ? SFP_FRAME_EXACT : 0;
		}
		n++;

		memset(&next, 0, sizeof(next));
		switch (rule->kind) {
		case UNW_R_SIGRETURN:
			why = step_signal(env, &cur, &next);
			how = SFP_FRAME_SIGNAL;
			break;
		case UNW_R_ROW:
			if (rule->flags & SFP_ROW_SIGNAL) {
				why = step_signal(env, &cur, &next);
				how = SFP_FRAME_SIGNAL;
				break;
			}
			why = step_row(env, &cur, rule, &next, &from_lr);
			how = SFP_FRAME_SFRAME;
			if (why == SFP_STOP_NO_INFO) {
				from_lr = false;
				why = step_fp(env, &cur, &next);
				how = SFP_FRAME_FP;
			}
			break;
		default:
			/* Code without a row, topmost: nothing pushed yet
			 * is the likelier case when LR follows a call. */
			if (top && cur.lr_valid && after_call(env, cur.lr & mask)) {
				struct unw_rule rrbuf;
				const struct unw_rule *rr;

				rr = env->lookup(env->ctx, (cur.lr & mask) - 1,
						 cur.lr & mask, &rrbuf);
				if (rr->kind != UNW_R_NOT_CODE) {
					next = cur;
					next.ip = cur.lr;
					next.lr_valid = false;
					from_lr = true;
					how = SFP_FRAME_ENTRY;
					why = 0;
					break;
				}
			}
			why = step_fp(env, &cur, &next);
			how = SFP_FRAME_FP;
			break;
		}
		if (why)
			break;
		if (!env->ips)
			frames[n - 1].flags |= how;
		next.ip &= mask;
		if (next.ip == 0) {
			why = SFP_STOP_RA_ZERO;
			break;
		}
		/* The stack grows down; a return address taken from LR may
		 * leave SP where it was (a leaf that pushed nothing), and LR
		 * is then gone, so that cannot repeat.  A signal frame may
		 * switch stacks. */
		if (env->other_stack && !switched &&
		    env->other_stack(env->ctx, next.sp) &&
		    !env->other_stack(env->ctx, cur.sp)) {
			/* onto the other stack the snapshot holds, once (as
			 * walk.h: a call before the return address, but
			 * for the outermost frame there) */
			if (next.fp_valid && next.fp &&
			    !after_call(env, next.ip)) {
				why = SFP_STOP_BAD_RA;
				break;
			}
			switched = true;
			if (!env->ips)
				frames[n - 1].flags |= SFP_FRAME_OTHER_STACK;
		} else if (how != SFP_FRAME_SIGNAL &&
			   (next.sp < cur.sp ||
			    (next.sp == cur.sp && !from_lr))) {
			why = SFP_STOP_SP_NOT_INCREASING;
			break;
		}
		exact = how == SFP_FRAME_SIGNAL;
		top = exact;
		cur = next;
	}
	*stop = why;
	return n;
}
