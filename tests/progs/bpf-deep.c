// SPDX-License-Identifier: MIT
/*
 * Workloads for the bpf-defer tests, built without frame pointers (see
 * progs.mk) and without their own .sframe, so that the tables the BPF
 * unwinder uses are built from .eh_frame.
 *
 *   (MS is CPU time of each thread, not wall time.)
 *   bpf-deep threads MS   two threads: worker_main -> worker_outer ->
 *                         worker_sort -> qsort (libc) -> worker_cmp
 *   bpf-deep vdso MS      main -> vdso_outer -> clock_gettime (the vDSO)
 *   bpf-deep deep N MS    main -> deep_rec x N (frames of ~300 bytes) ->
 *                         deep_spin: a stack far deeper than any stack
 *                         snapshot perf can copy (65528 bytes)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static int worker_cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;
	int i;

	for (i = 0; i < 16; i++)
		sink += (x ^ y) >> (i & 7);
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void worker_sort(unsigned long *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = (i * 2654435761u) % 1000003;
	qsort(v, n, sizeof(*v), worker_cmp);
}

__attribute__((noinline)) static void worker_outer(double ms)
{
	unsigned long *v = malloc(2048 * sizeof(*v));
	double end = cpu_ms() + ms;

	if (!v)
		return;
	while (cpu_ms() < end)
		worker_sort(v, 2048);
	free(v);
}

static void *worker_main(void *arg)
{
	worker_outer(*(double *)arg);
	return NULL;
}

__attribute__((noinline)) static void deep_spin(double ms)
{
	double end = cpu_ms() + ms;
	unsigned long i = 0;

	while (cpu_ms() < end)
		for (i = 0; i < 10000; i++)
			sink += i;
}

__attribute__((noinline)) static unsigned long deep_rec(int n, double ms)
{
	volatile unsigned char pad[256];

	pad[n & 255] = (unsigned char)n;
	if (n > 0)
		sink += deep_rec(n - 1, ms);
	else
		deep_spin(ms);
	return pad[n & 255];
}

__attribute__((noinline)) static void vdso_outer(double ms)
{
	double end = cpu_ms() + ms;
	struct timespec ts;
	int i;

	while (cpu_ms() < end)
		for (i = 0; i < 1000; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += (unsigned long)ts.tv_nsec;
		}
}

int main(int argc, char **argv)
{
	double ms;

	if (argc == 3 && !strcmp(argv[1], "threads")) {
		pthread_t t[2];
		int i;

		ms = atof(argv[2]);
		for (i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, worker_main, &ms))
				return 1;
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "vdso")) {
		vdso_outer(atof(argv[2]));
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "deep")) {
		ms = atof(argv[3]);
		sink += deep_rec(atoi(argv[2]), ms);
		return 0;
	}
	fprintf(stderr, "usage: bpf-deep threads MS | vdso MS | deep N MS\n");
	return 2;
}
