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

#include "cli.h"

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

bool cli_free_at_exit(void)
{
#ifdef CLI_ASAN
	return true;
#else
	return false;
#endif
}
