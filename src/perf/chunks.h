/* SPDX-License-Identifier: MIT */
/*
 * The reader's buffers for a file's data section: read with pread() a
 * chunk at a time into buffers that are used again once no record in
 * them is still wanted.
 *
 * Mapped, every page of the file is a first touch for the process: in a
 * guest whose page tables the host shadows (PVM here, the CI's kind)
 * that cost 0.7-1.7 us a page even after MADV_POPULATE_READ, a tenth of
 * a report of a 26 MB system-wide file.  pread() copies through memory
 * the kernel has mapped already into a few buffers that stay mapped, at
 * 0.3-0.6 us a page (256 KiB chunks were the fastest of 64 KiB to
 * 2 MiB).
 *
 * The buffers are cut from huge pages (common/prefault.h): fresh small
 * pages cost 5-10 us each at first touch here, and a report's queue spans
 * ~1 MiB of buffers; where the kernel has no huge pages to give, each
 * buffer is populated when it is first taken.
 *
 * A record the time queue holds keeps its chunk: the queue's slot counts
 * a reference (sfp_chunks_ref() at queueing, sfp_chunks_unref() once the
 * record has been delivered and let go).  A record that does not fit in
 * what is left of the current chunk starts the next one: its first bytes
 * are carried over, the rest read after them.
 */
#ifndef SFP_PERF_CHUNKS_H
#define SFP_PERF_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

#define SFP_CHUNK_SIZE (256u << 10)
#define SFP_CHUNKS_MAX 65535u	/* ids are u16, 0 meaning none */

struct sfp_chunk;

struct sfp_chunks {
	int fd;			/* ours (a dup), -1: not in use */
	uint64_t end;		/* file offset past the last byte to read */
	struct sfp_chunk **all;	/* by id - 1 */
	size_t nr;
	struct sfp_chunk *cur;	/* the one read into last */
	struct sfp_chunk *free;	/* not current and unreferenced */
	uint8_t **slabs;	/* huge pages the buffers are cut from */
	size_t nslabs, slab_used;	/* buffers cut from the last one */
};

/* Read fd (duplicated; the caller keeps its own) up to offset end. */
SFP_HIDDEN int sfp_chunks_init(struct sfp_chunks *cs, int fd, uint64_t end);
SFP_HIDDEN void sfp_chunks_fini(struct sfp_chunks *cs);

/*
 * Bytes [off, off + len) of the file (len <= SFP_CHUNK_SIZE / 2, off +
 * len <= end), in the current chunk, which becomes the next one if need
 * be.  Valid until the next call, or while referenced.  Return: NULL
 * with *err -errno (a read error), -EBADMSG (the file is shorter than it
 * was) or -ENOMEM.
 */
SFP_HIDDEN const uint8_t *sfp_chunks_get(struct sfp_chunks *cs, uint64_t off,
					 size_t len, int *err);
/* Keep the current chunk for a record in it: its id, 0 when out of ids. */
SFP_HIDDEN uint16_t sfp_chunks_ref(struct sfp_chunks *cs);
SFP_HIDDEN void sfp_chunks_unref(struct sfp_chunks *cs, uint16_t id);

#endif
