// SPDX-License-Identifier: MIT
/*
 * Workload for the agent tests: one thread, no frame pointers, no own
 * .sframe (tables come from .eh_frame), that spends nearly all its time
 * in agent_hot(), called from a qsort() comparator, so the hot frame is
 * reached only through libc:
 *   main -> agent_sort_loop -> qsort (libc) -> agent_cmp -> agent_hot
 * Runs for argv[1] seconds of wall time (default 30), or until killed;
 * "20ms": that many milliseconds (the soak test's short-lived programs);
 * "cpu200ms": until it has used that much CPU time, however busy the
 * machine (a short-lived program whose samples the tests count).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) static void agent_hot(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		sink += i * 2654435761u;
}

__attribute__((noinline)) static int agent_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	agent_hot(200);
	return x < y ? -1 : x > y;
}

static clockid_t clock_id = CLOCK_MONOTONIC;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(clock_id, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

__attribute__((noinline)) static void agent_sort_loop(uint64_t end_ms)
{
	uint32_t v[256];
	unsigned int i, round = 0;

	while (now_ms() < end_ms) {
		for (i = 0; i < 256; i++)
			v[i] = ((i + round) * 2654435761u) >> 7;
		qsort(v, 256, sizeof(v[0]), agent_cmp);
		sink += v[3];
		round++;
	}
}

int main(int argc, char **argv)
{
	const char *arg = argc > 1 ? argv[1] : "30";
	char *unit = NULL;
	uint64_t ms;
	long n;

	if (!strncmp(arg, "cpu", 3)) {
		clock_id = CLOCK_PROCESS_CPUTIME_ID;
		arg += 3;
	}
	n = strtol(arg, &unit, 10);
	ms = unit && unit[0] == 'm' ? (uint64_t)n : (uint64_t)n * 1000;

	printf("ready\n");
	fflush(stdout);
	agent_sort_loop(now_ms() + ms);
	return 0;
}
