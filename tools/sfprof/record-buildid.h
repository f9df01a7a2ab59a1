/* SPDX-License-Identifier: MIT */
/*
 * `sfprof record`'s build-id cache (record-buildid.c): every DSO that the
 * samples hit, and its debug file, copied into perf's build-id cache, so
 * that report (sfprof's and perf's) reads the right bytes after the
 * binary changed or its container is gone.
 */
#ifndef SFP_CLI_RECORD_BUILDID_H
#define SFP_CLI_RECORD_BUILDID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bid_collect;

/* dir NULL: the default cache ($PERF_BUILDID_DIR, ~/.debug); budget:
 * at most this many bytes copied per recording (0: no limit). */
int bid_collect_new(const char *dir, uint64_t budget, struct bid_collect **out);

/*
 * An MMAP2 record with a build-id as written to the file: keep an open
 * file descriptor on the mapped file as its process sees it (container
 * root, map_files, checked by build-id), now, while the process lives;
 * the copy is made at the end from that descriptor.
 */
void bid_collect_mmap2(struct bid_collect *bc, const void *rec, size_t size);

/*
 * The recording at path is complete: copy the DSOs its samples hit (and
 * their debug files) into the cache.  A line on stderr says what was
 * done unless quiet.  Return: 0 or -errno (nothing fatal for the file).
 */
int bid_collect_finish(struct bid_collect *bc, const char *path, bool quiet);

void bid_collect_free(struct bid_collect **bc);

#endif /* SFP_CLI_RECORD_BUILDID_H */
