// SPDX-License-Identifier: MIT
/*
 * The demo workload: a few hot paths through libc (qsort with a callback,
 * string and memory functions), a recursive part, and a syscall-heavy part.
 * Built without frame pointers by examples/demo.sh, so that only unwind
 * tables (SFrame, or SFrame built from .eh_frame) can walk its stack.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

__attribute__((noinline)) static void sort_work(uint32_t *v, size_t n)
{
	uint32_t seed = 12345;

	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = seed;
	}
	qsort(v, n, sizeof(*v), cmp_u32);
}

__attribute__((noinline)) static uint64_t fib(int n)
{
	return n < 2 ? (uint64_t)n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static void string_work(char *buf, size_t n)
{
	for (int r = 0; r < 200; r++) {
		memset(buf, 'a' + r % 26, n - 1);
		buf[n - 1] = 0;
		sink += strlen(buf);
	}
}

__attribute__((noinline)) static void syscall_work(int fd, int n)
{
	char c = 0;

	for (int i = 0; i < n; i++)
		sink += (uint64_t)write(fd, &c, 1) + (uint64_t)getppid();
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	size_t n = 1 << 16;
	uint32_t *v = malloc(n * sizeof(*v));
	char *buf = malloc(1 << 16);
	int fd = open("/dev/null", O_WRONLY);
	double end = now() + seconds;

	if (!v || !buf || fd < 0)
		return 1;
	do {
		sort_work(v, n);
		sink += fib(24);
		string_work(buf, 1 << 16);
		syscall_work(fd, 2000);
	} while (now() < end);
	printf("demo done (%llu)\n", (unsigned long long)sink);
	close(fd);
	free(buf);
	free(v);
	return 0;
}
