// SPDX-License-Identifier: MIT
/*
 * The record queue's blocks (src/record/rec-blocks.c): every record gets
 * its own 8-aligned bytes, a block is unmapped once its records are all
 * put back and it is no longer filled, at most one emptied block is kept,
 * and a producer and a consumer on two threads end with nothing mapped.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "record/rec-blocks.h"
#include "test.h"

struct held {
	uint8_t *p;
	size_t size;
	struct rec_block *blk;
	uint8_t fill;
};

static bool intact(const struct held *h)
{
	for (size_t i = 0; i < h->size; i++)
		if (h->p[i] != h->fill)
			return false;
	return true;
}

/* Sizes as a queue sees them: stack samples of a few KiB beside small
 * side-band records, now and then one of the largest. */
static size_t rec_size(unsigned int i)
{
	static const size_t sizes[] = { 40, 64, 2104, 120, 16440, 8, 65528,
					 3000, 48 };

	return sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
}

TEST(rec_blocks_records_apart_and_given_back)
{
	enum { N = 600 };
	struct rec_blocks rb = { 0 };
	struct held *h = calloc(N, sizeof(*h));
	unsigned int i, bad = 0;

	if (!ASSERT_NOT_NULL(h))
		return;
	for (i = 0; i < N; i++) {
		h[i].size = rec_size(i);
		h[i].fill = (uint8_t)(i * 37 + 1);
		h[i].p = rec_blocks_alloc(&rb, h[i].size, &h[i].blk);
		if (!ASSERT_NOT_NULL(h[i].p))
			goto out;
		ASSERT_EQ((uintptr_t)h[i].p % 8, 0);
		memset(h[i].p, h[i].fill, h[i].size);
	}
	for (i = 0; i < N; i++)
		bad += !intact(&h[i]);
	ASSERT_EQ(bad, 0);
	/* ~4.1 MB of records in 128 KiB blocks, none split */
	ASSERT_GE(rb.live, 30);
	ASSERT_EQ(rb.live, rb.mapped);
	/* put back out of order (odd ones first): blocks go as they empty */
	for (i = 1; i < N; i += 2)
		rec_blocks_put(&rb, h[i].blk);
	for (i = 0; i < N; i += 2)
		rec_blocks_put(&rb, h[i].blk);
	/* what is left: the block being filled and the spares */
	ASSERT_GE(1 + REC_BLOCKS_SPARE, rb.live);
	rec_blocks_trim(&rb);
	ASSERT_EQ(rb.live, 0);
	/* and a new record after the trim maps a fresh block */
	ASSERT_NOT_NULL(rec_blocks_alloc(&rb, 100, &h[0].blk));
	ASSERT_EQ(rb.live, 1);
	rec_blocks_put(&rb, h[0].blk);
out:
	rec_blocks_fini(&rb);
	ASSERT_EQ(rb.live, 0);
	free(h);
}

TEST(rec_blocks_queue_follows_what_it_holds)
{
	/* A FIFO of 64 records of 16 KiB: 10 blocks hold them (7 a
	 * block), so never more than that + the spares mapped, however many
	 * pass through. */
	enum { DEPTH = 64, TOTAL = 20000 };
	struct rec_blocks rb = { 0 };
	struct held q[DEPTH];
	uint64_t most = 0;
	unsigned int i, bad = 0;

	for (i = 0; i < TOTAL; i++) {
		struct held *h = &q[i % DEPTH];

		if (i >= DEPTH) {
			bad += !intact(h);
			rec_blocks_put(&rb, h->blk);
		}
		h->size = 16384;
		h->fill = (uint8_t)i;
		h->p = rec_blocks_alloc(&rb, h->size, &h->blk);
		if (!ASSERT_NOT_NULL(h->p))
			break;
		memset(h->p, h->fill, h->size);
		most = rb.live > most ? rb.live : most;
	}
	ASSERT_EQ(bad, 0);
	ASSERT_GE(10 + REC_BLOCKS_SPARE, most);
	ASSERT_GE(rb.mapped, 2);
	for (i = 0; i < DEPTH; i++)
		rec_blocks_put(&rb, q[i].blk);
	rec_blocks_fini(&rb);
	ASSERT_EQ(rb.live, 0);
}

TEST(rec_blocks_reused_while_the_queue_swings)
{
	/* The queue between 8 and 28 records of 16 KiB (2 to 4 blocks),
	 * 200 times: the emptied blocks are filled again, not mapped anew
	 * (a fresh block faults in each page as it fills). */
	enum { HI = 28, LO = 8, CYCLES = 200 };
	struct rec_blocks rb = { 0 };
	struct held q[HI];
	unsigned int head = 0, tail = 0, c, bad = 0;

	for (c = 0; c < CYCLES; c++) {
		while (head - tail < HI) {
			struct held *h = &q[head % HI];

			h->size = 16384;
			h->fill = (uint8_t)head;
			h->p = rec_blocks_alloc(&rb, h->size, &h->blk);
			if (!ASSERT_NOT_NULL(h->p))
				goto out;
			memset(h->p, h->fill, h->size);
			head++;
		}
		while (head - tail > LO) {
			struct held *h = &q[tail % HI];

			bad += !intact(h);
			rec_blocks_put(&rb, h->blk);
			tail++;
		}
	}
	ASSERT_EQ(bad, 0);
	ASSERT_GE(4 + 1 + REC_BLOCKS_SPARE, rb.mapped);
out:
	while (tail != head)
		rec_blocks_put(&rb, q[tail++ % HI].blk);
	rec_blocks_fini(&rb);
	ASSERT_EQ(rb.live, 0);
}

/* A queue that keeps one spare (the agent's): at most the block being
 * filled and one spare stay mapped once the records are delivered. */
TEST(rec_blocks_one_spare)
{
	struct rec_blocks rb = { .nspare = 1 };
	struct rec_block *blk[40];
	unsigned int i;

	for (i = 0; i < 40; i++)
		if (!ASSERT_NOT_NULL(rec_blocks_alloc(&rb, 16384, &blk[i])))
			goto out;
	ASSERT_GE(rb.live, 5);
	for (i = 0; i < 40; i++)
		rec_blocks_put(&rb, blk[i]);
	ASSERT_GE(2, rb.live);
out:
	rec_blocks_fini(&rb);
	ASSERT_EQ(rb.live, 0);
}

TEST(rec_blocks_refuses_what_no_block_holds)
{
	struct rec_blocks rb = { 0 };
	struct rec_block *blk;

	errno = 0;
	ASSERT_TRUE(rec_blocks_alloc(&rb, REC_BLOCK_SIZE, &blk) == NULL);
	ASSERT_EQ(errno, EMSGSIZE);
	ASSERT_EQ(rb.live, 0);
	rec_blocks_fini(&rb);
}

/* Two threads, as in the agent: the reader allocates under the queue's
 * lock, the main thread puts records back without it. */
struct pc {
	struct rec_blocks rb;
	pthread_mutex_t lock;
	struct held ring[256];
	unsigned int head, tail;	/* under lock */
	unsigned int total, bad;
	bool done;
};

static void *consumer(void *arg)
{
	struct pc *c = arg;
	unsigned int got = 0;

	while (got < c->total) {
		struct held h;
		bool have = false;

		pthread_mutex_lock(&c->lock);
		if (c->tail != c->head) {
			h = c->ring[c->tail % 256];
			c->tail++;
			have = true;
		}
		pthread_mutex_unlock(&c->lock);
		if (!have)
			continue;
		c->bad += !intact(&h);
		rec_blocks_put(&c->rb, h.blk);	/* without the lock */
		got++;
	}
	return NULL;
}

TEST(rec_blocks_two_threads)
{
	struct pc *c = calloc(1, sizeof(*c));
	pthread_t t;
	unsigned int i = 0;

	if (!ASSERT_NOT_NULL(c))
		return;
	pthread_mutex_init(&c->lock, NULL);
	c->total = 50000;
	if (!ASSERT_OK(pthread_create(&t, NULL, consumer, c)))
		goto out;
	while (i < c->total) {
		struct held h;

		pthread_mutex_lock(&c->lock);
		if (c->head - c->tail < 256) {
			h.size = rec_size(i);
			h.fill = (uint8_t)(i * 13);
			h.p = rec_blocks_alloc(&c->rb, h.size, &h.blk);
			if (h.p) {
				memset(h.p, h.fill, h.size);
				c->ring[c->head % 256] = h;
				c->head++;
				i++;
			}
		}
		pthread_mutex_unlock(&c->lock);
	}
	pthread_join(t, NULL);
	ASSERT_EQ(c->bad, 0);
	pthread_mutex_lock(&c->lock);
	rec_blocks_trim(&c->rb);
	pthread_mutex_unlock(&c->lock);
	ASSERT_EQ(c->rb.live, 0);
out:
	rec_blocks_fini(&c->rb);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
