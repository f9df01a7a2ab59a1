/* SPDX-License-Identifier: MIT */
/*
 * The reader's time-ordered queue: records wait here until perf's
 * FINISHED_ROUND says nothing older can still come, then leave in
 * (time, arrival) order.
 *
 * perf writes a round as one CPU buffer after another, each already in
 * time order, so what arrives is a few sorted runs.  The queue keeps the
 * slots in arrival order in one array, cut into those runs, and merges
 * the runs' heads with a small heap.  A record that continues the newest
 * run is appended; a pop reads the next slot of one run.  Neither
 * touches anything but the array's two moving ends and a heap of a few
 * runs, where a heap of records made every pop sift through levels of
 * cold memory (half of a report of a 3M-sample file).  Input in no
 * order at all degrades to a run a record: a heap of records again.
 */
#ifndef SFP_PERF_TIME_QUEUE_H
#define SFP_PERF_TIME_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sfp_tq_slot {
	uint64_t time;
	uint64_t seq;		/* arrival number: the tie-break */
	uint64_t off;		/* file offset, for messages and windows */
	const uint8_t *rec;	/* in the mapped file, or an owned copy */
	uint32_t size;
	bool copy;		/* rec is malloc()ed and freed with the slot */
	uint16_t chunk;		/* the owner's buffer rec lies in, 0: none */
	const void *tag;	/* the owner's, handed back with the slot */
};

struct sfp_tq_run {
	size_t head, end;	/* live slots [head, end) */
};

struct sfp_time_queue {
	struct sfp_tq_slot *slots;
	size_t len, cap;	/* slots[0, len) used, live or not */
	struct sfp_tq_run *runs;
	uint32_t *heap;		/* run indices, min-heap on their heads */
	uint32_t *unused;	/* free run indices */
	size_t nheap, nunused, runs_cap;
	int64_t open;		/* the run a record may extend, or -1 */
	size_t count;		/* live slots */
};

void sfp_tq_init(struct sfp_time_queue *q);
/* Frees every copy still queued. */
void sfp_tq_fini(struct sfp_time_queue *q);
/* 0 or -ENOMEM; the slot's seq must exceed every earlier one's. */
int sfp_tq_push(struct sfp_time_queue *q, const struct sfp_tq_slot *s);
/* The oldest slot; NULL when empty.  Valid until the next push or pop.
 * Inline: the reader asks twice a record. */
static inline const struct sfp_tq_slot *
sfp_tq_peek(const struct sfp_time_queue *q)
{
	return q->nheap ? &q->slots[q->runs[q->heap[0]].head] : NULL;
}
/* Removes the oldest slot into *out; false when empty. */
bool sfp_tq_pop(struct sfp_time_queue *q, struct sfp_tq_slot *out);
/* Calls fn on every live slot, in no particular order. */
void sfp_tq_each(const struct sfp_time_queue *q,
		 void (*fn)(const struct sfp_tq_slot *s, void *arg), void *arg);

static inline size_t sfp_tq_count(const struct sfp_time_queue *q)
{
	return q->count;
}

#endif
