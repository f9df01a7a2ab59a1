// SPDX-License-Identifier: MIT
/*
 * Workload for the perf.data tests: two threads that burn CPU in a deep
 * recursion and in qsort() comparator callbacks (frames through libc),
 * each for the number of milliseconds of its CPU time given in argv[1]
 * (default 300): a loaded machine gives the same number of samples.
 * Built with frame pointers (perf-work) and without (perf-work-nofp).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static int64_t budget_ns;

__attribute__((noinline)) static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((noinline)) static void spin(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		sink += i * 2654435761u;
}

__attribute__((noinline)) static void recurse(int depth)
{
	if (depth > 0) {
		recurse(depth - 1);
		sink++;		/* not a tail call */
		return;
	}
	spin(20000);
}

__attribute__((noinline)) static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	spin(8);
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void sort_some(void)
{
	uint32_t v[512];
	unsigned int i;

	for (i = 0; i < 512; i++)
		v[i] = (i * 2654435761u) >> 7;
	qsort(v, 512, sizeof(v[0]), cmp_u32);
	sink += v[7];
}

__attribute__((noinline)) static void *worker(void *arg)
{
	int depth = (int)(intptr_t)arg;
	int64_t deadline_ns = now_ns() + budget_ns;
	unsigned int i;

	/* the thread's CPU clock is a system call (no vDSO): read it every
	 * 16 rounds (~1 ms), so that the workload stays in user space */
	for (i = 1;; i++) {
		recurse(depth);
		sort_some();
		if (!(i & 15) && now_ns() >= deadline_ns)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 300;
	pthread_t t;

	budget_ns = (int64_t)ms * 1000000;
	if (pthread_create(&t, NULL, worker, (void *)(intptr_t)40))
		return 1;
	worker((void *)(intptr_t)25);
	pthread_join(t, NULL);
	return 0;
}
