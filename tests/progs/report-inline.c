// SPDX-License-Identifier: MIT
/*
 * Workload for sfprof report's inlined-function checks (tests/cli/
 * run-report.sh), built -O2 -g with frame pointers, argv[1] milliseconds
 * (default 200):
 *
 *   main -> hot -> mix_many (inlined) -> mix (inlined)    about 1/2
 *   main -> warm -> mix (inlined)                         about 1/4
 *   main -> scaled.constprop.0 (DWARF names it scaled)    about 1/4
 *
 * so that perf report shows mix inlined into two functions (two entries)
 * and a function whose symbol is not its DWARF name ("scaled (inlined)").
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

__attribute__((noinline)) static void warm(uint64_t seed)
{
	uint64_t x = seed;
	unsigned int i;

	for (i = 0; i < 2048; i++)
		x = mix(x ^ i);
	sink += x;
}

/* always called with k = 3: gcc's constant propagation clones it */
__attribute__((noinline)) static uint64_t scaled(uint64_t x, unsigned int k)
{
	unsigned int i;

	for (i = 0; i < 2048; i++)
		x = x * k + (x >> 7) + i;
	return x;
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

	while (now_ns() < end) {
		hot(seed);
		warm(seed);
		sink += scaled(seed, 3);
		seed++;
	}
	return 0;
}
