// SPDX-License-Identifier: MIT
/*
 * In-process backtrace at depth 25: sfp_backtrace() vs glibc backtrace()
 * vs libunwind's unw_backtrace(), same stack, one run.  All three must
 * return the same number of frames (checked) so that no one wins by
 * stopping early.
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
#define NOINLINE __attribute__((noinline))

static int iters = 20000;
static int (*unw_bt)(void **buf, int size);
static volatile int sink;

/* CPU time of this thread: on a shared, loaded machine wall time mostly
 * measures the other jobs. */
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
static int frames[3];

static NOINLINE void measure(void)
{
	void *buf[64];
	int w, i, rep;

	for (w = 0; w < 3; w++) {
		double best = 1e9;

		frames[w] = run_one(w, buf);	/* warm up */
		for (rep = 0; rep < 5; rep++) {
			double t0 = now();

			for (i = 0; i < iters; i++)
				sink += run_one(w, buf);
			t0 = (now() - t0) / iters;
			if (t0 < best)
				best = t0;
		}
		results[w] = best * 1e9;
	}
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
	printf("bench-backtrace: in-process backtrace, %d frames deep\n",
	       frames[0]);
	printf("  sfp_backtrace     %8.0f ns/call  (%d frames)\n", results[0],
	       frames[0]);
	printf("  glibc backtrace   %8.0f ns/call  (%d frames)\n", results[1],
	       frames[1]);
	printf("  libunwind unw_backtrace %8.0f ns/call  (%d frames)\n",
	       results[2], frames[2]);
	printf("  ratio glibc/sfprof     %.1fx (target >= 5x)\n",
	       results[1] / results[0]);
	printf("  ratio libunwind/sfprof %.1fx\n", results[2] / results[0]);
	if (frames[0] != frames[1] || frames[0] != frames[2])
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
