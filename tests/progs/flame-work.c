// SPDX-License-Identifier: MIT
/*
 * Workload of the flame graph and speedscope browser tests, built without
 * frame pointers (progs.mk) so that only sfprof's SFrame unwinding gives
 * the full stacks the viewers must show.
 *
 *   flame-work MS [THREADS]   for MS milliseconds of CPU time per thread
 *   (THREADS - 1 extra threads run the same as the main thread):
 *     main -> flame_outer -> flame_mid -> flame_hot_leaf    ~70 %
 *     main -> flame_outer -> flame_cold_leaf                ~20 %
 *     main -> flame_sys -> read(/dev/zero) -> kernel        ~10 %
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

/* global, so that every symbolizer names them the same way */
void flame_hot_leaf(double ms);
void flame_cold_leaf(double ms);
void flame_mid(double ms);
void flame_outer(double ms);
void flame_sys(double ms);

static double cpu_ms(void)
{
	struct timespec ts;

	/* CPU time, so that a loaded machine gives the same shares */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void flame_hot_leaf(double ms)
{
	double end = cpu_ms() + ms;
	unsigned long i;

	while (cpu_ms() < end)
		for (i = 0; i < 20000; i++)
			sink += i ^ (sink >> 3);
}

__attribute__((noinline)) void flame_cold_leaf(double ms)
{
	double end = cpu_ms() + ms;
	unsigned long i;

	while (cpu_ms() < end)
		for (i = 0; i < 20000; i++)
			sink += i * 3;
}

__attribute__((noinline)) void flame_mid(double ms)
{
	flame_hot_leaf(ms);
	sink++;
}

__attribute__((noinline)) void flame_outer(double ms)
{
	flame_mid(ms * 0.7);
	flame_cold_leaf(ms * 0.2);
	sink++;
}

__attribute__((noinline)) void flame_sys(double ms)
{
	static char buf[1 << 16];
	double end = cpu_ms() + ms;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return;
	while (cpu_ms() < end)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
}

static void run(double ms)
{
	double slice = 50;

	/* interleaved slices: every part spans the whole run */
	for (; ms > 0; ms -= slice) {
		flame_outer(slice * 0.9);
		flame_sys(slice * 0.1);
	}
}

static void *thread_main(void *arg)
{
	run(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 500;
	int nt = argc > 2 ? atoi(argv[2]) : 1, i;
	pthread_t th[16];

	if (nt < 1 || nt > 16)
		nt = 1;
	for (i = 1; i < nt; i++)
		if (pthread_create(&th[i], NULL, thread_main, &ms))
			return 1;
	run(ms);
	for (i = 1; i < nt; i++)
		pthread_join(th[i], NULL);
	return 0;
}
