// SPDX-License-Identifier: MIT
/*
 * Symbolizer test target: global, static, weak and alias functions, an
 * always-inlined helper (for inline chains), and calls into libc through
 * the PLT.  Built with -g (tests/progs/progs.mk) so DWARF is present.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int sp_sink;
int sp_global(int x);
int sp_alias(int x);
int sp_weak(int x);

static int __attribute__((noinline)) sp_static_leaf(int x)
{
	sp_sink += x;
	return x ^ 0x5a;
}

static inline __attribute__((always_inline)) int sp_inner(int x)
{
	sp_sink += x * 7;
	return sp_static_leaf(x + 1) * 3;
}

static inline __attribute__((always_inline)) int sp_middle(int x)
{
	int r = sp_inner(x) + 1;

	sp_sink -= r;
	return r;
}

int __attribute__((noinline)) sp_global(int x)
{
	return sp_middle(x) + sp_middle(x + 2);
}

int sp_alias(int x) __attribute__((alias("sp_global")));

/* A hand-written function without .size: its size must be guessed. */
__asm__(".text\n"
	".globl sp_asm_nosize\n"
	".type sp_asm_nosize, @function\n"
	"sp_asm_nosize:\n"
	"\tnop\n\tnop\n\tret\n");

int __attribute__((weak, noinline)) sp_weak(int x)
{
	return x - 1;
}

int main(int argc, char **argv)
{
	char *buf = malloc(64);
	int n;

	if (!buf)
		return 1;
	snprintf(buf, 64, "%s:%d", argv[0], argc);
	n = (int)strlen(buf);
	puts(buf);
	free(buf);
	return (sp_global(n) + sp_weak(argc) + sp_alias(1)) & 1;
}
