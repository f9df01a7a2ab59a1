// SPDX-License-Identifier: MIT
/*
 * Off-CPU test workload, built without frame pointers: threads that wait
 * in known functions, each timing its own waits so that a test compares a
 * profile's blocked time with what the program measured, never with the
 * clock the test itself races.
 *
 *   offcpu-work            nap()       10 x usleep(100 ms)
 *                          wait_pipe() 20 reads of a pipe fed every 50 ms
 *                          wait_cond() 10 waits on a condition variable,
 *                                      signalled every 100 ms
 *                          spin()      a CPU loop of 300 ms thread time
 *   offcpu-work bigwrite   big_write() one write() of 4 MiB into a pipe
 *                          of one page that drain() empties: the writer
 *                          blocks at least 1,023 times in one kernel
 *                          entry, whatever the scheduling
 *
 *   offcpu-work fault      fault_wait(): 10 page faults from user mode,
 *                          each held 20 ms by a userfaultfd handler
 *                          (uffd_serve()), 5 ms of CPU time in user
 *                          space after each, while remap() keeps the
 *                          process's mmap lock write-held most of the
 *                          time (mprotect of 128 MiB in a loop), then
 *                          fault_lock(): fresh pages of the region
 *                          remap() changes, whose faults wait for that
 *                          lock; blocks inside page faults, with user
 *                          registers, whose callbacks find the lock
 *                          taken
 *   offcpu-work linger F   the first, then waits in linger() until file
 *                          F exists (a tracer still reading /proc/PID)
 *   offcpu-work start F    the first, once file F exists (a recorder
 *                          attached with -p or -a meanwhile)
 *
 * One line per thread on stdout, once all have ended:
 *   thread NAME tid=T blocked_ns=B wall_ns=W cpu_ns=C stolen_ns=S
 * S is the time the kernel took from all CPUs' tasks while the thread ran
 * (/proc/stat's irq, softirq and steal: a hypervisor running another
 * guest). The thread's CPU time leaves it out, but the cpu-clock event,
 * which counts the wall time a task is on its CPU, keeps it: a test that
 * weighs cpu-clock samples against cpu_ns allows S beside its margin.
 */

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

struct result {
	const char *name;
	pid_t tid;
	uint64_t blocked_ns, wall_ns, cpu_ns, stolen_ns;
};

static struct result results[8];
static int feed_pipe[2], big_pipe[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ticks;
static volatile uint64_t sink;
static int uffd;
static char *uffd_area, *remap_area;
static volatile int faults_done;

static uint64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The irq, softirq and steal time of all CPUs so far, in ns (the first
 * line of /proc/stat, in clock ticks); 0 where it cannot be read. */
static uint64_t stolen(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	long hz = sysconf(_SC_CLK_TCK);
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8 || hz <= 0)
		return 0;
	return (v[5] + v[6] + v[7]) * (1000000000ULL / (uint64_t)hz);
}

static void begin(struct result *r, const char *name)
{
	r->name = name;
	r->tid = gettid();
	r->stolen_ns = stolen();
	r->wall_ns = ns(CLOCK_MONOTONIC);
	pthread_setname_np(pthread_self(), name);
}

static void end(struct result *r)
{
	r->wall_ns = ns(CLOCK_MONOTONIC) - r->wall_ns;
	r->cpu_ns = ns(CLOCK_THREAD_CPUTIME_ID);
	r->stolen_ns = stolen() - r->stolen_ns;
}

NOINLINE static void nap(struct result *r)
{
	for (int i = 0; i < 10; i++) {
		uint64_t t = ns(CLOCK_MONOTONIC);

		usleep(100000);
		r->blocked_ns += ns(CLOCK_MONOTONIC) - t;
	}
}

NOINLINE static void wait_pipe(struct result *r)
{
	char c;

	for (int i = 0; i < 20; i++) {
		uint64_t t = ns(CLOCK_MONOTONIC);

		if (read(feed_pipe[0], &c, 1) != 1)
			exit(3);
		r->blocked_ns += ns(CLOCK_MONOTONIC) - t;
	}
}

NOINLINE static void wait_cond(struct result *r)
{
	pthread_mutex_lock(&lock);
	for (int seen = 0; seen < 10;) {
		uint64_t t = ns(CLOCK_MONOTONIC);

		while (ticks == seen)
			pthread_cond_wait(&cond, &lock);
		r->blocked_ns += ns(CLOCK_MONOTONIC) - t;
		seen = ticks;
	}
	pthread_mutex_unlock(&lock);
}

NOINLINE static void spin(void)
{
	uint64_t x = 1;

	while (ns(CLOCK_THREAD_CPUTIME_ID) < 300000000ULL)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

/* The feeder: a byte every 50 ms, a tick every second byte. */
NOINLINE static void feed(void)
{
	for (int i = 0; i < 20; i++) {
		usleep(50000);
		if (write(feed_pipe[1], "x", 1) != 1)
			exit(3);
		if (i & 1) {
			pthread_mutex_lock(&lock);
			ticks++;
			pthread_cond_signal(&cond);
			pthread_mutex_unlock(&lock);
		}
	}
}

#define BIG (4u << 20)

NOINLINE static void big_write(struct result *r)
{
	char *buf = calloc(1, BIG);
	uint64_t t = ns(CLOCK_MONOTONIC);

	if (!buf || write(big_pipe[1], buf, BIG) != (ssize_t)BIG)
		exit(3);
	r->blocked_ns = ns(CLOCK_MONOTONIC) - t;
	free(buf);
}

/* Empties the pipe a page at a time, spinning a little in between so
 * that it rarely blocks itself. */
NOINLINE static void drain(void)
{
	static char page[4096];
	size_t got = 0;

	while (got < BIG) {
		ssize_t n = read(big_pipe[0], page, sizeof(page));
		uint64_t t = ns(CLOCK_MONOTONIC);

		if (n <= 0)
			exit(3);
		got += (size_t)n;
		while (ns(CLOCK_MONOTONIC) - t < 100000)
			;
	}
}

static void *th_nap(void *a)
{
	begin(a, "nap");
	nap(a);
	end(a);
	return NULL;
}

static void *th_pipe(void *a)
{
	begin(a, "wait_pipe");
	wait_pipe(a);
	end(a);
	return NULL;
}

static void *th_cond(void *a)
{
	begin(a, "wait_cond");
	wait_cond(a);
	end(a);
	return NULL;
}

static void *th_spin(void *a)
{
	begin(a, "spin");
	spin();
	end(a);
	return NULL;
}

static void *th_feed(void *a)
{
	begin(a, "feed");
	feed();
	end(a);
	return NULL;
}

static void *th_big(void *a)
{
	begin(a, "big_write");
	big_write(a);
	end(a);
	return NULL;
}

static void *th_drain(void *a)
{
	begin(a, "drain");
	drain();
	end(a);
	return NULL;
}

#define UFFD_PAGES 10
#define REMAP_SIZE (64u << 20)
#define LOCK_PAGES 2048

NOINLINE static int touch(const char *p)
{
	return *(const volatile char *)p;
}

/* 5 ms of the thread's CPU time in user space: the recorder's CPU-clock
 * samples (one a ms of it) fall here, each its own kernel entry with its
 * own user unwind, so that a fault's entry is over before the next fault
 * blocks.  A fault block whose switch-in the recorder did not see then
 * reaches it after that entry's end (run-offcpu-bpf.sh "switch-ins
 * missed": without this, under load, every fault came right after the
 * last and no such block was late, 2 Dec 2026). */
NOINLINE static void user_time(void)
{
	uint64_t end = ns(CLOCK_THREAD_CPUTIME_ID) + 5000000;

	do {
		for (int i = 0; i < 20000; i++)
			sink += (uint64_t)i;
	} while (ns(CLOCK_THREAD_CPUTIME_ID) < end);
}

/* Page faults held by the userfaultfd handler: blocks inside an
 * exception entered from user mode, with user time between them. */
NOINLINE static void fault_wait(struct result *r)
{
	int s = 0;

	for (int i = 0; i < UFFD_PAGES; i++) {
		uint64_t t = ns(CLOCK_MONOTONIC);

		s += touch(uffd_area + (size_t)i * 4096);
		r->blocked_ns += ns(CLOCK_MONOTONIC) - t;
		user_time();
	}
	sink = (uint64_t)s;
}

/* Fresh pages of the VMA remap() changes: a fault finds the VMA locked
 * and waits for the mmap lock (lock_mm_and_find_vma). */
NOINLINE static void fault_lock(void)
{
	int s = 0;

	for (size_t i = 0; i < LOCK_PAGES; i++)
		s += touch(remap_area + REMAP_SIZE + i * 4096);
	sink = (uint64_t)s;
}

/* Each fault of uffd_area resolved 20 ms after it came. */
NOINLINE static void uffd_serve(void)
{
	static char page[4096];

	for (int served = 0; served < UFFD_PAGES;) {
		struct pollfd pfd = { .fd = uffd, .events = POLLIN };
		struct uffd_msg m;
		struct uffdio_copy c;

		if (poll(&pfd, 1, 5000) != 1 || read(uffd, &m, sizeof(m)) != sizeof(m))
			exit(4);
		if (m.event != UFFD_EVENT_PAGEFAULT)
			continue;
		usleep(20000);
		memset(page, served, sizeof(page));
		c.dst = m.arg.pagefault.address & ~4095ULL;
		c.src = (uint64_t)(uintptr_t)page;
		c.len = 4096;
		c.mode = 0;
		c.copy = 0;
		if (ioctl(uffd, UFFDIO_COPY, &c))
			exit(4);
		served++;
	}
}

/* The mmap lock write-held most of the time. */
NOINLINE static void remap(void)
{
	while (!faults_done) {
		mprotect(remap_area, 2 * (size_t)REMAP_SIZE, PROT_READ);
		mprotect(remap_area, 2 * (size_t)REMAP_SIZE, PROT_READ | PROT_WRITE);
	}
}

static void *th_fault(void *a)
{
	begin(a, "fault_wait");
	fault_wait(a);
	fault_lock();
	faults_done = 1;
	end(a);
	return NULL;
}

static void *th_uffd(void *a)
{
	begin(a, "uffd_serve");
	uffd_serve();
	end(a);
	return NULL;
}

static void *th_remap(void *a)
{
	begin(a, "remap");
	remap();
	end(a);
	return NULL;
}

/* userfaultfd on a fresh region; remap()'s region, its first half
 * populated (each mprotect then walks 16k page table entries). */
static int fault_setup(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		return -1;
	uffd_area = mmap(NULL, UFFD_PAGES * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	remap_area = mmap(NULL, 2 * (size_t)REMAP_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (uffd_area == MAP_FAILED || remap_area == MAP_FAILED)
		return -1;
	memset(remap_area, 1, REMAP_SIZE);
	reg.range.start = (uint64_t)(uintptr_t)uffd_area;
	reg.range.len = UFFD_PAGES * 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	return ioctl(uffd, UFFDIO_REGISTER, &reg) ? -1 : 0;
}

NOINLINE static void linger(const char *file)
{
	while (access(file, F_OK))
		usleep(10000);
}

int main(int argc, char **argv)
{
	void *(*fns[8])(void *);
	pthread_t th[8];
	int n = 0, i;

	if (argc > 2 && !strcmp(argv[1], "start"))
		linger(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "fault")) {
		if (fault_setup()) {
			perror("offcpu-work: userfaultfd");
			return 4;
		}
		fns[n++] = th_uffd;
		fns[n++] = th_remap;
		fns[n++] = th_fault;
	} else if (argc > 1 && !strcmp(argv[1], "bigwrite")) {
		/* one page: every page written fills it */
		if (pipe(big_pipe) || fcntl(big_pipe[1], F_SETPIPE_SZ, 4096) < 0)
			return 2;
		/* The writer last: creating a thread links it into glibc's
		 * list of stacks, which writes into the previous thread's
		 * descriptor (the top of its stack: see main's joins). */
		fns[n++] = th_drain;
		fns[n++] = th_big;
	} else {
		if (pipe(feed_pipe))
			return 2;
		fns[n++] = th_nap;
		fns[n++] = th_pipe;
		fns[n++] = th_cond;
		fns[n++] = th_spin;
		fns[n++] = th_feed;
	}
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, fns[i], &results[i]))
			return 2;
	/* Last first: pthread_join writes into the joined thread's
	 * descriptor, at the top of its stack, which the recorder compares
	 * to tell kernel entries apart (docs/record.md). */
	for (i = n; i-- > 0;)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++)
		printf("thread %s tid=%d blocked_ns=%llu wall_ns=%llu "
		       "cpu_ns=%llu stolen_ns=%llu\n", results[i].name,
		       (int)results[i].tid,
		       (unsigned long long)results[i].blocked_ns,
		       (unsigned long long)results[i].wall_ns,
		       (unsigned long long)results[i].cpu_ns,
		       (unsigned long long)results[i].stolen_ns);
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[1], "linger"))
		linger(argv[2]);
	return 0;
}
