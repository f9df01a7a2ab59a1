// SPDX-License-Identifier: MIT
/*
 * Deep stacks for the record tests (tests/cli/run-record-deep.sh), built
 * without frame pointers (progs.mk), tables from .eh_frame:
 *
 *   deep-stack const DEPTH MS
 *       main -> path_a -> rec_a x DEPTH -> leaf_spin, again and again for
 *       MS ms of CPU time; each visit spins ~20 ms in leaf_spin.  Every rec
 *       frame holds a 1000-byte array, so 100 of them are ~100 KiB: deeper
 *       than the default 16 KiB stack copy and than perf's largest (64 KiB),
 *       in few enough frames (106 in all) that the readers, which show at
 *       most 127 as perf does, show them all.
 *   deep-stack alt DEPTH MS PHASE_MS
 *       the same, alternating between main -> path_a -> rec_a x DEPTH and
 *       main -> path_b -> rec_b x DEPTH every PHASE_MS ms of CPU: the inner
 *       frames of both paths sit at the same stack addresses with the same
 *       sizes, only the functions differ, so a stack whose outer part was
 *       taken from the other path shows rec_a under path_b or the reverse.
 *
 * The test knows the answer: a sample whose leaf is leaf_spin has exactly
 * DEPTH rec frames of one letter, then that letter's path, main, and the
 * C start-up down to _start.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spin.h"

NOIPA static unsigned long rec_a(int n, double ms)
{
	volatile unsigned char pad[1000];
	unsigned long r;

	pad[0] = (unsigned char)n;
	pad[999] = 0xa;
	if (n <= 1)
		leaf_spin(ms);
	else
		sink += rec_a(n - 1, ms);
	r = pad[0] + pad[999] + pad[n % 1000];
	return r;
}

NOIPA static unsigned long rec_b(int n, double ms)
{
	volatile unsigned char pad[1000];
	unsigned long r;

	pad[0] = (unsigned char)n;
	pad[999] = 0xb;
	if (n <= 1)
		leaf_spin(ms);
	else
		sink += rec_b(n - 1, ms);
	r = pad[0] + pad[999] + pad[n % 1000];
	return r;
}

NOIPA static void path_a(int depth, double ms)
{
	volatile unsigned char pad[64];

	pad[0] = 1;
	sink += rec_a(depth, ms) + pad[0];
}

NOIPA static void path_b(int depth, double ms)
{
	volatile unsigned char pad[64];

	pad[0] = 2;
	sink += rec_b(depth, ms) + pad[0];
}

int main(int argc, char **argv)
{
	int depth;
	double ms, phase, end;
	bool alt;
	int k = 0;

	if (argc < 4 || (strcmp(argv[1], "const") && strcmp(argv[1], "alt")) ||
	    (!strcmp(argv[1], "alt") && argc < 5)) {
		fprintf(stderr, "usage: deep-stack const DEPTH MS | "
			"alt DEPTH MS PHASE_MS\n");
		return 2;
	}
	alt = !strcmp(argv[1], "alt");
	depth = atoi(argv[2]);
	ms = atof(argv[3]);
	phase = alt ? atof(argv[4]) : 20;
	if (depth < 1 || depth > 120 || ms <= 0 || phase <= 0)
		return 2;
	end = cpu_ms() + ms;
	while (cpu_ms() < end) {
		if (alt && (k++ & 1))
			path_b(depth, phase);
		else
			path_a(depth, phase);
	}
	return 0;
}
