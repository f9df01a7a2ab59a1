// SPDX-License-Identifier: MIT
/*
 * Interpreters' perf trampolines: code an interpreter writes at run time
 * into anonymous executable memory, with no unwind table and (in CPython
 * 3.12 and 3.13) no frame pointer, so that perf maps can name one frame
 * per interpreted function.  Without a rule the walk stops at the first
 * such frame.
 *
 * The code is a handful of fixed instructions, so it is recognised by its
 * bytes, exactly, and each instruction boundary of a known pattern has a
 * known CFA.  A perf map's name is not trusted for this: the bytes are
 * what the step depends on, and anything that is not byte for byte one of
 * these patterns is not stepped.
 *
 * CPython's trampoline (Python/asm_trampoline.S) is
 * `trampoline(ts, frame, throwflag, evaluator) { return evaluator(...); }`
 * with the evaluator in %rcx:
 *
 *   3.12, 3.13:  sub $8,%rsp; call *%rcx; add $8,%rsp; ret
 *   later:       push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp; ret
 *
 * each optionally after an endbr64 (CET builds).  The copies sit back to
 * back in the trampoline arena (3.12.1: an 11-byte stride; 3.13.0: 16),
 * which is why the match is anchored at the PC's offset in the pattern,
 * not at an alignment.
 */
#include "unwind/unwind-internal.h"

#define TRAMP_MAX_LEN 16
#define TRAMP_MAX_INSNS 6
#define FP_KEPT INT8_MIN

struct tramp_insn {
	uint8_t off;		/* instruction start, from the pattern's */
	int8_t cfa;		/* CFA = SP + cfa at that point */
	int8_t fp;		/* the caller's FP at CFA + fp; FP_KEPT */
};

struct tramp_pattern {
	const char *name;
	uint8_t len;
	uint8_t call_end;	/* offset of the return address */
	uint8_t code[TRAMP_MAX_LEN];
	uint8_t nr_insns;
	struct tramp_insn insn[TRAMP_MAX_INSNS];
};

#define ENDBR64 0xf3, 0x0f, 0x1e, 0xfa

static const struct tramp_pattern patterns[] = {
	{
		"cpython-3.12",
		11, 6,
		{ 0x48, 0x83, 0xec, 0x08,	/* sub $8,%rsp */
		  0xff, 0xd1,			/* call *%rcx */
		  0x48, 0x83, 0xc4, 0x08,	/* add $8,%rsp */
		  0xc3 },			/* ret */
		4,
		{ { 0, 8, FP_KEPT }, { 4, 16, FP_KEPT },
		  { 6, 16, FP_KEPT }, { 10, 8, FP_KEPT } },
	},
	{
		"cpython-3.12-cet",
		15, 10,
		{ ENDBR64,
		  0x48, 0x83, 0xec, 0x08,
		  0xff, 0xd1,
		  0x48, 0x83, 0xc4, 0x08,
		  0xc3 },
		5,
		{ { 0, 8, FP_KEPT }, { 4, 8, FP_KEPT }, { 8, 16, FP_KEPT },
		  { 10, 16, FP_KEPT }, { 14, 8, FP_KEPT } },
	},
	{
		"cpython-fp",
		8, 6,
		{ 0x55,				/* push %rbp */
		  0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
		  0xff, 0xd1,			/* call *%rcx */
		  0x5d,				/* pop %rbp */
		  0xc3 },			/* ret */
		5,
		{ { 0, 8, FP_KEPT }, { 1, 16, -16 }, { 4, 16, -16 },
		  { 6, 16, -16 }, { 7, 8, FP_KEPT } },
	},
	{
		"cpython-fp-cet",
		12, 10,
		{ ENDBR64,
		  0x55,
		  0x48, 0x89, 0xe5,
		  0xff, 0xd1,
		  0x5d,
		  0xc3 },
		6,
		{ { 0, 8, FP_KEPT }, { 4, 8, FP_KEPT }, { 5, 16, -16 },
		  { 8, 16, -16 }, { 10, 16, -16 }, { 11, 8, FP_KEPT } },
	},
};

static void tramp_rule(const struct tramp_insn *in, struct unw_rule *rule)
{
	memset(rule, 0, sizeof(*rule));
	rule->kind = UNW_R_TRAMP;
	rule->cfa.kind = SFP_LOC_REG;
	rule->cfa.reg = SFP_DWARF_AMD64_SP;
	rule->cfa.offset = in->cfa;
	rule->ra.kind = SFP_LOC_CFA_DEREF;
	rule->ra.offset = -8;
	if (in->fp != FP_KEPT) {
		rule->fp.kind = SFP_LOC_CFA_DEREF;
		rule->fp.offset = in->fp;
	}
}

int unw_tramp_match(const uint8_t *win, size_t n, size_t at, bool exact,
		    struct unw_rule *rule)
{
	size_t i, k;

	for (i = 0; i < ARRAY_SIZE(patterns); i++) {
		const struct tramp_pattern *p = &patterns[i];

		for (k = 0; k < p->nr_insns; k++) {
			const struct tramp_insn *in = &p->insn[k];
			size_t start;

			/* A caller's ip is a return address: only the
			 * instruction after the call can be one. */
			if (!exact && in->off != p->call_end)
				continue;
			if (at < in->off)
				continue;
			start = at - in->off;
			if (start + p->len > n ||
			    memcmp(win + start, p->code, p->len))
				continue;
			if (rule)
				tramp_rule(in, rule);
			return (int)i;
		}
	}
	return -1;
}

const char *unw_tramp_name(int pattern)
{
	if (pattern < 0 || (size_t)pattern >= ARRAY_SIZE(patterns))
		return NULL;
	return patterns[pattern].name;
}

bool unw_tramp_lookup(int (*read_code)(void *, uint64_t, void *, size_t),
		      void *ctx, uint64_t lo, uint64_t hi, uint64_t ip,
		      bool exact, struct unw_rule *rule)
{
	uint8_t win[2 * TRAMP_MAX_LEN];
	uint64_t start, end;

	if (ip < lo || ip >= hi)
		return false;
	/* Every pattern starting at most TRAMP_MAX_LEN - 1 bytes before ip
	 * and ending at most TRAMP_MAX_LEN bytes after it, within the
	 * mapping. */
	start = ip - lo < TRAMP_MAX_LEN ? lo : ip - TRAMP_MAX_LEN;
	end = hi - ip < TRAMP_MAX_LEN ? hi : ip + TRAMP_MAX_LEN;
	if (read_code(ctx, start, win, (size_t)(end - start)))
		return false;
	return unw_tramp_match(win, (size_t)(end - start),
			       (size_t)(ip - start), exact, rule) >= 0;
}
