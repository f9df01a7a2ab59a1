// SPDX-License-Identifier: MIT
/*
 * A sample in an epilogue, after `pop %rbp`: gcc's CFI still says "rbp
 * saved at CFA-16", but that slot now lies below SP, outside any stack
 * snapshot.  The walk must take rbp as already restored and go on, not
 * stop as unreadable (perf's dwarf-mode samples in libc's msort epilogue
 * showed it).  The code is assembled here with explicit CFI and unwound
 * through the table sfprof builds from its .eh_frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sfprof/unwind.h>

#include "test.h"

static const char asm_src[] =
	"\t.text\n"
	"caller_fn:\n\t.cfi_startproc\n\t.cfi_undefined rip\n"
	"\tcall epi_fn\ncaller_ret:\n\tret\n\t.cfi_endproc\n"
	"epi_fn:\n\t.cfi_startproc\n"
	"\tpush %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset rbp, -16\n"
	"\tpush %rbx\n\t.cfi_def_cfa_offset 24\n\t.cfi_offset rbx, -24\n"
	"\tpop %rbx\n\t.cfi_def_cfa_offset 16\n"
	"\tpop %rbp\n\t.cfi_def_cfa_offset 8\n"
	"epi_ret:\n\tret\n\t.cfi_endproc\n";

static int sym_addr(const char *so, const char *name, uint64_t *addr)
{
	char cmd[1024], line[256];
	FILE *p;
	int found = -1;

	snprintf(cmd, sizeof(cmd), "nm %s", so);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char t, n[128];

		if (sscanf(line, "%llx %c %127s", &a, &t, n) == 3 &&
		    !strcmp(n, name)) {
			*addr = a;
			found = 0;
		}
	}
	pclose(p);
	return found;
}

TEST(unwind_epilogue_fp_slot_below_sp)
{
	char src[512], so[512], cmd[1536];
	uint64_t epi_ret = 0, caller_ret = 0, stack[4] = { 0 };
	const uint64_t SP = 0x7ff000000000ull;
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *r = NULL;
	struct sfp_frame fr[8];
	enum sfp_unwind_stop stop = SFP_STOP_NONE;
	FILE *f;
	long size;
	int n;

	snprintf(src, sizeof(src), "%s/epi-%d.S", test_tmp_dir(), getpid());
	snprintf(so, sizeof(so), "%s/epi-%d.so", test_tmp_dir(), getpid());
	f = fopen(src, "w");
	if (!ASSERT_NOT_NULL(f))
		return;
	fputs(asm_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -nostdlib -shared -o %s %s", so, src);
	if (system(cmd)) {
		test_skip("cannot assemble with gcc");
		return;
	}
	if (!ASSERT_OK(sym_addr(so, "epi_ret", &epi_ret)) ||
	    !ASSERT_OK(sym_addr(so, "caller_ret", &caller_ret)))
		goto out;
	f = fopen(so, "rb");
	if (!ASSERT_NOT_NULL(f))
		goto out;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);

	/* The whole file mapped at 0: runtime addresses = link addresses. */
	struct sfp_map m = { .start = 0, .end = ((uint64_t)size + 4095) & ~4095ull,
			     .pgoff = 0, .prot = SFP_MAP_READ | SFP_MAP_EXEC,
			     .path = so };
	/* x86-64 code, unwound on any host. */
	SFP_OPTS(sfp_addr_space_opts, ao, .arch = SFP_ARCH_X86_64,
		 .no_cache = true);
	struct sfp_regs regs = { .ip = epi_ret, .sp = SP, .fp = 0x1234,
				 .valid = SFP_REGS_IP | SFP_REGS_SP |
					  SFP_REGS_FP };

	stack[0] = caller_ret;	/* the snapshot starts at SP, as perf's */
	if (!ASSERT_OK(sfp_addr_space__new(&ao, &as)) ||
	    !ASSERT_OK(sfp_addr_space__add_map(as, &m)) ||
	    !ASSERT_OK(sfp_reader__new_snapshot(stack, sizeof(stack), SP, &r)))
		goto out;
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	if (!ASSERT_EQ(n, 2))
		goto out;
	ASSERT_EQ(fr[0].ip, epi_ret);
	ASSERT_EQ(fr[1].ip, caller_ret);
	ASSERT_EQ(stop, SFP_STOP_OUTERMOST);
out:
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
	unlink(src);
	unlink(so);
}
