// SPDX-License-Identifier: MIT
/*
 * A process to unwind from outside (sfprof unwind --pid, gdb): built
 * without frame pointers or debug info (progs.mk), several threads parked
 * in pause() at different depths: plain recursion, inside a qsort()
 * callback (libc frames in between), and inside a signal handler (a
 * signal frame in between).  Prints "ready" once every thread is parked.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile int parked;
static volatile int sink;

static NOINLINE void park(void)
{
	__atomic_add_fetch(&parked, 1, __ATOMIC_SEQ_CST);
	while (sink >= 0)	/* never false; keeps park() returning */
		pause();
}

static NOINLINE int dive(int n)
{
	volatile char pad[24];

	pad[0] = (char)n;
	if (n > 0)
		sink += dive(n - 1);
	else
		park();
	return pad[0];
}

static int cmp(const void *a, const void *b)
{
	static int once;

	if (!once++)
		dive(7);
	return *(const int *)a - *(const int *)b;
}

static void on_usr1(int sig)
{
	(void)sig;
	dive(3);
}

static void *thread_plain(void *arg)
{
	dive((int)(long)arg);
	return NULL;
}

static void *thread_qsort(void *arg)
{
	int v[32], i;

	(void)arg;
	for (i = 0; i < 32; i++)
		v[i] = (i * 13) % 32;
	qsort(v, 32, sizeof(int), cmp);
	return NULL;
}

static NOINLINE void *thread_signal(void *arg)
{
	(void)arg;
	pthread_kill(pthread_self(), SIGUSR1);
	return NULL;
}

int main(void)
{
	struct sigaction sa = { 0 };
	pthread_t t;
	long depths[] = { 5, 40 };
	unsigned int i;

	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < 2; i++)
		pthread_create(&t, NULL, thread_plain, (void *)depths[i]);
	pthread_create(&t, NULL, thread_qsort, NULL);
	pthread_create(&t, NULL, thread_signal, NULL);
	while (__atomic_load_n(&parked, __ATOMIC_SEQ_CST) < 4)
		usleep(1000);
	/* Let every thread reach pause() itself. */
	usleep(100000);
	printf("ready\n");
	fflush(stdout);
	dive(12);
	return 0;
}
