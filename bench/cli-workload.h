/* SPDX-License-Identifier: MIT */
/*
 * The workload that bench-script and bench-scale record (run as
 * `BENCH --work MS`): two threads, recursions of 30 and 20 frames ending
 * in a spin, and qsort with a callback, so that stacks are deep and pass
 * through libc.  Its function names show in the reports both benchmarks
 * time, so they are one definition.  Included by exactly one .c per
 * benchmark binary, after cli-timing.h (mono_ns).
 */
#ifndef SFP_BENCH_CLI_WORKLOAD_H
#define SFP_BENCH_CLI_WORKLOAD_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static volatile uint64_t sink;
static int64_t deadline;

__attribute__((noinline)) static void spin(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		sink += i * 2654435761u;
}

__attribute__((noinline)) static void recurse(int d)
{
	if (d > 0) {
		recurse(d - 1);
		sink++;
		return;
	}
	spin(20000);
}

__attribute__((noinline)) static int cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	spin(8);
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void *work(void *arg)
{
	uint32_t v[512];
	unsigned int i;

	while (mono_ns() < deadline) {
		recurse((int)(intptr_t)arg);
		for (i = 0; i < 512; i++)
			v[i] = (i * 2654435761u) >> 7;
		qsort(v, 512, sizeof(v[0]), cmp);
	}
	return NULL;
}

/* the two threads for @ms milliseconds */
static int workload(long ms)
{
	pthread_t t;

	deadline = mono_ns() + ms * 1000000;
	pthread_create(&t, NULL, work, (void *)(intptr_t)30);
	work((void *)(intptr_t)20);
	pthread_join(t, NULL);
	return 0;
}

#endif
