// SPDX-License-Identifier: MIT
/*
 * CFI corpus: functions whose prologues and epilogues cover the shapes
 * gcc emits CFI for.  tests/unit/test-cfi-gas.c compiles this file (with
 * corpus-asm.S) at test time with `gcc -O2 -Wa,--gsframe` and variants
 * (-fno-omit-frame-pointer, -mstackrealign, -Os, -O0, -fexceptions) and
 * checks that sfprof's SFrame rows built from .eh_frame equal the rows
 * GNU as wrote into .sframe.  Nothing here is meant to be run for long:
 * main calls each function once so that none is optimised away.
 */
#include <alloca.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

volatile int sink;
static jmp_buf jb;

NOINLINE int leaf_add(int a, int b) { return a + b; }

NOINLINE int calls_one(int x) { return leaf_add(x, 1) * 3; }

/* Callee-saved registers: several pushes and matching pops. */
NOINLINE long many_saved(long a, long b, long c, long d, long e, long f)
{
	long r = 0;

	for (long i = 0; i < a; i++)
		r += calls_one((int)(i * b + c)) ^ (d * e + f + r);
	sink = (int)r;
	return r + calls_one((int)a) + calls_one((int)b);
}

NOINLINE int use_alloca(int n)
{
	char *p = alloca(n + 16);

	memset(p, 'a', n + 16);
	p[n] = 0;
	return (int)strlen(p) + calls_one(n);
}

NOINLINE int use_vla(int n)
{
	int v[n + 1];

	for (int i = 0; i <= n; i++)
		v[i] = calls_one(i);
	return v[n / 2];
}

NOINLINE int two_vlas(int n, int m)
{
	char a[n + 1], b[m + 1];

	memset(a, 1, n + 1);
	memset(b, 2, m + 1);
	return a[n] + b[m] + calls_one(n + m);
}

/* Over-aligned locals: stack realignment (DRAP without a frame pointer). */
NOINLINE int over_aligned(int n)
{
	char buf[64] __attribute__((aligned(64)));

	memset(buf, n, sizeof(buf));
	sink = buf[3];
	return calls_one(buf[7]);
}

NOINLINE int over_aligned_vla(int n)
{
	double d[4] __attribute__((aligned(32)));
	char v[n + 1];

	memset(v, 3, n + 1);
	d[0] = n;
	sink = v[n];
	return calls_one((int)d[0]) + v[0];
}

static void consume_impl(void *p) { sink += *(volatile char *)p; }
static void (*volatile consume)(void *) = consume_impl;

/* A VLA next to an over-aligned local: gcc realigns through a DRAP
 * register (r10), the CFA becomes *(rbp-8). */
NOINLINE int drap_vla(int n)
{
	char v[n + 1];
	double d[4] __attribute__((aligned(64)));

	memset(v, 1, n + 1);
	d[0] = n;
	consume(v);
	consume(d);
	return v[0];
}

NOINLINE __attribute__((noreturn)) void dies(int code)
{
	fprintf(stderr, "dies %d\n", code);
	exit(code);
}

NOINLINE int maybe_dies(int x)
{
	if (x > 1000)
		dies(x);
	return x + 1;
}

/* Tail calls: the epilogue pops before the jmp. */
NOINLINE int tail_caller(int x)
{
	sink = x;
	if (x & 1)
		return calls_one(x + 2);
	return use_vla(x & 7);
}

NOINLINE int tail_saved(long a, long b)
{
	long t = many_saved(a & 3, b, a, b, a, b);

	sink = (int)t;
	return leaf_add((int)t, (int)a);
}

/* Several early returns: remember_state / restore_state. */
NOINLINE int early_returns(int x, int *p)
{
	if (!p)
		return -1;
	if (x < 0)
		return calls_one(-x);
	for (int i = 0; i < x; i++) {
		if (p[i] == 42)
			return i;
		sink += p[i];
	}
	if (x > 100)
		return use_alloca(x);
	return many_saved(x, x, x, x, x, x) > 0;
}

NOINLINE int big_frame(int i)
{
	char big[70000];

	memset(big, i, sizeof(big));
	return big[i & 0xff] + calls_one(big[100]);
}

NOINLINE int huge_frame(int i)
{
	volatile char big[1 << 20];

	big[i] = 1;
	return big[i] + calls_one(i);
}

NOINLINE int varargs_sum(int n, ...)
{
	va_list ap;
	int s = 0;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, int);
	va_end(ap);
	return s + calls_one(s);
}

static volatile sig_atomic_t got_sig;

NOINLINE void on_signal(int sig)
{
	got_sig = sig;
	sink = calls_one(sig);
}

NOINLINE void on_siginfo(int sig, siginfo_t *si, void *uc)
{
	got_sig = sig + (si ? si->si_code : 0) + (uc != NULL);
}

NOINLINE int recursive(int n) { return n <= 1 ? 1 : n * recursive(n - 1) + sink; }

NOINLINE int switch_table(int x)
{
	switch (x) {
	case 0: return calls_one(1);
	case 1: return use_vla(2);
	case 2: return leaf_add(x, 3);
	case 3: return recursive(4);
	case 4: return tail_caller(5);
	case 5: return 7;
	default: return use_alloca(x & 15);
	}
}

NOINLINE int uses_setjmp(int x)
{
	if (setjmp(jb))
		return 1;
	if (x == 12345)
		longjmp(jb, 1);
	return calls_one(x);
}

NOINLINE double float_work(double a, double b, int n)
{
	double acc = 0;

	for (int i = 0; i < n; i++)
		acc += a * i / (b + i);
	return acc + calls_one(n);
}

struct big { long v[16]; };

NOINLINE struct big returns_struct(long x)
{
	struct big b;

	for (int i = 0; i < 16; i++)
		b.v[i] = x * i + calls_one(i);
	return b;
}

NOINLINE long takes_struct(struct big b) { return b.v[3] + b.v[15]; }

NOINLINE __attribute__((ms_abi)) long ms_abi_fn(long a, long b)
{
	return a * b + calls_one((int)a);
}

NOINLINE __attribute__((cold)) int cold_path(int x)
{
	fprintf(stderr, "cold %d\n", x);
	return x * 2;
}

NOINLINE int hot_with_cold(int x)
{
	if (__builtin_expect(x == 99999, 0))
		return cold_path(x) + use_vla(3);
	return x + 1;
}

static void cleanup_int(int *p) { sink = *p; }

NOINLINE int with_cleanup(int x)
{
	int v __attribute__((cleanup(cleanup_int))) = x;

	return calls_one(v) + recursive(3);
}

NOINLINE int computed_goto(int x)
{
	static void *tab[] = { &&a, &&b, &&c };

	goto *tab[x % 3];
a:
	return calls_one(x);
b:
	return use_alloca(x & 31);
c:
	return x;
}

NOINLINE void *frame_address(void) { return __builtin_frame_address(0); }

int (*volatile fptrs[])(int) = {
	calls_one, use_alloca, use_vla, over_aligned, over_aligned_vla,
	maybe_dies, tail_caller, big_frame, recursive, switch_table,
	uses_setjmp, hot_with_cold, with_cleanup, computed_goto, huge_frame,
	drap_vla,
};

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction si = { .sa_sigaction = on_siginfo,
				.sa_flags = SA_SIGINFO };
	int p[4] = { 1, 2, 42, 4 };
	long r = 0;

	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &si, NULL);
	raise(SIGUSR1);
	raise(SIGUSR2);
	for (size_t i = 0; i < sizeof(fptrs) / sizeof(fptrs[0]); i++)
		r += fptrs[i](argc + (int)i);
	r += many_saved(argc, 2, 3, 4, 5, 6) + two_vlas(argc, 3);
	r += tail_saved(argc, 4) + early_returns(argc + 3, p);
	r += varargs_sum(3, 1, 2, 3) + (long)float_work(1.5, 2.5, argc);
	r += takes_struct(returns_struct(argc)) + ms_abi_fn(argc, 2);
	r += frame_address() != NULL;
	printf("%ld %d\n", r, got_sig);
	(void)argv;
	return 0;
}
