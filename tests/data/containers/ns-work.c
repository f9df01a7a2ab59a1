/* Busy forever in a 3-deep chain of PFX-named functions, for
 * tests/cli/run-containers.sh: built twice without frame pointers, with
 * PFX=alpha and PFX=beta, so that a binary replaced while running shows
 * by its names which file was read. */
#include <stdio.h>
#include <unistd.h>
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define F(n) CAT(PFX, n)
volatile unsigned long sink;
__attribute__((noinline)) void F(_leaf)(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}
__attribute__((noinline)) void F(_middle)(unsigned long n)
{
	F(_leaf)(n);
	sink++;
}
__attribute__((noinline)) void F(_outer)(unsigned long n)
{
	F(_middle)(n);
	sink++;
}
int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;)
		F(_outer)(1000000);
}
