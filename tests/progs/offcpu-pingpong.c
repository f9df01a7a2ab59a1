// SPDX-License-Identifier: MIT
/*
 * Off-CPU under heavy switching: PAIRS pairs of threads ping-pong one
 * byte over two pipes for SECONDS seconds, every thread timing its own
 * read() calls (CLOCK_MONOTONIC around each), so that a test or a bench
 * compares a profile's blocked time with what the program measured.
 *
 *   offcpu-pingpong PAIRS SECONDS
 *
 * At the end, on stdout:
 *   pingpong pid=P threads=T trips=N blocks=V read_ns=B wall_ns=W
 * where read_ns is the sum over all threads of the time spent in read()
 * (the blocks, plus the few microseconds of the reads that found their
 * byte already there), blocks the voluntary context switches of all
 * threads (getrusage RUSAGE_THREAD): how many times they blocked.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

struct side {
	int in, out;
	bool first;
	uint64_t read_ns, trips, nvcsw;
};

static volatile int stop;
static uint64_t deadline;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* One read(), timed: the place the profile must show as blocked. */
static NOINLINE int wait_byte(struct side *s, char *c)
{
	uint64_t t0 = now_ns();
	ssize_t n = read(s->in, c, 1);

	s->read_ns += now_ns() - t0;
	return n == 1 ? 0 : -1;
}

static void *run(void *arg)
{
	struct side *s = arg;
	char c = 'x';

	if (s->first && write(s->out, &c, 1) != 1)
		return NULL;
	while (!wait_byte(s, &c)) {
		s->trips++;
		/* the first side decides when the pair stops: a 0 byte */
		if (c == 0 || (s->first && (stop || now_ns() >= deadline)))
			c = 0;
		if (write(s->out, &c, 1) != 1 || c == 0)
			break;
	}
	{
		struct rusage ru;

		if (!getrusage(RUSAGE_THREAD, &ru))
			s->nvcsw = (uint64_t)ru.ru_nvcsw;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 100;
	double secs = argc > 2 ? atof(argv[2]) : 3.0;
	struct side *sides;
	pthread_t *th;
	uint64_t t0, sum = 0, trips = 0, nvcsw = 0;
	int i;

	if (pairs < 1 || pairs > 10000 || secs <= 0) {
		fprintf(stderr, "usage: offcpu-pingpong PAIRS SECONDS\n");
		return 2;
	}
	sides = calloc((size_t)pairs * 2, sizeof(*sides));
	th = calloc((size_t)pairs * 2, sizeof(*th));
	if (!sides || !th)
		return 1;
	t0 = now_ns();
	deadline = t0 + (uint64_t)(secs * 1e9);
	for (i = 0; i < pairs; i++) {
		int ab[2], ba[2];

		if (pipe(ab) || pipe(ba)) {
			perror("pipe");
			return 1;
		}
		sides[2 * i] = (struct side){ .in = ba[0], .out = ab[1],
					      .first = true };
		sides[2 * i + 1] = (struct side){ .in = ab[0], .out = ba[1] };
	}
	for (i = 0; i < pairs * 2; i++)
		if (pthread_create(&th[i], NULL, run, &sides[i])) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	for (i = 0; i < pairs * 2; i++) {
		pthread_join(th[i], NULL);
		sum += sides[i].read_ns;
		trips += sides[i].trips;
		nvcsw += sides[i].nvcsw;
	}
	printf("pingpong pid=%d threads=%d trips=%llu blocks=%llu read_ns=%llu "
	       "wall_ns=%llu\n", (int)getpid(), pairs * 2,
	       (unsigned long long)trips, (unsigned long long)nvcsw,
	       (unsigned long long)sum,
	       (unsigned long long)(now_ns() - t0));
	free(sides);
	free(th);
	return 0;
}
