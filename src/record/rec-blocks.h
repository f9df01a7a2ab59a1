/* SPDX-License-Identifier: MIT */
/*
 * The record queue's bytes: records copied out of the rings live in
 * blocks mapped for them alone, and a block goes back to the kernel as
 * soon as the last record in it has been delivered.
 *
 * Why not malloc: the queue's records are 16 KiB stack copies next to
 * 40-byte MMAP2 records, made by the reader thread and freed by the
 * thread that delivers them.  In the reader's malloc arena a burst (twenty
 * containers starting at once) left 300 KB resident after the queue had
 * drained -- free space the arena keeps at its top or in pages that one
 * small live record pins.  Records leave the queue in time order, nearly
 * the order they came in, so a block empties soon after it is filled and
 * the queue's resident memory follows what it holds.
 *
 * One producer (the caller holds the queue's lock around rec_blocks_alloc),
 * any number of threads putting records back.
 */
#ifndef SFP_RECORD_REC_BLOCKS_H
#define SFP_RECORD_REC_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "common/internal.h"

/* A block's size: any perf record (at most 64 KiB: its size is a u16)
 * fits in an empty one. */
#define REC_BLOCK_SIZE (128u * 1024)

struct rec_block;

/*
 * Emptied blocks kept for the next records: a block mapped anew costs a
 * page fault per page as it fills (32 of them, ~10 us each in a guest
 * whose page tables the host shadows).  With one spare, `sfprof record`
 * at 1 kHz mapped 16-27 blocks in 0.6 s as its queue moved between two
 * and four blocks, and took 20 % more CPU than with malloc.
 */
#define REC_BLOCKS_SPARE 4
#define REC_BLOCKS_SPARE_MAX 8

struct rec_blocks {
	struct rec_block *cur;	/* being filled; NULL before the first */
	struct rec_block *spare[REC_BLOCKS_SPARE_MAX];	/* emptied, kept */
	unsigned int nspare;	/* slots in use: 0 means REC_BLOCKS_SPARE */
	uint64_t mapped;	/* blocks mapped over the queue's life */
	uint64_t live;		/* blocks mapped now (cur, spare, full ones) */
};

/* size bytes, 8-aligned, and the block they are in (for rec_blocks_put);
 * NULL when no block can be mapped (errno from mmap). */
SFP_HIDDEN void *rec_blocks_alloc(struct rec_blocks *rb, size_t size,
				  struct rec_block **blk);
/* One record of blk delivered: the block is given back when it was its
 * last and the block is not the one being filled. */
SFP_HIDDEN void rec_blocks_put(struct rec_blocks *rb, struct rec_block *blk);
/* Unmap the spare blocks, and the block being filled when nothing in it
 * waits (the caller holds the queue's lock): an idle queue keeps no
 * pages. */
SFP_HIDDEN void rec_blocks_trim(struct rec_blocks *rb);
/* Everything unmapped; no record may be put back after this. */
SFP_HIDDEN void rec_blocks_fini(struct rec_blocks *rb);

#endif
