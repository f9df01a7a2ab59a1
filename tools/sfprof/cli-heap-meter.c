// SPDX-License-Identifier: MIT
/*
 * What a thread holds of the heap: the net bytes it has allocated, for
 * `symbolize --listen`'s budget of symbol tables (src/symbolize/store.c).
 *
 * A table's memory is mostly not sfprof's own: three quarters of it is
 * libdw's (its line tables and abbreviation caches, in pools it grows as
 * lookups reach new compile units), which no interface reports.  The CLI
 * links libdw, libelf and the compressors statically, so the linker can
 * route every allocation call made by those objects and by libsfprof
 * through the wrappers below (-Wl,--wrap=malloc,...; the Makefile adds
 * the options where it defines CLI_HEAP_METER).  Each wrapper counts the
 * block's usable size on the calling thread and calls the real function,
 * which is still the dynamic symbol: AddressSanitizer and heaptrack see
 * every allocation as before.  The store reads the count before and
 * after work that only one table does on that thread (its load, a
 * lookup under its lock), and charges the difference to that table.
 *
 * What the count cannot see: blocks that libc allocates itself and the
 * caller frees (getline, asprintf, realpath): their free is subtracted
 * without their allocation having been added.  Inside a table's load
 * the only ones are the temporary names of cache files written
 * (common/outfile.c's asprintf, tens of bytes a file): that table is
 * charged as much less, never another table more.  Without the static
 * libraries (the cross build) libdw's calls would not be seen at all, so
 * there is no meter and the store counts files' sizes only.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifdef CLI_HEAP_METER

void *__real_malloc(size_t n);
void *__real_calloc(size_t nmemb, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_reallocarray(void *p, size_t nmemb, size_t n);
void __real_free(void *p);
int __real_posix_memalign(void **out, size_t align, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void *__real_memalign(size_t align, size_t n);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t nmemb, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_reallocarray(void *p, size_t nmemb, size_t n);
void __wrap_free(void *p);
int __wrap_posix_memalign(void **out, size_t align, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
void *__wrap_memalign(size_t align, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t max);

static __thread int64_t thread_net;

static void *took(void *p)
{
	if (p)
		thread_net += (int64_t)malloc_usable_size(p);
	return p;
}

void *__wrap_malloc(size_t n)
{
	return took(__real_malloc(n));
}

void *__wrap_calloc(size_t nmemb, size_t n)
{
	return took(__real_calloc(nmemb, n));
}

void *__wrap_realloc(void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;
	void *q = __real_realloc(p, n);

	/* a failed realloc leaves p as it was; realloc(p, 0) frees p */
	if (q || !n)
		thread_net -= (int64_t)old;
	return took(q);
}

void *__wrap_reallocarray(void *p, size_t nmemb, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;
	void *q = __real_reallocarray(p, nmemb, n);

	/* as realloc: a size of 0 frees p (an overflow leaves it) */
	if (q || !nmemb || !n)
		thread_net -= (int64_t)old;
	return took(q);
}

void __wrap_free(void *p)
{
	if (p)
		thread_net -= (int64_t)malloc_usable_size(p);
	__real_free(p);
}

int __wrap_posix_memalign(void **out, size_t align, size_t n)
{
	int err = __real_posix_memalign(out, align, n);

	if (!err)
		took(*out);
	return err;
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	return took(__real_aligned_alloc(align, n));
}

void *__wrap_memalign(size_t align, size_t n)
{
	return took(__real_memalign(align, n));
}

/* libc's own strdup() allocates inside libc, out of the wrappers' sight,
 * while the copy is freed through them: copied here instead. */
char *__wrap_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = __wrap_malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

char *__wrap_strndup(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *p = __wrap_malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static int64_t thread_heap(void)
{
	return thread_net;
}

cli_heap_fn cli_heap_meter(void)
{
	return thread_heap;
}

#else

cli_heap_fn cli_heap_meter(void)
{
	return NULL;
}

#endif
