/* Busy forever in a 3-deep chain of PFX-named functions, for
 * tests/cli/run-containers.sh: built twice without frame pointers, with
 * PFX=alpha and PFX=beta, so that a binary replaced while running shows
 * by its names which file was read.
 *
 * tests/cli/run-containers-shared-path.sh builds it once per "image" with
 * a different layout as well: PAD bytes of code before the chain move
 * every address, FRAME bytes of locals change every frame's size, so
 * that one build's unwind table or symbols applied to another's
 * addresses give wrong frames, not by chance the right ones.
 *
 * bench/agent-containers.sh and tests/cli/run-agent-images.sh build it
 * with IDLE_US: each round of work is followed by a sleep, so that every
 * container's load is the same small share of a CPU however many of them
 * run (busy loops would split the machine's CPUs between them).
 * SYSCALLS (the bench): that many system calls after each round, so that
 * a server's share of kernel time is there in every run, and the kernel
 * frames (the agent's kernel symbol table) with it. */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef WORK
#define WORK 1000000
#endif
#ifndef PAD
#define PAD 0
#endif
#ifndef FRAME
#define FRAME 1
#endif
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define F(n) CAT(PFX, n)
#define STR2(x) #x
#define STR(x) STR2(x)
volatile unsigned long sink;
#if PAD > 0
__attribute__((noinline, used)) void F(_pad)(void)
{
	__asm__ volatile(".skip " STR(PAD) ", 0x90");
}
#endif
__attribute__((noinline)) void F(_leaf)(unsigned long n)
{
	volatile char local[FRAME];

	local[0] = 1;
	for (unsigned long i = 0; i < n; i++)
		sink += i * i + local[0];
}
__attribute__((noinline)) void F(_middle)(unsigned long n)
{
	volatile char local[FRAME];

	local[0] = 0;
	F(_leaf)(n + local[0]);
	sink++;
}
__attribute__((noinline)) void F(_outer)(unsigned long n)
{
	volatile char local[FRAME];

	local[0] = 0;
	F(_middle)(n + local[0]);
	sink++;
}
int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		F(_outer)(WORK);
#ifdef SYSCALLS
		for (int i = 0; i < SYSCALLS; i++)
			syscall(SYS_getppid);
#endif
#ifdef IDLE_US
		usleep(IDLE_US);
#endif
	}
}
