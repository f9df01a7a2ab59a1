// SPDX-License-Identifier: MIT
/*
 * The record queue's blocks (rec-blocks.h): a bump pointer in the block
 * being filled, a count of the records still queued in each block, the
 * block unmapped when its count reaches zero.
 *
 * The block being filled holds one count of its own, dropped when the
 * producer moves to a new block, so that "the last record delivered" and
 * "no longer filled" are one event whichever thread sees it, without a
 * lock: a count that reaches zero can only be the last hand on the block.
 */
#include <errno.h>
#include <sys/mman.h>

#include "record/rec-blocks.h"

struct rec_block {
	uint32_t refs;		/* records queued here, +1 while cur */
	uint32_t used;		/* bytes handed out, this header included */
	uint64_t pad;		/* records start 8-aligned, 16 in */
};

_Static_assert(sizeof(struct rec_block) % 8 == 0, "records 8-aligned");

static void block_unmap(struct rec_blocks *rb, struct rec_block *b)
{
	munmap(b, REC_BLOCK_SIZE);
	__atomic_sub_fetch(&rb->live, 1, __ATOMIC_RELAXED);
}

static unsigned int spare_slots(const struct rec_blocks *rb)
{
	if (!rb->nspare)
		return REC_BLOCKS_SPARE;
	return rb->nspare < REC_BLOCKS_SPARE_MAX ? rb->nspare
						 : REC_BLOCKS_SPARE_MAX;
}

/* An emptied block: kept in a free spare slot (its pages stay, no fault
 * when it is filled again), else unmapped.  Each slot is one pointer
 * swapped whole, so a putting thread and the producer need no lock. */
static void block_release(struct rec_blocks *rb, struct rec_block *b)
{
	unsigned int i, n = spare_slots(rb);
	struct rec_block *none;

	for (i = 0; i < n; i++) {
		none = NULL;
		if (__atomic_compare_exchange_n(&rb->spare[i], &none, b, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return;
	}
	block_unmap(rb, b);
}

static struct rec_block *spare_take(struct rec_blocks *rb)
{
	struct rec_block *b;

	for (int i = 0; i < REC_BLOCKS_SPARE_MAX; i++) {
		b = __atomic_exchange_n(&rb->spare[i], NULL, __ATOMIC_ACQ_REL);
		if (b)
			return b;
	}
	return NULL;
}

void rec_blocks_put(struct rec_blocks *rb, struct rec_block *blk)
{
	if (__atomic_sub_fetch(&blk->refs, 1, __ATOMIC_ACQ_REL) == 0)
		block_release(rb, blk);
}

static struct rec_block *block_get(struct rec_blocks *rb)
{
	struct rec_block *b;
	void *m;

	b = spare_take(rb);
	if (!b) {
		m = mmap(NULL, REC_BLOCK_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		b = m;
		rb->mapped++;
		__atomic_add_fetch(&rb->live, 1, __ATOMIC_RELAXED);
	}
	b->refs = 1;
	b->used = sizeof(*b);
	return b;
}

void *rec_blocks_alloc(struct rec_blocks *rb, size_t size,
		       struct rec_block **blk)
{
	struct rec_block *b = rb->cur;
	size_t need = (size + 7) & ~(size_t)7;
	void *p;

	if (need > REC_BLOCK_SIZE - sizeof(*b)) {
		errno = EMSGSIZE;
		return NULL;
	}
	if (!b || need > REC_BLOCK_SIZE - b->used) {
		/* the full block first: if its records are all delivered,
		 * it is the spare block_get() takes, no new mapping */
		if (b)
			rec_blocks_put(rb, b);
		rb->cur = b = block_get(rb);
		if (!b)
			return NULL;
	}
	p = (uint8_t *)b + b->used;
	b->used += (uint32_t)need;
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
	*blk = b;
	return p;
}

void rec_blocks_trim(struct rec_blocks *rb)
{
	struct rec_block *b;

	/* The block being filled, when nothing in it is queued: its next
	 * record starts a new one. */
	if (rb->cur && __atomic_load_n(&rb->cur->refs, __ATOMIC_ACQUIRE) == 1) {
		b = rb->cur;
		rb->cur = NULL;
		rec_blocks_put(rb, b);	/* the last reference: a spare */
	}
	while ((b = spare_take(rb)))
		block_unmap(rb, b);
}

void rec_blocks_fini(struct rec_blocks *rb)
{
	if (rb->cur) {
		rec_blocks_put(rb, rb->cur);
		rb->cur = NULL;
	}
	rec_blocks_trim(rb);
}
