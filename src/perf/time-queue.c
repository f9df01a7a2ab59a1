// SPDX-License-Identifier: MIT
/*
 * The reader's time-ordered queue: sorted runs in one array, merged by a
 * heap of run heads (see time-queue.h for why).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/prefault.h"
#include "perf/time-queue.h"

static bool slot_less(const struct sfp_tq_slot *a, const struct sfp_tq_slot *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static const struct sfp_tq_slot *head_of(const struct sfp_time_queue *q,
					 uint32_t run)
{
	return &q->slots[q->runs[run].head];
}

static inline bool run_less(const struct sfp_time_queue *q, uint32_t a,
			    uint32_t b)
{
	return slot_less(head_of(q, a), head_of(q, b));
}

static void sift_up(struct sfp_time_queue *q, size_t i)
{
	uint32_t run = q->heap[i];

	while (i && run_less(q, run, q->heap[(i - 1) / 2])) {
		q->heap[i] = q->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->heap[i] = run;
}

static void sift_down(struct sfp_time_queue *q, size_t i)
{
	uint32_t run = q->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= q->nheap)
			break;
		if (c + 1 < q->nheap && run_less(q, q->heap[c + 1], q->heap[c]))
			c++;
		if (!run_less(q, q->heap[c], run))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	q->heap[i] = run;
}

void sfp_tq_init(struct sfp_time_queue *q)
{
	memset(q, 0, sizeof(*q));
	q->open = -1;
}

void sfp_tq_each(const struct sfp_time_queue *q,
		 void (*fn)(const struct sfp_tq_slot *s, void *arg), void *arg)
{
	size_t i, k;

	for (i = 0; i < q->nheap; i++) {
		const struct sfp_tq_run *run = &q->runs[q->heap[i]];

		for (k = run->head; k < run->end; k++)
			fn(&q->slots[k], arg);
	}
}

static void free_copy(const struct sfp_tq_slot *s, void *arg)
{
	(void)arg;
	if (s->copy)
		free((void *)s->rec);
}

void sfp_tq_fini(struct sfp_time_queue *q)
{
	sfp_tq_each(q, free_copy, NULL);
	free(q->slots);
	free(q->runs);
	free(q->heap);
	free(q->unused);
	sfp_tq_init(q);
}

static int cmp_run_start(const void *a, const void *b, void *arg)
{
	const struct sfp_time_queue *q = arg;
	size_t x = q->runs[*(const uint32_t *)a].head;
	size_t y = q->runs[*(const uint32_t *)b].head;

	return x < y ? -1 : x > y;
}

/*
 * Slide the live slots of every run down over the consumed ones.  Runs
 * are disjoint ranges laid out in arrival order, so moving them in that
 * order never overwrites a live slot; heads keep their keys, so the heap
 * stays a heap.
 */
static int compact(struct sfp_time_queue *q)
{
	uint32_t *order;
	size_t i, dst = 0;

	if (!q->nheap) {
		q->len = 0;
		q->open = -1;
		return 0;
	}
	order = malloc(q->nheap * sizeof(*order));
	if (!order)
		return -ENOMEM;
	memcpy(order, q->heap, q->nheap * sizeof(*order));
	qsort_r(order, q->nheap, sizeof(*order), cmp_run_start, q);
	for (i = 0; i < q->nheap; i++) {
		struct sfp_tq_run *run = &q->runs[order[i]];
		size_t n = run->end - run->head;

		if (run->head != dst)
			memmove(&q->slots[dst], &q->slots[run->head],
				n * sizeof(*q->slots));
		run->head = dst;
		run->end = dst + n;
		dst += n;
	}
	q->len = dst;
	/* only the run that ends the array can still grow */
	if (q->open >= 0 && q->runs[q->open].end != q->len)
		q->open = -1;
	free(order);
	return 0;
}

static int room_for_slot(struct sfp_time_queue *q)
{
	struct sfp_tq_slot *n;
	size_t nc;
	int err;

	if (q->len < q->cap)
		return 0;
	if ((err = compact(q)))
		return err;
	if (q->len < q->cap / 2 + 1 && q->cap)
		return 0;
	nc = q->cap ? q->cap * 2 : 1024;
	n = realloc(q->slots, nc * sizeof(*n));
	if (!n)
		return -ENOMEM;
	/* filled front to back from here: fault the new half in at once */
	sfp_prefault(n + q->cap, (nc - q->cap) * sizeof(*n));
	q->slots = n;
	q->cap = nc;
	return 0;
}

static int new_run(struct sfp_time_queue *q, uint32_t *out)
{
	if (!q->nunused) {
		size_t nc = q->runs_cap ? q->runs_cap * 2 : 64;
		struct sfp_tq_run *r;
		uint32_t *h, *u;
		size_t i;

		if (nc > UINT32_MAX)
			return -ENOMEM;
		r = realloc(q->runs, nc * sizeof(*r));
		if (!r)
			return -ENOMEM;
		q->runs = r;
		h = realloc(q->heap, nc * sizeof(*h));
		if (!h)
			return -ENOMEM;
		q->heap = h;
		u = realloc(q->unused, nc * sizeof(*u));
		if (!u)
			return -ENOMEM;
		q->unused = u;
		for (i = nc; i > q->runs_cap; i--)
			q->unused[q->nunused++] = (uint32_t)(i - 1);
		q->runs_cap = nc;
	}
	*out = q->unused[--q->nunused];
	return 0;
}

int sfp_tq_push(struct sfp_time_queue *q, const struct sfp_tq_slot *s)
{
	uint32_t run;
	int err;

	if ((err = room_for_slot(q)))
		return err;
	if (q->open >= 0 && !slot_less(s, &q->slots[q->len - 1])) {
		q->slots[q->len++] = *s;
		q->runs[q->open].end++;
		q->count++;
		return 0;
	}
	if ((err = new_run(q, &run)))
		return err;
	q->slots[q->len] = *s;
	q->runs[run].head = q->len;
	q->runs[run].end = ++q->len;
	q->heap[q->nheap] = run;
	sift_up(q, q->nheap++);
	q->open = run;
	q->count++;
	return 0;
}

bool sfp_tq_pop(struct sfp_time_queue *q, struct sfp_tq_slot *out)
{
	uint32_t top;
	struct sfp_tq_run *run;

	if (!q->nheap)
		return false;
	top = q->heap[0];
	run = &q->runs[top];
	*out = q->slots[run->head++];
	q->count--;
	if (run->head == run->end) {
		/* an empty run leaves the heap and can take no more */
		if (q->open == top)
			q->open = -1;
		q->unused[q->nunused++] = top;
		q->heap[0] = q->heap[--q->nheap];
		if (!q->nheap) {
			q->len = 0;
			return true;
		}
	}
	sift_down(q, 0);
	return true;
}
