// SPDX-License-Identifier: MIT
/*
 * A workload for the record tests, built without frame pointers (see
 * progs.mk) so that only a CFI/SFrame unwinder gets complete stacks.
 *
 *   (MS is CPU time of the thread, not wall time.)
 *   record-spin cpu MS    main -> spin_outer -> spin_sort -> qsort (libc)
 *                         -> cmp_leaf, for MS milliseconds of CPU
 *   record-spin sys MS    main -> sys_outer -> sys_read: big read()s from
 *                         /dev/zero, so most samples land in the kernel
 *   record-spin fork MS   a child process runs `cpu MS` too
 *   record-spin flat MS   main -> flat_outer -> flat_mid -> flat_leaf,
 *                         all in this program (no libc frames)
 *   record-spin loop MS   main -> loop_outer: short read()s of /dev/zero
 *                         from one call site, many per sampling period,
 *                         with the same stack bytes; only the loop
 *                         counter (a register) differs between entries
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	/* CPU time, so that a loaded machine gives the same samples. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static int cmp_leaf(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;
	int i;

	for (i = 0; i < 20; i++)
		sink += (x ^ y) >> (i & 7);
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void spin_sort(unsigned long *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = (i * 2654435761u) % 1000003;
	qsort(v, n, sizeof(*v), cmp_leaf);
}

__attribute__((noinline)) static void spin_outer(double ms)
{
	static unsigned long v[4096];
	double end = now_ms() + ms;

	while (now_ms() < end)
		spin_sort(v, 4096);
}

__attribute__((noinline)) static void sys_read(int fd, char *buf, size_t n)
{
	if (read(fd, buf, n) < 0)
		exit(1);
	sink += (unsigned char)buf[n / 2];
}

__attribute__((noinline)) static void sys_outer(double ms)
{
	size_t n = 8 << 20;
	char *buf = malloc(n);
	double end = now_ms() + ms;
	int fd = open("/dev/zero", O_RDONLY);

	if (!buf || fd < 0)
		exit(1);
	while (now_ms() < end)
		sys_read(fd, buf, n);
	close(fd);
	free(buf);
}

__attribute__((noinline)) static void flat_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline)) static void flat_mid(unsigned long n)
{
	flat_leaf(n);
	sink++;
}

__attribute__((noinline)) static void flat_outer(double ms)
{
	double end = now_ms() + ms;

	while (now_ms() < end) {
		flat_mid(200000);
		sink++;
	}
}

__attribute__((noinline)) static void loop_outer(double ms)
{
	static char buf[65536];
	double end = now_ms() + ms;
	unsigned long i;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		exit(1);
	for (i = 1;; i++) {
		if (read(fd, buf, sizeof(buf)) < 0)
			exit(1);
		if (!(i & 255) && now_ms() >= end)
			break;
	}
	sink += i;
	close(fd);
}

int main(int argc, char **argv)
{
	double ms = argc > 2 ? atof(argv[2]) : 500;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "cpu")) {
		spin_outer(ms);
	} else if (!strcmp(argv[1], "sys")) {
		sys_outer(ms);
	} else if (!strcmp(argv[1], "loop")) {
		loop_outer(ms);
	} else if (!strcmp(argv[1], "flat")) {
		flat_outer(ms);
	} else if (!strcmp(argv[1], "fork")) {
		pid_t p = fork();

		if (p == 0) {
			spin_outer(ms);
			_exit(0);
		}
		spin_outer(ms / 4);
		waitpid(p, NULL, 0);
	} else {
		return 2;
	}
	return 0;
}
