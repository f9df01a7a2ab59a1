// SPDX-License-Identifier: MIT
/*
 * Go's stack switches, in C, for tests/cli/run-record-switch.sh: a
 * function runs on another stack while the frame-pointer chain still
 * leads back to the stack it came from, as Go's runtime.systemstack runs
 * a function on g0 under a goroutine's frames.  Built with frame
 * pointers (progs.mk); the two switching helpers are assembly without
 * CFI, as Go's are (no table row: the walk takes their frame pointer).
 *
 *   stack-switch down DEPTH MS
 *       main -> run_down -> start_g, onto an mmap'd "goroutine" stack with frame
 *       pointer 0 (the goroutine's outermost frame, as Go's goexit) ->
 *       g_entry -> g_rec x DEPTH -> switch_call, back onto the thread's
 *       own stack below run_down's frame ("g0") -> g0_work -> leaf_spin.
 *       On g0 the chain leads to the goroutine's stack, lower in memory
 *       than g0's: the walk steps down once.
 *   stack-switch up DEPTH MS
 *       main -> run_up -> g_rec x DEPTH on the thread's stack ->
 *       switch_call onto an mmap'd "g0" -> g0_work -> leaf_spin: the
 *       chain leads up, far past any copy of g0's stack.
 *
 *   stack-switch nostack DEPTH MS
 *       main -> run_up -> g_rec x DEPTH -> nostack_spin -> spin_nostack,
 *       which spins with its stack pointer in a page that cannot be read
 *       (perf copies no stack at all) and its frame record on the
 *       thread's stack: the chain leads there from the first frame.
 *
 * Each spins MS ms of CPU time in leaf_spin (spin_nostack), then exits.  The test
 * knows the answer: leaf_spin, g0_work, switch_call, DEPTH g_rec, then
 * g_entry and start_g (down) or run_up, main and the C start-up to
 * _start (up).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "spin.h"


#define G_STACK (1u << 20)

static double spin_ms;
static int depth;
static char *other_top;		/* the stack switch_call goes to */

#if defined(__x86_64__)
/*
 * switch_call(sp, fn, arg): fn(arg) on the stack at sp, back here after.
 * A frame of its own on the old stack (push rbp; mov rsp, rbp), as
 * C code would have: its frame pointer is what leads fn's callers back.
 * start_g(sp, fn, arg): fn(arg) on the stack at sp with frame pointer 0:
 * the outermost frame there.  Never returns.
 */
__asm__(".text\n"
	".globl switch_call\n"
	".type switch_call, @function\n"
	"switch_call:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov %rdi, %rsp\n"
	"	mov %rdx, %rdi\n"
	"	call *%rsi\n"
	"	mov %rbp, %rsp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size switch_call, .-switch_call\n"
	".globl start_g\n"
	".type start_g, @function\n"
	"start_g:\n"
	"	mov %rdi, %rsp\n"
	"	xor %ebp, %ebp\n"
	"	mov %rdx, %rdi\n"
	"	call *%rsi\n"
	"	ud2\n"
	".size start_g, .-start_g\n"
	/* spin_nostack(sp, n): n rounds of a loop with the stack pointer
	 * at sp (unreadable: perf copies no stack at all), its own frame
	 * record left on the real stack for the chain */
	".globl spin_nostack\n"
	".type spin_nostack, @function\n"
	"spin_nostack:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov %rdi, %rsp\n"
	"1:	dec %rsi\n"
	"	jnz 1b\n"
	"	mov %rbp, %rsp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size spin_nostack, .-spin_nostack\n");
#endif

void switch_call(void *sp, void (*fn)(long), long arg);
void start_g(void *sp, void (*fn)(long), long arg);
void spin_nostack(void *sp, long n);

#if !defined(__x86_64__)
void switch_call(void *sp, void (*fn)(long), long arg)
{
	abort();
}

void start_g(void *sp, void (*fn)(long), long arg)
{
	abort();
}

void spin_nostack(void *sp, long n)
{
	abort();
}
#endif

/* on the other stack */
NOIPA static void g0_work(long arg)
{
	volatile unsigned char pad[256];

	pad[0] = (unsigned char)arg;
	leaf_spin(spin_ms);
	sink += pad[0];
}

/* nostack: the leaf spins with its stack pointer in a page that cannot
 * be read */
static char *bad_sp;

NOIPA static void nostack_spin(void)
{
	double end = cpu_ms() + spin_ms;

	do
		spin_nostack(bad_sp, 2000000);
	while (cpu_ms() < end);
}

NOIPA static void g_rec(long n)
{
	volatile unsigned char pad[200];

	pad[0] = (unsigned char)n;
	if (n <= 1 && bad_sp)
		nostack_spin();
	else if (n <= 1)
		switch_call(other_top, g0_work, n);
	else
		g_rec(n - 1);
	sink += pad[0] + pad[n % 200];
}

NOIPA static void g_entry(long n)
{
	g_rec(n);
	exit(0);
}

static void *map_stack(void)
{
	void *p = mmap(NULL, G_STACK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* g0 is the mapping: far below the thread's stack */
NOIPA static void run_up(char *g)
{
	other_top = g + G_STACK - 64;
	g_rec(depth);
}

/* The goroutine's stack is the mapping, g0 this frame's array: the
 * thread's stack, above the mapping. */
NOIPA static int run_down(char *g)
{
	volatile char g0[64 << 10];

	g0[0] = 0;
	if ((uintptr_t)g > (uintptr_t)g0) {
		fprintf(stderr, "stack-switch: the mapping lies above the "
			"thread's stack\n");
		return 3;
	}
	other_top = (char *)((uintptr_t)(g0 + sizeof(g0) - 256) &
			     ~(uintptr_t)15);
	start_g(g + G_STACK - 64, g_entry, depth);
	return 0;
}

int main(int argc, char **argv)
{
	char *g;

#if !defined(__x86_64__)
	fprintf(stderr, "stack-switch: x86-64 only\n");
	return 2;
#endif
	if (argc != 4 || (strcmp(argv[1], "down") && strcmp(argv[1], "up") &&
			  strcmp(argv[1], "nostack"))) {
		fprintf(stderr, "usage: stack-switch down|up|nostack DEPTH MS\n");
		return 2;
	}
	depth = atoi(argv[2]);
	spin_ms = atof(argv[3]);
	if (depth < 1 || depth > 100 || spin_ms <= 0)
		return 2;
	g = map_stack();
	if (!g)
		return 1;
	if (!strcmp(argv[1], "nostack")) {
		/* the top of a page that cannot be read */
		if (mprotect(g, 4096, PROT_NONE))
			return 1;
		bad_sp = g + 4096 - 64;
		run_up(g);
		return 0;
	}
	if (!strcmp(argv[1], "up")) {
		run_up(g);
		return 0;
	}
	return run_down(g);
}
