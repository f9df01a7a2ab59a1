/* Busy forever inside libc: strverscmp on two long strings that differ only
 * at their end, called from a 2-deep chain of our own functions, for
 * tests/cli/run-containers-libc.sh.  The same binary runs on the host
 * (the host's libc.so.6) and in an image whose libc.so.6 is another
 * Debian build at the same path: strverscmp starts at another address in
 * each build, so naming or unwinding one build's samples with the other
 * build's file gives other names, other offsets and broken stacks.
 * strverscmp: a plain function (no ifunc variants, no calls out), so the
 * leaf of nearly every sample is that one function of libc. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#define LEN 4096
static char a[LEN + 1], b[LEN + 1];
volatile int sink;

__attribute__((noinline)) void work_inner(void)
{
	sink += strverscmp(a, b);
}

__attribute__((noinline)) void work_outer(void)
{
	for (int i = 0; i < 64; i++)
		work_inner();
	sink++;
}

int main(void)
{
	memset(a, 'x', LEN);
	memset(b, 'x', LEN);
	a[LEN - 1] = 'a';
	b[LEN - 1] = 'b';
	printf("ready\n");
	fflush(stdout);
	for (;;)
		work_outer();
}
