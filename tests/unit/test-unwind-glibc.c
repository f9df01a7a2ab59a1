// SPDX-License-Identifier: MIT
/*
 * sfp_backtrace() against glibc's backtrace() (libgcc's DWARF unwinder) in
 * the same spot: a chain of functions without frame pointers, a qsort()
 * callback (frames inside libc), a signal handler (the rt_sigreturn
 * trampoline and the interrupted frame), and, on AArch64, functions whose
 * return addresses are PAC-signed (-mbranch-protection=pac-ret+leaf).
 * Built for the host and by `make ARCH=aarch64`, whose check-aarch64 runs
 * it under qemu-aarch64 (which signs return addresses: its default CPU
 * has PAuth).
 *
 * Both traces start with the return address into the function that
 * called the tracer; the two calls sit at different call sites of that
 * function, so the first entry differs and the rest must be equal.  glibc
 * may list one more outermost frame (_start) than sfprof, which stops at
 * the outermost row.
 */
#include <execinfo.h>
#include <signal.h>
#include <stdlib.h>

#include <sfprof/unwind.h>

#include "test.h"

/* No frame pointers here (gcc; the sanitizer build forces them, which
 * only makes the walks easier). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("omit-frame-pointer")
#endif

#define NOINLINE __attribute__((noinline))
#define MAXF 64

#if defined(__aarch64__)
#define PAC_RET __attribute__((target("branch-protection=pac-ret+leaf")))
#else
#define PAC_RET
#endif

struct traces {
	void *sfp[MAXF], *glibc[MAXF];
	int nsfp, nglibc;
	int taken;
};

static struct traces tr;

static NOINLINE void take(void)
{
	tr.nsfp = sfp_backtrace(tr.sfp, MAXF);
	tr.nglibc = backtrace(tr.glibc, MAXF);
	tr.taken++;
}

/* Equal but for the leaf call site, and glibc's possible _start. */
static bool same_trace(const char *what, int min_depth)
{
	int n = tr.nsfp, i;
	bool ok = true;
	/* Under ASan glibc's trace starts inside its backtrace()
	 * interceptor: one more leading frame. */
#if defined(__SANITIZE_ADDRESS__)
	const int off = 1;
#else
	const int off = 0;
#endif

	if (!ASSERT_GE(tr.nsfp, min_depth) ||
	    !ASSERT_TRUE(tr.nglibc == n + off || tr.nglibc == n + off + 1))
		ok = false;
	for (i = 1; ok && i < n && i + off < tr.nglibc; i++)
		if (!ASSERT_EQ((uintptr_t)tr.sfp[i],
			       (uintptr_t)tr.glibc[i + off]))
			ok = false;
	if (!ok) {
		printf("# %s: sfprof %d frames, glibc %d\n", what, tr.nsfp,
		       tr.nglibc);
		for (i = 0; i < tr.nsfp || i < tr.nglibc; i++)
			printf("#  %2d %16p %16p\n", i,
			       i < tr.nsfp ? tr.sfp[i] : NULL,
			       i < tr.nglibc ? tr.glibc[i] : NULL);
	}
	return ok;
}

/* --- A chain without frame pointers. --- */

static volatile int sink;

static NOINLINE void chain(int n)
{
	volatile char pad[24 + n];

	pad[0] = (char)n;
	if (n)
		chain(n - 1);
	else
		take();
	sink += pad[0];
}

TEST(backtrace_matches_glibc_nofp)
{
	ASSERT_OK(sfp_backtrace_init());
	chain(8);
	same_trace("nofp chain", 10);
}

/* --- Through qsort(): the callback's callers are inside libc. --- */

static NOINLINE int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!tr.taken)
		take();
	return (x > y) - (x < y);
}

TEST(backtrace_matches_glibc_qsort)
{
	int v[] = { 5, 3, 9, 1, 7, 2 };

	tr.taken = 0;
	qsort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), cmp_int);
	ASSERT_EQ(v[0], 1);
	same_trace("qsort callback", 4);
}

/* --- In a signal handler: through the rt_sigreturn trampoline. --- */

static NOINLINE void on_signal(int sig)
{
	(void)sig;
	take();
}

static NOINLINE void raise_in(int n)
{
	volatile char pad[16 + n];

	pad[0] = (char)n;
	if (n)
		raise_in(n - 1);
	else
		raise(SIGUSR1);
	sink += pad[0];
}

TEST(backtrace_matches_glibc_signal)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (!ASSERT_OK(sigaction(SIGUSR1, &sa, &old)))
		return;
	tr.taken = 0;
	raise_in(4);
	sigaction(SIGUSR1, &old, NULL);
	if (ASSERT_EQ(tr.taken, 1))
		same_trace("signal handler", 9);
	/* The interrupted frames (raise_in's) follow the trampoline. */
}

/* --- PAC-signed return addresses (AArch64). --- */

#if defined(__aarch64__)
static uint64_t saved_lr;

static NOINLINE PAC_RET void pac_leaf(void)
{
	take();
}

static NOINLINE PAC_RET void pac_mid(int n)
{
	volatile char pad[8 + n];

	pad[0] = (char)n;
	if (n) {
		pac_mid(n - 1);
	} else {
		/* The LR this function saved: signed if PAuth is on. */
		uint64_t *fr = __builtin_frame_address(0);

		saved_lr = fr[1];
		pac_leaf();
	}
	sink += pad[0];
}

#endif

TEST(backtrace_matches_glibc_pac)
{
#if defined(__aarch64__)
	pac_mid(5);
	/* Without a signature the test proves nothing: qemu's CPU or the
	 * kernel does not do PAuth. */
	if (!ASSERT_TRUE(saved_lr >> 48))
		printf("# saved LR %#llx carries no PAC\n",
		       (unsigned long long)saved_lr);
	same_trace("pac-ret", 8);
#else
	test_skip("pointer authentication is AArch64's");
#endif
}
