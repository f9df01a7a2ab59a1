/* SPDX-License-Identifier: MIT */
/*
 * The walk loop, as an always-inline function: each caller instantiates
 * it with a constant unw_env, so that the compiler turns the env's
 * callbacks (table lookup, memory read) into direct, inlined calls.  That
 * is what makes a walk over a perf stack snapshot cost a few ns per frame.
 *
 * From one frame's (ip, sp, fp) to its caller's: the SFrame row for the
 * PC, else the frame pointer, else (topmost frame only) the
 * function-entry heuristic; through signal frames via the saved ucontext.
 * Only x86-64 is implemented; the rules are kept general (register +
 * offset, optional dereference) so that AArch64 (RA in LR) and s390x fit
 * later.
 */
#ifndef SFP_UNWIND_WALK_H
#define SFP_UNWIND_WALK_H

#include "unwind/unwind-internal.h"

/* x86-64 ucontext: uc_mcontext.gregs starts at 40; RBP, RSP, RIP indices. */
#define UC_GREGS 40
#define UC_RBP (UC_GREGS + 10 * 8)
#define UC_RSP (UC_GREGS + 15 * 8)
#define UC_RIP (UC_GREGS + 16 * 8)

struct regs {
	uint64_t ip, sp, fp;
	bool fp_valid;
};

/* Map a failed read to the reason the walk stops. */
static inline enum sfp_unwind_stop read_stop(int err)
{
	return err == -ERANGE ? SFP_STOP_TRUNCATED : SFP_STOP_UNREADABLE;
}

static __attribute__((always_inline)) inline int
read_u64(const struct unw_env *env, uint64_t addr, uint64_t *v)
{
	return env->read(env->ctx, addr, v, sizeof(*v));
}

/* Value of a register the rules may name; false when we do not have it. */
static __attribute__((always_inline)) inline bool
reg_value(const struct regs *r, uint16_t dwarf, uint64_t *v)
{
	switch (dwarf) {
	case SFP_DWARF_AMD64_SP:
		*v = r->sp;
		return true;
	case SFP_DWARF_AMD64_FP:
		if (!r->fp_valid)
			return false;
		*v = r->fp;
		return true;
	default:
		return false;
	}
}

/*
 * Evaluate a location whose base is a register or the CFA.  Return: 0 and
 * *v; 1 no rule (the caller applies the ABI default); -ENOENT the rule
 * needs a register we do not have; a read error.
 */
static __attribute__((always_inline)) inline int
eval_loc(const struct unw_env *env, const struct regs *r,
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

/* Does a call instruction end right before ra?  (entry heuristic) */
static __attribute__((noinline, unused)) bool
after_call(int (*read_code)(void *, uint64_t, void *, size_t), void *ctx,
	   uint64_t ra)
{
	uint8_t c[7];
	unsigned int k;

	if (!read_code || ra < sizeof(c) ||
	    read_code(ctx, ra - sizeof(c), c, sizeof(c)))
		return false;
	if (c[2] == 0xe8)		/* call rel32 */
		return true;
	/* call *r/m: ff /2 with 0..5 bytes of modrm/sib/displacement */
	for (k = 2; k <= 7; k++) {
		uint8_t op = c[sizeof(c) - k], modrm;

		if (op != 0xff)
			continue;
		modrm = c[sizeof(c) - k + 1];
		if (((modrm >> 3) & 7) == 2)
			return true;
	}
	return false;
}

/*
 * The FP save slot lies below the current SP: the epilogue has already
 * popped it, so the register holds the caller's value again.  gcc keeps
 * the "saved at CFA-N" rule until the function's end (the bytes are still
 * there in a live process), but a stack snapshot starts at SP and does not
 * have them; reading would stop the walk one frame early.
 */
static inline bool fp_slot_popped(const struct regs *cur, uint64_t cfa,
				  int32_t off)
{
	return cfa + (int64_t)off < cur->sp;
}

/*
 * One step through a row.  Return: 0 and *next; >0 a stop reason.
 */
static __attribute__((always_inline)) inline int
step_row(const struct unw_env *env, const struct regs *cur,
		    const struct unw_rule *rule, struct regs *next)
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
	if (err > 0)	/* AMD64: the return address sits below the CFA */
		err = read_u64(env, cfa - 8, &ra);
	if (err == -ENOENT)
		return SFP_STOP_NO_INFO;
	if (err)
		return read_stop(err);

	next->fp = cur->fp;
	next->fp_valid = cur->fp_valid;
	if (rule->fp.kind == SFP_LOC_CFA_DEREF &&
	    fp_slot_popped(cur, cfa, rule->fp.offset))
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

static __attribute__((always_inline)) inline int
step_fp(const struct unw_env *env, const struct regs *cur,
		   struct regs *next)
{
	uint64_t v[2];
	int err;

	/* A frame pointer below the stack pointer is no caller's frame,
	 * unless it points to the other stack the snapshot holds. */
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
	next->sp = cur->fp + 16;
	return 0;
}

static __attribute__((always_inline)) inline int
step_signal(const struct unw_env *env, const struct regs *cur,
		       struct regs *next)
{
	uint64_t v;
	int err;

	err = read_u64(env, cur->sp + UC_RIP, &next->ip);
	if (!err)
		err = read_u64(env, cur->sp + UC_RSP, &next->sp);
	if (!err)
		err = read_u64(env, cur->sp + UC_RBP, &v);
	if (err)
		return read_stop(err);
	next->fp = v;
	next->fp_valid = true;
	return 0;
}

static __attribute__((always_inline, unused)) inline size_t
unw_walk_inline(const struct unw_env *env, uint64_t ip, uint64_t sp,
		uint64_t fp, bool fp_valid, struct sfp_frame *frames,
		size_t max, enum sfp_unwind_stop *stop)
{
	struct regs cur = { ip, sp, fp, fp_valid }, next;
	bool exact = !env->first_is_ra, top = exact, switched = false;
	struct unw_rule rulebuf;
	const struct unw_rule *rule;
	size_t n = 0;
	int why = 0;

	for (;;) {
		uint32_t how = 0;

		/* Keep the frame's registers in general registers: left to
		 * itself the compiler packs ip/sp into a vector register for
		 * the frames[] store, and the moves in and out of it sit on
		 * the walk's serial chain (RA load -> cache probe -> CFA ->
		 * next RA load). */
		__asm__("" : "+r"(cur.ip), "+r"(cur.sp), "+r"(cur.fp));
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

		next.ip = next.sp = next.fp = 0;
		next.fp_valid = false;
		/* The common AMD64 row, without the general evaluator:
		 * CFA = sp/fp + off, RA at CFA - 8, FP saved at CFA + off or
		 * kept.  (unw_rule_from_row decides what qualifies.) */
		if (rule->fast && (rule->fast == UNW_FAST_SP || cur.fp_valid)) {
			uint64_t cfa = (rule->fast == UNW_FAST_SP ? cur.sp
								  : cur.fp) +
				       (int64_t)rule->cfa.offset;
			uint64_t v[2];
			int err;

			if (rule->fp.kind != SFP_LOC_CFA_DEREF ||
			    fp_slot_popped(&cur, cfa, rule->fp.offset)) {
				err = read_u64(env, cfa - 8, &next.ip);
				next.fp = cur.fp;
				next.fp_valid = cur.fp_valid;
			} else if (rule->fp.offset == -16) {
				err = env->read(env->ctx, cfa - 16, v,
						sizeof(v));
				next.fp = v[0];
				next.ip = v[1];
				next.fp_valid = true;
			} else {
				err = read_u64(env, cfa - 8, &next.ip);
				if (!err)
					err = read_u64(env,
						       cfa + (int64_t)rule->fp.offset,
						       &next.fp);
				next.fp_valid = true;
			}
			if (err) {
				why = read_stop(err);
				break;
			}
			next.sp = cfa;
			how = SFP_FRAME_SFRAME;
			goto stepped;
		}
		switch (rule->kind) {
		case UNW_R_SIGRETURN:
			why = step_signal(env, &cur, &next);
			how = SFP_FRAME_SIGNAL;
			break;
		case UNW_R_TRAMP:
			/* CFA = sp + off, RA below it: never needs a
			 * register we lack */
			why = step_row(env, &cur, rule, &next);
			how = SFP_FRAME_TRAMPOLINE;
			break;
		case UNW_R_ROW:
			if (rule->flags & SFP_ROW_SIGNAL) {
				why = step_signal(env, &cur, &next);
				how = SFP_FRAME_SIGNAL;
				break;
			}
			why = step_row(env, &cur, rule, &next);
			how = SFP_FRAME_SFRAME;
			/* A row that needs a register we lack: try FP. */
			if (why == SFP_STOP_NO_INFO) {
				why = step_fp(env, &cur, &next);
				how = SFP_FRAME_FP;
			}
			break;
		default:
			why = SFP_STOP_NO_INFO;
			if (top) {
				/* At a function's first instruction the
				 * return address is at *sp (CFA = sp + 8).
				 * Trust it only if it follows a call. */
				uint64_t ra;
				struct unw_rule rrbuf;
				const struct unw_rule *rr;

				if (!read_u64(env, cur.sp, &ra) && ra) {
					rr = env->lookup(env->ctx, ra - 1, ra,
							 &rrbuf);
					if (rr->kind != UNW_R_NOT_CODE &&
					    after_call(env->read_code,
						       env->code_ctx ?:
							       env->ctx,
						       ra)) {
						next = cur;
						next.ip = ra;
						next.sp = cur.sp + 8;
						why = 0;
						how = SFP_FRAME_ENTRY;
						break;
					}
				}
			}
			why = step_fp(env, &cur, &next);
			how = SFP_FRAME_FP;
			break;
		}
		if (why)
			break;
stepped:
		if (!env->ips)
			frames[n - 1].flags |= how;
		if (next.ip == 0) {
			why = SFP_STOP_RA_ZERO;
			break;
		}
		/* Onto the other stack the snapshot holds (Go: from g0 to
		 * the goroutine's), in either direction: once a walk. */
		if (env->other_stack && !switched &&
		    env->other_stack(env->ctx, next.sp) &&
		    !env->other_stack(env->ctx, cur.sp)) {
			/* The step's return address, read off the other
			 * stack, must follow a call like any caller's; but
			 * for the outermost frame there (saved frame pointer
			 * 0), whose return address may be made up: Go's
			 * goexit+1, which the runtime plants under every
			 * goroutine's first function. */
			if (next.fp_valid && next.fp &&
			    !after_call(env->read_code,
					env->code_ctx ?: env->ctx, next.ip)) {
				why = SFP_STOP_BAD_RA;
				break;
			}
			switched = true;
			if (!env->ips)
				frames[n - 1].flags |= SFP_FRAME_OTHER_STACK;
		} else if (how != SFP_FRAME_SIGNAL && next.sp <= cur.sp) {
			/* The stack grows down: a caller's frame lies above.
			 * A signal frame may switch stacks (sigaltstack), so
			 * it is exempt. */
			why = SFP_STOP_SP_NOT_INCREASING;
			break;
		}
		exact = how == SFP_FRAME_SIGNAL;
		top = exact;
		/* Field by field: a struct copy here becomes vector moves
		 * that stall on the scalar stores just made. */
		cur.ip = next.ip;
		cur.sp = next.sp;
		cur.fp = next.fp;
		cur.fp_valid = next.fp_valid;
	}
	*stop = why;
	return n;
}

#endif /* SFP_UNWIND_WALK_H */
