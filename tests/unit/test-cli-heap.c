// SPDX-License-Identifier: MIT
/*
 * The batch commands' heap (tools/sfprof/cli-heap.c): where the kernel
 * offers transparent huge pages, what report and script allocate after
 * cli_batch_heap_for() lies in huge pages that are already there.  Read
 * back from /proc/self/smaps, the kernel's own account of the mapping.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "test.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#endif

struct vma_use {
	unsigned long size_kb, rss_kb, huge_kb;
};

/* The smaps figures of the mapping holding addr; false if none does. */
static bool vma_of(const void *addr, struct vma_use *u)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false, found = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, v;
		char perms[5];

		/* "lo-hi perms ..." opens a mapping; "Name: n kB" lines
		 * follow (no field name parses as hex, dash, hex, word) */
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3) {
			if (found)
				break;
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
			found = in;
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "Size: %lu kB", &v) == 1)
			u->size_kb = v;
		else if (sscanf(line, "Rss: %lu kB", &v) == 1)
			u->rss_kb = v;
		else if (sscanf(line, "AnonHugePages: %lu kB", &v) == 1)
			u->huge_kb = v;
	}
	fclose(f);
	return found;
}

/* The kernel hands out transparent huge pages when asked (or always). */
static bool thp_offered(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	char buf[64] = "";
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) && !strstr(buf, "[never]");
	fclose(f);
	return ok;
}

/* A regular file of size bytes (a hole: only its size counts). */
static char *input_of(unsigned long size)
{
	static char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/heap-input", test_tmp_dir());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	return path;
}

TEST(cli_heap_huge_pages)
{
	struct vma_use u = { 0 };
	char *in, *a, *b;

#ifdef TEST_ASAN
	test_skip("AddressSanitizer's allocator: the heap stays small pages");
	return;
#endif
	if (!thp_offered()) {
		test_skip("no transparent huge pages on this kernel");
		return;
	}
	/* 24 MB of input: a guess of 4 MiB, huge pages from 4 to 6 MiB */
	in = input_of(24ul << 20);
	if (!ASSERT_NOT_NULL(in))
		return;
	cli_batch_heap();
	cli_batch_heap_for(in);
	/* the next allocations: in the first huge page, already faulted in,
	 * the whole range present and made of huge pages */
	a = malloc(1u << 20);
	b = malloc(1u << 20);
	if (!ASSERT_NOT_NULL(a) || !ASSERT_NOT_NULL(b))
		goto out;
	ASSERT_EQ((uintptr_t)a & ((2u << 20) - 1), 0);
	if (!ASSERT_TRUE(vma_of(a, &u)))
		goto out;
	ASSERT_GE(u.huge_kb, 4096);
	ASSERT_EQ(u.huge_kb, u.size_kb);
	ASSERT_EQ(u.rss_kb, u.size_kb);
	ASSERT_TRUE(vma_of(b, &u) && u.huge_kb == u.size_kb);
out:
	free(a);
	free(b);
	unlink(in);
}

/* Not a regular file: nothing is reserved, nothing breaks. */
TEST(cli_heap_no_file)
{
	char *p;

	cli_batch_heap_for(NULL);
	cli_batch_heap_for("/dev/null");
	cli_batch_heap_for("/nonexistent/perf.data");
	p = malloc(4096);
	ASSERT_NOT_NULL(p);
	free(p);
}
