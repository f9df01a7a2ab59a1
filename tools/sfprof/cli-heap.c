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
#include <stdlib.h>
#include <sys/stat.h>

#include "cli.h"
#include "common/prefault.h"

void cli_batch_heap(void)
{
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLI_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CLI_ASAN 1
#endif

/*
 * The heap such a command will grow into, faulted in at once
 * (common/prefault.h).  A page populated by one
 * madvise(MADV_POPULATE_WRITE) costs ~0.5 us there and
 * ~4 us at its first touch, against ~10 us faulted on first touch; the
 * heap of a report grows to 1.8 MB on a 2.6 MB file, 3.2 MB on a 25 MB
 * one and 3.9 MB on a 257 MB one, so the guess is 1 MiB and an eighth of
 * the input, at most 6 MiB (a page populated and never used costs its
 * 0.5 us).  The block is freed at once: with the trim threshold above
 * it stays the top of the heap, where the next allocations come from.
 */
void cli_batch_heap_for(const char *input)
{
	struct stat st;
	size_t want;
	char *p;

	if (!input || stat(input, &st) || !S_ISREG(st.st_mode))
		return;
	want = (1u << 20) + (size_t)st.st_size / 8;
	if (want > (6u << 20))
		want = 6u << 20;
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
