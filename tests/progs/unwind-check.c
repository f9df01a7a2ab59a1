// SPDX-License-Identifier: MIT
/*
 * sfp_backtrace() against glibc backtrace(), at many points of a program
 * built without frame pointers (see progs.mk): plain calls, a qsort()
 * callback (frames inside libc), deep recursion, a signal handler, a
 * handler on an alternate stack, SIGPROF samples of arbitrary
 * instructions, and a callback from a dlopen()ed library (libgcc_s's
 * _Unwind_Backtrace), which exercises the reload after dlopen.
 *
 * At each point both unwinders run from the same function; their first
 * entries are the return addresses inside that function (two call sites,
 * so they differ by construction) and are dropped; everything after must
 * be identical.  Prints one PASS:/FAIL: line per point.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <sfprof/unwind.h>

#define MAXF 1024
#define NOINLINE __attribute__((noinline))

static int failures;
static volatile int sink;

static void dump(const char *who, void **v, int n)
{
	int i;

	fprintf(stderr, "  %s (%d frames):\n", who, n);
	for (i = 0; i < n && i < 40; i++) {
		Dl_info di;
		const char *s = "?";

		if (dladdr(v[i], &di) && di.dli_sname)
			s = di.dli_sname;
		fprintf(stderr, "    #%d %p %s\n", i, v[i], s);
	}
}

/*
 * Compare a glibc and an sfprof trace taken from the same function.  Both
 * first entries are return addresses into that function (different call
 * sites) and are dropped.  glibc's trace may have one more leading frame
 * that is the callers' own too: under ASan, backtrace() is an interceptor
 * whose frame comes first.
 */
static bool same(void **a, int na, void **b, int nb)
{
	int i, off;

	for (off = 0; off <= 1; off++) {
		if (na - off != nb || nb < 2)
			continue;
		for (i = 1; i < nb; i++)
			if (a[i + off] != b[i])
				break;
		if (i == nb)
			return true;
	}
	return false;
}

static enum sfp_unwind_stop last_stop;

static void report(const char *what, void **a, int na, void **b, int nb)
{
	if (same(a, na, b, nb)) {
		printf("PASS: unwind-check %s (%d frames)\n", what, nb - 1);
		return;
	}
	printf("FAIL: unwind-check %s (sfp stopped: %s)\n", what,
	       sfp_unwind_stop_str(last_stop));
	dump("glibc backtrace", a, na);
	dump("sfp_backtrace", b, nb);
	failures++;
}

/*
 * Twice from the same call site: the first walk may find the PCs' rules
 * in no cache yet, the second reads them from the packed PC cache (and
 * its guessed callers); both must equal glibc's trace, and so must a walk
 * that gets a buffer one frame too short.
 */
static NOINLINE void check(const char *what)
{
	static void *a[MAXF], *b[MAXF], *c[MAXF];
	enum sfp_unwind_stop cstop;
	int na, nb, nc, k, i;

	na = backtrace(a, MAXF);
	for (k = 0; k < 2; k++) {
		nb = sfp_backtrace_stop(b, MAXF, &last_stop);
		if (!same(a, na, b, nb))
			break;
	}
	if (k == 2 && nb > 2) {
		/* Short buffer: the same frames, cut, and "depth". */
		nc = sfp_backtrace_stop(c, nb - 1, &cstop);
		for (i = 1; i < nc; i++)
			if (c[i] != b[i])
				break;
		if (nc != nb - 1 || i != nc || cstop != SFP_STOP_DEPTH) {
			printf("FAIL: unwind-check %s (buffer of %d: %d "
			       "frames, stop %s)\n", what, nb - 1, nc,
			       sfp_unwind_stop_str(cstop));
			failures++;
			return;
		}
	}
	report(what, a, na, b, nb);
}

/* --- plain calls without frame pointers --- */

static NOINLINE int plain3(int x)
{
	volatile char pad[40];

	pad[0] = (char)x;
	check(x == 3 * 4 ? "plain" :
	      x == 3 * 6 ? "plain-in-thread" : "plain-in-thread-init");
	return pad[0] + 1;
}

static NOINLINE int plain2(int x)
{
	return plain3(x * 3) + 2;
}

static NOINLINE int plain1(int x)
{
	return plain2(x + 1) * 2;
}

/* --- qsort callback: the caller frames are libc's --- */

static int checked_in_qsort;

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	if (!checked_in_qsort) {
		checked_in_qsort = 1;
		check("qsort-callback");
	}
	return (a > b) - (a < b);
}

static NOINLINE void do_qsort(void)
{
	int v[64], i;

	for (i = 0; i < 64; i++)
		v[i] = (i * 7919) % 64;
	qsort(v, 64, sizeof(v[0]), cmp_int);
	sink = v[3];
}

/* --- deep recursion --- */

static NOINLINE int recurse(int depth)
{
	volatile int local = depth;

	if (depth == 0) {
		check("recursion-300");
		return local;
	}
	return recurse(depth - 1) + local;
}

/* --- signal handlers --- */

static void on_usr1(int sig)
{
	(void)sig;
	check("signal-handler");
}

static void on_usr2(int sig)
{
	(void)sig;
	check("sigaltstack-handler");
}

static NOINLINE void raise_in(int sig)
{
	volatile int x = sig;

	raise(x);
}

/* SIGPROF at arbitrary instructions of a busy no-FP loop. */
#define PROF_SAMPLES 300
static volatile int prof_n, prof_bad;
static void *prof_a[MAXF], *prof_b[MAXF];
static int prof_na, prof_nb;

static void on_prof(int sig)
{
	void *a[128], *b[128];
	int na, nb;

	(void)sig;
	if (prof_n >= PROF_SAMPLES)
		return;
	na = backtrace(a, 128);
	nb = sfp_backtrace(b, 128);
	if (!same(a, na, b, nb) && !prof_bad) {
		prof_bad = 1;
		memcpy(prof_a, a, sizeof(a));
		memcpy(prof_b, b, sizeof(b));
		prof_na = na;
		prof_nb = nb;
	}
	prof_n++;
}

static NOINLINE double spin_leaf(double x, int n)
{
	volatile double acc[8];
	int i;

	for (i = 0; i < n; i++) {
		acc[i & 7] = x * 1.0000001 + i;
		x = acc[(i + 3) & 7];
	}
	return x;
}

static NOINLINE double spin_mid(double x, int d)
{
	if (d == 0)
		return spin_leaf(x, 2000);
	return spin_mid(x + 1, d - 1) * 0.5 + spin_leaf(x, 500);
}

static void prof_test(void)
{
	struct itimerval it = { { 0, 500 }, { 0, 500 } };
	struct sigaction sa = { 0 };
	double x = 1;
	int rounds = 0;
	clock_t end = clock() + 5 * CLOCKS_PER_SEC;

	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	/* Until enough samples, within 5 s of CPU time (a loaded machine
	 * delivers fewer ticks per round). */
	while (prof_n < PROF_SAMPLES && clock() < end)
		x = spin_mid(x, rounds++ % 6);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	sink = (int)x;
	if (prof_n < PROF_SAMPLES / 2) {
		printf("FAIL: unwind-check sigprof (only %d samples)\n", prof_n);
		failures++;
	} else if (prof_bad) {
		printf("FAIL: unwind-check sigprof (%d samples)\n", prof_n);
		dump("glibc backtrace", prof_a, prof_na);
		dump("sfp_backtrace", prof_b, prof_nb);
		failures++;
	} else {
		printf("PASS: unwind-check sigprof (%d samples of arbitrary "
		       "instructions)\n", prof_n);
	}
}

/* --- another thread: its stack is not the main one (reads are probed) --- */

static void *thread_fn(void *arg)
{
	(void)arg;
	sink = plain1(5);		/* stack pages probed */
	if (sfp_backtrace_thread_init()) {
		printf("FAIL: unwind-check sfp_backtrace_thread_init\n");
		failures++;
	}
	sink = plain1(6);		/* stack read directly */
	return NULL;
}

static void thread_test(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, thread_fn, NULL)) {
		printf("FAIL: unwind-check thread (pthread_create)\n");
		failures++;
		return;
	}
	pthread_join(t, NULL);
}

/* --- a callback from a library loaded with dlopen --- */

typedef int (*unwind_trace_fn)(void *ctx, void *arg);
typedef int (*unwind_backtrace_fn)(unwind_trace_fn fn, void *arg);

static int in_dlopen_cb(void *ctx, void *arg)
{
	int *done = arg;

	(void)ctx;
	if (!*done) {
		*done = 1;
		/* The first walk meets libgcc_s, unknown if it was loaded
		 * after init: the refresh below must pick it up. */
		sfp_backtrace_refresh();
		check("dlopen-callback");
	}
	return 0;
}

static NOINLINE void dlopen_test(void)
{
	void *h = dlopen("libgcc_s.so.1", RTLD_NOW);
	unwind_backtrace_fn ub;
	int done = 0;

	if (!h) {
		printf("SKIP: unwind-check dlopen-callback (no libgcc_s: %s)\n",
		       dlerror());
		return;
	}
	ub = (unwind_backtrace_fn)(uintptr_t)dlsym(h, "_Unwind_Backtrace");
	if (ub)
		ub(in_dlopen_cb, &done);
	dlclose(h);
}

int main(void)
{
	static char altstack[64 * 1024];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { 0 };
	int err;

	err = sfp_backtrace_init();
	if (err) {
		printf("FAIL: unwind-check init (%d)\n", err);
		return 1;
	}
	sink = plain1(3);
	do_qsort();
	sink = recurse(300);

	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	raise_in(SIGUSR1);

	sigaltstack(&ss, NULL);
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	raise_in(SIGUSR2);

	prof_test();
	thread_test();
	dlopen_test();
	sfp_backtrace_fini();
	return failures ? 1 : 0;
}
