// SPDX-License-Identifier: MIT
/*
 * The step engine's out-of-line parts: stop-reason names, the signal
 * trampoline check, row conversion, and a generic instantiation of the
 * walk (walk.h).  One loop serves every reader and every table source, so
 * the in-process backtrace and the snapshot unwinder cannot disagree.
 */
#include "unwind/rule-pack.h"
#include "unwind/walk.h"

static const char *const stop_names[SFP_STOP__MAX] = {
	[SFP_STOP_NONE] = "none",
	[SFP_STOP_OUTERMOST] = "outermost",
	[SFP_STOP_RA_ZERO] = "ra-zero",
	[SFP_STOP_SP_NOT_INCREASING] = "sp-not-increasing",
	[SFP_STOP_UNREADABLE] = "unreadable",
	[SFP_STOP_TRUNCATED] = "truncated",
	[SFP_STOP_NO_INFO] = "no-info",
	[SFP_STOP_BAD_RA] = "bad-ra",
	[SFP_STOP_DEPTH] = "depth",
};

const char *sfp_unwind_stop_str(enum sfp_unwind_stop stop)
{
	if ((unsigned int)stop >= SFP_STOP__MAX)
		return "unknown";
	return stop_names[stop];
}

bool unw_is_x86_sigreturn(const uint8_t *code, size_t len)
{
	static const uint8_t insn[UNW_X86_SIGRETURN_LEN] = {
		0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, /* mov $0xf,%rax */
		0x0f, 0x05,				  /* syscall */
	};

	return len >= sizeof(insn) && !memcmp(code, insn, sizeof(insn));
}

bool unw_check_sigreturn(int (*read_code)(void *, uint64_t, void *, size_t),
			 void *ctx, uint64_t ip, bool exact)
{
	/* A caller's ip (a return address) is the trampoline's first byte;
	 * a sampled ip may also sit on the syscall or just after it. */
	static const unsigned int back[] = { 0, 7, 9 };
	uint8_t code[UNW_X86_SIGRETURN_LEN];
	size_t i;

	for (i = 0; i < (exact ? ARRAY_SIZE(back) : 1); i++) {
		if (ip < back[i])
			break;
		if (read_code(ctx, ip - back[i], code, sizeof(code)))
			continue;
		if (unw_is_x86_sigreturn(code, sizeof(code)))
			return true;
	}
	return false;
}

void unw_rule_from_row(struct unw_rule *rule, const struct sfp_sframe_row *row)
{
	rule->kind = UNW_R_ROW;
	rule->flags = row->flags;
	rule->cfa = row->cfa;
	rule->ra = row->ra;
	rule->fp = row->fp;
	rule->fast = 0;
	if (!(row->flags & (SFP_ROW_RA_UNDEFINED | SFP_ROW_SIGNAL)) &&
	    row->cfa.kind == SFP_LOC_REG &&
	    (row->cfa.reg == SFP_DWARF_AMD64_SP ||
	     row->cfa.reg == SFP_DWARF_AMD64_FP) &&
	    (row->ra.kind == SFP_LOC_NONE ||
	     (row->ra.kind == SFP_LOC_CFA_DEREF && row->ra.offset == -8)) &&
	    (row->fp.kind == SFP_LOC_NONE || row->fp.kind == SFP_LOC_CFA_DEREF))
		rule->fast = row->cfa.reg == SFP_DWARF_AMD64_SP ? UNW_FAST_SP
							     : UNW_FAST_FP;
}

/*
 * x86-64: what walk.h's short path steps (rule->fast), the outermost row
 * and the two forms of signal frame.  The kinds stand for exactly the
 * branches the general loop would take for this rule, so a walk over
 * packed entries returns what the general loop returns.
 */
uint64_t unw_rule_pack(const struct unw_rule *rule)
{
	switch (rule->kind) {
	case UNW_R_SIGRETURN:
		return UNW_PK_SIGNAL;
	case UNW_R_ROW:
		break;
	default:
		return 0;
	}
	if (rule->flags & SFP_ROW_SIGNAL)
		return UNW_PK_SIGNAL;
	if (rule->flags & SFP_ROW_RA_UNDEFINED ||
	    rule->ra.kind == SFP_LOC_UNDEFINED)
		return UNW_PK_OUTERMOST;
	if (!rule->fast)
		return 0;
	/* The short path reads the RA at CFA - 8 whatever the row says
	 * (it qualifies only rows whose RA is there or unstated), and the
	 * FP from its slot when the row saves it. */
	return unw_pk_make(rule->fast == UNW_FAST_SP ? UNW_PK_SP : UNW_PK_FP,
			   rule->cfa.offset, -8,
			   rule->fp.kind == SFP_LOC_CFA_DEREF ? rule->fp.offset
							      : INT32_MIN);
}

size_t unw_walk(const struct unw_env *env, uint64_t ip, uint64_t sp,
		uint64_t fp, bool fp_valid, struct sfp_frame *frames,
		size_t max, enum sfp_unwind_stop *stop)
{
	return unw_walk_inline(env, ip, sp, fp, fp_valid, frames, max, stop);
}
