/* SPDX-License-Identifier: MIT */
/*
 * The CPU-time spin the deep- and switched-stack test programs end their
 * stacks in (deep-stack.c, stack-switch.c): the leaf_spin frame the
 * tests look for, spinning MS ms of the process's CPU time.
 */
#ifndef SFP_TEST_PROGS_SPIN_H
#define SFP_TEST_PROGS_SPIN_H

#include <time.h>

/* Neither inlined, cloned nor folded with a twin (clang has no noipa;
 * bodies that differ in a constant stay apart there). */
#ifdef __clang__
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noipa))
#endif

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOIPA static void leaf_spin(double ms)
{
	double end = cpu_ms() + ms;
	unsigned long i;

	do {
		for (i = 0; i < 200000; i++)
			sink += i ^ (sink >> 3);
	} while (cpu_ms() < end);
}

#endif
