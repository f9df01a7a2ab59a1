// SPDX-License-Identifier: MIT
/*
 * sfp_backtrace()'s packed PC cache (src/unwind/rule-pack.h): once a walk
 * has filled it, the packed loop alone must walk the whole stack and give
 * what the general loop and glibc backtrace() give -- with right and
 * wrong caller guesses, through a signal frame, at the depth limit, on
 * another thread -- and a reload after dlopen/dlclose must start from an
 * empty cache, so that a library mapped where another was gets its own
 * rules.
 */
#include <alloca.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <sfprof/unwind.h>

#include "test.h"
#include "unwind/rule-pack.h"

#define NOINLINE __attribute__((noinline))
#define MAXF 64

struct walks {
	void *gen[MAXF], *packed[MAXF], *glibc[MAXF];
	int ngen, npacked, nglibc;
	enum sfp_unwind_stop gen_stop;
	int packed_stop;
};

static volatile int sink;

/* Walks from one function: the general one twice (the first may fill the
 * cache, the second reads it), the packed loop alone (after a general
 * walk from its own call site, which fills that site's slot), and glibc.
 * The first entries are this function's call sites and differ. */
static NOINLINE void walk_here(struct walks *w)
{
	sfp_backtrace(w->gen, MAXF);
	w->ngen = sfp_backtrace_stop(w->gen, MAXF, &w->gen_stop);
	w->npacked = unw_bt_packed_only(w->packed, MAXF, true, &w->packed_stop);
	w->nglibc = backtrace(w->glibc, MAXF);
}

/* glibc may have one more leading frame (ASan's interceptor). */
static bool same_as_glibc(void *const *v, int n, const struct walks *w)
{
	int off = w->nglibc - n, i;

	if (n < 2 || (off != 0 && off != 1))
		return false;
	for (i = 1; i < n; i++)
		if (v[i] != w->glibc[i + off])
			return false;
	return true;
}

static bool packed_is_whole(const struct walks *w)
{
	int i;

	if (w->packed_stop != (int)w->gen_stop || w->npacked != w->ngen)
		return false;
	for (i = 1; i < w->ngen; i++)
		if (w->packed[i] != w->gen[i])
			return false;
	return same_as_glibc(w->packed, w->npacked, w);
}

/* Two call chains through the same functions in different orders, so
 * that each function's caller changes from one walk to the next. */
static NOINLINE int chain_b(struct walks *w, int n);

/* Seven values live across the call: without frame pointers the
 * compiler keeps them in every callee-saved register, FP included, so
 * this SP-based frame saves FP for the FP-based chain_b above it. */
static NOINLINE int chain_a(struct walks *w, int n)
{
	volatile int in[7] = { n, n + 1, n * 3, n ^ 5, n - 7, n * n, ~n };
	int a = in[0], b = in[1], c = in[2], d = in[3], e = in[4], f = in[5],
	    g = in[6];

	if (n == 0)
		walk_here(w);
	else if (n & 1)
		sink += chain_b(w, n - 1);
	else
		sink += chain_a(w, n - 1);
	return a * b + c * d + e * f + g;
}

/* alloca: this frame's CFA is FP-based (and FP is saved), the others'
 * SP-based; a walk that lost FP would step the next chain_b wrong. */
static NOINLINE int chain_b(struct walks *w, int n)
{
	volatile int *pad = alloca(sizeof(int) * (size_t)(4 + (n & 3)));

	pad[0] = n;

	if (n == 0)
		walk_here(w);
	else if (n % 3)
		sink += chain_a(w, n - 1);
	else
		sink += chain_b(w, n - 1);
	return pad[0];
}

/*
 * Every stack whole.  (Until 1 Dec 2026 an FP-based frame whose CFA lay
 * within 120 bytes of the start of the walker's stack page was handed
 * back: with ASLR 1 stack in 150, under ASan 1 in 5.)
 */
TEST(backtrace_packed_walks_whole_stacks)
{
	struct walks w;
	int k;

	if (!ASSERT_OK(sfp_backtrace_init()))
		return;
	for (k = 0; k < 6; k++) {
		memset(&w, 0, sizeof(w));
		if (k & 1)
			chain_b(&w, 9 + k);
		else
			chain_a(&w, 12 + k);
		if (!ASSERT_GE(w.ngen, 12) ||
		    !ASSERT_TRUE(same_as_glibc(w.gen, w.ngen, &w)) ||
		    !ASSERT_EQ(w.gen_stop, SFP_STOP_OUTERMOST))
			break;
		if (!ASSERT_TRUE(packed_is_whole(&w)))
			break;
	}
	sfp_backtrace_fini();
}

/* The same walks from every 16-byte offset within a page, so that the
 * FP-based frames' CFAs fall at every place of the walker's page,
 * the first bytes included. */
static NOINLINE int shifted(struct walks *w, size_t off)
{
	volatile char *pad = alloca(off + 1);

	pad[0] = 1;
	return chain_b(w, 3 + (int)(off & 1)) + pad[0];
}

TEST(backtrace_packed_walks_from_any_stack_offset)
{
	struct walks w;
	size_t off;

	if (!ASSERT_OK(sfp_backtrace_init()))
		return;
	for (off = 0; off < UNW_PAGE_SIZE; off += 16) {
		memset(&w, 0, sizeof(w));
		sink += shifted(&w, off);
		if (!ASSERT_TRUE(same_as_glibc(w.gen, w.ngen, &w)) ||
		    !ASSERT_TRUE(packed_is_whole(&w))) {
			fprintf(stderr, "  at a %zu-byte shift\n", off);
			break;
		}
	}
	sfp_backtrace_fini();
}

static NOINLINE void walk_short(struct walks *w, int max)
{
	sfp_backtrace(w->gen, MAXF);
	w->ngen = sfp_backtrace_stop(w->gen, max, &w->gen_stop);
	w->npacked = unw_bt_packed_only(w->packed, max, true, &w->packed_stop);
	w->nglibc = backtrace(w->glibc, MAXF);
}

static NOINLINE int short_deep(struct walks *w, int n, int max)
{
	volatile int pad[3] = { n };

	if (n)
		sink += short_deep(w, n - 1, max);
	else
		walk_short(w, max);
	return pad[0];
}

TEST(backtrace_packed_stops_at_the_buffer_end)
{
	struct walks w = { 0 };
	int max;

	if (!ASSERT_OK(sfp_backtrace_init()))
		return;
	/* 10 frames of short_deep: every max here cuts the walk. */
	for (max = 1; max <= 10; max++) {
		short_deep(&w, 9, max);
		if (!ASSERT_EQ(w.ngen, max) ||
		    !ASSERT_EQ(w.gen_stop, SFP_STOP_DEPTH) ||
		    !ASSERT_EQ(w.npacked, max) ||
		    !ASSERT_EQ(w.packed_stop, SFP_STOP_DEPTH))
			break;
		for (int i = 1; i < max; i++)
			if (!ASSERT_TRUE(w.packed[i] == w.gen[i]))
				break;
	}
	sfp_backtrace_fini();
}

/* --- through a signal frame --- */

static struct walks sig_w;

static void on_usr1(int sig)
{
	(void)sig;
	walk_here(&sig_w);
}

static NOINLINE int raise_deep(int n)
{
	volatile int pad[3] = { n };

	if (n)
		sink += raise_deep(n - 1);
	else
		raise(SIGUSR1);
	return pad[0];
}

TEST(backtrace_packed_walks_through_signal_frames)
{
	struct sigaction sa = { 0 }, old;
	int k;

	if (!ASSERT_OK(sfp_backtrace_init()))
		return;
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, &old);
	for (k = 0; k < 3; k++) {
		memset(&sig_w, 0, sizeof(sig_w));
		raise_deep(4 + k);
		if (!ASSERT_GE(sig_w.ngen, 8) ||
		    !ASSERT_TRUE(same_as_glibc(sig_w.gen, sig_w.ngen,
					       &sig_w)) ||
		    !ASSERT_TRUE(packed_is_whole(&sig_w)))
			break;
	}
	sigaction(SIGUSR1, &old, NULL);
	sfp_backtrace_fini();
}

/* --- another thread: packed only once its stack bounds are known --- */

static struct walks thr_before, thr_after;

static void *thread_main(void *arg)
{
	(void)arg;
	chain_a(&thr_before, 5);
	if (sfp_backtrace_thread_init() == 0)
		chain_a(&thr_after, 5);
	return NULL;
}

TEST(backtrace_packed_on_a_thread_after_thread_init)
{
	pthread_t t;

	if (!ASSERT_OK(sfp_backtrace_init()))
		return;
	memset(&thr_before, 0, sizeof(thr_before));
	memset(&thr_after, 0, sizeof(thr_after));
	if (ASSERT_OK(pthread_create(&t, NULL, thread_main, NULL))) {
		pthread_join(t, NULL);
		/* Unknown stack: nothing is read without a probe. */
		ASSERT_EQ(thr_before.npacked, 0);
		ASSERT_EQ(thr_before.packed_stop, -1);
		ASSERT_TRUE(same_as_glibc(thr_before.gen, thr_before.ngen,
					  &thr_before));
		ASSERT_GE(thr_after.ngen, 6);
		ASSERT_TRUE(packed_is_whole(&thr_after));
	}
	sfp_backtrace_fini();
}

/* --- reloads: dlopen/dlclose drop the cache --- */

static struct walks lib_w;

static int in_lib_callback(void)
{
	walk_here(&lib_w);
	return 1;
}

/* A library whose function calls back with a frame of `pad' bytes. */
static int build_lib(const char *name, int pad, char *path, size_t len)
{
	char src[512], cmd[1536];
	FILE *f;

	snprintf(src, sizeof(src), "%s/%s-%d.c", test_tmp_dir(), name,
		 getpid());
	snprintf(path, len, "%s/%s-%d.so", test_tmp_dir(), name, getpid());
	f = fopen(src, "w");
	if (!f)
		return -1;
	fprintf(f, "int lib_call(int (*f)(void))\n"
		   "{ volatile char pad[%d]; pad[0] = 1;\n"
		   "  return f() + pad[0]; }\n", pad);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "gcc -O2 -fomit-frame-pointer -shared -fPIC -o %s %s", path,
		 src);
	unlink(path);
	return system(cmd) == 0 ? 0 : -1;
}

static bool walk_through_lib(const char *path, bool *fresh)
{
	int (*call)(int (*)(void));
	void *h = dlopen(path, RTLD_NOW);
	bool ok;

	if (!ASSERT_NOT_NULL(h))
		return false;
	call = (int (*)(int (*)(void)))(uintptr_t)dlsym(h, "lib_call");
	if (!ASSERT_NOT_NULL(call)) {
		dlclose(h);
		return false;
	}
	/* The module list moved: the refresh publishes a new state. */
	ASSERT_EQ(sfp_backtrace_refresh(), 1);
	*fresh = unw_bt_packed_only(lib_w.packed, MAXF, false,
				    &lib_w.packed_stop) == 0 &&
		 lib_w.packed_stop == -1;
	memset(&lib_w, 0, sizeof(lib_w));
	ok = call(in_lib_callback) == 2 &&
	     ASSERT_TRUE(same_as_glibc(lib_w.gen, lib_w.ngen, &lib_w)) &&
	     ASSERT_TRUE(packed_is_whole(&lib_w));
	dlclose(h);
	return ok;
}

TEST(backtrace_packed_cache_is_dropped_on_reload)
{
	char a[512], b[512];
	bool fresh = false;

	if (build_lib("packlib-a", 16, a, sizeof(a)) ||
	    build_lib("packlib-b", 2000, b, sizeof(b))) {
		test_skip("cannot build a shared library with gcc");
		return;
	}
	if (!ASSERT_OK(sfp_backtrace_init()))
		goto out;
	if (walk_through_lib(a, &fresh))
		ASSERT_TRUE(fresh);
	/* Most likely mapped where the first one was. */
	if (walk_through_lib(b, &fresh))
		ASSERT_TRUE(fresh);
	sfp_backtrace_fini();
out:
	unlink(a);
	unlink(b);
}
