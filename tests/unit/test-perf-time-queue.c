// SPDX-License-Identifier: MIT
/*
 * The reader's time-ordered queue against a plain sort.  Each case pushes
 * slots in some arrival pattern, pops part of them between pushes (so
 * runs empty, the array compacts and grows while other runs are live),
 * and checks that every pop is the least (time, seq) still queued: what
 * a heap of records would give.  Copies are freed by the queue; ASan's
 * leak check holds it to that.
 */
#include <stdlib.h>
#include <string.h>

#include "perf/time-queue.h"
#include "test.h"

#define N 4000

/* glibc's random(): the same sequence on every run */
static uint64_t next_rand(void)
{
	return (uint64_t)random();
}

/* The reference: slots still queued, unordered; the least is searched. */
struct ref {
	struct sfp_tq_slot *s;
	size_t n;
};

static size_t ref_min(const struct ref *r)
{
	size_t i, m = 0;

	for (i = 1; i < r->n; i++)
		if (r->s[i].time < r->s[m].time ||
		    (r->s[i].time == r->s[m].time && r->s[i].seq < r->s[m].seq))
			m = i;
	return m;
}

/* Pops one from both and compares; false on a mismatch. */
static bool pop_both(struct sfp_time_queue *q, struct ref *r)
{
	struct sfp_tq_slot got;
	const struct sfp_tq_slot *peek = sfp_tq_peek(q);
	size_t m = ref_min(r);
	bool ok;

	if (!ASSERT_NOT_NULL(peek))
		return false;
	ok = ASSERT_EQ(peek->seq, r->s[m].seq);
	ok = ASSERT_TRUE(sfp_tq_pop(q, &got)) && ok;
	ok = ASSERT_EQ(got.seq, r->s[m].seq) && ok;
	ok = ASSERT_EQ(got.time, r->s[m].time) && ok;
	ok = ASSERT_EQ(got.off, r->s[m].seq * 8) && ok;
	if (got.copy)
		free((void *)got.rec);
	r->s[m] = r->s[--r->n];
	ASSERT_EQ(sfp_tq_count(q), r->n);
	return ok;
}

enum pattern { SORTED, CPU_RUNS, RANDOM, REVERSE, TIES };

/*
 * pop_every: after every this many pushes, pop pop_many (if queued).
 * CPU_RUNS is what perf writes: rounds of 4 CPUs' buffers one after
 * another, each in time order, the CPUs' times interleaved.
 */
static void run_case(enum pattern p, unsigned int pop_every,
		     unsigned int pop_many)
{
	struct sfp_time_queue q;
	struct ref r = { calloc(N, sizeof(*r.s)), 0 };
	uint64_t seq = 0;
	size_t i;

	srandom(7 + (unsigned int)p);
	sfp_tq_init(&q);
	if (!ASSERT_NOT_NULL(r.s))
		return;
	for (i = 0; i < N; i++) {
		struct sfp_tq_slot s = { .seq = seq, .off = seq * 8, .size = 8 };
		size_t round = i / 400, in_round = i % 400;

		seq++;
		switch (p) {
		case SORTED:
			s.time = i;
			break;
		case CPU_RUNS:	/* CPU in_round / 100, 100 records each */
			s.time = round * 1000 + (in_round % 100) * 10 +
				 in_round / 100;
			break;
		case RANDOM:
			s.time = next_rand() % 5000;
			break;
		case REVERSE:
			s.time = N - i;
			break;
		case TIES:
			s.time = (i / 7) % 50;
			break;
		}
		if (next_rand() % 3 == 0) {
			uint8_t *c = malloc(8);

			if (!ASSERT_NOT_NULL(c))
				break;
			memset(c, 0xab, 8);
			s.rec = c;
			s.copy = true;
		}
		if (!ASSERT_OK(sfp_tq_push(&q, &s))) {
			if (s.copy)
				free((void *)s.rec);
			break;
		}
		r.s[r.n++] = s;
		if (pop_every && i % pop_every == pop_every - 1) {
			unsigned int k;

			for (k = 0; k < pop_many && r.n; k++)
				if (!pop_both(&q, &r))
					goto out;
		}
	}
	/* leave some queued for fini to free; drain the rest in order */
	while (r.n > 37)
		if (!pop_both(&q, &r))
			break;
out:
	sfp_tq_fini(&q);
	ASSERT_EQ(sfp_tq_count(&q), 0);
	ASSERT_TRUE(sfp_tq_peek(&q) == NULL);
	free(r.s);
}

TEST(time_queue_sorted)
{
	run_case(SORTED, 0, 0);
	run_case(SORTED, 5, 5);
}

TEST(time_queue_cpu_runs)
{
	run_case(CPU_RUNS, 0, 0);
	run_case(CPU_RUNS, 400, 300);	/* a round's worth of slack */
	run_case(CPU_RUNS, 1, 1);
}

TEST(time_queue_random)
{
	run_case(RANDOM, 0, 0);
	run_case(RANDOM, 10, 7);
}

TEST(time_queue_reverse_and_ties)
{
	run_case(REVERSE, 0, 0);
	run_case(REVERSE, 3, 2);
	run_case(TIES, 0, 0);
	run_case(TIES, 50, 49);
}

TEST(time_queue_empty)
{
	struct sfp_time_queue q;
	struct sfp_tq_slot s;

	sfp_tq_init(&q);
	ASSERT_TRUE(sfp_tq_peek(&q) == NULL);
	ASSERT_FALSE(sfp_tq_pop(&q, &s));
	sfp_tq_fini(&q);
}
