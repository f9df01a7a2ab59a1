// SPDX-License-Identifier: MIT
/*
 * Unwinder: readers, address spaces, termination reasons, and snapshot
 * unwinds of this very process checked against sfp_backtrace() and glibc
 * backtrace().
 */
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <sfprof/common.h>
#include <sfprof/unwind.h>

#include "test.h"

#define NOINLINE __attribute__((noinline))

TEST(unwind_snapshot_reader_bounds)
{
	uint8_t stack[64];
	struct sfp_reader *r = NULL;
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)i;
	if (!ASSERT_OK(sfp_reader__new_snapshot(stack, sizeof(stack), 0x1000,
						&r)))
		return;
	ASSERT_OK(sfp_reader__read(r, 0x1008, &v, 8));
	ASSERT_EQ(v, 0x0f0e0d0c0b0a0908ull);
	ASSERT_OK(sfp_reader__read(r, 0x1000 + 56, &v, 8));
	ASSERT_ERR(sfp_reader__read(r, 0x1000 + 57, &v, 8), -ERANGE);
	ASSERT_ERR(sfp_reader__read(r, 0x0ff8, &v, 8), -EFAULT);
	ASSERT_ERR(sfp_reader__read(r, UINT64_MAX - 2, &v, 8), -ERANGE);
	ASSERT_OK(sfp_reader__set_snapshot(r, stack, 8, 0x2000));
	ASSERT_ERR(sfp_reader__read(r, 0x2001, &v, 8), -ERANGE);
	ASSERT_ERR(sfp_reader__new_snapshot(NULL, 8, 0, &r), -EINVAL);
	sfp_reader__free(&r);
	ASSERT_TRUE(r == NULL);
}

/* qemu-user does not emulate process_vm_readv(), which the self and pid
 * readers are built on. */
static bool have_process_vm_readv(void)
{
	uint64_t a = 1, b = 0;
	struct iovec l = { &b, sizeof(b) }, rv = { &a, sizeof(a) };

	if (process_vm_readv(getpid(), &l, 1, &rv, 1, 0) == sizeof(b))
		return true;
	test_skip("process_vm_readv: %s", strerror(errno));
	return false;
}

TEST(unwind_self_reader_never_faults)
{
	struct sfp_reader *r = NULL;
	uint64_t local = 0x1122334455667788ull, v = 0;
	long pg = sysconf(_SC_PAGESIZE);
	void *p;

	if (!have_process_vm_readv())
		return;
	if (!ASSERT_OK(sfp_reader__new_self(&r)))
		return;
	ASSERT_OK(sfp_reader__read(r, (uintptr_t)&local, &v, 8));
	ASSERT_EQ(v, local);
	ASSERT_ERR(sfp_reader__read(r, 8, &v, 8), -EFAULT);
	/* A page that was mapped and is gone. */
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (!ASSERT_TRUE(p != MAP_FAILED))
		goto out;
	munmap(p, pg);
	ASSERT_ERR(sfp_reader__read(r, (uintptr_t)p, &v, 8), -EFAULT);
	/* PROT_NONE is unreadable too. */
	p = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ASSERT_TRUE(p != MAP_FAILED)) {
		ASSERT_ERR(sfp_reader__read(r, (uintptr_t)p, &v, 8), -EFAULT);
		munmap(p, pg);
	}
out:
	sfp_reader__free(&r);
}

TEST(unwind_pid_reader)
{
	static volatile uint64_t shared_value = 0xfeedfacecafebeefull;
	struct sfp_reader *r = NULL;
	uint64_t v = 0;
	pid_t child;
	int status;

	if (!have_process_vm_readv())
		return;
	ASSERT_ERR(sfp_reader__new_pid(0, &r), -EINVAL);
	ASSERT_ERR(sfp_reader__new_pid(0x7ffffff0, &r), -ESRCH);
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	if (!ASSERT_TRUE(child > 0))
		return;
	/* Same image after fork: the value sits at the same address. */
	if (ASSERT_OK(sfp_reader__new_pid(child, &r))) {
		ASSERT_OK(sfp_reader__read(r, (uintptr_t)&shared_value, &v, 8));
		ASSERT_EQ(v, shared_value);
		ASSERT_ERR(sfp_reader__read(r, 16, &v, 8), -EFAULT);
	}
	sfp_reader__free(&r);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
}

TEST(unwind_addr_space_maps)
{
	struct sfp_addr_space *as = NULL, *child = NULL;
	struct sfp_map_info mi;
	struct sfp_map m = { .start = 0x10000, .end = 0x20000,
			     .prot = SFP_MAP_READ | SFP_MAP_EXEC,
			     .path = "//anon" };

	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)))
		return;
	ASSERT_OK(sfp_addr_space__add_map(as, &m));
	/* An mmap over the middle splits it in three. */
	m.start = 0x14000;
	m.end = 0x15000;
	m.pgoff = 0x3000;
	m.prot = SFP_MAP_READ;
	m.path = NULL;
	ASSERT_OK(sfp_addr_space__add_map(as, &m));
	ASSERT_EQ(sfp_addr_space__num_maps(as), 3);
	if (ASSERT_OK(sfp_addr_space__find(as, 0x15800, &mi))) {
		ASSERT_EQ(mi.start, 0x15000);
		ASSERT_EQ(mi.end, 0x20000);
		ASSERT_EQ(mi.pgoff, 0x5000);
		ASSERT_STREQ(mi.path, "//anon");
	}
	if (ASSERT_OK(sfp_addr_space__find(as, 0x14000, &mi)))
		ASSERT_TRUE(mi.path == NULL);
	ASSERT_ERR(sfp_addr_space__find(as, 0x20000, &mi), -ENOENT);
	ASSERT_ERR(sfp_addr_space__add_map(as, &(struct sfp_map){
						       .start = 5, .end = 5 }),
		   -EINVAL);

	if (ASSERT_OK(sfp_addr_space__fork(as, &child))) {
		ASSERT_EQ(sfp_addr_space__num_maps(child), 3);
		ASSERT_OK(sfp_addr_space__remove_range(child, 0x10000, 0x14800));
		ASSERT_EQ(sfp_addr_space__num_maps(child), 2);
		ASSERT_EQ(sfp_addr_space__num_maps(as), 3);
		sfp_addr_space__exec(child);
		ASSERT_EQ(sfp_addr_space__num_maps(child), 0);
	}
	sfp_addr_space__free(&child);
	sfp_addr_space__free(&as);
	ASSERT_TRUE(as == NULL);
	/* AArch64 is unwound too (test-unwind-gdb-aarch64); s390x not. */
	ASSERT_ERR(sfp_addr_space__new(&(struct sfp_addr_space_opts){
					       .sz = sizeof(struct sfp_addr_space_opts),
					       .arch = SFP_ARCH_S390X }, &as),
		   -EOPNOTSUPP);
}

TEST(unwind_addr_space_self)
{
	struct sfp_addr_space *as = NULL;
	struct sfp_map_info mi;

	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)))
		return;
	if (!ASSERT_OK(sfp_addr_space__load_pid(as, getpid())))
		goto out;
	/* Our own code: a file mapping with a known bias. */
	if (ASSERT_OK(sfp_addr_space__find(as, (uintptr_t)&test_data_dir,
					   &mi))) {
		ASSERT_TRUE(mi.prot & SFP_MAP_EXEC);
		ASSERT_TRUE(mi.path && mi.path[0] == '/');
		ASSERT_TRUE(mi.bias_known);
		/* gcc links with --build-id on Debian: read from the file. */
		ASSERT_TRUE(mi.build_id != NULL);
		ASSERT_EQ(mi.build_id_len, 20);
	}
	/* libc's write() and the vDSO's clock_gettime: has_table depends on
	 * the table sources, but the lookup itself must work. */
	ASSERT_OK(sfp_addr_space__find(as, (uintptr_t)&write, &mi));
	ASSERT_ERR(sfp_addr_space__load_pid(as, 0x7ffffff0), -ESRCH);
out:
	sfp_addr_space__free(&as);
}

/* --- snapshot unwinds of this process --- */

struct snap {
	struct sfp_regs regs;
	uint8_t *stack;
	size_t size;
	void *bt[64];
	int nbt;
	void *gbt[64];
	int ngbt;
};

/* The top of the stack we run on (from our maps). */
static uint64_t stack_top(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uint64_t top = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && sp >= a &&
		    sp < b)
			top = b;
	}
	fclose(f);
	return top;
}

/* Copy raw stack bytes: under ASan they include redzones. */
__attribute__((no_sanitize_address)) static void copy_raw(uint8_t *dst,
							  uintptr_t src,
							  size_t n)
{
	const volatile uint8_t *p = (const volatile uint8_t *)src;
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = p[i];
}

static NOINLINE void capture(struct snap *s)
{
	ucontext_t uc;
	uint64_t top;

	getcontext(&uc);
	s->nbt = sfp_backtrace(s->bt, 64);
	s->ngbt = backtrace(s->gbt, 64);
#if defined(__aarch64__)
	s->regs.ip = uc.uc_mcontext.pc;
	s->regs.sp = uc.uc_mcontext.sp;
	s->regs.fp = uc.uc_mcontext.regs[29];
	s->regs.lr = uc.uc_mcontext.regs[30];
	s->regs.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP | SFP_REGS_LR;
#else
	s->regs.ip = uc.uc_mcontext.gregs[REG_RIP];
	s->regs.sp = uc.uc_mcontext.gregs[REG_RSP];
	s->regs.fp = uc.uc_mcontext.gregs[REG_RBP];
	s->regs.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP;
#endif
	top = stack_top(s->regs.sp);
	s->size = top > s->regs.sp ? top - s->regs.sp : 0;
	if (s->size > 256 * 1024)
		s->size = 256 * 1024;
	s->stack = malloc(s->size ? s->size : 1);
	if (s->stack)
		copy_raw(s->stack, s->regs.sp, s->size);
}

static NOINLINE void deep(struct snap *s, int n)
{
	volatile int pad[5] = { n };

	if (n)
		deep(s, n - 1);
	else
		capture(s);
	(void)pad[0];
}

TEST(unwind_snapshot_matches_backtrace)
{
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *r = NULL;
	struct sfp_frame fr[64];
	enum sfp_unwind_stop stop;
	struct snap s = { 0 };
	int n, i, off;

	deep(&s, 10);
	if (!ASSERT_TRUE(s.stack && s.size) || !ASSERT_GE(s.nbt, 12))
		goto out;
	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)) ||
	    !ASSERT_OK(sfp_addr_space__load_pid(as, getpid())) ||
	    !ASSERT_OK(sfp_reader__new_snapshot(s.stack, s.size, s.regs.sp,
						&r)))
		goto out;
	n = sfp_unwind(as, r, &s.regs, fr, 64, NULL, &stop);
	/* frames[0] is the PC in capture(); frames[1..] are the return
	 * addresses that sfp_backtrace() and glibc saw from capture(). */
	ASSERT_EQ(n, s.nbt);
	for (i = 1; i < n && i < s.nbt; i++)
		if (!ASSERT_EQ(fr[i].ip, (uintptr_t)s.bt[i]))
			break;
	/* glibc's trace: the same, after one more leading frame under ASan
	 * (its backtrace() interceptor). */
	off = s.ngbt - n;
	if (ASSERT_TRUE(off == 0 || off == 1))
		for (i = 1; i < n; i++)
			if (!ASSERT_EQ(fr[i].ip, (uintptr_t)s.gbt[i + off]))
				break;
	ASSERT_TRUE(fr[0].flags & SFP_FRAME_EXACT);
	ASSERT_EQ(stop, SFP_STOP_OUTERMOST);

	/* Same walk again: now served from the PC cache. */
	ASSERT_EQ(sfp_unwind(as, r, &s.regs, fr, 64, NULL, &stop), n);

	/* Depth cap. */
	SFP_OPTS(sfp_unwind_opts, o, .max_depth = 3);
	ASSERT_EQ(sfp_unwind(as, r, &s.regs, fr, 64, &o, &stop), 3);
	ASSERT_EQ(stop, SFP_STOP_DEPTH);
	ASSERT_EQ(sfp_unwind(as, r, &s.regs, fr, 2, NULL, &stop), 2);
	ASSERT_EQ(stop, SFP_STOP_DEPTH);

	/* A snapshot cut short: truncated, with the frames found so far. */
	ASSERT_OK(sfp_reader__set_snapshot(r, s.stack, 200, s.regs.sp));
	n = sfp_unwind(as, r, &s.regs, fr, 64, NULL, &stop);
	ASSERT_GE(n, 1);
	ASSERT_EQ(stop, SFP_STOP_TRUNCATED);

	/* Bad arguments. */
	ASSERT_ERR(sfp_unwind(as, r, &s.regs, fr, 0, NULL, &stop), -EINVAL);
	s.regs.valid = SFP_REGS_IP;
	ASSERT_ERR(sfp_unwind(as, r, &s.regs, fr, 64, NULL, &stop), -EINVAL);
out:
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
	free(s.stack);
}

/* Stop reasons of the frame-pointer fallback over anonymous code. */
TEST(unwind_fp_fallback_stops)
{
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *r = NULL;
	struct sfp_frame fr[16];
	enum sfp_unwind_stop stop;
	uint64_t stack[16] = { 0 };
	const uint64_t sp = 0x7000000, code = 0x400000;
	struct sfp_regs regs = { .ip = code + 0x10, .sp = sp,
				 .valid = SFP_REGS_IP | SFP_REGS_SP |
					  SFP_REGS_FP };
	struct sfp_map m = { .start = code, .end = code + 0x1000,
			     .prot = SFP_MAP_READ | SFP_MAP_EXEC };
	int n;

	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)) ||
	    !ASSERT_OK(sfp_addr_space__add_map(as, &m)) ||
	    !ASSERT_OK(sfp_reader__new_snapshot(stack, sizeof(stack), sp, &r)))
		goto out;
	/* fp chain: sp+0 -> sp+32 -> RA 0 */
	regs.fp = sp;
	stack[0] = sp + 32;
	stack[1] = code + 0x20;
	stack[4] = sp + 64;
	stack[5] = 0;
	n = sfp_unwind(as, r, &regs, fr, 16, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(fr[1].ip, code + 0x20);
	ASSERT_TRUE(fr[0].flags & SFP_FRAME_FP);
	ASSERT_EQ(stop, SFP_STOP_RA_ZERO);

	/* A return address outside any code. */
	stack[5] = 0xdead0000;
	n = sfp_unwind(as, r, &regs, fr, 16, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(stop, SFP_STOP_BAD_RA);

	/* The chain leaves the snapshot. */
	stack[4] = sp + 4096;
	stack[5] = code + 0x30;
	n = sfp_unwind(as, r, &regs, fr, 16, NULL, &stop);
	ASSERT_EQ(n, 3);
	ASSERT_EQ(stop, SFP_STOP_TRUNCATED);

	/* A frame pointer below sp: no way on. */
	stack[4] = sp - 64;
	n = sfp_unwind(as, r, &regs, fr, 16, NULL, &stop);
	ASSERT_EQ(n, 3);
	ASSERT_EQ(stop, SFP_STOP_NO_INFO);

	/* Without the fallback there is nothing. */
	SFP_OPTS(sfp_unwind_opts, o, .no_fp_fallback = true);
	n = sfp_unwind(as, r, &regs, fr, 16, &o, &stop);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(stop, SFP_STOP_NO_INFO);
	ASSERT_STREQ(sfp_unwind_stop_str(SFP_STOP_TRUNCATED), "truncated");
	ASSERT_STREQ(sfp_unwind_stop_str((enum sfp_unwind_stop)99), "unknown");
out:
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
}

/* Entry heuristic: a topmost PC without any table, at a function's first
 * instruction, returns to *sp when a call instruction precedes it.  Live
 * memory (self reader) so that the code bytes can be checked. */
TEST(unwind_entry_heuristic_and_unreadable)
{
#if defined(__x86_64__)
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *r = NULL;
	struct sfp_frame fr[8];
	enum sfp_unwind_stop stop;
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *code;
	uint64_t *stack;
	struct sfp_regs regs = { 0 };
	int n;

	code = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stack = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(code != MAP_FAILED && stack != MAP_FAILED))
		return;
	memset(code, 0x90, pg);
	code[0x100] = 0xe8;		/* call rel32 ending at 0x105 */
	memset(code + 0x101, 0, 4);
	mprotect(code, pg, PROT_READ | PROT_EXEC);
	munmap((uint8_t *)stack + pg, pg);	/* the page above is gone */

	struct sfp_map cm = { .start = (uintptr_t)code,
			      .end = (uintptr_t)code + pg,
			      .prot = SFP_MAP_READ | SFP_MAP_EXEC };
	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)) ||
	    !ASSERT_OK(sfp_addr_space__add_map(as, &cm)) ||
	    !ASSERT_OK(sfp_reader__new_self(&r)))
		goto out;

	stack[0] = (uintptr_t)code + 0x105;
	regs.ip = (uintptr_t)code + 0x200;
	regs.sp = (uintptr_t)stack;
	regs.valid = SFP_REGS_IP | SFP_REGS_SP;
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(fr[1].ip, (uintptr_t)code + 0x105);
	ASSERT_TRUE(fr[0].flags & SFP_FRAME_ENTRY);
	ASSERT_EQ(fr[1].sp, (uintptr_t)stack + 8);
	ASSERT_EQ(stop, SFP_STOP_NO_INFO);	/* no fp for the next frame */

	/* Not after a call: the guess is refused. */
	stack[0] = (uintptr_t)code + 0x180;
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(stop, SFP_STOP_NO_INFO);

	/* A frame pointer into unmapped memory: unreadable, no crash. */
	stack[0] = 0;
	regs.fp = (uintptr_t)stack + pg + 64;
	regs.valid |= SFP_REGS_FP;
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(stop, SFP_STOP_UNREADABLE);
out:
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
	munmap(code, pg);
	munmap(stack, pg);
#else
	test_skip("x86-64 code bytes");
#endif
}

/* The vDSO gets a table, from our own image or from the target's. */
TEST(unwind_vdso_table)
{
	struct sfp_addr_space *as = NULL;
	struct sfp_map_info mi;
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long long a = 0, b = 0;
	char line[512];

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%llx-%llx", &a, &b) == 2)
			break;
	if (f)
		fclose(f);
	if (!a) {
		test_skip("no vDSO in this process");
		return;
	}
	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)))
		return;
	/* As perf's MMAP2 record names it: read this kernel's vDSO. */
	struct sfp_map m = { .start = 0x10000000, .end = 0x10000000 + (b - a),
			     .prot = SFP_MAP_READ | SFP_MAP_EXEC,
			     .path = "[vdso]" };
	ASSERT_OK(sfp_addr_space__add_map(as, &m));
	if (ASSERT_OK(sfp_addr_space__find(as, 0x10000010, &mi))) {
		ASSERT_TRUE(mi.has_table);
		ASSERT_TRUE(mi.bias_known);
		ASSERT_EQ(mi.bias, 0x10000000);
	}
	/* From /proc/self/maps. */
	ASSERT_OK(sfp_addr_space__load_pid(as, getpid()));
	if (ASSERT_OK(sfp_addr_space__find(as, a + 16, &mi))) {
		ASSERT_TRUE(mi.has_table);
		ASSERT_EQ(mi.bias, a);
	}
	sfp_addr_space__free(&as);
}

/* A mapping whose build-id does not match the file gets no table. */
TEST(unwind_build_id_mismatch)
{
	struct sfp_addr_space *as = NULL;
	struct sfp_map_info mi;
	static const uint8_t bogus[20] = { 1, 2, 3 };
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (!ASSERT_TRUE(len > 0))
		return;
	exe[len] = 0;
	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)))
		return;
	struct sfp_map m = { .start = 0x20000000, .end = 0x20100000,
			     .prot = SFP_MAP_READ | SFP_MAP_EXEC, .path = exe,
			     .build_id = bogus, .build_id_len = 20 };
	ASSERT_OK(sfp_addr_space__add_map(as, &m));
	if (ASSERT_OK(sfp_addr_space__find(as, 0x20000100, &mi)))
		ASSERT_FALSE(mi.has_table);
	/* Without a build-id the same file is used. */
	m.build_id = NULL;
	m.build_id_len = 0;
	m.start = 0x30000000;
	m.end = 0x30100000;
	ASSERT_OK(sfp_addr_space__add_map(as, &m));
	if (ASSERT_OK(sfp_addr_space__find(as, 0x30000100, &mi)))
		ASSERT_TRUE(mi.has_table);
	sfp_addr_space__free(&as);
}

/*
 * A frame-pointer function with its own CFI (CFA = rbp + 16 after the
 * prologue): its row is used through the table built from .eh_frame.
 */
#if defined(__x86_64__)
void sfp_test_fpfunc(void);
extern const char sfp_test_fpfunc_body[];
__asm__(".text\n"
	".globl sfp_test_fpfunc\n"
	".type sfp_test_fpfunc, @function\n"
	"sfp_test_fpfunc:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	".globl sfp_test_fpfunc_body\n"
	"sfp_test_fpfunc_body:\n"
	"nop\n"
	"nop\n"
	"pop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size sfp_test_fpfunc, .-sfp_test_fpfunc\n"
	".globl sfp_test_tramp\n"
	".type sfp_test_tramp, @function\n"
	"sfp_test_tramp:\n"
	".cfi_startproc\n"
	"nop\n"
	"nop\n"
	"ret\n"
	".cfi_endproc\n"
	".size sfp_test_tramp, .-sfp_test_tramp\n");
void sfp_test_tramp(void);
#endif

TEST(unwind_fp_based_row_and_sp_check)
{
#if defined(__x86_64__)
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *r = NULL;
	struct sfp_frame fr[8];
	enum sfp_unwind_stop stop;
	uint64_t buf[64] = { 0 };
	struct sfp_regs regs = { 0 };
	int n;

	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)) ||
	    !ASSERT_OK(sfp_addr_space__load_pid(as, getpid())) ||
	    !ASSERT_OK(sfp_reader__new_self(&r)))
		goto out;
	/* A sane frame: fp at buf[8] holds the caller's fp (buf[16]) and
	 * the return address (into this test's own code). */
	regs.ip = (uintptr_t)sfp_test_fpfunc_body;
	regs.sp = (uintptr_t)&buf[8];
	regs.fp = (uintptr_t)&buf[8];
	regs.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP;
	buf[8] = (uintptr_t)&buf[16];
	buf[9] = (uintptr_t)test_data_dir + 1;
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(fr[1].ip, (uintptr_t)test_data_dir + 1);
	ASSERT_EQ(fr[1].sp, (uintptr_t)&buf[10]);
	ASSERT_TRUE(fr[0].flags & SFP_FRAME_SFRAME);
	/* test_data_dir's row then finds a zero return address in buf. */
	ASSERT_EQ(stop, SFP_STOP_RA_ZERO);

	/* fp below sp: the rule gives a CFA below the current sp. */
	regs.sp = (uintptr_t)&buf[32];
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(stop, SFP_STOP_SP_NOT_INCREASING);
out:
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
#else
	test_skip("x86-64 code and rows");
#endif
}

/*
 * A v3 flexible row, CFA = *(fp - 8) (the x86-64 DRAP shape), in a table
 * the builder wrote and objcopy put into a copy of this test binary as its
 * own .sframe, which the address space then prefers over CFI.
 */
#include <sfprof/sframe.h>

TEST(unwind_v3_flex_rows)
{
#if defined(__x86_64__)
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *r = NULL;
	struct sfp_sframe_builder *b = NULL;
	struct sfp_frame fr[8];
	enum sfp_unwind_stop stop;
	struct sfp_map_info mi;
	uint64_t buf[64] = { 0 };
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
	/* Where sfp_test_fpfunc is at link time. */
	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)) ||
	    !ASSERT_OK(sfp_addr_space__load_pid(as, getpid())) ||
	    !ASSERT_OK(sfp_addr_space__find(as, (uintptr_t)sfp_test_fpfunc,
					    &mi)))
		goto out;
	fn = (uintptr_t)sfp_test_fpfunc - mi.bias;

	SFP_OPTS(sfp_sframe_builder_opts, bo, .version = 3,
		 .abi = SFP_SFRAME_ABI_AMD64_LE);
	struct sfp_sframe_func func = { .start = fn, .size = 16,
					.num_rows = 1 };
	struct sfp_sframe_row row = {
		.start = fn, .end = fn + 16,
		.cfa = { .kind = SFP_LOC_REG_DEREF, .reg = SFP_DWARF_AMD64_FP,
			 .offset = -8 },
		.ra = { .kind = SFP_LOC_CFA_DEREF, .offset = -8 },
		.fp = { .kind = SFP_LOC_CFA_DEREF, .offset = -16 },
	};
	/* A second function marked as a signal trampoline (v3 bit). */
	uint64_t tr = (uintptr_t)sfp_test_tramp - mi.bias;
	struct sfp_sframe_func tfunc = { .start = tr, .size = 3,
					 .num_rows = 1, .signal = true };
	struct sfp_sframe_row trow = {
		.start = tr, .end = tr + 3,
		.cfa = { .kind = SFP_LOC_REG, .reg = SFP_DWARF_AMD64_SP,
			 .offset = 8 },
		.ra = { .kind = SFP_LOC_CFA_DEREF, .offset = -8 },
	};
	if (!ASSERT_OK(sfp_sframe_builder__new(&bo, &b)) ||
	    !ASSERT_OK(sfp_sframe_builder__add_func(b, &func, &row, 1)) ||
	    !ASSERT_OK(sfp_sframe_builder__add_func(b, &tfunc, &trow, 1)) ||
	    !ASSERT_OK(sfp_sframe_builder__write(b, &sec, &sec_size)))
		goto out;
	snprintf(blob, sizeof(blob), "%s/flex.sframe", test_tmp_dir());
	snprintf(copy, sizeof(copy), "%s/with-flex", test_tmp_dir());
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

	/* Our text mapping, backed by the copy. */
	sfp_addr_space__free(&as);
	struct sfp_map m = { .start = mi.start, .end = mi.end,
			     .pgoff = mi.pgoff, .prot = mi.prot, .path = copy };
	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)) ||
	    !ASSERT_OK(sfp_addr_space__add_map(as, &m)) ||
	    !ASSERT_OK(sfp_reader__new_self(&r)))
		goto out;

	regs.ip = (uintptr_t)sfp_test_fpfunc_body;
	regs.sp = (uintptr_t)&buf[4];
	regs.fp = (uintptr_t)&buf[8];
	regs.valid = SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP;
	buf[7] = (uintptr_t)&buf[20];		/* CFA = *(fp - 8) */
	buf[19] = (uintptr_t)test_data_dir + 1;	/* RA at CFA - 8 */
	buf[18] = (uintptr_t)&buf[30];		/* FP at CFA - 16 */
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	ASSERT_GE(n, 2);
	ASSERT_EQ(fr[1].ip, (uintptr_t)test_data_dir + 1);
	ASSERT_EQ(fr[1].sp, (uintptr_t)&buf[20]);
	ASSERT_TRUE(fr[0].flags & SFP_FRAME_SFRAME);
	/* test_data_dir has no row in this own table: the table built
	 * from the copy's CFI has one (CFA = sp + 8, at &buf[20], whose
	 * RA slot is zero). */
	ASSERT_EQ(n, 2);
	ASSERT_TRUE(fr[1].flags & SFP_FRAME_SFRAME);
	ASSERT_EQ(stop, SFP_STOP_RA_ZERO);

	/* In the trampoline, sp points at a ucontext: the walk continues
	 * at the interrupted PC, SP and FP saved there (rip at 168, rsp at
	 * 160, rbp at 120), not at *(CFA - 8). */
	memset(buf, 0, sizeof(buf));
	regs.ip = (uintptr_t)sfp_test_tramp + 1;
	regs.sp = (uintptr_t)&buf[0];
	buf[168 / 8] = (uintptr_t)sfp_test_fpfunc_body;
	buf[160 / 8] = (uintptr_t)&buf[40];
	buf[120 / 8] = (uintptr_t)&buf[44];
	buf[43] = (uintptr_t)&buf[50];		/* CFA for the flex row */
	buf[49] = (uintptr_t)test_data_dir + 1;
	n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
	ASSERT_GE(n, 3);
	ASSERT_TRUE(fr[0].flags & SFP_FRAME_SIGNAL);
	ASSERT_EQ(fr[1].ip, (uintptr_t)sfp_test_fpfunc_body);
	ASSERT_TRUE(fr[1].flags & SFP_FRAME_EXACT);
	ASSERT_EQ(fr[1].sp, (uintptr_t)&buf[40]);
	ASSERT_EQ(fr[2].ip, (uintptr_t)test_data_dir + 1);
out:
	free(sec);
	sfp_sframe_builder__free(&b);
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
#else
	test_skip("x86-64 code and rows");
#endif
}

/*
 * PLT stubs: the table built for this binary covers them with PCMASK rows
 * (CFA = sp + 8 inside a stub), so a PC in the middle of a stub unwinds
 * through the row, not through the entry heuristic (which would refuse
 * this return address: no call precedes it).
 */
#include "elf/elf.h"

TEST(unwind_plt_rows)
{
#if defined(__x86_64__)
	struct sfp_addr_space *as = NULL;
	struct sfp_reader *r = NULL;
	struct sfp_elf *e = NULL;
	struct sfp_elf_section sec;
	struct sfp_frame fr[8];
	enum sfp_unwind_stop stop;
	struct sfp_map_info mi;
	uint64_t stack[8] = { 0 }, stub;
	char exe[2048];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int n, k;

	if (!ASSERT_TRUE(len > 0))
		return;
	exe[len] = 0;
	if (!ASSERT_OK(sfp_elf_open(exe, &e)))
		return;
	bool lazy = false;

	if (sfp_elf_find_section(e, ".plt.sec", 0, &sec) &&
	    !(lazy = !sfp_elf_find_section(e, ".plt", 0, &sec))) {
		test_skip("this binary has no PLT");
		goto out;
	}
	if (!ASSERT_OK(sfp_addr_space__new(NULL, &as)) ||
	    !ASSERT_OK(sfp_addr_space__load_pid(as, getpid())) ||
	    !ASSERT_OK(sfp_addr_space__find(as, (uintptr_t)test_data_dir,
					    &mi)))
		goto out;
	/* Every stub after the first (PLT0 is special in .plt), at a few
	 * offsets into the 16-byte block. */
	for (k = 0; k < 3; k++) {
		stub = sec.addr + mi.bias + 16 * (k + 1) + 4 * k;
		if (stub - mi.bias >= sec.addr + sec.size)
			break;
		stack[0] = (uintptr_t)test_data_dir + 1;
		if (!ASSERT_OK(sfp_reader__new_snapshot(stack, sizeof(stack),
							0x1000, &r)))
			goto out;
		struct sfp_regs regs = { .ip = stub, .sp = 0x1000,
					 .valid = SFP_REGS_IP | SFP_REGS_SP };
		n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
		ASSERT_GE(n, 2);
		ASSERT_EQ(fr[1].ip, (uintptr_t)test_data_dir + 1);
		ASSERT_TRUE(fr[0].flags & SFP_FRAME_SFRAME);
		sfp_reader__free(&r);
	}
	/* A lazy-binding stub (jmp *GOT; push $n; jmp PLT0): after the
	 * push, at offset 11, the return address is one slot higher. */
	if (lazy && sec.size >= 48) {
		stub = sec.addr + mi.bias + 32 + 11;
		stack[0] = 0x1234;
		stack[1] = (uintptr_t)test_data_dir + 2;
		if (!ASSERT_OK(sfp_reader__new_snapshot(stack, sizeof(stack),
							0x1000, &r)))
			goto out;
		struct sfp_regs regs = { .ip = stub, .sp = 0x1000,
					 .valid = SFP_REGS_IP | SFP_REGS_SP };
		n = sfp_unwind(as, r, &regs, fr, 8, NULL, &stop);
		ASSERT_GE(n, 2);
		ASSERT_EQ(fr[1].ip, (uintptr_t)test_data_dir + 2);
		ASSERT_EQ(fr[1].sp, 0x1010);
	}
out:
	sfp_reader__free(&r);
	sfp_addr_space__free(&as);
	sfp_elf_close(&e);
#else
	test_skip("x86-64 code and rows");
#endif
}


TEST(unwind_regs_from_perf)
{
	/* ip/sp/bp only, as `perf record --call-graph` would ask. */
	const uint64_t three[] = { 0x7ffd0010, 0x7ffd0000, 0x401000 };
	/* AX..IP (bits 0..8). */
	const uint64_t nine[] = { 1, 2, 3, 4, 5, 6, 0x7000, 0x6ff0, 0x1234 };
	struct sfp_regs r;

	ASSERT_OK(sfp_regs__from_perf(SFP_ARCH_X86_64, 0x1c0, three, 3, &r));
	ASSERT_EQ(r.fp, 0x7ffd0010);
	ASSERT_EQ(r.sp, 0x7ffd0000);
	ASSERT_EQ(r.ip, 0x401000);
	ASSERT_EQ(r.valid, SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP);
#if defined(__x86_64__)
	ASSERT_OK(sfp_regs__from_perf(SFP_ARCH_HOST, 0x1ff, nine, 9, &r));
#else
	ASSERT_OK(sfp_regs__from_perf(SFP_ARCH_X86_64, 0x1ff, nine, 9, &r));
#endif
	ASSERT_EQ(r.fp, 0x7000);
	ASSERT_EQ(r.sp, 0x6ff0);
	ASSERT_EQ(r.ip, 0x1234);
	/* No bp: fp not valid. */
	ASSERT_OK(sfp_regs__from_perf(SFP_ARCH_X86_64, 0x180, three, 2, &r));
	ASSERT_EQ(r.valid, SFP_REGS_IP | SFP_REGS_SP);
	ASSERT_EQ(r.sp, 0x7ffd0010);
	ASSERT_ERR(sfp_regs__from_perf(SFP_ARCH_X86_64, 0x1c0, three, 2, &r),
		   -EINVAL);
	ASSERT_ERR(sfp_regs__from_perf(SFP_ARCH_X86_64, 0x0c0, three, 2, &r),
		   -ENOENT);
	ASSERT_ERR(sfp_regs__from_perf(SFP_ARCH_S390X, 0x1c0, three, 3, &r),
		   -EOPNOTSUPP);
}

/*
 * arm64's PERF_SAMPLE_REGS_USER order, taken from the kernel's uapi header
 * for arm64 (linux-libc-dev-arm64-cross, installed with the cross
 * toolchain by mk/deps.sh): the enumerators have no explicit values, so
 * each one's value is its position in the enum.
 */
static int arm64_perf_reg(const char *name)
{
	FILE *f = fopen("/usr/aarch64-linux-gnu/include/asm/perf_regs.h", "r");
	char line[256], want[64];
	int idx = -1, found = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "PERF_REG_ARM64_%s,", name);
	while (fgets(line, sizeof(line), f)) {
		char tok[64];

		if (strstr(line, "enum perf_event_arm_regs")) {
			idx = 0;
			continue;
		}
		if (idx < 0 || sscanf(line, " %63s", tok) != 1)
			continue;
		if (!strncmp(tok, "PERF_REG_ARM64_", 15)) {
			if (!strcmp(tok, want))
				found = idx;
			idx++;
		} else if (tok[0] == '}') {
			break;
		}
	}
	fclose(f);
	return found;
}

TEST(unwind_regs_from_perf_arm64)
{
	int fp = arm64_perf_reg("X29"), lr = arm64_perf_reg("LR"),
	    sp = arm64_perf_reg("SP"), pc = arm64_perf_reg("PC");
	int x0 = arm64_perf_reg("X0");
	struct sfp_regs r;
	uint64_t vals[64], mask;
	size_t n = 0;

	if (!ASSERT_GE(x0, 0) || !ASSERT_GE(fp, 0) || !ASSERT_GE(lr, 0) ||
	    !ASSERT_GE(sp, 0) || !ASSERT_GE(pc, 0))
		return;
	/* x0, fp, lr, sp, pc with values that name their register. */
	mask = 1ull << x0 | 1ull << fp | 1ull << lr | 1ull << sp | 1ull << pc;
	for (int bit = 0; bit < 64; bit++)
		if (mask & (1ull << bit))
			vals[n++] = 0xa000 + (uint64_t)bit;
	ASSERT_OK(sfp_regs__from_perf(SFP_ARCH_AARCH64, mask, vals, n, &r));
	ASSERT_EQ(r.fp, 0xa000 + (uint64_t)fp);
	ASSERT_EQ(r.lr, 0xa000 + (uint64_t)lr);
	ASSERT_EQ(r.sp, 0xa000 + (uint64_t)sp);
	ASSERT_EQ(r.ip, 0xa000 + (uint64_t)pc);
	ASSERT_EQ(r.valid,
		  SFP_REGS_IP | SFP_REGS_SP | SFP_REGS_FP | SFP_REGS_LR);
	/* Without the PC: -ENOENT; a count that does not match: -EINVAL. */
	ASSERT_ERR(sfp_regs__from_perf(SFP_ARCH_AARCH64, mask & ~(1ull << pc),
				       vals, n - 1, &r), -ENOENT);
	ASSERT_ERR(sfp_regs__from_perf(SFP_ARCH_AARCH64, mask, vals, n - 1,
				       &r), -EINVAL);
}
