// SPDX-License-Identifier: MIT
/*
 * In-process backtrace at depth 26: sfp_backtrace() vs glibc backtrace()
 * vs libunwind's unw_backtrace(), same stack, one run, rounds interleaved
 * (sfprof, glibc, libunwind, sfprof, ...) so that load on the machine hits
 * all three alike; medians of the rounds and the median of the per-round
 * ratios.  All three must return the same frames (checked) so that no one
 * wins by stopping early.
 *
 * Two stacks: the same one every call (a sampling profiler sees this for
 * the outer frames of a busy loop), and two call chains taken in turn,
 * which differ in every frame's caller, so that sfp_backtrace's guessed
 * callers (src/unwind/backtrace.c) are wrong at every other call.  There
 * each call first builds its chain (recursion), timed alone as a baseline
 * and subtracted.
 *
 * libunwind is loaded with dlopen(RTLD_LOCAL): linked normally, its weak
 * `backtrace` symbol would replace glibc's and we would time libunwind
 * twice.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sfprof/unwind.h>

#define DEPTH 25
#define ROUNDS 9
#define NOINLINE __attribute__((noinline))

static int iters = 20000;
static int (*unw_bt)(void **buf, int size);
static volatile int sink;

/* CPU time of this thread: on a shared, loaded machine wall time mostly
 * measures the other jobs. */
static double loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum which { SFP, GLIBC, LIBUNWIND };

static int run_one(enum which w, void **buf)
{
	switch (w) {
	case SFP:
		return sfp_backtrace(buf, 64);
	case GLIBC:
		return backtrace(buf, 64);
	default:
		return unw_bt ? unw_bt(buf, 64) : 0;
	}
}

static double results[3];
static double ratio_unw;
static int frames[3];
static void *first[3][64];

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static NOINLINE void measure(void)
{
	double t[3][ROUNDS], ratio[ROUNDS];
	void *buf[64];
	int w, i, rep;

	for (w = 0; w < 3; w++)		/* warm up, and the frames */
		frames[w] = run_one(w, first[w]);
	for (rep = 0; rep < ROUNDS; rep++) {
		for (w = 0; w < 3; w++) {
			double t0 = now();

			for (i = 0; i < iters; i++)
				sink += run_one(w, buf);
			t[w][rep] = (now() - t0) / iters * 1e9;
		}
		ratio[rep] = t[2][rep] / t[0][rep];
	}
	for (w = 0; w < 3; w++)
		results[w] = median(t[w], ROUNDS);
	ratio_unw = median(ratio, ROUNDS);
}

/* --- two call chains in turn --- */

static int alt_which;		/* 0: baseline, else SFP + 1 or LIBUNWIND + 1 */
static void *alt_buf[64];
static int alt_frames[2][2];

static int alt_n;

static NOINLINE int alt_leaf(int v)
{
	if (!alt_which)
		return v;
	alt_n = run_one(alt_which == 1 ? SFP : LIBUNWIND, alt_buf);
	return alt_n;
}

/* One call site per function, through a table, so that a return address
 * is the same whichever function it calls: chain 0 is a, a, a, ...;
 * chain 1 is a, b, a, b, ...: the caller of every frame differs between
 * the two. */
static NOINLINE int alt_a(int n, int v);
static NOINLINE int alt_b(int n, int v);
static int (*volatile alt_tab[2])(int, int) = { alt_a, alt_b };

static NOINLINE int alt_a(int n, int v)
{
	volatile int pad[3] = { n };

	if (n == 0)
		return alt_leaf(v) + pad[0];
	return alt_tab[(v & n) & 1](n - 1, v) + pad[0];
}

static NOINLINE int alt_b(int n, int v)
{
	volatile int pad[5] = { n };

	if (n == 0)
		return alt_leaf(v) + pad[0];
	return alt_tab[0](n - 1, v) + pad[0];
}

static double alt_results[2], alt_ratio;

static NOINLINE void measure_alternating(int depth)
{
	double t[3][ROUNDS], ratio[ROUNDS];
	int w, i, rep;

	for (w = 1; w <= 2; w++)
		for (i = 0; i < 2; i++) {
			alt_which = w;
			alt_a(depth, i);
			alt_frames[w - 1][i] = alt_n;
		}
	for (rep = 0; rep < ROUNDS; rep++) {
		for (w = 0; w < 3; w++) {
			double t0 = now();

			alt_which = w;
			for (i = 0; i < iters; i++)
				sink += alt_a(depth, i);
			t[w][rep] = (now() - t0) / iters * 1e9;
		}
		for (w = 1; w <= 2; w++)
			t[w][rep] -= t[0][rep];
		ratio[rep] = t[2][rep] / t[1][rep];
	}
	alt_results[0] = median(t[1], ROUNDS);
	alt_results[1] = median(t[2], ROUNDS);
	alt_ratio = median(ratio, ROUNDS);
}

/* sfp_backtrace in a second thread: stack pages probed, then read
 * directly after sfp_backtrace_thread_init(). */
static double thread_ns[2];

static NOINLINE void measure_thread(int k)
{
	void *buf[64];
	int i, rep;
	double best = 1e9;

	sink += sfp_backtrace(buf, 64);
	for (rep = 0; rep < 5; rep++) {
		double t0 = now();

		for (i = 0; i < iters / 4; i++)
			sink += sfp_backtrace(buf, 64);
		t0 = (now() - t0) / (iters / 4);
		if (t0 < best)
			best = t0;
	}
	thread_ns[k] = best * 1e9;
}

static NOINLINE int recurse_thread(int n, int k)
{
	volatile int pad[3] = { n };

	if (n > 0)
		sink += recurse_thread(n - 1, k);
	else
		measure_thread(k);
	return pad[0];
}

static void *thread_main(void *arg)
{
	(void)arg;
	recurse_thread(DEPTH - 5, 0);
	sfp_backtrace_thread_init();
	recurse_thread(DEPTH - 5, 1);
	return NULL;
}

/* Total depth below measure() is DEPTH: main, the recursion, measure. */
static NOINLINE int recurse(int n)
{
	volatile int pad[3] = { n };

	if (n > 0)
		sink += recurse(n - 1);
	else
		measure();
	return pad[0];
}

static NOINLINE int recurse_alt(int n)
{
	volatile int pad[3] = { n };

	if (n > 0)
		sink += recurse_alt(n - 1);
	else
		measure_alternating(DEPTH - 9);
	return pad[0];
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iters = atoi(argv[1]);
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);

	if (h)
		unw_bt = (int (*)(void **, int))(uintptr_t)dlsym(h,
								"unw_backtrace");
	if (!unw_bt)
		fprintf(stderr, "libunwind not found: %s\n", dlerror());
	if (sfp_backtrace_init()) {
		fprintf(stderr, "sfp_backtrace_init failed\n");
		return 1;
	}
	recurse(DEPTH - 5);
	recurse_alt(2);
	printf("bench-backtrace: in-process backtrace, %d frames deep "
	       "(load %.2f)\n", frames[0], loadavg());
	printf("  same stack every call, medians of %d interleaved rounds "
	       "of %d calls:\n", ROUNDS, iters);
	printf("  sfp_backtrace     %8.0f ns/call  (%d frames, %.1f ns/frame)\n",
	       results[0], frames[0], results[0] / frames[0]);
	printf("  glibc backtrace   %8.0f ns/call  (%d frames)\n", results[1],
	       frames[1]);
	printf("  libunwind unw_backtrace %8.0f ns/call  (%d frames)\n",
	       results[2], frames[2]);
	printf("  ratio glibc/sfprof     %.1fx (target >= 5x)\n",
	       results[1] / results[0]);
	printf("  ratio libunwind/sfprof %.1fx (median of per-round ratios; "
	       "target >= 2x)\n", ratio_unw);
	if (frames[0] != frames[1] || frames[0] != frames[2] ||
	    memcmp(first[0] + 1, first[1] + 1,
		   (size_t)(frames[0] - 1) * sizeof(void *)) ||
	    memcmp(first[0] + 1, first[2] + 1,
		   (size_t)(frames[0] - 1) * sizeof(void *)))
		printf("  WARNING: the frames differ\n");
	printf("  two call chains in turn (every caller guess wrong every "
	       "other call), %d frames:\n", alt_frames[0][0]);
	printf("  sfp_backtrace     %8.0f ns/call\n", alt_results[0]);
	printf("  libunwind unw_backtrace %8.0f ns/call\n", alt_results[1]);
	printf("  ratio libunwind/sfprof %.1fx\n", alt_ratio);
	if (alt_frames[0][0] != alt_frames[1][0] ||
	    alt_frames[0][1] != alt_frames[1][1])
		printf("  WARNING: frame counts differ\n");
	{
		pthread_t t;

		if (!pthread_create(&t, NULL, thread_main, NULL)) {
			pthread_join(t, NULL);
			printf("  sfp_backtrace in another thread: %.0f ns/call "
			       "(pages probed), %.0f ns/call (after "
			       "sfp_backtrace_thread_init)\n", thread_ns[0],
			       thread_ns[1]);
		}
	}
	sfp_backtrace_fini();
	return 0;
}
