// SPDX-License-Identifier: MIT
/*
 * The AArch64 program test-unwind-gdb-aarch64 stops at every instruction
 * of (built -O2 -fomit-frame-pointer, static): leaves that keep the return
 * address in LR, leaves with a stack frame, non-leaf functions in their
 * prologues and epilogues, a VLA (CFA on x29), recursion, an indirect call
 * and a qsort() callback (frames inside libc).
 */
#include <stdlib.h>

static volatile int sink;

__attribute__((noinline)) int leaf_add(int a, int b)
{
	return a + b + sink;
}

__attribute__((noinline)) int leaf_stack(int n)
{
	volatile int buf[8];

	for (int i = 0; i < 8; i++)
		buf[i] = n + i;
	return buf[n & 7];
}

__attribute__((noinline)) int mid(int n)
{
	int r = leaf_add(n, 1);

	r += leaf_stack(r);
	return r + sink;
}

__attribute__((noinline)) int with_vla(int n)
{
	volatile char a[n + 16];

	a[0] = (char)n;
	a[n] = (char)mid(a[0]);
	return a[n] + a[0];
}

__attribute__((noinline)) int recurse(int n)
{
	if (n == 0)
		return with_vla(3);
	return recurse(n - 1) + sink + 1;
}

__attribute__((noinline)) int twice(int x)
{
	return mid(x) * 2;
}

__attribute__((noinline)) int call_ptr(int (*f)(int), int x)
{
	return f(x) + sink + 1;
}

__attribute__((noinline)) int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return leaf_add(x > y, -(x < y));
}

__attribute__((noinline)) int sort_some(void)
{
	int v[8] = { 5, 3, 9, 1, 7, 2, 8, 4 };

	qsort(v, 8, sizeof(v[0]), cmp_int);
	return v[0];
}

int main(void)
{
	int t = 0;

	for (int i = 0; i < 2; i++) {
		t += recurse(3);
		t += call_ptr(twice, i);
		t += sort_some();
	}
	return t == 12345;
}
