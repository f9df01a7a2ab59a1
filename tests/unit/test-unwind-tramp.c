// SPDX-License-Identifier: MIT
/*
 * Interpreters' perf trampolines (src/unwind/interp-tramp.c): the byte
 * matcher on the code CPython 3.12.1 and 3.13.0 wrote into a live
 * process (read from /proc/PID/mem at the addresses of its
 * /tmp/perf-PID.map, `python -X perf`), near misses that must not match,
 * and walks through such code in anonymous memory, with a live reader and
 * with a stack snapshot of a process whose code is read by its pid (the
 * recorder's case).
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sfprof/unwind.h>

#include "test.h"
#include "unwind/unwind-internal.h"

/* 3.12.1: the first five entries of its perf map, back to back (11-byte
 * stride): 4883ec08 ffd1 4883c408 c3, i.e. sub $8,%rsp; call *%rcx;
 * add $8,%rsp; ret (objdump -D -b binary -mi386:x86-64). */
static const uint8_t py312[] = {
	0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3,
	0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3,
	0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3,
	0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3,
	0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08,
};

/* 3.13.0: the same code on a 16-byte stride, zero padding between. */
static const uint8_t py313[] = {
	0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3,
	0x00, 0x00, 0x00, 0x00, 0x00,
	0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3,
	0x00, 0x00, 0x00, 0x00, 0x00,
	0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
};

static void expect_rule(const struct unw_rule *r, int cfa, bool fp_saved)
{
	ASSERT_EQ(r->kind, UNW_R_TRAMP);
	ASSERT_EQ(r->cfa.kind, SFP_LOC_REG);
	ASSERT_EQ(r->cfa.reg, SFP_DWARF_AMD64_SP);
	ASSERT_EQ(r->cfa.offset, cfa);
	ASSERT_EQ(r->ra.kind, SFP_LOC_CFA_DEREF);
	ASSERT_EQ(r->ra.offset, -8);
	ASSERT_EQ(r->fp.kind, fp_saved ? SFP_LOC_CFA_DEREF : SFP_LOC_NONE);
}

TEST(unwind_tramp_cpython_312_313_bytes)
{
	/* offset in one copy -> CFA = SP + that, for an exact ip */
	static const struct { size_t off; int cfa; } insn[] = {
		{ 0, 8 }, { 4, 16 }, { 6, 16 }, { 10, 8 },
	};
	struct unw_rule r;
	size_t k, i;

	for (k = 0; k < 4; k++) {
		size_t base = k * 11;

		/* a return address: the instruction after the call */
		memset(&r, 0xa5, sizeof(r));
		ASSERT_EQ(unw_tramp_match(py312, sizeof(py312), base + 6,
					  false, &r), 0);
		expect_rule(&r, 16, false);
		for (i = 0; i < 4; i++) {
			ASSERT_EQ(unw_tramp_match(py312, sizeof(py312),
						  base + insn[i].off, true,
						  &r), 0);
			expect_rule(&r, insn[i].cfa, false);
		}
		/* no other offset is a return address */
		for (i = 0; i < 11; i++)
			if (i != 6)
				ASSERT_EQ(unw_tramp_match(py312,
							  sizeof(py312),
							  base + i, false,
							  NULL),
					  -1);
	}
	ASSERT_TRUE(!strcmp(unw_tramp_name(0), "cpython-3.12"));
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(unw_tramp_match(py313, sizeof(py313), k * 16 + 6,
					  false, &r), 0);
		expect_rule(&r, 16, false);
		/* the padding is no instruction of it */
		ASSERT_EQ(unw_tramp_match(py313, sizeof(py313), k * 16 + 12,
					  true, NULL), -1);
	}
	/* the last copies are cut by the window's end: no match */
	ASSERT_EQ(unw_tramp_match(py312, sizeof(py312), 44 + 6, false, NULL),
		  -1);
	ASSERT_EQ(unw_tramp_match(py313, sizeof(py313), 32 + 4, true, NULL),
		  -1);
}

TEST(unwind_tramp_near_misses)
{
	static const uint8_t good[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
					0x48, 0x83, 0xc4, 0x08, 0xc3 };
	/* one byte changed at a time: sub $0x10 / call *%rdx / add $0x10 /
	 * ret $imm16 ... */
	static const struct { size_t at; uint8_t v; } flip[] = {
		{ 0, 0x49 }, { 2, 0xed }, { 3, 0x10 }, { 4, 0xfe },
		{ 5, 0xd2 }, { 6, 0x90 }, { 8, 0xc5 }, { 9, 0x10 },
		{ 10, 0xc2 },
	};
	/* the frame-pointer variant (a later CPython's asm_trampoline.S):
	 * push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp; ret */
	static const uint8_t fp[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1,
				      0x5d, 0xc3 };
	/* a CET build's: endbr64 first */
	static const uint8_t cet[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83,
				       0xec, 0x08, 0xff, 0xd1, 0x48, 0x83,
				       0xc4, 0x08, 0xc3 };
	uint8_t b[sizeof(good)];
	struct unw_rule r;
	size_t i;

	ASSERT_EQ(unw_tramp_match(good, sizeof(good), 6, false, NULL), 0);
	for (i = 0; i < ARRAY_SIZE(flip); i++) {
		memcpy(b, good, sizeof(b));
		b[flip[i].at] = flip[i].v;
		if (!ASSERT_EQ(unw_tramp_match(b, sizeof(b), 6, false, NULL),
			       -1))
			break;
	}
	/* one byte short */
	ASSERT_EQ(unw_tramp_match(good, sizeof(good) - 1, 6, false, NULL), -1);
	/* the variants: their own rules */
	ASSERT_EQ(unw_tramp_match(fp, sizeof(fp), 6, false, &r), 2);
	expect_rule(&r, 16, true);
	ASSERT_EQ(r.fp.offset, -16);
	ASSERT_EQ(unw_tramp_match(fp, sizeof(fp), 7, true, &r), 2);
	expect_rule(&r, 8, false);
	/* (its tail is the plain pattern: either gives the same rule) */
	ASSERT_TRUE(unw_tramp_match(cet, sizeof(cet), 10, false, &r) >= 0);
	expect_rule(&r, 16, false);
	ASSERT_EQ(unw_tramp_match(cet, sizeof(cet), 0, true, &r), 1);
	expect_rule(&r, 8, false);
	ASSERT_EQ(unw_tramp_match(cet, sizeof(cet), 14, true, &r), 0);
	expect_rule(&r, 8, false);
	ASSERT_EQ(unw_tramp_match(cet, sizeof(cet), 6, false, NULL), -1);
}

#if defined(__x86_64__)
/*
 * A synthetic stack: frame 0 at code + 0x200 (no table: frame pointer),
 * whose caller is the third 3.12 trampoline's return address; the
 * trampoline's caller at code + 0x105.
 */
static int walk_through(const uint8_t *tramps, size_t tramps_len,
			bool snapshot, struct sfp_frame *fr,
			enum sfp_unwind_stop *stop, uint64_t **stack_out,
			uint8_t **code_out)
{
	long pg = sysconf(_SC_PAGESIZE);
	static uint64_t stack[16];
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *r = NULL;
	struct sfp_regs regs = { 0 };
	uint8_t *code;
	int n = -1;

	code = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	memset(code, 0xcc, pg);
	memcpy(code, tramps, tramps_len);
	mprotect(code, pg, PROT_READ | PROT_EXEC);

	memset(stack, 0, sizeof(stack));
	stack[2] = 0;				/* caller's fp */
	stack[3] = (uintptr_t)code + 22 + 6;	/* into trampoline 3 */
	stack[4] = 0x1111;			/* its sub $8 slot */
	stack[5] = (uintptr_t)code + 0x105;	/* its return address */
	regs.ip = (uintptr_t)code + 0x200;
	regs.sp = (uintptr_t)&stack[0];
	regs.fp = (uintptr_t)&stack[2];
	regs.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP;

	/* The space from /proc/self/maps: the page is anonymous there. */
	SFP_OPTS(sfp_addr_space_opts, ao, .pid = getpid());
	if (sfp_addr_space__new(&ao, &as) ||
	    sfp_addr_space__load_pid(as, getpid()))
		goto out;
	if (snapshot ? sfp_reader__new_snapshot(stack, sizeof(stack),
						regs.sp, &r)
		     : sfp_reader__new_self(&r))
		goto out;
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, stop);
out:
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
	*stack_out = stack;
	*code_out = code;
	return n;
}
#endif

TEST(unwind_tramp_walk_through_anonymous_code)
{
#if defined(__x86_64__)
	struct sfp_frame fr[8];
	enum sfp_unwind_stop stop;
	uint64_t *stack;
	uint8_t *code, bad[sizeof(py312)];
	long pg = sysconf(_SC_PAGESIZE);
	int n, snap;

	for (snap = 0; snap < 2; snap++) {
		n = walk_through(py312, sizeof(py312), snap, fr, &stop,
				 &stack, &code);
		if (ASSERT_EQ(n, 3)) {
			ASSERT_EQ(fr[1].ip, (uintptr_t)code + 28);
			ASSERT_TRUE(fr[0].flags & SFP_FRAME_FP);
			ASSERT_TRUE(fr[1].flags & SFP_FRAME_TRAMPOLINE);
			ASSERT_EQ(fr[2].ip, (uintptr_t)code + 0x105);
			ASSERT_EQ(fr[2].sp, (uintptr_t)&stack[6]);
			/* the caller has neither table nor frame pointer */
			ASSERT_EQ(stop, SFP_STOP_NO_INFO);
		}
		munmap(code, pg);
	}

	/* Not a trampoline (call *%rdx in the third copy): not stepped. */
	memcpy(bad, py312, sizeof(bad));
	bad[22 + 5] = 0xd2;
	n = walk_through(bad, sizeof(bad), true, fr, &stop, &stack, &code);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(stop, SFP_STOP_NO_INFO);
	munmap(code, pg);
#else
	/* The patterns are x86-64 code: an address space of this machine
	 * never asks for them (no interpreter here writes them). */
	ASSERT_EQ(unw_tramp_match(py312, sizeof(py312), 6, false, NULL), 0);
#endif
}

/*
 * The recorder reads a process's trampolines by its pid, often after the
 * process has exited (it works behind the samples).  Once a trampoline of
 * an arena was read live, the arena's bytes are kept: another trampoline
 * of it, first asked for after the exit, is still stepped, where a space
 * that never read the arena live cannot step it.
 */
TEST(unwind_tramp_kept_after_exit)
{
#if defined(__x86_64__)
	long pg = sysconf(_SC_PAGESIZE);
	struct sfp_addr_space *as = NULL, *fresh = NULL;
	struct sfp_reader *r = NULL;
	static uint64_t stack[16];
	struct sfp_regs regs = { 0 };
	struct sfp_frame fr[8];
	enum sfp_unwind_stop stop;
	int go[2], n, status;
	uint8_t *code;
	pid_t child;

	code = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(code != MAP_FAILED) || !ASSERT_OK(pipe(go)))
		return;
	memset(code, 0xcc, pg);
	memcpy(code, py312, sizeof(py312));
	mprotect(code, pg, PROT_READ | PROT_EXEC);
	child = fork();
	if (child == 0) {
		char c;

		close(go[1]);
		(void)!read(go[0], &c, 1);	/* until the parent closes */
		_exit(0);
	}
	close(go[0]);
	if (!ASSERT_TRUE(child > 0))
		goto out;

	/* frame 0 without table or frame pointer, its caller in a
	 * trampoline (at + 6: after call *%rcx), that one's caller at
	 * code + 0x105 */
	regs.ip = (uintptr_t)code + 0x200;
	regs.sp = (uintptr_t)&stack[0];
	regs.fp = (uintptr_t)&stack[2];
	regs.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP;
	stack[2] = 0;
	stack[4] = 0x1111;
	stack[5] = (uintptr_t)code + 0x105;
	SFP_OPTS(sfp_addr_space_opts, ao, .pid = child);
	if (!ASSERT_OK(sfp_addr_space__new(&ao, &as)) ||
	    !ASSERT_OK(sfp_addr_space__load_pid(as, child)) ||
	    !ASSERT_OK(sfp_addr_space__new(&ao, &fresh)) ||
	    !ASSERT_OK(sfp_addr_space__load_pid(fresh, child)) ||
	    !ASSERT_OK(sfp_reader__new_snapshot(stack, sizeof(stack),
						regs.sp, &r)))
		goto out;

	/* live: the third trampoline */
	stack[3] = (uintptr_t)code + 22 + 6;
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	if (ASSERT_EQ(n, 3))
		ASSERT_TRUE(fr[1].flags & SFP_FRAME_TRAMPOLINE);

	/* the process gone: the second one, never asked for before */
	close(go[1]);
	go[1] = -1;
	waitpid(child, &status, 0);
	child = -1;
	stack[3] = (uintptr_t)code + 11 + 6;
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	if (ASSERT_EQ(n, 3)) {
		ASSERT_TRUE(fr[1].flags & SFP_FRAME_TRAMPOLINE);
		ASSERT_EQ(fr[2].ip, (uintptr_t)code + 0x105);
	}
	/* a space that never read it live has nothing to step it by */
	n = sfp_unwind(fresh, r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(stop, SFP_STOP_NO_INFO);

	/* the mapping replaced: its kept bytes go with it */
	ASSERT_OK(sfp_addr_space__remove_range(as, (uintptr_t)code,
					       (uintptr_t)code + pg));
	{
		struct sfp_map m = { .start = (uintptr_t)code,
				     .end = (uintptr_t)code + pg,
				     .prot = SFP_MAP_READ | SFP_MAP_EXEC };

		ASSERT_OK(sfp_addr_space__add_map(as, &m));
	}
	stack[3] = (uintptr_t)code + 6;
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
out:
	if (go[1] >= 0)
		close(go[1]);
	if (child > 0)
		waitpid(child, &status, 0);
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
	sfp_addr_space__free(&fresh);
	munmap(code, pg);
#else
	ASSERT_EQ(unw_tramp_match(py312, sizeof(py312), 6, false, NULL), 0);
#endif
}
