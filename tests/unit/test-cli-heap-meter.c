// SPDX-License-Identifier: MIT
/*
 * The CLI's heap meter (tools/sfprof/cli-heap-meter.c): each thread's net
 * allocations, counted by the linker-routed wrappers, including those of
 * the libraries linked in (libelf here, as libdw in a symbol table).
 * Linked as the CLI is (the wrappers and the static libraries), where
 * the build has them; where it does not, there must be no meter.
 */
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "test.h"

TEST(cli_heap_meter_built_as_the_cli)
{
#ifdef CLI_HEAP_METER
	ASSERT_NOT_NULL(cli_heap_meter());
#else
	/* libraries linked shared: libdw's allocations would go unseen, so
	 * the store must not be told it has a measure */
	ASSERT_TRUE(cli_heap_meter() == NULL);
#endif
}

#ifdef CLI_HEAP_METER
/* where the blocks are kept, so that the compiler cannot pair a malloc
 * with its free and drop both */
static void *volatile held[4];

static int64_t now(void)
{
	return cli_heap_meter()();
}

TEST(cli_heap_meter_counts_and_uncounts)
{
	int64_t m = now();
	char *s;

	held[0] = malloc(1u << 20);
	ASSERT_GE(now() - m, 1 << 20);
	ASSERT_TRUE(now() - m < (1 << 20) + 4096);
	held[1] = calloc(1000, 10);
	ASSERT_GE(now() - m, (1 << 20) + 10000);
	/* a realloc moves the count from the old size to the new one */
	held[1] = realloc(held[1], 200000);
	ASSERT_GE(now() - m, (1 << 20) + 200000);
	ASSERT_TRUE(now() - m < (1 << 20) + 200000 + 8192);
	s = strdup("a string the libc would have copied unseen");
	ASSERT_GE(now() - m, (1 << 20) + 200000 + 43);
	held[2] = s;
	ASSERT_OK(posix_memalign((void **)&held[3], 4096, 8192));
	ASSERT_GE(now() - m, (1 << 20) + 200000 + 43 + 8192);
	free(held[0]);
	free(held[1]);
	free(held[2]);
	free(held[3]);
	ASSERT_EQ(now() - m, 0);
	held[0] = strndup("abcdef", 3);
	ASSERT_GE(now() - m, 4);
	ASSERT_STREQ((char *)held[0], "abc");
	free(held[0]);
	ASSERT_EQ(now() - m, 0);
}

static void *other_thread(void *arg)
{
	int64_t m = now();

	(void)arg;
	held[0] = malloc(4u << 20);
	return (void *)(intptr_t)(now() - m >= (4 << 20));
}

/* Another thread's allocations are its own: a table's load on one
 * thread is not charged what a request decodes on another. */
TEST(cli_heap_meter_per_thread)
{
	int64_t m = now();
	pthread_t t;
	void *ok = NULL;

	ASSERT_EQ(pthread_create(&t, NULL, other_thread, NULL), 0);
	ASSERT_EQ(pthread_join(t, &ok), 0);
	ASSERT_TRUE(ok != NULL);
	ASSERT_EQ(now() - m, 0);
	/* freed here: this thread's count goes down by what it never took
	 * (the difference the store clamps at zero) */
	free(held[0]);
	ASSERT_TRUE(now() - m <= -(4 << 20));
}

/* libelf, linked in as the CLI links it: its allocations are counted. */
TEST(cli_heap_meter_sees_static_libraries)
{
	static unsigned char image[sizeof(Elf64_Ehdr)];
	Elf64_Ehdr *h = (Elf64_Ehdr *)image;
	int64_t m;
	Elf *e;

	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_EXEC;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(*h);
	elf_version(EV_CURRENT);
	m = now();
	e = elf_memory((char *)image, sizeof(image));
	if (!ASSERT_NOT_NULL(e))
		return;
	ASSERT_GE(now() - m, 64);
	elf_end(e);
	ASSERT_EQ(now() - m, 0);
}
#endif
