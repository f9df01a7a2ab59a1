// SPDX-License-Identifier: MIT
/*
 * The unwinder through the shared library: every public function must be
 * exported (this binary fails to link otherwise) and work from outside.
 */
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include <sfprof/unwind.h>

#include "test.h"

TEST(api_unwind_exports)
{
	struct sfp_addr_space *as = NULL, *child = NULL;
	struct sfp_reader *snap = NULL, *self = NULL;
	struct sfp_frame fr[64];
	struct sfp_map_info mi;
	enum sfp_unwind_stop stop;
	struct sfp_regs regs;
	uint64_t stack[4] = { 0 }, v;
#if defined(__aarch64__)
	/* LR (0), SP, PC: bits 30..32 of arm64's perf_regs. */
	const uint64_t pmask = 7ull << 30;
#else
	/* BP, SP, IP: bits 6..8 of x86's perf_regs. */
	const uint64_t pmask = 0x1c0;
#endif
	const uint64_t pv[] = { 0, (uintptr_t)stack, (uintptr_t)&sfp_unwind };
	void *bt[64];
	int n;

	ASSERT_OK(sfp_regs__from_perf(SFP_ARCH_HOST, pmask, pv, 3, &regs));
	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)) ||
	    !ASSERT_OK(sfp_addr_space__load_pid(as, getpid())) ||
	    !ASSERT_OK(sfp_reader__new_snapshot(stack, sizeof(stack),
						(uintptr_t)stack, &snap)) ||
	    !ASSERT_OK(sfp_reader__new_self(&self)))
		goto out;
	ASSERT_TRUE(sfp_addr_space__num_maps(as) > 0);
	if (ASSERT_OK(sfp_addr_space__find(as, (uintptr_t)&sfp_unwind, &mi)))
		ASSERT_TRUE(mi.has_table);
	/* (Through process_vm_readv(), which qemu-user lacks.) */
	v = 0;
	if (!(sfp_reader__read(self, (uintptr_t)stack, &v, 8) == -EFAULT &&
	      process_vm_readv(getpid(), NULL, 0, NULL, 0, 0) < 0 &&
	      errno == ENOSYS))
		ASSERT_OK(sfp_reader__read(self, (uintptr_t)stack, &v, 8));
	ASSERT_OK(sfp_reader__set_snapshot(snap, stack, sizeof(stack),
					   (uintptr_t)stack));
	/* sfp_unwind's entry: CFA = sp + 8, RA = stack[0] = 0 (x86-64);
	 * CFA = sp, RA = LR = 0 (AArch64). */
	n = sfp_unwind(as, snap, &regs, fr, 64, NULL, &stop);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(stop, SFP_STOP_RA_ZERO);
	ASSERT_STREQ(sfp_unwind_stop_str(stop), "ra-zero");
	ASSERT_OK(sfp_addr_space__fork(as, &child));
	sfp_addr_space__exec(child);
	ASSERT_OK(sfp_addr_space__remove_range(as, 0, 4096));
	struct sfp_map m = { .start = 0x1000, .end = 0x2000 };
	ASSERT_OK(sfp_addr_space__add_map(child, &m));

	ASSERT_OK(sfp_backtrace_init());
	ASSERT_GE(sfp_backtrace_refresh(), 0);
	ASSERT_GE(sfp_backtrace(bt, 64), 2);
	ASSERT_GE(sfp_backtrace_stop(bt, 64, &stop), 2);
	ASSERT_EQ(stop, SFP_STOP_OUTERMOST);
	sfp_backtrace_fini();
	ASSERT_ERR(sfp_reader__new_pid(-1, &self), -EINVAL);
out:
	sfp_reader__free(&snap);
	sfp_reader__free(&self);
	sfp_addr_space__free(&child);
	sfp_addr_space__free(&as);
}
