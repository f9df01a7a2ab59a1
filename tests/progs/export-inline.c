// SPDX-License-Identifier: MIT
/*
 * Workload for the export tests' --inline checks: CPU time spent in
 * functions the compiler inlines into their callers (built -O2 -g with
 * frame pointers), for argv[1] milliseconds (default 200).
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static inline __attribute__((always_inline)) uint64_t mix_many(uint64_t x)
{
	unsigned int i;

	for (i = 0; i < 4096; i++)
		x = mix(x + i);
	return x;
}

__attribute__((noinline)) static void hot(uint64_t seed)
{
	sink += mix_many(seed);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int64_t end = now_ns() + (argc > 1 ? atoi(argv[1]) : 200) * 1000000ll;
	uint64_t seed = 1;

	while (now_ns() < end)
		hot(seed++);
	return 0;
}
