// SPDX-License-Identifier: MIT
/*
 * An object with its own .sframe that leaves code out: GNU as makes
 * SFrame only for what it assembles with --gsframe, so a program's
 * .sframe lacks the crt's _start (and anything else linked in from
 * objects without it).  For such PCs the address space asks the table
 * built from the object's CFI, where _start says "return address
 * undefined": the walk ends there as the outermost frame, not with
 * "no-info".  The object is a copy of this test binary with a one-function
 * .sframe section added (objcopy), mapped over our own text.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <sfprof/sframe.h>
#include <sfprof/unwind.h>

#include "test.h"

/* The crt's entry point (Scrt1.o / crt1.o). */
extern char _start[];

/* The one function the added .sframe describes: a plain leaf. */
__attribute__((noinline)) int sfp_crt_test_leaf(int x);
__attribute__((noinline)) int sfp_crt_test_leaf(int x)
{
	return x * 3 + 1;
}

TEST(unwind_own_sframe_falls_back_to_cfi)
{
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *r = NULL;
	struct sfp_sframe_builder *b = NULL;
	struct sfp_frame fr[4];
	enum sfp_unwind_stop stop;
	struct sfp_map_info mi, mi2;
	uint64_t buf[32] = { 0 };
	struct sfp_regs regs = { 0 };
	char exe[2048], blob[2300], copy[2300], cmd[8192];
	void *sec = NULL;
	size_t sec_size = 0;
	ssize_t len;
	uint64_t fn;
	FILE *f;
	int n;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (!ASSERT_TRUE(len > 0))
		return;
	exe[len] = 0;
	if (system("objcopy --version > /dev/null 2>&1")) {
		test_skip("objcopy not installed");
		return;
	}
	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)) ||
	    !ASSERT_OK(sfp_addr_space__load_pid(as, getpid())) ||
	    !ASSERT_OK(sfp_addr_space__find(as, (uintptr_t)_start, &mi)) ||
	    !ASSERT_OK(sfp_addr_space__find(as, (uintptr_t)sfp_crt_test_leaf,
					    &mi2)))
		goto out;
	/* _start and the leaf in one text mapping, as in any executable */
	if (!ASSERT_EQ(mi.start, mi2.start))
		goto out;
	fn = (uintptr_t)sfp_crt_test_leaf - mi.bias;

	SFP_OPTS(sfp_sframe_builder_opts, bo, .version = 2,
		 .abi = SFP_SFRAME_ABI_AMD64_LE);
	struct sfp_sframe_func func = { .start = fn, .size = 4,
					.num_rows = 1 };
	struct sfp_sframe_row row = {
		.start = fn, .end = fn + 4,
		.cfa = { .kind = SFP_LOC_REG, .reg = SFP_DWARF_AMD64_SP,
			 .offset = 8 },
		.ra = { .kind = SFP_LOC_CFA_DEREF, .offset = -8 },
	};
	if (!ASSERT_OK(sfp_sframe_builder__new(&bo, &b)) ||
	    !ASSERT_OK(sfp_sframe_builder__add_func(b, &func, &row, 1)) ||
	    !ASSERT_OK(sfp_sframe_builder__write(b, &sec, &sec_size)))
		goto out;
	snprintf(blob, sizeof(blob), "%s/crt-%d.sframe", test_tmp_dir(),
		 (int)getpid());
	snprintf(copy, sizeof(copy), "%s/crt-own-sframe-%d", test_tmp_dir(),
		 (int)getpid());
	f = fopen(blob, "wb");
	if (!ASSERT_TRUE(f != NULL))
		goto out;
	fwrite(sec, 1, sec_size, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --add-section .sframe='%s' '%s' '%s'", blob, exe,
		 copy);
	if (!ASSERT_EQ(system(cmd), 0))
		goto out;

	sfp_addr_space__free(&as);
	struct sfp_map m = { .start = mi.start, .end = mi.end,
			     .pgoff = mi.pgoff, .prot = mi.prot, .path = copy };
	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)) ||
	    !ASSERT_OK(sfp_addr_space__add_map(as, &m)) ||
	    !ASSERT_OK(sfp_reader__new_self(&r)))
		goto out;

	/* In the own table: its row, CFA = sp + 8, RA there is 0. */
	regs.ip = (uintptr_t)sfp_crt_test_leaf;
	regs.sp = (uintptr_t)&buf[4];
	regs.valid = SFP_REGS_IP | SFP_REGS_SP;
	n = sfp_unwind(as, r, &regs, fr, 4, NULL, &stop);
	ASSERT_EQ(n, 1);
	ASSERT_TRUE(fr[0].flags & SFP_FRAME_SFRAME);
	ASSERT_EQ(stop, SFP_STOP_RA_ZERO);

	/* _start is not in it: the CFI table's row ends the walk cleanly
	 * (before the fallback: SFP_STOP_NO_INFO). */
	regs.ip = (uintptr_t)_start + 4;
	regs.sp = (uintptr_t)&buf[8];
	buf[8] = (uintptr_t)sfp_crt_test_leaf;	/* would be followed */
	n = sfp_unwind(as, r, &regs, fr, 4, NULL, &stop);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(fr[0].ip, (uintptr_t)_start + 4);
	ASSERT_EQ(stop, SFP_STOP_OUTERMOST);
	unlink(copy);
	unlink(blob);
out:
	free(sec);
	sfp_sframe_builder__free(&b);
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
}
