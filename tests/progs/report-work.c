// SPDX-License-Identifier: MIT
/*
 * Known workload for the report tests, built without frame pointers (see
 * progs.mk): main -> run -> work -> hot_leaf does two thirds of the work
 * and main -> run -> warm one third, the same loop body in both, for the
 * number of milliseconds in argv[1] (default 500).  So hot_leaf is the
 * hottest function at ~66% self, reached through a known call path.
 * Milliseconds of CPU time, so that a loaded machine gives the same
 * number of samples (of wall time, a test asking for the 100th sample of
 * 400 ms got 65 samples on a busy machine).  Each round's length varies
 * (0.5 to 1.5 times ROUNDS, the same 2:1 split within it): a round of
 * fixed length lets samples at a period close to a multiple of it fall
 * at the same point of it again and again (four rounds take about 1 ms,
 * the period at 1000 Hz): the likely cause of a CI run that saw warm
 * above hot_leaf (2 Dec 2026).
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 200000u

static volatile uint64_t sink;

/* no inlining, cloning (.constprop) or other IPA: the call path must stay
 * exactly main -> run -> work -> hot_leaf */
#if defined(__GNUC__) && !defined(__clang__)
#define KEEP __attribute__((noipa))
#else
#define KEEP __attribute__((noinline))
#endif

void hot_leaf(unsigned int n);
void warm(unsigned int n);
void work(unsigned int n);
void run(int64_t ms);

/* the two leaves share one body through an always-inlined copy, so their
 * cost per round is the same and only the round counts differ */
static inline __attribute__((always_inline)) void body(unsigned int n)
{
	uint64_t x = sink;
	unsigned int i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	sink = x;
}

KEEP void hot_leaf(unsigned int n)
{
	body(n);
	__asm__ volatile("" ::: "memory");
}

KEEP void warm(unsigned int n)
{
	body(n);
	__asm__ volatile("" ::: "memory");
}

KEEP void work(unsigned int n)
{
	hot_leaf(2 * n);
	__asm__ volatile("" ::: "memory");
}

KEEP static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

KEEP void run(int64_t ms)
{
	int64_t end = now_ns() + ms * 1000000;
	uint32_t x = 2463534242u;	/* xorshift32: the rounds' lengths */
	unsigned int i, n;

	/* the process's CPU clock is a system call (no vDSO): read it every
	 * 4 rounds (~1 ms), so that the workload stays in user space */
	for (i = 1;; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		n = ROUNDS / 2 + x % ROUNDS;
		work(n);
		warm(n);
		if (!(i & 3) && now_ns() >= end)
			break;
	}
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 500;

	run(ms);
	return 0;
}
