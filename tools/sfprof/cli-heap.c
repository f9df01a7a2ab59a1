// SPDX-License-Identifier: MIT
/*
 * The heap of a command that reads a file, prints and exits (report,
 * script, export, flamegraph, convert).
 *
 * glibc gives memory back as soon as it can: the free top of the heap
 * past 128 KiB is trimmed, and blocks from 128 KiB up get mappings of
 * their own that free() unmaps.  A growing table's old copy, a buffer
 * freed after one DSO is read: each comes back to the next allocation
 * as fresh pages, and the first touch of a fresh page is what costs most
 * in a guest whose page tables the host shadows (~10 us a page here, see
 * bench/RESULTS.md, seventh round).  A short-lived command keeps what it
 * frees for its own next allocations instead; its peak is unchanged, the
 * pages are given back at exit.  Not for the agent or record, which run
 * for hours and must return what a quiet spell leaves unused.
 *
 * Nor does such a command free what it holds once its output is out:
 * the symbolizer (script's own, or the profile's with keep_files) maps
 * every DSO it read, and unmapping them one by one took 1.5-2.5 ms of a
 * 45-50 ms report or script here, where the exit's single pass over the
 * address space takes a fraction of that.  Under AddressSanitizer
 * everything is freed, so that its leak check keeps meaning something.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "cli.h"
#include "common/prefault.h"

void cli_batch_heap(void)
{
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
}

/*
 * The heap of a command that runs for days (agent, symbolize --listen).
 * glibc's mmap threshold is dynamic: once a block mapped on its own is
 * freed, blocks up to its size come from the arenas from then on (up to
 * 32 MiB), and the trim threshold doubles with it.  One unwind-table
 * build for a large binary (tens of MB in growing arrays) thus moved
 * every later big buffer into the arenas, which hold the pages after
 * free: the churn bench's agent kept 28-55 MB of arena memory resident
 * (bench/RESULTS.md).  Fixed thresholds keep big transient buffers in
 * mappings of their own, given back by free().  The trim threshold is
 * glibc's first one, 128 KiB: a thread's arena gives its free top back
 * only past it (malloc_trim() does not shrink those), and at 1 MiB the
 * record queue of twenty containers starting at once stayed resident in
 * the reader's arena (7 Dec 2026).
 */
void cli_daemon_heap(void)
{
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	mallopt(M_TRIM_THRESHOLD, 128 << 10);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLI_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CLI_ASAN 1
#endif

/* Huge pages the heap may ask for (not AddressSanitizer's: see
 * cli_batch_heap_for()) */
static bool thp_available(void)
{
#ifdef CLI_ASAN
	return false;
#else
	return sfp_thp_available();
#endif
}

/* held to the exit (a leak checker sees it reachable, not lost) */
static char *heap_filler;

/*
 * [a, e) of block p, just taken from the top of the heap and not yet
 * touched past its first bytes, made huge pages and faulted in; then p
 * cut down in place to a filler of [p, a), which is never touched (no
 * page of it is ever faulted in).  The rest goes back to the top chunk,
 * which now starts at a: the next allocations come from there.  The
 * range is madvised before any of it is touched: a page table already
 * under a huge page's range (the size word glibc writes at the top
 * chunk, say) makes the kernel fault small pages there.  glibc puts a
 * request of n - 8 bytes in a chunk of n (one size word, 16-byte
 * granules), so the next chunk's memory starts n bytes on.
 */
static void huge_top(char *p, uintptr_t a, uintptr_t e)
{
	char *filler;

	(void)madvise((void *)a, (size_t)(e - a), MADV_HUGEPAGE);
	sfp_prefault((void *)a, (size_t)(e - a));
	filler = realloc(p, (size_t)(a - (uintptr_t)p) - 8);
	/* in place, or elsewhere (another allocator): the huge pages are
	 * in the heap either way, the next allocations maybe not there */
	if (filler != p)
		free(filler ? filler : p);
	else
		heap_filler = filler;
}

/*
 * The heap such a command will grow into, faulted in at once.  A page of
 * it costs twice in a guest whose page tables the host shadows (PVM
 * here, the CI's kind): ~10 us faulted at its first touch, or ~0.5 us
 * populated by one madvise(MADV_POPULATE_WRITE) and ~4.4 us at its first
 * touch all the same, when the host fills in its shadow entry.  A 2 MiB
 * huge page is one entry: 4 MiB took 0.1-0.5 ms to populate and 0.02 ms
 * to touch as huge pages, 0.45 and 4.5 ms as small ones.
 *
 * The heap of a report grows to 1.8 MB on a 2.6 MB file, 3.2 MB on a
 * 25 MB one and 3.9 MB on a 257 MB one: the guess is 1 MiB and an eighth
 * of the input, at most 6 MiB.  Where the kernel has transparent huge
 * pages it is rounded out to huge page boundaries (at least one huge
 * page: a small file's heap still passes 1 MB) and the part of the heap
 * below the first boundary is left untouched (huge_top()); otherwise the
 * guess is populated as small pages.  Either way the block is freed at
 * once: with the trim threshold above it stays the top of the heap.
 * Under AddressSanitizer (its own allocator, and a leak check that the
 * filler would fail) only the small pages.
 */
void cli_batch_heap_for(const char *input)
{
	const uintptr_t huge = SFP_HUGE_PAGE;
	struct stat st;
	uintptr_t a, e;
	size_t want;
	char *p;

	if (!input || stat(input, &st) || !S_ISREG(st.st_mode))
		return;
	want = (1u << 20) + (size_t)st.st_size / 8;
	if (want > (6u << 20))
		want = 6u << 20;
	/* (asked first: its FILE must not land between p and the top) */
	if (thp_available()) {
		/* room for a filler, then huge pages up to the boundary past
		 * the guess, and the top chunk's size word past them */
		p = malloc(want + 2 * huge + 4096);
		if (!p)
			return;
		a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
		if (a - (uintptr_t)p < 64)
			a += huge;	/* room for the filler's chunk */
		e = ((uintptr_t)p + want + huge - 1) & ~(huge - 1);
		if (e < a + huge)
			e = a + huge;
		huge_top(p, a, e);
		return;
	}
	p = malloc(want);
	if (!p)
		return;
	sfp_prefault(p, want);
	free(p);
}

bool cli_free_at_exit(void)
{
#ifdef CLI_ASAN
	return true;
#else
	return false;
#endif
}
